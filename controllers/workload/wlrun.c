/*
 * wlrun: the workload controller as a manager runnable (see wlrun.h).
 */
#include "controllers/workload/wlrun.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/agent/agent.h"
#include "controllers/workload/acc.h"
#include "controllers/workload/controller.h"
#include "controllers/workload/xf.h"
#include "controllers/workload/workers.h"
#include "pkg/json/jpack.h"
#include "pkg/json/jsonx.h"
#include "pkg/kube/discovery.h"
#include "pkg/kube/cache.h"
#include "pkg/kube/evrec.h"
#include "pkg/kube/informer.h"
#include "pkg/kube/kubeconfig.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#define WLRUN_MAX_KINDS    32   /* hub job kinds: the table's served ones + discovered ones */
#define WLRUN_REDISCOVER_S 60.0 /* retry discovery of a kind that was not served */
/* every this many ticks the orphan GC sweeps every copy anyway (a backstop:
 * events and wlc_gc_pending cover the known cases) */
#define WLRUN_GC_SWEEP_TICKS 10
/* grouping delays (soon()): ClusterMetrics and worker changes, orphan checks */
#define CLUSTERS_SOON_S 0.2
#define GC_SOON_S       0.5
#define BP_GROUP        "control.kubestellar.io"
#define BP_VERSION      "v1alpha1"
#define BP_RESOURCE     "bindingpolicies"

enum { HUB_WL = 0, HUB_AC, HUB_RF, HUB_CM, HUB_CQ, HUB_FIXED };

struct wlrun {
    struct jpack_tab *tab; /* the packed stores' intern table (packed_tab) */
    struct wlrun_config cfg;
    bool direct;
    enum place_policy policy;
    struct mgr *m;
    struct kube_client *hub;
    const struct logger *lg;
    struct ev_loop *loop;
    bool started, stopped, set_up;

    /* discovery: slot 0 the Kueue group, 1 the kube-system namespace: origin, 2 + i kind i */
    struct wlrun_disc {
        struct wlrun *r;
        int what; /* -1 kueue, -2 origin, >= 0 kind index */
        struct disc *d;
    } disc[WLRUN_MAX_KINDS + 2];
    unsigned pending;
    /* the start-up server-side apply probe (ssa_probe) and its answer */
    struct kube_call *ssa_call;
    bool no_ssa;
    char *kueue_version;
    char *origin;
    bool served[WLRUN_MAX_KINDS]; /* per kind_table() index */

    struct informer *fixed[HUB_FIXED];
    /* flavors and metrics come from the manager's shared cache (the quota
     * controller watches them too): their registrations, NULL otherwise */
    struct cache_reg *shared[HUB_FIXED];
    struct informer *jobs[WLRUN_MAX_KINDS];
    const struct kind_def *job_kinds[WLRUN_MAX_KINDS];
    size_t n_jobs;
    /* kinds outside the table, found by discovery when a Workload names one */
    struct kind_def *dyn[WLRUN_MAX_KINDS];
    size_t n_dyn;
    json_t *dyn_disc; /* "apiVersion kind" -> {"pending": bool, "at": mono s} */

    struct workers *workers;
    struct evrec *events;
    struct wlc *wlc;

    ev_timer tick, gc_soon, clusters_soon;
    unsigned ticks;
    /* for clusters_soon: every Workload is queued (AdmissionCheck, flavor,
     * worker or kind change), else only those the changed ClusterMetrics
     * (names in cm_dirty) can affect */
    bool all_dirty;
    bool clusters_due;    /* clusters_soon set to fire at the next iteration (listed_before_sync) */
    bool start_pass_done; /* the start-up pass over every Workload ran (start_pass) */
    json_t *cm_dirty;
    json_t *bp_done; /* cluster -> true (ensured), "no API" (direct transport), false (in flight) */
    json_t *ns_done; /* "cluster/ns" -> true */
    /* "ns/queue" -> true while its hub LocalQueue read is in flight: the jobs of a queue
     * share one read (at a restart every listed job asks for its queue at once) */
    json_t *lq_reading;
    /* "ns/queue" -> the hub LocalQueue once read, for the workers whose namespace create
     * completes after the read (the read is shared, no later job event may come) */
    json_t *lq_hub;
    unsigned bp_count;
    unsigned waited_passes; /* clusters_cb / gc_cb put off until the hub synced (stats) */
    bool bp_missing_logged;
};

/* ---- config ------------------------------------------------------------------ */

int wlrun_new(const struct wlrun_config *cfg, struct wlrun **out, struct err *e)
{
    *out = NULL;
    bool direct = true;
    if (cfg->transport && strcmp(cfg->transport, "direct") != 0) {
        if (strcmp(cfg->transport, "kubestellar") != 0)
            return err_set(e, -EINVAL, "--transport must be direct or kubestellar, not \"%s\"",
                           cfg->transport);
        direct = false;
    }
    if (cfg->concurrency < 0 || cfg->concurrency > 100000)
        return err_set(e, -EINVAL, "--workload-concurrency must be 1..100000 (0 = %d), not %d",
                       WLRUN_DEFAULT_CONCURRENCY, cfg->concurrency);
    enum place_policy pol = PLACE_SPREAD;
    if (cfg->placement && place_policy_parse(cfg->placement, &pol) < 0)
        return err_set(e, -EINVAL, "--placement must be spread or binpack, not \"%s\"",
                       cfg->placement);
    if (cfg->ac_controller && *cfg->ac_controller &&
        strcmp(cfg->ac_controller, ACC_CONTROLLER_NAME) != 0)
        return err_set(e, -EINVAL,
                       "--admission-check-controller: only %s is supported (AdmissionChecks "
                       "name it in spec.controllerName)",
                       ACC_CONTROLLER_NAME);
    if (!direct && cfg->n_workers > 0)
        return err_set(e, -EINVAL,
                       "--worker is for --transport=direct (with kubestellar, KubeStellar "
                       "delivers the jobs)");
    /* load every --worker kubeconfig now, so a bad one fails at start-up */
    for (size_t i = 0; i < cfg->n_workers; i++) {
        char *name = NULL, *path = NULL;
        struct kube_rest_config *rc = NULL;
        int r = workers_parse_spec(cfg->workers[i], &name, &path, e);
        if (r == 0) {
            struct kubeconfig_opts ko = {.explicit_path = path};
            r = kubeconfig_load(&ko, &rc, NULL, e);
            if (r < 0)
                err_prefix(e, "--worker %s", name);
            else
                r = workers_check_secure(name, rc, cfg->allow_insecure_workers, e);
        }
        kube_rest_config_free(rc);
        free(name);
        free(path);
        if (r < 0)
            return r;
    }
    struct wlrun *r = xcalloc(1, sizeof(*r));
    r->cfg = *cfg;
    r->direct = direct;
    r->policy = pol;
    r->bp_done = json_object();
    r->ns_done = json_object();
    r->lq_reading = json_object();
    r->lq_hub = json_object();
    r->dyn_disc = json_object();
    r->cm_dirty = json_object();
    *out = r;
    return 0;
}

/* ---- helpers ------------------------------------------------------------------ */

