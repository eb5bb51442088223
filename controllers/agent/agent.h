/*
 * agent: the ClusterMetrics agent for one worker cluster (docs/design.md §10), on
 * the worker client's libev loop. `kueue-ks agent` runs one; in direct mode
 * the operator runs one per registered worker, in-process.
 *
 * It watches the worker's Nodes, Pods and the worker copies of hub Jobs
 * (informers whose stores keep only what is used: node labels, taints,
 * unschedulable, allocatable and Ready; per pod a compact record, podrec.h:
 * its node, whether it counts there, its effective requests/limits computed
 * once per change by podres_pod(), its controller Job's uid and progress,
 * about 300 bytes cached; the Jobs carrying AGENT_HUB_WORK_LABEL, indexed by
 * uid and by the no-pods verdict: with agent_opts.cache (the operator) lean,
 * store_project_lean, the informer the workload controller reads its copies
 * from; in the agent's own cache (`kueue-ks agent`) only the fields it reads)
 * and
 * maintains ClusterMetrics <cluster>
 * (galaxy.kubestellar.io/v1alpha1, cluster-scoped) through the hub client:
 *
 *   status.nodes[]    one entry per node, sorted by name:
 *                       {name, allocatableResources, allocatedResourceRequests,
 *                        allocatedResourceLimits, managedResourceRequests,
 *                        taints, labels, unschedulable, ready}
 *                     quantities summed exactly and printed canonically;
 *                     requests/limits sum the pods bound to the node that are
 *                     not terminal (podres_pod_counts); managedResourceRequests
 *                     is the part of allocatedResourceRequests that belongs to
 *                     hub workloads: pods whose controller is a batch/v1 Job
 *                     labelled AGENT_HUB_WORK_LABEL (a copy of a hub job, made
 *                     by kueue-ks's direct syncer or by KubeStellar),
 *                     and pods labelled AGENT_JOBSET_LABEL or
 *                     AGENT_KUBEFLOW_LABEL (JobSet / Kubeflow children, which
 *                     the agent cannot trace to their copy: assumed to be
 *                     hub work). The quota controller adds back a queue's
 *                     reservations only up to it (aggregate.h). It is left
 *                     out while the Job list has not arrived (the first
 *                     write waits up to 5 s for it; a refused list, e.g. an
 *                     older RBAC role, leaves it out for good, and the
 *                     controller then adds back whole reservations). Every
 *                     other key is always present ({} / [] / false when empty);
 *   status.unschedulableJobs[]  per worker copy of a hub Job (a Job carrying
 *                     AGENT_HUB_WORK_LABEL) that makes no progress:
 *                     {namespace, name, uid (the copy's), cause, reason,
 *                     message, since, pods}, sorted by namespace/name (at
 *                     most 256). cause, in this order of precedence:
 *                     "unschedulable": a pod is Pending, unbound, and its
 *                       PodScheduled condition is False with reason
 *                       Unschedulable (what kube-scheduler writes); reason,
 *                       message (first 1024 bytes) and since
 *                       (lastTransitionTime) are those of the copy's
 *                       earliest such pod, pods how many there are;
 *                     "not-started": no pod of the copy is or was Running
 *                       (phase Running, Succeeded or Failed) and some are
 *                       bound, still Pending, with a container (init
 *                       containers first) whose start failed: waiting
 *                       reason ErrImagePull, ImagePullBackOff,
 *                       ErrImageNeverPull, InvalidImageName,
 *                       CreateContainerConfigError, CreateContainerError or
 *                       RunContainerError (a start under way:
 *                       ContainerCreating, PodInitializing, no status, is
 *                       never reported); reason and message are that
 *                       waiting state of the earliest such pod, since when
 *                       it was scheduled (PodScheduled=True
 *                       lastTransitionTime, else its creationTimestamp);
 *                     "no-pods": the copy has no pod in the worker's store
 *                       and its status counts none although the Job
 *                       controller started it (status.startTime set; not
 *                       suspended, not Complete/Failed, active, ready,
 *                       succeeded, failed and terminating all 0): reason
 *                       "NoPods", since its startTime (set again at each
 *                       resume), pods 0 (the worker's Job
 *                       controller cannot create them: ResourceQuota,
 *                       admission refusal; the FailedCreate Event on the
 *                       worker says which).
 *                     A copy with a Running pod is never "not-started" or
 *                     "no-pods": slow is not stuck. The workload controller
 *                     moves a copy that stays there past
 *                     --unschedulable-timeout (controllers/workload/wl.h).
 *                     Empty while the Job list is not known;
 *   status.countedJobs[]  the change since the agent's previous write: the
 *                     worker copies of hub Jobs (AGENT_HUB_WORK_LABEL) whose
 *                     count of pods included in the same write's
 *                     allocatedResourceRequests differs from the count the
 *                     hub last received from this agent (as of its last
 *                     successful full write; never listed: 0): {uid, pods
 *                     (the count now)}, sorted by uid, at most
 *                     AGENT_COUNTED_MAX (the rest go in the next write,
 *                     --min-interval later; the lowest uids first). A copy
 *                     no longer counted is dropped, not listed, and makes a
 *                     full write (the hub's list may hold it);
 *                     a status made anew (object created, status replaced)
 *                     gets every copy again; the counts first known (the
 *                     Job list in) are taken as the hub's, not listed
 *                     (counted_seed); a heartbeat leaves the hub's
 *                     list (nothing changed: its counts still hold). A copy
 *                     whose uid is not canonical (pkg/util/uid.h) is never
 *                     listed: the workload controller keeps its reservation
 *                     by its other rules (placement.h). Not counted: pods
 *                     unbound, terminal, on a node not reported, or not of
 *                     such a copy (JobSet/Kubeflow children included). Empty
 *                     while the Job list is not known;
 *   status.nodeCount  number of nodes;
 *   status.lastUpdated  RFC 3339 time of the write;
 *   status.conditions  [{type: Ready, status: "True", reason: AgentReporting,
 *                        message, lastTransitionTime}].
 *
 * Writes are merge patches on the status subresource. When the object does
 * not exist (404) it is created (POST, empty spec, label
 * app.kubernetes.io/managed-by=kueue-ks), then the status is patched.
 *
 * When to write:
 *   - only after both informers have synced, and only when status.nodes or
 *     unschedulableJobs differ from what was last written or countedJobs has
 *     a change to list (a Node heartbeat or a pod status change that moves no
 *     number writes nothing; a write that listed changes needs no second one);
 *   - at most once per min_interval: the first change after a quiet period
 *     is written at once (on the next loop iteration, so one burst of events
 *     is one write); changes within the interval are batched into one write
 *     at the interval's end; one write in flight at a time;
 *   - heartbeat: when nothing changed for heartbeat_s, a patch of
 *     status.lastUpdated only, so consumers that drop stale clusters
 *     (--metrics-stale-after, 60 s) keep this one while the agent runs;
 *   - a failed write is retried after a backoff (1 s doubling to 30 s, never
 *     sooner than min_interval) with the current data.
 *
 * Bad data never stops the agent: a pod whose resources do not parse counts
 * as requesting nothing, an unparseable allocatable value is left out; both
 * are logged as warnings naming the object and field.
 */
