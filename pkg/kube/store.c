/*
 * store: see store.h. Objects live in a keyset of entries by key (pkg/util/keyset); an
 * entry holds the object (unpacked stores) or its jpack bytes and, while it is cached, the
 * decoded tree (packed stores). Every index is a keyset of its values, each with its keys
 * (one key, or a struct iset); index entries for an object are
 * recomputed from the stored (immutable) object when it is replaced or
 * removed.
 */
#include "pkg/kube/store.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jpack.h"
#include "pkg/json/jscan.h"
#include "pkg/util/keyset.h"
#include "pkg/util/strmap.h"
#include "pkg/util/uid.h"
#include "pkg/util/xalloc.h"

/* The keys of one index value. Most values have one key (a uid index: one object per uid),
 * which is then kept inside the value's record (struct ixval): a set would cost three more
 * allocations, about 56 B per object (docs/performance.md "Uids and timestamps packed as
 * numbers, index values of one key"). A second key makes it a set: a small array, or a keyset
 * of the key copies once it holds more than ISET_SMALL keys, so that removing a key from a big
 * set (every pod of a node, every idle copy of a worker) stays O(1). */
#define ISET_SMALL 8
struct iset {
    uint32_t n;         /* keys held */
    uint32_t cap;       /* of keys[] while small */
    struct keyset *big; /* non-NULL: the keys live here (owned copies, keyed by themselves) */
    char **keys;        /* small: owned copies */
};

/* One index value and its keys, an element of the index's keyset (keyed by the value): one
 * allocation holding the value and, while it has one key, that key. A strmap of value copies to
 * tagged key copies cost two allocations and a 24-byte slot per value, about 2 MB for the 50,000
 * indexed objects of bench-scale (docs/performance.md "Index records, long strings, pod records in
 * the stores"). */
struct ixval {
    struct iset *set; /* NULL: the one key follows the value */
    char v[];         /* the value and a NUL, then (set NULL) the key and a NUL */
};

struct store_index {
    char *name;
    store_index_fn fn;
    void *ud;
    struct keyset map; /* struct ixval by its value */
    char **view;       /* what fn reads (store_index_view), NULL-terminated; NULL: anything */
};

/* One stored object. */
struct sent {
    json_t *obj;    /* unpacked: the object; packed: the decoded tree while cached, or NULL */
    uint32_t dpos;  /* packed: 1 + position in store.dec while obj is cached, else 0 */
    uint32_t len;   /* packed: bytes in blob; 0 = unpacked entry */
    uint8_t blob[]; /* the len packed bytes, then the object's key and a NUL: the key map
                       (borrowed keys) points there, one allocation less per object */
};

static const char *sent_key(const struct sent *e)
{
    return (const char *)e->blob + e->len;
}

static const char *sent_key_of(const void *e)
{
    return sent_key(e);
}

/* An entry of n packed bytes and `key`, the bytes not yet written. */
static struct sent *sent_alloc(size_t n, const char *key)
{
    size_t kn = strlen(key);
    struct sent *e = xmalloc(sizeof(*e) + n + kn + 1);
    e->obj = NULL;
    e->dpos = 0;
    e->len = (uint32_t)n;
    memcpy(e->blob + n, key, kn + 1);
    return e;
}

struct store {
    struct keyset objs; /* struct sent by its key (sent_key) */
    struct store_index *idx;
    size_t nidx;
    store_project_fn project;
    void *project_ud;
    bool packed;
    struct jpack_tab *tab; /* packed: the intern table */
    bool own_tab;
    const char **reads; /* opts->reads and the store's own paths (borrowed strings), or NULL */
    struct jscan_paths *reads_c; /* reads and store_drops(), split once (NULL: neither) */
    struct sent **dec;           /* packed entries whose decoded tree is cached */
    uint8_t *dused;              /* per dec[i]: read since the last store_trim(s, false) */
    size_t ndec, capdec;
    size_t dreads; /* uses of the decoded cache (store_decoded_reads) */
};

/* ---- entries ---------------------------------------------------------------- */

static void dec_add(struct store *s, struct sent *e)
{
    if (s->ndec == s->capdec) {
        s->capdec = s->capdec ? s->capdec * 2 : 64;
        s->dec = xrealloc(s->dec, s->capdec * sizeof(*s->dec));
        s->dused = xrealloc(s->dused, s->capdec);
    }
    s->dused[s->ndec] = 1;
    s->dreads++;
    s->dec[s->ndec++] = e;
    e->dpos = (uint32_t)s->ndec;
}

/* A read of the entry's cached tree, if it has one: kept past the next TTL trim, and counted.
 * The decoded cache is not observable state, hence the const store. */
static void dec_use(const struct store *cs, const struct sent *e)
{
    struct store *s = (struct store *)cs;
    if (e->dpos) {
        s->dused[e->dpos - 1] = 1;
        s->dreads++;
    }
}

static void dec_del(struct store *s, struct sent *e)
{
    if (!e->dpos)
        return;
    struct sent *last = s->dec[--s->ndec];
    s->dec[e->dpos - 1] = last;
    s->dused[e->dpos - 1] = s->dused[s->ndec];
    last->dpos = e->dpos;
    e->dpos = 0;
}

/* A packed entry holding a copy of p[0..n) (n <= UINT32_MAX; its table references become the
 * entry's), no tree cached. */
static struct sent *entry_of_bytes(const uint8_t *p, size_t n, const char *key)
{
    struct sent *pe = sent_alloc(n, key);
    memcpy(pe->blob, p, n);
    return pe;
}

/* A packed entry for obj (its tree not kept: obj NULL), or NULL when obj stays whole. */
static struct sent *entry_pack(struct store *s, const json_t *obj, const char *key)
{
    uint8_t *bytes = NULL;
    size_t n = jpack_encode(s->tab, obj, &bytes);
    if (!n || n > UINT32_MAX) { /* not a size an object has; keep it whole */
        jpack_release(s->tab, bytes, n);
        free(bytes);
        return NULL;
    }
    struct sent *pe = entry_of_bytes(bytes, n, key);
    free(bytes);
    return pe;
}

/*
 * A new entry for the projected object p (a reference is taken). A packed store packs it now
 * (lazy = false: a list's items, allocated together) or, for a watch event (lazy), when the
 * tree is trimmed: an object being worked on changes several times within seconds and is read
 * after each change, and packing each version only to decode it again cost more than the
 * rest of a store update (docs/performance.md "Packed by default").
 */
