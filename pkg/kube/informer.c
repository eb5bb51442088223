/*
 * informer: see informer.h. A small state machine on the client's loop:
 *
 *   start -> LIST (pages) -> replace store, deliver diff -> WATCH
 *   WATCH end: clean            -> WATCH (same RV, no backoff)
 *              clean but short  -> backoff -> WATCH
 *              410 Gone/Expired -> backoff -> LIST
 *              other failure    -> backoff -> WATCH (from the last RV)
 *   LIST failure: continuation page 410 -> unpaged LIST at once,
 *                 anything else -> backoff -> LIST
 *
 * `gen` changes on every start/stop so that a completion which races with
 * a stop/start issued from a handler does not continue the old run.
 */
#include "pkg/kube/informer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jscan.h"
#include "pkg/json/jsplit.h"
#include "pkg/kube/watch.h"
#include "pkg/util/rng.h"
#include "pkg/util/clock.h"
#include "pkg/util/heaptrim.h"
#include "pkg/util/xalloc.h"
#include "pkg/workqueue/workqueue.h"

enum inf_state { INF_IDLE, INF_LISTING, INF_WATCHING, INF_WAITING };
enum inf_next { NEXT_LIST, NEXT_WATCH };

struct informer {
    struct kube_client *client;
    struct ev_loop *loop;
    const struct logger *lg;
    char *name;
    char *path;
    char *label_selector;
    char *field_selector;
    struct store *store;
    /* what a watch event's line is built of (watch_decoder.paths, event_paths_new), or NULL:
     * all of it */
    struct jscan_paths *event_paths;
    bool listing;        /* the handlers are called with a list's difference (informer_listing) */
    ev_prepare trim;     /* packed store: bounds its decoded trees between loop iterations */
    ev_timer trim_timer; /* packed store: drops the decoded trees not read lately */
    size_t idle_reads;   /* store_decoded_reads at the previous tick */
    unsigned idle_ticks; /* ticks in a row without a use of the decoded trees */
    unsigned ttl_ticks;  /* ticks since the last TTL trim */
    bool trimming;
    bool trim_all;   /* a list was stored: drop every decoded tree at the next prepare */
    bool trim_pages; /* ... and it was a big one: heaptrim_request then */
    struct informer_handlers *h;
    size_t nh;
    char *last_err; /* the last failure logged at warn, until a list succeeds */

    int page_size;
    double b_init, b_max, b_reset, b_jitter, short_watch;
    int wt_min, wt_max;
    struct rng rng;

    bool running;
    bool synced;
    unsigned gen;
    enum inf_state state;
    char *rv;

    /* list in progress */
    struct kube_call *call;
    struct store_list *items; /* the pages so far, projected as they arrive */
    char *kind, *api_version; /* informer_opts.kind and its group/version, or NULL */
    struct jsplit *split;     /* the page arriving, split into its items as it comes */
    char *page_kind;          /* its items' kind ("Pod" of "PodList"), once known */
    bool page_kind_known;
    char *cont;
    bool unpaged;
    bool from_cache; /* this list asked for resourceVersion=0 */
    /* client-go's isLastSyncResourceVersionUnavailable: a 410 or "too large" answer; lists
     * are consistent reads until one succeeds */
    bool rv_unavailable;

    /* watch in progress */
    struct kube_watch *watch;
    double watch_started;
    uint64_t watch_events;

    /* backoff */
    double step;
    double last_failure;
    bool has_failed;
    ev_timer timer;
    enum inf_next next;
    double resync_s;
    ev_timer resync;

    struct informer_stats st;
};

static void start_list(struct informer *inf);
static void start_watch(struct informer *inf);

/* ---- helpers ------------------------------------------------------------- */

static void set_rv(struct informer *inf, const char *rv)
{
    if (!rv || !*rv || (inf->rv && strcmp(inf->rv, rv) == 0))
        return;
    free(inf->rv);
    inf->rv = xstrdup(rv);
}

/* The page's splitter goes (after each page and with the list). */
static void page_reset(struct informer *inf)
{
    jsplit_free(inf->split);
    inf->split = NULL;
    FREE_AND_NULL(inf->page_kind);
    inf->page_kind_known = false;
}

static void list_reset(struct informer *inf)
{
    page_reset(inf);
    store_list_free(inf->items);
    inf->items = NULL;
    FREE_AND_NULL(inf->cont);
    inf->unpaged = false;
}

