/* xf: pure JSON transforms of job objects (see xf.h). */
#include "controllers/workload/xf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"

/* Remove metadata.<field>.<key>; drop the map when that left it empty. */
static void meta_del(json_t *obj, const char *field, const char *key)
{
    json_t *m = jx_getv(obj, "metadata", field);
    if (!json_is_object(m) || !json_object_get(m, key))
        return;
    json_object_del(m, key);
    if (json_object_size(m) == 0)
        json_object_del(json_object_get(obj, "metadata"), field);
}

const char *xf_placed_cluster(const json_t *job)
{
    if (!jx_annotation(job, XF_ANN_PLACED_FOR))
        return NULL;
    return jx_label(job, XF_LABEL_CLUSTER);
}

const char *xf_pinned_cluster(const json_t *job)
{
    const char *v = jx_annotation(job, XF_ANN_PLACED_BY);
    if (v && strcmp(v, XF_PLACED_BY_VALUE) == 0)
        return NULL;
    return jx_label(job, XF_LABEL_CLUSTER);
}

/* The injected record as an object (new reference; {} when absent/malformed). */
static json_t *injected_record(const json_t *job)
{
    const char *s = jx_annotation(job, XF_ANN_INJECTED);
    json_t *rec = s ? jx_loadb(s, strlen(s), NULL) : NULL;
    if (!json_is_object(rec)) {
        json_decref(rec);
        rec = json_object();
    }
    return rec;
}

/* Set annotation `key` to `val` unless it has that value already; true when it changed. */
static bool set_annotation_if(json_t *job, const char *key, const char *val)
{
    const char *cur = jx_annotation(job, key);
    if (cur && strcmp(cur, val) == 0)
        return false;
    return jx_set_annotation(job, key, val) == 0;
}

/* Record `key`=`val` under the template path in `rec`. */
static void record_key(json_t *rec, const char *path, const char *key, json_t *val)
{
    json_t *r = json_object_get(rec, path);
    if (!json_is_object(r)) {
        r = json_object();
        json_object_set_new(rec, path, r);
    }
    json_object_set(r, key, val);
}

/* Merge the wanted node labels of one pod template into its nodeSelector (a key
 * the template has wins), recording what was added in `rec` (NULL: record nothing);
 * with `record_only` the template is left alone and the keys it lacks are recorded.
 * True when the template changed. */
static bool inject_template(const struct kind_tmpl *t, const json_t *want, json_t *rec,
                            bool record_only)
{
    bool changed = false;
    json_t *ns = jx_obj(t->tmpl, "spec.nodeSelector");
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)want, key, val)
    {
        if (!json_is_string(val))
            continue;
        if (ns && json_object_get(ns, key))
            continue; /* the user's key (or one we already injected) wins */
        if (record_only) {
            record_key(rec, t->path, key, val);
            continue;
        }
        if (!ns) {
            ns = json_object();
            if (jx_setv_new(t->tmpl, ns, "spec", "nodeSelector") < 0)
                break; /* the template's spec is not an object (ns was released) */
        }
        json_object_set(ns, key, val);
        changed = true;
        if (rec)
            record_key(rec, t->path, key, val);
    }
    return changed;
}

/* Changes are tracked as they are made (no before/after serialisation of the
 * whole job: that was most of a placement's cost). */
int xf_place(const struct kind_def *k, json_t *job, const char *cluster,
             const json_t *podset_labels, const char *placed_for, enum xf_inject where,
             struct err *e)
{
    if (!k || !json_is_object(job) || !cluster || !*cluster)
        return err_set(e, -EINVAL, "xf_place: job and cluster are required");
    const char *cur = jx_label(job, XF_LABEL_CLUSTER);
    if (cur && strcmp(cur, cluster) != 0)
        return err_set(e, -EEXIST, "job %s is labelled %s=%s, not %s", jx_name(job),
                       XF_LABEL_CLUSTER, cur, cluster);
    bool changed = false;
    if (!cur) {
        changed = jx_set_label(job, XF_LABEL_CLUSTER, cluster) == 0;
        changed |= set_annotation_if(job, XF_ANN_PLACED_BY, XF_PLACED_BY_VALUE);
    }
    /* In the spec the keys injected before are the template's own now: the record they left
     * is kept. For the copy the record is all there is, made afresh: a record someone else
     * wrote never reaches the worker. */
    bool copy = where == XF_INJECT_COPY;
    json_t *rec = copy ? json_object() : injected_record(job);
    struct kind_tmpl *t = NULL;
    size_t nt = 0;
    kind_templates(k, job, &t, &nt);
    for (size_t i = 0; i < nt; i++) {
        json_t *want = json_object_get(podset_labels, t[i].podset);
        if (json_is_object(want) && json_object_size(want) > 0)
            changed |= inject_template(&t[i], want, rec, copy);
    }
    kind_tmpls_free(t, nt);
    if (json_object_size(rec) > 0) {
        char *s = jx_dumps(rec);
        changed |= set_annotation_if(job, XF_ANN_INJECTED, s);
        free(s);
    } else if (copy && jx_annotation(job, XF_ANN_INJECTED)) {
        meta_del(job, "annotations", XF_ANN_INJECTED);
        changed = true;
    }
    json_decref(rec);
    if (placed_for)
        changed |= set_annotation_if(job, XF_ANN_PLACED_FOR, placed_for);
    return changed ? 1 : 0;
}

