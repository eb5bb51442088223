/* patch: JSON merge patch, JSON patch and strategic merge patch. See patch.h. */
#include "devhub/patch.h"
#include "pkg/json/jsonx.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pkg/util/xalloc.h"

/* ---- errors ----------------------------------------------------------- */

static int perr(struct err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int perr(struct err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, code, fmt, ap);
    va_end(ap);
    if (!e)
        return code;
    const char *reason = "Invalid";
    int status = 422;
    if (code == PATCH_EBAD) {
        reason = "BadRequest";
        status = 400;
    } else if (code == PATCH_EUNSUPPORTED) {
        reason = "UnsupportedMediaType";
        status = 415;
    } else if (code == PATCH_ETOOLARGE) {
        reason = "RequestEntityTooLarge";
        status = 413;
    }
    e->http_status = status;
    snprintf(e->reason, sizeof e->reason, "%s", reason);
    return code;
}

/* negotiation.NewUnsupportedMediaTypeError with the built-in and the CRD patch type lists. */
#define UNSUPPORTED_MSG                                                                            \
    "the body of the request was in an unknown format - accepted media types include: "            \
    "application/json-patch+json, application/merge-patch+json, "                                  \
    "application/strategic-merge-patch+json, application/apply-patch+yaml"
#define UNSUPPORTED_CRD_MSG                                                                        \
    "the body of the request was in an unknown format - accepted media types include: "            \
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"

/* ---- content types ---------------------------------------------------- */

static const struct {
    const char *name;
    enum patch_type type;
} content_types[] = {
    {"application/json-patch+json", PATCH_TYPE_JSON},
    {"application/merge-patch+json", PATCH_TYPE_MERGE},
    {"application/strategic-merge-patch+json", PATCH_TYPE_STRATEGIC},
    {"application/apply-patch+yaml", PATCH_TYPE_APPLY},
};

int patch_type_from_content_type(const char *ct, enum patch_type *out, struct err *e)
{
    if (!ct)
        return perr(e, PATCH_EUNSUPPORTED, UNSUPPORTED_MSG);
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, ";");
    while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    for (size_t i = 0; i < sizeof content_types / sizeof content_types[0]; i++) {
        if (strlen(content_types[i].name) == n && strncasecmp(ct, content_types[i].name, n) == 0) {
            *out = content_types[i].type;
            return 0;
        }
    }
    return perr(e, PATCH_EUNSUPPORTED, UNSUPPORTED_MSG);
}

const char *patch_type_name(enum patch_type t)
{
    for (size_t i = 0; i < sizeof content_types / sizeof content_types[0]; i++)
        if (content_types[i].type == t)
            return content_types[i].name;
    return "";
}

/* ---- shared helpers --------------------------------------------------- */

/* Deep equality where numbers compare by value (1 == 1.0), as JSON does. */
static bool jv_equal(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v)
        {
            json_t *w = json_object_get(b, k);
            if (!w || !jv_equal(v, w))
                return false;
        }
        return true;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!jv_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    return json_equal(a, b);
}

/* ---- RFC 7386 --------------------------------------------------------- */

int patch_merge(const json_t *target, const json_t *patch, json_t **out, struct err *e)
{
    if (!patch || !out)
        return perr(e, PATCH_EBAD, "empty merge patch");
    *out = jx_merge_apply(target, patch); /* RFC 7386 lives in pkg/json */
    return 0;
}

/* ---- RFC 6901 pointers and RFC 6902 ------------------------------------ */

struct jptr {
    char **tok;
    size_t n;
};

static void jptr_free(struct jptr *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->tok[i]);
    free(p->tok);
    p->tok = NULL;
    p->n = 0;
}

static int jptr_parse(const char *s, struct jptr *p, struct err *e)
{
    p->tok = NULL;
    p->n = 0;
    if (*s == '\0')
        return 0;
    if (*s != '/')
        return perr(e, PATCH_EFAILED, "JSON pointer must be empty or start with '/': %.200s", s);
    const char *q = s;
    while (*q == '/') {
        q++;
        size_t len = strcspn(q, "/");
        char *t = xmalloc(len + 1);
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
            if (q[i] == '~') {
                if (i + 1 < len && q[i + 1] == '0')
                    t[o++] = '~';
                else if (i + 1 < len && q[i + 1] == '1')
                    t[o++] = '/';
                else {
                    free(t);
                    jptr_free(p);
                    return perr(e, PATCH_EFAILED, "invalid escape in JSON pointer: %.200s", s);
                }
                i++;
            } else {
                t[o++] = q[i];
            }
        }
        t[o] = '\0';
        p->tok = xrealloc(p->tok, (p->n + 1) * sizeof *p->tok);
        p->tok[p->n++] = t;
        q += len;
    }
    return 0;
}

