/*
 * Fuzz target for pkg/json/jscan.h and jdump.h: on arbitrary bytes jscan_rv() and
 * jscan_load() must never crash, leak or overrun, and must agree with jansson (json_loadb with
 * flags 0): the same verdict, the same metadata.resourceVersion, the same tree with its keys
 * in the same order. jdump_compact() must write what json_dumps(JSON_COMPACT) writes, for the
 * parsed tree and for the raw bytes as one string (unchecked, so also invalid UTF-8).
 * jscan_load_paths() must give jscan_load()'s verdict and what a filter of jansson's tree
 * keeps; jscan_paths_new_drop()'s sets, what a filter of that leaves out. jscan_rv_head() and
 * jscan_load_head(), which read a prefix, accept what jansson accepts, and on a text without
 * duplicate keys give what jansson's tree holds. A disagreement traps.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jdump.h"
#include "pkg/json/jscan.h"
#include "pkg/json/jsonx.h"

/* The paths jscan_load_paths() is fuzzed with: short keys the fuzzer finds, one level deep
 * to three, two sharing a prefix. */
static const char *const fuzz_paths[] = {"a", "b.c", "d.e.f", "d.g", "metadata.name", NULL};

static int seg_is(const char *path, unsigned lvl, const char *key)
{
    for (unsigned i = 0; i < lvl; i++)
        path = strchr(path, '.') + 1;
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    if (strlen(key) != n || memcmp(path, key, n) != 0)
        return 0;
    return dot ? 1 : 2; /* on the way, the last */
}

/* What jscan_load_paths() keeps of `v` (borrowed) for the fuzz_paths still matching at
 * segment `lvl` (a set bit each), written independently of it on the whole tree: members
 * named by a path's last segment whole, those on the way filtered, arrays transparent. */
static json_t *ref_filter(json_t *v, unsigned bits, unsigned lvl)
{
    if (json_is_array(v)) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(v); i++)
            json_array_append_new(a, ref_filter(json_array_get(v, i), bits, lvl));
        return a;
    }
    if (!json_is_object(v))
        return jx_deep_copy(v);
    json_t *o = json_object();
    const char *k;
    json_t *m;
    json_object_foreach(v, k, m)
    {
        unsigned nb = 0;
        int whole = 0;
        for (unsigned i = 0; fuzz_paths[i]; i++) {
            if (!(bits & (1u << i)))
                continue;
            int r = seg_is(fuzz_paths[i], lvl, k);
            whole |= r == 2;
            nb |= r == 1 ? 1u << i : 0;
        }
        if (whole)
            json_object_set_new(o, k, jx_deep_copy(m));
        else if (nb)
            json_object_set_new(o, k, ref_filter(m, nb, lvl + 1));
    }
    return o;
}

/* The drop paths jscan_paths_new_drop() is fuzzed with, over fuzz_paths and over all. */
static const char *const fuzz_drops[] = {"a", "d.e", "b.c.x", "m.a\\.b", NULL};

/* `v` (borrowed) less the members at the fuzz_drops still matching at segment `lvl` (a set bit
 * each), through objects only: a new tree, written independently of jscan. */
static json_t *ref_drop(json_t *v, unsigned bits, unsigned lvl)
{
    if (!json_is_object(v))
        return jx_deep_copy(v); /* arrays: nothing is dropped inside */
    static const char *const segs[][3] = {{"a"}, {"d", "e"}, {"b", "c", "x"}, {"m", "a.b"}};
    static const unsigned nseg[] = {1, 2, 3, 2};
    json_t *o = json_object();
    const char *k;
    json_t *m;
    json_object_foreach(v, k, m)
    {
        unsigned nb = 0;
        bool drop = false;
        for (unsigned i = 0; i < 4; i++) {
            if (!(bits & (1u << i)) || strcmp(segs[i][lvl], k) != 0)
                continue;
            drop |= lvl + 1 == nseg[i];
            nb |= lvl + 1 < nseg[i] ? 1u << i : 0;
        }
        if (!drop)
            json_object_set_new(o, k, ref_drop(m, nb, lvl + 1));
    }
    return o;
}

/* Trap unless `got` dumps as `want` does (both borrowed). */
static void same_dump(json_t *want, json_t *got)
{
    char *dw = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
    char *dg = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!dw || !dg || strcmp(dw, dg) != 0)
        __builtin_trap();
    free(dw);
    free(dg);
}

/* jscan_load_with(keep, fuzz_drops) against ref_drop over the tree jscan keeps of `keep`. */
static void check_drop(const char *p, size_t size, json_t *j, const char *const *keep)
{
    struct err e;
    struct jscan_paths *ps = NULL;
    if (jscan_paths_new_drop(keep, fuzz_drops, &ps, &e) < 0)
        __builtin_trap();
    json_t *f = jscan_load_with(p, size, ps, &e);
    jscan_paths_free(ps);
    if (!j != !f || (!f && e.code != -EBADMSG))
        __builtin_trap();
    if (j) {
        json_t *kept = keep ? ref_filter(j, (1u << 5) - 1, 0) : json_incref(j);
        json_t *want = ref_drop(kept, (1u << 4) - 1, 0);
        same_dump(want, f);
        json_decref(want);
        json_decref(kept);
    }
    json_decref(f);
}

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
    /* jscan_rv_head reads a prefix: accepts what jansson accepts, finds a resourceVersion
     * where jansson does (the first of duplicates may differ from jansson's last), and on
     * what it refuses returns a message and no string */
    /* without duplicate keys anywhere the prefix read gives what the whole text gives */
    json_t *nodup = j ? json_loadb(p, size, JSON_REJECT_DUPLICATES, &je) : NULL;
    rv = NULL;
    rc = jscan_rv_head(p, size, &rv, &e);
    if ((j && rc != 0) || (rc < 0 && (rc != -EBADMSG || rv || e.code != -EBADMSG)) ||
        (j && jx_resource_version(j) && !rv))
        __builtin_trap();
    if (nodup) {
        const char *want = jx_resource_version(nodup);
        if (!want != !rv || (want && strcmp(want, rv) != 0))
            __builtin_trap();
    }
    free(rv);
    /* jscan_load_head, the same for the paths' tree */
    struct jscan_paths *hps = NULL;
    if (jscan_paths_new(fuzz_paths, &hps, &e) < 0)
        __builtin_trap();
    json_t *h = jscan_load_head(p, size, hps, &e);
    jscan_paths_free(hps);
    if ((j && !h) || (!h && e.code != -EBADMSG))
        __builtin_trap();
    if (nodup) {
        json_t *want = ref_filter(nodup, (1u << 5) - 1, 0);
        same_dump(want, h);
        json_decref(want);
    }
    json_decref(h);
    json_decref(nodup);

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

    /* jscan_load_paths: the verdict of jscan_load, the tree the reference filter keeps */
    json_t *f = jscan_load_paths(p, size, fuzz_paths, &e);
    if (!j != !f || (!f && e.code != -EBADMSG))
        __builtin_trap();
    if (j) {
        json_t *want = ref_filter(j, (1u << 5) - 1, 0);
        same_dump(want, f);
        json_decref(want);
    }
    json_decref(f);
    check_drop(p, size, j, NULL);
    check_drop(p, size, j, fuzz_paths);

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
