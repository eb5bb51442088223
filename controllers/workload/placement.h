/*
 * placement: the pure decision "which worker cluster runs this workload"
 * (docs/design.md §8). No I/O, no clock: everything, including time, is an input.
 *
 * Inputs are plain C structs built by the converters below from the JSON the
 * informers hold:
 *   - a cluster inventory from a ClusterMetrics object (place_cluster_from_json),
 *   - the Workload's pod sets and admitted flavors (place_workload_from_json),
 *   - the ResourceFlavors (vocab_flavor_from_json).
 *
 * Amounts are int64 milli-units of the resource ("500m" cpu = 500, "1Gi" =
 * 1073741824000), parsed exactly by pkg/quantity. That is the unit the
 * kube-scheduler compares in (MilliValue), exact for every value up to
 * about 9.2e15 units; a larger value is bad data (the node is skipped with
 * a warning, or the workload is refused with an error).
 *
 * Feasibility (place_decide): a cluster is feasible when every pod of every
 * pod set fits on its nodes that are ready, schedulable, carry all of the
 * admitted flavors' nodeLabels and the pod set's nodeSelector, satisfy its
 * required node affinity (pkg/sched/affinity: kube-scheduler's rules), and whose
 * NoSchedule/NoExecute taints are tolerated by the pod set's tolerations plus
 * the flavors' tolerations. Inter-pod constraints (pkg/sched/podcons): a
 * required anti-affinity of the pod set's pods to each other on
 * kubernetes.io/hostname puts at most one of its pods on a node; pod
 * affinity, other anti-affinity and topology spread cannot be judged from
 * ClusterMetrics: the pod set is placed on capacity and the result names them
 * (left_to_worker, also in the message). Pod sets are taken largest first (first-fit
 * decreasing); the replicas of a pod set go first-fit over the nodes in name
 * order. Free capacity of a node = allocatable - allocatedResourceRequests -
 * reservations held on it (see below). Every pod also takes one of the node's
 * pod slots (allocatable "pods", 110 by default; requests "pods" = pods
 * already bound, when the agent reports it); a node that does not report
 * "pods" has no such limit.
 *
 * Score (of a feasible cluster): for each resource the workload requests (not "pods"), the
 * fraction of the cluster's usable allocatable still free after the
 * placement, averaged, in parts per million. PLACE_SPREAD picks the highest,
 * PLACE_BINPACK the lowest; ties go to the smallest cluster name.
 * Preferred node affinity ranks first: preferred_ppm = the preferred-term
 * weight the placed pods' nodes match over the weight every pod could get
 * (per pod set, affinity_preferred_total); the feasible cluster with the
 * highest preferred_ppm wins, the policy score decides among equals. Within a
 * cluster nodes are still taken in name order. Integer
 * arithmetic only, so the result is deterministic.
 *
 * "Never fits" versus "not now": a workload that fits no cluster even when
 * every node is empty (requests and reservations ignored) gets PLACE_NEVER
 * (the controller sets the check to Rejected); one that would fit some
 * cluster when it drains gets PLACE_NOT_NOW (requeue). PLACE_NEVER is final
 * (Kueue deactivates the Workload), so it is only given from a complete view:
 * every registered cluster must be known (place_opts.others holds the known
 * clusters that are not candidates now, e.g. unreachable, and are evaluated
 * empty too; place_opts.unknown names the registered clusters whose capacity
 * is not known: no ClusterMetrics object yet, no status, stale metrics,
 * Ready=False). With any unknown
 * cluster the answer is PLACE_NOT_NOW, with a message naming them. Both carry a message
 * giving, for up to 4 clusters, the pod set, how many of its pods fit, and the
 * resource that ran short ("cpu: at most 1 left on a matching node, a pod
 * needs 6"), or that no node matches the flavor/nodeSelector/tolerations,
 * or that the required node affinity (written out) excludes the nodes that
 * match the rest, with any invalid term named.
 *
 * Reservations: a placement that ClusterMetrics does not show yet is held in
 * a struct place_resv, per workload key, with the per-node amounts of the
 * decision, and subtracted from free capacity. The rule for dropping one
 * (place_resv_sync): when the cluster's metrics have a lastUpdated at least
 * `settle_ms` after the reservation was made (the agent counts bound pods,
 * Pending included, so by then the pods are in allocatedResourceRequests),
 * or at least `seen_margin_ms` after the controller saw all the copy's pods
 * running and ready (place_resv_pods_seen: bound before that, so a metrics
 * write after it counts them; the margin covers the agent's informer lag and
 * a small clock skew of a remote agent), or when it is older than `ttl_ms`
 * whatever the metrics say; or at once when a ClusterMetrics event of the
 * cluster lists the reservation's copy (place_resv_copy: the controller records
 * its uid from the copy's first sight, its watch ADDED, before its pods exist)
 * in status.countedJobs with at least the placement's pods (the sum of its
 * replicas): those pods are in the same write's allocatedResourceRequests
 * (place_resv_counted, called for every ClusterMetrics event). The agent lists a
 * copy in the write where its count changes (agent.h: the change since its
 * previous write; a heartbeat leaves the list): a copy listed before its uid
 * was recorded, or in a write this controller did not see (a relist shows only
 * the last), keeps the other rules. A partial count keeps it; metrics without
 * the list, or not listing the copy, leave the rules above. The controller
 * also removes it explicitly when the workload is evicted, finished or
 * re-placed (place_resv_remove). Over-holding is conservative: it can only
 * make a cluster look fuller than it is, never double-book it. Deciding again
 * for a key that holds a reservation ignores that key's own reservation.
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_PLACEMENT_H
#define KKS_CONTROLLERS_WORKLOAD_PLACEMENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/sched/affinity.h"
#include "pkg/sched/vocab.h"
#include "pkg/util/err.h"
#include "pkg/util/strmap.h"

/* ---- small value types -------------------------------------------------- */

