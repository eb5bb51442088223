/* Unit tests for pkg/kube/informer against the scripted fake API server. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/kube/client.h"
#include "pkg/kube/informer.h"
#include "pkg/kube/restconfig.h"
#include "pkg/util/xalloc.h"
#include "pkg/workqueue/workqueue.h"
#include "test/support/fakesrv.h"

#define PODS "/api/v1/pods"

/* ---- fixture ------------------------------------------------------------- */

struct rec {
    char log[64][64];
    int n;
    int adds, updates, deletes;
    int same_updates;     /* resync: on_update(obj, obj) */
    int adds_before_sync; /* adds delivered while has_synced() was false */
    int listed;           /* events delivered while informer_listing() */
    struct informer *inf;
};

struct fx {
    struct ev_loop *loop;
    struct fakesrv *srv;
    struct kube_rest_config *cfg;
    struct kube_client *client;
    struct informer *inf;
    struct rec rec;
};

static const char *rv_of(json_t *o)
{
    const char *rv =
        json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
    return rv ? rv : "";
}

static const char *name_of(json_t *o)
{
    const char *n = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
    return n ? n : "";
}

static void on_add(void *ud, json_t *obj)
{
    struct rec *r = ud;
    r->adds++;
    r->listed += informer_listing(r->inf);
    if (!informer_has_synced(r->inf))
        r->adds_before_sync++;
    if (r->n < 64)
        snprintf(r->log[r->n++], sizeof r->log[0], "add %s %s", name_of(obj), rv_of(obj));
}

static void on_update(void *ud, json_t *old, json_t *new_obj)
{
    struct rec *r = ud;
    r->updates++;
    r->listed += informer_listing(r->inf);
    if (r->n < 64)
        snprintf(r->log[r->n++], sizeof r->log[0], "update %s %s>%s", name_of(new_obj), rv_of(old),
                 rv_of(new_obj));
}

static void on_delete(void *ud, json_t *obj)
{
    struct rec *r = ud;
    r->deletes++;
    r->listed += informer_listing(r->inf);
    if (r->n < 64)
        snprintf(r->log[r->n++], sizeof r->log[0], "delete %s %s", name_of(obj), rv_of(obj));
}

/* Projection calls, with the list pages received when each came (test_list_projected_per_page). */
struct proj_count {
    struct informer **inf;
    int calls;
    uint64_t pages_at[16];
    const char *const *reads;   /* informer_opts.project_reads */
    int with_status, with_spec; /* inputs that had a status, a spec.a */
};

static json_t *count_project(json_t *obj, void *ud)
{
    struct proj_count *pc = ud;
    struct informer_stats st;
    informer_stats(*pc->inf, &st);
    if (pc->calls < 16)
        pc->pages_at[pc->calls] = st.list_pages;
    pc->calls++;
    pc->with_status += json_object_get(obj, "status") != NULL;
    pc->with_spec += json_object_get(json_object_get(obj, "spec"), "a") != NULL;
    return json_incref(obj);
}

static void fx_init_opts(struct fx *f, const char *label_selector, size_t max_body, bool packed,
                         struct proj_count *pc, const char *const *view, const char *kind);

/* max_body: the client's response body cap (0: its default); packed: a packed store. */
static void fx_init_full(struct fx *f, const char *label_selector, size_t max_body, bool packed)
{
    fx_init_opts(f, label_selector, max_body, packed, NULL, NULL, NULL);
}

/* The same, with a projection counting its calls in pc (NULL: none), the handlers'
 * listed_view and the informer's kind (informer_opts.kind). */
static void fx_init_opts(struct fx *f, const char *label_selector, size_t max_body, bool packed,
                         struct proj_count *pc, const char *const *view, const char *kind)
{
    memset(f, 0, sizeof *f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->srv = fakesrv_start(NULL);
    f->cfg = kube_rest_config_new();
    f->cfg->server = xstrdup(fakesrv_url(f->srv));
    struct kube_client_opts co = {.max_retries = -1, .backoff_s = 0.01, .max_body = max_body};
    struct err e;
    err_clear(&e);
    assert_int_equal(kube_client_new(f->loop, f->cfg, &co, NULL, &f->client, &e), 0);
    struct informer_opts io = {
        .client = f->client,
        .version = "v1",
        .resource = "pods",
        .kind = kind,
        .label_selector = label_selector,
        .backoff_initial_s = 0.01,
        .backoff_max_s = 0.1,
        .backoff_jitter = -1,
        .seed = 42,
        .packed = packed,
        .project = pc ? count_project : NULL,
        .project_ud = pc,
        .project_reads = pc ? pc->reads : NULL,
    };
    if (pc)
        pc->inf = &f->inf;
    assert_int_equal(informer_new(&io, &f->inf, &e), 0);
    f->rec.inf = f->inf;
    struct informer_handlers h = {on_add, on_update, on_delete, &f->rec, view};
    informer_add_handlers(f->inf, &h);
}

static void fx_init(struct fx *f, const char *label_selector)
{
    fx_init_full(f, label_selector, 0, false);
}

static void fx_free(struct fx *f)
{
    informer_free(f->inf);
    kube_client_free(f->client);
    fakesrv_stop(f->srv);
    kube_rest_config_free(f->cfg);
    ev_loop_destroy(f->loop);
}

/* Run the loop until pred() is true; fail after `timeout` seconds. */
struct waiter {
    bool (*pred)(struct fx *f);
    struct fx *f;
    bool ok;
};

static void poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct waiter *wt = w->data;
    if (wt->pred(wt->f)) {
        wt->ok = true;
        ev_break(loop, EVBREAK_ALL);
    }
}

static void deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    ev_break(loop, EVBREAK_ALL);
}

static bool run_until(struct fx *f, bool (*pred)(struct fx *f), double timeout)
{
    struct waiter wt = {pred, f, false};
    ev_timer poll, deadline;
    ev_now_update(f->loop);
    ev_timer_init(&poll, poll_cb, 0.002, 0.002);
    poll.data = &wt;
    ev_timer_init(&deadline, deadline_cb, timeout, 0.);
    ev_timer_start(f->loop, &poll);
    ev_timer_start(f->loop, &deadline);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &poll);
    ev_timer_stop(f->loop, &deadline);
    return wt.ok;
}

/* ---- scripting helpers --------------------------------------------------- */

static json_t *pod(const char *name, const char *rv)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "Pod", "metadata",
                     "name", name, "namespace", "ns", "resourceVersion", rv);
}

/* A list body; `spec` is "name:rv,name:rv". Caller frees. */
static char *list_body_keys(const char *spec, const char *rv, const char *cont, size_t flags);

