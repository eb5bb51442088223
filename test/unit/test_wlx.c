/*
 * Unit tests for controllers/workload/wlx: the actions of a decision are
 * sent through the real REST client to scripted fake API servers (a hub and
 * one worker); paths, methods, content types and bodies are checked, and the
 * result reports the first failure (409 on the workload status), while
 * AlreadyExists on create and NotFound on delete count as success.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ev.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/wlx.h"
#include "controllers/workload/xf.h"
#include "pkg/json/jsonx.h"
#include "pkg/kube/client.h"
#include "pkg/kube/evrec.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

struct fx {
    struct ev_loop *loop;
    struct fakesrv *hub_srv, *w_srv;
    struct kube_client *hub, *w;
    bool finished;
    struct wlx_result res;
    char reserved[64];
    int unreserved;
    json_t *wl, *job;
    int worker_asks; /* worker_counted's calls */
};

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

static struct kube_client *worker_of(void *ud, const char *cluster)
{
    struct fx *f = ud;
    return strcmp(cluster, "c1") == 0 ? f->w : NULL;
}

static void on_reserve(void *ud, const char *key, const char *cluster)
{
    struct fx *f = ud;
    assert_string_equal(key, "default/job-sample-1a2b3");
    snprintf(f->reserved, sizeof f->reserved, "%s", cluster);
}

static void on_unreserve(void *ud, const char *key)
{
    struct fx *f = ud;
    (void)key;
    f->unreserved++;
}

static void on_done(void *ud, const char *key, const struct wlx_result *r)
{
    struct fx *f = ud;
    assert_string_equal(key, "default/job-sample-1a2b3");
    f->res = *r;
    f->finished = true;
    ev_break(f->loop, EVBREAK_ALL);
}

static void on_timeout(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

static void run(struct fx *f)
{
    ev_timer guard;
    ev_timer_init(&guard, on_timeout, 10.0, 0.);
    ev_timer_start(f->loop, &guard);
    if (!f->finished)
        ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &guard);
    assert_true(f->finished);
}

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->hub_srv = fakesrv_start(NULL);
    f->w_srv = fakesrv_start(NULL);
    f->hub = client_for(f->loop, f->hub_srv);
    f->w = client_for(f->loop, f->w_srv);
    f->wl = json_loads("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
                       "\"metadata\":{\"name\":\"job-sample-1a2b3\",\"namespace\":\"default\","
                       "\"uid\":\"wl-uid\",\"resourceVersion\":\"10\"}}",
                       0, NULL);
    f->job = json_loads("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
                        "\"sample\",\"namespace\":\"default\",\"uid\":\"job-uid\","
                        "\"resourceVersion\":\"5\"},\"spec\":{\"template\":{\"spec\":{}}}}",
                        0, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    kube_client_free(f->hub);
    kube_client_free(f->w);
    fakesrv_stop(f->hub_srv);
    fakesrv_stop(f->w_srv);
    ev_loop_destroy(f->loop);
    json_decref(f->wl);
    json_decref(f->job);
    free(f);
    return 0;
}

static struct wl_action *add(struct wl_actions *a, enum wl_act_type t)
{
    /* fixed capacity: the tests keep pointers to earlier actions */
    if (!a->v) {
        a->cap = 16;
        a->v = xcalloc(a->cap, sizeof(*a->v));
    }
    assert_true(a->n < a->cap);
    struct wl_action *x = &a->v[a->n++];
    *x = (struct wl_action){.type = t};
    return x;
}

static struct fakesrv_req *find_req(struct fakesrv *s, const char *method, const char *path)
{
    for (size_t i = 0; i < fakesrv_nreq(s); i++) {
        struct fakesrv_req *r = fakesrv_req_get(s, i);
        if (strcmp(r->method, method) == 0 && strcmp(r->path, path) == 0)
            return r;
        fakesrv_req_free(r);
    }
    fail_msg("no %s %s request", method, path);
    return NULL;
}

static void assert_body(const struct fakesrv_req *r, const json_t *want)
{
    json_t *got = json_loads(r->body, 0, NULL);
    assert_non_null(got);
    assert_true(json_equal(got, (json_t *)want));
    json_decref(got);
}

