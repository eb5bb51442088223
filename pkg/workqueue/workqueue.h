/*
 * workqueue: client-go's rate-limited, delaying work queue on a libev loop.
 *
 * Keys are strings ("namespace/name"). Semantics follow client-go's
 * workqueue package (client-go semantics, see docs/architecture.md):
 *
 *  - de-duplication: a key waiting in the queue is queued once however often
 *    it is added (the "dirty" set);
 *  - a key is never processed twice at once: adding a key while it is being
 *    processed only marks it dirty, and wq_done() re-queues it;
 *  - per-item exponential backoff (5 ms x 2^n, capped at 1000 s) combined by
 *    max with an overall token bucket (10/s, burst 100): client-go's
 *    DefaultControllerRateLimiter;
 *  - delayed adds (a min-heap keyed by ready time; re-adding a waiting key
 *    keeps the earlier time; a delay <= 0 adds at once);
 *  - levels (an addition to client-go's semantics): one FIFO per level, the
 *    highest served first: WQ_FIRST, then WQ_URGENT (wq_add_urgent), then the
 *    plain adds, then WQ_BACKGROUND. No aging: a steady stream of higher adds
 *    holds the background keys back (meant for passes over every object, which
 *    the changes they are behind make partly moot);
 *  - shutdown: stop handing out keys, drop queued and waiting keys.
 *
 * Driving a controller: the queue calls `process(q, key, ud)` from an ev_idle
 * watcher for at most `workers` keys at a time. A key stays "processing"
 * until the controller calls wq_done(q, key), typically from the completion
 * callback of its asynchronous reconcile (it may also call it from inside
 * process()). Success: wq_forget(); failure: wq_add_rate_limited(); "requeue
 * after": wq_add_after(). All calls must come from the loop's thread.
 *
 * Time comes from an injectable clock (monotonic seconds), so the rate
 * limiter maths is testable without sleeping (wq_when()).
 */
#ifndef KKS_WORKQUEUE_WORKQUEUE_H
#define KKS_WORKQUEUE_WORKQUEUE_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* client-go defaults (default_rate_limiters.go). */
#define WQ_DEFAULT_BASE_DELAY 0.005  /* s */
#define WQ_DEFAULT_MAX_DELAY  1000.0 /* s */
#define WQ_DEFAULT_QPS        10.0
#define WQ_DEFAULT_BURST      100
#define WQ_DEFAULT_BATCH      64 /* max keys handed out per loop iteration */

struct wq;

/* Queue levels, the highest served first (FIFO within a level). */
enum wq_level {
    WQ_BACKGROUND = 0, /* behind wq_add's: a pass over every object (controller-runtime's
                          low priority for the initial list); wq_add_after's come plain */
    WQ_PLAIN,          /* wq_add */
    WQ_URGENT,         /* wq_add_urgent */
    WQ_FIRST,          /* ahead of the urgent ones too */
    WQ_LEVELS
};

/*
 * Called for each key handed out. `key` is borrowed and stays valid until
 * wq_done(q, key) is called for it.
 */
typedef void (*wq_process_fn)(struct wq *q, const char *key, void *ud);
/* Monotonic time in seconds. */
typedef double (*wq_now_fn)(void *ud);

struct wq_opts {
    struct ev_loop *loop;  /* borrowed; required unless only wq_when() etc. are used */
    const char *name;      /* for logs/metrics; copied; may be NULL */
    int workers;           /* concurrency limit; <= 0 means 1 */
    wq_process_fn process; /* may be NULL: then nothing is handed out (wq_get() only) */
    void *ud;              /* passed to process */
    /* Rate limiter; 0 = client-go default. */
    double base_delay;
    double max_delay;
    double qps;
    int burst;
    int batch; /* max keys dispatched per idle callback, 0 = WQ_DEFAULT_BATCH */
    /* Clock; NULL = CLOCK_MONOTONIC (clock_mono_s). */
    wq_now_fn now;
    void *now_ud;
};

