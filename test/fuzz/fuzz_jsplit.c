/*
 * Fuzz target for pkg/json/jsplit.h: on arbitrary bytes, fed in pieces of a size the first
 * byte picks, jsplit must never crash, leak or overrun, and reading every item must give what
 * jansson (json_loadb, flags 0) gives for the whole text: the same verdict, and the same tree
 * once the split items are put back as "items". The one refusal jansson does not make, a
 * split list naming a top-level member twice (jsplit.h), is checked against jansson's own
 * JSON_REJECT_DUPLICATES. A disagreement traps.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pkg/json/jsplit.h"

static int on_item(void *ud, const json_t *list, size_t i, const char *text, size_t n,
                   struct err *e)
{
    json_t *items = ud;
    (void)list;
    if (i != json_array_size(items))
        __builtin_trap();
    json_error_t je;
    json_t *it = json_loadb(text, n, JSON_DECODE_ANY, &je);
    if (!it)
        return err_set(e, -EBADMSG, "item: %s", je.text);
    json_array_append_new(items, it);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t piece = data[0] % 64; /* 0: whole */
    const char *p = (const char *)data + 1;
    size--;
    static const char *const needed[] = {"kind", "apiVersion", NULL};
    json_error_t je;
    json_t *want = json_loadb(p, size, 0, &je);
    json_t *items = json_array();
    struct jsplit *s = jsplit_new(needed, 1 << 20, on_item, items);
    struct err e;
    err_clear(&e);
    int rc = 0;
    for (size_t i = 0; i < size && rc == 0; i += piece ? piece : size)
        rc = jsplit_feed(s, p + i, piece && size - i > piece ? piece : size - i, &e);
    json_t *got = rc == 0 ? jsplit_finish(s, &e) : NULL;
    if (got && jsplit_did_split(s))
        json_object_set(got, "items", items);
    else if (got && json_array_size(items))
        __builtin_trap(); /* items handed over from a list that was not split */
    if (got && jsplit_count(s) != json_array_size(items))
        __builtin_trap();
    jsplit_free(s);
    json_decref(items);
    bool twice = !got && strstr(e.msg, "named twice");
    if (twice) { /* right when jansson refuses too, or would refuse duplicates */
        json_t *strict = want ? json_loadb(p, size, JSON_REJECT_DUPLICATES, &je) : NULL;
        if (strict)
            __builtin_trap();
    } else if (!want && got && strstr(je.text, "depth")) {
        /* an item's nesting counts from the item, 2 levels less (jsplit.h) */
    } else if (!want != !got || (want && !json_equal(want, got))) {
        __builtin_trap();
    }
    json_decref(want);
    json_decref(got);
    return 0;
}
