/*
 * kueue-ks agent: the ClusterMetrics reporter for one worker cluster
 * (controllers/agent/agent.h), with the manager's lifecycle: kubeconfig of
 * the worker, start-up probe, /metrics, /healthz and /readyz, SIGTERM.
 */
#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/kueue-ks/cli.h"
#include "cmd/kueue-ks/cmds.h"
#include "controllers/agent/agent.h"
#include "pkg/kube/kubeconfig.h"
#include "pkg/manager/manager.h"
#include "pkg/manager/mgrflags.h"
#include "pkg/util/flags.h"
#include "pkg/util/log.h"

struct agent_cli {
    char *cluster;
    char *hub_kubeconfig;
    char *hub_context;
    double min_interval;
    double heartbeat;
    struct mgr_flag_values mgr;
};

#define AGENT_NFLAGS 5
#define ALL_NFLAGS   (AGENT_NFLAGS + MGR_FLAGS_MAX)

/* The table: --cluster-name, the manager's --kubeconfig and --context, the
 * hub and write-timing flags, the rest of the manager's. Returns its size. */
static size_t agent_cli_flags(struct agent_cli *o, struct flag *fl)
{
    const struct flag t[AGENT_NFLAGS] = {
        {"cluster-name", FLAG_STRING, &o->cluster,
         "Name of this cluster: the ClusterMetrics object written (required)", NULL},
        {"hub-kubeconfig", FLAG_STRING, &o->hub_kubeconfig,
         "Write ClusterMetrics to the hub with this kubeconfig (default: to the watched cluster)",
         NULL},
        {"hub-context", FLAG_STRING, &o->hub_context, "Kubeconfig context of the hub", NULL},
        {"min-interval", FLAG_DURATION, &o->min_interval,
         "Minimum time between two ClusterMetrics writes (changes are coalesced)", "5s"},
        {"heartbeat", FLAG_DURATION, &o->heartbeat,
         "Refresh status.lastUpdated this often when nothing changes (keep it below the "
         "controller's --metrics-stale-after); 0 disables",
         "20s"},
    };
    struct flag m[MGR_FLAGS_MAX];
    size_t nm = mgr_flags(&o->mgr, MGR_FLAGS_AGENT, m);
    fl[0] = t[0];
    memcpy(fl + 1, m, MGR_FLAGS_NCONN * sizeof *m);
    memcpy(fl + 1 + MGR_FLAGS_NCONN, t + 1, (AGENT_NFLAGS - 1) * sizeof *t);
    memcpy(fl + AGENT_NFLAGS + MGR_FLAGS_NCONN, m + MGR_FLAGS_NCONN,
           (nm - MGR_FLAGS_NCONN) * sizeof *m);
    return AGENT_NFLAGS + nm;
}

/* The runnable: hub client (when separate), agent, readiness, metrics. */
struct agent_run {
    const struct agent_cli *o;
    const struct logger *lg;
    jx_lifetime_fn lifetime;
    struct kube_client *hub;
    struct kube_client *watched; /* the manager's client: the cluster being reported */
    struct kube_call *probe;     /* GET /version on the watched cluster, when hub is separate */
    unsigned ticks;
    struct agent *agent;
    struct ev_loop *loop;
    ev_timer stats_timer;
    struct agent_stats last;
    struct metrics_counter *m_writes, *m_failures, *m_creates;
    struct metrics_gauge *m_nodes;
};

static int check_synced(void *ud, struct err *e)
{
    struct agent_run *r = ud;
    if (!r->agent || !agent_synced(r->agent))
        return err_set(e, -EAGAIN, "nodes and pods not synced yet");
    return 0;
}

static void probe_done(void *ud, const struct kube_result *res)
{
    struct agent_run *r = ud;
    r->probe = NULL;
    if (res->rc == -ECANCELED || res->rc == -ESHUTDOWN)
        return;
    agent_set_source_reachable(r->agent, res->rc == 0);
}

static void on_stats(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct agent_run *r = w->data;
    /* With a separate hub, the hub answering says nothing about the watched cluster:
     * probe it, so the agent stops vouching for cached data while it is unreachable. */
    if (r->hub && !r->probe && r->ticks++ % 5 == 0) {
        struct kube_request req = {
            .method = "GET", .path = "/version", .timeout_s = 5.0, .max_retries = -1};
        if (kube_client_do(r->watched, &req, probe_done, r, &r->probe, NULL) < 0)
            r->probe = NULL;
    }
    struct agent_stats s;
    agent_stats(r->agent, &s);
    metrics_counter_add(r->m_writes, (double)(s.writes - r->last.writes));
    metrics_counter_add(r->m_failures, (double)(s.failures - r->last.failures));
    metrics_counter_add(r->m_creates, (double)(s.creates - r->last.creates));
    r->last = s;
}

static void on_change(void *ud, struct agent *a)
{
    struct agent_run *r = ud;
    metrics_gauge_set(r->m_nodes, (double)agent_node_count(a));
}

