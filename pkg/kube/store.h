/*
 * store: the informer's cache of Kubernetes objects (client-go's
 * cache.Indexer), keyed by "namespace/name" ("name" for cluster-scoped
 * objects).
 *
 *  - objects are jansson trees shared by reference; an object in the store is
 *    immutable: callers must never modify a json_t they got from the store
 *    (build a copy with jx_deep_copy() to change it);
 *  - a per-kind projection hook runs before an object is stored, so the store
 *    keeps only the fields controllers read (store_project_fields() is a
 *    ready-made one);
 *  - secondary indexes are registered by name with a function that returns
 *    0..n string values per object (a label value, an owner uid,
 *    spec.nodeName...); store_by_index() answers "which objects have value v";
 *  - store_replace() swaps in a full list and reports the difference as
 *    add/update/delete events (a delete carries the last known object, like
 *    client-go's DeletedFinalStateUnknown): what makes a re-list after 410
 *    deliver the right events.
 *
 * Packed stores (store_opts.packed, for the big kinds: docs/performance.md
 * "Cached object size") keep each object as jpack bytes (pkg/json/jpack.h)
 * with interned strings instead of a json_t tree, and decode it when it is
 * read. An object a list brings as text (store_list_add_text) is packed as
 * it is scanned, without a tree; one a list brings as a tree is packed at
 * the list's commit; one that store_upsert writes (a watch event) keeps its
 * tree until the first trim drops it, and is packed then. Lifetime of what
 * reads return (store_get, store_foreach's objects):
 *
 *  - unpacked store: the stored object, valid until it is replaced or removed;
 *  - packed store: the decoded tree, cached in the store: the same pointer for
 *    every read of that object until the object is replaced or removed, or
 *    until store_trim() drops the decoded tree. The informer trims its store
 *    only between loop callbacks (ev_prepare and ev_timer watchers,
 *    informer.h), never during a handler, a reconcile or any other callback,
 *    and keeps recently read trees (decoding on every read would cost more
 *    than the rest of a reconcile): a borrowed pointer
 *    is good for the rest of the current callback. Keep it longer (across
 *    loop iterations, in a struct that outlives the callback) only with
 *    json_incref(); and do not use pointer equality to tell whether a packed
 *    store still holds "the same object" across iterations (compare
 *    metadata.resourceVersion or uid instead).
 *
 * References handed out (store_upsert's stored and old objects, store_by_index's
 * arrays, store_replace's events) are new references in both modes.
 *
 * Lookups are O(1) (pkg/util/strmap). Not thread-safe: one loop.
 */
#ifndef KKS_KUBE_STORE_H
#define KKS_KUBE_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/err.h"

struct store;

/*
 * Projection: `obj` is borrowed (the object as received); return a new
 * reference to what should be stored (json_incref(obj) keeps it whole), or
 * NULL to keep it whole as well. The result must keep metadata.name and
 * metadata.namespace (store_project_fields() always does).
 */
typedef json_t *(*store_project_fn)(json_t *obj, void *ud);

/* Values collected by an index function. */
struct store_values {
    char **v;
    size_t n, cap;
};
/* Add one value (copied). Duplicates are ignored. */
void store_values_add(struct store_values *vals, const char *value);

/*
 * Index function: add the object's values to `vals` with store_values_add()
 * (0..n of them). `obj` is the stored (projected) object, borrowed. Must be
 * deterministic for a given object.
 */
typedef void (*store_index_fn)(json_t *obj, struct store_values *vals, void *ud);

enum store_event_type { STORE_ADD = 1, STORE_UPDATE = 2, STORE_DELETE = 3 };

/*
 * Event callback for store_replace(). ADD: old = NULL; UPDATE: both;
 * DELETE: new = NULL, old = last known object. Both borrowed for the call.
 */
typedef void (*store_event_fn)(enum store_event_type type, json_t *old, json_t *new_obj, void *ud);

