/* agent: the ClusterMetrics agent for one worker cluster (see agent.h). */
#include "controllers/agent/agent.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/agent/podrec.h"
#include "pkg/json/jsonx.h"
#include "pkg/podres/podres.h"
#include "pkg/kube/cache.h"
#include "pkg/kube/informer.h"
#include "pkg/reasons/reasons.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"
#include "pkg/util/plural.h"
#include "pkg/util/uid.h"

#define KKS_KEY           "kks" /* computed fields added by the projections */
#define RETRY_INITIAL_S   1.0
#define RETRY_MAX_S       30.0
#define SYNC_POLL_S       0.05
#define JOBS_GRACE_S      5.0  /* how long the first write waits for the Job list */
#define JOBS_POLL_S       0.25 /* checks whether the Job list arrived, until it does */
#define MANAGED_BY_LABEL  "app.kubernetes.io/managed-by"
#define AGENT_UNSCHED_MAX 256 /* unschedulableJobs entries (the first by namespace/name) */

/* Where projection problems go: the logger, and for agent_compute_nodes() a
 * JSON array of lines. */
struct sink {
    const struct logger *lg;
    const char *cluster;
    json_t *warnings; /* may be NULL */
    uint64_t bad_pods;
    jx_lifetime_fn lifetime; /* may be NULL */
};

/* A worker copy of a hub Job (its canonical uid as bytes) and how many of its pods a compute
 * counted (status.countedJobs). */
struct counted {
    uint8_t uid[16];
    uint32_t pods;
};

/* Counted copies; once counted_finish()ed sorted by uid, one entry each. */
struct counted_set {
    struct counted *v;
    size_t n, cap;
};

struct agent {
    struct ev_loop *loop;
    struct kube_client *worker, *hub;
    char *cluster;
    double min_interval_s, heartbeat_s;
    size_t counted_max; /* countedJobs entries per write */
    const struct logger *lg;
    void (*on_change)(void *ud, struct agent *a);
    void *on_change_ud;
    struct sink sink;

    /* The worker's informers, through the cache (shared with the other users of the worker
     * client: the workload controller reads the same Jobs); the informer pointers are the
     * cache's, borrowed. jobs: the worker copies of hub Jobs only. */
    struct kcache *cache, *own_cache; /* own_cache: made when opts gave none */
    struct cache_reg *nodes_reg, *pods_reg, *jobs_reg;
    struct informer *nodes, *pods, *jobs;
    bool running;
    bool source_down; /* the watched cluster is unreachable: do not vouch for stale data */

    ev_timer flush_timer;
    ev_timer hb_timer;
    ev_timer jobs_timer; /* until the Job informer has synced */
    double jobs_grace_s;
    double started_t; /* monotonic time of agent_start */
    bool dirty;
    bool heartbeat_due;
    bool have_last;
    double last_t; /* monotonic time of the last write (or change, without hub) */
    bool have_written_t;
    double written_t; /* monotonic time the last status write started */
    double retry_s;   /* current retry backoff */

    json_t *computed; /* last computed {nodes, unschedulableJobs} of the status */
    json_t *written;  /* the same, of the last successful full write */
    /* The counts the hub has from this agent: as of the last successful full write, each
     * copy at the count last listed (counted_delta). Empty: list everything again. */
    struct counted_set prev;
    bool counted_seeded; /* prev was set from the first counts known (counted_seed) */
    char ready_since[40];

    /* The write in flight. */
    struct kube_call *call;
    json_t *pending_body;
    json_t *pending_nodes;           /* NULL for a heartbeat */
    struct counted_set pending_prev; /* what prev becomes when the full write in flight lands */
    bool pending_more;               /* its countedJobs left changed copies for a later write */
    bool tried_create;

    struct agent_stats stats;
};

/* ---- projections -------------------------------------------------------- */

static void sink_warn(struct sink *s, const char *kind, const char *key, const char *msg)
{
    if (s->warnings)
        json_array_append_new(s->warnings, json_sprintf("%s %s: %s", kind, key, msg));
    log_warn(s->lg, "skipping bad data", "cluster", s->cluster ? s->cluster : "", "object", key,
             "kind", kind, "error", msg);
}

static const char *obj_key(json_t *obj, char *buf, size_t n)
{
    json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    snprintf(buf, n, "%s%s%s", ns ? ns : "", ns && ns[0] ? "/" : "", name ? name : "?");
    return buf;
}

/* Node: labels, taints, unschedulable, plus kks.allocatable (canonical
 * quantities, bad ones left out) and kks.ready. */
static json_t *project_node(json_t *obj, void *ud)
{
    static const char *const paths[] = {"metadata.labels", "spec.taints", "spec.unschedulable",
                                        NULL};
    struct sink *s = ud;
    char key[JX_OBJ_KEY_MAX + 1];
    json_t *p = store_project_fields(obj, paths);
    json_t *kks = json_object();
    json_t *alloc = json_object();
    json_t *src = json_object_get(json_object_get(obj, "status"), "allocatable");
    if (src && !json_is_object(src)) {
        sink_warn(s, "node", obj_key(obj, key, sizeof key), "status.allocatable: not an object");
    } else {
        for (void *it = json_object_iter(src); it; it = json_object_iter_next(src, it)) {
            const char *k = json_object_iter_key(it);
            json_t *v = json_object_iter_value(it);
            struct qty q;
            struct err e;
            err_clear(&e);
            if (qty_parse_json(v, &q, &e) < 0 || qty_sign(&q) < 0) {
                char msg[ERR_MSG_MAX + 64];
                snprintf(msg, sizeof msg, "status.allocatable.%s: %s", k,
                         e.code ? e.msg : "negative quantity");
                sink_warn(s, "node", obj_key(obj, key, sizeof key), msg);
                continue;
            }
            json_object_set_new(alloc, k, qty_to_json(&q));
        }
    }
    json_object_set_new(kks, "allocatable", alloc);
    bool ready = false;
    json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    for (size_t i = 0; i < json_array_size(conds); i++) {
        json_t *c = json_array_get(conds, i);
        const char *type = json_string_value(json_object_get(c, "type"));
        if (type && !strcmp(type, "Ready")) {
            const char *st = json_string_value(json_object_get(c, "status"));
            ready = st && !strcmp(st, "True");
        }
    }
    json_object_set_new(kks, "ready", json_boolean(ready));
    json_object_set_new(p, KKS_KEY, kks);
    return p;
}

