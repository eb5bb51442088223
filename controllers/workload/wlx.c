/* wlx: carry out wl_decide() actions asynchronously (see wlx.h). */
#include "controllers/workload/wlx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/xf.h"
#include "pkg/json/jscan.h"
#include "pkg/json/jsonx.h"
#include "pkg/reasons/reasons.h"
#include "pkg/util/xalloc.h"

struct batch {
    char *key;
    wlx_done_fn done;
    void *ud;
    unsigned pending; /* outstanding calls + 1 while submitting */
    struct wlx_result res;
    const struct logger *lg;
    struct evrec *events; /* borrowed, may be NULL */
    json_t *job;          /* the hub job, for a refused write's Event (new reference) */
    char *wl_rv, *job_rv; /* resourceVersions of the objects the pass read (NULL = none) */
    char *job_rv_new;     /* res.job_rv_new (owned) */
    /* the after_job actions (owned copies), carried out once the job patch went through */
    struct wl_action *then;
    size_t nthen;
    struct wlx_ops ops; /* for them: a copy (its pointers borrowed) */
    const struct kind_def *kind;
};

struct call {
    struct batch *b;
    enum wl_act_type type;
    bool apply;
    bool uid_pre; /* DELETE with a uid precondition */
    /* CREATE_COPY: what a 409 AlreadyExists needs to check the object there */
    struct kube_client *cl;
    char *path, *cluster;
    json_t *copy;         /* the object we meant to create (new reference) */
    json_t *job;          /* the hub job, for a Warning Event (new reference) */
    struct evrec *events; /* may be NULL */
    json_t *meta; /* PATCH_JOB through /status: the metadata written, to check in the answer */
};

static void call_free(struct call *c)
{
    free(c->path);
    free(c->cluster);
    json_decref(c->copy);
    json_decref(c->job);
    json_decref(c->meta);
    free(c);
}

static void batch_fail(struct batch *b, int rc, const struct err *e, const char *fallback)
{
    b->res.failed++;
    if (b->res.rc == 0) {
        b->res.rc = rc;
        if (e)
            b->res.err = *e;
        else
            err_set(&b->res.err, rc, "%s", fallback);
    }
}

/* Free the after_job actions; `unrun`: they were not carried out (a copy among them is
 * dropped). */
static void then_free(struct batch *b, bool unrun)
{
    for (size_t i = 0; i < b->nthen; i++) {
        if (unrun && b->then[i].type == WL_ACT_CREATE_COPY)
            b->res.copy_dropped = true;
        free(b->then[i].cluster);
        json_decref(b->then[i].object);
        free(b->then[i].reason);
        free(b->then[i].message);
    }
    free(b->then);
    b->then = NULL;
    b->nthen = 0;
}

/* Keep an after_job action (its own copy) for then_run. */
static void then_keep(struct batch *b, const struct wl_action *a)
{
    b->then = xrealloc(b->then, (b->nthen + 1) * sizeof(*b->then));
    struct wl_action *t = &b->then[b->nthen++];
    *t = (struct wl_action){.type = a->type, .target = a->target, .event_type = a->event_type};
    t->cluster = a->cluster ? xstrdup(a->cluster) : NULL;
    t->object = a->object ? json_incref(a->object) : NULL;
    t->reason = a->reason ? xstrdup(a->reason) : NULL;
    t->message = a->message ? xstrdup(a->message) : NULL;
}

static void batch_unref(struct batch *b)
{
    if (--b->pending > 0)
        return;
    then_free(b, true); /* the job patch did not go through: not carried out */
    b->done(b->ud, b->key, &b->res);
    json_decref(b->job);
    free(b->key);
    free(b->wl_rv);
    free(b->job_rv);
    free(b->job_rv_new);
    free(b);
}

/* The object a create found in its place (GET after 409 AlreadyExists): our
 * copy of this job is success; anything else fails the pass, and an object
 * kueue-ks did not create gets a Warning Event on the hub job (it would
 * block the job forever, silently). */