static char *list_body(const char *spec, const char *rv, const char *cont)
{
    return list_body_keys(spec, rv, cont, 0);
}

/* flags: JSON_SORT_KEYS writes a custom resource's list as kube-apiserver does (apiVersion,
 * items, kind, metadata: the kind after the items). */
static char *list_body_keys(const char *spec, const char *rv, const char *cont, size_t flags)
{
    json_t *items = json_array();
    char *copy = xstrdup(spec);
    char *save = NULL;
    for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(it, ':');
        assert_non_null(colon);
        *colon = '\0';
        /* as kube-apiserver lists them: items carry no apiVersion/kind (the list has them) */
        json_t *item = pod(it, colon + 1);
        json_object_del(item, "apiVersion");
        json_object_del(item, "kind");
        json_array_append_new(items, item);
    }
    free(copy);
    json_t *md = json_pack("{s:s}", "resourceVersion", rv);
    if (cont)
        json_object_set_new(md, "continue", json_string(cont));
    json_t *l = json_pack("{s:s, s:s, s:o, s:o}", "kind", "PodList", "apiVersion", "v1", "metadata",
                          md, "items", items);
    char *s = json_dumps(l, JSON_COMPACT | flags);
    json_decref(l);
    return s;
}

/* Script one list page: query must contain `contains` and lack `lacks`. */
static void push_page(struct fakesrv *s, const char *contains, const char *lacks, const char *spec,
                      const char *rv, const char *cont)
{
    char *body = list_body(spec, rv, cont);
    struct fakesrv_resp r = {
        .method = "GET",
        .path = PODS,
        .query_contains = contains,
        .query_lacks = lacks,
        .status = 200,
        .body = body,
    };
    fakesrv_push(s, &r);
    free(body);
}

static char *event_line(const char *type, const char *name, const char *rv)
{
    json_t *o = strcmp(type, "BOOKMARK") == 0
                    ? json_pack("{s:s, s:s, s:{s:s}}", "kind", "Pod", "apiVersion", "v1",
                                "metadata", "resourceVersion", rv)
                    : pod(name, rv);
    json_t *ev = json_pack("{s:s, s:o}", "type", type, "object", o);
    char *s = json_dumps(ev, JSON_COMPACT);
    json_decref(ev);
    return s;
}

/* Copy of the raw query of request i ("" if absent). */
static char *req_query(struct fakesrv *s, size_t i)
{
    struct fakesrv_req *r = fakesrv_req_get(s, i);
    if (!r)
        return xstrdup("");
    char *q = xstrdup(r->query);
    fakesrv_req_free(r);
    return q;
}

/* Index of the n-th (0-based) request whose query contains `needle` (lacking `lacks`), or -1. */
static int find_req(struct fakesrv *s, const char *needle, const char *lacks, int nth)
{
    size_t n = fakesrv_nreq(s);
    for (size_t i = 0; i < n; i++) {
        char *q = req_query(s, i);
        bool hit = strstr(q, needle) && (!lacks || !strstr(q, lacks));
        free(q);
        if (hit && nth-- == 0)
            return (int)i;
    }
    return -1;
}

static int count_req(struct fakesrv *s, const char *needle, const char *lacks)
{
    int c = 0;
    while (find_req(s, needle, lacks, c) >= 0)
        c++;
    return c;
}

static bool query_has(struct fakesrv *s, int i, const char *needle)
{
    char *q = req_query(s, (size_t)i);
    bool ok = strstr(q, needle) != NULL;
    free(q);
    return ok;
}

/* ---- tests --------------------------------------------------------------- */

static const char *const no_events[] = {NULL};

static bool three_events_after_list(struct fx *f)
{
    return f->rec.n >= 8;
}

static void test_paged_list_then_watch(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, "app=web");
    push_page(f.srv, "limit=500", "continue=", "a:1,b:2", "100", "tok1");
    push_page(f.srv, "continue=tok1", NULL, "c:3,d:4", "100", "tok2");
    push_page(f.srv, "continue=tok2", NULL, "e:5", "100", NULL);
    char *l1 = event_line("ADDED", "f", "101");
    char *l2 = event_line("MODIFIED", "a", "102");
    char *l3 = event_line("DELETED", "b", "103");
    const char *evs[] = {l1, l2, l3, NULL};
    fakesrv_push_watch(f.srv, PODS, evs, FAKESRV_HOLD);
    free(l1);
    free(l2);
    free(l3);

    assert_false(informer_has_synced(f.inf));
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_int_equal(informer_start(f.inf, NULL), -EALREADY);
    assert_true(run_until(&f, three_events_after_list, 5.0));

    /* The list pages arrive as adds before has_synced, the watch events after. */
    assert_true(informer_has_synced(f.inf));
    assert_int_equal(f.rec.adds_before_sync, 5);
    assert_string_equal(f.rec.log[0], "add a 1");
    assert_string_equal(f.rec.log[4], "add e 5");
    assert_string_equal(f.rec.log[5], "add f 101");
    assert_string_equal(f.rec.log[6], "update a 1>102");
    assert_string_equal(f.rec.log[7], "delete b 103");
    assert_int_equal(f.rec.listed, 5); /* the list's five adds, not the watch's events */
    assert_false(informer_listing(f.inf));
    assert_string_equal(informer_last_rv(f.inf), "103");
    struct store *st = informer_store(f.inf);
    assert_int_equal(store_len(st), 5);
    assert_non_null(store_get(st, "ns/f"));
    assert_null(store_get(st, "ns/b"));
    assert_string_equal(rv_of(store_get(st, "ns/a")), "102");
    /* A listed object gets the list's apiVersion and kind (an Event about it needs them). */
    assert_string_equal(json_string_value(json_object_get(store_get(st, "ns/c"), "kind")), "Pod");
    assert_string_equal(json_string_value(json_object_get(store_get(st, "ns/c"), "apiVersion")),
                        "v1");

    /* Requests: three pages with the selector, then one watch from the list's RV. */
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    int p1 = find_req(f.srv, "limit=500", "continue=", 0);
    int p2 = find_req(f.srv, "continue=tok1", NULL, 0);
    int p3 = find_req(f.srv, "continue=tok2", NULL, 0);
    int w = find_req(f.srv, "watch=", NULL, 0);
    assert_true(p1 == 0 && p2 == 1 && p3 == 2 && w == 3);
    assert_true(query_has(f.srv, p1, "labelSelector=app%3Dweb"));
    assert_true(query_has(f.srv, p3, "limit=500"));
    /* The first list may come from the server's cache (client-go's reflector: RV "0"); its
     * continuations carry no resourceVersion (the token has it). */
    assert_true(query_has(f.srv, p1, "resourceVersion=0"));
    assert_false(query_has(f.srv, p2, "resourceVersion="));
    assert_false(query_has(f.srv, p3, "resourceVersion="));
    assert_true(query_has(f.srv, w, "labelSelector=app%3Dweb"));
    assert_true(query_has(f.srv, w, "resourceVersion=100"));
    assert_true(query_has(f.srv, w, "allowWatchBookmarks=true"));
    char *q = req_query(f.srv, (size_t)w);
    const char *t = strstr(q, "timeoutSeconds=");
    assert_non_null(t);
    long secs = strtol(t + strlen("timeoutSeconds="), NULL, 10);
    assert_true(secs >= 300 && secs <= 600);
    free(q);

    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.lists, 1);
    assert_int_equal(s.list_pages, 3);
    assert_int_equal(s.watches, 1);
    assert_int_equal(s.events, 3);
    assert_int_equal(s.failures, 0);

    /* Enqueue handlers: every current object's key lands in the queue once. */
    struct wq_opts wo = {0};
    struct wq *queue = wq_new(&wo);
    struct informer_handlers eh;
    informer_enqueue_handlers(&eh, queue);
    informer_add_handlers(f.inf, &eh);
    struct wq_stats ws;
    wq_stats(queue, &ws);
    assert_int_equal(ws.depth, 5);
    const char *k = wq_get(queue);
    assert_non_null(k);
    assert_non_null(store_get(st, k));
    assert_int_equal(wq_done(queue, k), 0);

    /* A handler added late receives the current objects as adds. */
    struct rec late = {.inf = f.inf};
    struct informer_handlers h = {.on_add = on_add, .ud = &late};
    informer_add_handlers(f.inf, &h);
    assert_int_equal(late.adds, 5);
    fx_free(&f);
    wq_free(queue);
}

