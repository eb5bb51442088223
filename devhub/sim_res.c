/* sim_res: resource-list arithmetic and node matching for the simulators. */
#include "devhub/sim_res.h"

#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/quantity/quantity.h"

static struct qty get_qty(const json_t *list, const char *r)
{
    struct qty q = {0};
    json_t *v = list ? json_object_get(list, r) : NULL;
    if (v && qty_parse_json(v, &q, NULL))
        q = (struct qty){0};
    return q;
}

static void put_qty(json_t *list, const char *r, const struct qty *q)
{
    json_object_set_new(list, r, qty_to_json(q));
}

json_t *simres_pod_requests(const json_t *podspec)
{
    json_t *sum = json_object();
    size_t i;
    json_t *c;
    json_array_foreach(jx_arr(podspec, "containers"), i, c)
    {
        json_t *req = jx_obj(c, "resources.requests");
        json_t *lim = jx_obj(c, "resources.limits");
        const char *k;
        json_t *v;
        json_object_foreach(lim, k, v)
        {
            if (!req || !json_object_get(req, k)) {
                json_t *one = json_pack("{sO}", k, v);
                simres_add(sum, one, 1);
                json_decref(one);
            }
        }
        if (req)
            simres_add(sum, req, 1);
    }
    json_array_foreach(jx_arr(podspec, "initContainers"), i, c)
    {
        json_t *req = jx_obj(c, "resources.requests");
        if (!req)
            req = jx_obj(c, "resources.limits");
        const char *k;
        json_t *v;
        json_object_foreach(req, k, v)
        {
            struct qty a = get_qty(sum, k), b = get_qty(req, k);
            if (qty_cmp(&b, &a) > 0)
                put_qty(sum, k, &b);
        }
    }
    return sum;
}

void simres_add(json_t *acc, const json_t *add, int64_t times)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)add, k, v)
    {
        struct qty a = get_qty(acc, k), b = get_qty(add, k), m, s;
        if (qty_mul_int(&b, times, &m, NULL) || qty_add(&a, &m, &s, NULL))
            continue;
        put_qty(acc, k, &s);
    }
}

void simres_sub(json_t *acc, const json_t *sub)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)sub, k, v)
    {
        struct qty a = get_qty(acc, k), b = get_qty(sub, k), s;
        if (qty_sub(&a, &b, &s, NULL))
            continue;
        put_qty(acc, k, &s);
    }
}

bool simres_fits(const json_t *req, const json_t *used, const json_t *cap, const char **short_of)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)req, k, v)
    {
        struct qty r = get_qty(req, k), u = get_qty(used, k), c = get_qty(cap, k), s;
        if (qty_sign(&r) <= 0)
            continue;
        if (qty_add(&u, &r, &s, NULL) || qty_cmp(&s, &c) > 0) {
            if (short_of)
                *short_of = k;
            return false;
        }
    }
    return true;
}

int simres_cmp(const json_t *a, const json_t *b, const char *resource)
{
    struct qty x = get_qty(a, resource), y = get_qty(b, resource);
    return qty_cmp(&x, &y);
}

bool simres_is_zero(const json_t *l)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)l, k, v)
    {
        struct qty q = get_qty(l, k);
        if (!qty_is_zero(&q))
            return false;
    }
    return true;
}

bool simres_selector_matches(const json_t *node_selector, const json_t *labels)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)node_selector, k, v)
    {
        const char *have = json_string_value(labels ? json_object_get(labels, k) : NULL);
        if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)))
            return false;
    }
    return true;
}

static bool tolerates(const json_t *t, const json_t *taint)
{
    const char *tk = jx_str(t, "key", ""), *op = jx_str(t, "operator", "Equal");
    const char *te = jx_str(t, "effect", "");
    const char *k = jx_str(taint, "key", ""), *val = jx_str(taint, "value", "");
    const char *eff = jx_str(taint, "effect", "");
    if (*te && strcmp(te, eff))
        return false;
    if (!strcmp(op, "Exists"))
        return !*tk || !strcmp(tk, k);
    return !strcmp(tk, k) && !strcmp(jx_str(t, "value", ""), val);
}

bool simres_tolerates_all(const json_t *tolerations, const json_t *taints)
{
    size_t i, j;
    json_t *taint, *t;
    json_array_foreach((json_t *)taints, i, taint)
    {
        const char *eff = jx_str(taint, "effect", "");
        if (strcmp(eff, "NoSchedule") && strcmp(eff, "NoExecute"))
            continue;
        bool ok = false;
        json_array_foreach((json_t *)tolerations, j, t)
        {
            if (tolerates(t, taint)) {
                ok = true;
                break;
            }
        }
        if (!ok)
            return false;
    }
    return true;
}
