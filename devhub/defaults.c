/* defaults: the apiserver's defaulting of built-in objects. See defaults.h. */
#include "devhub/defaults.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/quantity/quantity.h"
#include "pkg/util/xalloc.h"

#define UID_LABEL        "batch.kubernetes.io/controller-uid"
#define LEGACY_UID_LABEL "controller-uid"
#define NAME_LABEL       "batch.kubernetes.io/job-name"
#define LEGACY_NAME      "job-name"

static json_t *obj_at(json_t *parent, const char *key)
{
    json_t *o = json_object_get(parent, key);
    if (!json_is_object(o)) {
        o = json_object();
        json_object_set_new(parent, key, o);
    }
    return o;
}

static void set_default(json_t *o, const char *key, json_t *v)
{
    if (!json_object_get(o, key) || json_is_null(json_object_get(o, key)))
        json_object_set_new(o, key, v);
    else
        json_decref(v);
}

static void set_default_str(json_t *o, const char *key, const char *v)
{
    const char *cur = json_string_value(json_object_get(o, key));
    if (!cur || !*cur)
        json_object_set_new(o, key, json_string(v));
}

/* imagePullPolicy: Always when the image has no tag or the tag latest; a digest is IfNotPresent. */
static const char *pull_policy(const char *image)
{
    if (strchr(image, '@'))
        return "IfNotPresent";
    const char *slash = strrchr(image, '/');
    const char *colon = strrchr(slash ? slash : image, ':');
    if (!colon || !strcmp(colon + 1, "latest"))
        return "Always";
    return "IfNotPresent";
}

static void canon_resources(json_t *res);

static void container_defaults(json_t *c)
{
    if (!json_is_object(c))
        return;
    canon_resources(json_object_get(c, "resources"));
    const char *image = json_string_value(json_object_get(c, "image"));
    if (image && *image)
        set_default_str(c, "imagePullPolicy", pull_policy(image));
    set_default_str(c, "terminationMessagePath", "/dev/termination-log");
    set_default_str(c, "terminationMessagePolicy", "File");
    obj_at(c, "resources");
    json_t *ports = json_object_get(c, "ports");
    for (size_t i = 0; i < json_array_size(ports); i++)
        if (json_is_object(json_array_get(ports, i)))
            set_default_str(json_array_get(ports, i), "protocol", "TCP");
}

/* Quantities read back in canonical form ("1000m" -> "1", 0.5 -> "500m"). */
static void canon_map(json_t *m)
{
    const char *k;
    json_t *v;
    json_object_foreach(m, k, v)
    {
        struct qty q;
        struct err e = {0};
        if (!qty_parse_json(v, &q, &e))
            json_object_set_new(m, k, qty_to_json(&q));
    }
}

static void canon_resources(json_t *res)
{
    canon_map(json_object_get(res, "requests"));
    canon_map(json_object_get(res, "limits"));
}

static void pod_spec_defaults(json_t *spec)
{
    if (!json_is_object(spec))
        return;
    canon_resources(json_object_get(spec, "resources"));
    canon_map(json_object_get(spec, "overhead"));
    set_default_str(spec, "dnsPolicy", "ClusterFirst");
    set_default_str(spec, "restartPolicy", "Always");
    obj_at(spec, "securityContext");
    set_default(spec, "terminationGracePeriodSeconds", json_integer(30));
    set_default_str(spec, "schedulerName", "default-scheduler");
    static const char *const lists[] = {"initContainers", "containers", "ephemeralContainers"};
    for (size_t l = 0; l < 3; l++) {
        json_t *cs = json_object_get(spec, lists[l]);
        for (size_t i = 0; i < json_array_size(cs); i++)
            container_defaults(json_array_get(cs, i));
    }
}

