/* wl: the pure reconcile decision of the workload controller (see wl.h). */
#include "controllers/workload/wl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/excl.h"
#include "controllers/workload/xf.h"
#include "pkg/json/jsonx.h"
#include "pkg/reasons/reasons.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/utf8.h"
#include "pkg/util/xalloc.h"

/* ---- action list ------------------------------------------------------------ */

void wl_actions_init(struct wl_actions *a)
{
    *a = (struct wl_actions){0};
}

void wl_actions_free(struct wl_actions *a)
{
    for (size_t i = 0; i < a->n; i++) {
        struct wl_action *x = &a->v[i];
        json_decref(x->patch);
        json_decref(x->apply);
        json_decref(x->object);
        free(x->cluster);
        free(x->ns);
        free(x->name);
        free(x->uid);
        free(x->reason);
        free(x->message);
    }
    free(a->v);
    free(a->outcome.cluster);
    free(a->outcome.why);
    free(a->outcome.told);
    free(a->outcome.undone_for);
    *a = (struct wl_actions){0};
}

/* The outcome is `k` on `cluster` (copied, may be NULL). */
static void outcome(struct wl_actions *a, enum wl_outcome_kind k, const char *cluster)
{
    a->outcome.kind = k;
    free(a->outcome.cluster);
    a->outcome.cluster = cluster ? xstrdup(cluster) : NULL;
}

/* The job is told why it is not placed: Event `reason` with `message` (copied). */
static void outcome_told(struct wl_actions *a, const char *reason, const char *message)
{
    a->outcome.told_reason = reason;
    free(a->outcome.told);
    a->outcome.told = xstrdup(message);
}

static struct wl_action *push(struct wl_actions *a, enum wl_act_type t)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 8;
        a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
    }
    struct wl_action *x = &a->v[a->n++];
    *x = (struct wl_action){.type = t};
    return x;
}

static void act_event(struct wl_actions *a, enum wl_target tgt, const char *type,
                      const char *reason, char *message /* consumed */)
{
    struct wl_action *x = push(a, WL_ACT_EVENT);
    x->target = tgt;
    x->event_type = type;
    x->reason = xstrdup(reason);
    x->message = message;
}

static void act_requeue(struct wl_actions *a, int64_t ms)
{
    push(a, WL_ACT_REQUEUE)->after_ms = ms < 0 ? 0 : ms;
}

static void act_delete_copy(struct wl_actions *a, const char *cluster, const json_t *obj)
{
    struct wl_action *x = push(a, WL_ACT_DELETE_COPY);
    x->cluster = xstrdup(cluster);
    x->ns = jx_namespace(obj) ? xstrdup(jx_namespace(obj)) : NULL;
    x->name = xstrdup(jx_name(obj) ? jx_name(obj) : "");
    x->uid = jx_uid(obj) ? xstrdup(jx_uid(obj)) : NULL;
}

char *wl_actions_describe(const struct wl_actions *a)
{
    struct buf b;
    buf_init(&b, (size_t)64 << 20);
    for (size_t i = 0; i < a->n; i++) {
        const struct wl_action *x = &a->v[i];
        char *j = NULL;
        switch (x->type) {
        case WL_ACT_PATCH_JOB:
            j = jx_dumps(x->patch);
            buf_printf(&b, "patch-job %s\n", j);
            break;
        case WL_ACT_PATCH_JOB_STATUS:
            j = jx_dumps(x->patch);
            buf_printf(&b, "patch-job-status %s\n", j);
            break;
        case WL_ACT_PATCH_WL_STATUS:
            j = jx_dumps(x->patch);
            buf_printf(&b, "wl-status %s\n", j);
            break;
        case WL_ACT_EVENT:
            buf_printf(&b, "%sevent %s %s %s: %s\n", x->after_job ? "then " : "",
                       x->target == WL_TGT_JOB ? "job" : "workload", x->event_type, x->reason,
                       x->message);
            break;
        case WL_ACT_CREATE_COPY:
            buf_printf(&b, "%screate-copy %s %s/%s\n", x->after_job ? "then " : "", x->cluster,
                       jx_namespace(x->object) ? jx_namespace(x->object) : "",
                       jx_name(x->object) ? jx_name(x->object) : "");
            break;
        case WL_ACT_DELETE_COPY:
            buf_printf(&b, "delete-copy %s %s/%s\n", x->cluster, x->ns ? x->ns : "", x->name);
            break;
        case WL_ACT_RESERVE:
            buf_printf(&b, "reserve %s\n", x->cluster);
            break;
        case WL_ACT_UNRESERVE:
            buf_puts(&b, "unreserve\n");
            break;
        case WL_ACT_REQUEUE:
            buf_printf(&b, "requeue %lld\n", (long long)x->after_ms);
            break;
        }
        free(j);
    }
    char *s = buf_detach(&b);
    buf_free(&b);
    return s;
}

char *wl_outcome_describe(const struct wl_outcome *o)
{
    static const char *const names[] = {
        [WL_OUT_NONE] = "none",
        [WL_OUT_PLACED] = "placed",
        [WL_OUT_DISPATCHED] = "dispatched",
        [WL_OUT_FINISHED] = "finished",
        [WL_OUT_EVICTED] = "evicted",
        [WL_OUT_WORKER_LOST] = "worker-lost",
        [WL_OUT_REJECTED] = "rejected",
        [WL_OUT_WAITING] = "waiting",
        [WL_OUT_UNSCHEDULABLE] = "unschedulable",
    };
    const char *name = (size_t)o->kind < sizeof names / sizeof names[0] ? names[o->kind] : "?";
    return xasprintf("%s%s%s%s%s%s", name, o->cluster ? " " : "", o->cluster ? o->cluster : "",
                     o->failed ? " failed" : "", o->told_reason ? " told " : "",
                     o->told_reason ? o->told_reason : "");
}

/* ---- helpers ------------------------------------------------------------------ */

char *wl_placement_token(const json_t *workload)
{
    json_t *c = jx_cond_find(workload, "QuotaReserved");
    const char *st = jx_str(c, "status", NULL);
    if (!st || strcmp(st, "True") != 0)
        return NULL;
    return xasprintf("%s/%s", jx_uid(workload) ? jx_uid(workload) : "",
                     jx_str(c, "lastTransitionTime", ""));
}

json_t *wl_podset_labels(const json_t *workload, const json_t *flavor_labels)
{
    json_t *out = json_object();
    json_t *psa = jx_arr(workload, "status.admission.podSetAssignments");
    for (size_t i = 0; psa && i < json_array_size(psa); i++) {
        json_t *a = json_array_get(psa, i);
        const char *name = jx_str(a, "name", NULL);
        json_t *fl = jx_obj(a, "flavors");
        if (!name || !fl)
            continue;
        json_t *labels = json_object();
        const char *res;
        json_t *flv;
        json_object_foreach(fl, res, flv)
        {
            if (!json_is_string(flv))
                continue;
            json_t *nl = json_object_get(flavor_labels, json_string_value(flv));
            if (json_is_object(nl))
                json_object_update_missing(labels, nl);
        }
        json_object_set_new(out, name, labels);
    }
    return out;
}

