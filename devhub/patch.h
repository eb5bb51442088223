/*
 * patch: the three PATCH flavours of the Kubernetes API, applied to jansson
 * trees (the devhub's PATCH handler calls these; nothing here does I/O).
 *
 *   application/merge-patch+json            RFC 7386 JSON merge patch
 *   application/json-patch+json             RFC 6902 JSON patch (JSON pointers, RFC 6901)
 *   application/strategic-merge-patch+json  Kubernetes strategic merge patch, built-in kinds only
 *   application/apply-patch+yaml            server-side apply: not supported (415)
 *
 * Strategic merge patch follows apimachinery's strategicpatch package as the
 * server applies it (MergeParallelList, IgnoreUnmatchedNulls):
 *   - maps merge key by key, `null` deletes a key;
 *   - `$patch: replace` in a map replaces the whole map, `$patch: delete`
 *     empties it, `$patch: merge` is the default;
 *   - `$retainKeys: [k...]` drops every key of the live map not listed;
 *   - lists with a patch merge key (see the table in patch.c, e.g. containers
 *     by `name`, ports by `containerPort`) merge element by element; list
 *     elements `{"<key>": v, "$patch": "delete"}` remove that element,
 *     `{"$patch": "replace"}` replaces the whole list with the other elements;
 *   - lists of primitives with the merge strategy (finalizers) are merged as
 *     sets; `$deleteFromPrimitiveList/<field>: [...]` removes values;
 *   - `$setElementOrder/<field>: [...]` orders the merged list: items named
 *     there follow that order, server-only items keep their live position;
 *   - every other list (tolerations, args, command, unknown fields) is
 *     replaced; directives never appear in the result.
 * CRDs (builtin == false) reject strategic merge patch with 415, as the
 * apiserver does.
 *
 * Errors: every function returns 0 or a negative code and fills `e` (optional)
 * with a message in the apiserver's wording plus e->http_status and e->reason:
 *   PATCH_EBAD         (-EBADMSG)          400 BadRequest: the patch document is malformed
 *                                          (bad JSON, JSON patch not an array, bad directive)
 *   PATCH_EFAILED      (-EINVAL)           422 Invalid: a well-formed patch that cannot be applied
 *                                          (`test` failed, path missing, index out of range,
 *                                          unknown op, missing merge key)
 *   PATCH_EUNSUPPORTED (-EPROTONOSUPPORT)  415 UnsupportedMediaType (unknown content type,
 *                                          strategic merge on a CRD, server-side apply)
 *   PATCH_ETOOLARGE    (-E2BIG)            413 RequestEntityTooLarge (more than 10000 JSON
 *                                          patch operations)
 */
#ifndef KKS_DEVHUB_PATCH_H
#define KKS_DEVHUB_PATCH_H

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/err.h"

#define PATCH_EBAD         (-EBADMSG)
#define PATCH_EFAILED      (-EINVAL)
#define PATCH_EUNSUPPORTED (-EPROTONOSUPPORT)
#define PATCH_ETOOLARGE    (-E2BIG)

/* Maximum number of operations in one JSON patch (apiserver: 10000). */
#define PATCH_MAX_JSON_OPS 10000

enum patch_type {
    PATCH_TYPE_JSON = 1,  /* application/json-patch+json */
    PATCH_TYPE_MERGE,     /* application/merge-patch+json */
    PATCH_TYPE_STRATEGIC, /* application/strategic-merge-patch+json */
    PATCH_TYPE_APPLY,     /* application/apply-patch+yaml (server-side apply) */
};

/*
 * Map a request Content-Type (parameters after ';' ignored, case-insensitive)
 * to a patch type. PATCH_TYPE_APPLY is recognised so the caller can answer
 * with a precise message; patch_apply() refuses it. Unknown or NULL types give
 * PATCH_EUNSUPPORTED with the apiserver's 415 message.
 */
int patch_type_from_content_type(const char *content_type, enum patch_type *out, struct err *e);

/* The canonical media type of a patch type ("application/merge-patch+json"...). */
const char *patch_type_name(enum patch_type t);

/*
 * RFC 7386: apply `patch` to `target`. Both borrowed; *out receives a new
 * reference (target is never modified). A non-object patch replaces the
 * target. Never fails except for NULL arguments (PATCH_EBAD).
 */
int patch_merge(const json_t *target, const json_t *patch, json_t **out, struct err *e);

/*
 * RFC 6902: apply the operation array `patch` to `target` (borrowed); on
 * success *out is a new reference. Operations are applied in order on a copy;
 * on any error nothing is returned. `test` compares numbers numerically.
 */
int patch_json(const json_t *target, const json_t *patch, json_t **out, struct err *e);

/*
 * Strategic merge patch of an object of built-in kind `kind` ("Pod",
 * "Deployment", ...; may be NULL: only kind-independent rules apply).
 * `patch` must be a JSON object. Borrowed arguments; *out is a new reference.
 */
int patch_strategic(const json_t *target, const json_t *patch, const char *kind, json_t **out,
                    struct err *e);

/*
 * Parse the request body (`len` bytes, not necessarily NUL-terminated) and
 * apply it with the given type. `builtin` is false for custom resources
 * (strategic merge and apply are then refused with 415). Returns 0 and a new
 * reference in *out, or an error as described above (bad JSON is 400).
 */
int patch_apply(enum patch_type type, const char *kind, bool builtin, const json_t *target,
                const char *body, size_t len, json_t **out, struct err *e);

/*
 * The `Status` body the apiserver sends for a patch error in `e` (as filled
 * by the functions above). New reference. Note the apiserver's quirk: a 422
 * (a JSON patch that cannot be applied) carries only the generic message
 * "the server rejected our request due to an error in our request" with
 * empty details (errors.NewGenericServerResponse); e->msg then has the real
 * reason, for the devhub's log. 400, 413 and 415 bodies carry e->msg.
 */
json_t *patch_status_body(const struct err *e);

/*
 * The patch-merge-key table, exposed for tests and documentation: the list
 * strategy of the list field at dotted `path` (field names from the object
 * root, list indexes omitted, e.g. "spec.template.spec.containers.env") of
 * kind `kind`. Returns true for a merged list and sets *merge_key to the key
 * (NULL for a set of primitives); false when the list is replaced.
 */
bool patch_list_rule(const char *kind, const char *path, const char **merge_key);

#endif
