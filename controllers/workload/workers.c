/*
 * workers: worker clusters of the direct transport (see workers.h).
 */
#include "controllers/workload/workers.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/agent/agent.h"
#include "controllers/workload/xf.h"
#include "pkg/json/jsonx.h"
#include "pkg/kube/cache.h"
#include "pkg/kube/informer.h"
#include "pkg/kube/kubeconfig.h"
#include "pkg/util/b64.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#define WORKERS_TICK_S 0.5
/* while the worker is not known yet (or its agent waits): a start-up's state shows at once */
#define WORKERS_TICK_FAST_S 0.05
/* the in-process agent's lists wait for the copies' (below), at most this long */
#define WORKERS_AGENT_WAIT_S 5.0
/* a worker whose agent has not reported yet is known (its copies synced) this long after its
 * start at the latest; the fast tick stops then too */
#define WORKERS_KNOWN_MAX_S 60.0
#define WORKERS_PROBE_TO_S  5.0
#define WORKERS_PROBE_FAILS 2 /* consecutive failed probes before a worker is unreachable */

struct worker {
    struct workers *w;
    char *name;
    char *secret_key; /* NULL for a --worker flag worker */
    char *secret_rv;
    json_t *labels; /* the Secret's metadata.labels (cluster selector); NULL for a flag worker */
    struct kube_rest_config *cfg;
    struct kube_client *client;
    /* the informers over client, for the agent and the copies informers (the Job informer
     * is one for both) */
    struct kcache *cache;
    struct agent *agent;
    struct cache_reg *reg[WORKERS_MAX_KINDS];
    struct informer *inf[WORKERS_MAX_KINDS]; /* the cache's, borrowed */
    const struct kind_def *kinds[WORKERS_MAX_KINDS];
    size_t n_inf;
    ev_timer tick;
    struct kube_call *probe;
    double last_probe;
    /* debounced: false after WORKERS_PROBE_FAILS failures in a row. Starts true: the
     * first probes after a start are debounced like any other (a start is no outage) */
    bool probe_ok;
    int probe_fails; /* consecutive failed probes */
    bool reachable;
    /* this process knows the worker's state: its Job copies informer synced once, or
     * its probes made it unreachable (workers_known) */
    bool known;
    bool started;
    double started_at; /* clock_mono_s() of worker_start */
    bool agent_on;     /* agent_start done (it waits for the copies, maybe_start_agent) */
};

struct workers {
    struct workers_config cfg;
    /* the kinds watched on every worker (Job first); borrowed entries */
    const struct kind_def *kinds[WORKERS_MAX_KINDS];
    size_t n_kinds;
    char *ns, *origin, *selector;
    struct ev_loop *loop;
    struct worker **v;
    size_t n, cap;
    struct informer *secrets;
    bool started;
};

/* ---- pure helpers ---------------------------------------------------------- */

static bool dns_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return false;
    return true;
}

int workers_parse_spec(const char *spec, char **name, char **path, struct err *e)
{
    *name = *path = NULL;
    const char *eq = spec ? strchr(spec, '=') : NULL;
    if (!eq || eq == spec || !eq[1])
        return err_set(e, -EINVAL, "--worker %s: want NAME=KUBECONFIG_PATH", spec ? spec : "");
    char *n = xstrndup(spec, (size_t)(eq - spec));
    if (!dns_label(n)) {
        err_set(e, -EINVAL,
                "--worker %s: cluster name \"%s\" must be a DNS label (lower case letters, "
                "digits, '-')",
                spec, n);
        free(n);
        return -EINVAL;
    }
    *name = n;
    *path = xstrdup(eq + 1);
    return 0;
}

int workers_check_secure(const char *name, const struct kube_rest_config *cfg, bool allow_insecure,
                         struct err *e)
{
    if (allow_insecure)
        return 0;
    if (cfg->insecure_skip_tls_verify)
        return err_set(e, -EINVAL,
                       "worker %s: kubeconfig (%s) sets insecure-skip-tls-verify; give the "
                       "cluster's CA (certificate-authority-data) or run with "
                       "--allow-insecure-workers",
                       name, cfg->source ? cfg->source : "?");
    if (!cfg->server || strncmp(cfg->server, "https://", 8) != 0)
        return err_set(e, -EINVAL,
                       "worker %s: server %s is not https://; workers must use TLS (or run with "
                       "--allow-insecure-workers)",
                       name, cfg->server ? cfg->server : "(none)");
    return 0;
}

