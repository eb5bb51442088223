/* Unit tests for controllers/workload/kinds: the job kind table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/kinds.h"
#include "pkg/json/jsonx.h"

static json_t *J(const char *s)
{
    struct err e;
    json_t *v = jx_loadb(s, strlen(s), &e);
    if (!v)
        fail_msg("bad test JSON: %s", e.msg);
    return v;
}

static void test_lookup(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    assert_non_null(k);
    assert_string_equal(k->resource, "jobs");
    assert_string_equal(k->suspend_path, "spec.suspend");
    k = kind_lookup("kubeflow.org/v1", "PyTorchJob");
    assert_non_null(k);
    assert_string_equal(k->suspend_path, "spec.runPolicy.suspend");
    assert_string_equal(k->wl_prefix, "pytorchjob");
    assert_null(kind_lookup("batch/v2", "Job"));
    assert_null(kind_lookup("v1", "Job"));
    assert_null(kind_lookup("batch/v1", "CronJob"));
    assert_null(kind_lookup(NULL, "Job"));
    assert_ptr_equal(kind_lookup_gk("jobset.x-k8s.io", "JobSet"),
                     kind_lookup("jobset.x-k8s.io/v1alpha2", "JobSet"));
    assert_non_null(kind_lookup("kubeflow.org/v2beta1", "MPIJob"));

    json_t *ref = J("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"a\",\"uid\":\"u\"}");
    assert_ptr_equal(kind_for_owner(ref), kind_lookup("batch/v1", "Job"));
    json_decref(ref);
    ref = J("{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayJob\"}");
    assert_ptr_equal(kind_for_owner(ref), kind_generic());
    assert_true(kind_generic()->generic);
    json_decref(ref);
    ref = J("{\"kind\":\"Job\"}");
    assert_null(kind_for_owner(ref));
    json_decref(ref);

    char buf[64];
    assert_string_equal(kind_api_version(kind_lookup_gk("batch", "Job"), buf, sizeof buf),
                        "batch/v1");
    size_t n = 0;
    const struct kind_def *t = kind_table(&n);
    assert_true(n >= 4);
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(kind_lookup_gk(t[i].group, t[i].kind), &t[i]);
}

static void test_templates_job(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    json_t *job = J("{\"spec\":{\"parallelism\":3,\"template\":{\"spec\":{\"containers\":[]}}}}");
    struct kind_tmpl *t;
    size_t n;
    kind_templates(k, job, &t, &n);
    assert_int_equal(n, 1);
    assert_string_equal(t[0].podset, "main");
    assert_string_equal(t[0].path, "spec.template");
    assert_ptr_equal(t[0].tmpl, jx_get(job, "spec.template"));
    assert_int_equal(t[0].replicas, 3);
    kind_tmpls_free(t, n);
    json_decref(job);

    job = J("{\"spec\":{}}");
    kind_templates(k, job, &t, &n);
    assert_int_equal(n, 0);
    assert_null(t);
    json_decref(job);
}

static void test_templates_pytorch_and_jobset(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("kubeflow.org/v1", "PyTorchJob");
    json_t *job = J("{\"spec\":{\"pytorchReplicaSpecs\":{"
                    "\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{}}},"
                    "\"Master\":{\"template\":{\"spec\":{}}},"
                    "\"Bad\":{\"template\":7}}}}");
    struct kind_tmpl *t;
    size_t n;
    kind_templates(k, job, &t, &n);
    assert_int_equal(n, 2);
    assert_string_equal(t[0].podset, "master");
    assert_string_equal(t[0].path, "spec.pytorchReplicaSpecs.Master.template");
    assert_int_equal(t[0].replicas, 1);
    assert_string_equal(t[1].podset, "worker");
    assert_int_equal(t[1].replicas, 2);
    assert_ptr_equal(jx_get(job, t[1].path), t[1].tmpl);
    kind_tmpls_free(t, n);
    json_decref(job);

    /* a replica type with a dot in its name gets an escaped path that resolves */
    job = J("{\"spec\":{\"pytorchReplicaSpecs\":{\"a.b\":{\"template\":{\"x\":1}}}}}");
    kind_templates(k, job, &t, &n);
    assert_int_equal(n, 1);
    assert_ptr_equal(jx_get(job, t[0].path), t[0].tmpl);
    kind_tmpls_free(t, n);
    json_decref(job);

    k = kind_lookup_gk("jobset.x-k8s.io", "JobSet");
    job = J("{\"spec\":{\"replicatedJobs\":[{\"name\":\"driver\",\"replicas\":1,"
            "\"template\":{\"spec\":{\"template\":{\"spec\":{}}}}},"
            "{\"name\":\"workers\",\"replicas\":4,\"template\":{\"spec\":{\"template\":{}}}}]}}");
    kind_templates(k, job, &t, &n);
    assert_int_equal(n, 2);
    assert_string_equal(t[1].podset, "workers");
    assert_string_equal(t[1].path, "spec.replicatedJobs[1].template.spec.template");
    assert_int_equal(t[1].replicas, 4);
    assert_ptr_equal(jx_get(job, t[1].path), t[1].tmpl);
    kind_tmpls_free(t, n);
    json_decref(job);

    kind_templates(kind_generic(), job, &t, &n);
    assert_int_equal(n, 0);
}

