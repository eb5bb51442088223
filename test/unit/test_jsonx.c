/* Unit tests for pkg/json/jsonx. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/slab.h"
#include "pkg/util/xalloc.h"

static json_t *J(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad test JSON %s: %s", text, je.text);
    return v;
}

/* Assert v equals the JSON text `want` (structurally). */
static void assert_json(const json_t *v, const char *want)
{
    json_t *w = J(want);
    if (!json_equal(v, w)) {
        char *got = jx_dumps(v);
        char *exp = jx_dumps(w);
        json_decref(w);
        fail_msg("JSON mismatch:\n got %s\nwant %s", got, exp);
    }
    json_decref(w);
}

static const char *POD = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\","
                         "\"namespace\":\"ns1\",\"uid\":\"u-1\",\"resourceVersion\":\"42\","
                         "\"generation\":3,\"labels\":{\"app\":\"web\",\"kubestellar.io/"
                         "cluster\":\"c1\",\"a[b]\":\"x\"},\"annotations\":{\"note\":\"n\"}},"
                         "\"spec\":{\"containers\":[{\"name\":\"c0\",\"ready\":true},{\"name\":"
                         "\"c1\",\"n\":7,\"r\":2.0,\"f\":2.5}]}}";

static void test_get_paths(void **state)
{
    (void)state;
    json_t *o = J(POD);
    assert_string_equal(jx_str(o, "metadata.name", NULL), "p1");
    assert_string_equal(jx_str(o, "metadata.labels.kubestellar\\.io/cluster", NULL), "c1");
    assert_string_equal(jx_str(o, "metadata.labels.a\\[b\\]", NULL), "x");
    assert_string_equal(jx_str(o, "spec.containers[1].name", NULL), "c1");
    assert_string_equal(jx_str(o, "spec.containers[0].name", "d"), "c0");
    assert_string_equal(jx_str(o, "spec.containers[2].name", "d"), "d");
    assert_string_equal(jx_str(o, "metadata.generation", "d"), "d"); /* wrong type */
    assert_int_equal(jx_int(o, "metadata.generation", -1), 3);
    assert_int_equal(jx_int(o, "spec.containers[1].n", -1), 7);
    assert_int_equal(jx_int(o, "spec.containers[1].r", -1), 2);  /* integral real */
    assert_int_equal(jx_int(o, "spec.containers[1].f", -1), -1); /* fractional real */
    assert_true(jx_bool(o, "spec.containers[0].ready", false));
    assert_false(jx_bool(o, "spec.containers[1].ready", false));
    assert_non_null(jx_obj(o, "metadata.labels"));
    assert_null(jx_obj(o, "spec.containers"));
    assert_non_null(jx_arr(o, "spec.containers"));
    assert_ptr_equal(jx_get(o, ""), o);
    /* Malformed paths never match. */
    assert_null(jx_get(o, "metadata..name"));
    assert_null(jx_get(o, ".metadata"));
    assert_null(jx_get(o, "spec.containers[x]"));
    assert_null(jx_get(o, "spec.containers[0"));
    assert_null(jx_get(o, "spec.containers[0]name"));
    assert_null(jx_get(o, "metadata.name\\"));
    assert_null(jx_get(NULL, "a"));
    assert_null(jx_get(o, "metadata.]"));
    assert_null(jx_get(o, "metadata."));
    assert_null(jx_get(o, "[0]"));               /* an index on an object */
    assert_null(jx_get(o, "spec.containers.0")); /* a key on an array */
    assert_null(jx_get(o, "spec.containers[1]x"));
    assert_ptr_equal(jx_get(o, "spec.containers[1]"),
                     json_array_get(json_object_get(json_object_get(o, "spec"), "containers"), 1));
    /* a key of JX_KEY_MAX bytes is looked up, one byte more never matches */
    char k[JX_KEY_MAX + 2];
    memset(k, 'k', sizeof k - 1);
    k[sizeof k - 1] = '\0';
    json_t *big = json_object();
    json_object_set_new(big, k, json_integer(2));
    k[JX_KEY_MAX] = '\0';
    json_object_set_new(big, k, json_integer(1));
    assert_int_equal(jx_int(big, k, -1), 1);
    k[JX_KEY_MAX] = 'k';
    assert_null(jx_get(big, k));
    json_decref(big);
    /* varargs */
    assert_string_equal(
        json_string_value(jx_getv(o, "metadata", "labels", "kubestellar.io/cluster")), "c1");
    assert_string_equal(json_string_value(jx_getv(o, "spec", "containers", "1", "name")), "c1");
    /* A trailing NULL written by the caller (classic sentinel style) is harmless. */
    assert_string_equal(json_string_value(jx_getv(o, "metadata", "name", NULL)), "p1");
    assert_ptr_equal(jx_getv(o, NULL), o);
    assert_null(jx_getv(o, "spec", "containers", "x"));
    assert_null(jx_getv(o, "metadata", "nope", "x"));
    /* One key, never a path: a dotted key is looked up as it is. */
    json_t *labels = jx_obj(o, "metadata.labels");
    assert_string_equal(jx_field_str(labels, "kubestellar.io/cluster"), "c1");
    assert_string_equal(jx_field_str(jx_obj(o, "metadata"), "name"), "p1");
    assert_string_equal(jx_field_str(o, "metadata.name"), "");
    assert_string_equal(jx_field_str(jx_obj(o, "metadata"), "generation"), ""); /* wrong type */
    assert_string_equal(jx_field_str(NULL, "name"), "");
    json_decref(o);
}

