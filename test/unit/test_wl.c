/* Unit tests for controllers/workload/wl: every state transition of the
 * workload controller, table-driven (snapshot -> expected action lines). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/controller.h"
#include "controllers/workload/excl.h"
#include "controllers/workload/wl.h"
#include "controllers/workload/xf.h"
#include "pkg/json/jsonx.h"
#include "pkg/kube/store.h"
#include "pkg/util/xalloc.h"

#define CHECK "ks-check"
#define T_RES "2026-11-22T10:00:00Z"
#define TOKEN "wl-uid/" T_RES
/* What a placement on cluster c writes besides: the copy's zero counts, so that the copy's
 * first sight needs no hub write (xf_remote_status_placed) */
#define ZERO_REMOTE(c)                                                                             \
    "\",\"kueue-ks.io/remote-status\":\"{\\\"active\\\":0,\\\"cluster\\\":\\\"" c                  \
    "\\\",\\\"failed\\\":0,\\\"ready\\\":0,\\\"succeeded\\\":0}\""
#define NOW "2026-11-22T10:05:00Z"

static json_t *J(const char *s)
{
    struct err e;
    json_t *v = jx_loadb(s, strlen(s), &e);
    if (!v)
        fail_msg("bad test JSON: %s (%s)", e.msg, s);
    return v;
}

/* ---- fixtures ------------------------------------------------------------- */

enum { RES_NONE, RES_TRUE, RES_FALSE_EVICTED, RES_TRUE_EVICTING };

struct wl_fx {
    int reserved;
    bool finished;
    bool inactive;
    const char *state; /* our check state; NULL: our check absent */
    const char *msg;
    bool assigned; /* ClusterAssigned True on c1 */
};

static json_t *make_wl(const struct wl_fx *f)
{
    json_t *wl = J("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
                   "\"metadata\":{\"name\":\"job-sample-1a2b3\",\"namespace\":\"default\","
                   "\"uid\":\"wl-uid\",\"resourceVersion\":\"10\",\"generation\":1},"
                   "\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":3}]},"
                   "\"status\":{\"conditions\":[],\"admissionChecks\":[{\"name\":\"other\","
                   "\"state\":\"Ready\",\"lastTransitionTime\":\"T\",\"message\":\"\"}]}}");
    json_t *conds = jx_arr(wl, "status.conditions");
    if (f->reserved == RES_TRUE) {
        json_array_append_new(conds, json_pack("{s:s,s:s,s:s}", "type", "QuotaReserved", "status",
                                               "True", "lastTransitionTime", T_RES));
        jx_set_new(wl, "status.admission",
                   J("{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\","
                     "\"flavors\":{\"cpu\":\"spot\",\"memory\":\"spot\"},\"count\":3}]}"),
                   NULL);
    } else if (f->reserved == RES_TRUE_EVICTING) {
        /* real Kueue: Evicted=True first; QuotaReserved stays True until the
         * job reconciler sees the hub job inactive (jobframework stopJob) */
        json_array_append_new(conds, json_pack("{s:s,s:s,s:s}", "type", "QuotaReserved", "status",
                                               "True", "lastTransitionTime", T_RES));
        json_array_append_new(conds, json_pack("{s:s,s:s,s:s}", "type", "Evicted", "status", "True",
                                               "reason", "Preempted"));
        jx_set_new(wl, "status.admission",
                   J("{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\","
                     "\"flavors\":{\"cpu\":\"spot\",\"memory\":\"spot\"},\"count\":3}]}"),
                   NULL);
    } else if (f->reserved == RES_FALSE_EVICTED) {
        json_array_append_new(conds, json_pack("{s:s,s:s,s:s}", "type", "QuotaReserved", "status",
                                               "False", "lastTransitionTime", NOW));
        json_array_append_new(conds, json_pack("{s:s,s:s,s:s}", "type", "Evicted", "status", "True",
                                               "reason", "Preempted"));
    }
    if (f->finished)
        json_array_append_new(conds, json_pack("{s:s,s:s}", "type", "Finished", "status", "True"));
    if (f->assigned)
        json_array_append_new(conds,
                              json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "type", "ClusterAssigned",
                                        "status", "True", "reason", "ClusterAssigned", "message",
                                        "assigned to cluster c1", "lastTransitionTime", T_RES,
                                        "observedGeneration", 1));
    if (f->inactive)
        jx_set_new(wl, "spec.active", json_false(), NULL);
    if (f->state)
        json_array_append_new(jx_arr(wl, "status.admissionChecks"),
                              json_pack("{s:s,s:s,s:s,s:s}", "name", CHECK, "state", f->state,
                                        "lastTransitionTime", "T0", "message",
                                        f->msg ? f->msg : ""));
    return wl;
}

enum {
    JOB_FREE,
    JOB_PLACED_C1,
    JOB_PINNED_C1,
    JOB_STALE_C1,
    JOB_PIN_C3,
    JOB_PLACED_C1_DONE,
    JOB_PLACED_C1_COPY, /* placed on c1, the flavor's keys recorded for the copy only */
    JOB_STALE_C1_SPEC,  /* JOB_STALE_C1 with the keys in the spec (KubeStellar's transport) */
    JOB_PLACED_C1_ZERO, /* JOB_PLACED_C1 as placed now: with the copy's zero counts */
};

static json_t *make_job(int how)
{
    json_t *job = J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
                    "\"sample\",\"namespace\":\"default\",\"uid\":\"job-uid\","
                    "\"resourceVersion\":\"5\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"q\"}},"
                    "\"spec\":{\"suspend\":true,\"parallelism\":3,\"template\":{\"spec\":{"
                    "\"containers\":[{\"name\":\"c\"}]}}}}");
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    json_t *labels = J("{\"main\":{\"instance\":\"spot\"}}");
    switch (how) {
    case JOB_PLACED_C1:
        xf_place(k, job, "c1", labels, TOKEN, XF_INJECT_SPEC, NULL);
        break;
    case JOB_PLACED_C1_ZERO:
        xf_place(k, job, "c1", labels, TOKEN, XF_INJECT_SPEC, NULL);
        assert_int_equal(xf_remote_status_placed(k, job, "c1"), 1);
        assert_int_equal(xf_remote_status_placed(k, job, "c1"), 0); /* already so */
        break;
    case JOB_PINNED_C1:
        jx_set_label(job, XF_LABEL_CLUSTER, "c1");
        xf_place(k, job, "c1", labels, TOKEN, XF_INJECT_SPEC, NULL);
        break;
    case JOB_STALE_C1: /* placed by the built-in syncer, the table's transport */
        xf_place(k, job, "c1", labels, "wl-uid/2026-11-22T09:00:00Z", XF_INJECT_COPY, NULL);
        break;
    case JOB_STALE_C1_SPEC:
        xf_place(k, job, "c1", labels, "wl-uid/2026-11-22T09:00:00Z", XF_INJECT_SPEC, NULL);
        break;
    case JOB_PIN_C3:
        jx_set_label(job, XF_LABEL_CLUSTER, "c3");
        break;
    case JOB_PLACED_C1_COPY:
        xf_place(k, job, "c1", labels, TOKEN, XF_INJECT_COPY, NULL);
        break;
    case JOB_PLACED_C1_DONE: /* the final status written, then amended by the Job controller */
        xf_place(k, job, "c1", labels, TOKEN, XF_INJECT_SPEC, NULL);
        json_object_set_new(job, "status",
                            J("{\"succeeded\":3,\"conditions\":[{\"type\":\"Complete\","
                              "\"status\":\"True\"}]}"));
        break;
    }
    json_decref(labels);
    return job;
}

enum {
    COPY_NONE,
    COPY_NEW,
    COPY_RUNNING,
    COPY_COMPLETE,
    COPY_OLD_C2,
    COPY_BOTH,
    COPY_STALE_COMPLETE, /* on c1, created for an earlier admission (older placed-for) */
    COPY_PENDING,        /* on c1, its pods not ready: {active 3} */
    COPY_FAILED
};

static const char *COPY_STATUS_RUNNING =
    "{\"active\":2,\"ready\":2,\"succeeded\":1,\"startTime\":\"2026-11-22T10:01:00Z\"}";
static const char *COPY_STATUS_COMPLETE =
    "{\"succeeded\":3,\"startTime\":\"2026-11-22T10:01:00Z\",\"completionTime\":"
    "\"2026-11-22T10:04:00Z\",\"conditions\":[{\"type\":\"SuccessCriteriaMet\",\"status\":"
    "\"True\"},{\"type\":\"Complete\",\"status\":\"True\"}]}";

static const char *COPY_STATUS_FAILED =
    "{\"failed\":1,\"startTime\":\"2026-11-22T10:01:00Z\",\"conditions\":[{\"type\":"
    "\"FailureTarget\",\"status\":\"True\"},{\"type\":\"Failed\",\"status\":\"True\","
    "\"reason\":\"BackoffLimitExceeded\"}]}";

static json_t *make_copy(const json_t *job, const char *status)
{
    struct xf_origin o = {.origin = "hub", .origin_uid = "job-uid"};
    json_t *c = xf_downsync(kind_lookup("batch/v1", "Job"), job, &o, NULL);
    if (status)
        json_object_set_new(c, "status", J(status));
    return c;
}

struct tcase {
    const char *name;
    struct wl_fx wl;
    bool no_wl;
    int job;
    bool no_job;
    int copy;
    int place; /* -1: none computed; else enum wl_place_status */
    const char *place_cluster;
    const char *place_left; /* wl_placement.left_to_worker */
    bool direct_off;
    bool unreachable;
    bool unusable;
    bool copy_sent; /* an earlier pass made the copy, the worker's store does not show it yet */
    int64_t lost_ms;
    bool delete_on_completion;
    bool want_placement;
    const char *excl;          /* the job's kueue-ks.io/excluded-clusters, or NULL */
    int64_t unsched_ms;        /* > 0: the copy's pods reported unschedulable for that long */
    const char *unsched_uid;   /* the copy uid the report names (NULL: none) */
    const char *unsched_cause; /* the report's cause (NULL: unschedulable, with its reason) */
    const char *want[12];      /* substrings, one per action line, in order; NULL-terminated */
    const char *out;           /* the outcome, as wl_outcome_describe() says it */
};

/* the job patch that undoes JOB_PLACED_C1 */
#define UNPLACE_C1                                                                                 \
    "patch-job {\"metadata\":{\"annotations\":null,\"labels\":{\"kubestellar.io/cluster\":"        \
    "null},\"resourceVersion\":\"5\"},\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":null}}}}"

#define RESERVED(st)                                                                               \
    {                                                                                              \
        .reserved = RES_TRUE, .state = (st)                                                        \
    }
/* placed on c1, the copy seen running there (the check message already says so) */
#define RUNNING_C1                                                                                 \
    {                                                                                              \
        .reserved = RES_TRUE, .state = "Pending", .assigned = true, .msg = "running on cluster c1" \
    }
#define RESERVED_ASSIGNED(st)                                                                      \
    {                                                                                              \
        .reserved = RES_TRUE, .state = (st), .assigned = true                                      \
    }

