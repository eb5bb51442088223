/*
 * jsonx: helpers over jansson for Kubernetes objects.
 *
 * Paths. A path is a dot-separated list of object keys with optional array
 * indexes: "metadata.labels", "spec.containers[0].name",
 * "status.conditions[2]". A backslash escapes the next character, so keys
 * containing dots or brackets can be written inline:
 * "metadata.labels.kubestellar\\.io/cluster" (C source) addresses the label
 * "kubestellar.io/cluster". The empty path "" addresses the root itself.
 * A key segment may be at most JX_KEY_MAX bytes. A malformed path (unclosed
 * "[", non-numeric index, trailing backslash, empty key such as "a..b")
 * never matches anything; setters return -EINVAL for it.
 *
 * The *v variants take the keys as a varargs list of plain strings instead
 * (no escaping needed): jx_getv(obj, "metadata", "labels",
 * "kubestellar.io/cluster"). In a varargs list, a key applied to an array
 * must be a decimal index ("0", "12").
 *
 * Ownership: getters return BORROWED references (valid while the parent is
 * alive and unmodified); functions named *_new consume the value passed in
 * (also on error), like jansson's json_object_set_new. Functions that return
 * char * return a new string the caller frees.
 */
#ifndef KKS_JSON_JSONX_H
#define KKS_JSON_JSONX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/err.h"

#define JX_KEY_MAX 512
/* The longest "namespace/name" key of an object: both at most 253 bytes
 * (DNS subdomain names; namespaces are shorter, but objects from the API are
 * checked, not trusted). A buffer of JX_OBJ_KEY_MAX + 1 holds any key. */
#define JX_OBJ_KEY_MAX (253 + 1 + 253)

/* ---- lookup --------------------------------------------------------------- */

/* Value at `path` under `root`, or NULL when absent/malformed. Borrowed. root may be NULL. */
json_t *jx_get(const json_t *root, const char *path);
/* Value at the key list (the macro appends the terminating NULL; an extra trailing NULL written
 * by the caller is harmless). Borrowed. */
#define jx_getv(root, ...) jx__getv((root), __VA_ARGS__, (const char *)0)
json_t *jx__getv(const json_t *root, ...) __attribute__((sentinel));

/* Typed getters: the value at path when it has the right type, else `def`. */
const char *jx_str(const json_t *root, const char *path, const char *def); /* borrowed */
/* The string field `key` of the object o (one key, not a path), or "" when o is not an
 * object or the field is absent or not a string. Borrowed. */
const char *jx_field_str(const json_t *o, const char *key);
/* Integers; a real with an integral value in range is accepted too. */
long long jx_int(const json_t *root, const char *path, long long def);
bool jx_bool(const json_t *root, const char *path, bool def);
/* Object / array at path, or NULL (wrong type or absent). Borrowed. */
json_t *jx_obj(const json_t *root, const char *path);
json_t *jx_arr(const json_t *root, const char *path);

/* ---- modification --------------------------------------------------------- */

/*
 * Set the value at path, creating missing intermediate objects (a JSON null
 * intermediate is replaced by an object). An array index must name an
 * existing element, or be equal to the array size (append).
 * jx_set_new consumes `value` (also on error); jx_set borrows it (takes its
 * own reference). Returns 0, -EINVAL (bad path, empty path, or an
 * intermediate that is a string/number/...), -ERANGE (index out of range).
 */
int jx_set_new(json_t *root, const char *path, json_t *value, struct err *e);
int jx_set(json_t *root, const char *path, json_t *value, struct err *e);
/* Same with a key list after the value (terminating NULL appended by the macro). Consumes value.
 * 0 or -EINVAL (an intermediate is not an object, or no keys). */
#define jx_setv_new(root, value, ...) jx__setv_new((root), (value), __VA_ARGS__, (const char *)0)
int jx__setv_new(json_t *root, json_t *value, ...) __attribute__((sentinel));
/* Convenience: set a string (copied). */
int jx_set_str(json_t *root, const char *path, const char *s, struct err *e);