static bool hub_synced(void *ud)
{
    struct wlrun *r = ud;
    if (!r->set_up)
        return false;
    for (int i = 0; i < HUB_FIXED; i++)
        if (!r->fixed[i] || !informer_has_synced(r->fixed[i]))
            return false;
    /* kinds outside the table are left out: one that cannot be listed (no
     * RBAC for it, say) must not stall every Workload; src_jobs() hides its
     * store until it has synced instead */
    for (size_t i = 0; i < r->n_jobs; i++)
        if (!r->job_kinds[i]->generic && !informer_has_synced(r->jobs[i]))
            return false;
    return true;
}

static struct store *src_jobs(void *ud, const struct kind_def *k)
{
    struct wlrun *r = ud;
    for (size_t i = 0; i < r->n_jobs; i++)
        if (r->job_kinds[i] == k)
            return !k->generic || informer_has_synced(r->jobs[i]) ? informer_store(r->jobs[i])
                                                                  : NULL;
    return NULL;
}

static const struct kind_def *const *src_kinds(void *ud, size_t *n)
{
    struct wlrun *r = ud;
    *n = r->n_jobs;
    return r->job_kinds;
}

static const char *dyn_discover(struct wlrun *r, const char *av, const char *kind);

static const struct kind_def *src_kind(void *ud, const json_t *owner, char *why, size_t why_len)
{
    struct wlrun *r = ud;
    const struct kind_def *k = kind_for_owner(owner);
    if (!k || !k->generic)
        return k;
    const char *av = jx_str(owner, "apiVersion", NULL), *kind = jx_str(owner, "kind", NULL);
    for (size_t i = 0; i < r->n_jobs; i++)
        if (r->job_kinds[i]->generic && kind_is(r->job_kinds[i], av, kind))
            return r->job_kinds[i];
    const char *err = dyn_discover(r, av, kind);
    snprintf(why, why_len, "%s", err ? err : "");
    return NULL;
}

static struct store *src_copies(void *ud, const char *cluster, const struct kind_def *k)
{
    struct wlrun *r = ud;
    return r->workers ? workers_copies(r->workers, cluster, k) : NULL;
}

static bool src_known(void *ud, const char *cluster)
{
    struct wlrun *r = ud;
    return !r->workers || workers_known(r->workers, cluster);
}

static json_t *src_worker_names(void *ud)
{
    struct wlrun *r = ud;
    return r->workers ? workers_names(r->workers) : NULL;
}

static struct kube_client *ops_worker(void *ud, const char *cluster)
{
    struct wlrun *r = ud;
    return r->workers ? workers_client(r->workers, cluster) : NULL;
}

/* Run t's callback after its delay, once however many calls come meanwhile (the calls are
 * grouped). The delay is set again each time: libev leaves a one-shot timer that fired with
 * about 0 left, so a plain restart would fire at once and group nothing. */
static void soon(struct wlrun *r, ev_timer *t)
{
    if (r->stopped || !r->set_up || ev_is_active(t))
        return;
    ev_timer_set(t, t == &r->gc_soon ? GC_SOON_S : CLUSTERS_SOON_S, 0.);
    ev_timer_start(r->loop, t);
}

/* ---- BindingPolicies and namespaces ------------------------------------------ */

struct bp_call {
    struct wlrun *r;
    char *cluster;
};

static void bp_done_cb(void *ud, const struct kube_result *res)
{
    struct bp_call *bc = ud;
    struct wlrun *r = bc->r;
    if (res->rc == 0 || res->rc == -EEXIST) {
        if (!json_is_true(json_object_get(r->bp_done, bc->cluster))) {
            json_object_set_new(r->bp_done, bc->cluster, json_true());
            r->bp_count++;
            log_info(r->lg, "BindingPolicy ensured", "cluster", bc->cluster, "created",
                     res->rc == 0 ? "true" : "false");
        }
    } else if (res->rc == -ENOENT && r->workers) {
        /* direct transport: the built-in syncer delivers; a hub without KubeStellar is the
         * usual case, not a problem (a real hub has no BindingPolicy CRD), and asking again
         * at every clusters pass was a failing request every few seconds */
        json_object_set_new(r->bp_done, bc->cluster, json_string("no API"));
        if (!r->bp_missing_logged)
            log_v(r->lg, 1,
                  "no BindingPolicy API on the hub (no KubeStellar): not needed by "
                  "the direct transport",
                  "cluster", bc->cluster);
        r->bp_missing_logged = true;
    } else if (res->rc != -ECANCELED && res->rc != -ESHUTDOWN) {
        json_object_del(r->bp_done, bc->cluster); /* retried on the next pass */
        if (res->rc != -ENOENT || !r->bp_missing_logged)
            log_warn(r->lg, "cannot create BindingPolicy (retried periodically)", "cluster",
                     bc->cluster, "error", res->err->msg, "hint",
                     res->rc == -ENOENT ? "install the KubeStellar BindingPolicy CRD on the hub"
                                        : "");
        if (res->rc == -ENOENT)
            r->bp_missing_logged = true;
    }
    free(bc->cluster);
    free(bc);
}

static void ensure_bp(struct wlrun *r, const char *cluster)
{
    if (json_object_get(r->bp_done, cluster))
        return; /* done (true) or in flight (false) */
    json_object_set_new(r->bp_done, cluster, json_false());
    char *name = xasprintf("kueue-ks-%s", cluster);
    json_t *bp = json_pack(
        "{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:[{s:{s:s}}], s:[{s:[{s:{s:s}}], s:b, s:b}]}}",
        "apiVersion", BP_GROUP "/" BP_VERSION, "kind", "BindingPolicy", "metadata", "name", name,
        "labels", XF_LABEL_MANAGED_BY, XF_MANAGED_BY_VALUE, "spec", "clusterSelectors",
        "matchLabels", "name", cluster, "downsync", "objectSelectors", "matchLabels",
        XF_LABEL_CLUSTER, cluster, "createOnly", 1, "wantSingletonReportedState", 1);
    char *path = kube_path(BP_GROUP, BP_VERSION, BP_RESOURCE, NULL, NULL, NULL);
    struct bp_call *bc = xcalloc(1, sizeof(*bc));
    bc->r = r;
    bc->cluster = xstrdup(cluster);
    struct err e;
    err_clear(&e);
    if (kube_client_post(r->hub, path, bp, bp_done_cb, bc, NULL, &e) < 0) {
        json_object_del(r->bp_done, cluster);
        free(bc->cluster);
        free(bc);
    }
    free(path);
    free(name);
    json_decref(bp);
}

static void ensure_all_bps(struct wlrun *r)
{
    json_t *names = NULL;
    if (r->workers) {
        names = workers_names(r->workers);
    } else {
        names = store_keys(informer_store(r->fixed[HUB_CM]));
    }
    for (size_t i = 0; i < json_array_size(names); i++)
        ensure_bp(r, json_string_value(json_array_get(names, i)));
    json_decref(names);
}

struct ns_call {
    struct wlrun *r;
    char *key;
    bool lq; /* a LocalQueue create (else a Namespace) */
};

static void lq_post(struct wlrun *r, const char *cluster, const json_t *hub_lq, const char *ns,
                    const char *name);

/* The namespace `nskey` ("cluster/ns") is there: the LocalQueues of that namespace read
 * from the hub meanwhile follow. */
