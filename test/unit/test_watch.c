/* Unit tests for pkg/kube/watch: the pure decoder, then streaming watches against fakesrv. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/kube/watch.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

/* ---- decoder ------------------------------------------------------------------ */

#define MAX_EV 64

struct rec {
    int n;
    int types[MAX_EV];
    char *names[MAX_EV]; /* metadata.name or "" */
    char *rvs[MAX_EV];
    int stop_after; /* return -EINTR after this many events (0 = never) */
};

static int rec_cb(void *ud, const struct watch_event *ev)
{
    struct rec *r = ud;
    assert_true(r->n < MAX_EV);
    assert_non_null(ev->object);
    r->types[r->n] = ev->type;
    const char *name =
        json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name"));
    r->names[r->n] = xstrdup(name ? name : "");
    r->rvs[r->n] = xstrdup(ev->resource_version ? ev->resource_version : "");
    r->n++;
    if (r->stop_after && r->n >= r->stop_after)
        return -EINTR;
    return 0;
}

static void rec_clear(struct rec *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->names[i]);
        free(r->rvs[i]);
    }
    memset(r, 0, sizeof *r);
}

/* Three events; names contain multi-byte UTF-8 (2, 3 and 4 byte sequences). */
static const char STREAM[] =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"caf\xc3\xa9\","
    "\"resourceVersion\":\"10\"}}}\n"
    "\r\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"\xe2\x82\xac-euro\","
    "\"resourceVersion\":\"11\"}}}\r\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":"
    "\"12\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"\xf0\x9f\x98\x80\","
    "\"resourceVersion\":\"13\"}}}\n";

static void check_stream_events(const struct rec *r)
{
    assert_int_equal(r->n, 4);
    assert_int_equal(r->types[0], WATCH_ADDED);
    assert_string_equal(r->names[0], "caf\xc3\xa9");
    assert_string_equal(r->rvs[0], "10");
    assert_int_equal(r->types[1], WATCH_MODIFIED);
    assert_string_equal(r->names[1], "\xe2\x82\xac-euro");
    assert_int_equal(r->types[2], WATCH_BOOKMARK);
    assert_string_equal(r->rvs[2], "12");
    assert_int_equal(r->types[3], WATCH_DELETED);
    assert_string_equal(r->names[3], "\xf0\x9f\x98\x80");
}

static void test_decoder_any_split(void **state)
{
    size_t n = sizeof STREAM - 1;
    /* Every two-piece split, including inside every UTF-8 sequence. */
    for (size_t cut = 0; cut <= n; cut++) {
        struct rec r = {0};
        struct watch_decoder d;
        struct err e;
        watch_decoder_init(&d, 0, rec_cb, &r);
        assert_int_equal(watch_decoder_feed(&d, STREAM, cut, &e), 0);
        assert_int_equal(watch_decoder_feed(&d, STREAM + cut, n - cut, &e), 0);
        assert_int_equal(watch_decoder_finish(&d, &e), 0);
        check_stream_events(&r);
        assert_int_equal(d.events, 4);
        assert_int_equal(d.bytes, n);
        watch_decoder_release(&d);
        rec_clear(&r);
    }
    /* Byte by byte. */
    struct rec r = {0};
    struct watch_decoder d;
    struct err e;
    watch_decoder_init(&d, 0, rec_cb, &r);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(watch_decoder_feed(&d, STREAM + i, 1, &e), 0);
    assert_int_equal(watch_decoder_finish(&d, &e), 0);
    check_stream_events(&r);
    watch_decoder_release(&d);
    rec_clear(&r);
}