static struct sent *entry_new(struct store *s, json_t *p, bool lazy, const char *key)
{
    struct sent *e = s->packed && !lazy ? entry_pack(s, p, key) : NULL;
    if (!e) /* unpacked store, packed at its trim (lazy), or whole for good */
        e = sent_alloc(0, key);
    e->obj = json_incref(p);
    if (s->packed && (lazy || e->len))
        dec_add(s, e); /* p is the decoded tree until the next trim, packed then if lazy */
    return e;
}

static void entry_free(struct store *s, struct sent *e)
{
    if (!e)
        return;
    if (e->len)
        jpack_release(s->tab, e->blob, e->len);
    dec_del(s, e);
    json_decref(e->obj);
    free(e);
}

/* The entry's object, decoded and cached when packed (borrowed). */
static json_t *entry_obj(const struct store *cs, struct sent *e)
{
    if (!e)
        return NULL;
    struct store *s = (struct store *)cs; /* the decoded cache is not observable state */
    if (e->obj || !e->len) {
        dec_use(s, e);
        return e->obj;
    }
    e->obj = jpack_decode(s->tab, e->blob, e->len);
    if (e->obj)
        dec_add(s, e);
    return e->obj;
}

static const char *rv_of(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

/* The entry's metadata.resourceVersion without decoding it; *n its length. A value packed as
 * a number (shaped as a uid or a timestamp) is written into `scratch`. */
static const char *entry_rv(const struct store *s, const struct sent *e, size_t *n,
                            char scratch[JPACK_SCRATCH])
{
    if (e->obj) {
        const char *rv = rv_of(e->obj);
        *n = rv ? strlen(rv) : 0;
        return rv;
    }
    static const char *const path[] = {"metadata", "resourceVersion", NULL};
    const char *rv = jpack_get_str(s->tab, e->blob, e->len, path, n, scratch);
    if (rv)
        *n = strnlen(rv, *n); /* as the tree's C string reads */
    return rv;
}

/* ---- values ---------------------------------------------------------------- */

void store_values_add(struct store_values *vals, const char *value)
{
    if (!value)
        return;
    for (size_t i = 0; i < vals->n; i++)
        if (strcmp(vals->v[i], value) == 0)
            return;
    if (vals->n == vals->cap) {
        vals->cap = vals->cap ? vals->cap * 2 : 4;
        vals->v = xrealloc(vals->v, vals->cap * sizeof(*vals->v));
    }
    vals->v[vals->n++] = xstrdup(value);
}

static void values_release(struct store_values *vals)
{
    for (size_t i = 0; i < vals->n; i++)
        free(vals->v[i]);
    free(vals->v);
    memset(vals, 0, sizeof(*vals));
}

/* ---- indexes --------------------------------------------------------------- */

static const char *ixval_value(const void *x)
{
    return ((const struct ixval *)x)->v;
}

/* An index value as the index keeps it. A uid (the uid and owner-uid indexes: most index
 * values) is a marker and its 16 bytes in 22 characters of six bits each: 24 bytes instead of
 * 37, which puts a record with a namespace/name key in malloc's next smaller size (64 instead
 * of 80 bytes; docs/performance.md "Own fields as references"). Any other value is kept as it
 * is, or behind a second marker when it begins with either marker, so that no two values have
 * one form. Returns `value`, `buf`, or a copy in *owned (the caller frees it). */
#define IX_UID     '\x01'
#define IX_ESC     '\x02'
#define IX_KEY_MAX 24
static const char *ix_key(const char *value, char buf[IX_KEY_MAX], char **owned)
{
    *owned = NULL;
    uint8_t b[16];
    size_t n = strlen(value);
    if (uid_to_bytes(value, n, b)) {
        uint32_t acc = 0;
        int bits = 0, o = 0;
        buf[o++] = IX_UID;
        for (int i = 0; i < 16; i++) { /* six bits at a time, the last two padded */
            acc = acc << 8 | b[i];
            for (bits += 8; bits >= 6; bits -= 6)
                buf[o++] = (char)('0' + ((acc >> (bits - 6)) & 63));
        }
        buf[o++] = (char)('0' + ((acc << (6 - bits)) & 63));
        buf[o] = '\0';
        return buf;
    }
    if (value[0] != IX_UID && value[0] != IX_ESC)
        return value;
    *owned = xmalloc(n + 2);
    (*owned)[0] = IX_ESC;
    memcpy(*owned + 1, value, n + 1);
    return *owned;
}

/* The one key of x (set NULL). */
static const char *ixval_one(const struct ixval *x)
{
    return x->v + strlen(x->v) + 1;
}

static struct ixval *ixval_new(const char *value, const char *key)
{
    size_t vn = strlen(value) + 1, kn = strlen(key) + 1;
    struct ixval *x = xmalloc(sizeof(*x) + vn + kn);
    x->set = NULL;
    memcpy(x->v, value, vn);
    memcpy(x->v + vn, key, kn);
    return x;
}

static void iset_free(struct iset *set)
{
    if (!set)
        return;
    if (set->big) {
        keyset_free_elems(set->big, free);
        free(set->big);
    }
    for (uint32_t i = 0; !set->big && i < set->n; i++)
        free(set->keys[i]);
    free(set->keys);
    free(set);
}

static void ixval_free(void *p)
{
    struct ixval *x = p;
    if (x)
        iset_free(x->set);
    free(x);
}

/* Append a key copy (taken) to a small set. */
static void iset_push(struct iset *set, char *owned)
{
    if (set->n == set->cap) {
        set->cap = set->cap ? set->cap * 2 : 2;
        set->keys = xrealloc(set->keys, set->cap * sizeof(*set->keys));
    }
    set->keys[set->n++] = owned;
}

static void iset_add(struct iset *set, const char *key)
{
    if (set->big) {
        if (!keyset_get(set->big, key)) {
            keyset_put(set->big, xstrdup(key));
            set->n++;
        }
        return;
    }
    for (uint32_t i = 0; i < set->n; i++)
        if (strcmp(set->keys[i], key) == 0)
            return;
    if (set->n == ISET_SMALL) {
        set->big = xcalloc(1, sizeof(*set->big));
        keyset_init(set->big, keyset_str_key);
        for (uint32_t i = 0; i < set->n; i++)
            keyset_put(set->big, set->keys[i]); /* the copy moves */
        free(set->keys);
        set->keys = NULL;
        set->cap = 0;
        keyset_put(set->big, xstrdup(key));
        set->n++;
        return;
    }
    iset_push(set, xstrdup(key));
}

static void iset_del(struct iset *set, const char *key)
{
    if (set->big) {
        char *had = keyset_del(set->big, key);
        if (had)
            set->n--;
        free(had);
        return;
    }
    for (uint32_t i = 0; i < set->n; i++) {
        if (strcmp(set->keys[i], key) == 0) {
            free(set->keys[i]);
            set->keys[i] = set->keys[--set->n];
            return;
        }
    }
}

/* Add key under each of vals (released). */
static void index_add_values(struct store_index *ix, const char *key, struct store_values *vals)
{
    for (size_t i = 0; i < vals->n; i++) {
        char buf[IX_KEY_MAX], *owned;
        const char *v = ix_key(vals->v[i], buf, &owned);
        struct ixval *x = keyset_get(&ix->map, v);
        if (!x) {
            keyset_put(&ix->map, ixval_new(v, key));
            free(owned);
            continue;
        }
        free(owned);
        if (!x->set) {
            const char *one = ixval_one(x);
            if (strcmp(one, key) == 0)
                continue;
            /* the record keeps the old key's bytes (unused now): a smaller copy would be
             * a new element to put in place of this one */
            x->set = xcalloc(1, sizeof(*x->set));
            iset_push(x->set, xstrdup(one));
        }
        iset_add(x->set, key);
    }
    values_release(vals);
}

static void index_insert(struct store_index *ix, const char *key, json_t *obj)
{
    struct store_values vals = {0};
    ix->fn(obj, &vals, ix->ud);
    index_add_values(ix, key, &vals);
}

static void index_remove(struct store_index *ix, const char *key, json_t *obj)
{
    struct store_values vals = {0};
    ix->fn(obj, &vals, ix->ud);
    for (size_t i = 0; i < vals.n; i++) {
        char buf[IX_KEY_MAX], *owned;
        const char *v = ix_key(vals.v[i], buf, &owned);
        struct ixval *x = keyset_get(&ix->map, v);
        if (x && !x->set) {
            if (strcmp(ixval_one(x), key) == 0)
                ixval_free(keyset_del(&ix->map, v));
        } else if (x) {
            iset_del(x->set, key);
            if (x->set->n == 0)
                ixval_free(keyset_del(&ix->map, v));
        }
        free(owned);
    }
    values_release(&vals);
}

static void indexes_update(struct store *s, const char *key, json_t *old, json_t *new_obj)
{
    for (size_t i = 0; i < s->nidx; i++) {
        if (old)
            index_remove(&s->idx[i], key, old);
        if (new_obj)
            index_insert(&s->idx[i], key, new_obj);
    }
}

/* Split the dotted path into parts[0..8) (NULL-terminated) in buf, as get_path() reads it
 * (empty parts skipped). The number of parts, or -1 when it is longer or deeper than that. */
static int split_path(const char *dotted, char (*buf)[256], const char *parts[9])
{
    size_t len = strlen(dotted);
    if (len >= sizeof *buf)
        return -1;
    memcpy(*buf, dotted, len + 1);
    int np = 0;
    char *save = NULL;
    for (char *part = strtok_r(*buf, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
        if (np == 8)
            return -1;
        parts[np++] = part;
    }
    parts[np] = NULL;
    return np;
}

/* The members at `paths` of a packed entry decoded alone, in one walk (store_get_view), or
 * NULL when there are more paths than a view takes (the caller reads the whole object then). */
static json_t *entry_view(const struct store *s, const struct sent *e, const char *const *paths)
{
    return jpack_view(s->tab, e->blob, e->len, paths);
}

/* Free an index's view (NULL is fine). */
static void view_free(char **view)
{
    for (size_t j = 0; view && view[j]; j++)
        free(view[j]);
    free(view);
}

/* A string at a packed entry's path as an index value (copied: store_values_add wants a
 * C string). `nonempty`: skip "" as store_index_by_field does. */
static void packed_value(const struct store *s, const struct sent *e, const char *const *path,
                         bool nonempty, struct store_values *vals)
{
    size_t n = 0;
    char scratch[JPACK_SCRATCH];
    const char *v = jpack_get_str(s->tab, e->blob, e->len, path, &n, scratch);
    if (!v)
        return;
    char small[128];
    char *c = n < sizeof small ? small : xmalloc(n + 1);
    memcpy(c, v, n);
    c[n] = '\0'; /* a NUL inside cuts it, as json_string_value() of the tree does */
    if (!nonempty || c[0])
        store_values_add(vals, c);
    if (c != small)
        free(c);
}

/*
 * The values of index ix for a packed entry without decoding it, for the helpers of store.h
 * (the indexes of the big kinds). false when ix's function is another one: its values need the
 * tree.
 */
static bool packed_values(const struct store *s, const struct store_index *ix, const struct sent *e,
                          struct store_values *vals)
{
    if (ix->fn == store_index_by_label) {
        const char *const path[] = {"metadata", "labels", ix->ud, NULL};
        packed_value(s, e, path, false, vals);
        return true;
    }
    if (ix->fn == store_index_by_owner_uid) {
        static const char *const path[] = {"metadata", "ownerReferences", NULL};
        json_t *refs = jpack_get(s->tab, e->blob, e->len, path), *ref;
        size_t i;
        json_array_foreach(refs, i, ref)
        {
            store_values_add(vals, json_string_value(json_object_get(ref, "uid")));
        }
        json_decref(refs);
        return true;
    }
    if (ix->fn == store_index_by_field) {
        char buf[256];
        const char *path[9];
        int np = split_path(ix->ud, &buf, path);
        if (np < 0)
            return false;
        if (np) /* no part: the object itself, never a string */
            packed_value(s, e, path, true, vals);
        return true;
    }
    return false;
}

/* Index a packed entry new to the store (its tree not decoded when no index needs one). */
static void indexes_insert_packed(struct store *s, const char *key, const struct sent *e)
{
    json_t *tree = NULL;
    for (size_t i = 0; i < s->nidx; i++) {
        struct store_index *ix = &s->idx[i];
        struct store_values vals = {0};
        if (!packed_values(s, ix, e, &vals)) {
            json_t *view = ix->view ? entry_view(s, e, (const char *const *)ix->view) : NULL;
            if (!view && !tree)
                tree = jpack_decode(s->tab, e->blob, e->len);
            if (view || tree)
                ix->fn(view ? view : tree, &vals, ix->ud);
            json_decref(view);
        }
        index_add_values(ix, key, &vals);
    }
    json_decref(tree);
}

static struct store_index *index_find(const struct store *s, const char *name)
{
    for (size_t i = 0; i < s->nidx; i++)
        if (strcmp(s->idx[i].name, name) == 0)
            return &s->idx[i];
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------- */

/* What the store itself reads of an object (its key, diffs and typing). */
static const char *const own_reads[] = {"kind",
                                        "apiVersion",
                                        "metadata.name",
                                        "metadata.namespace",
                                        "metadata.uid",
                                        "metadata.resourceVersion",
                                        NULL};

/* reads and own_reads, each once: a new array of borrowed strings; NULL when reads is. */
static const char **reads_with_own(const char *const *reads)
{
    if (!reads)
        return NULL;
    size_t n = 0;
    while (reads[n])
        n++;
    const char **all = xcalloc(n + sizeof own_reads / sizeof own_reads[0], sizeof(*all));
    memcpy(all, reads, n * sizeof(*all));
    for (size_t i = 0; own_reads[i]; i++) {
        size_t j = 0;
        while (j < n && strcmp(all[j], own_reads[i]) != 0)
            j++;
        if (j == n)
            all[n++] = own_reads[i];
    }
    return all;
}

int store_reads_check(const char *const *reads, struct err *e)
{
    const char **all = reads_with_own(reads);
    int rc = jscan_paths_check(all, e);
    free(all);
    return rc;
}

const char *const *store_reads(const struct store *s)
{
    return s->reads;
}

/* What store_project_lean() drops, as jscan drop paths. */
static const char *const lean_drops[] = {
    "metadata.managedFields",
    "metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration", NULL};

const char *const *store_drops(const struct store *s)
{
    return s->project == store_project_lean ? lean_drops : NULL;
}

struct store *store_new(const struct store_opts *opts)
{
    struct store *s = xcalloc(1, sizeof(*s));
    keyset_init(&s->objs, sent_key_of);
    if (opts) {
        s->project = opts->project;
        s->project_ud = opts->project_ud;
        s->packed = opts->packed;
        s->tab = opts->tab;
        /* a packed store builds its list items by its own walk: reads would make its watch
         * events (store_reads) differ from its listed objects */
        s->reads = opts->project && !opts->packed ? reads_with_own(opts->reads) : NULL;
        /* only beyond store_reads_check()'s limits, which informer_new() checks first */
        int rc = jscan_paths_new_drop(s->reads, store_drops(s), &s->reads_c, NULL);
        if (rc < 0) {
            free(s->reads);
            s->reads = NULL;
        }
    }
    if (s->packed && !s->tab) {
        s->tab = jpack_tab_new();
        s->own_tab = true;
    }
    return s;
}

static int free_entry_cb(void *val, void *ud)
{
    entry_free(ud, val);
    return 0;
}

void store_free(struct store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nidx; i++) {
        free(s->idx[i].name);
        keyset_free_elems(&s->idx[i].map, ixval_free);
        view_free(s->idx[i].view);
    }
    free(s->idx);
    keyset_foreach(&s->objs, free_entry_cb, s);
    keyset_free(&s->objs);
    free(s->dec);
    free(s->dused);
    free(s->reads);
    jscan_paths_free(s->reads_c);
    if (s->own_tab)
        jpack_tab_free(s->tab);
    free(s);
}

size_t store_trim(struct store *s, bool all)
{
    size_t dropped = 0;
    for (size_t i = 0; i < s->ndec;) {
        struct sent *e = s->dec[i];
        if (!all && s->dused[i]) {
            s->dused[i] = 0; /* a second chance: kept until the next trim unless read again */
            i++;
            continue;
        }
        json_t *obj = e->obj;
        dec_del(s, e); /* moves the last one to i */
        if (!e->len) { /* not packed yet (entry_new) */
            /* the projection keeps the key (store.h); one that did not stays whole */
            char *key = store_key_of(obj, NULL);
            struct sent *pe =
                key && keyset_get(&s->objs, key) == e ? entry_pack(s, obj, key) : NULL;
            if (pe) {
                keyset_put(&s->objs, pe);
                free(e);
            }
            free(key);
            if (!pe)
                continue; /* stays whole (out of the cached trees: never trimmed again) */
        } else {
            e->obj = NULL;
        }
        json_decref(obj);
        dropped++;
    }
    return dropped;
}

size_t store_decoded(const struct store *s)
{
    return s->ndec;
}

size_t store_decoded_reads(const struct store *s)
{
    return s->dreads;
}

char *store_key_of(const json_t *obj, struct err *e)
{
    json_t *md = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    if (!name || !*name) {
        err_set(e, -EINVAL, "object has no metadata.name");
        return NULL;
    }
    if (ns && *ns)
        return xasprintf("%s/%s", ns, name);
    return xstrdup(name);
}

struct index_all {
    struct store *s;
    struct store_index *ix;
};

static int index_all_cb(void *val, void *ud)
{
    struct index_all *a = ud;
    json_t *obj = entry_obj(a->s, val);
    if (obj)
        index_insert(a->ix, sent_key(val), obj);
    return 0;
}

int store_add_index(struct store *s, const char *name, store_index_fn fn, void *ud, struct err *e)
{
    if (index_find(s, name))
        return err_set(e, -EEXIST, "store index %s already registered", name);
    s->idx = xrealloc(s->idx, (s->nidx + 1) * sizeof(*s->idx));
    struct store_index *ix = &s->idx[s->nidx++];
    ix->name = xstrdup(name);
    ix->fn = fn;
    ix->ud = ud;
    ix->view = NULL;
    keyset_init(&ix->map, ixval_value);
    struct index_all a = {s, ix};
    keyset_foreach(&s->objs, index_all_cb, &a);
    return 0;
}

/* ---- mutation -------------------------------------------------------------- */

int store_index_view(struct store *s, const char *name, const char *const *paths)
{
    struct store_index *ix = index_find(s, name);
    if (!ix)
        return -ENOENT;
    view_free(ix->view);
    ix->view = NULL;
    if (!paths)
        return 0;
    size_t n = 0;
    while (paths[n])
        n++;
    ix->view = xcalloc(n + 1, sizeof(*ix->view));
    for (size_t j = 0; j < n; j++)
        ix->view[j] = xstrdup(paths[j]);
    return 0;
}

json_t *store_project(struct store *s, json_t *obj)
{
    json_t *p = s->project ? s->project(obj, s->project_ud) : NULL;
    return p ? p : json_incref(obj);
}

int store_upsert(struct store *s, json_t *obj, json_t **stored, json_t **old, struct err *e)
{
    if (stored)
        *stored = NULL;
    if (old)
        *old = NULL;
    char *key = store_key_of(obj, e);
    if (!key)
        return -EINVAL;
    json_t *p = store_project(s, obj);
    struct sent *pe = keyset_get(&s->objs, key);
    json_t *prev = json_incref(entry_obj(s, pe));
    indexes_update(s, key, prev, p);
    struct sent *ne = entry_new(s, p, true, key);
    keyset_put(&s->objs, ne);
    entry_free(s, pe);
    if (stored)
        *stored = p;
    else
        json_decref(p);
    if (old)
        *old = prev;
    else
        json_decref(prev);
    free(key);
    return 0;
}

int store_delete_key(struct store *s, const char *key, json_t **old)
{
    if (old)
        *old = NULL;
    struct sent *pe = keyset_get(&s->objs, key);
    if (!pe)
        return -ENOENT;
    json_t *prev = json_incref(entry_obj(s, pe));
    indexes_update(s, key, prev, NULL);
    keyset_del(&s->objs, key);
    entry_free(s, pe);
    if (old)
        *old = prev;
    else
        json_decref(prev);
    return 0;
}

int store_delete(struct store *s, json_t *obj, json_t **old, struct err *e)
{
    if (old)
        *old = NULL;
    char *key = store_key_of(obj, e);
    if (!key)
        return -EINVAL;
    store_delete_key(s, key, old);
    free(key);
    return 0;
}

/* ---- reads ----------------------------------------------------------------- */

json_t *store_get(const struct store *s, const char *key)
{
    return entry_obj(s, keyset_get(&s->objs, key));
}

json_t *store_get_ref(const struct store *s, const char *key)
{
    struct sent *e = keyset_get(&s->objs, key);
    if (!e)
        return NULL;
    if (e->obj || !e->len) { /* unpacked, or cached: a read like store_get's */
        dec_use(s, e);
        return json_incref(e->obj);
    }
    return jpack_decode(s->tab, e->blob, e->len);
}

json_t *store_get_view(const struct store *s, const char *key, const char *const *paths)
{
    struct sent *e = keyset_get(&s->objs, key);
    if (!e || e->obj || !e->len)
        return store_get_ref(s, key); /* the whole object is at hand */
    json_t *v = entry_view(s, e, paths);
    return v ? v : store_get_ref(s, key);
}

size_t store_len(const struct store *s)
{
    return keyset_len(&s->objs);
}

struct foreach_ctx {
    const struct store *s;
    int (*fn)(const char *key, json_t *obj, void *ud);
    void *ud;
};

static int foreach_cb(void *val, void *ud)
{
    struct foreach_ctx *c = ud;
    json_t *obj = entry_obj(c->s, val);
    return obj ? c->fn(sent_key(val), obj, c->ud) : 0;
}

int store_foreach(const struct store *s, int (*fn)(const char *key, json_t *obj, void *ud),
                  void *ud)
{
    struct foreach_ctx c = {s, fn, ud};
    return keyset_foreach(&s->objs, foreach_cb, &c);
}

static int keys_cb(void *val, void *ud)
{
    json_array_append_new(ud, json_string(sent_key(val)));
    return 0;
}

struct key_walk {
    int (*fn)(const char *key, void *ud);
    void *ud;
};

static int key_walk_cb(void *val, void *ud)
{
    const struct key_walk *w = ud;
    return w->fn(sent_key(val), w->ud);
}

int store_foreach_key(const struct store *s, int (*fn)(const char *key, void *ud), void *ud)
{
    struct key_walk w = {fn, ud};
    return keyset_foreach(&s->objs, key_walk_cb, &w);
}

json_t *store_keys(const struct store *s)
{
    json_t *arr = json_array();
    keyset_foreach(&s->objs, keys_cb, arr);
    return arr;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct key_list {
    const char **keys;
    size_t *n;
};

static int collect_key(void *key, void *ud)
{
    struct key_list *l = ud;
    l->keys[(*l->n)++] = key;
    return 0;
}

/* The sorted keys of one index value; *n = count. NULL array when none. */
static const char **index_lookup(const struct store *s, const char *index, const char *value,
                                 size_t *n, int *rc, struct err *e)
{
    *n = 0;
    *rc = 0;
    struct store_index *ix = index_find(s, index);
    if (!ix) {
        *rc = err_set(e, -ENOENT, "store has no index %s", index);
        return NULL;
    }
    char buf[IX_KEY_MAX], *owned = NULL;
    const struct ixval *x = value ? keyset_get(&ix->map, ix_key(value, buf, &owned)) : NULL;
    free(owned);
    if (x && !x->set) {
        const char **keys = xcalloc(1, sizeof(*keys));
        keys[(*n)++] = ixval_one(x);
        return keys;
    }
    const struct iset *set = x ? x->set : NULL;
    if (!set || set->n == 0)
        return NULL;
    const char **keys = xcalloc(set->n, sizeof(*keys));
    if (set->big)
        keyset_foreach(set->big, collect_key, &(struct key_list){keys, n});
    else
        for (uint32_t i = 0; i < set->n; i++)
            keys[(*n)++] = set->keys[i];
    qsort(keys, *n, sizeof(*keys), cmp_str);
    return keys;
}

json_t *store_by_index(const struct store *s, const char *index, const char *value, struct err *e)
{
    size_t n;
    int rc;
    const char **keys = index_lookup(s, index, value, &n, &rc, e);
    if (rc)
        return NULL;
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *obj = store_get(s, keys[i]);
        if (obj)
            json_array_append(arr, obj);
    }
    free(keys);
    return arr;
}

int store_index_count(const struct store *s, const char *index, const char *value, size_t *n,
                      struct err *e)
{
    *n = 0;
    struct store_index *ix = index_find(s, index);
    if (!ix)
        return err_set(e, -ENOENT, "store has no index %s", index);
    char buf[IX_KEY_MAX], *owned = NULL;
    const struct ixval *x = value ? keyset_get(&ix->map, ix_key(value, buf, &owned)) : NULL;
    free(owned);
    *n = !x ? 0 : !x->set ? 1 : x->set->n;
    return 0;
}

json_t *store_index_keys(const struct store *s, const char *index, const char *value, struct err *e)
{
    size_t n;
    int rc;
    const char **keys = index_lookup(s, index, value, &n, &rc, e);
    if (rc)
        return NULL;
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_string(keys[i]));
    free(keys);
    return arr;
}

/* ---- replace --------------------------------------------------------------- */

static bool obj_changed(const json_t *old, const json_t *new_obj)
{
    const char *a = rv_of(old), *b = rv_of(new_obj);
    if (a && b)
        return strcmp(a, b) != 0;
    return !json_equal((json_t *)old, (json_t *)new_obj);
}

/* Whether the packed entry pe differs from the stored object `old` (as obj_changed). */
static bool entry_changed(const struct store *s, const json_t *old, const struct sent *pe)
{
    size_t n = 0;
    char scratch[JPACK_SCRATCH];
    const char *a = rv_of(old), *b = entry_rv(s, pe, &n, scratch);
    if (a && b)
        return strlen(a) != n || memcmp(a, b, n) != 0;
    json_t *t = jpack_decode(s->tab, pe->blob, pe->len);
    bool changed = !json_equal((json_t *)old, t);
    json_decref(t);
    return changed;
}

struct pending_event {
    enum store_event_type type;
    json_t *old, *new_obj; /* owned references */
    const char *key;       /* new_obj NULL for an ADD or UPDATE: the object is read from the store
                              when the event is delivered (a packed list's: one tree at a time) */
};

struct replace_ctx {
    struct store *s;
    struct keyset *next;
    struct pending_event *ev;
    size_t nev;
};

/* Entries of the old map not listed: DELETE events (the entry is freed). */
static int replace_gone_cb(void *val, void *ud)
{
    struct replace_ctx *c = ud;
    const char *key = sent_key(val);
    if (keyset_get(c->next, key))
        return 0;
    json_t *cur = entry_obj(c->s, val);
    indexes_update(c->s, key, cur, NULL);
    c->ev[c->nev++] = (struct pending_event){STORE_DELETE, json_incref(cur), NULL};
    entry_free(c->s, val);
    return 0;
}

/* One listed object. */
struct list_item {
    char *key;
    char *rv;        /* unchanged: the stored object's resourceVersion when it was listed */
    json_t *p;       /* the projection; NULL = unchanged, or packed from its text: */
    struct sent *pe; /* the packed entry made from the item's text (store_list_add_text) */
};

struct store_list {
    struct store *s;
    struct strmap seen; /* key -> 1 + its index in items */
    struct list_item *items;
    size_t n, cap;
    struct jpack_build *b;   /* store_list_add_text's builder, reused */
    const char *const *view; /* store_list_set_view (borrowed), NULL: whole objects */
};

struct store_list *store_list_new(struct store *s)
{
    struct store_list *l = xcalloc(1, sizeof(*l));
    l->s = s;
    strmap_init(&l->seen);
    return l;
}

void store_list_free(struct store_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].key);
        free(l->items[i].rv);
        json_decref(l->items[i].p);
        entry_free(l->s, l->items[i].pe);
    }
    free(l->items);
    strmap_free(&l->seen, NULL);
    jpack_build_free(l->b);
    free(l);
}

