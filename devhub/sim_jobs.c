/* sim_jobs: job runner simulator (Job controller, training operator, scheduler, kubelet). */
#include "devhub/sim_jobs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devhub/sim_api.h"
#include "devhub/sim_res.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/sched/affinity.h"
#include "pkg/util/xalloc.h"

#define PT_GROUP "kubeflow.org"

struct simjobs {
    struct ev_loop *loop;
    struct hub *hub;
    const struct logger *lg;
    double def_dur, scale, interval;
    ev_timer tick;
    int64_t last_rv;
    double next_due; /* wall time of the next pod completion, 0 = none */
    json_t *started; /* pod uid -> wall-clock start (real), for sub-second precision */
    int writes;      /* writes of the current pass */
};

/* ---- durations ----------------------------------------------------------- */

int simjobs_parse_duration(const char *s, double *out)
{
    if (!s || !*s)
        return -EINVAL;
    double total = 0;
    const char *p = s;
    bool any = false;
    while (*p) {
        char num[32], *end;
        size_t n = strspn(p, "0123456789.");
        if (!n || n >= sizeof(num))
            return -EINVAL;
        memcpy(num, p, n);
        num[n] = '\0';
        errno = 0;
        double v = strtod(num, &end);
        if (*end || errno || !isfinite(v))
            return -EINVAL;
        p += n;
        double mul;
        if (!*p) {
            if (any) /* "1m30" */
                return -EINVAL;
            mul = 1;
        } else if (!strncmp(p, "ms", 2)) {
            mul = 0.001;
            p += 2;
        } else if (*p == 's') {
            mul = 1;
            p++;
        } else if (*p == 'm') {
            mul = 60;
            p++;
        } else if (*p == 'h') {
            mul = 3600;
            p++;
        } else {
            return -EINVAL;
        }
        total += v * mul;
        any = true;
    }
    *out = total;
    return 0;
}

static bool has_unit(const char *w)
{
    size_t n = strlen(w);
    return n > 1 && isalpha((unsigned char)w[n - 1]);
}

static void scan_words(const char *s, bool *after_sleep, double *best, bool *found)
{
    char word[128];
    const char *p = s;
    while (*p) {
        while (*p && strchr(" \t\n;&|()'\"", *p))
            p++;
        size_t n = 0;
        while (p[n] && !strchr(" \t\n;&|()'\"", p[n]))
            n++;
        if (!n)
            break;
        if (n < sizeof(word)) {
            memcpy(word, p, n);
            word[n] = '\0';
            double d;
            if (!strcmp(word, "sleep")) {
                *after_sleep = true;
                p += n;
                continue;
            }
            if ((*after_sleep || has_unit(word)) && !simjobs_parse_duration(word, &d)) {
                if (!*found || d > *best)
                    *best = d;
                *found = true;
            }
        }
        *after_sleep = false;
        p += n;
    }
}

double simjobs_pod_duration(const json_t *podspec, double def)
{
    double best = 0;
    bool found = false;
    size_t i, j;
    json_t *c, *w;
    json_array_foreach(jx_arr(podspec, "containers"), i, c)
    {
        bool after_sleep = false;
        json_array_foreach(jx_arr(c, "command"), j, w) if (json_is_string(w))
            scan_words(json_string_value(w), &after_sleep, &best, &found);
        json_array_foreach(jx_arr(c, "args"), j, w) if (json_is_string(w))
            scan_words(json_string_value(w), &after_sleep, &best, &found);
    }
    return found ? best : def;
}

/* ---- placement ------------------------------------------------------------ */

static void count_reason(json_t *reasons, const char *r)
{
    json_object_set_new(reasons, r,
                        json_integer(json_integer_value(json_object_get(reasons, r)) + 1));
}

