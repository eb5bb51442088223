/* Unit tests for devhub/sim_jobs (pure parts and the runner against an in-process hub). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/hub.h"
#include "devhub/nodes.h"
#include "devhub/sim_api.h"
#include "devhub/sim_jobs.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"

static json_t *J(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v)
        fail_msg("bad test JSON: %s: %s", je.text, text);
    return v;
}

static void test_parse_duration(void **state)
{
    (void)state;
    double d = -1;
    assert_int_equal(simjobs_parse_duration("50s", &d), 0);
    assert_true(d == 50);
    assert_int_equal(simjobs_parse_duration("1m30s", &d), 0);
    assert_true(d == 90);
    assert_int_equal(simjobs_parse_duration("1.5h", &d), 0);
    assert_true(d == 5400);
    assert_int_equal(simjobs_parse_duration("250ms", &d), 0);
    assert_true(d == 0.25);
    assert_int_equal(simjobs_parse_duration("10", &d), 0);
    assert_true(d == 10);
    assert_int_equal(simjobs_parse_duration("2.5", &d), 0);
    assert_true(d == 2.5);
    const char *bad[] = {"",    "-1",  "5x",  "abc", "1m30", "s",
                         "1e3", "inf", "nan", "1 s", "0x10", "1..2s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(simjobs_parse_duration(bad[i], &d), -EINVAL);
    assert_int_equal(simjobs_parse_duration(NULL, &d), -EINVAL);
}

static void test_pod_duration(void **state)
{
    (void)state;
    struct {
        const char *spec;
        double want;
    } cases[] = {
        {"{\"containers\":[{\"command\":[\"sleep\",\"50s\"]}]}", 50},
        {"{\"containers\":[{\"command\":[\"sleep\"],\"args\":[\"10\"]}]}", 10},
        {"{\"containers\":[{\"command\":[\"sh\",\"-c\",\"sleep 7; echo done\"]}]}", 7},
        {"{\"containers\":[{\"command\":[\"sh\",\"-c\",\"echo hi&&sleep 3\"]}]}", 3},
        {"{\"containers\":[{\"args\":[\"2m\"]}]}", 120},
        {"{\"containers\":[{\"command\":[\"python\",\"train.py\"],\"args\":[\"--epochs\",\"3\"]}]}",
         -1},
        {"{\"containers\":[{\"command\":[\"sleep\",\"infinity\"]}]}", -1},
        {"{\"containers\":[{\"args\":[\"5s\"]},{\"args\":[\"sleep 9\"]}]}", 9},
        {"{}", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *spec = J(cases[i].spec);
        double got = simjobs_pod_duration(spec, -1);
        if (got != cases[i].want)
            fail_msg("case %zu: got %g want %g", i, got, cases[i].want);
        json_decref(spec);
    }
}

static void test_place(void **state)
{
    (void)state;
    json_t *nodes =
        J("[{\"metadata\":{\"name\":\"a\",\"labels\":{\"zone\":\"x\"}},"
          "\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"2\"}}},"
          "{\"metadata\":{\"name\":\"b\",\"labels\":{\"zone\":\"y\"}},"
          "\"spec\":{\"taints\":[{\"key\":\"gpu\",\"value\":\"true\",\"effect\":"
          "\"NoSchedule\"}]},"
          "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\"}}}]");
    json_t *used = J("{\"a\":{\"cpu\":\"1500m\",\"pods\":\"1\"}}");
    json_t *small =
        J("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}]}}");
    assert_string_equal(simjobs_place(small, nodes, used, NULL), "a");
    json_t *one = J("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]}}");
    char *why = NULL;
    /* a has 500m left; b is tainted */
    assert_null(simjobs_place(one, nodes, used, &why));
    assert_string_equal(why, "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had "
                             "untolerated taint.");
    free(why);
    json_t *tol = J("{\"spec\":{\"tolerations\":[{\"key\":\"gpu\",\"operator\":\"Exists\"}],"
                    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}");
    assert_string_equal(simjobs_place(tol, nodes, used, NULL), "b");
    json_t *sel = J("{\"spec\":{\"nodeSelector\":{\"zone\":\"z\"},\"containers\":[]}}");
    why = NULL;
    assert_null(simjobs_place(sel, nodes, NULL, &why));
    assert_non_null(strstr(why, "2 node(s) didn't match Pod's node affinity/selector"));
    free(why);
    /* required node affinity: a pod no node matches stays Pending (issue 15: the
     * runner used to run it), one matching b only goes to b */
    json_t *aff_none = J("{\"spec\":{\"tolerations\":[{\"operator\":\"Exists\"}],"
                         "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
                         "Execution\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
                         "\"no-such-label\",\"operator\":\"In\",\"values\":[\"x\"]}]}]}}},"
                         "\"containers\":[{}]}}");
    why = NULL;
    assert_null(simjobs_place(aff_none, nodes, NULL, &why));
    assert_string_equal(why, "0/2 nodes are available: 2 node(s) didn't match Pod's node "
                             "affinity/selector.");
    free(why);
    json_t *aff_b = J("{\"spec\":{\"tolerations\":[{\"operator\":\"Exists\"}],"
                      "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
                      "Execution\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
                      "\"zone\",\"operator\":\"NotIn\",\"values\":[\"x\"]}]}]}}},"
                      "\"containers\":[{}]}}");
    assert_string_equal(simjobs_place(aff_b, nodes, NULL, NULL), "b");
    json_t *aff_bad = J("{\"spec\":{\"affinity\":7,\"containers\":[{}]}}");
    assert_null(simjobs_place(aff_bad, nodes, NULL, NULL));
    json_decref(aff_none);
    json_decref(aff_b);
    json_decref(aff_bad);
    /* pod slots: a allows 2 pods */
    json_t *full = J("{\"a\":{\"pods\":\"2\"}}");
    json_t *nothing = J("{\"spec\":{\"containers\":[{}]}}");
    why = NULL;
    assert_null(simjobs_place(nothing, nodes, full, &why));
    assert_non_null(strstr(why, "1 Too many pods"));
    free(why);
    json_decref(nodes);
    json_decref(used);
    json_decref(small);
    json_decref(one);
    json_decref(tol);
    json_decref(sel);
    json_decref(full);
    json_decref(nothing);
}

