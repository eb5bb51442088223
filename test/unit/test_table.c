/* Unit tests for devhub/table: ages, jsonPath subset, built-in and CRD printers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/table.h"
#include "pkg/util/clock.h"

static json_t *J(const char *s)
{
    json_error_t je;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad test JSON %s: %s", s, je.text);
    return v;
}

static void expect_json(json_t *got, const char *want)
{
    json_t *w = J(want);
    if (!json_equal(got, w)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
        char *x = json_dumps(w, JSON_COMPACT | JSON_ENCODE_ANY);
        print_error("got  %s\nwant %s\n", g, x);
        free(g);
        free(x);
        fail();
    }
    json_decref(w);
}

static time_t now_ts(void)
{
    struct timespec t;
    assert_int_equal(clock_parse_rfc3339("2026-11-22T12:00:00Z", &t), 0);
    return t.tv_sec;
}

static void test_human_duration(void **state)
{
    (void)state;
    static const struct {
        double s;
        const char *want;
    } cases[] = {
        {-5, "<invalid>"},
        {-1, "0s"},
        {0, "0s"},
        {59, "59s"},
        {119, "119s"},
        {120, "2m"},
        {150, "2m30s"},
        {599, "9m59s"},
        {600, "10m"},
        {179 * 60, "179m"},
        {3 * 3600, "3h"},
        {3 * 3600 + 20 * 60, "3h20m"},
        {8 * 3600, "8h"},
        {47 * 3600 + 59 * 60, "47h"},
        {48 * 3600, "2d"},
        {51 * 3600, "2d3h"},
        {8 * 86400, "8d"},
        {729 * 86400, "729d"},
        {730 * 86400, "2y"},
        {760 * 86400, "2y30d"},
        {8 * 365 * 86400.0, "8y"},
    };
    char b[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(table_human_duration(cases[i].s, b, sizeof b), cases[i].want);
    time_t now = now_ts();
    assert_string_equal(table_age("2026-11-22T11:55:00Z", now, b, sizeof b), "5m");
    assert_string_equal(table_age("2026-11-20T09:00:00Z", now, b, sizeof b), "2d3h");
    assert_string_equal(table_age("2026-11-22T11:59:30.5Z", now, b, sizeof b), "29s");
    assert_string_equal(table_age(NULL, now, b, sizeof b), "<unknown>");
    assert_string_equal(table_age("yesterday", now, b, sizeof b), "<unknown>");
}

static void jp_expect(const char *expr, const char *obj, const char *want)
{
    json_t *o = J(obj), *out = NULL;
    struct err e = {0};
    if (table_jsonpath(expr, o, &out, &e) != 0)
        fail_msg("%s: %s", expr, e.msg);
    expect_json(out, want);
    json_decref(out);
    json_decref(o);
}

static void test_jsonpath(void **state)
{
    (void)state;
    const char *obj =
        "{\"metadata\":{\"name\":\"w\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"q\"}},"
        "\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":2},{\"name\":\"w\",\"count\":3}]},"
        "\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\"},"
        "{\"type\":\"Admitted\",\"status\":\"False\",\"n\":1}]}}";
    jp_expect(".metadata.name", obj, "[\"w\"]");
    jp_expect("{.metadata.name}", obj, "[\"w\"]");
    jp_expect("$.metadata.name", obj, "[\"w\"]");
    jp_expect(".spec.podSets[1].count", obj, "[3]");
    jp_expect(".spec.podSets[-1].name", obj, "[\"w\"]");
    jp_expect(".spec.podSets[*].count", obj, "[2,3]");
    jp_expect(".spec.podSets[5].count", obj, "[]");
    jp_expect(".status.conditions[-1:].type", obj, "[\"Admitted\"]");
    jp_expect(".spec.podSets[0:1].name", obj, "[\"main\"]");
    jp_expect(".spec.podSets[:].count", obj, "[2,3]");
    jp_expect(".spec.podSets[1:].count", obj, "[3]");
    jp_expect(".spec.podSets[-5:10].count", obj, "[2,3]");
    jp_expect(".status.conditions[?(@.type==\"Admitted\")].status", obj, "[\"False\"]");
    jp_expect(".status.conditions[?(@.type == 'QuotaReserved')].status", obj, "[\"True\"]");
    jp_expect(".status.conditions[?(@.type!=\"Admitted\")].type", obj, "[\"QuotaReserved\"]");
    jp_expect(".status.conditions[?(@.n==1)].type", obj, "[\"Admitted\"]");
    jp_expect(".status.conditions[?(@.n)].type", obj, "[\"Admitted\"]");
    jp_expect(".metadata.labels['kueue.x-k8s.io/queue-name']", obj, "[\"q\"]");
    jp_expect(".metadata.labels.kueue\\.x-k8s\\.io/queue-name", obj, "[\"q\"]");
    jp_expect(".missing.field", obj, "[]");
    jp_expect(".metadata.name.deeper", obj, "[]");

    static const char *bad[] = {"metadata.name", ".a[",         ".a[x]", ".a..b",     "{.a",
                                ".a[?(@.b==)]",  ".a[?(b==1)]", ".a['x", ".a[1:2:3]", ".a[1:x]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *o = J(obj), *out = NULL;
        struct err e = {0};
        assert_int_equal(table_jsonpath(bad[i], o, &out, &e), -EINVAL);
        assert_non_null(strstr(e.msg, "invalid jsonPath"));
        assert_null(out);
        json_decref(o);
    }
}

static json_t *build(struct table_printer *p, const char *items, enum table_include inc)
{
    json_t *it = J(items);
    struct table_opts o = {.include = inc, .now = now_ts(), .resource_version = "42"};
    json_t *t = table_build(p, it, &o);
    json_decref(it);
    return t;
}

static void test_pod_table(void **state)
{
    (void)state;
    struct table_printer *p = table_printer_builtin("", "Pod");
    json_t *t = build(
        p,
        "[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\",\"namespace\":"
        "\"default\",\"creationTimestamp\":\"2026-11-22T11:55:00Z\",\"uid\":\"u1\"},\"spec\":{"
        "\"nodeName\":\"n1\",\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]},\"status\":{"
        "\"phase\":\"Running\",\"podIPs\":[{\"ip\":\"10.0.0.5\"}],\"containerStatuses\":["
        "{\"name\":\"a\",\"ready\":true,\"restartCount\":2,\"state\":{\"running\":{}},"
        "\"lastState\":{\"terminated\":{\"finishedAt\":\"2026-11-22T11:58:00Z\"}}},"
        "{\"name\":\"b\",\"ready\":false,\"restartCount\":0,\"state\":{\"waiting\":{\"reason\":"
        "\"CrashLoopBackOff\"}}}]}},"
        "{\"metadata\":{\"name\":\"p2\",\"creationTimestamp\":\"2026-11-20T09:00:00Z\"},\"spec\":{"
        "\"containers\":[{\"name\":\"a\"}]},\"status\":{\"phase\":\"Succeeded\","
        "\"containerStatuses\":[{\"name\":\"a\",\"state\":{\"terminated\":{\"reason\":"
        "\"Completed\",\"exitCode\":0}}}]}},"
        "{\"metadata\":{\"name\":\"p3\",\"creationTimestamp\":\"2026-11-22T11:59:00Z\","
        "\"deletionTimestamp\":\"2026-11-22T12:00:00Z\"},\"spec\":{\"containers\":[{\"name\":"
        "\"a\"}],\"initContainers\":[{\"name\":\"i\"}]},\"status\":{\"phase\":\"Pending\","
        "\"initContainerStatuses\":[{\"name\":\"i\",\"state\":{\"waiting\":{}}}]}}]",
        TABLE_INCLUDE_METADATA);
    assert_string_equal(json_string_value(json_object_get(t, "kind")), "Table");
    assert_string_equal(json_string_value(json_object_get(t, "apiVersion")), "meta.k8s.io/v1");
    expect_json(json_object_get(t, "metadata"), "{\"resourceVersion\":\"42\"}");
    json_t *cols = json_object_get(t, "columnDefinitions");
    assert_int_equal(json_array_size(cols), 9);
    json_t *c0 = json_array_get(cols, 0);
    assert_string_equal(json_string_value(json_object_get(c0, "name")), "Name");
    assert_string_equal(json_string_value(json_object_get(c0, "format")), "name");
    json_t *c5 = json_array_get(cols, 5);
    assert_string_equal(json_string_value(json_object_get(c5, "name")), "IP");
    assert_int_equal(json_integer_value(json_object_get(c5, "priority")), 1);
    json_t *rows = json_object_get(t, "rows");
    assert_int_equal(json_array_size(rows), 3);
    expect_json(json_object_get(json_array_get(rows, 0), "cells"),
                "[\"p1\",\"1/2\",\"CrashLoopBackOff\",\"2 (2m ago)\",\"5m\",\"10.0.0.5\",\"n1\","
                "\"<none>\",\"<none>\"]");
    expect_json(json_object_get(json_array_get(rows, 0), "object"),
                "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
                "\"metadata\":{\"name\":\"p1\",\"namespace\":\"default\",\"creationTimestamp\":"
                "\"2026-11-22T11:55:00Z\",\"uid\":\"u1\"}}");
    expect_json(json_object_get(json_array_get(rows, 1), "cells"),
                "[\"p2\",\"0/1\",\"Completed\",\"0\",\"2d3h\",\"<none>\",\"<none>\",\"<none>\","
                "\"<none>\"]");
    expect_json(json_object_get(json_array_get(rows, 1), "conditions"),
                "[{\"type\":\"Completed\",\"status\":\"True\",\"reason\":\"Succeeded\","
                "\"message\":\"The pod has completed successfully.\"}]");
    expect_json(json_object_get(json_array_get(rows, 2), "cells"),
                "[\"p3\",\"0/1\",\"Terminating\",\"0\",\"60s\",\"<none>\",\"<none>\",\"<none>\","
                "\"<none>\"]");
    json_decref(t);
    /* includeObject=None leaves the object out; Object embeds it. */
    t = build(p, "[{\"metadata\":{\"name\":\"x\"},\"spec\":{}}]", TABLE_INCLUDE_NONE);
    assert_null(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object"));
    json_decref(t);
    t = build(p, "[{\"metadata\":{\"name\":\"x\"},\"spec\":{}}]", TABLE_INCLUDE_OBJECT);
    expect_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object"),
                "{\"metadata\":{\"name\":\"x\"},\"spec\":{}}");
    expect_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "[\"x\",\"0/0\",\"\",\"0\",\"<unknown>\",\"<none>\",\"<none>\",\"<none>\","
                "\"<none>\"]");
    json_decref(t);
    table_printer_free(p);
}