static void test_result_and_suspend(void **state)
{
    (void)state;
    const struct kind_def *job = kind_lookup("batch/v1", "Job");
    const struct kind_def *pt = kind_lookup("kubeflow.org/v1", "PyTorchJob");
    json_t *o = J("{\"spec\":{\"suspend\":true},\"status\":{\"conditions\":["
                  "{\"type\":\"SuccessCriteriaMet\",\"status\":\"True\"}]}}");
    assert_true(kind_suspended(job, o));
    assert_false(kind_suspended(pt, o));
    /* SuccessCriteriaMet alone is not finished yet */
    assert_int_equal(kind_result(job, o), KIND_RUNNING);
    json_decref(o);
    o = J("{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}}");
    assert_int_equal(kind_result(job, o), KIND_SUCCEEDED);
    assert_int_equal(kind_result(pt, o), KIND_RUNNING);
    json_decref(o);
    o = J("{\"status\":{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}]}}");
    assert_int_equal(kind_result(job, o), KIND_FAILED);
    assert_int_equal(kind_result(pt, o), KIND_FAILED);
    json_decref(o);
    o = J("{\"spec\":{\"runPolicy\":{\"suspend\":true,\"managedBy\":\"x\"}},\"status\":{"
          "\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"},"
          "{\"type\":\"Failed\",\"status\":\"False\"}]}}");
    assert_int_equal(kind_result(pt, o), KIND_SUCCEEDED);
    assert_true(kind_suspended(pt, o));
    assert_string_equal(kind_managed_by(pt, o), "x");
    assert_null(kind_managed_by(job, o));
    assert_int_equal(kind_result(kind_generic(), o), KIND_RUNNING);
    json_decref(o);
}

