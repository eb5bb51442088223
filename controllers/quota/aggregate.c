/* aggregate: see aggregate.h. */
#include "controllers/quota/aggregate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/quantity/quantity.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#define PPM           1000000
#define BREAKDOWN_MAX 16384

/* One (resource group, flavor, resource) of the ClusterQueue. */
struct cell {
    char *flavor;
    char *resource;
    const char *node_res; /* borrowed from the alias table or == resource */
    size_t g, fi, ri;
    bool has_current;
    struct qty current;  /* the ClusterQueue's nominalQuota */
    struct qty reserved; /* status.flavorsReservation total */
    struct qty total;    /* sum of the included clusters' contributions */
    struct qty counted;  /* sum of the included clusters' managed requests */
    /* shrink state machine */
    bool has_applied;
    struct qty applied;
    bool pending;
    int64_t pending_since;
    struct qty pending_max;
};

/* A flavor of a resource group: its cells are [first, first + n). */
struct gflavor {
    const char *name; /* borrowed from the first cell */
    size_t first, n;
};

struct group {
    struct gflavor *fl;
    size_t nfl;
};

struct cluster {
    char *name;
    json_t *cm;           /* kept for full recomputes */
    struct qty *contrib;  /* [ncells] */
    struct qty *managed;  /* [ncells]: managedResourceRequests on the nodes counted */
    bool reports_managed; /* every node entry carries managedResourceRequests */
    bool included;        /* contrib and managed are in the totals */
    bool has_lu;
    int64_t lu_ms;
    bool ready;
};

struct flavor {
    struct vocab_flavor f;
    json_t *spec; /* for change detection; may be NULL */
};

struct agg {
    /* config */
    char *default_flavor;
    int64_t scale_ppm;
    struct agg_alias *aliases;
    size_t n_aliases;
    bool subtract_requests, add_back_reserved;
    int64_t stale_after_ms, shrink_delay_ms;
    /* queue */
    bool has_queue;
    struct cell *cells;
    size_t ncells;
    struct group *groups;
    size_t ngroups;
    /* inputs */
    struct flavor *flavors;
    size_t nflavors;
    struct cluster *clusters;
    size_t nclusters;
    /* set by agg_compute: every included cluster reports managedResourceRequests */
    bool add_back_exact;
};

static void qzero(struct qty *q)
{
    *q = qty_from_int(0, QTY_DECIMAL_SI);
}

/* ---- config ------------------------------------------------------------------ */

void agg_cfg_default(struct agg_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->default_flavor = "default-flavor";
    c->scale_ppm = PPM;
    c->subtract_requests = true;
    c->add_back_reserved = true;
    c->stale_after_ms = 60000;
    c->shrink_delay_ms = 60000;
}

int agg_alias_parse(const char *s, struct agg_alias *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    const char *eq = s ? strchr(s, '=') : NULL;
    if (!eq || eq == s || !eq[1] || strchr(eq + 1, '='))
        return err_set(e, -EINVAL,
                       "resource alias \"%s\": want NAME=NODE_RESOURCE, e.g. "
                       "gpu=nvidia.com/gpu",
                       s ? s : "");
    out->name = xstrndup(s, (size_t)(eq - s));
    out->node_name = xstrdup(eq + 1);
    return 0;
}

void agg_alias_free(struct agg_alias *a)
{
    if (!a)
        return;
    FREE_AND_NULL(a->name);
    FREE_AND_NULL(a->node_name);
}

int agg_scale_parse(const char *s, int64_t *ppm, struct err *e)
{
    struct qty q;
    struct qty one = qty_from_int(1, QTY_DECIMAL_SI);
    if (!s || qty_parse(s, &q, NULL) < 0 || qty_sign(&q) <= 0 || qty_cmp(&q, &one) > 0 ||
        q.nano % 1000 != 0)
        return err_set(e, -EINVAL,
                       "quota scale \"%s\": want a number in (0, 1] with at most 6 decimals, "
                       "e.g. 0.9",
                       s ? s : "");
    *ppm = (int64_t)(q.nano / 1000);
    return 0;
}

struct agg *agg_new(const struct agg_cfg *cfg)
{
    struct agg_cfg def;
    if (!cfg) {
        agg_cfg_default(&def);
        cfg = &def;
    }
    struct agg *a = xcalloc(1, sizeof *a);
    a->default_flavor = cfg->default_flavor ? xstrdup(cfg->default_flavor) : NULL;
    a->scale_ppm = cfg->scale_ppm > 0 && cfg->scale_ppm <= PPM ? cfg->scale_ppm : PPM;
    a->n_aliases = cfg->n_aliases;
    a->aliases = xcalloc(cfg->n_aliases ? cfg->n_aliases : 1, sizeof *a->aliases);
    for (size_t i = 0; i < cfg->n_aliases; i++) {
        a->aliases[i].name = xstrdup(cfg->aliases[i].name);
        a->aliases[i].node_name = xstrdup(cfg->aliases[i].node_name);
    }
    a->subtract_requests = cfg->subtract_requests;
    a->add_back_reserved = cfg->add_back_reserved;
    a->stale_after_ms = cfg->stale_after_ms;
    a->shrink_delay_ms = cfg->shrink_delay_ms;
    return a;
}

