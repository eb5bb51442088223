/* Unit tests for pkg/util/buf and pkg/util/err and pkg/util/xalloc. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
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

static void test_xalloc(void **state)
{
    (void)state;
    char *s = xasprintf("%s-%d", "a", 7);
    assert_string_equal(s, "a-7");
    free(s);
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
        cmocka_unit_test(test_consume_and_detach),
        cmocka_unit_test(test_err),
        cmocka_unit_test(test_xalloc),
    };
    return cmocka_run_group_tests_name("util_buf_err", tests, NULL, NULL);
}