/* Selector query pairs; `q` must hold 5 entries plus room for extra pairs. */
static size_t selector_query(const struct informer *inf, const char **q)
{
    size_t n = 0;
    if (inf->label_selector) {
        q[n++] = "labelSelector";
        q[n++] = inf->label_selector;
    }
    if (inf->field_selector) {
        q[n++] = "fieldSelector";
        q[n++] = inf->field_selector;
    }
    q[n] = NULL;
    return n;
}

static void deliver_add(struct informer *inf, json_t *obj)
{
    for (size_t i = 0; i < inf->nh && inf->running; i++)
        if (inf->h[i].on_add)
            inf->h[i].on_add(inf->h[i].ud, obj);
}

static void deliver_update(struct informer *inf, json_t *old, json_t *new_obj)
{
    for (size_t i = 0; i < inf->nh && inf->running; i++)
        if (inf->h[i].on_update)
            inf->h[i].on_update(inf->h[i].ud, old, new_obj);
}

static void deliver_delete(struct informer *inf, json_t *obj)
{
    for (size_t i = 0; i < inf->nh && inf->running; i++)
        if (inf->h[i].on_delete)
            inf->h[i].on_delete(inf->h[i].ud, obj);
}

/* ---- backoff ------------------------------------------------------------- */

static double backoff_next(struct informer *inf)
{
    double now = clock_mono_s();
    if (!inf->has_failed || now - inf->last_failure > inf->b_reset)
        inf->step = inf->b_init;
    double base = inf->step < inf->b_max ? inf->step : inf->b_max;
    double d = base;
    if (inf->b_jitter > 0)
        d += base * inf->b_jitter * rng_double(&inf->rng);
    inf->step = inf->step * 2 < inf->b_max ? inf->step * 2 : inf->b_max;
    inf->last_failure = now;
    inf->has_failed = true;
    inf->st.last_backoff_s = d;
    return d;
}

static void schedule(struct informer *inf, enum inf_next next, double delay)
{
    inf->state = INF_WAITING;
    inf->next = next;
    ev_timer_stop(inf->loop, &inf->timer);
    ev_now_update(inf->loop); /* the delay counts from now, not from the loop's cached time */
    ev_timer_set(&inf->timer, delay, 0.);
    ev_timer_start(inf->loop, &inf->timer);
}

static void fail_and_retry(struct informer *inf, enum inf_next next, const char *what,
                           const struct err *e)
{
    inf->st.failures++;
    double d = backoff_next(inf);
    const char *msg = e ? e->msg : "";
    /* the same failure again (e.g. a resource a worker does not serve): once at
     * warn, then at --v 1, until a list succeeds */
    if (inf->last_err && strcmp(inf->last_err, msg) == 0) {
        log_v(inf->lg, 1, what, "informer", inf->name, "error", msg, "retry_in_s", LOG_DBL(d));
    } else {
        log_warn(inf->lg, what, "informer", inf->name, "error", msg, "retry_in_s", LOG_DBL(d));
        free(inf->last_err);
        inf->last_err = xstrdup(msg);
    }
    schedule(inf, next, d);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct informer *inf = w->data;
    if (!inf->running)
        return;
    if (inf->next == NEXT_LIST)
        start_list(inf);
    else
        start_watch(inf);
}

static int resync_one(const char *key, json_t *obj, void *ud)
{
    struct informer *inf = ud;
    deliver_update(inf, obj, obj);
    return inf->running ? 0 : 1;
}

/* Before the loop polls, i.e. between callbacks: when the packed store caches more than
 * INFORMER_DECODED_MAX decoded trees, those not read since the last trim go, and all of them
 * when more than twice that remain (a pass over every object, a list); their pages too after a
 * big pass (the lifetime in store.h). */
static void trim_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
    struct informer *inf = w->data;
    if (inf->trim_all) {
        inf->trim_all = false;
        if (store_trim(inf->store, true) >= INFORMER_TRIM_ITEMS || inf->trim_pages)
            heaptrim_request(inf->loop);
        inf->trim_pages = false;
        return;
    }
    if (store_decoded(inf->store) <= INFORMER_DECODED_MAX)
        return;
    size_t dropped = store_trim(inf->store, false);
    if (store_decoded(inf->store) > 2 * INFORMER_DECODED_MAX)
        dropped += store_trim(inf->store, true);
    if (dropped >= INFORMER_TRIM_ITEMS)
        heaptrim_request(inf->loop);
}