void store_list_set_view(struct store_list *l, const char *const *paths)
{
    l->view = paths;
}

size_t store_list_len(const struct store_list *l)
{
    return l->n;
}

/* The list's slot for `key` (consumed): a new one, or the earlier item's emptied (listed
 * twice: the later item wins). *fresh tells which. */
static struct list_item *list_slot(struct store_list *l, char *key, bool *fresh)
{
    uintptr_t at = (uintptr_t)strmap_get(&l->seen, key);
    if (at) {
        free(key);
        struct list_item *it = &l->items[at - 1];
        FREE_AND_NULL(it->rv);
        json_decref(it->p);
        it->p = NULL;
        entry_free(l->s, it->pe);
        it->pe = NULL;
        *fresh = false;
        return it;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->items = xrealloc(l->items, l->cap * sizeof(*l->items));
    }
    struct list_item *it = &l->items[l->n++];
    *it = (struct list_item){.key = key};
    strmap_put(&l->seen, key, (void *)(uintptr_t)l->n);
    *fresh = true;
    return it;
}

/* Whether the stored object under `key` has the resourceVersion rv[0..n). */
static bool stored_rv_is(const struct store *s, const char *key, const char *rv, size_t n)
{
    struct sent *cur = keyset_get(&s->objs, key);
    size_t rvn = 0;
    char scratch[JPACK_SCRATCH];
    const char *rv_cur = cur && rv ? entry_rv(s, cur, &rvn, scratch) : NULL;
    return rv_cur && n == rvn && memcmp(rv, rv_cur, rvn) == 0;
}

