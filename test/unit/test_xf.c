/* Unit tests for controllers/workload/xf: placement inject/undo, downsync, status return. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/xf.h"
#include "pkg/json/jsonx.h"

static json_t *J(const char *s)
{
    struct err e;
    json_t *v = jx_loadb(s, strlen(s), &e);
    if (!v)
        fail_msg("bad test JSON: %s", e.msg);
    return v;
}

static void assert_json(const json_t *v, const char *want)
{
    json_t *w = J(want);
    if (!json_equal((json_t *)v, w)) {
        char *got = jx_dumps(v);
        char *exp = jx_dumps(w);
        print_error("got  %s\nwant %s\n", got, exp);
        free(got);
        free(exp);
        json_decref(w);
        fail();
    }
    json_decref(w);
}

/* A hub Job as it looks after Kueue suspended it and the Job controller saw it. */
static const char *HUB_JOB =
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"sample-job-x7k2p\","
    "\"generateName\":\"sample-job-\",\"namespace\":\"default\",\"uid\":\"hub-uid-1\","
    "\"resourceVersion\":\"42\",\"generation\":2,\"creationTimestamp\":\"2026-11-22T10:00:00Z\","
    "\"labels\":{\"kueue.x-k8s.io/queue-name\":\"user-queue-ks\",\"controller-uid\":\"hub-uid-1\","
    "\"batch.kubernetes.io/controller-uid\":\"hub-uid-1\",\"job-name\":\"sample-job-x7k2p\"},"
    "\"annotations\":{\"batch.kubernetes.io/job-tracking\":\"\",\"kubectl.kubernetes.io/"
    "last-applied-configuration\":\"{}\",\"team\":\"ml\"},"
    "\"managedFields\":[{\"manager\":\"kubectl\"}],\"finalizers\":[\"x/y\"],"
    "\"ownerReferences\":[{\"kind\":\"Foo\"}]},"
    "\"spec\":{\"parallelism\":3,\"completions\":3,\"suspend\":true,\"manualSelector\":false,"
    "\"selector\":{\"matchLabels\":{\"batch.kubernetes.io/controller-uid\":\"hub-uid-1\"}},"
    "\"template\":{\"metadata\":{\"labels\":{\"controller-uid\":\"hub-uid-1\","
    "\"batch.kubernetes.io/controller-uid\":\"hub-uid-1\",\"job-name\":\"sample-job-x7k2p\","
    "\"app\":\"demo\"}},\"spec\":{\"nodeSelector\":{\"disk\":\"ssd\",\"instance\":\"user-choice\"},"
    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}],\"restartPolicy\":\"Never\"}}},"
    "\"status\":{\"active\":0}}";

static const char *HUB_PT =
    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"metadata\":{\"name\":\"pt\","
    "\"namespace\":\"ml\",\"uid\":\"pt-uid\",\"resourceVersion\":\"7\"},"
    "\"spec\":{\"runPolicy\":{\"suspend\":true,\"managedBy\":\"kueue-ks.io/syncer\"},"
    "\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":1,\"template\":{\"spec\":{"
    "\"containers\":[{\"name\":\"pytorch\"}]}}},\"Worker\":{\"replicas\":2,\"template\":{"
    "\"spec\":{\"containers\":[{\"name\":\"pytorch\"}]}}}}},"
    "\"status\":{\"conditions\":[{\"type\":\"Created\",\"status\":\"True\"}]}}";