static const struct tcase cases[] = {
    {.name = "hub job deleted: copies deleted, reservation dropped",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .no_job = true,
     .copy = COPY_BOTH,
     .place = -1,
     .want = {"delete-copy c1 default/sample", "delete-copy c2 default/sample", "unreserve"}},
    {.name = "workload deleted",
     .out = "none",
     .no_wl = true,
     .job = JOB_PLACED_C1,
     .copy = COPY_RUNNING,
     .place = -1,
     .want = {"delete-copy c1 default/sample", "unreserve"}},
    {.name = "not our workload (check absent)",
     .out = "none",
     .wl = {.reserved = RES_TRUE},
     .place = -1,
     .want = {NULL}},
    {.name = "new, no reservation: nothing to undo",
     .out = "waiting",
     .wl = {.state = "Pending"},
     .place = -1,
     .want = {"unreserve"}},
    {.name = "evicted (preempted) while placed: undo, delete copy, ClusterAssigned False",
     .out = "evicted c1",
     .wl = {.reserved = RES_FALSE_EVICTED, .state = "Pending", .assigned = true},
     .job = JOB_PLACED_C1,
     .copy = COPY_RUNNING,
     .place = -1,
     .want = {UNPLACE_C1, "delete-copy c1 default/sample", "unreserve",
              "event job Normal Evicted: Workload job-sample-1a2b3 lost its quota reservation; "
              "placement on cluster c1 undone",
              "\"reason\":\"NoReservation\""}},
    {.name = "evicted while placed, the flavor's keys in the copy only: the undo is metadata only",
     .out = "evicted c1",
     .wl = {.reserved = RES_FALSE_EVICTED, .state = "Pending", .assigned = true},
     .job = JOB_PLACED_C1_COPY,
     .copy = COPY_RUNNING,
     .place = -1,
     .want = {"patch-job {\"metadata\":{\"annotations\":null,\"labels\":{\"kubestellar.io/"
              "cluster\":null},\"resourceVersion\":\"5\"}}",
              "delete-copy c1 default/sample", "unreserve", "event job Normal Evicted",
              "\"reason\":\"NoReservation\""}},
    {.name = "requeued after Retry: check back to Pending",
     .out = "waiting",
     .wl = {.reserved = RES_FALSE_EVICTED, .state = "Retry"},
     .place = -1,
     .want = {"unreserve", "\"state\":\"Pending\""}},
    {.name = "evicted, user pin: the label stays, injected keys go",
     .out = "evicted c1",
     .wl = {.reserved = RES_FALSE_EVICTED, .state = "Pending"},
     .job = JOB_PINNED_C1,
     .place = -1,
     .want = {"patch-job {\"metadata\":{\"annotations\":null,\"resourceVersion\":\"5\"},"
              "\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":null}}}}",
              "unreserve", "event job Normal Evicted"}},
    {.name = "deactivated after Rejected: undo, check left Rejected",
     .out = "evicted c1",
     .wl = {.reserved = RES_TRUE, .inactive = true, .state = "Rejected"},
     .job = JOB_PLACED_C1,
     .place = -1,
     .want = {"patch-job", "unreserve",
              "event job Normal Evicted: Workload job-sample-1a2b3 "
              "deactivated"}},
    {.name = "reserved, placement not computed yet: requeue",
     .out = "waiting",
     .wl = RESERVED("Pending"),
     .place = -1,
     .want_placement = true,
     .want = {"requeue 1000"}},
    {.name = "reserved: placed on c2 with flavor labels, recorded for the copy only (the built-in "
             "syncer): a metadata-only patch",
     .out = "placed c2",
     .wl = RESERVED("Pending"),
     .place = WL_PLACE_OK,
     .place_cluster = "c2",
     .want_placement = true,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/injected-node-selector\":"
              "\"{\\\"spec.template\\\":{\\\"instance\\\":\\\"spot\\\"}}\",\"kueue-ks.io/"
              "placed-by\":\"kueue-ks\",\"kueue-ks.io/placed-for\":\"" TOKEN ZERO_REMOTE(
                  "c2") "},\"labels\":{"
                        "\"kubestellar.io/cluster\":\"c2\"},\"resourceVersion\":\"5\"}}",
              "reserve c2", "then create-copy c2 default/sample",
              "then event job Normal Dispatched: Created on cluster c2; nodeSelector added from "
              "the admitted flavors: instance=spot",
              "\"message\":\"placed on cluster c2: most free\",\"name\":\"ks-check\","
              "\"state\":\"Pending\""}},
    {.name = "kubestellar transport, placed with flavor labels: the label is the dispatch, its "
             "one Event names the cluster and the injected keys",
     .out = "placed c2",
     .wl = RESERVED("Pending"),
     .place = WL_PLACE_OK,
     .place_cluster = "c2",
     .direct_off = true,
     .want_placement = true,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/injected-node-selector\":"
              "\"{\\\"spec.template\\\":{\\\"instance\\\":\\\"spot\\\"}}\",\"kueue-ks.io/"
              "placed-by\":\"kueue-ks\",\"kueue-ks.io/placed-for\":\"" TOKEN ZERO_REMOTE(
                  "c2") "},\"labels\":{"
                        "\"kubestellar.io/cluster\":\"c2\"},\"resourceVersion\":\"5\"},\"spec\":{"
                        "\"template\":{\"spec\":{\"nodeSelector\":{\"instance\":\"spot\"}}}}}",
              "reserve c2",
              "event job Normal AssignedCluster: Assigned to cluster c2; nodeSelector added from "
              "the admitted flavors: instance=spot",
              "wl-status"}},
    {.name = "reserved: placed with constraints left to the worker: an Event says which",
     .out = "placed c2",
     .wl = RESERVED("Pending"),
     .place = WL_PLACE_OK,
     .place_cluster = "c2",
     .place_left = "pod set main: topology spread (topologyKey zone)",
     .want_placement = true,
     .want = {"patch-job", "reserve c2",
              "event job Normal ConstraintsLeftToWorker: placed on cluster c2 on capacity; not "
              "judged by kueue-ks, left to the worker's scheduler: pod set main: topology spread "
              "(topologyKey zone)",
              "then create-copy c2 default/sample", "then event job Normal Dispatched",
              "wl-status"}},
    {.name = "reserved, user pinned c3: placed there, label untouched",
     .out = "placed c3",
     .wl = RESERVED("Pending"),
     .job = JOB_PIN_C3,
     .place = WL_PLACE_OK,
     .place_cluster = "c3",
     .want_placement = true,
     .want = {"\"kueue-ks.io/placed-for\":\"" TOKEN ZERO_REMOTE(
                  "c3") "},\"resourceVersion\":\"5\"}",
              "reserve c3", "then create-copy c3 default/sample",
              "then event job Normal Dispatched: Created on cluster c3", "wl-status"}},
    {.name = "reserved, nothing fits now: message, events on both, requeue, told (the log line)",
     .out = "waiting told NoClusterFits",
     .wl = RESERVED("Pending"),
     .place = WL_PLACE_NOT_NOW,
     .want_placement = true,
     .want = {"event workload Warning NoClusterFits: no cluster fits now: full",
              "event job Warning NoClusterFits: no cluster fits now: full", "requeue 5000",
              "\"message\":\"no cluster fits now: full\""}},
    {.name = "reserved, waiting, what is free changed: events on both, no second log line",
     .out = "waiting",
     .wl = {.reserved = RES_TRUE, .state = "Pending", .msg = "no cluster fits now: nearly full"},
     .place = WL_PLACE_NOT_NOW,
     .want_placement = true,
     .want = {"event workload Warning NoClusterFits: no cluster fits now: full",
              "event job Warning NoClusterFits: no cluster fits now: full", "requeue 5000",
              "\"message\":\"no cluster fits now: full\""}},
    {.name = "reserved, nothing fits now, already said so: only requeue",
     .out = "waiting",
     .wl = {.reserved = RES_TRUE, .state = "Pending", .msg = "no cluster fits now: full"},
     .place = WL_PLACE_NOT_NOW,
     .want_placement = true,
     .want = {"requeue 5000"}},
    {.name = "reserved, invalid cluster selector: Pending, Warning Events, requeue",
     .out = "waiting",
     .wl = RESERVED("Pending"),
     .place = WL_PLACE_INVALID,
     .want_placement = true,
     .want = {"event job Warning InvalidClusterSelector: cannot place: full",
              "event workload Warning InvalidClusterSelector: cannot place: full", "requeue 30000",
              "\"message\":\"cannot place: full\""}},
    {.name = "reserved, never fits: Rejected",
     .out = "rejected told NoClusterFits",
     .wl = RESERVED("Pending"),
     .place = WL_PLACE_NEVER,
     .want_placement = true,
     .want = {"event workload Warning NoClusterFits: the workload fits no cluster: full",
              "event job Warning NoClusterFits", "\"state\":\"Rejected\""}},
    {.name = "reserved, pin to an unknown cluster: wait",
     .out = "waiting told NoClusterFits",
     .wl = RESERVED("Pending"),
     .job = JOB_PIN_C3,
     .place = WL_PLACE_PIN_UNKNOWN,
     .place_cluster = "c3",
     .want_placement = true,
     .want = {"event workload Warning NoClusterFits: pinned cluster c3 is not a worker that "
              "reports its capacity (the job's kubestellar.io/cluster label): it waits until a "
              "worker of that name reports its ClusterMetrics, or the label names another",
              "event job Warning NoClusterFits: pinned cluster c3", "requeue 30000", "wl-status"}},
    {.name = "stale placement from an earlier admission: undone, copies removed, re-placed",
     .out = "placed c2",
     .wl = RESERVED("Pending"),
     .job = JOB_STALE_C1,
     .copy = COPY_RUNNING,
     .place = WL_PLACE_OK,
     .place_cluster = "c2",
     .want_placement = true,
     .want = {"delete-copy c1 default/sample",
              "patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/placed-for\":\"" TOKEN
                  ZERO_REMOTE("c2") "},\"labels\":{\"kubestellar.io/"
                                    "cluster\":\"c2\"},\"resourceVersion\":\"5\"}}",
              "reserve c2", "wl-status"}},
    {.name = "stale placement with the flavor's keys in the spec (KubeStellar's transport or an "
             "earlier version), re-placed by the built-in syncer: the keys leave the spec",
     .out = "placed c2",
     .wl = RESERVED("Pending"),
     .job = JOB_STALE_C1_SPEC,
     .copy = COPY_RUNNING,
     .place = WL_PLACE_OK,
     .place_cluster = "c2",
     .want_placement = true,
     .want = {"delete-copy c1 default/sample",
              "patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/placed-for\":\"" TOKEN
                  ZERO_REMOTE("c2") "},\"labels\":{\"kubestellar.io/"
                                    "cluster\":\"c2\"},\"resourceVersion\":\"5\"},"
                                    "\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":null}}}}",
              "reserve c2", "wl-status"}},
    {.name = "reserved, check Retry: wait for Kueue",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Retry"),
     .job = JOB_PLACED_C1,
     .copy = COPY_RUNNING,
     .place = -1,
     .want = {NULL}},
    {.name = "placed, no copy yet: create it (ClusterAssigned already set)",
     .out = "dispatched c1",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .place = -1,
     .want = {"create-copy c1 default/sample",
              "event job Normal Dispatched: Created on cluster c1; nodeSelector added from the "
              "admitted flavors: instance=spot"}},
    {.name = "placed, copy made by an earlier pass, not in the worker's store yet: not made "
             "again (no second Dispatched Event), requeue",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .place = -1,
     .copy_sent = true,
     .want = {"requeue 1000"}},
    {.name = "placed, ClusterAssigned missing (crash after the job patch): set it",
     .out = "none",
     .wl = RESERVED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_NEW,
     .place = -1,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote-status\":",
              "\"reason\":\"ClusterAssigned\""}},
    {.name = "placed on c1, old copy on c2: deleted first, the c1 copy waits (one at a time)",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_OLD_C2,
     .place = -1,
     .want = {"delete-copy c2 default/sample", "requeue 1000"}},
    {.name = "placed on c1, no copy anywhere: c1 copy created",
     .out = "dispatched c1",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .place = -1,
     .want = {"create-copy c1", "Dispatched"}},
    {.name = "placed, copy seen, no placement message: remote-status annotation, the check message "
             "says running (no counts)",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_RUNNING,
     .place = -1,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote-status\":"
              "\"{\\\"active\\\":2,\\\"cluster\\\":\\\"c1\\\",\\\"failed\\\":0,\\\"ready\\\":2,"
              "\\\"succeeded\\\":1}\"}}}",
              "\"message\":\"running on cluster c1\""}},
    {.name = "placed, copy seen, the check message tells the placement: it stays (the "
             "annotation only, no Workload write for \"running\")",
     .out = "none",
     .wl = {.reserved = RES_TRUE,
            .state = "Pending",
            .assigned = true,
            .msg = "placed on cluster c1 (spread, the most free wins)"},
     .job = JOB_PLACED_C1,
     .copy = COPY_RUNNING,
     .place = -1,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote-status\":"}},
    {.name = "placed before the zero counts were written with the placement, new copy without "
             "a status: its zero counts relayed",
     .out = "none",
     .wl = {.reserved = RES_TRUE,
            .state = "Pending",
            .assigned = true,
            .msg = "placed on cluster c1 (spread, the most free wins)"},
     .job = JOB_PLACED_C1,
     .copy = COPY_NEW,
     .place = -1,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote-status\":"
              "\"{\\\"active\\\":0,\\\"cluster\\\":\\\"c1\\\",\\\"failed\\\":0,\\\"ready\\\":0,"
              "\\\"succeeded\\\":0}\"}}}"}},
    {.name = "placed with the zero counts, new copy without a status: nothing to write (one hub "
             "write less per dispatch)",
     .out = "none",
     .wl = {.reserved = RES_TRUE,
            .state = "Pending",
            .assigned = true,
            .msg = "placed on cluster c1 (spread, the most free wins)"},
     .job = JOB_PLACED_C1_ZERO,
     .copy = COPY_NEW,
     .place = -1,
     .want = {NULL}},
    {.name = "placed with the zero counts, the copy's pods start: their counts relayed",
     .out = "none",
     .wl = {.reserved = RES_TRUE,
            .state = "Pending",
            .assigned = true,
            .msg = "placed on cluster c1 (spread, the most free wins)"},
     .job = JOB_PLACED_C1_ZERO,
     .copy = COPY_RUNNING,
     .place = -1,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote-status\":"
              "\"{\\\"active\\\":2,\\\"cluster\\\":\\\"c1\\\",\\\"failed\\\":0,\\\"ready\\\":2,"
              "\\\"succeeded\\\":1}\"}}}"}},
    {.name = "placed on c1, copy seen, the check message names another cluster: running on c1",
     .out = "none",
     .wl = {.reserved = RES_TRUE,
            .state = "Pending",
            .assigned = true,
            .msg = "placed on cluster c10: most free"},
     .job = JOB_PLACED_C1,
     .copy = COPY_RUNNING,
     .place = -1,
     .want = {"patch-job", "\"message\":\"running on cluster c1\""}},
    {.name = "placed, running, the copy's counts change: the annotation only, no Workload write "
             "(the check message changes with the state, not the progress)",
     .out = "none",
     .wl = RUNNING_C1,
     .job = JOB_PLACED_C1,
     .copy = COPY_RUNNING,
     .place = -1,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote-status\":"
              "\"{\\\"active\\\":2,\\\"cluster\\\":\\\"c1\\\",\\\"failed\\\":0,\\\"ready\\\":2,"
              "\\\"succeeded\\\":1}\"}}}"}},
    {.name = "placed, running, pods not ready yet: the annotation only, no Workload write",
     .out = "none",
     .wl = RUNNING_C1,
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote-status\":"
              "\"{\\\"active\\\":3,\\\"cluster\\\":\\\"c1\\\",\\\"failed\\\":0,\\\"ready\\\":0,"
              "\\\"succeeded\\\":0}\"}}}"}},
    {.name = "placed, copy complete: final hub status",
     .out = "finished c1",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_COMPLETE,
     .place = -1,
     .want = {"patch-job-status {\"status\":{\"active\":0,\"completionTime\":"
              "\"2026-11-22T10:04:00Z\",\"conditions\":[{\"status\":\"True\",\"type\":"
              "\"SuccessCriteriaMet\"},{\"status\":\"True\",\"type\":\"Complete\"}],\"ready\":0,"
              "\"startTime\":\"2026-11-22T10:01:00Z\",\"succeeded\":3,\"terminating\":0}}",
              "patch-job", "finished on cluster c1: succeeded"}},
    {.name = "placed, copy complete, hub job already Complete (amended by the Job controller): "
             "its status is the Job controller's now, not written again; finished only once",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1_DONE,
     .copy = COPY_COMPLETE,
     .place = -1,
     .want = {"patch-job {", "finished on cluster c1: succeeded"}},
    {.name = "placed, copy failed: final hub status, the outcome says failed",
     .out = "finished c1 failed",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_FAILED,
     .place = -1,
     .want = {"patch-job-status {\"status\":{\"active\":0,\"conditions\":[{\"status\":"
              "\"True\",\"type\":\"FailureTarget\"},{\"reason\":\"BackoffLimitExceeded\","
              "\"status\":\"True\",\"type\":\"Failed\"}],\"failed\":1",
              "patch-job", "finished on cluster c1: failed"}},
    {.name = "placed, worker unreachable within the timeout: requeue at the deadline",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .place = -1,
     .unreachable = true,
     .unusable = true,
     .lost_ms = 60000,
     .want = {"requeue 240000"}},
    {.name = "placed, worker lost past the timeout: Retry",
     .out = "worker-lost c1",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .place = -1,
     .unreachable = true,
     .unusable = true,
     .lost_ms = 300000,
     .want = {"event workload Warning WorkerLost: worker cluster c1 lost for 300s (timeout 300s)",
              "event job Warning WorkerLost", "unreserve", "\"state\":\"Retry\""}},
    /* ---- unschedulable on the worker (--unschedulable-timeout 300s, exclusion 600s) ---- */
    {.name = "unschedulable on c1, not yet timed out: mirrored, requeue at the deadline",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .unsched_ms = 60000,
     .want = {"requeue 240000", "patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote",
              "\"message\":\"running on cluster c1\""}},
    {.name = "unschedulable on c1, timed out: the exclusion is recorded on the hub job first",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .unsched_ms = 300000,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/excluded-clusters\":"
              "\"c1=1970-01-01T00:26:40Z\"},\"resourceVersion\":\"5\"}}"}},
    {.name = "timed out, other clusters' exclusions kept, expired ones dropped",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .unsched_ms = 400000,
     .excl = "c2=1970-01-01T00:20:00Z,c3=1970-01-01T00:10:00Z",
     .want = {"\"kueue-ks.io/excluded-clusters\":\"c1=1970-01-01T00:26:40Z,"
              "c2=1970-01-01T00:20:00Z\""}},
    {.name = "exclusion recorded (read from the hub job, so a restart keeps it): Retry naming "
             "the worker's reason, copy deleted, reservation dropped",
     .out = "unschedulable c1",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .unsched_ms = 300000,
     .excl = "c1=1970-01-01T00:26:40Z",
     .want = {"event workload Warning UnschedulableOnWorker: cannot run on cluster c1: pods "
              "unschedulable there: Unschedulable: 0/2 nodes are available: 2 node(s) didn't "
              "match Pod's node affinity/selector; re-placing with cluster c1 excluded until "
              "1970-01-01T00:26:40Z",
              "event job Warning UnschedulableOnWorker", "delete-copy c1 default/sample",
              "unreserve", "\"state\":\"Retry\""}},
    {.name = "pods bound but not started past the timeout: exclusion recorded first",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .unsched_ms = 300000,
     .unsched_cause = "not-started",
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/excluded-clusters\":"
              "\"c1=1970-01-01T00:26:40Z\"},\"resourceVersion\":\"5\"}}"}},
    {.name = "pods not started, not yet timed out: requeue at the deadline",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .unsched_ms = 299000,
     .unsched_cause = "not-started",
     .want = {"requeue 1000", "patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote",
              "\"message\":\"running on cluster c1\""}},
    {.name = "pods not started, excluded: Retry naming the kubelet's reason",
     .out = "unschedulable c1",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .unsched_ms = 300000,
     .unsched_cause = "not-started",
     .excl = "c1=1970-01-01T00:26:40Z",
     .want = {"event workload Warning UnschedulableOnWorker: cannot run on cluster c1: no "
              "progress there, pods not started: ErrImagePull: failed to pull image \"x\"; "
              "re-placing with cluster c1 excluded until 1970-01-01T00:26:40Z",
              "event job Warning UnschedulableOnWorker", "delete-copy c1 default/sample",
              "unreserve", "\"state\":\"Retry\""}},
    {.name = "no pods created, excluded: Retry naming it",
     .out = "unschedulable c1",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_NEW,
     .place = -1,
     .unsched_ms = 300000,
     .unsched_cause = "no-pods",
     .excl = "c1=1970-01-01T00:26:40Z",
     .want = {"event workload Warning UnschedulableOnWorker: cannot run on cluster c1: no "
              "progress there, no pods created: NoPods: no pod created; re-placing",
              "event job Warning UnschedulableOnWorker", "delete-copy c1 default/sample",
              "unreserve", "\"state\":\"Retry\""}},
    {.name = "not started past the timeout, but a pod is ready (slow, not stuck): not moved",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_RUNNING,
     .place = -1,
     .unsched_ms = 900000,
     .unsched_cause = "not-started",
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote",
              "\"message\":\"running on cluster c1\""}},
    {.name = "placed on an excluded cluster without a report (set by hand): Retry as well",
     .out = "unschedulable c1",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .excl = "c1=1970-01-01T00:26:40Z",
     .want = {"cannot run on cluster c1 (excluded by kueue-ks.io/excluded-clusters); re-placing "
              "with cluster c1 excluded until 1970-01-01T00:26:40Z",
              "event job", "delete-copy c1", "unreserve", "\"state\":\"Retry\""}},
    {.name = "exclusion expired, no report: c1 usable again, status mirrored",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .excl = "c1=1970-01-01T00:16:00Z",
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote",
              "\"message\":\"running on cluster c1\""}},
    {.name = "report names another copy (uid): not this one, ignored",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_PENDING,
     .place = -1,
     .unsched_ms = 900000,
     .unsched_uid = "an-old-copy",
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote",
              "\"message\":\"running on cluster c1\""}},
    {.name = "unschedulable past the timeout, but some pods run (waves): not moved",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_RUNNING,
     .place = -1,
     .unsched_ms = 900000,
     .want = {"patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/remote",
              "\"message\":\"running on cluster c1\""}},
    {.name = "report, but the copy on c1 is not there (yet): nothing decided on it",
     .out = "dispatched c1",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .place = -1,
     .unsched_ms = 900000,
     .want = {"create-copy c1", "Dispatched"}},
    {.name = "kubestellar transport, unschedulable past the timeout: exclusion recorded",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .place = -1,
     .direct_off = true,
     .unsched_ms = 300000,
     .want = {"\"kueue-ks.io/excluded-clusters\":\"c1=1970-01-01T00:26:40Z\""}},
    {.name = "kubestellar transport, excluded: Retry (KubeStellar removes the copy once the "
             "label goes)",
     .out = "unschedulable c1",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .place = -1,
     .direct_off = true,
     .unsched_ms = 300000,
     .excl = "c1=1970-01-01T00:26:40Z",
     .want = {"event workload Warning UnschedulableOnWorker", "event job", "unreserve",
              "\"state\":\"Retry\""}},
    {.name = "kubestellar transport, placed: nothing to move",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .place = -1,
     .direct_off = true,
     .want = {NULL}},
    {.name = "finished, delete on completion",
     .out = "none",
     .wl = {.reserved = RES_TRUE, .finished = true, .state = "Pending", .assigned = true},
     .job = JOB_PLACED_C1,
     .copy = COPY_COMPLETE,
     .place = -1,
     .delete_on_completion = true,
     .want = {"unreserve", "delete-copy c1 default/sample"}},
    {.name = "finished, copies kept",
     .out = "none",
     .wl = {.reserved = RES_TRUE, .finished = true, .state = "Pending", .assigned = true},
     .job = JOB_PLACED_C1,
     .copy = COPY_COMPLETE,
     .place = -1,
     .want = {"unreserve"}},
    {.name = "finished by Kueue before our final message was written (our Workload write lost "
             "the race): the final message from the hub job's result, once",
     .out = "none",
     .wl = {.reserved = RES_TRUE,
            .finished = true,
            .state = "Pending",
            .msg = "running on cluster c1",
            .assigned = true},
     .job = JOB_PLACED_C1_DONE,
     .copy = COPY_COMPLETE,
     .place = -1,
     .want = {"unreserve", "finished on cluster c1: succeeded"}},
    {.name = "finished, the final message already written: no Workload write",
     .out = "none",
     .wl = {.reserved = RES_TRUE,
            .finished = true,
            .state = "Pending",
            .msg = "finished on cluster c1: succeeded",
            .assigned = true},
     .job = JOB_PLACED_C1_DONE,
     .copy = COPY_COMPLETE,
     .place = -1,
     .want = {"unreserve"}},
    {.name = "finished on c1, stale copy on c2 (lost worker came back): c2 copy deleted",
     .out = "none",
     .wl = {.reserved = RES_TRUE, .finished = true, .state = "Pending", .assigned = true},
     .job = JOB_PLACED_C1,
     .copy = COPY_OLD_C2,
     .place = -1,
     .want = {"unreserve", "delete-copy c2 default/sample"}},
    {.name = "placed, the copy on c1 is from an earlier admission: deleted, not mirrored",
     .out = "none",
     .wl = RESERVED_ASSIGNED("Pending"),
     .job = JOB_PLACED_C1,
     .copy = COPY_STALE_COMPLETE,
     .place = -1,
     .want = {"delete-copy c1 default/sample"}},
    {.name = "being evicted (Evicted=True, QuotaReserved still True): undo, delete copy",
     .out = "evicted c1",
     .wl = {.reserved = RES_TRUE_EVICTING, .state = "Pending", .assigned = true},
     .job = JOB_PLACED_C1,
     .copy = COPY_RUNNING,
     .place = -1,
     .want = {UNPLACE_C1, "delete-copy c1 default/sample", "unreserve",
              "event job Normal Evicted: Workload job-sample-1a2b3 is being evicted; "
              "placement on cluster c1 undone",
              "\"reason\":\"NoReservation\""}},
    {.name = "being evicted after a worker-lost Retry: undo, check left to Kueue",
     .out = "evicted c1",
     .wl = {.reserved = RES_TRUE_EVICTING, .state = "Retry", .assigned = true},
     .job = JOB_PLACED_C1,
     .place = -1,
     .unreachable = true,
     .unusable = true,
     .lost_ms = 400000,
     .want = {"patch-job", "unreserve", "event job Normal Evicted",
              "\"reason\":\"NoReservation\""}},
};

