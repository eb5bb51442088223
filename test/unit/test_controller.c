/*
 * Unit tests for controllers/workload/controller: the driver builds snapshots
 * from stores filled by hand (as informers would), places the workload, and
 * writes through the real REST client to scripted fake hub and worker API
 * servers; the placing pass creates the worker copy once its job patch went
 * through, or, when it could not (c1's client away: place_unchained), a later
 * pass does; a 409 on a write is retried.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ev.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/controller.h"
#include "pkg/kube/evrec.h"
#include "controllers/workload/xf.h"
#include "pkg/json/jsonx.h"
#include "pkg/kube/client.h"
#include "pkg/metrics/metrics.h"
#include "pkg/util/clock.h"
#include "pkg/util/log.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"
#include "test/support/tloop.h"

#define NOW_MS   1795341600000LL /* 2026-11-22T10:00:00Z */
#define JOB_PATH "/apis/batch/v1/namespaces/default/jobs/sample"
#define WL_STATUS                                                                                  \
    "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-sample-1a2b3/status"

struct fx {
    struct ev_loop *loop;
    struct fakesrv *hub_srv, *w_srv;
    struct kube_client *hub, *w;
    struct store *wls, *acs, *flavors, *cms, *jobs, *copies_c1;
    bool c1_connected;
    bool c3_connected;
    bool unsynced;
    bool c1_unknown; /* the process has not heard from c1 since its start */
    bool c3_unknown; /* nor from c3 */
    struct wlc *c;
    struct metrics_registry *reg;
    size_t want_hub, want_w;
    struct logger *lg; /* for the next new_wlc, NULL = none */
    int64_t now_ms;    /* the controller's clock, 0 = NOW_MS */
    uint64_t want_reconciles;
    json_t *workers;  /* the registered worker names, NULL = no registry */
    bool meta_status; /* the next new_wlc writes job metadata through /status */
    bool w_down;      /* c1's client is away (worker_of gives none) */
};

/* The scrape contains this exact sample line. */
static void assert_metric(struct fx *f, const char *line)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(metrics_registry_write(f->reg, &b), 0);
    char *want = xasprintf("\n%s\n", line);
    if (!strstr(buf_str(&b), want))
        fail_msg("metric line \"%s\" not in:\n%s", line, buf_str(&b));
    free(want);
    buf_free(&b);
}

static json_t *J(const char *s)
{
    struct err e;
    json_t *v = jx_loadb(s, strlen(s), &e);
    if (!v)
        fail_msg("bad test JSON: %s", e.msg);
    return v;
}

static void put(struct store *s, const char *json)
{
    json_t *o = J(json);
    assert_int_equal(store_upsert(s, o, NULL, NULL, NULL), 0);
    json_decref(o);
}

static struct store *jobs_of(void *ud, const struct kind_def *k)
{
    struct fx *f = ud;
    return strcmp(k->kind, "Job") == 0 ? f->jobs : NULL;
}

static struct store *copies_of(void *ud, const char *cluster, const struct kind_def *k)
{
    struct fx *f = ud;
    (void)k;
    if (strcmp(cluster, "c3") == 0 && f->c3_connected)
        return f->copies_c1; /* empty for c3's tests */
    return strcmp(cluster, "c1") == 0 && f->c1_connected ? f->copies_c1 : NULL;
}

static json_t *worker_names(void *ud)
{
    struct fx *f = ud;
    return f->workers ? json_incref(f->workers) : NULL;
}

static bool known(void *ud, const char *cluster)
{
    struct fx *f = ud;
    return !(f->c1_unknown && strcmp(cluster, "c1") == 0) &&
           !(f->c3_unknown && strcmp(cluster, "c3") == 0);
}

static bool synced(void *ud)
{
    return !((struct fx *)ud)->unsynced;
}

static struct kube_client *worker_of(void *ud, const char *cluster)
{
    struct fx *f = ud;
    return strcmp(cluster, "c1") == 0 && !f->w_down ? f->w : NULL;
}

static int64_t fake_now(void *ud)
{
    const struct fx *f = ud;
    return f && f->now_ms ? f->now_ms : NOW_MS;
}

static struct kube_client *client_for(struct ev_loop *loop, struct fakesrv *s)
{
    struct kube_rest_config *cfg = kube_rest_config_new();
    cfg->server = xstrdup(fakesrv_url(s));
    struct kube_client *c = NULL;
    int rc = kube_client_new(loop, cfg, NULL, NULL, &c, NULL);
    kube_rest_config_free(cfg);
    assert_int_equal(rc, 0);
    return c;
}

static const char *WL = "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
                        "\"metadata\":{\"name\":\"job-sample-1a2b3\",\"namespace\":\"default\","
                        "\"uid\":\"wl-uid\",\"resourceVersion\":\"10\",\"ownerReferences\":[{"
                        "\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"sample\","
                        "\"uid\":\"job-uid\",\"controller\":true}]},"
                        "\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":3,\"template\":{"
                        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
                        "{\"cpu\":\"1\"}}}]}}}]},"
                        "\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":"
                        "\"True\",\"lastTransitionTime\":\"2026-11-22T09:59:00Z\"}],"
                        "\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":"
                        "\"main\",\"flavors\":{\"cpu\":\"spot\"},\"count\":3}]},"
                        "\"admissionChecks\":[{\"name\":\"ks\",\"state\":\"Pending\","
                        "\"lastTransitionTime\":\"2026-11-22T09:59:00Z\",\"message\":\"\"}]}}";

static const char *JOB = "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
                         "\"sample\",\"namespace\":\"default\",\"uid\":\"job-uid\","
                         "\"resourceVersion\":\"5\"},\"spec\":{\"suspend\":true,\"parallelism\":3,"
                         "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}";

typedef const struct kind_def *(*kind_fn)(void *, const json_t *, char *, size_t);
static void new_wlc(struct fx *f, bool ssa, struct evrec *ev, kind_fn kind);

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->reg = metrics_registry_new();
    f->hub_srv = fakesrv_start(NULL);
    f->w_srv = fakesrv_start(NULL);
    f->hub = client_for(f->loop, f->hub_srv);
    f->w = client_for(f->loop, f->w_srv);
    f->wls = store_new(NULL);
    store_add_index(f->wls, WLC_INDEX_OWNER, store_index_by_owner_uid, NULL, NULL);
    f->acs = store_new(NULL);
    f->flavors = store_new(NULL);
    f->cms = store_new(NULL);
    f->jobs = store_new(NULL);
    store_add_index(f->jobs, WLC_INDEX_UID, store_index_by_field, (void *)"metadata.uid", NULL);
    f->copies_c1 = store_new(NULL);
    f->c1_connected = true;
    put(f->acs, "{\"metadata\":{\"name\":\"ks\"},\"spec\":{\"controllerName\":"
                "\"kubestellar.io/ks-kueue\"}}");
    put(f->acs, "{\"metadata\":{\"name\":\"other\"},\"spec\":{\"controllerName\":\"x/y\"}}");
    put(f->flavors, "{\"metadata\":{\"name\":\"spot\"},\"spec\":{\"nodeLabels\":{\"instance\":"
                    "\"spot\"}}}");
    put(f->cms, "{\"metadata\":{\"name\":\"c1\"},\"status\":{\"lastUpdated\":"
                "\"2026-11-22T09:59:50Z\",\"nodes\":[{\"name\":\"n1\",\"labels\":{\"instance\":"
                "\"spot\"},\"allocatableResources\":{\"cpu\":\"8\",\"memory\":\"32Gi\"},"
                "\"allocatedResourceRequests\":{\"cpu\":\"1\"}}]}}");
    /* c2 has no matching node: never chosen */
    put(f->cms, "{\"metadata\":{\"name\":\"c2\"},\"status\":{\"lastUpdated\":"
                "\"2026-11-22T09:59:50Z\",\"nodes\":[{\"name\":\"m1\",\"labels\":{\"instance\":"
                "\"h100\"},\"allocatableResources\":{\"cpu\":\"64\"}}]}}");
    put(f->wls, WL);
    put(f->jobs, JOB);
    new_wlc(f, false, NULL, NULL);
    *state = f;
    return 0;
}

static void new_wlc(struct fx *f, bool ssa, struct evrec *ev, kind_fn kind)
{
    struct wlc_config cfg = {
        .loop = f->loop,
        .src = {.workloads = f->wls,
                .admission_checks = f->acs,
                .flavors = f->flavors,
                .cluster_metrics = f->cms,
                .jobs = jobs_of,
                .kind = kind,
                .copies = copies_of,
                .worker_names = worker_names,
                .known = known,
                .synced = synced,
                .ud = f},
        .ops = {.hub = f->hub,
                .worker = worker_of,
                .ud = f,
                .server_side_apply = ssa,
                .events = ev,
                .job_meta_via_status = f->meta_status},
        .opts = {.direct = true, .origin = "hub-a"},
        .now_ms = fake_now,
        .now_ud = f,
        .metrics = f->reg,
        .lg = f->lg,
    };
    assert_int_equal(wlc_new(&cfg, &f->c, NULL), 0);
}

static int teardown(void **state)
{
    struct fx *f = *state;
    kube_client_free(f->hub);
    kube_client_free(f->w);
    wlc_free(f->c);
    metrics_registry_free(f->reg);
    fakesrv_stop(f->hub_srv);
    fakesrv_stop(f->w_srv);
    store_free(f->wls);
    store_free(f->acs);
    store_free(f->flavors);
    store_free(f->cms);
    store_free(f->jobs);
    store_free(f->copies_c1);
    json_decref(f->workers);
    ev_loop_destroy(f->loop);
    free(f);
    return 0;
}

static void on_poll(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct fx *f = t->data;
    if (fakesrv_nreq(f->hub_srv) >= f->want_hub && fakesrv_nreq(f->w_srv) >= f->want_w &&
        kube_client_pending(f->hub) == 0 && kube_client_pending(f->w) == 0)
        ev_break(loop, EVBREAK_ALL);
}

static void on_guard(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until `poll` (every `every` s, data f) breaks it, 10 s at most. */
static void run_polled(struct fx *f, void (*poll_cb)(struct ev_loop *, ev_timer *, int),
                       double every)
{
    ev_timer poll, guard;
    ev_timer_init(&poll, poll_cb, every, every);
    poll.data = f;
    ev_timer_init(&guard, on_guard, 10.0, 0.);
    ev_timer_start(f->loop, &poll);
    ev_timer_start(f->loop, &guard);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &poll);
    ev_timer_stop(f->loop, &guard);
}

/* Run the loop until the servers saw the wanted request counts (10 s guard). */
static void run_until(struct fx *f, size_t hub, size_t w)
{
    f->want_hub = hub;
    f->want_w = w;
    run_polled(f, on_poll, 0.01);
    assert_true(fakesrv_nreq(f->hub_srv) >= hub);
    assert_true(fakesrv_nreq(f->w_srv) >= w);
}

static json_t *req_body(struct fakesrv *s, size_t i, const char *method, const char *path)
{
    struct fakesrv_req *r = fakesrv_req_get(s, i);
    assert_non_null(r);
    assert_string_equal(r->method, method);
    assert_string_equal(r->path, path);
    json_t *b = J(r->body);
    fakesrv_req_free(r);
    return b;
}

/* The worker copy finished: all 3 pods succeeded, Complete at 09:59:30. */
static void set_copy_complete(json_t *cp)
{
    json_object_set_new(cp, "status",
                        J("{\"succeeded\":3,\"startTime\":\"T1\",\"completionTime\":"
                          "\"T2\",\"conditions\":[{\"type\":\"Complete\","
                          "\"status\":\"True\",\"lastTransitionTime\":"
                          "\"2026-11-22T09:59:30Z\"}]}"));
}

/* The first pass: the placement (job patch *jp, workload status patch *wp, new references);
 * with `copy`, the copy it makes once the job patch went through (the worker's first
 * request), else c1's client is away meanwhile, as for a worker reconnecting, and the copy
 * is left to the next pass (state 6). */
static void place_run(struct fx *f, json_t **jp, json_t **wp, bool copy)
{
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    if (copy)
        fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201,
                          "{}");
    f->w_down = !copy;
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 2, copy ? 1 : 0);
    if (!copy)
        tloop_run_for(f->loop, 0.02); /* the pass's end */
    f->w_down = false;
    *jp = *wp = NULL;
    for (size_t i = 0; i < 2; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        if (strcmp(r->path, JOB_PATH) == 0)
            *jp = J(r->body);
        else
            *wp = J(r->body);
        fakesrv_req_free(r);
    }
    assert_non_null(*jp);
    assert_non_null(*wp);
    assert_int_equal(fakesrv_nreq(f->w_srv), copy ? 1 : 0);
}

static void place_once(struct fx *f, json_t **jp, json_t **wp)
{
    place_run(f, jp, wp, true);
}

static void place_unchained(struct fx *f, json_t **jp, json_t **wp)
{
    place_run(f, jp, wp, false);
}

static uint64_t reconciles(struct fx *f)
{
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    return st.reconciles;
}

static void test_place_then_copy(void **state)
{
    struct fx *f = *state;
    json_t *jp, *wp;
    place_once(f, &jp, &wp);
    assert_string_equal(jx_str(jp, "metadata.labels.kubestellar\\.io/cluster", ""), "c1");
    assert_string_equal(jx_str(jp, "metadata.resourceVersion", ""), "5");
    /* the built-in syncer: the flavor's keys are recorded, and go into the copy only */
    assert_null(jx_get(jp, "spec"));
    assert_non_null(jx_annotation(jp, XF_ANN_INJECTED));
    assert_string_equal(jx_str(wp, "status.admissionChecks[0].state", ""), "Pending");
    assert_non_null(strstr(jx_str(wp, "status.admissionChecks[0].message", ""), "c1"));
    assert_string_equal(jx_str(wp, "status.conditions[1].type", ""), "ClusterAssigned");
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.placements, 1);
    assert_int_equal(st.reservations, 1);
    assert_int_equal(st.failures, 0);

    /* the same pass made the copy on c1 once the placement had gone through */
    json_t *cp = req_body(f->w_srv, 0, "POST", "/apis/batch/v1/namespaces/default/jobs");
    assert_string_equal(jx_label(cp, XF_LABEL_ORIGIN), "hub-a");
    assert_string_equal(jx_label(cp, XF_LABEL_ORIGIN_UID), "job-uid");
    assert_null(jx_get(cp, "spec.suspend"));
    assert_string_equal(jx_str(cp, "spec.template.spec.nodeSelector.instance", ""), "spot");
    assert_metric(f, "kueue_ks_workloads_placed_total{cluster=\"c1\"} 1");
    /* its writes' own events not seen yet: a dispatch under way, nothing queued */
    assert_int_equal(st.queued, 0);
    assert_true(wlc_placing(f->c));

    /* the copy's ADDED, as made: no pass (nothing would change) */
    json_t *seen = json_deep_copy(cp);
    jx_set_new(seen, "metadata.resourceVersion", json_string("20"), NULL);
    jx_set_new(seen, "metadata.uid", json_string("copy-uid"), NULL);
    store_upsert(f->copies_c1, seen, NULL, NULL, NULL);
    wlc_on_copy(f->c, seen, "c1", XF_COPY_ADDED);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.sight_skips, 1);
    /* the informers see the writes (new resourceVersions, as a server gives them): the next
     * pass writes nothing more, and makes no second copy */
    json_t *job = store_get(f->jobs, "default/sample");
    json_t *job2 = jx_merge_apply(job, jp);
    jx_set_new(job2, "metadata.resourceVersion", json_string("6"), NULL);
    store_upsert(f->jobs, job2, NULL, NULL, NULL);
    json_t *wl = store_get(f->wls, "default/job-sample-1a2b3");
    json_t *wl2 = jx_merge_apply(wl, wp);
    jx_set_new(wl2, "metadata.resourceVersion", json_string("11"), NULL);
    store_upsert(f->wls, wl2, NULL, NULL, NULL);
    uint64_t r0 = st.reconciles;
    wlc_on_job(f->c, job2);
    for (int i = 0; i < 1000 && reconciles(f) == r0; i++)
        tloop_run_for(f->loop, 0.01); /* its pass (10 s at most) */
    tloop_run_for(f->loop, 0.05);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 2); /* nothing more on the hub */
    assert_int_equal(fakesrv_nreq(f->w_srv), 1);   /* nor on the worker */
    assert_false(wlc_placing(f->c));               /* the dispatch is over */
    json_decref(seen);

    /* the worker copy appears and finishes: the final status comes back */
    set_copy_complete(cp);
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){.method = "PATCH",
                                                    .path = JOB_PATH,
                                                    .body = "{}",
                                                    .times = 2}); /* status, annotation */
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_on_job(f->c, cp);
    run_until(f, 5, 1);
    bool saw_status = false;
    for (size_t i = 2; i < 5; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        if (strcmp(r->path, JOB_PATH "/status") == 0) {
            json_t *b = J(r->body);
            assert_string_equal(jx_str(b, "status.conditions[1].type", ""), "Complete");
            assert_string_equal(jx_str(b, "status.conditions[0].type", ""), "SuccessCriteriaMet");
            json_decref(b);
            saw_status = true;
        }
        fakesrv_req_free(r);
    }
    assert_true(saw_status);
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    assert_int_equal(fakesrv_unmatched(f->w_srv), 0);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 0);
    /* one copy created on c1, 60 s after QuotaReserved (09:59:00 -> fake now 10:00:00);
     * final status written 30 s after the copy's Complete transition (09:59:30) */
    assert_metric(f, "kueue_ks_workloads_placed_total{cluster=\"c1\"} 1");
    assert_metric(f, "kueue_ks_dispatch_latency_seconds_count 1");
    assert_metric(f, "kueue_ks_dispatch_latency_seconds_sum 60");
    assert_metric(f, "kueue_ks_dispatch_latency_seconds_bucket{le=\"30\"} 0");
    assert_metric(f, "kueue_ks_dispatch_latency_seconds_bucket{le=\"60\"} 1");
    assert_metric(f, "kueue_ks_status_return_latency_seconds_count 1");
    assert_metric(f, "kueue_ks_status_return_latency_seconds_sum 30");
    assert_metric(f, "kueue_ks_workloads_rejected_total 0");
    assert_metric(f, "kueue_ks_reconcile_errors_total{controller=\"workload\"} 0");
    assert_metric(f, "kueue_ks_workqueue_depth{controller=\"workload\"} 0");
    json_decref(cp);
    json_decref(job2);
    json_decref(wl2);
    json_decref(jp);
    json_decref(wp);
}