/* jx_deep_copy: equal, same key order, nothing shared but jansson's constants. */
static void test_deep_copy(void **state)
{
    (void)state;
    const char *text = "{\"z\":1,\"a\":[true,false,null,2.5,\"s\\u0000t\",{\"k\":[[]]}],"
                       "\"m\":{\"y\":{},\"b\":-7},\"e\":\"\"}";
    json_t *o = json_loads(text, JSON_ALLOW_NUL, NULL);
    assert_non_null(o);
    json_t *c = jx_deep_copy(o);
    assert_true(json_equal(o, c));
    char *d1 = json_dumps(o, JSON_COMPACT), *d2 = json_dumps(c, JSON_COMPACT);
    assert_string_equal(d1, d2); /* key order kept: z, a, m, e */
    free(d1);
    free(d2);
    assert_int_equal(json_string_length(jx_get(c, "a[4]")), 3); /* an embedded NUL kept */
    /* a change to the copy leaves the original alone */
    assert_int_equal(jx_set_new(c, "m.y.new", json_integer(1), NULL), 0);
    assert_int_equal(json_array_append_new(jx_arr(c, "a[5].k[0]"), json_true()), 0);
    assert_null(jx_get(o, "m.y.new"));
    assert_int_equal(json_array_size(jx_arr(o, "a[5].k[0]")), 0);
    assert_ptr_not_equal(jx_get(o, "a[4]"), jx_get(c, "a[4]"));
    assert_null(jx_deep_copy(NULL));
    json_decref(c);
    json_decref(o);
}

