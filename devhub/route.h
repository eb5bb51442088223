/*
 * route: parse a Kubernetes API request path into what it addresses.
 *
 *   /version /healthz /readyz /livez /api /apis /openapi/v2 /openapi/v3[/...]
 *   /api/v1                              group-version discovery (core)
 *   /apis/<g>  /apis/<g>/<v>             group / group-version discovery
 *   /api/v1[/namespaces/<ns>]/<res>[/<name>[/<sub>]]
 *   /apis/<g>/<v>[/namespaces/<ns>]/<res>[/<name>[/<sub>]]
 *   /devhub/<...>                        admin endpoints
 *
 * /api/v1/namespaces/<ns> is the Namespace object itself, and
 * /api/v1/namespaces/<ns>/status|finalize its subresources.
 */
#ifndef KKS_DEVHUB_ROUTE_H
#define KKS_DEVHUB_ROUTE_H

enum route_kind {
    ROUTE_NOT_FOUND = 0,
    ROUTE_VERSION,
    ROUTE_HEALTH, /* healthz, readyz, livez */
    ROUTE_API,    /* /api */
    ROUTE_APIS,   /* /apis */
    ROUTE_GROUP,  /* /apis/<g> */
    ROUTE_GROUP_VERSION,
    ROUTE_RESOURCE,
    ROUTE_OPENAPI_V2,
    ROUTE_OPENAPI_V3,
    ROUTE_ADMIN,
};

#define ROUTE_SEG_MAX 254

struct route {
    enum route_kind kind;
    char group[ROUTE_SEG_MAX + 1];
    char version[ROUTE_SEG_MAX + 1];
    char resource[ROUTE_SEG_MAX + 1];
    char ns[ROUTE_SEG_MAX + 1];
    char name[ROUTE_SEG_MAX + 1];
    char sub[ROUTE_SEG_MAX + 1];  /* subresource ("status", "scale") */
    char rest[ROUTE_SEG_MAX + 1]; /* admin / openapi: the remainder after the prefix */
};

/* Parse path (without query string). Always fills r; returns 0, or -ENOENT
 * when the path is not an API path (r->kind = ROUTE_NOT_FOUND), or -EINVAL
 * for an over-long segment or too many segments. */
int route_parse(const char *path, struct route *r);

#endif