static void cells_free(struct cell *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].flavor);
        free(c[i].resource);
    }
    free(c);
}

static void groups_free(struct group *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(g[i].fl);
    free(g);
}

void agg_free(struct agg *a)
{
    if (!a)
        return;
    free(a->default_flavor);
    for (size_t i = 0; i < a->n_aliases; i++)
        agg_alias_free(&a->aliases[i]);
    free(a->aliases);
    cells_free(a->cells, a->ncells);
    groups_free(a->groups, a->ngroups);
    for (size_t i = 0; i < a->nflavors; i++) {
        vocab_flavor_free(&a->flavors[i].f);
        json_decref(a->flavors[i].spec);
    }
    free(a->flavors);
    for (size_t i = 0; i < a->nclusters; i++) {
        free(a->clusters[i].name);
        json_decref(a->clusters[i].cm);
        free(a->clusters[i].contrib);
        free(a->clusters[i].managed);
    }
    free(a->clusters);
    free(a);
}

static const char *alias_of(const struct agg *a, const char *res)
{
    for (size_t i = 0; i < a->n_aliases; i++)
        if (strcmp(a->aliases[i].name, res) == 0)
            return a->aliases[i].node_name;
    return res;
}

static const struct vocab_flavor *flavor_get(const struct agg *a, const char *name)
{
    for (size_t i = 0; i < a->nflavors; i++)
        if (strcmp(a->flavors[i].f.name, name) == 0)
            return &a->flavors[i].f;
    return NULL;
}

/* ---- contributions ------------------------------------------------------------ */

/* Every blocking taint of the node is tolerated by flavor f (NULL: no tolerations)
 * or is one of f's own nodeTaints. */
static bool flavor_tolerates(const struct vocab_flavor *f, const struct vocab_taint *t, size_t nt)
{
    for (size_t i = 0; i < nt; i++) {
        if (vocab_taint_tolerated(&t[i], f ? f->tolerations : NULL, f ? f->n_tolerations : 0, NULL,
                                  0))
            continue;
        bool own = false;
        for (size_t k = 0; f && k < f->n_node_taints; k++) {
            const struct vocab_taint *o = &f->node_taints[k];
            if (strcmp(o->key, t[i].key) == 0 && strcmp(o->value, t[i].value) == 0 &&
                strcmp(o->effect, t[i].effect) == 0)
                own = true;
        }
        if (!own)
            return false;
    }
    return true;
}

/* The flavor index in group g that node counts for, or -1. */
static int pick_flavor(const struct agg *a, const struct group *g, const json_t *labels,
                       const struct vocab_taint *t, size_t nt)
{
    for (size_t f = 0; f < g->nfl; f++) {
        const struct vocab_flavor *pf = flavor_get(a, g->fl[f].name);
        if (!pf || pf->n_node_labels == 0)
            continue;
        if (vocab_labels_match(labels, pf->node_labels, pf->n_node_labels) &&
            flavor_tolerates(pf, t, nt))
            return (int)f;
    }
    if (!a->default_flavor)
        return -1;
    for (size_t f = 0; f < g->nfl; f++) {
        if (strcmp(g->fl[f].name, a->default_flavor) != 0)
            continue;
        if (flavor_tolerates(flavor_get(a, g->fl[f].name), t, nt))
            return (int)f;
        return -1;
    }
    return -1;
}

/* Amount of one resource of one node; 1 = present (in *out), 0 = absent,
 * -1 = bad (warning recorded). */
static int node_amount(const json_t *map, const char *field, const char *res, const char *cl,
                       const char *node, struct qty *out, struct vocab_warnings *w)
{
    const json_t *v = json_object_get(map, res);
    if (!v || json_is_null(v))
        return 0;
    struct err e = {0};
    if (qty_parse_json(v, out, &e) < 0) {
        vocab_warnings_add(w, "cluster %s: node %s: %s.%s: %s (skipped)", cl, node, field, res,
                           e.msg);
        return -1;
    }
    if (qty_sign(out) < 0) {
        vocab_warnings_add(w, "cluster %s: node %s: %s.%s: negative (skipped)", cl, node, field,
                           res);
        return -1;
    }
    int64_t m;
    if (qty_milli_value(out, &m, NULL) < 0) {
        vocab_warnings_add(w, "cluster %s: node %s: %s.%s: implausibly large (skipped)", cl, node,
                           field, res);
        return -1;
    }
    return 1;
}

static bool map_ok(const json_t *v)
{
    return !v || json_is_null(v) || json_is_object(v);
}

/* One node of status.nodes[], its maps as read (borrowed). */
struct node_maps {
    const char *name;
    const json_t *labels, *alloc, *req, *mreq; /* mreq NULL: not reported */
};

/* Reads status.nodes[j] of cluster c into *nm; false when the node is skipped
 * (warning recorded). A node without managedResourceRequests marks the
 * cluster as not reporting them. */