int store_list_add(struct store_list *l, json_t *obj, struct err *e)
{
    struct store *s = l->s;
    char *key = store_key_of(obj, e);
    if (!key)
        return -EINVAL;
    bool fresh;
    struct list_item *it = list_slot(l, key, &fresh);
    const char *rv = rv_of(obj);
    if (fresh && rv && stored_rv_is(s, it->key, rv, strlen(rv))) {
        /* Unchanged (same resourceVersion): the stored copy stays, no projection. */
        it->rv = xstrdup(rv);
        return 0;
    }
    /* A packed store packs it at the commit, as store_replace did: the projection is its decoded
     * tree then, for the events, and the packed entries are allocated together, not between
     * the items' trees (which would keep heap pages resident). */
    it->p = store_project(s, obj);
    return 0;
}

/* ---- lists from text ----------------------------------------------------------- */

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

/*
 * A jscan sink packing an item as store_project_lean(store_item_typed(tree)) would be packed:
 * metadata.managedFields and the last-applied annotation are skipped as they are scanned, and
 * a top level without string kind/apiVersion gets the list's at its end. -EAGAIN where
 * that differs from the tree's result (a kind or apiVersion that is not a string is
 * replaced in place): the caller takes the tree path then.
 */
struct lean {
    struct jpack_build *b;
    bool lean;             /* skip what store_project_lean drops */
    const char *kind, *av; /* the list's, for items without them (may be NULL) */
    int depth;             /* open containers */
    int top_key;           /* the top object's current key: 1 kind, 2 apiVersion, 3 metadata */
    bool has_kind, has_av; /* the top object has them as strings */
    bool ann_key;          /* the metadata's current key is annotations */
    bool in_meta, in_ann;  /* the open object at depth 2 is metadata, at depth 3 its annotations */
};

