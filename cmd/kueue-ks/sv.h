/*
 * sv: the pure rendering of `kueue-ks status` (no I/O, no clock:
 * the time is an input). Input is the JSON list objects as the API server
 * returns them ({"items": [...]}); output is kubectl-like text tables
 * (columns padded with 3 spaces, sorted by name):
 *
 *   CLUSTER   READY   NODES   CPU(used/cap)   MEMORY(used/cap)   GPU(used/cap)   METRICS-AGE   JOBS
 *   c1        True    2/2     1500m/4         2Gi/8Gi            0/2             5s            3
 *
 *   CLUSTERQUEUE   FLAVOR   RESOURCE   QUOTA   RESERVED   SOURCE
 *   cq             gpu-a    cpu        4       1          c1=4 c2=0
 *
 *   WORKLOADS: 4 (pending 1, quota-reserved 1, admitted 1, finished 1)
 *
 * CLUSTERS come from ClusterMetrics (READY = the Ready condition, "Unknown"
 * without one; NODES = ready/total, a node without `ready` counts as ready;
 * CPU/MEMORY/GPU = the sums of allocatedResourceRequests / allocatableResources,
 * GPU = nvidia.com/gpu; METRICS-AGE from status.lastUpdated, "-" without;
 * JOBS = jobs labelled kubestellar.io/cluster=<cluster>). QUEUES: one row
 * per ClusterQueue, flavor and resource: nominalQuota, the flavor's
 * status.flavorsReservation and status.flavorsUsage totals ("0" when absent)
 * and, from the kueue-ks.io/quota-source annotation, the clusters that
 * contributed ("-" for queues kueue-ks does not manage; cut to 40
 * characters with "..." unless wide). RESERVED is what the queue serves: a
 * job kueue-ks placed holds a quota reservation but is never Admitted (our
 * check stays Pending while it runs), so Kueue's IN-USE (flavorsUsage) stays
 * 0 for it; wide shows IN-USE anyway, after RESERVED. Wide also adds
 * UNSCHEDULABLE and TAINTED node counts to CLUSTERS and a "stale" note from
 * the annotation. JOBS counts every kind the caller lists.
 * Unparseable values show as "?" rather than failing.
 */
#ifndef KKS_CMD_KUEUE_KS_SV_H
#define KKS_CMD_KUEUE_KS_SV_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "pkg/util/buf.h"

#define SV_CLUSTER_LABEL "kubestellar.io/cluster"
#define SV_GPU_RESOURCE  "nvidia.com/gpu"
/* Metrics older than this (the operator's default --metrics-stale-after) make a cluster unusable
 * for placement and quota: READY shows "Stale" instead of the last reported True. */
#define SV_METRICS_STALE_MS 60000

/* Each list is borrowed and may be NULL: then its *_note (borrowed, may be
 * NULL) is printed in place of the table, e.g. "ClusterMetrics CRD
 * (galaxy.kubestellar.io/v1alpha1) is not installed". */
struct sv_input {
    const json_t *cluster_metrics;
    const char *cluster_metrics_note;
    const json_t *jobs; /* NULL: the JOBS column shows "-" */
    const json_t *cluster_queues;
    const char *cluster_queues_note;
    const json_t *workloads; /* NULL: the WORKLOADS line shows workloads_note */
    const char *workloads_note;
    int64_t now_ms; /* wall clock, ms since the epoch */
    bool wide;
    json_t *json_out; /* set by sv_render_json only */
};

/* The wide view as JSON, fields in camelCase as kubectl's JSON:
 * {"clusters":[{"name","ready","nodes":{"ready","total"},"cpu"|"memory"|"gpu":
 * {"used","capacity"} (null: "-"),"metricsAge","jobs","unschedulableNodes","taintedNodes"}],
 * "queues":[{"clusterQueue","flavor","resource","quota","reserved","inUse","source"}],
 * "workloads":{"total","pending","quotaReserved","admitted","finished"}}; counts are numbers
 * (null for "-"), quantities strings; a section without a table is [] with "<section>Note".
 * New reference. */
json_t *sv_render_json(const struct sv_input *in);

/* Append the whole view to `out`. 0, or -E2BIG when out's cap is reached. */
int sv_render(const struct sv_input *in, struct buf *out);

/* kubectl's HumanDuration: seconds under 2 min ("90s"), "5m30s" under 10 min, minutes under
 * 3 h ("75m"), "3h5m" under 8 h, hours under 2 days ("30h"), "2d5h" under 8 days, then days;
 * "-" for a negative age (clock skew). Into buf (>= 16 bytes); returns buf. */
const char *sv_age(int64_t ms, char *buf, size_t n);

#endif