/* Pod: its compact record (podrec.h), computed once per change. */
static json_t *project_pod(json_t *obj, void *ud)
{
    struct sink *s = ud;
    struct err e;
    err_clear(&e);
    /* the record lives as long as the pod: away from the list's and the events' trees */
    if (s->lifetime)
        s->lifetime(true);
    json_t *rec = podrec_new(obj, &e);
    if (s->lifetime)
        s->lifetime(false);
    if (e.code) {
        char key[JX_OBJ_KEY_MAX + 1];
        s->bad_pods++;
        sink_warn(s, "pod", obj_key(obj, key, sizeof key), e.msg);
    }
    return rec;
}

/* ---- the computation ------------------------------------------------------ */

static const char *node_name(const json_t *n)
{
    const char *s = json_string_value(json_object_get(json_object_get(n, "metadata"), "name"));
    return s ? s : "";
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_node(const void *a, const void *b)
{
    return strcmp(node_name(*(json_t *const *)a), node_name(*(json_t *const *)b));
}

/* ---- countedJobs: compact counts and the delta a write lists ----------------- */

static void counted_free(struct counted_set *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

static void counted_push(struct counted_set *s, const struct counted *e)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = *e;
}

/* One more counted pod of copy `uid` (text): a uid that is not canonical is never listed (the
 * copy's reservation keeps the controller's other rules). */
static void counted_add(struct counted_set *s, const char *uid)
{
    struct counted e = {.pods = 1};
    if (uid_to_bytes(uid, strlen(uid), e.uid))
        counted_push(s, &e);
}

static int counted_cmp(const void *a, const void *b)
{
    return memcmp(((const struct counted *)a)->uid, ((const struct counted *)b)->uid, 16);
}

/* Sort by uid (the canonical text's order) and merge each copy's entries into one. */
static void counted_finish(struct counted_set *s)
{
    if (s->n == 0)
        return;
    qsort(s->v, s->n, sizeof *s->v, counted_cmp);
    size_t keep = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (keep > 0 && counted_cmp(&s->v[keep - 1], &s->v[i]) == 0) {
            uint32_t *p = &s->v[keep - 1].pods;
            *p = *p > UINT32_MAX - s->v[i].pods ? UINT32_MAX : *p + s->v[i].pods;
        } else {
            s->v[keep++] = s->v[i];
        }
    }
    s->n = keep;
}

/*
 * status.countedJobs of a write: the entries of `cur` whose count differs from `prev`'s
 * (absent: 0), [{uid, pods}] by uid, at most `max` (those beyond wait for a later write).
 * `next` (may be NULL) gets what prev becomes once the hub has that write: each copy of cur
 * at its listed count, else at its count in prev (the copies no longer counted leave it).
 * *more (may be NULL): whether the cap left some out. *gone (may be NULL): whether a copy of
 * prev is no longer counted (the hub may still list it: a write is due to replace that list).
 * New array.
 */
static json_t *counted_delta(const struct counted_set *cur, const struct counted_set *prev,
                             size_t max, struct counted_set *next, bool *more, bool *gone)
{
    json_t *out = json_array();
    size_t j = 0, matched = 0;
    for (size_t i = 0; i < cur->n; i++) {
        const struct counted *c = &cur->v[i], *p = NULL;
        while (j < prev->n && counted_cmp(&prev->v[j], c) < 0)
            j++;
        if (j < prev->n && counted_cmp(&prev->v[j], c) == 0) {
            p = &prev->v[j];
            matched++;
        }
        bool differs = !p || p->pods != c->pods;
        if (differs && json_array_size(out) == max && more)
            *more = true;
        if (differs && json_array_size(out) < max) {
            char uid[UID_TEXT_LEN];
            uid_from_bytes(c->uid, uid);
            json_array_append_new(out, json_pack("{s:s%, s:I}", "uid", uid, (size_t)UID_TEXT_LEN,
                                                 "pods", (json_int_t)c->pods));
            p = c;
        }
        if (p && next)
            counted_push(next, p);
    }
    if (gone)
        *gone = matched < prev->n;
    return out;
}

struct acc {
    struct podres_list req, lim, managed;
};

/* True when pod record r belongs to a hub workload: its controller is a Job in `job_uids`
 * (an object keyed by uid, may be NULL) or it is assumed. */
static bool pod_managed(const struct podrec *r, json_t *job_uids)
{
    return (r->flags & PODREC_ASSUMED) || (r->job && json_object_get(job_uids, r->job));
}

/* Add pod record p's requests and limits to the node it counts on (index: node name ->
 * position in acc); a pod of a copy in `job_uids` summed so is added to `counted` (may be
 * NULL). */
static void sum_pod(struct acc *acc, json_t *index, json_t *p, json_t *job_uids,
                    struct counted_set *counted)
{
    struct podrec r;
    if (podrec_read(p, &r) < 0 || !(r.flags & PODREC_COUNTS) || (r.flags & PODREC_NOSUMS))
        return;
    json_t *ix = json_object_get(index, r.node);
    if (!ix)
        return; /* bound to a node we do not (yet) know */
    struct acc *a = &acc[json_integer_value(ix)];
    /* a sum that overflows (absurd values) is dropped rather than wrapped */
    struct podres_list req = {0}, lim = {0};
    if (podrec_resources(&r, &req, &lim) == 0) {
        int in_sums = podres_add_list(&a->req, &req, NULL);
        (void)podres_add_list(&a->lim, &lim, NULL);
        if (pod_managed(&r, job_uids))
            (void)podres_add_list(&a->managed, &req, NULL);
        /* listed only when the sums hold it: the list says its pods are in them */
        if (in_sums == 0 && counted && r.job && json_object_get(job_uids, r.job))
            counted_add(counted, r.job);
    }
    podres_free(&req);
    podres_free(&lim);
}

/* status.nodes from projected nodes and pods (arrays, borrowed) and the uids
 * of the worker copies of hub Jobs (object keyed by uid, borrowed; NULL =
 * unknown: managedResourceRequests is left out). `counted` (empty, may be NULL) gets, per
 * copy, how many of its pods the requests include (counted_finish()ed). */
static json_t *compute_projected(json_t *nodes, json_t *pods, json_t *job_uids,
                                 struct counted_set *counted)
{
    size_t nn = json_array_size(nodes);
    json_t **sorted = xcalloc(nn ? nn : 1, sizeof *sorted);
    struct acc *acc = xcalloc(nn ? nn : 1, sizeof *acc);
    json_t *index = json_object();
    for (size_t i = 0; i < nn; i++)
        sorted[i] = json_array_get(nodes, i);
    qsort(sorted, nn, sizeof *sorted, cmp_node);
    for (size_t i = 0; i < nn; i++)
        json_object_set_new(index, node_name(sorted[i]), json_integer((json_int_t)i));