/* Array index token: "0" or [1-9][0-9]*. Returns -1 when not an index. */
static long jptr_index(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || n > 9)
        return -1;
    if (n > 1 && t[0] == '0')
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)t[i]))
            return -1;
        v = v * 10 + (t[i] - '0');
    }
    return v;
}

/* Follow the first n tokens from root; borrowed result or NULL. */
static json_t *jptr_walk(json_t *root, const struct jptr *p, size_t n)
{
    json_t *cur = root;
    for (size_t i = 0; i < n && cur; i++) {
        if (json_is_object(cur)) {
            cur = json_object_get(cur, p->tok[i]);
        } else if (json_is_array(cur)) {
            long idx = jptr_index(p->tok[i]);
            if (idx < 0 || (size_t)idx >= json_array_size(cur))
                return NULL;
            cur = json_array_get(cur, (size_t)idx);
        } else {
            return NULL;
        }
    }
    return cur;
}

/* add: consumes `val`. */
static int op_add(json_t **doc, const struct jptr *p, const char *path, json_t *val, struct err *e)
{
    if (p->n == 0) {
        json_decref(*doc);
        *doc = val;
        return 0;
    }
    json_t *parent = jptr_walk(*doc, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    if (json_is_object(parent)) {
        json_object_set_new(parent, last, val);
        return 0;
    }
    if (json_is_array(parent)) {
        size_t sz = json_array_size(parent);
        if (strcmp(last, "-") == 0) {
            json_array_append_new(parent, val);
            return 0;
        }
        long idx = jptr_index(last);
        if (idx < 0 || (size_t)idx > sz) {
            json_decref(val);
            return perr(e, PATCH_EFAILED,
                        "add operation does not apply: index out of range: \"%.200s\"", path);
        }
        json_array_insert_new(parent, (size_t)idx, val);
        return 0;
    }
    json_decref(val);
    return perr(e, PATCH_EFAILED,
                "add operation does not apply: doc is missing path: \"%.200s\": missing value",
                path);
}

/* remove; when `taken` is non-NULL it receives a new reference to the removed value. */
static int op_remove(json_t **doc, const struct jptr *p, const char *path, const char *opname,
                     json_t **taken, struct err *e)
{
    if (p->n == 0)
        return perr(e, PATCH_EFAILED,
                    "%s operation does not apply: cannot remove the document root", opname);
    json_t *parent = jptr_walk(*doc, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    if (json_is_object(parent)) {
        json_t *v = json_object_get(parent, last);
        if (v) {
            if (taken)
                *taken = json_incref(v);
            json_object_del(parent, last);
            return 0;
        }
    } else if (json_is_array(parent)) {
        long idx = jptr_index(last);
        if (idx >= 0 && (size_t)idx < json_array_size(parent)) {
            if (taken)
                *taken = json_incref(json_array_get(parent, (size_t)idx));
            json_array_remove(parent, (size_t)idx);
            return 0;
        }
    }
    return perr(e, PATCH_EFAILED,
                "%s operation does not apply: doc is missing path: \"%.200s\": missing value",
                opname, path);
}

static int op_replace(json_t **doc, const struct jptr *p, const char *path, json_t *val,
                      struct err *e)
{
    if (p->n == 0) {
        json_decref(*doc);
        *doc = val;
        return 0;
    }
    json_t *parent = jptr_walk(*doc, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    if (json_is_object(parent) && json_object_get(parent, last)) {
        json_object_set_new(parent, last, val);
        return 0;
    }
    if (json_is_array(parent)) {
        long idx = jptr_index(last);
        if (idx >= 0 && (size_t)idx < json_array_size(parent)) {
            json_array_set_new(parent, (size_t)idx, val);
            return 0;
        }
    }
    json_decref(val);
    return perr(e, PATCH_EFAILED,
                "replace operation does not apply: doc is missing key: %.200s: missing value",
                path);
}

static const char *op_str(const json_t *op, const char *field)
{
    json_t *v = json_object_get(op, field);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int apply_one(json_t **doc, const json_t *op, size_t i, struct err *e)
{
    struct jptr p = {0}, from = {0};
    int rc = 0;
    if (!json_is_object(op))
        return perr(e, PATCH_EFAILED, "operation %zu is not a JSON object", i);
    const char *kind = op_str(op, "op");
    const char *path = op_str(op, "path");
    if (!kind)
        return perr(e, PATCH_EFAILED, "operation %zu: missing \"op\"", i);
    bool known = !strcmp(kind, "add") || !strcmp(kind, "remove") || !strcmp(kind, "replace") ||
                 !strcmp(kind, "move") || !strcmp(kind, "copy") || !strcmp(kind, "test");
    if (!known)
        return perr(e, PATCH_EFAILED, "Unexpected kind: %.100s", kind);
    if (!path)
        return perr(e, PATCH_EFAILED, "%s operation: missing \"path\"", kind);
    rc = jptr_parse(path, &p, e);
    if (rc)
        goto out;
    json_t *value = json_object_get(op, "value");
    bool needs_value = !strcmp(kind, "add") || !strcmp(kind, "replace") || !strcmp(kind, "test");
    if (needs_value && !value) {
        rc = perr(e, PATCH_EFAILED, "%s operation: missing \"value\" for path %.200s", kind, path);
        goto out;
    }
    if (!strcmp(kind, "add")) {
        rc = op_add(doc, &p, path, jx_deep_copy(value), e);
    } else if (!strcmp(kind, "remove")) {
        rc = op_remove(doc, &p, path, "remove", NULL, e);
    } else if (!strcmp(kind, "replace")) {
        rc = op_replace(doc, &p, path, jx_deep_copy(value), e);
    } else if (!strcmp(kind, "test")) {
        json_t *cur = jptr_walk(*doc, &p, p.n);
        if (!cur || !jv_equal(cur, value))
            rc = perr(e, PATCH_EFAILED, "testing value %.200s failed: test failed", path);
    } else {
        const char *fpath = op_str(op, "from");
        if (!fpath) {
            rc = perr(e, PATCH_EFAILED, "%s operation: missing \"from\"", kind);
            goto out;
        }
        rc = jptr_parse(fpath, &from, e);
        if (rc)
            goto out;
        if (!strcmp(kind, "copy")) {
            json_t *src = jptr_walk(*doc, &from, from.n);
            if (!src) {
                rc = perr(e, PATCH_EFAILED,
                          "copy operation does not apply: doc is missing from path: "
                          "\"%.200s\": missing value",
                          fpath);
                goto out;
            }
            rc = op_add(doc, &p, path, jx_deep_copy(src), e);
        } else { /* move */
            if (!strcmp(fpath, path))
                goto out;
            size_t fl = strlen(fpath);
            if (!strncmp(path, fpath, fl) && path[fl] == '/') {
                rc = perr(e, PATCH_EFAILED,
                          "move operation does not apply: \"%.200s\" is a child of \"%.200s\"",
                          path, fpath);
                goto out;
            }
            json_t *taken = NULL;
            rc = op_remove(doc, &from, fpath, "move", &taken, e);
            if (rc)
                goto out;
            rc = op_add(doc, &p, path, taken, e);
        }
    }
out:
    jptr_free(&p);
    jptr_free(&from);
    return rc;
}

int patch_json(const json_t *target, const json_t *patch, json_t **out, struct err *e)
{
    if (!json_is_array(patch))
        return perr(e, PATCH_EBAD,
                    "json: cannot unmarshal %s into Go value of type jsonpatch.Patch",
                    json_is_object(patch) ? "object" : "value");
    if (json_array_size(patch) > PATCH_MAX_JSON_OPS)
        return perr(e, PATCH_ETOOLARGE,
                    "Request entity too large: The allowed maximum operations in a JSON patch is "
                    "%d, got %zu",
                    PATCH_MAX_JSON_OPS, json_array_size(patch));
    json_t *doc = target ? jx_deep_copy(target) : json_null();
    for (size_t i = 0; i < json_array_size(patch); i++) {
        int rc = apply_one(&doc, json_array_get(patch, i), i, e);
        if (rc) {
            json_decref(doc);
            return rc;
        }
    }
    *out = doc;
    return 0;
}

/* ---- strategic merge patch --------------------------------------------- */

/*
 * The patch-merge-key table (patchStrategy/patchMergeKey struct tags of
 * k8s.io/api). `path` is dotted field names; a leading '.' anchors it at the
 * object root, otherwise it matches the end of the field path. kind NULL =
 * every built-in kind. merge_key NULL = a merged set of primitives. Lists
 * not in the table are replaced (tolerations, args, command, ...).
 */
static const struct sm_rule {
    const char *kind;
    const char *path;
    const char *merge_key;
} sm_rules[] = {
    /* ObjectMeta */
    {NULL, ".metadata.finalizers", NULL},
    {NULL, ".metadata.ownerReferences", "uid"},
    /* PodSpec (Pod spec, every pod template) */
    {NULL, "containers", "name"},
    {NULL, "initContainers", "name"},
    {NULL, "ephemeralContainers", "name"},
    {NULL, "volumes", "name"},
    {NULL, "imagePullSecrets", "name"},
    {NULL, "hostAliases", "ip"},
    {NULL, "topologySpreadConstraints", "topologyKey"},
    {NULL, "schedulingGates", "name"},
    {NULL, "resourceClaims", "name"},
    /* Container */
    {NULL, "containers.ports", "containerPort"},
    {NULL, "initContainers.ports", "containerPort"},
    {NULL, "ephemeralContainers.ports", "containerPort"},
    {NULL, "containers.env", "name"},
    {NULL, "initContainers.env", "name"},
    {NULL, "ephemeralContainers.env", "name"},
    {NULL, "containers.volumeMounts", "mountPath"},
    {NULL, "initContainers.volumeMounts", "mountPath"},
    {NULL, "ephemeralContainers.volumeMounts", "mountPath"},
    {NULL, "containers.volumeDevices", "devicePath"},
    {NULL, "initContainers.volumeDevices", "devicePath"},
    {NULL, "ephemeralContainers.volumeDevices", "devicePath"},
    /* Status conditions of Pod, Node, Namespace, Job, Deployment, ... */
    {NULL, ".status.conditions", "type"},
    {"Node", ".status.addresses", "type"},
    {"Node", ".spec.podCIDRs", NULL},
    {"Service", ".spec.ports", "port"},
    {"Pod", ".status.podIPs", "ip"},
    {"Pod", ".status.hostIPs", "ip"},
    {"Pod", ".status.resourceClaimStatuses", "name"},
};

#define SM_MAX_DEPTH 64

struct sm_ctx {
    const char *kind;
    const char *path[SM_MAX_DEPTH];
    size_t depth; /* may exceed SM_MAX_DEPTH: deeper fields match no rule */
};

static bool rule_matches(const struct sm_rule *r, const char *kind, const char *const *path,
                         size_t n)
{
    if (r->kind && (!kind || strcmp(r->kind, kind) != 0))
        return false;
    const char *pat = r->path;
    bool anchored = pat[0] == '.';
    if (anchored)
        pat++;
    /* Split the pattern into components. */
    const char *comp[8];
    size_t clen[8];
    size_t nc = 0;
    while (*pat && nc < 8) {
        size_t l = strcspn(pat, ".");
        comp[nc] = pat;
        clen[nc] = l;
        nc++;
        pat += l;
        if (*pat == '.')
            pat++;
    }
    if (nc > n || (anchored && nc != n))
        return false;
    for (size_t i = 0; i < nc; i++) {
        const char *f = path[n - nc + i];
        if (strlen(f) != clen[i] || strncmp(f, comp[i], clen[i]) != 0)
            return false;
    }
    return true;
}

static const struct sm_rule *sm_lookup(const char *kind, const char *const *path, size_t n)
{
    for (size_t i = 0; i < sizeof sm_rules / sizeof sm_rules[0]; i++)
        if (rule_matches(&sm_rules[i], kind, path, n))
            return &sm_rules[i];
    return NULL;
}

bool patch_list_rule(const char *kind, const char *path, const char **merge_key)
{
    const char *comps[SM_MAX_DEPTH];
    char *copy = xstrdup(path ? path : "");
    size_t n = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, ".", &save); t && n < SM_MAX_DEPTH;
         t = strtok_r(NULL, ".", &save))
        comps[n++] = t;
    const struct sm_rule *r = sm_lookup(kind, comps, n);
    if (r && merge_key)
        *merge_key = r->merge_key;
    free(copy);
    return r != NULL;
}

static bool is_directive_key(const char *k)
{
    return k[0] == '$' &&
           (!strcmp(k, "$patch") || !strcmp(k, "$retainKeys") ||
            !strncmp(k, "$setElementOrder/", 17) || !strncmp(k, "$deleteFromPrimitiveList/", 25));
}

static int sm_merge_map(struct sm_ctx *c, json_t *orig, const json_t *patch, struct err *e);

/* A new value from the patch: merge it into an empty value so directives and nulls vanish. */
static int sm_fresh(struct sm_ctx *c, const json_t *pv, json_t **out, struct err *e);

static void ctx_push(struct sm_ctx *c, const char *k)
{
    if (c->depth < SM_MAX_DEPTH)
        c->path[c->depth] = k;
    c->depth++;
}

static void ctx_pop(struct sm_ctx *c)
{
    c->depth--;
}

static const struct sm_rule *ctx_rule(const struct sm_ctx *c)
{
    if (c->depth > SM_MAX_DEPTH)
        return NULL;
    return sm_lookup(c->kind, c->path, c->depth);
}

/* Identity of a list item: its merge key value (maps) or itself (primitives). */
static const json_t *item_id(const json_t *item, const char *key)
{
    if (!key)
        return item;
    return json_is_object(item) ? json_object_get(item, key) : NULL;
}

/* Index of the element with identity `id` in `list`, or -1. */
static long list_index(const json_t *list, const json_t *id, const char *key)
{
    if (!id)
        return -1;
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *x = item_id(json_array_get(list, i), key);
        if (x && jv_equal(x, id))
            return (long)i;
    }
    return -1;
}

/*
 * Order `merged` as apimachinery's normalizeElementOrder does: items whose
 * identity appears in `order` (patch items) are sorted by their position
 * there; the other (server-only) items keep their live order; the two runs
 * are then interleaved by their position in the live list `live`.
 * Returns a new array.
 */
static json_t *sm_normalize(const json_t *merged, const json_t *order, const json_t *live,
                            const char *key)
{
    size_t n = json_array_size(merged);
    const json_t **pi = xcalloc(n + 1, sizeof *pi);
    const json_t **so = xcalloc(n + 1, sizeof *so);
    size_t npi = 0, nso = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *it = json_array_get(merged, i);
        if (list_index(order, item_id(it, key), key) >= 0)
            pi[npi++] = it;
        else
            so[nso++] = it;
    }
    /* Stable insertion sort of the patch items by their index in `order`. */
    for (size_t i = 1; i < npi; i++) {
        const json_t *x = pi[i];
        long xi = list_index(order, item_id(x, key), key);
        size_t j = i;
        while (j > 0 && xi >= 0 && list_index(order, item_id(pi[j - 1], key), key) > xi) {
            pi[j] = pi[j - 1];
            j--;
        }
        pi[j] = x;
    }
    json_t *res = json_array();
    size_t a = 0, b = 0;
    while (a < nso || b < npi) {
        if (a >= nso) {
            json_array_append(res, (json_t *)pi[b++]);
        } else if (b >= npi) {
            json_array_append(res, (json_t *)so[a++]);
        } else {
            long li = list_index(live, item_id(so[a], key), key);
            long ri = list_index(live, item_id(pi[b], key), key);
            if (li >= 0 && ri >= 0 && li < ri)
                json_array_append(res, (json_t *)so[a++]);
            else
                json_array_append(res, (json_t *)pi[b++]);
        }
    }
    free(pi);
    free(so);
    return res;
}

