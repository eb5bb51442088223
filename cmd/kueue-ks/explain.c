/*
 * kueue-ks explain [-n NS] [KIND/]NAME: why a job runs where it does, or why
 * it does not (controllers/workload/jv renders it); workload/NAME explains the Workload's job. A
 * CLI, not a reconcile: it reads the hub once (the job, then its Workload, LocalQueue, the
 * ClusterMetrics, ResourceFlavors and AdmissionChecks), prints, exits. Exit 1 when the job does not
 * exist or the hub cannot be read.
 */
#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cmd/kueue-ks/cli.h"
#include "cmd/kueue-ks/cmds.h"
#include "controllers/workload/jv.h"
#include "controllers/workload/kinds.h"
#include "controllers/workload/xf.h"
#include "pkg/json/jsonx.h"
#include "pkg/kube/client.h"
#include "pkg/kube/kubeconfig.h"
#include "pkg/util/buf.h"
#include "pkg/util/flags.h"
#include "pkg/util/xalloc.h"

#define XP_NFLAGS 4

enum { G_JOB, G_DISC, G_CM, G_WL, G_LQ, G_RF, G_AC, G_CQ, G_N };

struct xp {
    struct ev_loop *loop;
    struct kube_client *client;
    int pending;
    bool closing;
    json_t *body[G_N];
    int rc[G_N];
    char *err[G_N];
};

struct xp_call {
    struct xp *x;
    int which;
};

static void got(void *ud, const struct kube_result *r)
{
    struct xp_call *c = ud;
    struct xp *x = c->x;
    if (!x->closing) {
        x->rc[c->which] = r->rc;
        if (r->rc == 0)
            x->body[c->which] = json_incref(r->body);
        else
            x->err[c->which] = xstrdup(r->err ? r->err->msg : "failed");
        if (--x->pending == 0)
            ev_break(x->loop, EVBREAK_ALL);
    }
    free(c);
}

static void get(struct xp *x, int which, const char *path)
{
    struct xp_call *c = xcalloc(1, sizeof *c);
    c->x = x;
    c->which = which;
    struct err e;
    err_clear(&e);
    x->pending++;
    if (kube_client_get(x->client, path, NULL, got, c, NULL, &e) < 0) {
        x->pending--;
        x->rc[which] = -EIO;
        x->err[which] = xstrdup(e.msg);
        free(c);
    }
}

/* Run the loop until every read is answered; false (said on stderr) when --timeout came first. */
static bool wait_all(struct xp *x)
{
    if (x->pending > 0)
        ev_run(x->loop, 0);
    if (x->pending == 0)
        return true;
    fprintf(stderr, "kueue-ks explain: the hub did not answer in time (--timeout)\n");
    return false;
}

static void timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* "job/NAME", "jobs/NAME", "job.batch/NAME", "NAME" (a Job), "pytorchjob/NAME"... */
static const struct kind_def *parse_target(const char *arg, const char **name)
{
    const char *slash = strchr(arg, '/');
    *name = slash ? slash + 1 : arg;
    if (!**name)
        return NULL;
    if (!slash)
        return kind_lookup("batch/v1", "Job");
    size_t len = (size_t)(slash - arg), n;
    const char *dot = memchr(arg, '.', len); /* job.batch/NAME, as kubectl prints it */
    if (dot)
        len = (size_t)(dot - arg);
    const struct kind_def *t = kind_table(&n);
    for (size_t i = 0; i < n; i++) {
        if (t[i].generic)
            continue;
        size_t kl = strlen(t[i].kind), rl = strlen(t[i].resource);
        if ((len == kl && strncasecmp(arg, t[i].kind, len) == 0) ||
            (len == rl && strncasecmp(arg, t[i].resource, len) == 0) ||
            (len + 1 == rl && strncasecmp(arg, t[i].resource, len) == 0))
            return &t[i];
    }
    return NULL;
}

/* "workload/NAME", "workloads/NAME", "workload.kueue.x-k8s.io/NAME": the Workload's job is
 * explained (the README has users watch Workloads). */
static bool is_workload_target(const char *arg)
{
    const char *slash = strchr(arg, '/');
    if (!slash)
        return false;
    size_t len = (size_t)(slash - arg);
    const char *dot = memchr(arg, '.', len);
    if (dot)
        len = (size_t)(dot - arg);
    return (len == 8 && strncasecmp(arg, "workload", 8) == 0) ||
           (len == 9 && strncasecmp(arg, "workloads", 9) == 0);
}

/* The Kueue API version the hub serves (v1beta2 when it does), from G_DISC's answer. */
static const char *kueue_version(const struct xp *x)
{
    const char *ver = "v1beta1";
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(x->body[G_DISC], "versions"), i, v)
    {
        if (strcmp(jx_str(v, "version", ""), "v1beta2") == 0)
            ver = "v1beta2";
    }
    return ver;
}

/* Workload `wname` in `ns`: its job's kind and name (*name: new string), or NULL with a
 * message on stderr. Runs the loop. */