static bool wl_active(const json_t *wl)
{
    return jx_bool(wl, "spec.active", true);
}

/* Kueue evicts in two steps: Evicted=True first, then (once the job
 * reconciler sees the hub job inactive) QuotaReserved=False. A reservation
 * still held under Evicted=True is being given up: stop, do not run. */
static bool wl_evicting(const json_t *wl)
{
    return jx_cond_is_true(wl, "Evicted");
}

static const char *check_state(const json_t *entry)
{
    return jx_str(entry, "state", "Pending");
}

/* Workload status builder: our check entry and ClusterAssigned, one write. */
struct wlst {
    const struct wl_snapshot *s;
    json_t *checks; /* whole list copy, when changed */
    json_t *conds;  /* whole list copy, when changed */
    json_t *entry;  /* our entry in checks (borrowed from checks) */
    json_t *cond;   /* ClusterAssigned in conds (borrowed) */
};

/* The check message as Kueue relays it: its UpdatedAdmissionCheck Event on the job takes the
 * message as a format string ("50%!o(MISSING)f" on the real stack), so a '%' (a user's
 * cluster selector, a server's message) is written as U+FF05 FULLWIDTH PERCENT SIGN. Cut to
 * WL_CHECK_MESSAGE_MAX bytes (the CRD's maxLength) on a character boundary. New string. */
static char *check_text(const char *m)
{
    struct buf b;
    buf_init(&b, WL_CHECK_MESSAGE_MAX);
    const unsigned char *p = (const unsigned char *)m, *end = p + strlen(m);
    while (p < end) {
        if (*p < 0x80 && *p != '%') { /* a run of ASCII: whole characters, cut anywhere */
            const unsigned char *q = p;
            while (q < end && *q < 0x80 && *q != '%')
                q++;
            size_t room = b.max - b.len, n = (size_t)(q - p);
            if (buf_append(&b, p, n < room ? n : room) < 0 || n > room)
                break;
            p = q;
            continue;
        }
        bool pct = *p == '%';
        size_t n = pct ? 1 : utf8_len(p, end);
        if (n == 0)
            n = 1; /* not UTF-8: kept as it was (jansson refuses it as before) */
        if ((pct ? buf_append(&b, "\xef\xbc\x85", 3) : buf_append(&b, p, n)) < 0)
            break; /* at the cap, whole characters only */
        p += n;
    }
    return buf_detach(&b);
}

static void wlst_check(struct wlst *w, const char *state, const char *message)
{
    const json_t *cur_list = jx_arr(w->s->workload, "status.admissionChecks");
    const json_t *cur = jx_find_by(cur_list, "name", w->s->check_name);
    char *msg = check_text(message ? message : "");
    const char *cur_msg = jx_str(cur, "message", "");
    if (cur && strcmp(check_state(cur), state) == 0 && strcmp(cur_msg, msg) == 0) {
        free(msg);
        return;
    }
    if (!w->checks)
        w->checks = jx_deep_copy(cur_list);
    json_t *e = jx_find_by(w->checks, "name", w->s->check_name);
    bool changed_state = !cur || strcmp(check_state(cur), state) != 0;
    json_object_set_new(e, "state", json_string(state));
    json_object_set_new(e, "message", json_string(msg));
    if (changed_state || !json_object_get(e, "lastTransitionTime"))
        json_object_set_new(e, "lastTransitionTime", json_string(w->s->now ? w->s->now : ""));
    w->entry = e;
    free(msg);
}

static void wlst_assigned(struct wlst *w, bool assigned, const char *reason, const char *message)
{
    const json_t *cur = jx_cond_find(w->s->workload, WL_COND_CLUSTER_ASSIGNED);
    if (!cur && !assigned)
        return;
    if (!w->conds) {
        json_t *c = jx_arr(w->s->workload, "status.conditions");
        w->conds = c ? jx_deep_copy(c) : json_array();
    }
    struct jx_cond c = {.type = WL_COND_CLUSTER_ASSIGNED,
                        .status = assigned ? "True" : "False",
                        .reason = reason,
                        .message = message,
                        .observed_generation = jx_generation(w->s->workload)};
    if (jx_conds_set(w->conds, &c, w->s->now) > 0) {
        w->cond = jx_conds_find(w->conds, WL_COND_CLUSTER_ASSIGNED);
    } else if (!w->cond) {
        json_decref(w->conds);
        w->conds = NULL;
    }
}

static void wlst_flush(struct wlst *w, struct wl_actions *a)
{
    if (!w->entry && !w->cond) {
        json_decref(w->checks);
        json_decref(w->conds);
        return;
    }
    const json_t *wl = w->s->workload;
    json_t *status = json_object();
    json_t *astatus = json_object();
    if (w->entry) {
        json_object_set_new(astatus, "admissionChecks", json_pack("[O]", w->entry));
        json_object_set_new(status, "admissionChecks", w->checks);
    } else {
        json_decref(w->checks);
    }
    if (w->cond) {
        json_object_set_new(astatus, "conditions", json_pack("[O]", w->cond));
        json_object_set_new(status, "conditions", w->conds);
    } else {
        json_decref(w->conds);
    }
    /* An apply document must hold every field the manager keeps owning (an
     * omitted one would be removed): our entry and ClusterAssigned as they
     * are when this write does not change them. */
    const json_t *cur_entry =
        jx_find_by(jx_arr(wl, "status.admissionChecks"), "name", w->s->check_name);
    if (!w->entry && cur_entry)
        json_object_set_new(astatus, "admissionChecks", json_pack("[O]", cur_entry));
    const json_t *cur_cond = jx_cond_find(wl, WL_COND_CLUSTER_ASSIGNED);
    if (!w->cond && cur_cond)
        json_object_set_new(astatus, "conditions", json_pack("[O]", cur_cond));
    struct wl_action *x = push(a, WL_ACT_PATCH_WL_STATUS);
    json_t *meta = json_object();
    if (jx_resource_version(wl))
        json_object_set_new(meta, "resourceVersion", json_string(jx_resource_version(wl)));
    x->patch = json_pack("{s:o, s:o}", "metadata", meta, "status", status);
    json_t *ameta = json_pack("{s:s}", "name", jx_name(wl) ? jx_name(wl) : "");
    if (jx_namespace(wl))
        json_object_set_new(ameta, "namespace", json_string(jx_namespace(wl)));
    x->apply = json_pack("{s:s, s:s, s:o, s:o}", "apiVersion",
                         jx_api_version(wl) ? jx_api_version(wl) : "kueue.x-k8s.io/v1beta1", "kind",
                         "Workload", "metadata", ameta, "status", astatus);
    w->checks = w->conds = NULL;
}

/* A job patch from `from` to `to` (metadata/spec), guarded by resourceVersion. */
static void act_patch_job(struct wl_actions *a, const json_t *from, const json_t *to)
{
    json_t *d = jx_merge_diff(from, to);
    if (json_object_size(d) == 0) {
        json_decref(d);
        return;
    }
    const char *rv = jx_resource_version(from);
    if (rv)
        jx_setv_new(d, json_string(rv), "metadata", "resourceVersion");
    push(a, WL_ACT_PATCH_JOB)->patch = d;
}