int workers_from_secret(const json_t *secret, char **name, char **data, size_t *len, struct err *e)
{
    *name = *data = NULL;
    *len = 0;
    const char *sns = jx_namespace(secret), *sname = jx_name(secret);
    const char *label = jx_label(secret, WORKERS_NAME_LABEL);
    if (!label || !dns_label(label))
        return err_set(e, -EINVAL,
                       "worker secret %s/%s: label \"name\" (the cluster name, a DNS label) is "
                       "missing or invalid",
                       sns ? sns : "", sname ? sname : "");
    json_t *v = json_object_get(json_object_get(secret, "data"), WORKERS_SECRET_KEY);
    const char *enc = json_string_value(v);
    size_t n = enc ? strlen(enc) : 0;
    if (!enc || n == 0 || n % 4 != 0 || n > (size_t)INT32_MAX)
        return err_set(e, -EINVAL,
                       "worker secret %s/%s: data.kubeconfig is missing or not valid base64",
                       sns ? sns : "", sname ? sname : "");
    if (b64_decode(enc, n, data, len) < 0)
        return err_set(e, -EINVAL, "worker secret %s/%s: data.kubeconfig is not valid base64",
                       sns ? sns : "", sname ? sname : "");
    *name = xstrdup(label);
    return 0;
}

/* ---- one worker ------------------------------------------------------------- */

static struct worker *find(struct workers *w, const char *name)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->v[i]->name, name) == 0)
            return w->v[i];
    return NULL;
}

static void changed(struct workers *w, const char *name)
{
    if (w->cfg.on_change)
        w->cfg.on_change(w->cfg.ud, name);
}

/* A copy of ours: the Job informer is shared with the agent and holds every hub-work Job
 * of the worker (another kueue-ks's, KubeStellar's); the others are not our business. */
static bool ours(const struct workers *w, const json_t *obj)
{
    const char *o = jx_label(obj, XF_LABEL_ORIGIN);
    return o && strcmp(o, w->origin) == 0;
}

/* Whether the event comes from a first list (a start's: every copy, mostly unchanged): only the
 * informer delivering it is listing. A relist's (after a watch ended) are the changes the watch
 * missed, told as a watch would have told them. */
static bool copies_first_list(const struct worker *k)
{
    for (size_t i = 0; i < k->n_inf; i++)
        if (informer_listing(k->inf[i]) && !informer_has_synced(k->inf[i]))
            return true;
    return false;
}

static bool same_status(const json_t *a, const json_t *b)
{
    const json_t *sa = json_object_get(a, "status"), *sb = json_object_get(b, "status");
    return sa == sb || (sa && sb && json_equal(sa, sb)); /* both absent, or equal */
}

static bool copies_listing(const struct worker *k)
{
    for (size_t i = 0; i < k->n_inf; i++)
        if (informer_listing(k->inf[i]))
            return true;
    return false;
}

/* A relist's add is a view of the copy's metadata (listed_view below), not what its first
 * sight needs (wlc_on_copy): told as a status change. */
static void copy_add(void *ud, json_t *obj)
{
    struct worker *k = ud;
    if (!k->w->cfg.on_copy || !ours(k->w, obj))
        return;
    enum xf_copy_change how = copies_first_list(k) ? XF_COPY_LISTED
                              : copies_listing(k)  ? XF_COPY_STATUS
                                                   : XF_COPY_ADDED;
    k->w->cfg.on_copy(k->w->cfg.ud, obj, k->name, how);
}

static void copy_delete(void *ud, json_t *obj)
{
    struct worker *k = ud;
    if (k->w->cfg.on_copy && ours(k->w, obj))
        k->w->cfg.on_copy(k->w->cfg.ud, obj, k->name,
                          copies_first_list(k) ? XF_COPY_LISTED : XF_COPY_STATUS);
}

/* A copy that stops being ours (its origin label changed) is seen as it is now, as the
 * server-side selector's DELETED would show it. */
static void copy_update(void *ud, json_t *old_obj, json_t *new_obj)
{
    struct worker *k = ud;
    if (!k->w->cfg.on_copy || (!ours(k->w, new_obj) && !ours(k->w, old_obj)))
        return;
    enum xf_copy_change how = XF_COPY_LISTED;
    if (!copies_first_list(k))
        how = ours(k->w, new_obj) && same_status(old_obj, new_obj) ? XF_COPY_OTHER : XF_COPY_STATUS;
    k->w->cfg.on_copy(k->w->cfg.ud, new_obj, k->name, how);
}