/* Server-side apply of the Workload status until the hub answers 415: then
 * the same pass is retried at once as a merge patch, without counting an
 * error, and merge patches are used from then on. */
static void test_apply_falls_back_to_merge(void **state)
{
    struct fx *f = *state;
    wlc_free(f->c);
    metrics_registry_free(f->reg);
    f->reg = metrics_registry_new();
    new_wlc(f, true, NULL, NULL);
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "PATCH", .path = JOB_PATH, .body = "{}", .times = 2});
    fakesrv_push_status(f->hub_srv, "PATCH", WL_STATUS, 415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    /* the job patch went through: the first pass made the copy, the retry does not again */
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 4, 1);
    int applies = 0, merges = 0;
    for (size_t i = 0; i < 4; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        if (strcmp(r->path, WL_STATUS) == 0) {
            const char *ct = fakesrv_req_header(r, "content-type");
            json_t *b = J(r->body);
            if (strcmp(ct, "application/apply-patch+yaml") == 0) {
                assert_int_equal(merges, 0); /* the apply came first */
                applies++;
                assert_non_null(strstr(r->query, "fieldManager=kueue-ks"));
                assert_string_equal(jx_str(b, "kind", ""), "Workload");
                assert_int_equal(json_array_size(jx_arr(b, "status.admissionChecks")), 1);
                assert_string_equal(jx_str(b, "status.admissionChecks[0].name", ""), "ks");
                assert_string_equal(jx_str(b, "status.conditions[0].type", ""), "ClusterAssigned");
                assert_null(jx_get(b, "metadata.resourceVersion"));
            } else {
                assert_string_equal(ct, "application/merge-patch+json");
                merges++;
                assert_string_equal(jx_str(b, "metadata.resourceVersion", ""), "10");
            }
            json_decref(b);
        }
        fakesrv_req_free(r);
    }
    assert_int_equal(applies, 1);
    assert_int_equal(merges, 1);
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    assert_int_equal(fakesrv_nreq(f->w_srv), 1);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 0);
    assert_metric(f, "kueue_ks_reconcile_errors_total{controller=\"workload\"} 0");
}

/* The kind callback: Job from the table; "Gadget" cannot be used (why). */
static const struct kind_def *kind_or_why(void *ud, const json_t *owner, char *why, size_t n)
{
    (void)ud;
    if (strcmp(jx_str(owner, "kind", ""), "Gadget") == 0) {
        snprintf(why, n, "kind nothere.example.com/v1 Gadget is not served by the hub");
        return NULL;
    }
    return kind_for_owner(owner);
}

static size_t count_events(struct fakesrv *s, const char *reason, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < fakesrv_nreq(s); i++) {
        struct fakesrv_req *r = fakesrv_req_get(s, i);
        if (strcmp(r->method, "POST") == 0 && strstr(r->path, "/events")) {
            json_t *b = J(r->body);
            n += strcmp(jx_str(b, "reason", ""), reason) == 0 &&
                 strcmp(jx_str(b, "involvedObject.name", ""), name) == 0 &&
                 strstr(jx_str(b, "message", ""), "Gadget is not served") != NULL;
            json_decref(b);
        }
        fakesrv_req_free(r);
    }
    return n;
}

/* A Workload whose owner kind cannot be used gets a Warning Event when it uses
 * our check, and none when it does not; nothing else is written. */
static void test_unusable_kind_event(void **state)
{
    struct fx *f = *state;
    struct evrec *ev = NULL;
    struct evrec_config ec = {.component = "kueue-ks"};
    assert_int_equal(evrec_new(f->hub, &ec, NULL, &ev, NULL), 0);
    wlc_free(f->c);
    metrics_registry_free(f->reg);
    f->reg = metrics_registry_new();
    new_wlc(f, false, ev, kind_or_why);
    put(f->wls, "{\"apiVersion\":\"kueue.x-k8s.io/"
                "v1beta1\",\"kind\":\"Workload\",\"metadata\":{\"name\":\"gadget-g1\","
                "\"namespace\":\"default\",\"uid\":\"g-wl\","
                "\"ownerReferences\":[{\"apiVersion\":\"nothere.example.com/v1\",\"kind\":"
                "\"Gadget\",\"name\":\"g1\",\"uid\":\"g1-uid\",\"controller\":true}]},"
                "\"status\":{\"admissionChecks\":[{\"name\":\"ks\",\"state\":\"Pending\"}]}}");
    put(f->wls, "{\"apiVersion\":\"kueue.x-k8s.io/"
                "v1beta1\",\"kind\":\"Workload\",\"metadata\":{\"name\":\"gadget-g2\","
                "\"namespace\":\"default\",\"uid\":\"g2-wl\","
                "\"ownerReferences\":[{\"apiVersion\":\"nothere.example.com/v1\",\"kind\":"
                "\"Gadget\",\"name\":\"g2\",\"uid\":\"g2-uid\",\"controller\":true}]},"
                "\"status\":{\"admissionChecks\":[{\"name\":\"other\",\"state\":\"Pending\"}]}}");
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){.method = "POST",
                                                    .path = "/api/v1/namespaces/default/events",
                                                    .status = 201,
                                                    .body = "{}",
                                                    .times = -1});
    wlc_enqueue(f->c, "default/gadget-g2");
    wlc_enqueue(f->c, "default/gadget-g1");
    run_until(f, 1, 0);
    assert_int_equal(count_events(f->hub_srv, "UnknownJobKind", "gadget-g1"), 1);
    assert_int_equal(count_events(f->hub_srv, "UnknownJobKind", "gadget-g2"), 0);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 1); /* no other write */
    kube_client_free(f->hub); /* pending event writes complete before the recorder goes */
    f->hub = NULL;
    evrec_free(ev);
}

static void test_conflict_is_retried(void **state)
{
    struct fx *f = *state;
    fakesrv_push_status(f->hub_srv, "PATCH", JOB_PATH, 409, "Conflict", "modified");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 4, 1);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 1);
    assert_true(st.reconciles >= 2);
    assert_metric(f, "kueue_ks_reconcile_errors_total{controller=\"workload\"} 1");
    /* the refused placement made no copy; the retry's made one, once its patch went through */
    assert_int_equal(fakesrv_nreq(f->w_srv), 1);
    assert_metric(f, "kueue_ks_dispatch_latency_seconds_count 1");
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    /* the retry decided the same placement again (the reservation is the workload's own) */
    assert_int_equal(st.reservations, 1);
}

static void test_not_ours_and_unknown(void **state)
{
    struct fx *f = *state;
    /* a workload without our check, and a key that does not exist: no request */
    put(f->wls, "{\"metadata\":{\"name\":\"plain\",\"namespace\":\"default\",\"ownerReferences\":[{"
                "\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"sample\",\"uid\":"
                "\"job-uid\",\"controller\":true}]},\"status\":{\"admissionChecks\":[{\"name\":"
                "\"other\",\"state\":\"Pending\"}]}}");
    /* before the stores synced: no decision, requeued */
    f->unsynced = true;
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    ev_timer g0;
    ev_timer_init(&g0, on_guard, 0.1, 0.);
    ev_timer_start(f->loop, &g0);
    ev_run(f->loop, 0);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 0);
    struct wlc_stats s0;
    wlc_get_stats(f->c, &s0);
    assert_int_equal(s0.reconciles, 1);
    f->unsynced = false;
    wlc_enqueue(f->c, "default/plain");
    wlc_enqueue(f->c, "default/missing");
    ev_timer guard;
    ev_timer_init(&guard, on_guard, 0.2, 0.);
    ev_timer_start(f->loop, &guard);
    ev_run(f->loop, 0);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.reconciles, 3);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 0);
    struct err e;
    struct wlc *c = NULL;
    struct wlc_config bad = {0};
    assert_int_equal(wlc_new(&bad, &c, &e), -EINVAL);
    assert_null(c);
}

static void test_admission_checks(void **state)
{
    struct fx *f = *state;
    const char *path = "/apis/kueue.x-k8s.io/v1beta1/admissionchecks/ks/status";
    fakesrv_push_json(f->hub_srv, "PATCH", path, NULL, 200, "{}");
    /* c1 is usable (fresh metrics, connected); only our check is written */
    assert_int_equal(wlc_sync_admission_checks(f->c), 1);
    assert_metric(f, "kueue_ks_worker_up{cluster=\"c1\"} 1");
    assert_metric(f, "kueue_ks_worker_up{cluster=\"c2\"} 0");
    assert_metric(f, "kueue_ks_workloads_placed_total{cluster=\"c2\"} 0");
    assert_metric(f, "kueue_ks_workloads_evicted_total{cluster=\"c1\"} 0");
    run_until(f, 1, 0);
    json_t *b = req_body(f->hub_srv, 0, "PATCH", path);
    assert_string_equal(jx_str(b, "status.conditions[0].type", ""), "Active");
    assert_string_equal(jx_str(b, "status.conditions[0].status", ""), "True");
    assert_non_null(strstr(jx_str(b, "status.conditions[0].message", ""), "of 2"));
    /* the informer sees it: nothing more to write */
    json_t *ac = store_get(f->acs, "ks");
    json_t *ac2 = jx_merge_apply(ac, b);
    store_upsert(f->acs, ac2, NULL, NULL, NULL);
    json_decref(ac2);
    json_decref(b);
    assert_int_equal(wlc_sync_admission_checks(f->c), 0);
    /* c1 disconnects: no usable worker left (c2 has no copies store) -> False */
    f->c1_connected = false;
    fakesrv_push_json(f->hub_srv, "PATCH", path, NULL, 200, "{}");
    assert_int_equal(wlc_sync_admission_checks(f->c), 1);
    run_until(f, 2, 0);
    assert_metric(f, "kueue_ks_worker_up{cluster=\"c1\"} 0");
    b = req_body(f->hub_srv, 1, "PATCH", path);
    assert_string_equal(jx_str(b, "status.conditions[0].status", ""), "False");
    assert_string_equal(jx_str(b, "status.conditions[0].reason", ""), "NoUsableClusters");
    json_decref(b);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.ac_writes, 2);
    assert_int_equal(st.ac_failures, 0);
}

#define AC_STATUS "/apis/kueue.x-k8s.io/v1beta1/admissionchecks/ks/status"

/* The i-th PATCH of the AdmissionCheck's status sets Active to `want`. */
static void assert_ac_active(struct fx *f, size_t i, const char *want)
{
    json_t *b = req_body(f->hub_srv, i, "PATCH", AC_STATUS);
    assert_string_equal(jx_str(b, "status.conditions[0].status", ""), want);
    json_decref(b);
}

/* At a start no worker is usable until its first lists are in: while one is not known yet
 * (src.known) the check is left Active, for a minute at most; once it is known, or after
 * that minute, no usable worker is Active=False. */
static void test_admission_check_waits_for_unknown(void **state)
{
    struct fx *f = *state;
    f->c1_connected = false;
    f->c1_unknown = true;
    f->now_ms = NOW_MS + 59000; /* the controller was made at NOW_MS */
    assert_int_equal(wlc_sync_admission_checks(f->c), 0);
    /* still not known a minute later: down; the grace's own timer (1 s from the held sync)
     * writes it, no other sync comes */
    f->now_ms = NOW_MS + 60000;
    fakesrv_push_json(f->hub_srv, "PATCH", AC_STATUS, NULL, 200, "{}");
    run_until(f, 1, 0);
    assert_ac_active(f, 0, "False");
}

/* Known within the minute and not usable: False at once. */
static void test_admission_check_known_down(void **state)
{
    struct fx *f = *state;
    f->c1_connected = false;
    f->c1_unknown = true;
    assert_int_equal(wlc_sync_admission_checks(f->c), 0);
    f->c1_unknown = false;
    fakesrv_push_json(f->hub_srv, "PATCH", AC_STATUS, NULL, 200, "{}");
    assert_int_equal(wlc_sync_admission_checks(f->c), 1);
    run_until(f, 1, 0);
    assert_ac_active(f, 0, "False");
}

/* One AdmissionCheck status write at a time; a conflict (our store was
 * behind) is retried about a second later without waiting for an event. */
static void test_admission_check_conflict(void **state)
{
    struct fx *f = *state;
    const char *path = "/apis/kueue.x-k8s.io/v1beta1/admissionchecks/ks/status";
    fakesrv_push_status(f->hub_srv, "PATCH", path, 409, "Conflict", "the object has been modified");
    fakesrv_push_json(f->hub_srv, "PATCH", path, NULL, 200, "{}");
    assert_int_equal(wlc_sync_admission_checks(f->c), 1);
    assert_int_equal(wlc_sync_admission_checks(f->c), 0); /* the first is still out */
    run_until(f, 2, 0);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.ac_failures, 1);
    assert_int_equal(st.ac_writes, 1);
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    json_t *b = req_body(f->hub_srv, 1, "PATCH", path);
    assert_string_equal(jx_str(b, "status.conditions[0].status", ""), "True");
    json_decref(b);
}

static void test_rejected_counted(void **state)
{
    struct fx *f = *state;
    /* 100 CPUs per pod: no cluster has a node that big, ever -> Rejected */
    json_t *wl = J(WL);
    json_object_set_new(
        jx_obj(json_array_get(jx_arr(wl, "spec.podSets[0].template.spec.containers"), 0),
               "resources.requests"),
        "cpu", json_string("100"));
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 1, 0);
    json_t *b = req_body(f->hub_srv, 0, "PATCH", WL_STATUS);
    assert_string_equal(jx_str(b, "status.admissionChecks[0].state", ""), "Rejected");
    json_decref(b);
    assert_metric(f, "kueue_ks_workloads_rejected_total 1");
    assert_metric(f, "kueue_ks_dispatch_latency_seconds_count 0");
    /* a second controller on the same registry: the names are taken */
    struct wlc_config cfg = {
        .loop = f->loop,
        .src = {.workloads = f->wls,
                .admission_checks = f->acs,
                .flavors = f->flavors,
                .cluster_metrics = f->cms,
                .jobs = jobs_of},
        .ops = {.hub = f->hub},
        .metrics = f->reg,
    };
    struct wlc *c2 = NULL;
    struct err e = {0};
    assert_int_equal(wlc_new(&cfg, &c2, &e), -EEXIST);
    assert_null(c2);
    assert_non_null(strstr(e.msg, "kueue_ks_workloads_placed_total"));
}

/* One pass over the workload with pods of `cpu` cpus; the check entry
 * written (new reference). */
static json_t *check_after_pass(struct fx *f, const char *cpu)
{
    json_t *wl = J(WL);
    json_object_set_new(
        jx_obj(json_array_get(jx_arr(wl, "spec.podSets[0].template.spec.containers"), 0),
               "resources.requests"),
        "cpu", json_string(cpu));
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 1, 0);
    json_t *b = req_body(f->hub_srv, 0, "PATCH", WL_STATUS);
    json_t *chk = json_incref(json_array_get(jx_arr(b, "status.admissionChecks"), 0));
    json_decref(b);
    return chk;
}

/* The job's kueue-ks.io/excluded-clusters (point 4's memory, read from the hub
 * job: it holds across restarts) keeps c1 from placement while in force: the
 * job waits (not Rejected: c1 is known capacity) and the message says until
 * when; once the time has passed c1 is a candidate again. */
static void test_excluded_cluster_skipped_until_expiry(void **state)
{
    struct fx *f = *state;
    json_t *job = J(JOB);
    jx_setv_new(job, json_string("c1=2026-11-22T10:05:00Z"), "metadata", "annotations",
                "kueue-ks.io/excluded-clusters");
    store_upsert(f->jobs, job, NULL, NULL, NULL);
    json_t *chk = check_after_pass(f, "1");
    assert_string_equal(jx_str(chk, "state", ""), "Pending");
    const char *m = jx_str(chk, "message", "");
    if (!strstr(m, "no cluster fits now: ") ||
        !strstr(m, "c1: excluded until 2026-11-22T10:05:00Z: its pods could not be scheduled "
                   "there (kueue-ks.io/excluded-clusters)"))
        fail_msg("message: %s", m);
    json_decref(chk);
    assert_metric(f, "kueue_ks_workloads_rejected_total 0");
    json_decref(job);
}

static void on_poll_reconciles(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct fx *f = t->data;
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    if (st.reconciles >= f->want_reconciles && kube_client_pending(f->hub) == 0)
        ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until the controller has made `n` passes in all (10 s guard). */
static void run_reconciles(struct fx *f, uint64_t n)
{
    f->want_reconciles = n;
    run_polled(f, on_poll_reconciles, 0.01);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_true(st.reconciles >= n);
}

/* Issue 15, point 3: a job whose cluster selector admits only c1, with c1
 * excluded until 10:05 (after an unschedulable copy), while c2 could hold it.
 * It waits: check Pending naming the exclusion and its end, nothing placed;
 * passes over the same state write nothing more (no write loop, no
 * placement loop); at 10:05:01 it is placed on c1. */
static void test_only_excluded_cluster_waits_then_placed(void **state)
{
    struct fx *f = *state;
    put(f->cms, "{\"metadata\":{\"name\":\"c2\"},\"status\":{\"lastUpdated\":"
                "\"2026-11-22T09:59:50Z\",\"nodes\":[{\"name\":\"m1\",\"labels\":{\"instance\":"
                "\"spot\"},\"allocatableResources\":{\"cpu\":\"64\"}}]}}");
    json_t *job = J(JOB);
    jx_setv_new(job, json_string("c1=2026-11-22T10:05:00Z"), "metadata", "annotations",
                "kueue-ks.io/excluded-clusters");
    jx_setv_new(job, json_string("name=c1"), "metadata", "annotations",
                "kueue-ks.io/cluster-selector");
    store_upsert(f->jobs, job, NULL, NULL, NULL);
    json_decref(job);
    json_t *chk = check_after_pass(f, "1");
    assert_string_equal(jx_str(chk, "state", ""), "Pending");
    const char *m = jx_str(chk, "message", "");
    if (!strstr(m, "c1: excluded until 2026-11-22T10:05:00Z: its pods could not be scheduled") ||
        !strstr(m, "cluster selector \"name=c1\" from the job: 1 of 2 clusters"))
        fail_msg("message: %s", m);
    /* the informer shows the written entry; more passes over the same state */
    json_t *wl = J(WL);
    json_array_set(jx_arr(wl, "status.admissionChecks"), 0, chk);
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
    json_decref(chk);
    size_t writes = fakesrv_nreq(f->hub_srv);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    for (uint64_t i = 1; i <= 3; i++) {
        wlc_enqueue(f->c, "default/job-sample-1a2b3");
        run_reconciles(f, st.reconciles + i);
    }
    assert_int_equal(fakesrv_nreq(f->hub_srv), writes);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.placements, 0);
    /* the exclusion has ended: placed on c1, the only cluster it selects
     * (metrics refreshed, as the agents' heartbeats would) */
    f->now_ms = NOW_MS + 301000;
    put(f->cms, "{\"metadata\":{\"name\":\"c1\"},\"status\":{\"lastUpdated\":"
                "\"2026-11-22T10:05:00Z\",\"nodes\":[{\"name\":\"n1\",\"labels\":{\"instance\":"
                "\"spot\"},\"allocatableResources\":{\"cpu\":\"8\",\"memory\":\"32Gi\"},"
                "\"allocatedResourceRequests\":{\"cpu\":\"1\"}}]}}");
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, writes + 2, 0);
    bool placed = false;
    for (size_t i = writes; i < fakesrv_nreq(f->hub_srv); i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        if (strcmp(r->path, JOB_PATH) == 0) {
            json_t *b = J(r->body);
            placed = strcmp(jx_str(b, "metadata.labels.kubestellar\\.io/cluster", ""), "c1") == 0;
            json_decref(b);
        }
        fakesrv_req_free(r);
    }
    assert_true(placed);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.placements, 1);
}