static void test_all_actions(void **state)
{
    struct fx *f = *state;
    const char *job_path = "/apis/batch/v1/namespaces/default/jobs/sample";
    const char *wl_status =
        "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-sample-1a2b3/status";
    fakesrv_push_json(f->hub_srv, "PATCH", "/apis/batch/v1/namespaces/default/jobs/sample/status",
                      NULL, 200, "{}");
    fakesrv_push_json(f->hub_srv, "PATCH", job_path, NULL, 200, "{}");
    fakesrv_push_status(f->hub_srv, "PATCH", wl_status, 409, "Conflict",
                        "the object has been modified");
    fakesrv_push_status(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", 409,
                        "AlreadyExists", "jobs.batch \"sample\" already exists");
    /* the object there is our copy of this job (an earlier pass made it) */
    fakesrv_push_json(f->w_srv, "GET", "/apis/batch/v1/namespaces/default/jobs/sample", NULL, 200,
                      "{\"metadata\":{\"name\":\"sample\",\"labels\":{\"app.kubernetes.io/"
                      "managed-by\":\"kueue-ks\",\"kueue-ks.io/origin\":"
                      "\"hub\",\"kueue-ks.io/origin-uid\":\"job-uid\"}}}");
    fakesrv_push_status(f->w_srv, "DELETE", "/apis/batch/v1/namespaces/default/jobs/sample", 404,
                        "NotFound", "not found");

    struct wl_actions a;
    wl_actions_init(&a);
    add(&a, WL_ACT_PATCH_JOB)->patch = json_pack("{s:{s:s,s:{s:s}}}", "metadata", "resourceVersion",
                                                 "5", "labels", "kubestellar.io/cluster", "c1");
    add(&a, WL_ACT_PATCH_JOB_STATUS)->patch = json_pack("{s:{s:i}}", "status", "succeeded", 3);
    struct wl_action *w = add(&a, WL_ACT_PATCH_WL_STATUS);
    w->patch = json_pack("{s:{s:s}}", "metadata", "resourceVersion", "10");
    w->apply = json_pack("{s:s}", "kind", "Workload");
    struct wl_action *c = add(&a, WL_ACT_CREATE_COPY);
    c->cluster = xstrdup("c1");
    struct xf_origin o = {.origin = "hub", .origin_uid = "job-uid"};
    c->object = xf_downsync(kind_lookup("batch/v1", "Job"), f->job, &o, NULL);
    struct wl_action *d = add(&a, WL_ACT_DELETE_COPY);
    d->cluster = xstrdup("c1");
    d->ns = xstrdup("default");
    d->name = xstrdup("sample");
    add(&a, WL_ACT_RESERVE)->cluster = xstrdup("c1");
    add(&a, WL_ACT_UNRESERVE);
    add(&a, WL_ACT_REQUEUE)->after_ms = 5000;
    add(&a, WL_ACT_REQUEUE)->after_ms = 1000;
    struct wl_action *ev = add(&a, WL_ACT_EVENT);
    ev->event_type = "Normal";
    ev->reason = xstrdup("Dispatched");
    ev->message = xstrdup("no recorder: skipped");

    struct wlx_ops ops = {.hub = f->hub,
                          .worker = worker_of,
                          .reserve = on_reserve,
                          .unreserve = on_unreserve,
                          .ud = f,
                          .resv_ud = f};
    assert_int_equal(wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, f->job,
                                 kind_lookup("batch/v1", "Job"), &a, on_done, f, NULL),
                     0);
    run(f);
    assert_int_equal(f->res.calls, 6);
    assert_int_equal(f->res.failed, 1);
    assert_int_equal(f->res.rc, f->res.err.code);
    assert_true(f->res.rc < 0);
    assert_int_equal(f->res.err.http_status, 409);
    assert_non_null(strstr(f->res.err.msg, "modified"));
    assert_int_equal(f->res.requeue_ms, 1000);
    /* the hub job's writes went through although the Workload's failed: the controller
     * logs a finish from this */
    assert_true(f->res.job_patched);
    assert_true(f->res.job_status_written);
    assert_false(f->res.wl_changed);
    /* the create found our copy (409, then the GET): there, not made by this pass */
    assert_true(f->res.copy_found);
    assert_false(f->res.copy_created);
    assert_string_equal(f->reserved, "c1");
    assert_int_equal(f->unreserved, 1);
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    assert_int_equal(fakesrv_unmatched(f->w_srv), 0);

    struct fakesrv_req *r = find_req(f->hub_srv, "PATCH", job_path);
    assert_string_equal(fakesrv_req_header(r, "content-type"), "application/merge-patch+json");
    assert_body(r, a.v[0].patch);
    fakesrv_req_free(r);
    r = find_req(f->hub_srv, "PATCH", wl_status);
    assert_string_equal(fakesrv_req_header(r, "content-type"), "application/merge-patch+json");
    assert_body(r, w->patch);
    fakesrv_req_free(r);
    r = find_req(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs");
    assert_body(r, c->object);
    fakesrv_req_free(r);
    r = find_req(f->w_srv, "DELETE", "/apis/batch/v1/namespaces/default/jobs/sample");
    assert_non_null(strstr(r->body, "\"propagationPolicy\":\"Background\""));
    fakesrv_req_free(r);
    wl_actions_free(&a);
}

