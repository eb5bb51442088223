/* Unit tests for devhub/route (URL parsing), devhub/registry (discovery) and devhub/kstatus. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/kstatus.h"
#include "devhub/registry.h"
#include "devhub/route.h"
#include "pkg/util/err.h"

static void test_paths(void **state)
{
    (void)state;
    struct route r;
    assert_int_equal(route_parse("/version", &r), 0);
    assert_int_equal(r.kind, ROUTE_VERSION);
    assert_int_equal(route_parse("/readyz", &r), 0);
    assert_int_equal(r.kind, ROUTE_HEALTH);
    assert_int_equal(route_parse("/api", &r), 0);
    assert_int_equal(r.kind, ROUTE_API);
    assert_int_equal(route_parse("/apis", &r), 0);
    assert_int_equal(r.kind, ROUTE_APIS);
    assert_int_equal(route_parse("/apis/batch", &r), 0);
    assert_int_equal(r.kind, ROUTE_GROUP);
    assert_string_equal(r.group, "batch");
    assert_int_equal(route_parse("/api/v1", &r), 0);
    assert_int_equal(r.kind, ROUTE_GROUP_VERSION);
    assert_string_equal(r.group, "");
    assert_string_equal(r.version, "v1");
    assert_int_equal(route_parse("/apis/batch/v1", &r), 0);
    assert_int_equal(r.kind, ROUTE_GROUP_VERSION);

    assert_int_equal(route_parse("/api/v1/namespaces/default/pods/p1/status", &r), 0);
    assert_int_equal(r.kind, ROUTE_RESOURCE);
    assert_string_equal(r.ns, "default");
    assert_string_equal(r.resource, "pods");
    assert_string_equal(r.name, "p1");
    assert_string_equal(r.sub, "status");

    assert_int_equal(route_parse("/apis/batch/v1/jobs", &r), 0);
    assert_string_equal(r.group, "batch");
    assert_string_equal(r.resource, "jobs");
    assert_string_equal(r.ns, "");
    assert_string_equal(r.name, "");

    /* The Namespace object itself and its subresources. */
    assert_int_equal(route_parse("/api/v1/namespaces/ns1", &r), 0);
    assert_string_equal(r.resource, "namespaces");
    assert_string_equal(r.name, "ns1");
    assert_string_equal(r.ns, "");
    assert_int_equal(route_parse("/api/v1/namespaces/ns1/status", &r), 0);
    assert_string_equal(r.resource, "namespaces");
    assert_string_equal(r.name, "ns1");
    assert_string_equal(r.sub, "status");
    assert_int_equal(route_parse("/api/v1/namespaces/ns1/configmaps", &r), 0);
    assert_string_equal(r.resource, "configmaps");
    assert_string_equal(r.ns, "ns1");

    assert_int_equal(route_parse("/apis/apps/v1/namespaces/d/deployments/web/scale", &r), 0);
    assert_string_equal(r.sub, "scale");

    assert_int_equal(route_parse("/openapi/v3/apis/batch/v1", &r), 0);
    assert_int_equal(r.kind, ROUTE_OPENAPI_V3);
    assert_string_equal(r.rest, "apis/batch/v1");
    assert_int_equal(route_parse("/devhub/faults", &r), 0);
    assert_int_equal(r.kind, ROUTE_ADMIN);
    assert_string_equal(r.rest, "faults");
}

static void test_bad_paths(void **state)
{
    (void)state;
    struct route r;
    assert_int_equal(route_parse("", &r), -ENOENT);
    assert_int_equal(route_parse(NULL, &r), -ENOENT);
    assert_int_equal(route_parse("relative", &r), -ENOENT);
    assert_int_equal(route_parse("/", &r), -ENOENT);
    assert_int_equal(route_parse("/nope", &r), -ENOENT);
    assert_int_equal(route_parse("/api/v1/namespaces/a/pods/b/c/d", &r), -ENOENT);
    assert_int_equal(r.kind, ROUTE_NOT_FOUND);
    char longp[600];
    memset(longp, 'a', sizeof(longp));
    longp[0] = '/';
    longp[sizeof(longp) - 1] = '\0';
    assert_int_equal(route_parse(longp, &r), -EINVAL);
    assert_int_equal(route_parse("/a/b/c/d/e/f/g/h/i/j/k/l", &r), -EINVAL);
}

static const char *rname(json_t *list, size_t i)
{
    return json_string_value(json_object_get(json_array_get(list, i), "name"));
}