static bool job_synced(const struct worker *k)
{
    return k->n_inf > 0 && informer_has_synced(k->inf[0]);
}

static void probe_done(void *ud, const struct kube_result *r)
{
    struct worker *k = ud;
    k->probe = NULL;
    if (r->rc == -ECANCELED || r->rc == -ESHUTDOWN)
        return;
    /* one lost probe (a blip) must not make the worker unusable: that would
     * flip the AdmissionCheck's Active condition on a single-worker setup */
    k->probe_fails = r->rc == 0 ? 0 : k->probe_fails + 1;
    bool ok = r->rc == 0 || (k->probe_ok && k->probe_fails < WORKERS_PROBE_FAILS);
    if (ok != k->probe_ok && ok)
        log_info(k->w->cfg.lg, "worker reachable", "cluster", k->name);
    else if (ok != k->probe_ok)
        log_warn(k->w->cfg.lg, "worker unreachable", "cluster", k->name, "error", r->err->msg);
    else if (r->rc != 0)
        log_v(k->w->cfg.lg, 1, "worker probe failed", "cluster", k->name, "error", r->err->msg);
    k->probe_ok = ok;
    agent_set_source_reachable(k->agent, ok);
}

/* The in-process agent starts once the worker's copies are in and cfg.agents_hold lets it (the
 * hub's lists in, no placement under way), or the worker is known down, or after
 * WORKERS_AGENT_WAIT_S. Its Pod list is the biggest the operator makes and nothing a placement
 * reads while the hub's ClusterMetrics are fresh: at a restart the copies and the hub's lists,
 * which the first placements wait for, go first through the one loop, and the first copies go
 * to workers that are not busy answering it (docs/performance.md). */
static void maybe_start_agent(struct worker *k, double now)
{
    const struct workers_config *cfg = &k->w->cfg;
    bool lists_in = job_synced(k) && (!cfg->agents_hold || !cfg->agents_hold(cfg->ud));
    if (!k->agent || k->agent_on ||
        !(lists_in || !k->probe_ok || now - k->started_at >= WORKERS_AGENT_WAIT_S))
        return;
    struct err e;
    err_clear(&e);
    k->agent_on = true; /* agent_start fails only when it runs already */
    if (agent_start(k->agent, &e) < 0)
        log_error(k->w->cfg.lg,
                  "cannot start the ClusterMetrics agent: the worker gets no fresh ClusterMetrics "
                  "and stays unusable; restart kueue-ks",
                  "cluster", k->name, "error", e.msg);
}

/* The in-process agent has written ClusterMetrics since the start (none: true). Until then the
 * hub's may be stale from before a restart: the worker is not known usable or not yet. */
static bool agent_reported(const struct worker *k)
{
    if (!k->agent)
        return true;
    struct agent_stats st;
    agent_stats(k->agent, &st);
    return st.writes > 0 || st.creates > 0;
}

static void tick_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)revents;
    struct worker *k = t->data;
    struct workers *w = k->w;
    double now = clock_mono_s();
    double every = w->cfg.probe_interval_s > 0 ? w->cfg.probe_interval_s : 5.0;
    if (!k->probe && (k->last_probe == 0 || now - k->last_probe >= every)) {
        k->last_probe = now;
        struct kube_request req = {.method = "GET",
                                   .path = "/version",
                                   .timeout_s = WORKERS_PROBE_TO_S,
                                   .max_retries = -1};
        struct err e;
        err_clear(&e);
        if (kube_client_do(k->client, &req, probe_done, k, &k->probe, &e) < 0) {
            k->probe = NULL;
            k->probe_ok = false;
        }
    }
    bool reach = k->probe_ok && job_synced(k);
    bool known =
        k->known || !k->probe_ok ||
        (job_synced(k) && (agent_reported(k) || now - k->started_at >= WORKERS_KNOWN_MAX_S));
    if (reach != k->reachable || known != k->known) {
        k->reachable = reach;
        k->known = known;
        changed(w, k->name);
    }
    maybe_start_agent(k, now);
    bool starting = !k->known || (k->agent && !k->agent_on);
    double want = starting && now - k->started_at < WORKERS_KNOWN_MAX_S ? WORKERS_TICK_FAST_S
                                                                        : WORKERS_TICK_S;
    if (t->repeat != want) {
        t->repeat = want;
        ev_timer_again(loop, t);
    }
}