/* Requests default to the limits for each resource without a request (SetDefaults_Pod). */
static void requests_from_limits(json_t *spec)
{
    static const char *const lists[] = {"initContainers", "containers"};
    for (size_t l = 0; l < 2; l++) {
        json_t *cs = json_object_get(spec, lists[l]);
        for (size_t i = 0; i < json_array_size(cs); i++) {
            json_t *res = json_object_get(json_array_get(cs, i), "resources");
            json_t *lim = json_object_get(res, "limits");
            if (!json_is_object(lim) || json_object_size(lim) == 0)
                continue;
            json_t *req = obj_at(res, "requests");
            const char *k;
            json_t *v;
            json_object_foreach(lim, k, v) set_default(req, k, json_incref(v));
        }
    }
}

static bool qty_equal(const json_t *a, const json_t *b)
{
    struct qty qa, qb;
    struct err e = {0};
    if (qty_parse_json(a, &qa, &e) || qty_parse_json(b, &qb, &e))
        return false;
    return qty_cmp(&qa, &qb) == 0;
}

const char *dflt_qos_class(const json_t *spec)
{
    /* Only cpu and memory count (the apiserver's supported QoS resources). */
    static const char *const res[] = {"cpu", "memory"};
    bool any = false, guaranteed = true;
    static const char *const lists[] = {"initContainers", "containers"};
    for (size_t l = 0; l < 2; l++) {
        json_t *cs = json_object_get(spec, lists[l]);
        for (size_t i = 0; i < json_array_size(cs); i++) {
            json_t *r = json_object_get(json_array_get(cs, i), "resources");
            json_t *req = json_object_get(r, "requests"), *lim = json_object_get(r, "limits");
            for (size_t k = 0; k < 2; k++) {
                json_t *rq = json_object_get(req, res[k]), *lm = json_object_get(lim, res[k]);
                if (rq || lm)
                    any = true;
                if (!lm || (rq && !qty_equal(rq, lm)))
                    guaranteed = false;
            }
        }
    }
    if (!any)
        return "BestEffort";
    return guaranteed ? "Guaranteed" : "Burstable";
}

static void pod_defaults(json_t *pod)
{
    json_t *spec = obj_at(pod, "spec");
    requests_from_limits(spec);
    pod_spec_defaults(spec);
    set_default(spec, "enableServiceLinks", json_true());
    /* Admission plugins: Priority, ServiceAccount, DefaultTolerationSeconds. */
    if (!json_object_get(spec, "priorityClassName"))
        set_default(spec, "priority", json_integer(0));
    set_default_str(spec, "preemptionPolicy", "PreemptLowerPriority");
    set_default_str(spec, "serviceAccountName", "default");
    json_object_set(spec, "serviceAccount", json_object_get(spec, "serviceAccountName"));
    json_t *tol = json_object_get(spec, "tolerations");
    if (!json_is_array(tol)) {
        tol = json_array();
        json_object_set_new(spec, "tolerations", tol);
    }
    static const char *const taints[] = {"node.kubernetes.io/not-ready",
                                         "node.kubernetes.io/unreachable"};
    for (size_t t = 0; t < 2; t++) {
        bool have = false;
        for (size_t i = 0; i < json_array_size(tol); i++) {
            const json_t *x = json_array_get(tol, i);
            const char *key = json_string_value(json_object_get(x, "key"));
            const char *eff = json_string_value(json_object_get(x, "effect"));
            if ((key && !strcmp(key, taints[t]) && (!eff || !*eff || !strcmp(eff, "NoExecute"))) ||
                (!key && json_object_get(x, "operator") &&
                 !strcmp(json_string_value(json_object_get(x, "operator")), "Exists")))
                have = true;
        }
        if (!have)
            json_array_append_new(tol, json_pack("{s:s, s:s, s:s, s:i}", "key", taints[t],
                                                 "operator", "Exists", "effect", "NoExecute",
                                                 "tolerationSeconds", 300));
    }
    json_t *st = obj_at(pod, "status");
    set_default_str(st, "phase", "Pending");
    json_object_set_new(st, "qosClass", json_string(dflt_qos_class(spec)));
}