static void test_job_table(void **state)
{
    (void)state;
    struct table_printer *p = table_printer_builtin("batch", "Job");
    json_t *t = build(
        p,
        "[{\"metadata\":{\"name\":\"j1\",\"creationTimestamp\":\"2026-11-22T11:00:00Z\"},"
        "\"spec\":{\"completions\":3,\"parallelism\":3,\"selector\":{\"matchLabels\":{"
        "\"batch.kubernetes.io/controller-uid\":\"u\"}},\"template\":{\"spec\":{\"containers\":["
        "{\"name\":\"main\",\"image\":\"busybox\"},{\"name\":\"side\",\"image\":\"nginx\"}]}}},"
        "\"status\":{\"succeeded\":3,\"startTime\":\"2026-11-22T11:00:05Z\",\"completionTime\":"
        "\"2026-11-22T11:02:35Z\",\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}},"
        "{\"metadata\":{\"name\":\"j2\",\"creationTimestamp\":\"2026-11-22T11:59:00Z\"},"
        "\"spec\":{\"suspend\":true,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
        "\"image\":\"i\"}]}}},\"status\":{\"conditions\":[{\"type\":\"Suspended\",\"status\":"
        "\"True\"}]}},"
        "{\"metadata\":{\"name\":\"j3\",\"creationTimestamp\":\"2026-11-22T11:50:00Z\"},"
        "\"spec\":{\"parallelism\":2,\"template\":{\"spec\":{}}},\"status\":{\"startTime\":"
        "\"2026-11-22T11:50:00Z\",\"active\":2}}]",
        TABLE_INCLUDE_NONE);
    json_t *cols = json_object_get(t, "columnDefinitions");
    const char *names[] = {"Name", "Status",     "Completions", "Duration",
                           "Age",  "Containers", "Images",      "Selector"};
    assert_int_equal(json_array_size(cols), 8);
    for (size_t i = 0; i < 8; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(cols, i), "name")),
                            names[i]);
    json_t *rows = json_object_get(t, "rows");
    expect_json(json_object_get(json_array_get(rows, 0), "cells"),
                "[\"j1\",\"Complete\",\"3/3\",\"2m30s\",\"60m\",\"main,side\",\"busybox,nginx\","
                "\"batch.kubernetes.io/controller-uid=u\"]");
    expect_json(json_object_get(json_array_get(rows, 1), "cells"),
                "[\"j2\",\"Suspended\",\"0/1\",\"\",\"60s\",\"c\",\"i\",\"<none>\"]");
    expect_json(json_object_get(json_array_get(rows, 2), "cells"),
                "[\"j3\",\"Running\",\"0/1 of 2\",\"10m\",\"10m\",\"\",\"\",\"<none>\"]");
    json_decref(t);
    table_printer_free(p);
}

