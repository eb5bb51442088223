#include "devhub/registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"

struct registry {
    struct reg_resource **res;
    size_t n, cap;
};

struct builtin {
    const char *group, *version, *resource, *kind, *singular;
    bool namespaced, status, scale;
    const char *shorts; /* comma-separated */
    const char *cats;
};

static const struct builtin builtins[] = {
    {"", "v1", "namespaces", "Namespace", "namespace", false, true, false, "ns", NULL},
    {"", "v1", "nodes", "Node", "node", false, true, false, "no", NULL},
    {"", "v1", "pods", "Pod", "pod", true, true, false, "po", "all"},
    {"", "v1", "secrets", "Secret", "secret", true, false, false, NULL, NULL},
    {"", "v1", "configmaps", "ConfigMap", "configmap", true, false, false, "cm", NULL},
    {"", "v1", "serviceaccounts", "ServiceAccount", "serviceaccount", true, false, false, "sa",
     NULL},
    {"", "v1", "events", "Event", "event", true, false, false, "ev", NULL},
    {"", "v1", "services", "Service", "service", true, true, false, "svc", "all"},
    {"events.k8s.io", "v1", "events", "Event", "event", true, false, false, "ev", NULL},
    {"coordination.k8s.io", "v1", "leases", "Lease", "lease", true, false, false, NULL, NULL},
    {"batch", "v1", "jobs", "Job", "job", true, true, false, NULL, "all"},
    {"apps", "v1", "deployments", "Deployment", "deployment", true, true, true, "deploy", "all"},
    {"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", "clusterrole", false, false,
     false, NULL, NULL},
    {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding",
     "clusterrolebinding", false, false, false, NULL, NULL},
    {"rbac.authorization.k8s.io", "v1", "roles", "Role", "role", true, false, false, NULL, NULL},
    {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", "rolebinding", true, false,
     false, NULL, NULL},
    {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
     "customresourcedefinition", false, true, false, "crd,crds", NULL},
    /* Create-only reviews: kubectl auth can-i / auth whoami. */
    {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview",
     "selfsubjectaccessreview", false, false, false, NULL, "review"},
    {"authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview",
     "selfsubjectrulesreview", false, false, false, NULL, "review"},
    {"authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", "selfsubjectreview",
     false, false, false, NULL, "review"},
};

static json_t *csv_array(const char *csv)
{
    json_t *a = json_array();
    if (!csv)
        return a;
    const char *p = csv;
    while (*p) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        json_array_append_new(a, json_stringn(p, n));
        p += n;
        if (*p == ',')
            p++;
    }
    return a;
}

static void res_free(struct reg_resource *r)
{
    if (!r)
        return;
    free(r->group);
    free(r->version);
    free(r->resource);
    free(r->kind);
    free(r->list_kind);
    free(r->singular);
    free(r->scale_spec_path);
    free(r->scale_status_path);
    free(r->scale_selector_path);
    json_decref(r->short_names);
    json_decref(r->categories);
    json_decref(r->columns);
    json_decref(r->schema);
    free(r->crd);
    free(r);
}

static void add(struct registry *reg, struct reg_resource *r)
{
    if (reg->n == reg->cap) {
        reg->cap = reg->cap ? reg->cap * 2 : 32;
        reg->res = xrealloc(reg->res, reg->cap * sizeof(*reg->res));
    }
    reg->res[reg->n++] = r;
}

static struct reg_resource *res_new(const char *group, const char *version, const char *resource,
                                    const char *kind, const char *singular)
{
    struct reg_resource *r = xcalloc(1, sizeof(*r));
    r->group = xstrdup(group);
    r->version = xstrdup(version);
    r->resource = xstrdup(resource);
    r->kind = xstrdup(kind);
    r->list_kind = xasprintf("%sList", kind);
    r->singular = xstrdup(singular);
    r->storage = true;
    return r;
}

struct registry *reg_new(void)
{
    struct registry *reg = xcalloc(1, sizeof(*reg));
    for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
        const struct builtin *b = &builtins[i];
        struct reg_resource *r = res_new(b->group, b->version, b->resource, b->kind, b->singular);
        r->namespaced = b->namespaced;
        r->has_status = b->status;
        r->has_scale = b->scale;
        if (b->scale) {
            r->scale_spec_path = xstrdup(".spec.replicas");
            r->scale_status_path = xstrdup(".status.replicas");
            r->scale_selector_path = xstrdup(".status.selector");
        }
        r->short_names = csv_array(b->shorts);
        r->review = b->cats && !strcmp(b->cats, "review");
        r->categories = csv_array(r->review ? NULL : b->cats);
        add(reg, r);
    }
    return reg;
}

