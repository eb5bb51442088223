/* Unit tests for pkg/json/jscan: the answers and the verdicts are jansson's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jscan.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"

/* jscan_rv on n bytes must agree with json_loadb + jx_resource_version (same verdict, same
 * string), and jscan_load with json_loadb (same verdict, same tree). Returns jscan_rv's rc. */
static int agree_at(const char *text, size_t n);

/* On a heap copy of exactly n bytes, so that ASan sees a scan that reads past them (the scan
 * reads eight bytes at a time). */
static int agree(const char *text, size_t n)
{
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, text, n);
    int rc = agree_at(copy, n);
    free(copy);
    return rc;
}

static int agree_at(const char *text, size_t n)
{
    json_error_t je;
    json_t *j = json_loadb(text, n, 0, &je);
    char *rv = (char *)"unset";
    struct err e;
    err_clear(&e);
    int rc = jscan_rv(text, n, &rv, &e);
    if (!j) {
        if (rc != -EBADMSG || rv)
            fail_msg("jansson rejects (%s) but jscan_rv returned %d for: %.*s", je.text, rc, (int)n,
                     text);
        assert_int_equal(e.code, -EBADMSG);
        assert_non_null(strstr(e.msg, "invalid JSON at byte"));
    } else {
        if (rc != 0)
            fail_msg("jansson accepts but jscan_rv failed (%s) for: %.*s", e.msg, (int)n, text);
        const char *want = jx_resource_version(j);
        if (!want != !rv || (want && strcmp(want, rv) != 0))
            fail_msg("resourceVersion: jansson \"%s\", jscan \"%s\" for: %.*s",
                     want ? want : "(none)", rv ? rv : "(none)", (int)n, text);
    }
    free(rv);
    /* jscan_load: the same verdict, and the same tree, keys in the same order */
    json_t *l = jscan_load(text, n, &e);
    if (!j != !l)
        fail_msg("jansson %s but jscan_load %s for: %.*s", j ? "accepts" : "rejects",
                 l ? "accepts" : "rejects", (int)n, text);
    if (j) {
        char *dj = json_dumps(j, JSON_COMPACT);
        char *dl = json_dumps(l, JSON_COMPACT);
        if (!json_equal(j, l) || strcmp(dj, dl) != 0)
            fail_msg("jscan_load gave %s where jansson gave %s", dl, dj);
        free(dj);
        free(dl);
    } else {
        assert_int_equal(e.code, -EBADMSG);
    }
    json_decref(l);
    json_decref(j);
    return rc;
}

static int agree_s(const char *text)
{
    return agree(text, strlen(text));
}

/* The value for text, which must be JSON; "(none)" when there is none. The caller frees. */
static char *rv_of(const char *text)
{
    assert_int_equal(agree_s(text), 0);
    char *rv;
    assert_int_equal(jscan_rv(text, strlen(text), &rv, NULL), 0);
    return rv ? rv : xstrdup("(none)");
}

static void assert_rv(const char *text, const char *want)
{
    char *got = rv_of(text);
    assert_string_equal(got, want);
    free(got);
}

static void test_found(void **state)
{
    (void)state;
    assert_rv("{\"metadata\":{\"resourceVersion\":\"42\"}}", "42");
    /* a real answer's shape: nested objects, arrays and every kind of value around it */
    assert_rv("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
              "\"labels\":{\"resourceVersion\":\"no\"},\"generation\":3,\"deletionGracePeriod"
              "Seconds\":null,\"finalizers\":[\"a\",\"b\"],\"resourceVersion\":\"1234\","
              "\"uid\":\"u\"},\"spec\":{\"parallelism\":-1.5e3,\"x\":[true,false,null,{}],"
              "\"metadata\":{\"resourceVersion\":\"inner\"}},\"status\":{}}",
              "1234");
    /* whitespace everywhere JSON allows it */
    assert_rv(" \t\r\n{ \"metadata\" : { \"resourceVersion\" : \"7\" } } \n", "7");
}

