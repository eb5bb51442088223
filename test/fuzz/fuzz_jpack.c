/*
 * Fuzz target for pkg/json/jpack.h, differential against jansson: when the input parses
 * (json_loadb, flags 0), packing then unpacking it must give an equal tree with the same
 * compact dump (member order, integer vs real), and releasing it must give back every
 * reference it took (the table ends empty). Whatever the input, jpack_decode() and
 * jpack_get_str() of the raw bytes, against a table holding the parsed
 * tree's strings, must not crash or overrun (and the first two change nothing). A
 * disagreement traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jpack.h"

/* The depth of v's deepest value (v itself at 0), as jpack counts it. */
static int depth(const json_t *v)
{
    int d = 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m)
        {
            int md = depth(m) + 1;
            d = md > d ? md : d;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *m;
        json_array_foreach(v, i, m)
        {
            int md = depth(m) + 1;
            d = md > d ? md : d;
        }
    }
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct jpack_tab *t = jpack_tab_new();
    json_error_t je;
    json_t *j = json_loadb((const char *)data, size, 0, &je);
    uint8_t *p = NULL;
    size_t n = j ? jpack_encode(t, j, &p) : 0;
    if (j && !p && depth(j) <= JPACK_MAX_DEPTH)
        __builtin_trap(); /* only deeper values are refused (jansson reads 2,048 levels) */
    if (p) {
        json_t *back = jpack_decode(t, p, n);
        char *a = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        char *b = back ? json_dumps(back, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        if (!back || !json_equal(j, back) || !a || !b || strcmp(a, b) != 0)
            __builtin_trap();
        free(a);
        free(b);
        json_decref(back);
    }
    /* again: nested containers seen by the first encode are shared now */
    uint8_t *p2 = NULL;
    size_t n2 = p ? jpack_encode(t, j, &p2) : 0;
    if (p2) {
        json_t *back = jpack_decode(t, p2, n2);
        if (!back || !json_equal(j, back))
            __builtin_trap();
        json_decref(back);
    }
    /* the raw bytes as a packed value, against a table that holds strings */
    size_t before = jpack_tab_len(t);
    json_decref(jpack_decode(t, data, size));
    size_t sl;
    char scratch[JPACK_SCRATCH];
    jpack_get_str(t, data, size, (const char *const[]){"metadata", "name", NULL}, &sl, scratch);
    if (jpack_tab_len(t) != before)
        __builtin_trap();
    if (p) {
        jpack_release(t, p, n);
        free(p);
        jpack_release(t, p2, n2);
        free(p2);
        if (jpack_tab_len(t) != 0)
            __builtin_trap();
    }
    json_decref(j);
    jpack_tab_free(t);
    return 0;
}
