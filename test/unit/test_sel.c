/* Unit tests for pkg/labels: label selectors, LabelSelector JSON, field selectors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/labels/sel.h"
#include "pkg/util/buf.h"

static json_t *J(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad test JSON %s: %s", text, je.text);
    return v;
}

/* Parse, check the canonical text, and that the canonical text parses to an equal selector. */
static void check_canonical(const char *in, const char *want)
{
    struct sel *s = NULL, *s2 = NULL;
    struct err e;
    err_clear(&e);
    if (sel_parse(in, &s, &e) != 0)
        fail_msg("parse \"%s\": %s", in, e.msg);
    char *got = sel_format(s);
    if (strcmp(got, want) != 0)
        fail_msg("format(\"%s\") = \"%s\", want \"%s\"", in, got, want);
    assert_int_equal(sel_parse(got, &s2, &e), 0);
    assert_true(sel_equal(s, s2));
    free(got);
    sel_free(s);
    sel_free(s2);
}

static void test_parse_format(void **state)
{
    (void)state;
    check_canonical("", "");
    check_canonical("   ", "");
    check_canonical("a=b", "a=b");
    check_canonical("a==b", "a=b");
    check_canonical("a!=b", "a!=b");
    check_canonical("a=b,c!=d,e in (x,y),f notin (z),g,!h", "a=b,c!=d,e in (x,y),f notin (z),g,!h");
    check_canonical(" z = 1 , a in ( y , x , y ) ", "a in (x,y),z=1");
    check_canonical("b,a,!c", "a,b,!c");
    check_canonical("x=", "x=");
    check_canonical("x in ()", "x in ()");
    check_canonical("x in (a,)", "x in (,a)");
    check_canonical("x notin (,a)", "x notin (,a)");
    check_canonical("kubestellar.io/cluster=c1,name in (c1,c2)",
                    "kubestellar.io/cluster=c1,name in (c1,c2)");
    check_canonical("a>3,b<10", "a>3,b<10");
    /* Stable: same-key requirements keep their order. */
    check_canonical("b,a=1,a", "a=1,a,b");
    check_canonical("a,b,a=1", "a,a=1,b");
}

static void test_long_selector(void **state)
{
    (void)state;
    /* 3000 requirements (about 51 KB) in reverse key order: parses, sorts and matches quickly. */
    struct buf b;
    buf_init(&b, 1 << 20);
    for (int i = 2999; i >= 0; i--)
        buf_printf(&b, "%sk%05d in (v%d,w)", i == 2999 ? "" : ",", i, i % 7);
    struct sel *s = NULL;
    struct err e;
    assert_int_equal(sel_parse(buf_str(&b), &s, &e), 0);
    assert_int_equal(s->n, 3000);
    assert_string_equal(s->reqs[0].key, "k00000");
    assert_string_equal(s->reqs[2999].key, "k02999");
    assert_string_equal(s->reqs[3].values[0], "v3");
    assert_false(sel_matches(s, NULL));
    sel_free(s);
    buf_free(&b);
}

static void check_error(const char *in, const char *want_substr)
{
    struct sel *s = NULL;
    struct err e;
    err_clear(&e);
    int rc = sel_parse(in, &s, &e);
    if (rc == 0) {
        char *f = sel_format(s);
        fail_msg("\"%s\" parsed unexpectedly as \"%s\"", in, f);
    }
    assert_int_equal(rc, -EINVAL);
    assert_null(s);
    if (!strstr(e.msg, want_substr))
        fail_msg("\"%s\": error \"%s\" lacks \"%s\"", in, e.msg, want_substr);
}