/*
 * Merge the patch list `pl` into the live list `ol` (borrowed) under rule
 * `r`; *out receives a new array. `order` (borrowed, may be NULL) is the
 * $setElementOrder list.
 */
static int sm_merge_list(struct sm_ctx *c, const struct sm_rule *r, const json_t *ol,
                         const json_t *pl, const json_t *order, json_t **out, struct err *e)
{
    const char *key = r->merge_key;
    json_t *merged = NULL, *patch_items = json_array();
    int rc = 0;
    bool replace = false;

    if (key) {
        merged = jx_deep_copy(ol);
        for (size_t i = 0; i < json_array_size(pl); i++) {
            json_t *pv = json_array_get(pl, i);
            if (!json_is_object(pv)) {
                /* A keyed list patched with non-maps: replace it as Go does for type mismatches. */
                json_decref(merged);
                json_decref(patch_items);
                return sm_fresh(c, pl, out, e);
            }
            json_t *d = json_object_get(pv, "$patch");
            if (!d) {
                json_array_append(patch_items, pv);
                continue;
            }
            const char *ds = json_string_value(d);
            if (ds && !strcmp(ds, "delete")) {
                json_t *id = json_object_get(pv, key);
                if (!id) {
                    rc = perr(e, PATCH_EFAILED, "map: %s does not contain declared merge key: %s",
                              "list element with $patch: delete", key);
                    goto out;
                }
                long at;
                while ((at = list_index(merged, id, key)) >= 0)
                    json_array_remove(merged, (size_t)at);
            } else if (ds && !strcmp(ds, "replace")) {
                replace = true;
            } else if (ds && !strcmp(ds, "merge")) {
                rc = perr(e, PATCH_EBAD, "merging lists cannot yet be specified in the patch");
                goto out;
            } else {
                rc = perr(e, PATCH_EBAD, "invalid value for $patch in a list element: %.100s",
                          ds ? ds : "(not a string)");
                goto out;
            }
        }
        if (replace) {
            json_decref(merged);
            merged = NULL;
            rc = sm_fresh(c, patch_items, &merged, e);
            goto out;
        }
        for (size_t i = 0; i < json_array_size(patch_items); i++) {
            json_t *pv = json_array_get(patch_items, i);
            json_t *id = json_object_get(pv, key);
            if (!id) {
                char *s = json_dumps(pv, JSON_COMPACT);
                rc = perr(e, PATCH_EFAILED, "map: %.200s does not contain declared merge key: %s",
                          s ? s : "{}", key);
                free(s);
                goto out;
            }
            long at = list_index(merged, id, key);
            if (at >= 0 && json_is_object(json_array_get(merged, (size_t)at))) {
                rc = sm_merge_map(c, json_array_get(merged, (size_t)at), pv, e);
            } else {
                json_t *fresh = NULL;
                rc = sm_fresh(c, pv, &fresh, e);
                if (!rc)
                    json_array_append_new(merged, fresh);
            }
            if (rc)
                goto out;
        }
    } else {
        /* Set of primitives: live values, then new patch values, no duplicates. */
        merged = json_array();
        for (size_t i = 0; i < json_array_size(ol); i++) {
            json_t *v = json_array_get(ol, i);
            if (list_index(merged, v, NULL) < 0)
                json_array_append(merged, v);
        }
        for (size_t i = 0; i < json_array_size(pl); i++) {
            json_t *v = json_array_get(pl, i);
            if (json_is_object(v) || json_is_array(v)) {
                json_decref(merged);
                json_decref(patch_items);
                return sm_fresh(c, pl, out, e);
            }
            json_array_append(patch_items, v);
            if (list_index(merged, v, NULL) < 0)
                json_array_append(merged, v);
        }
    }
    json_t *sorted = sm_normalize(merged, order ? order : patch_items, ol, key);
    json_decref(merged);
    merged = sorted;
out:
    json_decref(patch_items);
    if (rc) {
        json_decref(merged);
        return rc;
    }
    *out = merged;
    return 0;
}

