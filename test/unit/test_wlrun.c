/*
 * Unit tests for controllers/workload/wlrun against the scripted fakesrv,
 * run by a real manager: start-up discovery (Kueue version, served job kinds,
 * origin, with their fallbacks), the hub informers it then starts, the
 * BindingPolicy it creates per cluster, the worker Secrets informer of the
 * direct transport, and a clean stop.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "controllers/quota/controller.h"
#include "controllers/workload/wlrun.h"
#include "pkg/manager/manager.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

#define VERSION_JSON "{\"major\":\"1\",\"minor\":\"32\",\"gitVersion\":\"v1.32.0\"}"
#define EMPTY_LIST   "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}"

/* How long run() waits for done() (setup() sets the default). */
static double run_guard_s;

struct fixture {
    char dir[64];
    char kubeconfig[128];
    struct fakesrv *srv;
    bool saw_started, probe_out_at_start; /* test_no_server_side_apply */
};

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    run_guard_s = 10.0;
    snprintf(f->dir, sizeof f->dir, "/tmp/kks-wlrun-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->kubeconfig, sizeof f->kubeconfig, "%s/kubeconfig", f->dir);
    f->srv = fakesrv_start(NULL);
    FILE *fp = fopen(f->kubeconfig, "w");
    assert_non_null(fp);
    fprintf(fp,
            "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
            "clusters:\n- name: c\n  cluster:\n    server: %s\n"
            "contexts:\n- name: t\n  context: {cluster: c, user: u, namespace: ops}\n"
            "users:\n- name: u\n  user: {token: secret-token}\n",
            fakesrv_url(f->srv));
    fclose(fp);
    fakesrv_push(f->srv,
                 &(struct fakesrv_resp){
                     .method = "GET", .path = "/version", .body = VERSION_JSON, .times = -1});
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    fakesrv_stop(f->srv);
    unlink(f->kubeconfig);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* The index of the first recorded request with this method and path (and a
 * body containing `body_has`, when given), or -1. */
static long find_req(struct fakesrv *s, const char *method, const char *path, const char *query_has,
                     const char *body_has)
{
    size_t n = fakesrv_nreq(s);
    for (size_t i = 0; i < n; i++) {
        struct fakesrv_req *r = fakesrv_req_get(s, i);
        bool ok = strcmp(r->method, method) == 0 && strcmp(r->path, path) == 0 &&
                  (!query_has || strstr(r->query, query_has)) &&
                  (!body_has || strstr(r->body, body_has));
        fakesrv_req_free(r);
        if (ok)
            return (long)i;
    }
    return -1;
}

struct run {
    struct fixture *f;
    struct mgr *m;
    struct wlrun *r;
    struct quota_ctl *q; /* run_q: the quota controller on the same manager, or NULL */
    bool (*done)(struct run *);
    ev_timer poll, guard;
    bool timed_out;
    int polls; /* for done() functions that wait a while */
};

static void on_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct run *x = w->data;
    if (x->done(x))
        mgr_shutdown(x->m, 0);
}

static void on_guard(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct run *x = w->data;
    x->timed_out = true;
    mgr_shutdown(x->m, 99);
}

/* Run the manager with the runner (and the quota controller q, if any) until done() or
 * run_guard_s; fills *st. */
