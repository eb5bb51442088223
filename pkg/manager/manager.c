#include "pkg/manager/manager.h"
#include "pkg/kube/cache.h"
#include "pkg/kube/kubeconfig.h"
#include "pkg/kube/lease.h"
#include "pkg/util/heaptrim.h"
#include "pkg/util/xalloc.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MGR_DEFAULT_NAMESPACE "kueue-ks-system"
#define MGR_DEFAULT_LEASE     "kueue-ks-leader"
#define MGR_SHUTDOWN_BUDGET_S 5.0
#define MGR_DEFAULT_PROBE_S   10.0
#define MGR_MAX_RUNNABLES     16
#define MGR_TRIM_S            5.0
#define MGR_TRIM_EARLY_TICKS  12 /* the first minute */
#define MGR_TRIM_LATE_S       60.0
#define MGR_TRIM_MIN_FREE     ((size_t)1 << 20)

struct mgr {
    struct ev_loop *loop;
    const struct logger *lg;
    struct mgr_options o;
    struct kube_rest_config *cfg;
    char *namespace_;
    struct kube_client *client;
    struct kcache *cache;      /* shared informers over client, created on first use */
    struct heaptrim *heaptrim; /* the informers' malloc_trim requests, coalesced (NULL: none) */
    struct metrics_registry *reg;
    struct metrics_counter_vec *m_requests;
    struct metrics_histogram_vec *m_latency;
    struct metrics_gauge *m_leader;
    struct httpd *metrics_srv;
    struct httpd *health_srv;
    struct lease_elector *elector;
    struct mgr_runnable runnables[MGR_MAX_RUNNABLES];
    bool started[MGR_MAX_RUNNABLES];
    size_t nrunnables;
    bool connected;
    bool shutting_down;
    int exit_code;
    ev_signal sigterm;
    ev_signal sigint;
    ev_timer shutdown_timer;
    ev_timer probe_timer; /* the start-up probe's next attempt */
    ev_timer trim_timer;  /* on_trim */
    unsigned trim_ticks;
    size_t trim_floor;           /* free heap bytes at the last trim */
    void (*give_back)(void *ud); /* mgr_set_give_back */
    void *give_back_ud;
    double probe_backoff_s;
    ev_tstamp probe_since;
};

static void on_response(void *ud, const char *verb, int code, double seconds)
{
    struct mgr *m = ud;
    char c[16];
    snprintf(c, sizeof c, "%d", code);
    metrics_counter_inc(metrics_counter_vec_with(m->m_requests, verb, code ? c : "<error>"));
    metrics_histogram_observe(metrics_histogram_vec_with(m->m_latency, verb), seconds);
}

static int check_connected(void *ud, struct err *e)
{
    struct mgr *m = ud;
    if (!m->connected)
        return err_set(e, -EAGAIN, "API server not reached yet");
    return 0;
}

static int check_not_stopping(void *ud, struct err *e)
{
    struct mgr *m = ud;
    if (m->shutting_down)
        return err_set(e, -ESHUTDOWN, "shutting down");
    return 0;
}

int mgr_new(struct ev_loop *loop, const struct mgr_options *o, const struct logger *lg,
            struct mgr **out, struct err *e)
{
    *out = NULL;
    struct mgr *m = xcalloc(1, sizeof *m);
    m->loop = loop;
    m->heaptrim = heaptrim_new(loop, 0);
    m->lg = lg;
    m->o = *o;
    int rc;

    struct kubeconfig_opts ko;
    memset(&ko, 0, sizeof ko);
    kubeconfig_opts_from_env(&ko);
    ko.explicit_path = o->kubeconfig && *o->kubeconfig ? o->kubeconfig : NULL;
    ko.context = o->context && *o->context ? o->context : NULL;
    ko.allow_in_cluster = true;
    ko.lg = lg;
    rc = kubeconfig_load(&ko, &m->cfg, &m->namespace_, e);
    if (rc < 0)
        goto fail;
    if (o->qps > 0)
        m->cfg->qps = o->qps;
    if (o->burst > 0)
        m->cfg->burst = o->burst;
    if (o->le_namespace && *o->le_namespace) {
        free(m->namespace_);
        m->namespace_ = xstrdup(o->le_namespace);
    } else if (!m->namespace_ || !*m->namespace_) {
        free(m->namespace_);
        m->namespace_ = xstrdup(MGR_DEFAULT_NAMESPACE);
    }