static bool node_read(struct cluster *c, size_t j, const json_t *n, struct node_maps *nm,
                      struct vocab_warnings *w)
{
    nm->name = json_string_value(json_object_get(n, "name"));
    if (!json_is_object(n) || !nm->name || !nm->name[0]) {
        vocab_warnings_add(w, "cluster %s: status.nodes[%zu]: no name (node skipped)", c->name, j);
        return false;
    }
    nm->labels = json_object_get(n, "labels");
    nm->alloc = json_object_get(n, "allocatableResources");
    nm->req = json_object_get(n, "allocatedResourceRequests");
    nm->mreq = json_object_get(n, "managedResourceRequests");
    bool bad = !map_ok(nm->labels) || !map_ok(nm->alloc) || !map_ok(nm->req);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)nm->labels, k, v) if (!json_is_string(v)) bad = true;
    if (bad) {
        vocab_warnings_add(w,
                           "cluster %s: node %s: labels/allocatableResources/"
                           "allocatedResourceRequests malformed (node skipped)",
                           c->name, nm->name);
        return false;
    }
    if (!json_is_object(nm->mreq)) {
        /* An agent from before the field (or another producer): the
         * add-back cannot be exact for this cluster (see cell_target). */
        if (nm->mreq && !json_is_null(nm->mreq))
            vocab_warnings_add(w, "cluster %s: node %s: managedResourceRequests: not an object",
                               c->name, nm->name);
        c->reports_managed = false;
        nm->mreq = NULL;
    }
    return true;
}

/* Adds node nm's amount of cell ci (allocatable, less requests when
 * subtract_requests) to cluster c's contribution, and its managed requests. */
static void cell_add(const struct agg *a, struct cluster *c, size_t ci, const struct node_maps *nm,
                     struct vocab_warnings *w)
{
    const struct cell *cell = &a->cells[ci];
    struct qty al, rq, avail;
    if (node_amount(nm->alloc, "allocatableResources", cell->node_res, c->name, nm->name, &al, w) <=
        0)
        return;
    avail = al;
    if (a->subtract_requests) {
        int rc = node_amount(nm->req, "allocatedResourceRequests", cell->node_res, c->name,
                             nm->name, &rq, w);
        if (rc < 0)
            return;
        if (rc > 0 && qty_sub(&al, &rq, &avail, NULL) < 0)
            return;
        if (qty_sign(&avail) < 0)
            qzero(&avail);
    }
    struct qty sum;
    if (qty_add(&c->contrib[ci], &avail, &sum, NULL) < 0) {
        vocab_warnings_add(w, "cluster %s: node %s: %s: sum overflows (skipped)", c->name, nm->name,
                           cell->node_res);
        return;
    }
    c->contrib[ci] = sum;
    if (a->subtract_requests && nm->mreq &&
        node_amount(nm->mreq, "managedResourceRequests", cell->node_res, c->name, nm->name, &rq,
                    w) > 0 &&
        qty_add(&c->managed[ci], &rq, &sum, NULL) == 0)
        c->managed[ci] = sum;
}

/* Compute cluster c's contribution from its kept object: each ready,
 * schedulable node counts, in each group, for the flavor it matches. */
static void contrib_compute(const struct agg *a, struct cluster *c, struct vocab_warnings *w)
{
    for (size_t i = 0; i < a->ncells; i++) {
        qzero(&c->contrib[i]);
        qzero(&c->managed[i]);
    }
    c->reports_managed = true;
    const json_t *nodes = json_object_get(json_object_get(c->cm, "status"), "nodes");
    size_t j;
    const json_t *n;
    json_array_foreach(nodes, j, n)
    {
        struct node_maps nm;
        if (!node_read(c, j, n, &nm, w))
            continue;
        if (json_is_false(json_object_get(n, "ready")) ||
            json_is_true(json_object_get(n, "unschedulable")))
            continue;
        struct vocab_taint *taints = NULL;
        size_t nt = 0;
        struct err e = {0};
        if (vocab_taints_from_json(json_object_get(n, "taints"), "taints", &taints, &nt, &e) < 0) {
            vocab_warnings_add(w, "cluster %s: node %s: %s (node skipped)", c->name, nm.name,
                               e.msg);
            continue;
        }
        for (size_t g = 0; g < a->ngroups; g++) {
            int f = pick_flavor(a, &a->groups[g], nm.labels, taints, nt);
            if (f < 0)
                continue;
            const struct gflavor *gf = &a->groups[g].fl[f];
            for (size_t ci = gf->first; ci < gf->first + gf->n; ci++)
                cell_add(a, c, ci, &nm, w);
        }
        vocab_taints_free(taints, nt);
    }
}

/* Add (sign > 0) or remove one contribution to/from one total. */
static void total_apply(struct qty *total, struct qty *part, int sign)
{
    struct qty r;
    if (sign > 0) {
        if (qty_add(total, part, &r, NULL) < 0) {
            /* Keep the invariant totals == sum of included contributions. */
            qzero(part);
            return;
        }
    } else if (qty_sub(total, part, &r, NULL) < 0) {
        return; /* cannot happen: the contribution was added exactly */
    }
    *total = r;
}