/* `obj` as a restart's pass reads it: packed in `st`, its tree dropped, the members at
 * `paths` decoded (store_get_view; valid while `st` lives). NULL stays NULL. */
static json_t *packed_view(struct store *st, json_t *obj, const char *const *paths)
{
    if (!obj)
        return NULL;
    json_t *copy = json_deep_copy(obj);
    if (!jx_str(copy, "metadata.name", NULL))
        jx_setv_new(copy, json_string("x"), "metadata", "name");
    if (!jx_str(copy, "metadata.namespace", NULL))
        jx_setv_new(copy, json_string("default"), "metadata", "namespace");
    assert_int_equal(store_upsert(st, copy, NULL, NULL, NULL), 0);
    store_trim(st, true);
    char *key = jx_obj_key(copy);
    json_t *v = store_get_view(st, key, paths);
    assert_non_null(v);
    free(key);
    json_decref(copy);
    return v;
}

/* The undo of JOB_PLACED_C1_COPY: the same without a spec part. */
#define UNPLACE_C1_COPY                                                                            \
    "patch-job {\"metadata\":{\"annotations\":null,\"labels\":{\"kubestellar.io/cluster\":"        \
    "null},\"resourceVersion\":\"5\"}}"

/* copy_form: the case's JOB_PLACED_C1 is built as the built-in syncer places it now
 * (JOB_PLACED_C1_COPY: the flavor's keys recorded for the copy, none in the spec), and the
 * copies from it. */
