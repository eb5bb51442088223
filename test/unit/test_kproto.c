/*
 * Unit tests for devhub/kproto.
 *
 * Fixtures in test/unit/data/kproto/: NAME.pb is a request body captured from
 * kubectl v1.32 (`kubectl create ...` against a local listener that recorded
 * the POST); NAME.json is `kubectl create ... --dry-run=client -o json` for
 * the same command. The only difference between the two encodings is
 * metadata.creationTimestamp: JSON prints the zero time as null, the decoder
 * omits it, so null-valued members are removed from the expected JSON before
 * the exact json_equal comparison. ssar/ssrr/ssr (`kubectl auth can-i
 * create pods --subresource=log`, `auth can-i --list`, `auth whoami`) have no
 * dry-run: their .json is written by hand; the review status, which the
 * server computes, decodes to {} (kubectl's JSON would carry the zero status,
 * e.g. "allowed": false). Hand-built messages (a tiny encoder below)
 * cover the kinds kubectl's create commands do not send.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/kproto.h"
#include "pkg/util/buf.h"
#include "pkg/util/err.h"
#include "pkg/util/xalloc.h"

#define DATA "test/unit/data/kproto/"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s (tests run from the repository root)", path);
    struct buf b;
    buf_init(&b, 1 << 20);
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
        assert_int_equal(buf_append(&b, tmp, n), 0);
    fclose(f);
    *len = b.len;
    return buf_detach(&b);
}

/* Remove null members recursively (JSON's zero metav1.Time). */
static void strip_nulls(json_t *j)
{
    if (json_is_object(j)) {
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(j, tmp, k, v)
        {
            if (json_is_null(v))
                json_object_del(j, k);
            else
                strip_nulls(v);
        }
    } else if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++)
            strip_nulls(json_array_get(j, i));
    }
}

static void check_fixture(const char *name)
{
    char path[256];
    size_t len;
    snprintf(path, sizeof(path), DATA "%s.pb", name);
    char *pb = slurp(path, &len);
    snprintf(path, sizeof(path), DATA "%s.json", name);
    json_error_t je;
    json_t *want = json_load_file(path, 0, &je);
    if (!want)
        fail_msg("%s: %s", path, je.text);
    strip_nulls(want);

    json_t *got = NULL;
    struct err e = {0};
    int rc = kproto_decode(pb, len, &got, &e);
    if (rc != 0)
        fail_msg("%s: decode failed: %s", name, e.msg);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_SORT_KEYS | JSON_INDENT(1));
        char *w = json_dumps(want, JSON_SORT_KEYS | JSON_INDENT(1));
        print_error("%s: got\n%s\nwant\n%s\n", name, g, w);
        free(g);
        free(w);
        fail_msg("%s: decoded JSON differs from kubectl's JSON", name);
    }
    json_decref(got);
    json_decref(want);
    free(pb);
}

static void test_fixtures(void **state)
{
    (void)state;
    static const char *names[] = {
        "namespace",
        "secret",
        "configmap",
        "configmap-binary",
        "serviceaccount",
        "job",
        "job-noargs",
        "cronjob",
        "deployment",
        "service-clusterip",
        "service-nodeport",
        "role",
        "rolebinding",
        "clusterrole",
        "clusterrolebinding",
        "secret-docker",
        "ssar",
        "ssrr",
        "ssr",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        check_fixture(names[i]);
}

/* ---- a tiny protobuf encoder for hand-built messages -------------------- */

static void pb_varint(struct buf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            t[n] |= 0x80;
        n++;
    } while (v);
    assert_int_equal(buf_append(b, t, n), 0);
}

static void pb_tag(struct buf *b, uint32_t num, unsigned wt)
{
    pb_varint(b, ((uint64_t)num << 3) | wt);
}

static void pb_uint(struct buf *b, uint32_t num, uint64_t v)
{
    pb_tag(b, num, 0);
    pb_varint(b, v);
}