static void test_registry_discovery(void **state)
{
    (void)state;
    struct registry *reg = reg_new();
    const struct reg_resource *jobs = reg_find(reg, "batch", "v1", "jobs");
    assert_non_null(jobs);
    assert_string_equal(jobs->kind, "Job");
    assert_true(jobs->namespaced);
    assert_true(jobs->has_status);
    assert_null(reg_find(reg, "batch", "v2", "jobs"));
    assert_non_null(reg_find_kind(reg, "", "Namespace"));
    char *prefix = reg_storage_prefix(jobs);
    assert_string_equal(prefix, "jobs.batch/");
    free(prefix);

    json_t *doc = reg_doc_resources(reg, "apps", "v1");
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "groupVersion")), "apps/v1");
    json_t *res = json_object_get(doc, "resources");
    assert_string_equal(rname(res, 0), "deployments");
    assert_string_equal(rname(res, 1), "deployments/status");
    assert_string_equal(rname(res, 2), "deployments/scale");
    json_decref(doc);
    doc = reg_doc_resources(reg, "", "v1");
    assert_string_equal(json_string_value(json_object_get(doc, "groupVersion")), "v1");
    json_decref(doc);
    assert_null(reg_doc_resources(reg, "nope.io", "v1"));
    assert_null(reg_doc_group(reg, ""));

    /* A CRD with two versions: both served, storage version preferred. */
    json_t *crd = json_loads(
        "{\"metadata\":{\"name\":\"workloads.kueue.x-k8s.io\"},\"spec\":{\"group\":"
        "\"kueue.x-k8s.io\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"workloads\","
        "\"kind\":\"Workload\",\"shortNames\":[\"wl\"]},\"versions\":[{\"name\":\"v1beta1\","
        "\"served\":true,\"storage\":false},{\"name\":\"v1beta2\",\"served\":true,\"storage\":"
        "true,\"subresources\":{\"status\":{}},\"additionalPrinterColumns\":[{\"name\":\"Q\","
        "\"type\":\"string\",\"jsonPath\":\".spec.queueName\"}]},{\"name\":\"v1alpha1\","
        "\"served\":false}]}}",
        0, NULL);
    struct err e = {0};
    assert_int_equal(reg_add_crd(reg, crd, &e), 0);
    const struct reg_resource *wl = reg_find(reg, "kueue.x-k8s.io", "v1beta2", "workloads");
    assert_non_null(wl);
    assert_true(wl->has_status);
    assert_string_equal(wl->singular, "workload");
    assert_string_equal(wl->list_kind, "WorkloadList");
    assert_non_null(wl->columns);
    assert_null(reg_find(reg, "kueue.x-k8s.io", "v1alpha1", "workloads"));
    json_t *grp = reg_doc_group(reg, "kueue.x-k8s.io");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(grp, "preferredVersion"), "version")),
        "v1beta2");
    assert_int_equal(json_array_size(json_object_get(grp, "versions")), 2);
    json_decref(grp);
    json_t *apis = reg_doc_apis(reg);
    assert_true(json_array_size(json_object_get(apis, "groups")) >= 7);
    json_decref(apis);
    /* Re-adding replaces; removing stops serving. */
    assert_int_equal(reg_add_crd(reg, crd, &e), 0);
    size_t n = reg_count(reg);
    reg_remove_crd(reg, "workloads.kueue.x-k8s.io");
    assert_int_equal(reg_count(reg), n - 2);
    assert_null(reg_find(reg, "kueue.x-k8s.io", "v1beta2", "workloads"));
    json_decref(crd);

    /* Bad CRDs are refused with a message. */
    json_t *bad = json_loads("{\"metadata\":{\"name\":\"x\"},\"spec\":{}}", 0, NULL);
    assert_int_equal(reg_add_crd(reg, bad, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "spec.group"));
    json_decref(bad);
    bad = json_loads("{\"metadata\":{\"name\":\"jobs.batch\"},\"spec\":{\"group\":\"batch\","
                     "\"names\":{\"plural\":\"jobs\",\"kind\":\"Job\"},\"versions\":[{\"name\":"
                     "\"v9\",\"served\":true}]}}",
                     0, NULL);
    assert_int_equal(reg_add_crd(reg, bad, &e), -EEXIST);
    json_decref(bad);
    reg_free(reg);
}

static void test_status_bodies(void **state)
{
    (void)state;
    json_t *st = kstatus_not_found("jobs", "batch", "Job", "x");
    char *s = json_dumps(st, JSON_COMPACT);
    assert_string_equal(s, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                           "\"Failure\",\"message\":\"jobs.batch \\\"x\\\" not found\",\"reason\":"
                           "\"NotFound\",\"details\":{\"name\":\"x\",\"group\":\"batch\",\"kind\":"
                           "\"jobs\"},\"code\":404}");
    free(s);
    json_decref(st);
    st = kstatus_conflict("jobs", "batch", "Job", "x", "the object has been modified");
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "Operation cannot be fulfilled on jobs.batch \"x\": the object has been "
                        "modified");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 409);
    json_decref(st);
    st = kstatus_already_exists("pods", "", "Pod", "p");
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "pods \"p\" already exists");
    assert_null(json_object_get(json_object_get(st, "details"), "group"));
    json_decref(st);
    st = kstatus_expired("too old");
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "Expired");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 410);
    assert_null(json_object_get(st, "details"));
    json_decref(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_bad_paths),
        cmocka_unit_test(test_registry_discovery),
        cmocka_unit_test(test_status_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