int xf_unplace(const struct kind_def *k, json_t *job)
{
    (void)k; /* the record names the template paths itself */
    if (!json_is_object(job))
        return 0;
    int changed = 0;
    if (jx_annotation(job, XF_ANN_INJECTED)) {
        json_t *rec = injected_record(job);
        const char *path;
        json_t *keys;
        json_object_foreach(rec, path, keys)
        {
            json_t *tmpl = jx_obj(job, path);
            json_t *ns = jx_obj(tmpl, "spec.nodeSelector");
            if (!ns || !json_is_object(keys))
                continue;
            const char *key;
            json_t *val;
            json_object_foreach(keys, key, val)
            {
                json_t *have = json_object_get(ns, key);
                if (have && json_equal(have, val))
                    json_object_del(ns, key);
            }
            if (json_object_size(ns) == 0)
                json_object_del(json_object_get(tmpl, "spec"), "nodeSelector");
        }
        json_decref(rec);
        meta_del(job, "annotations", XF_ANN_INJECTED);
        changed = 1;
    }
    const char *by = jx_annotation(job, XF_ANN_PLACED_BY);
    if (by) {
        if (strcmp(by, XF_PLACED_BY_VALUE) == 0)
            meta_del(job, "labels", XF_LABEL_CLUSTER);
        meta_del(job, "annotations", XF_ANN_PLACED_BY);
        changed = 1;
    }
    if (jx_annotation(job, XF_ANN_PLACED_FOR)) {
        meta_del(job, "annotations", XF_ANN_PLACED_FOR);
        changed = 1;
    }
    return changed;
}

/* ---- downsync ------------------------------------------------------------- */

static const char *const strip_meta[] = {
    "uid",
    "resourceVersion",
    "generation",
    "generateName",
    "creationTimestamp",
    "deletionTimestamp",
    "managedFields",
    "ownerReferences",
    "finalizers",
    "selfLink",
    "deletionGracePeriodSeconds",
};