    for (size_t i = 0; i < json_array_size(pods); i++)
        sum_pod(acc, index, json_array_get(pods, i), job_uids, counted);
    if (counted)
        counted_finish(counted);

    json_t *out = json_array();
    for (size_t i = 0; i < nn; i++) {
        json_t *n = sorted[i];
        json_t *kks = json_object_get(n, KKS_KEY);
        json_t *spec = json_object_get(n, "spec");
        json_t *labels = json_object_get(json_object_get(n, "metadata"), "labels");
        json_t *taints = json_object_get(spec, "taints");
        json_t *alloc = json_object_get(kks, "allocatable");
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(node_name(n)));
        json_object_set_new(e, "allocatableResources",
                            json_is_object(alloc) ? jx_deep_copy(alloc) : json_object());
        json_object_set_new(e, "allocatedResourceRequests", podres_to_json(&acc[i].req));
        json_object_set_new(e, "allocatedResourceLimits", podres_to_json(&acc[i].lim));
        if (job_uids)
            json_object_set_new(e, "managedResourceRequests", podres_to_json(&acc[i].managed));
        json_object_set_new(e, "taints",
                            json_is_array(taints) ? jx_deep_copy(taints) : json_array());
        json_object_set_new(e, "labels",
                            json_is_object(labels) ? jx_deep_copy(labels) : json_object());
        json_object_set_new(e, "unschedulable",
                            json_boolean(json_is_true(json_object_get(spec, "unschedulable"))));
        json_object_set_new(e, "ready", json_boolean(json_is_true(json_object_get(kks, "ready"))));
        json_array_append_new(out, e);
        podres_free(&acc[i].req);
        podres_free(&acc[i].lim);
        podres_free(&acc[i].managed);
    }
    json_decref(index);
    free(sorted);
    free(acc);
    return out;
}

/* Keep in `by` ("<ns>/<name>" -> entry) the earliest of the copy's pods
 * reported for `cause` (u: the pod record's note) and count them. */
static void unsched_merge(json_t *by, const char *ns, const char *uid, const struct podrec_note *u,
                          const char *cause)
{
    char *key = xasprintf("%s/%s", ns, u->job);
    json_t *cur = json_object_get(by, key);
    int64_t n = cur ? json_integer_value(json_object_get(cur, "pods")) : 0;
    /* RFC 3339 in UTC from one writer: the string order is the time order;
     * the message breaks ties, so the result does not depend on store order */
    int c = cur ? strcmp(u->since, json_string_value(json_object_get(cur, "since"))) : -1;
    if (c < 0 ||
        (c == 0 && strcmp(u->message, json_string_value(json_object_get(cur, "message"))) < 0)) {
        cur = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "namespace", ns, "name", u->job,
                        "uid", uid, "reason", u->reason, "message", u->message, "since", u->since,
                        "cause", cause);
        if (!cur) { /* not UTF-8: cannot happen for strings of a parsed pod */
            free(key);
            return;
        }
        json_object_set_new(by, key, cur);
    }
    json_object_set_new(cur, "pods", json_integer(n + 1));
    free(key);
}

/* The copies' pods: unschedulable ones into `by`, not started ones into
 * `stall`, the uids of copies with a pod that ran into `progress` and of
 * copies with any pod into `haspods`. */
static void unsched_scan_pods(json_t *pods, json_t *job_uids, json_t *by, json_t *stall,
                              json_t *progress, json_t *haspods)
{
    for (size_t i = 0; i < json_array_size(pods); i++) {
        struct podrec r;
        if (podrec_read(json_array_get(pods, i), &r) < 0 || !r.job || !r.ns ||
            !json_object_get(job_uids, r.job))
            continue;
        json_object_set_new(haspods, r.job, json_true());
        if (r.flags & PODREC_PROGRESS)
            json_object_set_new(progress, r.job, json_true());
        if (r.flags & PODREC_UNSCHED)
            unsched_merge(by, r.ns, r.job, &r.note, AGENT_CAUSE_UNSCHEDULABLE);
        else if (r.flags & PODREC_STALL)
            unsched_merge(stall, r.ns, r.job, &r.note, AGENT_CAUSE_NOT_STARTED);
    }
}

/* A copy without pods (an idle Job, see job_idle): its entry. */
static json_t *nopods_entry(json_t *job)
{
    json_t *md = json_object_get(job, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *uid = json_string_value(json_object_get(md, "uid"));
    /* since the Job controller started it (set again at each resume), not since its creation:
     * a copy held suspended for long has had no chance to create pods */
    const char *since =
        json_string_value(json_object_get(json_object_get(job, "status"), "startTime"));
    if (!ns || !name || !uid || !since)
        return NULL;
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i}", "namespace", ns, "name", name,
                     "uid", uid, "reason", "NoPods", "message",
                     "the worker's Job controller created no pod for it (a ResourceQuota, "
                     "LimitRange or admission webhook refusing them? see the Job's "
                     "FailedCreate events on the worker)",
                     "since", since, "cause", AGENT_CAUSE_NO_PODS, "pods", 0);
}

/* A Job copy that should have pods and has none by its status: started by the Job
 * controller (status.startTime, which it sets, and resets at each resume, in the sync that
 * creates the first pods: before that sync the copy has had no chance), not suspended, not
 * finished (Complete/Failed True), no active, ready, succeeded, failed or terminating pod
 * counted. */
static bool job_idle(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec"), *st = json_object_get(obj, "status");
    if (json_is_true(json_object_get(spec, "suspend")) ||
        !json_is_string(json_object_get(st, "startTime")))
        return false;
    static const char *const counts[] = {"active", "ready", "succeeded", "failed", "terminating"};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        if (json_integer_value(json_object_get(st, counts[i])) != 0)
            return false;
    return !jx_cond_is_true(obj, "Complete") && !jx_cond_is_true(obj, "Failed");
}

/* Jobs in an informer of the agent's own (no other user of the cache can share it): what
 * the agent reads, uid and what job_idle and nopods_entry read. */
static json_t *project_job(json_t *obj, void *ud)
{
    (void)ud;
    static const char *const paths[] = {"metadata.uid",
                                        "metadata.creationTimestamp",
                                        "spec.suspend",
                                        "status.startTime",
                                        "status.active",
                                        "status.ready",
                                        "status.succeeded",
                                        "status.failed",
                                        "status.terminating",
                                        "status.conditions",
                                        NULL};
    return store_project_fields(obj, paths);
}

/* What job_idle reads. */
static const char *const IDLE_VIEW[] = {"spec.suspend", "status", NULL};