static int run_q(struct fixture *f, const struct wlrun_config *cfg, bool (*done)(struct run *),
                 struct wlrun_stats *st, struct quota_ctl *q)
{
    struct ev_loop *loop = ev_default_loop(0);
    struct run x = {.f = f, .done = done, .q = q};
    struct err e;
    err_clear(&e);
    assert_int_equal(wlrun_new(cfg, &x.r, &e), 0);
    struct mgr_options o = {.kubeconfig = f->kubeconfig, .metrics_bind = "0", .health_bind = "0"};
    assert_int_equal(mgr_new(loop, &o, NULL, &x.m, &e), 0);
    struct mgr_runnable rn;
    wlrun_runnable(x.r, &rn);
    mgr_add_runnable(x.m, &rn);
    if (q) {
        struct mgr_runnable qn;
        quota_ctl_runnable(q, &qn);
        mgr_add_runnable(x.m, &qn);
    }
    ev_timer_init(&x.poll, on_poll, 0.05, 0.05);
    x.poll.data = &x;
    ev_timer_start(loop, &x.poll);
    ev_timer_init(&x.guard, on_guard, run_guard_s, 0);
    x.guard.data = &x;
    ev_timer_start(loop, &x.guard);
    int code = mgr_run(x.m);
    ev_timer_stop(loop, &x.poll);
    ev_timer_stop(loop, &x.guard);
    quota_ctl_stop(q); /* its shared registrations go before the manager's cache */
    wlrun_get_stats(x.r, st);
    /* copy what the stats borrow before freeing */
    static char ver[32], origin[64];
    snprintf(ver, sizeof ver, "%s", st->kueue_version ? st->kueue_version : "");
    snprintf(origin, sizeof origin, "%s", st->origin ? st->origin : "");
    st->kueue_version = ver;
    st->origin = origin;
    wlrun_release(x.r);
    mgr_free(x.m);
    wlrun_free(x.r);
    assert_false(x.timed_out);
    return code;
}

static int run(struct fixture *f, const struct wlrun_config *cfg, bool (*done)(struct run *),
               struct wlrun_stats *st)
{
    return run_q(f, cfg, done, st, NULL);
}

static bool v1beta1_started(struct run *x)
{
    return find_req(x->f->srv, "GET", "/apis/kueue.x-k8s.io/v1beta1/workloads", NULL, NULL) >= 0 &&
           find_req(x->f->srv, "GET", "/apis/batch/v1/jobs", NULL, NULL) >= 0 &&
           find_req(x->f->srv, "GET", "/api/v1/namespaces/ops/secrets", NULL, NULL) >= 0;
}

/* v1beta1_started and every other start-up request test_discovery_fallbacks checks: they go
 * out together, in no fixed order (waiting for three of them made the test flaky) */
static bool v1beta1_all_started(struct run *x)
{
    static const char *const paths[] = {"/apis/kueue.x-k8s.io/v1beta1/admissionchecks",
                                        "/apis/kueue.x-k8s.io/v1beta1/resourceflavors",
                                        "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics",
                                        "/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
                                        "/api/v1/namespaces/kube-system"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (find_req(x->f->srv, "GET", paths[i], NULL, NULL) < 0)
            return false;
    return v1beta1_started(x) &&
           find_req(
               x->f->srv, "PATCH",
               "/apis/kueue.x-k8s.io/v1beta1/namespaces/ops/workloads/kueue-ks-ssa-probe/status",
               "dryRun=All", NULL) >= 0;
}

/* An empty list, for as many requests as come, at each of the paths (their watches are not
 * answered here). */
static void serve_empty_lists(struct fixture *f, const char *const *paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "GET",
                                                    .path = paths[i],
                                                    .query_lacks = "watch=",
                                                    .body = EMPTY_LIST,
                                                    .times = -1});
}

/* Discovery of the Kueue group answers v1beta1 alone. */
static void serve_v1beta1_only(struct fixture *f)
{
    fakesrv_push_json(f->srv, "GET", "/apis/kueue.x-k8s.io", NULL, 200,
                      "{\"kind\":\"APIGroup\",\"name\":\"kueue.x-k8s.io\",\"versions\":"
                      "[{\"groupVersion\":\"kueue.x-k8s.io/v1beta1\",\"version\":\"v1beta1\"}]}");
}

/* Only v1beta1 served, no kube-system namespace, no other job kinds: the
 * fallbacks. Direct transport: the worker Secrets of the operator's namespace
 * are watched. */