static const struct kind_def *workload_job(struct xp *x, const char *ns, const char *wname,
                                           char **name)
{
    get(x, G_DISC, "/apis/kueue.x-k8s.io");
    if (!wait_all(x))
        return NULL;
    if (x->rc[G_DISC] < 0) {
        fprintf(stderr, "kueue-ks explain: Kueue is not installed on this cluster (no "
                        "kueue.x-k8s.io API): is KUBECONFIG the hub?\n");
        return NULL;
    }
    char *p = kube_path("kueue.x-k8s.io", kueue_version(x), "workloads", ns, wname, NULL);
    get(x, G_WL, p);
    free(p);
    if (!wait_all(x))
        return NULL;
    if (x->rc[G_WL] < 0) {
        fprintf(stderr, "kueue-ks explain: Workload %s/%s: %s\n", ns, wname,
                x->rc[G_WL] == -ENOENT ? "not found (kubectl get workloads -A lists them)"
                                       : x->err[G_WL]);
        return NULL;
    }
    json_t *owner = jx_owner_controller(x->body[G_WL]);
    const struct kind_def *k =
        owner ? kind_lookup(jx_str(owner, "apiVersion", ""), jx_str(owner, "kind", "")) : NULL;
    if (!k || k->generic || !jx_str(owner, "name", NULL)) {
        fprintf(stderr,
                "kueue-ks explain: Workload %s/%s has no owner job kueue-ks knows (%s %s)\n", ns,
                wname, owner ? jx_str(owner, "kind", "?") : "no controller ownerReference",
                owner ? jx_str(owner, "name", "") : "");
        return NULL;
    }
    *name = xstrdup(jx_str(owner, "name", ""));
    /* the job's own reads list the namespace's Workloads into G_WL; discovery is kept */
    json_decref(x->body[G_WL]);
    x->body[G_WL] = NULL;
    return k;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cmd_explain(int argc, char **argv)
{
    char *kubeconfig = NULL, *context = NULL, *ns = NULL, *ctx_ns = NULL;
    char *owned_name = NULL; /* workload/NAME: its job's name */
    double timeout = 0;
    struct flag fl[XP_NFLAGS] = {
        {"kubeconfig", FLAG_STRING, &kubeconfig,
         "Path to the hub kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)", NULL},
        {"context", FLAG_STRING, &context, "Kubeconfig context to use", NULL},
        {"namespace", FLAG_STRING, &ns,
         "Namespace of the job (default: the kubeconfig context's namespace, as kubectl; "
         "\"default\" when it sets none)",
         NULL, 'n'},
        {"timeout", FLAG_DURATION, &timeout, "Give up waiting for the hub after this long", "30s"},
    };
    struct xp x;
    memset(&x, 0, sizeof x);
    struct logger lg;
    log_init(&lg, stderr, 0, LOG_FMT_TEXT);
    struct kube_rest_config *cfg = NULL;
    const char **pos = NULL;
    size_t npos = 0;
    bool help = false;
    struct err e;
    err_clear(&e);
    int code = 2;
    if (flags_set_defaults(fl, XP_NFLAGS, &e) < 0 ||
        flags_parse(fl, XP_NFLAGS, argc, argv, &pos, &npos, &help, &e) < 0) {
        fprintf(stderr, "kueue-ks explain: %s\n", e.msg);
        goto out;
    }
    if (help) {
        printf("Explain a job: Kueue's state for it (queue, ClusterQueue, reservation, "
               "priority),\nkueue-ks's admission check, where it is placed and what its worker "
               "copy reports,\nand for each worker cluster whether it fits now, once the cluster "
               "drains, or never\n(needed per pod vs free and allocatable on the best matching "
               "node).\n\nUsage: kueue-ks explain [-n NAMESPACE] [KIND/]NAME   (KIND: job "
               "(default), pytorchjob, or workload: its job)\n\nFlags:\n");
        flags_usage(stdout, fl, XP_NFLAGS);
        code = 0;
        goto out;
    }
    if (npos != 1) {
        fprintf(stderr, "kueue-ks explain: want one job, e.g. 'kueue-ks explain job/NAME' (see "
                        "--help)\n");
        goto out;
    }
    const char *name = NULL;
    bool wl_target = is_workload_target(pos[0]);
    const struct kind_def *k = wl_target ? NULL : parse_target(pos[0], &name);
    if (wl_target ? !strchr(pos[0], '/')[1] : !k) {
        fprintf(stderr,
                "kueue-ks explain: \"%s\": not KIND/NAME with KIND job, pytorchjob or workload\n",
                pos[0]);
        goto out;
    }
    code = 1;
    struct kubeconfig_opts ko;
    memset(&ko, 0, sizeof ko);
    kubeconfig_opts_from_env(&ko);
    ko.explicit_path = kubeconfig && *kubeconfig ? kubeconfig : NULL;
    ko.context = context && *context ? context : NULL;
    ko.allow_in_cluster = true;
    ko.lg = &lg;
    if (kubeconfig_load(&ko, &cfg, &ctx_ns, &e) < 0) {
        fprintf(stderr, "kueue-ks explain: %s\n", e.msg);
        goto out;
    }
    if (!ns || !*ns) { /* as kubectl: the context's namespace ("default" when it names none) */
        free(ns);
        ns = ctx_ns; /* freed with the flags */
        ctx_ns = NULL;
    }
    x.loop = ev_loop_new(EVFLAG_AUTO);
    struct kube_client_opts co = {.max_retries = 2, .timeout_s = timeout};
    if (kube_client_new(x.loop, cfg, &co, &lg, &x.client, &e) < 0) {
        fprintf(stderr, "kueue-ks explain: %s\n", e.msg);
        goto out;
    }
    ev_timer tm;
    ev_timer_init(&tm, timeout_cb, timeout > 0 ? timeout : 30.0, 0);
    ev_timer_start(x.loop, &tm);
    if (wl_target) {
        k = workload_job(&x, ns, strchr(pos[0], '/') + 1, &owned_name);
        if (!k)
            goto out;
        name = owned_name;
    }
    char *p = kube_path(k->group, k->version, k->resource, ns, name, NULL);
    get(&x, G_JOB, p);
    free(p);
    if (!x.body[G_DISC]) /* workload/NAME read it already */
        get(&x, G_DISC, "/apis/kueue.x-k8s.io");
    get(&x, G_CM, "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics");
    if (!wait_all(&x))
        goto out;
    if (x.rc[G_JOB] == -ENOENT) {
        fprintf(stderr,
                "kueue-ks explain: %s %s/%s not found (in namespace %s: -n names another one; "
                "kubectl get %s -A lists them all)\n",
                k->kind, ns, name, ns, k->resource);
        goto out;
    }
    if (x.rc[G_JOB] < 0) {
        fprintf(stderr, "kueue-ks explain: %s\n", x.err[G_JOB]);
        goto out;
    }
    const char *origin = jx_label(x.body[G_JOB], XF_LABEL_ORIGIN);
    if (origin) {
        /* a worker's copy: its hub job is the one with a Workload, a check and a placement */
        fprintf(stderr,
                "kueue-ks explain: %s %s/%s here is kueue-ks's copy of a hub job (label %s=%s): "
                "this is a worker cluster; explain the job with the hub's kubeconfig\n",
                k->kind, ns, name, XF_LABEL_ORIGIN, origin);
        goto out;
    }
    if (x.rc[G_DISC] < 0) {
        fprintf(stderr, "kueue-ks explain: Kueue is not installed on this cluster (no "
                        "kueue.x-k8s.io API): is KUBECONFIG the hub?\n");
        goto out;
    }
    const char *ver = kueue_version(&x);
    p = kube_path("kueue.x-k8s.io", ver, "workloads", ns, NULL, NULL);
    get(&x, G_WL, p);
    free(p);
    const char *q = jx_label(x.body[G_JOB], "kueue.x-k8s.io/queue-name");
    if (q) {
        p = kube_path("kueue.x-k8s.io", ver, "localqueues", ns, q, NULL);
        get(&x, G_LQ, p);
        free(p);
    }
    p = kube_path("kueue.x-k8s.io", ver, "resourceflavors", NULL, NULL, NULL);
    get(&x, G_RF, p);
    free(p);
    p = kube_path("kueue.x-k8s.io", ver, "admissionchecks", NULL, NULL, NULL);
    get(&x, G_AC, p);
    free(p);
    p = kube_path("kueue.x-k8s.io", ver, "clusterqueues", NULL, NULL, NULL);
    get(&x, G_CQ, p);
    free(p);
    if (!wait_all(&x))
        goto out;
    /* the job's Workload: the one it controls */
    const json_t *wl = NULL;
    const char *uid = jx_uid(x.body[G_JOB]);
    size_t i;
    json_t *v;
    json_array_foreach(jx_arr(x.body[G_WL], "items"), i, v)
    {
        const json_t *o = jx_owner_controller(v);
        if (uid && o && strcmp(jx_str(o, "uid", ""), uid) == 0)
            wl = v;
    }
    struct jv_input in = {.job = x.body[G_JOB],
                          .workload = wl,
                          .local_queue = x.body[G_LQ],
                          .cluster_metrics = x.body[G_CM],
                          .flavors = x.body[G_RF],
                          .admission_checks = x.body[G_AC],
                          .cluster_queues = x.body[G_CQ],
                          .now_ms = wall_ms()};
    struct buf b;
    buf_init(&b, (size_t)16 << 20);
    if (jv_render(&in, &b) == 0) {
        fputs(buf_str(&b), stdout);
        code = 0;
    }
    buf_free(&b);
    for (int w = G_CM; w < G_N; w++)
        if (x.rc[w] < 0 && x.rc[w] != -ENOENT)
            fprintf(stderr, "kueue-ks explain: not shown: %s\n", x.err[w]);
out:
    x.closing = true;
    kube_client_free(x.client);
    for (int w = 0; w < G_N; w++) {
        json_decref(x.body[w]);
        free(x.err[w]);
    }
    if (x.loop)
        ev_loop_destroy(x.loop);
    kube_rest_config_free(cfg);
    free(ctx_ns);
    free(owned_name);
    free(pos);
    flags_free(fl, XP_NFLAGS);
    return code;
}
