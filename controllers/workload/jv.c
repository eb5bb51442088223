/* jv: `kueue-ks explain` text (see jv.h). */
#include "controllers/workload/jv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/acc.h"
#include "controllers/workload/clustersel.h"
#include "controllers/workload/excl.h"
#include "controllers/workload/explain.h"
#include "controllers/workload/wl.h"
#include "controllers/workload/xf.h"
#include "pkg/json/jsonx.h"
#include "pkg/quantity/quantity.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"
#include "pkg/util/plural.h"

#define JV_COLS 8

/* A table of owned cells, printed with columns padded to the widest cell. */
struct jv_table {
    char *(*rows)[JV_COLS];
    size_t n, ncols;
};

static void tab_row(struct jv_table *t, const char *const *cells)
{
    t->rows = xrealloc(t->rows, (t->n + 1) * sizeof *t->rows);
    for (size_t c = 0; c < JV_COLS; c++)
        t->rows[t->n][c] = c < t->ncols && cells[c] ? xstrdup(cells[c]) : NULL;
    t->n++;
}

static void tab_print(struct jv_table *t, struct buf *out)
{
    size_t w[JV_COLS] = {0};
    for (size_t r = 0; r < t->n; r++)
        for (size_t c = 0; c < t->ncols; c++)
            if (t->rows[r][c] && strlen(t->rows[r][c]) > w[c])
                w[c] = strlen(t->rows[r][c]);
    for (size_t r = 0; r < t->n; r++) {
        struct buf line;
        buf_init(&line, 4096);
        buf_puts(&line, "  ");
        for (size_t c = 0; c < t->ncols; c++) {
            const char *v = t->rows[r][c] ? t->rows[r][c] : "";
            if (c + 1 < t->ncols)
                buf_printf(&line, "%-*s  ", (int)w[c], v);
            else
                buf_puts(&line, v);
        }
        /* no trailing blanks */
        const char *s = buf_str(&line);
        size_t len = strlen(s);
        while (len > 0 && s[len - 1] == ' ')
            len--;
        buf_printf(out, "%.*s\n", (int)len, s);
        buf_free(&line);
        for (size_t c = 0; c < JV_COLS; c++)
            free(t->rows[r][c]);
    }
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

/* The job's end ("Succeeded", "Failed"), or NULL while it has not finished: the hub job's
 * condition (Complete, Failed; a Kubeflow job's Succeeded), else the Workload's Finished. */
static const char *job_end(const struct jv_input *in)
{
    if (jx_cond_is_true(in->job, "Failed"))
        return "Failed";
    if (jx_cond_is_true(in->job, "Complete") || jx_cond_is_true(in->job, "Succeeded"))
        return "Succeeded";
    const json_t *f = jx_cond_find(in->workload, "Finished");
    if (!f || strcmp(jx_str(f, "status", ""), "True") != 0)
        return NULL;
    return strcmp(jx_str(f, "reason", ""), "Failed") == 0 ? "Failed" : "Succeeded";
}

/* Where the job ran: the cluster it is placed on, else the one its copy reported from. NULL:
 * not known. New string. */
static char *ran_on(const struct jv_input *in)
{
    const char *placed = jx_label(in->job, XF_LABEL_CLUSTER);
    if (placed)
        return xstrdup(placed);
    json_t *r = xf_remote_status(in->job);
    const char *c = jx_str(r, "cluster", NULL);
    char *out = c ? xstrdup(c) : NULL;
    json_decref(r);
    return out;
}

static const json_t *our_check_entry(const struct jv_input *in, const char **name)
{
    *name = NULL;
    size_t i;
    json_t *ac;
    json_array_foreach(jx_arr(in->admission_checks, "items"), i, ac)
    {
        if (!acc_is_ours(ac) || !jx_name(ac))
            continue;
        *name = jx_name(ac);
        const json_t *e = jx_find_by(jx_arr(in->workload, "status.admissionChecks"), "name", *name);
        if (e)
            return e;
    }
    return NULL;
}

static void kueue_part(const struct jv_input *in, struct buf *out)
{
    const json_t *wl = in->workload;
    const char *queue = wl ? jx_str(wl, "spec.queueName", NULL) : NULL;
    if (!queue)
        queue = jx_label(in->job, "kueue.x-k8s.io/queue-name");
    buf_puts(out, "Kueue\n");
    if (!queue) {
        buf_puts(out, "  Queue:        none: the job has no kueue.x-k8s.io/queue-name label, Kueue "
                      "does not manage it\n");
        return;
    }
    const char *cq = jx_str(wl, "status.admission.clusterQueue", NULL);
    if (!cq)
        cq = jx_str(in->local_queue, "spec.clusterQueue", NULL);
    if (cq)
        buf_printf(out, "  Queue:        %s (ClusterQueue %s)\n", queue, cq);
    else
        buf_printf(out,
                   "  Queue:        %s (no such LocalQueue in namespace %s; kubectl get "
                   "localqueues -A lists them)\n",
                   queue, jx_namespace(in->job) ? jx_namespace(in->job) : "default");
    if (!wl) {
        buf_puts(out, "  Workload:     none yet (Kueue has not picked the job up)\n");
        return;
    }
    buf_printf(out, "  Workload:     %s\n", jx_name(wl) ? jx_name(wl) : "?");
    const char *pc = jx_str(wl, "spec.priorityClassName", NULL);
    buf_printf(out, "  Priority:     %lld%s%s%s\n", jx_int(wl, "spec.priority", 0),
               pc ? " (class " : "", pc ? pc : "", pc ? ")" : "");
    if (!jx_bool(wl, "spec.active", true))
        buf_puts(out, "  Active:       no (spec.active=false: deactivated)\n");
    const json_t *qr = jx_cond_find(wl, "QuotaReserved");
    const char *st = jx_str(qr, "status", "");
    if (strcmp(st, "True") == 0)
        buf_printf(out, "  Reservation:  yes, since %s\n", jx_str(qr, "lastTransitionTime", "?"));
    else if (qr)
        buf_printf(out, "  Reservation:  no: %s: %s\n", jx_str(qr, "reason", "?"),
                   jx_str(qr, "message", ""));
    else
        buf_puts(out, "  Reservation:  no\n");
    static const char *const conds[] = {"Admitted", "Evicted", "Finished"};
    for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++) {
        const json_t *c = jx_cond_find(wl, conds[i]);
        if (!c || (i > 0 && strcmp(jx_str(c, "status", ""), "True") != 0))
            continue;
        const char *m = jx_str(c, "message", "");
        buf_printf(out, "  %-13s %s%s%s\n",
                   i == 0   ? "Admitted:"
                   : i == 1 ? "Evicted:"
                            : "Finished:",
                   strcmp(jx_str(c, "status", ""), "True") == 0 ? "yes" : "no", *m ? ": " : "", m);
    }
}

