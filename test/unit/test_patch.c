/* Unit tests for devhub/patch: RFC 7386, RFC 6902 and strategic merge patch. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/patch.h"

static json_t *J(const char *s)
{
    json_error_t je;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad test JSON %s: %s", s, je.text);
    return v;
}

/* Compare got (consumed) with the JSON text want; arrays are order-sensitive. */
static void expect_json(json_t *got, const char *want)
{
    json_t *w = J(want);
    if (!json_equal(got, w)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
        char *x = json_dumps(w, JSON_COMPACT | JSON_ENCODE_ANY);
        print_error("got  %s\nwant %s\n", g, x);
        free(g);
        free(x);
        json_decref(got);
        json_decref(w);
        fail();
    }
    json_decref(got);
    json_decref(w);
}

/* ---- RFC 7386 appendix A -------------------------------------------------- */

static void test_merge_rfc7386(void **state)
{
    (void)state;
    static const char *cases[][3] = {
        {"{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
        {"{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}"},
        {"{\"a\":\"b\"}", "{\"a\":null}", "{}"},
        {"{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}"},
        {"{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
        {"{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}"},
        {"{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}"},
        {"{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}"},
        {"[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]"},
        {"{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]"},
        {"{\"a\":\"foo\"}", "null", "null"},
        {"{\"a\":\"foo\"}", "\"bar\"", "\"bar\""},
        {"{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}"},
        {"[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}"},
        {"{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *t = J(cases[i][0]), *p = J(cases[i][1]), *out = NULL;
        assert_int_equal(patch_merge(t, p, &out, NULL), 0);
        expect_json(out, cases[i][2]);
        /* The target is never modified. */
        expect_json(t, cases[i][0]);
        json_decref(p);
    }
}

/* ---- RFC 6902 appendix A -------------------------------------------------- */

static int jp(const char *doc, const char *patch, json_t **out, struct err *e)
{
    json_t *d = J(doc), *p = J(patch);
    int rc = patch_json(d, p, out, e);
    json_decref(d);
    json_decref(p);
    return rc;
}

static void test_json_patch_rfc6902(void **state)
{
    (void)state;
    static const char *ok[][3] = {
        /* A.1 */
        {"{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
         "{\"baz\":\"qux\",\"foo\":\"bar\"}"},
        /* A.2 */
        {"{\"foo\":[\"bar\",\"baz\"]}", "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
         "{\"foo\":[\"bar\",\"qux\",\"baz\"]}"},
        /* A.3 */
        {"{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"remove\",\"path\":\"/baz\"}]",
         "{\"foo\":\"bar\"}"},
        /* A.4 */
        {"{\"foo\":[\"bar\",\"qux\",\"baz\"]}", "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
         "{\"foo\":[\"bar\",\"baz\"]}"},
        /* A.5 */
        {"{\"baz\":\"qux\",\"foo\":\"bar\"}",
         "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
         "{\"baz\":\"boo\",\"foo\":\"bar\"}"},
        /* A.6 */
        {"{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
         "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
         "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}"},
        /* A.7 */
        {"{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
         "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
         "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}"},
        /* A.8 */
        {"{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
         "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},"
         "{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
         "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}"},
        /* A.10 */
        {"{\"foo\":\"bar\"}",
         "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":{}}}]",
         "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}"},
        /* A.11 */
        {"{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"xyz\":123}]",
         "{\"foo\":\"bar\",\"baz\":\"qux\"}"},
        /* A.14 */
        {"{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]",
         "{\"/\":9,\"~1\":10}"},
        /* A.16 */
        {"{\"foo\":[\"bar\"]}",
         "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
         "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}"},
        /* copy, ~1 escape, test of a float against an integer, whole-document replace */
        {"{\"a\":{\"b\":1}}", "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/c\"}]",
         "{\"a\":{\"b\":1},\"c\":{\"b\":1}}"},
        {"{\"metadata\":{\"labels\":{}}}",
         "[{\"op\":\"add\",\"path\":\"/metadata/labels/app.kubernetes.io~1name\",\"value\":\"x\"}]",
         "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"x\"}}}"},
        {"{\"n\":1}", "[{\"op\":\"test\",\"path\":\"/n\",\"value\":1.0}]", "{\"n\":1}"},
        {"{\"n\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"m\":2}}]", "{\"m\":2}"},
        {"{\"n\":1}", "[{\"op\":\"add\",\"path\":\"/v\",\"value\":null}]", "{\"n\":1,\"v\":null}"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        json_t *out = NULL;
        struct err e = {0};
        int rc = jp(ok[i][0], ok[i][1], &out, &e);
        if (rc)
            fail_msg("case %zu: %s", i, e.msg);
        expect_json(out, ok[i][2]);
    }

    static const char *bad[][3] = {
        /* A.9 */
        {"{\"baz\":\"qux\"}", "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]",
         "testing value /baz failed: test failed"},
        /* A.12 */
        {"{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]",
         "add operation does not apply: doc is missing path: \"/baz/bat\": missing value"},
        /* A.15 */
        {"{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]",
         "testing value /~01 failed: test failed"},
        {"{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]",
         "remove operation does not apply: doc is missing path: \"/b\": missing value"},
        {"{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":2}]",
         "replace operation does not apply: doc is missing key: /b: missing value"},
        {"{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/5\",\"value\":2}]",
         "add operation does not apply: index out of range: \"/a/5\""},
        {"{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/01\",\"value\":2}]",
         "add operation does not apply: index out of range: \"/a/01\""},
        {"{\"a\":1}", "[{\"op\":\"frob\",\"path\":\"/a\"}]", "Unexpected kind: frob"},
        {"{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/b\"}]",
         "add operation: missing \"value\" for path /b"},
        {"{\"a\":1}", "[{\"op\":\"add\",\"path\":\"a\",\"value\":1}]",
         "JSON pointer must be empty or start with '/': a"},
        {"{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/~2\",\"value\":1}]",
         "invalid escape in JSON pointer: /~2"},
        {"{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b/c\"}]",
         "move operation does not apply: \"/a/b/c\" is a child of \"/a\""},
        {"{\"a\":1}", "[{\"op\":\"move\",\"path\":\"/b\"}]", "move operation: missing \"from\""},
        {"{\"a\":1}", "[{\"op\":\"copy\",\"from\":\"/x\",\"path\":\"/b\"}]",
         "copy operation does not apply: doc is missing from path: \"/x\": missing value"},
        {"{\"a\":1}", "[7]", "operation 0 is not a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *out = NULL;
        struct err e = {0};
        assert_int_equal(jp(bad[i][0], bad[i][1], &out, &e), PATCH_EFAILED);
        assert_null(out);
        assert_string_equal(e.msg, bad[i][2]);
        assert_int_equal(e.http_status, 422);
        assert_string_equal(e.reason, "Invalid");
    }

    /* Not an array: 400. A failing op leaves no partial result. */
    json_t *out = NULL;
    struct err e = {0};
    assert_int_equal(jp("{}", "{\"op\":\"add\"}", &out, &e), PATCH_EBAD);
    assert_int_equal(e.http_status, 400);
    assert_string_equal(e.reason, "BadRequest");
    assert_int_equal(jp("{\"a\":1}",
                        "[{\"op\":\"add\",\"path\":\"/b\",\"value\":2},"
                        "{\"op\":\"test\",\"path\":\"/a\",\"value\":3}]",
                        &out, &e),
                     PATCH_EFAILED);
    assert_null(out);
}

