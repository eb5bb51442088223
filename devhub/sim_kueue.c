/* sim_kueue: Kueue emulator for the devhub hub instance. */
#include "devhub/sim_kueue.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/sim_api.h"
#include "devhub/sim_res.h"
#include "devhub/sim_watch.h"
#include "pkg/json/jsonx.h"
#include "pkg/sched/affinity.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#define KQ       "kueue.x-k8s.io"
#define L_QUEUE  "kueue.x-k8s.io/queue-name"
#define L_PRIO   "kueue.x-k8s.io/priority-class"
#define L_JOBUID "kueue.x-k8s.io/job-uid"
#define L_PODSET "kueue.x-k8s.io/podset"
#define PT_GROUP "kubeflow.org"

struct simkueue {
    struct ev_loop *loop;
    struct hub *hub;
    const struct logger *lg;
    ev_timer tick;
    int64_t last_rv;
    int writes;  /* this pass's writes that change what the ClusterQueues hold */
    int creates; /* this pass's Workloads created (pending: they hold nothing) */
    char *ver;   /* Workload storage version of this pass */
    /* Copies of the collections, kept current by in-process watches. */
    char *wver; /* the Kueue version the watches below use */
    struct simwatch *w_rf, *w_cq, *w_lq, *w_wpc, *w_wl, *w_job, *w_pt;
    int rc_rf, rc_cq, rc_lq, rc_wpc, rc_wl, rc_job, rc_pt; /* last simwatch_sync results */
    /* Indexes over the copies, maintained from the watch events. */
    json_t *job_of;  /* workload key -> {kind, job} for every labelled job */
    json_t *contrib; /* workload key -> what it adds to its queues (contribution()) */
    json_t *cq_agg;  /* ClusterQueue name -> {reserved: {key: true}, pending: {key: true},
                        usage, ausage (admitted usage), admitted (count)} */
    json_t *lq_agg;  /* LocalQueue key -> {pending, reserving, admitted} (counts) */
    /* What the next pass must look at (sets: key -> true). */
    json_t *d_jobs;        /* workload keys whose job must have a Workload (ensure_workload) */
    json_t *d_wls;         /* workloads to reconcile */
    json_t *d_cqs;         /* ClusterQueues to run admission for and write status of */
    json_t *d_lqs;         /* LocalQueues to write status of */
    const char *full;      /* why this pass rebuilds the indexes, everything dirty; NULL: no */
    const char *full_next; /* the same for the next pass (a write failed) */
};

static void wl_put(struct simkueue *k, const char *key, json_t *wl);

/* ---- naming and pod sets ----------------------------------------------------- */

char *simkueue_workload_name(const char *kind, const char *group, const char *name, const char *uid)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
    const char *parts[] = {kind, "\n", group, "\n", name, "\n", uid};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        EVP_DigestUpdate(ctx, parts[i], strlen(parts[i]));
    EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    char *prefix = xasprintf("%s-%s", kind, name);
    for (char *c = prefix; *c && c < prefix + strlen(kind); c++)
        *c = (char)tolower((unsigned char)*c);
    if (strlen(prefix) > 247)
        prefix[247] = '\0';
    char *out = xasprintf("%s-%02x%02x%x", prefix, md[0], md[1], md[2] >> 4);
    free(prefix);
    return out;
}

static json_t *template_copy(const json_t *tmpl)
{
    json_t *t = json_object();
    json_t *md = json_object();
    if (jx_obj(tmpl, "metadata.labels"))
        json_object_set(md, "labels", jx_obj(tmpl, "metadata.labels"));
    if (jx_obj(tmpl, "metadata.annotations"))
        json_object_set(md, "annotations", jx_obj(tmpl, "metadata.annotations"));
    json_object_set_new(t, "metadata", md);
    json_object_set_new(t, "spec",
                        jx_obj(tmpl, "spec") ? jx_deep_copy(jx_obj(tmpl, "spec")) : json_object());
    return t;
}

static int rtype_rank(const char *t)
{
    return !strcmp(t, "Master") ? 0 : !strcmp(t, "Worker") ? 1 : 2;
}

static int cmp_rtype(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int d = rtype_rank(x) - rtype_rank(y);
    return d ? d : strcmp(x, y);
}