/* The Jobs store's idle index: "1" when job_idle, derived from the stored Job on each change
 * (the lean Job when the informer is shared with the workload controller). */
static void index_idle(json_t *obj, struct store_values *vals, void *ud)
{
    (void)ud;
    if (job_idle(obj))
        store_values_add(vals, "1");
}

/* status.unschedulableJobs from projected pods (array, borrowed), the uids
 * of the worker copies of hub Jobs (object keyed by uid; NULL = unknown:
 * nothing reported) and the projected copies without pods by their status
 * (idle, array, may be NULL): per copy, its earliest unschedulable pod; else,
 * when none of its pods ran, its earliest not-started pod; else, when it
 * has no pod at all, an entry for that (agent.h). */
static json_t *compute_unsched(json_t *pods, json_t *job_uids, json_t *idle)
{
    json_t *by = json_object(), *stall = json_object(); /* "<ns>/<name>" -> entry */
    json_t *progress = json_object(), *haspods = json_object();
    if (job_uids)
        unsched_scan_pods(pods, job_uids, by, stall, progress, haspods);
    const char *k;
    json_t *v;
    json_object_foreach(stall, k, v)
    {
        if (!json_object_get(by, k) &&
            !json_object_get(progress, json_string_value(json_object_get(v, "uid"))))
            json_object_set(by, k, v);
    }
    for (size_t i = 0; job_uids && i < json_array_size(idle); i++) {
        json_t *e = nopods_entry(json_array_get(idle, i));
        const char *uid = json_string_value(json_object_get(e, "uid"));
        if (e && !json_object_get(haspods, uid)) {
            char *key = xasprintf("%s/%s", json_string_value(json_object_get(e, "namespace")),
                                  json_string_value(json_object_get(e, "name")));
            if (!json_object_get(by, key))
                json_object_set(by, key, e);
            free(key);
        }
        json_decref(e);
    }
    json_t *out = json_array();
    const char **keys = xcalloc(json_object_size(by) + 1, sizeof *keys);
    size_t nk = 0;
    json_object_foreach(by, k, v) keys[nk++] = k;
    qsort(keys, nk, sizeof *keys, cmp_str);
    for (size_t i = 0; i < nk && i < AGENT_UNSCHED_MAX; i++)
        json_array_append(out, json_object_get(by, keys[i]));
    free(keys);
    json_decref(by);
    json_decref(stall);
    json_decref(progress);
    json_decref(haspods);
    return out;
}

/* Add the uid of a (projected) Job to the set `ud`. */
static int collect_uid(const char *key, json_t *obj, void *ud)
{
    (void)key;
    const char *uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
    if (uid && uid[0])
        json_object_set_new((json_t *)ud, uid, json_true());
    return 0;
}

/* compute_projected over whole Node, Pod and Job lists (the pure entry points). */
static json_t *compute_lists(json_t *nodes, json_t *pods, json_t *jobs, json_t *warnings,
                             struct counted_set *counted)
{
    struct sink s = {.warnings = warnings};
    json_t *pn = json_array(), *pp = json_array(), *uids = jobs ? json_object() : NULL;
    for (size_t i = 0; i < json_array_size(nodes); i++)
        json_array_append_new(pn, project_node(json_array_get(nodes, i), &s));
    for (size_t i = 0; i < json_array_size(pods); i++)
        json_array_append_new(pp, project_pod(json_array_get(pods, i), &s));
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        json_t *j = json_array_get(jobs, i);
        const char *uid = json_string_value(json_object_get(json_object_get(j, "metadata"), "uid"));
        if (uid && json_object_get(json_object_get(json_object_get(j, "metadata"), "labels"),
                                   AGENT_HUB_WORK_LABEL))
            collect_uid(NULL, j, uids);
    }
    json_t *out = compute_projected(pn, pp, uids, counted);
    json_decref(pn);
    json_decref(pp);
    json_decref(uids);
    return out;
}

json_t *agent_compute_nodes_jobs(json_t *nodes, json_t *pods, json_t *jobs, json_t *warnings)
{
    return compute_lists(nodes, pods, jobs, warnings, NULL);
}

json_t *agent_compute_counted(json_t *nodes, json_t *pods, json_t *jobs)
{
    struct counted_set cur = {0}, none = {0};
    json_decref(compute_lists(nodes, pods, jobs, NULL, &cur));
    json_t *out = counted_delta(&cur, &none, AGENT_COUNTED_MAX, NULL, NULL, NULL);
    counted_free(&cur);
    return out;
}

json_t *agent_compute_unschedulable(json_t *pods, json_t *jobs)
{
    struct sink s = {0};
    json_t *pp = json_array(), *uids = json_object();
    for (size_t i = 0; i < json_array_size(pods); i++)
        json_array_append_new(pp, project_pod(json_array_get(pods, i), &s));
    json_t *idle = json_array();
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        json_t *j = json_array_get(jobs, i);
        if (!json_object_get(json_object_get(json_object_get(j, "metadata"), "labels"),
                             AGENT_HUB_WORK_LABEL))
            continue;
        collect_uid(NULL, j, uids);
        if (job_idle(j))
            json_array_append(idle, j);
    }
    json_t *out = compute_unsched(pp, uids, idle);
    json_decref(pp);
    json_decref(uids);
    json_decref(idle);
    return out;
}

json_t *agent_compute_nodes(json_t *nodes, json_t *pods, json_t *warnings)
{
    json_t *none = json_array();
    json_t *out = agent_compute_nodes_jobs(nodes, pods, none, warnings);
    json_decref(none);
    return out;
}

/* Indexes of the shared Jobs store, named after their user (cache.h). */
#define AGENT_INDEX_UID  "agent/uid"  /* the Jobs store by metadata.uid */
#define AGENT_INDEX_IDLE "agent/idle" /* "1": job_idle */

static int collect(const char *key, json_t *obj, void *ud)
{
    (void)key;
    json_array_append((json_t *)ud, obj);
    return 0;
}

/* The uids of the hub-work Jobs that own one of `pods` (projected): looked up
 * in the Jobs store's uid index, so a compute costs O(pods), not O(jobs). */
static json_t *owner_job_uids(struct agent *a, json_t *pods)
{
    json_t *uids = json_object();
    for (size_t i = 0; i < json_array_size(pods); i++) {
        struct podrec r;
        const char *job = podrec_read(json_array_get(pods, i), &r) == 0 ? r.job : NULL;
        if (!job || json_object_get(uids, job))
            continue;
        size_t n = 0;
        if (store_index_count(informer_store(a->jobs), AGENT_INDEX_UID, job, &n, NULL) == 0 &&
            n > 0)
            json_object_set_new(uids, job, json_true());
    }
    return uids;
}