struct jpack_tab;
struct store_opts {
    store_project_fn project; /* may be NULL: store objects whole */
    void *project_ud;
    bool packed;           /* keep objects as jpack bytes (see above) */
    struct jpack_tab *tab; /* packed: the intern table (borrowed, may be shared by the stores of
                              one loop; must outlive the store); NULL = the store's own */
    /* Unpacked stores with a projection: every dotted path the projection and the store's
     * indexes read of an object (jscan_load_paths; borrowed, static; NULL: all of it). A list
     * item's text is then built with only those members and the store's own (kind,
     * apiVersion, metadata name, namespace, uid, resourceVersion): the rest is checked, not
     * built (the agents' 10,000 pods per worker at a restart: docs/performance.md). */
    const char *const *reads;
};

/* Create an empty store (opts may be NULL). Never NULL. opts->reads must pass
 * store_reads_check(). */
struct store *store_new(const struct store_opts *opts);
/* 0 when `reads` with the store's own paths is within jscan_load_paths()'s limits, else
 * -EINVAL with a message. */
int store_reads_check(const char *const *reads, struct err *e);
/* opts->reads with the store's own paths (borrowed, NULL-terminated), or NULL: all (also
 * for a packed store or one without a projection, which ignore opts->reads). */
const char *const *store_reads(const struct store *s);
/* What the store's projection drops of every object, as jscan drop paths (jscan.h; borrowed,
 * static), or NULL: store_project_lean()'s managedFields and last-applied annotation. A text
 * built without them projects to the same object: a list item the store parses and a watch
 * event's object (informer.c) are built so, not built whole and then dropped. */
const char *const *store_drops(const struct store *s);
/* Free the store, its indexes and its references to objects. NULL is fine. */
void store_free(struct store *s);

/*
 * Drop decoded trees a packed store caches (see the lifetime above): all of
 * them, or (all = false) those not read since the previous such call (a
 * second chance: a tree read between two calls survives the second). A tree
 * store_upsert stored is packed first (an encode and an allocation); one that
 * cannot be packed (nested deeper than jpack encodes, or a projection without
 * the object's key) leaves the cached set but stays whole for good, read as
 * an unpacked store's. Returns how many trees went. References callers took
 * stay valid. 0 for an unpacked store.
 */
size_t store_trim(struct store *s, bool all);
/* Number of decoded trees cached, packed or waiting to be (packed stores; 0 otherwise). */
size_t store_decoded(const struct store *s);
/* Uses of the decoded-tree cache so far: reads of a cached tree, and trees cached (by a read,
 * or stored by store_upsert until packed). A count that only grows: unchanged, it tells the
 * cache was not used meanwhile (the informer's idle drop). 0 for an unpacked store. */
size_t store_decoded_reads(const struct store *s);

/*
 * The key of an object: "namespace/name", or "name" without a namespace.
 * Returns a new string (caller frees), or NULL with `e` set when
 * metadata.name is missing or not a string.
 */
char *store_key_of(const json_t *obj, struct err *e);

/*
 * Register an index named `name` (copied). Existing objects are indexed at
 * once. 0, or -EEXIST when the name is taken.
 */
int store_add_index(struct store *s, const char *name, store_index_fn fn, void *ud, struct err *e);

/*
 * Tell what the function of index `name` reads of an object: the dotted paths (NULL-terminated,
 * copied; NULL: anything, the default). A packed list's object (store_list_add_text) is then
 * indexed from a view of those paths (store_get_view) instead of its whole tree. 0, or -ENOENT
 * when there is no such index.
 */
int store_index_view(struct store *s, const char *name, const char *const *paths);

/*
 * Insert or replace the object with obj's key. `obj` is borrowed; the
 * projection of it is stored. On success `*stored` (if not NULL) receives a
 * new reference to the stored object and `*old` (if not NULL) a new reference
 * to the object it replaced, or NULL when the key was new.
 * 0, or -EINVAL when the object has no name.
 */
int store_upsert(struct store *s, json_t *obj, json_t **stored, json_t **old, struct err *e);

/*
 * Remove the object with obj's key (`obj` borrowed: only its metadata is
 * read). `*old` (if not NULL) receives a new reference to the removed
 * object, or NULL when it was not there. 0 (also when absent), or -EINVAL.
 */
int store_delete(struct store *s, json_t *obj, json_t **old, struct err *e);
/* Same by key. 0, or -ENOENT when absent (then *old = NULL). */
int store_delete_key(struct store *s, const char *key, json_t **old);

