/* quota controller driver: see controller.h. */
#include "controllers/quota/controller.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/quota/aggregate.h"
#include "pkg/kube/cache.h"
#include "pkg/kube/discovery.h"
#include "pkg/kube/evrec.h"
#include "pkg/kube/informer.h"
#include "pkg/kube/store.h"
#include "pkg/quantity/quantity.h"
#include "pkg/reasons/reasons.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"
#include "pkg/workqueue/workqueue.h"

#define QUOTA_MSG_MAX 4096

/* One managed ClusterQueue. */
struct qq {
    char *name;
    struct agg *agg;
    json_t *cq;        /* the newest ClusterQueue we know (store's, or a PATCH/GET answer) */
    char *config_warn; /* last configuration warnings emitted, or NULL */
    bool written;      /* a quota write of ours succeeded since this process took the queue */
};

/* An in-flight write or refresh for one queue key. */
struct qcall {
    struct quota_ctl *q;
    char *key;
    char *message; /* QuotaUpdated event text (patch only) */
    bool refresh;  /* GET after a 409 */
    struct kube_call *call;
    struct qcall *next;
};

struct quota_ctl {
    struct agg_cfg cfg;
    char **names; /* --cluster-queue */
    size_t n_names;
    struct quota_tuning tun;

    struct kube_client *client;
    struct ev_loop *loop;
    const struct logger *lg;
    struct metrics_registry *reg;
    struct evrec *ev;
    bool running;

    char version[16];  /* kueue API version */
    struct disc *disc; /* Kueue API discovery until the version is known */
    ev_timer metrics_timer;

    struct informer *cq_inf, *rf_inf, *cm_inf;
    /* flavors and metrics: shared with the workload controller through the
     * manager's cache (pkg/kube/cache.h); its own cache without a manager */
    struct kcache *cache;
    bool own_cache;
    struct cache_reg *cq_reg, *rf_reg, *cm_reg;
    struct wq *wq;

    struct qq **qs;
    size_t nq, capq;
    struct qcall *calls;

    struct metrics_gauge_vec *m_quota;
    struct metrics_gauge_vec *m_age;
    struct metrics_counter *m_errors;
    struct metrics_gauge *m_depth;

    struct quota_stats st;
};

/* ---- options ------------------------------------------------------------- */

void quota_flags(struct quota_options *o, struct flag *fl)
{
    const struct flag t[QUOTA_NFLAGS] = {
        {"cluster-queue", FLAG_STRINGS, &o->cluster_queues,
         "ClusterQueue whose quota follows the workers' capacity (repeatable; also every "
         "ClusterQueue labelled " QUOTA_MANAGED_LABEL "=true)",
         NULL},
        {"default-flavor", FLAG_STRING, &o->default_flavor,
         "ResourceFlavor that receives nodes matching no flavor's nodeLabels", "default-flavor"},
        {"resource-alias", FLAG_STRINGS, &o->resource_alias,
         "Map a ClusterQueue resource to the nodes' name, e.g. gpu=nvidia.com/gpu (repeatable)",
         NULL},
        {"quota-scale", FLAG_STRING, &o->quota_scale,
         "Factor in (0, 1] applied to the summed capacity", "1"},
        {"metrics-stale-after", FLAG_DURATION, &o->metrics_stale_after,
         "A cluster whose ClusterMetrics are older than this drops out of the quota", "60s"},
        {"shrink-delay", FLAG_DURATION, &o->shrink_delay,
         "How long capacity must stay lower before a quota is decreased", "60s"},
        {"quota-subtract-requests", FLAG_BOOL, &o->subtract_unmanaged,
         "Subtract the workers' pod requests (adding back the queue's own reservations)", "true"},
    };
    memcpy(fl, t, sizeof t);
}

int quota_options_to_cfg(const struct quota_options *o, struct agg_cfg *out, struct err *e)
{
    agg_cfg_default(out);
    out->default_flavor =
        o->default_flavor && o->default_flavor[0] ? xstrdup(o->default_flavor) : NULL;
    out->subtract_requests = o->subtract_unmanaged;
    if (o->metrics_stale_after < 0 || o->shrink_delay < 0) {
        quota_cfg_release(out);
        return err_set(e, -EINVAL, "--metrics-stale-after and --shrink-delay must not be negative");
    }
    out->stale_after_ms = (int64_t)(o->metrics_stale_after * 1000.0);
    out->shrink_delay_ms = (int64_t)(o->shrink_delay * 1000.0);
    int rc;
    if (o->quota_scale && o->quota_scale[0] &&
        (rc = agg_scale_parse(o->quota_scale, &out->scale_ppm, e)) < 0) {
        quota_cfg_release(out);
        err_prefix(e, "--quota-scale");
        return rc;
    }
    if (o->resource_alias.n) {
        struct agg_alias *al = xcalloc(o->resource_alias.n, sizeof *al);
        out->aliases = al;
        for (size_t i = 0; i < o->resource_alias.n; i++) {
            if ((rc = agg_alias_parse(o->resource_alias.v[i], &al[i], e)) < 0) {
                quota_cfg_release(out);
                err_prefix(e, "--resource-alias");
                return rc;
            }
            out->n_aliases = i + 1;
        }
    }
    return 0;
}