static void test_absent(void **state)
{
    (void)state;
    assert_rv("{}", "(none)");
    assert_rv("[]", "(none)");
    assert_rv("[{\"metadata\":{\"resourceVersion\":\"1\"}}]", "(none)"); /* not the top */
    assert_rv("{\"metadata\":{}}", "(none)");
    assert_rv("{\"metadata\":null}", "(none)");
    assert_rv("{\"metadata\":[{\"resourceVersion\":\"1\"}]}", "(none)");
    assert_rv("{\"metadata\":{\"resourceVersion\":12}}", "(none)"); /* not a string */
    assert_rv("{\"metadata\":{\"resourceVersion\":{\"a\":\"1\"}}}", "(none)");
    assert_rv("{\"metadata\":{\"labels\":{\"resourceVersion\":\"1\"}}}", "(none)");
    assert_rv("{\"spec\":{\"metadata\":{\"resourceVersion\":\"1\"}}}", "(none)");
    assert_rv("{\"resourceVersion\":\"1\"}", "(none)");
    assert_rv("{\"metadataX\":{\"resourceVersion\":\"1\"}}", "(none)");
    assert_rv("{\"metadata\":{\"resourceVersionX\":\"1\"}}", "(none)");
}

/* Duplicate keys: the last wins, as jansson keeps it. */
static void test_duplicates(void **state)
{
    (void)state;
    assert_rv("{\"metadata\":{\"resourceVersion\":\"1\",\"resourceVersion\":\"2\"}}", "2");
    assert_rv("{\"metadata\":{\"resourceVersion\":\"1\",\"resourceVersion\":3}}", "(none)");
    assert_rv("{\"metadata\":{\"resourceVersion\":\"1\"},\"metadata\":{}}", "(none)");
    assert_rv("{\"metadata\":{\"resourceVersion\":\"1\"},\"metadata\":{\"resourceVersion\":\"5\"}}",
              "5");
    assert_rv("{\"metadata\":{\"resourceVersion\":\"1\"},\"metadata\":\"x\"}", "(none)");
    assert_rv("{\"metadata\":5,\"metadata\":{\"resourceVersion\":\"9\"}}", "9");
}