/* A hub write changed the object when its answer's resourceVersion differs from the one the
 * pass read (wl "10", job "5"): only that is read from the answer (scanned, not parsed), with
 * escapes decoded, other resourceVersion fields ignored, and no value counting as a change. */
static void test_changed_by_resource_version(void **state)
{
    struct fx *f = *state;
    const char *job_path = "/apis/batch/v1/namespaces/default/jobs/sample";
    const char *wl_status =
        "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/workloads/job-sample-1a2b3/status";
    static const struct {
        const char *wl_answer, *job_answer;
        bool wl_changed, job_changed;
    } cases[] = {
        {"{\"metadata\":{\"name\":\"job-sample-1a2b3\",\"resourceVersion\":\"1\\u0030\"},"
         "\"status\":{\"metadata\":{\"resourceVersion\":\"99\"}}}",
         "{\"metadata\":{\"labels\":{\"resourceVersion\":\"5\"},\"resourceVersion\":\"6\"}}", false,
         true},
        {"{\"metadata\":{\"resourceVersion\":\"11\"}}", "{\"metadata\":{}}", true, true},
        {"{\"metadata\":{\"resourceVersion\":\"10\"}}",
         "{\"metadata\":{\"resourceVersion\":\"5\"}}", false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fakesrv_push_json(f->hub_srv, "PATCH", wl_status, NULL, 200, cases[i].wl_answer);
        fakesrv_push_json(f->hub_srv, "PATCH", job_path, NULL, 200, cases[i].job_answer);
        struct wl_actions a;
        wl_actions_init(&a);
        add(&a, WL_ACT_PATCH_WL_STATUS)->patch =
            json_pack("{s:{s:s}}", "metadata", "resourceVersion", "10");
        add(&a, WL_ACT_PATCH_JOB)->patch =
            json_pack("{s:{s:s}}", "metadata", "resourceVersion", "5");
        struct wlx_ops ops = {.hub = f->hub, .worker = worker_of, .ud = f};
        f->finished = false;
        assert_int_equal(wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, f->job,
                                     kind_lookup("batch/v1", "Job"), &a, on_done, f, NULL),
                         0);
        run(f);
        assert_int_equal(f->res.rc, 0);
        assert_int_equal(f->res.calls, 2);
        assert_int_equal(f->res.wl_changed, cases[i].wl_changed);
        assert_int_equal(f->res.job_changed, cases[i].job_changed);
        wl_actions_free(&a);
    }
}

/* job_status_written says the status patch itself went through, not another hub job write of
 * the batch */