/* The exclusion has expired (10:00 is now): c1 is a candidate again. */
static void test_expired_exclusion_placed(void **state)
{
    struct fx *f = *state;
    json_t *job = J(JOB);
    jx_setv_new(job, json_string("c1=2026-11-22T10:00:00Z"), "metadata", "annotations",
                "kueue-ks.io/excluded-clusters");
    store_upsert(f->jobs, job, NULL, NULL, NULL);
    json_decref(job);
    json_t *jp, *wp;
    place_once(f, &jp, &wp);
    assert_string_equal(jx_str(jp, "metadata.labels.kubestellar\\.io/cluster", ""), "c1");
    json_decref(jp);
    json_decref(wp);
}

/* Right after a restart: c1 usable, c3 (big enough) registered with fresh
 * metrics but not connected yet. A job too big for c1 waits; it used to be
 * Rejected (and lost) from that incomplete view. */
static void test_not_rejected_while_a_worker_is_unusable(void **state)
{
    struct fx *f = *state;
    put(f->cms, "{\"metadata\":{\"name\":\"c3\"},\"status\":{\"lastUpdated\":"
                "\"2026-11-22T09:59:50Z\",\"nodes\":[{\"name\":\"b1\",\"labels\":{"
                "\"instance\":\"spot\"},\"allocatableResources\":{\"cpu\":\"64\"}}]}}");
    json_t *chk = check_after_pass(f, "10");
    assert_string_equal(jx_str(chk, "state", ""), "Pending");
    json_decref(chk);
    assert_metric(f, "kueue_ks_workloads_rejected_total 0");
}

/* c3's metrics are stale (its agent is down): its capacity is not known,
 * so even a job that fits no known cluster is not Rejected; the message
 * names the cluster it waits for. */
static void test_not_rejected_while_metrics_unknown(void **state)
{
    struct fx *f = *state;
    put(f->cms, "{\"metadata\":{\"name\":\"c3\"},\"status\":{\"lastUpdated\":"
                "\"2026-11-22T09:00:00Z\",\"nodes\":[]}}");
    json_t *chk = check_after_pass(f, "100");
    assert_string_equal(jx_str(chk, "state", ""), "Pending");
    assert_non_null(strstr(jx_str(chk, "message", ""), "waiting for the metrics of cluster c3"));
    json_decref(chk);
    assert_metric(f, "kueue_ks_workloads_rejected_total 0");
}

/* First start: c3's ClusterMetrics exists without status (the agent's status
 * write met a 409 and waits for its retry) while c3 is connected. It used to
 * count as a Ready cluster with 0 nodes: the job was Rejected. */
static void test_not_rejected_by_metrics_without_status(void **state)
{
    struct fx *f = *state;
    f->c3_connected = true;
    put(f->cms, "{\"metadata\":{\"name\":\"c3\"}}");
    json_t *chk = check_after_pass(f, "10");
    assert_string_equal(jx_str(chk, "state", ""), "Pending");
    assert_non_null(strstr(jx_str(chk, "message", ""), "c3"));
    json_decref(chk);
    assert_metric(f, "kueue_ks_workloads_rejected_total 0");
}

/* First start: worker c3 is registered but its ClusterMetrics object does not
 * exist yet (the agent's create met a 409 and waits 5 s for its retry). A job
 * too big for the clusters with metrics waits for c3; it used to be Rejected
 * from the ClusterMetrics alone (chaos.sh lost a 48Gi job that only the worker
 * without metrics could run, seed 417170). */
static void test_not_rejected_while_a_worker_has_no_metrics(void **state)
{
    struct fx *f = *state;
    f->workers = J("[\"c1\", \"c2\", \"c3\"]");
    json_t *chk = check_after_pass(f, "100");
    assert_string_equal(jx_str(chk, "state", ""), "Pending");
    assert_non_null(strstr(jx_str(chk, "message", ""), "c3"));
    json_decref(chk);
    assert_metric(f, "kueue_ks_workloads_rejected_total 0");
}

/* At a start, a job that fits no known cluster waits without a word for a worker not heard
 * from since then (its agent has not reported): a restart's reservations were each told "no
 * cluster fits now" (a Workload write and an Event) and placed seconds later, 3.4 hub writes
 * per dispatch on the real stack. Once the worker is known, or a minute after the start, the
 * pass decides as before. */
static void placement_waits_at_start(struct fx *f, bool known_first)
{
    f->workers = J("[\"c1\", \"c2\", \"c3\"]");
    f->c3_unknown = true;
    json_t *wl = J(WL);
    json_object_set_new(
        jx_obj(json_array_get(jx_arr(wl, "spec.podSets[0].template.spec.containers"), 0),
               "resources.requests"),
        "cpu", json_string("100"));
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    uint64_t n = st.reconciles;
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_reconciles(f, ++n);
    tloop_run_for(f->loop, 0.1);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 0);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.start_holds, 1);
    assert_int_equal(st.queued, 0);
    assert_int_equal(st.waiting, 1); /* a cluster's change queues it again */
    wlc_on_cluster(f->c, "c3");
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, 1);
    if (known_first) { /* heard from (without metrics yet): the job is told at once */
        f->c3_unknown = false;
    } else { /* still not heard from a minute after the start: told as well */
        f->now_ms = NOW_MS + 60000;
    }
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "POST", .status = 201, .body = "{}", .times = -1});
    run_until(f, 1, 0);
    json_t *b = req_body(f->hub_srv, 0, "PATCH", WL_STATUS);
    if (!strstr(jx_str(b, "status.admissionChecks[0].message", ""),
                "waiting for the metrics of cluster c3"))
        fail_msg("c3 not named: %s", jx_str(b, "status.admissionChecks[0].message", ""));
    json_decref(b);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.start_holds, 1);
}

static void test_placement_waits_for_worker_at_start(void **state)
{
    for (int known_first = 1; known_first >= 0; known_first--) {
        if (!known_first) {
            teardown(state);
            assert_int_equal(setup(state), 0);
        }
        placement_waits_at_start(*state, known_first);
    }
}

/* The job's cluster selector admits only c3, a registered worker without metrics yet: the
 * check message names c3 as what it waits for (with every cluster that reports outside the
 * selector, the fit's verdict is "no cluster is a candidate", which hid it). */
static void test_selected_worker_without_metrics_named(void **state)
{
    struct fx *f = *state;
    f->workers = J("[\"c1\", \"c2\", \"c3\"]");
    json_t *job = json_deep_copy(store_get(f->jobs, "default/sample"));
    jx_set_annotation(job, "kueue-ks.io/cluster-selector", "name=c3");
    store_upsert(f->jobs, job, NULL, NULL, NULL);
    json_decref(job);
    json_t *chk = check_after_pass(f, "1");
    assert_string_equal(jx_str(chk, "state", ""), "Pending");
    if (!strstr(jx_str(chk, "message", ""), "waiting for the metrics of cluster c3"))
        fail_msg("c3 not named: %s", jx_str(chk, "message", ""));
    json_decref(chk);
}

/* The same job with every registered worker reporting: Rejected (it fits none
 * even empty), so the rule above does not keep every job waiting. */
static void test_rejected_when_every_worker_reports(void **state)
{
    struct fx *f = *state;
    f->workers = J("[\"c1\", \"c2\"]");
    json_t *chk = check_after_pass(f, "100");
    assert_string_equal(jx_str(chk, "state", ""), "Rejected");
    json_decref(chk);
}

/* ---- hostile input from the API (issue: point 5) ------------------------------ */

static void on_idle_poll(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct fx *f = t->data;
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    if (st.reconciles >= f->want_hub && kube_client_pending(f->hub) == 0)
        ev_break(loop, EVBREAK_ALL);
}

/* Run until the controller made `passes` reconciles in all and its writes
 * are done (10 s guard). */
static void run_passes(struct fx *f, size_t passes)
{
    f->want_hub = passes;
    run_polled(f, on_idle_poll, 0.01);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_true(st.reconciles >= passes);
}

/* One pass over the workload `wl` (consumed): the writes it made (count),
 * every Workload status write merged into the store as the informer would
 * deliver it; then a second pass must write nothing (no write loop). */
static size_t hostile_workload_passes(struct fx *f, json_t *wl, char **check_msg)
{
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){.method = "PATCH", .body = "{}", .times = -1});
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){.method = "POST", .body = "{}", .times = -1});
    size_t base = fakesrv_nreq(f->hub_srv);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_passes(f, st.reconciles + 1);
    size_t all = fakesrv_nreq(f->hub_srv), writes = all - base;
    json_t *cur = json_incref(wl);
    for (size_t i = base; i < all; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        if (strcmp(r->path, WL_STATUS) == 0) {
            json_t *patch = J(r->body);
            json_object_del(jx_obj(patch, "metadata"), "resourceVersion");
            json_t *next = jx_merge_apply(cur, patch);
            json_decref(cur);
            cur = next;
            json_decref(patch);
        }
        fakesrv_req_free(r);
    }
    if (check_msg)
        *check_msg = xstrdup(
            jx_str(json_array_get(jx_arr(cur, "status.admissionChecks"), 0), "message", ""));
    jx_set_new(cur, "metadata.resourceVersion", json_string("11"), NULL);
    store_upsert(f->wls, cur, NULL, NULL, NULL);
    json_decref(cur);
    json_decref(wl);
    wlc_get_stats(f->c, &st);
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_passes(f, st.reconciles + 1);
    assert_int_equal(fakesrv_nreq(f->hub_srv), all);
    return writes;
}

/* Workloads with wrong-typed, missing, overflowing or negative fields and a
 * 1 MiB annotation: a clear check message (Rejected: it can never be read),
 * at most one status write and an Event, then nothing more. */
static void test_hostile_workloads(void **state)
{
    struct fx *f = *state;
    const char *bad[] = {
        "{\"podSets\":\"not-a-list\"}",
        "{\"podSets\":[{\"name\":\"main\",\"count\":-3,\"template\":{}}]}",
        "{\"podSets\":[{\"name\":\"main\",\"count\":9223372036854775807,\"template\":{\"spec\":"
        "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}]}",
        "{\"podSets\":[{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{"
        "\"resources\":{\"requests\":{\"cpu\":\"-1\"}}}]}}}]}",
        "{\"podSets\":[{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{"
        "\"resources\":{\"requests\":{\"cpu\":\"99999999999999999999999Ei\"}}}]}}}]}",
        "{\"podSets\":[{\"name\":7,\"count\":\"x\",\"template\":[]}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *wl = J(WL);
        json_object_set_new(wl, "spec", J(bad[i]));
        /* the admitted count overrides spec's: overflow it there too */
        json_object_set_new(json_array_get(jx_arr(wl, "status.admission.podSetAssignments"), 0),
                            "count", json_integer(i == 2 ? INT64_MAX : -3));
        if (i == 0) {
            /* 1 MiB annotation, unicode */
            size_t n = 1 << 20;
            char *big = xmalloc(n + 1);
            memset(big, 'a', n);
            memcpy(big, "\xc3\xa9\xe2\x82\xac", 5);
            big[n] = '\0';
            jx_set_new(wl, "metadata.annotations", json_pack("{s:s}", "big", big), NULL);
            free(big);
        }
        fakesrv_clear(f->hub_srv);
        char *msg = NULL;
        size_t writes = hostile_workload_passes(f, wl, &msg);
        assert_true(writes >= 1 && writes <= 3); /* status (+ Event) */
        if (!strstr(msg, "cannot read the workload") && !strstr(msg, "can ever fit") &&
            !strstr(msg, "fits it now"))
            fail_msg("case %zu: no clear message: \"%s\"", i, msg);
        free(msg);
    }
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.placements, 0);
}

/* ClusterMetrics with bad nodes (wrong types, negative and huge amounts,
 * names at maximum length, unicode) next to the good c1: the bad data is
 * skipped, c1 is still used, nothing crashes. */
static void test_hostile_cluster_metrics(void **state)
{
    struct fx *f = *state;
    char name[254];
    memset(name, 'z', 253);
    name[253] = '\0';
    char *doc = xasprintf(
        "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"lastUpdated\":\"2026-11-22T09:59:50Z\","
        "\"nodes\":[{\"name\":\"\xe2\x82\xac\",\"labels\":{\"instance\":\"spot\"},"
        "\"allocatableResources\":{\"cpu\":\"-64\"}},{\"name\":5},{\"name\":\"n-huge\","
        "\"labels\":{\"instance\":\"spot\"},\"allocatableResources\":{\"cpu\":\"1e400\","
        "\"memory\":1e300}},{\"name\":\"n-list\",\"allocatableResources\":"
        "[]},\"string-node\",null]}}",
        name);
    json_t *cm = J(doc);
    free(doc);
    store_upsert(f->cms, cm, NULL, NULL, NULL);
    json_decref(cm);
    put(f->cms, "{\"metadata\":{\"name\":\"c-wrong\"},\"status\":{\"nodes\":\"x\"}}");
    put(f->cms, "{\"metadata\":{\"name\":\"c-str\"},\"status\":\"x\"}");
    json_t *jp, *wp;
    place_once(f, &jp, &wp);
    assert_string_equal(jx_str(jp, "metadata.labels.kubestellar\\.io/cluster", ""), "c1");
    json_decref(jp);
    json_decref(wp);
}

/* A hub job whose spec is malformed (template a string, a 1 MiB
 * annotation): no crash, a bounded number of writes. */
static void test_hostile_job(void **state)
{
    struct fx *f = *state;
    json_t *job = J(JOB);
    json_object_set_new(jx_obj(job, "spec"), "template", json_string("not-a-template"));
    size_t n = 1 << 20;
    char *big = xmalloc(n + 1);
    memset(big, 'j', n);
    big[n] = '\0';
    jx_set_new(job, "metadata.annotations", json_pack("{s:s}", "big", big), NULL);
    free(big);
    store_upsert(f->jobs, job, NULL, NULL, NULL);
    json_decref(job);
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){.method = "PATCH", .body = "{}", .times = -1});
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_passes(f, 1);
    assert_true(fakesrv_nreq(f->hub_srv) <= 3);
}

/* The hub job, placed on c1 for the Workload's admission (label and placed-for). */
static void put_job_placed_on_c1(struct fx *f)
{
    json_t *job = J(JOB);
    json_object_set_new(jx_obj(job, "metadata"), "labels",
                        json_pack("{s:s}", "kubestellar.io/cluster", "c1"));
    json_object_set_new(jx_obj(job, "metadata"), "annotations",
                        json_pack("{s:s}", XF_ANN_PLACED_FOR, "wl-uid/2026-11-22T09:59:00Z"));
    store_upsert(f->jobs, job, NULL, NULL, NULL);
    json_decref(job);
}

static void test_evicted_counted(void **state)
{
    struct fx *f = *state;
    /* the job is placed on c1, the workload lost its quota reservation */
    put_job_placed_on_c1(f);
    json_t *wl = J(WL);
    json_object_set_new(jx_obj(wl, "status"), "conditions", json_array());
    json_object_del(jx_obj(wl, "status"), "admission");
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "PATCH", .path = JOB_PATH, .body = "{}", .times = 1});
    /* the check message now says why it waits (the per-cluster fit) */
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 2, 0);
    /* the two writes go out concurrently: either order */
    struct fakesrv_req *r0 = fakesrv_req_get(f->hub_srv, 0);
    assert_non_null(r0);
    bool job_first = strcmp(r0->path, JOB_PATH) == 0;
    fakesrv_req_free(r0);
    json_t *b = req_body(f->hub_srv, job_first ? 0 : 1, "PATCH", JOB_PATH);
    json_decref(b);
    b = req_body(f->hub_srv, job_first ? 1 : 0, "PATCH", WL_STATUS);
    const char *m = jx_str(json_array_get(jx_arr(b, "status.admissionChecks"), 0), "message", "");
    if (!strstr(m, "fits now: pod set main needs"))
        fail_msg("check message: %s", m);
    json_decref(b);
    assert_metric(f, "kueue_ks_workloads_evicted_total{cluster=\"c1\"} 1");
    assert_metric(f, "kueue_ks_reconcile_errors_total{controller=\"workload\"} 0");
}

/* Whether a hub request so far has `what` in its body. */
static bool hub_saw(struct fx *f, const char *what)
{
    bool saw = false;
    for (size_t i = 0; i < fakesrv_nreq(f->hub_srv) && !saw; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        saw = r->body && strstr(r->body, what);
        fakesrv_req_free(r);
    }
    return saw;
}

/* A restarted operator has not heard from c1 yet (the chaos suite's duplicate
 * runs: a healthy worker declared lost 7 s after a start with a 5 s timeout):
 * that time is no outage. The --worker-lost-timeout clock starts once the
 * process knows c1's state, and only then runs out. */
