/* Unit tests for devhub/sim_kueue (pure parts and the emulator against an in-process hub). */
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
#include "devhub/sim_api.h"
#include "devhub/sim_kueue.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"
#include "test/support/tloop.h"

static json_t *J(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v)
        fail_msg("bad test JSON: %s: %s", je.text, text);
    return v;
}

static void test_workload_name(void **state)
{
    (void)state;
    /* expected values computed with Python hashlib.sha1 over "Kind\nGroup\nname\nuid" */
    char *n = simkueue_workload_name("Job", "batch", "sample-job",
                                     "0f1a2b3c-0000-4000-8000-000000000001");
    assert_string_equal(n, "job-sample-job-0f498");
    free(n);
    n = simkueue_workload_name("PyTorchJob", "kubeflow.org", "pt", "uid-2");
    assert_string_equal(n, "pytorchjob-pt-91480");
    free(n);
    char longname[300];
    memset(longname, 'a', 299);
    longname[299] = '\0';
    n = simkueue_workload_name("Job", "batch", longname, "u");
    assert_int_equal(strlen(n), 253);
    assert_int_equal(n[247], '-');
    free(n);
}

static void test_podsets(void **state)
{
    (void)state;
    json_t *job = J("{\"spec\":{\"parallelism\":4,\"completions\":3,\"template\":{\"metadata\":{"
                    "\"name\":\"x\",\"labels\":{\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":"
                    "\"c\"}]}}}}");
    json_t *ps = simkueue_podsets(job, "Job");
    assert_int_equal(json_array_size(ps), 1);
    assert_string_equal(jx_str(ps, "[0].name", ""), "main");
    assert_int_equal(jx_int(ps, "[0].count", -1), 3);
    assert_string_equal(jx_str(ps, "[0].template.metadata.labels.a", ""), "b");
    assert_null(jx_get(ps, "[0].template.metadata.name")); /* only labels/annotations kept */
    json_decref(ps);
    json_decref(job);
    json_t *pt = J("{\"spec\":{\"pytorchReplicaSpecs\":{\"Worker\":{\"replicas\":3,\"template\":{"
                   "\"spec\":{}}},\"Master\":{\"template\":{\"spec\":{}}}}}}");
    ps = simkueue_podsets(pt, "PyTorchJob");
    assert_int_equal(json_array_size(ps), 2);
    assert_string_equal(jx_str(ps, "[0].name", ""), "master");
    assert_int_equal(jx_int(ps, "[0].count", -1), 1);
    assert_string_equal(jx_str(ps, "[1].name", ""), "worker");
    assert_int_equal(jx_int(ps, "[1].count", -1), 3);
    json_decref(ps);
    json_decref(pt);
}

#define CQ_JSON                                                                                    \
    "{\"metadata\":{\"name\":\"cq\"},\"spec\":{\"preemption\":{\"withinClusterQueue\":"            \
    "\"LowerPriority\"},\"resourceGroups\":[{\"coveredResources\":[\"cpu\",\"memory\"],"           \
    "\"flavors\":[{\"name\":\"small\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"2\"},"   \
    "{\"name\":\"memory\",\"nominalQuota\":\"4Gi\"}]},{\"name\":\"big\",\"resources\":[{\"name\":" \
    "\"cpu\",\"nominalQuota\":\"8\"},{\"name\":\"memory\",\"nominalQuota\":\"32Gi\"}]}]}]}}"

#define FLAVORS_JSON                                                                               \
    "{\"small\":{\"metadata\":{\"name\":\"small\"},\"spec\":{\"nodeLabels\":{\"size\":"            \
    "\"small\"}}},\"big\":{\"metadata\":{\"name\":\"big\"},\"spec\":{\"nodeLabels\":{\"size\":"    \
    "\"big\"}}}}"

static json_t *podsets_cpu(const char *cpu, int count, const char *selector)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "[{\"name\":\"main\",\"count\":%d,\"template\":{\"spec\":{%s\"containers\":[{"
             "\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]}}}]",
             count, selector ? selector : "", cpu);
    return J(buf);
}

#define AFF(k, v)                                                                                  \
    "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"         \
    "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"" k "\",\"operator\":\"In\","        \
    "\"values\":[\"" v "\"]}]}]}}},"