static void pb_bytes(struct buf *b, uint32_t num, const void *p, size_t n)
{
    pb_tag(b, num, 2);
    pb_varint(b, n);
    if (n)
        assert_int_equal(buf_append(b, p, n), 0);
}

static void pb_str(struct buf *b, uint32_t num, const char *s)
{
    pb_bytes(b, num, s, strlen(s));
}

/* Append `sub` as field num and free it. */
static void pb_msg(struct buf *b, uint32_t num, struct buf *sub)
{
    pb_bytes(b, num, sub->data ? sub->data : "", sub->len);
    buf_free(sub);
}

static void pb_map(struct buf *b, uint32_t num, const char *k, const char *v)
{
    struct buf e;
    buf_init(&e, 1 << 20);
    pb_str(&e, 1, k);
    pb_str(&e, 2, v);
    pb_msg(b, num, &e);
}

/* Wrap raw in the k8s envelope; caller frees the result with buf_free. */
static void envelope(struct buf *out, const char *api_version, const char *kind, struct buf *raw,
                     const char *encoding)
{
    struct buf tm;
    buf_init(out, 1 << 22);
    buf_init(&tm, 1 << 20);
    assert_int_equal(buf_append(out, "k8s\0", 4), 0);
    pb_str(&tm, 1, api_version);
    pb_str(&tm, 2, kind);
    pb_msg(out, 1, &tm);
    pb_msg(out, 2, raw);
    pb_str(out, 3, encoding);
    pb_str(out, 4, "");
}

static json_t *decode_ok(struct buf *body)
{
    json_t *j = NULL;
    struct err e = {0};
    int rc = kproto_decode(body->data, body->len, &j, &e);
    if (rc)
        fail_msg("decode failed: %s", e.msg);
    return j;
}

static void assert_json(json_t *got, const char *want_text)
{
    json_error_t je;
    json_t *want = json_loads(want_text, 0, &je);
    if (!want)
        fail_msg("bad expected JSON: %s", je.text);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
        print_error("got  %s\nwant %s\n", g, want_text);
        free(g);
        fail_msg("JSON differs");
    }
    json_decref(want);
}

static int decode_err(const void *p, size_t n, struct err *e)
{
    json_t *j = (json_t *)1;
    err_clear(e);
    int rc = kproto_decode(p, n, &j, e);
    if (rc == 0)
        json_decref(j);
    else
        assert_null(j);
    return rc;
}

/* ObjectMeta: every field kind incl. time, maps, ownerReferences, finalizers. */
static void test_object_meta(void **state)
{
    (void)state;
    struct buf raw, meta, ts, owner, body;
    buf_init(&raw, 1 << 20);
    buf_init(&meta, 1 << 20);
    buf_init(&ts, 1 << 20);
    buf_init(&owner, 1 << 20);
    pb_str(&meta, 1, "cm");
    pb_str(&meta, 2, "");
    pb_str(&meta, 3, "team-a");
    pb_str(&meta, 5, "uid-1");
    pb_str(&meta, 6, "42");
    pb_uint(&meta, 7, 3);
    pb_uint(&ts, 1, 1795359845); /* 2026-11-22T15:04:05Z */
    pb_uint(&ts, 2, 0);
    pb_msg(&meta, 8, &ts);
    pb_uint(&meta, 10, 0); /* pointer: zero kept */
    pb_map(&meta, 11, "app", "web");
    pb_map(&meta, 11, "tier", "front");
    pb_map(&meta, 12, "note", "h\xc3\xa9llo");
    pb_str(&owner, 1, "Job");
    pb_str(&owner, 3, "j1");
    pb_str(&owner, 4, "u-2");
    pb_str(&owner, 5, "batch/v1");
    pb_uint(&owner, 6, 1);
    pb_msg(&meta, 13, &owner);
    pb_str(&meta, 14, "a/b");
    pb_str(&meta, 14, "c/d");
    pb_msg(&raw, 1, &meta);
    pb_map(&raw, 2, "k", "v");
    pb_uint(&raw, 4, 1);
    envelope(&body, "v1", "ConfigMap", &raw, "");
    json_t *j = decode_ok(&body);
    assert_json(j, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"immutable\":true,"
                   "\"data\":{\"k\":\"v\"},\"metadata\":{\"name\":\"cm\",\"namespace\":\"team-a\","
                   "\"uid\":\"uid-1\",\"resourceVersion\":\"42\",\"generation\":3,"
                   "\"creationTimestamp\":\"2026-11-22T15:04:05Z\","
                   "\"deletionGracePeriodSeconds\":0,"
                   "\"labels\":{\"app\":\"web\",\"tier\":\"front\"},"
                   "\"annotations\":{\"note\":\"h\\u00e9llo\"},"
                   "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
                   "\"name\":\"j1\",\"uid\":\"u-2\",\"controller\":true}],"
                   "\"finalizers\":[\"a/b\",\"c/d\"]}}");
    json_decref(j);
    buf_free(&body);
}