    m->reg = metrics_registry_new();
    m->m_requests = metrics_counter_vec_new(m->reg, "kueue_ks_rest_client_requests_total",
                                            "API server requests by verb and HTTP status code.",
                                            METRICS_LABELS("verb", "code"), e);
    m->m_latency =
        metrics_histogram_vec_new(m->reg, "kueue_ks_rest_client_request_duration_seconds",
                                  "API server request latency by verb, including retries.",
                                  METRICS_LABELS("verb"), NULL, 0, e);
    m->m_leader = metrics_gauge_new(m->reg, "kueue_ks_leader",
                                    "1 while this process holds the leader Lease.", e);
    if (!m->m_requests || !m->m_latency || !m->m_leader) {
        rc = e ? e->code : -EINVAL;
        goto fail;
    }

    struct kube_client_opts co;
    memset(&co, 0, sizeof co);
    co.on_response = on_response;
    co.on_response_ud = m;
    co.http1_only = o->http1_only;
    rc = kube_client_new(loop, m->cfg, &co, lg, &m->client, e);
    if (rc < 0)
        goto fail;

    struct httpd_config hc;
    memset(&hc, 0, sizeof hc);
    hc.lg = lg;
    hc.bind_addr = o->metrics_bind;
    hc.metrics = m->reg;
    m->metrics_srv = httpd_new(loop, &hc, e);
    if (!m->metrics_srv) {
        err_prefix(e, "--metrics-bind-address %s", o->metrics_bind);
        rc = e ? e->code : -EINVAL;
        goto fail;
    }
    hc.bind_addr = o->health_bind;
    hc.metrics = NULL;
    m->health_srv = httpd_new(loop, &hc, e);
    if (!m->health_srv) {
        err_prefix(e, "--health-probe-bind-address %s", o->health_bind);
        rc = e ? e->code : -EINVAL;
        goto fail;
    }
    httpd_add_readyz_check(m->health_srv, "api-server", check_connected, m);
    httpd_add_readyz_check(m->health_srv, "shutdown", check_not_stopping, m);
    *out = m;
    return 0;
fail:
    mgr_free(m);
    return rc < 0 ? rc : -EINVAL;
}

void mgr_add_runnable(struct mgr *m, const struct mgr_runnable *r)
{
    if (m->nrunnables >= MGR_MAX_RUNNABLES) {
        log_error(m->lg, "too many runnables; ignoring", "name", r->name);
        return;
    }
    m->runnables[m->nrunnables++] = *r;
}

static void start_runnables(struct mgr *m)
{
    for (size_t i = 0; i < m->nrunnables; i++) {
        if (m->started[i])
            continue;
        struct err e;
        err_clear(&e);
        int rc = m->runnables[i].start(m->runnables[i].ud, m, &e);
        if (rc < 0) {
            log_error(m->lg, "cannot start controller", "controller", m->runnables[i].name, "error",
                      e.msg);
            mgr_shutdown(m, 1);
            return;
        }
        m->started[i] = true;
        log_info(m->lg, "controller started", "controller", m->runnables[i].name);
    }
}

static void stop_runnables(struct mgr *m)
{
    for (size_t i = m->nrunnables; i-- > 0;) {
        if (!m->started[i])
            continue;
        m->started[i] = false;
        if (m->runnables[i].stop)
            m->runnables[i].stop(m->runnables[i].ud);
        log_info(m->lg, "controller stopped", "controller", m->runnables[i].name);
    }
}

static void on_started_leading(void *ud)
{
    struct mgr *m = ud;
    log_info(m->lg, "became leader", "lease", m->o.le_id, "namespace", m->namespace_);
    metrics_gauge_set(m->m_leader, 1);
    if (!m->shutting_down)
        start_runnables(m);
}