static bool second_watch_started(struct fx *f)
{
    return count_req(f->srv, "watch=", NULL) >= 2;
}

static void test_bookmark(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    push_page(f.srv, "limit=500", "watch=", "a:1", "10", NULL);
    char *bm = event_line("BOOKMARK", NULL, "20");
    const char *evs[] = {bm, NULL};
    /* The first watch ends cleanly after the bookmark; the second one is held. */
    fakesrv_push_watch(f.srv, PODS, evs, FAKESRV_FINISH);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    free(bm);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, second_watch_started, 5.0));
    /* The bookmark advanced the RV: no handler call, the re-watch starts from it
       without a re-list and without a backoff (the watch had an event). */
    assert_int_equal(f.rec.n, 1);
    assert_string_equal(f.rec.log[0], "add a 1");
    assert_string_equal(informer_last_rv(f.inf), "20");
    int w1 = find_req(f.srv, "watch=", NULL, 0);
    int w2 = find_req(f.srv, "watch=", NULL, 1);
    assert_true(query_has(f.srv, w1, "resourceVersion=10"));
    assert_true(query_has(f.srv, w2, "resourceVersion=20"));
    assert_int_equal(count_req(f.srv, "limit=", NULL), 1);
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.failures, 0);
    assert_int_equal(s.lists, 1);
    assert_string_equal(rv_of(store_get(informer_store(f.inf), "ns/a")), "1");
    fx_free(&f);
}

static bool relist_delivered(struct fx *f)
{
    return f->rec.n >= 6 && count_req(f->srv, "watch=", NULL) >= 2;
}

static void test_error_410_relist_diff(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    push_page(f.srv, "limit=500", "watch=", "a:1,b:2,c:3", "10", NULL);
    char *err410 = fakesrv_watch_error_line(410);
    const char *evs[] = {err410, NULL};
    fakesrv_push_watch(f.srv, PODS, evs, FAKESRV_HOLD);
    free(err410);
    /* The re-list: a unchanged, b changed, c gone, d new. */
    push_page(f.srv, "limit=500", "watch=", "a:1,b:5,d:6", "20", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, relist_delivered, 5.0));
    assert_int_equal(f.rec.n, 6);
    assert_string_equal(f.rec.log[3], "update b 2>5");
    assert_string_equal(f.rec.log[4], "add d 6");
    assert_string_equal(f.rec.log[5], "delete c 3"); /* the last known object */
    assert_int_equal(f.rec.listed, 6);               /* both lists' events */
    assert_int_equal(f.rec.adds, 4);
    assert_int_equal(f.rec.updates, 1);
    assert_int_equal(f.rec.deletes, 1);
    assert_int_equal(count_req(f.srv, "limit=500", NULL), 2);
    /* The first list from the cache, the re-list after 410 a consistent read (never back in
     * time: no resourceVersion at all, not "0" nor the expired one). */
    assert_true(query_has(f.srv, find_req(f.srv, "limit=500", NULL, 0), "resourceVersion=0"));
    assert_false(query_has(f.srv, find_req(f.srv, "limit=500", NULL, 1), "resourceVersion="));
    int w2 = find_req(f.srv, "watch=", NULL, 1);
    assert_true(query_has(f.srv, w2, "resourceVersion=20"));
    assert_string_equal(informer_last_rv(f.inf), "20");
    struct store *st = informer_store(f.inf);
    assert_int_equal(store_len(st), 3);
    assert_null(store_get(st, "ns/c"));
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.expired, 1);
    assert_int_equal(s.lists, 2);
    assert_true(informer_has_synced(f.inf));
    fx_free(&f);
}

/* A packed store: the same events as above; the stored trees are dropped between loop
 * callbacks after the list, reads decode equal objects. */
static void test_packed_relist_diff(void **state)
{
    (void)state;
    struct fx f;
    fx_init_full(&f, NULL, 0, true);
    push_page(f.srv, "limit=500", "watch=", "a:1,b:2,c:3", "10", NULL);
    char *err410 = fakesrv_watch_error_line(410);
    const char *evs[] = {err410, NULL};
    fakesrv_push_watch(f.srv, PODS, evs, FAKESRV_HOLD);
    free(err410);
    push_page(f.srv, "limit=500", "watch=", "a:1,b:5,d:6", "20", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, relist_delivered, 5.0));
    assert_int_equal(f.rec.n, 6);
    assert_string_equal(f.rec.log[3], "update b 2>5");
    assert_string_equal(f.rec.log[4], "add d 6");
    assert_string_equal(f.rec.log[5], "delete c 3");
    struct store *st = informer_store(f.inf);
    assert_int_equal(store_len(st), 3);
    /* run_until's poll timer ran after the list callback: a prepare came in between */
    assert_int_equal(store_decoded(st), 0);
    json_t *b = store_get(st, "ns/b");
    assert_non_null(b);
    assert_string_equal(rv_of(b), "5");
    assert_ptr_equal(store_get(st, "ns/b"), b); /* decoded once, until a trim */
    assert_int_equal(store_decoded(st), 1);
    fx_free(&f);
}