static void lq_post_waiting(struct wlrun *r, const char *nskey)
{
    const char *slash = strchr(nskey, '/');
    if (!slash || !r->workers || r->stopped)
        return;
    char *cluster = xasprintf("%.*s", (int)(slash - nskey), nskey);
    const char *ns = slash + 1;
    size_t nl = strlen(ns);
    const char *k;
    json_t *lq;
    json_object_foreach(r->lq_hub, k, lq)
    {
        if (strncmp(k, ns, nl) == 0 && k[nl] == '/' && workers_reachable(r->workers, cluster))
            lq_post(r, cluster, lq, ns, k + nl + 1);
    }
    free(cluster);
}

/* A namespace or LocalQueue create on a worker: done (created or there), or forgotten so
 * the next event of the job retries. A worker without Kueue answers the LocalQueue POST
 * with 404: nothing to create there and nothing to retry (the copy runs as a plain Job). */
static void ns_done_cb(void *ud, const struct kube_result *res)
{
    struct ns_call *nc = ud;
    if (res->rc == 0 || res->rc == -EEXIST || (nc->lq && res->rc == -ENOENT)) {
        json_object_set_new(nc->r->ns_done, nc->key, json_true());
        if (!nc->lq)
            lq_post_waiting(nc->r, nc->key);
        if (res->rc == -ENOENT)
            log_v(nc->r->lg, 1,
                  "worker has no LocalQueue API (no Kueue there): copies run "
                  "without one",
                  "localqueue", nc->key);
    } else if (res->rc != -ECANCELED && res->rc != -ESHUTDOWN) {
        json_object_del(nc->r->ns_done, nc->key);
        log_warn(nc->r->lg,
                 nc->lq ? "cannot create the job's LocalQueue on a worker"
                        : "cannot create the job's namespace on a worker",
                 nc->lq ? "localqueue" : "namespace", nc->key, "error", res->err->msg);
    }
    free(nc->key);
    free(nc);
}

/* The job's namespace on every reachable worker (once). */
static void ensure_ns(struct wlrun *r, const char *ns)
{
    if (!r->workers || !ns || !*ns)
        return;
    json_t *names = workers_names(r->workers);
    for (size_t i = 0; i < json_array_size(names); i++) {
        const char *c = json_string_value(json_array_get(names, i));
        if (!workers_reachable(r->workers, c))
            continue;
        char *key = xasprintf("%s/%s", c, ns);
        if (json_object_get(r->ns_done, key)) {
            free(key);
            continue;
        }
        json_object_set_new(r->ns_done, key, json_false()); /* in flight */
        json_t *obj =
            json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "Namespace",
                      "metadata", "name", ns, "labels", XF_LABEL_MANAGED_BY, XF_MANAGED_BY_VALUE);
        struct ns_call *nc = xcalloc(1, sizeof(*nc));
        nc->r = r;
        nc->key = key;
        struct err e;
        err_clear(&e);
        if (kube_client_post(workers_client(r->workers, c), "/api/v1/namespaces", obj, ns_done_cb,
                             nc, NULL, &e) < 0) {
            json_object_del(r->ns_done, nc->key); /* not "in flight": the next event retries */
            free(nc->key);
            free(nc);
        }
        json_decref(obj);
    }
    json_decref(names);
}

/* The job's LocalQueue on every reachable worker (once per worker), copied from
 * the hub: a worker that runs Kueue needs it to admit the unsuspended copy
 * (xf.h, SUSPEND RULE). A worker without the LocalQueue API (404) is
 * left alone. */
struct lq_get {
    struct wlrun *r;
    char *ns, *name;
    char *key; /* in lq_reading */
};

static void lq_post(struct wlrun *r, const char *cluster, const json_t *hub_lq, const char *ns,
                    const char *name)
{
    /* after the namespace (then a 404 can only mean "no LocalQueue API");
     * otherwise the next event of the job retries */
    char *nskey = xasprintf("%s/%s", cluster, ns);
    bool ns_ok = json_is_true(json_object_get(r->ns_done, nskey));
    free(nskey);
    char *key = xasprintf("%s/%s/localqueue/%s", cluster, ns, name);
    if (!ns_ok || json_object_get(r->ns_done, key)) {
        free(key);
        return;
    }
    json_object_set_new(r->ns_done, key, json_false()); /* in flight */
    json_t *spec = json_object_get(hub_lq, "spec");
    json_t *obj =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:O}", "apiVersion",
                  jx_api_version(hub_lq) ? jx_api_version(hub_lq) : "", "kind", "LocalQueue",
                  "metadata", "name", name, "namespace", ns, "labels", XF_LABEL_MANAGED_BY,
                  XF_MANAGED_BY_VALUE, "spec", spec ? spec : json_object());
    char *path = kube_path("kueue.x-k8s.io", r->kueue_version, "localqueues", ns, NULL, NULL);
    struct ns_call *nc = xcalloc(1, sizeof(*nc));
    nc->r = r;
    nc->key = key;
    nc->lq = true;
    struct err e;
    err_clear(&e);
    if (kube_client_post(workers_client(r->workers, cluster), path, obj, ns_done_cb, nc, NULL, &e) <
        0) {
        json_object_del(r->ns_done, key);
        free(nc->key);
        free(nc);
    }
    free(path);
    json_decref(obj);
}

static void lq_got(void *ud, const struct kube_result *res)
{
    struct lq_get *g = ud;
    struct wlrun *r = g->r;
    if (res->rc == 0 && r->workers && !r->stopped) {
        json_object_set(r->lq_hub, g->key, res->body);
        json_t *names = workers_names(r->workers);
        for (size_t i = 0; i < json_array_size(names); i++) {
            const char *c = json_string_value(json_array_get(names, i));
            if (workers_reachable(r->workers, c))
                lq_post(r, c, res->body, g->ns, g->name);
        }
        json_decref(names);
    } else if (res->rc < 0 && res->rc != -ECANCELED && res->rc != -ESHUTDOWN) {
        log_v(r->lg, 1, "cannot read the job's LocalQueue", "error", res->err->msg);
    }
    json_object_del(r->lq_reading, g->key); /* done or failed: the next job event may read */
    free(g->key);
    free(g->ns);
    free(g->name);
    free(g);
}

static void ensure_lq(struct wlrun *r, const char *ns, const char *queue)
{
    if (!r->workers || !ns || !queue || !*queue || !r->kueue_version)
        return;
    /* skip the hub read when every reachable worker has it already */
    json_t *names = workers_names(r->workers);
    bool need = false;
    for (size_t i = 0; i < json_array_size(names) && !need; i++) {
        const char *c = json_string_value(json_array_get(names, i));
        char *key = xasprintf("%s/%s/localqueue/%s", c, ns, queue);
        need = workers_reachable(r->workers, c) && !json_object_get(r->ns_done, key);
        free(key);
    }
    json_decref(names);
    char *key = xasprintf("%s/%s", ns, queue);
    if (!need || json_object_get(r->lq_reading, key)) {
        free(key);
        return;
    }
    json_object_set_new(r->lq_reading, key, json_true());
    struct lq_get *g = xcalloc(1, sizeof(*g));
    g->r = r;
    g->ns = xstrdup(ns);
    g->name = xstrdup(queue);
    g->key = key;
    char *path = kube_path("kueue.x-k8s.io", r->kueue_version, "localqueues", ns, queue, NULL);
    struct err e;
    err_clear(&e);
    if (kube_client_get(r->hub, path, NULL, lq_got, g, NULL, &e) < 0) {
        json_object_del(r->lq_reading, key);
        free(g->key);
        free(g->ns);
        free(g->name);
        free(g);
    }
    free(path);
}

