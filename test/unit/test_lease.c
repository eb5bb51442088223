/*
 * Unit tests for pkg/kube/lease: the elector talks through the real REST
 * client to the scripted fake API server (test/support/fakesrv). Durations
 * are shortened (retry 100 ms, renew deadline 500 ms); the Lease stores
 * whole seconds, so expiry waits take 1 s. Every loop run has a timeout.
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

#include "pkg/httpd/httpd.h"
#include "pkg/kube/client.h"
#include "pkg/kube/lease.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

#define NS        "kueue-system"
#define LNAME     "kueue-ks-leader"
#define ITEM_PATH "/apis/coordination.k8s.io/v1/namespaces/" NS "/leases/" LNAME
#define COLL_PATH "/apis/coordination.k8s.io/v1/namespaces/" NS "/leases"

struct cand;

struct fx {
    struct ev_loop *loop;
    struct fakesrv *srv;
    struct kube_client *client;
    struct lease_elector *le;
    int started, stopped, new_leaders;
    char leaders[8][64]; /* on_new_leader identities in order */
    double t_started, t_stopped;
    bool stop_done;
    int stop_rc;
    struct cand *cands; /* test_candidates_race_failover_and_handoff */
    size_t ncands;
};

static void cb_started(void *ud)
{
    struct fx *f = ud;
    f->started++;
    f->t_started = clock_mono_s();
}

static void cb_stopped(void *ud)
{
    struct fx *f = ud;
    f->stopped++;
    f->t_stopped = clock_mono_s();
}

static void cb_new_leader(void *ud, const char *id)
{
    struct fx *f = ud;
    if (f->new_leaders < 8)
        snprintf(f->leaders[f->new_leaders], sizeof(f->leaders[0]), "%s", id);
    f->new_leaders++;
}

static void cb_stop_done(void *ud, int rc)
{
    struct fx *f = ud;
    f->stop_done = true;
    f->stop_rc = rc;
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
    if (rc < 0) {
        fprintf(stderr, "kube_client_new: %s\n", e.msg);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    lease_elector_free(f->le);
    kube_client_free(f->client);
    fakesrv_stop(f->srv);
    ev_loop_destroy(f->loop);
    free(f);
    return 0;
}

static struct lease_config test_config(struct fx *f, const char *identity)
{
    return (struct lease_config){
        .namespace_ = NS,
        .name = LNAME,
        .identity = identity,
        .lease_duration_s = 1.0,
        .renew_deadline_s = 0.5,
        .retry_period_s = 0.1,
        .release_on_cancel = true,
        .cb = {cb_started, cb_stopped, cb_new_leader, f},
    };
}

static void new_elector(struct fx *f, const char *identity)
{
    struct lease_config cfg = test_config(f, identity);
    struct err e = {0};
    assert_int_equal(lease_elector_new(f->client, &cfg, NULL, &f->le, &e), 0);
}

/* ---- loop helpers ------------------------------------------------------ */

struct waiter {
    struct fx *f;
    bool (*pred)(struct fx *f);
    bool met;
};

static void on_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct waiter *wt = w->data;
    if (wt->pred && wt->pred(wt->f)) {
        wt->met = true;
        ev_break(loop, EVBREAK_ALL);
    }
}

static void on_limit(struct ev_loop *loop, ev_timer *w, int revents)
{
    ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until pred(f) holds (checked every 5 ms) or `max_s` passed. */
/* Run until pred holds or max_s passed. A wait for a state that must come uses a 30 s guard
 * (only a bound on a loaded machine: three-second guards failed at a load of 30-50); a
 * state that must NOT come within a time keeps its window (assert_false). */
static bool run_until(struct fx *f, bool (*pred)(struct fx *f), double max_s)
{
    struct waiter wt = {f, pred, false};
    ev_timer poll, limit;
    ev_timer_init(&poll, on_poll, 0.005, 0.005);
    poll.data = &wt;
    ev_timer_init(&limit, on_limit, max_s, 0.);
    ev_timer_start(f->loop, &poll);
    ev_timer_start(f->loop, &limit);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &poll);
    ev_timer_stop(f->loop, &limit);
    return wt.met;
}

