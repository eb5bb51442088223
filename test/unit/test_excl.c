/* Unit tests for controllers/workload/excl: clusters a job is kept away from. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

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
    assert_string_equal(s, "cluster2=2026-11-24T10:20:00Z,cluster1=2026-11-24T10:10:00Z");
    assert_int_equal(excl_until(s, "cluster1", T0), T0 + 600000);
    assert_int_equal(excl_until(s, "cluster2", T0), T0 + 1200000);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_until),
        cmocka_unit_test(test_with),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