/* ---- handlers ------------------------------------------------------------------ */

/*
 * The start-up pass over every Workload (wlc_enqueue_all), once the hub has synced: before any
 * other key is queued, so a watch event that comes right after the sync does not take a
 * reservation's place ahead (the pass skips what is queued already). From the first handler
 * that sees the hub synced, or from clusters_cb.
 */
static void start_pass(struct wlrun *r)
{
    if (r->start_pass_done || !r->wlc || r->stopped || !hub_synced(r))
        return;
    r->start_pass_done = true;
    wlc_enqueue_all(r->wlc);
}

/* The in-process agents wait until the hub's lists are in and the start-up pass's placements
 * are out (workers.h agents_hold): at a restart their Pod lists, the biggest, would hold the
 * loop and the workers' API servers while the first copies are made. */
static bool agents_hold(void *ud)
{
    struct wlrun *r = ud;
    return !hub_synced(r) || (r->wlc && (!r->start_pass_done || wlc_placing(r->wlc)));
}

/*
 * An object of the hub's start-up lists (not a change): the start-up pass reads them once all
 * are in. clusters_soon polls every CLUSTERS_SOON_S until the hub has synced; a list that ends
 * runs it at the next loop iteration instead, so a reservation made while the operator was
 * down is not placed up to 0.2 s late. Once per iteration: the list's other objects find the
 * timer due.
 */
static void listed_before_sync(struct wlrun *r)
{
    if (r->stopped || !r->set_up || r->clusters_due)
        return;
    r->clusters_due = true;
    ev_timer_stop(r->loop, &r->clusters_soon);
    ev_timer_set(&r->clusters_soon, 0., 0.);
    ev_timer_start(r->loop, &r->clusters_soon);
}

static void wl_add(void *ud, json_t *obj)
{
    struct wlrun *r = ud;
    if (r->wlc && !r->stopped && hub_synced(r)) {
        start_pass(r);
        wlc_on_workload(r->wlc, obj);
    } else if (r->wlc) {
        listed_before_sync(r);
    }
}

static void wl_update(void *ud, json_t *o, json_t *n)
{
    (void)o;
    wl_add(ud, n);
}

/* A hub job informer delivers a list's difference now (informer_listing): handlers run one at a
 * time on the loop, so the update being handled is that list's. */
static bool jobs_listing(const struct wlrun *r)
{
    for (size_t i = 0; i < r->n_jobs; i++)
        if (informer_listing(r->jobs[i]))
            return true;
    return false;
}

/* A hub job added (old NULL) or updated from `old`. */
static void job_changed(struct wlrun *r, json_t *old, json_t *obj)
{
    if (!r->wlc || r->stopped)
        return;
    if (r->direct) {
        ensure_ns(r, jx_namespace(obj));
        ensure_lq(r, jx_namespace(obj), jx_label(obj, "kueue.x-k8s.io/queue-name"));
    }
    if (!hub_synced(r)) {
        listed_before_sync(r);
        return;
    }
    start_pass(r);
    if (old)
        wlc_on_job_update(r->wlc, old, obj, jobs_listing(r));
    else
        wlc_on_job(r->wlc, obj);
}

static void job_add(void *ud, json_t *obj)
{
    job_changed(ud, NULL, obj);
}

static void job_update(void *ud, json_t *o, json_t *n)
{
    job_changed(ud, o, n);
}

static void job_delete(void *ud, json_t *obj)
{
    struct wlrun *r = ud;
    if (!r->wlc || r->stopped)
        return;
    wlc_on_job(r->wlc, obj);
    char *key = jx_obj_key(obj);
    wlc_gc_key(r->wlc, key); /* its copies are orphans now */
    free(key);
}

static void copy_event(void *ud, json_t *obj, const char *cluster, enum xf_copy_change how)
{
    struct wlrun *r = ud;
    if (!r->wlc || r->stopped)
        return;
    start_pass(r);
    /* a first list's copy before the start-up pass: that pass reads every Workload with the
     * stores as they are then (queued now, its Workload would skip the pass's urgent level) */
    if (how != XF_COPY_LISTED || r->start_pass_done)
        wlc_on_copy(r->wlc, obj, cluster, how);
    char *key = jx_obj_key(obj);
    wlc_gc_key(r->wlc, key); /* a copy whose hub job is gone (created as it was deleted) */
    free(key);
}

static void cluster_event(void *ud, json_t *obj)
{
    (void)obj;
    struct wlrun *r = ud;
    r->all_dirty = true;
    soon(r, &r->clusters_soon);
}

static void cm_event(void *ud, json_t *obj)
{
    struct wlrun *r = ud;
    if (jx_name(obj))
        json_object_set_new(r->cm_dirty, jx_name(obj), json_true());
    soon(r, &r->clusters_soon);
}

/* A ClusterMetrics written: its counts end reservations at once, each write's (the passes
 * read the store, where a later write may have replaced it). */
static void cm_written(void *ud, json_t *obj)
{
    struct wlrun *r = ud;
    if (r->wlc && !r->stopped)
        wlc_on_metrics(r->wlc, obj);
    cm_event(ud, obj);
}

static void cm_update(void *ud, json_t *o, json_t *n)
{
    (void)o;
    cm_written(ud, n);
}

static void cluster_update(void *ud, json_t *o, json_t *n)
{
    (void)o;
    cluster_event(ud, n);
}

static void worker_changed(void *ud, const char *cluster)
{
    struct wlrun *r = ud;
    /* workers.c logs the reachability change itself, once */
    log_v(r->lg, 1, "worker changed", "cluster", cluster, "reachable",
          r->workers && workers_reachable(r->workers, cluster) ? "true" : "false");
    r->all_dirty = true;
    soon(r, &r->clusters_soon);
    soon(r, &r->gc_soon);
}

static void clusters_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    struct wlrun *r = t->data;
    r->clusters_due = false;
    if (r->stopped || !r->wlc)
        return;
    ensure_all_bps(r);
    if (!hub_synced(r)) {
        r->waited_passes++;
        soon(r, t); /* again once the stores are there (a plain restart would fire at once) */
        return;
    }
    if (r->all_dirty || !r->start_pass_done) {
        r->start_pass_done = true;
        wlc_enqueue_all(r->wlc);
        wlc_check_clusters(r->wlc); /* notes each cluster's usability (the queued are deduped) */
    } else {
        const char *name;
        json_t *v;
        json_object_foreach(r->cm_dirty, name, v)
        {
            (void)v;
            wlc_on_cluster(r->wlc, name);
        }
    }
    r->all_dirty = false;
    json_object_clear(r->cm_dirty);
    wlc_sync_admission_checks(r->wlc);
}

