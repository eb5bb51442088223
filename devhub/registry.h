/*
 * registry: the resources the devhub serves (built-in kinds and CRD versions)
 * and the discovery documents built from them (/api, /apis, /apis/<g>,
 * /api/v1, /apis/<g>/<v>). Several versions of one CRD share storage
 * (the storage key prefix is "<resource>.<group>/").
 */
#ifndef KKS_DEVHUB_REGISTRY_H
#define KKS_DEVHUB_REGISTRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/err.h"

struct reg_resource {
    char *group; /* "" for core */
    char *version;
    char *resource; /* plural */
    char *kind;
    char *list_kind;
    char *singular;
    bool namespaced;
    bool has_status;
    bool has_scale;
    char *scale_spec_path;   /* for scale: e.g. ".spec.replicas" */
    char *scale_status_path; /* e.g. ".status.replicas" */
    char *scale_selector_path;
    json_t *short_names; /* array of strings */
    json_t *categories;  /* array of strings */
    json_t *columns;     /* CRD additionalPrinterColumns (array) or NULL */
    json_t *schema;      /* CRD version's schema.openAPIV3Schema or NULL (field pruning) */
    char *crd;           /* owning CRD name, NULL for built-ins */
    bool storage;        /* this version is the CRD's storage version */
    bool review;         /* create-only, nothing stored (SelfSubjectAccessReview...) */
};

struct registry;

/* A registry with the built-in kinds. */
struct registry *reg_new(void);
void reg_free(struct registry *reg);

/* Lookup by group, version and plural resource name. Borrowed; NULL if absent. */
const struct reg_resource *reg_find(const struct registry *reg, const char *group,
                                    const char *version, const char *resource);
/* Lookup by group and kind (any version; the first registered). Borrowed. */
const struct reg_resource *reg_find_kind(const struct registry *reg, const char *group,
                                         const char *kind);
/* Number of resources and positional access (for iteration). */
size_t reg_count(const struct registry *reg);
const struct reg_resource *reg_at(const struct registry *reg, size_t i);

/*
 * Register (or re-register) the served versions of an apiextensions.k8s.io/v1
 * CustomResourceDefinition object (borrowed). -EINVAL with a message when the
 * CRD lacks group/names/versions; -EEXIST when its names clash with a built-in.
 */
int reg_add_crd(struct registry *reg, json_t *crd, struct err *e);
/* Remove every resource of the named CRD. */
void reg_remove_crd(struct registry *reg, const char *crd_name);

/* Storage key prefix of a resource: "<resource>.<group>/". Caller frees. */
char *reg_storage_prefix(const struct reg_resource *r);
/* "v1" or "<group>/<version>". Caller frees. */
char *reg_api_version(const struct reg_resource *r);

/* Discovery documents (new references). NULL when the group/version is unknown. */
json_t *reg_doc_api(const struct registry *reg);
json_t *reg_doc_apis(const struct registry *reg);
json_t *reg_doc_group(const struct registry *reg, const char *group);
json_t *reg_doc_resources(const struct registry *reg, const char *group, const char *version);

#endif