json_t *simkueue_podsets(const json_t *job, const char *kind)
{
    json_t *out = json_array();
    if (!strcmp(kind, "Job")) {
        json_t *tmpl = jx_obj(job, "spec.template");
        if (!tmpl)
            return out;
        long long par = jx_int(job, "spec.parallelism", 1);
        json_t *cv = jx_get(job, "spec.completions");
        if (json_is_integer(cv) && json_integer_value(cv) < par)
            par = json_integer_value(cv);
        if (par < 0)
            par = 0;
        json_array_append_new(out, json_pack("{s:s,s:I,s:o}", "name", "main", "count",
                                             (json_int_t)par, "template", template_copy(tmpl)));
        return out;
    }
    json_t *specs = jx_obj(job, "spec.pytorchReplicaSpecs");
    size_t n = json_object_size(specs), i = 0;
    const char **keys = xcalloc(n ? n : 1, sizeof(*keys));
    const char *k;
    json_t *v;
    json_object_foreach(specs, k, v) keys[i++] = k;
    qsort(keys, n, sizeof(*keys), cmp_rtype);
    for (i = 0; i < n; i++) {
        json_t *rs = json_object_get(specs, keys[i]);
        if (!jx_obj(rs, "template"))
            continue;
        char lower[64];
        snprintf(lower, sizeof(lower), "%s", keys[i]);
        for (char *c = lower; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        long long rep = jx_int(rs, "replicas", 1);
        json_array_append_new(out, json_pack("{s:s,s:I,s:o}", "name", lower, "count",
                                             (json_int_t)(rep < 0 ? 0 : rep), "template",
                                             template_copy(jx_obj(rs, "template"))));
    }
    free(keys);
    return out;
}

/* ---- flavors and quota --------------------------------------------------------- */

static json_t *quota_of(const json_t *cq, const char *flavor, const char *res)
{
    size_t i, j, k;
    json_t *g, *f, *r;
    json_array_foreach(jx_arr(cq, "spec.resourceGroups"), i, g)
        json_array_foreach(jx_arr(g, "flavors"), j, f)
    {
        if (strcmp(jx_str(f, "name", ""), flavor))
            continue;
        json_array_foreach(
            jx_arr(f, "resources"), k,
            r) if (!strcmp(jx_str(r, "name", ""), res)) return json_object_get(r, "nominalQuota");
    }
    return NULL;
}

static bool covers(const json_t *group, const char *res)
{
    size_t i;
    json_t *c;
    json_array_foreach(jx_arr(group, "coveredResources"), i,
                       c) if (json_is_string(c) && !strcmp(json_string_value(c), res)) return true;
    return false;
}

/* The node label keys of a resource group's flavors: Kueue judges a pod set's node selector and
 * required node affinity against a flavor only on these keys (flavorassigner's allowed keys). */
static json_t *group_label_keys(const json_t *g, const json_t *flavors)
{
    json_t *keys = json_object();
    size_t i;
    json_t *f;
    json_array_foreach(jx_arr(g, "flavors"), i, f)
    {
        const char *k;
        json_t *v;
        json_object_foreach(
            jx_obj(json_object_get(flavors, jx_str(f, "name", "")), "spec.nodeLabels"), k, v)
            json_object_set_new(keys, k, json_true());
    }
    return keys;
}

/* The pod's required node affinity with only the expressions on `keys`, as a new affinity
 * object, or NULL when it puts no constraint there: a term left empty matches any flavor
 * (terms are ORed), as in Kueue. */
static json_t *affinity_on_keys(const json_t *podspec, const json_t *keys)
{
    json_t *terms = jx_arr(podspec, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                                    "Execution.nodeSelectorTerms");
    if (json_array_size(terms) == 0)
        return NULL;
    json_t *kept = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(terms, i, t)
    {
        json_t *exprs = json_array();
        size_t j;
        json_t *x;
        json_array_foreach(jx_arr(t, "matchExpressions"), j, x)
        {
            if (json_object_get(keys, jx_str(x, "key", "")))
                json_array_append(exprs, x);
        }
        if (json_array_size(exprs) == 0) {
            json_decref(exprs);
            json_decref(kept);
            return NULL;
        }
        json_array_append_new(kept, json_pack("{s:o}", "matchExpressions", exprs));
    }
    return json_pack("{s:{s:{s:o}}}", "nodeAffinity",
                     "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", kept);
}

/* Kueue's flavor check: the flavor's node labels, as a node's, satisfy the pod set's node
 * selector and required node affinity on the group's label keys; its taints are tolerated. */
static bool flavor_matches(const json_t *rf, const json_t *podspec, const json_t *keys)
{
    const json_t *labels = jx_obj(rf, "spec.nodeLabels");
    const char *k;
    json_t *v;
    json_object_foreach(jx_obj(podspec, "nodeSelector"), k, v)
    {
        if (!json_object_get(keys, k))
            continue;
        const json_t *have = labels ? json_object_get(labels, k) : NULL;
        if (!have || !json_equal(have, v))
            return false;
    }
    json_t *aff = affinity_on_keys(podspec, keys);
    if (aff) {
        struct affinity *a = NULL;
        bool ok =
            affinity_from_json(aff, &a, NULL) == 0 && affinity_required_matches(a, NULL, labels);
        affinity_free(a);
        json_decref(aff);
        if (!ok)
            return false;
    }
    json_t *tol = json_array();
    if (jx_arr(podspec, "tolerations"))
        json_array_extend(tol, jx_arr(podspec, "tolerations"));
    if (jx_arr(rf, "spec.tolerations"))
        json_array_extend(tol, jx_arr(rf, "spec.tolerations"));
    bool ok = simres_tolerates_all(tol, jx_arr(rf, "spec.nodeTaints"));
    json_decref(tol);
    return ok;
}

static json_t *usage_of(const json_t *usage, const char *flavor)
{
    return usage ? json_object_get(usage, flavor) : NULL;
}

int simkueue_assign(const json_t *cq, const json_t *flavors, const json_t *podsets,
                    const json_t *usage, json_t **out, char **why)
{
    json_t *acc = usage ? jx_deep_copy(usage) : json_object();
    json_t *result = json_array();
    int ret = 0;
    size_t p;
    json_t *ps;
    *out = NULL;
    json_array_foreach((json_t *)podsets, p, ps)
    {
        const char *psname = jx_str(ps, "name", "main");
        long long count = jx_int(ps, "count", 1);
        json_t *podspec = jx_obj(ps, "template.spec");
        json_t *per = simres_pod_requests(podspec);
        json_t *total = json_object();
        simres_add(total, per, count);
        json_decref(per);
        json_t *fl = json_object();
        /* every requested resource must be covered by a group */
        const char *res;
        json_t *q;
        json_object_foreach(total, res, q)
        {
            bool covered = false;
            size_t i;
            json_t *g;
            json_array_foreach(jx_arr(cq, "spec.resourceGroups"), i, g) covered |= covers(g, res);
            json_t *one = json_pack("{sO}", res, q);
            bool zero = simres_is_zero(one);
            json_decref(one);
            if (!covered && !zero) {
                *why = xasprintf("couldn't assign flavors to pod set %s: resource %s unavailable "
                                 "in ClusterQueue",
                                 psname, res);
                ret = -ENOSPC;
            }
        }
        size_t gi;
        json_t *g;
        json_array_foreach(jx_arr(cq, "spec.resourceGroups"), gi, g)
        {
            if (ret)
                break;
            json_t *greq = json_object();
            json_object_foreach(total, res, q) if (covers(g, res)) json_object_set(greq, res, q);
            if (!json_object_size(greq) || simres_is_zero(greq)) {
                json_decref(greq);
                continue;
            }
            const char *chosen = NULL, *short_res = NULL, *short_fl = NULL;
            json_t *keys = group_label_keys(g, flavors);
            size_t fi;
            json_t *f;
            json_array_foreach(jx_arr(g, "flavors"), fi, f)
            {
                const char *fname = jx_str(f, "name", "");
                json_t *rf = json_object_get(flavors, fname);
                if (!rf || !flavor_matches(rf, podspec, keys))
                    continue;
                json_t *cap = json_object();
                json_object_foreach(greq, res, q)
                {
                    json_t *nq = quota_of(cq, fname, res);
                    json_object_set_new(cap, res, nq ? json_incref(nq) : json_string("0"));
                }
                const char *sr = NULL;
                bool fits = simres_fits(greq, usage_of(acc, fname), cap, &sr);
                json_decref(cap);
                if (fits) {
                    chosen = fname;
                    break;
                }
                if (!short_res) {
                    short_res = sr;
                    short_fl = fname;
                }
            }
            json_decref(keys);
            if (!chosen) {
                if (short_res)
                    *why = xasprintf("couldn't assign flavors to pod set %s: insufficient unused "
                                     "quota for %s in flavor %s",
                                     psname, short_res, short_fl);
                else
                    *why = xasprintf("couldn't assign flavors to pod set %s: no flavor matches "
                                     "the pod set's node selector, node affinity and tolerations",
                                     psname);
                ret = -ENOSPC;
            } else {
                json_object_foreach(greq, res, q) json_object_set_new(fl, res, json_string(chosen));
                json_t *u = json_object_get(acc, chosen);
                if (!u) {
                    u = json_object();
                    json_object_set_new(acc, chosen, u);
                }
                simres_add(u, greq, 1);
            }
            json_decref(greq);
        }
        if (!ret)
            json_array_append_new(result,
                                  json_pack("{s:s,s:o,s:O,s:I}", "name", psname, "flavors", fl,
                                            "resourceUsage", total, "count", (json_int_t)count));
        else
            json_decref(fl);
        json_decref(total);
        if (ret)
            break;
    }
    json_decref(acc);
    if (ret)
        json_decref(result);
    else
        *out = result;
    return ret;
}

void simkueue_usage_add(json_t *usage, const json_t *assignments, int sign)
{
    size_t i;
    json_t *a;
    json_array_foreach((json_t *)assignments, i, a)
    {
        const char *res;
        json_t *fl;
        json_object_foreach(jx_obj(a, "flavors"), res, fl)
        {
            const char *flavor = json_string_value(fl);
            json_t *q = jx_obj(a, "resourceUsage")
                            ? json_object_get(jx_obj(a, "resourceUsage"), res)
                            : NULL;
            if (!flavor || !q)
                continue;
            json_t *u = json_object_get(usage, flavor);
            if (!u) {
                u = json_object();
                json_object_set_new(usage, flavor, u);
            }
            json_t *one = json_pack("{sO}", res, q);
            if (sign > 0)
                simres_add(u, one, 1);
            else
                simres_sub(u, one);
            json_decref(one);
        }
    }
}

static int cmp_queue(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    long long px = jx_int(x, "spec.priority", 0), py = jx_int(y, "spec.priority", 0);
    if (px != py)
        return px > py ? -1 : 1;
    int c = strcmp(jx_str(x, "metadata.creationTimestamp", ""),
                   jx_str(y, "metadata.creationTimestamp", ""));
    return c ? c : strcmp(jx_str(x, "metadata.name", ""), jx_str(y, "metadata.name", ""));
}

static void sort_with(json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr);
    json_t **v = xcalloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof(*v), cmp);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
}

void simkueue_sort_queue(json_t *wls)
{
    sort_with(wls, cmp_queue);
}

static const char *reserved_at(const json_t *wl)
{
    json_t *c = jx_cond_find(wl, "QuotaReserved");
    return c ? jx_str(c, "lastTransitionTime", "") : "";
}

/* Victim order: lowest priority first, then most recently reserved first. */
static int cmp_victim(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    long long px = jx_int(x, "spec.priority", 0), py = jx_int(y, "spec.priority", 0);
    if (px != py)
        return px < py ? -1 : 1;
    int c = strcmp(reserved_at(y), reserved_at(x));
    return c ? c : strcmp(jx_str(y, "metadata.name", ""), jx_str(x, "metadata.name", ""));
}

static bool fits(const json_t *cq, const json_t *flavors, const json_t *podsets,
                 const json_t *usage)
{
    json_t *out = NULL;
    char *why = NULL;
    int r = simkueue_assign(cq, flavors, podsets, usage, &out, &why);
    json_decref(out);
    free(why);
    return r == 0;
}