static void delete_all_copies(const struct wl_snapshot *s, struct wl_actions *a, const char *keep)
{
    if (!s->opts.direct)
        return;
    for (size_t i = 0; i < s->n_copies; i++) {
        if (!s->copies[i].obj || !s->copies[i].cluster)
            continue;
        if (keep && strcmp(keep, s->copies[i].cluster) == 0)
            continue;
        act_delete_copy(a, s->copies[i].cluster, s->copies[i].obj);
    }
}

static const json_t *copy_on(const struct wl_snapshot *s, const char *cluster)
{
    for (size_t i = 0; i < s->n_copies; i++) {
        if (s->copies[i].obj && s->copies[i].cluster && strcmp(s->copies[i].cluster, cluster) == 0)
            return s->copies[i].obj;
    }
    return NULL;
}

bool wl_check_pending(const json_t *workload, const char *check_name)
{
    const json_t *entry =
        check_name ? jx_find_by(jx_arr(workload, "status.admissionChecks"), "name", check_name)
                   : NULL;
    return entry && strcmp(check_state(entry), "Pending") == 0;
}

bool wl_wants_placement(const struct wl_snapshot *s, const char **pinned)
{
    if (pinned)
        *pinned = NULL;
    if (!s->workload || !s->job || !wl_check_pending(s->workload, s->check_name))
        return false;
    if (jx_cond_is_true(s->workload, "Finished") || !wl_active(s->workload) ||
        wl_evicting(s->workload))
        return false;
    char *tok = wl_placement_token(s->workload);
    if (!tok)
        return false;
    const char *pf = jx_annotation(s->job, XF_ANN_PLACED_FOR);
    bool want = !xf_placed_cluster(s->job) || !pf || strcmp(pf, tok) != 0;
    free(tok);
    if (want && pinned)
        *pinned = xf_pinned_cluster(s->job);
    return want;
}

bool wl_wants_explain(const struct wl_snapshot *s)
{
    if (!s || !s->workload || !s->job || !s->check_name)
        return false;
    const json_t *entry =
        jx_find_by(jx_arr(s->workload, "status.admissionChecks"), "name", s->check_name);
    if (!entry || strcmp(check_state(entry), "Rejected") == 0 ||
        jx_cond_is_true(s->workload, "Finished") || !wl_active(s->workload) ||
        wl_evicting(s->workload))
        return false;
    char *tok = wl_placement_token(s->workload);
    free(tok);
    return tok == NULL;
}

char *wl_kueue_reason(const json_t *workload)
{
    if (!workload)
        return NULL;
    if (!wl_active(workload))
        return xstrdup("deactivated (spec.active=false)");
    const json_t *c = jx_cond_find(workload, "QuotaReserved");
    if (!c || strcmp(jx_str(c, "status", ""), "False") != 0)
        return NULL;
    const char *r = jx_str(c, "reason", ""), *m = jx_str(c, "message", "");
    if (!*r && !*m)
        return NULL;
    return xasprintf("%s%s%s", r, *r && *m ? ": " : "", m);
}

char *wl_not_admitted_message(const char *fit, bool never, const char *why)
{
    const char *f = fit ? fit : "waiting for a quota reservation";
    const char *k = why ? "Kueue has not admitted it: " : "";
    const char *w = why ? why : "no quota reserved yet";
    return never ? xasprintf("%s; %s%s", f, k, w) : xasprintf("%s%s; %s", k, w, f);
}

bool wl_rejected_by_check(const json_t *workload, const char *check_name)
{
    if (!workload || !check_name || wl_active(workload))
        return false;
    const json_t *entry =
        jx_find_by(jx_arr(workload, "status.admissionChecks"), "name", check_name);
    if (entry && strcmp(jx_str(entry, "state", ""), "Rejected") == 0)
        return true;
    const json_t *ev = jx_cond_find(workload, "Evicted");
    return ev && strcmp(jx_str(ev, "reason", ""), "DeactivatedDueToAdmissionCheck") == 0 &&
           strstr(jx_str(ev, "message", ""), check_name) != NULL;
}

char *wl_rejected_message(const char *fit)
{
    return xasprintf("kueue-ks rejected it: no worker cluster can hold it, even empty%s%s; Kueue "
                     "deactivated its Workload (spec.active=false); %s",
                     fit ? ": " : "", fit ? fit : "", WL_NEVER_FITS_ADVICE);
}