static void test_assign(void **state)
{
    (void)state;
    json_t *cq = J(CQ_JSON), *fl = J(FLAVORS_JSON);
    json_t *ps = podsets_cpu("1", 2, NULL), *out = NULL;
    char *why = NULL;
    assert_int_equal(simkueue_assign(cq, fl, ps, NULL, &out, &why), 0);
    assert_string_equal(jx_str(out, "[0].flavors.cpu", ""), "small");
    assert_string_equal(jx_str(out, "[0].resourceUsage.cpu", ""), "2");
    assert_int_equal(jx_int(out, "[0].count", 0), 2);
    /* small is full: the next goes to big */
    json_t *usage = json_object();
    simkueue_usage_add(usage, out, 1);
    json_decref(out);
    assert_int_equal(simkueue_assign(cq, fl, ps, usage, &out, &why), 0);
    assert_string_equal(jx_str(out, "[0].flavors.cpu", ""), "big");
    json_decref(out);
    json_decref(ps);
    /* too big for anything */
    ps = podsets_cpu("5", 2, NULL);
    assert_int_equal(simkueue_assign(cq, fl, ps, usage, &out, &why), -ENOSPC);
    assert_null(out);
    assert_string_equal(why, "couldn't assign flavors to pod set main: insufficient unused quota "
                             "for cpu in flavor small");
    free(why);
    json_decref(ps);
    /* node selector restricts flavors */
    ps = podsets_cpu("1", 1, "\"nodeSelector\":{\"size\":\"big\"},");
    assert_int_equal(simkueue_assign(cq, fl, ps, NULL, &out, &why), 0);
    assert_string_equal(jx_str(out, "[0].flavors.cpu", ""), "big");
    json_decref(out);
    json_decref(ps);
    /* required node affinity restricts flavors, on the flavors' label keys only (Kueue's
     * flavor assigner): size In [big] picks big; a term on another key only matches any */
    ps = podsets_cpu("1", 1, AFF("size", "big"));
    assert_int_equal(simkueue_assign(cq, fl, ps, NULL, &out, &why), 0);
    assert_string_equal(jx_str(out, "[0].flavors.cpu", ""), "big");
    json_decref(out);
    json_decref(ps);
    ps = podsets_cpu("1", 1, AFF("disk", "ssd"));
    assert_int_equal(simkueue_assign(cq, fl, ps, NULL, &out, &why), 0);
    assert_string_equal(jx_str(out, "[0].flavors.cpu", ""), "small");
    json_decref(out);
    json_decref(ps);
    ps = podsets_cpu("1", 1, AFF("size", "huge"));
    why = NULL;
    assert_int_equal(simkueue_assign(cq, fl, ps, NULL, &out, &why), -ENOSPC);
    assert_non_null(strstr(why, "no flavor matches the pod set's node selector, node affinity"));
    free(why);
    json_decref(ps);
    /* a node selector on a key one flavor lacks excludes that flavor */
    json_t *fl2 = J("{\"small\":{\"spec\":{}},\"big\":{\"spec\":{\"nodeLabels\":{\"size\":"
                    "\"big\"}}}}");
    ps = podsets_cpu("1", 1, "\"nodeSelector\":{\"size\":\"big\"},");
    assert_int_equal(simkueue_assign(cq, fl2, ps, NULL, &out, &why), 0);
    assert_string_equal(jx_str(out, "[0].flavors.cpu", ""), "big");
    json_decref(out);
    json_decref(ps);
    json_decref(fl2);
    /* uncovered resource */
    ps = J("[{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{"
           "\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}}}]");
    why = NULL;
    assert_int_equal(simkueue_assign(cq, fl, ps, NULL, &out, &why), -ENOSPC);
    assert_non_null(strstr(why, "resource nvidia.com/gpu unavailable in ClusterQueue"));
    free(why);
    json_decref(ps);
    /* usage removal */
    json_t *one = J("[{\"name\":\"main\",\"flavors\":{\"cpu\":\"small\"},\"resourceUsage\":{"
                    "\"cpu\":\"500m\"}}]");
    simkueue_usage_add(usage, one, -1);
    assert_string_equal(jx_str(usage, "small.cpu", ""), "1500m");
    json_decref(one);
    json_decref(usage);
    json_decref(cq);
    json_decref(fl);
}

static void test_sort_queue(void **state)
{
    (void)state;
    json_t *w = J("[{\"metadata\":{\"name\":\"a\",\"creationTimestamp\":\"2026-01-01T00:00:02Z\"},"
                  "\"spec\":{\"priority\":0}},"
                  "{\"metadata\":{\"name\":\"b\",\"creationTimestamp\":\"2026-01-01T00:00:03Z\"},"
                  "\"spec\":{\"priority\":100}},"
                  "{\"metadata\":{\"name\":\"c\",\"creationTimestamp\":\"2026-01-01T00:00:01Z\"},"
                  "\"spec\":{}}]");
    simkueue_sort_queue(w);
    assert_string_equal(jx_str(w, "[0].metadata.name", ""), "b");
    assert_string_equal(jx_str(w, "[1].metadata.name", ""), "c");
    assert_string_equal(jx_str(w, "[2].metadata.name", ""), "a");
    json_decref(w);
}

static json_t *reserved_wl(const char *name, int prio, const char *flavor, const char *cpu,
                           const char *at)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"priority\":%d},\"status\":{"
             "\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","
             "\"lastTransitionTime\":\"%s\"}],\"admission\":{\"clusterQueue\":\"cq\","
             "\"podSetAssignments\":[{\"name\":\"main\",\"flavors\":{\"cpu\":\"%s\"},"
             "\"resourceUsage\":{\"cpu\":\"%s\"},\"count\":1}]}}}",
             name, prio, at, flavor, cpu);
    return J(buf);
}