/* Escapes are decoded, in keys (which then match) and in the value. */
static void test_escapes(void **state)
{
    (void)state;
    assert_rv("{\"metad\\u0061ta\":{\"resource\\u0056ersion\":\"1\"}}", "1");
    assert_rv("{\"metadata\":{\"resourceVersion\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\te\"}}",
              "a\"b\\c/d\b\f\n\r\te");
    assert_rv("{\"metadata\":{\"resourceVersion\":\"\\u00e9\\u20ac\\ud83d\\ude00\"}}",
              "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    assert_rv("{\"metadata\":{\"resourceVersion\":\"\xc3\xa9\xf0\x9f\x98\x80\"}}",
              "\xc3\xa9\xf0\x9f\x98\x80");
    assert_rv("{\"metadata\":{\"resourceVersion\":\"\"}}", "");
    /* a long key that starts like the one looked for */
    assert_rv("{\"metadata\":{\"resourceVersionresourceVersion\":\"1\"}}", "(none)");
}

/* Every byte value inside a string, after plain bytes and before more of them (the scan's
 * fast loop over plain bytes must stop at exactly the bytes jansson treats specially), in a
 * value and in a key: the same verdict and tree as jansson. */
static void test_every_byte_in_strings(void **state)
{
    (void)state;
    for (int b = 1; b < 256; b++) {
        char t[128];
        int n = snprintf(t, sizeof t, "{\"metadata\":{\"resourceVersion\":\"ab%cd\"}}", b);
        assert_true(n > 0 && (size_t)n < sizeof t);
        agree(t, (size_t)n);
        n = snprintf(t, sizeof t, "{\"k%cey\":\"x\",\"v\":[\"%c\",\"pq%c\"]}", b, b, b);
        assert_true(n > 0 && (size_t)n < sizeof t);
        agree(t, (size_t)n);
    }
    /* the scan reads plain bytes eight at a time: every byte value at every offset of a long
     * run, so that it falls at each place of a word and in the tail after the last word */
    for (int b = 1; b < 256; b += b < 0x24 || (b > 0x5a && b < 0x5e) || b > 0x7d ? 1 : 7) {
        for (int at = 0; at < 19; at++) {
            char v[20], t[96];
            memset(v, 'a', sizeof v - 1);
            v[sizeof v - 1] = '\0';
            v[at] = (char)b;
            int n =
                snprintf(t, sizeof t, "{\"metadata\":{\"resourceVersion\":\"%s\"},\"%s\":1}", v, v);
            assert_true(n > 0 && (size_t)n < sizeof t);
            agree(t, (size_t)n);
        }
    }
    /* input that ends inside a string of plain bytes, at every length of the last word */
    for (size_t cut = 1; cut < 24; cut++) {
        const char *t = "{\"metadata\":{\"resourceVersion\":\"abcdefghijklmnopqrstuvwxyz";
        agree(t, strlen(t) - 24 + cut);
    }
    /* a 2-byte UTF-8 sequence and an escape right after a run of plain bytes */
    agree_s("{\"metadata\":{\"resourceVersion\":\"abcdefgh\xc3\xa9xyz\\u0041\\n!\"}}");
}

/* What jansson rejects is rejected, with a message; nothing is returned. */
static void test_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "   ",
        "\"top\"",
        "12",
        "null",
        "{",
        "[",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "[1,]",
        "[1 2]",
        "{\"a\" 1}",
        "{1:2}",
        "{}x",
        "{} {}",
        "[01]",
        "[-]",
        "[1.]",
        "[.5]",
        "[1e]",
        "[1e+]",
        "[+1]",
        "[tru]",
        "[truex]",
        "[nul]",
        "[True]",
        "[\"a]",
        "[\"a\\x\"]",
        "[\"\\u12\"]",
        "[\"\\u12G4\"]",
        "[\"\\u0000\"]",
        "[\"\\ud800\"]",
        "[\"\\ud800x\"]",
        "[\"\\ud800\\u0041\"]",
        "[\"\\udc00\"]",
        "[\"tab\there\"]",
        "[\"\xff\"]",
        "[\"\xc0\x80\"]",
        "[\"\xe0\x80\x80\"]",
        "[\"\xed\xa0\x80\"]",
        "[\"\xf4\x90\x80\x80\"]",
        "[\"\xc3\"]",
        "[9223372036854775808]",
        "[-9223372036854775809]",
        "[1e400]",
        "[-1e400]",
        "{\"metadata\":{\"resourceVersion\":\"1\"}",
        "{\"metadata\":{\"resourceVersion\":\"1\"}}]",
        "{\"metadata\":{\"resourceVersion\":\"1\",}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(agree_s(bad[i]), -EBADMSG);
    /* a NUL byte, in a string and outside */
    assert_int_equal(agree("[\"a\0b\"]", 6), -EBADMSG);
    assert_int_equal(agree("{}\0", 3), -EBADMSG);
    assert_int_equal(agree("[1\0\0]", 5), -EBADMSG);
    /* jansson's quirk, kept: one NUL right after a number or a literal is skipped */
    assert_int_equal(agree("[11\0,true\0]", 11), 0);
    /* and what sits right at the limits is accepted */
    assert_int_equal(agree_s("[9223372036854775807,-9223372036854775808,1e-400,-0,0.5e+1]"), 0);
    assert_int_equal(agree_s("[\"\x7f\xf4\x8f\xbf\xbf\"]"), 0);
}

