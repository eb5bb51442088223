/* Unit tests for devhub/protobuf: Kubernetes protobuf request bodies -> JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "devhub/protobuf.h"

/* A tiny protobuf writer for building test inputs. */
struct w {
    unsigned char b[4096];
    size_t n;
};

static void put_varint(struct w *w, unsigned long long v)
{
    do {
        unsigned char c = v & 0x7f;
        v >>= 7;
        w->b[w->n++] = (unsigned char)(c | (v ? 0x80 : 0));
    } while (v);
}

static void put_bytes(struct w *w, unsigned num, const void *p, size_t n)
{
    put_varint(w, (num << 3) | 2);
    put_varint(w, n);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void put_str(struct w *w, unsigned num, const char *s)
{
    put_bytes(w, num, s, strlen(s));
}

static void put_msg(struct w *w, unsigned num, const struct w *m)
{
    put_bytes(w, num, m->b, m->n);
}

static void put_entry(struct w *w, unsigned num, const char *k, const void *v, size_t vn)
{
    struct w e = {0};
    put_str(&e, 1, k);
    put_bytes(&e, 2, v, vn);
    put_msg(w, num, &e);
}

/* "k8s\0" + Unknown{typeMeta, raw}. */
static size_t envelope(unsigned char *out, const char *av, const char *kind, const struct w *raw)
{
    struct w tm = {0}, u = {0};
    put_str(&tm, 1, av);
    put_str(&tm, 2, kind);
    put_msg(&u, 1, &tm);
    put_msg(&u, 2, raw);
    put_str(&u, 4, "application/vnd.kubernetes.protobuf");
    memcpy(out, "k8s\0", 4);
    memcpy(out + 4, u.b, u.n);
    return u.n + 4;
}

static const char *S(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_string_value(v) ? json_string_value(v) : "";
}

static void test_configmap(void **state)
{
    (void)state;
    struct w md = {0}, raw = {0}, ref = {0};
    put_str(&md, 1, "cm1");
    put_str(&md, 3, "foo");
    put_entry(&md, 11, "app", "demo", 4);
    put_entry(&md, 11, "tier", "x", 1);
    put_str(&md, 14, "a/b");
    put_str(&ref, 1, "Job");
    put_str(&ref, 3, "j");
    put_str(&ref, 4, "u-1");
    put_varint(&ref, (6 << 3) | 0);
    put_varint(&ref, 1);
    put_msg(&md, 13, &ref);
    put_varint(&md, (99 << 3) | 0); /* unknown field: skipped */
    put_varint(&md, 12345);
    put_msg(&raw, 1, &md);
    put_entry(&raw, 2, "k", "v", 1);
    put_entry(&raw, 3, "bin", "\x00\x01\x02", 3);
    put_varint(&raw, (4 << 3) | 0);
    put_varint(&raw, 1);
    unsigned char buf[8192];
    size_t n = envelope(buf, "v1", "ConfigMap", &raw);
    struct err e = {0};
    json_t *o = pb_decode_object(buf, n, &e);
    assert_non_null(o);
    assert_string_equal(S(o, "apiVersion", NULL), "v1");
    assert_string_equal(S(o, "kind", NULL), "ConfigMap");
    json_t *m = json_object_get(o, "metadata");
    assert_string_equal(S(m, "name", NULL), "cm1");
    assert_string_equal(S(m, "namespace", NULL), "foo");
    assert_string_equal(S(m, "labels", "app"), "demo");
    assert_string_equal(S(m, "labels", "tier"), "x");
    assert_string_equal(json_string_value(json_array_get(json_object_get(m, "finalizers"), 0)),
                        "a/b");
    json_t *r = json_array_get(json_object_get(m, "ownerReferences"), 0);
    assert_string_equal(S(r, "uid", NULL), "u-1");
    assert_true(json_is_true(json_object_get(r, "controller")));
    assert_string_equal(S(o, "data", "k"), "v");
    assert_string_equal(S(o, "binaryData", "bin"), "AAEC");
    assert_true(json_is_true(json_object_get(o, "immutable")));
    json_decref(o);
}

static void test_kinds_and_errors(void **state)
{
    (void)state;
    struct w md = {0}, raw = {0}, spec = {0}, ra = {0};
    unsigned char buf[8192];
    struct err e = {0};
    put_str(&md, 1, "ns1");
    put_msg(&raw, 1, &md);
    size_t n = envelope(buf, "v1", "Namespace", &raw);
    json_t *o = pb_decode_object(buf, n, &e);
    assert_string_equal(S(o, "metadata", "name"), "ns1");
    json_decref(o);

    put_str(&ra, 2, "create");
    put_str(&ra, 5, "pods");
    put_msg(&spec, 1, &ra);
    raw.n = 0;
    put_msg(&raw, 2, &spec);
    n = envelope(buf, "authorization.k8s.io/v1", "SelfSubjectAccessReview", &raw);
    o = pb_decode_object(buf, n, &e);
    assert_string_equal(S(json_object_get(o, "spec"), "resourceAttributes", "verb"), "create");
    json_decref(o);

    /* A kind the decoder does not know: a clear 415-style error. */
    n = envelope(buf, "apps/v1", "Deployment", &raw);
    assert_null(pb_decode_object(buf, n, &e));
    assert_int_equal(e.code, -EPROTONOSUPPORT);
    assert_non_null(strstr(e.msg, "apps/v1 Deployment"));

    /* Malformed: bad magic, truncation at every length, bad UTF-8, deep nesting. */
    assert_null(pb_decode_object((const unsigned char *)"{}", 2, &e));
    assert_int_equal(e.code, -EBADMSG);
    n = envelope(buf, "v1", "Namespace", &raw);
    for (size_t cut = 5; cut < n; cut++) {
        json_t *x = pb_decode_object(buf, cut, &e);
        json_decref(x); /* may decode a prefix or fail, never crash */
    }
    struct w bad = {0};
    put_str(&bad, 1, "\xff\xfe");
    raw.n = 0;
    put_msg(&raw, 1, &bad);
    n = envelope(buf, "v1", "Namespace", &raw);
    assert_null(pb_decode_object(buf, n, &e));
    assert_int_equal(e.code, -EBADMSG);
    const unsigned char trunc[] = {'k', '8', 's', 0, 0x12, 0x7f, 0x01};
    assert_null(pb_decode_object(trunc, sizeof(trunc), &e));
    assert_true(pb_is_protobuf("application/vnd.kubernetes.protobuf"));
    assert_false(pb_is_protobuf("application/json"));
    assert_false(pb_is_protobuf(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configmap),
        cmocka_unit_test(test_kinds_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