static void run_case_form(const struct tcase *c, bool copy_form)
{
    struct tcase twin;
    if (copy_form) {
        twin = *c;
        twin.job = JOB_PLACED_C1_COPY;
        for (size_t i = 0; twin.want[i]; i++)
            if (strcmp(twin.want[i], UNPLACE_C1) == 0)
                twin.want[i] = UNPLACE_C1_COPY;
        c = &twin;
    }
    json_t *wl = c->no_wl ? NULL : make_wl(&c->wl);
    json_t *job = c->no_job ? NULL : make_job(c->job);
    if (job && c->excl)
        jx_setv_new(job, json_string(c->excl), "metadata", "annotations", EXCL_ANNOTATION);
    struct wl_unsched us = {.uid = c->unsched_uid,
                            .reason = "Unschedulable",
                            .message = "0/2 nodes are available: 2 node(s) didn't match Pod's "
                                       "node affinity/selector",
                            .since_ms = 1000000 - c->unsched_ms};
    if (c->unsched_cause && strcmp(c->unsched_cause, "not-started") == 0)
        us = (struct wl_unsched){.uid = c->unsched_uid,
                                 .cause = c->unsched_cause,
                                 .reason = "ErrImagePull",
                                 .message = "failed to pull image \"x\"",
                                 .since_ms = 1000000 - c->unsched_ms};
    else if (c->unsched_cause)
        us = (struct wl_unsched){.uid = c->unsched_uid,
                                 .cause = c->unsched_cause,
                                 .reason = "NoPods",
                                 .message = "no pod created",
                                 .since_ms = 1000000 - c->unsched_ms};
    json_t *ref = make_job(copy_form ? JOB_PLACED_C1_COPY : JOB_PLACED_C1);
    json_t *c1 = NULL, *c2 = NULL;
    struct wl_copy copies[2];
    size_t nc = 0;
    switch (c->copy) {
    case COPY_NEW:
        c1 = make_copy(ref, NULL);
        break;
    case COPY_RUNNING:
        c1 = make_copy(ref, COPY_STATUS_RUNNING);
        break;
    case COPY_COMPLETE:
        c1 = make_copy(ref, COPY_STATUS_COMPLETE);
        break;
    case COPY_PENDING:
        c1 = make_copy(ref, "{\"active\":3,\"ready\":0}");
        break;
    case COPY_FAILED:
        c1 = make_copy(ref, COPY_STATUS_FAILED);
        break;
    case COPY_OLD_C2:
        c2 = make_copy(ref, COPY_STATUS_RUNNING);
        break;
    case COPY_BOTH:
        c1 = make_copy(ref, COPY_STATUS_RUNNING);
        c2 = make_copy(ref, NULL);
        break;
    case COPY_STALE_COMPLETE: {
        json_t *old = make_job(JOB_STALE_C1);
        c1 = make_copy(old, COPY_STATUS_COMPLETE);
        json_decref(old);
        break;
    }
    }
    if (c1)
        copies[nc++] = (struct wl_copy){.cluster = "c1", .obj = c1};
    if (c2)
        copies[nc++] = (struct wl_copy){.cluster = "c2", .obj = c2};
    json_t *flavors = J("{\"spot\":{\"instance\":\"spot\"},\"h100\":{\"instance\":\"h100\"}}");
    struct wl_placement pl = {.status = c->place >= 0 ? (enum wl_place_status)c->place : 0,
                              .cluster = c->place_cluster,
                              .message = c->place == WL_PLACE_OK ? "most free" : "full",
                              .left_to_worker = c->place_left};
    struct wl_snapshot s = {
        .workload = wl,
        .job = job,
        .kind = kind_lookup("batch/v1", "Job"),
        .check_name = CHECK,
        .flavor_labels = flavors,
        .placement = c->place >= 0 ? &pl : NULL,
        .copies = copies,
        .n_copies = nc,
        .placed = {.reachable = !c->unreachable,
                   .usable = !c->unusable,
                   .unusable_since_ms = 1000000 - c->lost_ms},
        .unsched = c->unsched_ms > 0 ? &us : NULL,
        .now_ms = 1000000,
        .now = NOW,
        .copy_sent = c->copy_sent,
        .opts = {.direct = !c->direct_off,
                 .delete_on_completion = c->delete_on_completion,
                 .worker_lost_timeout_ms = 300000,
                 .unschedulable_timeout_ms = 300000,
                 .exclusion_ms = 600000,
                 .no_fit_requeue_ms = 5000,
                 .pin_unknown_requeue_ms = 30000,
                 .origin = "hub"},
    };
    const char *pin = NULL;
    assert_int_equal(wl_wants_placement(&s, &pin), c->want_placement);
    /* the controller skips a Workload whose check is not Pending without reading the rest */
    if (c->want_placement)
        assert_true(wl_check_pending(wl, CHECK));
    assert_false(wl_check_pending(wl, NULL));
    if (c->job == JOB_PIN_C3 && c->want_placement)
        assert_string_equal(pin, "c3");
    /* a restart's pass decides on views of the Workload and of its job: the same */
    struct store_opts po = {.packed = true};
    struct store *wls = store_new(&po), *jobs = store_new(&po);
    json_t *wlv = packed_view(wls, wl, wlc_workload_view);
    json_t *jobv = packed_view(jobs, job, wlc_job_view);
    struct wl_snapshot vs = {.workload = wlv, .job = jobv, .check_name = CHECK};
    const char *pin_whole = NULL;
    (void)wl_wants_placement(&s, &pin_whole);
    assert_int_equal(wl_wants_placement(&vs, &pin), c->want_placement);
    if (c->job == JOB_PIN_C3 && c->want_placement)
        assert_string_equal(pin, "c3");
    if (pin_whole || pin) /* the same pin from the views */
        assert_string_equal(pin ? pin : "(none)", pin_whole ? pin_whole : "(none)");
    json_decref(wlv);
    json_decref(jobv);
    store_free(wls);
    store_free(jobs);
    struct wl_actions a;
    wl_actions_init(&a);
    struct err e;
    assert_int_equal(wl_decide(&s, &a, &e), 0);
    char *d = wl_actions_describe(&a);
    size_t nwant = 0;
    while (c->want[nwant])
        nwant++;
    bool ok = a.n == nwant;
    char *line = d;
    for (size_t i = 0; ok && i < nwant; i++) {
        char *nl = strchr(line, '\n');
        *nl = '\0';
        if (!strstr(line, c->want[i])) {
            print_error("action %zu: got\n  %s\nwant substring\n  %s\n", i, line, c->want[i]);
            ok = false;
        }
        *nl = '\n';
        line = nl + 1;
    }
    const char *form = copy_form ? " (placed for the copy)" : "";
    if (!ok) {
        print_error("case \"%s\"%s: %zu actions (want %zu):\n%s", c->name, form, a.n, nwant, d);
        fail();
    }
    free(d);
    d = wl_outcome_describe(&a.outcome);
    if (strcmp(d, c->out) != 0) {
        print_error("case \"%s\"%s: outcome \"%s\", want \"%s\"\n", c->name, form, d, c->out);
        fail();
    }
    free(d);
    wl_actions_free(&a);
    json_decref(wl);
    json_decref(job);
    json_decref(ref);
    json_decref(c1);
    json_decref(c2);
    json_decref(flavors);
}

static void run_case(const struct tcase *c)
{
    run_case_form(c, false);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

/* The table's cases of a job placed by the built-in syncer (JOB_PLACED_C1, direct) again with
 * the job as that transport places it now: the same decisions, the undo without a spec part. */
static void test_table_copy_form(void **state)
{
    (void)state;
    size_t twins = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cases[i].job != JOB_PLACED_C1 || cases[i].direct_off || cases[i].no_job)
            continue;
        run_case_form(&cases[i], true);
        twins++;
    }
    assert_true(twins >= 30);
}

/* Unreserved, Kueue says why and the fit says never: the check message and ONE
 * Warning NoClusterFits on the job, with both; the same state again (the
 * message already written): no Event, so periodic passes do not storm. */
/* Kueue's reason first, unless no cluster can ever hold the job: "fits now"
 * leading the message of a job Kueue holds read as if it were about to run. */
static void test_not_admitted_message_order(void **state)
{
    (void)state;
    char *m = wl_not_admitted_message("fits now: pod set main needs cpu 1 per pod; cluster1: "
                                      "fits now (spot)",
                                      false, "Inadmissible: LocalQueue q doesn't exist");
    assert_string_equal(m, "Kueue has not admitted it: Inadmissible: LocalQueue q doesn't exist; "
                           "fits now: pod set main needs cpu 1 per pod; cluster1: fits now (spot)");
    free(m);
    m = wl_not_admitted_message("never fits: cluster1: largest node 8 cpu (spot)", true,
                                "Pending: insufficient unused quota");
    assert_string_equal(m, "never fits: cluster1: largest node 8 cpu (spot); Kueue has not "
                           "admitted it: Pending: insufficient unused quota");
    free(m);
    m = wl_not_admitted_message(NULL, false, NULL);
    assert_string_equal(m, "no quota reserved yet; waiting for a quota reservation");
    free(m);
}

/* A pass's view of a Workload Kueue has not admitted (the batch/v1 Job's) with the
 * placement's explanation `fit`, at NOW, with the built-in syncer's options. */
static struct wl_snapshot explain_snapshot(json_t *wl, json_t *job, const char *fit)
{
    return (struct wl_snapshot){.workload = wl,
                                .job = job,
                                .kind = kind_lookup("batch/v1", "Job"),
                                .check_name = CHECK,
                                .explain = fit,
                                .now = NOW,
                                .opts = {.direct = true,
                                         .origin = "hub",
                                         .no_fit_requeue_ms = 5000,
                                         .pin_unknown_requeue_ms = 30000}};
}

static void test_unreserved_explained_once(void **state)
{
    (void)state;
    const char *fit = "never fits: pod set main needs cpu 100 per pod; cluster1: largest node 8 "
                      "cpu (spot); cluster2: largest node 8 cpu (h100)";
    const char *want = "never fits: pod set main needs cpu 100 per pod; cluster1: largest node 8 "
                       "cpu (spot); cluster2: largest node 8 cpu (h100); Kueue has not admitted "
                       "it: Pending: insufficient unused quota for cpu in flavor spot";
    for (int round = 0; round < 2; round++) {
        struct wl_fx f = {.state = "Pending", .msg = round ? want : "waiting"};
        json_t *wl = make_wl(&f);
        json_array_append_new(jx_arr(wl, "status.conditions"),
                              json_pack("{s:s,s:s,s:s,s:s}", "type", "QuotaReserved", "status",
                                        "False", "reason", "Pending", "message",
                                        "insufficient unused quota for cpu in flavor spot"));
        json_t *job = make_job(JOB_FREE);
        struct wl_snapshot s = explain_snapshot(wl, job, fit);
        s.explain_never = true;
        assert_true(wl_wants_explain(&s));
        struct wl_actions a;
        wl_actions_init(&a);
        assert_int_equal(wl_decide(&s, &a, NULL), 0);
        char *d = wl_actions_describe(&a);
        size_t events = 0;
        for (size_t i = 0; i < a.n; i++)
            if (a.v[i].type == WL_ACT_EVENT) {
                events++;
                assert_int_equal(a.v[i].target, WL_TGT_JOB);
                assert_string_equal(a.v[i].event_type, "Warning");
                assert_string_equal(a.v[i].reason, REASON_NO_CLUSTER_FITS);
                assert_string_equal(a.v[i].message, want);
            }
        assert_int_equal(events, round ? 0 : 1);
        /* the outcome tells the job once too (the driver logs it) */
        assert_int_equal(a.outcome.kind, WL_OUT_WAITING);
        if (round == 0) {
            assert_string_equal(a.outcome.told_reason, REASON_NO_CLUSTER_FITS);
            assert_string_equal(a.outcome.told, want);
        } else {
            assert_null(a.outcome.told_reason);
        }
        if (round == 0 && !strstr(d, want))
            fail_msg("the check message is not written: %s", d);
        assert_non_null(strstr(d, "requeue 30000"));
        free(d);
        wl_actions_free(&a);
        json_decref(wl);
        json_decref(job);
    }
}