/* Nesting: jansson's depth limit exactly, without recursion (no stack to exhaust). */
static void test_depth(void **state)
{
    (void)state;
    for (int depth = JSCAN_MAX_DEPTH - 2; depth <= JSCAN_MAX_DEPTH + 1; depth++) {
        for (int inner = 0; inner < 3; inner++) {
            size_t n = (size_t)depth * 2 + 4;
            char *t = xmalloc(n + 1);
            size_t k = 0;
            for (int i = 0; i < depth; i++)
                t[k++] = inner == 2 ? '{' : '[';
            if (inner == 1)
                t[k++] = '1';
            if (inner == 2) { /* objects all the way: {"":{"":...}} needs keys */
                k = 0;
                free(t);
                t = xmalloc((size_t)depth * 6 + 4);
                for (int i = 0; i < depth - 1; i++) {
                    memcpy(t + k, "{\"\":", 4);
                    k += 4;
                }
                t[k++] = '{';
                for (int i = 0; i < depth; i++)
                    t[k++] = '}';
                agree(t, k);
                free(t);
                continue;
            }
            for (int i = 0; i < depth; i++)
                t[k++] = inner == 2 ? '}' : ']';
            agree(t, k);
            free(t);
        }
    }
    /* far deeper than any stack would take, rejected */
    size_t n = 1000000;
    char *t = xmalloc(n);
    memset(t, '[', n);
    assert_int_equal(agree(t, n), -EBADMSG);
    free(t);
}

/* jscan_load builds jansson's tree: types, key order, duplicates, escaped keys; and frees what
 * it built when the text breaks off anywhere (ASan checks the leaks). */