/* Per cluster whose ClusterMetrics report a copy of the job making no progress
 * (status.unschedulableJobs, agent.h): what the worker says and since when. */
static void no_progress(const struct jv_input *in, struct buf *out)
{
    const char *ns = jx_namespace(in->job), *name = jx_name(in->job);
    size_t i, j;
    json_t *cm, *v;
    json_array_foreach(jx_arr(in->cluster_metrics, "items"), i, cm)
    {
        json_array_foreach(jx_arr(cm, "status.unschedulableJobs"), j, v)
        {
            if (!ns || !name || strcmp(jx_str(v, "namespace", ""), ns) != 0 ||
                strcmp(jx_str(v, "name", ""), name) != 0)
                continue;
            const char *m = jx_str(v, "message", "");
            long long pods = jx_int(v, "pods", 0);
            buf_printf(out, "  No progress:  on %s since %s (%s, %lld pod%s): %s%s%s\n",
                       jx_name(cm) ? jx_name(cm) : "?", jx_str(v, "since", "?"),
                       jx_str(v, "cause", "unschedulable"), pods, plural_s(pods),
                       jx_str(v, "reason", "?"), *m ? ": " : "", m);
        }
    }
}

/* A Kubeflow job's (PyTorchJob...) progress: the copy's whole status is returned onto the hub
 * object (no remote-status annotation), its replicaStatuses per role. False when it has none. */
static bool replica_progress(const json_t *job, const char *cluster, struct buf *out)
{
    json_t *rs = jx_obj(job, "status.replicaStatuses");
    if (json_object_size(rs) == 0)
        return false;
    buf_printf(out, "  Worker copy:  on %s:", cluster);
    const char *role, *sep = " ";
    json_t *v;
    json_object_foreach(rs, role, v)
    {
        buf_printf(out, "%s%s active %lld, succeeded %lld, failed %lld", sep, role,
                   jx_int(v, "active", 0), jx_int(v, "succeeded", 0), jx_int(v, "failed", 0));
        sep = "; ";
    }
    buf_puts(out, "\n");
    return true;
}

/* The cluster the job is placed on has no fresh metrics: what the copy reported may be old,
 * and the operator's next step is the worker-lost timeout; say so (a user saw "running"
 * for 5 minutes on a frozen worker with nothing saying why it did not move). */
