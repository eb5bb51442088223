/* Unit tests for controllers/workload/clustersel: the cluster selector of a job. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "controllers/workload/clustersel.h"
#include "test/support/tjson.h"

static void test_for(void **state)
{
    (void)state;
    json_t *job = tjson("{'metadata':{'annotations':{'kueue-ks.io/cluster-selector':"
                        "'location-group=eu,gpu-vendor in (nvidia)'}}}");
    json_t *plain = tjson("{'metadata':{'name':'j'}}");
    json_t *cq = tjson("{'metadata':{'name':'cq','annotations':{'kueue-ks.io/cluster-selector':"
                       "'name!=cluster1'}}}");
    json_t *badcq = tjson("{'metadata':{'name':'cq','annotations':{'kueue-ks.io/cluster-selector':"
                          "'a in (x'}}}");
    struct sel *s = NULL;
    const char *text, *from;
    /* the job's own selector wins over the ClusterQueue's */
    assert_int_equal(clsel_for(job, cq, &s, &text, &from, NULL), 0);
    assert_non_null(s);
    assert_string_equal(text, "location-group=eu,gpu-vendor in (nvidia)");
    assert_string_equal(from, "job");
    json_t *l = tjson("{'location-group':'eu','gpu-vendor':'nvidia'}");
    assert_true(sel_matches(s, l));
    json_decref(l);
    sel_free(s);
    /* no job annotation: the ClusterQueue's default */
    assert_int_equal(clsel_for(plain, cq, &s, &text, &from, NULL), 0);
    assert_string_equal(from, "ClusterQueue");
    json_t *c1 = clsel_cluster_labels("cluster1", NULL, NULL);
    json_t *c2 = clsel_cluster_labels("cluster2", NULL, NULL);
    assert_false(sel_matches(s, c1));
    assert_true(sel_matches(s, c2));
    json_decref(c1);
    json_decref(c2);
    sel_free(s);
    /* none: every cluster */
    assert_int_equal(clsel_for(plain, NULL, &s, &text, &from, NULL), 0);
    assert_null(s);
    assert_null(text);
    /* invalid: the object and the position are named */
    struct err e = {0};
    assert_int_equal(clsel_for(plain, badcq, &s, &text, &from, &e), -EINVAL);
    assert_null(s);
    assert_non_null(strstr(e.msg, "annotation kueue-ks.io/cluster-selector on the ClusterQueue "
                                  "cq: "));
    assert_non_null(strstr(e.msg, "missing \")\""));
    json_decref(job);
    json_decref(plain);
    json_decref(cq);
    json_decref(badcq);
}

static void test_cluster_labels(void **state)
{
    (void)state;
    json_t *cm = tjson("{'metadata':{'name':'c1','labels':{'location-group':'us','x':1,"
                       "'name':'spoof'}}}");
    json_t *extra = tjson("{'location-group':'eu','gpu-vendor':'nvidia'}");
    json_t *l = clsel_cluster_labels("c1", cm, extra);
    json_t *want = tjson("{'name':'c1','location-group':'eu','gpu-vendor':'nvidia'}");
    assert_true(json_equal(l, want));
    json_decref(l);
    json_decref(want);
    json_decref(cm);
    json_decref(extra);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_for),
                                       cmocka_unit_test(test_cluster_labels)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
