/*
 * Fuzz target for pkg/json/jpack.h, differential against jansson: when the input parses
 * (json_loadb, flags 0), packing then unpacking it must give an equal tree with the same
 * compact dump (member order, integer vs real), and releasing it must give back every
 * reference it took (the table ends empty). Whatever the input, jpack_decode() and
 * jpack_get_str() and jpack_view() of the raw bytes, against a table holding the parsed
 * tree's strings, must not crash or overrun (and change nothing). A view of the packed
 * value (paths of its own members two deep, and fixed ones) must hold what each path finds
 * alone in the tree. A disagreement traps.
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

/* Whether `path` (dotted) finds `want` in the view v as in the tree: the same value, or both
 * nothing. */
static bool view_agrees(const json_t *tree, const json_t *v, const char *path)
{
    char buf[600];
    size_t len = strlen(path);
    if (len >= sizeof buf)
        return true;
    memcpy(buf, path, len + 1);
    const json_t *a = tree, *b = v;
    char *save = NULL;
    for (char *seg = strtok_r(buf, ".", &save); seg; seg = strtok_r(NULL, ".", &save)) {
        a = json_is_object(a) ? json_object_get(a, seg) : NULL;
        b = json_is_object(b) ? json_object_get(b, seg) : NULL;
    }
    return a ? b && json_equal(a, b) : !b;
}

/* The view of the packed value p at paths made of j's own member names (top and second
 * level, no '.' nor empty names, which a dotted path cannot name) and fixed ones. */
static void check_view(const struct jpack_tab *t, const json_t *j, const uint8_t *p, size_t n)
{
    char store[JPACK_VIEW_MAX][256];
    const char *paths[JPACK_VIEW_MAX + 1];
    size_t np = 0;
    static const char *const fixed[] = {"metadata.name", "status", "a.b.c", "metadata", NULL};
    for (size_t i = 0; fixed[i]; i++)
        paths[np++] = fixed[i];
    const char *k, *k2;
    json_t *m, *m2;
    json_object_foreach((json_t *)j, k, m)
    {
        if (np == JPACK_VIEW_MAX || !*k || strchr(k, '.') || strlen(k) > 120)
            continue;
        if (json_is_object(m) && json_object_size(m) > 0) {
            json_object_foreach(m, k2, m2)
            {
                if (np < JPACK_VIEW_MAX && *k2 && !strchr(k2, '.') && strlen(k2) <= 120) {
                    snprintf(store[np], sizeof store[np], "%s.%s", k, k2);
                    paths[np] = store[np];
                    np++;
                }
            }
        } else if (np < JPACK_VIEW_MAX) {
            snprintf(store[np], sizeof store[np], "%s", k);
            paths[np] = store[np];
            np++;
        }
    }
    paths[np] = NULL;
    json_t *v = jpack_view(t, p, n, paths);
    if (!json_is_object(j)) {
        if (v)
            __builtin_trap();
        return;
    }
    if (!v)
        __builtin_trap();
    for (size_t i = 0; i < np; i++)
        if (!view_agrees(j, v, paths[i]))
            __builtin_trap();
    json_decref(v);
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
        check_view(t, j, p2, n2);
    }
    /* the raw bytes as a packed value, against a table that holds strings */
    size_t before = jpack_tab_len(t);
    json_decref(jpack_decode(t, data, size));
    size_t sl;
    char scratch[JPACK_SCRATCH];
    jpack_get_str(t, data, size, (const char *const[]){"metadata", "name", NULL}, &sl, scratch);
    json_decref(
        jpack_view(t, data, size, (const char *const[]){"metadata.name", "spec", "a.b", NULL}));
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