static void test_job_status_refused(void **state)
{
    struct fx *f = *state;
    fakesrv_push_status(f->hub_srv, "PATCH", "/apis/batch/v1/namespaces/default/jobs/sample/status",
                        409, "Conflict", "the object has been modified");
    fakesrv_push_json(f->hub_srv, "PATCH", "/apis/batch/v1/namespaces/default/jobs/sample", NULL,
                      200, "{\"metadata\":{\"resourceVersion\":\"6\"}}");
    struct wl_actions a;
    wl_actions_init(&a);
    add(&a, WL_ACT_PATCH_JOB_STATUS)->patch = json_pack("{s:{s:i}}", "status", "succeeded", 3);
    add(&a, WL_ACT_PATCH_JOB)->patch = json_pack("{s:{s:s}}", "metadata", "resourceVersion", "5");
    struct wlx_ops ops = {.hub = f->hub, .worker = worker_of, .ud = f};
    assert_int_equal(wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, f->job,
                                 kind_lookup("batch/v1", "Job"), &a, on_done, f, NULL),
                     0);
    run(f);
    assert_true(f->res.rc < 0);
    assert_true(f->res.job_patched);
    assert_true(f->res.job_changed);
    assert_false(f->res.job_status_written);
    wl_actions_free(&a);
}

/* A job patch of labels and annotations only goes through /status where the kind's server
 * keeps them there (batch/v1 Job) and the ops allow it, and its answer must show them (a key
 * set to null must be gone): else it fails with meta_status_dropped. Any other patch, kind or
 * setting goes through the job itself. */
static void test_meta_via_status(void **state)
{
    struct fx *f = *state;
    const char *job = "/apis/batch/v1/namespaces/default/jobs/sample";
    const char *job_st = "/apis/batch/v1/namespaces/default/jobs/sample/status";
    const char *ptj = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/sample";
    const char *meta = "{\"metadata\":{\"resourceVersion\":\"5\",\"labels\":{\"l\":\"v\"},"
                       "\"annotations\":{\"kueue-ks.io/remote-status\":\"x\",\"gone\":null}}}";
    const char *shown = "{\"metadata\":{\"resourceVersion\":\"6\",\"labels\":{\"l\":\"v\"},"
                        "\"annotations\":{\"kueue-ks.io/remote-status\":\"x\"}}}";
#define BARE "{\"metadata\":{\"resourceVersion\":\"6\"}}"
    static const struct {
        /* "meta": labels and annotations only; "spec": with the spec; "finalizers": with
         * finalizers; "clear": every annotation removed (the map null) */
        const char *patch_kind;
        const char *kind;
        bool allowed;
        const char *answer;
        bool dropped;
    } cases[] = {
        {"meta", "Job", true, NULL, false},
        {"meta", "Job", true,
         "{\"metadata\":{\"resourceVersion\":\"6\",\"annotations\":{"
         "\"kueue-ks.io/remote-status\":\"x\"}}}",
         true},
        {"meta", "Job", true,
         "{\"metadata\":{\"resourceVersion\":\"6\",\"labels\":{\"l\":\"v\"},"
         "\"annotations\":{\"kueue-ks.io/remote-status\":\"x\",\"gone\":\"\"}}}",
         true},
        {"clear", "Job", true,
         "{\"metadata\":{\"resourceVersion\":\"6\",\"labels\":{\"l\":\"v\"},"
         "\"annotations\":{}}}",
         false},
        {"clear", "Job", true, NULL, true}, /* the annotations still there */
        {"spec", "Job", true, NULL, false},
        {"finalizers", "Job", true, NULL, false},
        {"meta", "PyTorchJob", true, BARE, false},
        {"meta", "Job", false, BARE, false}, /* through the job: the answer is not checked */
    };
#undef BARE
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool pt = strcmp(cases[i].kind, "PyTorchJob") == 0;
        const char *pk = cases[i].patch_kind;
        bool via = cases[i].allowed && !pt && (!strcmp(pk, "meta") || !strcmp(pk, "clear"));
        const char *path = pt ? ptj : via ? job_st : job;
        fakesrv_clear(f->hub_srv);
        fakesrv_push_json(f->hub_srv, "PATCH", path, NULL, 200,
                          cases[i].answer ? cases[i].answer : shown);
        struct wl_actions a;
        wl_actions_init(&a);
        json_t *patch = json_loads(meta, 0, NULL);
        json_t *md = json_object_get(patch, "metadata");
        if (!strcmp(pk, "spec"))
            json_object_set_new(patch, "spec", json_pack("{s:b}", "suspend", 0));
        else if (!strcmp(pk, "finalizers"))
            json_object_set_new(md, "finalizers", json_pack("[s]", "x/y"));
        else if (!strcmp(pk, "clear"))
            json_object_set_new(md, "annotations", json_null());
        struct wl_action *x = add(&a, WL_ACT_PATCH_JOB);
        x->patch = patch;
        x->relay = true;
        struct wlx_ops ops = {
            .hub = f->hub, .worker = worker_of, .ud = f, .job_meta_via_status = cases[i].allowed};
        f->finished = false;
        assert_int_equal(wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, f->job,
                                     pt ? kind_lookup("kubeflow.org/v1", "PyTorchJob")
                                        : kind_lookup("batch/v1", "Job"),
                                     &a, on_done, f, NULL),
                         0);
        run(f);
        assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
        struct fakesrv_req *r = fakesrv_req_get(f->hub_srv, fakesrv_nreq(f->hub_srv) - 1);
        assert_string_equal(r->path, path);
        assert_body(r, patch);
        fakesrv_req_free(r);
        assert_int_equal(f->res.meta_status_dropped, cases[i].dropped);
        if (cases[i].dropped) {
            assert_int_equal(f->res.rc, -EPROTO);
            assert_false(f->res.job_patched);
            assert_non_null(strstr(f->res.err.msg, "status subresource"));
        } else {
            assert_int_equal(f->res.rc, 0);
            assert_true(f->res.job_patched);
            assert_true(f->res.job_changed);
        }
        wl_actions_free(&a);
    }
}

