/* Unit tests for pkg/podres: effective per-pod requests and limits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/podres/podres.h"

/* Parse `pod_json`, compute, and compare both lists (as canonical JSON) with
 * the expected objects. */
static void check_pod(const char *pod_json, const char *want_req, const char *want_lim)
{
    json_error_t je;
    json_t *pod = json_loads(pod_json, 0, &je);
    assert_non_null(pod);
    struct podres_list req = {0}, lim = {0};
    struct err e;
    err_clear(&e);
    int rc = podres_pod(pod, &req, &lim, &e);
    if (rc != 0)
        fail_msg("podres_pod: %s", e.msg);
    json_t *jr = podres_to_json(&req), *jl = podres_to_json(&lim);
    char *sr = json_dumps(jr, JSON_SORT_KEYS | JSON_COMPACT);
    char *sl = json_dumps(jl, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(sr, want_req);
    assert_string_equal(sl, want_lim);
    free(sr);
    free(sl);
    json_decref(jr);
    json_decref(jl);
    podres_free(&req);
    podres_free(&lim);
    json_decref(pod);
}

static void test_containers_summed_exactly(void **state)
{
    (void)state;
    check_pod("{\"spec\":{\"containers\":["
              "{\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1.5Gi\"},"
              "\"limits\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}}},"
              "{\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"512Mi\"}}},"
              "{\"resources\":{\"requests\":{\"cpu\":\"0.25\",\"nvidia.com/gpu\":1}}}]}}",
              "{\"cpu\":\"1\",\"memory\":\"2Gi\",\"nvidia.com/gpu\":\"1\"}",
              "{\"cpu\":\"1\",\"memory\":\"2Gi\"}");
    /* 1.5Gi alone prints canonically; 500m + 1 keeps the milli form. */
    check_pod("{\"spec\":{\"containers\":["
              "{\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1.5Gi\"}}},"
              "{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
              "{\"cpu\":\"1500m\",\"memory\":\"1536Mi\"}", "{}");
}

static void test_missing_requests(void **state)
{
    (void)state;
    /* No resources at all, null resources, empty objects: nothing requested. */
    check_pod("{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"resources\":null},"
              "{\"resources\":{}},{\"resources\":{\"requests\":null}}]}}",
              "{}", "{}");
    /* No containers key at all. */
    check_pod("{\"spec\":{}}", "{}", "{}");
    /* A limit without a request requests the limit (API defaulting). */
    check_pod("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"2\","
              "\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"100m\"}}}]}}",
              "{\"cpu\":\"100m\",\"memory\":\"1Gi\"}", "{\"cpu\":\"2\",\"memory\":\"1Gi\"}");
}

static void test_init_containers_max(void **state)
{
    (void)state;
    /* Regular sum 1 cpu / 1Gi; init max 3 cpu / 512Mi: per resource max. */
    check_pod("{\"spec\":{\"containers\":["
              "{\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"512Mi\"}}},"
              "{\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"512Mi\"}}}],"
              "\"initContainers\":["
              "{\"resources\":{\"requests\":{\"cpu\":\"3\",\"memory\":\"256Mi\"}}},"
              "{\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":\"512Mi\"}}}]}}",
              "{\"cpu\":\"3\",\"memory\":\"1Gi\"}", "{}");
    /* A resource only an init container asks for counts too. */
    check_pod("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
              "\"initContainers\":[{\"resources\":{\"requests\":{\"ephemeral-storage\":"
              "\"1G\"}}}]}}",
              "{\"cpu\":\"1\",\"ephemeral-storage\":\"1G\"}", "{}");
}

static void test_sidecars(void **state)
{
    (void)state;
    /* init[0] regular 2 cpu; init[1] sidecar 1 cpu; init[2] regular 1.5 cpu
     * (runs beside the sidecar: 2.5); containers 1 cpu + sidecar 1 = 2.
     * max(2, 2, 1, 2.5) = 2.5. */
    check_pod("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
              "\"initContainers\":["
              "{\"resources\":{\"requests\":{\"cpu\":\"2\"}}},"
              "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"1\"},"
              "\"limits\":{\"cpu\":\"1\"}}},"
              "{\"resources\":{\"requests\":{\"cpu\":\"1500m\"}}}]}}",
              "{\"cpu\":\"2500m\"}", "{\"cpu\":\"1\"}");
    /* Only a sidecar and a container: they add up. */
    check_pod("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}}],"
              "\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":"
              "{\"memory\":\"512Mi\"}}}]}}",
              "{\"memory\":\"1536Mi\"}", "{}");
}

static void test_overhead_and_pod_level(void **state)
{
    (void)state;
    /* Overhead adds to every request, and to limits only where a limit exists. */
    check_pod("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\","
              "\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"2\"}}}],"
              "\"overhead\":{\"cpu\":\"250m\",\"memory\":\"120Mi\"}}}",
              "{\"cpu\":\"1250m\",\"memory\":\"1144Mi\"}", "{\"cpu\":\"2250m\"}");
    /* Pod-level resources replace the container figure for what they name. */
    check_pod("{\"spec\":{\"resources\":{\"requests\":{\"cpu\":\"4\"}},"
              "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}],"
              "\"overhead\":{\"cpu\":\"100m\"}}}",
              "{\"cpu\":\"4100m\",\"memory\":\"1Gi\"}", "{}");
    /* A bare spec works like a pod. */
    check_pod("{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}",
              "{\"cpu\":\"1\"}", "{}");
}

static void expect_error(const char *pod_json, const char *msg_part)
{
    json_t *pod = json_loads(pod_json, 0, NULL);
    assert_non_null(pod);
    struct podres_list req = {0}, lim = {0};
    struct err e;
    err_clear(&e);
    assert_int_equal(podres_pod(pod, &req, &lim, &e), -EINVAL);
    assert_int_equal(req.n, 0);
    assert_int_equal(lim.n, 0);
    if (!strstr(e.msg, msg_part))
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, msg_part);
    json_decref(pod);
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_error("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1Qi\"}}}]}}",
                 "spec.containers[0].resources.requests.cpu");
    expect_error("{\"spec\":{\"containers\":[{},{\"resources\":{\"limits\":{\"cpu\":\"-1\"}}}]}}",
                 "spec.containers[1].resources.limits.cpu: negative");
    expect_error("{\"spec\":{\"containers\":{}}}", "not an array");
    expect_error("{\"spec\":{\"containers\":[{\"resources\":[]}]}}", "resources: not an object");
    expect_error("{\"spec\":{\"containers\":[], \"initContainers\":[{\"resources\":"
                 "{\"requests\":{\"memory\":true}}}]}}",
                 "spec.initContainers[0].resources.requests.memory");
    expect_error("{\"spec\":{\"overhead\":{\"cpu\":\"x\"}}}", "spec.overhead.cpu");
    expect_error("{\"spec\":[]}", "not an object");
    /* without a struct err the result is an error all the same (err_prefix of a NULL err is 0:
     * returned as is, a bad quantity read as success) */
    json_t *bad = json_loads("{\"cpu\":\"1Qi\"}", 0, NULL);
    struct podres_list l = {0};
    assert_true(podres_add_json(&l, bad, "requests", NULL) < 0);
    podres_free(&l);
    json_t *pod = json_loads(
        "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1Qi\"}}}]}}", 0, NULL);
    struct podres_list req = {0};
    assert_true(podres_pod(pod, &req, NULL, NULL) < 0);
    podres_free(&req);
    json_decref(pod);
    json_decref(bad);
}

