/* explain: per-cluster fit of a workload, with numbers (see explain.h). */
#include "controllers/workload/explain.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/quantity/quantity.h"
#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"
#include "pkg/util/plural.h"

const char *explain_fit_name(enum explain_fit f)
{
    switch (f) {
    case EXPLAIN_FITS_NOW:
        return "fits now";
    case EXPLAIN_FITS_EMPTY:
        return "fits when empty";
    case EXPLAIN_NEVER:
        return "never";
    case EXPLAIN_EXCLUDED:
        return "excluded";
    case EXPLAIN_UNKNOWN:
        break;
    }
    return "unknown";
}

const char *explain_fmt_amount(char *b, const char *res, int64_t milli)
{
    return qty_fmt_amount(b, res, milli);
}

static const struct vocab_flavor *find_flavor(const struct explain_input *in, const char *name)
{
    for (size_t i = 0; i < in->n_flavors; i++)
        if (strcmp(in->flavors[i].name, name) == 0)
            return &in->flavors[i];
    return NULL;
}

/* The flavor a node of an unadmitted pod set is named by: the first (by name)
 * with nodeLabels that the node carries. */
static const struct vocab_flavor *node_flavor(const struct explain_input *in,
                                              const struct place_node *n)
{
    const struct vocab_flavor *best = NULL;
    for (size_t i = 0; i < in->n_flavors; i++) {
        const struct vocab_flavor *f = &in->flavors[i];
        if (f->n_node_labels == 0 ||
            !vocab_labels_match(n->labels, f->node_labels, f->n_node_labels))
            continue;
        if (!best || strcmp(f->name, best->name) < 0)
            best = f;
    }
    return best;
}

static bool tolerated(const struct vocab_taint *t, const struct place_podset *ps,
                      const struct vocab_flavor *const *fl, size_t nfl)
{
    if (vocab_taint_tolerated(t, ps->tolerations, ps->n_tolerations, NULL, 0))
        return true;
    for (size_t f = 0; f < nfl; f++)
        if (fl[f] && vocab_taint_tolerated(t, NULL, 0, fl[f]->tolerations, fl[f]->n_tolerations))
            return true;
    return false;
}

/* Same node rule as placement (placement.h, Feasibility) but the required
 * node affinity. *flavor: the name to show for the node (borrowed). */
static bool node_matches(const struct explain_input *in, const struct place_podset *ps,
                         const struct place_node *n, const char **flavor)
{
    *flavor = NULL;
    if (!n->ready || n->unschedulable)
        return false;
    const struct vocab_flavor *one = NULL;
    const struct vocab_flavor *const *fl = &one;
    size_t nfl = 1;
    const struct vocab_flavor **adm = NULL;
    bool ok = true;
    if (ps->n_flavors > 0) {
        adm = xcalloc(ps->n_flavors, sizeof *adm);
        for (size_t f = 0; f < ps->n_flavors; f++) {
            adm[f] = find_flavor(in, ps->flavors[f]);
            if (!adm[f] ||
                !vocab_labels_match(n->labels, adm[f]->node_labels, adm[f]->n_node_labels))
                ok = false;
        }
        fl = adm;
        nfl = ps->n_flavors;
        *flavor = ps->flavors[0];
    } else {
        one = node_flavor(in, n);
        *flavor = one ? one->name : NULL;
    }
    if (ok && !vocab_labels_match(n->labels, ps->node_selector, ps->n_node_selector))
        ok = false;
    for (size_t t = 0; ok && t < n->n_taints; t++)
        if (!tolerated(&n->taints[t], ps, fl, nfl))
            ok = false;
    free(adm);
    return ok;
}

/* The first admitted flavor of ps that no node of c carries (a copy), or NULL. */
static char *missing_flavor(const struct explain_input *in, const struct place_cluster *c,
                            const struct place_podset *ps)
{
    for (size_t f = 0; f < ps->n_flavors; f++) {
        const struct vocab_flavor *fl = find_flavor(in, ps->flavors[f]);
        size_t i = 0;
        while (fl && i < c->n_nodes &&
               !vocab_labels_match(c->nodes[i].labels, fl->node_labels, fl->n_node_labels))
            i++;
        if (!fl || i == c->n_nodes)
            return xstrdup(ps->flavors[f]);
    }
    return NULL;
}

