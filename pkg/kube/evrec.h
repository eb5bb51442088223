/*
 * evrec: a core/v1 Event recorder, like client-go's EventRecorder with its
 * EventCorrelator (tools/record/events_cache.go):
 *
 *   evrec_event(rec, workload_json, "Normal", "Admitted", "placed on %s", cluster);
 *
 *   - the Event is named "<involved name>.<hex unique suffix>" and lives in
 *     the involved object's namespace ("default" for cluster-scoped objects);
 *     it carries involvedObject (kind, apiVersion, name, namespace, uid,
 *     resourceVersion), source.component/host, reportingComponent/Instance,
 *     firstTimestamp/lastTimestamp and count;
 *   - a repeat of the same (object, type, reason, message) within 10 minutes
 *     of its previous occurrence PATCHes the existing Event (count+1, new
 *     lastTimestamp) instead of creating one; the cache of recent Events is
 *     an LRU of bounded size (client-go: 4096). A PATCH that finds the Event
 *     gone (404) creates it again;
 *   - aggregation (client-go's EventAggregator): when the same object, type
 *     and reason come with EVREC_AGGREGATE_MAX (10) different messages within
 *     10 minutes, further ones are folded into a single Event whose message
 *     is "(combined from similar events): <latest message>" and whose count
 *     is PATCHed up;
 *   - a spam filter drops excess events per (source, involved object): a
 *     token bucket with burst 25 refilled at 1 token per 5 minutes (client-
 *     go's EventSourceObjectSpamFilter), also kept in a bounded LRU; drops
 *     are logged at debug level (-v 4) and counted. Unlike client-go, the
 *     filter runs before correlation, so dropped events do not raise counts;
 *   - writes are asynchronous: evrec_event only formats and queues (bounded:
 *     beyond max_queued, new events are dropped and counted) and returns at
 *     once; the queue is written in order, one request at a time, from the
 *     loop.
 * All of it runs on the loop thread; the recorder is not thread-safe.
 */
#ifndef KKS_KUBE_EVREC_H
#define KKS_KUBE_EVREC_H

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>

#include "pkg/kube/client.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

#define EVREC_DEFAULT_CACHE_SIZE 4096
#define EVREC_DEFAULT_BURST      25
#define EVREC_DEFAULT_REFILL_S   300.0 /* one token per 5 minutes */
#define EVREC_DEFAULT_MAX_QUEUED 1000
#define EVREC_AGGREGATE_WINDOW_S 600.0 /* repeats within 10 minutes are counted */
#define EVREC_MAX_MESSAGE        1024  /* longer messages are truncated (UTF-8 safe) */
#define EVREC_AGGREGATE_MAX      10    /* distinct messages before aggregating */

struct evrec;

struct evrec_config {
    const char *component; /* required: source.component and reportingComponent; copied */
    const char *host;      /* source.host and reportingInstance; NULL = hostname; copied */
    size_t cache_size;     /* 0 = 4096 (both LRUs) */
    int burst;             /* 0 = 25 */
    double refill_s;       /* seconds per token; 0 = 300 */
    size_t max_queued;     /* 0 = 1000 */
    /* Monotonic clock in seconds for the spam filter and the 10-minute window;
     * NULL = clock_mono_s. For tests. */
    double (*now)(void *ud);
    void *now_ud;
};

struct evrec_stats {
    unsigned long created;      /* Events created (POST succeeded) */
    unsigned long patched;      /* repeats written as PATCH */
    unsigned long spam_dropped; /* dropped by the spam filter */
    unsigned long queue_dropped;
    unsigned long invalid; /* bad type / involved object: not recorded */
    unsigned long failed;  /* writes that failed */
};

/*
 * Create a recorder writing through `client` (borrowed; must outlive the
 * recorder). Returns 0 and *out, or -EINVAL when component is missing.
 */
int evrec_new(struct kube_client *client, const struct evrec_config *cfg, const struct logger *lg,
              struct evrec **out, struct err *e);

/*
 * Record an event about `involved` (a Kubernetes object as JSON, borrowed;
 * only kind, apiVersion, metadata.name/namespace/uid/resourceVersion are
 * read). `type` must be "Normal" or "Warning"; `reason` is a short
 * UpperCamelCase word. Never blocks and never fails visibly: bad input is
 * logged and counted as invalid.
 */
void evrec_event(struct evrec *rec, const json_t *involved, const char *type, const char *reason,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void evrec_eventv(struct evrec *rec, const json_t *involved, const char *type, const char *reason,
                  const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* Writes queued or in flight (for a bounded drain at shutdown). */
size_t evrec_pending(const struct evrec *rec);
void evrec_get_stats(const struct evrec *rec, struct evrec_stats *out);

/*
 * Free: queued writes are dropped, an in-flight one is cancelled. NULL is
 * fine. Free the recorder before the client; if the client is freed first
 * (its pending calls complete with -ECANCELED), the recorder drops its queue
 * then and may only be freed afterwards, not used.
 */
void evrec_free(struct evrec *rec);

#endif
