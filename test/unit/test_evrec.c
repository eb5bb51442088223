/*
 * Unit tests for pkg/kube/evrec: the recorder writes through the real REST
 * client to the scripted fake API server. A fake monotonic clock drives the
 * spam filter refill and the 10-minute aggregation window.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ev.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/kube/client.h"
#include "pkg/kube/evrec.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

#define EV_COLL(ns) "/api/v1/namespaces/" ns "/events"

struct fx {
    struct ev_loop *loop;
    struct fakesrv *srv;
    struct kube_client *client;
    struct evrec *rec;
    double now; /* fake monotonic clock */
    json_t *wl; /* a namespaced involved object */
};

static double fake_now(void *ud)
{
    return ((struct fx *)ud)->now;
}

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->srv = fakesrv_start(NULL);
    struct kube_rest_config *cfg = kube_rest_config_new();
    cfg->server = xstrdup(fakesrv_url(f->srv));
    struct err e = {0};
    int rc = kube_client_new(f->loop, cfg, NULL, NULL, &f->client, &e);
    kube_rest_config_free(cfg);
    if (rc < 0)
        return -1;
    f->now = 1000;
    struct evrec_config ec = {
        .component = "kueue-ks", .host = "node-1", .now = fake_now, .now_ud = f};
    if (evrec_new(f->client, &ec, NULL, &f->rec, &e) < 0)
        return -1;
    f->wl = json_loads("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
                       "\"metadata\":{\"name\":\"job-a\",\"namespace\":\"team-a\","
                       "\"uid\":\"u-1\",\"resourceVersion\":\"42\"},\"spec\":{}}",
                       0, NULL);
    /* Creates and patches succeed unless a test scripts otherwise first. */
    fakesrv_push(
        f->srv, &(struct fakesrv_resp){.method = "POST", .status = 201, .body = "{}", .times = -1});
    fakesrv_push(f->srv, &(struct fakesrv_resp){
                             .method = "PATCH", .status = 200, .body = "{}", .times = -1});
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    evrec_free(f->rec);
    kube_client_free(f->client);
    fakesrv_stop(f->srv);
    ev_loop_destroy(f->loop);
    json_decref(f->wl);
    free(f);
    return 0;
}

static void on_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fx *f = w->data;
    if (evrec_pending(f->rec) == 0)
        ev_break(loop, EVBREAK_ALL);
}

static void on_limit(struct ev_loop *loop, ev_timer *w, int revents)
{
    *(bool *)w->data = true;
    ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until every queued write is done (fails after 5 s). */
static void drain(struct fx *f)
{
    bool timed_out = false;
    ev_timer poll, limit;
    ev_timer_init(&poll, on_poll, 0.002, 0.002);
    poll.data = f;
    ev_timer_init(&limit, on_limit, 5., 0.);
    limit.data = &timed_out;
    ev_timer_start(f->loop, &poll);
    ev_timer_start(f->loop, &limit);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &poll);
    ev_timer_stop(f->loop, &limit);
    assert_false(timed_out);
}

/* Recorded request i: method and path checked, parsed body returned (new reference). */
static json_t *req(struct fx *f, size_t i, const char *method, char *path_out, size_t n)
{
    struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
    assert_non_null(r);
    assert_string_equal(r->method, method);
    if (path_out)
        snprintf(path_out, n, "%s", r->path);
    if (strcmp(method, "PATCH") == 0)
        assert_string_equal(fakesrv_req_header(r, "content-type"), KUBE_CT_MERGE_PATCH);
    json_t *j = json_loads(r->body, 0, NULL);
    assert_non_null(j);
    fakesrv_req_free(r);
    return j;
}

static const char *s_at(json_t *j, const char *a, const char *b)
{
    json_t *v = json_object_get(j, a);
    if (b)
        v = json_object_get(v, b);
    return json_string_value(v);
}

static void get_done(void *ud, const struct kube_result *r)
{
    (void)ud;
    (void)r;
}

/* Events go on a token bucket of their own (controller-runtime's recorder has a client of its
 * own): an Event is written while the client's main bucket is used up by other requests. */
