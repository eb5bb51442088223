/* Unit tests for devhub/fields: unknown fields of built-ins and CRD schemas. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/fields.h"

static json_t *J(const char *s)
{
    json_error_t je;
    json_t *v = json_loads(s, 0, &je);
    if (!v)
        fail_msg("bad test JSON %s: %s", s, je.text);
    return v;
}

/* The paths as one comma-separated string. */
static char *joined(const json_t *paths)
{
    json_t *a = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(paths, i, p) json_array_append(a, p);
    char *s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return s;
}

static void test_mode(void **state)
{
    (void)state;
    enum fields_mode m;
    assert_int_equal(fields_mode_parse(NULL, &m), 0);
    assert_int_equal(m, FIELDS_WARN);
    assert_int_equal(fields_mode_parse("", &m), 0);
    assert_int_equal(m, FIELDS_WARN);
    assert_int_equal(fields_mode_parse("Strict", &m), 0);
    assert_int_equal(m, FIELDS_STRICT);
    assert_int_equal(fields_mode_parse("Ignore", &m), 0);
    assert_int_equal(m, FIELDS_IGNORE);
    assert_int_equal(fields_mode_parse("strict", &m), -EINVAL);
}

static void test_job(void **state)
{
    (void)state;
    json_t *job = J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
                    "\"labelz\":{}},\"spec\":{\"paralelism\":2,\"parallelism\":1,\"template\":{"
                    "\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"restartPolicy\":\"Never\","
                    "\"containers\":[{\"name\":\"c\",\"image\":\"i\"},{\"name\":\"d\",\"image\":"
                    "\"i\",\"imagePullPolicyy\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"},"
                    "\"limitz\":{}},\"env\":[{\"name\":\"A\",\"valueFrom\":{\"fieldRef\":{"
                    "\"fieldPath\":\"x\",\"bogus\":1}}}],\"securityContext\":{\"anything\":1}}]}}},"
                    "\"status\":{\"conditions\":[{\"type\":\"Complete\",\"extra\":1}]},\"top\":1}");
    json_t *paths = json_array();
    assert_int_equal(fields_prune_builtin("batch", "Job", job, paths), 7);
    char *s = joined(paths);
    assert_string_equal(s, "[\"metadata.labelz\",\"spec.paralelism\","
                           "\"spec.template.spec.containers[1].imagePullPolicyy\","
                           "\"spec.template.spec.containers[1].resources.limitz\","
                           "\"spec.template.spec.containers[1].env[0].valueFrom.fieldRef.bogus\","
                           "\"status.conditions[0].extra\",\"top\"]");
    free(s);
    /* removed; known fields and opaque types (securityContext) kept */
    assert_null(json_object_get(json_object_get(job, "spec"), "paralelism"));
    assert_non_null(json_object_get(json_object_get(job, "spec"), "parallelism"));
    json_t *cs = json_object_get(
        json_object_get(json_object_get(json_object_get(job, "spec"), "template"), "spec"),
        "containers");
    json_t *c1 = json_array_get(cs, 1);
    assert_null(json_object_get(c1, "imagePullPolicyy"));
    assert_non_null(json_object_get(json_object_get(c1, "securityContext"), "anything"));
    char *m = fields_strict_message(paths);
    assert_string_equal(m, "strict decoding error: unknown field \"metadata.labelz\", unknown "
                           "field \"spec.paralelism\", unknown field "
                           "\"spec.template.spec.containers[1].imagePullPolicyy\", unknown field "
                           "\"spec.template.spec.containers[1].resources.limitz\", unknown field "
                           "\"spec.template.spec.containers[1].env[0].valueFrom.fieldRef.bogus\", "
                           "unknown field \"status.conditions[0].extra\", unknown field \"top\"");
    free(m);
    json_decref(paths);
    paths = json_array();
    /* pruned: a second pass finds nothing */
    assert_int_equal(fields_prune_builtin("batch", "Job", job, paths), 0);
    json_decref(paths);
    json_decref(job);
}

