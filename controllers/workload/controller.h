/*
 * controller: the workload controller's driver (docs/design.md §4). It owns a
 * work queue of Workload keys; reconciling a key builds a wl_snapshot from the
 * stores it is given (never from the API server), computes a placement when
 * the decision needs one (placement.h, with the controller's reservations),
 * calls wl_decide() and hands the actions to wlx_perform(). The key is done
 * when the writes complete: success forgets its backoff (and honours a
 * requeue delay), a failure (409 included) is re-queued rate-limited.
 *
 * The stores come from informers the caller runs (hub: Workloads with an
 * owner-uid index named WLC_INDEX_OWNER, AdmissionChecks, ResourceFlavors,
 * ClusterMetrics, one store per job kind; workers: one store of our copies
 * per (cluster, kind), label selector kueue-ks.io/origin=<origin>), so the
 * controller can be tested with stores filled by hand. Event handlers map
 * changes to Workload keys: wlc_on_workload(), wlc_on_job() (a hub job or a
 * worker copy: by uid or by the kueue-ks.io/origin-uid label, through the
 * owner index).
 *
 * Clusters: the registered workers are the ClusterMetrics objects (name =
 * cluster). A cluster is usable when place_cluster_usable() says so and, with
 * the direct transport, its copies store is available (connected and synced).
 * The controller remembers since when each cluster has been unusable (for
 * --worker-lost-timeout), counted from when this process knew its state
 * (wlc_sources.known): a restart is not an outage of every worker.
 *
 * Own writes versus lagging informers: after a pass wrote a placement
 * (job patch from resourceVersion rv), a pass that still sees the job at rv
 * (its watch event not delivered yet, while the Workload's may be) does not
 * place again; the key waits for the job's event (1 s backstop). A failed
 * pass forgets the record. More generally, after a pass whose writes changed
 * the Workload or the hub job (wlx_result wl_changed / job_changed), a pass
 * that still sees that object at the resourceVersion the writes started from
 * waits for its event (1 s backstop, 10 s at most) instead of deciding on the
 * replaced view: no repeated writes, no 409s from our own lagging cache.
 *
 * Dispatch before status return: dispatches are under way while a Workload whose pass
 * placed its job (and, with the direct transport, made its copy once the placement went
 * through) has not had a later pass deciding anything else (its writes' own events seen,
 * evicted...) or keys wait in the queue's plain FIFO (reservations to place; hub job
 * events and copies' status changes are queued first, WQ_FIRST, and do not count). Meanwhile a pass
 * whose only Workload status write would be the check's "running on cluster c" leaves it
 * (wl_snapshot.defer_running; the remote-status annotation and the hub job's status still
 * go at once): the key runs again, ahead, once no dispatch is under way, or after 5 s at
 * most. The Workload status write is the scarce one on a
 * real API server: a burst of dispatches spends it on placements first.
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_CONTROLLER_H
#define KKS_CONTROLLERS_WORKLOAD_CONTROLLER_H

#include <ev.h>
#include <jansson.h>
#include <stdint.h>

#include "controllers/workload/wl.h"
#include "controllers/workload/kinds.h"
#include "controllers/workload/wlx.h"
#include "controllers/workload/placement.h"
#include "controllers/workload/xf.h"
#include "pkg/kube/store.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

struct metrics_registry;

#define WLC_INDEX_OWNER "owner" /* store_index_by_owner_uid on the Workloads store */
/* store_index_by_field "metadata.uid" on each hub job store: the orphan check
 * of one key (wlc_gc_key) asks it whether a hub job has a copy's origin uid */
#define WLC_INDEX_UID "uid"