static void test_victims(void **state)
{
    (void)state;
    json_t *cq = J(CQ_JSON), *fl = J(FLAVORS_JSON);
    json_t *res = json_array();
    json_array_append_new(res, reserved_wl("low-old", 0, "small", "2", "2026-01-01T00:00:01Z"));
    json_array_append_new(res, reserved_wl("low-new", 0, "big", "4", "2026-01-01T00:00:05Z"));
    json_array_append_new(res, reserved_wl("mid", 10, "big", "4", "2026-01-01T00:00:02Z"));
    json_array_append_new(res, reserved_wl("high", 100, "big", "0", "2026-01-01T00:00:02Z"));
    json_t *usage = json_object();
    size_t i;
    json_t *w;
    json_array_foreach(res, i, w)
        simkueue_usage_add(usage, jx_arr(w, "status.admission.podSetAssignments"), 1);
    /* needs 4 cpu: evicting low-new (newest of the lowest priority) frees big */
    json_t *ps = podsets_cpu("4", 1, NULL);
    json_t *v = simkueue_victims(cq, fl, ps, 50, "2026-01-01T00:00:09Z", res, usage);
    assert_non_null(v);
    assert_int_equal(json_array_size(v), 1);
    assert_string_equal(jx_str(v, "[0].metadata.name", ""), "low-new");
    json_decref(v);
    /* priority 5 may only evict priority 0 ones; needs 6 cpu in one flavor: impossible */
    json_decref(ps);
    ps = podsets_cpu("6", 1, NULL);
    v = simkueue_victims(cq, fl, ps, 5, "2026-01-01T00:00:09Z", res, usage);
    assert_null(v);
    /* priority 50 for 8 cpu: low-new and mid go, low-old (small) is given back */
    json_decref(ps);
    ps = podsets_cpu("8", 1, NULL);
    v = simkueue_victims(cq, fl, ps, 50, "2026-01-01T00:00:09Z", res, usage);
    assert_non_null(v);
    assert_int_equal(json_array_size(v), 2);
    assert_string_equal(jx_str(v, "[0].metadata.name", ""), "low-new");
    assert_string_equal(jx_str(v, "[1].metadata.name", ""), "mid");
    json_decref(v);
    /* Never */
    json_object_del(jx_obj(cq, "spec"), "preemption");
    assert_null(simkueue_victims(cq, fl, ps, 50, "2026-01-01T00:00:09Z", res, usage));
    json_decref(ps);
    json_decref(usage);
    json_decref(res);
    json_decref(cq);
    json_decref(fl);
}

/* ---- emulator against an in-process hub -------------------------------------------- */

struct fx {
    struct ev_loop *loop;
    struct hub *h;
    struct simkueue *k;
    ev_timer guard;
    bool timed_out;
};

static void guard_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    ((struct fx *)t->data)->timed_out = true;
    ev_break(loop, EVBREAK_ALL);
}

static void add_crd(struct fx *f, const char *group, const char *plural, const char *kind,
                    bool namespaced, const char *versions)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
             "\"metadata\":{\"name\":\"%s.%s\"},\"spec\":{\"group\":\"%s\",\"scope\":\"%s\","
             "\"names\":{\"plural\":\"%s\",\"kind\":\"%s\"},\"versions\":%s}}",
             plural, group, group, namespaced ? "Namespaced" : "Cluster", plural, kind, versions);
    json_t *crd = J(buf);
    struct err e = {0};
    assert_int_equal(hub_apply_object(f->h, crd, &e), 0);
    json_decref(crd);
}

#define V2                                                                                         \
    "[{\"name\":\"v1beta2\",\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}}},"   \
    "{\"name\":\"v1beta1\",\"served\":true,\"storage\":false,\"subresources\":{\"status\":{}}}]"

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->loop = ev_loop_new(0);
    struct hub_opts o = {.loop = f->loop, .gc_delay = 0.01};
    struct err e = {0};
    if (hub_new(&f->h, &o, &e))
        return -1;
    add_crd(f, "kueue.x-k8s.io", "workloads", "Workload", true, V2);
    add_crd(f, "kueue.x-k8s.io", "clusterqueues", "ClusterQueue", false, V2);
    add_crd(f, "kueue.x-k8s.io", "localqueues", "LocalQueue", true, V2);
    add_crd(f, "kueue.x-k8s.io", "resourceflavors", "ResourceFlavor", false, V2);
    add_crd(f, "kueue.x-k8s.io", "admissionchecks", "AdmissionCheck", false, V2);
    add_crd(f, "kueue.x-k8s.io", "workloadpriorityclasses", "WorkloadPriorityClass", false, V2);
    struct simkueue_opts ko = {.loop = f->loop, .hub = f->h, .interval = 0.01};
    if (simkueue_start(&f->k, &ko, &e))
        return -1;
    ev_timer_init(&f->guard, guard_cb, 20, 0);
    f->guard.data = f;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    simkueue_stop(f->k);
    hub_free(f->h);
    ev_loop_destroy(f->loop);
    free(f);
    return 0;
}

static json_t *wait_for(struct fx *f, const char *path, bool (*pred)(const json_t *))
{
    f->timed_out = false;
    ev_timer_set(&f->guard, 20, 0);
    ev_timer_start(f->loop, &f->guard);
    json_t *o = NULL;
    for (;;) {
        json_decref(o);
        o = NULL;
        if (simapi_get(f->h, path, &o) == 200 && pred(o))
            break;
        if (f->timed_out) {
            char *d = o ? json_dumps(o, 0) : NULL;
            fail_msg("timed out waiting on %s: %s", path, d ? d : "(none)");
        }
        ev_run(f->loop, EVRUN_ONCE);
    }
    ev_timer_stop(f->loop, &f->guard);
    return o;
}

static void create(struct fx *f, const char *path, const char *body)
{
    json_t *o = J(body), *out = NULL;
    int code = simapi_create(f->h, path, o, &out);
    if (code != 201)
        fail_msg("create %s: %d %s", path, code, jx_str(out, "message", ""));
    json_decref(out);
    json_decref(o);
}

#define KQ   "/apis/kueue.x-k8s.io/v1beta2"
#define JOBS "/apis/batch/v1/namespaces/default/jobs"

