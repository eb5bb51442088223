/*
 * wl: the pure reconcile decision of the workload controller
 * (docs/design.md §4). Input: a snapshot of everything the controller knows about one
 * Workload (taken from the informer stores by the driver); output: the list
 * of writes to make. No I/O, no clock, no global state: the same snapshot
 * always gives the same actions, which is what test_wl.c checks.
 *
 * States, in the order they are checked:
 *  0. Workload or hub job gone: delete every worker copy, drop the reservation.
 *  1. Our check is not in status.admissionChecks: nothing (not ours / not yet).
 *  2. Workload Finished: drop the reservation; with delete_on_completion
 *     (direct transport) delete the worker copies, without it delete the
 *     copies on clusters other than the one the job is placed on (stale ones,
 *     e.g. on a lost worker that came back).
 *  3. No quota reservation (new, evicted, preempted, requeued), being evicted
 *     (Evicted=True while Kueue still holds the reservation: it releases it
 *     only once the hub job is inactive) or deactivated (spec.active=false):
 *     undo our placement on the job (label we set, nodeSelector keys we
 *     injected, the remote-status annotation), zero the worker activity mirrored into the hub job's
 * status (xf_status_stopped), delete worker copies, drop the reservation, ClusterAssigned -> False,
 * check -> Pending (unless it is Rejected, or an eviction is in progress: Kueue
 * resets the checks when it releases the reservation) with a message saying why it waits: Kueue's
 * reason (wl_kueue_reason) and the per-cluster fit (s->explain); when Kueue's reason or the kind
 * of verdict changes (wl_not_admitted_same), an Event on the job (NoClusterFits when it can never
 * fit, else NotAdmitted), so a user sees it once per change, not at every capacity change;
 * requeue (the fit depends on the clusters, which do not queue Workloads). Event Evicted when a
 * placement was undone, once per placement (wl_snapshot.evicted_told).
 *  4. Reserved and our check is Retry/Rejected/Ready: wait for Kueue.
 *  5. Reserved, not placed for THIS admission (no placement, or a stale one
 *     left by an earlier admission: the job's kueue-ks.io/placed-for differs
 *     from wl_placement_token()): needs the placement result
 *     (wl_wants_placement() tells the driver to compute one; without it the
 *     decision is a requeue). OK: undo any stale placement, place (label,
 *     nodeSelector, annotations) in one job patch guarded by
 *     resourceVersion, reserve, ClusterAssigned=True, check message; with
 *     BindingPolicies (not direct) Event AssignedCluster (naming the nodeSelector keys
 *     injected from the flavors, if any): one Event per dispatch. Direct transport, no copy
 *     anywhere and none sent: the copy of the job as placed (state 6's) and its Event
 *     Dispatched come in the same pass, after_job: made once the placement patch went
 *     through, without waiting for the job's own event and a pass on it (outcome chained).
 *     A job of a kind outside the kind table (kind->generic) is placed by
 *     the label only and gets Warning Events REASON_UNKNOWN_JOB_KIND (pkg/reasons).
 *     NOT_NOW / PIN_UNKNOWN: check stays Pending with the reason in its
 *     message, Event NoClusterFits when the message changes, requeue.
 *     NEVER: check Rejected with the reason, Event NoClusterFits.
 *     INVALID (an invalid cluster selector): check stays Pending with the
 *     reason, Warning Event InvalidClusterSelector when the message changes,
 *     requeue after pin_unknown_requeue_ms (the annotation's change requeues too).
 *  6. Placed on cluster c: ClusterAssigned ensured. When c is not usable for
 *     worker_lost_timeout: check Retry ("worker c lost ..."), Events
 *     WorkerLost, drop the reservation (Kueue then releases the quota, the
 *     next pass is state 3); before the timeout: requeue at the deadline.
 *     Direct transport: copies on other clusters are deleted; a copy on c
 *     made for an earlier admission (its kueue-ks.io/placed-for differs) is
 *     deleted and its status never mirrored; the copy on c is
 *     created when absent (the placement was recorded in the hub first, in
 *     state 5, so a crash never yields two copies), Event Dispatched (naming the
 *     injected nodeSelector keys, if any), unless copy_sent (an earlier pass made
 *     it, the worker's store does not show it yet): requeue; when present its status
 *     comes back (xf.h (d)): hub job status patch (status subresource)
 *     when the final/mirrored status differs (a batch/v1 hub job not managed by our
 *     syncer that shows the copy's result already is left to its Job controller),
 *     kueue-ks.io/remote-status annotation (the counts), and the check message by
 *     state only: the placement's message ("placed on cluster c ...") stays while it
 *     runs, any other becomes "running on cluster c"; "finished on cluster c:
 *     succeeded|failed" at the end (a change of the counts writes no Workload); with defer_running
 * the running message waits (deferred) when it would be the Workload write's only change. One copy
 * at a time: while a copy on another cluster is still seen, it is deleted and the copy on c waits
 * (requeue). Unschedulable on the worker (s->unsched, both transports; with the direct transport
 * only for the copy on c made for this admission, its uid matching, none of its pods ready or
 * succeeded): once now - since >= unschedulable_timeout_ms, check Retry naming the worker's reason,
 * Warning Events REASON_UNSCHEDULABLE_ON_WORKER, the job annotated kueue-ks.io/excluded-clusters
 * (excl.h) with c until now + exclusion_ms, the copy deleted, the reservation dropped; Kueue then
 *     requeues the job and placement skips c until then. Before the
 *     timeout: requeue at the deadline.
 *
 * The check is never set Ready: it stays Pending while the job runs remotely
 * so Kueue keeps the hub copy suspended (docs/design.md §4).
 *
 * Workload status writes (our check entry, ClusterAssigned) come as ONE
 * action carrying two equivalent documents, the driver picks the one the
 * server supports:
 *  - `patch`: a JSON merge patch (RFC 7386). A merge patch cannot address one
 *    element of status.admissionChecks (a list-map keyed by name), so it
 *    carries the WHOLE list with only our entry changed (and the whole
 *    conditions list when ClusterAssigned changes), plus
 *    metadata.resourceVersion as a precondition: if Kueue wrote the list in
 *    between, the server answers 409 and the driver requeues, so another
 *    controller's entry is never overwritten with stale data. The devhub
 *    supports this form.
 *  - `apply`: a server-side apply document (application/apply-patch+yaml,
 *    JSON is valid YAML) holding only our entry and ClusterAssigned (both
 *    always, changed or not: a field left out of an apply loses its owner
 *    and is removed); with
 *    field manager "kueue-ks" and force=true it owns just that element on a
 *    real API server, as Kueue's own controllers do (kueue-api §3.3).
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_WL_H
#define KKS_CONTROLLERS_WORKLOAD_WL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controllers/workload/kinds.h"
#include "pkg/reasons/reasons.h"
#include "pkg/util/err.h"

#define WL_COND_CLUSTER_ASSIGNED "ClusterAssigned" /* the condition type */
#define WL_CHECK_MESSAGE_MAX     32768

