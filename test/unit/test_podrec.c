/* Unit tests for controllers/agent/podrec: the agent's compact pod record. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/agent/agent.h"
#include "controllers/agent/podrec.h"
#include "pkg/json/jscan.h"

static json_t *load(const char *text)
{
    json_error_t je;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &je);
    if (!j)
        fail_msg("bad test JSON: %s", je.text);
    return j;
}

/* The record of `pod_json`, decoded into *r; the record (new reference) is returned and
 * must outlive r. */
static json_t *rec_of(const char *pod_json, struct podrec *r, struct err *e)
{
    json_t *pod = load(pod_json);
    err_clear(e);
    json_t *rec = podrec_new(pod, e);
    /* every record here is also what the pod built with only podrec_reads gives */
    json_t *lean = json_is_object(pod)
                       ? jscan_load_paths(pod_json, strlen(pod_json), podrec_reads, NULL)
                       : NULL;
    if (json_is_object(pod)) {
        assert_non_null(lean);
        json_t *again = podrec_new(lean, NULL);
        assert_true(json_equal(rec, again));
        json_decref(again);
    }
    json_decref(lean);
    json_decref(pod);
    assert_non_null(rec);
    assert_int_equal(podrec_read(rec, r), 0);
    return rec;
}

static char *res_json(const struct podrec *r, int limits)
{
    struct podres_list req = {0}, lim = {0};
    assert_int_equal(podrec_resources(r, &req, &lim), 0);
    json_t *j = podres_to_json(limits ? &lim : &req);
    char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(j);
    podres_free(&req);
    podres_free(&lim);
    return s;
}

#define POD_OF_JOB                                                                                 \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"team\"," \
    "\"resourceVersion\":\"%s\",\"labels\":{\"app\":\"x\"},\"ownerReferences\":[{\"apiVersion\":"  \
    "\"batch/v1\",\"kind\":\"Job\",\"name\":\"train\",\"uid\":\"u-1\",\"controller\":true}]},"     \
    "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{"  \
    "\"cpu\":\"500m\",\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"1\"}}},{\"name\":\"b\","           \
    "\"resources\":{\"requests\":{\"cpu\":\"1.5\"}}}]},\"status\":{\"phase\":\"%s\","              \
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}"

static char *pod_of_job(const char *rv, const char *phase, const char *ready)
{
    char *s = NULL;
    if (asprintf(&s, POD_OF_JOB, rv, phase, ready) < 0)
        fail_msg("asprintf");
    return s;
}

/* A pod of a Job: what the agent reads is recorded, requests summed as podres_pod does. */
static void test_fields(void **state)
{
    (void)state;
    struct podrec r;
    struct err e;
    char *text = pod_of_job("7", "Running", "True");
    json_t *rec = rec_of(text, &r, &e);
    assert_int_equal(e.code, 0);
    assert_int_equal(r.flags, PODREC_COUNTS | PODREC_PROGRESS);
    assert_string_equal(r.ns, "team");
    assert_string_equal(r.node, "n1");
    assert_string_equal(r.job, "u-1");
    assert_null(r.note.job);
    char *req = res_json(&r, 0), *lim = res_json(&r, 1);
    assert_string_equal(req, "{\"cpu\":\"2\",\"memory\":\"1Gi\"}");
    assert_string_equal(lim, "{\"cpu\":\"1\"}");
    free(req);
    free(lim);
    /* compact: one string, far below a kilobyte */
    assert_true(json_is_string(rec));
    assert_true(json_string_length(rec) < 160);
    json_decref(rec);
    free(text);
}

/* The compact forms: a lowercase uid as 16 bytes (read back as its text; any other uid stays
 * text), limits equal to the requests kept once, names outside the common ones, negative and
 * huge quantities; each reads back exactly. */