/* A resource amount in milli-units. */
struct place_res {
    char *name; /* owned */
    int64_t milli;
};

/* A resource list; names are unique. */
struct place_reslist {
    struct place_res *v; /* owned */
    size_t n;
};

/* Resource list helpers. get: the amount, 0 when absent. add: adds (creates
 * the entry when absent); saturates at INT64_MAX/INT64_MIN rather than wrap. */
int64_t place_reslist_get(const struct place_reslist *rl, const char *name);
void place_reslist_add(struct place_reslist *rl, const char *name, int64_t milli);
void place_reslist_free(struct place_reslist *rl);

/* ---- cluster inventory (ClusterMetrics) ---------------------------------- */

struct place_node {
    char *name;                     /* owned */
    struct place_reslist alloc;     /* allocatableResources */
    struct place_reslist requested; /* allocatedResourceRequests */
    json_t *labels;                 /* new reference to the node's labels object, or NULL */
    struct vocab_taint *taints;
    size_t n_taints;
    bool unschedulable;
    bool ready; /* status.nodes[].ready; absent = true (galaxy format) */
    /* The same amounts, dense, indexed like the cluster's res_names (so a
     * decision does not look names up per node): PLACE_ABSENT = not reported. */
    int64_t *alloc_v;
    int64_t *req_v;
};
#define PLACE_ABSENT INT64_MIN

#define PLACE_COUNTED_MAX 1000 /* countedJobs entries read (the agent writes at most as many) */
#define PLACE_UID_MAX     128  /* a longer uid is malformed (a Kubernetes uid is 36 bytes) */

struct place_cluster {
    char *name;    /* owned: metadata.name, the cluster name */
    bool reported; /* vocab_status_reported(status): the agent has written a status */
    bool has_last_updated;
    int64_t last_updated_ms;  /* status.lastUpdated, wall clock, ms since the epoch */
    bool ready;               /* condition Ready != False (absent = true) */
    struct place_node *nodes; /* sorted by name */
    size_t n_nodes;
    char **res_names; /* owned: every resource name a node reports, sorted */
    size_t n_res;
};

/*
 * From a ClusterMetrics object. Bad data in a node (a quantity that does not
 * parse, a negative amount, a malformed taint, labels that are not strings)
 * skips that node and records a warning naming the cluster, the node and the
 * field; a node without a name is skipped too. Returns -EINVAL only when the
 * object itself is unusable (not an object, no metadata.name, status.nodes
 * not an array); *out is then empty. `w` may be NULL.
 */
int place_cluster_from_json(const json_t *cm, struct place_cluster *out, struct vocab_warnings *w,
                            struct err *e);
void place_cluster_free(struct place_cluster *c);
/* Usable for placement at now_ms: the status is reported, Ready is not False
 * and the metrics are at most stale_after_ms old (a cluster without
 * lastUpdated, galaxy format, cannot be judged and counts as fresh). The same
 * rule as the quota. */
bool place_cluster_usable(const struct place_cluster *c, int64_t now_ms, int64_t stale_after_ms);