/* What nopods_entry reads of an idle copy. */
static const char *const NOPODS_VIEW[] = {"metadata.namespace", "metadata.name", "metadata.uid",
                                          "status.startTime", NULL};

/* The copies whose status says they have no pod (job_idle), from the Jobs store's idle index:
 * O(such copies). Views of what nopods_entry reads, not the store's trees: a packed store
 * caches each tree it decodes for reads until its next trims, and a compute every few seconds
 * over thousands of idle copies kept all of them decoded (15 MB of trees at bench-scale's
 * shape, whose copies have no pods). New array. */
static json_t *idle_jobs(struct agent *a)
{
    const struct store *s = informer_store(a->jobs);
    json_t *keys = store_index_keys(s, AGENT_INDEX_IDLE, "1", NULL), *k;
    json_t *out = json_array();
    size_t i;
    json_array_foreach(keys, i, k)
    {
        json_t *v = store_get_view(s, json_string_value(k), NOPODS_VIEW);
        if (v)
            json_array_append_new(out, v);
    }
    json_decref(keys);
    return out;
}

/* {nodes, unschedulableJobs} from the stores; the counts into `counted` (empty). */
static json_t *compute_from_stores(struct agent *a, struct counted_set *counted)
{
    json_t *pn = json_array(), *pp = json_array();
    store_foreach(informer_store(a->nodes), collect, pn);
    store_foreach(informer_store(a->pods), collect, pp);
    json_t *uids = owner_job_uids(a, pp);
    /* Before the Job list (or when it is refused) nothing says which pods are
     * hub work: managedResourceRequests is left out (the controller then adds
     * back whole reservations, as for an older agent). */
    json_t *known = informer_has_synced(a->jobs) ? uids : NULL;
    /* no counts before the Job list: no copy is known */
    json_t *idle = idle_jobs(a);
    json_t *out = json_pack("{s:o, s:o}", "nodes", compute_projected(pn, pp, known, counted),
                            "unschedulableJobs", compute_unsched(pp, known, idle));
    json_decref(idle);
    json_decref(pn);
    json_decref(pp);
    json_decref(uids);
    a->stats.computes++;
    return out;
}

/* ---- the object written --------------------------------------------------- */

static json_t *ready_condition(struct agent *a, size_t n_nodes)
{
    return json_pack("[{s:s, s:s, s:s, s:o, s:s}]", "type", "Ready", "status", "True", "reason",
                     REASON_AGENT_REPORTING, "message",
                     json_sprintf("kueue-ks agent reports %zu node%s of cluster %s", n_nodes,
                                  plural_s((long long)n_nodes), a->cluster),
                     "lastTransitionTime", a->ready_since);
}

/* data: {nodes, unschedulableJobs} as compute_from_stores makes it; counted: the
 * countedJobs list (stolen). */
static json_t *full_status(struct agent *a, json_t *data, json_t *counted, const char *now)
{
    if (!a->ready_since[0])
        snprintf(a->ready_since, sizeof a->ready_since, "%s", now);
    json_t *nodes = json_object_get(data, "nodes");
    return json_pack("{s:O, s:O, s:o, s:I, s:s, s:o}", "nodes", nodes, "unschedulableJobs",
                     json_object_get(data, "unschedulableJobs"), "countedJobs", counted,
                     "nodeCount", (json_int_t)json_array_size(nodes), "lastUpdated", now,
                     "conditions", ready_condition(a, json_array_size(nodes)));
}

size_t agent_node_count(const struct agent *a)
{
    return json_array_size(json_object_get(a->computed, "nodes"));
}

json_t *agent_metrics(struct agent *a)
{
    if (!agent_synced(a))
        return NULL;
    char now[40];
    clock_now_rfc3339(now, sizeof now, 0);
    struct counted_set cur = {0}, none = {0};
    json_t *nodes = compute_from_stores(a, &cur);
    /* every counted copy: the delta against nothing */
    json_t *counted = counted_delta(&cur, &none, a->counted_max, NULL, NULL, NULL);
    json_t *obj = json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", AGENT_GROUP "/" AGENT_VERSION,
                            "kind", AGENT_KIND, "metadata", "name", a->cluster, "status",
                            full_status(a, nodes, counted, now));
    json_decref(nodes);
    counted_free(&cur);
    return obj;
}

/* ---- scheduling ------------------------------------------------------------ */

static void arm(struct agent *a, double delay)
{
    ev_timer_stop(a->loop, &a->flush_timer);
    ev_timer_set(&a->flush_timer, delay > 0 ? delay : 0, 0);
    ev_timer_start(a->loop, &a->flush_timer);
}

/* Schedule a flush as the rate limit allows, unless one is due or a write is
 * in flight (its completion schedules). */
static void schedule(struct agent *a)
{
    if (!a->running || ev_is_active(&a->flush_timer) || a->call)
        return;
    double delay = 0;
    if (a->have_last)
        delay = a->last_t + a->min_interval_s - clock_mono_s();
    arm(a, delay);
}

static void kick(struct agent *a)
{
    a->dirty = true;
    schedule(a);
}

static void start_heartbeat(struct agent *a)
{
    ev_timer_stop(a->loop, &a->hb_timer);
    if (a->heartbeat_s <= 0 || !a->running)
        return;
    ev_timer_set(&a->hb_timer, a->heartbeat_s, 0);
    ev_timer_start(a->loop, &a->hb_timer);
}

static void clear_pending(struct agent *a)
{
    json_decref(a->pending_body);
    json_decref(a->pending_nodes);
    a->pending_body = a->pending_nodes = NULL;
    counted_free(&a->pending_prev);
    a->pending_more = false;
}

/*
 * The first counts the agent knows (its Job list in): taken as the hub's, not listed. The
 * workload controller's reservations are of copies made since it started, seen by this agent
 * being bound later; a copy counted at the agent's start keeps the controller's other rules
 * (placement.h), and a restarted agent of a busy cluster does not send every copy it counts,
 * a thousand a write.
 */
static void counted_seed(struct agent *a, const struct counted_set *cur)
{
    if (a->counted_seeded || !informer_has_synced(a->jobs))
        return;
    a->counted_seeded = true;
    counted_free(&a->prev);
    for (size_t i = 0; i < cur->n; i++)
        counted_push(&a->prev, &cur->v[i]);
}

