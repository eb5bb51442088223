/* Unit tests for pkg/json/jpack: exact round trips, the intern table's references, and
 * decoding hostile bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pkg/json/jpack.h"
#include "pkg/json/jscan.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"

/* Uids and timestamps in their canonical forms are packed as numbers and come back as the
 * same text; every other string of those lengths stays text. */
static void test_uids_and_times(void **state)
{
    (void)state;
    struct jpack_tab *t = jpack_tab_new();
    static const struct {
        const char *text;
        bool shaped; /* packed as a number */
    } cases[] = {
        {"027b6140-ca2c-4f81-90e0-b96b17951b22", true}, /* a uid */
        {"00000000-0000-0000-0000-000000000000", true},
        {"ffffffff-ffff-ffff-ffff-ffffffffffff", true},
        {"027B6140-CA2C-4F81-90E0-B96B17951B22", false}, /* uppercase */
        {"027b6140-ca2c-4f81-90e0-b96b17951b2g", false}, /* not hex */
        {"027b6140ca2c-4f81-90e0-b96b17951b22-", false}, /* dashes elsewhere */
        {"2026-11-28T16:41:39Z", true},                  /* a timestamp */
        {"1970-01-01T00:00:00Z", true},
        {"1969-12-31T23:59:59Z", true}, /* before the epoch */
        {"0000-01-01T00:00:00Z", true},
        {"0000-02-29T00:00:00Z", true}, /* year 0 is a leap year */
        {"9999-12-31T23:59:59Z", true},
        {"2024-02-29T12:00:00Z", true},  /* a leap day */
        {"2000-02-29T12:00:00Z", true},  /* every 400 years */
        {"1900-02-29T12:00:00Z", false}, /* no leap day in 1900, 2100: text */
        {"2100-02-29T12:00:00Z", false},
        {"2025-02-29T12:00:00Z", false},
        {"2026-11-31T00:00:00Z", false},
        {"2026-11-28T23:59:60Z", false}, /* a leap second */
        {"2026-11-28T24:00:00Z", false},
        {"2026-13-01T00:00:00Z", false},
        {"2026-00-01T00:00:00Z", false},
        {"2026-11-00T00:00:00Z", false},
        {"2026-11-28t16:41:39Z", false},
        {"2026-11-28T16:41:39z", false},
        {"2026-11-28T16:41:39+", false},
        {"2026-11-28 16:41:39Z", false},
        {"2026-11-28T16:41:39.123Z", false}, /* fractions */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *text = cases[i].text;
        json_t *o = json_pack("{s:s}", "v", text);
        uint8_t *p;
        size_t n = jpack_encode(t, o, &p);
        assert_true(n > 0);
        json_t *back = jpack_decode(t, p, n);
        assert_non_null(back);
        assert_string_equal(json_string_value(json_object_get(back, "v")), text);
        size_t sl = 0;
        char scratch[JPACK_SCRATCH];
        const char *got = jpack_get_str(t, p, n, (const char *const[]){"v", NULL}, &sl, scratch);
        assert_non_null(got);
        assert_int_equal(sl, strlen(text));
        assert_memory_equal(got, text, sl);
        bool shaped = cases[i].shaped;
        /* an object of one member: its tag, the key's id, then the value: as text its tag, a
         * length byte past 14, the bytes */
        size_t as_text = 3 + (strlen(text) >= 15) + strlen(text);
        if (shaped) {
            assert_true(n + 15 <= as_text); /* 17 bytes for 38; 22 for 6 to 7 */
        } else { /* a string: inline (type 5) or interned (type 6), never shaped */
            assert_true((p[2] & 15) == 5 || (p[2] & 15) == 6);
            assert_true(n == as_text || (p[2] & 15) == 6);
        }
        json_decref(back);
        json_decref(o);
        jpack_release(t, p, n);
        free(p);
    }
    assert_int_equal(jpack_tab_len(t), 0);
    /* every date libc formats, 1900 to 2100, is packed as a number and comes back */
    for (long long secs = -2208988800LL; secs < 4102444800LL; secs += 86400LL * 5 + 3607) {
        time_t tt = (time_t)secs;
        struct tm tm;
        char text[32];
        assert_non_null(gmtime_r(&tt, &tm));
        assert_int_equal(strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm), 20);
        json_t *o = json_pack("{s:s}", "v", text);
        uint8_t *p;
        size_t n = jpack_encode(t, o, &p);
        assert_int_equal(p[2] & 15, 10); /* the timestamp's type */
        json_t *back = jpack_decode(t, p, n);
        assert_string_equal(json_string_value(json_object_get(back, "v")), text);
        json_decref(back);
        json_decref(o);
        jpack_release(t, p, n);
        free(p);
    }
    /* out-of-range seconds and a uid cut short do not decode */
    uint8_t far[] = {0x17, 0, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    uint8_t shortuid[] = {0x17, 0, 0x09, 1, 2, 3};
    uint8_t uidarg[19] = {0x17, 0, 0x19}; /* a uid's tag with an argument: not one */
    json_t *k = json_pack("{s:i}", "v", 1);
    uint8_t *kp;
    size_t kn = jpack_encode(t, k, &kp); /* makes "v" id 0 */
    json_decref(k);
    assert_null(jpack_decode(t, far, sizeof far));
    assert_null(jpack_decode(t, shortuid, sizeof shortuid));
    assert_null(jpack_decode(t, uidarg, sizeof uidarg));
    uidarg[2] = 0x09;
    json_t *zero = jpack_decode(t, uidarg, sizeof uidarg); /* the same bytes, argument 0 */
    assert_non_null(zero);
    assert_string_equal(json_string_value(json_object_get(zero, "v")),
                        "00000000-0000-0000-0000-000000000000");
    json_decref(zero);
    jpack_release(t, kp, kn);
    free(kp);
    jpack_tab_free(t);
}