/* PodSpec/Container fields kubectl create does not send; Quantity, IntOrString. */
static void test_deployment_full(void **state)
{
    (void)state;
    struct buf raw, spec, tmpl, pod, ctr, res, q, port, env, vf, ksel, tol, strat, ru, is1, is2,
        sel, body;
    struct buf *all[] = {&raw, &spec, &tmpl, &pod,   &ctr, &res, &q,   &port, &env,
                         &vf,  &ksel, &tol,  &strat, &ru,  &is1, &is2, &sel};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        buf_init(all[i], 1 << 20);

    /* resources: limits {cpu: 500m}, requests {memory: 1Gi} */
    pb_str(&q, 1, "500m");
    {
        struct buf entry;
        buf_init(&entry, 1 << 20);
        pb_str(&entry, 1, "cpu");
        pb_msg(&entry, 2, &q);
        pb_msg(&res, 1, &entry);
        buf_init(&q, 1 << 20);
        pb_str(&q, 1, "1Gi");
        buf_init(&entry, 1 << 20);
        pb_str(&entry, 1, "memory");
        pb_msg(&entry, 2, &q);
        pb_msg(&res, 2, &entry);
    }
    pb_uint(&port, 3, 8080);
    pb_str(&port, 4, "TCP");
    {
        /* secretKeyRef: LocalObjectReference{name} (inlined in JSON) as field 1, key as 2 */
        struct buf lref;
        buf_init(&lref, 1 << 20);
        pb_str(&lref, 1, "creds");
        pb_msg(&ksel, 1, &lref);
        pb_str(&ksel, 2, "token");
        pb_msg(&vf, 4, &ksel);
    }
    pb_str(&env, 1, "TOKEN");
    pb_msg(&env, 3, &vf);
    pb_str(&ctr, 1, "main");
    pb_str(&ctr, 2, "img:1");
    pb_str(&ctr, 4, "--x");
    pb_str(&ctr, 5, "/w");
    pb_msg(&ctr, 6, &port);
    pb_msg(&ctr, 7, &env);
    pb_msg(&ctr, 8, &res);
    pb_str(&ctr, 14, "IfNotPresent");
    pb_uint(&ctr, 16, 0);
    pb_str(&tol, 1, "gpu");
    pb_str(&tol, 2, "Exists");
    pb_str(&tol, 4, "NoSchedule");
    pb_uint(&tol, 5, (uint64_t)-5); /* negative int64 */
    pb_msg(&pod, 2, &ctr);
    pb_str(&pod, 3, "Always");
    pb_uint(&pod, 4, 30);
    pb_map(&pod, 7, "pool", "a");
    pb_str(&pod, 8, "runner");
    pb_msg(&pod, 22, &tol);
    pb_uint(&pod, 25, (uint64_t)(int64_t)-7); /* negative int32, sign-extended */
    pb_msg(&tmpl, 2, &pod);
    pb_map(&sel, 1, "app", "w");
    pb_uint(&is1, 1, 0);
    pb_uint(&is1, 2, 2);
    pb_uint(&is2, 1, 1);
    pb_str(&is2, 3, "25%");
    pb_msg(&ru, 1, &is1);
    pb_msg(&ru, 2, &is2);
    pb_str(&strat, 1, "RollingUpdate");
    pb_msg(&strat, 2, &ru);
    pb_uint(&spec, 1, 0); /* replicas: pointer, zero kept */
    pb_msg(&spec, 2, &sel);
    pb_msg(&spec, 3, &tmpl);
    pb_msg(&spec, 4, &strat);
    pb_uint(&spec, 5, 0); /* minReadySeconds: omitempty */
    pb_msg(&raw, 2, &spec);
    envelope(&body, "apps/v1", "Deployment", &raw, "");
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        buf_free(all[i]);

    json_t *j = decode_ok(&body);
    assert_json(
        j, "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"spec\":{\"replicas\":0,"
           "\"selector\":{\"matchLabels\":{\"app\":\"w\"}},"
           "\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":"
           "{\"maxUnavailable\":2,\"maxSurge\":\"25%\"}},"
           "\"template\":{\"spec\":{\"restartPolicy\":\"Always\","
           "\"terminationGracePeriodSeconds\":30,\"nodeSelector\":{\"pool\":\"a\"},"
           "\"serviceAccountName\":\"runner\",\"priority\":-7,"
           "\"tolerations\":[{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\","
           "\"tolerationSeconds\":-5}],"
           "\"containers\":[{\"name\":\"main\",\"image\":\"img:1\",\"args\":[\"--x\"],"
           "\"workingDir\":\"/w\",\"ports\":[{\"containerPort\":8080,\"protocol\":\"TCP\"}],"
           "\"env\":[{\"name\":\"TOKEN\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"creds\","
           "\"key\":\"token\"}}}],"
           "\"resources\":{\"limits\":{\"cpu\":\"500m\"},\"requests\":{\"memory\":\"1Gi\"}},"
           "\"imagePullPolicy\":\"IfNotPresent\"}]}}}}");
    json_decref(j);
    buf_free(&body);
}