static void test_load(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{\"a\":1,\"b\":2,\"a\":{\"x\":[1,2.5,-0,-0.0,1e2,\"s\\n\",true,false,null,[],{}]}}",
        "{\"k\\u00e9y\":\"v\",\"k\\\"\":{\"\":\"\"},\"z\":\"\\ud83d\\ude00\"}",
        "[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":"
        "{\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
        "{\"cpu\":\"100m\"}}}]}}]",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{\"deep\":1}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
        "]]]]]]]"
        "]]]]]]]]]]]",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        size_t n = strlen(docs[i]);
        assert_int_equal(agree(docs[i], n), 0);
        for (size_t cut = 0; cut < n; cut++)
            agree(docs[i], cut); /* every prefix: the same verdict, nothing leaked */
    }
    json_t *j = jscan_load("{\"n\":9223372036854775807,\"r\":0.5}", 33, NULL);
    assert_non_null(j);
    assert_true(json_is_integer(json_object_get(j, "n")));
    assert_true(json_integer_value(json_object_get(j, "n")) == 9223372036854775807LL);
    assert_true(json_is_real(json_object_get(j, "r")));
    json_decref(j);
    struct err e;
    assert_null(jscan_load("{\"a\":1,}", 8, &e));
    assert_int_equal(e.code, -EBADMSG);
    assert_string_equal(e.msg, "invalid JSON at byte 7: string or '}' expected");
}

/* ---- jscan_walk ---- */

/* A sink writing what it is told as compact text, skipping members named "skip". */
struct rec {
    char out[512];
    size_t n;
    int fail_at; /* > 0: the fail_at-th callback returns -EIO */
    int calls;
};

static int rec_put(struct rec *r, const char *fmt, const char *s, size_t n)
{
    if (r->fail_at && ++r->calls == r->fail_at)
        return -EIO;
    r->n += (size_t)snprintf(r->out + r->n, sizeof r->out - r->n, fmt, (int)n, s);
    return 0;
}
static int rec_open(void *ud, bool obj)
{
    return rec_put(ud, "%.*s", obj ? "{" : "[", 1);
}
static int rec_close(void *ud, bool obj)
{
    return rec_put(ud, "%.*s", obj ? "}" : "]", 1);
}
static int rec_key(void *ud, const char *k, size_t n)
{
    if (n == 4 && memcmp(k, "skip", 4) == 0)
        return 1;
    return rec_put(ud, "%.*s:", k, n);
}
static int rec_str(void *ud, const char *v, size_t n)
{
    return rec_put(ud, "'%.*s' ", v, n);
}
static int rec_int(void *ud, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld ", v);
    return rec_put(ud, "%.*s", b, strlen(b));
}
static int rec_real(void *ud, double v)
{
    char b[32];
    snprintf(b, sizeof b, "%g ", v);
    return rec_put(ud, "%.*s", b, strlen(b));
}
static int rec_lit(void *ud, char w)
{
    return rec_put(ud, "%.*s ", &w, 1);
}
static const struct jscan_sink rsink = {rec_open, rec_close, rec_key, rec_str,
                                        rec_int,  rec_real,  rec_lit};

/* Values in order, escapes decoded; a skipped member reports nothing of itself however deep,
 * and the walk goes on after it; it is still checked; a callback's error stops the walk. */
static void test_walk(void **state)
{
    (void)state;
    struct rec r = {0};
    const char *t = "{\"a\":[1,2.5,true,null,\"x\\ny\"],\"skip\":{\"b\":[{\"c\":1}],\"d\":\"e\"},"
                    "\"f\\u0041\":{\"skip\":3,\"g\":false,\"skip\":[]},\"h\":[]}";
    assert_int_equal(jscan_walk(t, strlen(t), &rsink, &r, NULL), 0);
    assert_string_equal(r.out, "{a:[1 2.5 t n 'x\ny' ]fA:{g:f }h:[]}");

    struct err e;
    err_clear(&e);
    memset(&r, 0, sizeof r);
    const char *bad = "{\"skip\":{\"b\":[1,]},\"h\":1}"; /* invalid inside the skipped member */
    assert_int_equal(jscan_walk(bad, strlen(bad), &rsink, &r, &e), -EBADMSG);
    assert_non_null(strstr(e.msg, "invalid JSON at byte 16"));

    memset(&r, 0, sizeof r);
    r.fail_at = 3; /* { a: [ */
    assert_int_equal(jscan_walk(t, strlen(t), &rsink, &r, NULL), -EIO);
    assert_string_equal(r.out, "{a:");
}

/* ---- jscan_load_paths ---- */

static void expect_paths(const char *text, const char *const *paths, const char *want)
{
    struct err e;
    err_clear(&e);
    json_t *j = jscan_load_paths(text, strlen(text), paths, &e);
    assert_non_null(j);
    char *d = json_dumps(j, JSON_COMPACT);
    assert_string_equal(d, want);
    free(d);
    json_decref(j);
}

/* Only the named members are built: a last segment whole, the way to it filtered, arrays
 * transparent, scalars on the way kept; the text is checked whole; bad paths are refused. */
static void test_load_paths(void **state)
{
    (void)state;
    static const char *const pod[] = {"metadata.name", "spec.containers.resources", "status.phase",
                                      NULL};
    const char *t = "{\"metadata\":{\"name\":\"p\",\"managedFields\":[{\"a\":1}],\"uid\":\"u\"},"
                    "\"spec\":{\"volumes\":[{}],\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                    "\"resources\":{\"requests\":{\"cpu\":\"1\"}}},{\"name\":\"d\"}],"
                    "\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\",\"podIP\":\"1\"}}";
    expect_paths(t, pod,
                 "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":"
                 "{\"requests\":{\"cpu\":\"1\"}}},{}]},\"status\":{\"phase\":\"Running\"}}");
    /* a scalar where the path goes on is kept; an array at the top is transparent */
    static const char *const deep[] = {"a.b.c", NULL};
    expect_paths("{\"a\":{\"b\":5,\"x\":1},\"z\":2}", deep, "{\"a\":{\"b\":5}}");
    expect_paths("[{\"a\":{\"b\":{\"c\":[1],\"d\":2}}},3]", deep,
                 "[{\"a\":{\"b\":{\"c\":[1]}}},3]");
    /* no paths kept: an empty object; NULL paths: everything */
    static const char *const none[] = {NULL};
    expect_paths("{\"a\":1}", none, "{}");
    expect_paths("{\"a\":1,\"b\":[true]}", NULL, "{\"a\":1,\"b\":[true]}");
    /* a duplicate key: the last wins, as in jscan_load */
    static const char *const a[] = {"a", NULL};
    expect_paths("{\"a\":1,\"b\":0,\"a\":{\"x\":2}}", a, "{\"a\":{\"x\":2}}");

    /* deeper than the loader's first stacks: 40 arrays on a path's way */
    char deepin[256], deepout[256];
    int k = snprintf(deepin, sizeof deepin, "{\"b\":0,\"a\":");
    int m = snprintf(deepout, sizeof deepout, "{\"a\":");
    for (int i = 0; i < 40; i++) {
        deepin[k++] = '[';
        deepout[m++] = '[';
    }
    k += snprintf(deepin + k, sizeof deepin - (size_t)k, "{\"x\":1,\"y\":2}");
    m += snprintf(deepout + m, sizeof deepout - (size_t)m, "{\"x\":1}");
    for (int i = 0; i < 40; i++) {
        deepin[k++] = ']';
        deepout[m++] = ']';
    }
    snprintf(deepin + k, sizeof deepin - (size_t)k, "}");
    snprintf(deepout + m, sizeof deepout - (size_t)m, "}");
    static const char *const ax[] = {"a.x", NULL};
    expect_paths(deepin, ax, deepout);

    struct err e;
    err_clear(&e);
    const char *bad = "{\"skip\":[1,],\"a\":1}"; /* invalid in a member not kept */
    assert_null(jscan_load_paths(bad, strlen(bad), a, &e));
    assert_int_equal(e.code, -EBADMSG);
    static const char *const empty_seg[] = {"a..b", NULL};
    assert_int_equal(jscan_paths_check(empty_seg, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "empty segment"));
    assert_null(jscan_load_paths("{}", 2, empty_seg, &e));
    static const char *const too_deep[] = {"a.b.c.d.e.f.g.h.i", NULL};
    assert_int_equal(jscan_paths_check(too_deep, &e), -EINVAL);
    assert_int_equal(jscan_paths_check(pod, &e), 0);
    assert_int_equal(jscan_paths_check(NULL, &e), 0);
    const char *many[JSCAN_PATHS_MAX + 2];
    for (int i = 0; i <= JSCAN_PATHS_MAX; i++)
        many[i] = "a";
    many[JSCAN_PATHS_MAX + 1] = NULL;
    assert_int_equal(jscan_paths_check(many, &e), -EINVAL);
    many[JSCAN_PATHS_MAX] = NULL; /* exactly the limit */
    assert_int_equal(jscan_paths_check(many, &e), 0);
    expect_paths("{\"a\":1,\"b\":2}", many, "{\"a\":1}");
}

/* jscan_rv_head on text (its strlen): rc, and the resourceVersion or "(none)". */
static int rv_head(const char *text, char *out, size_t cap)
{
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1); /* exactly n bytes: ASan sees a read past them */
    assert_non_null(copy);
    memcpy(copy, text, n);
    char *rv = (char *)"unset";
    struct err e;
    err_clear(&e);
    int rc = jscan_rv_head(copy, n, &rv, &e);
    free(copy);
    if (rc < 0) {
        assert_null(rv);
        assert_non_null(strstr(e.msg, "invalid JSON at byte"));
    }
    snprintf(out, cap, "%s", rv ? rv : "(none)");
    free(rv);
    return rc;
}