#ifndef KKS_CONTROLLERS_AGENT_AGENT_H
#define KKS_CONTROLLERS_AGENT_AGENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "pkg/json/jsonx.h"
#include "pkg/kube/cache.h"
#include "pkg/kube/client.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

#define AGENT_GROUP             "galaxy.kubestellar.io"
#define AGENT_VERSION           "v1alpha1"
#define AGENT_RESOURCE          "clustermetrics"
#define AGENT_KIND              "ClusterMetrics"
#define AGENT_DEFAULT_MIN_S     5.0
#define AGENT_DEFAULT_HEARTBEAT 20.0
/* The label every copy of a hub job carries on a worker, whatever the transport:
 * kueue-ks places hub jobs with it and both the direct syncer and KubeStellar
 * copy labels down (kueue-ks.io/origin-uid is set by the direct syncer only). */
#define AGENT_HUB_WORK_LABEL "kubestellar.io/cluster"
/* status.unschedulableJobs[].cause */
#define AGENT_CAUSE_UNSCHEDULABLE "unschedulable"
#define AGENT_CAUSE_NOT_STARTED   "not-started"
#define AGENT_CAUSE_NO_PODS       "no-pods"
#define AGENT_JOBSET_LABEL        "jobset.sigs.k8s.io/jobset-name"
#define AGENT_KUBEFLOW_LABEL      "training.kubeflow.org/job-name"
/* status.countedJobs entries per write (the first by uid; the rest go in later writes) */
#define AGENT_COUNTED_MAX 1000

struct agent;

struct agent_opts {
    double min_interval_s;   /* 0 = 5 s */
    double heartbeat_s;      /* 0 = 20 s; < 0 = no heartbeat */
    const struct logger *lg; /* borrowed, may be NULL */
    /* Called on the loop after the computed status changed (also without a hub
     * client); read it with agent_metrics(). May be NULL. */
    void (*on_change)(void *ud, struct agent *a);
    void *on_change_ud;
    /* Informer reconnect backoff (0 = the informer's default; tests shorten it). */
    double informer_backoff_s;
    /* How long the first write waits for the Job list (0 = 5 s; tests shorten it). */
    double jobs_grace_s;
    /* status.countedJobs entries per write (0 or more than AGENT_COUNTED_MAX =
     * AGENT_COUNTED_MAX; tests lower it). */
    size_t counted_max;
    /* The informer cache over the worker client (pkg/kube/cache.h; borrowed, must outlive
     * the agent), shared with the process's other users of that client: the operator's
     * workload controller reads the worker's Jobs from the same informer (label
     * AGENT_HUB_WORK_LABEL, store_project_lean). NULL: the agent makes its own
     * (`kueue-ks agent`), where its Jobs keep only the fields it reads. */
    struct kcache *cache;
    /* Tells the JSON allocator that a pod's record (podrec.h, kept as long as the pod) is
     * being made (jsonx.h). NULL: nothing to tell. */
    jx_lifetime_fn json_lifetime;
};

