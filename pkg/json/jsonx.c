/* jsonx: path lookup, setters, merge patch and Kubernetes object helpers. */
#include "pkg/json/jsonx.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

/*
 * One parsed path segment: an array index, or a key. A key is read in place in the path
 * (`raw`, `len` bytes, not NUL-terminated); only a key with a backslash escape is copied,
 * unescaped, into `buf` (`escaped`). Segments are copied by value (jx_set_new, jx_del), so
 * the key is found with seg_key(), never through a pointer into the struct itself.
 */
struct seg {
    bool is_index;
    bool escaped;
    size_t index;
    const char *raw;
    size_t len;
    char buf[JX_KEY_MAX + 1];
};

static const char *seg_key(const struct seg *s)
{
    return s->escaped ? s->buf : s->raw;
}

/* Parse a decimal index of n bytes. 0 or -1. */
static int parse_index(const char *s, size_t n, size_t *out)
{
    if (n == 0 || n > 9)
        return -1;
    size_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

/*
 * Read the next segment of a path at *p. Returns 1 with *s filled, 0 at the
 * end of the path, -1 when malformed.
 */
static int next_seg(const char **p, struct seg *s, bool *first)
{
    const char *c = *p;
    if (*c == '\0')
        return 0;
    if (!*first && *c == '.')
        c++;
    else if (!*first && *c != '[')
        return -1;
    *first = false;
    if (*c == '[') {
        const char *end = strchr(c, ']');
        if (!end)
            return -1;
        s->is_index = true;
        if (parse_index(c + 1, (size_t)(end - c - 1), &s->index) < 0)
            return -1;
        *p = end + 1;
        return 1;
    }
    s->is_index = false;
    s->escaped = false;
    s->raw = c;
    while (*c && *c != '.' && *c != '[' && *c != '\\')
        c++;
    s->len = (size_t)(c - s->raw);
    if (*c == '\\') {
        /* Rare: copy what was read so far, then unescape the rest. */
        if (s->len > JX_KEY_MAX)
            return -1;
        memcpy(s->buf, s->raw, s->len);
        s->escaped = true;
        while (*c && *c != '.' && *c != '[') {
            if (*c == '\\') {
                c++;
                if (*c == '\0')
                    return -1;
            }
            if (s->len >= JX_KEY_MAX)
                return -1;
            s->buf[s->len++] = *c++;
        }
        s->buf[s->len] = '\0';
    }
    if (s->len == 0 || s->len > JX_KEY_MAX)
        return -1;
    *p = c;
    return 1;
}

static json_t *step(const json_t *cur, const struct seg *s)
{
    if (!cur)
        return NULL;
    if (s->is_index)
        return json_is_array(cur) ? json_array_get(cur, s->index) : NULL;
    return json_is_object(cur) ? json_object_getn(cur, seg_key(s), s->len) : NULL;
}

json_t *jx_get(const json_t *root, const char *path)
{
    if (!root || !path)
        return NULL;
    struct seg s;
    bool first = true;
    const char *p = path;
    json_t *cur = (json_t *)root;
    int rc;
    while ((rc = next_seg(&p, &s, &first)) == 1) {
        cur = step(cur, &s);
        if (!cur)
            return NULL;
    }
    return rc < 0 ? NULL : cur;
}

/* Varargs step: a key applied to an array is an index. */
static json_t *stepv(const json_t *cur, const char *key)
{
    if (json_is_object(cur))
        return json_object_get(cur, key);
    if (json_is_array(cur)) {
        size_t idx;
        if (parse_index(key, strlen(key), &idx) < 0)
            return NULL;
        return json_array_get(cur, idx);
    }
    return NULL;
}

json_t *jx__getv(const json_t *root, ...)
{
    va_list ap;
    va_start(ap, root);
    json_t *cur = (json_t *)root;
    const char *k;
    while (cur && (k = va_arg(ap, const char *)) != NULL)
        cur = stepv(cur, k);
    va_end(ap);
    return cur;
}

const char *jx_str(const json_t *root, const char *path, const char *def)
{
    json_t *v = jx_get(root, path);
    return json_is_string(v) ? json_string_value(v) : def;
}

const char *jx_field_str(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

long long jx_int(const json_t *root, const char *path, long long def)
{
    json_t *v = jx_get(root, path);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == floor(d) && d >= -9.2e18 && d <= 9.2e18)
            return (long long)d;
    }
    return def;
}

