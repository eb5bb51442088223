/*
 * hub: the devhub's API semantics, independent of HTTP. A request (method,
 * path, query, headers, body) goes in, a response (status code, JSON body)
 * or a watch stream comes out. Owns the storage, the resource registry, the
 * watchers and the garbage collector. Runs on one libev loop (timers for
 * watch timeouts, bookmarks, compaction and GC); not thread-safe.
 *
 * What is served: discovery (/version, /api, /apis, group and group-version
 * documents), /healthz|readyz|livez, a minimal /openapi/v3 and /openapi/v2,
 * the built-in kinds of registry.h and CRDs; verbs get, list (label/field
 * selectors, limit/continue), watch (resourceVersion, allowWatchBookmarks,
 * timeoutSeconds), create (generateName), update (optimistic concurrency),
 * patch (merge, JSON, strategic), delete (DeleteOptions: preconditions,
 * propagationPolicy; finalizers, deletionTimestamp, ownerReference GC),
 * deletecollection; the status and scale subresources; Table output.
 * Errors are Status bodies exactly like kube-apiserver's.
 */
#ifndef KKS_DEVHUB_HUB_H
#define KKS_DEVHUB_HUB_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pkg/util/err.h"
#include "pkg/util/log.h"

#define HUB_MAX_BODY (3u << 20) /* request bodies over 3 MiB get 413 */

struct hub;
struct hub_watch;

struct hub_opts {
    struct ev_loop *loop;     /* borrowed, required */
    const struct logger *lg;  /* borrowed, may be NULL */
    const char *data_path;    /* SQLite file, NULL = in memory */
    long compact_keep;        /* changes retained (<= 0: 10000) */
    double bookmark_interval; /* seconds between BOOKMARK events (<= 0: 15) */
    double gc_delay;          /* seconds between a delete and the GC pass (<= 0: 0.05) */
};

int hub_new(struct hub **out, const struct hub_opts *o, struct err *e);
/* Ends every watch (their notify callbacks run) and closes the storage. NULL ok. */
void hub_free(struct hub *h);
/* End all watches now (shutdown): each gets its notify callback. */
void hub_close_watches(struct hub *h);

/* Create obj (borrowed) if absent, or replace its spec/labels when present
 * (used for --crds files and --nodes). CRDs are registered. */
int hub_apply_object(struct hub *h, json_t *obj, struct err *e);

struct hub_kv {
    const char *key;
    const char *value;
};

struct hub_req {
    const char *method;
    const char *path;
    const struct hub_kv *query; /* decoded query parameters */
    size_t nquery;
    const char *content_type; /* may be NULL */
    const char *accept;       /* may be NULL */
    const char *body;         /* may be NULL when body_len is 0 */
    size_t body_len;
    const char *user; /* authenticated user name, for logs */
};

struct hub_resp {
    int code;
    char *body; /* owned; NUL-terminated */
    const char *content_type;
    struct hub_watch *watch; /* set for watch requests: stream it, then hub_watch_release */
    char *warnings;          /* owned, NULL or newline-separated `Warning` header values */
};

/* Handle one request. resp must be released with hub_resp_release. */
void hub_handle(struct hub *h, const struct hub_req *req, struct hub_resp *resp);
void hub_resp_release(struct hub_resp *resp);

/* Watch streaming. notify(userdata) is called when new bytes are pending or
 * the watch ended; it must not call back into the hub. */
void hub_watch_set_notify(struct hub_watch *w, void (*notify)(void *), void *userdata);
/* Copy up to max pending bytes into dst: > 0 bytes copied, 0 nothing pending
 * now, -1 the stream is finished and fully read. */
ssize_t hub_watch_read(struct hub_watch *w, char *dst, size_t max);
/* The client went away (or the stream was fully sent): free the watcher. */
void hub_watch_release(struct hub_watch *w);
/* Number of active watches. */
size_t hub_watch_count(const struct hub *h);

/* Fault injection: close every watch `seconds` after it started (0 = never).
 * Applies to running watches at once. */
void hub_set_watch_cut(struct hub *h, double seconds);

/*
 * Mutating admission on create, as a webhook would do it: fn(userdata, group,
 * kind, obj) may modify obj (defaulted, uid set) before it is stored. One
 * hook per hub; NULL clears it.
 */
typedef void (*hub_admit_fn)(void *userdata, const char *group, const char *kind, json_t *obj);
void hub_set_admit(struct hub *h, hub_admit_fn fn, void *userdata);

/* Current resourceVersion of the storage. */
int64_t hub_rv(const struct hub *h);

#endif