/* Remove the value at path: 0 removed, -ENOENT absent, -EINVAL bad path. */
int jx_del(json_t *root, const char *path);

/* The first element of array `arr` that is an object whose string member `field` equals
 * `value` (e.g. status.admissionChecks[] by "name"), or NULL. Borrowed. */
json_t *jx_find_by(const json_t *arr, const char *field, const char *value);

/* ---- parsing / printing --------------------------------------------------- */

/* Parse a JSON text of n bytes. New reference, or NULL with e filled
 * ("invalid JSON at line L column C (byte P): text"). */
json_t *jx_loadb(const char *data, size_t n, struct err *e);
/* Compact one-line JSON with sorted keys. New string. "null" for NULL. */
char *jx_dumps(const json_t *v);
/*
 * The text json_dumps(v, flags) gives, as a string of malloc's (free with free()), or NULL
 * where json_dumps gives NULL. json_dumps's own result is allocated with jansson's allocator,
 * which kueue-ks points at a slab pool (pkg/util/slab): it must not reach free(). Use this.
 */
char *jx_dumps_flags(const json_t *v, size_t flags);

/*
 * A deep copy of v: what jansson's json_deep_copy returns (same values, same key order),
 * without its loop check, which formats every container's address with snprintf into a hash
 * table (a third of its cost; docs/performance.md). Trees here are parsed or built, never
 * cyclic. New reference; NULL for NULL.
 */
json_t *jx_deep_copy(const json_t *v);

/* ---- RFC 7386 JSON merge patch --------------------------------------------- */

/*
 * Apply `patch` to `target` (RFC 7386 MergePatch). Returns a NEW reference
 * to the result; neither input is modified. target may be NULL (treated as
 * absent). A patch that is not an object replaces the target.
 */
json_t *jx_merge_apply(const json_t *target, const json_t *patch);

/*
 * Compute a merge patch that turns `from` into `to`: jx_merge_apply(from,
 * result) equals `to`. New reference; an empty object {} when equal.
 * Objects are diffed recursively; keys missing in `to` become null; arrays
 * and scalars are replaced whole. Limitation inherent to RFC 7386: a null
 * member value inside `to` cannot be expressed (it would mean "delete"), so
 * such members are deleted by the patch.
 */
json_t *jx_merge_diff(const json_t *from, const json_t *to);

/* Builder for merge-patch documents ({"metadata":{"labels":{"a":"b","c":null}}}). */
struct jx_patch {
    json_t *doc; /* owned; always an object */
};
void jx_patch_init(struct jx_patch *p);
void jx_patch_release(struct jx_patch *p);
/* Set path to value (consumed). Same path rules as jx_set_new. */
int jx_patch_set_new(struct jx_patch *p, const char *path, json_t *value);
int jx_patch_set_str(struct jx_patch *p, const char *path, const char *s);
/* Delete path (writes null). */
int jx_patch_delete(struct jx_patch *p, const char *path);
/* Label / annotation helpers: value NULL deletes. The key needs no escaping. */
int jx_patch_label(struct jx_patch *p, const char *key, const char *value);
int jx_patch_annotation(struct jx_patch *p, const char *key, const char *value);
bool jx_patch_empty(const struct jx_patch *p);
/* Compact JSON text of the patch. New string. */
char *jx_patch_dumps(const struct jx_patch *p);
/* Hand the document to the caller (new reference); the builder is empty again. */
json_t *jx_patch_take(struct jx_patch *p);

/* ---- Kubernetes object accessors ------------------------------------------- */