/* ---- workload ----------------------------------------------------------- */

struct place_podset {
    char *name; /* owned */
    int64_t count;
    struct place_reslist per_pod; /* effective request of one pod */
    struct vocab_kv *node_selector;
    size_t n_node_selector;
    struct vocab_toleration *tolerations;
    size_t n_tolerations;
    char **flavors; /* owned: distinct admitted flavor names, sorted */
    size_t n_flavors;
    struct affinity *affinity; /* owned: template.spec.affinity's node affinity */
    bool one_per_node;         /* podcons: self anti-affinity on the hostname */
    char *left_to_worker;      /* owned: podcons' constraints not judged, or NULL */
};

struct place_workload {
    char *key; /* owned: "namespace/name" */
    struct place_podset *podsets;
    size_t n_podsets;
};

/*
 * From a Workload object: spec.podSets[] (name, count default 1,
 * template.spec containers/initContainers/overhead/nodeSelector/tolerations)
 * and status.admission.podSetAssignments[] (flavors by pod set name; count
 * there, when present, overrides spec count as in partial admission).
 * Effective request of one pod, per resource, as the scheduler computes it:
 * podres_pod (pkg/podres: containers + sidecars vs init containers,
 * limit-as-request, pod-level resources, overhead), converted to milli-units
 * once per pod set. A bad quantity or a malformed field: -EINVAL with a
 * message naming the pod set and field; *out is then empty.
 */
int place_workload_from_json(const json_t *wl, struct place_workload *out, struct err *e);
void place_workload_free(struct place_workload *w);

/* ---- reservations -------------------------------------------------------- */

struct place_resv_entry {
    char *key;     /* owned: workload key */
    char *cluster; /* owned */
    int64_t at_ms;
    int64_t settle_at_ms;           /* metrics at least this new show it: at_ms + settle_ms, earlier
                                       once its pods are seen running (place_resv_pods_seen) */
    int64_t pods;                   /* the placement's pods (sum of the result's replicas) */
    char *copy_uid;                 /* owned: the worker copy's uid (place_resv_copy), or NULL */
    struct place_reslist *per_node; /* owned, parallel to node_names */
    char **node_names;              /* owned */
    size_t n_nodes;
};

/* Entries are unordered. The indexes make a decision independent of how
 * many reservations are held: by_key finds a key's entry, by_cluster keeps,
 * per cluster, the per-node sums of its entries (updated on every add and
 * drop), so a decision reads one sum per node instead of walking the
 * entries. Only the functions below may change a place_resv. */
struct place_resv {
    struct place_resv_entry *v; /* owned */
    size_t n;
    int64_t settle_ms;        /* default 30000 */
    int64_t seen_margin_ms;   /* default 2000 */
    int64_t ttl_ms;           /* default 600000 */
    struct strmap by_key;     /* key -> entry index + 1 */
    struct strmap by_cluster; /* cluster -> per-node sums (private to placement.c) */
    struct strmap by_uid;     /* copy uid -> its entry's key (borrowed; place_resv_copy) */
};

struct place_result;

void place_resv_init(struct place_resv *r);
void place_resv_free(struct place_resv *r);
/* Hold the per-node amounts of a PLACE_OK result for `key` on its cluster,
 * made at now_ms; replaces an earlier reservation of the same key.
 * Returns 0, or -EINVAL when the result is not PLACE_OK. */
int place_resv_add(struct place_resv *r, const char *key, const struct place_result *res,
                   int64_t now_ms);
/* The copy of `key`'s reservation was seen at seen_ms with all its pods running and ready
 * (bound): metrics written seen_margin_ms after that show them. Returns 1 when that made
 * the reservation's drop come earlier, 0 otherwise (none held, or already as early). */
int place_resv_pods_seen(struct place_resv *r, const char *key, int64_t seen_ms);
/* The worker copy of `key`'s placement has uid `uid`: metrics listing it in countedJobs with
 * the placement's pods end the reservation (see above). Returns 1 when recorded (new or
 * changed), 0 when none is held or it is the recorded one, -EINVAL for a NULL or empty uid. */
int place_resv_copy(struct place_resv *r, const char *key, const char *uid);
/* A ClusterMetrics object `cm` (borrowed) of cluster `cluster`: drop each reservation on that
 * cluster whose copy its status.countedJobs lists with at least the placement's pods (see
 * above). Only the first PLACE_COUNTED_MAX entries are read; an entry that is not an object
 * with a non-empty string uid (at most PLACE_UID_MAX bytes) and an integer pods >= 0 is
 * ignored, as is the list when it is not an array. O(entries): reservations are found by their
 * copy's uid. Returns how many were dropped. */