/* A new Workload Kueue has not looked at yet (no QuotaReserved condition) that fits: the
 * check message says so, but no Event: on a real hub Kueue reserves within milliseconds, and
 * a NotAdmitted Event plus a "job not placed" line for every new job was noise (seen on the
 * real stack). */
static void test_unreserved_fresh_no_event(void **state)
{
    (void)state;
    const char *fit = "fits now: pod set main needs cpu 1 per pod; cluster1: fits now (spot)";
    struct wl_fx f = {.state = "Pending", .msg = ""};
    json_t *wl = make_wl(&f);
    json_t *job = make_job(JOB_FREE);
    struct wl_snapshot s = explain_snapshot(wl, job, fit);
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    char *d = wl_actions_describe(&a);
    for (size_t i = 0; i < a.n; i++)
        if (a.v[i].type == WL_ACT_EVENT)
            fail_msg("an Event for a Workload Kueue has not judged yet: %s", d);
    if (!strstr(d, "no quota reserved yet"))
        fail_msg("the check message is not written: %s", d);
    free(d);
    wl_actions_free(&a);
    json_decref(wl);
    json_decref(job);
}

/* A new Workload's "waiting" message waits for wl_opts.quiet_new_ms: most are reserved within
 * it, and the message would be a Workload status write (and a Kueue Event) for nothing. Once
 * it is older, or Kueue gives a reason, or it has a message, the message is written at once. */
static void test_unreserved_quiet_while_new(void **state)
{
    (void)state;
    const char *fit = "fits now: pod set main needs cpu 1 per pod; cluster1: fits now (spot)";
    static const struct {
        const char *created;
        bool kueue_reason;
        const char *msg;
        bool quiet;
        bool never; /* no cluster can ever hold it: news at once */
    } quiet_cases[] = {
        {"2026-11-22T10:04:59Z", false, "", true},         /* 1 s old: requeued, no write */
        {"2026-11-22T10:05:00Z", false, "", true},         /* created this second */
        {"2026-11-22T10:04:58Z", false, "", false},        /* 2 s old: due */
        {"2026-11-22T10:04:59Z", true, "", false},         /* Kueue says why: news */
        {"2026-11-22T10:04:59Z", false, "earlier", false}, /* a message to replace */
        {NULL, false, "", false},                          /* no creationTimestamp */
        {"not a time", false, "", false},
        {"2026-11-22T10:04:59Z", false, "", false, true},
    };
    for (size_t i = 0; i < sizeof quiet_cases / sizeof *quiet_cases; i++) {
        struct wl_fx f = {.state = "Pending", .msg = quiet_cases[i].msg};
        json_t *wl = make_wl(&f);
        if (quiet_cases[i].created)
            jx_set_new(wl, "metadata.creationTimestamp", json_string(quiet_cases[i].created), NULL);
        if (quiet_cases[i].kueue_reason)
            json_array_append_new(jx_arr(wl, "status.conditions"),
                                  json_pack("{s:s,s:s,s:s,s:s}", "type", "QuotaReserved", "status",
                                            "False", "reason", "Pending", "message",
                                            "insufficient unused quota for cpu in flavor spot"));
        json_t *job = make_job(JOB_FREE);
        struct wl_snapshot s = explain_snapshot(wl, job, fit);
        s.explain_never = quiet_cases[i].never;
        s.now_ms = 1795341900000LL; /* NOW */
        s.opts.quiet_new_ms = 2000;
        struct wl_actions a;
        wl_actions_init(&a);
        assert_int_equal(wl_decide(&s, &a, NULL), 0);
        char *d = wl_actions_describe(&a);
        bool wrote = false;
        for (size_t k = 0; k < a.n; k++)
            wrote |= a.v[k].type == WL_ACT_PATCH_WL_STATUS;
        if (wrote == quiet_cases[i].quiet)
            fail_msg("case %zu (%s): %s", i,
                     quiet_cases[i].created ? quiet_cases[i].created : "none", d);
        if (quiet_cases[i].quiet) /* back when it is due: 2 s after its creation second */
            assert_non_null(strstr(d, i == 0 ? "requeue 1000" : "requeue 2000"));
        assert_int_equal(a.outcome.kind, WL_OUT_WAITING);
        free(d);
        wl_actions_free(&a);
        json_decref(wl);
        json_decref(job);
    }
    /* no fit computed: a Pending check gets no message at all, so nothing waits (no requeue) */
    struct wl_fx f = {.state = "Pending", .msg = ""};
    json_t *wl = make_wl(&f);
    jx_set_new(wl, "metadata.creationTimestamp", json_string("2026-11-22T10:04:59Z"), NULL);
    json_t *job = make_job(JOB_FREE);
    struct wl_snapshot s = {.workload = wl,
                            .job = job,
                            .kind = kind_lookup("batch/v1", "Job"),
                            .check_name = CHECK,
                            .now = NOW,
                            .now_ms = 1795341900000LL,
                            .opts = {.direct = true, .origin = "hub", .quiet_new_ms = 2000}};
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    char *d = wl_actions_describe(&a);
    if (strstr(d, "requeue") || strstr(d, "status"))
        fail_msg("no fit, no message: nothing to wait for: %s", d);
    free(d);
    wl_actions_free(&a);
    json_decref(wl);
    json_decref(job);
}

/* One "job evicted" line and one Evicted Event per eviction (issue: two at one preemption): a
 * pass that finds the placement it undid still on the job (its patch lost a race with Kueue's
 * own write of the job, or the store lags) undoes it again, silently; a later placement (another
 * placed-for) is told again. */
static void test_evicted_told_once(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        struct wl_fx f = {.reserved = RES_FALSE_EVICTED, .state = "Pending", .assigned = true};
        json_t *wl = make_wl(&f);
        json_t *job = make_job(JOB_PLACED_C1);
        struct wl_snapshot s = {.workload = wl,
                                .job = job,
                                .kind = kind_lookup("batch/v1", "Job"),
                                .check_name = CHECK,
                                .now = NOW,
                                .evicted_told = round == 0   ? NULL
                                                : round == 1 ? TOKEN
                                                             : "wl-uid/2026-11-22T09:00:00Z",
                                .opts = {.direct = true, .origin = "hub"}};
        struct wl_actions a;
        wl_actions_init(&a);
        assert_int_equal(wl_decide(&s, &a, NULL), 0);
        char *d = wl_actions_describe(&a);
        assert_non_null(strstr(d, UNPLACE_C1)); /* undone every time */
        if (round == 1) {
            assert_null(strstr(d, "event job"));
            assert_int_not_equal(a.outcome.kind, WL_OUT_EVICTED);
        } else {
            assert_non_null(strstr(d,
                                   "event job Normal Evicted: Workload job-sample-1a2b3 lost its "
                                   "quota reservation; placement on cluster c1 undone"));
            assert_int_equal(a.outcome.kind, WL_OUT_EVICTED);
            assert_string_equal(a.outcome.undone_for, TOKEN);
        }
        free(d);
        wl_actions_free(&a);
        json_decref(wl);
        json_decref(job);
    }
}

/* Told once per change of Kueue's reason or of the kind of verdict, not at every capacity
 * change (issue: a job without a LocalQueue logged "not admitted" 6 times in 6 minutes as the
 * clusters filled and drained). */
static void test_not_admitted_same(void **state)
{
    (void)state;
    const char *lq = "Inadmissible: LocalQueue q doesn't exist";
    char *now = wl_not_admitted_message("fits now: pod set main needs cpu 1 per pod; cluster1: "
                                        "fits now (spot)",
                                        false, lq);
    assert_false(wl_not_admitted_same(NULL, lq, false, false));
    assert_false(wl_not_admitted_same("", lq, false, false));
    /* the clusters filled up: "fits when capacity frees" is the same kind of verdict */
    assert_true(wl_not_admitted_same(now, lq, false, false));
    /* Kueue's reason changed */
    assert_false(wl_not_admitted_same(now, "Pending: insufficient unused quota", false, false));
    /* no cluster can hold it now, or the fit cannot be judged: news */
    assert_false(wl_not_admitted_same(now, lq, true, false));
    assert_false(wl_not_admitted_same(now, lq, false, true));
    char *unk =
        wl_not_admitted_message("no cluster fits among those with fresh metrics: c1", false, lq);
    assert_true(wl_not_admitted_same(unk, lq, false, true));
    assert_false(wl_not_admitted_same(unk, lq, false, false));
    char *never = wl_not_admitted_message("never fits: cluster1: largest node 8 cpu (spot)", true,
                                          "Pending: insufficient unused quota");
    assert_true(wl_not_admitted_same(never, "Pending: insufficient unused quota", true, false));
    assert_false(wl_not_admitted_same(never, "Pending: other", true, false));
    assert_false(wl_not_admitted_same(never, "Pending: insufficient unused quota", false, false));
    /* a longer reason that starts with the old one is another reason */
    assert_false(
        wl_not_admitted_same(now, "Inadmissible: LocalQueue q doesn't exist yet", false, false));
    free(now);
    free(unk);
    free(never);
}

/* The check message of a Workload Kueue holds follows the fit, the Event and the line only
 * Kueue's reason (and the kind of verdict): a capacity change rewrites the message, silently. */
static void test_unreserved_capacity_change_silent(void **state)
{
    (void)state;
    const char *was = "Kueue has not admitted it: Pending: insufficient unused quota; fits now: "
                      "pod set main needs cpu 1 per pod; cluster1: fits now (spot)";
    const char *fit = "fits when capacity frees: pod set main needs cpu 1 per pod; cluster1: fits "
                      "when capacity frees (spot)";
    struct wl_fx f = {.state = "Pending", .msg = was};
    json_t *wl = make_wl(&f);
    json_array_append_new(jx_arr(wl, "status.conditions"),
                          json_pack("{s:s,s:s,s:s,s:s}", "type", "QuotaReserved", "status", "False",
                                    "reason", "Pending", "message", "insufficient unused quota"));
    json_t *job = make_job(JOB_FREE);
    struct wl_snapshot s = explain_snapshot(wl, job, fit);
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    char *d = wl_actions_describe(&a);
    assert_non_null(strstr(d, "fits when capacity frees (spot)")); /* the message follows */
    assert_null(strstr(d, "event job"));
    assert_null(a.outcome.told_reason);
    free(d);
    wl_actions_free(&a);
    json_decref(wl);
    json_decref(job);
}

/* wl_events_once: the NoClusterFits / NotAdmitted Event a pass repeats (same target, reason and
 * message as the last one told) is dropped; a changed message, another target or another reason
 * is kept; other Events are never dropped. */
static void test_events_once(void **state)
{
    (void)state;
    json_t *told = json_object();
    for (int round = 0; round < 3; round++) {
        struct wl_actions a;
        wl_actions_init(&a);
        struct wl_action *v = a.v = calloc(4, sizeof *a.v);
        a.n = a.cap = 4;
        const char *m = round == 2 ? "no cluster fits now: B" : "no cluster fits now: A";
        v[0] = (struct wl_action){.type = WL_ACT_EVENT,
                                  .target = WL_TGT_JOB,
                                  .reason = strdup(REASON_NO_CLUSTER_FITS),
                                  .message = strdup(m)};
        v[1] = (struct wl_action){.type = WL_ACT_EVENT,
                                  .target = WL_TGT_WORKLOAD,
                                  .reason = strdup(REASON_NO_CLUSTER_FITS),
                                  .message = strdup(m)};
        v[2] = (struct wl_action){.type = WL_ACT_EVENT,
                                  .target = WL_TGT_JOB,
                                  .reason = strdup(REASON_EVICTED),
                                  .message = strdup("x")};
        v[3] = (struct wl_action){.type = WL_ACT_REQUEUE, .after_ms = 5};
        size_t dropped = wl_events_once(&a, told);
        assert_int_equal(dropped, round == 1 ? 2 : 0);
        assert_int_equal(a.n, round == 1 ? 2 : 4);
        if (round == 1) {
            assert_string_equal(a.v[0].reason, REASON_EVICTED);
            assert_int_equal(a.v[1].type, WL_ACT_REQUEUE);
        }
        wl_actions_free(&a);
    }
    assert_string_equal(jx_str(told, "job/" REASON_NO_CLUSTER_FITS, ""), "no cluster fits now: B");
    json_decref(told);
}