/* The hub's status was made anew (the object created, or its status replaced): it has none
 * of the counts listed before, so the next full write lists every counted copy; the write in
 * flight, if any, is to leave prev empty. With prev empty there is nothing to forget: a write
 * in flight listed against nothing, and its next prev is what it lists. */
static void counted_forget(struct agent *a)
{
    if (a->prev.n == 0)
        return;
    counted_free(&a->prev);
    counted_free(&a->pending_prev);
    a->dirty = true;
}

static void write_failed(struct agent *a, const struct err *e)
{
    double d = a->retry_s > a->min_interval_s ? a->retry_s : a->min_interval_s;
    a->stats.failures++;
    log_warn(a->lg, "cannot write ClusterMetrics", "cluster", a->cluster, "error", e->msg,
             "retry_in_s", LOG_DBL(d));
    if (!a->pending_nodes)
        a->heartbeat_due = true;
    clear_pending(a);
    a->dirty = true;
    a->retry_s = a->retry_s * 2 > RETRY_MAX_S ? RETRY_MAX_S : a->retry_s * 2;
    if (a->running)
        arm(a, d);
}

static int submit_patch(struct agent *a, struct err *e);

/* Turn a pending heartbeat into a full write of the last written nodes (the
 * object was recreated or its status wiped). Its countedJobs is empty: the counts
 * of that write are not kept (counted_forget has the next write list them). */
static void pending_make_full(struct agent *a)
{
    if (a->pending_nodes || !a->written)
        return;
    char now[40];
    clock_now_rfc3339(now, sizeof now, 0);
    json_decref(a->pending_body);
    a->pending_body = json_pack("{s:o}", "status", full_status(a, a->written, json_array(), now));
    a->pending_nodes = json_incref(a->written);
}

static void create_done(void *ud, const struct kube_result *r)
{
    struct agent *a = ud;
    a->call = NULL;
    if (r->rc == 0 || r->rc == -EEXIST) {
        if (r->rc == 0) {
            a->stats.creates++;
            log_info(a->lg, "created ClusterMetrics", "cluster", a->cluster);
        }
        counted_forget(a);
        pending_make_full(a);
        struct err e;
        err_clear(&e);
        if (submit_patch(a, &e) < 0)
            write_failed(a, &e);
        return;
    }
    if (r->rc == -ENOENT) {
        struct err e;
        err_clear(&e);
        err_set(&e, r->rc, "%.400s (is the ClusterMetrics CRD from config/crd installed?)",
                r->err->msg);
        write_failed(a, &e);
        return;
    }
    write_failed(a, r->err);
}

static void patch_done(void *ud, const struct kube_result *r)
{
    struct agent *a = ud;
    a->call = NULL;
    if (r->rc == -ENOENT && !a->tried_create) {
        a->tried_create = true;
        json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{}}", "apiVersion",
                                AGENT_GROUP "/" AGENT_VERSION, "kind", AGENT_KIND, "metadata",
                                "name", a->cluster, "labels", MANAGED_BY_LABEL, "kueue-ks", "spec");
        char *path = kube_path(AGENT_GROUP, AGENT_VERSION, AGENT_RESOURCE, NULL, NULL, NULL);
        struct err e;
        err_clear(&e);
        int rc = kube_client_post(a->hub, path, obj, create_done, a, &a->call, &e);
        free(path);
        json_decref(obj);
        if (rc < 0)
            write_failed(a, &e);
        return;
    }
    if (r->rc < 0) {
        write_failed(a, r->err);
        return;
    }
    a->stats.writes++;
    a->retry_s = RETRY_INITIAL_S;
    /* The object as stored: when its node list is not what we wrote (someone
     * replaced the object or wiped its status), write it all again. Only the
     * count is compared: a server with an older CRD schema may prune fields
     * (say, per-node ready) and that must not cause endless rewrites. */
    json_t *rs = json_object_get(r->body, "status");
    json_t *mine = a->pending_nodes ? a->pending_nodes : a->written;
    if (json_is_object(rs) && mine &&
        json_array_size(json_object_get(rs, "nodes")) !=
            json_array_size(json_object_get(mine, "nodes"))) {
        log_warn(a->lg, "ClusterMetrics status was changed by someone else; rewriting it",
                 "cluster", a->cluster);
        json_decref(a->written);
        a->written = NULL;
        a->dirty = true;
        counted_forget(a);
        clear_pending(a);
        schedule(a);
        return;
    }
    if (a->pending_nodes) {
        json_decref(a->written);
        a->written = json_incref(a->pending_nodes);
        counted_free(&a->prev);
        a->prev = a->pending_prev; /* moved: clear_pending finds it empty */
        memset(&a->pending_prev, 0, sizeof a->pending_prev);
        if (a->pending_more)
            a->dirty = true; /* the copies left out go in the next write */
        log_v(a->lg, 2, "wrote ClusterMetrics", "cluster", a->cluster, "nodes",
              LOG_UINT(json_array_size(json_object_get(a->written, "nodes"))));
    } else {
        a->stats.heartbeats++;
    }
    clear_pending(a);
    start_heartbeat(a);
    if (a->dirty)
        schedule(a);
}

static int submit_patch(struct agent *a, struct err *e)
{
    char *path = kube_path(AGENT_GROUP, AGENT_VERSION, AGENT_RESOURCE, NULL, a->cluster, "status");
    int rc = kube_client_patch(a->hub, path, KUBE_CT_MERGE_PATCH, a->pending_body, patch_done, a,
                               &a->call, e);
    free(path);
    return rc;
}

/* Make the write of computed `data` and counts `cur` (emptied) pending: a full write when the
 * data is not what was last written or the hub is to get counts (counted_delta), else a
 * heartbeat when one is due. False when there is nothing to write. */
static bool pending_set(struct agent *a, json_t *data, struct counted_set *cur)
{
    struct counted_set next = {0};
    bool more = false, gone = false;
    json_t *delta = counted_delta(cur, &a->prev, a->counted_max, &next, &more, &gone);
    counted_free(cur);
    /* the list itself is not compared: a write that listed counts needs no second one; a copy
     * no longer counted may still be in the hub's list (a heartbeat would leave it there) */
    bool full = !a->written || !json_equal(data, a->written) || json_array_size(delta) > 0 || gone;
    if (!full && !a->heartbeat_due) {
        json_decref(delta);
        counted_free(&next);
        return false;
    }
    char now[40];
    clock_now_rfc3339(now, sizeof now, 0);
    json_t *status = NULL;
    if (full) {
        status = full_status(a, data, delta, now);
        a->pending_nodes = json_incref(data);
        a->pending_prev = next;
        a->pending_more = more;
    } else { /* lastUpdated only: the hub keeps the list it has, still true */
        status = json_pack("{s:s}", "lastUpdated", now);
        json_decref(delta);
        counted_free(&next);
    }
    a->pending_body = json_pack("{s:o}", "status", status);
    return true;
}

