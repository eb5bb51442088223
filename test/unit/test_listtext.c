/* Unit tests for devhub/listtext: built-in items lose apiVersion/kind wherever they are,
 * custom resources' items are kept when stored under the served version, and every text that
 * is not one compact object (or that the parse path would treat differently) is refused
 * with nothing appended. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/listtext.h"

/* listtext_item on txt, appended after "[": the result without the "[", or NULL when
 * refused (then the buffer must be untouched). */
static char *item(const char *txt, bool strip, const char *av, const char *kind)
{
    struct buf out;
    buf_init(&out, 1 << 20);
    buf_puts(&out, "[");
    int rc = listtext_item(txt, strlen(txt), strip, av, kind, &out);
    char *res = NULL;
    if (rc == 0) {
        res = strdup(out.data + 1);
    } else {
        assert_int_equal(rc, -EAGAIN);
        assert_int_equal(out.len, 1);
        assert_string_equal(out.data, "[");
    }
    buf_free(&out);
    return res;
}

static void expect(const char *txt, bool strip, const char *want)
{
    char *got = item(txt, strip, "ex.io/v1", "Thing");
    assert_non_null(got);
    assert_string_equal(got, want);
    /* what the parse path writes */
    json_t *j = json_loads(txt, 0, NULL);
    assert_non_null(j);
    if (strip) {
        json_object_del(j, "apiVersion");
        json_object_del(j, "kind");
    }
    char *dumped = json_dumps(j, JSON_COMPACT);
    assert_string_equal(got, dumped);
    free(dumped);
    json_decref(j);
    free(got);
}

static void refused(const char *txt, bool strip)
{
    assert_null(item(txt, strip, "ex.io/v1", "Thing"));
}

static void test_strip_anywhere(void **state)
{
    (void)state;
    expect("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}", true,
           "{\"metadata\":{\"name\":\"a\"}}");
    expect("{\"metadata\":{\"name\":\"a\"},\"apiVersion\":\"v1\",\"kind\":\"Pod\"}", true,
           "{\"metadata\":{\"name\":\"a\"}}");
    expect("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"apiVersion\":\"v1\",\"x\":1}", true,
           "{\"metadata\":{\"name\":\"a\"},\"x\":1}");
    expect("{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}", true, "{}");
    expect("{}", true, "{}");
    expect("{\"a\":null}", true, "{\"a\":null}");
    /* nested apiVersion/kind and brackets inside strings are left alone */
    expect("{\"spec\":{\"apiVersion\":\"x\",\"s\":\"}],{\\\"\"},\"kind\":\"Pod\",\"l\":[1,[true,"
           "false],{\"kind\":\"k\"}],\"n\":-1500.0}",
           true,
           "{\"spec\":{\"apiVersion\":\"x\",\"s\":\"}],{\\\"\"},\"l\":[1,[true,false],{\"kind\":"
           "\"k\"}],\"n\":-1500.0}");
}

static void test_custom_resource_kept_when_served_version(void **state)
{
    (void)state;
    expect("{\"apiVersion\":\"ex.io/v1\",\"kind\":\"Thing\",\"metadata\":{\"name\":\"t\"}}", false,
           "{\"apiVersion\":\"ex.io/v1\",\"kind\":\"Thing\",\"metadata\":{\"name\":\"t\"}}");
    expect("{\"metadata\":{\"name\":\"t\"},\"kind\":\"Thing\",\"apiVersion\":\"ex.io/v1\"}", false,
           "{\"metadata\":{\"name\":\"t\"},\"kind\":\"Thing\",\"apiVersion\":\"ex.io/v1\"}");
    /* another version, kind, or either missing: the parse path sets them */
    refused("{\"apiVersion\":\"ex.io/v2\",\"kind\":\"Thing\"}", false);
    refused("{\"apiVersion\":\"ex.io/v1\",\"kind\":\"Other\"}", false);
    refused("{\"apiVersion\":\"ex.io/v1\",\"kind\":\"Thingy\"}", false);
    refused("{\"kind\":\"Thing\"}", false);
    refused("{\"apiVersion\":\"ex.io/v1\"}", false);
    refused("{\"apiVersion\":1,\"kind\":\"Thing\"}", false);
    refused("{\"apiVersion\":\"ex.io\\/v1\",\"kind\":\"Thing\"}", false);
}

static void test_refuses_what_is_not_one_compact_object(void **state)
{
    (void)state;
    const char *bad[] = {
        "",
        "[]",
        "\"x\"",
        "{",
        "{\"a\":1",
        "{\"a\":1,}",
        "{\"a\" :1}",
        "{ \"a\":1}",
        "{\"a\":1 }",
        "{\"a\":1}x",
        "{\"a\":1}}",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":,\"b\":1}",
        "{\"a\":{\"b\":1}",
        "{\"a\":\"unterminated}",
        "{\"a\":[1,2}",
        "{a:1}",
        "{\"apiVersion\":\"v1\",\"apiVersion\":\"v1\"}", /* duplicate: the parser's last-wins */
        "{\"kind\":\"a\",\"x\":1,\"kind\":\"b\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        refused(bad[i], true);
        refused(bad[i], false);
    }
}

static void test_no_read_past_the_length(void **state)
{
    (void)state;
    /* the text is the first 10 bytes only: "{\"a\":\"bcd\"" is not complete */
    const char *txt = "{\"a\":\"bcd\"}";
    struct buf out;
    buf_init(&out, 1024);
    assert_int_equal(listtext_item(txt, 10, true, "v1", "K", &out), -EAGAIN);
    assert_int_equal(listtext_item(txt, strlen(txt), true, "v1", "K", &out), 0);
    assert_string_equal(out.data, txt);
    buf_free(&out);
}

static void test_cap_refuses_and_rolls_back(void **state)
{
    (void)state;
    struct buf out;
    buf_init(&out, 8);
    buf_puts(&out, "ab");
    assert_int_equal(listtext_item("{\"metadata\":{\"name\":\"a\"}}", 25, true, "v1", "K", &out),
                     -EAGAIN);
    assert_int_equal(out.len, 2);
    assert_string_equal(out.data, "ab");
    buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip_anywhere),
        cmocka_unit_test(test_custom_resource_kept_when_served_version),
        cmocka_unit_test(test_refuses_what_is_not_one_compact_object),
        cmocka_unit_test(test_no_read_past_the_length),
        cmocka_unit_test(test_cap_refuses_and_rolls_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