static void test_set_and_del(void **state)
{
    (void)state;
    json_t *o = json_object();
    struct err e;
    err_clear(&e);
    assert_int_equal(jx_set_new(o, "metadata.labels.x\\.io/y", json_string("v"), &e), 0);
    assert_int_equal(jx_set_str(o, "spec.template.spec.nodeSelector.zone", "z1", &e), 0);
    assert_int_equal(jx_set_new(o, "spec.list[0]", json_integer(1), &e), 0); /* creates array */
    assert_int_equal(jx_set_new(o, "spec.list[1]", json_integer(2), &e), 0); /* append */
    assert_int_equal(jx_set_new(o, "spec.list[0]", json_integer(9), &e), 0); /* replace */
    assert_int_equal(jx_set_new(o, "spec.list[5]", json_integer(9), &e), -ERANGE);
    assert_non_null(strstr(e.msg, "out of range"));
    assert_json(o, "{\"metadata\":{\"labels\":{\"x.io/y\":\"v\"}},\"spec\":{\"template\":{\"spec\":"
                   "{\"nodeSelector\":{\"zone\":\"z1\"}}},\"list\":[9,2]}}");
    /* Intermediate that is a string: error, value consumed (ASan would flag a leak). */
    assert_int_equal(jx_set_new(o, "metadata.labels.x\\.io/y.deeper", json_true(), &e), -EINVAL);
    assert_non_null(strstr(e.msg, "non-object"));
    assert_int_equal(jx_set_new(o, "a..b", json_true(), &e), -EINVAL);
    assert_non_null(strstr(e.msg, "a..b"));
    assert_int_equal(jx_set_new(o, "", json_true(), &e), -EINVAL);
    /* null intermediate is replaced by an object */
    assert_int_equal(jx_set_new(o, "n", json_null(), NULL), 0);
    assert_int_equal(jx_set_new(o, "n.k", json_string("v"), NULL), 0);
    assert_string_equal(jx_str(o, "n.k", NULL), "v");
    /* jx_set borrows */
    json_t *shared = json_string("s");
    assert_int_equal(jx_set(o, "s1", shared, NULL), 0);
    assert_int_equal(json_object_get(o, "s1")->refcount, 2);
    json_decref(shared);
    /* varargs setter */
    assert_int_equal(
        jx_setv_new(o, json_string("c2"), "metadata", "labels", "kubestellar.io/cluster"), 0);
    assert_string_equal(jx_label(o, "kubestellar.io/cluster"), "c2");
    assert_int_equal(jx_setv_new(o, json_true(), "spec", "list", "x"), -EINVAL);
    /* delete */
    assert_int_equal(jx_del(o, "spec.list[0]"), 0);
    assert_int_equal(jx_int(o, "spec.list[0]", -1), 2);
    assert_int_equal(jx_del(o, "spec.list[3]"), -ENOENT);
    assert_int_equal(jx_del(o, "metadata.labels.x\\.io/y"), 0);
    assert_int_equal(jx_del(o, "metadata.labels.x\\.io/y"), -ENOENT);
    /* an escaped key in the middle of a path: kept while the next segment is read */
    assert_int_equal(jx_set_new(o, "spec.a\\.b.c\\[d\\].e", json_integer(7), &e), 0);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_object_get(jx_get(o, "spec"), "a.b"), "c[d]"), "e")),
                     7);
    assert_int_equal(jx_int(o, "spec.a\\.b.c\\[d\\].e", -1), 7);
    assert_int_equal(jx_del(o, "spec.a\\.b.c\\[d\\].e"), 0);
    assert_json(jx_get(o, "spec.a\\.b"), "{\"c[d]\":{}}");
    assert_int_equal(jx_del(o, "nope.deeper"), -ENOENT);
    assert_int_equal(jx_del(o, "a..b"), -EINVAL);
    json_decref(o);
}

/* RFC 7386 appendix A test cases: target, patch, result. */
static const char *RFC_CASES[][3] = {
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
    /* The example of RFC 7386 section 3. */
    {"{\"title\":\"Goodbye!\",\"author\":{\"givenName\":\"John\",\"familyName\":\"Doe\"},"
     "\"tags\":[\"example\",\"sample\"],\"content\":\"This will be unchanged\"}",
     "{\"title\":\"Hello!\",\"phoneNumber\":\"+01-123-456-7890\",\"author\":{\"familyName\":null},"
     "\"tags\":[\"example\"]}",
     "{\"title\":\"Hello!\",\"author\":{\"givenName\":\"John\"},\"tags\":[\"example\"],"
     "\"content\":\"This will be unchanged\",\"phoneNumber\":\"+01-123-456-7890\"}"},
};

static bool has_null_member(const json_t *v)
{
    const char *k;
    json_t *m;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, m)
        {
            if (json_is_null(m) || has_null_member(m))
                return true;
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, m)
        {
            if (has_null_member(m))
                return true;
        }
    }
    return false;
}