/* Kueue deactivated the Workload because our check Rejected it: kueue-ks's verdict, not
 * Kueue's (issue: "Kueue has not admitted it: deactivated" for a job too big for every
 * cluster); a Workload the user deactivated, or that another check rejected, is not. */
static void test_rejected_by_check(void **state)
{
    (void)state;
    struct wl_fx f = {.inactive = true, .state = "Rejected", .msg = "the workload fits no cluster"};
    json_t *wl = make_wl(&f);
    assert_true(wl_rejected_by_check(wl, CHECK));
    assert_false(wl_rejected_by_check(wl, NULL));
    json_decref(wl);
    /* Kueue v0.15 evicts and resets the check to Pending */
    f = (struct wl_fx){.inactive = true,
                       .state = "Pending",
                       .msg = "Reset to Pending after eviction. Previously: Rejected"};
    wl = make_wl(&f);
    assert_false(wl_rejected_by_check(wl, CHECK)); /* no Evicted condition yet */
    json_t *ev = json_pack("{s:s,s:s,s:s,s:s}", "type", "Evicted", "status", "True", "reason",
                           "DeactivatedDueToAdmissionCheck", "message",
                           "The workload is deactivated due to Admission check(s): " CHECK
                           ", were rejected");
    json_array_append_new(jx_arr(wl, "status.conditions"), ev);
    assert_true(wl_rejected_by_check(wl, CHECK));
    assert_false(wl_rejected_by_check(wl, "another-check"));
    jx_set_new(wl, "spec.active", json_true(), NULL); /* reactivated by the user */
    assert_false(wl_rejected_by_check(wl, CHECK));
    json_decref(wl);
    char *m = wl_rejected_message("never fits: cluster1: largest node 8 cpu (spot)");
    assert_string_equal(m, "kueue-ks rejected it: no worker cluster can hold it, even empty: never "
                           "fits: cluster1: largest node 8 cpu (spot); Kueue deactivated its "
                           "Workload (spec.active=false); " WL_NEVER_FITS_ADVICE);
    free(m);
    assert_non_null(strstr(WL_NEVER_FITS_ADVICE, "shrink the job's requests"));
}

static void test_kueue_reason(void **state)
{
    (void)state;
    struct wl_fx f = {.state = "Pending"};
    json_t *wl = make_wl(&f);
    assert_null(wl_kueue_reason(wl));
    json_array_append_new(jx_arr(wl, "status.conditions"),
                          json_pack("{s:s,s:s,s:s,s:s}", "type", "QuotaReserved", "status", "False",
                                    "reason", "Inadmissible", "message",
                                    "LocalQueue nope doesn't exist"));
    char *r = wl_kueue_reason(wl);
    assert_string_equal(r, "Inadmissible: LocalQueue nope doesn't exist");
    free(r);
    jx_set_new(wl, "spec.active", json_false(), NULL);
    r = wl_kueue_reason(wl);
    assert_string_equal(r, "deactivated (spec.active=false)");
    free(r);
    assert_null(wl_kueue_reason(NULL));
    json_decref(wl);
}

/* The workload status write: merge form keeps the other check and carries the
 * resourceVersion; apply form holds only our entry. */
static void test_status_write_forms(void **state)
{
    (void)state;
    struct wl_fx f = RESERVED("Pending");
    json_t *wl = make_wl(&f);
    json_t *job = make_job(JOB_FREE);
    struct wl_placement pl = {.status = WL_PLACE_NEVER, .message = "needs 64 cpu, largest has 16"};
    struct wl_snapshot s = {.workload = wl,
                            .job = job,
                            .kind = kind_lookup("batch/v1", "Job"),
                            .check_name = CHECK,
                            .placement = &pl,
                            .now = NOW,
                            .opts = {.direct = true, .origin = "hub"}};
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    const struct wl_action *w = NULL;
    for (size_t i = 0; i < a.n; i++)
        if (a.v[i].type == WL_ACT_PATCH_WL_STATUS)
            w = &a.v[i];
    assert_non_null(w);
    assert_string_equal(jx_str(w->patch, "metadata.resourceVersion", ""), "10");
    json_t *checks = jx_arr(w->patch, "status.admissionChecks");
    assert_int_equal(json_array_size(checks), 2);
    assert_string_equal(jx_str(checks, "[0].name", ""), "other");
    assert_string_equal(jx_str(checks, "[0].state", ""), "Ready");
    assert_string_equal(jx_str(checks, "[1].state", ""), "Rejected");
    assert_string_equal(jx_str(checks, "[1].lastTransitionTime", ""), NOW);
    assert_non_null(strstr(jx_str(checks, "[1].message", ""), "needs 64 cpu"));
    assert_null(jx_get(w->patch, "status.conditions"));
    assert_string_equal(jx_str(w->apply, "kind", ""), "Workload");
    assert_string_equal(jx_str(w->apply, "apiVersion", ""), "kueue.x-k8s.io/v1beta1");
    assert_string_equal(jx_str(w->apply, "metadata.name", ""), "job-sample-1a2b3");
    assert_string_equal(jx_str(w->apply, "metadata.namespace", ""), "default");
    assert_int_equal(json_array_size(jx_arr(w->apply, "status.admissionChecks")), 1);
    assert_string_equal(jx_str(w->apply, "status.admissionChecks[0].name", ""), CHECK);
    wl_actions_free(&a);

    /* an apply holds our entry and ClusterAssigned even when only one changes
     * (an omitted field would lose its owner and be removed) */
    struct wl_fx fa = RESERVED_ASSIGNED("Pending");
    json_t *wla = make_wl(&fa);
    json_t *jobp = make_job(JOB_PLACED_C1);
    json_t *run = make_copy(jobp, COPY_STATUS_RUNNING);
    struct wl_copy rc1 = {.cluster = "c1", .obj = run};
    struct wl_snapshot sa = {.workload = wla,
                             .job = jobp,
                             .kind = kind_lookup("batch/v1", "Job"),
                             .check_name = CHECK,
                             .copies = &rc1,
                             .n_copies = 1,
                             .placed = {.reachable = true, .usable = true},
                             .now = NOW,
                             .opts = {.direct = true, .origin = "hub"}};
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&sa, &a, NULL), 0);
    w = NULL;
    for (size_t i = 0; i < a.n; i++)
        if (a.v[i].type == WL_ACT_PATCH_WL_STATUS)
            w = &a.v[i];
    assert_non_null(w);
    assert_null(jx_get(w->patch, "status.conditions")); /* unchanged: not in the merge form */
    assert_int_equal(json_array_size(jx_arr(w->apply, "status.conditions")), 1);
    assert_string_equal(jx_str(w->apply, "status.conditions[0].type", ""), "ClusterAssigned");
    assert_string_equal(jx_str(w->apply, "status.conditions[0].status", ""), "True");
    assert_int_equal(json_array_size(jx_arr(w->apply, "status.admissionChecks")), 1);
    assert_non_null(
        strstr(jx_str(w->apply, "status.admissionChecks[0].message", ""), "running on cluster c1"));
    wl_actions_free(&a);
    json_decref(wla);
    json_decref(jobp);
    json_decref(run);

    /* a message longer than Kueue's limit is truncated */
    char *big = xmalloc(40000);
    memset(big, 'x', 39999);
    big[39999] = '\0';
    pl.message = big;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    for (size_t i = 0; i < a.n; i++)
        if (a.v[i].type == WL_ACT_PATCH_WL_STATUS)
            assert_int_equal(strlen(jx_str(a.v[i].patch, "status.admissionChecks[1].message", "")),
                             WL_CHECK_MESSAGE_MAX);
    wl_actions_free(&a);
    /* cut on a character boundary: a 2-byte character or a '%' (3 bytes written) that does
     * not fit is left out whole (the check message is "the workload fits no cluster: " and
     * ours) */
    static const char prefix[] = "the workload fits no cluster: ";
    const size_t pfx = sizeof prefix - 1;
    static const struct {
        size_t as;
        const char *tail;
        size_t want;
    } cuts[] = {{WL_CHECK_MESSAGE_MAX - 2,
                 "\xc3\xa9"
                 "b",
                 WL_CHECK_MESSAGE_MAX},
                {WL_CHECK_MESSAGE_MAX - 1, "\xc3\xa9", WL_CHECK_MESSAGE_MAX - 1},
                {WL_CHECK_MESSAGE_MAX - 2, "%", WL_CHECK_MESSAGE_MAX - 2},
                {WL_CHECK_MESSAGE_MAX - 3, "%zz", WL_CHECK_MESSAGE_MAX},
                {WL_CHECK_MESSAGE_MAX + 5, "", WL_CHECK_MESSAGE_MAX}};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        memset(big, 'x', cuts[c].as - pfx);
        memcpy(big + cuts[c].as - pfx, cuts[c].tail, strlen(cuts[c].tail) + 1);
        wl_actions_init(&a);
        assert_int_equal(wl_decide(&s, &a, NULL), 0);
        bool seen = false;
        for (size_t i = 0; i < a.n; i++) {
            if (a.v[i].type != WL_ACT_PATCH_WL_STATUS)
                continue;
            const char *m = jx_str(a.v[i].patch, "status.admissionChecks[1].message", "");
            if (strncmp(m, prefix, pfx) != 0 || m[pfx] != 'x')
                fail_msg("message starts \"%.40s\"", m);
            assert_int_equal(strlen(m), cuts[c].want);
            if (cuts[c].want == WL_CHECK_MESSAGE_MAX && cuts[c].tail[0] == '%')
                assert_memory_equal(m + cuts[c].as, "\xef\xbc\x85", 3);
            seen = true;
        }
        assert_true(seen);
        wl_actions_free(&a);
    }
    free(big);

    /* snapshot errors */
    s.check_name = NULL;
    wl_actions_init(&a);
    struct err e;
    assert_int_equal(wl_decide(&s, &a, &e), -EINVAL);
    assert_int_equal(a.n, 0);
    json_decref(wl);
    json_decref(job);
}

/* defer_running (the driver: other jobs are being dispatched): the copy's counts go to the
 * annotation at once, the check's "running" message waits (deferred) when it is the Workload
 * write's only change; written when ClusterAssigned must be written anyway, never deferred
 * for a finished copy, nothing deferred once the message says running. */
static void test_defer_running(void **state)
{
    (void)state;
    /* an earlier pass's error is the message: "running" replaces it */
    struct wl_fx fx = {.reserved = RES_TRUE,
                       .state = "Pending",
                       .assigned = true,
                       .msg = "cannot copy to cluster c1: connection refused"};
    json_t *wl = make_wl(&fx);
    json_t *job = make_job(JOB_PLACED_C1);
    json_t *run = make_copy(job, COPY_STATUS_RUNNING);
    struct wl_copy cp = {.cluster = "c1", .obj = run};
    struct wl_snapshot s = {.workload = wl,
                            .job = job,
                            .kind = kind_lookup("batch/v1", "Job"),
                            .check_name = CHECK,
                            .copies = &cp,
                            .n_copies = 1,
                            .placed = {.reachable = true, .usable = true},
                            .now = NOW,
                            .defer_running = true,
                            .opts = {.direct = true, .origin = "hub"}};
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    char *d = wl_actions_describe(&a);
    assert_string_equal(d, "patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/"
                           "remote-status\":\"{\\\"active\\\":2,\\\"cluster\\\":\\\"c1\\\","
                           "\\\"failed\\\":0,\\\"ready\\\":2,\\\"succeeded\\\":1}\"}}}\n");
    assert_true(a.deferred);
    free(d);
    wl_actions_free(&a);

    /* not deferred: the same without defer_running */
    s.defer_running = false;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    d = wl_actions_describe(&a);
    assert_non_null(strstr(d, "\"message\":\"running on cluster c1\""));
    assert_false(a.deferred);
    free(d);
    wl_actions_free(&a);

    /* ClusterAssigned to write anyway: the running message goes in the same write */
    json_decref(wl);
    fx.assigned = false;
    wl = make_wl(&fx);
    s.workload = wl;
    s.defer_running = true;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    d = wl_actions_describe(&a);
    assert_non_null(strstr(d, "\"message\":\"running on cluster c1\""));
    assert_non_null(strstr(d, "\"reason\":\"ClusterAssigned\""));
    assert_false(a.deferred);
    free(d);
    wl_actions_free(&a);

    /* a finished copy: the final message is never deferred */
    json_decref(wl);
    fx.assigned = true;
    wl = make_wl(&fx);
    s.workload = wl;
    json_t *done = make_copy(job, COPY_STATUS_COMPLETE);
    cp.obj = done;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    d = wl_actions_describe(&a);
    assert_non_null(strstr(d, "\"message\":\"finished on cluster c1: succeeded\""));
    assert_false(a.deferred);
    free(d);
    wl_actions_free(&a);

    /* the message already says running: nothing to write, nothing deferred */
    json_decref(wl);
    fx.msg = "running on cluster c1";
    wl = make_wl(&fx);
    s.workload = wl;
    cp.obj = run;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].type, WL_ACT_PATCH_JOB);
    assert_false(a.deferred);
    wl_actions_free(&a);
    json_decref(wl);
    json_decref(job);
    json_decref(run);
    json_decref(done);
}