static void test_unknown_worker_not_lost(void **state)
{
    struct fx *f = *state;
    put_job_placed_on_c1(f);
    /* the placement is recorded already: a pass that finds nothing lost writes nothing */
    json_t *wl = J(WL);
    json_array_append_new(jx_arr(wl, "status.conditions"),
                          json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "ClusterAssigned",
                                    "status", "True", "lastTransitionTime", "2026-11-22T09:59:01Z",
                                    "reason", "ClusterAssigned", "message",
                                    "assigned to cluster c1"));
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
    f->c1_connected = false;
    f->c1_unknown = true;
    const char *paths[] = {JOB_PATH, WL_STATUS, "/api/v1/namespaces/default/events",
                           "/apis/events.k8s.io/v1/namespaces/default/events"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        fakesrv_push(f->hub_srv,
                     &(struct fakesrv_resp){
                         .path = paths[i], .status = i < 2 ? 200 : 201, .body = "{}", .times = -1});
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    uint64_t n = st.reconciles;
    f->now_ms = NOW_MS;
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_reconciles(f, ++n);
    /* past the timeout, still not heard from: not lost */
    f->now_ms = NOW_MS + 301000;
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_reconciles(f, ++n);
    assert_false(hub_saw(f, "lost for"));
    /* heard from (its probes failed): the clock starts now */
    f->c1_unknown = false;
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_reconciles(f, ++n);
    f->now_ms = NOW_MS + 301000 + 299000;
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_reconciles(f, ++n);
    assert_false(hub_saw(f, "lost for"));
    f->now_ms = NOW_MS + 301000 + 300000;
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_reconciles(f, ++n);
    if (!hub_saw(f, "worker cluster c1 lost for 300s"))
        fail_msg("no WorkerLost after the timeout from when c1 was known");
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 0);
}

/* On c1: our copy of the live hub job (default/sample) and an orphan (default/old). */
static void put_copy_and_orphan(struct fx *f)
{
    put(f->copies_c1, "{\"metadata\":{\"name\":\"sample\",\"namespace\":\"default\",\"labels\":{"
                      "\"app.kubernetes.io/managed-by\":\"kueue-ks\",\"kueue-ks.io/origin\":"
                      "\"hub-a\",\"kueue-ks.io/origin-uid\":\"job-uid\"}}}");
    put(f->copies_c1, "{\"metadata\":{\"name\":\"old\",\"namespace\":\"default\",\"labels\":{"
                      "\"app.kubernetes.io/managed-by\":\"kueue-ks\",\"kueue-ks.io/origin\":"
                      "\"hub-a\",\"kueue-ks.io/origin-uid\":\"deleted-uid\"}}}");
}

/* The controller's log, to see the "job deleted" line. */
struct logcap {
    char *text;
    size_t len;
    struct logger lg;
    FILE *f;
};

/* On c1: a copy of the live hub job and an orphan whose delete is answered
 * twice; a new controller logging to lc. */
static void gc_orphan_logged(struct fx *f, struct logcap *lc)
{
    put_copy_and_orphan(f);
    fakesrv_push(f->w_srv,
                 &(struct fakesrv_resp){.method = "DELETE",
                                        .path = "/apis/batch/v1/namespaces/default/jobs/old",
                                        .body = "{}",
                                        .times = 2});
    *lc = (struct logcap){0};
    lc->f = open_memstream(&lc->text, &lc->len);
    log_init(&lc->lg, lc->f, 0, LOG_FMT_TEXT);
    wlc_free(f->c);
    metrics_registry_free(f->reg);
    f->reg = metrics_registry_new();
    f->lg = &lc->lg;
    new_wlc(f, false, NULL, NULL);
}

/* The "job deleted" line of default/old on c1 was logged exactly once. */
static void gc_logged_once(struct fx *f, struct logcap *lc)
{
    fflush(lc->f); /* updates lc->text: the buffer may have moved */
    const char *want = "msg=\"job deleted on the hub: removing its copy\" job=default/old kind=Job "
                       "cluster=c1";
    const char *at = strstr(lc->text, want);
    if (!at || strstr(at + 1, want))
        fail_msg("want the line once in:\n%s", lc->text);
    fclose(lc->f);
    free(lc->text);
    f->lg = NULL;
}

static void test_gc(void **state)
{
    struct fx *f = *state;
    struct logcap lc;
    gc_orphan_logged(f, &lc);
    /* and a foreign object */
    put(f->copies_c1, "{\"metadata\":{\"name\":\"users\",\"namespace\":\"default\"}}");
    f->unsynced = true; /* hub stores not synced yet: everything would look orphaned */
    assert_int_equal(wlc_gc(f->c), 0);
    f->unsynced = false;
    assert_int_equal(wlc_gc(f->c), 1);
    run_until(f, 0, 1);
    struct fakesrv_req *r = fakesrv_req_get(f->w_srv, 0);
    assert_string_equal(r->method, "DELETE");
    assert_string_equal(r->path, "/apis/batch/v1/namespaces/default/jobs/old");
    fakesrv_req_free(r);
    /* a second pass before the worker's store shows the delete: deleted again
     * (idempotent), not said again */
    assert_int_equal(wlc_gc(f->c), 1);
    run_until(f, 0, 2);
    assert_int_equal(fakesrv_unmatched(f->w_srv), 0);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.gc_deleted, 2);
    gc_logged_once(f, &lc);
}

/* The orphan check of one key (hub job deleted, copy event): the copy at that
 * key on each cluster is deleted when no hub job has its origin uid; nothing
 * before the hub stores synced (a sweep is then wanted). */
static void test_gc_key(void **state)
{
    struct fx *f = *state;
    put_copy_and_orphan(f);
    fakesrv_push_json(f->w_srv, "DELETE", "/apis/batch/v1/namespaces/default/jobs/old", NULL, 200,
                      "{}");
    f->unsynced = true;
    assert_false(wlc_gc_pending(f->c));
    assert_int_equal(wlc_gc_key(f->c, "default/old"), 0);
    assert_true(wlc_gc_pending(f->c));
    f->unsynced = false;
    assert_int_equal(wlc_gc_key(f->c, "default/sample"), 0); /* its hub job is there */
    assert_int_equal(wlc_gc_key(f->c, "default/none"), 0);
    assert_int_equal(wlc_gc_key(f->c, "default/old"), 1);
    run_until(f, 0, 1);
    struct fakesrv_req *r = fakesrv_req_get(f->w_srv, 0);
    assert_string_equal(r->method, "DELETE");
    assert_string_equal(r->path, "/apis/batch/v1/namespaces/default/jobs/old");
    fakesrv_req_free(r);
    assert_int_equal(fakesrv_nreq(f->w_srv), 1);
    /* the sweep clears the wish for one */
    store_delete_key(f->copies_c1, "default/old", NULL);
    assert_int_equal(wlc_gc(f->c), 0);
    assert_false(wlc_gc_pending(f->c));
}

/* A copy the per-key check removed, still in the worker's store at the next
 * sweep, is deleted again but its "job deleted" line is not written again. */
static void test_gc_key_then_sweep_logs_once(void **state)
{
    struct fx *f = *state;
    struct logcap lc;
    gc_orphan_logged(f, &lc);
    assert_int_equal(wlc_gc_key(f->c, "default/old"), 1);
    assert_int_equal(wlc_gc(f->c), 1);
    run_until(f, 0, 2);
    assert_int_equal(fakesrv_unmatched(f->w_srv), 0);
    gc_logged_once(f, &lc);
}

/* A ClusterMetrics change queues only the Workloads it can affect: one whose
 * pass read every cluster (it does not fit now) on any change; one placed on
 * a cluster only when that cluster's usability changes; none otherwise. */
static void test_cluster_change_queues_affected_only(void **state)
{
    struct fx *f = *state;
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){.method = "PATCH", .body = "{}", .times = -1});
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){.method = "POST", .body = "{}", .times = -1});
    /* 3 pods x 2.5 CPU: c1 has 7 free of 8, so not now */
    json_t *chk = check_after_pass(f, "2500m");
    assert_non_null(strstr(jx_str(chk, "message", ""), "no cluster fits now"));
    json_decref(chk);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.waiting, 1);
    assert_int_equal(st.placed, 0);
    wlc_check_clusters(f->c); /* notes each cluster's usability */
    tloop_run_for(f->loop, 0.2);
    uint64_t r0 = reconciles(f);
    wlc_on_cluster(f->c, "c2");
    run_passes(f, r0 + 1);

    /* now it fits and is placed on c1 (a newer Workload: Kueue's write); the job shows the
     * placement and the copy is made */
    json_t *wl = J(WL);
    jx_set_new(wl, "metadata.resourceVersion", json_string("12"), NULL);
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
    json_t *jp = NULL;
    size_t base = fakesrv_nreq(f->hub_srv);
    r0 = reconciles(f);
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_passes(f, r0 + 1);
    for (size_t i = base; i < fakesrv_nreq(f->hub_srv) && !jp; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        if (strcmp(r->path, JOB_PATH) == 0)
            jp = J(r->body);
        fakesrv_req_free(r);
    }
    assert_non_null(jp);
    json_t *job2 = jx_merge_apply(store_get(f->jobs, "default/sample"), jp);
    jx_set_new(job2, "metadata.resourceVersion", json_string("6"), NULL);
    store_upsert(f->jobs, job2, NULL, NULL, NULL);
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    r0 = reconciles(f);
    wlc_on_job(f->c, job2);
    run_passes(f, r0 + 1);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.waiting, 0);
    assert_int_equal(st.placed, 1);
    tloop_run_for(f->loop, 0.2);

    /* another cluster changes, or c1 changes but stays usable: not queued */
    r0 = reconciles(f);
    wlc_on_cluster(f->c, "c2");
    put(f->cms, "{\"metadata\":{\"name\":\"c1\"},\"status\":{\"lastUpdated\":"
                "\"2026-11-22T09:59:55Z\",\"nodes\":[{\"name\":\"n1\",\"labels\":{\"instance\":"
                "\"spot\"},\"allocatableResources\":{\"cpu\":\"8\",\"memory\":\"32Gi\"},"
                "\"allocatedResourceRequests\":{\"cpu\":\"4\"}}]}}");
    wlc_on_cluster(f->c, "c1");
    wlc_check_clusters(f->c);
    tloop_run_for(f->loop, 0.3);
    assert_int_equal(reconciles(f), r0);

    /* c1's metrics go stale (unusable): its placed Workload is queued in order (its recovery
     * is news) */
    put(f->cms, "{\"metadata\":{\"name\":\"c1\"},\"status\":{\"lastUpdated\":"
                "\"2026-11-22T09:00:00Z\",\"nodes\":[]}}");
    wlc_on_cluster(f->c, "c1");
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, 1);
    assert_int_equal(st.queued_background, 0);
    run_passes(f, r0 + 1);
    /* fresh again (usable): queued behind the changes (at a restart every worker becomes
     * usable with thousands placed: their passes read trees of their own) */
    put(f->cms, "{\"metadata\":{\"name\":\"c1\"},\"status\":{\"lastUpdated\":"
                "\"2026-11-22T09:59:58Z\",\"nodes\":[{\"name\":\"n1\",\"labels\":{\"instance\":"
                "\"spot\"},\"allocatableResources\":{\"cpu\":\"8\",\"memory\":\"32Gi\"},"
                "\"allocatedResourceRequests\":{\"cpu\":\"4\"}}]}}");
    wlc_on_cluster(f->c, "c1");
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, 1);
    assert_int_equal(st.queued_background, 1);
    run_passes(f, r0 + 2);
    json_decref(job2);
    json_decref(jp);
}

/* A deleted ClusterMetrics' conversion is not kept (it was, for the life of
 * the process). */
static void test_cluster_delete_drops_conversion(void **state)
{
    struct fx *f = *state;
    json_t *jp, *wp;
    place_once(f, &jp, &wp); /* converts c1 and c2 */
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.parsed_clusters, 2);
    assert_int_equal(store_delete_key(f->cms, "c2", NULL), 0);
    wlc_on_cluster(f->c, "c2");
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.parsed_clusters, 1);
    wlc_on_cluster(f->c, "c1"); /* still there: kept */
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.parsed_clusters, 1);
    json_decref(jp);
    json_decref(wp);
}

/* Watch events lag write responses: the Workload informer may show our
 * status write (ClusterAssigned, check message) before the job informer shows
 * the placement patch. A pass on that view must not place the workload a
 * second time (a second resourceVersion-guarded job patch that 409s, duplicate
 * AssignedCluster Events, and in a burst another cluster: a reservation and
 * ClusterAssigned on the wrong one). It waits for the job's own event. */
static void test_no_second_placement_before_job_event(void **state)
{
    struct fx *f = *state;
    json_t *jp, *wp;
    place_unchained(f, &jp, &wp);
    /* only the Workload informer has caught up */
    json_t *wl = store_get(f->wls, "default/job-sample-1a2b3");
    json_t *wl2 = jx_merge_apply(wl, wp);
    json_object_set_new(json_object_get(wl2, "metadata"), "resourceVersion", json_string("11"));
    store_upsert(f->wls, wl2, NULL, NULL, NULL);
    wlc_on_workload(f->c, wl2);
    tloop_run_for(f->loop, 0.3);
    if (fakesrv_nreq(f->hub_srv) != 2) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, 2);
        fail_msg("a pass on the lagging job view wrote again: %s %s %s", r->method, r->path,
                 r->body);
    }
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.placements, 1);
    assert_int_equal(st.failures, 0);

    /* the job's event arrives: the copy is created, no placement again */
    json_t *job = store_get(f->jobs, "default/sample");
    json_t *job2 = jx_merge_apply(job, jp);
    json_object_set_new(json_object_get(job2, "metadata"), "resourceVersion", json_string("6"));
    store_upsert(f->jobs, job2, NULL, NULL, NULL);
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    wlc_on_job(f->c, job2);
    run_until(f, 2, 1);
    tloop_run_for(f->loop, 0.1);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 2);
    assert_int_equal(fakesrv_nreq(f->w_srv), 1);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.placements, 1);
    json_decref(job2);
    json_decref(wl2);
    json_decref(jp);
    json_decref(wp);
}

/* The stores may show a Workload or job our last pass wrote at the version
 * the write started from (watch events lag write responses). A pass on that
 * view writes nothing (it would repeat the Workload status write, a 409 on a
 * resourceVersion-guarded merge patch) and creates no copy; once both stores
 * show the writes, the copy is created and nothing more is written on the hub. */
static void test_no_repeat_before_own_events(void **state)
{
    struct fx *f = *state;
    json_t *jp, *wp;
    place_unchained(f, &jp, &wp);
    /* the job's event arrives, the Workload's not yet */
    json_t *job2 = jx_merge_apply(store_get(f->jobs, "default/sample"), jp);
    jx_set_new(job2, "metadata.resourceVersion", json_string("6"), NULL);
    store_upsert(f->jobs, job2, NULL, NULL, NULL);
    uint64_t r0 = reconciles(f);
    wlc_on_job(f->c, job2);
    run_passes(f, r0 + 1);
    tloop_run_for(f->loop, 0.2);
    if (fakesrv_nreq(f->hub_srv) != 2 || fakesrv_nreq(f->w_srv) != 0) {
        struct fakesrv_req *r = fakesrv_nreq(f->hub_srv) > 2 ? fakesrv_req_get(f->hub_srv, 2)
                                                             : fakesrv_req_get(f->w_srv, 0);
        fail_msg("a pass on the Workload view our write replaced wrote: %s %s %s", r->method,
                 r->path, r->body);
    }
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_true(st.own_holds >= 1);
    assert_int_equal(st.failures, 0);

    /* the Workload's event: the copy, and nothing on the hub */
    json_t *wl2 = jx_merge_apply(store_get(f->wls, "default/job-sample-1a2b3"), wp);
    jx_set_new(wl2, "metadata.resourceVersion", json_string("11"), NULL);
    store_upsert(f->wls, wl2, NULL, NULL, NULL);
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    wlc_enqueue(f->c, "default/unrelated");
    wlc_on_workload(f->c, wl2);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued_first, 1); /* the held dispatch goes on first */
    run_until(f, 2, 1);
    tloop_run_for(f->loop, 0.2);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 2);
    assert_int_equal(fakesrv_nreq(f->w_srv), 1);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 0);
    json_decref(wl2);
    json_decref(job2);
    json_decref(jp);
    json_decref(wp);
}

/* The hub job "other" and its Workload, reserved like the fixture's (not placed yet). */
#define OTHER_PATH "/apis/batch/v1/namespaces/default/jobs/other"
#define OTHER_WL_STATUS                                                                            \
    "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-other-4c5d6/status"

static void put_other(struct fx *f)
{
    json_t *wl = J(WL), *job = J(JOB);
    jx_set_new(wl, "metadata.name", json_string("job-other-4c5d6"), NULL);
    jx_set_new(wl, "metadata.uid", json_string("other-wl-uid"), NULL);
    jx_set_new(wl, "metadata.ownerReferences[0].name", json_string("other"), NULL);
    jx_set_new(wl, "metadata.ownerReferences[0].uid", json_string("other-uid"), NULL);
    jx_set_new(job, "metadata.name", json_string("other"), NULL);
    jx_set_new(job, "metadata.uid", json_string("other-uid"), NULL);
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    store_upsert(f->jobs, job, NULL, NULL, NULL);
    json_decref(wl);
    json_decref(job);
}

/* The informers deliver a pass's writes: `patch` merged into `key` of `s` at resourceVersion rv. */
static json_t *deliver(struct store *s, const char *key, const json_t *patch, const char *rv)
{
    json_t *o = jx_merge_apply(store_get(s, key), patch);
    jx_set_new(o, "metadata.resourceVersion", json_string(rv), NULL);
    store_upsert(s, o, NULL, NULL, NULL);
    return o;
}

/* The body of the last hub request, which must be `method path`. */
static json_t *last_hub_body(struct fx *f, const char *method, const char *path)
{
    return req_body(f->hub_srv, fakesrv_nreq(f->hub_srv) - 1, method, path);
}

/* "sample" placed on c1 (its writes *jp, *wp), the informers showing them (job2, wl2), its
 * copy made on c1 (cp, the body posted): new references, one_placed_free. */
struct one_placed {
    json_t *jp, *wp, *job2, *wl2, *cp;
};

