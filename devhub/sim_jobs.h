/*
 * sim_jobs: the devhub's job runner (`--run-jobs`, worker instances). It
 * plays the Job controller, the Kubeflow training operator (PyTorchJob),
 * kube-scheduler and kubelets for a devhub, as an in-process client of the
 * hub API (devhub/sim_api.h):
 *
 *  - unsuspended batch/v1 Jobs get Pods (controller ownerReference, labels
 *    batch.kubernetes.io/job-name, job-name, batch.kubernetes.io/controller-uid,
 *    controller-uid; Indexed jobs the completion-index annotation and label),
 *    up to spec.parallelism at once until spec.completions succeeded; status
 *    startTime, active, ready, succeeded, failed, terminating,
 *    uncountedTerminatedPods {}, completedIndexes (Indexed), completionTime
 *    and the conditions SuccessCriteriaMet then Complete (both True, as
 *    Kubernetes >= 1.31 writes them); a suspended Job gets no pods (active
 *    ones are deleted) and the Suspended condition (JobSuspended; on resume
 *    False/JobResumed);
 *  - kubeflow.org/v1 PyTorchJobs (only when that API is served) get one Pod
 *    per replica (<name>-master-0, <name>-worker-<i>, labels
 *    training.kubeflow.org/job-name, replica-type, replica-index, job-role,
 *    operator-name), spec.runPolicy.suspend honoured, status conditions
 *    Created / Running / Succeeded (reasons PyTorchJobCreated,
 *    PyTorchJobRunning, PyTorchJobSucceeded; Suspended/PyTorchJobSuspended),
 *    replicaStatuses, startTime, completionTime. The job succeeds when all
 *    its pods have succeeded;
 *  - every unbound Pending pod is bound (spec.nodeName) to the first Node,
 *    in name order, with room: requests (sim_res) plus one "pods" slot
 *    against allocatable minus the requests of bound non-terminal pods,
 *    nodeSelector and required node affinity matched (pkg/sched/affinity, the
 *    scheduler's rules), NoSchedule/NoExecute taints tolerated, nodes with
 *    spec.unschedulable skipped. A pod that fits nowhere stays Pending with
 *    PodScheduled=False/Unschedulable and a scheduler-like message, and is
 *    retried on every change;
 *  - bound pods go Running (startTime, conditions, containerStatuses) and
 *    Succeeded after their duration (simjobs_pod_duration) times time_scale.
 *
 * Faults a test can set on a worker, as a real cluster would show them:
 *  - a Namespace annotated SIMJOBS_REFUSE_PODS_ANN (any value, e.g. the
 *    message of a ResourceQuota refusal): the Job runner creates no pod there
 *    (a real Job controller's creates fail: ResourceQuota, admission); the
 *    Job gets startTime, active stays 0;
 *  - a Node labelled SIMJOBS_PULL_LABEL=fail: pods bound to it stay Pending,
 *    PodScheduled=True, each container waiting with reason ErrImagePull (what
 *    a kubelet that cannot pull the image writes), and never run.
 *
 * Jobs whose spec.managedBy (PyTorchJobs: spec.runPolicy.managedBy) names
 * another controller than kubernetes.io/job-controller
 * (kubeflow.org/training-operator) are left alone, as the real controllers
 * do. On a hub (`--kueue --run-jobs`) this is what sets the Suspended
 * condition of the jobs Kueue holds.
 * Jobs deleted: their pods go through the hub's ownerReference GC.
 * Pods never fail in the simulation.
 *
 * Reconciliation is level-triggered: a timer polls hub_rv() every
 * `interval` seconds and does a full pass when anything changed or a pod's
 * end time came; passes repeat until one writes nothing.
 */
#ifndef KKS_DEVHUB_SIM_JOBS_H
#define KKS_DEVHUB_SIM_JOBS_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>

#include "devhub/hub.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

#define SIMJOBS_REFUSE_PODS_ANN "devhub.kueue-ks.io/refuse-pods"
#define SIMJOBS_PULL_LABEL      "devhub.kueue-ks.io/image-pull"

struct simjobs;

struct simjobs_opts {
    struct ev_loop *loop;    /* borrowed, required */
    struct hub *hub;         /* borrowed, required */
    const struct logger *lg; /* borrowed, may be NULL */
    double default_duration; /* seconds when a pod names none (<= 0: 10) */
    double time_scale;       /* multiplies every duration (<= 0: 1) */
    double interval;         /* poll period in seconds (<= 0: 0.05) */
};

/* Start the runner on o->loop. 0, or -EINVAL with a message. */
int simjobs_start(struct simjobs **out, const struct simjobs_opts *o, struct err *e);
/* Stop its timer and free it. NULL ok. */
void simjobs_stop(struct simjobs *s);
/* Run one reconcile pass now; returns the number of writes it made. */
int simjobs_sync(struct simjobs *s);

/* ---- pure parts (exposed for tests) ------------------------------------ */

/*
 * Parse a duration: Go-style "50s", "1m30s", "1.5h", "250ms", or a plain
 * number of seconds "10" / "2.5" (a trailing "s" optional). 0 with *out in
 * seconds, -EINVAL for anything else (empty, negative, unknown unit, junk).
 */
int simjobs_parse_duration(const char *s, double *out);

/*
 * The run time of a pod: the longest duration found in any container's
 * command + args, where a word after "sleep" is a duration or number of
 * seconds, and any other word that is a duration with a unit ("50s", "2m")
 * counts too. Words are split on blanks and ; & | ( ) so "sh -c 'sleep 5; x'"
 * works. def when nothing is found.
 */
double simjobs_pod_duration(const json_t *podspec, double def);

/*
 * Choose a node for `pod` (borrowed): the first of `nodes` (array of Node
 * objects, borrowed) in array order that is schedulable, matches
 * spec.nodeSelector, tolerates its taints and has room: `used` maps node
 * name -> resource list already requested there (including "pods"). Returns
 * the chosen node's name (borrowed from nodes) or NULL; then *why (optional)
 * receives a NEW string like the scheduler's "0/3 nodes are available: 3
 * Insufficient cpu."
 */
const char *simjobs_place(const json_t *pod, const json_t *nodes, const json_t *used, char **why);

#endif