struct wlc_sources {
    struct store *workloads;        /* required, with the WLC_INDEX_OWNER index */
    struct store *admission_checks; /* required */
    struct store *flavors;          /* required */
    struct store *cluster_metrics;  /* required */
    /* ClusterQueues (cluster-scoped, key = name), for the ClusterQueue-wide
     * default cluster selector (clustersel.h); NULL = no defaults. */
    struct store *cluster_queues;
    /* Extra labels of a cluster for the cluster selector (direct transport:
     * the worker Secret's labels): a new reference or NULL. NULL callback =
     * none. */
    json_t *(*cluster_labels)(void *ud, const char *cluster);
    /* The hub store of job kind k (with the WLC_INDEX_UID index; without it
     * wlc_gc_key deletes nothing and only wlc_gc judges orphans), or NULL when
     * that kind is not watched. */
    struct store *(*jobs)(void *ud, const struct kind_def *k);
    /* The kind to use for a Workload's controller owner reference (borrowed,
     * {apiVersion, kind, ...}): a table entry, or a generic entry for a kind
     * outside the table (kinds.h kind_dynamic_new); NULL while it is not known
     * (the Workload is skipped: the caller re-queues it once it knows). When
     * the kind cannot be used (not served, cluster-scoped...), the reason is
     * written to why (why_len bytes, left "" otherwise): a Warning Event
     * UnknownJobKind on the Workload tells the user. NULL callback =
     * kind_for_owner (unknown kinds are then never watched). */
    const struct kind_def *(*kind)(void *ud, const json_t *owner, char *why, size_t why_len);
    /* Every kind that has a hub store, for the orphan GC (*n entries,
     * borrowed). NULL callback = the kind table. */
    const struct kind_def *const *(*kinds)(void *ud, size_t *n);
    /* The store of our copies of kind k on `cluster` when that worker is
     * connected and synced, else NULL. May be NULL (kubestellar transport).
     * It may hold other copies too (workers.h: the Job store is shared with
     * the agent): only objects xf_is_ours() are taken as ours; the orphan
     * sweep lists them by the index XF_INDEX_ORIGIN when the store has it. */
    struct store *(*copies)(void *ud, const char *cluster, const struct kind_def *k);
    /* The registered worker names (a new JSON array of strings), NULL = no
     * registry (the ClusterMetrics objects are every cluster). A registered
     * worker without a ClusterMetrics object counts as one whose capacity is
     * not known yet: no workload is rejected as fitting no cluster meanwhile. */
    json_t *(*worker_names)(void *ud);
    /* False while this process does not know the state of worker `cluster` yet
     * (direct transport: not heard from since the start, workers_known). Its
     * not being usable then is no outage: the --worker-lost-timeout clock
     * starts only once it is known, the AdmissionCheck stays as it is
     * (wlc_sync_admission_checks), and a job placed nowhere that no known
     * cluster can take waits without a word for it (a minute after the start
     * at most). NULL = always known. */
    bool (*known)(void *ud, const char *cluster);
    /* True once every hub store above has synced (its first list delivered).
     * Until then keys are requeued after 1 s without a decision: a job missing
     * from an unsynced store would look deleted and its copies would go.
     * NULL = always synced (tests). */
    bool (*synced)(void *ud);
    void *ud;
};

struct wlc_config {
    struct ev_loop *loop; /* borrowed, required */
    struct wlc_sources src;
    /* hub client, events, worker clients; reserve hooks are set by wlc. With
     * ops.server_side_apply the Workload status is applied (SSA) until the hub
     * answers 415 (no SSA, e.g. the devhub): from then on merge patches, and
     * that key is retried at once (not counted as an error). */
    struct wlx_ops ops;
    struct wl_opts opts;
    enum place_policy policy;
    int64_t metrics_stale_after_ms; /* 0 = 120000 */
    /* Wall clock in ms since the epoch; NULL = the real clock. For tests. */
    int64_t (*now_ms)(void *ud);
    void *now_ud;
    int workers; /* concurrent reconciles, 0 = 4 */
    const struct logger *lg;
    /* Borrowed, may be NULL (no metrics). Registers, and updates:
     * kueue_ks_workloads_placed_total{cluster} / _evicted_total{cluster} /
     * _rejected_total, kueue_ks_dispatch_latency_seconds,
     * kueue_ks_status_return_latency_seconds (histograms), kueue_ks_worker_up{cluster}
     * (set by wlc_sync_admission_checks), kueue_ks_reconcile_errors_total and
     * kueue_ks_workqueue_depth with controller="workload" (shared families).
     * Counted when a pass's writes succeed. wlc_new fails with -EEXIST when
     * these names are already registered (one wlc per registry). */
    struct metrics_registry *metrics;
};

struct wlc;

/* Create (copies the config; stores and clients stay borrowed). 0 or -EINVAL. */
int wlc_new(const struct wlc_config *cfg, struct wlc **out, struct err *e);
/* Free. Free the hub and worker clients FIRST: their pending calls then complete
 * (-ECANCELED) into the still-valid controller. NULL is fine. */
void wlc_free(struct wlc *c);

/* Queue a Workload key ("ns/name"). */
void wlc_enqueue(struct wlc *c, const char *key);
/* Handlers: queue the Workload(s) concerned by a changed object. A hub job change
 * queues them first (WQ_FIRST, ahead of the urgent keys too): it moves a dispatch under
 * way on (the placement written: make the copy), which a burst of new reservations must
 * not hold back, neither in the plain FIFO nor, at a restart, the reservations the start-up
 * pass queued ahead (wlc_enqueue_all): with 300 reserved at once, no copy was made
 * until every one of them was placed (docs/performance.md). A Workload or copy change of a key
 * whose job is placed without a copy yet is queued first too (its pass may wait for that event,
 * own_held). wlc_on_job() queues other copy changes in order. */
