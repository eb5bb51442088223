/* sim_api: in-process requests to the hub for the simulators. */
#include "devhub/sim_api.h"

#include <stdio.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"

char *simapi_path(const char *group, const char *version, const char *resource, const char *ns,
                  const char *name, const char *sub)
{
    char *base = (group && *group) ? xasprintf("/apis/%s/%s", group, version)
                                   : xasprintf("/api/%s", version);
    char *p = (ns && *ns) ? xasprintf("%s/namespaces/%s/%s", base, ns, resource)
                          : xasprintf("%s/%s", base, resource);
    free(base);
    if (name) {
        char *q = sub ? xasprintf("%s/%s/%s", p, name, sub) : xasprintf("%s/%s", p, name);
        free(p);
        p = q;
    }
    return p;
}

static int call_w(struct hub *h, const char *method, const char *path, const struct hub_kv *q,
                  size_t nq, const char *ctype, const json_t *body, json_t **out,
                  struct hub_watch **watch)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct hub_req req = {.method = method,
                          .path = path,
                          .query = q,
                          .nquery = nq,
                          .content_type = ctype ? ctype : "application/json",
                          .accept = "application/json",
                          .body = text,
                          .body_len = text ? strlen(text) : 0,
                          .user = "devhub-simulator"};
    struct hub_resp resp = {0};
    hub_handle(h, &req, &resp);
    if (resp.watch && watch) {
        *watch = resp.watch;
        resp.watch = NULL;
    } else if (resp.watch) { /* never asked for; do not leak it */
        hub_watch_release(resp.watch);
        resp.watch = NULL;
    }
    if (out)
        *out = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
    int code = resp.code;
    hub_resp_release(&resp);
    free(text);
    return code;
}

static int call(struct hub *h, const char *method, const char *path, const struct hub_kv *q,
                size_t nq, const char *ctype, const json_t *body, json_t **out)
{
    return call_w(h, method, path, q, nq, ctype, body, out, NULL);
}

int simapi_watch(struct hub *h, const char *path, const char *label_selector,
                 struct hub_watch **out)
{
    struct hub_kv q[2] = {{"watch", "true"}, {"labelSelector", label_selector}};
    *out = NULL;
    int code = call_w(h, "GET", path, q, label_selector ? 2 : 1, NULL, NULL, NULL, out);
    if (code != 200 && *out) {
        hub_watch_release(*out);
        *out = NULL;
    }
    return code;
}

int simapi_get(struct hub *h, const char *path, json_t **out)
{
    return call(h, "GET", path, NULL, 0, NULL, NULL, out);
}

int simapi_list(struct hub *h, const char *path, const char *label_selector, json_t **items)
{
    json_t *all = json_array();
    char *cont = NULL;
    int code;
    for (;;) {
        struct hub_kv q[2];
        size_t n = 0;
        if (label_selector)
            q[n++] = (struct hub_kv){"labelSelector", label_selector};
        if (cont)
            q[n++] = (struct hub_kv){"continue", cont};
        json_t *page = NULL;
        code = call(h, "GET", path, q, n, NULL, NULL, &page);
        free(cont);
        cont = NULL;
        if (code != 200) {
            json_decref(page);
            break;
        }
        if (jx_arr(page, "items"))
            json_array_extend(all, jx_arr(page, "items"));
        const char *c = jx_str(page, "metadata.continue", NULL);
        if (c && *c)
            cont = xstrdup(c);
        json_decref(page);
        if (!cont)
            break;
    }
    if (code == 200 && items)
        *items = all;
    else {
        json_decref(all);
        if (items)
            *items = NULL;
    }
    return code;
}

int simapi_create(struct hub *h, const char *path, const json_t *obj, json_t **out)
{
    return call(h, "POST", path, NULL, 0, NULL, obj, out);
}

int simapi_patch(struct hub *h, const char *path, const json_t *patch, json_t **out)
{
    return call(h, "PATCH", path, NULL, 0, "application/merge-patch+json", patch, out);
}

int simapi_delete(struct hub *h, const char *path)
{
    json_t *opts = json_pack("{s:s}", "propagationPolicy", "Background");
    int code = call(h, "DELETE", path, NULL, 0, NULL, opts, NULL);
    json_decref(opts);
    return code;
}

bool simapi_group_served(struct hub *h, const char *group, const char *version)
{
    char *p = xasprintf("/apis/%s/%s", group, version);
    int code = call(h, "GET", p, NULL, 0, NULL, NULL, NULL);
    free(p);
    return code == 200;
}

char *simapi_crd_storage_version(struct hub *h, const char *crd_name)
{
    char *p = simapi_path("apiextensions.k8s.io", "v1", "customresourcedefinitions", NULL, crd_name,
                          NULL);
    json_t *crd = NULL;
    char *ret = NULL;
    if (simapi_get(h, p, &crd) == 200) {
        size_t i;
        json_t *v;
        json_array_foreach(jx_arr(crd, "spec.versions"), i, v)
        {
            if (jx_bool(v, "storage", false) && jx_str(v, "name", NULL)) {
                ret = xstrdup(jx_str(v, "name", NULL));
                break;
            }
        }
    }
    json_decref(crd);
    free(p);
    return ret;
}