static void test_discovery_fallbacks(void **state)
{
    struct fixture *f = *state;
    serve_v1beta1_only(f);
    struct wlrun_config cfg = {0};
    struct wlrun_stats st;
    assert_int_equal(run(f, &cfg, v1beta1_all_started, &st), 0);
    assert_true(st.started);
    assert_string_equal(st.kueue_version, "v1beta1");
    assert_string_equal(st.origin, "kueue-ks");
    assert_int_equal(st.hub_kinds, 1);
    assert_true(
        find_req(f->srv, "GET", "/apis/kueue.x-k8s.io/v1beta1/admissionchecks", NULL, NULL) >= 0);
    assert_true(
        find_req(f->srv, "GET", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors", NULL, NULL) >= 0);
    assert_true(find_req(f->srv, "GET", "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics", NULL,
                         NULL) >= 0);
    /* for the ClusterQueue-wide cluster selector */
    assert_true(find_req(f->srv, "GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues", NULL, NULL) >=
                0);
    assert_true(find_req(f->srv, "GET", "/api/v1/namespaces/kube-system", NULL, NULL) >= 0);
    /* not served: never listed */
    assert_int_equal(find_req(f->srv, "GET", "/apis/kubeflow.org/v1/pytorchjobs", NULL, NULL), -1);
    assert_int_equal(find_req(f->srv, "GET", "/apis/kueue.x-k8s.io/v1beta2/workloads", NULL, NULL),
                     -1);
    assert_true(find_req(f->srv, "GET", "/api/v1/namespaces/ops/secrets",
                         "labelSelector=kueue-ks.io%2Fworker%3Dtrue", NULL) >= 0);
    /* the SSA probe: a dry run; its 404 (no such Workload) leaves SSA on */
    assert_true(find_req(f->srv, "PATCH",
                         "/apis/kueue.x-k8s.io/v1beta1/namespaces/ops/workloads/"
                         "kueue-ks-ssa-probe/status",
                         "dryRun=All", "\"kind\":\"Workload\"") >= 0);
    assert_true(st.server_side_apply);
}

/* Until the hub's stores sync (here its Workload and Job lists are refused), the passes that
 * wait for them (clusters, orphans) come back every 0.2-0.5 s, not at every loop iteration:
 * a one-shot libev timer restarted without setting its delay again fires at once, and the
 * loop spun until the lists came. Waits 1 s after the start-up. */
static bool all_started_then_1s(struct run *x)
{
    if (!x->polls && !v1beta1_all_started(x))
        return false;
    return ++x->polls >= 20;
}

static void test_unsynced_passes_wait(void **state)
{
    struct fixture *f = *state;
    serve_v1beta1_only(f);
    struct wlrun_config cfg = {0};
    struct wlrun_stats st;
    assert_int_equal(run(f, &cfg, all_started_then_1s, &st), 0);
    assert_true(st.started);
    assert_false(st.synced);
    assert_true(st.waited_passes >= 1);
    assert_true(st.waited_passes <= 20);
}

/* The informers have started (noting whether the start-up probe was still unanswered then),
 * and the probe's 415 has come: merge patches from then on. */
static bool probe_answered_late(struct run *x)
{
    struct wlrun_stats st;
    wlrun_get_stats(x->r, &st);
    if (!v1beta1_started(x))
        return false;
    if (!x->f->saw_started) {
        x->f->saw_started = true;
        x->f->probe_out_at_start = st.server_side_apply;
    }
    return !st.server_side_apply;
}

/* A hub without server-side apply (415 to the start-up probe): merge patches once the probe
 * answered. The informers do not wait for it: with its answer held back, they list before it
 * comes (a restart's lists, and its first dispatch, one round trip sooner). */
static void test_no_server_side_apply(void **state)
{
    struct fixture *f = *state;
    serve_v1beta1_only(f);
    const char *probe = "/apis/kueue.x-k8s.io/v1beta1/namespaces/ops/workloads/"
                        "kueue-ks-ssa-probe/status";
    fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "PATCH",
                                                .path = probe,
                                                .status = 415,
                                                .body = "{\"kind\":\"Status\",\"code\":415}",
                                                .delay_s = 0.5});
    struct wlrun_config cfg = {0};
    struct wlrun_stats st;
    assert_int_equal(run(f, &cfg, probe_answered_late, &st), 0);
    assert_true(st.started);
    assert_true(f->probe_out_at_start);
    assert_false(st.server_side_apply);
    long i = find_req(f->srv, "PATCH",
                      "/apis/kueue.x-k8s.io/v1beta1/namespaces/ops/workloads/"
                      "kueue-ks-ssa-probe/status",
                      "dryRun=All", NULL);
    assert_true(i >= 0);
    struct fakesrv_req *req = fakesrv_req_get(f->srv, (size_t)i);
    bool apply = false;
    for (char **h = req->headers; *h; h++)
        apply |= strcmp(*h, "content-type: application/apply-patch+yaml") == 0;
    fakesrv_req_free(req);
    assert_true(apply);
}