static void test_parse_errors(void **state)
{
    (void)state;
    /* "in" is a keyword, so the canonical case above is an error; check it here. */
    check_error("in in (notin)", "expected a key");
    check_error("a in (x", "selector \"a in (x\": missing \")\" at position 7");
    check_error("a in (x,", "missing \")\" at position 8");
    check_error("a in (", "missing \")\" at position 6");
    check_error("a in x", "expected \"(\" at position 5");
    check_error("a in (x y)", "expected \",\" or \")\"");
    check_error("a=b c", "expected \",\" or the end of the selector");
    check_error("a=b,", "expected a key or \"!\" at position 4");
    check_error(",a", "expected a key or \"!\" at position 0");
    check_error("!", "expected a key after \"!\"");
    check_error("!a=b", "expected \",\" or the end");
    check_error("a b", "expected an operator");
    check_error("a=(b)", "expected a value");
    check_error("-a=b", "invalid key \"-a\"");
    check_error("Example.com/a=b", "invalid key");
    check_error("a/b/c=d", "invalid key");
    check_error("/a=b", "invalid key");
    check_error("a=-b", "invalid value \"-b\"");
    check_error("a=b!", "expected \",\" or the end");
    check_error("a in (x,-y)", "invalid value \"-y\"");
    check_error("a>x", "must be an integer");
    check_error("a in (x)(", "expected \",\" or the end");
    check_error("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1",
                "no more than 63");
    /* The offending (long) input is truncated in the message but the call fails cleanly. */
    char *big = malloc(SEL_MAX_LEN + 2);
    memset(big, 'a', SEL_MAX_LEN + 1);
    big[SEL_MAX_LEN + 1] = '\0';
    struct sel *s = NULL;
    struct err e;
    assert_int_equal(sel_parse(big, &s, &e), -E2BIG);
    free(big);
}

struct match_case {
    const char *sel;
    bool want;
};

