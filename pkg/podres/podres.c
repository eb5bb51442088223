/* podres: per-pod effective requests and limits (see podres.h). */
#include "pkg/podres/podres.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/xalloc.h"

void podres_free(struct podres_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Index of `name`, or the insertion point with *found = false. */
static size_t find(const struct podres_list *l, const char *name, bool *found)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->v[mid].name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static struct podres_item *insert(struct podres_list *l, size_t at, const char *name)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    memmove(&l->v[at + 1], &l->v[at], (l->n - at) * sizeof *l->v);
    l->n++;
    l->v[at].name = xstrdup(name);
    memset(&l->v[at].q, 0, sizeof l->v[at].q);
    return &l->v[at];
}

const struct qty *podres_get(const struct podres_list *l, const char *name)
{
    bool found;
    size_t i = find(l, name, &found);
    return found ? &l->v[i].q : NULL;
}

void podres_set(struct podres_list *l, const char *name, const struct qty *q)
{
    bool found;
    size_t i = find(l, name, &found);
    struct podres_item *it = found ? &l->v[i] : insert(l, i, name);
    it->q = *q;
}

int podres_add(struct podres_list *l, const char *name, const struct qty *q, struct err *e)
{
    bool found;
    size_t i = find(l, name, &found);
    if (!found) {
        insert(l, i, name)->q = *q;
        return 0;
    }
    struct qty sum;
    int rc = qty_add(&l->v[i].q, q, &sum, e);
    if (rc < 0) {
        err_prefix(e, "%s", name);
        return rc;
    }
    l->v[i].q = sum;
    return 0;
}

void podres_max(struct podres_list *l, const char *name, const struct qty *q)
{
    bool found;
    size_t i = find(l, name, &found);
    if (!found)
        insert(l, i, name)->q = *q;
    else if (qty_cmp(q, &l->v[i].q) > 0)
        l->v[i].q = *q;
}

int podres_add_list(struct podres_list *dst, const struct podres_list *src, struct err *e)
{
    for (size_t i = 0; i < src->n; i++) {
        int rc = podres_add(dst, src->v[i].name, &src->v[i].q, e);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void podres_max_list(struct podres_list *dst, const struct podres_list *src)
{
    for (size_t i = 0; i < src->n; i++)
        podres_max(dst, src->v[i].name, &src->v[i].q);
}

void podres_copy(struct podres_list *dst, const struct podres_list *src)
{
    podres_free(dst);
    if (!src->n)
        return;
    dst->v = xcalloc(src->n, sizeof *dst->v);
    dst->n = dst->cap = src->n;
    for (size_t i = 0; i < src->n; i++) {
        dst->v[i].name = xstrdup(src->v[i].name);
        dst->v[i].q = src->v[i].q;
    }
}

bool podres_equal(const struct podres_list *a, const struct podres_list *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].name, b->v[i].name) || qty_cmp(&a->v[i].q, &b->v[i].q))
            return false;
    return true;
}

int podres_add_json(struct podres_list *out, const json_t *obj, const char *what, struct err *e)
{
    if (!obj || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return err_set(e, -EINVAL, "%s: not an object", what);
    json_t *o = (json_t *)obj; /* jansson's iterators take a non-const object */
    for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it)) {
        const char *k = json_object_iter_key(it);
        const json_t *v = json_object_iter_value(it);
        struct qty q;
        int rc = qty_parse_json(v, &q, e);
        if (rc < 0) {
            err_prefix(e, "%s.%s", what, k);
            return rc;
        }
        if (qty_sign(&q) < 0)
            return err_set(e, -EINVAL, "%s.%s: negative quantity %s", what, k, QTY_STR(&q));
        rc = podres_add(out, k, &q, e);
        if (rc < 0) {
            err_prefix(e, "%s", what);
            return rc;
        }
    }
    return 0;
}

json_t *podres_to_json(const struct podres_list *l)
{
    json_t *o = json_object();
    for (size_t i = 0; i < l->n; i++)
        json_object_set_new(o, l->v[i].name, qty_to_json(&l->v[i].q));
    return o;
}

/* One container's (or the pod-level) resources: requests (defaulted from
 * limits) and limits. */
static int container_res(const json_t *c, const char *what, struct podres_list *req,
                         struct podres_list *lim, struct err *e)
{
    char w[256];
    if (!json_is_object(c))
        return err_set(e, -EINVAL, "%s: not an object", what);
    const json_t *res = json_object_get(c, "resources");
    if (!res || json_is_null(res))
        return 0;
    if (!json_is_object(res))
        return err_set(e, -EINVAL, "%s.resources: not an object", what);
    snprintf(w, sizeof w, "%s.resources.requests", what);
    int rc = podres_add_json(req, json_object_get(res, "requests"), w, e);
    if (rc < 0)
        return rc;
    snprintf(w, sizeof w, "%s.resources.limits", what);
    rc = podres_add_json(lim, json_object_get(res, "limits"), w, e);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < lim->n; i++)
        if (!podres_get(req, lim->v[i].name))
            podres_set(req, lim->v[i].name, &lim->v[i].q);
    return 0;
}