static bool v1beta2_started(struct run *x)
{
    return find_req(x->f->srv, "GET", "/apis/kueue.x-k8s.io/v1beta2/workloads", NULL, NULL) >= 0;
}

static size_t count_req(struct fakesrv *s, const char *method, const char *path)
{
    size_t n = 0;
    for (size_t k = 0; k < fakesrv_nreq(s); k++) {
        struct fakesrv_req *r = fakesrv_req_get(s, k);
        n += strcmp(r->method, method) == 0 && strcmp(r->path, path) == 0;
        fakesrv_req_free(r);
    }
    return n;
}

/* A transient error at start-up (403 while RBAC is applied, here on both
 * the Kueue group and kube-system) is retried, not taken as the answer: the
 * version and the origin come from the next, good answers. They used to be
 * v1beta1 and "kueue-ks" for the life of the process (the origin hid every
 * copy the previous instance made). */
static void test_discovery_retries_transient_errors(void **state)
{
    struct fixture *f = *state;
    fakesrv_push_status(f->srv, "GET", "/apis/kueue.x-k8s.io", 403, "Forbidden", "not yet allowed");
    fakesrv_push_json(f->srv, "GET", "/apis/kueue.x-k8s.io", NULL, 200,
                      "{\"kind\":\"APIGroup\",\"versions\":[{\"version\":\"v1beta2\"}]}");
    fakesrv_push_status(f->srv, "GET", "/api/v1/namespaces/kube-system", 403, "Forbidden",
                        "not yet allowed");
    fakesrv_push_json(f->srv, "GET", "/api/v1/namespaces/kube-system", NULL, 200,
                      "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kube-system\","
                      "\"uid\":\"ks-uid\"}}");
    struct wlrun_config cfg = {.discovery_backoff_s = 0.05};
    struct wlrun_stats st;
    assert_int_equal(run(f, &cfg, v1beta2_started, &st), 0);
    assert_string_equal(st.kueue_version, "v1beta2");
    assert_string_equal(st.origin, "ks-uid");
    assert_int_equal(count_req(f->srv, "GET", "/api/v1/namespaces/kube-system"), 2);
    assert_int_equal(count_req(f->srv, "GET", "/apis/kueue.x-k8s.io"), 2);
}

static bool bp_posted(struct run *x)
{
    return find_req(x->f->srv, "POST", "/apis/control.kubestellar.io/v1alpha1/bindingpolicies",
                    NULL, "kueue-ks-c1") >= 0 &&
           find_req(x->f->srv, "GET", "/apis/kubeflow.org/v1/pytorchjobs", NULL, NULL) >= 0;
}

/* v1beta2 and PyTorchJobs served, kube-system's uid is the origin; with the
 * kubestellar transport a cluster c1 in ClusterMetrics gets its
 * BindingPolicy, and no worker Secrets are watched. */