static void test_decoder_partial_and_errors(void **state)
{
    struct rec r = {0};
    struct watch_decoder d;
    struct err e;

    /* A truncated last event is reported at the end of the stream. */
    watch_decoder_init(&d, 0, rec_cb, &r);
    assert_int_equal(watch_decoder_feed(&d, STREAM, 40, &e), 0);
    assert_int_equal(r.n, 0);
    assert_int_equal(watch_decoder_finish(&d, &e), -EBADMSG);
    assert_true(strstr(e.msg, "ended inside an event (40 bytes pending)") != NULL);
    watch_decoder_release(&d);

    /* A line over the cap: -E2BIG, sticky; also when it arrives in pieces. */
    watch_decoder_init(&d, 32, rec_cb, &r);
    char line[100];
    memset(line, 'x', sizeof line);
    assert_int_equal(watch_decoder_feed(&d, line, 20, &e), 0);
    assert_int_equal(watch_decoder_feed(&d, line, 20, &e), -E2BIG);
    assert_true(strstr(e.msg, "longer than 32 bytes") != NULL);
    assert_int_equal(watch_decoder_feed(&d, "\n", 1, &e), -E2BIG);
    watch_decoder_release(&d);
    watch_decoder_init(&d, 32, rec_cb, &r);
    line[60] = '\n';
    assert_int_equal(watch_decoder_feed(&d, line, 61, &e), -E2BIG);
    watch_decoder_release(&d);

    /* Bad lines. */
    const char *bad[] = {
        "not json\n",
        "[1,2]\n",
        "{\"object\":{}}\n",
        "{\"type\":\"ADDED\"}\n",
        "{\"type\":\"ADDED\",\"object\":\"str\"}\n",
        "{\"type\":\"EXPLODED\",\"object\":{}}\n",
        "{\"type\":\"ADDED\",\"object\":{}}{}\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        watch_decoder_init(&d, 0, rec_cb, &r);
        assert_int_equal(watch_decoder_feed(&d, bad[i], strlen(bad[i]), &e), -EBADMSG);
        assert_true(strstr(e.msg, "watch stream byte 0: watch ") != NULL);
        watch_decoder_release(&d);
    }
    assert_int_equal(r.n, 0);
    /* The offset points at the bad line. */
    watch_decoder_init(&d, 0, rec_cb, &r);
    const char two[] = "{\"type\":\"ADDED\",\"object\":{}}\n{oops\n";
    assert_int_equal(watch_decoder_feed(&d, two, sizeof two - 1, &e), -EBADMSG);
    assert_true(strstr(e.msg, "watch stream byte 29:") != NULL);
    assert_int_equal(r.n, 1);
    watch_decoder_release(&d);
    rec_clear(&r);

    /* The callback stops the stream. */
    r.stop_after = 2;
    watch_decoder_init(&d, 0, rec_cb, &r);
    assert_int_equal(watch_decoder_feed(&d, STREAM, sizeof STREAM - 1, &e), -EINTR);
    assert_int_equal(r.n, 2);
    watch_decoder_release(&d);
    rec_clear(&r);
}

static void test_decode_error_event(void **state)
{
    char *line = fakesrv_watch_error_line(410);
    struct watch_event ev;
    struct err e;
    assert_int_equal(watch_decode_line(line, strlen(line), &ev, &e), 0);
    assert_int_equal(ev.type, WATCH_ERROR);
    assert_int_equal(ev.status.code, -ESTALE);
    assert_int_equal(ev.status.http_status, 410);
    assert_string_equal(ev.status.reason, "Expired");
    assert_true(kube_err_is_gone(&ev.status));
    assert_true(strstr(ev.status.msg, "410 Expired: too old resource version") != NULL);
    json_decref(ev.object);
    free(line);
    line = fakesrv_watch_error_line(500);
    assert_int_equal(watch_decode_line(line, strlen(line), &ev, &e), 0);
    assert_int_equal(ev.status.code, -EIO);
    assert_false(kube_err_is_gone(&ev.status));
    json_decref(ev.object);
    free(line);
    assert_string_equal(watch_event_type_name(WATCH_BOOKMARK), "BOOKMARK");
}

/* The decoder's paths: an event's object is built with only those members (the rest is
 * checked, a bad line still refused); an ERROR event whole, its Status read as without. */
struct shape {
    char last[256];
};

static int shape_cb(void *ud, const struct watch_event *ev)
{
    struct shape *sh = ud;
    char *d = json_dumps(ev->object, JSON_COMPACT);
    snprintf(sh->last, sizeof sh->last, "%s %s", watch_event_type_name(ev->type), d);
    free(d);
    return 0;
}