const char *simjobs_place(const json_t *pod, const json_t *nodes, const json_t *used, char **why)
{
    json_t *spec = jx_obj(pod, "spec");
    json_t *req = simres_pod_requests(spec);
    json_object_set_new(req, "pods", json_string("1"));
    json_t *reasons = json_object();
    const char *chosen = NULL;
    /* Required node affinity, by the scheduler's rules (pkg/sched/affinity); an
     * affinity that is not even an object matches no node. */
    struct affinity *aff = NULL;
    bool aff_bad = affinity_from_json(json_object_get(spec, "affinity"), &aff, NULL) < 0;
    size_t i;
    json_t *n;
    json_array_foreach((json_t *)nodes, i, n)
    {
        const char *name = jx_name(n);
        if (!name)
            continue;
        if (jx_bool(n, "spec.unschedulable", false)) {
            count_reason(reasons, "node(s) were unschedulable");
            continue;
        }
        if (!simres_selector_matches(jx_obj(spec, "nodeSelector"), jx_labels(n)) || aff_bad ||
            !affinity_required_matches(aff, name, jx_labels(n))) {
            count_reason(reasons, "node(s) didn't match Pod's node affinity/selector");
            continue;
        }
        if (!simres_tolerates_all(jx_arr(spec, "tolerations"), jx_arr(n, "spec.taints"))) {
            count_reason(reasons, "node(s) had untolerated taint");
            continue;
        }
        json_t *alloc = jx_obj(n, "status.allocatable");
        if (!alloc)
            alloc = jx_obj(n, "status.capacity");
        const char *short_of = NULL;
        if (!simres_fits(req, used ? json_object_get(used, name) : NULL, alloc, &short_of)) {
            char *r = !strcmp(short_of, "pods") ? xstrdup("Too many pods")
                                                : xasprintf("Insufficient %s", short_of);
            count_reason(reasons, r);
            free(r);
            continue;
        }
        chosen = name;
        break;
    }
    if (!chosen && why) {
        struct buf b;
        buf_init(&b, 1 << 16);
        buf_printf(&b, "0/%zu nodes are available: ", json_array_size(nodes));
        const char *k;
        json_t *v;
        bool first = true;
        json_object_foreach(reasons, k, v)
        {
            buf_printf(&b, "%s%lld %s", first ? "" : ", ", json_integer_value(v), k);
            first = false;
        }
        buf_printf(&b, ".");
        *why = xstrdup(b.data ? b.data : "");
        buf_free(&b);
    }
    affinity_free(aff);
    json_decref(reasons);
    json_decref(req);
    return chosen;
}

/* ---- helpers ----------------------------------------------------------------- */

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *now_str(char *buf, size_t n)
{
    return clock_now_rfc3339(buf, n, 0);
}

static bool pod_terminal(const json_t *pod)
{
    const char *ph = jx_str(pod, "status.phase", "");
    return !strcmp(ph, "Succeeded") || !strcmp(ph, "Failed");
}

static bool owned_by(const json_t *obj, const char *uid)
{
    json_t *ref = jx_owner_controller(obj);
    return ref && uid && !strcmp(jx_str(ref, "uid", ""), uid);
}

/* Merge-patch path with patch when it changes something in cur (compared on the patch's keys). */
static void write_patch(struct simjobs *s, const char *path, json_t *patch, const json_t *cur)
{
    json_t *merged = jx_merge_apply(cur, patch);
    bool same = json_equal(merged, (json_t *)cur);
    json_decref(merged);
    if (same)
        return;
    int code = simapi_patch(s->hub, path, patch, NULL);
    s->writes++;
    if (code != 200)
        log_v(s->lg, 2, "simulator write failed", "path", path, "code", LOG_INT(code));
}

static json_t *owner_ref(const char *api_version, const char *kind, const json_t *owner)
{
    return json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion", api_version, "kind", kind, "name",
                     jx_name(owner), "uid", jx_uid(owner), "controller", 1, "blockOwnerDeletion",
                     1);
}

static void pod_set_conds(json_t *status, const char *now, bool ready, const char *reason);

/* Create `pod` in ns; true when it was (then appended to pods). */
static bool create_pod(struct simjobs *s, const char *ns, json_t *pod, json_t *pods)
{
    char *path = simapi_path("", "v1", "pods", ns, NULL, NULL);
    json_t *out = NULL;
    int code = simapi_create(s->hub, path, pod, &out);
    s->writes++;
    bool ok = code == 201 && out;
    if (ok)
        json_array_append(pods, out);
    else
        log_v(s->lg, 2, "simulator pod create failed", "namespace", ns, "code", LOG_INT(code));
    json_decref(out);
    free(path);
    return ok;
}

/* The refusal message of namespace ns (SIMJOBS_REFUSE_PODS_ANN), or NULL:
 * the Job controller's pod creates there fail, as under a ResourceQuota or
 * an admission webhook that refuses them. New string. */
static char *ns_refusal(struct simjobs *s, const char *ns)
{
    char *path = simapi_path("", "v1", "namespaces", NULL, ns, NULL);
    json_t *obj = NULL;
    char *out = NULL;
    if (simapi_get(s->hub, path, &obj) == 200) {
        const char *v = jx_annotation(obj, SIMJOBS_REFUSE_PODS_ANN);
        if (v)
            out = xstrdup(v);
    }
    json_decref(obj);
    free(path);
    return out;
}

/* Node `node` is labelled SIMJOBS_PULL_LABEL=fail: its pods never start. */
static bool node_pull_fails(const json_t *nodes, const char *node)
{
    size_t i;
    json_t *nd;
    json_array_foreach(nodes, i, nd)
    {
        if (!strcmp(jx_name(nd) ? jx_name(nd) : "", node))
            return !strcmp(jx_label(nd, SIMJOBS_PULL_LABEL) ? jx_label(nd, SIMJOBS_PULL_LABEL) : "",
                           "fail");
    }
    return false;
}

/* A bound pod whose image cannot be pulled: Pending, PodScheduled=True, its
 * containers waiting with ErrImagePull, as a kubelet writes it (once). */