static int run_start(void *ud, struct mgr *m, struct err *e)
{
    struct agent_run *r = ud;
    struct kube_client *hub = mgr_client(m);
    r->watched = hub;
    int rc;
    r->loop = mgr_loop(m);
    if (r->o->hub_kubeconfig && r->o->hub_kubeconfig[0]) {
        struct kubeconfig_opts ko;
        memset(&ko, 0, sizeof ko);
        ko.explicit_path = r->o->hub_kubeconfig;
        ko.context = r->o->hub_context && r->o->hub_context[0] ? r->o->hub_context : NULL;
        ko.lg = r->lg;
        struct kube_rest_config *cfg = NULL;
        rc = kubeconfig_load(&ko, &cfg, NULL, e);
        if (rc < 0) {
            err_prefix(e, "--hub-kubeconfig");
            return rc;
        }
        if (r->o->mgr.qps > 0)
            cfg->qps = r->o->mgr.qps;
        if (r->o->mgr.burst > 0)
            cfg->burst = r->o->mgr.burst;
        struct kube_client_opts co = {.http1_only = !r->o->mgr.http2};
        rc = kube_client_new(r->loop, cfg, &co, r->lg, &r->hub, e);
        kube_rest_config_free(cfg);
        if (rc < 0) {
            err_prefix(e, "--hub-kubeconfig");
            return rc;
        }
        hub = r->hub;
    }
    struct metrics_registry *reg = mgr_metrics(m);
    r->m_writes = metrics_counter_new(reg, "kueue_ks_agent_writes_total",
                                      "ClusterMetrics status writes (heartbeats included).", e);
    r->m_failures = metrics_counter_new(reg, "kueue_ks_agent_write_failures_total",
                                        "ClusterMetrics writes that failed.", e);
    r->m_creates = metrics_counter_new(reg, "kueue_ks_agent_creates_total",
                                       "ClusterMetrics objects created.", e);
    r->m_nodes = metrics_gauge_new(reg, "kueue_ks_agent_nodes", "Nodes reported.", e);
    if (!r->m_writes || !r->m_failures || !r->m_creates || !r->m_nodes)
        return e ? e->code : -EINVAL;
    struct agent_opts ao = {
        .min_interval_s = r->o->min_interval,
        .heartbeat_s = r->o->heartbeat > 0 ? r->o->heartbeat : -1,
        .lg = r->lg,
        .on_change = on_change,
        .on_change_ud = r,
        .json_lifetime = r->lifetime,
    };
    rc = agent_new(mgr_client(m), hub, r->o->cluster, &ao, &r->agent, e);
    if (rc < 0)
        return rc;
    if (mgr_health(m))
        httpd_add_readyz_check(mgr_health(m), "clustermetrics-synced", check_synced, r);
    ev_timer_init(&r->stats_timer, on_stats, 1.0, 1.0);
    r->stats_timer.data = r;
    ev_timer_start(r->loop, &r->stats_timer);
    return agent_start(r->agent, e);
}

static void run_stop(void *ud)
{
    struct agent_run *r = ud;
    if (r->loop)
        ev_timer_stop(r->loop, &r->stats_timer);
    kube_call_cancel(r->probe);
    r->probe = NULL;
    agent_stop(r->agent);
}

int cmd_agent(int argc, char **argv, cmd_give_back_fn give_back, jx_lifetime_fn lifetime)
{
    struct agent_cli o;
    memset(&o, 0, sizeof o);
    struct flag fl[ALL_NFLAGS];
    size_t nfl = agent_cli_flags(&o, fl);
    struct logger lg;
    struct mgr *m = NULL;
    struct ev_loop *loop = NULL;
    struct agent_run run;
    memset(&run, 0, sizeof run);

    int code = cli_parse(fl, nfl, argc, argv, "agent",
                         "Report this cluster's nodes, capacity and pod requests as a "
                         "ClusterMetrics object\n(galaxy.kubestellar.io/v1alpha1), in this "
                         "cluster or in the hub.\n\n"
                         "Usage: kueue-ks agent --cluster-name NAME [flags]",
                         &o.mgr, &lg);
    if (code != CLI_GO_ON)
        goto out;
    code = 1;
    if (!o.cluster || !o.cluster[0]) {
        code = cli_invalid(&lg, "--cluster-name is required");
        goto out;
    }
    if (o.min_interval <= 0) {
        code = cli_invalid(&lg, "--min-interval must be positive");
        goto out;
    }

    if (cli_mgr_new(&o.mgr, &lg, give_back, &loop, &m) < 0)
        goto out;
    run.o = &o;
    run.lg = &lg;
    run.lifetime = lifetime;
    struct mgr_runnable rn = {
        .name = "clustermetrics-agent", .start = run_start, .stop = run_stop, .ud = &run};
    mgr_add_runnable(m, &rn);
    code = mgr_run(m);
out:
    agent_free(run.agent);
    kube_client_free(run.hub);
    mgr_free(m);
    if (loop)
        ev_loop_destroy(loop);
    flags_free(fl, nfl);
    return code;
}