static void stale_worker_note(const struct jv_input *in, const char *cluster, struct buf *out)
{
    const json_t *items = jx_arr(in->cluster_metrics, "items");
    const json_t *cm = NULL;
    for (size_t i = 0; i < json_array_size(items) && !cm; i++) {
        const char *n = jx_str(json_array_get(items, i), "metadata.name", NULL);
        if (n && strcmp(n, cluster) == 0)
            cm = json_array_get(items, i);
    }
    if (!cm)
        return;
    int64_t stale = in->stale_after_ms > 0 ? in->stale_after_ms : 60000;
    const char *lu = jx_str(cm, "status.lastUpdated", NULL);
    struct timespec ts;
    if (lu && clock_parse_rfc3339(lu, &ts) == 0 &&
        in->now_ms - ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000) <= stale)
        return;
    buf_printf(out,
               "  Worker:       %s: no fresh metrics since %s (unreachable, or its agent stopped): "
               "what its copy reported may be old; the job is placed again once the worker is "
               "lost for --worker-lost-timeout (5m by default)\n",
               cluster, lu ? lu : "ever");
}

static void ours_part(const struct jv_input *in, struct buf *out)
{
    buf_puts(out, "\nkueue-ks\n");
    const char *name;
    const json_t *e = our_check_entry(in, &name);
    const char *em = jx_str(e, "message", "");
    if (e && job_end(in) && strcmp(jx_str(e, "state", "Pending"), "Pending") == 0 && *em)
        /* the check stays Pending to the end (Kueue never runs the hub copy): the message
         * says what happened, the state alone would read as waiting */
        buf_printf(out,
                   "  Check:        %s: %s (state Pending to the end: Kueue never runs the "
                   "hub copy)\n",
                   name, em);
    else if (e)
        buf_printf(out, "  Check:        %s: %s%s%s\n", name, jx_str(e, "state", "Pending"),
                   *em ? ": " : "", em);
    else if (name)
        buf_printf(out,
                   "  Check:        %s: not on the Workload yet (Kueue adds it with the "
                   "quota reservation)\n",
                   name);
    else
        buf_printf(out, "  Check:        no AdmissionCheck with controllerName %s\n",
                   ACC_CONTROLLER_NAME);
    const char *placed = jx_label(in->job, XF_LABEL_CLUSTER);
    const char *by = jx_annotation(in->job, XF_ANN_PLACED_BY);
    if (placed && !by && !xf_placed_cluster(in->job)) {
        /* the user's pin alone: no placement there yet (an unknown or unusable cluster reads
         * as placed otherwise) */
        buf_printf(out,
                   "  Placed on:    not placed; pinned by the user to %s (kubestellar.io/cluster "
                   "label)\n",
                   placed);
        placed = NULL;
    } else if (placed)
        buf_printf(out, "  Placed on:    %s%s\n", placed,
                   by ? "" : " (pinned by the user: kubestellar.io/cluster label)");
    else
        buf_puts(out, "  Placed on:    not placed\n");
    json_t *r = xf_remote_status(in->job);
    if (r)
        buf_printf(out,
                   "  Worker copy:  on %s: active %lld, ready %lld, succeeded %lld, failed %lld\n",
                   jx_str(r, "cluster", "?"), jx_int(r, "active", 0), jx_int(r, "ready", 0),
                   jx_int(r, "succeeded", 0), jx_int(r, "failed", 0));
    else if (!placed || !replica_progress(in->job, placed, out))
        buf_printf(out, "  Worker copy:  %s\n", placed ? "no status reported yet" : "none");
    json_decref(r);
    no_progress(in, out);
    static const char *const done[] = {"Complete", "Failed", "Succeeded"};
    bool finished = false;
    for (size_t i = 0; i < sizeof done / sizeof done[0]; i++)
        if (jx_cond_is_true(in->job, done[i])) {
            buf_printf(out, "  Job:          %s\n", done[i]);
            finished = true;
        }
    if (placed && !finished)
        stale_worker_note(in, placed, out);
}

