/*
 * sim_api: the devhub simulators' in-process client of the hub API
 * (devhub/hub.h). Requests go through hub_handle exactly as HTTP requests
 * would (same validation, resourceVersions, watch events), without HTTP.
 *
 * Every function returns the HTTP status code of the hub's answer (200,
 * 201, 404, 409, ...). Bodies handed in are borrowed; *out (optional)
 * receives a NEW reference to the parsed response body (the object, or a
 * Status on errors), or NULL.
 */
#ifndef KKS_DEVHUB_SIM_API_H
#define KKS_DEVHUB_SIM_API_H

#include <jansson.h>
#include <stdbool.h>

#include "devhub/hub.h"

/* Path of a collection or an object: group "" is the core API ("/api/v1/..."),
 * ns NULL/"" a cluster-scoped or all-namespaces path, name NULL the collection,
 * sub NULL or a subresource ("status"). New string. */
char *simapi_path(const char *group, const char *version, const char *resource, const char *ns,
                  const char *name, const char *sub);

int simapi_get(struct hub *h, const char *path, json_t **out);
/* List (all pages). *items gets a NEW reference to the items array (never NULL
 * on 200). label_selector may be NULL. */
int simapi_list(struct hub *h, const char *path, const char *label_selector, json_t **items);
int simapi_create(struct hub *h, const char *path, const json_t *obj, json_t **out);
/* JSON merge patch (RFC 7386) of path (which may end in /status). */
int simapi_patch(struct hub *h, const char *path, const json_t *patch, json_t **out);
/* Delete with propagationPolicy=Background. */
int simapi_delete(struct hub *h, const char *path);
/* Start a watch of collection `path` (label_selector may be NULL) from the
 * current state: every existing object first comes as ADDED, then changes.
 * On 200 *out is the watch (read it with hub_watch_read, free it with
 * hub_watch_release); otherwise *out is NULL. */
int simapi_watch(struct hub *h, const char *path, const char *label_selector,
                 struct hub_watch **out);
/* True when GET /apis/<group>/<version> answers 200 (the kind may be served). */
bool simapi_group_served(struct hub *h, const char *group, const char *version);
/* The storage version of CRD `crd_name` ("workloads.kueue.x-k8s.io"): a NEW
 * string, or NULL when the CRD does not exist. */
char *simapi_crd_storage_version(struct hub *h, const char *crd_name);

#endif