static void test_ssa_and_missing_worker(void **state)
{
    struct fx *f = *state;
    const char *wl_status =
        "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads/job-sample-1a2b3/status";
    fakesrv_push_json(f->hub_srv, "PATCH", wl_status, NULL, 200, "{}");
    struct wl_actions a;
    wl_actions_init(&a);
    struct wl_action *w = add(&a, WL_ACT_PATCH_WL_STATUS);
    w->patch = json_pack("{s:{s:s}}", "metadata", "resourceVersion", "10");
    w->apply = json_pack("{s:s,s:{s:[{s:s}]}}", "kind", "Workload", "status", "admissionChecks",
                         "name", "ks");
    struct wl_action *d = add(&a, WL_ACT_DELETE_COPY);
    d->cluster = xstrdup("gone");
    d->ns = xstrdup("default");
    d->name = xstrdup("sample");
    struct wlx_ops ops = {.hub = f->hub,
                          .worker = worker_of,
                          .ud = f,
                          .kueue_version = "v1beta2",
                          .server_side_apply = true};
    assert_int_equal(wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, f->job,
                                 kind_lookup("batch/v1", "Job"), &a, on_done, f, NULL),
                     0);
    run(f);
    assert_int_equal(f->res.rc, -ENOTCONN);
    assert_non_null(strstr(f->res.err.msg, "gone"));
    assert_int_equal(f->res.calls, 1);
    assert_int_equal(f->res.requeue_ms, -1);
    struct fakesrv_req *r = find_req(f->hub_srv, "PATCH", wl_status);
    assert_string_equal(fakesrv_req_header(r, "content-type"), "application/apply-patch+yaml");
    assert_non_null(strstr(r->query, "fieldManager=kueue-ks"));
    assert_non_null(strstr(r->query, "force=true"));
    assert_body(r, w->apply);
    fakesrv_req_free(r);
    wl_actions_free(&a);
}

static void test_no_calls_completes_at_once(void **state)
{
    struct fx *f = *state;
    struct wl_actions a;
    wl_actions_init(&a);
    add(&a, WL_ACT_REQUEUE)->after_ms = 30000;
    struct wlx_ops ops = {.hub = f->hub};
    assert_int_equal(wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, NULL,
                                 kind_lookup("batch/v1", "Job"), &a, on_done, f, NULL),
                     0);
    assert_true(f->finished);
    assert_int_equal(f->res.rc, 0);
    assert_int_equal(f->res.requeue_ms, 30000);
    /* a job patch without a job fails without a request */
    f->finished = false;
    add(&a, WL_ACT_PATCH_JOB)->patch = json_object();
    assert_int_equal(wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, NULL,
                                 kind_lookup("batch/v1", "Job"), &a, on_done, f, NULL),
                     0);
    assert_true(f->finished);
    assert_int_equal(f->res.rc, -EINVAL);
    assert_int_equal(f->res.calls, 0);
    assert_int_equal(fakesrv_nreq(f->hub_srv), 0);
    struct err e;
    assert_int_equal(wlx_perform(NULL, "k", NULL, NULL, NULL, &a, on_done, f, &e), -EINVAL);
    wl_actions_free(&a);
}

