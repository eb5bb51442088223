/* placement: see placement.h. */
#include "controllers/workload/placement.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/podres/podres.h"
#include "pkg/quantity/quantity.h"
#include "pkg/sched/podcons.h"
#include "pkg/sched/sched.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/strmap.h"
#include "pkg/util/xalloc.h"
#include "pkg/util/plural.h"

#define PPM 1000000
/* Node allocatable "pods" (110 by default) caps the pods per node; a node that
 * does not report it is not limited. */
#define PODS           "pods"
#define PODS_UNLIMITED (INT64_MAX / 4)

/* ---- amounts ----------------------------------------------------------------- */

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return ((a < 0) != (b < 0)) ? INT64_MIN : INT64_MAX;
    return r;
}

/* A quantity (JSON string or number) as milli-units; negative is an error. */
static int amount_from_json(const json_t *v, int64_t *out, struct err *e)
{
    struct qty q;
    int rc = qty_parse_json(v, &q, e);
    if (rc < 0)
        return rc;
    if (qty_sign(&q) < 0)
        return err_set(e, -EINVAL, "negative quantity %s", QTY_STR(&q));
    if (qty_milli_value(&q, out, NULL) < 0)
        return err_set(e, -ERANGE, "quantity %s is too large for a node", QTY_STR(&q));
    return 0;
}

/* Milli-units of resource `res` as a Kubernetes quantity string for messages, in the units
 * explain and the quota lines use (qty_fmt_amount: memory in binary SI, "1Gi"). */
static const char *fmt_milli(char *b, size_t n, const char *res, int64_t milli)
{
    char tmp[QTY_STR_MAX];
    snprintf(b, n, "%s", qty_fmt_amount(tmp, res, milli));
    return b;
}

int64_t place_reslist_get(const struct place_reslist *rl, const char *name)
{
    for (size_t i = 0; i < rl->n; i++)
        if (strcmp(rl->v[i].name, name) == 0)
            return rl->v[i].milli;
    return 0;
}

static struct place_res *reslist_find(struct place_reslist *rl, const char *name)
{
    for (size_t i = 0; i < rl->n; i++)
        if (strcmp(rl->v[i].name, name) == 0)
            return &rl->v[i];
    return NULL;
}

void place_reslist_add(struct place_reslist *rl, const char *name, int64_t milli)
{
    struct place_res *r = reslist_find(rl, name);
    if (r) {
        r->milli = sat_add(r->milli, milli);
        return;
    }
    rl->v = xrealloc(rl->v, (rl->n + 1) * sizeof *rl->v);
    rl->v[rl->n].name = xstrdup(name);
    rl->v[rl->n].milli = milli;
    rl->n++;
}

void place_reslist_free(struct place_reslist *rl)
{
    if (!rl)
        return;
    for (size_t i = 0; i < rl->n; i++)
        free(rl->v[i].name);
    free(rl->v);
    rl->v = NULL;
    rl->n = 0;
}

static void reslist_copy(struct place_reslist *dst, const struct place_reslist *src)
{
    for (size_t i = 0; i < src->n; i++)
        place_reslist_add(dst, src->v[i].name, src->v[i].milli);
}

/* Parse a resource map {"cpu":"2","memory":"1Gi"} into rl (added to it).
 * what: field name for errors. */
static int reslist_from_json(const json_t *obj, const char *what, struct place_reslist *rl,
                             struct err *e)
{
    if (!obj || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return err_set(e, -EINVAL, "%s: not an object", what);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        int64_t m;
        struct err sub = {0};
        if (amount_from_json(v, &m, &sub) < 0)
            return err_set(e, -EINVAL, "%s.%s: %s", what, k, sub.msg);
        place_reslist_add(rl, k, m);
    }
    return 0;
}

/* ---- ClusterMetrics --------------------------------------------------------------- */

static void node_free(struct place_node *n)
{
    free(n->name);
    place_reslist_free(&n->alloc);
    place_reslist_free(&n->requested);
    json_decref(n->labels);
    vocab_taints_free(n->taints, n->n_taints);
    free(n->alloc_v);
    free(n->req_v);
    memset(n, 0, sizeof *n);
}

void place_cluster_free(struct place_cluster *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_nodes; i++)
        node_free(&c->nodes[i]);
    free(c->nodes);
    free(c->name);
    for (size_t i = 0; i < c->n_res; i++)
        free(c->res_names[i]);
    free(c->res_names);
    memset(c, 0, sizeof *c);
}

struct idx_node {
    struct place_node n;
    size_t idx;
};