/* Add (sign > 0) or remove the cluster's contribution to/from the totals. */
static void totals_apply(struct agg *a, struct cluster *c, int sign)
{
    for (size_t i = 0; i < a->ncells; i++) {
        total_apply(&a->cells[i].total, &c->contrib[i], sign);
        total_apply(&a->cells[i].counted, &c->managed[i], sign);
    }
}

void agg_recompute_all(struct agg *a)
{
    for (size_t i = 0; i < a->ncells; i++) {
        qzero(&a->cells[i].total);
        qzero(&a->cells[i].counted);
    }
    for (size_t k = 0; k < a->nclusters; k++) {
        struct cluster *c = &a->clusters[k];
        c->contrib = xrealloc(c->contrib, (a->ncells ? a->ncells : 1) * sizeof *c->contrib);
        c->managed = xrealloc(c->managed, (a->ncells ? a->ncells : 1) * sizeof *c->managed);
        contrib_compute(a, c, NULL);
        if (c->included)
            totals_apply(a, c, +1);
    }
}

static struct cluster *cluster_find(struct agg *a, const char *name)
{
    for (size_t i = 0; i < a->nclusters; i++)
        if (strcmp(a->clusters[i].name, name) == 0)
            return &a->clusters[i];
    return NULL;
}

int agg_update_cluster(struct agg *a, const json_t *cm, struct vocab_warnings *w, struct err *e)
{
    const char *name = json_string_value(json_object_get(json_object_get(cm, "metadata"), "name"));
    if (!json_is_object(cm) || !name || !name[0])
        return err_set(e, -EINVAL, "ClusterMetrics: missing metadata.name");
    const json_t *st = json_object_get(cm, "status");
    const json_t *nodes = json_object_get(st, "nodes");
    if (!map_ok(st) || (nodes && !json_is_null(nodes) && !json_is_array(nodes)))
        return err_set(e, -EINVAL,
                       "ClusterMetrics %s: status.nodes is not an array (previous data kept)",
                       name);
    struct cluster *c = cluster_find(a, name);
    if (!c) {
        /* kept sorted by name: the quota-source breakdown lists them in this order, which must
         * not depend on the order the ClusterMetrics arrived in (stores iterate in hash order) */
        size_t at = 0;
        while (at < a->nclusters && strcmp(a->clusters[at].name, name) < 0)
            at++;
        a->clusters = xrealloc(a->clusters, (a->nclusters + 1) * sizeof *a->clusters);
        memmove(&a->clusters[at + 1], &a->clusters[at], (a->nclusters - at) * sizeof *a->clusters);
        a->nclusters++;
        c = &a->clusters[at];
        memset(c, 0, sizeof *c);
        c->name = xstrdup(name);
        c->contrib = xcalloc(a->ncells ? a->ncells : 1, sizeof *c->contrib);
        c->managed = xcalloc(a->ncells ? a->ncells : 1, sizeof *c->managed);
        for (size_t i = 0; i < a->ncells; i++) {
            qzero(&c->contrib[i]);
            qzero(&c->managed[i]);
        }
    }
    bool was = c->included;
    if (was)
        totals_apply(a, c, -1);
    json_decref(c->cm);
    c->cm = json_incref((json_t *)cm);
    c->has_lu = false;
    const char *lu = json_string_value(json_object_get(st, "lastUpdated"));
    struct timespec ts;
    if (lu && clock_parse_rfc3339(lu, &ts) == 0) {
        c->has_lu = true;
        c->lu_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    } else if (lu) {
        vocab_warnings_add(w, "cluster %s: status.lastUpdated: not an RFC 3339 time", name);
    }
    /* No status yet (its producer's first status write pending) is not a
     * cluster with 0 nodes: it is not counted until it reports. */
    c->ready = vocab_status_reported(st);
    size_t i;
    const json_t *cond;
    json_array_foreach(json_object_get(st, "conditions"), i, cond)
    {
        const char *type = json_string_value(json_object_get(cond, "type"));
        const char *status = json_string_value(json_object_get(cond, "status"));
        if (type && status && strcmp(type, "Ready") == 0 && strcmp(status, "False") == 0)
            c->ready = false;
    }
    contrib_compute(a, c, w);
    if (was)
        totals_apply(a, c, +1);
    return 0;
}

void agg_remove_cluster(struct agg *a, const char *name)
{
    struct cluster *c = cluster_find(a, name);
    if (!c)
        return;
    if (c->included)
        totals_apply(a, c, -1);
    free(c->name);
    json_decref(c->cm);
    free(c->contrib);
    free(c->managed);
    size_t idx = (size_t)(c - a->clusters);
    memmove(c, c + 1, (a->nclusters - idx - 1) * sizeof *c);
    a->nclusters--;
}

/* ---- flavors -------------------------------------------------------------------- */

