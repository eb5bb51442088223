/* sim_res: resource-list arithmetic and node matching for the simulators. */
#include "devhub/sim_res.h"

#include <string.h>

#include "pkg/podres/podres.h"
#include "pkg/quantity/quantity.h"
#include "pkg/sched/sched.h"

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
    struct podres_list req = {0};
    json_t *out = podres_pod(podspec, &req, NULL, NULL) < 0 ? json_object() : podres_to_json(&req);
    podres_free(&req);
    return out;
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
    return sched_selector_matches_json(node_selector, labels);
}

bool simres_tolerates_all(const json_t *tolerations, const json_t *taints)
{
    return sched_tolerates_all_json(tolerations, taints);
}