static void on_existing(void *ud, const struct kube_result *r)
{
    struct call *c = ud;
    struct batch *b = c->b;
    const char *origin = jx_label(c->copy, XF_LABEL_ORIGIN);
    struct xf_origin want = {.origin = origin ? origin : "",
                             .origin_uid = jx_label(c->copy, XF_LABEL_ORIGIN_UID)};
    struct xf_origin ours = {.origin = want.origin};
    struct err e;
    if (r->rc < 0) {
        batch_fail(b, r->rc, r->err, "request failed");
    } else if (xf_is_ours(r->body, &want)) {
        b->res.copy_found = true; /* created by an earlier pass: done */
    } else if (xf_is_ours(r->body, &ours)) {
        err_set(&e, -EEXIST, "cluster %s: an older copy %s is still there (it is being removed)",
                c->cluster, c->path);
        batch_fail(b, -EEXIST, &e, "");
    } else {
        err_set(&e, -EEXIST,
                "cluster %s already has %s %s/%s that kueue-ks did not create; the job cannot be "
                "copied there until it is removed or renamed",
                c->cluster, jx_str(c->copy, "kind", "object"), jx_namespace(c->copy),
                jx_name(c->copy));
        batch_fail(b, -EEXIST, &e, "");
        if (c->events && c->job)
            evrec_event(c->events, c->job, "Warning", REASON_COPY_CONFLICT, "%s", e.msg);
    }
    call_free(c);
    batch_unref(b);
}

/* An answer that the same request will get again (invalid, too large, forbidden): retrying
 * alone cannot help, so the user must hear of it. */
static bool write_refused(int status)
{
    return status == 400 || status == 403 || status == 413 || status == 422;
}

static const char *refused_what(enum wl_act_type t)
{
    switch (t) {
    case WL_ACT_CREATE_COPY:
        return "the create of the job's copy";
    case WL_ACT_DELETE_COPY:
        return "the delete of the job's copy";
    case WL_ACT_PATCH_WL_STATUS:
        return "kueue-ks's update of the Workload's status";
    default:
        return "kueue-ks's update of the job";
    }
}

/* Warning Event on the hub job with the server's own words (the recorder counts repeats). */
static void refused_event(struct call *c, const struct kube_result *r)
{
    struct batch *b = c->b;
    if (!b->res.refused && r->err)
        b->res.refused_err = *r->err;
    b->res.refused = true;
    if (!b->events || !b->job)
        return;
    char where[96];
    if (c->cluster)
        snprintf(where, sizeof where, "cluster %s", c->cluster);
    else
        snprintf(where, sizeof where, "%s",
                 c->type == WL_ACT_DELETE_COPY ? "a worker cluster" : "the hub");
    evrec_event(b->events, b->job, "Warning", REASON_WRITE_REJECTED,
                "%s refused %s (HTTP %d): %s; it is retried with backoff, and the job keeps its "
                "quota until the write is accepted or the job is changed or deleted",
                where, refused_what(c->type), r->status,
                r->err && r->err->msg[0] ? r->err->msg : "no message");
}

/* The writes whose 2xx answer is read (note_changed): the hub Workload and job
 * patches, and of those only the resourceVersion (scanned, not parsed). The others'
 * bodies (a copy created, deleted, ...) are not read at all. */
static bool answer_read(enum wl_act_type type)
{
    return type == WL_ACT_PATCH_WL_STATUS || type == WL_ACT_PATCH_JOB ||
           type == WL_ACT_PATCH_JOB_STATUS;
}

/* A hub write succeeded: did it change the object (a new resourceVersion)? */
static void note_changed(struct batch *b, enum wl_act_type type, const char *rv)
{
    bool wl = type == WL_ACT_PATCH_WL_STATUS;
    if (!answer_read(type))
        return;
    const char *read = wl ? b->wl_rv : b->job_rv;
    if (!rv || !read || strcmp(rv, read) != 0) {
        if (wl) {
            b->res.wl_changed = true;
        } else {
            b->res.job_changed = true;
            free(b->job_rv_new);
            b->job_rv_new = rv ? xstrdup(rv) : NULL;
            b->res.job_rv_new = b->job_rv_new;
        }
    }
}

/* Whether the answer `raw` shows the labels and annotations of `meta` (a merge patch's
 * metadata: a null value is a key removed). */
static bool meta_shown(const json_t *meta, const char *raw, size_t len)
{
    static const char *const which[] = {"labels", "annotations"};
    static const char *const paths[] = {"metadata.labels", "metadata.annotations", NULL};
    struct err e = {0};
    struct jscan_paths *ps = NULL;
    /* the metadata alone: the answer's spec and status are not read */
    json_t *got = jscan_paths_new(paths, &ps, &e) == 0 ? jscan_load_head(raw, len, ps, &e) : NULL;
    jscan_paths_free(ps);
    bool shown = got != NULL;
    for (size_t i = 0; shown && i < sizeof which / sizeof which[0]; i++) {
        json_t *want = json_object_get(meta, which[i]);
        const json_t *have = jx_getv(got, "metadata", which[i]);
        if (json_is_null(want)) { /* the whole map removed (the last of ours) */
            shown = json_object_size(have) == 0;
            continue;
        }
        const char *k;
        json_t *v;
        json_object_foreach(want, k, v)
        {
            const json_t *h = json_object_get(have, k);
            if (json_is_null(v) ? h != NULL : !h || !json_equal(h, v))
                shown = false;
        }
    }
    json_decref(got);
    return shown;
}