/* A value other than a string at the top object's current key. */
static int lean_nonstring(struct lean *k)
{
    if (k->depth == 1 && ((k->top_key == 1 && k->kind) || (k->top_key == 2 && k->av)))
        return -EAGAIN;
    return 0;
}

static int lean_open(void *ud, bool obj)
{
    struct lean *k = ud;
    int rc = lean_nonstring(k);
    if (rc < 0)
        return rc;
    if (obj && k->depth == 1 && k->top_key == 3)
        k->in_meta = true;
    else if (obj && k->depth == 2 && k->in_meta && k->ann_key)
        k->in_ann = true;
    k->depth++;
    return jpack_build_open(k->b, obj);
}

static int lean_close(void *ud, bool obj)
{
    struct lean *k = ud;
    k->depth--;
    if (k->depth == 2)
        k->in_ann = false;
    else if (k->depth == 1)
        k->in_meta = false;
    else if (k->depth == 0 && obj) { /* the top object: typed as the list says */
        int rc = 0;
        if (k->kind && !k->has_kind && (rc = jpack_build_key(k->b, "kind", 4)) == 0)
            rc = jpack_build_str(k->b, k->kind, strlen(k->kind));
        if (rc == 0 && k->kind && k->av && !k->has_av &&
            (rc = jpack_build_key(k->b, "apiVersion", 10)) == 0)
            rc = jpack_build_str(k->b, k->av, strlen(k->av));
        if (rc < 0)
            return rc;
    }
    return jpack_build_close(k->b);
}