static bool flavor_used(const struct agg *a, const char *name)
{
    for (size_t i = 0; i < a->ncells; i++)
        if (strcmp(a->cells[i].flavor, name) == 0)
            return true;
    return false;
}

int agg_set_flavor(struct agg *a, const json_t *rf, struct err *e)
{
    struct vocab_flavor f;
    int rc = vocab_flavor_from_json(rf, &f, e);
    if (rc < 0)
        return rc;
    const json_t *spec = json_object_get(rf, "spec");
    struct flavor *slot = NULL;
    for (size_t i = 0; i < a->nflavors; i++)
        if (strcmp(a->flavors[i].f.name, f.name) == 0)
            slot = &a->flavors[i];
    if (slot) {
        bool same = (!slot->spec && !spec) || (slot->spec && spec && json_equal(slot->spec, spec));
        if (same) {
            vocab_flavor_free(&f);
            return 0;
        }
        vocab_flavor_free(&slot->f);
        json_decref(slot->spec);
    } else {
        a->flavors = xrealloc(a->flavors, (a->nflavors + 1) * sizeof *a->flavors);
        slot = &a->flavors[a->nflavors++];
    }
    slot->f = f;
    slot->spec = spec ? jx_deep_copy(spec) : NULL;
    if (flavor_used(a, f.name))
        agg_recompute_all(a);
    return 0;
}

void agg_remove_flavor(struct agg *a, const char *name)
{
    for (size_t i = 0; i < a->nflavors; i++) {
        if (strcmp(a->flavors[i].f.name, name) != 0)
            continue;
        vocab_flavor_free(&a->flavors[i].f);
        json_decref(a->flavors[i].spec);
        memmove(&a->flavors[i], &a->flavors[i + 1], (a->nflavors - i - 1) * sizeof *a->flavors);
        a->nflavors--;
        if (flavor_used(a, name))
            agg_recompute_all(a);
        return;
    }
}

/* ---- the queue -------------------------------------------------------------------- */

static struct cell *cell_find(struct cell *cells, size_t n, const char *flavor, const char *res)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cells[i].flavor, flavor) == 0 && strcmp(cells[i].resource, res) == 0)
            return &cells[i];
    return NULL;
}

/* Parse spec.resourceGroups into cells + groups. 0 or -EINVAL. */
/* Cell (flavor fname, resource rname, its spec `res`) at resourceGroups[at[0]]
 * .flavors[at[1]].resources[at[2]], all sums zero, the current nominal quota read. */
static void cell_init(const struct agg *a, struct cell *c, const char *fname, const char *rname,
                      const json_t *res, const size_t at[3])
{
    memset(c, 0, sizeof *c);
    c->flavor = xstrdup(fname);
    c->resource = xstrdup(rname);
    c->node_res = alias_of(a, c->resource);
    c->g = at[0];
    c->fi = at[1];
    c->ri = at[2];
    qzero(&c->total);
    qzero(&c->counted);
    qzero(&c->reserved);
    qzero(&c->applied);
    qzero(&c->pending_max);
    const json_t *nq = json_object_get(res, "nominalQuota");
    c->has_current = nq && qty_parse_json(nq, &c->current, NULL) == 0;
    if (!c->has_current)
        qzero(&c->current);
}

static int parse_groups(const struct agg *a, const json_t *rgs, struct cell **cells_out,
                        size_t *ncells_out, struct group **groups_out, size_t *ngroups_out,
                        struct err *e)
{
    struct cell *cells = NULL;
    size_t ncells = 0;
    size_t ng = json_array_size(rgs);
    struct group *groups = xcalloc(ng ? ng : 1, sizeof *groups);
    if (rgs && !json_is_array(rgs)) {
        free(groups);
        return err_set(e, -EINVAL, "spec.resourceGroups: not an array");
    }
    for (size_t g = 0; g < ng; g++) {
        const json_t *fls = json_object_get(json_array_get(rgs, g), "flavors");
        if (!json_is_array(fls)) {
            err_set(e, -EINVAL, "spec.resourceGroups[%zu].flavors: not an array", g);
            goto fail;
        }
        size_t nf = json_array_size(fls);
        groups[g].fl = xcalloc(nf ? nf : 1, sizeof *groups[g].fl);
        groups[g].nfl = nf;
        for (size_t f = 0; f < nf; f++) {
            const json_t *fl = json_array_get(fls, f);
            const char *fname = json_string_value(json_object_get(fl, "name"));
            const json_t *ress = json_object_get(fl, "resources");
            if (!fname || !fname[0] || !json_is_array(ress)) {
                err_set(e, -EINVAL,
                        "spec.resourceGroups[%zu].flavors[%zu]: needs a name and resources", g, f);
                goto fail;
            }
            groups[g].fl[f].first = ncells;
            size_t nr = json_array_size(ress);
            cells = xrealloc(cells, (ncells + nr + 1) * sizeof *cells);
            for (size_t r = 0; r < nr; r++) {
                const json_t *res = json_array_get(ress, r);
                const char *rname = json_string_value(json_object_get(res, "name"));
                if (!rname || !rname[0]) {
                    err_set(e, -EINVAL,
                            "spec.resourceGroups[%zu].flavors[%zu].resources[%zu]: no name", g, f,
                            r);
                    goto fail;
                }
                cell_init(a, &cells[ncells++], fname, rname, res, (size_t[]){g, f, r});
            }
            groups[g].fl[f].n = nr;
            groups[g].fl[f].name = nr ? cells[groups[g].fl[f].first].flavor : NULL;
        }
    }
    /* A flavor without resources has no cell to borrow its name from: refuse it. */
    for (size_t g = 0; g < ng; g++)
        for (size_t f = 0; f < groups[g].nfl; f++)
            if (!groups[g].fl[f].name) {
                err_set(e, -EINVAL, "spec.resourceGroups[%zu].flavors[%zu]: no resources", g, f);
                goto fail;
            }
    *cells_out = cells;
    *ncells_out = ncells;
    *groups_out = groups;
    *ngroups_out = ng;
    return 0;
fail:
    cells_free(cells, ncells);
    groups_free(groups, ng);
    return -EINVAL;
}

