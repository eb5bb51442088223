/*
 * sim_watch: an in-memory copy of one hub collection for the devhub
 * simulators, kept current from an in-process watch (devhub/sim_api.h
 * simapi_watch) instead of listing everything again: reading it costs what
 * changed since the last read.
 *
 * The watch starts without a resourceVersion, so the hub first replays every
 * current object (ADDED) and then streams changes; when the watch ends
 * (timeout, a watch-cut fault, an ERROR event, a full buffer) the next
 * simwatch_sync starts a new one and rebuilds the copy from scratch.
 * Objects are keyed "namespace/name" (or "name" when cluster-scoped).
 */
#ifndef KKS_DEVHUB_SIM_WATCH_H
#define KKS_DEVHUB_SIM_WATCH_H

#include <jansson.h>

#include "devhub/hub.h"

struct simwatch;

/* One change applied by simwatch_sync: old is the previous copy (NULL when
 * added), obj the new state (NULL when deleted). Both borrowed; valid during
 * the call only (old is released right after). */
typedef void (*simwatch_cb)(const char *key, const json_t *old, const json_t *obj, void *userdata);

/* A copy of collection `path` (an all-namespaces path like
 * "/apis/batch/v1/jobs"), restricted to label_selector (may be NULL). Both
 * strings are copied. Nothing is read before the first simwatch_sync. */
struct simwatch *simwatch_new(struct hub *h, const char *path, const char *label_selector);
/* Release the watch and the copy (NULL ok). Before hub_free: the watch belongs to the hub. */
void simwatch_free(struct simwatch *w);

/*
 * Apply every pending change, calling cb (may be NULL) for each one.
 * Returns 1 when the copy was (re)built from scratch (first call or a new
 * watch: cb is NOT called then, the caller treats everything as changed), 0
 * when only changes were applied, or the HTTP status (404, ...) when the
 * collection cannot be watched now (the copy is then empty).
 */
int simwatch_sync(struct simwatch *w, simwatch_cb cb, void *userdata);

/* The copy: object key -> object. Borrowed; changes on simwatch_sync and
 * simwatch_put. */
json_t *simwatch_objs(const struct simwatch *w);

/* Replace (or add) one object of the copy by hand, e.g. with the answer to a
 * write, until the watch delivers it. obj borrowed (incref'd). */
void simwatch_put(struct simwatch *w, const char *key, json_t *obj);

#endif