static void gc_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    struct wlrun *r = t->data;
    if (r->stopped || !r->wlc)
        return;
    /* not before the stores are there; and the sweep (it reads every copy: 0.2 s of CPU at
     * 10,000 copies) after the placements under way, at a restart the reservations made
     * while the operator was down, for WLC_SWEEP_WAIT_S at most (wlc_sweep_due). The periodic
     * sweep (tick_cb) does not wait. */
    bool synced = hub_synced(r);
    if (!synced || !r->start_pass_done || !wlc_sweep_due(r->wlc, ev_now(loop))) {
        r->waited_passes += !synced;
        soon(r, t);
        return;
    }
    wlc_gc(r->wlc);
}

static void tick_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    struct wlrun *r = t->data;
    if (r->stopped || !r->wlc)
        return;
    ensure_all_bps(r);
    if (!hub_synced(r))
        return;
    if (wlc_gc_pending(r->wlc) || r->ticks++ % WLRUN_GC_SWEEP_TICKS == 0)
        wlc_gc(r->wlc);
    wlc_sync_admission_checks(r->wlc);
    /* usability that changes with time (stale metrics); the Workloads'
     * own timers cover the rest (requeue delays, the worker-lost deadline) */
    wlc_check_clusters(r->wlc);
}

static void hubdisc_waiting(const struct wlrun *r, char *out, size_t n);

static int ready_check(void *ud, struct err *e)
{
    struct wlrun *r = ud;
    if (!r->started)
        return 0; /* not leading: nothing to wait for */
    if (!hub_synced(r)) {
        char why[ERR_MSG_MAX / 2];
        hubdisc_waiting(r, why, sizeof why);
        return err_set(e, -EAGAIN, "workload informers have not synced yet%s", why);
    }
    return 0;
}

/* ---- set-up after discovery ------------------------------------------------------ */

/* The intern table of the packed stores (hub Workloads and jobs, worker copies): one for the
 * process, so a Workload, its job and the job's copies share their strings. */
static struct jpack_tab *packed_tab(struct wlrun *r)
{
    if (!r->tab)
        r->tab = jpack_tab_new();
    return r->tab;
}

static int add_informer(struct wlrun *r, const char *group, const char *version,
                        const char *resource, const char *kind, const char *name,
                        const struct informer_handlers *h, bool packed, struct informer **out,
                        struct err *e)
{
    packed = packed && r->cfg.packed_cache;
    struct informer_opts io = {.client = r->hub,
                               .packed = packed,
                               .tab = packed ? packed_tab(r) : NULL,
                               .group = group,
                               .version = version,
                               .resource = resource,
                               .kind = kind,
                               .name = name,
                               /* managedFields are most of a real server's object */
                               .project = store_project_lean,
                               .lg = r->lg};
    int rc = informer_new(&io, out, e);
    if (rc < 0)
        return rc;
    informer_add_handlers(*out, h);
    return 0;
}

/* An informer shared through the manager's cache (pkg/kube/cache.h), whole
 * objects: the same key as the quota controller's, so one list and watch. */
static int add_shared(struct wlrun *r, const char *group, const char *version, const char *resource,
                      const char *kind, const char *name, const struct informer_handlers *h,
                      int idx, struct err *e)
{
    struct informer_opts io = {.group = group,
                               .version = version,
                               .resource = resource,
                               .kind = kind,
                               .name = name,
                               .lg = r->lg};
    int rc = cache_acquire(mgr_cache(r->m), &io, h, &r->shared[idx], e);
    if (rc < 0)
        return rc;
    r->fixed[idx] = cache_informer(r->shared[idx]);
    return 0;
}

/* The hub job stores' uid index (controller.h WLC_INDEX_UID): the orphan check of one key. */
static int add_uid_index(struct informer *inf, struct err *e)
{
    return informer_add_index(inf, WLC_INDEX_UID, store_index_by_field, (void *)"metadata.uid", e);
}

static const struct informer_handlers *job_handlers(struct wlrun *r, struct informer_handlers *h)
{
    /* job_add reads the job's namespace and labels, wlc_on_job its uid and version */
    *h = (struct informer_handlers){.on_add = job_add,
                                    .on_update = job_update,
                                    .on_delete = job_delete,
                                    .ud = r,
                                    .listed_view = wlc_job_listed_view};
    return h;
}

/* ---- kinds outside the table ------------------------------------------------------ */

struct dyn_call {
    struct wlrun *r;
    char *key, *group, *version, *kind;
};

static void dyn_call_free(struct dyn_call *d)
{
    free(d->key);
    free(d->group);
    free(d->version);
    free(d->kind);
    free(d);
}

/* Watch hub objects of kind k (taken) and our copies of it on the workers. */
static int add_dyn_kind(struct wlrun *r, struct kind_def *k, struct err *e)
{
    if (r->n_jobs == WLRUN_MAX_KINDS || r->n_dyn == WLRUN_MAX_KINDS) {
        kind_dynamic_free(k);
        return err_set(e, -ENOSPC, "more than %d job kinds", WLRUN_MAX_KINDS);
    }
    r->dyn[r->n_dyn++] = k;
    char name[160];
    snprintf(name, sizeof name, "hub/%s%s%s", k->resource, k->group[0] ? "." : "", k->group);
    struct informer_handlers h;
    int rc = add_informer(r, k->group, k->version, k->resource, k->kind, name, job_handlers(r, &h),
                          true, &r->jobs[r->n_jobs], e);
    if (rc < 0 || (rc = add_uid_index(r->jobs[r->n_jobs], e)) < 0)
        return rc;
    r->job_kinds[r->n_jobs++] = k;
    if ((rc = informer_start(r->jobs[r->n_jobs - 1], e)) < 0)
        return rc;
    if (r->workers && (rc = workers_add_kind(r->workers, k, e)) < 0)
        return rc;
    return 0;
}

static void dyn_done(void *ud, const struct kube_result *res)
{
    struct dyn_call *d = ud;
    struct wlrun *r = d->r;
    if (res->rc == -ECANCELED || res->rc == -ESHUTDOWN || r->stopped || !r->set_up) {
        json_object_del(r->dyn_disc, d->key);
        dyn_call_free(d);
        return;
    }
    struct err e;
    err_clear(&e);
    struct kind_def *k = NULL;
    if (res->rc == 0)
        k = kind_dynamic_new(res->body, d->group, d->version, d->kind, &e);
    else if (res->rc == -ENOENT)
        err_set(&e, -ENOENT, "API group-version of %s is not served by the hub", d->key);
    else
        e = *res->err;
    json_t *st = json_object_get(r->dyn_disc, d->key);
    if (st) {
        json_object_set_new(st, "pending", json_false());
        json_object_set_new(st, "at", json_real(clock_mono_s()));
        if (!k)
            json_object_set_new(st, "error", json_string(e.msg));
    }
    if (!k) {
        log_warn(r->lg, "Workloads owned by this kind are skipped (discovery retried later)",
                 "kind", d->key, "error", e.msg);
        r->all_dirty = true;
        soon(r, &r->clusters_soon); /* their Workloads get a Warning Event */
    } else {
        const char *res_name = k->resource;
        log_info(r->lg, "watching a job kind outside the kind table (placed by label only)", "kind",
                 d->key, "resource", res_name, "status_subresource",
                 k->no_status_subresource ? "false" : "true");
        if (add_dyn_kind(r, k, &e) < 0)
            log_error(r->lg, "cannot watch job kind", "kind", d->key, "error", e.msg);
        r->all_dirty = true;
        soon(r, &r->clusters_soon); /* re-queues every Workload once synced */
    }
    dyn_call_free(d);
}