json_t *simkueue_victims(const json_t *cq, const json_t *flavors, const json_t *podsets,
                         long long priority, const char *created, const json_t *reserved,
                         const json_t *usage)
{
    const char *policy = jx_str(cq, "spec.preemption.withinClusterQueue", "Never");
    bool any = !strcmp(policy, "Any"), newer_eq = !strcmp(policy, "LowerOrNewerEqualPriority");
    if (!any && !newer_eq && strcmp(policy, "LowerPriority"))
        return NULL;
    json_t *cand = json_array();
    size_t i;
    json_t *w;
    json_array_foreach((json_t *)reserved, i, w)
    {
        long long p = jx_int(w, "spec.priority", 0);
        bool ok = any || p < priority ||
                  (newer_eq && p == priority &&
                   strcmp(jx_str(w, "metadata.creationTimestamp", ""), created ? created : "") > 0);
        if (ok)
            json_array_append(cand, w);
    }
    sort_with(cand, cmp_victim);
    json_t *u = usage ? jx_deep_copy(usage) : json_object();
    json_t *chosen = json_array();
    bool ok = false;
    json_array_foreach(cand, i, w)
    {
        simkueue_usage_add(u, jx_arr(w, "status.admission.podSetAssignments"), -1);
        json_array_append(chosen, w);
        if (fits(cq, flavors, podsets, u)) {
            ok = true;
            break;
        }
    }
    if (ok) { /* give back victims that are not needed, last taken first */
        for (size_t k = json_array_size(chosen); k-- > 0;) {
            json_t *v = json_array_get(chosen, k);
            simkueue_usage_add(u, jx_arr(v, "status.admission.podSetAssignments"), 1);
            if (fits(cq, flavors, podsets, u))
                json_array_remove(chosen, k);
            else
                simkueue_usage_add(u, jx_arr(v, "status.admission.podSetAssignments"), -1);
        }
    }
    json_decref(u);
    json_decref(cand);
    if (!ok || !json_array_size(chosen)) {
        json_decref(chosen);
        return NULL;
    }
    return chosen;
}

/* ---- the controller ------------------------------------------------------------ */

struct pass {
    json_t *flavors; /* name -> ResourceFlavor */
    json_t *cqs;     /* name -> ClusterQueue */
    json_t *lqs;     /* "ns/name" -> LocalQueue */
    json_t *wpcs;    /* name -> WorkloadPriorityClass */
    json_t *wls;     /* "ns/name" -> Workload */
    json_t *jobs;    /* "ns/wlname" -> {kind, job} */
};

static void write_patch(struct simkueue *k, const char *path, json_t *patch, const json_t *cur)
{
    json_t *merged = jx_merge_apply(cur, patch);
    bool same = json_equal(merged, (json_t *)cur);
    json_decref(merged);
    if (same)
        return;
    json_t *out = NULL;
    int code = simapi_patch(k->hub, path, patch, &out);
    k->writes++;
    if (code != 200) {
        k->full_next = "a write failed"; /* retry on the next pass, like a full pass would */
        log_v(k->lg, 2, "kueue emulator write failed", "path", path, "code", LOG_INT(code),
              "message", jx_str(out, "message", ""));
    }
    json_decref(out);
}

static char *wl_path(struct simkueue *k, const json_t *wl, const char *sub)
{
    return simapi_path(KQ, k->ver, "workloads", jx_namespace(wl), jx_name(wl), sub);
}

static char *job_path(const char *kind, const json_t *job)
{
    if (!strcmp(kind, "Job"))
        return simapi_path("batch", "v1", "jobs", jx_namespace(job), jx_name(job), NULL);
    return simapi_path(PT_GROUP, "v1", "pytorchjobs", jx_namespace(job), jx_name(job), NULL);
}

static bool job_suspended(const char *kind, const json_t *job)
{
    return !strcmp(kind, "Job") ? jx_bool(job, "spec.suspend", false)
                                : jx_bool(job, "spec.runPolicy.suspend", false);
}

/* Finished: "Succeeded"/"Failed" or NULL. */
static const char *job_finished(const char *kind, const json_t *job, const char **msg)
{
    const char *ok = !strcmp(kind, "Job") ? "Complete" : "Succeeded";
    json_t *c;
    if ((c = jx_cond_find(job, ok)) && !strcmp(jx_str(c, "status", ""), "True")) {
        *msg = jx_str(c, "message", "Job finished successfully");
        return "Succeeded";
    }
    if ((c = jx_cond_find(job, "Failed")) && !strcmp(jx_str(c, "status", ""), "True")) {
        *msg = jx_str(c, "message", "Job failed");
        return "Failed";
    }
    return NULL;
}

/* The nodeSelector of each podSet from an admission: {podset: {label: value}}. */
static json_t *admission_selectors(const struct pass *ps, const json_t *assignments)
{
    json_t *out = json_object();
    size_t i;
    json_t *a;
    json_array_foreach((json_t *)assignments, i, a)
    {
        json_t *sel = json_object();
        const char *res;
        json_t *fl;
        json_object_foreach(jx_obj(a, "flavors"), res, fl)
        {
            json_t *rf =
                json_object_get(ps->flavors, json_string_value(fl) ? json_string_value(fl) : "");
            if (jx_obj(rf, "spec.nodeLabels"))
                json_object_update(sel, jx_obj(rf, "spec.nodeLabels"));
        }
        json_object_set_new(out, jx_str(a, "name", "main"), sel);
    }
    return out;
}

/* Patch that starts (run=true: unsuspend + inject) or stops (suspend + remove injected labels). */
static void job_run(struct simkueue *k, const struct pass *ps, const char *kind, const json_t *job,
                    const json_t *assignments, bool run)
{
    json_t *sels = admission_selectors(ps, assignments);
    json_t *patch = json_object();
    const char *podset;
    json_t *sel;
    json_object_foreach(sels, podset, sel)
    {
        json_t *tmpl = NULL;
        char *rtype = NULL;
        if (!strcmp(kind, "Job")) {
            tmpl = jx_obj(job, "spec.template");
        } else {
            const char *rt;
            json_t *rs;
            json_object_foreach(jx_obj(job, "spec.pytorchReplicaSpecs"), rt,
                                rs) if (!strcasecmp(rt, podset)) rtype = xstrdup(rt);
            if (!rtype)
                continue;
            tmpl = jx_getv(job, "spec", "pytorchReplicaSpecs", rtype, "template");
        }
        json_t *ns = json_object();
        const char *lk;
        json_t *lv;
        json_t *cur = jx_obj(tmpl, "spec.nodeSelector");
        json_object_foreach(sel, lk, lv)
        {
            if (run)
                json_object_set(ns, lk, lv);
            else if (cur && json_equal(json_object_get(cur, lk), lv))
                json_object_set_new(ns, lk, json_null());
        }
        json_t *tp = json_pack("{s:{s:{s:o}},s:{s:o}}", "metadata", "labels", L_PODSET,
                               run ? json_string(podset) : json_null(), "spec", "nodeSelector", ns);
        if (!strcmp(kind, "Job"))
            jx_setv_new(patch, tp, "spec", "template");
        else
            jx_setv_new(patch, tp, "spec", "pytorchReplicaSpecs", rtype, "template");
        free(rtype);
    }
    if (!strcmp(kind, "Job"))
        jx_setv_new(patch, json_boolean(!run), "spec", "suspend");
    else
        jx_setv_new(patch, json_boolean(!run), "spec", "runPolicy", "suspend");
    char *path = job_path(kind, job);
    write_patch(k, path, patch, job);
    free(path);
    json_decref(patch);
    json_decref(sels);
}

static void job_suspend_plain(struct simkueue *k, const char *kind, const json_t *job)
{
    json_t *patch = !strcmp(kind, "Job")
                        ? json_pack("{s:{s:b}}", "spec", "suspend", 1)
                        : json_pack("{s:{s:{s:b}}}", "spec", "runPolicy", "suspend", 1);
    char *path = job_path(kind, job);
    write_patch(k, path, patch, job);
    free(path);
    json_decref(patch);
}