void quota_cfg_release(struct agg_cfg *c)
{
    free((char *)c->default_flavor);
    c->default_flavor = NULL;
    struct agg_alias *al = (struct agg_alias *)c->aliases;
    for (size_t i = 0; al && i < c->n_aliases; i++)
        agg_alias_free(&al[i]);
    free(al);
    c->aliases = NULL;
    c->n_aliases = 0;
}

/* ---- helpers ------------------------------------------------------------- */

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *meta_str(const json_t *o, const char *field)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), field));
}

/* Why kueue-ks manages this ClusterQueue's quota (static text), or NULL. */
static const char *managed_by(const struct quota_ctl *q, const json_t *cq)
{
    const char *name = meta_str(cq, "name");
    if (!name)
        return NULL;
    for (size_t i = 0; i < q->n_names; i++)
        if (strcmp(q->names[i], name) == 0)
            return "--cluster-queue";
    const char *l = json_string_value(json_object_get(
        json_object_get(json_object_get(cq, "metadata"), "labels"), QUOTA_MANAGED_LABEL));
    return l && strcmp(l, "true") == 0 ? "label " QUOTA_MANAGED_LABEL "=true" : NULL;
}

static bool is_managed(const struct quota_ctl *q, const json_t *cq)
{
    return managed_by(q, cq) != NULL;
}

static struct qq *qq_find(const struct quota_ctl *q, const char *name, size_t *idx)
{
    for (size_t i = 0; i < q->nq; i++)
        if (strcmp(q->qs[i]->name, name) == 0) {
            if (idx)
                *idx = i;
            return q->qs[i];
        }
    return NULL;
}

static void qq_free(struct qq *x)
{
    if (!x)
        return;
    agg_free(x->agg);
    json_decref(x->cq);
    free(x->config_warn);
    free(x->name);
    free(x);
}

/* The object an Event is about: kind/apiVersion set even when the list items lack them. */
static json_t *involved_of(const struct quota_ctl *q, const json_t *cq)
{
    json_t *md = json_object();
    const char *f[] = {"name", "uid", "resourceVersion"};
    for (size_t i = 0; i < 3; i++) {
        const char *v = meta_str(cq, f[i]);
        if (v)
            json_object_set_new(md, f[i], json_string(v));
    }
    char av[64];
    snprintf(av, sizeof av, "%s/%s", QUOTA_KUEUE_GROUP, q->version);
    return json_pack("{s:s,s:s,s:o}", "kind", "ClusterQueue", "apiVersion", av, "metadata", md);
}

static void event(struct quota_ctl *q, const json_t *cq, const char *type, const char *reason,
                  const char *msg)
{
    if (!q->ev)
        return;
    json_t *inv = involved_of(q, cq);
    evrec_event(q->ev, inv, type, reason, "%s", msg);
    json_decref(inv);
}

static void warnings_to_events(struct quota_ctl *q, struct qq *x, struct vocab_warnings *w)
{
    for (size_t i = 0; i < w->n; i++) {
        log_warn(q->lg, "bad ClusterMetrics data skipped", "clusterqueue", x->name, "warning",
                 w->msg[i]);
        event(q, x->cq, "Warning", REASON_BAD_CLUSTER_METRICS, w->msg[i]);
    }
}

/* The gauges follow the ClusterQueue's current nominalQuota values. */
static void gauges_from_cq(struct quota_ctl *q, const char *name, const json_t *cq)
{
    if (!q->m_quota)
        return;
    json_t *rgs = json_object_get(json_object_get(cq, "spec"), "resourceGroups");
    size_t gi, fi, ri;
    json_t *g, *f, *r;
    json_array_foreach(rgs, gi, g)
    {
        json_array_foreach(json_object_get(g, "flavors"), fi, f)
        {
            const char *fname = json_string_value(json_object_get(f, "name"));
            json_array_foreach(json_object_get(f, "resources"), ri, r)
            {
                const char *rname = json_string_value(json_object_get(r, "name"));
                struct qty v;
                if (!fname || !rname ||
                    qty_parse_json(json_object_get(r, "nominalQuota"), &v, NULL) < 0)
                    continue;
                metrics_gauge_set(metrics_gauge_vec_with(q->m_quota, name, fname, rname),
                                  qty_approx(&v));
            }
        }
    }
}