static void on_stopped_leading(void *ud)
{
    struct mgr *m = ud;
    metrics_gauge_set(m->m_leader, 0);
    if (m->shutting_down)
        return;
    /* Continuing without the lease could run two leaders at once: exit and let the
     * Deployment restart us as a standby. */
    log_error(m->lg, "leader election lost; exiting", "lease", m->o.le_id);
    mgr_shutdown(m, 1);
}

static void on_new_leader(void *ud, const char *identity)
{
    struct mgr *m = ud;
    log_info(m->lg, "leader observed", "lease", m->o.le_id, "leader", identity);
}

static void start_leading_or_elect(struct mgr *m)
{
    if (!m->o.leader_elect) {
        /* Without election this process is the only one running the controllers. */
        metrics_gauge_set(m->m_leader, 1);
        start_runnables(m);
        return;
    }
    struct lease_config lc;
    memset(&lc, 0, sizeof lc);
    lc.namespace_ = m->namespace_;
    lc.name = m->o.le_id && *m->o.le_id ? m->o.le_id : MGR_DEFAULT_LEASE;
    lc.lease_duration_s = m->o.lease_duration_s;
    lc.renew_deadline_s = m->o.renew_deadline_s;
    lc.retry_period_s = m->o.retry_period_s;
    lc.release_on_cancel = true;
    lc.cb.on_started_leading = on_started_leading;
    lc.cb.on_stopped_leading = on_stopped_leading;
    lc.cb.on_new_leader = on_new_leader;
    lc.cb.ud = m;
    struct err e;
    err_clear(&e);
    if (lease_elector_new(m->client, &lc, m->lg, &m->elector, &e) < 0 ||
        lease_elector_start(m->elector) < 0) {
        log_error(m->lg, "cannot start leader election", "error", e.msg);
        mgr_shutdown(m, 1);
        return;
    }
    log_info(m->lg, "waiting to become leader", "lease", lc.name, "namespace", m->namespace_,
             "identity", lease_elector_identity(m->elector));
}

static int send_probe(struct mgr *m, struct err *e);

static void on_probe_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct mgr *m = w->data;
    struct err e;
    err_clear(&e);
    if (!m->shutting_down && send_probe(m, &e) < 0) {
        log_error(m->lg, "cannot reach the API server", "server", m->cfg->server, "error", e.msg);
        mgr_shutdown(m, 1);
    }
}

static void on_probe(void *ud, const struct kube_result *r)
{
    struct mgr *m = ud;
    if (r->rc < 0 && m->shutting_down)
        return;
    if (r->rc < 0) {
        double waited = ev_now(m->loop) - m->probe_since;
        if (m->o.startup_timeout_s > 0 && waited + m->probe_backoff_s > m->o.startup_timeout_s) {
            log_error(m->lg, "cannot reach the API server", "server", m->cfg->server, "config",
                      m->cfg->source, "error", r->err->msg);
            mgr_shutdown(m, 1);
            return;
        }
        log_warn(m->lg, "cannot reach the API server; retrying", "server", m->cfg->server, "config",
                 m->cfg->source, "error", r->err->msg, "retry_in_s",
                 LOG_INT((long long)(m->probe_backoff_s + 0.5)));
        ev_timer_init(&m->probe_timer, on_probe_timer, m->probe_backoff_s, 0);
        m->probe_timer.data = m;
        ev_timer_start(m->loop, &m->probe_timer);
        m->probe_backoff_s = m->probe_backoff_s * 2 > 30 ? 30 : m->probe_backoff_s * 2;
        return;
    }
    m->connected = true;
    const char *ver = json_string_value(json_object_get(r->body, "gitVersion"));
    log_info(m->lg, "connected to the API server", "server", m->cfg->server, "version",
             ver ? ver : "unknown");
    struct err e;
    err_clear(&e);
    if (httpd_start(m->metrics_srv, &e) < 0) {
        log_error(m->lg, "cannot serve metrics", "address", m->o.metrics_bind, "error", e.msg);
        mgr_shutdown(m, 1);
        return;
    }
    if (httpd_start(m->health_srv, &e) < 0) {
        log_error(m->lg, "cannot serve health probes", "address", m->o.health_bind, "error", e.msg);
        mgr_shutdown(m, 1);
        return;
    }
    if (httpd_port(m->metrics_srv) > 0)
        log_info(m->lg, "serving metrics", "port", LOG_INT(httpd_port(m->metrics_srv)));
    if (httpd_port(m->health_srv) > 0)
        log_info(m->lg, "serving health probes", "port", LOG_INT(httpd_port(m->health_srv)));
    /* one line for the process, naming what is off (httpd_start does not log) */
    bool no_metrics = httpd_port(m->metrics_srv) <= 0, no_health = httpd_port(m->health_srv) <= 0;
    if (no_metrics || no_health)
        log_info(m->lg, "http server disabled", "servers",
                 no_metrics && no_health ? "metrics,health-probes"
                 : no_metrics            ? "metrics"
                                         : "health-probes");
    start_leading_or_elect(m);
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    struct mgr *m = w->data;
    log_info(m->lg, "signal received, shutting down", "signal",
             w->signum == SIGTERM ? "SIGTERM" : "SIGINT");
    mgr_shutdown(m, m->exit_code);
}