int agg_set_queue(struct agg *a, const json_t *cq, struct err *e)
{
    if (!json_is_object(cq))
        return err_set(e, -EINVAL, "ClusterQueue: not an object");
    struct cell *cells = NULL;
    struct group *groups = NULL;
    size_t ncells = 0, ngroups = 0;
    int rc = parse_groups(a, json_object_get(json_object_get(cq, "spec"), "resourceGroups"), &cells,
                          &ncells, &groups, &ngroups, e);
    if (rc < 0) {
        const char *name =
            json_string_value(json_object_get(json_object_get(cq, "metadata"), "name"));
        err_prefix(e, "ClusterQueue %s", name ? name : "?");
        return rc;
    }
    /* Reserved usage: status.flavorsReservation[].resources[].total. */
    size_t i, k;
    const json_t *fr, *r;
    json_array_foreach(json_object_get(json_object_get(cq, "status"), "flavorsReservation"), i, fr)
    {
        const char *fname = json_string_value(json_object_get(fr, "name"));
        json_array_foreach(json_object_get(fr, "resources"), k, r)
        {
            const char *rname = json_string_value(json_object_get(r, "name"));
            struct cell *c = fname && rname ? cell_find(cells, ncells, fname, rname) : NULL;
            struct qty q;
            if (c && qty_parse_json(json_object_get(r, "total"), &q, NULL) == 0 &&
                qty_sign(&q) >= 0)
                c->reserved = q;
        }
    }
    bool same = a->has_queue && ncells == a->ncells && ngroups == a->ngroups;
    for (size_t c = 0; same && c < ncells; c++)
        same = cells[c].g == a->cells[c].g && cells[c].fi == a->cells[c].fi &&
               strcmp(cells[c].flavor, a->cells[c].flavor) == 0 &&
               strcmp(cells[c].resource, a->cells[c].resource) == 0;
    if (same) {
        for (size_t c = 0; c < ncells; c++) {
            a->cells[c].has_current = cells[c].has_current;
            a->cells[c].current = cells[c].current;
            a->cells[c].reserved = cells[c].reserved;
            a->cells[c].ri = cells[c].ri;
        }
        cells_free(cells, ncells);
        groups_free(groups, ngroups);
        return 0;
    }
    /* New structure: carry the shrink state of cells that remain, recompute all. */
    for (size_t c = 0; c < ncells; c++) {
        struct cell *old = a->has_queue
                               ? cell_find(a->cells, a->ncells, cells[c].flavor, cells[c].resource)
                               : NULL;
        if (!old)
            continue;
        cells[c].has_applied = old->has_applied;
        cells[c].applied = old->applied;
        cells[c].pending = old->pending;
        cells[c].pending_since = old->pending_since;
        cells[c].pending_max = old->pending_max;
    }
    cells_free(a->cells, a->ncells);
    groups_free(a->groups, a->ngroups);
    a->cells = cells;
    a->ncells = ncells;
    a->groups = groups;
    a->ngroups = ngroups;
    a->has_queue = true;
    agg_recompute_all(a);
    return 0;
}

/* ---- compute -------------------------------------------------------------------- */

void agg_result_free(struct agg_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_changes; i++) {
        free(r->changes[i].flavor);
        free(r->changes[i].resource);
        free(r->changes[i].value);
    }
    free(r->changes);
    free(r->breakdown);
    free(r->left_out);
    vocab_warnings_free(&r->warnings);
    memset(r, 0, sizeof *r);
}

static const char *qfmt(const struct qty *q, char *b, size_t n)
{
    char tmp[QTY_STR_MAX];
    snprintf(b, n, "%s", qty_fmt(q, tmp));
    return b;
}

/* The printed form must not depend on the order clusters were added in (a sum
 * keeps its first addend's format): bytes print in binary SI, the rest in
 * decimal SI. */