/*
 * Apply the store's projection to `obj` (borrowed): what store_upsert() would
 * store. New reference (json_incref(obj) without a projection).
 */
json_t *store_project(struct store *s, json_t *obj);

/* The object stored under `key`, borrowed (valid as stated above), or NULL. */
json_t *store_get(const struct store *s, const char *key);
/*
 * The same as a new reference (caller json_decref()s it), for passes over many
 * objects: a packed store whose tree for `key` is not cached decodes one for
 * the caller alone and does not cache it, so a pass holds one tree at a time
 * instead of every tree until the next trim (at 4,000 Workloads a start-up pass
 * held 85 MB of trees at once: docs/performance.md "Scale"). NULL when absent.
 */
json_t *store_get_ref(const struct store *s, const char *key);
/*
 * A view of the object under `key` for a reader that needs only some of it: a new reference
 * holding at least the members at the dotted `paths` (NULL-terminated; "metadata",
 * "spec.active"...) that the object has, possibly the whole object. A packed store whose tree
 * for `key` is not cached decodes those members alone (at a restart's passes over 10,000
 * Workloads, a Job's or a Workload's spec is most of the decoding; docs/performance.md
 * "Lists packed as scanned"); otherwise it is store_get_ref(). Read nothing else from it.
 * NULL when absent.
 */
json_t *store_get_view(const struct store *s, const char *key, const char *const *paths);
size_t store_len(const struct store *s);

/*
 * Call fn for every object (unspecified order) until it returns non-zero,
 * which is returned. The store must not be modified meanwhile. Objects are
 * borrowed as for store_get (a packed store decodes and caches each one).
 */
int store_foreach(const struct store *s, int (*fn)(const char *key, json_t *obj, void *ud),
                  void *ud);
/* All keys as a new JSON array of strings (new reference). */
json_t *store_keys(const struct store *s);
/* Call fn on every key (unspecified order) without reading the objects (no decode in a packed
 * store) until it returns non-zero, which is returned. fn may read the store, not change it. */
int store_foreach_key(const struct store *s, int (*fn)(const char *key, void *ud), void *ud);

/*
 * The objects whose index `index` contains `value`: a new JSON array (new
 * reference) of the stored objects, sorted by key. NULL with -ENOENT in `e`
 * when there is no such index; an empty array when no object matches.
 */
json_t *store_by_index(const struct store *s, const char *index, const char *value, struct err *e);
/* Same, the keys (sorted) as a new JSON array of strings. */
json_t *store_index_keys(const struct store *s, const char *index, const char *value,
                         struct err *e);
/* How many objects' index `index` contains `value`, in O(1) and allocating nothing (a check of
 * existence for every pod of a worker, or every copy of a sweep): 0 with *n, or -ENOENT in `e`
 * when there is no such index. */
int store_index_count(const struct store *s, const char *index, const char *value, size_t *n,
                      struct err *e);

/*
 * Replace the whole contents with the objects of the array `items`
 * (borrowed; each is projected). Every listed object that was absent is an
 * ADD, every listed object that changed (different metadata.resourceVersion,
 * or different content when there is none) an UPDATE, and every stored
 * object not in the list a DELETE carrying the last known object. Unchanged
 * objects produce no event and keep their stored copy. The store is fully
 * updated before the first event is delivered (handlers may read it). `cb`
 * may be NULL. Returns 0, or -EINVAL (nothing changed) when an item has no
 * name or `items` is not an array. (A store_list of the items, below.)
 */
int store_replace(struct store *s, json_t *items, store_event_fn cb, void *ud, struct err *e);

/*
 * A list received in parts (an informer's pages, or items one at a time), for
 * a store_replace() that does not hold the parts' whole objects until the
 * end: store_list_add() projects each object at once, so the caller may free
 * each part before the next one arrives; an object whose
 * metadata.resourceVersion is the stored one's is not projected (the stored
 * copy stays, as in store_replace).
 * store_list_commit() then replaces the contents with the listed objects and
 * reports the difference exactly as store_replace() does (an object listed
 * twice: the later one, one event). The store must not be modified between
 * the first add and the commit: the commit checks that the objects found
 * unchanged still are, and fails with -ESTALE (nothing changed) otherwise.
 * A packed store packs the projections at the commit (packing each one when
 * it is added would leave only the bytes, but then the commit decodes every
 * object again for its event, and the entries lie scattered between the
 * items' freed trees, which keeps heap pages resident: bench-scale
 * --packed-cache, docs/performance.md "Scale").
 */