void wlc_on_workload(struct wlc *c, const json_t *wl);
void wlc_on_job(struct wlc *c, const json_t *job_or_copy);
/* A copy's change (added, updated, deleted) from a worker's informer. XF_COPY_STATUS is queued
 * first, as a hub job's, so its status returns to the hub at once (issue 12 goal 6; in order it
 * waited behind a burst's placements, seconds on the real stack; docs/performance.md "Status
 * return ahead of a burst"). XF_COPY_OTHER as wlc_on_job(). XF_COPY_LISTED behind the
 * changes (WQ_BACKGROUND, as a pass over every Workload: its pass reads trees of its own), or
 * first while the Workload's dispatch is under way: a list's copies queued in order filled the
 * packed stores' tree cache, 13-18 MB for seconds at a restart with 10,000 copies
 * (docs/performance.md "A restart's listed copies behind the changes"). XF_COPY_ADDED as
 * XF_COPY_STATUS, but the first sight of the copy a pass made, as made, on `cluster` (its
 * worker; NULL: unknown, always queued), queues no pass when that pass found it would decide
 * nothing (wl_outcome.sight_quiet; docs/performance.md "A new copy's first sight without a
 * pass"). */
void wlc_on_copy(struct wlc *c, const json_t *copy, const char *cluster, enum xf_copy_change how);
/* wlc_on_job() for an update of a hub job from `old`; `relist`: the update comes from a list
 * (informer_listing), which can fold several writes into one. The echo of a pass's own status
 * relay (wl.h, wl_action.relay) queues no pass when it is that write alone. */
void wlc_on_job_update(struct wlc *c, const json_t *old, const json_t *job, bool relist);
/* What a pass over every Workload (wlc_enqueue_all) reads of a Workload and of its job, as
 * views (store_get_view; dotted paths, NULL-terminated), and what wlc_on_workload and
 * wlc_on_job read of an object a list adds: the hub informers' listed_view (informer.h). */
extern const char *const wlc_workload_view[];
extern const char *const wlc_job_view[];
extern const char *const wlc_workload_listed_view[];
extern const char *const wlc_job_listed_view[];
/* Queue every Workload: those that want a placement (wl_wants_placement) ahead, the others
 * behind every change (WQ_BACKGROUND; a hub job's too); one queued already stays where it is,
 * unread (its pass reads the stores when it runs). After an AdmissionCheck, ResourceFlavor or
 * worker change, and once the hub's start-up lists are all in (the objects they deliver before
 * that are not changes and queue nothing): so neither a reservation made while the operator
 * was down nor a change that comes by watch meanwhile (a new reservation, a copy's status)
 * waits behind the restart's pass over every existing Workload, and each Workload and job is
 * read once for it, whichever list ends first. */
void wlc_enqueue_all(struct wlc *c);
/*
 * ClusterMetrics `cluster` was added, changed or deleted (the store already
 * shows it). Queues only the Workloads the change can affect, as the
 * controller recorded them at each one's last pass: those whose pass read
 * every cluster's capacity (a placement that did not succeed, the per-cluster
 * fit in a message) and, when the cluster came, went or changed usability,
 * those whose job is placed on it. Not the others: a placed Workload's pass
 * depends on its cluster's usability only, a finished one on none. A deleted
 * cluster's converted metrics are dropped.
 */
void wlc_on_cluster(struct wlc *c, const char *cluster);
/* Every ClusterMetrics added or changed (`cm`, borrowed, as the event brought it, not
 * coalesced): the reservations its status.countedJobs ends (placement.h place_resv_counted),
 * so a list that a later write replaces before a pass reads the store still counts. */
void wlc_on_metrics(struct wlc *c, const json_t *cm);
/* The same for usability that changes with time (metrics going stale): for
 * every cluster whose usability changed since last noticed, its placed
 * Workloads, and then the waiting ones. Call it periodically. */
void wlc_check_clusters(struct wlc *c);

/*
 * The AdmissionCheck controller (acc.h) over the same stores: for
 * every AdmissionCheck of ours, count the usable clusters (as for
 * placement) and PATCH its status (merge patch, resourceVersion-guarded) when
 * Active must change. Asynchronous; a failed write is logged and counted, the
 * next call retries. Call it on every ClusterMetrics or worker connection
 * change, on AdmissionCheck changes, and periodically (staleness is
 * time-based). While no cluster is usable but some is not known yet
 * (src.known), during the first minute after wlc_new, nothing is written: a
 * restart does not flip Active to False (a timer syncs again when that minute
 * ends). Returns the number of writes submitted.
 */
