/*
 * aggregate: the pure, incremental computation of a ClusterQueue's
 * nominalQuota from the workers' ClusterMetrics (docs/design.md §7). No I/O, no
 * clock: time is an input (wall clock, ms since the epoch).
 *
 * One struct agg per managed ClusterQueue. Feed it the ClusterQueue
 * (agg_set_queue), the ResourceFlavors (agg_set_flavor) and every
 * ClusterMetrics (agg_update_cluster / agg_remove_cluster), then ask
 * agg_compute(now) for the values to write.
 *
 * The rule, per resource group, flavor and resource of the ClusterQueue:
 *
 *   nominalQuota = scale * SUM over fresh clusters, over ready, schedulable
 *                  nodes counted for the flavor, of max(0, allocatable - requests)
 *                  [+ the ClusterQueue's reserved usage, see "requests" below]
 *
 * - A node counts for the FIRST flavor of the resource group (spec order)
 *   whose nodeLabels it carries (all of them; a flavor without nodeLabels
 *   matches only as the default flavor) and whose taints it tolerates: every
 *   NoSchedule/NoExecute taint of the node must be tolerated by the flavor's
 *   spec.tolerations or be one of the flavor's own spec.nodeTaints (work
 *   admitted to the flavor must tolerate those). A node no labelled flavor
 *   takes counts for cfg.default_flavor when that flavor is in the group
 *   and tolerates its taints. A node counts at most once per group.
 * - Resource names map through cfg.aliases: a ClusterQueue resource `gpu`
 *   with alias gpu=nvidia.com/gpu reads the nodes' `nvidia.com/gpu`.
 * - "requests of pods not managed by Kueue": ClusterMetrics carry the total
 *   requests per node and (kueue-ks agent) managedResourceRequests, the
 *   part that belongs to hub workloads' pods. With cfg.subtract_requests
 *   (default) all requests are subtracted, and with cfg.add_back_reserved
 *   (default) the ClusterQueue's own status.flavorsReservation total is
 *   added back, but only up to the managed requests counted for the cell
 *   (same nodes and flavor rule as the capacity, included clusters only):
 *
 *     add-back = min(reserved, counted managed requests)
 *
 *   so the free quota Kueue sees (nominal - reserved) equals the free
 *   capacity the workers report minus the reservations whose pods are not
 *   reported yet (those still look free in the workers' numbers): no
 *   overshoot between a reservation and the agent's next report, and the
 *   work Kueue runs is not counted twice. When an included cluster's
 *   ClusterMetrics lack managedResourceRequests on some node (an older
 *   agent, another producer) the whole reservation is added back, as before
 *   the field existed. The managed requests are those of every hub
 *   workload on the nodes, not only this queue's: with several managed
 *   ClusterQueues sharing a flavor's nodes the cap is looser (at worst the
 *   whole reservation, as before). The breakdown shows "not-yet-reported=X" for the
 *   reservation not added back. With subtract_requests off the quota is
 *   the plain allocatable sum.
 * - scale (cfg.scale_ppm, parts per million, e.g. 900000 for 0.9) applies to
 *   the sum, rounding down (pkg/quantity qty_scale: to the milli-unit for
 *   cpu-like values, to the whole unit for bytes), before the add-back.
 * - Values print canonically, in binary SI for memory, ephemeral-storage and
 *   hugepages-* ("2Gi") and decimal SI otherwise ("1500m"), whatever the
 *   order the clusters were added in.
 * - Fresh cluster: it has reported a status (vocab_status_reported), its
 *   status.lastUpdated is at most cfg.stale_after_ms old and its Ready
 *   condition is not False. A cluster without lastUpdated
 *   (galaxy format) cannot be judged and stays counted while it exists.
 * - Shrink delay: a higher value applies at once; a lower value applies
 *   only after the target has stayed below the applied value for
 *   cfg.shrink_delay_ms, and then the highest target seen during that time
 *   is applied. The value never goes below the ClusterQueue's reserved
 *   usage (status.flavorsReservation), so a transient gap never pulls the
 *   quota under the work that runs.
 * - Incremental: each cluster's contribution (per flavor/resource) is kept;
 *   an update subtracts the old and adds the new contribution, exactly
 *   (pkg/quantity arithmetic). A change of the ClusterQueue's structure or
 *   of a flavor recomputes every cluster (agg_recompute_all, automatic).
 * - Bad data (a quantity that does not parse, a negative amount, malformed
 *   labels or taints) in a node is skipped with a warning naming the
 *   cluster, node and field; it never reaches the totals.
 */
#ifndef KKS_CONTROLLERS_QUOTA_AGGREGATE_H
#define KKS_CONTROLLERS_QUOTA_AGGREGATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/sched/vocab.h"
#include "pkg/util/err.h"

#define AGG_SOURCE_ANNOTATION "kueue-ks.io/quota-source"

struct agg_alias {
    char *name;      /* ClusterQueue resource name, e.g. "gpu" */
    char *node_name; /* name the nodes report, e.g. "nvidia.com/gpu" */
};