static int idx_node_cmp(const void *a, const void *b)
{
    const struct idx_node *x = a, *y = b;
    int c = strcmp(x->n.name, y->n.name);
    if (c)
        return c;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* One status.nodes[] entry. 0, or -EINVAL with e naming the field. */
static int node_from_json(const json_t *jn, struct place_node *n, struct err *e)
{
    memset(n, 0, sizeof *n);
    n->ready = true;
    if (!json_is_object(jn))
        return err_set(e, -EINVAL, "not an object");
    const char *name = json_string_value(json_object_get(jn, "name"));
    if (!name || !name[0])
        return err_set(e, -EINVAL, "name: missing");
    n->name = xstrdup(name);
    int rc = reslist_from_json(json_object_get(jn, "allocatableResources"), "allocatableResources",
                               &n->alloc, e);
    if (rc == 0)
        rc = reslist_from_json(json_object_get(jn, "allocatedResourceRequests"),
                               "allocatedResourceRequests", &n->requested, e);
    if (rc == 0)
        rc = vocab_taints_from_json(json_object_get(jn, "taints"), "taints", &n->taints,
                                    &n->n_taints, e);
    if (rc < 0)
        goto fail;
    const json_t *labels = json_object_get(jn, "labels");
    if (labels && !json_is_null(labels)) {
        const char *k;
        json_t *v;
        if (!json_is_object(labels)) {
            rc = err_set(e, -EINVAL, "labels: not an object");
            goto fail;
        }
        json_object_foreach((json_t *)labels, k, v)
        {
            if (!json_is_string(v)) {
                rc = err_set(e, -EINVAL, "labels.%s: not a string", k);
                goto fail;
            }
        }
        n->labels = json_incref((json_t *)labels);
    }
    const json_t *u = json_object_get(jn, "unschedulable");
    if (u && !json_is_null(u) && !json_is_boolean(u)) {
        rc = err_set(e, -EINVAL, "unschedulable: not a boolean");
        goto fail;
    }
    n->unschedulable = json_is_true(u);
    const json_t *r = json_object_get(jn, "ready");
    if (r && !json_is_null(r) && !json_is_boolean(r)) {
        rc = err_set(e, -EINVAL, "ready: not a boolean");
        goto fail;
    }
    n->ready = !json_is_false(r);
    return 0;
fail:
    node_free(n);
    return rc;
}

static int cstr_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Index of `name` in c->res_names, or -1. */
static long res_index(const struct place_cluster *c, const char *name)
{
    size_t lo = 0, hi = c->n_res;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strcmp(c->res_names[mid], name);
        if (cmp == 0)
            return (long)mid;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Build res_names and the nodes' dense amount arrays. */
static void cluster_index_resources(struct place_cluster *c)
{
    size_t total = 0;
    for (size_t i = 0; i < c->n_nodes; i++)
        total += c->nodes[i].alloc.n + c->nodes[i].requested.n;
    const char **names = xcalloc(total ? total : 1, sizeof *names);
    size_t k = 0;
    for (size_t i = 0; i < c->n_nodes; i++) {
        for (size_t r = 0; r < c->nodes[i].alloc.n; r++)
            names[k++] = c->nodes[i].alloc.v[r].name;
        for (size_t r = 0; r < c->nodes[i].requested.n; r++)
            names[k++] = c->nodes[i].requested.v[r].name;
    }
    qsort(names, k, sizeof *names, cstr_cmp);
    c->res_names = xcalloc(k ? k : 1, sizeof *c->res_names);
    for (size_t i = 0; i < k; i++)
        if (c->n_res == 0 || strcmp(c->res_names[c->n_res - 1], names[i]) != 0)
            c->res_names[c->n_res++] = xstrdup(names[i]);
    free(names);
    for (size_t i = 0; i < c->n_nodes; i++) {
        struct place_node *n = &c->nodes[i];
        n->alloc_v = xcalloc(c->n_res ? c->n_res : 1, sizeof *n->alloc_v);
        n->req_v = xcalloc(c->n_res ? c->n_res : 1, sizeof *n->req_v);
        for (size_t r = 0; r < c->n_res; r++)
            n->alloc_v[r] = n->req_v[r] = PLACE_ABSENT;
        for (size_t r = 0; r < n->alloc.n; r++)
            n->alloc_v[res_index(c, n->alloc.v[r].name)] = n->alloc.v[r].milli;
        for (size_t r = 0; r < n->requested.n; r++)
            n->req_v[res_index(c, n->requested.v[r].name)] = n->requested.v[r].milli;
    }
}

int place_cluster_from_json(const json_t *cm, struct place_cluster *out, struct vocab_warnings *w,
                            struct err *e)
{
    memset(out, 0, sizeof *out);
    out->ready = true;
    if (!json_is_object(cm))
        return err_set(e, -EINVAL, "ClusterMetrics: not an object");
    const char *name = json_string_value(json_object_get(json_object_get(cm, "metadata"), "name"));
    if (!name || !name[0])
        return err_set(e, -EINVAL, "ClusterMetrics: missing metadata.name");
    const json_t *st = json_object_get(cm, "status");
    if (st && !json_is_null(st) && !json_is_object(st))
        return err_set(e, -EINVAL, "ClusterMetrics %s: status is not an object", name);
    const json_t *nodes = json_object_get(st, "nodes");
    if (nodes && !json_is_null(nodes) && !json_is_array(nodes))
        return err_set(e, -EINVAL, "ClusterMetrics %s: status.nodes is not an array", name);
    out->name = xstrdup(name);
    out->reported = vocab_status_reported(st);
    const char *lu = json_string_value(json_object_get(st, "lastUpdated"));
    if (lu) {
        struct timespec ts;
        if (clock_parse_rfc3339(lu, &ts) == 0) {
            out->has_last_updated = true;
            out->last_updated_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        } else {
            vocab_warnings_add(w, "cluster %s: status.lastUpdated: not an RFC 3339 time", name);
        }
    }
    const json_t *conds = json_object_get(st, "conditions");
    size_t ci;
    const json_t *c;
    json_array_foreach(conds, ci, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *status = json_string_value(json_object_get(c, "status"));
        if (type && status && strcmp(type, "Ready") == 0 && strcmp(status, "False") == 0)
            out->ready = false;
    }
    size_t cnt = json_array_size(nodes);
    struct idx_node *tmp = xcalloc(cnt ? cnt : 1, sizeof *tmp);
    size_t ok = 0;
    for (size_t i = 0; i < cnt; i++) {
        struct err sub = {0};
        if (node_from_json(json_array_get(nodes, i), &tmp[ok].n, &sub) < 0) {
            vocab_warnings_add(w, "cluster %s: status.nodes[%zu]: %s (node skipped)", name, i,
                               sub.msg);
            continue;
        }
        tmp[ok].idx = i;
        ok++;
    }
    /* Sort by name (then list order); keep the first of duplicate names. */
    qsort(tmp, ok, sizeof *tmp, idx_node_cmp);
    out->nodes = xcalloc(ok ? ok : 1, sizeof *out->nodes);
    size_t keep = 0;
    for (size_t i = 0; i < ok; i++) {
        if (keep > 0 && strcmp(out->nodes[keep - 1].name, tmp[i].n.name) == 0) {
            vocab_warnings_add(w, "cluster %s: node %s listed twice (duplicate skipped)", name,
                               tmp[i].n.name);
            node_free(&tmp[i].n);
            continue;
        }
        out->nodes[keep++] = tmp[i].n;
    }
    free(tmp);
    out->n_nodes = keep;
    cluster_index_resources(out);
    return 0;
}

bool place_cluster_usable(const struct place_cluster *c, int64_t now_ms, int64_t stale_after_ms)
{
    if (!c->ready || !c->reported)
        return false;
    return !c->has_last_updated || now_ms - c->last_updated_ms <= stale_after_ms;
}

/* ---- Workload --------------------------------------------------------------------- */

static void podset_free(struct place_podset *p)
{
    free(p->name);
    place_reslist_free(&p->per_pod);
    vocab_kvs_free(p->node_selector, p->n_node_selector);
    vocab_tolerations_free(p->tolerations, p->n_tolerations);
    for (size_t i = 0; i < p->n_flavors; i++)
        free(p->flavors[i]);
    free(p->flavors);
    affinity_free(p->affinity);
    free(p->left_to_worker);
    memset(p, 0, sizeof *p);
}

void place_workload_free(struct place_workload *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n_podsets; i++)
        podset_free(&w->podsets[i]);
    free(w->podsets);
    free(w->key);
    memset(w, 0, sizeof *w);
}

/* Effective per-pod request, by the one rule of pkg/podres (sidecars, init
 * containers, pod-level resources, overhead), converted once per pod set to
 * milli-units. */
static int pod_requests(const json_t *spec, const char *what, struct place_reslist *out,
                        struct err *e)
{
    struct podres_list req = {0};
    struct err sub = {0};
    int rc = podres_pod(spec, &req, NULL, &sub);
    if (rc < 0) {
        /* podres names fields from "spec." on: "<what>.spec.containers[0]...". */
        err_set(e, rc, "%s.%s", what, sub.msg);
        goto out;
    }
    for (size_t i = 0; i < req.n; i++) {
        int64_t m;
        if (qty_milli_value(&req.v[i].q, &m, NULL) < 0) {
            rc = err_set(e, -ERANGE, "%s.spec: effective request %s=%s is too large for a node",
                         what, req.v[i].name, QTY_STR(&req.v[i].q));
            goto out;
        }
        place_reslist_add(out, req.v[i].name, m);
    }
out:
    podres_free(&req);
    return rc;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int podset_from_json(const json_t *ps, size_t idx, struct place_podset *p, struct err *e)
{
    memset(p, 0, sizeof *p);
    if (!json_is_object(ps))
        return err_set(e, -EINVAL, "spec.podSets[%zu]: not an object", idx);
    const json_t *jn = json_object_get(ps, "name");
    if (jn && !json_is_string(jn))
        return err_set(e, -EINVAL, "spec.podSets[%zu].name: not a string", idx);
    p->name = xstrdup(jn ? json_string_value(jn) : "main");
    const json_t *jc = json_object_get(ps, "count");
    p->count = 1;
    if (jc && !json_is_null(jc)) {
        if (!json_is_integer(jc) || json_integer_value(jc) < 0) {
            err_set(e, -EINVAL, "pod set %s: count: not a non-negative integer", p->name);
            goto fail;
        }
        p->count = json_integer_value(jc);
    }
    const json_t *spec = json_object_get(json_object_get(ps, "template"), "spec");
    if (!json_is_object(spec)) {
        err_set(e, -EINVAL, "pod set %s: template.spec: missing", p->name);
        goto fail;
    }
    char what[320];
    snprintf(what, sizeof what, "pod set %s: template", p->name);
    if (pod_requests(spec, what, &p->per_pod, e) < 0)
        goto fail;
    snprintf(what, sizeof what, "pod set %s: template.spec.nodeSelector", p->name);
    if (vocab_kvs_from_json(json_object_get(spec, "nodeSelector"), what, &p->node_selector,
                            &p->n_node_selector, e) < 0)
        goto fail;
    snprintf(what, sizeof what, "pod set %s: template.spec.tolerations", p->name);
    if (vocab_tolerations_from_json(json_object_get(spec, "tolerations"), what, &p->tolerations,
                                    &p->n_tolerations, e) < 0)
        goto fail;
    struct err ae = {0};
    if (affinity_from_json(json_object_get(spec, "affinity"), &p->affinity, &ae) < 0) {
        err_set(e, -EINVAL, "pod set %s: template.spec.%s", p->name, ae.msg);
        goto fail;
    }
    struct podcons pc;
    podcons_from_template(json_object_get(ps, "template"), &pc);
    p->one_per_node = pc.one_per_node;
    p->left_to_worker = pc.left; /* taken over */
    return 0;
fail:
    podset_free(p);
    return -EINVAL;
}

/* Apply status.admission.podSetAssignments[] to the pod sets. */
static int assignments_from_json(const json_t *asg, struct place_workload *w, struct err *e)
{
    if (!asg || json_is_null(asg))
        return 0;
    if (!json_is_array(asg))
        return err_set(e, -EINVAL, "status.admission.podSetAssignments: not an array");
    size_t i;
    const json_t *a;
    json_array_foreach(asg, i, a)
    {
        const char *name = json_string_value(json_object_get(a, "name"));
        if (!name)
            name = "main";
        struct place_podset *p = NULL;
        for (size_t k = 0; k < w->n_podsets; k++)
            if (strcmp(w->podsets[k].name, name) == 0)
                p = &w->podsets[k];
        if (!p)
            return err_set(e, -EINVAL,
                           "status.admission.podSetAssignments[%zu]: no pod set named %s", i, name);
        const json_t *fl = json_object_get(a, "flavors");
        if (fl && !json_is_null(fl) && !json_is_object(fl))
            return err_set(e, -EINVAL, "podSetAssignments[%zu].flavors: not an object", i);
        const char *res;
        json_t *v;
        json_object_foreach((json_t *)fl, res, v)
        {
            const char *f = json_string_value(v);
            if (!f || !f[0])
                return err_set(e, -EINVAL, "podSetAssignments[%zu].flavors.%s: not a name", i, res);
            bool dup = false;
            for (size_t k = 0; k < p->n_flavors; k++)
                if (strcmp(p->flavors[k], f) == 0)
                    dup = true;
            if (dup)
                continue;
            p->flavors = xrealloc(p->flavors, (p->n_flavors + 1) * sizeof *p->flavors);
            p->flavors[p->n_flavors++] = xstrdup(f);
        }
        qsort(p->flavors, p->n_flavors, sizeof *p->flavors, str_cmp);
        const json_t *jc = json_object_get(a, "count");
        if (jc && !json_is_null(jc)) {
            if (!json_is_integer(jc) || json_integer_value(jc) < 0)
                return err_set(e, -EINVAL, "podSetAssignments[%zu].count: not a count", i);
            p->count = json_integer_value(jc);
        }
    }
    return 0;
}

int place_workload_from_json(const json_t *wl, struct place_workload *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(wl))
        return err_set(e, -EINVAL, "Workload: not an object");
    const json_t *md = json_object_get(wl, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    if (!name || !name[0])
        return err_set(e, -EINVAL, "Workload: missing metadata.name");
    out->key = (ns && ns[0]) ? xasprintf("%s/%s", ns, name) : xstrdup(name);
    const json_t *ps = json_object_get(json_object_get(wl, "spec"), "podSets");
    if (!json_is_array(ps) || json_array_size(ps) == 0) {
        err_set(e, -EINVAL, "Workload %s: spec.podSets: missing or empty", out->key);
        goto fail;
    }
    size_t cnt = json_array_size(ps);
    out->podsets = xcalloc(cnt, sizeof *out->podsets);
    for (size_t i = 0; i < cnt; i++) {
        if (podset_from_json(json_array_get(ps, i), i, &out->podsets[i], e) < 0)
            goto fail_prefix;
        out->n_podsets++;
    }
    if (assignments_from_json(
            json_object_get(json_object_get(json_object_get(wl, "status"), "admission"),
                            "podSetAssignments"),
            out, e) < 0)
        goto fail_prefix;
    return 0;
fail_prefix:
    err_prefix(e, "Workload %s", out->key);
fail:
    place_workload_free(out);
    return -EINVAL;
}

/* ---- reservations --------------------------------------------------------------- */

/* Per-cluster sums of the held reservations (place_resv.by_cluster). */
struct resv_cluster {
    struct strmap nodes; /* node name -> struct place_reslist * (sum over entries) */
    size_t n_entries;
    int64_t min_at_ms;     /* at most the oldest entry's at_ms: sync skips the scan before it */
    int64_t min_settle_ms; /* at most the smallest entry settle_at_ms, likewise */
};

static void reslist_box_free(void *p)
{
    place_reslist_free(p);
    free(p);
}

static void resv_cluster_free(void *p)
{
    struct resv_cluster *rc = p;
    strmap_free(&rc->nodes, reslist_box_free);
    free(rc);
}

void place_resv_init(struct place_resv *r)
{
    memset(r, 0, sizeof *r);
    r->settle_ms = 30000;
    r->seen_margin_ms = 2000;
    r->ttl_ms = 600000;
    strmap_init(&r->by_key);
    strmap_init(&r->by_cluster);
    strmap_init(&r->by_uid);
}

static void resv_entry_free(struct place_resv_entry *en)
{
    free(en->key);
    free(en->copy_uid);
    free(en->cluster);
    for (size_t i = 0; i < en->n_nodes; i++) {
        place_reslist_free(&en->per_node[i]);
        free(en->node_names[i]);
    }
    free(en->per_node);
    free(en->node_names);
}

void place_resv_free(struct place_resv *r)
{
    for (size_t i = 0; i < r->n; i++)
        resv_entry_free(&r->v[i]);
    free(r->v);
    r->v = NULL;
    r->n = 0;
    strmap_free(&r->by_key, NULL);
    strmap_free(&r->by_cluster, resv_cluster_free);
    strmap_free(&r->by_uid, NULL);
}

/* Add (sign 1) or take out (sign -1) an entry's amounts from its cluster's
 * sums. The sums of a cluster are freed with its last entry, so a saturated
 * sum (bad data) cannot outlive the entries that made it. */
static void resv_totals_apply(struct place_resv *r, const struct place_resv_entry *en, int sign)
{
    struct resv_cluster *rc = strmap_get(&r->by_cluster, en->cluster);
    if (!rc) {
        if (sign < 0)
            return;
        rc = xcalloc(1, sizeof *rc);
        rc->min_at_ms = en->at_ms;
        rc->min_settle_ms = en->settle_at_ms;
        strmap_put(&r->by_cluster, en->cluster, rc);
    }
    if (sign < 0 && rc->n_entries <= 1) {
        resv_cluster_free(strmap_del(&r->by_cluster, en->cluster));
        return;
    }
    rc->n_entries = sign > 0 ? rc->n_entries + 1 : rc->n_entries - 1;
    if (sign > 0 && en->at_ms < rc->min_at_ms)
        rc->min_at_ms = en->at_ms;
    if (sign > 0 && en->settle_at_ms < rc->min_settle_ms)
        rc->min_settle_ms = en->settle_at_ms;
    for (size_t k = 0; k < en->n_nodes; k++) {
        struct place_reslist *sum = strmap_get(&rc->nodes, en->node_names[k]);
        if (!sum) {
            sum = xcalloc(1, sizeof *sum);
            strmap_put(&rc->nodes, en->node_names[k], sum);
        }
        for (size_t i = 0; i < en->per_node[k].n; i++)
            place_reslist_add(sum, en->per_node[k].v[i].name,
                              sign > 0 ? en->per_node[k].v[i].milli : -en->per_node[k].v[i].milli);
    }
}

/* The entry's copy uid leaves it and the uid index. */
static void resv_uid_forget(struct place_resv *r, struct place_resv_entry *en)
{
    if (!en->copy_uid)
        return;
    if (strmap_get(&r->by_uid, en->copy_uid) == en->key)
        strmap_del(&r->by_uid, en->copy_uid);
    free(en->copy_uid);
    en->copy_uid = NULL;
}

/* Drop entry i: the last entry takes its place (entries are unordered). */
static void resv_drop_at(struct place_resv *r, size_t i)
{
    resv_uid_forget(r, &r->v[i]);
    resv_totals_apply(r, &r->v[i], -1);
    strmap_del(&r->by_key, r->v[i].key);
    resv_entry_free(&r->v[i]);
    r->n--;
    if (i != r->n) {
        r->v[i] = r->v[r->n];
        strmap_put(&r->by_key, r->v[i].key, (void *)(uintptr_t)(i + 1));
    }
}

static long resv_find(const struct place_resv *r, const char *key)
{
    uintptr_t at = (uintptr_t)strmap_get(&r->by_key, key);
    return at ? (long)(at - 1) : -1;
}

int place_resv_remove(struct place_resv *r, const char *key)
{
    long i = resv_find(r, key);
    if (i < 0)
        return 0;
    resv_drop_at(r, (size_t)i);
    return 1;
}

int place_resv_add(struct place_resv *r, const char *key, const struct place_result *res,
                   int64_t now_ms)
{
    if (!res || res->status != PLACE_OK || !res->cluster || !key)
        return -EINVAL;
    place_resv_remove(r, key);
    r->v = xrealloc(r->v, (r->n + 1) * sizeof *r->v);
    struct place_resv_entry *en = &r->v[r->n++];
    memset(en, 0, sizeof *en);
    en->key = xstrdup(key);
    en->cluster = xstrdup(res->cluster);
    en->at_ms = now_ms;
    en->settle_at_ms = sat_add(now_ms, r->settle_ms);
    for (size_t i = 0; i < res->n_assign; i++)
        en->pods = sat_add(en->pods, res->assign[i].replicas);
    en->n_nodes = res->n_nodes;
    en->per_node = xcalloc(res->n_nodes ? res->n_nodes : 1, sizeof *en->per_node);
    en->node_names = xcalloc(res->n_nodes ? res->n_nodes : 1, sizeof *en->node_names);
    for (size_t i = 0; i < res->n_nodes; i++) {
        en->node_names[i] = xstrdup(res->node_names[i]);
        reslist_copy(&en->per_node[i], &res->node_totals[i]);
    }
    strmap_put(&r->by_key, key, (void *)(uintptr_t)r->n);
    resv_totals_apply(r, en, 1);
    return 0;
}

static bool resv_due(const struct place_resv *r, int64_t at_ms, int64_t settle_at_ms,
                     const struct place_cluster *c, int64_t now_ms)
{
    if (c->has_last_updated && c->last_updated_ms >= settle_at_ms)
        return true;
    return now_ms >= sat_add(at_ms, r->ttl_ms);
}

int place_resv_copy(struct place_resv *r, const char *key, const char *uid)
{
    if (!uid || !uid[0])
        return -EINVAL;
    long i = resv_find(r, key);
    if (i < 0)
        return 0;
    struct place_resv_entry *en = &r->v[i];
    if (en->copy_uid && strcmp(en->copy_uid, uid) == 0)
        return 0;
    resv_uid_forget(r, en);
    en->copy_uid = xstrdup(uid);
    strmap_put(&r->by_uid, uid, en->key);
    return 1;
}

/* One status.countedJobs entry (placement.h): its uid and count, or false when malformed. */
static bool counted_entry(const json_t *e, const char **uid, int64_t *pods)
{
    const json_t *p = json_object_get(e, "pods");
    *uid = json_string_value(json_object_get(e, "uid"));
    size_t len = *uid ? strlen(*uid) : 0;
    if (len == 0 || len > PLACE_UID_MAX || !json_is_integer(p) || json_integer_value(p) < 0)
        return false;
    *pods = (int64_t)json_integer_value(p);
    return true;
}

size_t place_resv_counted(struct place_resv *r, const char *cluster, const json_t *cm)
{
    const json_t *l = json_object_get(json_object_get(cm, "status"), "countedJobs");
    size_t n = json_array_size(l), dropped = 0;
    if (!cluster || strmap_len(&r->by_uid) == 0)
        return 0;
    for (size_t i = 0; i < n && i < PLACE_COUNTED_MAX; i++) {
        const char *uid;
        int64_t pods;
        if (!counted_entry(json_array_get(l, i), &uid, &pods))
            continue;
        const char *key = strmap_get(&r->by_uid, uid);
        long k = key ? resv_find(r, key) : -1;
        if (k < 0)
            continue;
        const struct place_resv_entry *en = &r->v[k];
        if (strcmp(en->cluster, cluster) == 0 && en->pods > 0 && pods >= en->pods) {
            resv_drop_at(r, (size_t)k);
            dropped++;
        }
    }
    return dropped;
}

int place_resv_pods_seen(struct place_resv *r, const char *key, int64_t seen_ms)
{
    long i = resv_find(r, key);
    if (i < 0)
        return 0;
    struct place_resv_entry *en = &r->v[i];
    int64_t at = sat_add(seen_ms, r->seen_margin_ms);
    if (at >= en->settle_at_ms)
        return 0;
    en->settle_at_ms = at;
    struct resv_cluster *rc = strmap_get(&r->by_cluster, en->cluster);
    if (rc && at < rc->min_settle_ms)
        rc->min_settle_ms = at;
    return 1;
}

size_t place_resv_sync(struct place_resv *r, const struct place_cluster *c, int64_t now_ms)
{
    struct resv_cluster *rc = strmap_get(&r->by_cluster, c->name);
    /* Nothing on this cluster is old enough: no scan (called on every pass). */
    if (!rc || !resv_due(r, rc->min_at_ms, rc->min_settle_ms, c, now_ms))
        return 0;
    size_t dropped = 0;
    bool any = false;
    int64_t min_at = INT64_MAX, min_settle = INT64_MAX;
    for (size_t i = 0; i < r->n;) {
        const struct place_resv_entry *en = &r->v[i];
        if (strcmp(en->cluster, c->name) != 0) {
            i++;
        } else if (resv_due(r, en->at_ms, en->settle_at_ms, c, now_ms)) {
            resv_drop_at(r, i);
            dropped++;
        } else {
            any = true;
            if (en->at_ms < min_at)
                min_at = en->at_ms;
            if (en->settle_at_ms < min_settle)
                min_settle = en->settle_at_ms;
            i++;
        }
    }
    rc = any ? strmap_get(&r->by_cluster, c->name) : NULL;
    if (rc) {
        rc->min_at_ms = min_at;
        rc->min_settle_ms = min_settle;
    }
    return dropped;
}

int64_t place_resv_held(const struct place_resv *r, const char *cluster, const char *node,
                        const char *resource)
{
    const struct resv_cluster *rc = strmap_get(&r->by_cluster, cluster);
    const struct place_reslist *sum = rc ? strmap_get(&rc->nodes, node) : NULL;
    return sum ? place_reslist_get(sum, resource) : 0;
}

bool place_resv_lookup(const struct place_resv *r, const char *key, const char **cluster)
{
    long i = resv_find(r, key);
    if (i < 0)
        return false;
    if (cluster)
        *cluster = r->v[i].cluster;
    return true;
}

/* ---- the decision ---------------------------------------------------------------- */

int place_policy_parse(const char *s, enum place_policy *out)
{
    if (s && strcmp(s, "spread") == 0) {
        *out = PLACE_SPREAD;
        return 0;
    }
    if (s && strcmp(s, "binpack") == 0) {
        *out = PLACE_BINPACK;
        return 0;
    }
    return -EINVAL;
}

void place_result_free(struct place_result *r)
{
    if (!r)
        return;
    free(r->cluster);
    free(r->message);
    free(r->left_to_worker);
    for (size_t i = 0; i < r->n_assign; i++)
        free(r->assign[i].node);
    free(r->assign);
    for (size_t i = 0; i < r->n_nodes; i++) {
        place_reslist_free(&r->node_totals[i]);
        free(r->node_names[i]);
    }
    free(r->node_totals);
    free(r->node_names);
    memset(r, 0, sizeof *r);
}

/* Per-decision view of the workload: the resource axis and per-pod-set data. */
struct wview {
    const struct place_workload *wl;
    const char **res; /* borrowed names: union of resources requested (> 0) and "pods", sorted */
    size_t nres;
    size_t pods;  /* index of "pods" in res: every pod takes one of the node's pod slots */
    int64_t *req; /* [podset * nres + res] per-pod request */
    const struct vocab_flavor ***flav; /* [podset][flavor], NULL entry = unknown */
    struct vocab_toleration **ftol;    /* [podset] flavors' tolerations (shallow copies) */
    size_t *nftol;
    const char **unknown_flavor; /* [podset] first unknown flavor name, or NULL */
    size_t *order;               /* pod sets, largest first */
};

static const struct vocab_flavor *flavor_find(const struct vocab_flavor *f, size_t n,
                                              const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].name, name) == 0)
            return &f[i];
    return NULL;
}