/* Unknown fields of every wire type are skipped; raw's own apiVersion is overridden. */
static void test_unknown_fields_skipped(void **state)
{
    (void)state;
    struct buf raw, meta, body;
    buf_init(&raw, 1 << 20);
    buf_init(&meta, 1 << 20);
    pb_str(&meta, 1, "ns1");
    pb_uint(&meta, 99, 7); /* varint */
    pb_tag(&meta, 100, 1); /* fixed64 */
    assert_int_equal(buf_append(&meta, "12345678", 8), 0);
    pb_tag(&meta, 101, 5); /* fixed32 */
    assert_int_equal(buf_append(&meta, "1234", 4), 0);
    pb_str(&meta, 17, "\xff\xfe managedFields bytes"); /* skipped, even if not UTF-8 */
    pb_msg(&raw, 1, &meta);
    pb_uint(&raw, 50, 1);
    envelope(&body, "v1", "Namespace", &raw, "");
    json_t *j = decode_ok(&body);
    assert_json(j,
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns1\"}}");
    json_decref(j);
    buf_free(&body);
}

static void test_unknown_kind_and_encoding(void **state)
{
    (void)state;
    struct buf raw, body;
    struct err e;
    buf_init(&raw, 1 << 20);
    envelope(&body, "networking.k8s.io/v1", "Ingress", &raw, "");
    assert_int_equal(decode_err(body.data, body.len, &e), -ENOTSUP);
    assert_non_null(strstr(e.msg, "networking.k8s.io/v1 Ingress"));
    buf_free(&body);

    buf_init(&raw, 1 << 20);
    envelope(&body, "v1", "Namespace", &raw, "gzip");
    assert_int_equal(decode_err(body.data, body.len, &e), -ENOTSUP);
    assert_non_null(strstr(e.msg, "gzip"));
    buf_free(&body);

    assert_int_equal(kproto_known("batch/v1", "Job"), 1);
    assert_int_equal(kproto_known("v1", "Job"), 0);
    assert_int_equal(kproto_known(NULL, "Job"), 0);
}