size_t wlc_sync_admission_checks(struct wlc *c);

/*
 * Orphan GC (docs/design.md §4 "Orphans"): for every cluster (ClusterMetrics) and every
 * kind (src.kinds, default the table) whose hub job store and worker copies store both exist,
 * delete the worker objects with our origin whose hub job (by uid) is gone
 * (wl_gc_orphans). A sweep over every hub job and copy: call it when a
 * worker (re)connects, when wlc_gc_pending() says so, and rarely as a
 * backstop; wlc_gc_key() covers the events. Does nothing until the hub
 * stores have synced. Asynchronous; returns the number of deletions submitted.
 */
size_t wlc_gc(struct wlc *c);
/*
 * The orphan check of one key ("ns/name"), O(clusters x kinds): our copy with
 * that key on any cluster whose origin uid no hub job has (WLC_INDEX_UID) is
 * deleted. Call it when a hub job is deleted and when a copy is added or
 * changed, so the sweep above is needed only when an event could not be
 * judged: before the hub stores synced, after a failed delete
 * (wlc_gc_pending), when a worker (re)connects, and as a rare backstop.
 * Returns the number of deletions submitted.
 */
size_t wlc_gc_key(struct wlc *c, const char *key);
/* True when a sweep (wlc_gc) is wanted: an orphan check could not be made or a
 * delete failed since the last sweep. */
bool wlc_gc_pending(const struct wlc *c);
/* The hub has no server-side apply (the start-up probe's answer came after wlc_new): Workload
 * status is written with merge patches from now on (ops.server_side_apply). Whether it was
 * still on (a write's 415 had not switched it off already). */
bool wlc_no_apply(struct wlc *c);
/* Whether placements are under way: passes queued ahead (a placement wanted, a dispatch under
 * way) or in order (a reservation may be among them), or a job placed with no copy made yet.
 * The caller may put background work off until they ran (a restart's orphan sweep and the
 * agents' Pod lists: the first dispatches first). Passes queued behind (WQ_BACKGROUND) do not
 * count. */
bool wlc_placing(const struct wlc *c);
/* Whether a sweep put off while placements are under way (wlc_placing) may run at `now`
 * (seconds on a monotonic clock): none is, or the first call that found them has been
 * WLC_SWEEP_WAIT_S ago (a steady stream of changes keeps wlc_placing true, and orphan copies
 * hold worker capacity). A true answer ends the wait; the next one starts afresh. */
#define WLC_SWEEP_WAIT_S 5.0
bool wlc_sweep_due(struct wlc *c, double now);

struct wlc_stats {
    uint64_t reconciles;
    uint64_t failures;        /* passes with a failed write */
    uint64_t placements;      /* PLACE_OK decisions acted on */
    size_t reservations;      /* held now */
    uint64_t ac_writes;       /* AdmissionCheck status writes completed */
    uint64_t ac_failures;     /* AdmissionCheck status writes failed */
    uint64_t gc_deleted;      /* orphan deletions submitted */
    size_t parsed_clusters;   /* ClusterMetrics conversions cached */
    size_t waiting;           /* Workloads whose last pass read every cluster */
    size_t placed;            /* Workloads known placed on a cluster */
    uint64_t own_holds;       /* passes held until the stores showed the last pass's writes */
    uint64_t echo_skips;      /* hub job events that were a status relay's own write: no pass */
    uint64_t sight_skips;     /* copies' ADDED that were a pass's own create, quiet: no pass */
    uint64_t counted_drops;   /* reservations ended by metrics counting their copy's pods */
    uint64_t start_holds;     /* placements held for a worker not known since the start */
    uint64_t deferrals;       /* passes that left the running message behind dispatches */
    uint64_t defer_skips;     /* of those, not made: nothing changed since the last one */
    size_t queued;            /* keys waiting in the work queue, ready */
    size_t queued_urgent;     /* of those, queued ahead (wq_add_urgent or WQ_FIRST) */
    size_t queued_first;      /* of those, queued first (WQ_FIRST: a hub job change, a copy's
                                 status change) */
    size_t queued_background; /* of those, queued behind the changes (a pass over every
                                 Workload: WQ_BACKGROUND) */
    bool server_side_apply;   /* Workload status is applied (else merge patches) */
};
void wlc_get_stats(const struct wlc *c, struct wlc_stats *out);

#endif