static void one_placed(struct fx *f, struct one_placed *o)
{
    place_unchained(f, &o->jp, &o->wp);
    o->job2 = deliver(f->jobs, "default/sample", o->jp, "6");
    o->wl2 = deliver(f->wls, "default/job-sample-1a2b3", o->wp, "11");
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    wlc_on_job(f->c, o->job2);
    run_until(f, 2, 1);
    o->cp = req_body(f->w_srv, 0, "POST", "/apis/batch/v1/namespaces/default/jobs");
}

static void one_placed_free(struct one_placed *o)
{
    json_t *v[] = {o->jp, o->wp, o->job2, o->wl2, o->cp};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        json_decref(v[i]);
}

/* What two placements wrote and saw (new references; two_placed_free). */
struct two_placed {
    json_t *jp, *wp, *job2, *wl2, *cp, *ojp, *owp;
};

/* "sample" placed on c1 and its copy made; then "other" placed: being dispatched (its
 * events not delivered yet). */
static void two_placed(struct fx *f, struct two_placed *t)
{
    struct one_placed o;
    one_placed(f, &o);
    t->jp = o.jp;
    t->wp = o.wp;
    t->job2 = o.job2;
    t->wl2 = o.wl2;
    t->cp = o.cp;
    put_other(f);
    fakesrv_push_json(f->hub_srv, "PATCH", OTHER_PATH, NULL, 200, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", OTHER_WL_STATUS, NULL, 200, "{}");
    f->w_down = true; /* other's copy is left to its next pass: its dispatch under way */
    wlc_enqueue(f->c, "default/job-other-4c5d6");
    run_until(f, 4, 1);
    tloop_run_for(f->loop, 0.02);
    f->w_down = false;
    t->ojp = t->owp = NULL;
    for (size_t i = 2; i < 4; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        *(strcmp(r->path, OTHER_PATH) == 0 ? &t->ojp : &t->owp) = J(r->body);
        fakesrv_req_free(r);
    }
    assert_non_null(t->ojp);
    assert_non_null(t->owp);
}

/* The sample's check message set (as another writer's version) to an earlier pass's error:
 * a running copy replaces it with "running on cluster c1" (a Workload write), where the
 * placement's message would stay. */
static void sample_message_error(struct fx *f)
{
    json_t *wl = json_deep_copy(store_get(f->wls, "default/job-sample-1a2b3"));
    json_t *e = json_array_get(jx_arr(wl, "status.admissionChecks"), 0);
    assert_non_null(e);
    json_object_set_new(e, "message", json_string("cannot copy to cluster c1: refused"));
    jx_set_new(wl, "metadata.resourceVersion", json_string("20"), NULL);
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
}

static void two_placed_free(struct two_placed *t)
{
    json_t *v[] = {t->jp, t->wp, t->job2, t->wl2, t->cp, t->ojp, t->owp};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        json_decref(v[i]);
}

/* The copy a pass made is not in the worker's store yet (its watch lags the create's answer)
 * when another change of the hub job queues the Workload: that pass makes no second copy (a
 * second POST, 409 and GET; a second Dispatched Event; the placement counted twice, as the
 * metrics e2e caught on a busy machine). A copy the store never shows is made again after
 * 10 s; a create that finds our copy there counts no second placement. */
static void test_no_second_copy_before_copy_event(void **state)
{
    struct fx *f = *state;
    struct one_placed o;
    one_placed(f, &o);
    assert_metric(f, "kueue_ks_workloads_placed_total{cluster=\"c1\"} 1");
    json_t *lab = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "team", "a");
    json_t *job3 = deliver(f->jobs, "default/sample", lab, "7"); /* another writer's change */
    uint64_t r0 = reconciles(f);
    wlc_on_job(f->c, job3);
    run_passes(f, r0 + 1);
    tloop_run_for(f->loop, 0.2);
    if (fakesrv_nreq(f->w_srv) != 1 || fakesrv_nreq(f->hub_srv) != 2) {
        struct fakesrv_req *r = fakesrv_nreq(f->w_srv) > 1 ? fakesrv_req_get(f->w_srv, 1)
                                                           : fakesrv_req_get(f->hub_srv, 2);
        fail_msg("a pass before the copy's event wrote: %s %s", r->method, r->path);
    }
    assert_metric(f, "kueue_ks_workloads_placed_total{cluster=\"c1\"} 1");
    assert_metric(f, "kueue_ks_dispatch_latency_seconds_count 1");

    /* 10 s on, the store still without it: made again; the create finds ours there */
    f->now_ms = NOW_MS + 11000;
    fakesrv_push_status(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", 409,
                        "AlreadyExists", "jobs.batch \"sample\" already exists");
    char *ours = json_dumps(o.cp, JSON_COMPACT);
    fakesrv_push_json(f->w_srv, "GET", "/apis/batch/v1/namespaces/default/jobs/sample", NULL, 200,
                      ours);
    free(ours);
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 2, 3);
    tloop_run_for(f->loop, 0.2);
    assert_int_equal(fakesrv_nreq(f->w_srv), 3);
    assert_int_equal(fakesrv_unmatched(f->w_srv), 0);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 0);
    assert_metric(f, "kueue_ks_workloads_placed_total{cluster=\"c1\"} 1");
    assert_metric(f, "kueue_ks_dispatch_latency_seconds_count 1");
    json_decref(job3);
    json_decref(lab);
    one_placed_free(&o);
}

/* A placement written (place_once) and seen by the stores: new references, placed_seen_free. */
struct placed_seen {
    json_t *jp, *wp, *job2, *wl2;
};

static void placed_seen(struct fx *f, struct placed_seen *p)
{
    place_unchained(f, &p->jp, &p->wp);
    p->job2 = deliver(f->jobs, "default/sample", p->jp, "6");
    p->wl2 = deliver(f->wls, "default/job-sample-1a2b3", p->wp, "11");
}

static void placed_seen_free(struct placed_seen *p)
{
    json_t *v[] = {p->jp, p->wp, p->job2, p->wl2};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        json_decref(v[i]);
}

/* The copy `cp` (the body posted) as its worker's watch adds it: in the store, told as added. */
static json_t *copy_added(struct fx *f, const json_t *cp)
{
    json_t *c = json_deep_copy(cp);
    jx_set_new(c, "metadata.resourceVersion", json_string("20"), NULL);
    jx_set_new(c, "metadata.uid", json_string("copy-uid"), NULL);
    store_upsert(f->copies_c1, c, NULL, NULL, NULL);
    wlc_on_copy(f->c, c, "c1", XF_COPY_ADDED);
    return c;
}

static uint64_t sight_skips(struct fx *f)
{
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    return st.sight_skips;
}

/* The copy a pass made, seen as made (its watch's ADDED, no status), queues no pass: one would
 * decide nothing (the placement's message and zero counts stand), as a pass run anyway shows.
 * Its first status change is a pass, which returns it. */
static void test_new_copy_sight_no_pass(void **state)
{
    struct fx *f = *state;
    struct one_placed o;
    one_placed(f, &o);
    tloop_run_for(f->loop, 0.05);
    uint64_t r0 = reconciles(f);
    size_t hub0 = fakesrv_nreq(f->hub_srv), w0 = fakesrv_nreq(f->w_srv);
    json_t *cp = copy_added(f, o.cp);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, 0);
    assert_int_equal(st.sight_skips, 1);
    tloop_run_for(f->loop, 0.1);
    assert_int_equal(reconciles(f), r0);
    /* the pass it saved: nothing to write */
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_reconciles(f, r0 + 1);
    tloop_run_for(f->loop, 0.1);
    assert_int_equal(fakesrv_nreq(f->hub_srv), hub0);
    assert_int_equal(fakesrv_nreq(f->w_srv), w0);
    /* the pods start: a pass, the counts returned to the hub job */
    json_object_set_new(cp, "status", J("{\"active\":1}"));
    jx_set_new(cp, "metadata.resourceVersion", json_string("21"), NULL);
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    wlc_on_copy(f->c, cp, "c1", XF_COPY_STATUS);
    run_until(f, hub0 + 1, w0);
    json_t *rel = last_hub_body(f, "PATCH", JOB_PATH);
    assert_non_null(strstr(jx_annotation(rel, XF_ANN_REMOTE_STATUS), "\"active\":1"));
    assert_int_equal(sight_skips(f), 1);
    json_decref(rel);
    json_decref(cp);
    one_placed_free(&o);
}

/* The create's answer comes after the copy's ADDED (the server sends the event first): the
 * pass still out notes it, and its answer settles it: no pass when the create made it; a pass
 * when it did not (here 409: the copy was there, an earlier pass's), as the ADDED would have
 * queued. */
static void test_new_copy_sight_before_answer(void **state)
{
    for (int found = 0; found < 2; found++) {
        struct fx *f = *state;
        if (found) {
            teardown(state);
            assert_int_equal(setup(state), 0);
            f = *state;
        }
        struct placed_seen ps;
        placed_seen(f, &ps);
        fakesrv_push(f->w_srv,
                     &(struct fakesrv_resp){
                         .method = "POST",
                         .status = found ? 409 : 201,
                         .body = found ? "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
                                         "\"Failure\",\"reason\":\"AlreadyExists\",\"code\":409}"
                                       : "{}",
                         .delay_s = 1.0});
        wlc_on_job(f->c, ps.job2);
        for (int i = 0; i < 1000 && fakesrv_nreq(f->w_srv) == 0; i++)
            tloop_run_for(f->loop, 0.01); /* the create sent, not answered (1 s) */
        assert_int_equal(kube_client_pending(f->w), 1);
        uint64_t r0 = reconciles(f);
        json_t *cp = req_body(f->w_srv, 0, "POST", "/apis/batch/v1/namespaces/default/jobs");
        if (found) { /* the create's GET finds ours */
            char *ours = json_dumps(cp, JSON_COMPACT);
            fakesrv_push_json(f->w_srv, "GET", "/apis/batch/v1/namespaces/default/jobs/sample",
                              NULL, 200, ours);
            free(ours);
        }
        json_t *seen = copy_added(f, cp);
        struct wlc_stats st;
        wlc_get_stats(f->c, &st);
        assert_int_equal(st.queued, 0);
        assert_int_equal(st.sight_skips, 0); /* not yet: the answer settles it */
        run_until(f, 2, found ? 2 : 1);
        if (found)
            run_reconciles(f, r0 + 1);
        tloop_run_for(f->loop, 0.1);
        assert_int_equal(reconciles(f), r0 + (found ? 1 : 0));
        assert_int_equal(sight_skips(f), found ? 0 : 1);
        assert_int_equal(fakesrv_nreq(f->w_srv), found ? 2 : 1); /* no second create */
        assert_int_equal(fakesrv_unmatched(f->w_srv), 0);
        json_decref(seen);
        json_decref(cp);
        placed_seen_free(&ps);
    }
}

/* A pass on the new copy's sight that has something to write is made: here the check's
 * message is an earlier pass's error, which the copy's sight replaces with "running on
 * cluster c1". */
static void test_new_copy_sight_pass_when_needed(void **state)
{
    struct fx *f = *state;
    struct placed_seen ps;
    placed_seen(f, &ps);
    sample_message_error(f);
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    wlc_on_job(f->c, ps.job2);
    run_until(f, 2, 1);
    tloop_run_for(f->loop, 0.05);
    size_t hub0 = fakesrv_nreq(f->hub_srv);
    json_t *cp = req_body(f->w_srv, 0, "POST", "/apis/batch/v1/namespaces/default/jobs");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    json_t *seen = copy_added(f, cp);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, 1);
    assert_int_equal(st.sight_skips, 0);
    run_until(f, hub0 + 1, 1);
    json_t *w = last_hub_body(f, "PATCH", WL_STATUS);
    assert_string_equal(jx_str(w, "status.admissionChecks[0].message", ""),
                        "running on cluster c1");
    json_decref(w);
    json_decref(seen);
    json_decref(cp);
    placed_seen_free(&ps);
}

/* Only the copy as it was made, where and for the admission it was made, is its quiet first
 * sight: one with a status, told from another cluster or made for another admission is a
 * pass (the quiet record still there: the copy as made is skipped after them). */
static void test_new_copy_sight_other_is_pass(void **state)
{
    struct fx *f = *state;
    struct one_placed o;
    one_placed(f, &o);
    tloop_run_for(f->loop, 0.05);
    json_t *odd[3];
    for (int i = 0; i < 3; i++) {
        odd[i] = json_deep_copy(o.cp);
        jx_set_new(odd[i], "metadata.resourceVersion", json_string("20"), NULL);
    }
    json_object_set_new(odd[0], "status", J("{\"active\":1}"));
    jx_set_annotation(odd[2], XF_ANN_PLACED_FOR, "another-uid/2026-11-22T09:00:00Z");
    const char *where[] = {"c1", "c2", "c1"};
    struct wlc_stats st;
    for (int i = 0; i < 3; i++) {
        wlc_on_copy(f->c, odd[i], where[i], XF_COPY_ADDED);
        wlc_get_stats(f->c, &st);
        assert_int_equal(st.queued, 1);
        assert_int_equal(st.sight_skips, 0);
        json_decref(odd[i]);
    }
    json_t *cp = copy_added(f, o.cp);
    assert_int_equal(sight_skips(f), 1);
    json_decref(cp);
    one_placed_free(&o);
}

/* A pass makes the copy but its Workload write fails; the retry, waiting for the copy's event
 * (copy_sent), writes only the Workload: the placement is still counted, once, by the pass
 * that sees the copy (found by a review: the retry dropped the pending count). */
static void test_placement_counted_after_held_retry(void **state)
{
    struct fx *f = *state;
    json_t *jp, *wp;
    place_unchained(f, &jp, &wp);
    json_t *job2 = deliver(f->jobs, "default/sample", jp, "6");
    json_t *wl2 = deliver(f->wls, "default/job-sample-1a2b3", wp, "11");
    /* ClusterAssigned lost (another writer's version): the dispatch pass writes it too */
    json_t *wl = json_deep_copy(store_get(f->wls, "default/job-sample-1a2b3"));
    json_t *cs = jx_arr(wl, "status.conditions");
    for (size_t i = 0; i < json_array_size(cs); i++)
        if (strcmp(jx_str(json_array_get(cs, i), "type", ""), "ClusterAssigned") == 0)
            json_array_remove(cs, i--);
    jx_set_new(wl, "metadata.resourceVersion", json_string("20"), NULL);
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    fakesrv_push_status(f->hub_srv, "PATCH", WL_STATUS, 500, "InternalError", "boom");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_on_job(f->c, job2);
    run_until(f, 4, 1); /* the create, the failed write, the retry's write */
    tloop_run_for(f->loop, 0.2);
    assert_int_equal(fakesrv_nreq(f->w_srv), 1); /* the retry made no second copy */
    assert_int_equal(fakesrv_nreq(f->hub_srv), 4);
    json_t *cp = req_body(f->w_srv, 0, "POST", "/apis/batch/v1/namespaces/default/jobs");
    jx_set_new(cp, "metadata.resourceVersion", json_string("40"), NULL);
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);   /* the copy's event now */
    json_t *wl3 = last_hub_body(f, "PATCH", WL_STATUS); /* and the retry's write, as delivered */
    json_object_del(wl3, "metadata");
    json_decref(deliver(f->wls, "default/job-sample-1a2b3", wl3, "21"));
    json_decref(wl3);
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){.method = "PATCH", .body = "{}", .times = -1});
    uint64_t r0 = reconciles(f);
    wlc_on_job(f->c, cp);
    run_passes(f, r0 + 1);
    tloop_run_for(f->loop, 0.2);
    assert_metric(f, "kueue_ks_workloads_placed_total{cluster=\"c1\"} 1");
    assert_metric(f, "kueue_ks_dispatch_latency_seconds_count 1");
    json_t *v[] = {jp, wp, job2, wl2, cp};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        json_decref(v[i]);
}

/* A placement is held as a reservation until the cluster's metrics show its pods: once the
 * copy (batch/v1 Job) has all its pods ready, metrics written 2 s later do, without waiting
 * out the 30 s settle time (the pods counted twice meanwhile: a burst could use about half of
 * a cluster). The next placement's decision drops it. */
static void test_ready_copy_ends_reservation(void **state)
{
    struct fx *f = *state;
    struct one_placed o;
    one_placed(f, &o);
    json_t *cp = o.cp;
    /* every hub write from here on is answered */
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "PATCH", .path = "/apis/", .body = "{}", .times = -1});
    json_object_set_new(cp, "status", J("{\"active\":3,\"ready\":3,\"startTime\":\"T1\"}"));
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);
    uint64_t r0 = reconciles(f);
    wlc_on_job(f->c, cp);
    run_passes(f, r0 + 1);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.reservations, 1);
    /* c1's agent writes its metrics 2 s after the pods were seen ready */
    put(f->cms, "{\"metadata\":{\"name\":\"c1\"},\"status\":{\"lastUpdated\":"
                "\"2026-11-22T10:00:02Z\",\"nodes\":[{\"name\":\"n1\",\"labels\":{\"instance\":"
                "\"spot\"},\"allocatableResources\":{\"cpu\":\"8\",\"memory\":\"32Gi\"},"
                "\"allocatedResourceRequests\":{\"cpu\":\"4\"}}]}}");
    put_other(f);
    r0 = reconciles(f);
    wlc_enqueue(f->c, "default/job-other-4c5d6");
    run_passes(f, r0 + 1);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.placements, 2);
    assert_int_equal(st.reservations, 1); /* other's; sample's went with the new metrics */
    one_placed_free(&o);
}

/* A job `name` (Workload job-<name>-4c5d6) like "other" (put_other) in the stores. */
static void put_named(struct fx *f, const char *name)
{
    json_t *wl = J(WL), *job = J(JOB);
    char *wn = xasprintf("job-%s-4c5d6", name), *wu = xasprintf("%s-wl-uid", name),
         *ju = xasprintf("%s-uid", name);
    jx_set_new(wl, "metadata.name", json_string(wn), NULL);
    jx_set_new(wl, "metadata.uid", json_string(wu), NULL);
    jx_set_new(wl, "metadata.ownerReferences[0].name", json_string(name), NULL);
    jx_set_new(wl, "metadata.ownerReferences[0].uid", json_string(ju), NULL);
    jx_set_new(job, "metadata.name", json_string(name), NULL);
    jx_set_new(job, "metadata.uid", json_string(ju), NULL);
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    store_upsert(f->jobs, job, NULL, NULL, NULL);
    json_decref(wl);
    json_decref(job);
    free(wn);
    free(wu);
    free(ju);
}