static void test_compact_forms(void **state)
{
    (void)state;
    static const struct {
        const char *uid, *res, *req, *lim;
        size_t max_len;
    } cases[] = {
        {"027b6140-ca2c-4f81-90e0-b96b17951b22",
         "\"requests\":{\"cpu\":\"2\",\"memory\":\"8Gi\"},\"limits\":{\"cpu\":\"2\",\"memory\":"
         "\"8Gi\"}",
         "{\"cpu\":\"2\",\"memory\":\"8Gi\"}", "{\"cpu\":\"2\",\"memory\":\"8Gi\"}", 50},
        {"027B6140-CA2C-4F81-90E0-B96B17951B22", "\"requests\":{\"example.com/fpga\":\"3\"}",
         "{\"example.com/fpga\":\"3\"}", "{}", 80},
        {"027b6140-ca2c-4f81-90e0-b96b17951b2", /* one digit short */
         "\"requests\":{\"nvidia.com/gpu\":\"1\",\"pods\":\"1\"},\"limits\":{\"nvidia.com/"
         "gpu\":\"1\"}",
         "{\"nvidia.com/gpu\":\"1\",\"pods\":\"1\"}", "{\"nvidia.com/gpu\":\"1\"}", 80},
        {"u-2", "\"requests\":{\"memory\":\"100Pi\",\"cpu\":\"1e3\"}",
         "{\"cpu\":\"1e3\",\"memory\":\"100Pi\"}", "{}", 80},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = NULL;
        if (asprintf(
                &text,
                "{\"metadata\":{\"name\":\"p\",\"namespace\":\"team\",\"ownerReferences\":[{"
                "\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"train\",\"uid\":\"%s\","
                "\"controller\":true}]},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{"
                "\"name\":\"a\",\"resources\":{%s}}]},\"status\":{\"phase\":\"Running\"}}",
                cases[i].uid, cases[i].res) < 0)
            fail_msg("asprintf");
        struct podrec r;
        struct err e;
        json_t *rec = rec_of(text, &r, &e);
        assert_int_equal(e.code, 0);
        assert_string_equal(r.job, cases[i].uid);
        assert_string_equal(r.node, "n1");
        char *req = res_json(&r, 0), *lim = res_json(&r, 1);
        assert_string_equal(req, cases[i].req);
        assert_string_equal(lim, cases[i].lim);
        assert_true(json_string_length(rec) <= cases[i].max_len);
        free(req);
        free(lim);
        json_decref(rec);
        free(text);
    }
}

/* Equal exactly when what the agent reads is equal: a new resourceVersion or a Ready change
 * compares equal; a terminal phase (leaves the node's sums) does not. */
static void test_equality(void **state)
{
    (void)state;
    struct podrec r;
    struct err e;
    char *a = pod_of_job("7", "Running", "True"), *b = pod_of_job("8", "Running", "False"),
         *c = pod_of_job("9", "Succeeded", "False");
    json_t *ra = rec_of(a, &r, &e), *rb = rec_of(b, &r, &e), *rc = rec_of(c, &r, &e);
    assert_true(json_equal(ra, rb));
    assert_false(json_equal(ra, rc));
    assert_int_equal(r.flags, PODREC_PROGRESS); /* c: ran, no longer counts */
    json_decref(ra);
    json_decref(rb);
    json_decref(rc);
    free(a);
    free(b);
    free(c);
}

/* Notes: unschedulable (unbound), not started (bound, image pull failing), and a start under
 * way, which is no note; a pod of a JobSet is assumed hub work. */