static void wview_free(struct wview *v)
{
    if (!v->wl)
        return;
    for (size_t p = 0; p < v->wl->n_podsets; p++) {
        free(v->flav[p]);
        free(v->ftol[p]);
    }
    free(v->res);
    free(v->req);
    free(v->flav);
    free(v->ftol);
    free(v->nftol);
    free(v->unknown_flavor);
    free(v->order);
    memset(v, 0, sizeof *v);
}

/* The resources the pod sets request (PODS always among them, sorted) and
 * each pod set's per-pod request of each (a pod counts 1 pod at least). */
static void wview_resources(struct wview *v, const struct place_workload *wl)
{
    size_t np = wl->n_podsets;
    size_t cap = 2;
    for (size_t p = 0; p < np; p++)
        cap += wl->podsets[p].per_pod.n;
    v->res = xcalloc(cap, sizeof *v->res);
    for (size_t p = 0; p < np; p++) {
        const struct place_reslist *rl = &wl->podsets[p].per_pod;
        for (size_t k = 0; k < rl->n; k++) {
            if (rl->v[k].milli <= 0)
                continue;
            bool seen = false;
            for (size_t r = 0; r < v->nres; r++)
                if (strcmp(v->res[r], rl->v[k].name) == 0)
                    seen = true;
            if (!seen)
                v->res[v->nres++] = rl->v[k].name;
        }
    }
    bool has_pods = false;
    for (size_t r = 0; r < v->nres; r++)
        if (strcmp(v->res[r], PODS) == 0)
            has_pods = true;
    if (!has_pods)
        v->res[v->nres++] = PODS;
    qsort(v->res, v->nres, sizeof *v->res, cstr_cmp);
    for (size_t r = 0; r < v->nres; r++)
        if (strcmp(v->res[r], PODS) == 0)
            v->pods = r;
    v->req = xcalloc((np ? np : 1) * v->nres, sizeof *v->req);
    for (size_t p = 0; p < np; p++)
        for (size_t r = 0; r < v->nres; r++)
            v->req[p * v->nres + r] = place_reslist_get(&wl->podsets[p].per_pod, v->res[r]);
    for (size_t p = 0; p < np; p++)
        if (v->req[p * v->nres + v->pods] <= 0)
            v->req[p * v->nres + v->pods] = 1000;
}

