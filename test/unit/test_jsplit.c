/* Unit tests for pkg/json/jsplit: the list and its items are what jansson reads from the whole
 * text, in pieces of any size, and so are the verdicts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsplit.h"

/* The callback of the tests: each item loaded as jansson loads a value, appended to `items`;
 * the list's kind as the item saw it is checked against `want_kind`. */
struct got {
    json_t *items;
    const char *want_kind; /* NULL: not checked */
    size_t next;           /* the index the next item must carry */
    size_t during_feed;    /* items handed over before jsplit_finish */
    bool finishing;
};

static int on_item(void *ud, const json_t *list, size_t i, const char *text, size_t n,
                   struct err *e)
{
    struct got *g = ud;
    if (i != g->next++)
        fail_msg("item %zu handed over as %zu", g->next - 1, i);
    if (!g->finishing)
        g->during_feed++;
    if (g->want_kind) {
        const char *k = json_string_value(json_object_get(list, "kind"));
        if (!k || strcmp(k, g->want_kind) != 0)
            fail_msg("item %zu saw kind %s", i, k ? k : "(none)");
    }
    json_error_t je;
    json_t *it = json_loadb(text, n, JSON_DECODE_ANY, &je);
    if (!it)
        return err_set(e, -EBADMSG, "invalid JSON at byte %d: %s", je.position, je.text);
    json_array_append_new(g->items, it);
    return 0;
}

/* Split `text` fed in pieces of `piece` bytes (0: whole) and rebuild the whole from rest +
 * items: NULL when refused (message in e). */
static json_t *split_pieces(const char *text, size_t piece, struct got *g, struct err *e)
{
    static const char *const needed[] = {"kind", NULL};
    size_t len = strlen(text);
    struct jsplit *s = jsplit_new(needed, 1 << 20, on_item, g);
    g->items = json_array();
    g->next = g->during_feed = 0;
    g->finishing = false;
    int rc = 0;
    for (size_t i = 0; i < len && rc == 0; i += piece ? piece : len)
        rc = jsplit_feed(s, text + i, piece && len - i > piece ? piece : len - i, e);
    json_t *got = NULL;
    if (rc == 0) {
        g->finishing = true;
        got = jsplit_finish(s, e);
    }
    if (got && jsplit_did_split(s)) {
        if (json_object_get(got, "items"))
            fail_msg("split, and rest still has items: %s", text);
        json_object_set(got, "items", g->items);
    } else if (got && json_array_size(g->items)) {
        fail_msg("items handed over but not split: %s", text);
    }
    if (got) /* a refused item was handed over too */
        assert_int_equal(jsplit_count(s), json_array_size(g->items));
    jsplit_free(s);
    json_decref(g->items);
    return got;
}

/* Split `text` in pieces of every size from 1 to 40 and whole: each time the tree jansson
 * loads from the whole (or both reject it, reading every item). *nsplit: the items handed
 * over. */
static void agree(const char *text, size_t *nsplit)
{
    json_error_t je;
    json_t *want = json_loads(text, 0, &je);
    for (size_t piece = 0; piece <= 40; piece++) {
        struct got g = {0};
        struct err e;
        err_clear(&e);
        json_t *got = split_pieces(text, piece, &g, &e);
        if (nsplit)
            *nsplit = g.next;
        if (!want) {
            if (got)
                fail_msg("jansson rejects (%s), jsplit accepts: %s", je.text, text);
            if (!strstr(e.msg, "invalid JSON at byte"))
                fail_msg("no position in \"%s\" for %s", e.msg, text);
            continue;
        }
        if (!got)
            fail_msg("jansson accepts, jsplit rejects (%s) in pieces of %zu: %s", e.msg, piece,
                     text);
        if (!json_equal(want, got))
            fail_msg("different trees in pieces of %zu for: %s", piece, text);
        json_decref(got);
    }
    json_decref(want);
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

/* What is not split is loaded whole, as it was; items that are not objects are split like
 * any (their reader refuses them). */
static void test_whole(void **state)
{
    (void)state;
    size_t n;
    const char *whole[] = {
        "{\"items\":null}",              /* not an array */
        "{\"it\\u0065ms\":[{\"a\":1}]}", /* an escaped key */
        "{\"metadata\":{}}",             /* none */
        "[{\"a\":1}]",                   /* not an object */
        "{}",
        "{\"items\":{\"a\":[1]}}",
    };
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        agree(whole[i], &n);
        assert_int_equal(n, 0);
    }
    agree("{\"items\":[1,\"x,]\",true, null ,[2]]}", &n);
    assert_int_equal(n, 5);
}