static void enqueue_all(struct quota_ctl *q)
{
    for (size_t i = 0; i < q->nq; i++)
        wq_add(q->wq, q->qs[i]->name);
}

/* ---- informer handlers ---------------------------------------------------- */

struct feed_ctx {
    struct quota_ctl *q;
    struct qq *x;
};

static int feed_flavor(const char *key, json_t *obj, void *ud)
{
    (void)key;
    struct feed_ctx *c = ud;
    agg_set_flavor(c->x->agg, obj, NULL);
    return 0;
}

static int feed_cluster(const char *key, json_t *obj, void *ud)
{
    (void)key;
    struct feed_ctx *c = ud;
    struct vocab_warnings w = {0};
    agg_update_cluster(c->x->agg, obj, &w, NULL);
    warnings_to_events(c->q, c->x, &w);
    vocab_warnings_free(&w);
    return 0;
}

/* Drop the quota gauges of a queue that is no longer managed. */
static void gauges_drop(struct quota_ctl *q, const char *name, const json_t *cq)
{
    if (!q->m_quota)
        return;
    json_t *rgs = json_object_get(json_object_get(cq, "spec"), "resourceGroups");
    size_t gi, fi, ri;
    json_t *g, *f, *r;
    json_array_foreach(rgs, gi, g)
    {
        json_array_foreach(json_object_get(g, "flavors"), fi, f)
        {
            const char *fname = json_string_value(json_object_get(f, "name"));
            json_array_foreach(json_object_get(f, "resources"), ri, r)
            {
                const char *rname = json_string_value(json_object_get(r, "name"));
                if (fname && rname)
                    metrics_gauge_vec_delete(q->m_quota, METRICS_LABELS(name, fname, rname));
            }
        }
    }
}

static void qq_remove(struct quota_ctl *q, const char *name)
{
    size_t i;
    struct qq *x = qq_find(q, name, &i);
    if (!x)
        return;
    log_info(q->lg, "ClusterQueue no longer managed", "clusterqueue", name);
    gauges_drop(q, name, x->cq);
    q->qs[i] = q->qs[--q->nq];
    qq_free(x);
}

static void cq_set(struct quota_ctl *q, json_t *cq)
{
    const char *name = meta_str(cq, "name");
    if (!name)
        return;
    if (!is_managed(q, cq)) {
        qq_remove(q, name);
        return;
    }
    struct qq *x = qq_find(q, name, NULL);
    bool fresh = false;
    if (!x) {
        x = xcalloc(1, sizeof *x);
        x->name = xstrdup(name);
        x->agg = agg_new(&q->cfg);
        if (q->nq == q->capq) {
            q->capq = q->capq ? q->capq * 2 : 8;
            q->qs = xrealloc(q->qs, q->capq * sizeof *q->qs);
        }
        q->qs[q->nq++] = x;
        fresh = true;
        log_info(q->lg, "managing ClusterQueue quota", "clusterqueue", name, "by",
                 managed_by(q, cq), "note",
                 "its nominalQuota follows the workers' ClusterMetrics; values set by hand are "
                 "replaced");
    }
    json_decref(x->cq);
    x->cq = json_incref(cq);
    struct err e;
    err_clear(&e);
    if (agg_set_queue(x->agg, cq, &e) < 0)
        log_warn(q->lg, "ClusterQueue not understood; keeping the previous state", "clusterqueue",
                 name, "error", e.msg);
    if (fresh) {
        struct feed_ctx c = {q, x};
        store_foreach(informer_store(q->rf_inf), feed_flavor, &c);
        store_foreach(informer_store(q->cm_inf), feed_cluster, &c);
    }
    gauges_from_cq(q, name, cq);
    wq_add(q->wq, name);
}

static void cq_add(void *ud, json_t *obj)
{
    cq_set(ud, obj);
}
static void cq_update(void *ud, json_t *old, json_t *obj)
{
    (void)old;
    cq_set(ud, obj);
}
static void cq_delete(void *ud, json_t *obj)
{
    struct quota_ctl *q = ud;
    const char *name = meta_str(obj, "name");
    if (name)
        qq_remove(q, name);
}