static void then_run(struct batch *b);

static void on_done(void *ud, const struct kube_result *r)
{
    struct call *c = ud;
    struct batch *b = c->b;
    bool ok = r->rc == 0;
    if (ok && c->meta && !meta_shown(c->meta, r->raw, r->raw_len)) {
        struct err e;
        err_set(&e, -EPROTO,
                "the hub answered a job's labels and annotations written through its status "
                "subresource without them: they are written through the job itself from now on");
        b->res.meta_status_dropped = true;
        batch_fail(b, -EPROTO, &e, "");
        call_free(c);
        batch_unref(b);
        return;
    }
    if (!ok && c->type == WL_ACT_CREATE_COPY && r->status == 409 &&
        strcmp(r->err->reason, "AlreadyExists") == 0 && c->cl && c->path) {
        /* is it ours? the call (and its batch reference) moves to the GET */
        char *get = xasprintf("%s/%s", c->path, jx_name(c->copy) ? jx_name(c->copy) : "");
        struct err e = {0};
        int rc = kube_client_get(c->cl, get, NULL, on_existing, c, NULL, &e);
        free(get);
        if (rc == 0) {
            b->res.calls++;
            return;
        }
        batch_fail(b, rc, &e, "submit failed");
        call_free(c);
        batch_unref(b);
        return;
    }
    if (!ok && c->type == WL_ACT_DELETE_COPY && r->status == 404)
        ok = true;
    /* the uid precondition failed: the object there now is not the one we meant,
     * which is gone */
    if (!ok && c->type == WL_ACT_DELETE_COPY && c->uid_pre && r->status == 409)
        ok = true;
    if (!ok && c->apply && r->status == 415)
        b->res.apply_unsupported = true;
    if (!ok && write_refused(r->status))
        refused_event(c, r);
    if (ok && c->type == WL_ACT_PATCH_JOB)
        b->res.job_patched = true;
    if (ok && c->type == WL_ACT_PATCH_JOB_STATUS)
        b->res.job_status_written = true;
    if (ok && c->type == WL_ACT_CREATE_COPY)
        b->res.copy_created = true;
    if (!ok) {
        log_v(b->lg, 2, "workload write failed", "workload", b->key, "error", r->err->msg);
        batch_fail(b, r->rc, r->err, "request failed");
    } else {
        note_changed(b, c->type, r->resource_version);
        if (c->type == WL_ACT_PATCH_JOB)
            then_run(b); /* the placement is in the hub: its copy now (wl_action.after_job) */
    }
    call_free(c);
    batch_unref(b);
}

/* Send req; `c` (taken) is the call's state, NULL = a plain one. */
static void submit_call(struct batch *b, struct kube_client *cl, const struct kube_request *req,
                        enum wl_act_type type, bool uid_pre, struct call *c)
{
    if (!c)
        c = xcalloc(1, sizeof(*c));
    c->b = b;
    c->type = type;
    c->uid_pre = uid_pre;
    c->apply = req->content_type && strcmp(req->content_type, WLX_CT_APPLY) == 0;
    struct err e = {0};
    b->pending++;
    b->res.calls++;
    struct kube_request r = *req;
    r.body_unused = !answer_read(type);
    r.body_rv_only = answer_read(type);
    int rc = kube_client_do(cl, &r, on_done, c, NULL, &e);
    if (rc < 0) {
        batch_fail(b, rc, &e, "submit failed");
        call_free(c);
        b->pending--;
    }
}

static void submit(struct batch *b, struct kube_client *cl, const struct kube_request *req,
                   enum wl_act_type type, bool uid_pre)
{
    submit_call(b, cl, req, type, uid_pre, NULL);
}

static char *job_path(const struct kind_def *k, const json_t *obj, const char *sub)
{
    if (!k || !k->resource[0] || !jx_name(obj))
        return NULL; /* the static generic entry: no resource known */
    if (sub && k->no_status_subresource)
        sub = NULL;
    return kube_path(k->group, k->version, k->resource, jx_namespace(obj), jx_name(obj), sub);
}

