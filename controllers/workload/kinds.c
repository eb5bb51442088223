/* kinds: the job kind table (see kinds.h). */
#include "controllers/workload/kinds.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"

static const char *const job_success[] = {"Complete", NULL};
static const char *const job_failure[] = {"Failed", NULL};
static const char *const kf_success[] = {"Succeeded", NULL};
static const char *const kf_failure[] = {"Failed", NULL};
static const char *const jobset_success[] = {"Completed", NULL};
static const char *const none[] = {NULL};

static const struct kind_def kinds[] = {
    {
        .group = "batch",
        .version = "v1",
        .kind = "Job",
        .resource = "jobs",
        .wl_prefix = "job",
        .shape = KIND_TMPL_SINGLE,
        .tmpl_path = "spec.template",
        .replicas = "spec.parallelism",
        .suspend_path = "spec.suspend",
        .managed_by_path = "spec.managedBy",
        .success = job_success,
        .failure = job_failure,
        .pre_success = "SuccessCriteriaMet",
        .pre_failure = "FailureTarget",
        .status_rule = KIND_STATUS_JOB,
        .meta_in_status = true,
    },
    {
        .group = "kubeflow.org",
        .version = "v1",
        .kind = "PyTorchJob",
        .resource = "pytorchjobs",
        .wl_prefix = "pytorchjob",
        .shape = KIND_TMPL_MAP,
        .tmpl_path = "spec.pytorchReplicaSpecs",
        .tmpl_sub = "template",
        .replicas = "replicas",
        .suspend_path = "spec.runPolicy.suspend",
        .managed_by_path = "spec.runPolicy.managedBy",
        .success = kf_success,
        .failure = kf_failure,
        .status_rule = KIND_STATUS_COPY,
    },
    {
        .group = "kubeflow.org",
        .version = "v2beta1",
        .kind = "MPIJob",
        .resource = "mpijobs",
        .wl_prefix = "mpijob",
        .shape = KIND_TMPL_MAP,
        .tmpl_path = "spec.mpiReplicaSpecs",
        .tmpl_sub = "template",
        .replicas = "replicas",
        .suspend_path = "spec.runPolicy.suspend",
        .managed_by_path = "spec.runPolicy.managedBy",
        .success = kf_success,
        .failure = kf_failure,
        .status_rule = KIND_STATUS_COPY,
    },
    {
        .group = "jobset.x-k8s.io",
        .version = "v1alpha2",
        .kind = "JobSet",
        .resource = "jobsets",
        .wl_prefix = "jobset",
        .shape = KIND_TMPL_LIST,
        .tmpl_path = "spec.replicatedJobs",
        .tmpl_sub = "template.spec.template",
        .replicas = "replicas",
        .suspend_path = "spec.suspend",
        .managed_by_path = "spec.managedBy",
        .success = jobset_success,
        .failure = job_failure,
        .status_rule = KIND_STATUS_COPY,
    },
};

static const struct kind_def generic = {
    .group = "",
    .version = "",
    .kind = "",
    .resource = "",
    .wl_prefix = "",
    .shape = KIND_TMPL_NONE,
    .success = none,
    .failure = none,
    .status_rule = KIND_STATUS_COPY,
    .generic = true,
};

const struct kind_def *kind_generic(void)
{
    return &generic;
}

const struct kind_def *kind_table(size_t *n)
{
    *n = sizeof(kinds) / sizeof(kinds[0]);
    return kinds;
}

const struct kind_def *kind_lookup_gk(const char *group, const char *kind)
{
    if (!group || !kind)
        return NULL;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(kinds[i].group, group) == 0 && strcmp(kinds[i].kind, kind) == 0)
            return &kinds[i];
    }
    return NULL;
}

bool kind_is(const struct kind_def *k, const char *api_version, const char *kind)
{
    if (!k || !api_version || !kind)
        return false;
    const char *slash = strchr(api_version, '/');
    size_t glen = slash ? (size_t)(slash - api_version) : 0;
    const char *version = slash ? slash + 1 : api_version;
    return strlen(k->group) == glen && strncmp(k->group, api_version, glen) == 0 &&
           strcmp(k->version, version) == 0 && strcmp(k->kind, kind) == 0;
}

const struct kind_def *kind_lookup(const char *api_version, const char *kind)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (kind_is(&kinds[i], api_version, kind))
            return &kinds[i];
    }
    return NULL;
}