enum wl_place_status {
    WL_PLACE_OK = 0,
    WL_PLACE_NOT_NOW,
    WL_PLACE_NEVER,
    WL_PLACE_PIN_UNKNOWN,
    WL_PLACE_INVALID /* the job cannot be placed as written (invalid cluster selector): wait */
};

/* The placement result (from placement.h's place_decide, converted by the driver). */
struct wl_placement {
    enum wl_place_status status;
    const char *cluster; /* OK: the chosen cluster; PIN_UNKNOWN: the pin */
    const char *message; /* human-readable reason, may be NULL */
    /* OK: the constraints placement did not judge (placement.h left_to_worker),
     * or NULL; an Event REASON_CONSTRAINTS_LEFT_TO_WORKER on the job says so */
    const char *left_to_worker;
};

/* A worker object found with our origin labels and the hub job's uid. */
struct wl_copy {
    const char *cluster;
    const json_t *obj;
};

/* The copy on the placed cluster makes no progress there, as the worker's
 * ClusterMetrics says (status.unschedulableJobs, agent.h): its pods cannot be
 * scheduled, or are bound but never start, or are never created. */
struct wl_unsched {
    const char *uid;     /* the copy's uid the entry is for (may be NULL) */
    const char *cause;   /* "unschedulable" (NULL: the same), "not-started", "no-pods" */
    const char *reason;  /* the worker's reason, e.g. "Unschedulable", "ErrImagePull", "NoPods" */
    const char *message; /* the scheduler's message */
    int64_t since_ms;    /* since when (earliest PodScheduled=False), ms since the epoch */
};