/* One row per cluster, pod set and resource of the report. */
static void fit_table(const struct explain_report *rp, struct buf *out)
{
    struct jv_table t = {.ncols = 8};
    const char *head[] = {"CLUSTER",
                          "FLAVOR",
                          "FIT",
                          "POD SET",
                          "RESOURCE",
                          "NEEDED/POD",
                          "BEST NODE FREE/ALLOC",
                          "ALL MATCHING NODES FREE/ALLOC"};
    tab_row(&t, head);
    for (size_t i = 0; i < rp->n; i++) {
        const struct explain_cluster *ec = &rp->v[i];
        bool first = true;
        for (size_t p = 0; p < ec->n_ps; p++) {
            const struct explain_podset *ps = &ec->ps[p];
            for (size_t k = 0; k < ps->n_res || (k == 0 && ps->n_res == 0); k++) {
                char need[QTY_STR_MAX] = "", fr[QTY_STR_MAX], al[QTY_STR_MAX];
                char both[2 * QTY_STR_MAX + 8] = "", sum[2 * QTY_STR_MAX + 8] = "";
                const struct explain_res *er = k < ps->n_res ? &ps->res[k] : NULL;
                if (er) {
                    explain_fmt_amount(need, er->name, er->need);
                    if (ps->matching) {
                        snprintf(both, sizeof both, "%s / %s",
                                 explain_fmt_amount(fr, er->name, er->free_max),
                                 explain_fmt_amount(al, er->name, er->alloc_max));
                        snprintf(sum, sizeof sum, "%s / %s",
                                 explain_fmt_amount(fr, er->name, er->free_sum),
                                 explain_fmt_amount(al, er->name, er->alloc_sum));
                    } else if (ps->no_flavor_node) {
                        snprintf(both, sizeof both, "no %s node", ps->no_flavor_node);
                    } else {
                        snprintf(both, sizeof both, "no matching node");
                    }
                }
                const char *row[] = {first ? ec->name : "",
                                     first ? (ps->flavor ? ps->flavor : "-") : "",
                                     first ? explain_fit_name(ec->fit) : "",
                                     k == 0 ? ps->name : "",
                                     er ? er->name : "-",
                                     need,
                                     both,
                                     sum};
                tab_row(&t, row);
                first = false;
            }
        }
    }
    if (rp->n)
        tab_print(&t, out);
    else
        free(t.rows);
}

/* The item of list `list` ({"items":[...]}) named `name`, or NULL (borrowed). */
static const json_t *item_named(const json_t *list, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(jx_arr(list, "items"), i, v)
    {
        if (name && jx_name(v) && strcmp(jx_name(v), name) == 0)
            return v;
    }
    return NULL;
}

/* Why each cluster is not a candidate for the job (excl_explain), parallel to
 * cl; the cluster labels are the ClusterMetrics' own (a worker Secret's labels
 * are not read here). New array; the why strings are owned. */
static struct explain_excl *exclusions(const struct jv_input *in, const struct place_cluster *cl,
                                       size_t nc)
{
    const char *cq_name = jx_str(in->workload, "status.admission.clusterQueue", NULL);
    if (!cq_name)
        cq_name = jx_str(in->local_queue, "spec.clusterQueue", NULL);
    const json_t *cq = item_named(in->cluster_queues, cq_name);
    struct sel *sel = NULL;
    const char *text = NULL, *from = NULL;
    if (clsel_for(in->job, cq, &sel, &text, &from, NULL) < 0)
        sel = NULL; /* the check message says it */
    struct explain_excl *x = xcalloc(nc ? nc : 1, sizeof *x);
    const char *pin = xf_pinned_cluster(in->job);
    for (size_t i = 0; i < nc; i++) {
        if (pin && strcmp(pin, cl[i].name) != 0) { /* the pin is the only candidate */
            x[i].why = xasprintf("not the cluster the job is pinned to (%s, its "
                                 "kubestellar.io/cluster label)",
                                 pin);
            continue;
        }
        const json_t *cm = item_named(in->cluster_metrics, cl[i].name);
        json_t *labels = clsel_cluster_labels(cl[i].name, cm, NULL);
        x[i].why = excl_explain(jx_annotation(in->job, EXCL_ANNOTATION), sel, text, from,
                                cl[i].name, labels, in->now_ms, &x[i].temporary);
        json_decref(labels);
    }
    sel_free(sel);
    return x;
}

/* The last line(s). A Workload Kueue holds is not placed whatever the
 * capacity: Kueue's reason comes first, unless no cluster can ever hold it. */
static void verdict(const struct jv_input *in, const struct explain_report *r, struct buf *out)
{
    const json_t *wl = in->workload;
    const char *end = job_end(in);
    if (end) { /* the verdict is where it ran; the fit, for what it is, after it */
        char *where = ran_on(in);
        buf_printf(out, "\nfinished: %s%s%s\ncapacity now, for a new run: %s\n", end,
                   where ? " on cluster " : "", where ? where : "", r->message);
        free(where);
        return;
    }
    if (jx_cond_is_true(wl, "QuotaReserved")) {
        buf_printf(out, "\n%s\n", r->message);
        return;
    }
    const char *check;
    our_check_entry(in, &check);
    if (wl_rejected_by_check(wl, check)) {
        char *m = wl_rejected_message(NULL);
        buf_printf(out, "\n%s\n%s\n", r->message, m);
        free(m);
        return;
    }
    char *kr = wl_kueue_reason(wl);
    const char *why = kr ? kr : "no quota reserved yet";
    if (r->overall == EXPLAIN_NEVER)
        buf_printf(out, "\n%s\nKueue has not admitted it either: %s\n", r->message, why);
    else
        buf_printf(out,
                   "\nnot placed: Kueue has not admitted it: %s; kueue-ks places a job only once "
                   "Kueue has reserved its quota\ncapacity once admitted: %s\n",
                   why, r->message);
    free(kr);
}

