/*
 * informer: client-go's reflector + shared informer for one resource
 * (group/version/resource, optionally one namespace and selectors), on the
 * kube_client's libev loop (docs/architecture.md).
 *
 *  - list: paged (limit=500, continue tokens); when a continuation page
 *    answers 410 (the continue token expired) the list starts over as one
 *    full list without paging, a consistent read;
 *  - the list result goes through the store as one store_replace() (a
 *    store_list, store.h): handlers receive the difference against the cache
 *    as add/update/delete (a delete carries the last known object), so a
 *    re-list after 410 delivers exactly what changed; has_synced becomes true
 *    once the first list was delivered. Each response is split into its items
 *    (pkg/json/jsplit.h) and each item read from its text before the next
 *    (store_list_add_text): a packed store packs it as it is scanned, without
 *    a tree, others parse, project and free it; so a list never holds its
 *    objects whole, only their projections or packed bytes (a page's or a
 *    whole response's; an item without a name rejects the list, which is
 *    retried after a backoff);
 *  - watch from the list's resourceVersion with allowWatchBookmarks=true and
 *    a random timeoutSeconds in [300, 600]; BOOKMARK only advances the
 *    resourceVersion; ADDED/MODIFIED/DELETED update the store, then the
 *    handlers;
 *  - a watch that ends normally is re-opened from the last resourceVersion
 *    without a list; 410 Gone/Expired (HTTP status or ERROR event) re-lists,
 *    and so does "Too large resource version" (504, the RV is ahead of the
 *    server: it lost data or was replaced; kube_err_is_rv_too_large);
 *    any other failure (dropped connection, error status, watchdog, refused
 *    connection) re-watches from the last resourceVersion after a backoff
 *    (a stale RV then earns a 410 and a re-list);
 *  - backoff as client-go's reflector: 800 ms doubling, cap 30 s, jitter
 *    1.0 (delay = step x (1 + jitter x U[0,1))), reset to 800 ms when the
 *    previous failure is more than 2 min old; a watch that ends in < 1 s
 *    with 0 events counts as a failure; list failures back off the same way.
 *    Every re-list (after 410 included) waits out one backoff step.
 *
 * The first list (client-go's reflector, relistResourceVersion()): until the
 * informer has a resourceVersion, its list asks for resourceVersion=0, "any
 * state", which kube-apiserver answers from its watch cache instead of etcd
 * and answers whole, ignoring `limit` (1.34.4: test/e2e/real_fidelity.sh,
 * cm-list-rv0); the request still says limit=500, as client-go's pager, so
 * a server that pages it is followed (continuation pages carry no
 * resourceVersion: the token holds it). That state may lag the newest by
 * what the cache has not applied yet; the watch from the list's RV then
 * delivers the rest. A 410 or "too large resource version" answer to it, or
 * one holding more than the client may hold at once (-EFBIG, below), is
 * retried at once as a consistent read (no backoff; paged), and after a 410
 * lists are consistent reads until one succeeds, as in client-go.
 *
 * A list's body is split into its items as it arrives (pkg/json/jsplit.h)
 * and each item is projected or packed at once: a list in flight holds one
 * item's text, whatever its size, when the items' kind is known before them
 * (informer_opts.kind, or a list that names its kind first, as kube-apiserver
 * does for built-in kinds). The client's body cap (kube_client_opts max_body)
 * bounds one item, the list without its items and items held for their kind,
 * not the list.
 *
 * Re-list consistency: every other list (a re-list after 410, an informer
 * started again with objects in its store) is sent without
 * resourceVersion, i.e. as a consistent read of the newest state, never from
 * a cache that may lag (client-go re-lists from its last resourceVersion,
 * "not older than"; a consistent read gives the same guarantee and is
 * simpler); the store is replaced by its result as one diff (adds, updates,
 * deletes carrying the last known object) and the watch resumes from the
 * list's RV. So after a re-list the store is at least as new as anything
 * delivered before, and nothing seen in between is lost: an object deleted
 * while the watch was down arrives as a delete. When the server went back in
 * time (restored etcd, a hub restarted without its data), the store follows
 * it: objects it no longer has are deleted, older versions are delivered as
 * updates.
 *
 * Resync (optional, client-go §2.3): every `resync_s` seconds, once synced,
 * every cached object is re-delivered as on_update(obj, obj) (the same
 * pointer twice) without talking to the server, for periodic re-reconciles.
 *
 * When the client is freed under a running informer (calls complete with
 * -ECANCELED / -ESHUTDOWN), the informer stops instead of retrying.
 *
 * Packed stores (informer_opts.packed; store.h): the informer drops the
 * store's decoded trees only between loop callbacks (never during a handler,
 * a reconcile or any other callback): from an ev_timer ticking every
 * INFORMER_DECODED_IDLE_S, all of them once none was used (read, or cached by
 * a read or a watch event) for INFORMER_IDLE_TICKS ticks in a row, with the
 * JSON pool's empty slabs (heaptrim_release, or heaptrim_request after
 * INFORMER_IDLE_TRIM_ITEMS trees or more), and while they are used, every
 * INFORMER_DECODED_TTL_S those not read since the previous such trim; before the loop polls (an
 * ev_prepare), when there are more than INFORMER_DECODED_MAX, those not read
 * since the previous trim, and all of them when more than twice that remain
 * or a list was just stored, with a malloc_trim(0) (heaptrim_request: one for
 * the requests of a burst, pkg/util/heaptrim.h) when that freed
 * INFORMER_TRIM_ITEMS trees or more (after a list of that many, the decoded
 * list's pages go back then, not at once: the stored trees hold some). So
 * what store_get()/store_foreach() return is valid for the rest of the
 * current callback (and until the object is replaced or removed); keep it
 * longer only with json_incref().
 *
 * Handlers run on the loop. Objects passed to them are the store's
 * (projected) objects, borrowed for the call: json_incref() to keep them,
 * never modify them. A handler may call informer_stop() but must not call
 * informer_free().
 */