static void test_merge_patch_rfc(void **state)
{
    (void)state;
    int roundtrips = 0;
    for (size_t i = 0; i < sizeof(RFC_CASES) / sizeof(RFC_CASES[0]); i++) {
        json_t *t = J(RFC_CASES[i][0]);
        json_t *p = J(RFC_CASES[i][1]);
        json_t *before = json_deep_copy(t);
        json_t *r = jx_merge_apply(t, p);
        assert_json(r, RFC_CASES[i][2]);
        assert_true(json_equal(t, before)); /* input untouched */
        /* diff(target, result) applied to target gives result again. */
        if (!has_null_member(r)) {
            json_t *d = jx_merge_diff(t, r);
            json_t *r2 = jx_merge_apply(t, d);
            if (!json_equal(r, r2)) {
                char *ds = jx_dumps(d);
                fail_msg("case %zu: diff %s does not round-trip", i, ds);
            }
            json_decref(d);
            json_decref(r2);
            roundtrips++;
        }
        json_decref(t);
        json_decref(p);
        json_decref(before);
        json_decref(r);
    }
    assert_int_equal(roundtrips, 15);
    /* Absent target: nulls in the patch vanish. */
    json_t *p = J("{\"a\":{\"b\":null,\"c\":1}}");
    json_t *r = jx_merge_apply(NULL, p);
    assert_json(r, "{\"a\":{\"c\":1}}");
    json_decref(r);
    json_decref(p);
}