static void rf_set(void *ud, json_t *obj)
{
    struct quota_ctl *q = ud;
    for (size_t i = 0; i < q->nq; i++) {
        struct err e;
        err_clear(&e);
        if (agg_set_flavor(q->qs[i]->agg, obj, &e) < 0) {
            log_warn(q->lg, "ResourceFlavor not understood", "error", e.msg);
            break;
        }
    }
    enqueue_all(q);
}
static void rf_update(void *ud, json_t *old, json_t *obj)
{
    (void)old;
    rf_set(ud, obj);
}
static void rf_delete(void *ud, json_t *obj)
{
    struct quota_ctl *q = ud;
    const char *name = meta_str(obj, "name");
    for (size_t i = 0; name && i < q->nq; i++)
        agg_remove_flavor(q->qs[i]->agg, name);
    enqueue_all(q);
}

static void cm_set(void *ud, json_t *obj)
{
    struct quota_ctl *q = ud;
    for (size_t i = 0; i < q->nq; i++) {
        struct vocab_warnings w = {0};
        struct err e;
        err_clear(&e);
        if (agg_update_cluster(q->qs[i]->agg, obj, &w, &e) < 0) {
            char *m = xasprintf("ClusterMetrics %s ignored (previous contribution kept): %s",
                                meta_str(obj, "name") ? meta_str(obj, "name") : "?", e.msg);
            vocab_warnings_add(&w, "%s", m);
            free(m);
        }
        warnings_to_events(q, q->qs[i], &w);
        vocab_warnings_free(&w);
        wq_add(q->wq, q->qs[i]->name);
    }
}
static void cm_update(void *ud, json_t *old, json_t *obj)
{
    (void)old;
    cm_set(ud, obj);
}
static void cm_delete(void *ud, json_t *obj)
{
    struct quota_ctl *q = ud;
    const char *name = meta_str(obj, "name");
    if (!name)
        return;
    for (size_t i = 0; i < q->nq; i++) {
        agg_remove_cluster(q->qs[i]->agg, name);
        wq_add(q->wq, q->qs[i]->name);
    }
    if (q->m_age)
        metrics_gauge_vec_delete(q->m_age, METRICS_LABELS(name));
}

/* ---- projections ------------------------------------------------------------ */

static json_t *project_cq(json_t *obj, void *ud)
{
    (void)ud;
    static const char *const p[] = {"metadata.labels", "spec.resourceGroups",
                                    "status.flavorsReservation", NULL};
    return store_project_fields(obj, p);
}

/* ---- reconcile -------------------------------------------------------------- */

static void qcall_unlink(struct quota_ctl *q, struct qcall *c)
{
    for (struct qcall **p = &q->calls; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            return;
        }
}

static void qcall_free(struct qcall *c)
{
    free(c->key);
    free(c->message);
    free(c);
}

static void requeue_at(struct quota_ctl *q, const char *key, int64_t next_ms, int64_t now_ms)
{
    if (next_ms == INT64_MAX)
        return;
    double d = (double)(next_ms - now_ms) / 1000.0;
    wq_add_after(q->wq, key, d > 0.001 ? d : 0.001);
}

static void fail(struct quota_ctl *q, const char *key, const char *what, const struct err *e)
{
    q->st.errors++;
    if (q->m_errors)
        metrics_counter_inc(q->m_errors);
    log_error(q->lg, what, "clusterqueue", key, "error", e->msg);
    wq_add_rate_limited(q->wq, key);
}

static char *cq_path(const struct quota_ctl *q, const char *name)
{
    return kube_path(QUOTA_KUEUE_GROUP, q->version, "clusterqueues", NULL, name, NULL);
}

static void refresh_done(void *ud, const struct kube_result *r);