/* c1's metrics written at `lu` (RFC 3339) with `cpu` requested on its node (8 cpu) and listing
 * in countedJobs `counted` (a JSON array's members), then job `name` (3 pods of 1 cpu) to
 * place: its decision syncs c1's reservations. Returns the reservations held after it. */
static uint64_t counted_then_place(struct fx *f, const char *lu, const char *cpu,
                                   const char *counted, const char *name)
{
    char *cm = xasprintf(
        "{\"metadata\":{\"name\":\"c1\"},\"status\":{\"lastUpdated\":\"%s\",\"nodes\":[{\"name\":"
        "\"n1\",\"labels\":{\"instance\":\"spot\"},\"allocatableResources\":{\"cpu\":\"8\","
        "\"memory\":\"32Gi\"},\"allocatedResourceRequests\":{\"cpu\":\"%s\"}}],"
        "\"countedJobs\":[%s]}}",
        lu, cpu, counted);
    put(f->cms, cm);
    json_t *cmo = J(cm);
    wlc_on_metrics(f->c, cmo); /* the metrics' event */
    json_decref(cmo);
    free(cm);
    put_named(f, name);
    char *key = xasprintf("default/job-%s-4c5d6", name);
    uint64_t r0 = reconciles(f);
    wlc_enqueue(f->c, key);
    run_passes(f, r0 + 1);
    free(key);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    return st.reservations;
}

/* A placement's reservation ends with the first metrics of its cluster that list its copy (its
 * uid, learnt from the worker's store) in countedJobs with all its pods, long before the settle
 * time and without waiting for its pods to be ready: those pods are in the metrics. A partial
 * count keeps it. */
static void test_counted_copy_ends_reservation(void **state)
{
    struct fx *f = *state;
    struct one_placed o;
    one_placed(f, &o);
    json_t *cp = o.cp;
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "PATCH", .path = "/apis/", .body = "{}", .times = -1});
    /* the copy in the worker's store, its pods made, none ready */
    jx_set_new(cp, "metadata.uid", json_string("copy-uid-1"), NULL);
    jx_set_new(cp, "metadata.resourceVersion", json_string("30"), NULL);
    json_object_set_new(cp, "status", J("{\"active\":3,\"startTime\":\"T1\"}"));
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);
    uint64_t r0 = reconciles(f);
    wlc_on_job(f->c, cp);
    run_passes(f, r0 + 1);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.reservations, 1);
    /* two of its three pods counted: held, beside other's */
    assert_int_equal(counted_then_place(f, "2026-11-22T10:00:01Z", "2",
                                        "{\"uid\":\"copy-uid-1\",\"pods\":2},"
                                        "{\"uid\":\"someone-else\",\"pods\":3}",
                                        "other"),
                     2);
    /* all three, two seconds after the placement: sample's goes; other's and third's stay */
    assert_int_equal(counted_then_place(f, "2026-11-22T10:00:02Z", "2",
                                        "{\"uid\":\"copy-uid-1\",\"pods\":3}", "third"),
                     2);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.placements, 3);
    assert_int_equal(st.counted_drops, 1); /* the partial count ended none */
    one_placed_free(&o);
}

enum sighted { SIGHT_LIVE, SIGHT_DELETING, SIGHT_OLD_ADMISSION };

/* A copy on c1 seen by its watch's ADDED: the copy a pass made (SIGHT_LIVE: which queues no
 * pass, copy_sight_skip), the same with a deletionTimestamp, or one made for an earlier
 * admission whose delete the store has not shown; then c1's metrics with sample's 3 pods in
 * its requests (5 of 8 cpu) and countedJobs listing the copy with all of them, and "other" (3
 * cpu) to place. Returns the placements made. */
static uint64_t sighted_then_counted(struct fx *f, enum sighted how)
{
    struct one_placed o;
    one_placed(f, &o);
    tloop_run_for(f->loop, 0.05);
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "PATCH", .path = "/apis/", .body = "{}", .times = -1});
    fakesrv_push(f->w_srv, &(struct fakesrv_resp){.body = "{}", .times = -1}); /* its passes */
    uint64_t r0 = reconciles(f);
    if (how == SIGHT_DELETING)
        jx_set_new(o.cp, "metadata.deletionTimestamp", json_string("2026-11-22T09:59:59Z"), NULL);
    if (how == SIGHT_OLD_ADMISSION)
        jx_set_annotation(o.cp, XF_ANN_PLACED_FOR, "wl-uid/2026-11-22T09:00:00Z");
    json_t *cp = copy_added(f, o.cp); /* uid "copy-uid" */
    if (how != SIGHT_OLD_ADMISSION) {
        assert_int_equal(sight_skips(f), 1);
        tloop_run_for(f->loop, 0.05);
        assert_int_equal(reconciles(f), r0); /* no pass read the copy */
    }
    tloop_run_for(f->loop, 0.05);
    /* with sample's reservation held, other does not fit (5 + 3 + 3 > 8) */
    /* one reservation either way: sample's, or other's instead */
    assert_int_equal(counted_then_place(f, "2026-11-22T10:00:01Z", "5",
                                        "{\"uid\":\"copy-uid\",\"pods\":3}", "other"),
                     1);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    json_decref(cp);
    one_placed_free(&o);
    return st.placements;
}

/* The copy's uid is recorded from its watch's ADDED even when that queues no pass: metrics
 * listing it with all its pods end sample's reservation, so other fits and is placed. */
static void test_counted_copy_from_sight(void **state)
{
    assert_int_equal(sighted_then_counted(*state, SIGHT_LIVE), 2);
}

/* A copy being removed (deletionTimestamp) does not end the reservation: an old copy going
 * away says nothing of the new placement's pods. */
static void test_counted_copy_deleting_ignored(void **state)
{
    assert_int_equal(sighted_then_counted(*state, SIGHT_DELETING), 1);
}

/* Nor does a copy of an earlier admission of the Workload on the same cluster (its placed-for
 * is not the Workload's placement token now): its pods, counted, go with it. */
static void test_counted_copy_old_admission_ignored(void **state)
{
    assert_int_equal(sighted_then_counted(*state, SIGHT_OLD_ADMISSION), 1);
}

/* other's events delivered and its copy made: the dispatch is over, so sample's deferred
 * running message is written (the hub's requests reaching `hub`), with no failure. Returns
 * that write's body; *ojob, *owl: other's delivered objects (new references). */
static json_t *other_copy_then_running(struct fx *f, const struct two_placed *t, size_t hub,
                                       json_t **ojob, json_t **owl)
{
    *ojob = deliver(f->jobs, "default/other", t->ojp, "6");
    *owl = deliver(f->wls, "default/job-other-4c5d6", t->owp, "11");
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_on_job(f->c, *ojob);
    run_until(f, hub, 2);
    json_t *sp = last_hub_body(f, "PATCH", WL_STATUS);
    assert_string_equal(jx_str(sp, "status.admissionChecks[0].message", ""),
                        "running on cluster c1");
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    assert_int_equal(fakesrv_unmatched(f->w_srv), 0);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 0);
    return sp;
}

/* Dispatch before status return: while another job is placed and its copy not made, a copy
 * seen running gets its remote-status annotation at once, but its check's "running" message
 * (a Workload status write, here replacing an earlier error) waits; it is written once the
 * other job's copy is made. */
static void test_running_message_waits_for_dispatches(void **state)
{
    struct fx *f = *state;
    struct two_placed t;
    two_placed(f, &t);
    sample_message_error(f);
    json_t *cp = t.cp;

    /* sample's copy runs: the annotation, no Workload write */
    json_object_set_new(cp, "status", J("{\"active\":3,\"ready\":3,\"startTime\":\"T1\"}"));
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    uint64_t r0 = reconciles(f);
    wlc_on_job(f->c, cp);
    run_passes(f, r0 + 1);
    tloop_run_for(f->loop, 0.2);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 5);
    json_t *ap = last_hub_body(f, "PATCH", JOB_PATH);
    assert_string_equal(
        jx_annotation(ap, XF_ANN_REMOTE_STATUS),
        "{\"active\":3,\"cluster\":\"c1\",\"failed\":0,\"ready\":3,\"succeeded\":0}");
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.deferrals, 1);
    json_t *job3 = deliver(f->jobs, "default/sample", ap, "7");

    /* other's events: its copy is made; then sample's running message is written */
    json_t *ojob, *owl, *sp = other_copy_then_running(f, &t, 6, &ojob, &owl);
    json_t *jsons[] = {ap, job3, ojob, owl, sp};
    for (size_t i = 0; i < sizeof jsons / sizeof jsons[0]; i++)
        json_decref(jsons[i]);
    two_placed_free(&t);
}

static void on_poll_seen(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct fx *f = t->data;
    if (fakesrv_nreq(f->hub_srv) >= f->want_hub)
        ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until the hub server saw `hub` requests, answered or not (10 s guard). */
static void run_until_seen(struct fx *f, size_t hub)
{
    f->want_hub = hub;
    run_polled(f, on_poll_seen, 0.005);
    assert_true(fakesrv_nreq(f->hub_srv) >= hub);
}

static uint64_t echo_skips(struct fx *f)
{
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    return st.echo_skips;
}

/* one_placed, then its copy running (o->cp, in the copies store): its next pass relays that. */
static void copy_running(struct fx *f, struct one_placed *o)
{
    one_placed(f, o);
    json_object_set_new(o->cp, "status", J("{\"active\":1,\"ready\":1,\"startTime\":\"T1\"}"));
    jx_set_new(o->cp, "metadata.resourceVersion", json_string("31"), NULL);
    store_upsert(f->copies_c1, o->cp, NULL, NULL, NULL);
}

/* "sample" placed, its copy made and now running: the pass relays the copy's status onto the
 * hub job (its one write, answered with resourceVersion `answer_rv` after `delay_s`). With
 * `event_early`, the job's update from "6" to `event_rv` is delivered while the answer is out,
 * else after it. Returns how many passes the update made. */
static uint64_t relay_echo(struct fx *f, const char *answer_rv, const char *event_rv,
                           double delay_s, bool event_early, bool relist, bool held, bool foreign)
{
    struct one_placed o;
    copy_running(f, &o);
    json_t *cp = o.cp;
    char body[96];
    snprintf(body, sizeof body, "{\"metadata\":{\"resourceVersion\":\"%s\"}}", answer_rv);
    struct fakesrv_resp resp = {
        .method = "PATCH", .path = JOB_PATH, .status = 200, .body = body, .delay_s = delay_s};
    fakesrv_push(f->hub_srv, &resp);
    size_t n0 = fakesrv_nreq(f->hub_srv);
    uint64_t r0 = reconciles(f);
    json_t *old = json_incref(store_get(f->jobs, "default/sample"));
    assert_string_equal(jx_resource_version(old), "6");
    wlc_on_job(f->c, cp);
    run_until_seen(f, n0 + 1);
    json_t *ap = last_hub_body(f, "PATCH", JOB_PATH);
    assert_non_null(jx_annotation(ap, XF_ANN_REMOTE_STATUS));
    assert_int_equal(json_object_size(ap), 1); /* the relay alone */
    uint64_t r1 = reconciles(f);
    assert_int_equal(r1, r0 + 1);
    if (!event_early)
        run_until(f, n0 + 1, 1);
    if (held) { /* the copy's next change comes first: its pass waits for the relay's event */
        struct wlc_stats st;
        wlc_get_stats(f->c, &st);
        uint64_t h0 = st.own_holds;
        wlc_on_job(f->c, cp);
        run_reconciles(f, r1 + 1);
        wlc_get_stats(f->c, &st);
        assert_int_equal(st.own_holds, h0 + 1);
        r1 = reconciles(f);
    }
    json_t *other = J("{\"metadata\":{\"labels\":{\"team\":\"b\"}}}");
    if (foreign) /* the store's job lacks the relay's annotation then: its pass writes it again */
        fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200,
                          "{\"metadata\":{\"resourceVersion\":\"10\"}}");
    json_t *job3 = deliver(f->jobs, "default/sample", foreign ? other : ap, event_rv);
    json_decref(other);
    wlc_on_job_update(f->c, old, job3, relist);
    tloop_run_for(f->loop, delay_s + 0.3);
    uint64_t made = reconciles(f) - r1;
    assert_int_equal(fakesrv_nreq(f->hub_srv), n0 + 1 + foreign); /* nothing more to write */
    json_decref(job3);
    json_decref(old);
    json_decref(ap);
    one_placed_free(&o);
    return made;
}

/* The update of the hub job that is a status relay's own write (from the version the pass read
 * to the one its answer gave) makes no pass, after the answer or before it (the server sends
 * the event first): it would decide the same and write nothing. An update to another version
 * than the answer's (another writer's change), one a list folded (other writes may be in it),
 * or one a held pass waits for (own_held) makes its pass. One fixture per case. */
static void test_relay_echo(void **state)
{
    static const struct {
        const char *answer_rv, *event_rv;
        double delay_s;
        bool early, relist, held, foreign;
        uint64_t passes, skips;
    } cases[] = {
        {"7", "7", 0, false, false, false, false, 0, 1},  /* the echo after the answer */
        {"7", "7", 0.3, true, false, false, false, 0, 1}, /* the echo before the answer */
        {"7", "8", 0, false, false, false, false, 1, 0},  /* another version after the answer */
        {"9", "7", 0.3, true, false, false, false, 1, 0}, /* another version before the answer */
        {"9", "7", 0.3, true, false, false, true, 1, 0},  /* another writer's change, before */
        {"7", "7", 0, false, true, false, false, 1, 0},   /* a relist's update */
        {"7", "7", 0, false, false, true, false, 1, 0},   /* a pass held for the write */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (i > 0) {
            assert_int_equal(teardown(state), 0);
            assert_int_equal(setup(state), 0);
        }
        struct fx *f = *state;
        uint64_t made =
            relay_echo(f, cases[i].answer_rv, cases[i].event_rv, cases[i].delay_s, cases[i].early,
                       cases[i].relist, cases[i].held, cases[i].foreign);
        if (made != cases[i].passes || echo_skips(f) != cases[i].skips)
            fail_msg("case %zu: %llu passes, %llu skipped; want %llu, %llu", i,
                     (unsigned long long)made, (unsigned long long)echo_skips(f),
                     (unsigned long long)cases[i].passes, (unsigned long long)cases[i].skips);
    }
}

/* While a dispatch is under way, a pass that only deferred the running message is not made
 * again when nothing it reads changed (deferred keys run again each time the queue is briefly
 * idle, and would decide the same over and over); a change of the copy makes it again, and the
 * message is written once the dispatch is over. */
static void test_deferred_pass_not_repeated(void **state)
{
    struct fx *f = *state;
    struct two_placed t;
    two_placed(f, &t);
    sample_message_error(f);
    json_t *cp = t.cp;

    /* sample's copy runs: the annotation, the running message deferred */
    json_object_set_new(cp, "status", J("{\"active\":3,\"ready\":3,\"startTime\":\"T1\"}"));
    jx_set_new(cp, "metadata.resourceVersion", json_string("31"), NULL);
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    uint64_t r0 = reconciles(f);
    wlc_on_job(f->c, cp);
    run_passes(f, r0 + 1);
    tloop_run_for(f->loop, 0.2);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 5);
    json_t *ap = last_hub_body(f, "PATCH", JOB_PATH);
    json_t *job3 = deliver(f->jobs, "default/sample", ap, "7");
    /* the annotation's event: deferred again, nothing else to do */
    r0 = reconciles(f);
    wlc_on_job(f->c, job3);
    run_passes(f, r0 + 1);
    tloop_run_for(f->loop, 0.1);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.deferrals, 2);
    assert_int_equal(st.defer_skips, 0);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 5);
    /* queued again, nothing changed, the dispatch still under way: not made */
    r0 = reconciles(f);
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_passes(f, r0 + 1);
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_passes(f, r0 + 2);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.defer_skips, 2);
    assert_int_equal(st.deferrals, 4);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 5);

    /* the copy changes: the pass is made (its new counts in the annotation), still deferred */
    json_object_set_new(cp, "status", J("{\"active\":3,\"ready\":2,\"startTime\":\"T1\"}"));
    jx_set_new(cp, "metadata.resourceVersion", json_string("32"), NULL);
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    r0 = reconciles(f);
    wlc_on_job(f->c, cp);
    run_passes(f, r0 + 1);
    run_until(f, 6, 1);
    json_t *ap2 = last_hub_body(f, "PATCH", JOB_PATH);
    assert_non_null(strstr(jx_annotation(ap2, XF_ANN_REMOTE_STATUS), "\"ready\":2"));
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.defer_skips, 2);
    json_t *job4 = deliver(f->jobs, "default/sample", ap2, "8");

    /* other's copy is made: the dispatch is over, sample's running message is written */
    json_t *ojob, *owl, *sp = other_copy_then_running(f, &t, 7, &ojob, &owl);
    json_t *jsons[] = {ap, job3, ap2, job4, ojob, owl, sp};
    for (size_t i = 0; i < sizeof jsons / sizeof jsons[0]; i++)
        json_decref(jsons[i]);
    two_placed_free(&t);
}

/* A placed job's dispatch ends when our check leaves its Workload (the
 * AdmissionCheck removed from its ClusterQueue after the placing pass): the
 * copy is never made, and another job's running message must not wait behind
 * it (it waited the whole 5 s). */
static void test_check_gone_ends_dispatch(void **state)
{
    struct fx *f = *state;
    struct two_placed t;
    two_placed(f, &t);
    sample_message_error(f);
    json_t *cp = t.cp;
    /* other is being dispatched until its Workload no longer has our check */
    json_t *owl = json_deep_copy(store_get(f->wls, "default/job-other-4c5d6"));
    json_object_set_new(jx_obj(owl, "status"), "admissionChecks", json_array());
    jx_set_new(owl, "metadata.resourceVersion", json_string("12"), NULL);
    store_upsert(f->wls, owl, NULL, NULL, NULL);
    uint64_t r0 = reconciles(f);
    wlc_on_workload(f->c, owl);
    run_passes(f, r0 + 1);
    size_t n = fakesrv_nreq(f->hub_srv);

    /* sample's copy runs: the annotation and the running message, at once */
    json_object_set_new(cp, "status", J("{\"active\":3,\"ready\":3,\"startTime\":\"T1\"}"));
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_on_job(f->c, cp);
    run_until(f, n + 2, 1);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.deferrals, 0);
    /* the two writes go out concurrently: either order */
    struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, n);
    bool wl_first = strcmp(r->path, WL_STATUS) == 0;
    fakesrv_req_free(r);
    json_t *sp = req_body(f->hub_srv, wl_first ? n : n + 1, "PATCH", WL_STATUS);
    assert_string_equal(jx_str(sp, "status.admissionChecks[0].message", ""),
                        "running on cluster c1");
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    json_decref(owl);
    json_decref(sp);
    two_placed_free(&t);
}