/* The metadata of a merge patch that writes labels and annotations only (its guard, the
 * resourceVersion, aside), or NULL. Borrowed. */
static json_t *meta_only_patch(const json_t *patch)
{
    json_t *md = json_object_get(patch, "metadata");
    if (json_object_size(patch) != 1 || !json_is_object(md))
        return NULL;
    const char *k;
    json_t *v;
    json_object_foreach(md, k, v)
    {
        if (strcmp(k, "labels") && strcmp(k, "annotations") && strcmp(k, "resourceVersion"))
            return NULL;
    }
    return md;
}

static void do_patch_job(struct batch *b, const struct wlx_ops *ops, const struct kind_def *k,
                         const json_t *job, const struct wl_action *a)
{
    json_t *meta = a->type == WL_ACT_PATCH_JOB && ops->job_meta_via_status && k &&
                           k->meta_in_status && !k->no_status_subresource
                       ? meta_only_patch(a->patch)
                       : NULL;
    char *path = job_path(k, job, a->type == WL_ACT_PATCH_JOB_STATUS || meta ? "status" : NULL);
    if (!path) {
        batch_fail(b, -EINVAL, NULL, "job patch: no job or its kind has no known resource");
        return;
    }
    struct kube_request req = {
        .method = "PATCH", .path = path, .body = a->patch, .content_type = KUBE_CT_MERGE_PATCH};
    struct call *c = NULL;
    if (meta) {
        c = xcalloc(1, sizeof(*c));
        c->meta = json_incref(meta);
    }
    submit_call(b, ops->hub, &req, a->type, false, c);
    free(path);
}

/* Workload status: server-side apply, or the merge patch on a server without it. */
static void do_wl_status(struct batch *b, const struct wlx_ops *ops, const json_t *workload,
                         const struct wl_action *a)
{
    if (!jx_name(workload)) {
        batch_fail(b, -EINVAL, NULL, "workload status: no workload");
        return;
    }
    const char *ver = ops->kueue_version ? ops->kueue_version : "v1beta1";
    const char *fm = ops->field_manager ? ops->field_manager : "kueue-ks";
    char *path = kube_path("kueue.x-k8s.io", ver, "workloads", jx_namespace(workload),
                           jx_name(workload), "status");
    const char *q[] = {"fieldManager", fm, "force", "true", NULL};
    struct kube_request req = {.method = "PATCH", .path = path};
    if (ops->server_side_apply) {
        req.body = a->apply;
        req.content_type = WLX_CT_APPLY;
        req.query = q;
    } else {
        req.body = a->patch;
        req.content_type = KUBE_CT_MERGE_PATCH;
    }
    submit(b, ops->hub, &req, a->type, false);
    free(path);
}

static void do_create_copy(struct batch *b, const struct wlx_ops *ops, struct kube_client *w,
                           const struct kind_def *k, const json_t *job, const struct wl_action *a)
{
    char *path = kube_path(k->group, k->version, k->resource, jx_namespace(a->object), NULL, NULL);
    struct kube_request req = {.method = "POST", .path = path, .body = a->object};
    struct call *c = xcalloc(1, sizeof(*c));
    c->cl = w;
    c->path = xstrdup(path);
    c->cluster = xstrdup(a->cluster);
    c->copy = json_incref(a->object);
    c->job = job ? json_incref((json_t *)job) : NULL;
    c->events = ops->events;
    submit_call(b, w, &req, a->type, false, c);
    free(path);
}

static void do_delete_copy(struct batch *b, struct kube_client *w, const struct kind_def *k,
                           const struct wl_action *a)
{
    char *path = kube_path(k->group, k->version, k->resource, a->ns, a->name, NULL);
    json_t *opts = json_pack("{s:s,s:s,s:s}", "apiVersion", "v1", "kind", "DeleteOptions",
                             "propagationPolicy", "Background");
    if (a->uid)
        json_object_set_new(opts, "preconditions", json_pack("{s:s}", "uid", a->uid));
    struct kube_request req = {.method = "DELETE", .path = path, .body = opts};
    submit(b, w, &req, a->type, a->uid != NULL);
    json_decref(opts);
    free(path);
}