bool jx_bool(const json_t *root, const char *path, bool def)
{
    json_t *v = jx_get(root, path);
    return json_is_boolean(v) ? json_is_true(v) : def;
}

json_t *jx_obj(const json_t *root, const char *path)
{
    json_t *v = jx_get(root, path);
    return json_is_object(v) ? v : NULL;
}

json_t *jx_arr(const json_t *root, const char *path)
{
    json_t *v = jx_get(root, path);
    return json_is_array(v) ? v : NULL;
}

/* ---- modification --------------------------------------------------------- */

/* Put value (consumed) into container at segment s. */
static int put(json_t *cur, const struct seg *s, json_t *value, const char *path, struct err *e)
{
    if (s->is_index) {
        if (!json_is_array(cur)) {
            json_decref(value);
            return err_set(e, -EINVAL, "path \"%s\": index [%zu] applied to a non-array", path,
                           s->index);
        }
        size_t n = json_array_size(cur);
        if (s->index < n) {
            json_array_set_new(cur, s->index, value);
            return 0;
        }
        if (s->index == n) {
            json_array_append_new(cur, value);
            return 0;
        }
        json_decref(value);
        return err_set(e, -ERANGE, "path \"%s\": index %zu out of range (array size %zu)", path,
                       s->index, n);
    }
    if (!json_is_object(cur)) {
        json_decref(value);
        return err_set(e, -EINVAL, "path \"%s\": key \"%.*s\" applied to a non-object", path,
                       (int)s->len, seg_key(s));
    }
    if (json_object_setn_new(cur, seg_key(s), s->len, value) != 0)
        return err_set(e, -EINVAL, "path \"%s\": key \"%.*s\" is not valid UTF-8", path,
                       (int)s->len, seg_key(s));
    return 0;
}

int jx_set_new(json_t *root, const char *path, json_t *value, struct err *e)
{
    if (!value)
        return err_set(e, -EINVAL, "path \"%s\": no value", path ? path : "");
    if (!root || !path || !*path) {
        json_decref(value);
        return err_set(e, -EINVAL, "path \"%s\": cannot set the root", path ? path : "");
    }
    struct seg s, nexts;
    bool first = true;
    const char *p = path;
    int rc = next_seg(&p, &s, &first);
    json_t *cur = root;
    for (;;) {
        if (rc != 1) {
            json_decref(value);
            return err_set(e, -EINVAL, "invalid path \"%s\"", path);
        }
        int rc2 = next_seg(&p, &nexts, &first);
        if (rc2 == 0)
            return put(cur, &s, value, path, e);
        if (rc2 < 0) {
            json_decref(value);
            return err_set(e, -EINVAL, "invalid path \"%s\"", path);
        }
        /* Intermediate: descend, creating an object (or array for an index) when absent. */
        json_t *child = step(cur, &s);
        if (!child || json_is_null(child)) {
            if (!json_is_object(cur) && !s.is_index) {
                json_decref(value);
                return err_set(e, -EINVAL, "path \"%s\": key \"%.*s\" applied to a non-object",
                               path, (int)s.len, seg_key(&s));
            }
            child = nexts.is_index ? json_array() : json_object();
            json_t *keep = child;
            int prc = put(cur, &s, child, path, e);
            if (prc < 0) {
                json_decref(value);
                return prc;
            }
            child = keep;
        }
        cur = child;
        s = nexts;
        rc = 1;
    }
}

int jx_set(json_t *root, const char *path, json_t *value, struct err *e)
{
    return jx_set_new(root, path, json_incref(value), e);
}