/* Discover (asynchronously, once; again after WLRUN_REDISCOVER_S when it was
 * not served) the resource of a Workload owner kind outside the table. Returns
 * why the kind cannot be used as the last discovery found (borrowed until the
 * next discovery of it), or NULL (unknown yet, or being discovered). */
static const char *dyn_discover(struct wlrun *r, const char *av, const char *kind)
{
    if (!av || !kind || r->stopped || !r->set_up)
        return NULL;
    char *key = xasprintf("%s %s", av, kind);
    json_t *st = json_object_get(r->dyn_disc, key);
    if (st && (json_is_true(json_object_get(st, "pending")) ||
               clock_mono_s() - json_real_value(json_object_get(st, "at")) < WLRUN_REDISCOVER_S)) {
        free(key);
        return jx_str(st, "error", NULL);
    }
    struct dyn_call *d = xcalloc(1, sizeof(*d));
    d->r = r;
    d->key = key;
    d->kind = xstrdup(kind);
    if (kind_split_api_version(av, &d->group, &d->version) < 0) {
        log_warn(r->lg, "Workload owner has a malformed apiVersion; skipped", "kind", key);
        json_object_set_new(r->dyn_disc, key,
                            json_pack("{s:b,s:f,s:s}", "pending", 0, "at", clock_mono_s(), "error",
                                      "the owner reference has a malformed apiVersion"));
        dyn_call_free(d);
        return NULL; /* reported from the next pass on */
    }
    json_object_set_new(r->dyn_disc, key, json_pack("{s:b,s:f}", "pending", 1, "at", 0.0));
    char *path = kube_path(d->group, d->version, NULL, NULL, NULL, NULL);
    struct err e;
    err_clear(&e);
    if (kube_client_get(r->hub, path, NULL, dyn_done, d, NULL, &e) < 0) {
        json_object_del(r->dyn_disc, key);
        dyn_call_free(d);
    }
    free(path);
    return NULL;
}

static json_t *src_cluster_labels(void *ud, const char *cluster)
{
    struct wlrun *r = ud;
    return r->workers ? workers_labels(r->workers, cluster) : NULL;
}

/* The hub informers every transport needs (Workloads, AdmissionChecks,
 * ResourceFlavors, ClusterMetrics, ClusterQueues). */
static int add_fixed(struct wlrun *r, struct err *e)
{
    const char *kv = r->kueue_version;
    struct informer_handlers hwl = {.on_add = wl_add,
                                    .on_update = wl_update,
                                    .on_delete = wl_add,
                                    .ud = r,
                                    .listed_view = wlc_workload_listed_view};
    struct informer_handlers hcl = {
        .on_add = cluster_event, .on_update = cluster_update, .on_delete = cluster_event, .ud = r};
    struct informer_handlers hcm = {
        .on_add = cm_written, .on_update = cm_update, .on_delete = cm_event, .ud = r};
    struct informer_handlers hnone = {.ud = r};
    int rc;
    if ((rc = add_informer(r, "kueue.x-k8s.io", kv, "workloads", "Workload", "workloads", &hwl,
                           true, &r->fixed[HUB_WL], e)) < 0 ||
        (rc = informer_add_index(r->fixed[HUB_WL], WLC_INDEX_OWNER, store_index_by_owner_uid, NULL,
                                 e)) < 0 ||
        (rc = add_informer(r, "kueue.x-k8s.io", kv, "admissionchecks", "AdmissionCheck",
                           "admissionchecks", &hcl, false, &r->fixed[HUB_AC], e)) < 0 ||
        (rc = add_shared(r, "kueue.x-k8s.io", kv, "resourceflavors", "ResourceFlavor",
                         "resourceflavors", &hcl, HUB_RF, e)) < 0 ||
        (rc = add_shared(r, AGENT_GROUP, AGENT_VERSION, AGENT_RESOURCE, AGENT_KIND,
                         "clustermetrics", &hcm, HUB_CM, e)) < 0 ||
        /* ClusterQueues only for their default cluster selector, read at each placement:
         * no handlers (the quota controller rewrites them often); shared with the quota
         * controller's, so listed and watched once */
        (rc = add_shared(r, "kueue.x-k8s.io", kv, "clusterqueues", "ClusterQueue", "clusterqueues",
                         &hnone, HUB_CQ, e)) < 0)
        return rc;
    return 0;
}

/* The hub informers of the served job kinds (r->jobs, r->job_kinds). */
static int add_job_informers(struct wlrun *r, struct err *e)
{
    int rc;
    struct informer_handlers hjob;
    job_handlers(r, &hjob);
    size_t nk = 0;
    const struct kind_def *tab = kind_table(&nk);
    for (size_t i = 0; i < nk && i < WLRUN_MAX_KINDS; i++) {
        if (!r->served[i])
            continue;
        char name[96];
        snprintf(name, sizeof name, "hub/%s", tab[i].resource);
        if ((rc = add_informer(r, tab[i].group, tab[i].version, tab[i].resource, tab[i].kind, name,
                               &hjob, true, &r->jobs[r->n_jobs], e)) < 0 ||
            (rc = add_uid_index(r->jobs[r->n_jobs], e)) < 0)
            return rc;
        r->job_kinds[r->n_jobs++] = &tab[i];
    }
    return 0;
}

/* Direct transport: the worker clusters (connections, in-process agents). */
static int add_workers(struct wlrun *r, struct err *e)
{
    int rc;
    struct workers_config wc = {.hub = r->hub,
                                .ns = mgr_namespace(r->m),
                                .origin = r->origin,
                                .allow_insecure = r->cfg.allow_insecure_workers,
                                .run_agents = true,
                                .http1_only = r->cfg.http1_only,
                                .probe_interval_s = r->cfg.probe_interval_s,
                                .agent_min_interval_s = r->cfg.agent_min_interval_s,
                                .json_lifetime = r->cfg.json_lifetime,
                                .kinds = r->job_kinds,
                                .n_kinds = r->n_jobs,
                                .on_change = worker_changed,
                                .on_copy = copy_event,
                                .agents_hold = agents_hold,
                                .ud = r,
                                .lg = r->lg,
                                .packed = r->cfg.packed_cache,
                                .tab = r->cfg.packed_cache ? packed_tab(r) : NULL};
    if ((rc = workers_new(&wc, &r->workers, e)) < 0)
        return rc;
    for (size_t i = 0; i < r->cfg.n_workers; i++)
        if ((rc = workers_add_file(r->workers, r->cfg.workers[i], e)) < 0)
            return rc;
    return 0;
}