static void worker_stop(struct worker *k)
{
    if (!k->started)
        return;
    k->started = false;
    k->agent_on = false;
    ev_timer_stop(k->w->loop, &k->tick);
    kube_call_cancel(k->probe);
    k->probe = NULL;
    if (k->agent)
        agent_stop(k->agent);
    for (size_t i = 0; i < k->n_inf; i++)
        cache_stop(k->reg[i]);
}

static void worker_free(struct worker *k)
{
    if (!k)
        return;
    worker_stop(k);
    /* the registrations go with their users: the last one frees each informer */
    agent_free(k->agent);
    for (size_t i = 0; i < k->n_inf; i++)
        cache_release(k->reg[i]);
    cache_free(k->cache);
    kube_client_free(k->client);
    kube_rest_config_free(k->cfg);
    free(k->name);
    free(k->secret_key);
    free(k->secret_rv);
    json_decref(k->labels);
    free(k);
}

/* batch/v1 Job: the kind whose worker informer the agent shares. */
static bool is_job(const struct kind_def *kd)
{
    return strcmp(kd->group, "batch") == 0 && strcmp(kd->version, "v1") == 0 &&
           strcmp(kd->kind, "Job") == 0;
}

/* The copies informer of kind kd on worker k, through the worker's cache (not started).
 * Jobs: selected by XF_LABEL_CLUSTER (every copy of a hub job carries it: xf_downsync copies
 * the placement label of the hub job, whose value is the cluster) and projected lean, as
 * the agent selects and projects them (AGENT_HUB_WORK_LABEL): one list, one watch and one
 * store for both; ours are told by the XF_INDEX_ORIGIN index and the handlers. Other
 * kinds: our copies only (server-side selector kueue-ks.io/origin=<origin>). */
static int worker_add_informer(struct worker *k, const struct kind_def *kd, struct err *e)
{
    struct workers *w = k->w;
    if (k->n_inf == WORKERS_MAX_KINDS)
        return err_set(e, -ENOSPC, "worker %s: more than %d job kinds", k->name, WORKERS_MAX_KINDS);
    char iname[160];
    snprintf(iname, sizeof iname, "%s/%s%s%s", k->name, kd->resource, kd->group[0] ? "." : "",
             kd->group);
    struct informer_opts io = {.group = kd->group,
                               .version = kd->version,
                               .resource = kd->resource,
                               .kind = kd->kind,
                               .label_selector = is_job(kd) ? XF_LABEL_CLUSTER : w->selector,
                               .name = iname,
                               .project = store_project_lean,
                               /* a copy is a hub job's size: packed, strings shared */
                               .packed = w->cfg.packed,
                               .tab = w->cfg.tab,
                               .lg = w->cfg.lg,
                               .backoff_initial_s = w->cfg.informer_backoff_s,
                               .backoff_max_s = w->cfg.informer_backoff_s > 0 ? 5.0 : 0};
    /* copy_add reads the labels, the key and the uid (wlc_on_job, gc) */
    static const char *const listed[] = {"metadata", NULL};
    struct informer_handlers h = {.on_add = copy_add,
                                  .on_update = copy_update,
                                  .on_delete = copy_delete,
                                  .ud = k,
                                  .listed_view = listed};
    struct cache_reg *reg = NULL;
    int rc = cache_acquire(k->cache, &io, &h, &reg, e);
    if (rc == 0)
        rc =
            cache_add_index(reg, XF_INDEX_ORIGIN, store_index_by_label, (void *)XF_LABEL_ORIGIN, e);
    if (rc < 0) {
        cache_release(reg);
        return rc;
    }
    k->reg[k->n_inf] = reg;
    k->inf[k->n_inf] = cache_informer(reg);
    k->kinds[k->n_inf++] = kd;
    return 0;
}