json_t *xf_downsync(const struct kind_def *k, const json_t *hub, const struct xf_origin *o,
                    struct err *e)
{
    if (!jx_name(hub))
        return err_set(e, -EINVAL, "downsync: the object has no metadata.name"), NULL;
    if (!o || !o->origin || !*o->origin || !o->origin_uid || !*o->origin_uid)
        return err_set(e, -EINVAL, "downsync of %s: origin and origin uid are required",
                       jx_name(hub)),
               NULL;
    json_t *w = jx_deep_copy(hub);
    json_t *meta = json_object_get(w, "metadata");
    for (size_t i = 0; i < sizeof(strip_meta) / sizeof(strip_meta[0]); i++)
        json_object_del(meta, strip_meta[i]);
    meta_del(w, "annotations", "kubectl.kubernetes.io/last-applied-configuration");
    /* the hub's record of the copy's progress, not the copy's */
    meta_del(w, "annotations", XF_ANN_REMOTE_STATUS);
    json_object_del(w, "status");
    if (k && strcmp(k->group, "batch") == 0 && strcmp(k->kind, "Job") == 0) {
        json_t *spec = json_object_get(w, "spec");
        json_object_del(spec, "selector");
        json_object_del(spec, "manualSelector");
        meta_del(w, "annotations", "batch.kubernetes.io/job-tracking");
        static const char *const uid_labels[] = {"controller-uid",
                                                 "batch.kubernetes.io/controller-uid"};
        json_t *tl = jx_obj(w, "spec.template.metadata.labels");
        for (size_t i = 0; i < 2; i++) {
            meta_del(w, "labels", uid_labels[i]);
            if (tl)
                json_object_del(tl, uid_labels[i]);
        }
        if (tl && json_object_size(tl) == 0)
            json_object_del(jx_obj(w, "spec.template.metadata"), "labels");
    }
    if (k && jx_annotation(w, XF_ANN_INJECTED) && xf_placed_cluster(w)) {
        /* XF_INJECT_COPY: the record's keys reach the worker in the copy only. Only the
         * kind's own template paths are read: the annotation can be written by anyone. */
        json_t *rec = injected_record(w);
        struct kind_tmpl *t = NULL;
        size_t nt = 0;
        kind_templates(k, w, &t, &nt);
        for (size_t i = 0; i < nt; i++) {
            json_t *want = json_object_get(rec, t[i].path);
            if (json_is_object(want))
                inject_template(&t[i], want, NULL, false);
        }
        kind_tmpls_free(t, nt);
        json_decref(rec);
    }
    if (k && k->suspend_path)
        jx_del(w, k->suspend_path);
    if (k && k->managed_by_path) {
        const char *mb = jx_str(w, k->managed_by_path, NULL);
        if (mb && (strcmp(mb, XF_MANAGED_BY) == 0 || strcmp(mb, "kueue.x-k8s.io/multikueue") == 0))
            jx_del(w, k->managed_by_path);
    }
    jx_set_label(w, XF_LABEL_MANAGED_BY, XF_MANAGED_BY_VALUE);
    jx_set_label(w, XF_LABEL_ORIGIN, o->origin);
    jx_set_label(w, XF_LABEL_ORIGIN_UID, o->origin_uid);
    return w;
}

bool xf_is_ours(const json_t *obj, const struct xf_origin *o)
{
    if (!o || !o->origin)
        return false;
    const char *mb = jx_label(obj, XF_LABEL_MANAGED_BY);
    const char *org = jx_label(obj, XF_LABEL_ORIGIN);
    if (!mb || strcmp(mb, XF_MANAGED_BY_VALUE) != 0 || !org || strcmp(org, o->origin) != 0)
        return false;
    if (o->origin_uid) {
        const char *u = jx_label(obj, XF_LABEL_ORIGIN_UID);
        return u && strcmp(u, o->origin_uid) == 0;
    }
    return true;
}

/* ---- status return ---------------------------------------------------------- */

static void copy_field(json_t *dst, const json_t *src, const char *key)
{
    json_t *v = json_object_get(src, key);
    if (v)
        json_object_set_new(dst, key, jx_deep_copy(v));
}

/* Insert a copy of condition `term` with type `pre` before it when absent. */
static void ensure_pre(json_t *conds, const char *term, const char *pre)
{
    if (!pre || jx_conds_find(conds, pre))
        return;
    for (size_t i = 0; i < json_array_size(conds); i++) {
        json_t *c = json_array_get(conds, i);
        const char *t = jx_str(c, "type", NULL);
        const char *st = jx_str(c, "status", NULL);
        if (t && strcmp(t, term) == 0 && st && strcmp(st, "True") == 0) {
            json_t *p = jx_deep_copy(c);
            json_object_set_new(p, "type", json_string(pre));
            json_array_insert_new(conds, i, p);
            return;
        }
    }
}

static json_t *job_status(const struct kind_def *k, const json_t *ws, enum kind_result r)
{
    json_t *s = json_object();
    static const char *const copy[] = {
        "active",           "ready",         "terminating",
        "succeeded",        "failed",        "startTime",
        "completedIndexes", "failedIndexes", "uncountedTerminatedPods"};
    for (size_t i = 0; i < sizeof(copy) / sizeof(copy[0]); i++)
        copy_field(s, ws, copy[i]);
    json_t *conds = jx_deep_copy(jx_arr(ws, "conditions"));
    if (conds) {
        if (r == KIND_SUCCEEDED)
            ensure_pre(conds, k->success[0], k->pre_success);
        if (r == KIND_FAILED)
            ensure_pre(conds, k->failure[0], k->pre_failure);
        json_object_set_new(s, "conditions", conds);
    }
    if (r != KIND_RUNNING) {
        json_object_set_new(s, "active", json_integer(0));
        json_object_set_new(s, "ready", json_integer(0));
        json_object_set_new(s, "terminating", json_integer(0));
        json_object_del(s, "uncountedTerminatedPods");
    }
    if (r == KIND_SUCCEEDED) {
        copy_field(s, ws, "completionTime");
        if (!json_object_get(s, "startTime") && json_object_get(s, "completionTime"))
            json_object_set(s, "startTime", json_object_get(s, "completionTime"));
    } else if (r == KIND_RUNNING) {
        copy_field(s, ws, "completionTime");
    }
    return s;
}