static void podset_numbers(const struct explain_input *in, const struct place_cluster *c,
                           const struct place_podset *ps, struct explain_podset *out)
{
    out->name = xstrdup(ps->name);
    out->count = ps->count;
    out->affinity =
        affinity_has_required(ps->affinity) ? affinity_required_text(ps->affinity) : NULL;
    out->res = xcalloc(ps->per_pod.n ? ps->per_pod.n : 1, sizeof *out->res);
    for (size_t r = 0; r < ps->per_pod.n; r++) {
        if (strcmp(ps->per_pod.v[r].name, "pods") == 0)
            continue;
        struct explain_res *er = &out->res[out->n_res++];
        er->name = xstrdup(ps->per_pod.v[r].name);
        er->need = ps->per_pod.v[r].milli;
    }
    int64_t best_alloc = -1;
    for (size_t i = 0; i < c->n_nodes; i++) {
        const struct place_node *n = &c->nodes[i];
        const char *fname;
        if (!node_matches(in, ps, n, &fname))
            continue;
        if (!affinity_required_matches(ps->affinity, n->name, n->labels)) {
            out->by_affinity++;
            continue;
        }
        out->matching++;
        int64_t first_alloc = 0;
        for (size_t r = 0; r < out->n_res; r++) {
            struct explain_res *er = &out->res[r];
            int64_t al = place_reslist_get(&n->alloc, er->name);
            int64_t held = in->resv ? place_resv_held(in->resv, c->name, n->name, er->name) : 0;
            int64_t fr = al - place_reslist_get(&n->requested, er->name) - held;
            if (al > er->alloc_max)
                er->alloc_max = al;
            /* the hold as the reader adds it up: the metrics' free (clamped at 0) minus ours */
            int64_t frc = fr > 0 ? fr : 0, unheld = fr + held;
            int64_t shown = (unheld > 0 ? unheld : 0) - frc;
            if (frc > er->free_max || (frc == er->free_max && shown > er->held_max)) {
                er->free_max = frc;
                er->held_max = shown;
            }
            er->alloc_sum += al;
            er->free_sum += fr > 0 ? fr : 0;
            if (r == 0)
                first_alloc = al;
        }
        if (first_alloc > best_alloc) {
            best_alloc = first_alloc;
            free(out->flavor);
            out->flavor = fname ? xstrdup(fname) : NULL;
        }
    }
    if (out->matching == 0)
        out->no_flavor_node = missing_flavor(in, c, ps);
    if (!out->flavor && ps->n_flavors > 0)
        out->flavor = xstrdup(ps->flavors[0]);
}

/* " (flavor)" or "". */
static void flavor_suffix(struct buf *b, const char *flavor)
{
    if (flavor)
        buf_printf(b, " (%s)", flavor);
}

/* "no node of flavor spot (instance=spot), the flavor Kueue reserved the quota in" */
static void no_flavor_clause(struct buf *b, const struct explain_input *in, const char *flavor)
{
    const struct vocab_flavor *f = find_flavor(in, flavor);
    buf_printf(b, "no node of flavor %s (", flavor);
    for (size_t i = 0; f && i < f->n_node_labels; i++)
        buf_printf(b, "%s%s=%s", i ? "," : "", f->node_labels[i].key, f->node_labels[i].value);
    buf_printf(b, "%s), the flavor Kueue reserved the quota in", f ? "" : "no such ResourceFlavor");
}

