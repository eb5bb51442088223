/*
 * kueue-ks status: a terminal summary of the hub's clusters, managed queues
 * and workloads (cmd/kueue-ks/sv renders it). Synchronous in
 * spirit: it submits the lists, runs the loop until they all returned (or
 * --timeout), prints, exits. A missing CRD (404) prints a note instead of a
 * table; any other failure is reported on stderr and gives exit code 1, as
 * does a cluster that is not a hub (no ClusterMetrics and no ClusterQueue).
 * JOBS counts the jobs placed on each cluster and not finished, of every kind of the job kind
 * table (Jobs, PyTorchJobs...).
 */
#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/kueue-ks/cli.h"
#include "cmd/kueue-ks/cmds.h"
#include "cmd/kueue-ks/sv.h"
#include "controllers/workload/kinds.h"
#include "pkg/json/jsonx.h"
#include "pkg/kube/client.h"
#include "pkg/kube/discovery.h"
#include "pkg/kube/kubeconfig.h"
#include "pkg/util/buf.h"
#include "pkg/util/flags.h"
#include "pkg/util/log.h"
#include "pkg/util/xalloc.h"

#define ST_NFLAGS 4

struct st_opts {
    char *kubeconfig;
    char *context;
    char *output;
    double timeout;
};

/* L_JOBS: batch Jobs; L_KINDS..: the other kinds of the job kind table. */
enum { L_CM, L_JOBS, L_CQ, L_WL, L_KINDS, L_N = L_KINDS + 8 };

struct st_list {
    json_t *body; /* the list on success */
    char *note;   /* why there is no list */
    bool failed;  /* a real failure (not a missing CRD) */
};

struct st {
    struct ev_loop *loop;
    struct kube_client *client;
    const struct logger *lg;
    int pending;
    bool closing; /* kube_client_free is cancelling what is left: ignore results */
    char version[16];
    struct st_list l[L_N];
};

struct st_call {
    struct st *s;
    int which;
};

static const char *const missing_note[L_KINDS] = {
    "the ClusterMetrics CRD (galaxy.kubestellar.io/v1alpha1) is not installed on the hub",
    "the Job API (batch/v1) is not served",
    "Kueue is not installed on the hub (no kueue.x-k8s.io API)",
    "Kueue is not installed on the hub (no kueue.x-k8s.io API)",
};

static void done_one(struct st *s)
{
    if (--s->pending == 0)
        ev_break(s->loop, EVBREAK_ALL);
}

static void list_done(void *ud, const struct kube_result *r)
{
    struct st_call *c = ud;
    struct st *s = c->s;
    struct st_list *l = &s->l[c->which];
    if (s->closing) {
        free(c);
        return;
    }
    if (r->rc == 0 && json_is_array(json_object_get(r->body, "items"))) {
        l->body = json_incref(r->body);
    } else if (r->rc == -ENOENT) {
        l->note = xstrdup(c->which < L_KINDS ? missing_note[c->which] : "kind not served");
    } else {
        l->failed = true;
        l->note = xasprintf("error: %s", r->rc ? r->err->msg : "the answer is not a list");
    }
    free(c);
    done_one(s);
}

static void get_list(struct st *s, int which, const char *path, const char *const *query)
{
    struct st_call *c = xcalloc(1, sizeof *c);
    c->s = s;
    c->which = which;
    struct err e;
    err_clear(&e);
    s->pending++;
    if (kube_client_get(s->client, path, query, list_done, c, NULL, &e) < 0) {
        s->l[which].failed = true;
        s->l[which].note = xasprintf("error: %s", e.msg);
        free(c);
        s->pending--;
    }
}