static void normalize_fmt(const char *resource, struct qty *q)
{
    bool bytes = strcmp(resource, "memory") == 0 || strcmp(resource, "ephemeral-storage") == 0 ||
                 strncmp(resource, "hugepages-", 10) == 0;
    q->format = bytes ? QTY_BINARY_SI : QTY_DECIMAL_SI;
}

static bool cluster_fresh(const struct agg *a, const struct cluster *c, int64_t now_ms)
{
    if (!c->ready)
        return false;
    if (!c->has_lu)
        return true;
    return now_ms - c->lu_ms <= a->stale_after_ms;
}

static int64_t min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

/* What of the cell's reservation is added back: all of it, or, when every
 * included cluster reports managedResourceRequests, only what those count
 * (a reservation whose pods are not yet reported is free capacity in the
 * workers' numbers already: adding it back would overshoot). */
static struct qty cell_add_back(const struct agg *a, const struct cell *c)
{
    if (a->add_back_exact && qty_cmp(&c->counted, &c->reserved) < 0)
        return c->counted;
    return c->reserved;
}

/* The target value of a cell: scale * total [+ add-back], never below reserved. */
static void cell_target(const struct agg *a, const struct cell *c, struct qty *out)
{
    struct qty t = c->total;
    if (a->scale_ppm != PPM) {
        struct qty s;
        struct qty factor = {.nano = (__int128)a->scale_ppm * 1000, .format = QTY_DECIMAL_SI};
        if (qty_scale(&c->total, &factor, &s, NULL) == 0)
            t = s;
    }
    if (a->subtract_requests && a->add_back_reserved) {
        struct qty s;
        struct qty back = cell_add_back(a, c);
        if (qty_add(&t, &back, &s, NULL) == 0)
            t = s;
    }
    if (qty_cmp(&t, &c->reserved) < 0)
        t = c->reserved;
    normalize_fmt(c->resource, &t);
    *out = t;
}

/* Step the shrink state machine of cell c to now; returns the next time it
 * needs a step (INT64_MAX when none). */
static int64_t cell_step(const struct agg *a, struct cell *c, const struct qty *target,
                         int64_t now_ms)
{
    if (!c->has_applied) {
        c->has_applied = true;
        c->applied = c->has_current ? c->current : *target;
        c->pending = false;
    }
    if (qty_cmp(target, &c->applied) >= 0) {
        c->applied = *target;
        c->pending = false;
        return INT64_MAX;
    }
    if (!c->pending) {
        c->pending = true;
        c->pending_since = now_ms;
        c->pending_max = *target;
    } else if (qty_cmp(target, &c->pending_max) > 0) {
        c->pending_max = *target;
    }
    if (now_ms - c->pending_since >= a->shrink_delay_ms) {
        c->applied = c->pending_max;
        c->pending = false;
        if (qty_cmp(target, &c->applied) < 0) {
            /* Still lower than what was just applied: a new window starts now. */
            c->pending = true;
            c->pending_since = now_ms;
            c->pending_max = *target;
        }
    }
    return c->pending ? c->pending_since + a->shrink_delay_ms : INT64_MAX;
}

/* The clusters left out of the totals (not fresh: stale, missing or not ready), "a,b"; NULL
 * when none. New string. */
static char *left_out_names(const struct agg *a)
{
    struct buf b;
    buf_init(&b, 128);
    for (size_t k = 0; k < a->nclusters; k++)
        if (!a->clusters[k].included)
            buf_printf(&b, "%s%s", b.len ? "," : "", a->clusters[k].name);
    if (!b.len) {
        buf_free(&b);
        return NULL;
    }
    return buf_detach(&b);
}

static void breakdown_build(const struct agg *a, int64_t now_ms, const char *left_out,
                            struct buf *b)
{
    char q[64];
    for (size_t i = 0; i < a->ncells; i++) {
        const struct cell *c = &a->cells[i];
        buf_printf(b, "%s%s/%s=%s:", i ? "; " : "", c->flavor, c->resource,
                   qfmt(&c->applied, q, sizeof q));
        size_t shown = 0;
        for (size_t k = 0; k < a->nclusters; k++) {
            const struct cluster *cl = &a->clusters[k];
            if (!cl->included)
                continue;
            struct qty v = cl->contrib[i];
            normalize_fmt(c->resource, &v);
            buf_printf(b, " %s=%s", cl->name, qfmt(&v, q, sizeof q));
            shown++;
        }
        if (!shown)
            buf_puts(b, " no clusters");
        if (qty_sign(&c->reserved) > 0)
            buf_printf(b, " reserved=%s", qfmt(&c->reserved, q, sizeof q));
        struct qty back = cell_add_back(a, c), unreported;
        if (a->subtract_requests && a->add_back_reserved &&
            qty_sub(&c->reserved, &back, &unreported, NULL) == 0 && qty_sign(&unreported) > 0) {
            normalize_fmt(c->resource, &unreported);
            buf_printf(b, " not-yet-reported=%s", qfmt(&unreported, q, sizeof q));
        }
        if (c->pending)
            buf_printf(b, " shrinking-since=%" PRId64 "s-ago", (now_ms - c->pending_since) / 1000);
    }
    if (left_out)
        buf_printf(b, "; stale: %s", left_out);
    if (a->scale_ppm != PPM)
        buf_printf(b, "; scale=%" PRId64 "ppm", a->scale_ppm);
}