static void test_other_builtins(void **state)
{
    (void)state;
    struct table_printer *p = table_printer_builtin("", "Node");
    json_t *t = build(p,
                      "[{\"metadata\":{\"name\":\"n1\",\"creationTimestamp\":"
                      "\"2026-11-22T11:00:00Z\",\"labels\":{\"node-role.kubernetes.io/worker\":"
                      "\"\",\"node-role.kubernetes.io/gpu\":\"\"}},\"spec\":{\"unschedulable\":"
                      "true},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
                      "\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.1.0.1\"}],"
                      "\"nodeInfo\":{\"kubeletVersion\":\"v1.32.0\",\"osImage\":\"devhub\"}}}]",
                      TABLE_INCLUDE_NONE);
    expect_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "[\"n1\",\"Ready,SchedulingDisabled\",\"gpu,worker\",\"60m\",\"v1.32.0\","
                "\"10.1.0.1\",\"<none>\",\"devhub\",\"<unknown>\",\"<unknown>\"]");
    json_decref(t);
    table_printer_free(p);

    p = table_printer_builtin("", "Secret");
    t = build(p,
              "[{\"metadata\":{\"name\":\"s\",\"creationTimestamp\":\"2026-11-22T11:59:50Z\"},"
              "\"type\":\"Opaque\",\"data\":{\"a\":\"eA==\",\"b\":\"eQ==\"}}]",
              TABLE_INCLUDE_NONE);
    expect_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "[\"s\",\"Opaque\",2,\"10s\"]");
    json_decref(t);
    table_printer_free(p);

    p = table_printer_builtin("coordination.k8s.io", "Lease");
    t = build(p,
              "[{\"metadata\":{\"name\":\"l\",\"creationTimestamp\":\"2026-11-22T11:59:50Z\"},"
              "\"spec\":{\"holderIdentity\":\"kueue-ks-abc\"}}]",
              TABLE_INCLUDE_NONE);
    expect_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "[\"l\",\"kueue-ks-abc\",\"10s\"]");
    json_decref(t);
    table_printer_free(p);

    p = table_printer_builtin("", "Event");
    t = build(p,
              "[{\"metadata\":{\"name\":\"e.1\"},\"type\":\"Normal\",\"reason\":"
              "\"AssignedCluster\",\"message\":\" placed on c1 \",\"involvedObject\":{\"kind\":"
              "\"Job\",\"name\":\"j\"},\"source\":{\"component\":\"kueue-ks\"},\"firstTimestamp\":"
              "\"2026-11-22T11:50:00Z\",\"lastTimestamp\":\"2026-11-22T11:58:00Z\",\"count\":3}]",
              TABLE_INCLUDE_NONE);
    expect_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "[\"2m\",\"Normal\",\"AssignedCluster\",\"job/j\",\"\",\"kueue-ks\","
                "\"placed on c1\",\"10m\",3,\"e.1\"]");
    json_decref(t);
    table_printer_free(p);

    p = table_printer_builtin("apps", "Deployment");
    t = build(p,
              "[{\"metadata\":{\"name\":\"d\",\"creationTimestamp\":\"2026-11-22T11:59:50Z\"},"
              "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"d\"},"
              "\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"web\","
              "\"api\"]}]},\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
              "\"i\"}]}}},\"status\":{\"readyReplicas\":2,\"updatedReplicas\":3,"
              "\"availableReplicas\":2}}]",
              TABLE_INCLUDE_NONE);
    expect_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "[\"d\",\"2/3\",3,2,\"10s\",\"c\",\"i\",\"app=d,tier in (api,web)\"]");
    json_decref(t);
    table_printer_free(p);

    p = table_printer_builtin("rbac.authorization.k8s.io", "ClusterRoleBinding");
    t = build(p,
              "[{\"metadata\":{\"name\":\"b\",\"creationTimestamp\":\"2026-11-22T11:59:50Z\"},"
              "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"kueue-ks\"},\"subjects\":["
              "{\"kind\":\"ServiceAccount\",\"namespace\":\"kueue-ks-system\",\"name\":\"mgr\"},"
              "{\"kind\":\"User\",\"name\":\"alice\"},{\"kind\":\"User\",\"name\":\"bob\"}]}]",
              TABLE_INCLUDE_NONE);
    expect_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "[\"b\",\"ClusterRole/kueue-ks\",\"10s\",\"alice, bob\",\"\","
                "\"kueue-ks-system/mgr\"]");
    json_decref(t);
    table_printer_free(p);

    /* A built-in without a printer: the default convertor (Name, Created At). */
    p = table_printer_builtin("rbac.authorization.k8s.io", "ClusterRole");
    t = build(p, "[{\"metadata\":{\"name\":\"r\",\"creationTimestamp\":\"2026-11-22T11:59:50Z\"}}]",
              TABLE_INCLUDE_NONE);
    expect_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "[\"r\",\"2026-11-22T11:59:50Z\"]");
    json_t *c1 = json_array_get(json_object_get(t, "columnDefinitions"), 1);
    assert_string_equal(json_string_value(json_object_get(c1, "name")), "Created At");
    assert_string_equal(json_string_value(json_object_get(c1, "type")), "date");
    json_decref(t);
    table_printer_free(p);
}