static bool is_started(struct fx *f)
{
    return f->started > 0;
}

static bool is_stopped(struct fx *f)
{
    return f->stopped > 0;
}

static bool is_stop_done(struct fx *f)
{
    return f->stop_done;
}

/* ---- fixtures ---------------------------------------------------------- */

static char *lease_json(const char *holder, int dur, const char *acquire, const char *renew,
                        int transitions, const char *rv)
{
    return xasprintf("{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
                     "\"metadata\":{\"name\":\"" LNAME "\",\"namespace\":\"" NS "\","
                     "\"resourceVersion\":\"%s\"},"
                     "\"spec\":{\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":%d,"
                     "\"acquireTime\":\"%s\",\"renewTime\":\"%s\",\"leaseTransitions\":%d}}",
                     rv, holder, dur, acquire, renew, transitions);
}

static void push(struct fx *f, const char *method, int status, char *body, int times)
{
    fakesrv_push(f->srv,
                 &(struct fakesrv_resp){.method = method,
                                        .path = strcmp(method, "POST") == 0 ? COLL_PATH : ITEM_PATH,
                                        .status = status,
                                        .body = body,
                                        .times = times});
    free(body);
}

/* Parsed body of recorded request i (new reference); asserts method and path. */
static json_t *req_body(struct fx *f, size_t i, const char *method, const char *path)
{
    struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
    assert_non_null(r);
    assert_string_equal(r->method, method);
    assert_string_equal(r->path, path);
    json_t *j = r->body_len ? json_loads(r->body, 0, NULL) : NULL;
    fakesrv_req_free(r);
    return j;
}

static const char *spec_str(json_t *lease, const char *key)
{
    const char *s = json_string_value(json_object_get(json_object_get(lease, "spec"), key));
    assert_non_null(s);
    return s;
}

static long spec_int(json_t *lease, const char *key)
{
    json_t *v = json_object_get(json_object_get(lease, "spec"), key);
    assert_true(json_is_integer(v));
    return (long)json_integer_value(v);
}

static const char *meta_rv(json_t *lease)
{
    return json_string_value(
        json_object_get(json_object_get(lease, "metadata"), "resourceVersion"));
}

static void assert_microtime(const char *s)
{
    /* 2026-11-22T14:33:56.123456Z */
    assert_int_equal(strlen(s), 27);
    assert_int_equal(s[10], 'T');
    assert_int_equal(s[19], '.');
    assert_int_equal(s[26], 'Z');
    struct timespec ts;
    assert_int_equal(clock_parse_rfc3339(s, &ts), 0);
}

/* ---- tests ------------------------------------------------------------- */

static void test_config_validation(void **state)
{
    (void)state;
    struct err e = {0};
    struct lease_config c = {.namespace_ = "ns", .name = "n"};
    assert_int_equal(lease_config_validate(&c, &e), 0);
    assert_true(c.lease_duration_s == 15.0 && c.renew_deadline_s == 10.0 &&
                c.retry_period_s == 2.0);
    c = (struct lease_config){
        .namespace_ = "ns", .name = "n", .lease_duration_s = 10, .renew_deadline_s = 10};
    assert_int_equal(lease_config_validate(&c, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "lease duration"));
    c = (struct lease_config){.namespace_ = "ns",
                              .name = "n",
                              .lease_duration_s = 15,
                              .renew_deadline_s = 2.4,
                              .retry_period_s = 2};
    assert_int_equal(lease_config_validate(&c, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "retry period"));
    c.renew_deadline_s = 2.41;
    assert_int_equal(lease_config_validate(&c, &e), 0);
    c = (struct lease_config){.name = "n"};
    assert_int_equal(lease_config_validate(&c, &e), -EINVAL);
    c = (struct lease_config){.namespace_ = "ns", .name = "n", .retry_period_s = -1};
    assert_int_equal(lease_config_validate(&c, &e), -EINVAL);

    char *a = lease_default_identity();
    char *b = lease_default_identity();
    const char *us = strrchr(a, '_');
    assert_non_null(us);
    assert_int_equal(strlen(us + 1), 36); /* uuid */
    assert_int_equal(us[1 + 14], '4');    /* version 4 */
    assert_string_not_equal(a, b);
    free(a);
    free(b);
}