/* Each pod set's admitted flavors (NULL for an unknown one, the first such
 * name kept) and the union of their tolerations. */
static void wview_flavors(struct wview *v, const struct place_workload *wl,
                          const struct vocab_flavor *flavors, size_t n_flavors)
{
    size_t np = wl->n_podsets;
    v->flav = xcalloc(np ? np : 1, sizeof *v->flav);
    v->ftol = xcalloc(np ? np : 1, sizeof *v->ftol);
    v->nftol = xcalloc(np ? np : 1, sizeof *v->nftol);
    v->unknown_flavor = xcalloc(np ? np : 1, sizeof *v->unknown_flavor);
    for (size_t p = 0; p < np; p++) {
        const struct place_podset *ps = &wl->podsets[p];
        v->flav[p] = xcalloc(ps->n_flavors ? ps->n_flavors : 1, sizeof *v->flav[p]);
        size_t ntol = 0;
        for (size_t f = 0; f < ps->n_flavors; f++) {
            const struct vocab_flavor *fl = flavor_find(flavors, n_flavors, ps->flavors[f]);
            v->flav[p][f] = fl;
            if (!fl && !v->unknown_flavor[p])
                v->unknown_flavor[p] = ps->flavors[f];
            if (fl)
                ntol += fl->n_tolerations;
        }
        v->ftol[p] = xcalloc(ntol ? ntol : 1, sizeof *v->ftol[p]);
        for (size_t f = 0; f < ps->n_flavors; f++) {
            const struct vocab_flavor *fl = v->flav[p][f];
            for (size_t t = 0; fl && t < fl->n_tolerations; t++)
                v->ftol[p][v->nftol[p]++] = fl->tolerations[t];
        }
    }
}