/* The copy carries the flavor's nodeSelector whether the hub job has it in its spec
 * (XF_INJECT_SPEC) or only in its record (XF_INJECT_COPY, the built-in syncer's placement). */
static void create_copy_object(int how)
{
    struct wl_fx f = RESERVED_ASSIGNED("Pending");
    json_t *wl = make_wl(&f);
    json_t *job = make_job(how);
    if (how == JOB_PLACED_C1_COPY)
        assert_null(jx_get(job, "spec.template.spec.nodeSelector"));
    struct wl_snapshot s = {.workload = wl,
                            .job = job,
                            .kind = kind_lookup("batch/v1", "Job"),
                            .check_name = CHECK,
                            .now = NOW,
                            .placed = {.reachable = true, .usable = true},
                            .opts = {.direct = true, .origin = "hub-a"}};
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    assert_int_equal(a.v[0].type, WL_ACT_CREATE_COPY);
    const json_t *o = a.v[0].object;
    assert_string_equal(jx_label(o, XF_LABEL_ORIGIN), "hub-a");
    assert_string_equal(jx_label(o, XF_LABEL_ORIGIN_UID), "job-uid");
    assert_null(jx_get(o, "spec.suspend"));
    assert_string_equal(jx_str(o, "spec.template.spec.nodeSelector.instance", ""), "spot");
    wl_actions_free(&a);
    json_decref(wl);
    json_decref(job);
}

static void test_create_copy_object(void **state)
{
    (void)state;
    create_copy_object(JOB_PLACED_C1);
    create_copy_object(JOB_PLACED_C1_COPY);
}

static void test_podset_labels(void **state)
{
    (void)state;
    json_t *wl = J("{\"status\":{\"admission\":{\"podSetAssignments\":[{\"name\":\"master\","
                   "\"flavors\":{\"cpu\":\"a\",\"nvidia.com/gpu\":\"b\"}},{\"name\":\"worker\","
                   "\"flavors\":{\"cpu\":\"unknown\"}},{\"flavors\":{}}]}}}");
    json_t *fl = J("{\"a\":{\"x\":\"1\"},\"b\":{\"y\":\"2\",\"x\":\"9\"}}");
    json_t *got = wl_podset_labels(wl, fl);
    json_t *want = J("{\"master\":{\"x\":\"1\",\"y\":\"2\"},\"worker\":{}}");
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
    json_decref(wl);
    json_decref(fl);
    char *t = wl_placement_token(NULL);
    assert_null(t);
}

static bool hub_has(void *ud, const char *uid)
{
    (void)ud;
    return strcmp(uid, "alive") == 0;
}

static void test_gc_orphans(void **state)
{
    (void)state;
    const char *lab = "\"app.kubernetes.io/managed-by\":\"kueue-ks\",\"kueue-ks.io/origin\":";
    json_t *objs[5];
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"labels\":{%s"
             "\"hub\",\"kueue-ks.io/origin-uid\":\"alive\"}}}",
             lab);
    objs[0] = J(buf);
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\",\"labels\":{%s"
             "\"hub\",\"kueue-ks.io/origin-uid\":\"dead\"}}}",
             lab);
    objs[1] = J(buf);
    /* another hub's object with a dead uid: not ours */
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"c\",\"labels\":{%s"
             "\"other-hub\",\"kueue-ks.io/origin-uid\":\"dead\"}}}",
             lab);
    objs[2] = J(buf);
    /* a user's object without labels */
    objs[3] = J("{\"metadata\":{\"name\":\"d\"}}");
    /* ours but without an origin uid: left alone */
    snprintf(buf, sizeof buf, "{\"metadata\":{\"name\":\"e\",\"labels\":{%s\"hub\"}}}", lab);
    objs[4] = J(buf);
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_gc_orphans("c1", (const json_t *const *)objs, 5, "hub", hub_has, NULL, &a),
                     1);
    char *d = wl_actions_describe(&a);
    assert_string_equal(d, "delete-copy c1 ns/b\n");
    free(d);
    wl_actions_free(&a);
    for (size_t i = 0; i < 5; i++)
        json_decref(objs[i]);
}

/* A kind outside the table (discovered): placed by the label only, Warning
 * Events UnknownJobKind, copied without a suspend rule, status copied whole. */
static const struct kind_def *widget_kind(struct kind_def **own)
{
    json_t *rl = J("{\"kind\":\"APIResourceList\",\"groupVersion\":\"example.com/v1\","
                   "\"resources\":[{\"name\":\"widgets\",\"kind\":\"Widget\",\"namespaced\":true,"
                   "\"verbs\":[\"create\",\"delete\",\"get\",\"list\",\"patch\",\"update\","
                   "\"watch\"]}]}");
    *own = kind_dynamic_new(rl, "example.com", "v1", "Widget", NULL);
    json_decref(rl);
    assert_non_null(*own);
    return *own;
}

/* A reserved Workload's snapshot with placement `pl` computed (direct transport, cluster
 * usable): what the driver hands wl_decide() when the job is to be placed. */
static struct wl_snapshot placing_snapshot(json_t *wl, json_t *job, const struct kind_def *k,
                                           json_t *flavors, const struct wl_placement *pl)
{
    return (struct wl_snapshot){.workload = wl,
                                .job = job,
                                .kind = k,
                                .check_name = CHECK,
                                .flavor_labels = flavors,
                                .placement = pl,
                                .placed = {.reachable = true, .usable = true},
                                .now_ms = 1000000,
                                .now = NOW,
                                .opts = {.direct = true, .origin = "hub"}};
}

/* The check message, as Kueue relays it in an Event whose format string it is: the
 * placement's own "placed on cluster c1 (...)" is not prefixed again, and a '%' (here from the
 * placement's text) is written as U+FF05, so Kueue's Event shows the text and no
 * "%!o(MISSING)". */
static void test_check_message_as_kueue_relays_it(void **state)
{
    (void)state;
    struct wl_fx f = RESERVED("Pending");
    json_t *wl = make_wl(&f);
    json_t *job = make_job(JOB_FREE);
    json_t *flavors = J("{\"spot\":{\"instance\":\"spot\"}}");
    struct wl_placement pl = {
        .status = WL_PLACE_OK,
        .cluster = "c1",
        .message = "placed on cluster c1 (spread: 99.6% of its capacity free after placement)"};
    struct wl_snapshot s = placing_snapshot(wl, job, kind_lookup("batch/v1", "Job"), flavors, &pl);
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    char *d = wl_actions_describe(&a);
    assert_non_null(strstr(d, "\"message\":\"placed on cluster c1 (spread: 99.6\xef\xbc\x85 of its "
                              "capacity free after placement)\""));
    assert_null(strstr(d, "c1: placed on"));
    free(d);
    wl_actions_free(&a);
    json_decref(flavors);
    json_decref(job);
    json_decref(wl);
}

static void test_generic_kind(void **state)
{
    (void)state;
    struct kind_def *own;
    const struct kind_def *k = widget_kind(&own);
    struct wl_fx f = RESERVED("Pending");
    json_t *wl = make_wl(&f);
    json_t *job = J("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{"
                    "\"name\":\"sample\",\"namespace\":\"default\",\"uid\":\"job-uid\","
                    "\"resourceVersion\":\"5\"},\"spec\":{\"size\":3,\"template\":{\"spec\":{"
                    "\"containers\":[{\"name\":\"c\"}]}}}}");
    json_t *flavors = J("{\"spot\":{\"instance\":\"spot\"}}");
    struct wl_placement pl = {.status = WL_PLACE_OK, .cluster = "c1", .message = "most free"};
    struct wl_snapshot s = placing_snapshot(wl, job, k, flavors, &pl);
    assert_true(wl_wants_placement(&s, NULL));
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    char *d = wl_actions_describe(&a);
    /* the label and our annotations only: the flavor's nodeLabels are not injected */
    assert_non_null(strstr(d, "patch-job {\"metadata\":{\"annotations\":{\"kueue-ks.io/placed-by\":"
                              "\"kueue-ks\",\"kueue-ks.io/placed-for\":\"" TOKEN "\"},\"labels\":{"
                              "\"kubestellar.io/cluster\":\"c1\"},\"resourceVersion\":\"5\"}}\n"));
    assert_null(strstr(d, "\"nodeSelector\""));
    assert_non_null(strstr(d, "event job Warning UnknownJobKind: kind example.com/v1 Widget is "
                              "not in kueue-ks's job kind table: placed on cluster c1"));
    assert_non_null(strstr(d, "event workload Warning UnknownJobKind: "));
    assert_non_null(strstr(d, "reserve c1\n"));
    free(d);
    wl_actions_free(&a);

    /* placed: the copy keeps the spec as it is (no suspend rule known) */
    struct xf_origin o = {.origin = "hub", .origin_uid = "job-uid"};
    xf_place(k, job, "c1", NULL, TOKEN, XF_INJECT_SPEC, NULL);
    s.placement = NULL;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    assert_true(a.n >= 1);
    assert_int_equal(a.v[0].type, WL_ACT_CREATE_COPY);
    assert_string_equal(a.v[0].cluster, "c1");
    assert_int_equal(jx_int(a.v[0].object, "spec.size", 0), 3);
    assert_string_equal(jx_label(a.v[0].object, XF_LABEL_ORIGIN_UID), "job-uid");
    wl_actions_free(&a);

    /* the worker's status comes back whole; no Warning again */
    json_t *copy = xf_downsync(k, job, &o, NULL);
    json_object_set_new(copy, "status", J("{\"phase\":\"Done\",\"ready\":2}"));
    struct wl_copy cp = {.cluster = "c1", .obj = copy};
    s.copies = &cp;
    s.n_copies = 1;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    d = wl_actions_describe(&a);
    assert_non_null(strstr(d, "patch-job-status {\"status\":{\"phase\":\"Done\",\"ready\":2}}\n"));
    assert_null(strstr(d, "UnknownJobKind"));
    assert_non_null(strstr(d, "running on cluster c1"));
    free(d);
    wl_actions_free(&a);
    json_decref(copy);
    json_decref(flavors);
    json_decref(wl);
    json_decref(job);
    kind_dynamic_free(own);
}

/* PyTorchJob "sample" (suspended) with a Master of one replica; `workers`: more replica specs
 * after it (",\"Worker\":{...}"), `tail`: more root members (",\"status\":{...}"). */
#define PTJ(workers, tail)                                                                         \
    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"metadata\":{\"name\":"          \
    "\"sample\",\"namespace\":\"default\",\"uid\":\"job-uid\",\"resourceVersion\":\"7\"},"         \
    "\"spec\":{\"runPolicy\":{\"suspend\":true},\"pytorchReplicaSpecs\":{\"Master\":{"             \
    "\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}" workers          \
    "}}" tail "}"

/* The snapshot of `wl` whose `job` (of kind `k`) is placed on a reachable, usable worker, with
 * the direct transport and no copy seen. */
static struct wl_snapshot placed_direct(json_t *wl, json_t *job, const struct kind_def *k)
{
    return (struct wl_snapshot){.workload = wl,
                                .job = job,
                                .kind = k,
                                .check_name = CHECK,
                                .placed = {.reachable = true, .usable = true},
                                .now = NOW,
                                .opts = {.direct = true, .origin = "hub"}};
}

/* The action of `a` of type t (the n-th of them), or NULL. */
static const struct wl_action *action_of(const struct wl_actions *a, enum wl_act_type t, int n)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].type == t && n-- == 0)
            return &a->v[i];
    return NULL;
}

/* The placing pass's chained copy (direct transport) is the copy state 6 makes of the job as
 * the placement patch leaves it, and its Dispatched Event says the same; both wait for the
 * patch (after_job). With a copy already sent, or KubeStellar's transport, nothing is chained. */
