/* Unit tests for devhub/sim_res: the simulators' resource lists and node
 * matching, which delegate to pkg/podres and pkg/sched. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/sim_res.h"
#include "test/support/tjson.h"

/* Compare a JSON value with the expected JSON text (canonical dump). */
static void assert_json(const json_t *got, const char *want)
{
    json_t *w = tjson(want);
    if (!json_equal((json_t *)got, w)) {
        char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
        fail_msg("got %s, want %s", g, want);
    }
    json_decref(w);
}

static void test_pod_requests(void **state)
{
    (void)state;
    /* Containers summed, limit stands in for a missing request, init max. */
    json_t *spec = tjson("{'containers':[{'resources':{'requests':{'cpu':'1','memory':'1Gi'}}},"
                         "{'resources':{'limits':{'cpu':'500m','nvidia.com/gpu':'1'}}}],"
                         "'initContainers':[{'resources':{'requests':{'cpu':'2'}}}]}");
    json_t *r = simres_pod_requests(spec);
    assert_json(r, "{'cpu':'2','memory':'1Gi','nvidia.com/gpu':'1'}");
    json_decref(r);
    json_decref(spec);

    /* Sidecar + overhead (rules that came with pkg/podres): cpu max(1+0.5, 0.5+2) + 0.1. */
    spec = tjson("{'initContainers':[{'restartPolicy':'Always','resources':{'requests':"
                 "{'cpu':'500m'}}},{'resources':{'requests':{'cpu':'2'}}}],"
                 "'containers':[{'resources':{'requests':{'cpu':'1'}}}],"
                 "'overhead':{'cpu':'100m'}}");
    r = simres_pod_requests(spec);
    assert_json(r, "{'cpu':'2600m'}");
    json_decref(r);
    json_decref(spec);

    /* A whole Pod works too. */
    spec = tjson("{'spec':{'containers':[{'resources':{'requests':{'memory':'64Mi'}}}]}}");
    r = simres_pod_requests(spec);
    assert_json(r, "{'memory':'64Mi'}");
    json_decref(r);
    json_decref(spec);

    /* Malformed: empty list, never a crash. */
    const char *bad[] = {"{'containers':{}}",
                         "{'containers':[{'resources':{'requests':{'cpu':'1.5.5'}}}]}",
                         "{'containers':[{'resources':{'requests':{'cpu':'-1'}}}]}", "7"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        spec = tjson(bad[i]);
        r = simres_pod_requests(spec);
        assert_non_null(r);
        assert_int_equal(json_object_size(r), 0);
        json_decref(r);
        json_decref(spec);
    }
    r = simres_pod_requests(NULL);
    assert_int_equal(json_object_size(r), 0);
    json_decref(r);
}

static void test_fits_add(void **state)
{
    (void)state;
    json_t *req = tjson("{'cpu':'1','memory':'1Gi'}");
    json_t *cap = tjson("{'cpu':'2','memory':'2Gi'}");
    json_t *used = tjson("{}");
    const char *short_of = NULL;
    assert_true(simres_fits(req, used, cap, &short_of));
    simres_add(used, req, 2);
    assert_json(used, "{'cpu':'2','memory':'2Gi'}");
    assert_false(simres_fits(req, used, cap, &short_of));
    assert_non_null(short_of);
    simres_sub(used, req);
    assert_true(simres_fits(req, used, cap, NULL));
    assert_false(simres_is_zero(used));
    json_decref(req);
    json_decref(cap);
    json_decref(used);
}

static void test_matching(void **state)
{
    (void)state;
    json_t *labels = tjson("{'zone':'a'}");
    json_t *sel = tjson("{'zone':'a'}");
    json_t *sel_b = tjson("{'zone':'b'}");
    assert_true(simres_selector_matches(sel, labels));
    assert_false(simres_selector_matches(sel_b, labels));
    assert_true(simres_selector_matches(NULL, labels));
    json_t *taints = tjson("[{'key':'gpu','value':'y','effect':'NoSchedule'},"
                           "{'key':'x','effect':'PreferNoSchedule'}]");
    json_t *tol = tjson("[{'key':'gpu','operator':'Exists'}]");
    json_t *tol_wrong = tjson("[{'key':'gpu','value':'n'}]");
    assert_true(simres_tolerates_all(tol, taints));
    assert_false(simres_tolerates_all(tol_wrong, taints));
    assert_false(simres_tolerates_all(NULL, taints));
    json_decref(labels);
    json_decref(sel);
    json_decref(sel_b);
    json_decref(taints);
    json_decref(tol);
    json_decref(tol_wrong);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_requests),
        cmocka_unit_test(test_fits_add),
        cmocka_unit_test(test_matching),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
