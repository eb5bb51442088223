/*
 * validate: checks of a decoded create/update request body against the
 * resource named by the URL, with the apiserver's status codes and wording.
 *
 *   400 BadRequest  body too large (413 RequestEntityTooLarge), not JSON, not
 *                   an object, wrong field types in metadata, an apiVersion
 *                   other than the URL's exact group/version, another kind
 *                   for a built-in resource, namespace or name in the body
 *                   not those of the URL
 *   422 Invalid     field validation (including another kind for a custom
 *                   resource: `kind: Invalid value: "X": must be Y`), reported as
 *                   `Job.batch "x" is invalid: spec.template.spec.containers: Required value`
 *                   with details.causes[] {reason, field, message}
 *
 * Checked: metadata.name (DNS-1123 subdomain; DNS-1123 label for Namespace;
 * DNS-1035 label for Service; path segment for RBAC kinds), name or
 * generateName required on create, label keys and values, annotation keys
 * and total size (256 KiB), and the required fields of the built-ins the
 * devhub serves: Pod/Job/Deployment pod templates (containers with name and
 * image, unique container names, Job restartPolicy OnFailure|Never),
 * Deployment selector, Service ports, ConfigMap/Secret data keys, Lease
 * durations, CRD name = <plural>.<group>.
 * Quantities (container resources requests/limits, pod resources and
 * overhead of Pods, Job/Deployment/PodTemplate templates; Node capacity and
 * allocatable) fail as the apiserver's decoding does: 400 `Pod in version "v1"
 * cannot be handled as a Pod: quantities must match the regular expression ...`.
 * Nothing here modifies the body except valid_normalize().
 */
#ifndef KKS_DEVHUB_VALIDATE_H
#define KKS_DEVHUB_VALIDATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The apiserver's request body limit (3 MiB). */
#define VALID_MAX_BODY   (3u * 1024u * 1024u)
#define VALID_MAX_CAUSES 16
/* Total size of metadata.annotations keys + values (apimachinery TotalAnnotationSizeLimitB). */
#define VALID_MAX_ANNOTATIONS (256 * 1024)

/* The resource the URL names. Strings borrowed; they must outlive the call. */
struct valid_target {
    const char *group;     /* "" or NULL for the core group */
    const char *version;   /* "v1", "v1beta2" */
    const char *kind;      /* "Pod", "Workload" */
    const char *namespace; /* namespace from the URL (NULL for cluster-scoped) */
    const char *name;      /* name from the URL (update), NULL on create */
    bool namespaced;
    bool builtin; /* built-in kind: its required fields are checked */
};

enum valid_op { VALID_CREATE = 0, VALID_UPDATE = 1 };

struct valid_cause {
    char reason[32]; /* FieldValueRequired, FieldValueInvalid, FieldValueTooLong, ... */
    char field[160]; /* "spec.template.spec.containers[0].image" */
    char message[640];
};

/* Outcome of a check: code 0 = valid. */
struct valid_result {
    int code;        /* HTTP status: 0, 400, 413 or 422 */
    char reason[32]; /* "BadRequest", "Invalid", "RequestEntityTooLarge" */
    char message[2048];
    char kind[64];  /* details.kind (422) */
    char group[96]; /* details.group (422) */
    char name[254]; /* details.name (422) */
    size_t ncauses;
    struct valid_cause causes[VALID_MAX_CAUSES];
};

/*
 * Parse a request body of `len` bytes (need not be NUL-terminated) as one
 * JSON object of at most `max` bytes (0 = VALID_MAX_BODY). Returns 0 and a
 * new reference in *out, or -EINVAL (400) / -E2BIG (413) with `r` filled.
 */
int valid_parse_body(const char *body, size_t len, size_t max, json_t **out,
                     struct valid_result *r);

/*
 * Validate `obj` (borrowed) for `op` on target `t`. Returns 0 when valid,
 * else -EINVAL with r->code 400 or 422 and the message/causes filled. An
 * empty apiVersion or kind is accepted (the URL supplies them); a body in
 * another version of the same group is refused, as the apiserver does.
 */
int valid_check(const struct valid_target *t, enum valid_op op, const json_t *obj,
                struct valid_result *r);

/*
 * Fill what the apiserver defaults from the URL before storing: apiVersion
 * and kind when missing, metadata.namespace from the URL for namespaced
 * resources, and drop metadata.namespace for cluster-scoped ones. Call after
 * a successful valid_check(). `obj` must be an object.
 */
void valid_normalize(const struct valid_target *t, json_t *obj);

/*
 * The `Status` body for a failed result (kind Status, apiVersion v1, status
 * Failure, message, reason, details with causes for 422, code). New reference.
 */
json_t *valid_status_body(const struct valid_result *r);

/*
 * Fill r as a 422 Invalid of one cause (reason "FieldValueInvalid", field
 * "spec.selector", message "Required value") for object `name` of
 * group/kind, with the apiserver's message. Returns -EINVAL.
 */
int valid_fail_field(struct valid_result *r, const char *group, const char *kind, const char *name,
                     const char *reason, const char *field, const char *message);

/*
 * Single checks; each returns NULL when valid or a static/`buf` message in
 * the apimachinery wording ("a lowercase RFC 1123 subdomain must consist of...").
 */
const char *valid_dns1123_subdomain(const char *s, char *buf, size_t n);
const char *valid_dns1123_label(const char *s, char *buf, size_t n);
const char *valid_dns1035_label(const char *s, char *buf, size_t n);
const char *valid_qualified_name(const char *s, char *buf, size_t n); /* label/annotation keys */
const char *valid_label_value(const char *s, char *buf, size_t n);

#endif