static json_t *load_head(const char *text, const char *const *paths, struct err *e)
{
    struct jscan_paths *ps = NULL;
    assert_int_equal(jscan_paths_new(paths, &ps, e), 0);
    json_t *j = jscan_load_head(text, strlen(text), ps, e);
    jscan_paths_free(ps);
    return j;
}

static void expect_head(const char *text, const char *const *paths, const char *want)
{
    struct err e;
    err_clear(&e);
    json_t *j = load_head(text, paths, &e);
    if (!j)
        fail_msg("jscan_load_head refused (%s): %s", e.msg, text);
    char *d = json_dumps(j, JSON_COMPACT);
    assert_string_equal(d, want);
    free(d);
    json_decref(j);
}

/* The head scans of a write's answer: the text up to the resourceVersion (jscan_rv_head) or to
 * the top-level key after the paths' members (jscan_load_head) is read and checked, the rest
 * is not; where it has to read all of it, all of it is checked. */
static void test_head(void **state)
{
    (void)state;
    char rv[32];
    /* found before invalid text; a labels key of that name and a nested metadata do not count */
    assert_int_equal(
        rv_head("{\"spec\":{\"metadata\":{\"resourceVersion\":\"inner\"}},\"metadata\":{"
                "\"labels\":{\"resourceVersion\":\"no\"},\"resourceVersion\":\"41\\u0032\"},"
                "\"status\":[}",
                rv, sizeof rv),
        0);
    assert_string_equal(rv, "412");
    /* the first of two wins (jscan_rv: the last); the text may end right after it */
    assert_int_equal(rv_head("{\"metadata\":{\"resourceVersion\":\"1\",\"resourceVersion\":\"2\"}}",
                             rv, sizeof rv),
                     0);
    assert_string_equal(rv, "1");
    assert_int_equal(rv_head("{\"metadata\":{\"resourceVersion\":\"9\"", rv, sizeof rv), 0);
    assert_string_equal(rv, "9");
    /* invalid before it, cut inside it, or no string resourceVersion and invalid later */
    assert_int_equal(
        rv_head("{\"metadata\":{\"name\":w,\"resourceVersion\":\"1\"}}", rv, sizeof rv), -EBADMSG);
    assert_int_equal(rv_head("{\"metadata\":{\"resourceVersion\":\"12", rv, sizeof rv), -EBADMSG);
    assert_int_equal(rv_head("{\"metadata\":{\"resourceVersion\":5}} x", rv, sizeof rv), -EBADMSG);
    assert_int_equal(rv_head("{\"metadata\":{\"resourceVersion\":5}}", rv, sizeof rv), 0);
    assert_string_equal(rv, "(none)");
    assert_int_equal(rv_head("[{\"metadata\":{\"resourceVersion\":\"3\"}}]", rv, sizeof rv), 0);
    assert_string_equal(rv, "(none)");

    static const char *const meta[] = {"metadata.labels", "metadata.annotations", NULL};
    expect_head("{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"1\"},"
                "\"annotations\":{\"b\":\"2\"}},\"spec\":[} trailing",
                meta, "{\"metadata\":{\"labels\":{\"a\":\"1\"},\"annotations\":{\"b\":\"2\"}}}");
    /* metadata last, or absent: everything is read and checked */
    expect_head("{\"spec\":{\"x\":1},\"metadata\":{\"labels\":{}}}", meta,
                "{\"metadata\":{\"labels\":{}}}");
    expect_head("{\"a\":1}", meta, "{}");
    struct err e;
    err_clear(&e);
    assert_null(load_head("{\"spec\":{},\"metadata\":{\"labels\":{}}} x", meta, &e));
    assert_int_equal(e.code, -EBADMSG);
    assert_null(load_head("{\"metadata\":{\"labels\":{\"a\":}},\"spec\":{}}", meta, &e));
    assert_int_equal(e.code, -EBADMSG);
    /* two top-level members: it ends after the later one; the first of a duplicate wins */
    static const char *const ac[] = {"a", "c.d", NULL};
    expect_head("{\"a\":1,\"b\":2,\"c\":{\"d\":3,\"e\":4},\"z\":[}", ac,
                "{\"a\":1,\"c\":{\"d\":3}}");
    expect_head("{\"c\":{\"d\":3},\"a\":1,\"a\":2}", ac, "{\"c\":{\"d\":3},\"a\":1}");
    /* a key named as a path's first segment counts only at the top level */
    expect_head("{\"c\":{\"a\":1},\"b\":2,\"a\":5}", ac, "{\"c\":{},\"a\":5}");
}