static void patch_done(void *ud, const struct kube_result *r)
{
    struct qcall *c = ud;
    struct quota_ctl *q = c->q;
    qcall_unlink(q, c);
    struct qq *x = qq_find(q, c->key, NULL);
    if (r->rc == 0) {
        q->st.patches++;
        /* the first write replaces what the ClusterQueue was created with
         * (examples/setup/'s 6 cpu became 16): said as such */
        log_info(q->lg,
                 x && !x->written ? "ClusterQueue quota replaced by the workers' capacity"
                                  : "quota updated",
                 "clusterqueue", c->key, "changes", c->message);
        if (x)
            x->written = true;
        if (x && json_is_object(r->body)) {
            json_t *p = project_cq(r->body, NULL);
            json_decref(x->cq);
            x->cq = p;
            agg_set_queue(x->agg, p, NULL);
            gauges_from_cq(q, x->name, p);
        }
        if (x)
            event(q, x->cq, "Normal", REASON_QUOTA_UPDATED, c->message);
        wq_forget(q->wq, c->key);
        wq_done(q->wq, c->key);
        qcall_free(c);
        return;
    }
    if (r->rc == -EBUSY && x) {
        /* Conflict: the ClusterQueue changed under us. Fetch it and try again. */
        q->st.conflicts++;
        log_info(q->lg, "ClusterQueue changed meanwhile; refreshing", "clusterqueue", c->key);
        char *path = cq_path(q, c->key);
        struct err e;
        err_clear(&e);
        c->refresh = true;
        int rc = kube_client_get(q->client, path, NULL, refresh_done, c, &c->call, &e);
        free(path);
        if (rc == 0) {
            c->next = q->calls;
            q->calls = c;
            return;
        }
        fail(q, c->key, "cannot refresh ClusterQueue", &e);
    } else {
        fail(q, c->key, "quota update failed", r->err);
    }
    wq_done(q->wq, c->key);
    qcall_free(c);
}

static void refresh_done(void *ud, const struct kube_result *r)
{
    struct qcall *c = ud;
    struct quota_ctl *q = c->q;
    qcall_unlink(q, c);
    struct qq *x = qq_find(q, c->key, NULL);
    if (r->rc == 0 && json_is_object(r->body)) {
        json_t *p = project_cq(r->body, NULL);
        if (x && is_managed(q, p)) {
            json_decref(x->cq);
            x->cq = json_incref(p);
            agg_set_queue(x->agg, p, NULL);
            gauges_from_cq(q, x->name, p);
            wq_add(q->wq, c->key); /* marked dirty: reconciled again right after done */
        }
        json_decref(p);
    } else if (r->rc == -ENOENT) {
        qq_remove(q, c->key);
    } else {
        fail(q, c->key, "cannot refresh ClusterQueue", r->err);
    }
    wq_done(q->wq, c->key);
    qcall_free(c);
}

/* "default-flavor/cpu 4 -> 6, default-flavor/memory 8Gi -> 10Gi" */
static char *change_message(const json_t *cq, const struct agg_result *r)
{
    struct buf b;
    buf_init(&b, QUOTA_MSG_MAX);
    json_t *rgs = json_object_get(json_object_get(cq, "spec"), "resourceGroups");
    for (size_t i = 0; i < r->n_changes; i++) {
        const struct agg_change *ch = &r->changes[i];
        json_t *fl = json_array_get(json_object_get(json_array_get(rgs, ch->group), "flavors"),
                                    ch->flavor_idx);
        json_t *old = json_object_get(
            json_array_get(json_object_get(fl, "resources"), ch->resource_idx), "nominalQuota");
        char ob[QTY_STR_MAX];
        const char *os = "none";
        struct qty v;
        if (json_is_string(old))
            os = json_string_value(old);
        else if (old && qty_parse_json(old, &v, NULL) == 0)
            os = qty_fmt(&v, ob);
        buf_printf(&b, "%s%s/%s %s -> %s", i ? ", " : "", ch->flavor, ch->resource, os, ch->value);
    }
    /* why a quota shrinks all at once: a worker's capacity left out */
    if (r->left_out)
        buf_printf(&b,
                   "; left out (metrics older than --metrics-stale-after, missing or not "
                   "ready): %s",
                   r->left_out);
    return buf_detach(&b);
}

static void config_warnings(struct quota_ctl *q, struct qq *x, const struct vocab_warnings *w)
{
    struct buf b;
    buf_init(&b, QUOTA_MSG_MAX);
    for (size_t i = 0; i < w->n; i++)
        buf_printf(&b, "%s%s", i ? "; " : "", w->msg[i]);
    char *s = buf_detach(&b);
    bool same = (!x->config_warn && !s[0]) || (x->config_warn && strcmp(x->config_warn, s) == 0);
    if (!same && s[0]) {
        log_warn(q->lg, "quota configuration problem", "clusterqueue", x->name, "warning", s);
        event(q, x->cq, "Warning", REASON_QUOTA_CONFIG, s);
    }
    free(x->config_warn);
    x->config_warn = s[0] ? s : NULL;
    if (!s[0])
        free(s);
}