/* SetDefaults_Job, without the selector. */
static void job_defaults(json_t *job)
{
    json_t *spec = obj_at(job, "spec");
    json_t *par = json_object_get(spec, "parallelism");
    json_t *comp = json_object_get(spec, "completions");
    if ((!par || json_is_null(par)) && (!comp || json_is_null(comp)))
        json_object_set_new(spec, "completions", json_integer(1));
    set_default(spec, "parallelism", json_integer(1));
    json_t *bpi = json_object_get(spec, "backoffLimitPerIndex");
    set_default(spec, "backoffLimit", json_integer(bpi && !json_is_null(bpi) ? 2147483647 : 6));
    set_default_str(spec, "completionMode", "NonIndexed");
    set_default(spec, "suspend", json_false());
    json_t *pfp = json_object_get(spec, "podFailurePolicy");
    set_default_str(spec, "podReplacementPolicy",
                    json_is_object(pfp) ? "Failed" : "TerminatingOrFailed");
    json_t *rules = json_object_get(pfp, "rules");
    for (size_t i = 0; i < json_array_size(rules); i++) {
        json_t *conds = json_object_get(json_array_get(rules, i), "onPodConditions");
        for (size_t j = 0; j < json_array_size(conds); j++)
            if (json_is_object(json_array_get(conds, j)))
                set_default_str(json_array_get(conds, j), "status", "True");
    }
    pod_spec_defaults(jx_obj(job, "spec.template.spec"));
}

/* The Job's labels are its template's when it has none (SetDefaults_Job, run again when read). */
static void job_labels_from_template(json_t *job)
{
    json_t *md = obj_at(job, "metadata");
    json_t *labels = json_object_get(md, "labels");
    json_t *tl = jx_obj(job, "spec.template.metadata.labels");
    if (tl && (!json_is_object(labels) || json_object_size(labels) == 0))
        json_object_set_new(md, "labels", jx_deep_copy(tl));
}

static int job_fail(struct valid_result *r, const json_t *job, const char *field,
                    const char *message)
{
    return valid_fail_field(r, "batch", "Job", jx_name(job), "FieldValueInvalid", field, message);
}

/* generateSelector + ValidateGeneratedSelector of the Job strategy. */
static int job_selector(json_t *job, struct valid_result *r)
{
    const char *uid = jx_uid(job), *name = jx_name(job);
    json_t *tmd = obj_at(obj_at(obj_at(job, "spec"), "template"), "metadata");
    json_t *tl = obj_at(tmd, "labels");
    const char *lab[4][2] = {
        {LEGACY_NAME, name}, {NAME_LABEL, name}, {LEGACY_UID_LABEL, uid}, {UID_LABEL, uid}};
    for (size_t i = 0; i < 4; i++)
        set_default_str(tl, lab[i][0], lab[i][1]);
    json_t *spec = json_object_get(job, "spec");
    json_t *sel = json_object_get(spec, "selector");
    bool user_selector = json_is_object(sel);
    if (!user_selector) {
        sel = json_object();
        json_object_set_new(spec, "selector", sel);
    }
    json_t *ml = obj_at(sel, "matchLabels");
    set_default_str(ml, UID_LABEL, uid);
    /* What the user wrote must be what would have been generated. */
    char msg[320];
    for (size_t i = 2; i < 4; i++) {
        const char *v = json_string_value(json_object_get(tl, lab[i][0]));
        if (!v || strcmp(v, uid)) {
            char field[160];
            snprintf(field, sizeof field, "spec.template.metadata.labels[%s]", lab[i][0]);
            snprintf(msg, sizeof msg, "Invalid value: \"%.64s\": must be '%s'", v ? v : "", uid);
            return job_fail(r, job, field, msg);
        }
    }
    if (json_object_size(ml) != 1 || json_array_size(json_object_get(sel, "matchExpressions")) ||
        !json_is_string(json_object_get(ml, UID_LABEL)) ||
        strcmp(json_string_value(json_object_get(ml, UID_LABEL)), uid)) {
        char *dump = json_dumps(sel, JSON_COMPACT | JSON_SORT_KEYS);
        snprintf(msg, sizeof msg, "Invalid value: %.200s: `selector` not auto-generated",
                 dump ? dump : "");
        free(dump);
        return job_fail(r, job, "spec.selector", msg);
    }
    return 0;
}

