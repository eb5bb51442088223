/* Unit tests for devhub/validate. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/validate.h"
#include "pkg/util/xalloc.h"

static json_t *J(const char *s)
{
    json_error_t je;
    json_t *v = json_loads(s, 0, &je);
    if (!v)
        fail_msg("bad test JSON %s: %s", s, je.text);
    return v;
}

static const struct valid_target pods = {.group = "",
                                         .version = "v1",
                                         .kind = "Pod",
                                         .namespace = "default",
                                         .namespaced = true,
                                         .builtin = true};
static const struct valid_target jobs = {.group = "batch",
                                         .version = "v1",
                                         .kind = "Job",
                                         .namespace = "team-a",
                                         .namespaced = true,
                                         .builtin = true};
static const struct valid_target workloads = {.group = "kueue.x-k8s.io",
                                              .version = "v1beta2",
                                              .kind = "Workload",
                                              .namespace = "default",
                                              .namespaced = true,
                                              .builtin = false};
static const struct valid_target namespaces = {
    .group = "", .version = "v1", .kind = "Namespace", .namespaced = false, .builtin = true};

static int check(const struct valid_target *t, enum valid_op op, const char *body,
                 struct valid_result *r)
{
    json_t *o = J(body);
    int rc = valid_check(t, op, o, r);
    json_decref(o);
    return rc;
}

static void test_names(void **state)
{
    (void)state;
    char buf[128];
    assert_null(valid_dns1123_subdomain("a.b-c.d0", buf, sizeof buf));
    assert_non_null(valid_dns1123_subdomain("A", buf, sizeof buf));
    assert_non_null(valid_dns1123_subdomain("a..b", buf, sizeof buf));
    assert_non_null(valid_dns1123_subdomain("-a", buf, sizeof buf));
    assert_non_null(valid_dns1123_subdomain("", buf, sizeof buf));
    char longname[300];
    memset(longname, 'a', 254);
    longname[254] = '\0';
    assert_string_equal(valid_dns1123_subdomain(longname, buf, sizeof buf),
                        "must be no more than 253 characters");
    assert_null(valid_dns1123_label("my-name", buf, sizeof buf));
    assert_non_null(valid_dns1123_label("a.b", buf, sizeof buf));
    assert_null(valid_dns1035_label("abc-123", buf, sizeof buf));
    assert_non_null(valid_dns1035_label("1abc", buf, sizeof buf));
    assert_null(valid_qualified_name("kubernetes.io/hostname", buf, sizeof buf));
    assert_null(valid_qualified_name("My_Name.x", buf, sizeof buf));
    assert_string_equal(valid_qualified_name("a/", buf, sizeof buf), "name part must be non-empty");
    assert_string_equal(valid_qualified_name("/a", buf, sizeof buf),
                        "prefix part must be non-empty");
    assert_non_null(
        strstr(valid_qualified_name("Bad_/x", buf, sizeof buf), "prefix part a lowercase"));
    assert_non_null(strstr(valid_qualified_name("a/b/c", buf, sizeof buf), "a qualified name"));
    assert_non_null(strstr(valid_qualified_name("-x", buf, sizeof buf), "name part must consist"));
    assert_null(valid_label_value("", buf, sizeof buf));
    assert_null(valid_label_value("h100", buf, sizeof buf));
    assert_non_null(strstr(valid_label_value("bad value", buf, sizeof buf), "a valid label"));
    memset(longname, 'a', 64);
    longname[64] = '\0';
    assert_string_equal(valid_label_value(longname, buf, sizeof buf),
                        "must be no more than 63 characters");
}

static void test_parse_body(void **state)
{
    (void)state;
    struct valid_result r;
    json_t *o = NULL;
    assert_int_equal(valid_parse_body("{\"a\":1}xx", 7, 0, &o, &r), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "a")), 1);
    json_decref(o);
    o = NULL;
    assert_int_equal(valid_parse_body("{\"a\":", 5, 0, &o, &r), -EINVAL);
    assert_int_equal(r.code, 400);
    assert_string_equal(r.reason, "BadRequest");
    assert_non_null(strstr(r.message, "json parse error"));
    assert_null(o);
    assert_int_equal(valid_parse_body("[1]", 3, 0, &o, &r), -EINVAL);
    assert_int_equal(r.code, 400);
    assert_int_equal(valid_parse_body("", 0, 0, &o, &r), -EINVAL);
    assert_int_equal(valid_parse_body("{}", 2, 1, &o, &r), -E2BIG);
    assert_int_equal(r.code, 413);
    assert_string_equal(r.message, "Request entity too large: limit is 1");
    /* Over 3 MiB by default. */
    assert_int_equal(valid_parse_body("{}", VALID_MAX_BODY + 1, 0, &o, &r), -E2BIG);
    json_t *st = valid_status_body(&r);
    assert_string_equal(json_string_value(json_object_get(st, "kind")), "Status");
    assert_string_equal(json_string_value(json_object_get(st, "status")), "Failure");
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "RequestEntityTooLarge");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 413);
    assert_null(json_object_get(st, "details"));
    json_decref(st);
}