/* The listed objects' shapes (top-level and metadata keys) a handler was given. */
static void on_add_shape(void *ud, json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    json_t *shape = json_pack("{s:b, s:b, s:b, s:b}", "kind", json_object_get(obj, "kind") != NULL,
                              "name", json_object_get(md, "name") != NULL, "ns",
                              json_object_get(md, "namespace") != NULL, "rv",
                              json_object_get(md, "resourceVersion") != NULL);
    char *d = json_dumps(shape, JSON_COMPACT | JSON_SORT_KEYS);
    json_array_append_new(ud, json_string(d));
    free(d);
    json_decref(shape);
}

static bool list_synced(struct fx *f)
{
    return informer_has_synced(f->inf);
}

static bool none_decoded(struct fx *f)
{
    return store_decoded(informer_store(f->inf)) == 0;
}

/* Reads ns/a from a timer while counting: the same tree each time (held by `first`)? The
 * fixture first: run_until's predicates get it. */
struct reader {
    struct fx f;
    json_t *first;
    int reads, changed;
};

static void reader_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    struct reader *r = t->data;
    json_t *a = store_get(informer_store(r->f.inf), "ns/a");
    r->changed += a != r->first;
    r->reads++;
}

static bool reader_done(struct fx *f)
{
    return ((struct reader *)f)->reads >= 12;
}

/* A packed store's trees stay while they are read (the same tree, read every 0.25 s for 3 s:
 * past two INFORMER_DECODED_IDLE_S ticks); once no longer read, they all go within
 * INFORMER_IDLE_TICKS to INFORMER_IDLE_TICKS + 1 ticks (the TTL alone kept a tree read once
 * for two INFORMER_DECODED_TTL_S ticks: 10 s). */
static void test_packed_idle_drop(void **state)
{
    (void)state;
    struct reader r = {0};
    struct fx *f = &r.f;
    fx_init_full(f, NULL, 0, true);
    push_page(f->srv, "limit=500", "watch=", "a:1,b:2", "10", NULL);
    fakesrv_push_watch(f->srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f->inf, NULL), 0);
    assert_true(run_until(f, list_synced, 5.0));
    struct store *st = informer_store(f->inf);
    json_t *a = store_get(st, "ns/a");
    assert_non_null(a);
    assert_non_null(store_get(st, "ns/b"));
    assert_int_equal(store_decoded(st), 2);
    size_t reads = store_decoded_reads(st);
    assert_true(reads >= 2);
    assert_ptr_equal(store_get(st, "ns/a"), a); /* a cached read counts too */
    assert_int_equal(store_decoded_reads(st), reads + 1);
    r.first = json_incref(a); /* its address is not reused */
    ev_timer t;
    ev_timer_init(&t, reader_cb, 0.25, 0.25);
    t.data = &r;
    ev_timer_start(f->loop, &t);
    assert_true(run_until(f, reader_done, 10.0));
    ev_timer_stop(f->loop, &t);
    assert_int_equal(r.changed, 0);
    assert_true(run_until(f, none_decoded, 8.0));
    /* decoded again on the next read: a new tree */
    json_t *again = store_get(st, "ns/a");
    assert_non_null(again);
    assert_ptr_not_equal(again, r.first);
    assert_int_equal(store_decoded(st), 1);
    json_decref(r.first);
    fx_free(f);
}

static bool two_updates(struct fx *f)
{
    return f->rec.updates >= 2 && informer_has_synced(f->inf);
}

/* A projection that says what it reads (project_reads) is given listed items and watch
 * events built with only that and the store's own members; an unpacked store keeps what it
 * returns. */
static void test_project_reads(void **state)
{
    (void)state;
    static const char *const reads[] = {"spec.a", NULL};
    struct fx f;
    struct proj_count pc = {.reads = reads};
    fx_init_opts(&f, NULL, 0, false, &pc, NULL, NULL);
    fakesrv_push_json(f.srv, "GET", PODS, "watch=", 200,
                      "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
                      "{\"resourceVersion\":\"10\"},\"items\":[{\"metadata\":{\"name\":\"a\","
                      "\"namespace\":\"ns\",\"resourceVersion\":\"1\"},\"spec\":{\"a\":1,\"b\":2},"
                      "\"status\":{\"phase\":\"Running\"}}]}");
    /* a change, a bookmark, then 410 Expired: its Status read whole, the informer relists */
    char *err410 = fakesrv_watch_error_line(410);
    const char *evs[] = {"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\","
                         "\"namespace\":\"ns\",\"resourceVersion\":\"11\"},\"spec\":{\"a\":3},"
                         "\"status\":{\"phase\":\"Failed\"}}}",
                         "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":"
                         "{\"resourceVersion\":\"20\",\"annotations\":{\"x\":\"y\"}}}}",
                         err410, NULL};
    fakesrv_push_watch(f.srv, PODS, evs, FAKESRV_HOLD);
    free(err410);
    fakesrv_push_json(f.srv, "GET", PODS, "watch=", 200,
                      "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
                      "{\"resourceVersion\":\"30\"},\"items\":[{\"metadata\":{\"name\":\"a\","
                      "\"namespace\":\"ns\",\"resourceVersion\":\"25\"},\"spec\":{\"a\":4,"
                      "\"b\":2},\"status\":{\"phase\":\"Running\"}}]}");
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, two_updates, 5.0));
    assert_int_equal(pc.calls, 3);
    assert_int_equal(pc.with_spec, 3);
    assert_int_equal(pc.with_status, 0);
    struct informer_stats st;
    informer_stats(f.inf, &st);
    assert_int_equal(st.expired, 1);
    assert_int_equal(st.lists, 2);
    assert_true(query_has(f.srv, find_req(f.srv, "watch=", NULL, 0), "resourceVersion=10"));
    json_t *a = store_get(informer_store(f.inf), "ns/a");
    char *d = json_dumps(a, JSON_COMPACT);
    assert_string_equal(d, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\","
                           "\"resourceVersion\":\"25\"},\"spec\":{\"a\":4},\"kind\":\"Pod\","
                           "\"apiVersion\":\"v1\"}");
    free(d);

    /* beyond jscan_load_paths' limits once under "object.": refused at informer_new */
    static const char *const deep[] = {"a.b.c.d.e.f.g.h", NULL};
    struct err e;
    err_clear(&e);
    struct informer *inf = NULL;
    struct informer_opts io = {.client = f.client,
                               .version = "v1",
                               .resource = "pods",
                               .project = count_project,
                               .project_reads = deep};
    assert_int_equal(informer_new(&io, &inf, &e), -EINVAL);
    assert_null(inf);
    assert_non_null(strstr(e.msg, "watch events"));
    fx_free(&f);
}