/* ---- runner against an in-process hub ------------------------------------------------ */

struct fx {
    struct ev_loop *loop;
    struct hub *h;
    struct simjobs *sj;
    ev_timer guard;
    bool timed_out;
};

static void guard_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    ((struct fx *)t->data)->timed_out = true;
    ev_break(loop, EVBREAK_ALL);
}

static void add_nodes(struct fx *f, const char *spec)
{
    struct nodes_spec ns;
    struct err e = {0};
    assert_int_equal(nodes_parse(spec, &ns, &e), 0);
    json_t *arr = json_array();
    nodes_build(&ns, "t", 1, "2026-01-01T00:00:00Z", arr);
    size_t i;
    json_t *n;
    json_array_foreach(arr, i, n) assert_int_equal(hub_apply_object(f->h, n, &e), 0);
    json_decref(arr);
    nodes_spec_release(&ns);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->loop = ev_loop_new(0);
    struct hub_opts o = {.loop = f->loop, .gc_delay = 0.01};
    struct err e = {0};
    if (hub_new(&f->h, &o, &e))
        return -1;
    struct simjobs_opts so = {
        .loop = f->loop, .hub = f->h, .default_duration = 10, .time_scale = 0.02, .interval = 0.01};
    if (simjobs_start(&f->sj, &so, &e))
        return -1;
    ev_timer_init(&f->guard, guard_cb, 20, 0);
    f->guard.data = f;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    simjobs_stop(f->sj);
    hub_free(f->h);
    ev_loop_destroy(f->loop);
    free(f);
    return 0;
}

/* Run the loop until GET path satisfies pred (checked every 10 ms) or 20 s pass. */
static json_t *wait_for(struct fx *f, const char *path, bool (*pred)(const json_t *))
{
    f->timed_out = false;
    ev_timer_again(f->loop, &f->guard);
    ev_timer_set(&f->guard, 20, 0);
    ev_timer_start(f->loop, &f->guard);
    json_t *o = NULL;
    for (;;) {
        json_decref(o);
        o = NULL;
        if (simapi_get(f->h, path, &o) == 200 && pred(o))
            break;
        if (f->timed_out)
            fail_msg("timed out waiting on %s: %s", path, o ? json_dumps(o, 0) : "(none)");
        ev_run(f->loop, EVRUN_ONCE);
    }
    ev_timer_stop(f->loop, &f->guard);
    return o;
}