static void on_flush(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct agent *a = w->data;
    if (!agent_synced(a) || (!informer_has_synced(a->jobs) && !a->have_last &&
                             clock_mono_s() - a->started_t < a->jobs_grace_s)) {
        arm(a, SYNC_POLL_S);
        return;
    }
    if (a->call)
        return;
    /* libev times the timer from the loop's cached time, which lags the clock
     * by the iteration's work: never write sooner than the interval */
    double left = a->have_last ? a->last_t + a->min_interval_s - clock_mono_s() : 0;
    if (left > 0) {
        arm(a, left);
        return;
    }
    struct counted_set cur = {0};
    json_t *nodes = compute_from_stores(a, &cur);
    a->dirty = false;
    bool changed = !a->computed || !json_equal(nodes, a->computed);
    json_decref(a->computed);
    a->computed = json_incref(nodes);
    if (changed && a->on_change)
        a->on_change(a->on_change_ud, a);
    counted_seed(a, &cur);
    if (!a->hub || !pending_set(a, nodes, &cur)) {
        if (!a->hub && changed) {
            a->have_last = true;
            a->last_t = clock_mono_s();
        }
        counted_free(&cur);
        json_decref(nodes);
        return;
    }
    a->heartbeat_due = false;
    a->tried_create = false;
    double now_t = clock_mono_s();
    if (a->have_written_t &&
        (a->stats.min_write_gap_s == 0 || now_t - a->written_t < a->stats.min_write_gap_s))
        a->stats.min_write_gap_s = now_t - a->written_t;
    a->have_written_t = true;
    a->written_t = now_t;
    a->have_last = true;
    a->last_t = now_t;
    ev_timer_stop(a->loop, &a->hb_timer);
    json_decref(nodes);
    struct err e;
    err_clear(&e);
    if (submit_patch(a, &e) < 0)
        write_failed(a, &e);
}

static void on_heartbeat(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct agent *a = w->data;
    if (a->source_down) {
        /* A heartbeat says "this data is current"; while the cluster cannot be
         * reached it is not, so let lastUpdated age and consumers drop it. */
        start_heartbeat(a);
        return;
    }
    a->heartbeat_due = true;
    schedule(a);
}

void agent_set_source_reachable(struct agent *a, bool reachable)
{
    if (!a || a->source_down == !reachable)
        return;
    a->source_down = !reachable;
    log_info(a->lg,
             reachable ? "cluster reachable again: reporting"
                       : "cluster unreachable: "
                         "ClusterMetrics no longer refreshed",
             "cluster", a->cluster);
    if (reachable && a->running) {
        a->heartbeat_due = true; /* refresh lastUpdated at once */
        schedule(a);
    }
}

/* ---- informer handlers ------------------------------------------------------ */

static bool same(json_t *a, json_t *b)
{
    return (!a && !b) || (a && b && json_equal(a, b));
}

static void node_add(void *ud, json_t *obj)
{
    (void)obj;
    kick(ud);
}

static void node_update(void *ud, json_t *old_obj, json_t *new_obj)
{
    if (same(json_object_get(old_obj, "spec"), json_object_get(new_obj, "spec")) &&
        same(json_object_get(old_obj, KKS_KEY), json_object_get(new_obj, KKS_KEY)) &&
        same(json_object_get(json_object_get(old_obj, "metadata"), "labels"),
             json_object_get(json_object_get(new_obj, "metadata"), "labels")))
        return; /* a heartbeat or a field we do not report */
    kick(ud);
}

/* A pod the status depends on: bound and not terminal (node sums), or
 * owned by a Job (a copy's progress: unschedulableJobs). */
static bool pod_matters(json_t *obj)
{
    struct podrec r;
    return obj && podrec_read(obj, &r) == 0 && ((r.flags & PODREC_COUNTS) || r.job);
}

static void pod_add(void *ud, json_t *obj)
{
    if (pod_matters(obj))
        kick(ud);
}

static void pod_update(void *ud, json_t *old_obj, json_t *new_obj)
{
    if (!pod_matters(old_obj) && !pod_matters(new_obj))
        return;
    if (same(old_obj, new_obj))
        return; /* e.g. a status change that moves no number and no verdict */
    kick(ud);
}

static void pod_delete(void *ud, json_t *obj)
{
    if (pod_matters(obj))
        kick(ud);
}

/* A worker copy of a hub Job appeared or went: its pods change side. */
static void job_add(void *ud, json_t *obj)
{
    (void)obj;
    kick(ud);
}

/* A copy started or stopped having pods by its status (job_idle). */
static void job_update(void *ud, json_t *old_obj, json_t *new_obj)
{
    if (job_idle(old_obj) != job_idle(new_obj))
        kick(ud);
}

/* The Job list arrived late (after the first write): write with the field. */
static void on_jobs_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    struct agent *a = w->data;
    if (!informer_has_synced(a->jobs))
        return;
    ev_timer_stop(loop, w);
    kick(a);
}

/* ---- lifecycle ----------------------------------------------------------------- */

/* Acquire the worker's informer through the cache (created by its first user: that user's
 * name and backoff are used). reads: what fn reads (informer_opts.project_reads). */
static int make_informer(struct agent *a, const char *group, const char *resource, const char *kind,
                         const char *selector, store_project_fn fn, void *fn_ud,
                         const char *const *reads, const struct informer_handlers *h,
                         double backoff, struct cache_reg **reg, struct informer **out,
                         struct err *e)
{
    /* named after the cluster: the agents of several workers log in one process */
    char name[128];
    snprintf(name, sizeof name, "agent %s/%s%s%s", a->cluster, resource,
             group && group[0] ? "." : "", group ? group : "");
    struct informer_opts io = {
        .client = a->worker,
        .group = group,
        .version = "v1",
        .resource = resource,
        .kind = kind,
        .label_selector = selector,
        .name = name,
        .lg = a->lg,
        .project = fn,
        .project_ud = fn_ud,
        .project_reads = reads,
        .backoff_initial_s = backoff,
    };
    int rc = cache_acquire(a->cache, &io, h, reg, e);
    if (rc < 0)
        return rc;
    *out = cache_informer(*reg);
    return 0;
}

