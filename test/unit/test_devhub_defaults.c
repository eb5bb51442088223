/* Unit tests for devhub/defaults: the apiserver's defaulting of built-ins. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/defaults.h"
#include "pkg/json/jsonx.h"

static json_t *J(const char *s)
{
    json_error_t je;
    json_t *v = json_loads(s, 0, &je);
    if (!v)
        fail_msg("bad test JSON %s: %s", s, je.text);
    return v;
}

#define UID "0d3c5a4e-1111-2222-3333-444455556666"

static const char *lab(const json_t *o, const char *path, const char *key)
{
    const char *s = json_string_value(json_object_get(jx_obj(o, path), key));
    return s ? s : "(none)";
}

static void test_job_create(void **state)
{
    (void)state;
    struct valid_result r;
    json_t *job = J("{\"metadata\":{\"name\":\"pi\",\"uid\":\"" UID "\"},\"spec\":{\"template\":{"
                    "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
                    "\"image\":\"busybox:1.36\",\"ports\":[{\"containerPort\":80}]}]}}}}");
    assert_int_equal(dflt_create("batch", "Job", job, &r), 0);
    assert_int_equal(jx_int(job, "spec.parallelism", -1), 1);
    assert_int_equal(jx_int(job, "spec.completions", -1), 1);
    assert_int_equal(jx_int(job, "spec.backoffLimit", -1), 6);
    assert_string_equal(jx_str(job, "spec.completionMode", ""), "NonIndexed");
    assert_false(jx_bool(job, "spec.suspend", true));
    assert_string_equal(jx_str(job, "spec.podReplacementPolicy", ""), "TerminatingOrFailed");
    /* what kube-apiserver v1.34.4 stores (seen by test/e2e/real_fidelity.sh) */
    assert_true(json_is_false(jx_get(job, "spec.manualSelector")));
    json_t *ml = jx_obj(job, "spec.selector.matchLabels");
    assert_int_equal(json_object_size(ml), 1);
    assert_string_equal(
        json_string_value(json_object_get(ml, "batch.kubernetes.io/controller-uid")), UID);
    const char *tl = "spec.template.metadata.labels";
    assert_string_equal(lab(job, tl, "batch.kubernetes.io/controller-uid"), UID);
    assert_string_equal(lab(job, tl, "controller-uid"), UID);
    assert_string_equal(lab(job, tl, "batch.kubernetes.io/job-name"), "pi");
    assert_string_equal(lab(job, tl, "job-name"), "pi");
    /* no labels of its own: the Job gets the template's */
    assert_true(json_equal(jx_obj(job, "metadata.labels"), jx_obj(job, tl)));
    /* pod template */
    assert_string_equal(jx_str(job, "spec.template.spec.dnsPolicy", ""), "ClusterFirst");
    assert_string_equal(jx_str(job, "spec.template.spec.restartPolicy", ""), "Never");
    assert_string_equal(jx_str(job, "spec.template.spec.schedulerName", ""), "default-scheduler");
    assert_int_equal(jx_int(job, "spec.template.spec.terminationGracePeriodSeconds", -1), 30);
    assert_non_null(jx_obj(job, "spec.template.spec.securityContext"));
    json_t *c = jx_get(job, "spec.template.spec.containers[0]");
    assert_string_equal(jx_str(c, "imagePullPolicy", ""), "IfNotPresent");
    assert_string_equal(jx_str(c, "terminationMessagePath", ""), "/dev/termination-log");
    assert_string_equal(jx_str(c, "terminationMessagePolicy", ""), "File");
    assert_non_null(jx_obj(c, "resources"));
    assert_string_equal(jx_str(c, "ports[0].protocol", ""), "TCP");
    /* template-only: none of the Pod admission defaults */
    assert_null(jx_get(job, "spec.template.spec.enableServiceLinks"));
    assert_null(jx_get(job, "spec.template.spec.tolerations"));
    json_decref(job);
}