/* A discovered kind outside the table: its own REST paths on hub and worker;
 * without a status subresource the status goes through the object itself. */
static void test_dynamic_kind_paths(void **state)
{
    struct fx *f = *state;
    json_t *rl =
        json_loads("{\"resources\":[{\"name\":\"widgets\",\"kind\":\"Widget\",\"namespaced\":true,"
                   "\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"patch\",\"delete\"]}]}",
                   0, NULL);
    struct kind_def *k = kind_dynamic_new(rl, "example.com", "v1", "Widget", NULL);
    json_decref(rl);
    assert_non_null(k);
    assert_true(k->no_status_subresource);
    const char *obj_path = "/apis/example.com/v1/namespaces/default/widgets/sample";
    fakesrv_push_json(f->hub_srv, "PATCH", obj_path, NULL, 200, "{}");
    fakesrv_push_json(f->w_srv, "POST", "/apis/example.com/v1/namespaces/default/widgets", NULL,
                      201, "{}");
    fakesrv_push_json(f->w_srv, "DELETE", "/apis/example.com/v1/namespaces/other/widgets/old", NULL,
                      200, "{}");
    struct wl_actions a;
    wl_actions_init(&a);
    add(&a, WL_ACT_PATCH_JOB_STATUS)->patch = json_pack("{s:{s:s}}", "status", "phase", "Done");
    struct wl_action *c = add(&a, WL_ACT_CREATE_COPY);
    c->cluster = xstrdup("c1");
    c->object = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "example.com/v1", "kind", "Widget",
                          "metadata", "name", "sample", "namespace", "default");
    struct wl_action *d = add(&a, WL_ACT_DELETE_COPY);
    d->cluster = xstrdup("c1");
    d->ns = xstrdup("other");
    d->name = xstrdup("old");
    struct wlx_ops ops = {.hub = f->hub, .worker = worker_of, .ud = f};
    assert_int_equal(
        wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, f->job, k, &a, on_done, f, NULL), 0);
    run(f);
    assert_int_equal(f->res.rc, 0);
    assert_int_equal(f->res.calls, 3);
    assert_true(f->res.copy_created);
    assert_false(f->res.copy_found);
    assert_int_equal(fakesrv_unmatched(f->hub_srv), 0);
    assert_int_equal(fakesrv_unmatched(f->w_srv), 0);
    struct fakesrv_req *r = find_req(f->hub_srv, "PATCH", obj_path);
    assert_body(r, a.v[0].patch);
    fakesrv_req_free(r);
    wl_actions_free(&a);
    kind_dynamic_free(k);
}

/* A copy is deleted by name, so the DELETE carries the uid the decision saw as
 * a precondition: a stale view (the copy already replaced by a new job of the
 * same name) must not delete the new object. The 409 a uid mismatch gets
 * means ours is gone: success. */
static void test_delete_uid_precondition(void **state)
{
    struct fx *f = *state;
    const char *path = "/apis/batch/v1/namespaces/default/jobs/sample";
    fakesrv_push_status(f->w_srv, "DELETE", path, 409, "Conflict",
                        "Precondition failed: UID in precondition: copy-uid-1, UID in object "
                        "meta: copy-uid-2");
    struct wl_actions a;
    wl_actions_init(&a);
    struct wl_action *d = add(&a, WL_ACT_DELETE_COPY);
    d->cluster = xstrdup("c1");
    d->ns = xstrdup("default");
    d->name = xstrdup("sample");
    d->uid = xstrdup("copy-uid-1");
    struct wlx_ops ops = {.hub = f->hub, .worker = worker_of, .ud = f};
    assert_int_equal(wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, f->job,
                                 kind_lookup("batch/v1", "Job"), &a, on_done, f, NULL),
                     0);
    run(f);
    assert_int_equal(f->res.calls, 1);
    assert_int_equal(f->res.rc, 0);
    struct fakesrv_req *r = find_req(f->w_srv, "DELETE", path);
    json_t *body = json_loads(r->body, 0, NULL);
    assert_string_equal(jx_str(body, "preconditions.uid", ""), "copy-uid-1");
    assert_string_equal(jx_str(body, "propagationPolicy", ""), "Background");
    json_decref(body);
    fakesrv_req_free(r);
    wl_actions_free(&a);
}