int agent_new(struct kube_client *worker, struct kube_client *hub, const char *cluster,
              const struct agent_opts *opts, struct agent **out, struct err *e)
{
    *out = NULL;
    if (!worker)
        return err_set(e, -EINVAL, "agent: no worker client");
    if (!cluster || !cluster[0])
        return err_set(e, -EINVAL, "agent: the cluster name is empty (--cluster-name)");
    if (hub && kube_client_loop(hub) != kube_client_loop(worker))
        return err_set(e, -EINVAL, "agent: the worker and hub clients run on different loops");
    struct agent_opts o = {0};
    if (opts)
        o = *opts;
    struct agent *a = xcalloc(1, sizeof *a);
    a->loop = kube_client_loop(worker);
    a->worker = worker;
    a->hub = hub;
    a->cluster = xstrdup(cluster);
    a->min_interval_s = o.min_interval_s > 0 ? o.min_interval_s : AGENT_DEFAULT_MIN_S;
    a->heartbeat_s = o.heartbeat_s == 0 ? AGENT_DEFAULT_HEARTBEAT : o.heartbeat_s;
    a->counted_max =
        o.counted_max > 0 && o.counted_max < AGENT_COUNTED_MAX ? o.counted_max : AGENT_COUNTED_MAX;
    a->lg = o.lg;
    a->on_change = o.on_change;
    a->on_change_ud = o.on_change_ud;
    a->sink.lg = o.lg;
    a->sink.cluster = a->cluster;
    a->sink.lifetime = o.json_lifetime;
    a->retry_s = RETRY_INITIAL_S;
    ev_timer_init(&a->flush_timer, on_flush, 0, 0);
    a->flush_timer.data = a;
    ev_timer_init(&a->hb_timer, on_heartbeat, 0, 0);
    a->hb_timer.data = a;
    ev_timer_init(&a->jobs_timer, on_jobs_poll, JOBS_POLL_S, JOBS_POLL_S);
    a->jobs_timer.data = a;
    a->jobs_grace_s = o.jobs_grace_s > 0 ? o.jobs_grace_s : JOBS_GRACE_S;
    a->cache = o.cache;
    if (!a->cache)
        a->cache = a->own_cache = cache_new(worker);

    struct informer_handlers nh = {
        .on_add = node_add, .on_update = node_update, .on_delete = node_add, .ud = a};
    struct informer_handlers ph = {
        .on_add = pod_add, .on_update = pod_update, .on_delete = pod_delete, .ud = a};
    /* job_add reads nothing of it: an empty view */
    static const char *const jobs_listed[] = {NULL};
    struct informer_handlers jh = {.on_add = job_add,
                                   .on_update = job_update,
                                   .on_delete = job_add,
                                   .ud = a,
                                   .listed_view = jobs_listed};
    int rc = make_informer(a, NULL, "nodes", "Node", NULL, project_node, &a->sink, NULL, &nh,
                           o.informer_backoff_s, &a->nodes_reg, &a->nodes, e);
    /* a listed pod is built with only what its record reads: a real pod's spec and
     * managedFields are most of it, and a worker lists 10,000 at a restart */
    if (rc == 0)
        rc = make_informer(a, NULL, "pods", "Pod", NULL, project_pod, &a->sink, podrec_reads, &ph,
                           o.informer_backoff_s, &a->pods_reg, &a->pods, e);
    /* In a cache of the caller's, the Jobs as the workload controller reads them (lean: one
     * informer and store for both, agent.h); in the agent's own, only what it reads. The
     * verdicts come from indexes either way. */
    if (rc == 0)
        rc = make_informer(a, "batch", "jobs", "Job", AGENT_HUB_WORK_LABEL,
                           a->own_cache ? project_job : store_project_lean, NULL, NULL, &jh,
                           o.informer_backoff_s, &a->jobs_reg, &a->jobs, e);
    if (rc == 0)
        rc = cache_add_index(a->jobs_reg, AGENT_INDEX_UID, store_index_by_field,
                             (void *)"metadata.uid", e);
    if (rc == 0)
        rc = cache_add_index(a->jobs_reg, AGENT_INDEX_IDLE, index_idle, NULL, e);
    /* a packed list's copies are indexed from a view of what job_idle reads (store.h) */
    if (rc == 0 && store_index_view(informer_store(a->jobs), AGENT_INDEX_IDLE, IDLE_VIEW) < 0)
        rc = err_set(e, -ENOENT, "agent: the Job store has no %s index", AGENT_INDEX_IDLE);
    if (rc < 0) {
        agent_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void agent_stop(struct agent *a)
{
    if (!a || !a->running)
        return;
    a->running = false;
    cache_stop(a->nodes_reg);
    cache_stop(a->pods_reg);
    cache_stop(a->jobs_reg);
    ev_timer_stop(a->loop, &a->flush_timer);
    ev_timer_stop(a->loop, &a->hb_timer);
    ev_timer_stop(a->loop, &a->jobs_timer);
    if (a->call) {
        kube_call_cancel(a->call);
        a->call = NULL;
    }
    clear_pending(a);
}

int agent_start(struct agent *a, struct err *e)
{
    if (a->running)
        return err_set(e, -EALREADY, "agent for cluster %s is already running", a->cluster);
    int rc = cache_start(a->nodes_reg, e);
    if (rc < 0)
        return rc;
    rc = cache_start(a->pods_reg, e);
    if (rc == 0)
        rc = cache_start(a->jobs_reg, e);
    if (rc < 0) {
        cache_stop(a->nodes_reg);
        cache_stop(a->pods_reg);
        return rc;
    }
    a->running = true;
    a->started_t = clock_mono_s();
    ev_timer_start(a->loop, &a->jobs_timer);
    /* The first write follows the sync even for an empty cluster. */
    kick(a);
    log_info(a->lg, "ClusterMetrics agent started", "cluster", a->cluster, "min_interval",
             LOG_DBL(a->min_interval_s), "writes", a->hub ? "yes" : "no");
    return 0;
}

void agent_free(struct agent *a)
{
    if (!a)
        return;
    agent_stop(a);
    cache_release(a->nodes_reg);
    cache_release(a->pods_reg);
    cache_release(a->jobs_reg);
    cache_free(a->own_cache);
    json_decref(a->computed);
    json_decref(a->written);
    counted_free(&a->prev);
    free(a->cluster);
    free(a);
}

bool agent_synced(const struct agent *a)
{
    return a && a->nodes && a->pods && informer_has_synced(a->nodes) &&
           informer_has_synced(a->pods);
}

const char *agent_cluster(const struct agent *a)
{
    return a->cluster;
}

void agent_stats(const struct agent *a, struct agent_stats *out)
{
    *out = a->stats;
    out->bad_pods = a->sink.bad_pods;
}