/* Items of the patch list (without $patch elements) must appear in `order`, in the same order. */
static int sm_check_order(const json_t *pl, const json_t *order, const char *key, const char *field,
                          struct err *e)
{
    long last = -1;
    for (size_t i = 0; i < json_array_size(pl); i++) {
        const json_t *pv = json_array_get(pl, i);
        if (json_is_object(pv) && json_object_get(pv, "$patch"))
            continue;
        long at = list_index(order, item_id(pv, key), key);
        if (at < 0 || at < last)
            return perr(e, PATCH_EBAD,
                        "invalid patch: the order of the list %.100s does not match "
                        "$setElementOrder/%.100s",
                        field, field);
        last = at;
    }
    return 0;
}

/* Set orig[k] from patch value pv (both present): recurse by type. */
static int sm_merge_field(struct sm_ctx *c, json_t *orig, const char *k, const json_t *pv,
                          const json_t *order, struct err *e)
{
    json_t *ov = json_object_get(orig, k);
    int rc = 0;
    ctx_push(c, k);
    if (!ov) {
        json_t *fresh = NULL;
        const struct sm_rule *r = json_is_array(pv) ? ctx_rule(c) : NULL;
        if (r) {
            json_t *empty = json_array();
            rc = sm_merge_list(c, r, empty, pv, order, &fresh, e);
            json_decref(empty);
        } else
            rc = sm_fresh(c, pv, &fresh, e);
        if (!rc)
            json_object_set_new(orig, k, fresh);
    } else if (json_is_object(ov) && json_is_object(pv)) {
        rc = sm_merge_map(c, ov, pv, e);
    } else if (json_is_array(ov) && json_is_array(pv)) {
        const struct sm_rule *r = ctx_rule(c);
        json_t *res = NULL;
        if (r)
            rc = sm_merge_list(c, r, ov, pv, order, &res, e);
        else
            rc = sm_fresh(c, pv, &res, e);
        if (!rc)
            json_object_set_new(orig, k, res);
    } else {
        json_t *fresh = NULL;
        rc = sm_fresh(c, pv, &fresh, e);
        if (!rc)
            json_object_set_new(orig, k, fresh);
    }
    ctx_pop(c);
    return rc;
}