static void test_bad_request(void **state)
{
    (void)state;
    struct valid_result r;
    assert_int_equal(
        check(&jobs, VALID_CREATE,
              "{\"apiVersion\":\"apps/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"x\"}}", &r),
        -EINVAL);
    assert_int_equal(r.code, 400);
    assert_string_equal(r.message, "the API version in the data (apps/v1) does not match the "
                                   "expected API version (batch/v1)");
    assert_int_equal(
        check(&pods, VALID_CREATE, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}", &r), -EINVAL);
    assert_int_equal(r.code, 400);
    assert_string_equal(r.message, "ConfigMap in version \"v1\" cannot be handled as a Pod: the "
                                   "kind does not match the resource in the URL");
    /* Another version of the same group is refused too (AcceptsGroupVersion). */
    assert_int_equal(check(&workloads, VALID_CREATE,
                           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
                           "\"metadata\":{\"name\":\"w\"}}",
                           &r),
                     -EINVAL);
    assert_string_equal(r.message, "the API version in the data (kueue.x-k8s.io/v1beta1) does not "
                                   "match the expected API version (kueue.x-k8s.io/v1beta2)");
    /* A custom resource of another kind is a 422 on `kind`, like the CRD handler. */
    assert_int_equal(check(&workloads, VALID_CREATE,
                           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Other\","
                           "\"metadata\":{\"name\":\"foo\"}}",
                           &r),
                     -EINVAL);
    assert_int_equal(r.code, 422);
    assert_string_equal(r.message, "Other.kueue.x-k8s.io \"foo\" is invalid: kind: Invalid value: "
                                   "\"Other\": must be Workload");
    assert_string_equal(r.kind, "Other");
    assert_int_equal(check(&pods, VALID_CREATE,
                           "{\"metadata\":{\"name\":\"p\",\"namespace\":\"other\"},\"spec\":{}}",
                           &r),
                     -EINVAL);
    assert_int_equal(r.code, 400);
    assert_string_equal(r.message, "the namespace of the provided object does not match the "
                                   "namespace sent on the request");
    struct valid_target upd = pods;
    upd.name = "p";
    assert_int_equal(check(&upd, VALID_UPDATE, "{\"metadata\":{\"name\":\"q\"}}", &r), -EINVAL);
    assert_string_equal(r.message,
                        "the name of the object (q) does not match the name on the URL (p)");
    assert_int_equal(check(&pods, VALID_CREATE, "{\"metadata\":\"x\"}", &r), -EINVAL);
    assert_int_equal(r.code, 400);
    assert_int_equal(check(&pods, VALID_CREATE, "{\"metadata\":{\"labels\":{\"a\":1}}}", &r),
                     -EINVAL);
    assert_int_equal(r.code, 400);
    assert_non_null(strstr(r.message, "cannot unmarshal number"));
    assert_int_equal(check(&pods, VALID_CREATE, "{\"kind\":7}", &r), -EINVAL);
    assert_int_equal(r.code, 400);
}

static void test_invalid_job(void **state)
{
    (void)state;
    struct valid_result r;
    assert_int_equal(
        check(&jobs, VALID_CREATE,
              "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
              "\"x\"},\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\"}}}}",
              &r),
        -EINVAL);
    assert_int_equal(r.code, 422);
    assert_string_equal(r.reason, "Invalid");
    assert_string_equal(
        r.message, "Job.batch \"x\" is invalid: spec.template.spec.containers: Required value");
    json_t *st = valid_status_body(&r);
    json_t *want = J("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                     "\"Failure\",\"message\":\"Job.batch \\\"x\\\" is invalid: "
                     "spec.template.spec.containers: Required value\",\"reason\":\"Invalid\","
                     "\"details\":{\"name\":\"x\",\"group\":\"batch\",\"kind\":\"Job\",\"causes\":"
                     "[{\"reason\":\"FieldValueRequired\",\"message\":\"Required value\",\"field\":"
                     "\"spec.template.spec.containers\"}]},\"code\":422}");
    assert_true(json_equal(st, want));
    json_decref(st);
    json_decref(want);

    /* Missing restartPolicy defaults to Always, which a Job refuses; two errors aggregate. */
    assert_int_equal(check(&jobs, VALID_CREATE,
                           "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"template\":{\"spec\":{"
                           "\"containers\":[{\"name\":\"c\"}]}}}}",
                           &r),
                     -EINVAL);
    assert_int_equal(r.ncauses, 2);
    assert_string_equal(r.message,
                        "Job.batch \"x\" is invalid: [spec.template.spec.containers[0].image: "
                        "Required value, spec.template.spec.restartPolicy: Unsupported value: "
                        "\"Always\": supported values: \"OnFailure\", \"Never\"]");
    assert_string_equal(r.causes[1].reason, "FieldValueNotSupported");

    /* A valid Job. */
    assert_int_equal(check(&jobs, VALID_CREATE,
                           "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
                           "\"generateName\":\"sample-job-\",\"namespace\":\"team-a\",\"labels\":{"
                           "\"kueue.x-k8s.io/queue-name\":\"user-queue\"}},\"spec\":{\"template\":{"
                           "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"d\","
                           "\"image\":\"busybox\"}]}}}}",
                           &r),
                     0);
    assert_int_equal(r.code, 0);
}

static void test_invalid_meta(void **state)
{
    (void)state;
    struct valid_result r;
    assert_int_equal(check(&pods, VALID_CREATE,
                           "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"b\"}]}}", &r),
                     -EINVAL);
    assert_string_equal(r.message, "Pod \"\" is invalid: metadata.name: Required value: name or "
                                   "generateName is required");
    assert_int_equal(check(&pods, VALID_CREATE,
                           "{\"metadata\":{\"name\":\"Bad_Name\"},\"spec\":{\"containers\":[{"
                           "\"name\":\"a\",\"image\":\"b\"}]}}",
                           &r),
                     -EINVAL);
    assert_string_equal(r.causes[0].field, "metadata.name");
    assert_string_equal(r.causes[0].reason, "FieldValueInvalid");
    assert_non_null(strstr(r.message, "Pod \"Bad_Name\" is invalid: metadata.name: Invalid value: "
                                      "\"Bad_Name\": a lowercase RFC 1123 subdomain"));
    /* Namespace names are labels: dots are not allowed. */
    assert_int_equal(check(&namespaces, VALID_CREATE, "{\"metadata\":{\"name\":\"a.b\"}}", &r),
                     -EINVAL);
    assert_non_null(strstr(r.message, "a lowercase RFC 1123 label"));
    assert_int_equal(check(&namespaces, VALID_CREATE, "{\"metadata\":{\"name\":\"team-a\"}}", &r),
                     0);
    /* Labels and annotations. */
    assert_int_equal(check(&workloads, VALID_CREATE,
                           "{\"metadata\":{\"name\":\"w\",\"labels\":{\"bad key\":\"v\",\"k\":"
                           "\"bad value\"},\"annotations\":{\"ok\":\"anything at all\"}}}",
                           &r),
                     -EINVAL);
    assert_int_equal(r.ncauses, 2);
    assert_string_equal(r.causes[0].field, "metadata.labels");
    assert_non_null(strstr(r.causes[0].message, "Invalid value: \"bad key\": name part"));
    assert_non_null(strstr(r.causes[1].message, "Invalid value: \"bad value\": a valid label"));
    assert_string_equal(r.group, "kueue.x-k8s.io");
    assert_non_null(strstr(r.message, "Workload.kueue.x-k8s.io \"w\" is invalid: ["));
    /* Custom resources: no built-in field checks. */
    assert_int_equal(check(&workloads, VALID_CREATE, "{\"metadata\":{\"name\":\"w\"}}", &r), 0);
    /* Annotations over 256 KiB. */
    json_t *o = J("{\"metadata\":{\"name\":\"w\",\"annotations\":{}}}");
    char *big = malloc(VALID_MAX_ANNOTATIONS + 2);
    memset(big, 'x', VALID_MAX_ANNOTATIONS + 1);
    big[VALID_MAX_ANNOTATIONS + 1] = '\0';
    json_object_set_new(json_object_get(json_object_get(o, "metadata"), "annotations"), "a",
                        json_string(big));
    free(big);
    assert_int_equal(valid_check(&workloads, VALID_CREATE, o, &r), -EINVAL);
    assert_string_equal(r.causes[0].reason, "FieldValueTooLong");
    assert_string_equal(r.causes[0].message, "Too long: may not be more than 262144 bytes");
    json_decref(o);
}

static void test_other_builtins(void **state)
{
    (void)state;
    struct valid_result r;
    struct valid_target t = {.group = "apps",
                             .version = "v1",
                             .kind = "Deployment",
                             .namespace = "default",
                             .namespaced = true,
                             .builtin = true};
    assert_int_equal(
        check(&t, VALID_CREATE,
              "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"selector\":{\"matchLabels\":"
              "{\"app\":\"x\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"y\"}},"
              "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}",
              &r),
        -EINVAL);
    assert_non_null(strstr(r.message, "`selector` does not match template `labels`"));
    t.kind = "Service";
    t.group = "";
    assert_int_equal(check(&t, VALID_CREATE, "{\"metadata\":{\"name\":\"svc\"},\"spec\":{}}", &r),
                     -EINVAL);
    assert_string_equal(r.message, "Service \"svc\" is invalid: spec.ports: Required value");
    assert_int_equal(check(&t, VALID_CREATE,
                           "{\"metadata\":{\"name\":\"1svc\"},\"spec\":{"
                           "\"clusterIP\":\"None\"}}",
                           &r),
                     -EINVAL);
    assert_non_null(strstr(r.message, "DNS-1035"));
    t.kind = "Pod";
    assert_int_equal(check(&t, VALID_CREATE,
                           "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":"
                           "\"a\",\"image\":\"i\"},{\"name\":\"a\",\"image\":\"i\"}]}}",
                           &r),
                     -EINVAL);
    assert_string_equal(r.message,
                        "Pod \"p\" is invalid: spec.containers[1].name: Duplicate value: \"a\"");
    assert_string_equal(r.causes[0].reason, "FieldValueDuplicate");
    t.kind = "Lease";
    t.group = "coordination.k8s.io";
    assert_int_equal(check(&t, VALID_CREATE,
                           "{\"metadata\":{\"name\":\"l\"},\"spec\":{\"leaseDurationSeconds\":0,"
                           "\"leaseTransitions\":-1}}",
                           &r),
                     -EINVAL);
    assert_string_equal(r.message, "Lease.coordination.k8s.io \"l\" is invalid: "
                                   "[spec.leaseDurationSeconds: Invalid value: 0: must be greater "
                                   "than 0, spec.leaseTransitions: Invalid value: -1: must be "
                                   "greater than or equal to 0]");
    assert_int_equal(check(&t, VALID_CREATE,
                           "{\"metadata\":{\"name\":\"l\"},\"spec\":{\"holderIdentity\":\"x\","
                           "\"leaseDurationSeconds\":15}}",
                           &r),
                     0);
    t.group = "";
    t.kind = "ConfigMap";
    assert_int_equal(
        check(&t, VALID_CREATE, "{\"metadata\":{\"name\":\"cm\"},\"data\":{\"a/b\":\"x\"}}", &r),
        -EINVAL);
    assert_string_equal(r.causes[0].field, "data[a/b]");
    assert_int_equal(check(&t, VALID_CREATE,
                           "{\"metadata\":{\"name\":\"cm\"},\"data\":{\"KEY_1.x\":\"v\"}}", &r),
                     0);
    t.kind = "ClusterRole";
    t.group = "rbac.authorization.k8s.io";
    t.namespaced = false;
    assert_int_equal(
        check(&t, VALID_CREATE, "{\"metadata\":{\"name\":\"system:kueue-ks:manager\"}}", &r), 0);
    t.kind = "CustomResourceDefinition";
    t.group = "apiextensions.k8s.io";
    assert_int_equal(check(&t, VALID_CREATE,
                           "{\"metadata\":{\"name\":\"foos.example.com\"},\"spec\":{\"group\":"
                           "\"example.com\",\"names\":{\"plural\":\"bars\",\"kind\":\"Foo\"},"
                           "\"versions\":[{\"name\":\"v1\"}]}}",
                           &r),
                     -EINVAL);
    assert_non_null(strstr(r.message, "metadata.name: Invalid value: \"foos.example.com\": must "
                                      "be spec.names.plural+\".\"+spec.group"));
}

#define QTY_MSG                                                                                    \
    "quantities must match the regular expression "                                                \
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

/* A quantity that does not parse fails decoding: 400 BadRequest, as the apiserver. */
static void test_quantities(void **state)
{
    (void)state;
    struct valid_result r;
    const char *bad[] = {
        /* Job template container request */
        "{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":"
        "\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
        "\"requests\":{\"cpu\":\"1x\"}}}]}}}}",
        /* limit of an init container */
        "{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":"
        "\"Never\",\"initContainers\":[{\"name\":\"i\",\"image\":\"i\",\"resources\":{"
        "\"limits\":{\"memory\":\"1GB\"}}}],\"containers\":[{\"name\":\"c\",\"image\":"
        "\"i\"}]}}}}",
        /* overhead */
        "{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":"
        "\"Never\",\"overhead\":{\"cpu\":\"\"},\"containers\":[{\"name\":\"c\","
        "\"image\":\"i\"}]}}}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *o = J(bad[i]);
        assert_int_equal(valid_check(&jobs, VALID_CREATE, o, &r), -EINVAL);
        assert_int_equal(r.code, 400);
        assert_string_equal(r.reason, "BadRequest");
        assert_string_equal(r.message,
                            "Job in version \"v1\" cannot be handled as a Job: " QTY_MSG);
        json_decref(o);
    }
    json_t *pod = J("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":"
                    "\"c\",\"image\":\"i\",\"resources\":{\"limits\":{\"cpu\":\"2 \"}}}]}}");
    assert_int_equal(valid_check(&pods, VALID_UPDATE, pod, &r), -EINVAL);
    assert_string_equal(r.message, "Pod in version \"v1\" cannot be handled as a Pod: " QTY_MSG);
    json_decref(pod);
    /* Valid forms: suffixes, exponents, plain numbers. */
    pod = J("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
            "\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":"
            "\"1.5Gi\",\"x/y\":\"1e3\",\"pods\":2},\"limits\":{\"x/y\":\"1000\"}}}],"
            "\"overhead\":{\"cpu\":0.5}}}");
    assert_int_equal(valid_check(&pods, VALID_CREATE, pod, &r), 0);
    json_decref(pod);
}

/* Extended resources (a domain other than kubernetes.io, hugepages) cannot be overcommitted:
 * the limit is required and equal to the request; any request above its limit is invalid.
 * Messages as kube-apiserver v1.34.4 answered the real-stack e2e. */
static void test_extended_resources(void **state)
{
    (void)state;
    struct valid_result r;
    const char *pre = "{\"metadata\":{\"name\":\"job-gpu\"},\"spec\":{\"template\":{\"spec\":{"
                      "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":"
                      "\"i\",\"resources\":";
    struct {
        const char *res, *msg;
    } cases[] = {
        {"{\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"}}",
         "Job.batch \"job-gpu\" is invalid: spec.template.spec.containers[0].resources.limits: "
         "Required value: Limit must be set for non overcommitable resources"},
        {"{\"requests\":{\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"2\"}}",
         "Job.batch \"job-gpu\" is invalid: "
         "spec.template.spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "
         "\"1\": must be equal to nvidia.com/gpu limit of 2"},
        {"{\"requests\":{\"cpu\":\"2\"},\"limits\":{\"cpu\":\"1\"}}",
         "Job.batch \"job-gpu\" is invalid: "
         "spec.template.spec.containers[0].resources.requests[cpu]: "
         "Invalid value: \"2\": must be less than or equal to cpu limit of 1"},
        {"{\"requests\":{\"hugepages-2Mi\":\"2Mi\"}}",
         "Job.batch \"job-gpu\" is invalid: spec.template.spec.containers[0].resources.limits: "
         "Required value: Limit must be set for non overcommitable resources"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *doc = xasprintf("%s%s}]}}}}", pre, cases[i].res);
        json_t *o = J(doc);
        assert_int_equal(valid_check(&jobs, VALID_CREATE, o, &r), -EINVAL);
        assert_int_equal(r.code, 422);
        assert_string_equal(r.message, cases[i].msg);
        json_decref(o);
        free(doc);
    }
    /* Valid: limit equal to the request (1 == 1000m), a limit alone, native overcommit. */
    const char *ok[] = {
        "{\"requests\":{\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"1000m\"}}",
        "{\"limits\":{\"nvidia.com/gpu\":\"2\"}}",
        "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\",\"example.kubernetes.io/x\":\"3\"}}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char *doc = xasprintf("%s%s}]}}}}", pre, ok[i]);
        json_t *o = J(doc);
        if (valid_check(&jobs, VALID_CREATE, o, &r) != 0)
            fail_msg("case %zu refused: %s", i, r.message);
        json_decref(o);
        free(doc);
    }
}