static void test_discovery_v1beta2_bp(void **state)
{
    struct fixture *f = *state;
    fakesrv_push_json(f->srv, "GET", "/apis/kueue.x-k8s.io", NULL, 200,
                      "{\"kind\":\"APIGroup\",\"versions\":[{\"version\":\"v1beta2\"},{\"version\":"
                      "\"v1beta1\"}]}");
    fakesrv_push_json(f->srv, "GET", "/api/v1/namespaces/kube-system", NULL, 200,
                      "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kube-system\","
                      "\"uid\":\"0f0e-uid\"}}");
    fakesrv_push_json(f->srv, "GET", "/apis/kubeflow.org/v1", "watch=", 200,
                      "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":\"pytorchjobs\"},"
                      "{\"name\":\"pytorchjobs/status\"}]}");
    fakesrv_push(f->srv, &(struct fakesrv_resp){
                             .method = "GET",
                             .path = "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics",
                             .query_lacks = "watch=",
                             .body = "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"5\"},"
                                     "\"items\":[{\"metadata\":{\"name\":\"c1\","
                                     "\"resourceVersion\":\"5\"}}]}",
                             .times = -1});
    fakesrv_push(f->srv, &(struct fakesrv_resp){
                             .method = "POST",
                             .path = "/apis/control.kubestellar.io/v1alpha1/bindingpolicies",
                             .status = 201,
                             .body = "{\"kind\":\"BindingPolicy\"}",
                             .times = -1});
    struct wlrun_config cfg = {.transport = "kubestellar"};
    struct wlrun_stats st;
    assert_int_equal(run(f, &cfg, bp_posted, &st), 0);
    assert_string_equal(st.kueue_version, "v1beta2");
    assert_string_equal(st.origin, "0f0e-uid");
    assert_int_equal(st.hub_kinds, 2);
    assert_true(find_req(f->srv, "GET", "/apis/kueue.x-k8s.io/v1beta2/workloads", NULL, NULL) >= 0);
    assert_int_equal(find_req(f->srv, "GET", "/api/v1/namespaces/ops/secrets", NULL, NULL), -1);
    long i = find_req(f->srv, "POST", "/apis/control.kubestellar.io/v1alpha1/bindingpolicies", NULL,
                      "kueue-ks-c1");
    assert_true(i >= 0);
    struct fakesrv_req *req = fakesrv_req_get(f->srv, (size_t)i);
    json_t *bp = json_loads(req->body, 0, NULL);
    fakesrv_req_free(req);
    assert_non_null(bp);
    json_t *spec = json_object_get(bp, "spec");
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_array_get(json_object_get(spec, "clusterSelectors"), 0),
                            "matchLabels"),
            "name")),
        "c1");
    json_t *ds = json_array_get(json_object_get(spec, "downsync"), 0);
    assert_true(json_is_true(json_object_get(ds, "createOnly")));
    assert_true(json_is_true(json_object_get(ds, "wantSingletonReportedState")));
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_array_get(json_object_get(ds, "objectSelectors"), 0),
                            "matchLabels"),
            "kubestellar.io/cluster")),
        "c1");
    json_decref(bp);
    /* one BindingPolicy POST per cluster, not one per event */
    size_t posts = 0;
    for (size_t k = 0; k < fakesrv_nreq(f->srv); k++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, k);
        posts += strcmp(r->method, "POST") == 0 && strstr(r->path, "bindingpolicies") != NULL;
        fakesrv_req_free(r);
    }
    assert_int_equal(posts, 1);
}

/* the widgets are listed, then 1 s more (5 periodic passes re-queue the Workload) */
static bool widgets_listed(struct run *x)
{
    if (find_req(x->f->srv, "GET", "/apis/example.com/v1/widgets", NULL, NULL) < 0)
        return false;
    return ++x->polls >= 20;
}

/* A Workload owned by a kind outside the table: its group-version is
 * discovered once and the kind is then watched on the hub (and, direct
 * transport, on the workers). */