/* What the driver knows about the cluster the job is placed on. */
struct wl_cluster_state {
    bool reachable;            /* its informer is connected and synced: absence of a copy is real */
    bool usable;               /* place_cluster_usable() and reachable */
    int64_t unusable_since_ms; /* when it stopped being usable (when !usable) */
};

struct wl_opts {
    bool direct;                    /* --transport=direct: copies and status are ours to move */
    bool delete_on_completion;      /* --delete-on-completion */
    int64_t worker_lost_timeout_ms; /* --worker-lost-timeout (default 300000) */
    int64_t no_fit_requeue_ms;      /* requeue delay when nothing fits now (default 5000) */
    int64_t pin_unknown_requeue_ms; /* requeue delay for a pin to an unknown cluster (30000) */
    /* A Workload younger than this (metadata.creationTimestamp) whose check is Pending without
     * a message and that Kueue has given no reason for gets its "waiting" message only then:
     * most are reserved within it, and the message would be a Workload status write (and a
     * Kueue Event) for nothing (here 0 = at once; wlc's config: 0 = 2000, < 0 = at once) */
    int64_t quiet_new_ms;
    int64_t unschedulable_timeout_ms; /* --unschedulable-timeout (wlc default 300000; 0 = off) */
    int64_t exclusion_ms;             /* --unschedulable-exclusion (wlc default 600000) */
    const char *origin;               /* kueue-ks.io/origin value */
};

struct wl_snapshot {
    const json_t *workload;               /* NULL: the Workload is gone */
    const json_t *job;                    /* the owner job in the hub; NULL: gone */
    const struct kind_def *kind;          /* of the job (kind_generic() for unknown kinds) */
    const char *check_name;               /* our AdmissionCheck's name on this workload */
    const json_t *flavor_labels;          /* {"<flavor>": {nodeLabels}} of known ResourceFlavors */
    const struct wl_placement *placement; /* NULL: not computed */
    const struct wl_copy *copies;         /* worker copies found on reachable clusters */
    size_t n_copies;
    struct wl_cluster_state placed;   /* state of the cluster the job is placed on */
    const struct wl_unsched *unsched; /* placed copy unschedulable on its worker, NULL = no */
    /* State 3, active and not evicting (wl_wants_explain): the per-cluster fit
     * without free amounts (explain.h, now=false), NULL = not computed; and
     * whether it says the workload can never fit / cannot be judged yet. */
    const char *explain;
    bool explain_never;
    bool explain_unknown;
    int64_t now_ms;  /* wall clock, ms since the epoch */
    const char *now; /* RFC 3339, for lastTransitionTime */
    /* Other jobs are being dispatched (the driver's call): state 6 leaves the check's
     * "running on cluster c" for a later pass (wl_actions.deferred) when it is the
     * Workload write's only change, so a burst of placements is not behind the status
     * writes of jobs already placed (the Workload status write is the scarce one). */
    bool defer_running;
    /* An earlier pass of this admission made the copy on the placed cluster and the worker's
     * store does not show it yet (watch events lag write responses; the driver's call, for a
     * few seconds at most): a pass now must not create it again (a second Dispatched Event, a
     * 409 and a read on the worker). */
    bool copy_sent;
    /* The kueue-ks.io/placed-for value of the placement whose undoing this process already told
     * (the Evicted Event, the "job evicted" line, the eviction counted; the driver's memory),
     * NULL = none: a pass that finds that placement still on the job (its undo patch failed,
     * or the job store lags the write) undoes it again without telling it twice. */
    const char *evicted_told;
    struct wl_opts opts;
};