static void test_notes(void **state)
{
    (void)state;
    struct podrec r;
    struct err e;
    json_t *rec = rec_of(
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"ownerReferences\":[{\"apiVersion\":"
        "\"batch/v1\",\"kind\":\"Job\",\"name\":\"j\",\"uid\":\"u\",\"controller\":true}]},"
        "\"spec\":{},\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":"
        "\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":"
        "\"0/3 nodes\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}",
        &r, &e);
    assert_int_equal(r.flags, PODREC_UNSCHED);
    assert_string_equal(r.note.job, "j");
    assert_string_equal(r.note.reason, "Unschedulable");
    assert_string_equal(r.note.message, "0/3 nodes");
    assert_string_equal(r.note.since, "2026-01-01T00:00:00Z");
    assert_string_equal(r.node, "");
    json_decref(rec);

    const char *stalled =
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"creationTimestamp\":"
        "\"2026-01-02T00:00:00Z\",\"labels\":{\"" AGENT_JOBSET_LABEL "\":\"js\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"j\","
        "\"uid\":\"u\",\"controller\":true}]},\"spec\":{\"nodeName\":\"n\"},\"status\":{"
        "\"phase\":\"Pending\",\"containerStatuses\":[{\"state\":{\"waiting\":{\"reason\":"
        "\"%s\"}}}]}}";
    char buf[1024];
    snprintf(buf, sizeof buf, stalled, "ImagePullBackOff");
    rec = rec_of(buf, &r, &e);
    assert_int_equal(r.flags, PODREC_COUNTS | PODREC_STALL | PODREC_ASSUMED);
    assert_string_equal(r.note.reason, "ImagePullBackOff");
    assert_string_equal(r.note.message, "");
    assert_string_equal(r.note.since, "2026-01-02T00:00:00Z");
    json_decref(rec);
    snprintf(buf, sizeof buf, stalled, "ContainerCreating");
    rec = rec_of(buf, &r, &e);
    assert_int_equal(r.flags, PODREC_COUNTS | PODREC_ASSUMED);
    assert_null(r.note.reason);
    json_decref(rec);
}

/* Missing and wrong-typed fields count as absent; bad quantities give PODREC_BAD with a
 * message and no resources. */
static void test_hostile(void **state)
{
    (void)state;
    static const char *const pods[] = {
        "{}",
        "[]",
        "7",
        "null",
        "{\"metadata\":5,\"spec\":\"x\",\"status\":[]}",
        "{\"metadata\":{\"namespace\":7,\"ownerReferences\":{\"a\":1},\"labels\":[]},"
        "\"spec\":{\"nodeName\":[],\"containers\":{}},\"status\":{\"phase\":7}}",
        "{\"metadata\":{\"ownerReferences\":[5,null,{\"controller\":\"yes\",\"kind\":\"Job\"},"
        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"controller\":true,\"uid\":5,"
        "\"name\":[]}]},\"spec\":{\"nodeName\":\"n\",\"containers\":[5,{\"resources\":{"
        "\"requests\":{\"cpu\":\"lots\"}}}]},\"status\":{\"phase\":\"Pending\","
        "\"conditions\":7,\"containerStatuses\":[{\"state\":7},{\"state\":{\"waiting\":5}}]}}",
        "{\"spec\":{\"nodeName\":\"n\",\"containers\":[{\"resources\":{\"requests\":{"
        "\"cpu\":\"-1\"}}}]}}",
        "{\"spec\":{\"nodeName\":\"n\",\"containers\":[{\"resources\":{\"requests\":{"
        "\"cpu\":\"99999999999999999999999999999999E\"}}}]}}",
    };
    for (size_t i = 0; i < sizeof pods / sizeof *pods; i++) {
        struct podrec r;
        struct err e;
        json_t *rec = rec_of(pods[i], &r, &e);
        assert_null(r.job);
        assert_null(r.note.job);
        struct podres_list req = {0}, lim = {0};
        assert_int_equal(podrec_resources(&r, &req, &lim), 0);
        if (i >= 6) {
            assert_true(r.flags & PODREC_BAD);
            assert_true(e.code < 0);
            assert_true(strlen(e.msg) > 0);
            assert_int_equal(req.n + lim.n, 0);
            assert_true(r.flags & PODREC_COUNTS); /* bound: counts, requesting nothing */
        }
        podres_free(&req);
        podres_free(&lim);
        json_decref(rec);
        /* the same record without an error to fill */
        unsigned flags = r.flags;
        json_t *pod = load(pods[i]);
        rec = podrec_new(pod, NULL);
        assert_int_equal(podrec_read(rec, &r), 0);
        assert_int_equal(r.flags, flags);
        json_decref(rec);
        json_decref(pod);
    }
}