static void dynamic_kind(void **state, bool forbidden)
{
    struct fixture *f = *state;
    fakesrv_push_json(f->srv, "GET", "/apis/kueue.x-k8s.io", NULL, 200,
                      "{\"kind\":\"APIGroup\",\"versions\":[{\"version\":\"v1beta1\"}]}");
    const char *lists[] = {"/apis/kueue.x-k8s.io/v1beta1/admissionchecks",
                           "/apis/kueue.x-k8s.io/v1beta1/resourceflavors",
                           "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics",
                           "/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
                           "/apis/batch/v1/jobs",
                           "/apis/example.com/v1/widgets"};
    size_t nl = sizeof lists / sizeof lists[0];
    if (forbidden) { /* no RBAC for the new kind: its list fails */
        fakesrv_push(f->srv, &(struct fakesrv_resp){
                                 .method = "GET",
                                 .path = "/apis/example.com/v1/widgets",
                                 .status = 403,
                                 .body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":"
                                         "\"Forbidden\",\"code\":403}",
                                 .times = -1});
        nl--;
    }
    serve_empty_lists(f, lists, nl);
    fakesrv_push(
        f->srv,
        &(struct fakesrv_resp){
            .method = "GET",
            .path = "/apis/kueue.x-k8s.io/v1beta1/workloads",
            .query_lacks = "watch=",
            .body = "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"3\"},\"items\":[{"
                    "\"metadata\":{\"name\":\"widget-w1-abcde\",\"namespace\":\"default\","
                    "\"resourceVersion\":\"3\",\"uid\":\"wl-uid\",\"ownerReferences\":[{"
                    "\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"name\":\"w1\","
                    "\"uid\":\"w1-uid\",\"controller\":true}]},\"spec\":{\"queueName\":\"q\"}}]}",
            .times = -1});
    fakesrv_push(f->srv, &(struct fakesrv_resp){
                             .method = "GET",
                             .path = "/apis/example.com/v1",
                             .body = "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":"
                                     "\"widgets\",\"kind\":\"Widget\",\"namespaced\":true,"
                                     "\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"patch\","
                                     "\"delete\"]}]}",
                             .times = -1});
    struct wlrun_config cfg = {.gc_interval_s = 0.2};
    struct wlrun_stats st;
    assert_int_equal(run(f, &cfg, widgets_listed, &st), 0);
    assert_int_equal(st.hub_kinds, 2);
    assert_int_equal(count_req(f->srv, "GET", "/apis/example.com/v1"), 1);
    /* a kind that cannot be listed does not hold the controller back */
    assert_true(st.synced);
}

/* GETs of `path` that are lists (no watch=). */
static size_t count_lists(struct fakesrv *s, const char *path)
{
    size_t n = 0;
    for (size_t k = 0; k < fakesrv_nreq(s); k++) {
        struct fakesrv_req *r = fakesrv_req_get(s, k);
        n += strcmp(r->method, "GET") == 0 && strcmp(r->path, path) == 0 &&
             !strstr(r->query, "watch=");
        fakesrv_req_free(r);
    }
    return n;
}

#define CQS "/apis/kueue.x-k8s.io/v1beta1/clusterqueues"

/* both controllers have their informers: the quota controller synced, the workload
 * controller's lists out, the ClusterQueues' watch asked for; then 0.5 s more */
static bool both_listed(struct run *x)
{
    if (!quota_ctl_synced(x->q) ||
        find_req(x->f->srv, "GET", "/apis/kueue.x-k8s.io/v1beta1/workloads", NULL, NULL) < 0 ||
        find_req(x->f->srv, "GET", CQS, "watch=", NULL) < 0)
        return false;
    return ++x->polls >= 10;
}

/* The workload and quota controllers read the hub's ClusterQueues through one shared informer
 * (issue 12: one cache per cluster, resource and selector): one list, not one each. */
static void test_cluster_queues_shared(void **state)
{
    struct fixture *f = *state;
    /* each controller discovers the Kueue group itself */
    fakesrv_push(f->srv, &(struct fakesrv_resp){
                             .method = "GET",
                             .path = "/apis/kueue.x-k8s.io",
                             .body = "{\"kind\":\"APIGroup\",\"name\":\"kueue.x-k8s.io\","
                                     "\"versions\":[{\"groupVersion\":\"kueue.x-k8s.io/v1beta1\","
                                     "\"version\":\"v1beta1\"}]}",
                             .times = -1});
    const char *lists[] = {"/apis/kueue.x-k8s.io/v1beta1/admissionchecks",
                           "/apis/kueue.x-k8s.io/v1beta1/resourceflavors",
                           "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics",
                           CQS,
                           "/apis/kueue.x-k8s.io/v1beta1/workloads",
                           "/apis/batch/v1/jobs"};
    serve_empty_lists(f, lists, sizeof lists / sizeof lists[0]);
    const char *none[] = {NULL};
    fakesrv_push_watch(f->srv, CQS, none, FAKESRV_HOLD);
    struct quota_options qo = {0};
    struct flag fl[QUOTA_NFLAGS];
    quota_flags(&qo, fl);
    struct err e;
    err_clear(&e);
    assert_int_equal(flags_set_defaults(fl, QUOTA_NFLAGS, &e), 0);
    struct quota_tuning t = {.retry_s = 0.05, .informer_backoff_s = 0.01};
    struct quota_ctl *q = NULL;
    assert_int_equal(quota_ctl_new(&qo, &t, &q, &e), 0);
    struct wlrun_config cfg = {0};
    struct wlrun_stats st;
    assert_int_equal(run_q(f, &cfg, both_listed, &st, q), 0);
    /* one informer: one list (each informer lists once at its start) */
    assert_int_equal(count_lists(f->srv, CQS), 1);
    quota_ctl_free(q);
    flags_free(fl, QUOTA_NFLAGS);
}