static bool job_complete(const json_t *j)
{
    return jx_cond_is_true(j, "Complete");
}

static json_t *pods_of(struct fx *f, const char *selector)
{
    json_t *items = NULL;
    assert_int_equal(simapi_list(f->h, "/api/v1/namespaces/default/pods", selector, &items), 200);
    return items;
}

static void test_job_runs_to_complete(void **state)
{
    struct fx *f = *state;
    add_nodes(f, "1xcpu=2,memory=8Gi");
    json_t *job = J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"},"
                    "\"spec\":{\"parallelism\":3,\"completions\":3,\"completionMode\":\"Indexed\","
                    "\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{"
                    "\"name\":\"c\",\"image\":\"busybox\",\"command\":[\"sleep\",\"5s\"],"
                    "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}");
    assert_int_equal(simapi_create(f->h, "/apis/batch/v1/namespaces/default/jobs", job, NULL), 201);
    json_decref(job);
    json_t *j = wait_for(f, "/apis/batch/v1/namespaces/default/jobs/j", job_complete);
    assert_int_equal(jx_int(j, "status.succeeded", -1), 3);
    /* active and failed are omitempty in batch/v1: 0 is not written. */
    assert_null(jx_get(j, "status.active"));
    assert_null(jx_get(j, "status.failed"));
    assert_int_equal(jx_int(j, "status.ready", -1), 0);
    json_t *cc = jx_cond_find(j, "Complete");
    assert_string_equal(jx_str(cc, "lastProbeTime", ""), jx_str(cc, "lastTransitionTime", "x"));
    assert_string_equal(jx_str(j, "status.completedIndexes", ""), "0-2");
    assert_non_null(jx_str(j, "status.completionTime", NULL));
    assert_non_null(jx_str(j, "status.startTime", NULL));
    assert_true(jx_cond_is_true(j, "SuccessCriteriaMet"));
    assert_non_null(jx_obj(j, "status.uncountedTerminatedPods"));
    json_t *pods = pods_of(f, "batch.kubernetes.io/job-name=j");
    assert_int_equal(json_array_size(pods), 3);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        assert_string_equal(jx_str(p, "status.phase", ""), "Succeeded");
        assert_string_equal(jx_str(p, "spec.nodeName", ""), "t-node-1");
        assert_string_equal(jx_label(p, "controller-uid"), jx_uid(j));
        assert_string_equal(jx_str(jx_owner_controller(p), "kind", ""), "Job");
    }
    json_decref(pods);
    json_decref(j);
}

static bool pod_unschedulable(const json_t *p)
{
    json_t *c = jx_cond_find(p, "PodScheduled");
    return c && !strcmp(jx_str(c, "status", ""), "False");
}

static bool job_suspended(const json_t *j)
{
    return jx_cond_is_true(j, "Suspended");
}