int jx__setv_new(json_t *root, json_t *value, ...)
{
    va_list ap;
    va_start(ap, value);
    int rc = -EINVAL;
    json_t *cur = root;
    const char *k = va_arg(ap, const char *);
    if (!value || !root || !k)
        goto out;
    for (;;) {
        const char *nk = va_arg(ap, const char *);
        if (!json_is_object(cur))
            goto out;
        if (!nk) {
            rc = json_object_set_new(cur, k, value) == 0 ? 0 : -EINVAL;
            value = NULL;
            goto out;
        }
        json_t *child = json_object_get(cur, k);
        if (!child || json_is_null(child)) {
            child = json_object();
            if (json_object_set_new(cur, k, child) != 0)
                goto out;
        }
        cur = child;
        k = nk;
    }
out:
    va_end(ap);
    json_decref(value);
    return rc;
}

int jx_set_str(json_t *root, const char *path, const char *s, struct err *e)
{
    json_t *v = json_string(s ? s : "");
    if (!v)
        return err_set(e, -EINVAL, "path \"%s\": value is not valid UTF-8", path ? path : "");
    return jx_set_new(root, path, v, e);
}

int jx_del(json_t *root, const char *path)
{
    if (!root || !path || !*path)
        return -EINVAL;
    struct seg s, nexts;
    bool first = true;
    const char *p = path;
    int rc = next_seg(&p, &s, &first);
    json_t *cur = root;
    while (rc == 1) {
        int rc2 = next_seg(&p, &nexts, &first);
        if (rc2 < 0)
            return -EINVAL;
        if (rc2 == 0) {
            if (s.is_index) {
                if (!json_is_array(cur) || s.index >= json_array_size(cur))
                    return -ENOENT;
                json_array_remove(cur, s.index);
                return 0;
            }
            if (!json_is_object(cur))
                return -ENOENT;
            return json_object_deln(cur, seg_key(&s), s.len) == 0 ? 0 : -ENOENT;
        }
        cur = step(cur, &s);
        if (!cur)
            return -ENOENT;
        s = nexts;
    }
    return -EINVAL;
}

json_t *jx_find_by(const json_t *arr, const char *field, const char *value)
{
    size_t i;
    json_t *el;
    if (!json_is_array(arr) || !field || !value)
        return NULL;
    json_array_foreach(arr, i, el)
    {
        json_t *v = json_object_get(el, field);
        if (json_is_string(v) && strcmp(json_string_value(v), value) == 0)
            return el;
    }
    return NULL;
}

/* ---- parsing / printing --------------------------------------------------- */

json_t *jx_deep_copy(const json_t *v)
{
    if (!v)
        return NULL;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        json_t *o = json_object();
        const char *k;
        size_t klen;
        json_t *x;
        json_object_keylen_foreach((json_t *)v, k, klen, x)
        {
            json_object_setn_new_nocheck(o, k, klen, jx_deep_copy(x));
        }
        return o;
    }
    case JSON_ARRAY: {
        json_t *a = json_array();
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++)
            json_array_append_new(a, jx_deep_copy(json_array_get(v, i)));
        return a;
    }
    case JSON_STRING:
        return json_stringn_nocheck(json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return json_integer(json_integer_value(v));
    case JSON_REAL:
        return json_real(json_real_value(v));
    default: /* true, false, null: jansson's shared constants */
        return json_incref((json_t *)v);
    }
}

json_t *jx_loadb(const char *data, size_t n, struct err *e)
{
    json_error_t je;
    json_t *v = json_loadb(data ? data : "", data ? n : 0, JSON_DECODE_ANY, &je);
    if (!v)
        err_set(e, -EINVAL, "invalid JSON at line %d column %d (byte %d): %s", je.line, je.column,
                je.position, je.text);
    return v;
}

static int dump_to_buf(const char *text, size_t n, void *ud)
{
    return buf_append(ud, text, n) < 0 ? -1 : 0;
}