static void test_chained_copy_is_state6s(void **state)
{
    (void)state;
    struct wl_fx f = RESERVED("Pending");
    json_t *wl = make_wl(&f);
    json_t *job = make_job(JOB_FREE);
    json_t *flavors = J("{\"spot\":{\"instance\":\"spot\"}}");
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    struct wl_placement pl = {.status = WL_PLACE_OK, .cluster = "c2", .message = "most free"};
    struct wl_snapshot s = placing_snapshot(wl, job, k, flavors, &pl);
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    assert_int_equal(a.outcome.kind, WL_OUT_PLACED);
    assert_true(a.outcome.chained);
    assert_true(a.outcome.sight_quiet); /* on the Workload and job as this pass writes them */
    const struct wl_action *patch = action_of(&a, WL_ACT_PATCH_JOB, 0);
    const struct wl_action *copy = action_of(&a, WL_ACT_CREATE_COPY, 0);
    const struct wl_action *ev = action_of(&a, WL_ACT_EVENT, 0);
    assert_non_null(patch);
    assert_non_null(copy);
    assert_non_null(ev);
    assert_false(patch->after_job);
    assert_true(copy->after_job);
    assert_true(ev->after_job);
    assert_string_equal(copy->cluster, "c2");

    /* state 6 on the job as the patch leaves it */
    json_t *placed = jx_merge_apply(job, patch->patch);
    struct wl_snapshot s6 = placed_direct(wl, placed, k);
    struct wl_actions a6;
    wl_actions_init(&a6);
    assert_int_equal(wl_decide(&s6, &a6, NULL), 0);
    assert_int_equal(a6.outcome.kind, WL_OUT_DISPATCHED);
    const struct wl_action *copy6 = action_of(&a6, WL_ACT_CREATE_COPY, 0);
    const struct wl_action *ev6 = action_of(&a6, WL_ACT_EVENT, 0);
    assert_non_null(copy6);
    assert_non_null(ev6);
    assert_true(json_equal(copy->object, copy6->object));
    assert_string_equal(copy6->cluster, "c2");
    assert_string_equal(ev->reason, ev6->reason);
    assert_string_equal(ev->message, ev6->message);
    wl_actions_free(&a6);
    wl_actions_free(&a);

    /* a copy sent already (not yet seen), one anywhere, or the KubeStellar transport: placed
     * only */
    s.copy_sent = true;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    assert_false(a.outcome.chained);
    assert_null(action_of(&a, WL_ACT_CREATE_COPY, 0));
    wl_actions_free(&a);
    s.copy_sent = false;
    s.n_copies = 1;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    assert_false(a.outcome.chained);
    assert_null(action_of(&a, WL_ACT_CREATE_COPY, 0));
    wl_actions_free(&a);
    s.n_copies = 0;
    s.opts.direct = false;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    assert_false(a.outcome.chained);
    assert_null(action_of(&a, WL_ACT_CREATE_COPY, 0));
    wl_actions_free(&a);
    json_decref(placed);
    json_decref(flavors);
    json_decref(job);
    json_decref(wl);
}

/* The Dispatched Event names the nodeSelector added to the copy as a user writes one
 * ("instance=spot"), each template's path when there are several (a PyTorchJob's); it carried
 * the raw record, {"spec.template":{"instance":"spot"}}. */
static void test_dispatched_event_selector_words(void **state)
{
    (void)state;
    struct wl_fx f = {.reserved = RES_TRUE, .state = "Pending", .assigned = true, .msg = ""};
    json_t *wl = make_wl(&f);
    const struct kind_def *pk = kind_lookup("kubeflow.org/v1", "PyTorchJob");
    json_t *pj = J(PTJ(",\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{"
                       "\"name\":\"c\"}]}}}",
                       ""));
    json_t *labels = J("{\"master\":{\"instance\":\"spot\"},\"worker\":{\"instance\":\"h100\","
                       "\"zone\":\"a\"}}");
    assert_true(xf_place(pk, pj, "c1", labels, TOKEN, XF_INJECT_SPEC, NULL) >= 0);
    struct wl_snapshot s = placed_direct(wl, pj, pk);
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    char *d = wl_actions_describe(&a);
    const char *want = "Dispatched: Created on cluster c1; nodeSelector added from the admitted "
                       "flavors: instance=spot (spec.pytorchReplicaSpecs.Master.template); "
                       "instance=h100,zone=a (spec.pytorchReplicaSpecs.Worker.template)";
    if (!strstr(d, want))
        fail_msg("no \"%s\" in:\n%s", want, d);
    free(d);
    wl_actions_free(&a);
    json_decref(labels);
    json_decref(pj);
    json_decref(wl);
}

/* Once the hub shows the copy's result: a batch/v1 Job's status is its Job controller's
 * (not written again), but a kind whose whole status is copied keeps following the copy,
 * whose replica counts still change after the result. */
static void test_status_after_result(void **state)
{
    (void)state;
    struct wl_fx f = {.reserved = RES_TRUE,
                      .state = "Pending",
                      .assigned = true,
                      .msg = "finished on cluster c1: succeeded"};
    json_t *wl = make_wl(&f);
    const struct kind_def *pk = kind_lookup("kubeflow.org/v1", "PyTorchJob");
    json_t *pj = J(PTJ("", ""));
    xf_place(pk, pj, "c1", NULL, TOKEN, XF_INJECT_SPEC, NULL);
    struct xf_origin o = {.origin = "hub", .origin_uid = "job-uid"};
    json_t *copy = xf_downsync(pk, pj, &o, NULL);
    assert_non_null(copy);
    const char *done = "\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"}]}";
    char buf[256];
    snprintf(buf, sizeof buf, "{\"replicaStatuses\":{\"Worker\":{\"active\":2}},%s", done);
    json_object_set_new(pj, "status", J(buf));
    snprintf(buf, sizeof buf, "{\"replicaStatuses\":{\"Worker\":{\"active\":0}},%s", done);
    json_object_set_new(copy, "status", J(buf));
    struct wl_copy cp = {.cluster = "c1", .obj = copy};
    struct wl_snapshot s = {.workload = wl,
                            .job = pj,
                            .kind = pk,
                            .check_name = CHECK,
                            .copies = &cp,
                            .n_copies = 1,
                            .placed = {.reachable = true, .usable = true},
                            .now = NOW,
                            .opts = {.direct = true, .origin = "hub"}};
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    char *d = wl_actions_describe(&a);
    if (!strstr(d,
                "patch-job-status {\"status\":{\"replicaStatuses\":{\"Worker\":{\"active\":0}}}}"))
        fail_msg("PyTorchJob: the copy's counts after the result not followed:\n%s", d);
    free(d);
    wl_actions_free(&a);
    json_decref(copy);
    json_decref(pj);

    /* batch/v1: the hub job shows Complete, amended by its Job controller: no status write */
    json_t *job = make_job(JOB_PLACED_C1_DONE);
    json_t *jc = make_copy(job, "{\"succeeded\":3,\"startTime\":\"T1\",\"conditions\":[{\"type\":"
                                "\"Complete\",\"status\":\"True\"}]}");
    cp.obj = jc;
    s.job = job;
    s.kind = kind_lookup("batch/v1", "Job");
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    for (size_t i = 0; i < a.n; i++)
        assert_int_not_equal(a.v[i].type, WL_ACT_PATCH_JOB_STATUS);
    wl_actions_free(&a);
    json_decref(jc);
    json_decref(job);
    json_decref(wl);
}

/* Real Kueue clears the reservation of an evicted workload only once the hub
 * job is inactive (jobframework: Job status.active, Kubeflow
 * replicaStatuses[*].active, JobSet replicatedJobsStatus[*].active). The
 * activity we mirrored from the worker must be undone with the placement, or
 * the eviction (preemption, worker-lost Retry) never completes. */
static void test_evicting_resets_mirrored_activity(void **state)
{
    (void)state;
    struct wl_fx f = {.reserved = RES_TRUE_EVICTING, .state = "Pending", .assigned = true};
    json_t *wl = make_wl(&f);
    const struct kind_def *pk = kind_lookup("kubeflow.org/v1", "PyTorchJob");
    json_t *pj =
        J(PTJ("", ",\"status\":{\"replicaStatuses\":{\"Master\":{\"active\":1},\"Worker\":{"
                  "\"active\":2,\"succeeded\":1}},\"conditions\":[{\"type\":\"Running\","
                  "\"status\":\"True\"}]}"));
    xf_place(pk, pj, "c1", NULL, TOKEN, XF_INJECT_SPEC, NULL);
    struct wl_snapshot s = placed_direct(wl, pj, pk);
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    char *d = wl_actions_describe(&a);
    if (!strstr(d, "patch-job-status {\"status\":{\"replicaStatuses\":{\"Master\":{\"active\":0},"
                   "\"Worker\":{\"active\":0}}}}\n"))
        fail_msg("PyTorchJob: mirrored activity not reset:\n%s", d);
    free(d);
    wl_actions_free(&a);

    /* once nothing is active any more, no further status write */
    json_object_set_new(pj, "status", J("{\"replicaStatuses\":{\"Master\":{\"active\":0}}}"));
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    for (size_t i = 0; i < a.n; i++)
        assert_int_not_equal(a.v[i].type, WL_ACT_PATCH_JOB_STATUS);
    wl_actions_free(&a);
    json_decref(pj);

    /* batch/v1 Job mirrored continuously (spec.managedBy kueue-ks.io/syncer) */
    json_t *job = make_job(JOB_PLACED_C1);
    jx_set_new(job, "spec.managedBy", json_string(XF_MANAGED_BY), NULL);
    json_object_set_new(job, "status", J("{\"active\":2,\"ready\":1,\"succeeded\":1}"));
    s.job = job;
    s.kind = kind_lookup("batch/v1", "Job");
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    d = wl_actions_describe(&a);
    if (!strstr(d, "patch-job-status {\"status\":{\"active\":0,\"ready\":0}}\n"))
        fail_msg("Job: mirrored activity not reset:\n%s", d);
    /* the progress annotation of the undone run goes with the placement */
    jx_set_annotation(job, XF_ANN_REMOTE_STATUS, "{\"cluster\":\"c1\",\"active\":2}");
    free(d);
    wl_actions_free(&a);
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    d = wl_actions_describe(&a);
    if (!strstr(d, "patch-job {\"metadata\":{\"annotations\":null,"))
        fail_msg("Job: remote-status annotation kept after the eviction:\n%s", d);
    free(d);
    wl_actions_free(&a);
    json_decref(job);
    json_decref(wl);
}

/* Every delete-copy names the uid of the copy the decision saw (a precondition). */
static void test_delete_carries_copy_uid(void **state)
{
    (void)state;
    struct wl_fx f = {.reserved = RES_FALSE_EVICTED, .state = "Pending", .assigned = true};
    json_t *wl = make_wl(&f);
    json_t *job = make_job(JOB_PLACED_C1);
    json_t *copy = make_copy(job, COPY_STATUS_RUNNING);
    jx_set_new(copy, "metadata.uid", json_string("copy-uid-1"), NULL);
    struct wl_copy cp = {.cluster = "c1", .obj = copy};
    struct wl_snapshot s = {.workload = wl,
                            .job = job,
                            .kind = kind_lookup("batch/v1", "Job"),
                            .check_name = CHECK,
                            .copies = &cp,
                            .n_copies = 1,
                            .now = NOW,
                            .opts = {.direct = true, .origin = "hub"}};
    struct wl_actions a;
    wl_actions_init(&a);
    assert_int_equal(wl_decide(&s, &a, NULL), 0);
    size_t n = 0;
    for (size_t i = 0; i < a.n; i++) {
        if (a.v[i].type != WL_ACT_DELETE_COPY)
            continue;
        n++;
        assert_non_null(a.v[i].uid);
        assert_string_equal(a.v[i].uid, "copy-uid-1");
    }
    assert_int_equal(n, 1);
    wl_actions_free(&a);
    json_decref(copy);
    json_decref(job);
    json_decref(wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_table_copy_form),
        cmocka_unit_test(test_not_admitted_message_order),
        cmocka_unit_test(test_unreserved_explained_once),
        cmocka_unit_test(test_unreserved_fresh_no_event),
        cmocka_unit_test(test_unreserved_quiet_while_new),
        cmocka_unit_test(test_kueue_reason),
        cmocka_unit_test(test_evicted_told_once),
        cmocka_unit_test(test_not_admitted_same),
        cmocka_unit_test(test_unreserved_capacity_change_silent),
        cmocka_unit_test(test_events_once),
        cmocka_unit_test(test_rejected_by_check),
        cmocka_unit_test(test_status_write_forms),
        cmocka_unit_test(test_defer_running),
        cmocka_unit_test(test_create_copy_object),
        cmocka_unit_test(test_podset_labels),
        cmocka_unit_test(test_gc_orphans),
        cmocka_unit_test(test_check_message_as_kueue_relays_it),
        cmocka_unit_test(test_generic_kind),
        cmocka_unit_test(test_evicting_resets_mirrored_activity),
        cmocka_unit_test(test_status_after_result),
        cmocka_unit_test(test_dispatched_event_selector_words),
        cmocka_unit_test(test_chained_copy_is_state6s),
        cmocka_unit_test(test_delete_carries_copy_uid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