static void test_events_not_behind_writes(void **state)
{
    struct fx *f = *state;
    struct kube_rest_config *cfg = kube_rest_config_new();
    cfg->server = xstrdup(fakesrv_url(f->srv));
    struct kube_client_opts o = {.qps = 0.1, .burst = 1}; /* a token every 10 s */
    struct kube_client *c = NULL;
    struct err e = {0};
    assert_int_equal(kube_client_new(f->loop, cfg, &o, NULL, &c, &e), 0);
    kube_rest_config_free(cfg);
    struct evrec *rec = NULL;
    struct evrec_config ec = {
        .component = "kueue-ks", .host = "node-1", .now = fake_now, .now_ud = f};
    assert_int_equal(evrec_new(c, &ec, NULL, &rec, &e), 0);
    fakesrv_push(f->srv,
                 &(struct fakesrv_resp){.method = "GET", .status = 200, .body = "{}", .times = -1});
    struct kube_request g = {.method = "GET", .path = "/q"};
    for (int i = 0; i < 2; i++) /* the first takes the main bucket's token, the second waits */
        assert_int_equal(kube_client_do(c, &g, get_done, NULL, NULL, &e), 0);
    evrec_event(rec, f->wl, "Normal", "Dispatched", "placed on %s", "cluster-1");
    struct evrec *keep = f->rec;
    f->rec = rec;
    drain(f); /* fails after 5 s: an Event behind the second GET would wait 10 s */
    f->rec = keep;
    bool posted = false;
    for (size_t i = 0; i < fakesrv_nreq(f->srv); i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        if (!strcmp(r->method, "POST") && strstr(r->path, "/events"))
            posted = true;
        fakesrv_req_free(r);
    }
    assert_true(posted);
    evrec_free(rec);
    kube_client_free(c);
}

static void test_create_repeat_and_new_message(void **state)
{
    struct fx *f = *state;
    evrec_event(f->rec, f->wl, "Normal", "Admitted", "placed on %s", "cluster-1");
    /* Asynchronous: nothing was sent from inside the call. */
    assert_int_equal(evrec_pending(f->rec), 1);
    assert_int_equal(fakesrv_nreq(f->srv), 0);
    drain(f);
    assert_int_equal(fakesrv_nreq(f->srv), 1);
    char path[256];
    json_t *ev = req(f, 0, "POST", path, sizeof(path));
    assert_string_equal(path, EV_COLL("team-a"));
    const char *name = s_at(ev, "metadata", "name");
    assert_non_null(name);
    assert_memory_equal(name, "job-a.", 6);
    assert_true(strlen(name) > 6);
    char first_name[128];
    snprintf(first_name, sizeof(first_name), "%s", name);
    assert_string_equal(s_at(ev, "metadata", "namespace"), "team-a");
    assert_string_equal(s_at(ev, "involvedObject", "kind"), "Workload");
    assert_string_equal(s_at(ev, "involvedObject", "apiVersion"), "kueue.x-k8s.io/v1beta1");
    assert_string_equal(s_at(ev, "involvedObject", "name"), "job-a");
    assert_string_equal(s_at(ev, "involvedObject", "namespace"), "team-a");
    assert_string_equal(s_at(ev, "involvedObject", "uid"), "u-1");
    assert_string_equal(s_at(ev, "involvedObject", "resourceVersion"), "42");
    assert_string_equal(s_at(ev, "type", NULL), "Normal");
    assert_string_equal(s_at(ev, "reason", NULL), "Admitted");
    assert_string_equal(s_at(ev, "message", NULL), "placed on cluster-1");
    assert_string_equal(s_at(ev, "source", "component"), "kueue-ks");
    assert_string_equal(s_at(ev, "source", "host"), "node-1");
    assert_string_equal(s_at(ev, "reportingComponent", NULL), "kueue-ks");
    assert_string_equal(s_at(ev, "reportingInstance", NULL), "node-1");
    assert_int_equal(json_integer_value(json_object_get(ev, "count")), 1);
    const char *ft = s_at(ev, "firstTimestamp", NULL);
    assert_non_null(ft);
    assert_int_equal(strlen(ft), 20); /* 2026-11-22T14:33:56Z */
    assert_string_equal(ft, s_at(ev, "lastTimestamp", NULL));
    json_decref(ev);

    /* The same event again (a minute later): PATCH count 2 on the same Event. */
    f->now += 60;
    evrec_event(f->rec, f->wl, "Normal", "Admitted", "placed on %s", "cluster-1");
    drain(f);
    assert_int_equal(fakesrv_nreq(f->srv), 2);
    json_t *p = req(f, 1, "PATCH", path, sizeof(path));
    char want[256];
    snprintf(want, sizeof(want), EV_COLL("team-a") "/%s", first_name);
    assert_string_equal(path, want);
    assert_int_equal(json_integer_value(json_object_get(p, "count")), 2);
    assert_non_null(s_at(p, "lastTimestamp", NULL));
    assert_null(json_object_get(p, "involvedObject"));
    json_decref(p);

    /* A different message: a new Event with its own name. */
    evrec_event(f->rec, f->wl, "Normal", "Admitted", "placed on %s", "cluster-2");
    drain(f);
    ev = req(f, 2, "POST", path, sizeof(path));
    assert_string_not_equal(s_at(ev, "metadata", "name"), first_name);
    assert_int_equal(json_integer_value(json_object_get(ev, "count")), 1);
    json_decref(ev);

    /* Same message, different type: also new. Then a third repeat: count 3. */
    evrec_event(f->rec, f->wl, "Warning", "Admitted", "placed on cluster-1");
    evrec_event(f->rec, f->wl, "Normal", "Admitted", "placed on cluster-1");
    drain(f);
    json_decref(req(f, 3, "POST", NULL, 0));
    p = req(f, 4, "PATCH", path, sizeof(path));
    assert_string_equal(path, want);
    assert_int_equal(json_integer_value(json_object_get(p, "count")), 3);
    json_decref(p);

    struct evrec_stats st;
    evrec_get_stats(f->rec, &st);
    assert_int_equal(st.created, 3);
    assert_int_equal(st.patched, 2);
    assert_int_equal(st.failed, 0);
}