static void test_json_patch_too_many_ops(void **state)
{
    (void)state;
    json_t *ops = json_array();
    for (int i = 0; i <= PATCH_MAX_JSON_OPS; i++)
        json_array_append_new(ops,
                              json_pack("{s:s,s:s,s:i}", "op", "add", "path", "/x", "value", i));
    json_t *doc = json_object(), *out = NULL;
    struct err e = {0};
    assert_int_equal(patch_json(doc, ops, &out, &e), PATCH_ETOOLARGE);
    assert_int_equal(e.http_status, 413);
    assert_string_equal(e.msg, "Request entity too large: The allowed maximum operations in a "
                               "JSON patch is 10000, got 10001");
    json_t *st = patch_status_body(&e);
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "RequestEntityTooLarge");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 413);
    assert_string_equal(json_string_value(json_object_get(st, "message")), e.msg);
    json_decref(st);
    json_array_remove(ops, 0);
    assert_int_equal(patch_json(doc, ops, &out, &e), 0);
    expect_json(out, "{\"x\":10000}");
    json_decref(ops);
    json_decref(doc);
}

/* ---- content types and patch_apply ------------------------------------------ */

static void test_content_types(void **state)
{
    (void)state;
    enum patch_type t;
    struct err e = {0};
    assert_int_equal(patch_type_from_content_type("application/merge-patch+json", &t, &e), 0);
    assert_int_equal(t, PATCH_TYPE_MERGE);
    assert_int_equal(
        patch_type_from_content_type("application/json-patch+json; charset=utf-8", &t, &e), 0);
    assert_int_equal(t, PATCH_TYPE_JSON);
    assert_int_equal(patch_type_from_content_type("Application/Strategic-Merge-Patch+JSON", &t, &e),
                     0);
    assert_int_equal(t, PATCH_TYPE_STRATEGIC);
    assert_int_equal(patch_type_from_content_type("application/apply-patch+yaml", &t, &e), 0);
    assert_int_equal(t, PATCH_TYPE_APPLY);
    assert_string_equal(patch_type_name(PATCH_TYPE_STRATEGIC),
                        "application/strategic-merge-patch+json");
    assert_int_equal(patch_type_from_content_type("application/json", &t, &e), PATCH_EUNSUPPORTED);
    assert_int_equal(e.http_status, 415);
    assert_string_equal(e.reason, "UnsupportedMediaType");
    assert_string_equal(e.msg, "the body of the request was in an unknown format - accepted media "
                               "types include: application/json-patch+json, "
                               "application/merge-patch+json, "
                               "application/strategic-merge-patch+json, "
                               "application/apply-patch+yaml");
    assert_int_equal(patch_type_from_content_type(NULL, &t, &e), PATCH_EUNSUPPORTED);
}