static bool starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* The kind of verdict a fit message (explain.c's) starts with: 'N' never fits, 'U' cannot be
 * judged (no cluster with fresh metrics), 'A' any other (fits now, or when capacity frees). */
static char fit_kind(const char *fit)
{
    return starts_with(fit, "never fits")                     ? 'N'
           : starts_with(fit, "no cluster fits among those ") ? 'U'
                                                              : 'A';
}

bool wl_not_admitted_same(const char *prev, const char *why, bool never, bool unknown)
{
    if (!prev || !*prev)
        return false;
    /* the message around an empty fit: "; Kueue has not admitted it: <why>" (never) or
     * "Kueue has not admitted it: <why>; " */
    char *frame = wl_not_admitted_message("", never, why);
    size_t pl = strlen(prev), fl = strlen(frame);
    bool same;
    if (never)
        same = pl >= fl && strcmp(prev + pl - fl, frame) == 0 && fit_kind(prev) == 'N';
    else
        same = starts_with(prev, frame) && fit_kind(prev + fl) == (unknown ? 'U' : 'A');
    free(frame);
    return same;
}

size_t wl_events_once(struct wl_actions *a, json_t *told)
{
    size_t kept = 0, dropped = 0;
    for (size_t i = 0; i < a->n; i++) {
        struct wl_action *x = &a->v[i];
        bool once = x->type == WL_ACT_EVENT && x->reason && x->message &&
                    (strcmp(x->reason, REASON_NO_CLUSTER_FITS) == 0 ||
                     strcmp(x->reason, REASON_NOT_ADMITTED) == 0);
        if (once) {
            char *k = xasprintf("%s/%s", x->target == WL_TGT_JOB ? "job" : "workload", x->reason);
            const char *last = jx_str(told, k, NULL);
            bool repeat = last && strcmp(last, x->message) == 0;
            if (!repeat)
                json_object_set_new(told, k, json_string_nocheck(x->message));
            free(k);
            if (repeat) {
                free(x->reason);
                free(x->message);
                dropped++;
                continue;
            }
        }
        a->v[kept++] = *x;
    }
    a->n = kept;
    return dropped;
}

/* ---- the states ---------------------------------------------------------------- */

/* How long a new Workload's "waiting" message waits yet (wl_opts.quiet_new_ms): > 0 only while
 * its check is Pending without a message and it is younger than that (its creationTimestamp,
 * to the second); 0 when it is due or the age is unknown. */
static int64_t quiet_left(const struct wl_snapshot *s, const char *state, const char *msg)
{
    struct timespec ct;
    const char *created = jx_str(s->workload, "metadata.creationTimestamp", NULL);
    if (s->opts.quiet_new_ms <= 0 || strcmp(state, "Pending") != 0 || *msg || !created ||
        clock_parse_rfc3339(created, &ct) < 0)
        return 0;
    int64_t age = s->now_ms - (int64_t)ct.tv_sec * 1000;
    return age >= 0 && age < s->opts.quiet_new_ms ? s->opts.quiet_new_ms - age : 0;
}

/* A placement on `was` undone (state 3): Event Evicted and the outcome, once per placement (its
 * placed-for): a pass that finds the placement it undid still on the job (the patch lost a race,
 * or the store lags) undoes it again without telling it again (wl_snapshot.evicted_told). */
static void tell_evicted(const struct wl_snapshot *s, bool evicting, const char *was,
                         struct wl_actions *a)
{
    const char *undone_for = jx_annotation(s->job, XF_ANN_PLACED_FOR);
    if (s->evicted_told && undone_for && strcmp(s->evicted_told, undone_for) == 0)
        return;
    const char *why = !wl_active(s->workload) ? "deactivated"
                      : evicting              ? "is being evicted"
                                              : "lost its quota reservation";
    char *msg =
        xasprintf("Workload %s %s; placement on cluster %s undone", jx_name(s->workload), why, was);
    outcome(a, WL_OUT_EVICTED, was);
    a->outcome.why = xstrdup(msg);
    a->outcome.undone_for = undone_for ? xstrdup(undone_for) : NULL;
    act_event(a, WL_TGT_JOB, "Normal", REASON_EVICTED, msg);
}

static void st_unreserved(const struct wl_snapshot *s, struct wlst *w, const json_t *entry,
                          bool evicting, struct wl_actions *a)
{
    json_t *work = jx_deep_copy(s->job);
    const char *was = xf_placed_cluster(s->job);
    char *was_c = was ? xstrdup(was) : NULL;
    xf_unplace(s->kind, work);
    /* the progress of the undone run is no longer true */
    json_t *ann = jx_getv(work, "metadata", "annotations");
    if (json_is_object(ann) && json_object_get(ann, XF_ANN_REMOTE_STATUS)) {
        json_object_del(ann, XF_ANN_REMOTE_STATUS);
        if (json_object_size(ann) == 0)
            json_object_del(json_object_get(work, "metadata"), "annotations");
    }
    act_patch_job(a, s->job, work); /* nothing when unchanged */
    json_decref(work);
    /* the worker's activity we mirrored goes too: Kueue releases the quota of
     * an evicted workload only once the hub job looks inactive */
    const char *mb = kind_managed_by(s->kind, s->job);
    json_t *stopped =
        xf_status_stopped(s->kind, s->job, s->opts.direct && mb && strcmp(mb, XF_MANAGED_BY) == 0);
    if (stopped)
        push(a, WL_ACT_PATCH_JOB_STATUS)->patch = json_pack("{s:o}", "status", stopped);
    delete_all_copies(s, a, NULL);
    push(a, WL_ACT_UNRESERVE);
    if (was_c)
        tell_evicted(s, evicting, was_c, a);
    free(was_c);
    if (jx_cond_find(s->workload, WL_COND_CLUSTER_ASSIGNED))
        wlst_assigned(w, false, REASON_NO_RESERVATION, "the workload holds no quota reservation");
    const char *st = check_state(entry);
    /* while an eviction is in progress Kueue still holds the reservation and
     * resets the checks itself when it releases it */
    if (!wl_active(s->workload) || evicting || strcmp(st, "Rejected") == 0)
        return;
    if (a->outcome.kind == WL_OUT_NONE)
        outcome(a, WL_OUT_WAITING, NULL);
    char *kr = wl_kueue_reason(s->workload);
    /* without a fit (s->explain) a Pending check gets no message at all: nothing to hold */
    int64_t quiet =
        kr || s->explain_never || !s->explain ? 0 : quiet_left(s, st, jx_str(entry, "message", ""));
    if (quiet > 0) { /* not news yet: most new Workloads are reserved before it ends */
        act_requeue(a, quiet);
        return;
    }
    if (!s->explain && !kr) {
        if (strcmp(st, "Pending") != 0)
            wlst_check(w, "Pending", "waiting for a quota reservation");
        return;
    }
    char *msg = wl_not_admitted_message(s->explain, s->explain_never, kr);
    if (strcmp(st, "Pending") != 0 || strcmp(jx_str(entry, "message", ""), msg) != 0) {
        const char *reason = s->explain_never ? REASON_NO_CLUSTER_FITS : REASON_NOT_ADMITTED;
        wlst_check(w, "Pending", msg);
        /* A new Workload Kueue has not looked at yet is not news: an Event (and the log line)
         * only once Kueue gives a reason, or when the job can never fit; then once per change
         * of Kueue's reason or of the kind of verdict, not at every capacity change. */
        if ((kr || s->explain_never) &&
            !wl_not_admitted_same(jx_str(entry, "message", ""), kr, s->explain_never,
                                  s->explain_unknown)) {
            act_event(a, WL_TGT_JOB, s->explain_never ? "Warning" : "Normal", reason, xstrdup(msg));
            outcome_told(a, reason, msg);
        }
    }
    if (s->explain)
        act_requeue(a, s->explain_unknown ? s->opts.no_fit_requeue_ms
                                          : s->opts.pin_unknown_requeue_ms);
    free(msg);
    free(kr);
}

/* The Event saying which constraints placement left to the worker's scheduler. */
static void ev_left_to_worker(const struct wl_placement *p, struct wl_actions *a)
{
    if (p->left_to_worker)
        act_event(a, WL_TGT_JOB, "Normal", REASON_CONSTRAINTS_LEFT_TO_WORKER,
                  xasprintf("placed on cluster %s on capacity; not judged by kueue-ks, left to the "
                            "worker's scheduler: %s",
                            p->cluster, p->left_to_worker));
}

/* An invalid cluster selector: Pending with the reason, Warning Events on a
 * new message, requeue. `unplaced` is the job with a stale placement undone,
 * or NULL. Returns the check message (new). */
static char *st_invalid(const struct wl_snapshot *s, struct wlst *w, const json_t *unplaced,
                        const char *cur_msg, struct wl_actions *a)
{
    const struct wl_placement *p = s->placement;
    if (unplaced)
        act_patch_job(a, s->job, unplaced);
    char *msg = xasprintf("cannot place: %s", p->message ? p->message : "");
    if (strcmp(cur_msg, msg) != 0) {
        act_event(a, WL_TGT_JOB, "Warning", REASON_INVALID_CLUSTER_SELECTOR, xstrdup(msg));
        act_event(a, WL_TGT_WORKLOAD, "Warning", REASON_INVALID_CLUSTER_SELECTOR, xstrdup(msg));
    }
    wlst_check(w, "Pending", msg);
    act_requeue(a, s->opts.pin_unknown_requeue_ms);
    outcome(a, WL_OUT_WAITING, NULL);
    return msg;
}

/* The message of the one Event a dispatch writes on the job ("Created on" / "Assigned to"
 * cluster c), with the nodeSelector keys injected from the admitted flavors, if any (the
 * job's kueue-ks.io/injected-node-selector annotation). */
static char *dispatch_event_msg(const char *what, const char *cluster, const json_t *job)
{
    /* the injected record ({template path: {key: value}}) as a user reads a nodeSelector:
     * "instance=spot", each template's path named when there are several */
    const char *inj = jx_annotation(job, XF_ANN_INJECTED);
    json_t *rec = inj ? jx_loadb(inj, strlen(inj), NULL) : NULL;
    struct buf b;
    buf_init(&b, 256);
    buf_printf(&b, "%s cluster %s", what, cluster);
    const char *path, *k;
    json_t *sel, *v;
    size_t n = 0;
    json_object_foreach(json_is_object(rec) ? rec : NULL, path, sel)
    {
        size_t m = 0;
        json_object_foreach(json_is_object(sel) ? sel : NULL, k, v)
        {
            if (!json_is_string(v))
                continue;
            const char *sep = m   ? ","
                              : n ? "; "
                                  : "; nodeSelector added from the admitted flavors: ";
            buf_printf(&b, "%s%s=%s", sep, k, json_string_value(v));
            m++;
        }
        if (m > 0 && json_object_size(rec) > 1)
            buf_printf(&b, " (%s)", path);
        n += m > 0;
    }
    json_decref(rec);
    return buf_detach(&b);
}

/* The Events of a placement besides the dispatch's own: a kind outside the table,
 * constraints left to the worker. */
static void ev_placed(const struct wl_snapshot *s, const struct wl_placement *p,
                      struct wl_actions *a)
{
    ev_left_to_worker(p, a);
    if (s->kind->generic) {
        /* outside the kind table: only the label moves it (no pod templates known) */
        char *gmsg =
            xasprintf("kind %s %s is not in kueue-ks's job kind table: placed on cluster %s by the "
                      "%s label only (no nodeSelector from the flavors, no suspend rule), status "
                      "copied whole",
                      jx_api_version(s->job) ? jx_api_version(s->job) : "?",
                      jx_str(s->job, "kind", "?"), p->cluster, XF_LABEL_CLUSTER);
        act_event(a, WL_TGT_JOB, "Warning", REASON_UNKNOWN_JOB_KIND, xstrdup(gmsg));
        act_event(a, WL_TGT_WORKLOAD, "Warning", REASON_UNKNOWN_JOB_KIND, gmsg);
    }
}

/* How a placement's check message starts (placement.c's, or st_place_ok's own). */
static const char PLACED_PREFIX[] = "placed on cluster ";

static bool sight_quiet(const struct wl_snapshot *s, const char *cluster, const json_t *copy);

/* Whether the chained copy's first sight changes nothing: sight_quiet() on the snapshot as this
 * pass's writes leave it (the job as placed, the Workload with the pass's checks; no report of
 * a worker for the new cluster). */
static bool chained_quiet(const struct wl_snapshot *s, const struct wlst *w, const json_t *work,
                          const char *cluster, const json_t *copy)
{
    json_t *wl = json_copy((json_t *)s->workload), *st = json_copy(jx_obj(s->workload, "status"));
    if (!wl || !st || !w->checks) {
        json_decref(wl);
        json_decref(st);
        return false;
    }
    json_object_set(st, "admissionChecks", w->checks);
    json_object_set_new(wl, "status", st);
    struct wl_snapshot s2 = *s;
    s2.workload = wl;
    s2.job = work;
    s2.unsched = NULL;
    bool quiet = sight_quiet(&s2, cluster, copy);
    json_decref(wl);
    return quiet;
}

/*
 * The direct transport's copy of the job as placed (`work`, the job with this pass's
 * placement patch), made in the placing pass once that patch went through (after_job): the
 * copy needs only the placement in the hub (a crash still never yields two copies), so it does
 * not wait for the job's own event and a pass on it (docs/performance.md "The copy follows its
 * placement"). Not when a copy exists anywhere or one was sent: state 6 sorts those out.
 */
static void chain_copy(const struct wl_snapshot *s, const struct wlst *w, const json_t *work,
                       const char *cluster, struct wl_actions *a)
{
    if (!s->opts.direct || s->n_copies > 0 || s->copy_sent)
        return;
    struct xf_origin o = {.origin = s->opts.origin, .origin_uid = jx_uid(s->job)};
    json_t *obj = xf_downsync(s->kind, work, &o, NULL);
    if (!obj)
        return; /* state 6 says why on the check */
    struct wl_action *x = push(a, WL_ACT_CREATE_COPY);
    x->cluster = xstrdup(cluster);
    x->object = obj;
    x->after_job = true;
    act_event(a, WL_TGT_JOB, "Normal", REASON_DISPATCHED,
              dispatch_event_msg("Created on", cluster, work));
    a->v[a->n - 1].after_job = true;
    a->outcome.chained = true;
    a->outcome.sight_quiet = chained_quiet(s, w, work, cluster, obj);
}

/* Placement OK: place (label, nodeSelector, annotations) in one job patch,
 * reserve, ClusterAssigned, check message, Events. Returns the check message (new). */
static char *st_place_ok(const struct wl_snapshot *s, struct wlst *w, const char *token,
                         json_t *work, struct wl_actions *a)
{
    const struct wl_placement *p = s->placement;
    struct err e;
    json_t *labels = wl_podset_labels(s->workload, s->flavor_labels);
    /* The built-in syncer makes the copy itself: the flavors' keys go into it only, and the
     * placement stays a metadata-only patch (through the Job's /status, wlx.h) */
    int rc = xf_place(s->kind, work, p->cluster, labels, token,
                      s->opts.direct ? XF_INJECT_COPY : XF_INJECT_SPEC, &e);
    json_decref(labels);
    if (rc < 0) {
        char *msg = xasprintf("cannot place on %s: %s", p->cluster, e.msg);
        wlst_check(w, "Pending", msg);
        act_requeue(a, s->opts.no_fit_requeue_ms);
        outcome(a, WL_OUT_WAITING, NULL);
        return msg;
    }
    /* the copy's zero counts with the placement: its first sight writes nothing */
    xf_remote_status_placed(s->kind, work, p->cluster);
    act_patch_job(a, s->job, work);
    struct wl_action *r = push(a, WL_ACT_RESERVE);
    r->cluster = xstrdup(p->cluster);
    char *amsg = xasprintf("assigned to cluster %s", p->cluster);
    wlst_assigned(w, true, REASON_CLUSTER_ASSIGNED, amsg);
    /* placement.c's message already says "placed on cluster c (why)": not twice */
    bool named = p->message && strncmp(p->message, PLACED_PREFIX, sizeof PLACED_PREFIX - 1) == 0;
    char *msg = named ? xstrdup(p->message)
                      : xasprintf("placed on cluster %s%s%s", p->cluster, p->message ? ": " : "",
                                  p->message ? p->message : "");
    wlst_check(w, "Pending", msg);
    /* One Event per dispatch, on the job: each is a hub write (about 4 ms of the hub's CPU
     * on the real stack, docs/performance.md). With the direct transport it is Dispatched, when the
     * copy is made; the placement itself is told by the check message (real Kueue relays each one
     * as an UpdatedAdmissionCheck Event on the job) and the ClusterAssigned condition. With
     * BindingPolicies the label is the dispatch. */
    if (!s->opts.direct)
        act_event(a, WL_TGT_JOB, "Normal", REASON_ASSIGNED_CLUSTER,
                  dispatch_event_msg("Assigned to", p->cluster, work));
    free(amsg);
    ev_placed(s, p, a);
    outcome(a, WL_OUT_PLACED, p->cluster);
    chain_copy(s, w, work, p->cluster, a);
    return msg;
}

static const char NOT_NOW_PREFIX[] = "no cluster fits now: ";
static const char PIN_UNKNOWN_PREFIX[] = "pinned cluster ";

/* Whether a check message is st_not_now's: the job already waits for a cluster. */
static bool waiting_message(const char *msg)
{
    return strncmp(msg, NOT_NOW_PREFIX, sizeof(NOT_NOW_PREFIX) - 1) == 0 ||
           strncmp(msg, PIN_UNKNOWN_PREFIX, sizeof(PIN_UNKNOWN_PREFIX) - 1) == 0;
}

/* Nothing fits now, or the pinned cluster is unknown: Pending with the reason,
 * a Warning Event on a new message, requeue. `unplaced` as for st_invalid.
 * Returns the check message (new). */
static char *st_not_now(const struct wl_snapshot *s, struct wlst *w, const json_t *unplaced,
                        const char *cur_msg, struct wl_actions *a)
{
    const struct wl_placement *p = s->placement;
    if (unplaced)
        act_patch_job(a, s->job, unplaced);
    char *msg;
    if (p->status == WL_PLACE_NOT_NOW)
        msg = xasprintf("%s%s", NOT_NOW_PREFIX, p->message ? p->message : "");
    else
        /* placement's message says the same ("pinned cluster c is not a known, usable
         * cluster"): what the user can do instead */
        msg = xasprintf("%s%s is not a worker that reports its capacity (the job's "
                        "kubestellar.io/cluster label): it waits until a worker of that name "
                        "reports its ClusterMetrics, or the label names another",
                        PIN_UNKNOWN_PREFIX, p->cluster ? p->cluster : "");
    /* Events on both (kubectl describe job shows why it waits), on each new message; the
     * log line once, when the job starts waiting, not at every change of what is free */
    if (strcmp(cur_msg, msg) != 0) {
        act_event(a, WL_TGT_WORKLOAD, "Warning", REASON_NO_CLUSTER_FITS, xstrdup(msg));
        act_event(a, WL_TGT_JOB, "Warning", REASON_NO_CLUSTER_FITS, xstrdup(msg));
    }
    wlst_check(w, "Pending", msg);
    act_requeue(a, p->status == WL_PLACE_NOT_NOW ? s->opts.no_fit_requeue_ms
                                                 : s->opts.pin_unknown_requeue_ms);
    outcome(a, WL_OUT_WAITING, NULL);
    if (!waiting_message(cur_msg))
        outcome_told(a, REASON_NO_CLUSTER_FITS, msg);
    return msg;
}

/* Whether check message `msg` already says the job is on `cluster`: the placement's
 * ("placed on cluster c" then the end or " (why)" / ": why") or "running on cluster c". */
static bool tells_placement(const char *msg, const char *cluster)
{
    static const char *const pre[] = {PLACED_PREFIX, "running on cluster "};
    size_t cl = strlen(cluster);
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
        size_t pl = strlen(pre[i]);
        if (strncmp(msg, pre[i], pl) == 0 && strncmp(msg + pl, cluster, cl) == 0 &&
            (msg[pl + cl] == '\0' || msg[pl + cl] == ' ' || msg[pl + cl] == ':'))
            return true;
    }
    return false;
}