/* Create the worker's client, agent and informers (not started). Takes cfg. */
static int worker_new(struct workers *w, const char *name, struct kube_rest_config *cfg,
                      struct worker **out, struct err *e)
{
    *out = NULL;
    int rc = workers_check_secure(name, cfg, w->cfg.allow_insecure, e);
    if (rc < 0) {
        kube_rest_config_free(cfg);
        return rc;
    }
    struct worker *k = xcalloc(1, sizeof(*k));
    k->w = w;
    k->name = xstrdup(name);
    k->cfg = cfg;
    k->probe_ok = true;
    struct kube_client_opts co = {.http1_only = w->cfg.http1_only};
    rc = kube_client_new(w->loop, cfg, &co, w->cfg.lg, &k->client, e);
    if (rc < 0) {
        err_prefix(e, "worker %s", name);
        goto fail;
    }
    k->cache = cache_new(k->client);
    /* the copies informers first: the shared Job informer is created with their options */
    for (size_t i = 0; i < w->n_kinds; i++)
        if ((rc = worker_add_informer(k, w->kinds[i], e)) < 0)
            goto fail;
    if (w->cfg.run_agents) {
        struct agent_opts ao = {.min_interval_s = w->cfg.agent_min_interval_s,
                                .lg = w->cfg.lg,
                                .informer_backoff_s = w->cfg.informer_backoff_s,
                                .cache = k->cache,
                                .json_lifetime = w->cfg.json_lifetime};
        rc = agent_new(k->client, w->cfg.hub, name, &ao, &k->agent, e);
        if (rc < 0)
            goto fail;
    }
    ev_timer_init(&k->tick, tick_cb, 0.05, WORKERS_TICK_S);
    k->tick.data = k;
    *out = k;
    return 0;
fail:
    worker_free(k);
    return rc;
}

static int worker_start(struct worker *k, struct err *e)
{
    if (k->started)
        return 0;
    int rc = 0;
    for (size_t i = 0; i < k->n_inf; i++)
        if ((rc = cache_start(k->reg[i], e)) < 0)
            return rc;
    k->started_at = clock_mono_s();
    k->tick.repeat = WORKERS_TICK_FAST_S;
    ev_timer_start(k->w->loop, &k->tick);
    k->started = true;
    return 0;
}

static void push(struct workers *w, struct worker *k)
{
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 4;
        w->v = xrealloc(w->v, w->cap * sizeof(*w->v));
    }
    w->v[w->n++] = k;
}

static void cm_deleted(void *ud, const struct kube_result *r)
{
    struct workers *w = ud;
    if (r->rc < 0 && r->rc != -ENOENT && r->rc != -ECANCELED && r->rc != -ESHUTDOWN)
        log_warn(w->cfg.lg, "cannot delete the ClusterMetrics of a removed worker", "error",
                 r->err->msg);
}

/* A deregistered worker's ClusterMetrics (ours, written by its agent) goes too. */
static void delete_cm(struct workers *w, const char *name)
{
    if (!w->cfg.run_agents)
        return;
    char *path = kube_path(AGENT_GROUP, AGENT_VERSION, AGENT_RESOURCE, NULL, name, NULL);
    struct err e;
    err_clear(&e);
    kube_client_delete(w->cfg.hub, path, NULL, cm_deleted, w, NULL, &e);
    free(path);
}

static void remove_worker(struct workers *w, struct worker *k)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i] == k) {
            memmove(&w->v[i], &w->v[i + 1], (w->n - i - 1) * sizeof(*w->v));
            w->n--;
            break;
        }
    char *name = xstrdup(k->name);
    worker_free(k);
    changed(w, name);
    free(name);
}

/* ---- Secrets ----------------------------------------------------------------- */

static struct worker *find_secret(struct workers *w, const char *key)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i]->secret_key && strcmp(w->v[i]->secret_key, key) == 0)
            return w->v[i];
    return NULL;
}