static void test_decoder_paths(void **state)
{
    (void)state;
    static const char *const names[] = {"type", "object.metadata.name",
                                        "object.metadata.resourceVersion", "object.spec.a", NULL};
    struct jscan_paths *paths = NULL;
    assert_int_equal(jscan_paths_new(names, &paths, NULL), 0);
    struct shape sh = {0};
    struct watch_decoder d;
    watch_decoder_init(&d, 0, shape_cb, &sh);
    d.paths = paths;
    struct err e;
    const char *ev = "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\","
                     "\"resourceVersion\":\"5\",\"managedFields\":[{}]},\"spec\":{\"a\":1,"
                     "\"b\":[2]},\"status\":{\"x\":1}}}\n";
    assert_int_equal(watch_decoder_feed(&d, ev, strlen(ev), &e), 0);
    assert_string_equal(sh.last, "MODIFIED {\"metadata\":{\"name\":\"p\",\"resourceVersion\":"
                                 "\"5\"},\"spec\":{\"a\":1}}");
    char *err410 = fakesrv_watch_error_line(410);
    struct rec r = {0};
    watch_decoder_release(&d);
    watch_decoder_init(&d, 0, rec_cb, &r);
    d.paths = paths;
    assert_int_equal(watch_decoder_feed(&d, err410, strlen(err410), &e), 0);
    assert_int_equal(watch_decoder_feed(&d, "\n", 1, &e), 0);
    free(err410);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.types[0], WATCH_ERROR);
    rec_clear(&r);
    watch_decoder_release(&d);
    /* the ERROR event's Status is whole for the watch: decode it as the stream does */
    watch_decoder_init(&d, 0, shape_cb, &sh);
    d.paths = paths;
    const char *errev = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                        "\"reason\":\"Expired\",\"message\":\"too old\"}}\n";
    assert_int_equal(watch_decoder_feed(&d, errev, strlen(errev), &e), 0);
    assert_string_equal(sh.last, "ERROR {\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\","
                                 "\"message\":\"too old\"}");
    const char *bad = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{},\"status\":[1,]}}\n";
    assert_int_equal(watch_decoder_feed(&d, bad, strlen(bad), &e), -EBADMSG);
    watch_decoder_release(&d);
    jscan_paths_free(paths);
}

/* ---- streaming watches -------------------------------------------------------- */

struct wfx {
    struct ev_loop *loop;
    struct fakesrv *srv;
    struct kube_rest_config *cfg;
    struct kube_client *c;
    struct kube_watch *w;
    ev_timer guard;
    bool timed_out;
    struct rec rec;
    bool closed;
    int close_rc;
    char close_msg[ERR_MSG_MAX];
    bool close_gone;
    int stop_at; /* kube_watch_stop() from the event callback at this event count */
    char last_rv[64];
    unsigned long long close_events;
};

static void wguard_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    struct wfx *f = t->data;
    f->timed_out = true;
    ev_break(loop, EVBREAK_ALL);
}

static int wev_cb(void *ud, const struct watch_event *ev)
{
    struct wfx *f = ud;
    int rc = rec_cb(&f->rec, ev);
    if (f->stop_at && f->rec.n == f->stop_at) {
        kube_watch_stop(f->w);
        f->w = NULL;
        ev_break(f->loop, EVBREAK_ALL);
    }
    return rc;
}

static void wclose_cb(void *ud, int rc, const struct err *e)
{
    struct wfx *f = ud;
    assert_false(f->closed);
    assert_non_null(e);
    f->closed = true;
    f->close_rc = rc;
    f->close_gone = kube_err_is_gone(e);
    snprintf(f->close_msg, sizeof f->close_msg, "%s", e->msg);
    /* The watch is still valid during its close callback. */
    if (f->w) {
        snprintf(f->last_rv, sizeof f->last_rv, "%s", kube_watch_last_rv(f->w));
        f->close_events = kube_watch_events(f->w);
    }
    f->w = NULL;
    ev_break(f->loop, EVBREAK_ALL);
}

static struct wfx *wfx_new(void)
{
    struct wfx *f = xcalloc(1, sizeof *f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->srv = fakesrv_start(NULL);
    f->cfg = kube_rest_config_new();
    f->cfg->server = xstrdup(fakesrv_url(f->srv));
    struct err e;
    assert_int_equal(kube_client_new(f->loop, f->cfg, NULL, NULL, &f->c, &e), 0);
    ev_timer_init(&f->guard, wguard_cb, 10., 0.);
    f->guard.data = f;
    return f;
}

static void wfx_free(struct wfx *f)
{
    kube_watch_stop(f->w);
    kube_client_free(f->c);
    fakesrv_stop(f->srv);
    kube_rest_config_free(f->cfg);
    ev_loop_destroy(f->loop);
    rec_clear(&f->rec);
    free(f);
}

static void wfx_start(struct wfx *f, const struct kube_watch_opts *o)
{
    struct err e;
    assert_int_equal(kube_watch_start(f->c, o, wev_cb, wclose_cb, f, &f->w, &e), 0);
    assert_non_null(f->w);
}

/* Run until the watch closes (or the event callback breaks); fail on a hang. */
static void wfx_run(struct wfx *f, double timeout_s)
{
    if (getenv("KKS_VALGRIND"))
        timeout_s *= 6;
    ev_timer_set(&f->guard, timeout_s, 0.);
    ev_timer_start(f->loop, &f->guard);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &f->guard);
    if (f->timed_out)
        fail_msg("watch test timed out after %.1f s", timeout_s);
}

