/* Unit tests for pkg/sched/affinity: node affinity as kube-scheduler's
 * NodeAffinity plugin applies it (component-helpers nodeaffinity semantics). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "pkg/sched/affinity.h"
#include "test/support/tjson.h"

#define REQ(terms)        "{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':" terms "}}"
#define TERMS(t)          "{'nodeSelectorTerms':[" t "]}"
#define TERMS2(a, b)      TERMS(a "," b)
#define EXPR(k, op, vals) "{'key':'" k "','operator':'" op "'" vals "}"

static bool req_match(const char *aff, const char *node, const char *labels)
{
    json_t *a = aff ? tjson(aff) : NULL;
    json_t *l = labels ? tjson(labels) : NULL;
    struct affinity *af = NULL;
    assert_int_equal(affinity_from_json(a, &af, NULL), 0);
    bool m = affinity_required_matches(af, node, l);
    affinity_free(af);
    json_decref(a);
    json_decref(l);
    return m;
}

/* Required terms: operator table, the node "n1" with the given labels. */
static void test_required_table(void **state)
{
    (void)state;
    const struct {
        const char *aff;
        const char *labels;
        bool want;
    } cases[] = {
        /* no affinity at all, or no required part: every node */
        {NULL, "{}", true},
        {"{}", "{}", true},
        {"{'nodeAffinity':{}}", "{}", true},
        {"{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':null}}", "{}", true},
        /* a required part without terms, or only empty terms: no node */
        {REQ("{}"), "{'a':'1'}", false},
        {REQ(TERMS("")), "{'a':'1'}", false},
        {REQ(TERMS("{}")), "{'a':'1'}", false},
        {REQ(TERMS("{'matchExpressions':[]}")), "{'a':'1'}", false},
        /* ...but an empty term next to a real one is dropped, the other decides */
        {REQ(TERMS2("{}", "{'matchExpressions':[" EXPR("a", "Exists", "") "]}")), "{'a':'1'}",
         true},
        /* In */
        {REQ(TERMS("{'matchExpressions':[" EXPR("gpu", "In", ",'values':['a100','h100']") "]}")),
         "{'gpu':'h100'}", true},
        {REQ(TERMS("{'matchExpressions':[" EXPR("gpu", "In", ",'values':['a100','h100']") "]}")),
         "{'gpu':'t4'}", false},
        {REQ(TERMS("{'matchExpressions':[" EXPR("gpu", "In", ",'values':['a100']") "]}")), "{}",
         false},
        /* NotIn matches a node without the key */
        {REQ(TERMS("{'matchExpressions':[" EXPR("gpu", "NotIn", ",'values':['t4']") "]}")), "{}",
         true},
        {REQ(TERMS("{'matchExpressions':[" EXPR("gpu", "NotIn", ",'values':['t4']") "]}")),
         "{'gpu':'t4'}", false},
        {REQ(TERMS("{'matchExpressions':[" EXPR("gpu", "NotIn", ",'values':['t4']") "]}")),
         "{'gpu':'h100'}", true},
        /* Exists / DoesNotExist (an empty value still exists) */
        {REQ(TERMS("{'matchExpressions':[" EXPR("spot", "Exists", "") "]}")), "{'spot':''}", true},
        {REQ(TERMS("{'matchExpressions':[" EXPR("spot", "Exists", "") "]}")), "{}", false},
        {REQ(TERMS("{'matchExpressions':[" EXPR("spot", "DoesNotExist", "") "]}")), "{}", true},
        {REQ(TERMS("{'matchExpressions':[" EXPR("spot", "DoesNotExist", "") "]}")), "{'spot':'x'}",
         false},
        /* Gt / Lt: integers only, strict, missing key or non-integer label: no match */
        {REQ(TERMS("{'matchExpressions':[" EXPR("mem", "Gt", ",'values':['16']") "]}")),
         "{'mem':'32'}", true},
        {REQ(TERMS("{'matchExpressions':[" EXPR("mem", "Gt", ",'values':['16']") "]}")),
         "{'mem':'16'}", false},
        {REQ(TERMS("{'matchExpressions':[" EXPR("mem", "Gt", ",'values':['-5']") "]}")),
         "{'mem':'-4'}", false}, /* "-5" is not a valid label value: the term is invalid */
        {REQ(TERMS("{'matchExpressions':[" EXPR("mem", "Gt", ",'values':['16']") "]}")),
         "{'mem':'32Gi'}", false},
        {REQ(TERMS("{'matchExpressions':[" EXPR("mem", "Gt", ",'values':['16']") "]}")), "{}",
         false},
        {REQ(TERMS("{'matchExpressions':[" EXPR("mem", "Lt", ",'values':['16']") "]}")),
         "{'mem':'15'}", true},
        {REQ(TERMS("{'matchExpressions':[" EXPR("mem", "Lt", ",'values':['16']") "]}")),
         "{'mem':'16'}", false},
        {REQ(TERMS("{'matchExpressions':[" EXPR("mem", "Lt", ",'values':['16']") "]}")),
         "{'mem':'99999999999999999999'}", false}, /* overflows int64: not an integer */
        /* expressions of a term are ANDed */
        {REQ(TERMS("{'matchExpressions':[" EXPR("a", "Exists",
                                                "") "," EXPR("b", "In", ",'values':['1']") "]}")),
         "{'a':'x','b':'1'}", true},
        {REQ(TERMS("{'matchExpressions':[" EXPR("a", "Exists",
                                                "") "," EXPR("b", "In", ",'values':['1']") "]}")),
         "{'a':'x','b':'2'}", false},
        /* terms are ORed */
        {REQ(TERMS2("{'matchExpressions':[" EXPR("a", "Exists", "") "]}",
                    "{'matchExpressions':[" EXPR("b", "Exists", "") "]}")),
         "{'b':'x'}", true},
        {REQ(TERMS2("{'matchExpressions':[" EXPR("a", "Exists", "") "]}",
                    "{'matchExpressions':[" EXPR("b", "Exists", "") "]}")),
         "{'c':'x'}", false},
        /* matchFields on metadata.name */
        {REQ(TERMS("{'matchFields':[" EXPR("metadata.name", "In", ",'values':['n1']") "]}")), "{}",
         true},
        {REQ(TERMS("{'matchFields':[" EXPR("metadata.name", "In", ",'values':['n2']") "]}")), "{}",
         false},
        {REQ(TERMS("{'matchFields':[" EXPR("metadata.name", "NotIn", ",'values':['n1']") "]}")),
         "{}", false},
        {REQ(TERMS("{'matchFields':[" EXPR("metadata.name", "NotIn", ",'values':['n2']") "]}")),
         "{}", true},
        /* another field reads as "" */
        {REQ(TERMS("{'matchFields':[" EXPR("spec.x", "In", ",'values':['n1']") "]}")), "{}", false},
        /* labels and fields of one term are ANDed */
        {REQ(TERMS("{'matchExpressions':[" EXPR("a", "Exists", "") "],'matchFields':[" EXPR(
             "metadata.name", "In", ",'values':['n1']") "]}")),
         "{}", false},
        /* an invalid term never matches, a valid one next to it still does */
        {REQ(TERMS("{'matchExpressions':[" EXPR("a", "Foo", ",'values':['1']") "]}")), "{'a':'1'}",
         false},
        {REQ(TERMS2("{'matchExpressions':[" EXPR("a", "Gt", ",'values':['x']") "]}",
                    "{'matchExpressions':[" EXPR("b", "Exists", "") "]}")),
         "{'a':'5','b':''}", true},
        {REQ(TERMS("{'matchExpressions':[" EXPR("a", "In", ",'values':[]") "]}")), "{'a':'1'}",
         false},
        {REQ(TERMS("{'matchExpressions':[" EXPR("a", "Exists", ",'values':['1']") "]}")),
         "{'a':'1'}", false},
        {REQ(TERMS("{'matchFields':[" EXPR("metadata.name", "In", ",'values':['n1','n2']") "]}")),
         "{}", false},
        {REQ(TERMS("{'matchFields':[" EXPR("metadata.name", "Exists", "") "]}")), "{}", false},
        {REQ(TERMS("{'matchExpressions':[" EXPR("bad key!", "Exists", "") "]}")),
         "{'bad key!':'1'}", false},
        {REQ(TERMS("{'matchExpressions':'x'}")), "{}", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool got = req_match(cases[i].aff, "n1", cases[i].labels);
        if (got != cases[i].want)
            fail_msg("case %zu: %s on %s: got %d", i, cases[i].aff ? cases[i].aff : "(none)",
                     cases[i].labels, got);
    }
}

/* A node without a name skips the field check (upstream extractNodeFields). */
static void test_fields_without_name(void **state)
{
    (void)state;
    const char *a =
        REQ(TERMS("{'matchFields':[" EXPR("metadata.name", "In", ",'values':['n1']") "]}"));
    assert_true(req_match(a, NULL, "{}"));
    assert_true(req_match(a, "", "{}"));
    assert_false(req_match(a, "n2", "{}"));
}

static void test_errors_named(void **state)
{
    (void)state;
    json_t *a =
        tjson(REQ(TERMS2("{'matchExpressions':[" EXPR("a", "Exists", "") "," EXPR(
                             "b", "Foo", ",'values':['1']") "]}",
                         "{'matchExpressions':[" EXPR("c", "Gt", ",'values':['1.5']") "]}")));
    struct affinity *af = NULL;
    assert_int_equal(affinity_from_json(a, &af, NULL), 0);
    const char *errs = affinity_errors(af);
    assert_non_null(errs);
    assert_non_null(strstr(errs, "nodeSelectorTerms[0].matchExpressions[1].operator: \"Foo\" is "
                                 "not one of In, NotIn, Exists, DoesNotExist, Gt, Lt"));
    assert_non_null(strstr(errs, "nodeSelectorTerms[1].matchExpressions[0].values: operator Gt / "
                                 "Lt needs an integer, not \"1.5\""));
    assert_string_equal(affinity_required_text(af), "(invalid) or (invalid)");
    affinity_free(af);
    json_decref(a);

    /* wrong types at the top: an error, no crash */
    struct err e = {0};
    json_t *s = json_string("x");
    assert_int_equal(affinity_from_json(s, &af, &e), -EINVAL);
    assert_null(af);
    assert_string_equal(e.msg, "affinity: not an object");
    json_decref(s);
    json_t *b = tjson("{'nodeAffinity':[]}");
    assert_int_equal(affinity_from_json(b, &af, &e), -EINVAL);
    json_decref(b);
    /* a valid affinity has no errors */
    json_t *ok = tjson(REQ(TERMS("{'matchExpressions':[" EXPR("a", "Exists", "") "]}")));
    assert_int_equal(affinity_from_json(ok, &af, NULL), 0);
    assert_null(affinity_errors(af));
    assert_true(affinity_has_required(af));
    affinity_free(af);
    json_decref(ok);
}

static void test_text(void **state)
{
    (void)state;
    json_t *a = tjson(
        REQ(TERMS2("{'matchExpressions':[" EXPR("gpu", "In", ",'values':['a100','h100']") "," EXPR(
                       "zone", "Exists", "") "]}",
                   "{'matchFields':[" EXPR("metadata.name", "NotIn", ",'values':['n1']") "]}")));
    struct affinity *af = NULL;
    assert_int_equal(affinity_from_json(a, &af, NULL), 0);
    assert_string_equal(affinity_required_text(af),
                        "(gpu In [a100,h100], zone Exists) or (metadata.name NotIn [n1])");
    affinity_free(af);
    json_decref(a);
    json_t *none = tjson(REQ(TERMS("")));
    assert_int_equal(affinity_from_json(none, &af, NULL), 0);
    assert_string_equal(affinity_required_text(af), "(no terms: matches no node)");
    affinity_free(af);
    json_decref(none);
    assert_int_equal(affinity_from_json(NULL, &af, NULL), 0);
    assert_string_equal(affinity_required_text(af), "");
    assert_false(affinity_has_required(af));
    affinity_free(af);
}

/* Preferred terms: the sum of matched weights; weight 0, empty and invalid ignored. */
static void test_preferred(void **state)
{
    (void)state;
    json_t *a = tjson(
        "{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
        "{'weight':50,'preference':{'matchExpressions':[" EXPR(
            "gpu", "In",
            ",'values':['h100']") "]}},"
                                  "{'weight':20,'preference':{'matchExpressions':[" EXPR(
                                      "zone", "Exists",
                                      "") "]}},"
                                          "{'weight':0,'preference':{'matchExpressions':[" EXPR(
                                              "zone", "Exists",
                                              "") "]}},"
                                                  "{'weight':7,'preference':{}},"
                                                  "{'weight':9,'preference':{'matchExpressions':"
                                                  "[" EXPR("x", "Gt",
                                                           ",'values':['y']") "]}},"
                                                                              "{'weight':3,'"
                                                                              "preference':{'"
                                                                              "matchFields':[" EXPR(
                                                                                  "metadata.name",
                                                                                  "In",
                                                                                  ",'values':['n1'"
                                                                                  "]") "]}}"
                                                                                       "]}}");
    struct affinity *af = NULL;
    assert_int_equal(affinity_from_json(a, &af, NULL), 0);
    assert_false(affinity_has_required(af));
    assert_int_equal(affinity_preferred_total(af), 73);
    json_t *l1 = tjson("{'gpu':'h100','zone':'a'}");
    json_t *l2 = tjson("{'gpu':'t4'}");
    assert_int_equal(affinity_preferred_score(af, "n1", l1), 73);
    assert_int_equal(affinity_preferred_score(af, "n2", l1), 70);
    assert_int_equal(affinity_preferred_score(af, "n2", l2), 0);
    assert_int_equal(affinity_preferred_score(af, "n1", NULL), 3);
    assert_true(affinity_required_matches(af, "n2", l2));
    assert_non_null(affinity_errors(af)); /* the invalid preferred term is named */
    assert_non_null(strstr(affinity_errors(af),
                           "preferredDuringSchedulingIgnoredDuringExecution[4].preference"));
    json_decref(l1);
    json_decref(l2);
    affinity_free(af);
    json_decref(a);
    assert_int_equal(affinity_preferred_score(NULL, "n", NULL), 0);
    assert_true(affinity_required_matches(NULL, "n", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_required_table), cmocka_unit_test(test_fields_without_name),
        cmocka_unit_test(test_errors_named),   cmocka_unit_test(test_text),
        cmocka_unit_test(test_preferred),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