static void setup_queues(struct fx *f, const char *cpu, bool check)
{
    create(f, KQ "/resourceflavors",
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":{"
           "\"name\":\"default\"},\"spec\":{\"nodeLabels\":{\"pool\":\"a\"}}}");
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":{"
             "\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},%s\"preemption\":{"
             "\"withinClusterQueue\":\"LowerPriority\"},\"resourceGroups\":[{\"coveredResources\":"
             "[\"cpu\"],\"flavors\":[{\"name\":\"default\",\"resources\":[{\"name\":\"cpu\","
             "\"nominalQuota\":\"%s\"}]}]}]}}",
             check ? "\"admissionChecksStrategy\":{\"admissionChecks\":[{\"name\":\"ac\"}]}," : "",
             cpu);
    create(f, KQ "/clusterqueues", buf);
    create(f, KQ "/namespaces/default/localqueues",
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":{"
           "\"name\":\"lq\",\"namespace\":\"default\"},\"spec\":{\"clusterQueue\":\"cq\"}}");
    create(f, KQ "/workloadpriorityclasses",
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"WorkloadPriorityClass\","
           "\"metadata\":{\"name\":\"high\"},\"value\":1000}");
}

static void create_job_q(struct fx *f, const char *name, const char *cpu, const char *prio,
                         const char *queue)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"kueue.x-k8s.io/queue-name\":\"%s\"%s%s%s}},\"spec\":{"
             "\"parallelism\":1,\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
             "\"cpu\":\"%s\"}}}]}}}}",
             name, queue, prio ? ",\"kueue.x-k8s.io/priority-class\":\"" : "", prio ? prio : "",
             prio ? "\"" : "", cpu);
    create(f, JOBS, buf);
}

static void create_job(struct fx *f, const char *name, const char *cpu, const char *prio)
{
    create_job_q(f, name, cpu, prio, "lq");
}

static char *wl_path_of(struct fx *f, const char *job)
{
    char *jp = simapi_path("batch", "v1", "jobs", "default", job, NULL);
    json_t *j = NULL;
    assert_int_equal(simapi_get(f->h, jp, &j), 200);
    char *n = simkueue_workload_name("Job", "batch", job, jx_uid(j));
    char *p = simapi_path("kueue.x-k8s.io", "v1beta2", "workloads", "default", n, NULL);
    free(n);
    free(jp);
    json_decref(j);
    return p;
}

static bool wl_pending_check(const json_t *w)
{
    return jx_cond_is_true(w, "QuotaReserved") &&
           !strcmp(jx_str(w, "status.admissionChecks[0].state", ""), "Pending");
}

static bool wl_admitted(const json_t *w)
{
    return jx_cond_is_true(w, "Admitted");
}

static bool job_running(const json_t *j)
{
    return !jx_bool(j, "spec.suspend", true);
}

static bool wl_finished(const json_t *w)
{
    return jx_cond_is_true(w, "Finished");
}

static bool cq_idle(const json_t *cq)
{
    return jx_int(cq, "status.reservingWorkloads", -1) == 0 &&
           jx_get(cq, "status.flavorsReservation") &&
           !strcmp(jx_str(cq, "status.flavorsReservation[0].resources[0].total", ""), "0");
}

static bool cq_one_admitted(const json_t *cq)
{
    return jx_int(cq, "status.admittedWorkloads", -1) == 1 &&
           !strcmp(jx_str(cq, "status.flavorsUsage[0].resources[0].total", ""), "1");
}

static bool wl_quota_reserved(const json_t *w)
{
    return jx_cond_is_true(w, "QuotaReserved");
}

/* The pass that creates a new job's Workload admits it: a Workload created is pending and
 * holds no quota, so it does not hold the ClusterQueues' admission back to a later pass that
 * writes nothing (with a new job on every tick, such a pass never came while they kept
 * coming, and every reservation came in one burst once they stopped: bench-dispatch --pace).
 * Real Kueue's scheduler does not wait either. Passes run here by hand, the loop not at all. */
static void test_admits_while_jobs_keep_coming(void **state)
{
    struct fx *f = *state;
    setup_queues(f, "4", false);
    for (int i = 0; i < 20 && simkueue_sync(f->k) > 0; i++)
        ;
    create_job(f, "j1", "1", NULL);
    assert_true(simkueue_sync(f->k) > 0);
    char *wp1 = wl_path_of(f, "j1");
    json_t *w = NULL;
    assert_int_equal(simapi_get(f->h, wp1, &w), 200);
    assert_true(wl_quota_reserved(w));
    json_decref(w);
    for (int i = 0; i < 20 && simkueue_sync(f->k) > 0; i++) /* j1 Admitted (no checks) */
        ;
    create_job(f, "j2", "1", NULL);
    create_job(f, "j3", "1", NULL);
    assert_true(simkueue_sync(f->k) > 0); /* two created, both admitted at once */
    const char *more[] = {"j2", "j3"};
    for (size_t i = 0; i < 2; i++) {
        char *wp = wl_path_of(f, more[i]);
        w = NULL;
        assert_int_equal(simapi_get(f->h, wp, &w), 200);
        assert_true(wl_quota_reserved(w));
        json_decref(w);
        free(wp);
    }
    free(wp1);
}

static void check_index(struct fx *f);

/* Jobs created together are admitted in the pass that creates their Workloads only as far as
 * the quota goes: one of two 1-cpu jobs under a 1-cpu quota. */
