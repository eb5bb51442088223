/* Unit tests for pkg/json/jsplit: the list and its items are what jansson reads from the whole
 * text, and so are the verdicts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsplit.h"

/* Split `text` and rebuild the whole from rest + items: equal to json_loads' tree, or both
 * reject it (reading every item). *nsplit: the items that came as spans. */
static void agree(const char *text, size_t *nsplit)
{
    json_error_t je;
    json_t *want = json_loads(text, 0, &je);
    struct jsplit sp;
    struct err e;
    err_clear(&e);
    int rc = jsplit_list(text, strlen(text), &sp, &e);
    json_t *got = NULL;
    if (rc == 0) {
        got = json_deep_copy(sp.rest);
        /* split: rest has no items (an empty array split out leaves none either) */
        if (sp.n || (want && json_object_get(want, "items") && !json_object_get(got, "items"))) {
            json_t *items = json_array();
            for (size_t i = 0; i < sp.n && items; i++) {
                json_t *it = jsplit_item(&sp, i, &e);
                if (!it) {
                    json_decref(items);
                    items = NULL;
                } else {
                    json_array_append_new(items, it);
                }
            }
            if (items)
                json_object_set_new(got, "items", items);
            else {
                json_decref(got);
                got = NULL;
            }
        }
    }
    if (nsplit)
        *nsplit = sp.n;
    jsplit_release(&sp);
    if (!want) {
        if (got)
            fail_msg("jansson rejects (%s), jsplit accepts: %s", je.text, text);
        assert_non_null(strstr(e.msg, "invalid JSON at byte"));
        return;
    }
    if (!got)
        fail_msg("jansson accepts, jsplit rejects (%s): %s", e.msg, text);
    if (!json_equal(want, got))
        fail_msg("different trees for: %s", text);
    json_decref(want);
    json_decref(got);
}

static void test_split(void **state)
{
    (void)state;
    size_t n;
    agree("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"5\"},"
          "\"items\":[{\"metadata\":{\"name\":\"a\",\"x\":\"}]\\\"\"}},\n {\"a\":[1,{\"b\":[]}]}"
          " , {}]}",
          &n);
    assert_int_equal(n, 3);
    /* items first, metadata after */
    agree("{\"items\":[{\"a\":1}],\"metadata\":{\"continue\":\"t\"},\"kind\":\"PodList\"}", &n);
    assert_int_equal(n, 1);
    agree(" { \"items\" : [ ] , \"k\" : null } ", &n);
    assert_int_equal(n, 0);
}

/* Strings with escapes end where jansson ends them: an escaped quote does not end one, an
 * escaped backslash before a quote does; brackets inside them are not counted. */
static void test_escapes(void **state)
{
    (void)state;
    size_t n;
    const char *two[] = {
        "{\"items\":[{\"a\":\"x\\\\\"},{\"b\":\"]\"}]}",            /* "x\\" then "]" */
        "{\"items\":[{\"a\":\"\\\"}]\\\\\"},{\"b\":1}]}",           /* "\"}]\\" */
        "{\"items\":[{\"a\":\"\\\\\\\\\\\\\\\"\"},{\"b\":\"{\"}]}", /* "\\\\\\\"" */
        "{\"items\":[{\"\\\"k\\\"\":\"\\u0022[\"},{}]}",            /* an escaped key */
    };
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++) {
        agree(two[i], &n);
        assert_int_equal(n, 2);
    }
    /* the same at every offset in a 16-byte block: the scan goes a block at a time where it
     * holds no backslash, so escapes, quotes and brackets in strings meet block ends */
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++) {
        for (int pad = 0; pad < 32; pad++) {
            char text[256];
            const char *items = strstr(two[i], "[{") + 1;
            snprintf(text, sizeof text, "{\"p\":\"%.*s\",\"items\":[{\"q\":\"%.*s\",%s", pad,
                     "................................", pad, "................................",
                     items + 1);
            agree(text, &n);
            assert_int_equal(n, 2);
        }
    }
    const char *bad[] = {
        "{\"items\":[{\"a\":\"x\\\"}]}", /* the quote escaped: the string never ends */
        "{\"items\":[{\"a\":\"x\\",      /* a backslash last */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        agree(bad[i], NULL);
}

/* What is not split is loaded whole, as it was. */
static void test_whole(void **state)
{
    (void)state;
    size_t n;
    const char *whole[] = {
        "{\"items\":[1,2]}",                          /* not objects */
        "{\"items\":null}",                           /* not an array */
        "{\"items\":[{\"a\":1}],\"items\":[{}]}",     /* twice: the last wins */
        "{\"it\\u0065ms\":[{\"a\":1}]}",              /* an escaped key */
        "{\"items\":[{\"a\":1}],\"it\\u0065ms\":[]}", /* both */
        "{\"metadata\":{}}",                          /* none */
        "[{\"a\":1}]",                                /* not an object */
        "{}",
    };
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        agree(whole[i], &n);
        assert_int_equal(n, 0);
    }
}

/* Broken texts are refused as jansson refuses them, wherever the fault is. */
static void test_rejects(void **state)
{
    (void)state;
    const char *bad[] = {
        "",
        "{",
        "{\"items\":[{\"a\":1} {\"b\":2}]}", /* no comma between items */
        "{\"items\":[{\"a\":1},]}",          /* trailing comma */
        "{\"items\":[{\"a\":tru}]}",         /* a bad item */
        "{\"items\":[{\"a\":1}],}",          /* trailing comma after the items */
        "{\"kind\":\"x\" \"items\":[{}]}",   /* no comma before the items */
        "{\"kind\":tru,\"items\":[{}]}",     /* a bad value outside the items */
        "{\"items\":[{\"a\":1}]} x",         /* garbage after */
        "{\"items\":[{\"a\":\"\\q\"}]}",     /* a bad escape in an item */
        "{\"items\":[{\"a\":[}]}]}",         /* mismatched brackets */
        "{\"items\":[{\"a\":\"unterminated}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        agree(bad[i], NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_whole),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests_name("jsplit", tests, NULL, NULL);
}