/* No Lease: POST it, lead, renew by PUT (fast path), release on stop. */
static void test_acquire_absent_renew_release(void **state)
{
    struct fx *f = *state;
    fakesrv_push_status(f->srv, "GET", ITEM_PATH, 404, "NotFound", "leases not found");
    push(f, "POST", 201, lease_json("me", 1, "2026-01-01T00:00:00.000000Z", "x", 0, "1"), 1);
    push(f, "PUT", 200, lease_json("me", 1, "2026-01-01T00:00:00.000000Z", "x", 0, "2"), -1);
    new_elector(f, "me");
    assert_int_equal(lease_elector_start(f->le), 0);
    assert_int_equal(lease_elector_start(f->le), -EALREADY);
    assert_true(run_until(f, is_started, 30));
    assert_true(lease_elector_is_leader(f->le));
    assert_int_equal(f->new_leaders, 1);
    assert_string_equal(f->leaders[0], "me");
    assert_string_equal(lease_elector_leader(f->le), "me");

    /* A few renewals. */
    run_until(f, NULL, 0.45);
    assert_true(lease_elector_is_leader(f->le));
    size_t n = fakesrv_nreq(f->srv);
    assert_true(n >= 4); /* GET, POST, >= 2 PUT */

    assert_int_equal(lease_elector_stop(f->le, cb_stop_done, f), 0);
    assert_int_equal(lease_elector_stop(f->le, cb_stop_done, f), -EALREADY);
    assert_true(run_until(f, is_stop_done, 30));
    assert_int_equal(f->stop_rc, 0);
    assert_int_equal(f->stopped, 1);
    assert_int_equal(f->started, 1);
    assert_false(lease_elector_is_leader(f->le));

    json_t *j = req_body(f, 0, "GET", ITEM_PATH);
    assert_null(j);
    j = req_body(f, 1, "POST", COLL_PATH);
    assert_string_equal(json_string_value(json_object_get(j, "kind")), "Lease");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "metadata"), "name")),
                        LNAME);
    assert_string_equal(spec_str(j, "holderIdentity"), "me");
    assert_int_equal(spec_int(j, "leaseDurationSeconds"), 1);
    assert_int_equal(spec_int(j, "leaseTransitions"), 0);
    char acquired[40];
    snprintf(acquired, sizeof(acquired), "%s", spec_str(j, "acquireTime"));
    assert_microtime(acquired);
    assert_microtime(spec_str(j, "renewTime"));
    json_decref(j);

    n = fakesrv_nreq(f->srv);
    /* Renewals: PUTs only (fast path, no GET), keeping acquireTime, carrying the last RV. */
    for (size_t i = 2; i + 1 < n; i++) {
        j = req_body(f, i, "PUT", ITEM_PATH);
        assert_string_equal(spec_str(j, "holderIdentity"), "me");
        assert_string_equal(spec_str(j, "acquireTime"), acquired);
        assert_string_equal(meta_rv(j), i == 2 ? "1" : "2");
        json_decref(j);
    }
    /* Release: empty holder, 1 s duration. */
    j = req_body(f, n - 1, "PUT", ITEM_PATH);
    assert_string_equal(spec_str(j, "holderIdentity"), "");
    assert_int_equal(spec_int(j, "leaseDurationSeconds"), 1);
    assert_string_equal(meta_rv(j), "2");
    json_decref(j);
    assert_int_equal(fakesrv_unmatched(f->srv), 0);
}

/* Another holder keeps renewing (its record changes every read, even with a
 * renewTime far in the past): we never take over. */