static void disc_done(void *ud, const struct kube_result *r)
{
    struct st *s = ud;
    if (s->closing)
        return;
    /* One attempt (a CLI reports instead of retrying), read with the
     * controllers' rule (pkg/kube/discovery.h). */
    const char *ver = NULL;
    struct err ve;
    err_clear(&ve);
    if (r->rc == 0) {
        if (disc_kueue_version(r->body, &ver, &ve) == 0) {
            snprintf(s->version, sizeof s->version, "%s", ver);
            char *p = kube_path("kueue.x-k8s.io", s->version, "clusterqueues", NULL, NULL, NULL);
            get_list(s, L_CQ, p, NULL);
            free(p);
            p = kube_path("kueue.x-k8s.io", s->version, "workloads", NULL, NULL, NULL);
            get_list(s, L_WL, p, NULL);
            free(p);
        } else {
            s->l[L_CQ].note = xstrdup(ve.msg);
            s->l[L_WL].note = xstrdup(ve.msg);
        }
    } else if (disc_definitive(r->rc)) { /* -ENOENT: Kueue is not installed */
        s->l[L_CQ].note = xstrdup(missing_note[L_CQ]);
        s->l[L_WL].note = xstrdup(missing_note[L_WL]);
    } else {
        for (int w = L_CQ; w <= L_WL; w++) {
            s->l[w].failed = true;
            s->l[w].note = xasprintf("error: %s", r->err->msg);
        }
    }
    done_one(s);
}

static void timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