void reg_free(struct registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++)
        res_free(reg->res[i]);
    free(reg->res);
    free(reg);
}

const struct reg_resource *reg_find(const struct registry *reg, const char *group,
                                    const char *version, const char *resource)
{
    for (size_t i = 0; i < reg->n; i++) {
        const struct reg_resource *r = reg->res[i];
        if (!strcmp(r->group, group) && !strcmp(r->version, version) &&
            !strcmp(r->resource, resource))
            return r;
    }
    return NULL;
}

const struct reg_resource *reg_find_kind(const struct registry *reg, const char *group,
                                         const char *kind)
{
    for (size_t i = 0; i < reg->n; i++) {
        const struct reg_resource *r = reg->res[i];
        if (!strcmp(r->group, group) && !strcmp(r->kind, kind))
            return r;
    }
    return NULL;
}

size_t reg_count(const struct registry *reg)
{
    return reg->n;
}

const struct reg_resource *reg_at(const struct registry *reg, size_t i)
{
    return i < reg->n ? reg->res[i] : NULL;
}

void reg_remove_crd(struct registry *reg, const char *crd_name)
{
    size_t j = 0;
    for (size_t i = 0; i < reg->n; i++) {
        if (reg->res[i]->crd && !strcmp(reg->res[i]->crd, crd_name))
            res_free(reg->res[i]);
        else
            reg->res[j++] = reg->res[i];
    }
    reg->n = j;
}

int reg_add_crd(struct registry *reg, json_t *crd, struct err *e)
{
    json_t *spec = json_object_get(crd, "spec");
    json_t *names = json_object_get(spec, "names");
    const char *crd_name = jx_field_str(json_object_get(crd, "metadata"), "name");
    const char *group = jx_field_str(spec, "group");
    const char *plural = jx_field_str(names, "plural");
    const char *kind = jx_field_str(names, "kind");
    json_t *versions = json_object_get(spec, "versions");
    if (!*group || !*plural || !*kind || !json_is_array(versions) || !json_array_size(versions))
        return err_set(e, -EINVAL,
                       "CustomResourceDefinition %s: spec.group, spec.names.plural, "
                       "spec.names.kind and spec.versions are required",
                       crd_name);
    for (size_t i = 0; i < reg->n; i++) {
        if (!reg->res[i]->crd && !strcmp(reg->res[i]->group, group))
            return err_set(e, -EEXIST, "group %s is served by a built-in API", group);
    }
    reg_remove_crd(reg, crd_name);
    const char *singular = jx_field_str(names, "singular");
    char *lower = NULL;
    if (!*singular) {
        lower = xstrdup(kind);
        for (char *p = lower; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        singular = lower;
    }
    bool namespaced = strcmp(jx_field_str(spec, "scope"), "Cluster") != 0;
    size_t i;
    json_t *v;
    json_array_foreach(versions, i, v)
    {
        const char *vname = jx_field_str(v, "name");
        if (!*vname || json_is_false(json_object_get(v, "served")))
            continue;
        struct reg_resource *r = res_new(group, vname, plural, kind, singular);
        const char *lk = jx_field_str(names, "listKind");
        if (*lk) {
            free(r->list_kind);
            r->list_kind = xstrdup(lk);
        }
        r->namespaced = namespaced;
        r->storage = json_is_true(json_object_get(v, "storage"));
        json_t *sub = json_object_get(v, "subresources");
        r->has_status = json_object_get(sub, "status") != NULL;
        json_t *scale = json_object_get(sub, "scale");
        if (scale) {
            r->has_scale = true;
            r->scale_spec_path = xstrdup(jx_field_str(scale, "specReplicasPath"));
            r->scale_status_path = xstrdup(jx_field_str(scale, "statusReplicasPath"));
            r->scale_selector_path = xstrdup(jx_field_str(scale, "labelSelectorPath"));
        }
        json_t *sn = json_object_get(names, "shortNames");
        r->short_names = json_is_array(sn) ? jx_deep_copy(sn) : json_array();
        json_t *cats = json_object_get(names, "categories");
        r->categories = json_is_array(cats) ? jx_deep_copy(cats) : json_array();
        json_t *cols = json_object_get(v, "additionalPrinterColumns");
        r->columns = json_is_array(cols) ? jx_deep_copy(cols) : NULL;
        json_t *sch = json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
        r->schema = json_is_object(sch) ? jx_deep_copy(sch) : NULL;
        r->crd = xstrdup(crd_name);
        add(reg, r);
    }
    free(lower);
    return 0;
}

char *reg_storage_prefix(const struct reg_resource *r)
{
    return xasprintf("%s.%s/", r->resource, r->group);
}

char *reg_api_version(const struct reg_resource *r)
{
    if (!*r->group)
        return xstrdup(r->version);
    return xasprintf("%s/%s", r->group, r->version);
}

json_t *reg_doc_api(const struct registry *reg)
{
    (void)reg;
    return json_pack("{s:s, s:[s], s:[{s:s, s:s}]}", "kind", "APIVersions", "versions", "v1",
                     "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0", "serverAddress",
                     "127.0.0.1");
}

/* Versions of a group in registration order, without duplicates; preferred = storage. */
static json_t *group_entry(const struct registry *reg, const char *group)
{
    json_t *versions = json_array();
    const char *preferred = NULL;
    for (size_t i = 0; i < reg->n; i++) {
        const struct reg_resource *r = reg->res[i];
        if (strcmp(r->group, group))
            continue;
        bool seen = false;
        size_t k;
        json_t *v;
        json_array_foreach(versions, k, v)
        {
            if (!strcmp(jx_field_str(v, "version"), r->version))
                seen = true;
        }
        if (!seen) {
            json_t *ent = json_pack("{s:s++, s:s}", "groupVersion", group, "/", r->version,
                                    "version", r->version);
            json_array_append_new(versions, ent);
        }
        if (r->storage && !preferred)
            preferred = r->version;
    }
    if (!json_array_size(versions)) {
        json_decref(versions);
        return NULL;
    }
    json_t *pv = NULL;
    size_t k;
    json_t *v;
    json_array_foreach(versions, k, v)
    {
        if (preferred && !strcmp(jx_field_str(v, "version"), preferred))
            pv = v;
    }
    if (!pv)
        pv = json_array_get(versions, 0);
    return json_pack("{s:s, s:o, s:O}", "name", group, "versions", versions, "preferredVersion",
                     pv);
}

json_t *reg_doc_apis(const struct registry *reg)
{
    json_t *groups = json_array();
    json_t *seen = json_object();
    for (size_t i = 0; i < reg->n; i++) {
        const char *g = reg->res[i]->group;
        if (!*g || json_object_get(seen, g))
            continue;
        json_object_set_new(seen, g, json_true());
        json_t *ent = group_entry(reg, g);
        if (ent)
            json_array_append_new(groups, ent);
    }
    json_decref(seen);
    return json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups",
                     groups);
}