static void test_no_acquire_while_other_renews(void **state)
{
    struct fx *f = *state;
    for (int i = 0; i < 60; i++) {
        char renew[40], rv[16];
        snprintf(renew, sizeof(renew), "2001-01-01T00:00:%02d.000000Z", i);
        snprintf(rv, sizeof(rv), "%d", 100 + i);
        push(f, "GET", 200, lease_json("other", 1, "2001-01-01T00:00:00.000000Z", renew, 2, rv), 1);
    }
    new_elector(f, "me");
    lease_elector_start(f->le);
    assert_false(run_until(f, is_started, 1.6));
    assert_int_equal(f->started, 0);
    assert_false(lease_elector_is_leader(f->le));
    assert_string_equal(lease_elector_leader(f->le), "other");
    assert_int_equal(f->new_leaders, 1);
    assert_string_equal(f->leaders[0], "other");
    size_t n = fakesrv_nreq(f->srv);
    assert_true(n >= 6);
    for (size_t i = 0; i < n; i++) {
        json_t *j = req_body(f, i, "GET", ITEM_PATH); /* only reads */
        json_decref(j);
    }
    assert_int_equal(fakesrv_unmatched(f->srv), 0);
    /* Stopping a non-leader releases nothing and does not call on_stopped_leading. */
    assert_int_equal(lease_elector_stop(f->le, cb_stop_done, f), 0);
    assert_true(run_until(f, is_stop_done, 30));
    assert_int_equal(f->stopped, 0);
    /* A read already on the wire when we counted may still land; after the stop nothing
     * new is sent, and nothing written at all. */
    size_t n_stop = fakesrv_nreq(f->srv);
    assert_true(n_stop <= n + 1);
    run_until(f, NULL, 0.3);
    assert_int_equal(fakesrv_nreq(f->srv), n_stop);
    for (size_t i = 0; i < n_stop; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        assert_string_equal(r->method, "GET");
        fakesrv_req_free(r);
    }
}

/* The holder stopped renewing: the unchanged record expires after its
 * leaseDurationSeconds on OUR clock, although its renewTime is in the future. */
static void test_acquire_expired_by_local_clock(void **state)
{
    struct fx *f = *state;
    push(f, "GET", 200,
         lease_json("other", 1, "2099-01-01T00:00:00.000000Z", "2099-01-01T00:00:00.000000Z", 3,
                    "7"),
         -1);
    push(f, "PUT", 200, lease_json("me", 1, "2026-01-01T00:00:00.000000Z", "x", 4, "8"), -1);
    new_elector(f, "me");
    double t0 = clock_mono_s();
    lease_elector_start(f->le);
    assert_true(run_until(f, is_started, 30));
    /* not before the lease duration (1 s) on our clock; a record judged by its 2099
     * renewTime would never expire (run_until's guard). No upper bound on the wait: it
     * would be a timed assertion that a loaded machine breaks. */
    double waited = f->t_started - t0;
    assert_true(waited >= 1.0);
    assert_int_equal(f->new_leaders, 2);
    assert_string_equal(f->leaders[0], "other");
    assert_string_equal(f->leaders[1], "me");

    /* The takeover PUT: our identity, transitions + 1, the RV we read. */
    size_t n = fakesrv_nreq(f->srv);
    size_t put = n;
    for (size_t i = 0; i < n && put == n; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        if (strcmp(r->method, "PUT") == 0)
            put = i;
        fakesrv_req_free(r);
    }
    assert_true(put < n);
    json_t *j = req_body(f, put, "PUT", ITEM_PATH);
    assert_string_equal(spec_str(j, "holderIdentity"), "me");
    assert_int_equal(spec_int(j, "leaseTransitions"), 4);
    assert_string_equal(meta_rv(j), "7");
    json_decref(j);
}

/* A free lease, but another candidate wins the race: 409 on our PUT. */
static void test_conflict_means_not_leader(void **state)
{
    struct fx *f = *state;
    push(f, "GET", 200, lease_json("", 1, "2026-01-01T00:00:00.000000Z", "x", 5, "3"), 1);
    fakesrv_push_status(f->srv, "PUT", ITEM_PATH, 409, "Conflict",
                        "Operation cannot be fulfilled on leases.coordination.k8s.io: the object "
                        "has been modified");
    push(f, "GET", 200, lease_json("winner", 1, "2026-01-01T00:00:00.000000Z", "y", 6, "4"), -1);
    new_elector(f, "me");
    lease_elector_start(f->le);
    assert_false(run_until(f, is_started, 0.6));
    assert_false(lease_elector_is_leader(f->le));
    assert_string_equal(lease_elector_leader(f->le), "winner");
    json_t *j = req_body(f, 1, "PUT", ITEM_PATH);
    assert_string_equal(spec_str(j, "holderIdentity"), "me");
    assert_int_equal(spec_int(j, "leaseTransitions"), 6);
    json_decref(j);
    /* Exactly one write attempt. */
    size_t n = fakesrv_nreq(f->srv), puts = 0;
    for (size_t i = 0; i < n; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        puts += strcmp(r->method, "PUT") == 0;
        fakesrv_req_free(r);
    }
    assert_int_equal(puts, 1);
    assert_int_equal(f->started, 0);
}

