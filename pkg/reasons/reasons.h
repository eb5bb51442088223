/*
 * reasons: every Event reason and condition reason kueue-ks writes, in one
 * place, so code that reacts to one (tests, the relayed Kueue reasons) names
 * the same constant as the code that emits it: renaming a reason cannot
 * silently break a consumer. The workload controller's metrics and log lines
 * come from the decision's typed outcome (controllers/workload/wl.h), not from
 * these strings. Users and alerts match these strings: changing one is an API
 * change.
 */
#ifndef KKS_PKG_REASONS_REASONS_H
#define KKS_PKG_REASONS_REASONS_H

/* ---- Events of the workload controller (on the hub job and/or Workload) ---- */
#define REASON_EVICTED          "Evicted"         /* the placement was withdrawn */
#define REASON_ASSIGNED_CLUSTER "AssignedCluster" /* a worker cluster was chosen */
#define REASON_UNKNOWN_JOB_KIND "UnknownJobKind"  /* the owner's kind cannot be placed */
#define REASON_NO_CLUSTER_FITS  "NoClusterFits"   /* fits no cluster even empty: rejected */
#define REASON_WORKER_LOST      "WorkerLost"      /* the placed cluster is gone: retry */
/* the copy's pods stayed unschedulable on the worker past --unschedulable-timeout: retry
 * elsewhere, the cluster excluded for a while (kueue-ks.io/excluded-clusters) */
#define REASON_UNSCHEDULABLE_ON_WORKER "UnschedulableOnWorker"
#define REASON_DISPATCHED              "Dispatched"    /* the worker copy exists */
#define REASON_COPY_CONFLICT           "CopyConflict"  /* a foreign object holds the copy's name */
#define REASON_WRITE_REJECTED          "WriteRejected" /* a write refused: 400/403/413/422 */
/* Kueue holds the job (no reservation, missing queue, deactivated): Kueue's
 * reason and the per-cluster fit (docs/design.md §9) */
#define REASON_NOT_ADMITTED "NotAdmitted"
/* placed on capacity; pod (anti-)affinity / topology spread left to the worker's scheduler */
#define REASON_CONSTRAINTS_LEFT_TO_WORKER "ConstraintsLeftToWorker"
/* the job's or its ClusterQueue's kueue-ks.io/cluster-selector does not parse */
#define REASON_INVALID_CLUSTER_SELECTOR "InvalidClusterSelector"

/* ---- Events of the quota controller (on the ClusterQueue) ------------------- */
#define REASON_QUOTA_UPDATED       "QuotaUpdated"
#define REASON_BAD_CLUSTER_METRICS "BadClusterMetrics"
#define REASON_QUOTA_CONFIG        "QuotaConfig"

/* ---- condition reasons ------------------------------------------------------ */
/* Workload condition ClusterAssigned */
#define REASON_CLUSTER_ASSIGNED "ClusterAssigned"
#define REASON_NO_RESERVATION   "NoReservation"
/* AdmissionCheck condition Active */
#define REASON_ACTIVE             "Active"
#define REASON_NO_USABLE_CLUSTERS "NoUsableClusters"
/* ClusterMetrics condition Ready, written by the agent */
#define REASON_AGENT_REPORTING "AgentReporting"

#endif