static void ensure_workload(struct simkueue *k, struct pass *ps, const char *kind,
                            const char *group, const json_t *job)
{
    const char *ns = jx_namespace(job), *uid = jx_uid(job);
    if (!ns || !uid || !jx_name(job))
        return;
    char *wlname = simkueue_workload_name(kind, group, jx_name(job), uid);
    char *key = jx_key_make(ns, wlname);
    json_t *found = json_object_get(ps->wls, key);
    const char *msg;
    if (!found && !job_finished(kind, job, &msg)) {
        json_t *podsets = simkueue_podsets(job, kind);
        char *api = xasprintf("%s/%s", KQ, k->ver);
        const char *japi = !strcmp(kind, "Job") ? "batch/v1" : "kubeflow.org/v1";
        json_t *wl = json_pack(
            "{s:s,s:s,s:{s:s,s:s,s:{s:s},s:[{s:s,s:s,s:s,s:s,s:b,s:b}]},s:{s:s,s:o,s:b}}",
            "apiVersion", api, "kind", "Workload", "metadata", "name", wlname, "namespace", ns,
            "labels", L_JOBUID, uid, "ownerReferences", "apiVersion", japi, "kind", kind, "name",
            jx_name(job), "uid", uid, "controller", 1, "blockOwnerDeletion", 1, "spec", "queueName",
            jx_label(job, L_QUEUE), "podSets", podsets, "active", 1);
        const char *pc = jx_label(job, L_PRIO);
        json_t *wpc = pc ? json_object_get(ps->wpcs, pc) : NULL;
        long long prio = wpc ? jx_int(wpc, "value", 0) : 0;
        json_t *spec = json_object_get(wl, "spec");
        json_object_set_new(spec, "priority", json_integer(prio));
        if (wpc) {
            if (!strcmp(k->ver, "v1beta1")) {
                json_object_set_new(spec, "priorityClassSource",
                                    json_string("kueue.x-k8s.io/workloadpriorityclass"));
                json_object_set_new(spec, "priorityClassName", json_string(pc));
            } else {
                json_object_set_new(spec, "priorityClassRef",
                                    json_pack("{s:s,s:s,s:s}", "group", KQ, "kind",
                                              "WorkloadPriorityClass", "name", pc));
            }
        }
        char *path = simapi_path(KQ, k->ver, "workloads", ns, NULL, NULL);
        json_t *out = NULL;
        int code = simapi_create(k->hub, path, wl, &out);
        k->creates++;
        if (code == 201 && out) {
            wl_put(k, key, out);
            log_v(k->lg, 1, "created workload", "namespace", ns, "name", wlname);
        } else {
            k->writes++; /* not seen: admission waits for a pass that sees the hub as it is */
            k->full_next = "a Workload create failed";
            log_warn(k->lg, "cannot create workload", "namespace", ns, "name", wlname, "code",
                     LOG_INT(code), "message", jx_str(out, "message", ""));
        }
        json_decref(out);
        free(path);
        free(api);
        json_decref(wl);
    }
    free(key);
    free(wlname);
}

static bool is_reserved(const json_t *wl)
{
    return jx_obj(wl, "status.admission") && jx_cond_is_true(wl, "QuotaReserved");
}

static bool is_finished(const json_t *wl)
{
    return jx_cond_is_true(wl, "Finished");
}

static json_t *cq_checks(const json_t *cq, const json_t *assignments)
{
    json_t *names = json_array();
    size_t i, j;
    json_t *c;
    json_array_foreach(jx_arr(cq, "spec.admissionChecks"), i, c) if (json_is_string(c))
        json_array_append(names, c);
    json_array_foreach(jx_arr(cq, "spec.admissionChecksStrategy.admissionChecks"), i, c)
    {
        json_t *on = jx_arr(c, "onFlavors");
        bool applies = !json_array_size(on);
        json_t *f, *a;
        json_array_foreach(on, j, f)
        {
            size_t x;
            json_array_foreach((json_t *)assignments, x, a)
            {
                const char *r;
                json_t *fl;
                json_object_foreach(jx_obj(a, "flavors"), r, fl) applies |= json_equal(fl, f);
            }
        }
        if (applies && jx_get(c, "name"))
            json_array_append(names, jx_get(c, "name"));
    }
    return names;
}

struct wl_edit {
    json_t *status; /* copy of status to edit */
    json_t *conds;  /* borrowed from status */
    char now[40];
};

static void edit_begin(struct wl_edit *ed, const json_t *wl)
{
    ed->status = jx_obj(wl, "status") ? jx_deep_copy(jx_obj(wl, "status")) : json_object();
    if (!jx_arr(ed->status, "conditions"))
        json_object_set_new(ed->status, "conditions", json_array());
    ed->conds = jx_arr(ed->status, "conditions");
    clock_now_rfc3339(ed->now, sizeof(ed->now), 0);
}

static void edit_cond(struct wl_edit *ed, const char *type, const char *status, const char *reason,
                      const char *msg)
{
    struct jx_cond c = {.type = type, .status = status, .reason = reason, .message = msg};
    jx_conds_set(ed->conds, &c, ed->now);
}

static void edit_commit(struct simkueue *k, struct wl_edit *ed, const json_t *wl)
{
    json_t *patch = json_object();
    json_t *st = json_object();
    const char *key;
    json_t *v;
    json_object_foreach(ed->status, key, v) json_object_set(st, key, v);
    /* removed keys -> null */
    json_object_foreach(jx_obj(wl, "status"), key, v) if (!json_object_get(ed->status, key))
        json_object_set_new(st, key, json_null());
    json_object_set_new(patch, "status", st);
    char *path = wl_path(k, wl, "status");
    write_patch(k, path, patch, wl);
    free(path);
    json_decref(patch);
    json_decref(ed->status);
}

/* Evict a reserved workload: release quota, stop its job. */
/* How evict() treats the admission checks: kept, reset to Pending (a Retry: counted), or
 * reset without a count (deactivation after a Rejected check, as Kueue v0.15 does). */
enum reset_checks { KEEP_CHECKS, RESET_CHECKS, RESET_CHECKS_UNCOUNTED };

static void evict(struct simkueue *k, struct pass *ps, const json_t *wl, const char *reason,
                  const char *msg, enum reset_checks reset_checks, const char *preempted)
{
    struct wl_edit ed;
    edit_begin(&ed, wl);
    edit_cond(&ed, "Evicted", "True", reason, msg);
    if (reset_checks == RESET_CHECKS_UNCOUNTED)
        edit_cond(&ed, "Requeued", "False", reason, msg);
    if (preempted)
        edit_cond(&ed, "Preempted", "True", "InClusterQueue", preempted);
    edit_cond(&ed, "QuotaReserved", "False", "Pending", msg);
    if (jx_cond_find(wl, "Admitted"))
        edit_cond(&ed, "Admitted", "False", "NoReservation", "The workload has no reservation");
    if (reset_checks) {
        size_t i;
        json_t *c;
        json_array_foreach(jx_arr(ed.status, "admissionChecks"), i, c)
        {
            if (!strcmp(jx_str(c, "state", ""), "Pending"))
                continue;
            char *m = xasprintf("Reset to Pending after eviction. Previously: %s",
                                jx_str(c, "state", ""));
            json_object_set_new(c, "state", json_string("Pending"));
            json_object_set_new(c, "message", json_string(m));
            json_object_set_new(c, "lastTransitionTime", json_string(ed.now));
            if (reset_checks == RESET_CHECKS)
                json_object_set_new(c, "retryCount", json_integer(jx_int(c, "retryCount", 0) + 1));
            free(m);
        }
    }
    json_object_del(ed.status, "admission");
    edit_commit(k, &ed, wl);
    char *key = jx_obj_key(wl);
    json_t *jb = json_object_get(ps->jobs, key);
    free(key);
    if (jb)
        job_run(k, ps, jx_str(jb, "kind", "Job"), jx_obj(jb, "job"),
                jx_arr(wl, "status.admission.podSetAssignments"), false);
    log_v(k->lg, 1, "evicted workload", "namespace", jx_namespace(wl), "name", jx_name(wl),
          "reason", reason);
}