static int sm_fresh(struct sm_ctx *c, const json_t *pv, json_t **out, struct err *e)
{
    if (json_is_object(pv)) {
        json_t *o = json_object();
        int rc = sm_merge_map(c, o, pv, e);
        if (rc) {
            json_decref(o);
            return rc;
        }
        *out = o;
        return 0;
    }
    if (json_is_array(pv)) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(pv); i++) {
            json_t *v = json_array_get(pv, i);
            json_t *x = NULL;
            if (json_is_object(v) && json_object_get(v, "$patch"))
                continue; /* directive elements never reach the result */
            int rc = sm_fresh(c, v, &x, e);
            if (rc) {
                json_decref(a);
                return rc;
            }
            json_array_append_new(a, x);
        }
        *out = a;
        return 0;
    }
    *out = jx_deep_copy(pv);
    return 0;
}

static int sm_merge_map(struct sm_ctx *c, json_t *orig, const json_t *patch, struct err *e)
{
    const char *k;
    json_t *pv;
    int rc = 0;

    json_t *d = json_object_get(patch, "$patch");
    if (d) {
        const char *ds = json_string_value(d);
        if (ds && !strcmp(ds, "replace")) {
            json_object_clear(orig);
            /* The rest of the patch is the new value (directives stripped). */
        } else if (ds && !strcmp(ds, "delete")) {
            json_object_clear(orig);
            return 0;
        } else if (!ds || strcmp(ds, "merge") != 0) {
            return perr(e, PATCH_EBAD, "invalid value for $patch: %.100s",
                        ds ? ds : "(not a string)");
        }
    }

    json_t *retain = json_object_get(patch, "$retainKeys");
    if (retain) {
        if (!json_is_array(retain))
            return perr(e, PATCH_EBAD, "invalid patch: $retainKeys must be a list of strings");
        json_object_foreach((json_t *)patch, k, pv)
        {
            if (json_is_null(pv) || is_directive_key(k))
                continue;
            bool found = false;
            for (size_t i = 0; i < json_array_size(retain) && !found; i++)
                found = json_is_string(json_array_get(retain, i)) &&
                        !strcmp(json_string_value(json_array_get(retain, i)), k);
            if (!found)
                return perr(e, PATCH_EBAD,
                            "invalid patch: field %.100s is not listed in $retainKeys", k);
        }
        void *tmp;
        json_object_foreach_safe(orig, tmp, k, pv)
        {
            bool found = false;
            for (size_t i = 0; i < json_array_size(retain) && !found; i++)
                found = json_is_string(json_array_get(retain, i)) &&
                        !strcmp(json_string_value(json_array_get(retain, i)), k);
            if (!found)
                json_object_del(orig, k);
        }
    }

    /* Validate directive shapes and the $setElementOrder lists first. */
    json_object_foreach((json_t *)patch, k, pv)
    {
        if (!strncmp(k, "$setElementOrder/", 17)) {
            if (!json_is_array(pv))
                return perr(e, PATCH_EBAD, "invalid patch: %.100s must be a list", k);
            const char *field = k + 17;
            json_t *pl = json_object_get(patch, field);
            ctx_push(c, field);
            const struct sm_rule *r = ctx_rule(c);
            ctx_pop(c);
            if (r && json_is_array(pl)) {
                rc = sm_check_order(pl, pv, r->merge_key, field, e);
                if (rc)
                    return rc;
            }
        } else if (!strncmp(k, "$deleteFromPrimitiveList/", 25)) {
            if (!json_is_array(pv))
                return perr(e, PATCH_EBAD, "invalid patch: %.100s must be a list", k);
        }
    }

    /* Merge the fields. */
    json_object_foreach((json_t *)patch, k, pv)
    {
        if (is_directive_key(k))
            continue;
        if (json_is_null(pv)) {
            json_object_del(orig, k);
            continue;
        }
        char ok[300];
        snprintf(ok, sizeof ok, "$setElementOrder/%s", k);
        rc = sm_merge_field(c, orig, k, pv, json_object_get(patch, ok), e);
        if (rc)
            return rc;
    }

    /* $setElementOrder for lists the patch does not otherwise touch: reorder only. */
    json_object_foreach((json_t *)patch, k, pv)
    {
        if (strncmp(k, "$setElementOrder/", 17) != 0)
            continue;
        const char *field = k + 17;
        json_t *ol = json_object_get(orig, field);
        if (json_object_get(patch, field) || !json_is_array(ol))
            continue;
        ctx_push(c, field);
        const struct sm_rule *r = ctx_rule(c);
        ctx_pop(c);
        if (!r)
            continue;
        json_t *sorted = sm_normalize(ol, pv, ol, r->merge_key);
        json_object_set_new(orig, field, sorted);
    }

    /* $deleteFromPrimitiveList/<field>: drop the listed values. */
    json_object_foreach((json_t *)patch, k, pv)
    {
        if (strncmp(k, "$deleteFromPrimitiveList/", 25) != 0)
            continue;
        json_t *ol = json_object_get(orig, k + 25);
        if (!json_is_array(ol))
            continue;
        for (size_t i = json_array_size(ol); i-- > 0;)
            if (list_index(pv, json_array_get(ol, i), NULL) >= 0)
                json_array_remove(ol, i);
    }
    return 0;
}