static void on_shutdown_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct mgr *m = w->data;
    log_warn(m->lg, "shutdown took too long; exiting without releasing the lease");
    ev_break(loop, EVBREAK_ALL);
}

static void on_released(void *ud, int rc)
{
    struct mgr *m = ud;
    if (rc < 0)
        log_warn(m->lg, "could not release the leader lease", "code", LOG_INT(rc));
    else
        log_info(m->lg, "leader lease released");
    ev_break(m->loop, EVBREAK_ALL);
}

void mgr_shutdown(struct mgr *m, int code)
{
    if (code)
        m->exit_code = code;
    if (m->shutting_down)
        return;
    m->shutting_down = true;
    stop_runnables(m);
    if (m->elector && lease_elector_is_leader(m->elector)) {
        ev_timer_init(&m->shutdown_timer, on_shutdown_timeout, MGR_SHUTDOWN_BUDGET_S, 0);
        m->shutdown_timer.data = m;
        ev_timer_start(m->loop, &m->shutdown_timer);
        if (lease_elector_stop(m->elector, on_released, m) == 0)
            return;
    }
    ev_break(m->loop, EVBREAK_ALL);
}

static int send_probe(struct mgr *m, struct err *e)
{
    struct kube_request req;
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.path = "/version";
    req.timeout_s = m->o.probe_timeout_s > 0 ? m->o.probe_timeout_s : MGR_DEFAULT_PROBE_S;
    req.max_retries = -1;
    return kube_client_do(m->client, &req, on_probe, m, NULL, e);
}

/* glibc keeps the pages of freed memory inside its heap: after a start-up that decoded and
 * then dropped whole lists (real objects are ~4 KB of JSON, ~10x that decoded), the operator
 * held 722 MB resident of which 134 MB in use (bench-scale --real, N = 2,000, 10,000 pods per
 * worker; a malloc_trim(0) at idle: 138 MB). The informers trim after their big lists, but
 * much is freed later (the start-up passes). So the heap is looked at every MGR_TRIM_S during
 * the first minute, then every MGR_TRIM_LATE_S, and trimmed when MGR_TRIM_MIN_FREE more bytes
 * are free than at the last trim: both calls walk every free chunk (tens of ms with 300,000
 * holes), and holes that cannot be returned must not make every tick trim again. The margin
 * was 16 MB; with the packed stores a restart of 10,000 workloads leaves 2-3 MB free after
 * its passes, which then stayed resident for good (bench-scale: settled heap 20.8 -> 19.5 MB
 * with 1 MB). */