/* Renewals keep failing: leadership is lost after the renew deadline. */
static void test_renew_failure_loses_leadership(void **state)
{
    struct fx *f = *state;
    fakesrv_push_status(f->srv, "GET", ITEM_PATH, 404, "NotFound", "leases not found");
    push(f, "POST", 201, lease_json("me", 1, "2026-01-01T00:00:00.000000Z", "x", 0, "1"), 1);
    fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "PUT",
                                                .path = ITEM_PATH,
                                                .status = 500,
                                                .body = "{\"kind\":\"Status\",\"code\":500}",
                                                .times = -1});
    push(f, "GET", 200, lease_json("me", 1, "2026-01-01T00:00:00.000000Z", "x", 0, "1"), -1);
    new_elector(f, "me");
    lease_elector_start(f->le);
    assert_true(run_until(f, is_started, 30));
    assert_true(run_until(f, is_stopped, 30));
    assert_int_equal(f->stopped, 1);
    assert_false(lease_elector_is_leader(f->le));
    /* First renewal at +RetryPeriod, lost RenewDeadline later. */
    double held = f->t_stopped - f->t_started;
    assert_true(held >= 0.1 + 0.5 - 0.01);
    assert_true(held < 0.1 + 0.5 + 0.3);
    /* It stays stopped: no further requests. */
    size_t n = fakesrv_nreq(f->srv);
    run_until(f, NULL, 0.3);
    assert_int_equal(fakesrv_nreq(f->srv), n);
    /* Stop after a loss: done is still called, nothing is released. */
    assert_int_equal(lease_elector_stop(f->le, cb_stop_done, f), 0);
    assert_true(run_until(f, is_stop_done, 30));
    assert_int_equal(f->stopped, 1);
    assert_int_equal(fakesrv_nreq(f->srv), n);
}

static bool three_requests(struct fx *f)
{
    return fakesrv_nreq(f->srv) >= 3;
}

/* Stop while a renewal is in flight: the release waits for it and carries
 * the resourceVersion that renewal produced (not a stale one -> 409). */
static void test_stop_during_inflight_renew(void **state)
{
    struct fx *f = *state;
    fakesrv_push_status(f->srv, "GET", ITEM_PATH, 404, "NotFound", "leases not found");
    push(f, "POST", 201, lease_json("me", 1, "2026-01-01T00:00:00.000000Z", "x", 0, "1"), 1);
    char *slow = lease_json("me", 1, "2026-01-01T00:00:00.000000Z", "y", 0, "3");
    fakesrv_push(
        f->srv,
        &(struct fakesrv_resp){
            .method = "PUT", .path = ITEM_PATH, .status = 200, .body = slow, .delay_s = 0.3});
    free(slow);
    push(f, "PUT", 200, lease_json("", 1, "2026-01-01T00:00:00.000000Z", "z", 0, "4"), 1);
    new_elector(f, "me");
    lease_elector_start(f->le);
    assert_true(run_until(f, is_started, 30));
    assert_true(run_until(f, three_requests, 30)); /* the slow renewal arrived */
    assert_int_equal(lease_elector_stop(f->le, cb_stop_done, f), 0);
    assert_true(run_until(f, is_stop_done, 30));
    assert_int_equal(f->stop_rc, 0);
    assert_int_equal(f->stopped, 1);
    assert_int_equal(fakesrv_nreq(f->srv), 4);
    json_t *j = req_body(f, 3, "PUT", ITEM_PATH);
    assert_string_equal(spec_str(j, "holderIdentity"), "");
    assert_string_equal(meta_rv(j), "3");
    json_decref(j);
}

/* ---- several candidates against a stateful Lease store ------------------ */

