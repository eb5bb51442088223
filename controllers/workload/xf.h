/*
 * xf: pure JSON transforms of job objects (no I/O, no clock).
 *
 * (a) Placement (xf_place): set the label kubestellar.io/cluster=<c> and merge
 *     each admitted flavor's nodeLabels into the nodeSelector of every pod
 *     template of the job (paths from the kind table), or, for the built-in
 *     syncer, only into the worker copy (enum xf_inject). A key the template
 *     already has is never overwritten. What was done is recorded on the job:
 *       kueue-ks.io/injected-node-selector: {"<template path>":{"k":"v"},...}
 *         exactly the keys we added (compact JSON, sorted keys);
 *       kueue-ks.io/placed-by: kueue-ks     only when WE set the cluster label
 *         (a label the user set, "pinned", carries no such annotation);
 *       kueue-ks.io/placed-for: <token>     which admission this placement
 *         belongs to (the caller's token, see wl.h), so a stale placement
 *         from an earlier admission is recognised.
 * (b) Undo (xf_unplace): remove exactly what (a) recorded: a nodeSelector key
 *     only while it still has the injected value (a user who changed it keeps
 *     the change), the cluster label only when placed-by says we set it, then
 *     the annotations. A nodeSelector left empty by the undo is removed.
 *     xf_place then xf_unplace gives back the original object, except that a
 *     user's empty "nodeSelector": {} on a template we injected into is
 *     dropped.
 * (c) Downsync (xf_downsync): the copy sent to a worker, by the KubeStellar
 *     rules (docs/design.md §6) plus ours:
 *       - metadata: uid, resourceVersion, generation, generateName,
 *         creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds,
 *         managedFields, ownerReferences, finalizers, selfLink removed; the
 *         annotation kubectl.kubernetes.io/last-applied-configuration removed, and
 *         kueue-ks.io/remote-status (the hub's record of the copy);
 *       - status removed;
 *       - batch/v1 Job: spec.selector, spec.manualSelector removed; labels
 *         controller-uid and batch.kubernetes.io/controller-uid removed from
 *         metadata.labels and spec.template.metadata.labels; annotation
 *         batch.kubernetes.io/job-tracking removed (job-name labels are kept,
 *         the name is the same on the worker);
 *       - SUSPEND RULE: the kind's suspend field is removed, so the worker copy
 *         is created unsuspended (the hub copy stays suspended because our
 *         check stays Pending, docs/design.md §4). A worker that runs Kueue suspends
 *         it again on create with its webhook (the job keeps its
 *         kueue.x-k8s.io/queue-name label, and the syncer carries the
 *         LocalQueue) and admits it against the worker's own quota; a worker
 *         without Kueue runs it at once. Either way the correct result follows
 *         from "unsuspended on the way down", so there is no per-worker switch;
 *       - managedBy: removed when it names kueue-ks's syncer
 *         (XF_MANAGED_BY) or MultiKueue, so the worker's own controller runs it;
 *       - origin labels added: app.kubernetes.io/managed-by=kueue-ks,
 *         kueue-ks.io/origin=<origin>, kueue-ks.io/origin-uid=<hub uid>.
 * (d) Status return (xf_status_return): what the hub object should show for
 *     a worker object (see the function).
 *
 * Every function that modifies takes the object to change (borrowed,
 * modified in place) or returns a new reference; inputs are never consumed.
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_XF_H
#define KKS_CONTROLLERS_WORKLOAD_XF_H

#include <jansson.h>
#include <stdbool.h>

#include "controllers/workload/kinds.h"
#include "pkg/util/err.h"

#define XF_LABEL_CLUSTER     "kubestellar.io/cluster"
#define XF_ANN_INJECTED      "kueue-ks.io/injected-node-selector"
#define XF_ANN_PLACED_BY     "kueue-ks.io/placed-by"
#define XF_ANN_PLACED_FOR    "kueue-ks.io/placed-for"
#define XF_ANN_REMOTE_STATUS "kueue-ks.io/remote-status"
#define XF_PLACED_BY_VALUE   "kueue-ks"
#define XF_LABEL_MANAGED_BY  "app.kubernetes.io/managed-by"
#define XF_MANAGED_BY_VALUE  "kueue-ks"
#define XF_LABEL_ORIGIN      "kueue-ks.io/origin"
#define XF_LABEL_ORIGIN_UID  "kueue-ks.io/origin-uid"
/* The index of a worker copies store by XF_LABEL_ORIGIN (store_index_by_label): the Job
 * store also holds other hub-work Jobs (workers.h); store_by_index(.., origin) lists ours. */
#define XF_INDEX_ORIGIN "copies/origin"
/* spec.managedBy value of a hub job whose status the syncer mirrors continuously. */
#define XF_MANAGED_BY "kueue-ks.io/syncer"

/* Where xf_place puts the admitted flavors' node labels. */
enum xf_inject {
    /* Into the job's own pod templates: a transport that copies the hub object as it is
     * (KubeStellar's BindingPolicies) carries them to the worker. */
    XF_INJECT_SPEC,
    /* Recorded in XF_ANN_INJECTED only: xf_downsync adds them to the worker copy. The hub
     * job's spec is left alone, so the placement is a metadata-only patch, which goes
     * through the Job's /status (no admission webhook, no spec update on the hub). */
    XF_INJECT_COPY,
};

