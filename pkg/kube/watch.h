/*
 * watch: Kubernetes watch streams.
 *
 * Two layers:
 *
 * 1. `struct watch_decoder`, pure and synchronous (no I/O, fuzzed by
 *    test/fuzz/fuzz_watch_line.c): an incremental line splitter plus event
 *    decoder. Feed it the stream's bytes in any pieces (lines may be split
 *    anywhere, including inside a UTF-8 sequence); every complete line is
 *    parsed exactly once and handed to the callback as a decoded event; the
 *    incomplete remainder is kept. A line longer than the cap fails with
 *    -E2BIG. Blank lines (and a trailing '\r') are ignored.
 *
 * 2. `struct kube_watch`, a streaming GET with `watch=1` through a
 *    kube_client. Events are delivered as they arrive; the end of the watch
 *    (server closed it, connection dropped, ERROR event, watchdog, stop) is
 *    reported once through the close callback with the reason.
 *
 * Event object ownership: `ev->object` is borrowed for the duration of the
 * callback; json_incref() it to keep it.
 */
#ifndef KKS_KUBE_WATCH_H
#define KKS_KUBE_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/json/jscan.h"
#include "pkg/kube/client.h"
#include "pkg/util/buf.h"
#include "pkg/util/err.h"

#define WATCH_DEFAULT_MAX_LINE ((size_t)16 << 20) /* 16 MiB: a large object plus envelope */

enum watch_event_type {
    WATCH_ADDED = 1,
    WATCH_MODIFIED,
    WATCH_DELETED,
    WATCH_BOOKMARK,
    WATCH_ERROR,
};

/* "ADDED", ... for logs; "?" for anything else. */
const char *watch_event_type_name(enum watch_event_type t);

struct watch_event {
    enum watch_event_type type;
    json_t *object;               /* the event's object (a Status for ERROR); borrowed */
    const char *resource_version; /* object.metadata.resourceVersion, borrowed; NULL if absent */
    /* ERROR only: the decoded Status (code per client.h's table: 410 -> -ESTALE,
       http_status = Status.code, reason, msg). Zero for other types. */
    struct err status;
};

/*
 * Event callback. Return 0 to continue, or a negative code to stop: the
 * decoder then stops feeding and returns that code (the rest of the
 * current chunk is discarded).
 */
typedef int (*watch_event_cb)(void *ud, const struct watch_event *ev);

struct watch_decoder {
    struct buf line; /* the incomplete tail of the stream */
    watch_event_cb cb;
    void *ud;
    /* NULL, or what to build of each event line (jscan_load_with: "type", "object.metadata",
     * ...; borrowed): an ERROR event is built whole, its Status read as without. Set after
     * init. */
    const struct jscan_paths *paths;
    uint64_t events; /* events delivered */
    uint64_t bytes;  /* bytes fed */
    int failed;      /* sticky error code after a failure (further feeds return it) */
};

/* Initialise. max_line 0 = WATCH_DEFAULT_MAX_LINE. `cb` is required. */
void watch_decoder_init(struct watch_decoder *d, size_t max_line, watch_event_cb cb, void *ud);
/* Free the buffered remainder. */
void watch_decoder_release(struct watch_decoder *d);

/*
 * Feed n bytes. Returns 0; -E2BIG when a line exceeds the cap; -EBADMSG for
 * a line that is not a watch event (bad JSON, missing/unknown "type", missing
 * or non-object "object"); or the callback's negative return. Errors are
 * sticky (later feeds return the same code). The message in `e` names the
 * problem and the byte offset in the stream.
 */
int watch_decoder_feed(struct watch_decoder *d, const char *data, size_t n, struct err *e);

/*
 * End of stream: returns 0 when nothing is buffered (or only whitespace),
 * -EBADMSG when a partial line is left over (a truncated event), which the
 * watch reports as a dropped connection.
 */
int watch_decoder_finish(struct watch_decoder *d, struct err *e);

/*
 * Decode one line (without its '\n') into `ev`. On success ev->object is a
 * NEW reference the caller must json_decref(); on error nothing is owned.
 * Returns 0 or -EBADMSG with a message.
 */
int watch_decode_line(const char *line, size_t len, struct watch_event *ev, struct err *e);

/* ---- streaming watch over a kube_client -------------------------------- */

struct kube_watch;

struct kube_watch_opts {
    const char *path;             /* collection path, e.g. kube_path(...) with name NULL */
    const char *const *query;     /* extra NULL-terminated pairs (labelSelector,
                                     fieldSelector...); may be NULL */
    const char *resource_version; /* start from here; NULL/"" = server's choice */
    int timeout_seconds;          /* server-side timeoutSeconds; 0 = random in [300, 600) */
    bool no_bookmarks;            /* default sends allowWatchBookmarks=true */
    size_t max_line;              /* 0 = WATCH_DEFAULT_MAX_LINE */
    double watchdog_margin_s;     /* 0 = 30 s: the watch is closed with -ETIMEDOUT when no
                                     byte arrived for timeout_seconds + margin */
    const struct jscan_paths *event_paths; /* watch_decoder.paths (borrowed for the watch's
                                              life) */
};

/* Called for each event (see watch_event_cb; a negative return closes the watch with it). */
typedef int (*kube_watch_event_cb)(void *ud, const struct watch_event *ev);

/*
 * Called exactly once when the watch ends, unless kube_watch_stop() was
 * called first. rc:
 *   0              the server ended the stream cleanly (timeoutSeconds):
 *                  re-watch from the last resourceVersion;
 *   -ESTALE        410 Gone / Expired (HTTP status or ERROR event): re-list
 *                  (kube_err_is_gone(e) is true);
 *   other Status   from an ERROR event or a non-2xx response (client.h table,
 *                  e->http_status set);
 *   -ECONNRESET    the connection dropped mid-stream / truncated event;
 *   -ETIMEDOUT     watchdog: no bytes for timeout_seconds + margin;
 *   -E2BIG/-EBADMSG a line over the cap / undecodable line;
 *   -ECANCELED     the client was freed;
 *   the event callback's negative return.
 * `e` is borrowed, never NULL; e->msg names the path. The watch object is
 * freed right after this callback returns.
 */
typedef void (*kube_watch_close_cb)(void *ud, int rc, const struct err *e);

/*
 * Start a watch. Adds watch=1, resourceVersion, timeoutSeconds and
 * allowWatchBookmarks to the query. `on_event` and `on_close` are required.
 * *out (optional) is valid until on_close has returned or kube_watch_stop().
 * Returns 0, or -EINVAL / -ESHUTDOWN (callbacks never run then).
 */
int kube_watch_start(struct kube_client *c, const struct kube_watch_opts *o,
                     kube_watch_event_cb on_event, kube_watch_close_cb on_close, void *ud,
                     struct kube_watch **out, struct err *e);

/*
 * Stop a watch: no further callbacks, resources released. Safe from inside
 * its own event callback. NULL is fine.
 */
void kube_watch_stop(struct kube_watch *w);

/* Events delivered so far, and the last resourceVersion seen (borrowed, "" if none). */
uint64_t kube_watch_events(const struct kube_watch *w);
const char *kube_watch_last_rv(const struct kube_watch *w);

#endif