static long rss_kb(void)
{
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &res) != 2)
        res = 0;
    if (f)
        fclose(f);
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static void on_trim(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct mgr *m = w->data;
    if (++m->trim_ticks == MGR_TRIM_EARLY_TICKS)
        w->repeat = MGR_TRIM_LATE_S; /* libev reads it at the next rearm */
    if (m->give_back)
        m->give_back(m->give_back_ud);
    struct mallinfo2 mi = mallinfo2();
    if (mi.fordblks < m->trim_floor)
        m->trim_floor = mi.fordblks; /* reused since: count new free memory from here */
    if (mi.fordblks < m->trim_floor + MGR_TRIM_MIN_FREE)
        return;
    m->trim_floor = mi.fordblks;
    long before = log_v_enabled(m->lg, 4) ? rss_kb() : 0;
    if (malloc_trim(0) && before) {
        char f[32], b[32], a[32];
        snprintf(f, sizeof f, "%zu", mi.fordblks);
        snprintf(b, sizeof b, "%ld", before / 1024);
        snprintf(a, sizeof a, "%ld", rss_kb() / 1024);
        log_v(m->lg, 4, "free heap pages returned", "free_bytes", f, "rss_mb_before", b,
              "rss_mb_after", a);
    }
}

void mgr_set_give_back(struct mgr *m, void (*fn)(void *ud), void *ud)
{
    m->give_back = fn;
    m->give_back_ud = ud;
    heaptrim_set_hook(m->heaptrim, fn, ud);
}

int mgr_run(struct mgr *m)
{
    signal(SIGPIPE, SIG_IGN);
    ev_signal_init(&m->sigterm, on_signal, SIGTERM);
    m->sigterm.data = m;
    ev_signal_start(m->loop, &m->sigterm);
    ev_signal_init(&m->sigint, on_signal, SIGINT);
    m->sigint.data = m;
    ev_signal_start(m->loop, &m->sigint);

    log_info(m->lg, "starting", "server", m->cfg->server, "config", m->cfg->source);
    m->probe_backoff_s = 1;
    m->probe_since = ev_now(m->loop);
    struct err e;
    err_clear(&e);
    if (send_probe(m, &e) < 0) {
        log_error(m->lg, "cannot reach the API server", "server", m->cfg->server, "error", e.msg);
        return 1;
    }
    ev_timer_init(&m->trim_timer, on_trim, MGR_TRIM_S, MGR_TRIM_S);
    m->trim_timer.data = m;
    ev_timer_start(m->loop, &m->trim_timer);
    ev_unref(m->loop); /* the trim alone does not keep the loop running */
    ev_run(m->loop, 0);
    ev_ref(m->loop);
    ev_timer_stop(m->loop, &m->trim_timer);
    if (ev_is_active(&m->probe_timer))
        ev_timer_stop(m->loop, &m->probe_timer);
    ev_signal_stop(m->loop, &m->sigterm);
    ev_signal_stop(m->loop, &m->sigint);
    if (ev_is_active(&m->shutdown_timer))
        ev_timer_stop(m->loop, &m->shutdown_timer);
    return m->exit_code;
}

void mgr_free(struct mgr *m)
{
    if (!m)
        return;
    lease_elector_free(m->elector);
    httpd_free(m->metrics_srv);
    httpd_free(m->health_srv);
    cache_free(m->cache); /* its users released their registrations before */
    kube_client_free(m->client);
    metrics_registry_free(m->reg);
    kube_rest_config_free(m->cfg);
    free(m->namespace_);
    heaptrim_free(m->heaptrim);
    free(m);
}

struct kube_client *mgr_client(struct mgr *m)
{
    return m->client;
}

struct kcache *mgr_cache(struct mgr *m)
{
    if (!m->cache)
        m->cache = cache_new(m->client);
    return m->cache;
}

struct metrics_registry *mgr_metrics(struct mgr *m)
{
    return m->reg;
}

struct httpd *mgr_health(struct mgr *m)
{
    return m->health_srv;
}

const char *mgr_namespace(const struct mgr *m)
{
    return m->namespace_;
}

const struct logger *mgr_logger(const struct mgr *m)
{
    return m->lg;
}

struct ev_loop *mgr_loop(const struct mgr *m)
{
    return m->loop;
}

bool mgr_is_leader(const struct mgr *m)
{
    return m->elector ? lease_elector_is_leader(m->elector) : !m->shutting_down;
}