/* Huge fields: a message is cut to PODREC_MESSAGE_MAX bytes on a UTF-8 boundary, other
 * strings are kept; a NUL inside a string cuts it there, as json_string_value reads it. */
static void test_huge(void **state)
{
    (void)state;
    size_t big = 200000;
    char *msg = malloc(big + 1), *ns = malloc(big + 1);
    for (size_t i = 0; i < big; i += 2)
        memcpy(msg + i, "\xc3\xa9", 2); /* é, two bytes */
    msg[big] = 0;
    memset(ns, 'n', big);
    ns[big] = 0;
    json_t *pod = json_pack(
        "{s:{s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:b}]}, s:{}, s:{s:s, s:[{s:s, s:s, s:s, s:s, "
        "s:s}]}}",
        "metadata", "name", "p", "namespace", ns, "ownerReferences", "apiVersion", "batch/v1",
        "kind", "Job", "name", "j\u00e9", "uid", "u", "controller", 1, "spec", "status", "phase",
        "Pending", "conditions", "type", "PodScheduled", "status", "False", "reason",
        "Unschedulable", "message", msg, "lastTransitionTime", "2026-01-01T00:00:00Z");
    assert_non_null(pod);
    json_t *rec = podrec_new(pod, NULL);
    struct podrec r;
    assert_int_equal(podrec_read(rec, &r), 0);
    assert_int_equal(strlen(r.note.message), PODREC_MESSAGE_MAX);
    assert_memory_equal(r.note.message, msg, PODREC_MESSAGE_MAX);
    assert_int_equal(strlen(r.ns), big);
    json_decref(rec);
    /* odd cut: 1023 bytes, not half a character */
    json_t *c0 = json_array_get(json_object_get(json_object_get(pod, "status"), "conditions"), 0);
    char *odd = malloc(big + 2);
    odd[0] = 'x';
    memcpy(odd + 1, msg, big + 1);
    json_object_set_new(c0, "message", json_string(odd));
    rec = podrec_new(pod, NULL);
    assert_int_equal(podrec_read(rec, &r), 0);
    assert_int_equal(strlen(r.note.message), PODREC_MESSAGE_MAX - 1);
    json_decref(rec);
    /* a NUL inside the namespace */
    json_object_set_new(json_object_get(pod, "metadata"), "namespace", json_stringn("a\0b", 3));
    rec = podrec_new(pod, NULL);
    assert_int_equal(podrec_read(rec, &r), 0);
    assert_string_equal(r.ns, "a");
    json_decref(rec);
    json_decref(pod);
    free(odd);
    free(msg);
    free(ns);
}

/* Anything that is not a whole record is refused, never read past its end. */
static void test_not_a_record(void **state)
{
    (void)state;
    struct podrec r;
    assert_int_equal(podrec_read(NULL, &r), -EINVAL);
    json_t *j = json_integer(5);
    assert_int_equal(podrec_read(j, &r), -EINVAL);
    json_decref(j);
    j = json_string("hello, this is not a record");
    assert_int_equal(podrec_read(j, &r), -EINVAL);
    json_decref(j);
    char *text = pod_of_job("7", "Running", "True");
    struct err e;
    json_t *rec = rec_of(text, &r, &e);
    const char *bytes = json_string_value(rec);
    size_t len = json_string_length(rec);
    int refused = 0;
    for (size_t cut = 0; cut < len; cut++) {
        json_t *part = json_stringn_nocheck(bytes, cut);
        struct podres_list req = {0}, lim = {0};
        if (podrec_read(part, &r) < 0 || podrec_resources(&r, &req, &lim) < 0)
            refused++;
        podres_free(&req);
        podres_free(&lim);
        json_decref(part);
    }
    assert_int_equal(refused, (int)len); /* every truncation is noticed */
    json_decref(rec);
    free(text);
}

