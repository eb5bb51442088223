/* Unit tests for pkg/util/buf and pkg/util/err and pkg/util/xalloc. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "pkg/util/buf.h"
#include "pkg/util/err.h"
#include "pkg/util/xalloc.h"

static void test_append_and_cap(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 10);
    assert_string_equal(buf_str(&b), "");
    assert_int_equal(buf_puts(&b, "hello"), 0);
    assert_int_equal(buf_printf(&b, "%d", 1234), 0);
    assert_string_equal(buf_str(&b), "hello1234");
    assert_int_equal(b.len, 9);
    /* 2 more bytes would exceed the cap of 10: rejected, contents unchanged. */
    assert_int_equal(buf_puts(&b, "ab"), -E2BIG);
    assert_int_equal(buf_printf(&b, "%s", "xy"), -E2BIG);
    assert_string_equal(buf_str(&b), "hello1234");
    assert_int_equal(buf_puts(&b, "!"), 0);
    assert_int_equal(b.len, 10);
    buf_free(&b);
}

/* max SIZE_MAX is no cap: the buffer grows as usual (max + 1 must not wrap to a 0 capacity). */
static void test_no_cap(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, SIZE_MAX);
    char chunk[100];
    memset(chunk, 'z', sizeof chunk);
    for (int i = 0; i < 50; i++)
        assert_int_equal(buf_append(&b, chunk, sizeof chunk), 0);
    assert_int_equal(b.len, 5000);
    assert_true(b.cap > b.len);
    assert_int_equal(buf_str(&b)[4999], 'z');
    assert_int_equal(buf_str(&b)[5000], '\0');
    buf_free(&b);
}

static void test_consume_and_detach(void **state)
{
    (void)state;
    struct buf b;
    buf_init(&b, 1 << 20);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(buf_puts(&b, "0123456789"), 0);
    assert_int_equal(b.len, 10000);
    buf_consume(&b, 9995);
    assert_string_equal(buf_str(&b), "56789");
    buf_consume(&b, 100);
    assert_int_equal(b.len, 0);
    assert_string_equal(buf_str(&b), "");
    buf_puts(&b, "keep");
    char *s = buf_detach(&b);
    assert_string_equal(s, "keep");
    assert_null(b.data);
    free(s);
    s = buf_detach(&b);
    assert_string_equal(s, "");
    free(s);
    /* Binary data with NULs is kept. */
    assert_int_equal(buf_append(&b, "a\0b", 3), 0);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "a\0b", 3);
    buf_free(&b);
}