static void test_place_undo_roundtrip_job(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    json_t *job = J(HUB_JOB);
    json_t *orig = json_deep_copy(job);
    json_t *labels = J("{\"main\":{\"instance\":\"spot\",\"zone\":\"eu-1\"}}");
    struct err e;
    assert_int_equal(xf_place(k, job, "cluster1", labels, "wl-uid/t1", XF_INJECT_SPEC, &e), 1);
    assert_string_equal(jx_label(job, XF_LABEL_CLUSTER), "cluster1");
    assert_string_equal(jx_annotation(job, XF_ANN_PLACED_BY), "kueue-ks");
    assert_string_equal(jx_annotation(job, XF_ANN_PLACED_FOR), "wl-uid/t1");
    /* user key "instance" kept, "zone" added, "disk" untouched */
    assert_json(jx_get(job, "spec.template.spec.nodeSelector"),
                "{\"disk\":\"ssd\",\"instance\":\"user-choice\",\"zone\":\"eu-1\"}");
    assert_string_equal(jx_annotation(job, XF_ANN_INJECTED),
                        "{\"spec.template\":{\"zone\":\"eu-1\"}}");
    assert_string_equal(xf_placed_cluster(job), "cluster1");
    assert_null(xf_pinned_cluster(job));
    /* idempotent */
    assert_int_equal(xf_place(k, job, "cluster1", labels, "wl-uid/t1", XF_INJECT_SPEC, &e), 0);
    /* a different cluster is refused, job unchanged */
    json_t *before = json_deep_copy(job);
    assert_int_equal(xf_place(k, job, "cluster2", labels, NULL, XF_INJECT_SPEC, &e), -EEXIST);
    assert_non_null(strstr(e.msg, "cluster1"));
    assert_true(json_equal(before, job));
    json_decref(before);

    assert_int_equal(xf_unplace(k, job), 1);
    assert_true(json_equal(orig, job));
    assert_null(xf_placed_cluster(job));
    assert_int_equal(xf_unplace(k, job), 0);
    json_decref(job);
    json_decref(orig);
    json_decref(labels);
}

/* XF_INJECT_COPY: the hub job's spec is left as it was, the record names the keys a template
 * lacks, and the copy gets them (a user key still wins); undo is metadata only. */
static void test_place_for_copy(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    json_t *job = J(HUB_JOB);
    json_t *orig = json_deep_copy(job);
    json_t *labels = J("{\"main\":{\"instance\":\"spot\",\"zone\":\"eu-1\"}}");
    struct err e;
    assert_int_equal(xf_place(k, job, "cluster1", labels, "wl-uid/t1", XF_INJECT_COPY, &e), 1);
    assert_true(json_equal(jx_get(job, "spec"), jx_get(orig, "spec")));
    assert_string_equal(jx_annotation(job, XF_ANN_INJECTED),
                        "{\"spec.template\":{\"zone\":\"eu-1\"}}");
    assert_int_equal(xf_place(k, job, "cluster1", labels, "wl-uid/t1", XF_INJECT_COPY, &e), 0);
    struct xf_origin o = {.origin = "hub-a", .origin_uid = "hub-uid-1"};
    json_t *w = xf_downsync(k, job, &o, &e);
    assert_non_null(w);
    assert_json(jx_get(w, "spec.template.spec.nodeSelector"),
                "{\"disk\":\"ssd\",\"instance\":\"user-choice\",\"zone\":\"eu-1\"}");
    json_decref(w);
    assert_int_equal(xf_unplace(k, job), 1);
    assert_true(json_equal(orig, job));
    json_decref(job);
    json_decref(orig);

    /* a record on a placed job: only the kind's template paths are read, non-string values
     * are skipped, a malformed one is ignored; on a job kueue-ks has not placed it is not read */
    job = J("{\"metadata\":{\"name\":\"j\",\"annotations\":{\"kueue-ks.io/injected-node-"
            "selector\":\"{\\\"metadata\\\":{\\\"a\\\":\\\"1\\\"},\\\"spec.template\\\":{"
            "\\\"b\\\":2,\\\"c\\\":\\\"3\\\"}}\"}},\"spec\":{\"template\":{\"spec\":{}}}}");
    w = xf_downsync(k, job, &o, &e);
    assert_null(jx_get(w, "spec.template.spec.nodeSelector"));
    json_decref(w);
    jx_set_label(job, XF_LABEL_CLUSTER, "c1");
    jx_set_annotation(job, XF_ANN_PLACED_FOR, "t");
    w = xf_downsync(k, job, &o, &e);
    assert_json(jx_get(w, "spec.template.spec.nodeSelector"), "{\"c\":\"3\"}");
    assert_null(jx_get(w, "metadata.spec"));
    json_decref(w);
    /* placing for the copy makes the record afresh: one written before is not kept */
    json_t *other = J("{\"main\":{\"zone\":\"z\"}}");
    json_t *placed = json_deep_copy(job);
    assert_int_equal(xf_place(k, placed, "c1", other, "t", XF_INJECT_COPY, &e), 1);
    assert_string_equal(jx_annotation(placed, XF_ANN_INJECTED),
                        "{\"spec.template\":{\"zone\":\"z\"}}");
    json_decref(placed);
    assert_int_equal(xf_place(k, job, "c1", NULL, "t", XF_INJECT_COPY, &e), 1);
    assert_null(jx_annotation(job, XF_ANN_INJECTED));
    json_decref(other);
    jx_set_annotation(job, XF_ANN_INJECTED, "{not json");
    w = xf_downsync(k, job, &o, &e);
    assert_null(jx_get(w, "spec.template.spec.nodeSelector"));
    json_decref(w);
    json_decref(job);
    json_decref(labels);
}

