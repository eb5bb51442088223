/*
 * quota controller: keeps the nominalQuota of managed Kueue ClusterQueues
 * equal to what the workers' ClusterMetrics report (DESIGN §5.5), using the
 * pure aggregation in controllers/quota/aggregate.h.
 *
 * Driver, on the client's libev loop:
 *   - start: discovery GET /apis/kueue.x-k8s.io picks v1beta2 when served,
 *     else v1beta1 (pkg/kube/discovery.h: 404, neither version or any
 *     transient error: logged, retried after retry_s, doubling up to 30 s);
 *   - informers on ClusterQueues, ResourceFlavors (kueue.x-k8s.io) and
 *     ClusterMetrics (galaxy.kubestellar.io/v1alpha1), each with a
 *     projection keeping only what the aggregation reads;
 *   - a ClusterQueue is managed when it carries the label
 *     QUOTA_MANAGED_LABEL=true or its name is in cluster_queues; each managed
 *     queue owns one struct agg;
 *   - a ClusterMetrics event updates only that cluster's contribution in
 *     every managed queue's agg (incremental) and enqueues the queues; a
 *     ResourceFlavor event updates the flavors; bad node data becomes a
 *     Warning Event "BadClusterMetrics" on the ClusterQueue naming the
 *     cluster, node and field (the value is skipped, never summed);
 *   - reconcile(queue) = agg_compute(now): when values differ from the
 *     ClusterQueue's, one asynchronous merge PATCH (resourceVersion
 *     precondition, quota-source annotation, agg_build_patch); success emits
 *     a Normal Event "QuotaUpdated" (flavor/resource old -> new); 409 GETs the
 *     fresh ClusterQueue and reconciles again from it; other failures are
 *     retried with the work queue's rate limiter. The key stays "processing"
 *     until the write completes, so at most one write per queue is in flight.
 *     The queue is requeued at agg's next_check_ms (shrink delay, staleness).
 *     Configuration warnings of agg_compute (unknown flavor...) become a
 *     Warning Event "QuotaConfig" when they change.
 *
 * Metrics (when a registry is given): kueue_ks_quota{cluster_queue,flavor,
 * resource} (the ClusterQueue's current nominalQuota), kueue_ks_cluster_
 * metrics_age_seconds{cluster}, kueue_ks_reconcile_errors_total{controller="quota"},
 * kueue_ks_workqueue_depth{controller="quota"}. Readiness check "quota-informers-synced".
 */
#ifndef KKS_CONTROLLERS_QUOTA_CONTROLLER_H
#define KKS_CONTROLLERS_QUOTA_CONTROLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/httpd/httpd.h"
#include "pkg/kube/client.h"
#include "pkg/manager/manager.h"
#include "pkg/metrics/metrics.h"
#include "pkg/util/err.h"
#include "pkg/util/flags.h"
#include "pkg/util/log.h"

#define QUOTA_MANAGED_LABEL "kueue-ks.io/managed-quota"
#define QUOTA_KUEUE_GROUP   "kueue.x-k8s.io"
#define QUOTA_METRICS_GROUP "galaxy.kubestellar.io"
#define QUOTA_METRICS_VER   "v1alpha1"

/* Command-line options (the targets of quota_flags). Zero-initialise, then
 * flags_set_defaults + flags_parse; free with flags_free on the table. */
struct quota_options {
    struct flag_strv cluster_queues; /* --cluster-queue (repeatable) */
    char *default_flavor;            /* --default-flavor */
    struct flag_strv resource_alias; /* --resource-alias gpu=nvidia.com/gpu (repeatable) */
    char *quota_scale;               /* --quota-scale, "1" */
    double metrics_stale_after;      /* --metrics-stale-after, seconds (60) */
    double shrink_delay;             /* --shrink-delay, seconds (60) */
    bool subtract_unmanaged;         /* --quota-subtract-requests (true) */
};

#define QUOTA_NFLAGS 7
/* Fill fl[0..QUOTA_NFLAGS) with the flag table fragment for `o` (borrowed:
 * must outlive the table's use). For run.c to append to its own table. */
void quota_flags(struct quota_options *o, struct flag *fl);

/* Options -> aggregation config. Aliases are new (free with
 * quota_cfg_release). 0, or -EINVAL naming the bad flag. */
struct agg_cfg;
int quota_options_to_cfg(const struct quota_options *o, struct agg_cfg *out, struct err *e);
void quota_cfg_release(struct agg_cfg *c);

/* Tuning; zero = default. */
struct quota_tuning {
    double retry_s;              /* discovery retry; 0 = 10 s */
    double metrics_period_s;     /* age/depth gauge refresh; 0 = 5 s */
    double informer_backoff_s;   /* informer initial backoff; 0 = informer default */
    const char *event_component; /* 0 = "kueue-ks-quota" */
};

struct quota_ctl;

/* New controller (not started); `o` is read now, not kept. 0 or -EINVAL. */
int quota_ctl_new(const struct quota_options *o, const struct quota_tuning *t,
                  struct quota_ctl **out, struct err *e);
/* Stop (if running) and free. Call before freeing the client and the
 * registry. NULL is fine. */
void quota_ctl_free(struct quota_ctl *q);

/*
 * Start on `client`'s loop. `reg`, `health` and `lg` may be NULL (all
 * borrowed; must outlive the controller). 0, -EALREADY, or -EINVAL (metric
 * registration failed).
 */
int quota_ctl_start(struct quota_ctl *q, struct kube_client *client, struct metrics_registry *reg,
                    struct httpd *health, const struct logger *lg, struct err *e);
/* Stop taking work; in-flight writes are cancelled. Idempotent. */
void quota_ctl_stop(struct quota_ctl *q);

/* A runnable for pkg/manager wrapping start/stop (ud = q). */
void quota_ctl_runnable(struct quota_ctl *q, struct mgr_runnable *out);

/* True once discovery succeeded and all three informers synced. */
bool quota_ctl_synced(const struct quota_ctl *q);
/* The Kueue API version in use ("" before discovery). Borrowed. */
const char *quota_ctl_kueue_version(const struct quota_ctl *q);

struct quota_stats {
    uint64_t reconciles;
    uint64_t patches;   /* successful PATCHes */
    uint64_t conflicts; /* 409s */
    uint64_t errors;    /* failed writes / refreshes */
    size_t managed;     /* managed ClusterQueues */
};
void quota_ctl_stats(const struct quota_ctl *q, struct quota_stats *out);

#endif