/* Handlers that all say what they read of a listed object get a view of the union of it
 * from a packed store (the rest of the object not decoded); one that does not gets whole
 * objects, and so do all the others; one without on_add has no say. */
static void test_listed_view(void **state)
{
    (void)state;
    static const char *const name[] = {"metadata.name", NULL};
    static const char *const rv[] = {"metadata.resourceVersion", "metadata.name", NULL};
    for (int whole = 0; whole < 2; whole++) {
        struct fx f;
        fx_init_opts(&f, NULL, 0, true, NULL, name, NULL);
        json_t *shapes = json_array();
        struct informer_handlers h2 = {.on_add = on_add_shape, .ud = shapes, .listed_view = rv};
        if (whole)
            h2.listed_view = NULL;
        informer_add_handlers(f.inf, &h2);
        /* one without on_add reads nothing of a listed object: no say in the views */
        struct informer_handlers h3 = {.on_update = on_update, .ud = &f.rec};
        informer_add_handlers(f.inf, &h3);
        push_page(f.srv, "limit=500", "watch=", "a:1,b:2", "10", NULL);
        fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
        assert_int_equal(informer_start(f.inf, NULL), 0);
        assert_true(run_until(&f, list_synced, 5.0));
        assert_int_equal(f.rec.adds, 2);
        assert_string_equal(f.rec.log[0], "add a 1"); /* the union holds the other's rv */
        assert_int_equal(json_array_size(shapes), 2);
        assert_string_equal(json_string_value(json_array_get(shapes, 0)),
                            whole ? "{\"kind\":true,\"name\":true,\"ns\":true,\"rv\":true}"
                                  : "{\"kind\":false,\"name\":true,\"ns\":false,\"rv\":true}");
        json_t *a = store_get(informer_store(f.inf), "ns/a"); /* the store holds it whole */
        assert_string_equal(json_string_value(json_object_get(a, "kind")), "Pod");
        json_decref(shapes);
        fx_free(&f);
    }
}

/* A paged list: each page's items are projected once, when the page arrives (before the next
 * page is asked for), not again when the list is stored; a re-list after 410 projects only
 * what changed and delivers the diff. *state: NULL, or true for a packed store. */
static void test_list_projected_per_page(void **state)
{
    bool packed = *state && *(const bool *)*state;
    struct fx f;
    struct proj_count pc = {0};
    fx_init_opts(&f, NULL, 0, packed, &pc, NULL, NULL);
    push_page(f.srv, "limit=500", "continue=", "a:1,b:2", "100", "tok1");
    push_page(f.srv, "continue=tok1", NULL, "c:3,d:4", "100", "tok2");
    push_page(f.srv, "continue=tok2", NULL, "e:5", "100", NULL);
    char *err410 = fakesrv_watch_error_line(410);
    const char *evs[] = {err410, NULL};
    fakesrv_push_watch(f.srv, PODS, evs, FAKESRV_HOLD);
    free(err410);
    /* The re-list: a, c, e unchanged, b changed, d gone, g new; two pages. */
    push_page(f.srv, "limit=500", "continue=", "a:1,b:7", "200", "tok3");
    push_page(f.srv, "continue=tok3", NULL, "c:3,e:5,g:8", "200", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, relist_delivered, 5.0));
    assert_int_equal(fakesrv_unmatched(f.srv), 0);

    /* First list: 5 projections, page by page, each while its page arrives (list_pages
     * counts the pages done before it). */
    assert_int_equal(pc.calls, 5 + 2);
    const uint64_t want[] = {0, 0, 1, 1, 2, 3, 4};
    for (int i = 0; i < 7; i++)
        assert_int_equal(pc.pages_at[i], want[i]);
    /* Events: 5 adds, then the re-list's diff. */
    assert_int_equal(f.rec.n, 8);
    assert_string_equal(f.rec.log[0], "add a 1");
    assert_string_equal(f.rec.log[4], "add e 5");
    assert_string_equal(f.rec.log[5], "update b 2>7");
    assert_string_equal(f.rec.log[6], "add g 8");
    assert_string_equal(f.rec.log[7], "delete d 4");
    struct store *st = informer_store(f.inf);
    assert_int_equal(store_len(st), 5);
    assert_null(store_get(st, "ns/d"));
    assert_string_equal(rv_of(store_get(st, "ns/b")), "7");
    assert_string_equal(json_string_value(json_object_get(store_get(st, "ns/g"), "kind")), "Pod");
    assert_string_equal(informer_last_rv(f.inf), "200");
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.lists, 2);
    assert_int_equal(s.list_pages, 5);
    fx_free(&f);
}

/* A page with an item without a name: the list is rejected (nothing stored, no event) and
 * retried after a backoff. */
static bool second_list_synced(struct fx *f)
{
    return informer_has_synced(f->inf);
}

static void test_list_bad_item_retries(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    push_page(f.srv, "limit=500", "continue=", "a:1", "100", "tok1");
    struct fakesrv_resp bad = {
        .method = "GET",
        .path = PODS,
        .query_contains = "continue=tok1",
        .status = 200,
        .body = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
                "\"100\"},\"items\":[{\"metadata\":{\"namespace\":\"ns\"}}]}",
    };
    fakesrv_push(f.srv, &bad);
    push_page(f.srv, "limit=500", "continue=", "a:1,b:2", "110", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, second_list_synced, 5.0));
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    assert_int_equal(f.rec.n, 2);
    assert_string_equal(f.rec.log[0], "add a 1");
    assert_string_equal(f.rec.log[1], "add b 2");
    assert_int_equal(f.rec.adds_before_sync, 2);
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.failures, 1);
    assert_int_equal(s.lists, 1);
    assert_string_equal(informer_last_rv(f.inf), "110");
    fx_free(&f);
}

static bool full_list_watching(struct fx *f)
{
    return count_req(f->srv, "watch=", NULL) >= 1;
}