static void test_media_type(void **state)
{
    (void)state;
    assert_int_equal(kproto_is_media_type("application/vnd.kubernetes.protobuf"), 1);
    assert_int_equal(kproto_is_media_type(" Application/VND.Kubernetes.Protobuf ; charset=x"), 1);
    assert_int_equal(kproto_is_media_type("application/vnd.kubernetes.protobuf;stream=watch"), 1);
    assert_int_equal(kproto_is_media_type("application/vnd.kubernetes.protobufx"), 0);
    assert_int_equal(kproto_is_media_type("application/json"), 0);
    assert_int_equal(kproto_is_media_type(""), 0);
    assert_int_equal(kproto_is_media_type(NULL), 0);
}

static void test_bad_magic_and_empty(void **state)
{
    (void)state;
    struct err e;
    assert_int_equal(decode_err("", 0, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "magic"));
    assert_int_equal(decode_err("{\"kind\":\"Namespace\"}", 20, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "magic"));
    /* magic only: no kind */
    assert_int_equal(decode_err("k8s\0", 4, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "no kind"));
}

/* Every prefix of a real body fails cleanly (or, past the raw object, still decodes). */
static void test_truncated(void **state)
{
    (void)state;
    size_t len;
    char *pb = slurp(DATA "deployment.pb", &len);
    struct err e;
    /* the last 4 bytes are the optional empty contentEncoding/contentType */
    for (size_t n = 0; n < len; n++) {
        char *cut = xmalloc(n ? n : 1);
        memcpy(cut, pb, n);
        int rc = decode_err(cut, n, &e);
        if (n < len - 4 && rc != -EINVAL)
            fail_msg("prefix %zu of %zu: rc %d (%s)", n, len, rc, e.msg);
        if (n == len - 4 && rc != 0)
            fail_msg("prefix %zu of %zu: rc %d (%s)", n, len, rc, e.msg);
        if (rc != 0 && rc != -EINVAL)
            fail_msg("prefix %zu of %zu: rc %d (%s)", n, len, rc, e.msg);
        free(cut);
    }
    free(pb);
}

static void test_varint_overflow(void **state)
{
    (void)state;
    struct err e;
    /* tag varint of 11 bytes */
    static const uint8_t long_tag[] = {'k',  '8',  's',  0,    0x8a, 0x80, 0x80, 0x80,
                                       0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    assert_int_equal(decode_err(long_tag, sizeof(long_tag), &e), -EINVAL);
    assert_non_null(strstr(e.msg, "64 bits"));
    /* 10-byte varint whose last byte carries more than 1 bit */
    struct buf raw, meta, body;
    buf_init(&raw, 1 << 20);
    buf_init(&meta, 1 << 20);
    pb_tag(&meta, 7, 0);
    static const uint8_t big[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    assert_int_equal(buf_append(&meta, big, sizeof(big)), 0);
    pb_msg(&raw, 1, &meta);
    envelope(&body, "v1", "Namespace", &raw, "");
    assert_int_equal(decode_err(body.data, body.len, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "metadata"));
    assert_non_null(strstr(e.msg, "64 bits"));
    buf_free(&body);
    /* the largest 10-byte varint is fine: generation = -1 */
    buf_init(&raw, 1 << 20);
    buf_init(&meta, 1 << 20);
    pb_uint(&meta, 7, UINT64_MAX);
    pb_msg(&raw, 1, &meta);
    envelope(&body, "v1", "Namespace", &raw, "");
    json_t *j = decode_ok(&body);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(j, "metadata"), "generation")), -1);
    json_decref(j);
    buf_free(&body);
}

