/*
 * sim_kueue: the devhub's Kueue emulator (`--kueue`, the hub instance). An
 * in-process client of the hub API (devhub/sim_api.h) that follows Kueue's
 * observable behaviour (docs/devhub.md, docs/design.md §4):
 *
 *  - batch/v1 Jobs and kubeflow.org/v1 PyTorchJobs (when served) labelled
 *    kueue.x-k8s.io/queue-name are created suspended (Kueue's mutating job
 *    webhooks, through hub_set_admit), kept suspended until admitted and get a
 *    Workload in the Workload CRD's storage version (v1beta2 or v1beta1),
 *    named like Kueue (simkueue_workload_name), with a controller
 *    ownerReference to the job, the label kueue.x-k8s.io/job-uid,
 *    spec.queueName, spec.podSets (simkueue_podsets), spec.active and the
 *    priority from the job label kueue.x-k8s.io/priority-class through its
 *    WorkloadPriorityClass (v1beta2 priorityClassRef; v1beta1
 *    priorityClassSource + priorityClassName);
 *  - quota reservation per ClusterQueue (from the LocalQueue named by
 *    spec.queueName in the workload's namespace): pending workloads by
 *    priority then creation time, StrictFIFO (the head blocks) or
 *    BestEffortFIFO (default), flavors in resource-group order
 *    (simkueue_assign). Reserving writes status.admission and
 *    QuotaReserved=True/QuotaReserved; the ClusterQueue's admission checks
 *    (v1beta1 spec.admissionChecks or spec.admissionChecksStrategy, onFlavors
 *    honoured) are added as Pending; a workload that cannot be placed gets
 *    QuotaReserved=False/Pending with the reason as message;
 *  - checks: all Ready (or none) -> Admitted=True/Admitted and the job is
 *    unsuspended with each podSet's flavor nodeLabels merged into the pod
 *    template's nodeSelector and the label kueue.x-k8s.io/podset; Retry ->
 *    evicted (Evicted/AdmissionCheck, QuotaReserved=False, Admitted=False,
 *    admission removed, every check reset to Pending with retryCount+1) and
 *    requeued; Rejected -> spec.active=false and evicted (Evicted/Deactivated),
 *    the job stays suspended;
 *  - preemption within a ClusterQueue (spec.preemption.withinClusterQueue
 *    LowerPriority, LowerOrNewerEqualPriority or Any): a pending workload that
 *    does not fit evicts the fewest reserved workloads of lower priority
 *    (simkueue_victims) with Evicted/Preempted + Preempted/InClusterQueue;
 *    their jobs are suspended again and the injected nodeSelector removed;
 *  - a finished job (Job Complete/Failed, PyTorchJob Succeeded/Failed) marks
 *    its workload Finished (Succeeded/Failed), which releases the quota;
 *  - ClusterQueue status (pendingWorkloads, reservingWorkloads,
 *    admittedWorkloads, flavorsReservation, flavorsUsage, Active) and
 *    LocalQueue status (the three counts, Active) are kept current; quota
 *    changes re-run admission (everything is level-triggered).
 *
 * Not emulated: cohorts and borrowing, fair sharing, partial admission,
 * TAS, requeue backoff, the kueue.x-k8s.io/resource-in-use finalizer (job
 * deletion removes the Workload through the hub's ownerReference GC),
 * podSetUpdates of checks, MultiKueue dispatching.
 *
 * Reconciliation polls hub_rv() every `interval` seconds and does a pass
 * when anything changed, until a pass writes nothing. A pass costs what
 * changed, not what exists: the emulator keeps copies of the collections it
 * reads (devhub/sim_watch.h, in-process watches) and indexes over them
 * (workload -> job, ClusterQueue and LocalQueue -> their workloads), and
 * looks only at the jobs and workloads that changed, and runs admission
 * (sync of quota, preemption, status) only for the ClusterQueues and
 * LocalQueues whose workloads changed. A change of a ClusterQueue's,
 * LocalQueue's or ResourceFlavor's spec, a new watch, or a failed write
 * makes the next pass look at everything, as every pass used to.
 */
