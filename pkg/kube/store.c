/*
 * store: see store.h. Objects live in a jansson object (key -> object);
 * every index is a jansson object value -> set of keys (a jansson object
 * key -> null). Index entries for an object are recomputed from the stored
 * (immutable) object when it is replaced or removed.
 */
#include "pkg/kube/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/xalloc.h"

struct store_index {
    char *name;
    store_index_fn fn;
    void *ud;
    json_t *map; /* value -> {key: null} */
};

struct store {
    json_t *objs; /* key -> stored object */
    struct store_index *idx;
    size_t nidx;
    store_project_fn project;
    void *project_ud;
};

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

static void index_insert(struct store_index *ix, const char *key, json_t *obj)
{
    struct store_values vals = {0};
    ix->fn(obj, &vals, ix->ud);
    for (size_t i = 0; i < vals.n; i++) {
        json_t *set = json_object_get(ix->map, vals.v[i]);
        if (!set) {
            set = json_object();
            json_object_set_new(ix->map, vals.v[i], set);
        }
        json_object_set_new(set, key, json_null());
    }
    values_release(&vals);
}

static void index_remove(struct store_index *ix, const char *key, json_t *obj)
{
    struct store_values vals = {0};
    ix->fn(obj, &vals, ix->ud);
    for (size_t i = 0; i < vals.n; i++) {
        json_t *set = json_object_get(ix->map, vals.v[i]);
        if (!set)
            continue;
        json_object_del(set, key);
        if (json_object_size(set) == 0)
            json_object_del(ix->map, vals.v[i]);
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

static void indexes_rebuild(struct store *s)
{
    for (size_t i = 0; i < s->nidx; i++) {
        json_object_clear(s->idx[i].map);
        const char *key;
        json_t *obj;
        json_object_foreach(s->objs, key, obj)
        {
            index_insert(&s->idx[i], key, obj);
        }
    }
}

static struct store_index *index_find(const struct store *s, const char *name)
{
    for (size_t i = 0; i < s->nidx; i++)
        if (strcmp(s->idx[i].name, name) == 0)
            return &s->idx[i];
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------- */

struct store *store_new(const struct store_opts *opts)
{
    struct store *s = xcalloc(1, sizeof(*s));
    s->objs = json_object();
    if (opts) {
        s->project = opts->project;
        s->project_ud = opts->project_ud;
    }
    return s;
}

void store_free(struct store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nidx; i++) {
        free(s->idx[i].name);
        json_decref(s->idx[i].map);
    }
    free(s->idx);
    json_decref(s->objs);
    free(s);
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

int store_add_index(struct store *s, const char *name, store_index_fn fn, void *ud, struct err *e)
{
    if (index_find(s, name))
        return err_set(e, -EEXIST, "store index %s already registered", name);
    s->idx = xrealloc(s->idx, (s->nidx + 1) * sizeof(*s->idx));
    struct store_index *ix = &s->idx[s->nidx++];
    ix->name = xstrdup(name);
    ix->fn = fn;
    ix->ud = ud;
    ix->map = json_object();
    const char *key;
    json_t *obj;
    json_object_foreach(s->objs, key, obj)
    {
        index_insert(ix, key, obj);
    }
    return 0;
}

/* ---- mutation -------------------------------------------------------------- */

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
    json_t *prev = json_incref(json_object_get(s->objs, key));
    indexes_update(s, key, prev, p);
    json_object_set(s->objs, key, p);
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
    json_t *prev = json_object_get(s->objs, key);
    if (!prev)
        return -ENOENT;
    json_incref(prev);
    indexes_update(s, key, prev, NULL);
    json_object_del(s->objs, key);
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
    return json_object_get(s->objs, key);
}

size_t store_len(const struct store *s)
{
    return json_object_size(s->objs);
}

int store_foreach(const struct store *s, int (*fn)(const char *key, json_t *obj, void *ud),
                  void *ud)
{
    const char *key;
    json_t *obj;
    json_object_foreach(s->objs, key, obj)
    {
        int rc = fn(key, obj, ud);
        if (rc)
            return rc;
    }
    return 0;
}

json_t *store_keys(const struct store *s)
{
    json_t *arr = json_array();
    const char *key;
    json_t *obj;
    json_object_foreach(s->objs, key, obj)
    {
        json_array_append_new(arr, json_string(key));
    }
    return arr;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
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
    json_t *set = json_object_get(ix->map, value);
    size_t cnt = json_object_size(set);
    if (cnt == 0)
        return NULL;
    const char **keys = xcalloc(cnt, sizeof(*keys));
    const char *key;
    json_t *v;
    json_object_foreach(set, key, v)
    {
        keys[(*n)++] = key;
    }
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
        json_t *obj = json_object_get(s->objs, keys[i]);
        if (obj)
            json_array_append(arr, obj);
    }
    free(keys);
    return arr;
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

struct pending_event {
    enum store_event_type type;
    json_t *old, *new_obj; /* owned references */
};

static const char *rv_of(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

static bool obj_changed(const json_t *old, const json_t *new_obj)
{
    const char *a = rv_of(old), *b = rv_of(new_obj);
    if (a && b)
        return strcmp(a, b) != 0;
    return !json_equal((json_t *)old, (json_t *)new_obj);
}

int store_replace(struct store *s, json_t *items, store_event_fn cb, void *ud, struct err *e)
{
    if (!json_is_array(items))
        return err_set(e, -EINVAL, "store replace: list items is not an array");
    size_t n = json_array_size(items);
    char **keys = xcalloc(n ? n : 1, sizeof(*keys));
    json_t *next = NULL;
    struct pending_event *ev = NULL;
    size_t nev = 0;
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        keys[i] = store_key_of(json_array_get(items, i), e);
        if (!keys[i]) {
            rc = err_prefix(e, "store replace: item %zu", i);
            goto out;
        }
    }
    next = json_object();
    ev = xcalloc(n + json_object_size(s->objs) + 1, sizeof(*ev));
    for (size_t i = 0; i < n; i++) {
        json_t *raw = json_array_get(items, i);
        json_t *prev_listed = json_object_get(next, keys[i]);
        json_t *cur0 = json_object_get(s->objs, keys[i]);
        const char *rv_raw = rv_of(raw), *rv_cur = cur0 ? rv_of(cur0) : NULL;
        if (!prev_listed && rv_raw && rv_cur && strcmp(rv_raw, rv_cur) == 0) {
            /* Unchanged (same resourceVersion): keep the cached copy, skip the projection. */
            json_object_set(next, keys[i], cur0);
            continue;
        }
        json_t *p = store_project(s, raw);
        if (prev_listed) {
            /* Duplicate key in one list: the later item wins, one event. */
            for (size_t j = 0; j < nev; j++) {
                if (ev[j].new_obj == prev_listed) {
                    json_decref(ev[j].new_obj);
                    ev[j].new_obj = json_incref(p);
                }
            }
            json_object_set_new(next, keys[i], p);
            continue;
        }
        json_t *cur = json_object_get(s->objs, keys[i]);
        if (!cur) {
            ev[nev++] = (struct pending_event){STORE_ADD, NULL, json_incref(p)};
            json_object_set_new(next, keys[i], p);
        } else if (obj_changed(cur, p)) {
            ev[nev++] = (struct pending_event){STORE_UPDATE, json_incref(cur), json_incref(p)};
            json_object_set_new(next, keys[i], p);
        } else {
            json_object_set(next, keys[i], cur);
            json_decref(p);
        }
    }
    const char *key;
    json_t *cur;
    json_object_foreach(s->objs, key, cur)
    {
        if (!json_object_get(next, key))
            ev[nev++] = (struct pending_event){STORE_DELETE, json_incref(cur), NULL};
    }
    json_decref(s->objs);
    s->objs = next;
    next = NULL;
    indexes_rebuild(s);
    for (size_t i = 0; i < nev; i++) {
        if (cb)
            cb(ev[i].type, ev[i].old, ev[i].new_obj, ud);
        json_decref(ev[i].old);
        json_decref(ev[i].new_obj);
    }
out:
    json_decref(next);
    free(ev);
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
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

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

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
