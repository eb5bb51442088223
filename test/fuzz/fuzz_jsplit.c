/*
 * Fuzz target for pkg/json/jsplit.h: on arbitrary bytes jsplit_list() and jsplit_item() must
 * never crash, leak or overrun, and reading every item must give what jansson (json_loadb,
 * flags 0) gives for the whole text: the same verdict, and the same tree once the split items
 * are put back as "items". A disagreement traps.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkg/json/jsplit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    json_error_t je;
    json_t *want = json_loadb(p, size, 0, &je);
    struct jsplit sp;
    struct err e;
    err_clear(&e);
    json_t *got = NULL;
    if (jsplit_list(p, size, &sp, &e) == 0) {
        got = json_deep_copy(sp.rest);
        json_t *items = json_array();
        for (size_t i = 0; i < sp.n && items; i++) {
            json_t *it = jsplit_item(&sp, i, &e);
            if (it) {
                json_array_append_new(items, it);
            } else {
                json_decref(items);
                items = NULL;
            }
        }
        /* split: rest holds no items (an empty array split out leaves none either) */
        bool split = sp.n || (want && json_object_get(want, "items") && json_is_object(got) &&
                              !json_object_get(got, "items"));
        if (!items) {
            json_decref(got);
            got = NULL;
        } else if (split) {
            json_object_set_new(got, "items", items);
        } else {
            json_decref(items);
        }
    }
    jsplit_release(&sp);
    if (!want != !got || (!got && e.code != -EBADMSG) || (want && !json_equal(want, got)))
        __builtin_trap();
    json_decref(want);
    json_decref(got);
    return 0;
}