static void test_admits_new_within_quota(void **state)
{
    struct fx *f = *state;
    setup_queues(f, "1", false);
    for (int i = 0; i < 20 && simkueue_sync(f->k) > 0; i++)
        ;
    create_job(f, "j1", "1", NULL);
    create_job(f, "j2", "1", NULL);
    assert_true(simkueue_sync(f->k) > 0);
    for (int i = 0; i < 20 && simkueue_sync(f->k) > 0; i++)
        ;
    int reserved = 0;
    const char *jobs[] = {"j1", "j2"};
    for (size_t i = 0; i < 2; i++) {
        char *wp = wl_path_of(f, jobs[i]);
        json_t *w = NULL;
        assert_int_equal(simapi_get(f->h, wp, &w), 200);
        reserved += wl_quota_reserved(w);
        json_decref(w);
        free(wp);
    }
    assert_int_equal(reserved, 1);
    check_index(f);
}

static void test_admission_check_flow(void **state)
{
    struct fx *f = *state;
    setup_queues(f, "4", true);
    create_job(f, "j1", "1", NULL);
    char *wp = wl_path_of(f, "j1");
    json_t *w = wait_for(f, wp, wl_pending_check);
    assert_string_equal(jx_str(w, "spec.queueName", ""), "lq");
    assert_string_equal(jx_str(w, "spec.podSets[0].name", ""), "main");
    assert_string_equal(jx_str(w, "status.admission.clusterQueue", ""), "cq");
    assert_string_equal(jx_str(w, "status.admission.podSetAssignments[0].flavors.cpu", ""),
                        "default");
    assert_string_equal(jx_str(jx_owner_controller(w), "name", ""), "j1");
    assert_null(jx_cond_find(w, "Admitted"));
    json_decref(w);
    json_t *j = NULL;
    assert_int_equal(simapi_get(f->h, JOBS "/j1", &j), 200);
    assert_true(jx_bool(j, "spec.suspend", false)); /* suspended by the emulator */
    json_decref(j);
    /* the check controller says Ready */
    char *sp = simapi_path("kueue.x-k8s.io", "v1beta2", "workloads", "default",
                           strrchr(wp, '/') + 1, "status");
    json_t *p = J("{\"status\":{\"admissionChecks\":[{\"name\":\"ac\",\"state\":\"Ready\","
                  "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"message\":\"\"}]}}");
    assert_int_equal(simapi_patch(f->h, sp, p, NULL), 200);
    json_decref(p);
    w = wait_for(f, wp, wl_admitted);
    json_decref(w);
    j = wait_for(f, JOBS "/j1", job_running);
    assert_string_equal(jx_str(j, "spec.template.spec.nodeSelector.pool", ""), "a");
    assert_string_equal(jx_str(j, "spec.template.metadata.labels.kueue\\.x-k8s\\.io/podset", ""),
                        "main");
    json_decref(j);
    json_t *cq = wait_for(f, KQ "/clusterqueues/cq", cq_one_admitted);
    json_decref(cq);
    /* finish the job: the workload gets Finished and quota is released */
    p = J("{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}}");
    assert_int_equal(simapi_patch(f->h, JOBS "/j1/status", p, NULL), 200);
    json_decref(p);
    w = wait_for(f, wp, wl_finished);
    assert_string_equal(jx_str(jx_cond_find(w, "Finished"), "reason", ""), "Succeeded");
    json_decref(w);
    cq = wait_for(f, KQ "/clusterqueues/cq", cq_idle);
    json_decref(cq);
    free(sp);
    free(wp);
}

static void set_check(struct fx *f, const char *wp, const char *state)
{
    char *sp = xasprintf("%s/status", wp);
    char body[256];
    snprintf(body, sizeof(body),
             "{\"status\":{\"admissionChecks\":[{\"name\":\"ac\",\"state\":\"%s\","
             "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"message\":\"\"}]}}",
             state);
    json_t *p = J(body);
    assert_int_equal(simapi_patch(f->h, sp, p, NULL), 200);
    json_decref(p);
    free(sp);
}

static bool wl_retried(const json_t *w)
{
    return jx_int(w, "status.admissionChecks[0].retryCount", 0) == 1 &&
           !strcmp(jx_str(w, "status.admissionChecks[0].state", ""), "Pending") &&
           jx_cond_is_true(w, "QuotaReserved");
}

static bool wl_deactivated(const json_t *w)
{
    json_t *c = jx_cond_find(w, "Evicted");
    return !jx_bool(w, "spec.active", true) && c &&
           !strncmp(jx_str(c, "reason", ""), "Deactivated", 11) && !jx_get(w, "status.admission");
}