static void test_apply_dispatch(void **state)
{
    (void)state;
    json_t *obj = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
                    "\"labels\":{\"x\":\"1\",\"y\":\"2\"}},\"data\":{\"k\":\"v\"}}");
    json_t *out = NULL;
    struct err e = {0};
    const char *mp = "{\"metadata\":{\"labels\":{\"x\":null,\"z\":\"3\"}}}";
    assert_int_equal(
        patch_apply(PATCH_TYPE_MERGE, "ConfigMap", true, obj, mp, strlen(mp), &out, &e), 0);
    expect_json(out, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
                     "\"labels\":{\"y\":\"2\",\"z\":\"3\"}},\"data\":{\"k\":\"v\"}}");
    /* Strategic merge: allowed for built-ins, 415 for custom resources. */
    assert_int_equal(
        patch_apply(PATCH_TYPE_STRATEGIC, "ConfigMap", true, obj, mp, strlen(mp), &out, &e), 0);
    json_decref(out);
    out = NULL;
    assert_int_equal(
        patch_apply(PATCH_TYPE_STRATEGIC, "Workload", false, obj, mp, strlen(mp), &out, &e),
        PATCH_EUNSUPPORTED);
    assert_int_equal(e.http_status, 415);
    assert_string_equal(e.msg, "the body of the request was in an unknown format - accepted media "
                               "types include: application/json-patch+json, "
                               "application/merge-patch+json, application/apply-patch+yaml");
    assert_null(out);
    assert_int_equal(
        patch_apply(PATCH_TYPE_APPLY, "ConfigMap", true, obj, mp, strlen(mp), &out, &e),
        PATCH_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, "server-side apply"));
    /* Bad JSON is 400; a body is not NUL-terminated necessarily. */
    assert_int_equal(patch_apply(PATCH_TYPE_MERGE, "ConfigMap", true, obj, "{\"a\":", 5, &out, &e),
                     PATCH_EBAD);
    assert_int_equal(e.http_status, 400);
    assert_non_null(strstr(e.msg, "error decoding patch"));
    const char *jpatch = "[{\"op\":\"replace\",\"path\":\"/data/k\",\"value\":\"w\"}]XXXX";
    assert_int_equal(
        patch_apply(PATCH_TYPE_JSON, "ConfigMap", true, obj, jpatch, strlen(jpatch) - 4, &out, &e),
        0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(out, "data"), "k")), "w");
    json_decref(out);
    json_decref(obj);
}