static void test_other_builtins(void **state)
{
    (void)state;
    struct {
        const char *group, *kind, *body, *want;
    } cases[] = {
        {"", "Pod",
         "{\"spec\":{\"containers\":[{\"name\":\"c\",\"portz\":[]}],\"nodeName\":\"n\"}}",
         "[\"spec.containers[0].portz\"]"},
        {"", "ConfigMap", "{\"data\":{\"a\":\"b\"},\"date\":{}}", "[\"date\"]"},
        {"", "Secret", "{\"stringData\":{},\"type\":\"Opaque\",\"typ\":1}", "[\"typ\"]"},
        {"", "Namespace", "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"finalizers\":[]}}", "[]"},
        {"apps", "Deployment",
         "{\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{},\"matchExpression\":[]},"
         "\"template\":{\"spec\":{\"containers\":[]}}}}",
         "[\"spec.selector.matchExpression\"]"},
        {"", "Node", "{\"spec\":{\"taints\":[{\"key\":\"k\",\"effects\":\"x\"}]},\"status\":{}}",
         "[\"spec.taints[0].effects\"]"},
        {"coordination.k8s.io", "Lease", "{\"spec\":{\"holderIdentity\":\"a\",\"renew\":1}}",
         "[\"spec.renew\"]"},
        {"", "Event", "{\"involvedObject\":{\"kind\":\"Pod\",\"nam\":\"x\"},\"reason\":\"r\"}",
         "[\"involvedObject.nam\"]"},
        {"events.k8s.io", "Event", "{\"regarding\":{\"kind\":\"Pod\"},\"note\":\"n\",\"notes\":1}",
         "[\"notes\"]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_true(fields_known_builtin(cases[i].group, cases[i].kind));
        json_t *o = J(cases[i].body);
        json_t *paths = json_array();
        fields_prune_builtin(cases[i].group, cases[i].kind, o, paths);
        char *s = joined(paths);
        assert_string_equal(s, cases[i].want);
        free(s);
        json_decref(paths);
        json_decref(o);
    }
    /* A kind without a table keeps everything. */
    assert_false(fields_known_builtin("", "ServiceAccount"));
    json_t *o = J("{\"whatever\":1}");
    json_t *paths = json_array();
    assert_int_equal(fields_prune_builtin("", "ServiceAccount", o, paths), 0);
    assert_non_null(json_object_get(o, "whatever"));
    json_decref(paths);
    json_decref(o);
}

static void test_schema(void **state)
{
    (void)state;
    json_t *schema =
        J("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
          "\"queue\":{\"type\":\"string\"},"
          "\"groups\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
          "\"name\":{\"type\":\"string\"}}}},"
          "\"labels\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
          "\"free\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true,"
          "\"properties\":{\"known\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
          "\"string\"}}}}},"
          "\"template\":{\"type\":\"object\",\"x-kubernetes-embedded-resource\":true,"
          "\"properties\":{\"spec\":{\"type\":\"object\"}}}}},"
          "\"status\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}");
    json_t *cr = J("{\"apiVersion\":\"x/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"n\","
                   "\"bogus\":1},\"spec\":{\"queue\":\"q\",\"qeue\":\"x\",\"groups\":[{\"name\":"
                   "\"a\",\"nam\":1}],\"labels\":{\"any\":\"thing\"},\"free\":{\"x\":1,\"known\":"
                   "{\"a\":\"1\",\"b\":2}},\"template\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
                   "\"metadata\":{\"name\":\"p\",\"x\":1},\"spec\":{\"dropped\":1}}},"
                   "\"status\":{\"anything\":{}},\"extra\":1}");
    json_t *paths = json_array();
    assert_int_equal(fields_prune_schema(schema, cr, paths), 7);
    char *s = joined(paths);
    assert_string_equal(s, "[\"metadata.bogus\",\"spec.qeue\",\"spec.groups[0].nam\","
                           "\"spec.free.known.b\",\"spec.template.metadata.x\","
                           "\"spec.template.spec.dropped\",\"extra\"]");
    free(s);
    json_decref(paths);
    /* kept: preserved fields, map entries, embedded apiVersion/kind */
    assert_non_null(json_object_get(json_object_get(json_object_get(cr, "spec"), "free"), "x"));
    assert_non_null(json_object_get(json_object_get(json_object_get(cr, "spec"), "labels"), "any"));
    assert_non_null(
        json_object_get(json_object_get(json_object_get(cr, "spec"), "template"), "kind"));
    assert_non_null(json_object_get(json_object_get(cr, "status"), "anything"));
    json_decref(cr);
    /* No schema: only metadata is checked. */
    cr = J("{\"metadata\":{\"nam\":1},\"spec\":{\"x\":1}}");
    paths = json_array();
    assert_int_equal(fields_prune_schema(NULL, cr, paths), 1);
    json_decref(paths);
    json_decref(cr);
    json_decref(schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode),
        cmocka_unit_test(test_job),
        cmocka_unit_test(test_other_builtins),
        cmocka_unit_test(test_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