json_t *reg_doc_group(const struct registry *reg, const char *group)
{
    if (!*group)
        return NULL;
    json_t *ent = group_entry(reg, group);
    if (!ent)
        return NULL;
    json_object_set_new(ent, "kind", json_string("APIGroup"));
    json_object_set_new(ent, "apiVersion", json_string("v1"));
    return ent;
}

json_t *reg_doc_resources(const struct registry *reg, const char *group, const char *version)
{
    json_t *list = json_array();
    for (size_t i = 0; i < reg->n; i++) {
        const struct reg_resource *r = reg->res[i];
        if (strcmp(r->group, group) || strcmp(r->version, version))
            continue;
        json_t *ent =
            json_pack("{s:s, s:s, s:b, s:s, s:[ssssssss]}", "name", r->resource, "singularName",
                      r->singular, "namespaced", r->namespaced, "kind", r->kind, "verbs", "create",
                      "delete", "deletecollection", "get", "list", "patch", "update", "watch");
        if (r->review)
            json_object_set_new(ent, "verbs", json_pack("[s]", "create"));
        if (json_array_size(r->short_names))
            json_object_set(ent, "shortNames", r->short_names);
        if (json_array_size(r->categories))
            json_object_set(ent, "categories", r->categories);
        json_array_append_new(list, ent);
        if (r->has_status) {
            json_array_append_new(list, json_pack("{s:s++, s:s, s:b, s:s, s:[sss]}", "name",
                                                  r->resource, "/", "status", "singularName", "",
                                                  "namespaced", r->namespaced, "kind", r->kind,
                                                  "verbs", "get", "patch", "update"));
        }
        if (r->has_scale) {
            json_array_append_new(list, json_pack("{s:s++, s:s, s:b, s:s, s:s, s:s, s:[sss]}",
                                                  "name", r->resource, "/", "scale", "singularName",
                                                  "", "namespaced", r->namespaced, "group",
                                                  "autoscaling", "version", "v1", "kind", "Scale",
                                                  "verbs", "get", "patch", "update"));
        }
    }
    if (!json_array_size(list)) {
        json_decref(list);
        return NULL;
    }
    char *gv = *group ? NULL : xstrdup(version);
    json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                            "groupVersion", "", "resources", list);
    if (gv)
        json_object_set_new(doc, "groupVersion", json_string(gv));
    else
        json_object_set_new(doc, "groupVersion", json_pack("s++", group, "/", version));
    free(gv);
    return doc;
}