static void test_watch_split_chunks(void **state)
{
    struct wfx *f = wfx_new();
    /* Cut inside the first line, inside the euro sign (3 bytes) and inside the emoji. */
    const char *s = STREAM;
    const char *euro = strstr(s, "\xe2\x82\xac");
    const char *emoji = strstr(s, "\xf0\x9f\x98\x80");
    size_t c1 = 17, c2 = (size_t)(euro - s) + 1, c3 = (size_t)(emoji - s) + 2;
    size_t n = sizeof STREAM - 1;
    struct fakesrv_chunk ch[] = {
        {0, s, c1},
        {0.05, s + c1, c2 - c1},
        {0.05, s + c2, c3 - c2},
        {0.05, s + c3, n - c3},
    };
    struct fakesrv_resp r = {.method = "GET",
                             .path = "/api/v1/pods",
                             .query_contains = "watch=1",
                             .chunks = ch,
                             .n_chunks = 4};
    fakesrv_push(f->srv, &r);
    const char *q[] = {"labelSelector", "app in (a,b)", NULL};
    struct kube_watch_opts o = {
        .path = "/api/v1/pods", .query = q, .resource_version = "9", .timeout_seconds = 42};
    wfx_start(f, &o);
    wfx_run(f, 10);
    assert_true(f->closed);
    assert_int_equal(f->close_rc, 0);
    assert_true(strstr(f->close_msg, "closed by the server after 4 events") != NULL);
    check_stream_events(&f->rec);
    struct fakesrv_req *req = fakesrv_req_get(f->srv, 0);
    assert_string_equal(req->query,
                        "watch=1&resourceVersion=9&timeoutSeconds=42&"
                        "allowWatchBookmarks=true&labelSelector=app%20in%20%28a%2Cb%29");
    fakesrv_req_free(req);
    wfx_free(f);
}

static void test_watch_bookmark_rv(void **state)
{
    struct wfx *f = wfx_new();
    const char *ev[] = {
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"}}}",
        "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":"
        "\"99\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}",
        NULL,
    };
    fakesrv_push_watch(f->srv, "/api/v1/pods", ev, FAKESRV_HOLD);
    struct kube_watch_opts o = {.path = "/api/v1/pods", .timeout_seconds = 30};
    wfx_start(f, &o);
    f->stop_at = 2; /* stop from inside the callback after the bookmark */
    wfx_run(f, 10);
    assert_int_equal(f->rec.n, 2);
    assert_int_equal(f->rec.types[1], WATCH_BOOKMARK);
    assert_string_equal(f->rec.rvs[1], "99");
    /* Stopped from its own callback: no close callback, nothing leaks (ASan). */
    assert_false(f->closed);
    assert_int_equal(kube_client_pending(f->c), 0);
    fakesrv_release(f->srv);
    wfx_free(f);
}

static void test_watch_last_rv(void **state)
{
    struct wfx *f = wfx_new();
    const char *ev[] = {
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"}}}",
        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"77\"}}}",
        NULL,
    };
    fakesrv_push_watch(f->srv, "/api/v1/pods", ev, FAKESRV_FINISH);
    struct kube_watch_opts o = {.path = "/api/v1/pods", .timeout_seconds = 30};
    wfx_start(f, &o);
    wfx_run(f, 10);
    assert_true(f->closed);
    assert_int_equal(f->close_rc, 0);
    assert_int_equal(f->rec.n, 2);
    /* The bookmark's resourceVersion is where the next watch resumes. */
    assert_string_equal(f->last_rv, "77");
    assert_int_equal(f->close_events, 2);
    wfx_free(f);
}

