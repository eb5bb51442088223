/* kinds: the job kind table (see kinds.h). */
#include "controllers/workload/kinds.h"

#include <ctype.h>
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

const struct kind_def *kind_lookup(const char *api_version, const char *kind)
{
    if (!api_version || !kind)
        return NULL;
    const char *slash = strchr(api_version, '/');
    size_t glen = slash ? (size_t)(slash - api_version) : 0;
    const char *version = slash ? slash + 1 : api_version;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const struct kind_def *k = &kinds[i];
        if (strlen(k->group) == glen && strncmp(k->group, api_version, glen) == 0 &&
            strcmp(k->version, version) == 0 && strcmp(k->kind, kind) == 0)
            return k;
    }
    return NULL;
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