/* Pack v, unpack it, check it is equal (and for reals/integers of the same type), release. */
static void round_trip(struct jpack_tab *t, json_t *v, bool nul_key)
{
    uint8_t *p;
    size_t n = jpack_encode(t, v, &p);
    assert_non_null(p);
    assert_true(n > 0);
    json_t *back = jpack_decode(t, p, n);
    assert_non_null(back);
    if (!nul_key) /* json_equal looks keys up as C strings */
        assert_true(json_equal(v, back));
    char *a = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    char *b = json_dumps(back, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    assert_string_equal(a, b); /* member order and number types too */
    free(a);
    free(b);
    json_decref(back);
    jpack_release(t, p, n);
    free(p);
}

static void test_round_trip_edges(void **state)
{
    (void)state;
    struct jpack_tab *t = jpack_tab_new();
    const char *docs[] = {
        "null",
        "true",
        "false",
        "0",
        "-1",
        "9223372036854775807",
        "-9223372036854775808",
        "1.0",
        "-0.0",
        "1e308",
        "4.9e-324",
        "\"\"",
        "\"x\"",
        "{}",
        "[]",
        "[[],{},[{}],{\"a\":[]}]",
        "{\"z\":1,\"a\":2,\"m\":{\"b\":null,\"a\":true}}",
        "{\"uid\":\"0a1b2c3d-0a1b-0a1b-0a1b-0a1b2c3d4e5f\",\"t\":\"2026-11-26T20:47:13Z\","
        "\"rv\":\"123456\",\"name\":\"job-1\",\"nameAgain\":\"job-1\"}",
        "\"h\\u00e9llo \\u4e16\\u754c \\ud83d\\ude00\"",
        "{\"key\":\"v\\u0000al\",\"\":\"\"}",
        "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,-16,-15,-14,1000000]",
        NULL,
    };
    for (size_t i = 0; docs[i]; i++) {
        json_error_t err;
        json_t *v = json_loads(docs[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        assert_non_null(v);
        round_trip(t, v, false);
        json_decref(v);
    }
    /* a long string, many members (counts past the one-byte tag) */
    json_t *o = json_object();
    char buf[5000];
    memset(buf, 'q', sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    json_object_set_new(o, "long", json_string(buf));
    for (int i = 0; i < 300; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        json_object_set_new(o, k, json_integer(i * 1000003LL));
    }
    json_object_setn_new(o, "k\0ey", 4, json_stringn("v\0", 2)); /* NUL in a key (built) */
    round_trip(t, o, true);
    json_decref(o);
    assert_int_equal(jpack_tab_len(t), 0); /* every reference went back */
    jpack_tab_free(t);
}

/* Names are not interned: a name is unique to its object and the few that name it, where an
 * entry costs more than its bytes; its object's other strings still are. */
static void test_names_inline(void **state)
{
    (void)state;
    struct jpack_tab *t = jpack_tab_new();
    uint8_t *p[100];
    size_t n[100];
    for (int i = 0; i < 100; i++) {
        char name[32], owner[32];
        snprintf(name, sizeof name, "job-train-%d-abcde", i);
        snprintf(owner, sizeof owner, "train-%d", i);
        json_t *v = json_pack("{s:{s:s, s:s, s:[{s:s, s:s}]}, s:{s:s}}", "metadata", "name", name,
                              "namespace", "team-a", "ownerReferences", "kind", "Job", "name",
                              owner, "spec", "queueName", "user-queue");
        n[i] = jpack_encode(t, v, &p[i]);
        json_t *back = jpack_decode(t, p[i], n[i]);
        assert_true(json_equal(back, v));
        size_t sl;
        char scratch[JPACK_SCRATCH];
        const char *s = jpack_get_str(
            t, p[i], n[i], (const char *const[]){"metadata", "name", NULL}, &sl, scratch);
        assert_non_null(s);
        assert_int_equal(sl, strlen(name));
        assert_memory_equal(s, name, sl);
        json_decref(back);
        json_decref(v);
    }
    /* keys: metadata, name, namespace, ownerReferences, kind, spec, queueName; values: team-a,
     * Job, user-queue */
    assert_int_equal(jpack_tab_len(t), 10);
    for (int i = 0; i < 100; i++) {
        jpack_release(t, p[i], n[i]);
        free(p[i]);
    }
    assert_int_equal(jpack_tab_len(t), 0);
    jpack_tab_free(t);
}

static void test_intern_refcounts(void **state)
{
    (void)state;
    struct jpack_tab *t = jpack_tab_new();
    json_t *a = json_pack("{s:s,s:s}", "kind", "Job", "queue", "team-a");
    json_t *b = json_pack("{s:s,s:s}", "kind", "Job", "queue", "team-b");
    uint8_t *pa, *pb;
    size_t na = jpack_encode(t, a, &pa), nb = jpack_encode(t, b, &pb);
    /* kind, queue, Job shared; team-a, team-b */
    assert_int_equal(jpack_tab_len(t), 5);
    jpack_release(t, pa, na);
    free(pa);
    assert_int_equal(jpack_tab_len(t), 4); /* team-a went */
    json_t *back = jpack_decode(t, pb, nb);
    assert_true(json_equal(back, b));
    json_decref(back);
    size_t n;
    char scratch[JPACK_SCRATCH];
    const char *kind = jpack_get_str(t, pb, nb, (const char *const[]){"kind", NULL}, &n, scratch);
    assert_non_null(kind);
    assert_int_equal(n, 3);
    assert_memory_equal(kind, "Job", 3);
    assert_null(jpack_get_str(t, pb, nb, (const char *const[]){"nope", NULL}, &n, scratch));
    assert_null(jpack_get_str(t, pb, nb, (const char *const[]){"kind", "x", NULL}, &n, scratch));
    jpack_release(t, pb, nb);
    free(pb);
    assert_int_equal(jpack_tab_len(t), 0);
    /* many strings: the table grows, ids are reused after release */
    uint8_t *p[500];
    size_t len[500];
    for (int i = 0; i < 500; i++) {
        char s[32];
        snprintf(s, sizeof s, "name-%d", i);
        json_t *v = json_pack("{s:s}", "name", s);
        len[i] = jpack_encode(t, v, &p[i]);
        json_decref(v);
    }
    assert_int_equal(jpack_tab_len(t), 501);
    for (int i = 0; i < 500; i += 2) {
        jpack_release(t, p[i], len[i]);
        free(p[i]);
    }
    for (int i = 1; i < 500; i += 2) {
        json_t *v = jpack_decode(t, p[i], len[i]);
        char s[32];
        snprintf(s, sizeof s, "name-%d", i);
        assert_string_equal(json_string_value(json_object_get(v, "name")), s);
        json_decref(v);
        jpack_release(t, p[i], len[i]);
        free(p[i]);
    }
    assert_int_equal(jpack_tab_len(t), 0);
    json_decref(a);
    json_decref(b);
    jpack_tab_free(t);
}

/* A string over 64 bytes stays inline the first time and is interned when it repeats (kept
 * while any packed value refers to it). */
static void test_long_strings(void **state)
{
    (void)state;
    struct jpack_tab *t = jpack_tab_new();
    const char *msg = "placed on cluster cluster1 (spread, the most free wins: 90.2 percent of "
                      "its capacity free after placement)";
    json_t *v = json_pack("{s:s}", "message", msg);
    uint8_t *p[3];
    size_t n[3];
    n[0] = jpack_encode(t, v, &p[0]);
    assert_int_equal(jpack_tab_len(t), 1); /* the key alone: the message once is inline */
    n[1] = jpack_encode(t, v, &p[1]);
    assert_int_equal(jpack_tab_len(t), 2); /* seen again: interned */
    assert_true(n[1] < n[0]);
    n[2] = jpack_encode(t, v, &p[2]);
    assert_int_equal(n[2], n[1]);
    assert_int_equal(jpack_tab_len(t), 2);
    for (int i = 0; i < 3; i++) {
        json_t *back = jpack_decode(t, p[i], n[i]);
        assert_true(json_equal(back, v));
        json_decref(back);
        size_t sn = 0;
        char scratch[JPACK_SCRATCH];
        const char *m =
            jpack_get_str(t, p[i], n[i], (const char *const[]){"message", NULL}, &sn, scratch);
        assert_int_equal(sn, strlen(msg));
        assert_memory_equal(m, msg, sn);
    }
    jpack_release(t, p[1], n[1]);
    free(p[1]);
    assert_int_equal(jpack_tab_len(t), 2); /* p[2] still refers to it */
    jpack_release(t, p[2], n[2]);
    free(p[2]);
    assert_int_equal(jpack_tab_len(t), 1);
    jpack_release(t, p[0], n[0]);
    free(p[0]);
    assert_int_equal(jpack_tab_len(t), 0);
    json_decref(v);
    jpack_tab_free(t);
}

static void test_hostile_bytes(void **state)
{
    (void)state;
    struct jpack_tab *t = jpack_tab_new();
    json_t *v = json_loads("{\"metadata\":{\"name\":\"a-name\",\"labels\":{\"x\":\"why\"}},"
                           "\"spec\":[1,2.5,\"s\",null,true]}",
                           0, NULL);
    uint8_t *p;
    size_t n = jpack_encode(t, v, &p);
    size_t before = jpack_tab_len(t);
    /* every truncation fails cleanly */
    for (size_t i = 0; i < n; i++)
        assert_null(jpack_decode(t, p, i));
    /* every single-byte corruption decodes to something or nothing, never crashes */
    for (size_t i = 0; i < n; i++) {
        for (int b = 0; b < 256; b += 7) {
            uint8_t *q = malloc(n);
            memcpy(q, p, n);
            q[i] = (uint8_t)b;
            json_decref(jpack_decode(t, q, n));
            size_t sl;
            char scratch[JPACK_SCRATCH];
            jpack_get_str(t, q, n, (const char *const[]){"metadata", "name", NULL}, &sl, scratch);
            free(q);
        }
    }
    /* huge counts, unknown ids, runaway varints, deep nesting */
    const uint8_t bad[][12] = {
        {0xf7, 0xff, 0xff, 0xff, 0xff, 0x0f},
        {0xf6, 0xff, 0xff, 0x7f},
        {0x13, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
        {0x0f},
        {0x04, 1, 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_null(jpack_decode(t, bad[i], sizeof bad[i]));
    uint8_t deep[4000];
    for (size_t i = 0; i < sizeof deep; i++)
        deep[i] = 0x18; /* array of 1 */
    assert_null(jpack_decode(t, deep, sizeof deep));
    jpack_release(t, deep, sizeof deep); /* no interned string in it: releases nothing */
    assert_int_equal(jpack_tab_len(t), before);
    /* too deep to encode: nothing kept */
    json_t *d = json_string("leaf-string");
    for (int i = 0; i < JPACK_MAX_DEPTH + 5; i++)
        d = json_pack("{s:o}", "child", d);
    uint8_t *dp;
    assert_int_equal(jpack_encode(t, d, &dp), 0);
    assert_null(dp);
    assert_int_equal(jpack_tab_len(t), before);
    json_decref(d);
    jpack_release(t, p, n);
    free(p);
    assert_int_equal(jpack_tab_len(t), 0);
    json_decref(v);
    jpack_tab_free(t);
}

/* ---- jpack_build, fed by jscan_walk ---- */

static int b_open(void *ud, bool obj)
{
    return jpack_build_open(ud, obj);
}
static int b_close(void *ud, bool obj)
{
    (void)obj;
    return jpack_build_close(ud);
}
static int b_key(void *ud, const char *k, size_t n)
{
    return jpack_build_key(ud, k, n);
}
static int b_str(void *ud, const char *v, size_t n)
{
    return jpack_build_str(ud, v, n);
}
static int b_int(void *ud, long long v)
{
    return jpack_build_int(ud, v);
}
static int b_real(void *ud, double v)
{
    return jpack_build_real(ud, v);
}
static int b_lit(void *ud, char w)
{
    return jpack_build_lit(ud, w);
}
static const struct jscan_sink bsink = {b_open, b_close, b_key, b_str, b_int, b_real, b_lit};

/* `text` packed by the builder `b` (its bytes copied to *mine) and by jpack_encode() into t2
 * (*theirs): the same bytes, whose length is returned. */
static size_t build_and_encode(struct jpack_build *b, struct jpack_tab *t2, const char *text,
                               uint8_t **mine, uint8_t **theirs)
{
    struct err e;
    err_clear(&e);
    assert_int_equal(jscan_walk(text, strlen(text), &bsink, b, &e), 0);
    const uint8_t *bp;
    size_t bn = jpack_build_take(b, &bp);
    assert_true(bn > 0);
    *mine = xmalloc(bn);
    memcpy(*mine, bp, bn);
    json_t *tree = jscan_load(text, strlen(text), &e);
    assert_non_null(tree);
    size_t n = jpack_encode(t2, tree, theirs);
    assert_int_equal(n, bn);
    assert_memory_equal(*theirs, *mine, n);
    json_decref(tree);
    return bn;
}

/* The text packed by the builder is byte for byte jpack_encode() of its tree. */
static void test_build_matches_encode(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "{}",
        "[]",
        "[1,-1,0,9223372036854775807,-9223372036854775808,1.5,-0.0,1e300,true,false,null]",
        "{\"metadata\":{\"name\":\"a\",\"uid\":\"0123abcd-0123-4567-89ab-0123456789ab\","
        "\"creationTimestamp\":\"2026-11-27T10:00:00Z\",\"labels\":{\"app\":\"web\"}},"
        "\"spec\":{\"a\":[[],{},[{}],\"x\\u00e9\\n\"],\"e\\\"k\":\"\"}}",
        "[\"ab\",\"abc\",\"abc\",\"a long value that is longer than the intern limit of sixty-four "
        "bytes, inline\"]",
        /* own fields as references: before their field a value is not one, after it it is */
        "{\"a\":\"j1\",\"metadata\":{\"name\":\"j1\",\"uid\":\"0123abcd-0123-4567-89ab-"
        "0123456789ab\","
        "\"labels\":{\"u\":\"0123abcd-0123-4567-89ab-0123456789ab\",\"n\":\"j1\"},"
        "\"ownerReferences\":[{\"name\":\"o\",\"uid\":\"1123abcd-0123-4567-89ab-0123456789ab\"},"
        "{\"name\":\"p\"}]},\"spec\":{\"l\":[\"o\",\"p\",\"j1\",\"1123abcd-0123-4567-89ab-"
        "0123456789ab\"]}}",
        "[{\"metadata\":{\"name\":\"j1\"},\"x\":\"j1\"}]",
    };
    /* a table each: a container packed twice into one table is shared the second time */
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        struct jpack_tab *t = jpack_tab_new(), *t2 = jpack_tab_new();
        struct jpack_build *b = jpack_build_new(t);
        uint8_t *mine, *p;
        size_t n = build_and_encode(b, t2, texts[i], &mine, &p);
        jpack_release(t2, p, n);
        jpack_release(t, mine, n);
        free(p);
        free(mine);
        assert_int_equal(jpack_tab_len(t), 0);
        assert_int_equal(jpack_tab_len(t2), 0);
        jpack_build_free(b);
        jpack_tab_free(t);
        jpack_tab_free(t2);
    }
}

/* One builder packs a list's objects one after the other (store_list_add_text): it guesses each
 * key and interned string by its place in the value before (seq_ref). Whatever the guesses, each
 * value is byte for byte what jpack_encode() makes of it in a table that saw the same values:
 * shapes that repeat, a key more or less in the middle, and guesses whose ids were given back
 * and taken by other strings meanwhile. */
static void test_build_sequence_matches_encode(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "{\"kind\":\"Job\",\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\"},\"spec\":{\"p\":1}}",
        "{\"kind\":\"Job\",\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\"},\"spec\":{\"p\":2}}",
        "{\"kind\":\"Job\",\"metadata\":{\"name\":\"c\",\"extra\":\"x\",\"namespace\":\"ns\"},"
        "\"spec\":{\"p\":3}}",
        "{\"kind\":\"Job\",\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"},\"spec\":{\"p\":4}}",
        "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"other\"}}",
        "{\"kind\":\"Job\",\"metadata\":{\"name\":\"e\",\"namespace\":\"ns\"},\"spec\":{\"p\":5,"
        "\"q\":[\"ns\",\"Job\"]}}",
    };
    size_t nt = sizeof texts / sizeof texts[0];
    struct jpack_tab *t = jpack_tab_new(), *t2 = jpack_tab_new();
    struct jpack_build *b = jpack_build_new(t);
    uint8_t *mine[8], *theirs[8];
    size_t lens[8];
    struct {
        uint8_t *p;
        size_t n;
    } fl[2][2];
    for (size_t round = 0; round < 2; round++) {
        for (size_t i = 0; i < nt; i++) {
            size_t bn = build_and_encode(b, t2, texts[i], &mine[i], &theirs[i]);
            json_t *tree = jscan_load(texts[i], strlen(texts[i]), NULL);
            json_t *back = jpack_decode(t, mine[i], bn);
            assert_true(json_equal(back, tree));
            json_decref(back);
            json_decref(tree);
            lens[i] = bn;
        }
        /* give every id back, then let other strings take them: the builder's guesses name
         * entries that are gone or hold other bytes now */
        for (size_t i = 0; i < nt; i++) {
            jpack_release(t, mine[i], lens[i]);
            jpack_release(t2, theirs[i], lens[i]);
            free(mine[i]);
            free(theirs[i]);
        }
        /* only the filler of the round before holds entries */
        assert_int_equal(jpack_tab_len(t), jpack_tab_len(t2));
        if (round == 0)
            assert_int_equal(jpack_tab_len(t), 0);
        /* held over the next round, given back at the end */
        json_error_t je;
        json_t *filler =
            json_loads("{\"zz\":{\"yy\":\"xx\",\"ww\":\"vv\",\"uu\":[\"tt\",\"ss\"]}}", 0, &je);
        fl[round][0].n = jpack_encode(t, filler, &fl[round][0].p);
        fl[round][1].n = jpack_encode(t2, filler, &fl[round][1].p);
        json_decref(filler);
    }
    for (size_t round = 0; round < 2; round++) {
        jpack_release(t, fl[round][0].p, fl[round][0].n);
        jpack_release(t2, fl[round][1].p, fl[round][1].n);
        free(fl[round][0].p);
        free(fl[round][1].p);
    }
    assert_int_equal(jpack_tab_len(t), 0);
    assert_int_equal(jpack_tab_len(t2), 0);
    jpack_build_free(b);
    jpack_tab_free(t);
    jpack_tab_free(t2);
}

/* A Job as a real server returns it: its uid and name repeat in its selector and template
 * labels, its Workload's template names its job. */
static json_t *self_job(int i)
{
    char uid[40], name[24];
    snprintf(uid, sizeof uid, "%08x-0123-4567-89ab-0123456789ab", i);
    snprintf(name, sizeof name, "train-%d", i);
    return json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:{s:{s:s}}, s:{s:{s:{s:s, s:s, s:s}}, "
                     "s:{s:[{s:s, s:s}]}}}}",
                     "kind", "Job", "metadata", "name", name, "namespace", "team-a", "uid", uid,
                     "spec", "selector", "matchLabels", "batch.kubernetes.io/controller-uid", uid,
                     "template", "metadata", "labels", "batch.kubernetes.io/controller-uid", uid,
                     "batch.kubernetes.io/job-name", name, "app", "trainer", "spec", "containers",
                     "name", "main", "image", "registry.example.com/trainer:1.2");
}

/* The object's own fields (its uid and name, its first owner's) are packed once: later values
 * equal to them are references, so the Jobs of a sweep share their template; the trees come
 * back equal, a path to a reference reads its field, and bytes whose references name nothing
 * (or each other) decode to nothing. */
static void test_own_fields(void **state)
{
    (void)state;
    struct jpack_tab *t = jpack_tab_new();
    uint8_t *p[3];
    size_t n[3];
    json_t *v[3];
    for (int i = 0; i < 3; i++) {
        v[i] = self_job(i);
        n[i] = jpack_encode(t, v[i], &p[i]);
        json_t *back = jpack_decode(t, p[i], n[i]);
        assert_non_null(back);
        assert_true(json_equal(back, v[i]));
        json_decref(back);
    }
    /* the third's template is the second's: shared, only its own fields inline (a uid alone is
     * 17 bytes, the name 8; 66 bytes unshared) */
    assert_true(jpack_tab_shared(t) >= 1);
    assert_true(n[2] < 48);
    size_t sl;
    char scratch[JPACK_SCRATCH];
    const char *const lab[] = {
        "spec", "template", "metadata", "labels", "batch.kubernetes.io/controller-uid", NULL};
    const char *s = jpack_get_str(t, p[2], n[2], lab, &sl, scratch);
    assert_non_null(s);
    assert_int_equal(sl, 36);
    assert_memory_equal(s, "00000002-0123-4567-89ab-0123456789ab", 36);
    const char *const jn[] = {
        "spec", "template", "metadata", "labels", "batch.kubernetes.io/job-name", NULL};
    s = jpack_get_str(t, p[2], n[2], jn, &sl, scratch);
    assert_non_null(s);
    assert_int_equal(sl, 7);
    assert_memory_equal(s, "train-2", 7);
    json_t *tmpl = jpack_get(t, p[1], n[1], (const char *const[]){"spec", "template", NULL});
    assert_non_null(tmpl);
    assert_true(json_equal(tmpl, json_object_get(json_object_get(v[1], "spec"), "template")));
    json_decref(tmpl);

    /* a Workload: its template names its owner */
    json_t *wl = json_pack("{s:{s:s, s:s, s:[{s:s, s:s}]}, s:{s:[{s:{s:{s:{s:s, s:s}}}}]}}",
                           "metadata", "name", "job-train-1-abcde", "uid",
                           "ffffffff-0123-4567-89ab-0123456789ab", "ownerReferences", "name",
                           "train-1", "uid", "00000001-0123-4567-89ab-0123456789ab", "spec",
                           "podSets", "template", "metadata", "labels", "controller-uid",
                           "00000001-0123-4567-89ab-0123456789ab", "job-name", "train-1");
    uint8_t *wp;
    size_t wn = jpack_encode(t, wl, &wp);
    /* the same with a template naming another job: its uid is 16 bytes more */
    json_t *plain = json_deep_copy(wl);
    json_t *pl = json_object_get(
        json_object_get(
            json_object_get(json_array_get(jx_arr(plain, "spec.podSets"), 0), "template"),
            "metadata"),
        "labels");
    json_object_set_new(pl, "controller-uid", json_string("00000009-0123-4567-89ab-0123456789ab"));
    json_object_set_new(pl, "job-name", json_string("train-9"));
    struct jpack_tab *t3 = jpack_tab_new(), *t4 = jpack_tab_new(); /* fresh tables each */
    uint8_t *pp, *wp4;
    size_t pn = jpack_encode(t3, plain, &pp), wn4 = jpack_encode(t4, wl, &wp4);
    assert_true(wn4 + 16 <= pn);
    jpack_release(t4, wp4, wn4);
    free(wp4);
    jpack_tab_free(t4);
    json_t *back = jpack_decode(t, wp, wn);
    assert_true(json_equal(back, wl));
    json_decref(back);
    const char *const wlab[] = {"spec", "podSets", NULL};
    back = jpack_get(t, wp, wn, wlab);
    assert_true(json_equal(back, json_object_get(json_object_get(wl, "spec"), "podSets")));
    json_decref(back);
    jpack_release(t3, pp, pn);
    free(pp);
    json_decref(plain);
    jpack_tab_free(t3);

    /* hostile: a reference with no field to name, one that names itself */
    static const uint8_t no_field[] = {0x17 /* obj 1 */, 0, 0x0c /* T_REF 0 */};
    struct jpack_tab *t2 = jpack_tab_new();
    uint8_t *kp;
    json_t *keys = json_pack("{s:{s:s}}", "metadata", "uid", "u"); /* ids 0 "metadata", 1 "uid" */
    size_t kn = jpack_encode(t2, keys, &kp);
    assert_null(jpack_decode(t2, no_field, sizeof no_field));
    /* {"metadata":{"uid": T_REF uid}} */
    static const uint8_t self_loop[] = {0x17, 0, 0x17, 1, 0x0c};
    assert_null(jpack_decode(t2, self_loop, sizeof self_loop));
    assert_null(jpack_get_str(t2, self_loop, sizeof self_loop,
                              (const char *const[]){"metadata", "uid", NULL}, &sl, scratch));
    /* out of range */
    static const uint8_t far[] = {0x17, 0, 0x17, 1, 0x4c};
    assert_null(jpack_decode(t2, far, sizeof far));
    jpack_release(t2, kp, kn);
    free(kp);
    json_decref(keys);
    assert_int_equal(jpack_tab_len(t2), 0);
    jpack_tab_free(t2);

    jpack_release(t, wp, wn);
    free(wp);
    json_decref(wl);
    for (int i = 0; i < 3; i++) {
        jpack_release(t, p[i], n[i]);
        free(p[i]);
        json_decref(v[i]);
    }
    assert_int_equal(jpack_tab_len(t), 0);
    jpack_tab_free(t);
}

/* A nested container that repeats is kept once: smaller bytes, the same trees, paths read
 * through it, every reference given back, and the encoder and the builder agree. */
static void test_shared_containers(void **state)
{
    (void)state;
    static const char tmpl[] =
        "{\"metadata\":{\"labels\":{\"app\":\"train\"}},\"spec\":{\"containers\":[{\"name\":"
        "\"main\",\"image\":\"registry.example/train:v1\",\"resources\":{\"requests\":{"
        "\"cpu\":\"1\",\"memory\":\"1Gi\"}}}],\"restartPolicy\":\"Never\"}}";
    char text[3][512];
    json_t *tree[3];
    for (int i = 0; i < 3; i++) {
        snprintf(text[i], sizeof text[i],
                 "{\"metadata\":{\"name\":\"job-%d\",\"uid\":\"0123abcd-0123-4567-89ab-"
                 "01234567890%d\"},\"spec\":{\"parallelism\":%d,\"template\":%s}}",
                 i, i, i + 1, tmpl);
        tree[i] = json_loads(text[i], 0, NULL);
        assert_non_null(tree[i]);
    }
    struct jpack_tab *t = jpack_tab_new();
    uint8_t *p[3];
    size_t n[3];
    for (int i = 0; i < 3; i++)
        n[i] = jpack_encode(t, tree[i], &p[i]);
    /* seen once: inline; then shared */
    assert_true(jpack_tab_shared(t) >= 1);
    assert_true(n[1] < n[0]);
    assert_true(n[2] <= n[1]);
    assert_true(n[0] - n[2] >= 10); /* the containers list (15 bytes here) is a reference */
    json_t *tmpl_tree = json_loads(tmpl, 0, NULL);
    for (int i = 0; i < 3; i++) {
        json_t *back = jpack_decode(t, p[i], n[i]);
        assert_true(json_equal(back, tree[i]));
        json_decref(back);
        size_t sl;
        char scratch[JPACK_SCRATCH];
        const char *img = jpack_get_str(
            t, p[i], n[i],
            (const char *const[]){"spec", "template", "metadata", "labels", "app", NULL}, &sl,
            scratch);
        assert_non_null(img);
        assert_int_equal(sl, 5);
        assert_memory_equal(img, "train", 5);
        json_t *sub = jpack_get(t, p[i], n[i], (const char *const[]){"spec", "template", NULL});
        assert_true(json_equal(sub, tmpl_tree));
        json_decref(sub);
        /* a container is not a string */
        assert_null(jpack_get_str(t, p[i], n[i], (const char *const[]){"spec", "template", NULL},
                                  &sl, scratch));
    }
    /* the builder shares as the encoder does: job-2's metadata and spec were seen once by the
     * encoder, so the builder's copy is two references */
    struct jpack_build *b = jpack_build_new(t);
    struct err e;
    err_clear(&e);
    assert_int_equal(jscan_walk(text[2], strlen(text[2]), &bsink, b, &e), 0);
    const uint8_t *bp;
    size_t bn = jpack_build_take(b, &bp);
    assert_true(bn < 8);
    json_t *built = jpack_decode(t, bp, bn);
    assert_true(json_equal(built, tree[2]));
    json_decref(built);
    jpack_release(t, bp, bn);
    /* a builder dropped mid-way after a shared container gives its references back */
    size_t before = jpack_tab_len(t);
    assert_int_equal(jscan_walk(text[1], strlen(text[1]) - 1, &bsink, b, &e), -EBADMSG);
    jpack_build_reset(b);
    assert_int_equal(jpack_tab_len(t), before);
    /* an encode that fails at the depth limit after one too */
    json_t *deep = json_array(), *cur = deep;
    for (int i = 0; i < JPACK_MAX_DEPTH + 5; i++) {
        json_t *next = json_array();
        json_array_append_new(cur, next);
        cur = next;
    }
    json_t *bad =
        json_pack("{s:O, s:o}", "template",
                  json_object_get(json_object_get(tree[0], "spec"), "template"), "deep", deep);
    uint8_t *q;
    assert_int_equal(jpack_encode(t, bad, &q), 0);
    assert_int_equal(jpack_tab_len(t), before);
    json_decref(bad);
    /* a shared container at the depth limit: its reference is at the container's depth, so
     * what encodes decodes and gives its references back (each shared level once counted one
     * more level) */
    {
        json_t *top = json_array(), *at = top;
        for (int i = 2; i < JPACK_MAX_DEPTH; i++) { /* the string at JPACK_MAX_DEPTH */
            json_t *next = json_array();
            json_array_append_new(at, next);
            at = next;
        }
        json_array_append_new(at, json_pack("{s:s}", "k", "12345678901234567890"));
        json_array_append_new(at, json_pack("{s:s}", "k", "12345678901234567890"));
        size_t held = jpack_tab_len(t);
        uint8_t *dp[2];
        size_t dn[2];
        for (int i = 0; i < 2; i++) {
            dn[i] = jpack_encode(t, top, &dp[i]);
            assert_true(dn[i] > 0);
            json_t *back = jpack_decode(t, dp[i], dn[i]);
            assert_true(json_equal(back, top));
            json_decref(back);
        }
        assert_true(jpack_tab_len(t) > held);
        for (int i = 0; i < 2; i++) {
            jpack_release(t, dp[i], dn[i]);
            free(dp[i]);
        }
        assert_int_equal(jpack_tab_len(t), held);
        json_decref(top);
    }
    /* hostile: a shared id that is not held */
    const uint8_t ghost[] = {0x1b | 0xf0, 0x7f, 0};
    assert_null(jpack_decode(t, ghost, 2));
    for (int i = 0; i < 3; i++) {
        jpack_release(t, p[i], n[i]);
        free(p[i]);
        json_decref(tree[i]);
    }
    assert_int_equal(jpack_tab_len(t), 0);
    assert_int_equal(jpack_tab_shared(t), 0);
    json_decref(tmpl_tree);
    jpack_build_free(b);
    jpack_tab_free(t);
}

/* Misuse and the cases it leaves to the tree: each an error, and a reset gives back every
 * reference the value took. */
/* The view jpack_view() should give: each path looked up in the tree alone, set in a new object
 * with the objects on its way; a path below another one of the set is left to it. */
static json_t *view_ref(json_t *tree, const char *const *paths)
{
    json_t *out = json_object();
    for (size_t i = 0; paths[i]; i++) {
        bool below = false;
        for (size_t j = 0; paths[j]; j++) {
            size_t lj = strlen(paths[j]);
            below =
                below || (j != i && strncmp(paths[i], paths[j], lj) == 0 && paths[i][lj] == '.');
        }
        if (below)
            continue;
        char buf[128];
        snprintf(buf, sizeof buf, "%s", paths[i]);
        const char *segs[16];
        size_t ns = 0;
        char *save = NULL;
        for (char *seg = strtok_r(buf, ".", &save); seg; seg = strtok_r(NULL, ".", &save))
            segs[ns++] = seg;
        json_t *at = tree;
        for (size_t d = 0; d < ns && at; d++)
            at = json_is_object(at) ? json_object_get(at, segs[d]) : NULL;
        if (!at)
            continue;
        json_t *dst = out;
        for (size_t d = 0; d + 1 < ns; d++) {
            json_t *next = json_object_get(dst, segs[d]);
            if (!next)
                json_object_set_new(dst, segs[d], next = json_object());
            dst = next;
        }
        json_object_set(dst, segs[ns - 1], at);
    }
    return out;
}

/* A view read in one walk holds what each of its paths finds alone, through shared containers
 * and own-field references, and nothing else; a path through a non-object finds nothing;
 * bad bytes and too many paths give NULL. */
static void test_view(void **state)
{
    (void)state;
    struct jpack_tab *t = jpack_tab_new();
    json_t *wl[2];
    uint8_t *p[2];
    size_t n[2];
    for (int i = 0; i < 2; i++) {
        char uid[40];
        snprintf(uid, sizeof uid, "%08x-0123-4567-89ab-0123456789ab", i);
        wl[i] = json_pack(
            "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:b}], s:{s:s}}, "
            "s:{s:b, s:[{s:s, s:i, s:{s:{s:[{s:s, s:{s:{s:s}}}]}}}]}, "
            "s:{s:[{s:s, s:s, s:s}, {s:s, s:s}], s:[{s:s, s:s}], s:{s:s}}}",
            "apiVersion", "kueue.x-k8s.io/v1beta1", "kind", "Workload", "metadata", "name",
            i ? "job-b-2" : "job-a-1", "namespace", "team-a", "uid", uid, "resourceVersion", "17",
            "ownerReferences", "apiVersion", "batch/v1", "kind", "Job", "name", i ? "b" : "a",
            "uid", uid, "controller", 1, "labels", "app", "train", "spec", "active", 1, "podSets",
            "name", "main", "count", 1, "template", "spec", "containers", "name", uid, "resources",
            "requests", "cpu", "1", "status", "conditions", "type", "QuotaReserved", "status",
            "True", "lastTransitionTime", "2026-11-29T12:00:00Z", "type", "Admitted", "status",
            "True", "admissionChecks", "name", "ks", "state", "Pending", "admission",
            "clusterQueue", "cq");
        n[i] = jpack_encode(t, wl[i], &p[i]);
        assert_true(n[i] > 0);
    }
    static const char *const sets[][12] = {
        {"apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.uid",
         "metadata.resourceVersion", "metadata.ownerReferences", "spec.active", "status.conditions",
         "status.admissionChecks", NULL},
        {"metadata", "metadata.name", "status.admission.clusterQueue", NULL},
        {"metadata.labels.app", "spec.podSets", "nothing", "status.none.deeper", NULL},
        {"kind.deeper", "metadata.name.deeper", "spec.active.x", NULL},
        {"metadataX.name", "stat.x", "metadat", "status.conditionsX", "kin", NULL},
        {"metadata.name", NULL}, /* the walk ends after metadata */
        {NULL},
    };
    for (int i = 0; i < 2; i++) { /* the second shares its template with the first */
        for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
            json_t *v = jpack_view(t, p[i], n[i], sets[k]);
            json_t *want = view_ref(wl[i], sets[k]);
            assert_non_null(v);
            if (!json_equal(v, want)) {
                char *a = json_dumps(v, JSON_SORT_KEYS), *b = json_dumps(want, JSON_SORT_KEYS);
                fail_msg("set %zu: %s, want %s", k, a, b);
            }
            json_decref(v);
            json_decref(want);
        }
    }
    /* the owner's uid is a reference to the object's own: its text */
    json_t *v = jpack_view(t, p[1], n[1], (const char *const[]){"metadata.ownerReferences", NULL});
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(v, "metadata"), "ownerReferences"), 0),
            "uid")),
        "00000001-0123-4567-89ab-0123456789ab");
    json_decref(v);
    /* bad bytes, a value that is not an object, too many paths; the walk ends once the paths'
     * members were read: bytes cut after the metadata still give its name */
    assert_null(jpack_view(t, p[0], n[0] / 2, sets[0]));
    v = jpack_view(t, p[0], n[0] - 8, (const char *const[]){"metadata.name", NULL});
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "metadata"), "name")),
                        "job-a-1");
    json_decref(v);
    assert_null(jpack_view(t, p[0], n[0] - 8, (const char *const[]){"status", NULL}));
    uint8_t *sp;
    json_t *str = json_string("x");
    size_t sn = jpack_encode(t, str, &sp);
    json_decref(str);
    assert_null(jpack_view(t, sp, sn, sets[0]));
    const char *many[JPACK_VIEW_MAX + 2];
    for (size_t i = 0; i <= JPACK_VIEW_MAX; i++)
        many[i] = "kind";
    many[JPACK_VIEW_MAX + 1] = NULL;
    assert_null(jpack_view(t, p[0], n[0], many));
    jpack_release(t, sp, sn);
    free(sp);
    for (int i = 0; i < 2; i++) {
        jpack_release(t, p[i], n[i]);
        free(p[i]);
        json_decref(wl[i]);
    }
    assert_int_equal(jpack_tab_len(t), 0);
    jpack_tab_free(t);
}