static void reserve(struct simkueue *k, const json_t *cq, const json_t *wl, json_t *assignments)
{
    struct wl_edit ed;
    edit_begin(&ed, wl);
    char *msg = xasprintf("Quota reserved in ClusterQueue %s", jx_name(cq));
    edit_cond(&ed, "QuotaReserved", "True", "QuotaReserved", msg);
    free(msg);
    /* Like Kueue's SetQuotaReservation: earlier eviction conditions turn False. */
    const char *types[] = {"Evicted", "Preempted"};
    for (size_t t = 0; t < 2; t++) {
        json_t *old = jx_conds_find(ed.conds, types[t]);
        if (!old || strcmp(jx_str(old, "status", ""), "True"))
            continue;
        char *m = xasprintf("Previously: %s", jx_str(old, "message", ""));
        edit_cond(&ed, types[t], "False", "QuotaReserved", m);
        free(m);
    }
    json_object_set_new(
        ed.status, "admission",
        json_pack("{s:s,s:O}", "clusterQueue", jx_name(cq), "podSetAssignments", assignments));
    json_t *names = cq_checks(cq, assignments);
    json_t *checks = jx_arr(ed.status, "admissionChecks")
                         ? jx_deep_copy(jx_arr(ed.status, "admissionChecks"))
                         : json_array();
    json_t *kept = json_array();
    size_t i, j;
    json_t *n, *c;
    json_array_foreach(names, i, n)
    {
        json_t *have = NULL;
        json_array_foreach(checks, j, c) if (json_equal(json_object_get(c, "name"), n)) have = c;
        if (have)
            json_array_append(kept, have);
        else
            json_array_append_new(kept,
                                  json_pack("{s:O,s:s,s:s,s:s}", "name", n, "state", "Pending",
                                            "lastTransitionTime", ed.now, "message", ""));
    }
    json_decref(checks);
    if (json_array_size(kept))
        json_object_set_new(ed.status, "admissionChecks", kept);
    else {
        json_decref(kept);
        json_object_del(ed.status, "admissionChecks");
    }
    json_decref(names);
    edit_commit(k, &ed, wl);
    log_v(k->lg, 1, "reserved quota", "namespace", jx_namespace(wl), "name", jx_name(wl),
          "clusterQueue", jx_name(cq));
}

/* Reserved workload: check states, admission, job start. */
static void sync_reserved(struct simkueue *k, struct pass *ps, const json_t *wl)
{
    bool rejected = false, retry = false, all_ready = true;
    size_t i;
    json_t *c;
    char names[512] = "";
    size_t off = 0;
    json_array_foreach(jx_arr(wl, "status.admissionChecks"), i, c)
    {
        const char *s = jx_str(c, "state", "Pending");
        if (!strcmp(s, "Rejected") && off < sizeof names) {
            int w = snprintf(names + off, sizeof names - off, "%s%s", off ? ", " : "",
                             jx_str(c, "name", ""));
            off += w > 0 ? (size_t)w : 0;
        }
        rejected |= !strcmp(s, "Rejected");
        retry |= !strcmp(s, "Retry");
        all_ready &= !strcmp(s, "Ready");
    }
    if (!jx_bool(wl, "spec.active", true) || rejected) {
        if (rejected && jx_bool(wl, "spec.active", true)) {
            json_t *p = json_pack("{s:{s:b}}", "spec", "active", 0);
            char *path = wl_path(k, wl, NULL);
            write_patch(k, path, p, wl);
            free(path);
            json_decref(p);
        }
        /* Kueue v0.15: the rejected check is reset to Pending ("Previously: Rejected"); the
         * reason stays on the Workload's conditions and in the check owner's Events. */
        if (rejected) {
            char *m = xasprintf(
                "The workload is deactivated due to Admission check(s): %s, were rejected", names);
            evict(k, ps, wl, "DeactivatedDueToAdmissionCheck", m, RESET_CHECKS_UNCOUNTED, NULL);
            free(m);
        } else {
            evict(k, ps, wl, "Deactivated", "The workload is deactivated", KEEP_CHECKS, NULL);
        }
        return;
    }
    if (retry) {
        evict(k, ps, wl, "AdmissionCheck", "At least one admission check is false", RESET_CHECKS,
              NULL);
        return;
    }
    char *key = jx_obj_key(wl);
    json_t *jb = json_object_get(ps->jobs, key);
    free(key);
    if (all_ready) {
        if (!jx_cond_is_true(wl, "Admitted")) {
            struct wl_edit ed;
            edit_begin(&ed, wl);
            edit_cond(&ed, "Admitted", "True", "Admitted", "The workload is admitted");
            edit_commit(k, &ed, wl);
        }
        if (jb && job_suspended(jx_str(jb, "kind", "Job"), jx_obj(jb, "job")))
            job_run(k, ps, jx_str(jb, "kind", "Job"), jx_obj(jb, "job"),
                    jx_arr(wl, "status.admission.podSetAssignments"), true);
    } else if (jb && !job_suspended(jx_str(jb, "kind", "Job"), jx_obj(jb, "job"))) {
        job_suspend_plain(k, jx_str(jb, "kind", "Job"), jx_obj(jb, "job"));
    }
}

/* The ClusterQueue named by the workload's LocalQueue (lqs: key -> LocalQueue). */
static const char *lq_cq(const json_t *lqs, const json_t *wl)
{
    char *key = jx_key_make(jx_namespace(wl), jx_str(wl, "spec.queueName", ""));
    json_t *lq = json_object_get(lqs, key);
    free(key);
    return lq ? jx_str(lq, "spec.clusterQueue", NULL) : NULL;
}

static void set_pending(struct simkueue *k, const json_t *wl, const char *reason, const char *msg)
{
    json_t *c = jx_cond_find(wl, "QuotaReserved");
    if (c && !strcmp(jx_str(c, "status", ""), "False") && !strcmp(jx_str(c, "message", ""), msg) &&
        !strcmp(jx_str(c, "reason", ""), reason))
        return;
    struct wl_edit ed;
    edit_begin(&ed, wl);
    edit_cond(&ed, "QuotaReserved", "False", reason, msg);
    edit_commit(k, &ed, wl);
}

static json_t *flavor_list(const json_t *cq, const json_t *usage)
{
    json_t *out = json_array();
    size_t i, j, x;
    json_t *g, *f, *r;
    json_array_foreach(jx_arr(cq, "spec.resourceGroups"), i, g)
        json_array_foreach(jx_arr(g, "flavors"), j, f)
    {
        json_t *res = json_array();
        const char *fname = jx_str(f, "name", "");
        json_array_foreach(jx_arr(f, "resources"), x, r)
        {
            const char *rn = jx_str(r, "name", "");
            json_t *u = usage_of(usage, fname);
            json_t *q = u ? json_object_get(u, rn) : NULL;
            json_array_append_new(res, json_pack("{s:s,s:o,s:s}", "name", rn, "total",
                                                 q ? json_incref(q) : json_string("0"), "borrowed",
                                                 "0"));
        }
        json_array_append_new(out, json_pack("{s:s,s:o}", "name", fname, "resources", res));
    }
    return out;
}

