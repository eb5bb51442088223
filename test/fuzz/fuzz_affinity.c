/*
 * Fuzz target for pkg/sched/affinity. Input: a JSON document
 * {"affinity": ..., "node": {"name": ..., "labels": {...}}} (any other shape
 * is used as the affinity itself against an unnamed node without labels).
 * Properties: no crash; -EINVAL leaves *out NULL; a required affinity whose
 * text names no term matches no node; the preferred score of a node is
 * between 0 and the preferred total.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/sched/affinity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!j)
        return 0;
    const json_t *aff = json_object_get(j, "affinity") ? json_object_get(j, "affinity") : j;
    const json_t *node = json_object_get(j, "node");
    const char *name = json_string_value(json_object_get(node, "name"));
    const json_t *labels = json_object_get(node, "labels");
    struct affinity *a = NULL;
    struct err e;
    int rc = affinity_from_json(aff, &a, &e);
    if (rc != 0) {
        if (rc != -EINVAL || a)
            abort();
        json_decref(j);
        return 0;
    }
    bool m = affinity_required_matches(a, name, labels);
    if (affinity_has_required(a) &&
        strcmp(affinity_required_text(a), "(no terms: matches no node)") == 0 && m)
        abort();
    int64_t s = affinity_preferred_score(a, name, labels);
    if (s < 0 || s > affinity_preferred_total(a))
        abort();
    affinity_free(a);
    json_decref(j);
    return 0;
}