static void expect_drop(const char *text, const char *const *keep, const char *const *drop,
                        const char *want)
{
    struct err e;
    err_clear(&e);
    struct jscan_paths *ps = NULL;
    assert_int_equal(jscan_paths_new_drop(keep, drop, &ps, &e), 0);
    json_t *j = jscan_load_with(text, strlen(text), ps, &e);
    jscan_paths_free(ps);
    assert_non_null(j);
    char *d = json_dumps(j, JSON_COMPACT);
    assert_string_equal(d, want);
    free(d);
    json_decref(j);
}

/* Drop paths: the member at the path is left out, also inside a member kept whole; through
 * objects only, not inside arrays; a backslash makes a dot part of a segment; the text is
 * still checked whole. */
static void test_load_drop(void **state)
{
    (void)state;
    static const char *const lean[] = {
        "object.metadata.managedFields",
        "object.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration", NULL};
    const char *ev = "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\","
                     "\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:spec\":{}}}],"
                     "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":"
                     "\"{}\",\"kubectl\":{\"kubernetes\":1},\"x\":\"y\"}},\"spec\":{\"a\":[1]}}}";
    expect_drop(ev, NULL, lean,
                "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\","
                "\"annotations\":{\"kubectl\":{\"kubernetes\":1},\"x\":\"y\"}},"
                "\"spec\":{\"a\":[1]}}}");
    /* with keep paths: dropped inside a member kept whole */
    static const char *const keep[] = {"type", "object.metadata", NULL};
    expect_drop(ev, keep, lean,
                "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\","
                "\"annotations\":{\"kubectl\":{\"kubernetes\":1},\"x\":\"y\"}}}}");
    /* not inside arrays; a path that goes on through a scalar drops nothing */
    static const char *const ab[] = {"a.b", "c.d", NULL};
    expect_drop("{\"a\":[{\"b\":1,\"c\":2}],\"c\":3,\"x\":{\"a\":{\"b\":1}}}", NULL, ab,
                "{\"a\":[{\"b\":1,\"c\":2}],\"c\":3,\"x\":{\"a\":{\"b\":1}}}");
    expect_drop("{\"a\":{\"b\":[1],\"bb\":2}}", NULL, ab, "{\"a\":{\"bb\":2}}");
    /* a repeated key dropped wherever it is */
    expect_drop("{\"a\":{\"b\":1,\"b\":2,\"c\":3}}", NULL, ab, "{\"a\":{\"c\":3}}");
    /* no keep paths, no drop paths: no set (jscan_load) */
    struct jscan_paths *ps = (struct jscan_paths *)1;
    struct err e;
    err_clear(&e);
    assert_int_equal(jscan_paths_new_drop(NULL, NULL, &ps, &e), 0);
    assert_null(ps);
    /* still checked whole: invalid inside a dropped member */
    assert_int_equal(jscan_paths_new_drop(NULL, ab, &ps, &e), 0);
    const char *bad = "{\"a\":{\"b\":[1,]}}";
    assert_null(jscan_load_with(bad, strlen(bad), ps, &e));
    assert_int_equal(e.code, -EBADMSG);
    jscan_paths_free(ps);
    /* a backslash before a dot in a keep path too; bad drop paths are refused */
    static const char *const esc[] = {"a\\.b", NULL};
    expect_paths("{\"a.b\":1,\"a\":{\"b\":2}}", esc, "{\"a.b\":1}");
    /* an escaped backslash, then a dot that splits: key "a\\", member "b" */
    static const char *const bs[] = {"a\\\\.b", NULL};
    expect_paths("{\"a\\\\\":{\"b\":1,\"c\":2},\"a\":{\"b\":3}}", bs, "{\"a\\\\\":{\"b\":1}}");
    static const char *const trailing[] = {"a.b\\", NULL};
    assert_int_equal(jscan_paths_new_drop(NULL, trailing, &ps, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "backslash"));
    assert_int_equal(jscan_paths_check(trailing, &e), -EINVAL);
    static const char *const empty_seg[] = {"a.", NULL};
    assert_int_equal(jscan_paths_new_drop(NULL, empty_seg, &ps, &e), -EINVAL);
    assert_null(ps);
    assert_non_null(strstr(e.msg, "empty segment"));
}

int main(void)
{
    jx_use_xalloc();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found),      cmocka_unit_test(test_absent),
        cmocka_unit_test(test_duplicates), cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_rejects),    cmocka_unit_test(test_depth),
        cmocka_unit_test(test_load),       cmocka_unit_test(test_every_byte_in_strings),
        cmocka_unit_test(test_walk),       cmocka_unit_test(test_load_paths),
        cmocka_unit_test(test_load_drop),  cmocka_unit_test(test_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