/* The workload controller over the informers' stores. */
static int new_controller(struct wlrun *r, struct err *e)
{
    struct wlc_config cc = {
        .loop = r->loop,
        .src = {.workloads = informer_store(r->fixed[HUB_WL]),
                .admission_checks = informer_store(r->fixed[HUB_AC]),
                .flavors = informer_store(r->fixed[HUB_RF]),
                .cluster_metrics = informer_store(r->fixed[HUB_CM]),
                .cluster_queues = informer_store(r->fixed[HUB_CQ]),
                .cluster_labels = r->direct ? src_cluster_labels : NULL,
                .jobs = src_jobs,
                .kind = src_kind,
                .kinds = src_kinds,
                .copies = r->direct ? src_copies : NULL,
                .worker_names = r->direct ? src_worker_names : NULL,
                .known = r->direct ? src_known : NULL,
                .synced = hub_synced,
                .ud = r},
        .ops = {.hub = r->hub,
                .events = r->events,
                .worker = r->direct ? ops_worker : NULL,
                .ud = r,
                .kueue_version = r->kueue_version,
                /* merge patches when the probe, or a later write, got 415 */
                .server_side_apply = !r->no_ssa,
                .job_meta_via_status = !r->cfg.job_meta_through_job,
                .lg = r->lg},
        .opts = {.direct = r->direct,
                 .delete_on_completion = r->cfg.delete_on_completion,
                 .worker_lost_timeout_ms = (int64_t)(r->cfg.worker_lost_timeout_s * 1000),
                 .unschedulable_timeout_ms = (int64_t)(r->cfg.unschedulable_timeout_s * 1000),
                 .exclusion_ms = (int64_t)(r->cfg.unschedulable_exclusion_s * 1000),
                 .origin = r->origin},
        .policy = r->policy,
        .metrics_stale_after_ms = (int64_t)(r->cfg.metrics_stale_after_s * 1000),
        .workers = r->cfg.concurrency > 0 ? r->cfg.concurrency : WLRUN_DEFAULT_CONCURRENCY,
        .lg = r->lg,
        .metrics = r->m ? mgr_metrics(r->m) : NULL,
    };
    return wlc_new(&cc, &r->wlc, e);
}

/* Starts the informers, the workers, the GC tick. */
static int start_all(struct wlrun *r, struct err *e)
{
    int rc;
    for (int i = 0; i < HUB_FIXED; i++)
        if ((rc = r->shared[i] ? cache_start(r->shared[i], e) : informer_start(r->fixed[i], e)) < 0)
            return rc;
    for (size_t i = 0; i < r->n_jobs; i++)
        if ((rc = informer_start(r->jobs[i], e)) < 0)
            return rc;
    if (r->workers && (rc = workers_start(r->workers, e)) < 0)
        return rc;
    double every = r->cfg.gc_interval_s > 0 ? r->cfg.gc_interval_s : 30.0;
    ev_timer_init(&r->tick, tick_cb, every, every);
    r->tick.data = r;
    ev_timer_start(r->loop, &r->tick);
    r->all_dirty = true;
    soon(r, &r->clusters_soon);
    log_info(r->lg, "workload controller started", "transport",
             r->direct ? "direct" : "kubestellar", "kueue", r->kueue_version, "origin", r->origin,
             "kinds", LOG_INT((long long)r->n_jobs));
    return 0;
}

static int set_up(struct wlrun *r, struct err *e)
{
    int rc;
    if ((rc = add_fixed(r, e)) < 0 || (rc = add_job_informers(r, e)) < 0)
        return rc;
    struct evrec_config ec = {.component = "kueue-ks"};
    if ((rc = evrec_new(r->hub, &ec, r->lg, &r->events, e)) < 0)
        return rc;
    if (r->direct && (rc = add_workers(r, e)) < 0)
        return rc;
    if ((rc = new_controller(r, e)) < 0)
        return rc;
    r->set_up = true;
    return start_all(r, e);
}

/* ---- discovery -------------------------------------------------------------------- */

/* Each start-up choice waits for a definitive answer (pkg/kube/discovery.h):
 * a transient error is retried, never taken as the answer, since the choice
 * lasts for the life of the process (the origin selects which worker
 * copies are ours). Until every answer is in, nothing is set up and the
 * readiness check says what is awaited. */

static bool lists_resource(const json_t *body, const char *resource)
{
    json_t *res = json_object_get(body, "resources");
    for (size_t i = 0; i < json_array_size(res); i++)
        if (strcmp(jx_str(json_array_get(res, i), "name", ""), resource) == 0)
            return true;
    return false;
}

static int accept_kueue(void *ud, const json_t *body, struct err *e)
{
    (void)ud;
    const char *v;
    return disc_kueue_version(body, &v, e);
}

/* One start-up answer is in: set up once all are. */
static void start_step_done(struct wlrun *r)
{
    if (--r->pending > 0 || r->stopped)
        return;
    struct err e;
    err_clear(&e);
    if (set_up(r, &e) < 0) {
        log_error(r->lg, "workload controller cannot start", "error", e.msg);
        mgr_shutdown(r->m, 1);
    }
}

static void ssa_probe_done(void *ud, const struct kube_result *res)
{
    struct wlrun *r = ud;
    r->ssa_call = NULL;
    /* only 415 is an answer; anything else (404 for the missing object,
     * 403, a timeout) leaves SSA on, and a later 415 still switches */
    if (res->status == 415 && !r->no_ssa) {
        r->no_ssa = true;
        /* a write may have found out first (and said so) */
        if (!r->wlc || wlc_no_apply(r->wlc))
            log_info(r->lg, "the hub has no server-side apply: Workload status is written with "
                            "resourceVersion-guarded merge patches");
    }
}

/* Whether the hub has server-side apply, asked once at start so the fact is
 * logged once then, not at the first write: a dry-run apply to the status of
 * a Workload that does not exist. An apiserver checks the patch type before
 * anything else (415 when it has no apply), so nothing is written either way.
 * The informers do not wait for the answer (a round trip at every start, on the
 * way to a restart's first dispatch); a write made before it comes gets the same
 * 415 and is made again as a merge patch. */
static void ssa_probe(struct wlrun *r)
{
    const char *ns = r->m && mgr_namespace(r->m) ? mgr_namespace(r->m) : "default";
    char *path = kube_path(DISC_KUEUE_GROUP, r->kueue_version, "workloads", ns,
                           "kueue-ks-ssa-probe", "status");
    char *api = xasprintf(DISC_KUEUE_GROUP "/%s", r->kueue_version);
    json_t *doc = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", api, "kind", "Workload",
                            "metadata", "name", "kueue-ks-ssa-probe", "namespace", ns);
    const char *const q[] = {"dryRun", "All", "fieldManager", "kueue-ks", NULL};
    struct kube_request req = {
        .method = "PATCH", .path = path, .query = q, .body = doc, .content_type = WLX_CT_APPLY};
    if (kube_client_do(r->hub, &req, ssa_probe_done, r, &r->ssa_call, NULL) < 0)
        r->ssa_call = NULL;
    json_decref(doc);
    free(api);
    free(path);
}