/* podrec_reads covers what the record reads: for pods using every member it names (a sidecar
 * init container, overhead, pod-level resources, a failing init container, a JobSet's label,
 * an object without a spec, resources that do not parse), the pod built of those members only
 * gives the same record and the same message. */
static void test_reads_cover(void **state)
{
    (void)state;
    static const char *const pods[] = {
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"x\",\"creationTimestamp\":"
        "\"2026-01-02T00:00:00Z\",\"managedFields\":[{}],\"labels\":{\"" AGENT_JOBSET_LABEL
        "\":\"js\"},\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
        "\"name\":\"j\",\"uid\":\"u\",\"controller\":true}]},\"spec\":{\"nodeName\":\"n\","
        "\"volumes\":[{}],\"initContainers\":[{\"name\":\"side\",\"restartPolicy\":\"Always\","
        "\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}],\"containers\":[{"
        "\"name\":\"c\",\"env\":[],\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
        "\"1Gi\"},\"limits\":{\"memory\":\"2Gi\"}}}],\"overhead\":{\"cpu\":\"100m\"},"
        "\"resources\":{\"limits\":{\"memory\":\"3Gi\"}}},\"status\":{\"phase\":\"Pending\","
        "\"podIP\":\"1.2.3.4\",\"initContainerStatuses\":[{\"image\":\"i\",\"state\":{"
        "\"waiting\":{\"reason\":\"ErrImagePull\",\"message\":\"no such image\"}}}]}}",
        /* no spec: podres reads the object as its own spec */
        "{\"metadata\":{\"name\":\"q\",\"namespace\":\"ns\"},\"containers\":[{\"resources\":"
        "{\"requests\":{\"cpu\":\"3\"}}}],\"initContainers\":[{\"restartPolicy\":\"Always\","
        "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],\"overhead\":{\"memory\":\"1Mi\"}}",
        /* resources that do not parse: PODREC_BAD and the same message */
        "{\"metadata\":{\"name\":\"r\",\"namespace\":\"ns\"},\"spec\":{\"containers\":[{"
        "\"resources\":{\"requests\":{\"cpu\":\"lots\"}}}]}}",
    };
    for (size_t i = 0; i < sizeof pods / sizeof pods[0]; i++) {
        json_t *whole = load(pods[i]);
        json_t *lean = jscan_load_paths(pods[i], strlen(pods[i]), podrec_reads, NULL);
        assert_non_null(lean);
        assert_null(json_object_get(lean, "status")
                        ? json_object_get(json_object_get(lean, "status"), "podIP")
                        : NULL);
        struct err ew, el;
        err_clear(&ew);
        err_clear(&el);
        json_t *a = podrec_new(whole, &ew), *b = podrec_new(lean, &el);
        assert_true(json_equal(a, b));
        assert_int_equal(ew.code, el.code);
        assert_string_equal(ew.msg, el.msg);
        struct podrec r;
        assert_int_equal(podrec_read(a, &r), 0);
        if (i == 0) /* what the members give: a stall, assumed, the sidecar summed */
            assert_int_equal(r.flags, PODREC_COUNTS | PODREC_STALL | PODREC_ASSUMED);
        if (i == 2)
            assert_true(r.flags & PODREC_BAD);
        json_decref(a);
        json_decref(b);
        json_decref(whole);
        json_decref(lean);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),       cmocka_unit_test(test_compact_forms),
        cmocka_unit_test(test_equality),     cmocka_unit_test(test_notes),
        cmocka_unit_test(test_hostile),      cmocka_unit_test(test_huge),
        cmocka_unit_test(test_not_a_record), cmocka_unit_test(test_reads_cover),
    };
    return cmocka_run_group_tests_name("podrec", tests, NULL, NULL);
}