struct agg_cfg {
    const char *default_flavor;      /* NULL = none; copied by agg_new */
    int64_t scale_ppm;               /* 1000000 = 1.0 (default) */
    const struct agg_alias *aliases; /* copied by agg_new */
    size_t n_aliases;
    bool subtract_requests;  /* default true */
    bool add_back_reserved;  /* default true (only meaningful with subtract_requests) */
    int64_t stale_after_ms;  /* default 60000 */
    int64_t shrink_delay_ms; /* default 60000 */
};

/* Defaults: default_flavor "default-flavor", scale 1, no aliases, subtract
 * and add back, 60 s stale window, 60 s shrink delay. */
void agg_cfg_default(struct agg_cfg *c);
/* "gpu=nvidia.com/gpu" -> alias (new strings; free with agg_alias_free). 0 or -EINVAL. */
int agg_alias_parse(const char *s, struct agg_alias *out, struct err *e);
void agg_alias_free(struct agg_alias *a);
/* "0.9" / "1" / "0.75" -> parts per million, in (0, 1000000]. 0 or -EINVAL. */
int agg_scale_parse(const char *s, int64_t *ppm, struct err *e);

struct agg;

/* New aggregator for one ClusterQueue (cfg copied). Free with agg_free. */
struct agg *agg_new(const struct agg_cfg *cfg);
void agg_free(struct agg *a);

/*
 * The ClusterQueue (borrowed; read, not kept): spec.resourceGroups (the
 * cells: group, flavor, resource, current nominalQuota) and
 * status.flavorsReservation (reserved usage). A change in the set of
 * (flavor, resource) cells recomputes every cluster. 0, or -EINVAL for a
 * malformed object (the previous state is kept).
 */
int agg_set_queue(struct agg *a, const json_t *cq, struct err *e);

/* A ResourceFlavor added or changed (borrowed). Recomputes every cluster
 * when its spec differs from the known one. 0 or -EINVAL. */
int agg_set_flavor(struct agg *a, const json_t *rf, struct err *e);
/* A ResourceFlavor deleted. */
void agg_remove_flavor(struct agg *a, const char *name);

/*
 * One ClusterMetrics added or updated (borrowed; a reference is kept for
 * later full recomputes). Recomputes only this cluster's contribution.
 * Node-level bad data goes to `w` (may be NULL) and is skipped. Returns
 * -EINVAL when the object is unusable (no name, status.nodes not an array):
 * the cluster's previous contribution is then kept unchanged.
 */
int agg_update_cluster(struct agg *a, const json_t *cm, struct vocab_warnings *w, struct err *e);
/* A ClusterMetrics deleted: its contribution leaves the totals. */
void agg_remove_cluster(struct agg *a, const char *name);
/* Recompute every cluster from the kept objects (done automatically when the
 * queue structure or a flavor changes; exposed for the benchmark). */
void agg_recompute_all(struct agg *a);

/* One value to write. */
struct agg_change {
    char *flavor;        /* owned */
    char *resource;      /* owned */
    char *value;         /* owned: canonical quantity string */
    size_t group;        /* index into spec.resourceGroups */
    size_t flavor_idx;   /* index into .flavors */
    size_t resource_idx; /* index into .resources */
};

struct agg_result {
    struct agg_change *changes; /* owned: only values differing from the ClusterQueue's */
    size_t n_changes;
    char *breakdown;                /* owned: for the AGG_SOURCE_ANNOTATION annotation */
    char *left_out;                 /* owned: the clusters not in the totals (stale metrics,
                                       none, not ready), "a,b"; NULL = none */
    int64_t next_check_ms;          /* when to compute again (a pending shrink matures or a
                                       cluster goes stale); INT64_MAX = nothing pending */
    struct vocab_warnings warnings; /* configuration warnings (unknown flavor...) */
};

/*
 * Evaluate at now_ms: clusters whose freshness changed enter/leave the totals,
 * the shrink state machines step, and `out` gets the values that differ from
 * the ClusterQueue last given to agg_set_queue. Free with agg_result_free.
 * Calling it again with the same inputs gives the same result (idempotent
 * apart from time). 0, or -EINVAL without a ClusterQueue.
 */
int agg_compute(struct agg *a, int64_t now_ms, struct agg_result *out);
void agg_result_free(struct agg_result *r);

/*
 * The merge patch to write `r` into `cq` (borrowed): {"metadata":
 * {"resourceVersion": <cq's>, "annotations": {AGG_SOURCE_ANNOTATION: breakdown}},
 * "spec": {"resourceGroups": <cq's array with the changed nominalQuota values>}}.
 * (resourceGroups is a list, which a merge patch replaces whole, hence the
 * copy; the resourceVersion makes the write fail with 409 if the queue
 * changed meanwhile.) New reference, or NULL when r has no change.
 */
json_t *agg_build_patch(const json_t *cq, const struct agg_result *r);

/* The current (unscaled) sum for a cell, as a canonical quantity string into
 * buf; -ENOENT when the cell does not exist. For tests and the status command. */
int agg_total(const struct agg *a, const char *flavor, const char *resource, char *buf, size_t n);

#endif