/* The order the pod sets are placed in (v->order). */
static void wview_order(struct wview *v)
{
    size_t np = v->wl->n_podsets;
    /* Largest first: key = sum over resources of req / (largest req of that resource). */
    int64_t *key = xcalloc(np ? np : 1, sizeof *key);
    for (size_t r = 0; r < v->nres; r++) {
        int64_t mx = 0;
        for (size_t p = 0; p < np; p++)
            if (v->req[p * v->nres + r] > mx)
                mx = v->req[p * v->nres + r];
        for (size_t p = 0; p < np && mx > 0; p++)
            key[p] += (int64_t)((__int128)v->req[p * v->nres + r] * PPM / mx);
    }
    v->order = xcalloc(np ? np : 1, sizeof *v->order);
    for (size_t p = 0; p < np; p++)
        v->order[p] = p;
    /* Insertion sort (few pod sets), stable: ties keep spec order. */
    for (size_t i = 1; i < np; i++) {
        size_t cur = v->order[i];
        size_t j = i;
        while (j > 0 && key[v->order[j - 1]] < key[cur]) {
            v->order[j] = v->order[j - 1];
            j--;
        }
        v->order[j] = cur;
    }
    free(key);
}

static void wview_build(struct wview *v, const struct place_workload *wl,
                        const struct vocab_flavor *flavors, size_t n_flavors)
{
    memset(v, 0, sizeof *v);
    v->wl = wl;
    wview_resources(v, wl);
    wview_flavors(v, wl, flavors, n_flavors);
    wview_order(v);
}

static bool node_usable(const struct place_node *n)
{
    return n->ready && !n->unschedulable;
}

/* Taints the node lifecycle controller, the TaintNodesByCondition admission plugin, kubectl
 * cordon or a cloud provider put on and take off as a node's state changes (a node starts
 * not-ready, is cordoned for maintenance, is under pressure). They make a node unusable now,
 * never for good: "ever fits" ignores them, like readiness and cordoning, so a job is not
 * Rejected (and lost) while a worker's nodes come up. */