static void test_matching(void **state)
{
    (void)state;
    json_t *labels = J("{\"app\":\"web\",\"tier\":\"front\",\"gpu\":\"4\",\"empty\":\"\"}");
    struct match_case cases[] = {
        {"", true},
        {"app=web", true},
        {"app==web", true},
        {"app=db", false},
        {"app!=db", true},
        {"app!=web", false},
        {"missing!=x", true}, /* != matches objects without the key */
        {"app in (db,web)", true},
        {"app in (db)", false},
        {"missing in (x)", false},
        {"app notin (db)", true},
        {"app notin (web)", false},
        {"missing notin (z)", true}, /* notin matches objects without the key */
        {"app", true},
        {"missing", false},
        {"!missing", true},
        {"!app", false},
        {"gpu>3", true},
        {"gpu>4", false},
        {"gpu<5", true},
        {"app>1", false}, /* non-integer label value never matches > or < */
        {"missing<5", false},
        {"empty=", true},
        {"empty in ()", true},
        {"app=web,tier=front,!missing", true},
        {"app=web,tier=back", false},
        {"app=web,missing", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sel *s = NULL;
        struct err e;
        if (sel_parse(cases[i].sel, &s, &e) != 0)
            fail_msg("parse %s: %s", cases[i].sel, e.msg);
        if (sel_matches(s, labels) != cases[i].want)
            fail_msg("\"%s\" should %smatch", cases[i].sel, cases[i].want ? "" : "not ");
        /* Same result through the key/value form. */
        struct sel_label kv[] = {{"app", "web"}, {"tier", "front"}, {"gpu", "4"}, {"empty", ""}};
        assert_int_equal(sel_matches_kv(s, kv, 4), cases[i].want);
        sel_free(s);
    }
    /* No labels at all. */
    struct sel *s = NULL;
    assert_int_equal(sel_parse("x notin (a),!y", &s, NULL), 0);
    assert_true(sel_matches(s, NULL));
    assert_true(sel_matches_kv(s, NULL, 0));
    sel_free(s);
    assert_int_equal(sel_parse("x", &s, NULL), 0);
    assert_false(sel_matches(s, NULL));
    sel_free(s);
    json_decref(labels);
}

static void test_label_selector_json(void **state)
{
    (void)state;
    json_t *labels = J("{\"name\":\"c1\",\"location-group\":\"edge\"}");
    struct sel *s = NULL;
    struct err e;
    /* nil selector matches nothing, {} everything */
    assert_int_equal(sel_from_label_selector(NULL, &s, &e), 0);
    assert_true(sel_is_nothing(s));
    assert_false(sel_matches(s, labels));
    sel_free(s);
    json_t *j = J("{}");
    assert_int_equal(sel_from_label_selector(j, &s, &e), 0);
    assert_true(sel_is_everything(s));
    assert_true(sel_matches(s, labels));
    sel_free(s);
    json_decref(j);

    j = J("{\"matchLabels\":{\"name\":\"c1\"},\"matchExpressions\":["
          "{\"key\":\"location-group\",\"operator\":\"In\",\"values\":[\"edge\",\"core\"]},"
          "{\"key\":\"tainted\",\"operator\":\"DoesNotExist\"},"
          "{\"key\":\"name\",\"operator\":\"Exists\",\"values\":[]},"
          "{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"z9\"]}]}");
    assert_int_equal(sel_from_label_selector(j, &s, &e), 0);
    assert_true(sel_matches(s, labels));
    char *f = sel_format(s);
    assert_string_equal(f, "location-group in (core,edge),name=c1,name,!tainted,zone notin (z9)");
    free(f);
    assert_string_equal(sel_exact_value(s, "name"), "c1");
    assert_null(sel_exact_value(s, "location-group"));
    sel_free(s);
    json_decref(j);

    j = J("{\"matchLabels\":{\"name\":\"c2\"}}");
    assert_int_equal(sel_from_label_selector(j, &s, &e), 0);
    assert_false(sel_matches(s, labels));
    sel_free(s);
    json_decref(j);

    struct {
        const char *json;
        const char *msg;
    } bad[] = {
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"},"
         "{\"key\":\"b\",\"operator\":\"In\"}]}",
         "matchExpressions[1].values: must be non-empty for operator In"},
        {"{\"matchExpressions\":[{\"key\":\"b\",\"operator\":\"NotIn\",\"values\":[]}]}",
         "matchExpressions[0].values: must be non-empty for operator NotIn"},
        {"{\"matchExpressions\":[{\"key\":\"b\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}",
         "matchExpressions[0].values: must be empty for operator Exists"},
        {"{\"matchExpressions\":[{\"key\":\"b\",\"operator\":\"DoesNotExist\",\"values\":[\"x\"]}]"
         "}",
         "must be empty for operator DoesNotExist"},
        {"{\"matchExpressions\":[{\"key\":\"b\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}",
         "matchExpressions[0].operator: \"Gt\" is not a valid operator"},
        {"{\"matchExpressions\":[{\"operator\":\"Exists\"}]}", "matchExpressions[0].key: required"},
        {"{\"matchExpressions\":[{\"key\":\"a\"}]}", "matchExpressions[0].operator: required"},
        {"{\"matchExpressions\":[{\"key\":\"-a\",\"operator\":\"Exists\"}]}", "invalid key \"-a\""},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[1]}]}",
         "values[0]: must be a string"},
        {"{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"a b\"]}]}",
         "invalid value \"a b\""},
        {"{\"matchExpressions\":{}}", "matchExpressions: must be an array"},
        {"{\"matchLabels\":{\"a\":1}}", "matchLabels[\"a\"]: value must be a string"},
        {"{\"matchLabels\":{\"a\":\"-x\"}}", "matchLabels[\"a\"]: invalid value \"-x\""},
        {"{\"matchLabels\":{\"a b\":\"x\"}}", "matchLabels: invalid key \"a b\""},
        {"{\"matchLabels\":[]}", "matchLabels: must be an object"},
        {"[]", "label selector: must be an object"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        j = J(bad[i].json);
        err_clear(&e);
        s = NULL;
        assert_int_equal(sel_from_label_selector(j, &s, &e), -EINVAL);
        assert_null(s);
        if (!strstr(e.msg, bad[i].msg))
            fail_msg("%s: error \"%s\" lacks \"%s\"", bad[i].json, e.msg, bad[i].msg);
        json_decref(j);
    }
    json_decref(labels);
}

