/* Unit tests for pkg/sched: toleration-vs-taint and nodeSelector matching. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <string.h>

#include "pkg/sched/sched.h"
#include "test/support/tjson.h"

static void test_op_parse(void **state)
{
    (void)state;
    assert_int_equal(sched_op_parse(NULL), SCHED_OP_EQUAL);
    assert_int_equal(sched_op_parse(""), SCHED_OP_EQUAL);
    assert_int_equal(sched_op_parse("Equal"), SCHED_OP_EQUAL);
    assert_int_equal(sched_op_parse("Exists"), SCHED_OP_EXISTS);
    assert_int_equal(sched_op_parse("exists"), SCHED_OP_INVALID);
    assert_int_equal(sched_op_parse("Gt"), SCHED_OP_INVALID);
}

/* The ToleratesTaint table: toleration, taint, expected. */
static void test_tolerates(void **state)
{
    (void)state;
    const struct sched_taint ns = {"k", "v", "NoSchedule"};
    const struct sched_taint ne = {"k", "v", "NoExecute"};
    const struct {
        struct sched_toleration t;
        const struct sched_taint *taint;
        bool want;
    } cases[] = {
        {{"k", SCHED_OP_EQUAL, "v", "NoSchedule"}, &ns, true},
        {{"k", SCHED_OP_EQUAL, "v", ""}, &ns, true}, /* empty effect: all */
        {{"k", SCHED_OP_EQUAL, "v", ""}, &ne, true},
        {{"k", SCHED_OP_EQUAL, "v", "NoExecute"}, &ns, false}, /* other effect */
        {{"k", SCHED_OP_EQUAL, "w", ""}, &ns, false},          /* other value */
        {{"k", SCHED_OP_EQUAL, "", ""}, &ns, false},
        {{"j", SCHED_OP_EQUAL, "v", ""}, &ns, false}, /* other key */
        {{"k", SCHED_OP_EXISTS, "", ""}, &ns, true},  /* Exists ignores value */
        {{"k", SCHED_OP_EXISTS, "zzz", ""}, &ns, true},
        {{"j", SCHED_OP_EXISTS, "", ""}, &ns, false},
        {{"", SCHED_OP_EXISTS, "", ""}, &ns, true}, /* tolerates everything */
        {{"", SCHED_OP_EXISTS, "", ""}, &ne, true},
        {{"", SCHED_OP_EXISTS, "", "NoExecute"}, &ns, false}, /* ...of that effect */
        {{"", SCHED_OP_EQUAL, "v", ""}, &ns, true},           /* K8s: key skipped, value */
        {{"", SCHED_OP_EQUAL, "x", ""}, &ns, false},
        {{"k", SCHED_OP_INVALID, "v", ""}, &ns, false},   /* unknown operator */
        {{NULL, SCHED_OP_EXISTS, NULL, NULL}, &ns, true}, /* NULL reads as "" */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (sched_tolerates(&cases[i].t, cases[i].taint) != cases[i].want)
            fail_msg("case %zu: want %d", i, cases[i].want);
    struct sched_taint nullv = {"k", NULL, "NoSchedule"};
    struct sched_toleration eq_empty = {"k", SCHED_OP_EQUAL, "", ""};
    assert_true(sched_tolerates(&eq_empty, &nullv));
}

static void test_effect_blocks(void **state)
{
    (void)state;
    assert_true(sched_effect_blocks("NoSchedule"));
    assert_true(sched_effect_blocks("NoExecute"));
    assert_false(sched_effect_blocks("PreferNoSchedule"));
    assert_false(sched_effect_blocks(""));
    assert_false(sched_effect_blocks("noschedule"));
    assert_false(sched_effect_blocks(NULL));
}

static void test_views(void **state)
{
    (void)state;
    json_t *j = tjson("{'key':'k','operator':'Exists','value':'v','effect':'NoExecute'}");
    struct sched_toleration t;
    sched_toleration_view(j, &t);
    assert_string_equal(t.key, "k");
    assert_int_equal(t.op, SCHED_OP_EXISTS);
    assert_string_equal(t.value, "v");
    assert_string_equal(t.effect, "NoExecute");
    json_decref(j);

    j = tjson("{'key':7,'operator':5}");
    sched_toleration_view(j, &t);
    assert_string_equal(t.key, "");
    assert_int_equal(t.op, SCHED_OP_INVALID); /* non-string operator */
    assert_string_equal(t.value, "");
    json_decref(j);

    j = tjson("{'operator':null}");
    sched_toleration_view(j, &t);
    assert_int_equal(t.op, SCHED_OP_EQUAL);
    json_decref(j);

    j = tjson("[1]");
    sched_toleration_view(j, &t);
    assert_string_equal(t.key, "");
    assert_int_equal(t.op, SCHED_OP_EQUAL);
    struct sched_taint n;
    sched_taint_view(j, &n);
    assert_string_equal(n.key, "");
    assert_string_equal(n.effect, "");
    json_decref(j);

    j = tjson("{'key':'a','value':'b','effect':'NoSchedule'}");
    sched_taint_view(j, &n);
    assert_string_equal(n.key, "a");
    assert_string_equal(n.value, "b");
    assert_string_equal(n.effect, "NoSchedule");
    json_decref(j);
}

static void test_tolerates_all_json(void **state)
{
    (void)state;
    json_t *taints = tjson("[{'key':'gpu','value':'yes','effect':'NoSchedule'},"
                           "{'key':'soft','effect':'PreferNoSchedule'},"
                           "{'key':'zone','value':'a','effect':'NoExecute'}]");
    json_t *none = tjson("[]");
    json_t *both = tjson("[{'key':'gpu','operator':'Equal','value':'yes'},"
                         "{'key':'zone','operator':'Exists','effect':'NoExecute'}]");
    json_t *gpu_only = tjson("[{'key':'gpu','value':'yes','effect':'NoSchedule'}]");
    json_t *all = tjson("[{'operator':'Exists'}]");
    json_t *bad_op = tjson("[{'key':'gpu','operator':'Foo','value':'yes'},"
                           "{'key':'zone','operator':'Exists'}]");
    json_t *soft_only = tjson("[{'key':'soft','effect':'PreferNoSchedule'}]");

    assert_false(sched_tolerates_all_json(none, taints));
    assert_false(sched_tolerates_all_json(NULL, taints));
    assert_true(sched_tolerates_all_json(both, taints)); /* PreferNoSchedule ignored */
    assert_false(sched_tolerates_all_json(gpu_only, taints));
    assert_true(sched_tolerates_all_json(all, taints));
    assert_false(sched_tolerates_all_json(bad_op, taints));
    /* Only soft taints: nothing blocks. */
    assert_true(sched_tolerates_all_json(none, soft_only));
    assert_true(sched_tolerates_all_json(NULL, NULL));
    assert_true(sched_tolerates_all_json(none, none));
    /* Not arrays: empty. */
    json_t *obj = tjson("{'key':'gpu'}");
    assert_true(sched_tolerates_all_json(both, obj));
    assert_false(sched_tolerates_all_json(obj, taints));
    json_decref(obj);
    json_decref(taints);
    json_decref(none);
    json_decref(both);
    json_decref(gpu_only);
    json_decref(all);
    json_decref(bad_op);
    json_decref(soft_only);
}

static void test_labels(void **state)
{
    (void)state;
    json_t *labels = tjson("{'zone':'a','gpu':'true','n':'3'}");
    assert_true(sched_label_matches(labels, "zone", "a"));
    assert_false(sched_label_matches(labels, "zone", "b"));
    assert_false(sched_label_matches(labels, "missing", "a"));
    assert_false(sched_label_matches(labels, "zone", NULL));
    assert_false(sched_label_matches(NULL, "zone", "a"));

    json_t *sel = tjson("{'zone':'a','gpu':'true'}");
    json_t *sel_miss = tjson("{'zone':'a','gpu':'false'}");
    json_t *sel_num = tjson("{'n':3}"); /* not a string: matches nothing */
    json_t *empty = tjson("{}");
    assert_true(sched_selector_matches_json(sel, labels));
    assert_false(sched_selector_matches_json(sel_miss, labels));
    assert_false(sched_selector_matches_json(sel_num, labels));
    assert_true(sched_selector_matches_json(empty, labels));
    assert_true(sched_selector_matches_json(NULL, labels));
    assert_true(sched_selector_matches_json(NULL, NULL));
    assert_false(sched_selector_matches_json(sel, NULL));
    assert_true(sched_selector_matches_json(empty, NULL));
    /* A label value that is not a string never matches. */
    json_t *odd = tjson("{'zone':1}");
    json_t *sel_zone = tjson("{'zone':'1'}");
    assert_false(sched_selector_matches_json(sel_zone, odd));
    json_decref(odd);
    json_decref(sel_zone);
    json_decref(labels);
    json_decref(sel);
    json_decref(sel_miss);
    json_decref(sel_num);
    json_decref(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_parse),           cmocka_unit_test(test_tolerates),
        cmocka_unit_test(test_effect_blocks),      cmocka_unit_test(test_views),
        cmocka_unit_test(test_tolerates_all_json), cmocka_unit_test(test_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