/* A tiny API server for one Lease with resourceVersion checks, served by
 * pkg/httpd on the same loop as the clients. */
struct store {
    json_t *lease; /* NULL = absent */
    long rv;
    int conflicts;
    double t_changed; /* clock_mono_s() of the last write that changed the record */
};

static void reply_status(struct httpd_response *resp, int code, const char *reason)
{
    resp->status = code;
    resp->content_type = "application/json";
    buf_printf(&resp->body,
               "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
               "\"reason\":\"%s\",\"code\":%d,\"message\":\"%s\"}",
               reason, code, reason);
}

static void reply_lease(struct store *st, struct httpd_response *resp, int code)
{
    char *s = json_dumps(st->lease, JSON_COMPACT);
    resp->status = code;
    resp->content_type = "application/json";
    buf_puts(&resp->body, s);
    free(s);
}

static void store_item(const struct httpd_request *req, struct httpd_response *resp, void *ud)
{
    struct store *st = ud;
    if (strcmp(httpd_request_method(req), "GET") == 0) {
        if (!st->lease)
            reply_status(resp, 404, "NotFound");
        else
            reply_lease(st, resp, 200);
        return;
    }
    /* PUT */
    json_t *body = json_loads(httpd_request_body(req, NULL), 0, NULL);
    const char *rv =
        json_string_value(json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
    char cur[24];
    snprintf(cur, sizeof(cur), "%ld", st->rv);
    if (!st->lease) {
        reply_status(resp, 404, "NotFound");
    } else if (!rv || strcmp(rv, cur) != 0) {
        st->conflicts++;
        reply_status(resp, 409, "Conflict");
    } else {
        st->rv++;
        snprintf(cur, sizeof(cur), "%ld", st->rv);
        json_object_set_new(json_object_get(body, "metadata"), "resourceVersion", json_string(cur));
        json_decref(st->lease);
        st->lease = json_incref(body);
        st->t_changed = clock_mono_s();
        reply_lease(st, resp, 200);
    }
    json_decref(body);
}

static void store_create(const struct httpd_request *req, struct httpd_response *resp, void *ud)
{
    struct store *st = ud;
    if (st->lease) {
        reply_status(resp, 409, "AlreadyExists");
        return;
    }
    st->lease = json_loads(httpd_request_body(req, NULL), 0, NULL);
    st->t_changed = clock_mono_s();
    st->rv++;
    char cur[24];
    snprintf(cur, sizeof(cur), "%ld", st->rv);
    json_object_set_new(json_object_get(st->lease, "metadata"), "resourceVersion",
                        json_string(cur));
    reply_lease(st, resp, 201);
}

static const char *store_holder(const struct store *st)
{
    return spec_str(st->lease, "holderIdentity");
}

struct cand {
    const char *id;
    struct lease_elector *le;
    int started, stopped;
    double t_started;
};

static void cand_started(void *ud)
{
    struct cand *c = ud;
    c->started++;
    c->t_started = clock_mono_s();
}

static void cand_stopped(void *ud)
{
    ((struct cand *)ud)->stopped++;
}

static int leaders(const struct fx *f)
{
    int n = 0;
    for (size_t i = 0; i < f->ncands; i++)
        n += f->cands[i].le && lease_elector_is_leader(f->cands[i].le);
    return n;
}

static bool one_leader(struct fx *f)
{
    return leaders(f) == 1;
}

static bool cand2_leads(struct fx *f)
{
    return f->cands[2].started > 0;
}

static void cand_start(struct fx *f, struct cand *c)
{
    struct lease_config cfg = test_config(f, c->id);
    cfg.cb = (struct lease_callbacks){cand_started, cand_stopped, NULL, c};
    struct err e = {0};
    assert_int_equal(lease_elector_new(f->client, &cfg, NULL, &c->le, &e), 0);
    assert_int_equal(lease_elector_start(c->le), 0);
}

static void test_candidates_race_failover_and_handoff(void **state)
{
    struct fx *f = *state;
    struct err e = {0};
    struct store st = {0};
    struct httpd *api = httpd_new(f->loop, &(struct httpd_config){.bind_addr = "127.0.0.1:0"}, &e);
    assert_non_null(api);
    httpd_handle(api, "GET", ITEM_PATH, store_item, &st);
    httpd_handle(api, "PUT", ITEM_PATH, store_item, &st);
    httpd_handle(api, "POST", COLL_PATH, store_create, &st);
    assert_int_equal(httpd_start(api, &e), 0);
    /* A client for the store instead of the fakesrv one. */
    kube_client_free(f->client);
    struct kube_rest_config *rc = kube_rest_config_new();
    rc->server = xasprintf("http://127.0.0.1:%d", httpd_port(api));
    assert_int_equal(kube_client_new(f->loop, rc, NULL, NULL, &f->client, &e), 0);
    kube_rest_config_free(rc);

    struct cand c[3] = {{.id = "cand-a"}, {.id = "cand-b"}, {.id = "cand-c"}};
    f->cands = c;
    f->ncands = 3;
    cand_start(f, &c[0]);
    cand_start(f, &c[1]);
    assert_true(run_until(f, one_leader, 30));
    struct cand *w = lease_elector_is_leader(c[0].le) ? &c[0] : &c[1];
    struct cand *l = w == &c[0] ? &c[1] : &c[0];
    assert_string_equal(store_holder(&st), w->id);

    /* The winner keeps renewing; the other never leads and sees the winner. */
    long rv_before = st.rv;
    run_until(f, NULL, 0.8);
    assert_int_equal(leaders(f), 1);
    assert_int_equal(l->started, 0);
    assert_true(st.rv >= rv_before + 4);
    assert_string_equal(lease_elector_leader(l->le), w->id);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(st.lease, "spec"), "leaseTransitions")),
        0);

    /* The winner dies without releasing: the other takes over once the record
     * has not changed for leaseDurationSeconds on its own clock. */
    lease_elector_free(w->le);
    w->le = NULL;
    /* from the winner's last renewal, not from the crash: on a loaded machine that renewal
     * can come well before the crash, and the duration runs from it (the loser saw the record
     * unchanged since then; failed once at load 30: taken 0.9 s after the crash) */
    double t_renewed = st.t_changed;
    assert_true(run_until(f, one_leader, 30));
    assert_true(l->started == 1);
    assert_true(l->t_started - t_renewed >= 0.9);
    assert_string_equal(store_holder(&st), l->id);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(st.lease, "spec"), "leaseTransitions")),
        1);

    /* A third candidate joins; the leader stops and releases: the newcomer
     * takes over at once instead of waiting out the lease. */
    cand_start(f, &c[2]);
    run_until(f, NULL, 0.3);
    assert_int_equal(c[2].started, 0);
    f->stop_done = false;
    assert_int_equal(lease_elector_stop(l->le, cb_stop_done, f), 0);
    assert_true(run_until(f, is_stop_done, 30));
    assert_int_equal(f->stop_rc, 0);
    assert_int_equal(l->stopped, 1);
    /* Released: empty, or already taken by the newcomer when the loop ran its retry in the
     * same iteration (a loaded machine); either way not the old leader any more. */
    const char *h = store_holder(&st);
    assert_true(!strcmp(h, "") || !strcmp(h, "cand-c"));
    double t_release = clock_mono_s();
    assert_true(run_until(f, cand2_leads, 30));
    assert_true(c[2].t_started - t_release < 0.6);
    assert_string_equal(store_holder(&st), "cand-c");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(st.lease, "spec"), "leaseTransitions")),
        2);

    for (int i = 0; i < 3; i++)
        lease_elector_free(c[i].le);
    f->cands = NULL;
    f->ncands = 0;
    kube_client_free(f->client);
    f->client = NULL;
    httpd_free(api);
    json_decref(st.lease);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_validation),
        cmocka_unit_test_setup_teardown(test_acquire_absent_renew_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_acquire_while_other_renews, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acquire_expired_by_local_clock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflict_means_not_leader, setup, teardown),
        cmocka_unit_test_setup_teardown(test_renew_failure_loses_leadership, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_during_inflight_renew, setup, teardown),
        cmocka_unit_test_setup_teardown(test_candidates_race_failover_and_handoff, setup, teardown),
    };
    return cmocka_run_group_tests_name("lease", tests, NULL, NULL);
}