static void test_key_value_validation(void **state)
{
    (void)state;
    struct err e;
    assert_int_equal(sel_validate_key("kubestellar.io/cluster", &e), 0);
    assert_int_equal(sel_validate_key("a", &e), 0);
    assert_int_equal(sel_validate_key("A_b.c-D", &e), 0);
    assert_int_equal(sel_validate_key("a.b-c.d/E", &e), 0);
    assert_int_equal(sel_validate_key("", &e), -EINVAL);
    assert_int_equal(sel_validate_key("a..b/c", &e), -EINVAL);
    assert_int_equal(sel_validate_key("-a.com/c", &e), -EINVAL);
    assert_int_equal(sel_validate_key("a.com/", &e), -EINVAL);
    assert_int_equal(sel_validate_key("a.com/-c", &e), -EINVAL);
    assert_non_null(strstr(e.msg, "a.com/-c"));
    assert_int_equal(sel_validate_value("", &e), 0);
    assert_int_equal(sel_validate_value("v1.2_3-x", &e), 0);
    assert_int_equal(sel_validate_value("x_", &e), -EINVAL);
    assert_int_equal(sel_validate_value("a/b", &e), -EINVAL);
}

static void test_field_selectors(void **state)
{
    (void)state;
    json_t *o =
        J("{\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns1\"},\"spec\":{\"nodeName\":"
          "\"n1\",\"unschedulable\":true,\"replicas\":3},\"status\":{\"phase\":\"a,b=c\"}}");
    struct {
        const char *sel;
        bool want;
    } cases[] = {
        {"", true},
        {"metadata.name=p1", true},
        {"metadata.name==p1", true},
        {"metadata.name!=p1", false},
        {"metadata.name=p1,metadata.namespace!=ns2", true},
        {"metadata.name=p1,metadata.namespace!=ns1", false},
        {"metadata.namespace=ns1,metadata.name=p2", false},
        {"spec.nodeName=", false},
        {"spec.missing=", true}, /* absent reads as "" */
        {"spec.missing!=", false},
        {"spec.unschedulable=true", true},
        {"spec.replicas=3", true},
        {"status.phase=a\\,b\\=c", true},
        {"metadata.name=p1,,", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sel_field *f = NULL, *f2 = NULL;
        struct err e;
        if (sel_field_parse(cases[i].sel, &f, &e) != 0)
            fail_msg("parse %s: %s", cases[i].sel, e.msg);
        if (sel_field_matches(f, o) != cases[i].want)
            fail_msg("\"%s\" should %smatch", cases[i].sel, cases[i].want ? "" : "not ");
        char *txt = sel_field_format(f);
        assert_int_equal(sel_field_parse(txt, &f2, &e), 0);
        assert_true(sel_field_equal(f, f2));
        free(txt);
        sel_field_free(f);
        sel_field_free(f2);
    }
    struct sel_field *f = NULL;
    assert_int_equal(sel_field_parse("metadata.namespace==b,metadata.name=a\\\\x", &f, NULL), 0);
    char *txt = sel_field_format(f);
    assert_string_equal(txt, "metadata.name=a\\\\x,metadata.namespace=b");
    free(txt);
    assert_string_equal(sel_field_exact_value(f, "metadata.namespace"), "b");
    assert_string_equal(sel_field_exact_value(f, "metadata.name"), "a\\x");
    assert_null(sel_field_exact_value(f, "spec.x"));
    sel_field_free(f);

    struct {
        const char *sel;
        const char *msg;
    } bad[] = {
        {"metadata.name", "expected an operator"},
        {"=x", "missing field name at position 0"},
        {"a=b=c", "unescaped \"=\" or \",\" in value at position 3"},
        {"a=b\\x", "invalid escape sequence"},
        {"a=b\\", "unterminated escape"},
        {"a b=c", "invalid character in field name"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct err e;
        err_clear(&e);
        f = NULL;
        assert_int_equal(sel_field_parse(bad[i].sel, &f, &e), -EINVAL);
        assert_null(f);
        if (!strstr(e.msg, bad[i].msg))
            fail_msg("%s: error \"%s\" lacks \"%s\"", bad[i].sel, e.msg, bad[i].msg);
        assert_non_null(strstr(e.msg, "field selector \""));
    }
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_format),        cmocka_unit_test(test_long_selector),
        cmocka_unit_test(test_parse_errors),        cmocka_unit_test(test_matching),
        cmocka_unit_test(test_label_selector_json), cmocka_unit_test(test_key_value_validation),
        cmocka_unit_test(test_field_selectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