static void reconcile(struct wq *wq, const char *key, void *ud)
{
    (void)wq;
    struct quota_ctl *q = ud;
    q->st.reconciles++;
    struct qq *x = qq_find(q, key, NULL);
    if (!x || !q->running) {
        wq_forget(q->wq, key);
        wq_done(q->wq, key);
        return;
    }
    if (!quota_ctl_synced(q)) {
        /* a ClusterQueue listed before the ClusterMetrics would get the quota
         * of "no clusters" (0) written, at once with --shrink-delay=0 */
        wq_add_after(q->wq, key, 0.1);
        wq_done(q->wq, key);
        return;
    }
    int64_t now = wall_ms();
    struct agg_result r;
    if (agg_compute(x->agg, now, &r) < 0) {
        agg_result_free(&r);
        wq_done(q->wq, key);
        return;
    }
    config_warnings(q, x, &r.warnings);
    requeue_at(q, key, r.next_check_ms, now);
    json_t *patch = agg_build_patch(x->cq, &r);
    if (!patch) {
        agg_result_free(&r);
        wq_forget(q->wq, key);
        wq_done(q->wq, key);
        return;
    }
    struct qcall *c = xcalloc(1, sizeof *c);
    c->q = q;
    c->key = xstrdup(key);
    c->message = change_message(x->cq, &r);
    agg_result_free(&r);
    char *path = cq_path(q, key);
    struct err e;
    err_clear(&e);
    int rc =
        kube_client_patch(q->client, path, KUBE_CT_MERGE_PATCH, patch, patch_done, c, &c->call, &e);
    free(path);
    json_decref(patch);
    if (rc < 0) {
        fail(q, key, "cannot send quota update", &e);
        wq_done(q->wq, key);
        qcall_free(c);
        return;
    }
    c->next = q->calls;
    q->calls = c;
}

/* ---- start: discovery, informers ---------------------------------------------- */

/* A shared informer (whole objects: the same key as the workload controller's; ClusterQueues
 * too, so the hub's are listed and watched once). */
static int new_shared(struct quota_ctl *q, const char *group, const char *version,
                      const char *resource, const char *kind, const struct informer_handlers *h,
                      struct cache_reg **reg, struct informer **out, struct err *e)
{
    struct informer_opts io = {
        .group = group,
        .version = version,
        .resource = resource,
        .kind = kind,
        .lg = q->lg,
        .backoff_initial_s = q->tun.informer_backoff_s,
        .backoff_max_s = q->tun.informer_backoff_s > 0 ? q->tun.informer_backoff_s * 10 : 0,
    };
    int rc = cache_acquire(q->cache, &io, h, reg, e);
    if (rc < 0)
        return rc;
    *out = cache_informer(*reg);
    return cache_start(*reg, e);
}

static void start_informers(struct quota_ctl *q)
{
    struct err e;
    err_clear(&e);
    struct informer_handlers rf = {rf_set, rf_update, rf_delete, q};
    struct informer_handlers cm = {cm_set, cm_update, cm_delete, q};
    struct informer_handlers cq = {cq_add, cq_update, cq_delete, q};
    /* Flavors and metrics first, so a queue's first reconcile already sees them. */
    if (new_shared(q, QUOTA_KUEUE_GROUP, q->version, "resourceflavors", "ResourceFlavor", &rf,
                   &q->rf_reg, &q->rf_inf, &e) < 0 ||
        new_shared(q, QUOTA_METRICS_GROUP, QUOTA_METRICS_VER, "clustermetrics", "ClusterMetrics",
                   &cm, &q->cm_reg, &q->cm_inf, &e) < 0 ||
        new_shared(q, QUOTA_KUEUE_GROUP, q->version, "clusterqueues", "ClusterQueue", &cq,
                   &q->cq_reg, &q->cq_inf, &e) < 0)
        log_error(q->lg, "cannot start quota informers", "error", e.msg);
}

static int accept_kueue(void *ud, const json_t *body, struct err *e)
{
    (void)ud;
    const char *v;
    return disc_kueue_version(body, &v, e);
}

static void disc_done(void *ud, int rc, const json_t *body)
{
    struct quota_ctl *q = ud;
    (void)rc; /* retry_not_found: only a served group gets here */
    disc_free(q->disc);
    q->disc = NULL;
    const char *pick = "v1beta1";
    disc_kueue_version(body, &pick, NULL);
    snprintf(q->version, sizeof q->version, "%s", pick);
    log_info(q->lg, "quota controller using Kueue API", "version", q->version);
    start_informers(q);
}

static void disc_retry(void *ud, const struct err *e, double delay_s)
{
    struct quota_ctl *q = ud;
    if (e->code == -ENOENT)
        log_error(q->lg,
                  "Kueue is not installed on the hub (no API group " QUOTA_KUEUE_GROUP
                  "); retrying",
                  "retry_in_s", LOG_INT((long long)(delay_s + 0.5)));
    else
        log_error(q->lg, "Kueue API discovery failed; retrying", "error", e->msg, "retry_in_s",
                  LOG_INT((long long)(delay_s + 0.5)));
}