static void test_watch_error_410(void **state)
{
    struct wfx *f = wfx_new();
    char *err = fakesrv_watch_error_line(410);
    const char *ev[] = {
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"}}}",
        err,
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"never\"}}}",
        NULL,
    };
    fakesrv_push_watch(f->srv, "/api/v1/pods", ev, FAKESRV_HOLD);
    struct kube_watch_opts o = {.path = "/api/v1/pods", .timeout_seconds = 30};
    wfx_start(f, &o);
    wfx_run(f, 10);
    free(err);
    assert_true(f->closed);
    assert_int_equal(f->close_rc, -ESTALE);
    assert_true(f->close_gone);
    assert_true(strstr(f->close_msg, "watch /api/v1/pods: watch ERROR event: 410 Expired") != NULL);
    assert_int_equal(f->rec.n, 1);
    fakesrv_release(f->srv);
    wfx_free(f);
}

static void test_watch_http_410(void **state)
{
    struct wfx *f = wfx_new();
    fakesrv_push_status(f->srv, "GET", "/api/v1/pods", 410, "Expired",
                        "too old resource version: 1 (50)");
    struct kube_watch_opts o = {.path = "/api/v1/pods", .resource_version = "1"};
    wfx_start(f, &o);
    wfx_run(f, 10);
    assert_true(f->closed);
    assert_int_equal(f->close_rc, -ESTALE);
    assert_true(f->close_gone);
    assert_int_equal(f->rec.n, 0);
    /* The default server timeout is randomised in [300, 600). */
    struct fakesrv_req *req = fakesrv_req_get(f->srv, 0);
    const char *t = strstr(req->query, "timeoutSeconds=");
    assert_non_null(t);
    long secs = strtol(t + 15, NULL, 10);
    assert_true(secs >= 300 && secs < 600);
    fakesrv_req_free(req);
    wfx_free(f);
}

static void test_watch_dropped(void **state)
{
    struct wfx *f = wfx_new();
    /* One full event, then half of the next, then the connection is cut. */
    struct fakesrv_chunk ch[] = {
        {0, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n{\"type\":\"MOD", 0},
    };
    struct fakesrv_resp r = {.method = "GET",
                             .path = "/api/v1/pods",
                             .query_contains = "watch=1",
                             .chunks = ch,
                             .n_chunks = 1,
                             .end = FAKESRV_DROP};
    fakesrv_push(f->srv, &r);
    struct kube_watch_opts o = {.path = "/api/v1/pods", .timeout_seconds = 30};
    wfx_start(f, &o);
    wfx_run(f, 10);
    assert_true(f->closed);
    assert_int_equal(f->close_rc, -ECONNRESET);
    assert_false(f->close_gone);
    assert_int_equal(f->rec.n, 1);
    assert_true(strstr(f->close_msg, "/api/v1/pods") != NULL);
    wfx_free(f);
}

static void test_watch_clean_end_mid_event(void **state)
{
    struct wfx *f = wfx_new();
    struct fakesrv_chunk ch[] = {{0, "{\"type\":\"ADDED\",\"obj", 0}};
    struct fakesrv_resp r = {.method = "GET",
                             .path = "/api/v1/pods",
                             .query_contains = "watch=1",
                             .chunks = ch,
                             .n_chunks = 1};
    fakesrv_push(f->srv, &r);
    struct kube_watch_opts o = {.path = "/api/v1/pods", .timeout_seconds = 30};
    wfx_start(f, &o);
    wfx_run(f, 10);
    assert_true(f->closed);
    assert_int_equal(f->close_rc, -ECONNRESET);
    assert_true(strstr(f->close_msg, "ended inside an event") != NULL);
    wfx_free(f);
}

static void test_watch_watchdog(void **state)
{
    struct wfx *f = wfx_new();
    const char *ev[] = {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}", NULL};
    fakesrv_push_watch(f->srv, "/api/v1/pods", ev, FAKESRV_HOLD);
    struct kube_watch_opts o = {
        .path = "/api/v1/pods", .timeout_seconds = 1, .watchdog_margin_s = 0.2};
    double t0 = clock_mono_s();
    wfx_start(f, &o);
    wfx_run(f, 10);
    double took = clock_mono_s() - t0;
    assert_true(f->closed);
    assert_int_equal(f->close_rc, -ETIMEDOUT);
    assert_int_equal(f->rec.n, 1);
    /* fired by the watchdog at its 1.2 s (the lower bound on the wall clock; a loaded
     * machine only runs later), not by the server's end */
    assert_true(took >= 1.1);
    assert_non_null(strstr(f->close_msg, "no data from the server for 1.2 s"));
    assert_int_equal(kube_client_pending(f->c), 0);
    fakesrv_release(f->srv);
    wfx_free(f);
}

static void test_watch_stop_and_client_free(void **state)
{
    struct wfx *f = wfx_new();
    fakesrv_push_watch(f->srv, "/api/v1/pods", NULL, FAKESRV_HOLD);
    fakesrv_push_watch(f->srv, "/api/v1/nodes", NULL, FAKESRV_HOLD);
    /* Stopped from outside any callback before it even started. */
    struct kube_watch_opts o = {.path = "/api/v1/pods", .timeout_seconds = 30};
    wfx_start(f, &o);
    kube_watch_stop(f->w);
    f->w = NULL;
    assert_int_equal(kube_client_pending(f->c), 0);
    /* An open watch when the client is freed: closed with -ECANCELED. */
    struct kube_watch_opts o2 = {.path = "/api/v1/nodes", .timeout_seconds = 30};
    wfx_start(f, &o2);
    double t0 = clock_mono_s();
    while (fakesrv_nreq(f->srv) < 1 && clock_mono_s() - t0 < 5)
        ev_run(f->loop, EVRUN_ONCE);
    assert_int_equal(fakesrv_nreq(f->srv), 1);
    kube_client_free(f->c);
    f->c = NULL;
    assert_true(f->closed);
    assert_int_equal(f->close_rc, -ECANCELED);
    fakesrv_release(f->srv);
    wfx_free(f);
}

static void list_done(void *ud, const struct kube_result *r)
{
    struct wfx *f = ud;
    f->rec.n += 100; /* marks "list completed" */
    assert_int_equal(r->rc, 0);
    assert_int_equal(json_array_size(json_object_get(r->body, "items")), 1);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(r->body, "metadata"), "resourceVersion")),
        "42");
    ev_break(f->loop, EVBREAK_ALL);
}