/* Plain counters (no dependency on a metrics module). */
struct wq_stats {
    size_t depth;      /* keys queued, ready to be handed out */
    size_t urgent;     /* of those, queued ahead of wq_add's (WQ_URGENT and WQ_FIRST) */
    size_t first;      /* of those, queued with WQ_FIRST */
    size_t background; /* of those, queued with WQ_BACKGROUND (behind wq_add's) */
    size_t waiting;    /* keys in the delay heap */
    size_t processing; /* keys handed out and not yet done */
    uint64_t adds;     /* keys that became queued-or-dirty (after de-dup), cumulative */
    uint64_t retries;  /* wq_add_rate_limited calls, cumulative */
};

/* Create a queue (never NULL). Watchers start lazily when there is work. */
struct wq *wq_new(const struct wq_opts *opts);
/* Stop the watchers and free everything (keys in processing included). NULL is fine. */
void wq_free(struct wq *q);

/* Add a key now (copied), WQ_PLAIN: a key queued WQ_BACKGROUND moves up. Ignored after
 * shutdown. */
void wq_add(struct wq *q, const char *key);
/*
 * Add a key now, ahead of the keys added with wq_add (first in, first out among
 * the urgent ones): a queued key moves ahead (still queued once); a key being
 * processed is re-queued ahead by wq_done. A later wq_add leaves it ahead.
 * Ignored after shutdown.
 */
void wq_add_urgent(struct wq *q, const char *key);
/* The same at any level (wq_add_urgent is WQ_URGENT): a queued key moves up, never
 * down; a key being processed is re-queued at the highest level it was added with. */
void wq_add_level(struct wq *q, const char *key, enum wq_level level);
/* Whether `key` is queued: waiting to be handed out now (not delayed, not being processed).
 * Its processing will see whatever changed before it is handed out. */
bool wq_queued(const struct wq *q, const char *key);
/*
 * Add a key after `delay` seconds. delay <= 0 adds now. If the key is already
 * waiting, the earlier ready time wins. Ignored after shutdown.
 */
void wq_add_after(struct wq *q, const char *key, double delay);
/* The same, queued at `level` at least when the delay is over (wq_add_after: WQ_PLAIN; of
 * several delayed adds of a waiting key, the highest level counts). */
void wq_add_after_level(struct wq *q, const char *key, double delay, enum wq_level level);
/* The level `key` was queued at when it was handed out (while it is processed; WQ_PLAIN
 * otherwise): to put it back where it was (wq_add_after_level). */
enum wq_level wq_handed_level(const struct wq *q, const char *key);
/* wq_add_after(key, wq_when(key)) and counts a retry. */
void wq_add_rate_limited(struct wq *q, const char *key);
/*
 * The rate limiter's delay for the next retry of `key` in seconds, and record
 * the failure: max(base * 2^failures (capped at max), token bucket delay).
 */
double wq_when(struct wq *q, const char *key);
/* Clear the failure count of `key` (on success). */
void wq_forget(struct wq *q, const char *key);
/* How many times `key` was rate-limited since the last forget. */
unsigned wq_num_requeues(const struct wq *q, const char *key);

/*
 * Finish processing `key` (it must have been handed out). If it was added
 * again meanwhile, it is queued again. Unknown or not-processing keys are
 * ignored (returns -ENOENT), else 0.
 */
int wq_done(struct wq *q, const char *key);

/*
 * Take the next ready key without the process callback (for callers that
 * drive the queue themselves, and tests). Returns a borrowed key valid until
 * wq_done(), or NULL when nothing is queued or after shutdown. Does not
 * respect the `workers` limit.
 */
const char *wq_get(struct wq *q);

/* Stop handing out keys, drop queued and waiting keys; later adds are
 * ignored. Keys in processing may still be wq_done()'d. */
void wq_shutdown(struct wq *q);
bool wq_shutting_down(const struct wq *q);

void wq_stats(const struct wq *q, struct wq_stats *out);
/* The queue's name ("" if none). Borrowed. */
const char *wq_name(const struct wq *q);

#endif