static void test_window_cluster_scope_and_invalid(void **state)
{
    struct fx *f = *state;
    evrec_event(f->rec, f->wl, "Warning", "NoFit", "no cluster fits");
    drain(f);
    /* More than 10 minutes later the repeat is a new Event, not a PATCH. */
    f->now += 601;
    evrec_event(f->rec, f->wl, "Warning", "NoFit", "no cluster fits");
    drain(f);
    json_t *a = req(f, 0, "POST", NULL, 0);
    json_t *b = req(f, 1, "POST", NULL, 0);
    assert_string_not_equal(s_at(a, "metadata", "name"), s_at(b, "metadata", "name"));
    assert_int_equal(json_integer_value(json_object_get(b, "count")), 1);
    json_decref(a);
    json_decref(b);

    /* A cluster-scoped object: the Event goes to "default". */
    json_t *cq = json_loads("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ClusterQueue\","
                            "\"metadata\":{\"name\":\"cq\",\"uid\":\"u-9\"}}",
                            0, NULL);
    evrec_event(f->rec, cq, "Normal", "QuotaReserved", "ok");
    drain(f);
    char path[256];
    json_t *ev = req(f, 2, "POST", path, sizeof(path));
    assert_string_equal(path, EV_COLL("default"));
    assert_string_equal(s_at(ev, "metadata", "namespace"), "default");
    assert_null(json_object_get(json_object_get(ev, "involvedObject"), "namespace"));
    json_decref(ev);

    /* Invalid input is not sent. */
    evrec_event(f->rec, cq, "Info", "X", "bad type");
    evrec_event(f->rec, json_object_get(cq, "metadata"), "Normal", "X", "no kind");
    evrec_event(f->rec, cq, "Normal", "X", "%s", "bad \xff utf8");
    json_decref(cq);
    assert_int_equal(evrec_pending(f->rec), 0);
    struct evrec_stats st;
    evrec_get_stats(f->rec, &st);
    assert_int_equal(st.invalid, 3);
    assert_int_equal(fakesrv_nreq(f->srv), 3);

    /* Long messages are truncated to 1024 bytes. */
    char *longmsg = xmalloc(3000);
    memset(longmsg, 'm', 2999);
    longmsg[2999] = 0;
    evrec_event(f->rec, f->wl, "Normal", "Long", "%s", longmsg);
    free(longmsg);
    drain(f);
    ev = req(f, 3, "POST", NULL, 0);
    assert_int_equal(strlen(s_at(ev, "message", NULL)), EVREC_MAX_MESSAGE);
    json_decref(ev);
}