/* Perform one CREATE_COPY of the sample job on c1 and wait for the result (f->res). */
static void perform_create(struct fx *f)
{
    struct wl_actions a;
    wl_actions_init(&a);
    struct wl_action *c = add(&a, WL_ACT_CREATE_COPY);
    c->cluster = xstrdup("c1");
    struct xf_origin o = {.origin = "hub", .origin_uid = "job-uid"};
    c->object = xf_downsync(kind_lookup("batch/v1", "Job"), f->job, &o, NULL);
    struct wlx_ops ops = {.hub = f->hub, .worker = worker_of, .ud = f};
    f->finished = false;
    assert_int_equal(wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, f->job,
                                 kind_lookup("batch/v1", "Job"), &a, on_done, f, NULL),
                     0);
    run(f);
    wl_actions_free(&a);
}

/* A create that finds an object of the same name: only our copy of this job
 * counts as created; an older copy of ours, or an object kueue-ks did not
 * create, fails the pass with a message saying which. */
static void create_conflict(struct fx *f, const char *existing, int want_rc, const char *want_msg)
{
    fakesrv_push_status(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", 409,
                        "AlreadyExists", "jobs.batch \"sample\" already exists");
    fakesrv_push_json(f->w_srv, "GET", "/apis/batch/v1/namespaces/default/jobs/sample", NULL, 200,
                      existing);
    perform_create(f);
    assert_int_equal(f->res.rc, want_rc);
    assert_int_equal(f->res.calls, 2);
    if (want_msg)
        assert_non_null(strstr(f->res.err.msg, want_msg));
    assert_int_equal(fakesrv_unmatched(f->w_srv), 0);
}

static void test_create_conflict(void **state)
{
    struct fx *f = *state;
    create_conflict(f,
                    "{\"metadata\":{\"name\":\"sample\",\"labels\":{\"app.kubernetes.io/"
                    "managed-by\":\"kueue-ks\",\"kueue-ks.io/origin\":\"hub\","
                    "\"kueue-ks.io/origin-uid\":\"job-uid\"}}}",
                    0, NULL);
    create_conflict(f,
                    "{\"metadata\":{\"name\":\"sample\",\"labels\":{\"app.kubernetes.io/"
                    "managed-by\":\"kueue-ks\",\"kueue-ks.io/origin\":\"hub\","
                    "\"kueue-ks.io/origin-uid\":\"old-uid\"}}}",
                    -EEXIST, "an older copy");
    create_conflict(f, "{\"metadata\":{\"name\":\"sample\",\"labels\":{\"team\":\"x\"}}}", -EEXIST,
                    "cluster c1 already has Job default/sample that kueue-ks did not create");
}

/* A worker's refusal of the copy (422 Invalid: e.g. annotations over 256 KiB once the copy's
 * own are added) is reported as such, with the worker's message; an outage (503) is not. */
static void create_refused(struct fx *f, int status, const char *reason, bool want_refused)
{
    fakesrv_push_status(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", status, reason,
                        "Job.batch \"sample\" is invalid: metadata.annotations: Too long: must "
                        "have at most 262144 bytes");
    perform_create(f);
    assert_true(f->res.rc < 0);
    assert_int_equal(f->res.refused, want_refused);
    assert_non_null(strstr(f->res.err.msg, "must have at most 262144 bytes"));
    if (want_refused)
        assert_non_null(strstr(f->res.refused_err.msg, "must have at most 262144 bytes"));
}

static void test_create_refused(void **state)
{
    struct fx *f = *state;
    create_refused(f, 422, "Invalid", true);
    create_refused(f, 403, "Forbidden", true);
    create_refused(f, 503, "ServiceUnavailable", false);
}

