/*
 * Fuzz target: a devhub request body. The bytes are parsed as a JSON object
 * (size-capped as the server does), validated against a few resources for
 * create and update, normalised, and the Status body built; the first byte
 * also selects a patch type so patch application sees the same input.
 * Nothing may crash, leak or trip a sanitizer.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "devhub/patch.h"
#include "devhub/validate.h"

static const struct valid_target targets[] = {
    {.group = "",
     .version = "v1",
     .kind = "Pod",
     .namespace = "default",
     .namespaced = true,
     .builtin = true},
    {.group = "batch",
     .version = "v1",
     .kind = "Job",
     .namespace = "default",
     .namespaced = true,
     .builtin = true,
     .name = "job"},
    {.group = "", .version = "v1", .kind = "Namespace", .namespaced = false, .builtin = true},
    {.group = "apps",
     .version = "v1",
     .kind = "Deployment",
     .namespace = "ns",
     .namespaced = true,
     .builtin = true},
    {.group = "",
     .version = "v1",
     .kind = "Service",
     .namespace = "ns",
     .namespaced = true,
     .builtin = true},
    {.group = "",
     .version = "v1",
     .kind = "ConfigMap",
     .namespace = "ns",
     .namespaced = true,
     .builtin = true},
    {.group = "apiextensions.k8s.io",
     .version = "v1",
     .kind = "CustomResourceDefinition",
     .namespaced = false,
     .builtin = true},
    {.group = "kueue.x-k8s.io",
     .version = "v1beta2",
     .kind = "Workload",
     .namespace = "default",
     .namespaced = true,
     .builtin = false},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct valid_result r;
    json_t *obj = NULL;
    if (valid_parse_body((const char *)data, size, 1 << 20, &obj, &r) != 0) {
        json_t *st = valid_status_body(&r);
        json_decref(st);
    } else {
        for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
            for (int op = VALID_CREATE; op <= VALID_UPDATE; op++) {
                if (valid_check(&targets[i], (enum valid_op)op, obj, &r) != 0) {
                    json_t *st = valid_status_body(&r);
                    char *s = json_dumps(st, JSON_COMPACT);
                    if (!s)
                        __builtin_trap(); /* the Status body must always serialise */
                    free(s);
                    json_decref(st);
                } else {
                    json_t *copy = json_deep_copy(obj);
                    valid_normalize(&targets[i], copy);
                    json_decref(copy);
                }
            }
        }
    }
    /* The same bytes as a patch of each type against a fixed Pod. */
    static const char pod[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":"
        "\"b\"},\"finalizers\":[\"x\"]},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
        "\"env\":[{\"name\":\"E\",\"value\":\"1\"}],\"ports\":[{\"containerPort\":80}]}]}}";
    json_t *target = json_loads(pod, 0, NULL);
    enum patch_type types[] = {PATCH_TYPE_JSON, PATCH_TYPE_MERGE, PATCH_TYPE_STRATEGIC};
    for (size_t i = 0; i < 3; i++) {
        json_t *out = NULL;
        struct err e;
        if (patch_apply(types[i], "Pod", true, target, (const char *)data, size, &out, &e) == 0)
            json_decref(out);
    }
    json_decref(target);
    json_decref(obj);
    return 0;
}