static void test_suspend_and_too_big(void **state)
{
    struct fx *f = *state;
    add_nodes(f, "1xcpu=2,memory=8Gi");
    json_t *job = J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"s\"},"
                    "\"spec\":{\"suspend\":true,\"template\":{\"spec\":{\"restartPolicy\":"
                    "\"Never\",\"containers\":[{"
                    "\"name\":\"c\",\"image\":\"x\",\"args\":[\"1s\"]}]}}}}");
    assert_int_equal(simapi_create(f->h, "/apis/batch/v1/namespaces/default/jobs", job, NULL), 201);
    json_decref(job);
    json_t *j = wait_for(f, "/apis/batch/v1/namespaces/default/jobs/s", job_suspended);
    json_t *sc = jx_cond_find(j, "Suspended");
    assert_string_equal(jx_str(sc, "reason", ""), "JobSuspended");
    assert_string_equal(jx_str(sc, "message", ""), "Job suspended");
    assert_string_equal(jx_str(sc, "lastProbeTime", ""), jx_str(sc, "lastTransitionTime", "x"));
    assert_null(jx_get(j, "status.startTime"));
    json_t *pods = pods_of(f, "job-name=s");
    assert_int_equal(json_array_size(pods), 0);
    json_decref(pods);
    json_decref(j);
    json_t *patch = J("{\"spec\":{\"suspend\":false}}");
    assert_int_equal(simapi_patch(f->h, "/apis/batch/v1/namespaces/default/jobs/s", patch, NULL),
                     200);
    json_decref(patch);
    j = wait_for(f, "/apis/batch/v1/namespaces/default/jobs/s", job_complete);
    sc = jx_cond_find(j, "Suspended");
    assert_string_equal(jx_str(sc, "status", ""), "False");
    assert_string_equal(jx_str(sc, "reason", ""), "JobResumed");
    assert_string_equal(jx_str(sc, "message", ""), "Job resumed");
    assert_int_equal(jx_int(j, "status.succeeded", -1), 1);
    json_decref(j);

    json_t *pod = J("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"big\"},"
                    "\"spec\":{\"containers\":[{\"name\":\"c\","
                    "\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"100\"}}}]}}");
    assert_int_equal(simapi_create(f->h, "/api/v1/namespaces/default/pods", pod, NULL), 201);
    json_decref(pod);
    json_t *p = wait_for(f, "/api/v1/namespaces/default/pods/big", pod_unschedulable);
    assert_string_equal(jx_str(p, "status.phase", ""), "Pending");
    assert_null(jx_str(p, "spec.nodeName", NULL));
    json_t *c = jx_cond_find(p, "PodScheduled");
    assert_string_equal(jx_str(c, "reason", ""), "Unschedulable");
    assert_string_equal(jx_str(c, "message", ""), "0/1 nodes are available: 1 Insufficient cpu.");
    json_decref(p);
}

static bool pod_pull_failed(const json_t *p)
{
    json_t *cs = json_array_get(jx_arr(p, "status.containerStatuses"), 0);
    return !strcmp(jx_str(cs, "state.waiting.reason", ""), "ErrImagePull");
}

static bool job_started(const json_t *j)
{
    return jx_str(j, "status.startTime", NULL) != NULL;
}

/* A node labelled devhub.kueue-ks.io/image-pull=fail: the pod is bound and
 * stays Pending, PodScheduled=True, its container waiting ErrImagePull; the
 * Job counts it active, not ready. Once the label is gone it runs. */
static void test_fault_image_pull(void **state)
{
    struct fx *f = *state;
    add_nodes(f, "1xcpu=2,memory=8Gi;labels=devhub.kueue-ks.io/image-pull=fail");
    json_t *job = J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"p\"},"
                    "\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":"
                    "[{\"name\":\"c\",\"image\":\"busybox\",\"args\":[\"1s\"]}]}}}}");
    assert_int_equal(simapi_create(f->h, "/apis/batch/v1/namespaces/default/jobs", job, NULL), 201);
    json_decref(job);
    json_t *pods = NULL;
    for (int i = 0; i < 2000 && json_array_size(pods) == 0; i++) {
        json_decref(pods);
        pods = pods_of(f, "job-name=p");
        ev_run(f->loop, EVRUN_ONCE);
    }
    assert_int_equal(json_array_size(pods), 1);
    char *path = xasprintf("/api/v1/namespaces/default/pods/%s", jx_name(json_array_get(pods, 0)));
    json_decref(pods);
    json_t *p = wait_for(f, path, pod_pull_failed);
    assert_string_equal(jx_str(p, "status.phase", ""), "Pending");
    assert_string_equal(jx_str(p, "spec.nodeName", ""), "t-node-1");
    assert_true(jx_cond_is_true(p, "PodScheduled"));
    json_t *cs = json_array_get(jx_arr(p, "status.containerStatuses"), 0);
    assert_non_null(strstr(jx_str(cs, "state.waiting.message", ""), "failed to pull image"));
    json_decref(p);
    json_t *patch = J("{\"metadata\":{\"labels\":{\"devhub.kueue-ks.io/image-pull\":null}}}");
    assert_int_equal(simapi_patch(f->h, "/api/v1/nodes/t-node-1", patch, NULL), 200);
    json_decref(patch);
    json_t *j = wait_for(f, "/apis/batch/v1/namespaces/default/jobs/p", job_complete);
    assert_int_equal(jx_int(j, "status.succeeded", -1), 1);
    json_decref(j);
    free(path);
}