/* Fits no cluster ever: check Rejected, Events on both. Returns the check message (new). */
static char *st_rejected(const struct wl_snapshot *s, struct wlst *w, const json_t *unplaced,
                         struct wl_actions *a)
{
    const struct wl_placement *p = s->placement;
    if (unplaced)
        act_patch_job(a, s->job, unplaced);
    char *msg = xasprintf("the workload fits no cluster: %s", p->message ? p->message : "");
    /* the user is told what to do about it too (the check message says why only: Kueue
     * replaces it when it deactivates the Workload) */
    char *told = xasprintf("%s; %s", msg, WL_NEVER_FITS_ADVICE);
    act_event(a, WL_TGT_WORKLOAD, "Warning", REASON_NO_CLUSTER_FITS, xstrdup(told));
    act_event(a, WL_TGT_JOB, "Warning", REASON_NO_CLUSTER_FITS, xstrdup(told));
    wlst_check(w, "Rejected", msg);
    outcome(a, WL_OUT_REJECTED, NULL);
    outcome_told(a, REASON_NO_CLUSTER_FITS, told);
    free(told);
    return msg;
}

static void st_place(const struct wl_snapshot *s, struct wlst *w, const char *token,
                     struct wl_actions *a)
{
    const struct wl_placement *p = s->placement;
    const char *stale = xf_placed_cluster(s->job);
    json_t *work = jx_deep_copy(s->job);
    if (stale) {
        /* placed for an earlier admission (we missed the eviction): undo it and
         * remove its copies before placing again */
        xf_unplace(s->kind, work);
        delete_all_copies(s, a, NULL);
    }
    const json_t *entry =
        jx_find_by(jx_arr(s->workload, "status.admissionChecks"), "name", s->check_name);
    const char *cur_msg = jx_str(entry, "message", "");
    const json_t *unplaced = stale ? work : NULL;
    char *msg = NULL;
    if (!p) {
        act_requeue(a, 1000);
        outcome(a, WL_OUT_WAITING, NULL);
    } else if (p->status == WL_PLACE_OK) {
        msg = st_place_ok(s, w, token, work, a);
    } else if (p->status == WL_PLACE_NOT_NOW || p->status == WL_PLACE_PIN_UNKNOWN) {
        msg = st_not_now(s, w, unplaced, cur_msg, a);
    } else if (p->status == WL_PLACE_INVALID) {
        msg = st_invalid(s, w, unplaced, cur_msg, a);
    } else {
        msg = st_rejected(s, w, unplaced, a);
    }
    free(msg);
    json_decref(work);
}