static void stall_pod(struct simjobs *s, json_t *pod, const char *node)
{
    json_t *cs = json_array_get(jx_arr(pod, "status.containerStatuses"), 0);
    if (!strcmp(jx_str(pod, "status.phase", ""), "Pending") &&
        !strcmp(jx_str(cs, "state.waiting.reason", ""), "ErrImagePull"))
        return;
    char now[40];
    now_str(now, sizeof(now));
    json_t *st = json_pack("{s:s}", "phase", "Pending");
    pod_set_conds(st, now, false, "ContainersNotReady");
    json_t *arr = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(jx_arr(pod, "spec.containers"), i, c)
    {
        char *msg = xasprintf("failed to pull image \"%s\": node %s is labelled %s=fail (devhub)",
                              jx_str(c, "image", ""), node, SIMJOBS_PULL_LABEL);
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:b,s:b,s:i,s:{s:{s:s,s:s}}}", "name",
                                             jx_str(c, "name", "main"), "image",
                                             jx_str(c, "image", ""), "imageID", "", "ready", 0,
                                             "started", 0, "restartCount", 0, "state", "waiting",
                                             "reason", "ErrImagePull", "message", msg));
        free(msg);
    }
    json_object_set_new(st, "containerStatuses", arr);
    char *path = simapi_path("", "v1", "pods", jx_namespace(pod), jx_name(pod), "status");
    json_t *p = json_pack("{s:O}", "status", st);
    simapi_patch(s->hub, path, p, NULL);
    s->writes++;
    json_object_set(pod, "status", st);
    json_decref(p);
    json_decref(st);
    free(path);
}

static void delete_pod(struct simjobs *s, const json_t *pod)
{
    char *path = simapi_path("", "v1", "pods", jx_namespace(pod), jx_name(pod), NULL);
    simapi_delete(s->hub, path);
    s->writes++;
    free(path);
}

static json_t *conds_copy(const json_t *obj)
{
    json_t *c = jx_arr(obj, "status.conditions");
    return c ? jx_deep_copy(c) : json_array();
}

/* ---- pods: schedule, run, complete ------------------------------------------ */

static int cmp_created(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = strcmp(jx_str(x, "metadata.creationTimestamp", ""),
                   jx_str(y, "metadata.creationTimestamp", ""));
    return c ? c : strcmp(jx_str(x, "metadata.name", ""), jx_str(y, "metadata.name", ""));
}

static int cmp_name(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    return strcmp(jx_str(x, "metadata.name", ""), jx_str(y, "metadata.name", ""));
}

static json_t *sorted(const json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr);
    json_t **v = xcalloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(arr, i);
    qsort(v, n, sizeof(*v), cmp);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append(out, v[i]);
    free(v);
    return out;
}

static json_t *containers_status(const json_t *pod, bool running, const char *started,
                                 const char *finished)
{
    json_t *arr = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(jx_arr(pod, "spec.containers"), i, c)
    {
        json_t *state =
            running ? json_pack("{s:{s:s}}", "running", "startedAt", started)
                    : json_pack("{s:{s:i,s:s,s:s,s:s}}", "terminated", "exitCode", 0, "reason",
                                "Completed", "startedAt", started, "finishedAt", finished);
        json_array_append_new(
            arr, json_pack("{s:s,s:s,s:s,s:b,s:b,s:i,s:o}", "name", jx_str(c, "name", "main"),
                           "image", jx_str(c, "image", ""), "imageID", "", "ready", running,
                           "started", running, "restartCount", 0, "state", state));
    }
    return arr;
}

static void pod_set_conds(json_t *status, const char *now, bool ready, const char *reason)
{
    json_t *conds = json_array();
    struct jx_cond c = {.type = "PodScheduled", .status = "True"};
    jx_conds_set(conds, &c, now);
    c = (struct jx_cond){.type = "Initialized", .status = "True"};
    jx_conds_set(conds, &c, now);
    c = (struct jx_cond){
        .type = "ContainersReady", .status = ready ? "True" : "False", .reason = reason};
    jx_conds_set(conds, &c, now);
    c = (struct jx_cond){.type = "Ready", .status = ready ? "True" : "False", .reason = reason};
    jx_conds_set(conds, &c, now);
    json_object_set_new(status, "conditions", conds);
}

static void node_ip(const json_t *nodes, const char *node, char *buf, size_t n)
{
    size_t i, j;
    json_t *nd, *a;
    snprintf(buf, n, "10.0.0.1");
    json_array_foreach((json_t *)nodes, i, nd)
    {
        if (strcmp(jx_str(nd, "metadata.name", ""), node))
            continue;
        json_array_foreach(jx_arr(nd, "status.addresses"), j,
                           a) if (!strcmp(jx_str(a, "type", ""), "InternalIP"))
            snprintf(buf, n, "%s", jx_str(a, "address", "10.0.0.1"));
    }
}

/* Bind pod to node (when not yet) and start it; false when it cannot start
 * there (node_pull_fails: left Pending by stall_pod). */
