/* Unit tests for pkg/json/jdump: the bytes are json_dumps(JSON_COMPACT)'s. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jdump.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"

/* jdump_compact(v) equals json_dumps(v, JSON_COMPACT), both NULL or the same text. */
static void same(const json_t *v)
{
    char *want = json_dumps(v, JSON_COMPACT);
    size_t n = 12345;
    char *got = jdump_compact(v, &n);
    if (!want != !got || (want && strcmp(want, got) != 0))
        fail_msg("jdump_compact gave %s where json_dumps gave %s", got ? got : "NULL",
                 want ? want : "NULL");
    if (got)
        assert_int_equal(n, strlen(got));
    free(want);
    free(got);
}

static void same_text(const char *text)
{
    json_t *v = json_loads(text, 0, NULL);
    assert_non_null(v);
    same(v);
    json_decref(v);
}

static void test_values(void **state)
{
    (void)state;
    same_text("{}");
    same_text("[]");
    same_text("{\"z\":1,\"a\":[true,false,null,{},[]],\"m\":{\"k\":\"v\"}}"); /* key order */
    same_text("[0,-1,9223372036854775807,-9223372036854775808,1.5,-0.0,1e300,1e-300,0.1,2.0]");
    same_text("[\"plain\",\"\",\"q\\\"b\\\\s/\",\"\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\","
              "\"\\u00e9\\u20ac\\ud83d\\ude00\"]");
    same_text("{\"ke\\ny\":\"v\",\"\\u00e9\":1}");
    /* a NUL inside a string (json_stringn allows it), in a value and in a key */
    json_t *a = json_pack("[s#]", "a\0b", (int)3);
    same(a);
    json_decref(a);
    json_t *o = json_object();
    json_object_setn_new(o, "k\0k", 3, json_integer(1));
    same(o);
    json_decref(o);
    json_t *big = json_array();
    for (int i = 0; i < 1000; i++)
        json_array_append_new(big, json_pack("{s:i,s:s}", "i", i, "s", "some text\tto escape"));
    same(big);
    json_decref(big);
}

/* What jansson cannot write gives NULL here too; what jdump leaves to jansson is the same. */
static void test_fallbacks(void **state)
{
    (void)state;
    json_t *bad = json_pack("{s:o}", "k", json_stringn_nocheck("\xff", 1));
    same(bad); /* NULL: not UTF-8 */
    char *s = jdump_compact(bad, NULL);
    assert_null(s);
    json_decref(bad);
    json_t *scalar = json_integer(1);
    same(scalar); /* NULL: not an object or an array at the top */
    json_decref(scalar);
    same(NULL);
    /* deeper than JDUMP_MAX_DEPTH: jansson writes it */
    json_t *deep = json_array();
    json_t *cur = deep;
    for (int i = 0; i < JDUMP_MAX_DEPTH + 5; i++) {
        json_t *n = json_array();
        json_array_append_new(cur, n);
        cur = n;
    }
    same(deep);
    json_decref(deep);
    /* a loop: jansson refuses it, so does jdump */
    json_t *x = json_array(), *y = json_array();
    json_array_append(x, y);
    json_array_append(y, x);
    same(x);
    assert_null(jdump_compact(x, NULL));
    json_array_clear(y);
    json_decref(x);
    json_decref(y);
}

int main(void)
{
    jx_use_xalloc();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_fallbacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
