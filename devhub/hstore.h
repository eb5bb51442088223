/*
 * hstore: the devhub's SQLite storage. A table of current objects (key ->
 * JSON text, resourceVersion) and an append-only change log whose INTEGER
 * PRIMARY KEY is the resourceVersion: every write appends one change and the
 * new RV is the change's sequence number. Compaction drops old changes and
 * remembers the oldest retained RV so watches from older RVs get 410.
 *
 * Keys are "<resource>.<group>/<namespace>/<name>" ("pods./ns/x" for the core
 * group, "namespaces.//x" for cluster-scoped). Listing by prefix is ordered by
 * key. Writes run in transactions with cached prepared statements.
 * path ":memory:" (or NULL) keeps everything in memory; a file uses WAL.
 */
#ifndef KKS_DEVHUB_HSTORE_H
#define KKS_DEVHUB_HSTORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/util/err.h"

struct hstore;

enum hstore_event { HSTORE_ADDED = 0, HSTORE_MODIFIED = 1, HSTORE_DELETED = 2 };

/* Open (creating the schema if needed). keep = number of changes retained by
 * store_compact (<= 0: 10000). 0 or negative code with e filled. */
int hstore_open(struct hstore **out, const char *path, long keep, struct err *e);
/* Close (NULL ok). */
void hstore_close(struct hstore *s);

/* Current resourceVersion (last change), 0 for an empty store. */
int64_t hstore_rv(const struct hstore *s);
/* Oldest RV a watch may start from: changes with rv > this are retained. */
int64_t hstore_compacted_rv(const struct hstore *s);

/* Get the object stored under key: *out is a new reference. -ENOENT if absent. */
int hstore_get(struct hstore *s, const char *key, json_t **out, struct err *e);

/*
 * Write obj under key (create when ev is HSTORE_ADDED, else replace), or
 * delete it (HSTORE_DELETED; obj is the final state recorded in the change).
 * The new RV is set into obj's metadata.resourceVersion (obj is borrowed and
 * modified) and returned in *rv_out (optional).
 */
int hstore_write(struct hstore *s, enum hstore_event ev, const char *key, json_t *obj,
                 int64_t *rv_out, struct err *e);

/* Called for every object of a list, in key order; return non-zero to stop
 * (store_list then returns that value). obj is borrowed. */
typedef int (*store_obj_cb)(const char *key, json_t *obj, void *userdata);
/* Objects with keys starting with prefix and > after (after may be NULL or ""). */
int hstore_list(struct hstore *s, const char *prefix, const char *after, store_obj_cb cb,
                void *userdata, struct err *e);
/* The same as hstore_list with the stored JSON text (compact, jansson's dump; borrowed, n
 * bytes, NUL-terminated) instead of a parsed object: for a list that can be answered without
 * a parse (devhub/listtext.h). */
typedef int (*store_text_cb)(const char *key, const char *txt, size_t n, void *userdata);
int hstore_list_text(struct hstore *s, const char *prefix, const char *after, store_text_cb cb,
                     void *userdata, struct err *e);
/*
 * Garbage-collector queries, served from indexes instead of a full scan:
 * objects with ownerReferences; objects being deleted in the foreground
 * (deletionTimestamp + the foregroundDeletion finalizer); objects naming uid
 * as an owner; whether an object with that uid exists / has dependents.
 */
int hstore_list_owned(struct hstore *s, store_obj_cb cb, void *userdata, struct err *e);
int hstore_list_foreground(struct hstore *s, store_obj_cb cb, void *userdata, struct err *e);
int hstore_list_dependents(struct hstore *s, const char *uid, store_obj_cb cb, void *userdata,
                           struct err *e);
bool hstore_uid_exists(struct hstore *s, const char *uid);
bool hstore_has_dependents(struct hstore *s, const char *uid);

/* Number of objects whose key starts with prefix. */
long hstore_count(struct hstore *s, const char *prefix);

/* Called for each change with rv > from, in RV order; obj is borrowed. */
typedef int (*store_change_cb)(int64_t rv, enum hstore_event ev, const char *key, json_t *obj,
                               void *userdata);
/* Replay changes with rv > from and key starting with prefix. -ERANGE when
 * from < store_compacted_rv (too old: the caller answers 410). */
int hstore_changes(struct hstore *s, int64_t from, const char *prefix, store_change_cb cb,
                   void *userdata, struct err *e);

/* Drop changes beyond the retained window (keep the last `keep`). Returns the
 * number of changes removed, or a negative code. */
long hstore_compact(struct hstore *s, struct err *e);
/* Drop all changes with rv <= upto (for tests / the admin endpoint). */
long hstore_compact_to(struct hstore *s, int64_t upto, struct err *e);

/* Event type name: "ADDED", "MODIFIED", "DELETED". */
const char *hstore_event_name(enum hstore_event ev);

#endif