static void test_undo_keeps_user_changes(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    json_t *job = J("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":{}}}}");
    json_t *labels = J("{\"main\":{\"a\":\"1\",\"b\":\"2\"}}");
    assert_int_equal(xf_place(k, job, "c1", labels, "t", XF_INJECT_SPEC, NULL), 1);
    assert_json(jx_get(job, "spec.template.spec.nodeSelector"), "{\"a\":\"1\",\"b\":\"2\"}");
    /* the user changes b afterwards: the undo keeps it */
    jx_set_str(job, "spec.template.spec.nodeSelector.b", "mine", NULL);
    assert_int_equal(xf_unplace(k, job), 1);
    assert_json(job, "{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":{"
                     "\"nodeSelector\":{\"b\":\"mine\"}}}}}");
    json_decref(job);

    /* a malformed record is dropped without touching anything else */
    job = J("{\"metadata\":{\"name\":\"j\",\"annotations\":{\"kueue-ks.io/injected-node-selector\":"
            "\"{not json\"}},\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":{\"a\":\"1\"}}}}}");
    assert_int_equal(xf_unplace(k, job), 1);
    assert_json(job, "{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":{"
                     "\"nodeSelector\":{\"a\":\"1\"}}}}}");
    json_decref(job);
    json_decref(labels);
}

/* xf_place tracks its changes (no whole-job before/after dump): its answer is exactly
 * "the job differs", checked here against a dump of each case. */
static int place_checked(json_t *job, const char *cluster, const json_t *labels, const char *tok)
{
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    char *before = jx_dumps(job);
    int rc = xf_place(k, job, cluster, labels, tok, XF_INJECT_SPEC, NULL);
    char *after = jx_dumps(job);
    assert_int_equal(rc, strcmp(before, after) != 0);
    free(before);
    free(after);
    return rc;
}

static void test_place_change_is_exact(void **state)
{
    (void)state;
    json_t *labels = J("{\"main\":{\"a\":\"1\",\"b\":\"2\",\"n\":5}}");
    json_t *job = J("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":{}}}}");
    assert_int_equal(place_checked(job, "c1", labels, "t1"), 1);
    assert_int_equal(place_checked(job, "c1", labels, "t1"), 0);
    assert_int_equal(place_checked(job, "c1", labels, "t2"), 1); /* a new admission */
    assert_int_equal(place_checked(job, "c1", NULL, NULL), 0);
    json_t *more = J("{\"main\":{\"c\":\"3\"}}");
    assert_int_equal(place_checked(job, "c1", more, "t2"), 1); /* one more key, recorded */
    assert_string_equal(jx_annotation(job, XF_ANN_INJECTED),
                        "{\"spec.template\":{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}}");
    json_decref(more);
    json_decref(job);

    /* the user's keys win: nothing injected, only the label and annotations */
    job = J("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":{"
            "\"nodeSelector\":{\"a\":\"x\",\"b\":\"y\"}}}}}");
    assert_int_equal(place_checked(job, "c1", labels, "t"), 1);
    assert_null(jx_annotation(job, XF_ANN_INJECTED));
    assert_int_equal(place_checked(job, "c1", labels, "t"), 0);
    json_decref(job);

    /* a template whose spec is not an object: nothing injected, no crash */
    job = J("{\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":{\"spec\":\"odd\"}}}");
    assert_int_equal(place_checked(job, "c1", labels, "t"), 1);
    assert_json(jx_get(job, "spec.template"), "{\"spec\":\"odd\"}");
    assert_int_equal(place_checked(job, "c1", labels, "t"), 0);
    json_decref(job);
    json_decref(labels);
}

static void test_pinned_label_stays(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    json_t *job = J("{\"metadata\":{\"name\":\"j\",\"labels\":{\"kubestellar.io/cluster\":\"c2\"}},"
                    "\"spec\":{\"template\":{\"spec\":{}}}}");
    assert_string_equal(xf_pinned_cluster(job), "c2");
    assert_int_equal(xf_place(k, job, "c2", NULL, "t", XF_INJECT_SPEC, NULL), 1);
    assert_null(jx_annotation(job, XF_ANN_PLACED_BY));
    assert_string_equal(xf_placed_cluster(job), "c2");
    assert_string_equal(xf_pinned_cluster(job), "c2");
    assert_int_equal(xf_unplace(k, job), 1);
    assert_string_equal(jx_label(job, XF_LABEL_CLUSTER), "c2");
    assert_null(jx_annotations(job));
    json_decref(job);
}

static void test_place_pytorch_every_template(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("kubeflow.org/v1", "PyTorchJob");
    json_t *pt = J(HUB_PT);
    json_t *orig = json_deep_copy(pt);
    json_t *labels = J("{\"master\":{\"instance\":\"h100\"},\"worker\":{\"instance\":\"h100\"}}");
    assert_int_equal(xf_place(k, pt, "cluster2", labels, "t", XF_INJECT_SPEC, NULL), 1);
    assert_string_equal(
        jx_str(pt, "spec.pytorchReplicaSpecs.Master.template.spec.nodeSelector.instance", ""),
        "h100");
    assert_string_equal(
        jx_str(pt, "spec.pytorchReplicaSpecs.Worker.template.spec.nodeSelector.instance", ""),
        "h100");
    assert_int_equal(xf_unplace(k, pt), 1);
    assert_true(json_equal(orig, pt));

    /* for the copy: each template's keys are recorded under its own path and reach the copy
     * there, the hub's templates untouched (the master and worker flavors differ here) */
    json_t *two = J("{\"master\":{\"instance\":\"h100\"},\"worker\":{\"pool\":\"b\"}}");
    assert_int_equal(xf_place(k, pt, "cluster2", two, "t", XF_INJECT_COPY, NULL), 1);
    assert_true(json_equal(jx_get(pt, "spec"), jx_get(orig, "spec")));
    struct xf_origin o = {.origin = "hub-a", .origin_uid = "pt-uid"};
    json_t *w = xf_downsync(k, pt, &o, NULL);
    assert_json(jx_get(w, "spec.pytorchReplicaSpecs.Master.template.spec.nodeSelector"),
                "{\"instance\":\"h100\"}");
    assert_json(jx_get(w, "spec.pytorchReplicaSpecs.Worker.template.spec.nodeSelector"),
                "{\"pool\":\"b\"}");
    json_decref(w);
    assert_int_equal(xf_unplace(k, pt), 1);
    assert_true(json_equal(orig, pt));
    json_decref(two);
    json_decref(pt);
    json_decref(orig);
    json_decref(labels);
}

static void test_downsync_job(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    json_t *hub = J(HUB_JOB);
    xf_place(k, hub, "cluster1", NULL, "t", XF_INJECT_SPEC, NULL);
    assert_int_equal(xf_remote_status_placed(k, hub, "cluster1"), 1);
    assert_string_equal(jx_annotation(hub, XF_ANN_REMOTE_STATUS),
                        "{\"active\":0,\"cluster\":\"cluster1\",\"failed\":0,\"ready\":0,"
                        "\"succeeded\":0}");
    json_t *rs = xf_remote_status(hub); /* its one reader */
    assert_string_equal(jx_str(rs, "cluster", ""), "cluster1");
    assert_int_equal(jx_int(rs, "active", -1), 0);
    json_decref(rs);
    static const char *const bad_rs[] = {"not json", "[1]", "\"s\"", "{\"cluster\":"};
    for (size_t i = 0; i < sizeof bad_rs / sizeof bad_rs[0]; i++) {
        json_t *j = J(HUB_JOB);
        jx_set_annotation(j, XF_ANN_REMOTE_STATUS, bad_rs[i]);
        assert_null(xf_remote_status(j));
        json_decref(j);
    }
    assert_null(xf_remote_status(NULL));
    struct xf_origin o = {.origin = "hub-a", .origin_uid = "hub-uid-1"};
    struct err e;
    json_t *w = xf_downsync(k, hub, &o, &e);
    assert_non_null(w);
    json_t *meta = json_object_get(w, "metadata");
    static const char *const gone[] = {"uid",          "resourceVersion",   "generation",
                                       "generateName", "creationTimestamp", "managedFields",
                                       "finalizers",   "ownerReferences"};
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
        assert_null(json_object_get(meta, gone[i]));
    assert_null(json_object_get(w, "status"));
    assert_null(jx_get(w, "spec.selector"));
    assert_null(jx_get(w, "spec.manualSelector"));
    assert_null(jx_get(w, "spec.suspend"));
    assert_json(jx_labels(w), "{\"kueue.x-k8s.io/queue-name\":\"user-queue-ks\","
                              "\"job-name\":\"sample-job-x7k2p\",\"kubestellar.io/cluster\":"
                              "\"cluster1\",\"app.kubernetes.io/managed-by\":\"kueue-ks\","
                              "\"kueue-ks.io/origin\":\"hub-a\",\"kueue-ks.io/origin-uid\":"
                              "\"hub-uid-1\"}");
    assert_json(jx_get(w, "spec.template.metadata.labels"),
                "{\"job-name\":\"sample-job-x7k2p\",\"app\":\"demo\"}");
    assert_null(jx_annotation(w, "batch.kubernetes.io/job-tracking"));
    assert_null(jx_annotation(w, "kubectl.kubernetes.io/last-applied-configuration"));
    assert_null(jx_annotation(w, XF_ANN_REMOTE_STATUS)); /* the hub's record, not the copy's */
    assert_string_equal(jx_annotation(w, "team"), "ml");
    assert_string_equal(jx_name(w), "sample-job-x7k2p");
    assert_string_equal(jx_namespace(w), "default");
    assert_int_equal(jx_int(w, "spec.parallelism", 0), 3);
    assert_true(xf_is_ours(w, &o));
    struct xf_origin other = {.origin = "hub-a", .origin_uid = "other"};
    assert_false(xf_is_ours(w, &other));
    struct xf_origin any = {.origin = "hub-a"};
    assert_true(xf_is_ours(w, &any));
    struct xf_origin hb = {.origin = "hub-b"};
    assert_false(xf_is_ours(w, &hb));
    assert_false(xf_is_ours(hub, &any));
    /* the hub object is not modified */
    assert_true(jx_bool(hub, "spec.suspend", false));
    json_decref(w);

    struct xf_origin bad = {.origin = "hub-a"};
    assert_null(xf_downsync(k, hub, &bad, &e));
    assert_int_equal(e.code, -EINVAL);
    json_decref(hub);
    json_t *noname = J("{\"metadata\":{}}");
    assert_null(xf_downsync(k, noname, &o, &e));
    assert_non_null(strstr(e.msg, "metadata.name"));
    json_decref(noname);
}

static void test_downsync_pytorch(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("kubeflow.org/v1", "PyTorchJob");
    json_t *hub = J(HUB_PT);
    struct xf_origin o = {.origin = "o", .origin_uid = "pt-uid"};
    json_t *w = xf_downsync(k, hub, &o, NULL);
    assert_json(w, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"metadata\":{"
                   "\"name\":\"pt\",\"namespace\":\"ml\",\"labels\":{\"app.kubernetes.io/"
                   "managed-by\":\"kueue-ks\",\"kueue-ks.io/origin\":\"o\",\"kueue-ks.io/"
                   "origin-uid\":\"pt-uid\"}},\"spec\":{\"runPolicy\":{},"
                   "\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":1,\"template\":{\"spec\":{"
                   "\"containers\":[{\"name\":\"pytorch\"}]}}},\"Worker\":{\"replicas\":2,"
                   "\"template\":{\"spec\":{\"containers\":[{\"name\":\"pytorch\"}]}}}}}}");
    json_decref(w);
    /* a foreign managedBy is kept */
    jx_set_str(hub, "spec.runPolicy.managedBy", "someone/else", NULL);
    w = xf_downsync(k, hub, &o, NULL);
    assert_string_equal(jx_str(w, "spec.runPolicy.managedBy", ""), "someone/else");
    json_decref(w);
    json_decref(hub);
}

static void test_status_return_job(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("batch/v1", "Job");
    struct xf_status s;
    json_t *w = J("{\"status\":{\"active\":2,\"ready\":1,\"succeeded\":1,"
                  "\"startTime\":\"2026-11-22T10:00:05Z\"}}");
    assert_int_equal(xf_status_return(k, w, "cluster1", false, &s, NULL), 0);
    assert_int_equal(s.result, KIND_RUNNING);
    assert_null(s.status);
    assert_string_equal(s.remote, "{\"active\":2,\"cluster\":\"cluster1\",\"failed\":0,"
                                  "\"ready\":1,\"succeeded\":1}");
    xf_status_release(&s);
    /* full mirror while running */
    assert_int_equal(xf_status_return(k, w, "cluster1", true, &s, NULL), 0);
    assert_json(s.status, "{\"active\":2,\"ready\":1,\"succeeded\":1,"
                          "\"startTime\":\"2026-11-22T10:00:05Z\"}");
    xf_status_release(&s);
    json_decref(w);

    /* finished without SuccessCriteriaMet (older worker): it is added before Complete */
    w = J(
        "{\"status\":{\"active\":0,\"ready\":0,\"succeeded\":3,\"terminating\":0,"
        "\"startTime\":\"2026-11-22T10:00:05Z\",\"completionTime\":\"2026-11-22T10:01:00Z\","
        "\"uncountedTerminatedPods\":{},\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\","
        "\"lastTransitionTime\":\"2026-11-22T10:01:00Z\"}]}}");
    assert_int_equal(xf_status_return(k, w, "cluster1", false, &s, NULL), 0);
    assert_int_equal(s.result, KIND_SUCCEEDED);
    assert_json(
        s.status,
        "{\"active\":0,\"ready\":0,\"terminating\":0,\"succeeded\":3,"
        "\"startTime\":\"2026-11-22T10:00:05Z\",\"completionTime\":\"2026-11-22T10:01:00Z\","
        "\"conditions\":[{\"type\":\"SuccessCriteriaMet\",\"status\":\"True\","
        "\"lastTransitionTime\":\"2026-11-22T10:01:00Z\"},{\"type\":\"Complete\","
        "\"status\":\"True\",\"lastTransitionTime\":\"2026-11-22T10:01:00Z\"}]}");
    xf_status_release(&s);
    json_decref(w);

    /* failed: FailureTarget present already is not duplicated; no completionTime */
    w = J("{\"status\":{\"active\":1,\"failed\":4,\"startTime\":\"2026-11-22T10:00:05Z\","
          "\"completionTime\":\"2026-11-22T10:01:00Z\",\"conditions\":[{\"type\":\"FailureTarget\","
          "\"status\":\"True\"},{\"type\":\"Failed\",\"status\":\"True\",\"reason\":"
          "\"BackoffLimitExceeded\"}]}}");
    assert_int_equal(xf_status_return(k, w, "c", false, &s, NULL), 0);
    assert_int_equal(s.result, KIND_FAILED);
    assert_json(s.status, "{\"active\":0,\"ready\":0,\"terminating\":0,\"failed\":4,"
                          "\"startTime\":\"2026-11-22T10:00:05Z\",\"conditions\":[{\"type\":"
                          "\"FailureTarget\",\"status\":\"True\"},{\"type\":\"Failed\",\"status\":"
                          "\"True\",\"reason\":\"BackoffLimitExceeded\"}]}");
    xf_status_release(&s);
    json_decref(w);

    /* complete without startTime: startTime defaults to completionTime */
    w = J("{\"status\":{\"succeeded\":1,\"completionTime\":\"T2\",\"conditions\":[{\"type\":"
          "\"Complete\",\"status\":\"True\"}]}}");
    assert_int_equal(xf_status_return(k, w, "c", false, &s, NULL), 0);
    assert_string_equal(jx_str(s.status, "startTime", ""), "T2");
    xf_status_release(&s);
    json_decref(w);

    assert_int_equal(xf_status_return(k, NULL, "c", false, &s, NULL), -EINVAL);
}

static void test_status_return_copy(void **state)
{
    (void)state;
    const struct kind_def *k = kind_lookup("kubeflow.org/v1", "PyTorchJob");
    json_t *w = J("{\"status\":{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"}],"
                  "\"replicaStatuses\":{\"Master\":{\"succeeded\":1}}}}");
    struct xf_status s;
    assert_int_equal(xf_status_return(k, w, "c", false, &s, NULL), 0);
    assert_int_equal(s.result, KIND_SUCCEEDED);
    assert_true(json_equal(s.status, jx_get(w, "status")));
    assert_null(s.remote);
    xf_status_release(&s);
    json_decref(w);
    w = J("{\"spec\":{}}");
    assert_int_equal(xf_status_return(kind_generic(), w, "c", false, &s, NULL), 0);
    assert_null(s.status);
    xf_status_release(&s);
    json_decref(w);
}