static void hubdisc_done(void *ud, int rc, const json_t *body)
{
    struct wlrun_disc *slot = ud;
    struct wlrun *r = slot->r;
    disc_free(slot->d);
    slot->d = NULL;
    if (slot->what == -1) {
        const char *v = "v1beta1";
        disc_kueue_version(body, &v, NULL);
        r->kueue_version = xstrdup(v);
        if (!r->stopped)
            ssa_probe(r);
    } else if (slot->what == -2) {
        /* 404: no kube-system namespace: not a real cluster: the fixed origin, the
         * same at every start */
        const char *uid = rc == 0 ? jx_uid(body) : NULL;
        r->origin = xstrdup(uid && *uid ? uid : "kueue-ks");
    } else {
        size_t nk = 0;
        const struct kind_def *tab = kind_table(&nk);
        r->served[slot->what] = rc == 0 && lists_resource(body, tab[slot->what].resource);
    }
    start_step_done(r);
}

static void hubdisc_retry(void *ud, const struct err *e, double delay_s)
{
    struct wlrun_disc *slot = ud;
    log_warn(slot->r->lg, "workload controller discovery failed; retrying", "error", e->msg,
             "retry_in_s", LOG_INT((long long)(delay_s + 0.5)));
}

static void discover(struct wlrun *r, size_t slot, const char *path, int what)
{
    struct wlrun_disc *d = &r->disc[slot];
    d->r = r;
    d->what = what;
    struct disc_opts o = {.client = r->hub,
                          .path = path,
                          .retry_not_found = what == -1, /* Kueue not installed yet: wait */
                          .backoff_s = r->cfg.discovery_backoff_s,
                          .accept = what == -1 ? accept_kueue : NULL,
                          .done = hubdisc_done,
                          .on_retry = hubdisc_retry,
                          .ud = d};
    r->pending++;
    if (disc_start(&o, &d->d, NULL) < 0)
        r->pending--;
}

/* What discovery still waits for, for the readiness message ("" when nothing). */
static void hubdisc_waiting(const struct wlrun *r, char *out, size_t n)
{
    out[0] = '\0';
    for (size_t i = 0; i < WLRUN_MAX_KINDS + 2; i++)
        if (r->disc[i].d) {
            const char *le = disc_last_error(r->disc[i].d);
            snprintf(out, n, " (discovery pending: %s)", *le ? le : "first request in flight");
            return;
        }
}

static void hubdisc_stop_all(struct wlrun *r)
{
    for (size_t i = 0; i < WLRUN_MAX_KINDS + 2; i++) {
        disc_free(r->disc[i].d);
        r->disc[i].d = NULL;
    }
}

static int run_start(void *ud, struct mgr *m, struct err *e)
{
    struct wlrun *r = ud;
    if (r->started)
        return 0;
    r->m = m;
    r->hub = mgr_client(m);
    r->lg = mgr_logger(m);
    r->loop = mgr_loop(m);
    r->started = true;
    ev_timer_init(&r->gc_soon, gc_cb, GC_SOON_S, 0);
    r->gc_soon.data = r;
    ev_timer_init(&r->clusters_soon, clusters_cb, CLUSTERS_SOON_S, 0);
    r->clusters_soon.data = r;
    if (mgr_health(m))
        httpd_add_readyz_check(mgr_health(m), "workload-informers-synced", ready_check, r);
    if (r->cfg.origin && *r->cfg.origin)
        r->origin = xstrdup(r->cfg.origin);
    size_t nk = 0;
    const struct kind_def *tab = kind_table(&nk);
    r->pending = 1; /* held until every request is out */
    discover(r, 0, DISC_KUEUE_GROUP_PATH, -1);
    if (!r->origin)
        discover(r, 1, "/api/v1/namespaces/kube-system", -2);
    for (size_t i = 0; i < nk && i < WLRUN_MAX_KINDS; i++) {
        if (strcmp(tab[i].group, "batch") == 0 && strcmp(tab[i].kind, "Job") == 0) {
            r->served[i] = true;
            continue;
        }
        char *path = kube_path(tab[i].group, tab[i].version, NULL, NULL, NULL, NULL);
        /* kube_path with no resource gives the group-version root */
        discover(r, 2 + i, path, (int)i);
        free(path);
    }
    if (--r->pending == 0) {
        /* every request failed to submit: nothing will call back */
        return err_set(e, -EIO, "workload controller: discovery requests could not be sent");
    }
    return 0;
}

static void run_stop(void *ud)
{
    struct wlrun *r = ud;
    if (r->stopped)
        return;
    r->stopped = true;
    hubdisc_stop_all(r);
    kube_call_cancel(r->ssa_call);
    r->ssa_call = NULL;
    if (!r->loop)
        return;
    ev_timer_stop(r->loop, &r->tick);
    ev_timer_stop(r->loop, &r->gc_soon);
    ev_timer_stop(r->loop, &r->clusters_soon);
    workers_stop(r->workers);
    for (int i = 0; i < HUB_FIXED; i++)
        if (r->fixed[i] && !r->shared[i]) /* a shared one serves the quota controller too */
            informer_stop(r->fixed[i]);
    for (size_t i = 0; i < r->n_jobs; i++)
        informer_stop(r->jobs[i]);
}

void wlrun_runnable(struct wlrun *r, struct mgr_runnable *out)
{
    memset(out, 0, sizeof(*out));
    out->name = "workload-controller";
    out->start = run_start;
    out->stop = run_stop;
    out->ud = r;
}

void wlrun_release(struct wlrun *r)
{
    if (!r)
        return;
    run_stop(r);
    r->set_up = false;
    workers_free(r->workers);
    r->workers = NULL;
    for (int i = 0; i < HUB_FIXED; i++) {
        if (r->shared[i])
            cache_release(r->shared[i]);
        else
            informer_free(r->fixed[i]);
        r->shared[i] = NULL;
        r->fixed[i] = NULL;
    }
    for (size_t i = 0; i < r->n_jobs; i++)
        informer_free(r->jobs[i]);
    r->n_jobs = 0;
    evrec_free(r->events);
    r->events = NULL;
}

void wlrun_free(struct wlrun *r)
{
    if (!r)
        return;
    wlc_free(r->wlc);
    json_decref(r->bp_done);
    json_decref(r->ns_done);
    json_decref(r->lq_reading);
    json_decref(r->lq_hub);
    free(r->kueue_version);
    free(r->origin);
    for (size_t i = 0; i < r->n_dyn; i++)
        kind_dynamic_free(r->dyn[i]);
    json_decref(r->dyn_disc);
    json_decref(r->cm_dirty);
    jpack_tab_free(r->tab); /* after wlrun_release freed the stores using it */
    free(r);
}

void wlrun_get_stats(const struct wlrun *r, struct wlrun_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->started = r->started;
    out->synced = hub_synced((void *)r);
    out->kueue_version = r->kueue_version;
    out->origin = r->origin;
    out->hub_kinds = r->n_jobs;
    out->binding_policies = r->bp_count;
    out->waited_passes = r->waited_passes;
    out->server_side_apply = r->set_up && !r->no_ssa;
    if (r->wlc) { /* the controller's own: a write's 415 may have come before the probe's */
        struct wlc_stats ws;
        wlc_get_stats(r->wlc, &ws);
        out->server_side_apply = ws.server_side_apply;
    }
    if (r->workers) {
        json_t *names = workers_names(r->workers);
        for (size_t i = 0; i < json_array_size(names); i++)
            out->workers_reachable +=
                workers_reachable(r->workers, json_string_value(json_array_get(names, i)));
        json_decref(names);
    }
}