static void test_spam_filter(void **state)
{
    struct fx *f = *state;
    /* 30 distinct events about one object in a burst: 25 pass. (Distinct
     * reasons, so that aggregation does not fold them.) */
    char reason[16];
    for (int i = 0; i < 30; i++) {
        snprintf(reason, sizeof(reason), "Step%d", i);
        evrec_event(f->rec, f->wl, "Normal", reason, "step %d", i);
    }
    drain(f);
    assert_int_equal(fakesrv_nreq(f->srv), 25);
    struct evrec_stats st;
    evrec_get_stats(f->rec, &st);
    assert_int_equal(st.spam_dropped, 5);
    /* Repeats count against the same bucket (they are dropped before correlation). */
    evrec_event(f->rec, f->wl, "Normal", "Step0", "step 0");
    evrec_get_stats(f->rec, &st);
    assert_int_equal(st.spam_dropped, 6);

    /* Another object has its own bucket. */
    json_t *other = json_loads("{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                               "\"metadata\":{\"name\":\"p\",\"namespace\":\"team-a\"}}",
                               0, NULL);
    evrec_event(f->rec, other, "Normal", "Progress", "hello");
    json_decref(other);
    drain(f);
    assert_int_equal(fakesrv_nreq(f->srv), 26);

    /* One token per 5 minutes. */
    f->now += 299;
    evrec_event(f->rec, f->wl, "Normal", "Late1", "late 1");
    f->now += 2;
    evrec_event(f->rec, f->wl, "Normal", "Late2", "late 2");
    evrec_event(f->rec, f->wl, "Normal", "Late3", "late 3");
    drain(f);
    assert_int_equal(fakesrv_nreq(f->srv), 27);
    json_t *ev = req(f, 26, "POST", NULL, 0);
    assert_string_equal(s_at(ev, "message", NULL), "late 2");
    json_decref(ev);
    evrec_get_stats(f->rec, &st);
    assert_int_equal(st.spam_dropped, 8);
}

/* client-go's aggregator: the 10th distinct message for one object and
 * reason within 10 minutes becomes a "combined" Event, then PATCHed. */
static void test_similar_events_are_aggregated(void **state)
{
    struct fx *f = *state;
    for (int i = 0; i < 9; i++)
        evrec_event(f->rec, f->wl, "Warning", "Pending", "waiting on quota %d", i);
    drain(f);
    assert_int_equal(fakesrv_nreq(f->srv), 9);
    evrec_event(f->rec, f->wl, "Warning", "Pending", "waiting on quota 9");
    drain(f);
    json_t *ev = req(f, 9, "POST", NULL, 0);
    assert_string_equal(s_at(ev, "message", NULL),
                        "(combined from similar events): waiting on quota 9");
    assert_int_equal(json_integer_value(json_object_get(ev, "count")), 1);
    char agg_name[128];
    snprintf(agg_name, sizeof(agg_name), "%s", s_at(ev, "metadata", "name"));
    json_decref(ev);

    f->now += 30;
    evrec_event(f->rec, f->wl, "Warning", "Pending", "waiting on quota 10");
    drain(f);
    char path[256], want[256];
    json_t *p = req(f, 10, "PATCH", path, sizeof(path));
    snprintf(want, sizeof(want), EV_COLL("team-a") "/%s", agg_name);
    assert_string_equal(path, want);
    assert_int_equal(json_integer_value(json_object_get(p, "count")), 2);
    assert_string_equal(s_at(p, "message", NULL),
                        "(combined from similar events): waiting on quota 10");
    json_decref(p);

    /* Another reason is independent. */
    evrec_event(f->rec, f->wl, "Warning", "Other", "waiting on quota 11");
    drain(f);
    ev = req(f, 11, "POST", NULL, 0);
    assert_string_equal(s_at(ev, "message", NULL), "waiting on quota 11");
    json_decref(ev);

    /* After the window the aggregation starts over. */
    f->now += 601;
    evrec_event(f->rec, f->wl, "Warning", "Pending", "waiting on quota 12");
    drain(f);
    ev = req(f, 12, "POST", NULL, 0);
    assert_string_equal(s_at(ev, "message", NULL), "waiting on quota 12");
    json_decref(ev);
}