static void test_dynamic_kind_discovered(void **state)
{
    dynamic_kind(state, false);
}

static void test_dynamic_kind_forbidden(void **state)
{
    dynamic_kind(state, true);
}

/* ---- one LocalQueue read for the jobs of a queue ---------------------------------- */

#define LQ_JOBS    20
#define LQ_HUBPATH "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/localqueues/lq"
#define LQ_WPATH   "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/localqueues"

static struct fakesrv *lq_worker; /* the worker's server, for lq_done() */
static bool lq_jobs_pushed;

/* Once the worker is reachable, the hub's job list (the jobs' namespace and LocalQueue are
 * only created on reachable workers) becomes available to the informer's next retry;
 * done when the worker got the LocalQueue. */
static bool lq_done(struct run *x)
{
    if (!lq_jobs_pushed) {
        struct wlrun_stats st;
        wlrun_get_stats(x->r, &st);
        if (st.workers_reachable != 1)
            return false;
        json_t *items = json_array();
        for (int i = 0; i < LQ_JOBS; i++) {
            char name[16], uid[16];
            snprintf(name, sizeof name, "j%d", i);
            snprintf(uid, sizeof uid, "uid-%d", i);
            json_array_append_new(items, json_pack("{s:{s:s, s:s, s:s, s:s, s:{s:s}}}", "metadata",
                                                   "name", name, "namespace", "team", "uid", uid,
                                                   "resourceVersion", "4", "labels",
                                                   "kueue.x-k8s.io/queue-name", "lq"));
        }
        json_t *list = json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", "JobList", "apiVersion",
                                 "batch/v1", "metadata", "resourceVersion", "4", "items", items);
        char *body = json_dumps(list, JSON_COMPACT);
        json_decref(list);
        fakesrv_push(x->f->srv, &(struct fakesrv_resp){.method = "GET",
                                                       .path = "/apis/batch/v1/jobs",
                                                       .query_lacks = "watch=",
                                                       .body = body,
                                                       .times = -1});
        free(body);
        lq_jobs_pushed = true;
        return false;
    }
    return find_req(lq_worker, "POST", LQ_WPATH, NULL, "\"name\":\"lq\"") >= 0;
}

/* lq_done, then 1 s more: about 5 ticks (gc_interval_s 0.2), each ensuring BindingPolicies */
static bool lq_done_ticks(struct run *x)
{
    return (x->polls > 0 || lq_done(x)) && ++x->polls >= 20;
}

/* A restart lists every job at once, all in one LocalQueue: its hub copy is read once for
 * all of them, not once per job (1,000 concurrent GETs at bench-scale N = 1,000, each on its
 * own connection, held the restarted operator's first dispatch for seconds), and the
 * worker still gets the LocalQueue, whichever of the read and the namespace create
 * completes first. */
