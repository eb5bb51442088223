/*
 * reasons: every Event reason the workload controller writes, in one place
 * (docs/design.md "Events" says when each is written and on which object).
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_REASONS_H
#define KKS_CONTROLLERS_WORKLOAD_REASONS_H

/* Normal, job + Workload: placed on a cluster. */
#define WL_REASON_ASSIGNED_CLUSTER "AssignedCluster"
/* Normal, job: nodeSelector keys injected from the admitted flavors. */
#define WL_REASON_ASSIGNED_FLAVOR "AssignedFlavor"
/* Normal, job: the worker copy was created. */
#define WL_REASON_DISPATCHED "Dispatched"
/* Warning, job + Workload: no cluster fits (now, or ever), per cluster why. */
#define WL_REASON_NO_CLUSTER_FITS "NoClusterFits"
/* Normal, job: Kueue holds the job (no quota reservation, missing queue,
 * deactivated): Kueue's reason relayed, with our per-cluster fit. */
#define WL_REASON_NOT_ADMITTED "NotAdmitted"
/* Normal, job: a placement was undone (eviction, lost reservation, deactivation). */
#define WL_REASON_EVICTED "Evicted"
/* Warning, job + Workload: the cluster the job runs on is lost. */
#define WL_REASON_WORKER_LOST "WorkerLost"
/* Warning, job: a copy exists on the worker that kueue-ks did not create. */
#define WL_REASON_COPY_CONFLICT "CopyConflict"
/* Warning, job + Workload: a job kind outside the kind table. */
#define WL_REASON_UNKNOWN_KIND "UnknownJobKind"

#endif