size_t place_resv_counted(struct place_resv *r, const char *cluster, const json_t *cm);
/* Drop the reservation of `key`. Returns 1 when one was dropped, 0 if none. */
int place_resv_remove(struct place_resv *r, const char *key);
/* Apply the drop rule above to every reservation on cluster `c`: returns how
 * many were dropped. Call after each ClusterMetrics update and periodically. */
size_t place_resv_sync(struct place_resv *r, const struct place_cluster *c, int64_t now_ms);
/* Amount of `resource` held on node `node` of `cluster` (sum of entries), O(1). */
int64_t place_resv_held(const struct place_resv *r, const char *cluster, const char *node,
                        const char *resource);
/* True when `key` holds a reservation; *cluster (borrowed) says where. */
bool place_resv_lookup(const struct place_resv *r, const char *key, const char **cluster);

/* ---- the decision ----------------------------------------------------------- */

enum place_policy { PLACE_SPREAD = 0, PLACE_BINPACK = 1 };

enum place_status {
    PLACE_OK = 0,         /* cluster chosen */
    PLACE_NOT_NOW = 1,    /* fits some cluster when it drains: requeue */
    PLACE_NEVER = 2,      /* fits no cluster even empty: reject */
    PLACE_PIN_UNKNOWN = 3 /* the pinned cluster is not among the inputs */
};

struct place_opts {
    enum place_policy policy;
    const char *pinned; /* borrowed, NULL = choose; a pinned cluster is the only candidate */
    /* borrowed, may be NULL: what pinned it, for the OK message ("placed on cluster c (pinned
     * by <pinned_by>: ...)" instead of the policy's words) */
    const char *pinned_by;
    /* The rest of the registered clusters, for the "never fits" judgement
     * only (not used with a pin): `others` are known (usable metrics) but
     * not candidates now (e.g. unreachable): evaluated empty; `unknown`
     * names the clusters whose capacity is not known. Both borrowed, in
     * any order: messages name clusters (candidates, others, unknown) sorted
     * by name, whatever order the caller collected them in. */
    const struct place_cluster *others;
    size_t n_others;
    const char *const *unknown;
    size_t n_unknown;
};

/* Replicas of one pod set on one node, in a decision. */
struct place_assign {
    size_t podset; /* index into the workload's podsets */
    char *node;    /* owned */
    int64_t replicas;
};

struct place_result {
    enum place_status status;
    char *cluster;     /* owned: the chosen cluster (PLACE_OK), else NULL */
    int64_t score_ppm; /* of the chosen cluster */
    char *message;     /* owned, human-readable: why this cluster / why none */
    /* owned, PLACE_OK only, or NULL: the pod sets' constraints placement did
     * not judge (pod (anti-)affinity, topology spread: podcons.h), "pod set
     * <name>: <what>; ..."; also at the end of `message` */
    char *left_to_worker;
    int64_t preferred_ppm;       /* of the chosen cluster: preferred node affinity met (below) */
    struct place_assign *assign; /* owned, PLACE_OK only */
    size_t n_assign;
    /* per-node totals of the decision (what a reservation holds) */
    struct place_reslist *node_totals; /* owned, parallel to node_names */
    char **node_names;
    size_t n_nodes;
};

/*
 * Decide. `clusters` are the usable clusters (the caller leaves out stale or
 * lost ones, see place_cluster_usable; a cluster whose Ready condition is
 * False is skipped here too, and a pin to it waits: PLACE_NOT_NOW);
 * `flavors` the known ResourceFlavors (a pod set whose admitted
 * flavor is unknown matches no node, with a message saying so); `resv` may be
 * NULL. Fills `out` (free with place_result_free). Returns 0 (the status is
 * in out->status), or -EINVAL for invalid arguments.
 */
int place_decide(const struct place_workload *wl, const struct place_cluster *clusters,
                 size_t n_clusters, const struct vocab_flavor *flavors, size_t n_flavors,
                 const struct place_resv *resv, const struct place_opts *opts,
                 struct place_result *out);
void place_result_free(struct place_result *r);

/* "spread" / "binpack" -> policy. 0 or -EINVAL. */
int place_policy_parse(const char *s, enum place_policy *out);

#endif