static void st_flags(struct st_opts *o, struct flag *fl)
{
    const struct flag t[ST_NFLAGS] = {
        {"kubeconfig", FLAG_STRING, &o->kubeconfig,
         "Path to the hub kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)", NULL},
        {"context", FLAG_STRING, &o->context, "Kubeconfig context to use", NULL},
        {"output", FLAG_STRING, &o->output,
         "Output format: \"\" (tables), wide (more columns) or json", "", 'o'},
        {"timeout", FLAG_DURATION, &o->timeout, "Give up waiting for the hub after this long",
         "30s"},
    };
    memcpy(fl, t, sizeof t);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cmd_status(int argc, char **argv)
{
    struct st_opts o;
    memset(&o, 0, sizeof o);
    struct flag fl[ST_NFLAGS];
    st_flags(&o, fl);
    struct logger lg;
    log_init(&lg, stderr, 0, LOG_FMT_TEXT);
    struct err e;
    err_clear(&e);
    struct st s;
    memset(&s, 0, sizeof s);
    s.lg = &lg;
    struct kube_rest_config *cfg = NULL;

    int code = cli_parse(fl, ST_NFLAGS, argc, argv, "status",
                         "Show the hub's clusters, ClusterQueue quotas and workloads.\n\n"
                         "Usage: kueue-ks status [flags]",
                         NULL, NULL);
    if (code != CLI_GO_ON)
        goto out;
    code = 1;
    if (o.output[0] && strcmp(o.output, "wide") != 0 && strcmp(o.output, "json") != 0) {
        fprintf(stderr, "kueue-ks status: -o must be wide, json or empty, not \"%s\"\n", o.output);
        code = 2;
        goto out;
    }
    struct kubeconfig_opts ko;
    memset(&ko, 0, sizeof ko);
    kubeconfig_opts_from_env(&ko);
    ko.explicit_path = o.kubeconfig && *o.kubeconfig ? o.kubeconfig : NULL;
    ko.context = o.context && *o.context ? o.context : NULL;
    ko.allow_in_cluster = true;
    ko.lg = &lg;
    if (kubeconfig_load(&ko, &cfg, NULL, &e) < 0) {
        fprintf(stderr, "kueue-ks status: %s\n", e.msg);
        goto out;
    }
    s.loop = ev_loop_new(EVFLAG_AUTO);
    struct kube_client_opts co = {.max_retries = 2, .timeout_s = o.timeout};
    if (kube_client_new(s.loop, cfg, &co, &lg, &s.client, &e) < 0) {
        fprintf(stderr, "kueue-ks status: %s\n", e.msg);
        goto out;
    }
    get_list(&s, L_CM, "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics", NULL);
    const char *jq[] = {"labelSelector", SV_CLUSTER_LABEL, NULL};
    get_list(&s, L_JOBS, "/apis/batch/v1/jobs", jq);
    /* JOBS counts every placed kind, not only batch Jobs */
    size_t nk, nextra = 0;
    const struct kind_def *kt = kind_table(&nk);
    for (size_t i = 0; i < nk && nextra < L_N - L_KINDS; i++) {
        if (kt[i].generic || strcmp(kt[i].group, "batch") == 0)
            continue;
        char *p = kube_path(kt[i].group, kt[i].version, kt[i].resource, NULL, NULL, NULL);
        get_list(&s, L_KINDS + (int)nextra++, p, jq);
        free(p);
    }
    s.pending++;
    if (kube_client_get(s.client, DISC_KUEUE_GROUP_PATH, NULL, disc_done, &s, NULL, &e) < 0) {
        s.pending--;
        for (int w = L_CQ; w <= L_WL; w++) {
            s.l[w].failed = true;
            s.l[w].note = xasprintf("error: %s", e.msg);
        }
    }
    ev_timer tm;
    ev_timer_init(&tm, timeout_cb, o.timeout > 0 ? o.timeout : 30.0, 0);
    ev_timer_start(s.loop, &tm);
    if (s.pending > 0)
        ev_run(s.loop, 0);
    ev_timer_stop(s.loop, &tm);
    bool timed_out = s.pending > 0;
    for (int w = 0; w < L_KINDS + (int)nextra; w++)
        if (!s.l[w].body && !s.l[w].note) {
            s.l[w].failed = true;
            s.l[w].note = xstrdup("error: the hub did not answer in time (--timeout)");
        }

    int nfailed = 0;
    for (int w = 0; w < L_KINDS; w++)
        nfailed += s.l[w].failed;
    if (nfailed == L_KINDS) {
        /* Nothing answered (unreachable hub, bad credentials...): one line, no tables. */
        fprintf(stderr, "kueue-ks status: %s\n", s.l[L_CM].note + strlen("error: "));
        code = 1;
        goto out;
    }
    /* every placed kind in one list for the JOBS column */
    json_t *jobs = NULL;
    if (s.l[L_JOBS].body) {
        jobs = jx_deep_copy(s.l[L_JOBS].body);
        for (int w = L_KINDS; w < L_KINDS + (int)nextra; w++)
            if (s.l[w].body)
                json_array_extend(json_object_get(jobs, "items"),
                                  json_object_get(s.l[w].body, "items"));
    }
    struct sv_input in = {
        .cluster_metrics = s.l[L_CM].body,
        .cluster_metrics_note = s.l[L_CM].note,
        .jobs = jobs,
        .cluster_queues = s.l[L_CQ].body,
        .cluster_queues_note = s.l[L_CQ].note,
        .workloads = s.l[L_WL].body,
        .workloads_note = s.l[L_WL].note,
        .now_ms = wall_ms(),
        .wide = strcmp(o.output, "wide") == 0,
    };
    int rc = 0;
    if (strcmp(o.output, "json") == 0) {
        json_t *j = sv_render_json(&in);
        char *txt = jx_dumps_flags(j, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (txt)
            printf("%s\n", txt);
        free(txt);
        json_decref(j);
    } else {
        struct buf b;
        buf_init(&b, (size_t)64 << 20);
        rc = sv_render(&in, &b);
        fputs(buf_str(&b), stdout);
        buf_free(&b);
    }
    json_decref(jobs);
    code = rc < 0 || timed_out || nfailed ? 1 : 0;
    /* A worker's kubeconfig (or a cluster without kueue-ks) answers with empty
     * or missing lists: say so and fail, rather than print empty tables. */
    bool no_cm = !s.l[L_CM].body || json_array_size(json_object_get(s.l[L_CM].body, "items")) == 0;
    bool no_cq = !s.l[L_CQ].body || json_array_size(json_object_get(s.l[L_CQ].body, "items")) == 0;
    if (!nfailed && no_cm && no_cq) {
        fprintf(stderr,
                "kueue-ks status: this cluster is not a kueue-ks hub (%s; %s): is KUBECONFIG a "
                "worker's? Use the hub's kubeconfig (make run: .dev/hub.kubeconfig)\n",
                s.l[L_CM].body ? "no ClusterMetrics" : "no ClusterMetrics CRD",
                s.l[L_CQ].body ? "no ClusterQueue" : "no Kueue");
        code = 1;
    }
    /* The jobs list has no table of its own: its failure is only said here. */
    if (s.l[L_JOBS].failed)
        fprintf(stderr, "kueue-ks status: jobs not counted: %s\n", s.l[L_JOBS].note);
out:
    s.closing = true;
    kube_client_free(s.client); /* completes what is left with -ECANCELED */
    for (int w = 0; w < L_N; w++) {
        json_decref(s.l[w].body);
        free(s.l[w].note);
    }
    if (s.loop)
        ev_loop_destroy(s.loop);
    kube_rest_config_free(cfg);
    flags_free(fl, ST_NFLAGS);
    return code;
}