int patch_strategic(const json_t *target, const json_t *patch, const char *kind, json_t **out,
                    struct err *e)
{
    if (!json_is_object(patch))
        return perr(e, PATCH_EBAD, "the strategic merge patch must be a JSON object");
    struct sm_ctx c = {.kind = kind};
    json_t *doc = json_is_object(target) ? jx_deep_copy(target) : json_object();
    int rc = sm_merge_map(&c, doc, patch, e);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    *out = doc;
    return 0;
}

int patch_apply(enum patch_type type, const char *kind, bool builtin, const json_t *target,
                const char *body, size_t len, json_t **out, struct err *e)
{
    if (type == PATCH_TYPE_APPLY)
        return perr(e, PATCH_EUNSUPPORTED,
                    "server-side apply (application/apply-patch+yaml) is not supported by "
                    "kueue-ks-devhub; use client-side kubectl apply, or a merge/JSON patch");
    if (type == PATCH_TYPE_STRATEGIC && !builtin)
        return perr(e, PATCH_EUNSUPPORTED, UNSUPPORTED_CRD_MSG);
    if (type != PATCH_TYPE_JSON && type != PATCH_TYPE_MERGE && type != PATCH_TYPE_STRATEGIC)
        return perr(e, PATCH_EUNSUPPORTED, UNSUPPORTED_MSG);
    json_error_t je;
    json_t *p = json_loadb(body ? body : "", len, JSON_DECODE_ANY, &je);
    if (!p)
        return perr(e, PATCH_EBAD, "error decoding patch: %s (line %d, column %d)", je.text,
                    je.line, je.column);
    int rc;
    if (type == PATCH_TYPE_JSON)
        rc = patch_json(target, p, out, e);
    else if (type == PATCH_TYPE_MERGE)
        rc = patch_merge(target, p, out, e);
    else
        rc = patch_strategic(target, p, kind, out, e);
    json_decref(p);
    return rc;
}

json_t *patch_status_body(const struct err *e)
{
    int code = e && e->http_status ? e->http_status : 500;
    const char *reason = e && e->reason[0] ? e->reason : "InternalError";
    const char *msg = e ? e->msg : "";
    json_t *st = json_object();
    json_object_set_new(st, "kind", json_string("Status"));
    json_object_set_new(st, "apiVersion", json_string("v1"));
    json_object_set_new(st, "metadata", json_object());
    json_object_set_new(st, "status", json_string("Failure"));
    if (code == 422) {
        /* NewGenericServerResponse(422, ...) without causes: the detail is not sent. */
        json_object_set_new(
            st, "message",
            json_string("the server rejected our request due to an error in our request"));
        json_object_set_new(st, "reason", json_string("Invalid"));
        json_object_set_new(st, "details", json_object());
    } else {
        json_t *m = json_string(msg);
        json_object_set_new(st, "message", m ? m : json_string("invalid patch"));
        json_object_set_new(st, "reason", json_string(reason));
    }
    json_object_set_new(st, "code", json_integer(code));
    return st;
}