int agg_compute(struct agg *a, int64_t now_ms, struct agg_result *out)
{
    memset(out, 0, sizeof *out);
    out->next_check_ms = INT64_MAX;
    if (!a->has_queue)
        return -EINVAL;
    bool exact = true;
    for (size_t k = 0; k < a->nclusters; k++) {
        struct cluster *c = &a->clusters[k];
        bool fresh = cluster_fresh(a, c, now_ms);
        if (fresh && !c->included)
            totals_apply(a, c, +1);
        else if (!fresh && c->included)
            totals_apply(a, c, -1);
        c->included = fresh;
        if (fresh && !c->reports_managed)
            exact = false;
        if (fresh && c->has_lu)
            out->next_check_ms = min64(out->next_check_ms, c->lu_ms + a->stale_after_ms + 1);
    }
    for (size_t g = 0; g < a->ngroups; g++)
        for (size_t f = 0; f < a->groups[g].nfl; f++) {
            const char *name = a->groups[g].fl[f].name;
            bool is_default = a->default_flavor && strcmp(name, a->default_flavor) == 0;
            const struct vocab_flavor *pf = flavor_get(a, name);
            if (!pf && !is_default)
                vocab_warnings_add(&out->warnings,
                                   "flavor %s: no such ResourceFlavor: its nodes cannot be "
                                   "identified, its quota counts no node",
                                   name);
            else if (pf && pf->n_node_labels == 0 && !is_default)
                vocab_warnings_add(&out->warnings,
                                   "flavor %s has no nodeLabels and is not the default flavor "
                                   "(%s): its quota counts no node",
                                   name, a->default_flavor ? a->default_flavor : "none");
        }
    a->add_back_exact = exact;
    out->changes = xcalloc(a->ncells ? a->ncells : 1, sizeof *out->changes);
    for (size_t i = 0; i < a->ncells; i++) {
        struct cell *c = &a->cells[i];
        struct qty target;
        cell_target(a, c, &target);
        out->next_check_ms = min64(out->next_check_ms, cell_step(a, c, &target, now_ms));
        if (c->has_current && qty_cmp(&c->applied, &c->current) == 0)
            continue;
        char q[64];
        struct agg_change *ch = &out->changes[out->n_changes++];
        ch->flavor = xstrdup(c->flavor);
        ch->resource = xstrdup(c->resource);
        ch->value = xstrdup(qfmt(&c->applied, q, sizeof q));
        ch->group = c->g;
        ch->flavor_idx = c->fi;
        ch->resource_idx = c->ri;
    }
    out->left_out = left_out_names(a);
    struct buf b;
    buf_init(&b, BREAKDOWN_MAX);
    breakdown_build(a, now_ms, out->left_out, &b);
    if (b.len + 32 >= BREAKDOWN_MAX)
        buf_puts(&b, " (truncated)");
    out->breakdown = buf_detach(&b);
    return 0;
}

json_t *agg_build_patch(const json_t *cq, const struct agg_result *r)
{
    if (!r || r->n_changes == 0)
        return NULL;
    json_t *rgs = jx_deep_copy(json_object_get(json_object_get(cq, "spec"), "resourceGroups"));
    if (!rgs)
        return NULL;
    for (size_t i = 0; i < r->n_changes; i++) {
        const struct agg_change *ch = &r->changes[i];
        json_t *fl = json_array_get(json_object_get(json_array_get(rgs, ch->group), "flavors"),
                                    ch->flavor_idx);
        json_t *res = json_array_get(json_object_get(fl, "resources"), ch->resource_idx);
        if (!json_is_object(res))
            continue;
        json_object_set_new(res, "nominalQuota", json_string(ch->value));
    }
    json_t *md = json_object();
    const char *rv =
        json_string_value(json_object_get(json_object_get(cq, "metadata"), "resourceVersion"));
    if (rv)
        json_object_set_new(md, "resourceVersion", json_string(rv));
    if (r->breakdown) {
        json_t *ann = json_object();
        json_object_set_new(ann, AGG_SOURCE_ANNOTATION, json_string(r->breakdown));
        json_object_set_new(md, "annotations", ann);
    }
    json_t *spec = json_object();
    json_object_set_new(spec, "resourceGroups", rgs);
    json_t *patch = json_object();
    json_object_set_new(patch, "metadata", md);
    json_object_set_new(patch, "spec", spec);
    return patch;
}

int agg_total(const struct agg *a, const char *flavor, const char *resource, char *buf, size_t n)
{
    for (size_t i = 0; i < a->ncells; i++) {
        const struct cell *c = &a->cells[i];
        if (strcmp(c->flavor, flavor) == 0 && strcmp(c->resource, resource) == 0) {
            struct qty t = c->total;
            normalize_fmt(c->resource, &t);
            qfmt(&t, buf, n);
            return 0;
        }
    }
    return -ENOENT;
}