static void test_pod_counts(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        bool counts;
    } cases[] = {
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}}", true},
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Pending\"}}", true},
        {"{\"spec\":{\"nodeName\":\"n1\"}}", true},
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Succeeded\"}}", false},
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Failed\"}}", false},
        {"{\"spec\":{},\"status\":{\"phase\":\"Pending\"}}", false},
        {"{\"spec\":{\"nodeName\":\"\"}}", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *p = json_loads(cases[i].json, 0, NULL);
        assert_non_null(p);
        assert_int_equal(podres_pod_counts(p), cases[i].counts);
        json_decref(p);
    }
}

static void test_list_ops(void **state)
{
    (void)state;
    struct podres_list a = {0}, b = {0};
    struct err e;
    struct qty q;
    assert_int_equal(qty_parse("1.5Gi", &q, &e), 0);
    assert_int_equal(podres_add(&a, "memory", &q, &e), 0);
    assert_int_equal(qty_parse("500m", &q, &e), 0);
    assert_int_equal(podres_add(&a, "cpu", &q, &e), 0);
    assert_int_equal(podres_add(&a, "cpu", &q, &e), 0);
    assert_int_equal(a.n, 2);
    assert_string_equal(a.v[0].name, "cpu"); /* sorted */
    assert_string_equal(QTY_STR(podres_get(&a, "cpu")), "1");
    assert_null(podres_get(&a, "gpu"));
    podres_copy(&b, &a);
    assert_true(podres_equal(&a, &b));
    assert_int_equal(qty_parse("1", &q, &e), 0);
    podres_max(&b, "cpu", &q); /* equal: unchanged */
    assert_true(podres_equal(&a, &b));
    assert_int_equal(qty_parse("2", &q, &e), 0);
    podres_max(&b, "cpu", &q);
    assert_false(podres_equal(&a, &b));
    /* Overflow is an error, not a wrap. */
    assert_int_equal(qty_parse("100000000000E", &q, &e), 0);
    assert_int_equal(podres_add(&b, "x", &q, &e), 0);
    assert_int_equal(podres_add(&b, "x", &q, &e), -ERANGE);
    podres_free(&a);
    podres_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_containers_summed_exactly),
        cmocka_unit_test(test_missing_requests),
        cmocka_unit_test(test_init_containers_max),
        cmocka_unit_test(test_sidecars),
        cmocka_unit_test(test_overhead_and_pod_level),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_pod_counts),
        cmocka_unit_test(test_list_ops),
    };
    return cmocka_run_group_tests_name("podres", tests, NULL, NULL);
}