static bool is(const char *k, size_t n, const char *name)
{
    return n == strlen(name) && memcmp(k, name, n) == 0;
}

static int lean_key(void *ud, const char *key, size_t n)
{
    struct lean *k = ud;
    if (k->depth == 1) {
        k->top_key = is(key, n, "kind")         ? 1
                     : is(key, n, "apiVersion") ? 2
                     : is(key, n, "metadata")   ? 3
                                                : 0;
    } else if (k->lean && k->depth == 2 && k->in_meta) {
        if (is(key, n, "managedFields"))
            return 1;
        k->ann_key = is(key, n, "annotations");
    } else if (k->lean && k->depth == 3 && k->in_ann && is(key, n, LAST_APPLIED)) {
        return 1;
    }
    return jpack_build_key(k->b, key, n);
}

static int lean_string(void *ud, const char *str, size_t n)
{
    struct lean *k = ud;
    if (k->depth == 1 && k->top_key == 1)
        k->has_kind = true;
    else if (k->depth == 1 && k->top_key == 2)
        k->has_av = true;
    return jpack_build_str(k->b, str, n);
}

static int lean_integer(void *ud, long long v)
{
    struct lean *k = ud;
    int rc = lean_nonstring(k);
    return rc < 0 ? rc : jpack_build_int(k->b, v);
}

