/*
 * wlrun: the workload controller as a manager runnable (`kueue-ks run`).
 * Prefix wlrun_. It wires the pieces of controllers/workload/ together:
 *
 *   start (while leading):
 *     1. discovery on the hub (asynchronous, pkg/kube/discovery.h): the
 *        Kueue API version (v1beta2 when served, else v1beta1; waits while
 *        Kueue is not installed), which job kinds of the kind table besides
 *        batch/v1 Job are served (e.g. PyTorchJob; 404 = not served), and
 *        the origin (the kube-system namespace's uid; 404 = "kueue-ks")
 *        unless --origin was given. Any other error (timeout, 403, 5xx) is
 *        retried with backoff, never taken as the answer: the controller
 *        stays not ready (readyz says what it waits for) until all are in;
 *        then one dry-run server-side apply to a Workload status that does
 *        not exist: 415 = the hub has no SSA (the devhub), logged once here,
 *        and Workload status is written with merge patches from the start;
 *        any other answer leaves SSA on (a later 415 still switches);
 *     2. hub informers: Workloads (owner-uid index), AdmissionChecks,
 *        ResourceFlavors, ClusterMetrics, one per served job kind;
 *     3. direct transport: the workers (workers.h: --worker flags and worker
 *        Secrets in the operator's namespace, one agent + copies informers
 *        each);
 *     4. the wlc_ driver (controller.h) with events (evrec) on the hub;
 *        handlers map changes to Workload keys (what the start-up lists
 *        deliver before the hub stores have synced queues nothing: one pass
 *        over every Workload, wlc_enqueue_all, follows the sync); a
 *        ClusterMetrics change
 *        queues only the Workloads it can affect (wlc_on_cluster), an
 *        AdmissionCheck, ResourceFlavor or worker change every Workload;
 *        both re-sync the AdmissionChecks; a deleted hub job or a copy event
 *        runs the orphan check of that key (wlc_gc_key), a reconnected
 *        worker the orphan sweep (wlc_gc) soon;
 *     5. per worker a BindingPolicy kueue-ks-<c> (created when missing);
 *        per (worker, namespace of a hub job) the Namespace (created when
 *        missing, asynchronously, from the job handler);
 *     6. a periodic pass (gc_interval_s): AdmissionCheck sync,
 *        BindingPolicies, the Workloads of clusters whose usability changed
 *        with time (wlc_check_clusters); the orphan sweep when one is
 *        pending (wlc_gc_pending) and every WLRUN_GC_SWEEP_TICKS passes;
 *     hub Jobs, Workloads, AdmissionChecks, ClusterQueues and worker copies
 *     are cached without managedFields and the last-applied annotation
 *     (store_project_lean);
 *     7. readyz check "workload-informers-synced".
 *   Kinds outside the table: when a Workload's owner is one, its
 *   group-version is discovered (once; again after a minute when not
 *   served), a generic kind entry is made (kinds.h kind_dynamic_new) and
 *   watched on the hub and, direct transport, on the workers
 *   (workers_add_kind); then every Workload is re-queued.
 *   Nothing calls the API synchronously from a reconcile: every write is a
 *   callback-completed request on the loop.
 *
 * Teardown, in this order (the driver must outlive the clients' pending
 * calls, the informers must die before the hub client):
 *   mgr_run() returns -> wlrun_release(r) -> mgr_free(m) -> wlrun_free(r).
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_WLRUN_H
#define KKS_CONTROLLERS_WORKLOAD_WLRUN_H

#include <stdbool.h>
#include <stddef.h>

#include "pkg/json/jsonx.h"
#include "pkg/manager/manager.h"
#include "pkg/util/err.h"

/* Workloads reconciled at once by default: a pass waits on its writes, so this many
 * Workloads' round trips overlap. More did not dispatch faster on the real stack while the
 * status return writes the Workload on every change of a copy: they then compete with the
 * placements for the hub's Workload writes (docs/performance.md, "Dispatch"). */
#define WLRUN_DEFAULT_CONCURRENCY 4

struct wlrun_config {
    const char *transport; /* "direct" (default when NULL) or "kubestellar" */
    const char *origin;    /* NULL/"" = the hub's kube-system uid, else "kueue-ks" */
    bool delete_on_completion;
    double worker_lost_timeout_s;     /* 0 = 300 */
    double unschedulable_timeout_s;   /* 0 = 300 */
    double unschedulable_exclusion_s; /* 0 = 600 */
    const char *placement;            /* "spread" (default when NULL) or "binpack" */
    bool allow_insecure_workers;
    bool http1_only;            /* worker clients: --http2=false */
    const char *ac_controller;  /* must be ACC_CONTROLLER_NAME (NULL = it) */
    const char *const *workers; /* "NAME=KUBECONFIG_PATH" entries (borrowed) */
    size_t n_workers;
    int concurrency; /* Workloads reconciled at once, 0 = WLRUN_DEFAULT_CONCURRENCY */
    /* --packed-cache (kueue-ks run's default): hub Workloads, hub jobs and worker copies kept
     * packed (pkg/json/jpack.h, store.h): about 5x less memory with 10,000 workloads, a few
     * percent more CPU per dispatch (docs/performance.md "Cached object size") */
    bool packed_cache;
    /* --job-metadata-through-status=false: kueue-ks's labels and annotations on hub batch/v1
     * Jobs go through the job itself, not its status subresource (wlx.h, job_meta_via_status) */
    bool job_meta_through_job;
    double gc_interval_s;         /* 0 = 30 */
    double metrics_stale_after_s; /* 0 = the controller's default (120) */
    double probe_interval_s;      /* worker reachability probe, 0 = 5 */
    double agent_min_interval_s;  /* 0 = the agent's default */
    jx_lifetime_fn json_lifetime; /* main's JSON allocator hint (jsonx.h); may be NULL */
    double discovery_backoff_s;   /* first retry of a start-up discovery GET, 0 = 1 s */
};

struct wlrun;

/*
 * Check the configuration (transport, placement, controller name, every
 * --worker spec: its kubeconfig is loaded and must be secure) and create the
 * runner. 0 or -EINVAL / the loader's code with a message for the user.
 */
int wlrun_new(const struct wlrun_config *cfg, struct wlrun **out, struct err *e);
/* The runnable to register with mgr_add_runnable (ud = r). */
void wlrun_runnable(struct wlrun *r, struct mgr_runnable *out);
/* Free informers, workers (their clients) and the event recorder. Call after
 * mgr_run() returned and before mgr_free(). NULL is fine. */
void wlrun_release(struct wlrun *r);
/* Free the rest (the driver). Call after mgr_free(). NULL is fine. */
void wlrun_free(struct wlrun *r);

struct wlrun_stats {
    bool started;
    bool synced;
    const char *kueue_version; /* borrowed, NULL before discovery */
    const char *origin;        /* borrowed, NULL before discovery */
    size_t hub_kinds;          /* job kinds watched on the hub */
    unsigned binding_policies; /* BindingPolicies created or found */
    bool server_side_apply;    /* Workload status applied (SSA): off after a 415 */
    size_t workers_reachable;  /* direct transport: workers reachable now */
    unsigned waited_passes;    /* cluster and orphan passes put off: the hub not synced yet */
};
void wlrun_get_stats(const struct wlrun *r, struct wlrun_stats *out);

#endif