/* ---- strategic merge patch ----------------------------------------------- */

static void sm_expect(const char *kind, const char *orig, const char *patch, const char *want)
{
    json_t *o = J(orig), *p = J(patch), *out = NULL;
    struct err e = {0};
    int rc = patch_strategic(o, p, kind, &out, &e);
    if (rc)
        fail_msg("strategic patch failed: %s", e.msg);
    expect_json(out, want);
    json_decref(o);
    json_decref(p);
}

static void test_sm_containers_by_name(void **state)
{
    (void)state;
    sm_expect("Pod",
              "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"},"
              "{\"name\":\"b\",\"image\":\"y\",\"args\":[\"1\",\"2\"]}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"z\",\"args\":[\"3\"]}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"},"
              "{\"name\":\"b\",\"image\":\"z\",\"args\":[\"3\"]}]}}");
    /* A new container is appended; env merges by name inside a pod template. */
    sm_expect("Deployment",
              "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":["
              "{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"2\"}]}]}}}}",
              "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":["
              "{\"name\":\"B\",\"value\":\"3\"}]},{\"name\":\"c\",\"image\":\"i\"}]}}}}",
              "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":["
              "{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"3\"}]},"
              "{\"name\":\"c\",\"image\":\"i\"}]}}}}");
    /* Ports by containerPort, volumeMounts by mountPath. */
    sm_expect("Pod",
              "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,"
              "\"name\":\"http\"}],\"volumeMounts\":[{\"mountPath\":\"/d\",\"name\":\"v\"}]}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,"
              "\"protocol\":\"TCP\"},{\"containerPort\":443}],\"volumeMounts\":[{\"mountPath\":"
              "\"/d\",\"readOnly\":true}]}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,"
              "\"name\":\"http\",\"protocol\":\"TCP\"},{\"containerPort\":443}],\"volumeMounts\":"
              "[{\"mountPath\":\"/d\",\"name\":\"v\",\"readOnly\":true}]}]}}");
    /* tolerations and command are replaced, not merged. */
    sm_expect("Pod",
              "{\"spec\":{\"tolerations\":[{\"key\":\"a\"}],\"containers\":[{\"name\":\"a\","
              "\"command\":[\"x\",\"y\"]}]}}",
              "{\"spec\":{\"tolerations\":[{\"key\":\"b\"}],\"containers\":[{\"name\":\"a\","
              "\"command\":[\"z\"]}]}}",
              "{\"spec\":{\"tolerations\":[{\"key\":\"b\"}],\"containers\":[{\"name\":\"a\","
              "\"command\":[\"z\"]}]}}");
    /*
     * Conditions merge by type, ownerReferences by uid. A new item goes before
     * the server-only ones (mergeSortedSlice puts patch items first when the
     * live list cannot order them).
     */
    sm_expect("Pod",
              "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"a\"}]},"
              "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},"
              "{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}",
              "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"2\",\"name\":\"b\"}]},"
              "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
              "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"2\",\"name\":\"b\"},"
              "{\"uid\":\"1\",\"name\":\"a\"}]},"
              "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
              "{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}");
}

static void test_sm_directives(void **state)
{
    (void)state;
    /* $patch: delete in a keyed list. */
    sm_expect("Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"a\",\"$patch\":\"delete\"}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"b\"}]}}");
    /* $patch: replace in a keyed list. */
    sm_expect("Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"c\"},{\"$patch\":\"replace\"}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    /* $patch: replace / delete on maps. */
    sm_expect("Pod", "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}",
              "{\"metadata\":{\"labels\":{\"c\":\"3\",\"$patch\":\"replace\"}}}",
              "{\"metadata\":{\"labels\":{\"c\":\"3\"}}}");
    sm_expect("Pod", "{\"metadata\":{\"labels\":{\"a\":\"1\"}},\"spec\":{}}",
              "{\"metadata\":{\"labels\":{\"$patch\":\"delete\"}}}",
              "{\"metadata\":{\"labels\":{}},\"spec\":{}}");
    /* Labels: null deletes (kubectl label x-), new keys are added. */
    sm_expect("Pod", "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}",
              "{\"metadata\":{\"labels\":{\"a\":null,\"c\":\"3\",\"zz\":null}}}",
              "{\"metadata\":{\"labels\":{\"b\":\"2\",\"c\":\"3\"}}}");
    /* $retainKeys: a Deployment strategy switching type drops rollingUpdate. */
    sm_expect("Deployment",
              "{\"spec\":{\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":"
              "{\"maxSurge\":1}}}}",
              "{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],\"type\":\"Recreate\"}}}",
              "{\"spec\":{\"strategy\":{\"type\":\"Recreate\"}}}");
    /* finalizers: a merge set; $deleteFromPrimitiveList removes. */
    sm_expect("ConfigMap", "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
              "{\"metadata\":{\"finalizers\":[\"b\",\"c\"]}}",
              "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}");
    sm_expect("ConfigMap", "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}",
              "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"b\"]}}",
              "{\"metadata\":{\"finalizers\":[\"a\",\"c\"]}}");
    /* The design document's finalizer example. */
    sm_expect("ConfigMap", "{\"metadata\":{\"finalizers\":[\"b\",\"e\",\"a\",\"c\",\"d\"]}}",
              "{\"metadata\":{\"$setElementOrder/finalizers\":[\"a\",\"b\",\"f\"],"
              "\"$deleteFromPrimitiveList/finalizers\":[\"c\"],\"finalizers\":[\"f\"]}}",
              "{\"metadata\":{\"finalizers\":[\"e\",\"a\",\"b\",\"f\",\"d\"]}}");
    /* New subtrees lose their directives and nulls. */
    sm_expect("Pod", "{\"spec\":{}}",
              "{\"spec\":{\"containers\":[{\"name\":\"x\"},{\"name\":\"y\",\"$patch\":\"delete\"}],"
              "\"nodeSelector\":{\"a\":\"1\",\"b\":null}}}",
              "{\"spec\":{\"containers\":[{\"name\":\"x\"}],\"nodeSelector\":{\"a\":\"1\"}}}");
}

static void test_sm_set_element_order(void **state)
{
    (void)state;
    /* Reorder only. */
    sm_expect("Pod", "{\"spec\":{\"containers\":[{\"name\":\"b\"},{\"name\":\"a\"}]}}",
              "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}");
    /*
     * The env example of the "preserve order" design, as apimachinery's
     * normalizeElementOrder/mergeSortedSlice computes it.
     */
    sm_expect(
        "Pod",
        "{\"spec\":{\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":\"ENV2\"},"
        "{\"name\":\"ENV5\"},{\"name\":\"ENV1\"},{\"name\":\"ENV3\"},{\"name\":\"ENV4\"}]}]}}",
        "{\"spec\":{\"containers\":[{\"name\":\"c\",\"$setElementOrder/env\":["
        "{\"name\":\"ENV1\"},{\"name\":\"ENV2\"},{\"name\":\"ENV6\"}],\"env\":["
        "{\"name\":\"ENV3\",\"$patch\":\"delete\"},{\"name\":\"ENV6\",\"value\":\"new\"}]}]}}",
        "{\"spec\":{\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":\"ENV5\"},"
        "{\"name\":\"ENV1\"},{\"name\":\"ENV2\"},{\"name\":\"ENV6\",\"value\":\"new\"},"
        "{\"name\":\"ENV4\"}]}]}}");
    /* Without the directive the patch order wins for patch items (server-only first). */
    sm_expect("Pod",
              "{\"spec\":{\"containers\":[{\"name\":\"B\"},{\"name\":\"C\"},{\"name\":\"A\"}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"A\",\"image\":\"1\"},{\"name\":\"B\","
              "\"image\":\"2\"},{\"name\":\"D\"}]}}",
              "{\"spec\":{\"containers\":[{\"name\":\"C\"},{\"name\":\"A\",\"image\":\"1\"},"
              "{\"name\":\"B\",\"image\":\"2\"},{\"name\":\"D\"}]}}");
}

static void test_sm_kubectl_apply(void **state)
{
    (void)state;
    /* What kubectl apply sends to change an image and drop a label (3-way patch). */
    const char *live =
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\","
        "\"labels\":{\"app\":\"d\",\"old\":\"1\"},\"annotations\":{"
        "\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\"}},"
        "\"spec\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"main\","
        "\"image\":\"nginx:1\",\"env\":[{\"name\":\"A\",\"value\":\"1\"}]},{\"name\":\"side\","
        "\"image\":\"busybox\"}]}}}}";
    const char *patch =
        "{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":"
        "\"{\\\"new\\\":1}\"},\"labels\":{\"old\":null}},\"spec\":{\"template\":{\"spec\":{"
        "\"$setElementOrder/containers\":[{\"name\":\"main\"},{\"name\":\"side\"}],"
        "\"containers\":[{\"image\":\"nginx:2\",\"name\":\"main\"}]}}}}";
    sm_expect("Deployment", live, patch,
              "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\","
              "\"labels\":{\"app\":\"d\"},\"annotations\":{"
              "\"kubectl.kubernetes.io/last-applied-configuration\":\"{\\\"new\\\":1}\"}},"
              "\"spec\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
              "\"main\",\"image\":\"nginx:2\",\"env\":[{\"name\":\"A\",\"value\":\"1\"}]},"
              "{\"name\":\"side\",\"image\":\"busybox\"}]}}}}");
    /* A second apply of the same manifest sends {} (or only unchanged values): a no-op. */
    sm_expect("Deployment", live, "{}", live);
    sm_expect("Deployment", live,
              "{\"spec\":{\"template\":{\"spec\":{\"$setElementOrder/containers\":[{\"name\":"
              "\"main\"},{\"name\":\"side\"}]}}}}",
              live);
    /* kubectl scale / annotate style patches. */
    sm_expect("Deployment", "{\"spec\":{\"replicas\":1}}", "{\"spec\":{\"replicas\":3}}",
              "{\"spec\":{\"replicas\":3}}");
}

static void test_sm_errors(void **state)
{
    (void)state;
    static const char *bad[][3] = {
        {"{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
         "{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}", "422"},
        {"{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
         "{\"spec\":{\"containers\":[{\"$patch\":\"delete\"}]}}", "422"},
        {"{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
         "{\"spec\":{\"containers\":[{\"name\":\"a\",\"$patch\":\"merge\"}]}}", "400"},
        {"{\"metadata\":{}}", "{\"metadata\":{\"$patch\":\"explode\"}}", "400"},
        {"{\"spec\":{}}", "{\"spec\":{\"$retainKeys\":\"a\"}}", "400"},
        {"{\"spec\":{}}", "{\"spec\":{\"$retainKeys\":[\"a\"],\"b\":1}}", "400"},
        {"{\"metadata\":{}}", "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":\"a\"}}",
         "400"},
        {"{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
         "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"a\"}],"
         "\"containers\":[{\"name\":\"b\",\"image\":\"x\"}]}}",
         "400"},
        {"{}", "[1]", "400"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *o = J(bad[i][0]), *p = J(bad[i][1]), *out = NULL;
        struct err e = {0};
        int rc = patch_strategic(o, p, "Pod", &out, &e);
        if (rc == 0)
            fail_msg("case %zu: expected an error", i);
        assert_null(out);
        assert_int_equal(e.http_status, strtol(bad[i][2], NULL, 10));
        assert_true(strlen(e.msg) > 0);
        json_decref(o);
        json_decref(p);
    }
}

static void test_status_bodies(void **state)
{
    (void)state;
    json_t *out = NULL;
    struct err e = {0};
    /* 422: the apiserver sends only the generic message (NewGenericServerResponse). */
    assert_int_equal(jp("{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":2}]", &out, &e),
                     PATCH_EFAILED);
    json_t *st = patch_status_body(&e);
    expect_json(st, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                    "\"Failure\",\"message\":\"the server rejected our request due to an error in "
                    "our request\",\"reason\":\"Invalid\",\"details\":{},\"code\":422}");
    /* 415 carries the media-type message. */
    enum patch_type t;
    assert_int_equal(patch_type_from_content_type("text/plain", &t, &e), PATCH_EUNSUPPORTED);
    st = patch_status_body(&e);
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "UnsupportedMediaType");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 415);
    assert_non_null(strstr(json_string_value(json_object_get(st, "message")), "unknown format"));
    json_decref(st);
    /* 400 carries the decoding error. */
    assert_int_equal(patch_apply(PATCH_TYPE_MERGE, "Pod", true, NULL, "{", 1, &out, &e),
                     PATCH_EBAD);
    st = patch_status_body(&e);
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "BadRequest");
    assert_non_null(
        strstr(json_string_value(json_object_get(st, "message")), "error decoding patch"));
    json_decref(st);
}