/* A controller logging to lc (text format). */
static void log_to(struct fx *f, struct logcap *lc)
{
    *lc = (struct logcap){0};
    lc->f = open_memstream(&lc->text, &lc->len);
    log_init(&lc->lg, lc->f, 0, LOG_FMT_TEXT);
    wlc_free(f->c);
    metrics_registry_free(f->reg);
    f->reg = metrics_registry_new();
    f->lg = &lc->lg;
    new_wlc(f, false, NULL, NULL);
}

/* The number of `msg` lines about default/sample logged to lc; closes it. */
static int msg_lines(struct fx *f, struct logcap *lc, const char *msg)
{
    fflush(lc->f);
    char pat[128];
    snprintf(pat, sizeof pat, "msg=\"%s\" job=default/sample ", msg);
    int n = 0;
    for (const char *at = lc->text; (at = strstr(at, pat)); at++)
        n++;
    fclose(lc->f);
    free(lc->text);
    f->lg = NULL;
    return n;
}

static int placed_lines(struct fx *f, struct logcap *lc)
{
    return msg_lines(f, lc, "job placed");
}

/* The placement patch of the job is written but the Workload status write of
 * the same pass meets a 409 (Kueue wrote the Workload meanwhile): the retry
 * comes before the job informer shows the patch. It must not place the job
 * again (a second job patch, a second "job placed" line: seen three times for
 * one job in first_hour.sh under load) but wait for the job's event. */
static void test_partial_failure_no_second_placement(void **state)
{
    struct fx *f = *state;
    struct logcap lc;
    log_to(f, &lc);
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    fakesrv_push_status(f->hub_srv, "PATCH", WL_STATUS, 409, "Conflict", "modified");
    /* anything more is answered, so a second placement is seen, not stalled */
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "PATCH", .path = JOB_PATH, .body = "{}", .times = -1});
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "PATCH", .path = WL_STATUS, .body = "{}", .times = -1});
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 2, 0);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 1);
    /* the retry (rate-limited: a few ms) sees the same stores */
    tloop_run_for(f->loop, 0.5);
    size_t n = fakesrv_nreq(f->hub_srv);
    for (size_t i = 2; i < n; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        bool again = strcmp(r->path, JOB_PATH) == 0;
        fakesrv_req_free(r);
        if (again)
            fail_msg("the job was patched again before its placement was seen (%zu requests)", n);
    }
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.placements, 1);
    assert_int_equal(placed_lines(f, &lc), 1);
}

/* The placement patch meets a 409 (the job changed meanwhile): nothing was
 * placed, so no "job placed" line for it; the retry places and logs once. */
static void test_conflict_logs_one_placement(void **state)
{
    struct fx *f = *state;
    struct logcap lc;
    log_to(f, &lc);
    fakesrv_push_status(f->hub_srv, "PATCH", JOB_PATH, 409, "Conflict", "modified");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 4, 1);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 1);
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    assert_int_equal(placed_lines(f, &lc), 1);
}

/* The relay's update comes while its answer is out, and the answer is a failure (a write the
 * server applied but whose answer was lost): the update's pass is made, not skipped, and sees
 * the relay in the store: nothing more to write. */
static void test_relay_echo_failed_answer(void **state)
{
    struct fx *f = *state;
    struct one_placed o;
    copy_running(f, &o);
    json_t *cp = o.cp;
    const char *fail = "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":500,\"reason\":"
                       "\"InternalError\",\"message\":\"etcd timeout\"}";
    fakesrv_push(
        f->hub_srv,
        &(struct fakesrv_resp){
            .method = "PATCH", .path = JOB_PATH, .status = 500, .body = fail, .delay_s = 0.3});
    size_t n0 = fakesrv_nreq(f->hub_srv);
    json_t *old = json_incref(store_get(f->jobs, "default/sample"));
    wlc_on_job(f->c, cp);
    run_until_seen(f, n0 + 1);
    uint64_t r1 = reconciles(f);
    json_t *ap = last_hub_body(f, "PATCH", JOB_PATH);
    json_t *job3 = deliver(f->jobs, "default/sample", ap, "7");
    wlc_on_job_update(f->c, old, job3, false);
    run_reconciles(f, r1 + 1);
    tloop_run_for(f->loop, 0.3);
    assert_int_equal(echo_skips(f), 0);
    assert_int_equal(fakesrv_nreq(f->hub_srv), n0 + 1); /* the relay is in the store */
    json_decref(job3);
    json_decref(ap);
    json_decref(old);
    one_placed_free(&o);
}

/* The status relay goes through the job's /status (wlx.h, job_meta_via_status). A hub that
 * answers it without the annotation (it drops metadata there) is told once in the log, and the
 * relay goes through the job itself at once, and so does every job patch after it. */
static void test_relay_falls_back_from_status(void **state)
{
    struct fx *f = *state;
    struct one_placed o;
    copy_running(f, &o);
    struct logcap lc;
    f->meta_status = true;
    log_to(f, &lc); /* a controller that writes job metadata through /status */
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH "/status", NULL, 200,
                      "{\"metadata\":{\"resourceVersion\":\"7\"}}");
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200,
                      "{\"metadata\":{\"resourceVersion\":\"8\"}}");
    size_t n0 = fakesrv_nreq(f->hub_srv);
    wlc_on_job(f->c, o.cp);
    run_until_seen(f, n0 + 2);
    json_t *st = req_body(f->hub_srv, n0, "PATCH", JOB_PATH "/status");
    json_t *main = req_body(f->hub_srv, n0 + 1, "PATCH", JOB_PATH);
    assert_non_null(jx_annotation(st, XF_ANN_REMOTE_STATUS));
    assert_true(json_equal(st, main));
    /* the next relay goes through the job at once */
    json_t *job3 = deliver(f->jobs, "default/sample", main, "8");
    json_object_set_new(o.cp, "status", J("{\"active\":2,\"ready\":2,\"startTime\":\"T1\"}"));
    jx_set_new(o.cp, "metadata.resourceVersion", json_string("32"), NULL);
    store_upsert(f->copies_c1, o.cp, NULL, NULL, NULL);
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200,
                      "{\"metadata\":{\"resourceVersion\":\"9\"}}");
    wlc_on_copy(f->c, o.cp, "c1", XF_COPY_STATUS);
    run_until_seen(f, n0 + 3);
    json_t *next = last_hub_body(f, "PATCH", JOB_PATH);
    assert_string_not_equal(jx_annotation(next, XF_ANN_REMOTE_STATUS),
                            jx_annotation(main, XF_ANN_REMOTE_STATUS));
    assert_int_equal(fakesrv_nreq(f->hub_srv), n0 + 3);
    json_decref(next);
    json_decref(job3);
    fflush(lc.f);
    const char *said = "drops labels and annotations written through a job's status subresource";
    const char *at = strstr(lc.text, said);
    assert_non_null(at);
    assert_null(strstr(at + 1, said));
    assert_int_equal(msg_lines(f, &lc, "job placed"), 0);
    json_decref(st);
    json_decref(main);
    one_placed_free(&o);
}

/* With the built-in syncer a placement changes no spec (the flavor's keys go into the copy):
 * it is one metadata-only patch, through the Job's /status, where real Kueue's job webhook
 * is not called. The same patch as through the job; a hub that shows it needs no fallback. */
static void test_placement_through_status(void **state)
{
    struct fx *f = *state;
    json_t *jp, *wp;
    place_once(f, &jp, &wp); /* the patch, as written through the job */
    json_decref(wp);
    assert_int_equal(teardown(state), 0);
    assert_int_equal(setup(state), 0);
    f = *state;
    struct logcap lc;
    f->meta_status = true;
    log_to(f, &lc);
    json_t *answer = json_deep_copy(jp);
    jx_set_new(answer, "metadata.resourceVersion", json_string("6"), NULL);
    char *ans = jx_dumps(answer);
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH "/status", NULL, 200, ans);
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 2, 0);
    json_t *sp = NULL;
    for (size_t i = 0; i < 2; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        assert_string_not_equal(r->path, JOB_PATH);
        if (strcmp(r->path, JOB_PATH "/status") == 0)
            sp = J(r->body);
        fakesrv_req_free(r);
    }
    assert_non_null(sp);
    assert_true(json_equal(sp, jp));
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    fflush(lc.f);
    assert_null(strstr(lc.text, "drops labels and annotations"));
    assert_int_equal(msg_lines(f, &lc, "job placed"), 1);
    free(ans);
    json_decref(answer);
    json_decref(sp);
    json_decref(jp);
}

/* A copy made for a placement this process did not log (an earlier run of kueue-ks placed the
 * job; its copy is missing, as after a restart whose workers lost it): one "job dispatched"
 * line, so a user following the job sees it; none when this process placed it. */
static void test_dispatch_of_earlier_placement_logged(void **state)
{
    struct fx *f = *state;
    json_t *jp, *wp;
    place_unchained(f, &jp, &wp);
    json_t *job2 = deliver(f->jobs, "default/sample", jp, "6");
    json_t *wl2 = deliver(f->wls, "default/job-sample-1a2b3", wp, "11");
    struct logcap lc;
    log_to(f, &lc); /* a new controller: the restarted operator */
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    wlc_on_job(f->c, job2);
    run_until(f, 2, 1);
    fflush(lc.f);
    assert_int_equal(fakesrv_nreq(f->w_srv), 1);
    assert_null(strstr(lc.text, "msg=\"job placed\""));
    assert_int_equal(msg_lines(f, &lc, "job dispatched"), 1);
    json_decref(job2);
    json_decref(wl2);
    json_decref(jp);
    json_decref(wp);

    /* placed and dispatched by the same process: the "job placed" line alone */
    assert_int_equal(teardown(state), 0);
    assert_int_equal(setup(state), 0);
    f = *state;
    log_to(f, &lc);
    struct one_placed o;
    one_placed(f, &o);
    fflush(lc.f);
    assert_null(strstr(lc.text, "msg=\"job dispatched\""));
    assert_int_equal(placed_lines(f, &lc), 1);
    one_placed_free(&o);

    /* placed and copied by one pass: the same */
    assert_int_equal(teardown(state), 0);
    assert_int_equal(setup(state), 0);
    f = *state;
    log_to(f, &lc);
    place_once(f, &jp, &wp);
    fflush(lc.f);
    assert_null(strstr(lc.text, "msg=\"job dispatched\""));
    assert_int_equal(placed_lines(f, &lc), 1);
    json_decref(jp);
    json_decref(wp);
}

/* A Workload with our check that Kueue holds (QuotaReserved False with a reason) is logged as
 * "job not admitted by Kueue", the words used for one without our check, not as "job not
 * placed" (one state, two lines before: a new user's trial). */
static void test_not_admitted_logged_as_such(void **state)
{
    struct fx *f = *state;
    struct logcap lc;
    log_to(f, &lc);
    json_t *wl = J(WL);
    json_object_del(jx_obj(wl, "status"), "admission");
    json_object_set_new(jx_obj(wl, "status"), "conditions",
                        J("[{\"type\":\"QuotaReserved\",\"status\":\"False\",\"reason\":"
                          "\"Pending\",\"message\":\"insufficient quota\"}]"));
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "POST", .status = 201, .body = "{}", .times = -1});
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 1, 0);
    fflush(lc.f);
    if (!strstr(lc.text, "Kueue has not admitted it: Pending: insufficient quota"))
        fail_msg("not the not-admitted line:\n%s", lc.text);
    assert_null(strstr(lc.text, "msg=\"job not placed\""));
    assert_int_equal(msg_lines(f, &lc, "job not admitted by Kueue"), 1);
}

/* A copy that ran and is deleted on the worker by someone else is made again, as before, and
 * now said: a "job dispatched" line naming it (a user saw the job start over in silence). */
static void test_deleted_copy_made_again_logged(void **state)
{
    struct fx *f = *state;
    struct logcap lc;
    log_to(f, &lc);
    struct one_placed o;
    one_placed(f, &o);
    /* the copy was seen with a pod, its status returned to the hub job */
    json_t *cp = json_deep_copy(o.cp);
    jx_set_new(cp, "metadata.resourceVersion", json_string("20"), NULL);
    jx_set_new(cp, "status.active", json_integer(1), NULL);
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);
    json_t *ann =
        json_pack("{s:{s:{s:s}}}", "metadata", "annotations", XF_ANN_REMOTE_STATUS,
                  "{\"cluster\":\"c1\",\"active\":1,\"ready\":0,\"succeeded\":0,\"failed\":0}");
    json_t *job3 = deliver(f->jobs, "default/sample", ann, "7");
    wlc_on_copy(f->c, cp, "c1", XF_COPY_STATUS);
    run_passes(f, 3);
    size_t posts = fakesrv_nreq(f->w_srv);
    /* deleted on the worker: made again, and said once */
    store_delete_key(f->copies_c1, "default/sample", NULL);
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    wlc_on_copy(f->c, cp, "c1", XF_COPY_STATUS);
    for (int i = 0; i < 500 && fakesrv_nreq(f->w_srv) == posts; i++)
        tloop_run_for(f->loop, 0.02);
    assert_int_equal(fakesrv_nreq(f->w_srv), posts + 1);
    tloop_run_for(f->loop, 0.1);
    fflush(lc.f);
    if (!strstr(lc.text, "its copy had run there and is gone"))
        fail_msg("no line for the copy made again:\n%s", lc.text);
    assert_int_equal(msg_lines(f, &lc, "job dispatched"), 1);
    json_decref(job3);
    json_decref(ann);
    json_decref(cp);
    one_placed_free(&o);
}

/* The eviction's writes fail (409 on both) and the retry writes them: one
 * "job evicted" line, logged once the writes went through (it was logged at
 * each decision: every retry during a hub outage repeated it). */
static void test_failed_pass_logs_outcome_once(void **state)
{
    struct fx *f = *state;
    struct logcap lc;
    log_to(f, &lc);
    put_job_placed_on_c1(f);
    json_t *wl = J(WL);
    json_object_set_new(jx_obj(wl, "status"), "conditions", json_array());
    json_object_del(jx_obj(wl, "status"), "admission");
    store_upsert(f->wls, wl, NULL, NULL, NULL);
    json_decref(wl);
    fakesrv_push_status(f->hub_srv, "PATCH", JOB_PATH, 409, "Conflict", "modified");
    fakesrv_push_status(f->hub_srv, "PATCH", WL_STATUS, 409, "Conflict", "modified");
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}"); /* the retry */
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 4, 0);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 1);
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    assert_int_equal(msg_lines(f, &lc, "job evicted"), 1);
}

/* The copy finishes; the pass writes the hub job's final status, but its Workload write meets
 * a 409 (Kueue saw the hub job's result first and wrote the Workload), and so do the
 * retries', which see stores without the written status yet and find the finish again. The
 * finish is logged once: when the job status is first written (not only when every write
 * of the pass went through), and not again by the retries. */
static void test_finish_logged_once_despite_conflicts(void **state)
{
    struct fx *f = *state;
    struct logcap lc;
    log_to(f, &lc);
    struct one_placed o;
    one_placed(f, &o);
    json_t *cp = o.cp;
    set_copy_complete(cp);
    store_upsert(f->copies_c1, cp, NULL, NULL, NULL);
    /* job status and annotation written every time, the Workload never */
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "PATCH", .path = JOB_PATH, .body = "{}", .times = -1});
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){.method = "PATCH",
                                                    .path = WL_STATUS,
                                                    .status = 409,
                                                    .body = "{\"kind\":\"Status\",\"reason\":"
                                                            "\"Conflict\",\"code\":409}",
                                                    .times = -1});
    wlc_on_job(f->c, cp);
    run_until(f, 2 + 3 * 3, 1); /* the pass and two retries */
    size_t status_writes = 0;
    for (size_t i = 2; i < fakesrv_nreq(f->hub_srv); i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, i);
        status_writes += strcmp(r->path, JOB_PATH "/status") == 0;
        fakesrv_req_free(r);
    }
    assert_true(status_writes >= 3);
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    assert_int_equal(msg_lines(f, &lc, "job finished"), 1);
    one_placed_free(&o);
}

enum { OTHERS = 20 };

/* OTHERS Workloads without our check and one of ours whose job is placed already
 * (placed-for = its admission identity), besides the fixture's reserved WL. */
static void fill_restart(struct fx *f)
{
    for (int i = 0; i < OTHERS; i++) {
        char *o = xasprintf(
            "{\"metadata\":{\"name\":\"other-%d\",\"namespace\":\"default\",\"ownerReferences\":"
            "[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"o%d\",\"uid\":\"o%d\","
            "\"controller\":true}]},\"status\":{\"admissionChecks\":[{\"name\":\"other\","
            "\"state\":\"Pending\"}]}}",
            i, i, i);
        put(f->wls, o);
        free(o);
    }
    put(f->wls, "{\"metadata\":{\"name\":\"job-placed-9z9z9\",\"namespace\":\"default\","
                "\"uid\":\"wl2-uid\",\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":"
                "\"Job\",\"name\":\"placed\",\"uid\":\"job2-uid\",\"controller\":true}]},"
                "\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","
                "\"lastTransitionTime\":\"2026-11-22T09:58:00Z\"}],\"admissionChecks\":[{"
                "\"name\":\"ks\",\"state\":\"Pending\"}]}}");
    put(f->jobs, "{\"metadata\":{\"name\":\"placed\",\"namespace\":\"default\",\"uid\":"
                 "\"job2-uid\",\"labels\":{\"" XF_LABEL_CLUSTER "\":\"c1\"},\"annotations\":{"
                 "\"" XF_ANN_PLACED_FOR "\":\"wl2-uid/2026-11-22T09:58:00Z\"}}}");
}

