#include "devhub/route.h"

#include <errno.h>
#include <string.h>

#define MAX_SEGS 10

static int split(const char *path, char segs[MAX_SEGS][ROUTE_SEG_MAX + 1], int *n)
{
    *n = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (*n >= MAX_SEGS || len > ROUTE_SEG_MAX)
            return -EINVAL;
        memcpy(segs[*n], p, len);
        segs[*n][len] = '\0';
        (*n)++;
        p += len;
    }
    return 0;
}

static void set(char *dst, const char *src)
{
    size_t n = strlen(src);
    if (n > ROUTE_SEG_MAX)
        n = ROUTE_SEG_MAX;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* segs[i..n) after the group-version: [namespaces/<ns>/]<res>[/<name>[/<sub>]] */
static int parse_resource(struct route *r, char segs[MAX_SEGS][ROUTE_SEG_MAX + 1], int i, int n,
                          int core)
{
    int left = n - i;
    if (left <= 0)
        return -ENOENT;
    if (!strcmp(segs[i], "namespaces") && left >= 3) {
        if (core && left == 3 &&
            (!strcmp(segs[i + 2], "status") || !strcmp(segs[i + 2], "finalize"))) {
            set(r->resource, "namespaces");
            set(r->name, segs[i + 1]);
            set(r->sub, segs[i + 2]);
            r->kind = ROUTE_RESOURCE;
            return 0;
        }
        set(r->ns, segs[i + 1]);
        i += 2;
        left -= 2;
    }
    if (left > 3)
        return -ENOENT;
    set(r->resource, segs[i]);
    if (left >= 2)
        set(r->name, segs[i + 1]);
    if (left == 3)
        set(r->sub, segs[i + 2]);
    r->kind = ROUTE_RESOURCE;
    return 0;
}

int route_parse(const char *path, struct route *r)
{
    char segs[MAX_SEGS][ROUTE_SEG_MAX + 1];
    int n = 0;
    memset(r, 0, sizeof(*r));
    if (!path || path[0] != '/')
        return -ENOENT;
    if (!strncmp(path, "/devhub/", 8) || !strncmp(path, "/openapi/", 9) ||
        !strcmp(path, "/openapi")) {
        int v3 = !strncmp(path, "/openapi/v3", 11);
        int v2 = !strncmp(path, "/openapi/v2", 11);
        if (path[1] == 'd') {
            r->kind = ROUTE_ADMIN;
            set(r->rest, path + 8);
            return 0;
        }
        if (!v2 && !v3)
            return -ENOENT;
        r->kind = v3 ? ROUTE_OPENAPI_V3 : ROUTE_OPENAPI_V2;
        const char *rest = path + 11;
        while (*rest == '/')
            rest++;
        set(r->rest, rest);
        return 0;
    }
    int rc = split(path, segs, &n);
    if (rc)
        return rc;
    if (n == 0)
        return -ENOENT;
    if (n == 1) {
        if (!strcmp(segs[0], "version"))
            r->kind = ROUTE_VERSION;
        else if (!strcmp(segs[0], "healthz") || !strcmp(segs[0], "readyz") ||
                 !strcmp(segs[0], "livez"))
            r->kind = ROUTE_HEALTH;
        else if (!strcmp(segs[0], "api"))
            r->kind = ROUTE_API;
        else if (!strcmp(segs[0], "apis"))
            r->kind = ROUTE_APIS;
        else
            return -ENOENT;
        return 0;
    }
    if ((!strcmp(segs[0], "healthz") || !strcmp(segs[0], "readyz") || !strcmp(segs[0], "livez"))) {
        r->kind = ROUTE_HEALTH;
        return 0;
    }
    if (!strcmp(segs[0], "api")) {
        set(r->version, segs[1]);
        if (n == 2) {
            r->kind = ROUTE_GROUP_VERSION;
            return 0;
        }
        rc = parse_resource(r, segs, 2, n, 1);
    } else if (!strcmp(segs[0], "apis")) {
        set(r->group, segs[1]);
        if (n == 2) {
            r->kind = ROUTE_GROUP;
            return 0;
        }
        set(r->version, segs[2]);
        if (n == 3) {
            r->kind = ROUTE_GROUP_VERSION;
            return 0;
        }
        rc = parse_resource(r, segs, 3, n, 0);
    } else {
        return -ENOENT;
    }
    if (rc)
        r->kind = ROUTE_NOT_FOUND;
    return rc;
}