enum wl_act_type {
    WL_ACT_PATCH_JOB,        /* merge patch of the hub job (metadata/spec) */
    WL_ACT_PATCH_JOB_STATUS, /* merge patch of the hub job's status subresource */
    WL_ACT_PATCH_WL_STATUS,  /* workload status: `patch` (merge) or `apply` (SSA) */
    WL_ACT_EVENT,            /* Event on the job or the workload */
    WL_ACT_CREATE_COPY,      /* create `object` on `cluster` (only if absent) */
    WL_ACT_DELETE_COPY,      /* delete namespace/name on `cluster` */
    WL_ACT_RESERVE,          /* hold the placement result's reservation for the workload */
    WL_ACT_UNRESERVE,        /* drop the workload's reservation */
    WL_ACT_REQUEUE           /* reconcile again after after_ms */
};

enum wl_target { WL_TGT_JOB = 0, WL_TGT_WORKLOAD = 1 };

struct wl_action {
    enum wl_act_type type;
    enum wl_target target; /* EVENT */
    json_t *patch;         /* PATCH_*: merge patch document (owned) */
    json_t *apply;         /* PATCH_WL_STATUS: SSA document (owned) */
    json_t *object;        /* CREATE_COPY (owned) */
    char *cluster;         /* CREATE/DELETE_COPY, RESERVE (owned) */
    char *ns, *name;       /* DELETE_COPY (owned) */
    char *uid; /* DELETE_COPY: the copy's uid as seen, a precondition (owned, may be NULL) */
    const char *event_type; /* "Normal" / "Warning" (static) */
    char *reason, *message; /* EVENT (owned) */
    int64_t after_ms;       /* REQUEUE */
    /* PATCH_JOB: it only relays the copy's status (the remote-status annotation). A pass whose
     * one action it is decides the same once its write is in the stores: the driver needs no
     * pass for the write's own event (controller.c, echo_skip). */
    bool relay;
    /* CREATE_COPY, EVENT: carried out once the pass's PATCH_JOB (the placement) went through,
     * dropped when it did not; a CREATE_COPY whose worker has no client then is dropped too
     * (the pass after the placement makes the copy, state 6). */
    bool after_job;
};

/* What a decision amounts to, for the driver's metrics and logs: the actions
 * say how, the outcome says what, so no consumer has to recognise an outcome
 * by an Event reason. State numbers as above. */
enum wl_outcome_kind {
    WL_OUT_NONE = 0,    /* nothing a user follows changed (not ours, Kueue acts, gone, finished) */
    WL_OUT_PLACED,      /* state 5 OK: the job is placed on `cluster` and reserved there */
    WL_OUT_DISPATCHED,  /* state 6: the copy is created on `cluster` */
    WL_OUT_FINISHED,    /* state 6: the copy's final status is written back the first time */
    WL_OUT_EVICTED,     /* state 3: the placement on `cluster` is undone (Event Evicted) */
    WL_OUT_WORKER_LOST, /* state 6: `cluster` lost past the timeout, the reservation dropped */
    WL_OUT_REJECTED,    /* state 5 NEVER: the check goes Rejected */
    WL_OUT_WAITING,     /* states 3 and 5: not placed, and not placeable yet */
    /* state 6: the copy's pods unschedulable on `cluster` past the timeout (or
     * `cluster` excluded): Retry, the copy deleted, the reservation dropped */
    WL_OUT_UNSCHEDULABLE
};