static void test_retry_and_reject(void **state)
{
    struct fx *f = *state;
    setup_queues(f, "4", true);
    create_job(f, "r", "1", NULL);
    char *wp = wl_path_of(f, "r");
    json_t *w = wait_for(f, wp, wl_pending_check);
    json_decref(w);
    set_check(f, wp, "Ready");
    json_t *j = wait_for(f, JOBS "/r", job_running);
    json_decref(j);
    /* Retry: evicted (job suspended again), check reset to Pending, then reserved again */
    set_check(f, wp, "Retry");
    w = wait_for(f, wp, wl_retried);
    json_t *ev = jx_cond_find(w, "Evicted"); /* evicted, then reserved again */
    assert_string_equal(jx_str(ev, "status", ""), "False");
    assert_string_equal(jx_str(ev, "reason", ""), "QuotaReserved");
    assert_string_equal(jx_str(ev, "message", ""),
                        "Previously: At least one admission check is false");
    assert_string_equal(jx_str(w, "status.admissionChecks[0].message", ""),
                        "Reset to Pending after eviction. Previously: Retry");
    assert_false(jx_cond_is_true(w, "Admitted"));
    json_decref(w);
    assert_int_equal(simapi_get(f->h, JOBS "/r", &j), 200);
    assert_true(jx_bool(j, "spec.suspend", false));
    assert_null(jx_get(j, "spec.template.spec.nodeSelector.pool"));
    json_decref(j);
    /* Rejected: deactivated, quota released, job stays suspended */
    set_check(f, wp, "Rejected");
    w = wait_for(f, wp, wl_deactivated);
    assert_string_equal(jx_cond_status(w, "QuotaReserved"), "False");
    /* As Kueue v0.15.2 on the real stack: the reason on Evicted/Requeued, the check reset to
     * Pending without a retry count. */
    ev = jx_cond_find(w, "Evicted");
    assert_string_equal(jx_str(ev, "reason", ""), "DeactivatedDueToAdmissionCheck");
    assert_string_equal(jx_str(ev, "message", ""), "The workload is deactivated due to Admission "
                                                   "check(s): ac, were rejected");
    assert_string_equal(jx_str(jx_cond_find(w, "Requeued"), "status", ""), "False");
    assert_string_equal(jx_str(w, "status.admissionChecks[0].state", ""), "Pending");
    assert_string_equal(jx_str(w, "status.admissionChecks[0].message", ""),
                        "Reset to Pending after eviction. Previously: Rejected");
    json_decref(w);
    json_t *cq = wait_for(f, KQ "/clusterqueues/cq", cq_idle);
    json_decref(cq);
    assert_int_equal(simapi_get(f->h, JOBS "/r", &j), 200);
    assert_true(jx_bool(j, "spec.suspend", false));
    json_decref(j);
    free(wp);
}

static bool wl_inadmissible(const json_t *w)
{
    json_t *c = jx_cond_find(w, "QuotaReserved");
    return c && !strcmp(jx_str(c, "reason", ""), "Inadmissible");
}

static void test_missing_queue(void **state)
{
    struct fx *f = *state;
    create_job(f, "orphan", "1", NULL); /* LocalQueue lq does not exist yet */
    char *wp = wl_path_of(f, "orphan");
    json_t *w = wait_for(f, wp, wl_inadmissible);
    assert_string_equal(jx_str(jx_cond_find(w, "QuotaReserved"), "message", ""),
                        "LocalQueue lq doesn't exist");
    json_decref(w);
    json_t *j = NULL;
    assert_int_equal(simapi_get(f->h, JOBS "/orphan", &j), 200);
    assert_true(jx_bool(j, "spec.suspend", false));
    json_decref(j);
    /* the queue appears: admitted (no checks) and started */
    setup_queues(f, "2", false);
    j = wait_for(f, JOBS "/orphan", job_running);
    json_decref(j);
    free(wp);
}

static bool pt_running(const json_t *j)
{
    return !jx_bool(j, "spec.runPolicy.suspend", true);
}

static void test_pytorchjob_workload(void **state)
{
    struct fx *f = *state;
    add_crd(f, "kubeflow.org", "pytorchjobs", "PyTorchJob", true,
            "[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"subresources\":{"
            "\"status\":{}}}]");
    setup_queues(f, "8", false);
    create(f, "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs",
           "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"metadata\":{"
           "\"name\":\"pt\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{"
           "\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":1,\"template\":{\"spec\":{"
           "\"containers\":[{\"name\":\"p\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},"
           "\"Worker\":{\"replicas\":3,\"template\":{\"spec\":{\"containers\":[{\"name\":"
           "\"p\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}}}}}");
    json_t *j = wait_for(f, "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/pt", pt_running);
    assert_string_equal(
        jx_str(j, "spec.pytorchReplicaSpecs.Worker.template.spec.nodeSelector.pool", ""), "a");
    char *n = simkueue_workload_name("PyTorchJob", "kubeflow.org", "pt", jx_uid(j));
    assert_int_equal(strncmp(n, "pytorchjob-pt-", 14), 0);
    char *wp = simapi_path("kueue.x-k8s.io", "v1beta2", "workloads", "default", n, NULL);
    json_t *w = NULL;
    assert_int_equal(simapi_get(f->h, wp, &w), 200);
    assert_string_equal(jx_str(w, "spec.podSets[1].name", ""), "worker");
    assert_int_equal(jx_int(w, "spec.podSets[1].count", 0), 3);
    assert_string_equal(jx_str(w, "status.admission.podSetAssignments[1].resourceUsage.cpu", ""),
                        "6");
    assert_true(jx_cond_is_true(w, "Admitted"));
    json_decref(w);
    json_decref(j);
    free(wp);
    free(n);
}

static long count_true(struct fx *f, const char *cond)
{
    json_t *items = NULL;
    assert_int_equal(simapi_list(f->h, KQ "/workloads", NULL, &items), 200);
    long n = 0;
    size_t i;
    json_t *w;
    json_array_foreach(items, i, w) n += jx_cond_is_true(w, cond);
    json_decref(items);
    return n;
}

static bool cq_settled_3(const json_t *cq)
{
    return jx_int(cq, "status.reservingWorkloads", -1) == 3 &&
           jx_int(cq, "status.pendingWorkloads", -1) == 7 &&
           jx_int(cq, "status.admittedWorkloads", -1) == 3;
}