static void test_expired_continue_full_relist(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    push_page(f.srv, "limit=500", "continue=", "a:1", "30", "tok1");
    struct fakesrv_resp gone = {
        .method = "GET",
        .path = PODS,
        .query_contains = "continue=tok1",
        .status = 410,
        .body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":410,"
                "\"reason\":\"Expired\",\"message\":\"The provided continue parameter is too "
                "old\"}",
    };
    fakesrv_push(f.srv, &gone);
    /* The fallback: one full list without limit/continue. */
    push_page(f.srv, NULL, "limit=", "a:1,b:2,c:3", "31", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, full_list_watching, 5.0));
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    /* Each object exactly once: page-1 items of the failed list were dropped. */
    assert_int_equal(f.rec.n, 3);
    assert_int_equal(f.rec.adds, 3);
    assert_string_equal(f.rec.log[0], "add a 1");
    assert_string_equal(f.rec.log[2], "add c 3");
    int full = find_req(f.srv, "", "limit=", 0);
    assert_int_equal(full, 2);
    assert_false(query_has(f.srv, full, "continue="));
    assert_false(query_has(f.srv, full, "watch="));
    int w = find_req(f.srv, "watch=", NULL, 0);
    assert_true(query_has(f.srv, w, "resourceVersion=31"));
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.expired, 1);
    assert_int_equal(s.lists, 1);
    assert_int_equal(s.list_pages, 3);
    assert_int_equal(s.failures, 0);
    fx_free(&f);
}

/* A server that refuses resourceVersion=0 (410 Expired, or "too large" from a cache behind
 * the RV) gets the same list again at once as a consistent read, without a backoff; the
 * continuation-410 fallback (a full list) is a consistent read too. */
static void test_list_from_cache_refused_consistent_read(void **state)
{
    (void)state;
    static const char *const bodies[] = {
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":410,"
        "\"reason\":\"Expired\",\"message\":\"too old resource version: 0\"}",
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":504,"
        "\"reason\":\"Timeout\",\"message\":\"Too large resource version: 0, current: 1\","
        "\"details\":{\"causes\":[{\"type\":\"ResourceVersionTooLarge\",\"message\":"
        "\"Too large resource version\"}]}}",
    };
    static const int codes[] = {410, 504};
    for (int k = 0; k < 2; k++) {
        struct fx f;
        fx_init(&f, NULL);
        struct fakesrv_resp refused = {
            .method = "GET",
            .path = PODS,
            .query_contains = "resourceVersion=0",
            .status = codes[k],
            .body = bodies[k],
        };
        fakesrv_push(f.srv, &refused);
        push_page(f.srv, "limit=500", "resourceVersion=", "a:1,b:2", "40", NULL);
        fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
        assert_int_equal(informer_start(f.inf, NULL), 0);
        assert_true(run_until(&f, full_list_watching, 5.0));
        assert_int_equal(fakesrv_unmatched(f.srv), 0);
        assert_int_equal(f.rec.adds, 2);
        assert_true(query_has(f.srv, 0, "resourceVersion=0"));
        assert_true(query_has(f.srv, 1, "limit=500"));
        assert_false(query_has(f.srv, 1, "resourceVersion="));
        assert_true(query_has(f.srv, find_req(f.srv, "watch=", NULL, 0), "resourceVersion=40"));
        struct informer_stats s;
        informer_stats(f.inf, &s);
        assert_int_equal(s.failures, 0);
        assert_int_equal(s.expired, 1);
        assert_int_equal(s.lists, 1);
        fx_free(&f);
    }

    /* continuation 410 during a list from the cache: the full list is consistent */
    struct fx f;
    fx_init(&f, NULL);
    push_page(f.srv, "resourceVersion=0", "continue=", "a:1", "30", "tok1");
    struct fakesrv_resp gone = {
        .method = "GET",
        .path = PODS,
        .query_contains = "continue=tok1",
        .status = 410,
        .body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":410,"
                "\"reason\":\"Expired\",\"message\":\"The provided continue parameter is too "
                "old\"}",
    };
    fakesrv_push(f.srv, &gone);
    push_page(f.srv, NULL, "limit=", "a:1,b:2", "31", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, full_list_watching, 5.0));
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    assert_false(query_has(f.srv, 2, "resourceVersion="));
    assert_int_equal(f.rec.adds, 2);
    fx_free(&f);
}

/* kube-apiserver answers resourceVersion=0 whole, ignoring limit: the body is split into its
 * items as it arrives, so a list beyond the client's body cap is taken in one request; the
 * cap bounds one item (one beyond it fails the list, which is retried). */
static void test_list_beyond_body_cap_streams(void **state)
{
    (void)state;
    struct fx f;
    fx_init_full(&f, NULL, 400, false);
    /* the whole list (~600 bytes) ignores limit=500 */
    push_page(f.srv, "resourceVersion=0", NULL, "a:1,b:2,c:3,d:4,e:5,f:6", "50", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, full_list_watching, 5.0));
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    assert_int_equal(f.rec.adds, 6);
    assert_true(query_has(f.srv, 0, "resourceVersion=0"));
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.failures, 0);
    assert_int_equal(s.lists, 1);
    assert_int_equal(s.list_pages, 1);
    fx_free(&f);

    /* one item of ~500 bytes: the list from the cache is taken again as a paged consistent
     * read at once (its pages are what kube-apiserver bounds) */
    fx_init_full(&f, NULL, 400, false);
    char big[1024];
    snprintf(big, sizeof big,
             "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
             "\"50\"},\"items\":[{\"metadata\":{\"namespace\":\"ns\",\"name\":\"a\","
             "\"resourceVersion\":\"1\",\"labels\":{\"x\":\"%0500d\"}}}]}",
             0);
    struct fakesrv_resp r = {.method = "GET",
                             .path = PODS,
                             .query_contains = "resourceVersion=0",
                             .status = 200,
                             .body = big};
    fakesrv_push(f.srv, &r);
    push_page(f.srv, "limit=500", "resourceVersion=", "a:1", "51", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, full_list_watching, 5.0));
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    assert_int_equal(f.rec.adds, 1);
    informer_stats(f.inf, &s);
    assert_int_equal(s.failures, 0);
    assert_int_equal(s.expired, 1);
    assert_int_equal(s.lists, 1);
    fx_free(&f);
}

/* kube-apiserver writes a custom resource's list with sorted keys: the kind after the items.
 * An informer told its kind types the items with it as they arrive, whatever the order; one
 * that is not holds them until the list names its kind, within the client's cap (beyond it,
 * the paged consistent read). */
