/* Unit tests for devhub/nodes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/nodes.h"

static const char *S(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void test_parse_full_grammar(void **state)
{
    (void)state;
    struct nodes_spec s;
    struct err e = {0};
    assert_int_equal(nodes_parse("2 x cpu=8,memory=32Gi,nvidia.com/gpu=1;labels=instance=h100,"
                                 "zone=a;taints=gpu=true:NoSchedule,dedicated:NoExecute",
                                 &s, &e),
                     0);
    assert_int_equal(s.count, 2);
    assert_string_equal(S(s.resources, "cpu"), "8");
    assert_string_equal(S(s.resources, "memory"), "32Gi");
    assert_string_equal(S(s.resources, "nvidia.com/gpu"), "1");
    assert_string_equal(S(s.resources, "pods"), "110");
    assert_string_equal(S(s.labels, "instance"), "h100");
    assert_string_equal(S(s.labels, "zone"), "a");
    assert_int_equal(json_array_size(s.taints), 2);
    json_t *t0 = json_array_get(s.taints, 0), *t1 = json_array_get(s.taints, 1);
    assert_string_equal(S(t0, "key"), "gpu");
    assert_string_equal(S(t0, "value"), "true");
    assert_string_equal(S(t0, "effect"), "NoSchedule");
    assert_string_equal(S(t1, "key"), "dedicated");
    assert_null(json_object_get(t1, "value"));
    assert_string_equal(S(t1, "effect"), "NoExecute");
    nodes_spec_release(&s);
}

static void test_parse_design_form(void **state)
{
    (void)state;
    struct nodes_spec s;
    struct err e = {0};
    assert_int_equal(
        nodes_parse("4xcpu=8,memory=32Gi,nvidia.com/gpu=2,label=instance=h100", &s, &e), 0);
    assert_int_equal(s.count, 4);
    assert_string_equal(S(s.resources, "nvidia.com/gpu"), "2");
    assert_string_equal(S(s.labels, "instance"), "h100");
    nodes_spec_release(&s);
    /* Canonical quantities, defaults, no count. */
    assert_int_equal(nodes_parse("cpu=1500m,memory=1.5Gi,pods=64", &s, &e), 0);
    assert_int_equal(s.count, 1);
    assert_string_equal(S(s.resources, "cpu"), "1500m");
    assert_string_equal(S(s.resources, "memory"), "1536Mi");
    assert_string_equal(S(s.resources, "pods"), "64");
    nodes_spec_release(&s);
    assert_int_equal(nodes_parse("3*", &s, &e), 0);
    assert_int_equal(s.count, 3);
    assert_string_equal(S(s.resources, "cpu"), "4");
    assert_string_equal(S(s.resources, "memory"), "16Gi");
    nodes_spec_release(&s);
}

static void test_parse_errors(void **state)
{
    (void)state;
    static const char *bad[][2] = {
        {"0xcpu=1", "node count must be 1..10000"},
        {"20000xcpu=1", "node count must be 1..10000"},
        {"2xcpu=lots", "cpu: "},
        {"cpu=-1", "cpu=-1: must not be negative"},
        {"cpu", "\"cpu\" is not resource=quantity"},
        {"bad name=1", "resource name \"bad name\""},
        {"cpu=1;labels=a", "label \"a\" must be key=value"},
        {"cpu=1;labels=a=b c", "label value \"b c\""},
        {"cpu=1;labels=-a=b", "label key \"-a\""},
        {"cpu=1;taints=gpu=true", "must be key[=value]:effect"},
        {"cpu=1;taints=gpu=true:Never", "taint effect \"Never\""},
        {"cpu=1;colour=red", "unknown section \"colour=red\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct nodes_spec s;
        struct err e = {0};
        assert_int_equal(nodes_parse(bad[i][0], &s, &e), -EINVAL);
        if (!strstr(e.msg, bad[i][1]))
            fail_msg("%s: got \"%s\", want \"%s\"", bad[i][0], e.msg, bad[i][1]);
        assert_non_null(strstr(e.msg, "--nodes \""));
        assert_null(s.resources);
    }
}

static void test_make_node(void **state)
{
    (void)state;
    struct nodes_spec s;
    struct err e = {0};
    assert_int_equal(nodes_parse("2xcpu=8,memory=32Gi,nvidia.com/gpu=1;labels=instance=h100;"
                                 "taints=gpu=true:NoSchedule",
                                 &s, &e),
                     0);
    json_t *arr = json_array();
    assert_int_equal(nodes_build(&s, "cluster1", 1, "2026-11-22T12:00:00Z", arr), 3);
    assert_int_equal(json_array_size(arr), 2);
    json_t *n = json_array_get(arr, 1);
    assert_string_equal(S(n, "apiVersion"), "v1");
    assert_string_equal(S(n, "kind"), "Node");
    json_t *md = json_object_get(n, "metadata");
    assert_string_equal(S(md, "name"), "cluster1-node-2");
    assert_string_equal(S(md, "creationTimestamp"), "2026-11-22T12:00:00Z");
    json_t *labels = json_object_get(md, "labels");
    assert_string_equal(S(labels, "kubernetes.io/hostname"), "cluster1-node-2");
    assert_string_equal(S(labels, "kubernetes.io/os"), "linux");
    assert_string_equal(S(labels, "instance"), "h100");
    assert_string_equal(S(labels, "node.kubernetes.io/instance-type"), "h100");
    json_t *st = json_object_get(n, "status");
    assert_true(json_equal(json_object_get(st, "capacity"), json_object_get(st, "allocatable")));
    assert_string_equal(S(json_object_get(st, "capacity"), "nvidia.com/gpu"), "1");
    assert_string_equal(S(json_object_get(st, "capacity"), "pods"), "110");
    json_t *conds = json_object_get(st, "conditions");
    json_t *ready = NULL;
    for (size_t i = 0; i < json_array_size(conds); i++)
        if (!strcmp(S(json_array_get(conds, i), "type"), "Ready"))
            ready = json_array_get(conds, i);
    assert_non_null(ready);
    assert_string_equal(S(ready, "status"), "True");
    assert_string_equal(S(ready, "reason"), "KubeletReady");
    assert_string_equal(S(json_object_get(st, "nodeInfo"), "kubeletVersion"), "v1.32.0");
    json_t *a0 = json_array_get(json_object_get(st, "addresses"), 0);
    assert_string_equal(S(a0, "type"), "InternalIP");
    assert_true(strncmp(S(a0, "address"), "10.", 3) == 0);
    /* Distinct nodes get distinct addresses. */
    json_t *b0 = json_array_get(
        json_object_get(json_object_get(json_array_get(arr, 0), "status"), "addresses"), 0);
    assert_string_not_equal(S(a0, "address"), S(b0, "address"));
    json_t *taints = json_object_get(json_object_get(n, "spec"), "taints");
    assert_int_equal(json_array_size(taints), 1);
    /* Nodes without the instance label have no instance-type label. */
    nodes_spec_release(&s);
    assert_int_equal(nodes_parse("cpu=2", &s, &e), 0);
    json_t *plain = nodes_make(&s, NULL, 7, NULL);
    assert_string_equal(S(json_object_get(plain, "metadata"), "name"), "devhub-node-7");
    assert_null(json_object_get(json_object_get(json_object_get(plain, "metadata"), "labels"),
                                "node.kubernetes.io/instance-type"));
    assert_null(json_object_get(json_object_get(plain, "spec"), "taints"));
    json_decref(plain);
    nodes_spec_release(&s);
    json_decref(arr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_full_grammar),
        cmocka_unit_test(test_parse_design_form),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_make_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