/* A namespace annotated devhub.kueue-ks.io/refuse-pods gets no pod: the Job
 * has a startTime and counts none active; once the annotation is gone its
 * pod is created and it completes. */
static void test_fault_refuse_pods(void **state)
{
    struct fx *f = *state;
    add_nodes(f, "1xcpu=2,memory=8Gi");
    json_t *ns = J("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"r\","
                   "\"annotations\":{\"devhub.kueue-ks.io/refuse-pods\":\"exceeded quota\"}}}");
    assert_int_equal(simapi_create(f->h, "/api/v1/namespaces", ns, NULL), 201);
    json_decref(ns);
    json_t *job = J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"n\"},"
                    "\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":"
                    "[{\"name\":\"c\",\"image\":\"busybox\",\"args\":[\"1s\"]}]}}}}");
    assert_int_equal(simapi_create(f->h, "/apis/batch/v1/namespaces/r/jobs", job, NULL), 201);
    json_decref(job);
    /* startTime is written by the pass that would have created the pod */
    json_t *j = wait_for(f, "/apis/batch/v1/namespaces/r/jobs/n", job_started);
    assert_null(jx_get(j, "status.active"));
    json_decref(j);
    json_t *items = NULL;
    assert_int_equal(simapi_list(f->h, "/api/v1/namespaces/r/pods", NULL, &items), 200);
    assert_int_equal(json_array_size(items), 0);
    json_decref(items);
    json_t *patch = J("{\"metadata\":{\"annotations\":{\"devhub.kueue-ks.io/refuse-pods\":null}}}");
    assert_int_equal(simapi_patch(f->h, "/api/v1/namespaces/r", patch, NULL), 200);
    json_decref(patch);
    j = wait_for(f, "/apis/batch/v1/namespaces/r/jobs/n", job_complete);
    assert_int_equal(jx_int(j, "status.succeeded", -1), 1);
    json_decref(j);
}

static bool job_has_ready(const json_t *j)
{
    return jx_int(j, "status.ready", 0) == 2 && jx_int(j, "status.active", 0) == 2;
}

static bool job_suspended_no_active(const json_t *j)
{
    return jx_cond_is_true(j, "Suspended") && !jx_get(j, "status.active");
}

static void test_suspend_running_job(void **state)
{
    struct fx *f = *state;
    add_nodes(f, "1xcpu=4,memory=8Gi");
    json_t *job =
        J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"long\"},"
          "\"spec\":{\"parallelism\":2,\"completions\":4,\"template\":{\"spec\":{"
          "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":"
          "\"x\",\"command\":[\"sleep\",\"1h\"]}]}}}}");
    assert_int_equal(simapi_create(f->h, "/apis/batch/v1/namespaces/default/jobs", job, NULL), 201);
    json_decref(job);
    json_t *j = wait_for(f, "/apis/batch/v1/namespaces/default/jobs/long", job_has_ready);
    assert_non_null(jx_str(j, "status.startTime", NULL));
    json_decref(j);
    json_t *patch = J("{\"spec\":{\"suspend\":true}}");
    assert_int_equal(simapi_patch(f->h, "/apis/batch/v1/namespaces/default/jobs/long", patch, NULL),
                     200);
    json_decref(patch);
    j = wait_for(f, "/apis/batch/v1/namespaces/default/jobs/long", job_suspended_no_active);
    assert_null(jx_get(j, "status.startTime"));
    json_decref(j);
    /* the active pods are deleted (they are gone once the hub processed the delete) */
    json_t *pods = pods_of(f, "job-name=long");
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) assert_non_null(jx_str(p, "metadata.deletionTimestamp", NULL));
    json_decref(pods);
}

/* A Job another controller manages (spec.managedBy) gets neither pods nor
 * status, suspended or not; one naming the Job controller is run. */