struct wl_outcome {
    enum wl_outcome_kind kind;
    char *cluster; /* PLACED, DISPATCHED, FINISHED, EVICTED, WORKER_LOST, UNSCHEDULABLE (owned) */
    char
        *why; /* EVICTED, WORKER_LOST, UNSCHEDULABLE: the message of the Event on the job (owned) */
    bool failed; /* FINISHED: the job failed */
    /* EVICTED: the kueue-ks.io/placed-for of the placement undone (owned), for
     * wl_snapshot.evicted_told */
    char *undone_for;
    /* The Event on the job telling why it is not placed (REASON_NO_CLUSTER_FITS
     * or REASON_NOT_ADMITTED; REJECTED, WAITING and EVICTED in state 3): its
     * reason and message (owned); NULL when this pass does not tell the job. */
    const char *told_reason;
    char *told;
    /* DISPATCHED: the copy's first sight, as made (no status), changes nothing: a pass on it
     * would decide no action with this snapshot (mirror_status on the copy as sent, no
     * unschedulable report held). Its driver may skip that pass (docs/performance.md "A new
     * copy's first sight"). */
    bool sight_quiet;
    /* PLACED (direct transport): the copy is created in the same pass once the placement is
     * written (its CREATE_COPY after_job); `cluster` is then the copy's too. */
    bool chained;
};

/* The decision: the writes, in order, and what they amount to. */
struct wl_actions {
    struct wl_action *v; /* owned */
    size_t n, cap;
    struct wl_outcome outcome; /* set by wl_decide; NONE for wl_gc_orphans */
    /* the check's running message was left for a later pass (wl_snapshot.defer_running):
     * the driver runs the key again once no job is being dispatched */
    bool deferred;
};

void wl_actions_init(struct wl_actions *a);
void wl_actions_free(struct wl_actions *a);
/* One line per action, for logs and tests:
 *   patch-job <json> | patch-job-status <json> | wl-status <merge json>
 *   event job|workload Normal|Warning <Reason>: <message>
 *   create-copy <cluster> <ns>/<name> | delete-copy <cluster> <ns>/<name>
 *   reserve <cluster> | unreserve | requeue <ms>
 * New string. */
char *wl_actions_describe(const struct wl_actions *a);
/* "<kind>[ <cluster>][ failed][ told <Reason>]" ("evicted c1 told NotAdmitted"),
 * for logs and tests. New string. */
char *wl_outcome_describe(const struct wl_outcome *o);

/* The admission identity stored in the job's kueue-ks.io/placed-for:
 * "<workload uid>/<QuotaReserved lastTransitionTime>". New string; NULL when the
 * workload holds no reservation. */
char *wl_placement_token(const json_t *workload);

/* True when the workload's entry for the check `check_name` (NULL: none) is there and
 * Pending: wl_wants_placement is never true without it, so a caller may look at this before
 * it reads the job. */
bool wl_check_pending(const json_t *workload, const char *check_name);

/* True when wl_decide needs a placement result for this snapshot (state 5).
 * *pinned (borrowed, may be NULL) is the user's pinned cluster to pass to the
 * placement as the only candidate. */
bool wl_wants_placement(const struct wl_snapshot *s, const char **pinned);

/* True when wl_decide wants s->explain (a Workload with our check that Kueue
 * has not reserved quota for, active, not being evicted). */
bool wl_wants_explain(const struct wl_snapshot *s);

/* Why Kueue holds this Workload, from its status, or NULL when it does not
 * say: "deactivated (spec.active=false)", or the reason and message of a
 * QuotaReserved=False condition ("Pending: couldn't assign flavors ...",
 * "Inadmissible: LocalQueue q doesn't exist"). New string. */
char *wl_kueue_reason(const json_t *workload);