static bool run_pod(struct simjobs *s, json_t *pod, const char *node, const json_t *nodes)
{
    char now[40], ip[64];
    now_str(now, sizeof(now));
    node_ip(nodes, node, ip, sizeof(ip));
    char *path = simapi_path("", "v1", "pods", jx_namespace(pod), jx_name(pod), NULL);
    if (!jx_str(pod, "spec.nodeName", NULL)) {
        json_t *p = json_pack("{s:{s:s}}", "spec", "nodeName", node);
        simapi_patch(s->hub, path, p, NULL);
        s->writes++;
        json_decref(p);
        jx_set_str(pod, "spec.nodeName", node, NULL);
    }
    if (node_pull_fails(nodes, node)) {
        stall_pod(s, pod, node);
        free(path);
        return false;
    }
    char *spath = xasprintf("%s/status", path);
    /* qosClass is the apiserver's, set when the pod was created. */
    json_t *st = json_pack("{s:s,s:s,s:s,s:s}", "phase", "Running", "startTime", now, "hostIP", ip,
                           "podIP", ip);
    pod_set_conds(st, now, true, NULL);
    json_object_set_new(st, "containerStatuses", containers_status(pod, true, now, NULL));
    json_t *p = json_pack("{s:o}", "status", st);
    simapi_patch(s->hub, spath, p, NULL);
    s->writes++;
    json_object_set(pod, "status", st);
    json_decref(p);
    json_object_set_new(s->started, jx_uid(pod), json_real(now_wall()));
    free(spath);
    free(path);
    return true;
}

static void finish_pod(struct simjobs *s, json_t *pod)
{
    char now[40];
    now_str(now, sizeof(now));
    const char *started = jx_str(pod, "status.startTime", now);
    char *path = simapi_path("", "v1", "pods", jx_namespace(pod), jx_name(pod), "status");
    json_t *st = json_pack("{s:s}", "phase", "Succeeded");
    pod_set_conds(st, now, false, "PodCompleted");
    json_object_set_new(st, "containerStatuses", containers_status(pod, false, started, now));
    json_t *p = json_pack("{s:O}", "status", st);
    simapi_patch(s->hub, path, p, NULL);
    s->writes++;
    json_t *merged = jx_merge_apply(jx_obj(pod, "status"), st);
    json_object_set_new(pod, "status", merged);
    json_decref(p);
    json_decref(st);
    json_object_del(s->started, jx_uid(pod));
    free(path);
}

static void mark_unschedulable(struct simjobs *s, const json_t *pod, const char *why)
{
    json_t *cur = jx_obj(pod, "status");
    json_t *c = jx_cond_find(pod, "PodScheduled");
    if (c && !strcmp(jx_str(c, "status", ""), "False") && !strcmp(jx_str(c, "message", ""), why) &&
        !strcmp(jx_str(cur, "phase", ""), "Pending"))
        return;
    char now[40];
    now_str(now, sizeof(now));
    json_t *conds = json_array();
    struct jx_cond cd = {
        .type = "PodScheduled", .status = "False", .reason = "Unschedulable", .message = why};
    jx_conds_set(conds, &cd, now);
    json_t *p = json_pack("{s:{s:s,s:o}}", "status", "phase", "Pending", "conditions", conds);
    char *path = simapi_path("", "v1", "pods", jx_namespace(pod), jx_name(pod), "status");
    simapi_patch(s->hub, path, p, NULL);
    s->writes++;
    json_decref(p);
    free(path);
}

static double pod_start(struct simjobs *s, const json_t *pod)
{
    json_t *v = json_object_get(s->started, jx_uid(pod));
    if (v)
        return json_real_value(v);
    struct timespec ts;
    if (!clock_parse_rfc3339(jx_str(pod, "status.startTime", ""), &ts))
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    return now_wall();
}

static void sync_pods(struct simjobs *s, json_t *pods, const json_t *nodes)
{
    json_t *used = json_object();
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        const char *node = jx_str(pod, "spec.nodeName", NULL);
        if (!node || pod_terminal(pod) || jx_str(pod, "metadata.deletionTimestamp", NULL))
            continue;
        json_t *u = json_object_get(used, node);
        if (!u) {
            u = json_object();
            json_object_set_new(used, node, u);
        }
        json_t *req = simres_pod_requests(jx_obj(pod, "spec"));
        json_object_set_new(req, "pods", json_string("1"));
        simres_add(u, req, 1);
        json_decref(req);
    }
    json_t *order = sorted(pods, cmp_created);
    double now = now_wall();
    json_array_foreach(order, i, pod)
    {
        if (pod_terminal(pod) || jx_str(pod, "metadata.deletionTimestamp", NULL))
            continue;
        const char *node = jx_str(pod, "spec.nodeName", NULL);
        const char *phase = jx_str(pod, "status.phase", "Pending");
        if (!node) {
            char *why = NULL;
            const char *chosen = simjobs_place(pod, nodes, used, &why);
            if (!chosen) {
                mark_unschedulable(s, pod, why);
                free(why);
                continue;
            }
            json_t *u = json_object_get(used, chosen);
            if (!u) {
                u = json_object();
                json_object_set_new(used, chosen, u);
            }
            json_t *req = simres_pod_requests(jx_obj(pod, "spec"));
            json_object_set_new(req, "pods", json_string("1"));
            simres_add(u, req, 1);
            json_decref(req);
            if (!run_pod(s, pod, chosen, nodes))
                continue;
        } else if (strcmp(phase, "Running") && !run_pod(s, pod, node, nodes)) {
            continue;
        }
        double dur = simjobs_pod_duration(jx_obj(pod, "spec"), s->def_dur) * s->scale;
        double end = pod_start(s, pod) + dur;
        if (now >= end)
            finish_pod(s, pod);
        else if (!s->next_due || end < s->next_due)
            s->next_due = end;
    }
    json_decref(order);
    json_decref(used);
}