/* A restart's start-up pass over every Workload, once the hub's lists are in
 * (wlc_enqueue_all): those that want a placement are queued ahead of the rest, so the
 * reservation made while the operator was down (WL) is placed first, not after a pass over
 * the 1,000 existing ones (bench-scale's first_dispatch_s). The others, a placed job's
 * Workload included, stay in order. */
static void test_listed_reservation_queued_ahead(void **state)
{
    struct fx *f = *state;
    fill_restart(f);
    wlc_enqueue_all(f->c);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 2);
    assert_int_equal(st.queued_urgent, 1);
    /* and it is placed */
    fakesrv_push_json(f->hub_srv, "PATCH", JOB_PATH, NULL, 200, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    run_until(f, 2, 0);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.placements, 1);
}

/* A hub job change moves a dispatch under way on (the copy to make): it is queued first, ahead
 * of the reservations a restart's lists queued ahead of the rest, so that copies are made while
 * the backlog is being placed, not after all of it (bench-dispatch --real: 300 reserved while
 * the operator was down, no copy until all 300 were placed). */
static void test_job_change_first_after_restart(void **state)
{
    struct fx *f = *state;
    fill_restart(f);
    wlc_enqueue_all(f->c);
    wlc_on_job(f->c, store_get(f->jobs, "default/placed"));
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 2);
    assert_int_equal(st.queued_urgent, 2);
    assert_int_equal(st.queued_first, 1);
}

/* A copy's status change from a watch is queued first, ahead of the reservations a burst or a
 * restart queued: its status returns to the hub at once (in order it waited behind a burst's
 * placements, seconds on the real stack). A copy from a list (a restart's thousands) or an
 * update that left its status as it was stays in order. */
static void test_copy_change_first(void **state)
{
    struct fx *f = *state;
    fill_restart(f);
    wlc_enqueue_all(f->c);
    json_t *cp = J("{\"metadata\":{\"name\":\"placed\",\"namespace\":\"default\",\"labels\":{"
                   "\"" XF_LABEL_ORIGIN_UID "\":\"job2-uid\"}}}");
    wlc_on_copy(f->c, cp, "c1", XF_COPY_OTHER); /* its status as it was */
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 2);
    assert_int_equal(st.queued_urgent, 1); /* the reservation */
    assert_int_equal(st.queued_first, 0);
    assert_int_equal(st.queued_background, OTHERS); /* the copy's Workload moved up, in order */
    wlc_on_copy(f->c, cp, "c1", XF_COPY_STATUS);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 2);
    assert_int_equal(st.queued_urgent, 2);
    assert_int_equal(st.queued_first, 1);
    json_decref(cp);
}

/* The pass over every Workload after a worker change (at a restart, the workers become
 * reachable after the lists) queues the same way. */
static void test_enqueue_all_reservation_ahead(void **state)
{
    struct fx *f = *state;
    fill_restart(f);
    assert_false(wlc_placing(f->c));
    assert_true(wlc_sweep_due(f->c, 1.0)); /* nothing placing: at once */
    wlc_enqueue_all(f->c);
    assert_true(wlc_placing(f->c)); /* the reservation, queued ahead */
    assert_false(wlc_sweep_due(f->c, 1.0));
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 2);
    assert_int_equal(st.queued_urgent, 1);
}

/* A key queued already is left where it is by the pass over every Workload, unread: its pass
 * reads the stores when it runs. (At a restart each change of the workers came back to that
 * pass while the lists' pass still had every key queued: a read of every Workload and its
 * job each time.) The others are read and queued as above. */
static void test_enqueue_all_leaves_queued(void **state)
{
    struct fx *f = *state;
    fill_restart(f);
    wlc_enqueue(f->c, "default/job-sample-1a2b3"); /* in order, before the pass */
    wlc_enqueue_all(f->c);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 2);
    assert_int_equal(st.queued_urgent, 0);
    /* nothing queued ahead, but a key queued in order may be a reservation: background work
     * (the orphan sweep, the agents' Pod lists) waits for it */
    assert_true(wlc_placing(f->c));
    /* the sweep for WLC_SWEEP_WAIT_S at most: a steady stream of changes keeps placing true */
    assert_false(wlc_sweep_due(f->c, 100.0));
    assert_false(wlc_sweep_due(f->c, 100.0 + WLC_SWEEP_WAIT_S - 0.01));
    assert_true(wlc_sweep_due(f->c, 100.0 + WLC_SWEEP_WAIT_S));
    assert_false(wlc_sweep_due(f->c, 100.0 + WLC_SWEEP_WAIT_S + 0.5)); /* a new wait */
    assert_true(wlc_sweep_due(f->c, 100.0 + 2 * WLC_SWEEP_WAIT_S + 0.5));
}

static int copy_into(const char *key, json_t *obj, void *ud)
{
    (void)key;
    assert_int_equal(store_upsert(ud, obj, NULL, NULL, NULL), 0);
    return 0;
}

/* A packed copy of `old` (freed) with index `index` (NULL: none), no tree decoded. */
static struct store *packed_copy(struct store *old, const char *index, store_index_fn fn, void *ud)
{
    struct store *s = store_new(&(struct store_opts){.packed = true});
    if (index)
        assert_int_equal(store_add_index(s, index, fn, ud, NULL), 0);
    store_foreach(old, copy_into, s);
    store_free(old);
    store_trim(s, true);
    return s;
}

/* With packed stores (kueue-ks run --packed-cache) the start-up pass over every Workload and
 * the orphan sweep read every object one decoded tree at a time (store_get_ref) and leave
 * none cached behind them (at N = 4,000 they held 100 MB of trees at once:
 * docs/performance.md "Scale"), with the outcomes of the unpacked tests above. The copies'
 * store has no origin index: the sweep's walk over every key. */
static void test_packed_passes_leave_no_trees(void **state)
{
    struct fx *f = *state;
    fill_restart(f);
    put_copy_and_orphan(f);
    fakesrv_push_json(f->w_srv, "DELETE", "/apis/batch/v1/namespaces/default/jobs/old", NULL, 200,
                      "{}");
    wlc_free(f->c);
    metrics_registry_free(f->reg);
    f->reg = metrics_registry_new();
    f->wls = packed_copy(f->wls, WLC_INDEX_OWNER, store_index_by_owner_uid, NULL);
    f->jobs = packed_copy(f->jobs, WLC_INDEX_UID, store_index_by_field, (void *)"metadata.uid");
    f->copies_c1 = packed_copy(f->copies_c1, NULL, NULL, NULL);
    new_wlc(f, false, NULL, NULL);
    store_trim(f->wls, true);
    assert_int_equal(wlc_gc(f->c), 1);
    assert_int_equal(store_decoded(f->copies_c1), 0);
    assert_int_equal(store_decoded(f->jobs), 0);
    run_until(f, 0, 1);
    struct fakesrv_req *r = fakesrv_req_get(f->w_srv, 0);
    assert_string_equal(r->method, "DELETE");
    assert_string_equal(r->path, "/apis/batch/v1/namespaces/default/jobs/old");
    fakesrv_req_free(r);
    /* last: the loop is not run again, so the queued passes do not run (they would read) */
    store_trim(f->wls, true);
    store_trim(f->jobs, true);
    wlc_enqueue_all(f->c);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 2);
    assert_int_equal(st.queued_urgent, 1);
    assert_int_equal(store_decoded(f->wls), 0);
    assert_int_equal(store_decoded(f->jobs), 0);
}

/* fill_restart's objects in packed stores, their decoded trees trimmed (store_decoded 0), a
 * new controller on them; every write succeeds (a failed pass would be retried in order,
 * reading the cache). */
static void packed_restart(struct fx *f)
{
    fill_restart(f);
    wlc_free(f->c);
    metrics_registry_free(f->reg);
    f->reg = metrics_registry_new();
    f->wls = packed_copy(f->wls, WLC_INDEX_OWNER, store_index_by_owner_uid, NULL);
    f->jobs = packed_copy(f->jobs, WLC_INDEX_UID, store_index_by_field, (void *)"metadata.uid");
    new_wlc(f, false, NULL, NULL);
    store_trim(f->wls, true);
    store_trim(f->jobs, true);
    fakesrv_push(f->hub_srv, &(struct fakesrv_resp){
                                 .method = "PATCH", .status = 200, .body = "{}", .times = -1});
    fakesrv_push(f->w_srv, &(struct fakesrv_resp){
                               .method = "POST", .status = 201, .body = "{}", .times = -1});
}

/* A pass over every Workload (a restart's: WQ_BACKGROUND) reads trees of its own
 * (store_get_ref) and frees them at its end: it leaves no tree in the packed stores' cache
 * for the trims to free cold later (at 10,000 Workloads the cache held 20-25 MB of them
 * after a restart, and freeing them was a fifth of its CPU: docs/performance.md). A pass
 * queued ahead (a change, a reservation to place) reads cached trees, as a dispatch's passes
 * read the trees its events built. */
static void test_background_passes_cache_no_trees(void **state)
{
    struct fx *f = *state;
    packed_restart(f);
    wlc_enqueue_all(f->c);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued_background, OTHERS + 1);
    run_reconciles(f, st.queued);
    wlc_get_stats(f->c, &st);
    assert_true(st.reconciles >= OTHERS + 2);
    assert_int_equal(st.failures, 0);
    /* the one queued ahead (the placed job's Workload) read cached trees; no other did */
    assert_true(store_decoded(f->wls) <= 1);
    assert_true(store_decoded(f->jobs) <= 1);
    /* and a pass queued by a change reads the cache */
    size_t before = store_decoded(f->wls);
    wlc_enqueue(f->c, "default/other-0");
    run_reconciles(f, st.reconciles + 1);
    assert_true(store_decoded(f->wls) > before);
}

/* A copy from a list (a restart's thousands, a relist's) queues its Workload behind the
 * changes, as a pass over every Workload: that pass reads trees of its own. Queued in order,
 * the passes of a restart's listed copies kept a decoded tree of each Workload, job and copy in
 * the packed stores' cache until the trims: 13-18 MB for seconds at 10,000 copies
 * (bench-scale's rss_mb at ready). A copy's change by watch still reads the cache. */
static void test_listed_copy_behind_changes(void **state)
{
    struct fx *f = *state;
    packed_restart(f);
    json_t *cp = J("{\"metadata\":{\"name\":\"placed\",\"namespace\":\"default\",\"labels\":{"
                   "\"" XF_LABEL_ORIGIN_UID "\":\"job2-uid\"}}}");
    wlc_on_copy(f->c, cp, "c1", XF_COPY_LISTED);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, 1);
    assert_int_equal(st.queued_background, 1);
    run_reconciles(f, 1);
    assert_int_equal(store_decoded(f->wls), 0);
    assert_int_equal(store_decoded(f->jobs), 0);
    /* the same copy's change by watch, its status as it was: in order, reading the cache */
    wlc_on_copy(f->c, cp, "c1", XF_COPY_OTHER);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued_background, 0);
    run_reconciles(f, 2);
    assert_true(store_decoded(f->wls) > 0);
    json_decref(cp);
}

/* "sample" placed (its writes *jp, *wp, not delivered: its dispatch under way) and OTHERS
 * Workloads queued in order behind it. */
static void placed_behind_others(struct fx *f, json_t **jp, json_t **wp)
{
    place_once(f, jp, wp);
    for (int i = 0; i < OTHERS; i++) {
        char key[32];
        snprintf(key, sizeof key, "default/other-%d", i);
        wlc_enqueue(f->c, key);
    }
}

/* A copy from a list whose Workload's dispatch is under way (placed, its copy to make) is
 * queued first, as that Workload's own event: not behind a restart's pass. */
static void test_listed_copy_of_dispatch_first(void **state)
{
    struct fx *f = *state;
    json_t *jp, *wp;
    placed_behind_others(f, &jp, &wp);
    json_t *cp = J("{\"metadata\":{\"name\":\"sample\",\"namespace\":\"default\",\"labels\":{"
                   "\"" XF_LABEL_ORIGIN_UID "\":\"job-uid\"}}}");
    wlc_on_copy(f->c, cp, "c1", XF_COPY_LISTED);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 1);
    assert_int_equal(st.queued_first, 1);
    assert_int_equal(st.queued_background, 0);
    json_decref(cp);
    json_decref(jp);
    json_decref(wp);
}

/* A placed job's next pass (the copy) waits for the placement's own events (own_held). At a
 * restart the pass over every Workload has queued them all in order: the Workload's event
 * then queues the key ahead, not behind them (bench-scale's first_dispatch_s: 2.6 s behind
 * 10,000 keys), while another Workload's event stays in order. */
static void test_dispatching_workload_event_ahead(void **state)
{
    struct fx *f = *state;
    json_t *jp, *wp;
    placed_behind_others(f, &jp, &wp);
    json_t *job2 = deliver(f->jobs, "default/sample", jp, "6");
    json_t *wl2 = deliver(f->wls, "default/job-sample-1a2b3", wp, "11");
    wlc_on_workload(f->c, wl2);
    json_t *other = J(WL);
    jx_set_new(other, "metadata.name", json_string("other-0"), NULL);
    wlc_on_workload(f->c, other); /* queued already, in order: stays there */
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 1);
    assert_int_equal(st.queued_urgent, 1);
    assert_int_equal(st.queued_first, 1); /* as a hub job's event, ahead of urgent keys too */
    /* and the copy is made */
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    run_until(f, 2, 1);
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.failures, 0);
    json_decref(other);
    json_decref(wl2);
    json_decref(job2);
    json_decref(jp);
    json_decref(wp);
}

/* The quiet period of a new Workload is on by default (wlc: quiet_new_ms 0 -> 2000): one a
 * second old, check Pending without a message, no reservation yet, gets no status write; once
 * it is 2 s old the waiting message is written. */
static void test_new_workload_quiet_by_default(void **state)
{
    struct fx *f = *state;
    json_t *wl = J(WL);
    json_object_del(jx_obj(wl, "status"), "admission");
    json_object_set_new(jx_obj(wl, "status"), "conditions", json_array());
    jx_set_new(wl, "metadata.creationTimestamp", json_string("2026-11-22T09:59:59Z"), NULL);
    assert_int_equal(store_upsert(f->wls, wl, NULL, NULL, NULL), 0);
    json_decref(wl);
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    ev_timer guard;
    ev_timer_init(&guard, on_guard, 0.3, 0.);
    ev_timer_start(f->loop, &guard);
    ev_run(f->loop, 0);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 0); /* quiet: requeued */
    f->now_ms = NOW_MS + 1000;                     /* 2 s old now */
    fakesrv_push_json(f->hub_srv, "PATCH", WL_STATUS, NULL, 200, "{}");
    wlc_enqueue(f->c, "default/job-sample-1a2b3");
    run_until(f, 1, 0);
    json_t *b = req_body(f->hub_srv, 0, "PATCH", WL_STATUS);
    const char *msg = jx_str(b, "status.admissionChecks[0].message", "");
    if (!strstr(msg, "no quota reserved yet"))
        fail_msg("not the waiting message: %s", msg);
    json_decref(b);
}

/* A change that comes by watch during a restart's pass over every Workload (here a
 * reservation) goes ahead of that pass, which is queued behind the changes
 * (WQ_BACKGROUND; a listed reservation is queued ahead of both:
 * test_listed_reservation_queued_ahead). */
static void test_watched_change_ahead_of_restart_pass(void **state)
{
    struct fx *f = *state;
    /* the pass over the others and the placed job's Workload, before the reservation */
    fill_restart(f);
    json_t *wl = NULL;
    assert_int_equal(store_delete_key(f->wls, "default/job-sample-1a2b3", &wl), 0);
    wlc_enqueue_all(f->c);
    assert_int_equal(store_upsert(f->wls, wl, NULL, NULL, NULL), 0);
    json_decref(wl);
    struct wlc_stats st;
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 1);
    assert_int_equal(st.queued_background, OTHERS + 1);
    assert_false(wlc_placing(f->c));
    /* the reservation's watch event: in order, which is ahead of the pass */
    wlc_on_workload(f->c, store_get(f->wls, "default/job-sample-1a2b3"));
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 2);
    assert_int_equal(st.queued_background, OTHERS + 1);
    assert_int_equal(st.queued_urgent, 0);
    /* a watch event of a key the pass queued moves it up too */
    wlc_on_workload(f->c, store_get(f->wls, "default/other-3"));
    wlc_get_stats(f->c, &st);
    assert_int_equal(st.queued, OTHERS + 2);
    assert_int_equal(st.queued_background, OTHERS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_place_then_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_change_first_after_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_change_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relay_falls_back_from_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_placement_through_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finish_logged_once_despite_conflicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflict_is_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_apply_falls_back_to_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unusable_kind_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_ours_and_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admission_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admission_check_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admission_check_waits_for_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admission_check_known_down, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejected_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evicted_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_worker_not_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_pass_logs_outcome_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_workloads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_cluster_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_rejected_while_a_worker_is_unusable, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_only_excluded_cluster_waits_then_placed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_excluded_cluster_skipped_until_expiry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_expired_exclusion_placed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_rejected_while_metrics_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_placement_waits_for_worker_at_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_rejected_by_metrics_without_status, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_not_rejected_while_a_worker_has_no_metrics, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rejected_when_every_worker_reports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_selected_worker_without_metrics_named, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_key_then_sweep_logs_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cluster_change_queues_affected_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cluster_delete_drops_conversion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_second_placement_before_job_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_repeat_before_own_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_running_message_waits_for_dispatches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deferred_pass_not_repeated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relay_echo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relay_echo_failed_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_of_earlier_placement_logged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_copy_made_again_logged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_admitted_logged_as_such, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ready_copy_ends_reservation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counted_copy_ends_reservation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counted_copy_from_sight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counted_copy_old_admission_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counted_copy_deleting_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_gone_ends_dispatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_failure_no_second_placement, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflict_logs_one_placement, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listed_reservation_queued_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enqueue_all_reservation_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enqueue_all_leaves_queued, setup, teardown),
        cmocka_unit_test_setup_teardown(test_packed_passes_leave_no_trees, setup, teardown),
        cmocka_unit_test_setup_teardown(test_background_passes_cache_no_trees, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatching_workload_event_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listed_copy_behind_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listed_copy_of_dispatch_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watched_change_ahead_of_restart_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_workload_quiet_by_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_second_copy_before_copy_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_copy_sight_no_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_copy_sight_before_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_copy_sight_pass_when_needed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_copy_sight_other_is_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_placement_counted_after_held_retry, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
