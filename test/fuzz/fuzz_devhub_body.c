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
#include <stdlib.h>
#include <string.h>

#include "devhub/patch.h"
#include "devhub/table.h"
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
    /* Table printers over the object, and its "columns" as CRD printer columns. */
    if (obj) {
        json_t *items = json_array();
        json_array_append(items, obj);
        struct table_opts o = {.include = TABLE_INCLUDE_OBJECT, .now = 1700000000};
        static const char *const kinds[][2] = {{"", "Pod"},
                                               {"batch", "Job"},
                                               {"", "Node"},
                                               {"", "Event"},
                                               {"", "Service"},
                                               {"apps", "Deployment"},
                                               {"events.k8s.io", "Event"},
                                               {"rbac.authorization.k8s.io", "RoleBinding"},
                                               {"x", "Y"}};
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
            struct table_printer *p = table_printer_builtin(kinds[i][0], kinds[i][1]);
            json_decref(table_build(p, items, &o));
            table_printer_free(p);
        }
        struct table_printer *p = table_printer_crd(json_object_get(obj, "columns"), NULL);
        if (p) {
            json_decref(table_build(p, items, &o));
            table_printer_free(p);
        }
        json_decref(items);
    }
    /* The bytes as a jsonPath expression. */
    char *expr = malloc(size + 1);
    memcpy(expr, data, size);
    expr[size] = '\0';
    json_t *res = NULL;
    if (table_jsonpath(expr, obj ? obj : json_null(), &res, NULL) == 0)
        json_decref(res);
    free(expr);

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