#ifndef KKS_DEVHUB_SIM_KUEUE_H
#define KKS_DEVHUB_SIM_KUEUE_H

#include <ev.h>
#include <jansson.h>

#include "devhub/hub.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

struct simkueue;

struct simkueue_opts {
    struct ev_loop *loop;    /* borrowed, required */
    struct hub *hub;         /* borrowed, required */
    const struct logger *lg; /* borrowed, may be NULL */
    double interval;         /* poll period in seconds (<= 0: 0.05) */
};

int simkueue_start(struct simkueue **out, const struct simkueue_opts *o, struct err *e);
void simkueue_stop(struct simkueue *k); /* NULL ok */
/* One reconcile pass now; the number of writes it made. */
int simkueue_sync(struct simkueue *k);
/* Make the next pass look at everything (rebuild the indexes, every object
 * dirty), as if it were the first. */
void simkueue_resync(struct simkueue *k);
/* For tests: 0 when the incrementally maintained indexes equal a
 * recomputation from the copies; -EINVAL with *why = new message naming the
 * first index that differs. */
int simkueue_check_index(struct simkueue *k, char **why);

/* ---- pure parts (exposed for tests) ------------------------------------ */

/* Kueue's workload name: lower(kind) "-" name, cut to 247 bytes, "-", then
 * the first 5 hex digits of SHA-1(kind "\n" group "\n" name "\n" uid).
 * New string. */
char *simkueue_workload_name(const char *kind, const char *group, const char *name,
                             const char *uid);

/* spec.podSets of a job (borrowed; kind "Job" or "PyTorchJob"): a Job gives
 * [{name: main, count: min(parallelism, completions), template}]; a
 * PyTorchJob one podSet per replica type, Master then Worker then any other
 * in name order, named in lower case, count = replicas (default 1).
 * New reference; an empty array when the job has no pod template. */
json_t *simkueue_podsets(const json_t *job, const char *kind);

/*
 * Assign flavors to `podsets` (array of {name, count, template}) in ClusterQueue
 * `cq` (borrowed), given `flavors` (object ResourceFlavor name -> object) and
 * `usage` (object flavor -> resource list already reserved; may be NULL).
 * Per podSet and resource group, the first flavor of the group (in order)
 * that exists, whose nodeLabels (as a node's labels) satisfy the podSet's
 * nodeSelector and required node affinity on the group's label keys (the keys
 * of its flavors' nodeLabels; other keys are the scheduler's business, and a
 * term left without expressions matches any flavor, as in Kueue's flavor
 * assigner), whose NoSchedule/NoExecute taints the podSet tolerates and where every
 * requested resource of the group fits under nominalQuota minus usage
 * (including the earlier podSets of the same workload).
 * 0 with *out = new podSetAssignments array [{name, flavors, resourceUsage,
 * count}]; -ENOSPC with *why = new message when it does not fit.
 */
int simkueue_assign(const json_t *cq, const json_t *flavors, const json_t *podsets,
                    const json_t *usage, json_t **out, char **why);

/* Add (sign 1) or remove (sign -1) an admission's podSetAssignments to a
 * usage object (flavor -> resource list). */
void simkueue_usage_add(json_t *usage, const json_t *assignments, int sign);

/* Sort an array of Workloads in queue order: spec.priority descending, then
 * metadata.creationTimestamp, then name. In place. */
void simkueue_sort_queue(json_t *wls);

/*
 * Victims for preemption: the workload with `podsets` and `priority`, created at
 * `created` (RFC 3339), does not fit in cq. `reserved` is the array of workloads
 * holding quota in cq (with status.admission), `usage` their usage. Candidates
 * are those the cq's withinClusterQueue policy allows (LowerPriority: lower
 * priority; LowerOrNewerEqualPriority: also equal priority and newer; Any:
 * all), taken lowest priority first, then most recently reserved, until the
 * workload fits; then those not needed are given back. New array of borrowed
 * members' copies (json_incref'd) or NULL when preemption cannot make room
 * (or the policy is Never/absent).
 */
json_t *simkueue_victims(const json_t *cq, const json_t *flavors, const json_t *podsets,
                         long long priority, const char *created, const json_t *reserved,
                         const json_t *usage);

#endif