static void test_managed_by_elsewhere(void **state)
{
    struct fx *f = *state;
    add_nodes(f, "1xcpu=2,memory=8Gi");
    const char *tmpl = "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
                       "\"%s\"},\"spec\":{\"suspend\":%s,\"managedBy\":\"%s\",\"template\":{"
                       "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
                       "\"image\":\"x\",\"args\":[\"1s\"]}]}}}}";
    const char *cases[][3] = {{"mk-held", "true", "kueue.x-k8s.io/multikueue"},
                              {"mk-run", "false", "kueue.x-k8s.io/multikueue"},
                              {"jc", "false", "kubernetes.io/job-controller"}};
    for (size_t i = 0; i < 3; i++) {
        char *body = xasprintf(tmpl, cases[i][0], cases[i][1], cases[i][2]);
        json_t *job = J(body);
        free(body);
        assert_int_equal(simapi_create(f->h, "/apis/batch/v1/namespaces/default/jobs", job, NULL),
                         201);
        json_decref(job);
    }
    /* Once the job the runner owns completed, it has had every pass the others had. */
    json_t *j = wait_for(f, "/apis/batch/v1/namespaces/default/jobs/jc", job_complete);
    json_decref(j);
    for (size_t i = 0; i < 2; i++) {
        char *path = xasprintf("/apis/batch/v1/namespaces/default/jobs/%s", cases[i][0]);
        json_t *o = NULL;
        assert_int_equal(simapi_get(f->h, path, &o), 200);
        assert_null(jx_get(o, "status.conditions"));
        assert_null(jx_get(o, "status.startTime"));
        json_decref(o);
        free(path);
        char *sel = xasprintf("job-name=%s", cases[i][0]);
        json_t *pods = pods_of(f, sel);
        assert_int_equal(json_array_size(pods), 0);
        json_decref(pods);
        free(sel);
    }
}

static bool pt_succeeded(const json_t *j)
{
    return jx_cond_is_true(j, "Succeeded");
}

static void test_pytorchjob(void **state)
{
    struct fx *f = *state;
    add_nodes(f, "2xcpu=4,memory=8Gi");
    json_t *crd = J("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
                    "\"CustomResourceDefinition\",\"metadata\":{\"name\":\"pytorchjobs.kubeflow."
                    "org\"},\"spec\":{\"group\":\"kubeflow.org\",\"scope\":\"Namespaced\","
                    "\"names\":{\"plural\":\"pytorchjobs\",\"kind\":\"PyTorchJob\"},\"versions\":"
                    "[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"subresources\":{"
                    "\"status\":{}}}]}}");
    struct err e = {0};
    assert_int_equal(hub_apply_object(f->h, crd, &e), 0);
    json_decref(crd);
    json_t *pt = J("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"metadata\":{"
                   "\"name\":\"pt\"},\"spec\":{\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":1,"
                   "\"template\":{\"spec\":{\"containers\":[{\"name\":\"pytorch\",\"image\":\"x\","
                   "\"args\":[\"sleep 2s\"]}]}}},\"Worker\":{\"replicas\":2,\"template\":{\"spec\":"
                   "{\"containers\":[{\"name\":\"pytorch\",\"image\":\"x\",\"args\":[\"sleep 3s\""
                   "],\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}}}");
    assert_int_equal(
        simapi_create(f->h, "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs", pt, NULL), 201);
    json_decref(pt);
    json_t *j =
        wait_for(f, "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/pt", pt_succeeded);
    assert_string_equal(jx_str(jx_cond_find(j, "Succeeded"), "reason", ""), "PyTorchJobSucceeded");
    assert_true(jx_cond_is_true(j, "Created"));
    assert_string_equal(jx_cond_status(j, "Running"), "False");
    assert_int_equal(jx_int(j, "status.replicaStatuses.Master.succeeded", -1), 1);
    assert_int_equal(jx_int(j, "status.replicaStatuses.Worker.succeeded", -1), 2);
    assert_non_null(jx_str(j, "status.completionTime", NULL));
    json_decref(j);
    json_t *p = NULL;
    assert_int_equal(simapi_get(f->h, "/api/v1/namespaces/default/pods/pt-worker-1", &p), 200);
    assert_string_equal(jx_label(p, "training.kubeflow.org/replica-type"), "worker");
    assert_string_equal(jx_label(p, "training.kubeflow.org/replica-index"), "1");
    assert_string_equal(jx_label(p, "training.kubeflow.org/job-name"), "pt");
    json_decref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_pod_duration),
        cmocka_unit_test(test_place),
        cmocka_unit_test_setup_teardown(test_job_runs_to_complete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_suspend_and_too_big, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pytorchjob, setup, teardown),
        cmocka_unit_test_setup_teardown(test_suspend_running_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_managed_by_elsewhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fault_image_pull, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fault_refuse_pods, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