/* The cluster's clause: what stops the first pod set that does not fit. */
static char *cluster_why(const struct explain_input *in, const struct explain_cluster *ec,
                         const char *unusable)
{
    bool now = in->now;
    struct buf b;
    buf_init(&b, 1024);
    char q1[QTY_STR_MAX], q2[QTY_STR_MAX];
    buf_printf(&b, "%s: ", ec->name);
    if (ec->fit == EXPLAIN_UNKNOWN || ec->fit == EXPLAIN_EXCLUDED) {
        buf_printf(&b, "%s", unusable);
        goto out;
    }
    if (ec->fit == EXPLAIN_FITS_NOW || (ec->fit == EXPLAIN_FITS_EMPTY && !now)) {
        buf_printf(&b, "%s", ec->fit == EXPLAIN_FITS_NOW ? "fits now" : "fits when capacity frees");
        flavor_suffix(&b, ec->n_ps ? ec->ps[0].flavor : NULL);
        goto out;
    }
    for (size_t p = 0; p < ec->n_ps; p++) {
        const struct explain_podset *ps = &ec->ps[p];
        if (ps->matching == 0 && ps->no_flavor_node) {
            no_flavor_clause(&b, in, ps->no_flavor_node);
            goto out;
        }
        if (ps->matching == 0 && ps->by_affinity > 0) {
            buf_printf(&b, "never: no node matches the required node affinity %s of pod set %s",
                       ps->affinity ? ps->affinity : "", ps->name);
            goto out;
        }
        if (ps->matching == 0) {
            buf_printf(&b, "no node matches pod set %s (flavor nodeLabels, nodeSelector, taints)",
                       ps->name);
            goto out;
        }
        for (size_t r = 0; r < ps->n_res; r++) {
            const struct explain_res *er = &ps->res[r];
            if (er->need <= 0)
                continue;
            if (ec->fit == EXPLAIN_NEVER && er->alloc_max < er->need) {
                buf_printf(&b, "largest node %s %s",
                           explain_fmt_amount(q1, er->name, er->alloc_max), er->name);
                flavor_suffix(&b, ps->flavor);
                goto out;
            }
            if (ec->fit == EXPLAIN_FITS_EMPTY && er->free_max < er->need) {
                buf_printf(&b, "%s of %s %s free on a matching node",
                           explain_fmt_amount(q1, er->name, er->free_max),
                           explain_fmt_amount(q2, er->name, er->need), er->name);
                flavor_suffix(&b, ps->flavor);
                if (er->held_max > 0) /* the metrics' own figure is higher: say why */
                    buf_printf(&b, ", after %s %s held for jobs placed there since its last report",
                               explain_fmt_amount(q1, er->name, er->held_max), er->name);
                goto out;
            }
        }
    }
    /* every single pod fits a node: the pod count is what does not */
    if (ec->n_ps) {
        const struct explain_podset *ps = &ec->ps[0];
        buf_printf(&b, "%zu matching node%s cannot hold %s%" PRId64 " pod%s of pod set %s%s",
                   ps->matching, plural_s((long long)ps->matching), ps->count > 1 ? "all " : "",
                   ps->count, plural_s(ps->count), ps->name,
                   ec->fit == EXPLAIN_NEVER ? " even empty" : " now");
    }
out:;
    char *s = xstrdup(buf_str(&b));
    buf_free(&b);
    return s;
}

/* Cluster i of the input into ec; *unusable: why it cannot be judged, or NULL. */
static int eval_one(const struct explain_input *in, size_t i, struct explain_cluster *ec,
                    const char **unusable)
{
    const struct place_cluster *c = &in->clusters[i];
    ec->name = xstrdup(c->name);
    ec->n_ps = in->wl->n_podsets;
    ec->ps = xcalloc(ec->n_ps ? ec->n_ps : 1, sizeof *ec->ps);
    for (size_t p = 0; p < ec->n_ps; p++)
        podset_numbers(in, c, &in->wl->podsets[p], &ec->ps[p]);
    *unusable = NULL;
    if (in->excluded && in->excluded[i].why) {
        *unusable = in->excluded[i].why;
        ec->fit = EXPLAIN_EXCLUDED;
        return 0;
    }
    if (in->usable && !in->usable[i])
        *unusable = "no fresh metrics (stale or unreachable): cannot tell";
    else if (!c->ready)
        *unusable = "not ready";
    if (*unusable) {
        ec->fit = EXPLAIN_UNKNOWN;
        return 0;
    }
    struct place_result pr;
    struct place_opts po = {0};
    if (place_decide(in->wl, c, 1, in->flavors, in->n_flavors, in->resv, &po, &pr) < 0)
        return -EINVAL;
    ec->fit = pr.status == PLACE_OK      ? EXPLAIN_FITS_NOW
              : pr.status == PLACE_NEVER ? EXPLAIN_NEVER
                                         : EXPLAIN_FITS_EMPTY;
    place_result_free(&pr);
    return 0;
}