/* The shared discovery rule (pkg/kube/discovery.h); Kueue missing or
 * serving neither version is waited for too. */
static void discover(struct quota_ctl *q)
{
    struct disc_opts o = {.client = q->client,
                          .path = DISC_KUEUE_GROUP_PATH,
                          .retry_not_found = true,
                          .backoff_s = q->tun.retry_s,
                          .backoff_max_s = q->tun.retry_s > 30 ? q->tun.retry_s : 30,
                          .accept = accept_kueue,
                          .done = disc_done,
                          .on_retry = disc_retry,
                          .ud = q};
    struct err e;
    err_clear(&e);
    if (disc_start(&o, &q->disc, &e) < 0)
        log_error(q->lg, "Kueue API discovery cannot start", "error", e.msg);
}

struct age_ctx {
    struct quota_ctl *q;
    int64_t now;
};

static int age_one(const char *key, json_t *obj, void *ud)
{
    struct age_ctx *c = ud;
    const char *lu =
        json_string_value(json_object_get(json_object_get(obj, "status"), "lastUpdated"));
    struct timespec ts;
    if (!lu || clock_parse_rfc3339(lu, &ts) < 0)
        return 0;
    double age = (double)(c->now - ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000)) / 1000.0;
    metrics_gauge_set(metrics_gauge_vec_with(c->q->m_age, key), age);
    return 0;
}

static void metrics_refresh(struct quota_ctl *q)
{
    if (!q->reg)
        return;
    struct wq_stats ws;
    wq_stats(q->wq, &ws);
    metrics_gauge_set(q->m_depth, (double)(ws.depth + ws.waiting));
    if (q->cm_inf) {
        struct age_ctx c = {q, wall_ms()};
        store_foreach(informer_store(q->cm_inf), age_one, &c);
    }
}

static void metrics_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    metrics_refresh(w->data);
}

static int synced_check(void *ud, struct err *e)
{
    struct quota_ctl *q = ud;
    if (!q->running)
        return 0; /* not leading: nothing to be ready for */
    if (quota_ctl_synced(q))
        return 0;
    if (q->version[0])
        return err_set(e, -EAGAIN, "quota informers not synced");
    const char *why = q->disc ? disc_last_error(q->disc) : "";
    return err_set(e, -EAGAIN, "quota informers not synced (Kueue API not discovered yet%s%s)",
                   *why ? ": " : "", why);
}

static int register_metrics(struct quota_ctl *q, struct err *e)
{
    q->m_quota =
        metrics_gauge_vec_new(q->reg, "kueue_ks_quota", "nominalQuota of managed ClusterQueues",
                              METRICS_LABELS("cluster_queue", "flavor", "resource"), e);
    if (!q->m_quota)
        return e ? e->code : -EINVAL;
    q->m_age = metrics_gauge_vec_new(q->reg, "kueue_ks_cluster_metrics_age_seconds",
                                     "Age of each cluster's ClusterMetrics (status.lastUpdated)",
                                     METRICS_LABELS("cluster"), e);
    if (!q->m_age)
        return e ? e->code : -EINVAL;
    struct metrics_counter_vec *errs = metrics_counter_vec_shared(
        q->reg, "kueue_ks_reconcile_errors_total", "Failed reconciles (writes) per controller",
        METRICS_LABELS("controller"), e);
    if (!errs)
        return e ? e->code : -EINVAL;
    q->m_errors = metrics_counter_vec_with(errs, "quota");
    if (!q->m_errors)
        return e ? e->code : -EINVAL;
    struct metrics_gauge_vec *depth = metrics_gauge_vec_shared(
        q->reg, "kueue_ks_workqueue_depth", "Keys waiting in each controller's work queue",
        METRICS_LABELS("controller"), e);
    if (!depth)
        return e ? e->code : -EINVAL;
    q->m_depth = metrics_gauge_vec_with(depth, "quota");
    if (!q->m_depth)
        return e ? e->code : -EINVAL;
    return 0;
}

/* ---- public ------------------------------------------------------------------ */