static bool taint_is_transient(const struct vocab_taint *t)
{
    static const char *const prefixes[] = {"node.kubernetes.io/",
                                           "node.cloudprovider.kubernetes.io/uninitialized"};
    for (size_t i = 0; t->key && i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(t->key, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

/* with_affinity false: every filter but the required node affinity (for the
 * "why not" message). empty: the cluster as it could become (the "ever fits" question):
 * readiness, cordoning and transient taints do not exclude a node. */
static bool node_passes(const struct wview *v, size_t p, const struct place_node *n,
                        bool with_affinity, bool empty)
{
    const struct place_podset *ps = &v->wl->podsets[p];
    if ((!empty && !node_usable(n)) || v->unknown_flavor[p])
        return false;
    for (size_t f = 0; f < ps->n_flavors; f++) {
        const struct vocab_flavor *fl = v->flav[p][f];
        if (!vocab_labels_match(n->labels, fl->node_labels, fl->n_node_labels))
            return false;
    }
    if (!vocab_labels_match(n->labels, ps->node_selector, ps->n_node_selector))
        return false;
    for (size_t t = 0; t < n->n_taints; t++) {
        if (empty && taint_is_transient(&n->taints[t]))
            continue;
        if (!vocab_taint_tolerated(&n->taints[t], ps->tolerations, ps->n_tolerations, v->ftol[p],
                                   v->nftol[p]))
            return false;
    }
    return !with_affinity || affinity_required_matches(ps->affinity, n->name, n->labels);
}

static bool node_eligible(const struct wview *v, size_t p, const struct place_node *n, bool empty)
{
    return node_passes(v, p, n, true, empty);
}

/* The node passes every filter but the required node affinity. */
static bool node_excluded_by_affinity(const struct wview *v, size_t p, const struct place_node *n,
                                      bool empty)
{
    return node_passes(v, p, n, false, empty) && !node_passes(v, p, n, true, empty);
}

/* Evaluation of one cluster. */
struct ceval {
    bool feasible;
    int64_t score_ppm;
    int64_t preferred_ppm; /* preferred node affinity met, ranks before score_ppm */
    int64_t *free;         /* [node * nres + res] */
    int64_t *placed;       /* [podset * nodes + node] replicas */
    char why[1024];        /* why infeasible */
};

static void ceval_free(struct ceval *ev)
{
    free(ev->free);
    free(ev->placed);
    memset(ev, 0, sizeof *ev);
}

static int node_index(const struct place_cluster *c, const char *name)
{
    size_t lo = 0, hi = c->n_nodes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strcmp(c->nodes[mid].name, name);
        if (cmp == 0)
            return (int)mid;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Why no node of c is eligible for pod set p: the node affinity, or nodes that match but
 * are not usable now (not ready, cordoned, a transient taint), or nothing matches at all. */
static void explain_no_node(const struct wview *v, const struct place_cluster *c, size_t p,
                            bool empty, char *why, size_t n)
{
    const struct place_podset *ps = &v->wl->podsets[p];
    size_t by_aff = 0, later = 0;
    for (size_t i = 0; i < c->n_nodes; i++) {
        by_aff += node_excluded_by_affinity(v, p, &c->nodes[i], empty);
        later += !empty && node_eligible(v, p, &c->nodes[i], true);
    }
    const char *errs = affinity_errors(ps->affinity);
    if (by_aff > 0)
        snprintf(why, n,
                 "pod set %s: the required node affinity %s excludes the %zu %snode%s that "
                 "match the flavor's nodeLabels, the nodeSelector and the tolerations%s%s",
                 ps->name, affinity_required_text(ps->affinity), by_aff,
                 empty ? "" : "ready, schedulable ", plural_s((long long)by_aff),
                 errs ? "; invalid node affinity: " : "", errs ? errs : "");
    else if (later > 0)
        snprintf(why, n,
                 "pod set %s: the %zu %s the flavor's nodeLabels, the nodeSelector%s and the "
                 "tolerations %s not usable now (not ready, cordoned or tainted "
                 "node.kubernetes.io/...)",
                 ps->name, later,
                 plural_of((long long)later, "node that matches", "nodes that match"),
                 affinity_has_required(ps->affinity) ? ", the node affinity" : "",
                 plural_of((long long)later, "is", "are"));
    else
        snprintf(
            why, n,
            "pod set %s: no %snode matches the flavor's nodeLabels, the nodeSelector%s and the "
            "tolerations",
            ps->name, empty ? "" : "ready, schedulable ",
            affinity_has_required(ps->affinity) ? ", the node affinity" : "");
}

/* Explain why pod set p could not be placed completely. */
static void explain(const struct wview *v, const struct place_cluster *c, size_t p, int64_t fitted,
                    const int64_t *free, bool empty, char *why, size_t n)
{
    const struct place_podset *ps = &v->wl->podsets[p];
    size_t nr = v->nres;
    char each[160] = "";
    size_t off = 0;
    for (size_t r = 0; r < nr; r++) {
        char q[48];
        if (r == v->pods)
            continue;
        int w = snprintf(each + off, sizeof each - off, "%s%s=%s", off ? ", " : "", v->res[r],
                         fmt_milli(q, sizeof q, v->res[r], v->req[p * nr + r]));
        if (w < 0 || (size_t)w >= sizeof each - off)
            break;
        off += (size_t)w;
    }
    if (v->unknown_flavor[p]) {
        snprintf(why, n, "pod set %s: flavor %s is not a known ResourceFlavor", ps->name,
                 v->unknown_flavor[p]);
        return;
    }
    size_t eligible = 0;
    for (size_t i = 0; i < c->n_nodes; i++)
        if (node_eligible(v, p, &c->nodes[i], empty))
            eligible++;
    if (eligible == 0) {
        explain_no_node(v, c, p, empty, why, n);
        return;
    }
    /* The resource whose largest free amount on a matching node is below one pod's request. */
    for (size_t r = 0; r < nr; r++) {
        int64_t req = v->req[p * nr + r];
        if (req <= 0)
            continue;
        int64_t best = INT64_MIN;
        for (size_t i = 0; i < c->n_nodes; i++)
            if (node_eligible(v, p, &c->nodes[i], empty) && free[i * nr + r] > best)
                best = free[i * nr + r];
        if (best < req) {
            char q1[48], q2[48];
            snprintf(why, n,
                     "pod set %s: %" PRId64 " of %" PRId64 " pod%s (each %s) fit; %s: at most %s "
                     "left on a matching node%s, a pod needs %s",
                     ps->name, fitted, ps->count, plural_s(ps->count), each, v->res[r],
                     fmt_milli(q1, sizeof q1, v->res[r], best < 0 ? 0 : best),
                     empty ? " even with the cluster empty" : "",
                     fmt_milli(q2, sizeof q2, v->res[r], req));
            return;
        }
    }
    snprintf(why, n,
             "pod set %s: %" PRId64 " of %" PRId64
             " pod%s (each %s) fit on the %zu matching node%s%s",
             ps->name, fitted, ps->count, plural_s(ps->count), each, eligible,
             plural_s((long long)eligible),
             ps->one_per_node ? " (one per node: required pod anti-affinity on "
                                "kubernetes.io/hostname)"
                              : "");
}

/* Preferred node affinity met: matched weight of the placed pods over the
 * weight all of them could get, in ppm. */
static int64_t preferred_ppm(const struct wview *v, const struct place_cluster *c,
                             const int64_t *placed)
{
    size_t nn = c->n_nodes;
    __int128 got = 0, want = 0;
    for (size_t p = 0; p < v->wl->n_podsets; p++) {
        const struct place_podset *ps = &v->wl->podsets[p];
        int64_t tot = affinity_preferred_total(ps->affinity);
        if (tot <= 0)
            continue;
        want += (__int128)ps->count * tot;
        for (size_t i = 0; i < nn; i++)
            if (placed[p * nn + i] > 0)
                got += (__int128)placed[p * nn + i] *
                       affinity_preferred_score(ps->affinity, c->nodes[i].name, c->nodes[i].labels);
    }
    return want > 0 ? (int64_t)(got * PPM / want) : 0;
}

/* First-fit decreasing of the workload on cluster c. empty: ignore requests
 * and reservations (the "could it ever fit" question). */
/* Free amounts less the sums held per node, less this workload's own reservation. */
static void subtract_reserved(const struct wview *v, const struct place_cluster *c,
                              const struct place_resv *resv, int64_t *free_v)
{
    size_t nn = c->n_nodes, nr = v->nres;
    const struct resv_cluster *rc = strmap_get(&resv->by_cluster, c->name);
    for (size_t i = 0; rc && i < nn; i++) {
        const struct place_reslist *sum = strmap_get(&rc->nodes, c->nodes[i].name);
        for (size_t r = 0; sum && r < nr; r++)
            free_v[i * nr + r] = sat_add(free_v[i * nr + r], -place_reslist_get(sum, v->res[r]));
    }
    long own = rc ? resv_find(resv, v->wl->key) : -1;
    const struct place_resv_entry *en = own >= 0 ? &resv->v[own] : NULL;
    for (size_t k = 0; en && strcmp(en->cluster, c->name) == 0 && k < en->n_nodes; k++) {
        int i = node_index(c, en->node_names[k]);
        for (size_t r = 0; i >= 0 && r < nr; r++)
            free_v[(size_t)i * nr + r] =
                sat_add(free_v[(size_t)i * nr + r], place_reslist_get(&en->per_node[k], v->res[r]));
    }
}

static void eval_cluster(const struct wview *v, const struct place_cluster *c,
                         const struct place_resv *resv, bool empty, struct ceval *ev)
{
    memset(ev, 0, sizeof *ev);
    size_t nn = c->n_nodes, nr = v->nres, np = v->wl->n_podsets;
    ev->free = xcalloc((nn ? nn : 1) * (nr ? nr : 1), sizeof *ev->free);
    ev->placed = xcalloc((nn ? nn : 1) * (np ? np : 1), sizeof *ev->placed);
    /* The workload's resource axis in the cluster's resource index. */
    long *ci = xcalloc(nr ? nr : 1, sizeof *ci);
    for (size_t r = 0; r < nr; r++)
        ci[r] = res_index(c, v->res[r]);
    for (size_t i = 0; i < nn; i++)
        for (size_t r = 0; r < nr; r++) {
            int64_t al = ci[r] < 0 ? PLACE_ABSENT : c->nodes[i].alloc_v[ci[r]];
            int64_t rq = ci[r] < 0 ? PLACE_ABSENT : c->nodes[i].req_v[ci[r]];
            int64_t f;
            if (r == v->pods && al == PLACE_ABSENT)
                f = PODS_UNLIMITED;
            else
                f = al == PLACE_ABSENT ? 0 : al;
            if (!empty && rq != PLACE_ABSENT)
                f = sat_add(f, -rq);
            ev->free[i * nr + r] = f;
        }
    if (!empty && resv)
        subtract_reserved(v, c, resv, ev->free);
    for (size_t oi = 0; oi < np; oi++) {
        size_t p = v->order[oi];
        int64_t remaining = v->wl->podsets[p].count;
        for (size_t i = 0; i < nn && remaining > 0; i++) {
            if (!node_eligible(v, p, &c->nodes[i], empty))
                continue;
            int64_t k = v->wl->podsets[p].one_per_node ? 1 : remaining; /* repel: 1/node */
            for (size_t r = 0; r < nr; r++) {
                int64_t req = v->req[p * nr + r];
                if (req <= 0)
                    continue;
                int64_t f = ev->free[i * nr + r];
                int64_t fit = f <= 0 ? 0 : f / req;
                if (fit < k)
                    k = fit;
            }
            if (k <= 0)
                continue;
            ev->placed[p * nn + i] = k;
            for (size_t r = 0; r < nr; r++)
                ev->free[i * nr + r] -= k * v->req[p * nr + r];
            remaining -= k;
        }
        if (remaining > 0) {
            explain(v, c, p, v->wl->podsets[p].count - remaining, ev->free, empty, ev->why,
                    sizeof ev->why);
            goto out;
        }
    }
    ev->feasible = true;
    if (nr <= 1)
        goto out; /* only "pods": nothing to score */
    int64_t total = 0;
    for (size_t r = 0; r < nr; r++) {
        if (r == v->pods)
            continue;
        __int128 a = 0, f = 0;
        for (size_t i = 0; i < nn; i++) {
            if (!node_usable(&c->nodes[i]))
                continue;
            int64_t al = ci[r] < 0 ? 0 : c->nodes[i].alloc_v[ci[r]];
            a += al > 0 ? al : 0;
            f += ev->free[i * nr + r] > 0 ? ev->free[i * nr + r] : 0;
        }
        if (a > 0)
            total += (int64_t)(f * PPM / a);
    }
    ev->score_ppm = total / (int64_t)(nr - 1);
out:
    free(ci);
}

/* Fill the OK result from the evaluation of cluster c. */
static void fill_ok(const struct wview *v, const struct place_cluster *c, const struct ceval *ev,
                    const struct place_opts *opts, struct place_result *out)
{
    enum place_policy pol = opts->policy;
    size_t nn = c->n_nodes, np = v->wl->n_podsets, nr = v->nres;
    out->status = PLACE_OK;
    out->cluster = xstrdup(c->name);
    out->score_ppm = ev->score_ppm;
    size_t na = 0, nodes_used = 0;
    for (size_t i = 0; i < nn; i++) {
        bool used = false;
        for (size_t p = 0; p < np; p++)
            if (ev->placed[p * nn + i] > 0) {
                na++;
                used = true;
            }
        nodes_used += used;
    }
    out->assign = xcalloc(na ? na : 1, sizeof *out->assign);
    out->node_totals = xcalloc(nodes_used ? nodes_used : 1, sizeof *out->node_totals);
    out->node_names = xcalloc(nodes_used ? nodes_used : 1, sizeof *out->node_names);
    for (size_t i = 0; i < nn; i++) {
        bool used = false;
        for (size_t p = 0; p < np; p++) {
            int64_t k = ev->placed[p * nn + i];
            if (k <= 0)
                continue;
            out->assign[out->n_assign].podset = p;
            out->assign[out->n_assign].node = xstrdup(c->nodes[i].name);
            out->assign[out->n_assign].replicas = k;
            out->n_assign++;
            if (!used) {
                out->node_names[out->n_nodes] = xstrdup(c->nodes[i].name);
                out->n_nodes++;
                used = true;
            }
            for (size_t r = 0; r < nr; r++)
                place_reslist_add(&out->node_totals[out->n_nodes - 1], v->res[r],
                                  sat_mul(k, v->req[p * nr + r]));
        }
    }
    out->preferred_ppm = ev->preferred_ppm;
    struct buf left;
    buf_init(&left, 4096);
    for (size_t p = 0; p < np; p++)
        if (v->wl->podsets[p].left_to_worker)
            buf_printf(&left, "%spod set %s: %s", buf_str(&left)[0] ? "; " : "",
                       v->wl->podsets[p].name, v->wl->podsets[p].left_to_worker);
    /* percentages for people: the scores are parts per million. Spelled "percent", not '%':
     * the message becomes the admission check's, and Kueue passes that as the format string
     * of its UpdatedAdmissionCheck Event on the job ("99.6%!o(MISSING)f its capacity", seen
     * on the real stack) */
    char pref[96] = "";
    if (ev->preferred_ppm > 0)
        snprintf(pref, sizeof pref, ", preferred node affinity %.1f percent met",
                 (double)ev->preferred_ppm / 1e4);
    /* a pinned job had one candidate: say so and by what, not the policy that did not choose */
    char *how = opts->pinned
                    ? xasprintf("pinned by %s", opts->pinned_by ? opts->pinned_by : "the job")
                    : xstrdup(pol == PLACE_BINPACK ? "binpack, the fullest fit wins"
                                                   : "spread, the most free wins");
    out->message = xasprintf(
        "placed on cluster %s (%s: %.1f percent of its capacity free after placement%s)%s%s",
        c->name, how, (double)ev->score_ppm / 1e4, pref,
        buf_str(&left)[0] ? "; left to the worker's scheduler: " : "", buf_str(&left));
    free(how);
    if (buf_str(&left)[0])
        out->left_to_worker = buf_detach(&left);
    else
        buf_free(&left);
}

#define MSG_MAX_CLUSTERS 4

/* Cluster a (evaluated ea) ranks before b: preferred affinity, policy score, name. */
static bool ranks_before(const struct ceval *ea, const char *a, const struct ceval *eb,
                         const char *b, enum place_policy pol)
{
    if (ea->preferred_ppm != eb->preferred_ppm)
        return ea->preferred_ppm > eb->preferred_ppm;
    if (ea->score_ppm != eb->score_ppm)
        return pol == PLACE_BINPACK ? ea->score_ppm < eb->score_ppm : ea->score_ppm > eb->score_ppm;
    return strcmp(a, b) < 0;
}

static int pcluster_ptr_cmp(const void *a, const void *b)
{
    return strcmp((*(const struct place_cluster *const *)a)->name,
                  (*(const struct place_cluster *const *)b)->name);
}

/* The ready clusters placement may use (only the pinned one with a pin) into
 * cand, sorted by name: the callers collect clusters in store hash order, and
 * the messages list clusters in candidate order (ties already go to the
 * smaller name: ranks_before). *pin_seen: the pinned cluster is among
 * `clusters`. Returns how many. */
static size_t candidates(const struct place_cluster *clusters, size_t n, const char *pinned,
                         const struct place_cluster **cand, bool *pin_seen)
{
    size_t nc = 0;
    *pin_seen = false;
    for (size_t i = 0; i < n; i++) {
        if (pinned && strcmp(clusters[i].name, pinned) != 0)
            continue;
        *pin_seen = true;
        if (clusters[i].ready)
            cand[nc++] = &clusters[i];
    }
    qsort(cand, nc, sizeof *cand, pcluster_ptr_cmp);
    return nc;
}

/* opts' others and unknown, sorted by name (borrowed entries): the "never
 * fits" and "waiting for" messages name clusters in this order. */
struct sorted_rest {
    const struct place_cluster **others;
    const char **unknown;
};

static void sorted_rest_init(struct sorted_rest *r, const struct place_opts *opts)
{
    r->others = xcalloc(opts->n_others ? opts->n_others : 1, sizeof *r->others);
    for (size_t i = 0; i < opts->n_others; i++)
        r->others[i] = &opts->others[i];
    qsort(r->others, opts->n_others, sizeof *r->others, pcluster_ptr_cmp);
    r->unknown = xcalloc(opts->n_unknown ? opts->n_unknown : 1, sizeof *r->unknown);
    for (size_t i = 0; i < opts->n_unknown; i++)
        r->unknown[i] = opts->unknown[i];
    qsort(r->unknown, opts->n_unknown, sizeof *r->unknown, cstr_cmp);
}

static void sorted_rest_free(struct sorted_rest *r)
{
    free(r->others);
    free(r->unknown);
}

/* The best candidate that fits now, into out (PLACE_OK); false when none
 * does: `why` then says why not, per candidate. */
static bool fit_now(const struct wview *v, const struct place_cluster **cand, size_t nc,
                    const struct place_resv *resv, const struct place_opts *opts, struct buf *why,
                    struct place_result *out)
{
    int best = -1;
    struct ceval best_ev = {0};
    size_t listed = 0;
    for (size_t i = 0; i < nc; i++) {
        struct ceval ev;
        eval_cluster(v, cand[i], resv, false, &ev);
        ev.preferred_ppm = ev.feasible ? preferred_ppm(v, cand[i], ev.placed) : 0;
        if (!ev.feasible) {
            if (listed < MSG_MAX_CLUSTERS)
                buf_printf(why, "%s%s: %s", listed ? "; " : "", cand[i]->name, ev.why);
            listed++;
            ceval_free(&ev);
            continue;
        }
        bool better =
            best < 0 || ranks_before(&ev, cand[i]->name, &best_ev, cand[best]->name, opts->policy);
        if (better) {
            ceval_free(&best_ev);
            best_ev = ev;
            best = (int)i;
        } else {
            ceval_free(&ev);
        }
    }
    if (best >= 0)
        fill_ok(v, cand[best], &best_ev, opts, out);
    else if (listed > MSG_MAX_CLUSTERS)
        buf_printf(why, "; and %zu more", listed - MSG_MAX_CLUSTERS);
    ceval_free(&best_ev);
    return best >= 0;
}

/* Adds cluster c, judged empty, to `never` unless it could fit; true when it could. */
static bool fits_empty(const struct wview *v, const struct place_cluster *c, size_t *listed,
                       struct buf *never)
{
    struct ceval ev;
    eval_cluster(v, c, NULL, true, &ev);
    bool feasible = ev.feasible;
    if (!feasible && (*listed)++ < MSG_MAX_CLUSTERS)
        buf_printf(never, "%s%s: %s", *listed > 1 ? "; " : "", c->name, ev.why);
    ceval_free(&ev);
    return feasible;
}

/* Nothing fits now: could anything fit when empty? The candidates, then the
 * registered clusters that are not candidates (not with a pin: only the
 * pinned cluster matters then). `never` says why not per cluster, *listed
 * counts them. */
static bool fit_ever(const struct wview *v, const struct place_cluster **cand, size_t nc,
                     const struct place_opts *opts, const struct sorted_rest *rest, size_t *listed,
                     struct buf *never)
{
    bool ever = false;
    *listed = 0;
    for (size_t i = 0; i < nc; i++)
        ever = fits_empty(v, cand[i], listed, never) || ever;
    size_t n_others = opts->pinned ? 0 : opts->n_others;
    for (size_t i = 0; i < n_others && !ever; i++)
        ever = fits_empty(v, rest->others[i], listed, never);
    if (*listed > MSG_MAX_CLUSTERS)
        buf_printf(never, "; and %zu more", *listed - MSG_MAX_CLUSTERS);
    return ever;
}

/* NOT_NOW while clusters of unknown capacity could still fit it: the message
 * names them. */
static void wait_unknown(const struct place_opts *opts, const struct sorted_rest *rest,
                         size_t listed, const char *never, struct place_result *out)
{
    struct buf names;
    buf_init(&names, 1024);
    for (size_t i = 0; i < opts->n_unknown && i < MSG_MAX_CLUSTERS; i++)
        buf_printf(&names, "%s%s", i ? ", " : "", rest->unknown[i]);
    if (opts->n_unknown > MSG_MAX_CLUSTERS)
        buf_printf(&names, " and %zu more", opts->n_unknown - MSG_MAX_CLUSTERS);
    out->status = PLACE_NOT_NOW;
    out->message =
        xasprintf("no known cluster can fit it%s%s; waiting for the metrics of "
                  "%s %s (not known yet: no status, stale or not ready)",
                  listed ? ": " : "", never,
                  plural_of((long long)opts->n_unknown, "cluster", "clusters"), buf_str(&names));
    buf_free(&names);
}

/* Nothing fits now (nc candidates; `why` per candidate): NOT_NOW or NEVER with why. */
static void no_fit(const struct wview *v, const struct place_cluster **cand, size_t nc,
                   const struct place_opts *opts, const char *why, struct place_result *out)
{
    struct buf never;
    buf_init(&never, 4096);
    size_t listed;
    struct sorted_rest rest;
    sorted_rest_init(&rest, opts);
    bool ever = fit_ever(v, cand, nc, opts, &rest, &listed, &never);
    if (!ever && !opts->pinned && opts->n_unknown > 0) {
        wait_unknown(opts, &rest, listed, buf_str(&never), out); /* incomplete view: not final */
    } else if (nc == 0 && !ever && !opts->pinned && opts->n_others > 0) {
        out->status = PLACE_NEVER;
        out->message = xasprintf("no cluster can ever fit it, even empty: %s", buf_str(&never));
    } else if (nc == 0) {
        out->status = PLACE_NOT_NOW;
        out->message = xstrdup("no usable cluster");
    } else if (ever) {
        out->status = PLACE_NOT_NOW;
        out->message =
            opts->pinned
                ? xasprintf("pinned cluster %s cannot fit it now (waiting for capacity): %s",
                            opts->pinned, why)
                : xasprintf("no cluster fits it now (waiting for capacity): %s", why);
    } else {
        out->status = PLACE_NEVER;
        out->message =
            opts->pinned ? xasprintf("pinned cluster %s can never fit it, even empty: %s",
                                     opts->pinned, buf_str(&never))
                         : xasprintf("no cluster can ever fit it, even empty: %s", buf_str(&never));
    }
    sorted_rest_free(&rest);
    buf_free(&never);
}

int place_decide(const struct place_workload *wl, const struct place_cluster *clusters,
                 size_t n_clusters, const struct vocab_flavor *flavors, size_t n_flavors,
                 const struct place_resv *resv, const struct place_opts *opts,
                 struct place_result *out)
{
    if (!wl || !out || (n_clusters && !clusters))
        return -EINVAL;
    memset(out, 0, sizeof *out);
    static const struct place_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    if ((opts->n_others && !opts->others) || (opts->n_unknown && !opts->unknown))
        return -EINVAL;
    const struct place_cluster **cand = xcalloc(n_clusters ? n_clusters : 1, sizeof *cand);
    bool pin_seen;
    size_t nc = candidates(clusters, n_clusters, opts->pinned, cand, &pin_seen);
    if (opts->pinned && nc == 0) {
        out->status = pin_seen ? PLACE_NOT_NOW : PLACE_PIN_UNKNOWN;
        out->message =
            pin_seen ? xasprintf("pinned cluster %s is not ready", opts->pinned)
                     : xasprintf("pinned cluster %s is not a known, usable cluster", opts->pinned);
        free(cand);
        return 0;
    }
    struct wview v;
    wview_build(&v, wl, flavors, n_flavors);
    struct buf why;
    buf_init(&why, 4096);
    if (!fit_now(&v, cand, nc, resv, opts, &why, out))
        no_fit(&v, cand, nc, opts, buf_str(&why), out);
    buf_free(&why);
    wview_free(&v);
    free(cand);
    return 0;
}