/* Discovery of a kind outside the table (an APIResourceList). */
static void test_dynamic(void **state)
{
    (void)state;
    json_t *rl = J("{\"kind\":\"APIResourceList\",\"groupVersion\":\"ray.io/v1\",\"resources\":["
                   "{\"name\":\"rayclusters\",\"kind\":\"RayCluster\",\"namespaced\":true,"
                   "\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"patch\",\"delete\"]},"
                   "{\"name\":\"rayjobs/status\",\"kind\":\"RayJob\",\"namespaced\":true,"
                   "\"verbs\":[\"get\",\"patch\"]},"
                   "{\"name\":\"rayjobs\",\"singularName\":\"rayjob\",\"kind\":\"RayJob\","
                   "\"namespaced\":true,\"verbs\":[\"create\",\"delete\",\"deletecollection\","
                   "\"get\",\"list\",\"patch\",\"update\",\"watch\"]},"
                   "{\"name\":\"rayservices\",\"kind\":\"RayService\",\"namespaced\":false,"
                   "\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"patch\",\"delete\"]},"
                   "{\"name\":\"readonly\",\"kind\":\"ReadOnly\",\"namespaced\":true,"
                   "\"verbs\":[\"get\",\"list\",\"watch\"]}]}");
    struct err e;
    struct kind_def *k = kind_dynamic_new(rl, "ray.io", "v1", "RayJob", &e);
    assert_non_null(k);
    assert_string_equal(k->resource, "rayjobs");
    assert_string_equal(k->wl_prefix, "rayjob");
    assert_true(k->generic);
    assert_false(k->no_status_subresource);
    assert_int_equal(k->status_rule, KIND_STATUS_COPY);
    assert_null(k->suspend_path);
    assert_true(kind_is(k, "ray.io/v1", "RayJob"));
    assert_false(kind_is(k, "ray.io/v1alpha1", "RayJob"));
    assert_false(kind_is(k, "ray.io/v1", "RayCluster"));
    json_t *obj = J("{\"spec\":{\"template\":{}},\"status\":{\"conditions\":[{\"type\":"
                    "\"Succeeded\",\"status\":\"True\"}]}}");
    struct kind_tmpl *t;
    size_t n;
    kind_templates(k, obj, &t, &n);
    assert_int_equal(n, 0);
    assert_int_equal(kind_result(k, obj), KIND_RUNNING); /* finished is the owner's business */
    json_decref(obj);
    kind_dynamic_free(k);

    k = kind_dynamic_new(rl, "ray.io", "v1", "RayCluster", &e);
    assert_non_null(k);
    assert_true(k->no_status_subresource);
    kind_dynamic_free(k);

    assert_null(kind_dynamic_new(rl, "ray.io", "v1", "Missing", &e));
    assert_int_equal(e.code, -ENOENT);
    assert_non_null(strstr(e.msg, "ray.io/v1 Missing is not served"));
    assert_null(kind_dynamic_new(rl, "ray.io", "v1", "RayService", &e));
    assert_int_equal(e.code, -EINVAL);
    assert_non_null(strstr(e.msg, "cluster-scoped"));
    assert_null(kind_dynamic_new(rl, "ray.io", "v1", "ReadOnly", &e));
    assert_int_equal(e.code, -EINVAL);
    assert_non_null(strstr(e.msg, "\"create\""));
    json_decref(rl);
    rl = J("{\"resources\":{}}");
    assert_null(kind_dynamic_new(rl, "ray.io", "v1", "RayJob", &e));
    assert_int_equal(e.code, -EINVAL);
    assert_null(kind_dynamic_new(NULL, "ray.io", "v1", "RayJob", &e));
    json_decref(rl);
    /* the core group */
    rl = J("{\"resources\":[{\"name\":\"pods\",\"kind\":\"Pod\",\"namespaced\":true,\"verbs\":["
           "\"get\",\"list\",\"watch\",\"create\",\"patch\",\"delete\"]},{\"name\":\"pods/status\","
           "\"kind\":\"Pod\",\"namespaced\":true}]}");
    k = kind_dynamic_new(rl, "", "v1", "Pod", &e);
    assert_non_null(k);
    assert_true(kind_is(k, "v1", "Pod"));
    char buf[64];
    assert_string_equal(kind_api_version(k, buf, sizeof buf), "v1");
    kind_dynamic_free(k);
    kind_dynamic_free(NULL);
    json_decref(rl);

    char *g, *v;
    assert_int_equal(kind_split_api_version("ray.io/v1", &g, &v), 0);
    assert_string_equal(g, "ray.io");
    assert_string_equal(v, "v1");
    free(g);
    free(v);
    assert_int_equal(kind_split_api_version("v1", &g, &v), 0);
    assert_string_equal(g, "");
    assert_string_equal(v, "v1");
    free(g);
    free(v);
    const char *bad[] = {"", "/v1", "ray.io/", "a/b/c", NULL};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(kind_split_api_version(bad[i], &g, &v), -EINVAL);
        assert_null(g);
        assert_null(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_templates_job),
        cmocka_unit_test(test_templates_pytorch_and_jobset),
        cmocka_unit_test(test_result_and_suspend),
        cmocka_unit_test(test_dynamic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