struct store_list;
/* An empty list for `s` (borrowed; must outlive the list). Never NULL. */
struct store_list *store_list_new(struct store *s);
/* Add one object (borrowed). 0, or -EINVAL when it has no metadata.name. */
int store_list_add(struct store_list *l, json_t *obj, struct err *e);
/*
 * Add one object from its JSON text data[0..n) (borrowed), typed as a list item of
 * kube-apiserver's: without a string "kind", `kind` (the list's kind less "List"; NULL: leave
 * it) and then `api_version` are added (store_item_typed). A packed store whose projection is
 * store_project_lean (or none) packs the text as it is scanned (jscan_walk, jpack_build),
 * without a tree: the same bytes as packing the projection of the tree. Its indexes built
 * with the helpers below are computed from the bytes at the commit, and its ADD and UPDATE
 * events carry the object decoded for the event alone (the store's object when the event is
 * delivered), so a commit does not hold every new object's tree at once (an UPDATE's old
 * object and a DELETE's are decoded and held until their events, as before). Other stores, and
 * items that pack differently (a key repeated, a "kind" that is not a string), go through
 * jscan_load() and store_list_add(). 0, -EBADMSG when the text is not JSON, or -EINVAL.
 */
int store_list_add_text(struct store_list *l, const char *data, size_t n, const char *kind,
                        const char *api_version, struct err *e);
/* The ADD events of the objects store_list_add_text packed carry a view of these dotted
 * paths (store_get_view; borrowed until the commit) instead of the whole object: for handlers
 * that read only those of a listed object. NULL (the default): whole objects. */
void store_list_set_view(struct store_list *l, const char *const *paths);
/* What kube-apiserver's list items lack and client-go's decoding gives them: `kind` when "kind"
 * is absent or not a string, then `api_version` likewise (not when kind is NULL). Changes it. */
void store_item_typed(json_t *it, const char *kind, const char *api_version);
/* Objects added so far (an object listed twice counts once). */
size_t store_list_len(const struct store_list *l);
/* Replace the contents (see above). Once per list, then store_list_free(). 0, or -ESTALE. */
int store_list_commit(struct store_list *l, store_event_fn cb, void *ud, struct err *e);
/* Free the list and the objects it holds. NULL is fine. */
void store_list_free(struct store_list *l);

/*
 * A projection helper: a new object holding only the listed dotted paths of
 * `obj` ("spec.nodeName", "metadata.labels", "status.conditions"...), plus
 * always apiVersion, kind, metadata.name, metadata.namespace, metadata.uid,
 * metadata.resourceVersion, metadata.generation, metadata.deletionTimestamp.
 * Values are shared by reference with `obj` (json_incref). `paths` is
 * NULL-terminated and may be NULL. Returns a new reference.
 */
json_t *store_project_fields(json_t *obj, const char *const *paths);

/*
 * A projection (store_project_fn, ud unused): the whole object but what a
 * real API server adds to every object and no controller of ours reads:
 * metadata.managedFields and the kubectl.kubernetes.io/last-applied-configuration
 * annotation (each often larger than the rest of the object). Values are
 * shared by reference; an object without either is kept as it is.
 */
json_t *store_project_lean(json_t *obj, void *ud);

/* Index helpers for common cases (ud is the argument named below). */
/* ud = label key (const char *): the label's value. */
void store_index_by_label(json_t *obj, struct store_values *vals, void *ud);
/* ud unused: the uid of every metadata.ownerReferences entry. */
void store_index_by_owner_uid(json_t *obj, struct store_values *vals, void *ud);
/* ud = dotted path (const char *) of a string field, e.g. "spec.nodeName". */
void store_index_by_field(json_t *obj, struct store_values *vals, void *ud);

#endif