#ifndef KKS_KUBE_INFORMER_H
#define KKS_KUBE_INFORMER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/kube/client.h"
#include "pkg/kube/store.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

/* client-go constants (reflector.go, pager.go). */
#define INFORMER_PAGE_SIZE         500
#define INFORMER_BACKOFF_INITIAL_S 0.8
#define INFORMER_BACKOFF_MAX_S     30.0
#define INFORMER_BACKOFF_RESET_S   120.0
#define INFORMER_BACKOFF_JITTER    1.0
#define INFORMER_SHORT_WATCH_S     1.0
#define INFORMER_WATCH_TIMEOUT_MIN 300
#define INFORMER_WATCH_TIMEOUT_MAX 600
/* A list of at least this many items is followed by malloc_trim(0) (heaptrim_request, coalesced
 * with the other informers' on the loop; at once without a pkg/util/heaptrim): its response bodies
 * and its items' whole trees (about 10 bytes of heap per byte of JSON, freed one by one as they are
 * projected) are free once the store holds the projections, and without a trim glibc keeps those
 * pages resident (with 10,000 pods per worker that was 120 MB of RSS for 3 MB of cached records
 * when lists were decoded whole; bench-scale). */
#define INFORMER_TRIM_ITEMS 1000
/* Packed stores: about this many decoded trees are kept past a loop iteration (a real
 * server's Workload decodes to about 16 KB: 4 to 8 MB per store at most); while a store's trees
 * are used, one not read for one to two periods of INFORMER_DECODED_TTL_S goes, and all of them
 * go once none was used for INFORMER_IDLE_TICKS ticks of INFORMER_DECODED_IDLE_S (an idle
 * operator keeps none). A reconcile reads the objects an event just stored, so most reads in a
 * burst hit the cache (decoding costs more than the rest of a reconcile; docs/performance.md
 * "Cached object size"). */
#define INFORMER_DECODED_MAX    512
#define INFORMER_DECODED_TTL_S  5.0
#define INFORMER_DECODED_IDLE_S 1.0
#define INFORMER_IDLE_TICKS     2
/* An idle drop of at least this many trees asks for a heap trim (heaptrim_request): after a
 * burst, not after each job of a trickle. */
#define INFORMER_IDLE_TRIM_ITEMS 100

struct informer;

/* Event handlers; any may be NULL. Objects are borrowed (see above). */
struct informer_handlers {
    void (*on_add)(void *ud, json_t *obj);
    void (*on_update)(void *ud, json_t *old_obj, json_t *new_obj);
    void (*on_delete)(void *ud, json_t *obj);
    void *ud;
    /* What on_add reads of an object a list brings: dotted paths, NULL-terminated, static
     * (NULL: all of it). When every handler with an on_add of a packed informer sets one,
     * the listed ADD events carry a view of their union (store_list_set_view): at a restart's
     * lists most of each object (its spec) is then not decoded for the handlers. */
    const char *const *listed_view;
};

