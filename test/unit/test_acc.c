/* Unit tests for controllers/workload/acc: the Active condition. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/acc.h"
#include "pkg/json/jsonx.h"

static json_t *J(const char *s)
{
    struct err e;
    json_t *v = jx_loadb(s, strlen(s), &e);
    if (!v)
        fail_msg("bad test JSON: %s", e.msg);
    return v;
}

#define AC_BASE                                                                                    \
    "\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"AdmissionCheck\",\"metadata\":{"         \
    "\"name\":\"ks\",\"resourceVersion\":\"3\",\"generation\":1},\"spec\":{\"controllerName\":"    \
    "\"kubestellar.io/ks-kueue\"}"

static void test_active_transitions(void **state)
{
    (void)state;
    json_t *ac = J("{" AC_BASE "}");
    assert_true(acc_is_ours(ac));
    json_t *p = NULL;
    /* new check, one usable worker: Active=True */
    assert_int_equal(acc_decide(ac, 1, 2, "T1", &p, NULL), 1);
    assert_string_equal(jx_str(p, "metadata.resourceVersion", ""), "3");
    json_t *conds = jx_arr(p, "status.conditions");
    assert_int_equal(json_array_size(conds), 1);
    assert_string_equal(jx_str(conds, "[0].type", ""), "Active");
    assert_string_equal(jx_str(conds, "[0].status", ""), "True");
    assert_string_equal(jx_str(conds, "[0].reason", ""), "Active");
    assert_string_equal(jx_str(conds, "[0].message", ""), "1 of 2 worker clusters usable");
    assert_string_equal(jx_str(conds, "[0].lastTransitionTime", ""), "T1");
    /* apply it: the same input now needs no write */
    json_t *ac2 = jx_merge_apply(ac, p);
    json_decref(p);
    assert_int_equal(acc_decide(ac2, 1, 2, "T2", &p, NULL), 0);
    assert_null(p);
    /* every worker lost: False / NoUsableClusters, transition time moves */
    assert_int_equal(acc_decide(ac2, 0, 2, "T3", &p, NULL), 1);
    assert_string_equal(jx_str(p, "status.conditions[0].status", ""), "False");
    assert_string_equal(jx_str(p, "status.conditions[0].reason", ""), "NoUsableClusters");
    assert_string_equal(jx_str(p, "status.conditions[0].lastTransitionTime", ""), "T3");
    assert_non_null(strstr(jx_str(p, "status.conditions[0].message", ""), "2 registered"));
    json_decref(p);
    assert_int_equal(acc_decide(ac2, 0, 0, "T3", &p, NULL), 1);
    assert_non_null(strstr(jx_str(p, "status.conditions[0].message", ""), "kueue-ks.io/worker"));
    json_decref(p);
    json_decref(ac2);
    json_decref(ac);
}

static void test_other_conditions_kept(void **state)
{
    (void)state;
    json_t *ac = J("{" AC_BASE ",\"status\":{\"conditions\":[{\"type\":\"Custom\",\"status\":"
                   "\"True\"},{\"type\":\"Active\",\"status\":\"True\",\"reason\":\"Active\","
                   "\"message\":\"2 of 2 worker clusters usable\",\"observedGeneration\":1,"
                   "\"lastTransitionTime\":\"T0\"}]}}");
    json_t *p = NULL;
    assert_int_equal(acc_decide(ac, 2, 2, "T1", &p, NULL), 0);
    /* a message change keeps the transition time (status unchanged) and the other condition */
    assert_int_equal(acc_decide(ac, 1, 2, "T1", &p, NULL), 1);
    json_t *conds = jx_arr(p, "status.conditions");
    assert_int_equal(json_array_size(conds), 2);
    assert_string_equal(jx_str(conds, "[0].type", ""), "Custom");
    assert_string_equal(jx_str(conds, "[1].lastTransitionTime", ""), "T0");
    json_decref(p);
    json_decref(ac);
}

static void test_not_ours(void **state)
{
    (void)state;
    json_t *ac = J("{\"metadata\":{\"name\":\"mk\"},\"spec\":{\"controllerName\":"
                   "\"kueue.x-k8s.io/multikueue\"}}");
    assert_false(acc_is_ours(ac));
    json_t *p = (json_t *)1;
    struct err e;
    assert_int_equal(acc_decide(ac, 1, 1, NULL, &p, &e), -EINVAL);
    assert_null(p);
    assert_non_null(strstr(e.msg, "mk"));
    json_decref(ac);
    assert_false(acc_is_ours(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_active_transitions),
        cmocka_unit_test(test_other_conditions_kept),
        cmocka_unit_test(test_not_ours),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