/* Every INFORMER_DECODED_IDLE_S: all the trees go when none was used for INFORMER_IDLE_TICKS
 * ticks in a row (a settled operator holds no decoded tree: 630 of them, 7 MB of the JSON
 * pool, were still cached 6 s after a restart's passes, bench-scale; two ticks, not one, so a
 * trickle of changes does not pack each stored watch event's tree at once); while they are
 * used, every INFORMER_DECODED_TTL_S those not read since the last such trim go. */
static void trim_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct informer *inf = w->data;
    size_t reads = store_decoded_reads(inf->store);
    bool idle = reads == inf->idle_reads;
    inf->idle_reads = reads; /* store_trim does not count */
    inf->idle_ticks = idle ? inf->idle_ticks + 1 : 0;
    if (idle && inf->idle_ticks >= INFORMER_IDLE_TICKS) {
        size_t dropped = store_trim(inf->store, true);
        if (dropped >= INFORMER_IDLE_TRIM_ITEMS)
            heaptrim_request(inf->loop); /* with the JSON pool's empty slabs (manager.h) */
        else if (dropped)
            heaptrim_release(inf->loop); /* the pool's slabs alone */
        inf->ttl_ticks = 0;
    } else if (!idle && ++inf->ttl_ticks * INFORMER_DECODED_IDLE_S >= INFORMER_DECODED_TTL_S) {
        store_trim(inf->store, false);
        inf->ttl_ticks = 0;
    }
}

static void resync_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct informer *inf = w->data;
    if (!inf->running || !inf->synced)
        return;
    inf->st.resyncs++;
    store_foreach(inf->store, resync_one, inf);
}

/* ---- list ---------------------------------------------------------------- */

static void replace_cb(enum store_event_type t, json_t *old, json_t *new_obj, void *ud)
{
    struct informer *inf = ud;
    switch (t) {
    case STORE_ADD:
        deliver_add(inf, new_obj);
        break;
    case STORE_UPDATE:
        deliver_update(inf, old, new_obj);
        break;
    case STORE_DELETE:
        deliver_delete(inf, old);
        break;
    }
}

static void list_done(void *ud, const struct kube_result *r);
static int list_body(void *ud, const char *data, size_t n, struct err *e);
static int list_item(void *ud, const json_t *list, size_t i, const char *text, size_t n,
                     struct err *e);

static void list_request(struct informer *inf)
{
    const char *q[12];
    size_t n = selector_query(inf, q);
    char limit[24];
    /* resourceVersion=0 on the first request only: a continuation carries its own RV in the
     * token (kube-apiserver refuses both together) */
    if (inf->from_cache && !inf->cont) {
        q[n++] = "resourceVersion";
        q[n++] = "0";
    }
    if (!inf->unpaged) {
        snprintf(limit, sizeof limit, "%d", inf->page_size);
        q[n++] = "limit";
        q[n++] = limit;
        if (inf->cont) {
            q[n++] = "continue";
            q[n++] = inf->cont;
        }
    }
    q[n] = NULL;
    struct err e;
    err_clear(&e);
    /* the body is split into its items as it arrives (jsplit), not held by the client: a
     * list in flight costs an item's bytes, not its own (20,000 real pods are 100 MB) */
    static const char *const needed[] = {"kind", "apiVersion", NULL};
    page_reset(inf);
    inf->split =
        jsplit_new(inf->kind ? NULL : needed, kube_client_max_body(inf->client), list_item, inf);
    struct kube_request req = {
        .method = "GET", .path = inf->path, .query = q, .on_body = list_body};
    int rc = kube_client_do(inf->client, &req, list_done, inf, &inf->call, &e);
    if (rc < 0) {
        inf->call = NULL;
        list_reset(inf);
        fail_and_retry(inf, NEXT_LIST, "list request failed", &e);
    }
}

static void start_list(struct informer *inf)
{
    list_reset(inf);
    inf->items = store_list_new(inf->store);
    inf->state = INF_LISTING;
    /* client-go's relistResourceVersion(): "0" (any cached state) until the informer has a
     * resourceVersion, a consistent read after that and after a 410 (informer.h) */
    inf->from_cache = !inf->rv && !inf->rv_unavailable;
    log_v(inf->lg, 2, "informer listing", "informer", inf->name, "path", inf->path,
          "resourceVersion", inf->from_cache ? "0" : "");
    list_request(inf);
}