static void test_status_stopped(void **state)
{
    (void)state;
    const struct kind_def *job = kind_lookup("batch/v1", "Job");
    const struct kind_def *js = kind_lookup("jobset.x-k8s.io/v1alpha2", "JobSet");
    const struct kind_def *pt = kind_lookup("kubeflow.org/v1", "PyTorchJob");
    json_t *h = J("{\"status\":{\"active\":2,\"ready\":0,\"succeeded\":1}}");
    /* a Job whose counts were never mirrored (only the final status is) is left alone */
    assert_null(xf_status_stopped(job, h, false));
    json_t *p = xf_status_stopped(job, h, true);
    assert_json(p, "{\"active\":0}");
    json_decref(p);
    json_decref(h);
    h = J("{\"status\":{\"replicatedJobsStatus\":[{\"name\":\"a\",\"active\":1,\"ready\":1,"
          "\"succeeded\":2},{\"name\":\"b\",\"active\":0,\"ready\":0}]}}");
    p = xf_status_stopped(js, h, false);
    assert_json(p, "{\"replicatedJobsStatus\":[{\"name\":\"a\",\"active\":0,\"ready\":0,"
                   "\"succeeded\":2},{\"name\":\"b\",\"active\":0,\"ready\":0}]}");
    json_decref(p);
    json_decref(h);
    /* nothing active, or no status: NULL */
    h = J("{\"status\":{\"replicaStatuses\":{\"Master\":{\"active\":0,\"succeeded\":1}}}}");
    assert_null(xf_status_stopped(pt, h, false));
    json_decref(h);
    h = J("{\"spec\":{}}");
    assert_null(xf_status_stopped(pt, h, false));
    assert_null(xf_status_stopped(job, h, true));
    json_decref(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_place_undo_roundtrip_job),
        cmocka_unit_test(test_place_for_copy),
        cmocka_unit_test(test_undo_keeps_user_changes),
        cmocka_unit_test(test_place_change_is_exact),
        cmocka_unit_test(test_pinned_label_stays),
        cmocka_unit_test(test_place_pytorch_every_template),
        cmocka_unit_test(test_downsync_job),
        cmocka_unit_test(test_downsync_pytorch),
        cmocka_unit_test(test_status_return_job),
        cmocka_unit_test(test_status_return_copy),
        cmocka_unit_test(test_status_stopped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