char *jx_dumps_flags(const json_t *v, size_t flags)
{
    /* Written straight into malloc's memory: json_dumps would build the text with jansson's
     * allocator and copy it once more. */
    struct buf b;
    buf_init(&b, SIZE_MAX);
    if (json_dump_callback(v, dump_to_buf, &b, flags) != 0) {
        buf_free(&b);
        return NULL;
    }
    return buf_detach(&b);
}

char *jx_dumps(const json_t *v)
{
    if (!v)
        return xstrdup("null");
    char *s = jx_dumps_flags(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    return s ? s : xstrdup("null");
}

/* ---- merge patch ------------------------------------------------------------ */

json_t *jx_merge_apply(const json_t *target, const json_t *patch)
{
    if (!json_is_object(patch))
        return patch ? jx_deep_copy(patch) : json_null();
    json_t *res = json_is_object(target) ? jx_deep_copy(target) : json_object();
    const char *k;
    json_t *pv;
    json_object_foreach((json_t *)patch, k, pv)
    {
        if (json_is_null(pv)) {
            json_object_del(res, k);
            continue;
        }
        json_t *merged = jx_merge_apply(json_object_get(res, k), pv);
        json_object_set_new(res, k, merged);
    }
    return res;
}

json_t *jx_merge_diff(const json_t *from, const json_t *to)
{
    if (!json_is_object(from) || !json_is_object(to)) {
        if (from && to && json_equal(from, to))
            return json_object();
        return to ? jx_deep_copy(to) : json_null();
    }
    json_t *patch = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)from, k, v)
    {
        if (!json_object_get(to, k))
            json_object_set_new(patch, k, json_null());
    }
    json_object_foreach((json_t *)to, k, v)
    {
        json_t *old = json_object_get(from, k);
        if (json_is_null(v)) {
            if (old)
                json_object_set_new(patch, k, json_null());
            continue;
        }
        if (old && json_equal(old, v))
            continue;
        if (json_is_object(old) && json_is_object(v)) {
            json_object_set_new(patch, k, jx_merge_diff(old, v));
        } else {
            json_object_set_new(patch, k, jx_deep_copy(v));
        }
    }
    return patch;
}

void jx_patch_init(struct jx_patch *p)
{
    p->doc = json_object();
}

void jx_patch_release(struct jx_patch *p)
{
    json_decref(p->doc);
    p->doc = NULL;
}

int jx_patch_set_new(struct jx_patch *p, const char *path, json_t *value)
{
    if (!p->doc)
        p->doc = json_object();
    return jx_set_new(p->doc, path, value, NULL);
}

int jx_patch_set_str(struct jx_patch *p, const char *path, const char *s)
{
    json_t *v = json_string(s ? s : "");
    if (!v)
        return -EINVAL;
    return jx_patch_set_new(p, path, v);
}

int jx_patch_delete(struct jx_patch *p, const char *path)
{
    return jx_patch_set_new(p, path, json_null());
}

static int patch_meta_map(struct jx_patch *p, const char *field, const char *key, const char *value)
{
    if (!key || !*key)
        return -EINVAL;
    json_t *v = value ? json_string(value) : json_null();
    if (!v)
        return -EINVAL;
    if (!p->doc)
        p->doc = json_object();
    return jx_setv_new(p->doc, v, "metadata", field, key);
}

int jx_patch_label(struct jx_patch *p, const char *key, const char *value)
{
    return patch_meta_map(p, "labels", key, value);
}

int jx_patch_annotation(struct jx_patch *p, const char *key, const char *value)
{
    return patch_meta_map(p, "annotations", key, value);
}

bool jx_patch_empty(const struct jx_patch *p)
{
    return !p->doc || json_object_size(p->doc) == 0;
}

char *jx_patch_dumps(const struct jx_patch *p)
{
    if (!p->doc)
        return xstrdup("{}");
    return jx_dumps(p->doc);
}

json_t *jx_patch_take(struct jx_patch *p)
{
    json_t *d = p->doc ? p->doc : json_object();
    p->doc = json_object();
    return d;
}

