/* Unit tests for controllers/workload/excl: clusters a job is kept away from. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "controllers/workload/excl.h"

/* 2026-11-24T10:00:00Z */
#define T0 1795514400000LL

static void test_until(void **state)
{
    (void)state;
    const char *v = "cluster1=2026-11-24T10:05:00Z, cluster2=2026-11-24T09:59:59Z";
    /* in force: until 10:05 */
    assert_int_equal(excl_until(v, "cluster1", T0), T0 + 300000);
    /* expired: usable again */
    assert_int_equal(excl_until(v, "cluster2", T0), 0);
    /* the exact until-time is no longer excluded */
    assert_int_equal(excl_until(v, "cluster1", T0 + 300000), 0);
    /* no entry, no annotation */
    assert_int_equal(excl_until(v, "cluster", T0), 0);
    assert_int_equal(excl_until(NULL, "cluster1", T0), 0);
    /* the latest of two entries counts */
    assert_int_equal(
        excl_until("c=2026-11-24T10:01:00Z,c=2026-11-24T10:03:00Z,c=2026-11-24T10:02:00Z", "c", T0),
        T0 + 180000);
    /* hostile values: ignored entries, never a crash */
    static const char *const bad[] = {"",           ",,,",        "=",
                                      "cluster1",   "cluster1=",  "=2026-11-24T10:05:00Z",
                                      "cluster1=x", "cluster1==", "cluster1=2026-13-45T99:99:99Z"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(excl_until(bad[i], "cluster1", T0), 0);
    /* a bad entry does not hide a good one */
    assert_int_equal(excl_until("junk,cluster1=2026-11-24T10:05:00Z", "cluster1", T0), T0 + 300000);
}

static void test_with(void **state)
{
    (void)state;
    char *s = excl_with(NULL, "cluster1", T0 + 600000, T0);
    assert_string_equal(s, "cluster1=2026-11-24T10:10:00Z");
    free(s);
    /* expired and bad entries are dropped, the cluster's old one replaced, others kept */
    s = excl_with("old=2026-11-24T09:00:00Z,junk,cluster2=2026-11-24T10:20:00Z,"
                  "cluster1=2026-11-24T10:01:00Z",
                  "cluster1", T0 + 600000, T0);
    assert_string_equal(s, "cluster1=2026-11-24T10:10:00Z,cluster2=2026-11-24T10:20:00Z");
    assert_int_equal(excl_until(s, "cluster1", T0), T0 + 600000);
    assert_int_equal(excl_until(s, "cluster2", T0), T0 + 1200000);
    free(s);
}

static void test_explain(void **state)
{
    (void)state;
    struct sel *sel = NULL;
    assert_int_equal(sel_parse("location-group=eu", &sel, NULL), 0);
    json_t *eu = json_pack("{s:s, s:s}", "name", "cluster2", "location-group", "eu");
    json_t *us = json_pack("{s:s, s:s}", "name", "cluster1", "location-group", "us");
    const char *v = "cluster2=2026-11-24T10:05:00Z";
    bool tmp = true;
    char *s =
        excl_explain(v, sel, "location-group=eu", "ClusterQueue cq", "cluster1", us, T0, &tmp);
    assert_string_equal(s, "excluded by the cluster selector \"location-group=eu\" (from the "
                           "ClusterQueue cq)");
    assert_false(tmp);
    free(s);
    s = excl_explain(v, sel, "location-group=eu", "job", "cluster2", eu, T0, &tmp);
    assert_string_equal(s, "excluded until 2026-11-24T10:05:00Z: its pods could not be scheduled "
                           "there (kueue-ks.io/excluded-clusters)");
    assert_true(tmp);
    free(s);
    /* expired, no selector: a candidate */
    assert_null(excl_explain(v, NULL, NULL, NULL, "cluster2", eu, T0 + 300000, &tmp));
    assert_false(tmp);
    json_decref(eu);
    json_decref(us);
    sel_free(sel);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_until),
        cmocka_unit_test(test_with),
        cmocka_unit_test(test_explain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