static void secret_upsert(void *ud, json_t *obj)
{
    struct workers *w = ud;
    char *key = jx_obj_key(obj);
    if (!key)
        return;
    const char *rv = jx_resource_version(obj);
    struct worker *old = find_secret(w, key);
    if (old && rv && old->secret_rv && strcmp(rv, old->secret_rv) == 0)
        goto out;
    char *name = NULL, *data = NULL;
    size_t len = 0;
    struct err e;
    err_clear(&e);
    struct kube_rest_config *cfg = NULL;
    struct worker *k = NULL;
    if (workers_from_secret(obj, &name, &data, &len, &e) < 0)
        goto bad;
    struct worker *same = find(w, name);
    if (same && same != old) {
        err_set(&e, -EEXIST, "worker secret %s: cluster %s is already registered (%s)", key, name,
                same->secret_key ? same->secret_key : "--worker flag");
        goto bad;
    }
    char src[sizeof "secret " + JX_OBJ_KEY_MAX];
    snprintf(src, sizeof src, "secret %s", key);
    if (kubeconfig_load_data(data, len, src, NULL, 0, w->cfg.lg, &cfg, NULL, &e) < 0)
        goto bad;
    if (old)
        remove_worker(w, old);
    if (worker_new(w, name, cfg, &k, &e) < 0)
        goto bad;
    k->secret_key = xstrdup(key);
    k->secret_rv = xstrdup(rv ? rv : "");
    const json_t *sl = json_object_get(json_object_get(obj, "metadata"), "labels");
    k->labels = json_is_object(sl) ? jx_deep_copy(sl) : NULL;
    push(w, k);
    log_info(w->cfg.lg, "worker registered", "cluster", name, "source", src);
    if (w->started && worker_start(k, &e) < 0)
        log_error(w->cfg.lg, "worker start failed", "cluster", name, "error", e.msg);
    changed(w, name);
    goto done;
bad:
    log_error(w->cfg.lg, "worker secret rejected", "secret", key, "error", e.msg);
done:
    if (data) {
        memset(data, 0, len);
        free(data);
    }
    free(name);
out:
    free(key);
}

static void secret_update(void *ud, json_t *old_obj, json_t *new_obj)
{
    (void)old_obj;
    secret_upsert(ud, new_obj);
}

static void secret_delete(void *ud, json_t *obj)
{
    struct workers *w = ud;
    char *key = jx_obj_key(obj);
    struct worker *k = key ? find_secret(w, key) : NULL;
    if (k) {
        log_info(w->cfg.lg, "worker removed", "cluster", k->name, "secret", key);
        char *name = xstrdup(k->name);
        remove_worker(w, k);
        delete_cm(w, name);
        free(name);
    }
    free(key);
}

/* ---- public ------------------------------------------------------------------- */

int workers_new(const struct workers_config *cfg, struct workers **out, struct err *e)
{
    *out = NULL;
    if (!cfg || !cfg->hub || !cfg->origin || !*cfg->origin)
        return err_set(e, -EINVAL, "workers: hub client and origin are required");
    struct workers *w = xcalloc(1, sizeof(*w));
    w->cfg = *cfg;
    w->ns = cfg->ns && *cfg->ns ? xstrdup(cfg->ns) : NULL;
    w->origin = xstrdup(cfg->origin);
    w->cfg.ns = w->ns;
    w->cfg.origin = w->origin;
    w->selector = xasprintf("%s=%s", XF_LABEL_ORIGIN, w->origin);
    w->loop = kube_client_loop(cfg->hub);
    /* the Job kind first: its informer stands for the worker's reachability */
    const struct kind_def *job = kind_lookup("batch/v1", "Job");
    w->kinds[w->n_kinds++] = job;
    for (size_t i = 0; i < cfg->n_kinds && w->n_kinds < WORKERS_MAX_KINDS; i++)
        if (cfg->kinds[i] && cfg->kinds[i] != job)
            w->kinds[w->n_kinds++] = cfg->kinds[i];
    w->cfg.kinds = NULL;
    w->cfg.n_kinds = 0;
    *out = w;
    return 0;
}

void workers_free(struct workers *w)
{
    if (!w)
        return;
    informer_free(w->secrets);
    for (size_t i = 0; i < w->n; i++)
        worker_free(w->v[i]);
    free(w->v);
    free(w->ns);
    free(w->origin);
    free(w->selector);
    free(w);
}

int workers_add_file(struct workers *w, const char *spec, struct err *e)
{
    char *name = NULL, *path = NULL;
    struct kube_rest_config *cfg = NULL;
    struct worker *k = NULL;
    int rc = workers_parse_spec(spec, &name, &path, e);
    if (rc < 0)
        goto out;
    if (find(w, name)) {
        rc = err_set(e, -EEXIST, "--worker %s: cluster %s given twice", spec, name);
        goto out;
    }
    struct kubeconfig_opts ko = {.explicit_path = path, .lg = w->cfg.lg};
    rc = kubeconfig_load(&ko, &cfg, NULL, e);
    if (rc < 0) {
        err_prefix(e, "--worker %s", name);
        goto out;
    }
    rc = worker_new(w, name, cfg, &k, e);
    if (rc < 0)
        goto out;
    push(w, k);
    if (w->started && (rc = worker_start(k, e)) < 0)
        goto out;
out:
    free(name);
    free(path);
    return rc;
}