static void test_list_kind_after_items(void **state)
{
    (void)state;
    char *sorted =
        list_body_keys("a:1,b:2,c:3,d:4,e:5,f:6,g:7,h:8,i:9,j:10", "50", NULL, JSON_SORT_KEYS);
    assert_true(strlen(sorted) > 600); /* its items' text beyond the cap of 400 */
    assert_true(strstr(sorted, "\"items\"") < strstr(sorted, "\"kind\""));
    struct fakesrv_resp r = {.method = "GET",
                             .path = PODS,
                             .query_contains = "resourceVersion=0",
                             .status = 200,
                             .body = sorted};
    for (int told = 1; told >= 0; told--) {
        struct fx f;
        fx_init_opts(&f, NULL, 400, true, NULL, NULL, told ? "Pod" : NULL);
        fakesrv_push(f.srv, &r);
        if (!told) /* the items held beyond the cap: paged */
            push_page(f.srv, "limit=500", "resourceVersion=", "a:1,b:2,c:3", "51", NULL);
        fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
        assert_int_equal(informer_start(f.inf, NULL), 0);
        assert_true(run_until(&f, full_list_watching, 5.0));
        assert_int_equal(fakesrv_unmatched(f.srv), 0);
        assert_int_equal(f.rec.adds, told ? 10 : 3);
        struct informer_stats s;
        informer_stats(f.inf, &s);
        assert_int_equal(s.failures, 0);
        assert_int_equal(s.expired, told ? 0 : 1);
        assert_int_equal(s.list_pages, told ? 1 : 2);
        json_t *a = store_get(informer_store(f.inf), "ns/a");
        assert_string_equal(json_string_value(json_object_get(a, "kind")), "Pod");
        assert_string_equal(json_string_value(json_object_get(a, "apiVersion")), "v1");
        fx_free(&f);
    }
    free(sorted);
}

/* A stopped informer started again lists as a consistent read: its store holds what it had,
 * and a list from a lagging cache could take it back in time. */
static bool first_watch_started(struct fx *f)
{
    return count_req(f->srv, "watch=", NULL) >= 1;
}

static bool second_list_watching(struct fx *f)
{
    return count_req(f->srv, "watch=", NULL) >= 2;
}

static void test_restart_lists_consistent(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    push_page(f.srv, "resourceVersion=0", "watch=", "a:1", "10", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, first_watch_started, 5.0));
    informer_stop(f.inf);
    push_page(f.srv, "limit=500", "resourceVersion=", "a:1,b:2", "12", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, second_list_watching, 5.0));
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    int l2 = find_req(f.srv, "limit=500", NULL, 1);
    assert_true(l2 > 0);
    assert_false(query_has(f.srv, l2, "resourceVersion="));
    assert_int_equal(f.rec.adds, 2);
    fx_free(&f);
}

static void test_dropped_watch_rewatches(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    push_page(f.srv, "limit=500", "watch=", "a:1", "10", NULL);
    char *l1 = event_line("ADDED", "b", "11");
    char *l2 = event_line("MODIFIED", "b", "12");
    const char *evs[] = {l1, l2, NULL};
    fakesrv_push_watch(f.srv, PODS, evs, FAKESRV_DROP);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    free(l1);
    free(l2);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, second_watch_started, 5.0));
    assert_int_equal(f.rec.n, 3);
    assert_string_equal(f.rec.log[2], "update b 11>12");
    int w2 = find_req(f.srv, "watch=", NULL, 1);
    assert_true(query_has(f.srv, w2, "resourceVersion=12"));
    assert_int_equal(count_req(f.srv, "limit=", NULL), 1); /* no re-list */
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.failures, 1);
    assert_int_equal(s.lists, 1);
    fx_free(&f);
}

static bool third_watch_started(struct fx *f)
{
    return count_req(f->srv, "watch=", NULL) >= 3;
}

static void test_short_watch_backoff(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    push_page(f.srv, "limit=500", "watch=", "a:1", "10", NULL);
    /* Two watches that end at once without events, then a held one. */
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_FINISH);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_FINISH);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, third_watch_started, 5.0));
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.failures, 2);
    /* No jitter in this fixture: 10 ms, then 20 ms. */
    assert_true(s.last_backoff_s > 0.0199 && s.last_backoff_s < 0.0201);
    int w3 = find_req(f.srv, "watch=", NULL, 2);
    assert_true(query_has(f.srv, w3, "resourceVersion=10"));
    assert_int_equal(count_req(f.srv, "limit=", NULL), 1);
    /* The backoff really waited between the watch requests. */
    struct fakesrv_req *r1 = fakesrv_req_get(f.srv, (size_t)find_req(f.srv, "watch=", NULL, 1));
    struct fakesrv_req *r2 = fakesrv_req_get(f.srv, (size_t)w3);
    assert_true(r2->t - r1->t >= 0.019);
    fakesrv_req_free(r1);
    fakesrv_req_free(r2);
    fx_free(&f);
}

static bool relisted_and_watching(struct fx *f)
{
    return count_req(f->srv, "watch=", NULL) >= 2;
}

static void test_watch_http_410_relists(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    push_page(f.srv, "limit=500", "watch=", "a:1,b:2", "10", NULL);
    struct fakesrv_resp gone = {
        .method = "GET",
        .path = PODS,
        .query_contains = "watch=",
        .status = 410,
        .body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":410,"
                "\"reason\":\"Gone\",\"message\":\"too old resource version: 10 (50)\"}",
    };
    fakesrv_push(f.srv, &gone);
    push_page(f.srv, "limit=500", "watch=", "b:2", "50", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, relisted_and_watching, 5.0));
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    assert_int_equal(f.rec.n, 3);
    assert_string_equal(f.rec.log[2], "delete a 1");
    int w2 = find_req(f.srv, "watch=", NULL, 1);
    assert_true(query_has(f.srv, w2, "resourceVersion=50"));
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.expired, 1);
    assert_int_equal(s.lists, 2);
    fx_free(&f);
}

/* A watch from a resourceVersion the server has not reached (it lost data,
 * e.g. an etcd restore, or a hub restarted without its data) answers 504
 * "Too large resource version": re-list (a consistent read), as client-go's
 * reflector does. It used to re-watch from the same RV forever. */
static void test_watch_rv_too_large_relists(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    push_page(f.srv, "limit=500", "watch=", "a:1,b:2", "50", NULL);
    struct fakesrv_resp ahead = {
        .method = "GET",
        .path = PODS,
        .query_contains = "watch=",
        .status = 504,
        .body =
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":504,"
            "\"reason\":\"Timeout\",\"message\":\"Too large resource version: 50, current: 10\","
            "\"details\":{\"causes\":[{\"type\":\"ResourceVersionTooLarge\",\"message\":"
            "\"Too large resource version\"}]}}",
    };
    fakesrv_push(f.srv, &ahead);
    push_page(f.srv, "limit=500", "watch=", "b:2", "10", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, relisted_and_watching, 10.0));
    assert_int_equal(fakesrv_unmatched(f.srv), 0);
    assert_string_equal(f.rec.log[2], "delete a 1");
    int w2 = find_req(f.srv, "watch=", NULL, 1);
    assert_true(query_has(f.srv, w2, "resourceVersion=10"));
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.lists, 2);
    fx_free(&f);
}