/* The kind a page's items are typed with: the informer's (informer_opts.kind), else the
 * list's "<Kind>List" less "List". A new string, or NULL. */
static char *items_kind(const struct informer *inf, const json_t *list)
{
    if (inf->kind)
        return xstrdup(inf->kind);
    const char *lk = json_string_value(json_object_get(list, "kind"));
    size_t n = lk ? strlen(lk) : 0;
    return n > 4 && strcmp(lk + n - 4, "List") == 0 ? xstrndup(lk, n - 4) : NULL;
}

/* Their apiVersion, the same way (borrowed). */
static const char *items_api_version(const struct informer *inf, const json_t *list)
{
    return inf->kind ? inf->api_version : json_string_value(json_object_get(list, "apiVersion"));
}

/* One item of the page arriving, typed (kube-apiserver lists items without apiVersion and
 * kind, the list carries them, kind "<Kind>List"; watch events carry both: listed objects
 * get them from the list, as client-go's unstructured decoding does, so an Event about any
 * stored object can name it) and projected or packed before the next arrives: no item's
 * whole tree, nor the page's text, outlives its turn. jsplit holds the items back when the
 * list names its kind only after them. */
static int list_item(void *ud, const json_t *list, size_t i, const char *text, size_t n,
                     struct err *e)
{
    struct informer *inf = ud;
    if (!inf->page_kind_known) {
        inf->page_kind = items_kind(inf, list);
        inf->page_kind_known = true;
    }
    int rc =
        store_list_add_text(inf->items, text, n, inf->page_kind, items_api_version(inf, list), e);
    if (rc < 0)
        err_prefix(e, "list item %zu", i); /* list_body names the request */
    return rc;
}

static int list_body(void *ud, const char *data, size_t n, struct err *e)
{
    struct informer *inf = ud;
    int rc = jsplit_feed(inf->split, data, n, e);
    if (rc < 0)
        err_prefix(e, "GET %s: list response", inf->path);
    return rc;
}

/* Items the splitter left in the list (not an array it could split, jsplit.h), typed in
 * place like the split ones. */
static int tree_items(struct informer *inf, json_t *list, struct err *e)
{
    const char *av = items_api_version(inf, list);
    char *kind = items_kind(inf, list);
    json_t *tree = json_object_get(list, "items");
    int rc = 0;
    for (size_t i = 0; i < json_array_size(tree) && rc == 0; i++) {
        json_t *it = json_array_get(tree, i);
        store_item_typed(it, kind, av);
        rc = store_list_add(inf->items, it, e);
        if (rc < 0)
            err_prefix(e, "GET %s: list item %zu", inf->path, i);
    }
    free(kind);
    return rc;
}

const char **informer_view_union(const char *const *const *views, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!views[i])
            return NULL;
        for (size_t j = 0; views[i][j]; j++)
            total++;
    }
    const char **u = xcalloc(total + 1, sizeof(*u));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; views[i][j]; j++) {
            size_t m = 0;
            while (m < k && strcmp(u[m], views[i][j]) != 0)
                m++;
            if (m == k)
                u[k++] = views[i][j];
        }
    return u;
}

/* The union of the listed_view of the handlers with an on_add (one without gets no ADD: it
 * reads nothing of a listed object). */
static const char **listed_view(const struct informer *inf)
{
    const char *const **views = xcalloc(inf->nh + 1, sizeof(*views));
    size_t n = 0;
    for (size_t i = 0; i < inf->nh; i++)
        if (inf->h[i].on_add)
            views[n++] = inf->h[i].listed_view;
    const char **u = informer_view_union(views, n);
    free(views);
    return u;
}