static bool is_sidecar(const json_t *c)
{
    const char *rp = json_string_value(json_object_get(c, "restartPolicy"));
    return rp && !strcmp(rp, "Always");
}

static const json_t *pod_spec(const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    return spec ? spec : pod;
}

int podres_pod(const json_t *pod, struct podres_list *req_out, struct podres_list *lim_out,
               struct err *e)
{
    int rc = 0;
    char w[256];
    struct podres_list req = {0}, lim = {0};           /* containers + sidecars */
    struct podres_list side_req = {0}, side_lim = {0}; /* sidecars started so far */
    struct podres_list init_req = {0}, init_lim = {0}; /* max over init containers */
    struct podres_list one_req = {0}, one_lim = {0};
    const json_t *spec = pod_spec(pod);
    if (!json_is_object(spec)) {
        rc = err_set(e, -EINVAL, "pod spec: not an object");
        goto out;
    }
    const json_t *ctrs = json_object_get(spec, "containers");
    const json_t *inits = json_object_get(spec, "initContainers");
    if ((ctrs && !json_is_null(ctrs) && !json_is_array(ctrs)) ||
        (inits && !json_is_null(inits) && !json_is_array(inits))) {
        rc = err_set(e, -EINVAL, "spec.containers/initContainers: not an array");
        goto out;
    }
    for (size_t i = 0; i < json_array_size(ctrs); i++) {
        snprintf(w, sizeof w, "spec.containers[%zu]", i);
        rc = container_res(json_array_get(ctrs, i), w, &req, &lim, e);
        if (rc < 0)
            goto out;
    }
    for (size_t i = 0; i < json_array_size(inits); i++) {
        const json_t *c = json_array_get(inits, i);
        snprintf(w, sizeof w, "spec.initContainers[%zu]", i);
        podres_free(&one_req);
        podres_free(&one_lim);
        rc = container_res(c, w, &one_req, &one_lim, e);
        if (rc < 0)
            goto out;
        if (is_sidecar(c)) {
            /* Keeps running: adds to the pod and to later init containers. */
            if ((rc = podres_add_list(&req, &one_req, e)) < 0 ||
                (rc = podres_add_list(&lim, &one_lim, e)) < 0 ||
                (rc = podres_add_list(&side_req, &one_req, e)) < 0 ||
                (rc = podres_add_list(&side_lim, &one_lim, e)) < 0)
                goto out;
            podres_max_list(&init_req, &side_req);
            podres_max_list(&init_lim, &side_lim);
        } else {
            if ((rc = podres_add_list(&one_req, &side_req, e)) < 0 ||
                (rc = podres_add_list(&one_lim, &side_lim, e)) < 0)
                goto out;
            podres_max_list(&init_req, &one_req);
            podres_max_list(&init_lim, &one_lim);
        }
    }
    podres_max_list(&req, &init_req);
    podres_max_list(&lim, &init_lim);

    /* Pod-level resources replace the container figures they name. */
    const json_t *pres = json_object_get(spec, "resources");
    if (pres && !json_is_null(pres)) {
        podres_free(&one_req);
        podres_free(&one_lim);
        rc = container_res(spec, "spec", &one_req, &one_lim, e);
        if (rc < 0)
            goto out;
        for (size_t k = 0; k < one_req.n; k++)
            podres_set(&req, one_req.v[k].name, &one_req.v[k].q);
        for (size_t k = 0; k < one_lim.n; k++)
            podres_set(&lim, one_lim.v[k].name, &one_lim.v[k].q);
    }

    /* Overhead: on every request; on limits only where a limit exists. */
    podres_free(&one_req);
    rc = podres_add_json(&one_req, json_object_get(spec, "overhead"), "spec.overhead", e);
    if (rc < 0)
        goto out;
    rc = podres_add_list(&req, &one_req, e);
    if (rc < 0)
        goto out;
    for (size_t k = 0; k < one_req.n; k++)
        if (podres_get(&lim, one_req.v[k].name) &&
            (rc = podres_add(&lim, one_req.v[k].name, &one_req.v[k].q, e)) < 0)
            goto out;
out:
    if (rc < 0) {
        podres_free(&req);
        podres_free(&lim);
    }
    if (req_out) {
        podres_free(req_out);
        *req_out = req;
    } else {
        podres_free(&req);
    }
    if (lim_out) {
        podres_free(lim_out);
        *lim_out = lim;
    } else {
        podres_free(&lim);
    }
    podres_free(&side_req);
    podres_free(&side_lim);
    podres_free(&init_req);
    podres_free(&init_lim);
    podres_free(&one_req);
    podres_free(&one_lim);
    return rc;
}

bool podres_pod_counts(const json_t *pod)
{
    const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    if (!node || !node[0])
        return false;
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return !phase || (strcmp(phase, "Succeeded") && strcmp(phase, "Failed"));
}
