/*
 * kueue-ks run: the controllers against a hub cluster.
 */
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/kueue-ks/cli.h"
#include "cmd/kueue-ks/cmds.h"
#include "controllers/quota/controller.h"
#include "controllers/workload/wlrun.h"
#include "pkg/manager/manager.h"
#include "pkg/manager/mgrflags.h"
#include "pkg/util/flags.h"
#include "pkg/util/log.h"

struct run_opts {
    struct mgr_flag_values mgr;
    /* workload controller */
    char *transport;
    char *origin;
    bool delete_on_completion;
    double worker_lost_timeout;
    double unschedulable_timeout, unschedulable_exclusion;
    char *placement;
    bool allow_insecure_workers;
    char *ac_controller;
    struct flag_strv workers;
    int workload_concurrency;
    bool packed_cache;
    bool job_metadata_through_status;
    struct quota_options quota; /* --metrics-stale-after is shared with placement */
};

#define RUN_NFLAGS 13
#define ALL_NFLAGS (MGR_FLAGS_MAX + RUN_NFLAGS + QUOTA_NFLAGS)

/* The table: the manager's flags, run's own, the quota controller's. Returns its size. */
static size_t run_flags(struct run_opts *o, struct flag *fl)
{
    size_t n = mgr_flags(&o->mgr, MGR_FLAGS_RUN, fl);
    const struct flag t[RUN_NFLAGS] = {
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
        {"unschedulable-timeout", FLAG_DURATION, &o->unschedulable_timeout,
         "How long a copy's pods may stay unschedulable on its worker before the job is placed "
         "again elsewhere",
         "5m"},
        {"unschedulable-exclusion", FLAG_DURATION, &o->unschedulable_exclusion,
         "How long a job is kept off a worker that could not schedule its pods", "10m"},
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
        {"workload-concurrency", FLAG_INT, &o->workload_concurrency,
         "Workloads reconciled at once (each waits on its own writes; more overlap more round "
         "trips to the API servers)",
         "4"},
        {"packed-cache", FLAG_BOOL, &o->packed_cache,
         "Keep hub Workloads, hub jobs and worker copies packed in memory, decoded when read: "
         "about 5x less memory with many workloads (false: keep them decoded, a few percent "
         "less CPU per dispatch)",
         "true"},
        {"job-metadata-through-status", FLAG_BOOL, &o->job_metadata_through_status,
         "Write kueue-ks's labels and annotations on hub batch/v1 Jobs (status relay, exclusion, "
         "a placement that changes no spec) through their status subresource, where admission "
         "webhooks for jobs are not called (false: through the job itself, seen by admission "
         "policies on jobs)",
         "true"},
    };
    memcpy(fl + n, t, sizeof t);
    n += RUN_NFLAGS;
    quota_flags(&o->quota, fl + n);
    return n + QUOTA_NFLAGS;
}

int cmd_run(int argc, char **argv, cmd_give_back_fn give_back, jx_lifetime_fn lifetime)
{
    struct run_opts o;
    memset(&o, 0, sizeof o);
    struct flag fl[ALL_NFLAGS];
    size_t nfl = run_flags(&o, fl);
    struct logger lg;
    struct mgr *m = NULL;
    struct quota_ctl *qc = NULL;
    struct ev_loop *loop = NULL;
    struct wlrun *wr = NULL;

    int code = cli_parse(fl, nfl, argc, argv, "run",
                         "Run the kueue-ks controllers against a hub cluster.\n\n"
                         "Usage: kueue-ks run [flags]",
                         &o.mgr, &lg);
    if (code != CLI_GO_ON)
        goto out;
    code = 1;

    struct err e;
    err_clear(&e);
    struct wlrun_config wc = {
        .transport = o.transport,
        .origin = o.origin,
        .delete_on_completion = o.delete_on_completion,
        .worker_lost_timeout_s = o.worker_lost_timeout,
        .unschedulable_timeout_s = o.unschedulable_timeout,
        .unschedulable_exclusion_s = o.unschedulable_exclusion,
        .placement = o.placement,
        .allow_insecure_workers = o.allow_insecure_workers,
        .http1_only = !o.mgr.http2,
        .ac_controller = o.ac_controller,
        .workers = (const char *const *)o.workers.v,
        .n_workers = o.workers.n,
        .concurrency = o.workload_concurrency,
        .packed_cache = o.packed_cache,
        .job_meta_through_job = !o.job_metadata_through_status,
        .metrics_stale_after_s = o.quota.metrics_stale_after,
        .json_lifetime = lifetime,
    };
    if (wlrun_new(&wc, &wr, &e) < 0) {
        code = cli_invalid(&lg, e.msg);
        goto out;
    }

    if (cli_mgr_new(&o.mgr, &lg, give_back, &loop, &m) < 0)
        goto out;
    if (quota_ctl_new(&o.quota, NULL, &qc, &e) < 0) {
        code = cli_invalid(&lg, e.msg);
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
    flags_free(fl, nfl);
    return code;
}