static bool wl_preempted(const json_t *w)
{
    json_t *c = jx_cond_find(w, "Evicted");
    return c && !strcmp(jx_str(c, "status", ""), "True") &&
           !strcmp(jx_str(c, "reason", ""), "Preempted") && !jx_cond_is_true(w, "QuotaReserved");
}

static bool wl_reserved(const json_t *w)
{
    return jx_cond_is_true(w, "QuotaReserved");
}

static void test_fifo_quota_and_preemption(void **state)
{
    struct fx *f = *state;
    setup_queues(f, "3", false);
    char name[16];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "q%d", i);
        create_job(f, name, "1", NULL);
    }
    json_t *cq = wait_for(f, KQ "/clusterqueues/cq", cq_settled_3);
    assert_int_equal(jx_int(cq, "status.admittedWorkloads", -1), 3);
    assert_string_equal(jx_str(cq, "status.flavorsReservation[0].resources[0].total", ""), "3");
    json_decref(cq);
    assert_int_equal(count_true(f, "QuotaReserved"), 3);
    /* FIFO: the three oldest hold the quota (creation timestamps have 1 s resolution, ties by
     * name) */
    char *p0 = wl_path_of(f, "q0");
    json_t *w = wait_for(f, p0, wl_reserved);
    json_decref(w);
    /* a pending one says why */
    char *p9 = wl_path_of(f, "q9");
    json_t *w9 = NULL;
    assert_int_equal(simapi_get(f->h, p9, &w9), 200);
    assert_string_equal(jx_cond_status(w9, "QuotaReserved"), "False");
    assert_non_null(strstr(jx_str(jx_cond_find(w9, "QuotaReserved"), "message", ""),
                           "insufficient unused quota for cpu in flavor default"));
    json_decref(w9);
    /* a high-priority job needing 2 cpu preempts two of them */
    create_job(f, "vip", "2", "high");
    char *pv = wl_path_of(f, "vip");
    w = wait_for(f, pv, wl_admitted);
    assert_int_equal(jx_int(w, "spec.priority", -1), 1000);
    assert_string_equal(jx_str(w, "spec.priorityClassRef.name", ""), "high");
    json_decref(w);
    assert_int_equal(count_true(f, "QuotaReserved"), 2);
    assert_int_equal(count_true(f, "Preempted"), 2);
    /* the preempted ones are the newest reserved of priority 0: evicted, jobs suspended */
    json_t *items = NULL;
    assert_int_equal(simapi_list(f->h, KQ "/workloads", NULL, &items), 200);
    size_t i;
    json_array_foreach(items, i, w)
    {
        if (jx_cond_is_true(w, "Preempted")) {
            assert_true(wl_preempted(w));
            assert_null(jx_get(w, "status.admission"));
            char *jp = simapi_path("batch", "v1", "jobs", "default",
                                   jx_str(jx_owner_controller(w), "name", ""), NULL);
            json_t *j = NULL;
            assert_int_equal(simapi_get(f->h, jp, &j), 200);
            assert_true(jx_bool(j, "spec.suspend", false));
            assert_null(jx_get(j, "spec.template.spec.nodeSelector.pool"));
            json_decref(j);
            free(jp);
        }
    }
    json_decref(items);
    /* raising the quota admits waiting workloads */
    json_t *patch = J("{\"spec\":{\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":"
                      "[{\"name\":\"default\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":"
                      "\"20\"}]}]}]}}");
    assert_int_equal(simapi_patch(f->h, KQ "/clusterqueues/cq", patch, NULL), 200);
    json_decref(patch);
    w = wait_for(f, p9, wl_admitted);
    json_decref(w);
    free(p0);
    free(p9);
    free(pv);
}

/* ---- incremental state: equal to a recomputation, and a fixed point of a full pass ---- */

static void check_index(struct fx *f)
{
    char *why = NULL, msg[4096];
    if (simkueue_check_index(f->k, &why)) {
        snprintf(msg, sizeof(msg), "%s", why);
        free(why);
        fail_msg("incremental index differs: %s", msg);
    }
}

/* Passes until one writes nothing and nothing else changed (GC included). */
static void settle(struct fx *f)
{
    for (int i = 0; i < 100; i++) {
        int64_t rv = hub_rv(f->h);
        int w = simkueue_sync(f->k);
        check_index(f);
        tloop_run_for(f->loop, 0.03); /* emulator ticks, the hub's GC */
        if (w == 0 && hub_rv(f->h) == rv)
            return;
    }
    fail_msg("the emulator did not settle within 100 passes");
}