/* The XF_ANN_REMOTE_STATUS value for a copy on `cluster` whose status is `ws` (NULL: none
 * yet, zero counts). New string. */
static char *remote_text(const char *cluster, const json_t *ws)
{
    json_t *rem =
        json_pack("{s:s, s:I, s:I, s:I, s:I}", "cluster", cluster ? cluster : "", "active",
                  (json_int_t)jx_int(ws, "active", 0), "ready", (json_int_t)jx_int(ws, "ready", 0),
                  "succeeded", (json_int_t)jx_int(ws, "succeeded", 0), "failed",
                  (json_int_t)jx_int(ws, "failed", 0));
    char *s = jx_dumps(rem);
    json_decref(rem);
    return s;
}

int xf_remote_status_placed(const struct kind_def *k, json_t *job, const char *cluster)
{
    if (!k || k->status_rule != KIND_STATUS_JOB || !json_is_object(job) || !cluster)
        return 0;
    char *v = remote_text(cluster, NULL);
    int changed = set_annotation_if(job, XF_ANN_REMOTE_STATUS, v) ? 1 : 0;
    free(v);
    return changed;
}

json_t *xf_remote_status(const json_t *job)
{
    const char *rs = jx_annotation(job, XF_ANN_REMOTE_STATUS);
    json_t *r = rs ? jx_loadb(rs, strlen(rs), NULL) : NULL;
    if (!json_is_object(r)) {
        json_decref(r);
        return NULL;
    }
    return r;
}

int xf_status_return(const struct kind_def *k, const json_t *worker, const char *cluster,
                     bool full_mirror, struct xf_status *out, struct err *e)
{
    *out = (struct xf_status){0};
    if (!worker || !k)
        return err_set(e, -EINVAL, "status return: no worker object");
    json_t *ws = jx_obj(worker, "status");
    enum kind_result r = kind_result(k, worker);
    out->result = r;
    if (k->status_rule != KIND_STATUS_JOB) {
        out->status = ws ? jx_deep_copy(ws) : NULL;
        return 0;
    }
    out->remote = remote_text(cluster, ws);
    if (r != KIND_RUNNING || full_mirror)
        out->status = job_status(k, ws, r);
    return 0;
}

void xf_status_release(struct xf_status *s)
{
    json_decref(s->status);
    free(s->remote);
    *s = (struct xf_status){0};
}

/* ---- stop ------------------------------------------------------------------- */

json_t *xf_status_stopped(const struct kind_def *k, const json_t *hub, bool full_mirror)
{
    json_t *st = jx_obj(hub, "status");
    if (!k || !st)
        return NULL;
    json_t *p = json_object();
    if (k->status_rule == KIND_STATUS_JOB) {
        static const char *const counts[] = {"active", "ready"};
        for (size_t i = 0; full_mirror && i < 2; i++)
            if (jx_int(st, counts[i], 0) != 0)
                json_object_set_new(p, counts[i], json_integer(0));
    } else {
        json_t *rs = jx_obj(st, "replicaStatuses");
        const char *type;
        json_t *r;
        json_object_foreach(rs, type, r)
        {
            if (jx_int(r, "active", 0) != 0)
                jx_setv_new(p, json_integer(0), "replicaStatuses", type, "active");
        }
        json_t *rj = jx_arr(st, "replicatedJobsStatus");
        bool busy = false;
        for (size_t i = 0; i < json_array_size(rj); i++)
            busy = busy || jx_int(json_array_get(rj, i), "active", 0) != 0 ||
                   jx_int(json_array_get(rj, i), "ready", 0) != 0;
        if (busy) {
            json_t *v = jx_deep_copy(rj);
            for (size_t i = 0; i < json_array_size(v); i++) {
                json_t *e = json_array_get(v, i);
                if (!json_is_object(e))
                    continue;
                json_object_set_new(e, "active", json_integer(0));
                json_object_set_new(e, "ready", json_integer(0));
            }
            json_object_set_new(p, "replicatedJobsStatus", v);
        }
    }
    if (json_object_size(p) == 0) {
        json_decref(p);
        return NULL;
    }
    return p;
}