static bool fourth_watch_started(struct fx *f)
{
    return count_req(f->srv, "watch=", NULL) >= 4;
}

static void test_backoff_resets_after_quiet_period(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    /* Shorter reset period for the test: 50 ms without failure resets the backoff. */
    informer_free(f.inf);
    struct informer_opts io = {
        .client = f.client,
        .version = "v1",
        .resource = "pods",
        .backoff_initial_s = 0.01,
        .backoff_max_s = 0.1,
        .backoff_reset_s = 0.05,
        .backoff_jitter = -1,
    };
    assert_int_equal(informer_new(&io, &f.inf, NULL), 0);
    f.rec.inf = f.inf;
    struct informer_handlers h = {on_add, on_update, on_delete, &f.rec};
    informer_add_handlers(f.inf, &h);

    push_page(f.srv, "limit=500", "watch=", "a:1", "10", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_FINISH); /* failure 1: 10 ms */
    /* A healthy watch: a bookmark, 150 ms of quiet, another bookmark, clean end. */
    char *b1 = event_line("BOOKMARK", NULL, "11");
    char *b2 = event_line("BOOKMARK", NULL, "12");
    char *b1n = xasprintf("%s\n", b1);
    char *b2n = xasprintf("%s\n", b2);
    struct fakesrv_chunk chunks[] = {{0, b1n, 0}, {0.15, b2n, 0}};
    struct fakesrv_resp healthy = {
        .method = "GET",
        .path = PODS,
        .query_contains = "watch=",
        .chunks = chunks,
        .n_chunks = 2,
        .end = FAKESRV_FINISH,
    };
    fakesrv_push(f.srv, &healthy);
    free(b1);
    free(b2);
    free(b1n);
    free(b2n);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_FINISH); /* failure 2: reset -> 10 ms */
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, fourth_watch_started, 5.0));
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.failures, 2);
    /* Without the reset the second delay would be 20 ms. */
    assert_true(s.last_backoff_s > 0.0099 && s.last_backoff_s < 0.0101);
    assert_string_equal(informer_last_rv(f.inf), "12");
    int w4 = find_req(f.srv, "watch=", NULL, 3);
    assert_true(query_has(f.srv, w4, "resourceVersion=12"));
    fx_free(&f);
}

static void count_same(void *ud, json_t *old, json_t *new_obj)
{
    struct rec *r = ud;
    if (old == new_obj)
        r->same_updates++;
    else
        r->updates++;
}

static bool two_resyncs(struct fx *f)
{
    return f->rec.same_updates >= 4;
}

static void test_resync(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    informer_free(f.inf);
    struct informer_opts io = {
        .client = f.client,
        .version = "v1",
        .resource = "pods",
        .resync_s = 0.03,
    };
    assert_int_equal(informer_new(&io, &f.inf, NULL), 0);
    f.rec.inf = f.inf;
    struct informer_handlers h = {.on_update = count_same, .ud = &f.rec};
    informer_add_handlers(f.inf, &h);
    push_page(f.srv, "limit=500", "watch=", "a:1,b:2", "10", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_true(run_until(&f, two_resyncs, 5.0));
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_true(s.resyncs >= 2);
    assert_int_equal(f.rec.same_updates, 2 * (int)s.resyncs);
    assert_int_equal(f.rec.updates, 0);
    /* Resync never talks to the server: one list, one watch. */
    assert_int_equal(fakesrv_nreq(f.srv), 2);
    fx_free(&f);
}

static bool list_failed_then_synced(struct fx *f)
{
    return informer_has_synced(f->inf) && count_req(f->srv, "watch=", NULL) >= 1;
}

static void test_list_failure_retries_and_stop(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, NULL);
    fakesrv_push_status(f.srv, "GET", PODS, 500, "InternalError", "etcd is down");
    push_page(f.srv, "limit=500", "watch=", "a:1", "7", NULL);
    fakesrv_push_watch(f.srv, PODS, no_events, FAKESRV_HOLD);
    assert_int_equal(informer_start(f.inf, NULL), 0);
    assert_false(informer_has_synced(f.inf));
    assert_true(run_until(&f, list_failed_then_synced, 5.0));
    struct informer_stats s;
    informer_stats(f.inf, &s);
    assert_int_equal(s.failures, 1);
    assert_int_equal(s.lists, 1);
    assert_int_equal(f.rec.adds, 1);
    /* Stop cancels the held watch; the store keeps its contents. */
    informer_stop(f.inf);
    assert_int_equal(kube_client_pending(f.client), 0);
    assert_int_equal(store_len(informer_store(f.inf)), 1);
    struct err e;
    err_clear(&e);
    struct informer_opts bad = {.client = f.client, .resource = "pods"};
    struct informer *x = NULL;
    assert_int_equal(informer_new(&bad, &x, &e), -EINVAL);
    assert_null(x);
    assert_string_equal(informer_path(f.inf), PODS);
    fx_free(&f);
}

int main(void)
{
    static bool packed = true;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_projected_per_page),
        cmocka_unit_test_prestate(test_list_projected_per_page, &packed),
        cmocka_unit_test(test_list_bad_item_retries),
        cmocka_unit_test(test_paged_list_then_watch),
        cmocka_unit_test(test_bookmark),
        cmocka_unit_test(test_error_410_relist_diff),
        cmocka_unit_test(test_packed_relist_diff),
        cmocka_unit_test(test_packed_idle_drop),
        cmocka_unit_test(test_listed_view),
        cmocka_unit_test(test_project_reads),
        cmocka_unit_test(test_expired_continue_full_relist),
        cmocka_unit_test(test_list_from_cache_refused_consistent_read),
        cmocka_unit_test(test_list_beyond_body_cap_streams),
        cmocka_unit_test(test_list_kind_after_items),
        cmocka_unit_test(test_restart_lists_consistent),
        cmocka_unit_test(test_dropped_watch_rewatches),
        cmocka_unit_test(test_short_watch_backoff),
        cmocka_unit_test(test_watch_http_410_relists),
        cmocka_unit_test(test_watch_rv_too_large_relists),
        cmocka_unit_test(test_backoff_resets_after_quiet_period),
        cmocka_unit_test(test_resync),
        cmocka_unit_test(test_list_failure_retries_and_stop),
    };
    return cmocka_run_group_tests_name("informer", tests, NULL, NULL);
}