static void sync_cq(struct simkueue *k, struct pass *ps, const json_t *cq)
{
    const char *name = jx_name(cq);
    /* what holds quota and what waits: maintained from the changes (cq_agg) */
    json_t *agg = json_object_get(k->cq_agg, name);
    json_t *reserved = NULL, *pending = json_array();
    json_t *usage = jx_obj(agg, "usage") ? jx_deep_copy(jx_obj(agg, "usage")) : json_object();
    json_t *admitted_usage =
        jx_obj(agg, "ausage") ? json_incref(jx_obj(agg, "ausage")) : json_object();
    size_t i;
    json_t *w, *one;
    const char *wk;
    long admitted = (long)jx_int(agg, "admitted", 0);
    json_object_foreach(jx_obj(agg, "pending"), wk, one)
    {
        if ((w = json_object_get(ps->wls, wk)))
            json_array_append(pending, w);
    }
    simkueue_sort_queue(pending);
    bool strict = !strcmp(jx_str(cq, "spec.queueingStrategy", "BestEffortFIFO"), "StrictFIFO");
    bool stopped = strcmp(jx_str(cq, "spec.stopPolicy", "None"), "None") != 0;
    long still_pending = 0, reserving = (long)json_object_size(jx_obj(agg, "reserved"));
    bool blocked = stopped;
    json_array_foreach(pending, i, w)
    {
        if (blocked) {
            still_pending++;
            continue;
        }
        json_t *podsets = jx_arr(w, "spec.podSets");
        json_t *asg = NULL;
        char *why = NULL;
        if (!simkueue_assign(cq, ps->flavors, podsets, usage, &asg, &why)) {
            reserve(k, cq, w, asg);
            simkueue_usage_add(usage, asg, 1);
            reserving++;
            json_decref(asg);
            continue;
        }
        if (!reserved) { /* only preemption needs them */
            reserved = json_array();
            json_object_foreach(jx_obj(agg, "reserved"), wk, one)
            {
                json_t *r = json_object_get(ps->wls, wk);
                if (r)
                    json_array_append(reserved, r);
            }
        }
        json_t *victims =
            simkueue_victims(cq, ps->flavors, podsets, jx_int(w, "spec.priority", 0),
                             jx_str(w, "metadata.creationTimestamp", ""), reserved, usage);
        if (victims) {
            size_t j;
            json_t *v;
            char *msg = xasprintf("Preempted to accommodate a workload (UID: %s, JobUID: %s) due "
                                  "to prioritization in the ClusterQueue",
                                  jx_uid(w) ? jx_uid(w) : "",
                                  jx_label(w, L_JOBUID) ? jx_label(w, L_JOBUID) : "");
            json_array_foreach(victims, j, v)
            {
                evict(k, ps, v, "Preempted", msg, KEEP_CHECKS, msg);
                reserving--;
            }
            free(msg);
            json_decref(victims);
            free(why);
            still_pending++;
            blocked = true; /* the preemptor is admitted on the next pass */
            continue;
        }
        set_pending(k, w, "Pending", why ? why : "insufficient quota");
        free(why);
        still_pending++;
        if (strict)
            blocked = true;
    }
    /* status */
    json_t *st = json_pack("{s:I,s:I,s:I,s:o,s:o}", "pendingWorkloads", (json_int_t)still_pending,
                           "reservingWorkloads", (json_int_t)reserving, "admittedWorkloads",
                           (json_int_t)admitted, "flavorsReservation", flavor_list(cq, usage),
                           "flavorsUsage", flavor_list(cq, admitted_usage));
    json_t *conds = jx_arr(cq, "status.conditions") ? jx_deep_copy(jx_arr(cq, "status.conditions"))
                                                    : json_array();
    struct jx_cond c = {.type = "Active",
                        .status = stopped ? "False" : "True",
                        .reason = stopped ? "Stopped" : "Ready",
                        .message = stopped ? "Can't admit new workloads; clusterQueue is stopped"
                                           : "Can admit new workloads"};
    jx_conds_set(conds, &c, NULL);
    json_object_set_new(st, "conditions", conds);
    json_t *patch = json_pack("{s:o}", "status", st);
    char *path = simapi_path(KQ, k->ver, "clusterqueues", NULL, name, "status");
    write_patch(k, path, patch, cq);
    free(path);
    json_decref(patch);
    json_decref(reserved);
    json_decref(pending);
    json_decref(usage);
    json_decref(admitted_usage);
}

static void sync_lq(struct simkueue *k, struct pass *ps, const json_t *lq)
{
    char *lkey = jx_obj_key(lq);
    json_t *agg = json_object_get(k->lq_agg, lkey ? lkey : "");
    long pending = (long)jx_int(agg, "pending", 0), reserving = (long)jx_int(agg, "reserving", 0),
         admitted = (long)jx_int(agg, "admitted", 0);
    bool have_cq = json_object_get(ps->cqs, jx_str(lq, "spec.clusterQueue", "")) != NULL;
    json_t *conds = jx_arr(lq, "status.conditions") ? jx_deep_copy(jx_arr(lq, "status.conditions"))
                                                    : json_array();
    struct jx_cond c = {.type = "Active",
                        .status = have_cq ? "True" : "False",
                        .reason = have_cq ? "Ready" : "ClusterQueueDoesNotExist",
                        .message = have_cq ? "Can submit new workloads to localQueue"
                                           : "Can't submit new workloads to clusterQueue"};
    jx_conds_set(conds, &c, NULL);
    free(lkey);
    json_t *patch = json_pack("{s:{s:I,s:I,s:I,s:o}}", "status", "pendingWorkloads",
                              (json_int_t)pending, "reservingWorkloads", (json_int_t)reserving,
                              "admittedWorkloads", (json_int_t)admitted, "conditions", conds);
    char *path = simapi_path(KQ, k->ver, "localqueues", jx_namespace(lq), jx_name(lq), "status");
    write_patch(k, path, patch, lq);
    free(path);
    json_decref(patch);
}

/* ---- incremental state --------------------------------------------------------- */

/*
 * What workload wl adds to its queues, as sync_cq and sync_lq count it:
 * {cq, cqrole: "reserved" (holds quota there: asg = its podSetAssignments,
 * admitted) or "pending" (waits there), lq, lqrole: "reserving" or
 * "pending", admitted}. A finished workload adds nothing, one being deleted
 * nothing to its ClusterQueue. New reference.
 */
static json_t *contribution(const json_t *lqs, const json_t *wl)
{
    json_t *c = json_object();
    if (is_finished(wl))
        return c;
    bool reserved = is_reserved(wl), active = jx_bool(wl, "spec.active", true);
    bool admitted = reserved && jx_cond_is_true(wl, "Admitted");
    if (reserved || active) {
        char *lq =
            jx_key_make(jx_str(wl, "metadata.namespace", ""), jx_str(wl, "spec.queueName", ""));
        json_object_set_new(c, "lq", json_string(lq));
        free(lq);
        json_object_set_new(c, "lqrole", json_string(reserved ? "reserving" : "pending"));
        json_object_set_new(c, "admitted", json_boolean(admitted));
    }
    if (jx_str(wl, "metadata.deletionTimestamp", NULL))
        return c;
    const char *cq = reserved ? jx_str(wl, "status.admission.clusterQueue", "")
                              : (active ? lq_cq(lqs, wl) : NULL);
    if (cq) {
        json_object_set_new(c, "cq", json_string(cq));
        json_object_set_new(c, "cqrole", json_string(reserved ? "reserved" : "pending"));
        if (reserved && jx_arr(wl, "status.admission.podSetAssignments"))
            json_object_set(c, "asg", jx_arr(wl, "status.admission.podSetAssignments"));
    }
    return c;
}

/* The aggregate `name` of aggs, created with the given empty-object fields. */
static json_t *agg_get(json_t *aggs, const char *name, const char *const *objs)
{
    json_t *a = json_object_get(aggs, name);
    if (!a) {
        a = json_object();
        for (; objs && *objs; objs++)
            json_object_set_new(a, *objs, json_object());
        json_object_set_new(aggs, name, a);
    }
    return a;
}

/* agg[field] += sign; a count of zero is left out. */
static void count_add(json_t *agg, const char *field, int sign)
{
    json_int_t v = (json_int_t)jx_int(agg, field, 0) + sign;
    if (v)
        json_object_set_new(agg, field, json_integer(v));
    else
        json_object_del(agg, field);
}

/* Drop zero quantities (and then empty flavors) from a usage object, so that
 * usage that came and went equals usage never added. */
static void usage_prune(json_t *usage)
{
    json_t *none = json_object();
    const char *fl, *res;
    json_t *u, *q;
    void *t1, *t2;
    json_object_foreach_safe(usage, t1, fl, u)
    {
        json_object_foreach_safe(u, t2, res, q) if (!simres_cmp(u, none, res))
            json_object_del(u, res);
        if (!json_object_size(u))
            json_object_del(usage, fl);
    }
    json_decref(none);
}

/* Add (sign 1) or take back (-1) contribution c of workload `key`. */
static void agg_apply(struct simkueue *k, const char *key, const json_t *c, int sign)
{
    const char *cq = jx_str(c, "cq", NULL), *lq = jx_str(c, "lq", NULL);
    bool admitted = jx_bool(c, "admitted", false);
    if (cq) {
        static const char *const fields[] = {"reserved", "pending", "usage", "ausage", NULL};
        json_t *a = agg_get(k->cq_agg, cq, fields);
        bool res = !strcmp(jx_str(c, "cqrole", ""), "reserved");
        json_t *set = jx_obj(a, res ? "reserved" : "pending");
        if (sign > 0)
            json_object_set_new(set, key, json_true());
        else
            json_object_del(set, key);
        if (res) {
            json_t *asg = jx_arr(c, "asg");
            simkueue_usage_add(jx_obj(a, "usage"), asg, sign);
            usage_prune(jx_obj(a, "usage"));
            if (admitted) {
                count_add(a, "admitted", sign);
                simkueue_usage_add(jx_obj(a, "ausage"), asg, sign);
                usage_prune(jx_obj(a, "ausage"));
            }
        }
        if (!json_object_size(jx_obj(a, "reserved")) && !json_object_size(jx_obj(a, "pending")) &&
            !json_object_size(jx_obj(a, "usage")) && !json_object_size(jx_obj(a, "ausage")) &&
            !jx_int(a, "admitted", 0))
            json_object_del(k->cq_agg, cq);
        json_object_set_new(k->d_cqs, cq, json_true());
    }
    if (lq) {
        json_t *a = agg_get(k->lq_agg, lq, NULL);
        count_add(a, jx_str(c, "lqrole", "pending"), sign);
        if (admitted)
            count_add(a, "admitted", sign);
        if (!jx_int(a, "pending", 0) && !jx_int(a, "reserving", 0) && !jx_int(a, "admitted", 0))
            json_object_del(k->lq_agg, lq);
        json_object_set_new(k->d_lqs, lq, json_true());
    }
}