static void test_err(void **state)
{
    (void)state;
    struct err e;
    err_clear(&e);
    assert_int_equal(e.code, 0);
    assert_int_equal(err_set(&e, -ENOENT, "file %s not found", "/x"), -ENOENT);
    assert_int_equal(e.code, -ENOENT);
    assert_string_equal(e.msg, "file /x not found");
    assert_int_equal(err_prefix(&e, "kubeconfig %s", "a.yaml"), -ENOENT);
    assert_string_equal(e.msg, "kubeconfig a.yaml: file /x not found");
    /* NULL is accepted everywhere. */
    assert_int_equal(err_set(NULL, -EIO, "x"), -EIO);
    assert_int_equal(err_prefix(NULL, "x"), 0);
    /* Long messages are truncated, not overflowed. */
    char big[2000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    err_set(&e, -EINVAL, "%s", big);
    assert_int_equal(strlen(e.msg), ERR_MSG_MAX - 1);
}

/* A prefix on a long message keeps the root cause: the server's words at
 * the end of the message used to be what was cut. */
static void test_err_prefix_keeps_root_cause(void **state)
{
    (void)state;
    struct err e;
    char path[300];
    memset(path, 'p', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    err_set(&e, -EBUSY, "PATCH /apis/x/%s: 409 Conflict: the object has been modified", path);
    char before[ERR_MSG_MAX];
    snprintf(before, sizeof before, "%s", e.msg);
    char ctx[400];
    memset(ctx, 'c', sizeof ctx - 1);
    ctx[sizeof ctx - 1] = '\0';
    assert_int_equal(err_prefix(&e, "workload %s", ctx), -EBUSY);
    assert_true(strlen(e.msg) <= ERR_MSG_MAX - 1);
    size_t n = strlen(e.msg);
    /* the old message is whole, at the end; the context starts it, cut */
    assert_true(n >= strlen(before));
    assert_string_equal(e.msg + n - strlen(before), before);
    assert_memory_equal(e.msg, "workload ccc", 12);
    assert_non_null(strstr(e.msg, "...: PATCH"));
    /* An old message that fills the buffer: its start and its end stay, the
     * prefix keeps ERR_PREFIX_MIN bytes. */
    char big[ERR_MSG_MAX];
    memset(big, 'm', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    memcpy(big + sizeof big - 12, "server said", 11);
    err_set(&e, -EIO, "%s", big);
    err_prefix(&e, "%s", ctx);
    n = strlen(e.msg);
    assert_int_equal(n, ERR_MSG_MAX - 1);
    assert_string_equal(e.msg + n - 11, "server said");
    assert_memory_equal(e.msg + ERR_PREFIX_MIN - 3, "...: mmm", 8);
    assert_non_null(strstr(e.msg + ERR_PREFIX_MIN, "..."));
    /* Short ones are unchanged. */
    err_set(&e, -EIO, "boom");
    err_prefix(&e, "ctx");
    assert_string_equal(e.msg, "ctx: boom");
}

/* Valid UTF-8 (jansson checks it when it makes a JSON string, as for an Event). */
static bool utf8_ok(const char *s)
{
    json_t *j = json_string(s);
    json_decref(j);
    return j != NULL;
}

/* Cutting a message never splits a UTF-8 character: an Event made from a split
 * one is refused (invalid JSON string), a log line would carry a broken byte. */
static void test_err_cut_keeps_utf8(void **state)
{
    (void)state;
    static const char *const chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    for (size_t c = 0; c < 3; c++) {
        for (size_t shift = 0; shift < 4; shift++) {
            /* a message of `shift` ASCII bytes then the character repeated: every cut offset */
            char big[2000] = {0};
            memset(big, 'a', shift);
            size_t cl = strlen(chars[c]);
            for (size_t off = shift; off + cl < sizeof big; off += cl)
                memcpy(big + off, chars[c], cl);
            struct err e;
            err_set(&e, -EIO, "%s", big);
            assert_true(utf8_ok(e.msg));
            assert_true(strlen(e.msg) >= ERR_MSG_MAX - 4);
            /* a prefix cut (long context, short root cause) */
            err_set(&e, -EIO, "root cause");
            err_prefix(&e, "%.*s", (int)(ERR_MSG_MAX + shift), big);
            assert_true(utf8_ok(e.msg));
            assert_non_null(strstr(e.msg, "...: root cause"));
            /* a middle cut (the old message fills the buffer) */
            err_set(&e, -EIO, "%s", big);
            err_prefix(&e, "%s", big);
            assert_true(utf8_ok(e.msg));
            assert_true(strlen(e.msg) >= ERR_MSG_MAX - 8);
        }
    }
}

static void test_xalloc(void **state)
{
    (void)state;
    char *s = xasprintf("%s-%d", "a", 7);
    assert_string_equal(s, "a-7");
    free(s);
    /* around the 256-byte stack buffer of the one-pass path, and far past it */
    static const size_t lens[] = {0, 1, 254, 255, 256, 257, 511, 5000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        char *want = xmalloc(lens[i] + 1);
        for (size_t j = 0; j < lens[i]; j++)
            want[j] = (char)('a' + j % 26);
        want[lens[i]] = '\0';
        s = xasprintf("%s", want);
        assert_int_equal(strlen(s), lens[i]);
        assert_string_equal(s, want);
        free(s);
        s = xasprintf("<%s>%d", want, 42); /* the format adds 4 bytes */
        assert_int_equal(strlen(s), lens[i] + 4);
        assert_memory_equal(s + 1, want, lens[i]);
        assert_string_equal(s + 1 + lens[i], ">42");
        free(s);
        free(want);
    }
    s = xstrndup("abcdef", 3);
    assert_string_equal(s, "abc");
    FREE_AND_NULL(s);
    assert_null(s);
    int *z = xcalloc(4, sizeof(int));
    assert_int_equal(z[3], 0);
    z = xrealloc(z, 100 * sizeof(int));
    z[99] = 1;
    free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_and_cap),
        cmocka_unit_test(test_no_cap),
        cmocka_unit_test(test_consume_and_detach),
        cmocka_unit_test(test_err),
        cmocka_unit_test(test_err_prefix_keeps_root_cause),
        cmocka_unit_test(test_err_cut_keeps_utf8),
        cmocka_unit_test(test_xalloc),
    };
    return cmocka_run_group_tests_name("util_buf_err", tests, NULL, NULL);
}