static void list_done(void *ud, const struct kube_result *r)
{
    struct informer *inf = ud;
    inf->call = NULL;
    inf->st.list_pages++;
    if (r->rc == -ECANCELED || r->rc == -ESHUTDOWN) {
        /* The client is going away: nothing to retry against. */
        list_reset(inf);
        inf->running = false;
        inf->state = INF_IDLE;
        return;
    }
    if (r->rc < 0) {
        if (inf->from_cache && !inf->cont &&
            (kube_err_is_gone(r->err) || kube_err_is_rv_too_large(r->err) || r->rc == -EFBIG)) {
            /* resourceVersion=0 refused (client-go: retry at once as a consistent read), or
             * answered whole (kube-apiserver ignores `limit` there) with more than the client
             * may hold at once (an item, the list without its items, or items held until the
             * list's kind): the consistent read is paged */
            inf->st.expired++;
            inf->rv_unavailable = true;
            log_info(inf->lg, "list from the cache refused, listing as a consistent read",
                     "informer", inf->name, "error", r->err ? r->err->msg : "");
            start_list(inf);
            return;
        }
        if (inf->cont && kube_err_is_gone(r->err)) {
            /* The continue token expired: start over as one unpaged list. */
            inf->st.expired++;
            log_info(inf->lg, "list continue token expired, listing without paging", "informer",
                     inf->name);
            list_reset(inf);
            inf->items = store_list_new(inf->store);
            inf->unpaged = true;
            inf->from_cache = false; /* as client-go's pager: the full list is consistent */
            list_request(inf);
            return;
        }
        list_reset(inf);
        fail_and_retry(inf, NEXT_LIST, "list failed", r->err);
        return;
    }
    struct err e;
    err_clear(&e);
    json_t *list = jsplit_finish(inf->split, &e);
    if (!list) {
        err_prefix(&e, "GET %s: list response", inf->path);
        list_reset(inf);
        fail_and_retry(inf, NEXT_LIST, "list failed", &e);
        return;
    }
    page_reset(inf);
    json_t *items = json_object_get(list, "items");
    json_t *md = json_object_get(list, "metadata");
    if (!json_is_object(list) || (items && !json_is_array(items) && !json_is_null(items))) {
        err_set(&e, -EBADMSG, "GET %s: list response is not a list (no items array)", inf->path);
        json_decref(list);
        list_reset(inf);
        fail_and_retry(inf, NEXT_LIST, "list failed", &e);
        return;
    }
    if (tree_items(inf, list, &e) < 0) {
        json_decref(list);
        list_reset(inf);
        fail_and_retry(inf, NEXT_LIST, "list result rejected", &e);
        return;
    }
    const char *cont = json_string_value(json_object_get(md, "continue"));
    if (!inf->unpaged && cont && *cont) {
        free(inf->cont);
        inf->cont = xstrdup(cont);
        json_decref(list);
        list_request(inf);
        return;
    }
    struct store_list *all = inf->items;
    inf->items = NULL;
    list_reset(inf);
    unsigned gen = inf->gen;
    /* The RV is recorded first so handlers reading informer_last_rv() see the list's. */
    set_rv(inf, json_string_value(json_object_get(md, "resourceVersion")));
    json_decref(list);
    size_t listed = store_list_len(all);
    const char **view = listed_view(inf);
    store_list_set_view(all, view);
    inf->listing = true;
    int rc = store_list_commit(all, replace_cb, inf, &e);
    inf->listing = false;
    store_list_free(all);
    free(view);
    if (inf->trimming) { /* the stored trees go at the next prepare, then the pages */
        inf->trim_all = true;
        inf->trim_pages = inf->trim_pages || listed >= INFORMER_TRIM_ITEMS;
    } else if (listed >= INFORMER_TRIM_ITEMS)
        heaptrim_request(inf->loop); /* the list was freed: its pages go back (informer.h) */
    if (gen != inf->gen || !inf->running)
        return; /* stopped (or restarted) by a handler */
    if (rc < 0) {
        fail_and_retry(inf, NEXT_LIST, "list result rejected", &e);
        return;
    }
    inf->st.lists++;
    inf->rv_unavailable = false;
    free(inf->last_err);
    inf->last_err = NULL;
    if (!inf->synced)
        log_info(inf->lg, "informer synced", "informer", inf->name, "objects",
                 LOG_UINT(store_len(inf->store)), "resourceVersion", inf->rv ? inf->rv : "");
    inf->synced = true;
    start_watch(inf);
}

/* ---- watch --------------------------------------------------------------- */