int workers_add_kind(struct workers *w, const struct kind_def *k, struct err *e)
{
    for (size_t i = 0; i < w->n_kinds; i++)
        if (w->kinds[i] == k)
            return 0;
    if (w->n_kinds == WORKERS_MAX_KINDS)
        return err_set(e, -ENOSPC, "workers: more than %d job kinds", WORKERS_MAX_KINDS);
    w->kinds[w->n_kinds++] = k;
    int rc = 0;
    for (size_t i = 0; i < w->n; i++) {
        struct worker *wk = w->v[i];
        int r = worker_add_informer(wk, k, e);
        if (r == 0 && wk->started)
            r = cache_start(wk->reg[wk->n_inf - 1], e);
        if (r < 0 && rc == 0)
            rc = r; /* the other workers still get theirs */
    }
    return rc;
}

int workers_start(struct workers *w, struct err *e)
{
    int rc;
    for (size_t i = 0; i < w->n; i++)
        if ((rc = worker_start(w->v[i], e)) < 0)
            return rc;
    if (w->ns && !w->secrets) {
        char sel[128];
        snprintf(sel, sizeof sel, "%s=true", WORKERS_SECRET_LABEL);
        struct informer_opts io = {.client = w->cfg.hub,
                                   .version = "v1",
                                   .resource = "secrets",
                                   .kind = "Secret",
                                   .ns = w->ns,
                                   .label_selector = sel,
                                   .name = "worker-secrets",
                                   .lg = w->cfg.lg,
                                   .backoff_initial_s = w->cfg.informer_backoff_s};
        if ((rc = informer_new(&io, &w->secrets, e)) < 0)
            return rc;
        struct informer_handlers h = {.on_add = secret_upsert,
                                      .on_update = secret_update,
                                      .on_delete = secret_delete,
                                      .ud = w};
        informer_add_handlers(w->secrets, &h);
    }
    if (w->secrets && (rc = informer_start(w->secrets, e)) < 0 && rc != -EALREADY)
        return rc;
    w->started = true;
    return 0;
}

void workers_stop(struct workers *w)
{
    if (!w)
        return;
    w->started = false;
    if (w->secrets)
        informer_stop(w->secrets);
    for (size_t i = 0; i < w->n; i++)
        worker_stop(w->v[i]);
}

struct kube_client *workers_client(struct workers *w, const char *name)
{
    struct worker *k = find(w, name);
    return k ? k->client : NULL;
}

struct store *workers_copies(struct workers *w, const char *name, const struct kind_def *kd)
{
    struct worker *k = find(w, name);
    if (!k || !k->reachable)
        return NULL;
    for (size_t i = 0; i < k->n_inf; i++)
        if (k->kinds[i] == kd)
            return informer_has_synced(k->inf[i]) ? informer_store(k->inf[i]) : NULL;
    return NULL;
}

json_t *workers_labels(struct workers *w, const char *name)
{
    struct worker *k = w ? find(w, name) : NULL;
    return k && k->labels ? json_incref(k->labels) : NULL;
}

bool workers_reachable(struct workers *w, const char *name)
{
    struct worker *k = find(w, name);
    return k && k->reachable;
}

bool workers_known(struct workers *w, const char *name)
{
    struct worker *k = find(w, name);
    if (!k) /* gone, or not registered yet: its Secret may not have been listed */
        return !w->secrets || informer_has_synced(w->secrets);
    return k->known;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

json_t *workers_names(struct workers *w)
{
    const char **v = xcalloc(w->n + 1, sizeof(*v));
    for (size_t i = 0; i < w->n; i++)
        v[i] = w->v[i]->name;
    qsort(v, w->n, sizeof(*v), cmp_str);
    json_t *a = json_array();
    for (size_t i = 0; i < w->n; i++)
        json_array_append_new(a, json_string(v[i]));
    free(v);
    return a;
}

bool workers_all_reachable(struct workers *w)
{
    if (w->n == 0)
        return false;
    for (size_t i = 0; i < w->n; i++)
        if (!w->v[i]->reachable)
            return false;
    return true;
}