/*
 * (a) Place `job` (modified in place) on `cluster`. `podset_labels` is an
 * object {"<pod set>": {"key": "value", ...}} (the union of the admitted
 * flavors' nodeLabels per pod set; NULL or a missing pod set = nothing to
 * inject); `where` says whether they go into the job's templates or only into
 * the record (both record the keys a template lacks; for the copy the record
 * is made afresh, and an XF_ANN_INJECTED left with nothing to record is
 * removed). `placed_for` is stored in XF_ANN_PLACED_FOR (NULL: not stored).
 * Calling it again with the same inputs changes nothing.
 * Returns 1 when the job changed, 0 when it already was so placed,
 * -EEXIST when the job carries a different kubestellar.io/cluster label
 * (message names both; the job is unchanged), -EINVAL for bad arguments.
 */
int xf_place(const struct kind_def *k, json_t *job, const char *cluster,
             const json_t *podset_labels, const char *placed_for, enum xf_inject where,
             struct err *e);

/* (b) Undo what xf_place recorded. Returns 1 when the job changed, 0 when
 * there was nothing to undo. A malformed injected-node-selector annotation is
 * dropped (nothing else is touched). */
int xf_unplace(const struct kind_def *k, json_t *job);

/* The cluster this job is placed on by kueue-ks (it has XF_ANN_PLACED_FOR and
 * a cluster label): the label value, borrowed; NULL otherwise. */
const char *xf_placed_cluster(const json_t *job);
/* The user's pin: the cluster label when kueue-ks did not set it, else NULL. Borrowed. */
const char *xf_pinned_cluster(const json_t *job);

struct xf_origin {
    const char *origin;     /* kueue-ks.io/origin value, required */
    const char *origin_uid; /* the hub object's uid, required */
};

/* (c) The worker copy of hub object `hub` (new reference), or NULL with
 * -EINVAL in e when `hub` has no name or the origin is incomplete. On a job
 * kueue-ks placed (xf_placed_cluster), the keys XF_ANN_INJECTED records for
 * one of the kind's pod templates are added to that template's nodeSelector
 * where it lacks them (XF_INJECT_COPY); a record naming any other path is
 * ignored. */
json_t *xf_downsync(const struct kind_def *k, const json_t *hub, const struct xf_origin *o,
                    struct err *e);

/* True when `obj` (a worker object) carries our origin labels for `o`
 * (origin equal; origin_uid equal when o->origin_uid is non-NULL). */
bool xf_is_ours(const json_t *obj, const struct xf_origin *o);

struct xf_status {
    enum kind_result result; /* of the worker object */
    /* The whole .status the hub object should have, or NULL: leave the hub
     * status alone. New reference. */
    json_t *status;
    /* The XF_ANN_REMOTE_STATUS value (compact JSON {"cluster","active","ready",
     * "succeeded","failed"}), or NULL. Owned. */
    char *remote;
};

/*
 * (d) Status return from worker object `worker` on `cluster`.
 * Job rule (KIND_STATUS_JOB): `remote` always; `status` only when the worker
 * job is finished, or continuously when `full_mirror` (the hub job has
 * spec.managedBy XF_MANAGED_BY). The status written is valid as the Job
 * controller writes it: conditions copied, with SuccessCriteriaMet (before
 * Complete) / FailureTarget (before Failed) added when the worker lacks them;
 * active/ready/terminating 0 once finished; succeeded, failed,
 * completedIndexes, failedIndexes, startTime copied; completionTime only for
 * a Complete job (and startTime defaulted to it when missing).
 * Copy rule (other kinds): `status` = the worker's .status whole (when it
 * has one); `remote` NULL.
 * Returns 0; -EINVAL when worker is NULL. Free with xf_status_release.
 */
int xf_status_return(const struct kind_def *k, const json_t *worker, const char *cluster,
                     bool full_mirror, struct xf_status *out, struct err *e);

/* How a copy's change came from its worker's informer (workers.h on_copy, wlc_on_copy). */
enum xf_copy_change {
    XF_COPY_LISTED, /* by the informer's first list (a start's thousands, mostly unchanged) */
    XF_COPY_ADDED,  /* by a watch: added, whole (its first sight; the one a pass made may need
                       no pass, wlc_on_copy); also a shared cache's replay to a late handler */
    XF_COPY_STATUS, /* by a watch or a relist: deleted, its status changed, or no longer ours;
                       a relist's add (a view of its metadata: its status is not in it) */
    XF_COPY_OTHER,  /* by a watch or a relist: an update that left its status as it was */
};

/*
 * The remote-status a job (Job rule kinds) has from its placement on `cluster` until its copy
 * reports: the zero counts, what xf_status_return gives for a copy without a status. Written
 * with the placement, so that the new copy's first sight (a watch ADDED without a status)
 * needs no hub job write of its own: one hub write less per dispatch. Returns 1 when `job`
 * changed, 0 otherwise (other kinds, or already so).
 */
int xf_remote_status_placed(const struct kind_def *k, json_t *job, const char *cluster);
/* The hub job's XF_ANN_REMOTE_STATUS parsed ({"cluster","active","ready","succeeded",
 * "failed"}; new reference), NULL when it has none or it is not a JSON object. */
json_t *xf_remote_status(const json_t *job);
void xf_status_release(struct xf_status *s);

/*
 * (e) Stop: a merge patch for the hub object's .status (the value to put
 * under "status", new reference) that zeroes the worker activity the status
 * return mirrored into it, or NULL when nothing shows activity. Kueue
 * releases an evicted workload's quota only once the hub job is inactive
 * (its jobframework IsActive): Job rule, only when `full_mirror` (otherwise
 * active counts are never mirrored): status.active / status.ready -> 0;
 * copy rule: status.replicaStatuses.<type>.active -> 0 (Kubeflow jobs) and
 * status.replicatedJobsStatus[] with active / ready -> 0 (JobSet; the
 * whole list, a merge patch cannot address one element). Other fields are
 * left alone.
 */
json_t *xf_status_stopped(const struct kind_def *k, const json_t *hub, bool full_mirror);

#endif