static void test_groups_wiretypes_utf8(void **state)
{
    (void)state;
    struct err e;
    struct buf raw, meta, body;
    /* a group in raw */
    buf_init(&raw, 1 << 20);
    pb_tag(&raw, 9, 3);
    pb_tag(&raw, 9, 4);
    envelope(&body, "v1", "Namespace", &raw, "");
    assert_int_equal(decode_err(body.data, body.len, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "groups"));
    buf_free(&body);
    /* wire types 6 and 7 */
    buf_init(&raw, 1 << 20);
    pb_tag(&raw, 9, 7);
    envelope(&body, "v1", "Namespace", &raw, "");
    assert_int_equal(decode_err(body.data, body.len, &e), -EINVAL);
    buf_free(&body);
    /* known string field sent as a varint */
    buf_init(&raw, 1 << 20);
    buf_init(&meta, 1 << 20);
    pb_uint(&meta, 1, 5);
    pb_msg(&raw, 1, &meta);
    envelope(&body, "v1", "Namespace", &raw, "");
    assert_int_equal(decode_err(body.data, body.len, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "metadata.name"));
    assert_non_null(strstr(e.msg, "wire type"));
    buf_free(&body);
    /* invalid UTF-8 in a label value */
    buf_init(&raw, 1 << 20);
    buf_init(&meta, 1 << 20);
    pb_map(&meta, 11, "k", "\xc3\x28");
    pb_msg(&raw, 1, &meta);
    envelope(&body, "v1", "Namespace", &raw, "");
    assert_int_equal(decode_err(body.data, body.len, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "metadata.labels"));
    assert_non_null(strstr(e.msg, "UTF-8"));
    buf_free(&body);
    /* field number 0 */
    static const uint8_t zero[] = {'k', '8', 's', 0, 0x02, 0x00};
    assert_int_equal(decode_err(zero, sizeof(zero), &e), -EINVAL);
    assert_non_null(strstr(e.msg, "field number"));
    /* time out of range */
    struct buf ts;
    buf_init(&raw, 1 << 20);
    buf_init(&meta, 1 << 20);
    buf_init(&ts, 1 << 20);
    pb_uint(&ts, 1, (uint64_t)INT64_MAX);
    pb_msg(&meta, 8, &ts);
    pb_msg(&raw, 1, &meta);
    envelope(&body, "v1", "Namespace", &raw, "");
    assert_int_equal(decode_err(body.data, body.len, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "creationTimestamp"));
    buf_free(&body);
}

static void test_limits(void **state)
{
    (void)state;
    size_t len;
    char *pb = slurp(DATA "job.pb", &len);
    struct err e = {0};
    json_t *j = NULL;
    /* Job.spec.template.spec.containers[0].resources is 5 messages deep */
    struct kproto_limits lim = {.max_depth = 4};
    assert_int_equal(kproto_decode_ex(pb, len, &lim, &j, &e), -EINVAL);
    assert_null(j);
    assert_non_null(strstr(e.msg, "nested too deeply"));
    assert_non_null(strstr(e.msg, "spec.template.spec.containers[0].resources"));
    lim.max_depth = 5;
    assert_int_equal(kproto_decode_ex(pb, len, &lim, &j, &e), 0);
    json_decref(j);
    j = NULL;
    struct kproto_limits small = {.max_bytes = 64};
    assert_int_equal(kproto_decode_ex(pb, len, &small, &j, &e), -E2BIG);
    assert_null(j);
    free(pb);
    /* the default limit */
    char *huge = xcalloc(KPROTO_MAX_BYTES + 1, 1);
    memcpy(huge, "k8s", 4);
    assert_int_equal(decode_err(huge, KPROTO_MAX_BYTES + 1, &e), -E2BIG);
    assert_non_null(strstr(e.msg, "limit"));
    free(huge);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_object_meta),
        cmocka_unit_test(test_deployment_full),
        cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_unknown_kind_and_encoding),
        cmocka_unit_test(test_media_type),
        cmocka_unit_test(test_bad_magic_and_empty),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_varint_overflow),
        cmocka_unit_test(test_groups_wiretypes_utf8),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