/* Create or delete a copy on its worker cluster. */
static void do_copy(struct batch *b, const struct wlx_ops *ops, const struct kind_def *k,
                    const json_t *job, const struct wl_action *a)
{
    struct kube_client *w = ops->worker ? ops->worker(ops->ud, a->cluster) : NULL;
    if (!w) {
        struct err ce;
        err_set(&ce, -ENOTCONN, "worker cluster %s has no connected client", a->cluster);
        batch_fail(b, -ENOTCONN, &ce, "");
        return;
    }
    if (!k || !k->resource[0]) {
        batch_fail(b, -EINVAL, NULL, "copy: the job kind has no known resource");
        return;
    }
    if (a->type == WL_ACT_CREATE_COPY)
        do_create_copy(b, ops, w, k, job, a);
    else
        do_delete_copy(b, w, k, a);
}

/* The after_job actions, once the pass's job patch went through. A copy whose worker has no
 * client now is left to the pass after the placement (state 6 waits for its worker). */
static void then_run(struct batch *b)
{
    bool dropped = false; /* the copy: its Event goes with it */
    for (size_t i = 0; i < b->nthen; i++) {
        const struct wl_action *a = &b->then[i];
        if (a->type == WL_ACT_EVENT) {
            if (!dropped && b->events && b->job && a->target == WL_TGT_JOB)
                evrec_event(b->events, b->job, a->event_type, a->reason, "%s", a->message);
            continue;
        }
        if (a->type != WL_ACT_CREATE_COPY)
            continue;
        struct kube_client *w = b->ops.worker ? b->ops.worker(b->ops.ud, a->cluster) : NULL;
        if (!w || !b->kind || !b->kind->resource[0]) {
            log_v(b->lg, 2, "copy left to the next pass", "workload", b->key, "cluster", a->cluster,
                  "why", w ? "its kind has no known resource" : "no worker client");
            dropped = b->res.copy_dropped = true;
            continue;
        }
        do_create_copy(b, &b->ops, w, b->kind, b->job, a);
    }
    then_free(b, false);
}

int wlx_perform(const struct wlx_ops *ops, const char *wl_key, const json_t *workload,
                const json_t *job, const struct kind_def *k, const struct wl_actions *acts,
                wlx_done_fn done, void *ud, struct err *e)
{
    if (!ops || !ops->hub || !wl_key || !acts || !done)
        return err_set(e, -EINVAL, "wlx_perform: missing arguments");
    struct batch *b = xcalloc(1, sizeof(*b));
    b->key = xstrdup(wl_key);
    b->done = done;
    b->ud = ud;
    b->pending = 1;
    b->res.requeue_ms = -1;
    b->lg = ops->lg;
    b->events = ops->events;
    b->job = job ? json_incref((json_t *)job) : NULL;
    const char *wl_rv = workload ? jx_resource_version(workload) : NULL;
    const char *job_rv = job ? jx_resource_version(job) : NULL;
    b->wl_rv = wl_rv ? xstrdup(wl_rv) : NULL;
    b->job_rv = job_rv ? xstrdup(job_rv) : NULL;
    b->ops = *ops;
    b->kind = k;
    for (size_t i = 0; i < acts->n; i++) {
        const struct wl_action *a = &acts->v[i];
        if (a->after_job) {
            then_keep(b, a);
            continue;
        }
        switch (a->type) {
        case WL_ACT_PATCH_JOB:
        case WL_ACT_PATCH_JOB_STATUS:
            do_patch_job(b, ops, k, job, a);
            break;
        case WL_ACT_PATCH_WL_STATUS:
            do_wl_status(b, ops, workload, a);
            break;
        case WL_ACT_CREATE_COPY:
        case WL_ACT_DELETE_COPY:
            do_copy(b, ops, k, job, a);
            break;
        case WL_ACT_EVENT: {
            const json_t *inv = a->target == WL_TGT_JOB ? job : workload;
            if (ops->events && inv)
                evrec_event(ops->events, inv, a->event_type, a->reason, "%s", a->message);
            break;
        }
        case WL_ACT_RESERVE:
            if (ops->reserve)
                ops->reserve(ops->resv_ud, wl_key, a->cluster);
            break;
        case WL_ACT_UNRESERVE:
            if (ops->unreserve)
                ops->unreserve(ops->resv_ud, wl_key);
            break;
        case WL_ACT_REQUEUE:
            if (b->res.requeue_ms < 0 || a->after_ms < b->res.requeue_ms)
                b->res.requeue_ms = a->after_ms;
            break;
        }
    }
    batch_unref(b);
    return 0;
}
