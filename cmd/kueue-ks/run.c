/*
 * kueue-ks run: the controllers against a hub cluster.
 */
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/kueue-ks/cmds.h"
#include "controllers/quota/controller.h"
#include "controllers/workload/runner.h"
#include "pkg/manager/manager.h"
#include "pkg/util/flags.h"
#include "pkg/util/log.h"

struct run_opts {
    char *kubeconfig;
    char *context;
    char *metrics_bind;
    char *health_bind;
    bool leader_elect;
    char *le_namespace;
    char *le_id;
    double lease_duration;
    double renew_deadline;
    double retry_period;
    double qps;
    int burst;
    int verbosity;
    char *log_format;
    /* workload controller */
    char *transport;
    char *origin;
    bool delete_on_completion;
    double worker_lost_timeout;
    char *placement;
    bool allow_insecure_workers;
    char *ac_controller;
    struct flag_strv workers;
    struct quota_options quota; /* --metrics-stale-after is shared with placement */
};

#define RUN_NFLAGS 22
#define ALL_NFLAGS (RUN_NFLAGS + QUOTA_NFLAGS)

static void run_flags(struct run_opts *o, struct flag *fl)
{
    const struct flag t[RUN_NFLAGS] = {
        {"kubeconfig", FLAG_STRING, &o->kubeconfig,
         "Path to the hub kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)", NULL},
        {"context", FLAG_STRING, &o->context, "Kubeconfig context to use", NULL},
        {"metrics-bind-address", FLAG_STRING, &o->metrics_bind,
         "Address the /metrics endpoint binds to; 0 disables it", ":8080"},
        {"health-probe-bind-address", FLAG_STRING, &o->health_bind,
         "Address the /healthz and /readyz endpoints bind to; 0 disables them", ":8081"},
        {"leader-elect", FLAG_BOOL, &o->leader_elect,
         "Run controllers only while holding the leader Lease (for several replicas)", "false"},
        {"leader-election-namespace", FLAG_STRING, &o->le_namespace,
         "Namespace of the leader Lease (default: the kubeconfig context's namespace, else "
         "kueue-ks-system)",
         ""},
        {"leader-election-id", FLAG_STRING, &o->le_id, "Name of the leader Lease",
         "kueue-ks-leader"},
        {"leader-election-lease-duration", FLAG_DURATION, &o->lease_duration,
         "How long a leader's Lease is valid without renewal", "15s"},
        {"leader-election-renew-deadline", FLAG_DURATION, &o->renew_deadline,
         "How long the leader retries renewing before giving up", "10s"},
        {"leader-election-retry-period", FLAG_DURATION, &o->retry_period,
         "Interval between leader election attempts", "2s"},
        {"qps", FLAG_DOUBLE, &o->qps, "Client-side request rate limit to the API server", "200"},
        {"burst", FLAG_INT, &o->burst, "Client-side request burst to the API server", "400"},
        {"v", FLAG_INT, &o->verbosity, "Log verbosity (0 = info; higher is more detail)", "0"},
        {"log-format", FLAG_STRING, &o->log_format, "Log format: text (key=value) or json", "text"},
        {"transport", FLAG_STRING, &o->transport,
         "How jobs reach workers: direct (kueue-ks creates the copies) or kubestellar (labels and "
         "BindingPolicies only)",
         "direct"},
        {"origin", FLAG_STRING, &o->origin,
         "Value of the kueue-ks.io/origin label on worker copies (default: the hub's kube-system "
         "namespace uid, else kueue-ks)",
         ""},
        {"delete-on-completion", FLAG_BOOL, &o->delete_on_completion,
         "Delete a job's worker copy once its final status is on the hub", "false"},
        {"worker-lost-timeout", FLAG_DURATION, &o->worker_lost_timeout,
         "How long a worker may be unusable before its jobs are evicted and placed again", "5m"},
        {"placement", FLAG_STRING, &o->placement,
         "Cluster choice: spread (most free) or binpack (least free that fits)", "spread"},
        {"allow-insecure-workers", FLAG_BOOL, &o->allow_insecure_workers,
         "Accept worker kubeconfigs without TLS verification (development only)", "false"},
        {"admission-check-controller", FLAG_STRING, &o->ac_controller,
         "spec.controllerName of the AdmissionChecks kueue-ks serves", "kubestellar.io/ks-kueue"},
        {"worker", FLAG_STRINGS, &o->workers,
         "Register a worker cluster NAME=KUBECONFIG_PATH (repeatable; direct transport). Workers "
         "also come from Secrets labelled kueue-ks.io/worker=true in the operator's namespace",
         NULL},
    };
    memcpy(fl, t, sizeof t);
    quota_flags(&o->quota, fl + RUN_NFLAGS);
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o;
    memset(&o, 0, sizeof o);
    struct flag fl[ALL_NFLAGS];
    run_flags(&o, fl);
    struct logger lg;
    log_init(&lg, stderr, 0, LOG_FMT_TEXT);
    struct err e;
    err_clear(&e);
    bool help = false;
    int code = 1;
    struct mgr *m = NULL;
    struct quota_ctl *qc = NULL;
    struct ev_loop *loop = NULL;
    struct wlrun *wr = NULL;

    if (flags_set_defaults(fl, ALL_NFLAGS, &e) < 0 ||
        flags_parse(fl, ALL_NFLAGS, argc, argv, NULL, NULL, &help, &e) < 0) {
        log_error(&lg, "invalid command line", "error", e.msg);
        code = 2;
        goto out;
    }
    if (help) {
        printf("Run the kueue-ks controllers against a hub cluster.\n\n"
               "Usage: kueue-ks run [flags]\n\nFlags:\n");
        flags_usage(stdout, fl, ALL_NFLAGS);
        code = 0;
        goto out;
    }
    enum log_format lf;
    if (log_parse_format(o.log_format, &lf) < 0) {
        log_error(&lg, "invalid command line", "error", "--log-format must be text or json");
        code = 2;
        goto out;
    }
    log_init(&lg, stderr, o.verbosity, lf);

    struct wlrun_config wc = {
        .transport = o.transport,
        .origin = o.origin,
        .delete_on_completion = o.delete_on_completion,
        .worker_lost_timeout_s = o.worker_lost_timeout,
        .placement = o.placement,
        .allow_insecure_workers = o.allow_insecure_workers,
        .ac_controller = o.ac_controller,
        .workers = (const char *const *)o.workers.v,
        .n_workers = o.workers.n,
        .metrics_stale_after_s = o.quota.metrics_stale_after,
    };
    if (wlrun_new(&wc, &wr, &e) < 0) {
        log_error(&lg, "invalid command line", "error", e.msg);
        code = 2;
        goto out;
    }

    loop = ev_default_loop(EVFLAG_AUTO);
    struct mgr_options mo = {
        .kubeconfig = o.kubeconfig,
        .context = o.context,
        .metrics_bind = o.metrics_bind,
        .health_bind = o.health_bind,
        .leader_elect = o.leader_elect,
        .le_namespace = o.le_namespace,
        .le_id = o.le_id,
        .lease_duration_s = o.lease_duration,
        .renew_deadline_s = o.renew_deadline,
        .retry_period_s = o.retry_period,
        .qps = o.qps,
        .burst = o.burst,
    };
    if (mgr_new(loop, &mo, &lg, &m, &e) < 0) {
        log_error(&lg, "cannot start", "error", e.msg);
        goto out;
    }
    if (quota_ctl_new(&o.quota, NULL, &qc, &e) < 0) {
        log_error(&lg, "invalid command line", "error", e.msg);
        code = 2;
        goto out;
    }
    struct mgr_runnable qr;
    quota_ctl_runnable(qc, &qr);
    mgr_add_runnable(m, &qr);
    struct mgr_runnable rn;
    wlrun_runnable(wr, &rn);
    mgr_add_runnable(m, &rn);
    code = mgr_run(m);
out:
    quota_ctl_free(qc); /* before mgr_free: it uses the manager's client */
    wlrun_release(wr);  /* informers and workers before the hub client */
    mgr_free(m);
    wlrun_free(wr);
    if (loop)
        ev_loop_destroy(loop);
    flags_free(fl, ALL_NFLAGS);
    return code;
}