/* True when Kueue deactivated the Workload because our check `check_name` was Rejected (kueue-ks
 * judged that no cluster can ever hold it, docs/design.md §8): spec.active=false and either our
 * check entry still Rejected or Kueue's Evicted condition with reason
 * "DeactivatedDueToAdmissionCheck" naming the check in its message (Kueue v0.15 resets the
 * check to Pending when it evicts). The job was not held by Kueue's own rules. */
bool wl_rejected_by_check(const json_t *workload, const char *check_name);

/* What a user is told about a job kueue-ks rejected because it never fits (after st_rejected's
 * Events and "job not placed" line, in the "job rejected" line and Event, explain). */
#define WL_NEVER_FITS_ADVICE                                                                       \
    "shrink the job's requests to what one node of a worker cluster can hold (delete the job "     \
    "and create it again; kueue-ks explain shows each cluster's largest node)"

/* The message of a job Kueue deactivated after kueue-ks rejected it (wl_rejected_by_check):
 * "kueue-ks rejected it: no worker cluster can hold it, even empty[: <fit>]; Kueue deactivated
 * its Workload (spec.active=false); <advice>". `fit` (explain's, may be NULL) says why. New
 * string. */
char *wl_rejected_message(const char *fit);

/* Whether the NotAdmitted / NoClusterFits message told last (`prev`, as
 * wl_not_admitted_message made it; NULL or "" = none) says what a message made now from Kueue's
 * reason `why` (NULL = none) and the fit's verdict would: the same Kueue reason and the same
 * kind of verdict (never fits / cannot be judged yet / fits now or when capacity frees). The
 * per-cluster words of a fit change with every capacity change: they are not news, so the job
 * is told (Event, log line) once per change of Kueue's reason or of that kind of verdict. */
bool wl_not_admitted_same(const char *prev, const char *why, bool never, bool unknown);

/* Drop from `a` the Events NoClusterFits and NotAdmitted whose target, reason and message equal
 * the last ones told for this Workload (`told`, a JSON object the caller keeps per Workload:
 * "<job|workload>/<reason>" -> message), and record the others in it: a pass that repeats its
 * predecessor's Event (its Workload write failed and is retried, or the store still shows the
 * old check message) tells nothing new. Returns how many were dropped. */
size_t wl_events_once(struct wl_actions *a, json_t *told);

/* The message of a job Kueue holds: Kueue's reason first ("Kueue has not
 * admitted it: <why>; <fit>": a fit alone reads as if it were about to run),
 * except when no cluster can ever hold it ("<fit>; Kueue has not admitted it:
 * <why>"). `fit` NULL = "waiting for a quota reservation"; `why` NULL = "no
 * quota reserved yet". New string. */
char *wl_not_admitted_message(const char *fit, bool never, const char *why);

/* {"<pod set>": {node labels}} from status.admission.podSetAssignments[].flavors
 * and flavor_labels (union over the flavors of a pod set). New reference. */
json_t *wl_podset_labels(const json_t *workload, const json_t *flavor_labels);

/* Decide. Appends to `out` (initialised by the caller) and sets out->outcome. Returns 0, or -EINVAL
 * (with e) when the snapshot is unusable (no check name, no kind while the
 * job exists). */
int wl_decide(const struct wl_snapshot *s, struct wl_actions *out, struct err *e);

/*
 * Orphan GC (docs/design.md §4 "Orphans", survives operator restarts): `objs` are the
 * objects of kind k found on worker `cluster`. For each one that carries our
 * origin (app.kubernetes.io/managed-by=kueue-ks and kueue-ks.io/origin =
 * `origin`) and a kueue-ks.io/origin-uid for which hub_has(ud, uid) is false,
 * a DELETE_COPY action is appended. Objects without our origin labels are
 * never touched. Call it only once the hub's job store of that kind has
 * synced, else every copy looks orphaned. Returns the number of deletions.
 */
size_t wl_gc_orphans(const char *cluster, const json_t *const *objs, size_t n, const char *origin,
                     bool (*hub_has)(void *ud, const char *uid), void *ud, struct wl_actions *out);

#endif