/* ---- batch/v1 Job ---------------------------------------------------------- */

static json_t *job_pod(const json_t *job, long index)
{
    json_t *tmpl = jx_obj(job, "spec.template");
    json_t *pod = json_pack("{s:s,s:s,s:{},s:O}", "apiVersion", "v1", "kind", "Pod", "metadata",
                            "spec", jx_obj(tmpl, "spec") ? jx_obj(tmpl, "spec") : json_object());
    json_t *md = json_object_get(pod, "metadata");
    json_t *labels = jx_obj(tmpl, "metadata.labels") ? jx_deep_copy(jx_obj(tmpl, "metadata.labels"))
                                                     : json_object();
    json_object_set_new(labels, "batch.kubernetes.io/job-name", json_string(jx_name(job)));
    json_object_set_new(labels, "job-name", json_string(jx_name(job)));
    json_object_set_new(labels, "batch.kubernetes.io/controller-uid", json_string(jx_uid(job)));
    json_object_set_new(labels, "controller-uid", json_string(jx_uid(job)));
    json_t *ann = jx_obj(tmpl, "metadata.annotations")
                      ? jx_deep_copy(jx_obj(tmpl, "metadata.annotations"))
                      : json_object();
    char *gen;
    if (index >= 0) {
        char idx[24];
        snprintf(idx, sizeof(idx), "%ld", index);
        json_object_set_new(labels, "batch.kubernetes.io/job-completion-index", json_string(idx));
        json_object_set_new(ann, "batch.kubernetes.io/job-completion-index", json_string(idx));
        gen = xasprintf("%s-%ld-", jx_name(job), index);
    } else {
        gen = xasprintf("%s-", jx_name(job));
    }
    json_object_set_new(md, "generateName", json_string(gen));
    free(gen);
    json_object_set_new(md, "labels", labels);
    json_object_set_new(md, "annotations", ann);
    json_object_set_new(md, "ownerReferences", owner_ref("batch/v1", "Job", job));
    return pod;
}

static void indexes_str(const bool *done, long n, struct buf *b)
{
    for (long i = 0; i < n;) {
        if (!done[i]) {
            i++;
            continue;
        }
        long j = i;
        while (j + 1 < n && done[j + 1])
            j++;
        if (b->len)
            buf_printf(b, ",");
        if (j == i)
            buf_printf(b, "%ld", i);
        else
            buf_printf(b, "%ld-%ld", i, j);
        i = j + 1;
    }
}

/* The Job controller writes lastProbeTime with lastTransitionTime whenever a
 * condition changes (RFC 3339 strings of one format compare as times). */
static void probe_times(json_t *conds)
{
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *lt = jx_str(c, "lastTransitionTime", NULL);
        const char *lp = jx_str(c, "lastProbeTime", NULL);
        if (lt && (!lp || strcmp(lp, lt) < 0))
            json_object_set_new(c, "lastProbeTime", json_string(lt));
    }
}

/* The Job controller leaves Jobs another controller manages (spec.managedBy) alone. */
static bool managed_elsewhere(const json_t *job, const char *path, const char *mine)
{
    const char *mb = jx_str(job, path, NULL);
    return mb && strcmp(mb, mine) != 0;
}