int quota_ctl_new(const struct quota_options *o, const struct quota_tuning *t,
                  struct quota_ctl **out, struct err *e)
{
    *out = NULL;
    struct quota_ctl *q = xcalloc(1, sizeof *q);
    if (quota_options_to_cfg(o, &q->cfg, e) < 0) {
        free(q);
        return e ? e->code : -EINVAL;
    }
    if (o->cluster_queues.n) {
        q->names = xcalloc(o->cluster_queues.n, sizeof *q->names);
        for (size_t i = 0; i < o->cluster_queues.n; i++)
            q->names[i] = xstrdup(o->cluster_queues.v[i]);
        q->n_names = o->cluster_queues.n;
    }
    if (t)
        q->tun = *t;
    if (q->tun.retry_s <= 0)
        q->tun.retry_s = 10.0;
    if (q->tun.metrics_period_s <= 0)
        q->tun.metrics_period_s = 5.0;
    if (!q->tun.event_component)
        q->tun.event_component = "kueue-ks-quota";
    *out = q;
    return 0;
}

int quota_ctl_start(struct quota_ctl *q, struct kube_client *client, struct metrics_registry *reg,
                    struct httpd *health, const struct logger *lg, struct err *e)
{
    if (q->running || q->client)
        return err_set(e, -EALREADY, "quota controller already started");
    q->client = client;
    if (!q->cache) {
        q->cache = cache_new(client);
        q->own_cache = true;
    }
    q->loop = kube_client_loop(client);
    q->lg = lg;
    q->reg = reg;
    if (reg && register_metrics(q, e) < 0)
        return e ? e->code : -EINVAL;
    struct evrec_config ec = {.component = q->tun.event_component};
    if (evrec_new(client, &ec, lg, &q->ev, e) < 0)
        return e ? e->code : -EINVAL;
    struct wq_opts wo = {
        .loop = q->loop, .name = "quota", .workers = 4, .process = reconcile, .ud = q};
    q->wq = wq_new(&wo);
    if (health)
        httpd_add_readyz_check(health, "quota-informers-synced", synced_check, q);
    ev_timer_init(&q->metrics_timer, metrics_timer_cb, q->tun.metrics_period_s,
                  q->tun.metrics_period_s);
    q->metrics_timer.data = q;
    if (reg)
        ev_timer_start(q->loop, &q->metrics_timer);
    q->running = true;
    discover(q);
    return 0;
}

void quota_ctl_stop(struct quota_ctl *q)
{
    if (!q || !q->running)
        return;
    q->running = false;
    ev_timer_stop(q->loop, &q->metrics_timer);
    disc_free(q->disc);
    q->disc = NULL;
    /* the shared ones may serve the workload controller still: only our handlers go */
    cache_release(q->cq_reg);
    cache_release(q->rf_reg);
    cache_release(q->cm_reg);
    q->cq_reg = q->rf_reg = q->cm_reg = NULL;
    q->cq_inf = q->rf_inf = q->cm_inf = NULL;
    while (q->calls) {
        struct qcall *c = q->calls;
        q->calls = c->next;
        kube_call_cancel(c->call);
        qcall_free(c);
    }
    wq_shutdown(q->wq);
}

void quota_ctl_free(struct quota_ctl *q)
{
    if (!q)
        return;
    quota_ctl_stop(q);
    cache_release(q->cq_reg); /* when never started: stop did not release them */
    cache_release(q->rf_reg);
    cache_release(q->cm_reg);
    if (q->own_cache)
        cache_free(q->cache);
    wq_free(q->wq);
    evrec_free(q->ev);
    for (size_t i = 0; i < q->nq; i++)
        qq_free(q->qs[i]);
    free(q->qs);
    for (size_t i = 0; i < q->n_names; i++)
        free(q->names[i]);
    free(q->names);
    quota_cfg_release(&q->cfg);
    free(q);
}

static int runnable_start(void *ud, struct mgr *m, struct err *e)
{
    struct quota_ctl *q = ud;
    if (!q->cache)
        q->cache = mgr_cache(m);
    return quota_ctl_start(q, mgr_client(m), mgr_metrics(m), mgr_health(m), mgr_logger(m), e);
}

static void runnable_stop(void *ud)
{
    quota_ctl_stop(ud);
}

void quota_ctl_runnable(struct quota_ctl *q, struct mgr_runnable *out)
{
    out->name = "quota";
    out->start = runnable_start;
    out->stop = runnable_stop;
    out->ud = q;
}

bool quota_ctl_synced(const struct quota_ctl *q)
{
    return q->cq_inf && q->rf_inf && q->cm_inf && informer_has_synced(q->cq_inf) &&
           informer_has_synced(q->rf_inf) && informer_has_synced(q->cm_inf);
}

const char *quota_ctl_kueue_version(const struct quota_ctl *q)
{
    return q->version;
}

void quota_ctl_stats(const struct quota_ctl *q, struct quota_stats *out)
{
    *out = q->st;
    out->managed = q->nq;
}