/* Workload `key` is now wl (NULL: gone): move its contribution, mark it and
 * the queues it left or joined dirty. */
static void wl_index(struct simkueue *k, const char *key, const json_t *wl)
{
    json_t *old = json_object_get(k->contrib, key);
    if (old)
        agg_apply(k, key, old, -1);
    if (wl) {
        json_t *c = contribution(simwatch_objs(k->w_lq), wl);
        agg_apply(k, key, c, 1);
        json_object_set_new(k->contrib, key, c);
    } else {
        json_object_del(k->contrib, key);
    }
    json_object_set_new(k->d_wls, key, json_true());
}

/* This pass changed workload `key` itself (created it, finished it). */
static void wl_put(struct simkueue *k, const char *key, json_t *wl)
{
    simwatch_put(k->w_wl, key, wl);
    wl_index(k, key, wl);
}

static const char *kind_group(const char *kind)
{
    return !strcmp(kind, "Job") ? "batch" : PT_GROUP;
}

/* The key of the Workload a job gets; NULL when the job lacks name or uid. New string. */
static char *job_wl_key(const char *kind, const json_t *job)
{
    if (!job || !jx_namespace(job) || !jx_uid(job) || !jx_name(job))
        return NULL;
    char *n = simkueue_workload_name(kind, kind_group(kind), jx_name(job), jx_uid(job));
    char *key = jx_key_make(jx_namespace(job), n);
    free(n);
    return key;
}

static void job_event(struct simkueue *k, const char *kind, const json_t *old, const json_t *obj)
{
    char *ok = job_wl_key(kind, old), *nk = job_wl_key(kind, obj);
    if (ok && (!nk || strcmp(ok, nk))) {
        json_object_del(k->job_of, ok);
        json_object_set_new(k->d_wls, ok, json_true());
    }
    if (nk) {
        json_object_set_new(k->job_of, nk, json_pack("{s:s,s:O}", "kind", kind, "job", obj));
        json_object_set_new(k->d_jobs, nk, json_true());
        json_object_set_new(k->d_wls, nk, json_true());
    }
    free(ok);
    free(nk);
}

static void on_job(const char *key, const json_t *old, const json_t *obj, void *ud)
{
    (void)key;
    job_event(ud, "Job", old, obj);
}

static void on_pt(const char *key, const json_t *old, const json_t *obj, void *ud)
{
    (void)key;
    job_event(ud, "PyTorchJob", old, obj);
}

static void on_wl(const char *key, const json_t *old, const json_t *obj, void *ud)
{
    struct simkueue *k = ud;
    (void)old;
    wl_index(k, key, obj);
    if (!obj && json_object_get(k->job_of, key)) /* its job still wants one */
        json_object_set_new(k->d_jobs, key, json_true());
}

/* Queue objects: a spec (or existence) change can move workloads between queues,
 * change quota or flavors: look at everything; a status change only needs the
 * status written again. */
static bool same(const json_t *a, const json_t *b)
{
    return (!a && !b) || json_equal((json_t *)a, (json_t *)b); /* json_equal(NULL, NULL) is 0 */
}

static bool spec_changed(const json_t *old, const json_t *obj)
{
    return !old || !obj || !same(json_object_get(old, "spec"), json_object_get(obj, "spec")) ||
           !same(jx_get(old, "metadata.deletionTimestamp"),
                 jx_get(obj, "metadata.deletionTimestamp"));
}

static void queue_event(struct simkueue *k, json_t *dirty, const char *why, const char *key,
                        const json_t *old, const json_t *obj)
{
    if (spec_changed(old, obj))
        k->full = why;
    else
        json_object_set_new(dirty, key, json_true());
}

static void on_cq(const char *key, const json_t *old, const json_t *obj, void *ud)
{
    struct simkueue *k = ud;
    queue_event(k, k->d_cqs, "a ClusterQueue spec changed", key, old, obj);
}

static void on_lq(const char *key, const json_t *old, const json_t *obj, void *ud)
{
    struct simkueue *k = ud;
    queue_event(k, k->d_lqs, "a LocalQueue spec changed", key, old, obj);
}

static void on_rf(const char *key, const json_t *old, const json_t *obj, void *ud)
{
    (void)key;
    if (spec_changed(old, obj))
        ((struct simkueue *)ud)->full = "a ResourceFlavor spec changed";
}

/* Recompute the indexes from the copies; every object becomes dirty. */
static void rebuild_index(struct simkueue *k)
{
    json_object_clear(k->job_of);
    json_object_clear(k->contrib);
    json_object_clear(k->cq_agg);
    json_object_clear(k->lq_agg);
    const char *key;
    json_t *o;
    json_object_foreach(simwatch_objs(k->w_job), key, o) job_event(k, "Job", NULL, o);
    if (k->w_pt)
        json_object_foreach(simwatch_objs(k->w_pt), key, o) job_event(k, "PyTorchJob", NULL, o);
    json_object_foreach(simwatch_objs(k->w_wl), key, o) wl_index(k, key, o);
    json_object_foreach(simwatch_objs(k->w_cq), key, o)
        json_object_set_new(k->d_cqs, key, json_true());
    json_object_foreach(simwatch_objs(k->w_lq), key, o)
        json_object_set_new(k->d_lqs, key, json_true());
}

int simkueue_check_index(struct simkueue *k, char **why)
{
    *why = NULL;
    if (!k->w_wl)
        return 0;
    json_t *saved[] = {k->job_of, k->contrib, k->cq_agg, k->lq_agg,
                       k->d_jobs, k->d_wls,   k->d_cqs,  k->d_lqs};
    json_t **slot[] = {&k->job_of, &k->contrib, &k->cq_agg, &k->lq_agg,
                       &k->d_jobs, &k->d_wls,   &k->d_cqs,  &k->d_lqs};
    static const char *const names[] = {"job_of", "contrib", "cq_agg", "lq_agg"};
    size_t n = sizeof(saved) / sizeof(saved[0]);
    for (size_t i = 0; i < n; i++)
        *slot[i] = json_object();
    rebuild_index(k);
    for (size_t i = 0; i < n; i++) {
        if (i < 4 && !*why && !json_equal(saved[i], *slot[i])) {
            char *have = json_dumps(saved[i], JSON_COMPACT | JSON_SORT_KEYS);
            char *want = json_dumps(*slot[i], JSON_COMPACT | JSON_SORT_KEYS);
            *why = xasprintf("%s is %s, a recomputation gives %s", names[i], have, want);
            free(have);
            free(want);
        }
        json_decref(*slot[i]);
        *slot[i] = saved[i];
    }
    return *why ? -EINVAL : 0;
}

void simkueue_resync(struct simkueue *k)
{
    k->full_next = "asked (simkueue_resync)";
    k->last_rv = -1;
}

static void drain(struct simkueue *k, struct simwatch *w, int *last, simwatch_cb cb)
{
    int rc = simwatch_sync(w, cb, k);
    if (rc == 1 || (rc != 0 && rc != *last))
        k->full = "a watch (re)started";
    *last = rc;
}

static void watches_free(struct simkueue *k)
{
    struct simwatch **all[] = {&k->w_rf, &k->w_cq,  &k->w_lq, &k->w_wpc,
                               &k->w_wl, &k->w_job, &k->w_pt};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        simwatch_free(*all[i]);
        *all[i] = NULL;
    }
    free(k->wver);
    k->wver = NULL;
}

static struct simwatch *kueue_watch(struct simkueue *k, const char *resource)
{
    char *path = simapi_path(KQ, k->ver, resource, NULL, NULL, NULL);
    struct simwatch *w = simwatch_new(k->hub, path, NULL);
    free(path);
    return w;
}