/* A split list naming a member twice is refused: jansson keeps the last "items", and the
 * first may have been handed over already. */
static void test_twice(void **state)
{
    (void)state;
    const char *twice[] = {
        "{\"items\":[{\"a\":1}],\"items\":[{}]}",
        "{\"items\":[{\"a\":1}],\"it\\u0065ms\":[]}",
        "{\"it\\u0065ms\":[],\"items\":[{\"a\":1}]}",
        "{\"items\":null,\"items\":[{\"a\":1}]}",
        "{\"kind\":\"A\",\"items\":[],\"kind\":\"B\"}",
    };
    for (size_t i = 0; i < sizeof twice / sizeof twice[0]; i++) {
        json_error_t je;
        json_t *want = json_loads(twice[i], 0, &je);
        assert_non_null(want); /* jansson takes the last */
        json_decref(want);
        for (size_t piece = 0; piece < 8; piece++) {
            struct got g = {0};
            struct err e;
            err_clear(&e);
            assert_null(split_pieces(twice[i], piece, &g, &e));
            assert_int_equal(e.code, -EBADMSG);
            assert_non_null(strstr(e.msg, "named twice"));
        }
    }
}

/* Items go as soon as their last byte is in, with the members before them; when the kind
 * comes after the items they are held and go at the end with the whole list. */
static void test_streams(void **state)
{
    (void)state;
    const char *first = "{\"kind\":\"PodList\",\"metadata\":{},\"items\":[{\"a\":1},{\"b\":2}]}";
    const char *after = "{\"metadata\":{},\"items\":[{\"a\":1},{\"b\":2}],\"kind\":\"PodList\"}";
    for (size_t piece = 0; piece < 12; piece++) {
        struct got g = {.want_kind = "PodList"};
        struct err e;
        err_clear(&e);
        json_t *got = split_pieces(first, piece, &g, &e);
        assert_non_null(got);
        assert_int_equal(g.during_feed, 2);
        json_decref(got);
        g = (struct got){.want_kind = "PodList"};
        got = split_pieces(after, piece, &g, &e);
        assert_non_null(got);
        assert_int_equal(g.during_feed, 0);
        assert_int_equal(g.next, 2);
        json_decref(got);
    }
}

/* An item or the rest beyond max_hold is refused with -EFBIG; the list as a whole may be
 * larger. */
static void test_max_hold(void **state)
{
    (void)state;
    struct got g = {0};
    struct err e;
    err_clear(&e);
    g.items = json_array();
    struct jsplit *s = jsplit_new(NULL, 16, on_item, &g);
    const char *ok = "{\"items\":[{\"a\":1},{\"b\":2},{\"c\":3},{\"d\":4}]}"; /* 45 bytes */
    size_t len = strlen(ok);
    for (size_t i = 0; i < len; i += 3)
        assert_int_equal(jsplit_feed(s, ok + i, len - i < 3 ? len - i : 3, &e), 0);
    json_t *rest = jsplit_finish(s, &e);
    assert_non_null(rest);
    assert_int_equal(json_array_size(g.items), 4);
    json_decref(rest);
    jsplit_free(s);
    s = jsplit_new(NULL, 16, on_item, &g);
    const char *big = "{\"items\":[{\"a\":\"0123456789abcdef\"}]}";
    assert_int_equal(jsplit_feed(s, big, 20, &e), 0);
    assert_int_equal(jsplit_feed(s, big + 20, strlen(big) - 20, &e), -EFBIG);
    assert_non_null(strstr(e.msg, "list item larger than 16 bytes"));
    err_clear(&e);
    assert_null(jsplit_finish(s, &e)); /* the error sticks */
    assert_int_equal(e.code, -EFBIG);
    jsplit_free(s);
    s = jsplit_new(NULL, 16, on_item, &g); /* the same when the item comes in one piece */
    assert_int_equal(jsplit_feed(s, big, strlen(big), &e), -EFBIG);
    assert_non_null(strstr(e.msg, "list item larger than 16 bytes"));
    jsplit_free(s);
    json_decref(g.items);
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
        cmocka_unit_test(test_split),   cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_whole),   cmocka_unit_test(test_twice),
        cmocka_unit_test(test_streams), cmocka_unit_test(test_max_hold),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests_name("jsplit", tests, NULL, NULL);
}
