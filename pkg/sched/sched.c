/* sched: toleration and nodeSelector matching (see sched.h). */
#include "pkg/sched/sched.h"

#include <string.h>

#include "pkg/json/jsonx.h"

static const char *nz(const char *s)
{
    return s ? s : "";
}

enum sched_op sched_op_parse(const char *op)
{
    if (!op || !op[0] || strcmp(op, "Equal") == 0)
        return SCHED_OP_EQUAL;
    if (strcmp(op, "Exists") == 0)
        return SCHED_OP_EXISTS;
    return SCHED_OP_INVALID;
}

bool sched_tolerates(const struct sched_toleration *t, const struct sched_taint *taint)
{
    const char *te = nz(t->effect), *tk = nz(t->key);
    if (te[0] && strcmp(te, nz(taint->effect)) != 0)
        return false;
    if (tk[0] && strcmp(tk, nz(taint->key)) != 0)
        return false;
    switch (t->op) {
    case SCHED_OP_EXISTS:
        return true;
    case SCHED_OP_EQUAL:
        return strcmp(nz(t->value), nz(taint->value)) == 0;
    default:
        return false;
    }
}

bool sched_effect_blocks(const char *effect)
{
    return effect && (strcmp(effect, "NoSchedule") == 0 || strcmp(effect, "NoExecute") == 0);
}

void sched_taint_view(const json_t *j, struct sched_taint *out)
{
    out->key = jx_field_str(j, "key");
    out->value = jx_field_str(j, "value");
    out->effect = jx_field_str(j, "effect");
}

void sched_toleration_view(const json_t *j, struct sched_toleration *out)
{
    const json_t *op = json_object_get(j, "operator");
    out->key = jx_field_str(j, "key");
    out->op = (!op || json_is_null(op)) ? SCHED_OP_EQUAL
              : json_is_string(op)      ? sched_op_parse(json_string_value(op))
                                        : SCHED_OP_INVALID;
    out->value = jx_field_str(j, "value");
    out->effect = jx_field_str(j, "effect");
}

bool sched_tolerates_all_json(const json_t *tolerations, const json_t *taints)
{
    size_t nt = json_is_array(taints) ? json_array_size(taints) : 0;
    size_t ntol = json_is_array(tolerations) ? json_array_size(tolerations) : 0;
    for (size_t i = 0; i < nt; i++) {
        struct sched_taint taint;
        sched_taint_view(json_array_get(taints, i), &taint);
        if (!sched_effect_blocks(taint.effect))
            continue;
        bool ok = false;
        for (size_t k = 0; k < ntol && !ok; k++) {
            struct sched_toleration t;
            sched_toleration_view(json_array_get(tolerations, k), &t);
            ok = sched_tolerates(&t, &taint);
        }
        if (!ok)
            return false;
    }
    return true;
}

bool sched_label_matches(const json_t *labels, const char *key, const char *value)
{
    const char *have = json_string_value(json_object_get(labels, key));
    return have && value && strcmp(have, value) == 0;
}

bool sched_selector_matches_json(const json_t *selector, const json_t *labels)
{
    if (!json_is_object(selector))
        return true;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)selector, k, v)
    {
        if (!sched_label_matches(labels, k, json_string_value(v)))
            return false;
    }
    return true;
}