static void mirror_status(const struct wl_snapshot *s, struct wlst *w, const char *cluster,
                          const json_t *copy, struct wl_actions *a)
{
    const char *mb = kind_managed_by(s->kind, s->job);
    bool full = mb && strcmp(mb, XF_MANAGED_BY) == 0;
    struct xf_status st;
    if (xf_status_return(s->kind, copy, cluster, full, &st, NULL) < 0)
        return;
    /* Once a batch/v1 Job on the hub shows the copy's result, a status its Job controller
     * owns (not managed by our syncer) is left to it: a real one amends the final status we
     * wrote, and writing ours again started another round (2.4 status writes per job on the
     * real stack, each also a Kueue reconcile and an UpdatedAdmissionCheck Event). Kinds
     * whose whole status is copied (PyTorchJob, JobSet) keep following the copy: their
     * replica counts can still change after the result. */
    bool shown = !full && s->kind->status_rule == KIND_STATUS_JOB && st.result != KIND_RUNNING &&
                 kind_result(s->kind, s->job) == st.result;
    if (st.status && !shown) {
        json_t *cur = jx_obj(s->job, "status");
        json_t *empty = json_object();
        json_t *d = jx_merge_diff(cur ? cur : empty, st.status);
        json_decref(empty);
        if (json_object_size(d) > 0) {
            push(a, WL_ACT_PATCH_JOB_STATUS)->patch = json_pack("{s:o}", "status", d);
            /* FINISHED on the first write of the final status only (a managed-by copy's
             * status can be written again after it) */
            if (st.result != KIND_RUNNING && kind_result(s->kind, s->job) == KIND_RUNNING) {
                outcome(a, WL_OUT_FINISHED, cluster);
                a->outcome.failed = st.result == KIND_FAILED;
            }
        } else {
            json_decref(d);
        }
    }
    if (st.remote) {
        const char *cur = jx_annotation(s->job, XF_ANN_REMOTE_STATUS);
        if (!cur || strcmp(cur, st.remote) != 0) {
            struct jx_patch p;
            jx_patch_init(&p);
            jx_patch_annotation(&p, XF_ANN_REMOTE_STATUS, st.remote);
            struct wl_action *x = push(a, WL_ACT_PATCH_JOB);
            x->patch = jx_patch_take(&p);
            x->relay = true;
            jx_patch_release(&p);
        }
    }
    /* The check message follows the state, never the progress: the counts are in the
     * remote-status annotation (a job patch), so a copy's pods starting or finishing write
     * no Workload, the scarce write on a real server (docs/performance.md). While the copy
     * runs, the placement's message ("placed on cluster c (why)") stays: rewriting it to
     * "running on cluster c" would cost a Workload write (and Kueue's Event relaying it)
     * per job to say what the hub job's status already shows; another message (an error
     * of an earlier pass) becomes "running on cluster c". */
    char *msg;
    const json_t *entry =
        jx_find_by(jx_arr(s->workload, "status.admissionChecks"), "name", s->check_name);
    if (st.result == KIND_SUCCEEDED)
        msg = xasprintf("finished on cluster %s: succeeded", cluster);
    else if (st.result == KIND_FAILED)
        msg = xasprintf("finished on cluster %s: failed", cluster);
    else if (tells_placement(jx_str(entry, "message", ""), cluster))
        msg = xstrdup(jx_str(entry, "message", ""));
    else
        msg = xasprintf("running on cluster %s", cluster);
    if (st.result == KIND_RUNNING && s->defer_running && !w->cond &&
        strcmp(jx_str(entry, "message", ""), msg) != 0)
        a->deferred = true; /* the annotation now, the Workload once the burst is over */
    else
        wlst_check(w, "Pending", msg);
    free(msg);
    xf_status_release(&st);
}