static int lean_real(void *ud, double v)
{
    struct lean *k = ud;
    int rc = lean_nonstring(k);
    return rc < 0 ? rc : jpack_build_real(k->b, v);
}

static int lean_literal(void *ud, char which)
{
    struct lean *k = ud;
    int rc = lean_nonstring(k);
    return rc < 0 ? rc : jpack_build_lit(k->b, which);
}

static const struct jscan_sink lean_sink = {lean_open,    lean_close, lean_key,    lean_string,
                                            lean_integer, lean_real,  lean_literal};

/* The packed bytes p[0..n) (their references taken) as a listed item. */
static int list_add_packed(struct store_list *l, const uint8_t *p, size_t n, struct err *e)
{
    struct store *s = l->s;
    static const char *const pname[] = {"metadata", "name", NULL};
    static const char *const pns[] = {"metadata", "namespace", NULL};
    static const char *const prv[] = {"metadata", "resourceVersion", NULL};
    size_t nn = 0, nsn = 0, rvn = 0;
    char sname[JPACK_SCRATCH], sns[JPACK_SCRATCH], srv[JPACK_SCRATCH];
    const char *name = jpack_get_str(s->tab, p, n, pname, &nn, sname);
    const char *ns = jpack_get_str(s->tab, p, n, pns, &nsn, sns);
    if (!name || !nn) {
        jpack_release(s->tab, p, n);
        return err_set(e, -EINVAL, "object has no metadata.name");
    }
    char *key = ns && nsn ? xasprintf("%.*s/%.*s", (int)nsn, ns, (int)nn, name)
                          : xasprintf("%.*s", (int)nn, name);
    bool fresh;
    struct list_item *it = list_slot(l, key, &fresh);
    const char *rv = jpack_get_str(s->tab, p, n, prv, &rvn, srv);
    if (rv)
        rvn = strnlen(rv, rvn);
    if (fresh && rv && stored_rv_is(s, it->key, rv, rvn)) {
        it->rv = xasprintf("%.*s", (int)rvn, rv); /* unchanged: the stored copy stays */
        jpack_release(s->tab, p, n);
        return 0;
    }
    it->pe = entry_of_bytes(p, n, it->key);
    return 0;
}

int store_list_add_text(struct store_list *l, const char *data, size_t n, const char *kind,
                        const char *api_version, struct err *e)
{
    struct store *s = l->s;
    if (s->packed && (!s->project || s->project == store_project_lean)) {
        if (!l->b)
            l->b = jpack_build_new(s->tab);
        struct lean k = {
            .b = l->b, .lean = s->project != NULL, .kind = kind, .av = kind ? api_version : NULL};
        int rc = jscan_walk(data, n, &lean_sink, &k, e);
        if (rc == -EBADMSG) {
            jpack_build_reset(l->b);
            return rc;
        }
        const uint8_t *p;
        size_t len = rc == 0 ? jpack_build_take(l->b, &p) : 0;
        if (len && len <= UINT32_MAX)
            return list_add_packed(l, p, len, e);
        if (len)
            jpack_release(s->tab, p, len);
        /* a repeated key, nesting deeper than jpack packs, a kind that is not a string, or
         * not an object: as a tree */
        jpack_build_reset(l->b);
    }
    /* a packed store's item that its lean walk did not take, or another projection's: whole */
    json_t *it = jscan_load_with(data, n, s->reads_c, e);
    if (!it)
        return -EBADMSG;
    store_item_typed(it, kind, api_version);
    int rc = store_list_add(l, it, e);
    json_decref(it);
    return rc;
}

void store_item_typed(json_t *it, const char *kind, const char *api_version)
{
    if (!kind || !json_is_object(it))
        return;
    if (!json_is_string(json_object_get(it, "kind")))
        json_object_set_new(it, "kind", json_string(kind));
    if (api_version && !json_is_string(json_object_get(it, "apiVersion")))
        json_object_set_new(it, "apiVersion", json_string(api_version));
}