struct agent_stats {
    uint64_t computes; /* status recomputations */
    uint64_t writes;   /* successful status patches (heartbeats included) */
    uint64_t heartbeats;
    uint64_t creates;  /* ClusterMetrics objects created */
    uint64_t failures; /* failed writes */
    uint64_t bad_pods; /* pods whose resources did not parse (cumulative) */
    /* The smallest interval in seconds between the starts of two consecutive
     * status writes (monotonic clock, as the agent spaces them; never below
     * min_interval), 0 before the second write. */
    double min_write_gap_s;
};

/*
 * Create an agent (not started). `worker` (borrowed) is the cluster to
 * watch; `hub` (borrowed, may equal `worker`, or NULL to compute without
 * writing) is where ClusterMetrics `cluster` is written. Both clients must
 * run on the same loop and outlive the agent. `opts` may be NULL.
 * 0, or -EINVAL (empty cluster name, clients on different loops) with a
 * message.
 */
int agent_new(struct kube_client *worker, struct kube_client *hub, const char *cluster,
              const struct agent_opts *opts, struct agent **out, struct err *e);
/* Stop and free. Call before freeing the clients. NULL is fine. */
void agent_free(struct agent *a);

/* Start the informers (the first write follows their sync). 0, -EALREADY. */
int agent_start(struct agent *a, struct err *e);
/* Stop the informers and timers and cancel an in-flight write. The computed
 * status is kept; agent_start() may be called again. */
void agent_stop(struct agent *a);

/*
 * Tell the agent whether the cluster it watches answers (e.g. from a /version
 * probe). While it does not, heartbeats stop, so ClusterMetrics.lastUpdated
 * ages and consumers (quota, placement) drop the cluster after their stale
 * window instead of trusting cached data; when it answers again lastUpdated is
 * refreshed at once.
 */
void agent_set_source_reachable(struct agent *a, bool reachable);

/* True once the node and pod informers have delivered their first list (the
 * Job list is not waited for: see managedResourceRequests). */
bool agent_synced(const struct agent *a);

/*
 * The current data as a ClusterMetrics object (new reference), as the agent
 * would write it: apiVersion, kind, metadata.name, status with nodes,
 * nodeCount, lastUpdated = now and the Ready condition; computed from the
 * informers' stores at the time of the call; its countedJobs lists every
 * counted copy (against nothing: at most agent_opts.counted_max). NULL before both informers
 * have synced. For the quota controller in direct mode.
 */
json_t *agent_metrics(struct agent *a);
/* The number of nodes of the last computed data (0 before the first compute): what
 * on_change's observers read without computing the status again. */
size_t agent_node_count(const struct agent *a);

/* The cluster name (borrowed). */
const char *agent_cluster(const struct agent *a);
void agent_stats(const struct agent *a, struct agent_stats *out);

/*
 * The status.nodes array for the given node and pod lists (JSON arrays of
 * Node and Pod objects, borrowed), computed as the agent does. New
 * reference. Bad data is skipped; each problem adds a line to `warnings`
 * (a JSON array, may be NULL). Pure: for tests and tools.
 */
json_t *agent_compute_nodes(json_t *nodes, json_t *pods, json_t *warnings);
/* The same with the worker's Jobs (array of Job objects, borrowed): a pod
 * whose controller is one of them that carries AGENT_HUB_WORK_LABEL counts
 * in managedResourceRequests. jobs NULL = not known: the field is left out.
 * agent_compute_nodes() is this with an empty array. */
json_t *agent_compute_nodes_jobs(json_t *nodes, json_t *pods, json_t *jobs, json_t *warnings);
/* status.countedJobs for the given lists (as agent_compute_nodes_jobs; jobs NULL: empty) as
 * an agent's first write lists it: every counted copy (at most AGENT_COUNTED_MAX). New
 * reference. */
json_t *agent_compute_counted(json_t *nodes, json_t *pods, json_t *jobs);
/* status.unschedulableJobs for the given pods and the worker's Jobs (as
 * above, whole Job objects: their status says which have no pods; borrowed),
 * computed as the agent does. New reference. */
json_t *agent_compute_unschedulable(json_t *pods, json_t *jobs);

#endif