/* metadata.* strings; NULL when absent. Borrowed. */
const char *jx_name(const json_t *obj);
const char *jx_namespace(const json_t *obj);
const char *jx_uid(const json_t *obj);
const char *jx_resource_version(const json_t *obj);
const char *jx_kind(const json_t *obj);
const char *jx_api_version(const json_t *obj);
/* metadata.generation, 0 when absent. */
long long jx_generation(const json_t *obj);
/* metadata.labels / annotations object or NULL. Borrowed. */
json_t *jx_labels(const json_t *obj);
json_t *jx_annotations(const json_t *obj);
/* One label / annotation value or NULL. Borrowed. */
const char *jx_label(const json_t *obj, const char *key);
const char *jx_annotation(const json_t *obj, const char *key);
/* Set (value != NULL) or remove (value == NULL) a label / annotation in place. 0 or -EINVAL. */
int jx_set_label(json_t *obj, const char *key, const char *value);
int jx_set_annotation(json_t *obj, const char *key, const char *value);

/* "namespace/name" or "name" for cluster-scoped objects. New string; NULL without a name. */
char *jx_obj_key(const json_t *obj);
/* Same from parts (ns NULL or "" -> "name"). New string. */
char *jx_key_make(const char *ns, const char *name);
/* Split "ns/name" or "name": *ns is NULL for a cluster-scoped key. New strings. 0 or -EINVAL. */
int jx_key_split(const char *key, char **ns, char **name);

/* ---- status.conditions[] ------------------------------------------------------ */

/* The condition with this type in status.conditions, or NULL. Borrowed. */
json_t *jx_cond_find(const json_t *obj, const char *type);
/* Same on a conditions array. */
json_t *jx_conds_find(const json_t *conds, const char *type);
/* Its status ("True", "False", "Unknown") or NULL. Borrowed. */
const char *jx_cond_status(const json_t *obj, const char *type);
bool jx_cond_is_true(const json_t *obj, const char *type);

struct jx_cond {
    const char *type;              /* required */
    const char *status;            /* required: "True", "False" or "Unknown" */
    const char *reason;            /* optional: NULL removes an existing reason */
    const char *message;           /* optional: NULL removes an existing message */
    long long observed_generation; /* written when > 0 */
};

/*
 * Create or update the condition `c->type` in the array `conds`.
 * lastTransitionTime is set to `now` (RFC 3339; NULL = current time) when the
 * condition is new or its status changes, and kept otherwise.
 * Returns 1 when something changed, 0 when the condition was already
 * identical, -EINVAL when type/status are missing or conds is not an array.
 */
int jx_conds_set(json_t *conds, const struct jx_cond *c, const char *now);
/*
 * Same on obj.status.conditions (created when missing).
 * For a merge patch: arrays are replaced whole, so patch the full list:
 *   json_t *c = jx_deep_copy(jx_arr(obj, "status.conditions")) or json_array();
 *   if (jx_conds_set(c, &cond, NULL) > 0) jx_patch_set_new(&p, "status.conditions", c);
 */
int jx_cond_set(json_t *obj, const struct jx_cond *c, const char *now);
/* Remove a condition by type: 1 removed, 0 absent. */
int jx_cond_remove(json_t *obj, const char *type);

/* ---- ownerReferences ------------------------------------------------------------ */

/* The owner reference with controller: true, or NULL. Borrowed. */
json_t *jx_owner_controller(const json_t *obj);
/* The first owner reference of `kind` (and API group `group` when non-NULL:
 * "" is the core group, "batch" matches "batch/v1"), or NULL. Borrowed. */
json_t *jx_owner_find(const json_t *obj, const char *group, const char *kind);

/*
 * Route jansson's allocations through pkg/util/xalloc (json_set_alloc_funcs):
 * out of memory then aborts with a message instead of json_object(),
 * json_pack() or json_string() silently returning NULL, which the code
 * (like every caller of xmalloc) never checks. Call once at the top of each
 * main(), before any JSON value exists.
 */
void jx_use_xalloc(void);

/*
 * The process's JSON allocator told that the values made until the next call will be kept
 * long (true: a cache's records) or not (false). main's (cmd/kueue-ks/main.c: long-lived
 * values get slabs of their own, pkg/util/slab.h), handed down through the configs; NULL
 * where there is none.
 */
typedef void (*jx_lifetime_fn)(bool long_lived);

#endif