static void sync_job(struct simjobs *s, const json_t *job, json_t *pods)
{
    if (jx_cond_is_true(job, "Complete") || jx_cond_is_true(job, "Failed") ||
        managed_elsewhere(job, "spec.managedBy", "kubernetes.io/job-controller"))
        return;
    const char *uid = jx_uid(job), *ns = jx_namespace(job);
    char now[40];
    now_str(now, sizeof(now));
    bool suspended = jx_bool(job, "spec.suspend", false);
    long par = (long)jx_int(job, "spec.parallelism", 1);
    json_t *compv = jx_get(job, "spec.completions");
    long comp = json_is_integer(compv) ? (long)json_integer_value(compv) : (par > 0 ? par : 1);
    if (par < 0)
        par = 0;
    if (comp < 0)
        comp = 0;
    if (comp > 100000)
        comp = 100000;
    bool indexed = !strcmp(jx_str(job, "spec.completionMode", "NonIndexed"), "Indexed");
    long active = 0, ready = 0, succeeded = 0, failed = 0;
    bool *done = xcalloc((size_t)comp + 1, 1), *busy = xcalloc((size_t)comp + 1, 1);
    size_t i;
    json_t *pod;
    size_t npods = json_array_size(pods);
    for (i = 0; i < npods; i++) {
        pod = json_array_get(pods, i);
        if (!owned_by(pod, uid))
            continue;
        const char *ph = jx_str(pod, "status.phase", "Pending");
        long idx = (long)strtol(jx_str(pod,
                                       "metadata.annotations.batch\\.kubernetes\\.io/"
                                       "job-completion-index",
                                       "-1"),
                                NULL, 10);
        bool in_range = idx >= 0 && idx < comp;
        if (!strcmp(ph, "Succeeded")) {
            if (indexed && in_range) {
                if (!done[idx])
                    succeeded++;
                done[idx] = true;
            } else if (!indexed) {
                succeeded++;
            }
        } else if (!strcmp(ph, "Failed")) {
            failed++;
        } else if (!jx_str(pod, "metadata.deletionTimestamp", NULL)) {
            if (suspended) {
                delete_pod(s, pod);
                continue;
            }
            active++;
            if (!strcmp(ph, "Running") && jx_cond_is_true(pod, "Ready"))
                ready++;
            if (in_range)
                busy[idx] = true;
        }
    }
    json_t *st = json_object();
    json_t *conds = conds_copy(job);
    if (suspended) {
        struct jx_cond c = {.type = "Suspended",
                            .status = "True",
                            .reason = "JobSuspended",
                            .message = "Job suspended"};
        jx_conds_set(conds, &c, now);
        json_object_set_new(st, "startTime", json_null());
        active = ready = 0;
    } else {
        if (jx_cond_find(job, "Suspended")) {
            struct jx_cond c = {.type = "Suspended",
                                .status = "False",
                                .reason = "JobResumed",
                                .message = "Job resumed"};
            jx_conds_set(conds, &c, now);
        }
        if (!jx_str(job, "status.startTime", NULL))
            json_object_set_new(st, "startTime", json_string(now));
        /* Create pods up to parallelism while completions are not all taken
         * (none where the namespace refuses them: ns_refusal). */
        long next = 0;
        char *refused = succeeded < comp && active < par ? ns_refusal(s, ns) : NULL;
        if (refused)
            log_v(s->lg, 2, "simulator pod creates refused", "namespace", ns, "job", jx_name(job),
                  "message", refused);
        while (!refused && succeeded < comp && active < par && succeeded + active < comp) {
            long idx = -1;
            if (indexed) {
                while (next < comp && (done[next] || busy[next]))
                    next++;
                if (next >= comp)
                    break;
                idx = next;
                busy[next] = true;
            }
            json_t *p = job_pod(job, idx);
            bool made = create_pod(s, ns, p, pods);
            json_decref(p);
            if (!made)
                break;
            active++;
        }
        free(refused);
        if (succeeded >= comp) {
            struct jx_cond c = {.type = "SuccessCriteriaMet",
                                .status = "True",
                                .reason = "CompletionsReached",
                                .message = "Reached expected number of succeeded pods"};
            jx_conds_set(conds, &c, now);
            c.type = "Complete";
            jx_conds_set(conds, &c, now);
            json_object_set_new(st, "completionTime", json_string(now));
            active = ready = 0;
        }
    }
    probe_times(conds);
    json_object_set_new(st, "conditions", conds);
    /* active, succeeded and failed are omitempty in batch/v1: 0 is absent (null deletes). */
    json_object_set_new(st, "active", active ? json_integer(active) : json_null());
    json_object_set_new(st, "ready", json_integer(ready));
    json_object_set_new(st, "succeeded", succeeded ? json_integer(succeeded) : json_null());
    json_object_set_new(st, "failed", failed ? json_integer(failed) : json_null());
    json_object_set_new(st, "terminating", json_integer(0));
    json_object_set_new(st, "uncountedTerminatedPods", json_object());
    if (indexed) {
        struct buf b;
        buf_init(&b, 1 << 20);
        indexes_str(done, comp, &b);
        json_object_set_new(st, "completedIndexes", json_string(b.data ? b.data : ""));
        buf_free(&b);
    }
    json_t *patch = json_pack("{s:o}", "status", st);
    char *path = simapi_path("batch", "v1", "jobs", ns, jx_name(job), "status");
    write_patch(s, path, patch, job);
    free(path);
    json_decref(patch);
    free(done);
    free(busy);
}

/* ---- kubeflow.org/v1 PyTorchJob ------------------------------------------- */