static void test_jobs_of_a_queue_share_one_localqueue_read(void **state)
{
    struct fixture *f = *state;
    fakesrv_push_json(f->srv, "GET", "/apis/kueue.x-k8s.io", NULL, 200,
                      "{\"kind\":\"APIGroup\",\"versions\":[{\"version\":\"v1beta2\"}]}");
    const char *lists[] = {"/apis/kueue.x-k8s.io/v1beta2/admissionchecks",
                           "/apis/kueue.x-k8s.io/v1beta2/resourceflavors",
                           "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics",
                           "/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
                           "/apis/kueue.x-k8s.io/v1beta2/workloads",
                           "/api/v1/namespaces/ops/secrets"};
    serve_empty_lists(f, lists, sizeof lists / sizeof lists[0]);
    fakesrv_push(f->srv, &(struct fakesrv_resp){
                             .method = "GET",
                             .path = LQ_HUBPATH,
                             .body = "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
                                     "\"LocalQueue\",\"metadata\":{\"name\":\"lq\",\"namespace\":"
                                     "\"team\"},\"spec\":{\"clusterQueue\":\"cq\"}}",
                             .times = -1});
    lq_worker = fakesrv_start(NULL);
    fakesrv_push(lq_worker,
                 &(struct fakesrv_resp){
                     .method = "GET", .path = "/version", .body = VERSION_JSON, .times = -1});
    const char *wlists[] = {"/apis/batch/v1/jobs", "/api/v1/pods", "/api/v1/nodes"};
    for (size_t i = 0; i < sizeof wlists / sizeof wlists[0]; i++) {
        fakesrv_push(lq_worker, &(struct fakesrv_resp){.method = "GET",
                                                       .path = wlists[i],
                                                       .query_lacks = "watch=",
                                                       .body = EMPTY_LIST,
                                                       .times = -1});
        const char *none[] = {NULL};
        fakesrv_push_watch(lq_worker, wlists[i], none, FAKESRV_HOLD);
    }
    fakesrv_push(lq_worker, &(struct fakesrv_resp){.method = "POST",
                                                   .path = "/api/v1/namespaces",
                                                   .status = 201,
                                                   .body = "{\"kind\":\"Namespace\"}",
                                                   /* after the LocalQueue read, the
                                                      order no later job event mends */
                                                   .delay_s = 0.3,
                                                   .times = -1});
    fakesrv_push(lq_worker, &(struct fakesrv_resp){.method = "POST",
                                                   .path = LQ_WPATH,
                                                   .status = 201,
                                                   .body = "{\"kind\":\"LocalQueue\"}",
                                                   .times = -1});
    char wkc[160], spec[200];
    snprintf(wkc, sizeof wkc, "%s/worker.kc", f->dir);
    FILE *fp = fopen(wkc, "w");
    assert_non_null(fp);
    fprintf(fp,
            "apiVersion: v1\nkind: Config\ncurrent-context: w\n"
            "clusters:\n- name: w\n  cluster:\n    server: %s\n"
            "contexts:\n- name: w\n  context: {cluster: w, user: u}\n"
            "users:\n- name: u\n  user: {token: worker-token}\n",
            fakesrv_url(lq_worker));
    fclose(fp);
    snprintf(spec, sizeof spec, "w1=%s", wkc);
    const char *workers[] = {spec};
    lq_jobs_pushed = false;
    /* the hub's job list comes at a retry of the informer (backoff 0.8 s doubling) after
     * the worker is reachable, which can take seconds under load */
    run_guard_s = 40.0;
    struct wlrun_config cfg = {
        .workers = workers, .n_workers = 1, .allow_insecure_workers = true, .gc_interval_s = 0.2};
    struct wlrun_stats st;
    assert_int_equal(run(f, &cfg, lq_done_ticks, &st), 0);
    assert_int_equal(count_req(f->srv, "GET", LQ_HUBPATH), 1);
    assert_int_equal(count_req(lq_worker, "POST", LQ_WPATH), 1);
    /* the hub has no BindingPolicy API (404), which the direct transport does not need:
     * asked once, not again at every tick */
    assert_int_equal(
        count_req(f->srv, "POST", "/apis/control.kubestellar.io/v1alpha1/bindingpolicies"), 1);
    fakesrv_stop(lq_worker);
    unlink(wkc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_discovery_fallbacks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cluster_queues_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsynced_passes_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_server_side_apply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discovery_v1beta2_bp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discovery_retries_transient_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dynamic_kind_discovered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dynamic_kind_forbidden, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jobs_of_a_queue_share_one_localqueue_read, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
