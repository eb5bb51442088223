/*
 * explain: why a workload runs on a cluster, or why it does not, per cluster,
 * with numbers (docs/design.md "Explaining a job that does not run"). Pure:
 * the same inputs as placement (pod sets, ClusterMetrics inventories,
 * ResourceFlavors, reservations), no I/O, no clock.
 *
 * Per cluster the verdict is placement's own rule applied to that cluster
 * alone (place_decide with one candidate): fits now, fits once the cluster
 * drains (requests and reservations ignored), or never (not even empty). A
 * cluster the caller marks unusable (stale metrics, unreachable) is
 * EXPLAIN_UNKNOWN: nothing can be said about it, so the workload as a whole
 * is "never fits" only when every cluster was judged and none can ever hold it.
 * A cluster the caller excludes (explain_input.excluded) is EXPLAIN_EXCLUDED
 * with the caller's clause: one outside the job's cluster selector does not
 * count for the whole, one excluded for a while counts as unknown. When every
 * cluster is outside the selector the whole is EXPLAIN_EXCLUDED ("no cluster is
 * a candidate for the job: ..."), not never: a cluster labelled later may hold it.
 *
 * The numbers, per pod set and requested resource, are taken over the nodes
 * that match the pod set: ready, schedulable, carrying the admitted flavors'
 * nodeLabels and the nodeSelector, with every NoSchedule/NoExecute taint
 * tolerated (pod set + flavor tolerations) and the required node affinity
 * satisfied; when the affinity alone leaves no node, the clause says "never: no
 * node matches the required node affinity (...) of pod set <p>". A workload Kueue has not admitted
 * yet has no flavors: then a node matches on nodeSelector and tolerations
 * alone (plus the tolerations of the flavor whose nodeLabels it carries), and
 * that flavor names the node in the message.
 *
 * Message (one line, what the Event and the check message carry):
 *   never fits: pod set main needs cpu 100 per pod; cluster1: largest node 8 cpu (spot); ...
 *   waiting for capacity: pod set main needs cpu 4 per pod; cluster1: 3 of 4 cpu free on a
 *     matching node (spot); cluster2: no node matches pod set main (flavor nodeLabels,
 *     nodeSelector, taints)
 *   fits now: cluster1 (spot); cluster2: ...
 * A cluster without a node of the flavor Kueue reserved the quota in says so:
 *   cluster2: no node of flavor spot (instance=spot), the flavor Kueue reserved the quota in
 * Free amounts are allocatable minus the requests ClusterMetrics reports on
 * the node minus the caller's reservations (placements not in the metrics yet).
 * With `now` false the free amounts are left out (a cluster that can hold the
 * workload reads "fits when capacity frees" or "fits now" without numbers):
 * for a workload still waiting for Kueue, so the text changes only when the
 * verdict does, not with every pod that starts elsewhere.
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_EXPLAIN_H
#define KKS_CONTROLLERS_WORKLOAD_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controllers/workload/placement.h"

enum explain_fit {
    EXPLAIN_FITS_NOW = 0,
    EXPLAIN_FITS_EMPTY = 1, /* fits once the cluster drains */
    EXPLAIN_NEVER = 2,      /* not even on the empty cluster */
    EXPLAIN_UNKNOWN = 3,    /* unusable cluster (stale metrics, unreachable) / no cluster */
    EXPLAIN_EXCLUDED = 4    /* not a candidate for this job (explain_input.excluded) */
};

/* Why the caller keeps a cluster from the job (the cluster selector, an
 * exclusion after its pods could not be scheduled there: excl.h). */
struct explain_excl {
    const char *why; /* the cluster's clause, e.g. "excluded by the cluster selector ..."; NULL =
                        a candidate */
    bool temporary;  /* the exclusion ends: the workload as a whole is not "never" for it */
};

/* One requested resource of one pod set on one cluster. */
struct explain_res {
    char *name;        /* owned */
    int64_t need;      /* one pod, milli-units */
    int64_t free_max;  /* largest free amount on a matching node now (0 when none) */
    int64_t held_max;  /* of that node, what the placements held (explain_input.resv) take
                          from the free amount its metrics give: free_max + held_max is that
                          amount, clamped at 0 (the most among nodes as free) */
    int64_t alloc_max; /* largest allocatable amount on a matching node (0 when none) */
    int64_t free_sum;  /* summed over the matching nodes: what is free in all of them */
    int64_t alloc_sum; /* and allocatable (alloc_sum - free_sum is in use or reserved) */
};

struct explain_podset {
    char *name;           /* owned */
    int64_t count;        /* pods */
    size_t matching;      /* matching nodes */
    size_t by_affinity;   /* nodes that match but for the required node affinity */
    const char *affinity; /* the required node affinity as text (borrowed), or NULL */
    char *flavor;         /* owned: flavor of the largest matching node, or NULL */
    /* owned: an admitted flavor whose nodeLabels no node of the cluster
     * carries (Kueue reserved the quota in a flavor the cluster lacks), or NULL */
    char *no_flavor_node;
    struct explain_res *res; /* owned, in the pod set's resource order ("pods" left out) */
    size_t n_res;
};

struct explain_cluster {
    char *name; /* owned */
    enum explain_fit fit;
    char *why;                 /* owned: the cluster's clause of the message */
    struct explain_podset *ps; /* owned, one per pod set */
    size_t n_ps;
};

struct explain_report {
    enum explain_fit overall;
    struct explain_cluster *v; /* owned, in cluster name order */
    size_t n;
    char *message; /* owned, the one-line message above */
};

struct explain_input {
    const struct place_workload *wl;
    const struct place_cluster *clusters;
    size_t n_clusters;
    const bool *usable;                  /* parallel to clusters; NULL = all usable */
    const struct explain_excl *excluded; /* parallel to clusters; NULL = none excluded */
    const struct vocab_flavor *flavors;
    size_t n_flavors;
    const struct place_resv *resv; /* may be NULL */
    bool now;                      /* put the free amounts in the message */
};

/* Fill `out` (free with explain_report_free). 0, or -EINVAL on bad arguments. */
int explain_fit(const struct explain_input *in, struct explain_report *out);
void explain_report_free(struct explain_report *r);
/* An amount of `res` for messages: bytes (memory, storage) in binary units
 * ("200Mi"), the rest in decimal ("500m"); into b (QTY_STR_MAX bytes). */
const char *explain_fmt_amount(char *b, const char *res, int64_t milli);
/* "fits now" / "fits when empty" / "never" / "unknown" / "excluded". */
const char *explain_fit_name(enum explain_fit f);

#endif