/* The one-line message: verdict, what each pod set needs, each cluster's clause. */
static char *report_message(const struct explain_input *in, const struct explain_report *out)
{
    struct buf b;
    buf_init(&b, 4096);
    switch (out->overall) {
    case EXPLAIN_FITS_NOW:
        buf_printf(&b, "fits now");
        break;
    case EXPLAIN_FITS_EMPTY:
        buf_printf(&b, in->now ? "waiting for capacity" : "fits when capacity frees");
        break;
    case EXPLAIN_NEVER:
        buf_printf(&b, "never fits");
        break;
    case EXPLAIN_UNKNOWN:
        buf_printf(&b, in->n_clusters ? "no cluster fits among those with fresh metrics"
                                      : "no worker cluster reports metrics yet");
        break;
    case EXPLAIN_EXCLUDED:
        buf_printf(&b, "no cluster is a candidate for the job");
        break;
    }
    char q[QTY_STR_MAX];
    for (size_t p = 0; p < in->wl->n_podsets; p++) {
        const struct place_podset *ps = &in->wl->podsets[p];
        buf_printf(&b, "%s pod set %s needs ", p ? ";" : ":", ps->name);
        if (ps->count != 1)
            buf_printf(&b, "%" PRId64 " pods, ", ps->count);
        size_t k = 0;
        for (size_t r = 0; r < ps->per_pod.n; r++) {
            if (strcmp(ps->per_pod.v[r].name, "pods") == 0)
                continue;
            buf_printf(&b, "%s%s %s", k++ ? ", " : "", ps->per_pod.v[r].name,
                       explain_fmt_amount(q, ps->per_pod.v[r].name, ps->per_pod.v[r].milli));
        }
        buf_printf(&b, "%s", k ? " per pod" : "no resources");
    }
    for (size_t i = 0; i < out->n; i++)
        buf_printf(&b, "; %s", out->v[i].why);
    char *msg = xstrdup(buf_str(&b));
    buf_free(&b);
    return msg;
}

int explain_fit(const struct explain_input *in, struct explain_report *out)
{
    if (!in || !out || !in->wl || (in->n_clusters && !in->clusters))
        return -EINVAL;
    memset(out, 0, sizeof *out);
    out->v = xcalloc(in->n_clusters ? in->n_clusters : 1, sizeof *out->v);
    out->n = in->n_clusters;
    bool any_now = false, any_empty = false, any_unknown = in->n_clusters == 0, any_never = false;
    /* in cluster name order, whatever order the store gave */
    size_t *order = xcalloc(in->n_clusters ? in->n_clusters : 1, sizeof *order);
    for (size_t i = 0; i < in->n_clusters; i++) {
        size_t j = i;
        for (; j > 0 && strcmp(in->clusters[order[j - 1]].name, in->clusters[i].name) > 0; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    for (size_t k = 0; k < in->n_clusters; k++) {
        size_t i = order[k];
        struct explain_cluster *ec = &out->v[k];
        const char *unusable = NULL;
        if (eval_one(in, i, ec, &unusable) < 0) {
            free(order);
            explain_report_free(out);
            return -EINVAL;
        }
        ec->why = cluster_why(in, ec, unusable);
        any_now |= ec->fit == EXPLAIN_FITS_NOW;
        any_empty |= ec->fit == EXPLAIN_FITS_EMPTY;
        any_unknown |= ec->fit == EXPLAIN_UNKNOWN ||
                       (ec->fit == EXPLAIN_EXCLUDED && in->excluded[i].temporary);
        any_never |= ec->fit == EXPLAIN_NEVER;
    }
    free(order);
    /* every cluster outside the job's selector: no cluster was judged, and one labelled to
     * match tomorrow may hold it (placement waits: placement.h) */
    out->overall = any_now       ? EXPLAIN_FITS_NOW
                   : any_empty   ? EXPLAIN_FITS_EMPTY
                   : any_unknown ? EXPLAIN_UNKNOWN
                   : any_never   ? EXPLAIN_NEVER
                                 : EXPLAIN_EXCLUDED;
    out->message = report_message(in, out);
    return 0;
}

void explain_report_free(struct explain_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        struct explain_cluster *ec = &r->v[i];
        for (size_t p = 0; p < ec->n_ps; p++) {
            for (size_t k = 0; k < ec->ps[p].n_res; k++)
                free(ec->ps[p].res[k].name);
            free(ec->ps[p].res);
            free(ec->ps[p].name);
            free(ec->ps[p].flavor);
            free(ec->ps[p].no_flavor_node);
        }
        free(ec->ps);
        free(ec->name);
        free(ec->why);
    }
    free(r->v);
    free(r->message);
    memset(r, 0, sizeof *r);
}