static void test_job_variants(void **state)
{
    (void)state;
    struct valid_result r;
    /* parallelism only: completions stays unset; own labels kept; per-index backoff */
    json_t *job =
        J("{\"metadata\":{\"name\":\"x\",\"uid\":\"" UID "\",\"labels\":{\"kueue.x-k8s.io/"
          "queue-name\":\"q\"}},\"spec\":{\"parallelism\":3,\"backoffLimitPerIndex\":1,"
          "\"podFailurePolicy\":{\"rules\":[{\"action\":\"Ignore\",\"onPodConditions\":"
          "[{\"type\":\"DisruptionTarget\"}]}]},\"template\":{\"metadata\":{\"labels\":{"
          "\"app\":\"a\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i@sha256:"
          "ab\"}]}}}}");
    assert_int_equal(dflt_create("batch", "Job", job, &r), 0);
    assert_null(jx_get(job, "spec.completions"));
    assert_int_equal(jx_int(job, "spec.backoffLimit", -1), 2147483647);
    assert_string_equal(jx_str(job, "spec.podReplacementPolicy", ""), "Failed");
    assert_string_equal(jx_str(job, "spec.podFailurePolicy.rules[0].onPodConditions[0].status", ""),
                        "True");
    assert_int_equal(json_object_size(jx_obj(job, "metadata.labels")), 1);
    assert_string_equal(lab(job, "spec.template.metadata.labels", "app"), "a");
    assert_string_equal(jx_str(job, "spec.template.spec.containers[0].imagePullPolicy", ""),
                        "IfNotPresent");
    json_decref(job);

    /* manualSelector: nothing generated */
    job = J("{\"metadata\":{\"name\":\"m\",\"uid\":\"" UID "\"},\"spec\":{\"manualSelector\":true,"
            "\"selector\":{\"matchLabels\":{\"a\":\"b\"}},\"template\":{\"metadata\":{\"labels\":{"
            "\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i:latest\"}]}}}}");
    assert_int_equal(dflt_create("batch", "Job", job, &r), 0);
    assert_int_equal(json_object_size(jx_obj(job, "spec.template.metadata.labels")), 1);
    assert_int_equal(json_object_size(jx_obj(job, "spec.selector.matchLabels")), 1);
    assert_string_equal(jx_str(job, "spec.template.spec.containers[0].imagePullPolicy", ""),
                        "Always");
    json_decref(job);

    /* a selector the user wrote without manualSelector: 422 */
    job = J("{\"metadata\":{\"name\":\"s\",\"uid\":\"" UID "\"},\"spec\":{\"selector\":{"
            "\"matchLabels\":{\"a\":\"b\"}},\"template\":{\"spec\":{\"containers\":[]}}}}");
    assert_int_equal(dflt_create("batch", "Job", job, &r), -EINVAL);
    assert_int_equal(r.code, 422);
    assert_string_equal(r.causes[0].field, "spec.selector");
    assert_non_null(strstr(r.message, "`selector` not auto-generated"));
    json_decref(job);

    /* another job's controller-uid label in the template (a copy not cleaned): 422 */
    job = J("{\"metadata\":{\"name\":\"s\",\"uid\":\"" UID "\"},\"spec\":{\"template\":{"
            "\"metadata\":{\"labels\":{\"controller-uid\":\"other\"}},\"spec\":{}}}}");
    assert_int_equal(dflt_create("batch", "Job", job, &r), -EINVAL);
    assert_string_equal(r.causes[0].field, "spec.template.metadata.labels[controller-uid]");
    assert_string_equal(r.causes[0].message, "Invalid value: \"other\": must be '" UID "'");
    json_decref(job);

    /* update: defaults again, a Job without selector is 422 Required */
    job = J("{\"metadata\":{\"name\":\"u\"},\"spec\":{\"template\":{\"spec\":{}}}}");
    assert_int_equal(dflt_update("batch", "Job", job, &r), -EINVAL);
    assert_string_equal(r.message, "Job.batch \"u\" is invalid: spec.selector: Required value");
    json_decref(job);
}