static unsigned next_rand(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* A random existing object of a collection (new reference) or NULL. */
static json_t *pick(struct fx *f, const char *path, unsigned *seed)
{
    json_t *items = NULL;
    assert_int_equal(simapi_list(f->h, path, NULL, &items), 200);
    size_t n = json_array_size(items);
    json_t *o = n ? json_incref(json_array_get(items, next_rand(seed) % n)) : NULL;
    json_decref(items);
    return o;
}

static void patch_obj(struct fx *f, const char *path, const char *body)
{
    json_t *p = J(body);
    int code = simapi_patch(f->h, path, p, NULL);
    if (code != 200 && code != 404) /* 404: gone meanwhile (GC) */
        fail_msg("patch %s: %d", path, code);
    json_decref(p);
}

static void random_op(struct fx *f, unsigned *seed, int step)
{
    static const char *const states[] = {"Ready", "Ready", "Retry", "Rejected"};
    char name[32], body[512];
    json_t *o = NULL;
    char *path = NULL;
    switch (next_rand(seed) % 10) {
    case 0:
    case 1:
    case 2: /* a new job in either queue, some of high priority */
        snprintf(name, sizeof(name), "j%d", step);
        create_job_q(f, name, next_rand(seed) % 2 ? "1" : "2", next_rand(seed) % 3 ? NULL : "high",
                     next_rand(seed) % 3 ? "lq" : "lq2");
        break;
    case 3: /* an admission check decides */
        if ((o = pick(f, KQ "/workloads", seed)) && jx_arr(o, "status.admissionChecks")) {
            path =
                simapi_path("kueue.x-k8s.io", "v1beta2", "workloads", "default", jx_name(o), NULL);
            set_check(f, path, states[next_rand(seed) % 4]);
        }
        break;
    case 4: /* a job finishes */
        if ((o = pick(f, JOBS, seed))) {
            path = simapi_path("batch", "v1", "jobs", "default", jx_name(o), "status");
            patch_obj(f, path,
                      "{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\","
                      "\"message\":\"done\"}]}}");
        }
        break;
    case 5: /* a job or a workload is deleted (the emulator makes the workload again) */
        if ((o = pick(f, next_rand(seed) % 2 ? JOBS : KQ "/workloads", seed))) {
            const char *res = jx_get(o, "spec.podSets") ? "workloads" : "jobs";
            path = !strcmp(res, "jobs")
                       ? simapi_path("batch", "v1", "jobs", "default", jx_name(o), NULL)
                       : simapi_path("kueue.x-k8s.io", "v1beta2", res, "default", jx_name(o), NULL);
            int code = simapi_delete(f->h, path);
            assert_true(code == 200 || code == 202 || code == 404);
        }
        break;
    case 6: /* quota changes (a spec change: everything is looked at again) */
        snprintf(body, sizeof(body),
                 "{\"spec\":{\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{"
                 "\"name\":\"default\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"%d\"}]}]"
                 "}]}}",
                 2 + (int)(next_rand(seed) % 4));
        patch_obj(f, next_rand(seed) % 2 ? KQ "/clusterqueues/cq" : KQ "/clusterqueues/cq2", body);
        break;
    case 7: /* a workload is deactivated or activated */
        if ((o = pick(f, KQ "/workloads", seed))) {
            path =
                simapi_path("kueue.x-k8s.io", "v1beta2", "workloads", "default", jx_name(o), NULL);
            patch_obj(f, path,
                      next_rand(seed) % 2 ? "{\"spec\":{\"active\":false}}"
                                          : "{\"spec\":{\"active\":true}}");
        }
        break;
    case 8: /* lq2 moves between the ClusterQueues, or someone scribbles on a status */
        if (next_rand(seed) % 2)
            patch_obj(f, KQ "/namespaces/default/localqueues/lq2",
                      next_rand(seed) % 2 ? "{\"spec\":{\"clusterQueue\":\"cq\"}}"
                                          : "{\"spec\":{\"clusterQueue\":\"cq2\"}}");
        else
            patch_obj(f, KQ "/clusterqueues/cq/status", "{\"status\":{\"pendingWorkloads\":99}}");
        break;
    default: /* a job leaves Kueue (label removed) */
        if ((o = pick(f, JOBS, seed))) {
            path = simapi_path("batch", "v1", "jobs", "default", jx_name(o), NULL);
            patch_obj(f, path, "{\"metadata\":{\"labels\":{\"kueue.x-k8s.io/queue-name\":null}}}");
        }
        break;
    }
    json_decref(o);
    free(path);
}

static void test_incremental_equals_full(void **state)
{
    struct fx *f = *state;
    setup_queues(f, "3", true);
    create(f, KQ "/clusterqueues",
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":{"
           "\"name\":\"cq2\"},\"spec\":{\"namespaceSelector\":{},\"queueingStrategy\":"
           "\"StrictFIFO\",\"preemption\":{\"withinClusterQueue\":\"LowerOrNewerEqualPriority\"},"
           "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\","
           "\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"2\"}]}]}]}}");
    create(f, KQ "/namespaces/default/localqueues",
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":{"
           "\"name\":\"lq2\",\"namespace\":\"default\"},\"spec\":{\"clusterQueue\":\"cq2\"}}");
    unsigned seed = 20261122;
    int full_writes = 0;
    for (int step = 0; step < 80; step++) {
        random_op(f, &seed, step);
        settle(f);
        /* a pass that looks at everything (what every pass used to do) finds nothing to do */
        simkueue_resync(f->k);
        int w = simkueue_sync(f->k);
        check_index(f);
        if (w)
            fail_msg("step %d: a full pass after the incremental ones wrote %d times", step, w);
        full_writes += w;
    }
    assert_int_equal(full_writes, 0);
    /* and the work was real: workloads were reserved, admitted, finished */
    assert_true(count_true(f, "QuotaReserved") + count_true(f, "Finished") > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workload_name),
        cmocka_unit_test(test_podsets),
        cmocka_unit_test(test_assign),
        cmocka_unit_test(test_sort_queue),
        cmocka_unit_test(test_victims),
        cmocka_unit_test_setup_teardown(test_admission_check_flow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admits_while_jobs_keep_coming, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admits_new_within_quota, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_quota_and_preemption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_and_reject, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pytorchjob_workload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incremental_equals_full, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