/* Bring the copies up to date and collect what changed since the last pass. */
static void observe(struct simkueue *k)
{
    k->full = k->full_next;
    k->full_next = NULL;
    if (!k->wver || strcmp(k->wver, k->ver)) {
        watches_free(k);
        k->wver = xstrdup(k->ver);
        k->w_rf = kueue_watch(k, "resourceflavors");
        k->w_cq = kueue_watch(k, "clusterqueues");
        k->w_lq = kueue_watch(k, "localqueues");
        k->w_wpc = kueue_watch(k, "workloadpriorityclasses");
        k->w_wl = kueue_watch(k, "workloads");
        k->w_job = simwatch_new(k->hub, "/apis/batch/v1/jobs", L_QUEUE);
        k->full = "new Kueue API version";
    }
    bool pt = simapi_group_served(k->hub, PT_GROUP, "v1");
    if (pt && !k->w_pt) {
        k->w_pt = simwatch_new(k->hub, "/apis/kubeflow.org/v1/pytorchjobs", L_QUEUE);
        k->rc_pt = 0;
    } else if (!pt && k->w_pt) {
        simwatch_free(k->w_pt);
        k->w_pt = NULL;
        k->full = "PyTorchJobs no longer served";
    }
    drain(k, k->w_rf, &k->rc_rf, on_rf);
    drain(k, k->w_cq, &k->rc_cq, on_cq);
    drain(k, k->w_lq, &k->rc_lq, on_lq);
    drain(k, k->w_wpc, &k->rc_wpc, NULL); /* read when a Workload is created */
    drain(k, k->w_wl, &k->rc_wl, on_wl);
    drain(k, k->w_job, &k->rc_job, on_job);
    if (k->w_pt)
        drain(k, k->w_pt, &k->rc_pt, on_pt);
    if (k->full) {
        log_v(k->lg, 1, "kueue emulator: full pass", "reason", k->full);
        rebuild_index(k);
    }
}

/* Take a dirty set (the member becomes a new empty set). */
static json_t *take(json_t **set)
{
    json_t *t = *set;
    *set = json_object();
    return t;
}

/* Run sync on every object of `objs` named in the dirty set (which is emptied). */
static void sync_dirty(struct simkueue *k, struct pass *ps, json_t **dirty, const json_t *objs,
                       void (*sync)(struct simkueue *, struct pass *, const json_t *))
{
    json_t *todo = take(dirty), *one;
    const char *key;
    json_object_foreach(todo, key, one)
    {
        json_t *o = json_object_get(objs, key);
        if (o)
            sync(k, ps, o);
    }
    json_decref(todo);
}

int simkueue_sync(struct simkueue *k)
{
    k->writes = k->creates = 0;
    free(k->ver);
    k->ver = simapi_crd_storage_version(k->hub, "workloads.kueue.x-k8s.io");
    if (!k->ver)
        return 0; /* Kueue CRDs not loaded (yet) */
    observe(k);
    struct pass ps = {.flavors = simwatch_objs(k->w_rf),
                      .cqs = simwatch_objs(k->w_cq),
                      .lqs = simwatch_objs(k->w_lq),
                      .wpcs = simwatch_objs(k->w_wpc),
                      .wls = simwatch_objs(k->w_wl),
                      .jobs = k->job_of};

    /* jobs -> workloads */
    json_t *todo = take(&k->d_jobs);
    const char *key;
    json_t *one;
    json_object_foreach(todo, key, one)
    {
        json_t *jb = json_object_get(k->job_of, key);
        if (!jb)
            continue;
        const char *kind = jx_str(jb, "kind", "Job");
        ensure_workload(k, &ps, kind, kind_group(kind), jx_obj(jb, "job"));
    }
    json_decref(todo);

    /* per workload: finish, checks, keep unadmitted jobs suspended */
    todo = take(&k->d_wls);
    json_object_foreach(todo, key, one)
    {
        json_t *w = json_incref(json_object_get(ps.wls, key));
        if (!w || jx_str(w, "metadata.deletionTimestamp", NULL) || is_finished(w)) {
            json_decref(w);
            continue;
        }
        json_t *jb = json_object_get(ps.jobs, key);
        const char *kind = jb ? jx_str(jb, "kind", "Job") : NULL;
        json_t *job = jb ? jx_obj(jb, "job") : NULL;
        const char *msg = NULL, *fin = job ? job_finished(kind, job, &msg) : NULL;
        if (fin) {
            struct wl_edit ed;
            edit_begin(&ed, w);
            edit_cond(&ed, "Finished", "True", fin, msg);
            edit_commit(k, &ed, w);
            /* this pass must not count it any more */
            json_t *c = jx_deep_copy(w);
            struct jx_cond fc = {.type = "Finished", .status = "True", .reason = fin};
            jx_cond_set(c, &fc, NULL);
            wl_put(k, key, c);
            json_decref(c);
        } else if (is_reserved(w)) {
            sync_reserved(k, &ps, w);
        } else {
            if (job && !job_suspended(kind, job))
                job_suspend_plain(k, kind, job);
            const char *cqn = lq_cq(ps.lqs, w);
            if (jx_bool(w, "spec.active", true) && (!cqn || !json_object_get(ps.cqs, cqn))) {
                char *m =
                    cqn ? xasprintf("ClusterQueue %s doesn't exist", cqn)
                        : xasprintf("LocalQueue %s doesn't exist", jx_str(w, "spec.queueName", ""));
                set_pending(k, w, "Inadmissible", m);
                free(m);
            }
        }
        json_decref(w);
    }
    json_decref(todo);
    /* Workloads changed by sync_reserved are re-read on the next pass; queue now.
     * The dirty ClusterQueues wait for a pass that wrote nothing before here that changes
     * what they hold: a Workload created is pending (already in this pass's copy, wl_put), so
     * this pass may reserve it, and a steady stream of new jobs does not hold every reservation
     * back until it stops, which real Kueue's scheduler does not do either (devhub/README.md,
     * "Kueue emulator"). */
    if (!k->writes)
        sync_dirty(k, &ps, &k->d_cqs, ps.cqs, sync_cq);
    sync_dirty(k, &ps, &k->d_lqs, ps.lqs, sync_lq);
    return k->writes + k->creates;
}

static void tick_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    struct simkueue *k = t->data;
    (void)loop;
    (void)revents;
    int64_t rv = hub_rv(k->hub);
    if (rv == k->last_rv)
        return;
    k->last_rv = rv;
    simkueue_sync(k);
}

/* Kueue's job webhooks: a Job or PyTorchJob created with a queue name starts suspended. */
static void admit_job(void *userdata, const char *group, const char *kind, json_t *obj)
{
    (void)userdata;
    const char *q = jx_label(obj, L_QUEUE);
    if (!q || !*q)
        return;
    if (!strcmp(group, "batch") && !strcmp(kind, "Job"))
        jx_setv_new(obj, json_true(), "spec", "suspend");
    else if (!strcmp(group, "kubeflow.org") && !strcmp(kind, "PyTorchJob"))
        jx_setv_new(obj, json_true(), "spec", "runPolicy", "suspend");
}

int simkueue_start(struct simkueue **out, const struct simkueue_opts *o, struct err *e)
{
    if (!o || !o->loop || !o->hub)
        return err_set(e, -EINVAL, "kueue emulator: loop and hub are required");
    struct simkueue *k = xcalloc(1, sizeof(*k));
    k->loop = o->loop;
    k->hub = o->hub;
    k->lg = o->lg;
    k->last_rv = -1;
    json_t **sets[] = {&k->job_of, &k->contrib, &k->cq_agg, &k->lq_agg,
                       &k->d_jobs, &k->d_wls,   &k->d_cqs,  &k->d_lqs};
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
        *sets[i] = json_object();
    ev_timer_init(&k->tick, tick_cb, 0, o->interval > 0 ? o->interval : 0.05);
    k->tick.data = k;
    ev_timer_start(k->loop, &k->tick);
    hub_set_admit(k->hub, admit_job, k);
    log_info(k->lg, "kueue emulator started");
    *out = k;
    return 0;
}

void simkueue_stop(struct simkueue *k)
{
    if (!k)
        return;
    ev_timer_stop(k->loop, &k->tick);
    hub_set_admit(k->hub, NULL, NULL);
    watches_free(k);
    json_t *sets[] = {k->job_of, k->contrib, k->cq_agg, k->lq_agg,
                      k->d_jobs, k->d_wls,   k->d_cqs,  k->d_lqs};
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
        json_decref(sets[i]);
    free(k->ver);
    free(k);
}