static void test_pod_and_others(void **state)
{
    (void)state;
    struct valid_result r;
    json_t *pod = J("{\"metadata\":{\"name\":\"p\",\"uid\":\"" UID "\",\"labels\":{},"
                    "\"annotations\":{}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                    "\"resources\":{\"limits\":{\"cpu\":\"1000m\",\"memory\":\"1024Mi\"}}}]}}");
    dflt_meta(pod);
    assert_int_equal(dflt_create("", "Pod", pod, &r), 0);
    assert_null(jx_get(pod, "metadata.labels"));
    assert_null(jx_get(pod, "metadata.annotations"));
    assert_string_equal(jx_str(pod, "spec.restartPolicy", ""), "Always");
    assert_true(jx_bool(pod, "spec.enableServiceLinks", false));
    assert_int_equal(jx_int(pod, "spec.priority", -1), 0);
    assert_string_equal(jx_str(pod, "spec.serviceAccountName", ""), "default");
    assert_string_equal(jx_str(pod, "spec.serviceAccount", ""), "default");
    assert_string_equal(jx_str(pod, "spec.tolerations[1].key", ""),
                        "node.kubernetes.io/unreachable");
    assert_int_equal(jx_int(pod, "spec.tolerations[0].tolerationSeconds", -1), 300);
    /* canonical quantities; requests default to limits: Guaranteed */
    assert_string_equal(jx_str(pod, "spec.containers[0].resources.limits.cpu", ""), "1");
    assert_string_equal(jx_str(pod, "spec.containers[0].resources.requests.memory", ""), "1Gi");
    assert_string_equal(jx_str(pod, "spec.containers[0].resources.limits.memory", ""), "1Gi");
    assert_string_equal(jx_str(pod, "status.phase", ""), "Pending");
    assert_string_equal(jx_str(pod, "status.qosClass", ""), "Guaranteed");
    json_decref(pod);

    json_t *spec = J("{\"containers\":[{\"name\":\"c\"}]}");
    assert_string_equal(dflt_qos_class(spec), "BestEffort");
    json_decref(spec);
    spec = J("{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}");
    assert_string_equal(dflt_qos_class(spec), "Burstable");
    json_decref(spec);
    spec = J("{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1000m\",\"memory\":\"1Gi\"},"
             "\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}");
    assert_string_equal(dflt_qos_class(spec), "Guaranteed");
    json_decref(spec);

    json_t *ns = J("{\"metadata\":{\"name\":\"n\"}}");
    assert_int_equal(dflt_create("", "Namespace", ns, &r), 0);
    assert_string_equal(jx_str(ns, "spec.finalizers[0]", ""), "kubernetes");
    json_decref(ns);
    json_t *sec = J("{\"metadata\":{\"name\":\"s\"}}");
    assert_int_equal(dflt_create("", "Secret", sec, &r), 0);
    assert_string_equal(jx_str(sec, "type", ""), "Opaque");
    json_decref(sec);
    json_t *dep = J("{\"metadata\":{\"name\":\"d\"},\"spec\":{\"template\":{\"spec\":{"
                    "\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}}}");
    assert_int_equal(dflt_create("apps", "Deployment", dep, &r), 0);
    assert_int_equal(jx_int(dep, "spec.replicas", -1), 1);
    assert_string_equal(jx_str(dep, "spec.strategy.rollingUpdate.maxSurge", ""), "25%");
    assert_int_equal(jx_int(dep, "spec.revisionHistoryLimit", -1), 10);
    assert_int_equal(jx_int(dep, "spec.progressDeadlineSeconds", -1), 600);
    assert_string_equal(jx_str(dep, "spec.template.spec.dnsPolicy", ""), "ClusterFirst");
    assert_non_null(jx_obj(dep, "status"));
    json_decref(dep);
    /* a CR-like kind is untouched */
    json_t *cr = J("{\"metadata\":{\"name\":\"w\"},\"spec\":{}}");
    assert_int_equal(dflt_create("kueue.x-k8s.io", "Workload", cr, &r), 0);
    assert_int_equal(json_object_size(jx_obj(cr, "spec")), 0);
    json_decref(cr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_create),
        cmocka_unit_test(test_job_variants),
        cmocka_unit_test(test_pod_and_others),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