/* Every item found unchanged when it was added still is (the store was not modified since). */
static bool list_still_valid(const struct store_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct list_item *it = &l->items[i];
        if (it->p || it->pe)
            continue;
        struct sent *cur = keyset_get(&l->s->objs, it->key);
        size_t rvn = 0;
        char scratch[JPACK_SCRATCH];
        const char *rv_cur = cur ? entry_rv(l->s, cur, &rvn, scratch) : NULL;
        if (!rv_cur || strlen(it->rv) != rvn || memcmp(it->rv, rv_cur, rvn) != 0)
            return false;
    }
    return true;
}

int store_list_commit(struct store_list *l, store_event_fn cb, void *ud, struct err *e)
{
    struct store *s = l->s;
    if (!list_still_valid(l))
        return err_set(e, -ESTALE, "store replace: the store changed while the list was read");
    /* Entries move from s->objs to next as they are listed; what is left in s->objs at the
     * end was not listed. Indexes are updated per event (an unchanged entry keeps its index
     * values): no decode of unchanged packed objects. */
    struct keyset next;
    keyset_init(&next, sent_key_of);
    struct pending_event *ev = xcalloc(l->n + keyset_len(&s->objs) + 1, sizeof(*ev));
    size_t nev = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct list_item *it = &l->items[i];
        struct sent *cur = keyset_del(&s->objs, it->key);
        json_t *p = it->p;
        struct sent *pe = it->pe;
        if (!p && !pe) {
            keyset_put(&next, cur);
            continue;
        }
        json_t *cur_obj = cur ? entry_obj(s, cur) : NULL;
        if (!cur_obj) { /* absent (or undecodable, which a packed store never makes) */
            entry_free(s, cur);
            ev[nev++] = (struct pending_event){STORE_ADD, NULL, json_incref(p), it->key};
        } else if (pe ? entry_changed(s, cur_obj, pe) : obj_changed(cur_obj, p)) {
            ev[nev++] =
                (struct pending_event){STORE_UPDATE, json_incref(cur_obj), json_incref(p), it->key};
            indexes_update(s, it->key, cur_obj, NULL);
            entry_free(s, cur);
        } else {
            keyset_put(&next, cur);
            continue;
        }
        if (pe) {
            it->pe = NULL;
            indexes_insert_packed(s, it->key, pe);
            keyset_put(&next, pe);
        } else {
            indexes_update(s, it->key, NULL, p);
            struct sent *ne = entry_new(s, p, false, it->key);
            keyset_put(&next, ne);
        }
    }
    struct replace_ctx c = {s, &next, ev, nev};
    keyset_foreach(&s->objs, replace_gone_cb, &c);
    nev = c.nev;
    keyset_free(&s->objs);
    s->objs = next;
    for (size_t i = 0; i < nev; i++) {
        if (!ev[i].new_obj && ev[i].type == STORE_ADD && l->view)
            ev[i].new_obj = store_get_view(s, ev[i].key, l->view);
        else if (!ev[i].new_obj && ev[i].type != STORE_DELETE)
            ev[i].new_obj = store_get_ref(s, ev[i].key);
        if (cb && (ev[i].new_obj || ev[i].type == STORE_DELETE))
            cb(ev[i].type, ev[i].old, ev[i].new_obj, ud);
        json_decref(ev[i].old);
        json_decref(ev[i].new_obj);
    }
    free(ev);
    return 0;
}

int store_replace(struct store *s, json_t *items, store_event_fn cb, void *ud, struct err *e)
{
    if (!json_is_array(items))
        return err_set(e, -EINVAL, "store replace: list items is not an array");
    struct store_list *l = store_list_new(s);
    int rc = 0;
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        rc = store_list_add(l, it, e);
        if (rc < 0) {
            err_prefix(e, "store replace: item %zu", i);
            break;
        }
    }
    if (rc == 0)
        rc = store_list_commit(l, cb, ud, e);
    store_list_free(l);
    return rc;
}

/* ---- projection and index helpers ---------------------------------------- */

static json_t *get_path(json_t *obj, const char *path)
{
    char *copy = xstrdup(path);
    json_t *cur = obj;
    char *save = NULL;
    for (char *part = strtok_r(copy, ".", &save); part && cur; part = strtok_r(NULL, ".", &save))
        cur = json_object_get(cur, part);
    free(copy);
    return cur;
}

static void copy_path(json_t *dst, json_t *src, const char *path)
{
    json_t *v = get_path(src, path);
    if (!v)
        return;
    char *copy = xstrdup(path);
    char *save = NULL;
    char *part = strtok_r(copy, ".", &save);
    json_t *cur = dst;
    while (part) {
        char *nextp = strtok_r(NULL, ".", &save);
        if (!nextp) {
            json_object_set(cur, part, v);
            break;
        }
        json_t *child = json_object_get(cur, part);
        if (!json_is_object(child)) {
            child = json_object();
            json_object_set_new(cur, part, child);
        }
        cur = child;
        part = nextp;
    }
    free(copy);
}

json_t *store_project_fields(json_t *obj, const char *const *paths)
{
    static const char *const always[] = {
        "apiVersion",
        "kind",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "metadata.resourceVersion",
        "metadata.generation",
        "metadata.deletionTimestamp",
        NULL,
    };
    json_t *out = json_object();
    for (size_t i = 0; always[i]; i++)
        copy_path(out, obj, always[i]);
    for (size_t i = 0; paths && paths[i]; i++)
        copy_path(out, obj, paths[i]);
    return out;
}

json_t *store_project_lean(json_t *obj, void *ud)
{
    (void)ud;
    json_t *meta = json_object_get(obj, "metadata");
    json_t *ann = json_object_get(meta, "annotations");
    bool mf = json_object_get(meta, "managedFields") != NULL;
    bool la = json_object_get(ann, LAST_APPLIED) != NULL;
    if (!mf && !la)
        return json_incref(obj);
    json_t *out = json_copy(obj), *m = json_copy(meta);
    json_object_del(m, "managedFields");
    if (la) {
        json_t *a = json_copy(ann);
        json_object_del(a, LAST_APPLIED);
        json_object_set_new(m, "annotations", a);
    }
    json_object_set_new(out, "metadata", m);
    return out;
}

void store_index_by_label(json_t *obj, struct store_values *vals, void *ud)
{
    const char *label = ud;
    json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    store_values_add(vals, json_string_value(json_object_get(labels, label)));
}

void store_index_by_owner_uid(json_t *obj, struct store_values *vals, void *ud)
{
    json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        store_values_add(vals, json_string_value(json_object_get(ref, "uid")));
    }
}

void store_index_by_field(json_t *obj, struct store_values *vals, void *ud)
{
    const char *v = json_string_value(get_path(obj, ud));
    if (v && *v)
        store_values_add(vals, v);
}