static void test_crd_table(void **state)
{
    (void)state;
    json_t *cols = J("[{\"name\":\"Queue\",\"type\":\"string\",\"jsonPath\":\".spec.queueName\"},"
                     "{\"name\":\"Reserved in\",\"type\":\"string\",\"jsonPath\":"
                     "\".status.admission.clusterQueue\"},"
                     "{\"name\":\"Admitted\",\"type\":\"string\",\"jsonPath\":"
                     "\".status.conditions[?(@.type==\\\"Admitted\\\")].status\"},"
                     "{\"name\":\"Count\",\"type\":\"integer\",\"jsonPath\":"
                     "\".spec.podSets[0].count\",\"priority\":1,\"description\":\"pods\"},"
                     "{\"name\":\"Ratio\",\"type\":\"number\",\"jsonPath\":\".spec.r\"},"
                     "{\"name\":\"On\",\"type\":\"boolean\",\"jsonPath\":\".spec.on\"},"
                     "{\"name\":\"Age\",\"type\":\"date\",\"jsonPath\":"
                     "\".metadata.creationTimestamp\"}]");
    struct err e = {0};
    struct table_printer *p = table_printer_crd(cols, &e);
    assert_non_null(p);
    json_decref(cols);
    json_t *t = build(p,
                      "[{\"metadata\":{\"name\":\"w1\",\"creationTimestamp\":"
                      "\"2026-11-22T11:57:00Z\"},\"spec\":{\"queueName\":\"user-queue\","
                      "\"podSets\":[{\"count\":4}],\"r\":2,\"on\":true},\"status\":{\"admission\":"
                      "{\"clusterQueue\":\"cq\"},\"conditions\":[{\"type\":\"QuotaReserved\","
                      "\"status\":\"True\"},{\"type\":\"Admitted\",\"status\":\"True\"}]}},"
                      "{\"metadata\":{\"name\":\"w2\"},\"spec\":{\"queueName\":7}}]",
                      TABLE_INCLUDE_METADATA);
    json_t *defs = json_object_get(t, "columnDefinitions");
    assert_int_equal(json_array_size(defs), 8);
    expect_json(json_array_get(defs, 1),
                "{\"name\":\"Queue\",\"type\":\"string\",\"format\":\"\",\"description\":"
                "\"Custom resource definition column (in JSONPath format): .spec.queueName\","
                "\"priority\":0}");
    expect_json(json_array_get(defs, 4), "{\"name\":\"Count\",\"type\":\"integer\",\"format\":"
                                         "\"\",\"description\":\"pods\",\"priority\":1}");
    json_t *rows = json_object_get(t, "rows");
    expect_json(json_object_get(json_array_get(rows, 0), "cells"),
                "[\"w1\",\"user-queue\",\"cq\",\"True\",4,2.0,true,\"3m\"]");
    /* Missing values are null cells; a non-string printed in a string column. */
    expect_json(json_object_get(json_array_get(rows, 1), "cells"),
                "[\"w2\",\"7\",null,null,null,null,null,null]");
    expect_json(json_object_get(json_object_get(json_array_get(rows, 0), "object"), "metadata"),
                "{\"name\":\"w1\",\"creationTimestamp\":\"2026-11-22T11:57:00Z\"}");
    json_decref(t);
    table_printer_free(p);

    /* No printer columns: Name and Age. */
    p = table_printer_crd(NULL, &e);
    t = build(p, "[{\"metadata\":{\"name\":\"c\",\"creationTimestamp\":\"2026-11-22T11:00:00Z\"}}]",
              TABLE_INCLUDE_NONE);
    expect_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "[\"c\",\"60m\"]");
    json_t *age = json_array_get(json_object_get(t, "columnDefinitions"), 1);
    assert_string_equal(json_string_value(json_object_get(age, "name")), "Age");
    assert_string_equal(json_string_value(json_object_get(age, "type")), "date");
    json_decref(t);
    table_printer_free(p);

    /* Bad column definitions are refused. */
    static const char *bad[] = {
        "[{\"name\":\"X\",\"type\":\"string\"}]",
        "[{\"name\":\"X\",\"type\":\"float\",\"jsonPath\":\".a\"}]",
        "[{\"name\":\"X\",\"type\":\"string\",\"jsonPath\":\"a..b\"}]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cols = J(bad[i]);
        assert_null(table_printer_crd(cols, &e));
        assert_int_equal(e.code, -EINVAL);
        assert_non_null(strstr(e.msg, "additionalPrinterColumns[0]"));
        json_decref(cols);
    }
    enum table_include inc;
    assert_int_equal(table_parse_include(NULL, &inc, &e), 0);
    assert_int_equal(inc, TABLE_INCLUDE_METADATA);
    assert_int_equal(table_parse_include("Object", &inc, &e), 0);
    assert_int_equal(inc, TABLE_INCLUDE_OBJECT);
    assert_int_equal(table_parse_include("None", &inc, &e), 0);
    assert_int_equal(inc, TABLE_INCLUDE_NONE);
    assert_int_equal(table_parse_include("All", &inc, &e), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_human_duration), cmocka_unit_test(test_jsonpath),
        cmocka_unit_test(test_pod_table),      cmocka_unit_test(test_job_table),
        cmocka_unit_test(test_other_builtins), cmocka_unit_test(test_crd_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