static int watch_event(void *ud, const struct watch_event *ev)
{
    struct informer *inf = ud;
    inf->watch_events++;
    inf->st.events++;
    json_t *stored = NULL, *old = NULL;
    struct err e;
    err_clear(&e);
    switch (ev->type) {
    case WATCH_ADDED:
    case WATCH_MODIFIED:
        if (store_upsert(inf->store, ev->object, &stored, &old, &e) < 0) {
            log_warn(inf->lg, "watch event ignored", "informer", inf->name, "error", e.msg);
            break;
        }
        set_rv(inf, ev->resource_version);
        if (old)
            deliver_update(inf, old, stored);
        else
            deliver_add(inf, stored);
        break;
    case WATCH_DELETED:
        if (store_delete(inf->store, ev->object, &old, &e) < 0) {
            log_warn(inf->lg, "watch event ignored", "informer", inf->name, "error", e.msg);
            break;
        }
        set_rv(inf, ev->resource_version);
        if (old) {
            /* The final state from the event, projected like everything else. */
            stored = store_project(inf->store, ev->object);
            deliver_delete(inf, stored);
        }
        break;
    case WATCH_BOOKMARK:
        set_rv(inf, ev->resource_version);
        break;
    case WATCH_ERROR:
        /* The watch closes with the Status; watch_close decides. */
        break;
    }
    json_decref(stored);
    json_decref(old);
    return 0;
}

static void watch_close(void *ud, int rc, const struct err *e)
{
    struct informer *inf = ud;
    inf->watch = NULL;
    if (!inf->running)
        return;
    if (rc == -ECANCELED || rc == -ESHUTDOWN) {
        inf->running = false;
        inf->state = INF_IDLE;
        return;
    }
    double dur = clock_mono_s() - inf->watch_started;
    /* Too large: re-watching from that RV would fail forever (client-go's
     * reflector re-lists too) */
    bool too_large = rc != 0 && kube_err_is_rv_too_large(e);
    if (rc == -ESTALE || kube_err_is_gone(e) || too_large) {
        inf->st.expired++;
        inf->rv_unavailable = true;
        double d = backoff_next(inf);
        log_info(inf->lg,
                 too_large ? "watch resourceVersion ahead of the server, re-listing"
                           : "watch expired, re-listing",
                 "informer", inf->name, "resourceVersion", inf->rv ? inf->rv : "", "retry_in_s",
                 LOG_DBL(d));
        schedule(inf, NEXT_LIST, d);
        return;
    }
    if (rc == 0) {
        if (dur < inf->short_watch && inf->watch_events == 0) {
            struct err se;
            err_set(&se, -EIO, "very short watch: %s ended after %.3f s without events", inf->path,
                    dur);
            fail_and_retry(inf, NEXT_WATCH, "watch failed", &se);
            return;
        }
        log_v(inf->lg, 4, "watch ended, re-watching", "informer", inf->name, "resourceVersion",
              inf->rv ? inf->rv : "");
        start_watch(inf);
        return;
    }
    fail_and_retry(inf, NEXT_WATCH, "watch failed", e);
}

static void start_watch(struct informer *inf)
{
    const char *q[8];
    selector_query(inf, q);
    int span = inf->wt_max - inf->wt_min;
    int timeout = inf->wt_min + (span > 0 ? (int)(rng_double(&inf->rng) * (span + 1)) : 0);
    if (timeout > inf->wt_max)
        timeout = inf->wt_max;
    struct kube_watch_opts o = {
        .path = inf->path,
        .query = q,
        .resource_version = inf->rv,
        .timeout_seconds = timeout,
        .event_paths = inf->event_paths,
    };
    struct err e;
    err_clear(&e);
    inf->state = INF_WATCHING;
    inf->watch_events = 0;
    inf->watch_started = clock_mono_s();
    inf->st.watches++;
    int rc = kube_watch_start(inf->client, &o, watch_event, watch_close, inf, &inf->watch, &e);
    if (rc < 0) {
        inf->watch = NULL;
        fail_and_retry(inf, NEXT_WATCH, "watch request failed", &e);
    }
}

/* paths under "object." (a new NULL-terminated array of new strings; NULL for NULL), after
 * `first` when not NULL. */