static struct kube_client *worker_counted(void *ud, const char *cluster)
{
    struct fx *f = ud;
    f->worker_asks++;
    return worker_of(ud, cluster);
}

/* A placing pass's copy and Dispatched Event (after_job): nothing of them before the job
 * patch's answer; the copy made once it went through (c1), dropped for a worker without a
 * client (c9: no failure, the next pass makes it), and not made at all when the patch fails. */
static void chained(struct fx *f, int job_status, const char *cluster)
{
    const char *job_path = "/apis/batch/v1/namespaces/default/jobs/sample";
    if (job_status == 200)
        fakesrv_push_json(f->hub_srv, "PATCH", job_path, NULL, 200,
                          "{\"metadata\":{\"resourceVersion\":\"6\"}}");
    else
        fakesrv_push_status(f->hub_srv, "PATCH", job_path, job_status, "Conflict",
                            "the object has been modified");
    fakesrv_push_json(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, 201, "{}");
    struct wl_actions a;
    wl_actions_init(&a);
    add(&a, WL_ACT_PATCH_JOB)->patch = json_pack("{s:{s:s,s:{s:s}}}", "metadata", "resourceVersion",
                                                 "5", "labels", "kubestellar.io/cluster", cluster);
    struct wl_action *c = add(&a, WL_ACT_CREATE_COPY);
    c->cluster = xstrdup(cluster);
    c->after_job = true;
    struct xf_origin o = {.origin = "hub", .origin_uid = "job-uid"};
    c->object = xf_downsync(kind_lookup("batch/v1", "Job"), f->job, &o, NULL);
    struct wl_action *ev = add(&a, WL_ACT_EVENT);
    ev->event_type = "Normal";
    ev->reason = xstrdup("Dispatched");
    ev->message = xstrdup("no recorder: skipped");
    ev->after_job = true;
    struct evrec *rec = NULL; /* the Dispatched Event goes with the copy */
    struct evrec_config ec = {.component = "kueue-ks"};
    assert_int_equal(evrec_new(f->hub, &ec, NULL, &rec, NULL), 0);
    struct wlx_ops ops = {.hub = f->hub, .events = rec, .worker = worker_counted, .ud = f};
    f->finished = false;
    f->worker_asks = 0;
    assert_int_equal(wlx_perform(&ops, "default/job-sample-1a2b3", f->wl, f->job,
                                 kind_lookup("batch/v1", "Job"), &a, on_done, f, NULL),
                     0);
    assert_int_equal(f->worker_asks, 0); /* the patch is not answered yet */
    wl_actions_free(&a);                 /* the batch keeps its own */
    run(f);
    bool made = job_status == 200 && strcmp(cluster, "c1") == 0;
    assert_int_equal(f->worker_asks, job_status == 200 ? 1 : 0);
    assert_int_equal(f->res.copy_created, made);
    assert_int_equal(f->res.copy_dropped, !made);
    assert_int_equal(f->res.calls, made ? 2 : 1);
    struct evrec_stats es;
    evrec_get_stats(rec, &es);
    assert_int_equal(evrec_pending(rec) + es.created + es.failed + es.patched, made ? 1 : 0);
    evrec_free(rec);
    assert_int_equal(f->res.rc == 0, job_status == 200);
    assert_int_equal(fakesrv_nreq(f->w_srv), made ? 1 : 0);
    if (made) {
        struct fakesrv_req *r =
            find_req(f->w_srv, "POST", "/apis/batch/v1/namespaces/default/jobs");
        assert_non_null(strstr(r->body, "\"kueue-ks.io/origin-uid\":\"job-uid\""));
        fakesrv_req_free(r);
    }
}

static void test_chained_copy(void **state)
{
    struct fx *f = *state;
    chained(f, 200, "c1");
    fakesrv_stop(f->w_srv); /* a fresh request log for the next */
    f->w_srv = fakesrv_start(NULL);
    kube_client_free(f->w);
    f->w = client_for(f->loop, f->w_srv);
    chained(f, 409, "c1");
    chained(f, 200, "c9");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_all_actions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_status_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta_via_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ssa_and_missing_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_by_resource_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_calls_completes_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dynamic_kind_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_uid_precondition, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chained_copy, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