/* valid_fail_field: one cause, the apiserver's 422 message. */
static void test_fail_field(void **state)
{
    (void)state;
    struct valid_result r;
    assert_int_equal(valid_fail_field(&r, "batch", "Job", "x", "FieldValueRequired",
                                      "spec.selector", "Required value"),
                     -EINVAL);
    assert_int_equal(r.code, 422);
    assert_string_equal(r.message, "Job.batch \"x\" is invalid: spec.selector: Required value");
    json_t *st = valid_status_body(&r);
    assert_string_equal(json_string_value(json_object_get(json_object_get(st, "details"), "kind")),
                        "Job");
    json_decref(st);
    /* No kind (the patch strict error): details carry no kind. */
    valid_fail_field(&r, "", "", "", "FieldValueInvalid", "patch", "Invalid value: \"{}\": x");
    assert_string_equal(r.message, " \"\" is invalid: patch: Invalid value: \"{}\": x");
    st = valid_status_body(&r);
    assert_null(json_object_get(json_object_get(st, "details"), "kind"));
    json_decref(st);
}

static void test_normalize(void **state)
{
    (void)state;
    json_t *o = J("{\"metadata\":{\"name\":\"p\"}}");
    valid_normalize(&jobs, o);
    assert_string_equal(json_string_value(json_object_get(o, "apiVersion")), "batch/v1");
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "Job");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace")), "team-a");
    json_decref(o);
    o = J("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"n\","
          "\"namespace\":\"x\"}}");
    valid_normalize(&namespaces, o);
    assert_null(json_object_get(json_object_get(o, "metadata"), "namespace"));
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_parse_body),
        cmocka_unit_test(test_bad_request),
        cmocka_unit_test(test_invalid_job),
        cmocka_unit_test(test_invalid_meta),
        cmocka_unit_test(test_other_builtins),
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_quantities),
        cmocka_unit_test(test_extended_resources),
        cmocka_unit_test(test_fail_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