static void test_build_errors(void **state)
{
    (void)state;
    struct jpack_tab *t = jpack_tab_new();
    struct jpack_build *b = jpack_build_new(t);
    const uint8_t *p;
    /* a repeated key */
    assert_int_equal(jpack_build_open(b, true), 0);
    assert_int_equal(jpack_build_key(b, "name", 4), 0);
    assert_int_equal(jpack_build_str(b, "shared-value", 12), 0);
    assert_int_equal(jpack_build_key(b, "other", 5), 0);
    assert_int_equal(jpack_build_open(b, true), 0);
    assert_int_equal(jpack_build_key(b, "name", 4), 0); /* another object: fine */
    assert_int_equal(jpack_build_int(b, 1), 0);
    assert_int_equal(jpack_build_close(b), 0);
    assert_int_equal(jpack_build_key(b, "name", 4), -EEXIST);
    assert_int_equal(jpack_build_take(b, &p), 0); /* not complete */
    assert_null(p);
    assert_true(jpack_tab_len(t) > 0);
    jpack_build_reset(b);
    assert_int_equal(jpack_tab_len(t), 0);
    /* 200 keys, whose ids share their low six bits by the dozen: each new one is taken, a
     * repeat of any is found (the bit per id modulo 64 only spares the search for a new one) */
    for (int rep = 0; rep < 200; rep++) {
        assert_int_equal(jpack_build_open(b, true), 0);
        for (int i = 0; i < 200; i++) {
            char k[16];
            int len = snprintf(k, sizeof k, "key-%d", i);
            assert_int_equal(jpack_build_key(b, k, (size_t)len), 0);
            assert_int_equal(jpack_build_int(b, i), 0);
        }
        char k[16];
        int len = snprintf(k, sizeof k, "key-%d", rep);
        assert_int_equal(jpack_build_key(b, k, (size_t)len), -EEXIST);
        jpack_build_reset(b);
    }
    assert_int_equal(jpack_tab_len(t), 0);
    /* out of order */
    assert_int_equal(jpack_build_close(b), -EINVAL);
    assert_int_equal(jpack_build_key(b, "k", 1), -EINVAL);
    assert_int_equal(jpack_build_open(b, false), 0);
    assert_int_equal(jpack_build_key(b, "k", 1), -EINVAL); /* in an array */
    assert_int_equal(jpack_build_close(b), 0);
    assert_int_equal(jpack_build_lit(b, 'n'), -EINVAL); /* a second top-level value */
    assert_int_equal(jpack_build_take(b, &p), 1);       /* [] is one tag, its count inside */
    /* an object's members: a key, then its value */
    assert_int_equal(jpack_build_open(b, true), 0);
    assert_int_equal(jpack_build_int(b, 1), -EINVAL); /* a value without its key */
    jpack_build_reset(b);
    assert_int_equal(jpack_build_open(b, true), 0);
    assert_int_equal(jpack_build_key(b, "a", 1), 0);
    assert_int_equal(jpack_build_key(b, "b", 1), -EINVAL); /* two keys in a row */
    jpack_build_reset(b);
    assert_int_equal(jpack_build_open(b, true), 0);
    assert_int_equal(jpack_build_key(b, "a", 1), 0);
    assert_int_equal(jpack_build_close(b), -EINVAL); /* a key without its value */
    jpack_build_reset(b);
    assert_int_equal(jpack_tab_len(t), 0);
    /* deeper than JPACK_MAX_DEPTH */
    int rc = 0;
    for (int i = 0; i <= JPACK_MAX_DEPTH && rc == 0; i++)
        rc = jpack_build_open(b, false);
    assert_int_equal(rc, -E2BIG);
    jpack_build_reset(b);
    /* an object with more members than the repeat check scans: the tree's */
    assert_int_equal(jpack_build_open(b, true), 0);
    for (int i = 0; i < JPACK_BUILD_MAX_KEYS; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        assert_int_equal(jpack_build_key(b, k, strlen(k)), 0);
        assert_int_equal(jpack_build_int(b, i), 0);
    }
    assert_int_equal(jpack_build_key(b, "one-more", 8), -E2BIG);
    jpack_build_reset(b);
    assert_int_equal(jpack_tab_len(t), 0);
    /* a builder freed with a value half built gives its references back */
    assert_int_equal(jpack_build_open(b, true), 0);
    assert_int_equal(jpack_build_key(b, "kept-key", 8), 0);
    assert_int_equal(jpack_build_str(b, "interned-value", 14), 0);
    assert_int_equal(jpack_tab_len(t), 2);
    jpack_build_free(b);
    assert_int_equal(jpack_tab_len(t), 0);
    jpack_tab_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_edges),
        cmocka_unit_test(test_intern_refcounts),
        cmocka_unit_test(test_names_inline),
        cmocka_unit_test(test_hostile_bytes),
        cmocka_unit_test(test_build_matches_encode),
        cmocka_unit_test(test_build_sequence_matches_encode),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_uids_and_times),
        cmocka_unit_test(test_shared_containers),
        cmocka_unit_test(test_long_strings),
        cmocka_unit_test(test_own_fields),
        cmocka_unit_test(test_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