/* The list + watch scripting pattern documented in fakesrv.h. */
static void test_fakesrv_list_then_watch(void **state)
{
    struct wfx *f = wfx_new();
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", "watch=", 200,
                      "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"42\"},"
                      "\"items\":[{\"metadata\":{\"name\":\"a\"}}]}");
    const char *ev[] = {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"b\"}}}", NULL};
    fakesrv_push_watch(f->srv, "/api/v1/pods", ev, FAKESRV_FINISH);
    /* The watch is issued first, yet takes the watch response, not the list. */
    struct kube_watch_opts o = {.path = "/api/v1/pods", .resource_version = "42"};
    wfx_start(f, &o);
    wfx_run(f, 10);
    assert_true(f->closed);
    assert_int_equal(f->close_rc, 0);
    assert_int_equal(f->rec.n, 1);
    assert_string_equal(f->rec.names[0], "b");
    struct err e;
    assert_int_equal(kube_client_get(f->c, "/api/v1/pods", NULL, list_done, f, NULL, &e), 0);
    wfx_run(f, 10);
    assert_int_equal(f->rec.n, 101);
    assert_int_equal(fakesrv_queued(f->srv), 0);
    assert_int_equal(fakesrv_unmatched(f->srv), 0);
    f->rec.n = 1;
    wfx_free(f);
}

static void test_watch_bad_args(void **state)
{
    struct wfx *f = wfx_new();
    struct err e;
    struct kube_watch *w = NULL;
    struct kube_watch_opts o = {0};
    assert_int_equal(kube_watch_start(f->c, &o, wev_cb, wclose_cb, f, &w, &e), -EINVAL);
    o.path = "relative";
    assert_int_equal(kube_watch_start(f->c, &o, wev_cb, wclose_cb, f, &w, &e), -EINVAL);
    assert_null(w);
    wfx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decoder_any_split),
        cmocka_unit_test(test_decoder_partial_and_errors),
        cmocka_unit_test(test_decode_error_event),
        cmocka_unit_test(test_decoder_paths),
        cmocka_unit_test(test_watch_split_chunks),
        cmocka_unit_test(test_watch_bookmark_rv),
        cmocka_unit_test(test_watch_last_rv),
        cmocka_unit_test(test_watch_error_410),
        cmocka_unit_test(test_watch_http_410),
        cmocka_unit_test(test_watch_dropped),
        cmocka_unit_test(test_watch_clean_end_mid_event),
        cmocka_unit_test(test_watch_watchdog),
        cmocka_unit_test(test_watch_stop_and_client_free),
        cmocka_unit_test(test_fakesrv_list_then_watch),
        cmocka_unit_test(test_watch_bad_args),
    };
    return cmocka_run_group_tests_name("kube_watch", tests, NULL, NULL);
}