/* The worker's reason, for messages: "<reason>: <message>" (new string). */
static char *unsched_text(const struct wl_unsched *u)
{
    if (!u)
        return xstrdup("");
    const char *r = u->reason ? u->reason : "", *m = u->message ? u->message : "";
    return xasprintf("%s%s%s", r, *r && *m ? ": " : "", m);
}

/* What the worker's report says is wrong, for messages (static). */
static const char *unsched_what(const struct wl_unsched *u)
{
    const char *c = u->cause ? u->cause : "unschedulable";
    if (strcmp(c, "not-started") == 0)
        return ": no progress there, pods not started: ";
    if (strcmp(c, "no-pods") == 0)
        return ": no progress there, no pods created: ";
    return ": pods unschedulable there: ";
}

/* The copy on `cluster` (may be NULL) is the one the worker reports unschedulable. */
static bool unsched_applies(const struct wl_snapshot *s, const json_t *copy, const char *token)
{
    if (!s->unsched || s->opts.unschedulable_timeout_ms <= 0)
        return false;
    if (!s->opts.direct)
        return true; /* KubeStellar's copy: matched by namespace/name */
    const char *pf = copy ? jx_annotation(copy, XF_ANN_PLACED_FOR) : NULL;
    /* some pods run or ran: the rest waits for them (waves), not moved */
    bool progress = jx_int(copy, "status.ready", 0) > 0 || jx_int(copy, "status.succeeded", 0) > 0;
    return copy && pf && strcmp(pf, token) == 0 && !progress &&
           (!s->unsched->uid || (jx_uid(copy) && strcmp(s->unsched->uid, jx_uid(copy)) == 0));
}

/* Unschedulable on the worker (wl.h, state 6). First pass past the timeout:
 * record the exclusion on the hub job (it must be there before Kueue places
 * the job again). A pass that sees the placed cluster excluded: Retry, delete
 * the copy, drop the reservation. Returns true when the pass ends here. */
static bool st_unschedulable(const struct wl_snapshot *s, struct wlst *w, const char *cluster,
                             const json_t *copy, const char *token, struct wl_actions *a)
{
    int64_t until = excl_until(jx_annotation(s->job, EXCL_ANNOTATION), cluster, s->now_ms);
    bool applies = unsched_applies(s, copy, token);
    if (!until && !applies)
        return false;
    int64_t stuck = applies ? s->now_ms - s->unsched->since_ms : 0;
    if (!until && stuck < s->opts.unschedulable_timeout_ms) {
        act_requeue(a, s->opts.unschedulable_timeout_ms - stuck);
        return false;
    }
    char t[40];
    if (!until) {
        char *v = excl_with(jx_annotation(s->job, EXCL_ANNOTATION), cluster,
                            s->now_ms + s->opts.exclusion_ms, s->now_ms);
        json_t *to = jx_deep_copy(s->job);
        jx_setv_new(to, json_string(v), "metadata", "annotations", EXCL_ANNOTATION);
        act_patch_job(a, s->job, to);
        json_decref(to);
        free(v);
        return true;
    }
    char *why = unsched_text(applies ? s->unsched : NULL);
    char *msg = xasprintf("cannot run on cluster %s%s%s%s; re-placing with cluster %s excluded "
                          "until %s",
                          cluster, applies ? unsched_what(s->unsched) : "", applies ? why : "",
                          applies ? "" : " (excluded by kueue-ks.io/excluded-clusters)", cluster,
                          excl_fmt_time(t, sizeof t, until));
    wlst_check(w, "Retry", msg);
    outcome(a, WL_OUT_UNSCHEDULABLE, cluster);
    a->outcome.why = xstrdup(msg);
    act_event(a, WL_TGT_WORKLOAD, "Warning", REASON_UNSCHEDULABLE_ON_WORKER, xstrdup(msg));
    act_event(a, WL_TGT_JOB, "Warning", REASON_UNSCHEDULABLE_ON_WORKER, msg);
    delete_all_copies(s, a, NULL);
    push(a, WL_ACT_UNRESERVE);
    free(why);
    return true;
}

/* Whether a pass on the first sight of `copy` (being made on `cluster`, as sent) would
 * decide nothing with this snapshot: what st_placed does with it past the steps both passes
 * share, on scratch. A copy with a status, or an unschedulable report held for the job, is
 * never quiet. */
static bool sight_quiet(const struct wl_snapshot *s, const char *cluster, const json_t *copy)
{
    if (s->unsched || json_object_size(jx_obj(copy, "status")) > 0)
        return false;
    struct wlst w = {.s = s};
    struct wl_actions a;
    wl_actions_init(&a);
    mirror_status(s, &w, cluster, copy, &a);
    bool quiet = a.n == 0 && !a.deferred && !w.entry && !w.cond;
    json_decref(w.checks);
    json_decref(w.conds);
    wl_actions_free(&a);
    return quiet;
}