/* ---- Kubernetes accessors ---------------------------------------------------- */

static const char *meta_str(const json_t *obj, const char *field)
{
    json_t *v = jx_getv(obj, "metadata", field);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *jx_name(const json_t *obj)
{
    return meta_str(obj, "name");
}

const char *jx_namespace(const json_t *obj)
{
    return meta_str(obj, "namespace");
}

const char *jx_uid(const json_t *obj)
{
    return meta_str(obj, "uid");
}

const char *jx_resource_version(const json_t *obj)
{
    return meta_str(obj, "resourceVersion");
}

const char *jx_kind(const json_t *obj)
{
    json_t *v = json_is_object(obj) ? json_object_get(obj, "kind") : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *jx_api_version(const json_t *obj)
{
    json_t *v = json_is_object(obj) ? json_object_get(obj, "apiVersion") : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

long long jx_generation(const json_t *obj)
{
    json_t *v = jx_getv(obj, "metadata", "generation");
    return json_is_integer(v) ? json_integer_value(v) : 0;
}

json_t *jx_labels(const json_t *obj)
{
    json_t *v = jx_getv(obj, "metadata", "labels");
    return json_is_object(v) ? v : NULL;
}

json_t *jx_annotations(const json_t *obj)
{
    json_t *v = jx_getv(obj, "metadata", "annotations");
    return json_is_object(v) ? v : NULL;
}

const char *jx_label(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(jx_labels(obj), key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *jx_annotation(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(jx_annotations(obj), key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int set_meta_map(json_t *obj, const char *field, const char *key, const char *value)
{
    if (!json_is_object(obj) || !key || !*key)
        return -EINVAL;
    if (!value) {
        json_t *m = jx_getv(obj, "metadata", field);
        if (json_is_object(m))
            json_object_del(m, key);
        return 0;
    }
    json_t *v = json_string(value);
    if (!v)
        return -EINVAL;
    return jx_setv_new(obj, v, "metadata", field, key);
}

int jx_set_label(json_t *obj, const char *key, const char *value)
{
    return set_meta_map(obj, "labels", key, value);
}

int jx_set_annotation(json_t *obj, const char *key, const char *value)
{
    return set_meta_map(obj, "annotations", key, value);
}

char *jx_key_make(const char *ns, const char *name)
{
    if (ns && *ns)
        return xasprintf("%s/%s", ns, name ? name : "");
    return xstrdup(name ? name : "");
}

char *jx_obj_key(const json_t *obj)
{
    const char *name = jx_name(obj);
    if (!name)
        return NULL;
    return jx_key_make(jx_namespace(obj), name);
}

int jx_key_split(const char *key, char **ns, char **name)
{
    *ns = NULL;
    *name = NULL;
    if (!key || !*key)
        return -EINVAL;
    const char *slash = strchr(key, '/');
    if (!slash) {
        *name = xstrdup(key);
        return 0;
    }
    if (slash == key || slash[1] == '\0' || strchr(slash + 1, '/'))
        return -EINVAL;
    *ns = xstrndup(key, (size_t)(slash - key));
    *name = xstrdup(slash + 1);
    return 0;
}

/* ---- conditions --------------------------------------------------------------- */

json_t *jx_conds_find(const json_t *conds, const char *type)
{
    return jx_find_by(conds, "type", type);
}

json_t *jx_cond_find(const json_t *obj, const char *type)
{
    return jx_conds_find(jx_getv(obj, "status", "conditions"), type);
}

const char *jx_cond_status(const json_t *obj, const char *type)
{
    json_t *s = json_object_get(jx_cond_find(obj, type), "status");
    return json_is_string(s) ? json_string_value(s) : NULL;
}

bool jx_cond_is_true(const json_t *obj, const char *type)
{
    const char *s = jx_cond_status(obj, type);
    return s && strcmp(s, "True") == 0;
}

/* Set a string field; returns 1 when it changed. NULL value removes it. */
static int set_field(json_t *o, const char *k, const char *v)
{
    json_t *old = json_object_get(o, k);
    if (!v) {
        if (!old)
            return 0;
        json_object_del(o, k);
        return 1;
    }
    if (json_is_string(old) && strcmp(json_string_value(old), v) == 0)
        return 0;
    json_t *nv = json_string(v);
    if (!nv)
        return 0;
    json_object_set_new(o, k, nv);
    return 1;
}

int jx_conds_set(json_t *conds, const struct jx_cond *c, const char *now)
{
    if (!json_is_array(conds) || !c || !c->type || !c->status)
        return -EINVAL;
    char nowbuf[64];
    if (!now)
        now = clock_now_rfc3339(nowbuf, sizeof(nowbuf), 0);
    json_t *cur = jx_conds_find(conds, c->type);
    int changed = 0;
    if (!cur) {
        cur = json_object();
        json_array_append_new(conds, cur);
        set_field(cur, "type", c->type);
        changed = 1;
    }
    if (set_field(cur, "status", c->status)) {
        set_field(cur, "lastTransitionTime", now);
        changed = 1;
    } else if (!json_object_get(cur, "lastTransitionTime")) {
        changed |= set_field(cur, "lastTransitionTime", now);
    }
    changed |= set_field(cur, "reason", c->reason);
    changed |= set_field(cur, "message", c->message);
    if (c->observed_generation > 0) {
        json_t *og = json_object_get(cur, "observedGeneration");
        if (!json_is_integer(og) || json_integer_value(og) != c->observed_generation) {
            json_object_set_new(cur, "observedGeneration", json_integer(c->observed_generation));
            changed = 1;
        }
    }
    return changed;
}

int jx_cond_set(json_t *obj, const struct jx_cond *c, const char *now)
{
    if (!json_is_object(obj))
        return -EINVAL;
    json_t *conds = jx_getv(obj, "status", "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        if (jx_setv_new(obj, json_incref(conds), "status", "conditions") < 0) {
            json_decref(conds);
            return -EINVAL;
        }
        json_decref(conds);
    }
    return jx_conds_set(conds, c, now);
}

int jx_cond_remove(json_t *obj, const char *type)
{
    json_t *conds = jx_getv(obj, "status", "conditions");
    if (!json_is_array(conds) || !type)
        return 0;
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        json_t *t = json_object_get(c, "type");
        if (json_is_string(t) && strcmp(json_string_value(t), type) == 0) {
            json_array_remove(conds, i);
            return 1;
        }
    }
    return 0;
}

/* ---- owner references ------------------------------------------------------------ */

json_t *jx_owner_controller(const json_t *obj)
{
    json_t *refs = jx_getv(obj, "metadata", "ownerReferences");
    size_t i;
    json_t *r;
    if (!json_is_array(refs))
        return NULL;
    json_array_foreach(refs, i, r)
    {
        if (json_is_true(json_object_get(r, "controller")))
            return r;
    }
    return NULL;
}

/* "batch/v1" -> group "batch"; "v1" -> "". */
static bool group_matches(const char *api_version, const char *group)
{
    if (!api_version)
        return false;
    const char *slash = strchr(api_version, '/');
    if (!slash)
        return *group == '\0';
    size_t n = (size_t)(slash - api_version);
    return strlen(group) == n && memcmp(api_version, group, n) == 0;
}

json_t *jx_owner_find(const json_t *obj, const char *group, const char *kind)
{
    json_t *refs = jx_getv(obj, "metadata", "ownerReferences");
    size_t i;
    json_t *r;
    if (!json_is_array(refs) || !kind)
        return NULL;
    json_array_foreach(refs, i, r)
    {
        const char *k = json_string_value(json_object_get(r, "kind"));
        if (!k || strcmp(k, kind) != 0)
            continue;
        if (group && !group_matches(json_string_value(json_object_get(r, "apiVersion")), group))
            continue;
        return r;
    }
    return NULL;
}

void jx_use_xalloc(void)
{
    json_set_alloc_funcs(xmalloc, free);
}
