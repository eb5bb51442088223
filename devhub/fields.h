/*
 * fields: which fields a kind knows, for the apiserver's field validation
 * (`fieldValidation=Strict|Warn|Ignore`, kubectl sends Strict for create,
 * apply and replace). An object decoded by the apiserver drops every field
 * its Go type (built-ins) or structural schema (CRDs) does not have; Strict
 * turns the dropped fields into a 400 `strict decoding error: unknown field
 * "spec.x"`, Warn into `Warning` headers, Ignore drops them silently.
 *
 * Built-ins: a compact table of the kinds the devhub's users write (Job, Pod,
 * Namespace, ConfigMap, Secret, Deployment, Node, Lease, Event in core/v1 and
 * events.k8s.io/v1) with ObjectMeta, PodSpec and Container in full; nested
 * types the table marks opaque (probes, security contexts, affinity, volume
 * sources, statuses of Pod/Node/Namespace) are not looked into. Other
 * built-in kinds have no table: nothing is dropped.
 * CRDs: the version's openAPIV3Schema (properties, additionalProperties,
 * items, x-kubernetes-preserve-unknown-fields, x-kubernetes-embedded-resource),
 * metadata at the root against ObjectMeta.
 * Paths are written as the apiserver does: "spec.template.spec.containers[0].x".
 */
#ifndef KKS_DEVHUB_FIELDS_H
#define KKS_DEVHUB_FIELDS_H

#include <jansson.h>
#include <stdbool.h>

enum fields_mode { FIELDS_IGNORE = 0, FIELDS_WARN = 1, FIELDS_STRICT = 2 };

/*
 * The `fieldValidation` query value: NULL or "" is Warn (the apiserver's
 * default); "Ignore", "Warn", "Strict" exactly. -EINVAL for anything else.
 */
int fields_mode_parse(const char *q, enum fields_mode *out);

/* True when the built-in group/kind has a field table. */
bool fields_known_builtin(const char *group, const char *kind);

/*
 * Remove the unknown fields of obj (modified), a built-in of group/kind,
 * appending each one's path (new string) to `paths` (an array) in document
 * order of the walk. Returns the number removed; 0 for kinds without a table.
 */
size_t fields_prune_builtin(const char *group, const char *kind, json_t *obj, json_t *paths);

/* The same for a custom resource with structural schema `schema` (borrowed;
 * NULL: nothing is pruned but metadata). */
size_t fields_prune_schema(const json_t *schema, json_t *obj, json_t *paths);

/* `strict decoding error: unknown field "a", unknown field "b"`. Caller frees. */
char *fields_strict_message(const json_t *paths);

#endif