/* SetDefaults_Deployment (apps/v1). */
static void deployment_defaults(json_t *d)
{
    json_t *spec = obj_at(d, "spec");
    set_default(spec, "replicas", json_integer(1));
    json_t *st = obj_at(spec, "strategy");
    set_default_str(st, "type", "RollingUpdate");
    if (!strcmp(jx_str(st, "type", ""), "RollingUpdate")) {
        json_t *ru = obj_at(st, "rollingUpdate");
        set_default(ru, "maxUnavailable", json_string("25%"));
        set_default(ru, "maxSurge", json_string("25%"));
    }
    set_default(spec, "revisionHistoryLimit", json_integer(10));
    set_default(spec, "progressDeadlineSeconds", json_integer(600));
    pod_spec_defaults(jx_obj(d, "spec.template.spec"));
}

static bool is(const char *group, const char *kind, const char *g, const char *k)
{
    return !strcmp(group ? group : "", g) && !strcmp(kind ? kind : "", k);
}

static void common_defaults(const char *group, const char *kind, json_t *obj)
{
    if (is(group, kind, "", "Pod"))
        pod_defaults(obj);
    else if (is(group, kind, "apps", "Deployment"))
        deployment_defaults(obj);
    if (is(group, kind, "apps", "Deployment") && !json_object_get(obj, "status"))
        json_object_set_new(obj, "status", json_object());
    else if (is(group, kind, "", "Namespace"))
        set_default(obj_at(obj, "spec"), "finalizers", json_pack("[s]", "kubernetes"));
    else if (is(group, kind, "", "Secret"))
        set_default_str(obj, "type", "Opaque");
    else if (is(group, kind, "", "Node")) {
        canon_map(jx_obj(obj, "status.capacity"));
        canon_map(jx_obj(obj, "status.allocatable"));
    }
}

void dflt_meta(json_t *obj)
{
    /* ObjectMeta's maps and lists are omitempty in the apiserver's encoding. */
    static const char *const keys[] = {"labels", "annotations", "finalizers", "ownerReferences",
                                       "managedFields"};
    json_t *md = json_object_get(obj, "metadata");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(md, keys[i]);
        if ((json_is_object(v) && json_object_size(v) == 0) ||
            (json_is_array(v) && json_array_size(v) == 0) || json_is_null(v))
            json_object_del(md, keys[i]);
    }
}

int dflt_create(const char *group, const char *kind, json_t *obj, struct valid_result *r)
{
    if (!json_is_object(obj))
        return 0;
    if (!is(group, kind, "batch", "Job")) {
        common_defaults(group, kind, obj);
        return 0;
    }
    job_defaults(obj);
    if (!jx_bool(obj, "spec.manualSelector", false)) {
        int rc = job_selector(obj, r);
        if (rc)
            return rc;
        /* v1.34 stores the generated-selector case as manualSelector: false */
        json_t *spec = json_object_get(obj, "spec");
        if (json_is_object(spec) && !json_object_get(spec, "manualSelector"))
            json_object_set_new(spec, "manualSelector", json_false());
    }
    job_labels_from_template(obj);
    /* JobStatus is a struct: a new Job reads back with status {} until its controller writes. */
    obj_at(obj, "status");
    return 0;
}

int dflt_update(const char *group, const char *kind, json_t *obj, struct valid_result *r)
{
    if (!json_is_object(obj))
        return 0;
    if (!is(group, kind, "batch", "Job")) {
        if (!is(group, kind, "", "Pod"))
            common_defaults(group, kind, obj);
        return 0;
    }
    job_defaults(obj);
    if (!jx_obj(obj, "spec.selector"))
        return valid_fail_field(r, "batch", "Job", jx_name(obj), "FieldValueRequired",
                                "spec.selector", "Required value");
    job_labels_from_template(obj);
    return 0;
}