static void fit_part(const struct jv_input *in, struct buf *out)
{
    buf_puts(out, "\nFit per cluster\n");
    if (!in->workload) {
        buf_puts(out, "  (no Workload: nothing to fit)\n");
        return;
    }
    struct place_workload pw;
    struct err e = {0};
    if (place_workload_from_json(in->workload, &pw, &e) < 0) {
        buf_printf(out, "  cannot read the Workload's pod sets: %s\n", e.msg);
        return;
    }
    const json_t *items = jx_arr(in->cluster_metrics, "items");
    size_t n = json_array_size(items), nc = 0;
    struct place_cluster *cl = xcalloc(n ? n : 1, sizeof *cl);
    bool *usable = xcalloc(n ? n : 1, sizeof *usable);
    int64_t stale = in->stale_after_ms > 0 ? in->stale_after_ms : 60000;
    for (size_t i = 0; i < n; i++) {
        if (place_cluster_from_json(json_array_get(items, i), &cl[nc], NULL, NULL) < 0)
            continue;
        usable[nc] = place_cluster_usable(&cl[nc], in->now_ms, stale);
        nc++;
    }
    const json_t *fitems = jx_arr(in->flavors, "items");
    size_t nf = 0, fn = json_array_size(fitems);
    struct vocab_flavor *fl = xcalloc(fn ? fn : 1, sizeof *fl);
    for (size_t i = 0; i < fn; i++)
        if (vocab_flavor_from_json(json_array_get(fitems, i), &fl[nf], NULL) == 0)
            nf++;
    struct explain_excl *excl = exclusions(in, cl, nc);
    struct explain_input ei = {.wl = &pw,
                               .clusters = cl,
                               .n_clusters = nc,
                               .usable = usable,
                               .excluded = excl,
                               .flavors = fl,
                               .n_flavors = nf,
                               .now = true};
    struct explain_report r;
    if (explain_fit(&ei, &r) == 0) {
        fit_table(&r, out);
        buf_puts(out, "  (free: allocatable minus the requests ClusterMetrics reports on the node; "
                      "jobs placed since its last report are not subtracted)\n");
        verdict(in, &r, out);
        explain_report_free(&r);
    }
    for (size_t i = 0; i < nf; i++)
        vocab_flavor_free(&fl[i]);
    free(fl);
    for (size_t i = 0; i < nc; i++) {
        place_cluster_free(&cl[i]);
        free((char *)excl[i].why);
    }
    free(excl);
    free(cl);
    free(usable);
    place_workload_free(&pw);
}

int jv_render(const struct jv_input *in, struct buf *out)
{
    if (!in || !in->job || !out)
        return -EINVAL;
    const char *ns = jx_namespace(in->job) ? jx_namespace(in->job) : "default";
    buf_printf(out, "%s %s/%s (%s)\n\n", jx_str(in->job, "kind", "Job"), ns,
               jx_name(in->job) ? jx_name(in->job) : "?", jx_str(in->job, "apiVersion", "?"));
    kueue_part(in, out);
    if (!in->workload && !jx_label(in->job, "kueue.x-k8s.io/queue-name") &&
        !jx_label(in->job, XF_LABEL_CLUSTER) && !jx_owner_controller(in->job)) {
        /* no Workload will come: no check, no placement, no fit to tell (a new user's job
         * without the label read as "waiting for the reservation"); a job of a parent (a
         * JobSet's) is its parent Workload's, not this case */
        buf_printf(out,
                   "\nnot handled: neither Kueue nor kueue-ks manages a job without a "
                   "kueue.x-k8s.io/queue-name label: it stays on the hub (suspended, or with its "
                   "pods on the hub's own nodes, if any); create it with the label set to a "
                   "LocalQueue of namespace %s (kubectl get localqueues -n %s) to have it queued "
                   "and placed on a worker\n",
                   ns, ns);
        return 0;
    }
    ours_part(in, out);
    fit_part(in, out);
    return 0;
}