static json_t *pt_pod(const json_t *job, const char *rtype, const json_t *rspec, long index)
{
    char lower[32];
    snprintf(lower, sizeof(lower), "%s", rtype);
    for (char *c = lower; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    json_t *tmpl = jx_obj(rspec, "template");
    char *name = xasprintf("%s-%s-%ld", jx_name(job), lower, index);
    char idx[24];
    snprintf(idx, sizeof(idx), "%ld", index);
    json_t *labels = jx_obj(tmpl, "metadata.labels") ? jx_deep_copy(jx_obj(tmpl, "metadata.labels"))
                                                     : json_object();
    json_object_set_new(labels, "training.kubeflow.org/job-name", json_string(jx_name(job)));
    json_object_set_new(labels, "training.kubeflow.org/operator-name",
                        json_string("pytorchjob-controller"));
    json_object_set_new(labels, "training.kubeflow.org/replica-type", json_string(lower));
    json_object_set_new(labels, "training.kubeflow.org/replica-index", json_string(idx));
    if (!strcmp(lower, "master"))
        json_object_set_new(labels, "training.kubeflow.org/job-role", json_string("master"));
    json_t *pod = json_pack("{s:s,s:s,s:{s:s,s:o,s:o},s:O}", "apiVersion", "v1", "kind", "Pod",
                            "metadata", "name", name, "labels", labels, "ownerReferences",
                            owner_ref("kubeflow.org/v1", "PyTorchJob", job), "spec",
                            jx_obj(tmpl, "spec") ? jx_obj(tmpl, "spec") : json_object());
    free(name);
    return pod;
}

static void sync_ptjob(struct simjobs *s, const json_t *job, json_t *pods)
{
    if (jx_cond_is_true(job, "Succeeded") || jx_cond_is_true(job, "Failed") ||
        managed_elsewhere(job, "spec.runPolicy.managedBy", "kubeflow.org/training-operator"))
        return;
    const char *uid = jx_uid(job), *ns = jx_namespace(job);
    char now[40];
    now_str(now, sizeof(now));
    bool suspended = jx_bool(job, "spec.runPolicy.suspend", false);
    json_t *specs = jx_obj(job, "spec.pytorchReplicaSpecs");
    json_t *rstat = json_object();
    long total = 0, total_succeeded = 0, total_active = 0;
    const char *rtype;
    json_t *rspec;
    json_object_foreach(specs, rtype, rspec)
    {
        long replicas = (long)jx_int(rspec, "replicas", 1);
        if (replicas < 0)
            replicas = 0;
        if (replicas > 10000)
            replicas = 10000;
        long act = 0, suc = 0, fail = 0;
        char lower[32];
        snprintf(lower, sizeof(lower), "%s", rtype);
        for (char *c = lower; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        for (long r = 0; r < replicas; r++) {
            char *name = xasprintf("%s-%s-%ld", jx_name(job), lower, r);
            json_t *found = NULL;
            size_t i;
            json_t *pod;
            json_array_foreach(pods, i, pod)
            {
                if (owned_by(pod, uid) && !strcmp(jx_str(pod, "metadata.name", ""), name)) {
                    found = pod;
                    break;
                }
            }
            free(name);
            if (found) {
                const char *ph = jx_str(found, "status.phase", "Pending");
                if (!strcmp(ph, "Succeeded"))
                    suc++;
                else if (!strcmp(ph, "Failed"))
                    fail++;
                else if (jx_str(found, "metadata.deletionTimestamp", NULL))
                    ;
                else if (suspended)
                    delete_pod(s, found);
                else
                    act++;
            } else if (!suspended) {
                json_t *p = pt_pod(job, rtype, rspec, r);
                create_pod(s, ns, p, pods);
                json_decref(p);
                act++;
            }
        }
        total += replicas;
        total_succeeded += suc;
        total_active += act;
        json_object_set_new(rstat, rtype,
                            json_pack("{s:i,s:i,s:i}", "active", (json_int_t)act, "succeeded",
                                      (json_int_t)suc, "failed", (json_int_t)fail));
    }
    json_t *conds = conds_copy(job);
    json_t *st = json_pack("{s:o}", "replicaStatuses", rstat);
    char msg[512];
    snprintf(msg, sizeof(msg), "PyTorchJob %s is created.", jx_name(job));
    struct jx_cond c = {
        .type = "Created", .status = "True", .reason = "PyTorchJobCreated", .message = msg};
    jx_conds_set(conds, &c, now);
    if (suspended) {
        snprintf(msg, sizeof(msg), "PyTorchJob %s is suspended.", jx_name(job));
        c = (struct jx_cond){
            .type = "Suspended", .status = "True", .reason = "PyTorchJobSuspended", .message = msg};
        jx_conds_set(conds, &c, now);
        if (jx_conds_find(conds, "Running")) {
            c = (struct jx_cond){.type = "Running",
                                 .status = "False",
                                 .reason = "PyTorchJobSuspended",
                                 .message = msg};
            jx_conds_set(conds, &c, now);
        }
        json_object_set_new(st, "startTime", json_null());
    } else {
        if (jx_conds_find(conds, "Suspended")) {
            snprintf(msg, sizeof(msg), "PyTorchJob %s is resumed.", jx_name(job));
            c = (struct jx_cond){.type = "Suspended",
                                 .status = "False",
                                 .reason = "PyTorchJobResumed",
                                 .message = msg};
            jx_conds_set(conds, &c, now);
        }
        if (!jx_str(job, "status.startTime", NULL))
            json_object_set_new(st, "startTime", json_string(now));
        if (total > 0 && total_succeeded >= total) {
            snprintf(msg, sizeof(msg), "PyTorchJob %s is successfully completed.", jx_name(job));
            c = (struct jx_cond){.type = "Running",
                                 .status = "False",
                                 .reason = "PyTorchJobSucceeded",
                                 .message = msg};
            jx_conds_set(conds, &c, now);
            c = (struct jx_cond){.type = "Succeeded",
                                 .status = "True",
                                 .reason = "PyTorchJobSucceeded",
                                 .message = msg};
            jx_conds_set(conds, &c, now);
            json_object_set_new(st, "completionTime", json_string(now));
        } else if (total_active > 0) {
            snprintf(msg, sizeof(msg), "PyTorchJob %s is running.", jx_name(job));
            c = (struct jx_cond){
                .type = "Running", .status = "True", .reason = "PyTorchJobRunning", .message = msg};
            jx_conds_set(conds, &c, now);
        }
    }
    json_object_set_new(st, "conditions", conds);
    json_t *patch = json_pack("{s:o}", "status", st);
    char *path = simapi_path(PT_GROUP, "v1", "pytorchjobs", ns, jx_name(job), "status");
    write_patch(s, path, patch, job);
    free(path);
    json_decref(patch);
}

/* ---- the pass ------------------------------------------------------------------ */

int simjobs_sync(struct simjobs *s)
{
    s->writes = 0;
    s->next_due = 0;
    json_t *nodes = NULL, *pods = NULL, *jobs = NULL, *pts = NULL;
    if (simapi_list(s->hub, "/api/v1/nodes", NULL, &nodes) != 200 ||
        simapi_list(s->hub, "/api/v1/pods", NULL, &pods) != 200 ||
        simapi_list(s->hub, "/apis/batch/v1/jobs", NULL, &jobs) != 200)
        goto out;
    if (simapi_group_served(s->hub, PT_GROUP, "v1") &&
        simapi_list(s->hub, "/apis/kubeflow.org/v1/pytorchjobs", NULL, &pts) != 200)
        pts = NULL;
    json_t *sorted_nodes = sorted(nodes, cmp_name);
    json_decref(nodes);
    nodes = sorted_nodes;
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j) sync_job(s, j, pods);
    json_array_foreach(pts, i, j) sync_ptjob(s, j, pods);
    sync_pods(s, pods, nodes);
    /* forget start times of pods that are gone */
    const char *uid;
    json_t *v, *pod;
    void *tmp;
    json_object_foreach_safe(s->started, tmp, uid, v)
    {
        bool alive = false;
        json_array_foreach(pods, i, pod) if (!strcmp(jx_str(pod, "metadata.uid", ""), uid) &&
                                             !pod_terminal(pod)) alive = true;
        if (!alive)
            json_object_del(s->started, uid);
    }
out:
    json_decref(nodes);
    json_decref(pods);
    json_decref(jobs);
    json_decref(pts);
    return s->writes;
}

static void tick_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    struct simjobs *s = t->data;
    (void)loop;
    (void)revents;
    int64_t rv = hub_rv(s->hub);
    if (rv == s->last_rv && !(s->next_due && now_wall() >= s->next_due))
        return;
    s->last_rv = rv;
    simjobs_sync(s);
}

int simjobs_start(struct simjobs **out, const struct simjobs_opts *o, struct err *e)
{
    if (!o || !o->loop || !o->hub)
        return err_set(e, -EINVAL, "job runner: loop and hub are required");
    struct simjobs *s = xcalloc(1, sizeof(*s));
    s->loop = o->loop;
    s->hub = o->hub;
    s->lg = o->lg;
    s->def_dur = o->default_duration > 0 ? o->default_duration : 10;
    s->scale = o->time_scale > 0 ? o->time_scale : 1;
    s->interval = o->interval > 0 ? o->interval : 0.05;
    s->started = json_object();
    s->last_rv = -1;
    ev_timer_init(&s->tick, tick_cb, 0, s->interval);
    s->tick.data = s;
    ev_timer_start(s->loop, &s->tick);
    log_info(s->lg, "job runner started", "defaultDuration", LOG_DBL(s->def_dur), "timeScale",
             LOG_DBL(s->scale));
    *out = s;
    return 0;
}

void simjobs_stop(struct simjobs *s)
{
    if (!s)
        return;
    ev_timer_stop(s->loop, &s->tick);
    json_decref(s->started);
    free(s);
}