struct informer_opts {
    struct kube_client *client; /* borrowed; required */
    const char *group;          /* NULL or "" = core */
    const char *version;        /* required */
    const char *resource;       /* plural, required */
    const char *kind;           /* the objects' kind ("Workload"), or NULL: listed items are
                                   typed with it and group/version as they arrive; NULL: with
                                   the list's own kind, which kube-apiserver writes after the
                                   items of a custom resource's list (its keys sorted), so
                                   those items are held until the list ends (jsplit.h) */
    const char *ns;             /* NULL/"" = all namespaces (or cluster-scoped) */
    const char *label_selector; /* optional */
    const char *field_selector; /* optional */
    const char *name;           /* for logs; NULL = resource */
    const struct logger *lg;    /* borrowed, may be NULL */

    /* The store's projection (applied before anything is cached), and what it reads of an
     * object (store_opts.reads: a listed item and a watch event's object are built with only
     * those members; static, NULL = all). The reads belong to the projection: the shared
     * cache keys informers by the projection, not by its reads. */
    store_project_fn project;
    void *project_ud;
    const char *const *project_reads;
    /* Keep the objects packed (store.h), with this intern table (borrowed, NULL = the store's
     * own; must outlive the informer). */
    bool packed;
    struct jpack_tab *tab;

    /* Tuning; 0 = the defaults above (tests shorten them). */
    int page_size;
    double backoff_initial_s;
    double backoff_max_s;
    double backoff_reset_s;
    double backoff_jitter; /* < 0: no jitter */
    double short_watch_s;
    int watch_timeout_min_s;
    int watch_timeout_max_s;
    unsigned seed;   /* jitter / timeout randomness; 0 = from the clock */
    double resync_s; /* 0 = no resync */
};

/* Counters, cumulative. */
struct informer_stats {
    uint64_t lists;        /* complete lists delivered (first one included) */
    uint64_t list_pages;   /* list responses received */
    uint64_t watches;      /* watch requests started */
    uint64_t events;       /* watch events handled (bookmarks included) */
    uint64_t failures;     /* failures that went through backoff */
    uint64_t expired;      /* 410s (watch or continue token) */
    uint64_t resyncs;      /* resync passes */
    double last_backoff_s; /* the last backoff delay used */
};

/*
 * Create an informer (not started). Copies all strings. 0, or -EINVAL with a
 * message when a required option is missing.
 */
int informer_new(const struct informer_opts *opts, struct informer **out, struct err *e);

/*
 * Stop (if running) and free the informer and its store. Handlers are not
 * called. Call before kube_client_free(). NULL is fine.
 */
void informer_free(struct informer *inf);

/*
 * Register handlers (copied). Several per informer; called in registration
 * order. When the informer already holds objects, the new handlers receive
 * an add for each of them right away (as client-go does).
 */
void informer_add_handlers(struct informer *inf, const struct informer_handlers *h);

/* The union of `views` (n of them, NULL-terminated each; NULL = whole objects): a new
 * NULL-terminated array of their borrowed strings, each once (empty for n = 0), or NULL when
 * one of them is NULL. Free the array. */
const char **informer_view_union(const char *const *const *views, size_t n);

/* Change the listed_view of the handlers registered with user data `ud` (for a fan-out
 * whose users come and go: the shared cache). `view` is borrowed until the next call or the
 * informer's end; the view of a list is taken at its commit. */
void informer_set_listed_view(struct informer *inf, const void *ud, const char *const *view);

/*
 * Handlers that add the object's store key ("namespace/name") to a work
 * queue on add, update and delete: the usual controller wiring. Fills all of
 * `h` (listed_view: the key's fields); `q` is borrowed and must outlive the
 * informer's use of the handlers.
 */
struct wq;
void informer_enqueue_handlers(struct informer_handlers *h, struct wq *q);

/* Register a store index (see store_add_index). */
int informer_add_index(struct informer *inf, const char *name, store_index_fn fn, void *ud,
                       struct err *e);

/* Start listing and watching. 0, -EALREADY when running. */
int informer_start(struct informer *inf, struct err *e);
/* Cancel the in-flight list/watch and timers. The store keeps its contents;
 * informer_start() may be called again (it lists again). */
void informer_stop(struct informer *inf);

/* True once the first complete list has been delivered to the handlers. */
bool informer_has_synced(const struct informer *inf);
/* True while the handlers are called with a list's difference (the first list, a re-list):
 * an update then may fold several writes into one, where a watch's update is one write. */
bool informer_listing(const struct informer *inf);
/* The store (borrowed; read-only for callers). */
struct store *informer_store(const struct informer *inf);
/* The last resourceVersion synced (borrowed, "" before the first list). */
const char *informer_last_rv(const struct informer *inf);
/* The collection path, e.g. "/api/v1/namespaces/a/pods" (borrowed). */
const char *informer_path(const struct informer *inf);
void informer_stats(const struct informer *inf, struct informer_stats *out);

#endif