static void st_placed(const struct wl_snapshot *s, struct wlst *w, const char *cluster,
                      const char *token, struct wl_actions *a)
{
    char *amsg = xasprintf("assigned to cluster %s", cluster);
    wlst_assigned(w, true, REASON_CLUSTER_ASSIGNED, amsg);
    free(amsg);
    if (!s->placed.usable) {
        int64_t lost = s->now_ms - s->placed.unusable_since_ms;
        if (lost >= s->opts.worker_lost_timeout_ms) {
            char *msg = xasprintf("worker cluster %s lost for %llds (timeout %llds): re-placing",
                                  cluster, (long long)(lost / 1000),
                                  (long long)(s->opts.worker_lost_timeout_ms / 1000));
            wlst_check(w, "Retry", msg);
            outcome(a, WL_OUT_WORKER_LOST, cluster);
            a->outcome.why = xstrdup(msg);
            act_event(a, WL_TGT_WORKLOAD, "Warning", REASON_WORKER_LOST, xstrdup(msg));
            act_event(a, WL_TGT_JOB, "Warning", REASON_WORKER_LOST, msg);
            push(a, WL_ACT_UNRESERVE);
            return;
        }
        act_requeue(a, s->opts.worker_lost_timeout_ms - lost);
        if (!s->placed.reachable)
            return;
    }
    const json_t *copy = s->opts.direct ? copy_on(s, cluster) : NULL;
    if (st_unschedulable(s, w, cluster, copy, token, a) || !s->opts.direct)
        return;
    delete_all_copies(s, a, cluster);
    const char *copy_for = copy ? jx_annotation(copy, XF_ANN_PLACED_FOR) : NULL;
    if (copy_for && strcmp(copy_for, token) != 0) {
        /* left from an earlier admission (its deletion was missed or is not
         * visible yet): never mirror its status into this admission; the copy
         * for this one is created once it is gone */
        act_delete_copy(a, cluster, copy);
        return;
    }
    if (!copy) {
        if (!s->placed.reachable)
            return;
        if (s->copy_sent) {
            act_requeue(a, 1000); /* the copy's event queues the key; a backstop */
            return;
        }
        if (s->n_copies > 0) {
            /* one copy at a time: the one elsewhere (deleted above) goes first;
             * its deletion event queues the key again, the timer is a backstop */
            act_requeue(a, 1000);
            return;
        }
        struct xf_origin o = {.origin = s->opts.origin, .origin_uid = jx_uid(s->job)};
        struct err e;
        json_t *obj = xf_downsync(s->kind, s->job, &o, &e);
        if (!obj) {
            char *msg = xasprintf("cannot copy to cluster %s: %s", cluster, e.msg);
            wlst_check(w, "Pending", msg);
            free(msg);
            return;
        }
        struct wl_action *x = push(a, WL_ACT_CREATE_COPY);
        x->cluster = xstrdup(cluster);
        x->object = obj;
        outcome(a, WL_OUT_DISPATCHED, cluster);
        a->outcome.sight_quiet = sight_quiet(s, cluster, obj);
        act_event(a, WL_TGT_JOB, "Normal", REASON_DISPATCHED,
                  dispatch_event_msg("Created on", cluster, s->job));
        return;
    }
    mirror_status(s, w, cluster, copy, a);
}

/* A Workload that Kueue marked Finished before our final check message was written
 * (our status write lost a race with Kueue's, e.g. a 409 once the hub job showed the
 * result): the message would say "running" for good. Write the final one, from the hub
 * job's result, once. */
static void finished_message(const struct wl_snapshot *s, struct wlst *w, const json_t *entry)
{
    static const char final_prefix[] = "finished on cluster ";
    const char *placed = s->job ? xf_placed_cluster(s->job) : NULL;
    enum kind_result res = s->job ? kind_result(s->kind, s->job) : KIND_RUNNING;
    if (!placed || res == KIND_RUNNING ||
        strncmp(jx_str(entry, "message", ""), final_prefix, sizeof(final_prefix) - 1) == 0)
        return;
    char *msg =
        xasprintf("%s%s: %s", final_prefix, placed, res == KIND_FAILED ? "failed" : "succeeded");
    wlst_check(w, check_state(entry), msg);
    free(msg);
}

int wl_decide(const struct wl_snapshot *s, struct wl_actions *a, struct err *e)
{
    if (!s)
        return err_set(e, -EINVAL, "wl_decide: no snapshot");
    if (!s->workload || !s->job) {
        delete_all_copies(s, a, NULL);
        push(a, WL_ACT_UNRESERVE);
        return 0;
    }
    if (!s->check_name || !s->kind)
        return err_set(e, -EINVAL, "workload %s: snapshot without check name or job kind",
                       jx_name(s->workload) ? jx_name(s->workload) : "?");
    const json_t *entry =
        jx_find_by(jx_arr(s->workload, "status.admissionChecks"), "name", s->check_name);
    if (!entry)
        return 0;
    struct wlst w = {.s = s};
    char *token = NULL;
    if (jx_cond_is_true(s->workload, "Finished")) {
        push(a, WL_ACT_UNRESERVE);
        finished_message(s, &w, entry);
        if (s->opts.delete_on_completion)
            delete_all_copies(s, a, NULL);
        else if (xf_placed_cluster(s->job))
            /* copies elsewhere are stale (e.g. on a worker lost and back):
             * only the one that ran this workload to the end is kept */
            delete_all_copies(s, a, xf_placed_cluster(s->job));
        goto out;
    }
    token = wl_placement_token(s->workload);
    if (!token || !wl_active(s->workload) || wl_evicting(s->workload)) {
        st_unreserved(s, &w, entry, token && wl_evicting(s->workload), a);
        goto out;
    }
    if (strcmp(check_state(entry), "Pending") != 0)
        goto out; /* Retry / Rejected / Ready: Kueue acts */
    const char *placed = xf_placed_cluster(s->job);
    const char *pf = jx_annotation(s->job, XF_ANN_PLACED_FOR);
    if (!placed || !pf || strcmp(pf, token) != 0)
        st_place(s, &w, token, a);
    else
        st_placed(s, &w, placed, token, a);
out:
    wlst_flush(&w, a);
    free(token);
    return 0;
}

size_t wl_gc_orphans(const char *cluster, const json_t *const *objs, size_t n, const char *origin,
                     bool (*hub_has)(void *ud, const char *uid), void *ud, struct wl_actions *out)
{
    size_t deleted = 0;
    struct xf_origin o = {.origin = origin};
    for (size_t i = 0; cluster && hub_has && i < n; i++) {
        const json_t *obj = objs[i];
        const char *uid = jx_label(obj, XF_LABEL_ORIGIN_UID);
        if (!uid || !*uid || !jx_name(obj) || !xf_is_ours(obj, &o) || hub_has(ud, uid))
            continue;
        act_delete_copy(out, cluster, obj);
        deleted++;
    }
    return deleted;
}
