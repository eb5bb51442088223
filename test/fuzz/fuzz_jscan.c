/*
 * Fuzz target for pkg/json/jscan.h and jdump.h: on arbitrary bytes jscan_rv() and
 * jscan_load() must never crash, leak or overrun, and must agree with jansson (json_loadb with
 * flags 0): the same verdict, the same metadata.resourceVersion, the same tree with its keys
 * in the same order. jdump_compact() must write what json_dumps(JSON_COMPACT) writes, for the
 * parsed tree and for the raw bytes as one string (unchecked, so also invalid UTF-8).
 * A disagreement traps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jdump.h"
#include "pkg/json/jscan.h"
#include "pkg/json/jsonx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    json_error_t je;
    json_t *j = json_loadb(p, size, 0, &je);
    char *rv = NULL;
    struct err e;
    int rc = jscan_rv(p, size, &rv, &e);
    if (!j) {
        if (rc != -EBADMSG || rv || e.code != -EBADMSG)
            __builtin_trap();
    } else {
        const char *want = jx_resource_version(j);
        if (rc != 0 || !want != !rv || (want && strcmp(want, rv) != 0))
            __builtin_trap();
    }
    free(rv);

    json_t *l = jscan_load(p, size, &e);
    if (!j != !l || (!l && e.code != -EBADMSG))
        __builtin_trap();
    if (j) {
        char *dj = json_dumps(j, JSON_COMPACT);
        char *dl = json_dumps(l, JSON_COMPACT);
        if (!json_equal(j, l) || strcmp(dj, dl) != 0)
            __builtin_trap();
        /* jx_deep_copy: the same values in the same key order, as jansson's deep copy */
        json_t *c = jx_deep_copy(l);
        char *dc = json_dumps(c, JSON_COMPACT);
        if (!json_equal(c, l) || strcmp(dc, dl) != 0)
            __builtin_trap();
        free(dc);
        json_decref(c);
        free(dj);
        free(dl);
    }
    json_decref(l);

    json_t *raw = json_pack("[o]", json_stringn_nocheck(p, size));
    json_t *trees[] = {j, raw};
    for (size_t i = 0; i < 2; i++) {
        if (!trees[i])
            continue;
        size_t n = 0;
        char *a = json_dumps(trees[i], JSON_COMPACT);
        char *b = jdump_compact(trees[i], &n);
        if (!a != !b || (a && (strcmp(a, b) != 0 || n != strlen(a))))
            __builtin_trap();
        free(a);
        free(b);
    }
    json_decref(raw);
    json_decref(j);
    return 0;
}