static void test_patch_of_vanished_event_creates_it(void **state)
{
    struct fx *f = *state;
    fakesrv_clear(f->srv);
    fakesrv_push(
        f->srv, &(struct fakesrv_resp){.method = "POST", .status = 201, .body = "{}", .times = -1});
    fakesrv_push_status(f->srv, "PATCH", EV_COLL("team-a"), 404, "NotFound", "events not found");
    evrec_event(f->rec, f->wl, "Normal", "Started", "go");
    evrec_event(f->rec, f->wl, "Normal", "Started", "go");
    drain(f);
    assert_int_equal(fakesrv_nreq(f->srv), 3);
    json_t *a = req(f, 0, "POST", NULL, 0);
    json_t *p = req(f, 1, "PATCH", NULL, 0);
    json_t *b = req(f, 2, "POST", NULL, 0);
    assert_string_equal(s_at(a, "metadata", "name"), s_at(b, "metadata", "name"));
    assert_int_equal(json_integer_value(json_object_get(b, "count")), 2);
    json_decref(a);
    json_decref(p);
    json_decref(b);
    struct evrec_stats st;
    evrec_get_stats(f->rec, &st);
    assert_int_equal(st.created, 2);
    assert_int_equal(st.failed, 0);
}

static void test_queue_bound_and_free_with_pending(void **state)
{
    struct fx *f = *state;
    evrec_free(f->rec);
    struct err e = {0};
    struct evrec_config ec = {.component = "kueue-ks", .max_queued = 3, .burst = 100};
    assert_int_equal(evrec_new(f->client, &ec, NULL, &f->rec, &e), 0);
    for (int i = 0; i < 5; i++)
        evrec_event(f->rec, f->wl, "Normal", "Q", "m%d", i);
    struct evrec_stats st;
    evrec_get_stats(f->rec, &st);
    assert_int_equal(st.queue_dropped, 2);
    assert_int_equal(evrec_pending(f->rec), 3);
    /* Freed with writes queued: nothing leaks, nothing is sent later. */
    evrec_free(f->rec);
    f->rec = NULL;
    assert_int_equal(evrec_new(f->client, &(struct evrec_config){0}, NULL, &f->rec, &e), -EINVAL);
    assert_null(f->rec);
    ev_run(f->loop, EVRUN_NOWAIT);
    assert_int_equal(fakesrv_nreq(f->srv), 0);
}

static void on_arrived(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fx *f = w->data;
    if (fakesrv_nreq(f->srv) >= 1)
        ev_break(loop, EVBREAK_ALL);
}

/* The client goes away with writes queued: they are dropped (counted), nothing leaks. */
static void test_client_shutdown_drops_queue(void **state)
{
    struct fx *f = *state;
    fakesrv_clear(f->srv);
    fakesrv_push(f->srv,
                 &(struct fakesrv_resp){
                     .method = "POST", .status = 201, .body = "{}", .delay_s = 0.5, .times = -1});
    char reason[16];
    for (int i = 0; i < 5; i++) {
        snprintf(reason, sizeof(reason), "R%d", i);
        evrec_event(f->rec, f->wl, "Normal", reason, "m");
    }
    bool timed_out = false;
    ev_timer poll, limit;
    ev_timer_init(&poll, on_arrived, 0.002, 0.002);
    poll.data = f;
    ev_timer_init(&limit, on_limit, 5., 0.);
    limit.data = &timed_out;
    ev_timer_start(f->loop, &poll);
    ev_timer_start(f->loop, &limit);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &poll);
    ev_timer_stop(f->loop, &limit);
    assert_false(timed_out);
    assert_int_equal(evrec_pending(f->rec), 5); /* one in flight, four queued */
    kube_client_free(f->client);
    f->client = NULL;
    assert_int_equal(evrec_pending(f->rec), 0);
    struct evrec_stats st;
    evrec_get_stats(f->rec, &st);
    assert_int_equal(st.failed, 5);
    assert_int_equal(st.created, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_repeat_and_new_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_not_behind_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_cluster_scope_and_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spam_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_similar_events_are_aggregated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_patch_of_vanished_event_creates_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_bound_and_free_with_pending, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_shutdown_drops_queue, setup, teardown),
    };
    return cmocka_run_group_tests_name("events", tests, NULL, NULL);
}