int kind_split_api_version(const char *api_version, char **group, char **version)
{
    *group = *version = NULL;
    if (!api_version || !*api_version)
        return -EINVAL;
    const char *slash = strchr(api_version, '/');
    if (slash && (slash == api_version || !slash[1] || strchr(slash + 1, '/')))
        return -EINVAL;
    *group = slash ? xstrndup(api_version, (size_t)(slash - api_version)) : xstrdup("");
    *version = xstrdup(slash ? slash + 1 : api_version);
    return 0;
}

static bool has_verb(const json_t *res, const char *verb)
{
    json_t *verbs = json_object_get(res, "verbs");
    for (size_t i = 0; i < json_array_size(verbs); i++) {
        const char *v = json_string_value(json_array_get(verbs, i));
        if (v && strcmp(v, verb) == 0)
            return true;
    }
    return false;
}

struct kind_def *kind_dynamic_new(const json_t *resource_list, const char *group,
                                  const char *version, const char *kind, struct err *e)
{
    json_t *res = json_object_get(resource_list, "resources");
    if (!group || !version || !*version || !kind || !*kind || !json_is_array(res)) {
        err_set(e, -EINVAL, "discovery of %s%s%s: not an APIResourceList",
                group && *group ? group : "", group && *group ? "/" : "", version ? version : "");
        return NULL;
    }
    const json_t *found = NULL;
    for (size_t i = 0; i < json_array_size(res) && !found; i++) {
        const json_t *r = json_array_get(res, i);
        const char *name = jx_str(r, "name", NULL);
        const char *k = jx_str(r, "kind", NULL);
        if (name && *name && !strchr(name, '/') && k && strcmp(k, kind) == 0)
            found = r;
    }
    char av[256];
    snprintf(av, sizeof av, "%s%s%s", group, *group ? "/" : "", version);
    if (!found) {
        err_set(e, -ENOENT, "kind %s %s is not served by the hub", av, kind);
        return NULL;
    }
    const char *name = jx_str(found, "name", "");
    if (!jx_bool(found, "namespaced", false)) {
        err_set(e, -EINVAL,
                "kind %s %s (%s) is cluster-scoped: a Workload's owner must be namespaced", av,
                kind, name);
        return NULL;
    }
    static const char *const need[] = {"get", "list", "watch", "create", "patch", "delete"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        if (!has_verb(found, need[i])) {
            err_set(e, -EINVAL, "kind %s %s (%s) does not support \"%s\"", av, kind, name, need[i]);
            return NULL;
        }
    }
    char *status = xasprintf("%s/status", name);
    bool has_status = false;
    for (size_t i = 0; i < json_array_size(res) && !has_status; i++)
        has_status = strcmp(jx_str(json_array_get(res, i), "name", ""), status) == 0;
    free(status);
    struct kind_def *k = xcalloc(1, sizeof(*k));
    char *prefix = xstrdup(kind);
    for (char *c = prefix; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    k->group = xstrdup(group);
    k->version = xstrdup(version);
    k->kind = xstrdup(kind);
    k->resource = xstrdup(name);
    k->wl_prefix = prefix;
    k->shape = KIND_TMPL_NONE;
    k->success = none;
    k->failure = none;
    k->status_rule = KIND_STATUS_COPY;
    k->generic = true;
    k->no_status_subresource = !has_status;
    return k;
}

void kind_dynamic_free(struct kind_def *k)
{
    if (!k)
        return;
    /* the strings of a dynamic entry are its own (kind_dynamic_new) */
    free((char *)k->group);
    free((char *)k->version);
    free((char *)k->kind);
    free((char *)k->resource);
    free((char *)k->wl_prefix);
    free(k);
}

const struct kind_def *kind_for_owner(const json_t *ref)
{
    const char *av = jx_str(ref, "apiVersion", NULL);
    const char *kind = jx_str(ref, "kind", NULL);
    if (!av || !kind)
        return NULL;
    const struct kind_def *k = kind_lookup(av, kind);
    return k ? k : &generic;
}

const char *kind_api_version(const struct kind_def *k, char *buf, size_t n)
{
    if (k->group[0])
        snprintf(buf, n, "%s/%s", k->group, k->version);
    else
        snprintf(buf, n, "%s", k->version);
    return buf;
}

/* Escape a key for a jsonx path (backslash before . [ ] and \). */
static void path_key(struct buf *b, const char *key)
{
    for (const char *p = key; *p; p++) {
        if (*p == '.' || *p == '[' || *p == ']' || *p == '\\')
            buf_append(b, "\\", 1);
        buf_append(b, p, 1);
    }
}

static int64_t replicas_of(const json_t *base, const char *path)
{
    if (!path)
        return 1;
    long long r = jx_int(base, path, 1);
    return r < 0 ? 0 : (int64_t)r;
}

static void push(struct kind_tmpl **out, size_t *n, size_t *cap, char *podset, char *path,
                 json_t *tmpl, int64_t replicas)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *out = xrealloc(*out, *cap * sizeof(**out));
    }
    (*out)[*n] =
        (struct kind_tmpl){.podset = podset, .path = path, .tmpl = tmpl, .replicas = replicas};
    (*n)++;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void kind_templates(const struct kind_def *k, const json_t *job, struct kind_tmpl **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (!k || !job)
        return;
    switch (k->shape) {
    case KIND_TMPL_NONE:
        return;
    case KIND_TMPL_SINGLE: {
        json_t *t = jx_obj(job, k->tmpl_path);
        if (t)
            push(out, n, &cap, xstrdup("main"), xstrdup(k->tmpl_path), t,
                 replicas_of(job, k->replicas));
        return;
    }
    case KIND_TMPL_MAP: {
        json_t *map = jx_obj(job, k->tmpl_path);
        if (!map)
            return;
        size_t nk = json_object_size(map);
        const char **keys = xcalloc(nk ? nk : 1, sizeof(*keys));
        size_t i = 0;
        const char *key;
        json_t *member;
        json_object_foreach(map, key, member) keys[i++] = key;
        qsort(keys, nk, sizeof(*keys), cmp_str);
        for (i = 0; i < nk; i++) {
            member = json_object_get(map, keys[i]);
            json_t *t = jx_obj(member, k->tmpl_sub);
            if (!t)
                continue;
            struct buf p;
            buf_init(&p, 1 << 16);
            buf_puts(&p, k->tmpl_path);
            buf_puts(&p, ".");
            path_key(&p, keys[i]);
            buf_puts(&p, ".");
            buf_puts(&p, k->tmpl_sub);
            char *ps = xstrdup(keys[i]);
            for (char *c = ps; *c; c++)
                *c = (char)tolower((unsigned char)*c);
            push(out, n, &cap, ps, buf_detach(&p), t, replicas_of(member, k->replicas));
            buf_free(&p);
        }
        free(keys);
        return;
    }
    case KIND_TMPL_LIST: {
        json_t *arr = jx_arr(job, k->tmpl_path);
        for (size_t i = 0; arr && i < json_array_size(arr); i++) {
            json_t *el = json_array_get(arr, i);
            json_t *t = jx_obj(el, k->tmpl_sub);
            if (!t)
                continue;
            const char *name = jx_str(el, "name", NULL);
            char *ps = name ? xstrdup(name) : xasprintf("%zu", i);
            push(out, n, &cap, ps, xasprintf("%s[%zu].%s", k->tmpl_path, i, k->tmpl_sub), t,
                 replicas_of(el, k->replicas));
        }
        return;
    }
    }
}

void kind_tmpls_free(struct kind_tmpl *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].podset);
        free(t[i].path);
    }
    free(t);
}

static bool any_true(const json_t *job, const char *const *types)
{
    for (size_t i = 0; types && types[i]; i++) {
        if (jx_cond_is_true(job, types[i]))
            return true;
    }
    return false;
}

enum kind_result kind_result(const struct kind_def *k, const json_t *job)
{
    if (!k || !job)
        return KIND_RUNNING;
    if (any_true(job, k->failure))
        return KIND_FAILED;
    if (any_true(job, k->success))
        return KIND_SUCCEEDED;
    return KIND_RUNNING;
}

bool kind_suspended(const struct kind_def *k, const json_t *job)
{
    if (!k || !k->suspend_path)
        return false;
    return jx_bool(job, k->suspend_path, false);
}

const char *kind_managed_by(const struct kind_def *k, const json_t *job)
{
    if (!k || !k->managed_by_path)
        return NULL;
    return jx_str(job, k->managed_by_path, NULL);
}