static char **under_object(const char *first, const char *const *paths)
{
    if (!paths)
        return NULL;
    size_t n = 0;
    while (paths[n])
        n++;
    char **out = xcalloc(n + 2, sizeof(*out)), **w = out;
    if (first)
        *w++ = xstrdup(first);
    for (size_t i = 0; i < n; i++)
        *w++ = xasprintf("object.%s", paths[i]);
    return out;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* What a watch event's line is built of: "type" and the store's reads under "object." (all
 * of it without reads), less what its projection drops (store_drops). */
static int event_paths_new(struct informer *inf, struct err *e)
{
    char **keep = under_object("type", store_reads(inf->store));
    char **drop = under_object(NULL, store_drops(inf->store));
    int rc = jscan_paths_new_drop((const char *const *)keep, (const char *const *)drop,
                                  &inf->event_paths, e);
    strv_free(keep);
    strv_free(drop);
    if (rc < 0)
        err_prefix(e, "informer %s: its watch events", inf->name);
    return rc;
}

/* ---- public -------------------------------------------------------------- */

int informer_new(const struct informer_opts *o, struct informer **out, struct err *e)
{
    *out = NULL;
    if (!o->client)
        return err_set(e, -EINVAL, "informer: no client");
    if (!o->version || !*o->version || !o->resource || !*o->resource)
        return err_set(e, -EINVAL, "informer: version and resource are required");
    int rc = store_reads_check(o->project_reads, e);
    if (rc < 0) {
        err_prefix(e, "informer %s", o->name ? o->name : o->resource);
        return rc;
    }
    struct informer *inf = xcalloc(1, sizeof(*inf));
    inf->client = o->client;
    inf->loop = kube_client_loop(o->client);
    inf->lg = o->lg;
    inf->name = xstrdup(o->name ? o->name : o->resource);
    inf->path = kube_path(o->group, o->version, o->resource, o->ns, NULL, NULL);
    if (o->kind && *o->kind) {
        inf->kind = xstrdup(o->kind);
        inf->api_version =
            o->group && *o->group ? xasprintf("%s/%s", o->group, o->version) : xstrdup(o->version);
    }
    if (o->label_selector && *o->label_selector)
        inf->label_selector = xstrdup(o->label_selector);
    if (o->field_selector && *o->field_selector)
        inf->field_selector = xstrdup(o->field_selector);
    struct store_opts so = {.project = o->project,
                            .project_ud = o->project_ud,
                            .packed = o->packed,
                            .tab = o->tab,
                            .reads = o->project_reads};
    inf->store = store_new(&so);
    rc = event_paths_new(inf, e);
    if (rc < 0) {
        informer_free(inf);
        return rc;
    }
    if (o->packed) {
        ev_prepare_init(&inf->trim, trim_cb);
        inf->trim.data = inf;
        ev_prepare_start(inf->loop, &inf->trim);
        ev_unref(inf->loop); /* neither keeps the loop running */
        ev_timer_init(&inf->trim_timer, trim_timer_cb, INFORMER_DECODED_IDLE_S,
                      INFORMER_DECODED_IDLE_S);
        inf->trim_timer.data = inf;
        ev_timer_start(inf->loop, &inf->trim_timer);
        ev_unref(inf->loop);
        inf->trimming = true;
    }
    inf->page_size = o->page_size > 0 ? o->page_size : INFORMER_PAGE_SIZE;
    inf->b_init = o->backoff_initial_s > 0 ? o->backoff_initial_s : INFORMER_BACKOFF_INITIAL_S;
    inf->b_max = o->backoff_max_s > 0 ? o->backoff_max_s : INFORMER_BACKOFF_MAX_S;
    inf->b_reset = o->backoff_reset_s > 0 ? o->backoff_reset_s : INFORMER_BACKOFF_RESET_S;
    inf->b_jitter = o->backoff_jitter > 0   ? o->backoff_jitter
                    : o->backoff_jitter < 0 ? 0
                                            : INFORMER_BACKOFF_JITTER;
    inf->short_watch = o->short_watch_s > 0 ? o->short_watch_s : INFORMER_SHORT_WATCH_S;
    inf->wt_min = o->watch_timeout_min_s > 0 ? o->watch_timeout_min_s : INFORMER_WATCH_TIMEOUT_MIN;
    inf->wt_max = o->watch_timeout_max_s > 0 ? o->watch_timeout_max_s : INFORMER_WATCH_TIMEOUT_MAX;
    if (inf->wt_max < inf->wt_min)
        inf->wt_max = inf->wt_min;
    if (o->seed)
        rng_seed(&inf->rng, o->seed);
    else
        rng_seed_entropy(&inf->rng, inf);
    ev_timer_init(&inf->timer, timer_cb, 0., 0.);
    inf->timer.data = inf;
    inf->resync_s = o->resync_s > 0 ? o->resync_s : 0;
    ev_timer_init(&inf->resync, resync_cb, inf->resync_s, inf->resync_s);
    inf->resync.data = inf;
    *out = inf;
    return 0;
}

void informer_stop(struct informer *inf)
{
    if (!inf)
        return;
    inf->running = false;
    inf->gen++;
    inf->state = INF_IDLE;
    if (inf->call) {
        struct kube_call *c = inf->call;
        inf->call = NULL;
        kube_call_cancel(c);
    }
    if (inf->watch) {
        struct kube_watch *w = inf->watch;
        inf->watch = NULL;
        kube_watch_stop(w);
    }
    ev_timer_stop(inf->loop, &inf->timer);
    ev_timer_stop(inf->loop, &inf->resync);
    list_reset(inf);
}

void informer_free(struct informer *inf)
{
    if (!inf)
        return;
    informer_stop(inf);
    if (inf->trimming) {
        ev_ref(inf->loop);
        ev_prepare_stop(inf->loop, &inf->trim);
        ev_ref(inf->loop);
        ev_timer_stop(inf->loop, &inf->trim_timer);
    }
    store_free(inf->store);
    jscan_paths_free(inf->event_paths);
    free(inf->h);
    free(inf->rv);
    free(inf->name);
    free(inf->path);
    free(inf->kind);
    free(inf->api_version);
    free(inf->last_err);
    free(inf->label_selector);
    free(inf->field_selector);
    free(inf);
}

static int replay_cb(const char *key, json_t *obj, void *ud)
{
    const struct informer_handlers *h = ud;
    h->on_add(h->ud, obj);
    return 0;
}

void informer_add_handlers(struct informer *inf, const struct informer_handlers *h)
{
    inf->h = xrealloc(inf->h, (inf->nh + 1) * sizeof(*inf->h));
    inf->h[inf->nh++] = *h;
    if (h->on_add && store_len(inf->store) > 0) {
        struct informer_handlers copy = *h;
        store_foreach(inf->store, replay_cb, &copy);
    }
}

void informer_set_listed_view(struct informer *inf, const void *ud, const char *const *view)
{
    for (size_t i = 0; i < inf->nh; i++)
        if (inf->h[i].ud == ud)
            inf->h[i].listed_view = view;
}

static void enqueue_obj(void *ud, json_t *obj)
{
    char *key = store_key_of(obj, NULL);
    if (key)
        wq_add(ud, key);
    free(key);
}

static void enqueue_update(void *ud, json_t *old_obj, json_t *new_obj)
{
    enqueue_obj(ud, new_obj);
}

void informer_enqueue_handlers(struct informer_handlers *h, struct wq *q)
{
    /* enqueue_obj reads the key alone */
    static const char *const key_view[] = {"metadata.name", "metadata.namespace", NULL};
    *h = (struct informer_handlers){.on_add = enqueue_obj,
                                    .on_update = enqueue_update,
                                    .on_delete = enqueue_obj,
                                    .ud = q,
                                    .listed_view = key_view};
}

int informer_add_index(struct informer *inf, const char *name, store_index_fn fn, void *ud,
                       struct err *e)
{
    return store_add_index(inf->store, name, fn, ud, e);
}

int informer_start(struct informer *inf, struct err *e)
{
    if (inf->running)
        return err_set(e, -EALREADY, "informer %s already running", inf->name);
    inf->running = true;
    inf->gen++;
    log_v(inf->lg, 1, "informer starting", "informer", inf->name, "path", inf->path);
    if (inf->resync_s > 0) {
        ev_now_update(inf->loop);
        ev_timer_set(&inf->resync, inf->resync_s, inf->resync_s);
        ev_timer_start(inf->loop, &inf->resync);
    }
    start_list(inf);
    return 0;
}

bool informer_has_synced(const struct informer *inf)
{
    return inf->synced;
}

bool informer_listing(const struct informer *inf)
{
    return inf->listing;
}

struct store *informer_store(const struct informer *inf)
{
    return inf->store;
}

const char *informer_last_rv(const struct informer *inf)
{
    return inf->rv ? inf->rv : "";
}

const char *informer_path(const struct informer *inf)
{
    return inf->path;
}

void informer_stats(const struct informer *inf, struct informer_stats *out)
{
    *out = inf->st;
}