static void test_merge_diff(void **state)
{
    (void)state;
    json_t *a = J("{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"name\":\"x\"},"
                  "\"spec\":{\"n\":[1,2]}}");
    json_t *b = J("{\"metadata\":{\"labels\":{\"a\":\"1\",\"c\":\"3\"},\"name\":\"x\"},"
                  "\"spec\":{\"n\":[1,2,3]}}");
    json_t *d = jx_merge_diff(a, b);
    assert_json(d, "{\"metadata\":{\"labels\":{\"b\":null,\"c\":\"3\"}},\"spec\":{\"n\":[1,2,3]}}");
    json_t *r = jx_merge_apply(a, d);
    assert_true(json_equal(r, b));
    json_decref(d);
    json_decref(r);
    d = jx_merge_diff(a, a);
    assert_json(d, "{}");
    json_decref(d);
    /* A null in `to` deletes. */
    json_t *c = J("{\"metadata\":null,\"spec\":{\"n\":[1,2]}}");
    d = jx_merge_diff(a, c);
    assert_json(d, "{\"metadata\":null}");
    json_decref(d);
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static void test_patch_builder(void **state)
{
    (void)state;
    struct jx_patch p;
    jx_patch_init(&p);
    assert_true(jx_patch_empty(&p));
    assert_int_equal(jx_patch_label(&p, "a", "b"), 0);
    assert_int_equal(jx_patch_label(&p, "c", NULL), 0);
    assert_int_equal(jx_patch_label(&p, "kubestellar.io/cluster", "c1"), 0);
    assert_int_equal(jx_patch_annotation(&p, "kueue-ks.io/injected", "{}"), 0);
    assert_int_equal(jx_patch_set_str(&p, "spec.suspend", "x"), 0);
    assert_int_equal(jx_patch_delete(&p, "status"), 0);
    assert_int_equal(jx_patch_label(&p, "", "x"), -EINVAL);
    assert_false(jx_patch_empty(&p));
    char *s = jx_patch_dumps(&p);
    assert_string_equal(s, "{\"metadata\":{\"annotations\":{\"kueue-ks.io/injected\":\"{}\"},"
                           "\"labels\":{\"a\":\"b\",\"c\":null,\"kubestellar.io/cluster\":\"c1\"}},"
                           "\"spec\":{\"suspend\":\"x\"},\"status\":null}");
    free(s);
    /* Applying it to an object does what it says. */
    json_t *o =
        J("{\"metadata\":{\"labels\":{\"c\":\"old\",\"keep\":\"k\"}},\"status\":{\"x\":1}}");
    json_t *r = jx_merge_apply(o, p.doc);
    assert_json(r, "{\"metadata\":{\"annotations\":{\"kueue-ks.io/injected\":\"{}\"},"
                   "\"labels\":{\"a\":\"b\",\"keep\":\"k\",\"kubestellar.io/cluster\":\"c1\"}},"
                   "\"spec\":{\"suspend\":\"x\"}}");
    json_decref(r);
    json_decref(o);
    json_t *doc = jx_patch_take(&p);
    assert_true(jx_patch_empty(&p));
    json_decref(doc);
    jx_patch_release(&p);
}

static void test_k8s_accessors(void **state)
{
    (void)state;
    json_t *o = J(POD);
    assert_string_equal(jx_name(o), "p1");
    assert_string_equal(jx_namespace(o), "ns1");
    assert_string_equal(jx_uid(o), "u-1");
    assert_string_equal(jx_resource_version(o), "42");
    assert_string_equal(jx_kind(o), "Pod");
    assert_string_equal(jx_api_version(o), "v1");
    assert_int_equal(jx_generation(o), 3);
    assert_string_equal(jx_label(o, "kubestellar.io/cluster"), "c1");
    assert_null(jx_label(o, "missing"));
    assert_string_equal(jx_annotation(o, "note"), "n");
    char *k = jx_obj_key(o);
    assert_string_equal(k, "ns1/p1");
    free(k);
    assert_int_equal(jx_set_label(o, "new.io/x", "y"), 0);
    assert_string_equal(jx_label(o, "new.io/x"), "y");
    assert_int_equal(jx_set_label(o, "new.io/x", NULL), 0);
    assert_null(jx_label(o, "new.io/x"));
    json_t *n = J("{\"metadata\":{\"name\":\"node1\"}}");
    k = jx_obj_key(n);
    assert_string_equal(k, "node1");
    free(k);
    assert_null(jx_namespace(n));
    assert_null(jx_labels(n));
    assert_int_equal(jx_generation(n), 0);
    assert_int_equal(jx_set_annotation(n, "a", "b"), 0);
    assert_string_equal(jx_annotation(n, "a"), "b");
    json_t *empty = json_object();
    assert_null(jx_obj_key(empty));
    char *ns, *name;
    assert_int_equal(jx_key_split("a/b", &ns, &name), 0);
    assert_string_equal(ns, "a");
    assert_string_equal(name, "b");
    free(ns);
    free(name);
    assert_int_equal(jx_key_split("solo", &ns, &name), 0);
    assert_null(ns);
    assert_string_equal(name, "solo");
    free(name);
    assert_int_equal(jx_key_split("a/b/c", &ns, &name), -EINVAL);
    assert_int_equal(jx_key_split("/b", &ns, &name), -EINVAL);
    assert_int_equal(jx_key_split("", &ns, &name), -EINVAL);
    k = jx_key_make(NULL, "x");
    assert_string_equal(k, "x");
    free(k);
    json_decref(o);
    json_decref(n);
    json_decref(empty);
}

static void test_conditions(void **state)
{
    (void)state;
    json_t *o = J("{\"metadata\":{\"name\":\"w\"}}");
    struct jx_cond c = {.type = "Ready", .status = "False", .reason = "Init", .message = "m1"};
    assert_int_equal(jx_cond_set(o, &c, "2026-01-01T00:00:00Z"), 1);
    assert_string_equal(jx_cond_status(o, "Ready"), "False");
    assert_false(jx_cond_is_true(o, "Ready"));
    assert_string_equal(jx_str(jx_cond_find(o, "Ready"), "lastTransitionTime", NULL),
                        "2026-01-01T00:00:00Z");
    /* Same again: no change. */
    assert_int_equal(jx_cond_set(o, &c, "2026-01-02T00:00:00Z"), 0);
    /* Message changes, status not: transition time kept. */
    c.message = "m2";
    assert_int_equal(jx_cond_set(o, &c, "2026-01-03T00:00:00Z"), 1);
    assert_string_equal(jx_str(jx_cond_find(o, "Ready"), "lastTransitionTime", NULL),
                        "2026-01-01T00:00:00Z");
    assert_string_equal(jx_str(jx_cond_find(o, "Ready"), "message", NULL), "m2");
    /* Status changes: transition time moves. */
    c.status = "True";
    c.reason = "Done";
    c.observed_generation = 4;
    assert_int_equal(jx_cond_set(o, &c, "2026-01-04T00:00:00Z"), 1);
    assert_true(jx_cond_is_true(o, "Ready"));
    assert_string_equal(jx_str(jx_cond_find(o, "Ready"), "lastTransitionTime", NULL),
                        "2026-01-04T00:00:00Z");
    assert_int_equal(jx_int(jx_cond_find(o, "Ready"), "observedGeneration", 0), 4);
    /* A second type is appended; the first untouched. */
    struct jx_cond c2 = {.type = "Active", .status = "True"};
    assert_int_equal(jx_cond_set(o, &c2, NULL), 1);
    assert_int_equal(json_array_size(jx_arr(o, "status.conditions")), 2);
    assert_non_null(jx_str(jx_cond_find(o, "Active"), "lastTransitionTime", NULL));
    assert_null(jx_get(jx_cond_find(o, "Active"), "reason"));
    assert_int_equal(jx_cond_remove(o, "Active"), 1);
    assert_int_equal(jx_cond_remove(o, "Active"), 0);
    assert_null(jx_cond_find(o, "Active"));
    struct jx_cond bad = {.type = "X"};
    assert_int_equal(jx_cond_set(o, &bad, NULL), -EINVAL);
    json_t *notarr = json_object();
    assert_int_equal(jx_conds_set(notarr, &c, NULL), -EINVAL);
    json_decref(notarr);
    /* The documented merge-patch recipe: copy, set, patch the whole list. */
    json_t *copy = json_deep_copy(jx_arr(o, "status.conditions"));
    struct jx_cond c3 = {.type = "ClusterAssigned",
                         .status = "True",
                         .reason = "ClusterAssigned",
                         .message = "assigned to c1"};
    assert_int_equal(jx_conds_set(copy, &c3, "2026-01-05T00:00:00Z"), 1);
    struct jx_patch p;
    jx_patch_init(&p);
    assert_int_equal(jx_patch_set_new(&p, "status.conditions", copy), 0);
    json_t *after = jx_merge_apply(o, p.doc);
    assert_true(jx_cond_is_true(after, "ClusterAssigned"));
    assert_true(jx_cond_is_true(after, "Ready"));
    assert_null(jx_cond_find(o, "ClusterAssigned")); /* original untouched */
    json_decref(after);
    jx_patch_release(&p);
    json_decref(o);
}

static void test_owners(void **state)
{
    (void)state;
    json_t *o =
        J("{\"metadata\":{\"ownerReferences\":["
          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"cm\"},"
          "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"j\",\"controller\":true},"
          "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"name\":\"p\"}]}}");
    assert_string_equal(jx_str(jx_owner_controller(o), "name", NULL), "j");
    assert_string_equal(jx_str(jx_owner_find(o, "batch", "Job"), "name", NULL), "j");
    assert_null(jx_owner_find(o, "apps", "Job"));
    assert_string_equal(jx_str(jx_owner_find(o, NULL, "PyTorchJob"), "name", NULL), "p");
    assert_string_equal(jx_str(jx_owner_find(o, "", "ConfigMap"), "name", NULL), "cm");
    assert_null(jx_owner_find(o, "kubeflow", "PyTorchJob"));
    json_t *none = J("{\"metadata\":{}}");
    assert_null(jx_owner_controller(none));
    assert_null(jx_owner_find(none, NULL, "Job"));
    json_decref(none);
    json_decref(o);
}

static void test_find_by(void **state)
{
    (void)state;
    json_t *a = J("[1,{\"name\":2},{\"name\":\"x\",\"v\":1},{\"name\":\"y\",\"v\":2}]");
    assert_int_equal(jx_int(jx_find_by(a, "name", "y"), "v", 0), 2);
    assert_int_equal(jx_int(jx_find_by(a, "name", "x"), "v", 0), 1);
    assert_null(jx_find_by(a, "name", "z"));
    assert_null(jx_find_by(a, "name", "2"));
    json_t *o = json_object();
    assert_null(jx_find_by(o, "name", "x"));
    json_decref(o);
    json_decref(a);
}

static void test_load_dump(void **state)
{
    (void)state;
    struct err e;
    err_clear(&e);
    json_t *v = jx_loadb("{\"b\":1,\"a\":[true,null]}", 23, &e);
    assert_non_null(v);
    char *s = jx_dumps(v);
    assert_string_equal(s, "{\"a\":[true,null],\"b\":1}");
    free(s);
    json_decref(v);
    assert_null(jx_loadb("{\"a\":", 5, &e));
    assert_int_equal(e.code, -EINVAL);
    assert_non_null(strstr(e.msg, "invalid JSON at line 1"));
    s = jx_dumps(NULL);
    assert_string_equal(s, "null");
    free(s);
}

/* jansson allocates through xmalloc (aborts on out of memory) once a main
 * calls jx_use_xalloc, so no json_object()/json_pack() result is NULL. */
static void test_use_xalloc(void **state)
{
    (void)state;
    json_malloc_t m0;
    json_free_t f0;
    json_get_alloc_funcs(&m0, &f0);
    jx_use_xalloc();
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    assert_ptr_equal(m, xmalloc);
    assert_ptr_equal(f, free);
    json_t *o = json_pack("{s:[i,s]}", "a", 1, "b");
    assert_non_null(o);
    json_decref(o);
    json_set_alloc_funcs(m0, f0);
}

/* A pool for test_dumps_over_slab: jansson's hooks take no context. */
static struct slab_pool *test_pool;

static void *pool_alloc(size_t n)
{
    return slab_alloc(test_pool, n);
}

static void pool_release(void *p)
{
    slab_release(test_pool, p);
}

/* With jansson's trees in a slab pool (as in kueue-ks), jx_dumps_flags and jx_dumps return
 * malloc's strings (free() of a slab block is an invalid free under ASan), and every block
 * jansson took comes back to the pool. */
static void test_dumps_over_slab(void **state)
{
    (void)state;
    json_malloc_t m0;
    json_free_t f0;
    json_get_alloc_funcs(&m0, &f0);
    assert_int_equal(slab_pool_new(0, 1, &test_pool), 0);
    json_set_alloc_funcs(pool_alloc, pool_release);
    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    json_t *o = json_pack("{s:[i,s,f], s:s}", "a", 1, "b", 0.5, "big", big);
    struct slab_stats st;
    slab_stats(test_pool, &st);
    assert_true(st.blocks > 5);
    char *s = jx_dumps_flags(json_object_get(o, "a"), JSON_COMPACT);
    assert_string_equal(s, "[1,\"b\",0.5]");
    free(s);
    s = jx_dumps_flags(o, JSON_COMPACT | JSON_SORT_KEYS); /* longer than a slab block */
    assert_int_equal(strlen(s), strlen("{\"a\":[1,\"b\",0.5],\"big\":\"\"}") + strlen(big));
    free(s);
    s = jx_dumps(json_object_get(o, "a"));
    assert_string_equal(s, "[1,\"b\",0.5]");
    free(s);
    /* a string without JSON_ENCODE_ANY: json_dumps refuses it */
    assert_null(jx_dumps_flags(json_object_get(o, "big"), JSON_COMPACT));
    json_decref(o);
    slab_stats(test_pool, &st);
    assert_int_equal(st.blocks, 0);
    json_set_alloc_funcs(m0, f0);
    slab_pool_free(test_pool);
    test_pool = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_paths),       cmocka_unit_test(test_set_and_del),
        cmocka_unit_test(test_deep_copy),       cmocka_unit_test(test_merge_patch_rfc),
        cmocka_unit_test(test_merge_diff),      cmocka_unit_test(test_patch_builder),
        cmocka_unit_test(test_k8s_accessors),   cmocka_unit_test(test_conditions),
        cmocka_unit_test(test_owners),          cmocka_unit_test(test_load_dump),
        cmocka_unit_test(test_use_xalloc),      cmocka_unit_test(test_find_by),
        cmocka_unit_test(test_dumps_over_slab),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