static void test_rule_table(void **state)
{
    (void)state;
    const char *key = "unset";
    assert_true(patch_list_rule("Job", "spec.template.spec.containers", &key));
    assert_string_equal(key, "name");
    assert_true(patch_list_rule("Pod", "spec.containers.ports", &key));
    assert_string_equal(key, "containerPort");
    assert_true(patch_list_rule("Pod", "spec.initContainers.env", &key));
    assert_string_equal(key, "name");
    assert_true(patch_list_rule("Pod", "spec.containers.volumeMounts", &key));
    assert_string_equal(key, "mountPath");
    assert_true(patch_list_rule("Pod", "spec.volumes", &key));
    assert_string_equal(key, "name");
    assert_true(patch_list_rule("Pod", "spec.imagePullSecrets", &key));
    assert_true(patch_list_rule("Node", "status.conditions", &key));
    assert_string_equal(key, "type");
    assert_true(patch_list_rule("Secret", "metadata.ownerReferences", &key));
    assert_string_equal(key, "uid");
    assert_true(patch_list_rule("Secret", "metadata.finalizers", &key));
    assert_null(key);
    assert_true(patch_list_rule("Service", "spec.ports", &key));
    assert_string_equal(key, "port");
    assert_true(patch_list_rule("Pod", "status.hostIPs", &key));
    assert_string_equal(key, "ip");
    assert_false(patch_list_rule("Node", "status.hostIPs", &key));
    assert_false(patch_list_rule("Pod", "spec.ports", &key));
    assert_false(patch_list_rule("Pod", "spec.tolerations", &key));
    assert_false(patch_list_rule("Pod", "spec.containers.args", &key));
    assert_false(patch_list_rule("Pod", "spec.containers.command", &key));
    /* Anchored rules do not match deeper fields. */
    assert_false(patch_list_rule("Pod", "spec.metadata.finalizers", &key));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_rfc7386),
        cmocka_unit_test(test_json_patch_rfc6902),
        cmocka_unit_test(test_json_patch_too_many_ops),
        cmocka_unit_test(test_content_types),
        cmocka_unit_test(test_apply_dispatch),
        cmocka_unit_test(test_sm_containers_by_name),
        cmocka_unit_test(test_sm_directives),
        cmocka_unit_test(test_sm_set_element_order),
        cmocka_unit_test(test_sm_kubectl_apply),
        cmocka_unit_test(test_sm_errors),
        cmocka_unit_test(test_status_bodies),
        cmocka_unit_test(test_rule_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
