/* controller: the workload controller's driver (see controller.h). */
#include "controllers/workload/controller.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/workload/acc.h"
#include "controllers/workload/clustersel.h"
#include "controllers/workload/excl.h"
#include "controllers/workload/explain.h"
#include "controllers/workload/xf.h"
#include "pkg/json/jsonx.h"
#include "pkg/metrics/metrics.h"
#include "pkg/reasons/reasons.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/keyset.h"
#include "pkg/util/strmap.h"
#include "pkg/util/xalloc.h"
#include "pkg/util/plural.h"
#include "pkg/workqueue/workqueue.h"

struct wlc {
    struct wlc_config cfg;
    struct wq *q;
    struct place_resv resv;
    struct strmap parsed_cm;        /* cluster -> struct parsed_cm: the last converted object */
    json_t *unusable_since;         /* cluster (Job) or "cluster group/resource" -> ms */
    const struct place_result *cur; /* during wlx_perform: the result to reserve */
    struct wlc_stats st;
    /* metrics (all NULL without a registry) */
    struct metrics_counter_vec *m_placed, *m_evicted;
    struct metrics_counter *m_rejected, *m_errors;
    struct metrics_histogram *m_dispatch, *m_return;
    struct metrics_gauge_vec *m_up;
    struct metrics_gauge *m_depth;
    /* key -> {cluster, reserved_ms, terminal_ms}: a pass whose writes partly
     * failed had created a copy / mirrored the final status; counted by the next
     * successful pass (the copy only when that pass sees it) */
    json_t *pending_placed;
    json_t *ac_inflight; /* AdmissionCheck name -> true while its status write is out */
    bool sweep_held;     /* wlc_sweep_due said no since sweep_held_since (seconds) */
    double sweep_held_since;
    ev_timer ac_retry; /* after a failed write: sync again in 1 s */
    ev_timer ac_grace; /* a write held by the start-up grace: sync again when it ends */
    /* key -> {token, rv}: a placement of this admission was written from the
     * hub job at resourceVersion rv; until the job store shows a newer job,
     * a pass must not place again (watch events lag write responses) */
    json_t *placing;
    /* key -> {wl, job, at}: the last pass's writes changed the Workload read at
     * resourceVersion wl / the hub job read at job (null = not written), at
     * `at` ms; until the stores show newer versions, a pass would decide on
     * the view the writes replaced and write the same again (own_held) */
    json_t *written;
    /* key -> {cluster, token, at}: a pass made the copy of admission `token` on `cluster` at
     * `at` ms; until the worker's store shows it (10 s at most), a pass must not make it again
     * (wl_snapshot.copy_sent) */
    json_t *copy_sent;
    /* key -> the message last relayed as an Event on the job of a Workload without our check
     * (or deactivated): told again only when Kueue's reason or the kind of verdict changes
     * (wl_not_admitted_same), not once per pass nor at every capacity change */
    json_t *relayed;
    /* key -> the last refusal of its copy by a worker that was logged (once per change) */
    json_t *refused;
    /* key -> the placement token (admission) whose "job placed" line was
     * logged: one line per placement, whatever passes repeat it */
    json_t *placed_logged;
    json_t *finished_logged; /* key -> the admission whose finish was logged */
    /* key -> the placed-for of the placement whose undoing was told (Evicted Event, "job
     * evicted" line): one per eviction (wl_snapshot.evicted_told) */
    json_t *evicted_told;
    /* key -> {"<target>/<reason>": message}: the NoClusterFits and NotAdmitted Events last
     * written for it (wl_events_once: one per change of the message) */
    json_t *events_told;
    /* orphan copies (cluster/kind/ns/name/uid) whose "job deleted" line was logged; kept while
     * the copy is still in the worker's store (the next GC pass may come
     * before the delete is seen), so the line is written once */
    json_t *gc_said;
    /* What each Workload's last pass depended on, so that a cluster change
     * queues only the Workloads it can affect (not all of them): */
    struct strmap waiting; /* key -> DEP_MARK: the pass read every cluster's capacity */
    /* placed records ("<key>\0<cluster>\0", placed_rec) by key: its job is placed there. One
     * allocation per placed Workload; a cluster's are found by a walk of all (a cluster that
     * comes, goes or reports unschedulable copies: rare next to the passes). A map key ->
     * cluster copy beside one cluster -> key set cost three copies and two slots each, 1.4 MB
     * at 10,000 placed (bench-scale). */
    struct keyset placed;
    struct strmap seen_usable; /* cluster -> DEP_USABLE / DEP_UNUSABLE, as last noticed */
    bool pass_read;            /* the pass in progress read the clusters' capacity */
    /* Dispatch before status return (defer_note): */
    struct strmap dispatching; /* key -> DEP_MARK: its job is placed, its copy not made yet */
    struct strmap relays;      /* key -> its pass (borrowed) while a status relay alone is out */
    struct strmap creating; /* key -> its pass (borrowed) while a pass that makes a copy is out */
    json_t *deferred;       /* key -> ms its check's running message was first deferred */
    /* key -> what a pass that only deferred the running message (no action) saw
     * (defer_fingerprint, owned): the same inputs while dispatches are still under way
     * decide the same, so such a pass is not made again (defer_unchanged) */
    struct strmap defer_fp;
    bool gc_pending; /* an orphan check could not be made: sweep at the next tick */
    int64_t born_ms; /* now_ms() at wlc_new: the AdmissionCheck's start-up grace */
};

/* strmap values must not be NULL: markers (never written through) */
static const char dep_marks[3];
#define DEP_MARK     ((void *)&dep_marks[0])
#define DEP_USABLE   ((void *)&dep_marks[1])
#define DEP_UNUSABLE ((void *)&dep_marks[2])

/* How long a check's running message may wait behind dispatches at most. */
#define DEFER_MAX_MS 5000

/* After a start, how long the AdmissionCheck is left as it is while no worker is usable but
 * some is not known yet (src.known): its first lists are under way, which is no outage. A
 * worker that never becomes known (say its Jobs cannot be listed) counts as down after it. */
#define AC_UNKNOWN_GRACE_MS 60000

static int64_t now_ms(const struct wlc *c);
static void defer_flush(struct wlc *c);
static void ac_retry_cb(struct ev_loop *loop, ev_timer *t, int revents);

/* What one reconcile pass will have done once its writes succeed (for the metrics). */
struct pass {
    struct wlc *c;
    char *key;
    char *placed;         /* a copy is created on this cluster */
    bool create;          /* by this pass's create (else seen, an earlier failed pass's) */
    bool chained;         /* create: after the placement of the same pass (wl_outcome.chained) */
    bool pending_had;     /* create: an earlier failed pass may have made it, uncounted */
    bool copy_held;       /* the decision waited for a copy made before (copy_sent) */
    int64_t reserved_ms;  /* QuotaReserved lastTransitionTime, 0 = unknown */
    char *evicted;        /* the placement on this cluster is undone */
    bool rejected;        /* the check goes Rejected (fits no cluster) */
    int64_t terminal_ms;  /* the copy's terminal time when its final status is mirrored, 0 = none */
    char *wl_rv, *job_rv; /* resourceVersions the pass read (NULL = none) */
    /* The pass places the job: the "job placed" line's fields, logged once the
     * placement patch is written (on_done), so a pass whose patch failed and
     * the retry that places again log one line. NULL = not a placement. */
    json_t *placed_log;
    /* The outcome's lines (finished, evicted, worker lost, unschedulable, not
     * placed), logged by on_done once the writes recording the transition went
     * through: a pass that fails is decided again, and would log them again. */
    struct wl_outcome said;
    char *jkey;
    char *fin_token;  /* a finish: the admission (placement token) that finished */
    char *undone_for; /* an eviction: the placed-for of the placement undone */
    char *token;      /* a dispatch: the placement token the copy is made for */
    bool copy_ran;    /* a dispatch whose copy had reported pods there (copy_reported) */
    bool relay_only;  /* its one action relays the copy's status (wl_action.relay) */
    char *relayed;    /* relay_only: the remote-status annotation it writes */
    char *echo_seen;  /* relay_only: the hub job's version in an update from job_rv that came
                         before the answer (echo_skip) */
    bool sight_quiet; /* create: the copy's first sight changes nothing (wl_outcome.sight_quiet) */
    bool copy_seen;   /* create: the new copy's ADDED came before the answer (copy_sight_skip) */
};

static void pass_free(struct pass *p)
{
    free(p->echo_seen);
    free(p->relayed);
    free(p->token);
    free(p->key);
    free(p->placed);
    free(p->evicted);
    free(p->wl_rv);
    free(p->job_rv);
    json_decref(p->placed_log);
    free(p->said.cluster);
    free(p->said.why);
    free(p->said.told);
    free(p->fin_token);
    free(p->undone_for);
    free(p->jkey);
    free(p);
}

static int64_t time_ms(const char *rfc3339)
{
    struct timespec ts;
    if (!rfc3339 || clock_parse_rfc3339(rfc3339, &ts) < 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* When a copy became terminal: a True Complete/Completed/Succeeded/Failed condition, else 0. */
static int64_t copy_terminal_ms(const json_t *copy)
{
    static const char *const types[] = {"Complete", "Completed", "Succeeded", "Failed"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        json_t *cond = jx_cond_find(copy, types[i]);
        const char *st = cond ? jx_str(cond, "status", NULL) : NULL;
        if (st && strcmp(st, "True") == 0) {
            int64_t t = time_ms(jx_str(cond, "lastTransitionTime", NULL));
            if (t > 0)
                return t;
        }
    }
    return 0;
}

static void update_depth(struct wlc *c)
{
    if (!c->m_depth)
        return;
    struct wq_stats ws;
    wq_stats(c->q, &ws);
    metrics_gauge_set(c->m_depth, (double)(ws.depth + ws.waiting));
}

/* Count a completed pass. A create that found our copy there (an earlier pass made it, the
 * worker's store did not show it yet) counts no placement again, unless that pass failed
 * before counting it (pending_placed). */
static void pass_account(struct pass *p, const struct wlx_result *r, bool count_error)
{
    struct wlc *c = p->c;
    int rc = r->rc;
    if (!c->m_placed)
        return;
    if (p->chained && r->copy_dropped) {
        free(p->placed); /* its copy was never sent: the pass after the placement makes it */
        p->placed = NULL;
    }
    if (p->create && r->copy_found && !p->pending_had) {
        free(p->placed);
        p->placed = NULL;
    }
    if (rc < 0) {
        if (count_error) /* not the switch to merge patches on a server without SSA */
            metrics_counter_inc(c->m_errors);
        /* Some writes may have succeeded (the create, the final status): the
         * next successful pass counts them (the create only if it sees the copy). */
        if (p->placed || p->terminal_ms > 0) {
            json_t *pe = json_object();
            if (p->placed) {
                json_object_set_new(pe, "cluster", json_string(p->placed));
                json_object_set_new(pe, "reserved_ms", json_integer(p->reserved_ms));
            }
            if (p->terminal_ms > 0)
                json_object_set_new(pe, "terminal_ms", json_integer(p->terminal_ms));
            json_object_set_new(c->pending_placed, p->key, pe);
        }
        return;
    }
    json_t *pend = json_object_get(c->pending_placed, p->key);
    if (p->terminal_ms == 0)
        p->terminal_ms = jx_int(pend, "terminal_ms", 0);
    /* held while an earlier failed pass's copy is not seen yet: it stays to count, by the pass
     * that sees it */
    if (p->copy_held && !p->placed && jx_str(pend, "cluster", NULL))
        json_object_del(pend, "terminal_ms");
    else
        json_object_del(c->pending_placed, p->key);
    int64_t now = now_ms(c);
    if (p->placed) {
        metrics_counter_inc(metrics_counter_vec_with(c->m_placed, p->placed));
        if (p->reserved_ms > 0 && now >= p->reserved_ms)
            metrics_histogram_observe(c->m_dispatch, (double)(now - p->reserved_ms) / 1000.0);
    }
    if (p->evicted)
        metrics_counter_inc(metrics_counter_vec_with(c->m_evicted, p->evicted));
    if (p->rejected)
        metrics_counter_inc(c->m_rejected);
    if (p->terminal_ms > 0 && now >= p->terminal_ms)
        metrics_histogram_observe(c->m_return, (double)(now - p->terminal_ms) / 1000.0);
}

static int64_t now_ms(const struct wlc *c)
{
    if (c->cfg.now_ms)
        return c->cfg.now_ms(c->cfg.now_ud);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fmt_time(int64_t ms, char *buf, size_t n)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000};
    clock_rfc3339(buf, n, &ts, 0);
}

static void on_reserve(void *ud, const char *key, const char *cluster)
{
    struct wlc *c = ud;
    if (c->cur && c->cur->status == PLACE_OK && c->cur->cluster &&
        strcmp(c->cur->cluster, cluster) == 0) {
        place_resv_add(&c->resv, key, c->cur, now_ms(c));
        c->st.placements++;
    }
}

static void on_unreserve(void *ud, const char *key)
{
    struct wlc *c = ud;
    place_resv_remove(&c->resv, key);
}

/* True, and `val` remembered for `key` in `said`, when it differs from what was last said
 * there: the lines and Events that are said once per change, not once per pass. */
static bool say_once(json_t *said, const char *key, const char *val)
{
    const char *last = jx_str(said, key, NULL);
    if (last && strcmp(last, val) == 0)
        return false;
    json_object_set_new(said, key, json_string_nocheck(val));
    return true;
}

/* A failed write is retried quietly (conflicts and outages pass), except a worker's
 * refusal (invalid, too large, forbidden), which is logged at default verbosity once per distinct
 * message. */
static void log_write_failure(struct wlc *c, const char *key, const struct wlx_result *r)
{
    if (!r->refused) {
        log_v(c->cfg.lg, 2, "workload reconcile: write failed, retrying", "workload", key, "error",
              r->err.msg);
        return;
    }
    const char *msg = r->refused_err.msg;
    if (!say_once(c->refused, key, msg))
        return;
    log_warn(c->cfg.lg, "a write for the job was refused; retrying with backoff", "workload", key,
             "reason", REASON_WRITE_REJECTED, "error", msg);
}

/* The pass's writes changed the Workload or the hub job: hold the next passes
 * until the stores show the change (own_held). */
static void own_note(struct wlc *c, const char *key, const struct pass *p,
                     const struct wlx_result *r)
{
    if (r->rc < 0 || (!r->wl_changed && !r->job_changed)) {
        json_object_del(c->written, key);
        return;
    }
    json_t *w = json_pack("{s:I}", "at", (json_int_t)now_ms(c));
    if (r->wl_changed && p->wl_rv)
        json_object_set_new(w, "wl", json_string(p->wl_rv));
    if (r->job_changed && p->job_rv)
        json_object_set_new(w, "job", json_string(p->job_rv));
    if (p->relay_only && !p->echo_seen && r->job_changed && p->job_rv && r->job_rv_new) {
        /* the relay's own event: from the version read to the one answered (echo_skip) */
        json_object_set_new(w, "echo_from", json_string(p->job_rv));
        json_object_set_new(w, "echo_to", json_string(r->job_rv_new));
    }
    json_object_set_new(c->written, key, w);
}

/* A status relay's pass whose job update came before its answer (echo_skip): no pass was
 * queued for it. When the answer says the update was not this write, queue the pass now. */
static void echo_settle(struct wlc *c, const char *key, const struct pass *p,
                        const struct wlx_result *r)
{
    if (!p->echo_seen)
        return;
    if (r->rc == 0 && r->job_changed && r->job_rv_new && strcmp(r->job_rv_new, p->echo_seen) == 0) {
        c->st.echo_skips++;
        log_v(c->cfg.lg, 5, "own status relay in the job store, no pass", "workload", key, "rv",
              p->echo_seen);
    } else {
        wq_add_level(c->q, key, WQ_FIRST); /* another write's update: its pass, as on_job's */
    }
}

/* A pass made the copy (or found the one an earlier pass made): no pass makes it again until
 * the worker's store shows it (copy_sent_held). */
static void copy_sent_note(struct wlc *c, const char *key, const struct pass *p,
                           const struct wlx_result *r)
{
    if (!p->create || !p->token || !(r->copy_created || r->copy_found) || p->copy_seen)
        return; /* copy_seen: the store shows it already */
    bool quiet = p->sight_quiet && r->rc == 0 && r->copy_created; /* copy_sight_skip */
    json_object_set_new(c->copy_sent, key,
                        json_pack("{s:s, s:s, s:I, s:b}", "cluster", p->placed, "token", p->token,
                                  "at", (json_int_t)now_ms(c), "quiet", quiet));
}

/* Copy `copy` of `key`'s job seen on `cluster`: when `key` holds a reservation there, the
 * copy's uid is recorded for it (place_resv_copy: metrics counting its pods end it), unless
 * the copy is not the reservation's: being removed, or made for another admission than the
 * Workload's (`wl`, NULL: read from the store) now, as a copy of an earlier placement on the
 * same cluster whose delete the store has not shown yet is (its pods, counted, would end the
 * new placement's reservation before the new copy's pods exist). True when the copy is the
 * live one of the reservation's placement. */
static bool resv_copy_seen(struct wlc *c, const char *key, const json_t *wl, const json_t *copy,
                           const char *cluster)
{
    const char *held = NULL, *uid = jx_uid(copy);
    const char *pf = jx_annotation(copy, XF_ANN_PLACED_FOR);
    if (!cluster || !pf || !place_resv_lookup(&c->resv, key, &held) || strcmp(held, cluster) != 0 ||
        jx_get(copy, "metadata.deletionTimestamp"))
        return false;
    char *token = wl_placement_token(wl ? wl : store_get(c->cfg.src.workloads, key));
    bool ours = token && strcmp(token, pf) == 0;
    free(token);
    if (ours && uid && uid[0])
        place_resv_copy(&c->resv, key, uid);
    return ours;
}

/* A copy's first sight that queued no pass (copy_sight_skip, copy_settle). */
static void sight_skipped(struct wlc *c, const char *key, const char *cluster)
{
    c->st.sight_skips++;
    log_v(c->cfg.lg, 5, "own new copy in the worker's store, no pass", "workload", key, "cluster",
          cluster);
}

/* The ADDED of the copy a pass made, and nothing else of it: the copy as it was sent (no
 * status), where and for the admission it was made, by a pass that decided its first sight
 * changes nothing (wl_outcome.sight_quiet) and whose writes all went through. A pass on it
 * would decide nothing (one of about three passes per dispatch: docs/performance.md "A new
 * copy's first sight without a pass"). The ADDED often comes before the create's answer:
 * then the pass still out notes it and its answer settles it (copy_settle). True when no
 * pass is to be queued now. */
static bool copy_sight_skip(struct wlc *c, const char *key, const json_t *copy, const char *cluster)
{
    const char *pf = jx_annotation(copy, XF_ANN_PLACED_FOR);
    if (!cluster || !pf || json_object_size(jx_obj(copy, "status")) > 0 ||
        json_object_get(c->pending_placed, key))
        return false;
    struct pass *p = strmap_get(&c->creating, key);
    if (p) {
        if (p->copy_seen || !p->sight_quiet || !p->placed || !p->token ||
            strcmp(p->placed, cluster) != 0 || strcmp(p->token, pf) != 0)
            return false;
        p->copy_seen = true;
        return true;
    }
    json_t *cs = json_object_get(c->copy_sent, key);
    if (!cs || !jx_bool(cs, "quiet", false) || strcmp(jx_str(cs, "cluster", ""), cluster) != 0 ||
        strcmp(jx_str(cs, "token", ""), pf) != 0)
        return false;
    json_object_del(c->copy_sent, key); /* the store shows it (copy_sent_held) */
    sight_skipped(c, key, cluster);
    return true;
}

/* A pass whose copy's ADDED came before its answer (copy_sight_skip): no pass was queued for
 * it. Unless the answer says this create made it and every write went through, queue the
 * pass now, as the ADDED would have. */
static void copy_settle(struct wlc *c, const char *key, const struct pass *p,
                        const struct wlx_result *r)
{
    if (!p->copy_seen)
        return;
    if (r->rc == 0 && r->copy_created)
        sight_skipped(c, key, p->placed);
    else
        wq_add_level(c->q, key, WQ_FIRST);
}

/* The "job placed" line, once per placement token of the key. */
static void log_placed(struct wlc *c, const char *key, const json_t *pl)
{
    if (!say_once(c->placed_logged, key, jx_str(pl, "token", "")))
        return;
    log_info(c->cfg.lg, "job placed", "job", jx_str(pl, "job", ""), "workload", key, "cluster",
             jx_str(pl, "cluster", ""), "flavor", jx_str(pl, "flavor", ""), "why",
             jx_str(pl, "why", ""));
}

/* The copy of a job whose "job placed" line this process did not write (an earlier run of
 * kueue-ks placed it; the copy was missing on the worker): a line, once per placement token,
 * so that a user following the job sees it dispatched again. */
static void log_dispatched(struct wlc *c, const char *key, const struct pass *p)
{
    if (!p->token || !p->jkey)
        return;
    if (say_once(c->placed_logged, key, p->token))
        log_info(c->cfg.lg, "job dispatched", "job", p->jkey, "workload", key, "cluster", p->placed,
                 "why", "placed there before this start of kueue-ks; its copy was missing");
    else if (p->copy_ran) /* a copy deleted outside kueue-ks: made again, silently before */
        log_info(c->cfg.lg, "job dispatched", "job", p->jkey, "workload", key, "cluster", p->placed,
                 "why",
                 "its copy had run there and is gone (deleted on the worker?): made again, the "
                 "job starts over there");
}

/* Whether the hub job's remote-status says its copy on `cluster` had pods (the placement's
 * own zero counts do not): the copy existed and ran. */
static bool copy_reported(const json_t *job, const char *cluster)
{
    json_t *r = job && cluster ? xf_remote_status(job) : NULL;
    bool ran = r && strcmp(jx_str(r, "cluster", ""), cluster) == 0 &&
               (jx_int(r, "active", 0) > 0 || jx_int(r, "ready", 0) > 0 ||
                jx_int(r, "succeeded", 0) > 0 || jx_int(r, "failed", 0) > 0);
    json_decref(r);
    return ran;
}

/* One info line per step a user follows: finished, evicted, worker lost,
 * unschedulable on its worker, cannot be placed — from the decision's outcome,
 * which the decision sets once per transition, so are these lines (on_done logs
 * them once the pass's writes went through). Placed is logged when its patch is
 * written (placed_log_new). */
static void log_outcome(struct wlc *c, const char *jkey, const struct wl_outcome *o)
{
    switch (o->kind) {
    case WL_OUT_FINISHED:
        log_info(c->cfg.lg, "job finished", "job", jkey, "cluster", o->cluster, "result",
                 o->failed ? "Failed" : "Succeeded");
        break;
    case WL_OUT_EVICTED:
        log_info(c->cfg.lg, "job evicted", "job", jkey, "reason", REASON_EVICTED, "why", o->why);
        break;
    case WL_OUT_WORKER_LOST:
        log_info(c->cfg.lg, "job's worker lost", "job", jkey, "reason", REASON_WORKER_LOST, "why",
                 o->why);
        break;
    case WL_OUT_UNSCHEDULABLE:
        log_info(c->cfg.lg, "job unschedulable on its worker", "job", jkey, "reason",
                 REASON_UNSCHEDULABLE_ON_WORKER, "why", o->why);
        break;
    default:
        break;
    }
    if (o->told_reason && strcmp(o->told_reason, REASON_NOT_ADMITTED) == 0)
        /* the same words as for a Workload Kueue holds without our check (relay_kueue_reason):
         * one state, one line */
        log_info(c->cfg.lg, "job not admitted by Kueue", "job", jkey, "why", o->told);
    else if (o->told_reason)
        log_info(c->cfg.lg, "job not placed", "job", jkey, "reason", o->told_reason, "why",
                 o->told);
}

static void on_done(void *ud, const char *key, const struct wlx_result *r)
{
    struct pass *p = ud;
    struct wlc *c = p->c;
    if (p->relay_only)
        strmap_del(&c->relays, key);
    if (strmap_get(&c->creating, key) == p)
        strmap_del(&c->creating, key);
    echo_settle(c, key, p, r);
    copy_settle(c, key, p, r);
    /* The hold stays while the placement patch went through (another call of
     * the pass may have failed, e.g. the Workload status on a 409): a retry
     * before the job informer shows the patch would place the job again. */
    if (r->rc < 0 && (!r->job_patched || r->apply_unsupported))
        json_object_del(c->placing, key); /* not written, or the pass runs again at once */
    if (r->rc < 0 && !r->job_patched)
        strmap_del(&c->dispatching, key); /* nothing placed: a refused placement retried with
                                             backoff must not hold every running message */
    if (p->placed_log && (r->rc == 0 || r->job_patched))
        log_placed(c, key, p->placed_log);
    bool say = r->rc == 0 || r->wl_changed;
    /* A finish is the hub job's final status: logged once that is written, even when the
     * Workload write of the same pass lost a race with Kueue (which marks the Workload
     * Finished as soon as it sees the hub job's result); the retry, deciding on stores that
     * may not show the written status yet, finds the finish again: once per admission. */
    if (p->said.kind == WL_OUT_FINISHED)
        say = (say || r->job_status_written) &&
              say_once(c->finished_logged, key, p->fin_token ? p->fin_token : "");
    if (p->jkey && say)
        log_outcome(c, p->jkey, &p->said);
    if (p->said.kind == WL_OUT_EVICTED && say && p->undone_for)
        json_object_set_new(c->evicted_told, key, json_string_nocheck(p->undone_for));
    if (p->said.kind == WL_OUT_DISPATCHED && r->rc == 0)
        log_dispatched(c, key, p);
    own_note(c, key, p, r);
    copy_sent_note(c, key, p, r);
    pass_account(p, r, !r->apply_unsupported && !r->meta_status_dropped);
    pass_free(p);
    if (r->apply_unsupported) {
        /* normally found by the start-up probe (wlrun.c); once either way */
        if (c->cfg.ops.server_side_apply)
            log_info(c->cfg.lg, "the hub has no server-side apply: Workload status is written "
                                "with resourceVersion-guarded merge patches");
        c->cfg.ops.server_side_apply = false;
        wq_forget(c->q, key);
        wq_add(c->q, key); /* again at once, in the merge form */
    } else if (r->meta_status_dropped) {
        if (c->cfg.ops.job_meta_via_status)
            log_info(c->cfg.lg, "the hub drops labels and annotations written through a job's "
                                "status subresource: kueue-ks writes its own through the job");
        c->cfg.ops.job_meta_via_status = false;
        wq_forget(c->q, key);
        wq_add(c->q, key); /* again at once, through the job */
    } else if (r->rc < 0) {
        c->st.failures++;
        log_write_failure(c, key, r);
        wq_add_rate_limited(c->q, key);
    } else {
        json_object_del(c->refused, key);
        wq_forget(c->q, key);
        if (r->requeue_ms >= 0)
            wq_add_after(c->q, key, (double)r->requeue_ms / 1000.0);
    }
    wq_done(c->q, key);
    defer_flush(c);
    update_depth(c);
}

/* ---- snapshot pieces ------------------------------------------------------ */

static int collect_flavor(const char *key, json_t *obj, void *ud)
{
    json_t *nl = jx_obj(obj, "spec.nodeLabels");
    json_object_set_new(ud, key, nl ? jx_deep_copy(nl) : json_object());
    return 0;
}

static const char *our_check(const struct wlc *c, const json_t *wl)
{
    json_t *checks = jx_arr(wl, "status.admissionChecks");
    for (size_t i = 0; checks && i < json_array_size(checks); i++) {
        const char *name = jx_str(json_array_get(checks, i), "name", NULL);
        if (name && acc_is_ours(store_get(c->cfg.src.admission_checks, name)))
            return name;
    }
    return NULL;
}

static struct store *copies_store(const struct wlc *c, const char *cluster,
                                  const struct kind_def *k)
{
    if (!c->cfg.src.copies)
        return NULL;
    return c->cfg.src.copies(c->cfg.src.ud, cluster, k);
}

/* A ClusterMetrics object converted for placement, kept while the store
 * holds the same object (store objects are immutable: a change is a new
 * json_t), so a pass does not parse every node of every cluster again. */
struct parsed_cm {
    json_t *obj; /* the reference that keeps the pointer from being reused */
    int rc;      /* place_cluster_from_json's */
    struct place_cluster pc;
};

static void parsed_cm_free(void *p)
{
    struct parsed_cm *pcm = p;
    json_decref(pcm->obj);
    place_cluster_free(&pcm->pc);
    free(pcm);
}

/* The conversion of `cm` (the store's object for `cluster`), or NULL when it
 * is unusable data. Borrowed: valid until the store's object changes. */
static const struct place_cluster *cluster_parsed(struct wlc *c, const char *cluster, json_t *cm)
{
    struct parsed_cm *pcm = strmap_get(&c->parsed_cm, cluster);
    if (!pcm || pcm->obj != cm) {
        if (pcm)
            parsed_cm_free(strmap_del(&c->parsed_cm, cluster));
        pcm = xcalloc(1, sizeof(*pcm));
        pcm->obj = json_incref(cm);
        pcm->rc = place_cluster_from_json(cm, &pcm->pc, NULL, NULL);
        strmap_put(&c->parsed_cm, cluster, pcm);
    }
    return pcm->rc == 0 ? &pcm->pc : NULL;
}

/* Usable now, per controller.h; also tracks since when a cluster is not. */
static bool cluster_usable(struct wlc *c, const char *cluster, const struct kind_def *k,
                           int64_t now, bool *reachable, int64_t *since)
{
    bool reach = !c->cfg.opts.direct || copies_store(c, cluster, k) != NULL;
    bool usable = false;
    json_t *cm = store_get(c->cfg.src.cluster_metrics, cluster);
    const struct place_cluster *pc = cm && reach ? cluster_parsed(c, cluster, cm) : NULL;
    if (pc)
        usable = place_cluster_usable(pc, now, c->cfg.metrics_stale_after_ms);
    /* tracked per (cluster, kind): a worker that does not serve a kind outside
     * the table is unusable for that kind only */
    char *tk = !k || k == kind_lookup("batch/v1", "Job")
                   ? xstrdup(cluster)
                   : xasprintf("%s %s/%s", cluster, k->group, k->resource);
    /* not heard from since our start is not known to be down: no clock yet */
    bool known = usable || !c->cfg.src.known || c->cfg.src.known(c->cfg.src.ud, cluster);
    json_t *t = json_object_get(c->unusable_since, tk);
    if (usable) {
        json_object_del(c->unusable_since, tk);
    } else if (!t && known) {
        t = json_integer(now);
        json_object_set_new(c->unusable_since, tk, t);
    }
    *reachable = reach;
    *since = usable ? 0 : t ? (int64_t)json_integer_value(t) : now;
    free(tk);
    return usable;
}

/* ---- what a cluster change can affect -------------------------------------- */

/* A placed record: the Workload's key and a NUL, then its cluster and a NUL. */
static char *placed_rec_new(const char *key, const char *cluster)
{
    size_t kn = strlen(key) + 1, cn = strlen(cluster) + 1;
    char *r = xmalloc(kn + cn);
    memcpy(r, key, kn);
    memcpy(r + kn, cluster, cn);
    return r;
}

static const char *placed_rec_cluster(const char *r)
{
    return r + strlen(r) + 1;
}

struct placed_walk {
    struct wlc *c;
    const char *cluster;
    enum wq_level level;
};

/* Queue the Workloads placed on w->cluster at w->level. WQ_BACKGROUND for a worker that became
 * usable: in order, at a restart, its thousands of placed Workloads came in the middle of the
 * start-up pass, and their passes kept a decoded tree of each Workload, job and copy in the
 * packed stores' cache until the trims (13-21 MB for seconds at 10,000 copies: bench-scale's
 * rss_mb at ready); a background pass reads trees of its own. */
static int enqueue_placed_cb(void *r, void *ud)
{
    const struct placed_walk *w = ud;
    if (strcmp(placed_rec_cluster(r), w->cluster) == 0)
        wq_add_level(w->c->q, r, w->level); /* the record begins with the key */
    return 0;
}

static void enqueue_placed_on(struct wlc *c, const char *cluster, enum wq_level level)
{
    struct placed_walk w = {c, cluster, level};
    keyset_foreach(&c->placed, enqueue_placed_cb, &w);
}

/* Record what the pass over `key` depended on: `waiting`, it read every
 * cluster's capacity (a placement that did not succeed, the per-cluster fit);
 * `placed`, the cluster its job is placed on (NULL = none). */
static void deps_note(struct wlc *c, const char *key, bool waiting, const char *placed)
{
    if (!waiting)
        strmap_del(&c->waiting, key);
    else if (!strmap_get(&c->waiting, key))
        strmap_put(&c->waiting, key, DEP_MARK);
    char *was = keyset_get(&c->placed, key);
    if (was && placed && strcmp(placed_rec_cluster(was), placed) == 0)
        return;
    free(keyset_del(&c->placed, key));
    if (placed)
        keyset_put(&c->placed, placed_rec_new(key, placed));
}

static int enqueue_key(const char *key, void *val, void *ud)
{
    (void)val;
    wq_add(ud, key);
    return 0;
}

/* Whether `cluster` came, went or changed usability since last noticed;
 * then its placed Workloads are queued (their pass judges the placed cluster,
 * and starts the worker-lost clock). A deleted cluster's conversion is dropped. */
static bool cluster_changed(struct wlc *c, const char *cluster)
{
    json_t *cm = store_get(c->cfg.src.cluster_metrics, cluster);
    void *was = strmap_get(&c->seen_usable, cluster), *now = NULL;
    if (cm) {
        bool reach;
        int64_t since;
        /* the Job copies store stands for the worker's reachability, as for the AdmissionCheck
         */
        now = cluster_usable(c, cluster, kind_lookup("batch/v1", "Job"), now_ms(c), &reach, &since)
                  ? DEP_USABLE
                  : DEP_UNUSABLE;
        strmap_put(&c->seen_usable, cluster, now);
    } else {
        strmap_del(&c->seen_usable, cluster);
        struct parsed_cm *pcm = strmap_del(&c->parsed_cm, cluster);
        if (pcm)
            parsed_cm_free(pcm);
    }
    if (was == now)
        return false;
    /* a worker that became usable (at a restart, all of them, after the start-up pass): its
     * placed Workloads behind the changes, their passes reading trees of their own; one that
     * became unusable: in order, their recovery is news */
    enqueue_placed_on(c, cluster, now == DEP_USABLE ? WQ_BACKGROUND : WQ_PLAIN);
    return true;
}

struct clusters {
    struct place_cluster *v;
    size_t n;
};

struct walk {
    struct wlc *c;
    const struct kind_def *k;
    int64_t now;
    struct clusters *out;    /* usable: the candidates */
    struct clusters *others; /* known capacity (usable metrics) but not usable now */
    const char **unknown;    /* borrowed names: capacity not known (no status, stale...) */
    size_t n_unknown;
    const struct sel *sel; /* the job's cluster selector, NULL = every cluster */
    const char *excluded;  /* the job's kueue-ks.io/excluded-clusters (excl.h), may be NULL */
    size_t n_seen, n_selected, n_excluded;
};

/* The cluster selector admits cluster `key` (ClusterMetrics `cm`). */
static bool cluster_selected(struct walk *w, const char *key, const json_t *cm)
{
    w->n_seen++;
    if (!w->sel)
        return ++w->n_selected, true;
    const struct wlc_sources *src = &w->c->cfg.src;
    json_t *extra = src->cluster_labels ? src->cluster_labels(src->ud, key) : NULL;
    json_t *labels = clsel_cluster_labels(key, cm, extra);
    bool ok = sel_matches(w->sel, labels);
    json_decref(labels);
    json_decref(extra);
    w->n_selected += ok;
    return ok;
}

static void clusters_push(struct clusters *cl, const struct place_cluster *pc)
{
    cl->v = xrealloc(cl->v, (cl->n + 1) * sizeof(*cl->v));
    cl->v[cl->n++] = *pc;
}

/* Every registered cluster lands in one of the three lists: a workload is
 * only rejected from a complete view (placement.h, "Never fits"). */
static int collect_cluster(const char *key, json_t *obj, void *ud)
{
    struct walk *w = ud;
    if (!cluster_selected(w, key, obj))
        return 0; /* outside the selector: neither a candidate nor part of "never fits" */
    bool reach;
    int64_t since;
    bool usable = cluster_usable(w->c, key, w->k, w->now, &reach, &since);
    const struct place_cluster *pc = cluster_parsed(w->c, key, obj);
    if (!pc) {
        w->unknown = xrealloc(w->unknown, (w->n_unknown + 1) * sizeof(*w->unknown));
        w->unknown[w->n_unknown++] = key;
        return 0;
    }
    place_resv_sync(&w->c->resv, pc, w->now);
    /* excluded for a while: known capacity, not a candidate now */
    bool excl = excl_until(w->excluded, key, w->now) > 0;
    w->n_excluded += excl;
    if (usable && !excl) {
        clusters_push(w->out, pc);
    } else if (place_cluster_usable(pc, w->now, w->c->cfg.metrics_stale_after_ms)) {
        clusters_push(w->others, pc);
    } else {
        w->unknown = xrealloc(w->unknown, (w->n_unknown + 1) * sizeof(*w->unknown));
        w->unknown[w->n_unknown++] = key;
    }
    return 0;
}

/* The registered workers the selector admits that have no ClusterMetrics
 * object yet (its create may have failed and wait for a retry): a new array
 * of names, or NULL. Their capacity is not known, as for one without status. */
static json_t *workers_without_metrics(struct walk *w)
{
    const struct wlc_sources *src = &w->c->cfg.src;
    json_t *names = src->worker_names ? src->worker_names(src->ud) : NULL;
    json_t *out = NULL;
    for (size_t i = 0; i < json_array_size(names); i++) {
        const char *n = json_string_value(json_array_get(names, i));
        if (!n || store_get(src->cluster_metrics, n) || !cluster_selected(w, n, NULL))
            continue;
        if (!out)
            out = json_array();
        json_array_append_new(out, json_string(n));
    }
    json_decref(names);
    return out;
}

/* Add the names of `missing` (borrowed: it must outlive the walk's use) to
 * the walk's unknown list. */
static void walk_add_unknown(struct walk *w, const json_t *missing)
{
    for (size_t i = 0; i < json_array_size(missing); i++) {
        w->unknown = xrealloc(w->unknown, (w->n_unknown + 1) * sizeof(*w->unknown));
        w->unknown[w->n_unknown++] = json_string_value(json_array_get(missing, i));
    }
}

/* The entries are shallow copies of parsed_cm's: only the array is ours. */
static void clusters_free(struct clusters *cl)
{
    free(cl->v);
}

struct flv {
    struct vocab_flavor *v;
    size_t n;
};

static int collect_place_flavor(const char *key, json_t *obj, void *ud)
{
    (void)key;
    struct flv *f = ud;
    struct vocab_flavor pf;
    if (vocab_flavor_from_json(obj, &pf, NULL) < 0)
        return 0;
    f->v = xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
    f->v[f->n++] = pf;
    return 0;
}

/* Every cluster that reports metrics, with whether it is usable now (the
 * explanation names the ones it cannot judge). */
struct all_walk {
    struct wlc *c;
    const struct kind_def *k;
    int64_t now;
    struct clusters *out;
    bool *usable;
    /* why a cluster is not a candidate (excl_explain), parallel to out */
    const struct sel *sel;
    const char *sel_text, *sel_from, *excluded;
    struct explain_excl *excl; /* the why strings are owned */
};

static int collect_any_cluster(const char *key, json_t *obj, void *ud)
{
    struct all_walk *w = ud;
    bool reach;
    int64_t since;
    bool ok = cluster_usable(w->c, key, w->k, w->now, &reach, &since);
    /* borrowed from the parse cache, like collect_cluster's (clusters_free frees the array
     * only) */
    const struct place_cluster *pc = cluster_parsed(w->c, key, obj);
    if (!pc)
        return 0;
    w->usable = xrealloc(w->usable, (w->out->n + 1) * sizeof(*w->usable));
    w->usable[w->out->n] = ok;
    const struct wlc_sources *src = &w->c->cfg.src;
    json_t *extra = src->cluster_labels ? src->cluster_labels(src->ud, key) : NULL;
    json_t *labels = clsel_cluster_labels(key, obj, extra);
    struct explain_excl x = {0};
    x.why = excl_explain(w->excluded, w->sel, w->sel_text, w->sel_from, key, labels, w->now,
                         &x.temporary);
    json_decref(labels);
    json_decref(extra);
    w->excl = xrealloc(w->excl, (w->out->n + 1) * sizeof(*w->excl));
    w->excl[w->out->n] = x;
    clusters_push(w->out, pc);
    return 0;
}

/* The cluster selector in force for the snapshot's job (clustersel.h). */
static int job_selector(struct wlc *c, const struct wl_snapshot *s, struct sel **sel,
                        const char **text, const char **from, struct err *e)
{
    const json_t *cq = NULL;
    const char *cq_name = jx_str(s->workload, "status.admission.clusterQueue", NULL);
    if (c->cfg.src.cluster_queues && cq_name)
        cq = store_get(c->cfg.src.cluster_queues, cq_name);
    return clsel_for(s->job, cq, sel, text, from, e);
}

/* The per-cluster fit of the snapshot's workload (explain.h); NULL when its
 * pod sets cannot be read. New string; *never / *unknown: the verdict. */
static char *compute_explain(struct wlc *c, const struct wl_snapshot *s, bool now, bool *never,
                             bool *unknown)
{
    struct place_workload pw;
    struct err e = {0};
    *never = *unknown = false;
    c->pass_read = true; /* the fit changes with any cluster's capacity */
    if (place_workload_from_json(s->workload, &pw, &e) < 0)
        return NULL;
    struct clusters cl = {0};
    struct sel *sel = NULL;
    struct all_walk w = {.c = c,
                         .k = s->kind,
                         .now = s->now_ms,
                         .out = &cl,
                         .excluded = jx_annotation(s->job, EXCL_ANNOTATION)};
    if (job_selector(c, s, &sel, &w.sel_text, &w.sel_from, NULL) == 0)
        w.sel = sel; /* an invalid one is the check message's subject, not the fit's */
    store_foreach(c->cfg.src.cluster_metrics, collect_any_cluster, &w);
    struct flv fl = {0};
    store_foreach(c->cfg.src.flavors, collect_place_flavor, &fl);
    struct explain_input in = {.wl = &pw,
                               .clusters = cl.v,
                               .n_clusters = cl.n,
                               .usable = w.usable,
                               .excluded = w.excl,
                               .flavors = fl.v,
                               .n_flavors = fl.n,
                               .resv = &c->resv,
                               .now = now};
    struct explain_report r;
    char *msg = NULL;
    if (explain_fit(&in, &r) == 0) {
        msg = xstrdup(r.message);
        *never = r.overall == EXPLAIN_NEVER;
        *unknown = r.overall == EXPLAIN_UNKNOWN;
        bool none_selected = r.overall == EXPLAIN_EXCLUDED;
        explain_report_free(&r);
        /* a registered worker without metrics yet may fit it: not known (also when it is the
         * only one the selector admits) */
        struct walk ww = {.c = c, .sel = w.sel};
        json_t *missing = *never || none_selected ? workers_without_metrics(&ww) : NULL;
        if (missing) {
            *never = false;
            *unknown = true;
        }
        json_decref(missing);
    }
    for (size_t i = 0; i < fl.n; i++)
        vocab_flavor_free(&fl.v[i]);
    free(fl.v);
    clusters_free(&cl);
    free(w.usable);
    for (size_t i = 0; i < cl.n; i++)
        free((char *)w.excl[i].why);
    free(w.excl);
    sel_free(sel);
    place_workload_free(&pw);
    return msg;
}

/* Compute the placement for the snapshot; fills *wp (strings borrowed from pr / msg). */
/* The check message of a placement: per cluster, with the free amounts, when it
 * does not place (what a user reads), and the cluster selector in use. */
static void placement_message(struct wlc *c, const struct wl_snapshot *s, const char *pinned,
                              const struct place_result *pr, const char *sel_text,
                              const char *sel_from, const struct walk *w, char **msg,
                              struct wl_placement *wp)
{
    if (!pinned && (pr->status == PLACE_NOT_NOW || pr->status == PLACE_NEVER)) {
        bool never, unknown;
        char *fit = compute_explain(c, s, true, &never, &unknown);
        /* placement's own message first when it waits for a worker's metrics
         * (that is what it waits for) or rejects (it names every filter, node
         * affinity included, which the per-cluster fit does not judge) */
        if (fit && (unknown || pr->status == PLACE_NEVER) && pr->message)
            *msg = xasprintf("%s; %s", pr->message, fit);
        else
            *msg = fit ? xstrdup(fit) : NULL;
        free(fit);
        if (*msg)
            wp->message = *msg;
    }
    if (sel_text) {
        char *with_sel =
            xasprintf("%s (cluster selector \"%s\" from the %s: %zu of %zu %s)",
                      wp->message ? wp->message : "", sel_text, sel_from, w->n_selected, w->n_seen,
                      plural_of((long long)w->n_seen, "cluster", "clusters"));
        free(*msg);
        *msg = with_sel;
        wp->message = *msg;
    }
}

/* A cluster the placement could not use that this process has not heard from since it
 * started (workers_known) and that the job does not exclude. */
static bool unheard(const struct wlc *c, const struct walk *w, const char *name)
{
    return !c->cfg.src.known(c->cfg.src.ud, name) && !excl_until(w->excluded, name, w->now);
}

/* Whether a placement that waits may wait for a worker not heard from since this process
 * started, within the start-up grace: its metrics unknown or stale, or known but the worker
 * not reachable yet (its copies not listed). A restart's reservations would each be told "no
 * cluster fits now" (a Workload write and an Event), then placed seconds later once the
 * in-process agents report (3.4 writes per dispatch on the real stack). */
static bool waits_for_start(const struct wlc *c, const struct walk *w)
{
    if (!c->cfg.src.known || w->now - c->born_ms >= AC_UNKNOWN_GRACE_MS)
        return false;
    for (size_t i = 0; i < w->n_unknown; i++)
        if (unheard(c, w, w->unknown[i]))
            return true;
    for (size_t i = 0; i < w->others->n; i++)
        if (unheard(c, w, w->others->v[i].name))
            return true;
    return false;
}

/* The job is pinned to a cluster that reports but is not a candidate now. */
static bool pin_unusable(struct wlc *c, const struct clusters *cl, const char *pinned)
{
    for (size_t i = 0; pinned && i < cl->n; i++)
        if (strcmp(cl->v[i].name, pinned) == 0)
            return false;
    return pinned && store_get(c->cfg.src.cluster_metrics, pinned);
}

/* *start_wait: the placement does not place, and a worker not known since the start may fit
 * it (waits_for_start); never for a pinned job (its own wait: PLACE_PIN_UNKNOWN). */
static void compute_placement(struct wlc *c, const struct wl_snapshot *s, const char *pinned,
                              struct place_result *pr, char **msg, struct wl_placement *wp,
                              bool *start_wait)
{
    *start_wait = false;
    struct place_workload pw;
    struct err e = {0};
    *wp = (struct wl_placement){0};
    if (place_workload_from_json(s->workload, &pw, &e) < 0) {
        *msg = xasprintf("cannot read the workload's pod sets: %s", e.msg);
        *wp = (struct wl_placement){.status = WL_PLACE_NEVER, .message = *msg};
        return;
    }
    struct sel *sel = NULL;
    const char *sel_text = NULL, *sel_from = NULL;
    if (job_selector(c, s, &sel, &sel_text, &sel_from, &e) < 0) {
        *msg = xasprintf("invalid cluster selector: %s", e.msg);
        *wp = (struct wl_placement){.status = WL_PLACE_INVALID, .message = *msg};
        place_workload_free(&pw);
        return;
    }
    struct clusters cl = {0}, others = {0};
    struct walk w = {.c = c,
                     .k = s->kind,
                     .now = s->now_ms,
                     .out = &cl,
                     .others = &others,
                     .sel = sel,
                     .excluded = jx_annotation(s->job, EXCL_ANNOTATION)};
    store_foreach(c->cfg.src.cluster_metrics, collect_cluster, &w);
    json_t *missing = workers_without_metrics(&w);
    walk_add_unknown(&w, missing);
    if (pin_unusable(c, &cl, pinned)) {
        char t[40];
        int64_t until = excl_until(w.excluded, pinned, s->now_ms);
        *msg = until ? xasprintf("pinned cluster %s is excluded until %s (%s)", pinned,
                                 excl_fmt_time(t, sizeof t, until), EXCL_ANNOTATION)
                     : xasprintf("pinned cluster %s is not usable now", pinned);
        *wp = (struct wl_placement){.status = WL_PLACE_NOT_NOW, .message = *msg};
    } else {
        struct flv fl = {0};
        store_foreach(c->cfg.src.flavors, collect_place_flavor, &fl);
        struct place_opts po = {.policy = c->cfg.policy,
                                .pinned = pinned,
                                .pinned_by = "the job's label " XF_LABEL_CLUSTER,
                                .others = others.v,
                                .n_others = others.n,
                                .unknown = w.unknown,
                                .n_unknown = w.n_unknown};
        if (place_decide(&pw, cl.v, cl.n, fl.v, fl.n, &c->resv, &po, pr) == 0) {
            static const enum wl_place_status map[] = {
                [PLACE_OK] = WL_PLACE_OK,
                [PLACE_NOT_NOW] = WL_PLACE_NOT_NOW,
                [PLACE_NEVER] = WL_PLACE_NEVER,
                [PLACE_PIN_UNKNOWN] = WL_PLACE_PIN_UNKNOWN,
            };
            wp->status = map[pr->status];
            wp->cluster = pr->status == PLACE_PIN_UNKNOWN ? pinned : pr->cluster;
            wp->message = pr->message;
            placement_message(c, s, pinned, pr, sel ? sel_text : NULL, sel_from, &w, msg, wp);
            wp->left_to_worker = pr->left_to_worker;
            *start_wait = !pinned && wp->status == WL_PLACE_NOT_NOW && waits_for_start(c, &w);
        } else {
            *msg = xstrdup("placement failed: invalid arguments");
            *wp = (struct wl_placement){.status = WL_PLACE_NOT_NOW, .message = *msg};
        }
        for (size_t i = 0; i < fl.n; i++)
            vocab_flavor_free(&fl.v[i]);
        free(fl.v);
    }
    /* a placement that did not succeed may once another cluster's capacity changes */
    c->pass_read |= wp->status != WL_PLACE_OK;
    clusters_free(&cl);
    clusters_free(&others);
    free(w.unknown);
    json_decref(missing);
    sel_free(sel);
    place_workload_free(&pw);
}

/* What worker `cluster`'s ClusterMetrics says about the job's copy there
 * (status.unschedulableJobs, agent.h): fills *u (strings borrowed from the
 * store) and returns it, or NULL when its pods are not reported unschedulable. */
static const struct wl_unsched *unsched_of(struct wlc *c, const char *cluster, const json_t *job,
                                           struct wl_unsched *u)
{
    json_t *cm = store_get(c->cfg.src.cluster_metrics, cluster);
    size_t i;
    json_t *v;
    json_array_foreach(jx_arr(cm, "status.unschedulableJobs"), i, v)
    {
        const char *ns = jx_str(v, "namespace", NULL), *name = jx_str(v, "name", NULL);
        int64_t since = time_ms(jx_str(v, "since", NULL));
        if (!ns || !name || since <= 0 || !jx_namespace(job) || !jx_name(job) ||
            strcmp(ns, jx_namespace(job)) != 0 || strcmp(name, jx_name(job)) != 0)
            continue;
        *u = (struct wl_unsched){.uid = jx_str(v, "uid", NULL),
                                 .cause = jx_str(v, "cause", NULL),
                                 .reason = jx_str(v, "reason", NULL),
                                 .message = jx_str(v, "message", NULL),
                                 .since_ms = since};
        return u;
    }
    return NULL;
}

struct copy_walk {
    struct wlc *c;
    const struct kind_def *k;
    const char *okey; /* ns/name of the job */
    struct xf_origin o;
    bool owned; /* v[i].obj are references of store_get_ref (recon.owned) */
    struct wl_copy *v;
    size_t n;
};

static int collect_copy(const char *cluster, json_t *cm, void *ud)
{
    (void)cm;
    struct copy_walk *w = ud;
    struct store *st = copies_store(w->c, cluster, w->k);
    json_t *obj = !st ? NULL : w->owned ? store_get_ref(st, w->okey) : store_get(st, w->okey);
    if (!obj || !xf_is_ours(obj, &w->o)) {
        if (w->owned)
            json_decref(obj);
        return 0;
    }
    w->v = xrealloc(w->v, (w->n + 1) * sizeof(*w->v));
    w->v[w->n++] = (struct wl_copy){.cluster = jx_name(cm), .obj = obj};
    return 0;
}

/* ---- reconcile ------------------------------------------------------------ */

/* The kind of the Workload's owner; NULL while unknown. A kind that cannot be
 * used gets a Warning Event on Workloads that use our check (the recorder
 * folds the repeats of the periodic passes into a count). */
static const struct kind_def *owner_kind(struct wlc *c, const json_t *wl, const json_t *owner)
{
    if (!c->cfg.src.kind)
        return kind_for_owner(owner);
    char why[512] = "";
    const struct kind_def *k = c->cfg.src.kind(c->cfg.src.ud, owner, why, sizeof why);
    if (!k && why[0] && c->cfg.ops.events && our_check(c, wl))
        evrec_event(c->cfg.ops.events, wl, "Warning", REASON_UNKNOWN_JOB_KIND,
                    "kueue-ks cannot place this Workload: %s", why);
    return k;
}

/* A Workload Kueue holds (no quota reservation, missing LocalQueue or
 * ClusterQueue, deactivated) before our check is on it (Kueue adds the
 * checks with the reservation): Kueue's reason and the per-cluster fit as an
 * Event on the job, once per change of Kueue's reason or of the kind of
 * verdict (wl_not_admitted_same: not at every capacity change). Workloads with
 * our check get the same in the check message (wl.c). A Workload Kueue
 * deactivated because our check Rejected it (it never fits) is told so, with
 * the advice to shrink the job (wl_rejected_message), not blamed on Kueue.
 * Returns true when the fit could not be judged yet (no metrics) for a
 * Workload without our check: the key is requeued and done, the pass ends
 * there. */
static bool relay_kueue_reason(struct wlc *c, struct wq *q, const char *key, const char *jkey,
                               const struct wl_snapshot *s)
{
    bool ours = s->check_name != NULL;
    bool active = jx_bool(s->workload, "spec.active", true);
    char *why = wl_kueue_reason(s->workload);
    if (!why || !s->job || (ours && active) || jx_cond_is_true(s->workload, "Finished")) {
        json_object_del(c->relayed, key);
        free(why);
        return false;
    }
    bool rejected = wl_rejected_by_check(s->workload, s->check_name);
    bool never = false, unknown = false;
    char *fit = active || rejected ? compute_explain(c, s, false, &never, &unknown) : NULL;
    if (rejected && !never) {
        /* a fit that says otherwise now (the job was rejected for its pin, or capacity came
         * since) would contradict the rejection: its own Event said why */
        free(fit);
        fit = NULL;
    }
    char *msg = rejected ? wl_rejected_message(fit)
                : fit    ? wl_not_admitted_message(fit, never, why)
                         : xasprintf("Kueue has not admitted it: %s", why);
    const char *last = jx_str(c->relayed, key, NULL);
    static const char rej[] = "kueue-ks rejected it:";
    bool same = rejected ? last && strncmp(last, rej, sizeof rej - 1) == 0
                : fit    ? wl_not_admitted_same(last, why, never, unknown)
                         : last && strcmp(last, msg) == 0;
    if (!same) {
        json_object_set_new(c->relayed, key, json_string_nocheck(msg));
        /* a rejected job's NoClusterFits Event (st_rejected) already says why, with the
         * advice: the deactivation that follows is the log line's news alone */
        if (c->cfg.ops.events && !rejected)
            evrec_event(c->cfg.ops.events, s->job, never ? "Warning" : "Normal",
                        never ? REASON_NO_CLUSTER_FITS : REASON_NOT_ADMITTED, "%s", msg);
        if (rejected)
            log_info(c->cfg.lg, "job rejected: no cluster can ever hold it", "job", jkey, "reason",
                     REASON_NO_CLUSTER_FITS, "why", msg);
        else
            log_info(c->cfg.lg, "job not admitted by Kueue", "job", jkey, "why", msg);
    }
    free(fit);
    free(msg);
    free(why);
    if (!unknown || ours)
        return false;
    wq_forget(q, key);
    wq_add_after(q, key, (double)c->cfg.opts.no_fit_requeue_ms / 1000.0);
    wq_done(q, key);
    return true;
}

/* The admitted flavors of the first pod set ("spot", "spot,h100"), for logs. */
static void admitted_flavors(const json_t *wl, char *buf, size_t n)
{
    buf[0] = '\0';
    const json_t *fl =
        jx_obj(json_array_get(jx_arr(wl, "status.admission.podSetAssignments"), 0), "flavors");
    const char *res;
    json_t *v;
    size_t off = 0;
    json_object_foreach((json_t *)fl, res, v)
    {
        const char *name = json_string_value(v);
        if (!name || strstr(buf, name))
            continue;
        int w = snprintf(buf + off, n - off, "%s%s", off ? "," : "", name);
        if (w < 0 || (size_t)w >= n - off) {
            buf[off] = '\0'; /* a name cut in a UTF-8 character would void the whole line */
            break;
        }
        off += (size_t)w;
    }
}

/* The fields of the "job placed" line (where, which flavor, why) of a pass
 * that places the job, or NULL: logged by on_done once the placement patch is
 * written, so one line per placement even when a pass fails and is retried. */
static json_t *placed_log_new(const json_t *wl, const char *jkey, const struct place_result *pr,
                              const struct wl_outcome *o)
{
    if (o->kind != WL_OUT_PLACED)
        return NULL;
    char flv[256];
    admitted_flavors(wl, flv, sizeof flv);
    char *tok = wl_placement_token(wl);
    json_t *pl = json_pack("{s:s, s:s, s:s, s:s, s:s}", "job", jkey ? jkey : "", "cluster",
                           o->cluster ? o->cluster : "", "flavor", flv, "why",
                           pr->message ? pr->message : "", "token", tok ? tok : "");
    free(tok);
    return pl;
}

static const json_t *copy_on_cluster(const struct copy_walk *cw, const char *cluster)
{
    for (size_t j = 0; cluster && j < cw->n; j++)
        if (strcmp(cw->v[j].cluster, cluster) == 0)
            return cw->v[j].obj;
    return NULL;
}

/* What the pass will have done once its writes succeed, for the metrics:
 * from the decision's outcome, plus a copy an earlier, partly failed pass
 * created (pending_placed) that this pass sees. */
static struct pass *pass_new(struct wlc *c, const char *key, const struct wl_outcome *o,
                             const json_t *wl, const struct copy_walk *cw)
{
    struct pass *ps = xcalloc(1, sizeof *ps);
    ps->c = c;
    ps->key = xstrdup(key);
    json_t *pend = json_object_get(c->pending_placed, key);
    const char *pend_c = pend ? jx_str(pend, "cluster", NULL) : NULL;
    if (o->kind == WL_OUT_DISPATCHED || (o->kind == WL_OUT_PLACED && o->chained)) {
        ps->placed = xstrdup(o->cluster);
        ps->create = true;
        ps->chained = o->chained;
        ps->sight_quiet = o->sight_quiet;
        ps->pending_had = pend_c && strcmp(pend_c, o->cluster) == 0;
        ps->token = wl_placement_token(wl);
        json_t *qr = jx_cond_find(wl, "QuotaReserved");
        ps->reserved_ms = qr ? time_ms(jx_str(qr, "lastTransitionTime", NULL)) : 0;
    } else if (o->kind == WL_OUT_EVICTED) {
        ps->evicted = xstrdup(o->cluster);
        ps->undone_for = o->undone_for ? xstrdup(o->undone_for) : NULL;
    } else if (o->kind == WL_OUT_FINISHED) {
        const json_t *copy = copy_on_cluster(cw, o->cluster);
        ps->terminal_ms = copy ? copy_terminal_ms(copy) : 0;
        ps->fin_token = wl_placement_token(wl);
    }
    ps->rejected = o->kind == WL_OUT_REJECTED;
    ps->said.kind = o->kind;
    ps->said.failed = o->failed;
    ps->said.told_reason = o->told_reason;
    ps->said.cluster = o->cluster ? xstrdup(o->cluster) : NULL;
    ps->said.why = o->why ? xstrdup(o->why) : NULL;
    ps->said.told = o->told ? xstrdup(o->told) : NULL;
    const char *wl_rv = jx_resource_version(wl);
    ps->wl_rv = wl_rv ? xstrdup(wl_rv) : NULL;
    if (pend_c && !ps->placed && copy_on_cluster(cw, pend_c)) {
        /* the earlier create did happen */
        ps->placed = xstrdup(pend_c);
        ps->reserved_ms = jx_int(pend, "reserved_ms", 0);
    }
    return ps;
}

/* One reconcile pass of a Workload: its snapshot and what the pass owns. */
struct recon {
    const char *key;
    json_t *wl, *job; /* borrowed from the stores, or references when owned */
    /* A background pass (a pass over every Workload, a restart's) reads trees of its own
     * (store_get_ref), freed at its end while they are still in the cache, instead of filling
     * the packed stores' decoded-tree cache with trees that the trims free cold (a fifth of a
     * restart's CPU at 10,000 Workloads: docs/performance.md) */
    bool owned;
    const struct kind_def *k;
    char *okey; /* the hub job's namespace/name */
    char now[40];
    json_t *flavor_labels;
    struct copy_walk cw;
    char *explain, *pmsg;
    struct place_result pr;
    struct wl_placement wp;
    struct wl_unsched us; /* s.unsched points here */
    struct wl_snapshot s;
    struct wl_actions acts;
};

static void recon_release(struct recon *r)
{
    wl_actions_free(&r->acts);
    place_result_free(&r->pr);
    free(r->pmsg);
    free(r->explain);
    free(r->okey);
    if (r->owned) {
        json_decref(r->wl);
        json_decref(r->job);
        for (size_t i = 0; i < r->cw.n; i++)
            json_decref((json_t *)r->cw.v[i].obj); /* ours: store_get_ref */
    }
    free(r->cw.v);
    json_decref(r->flavor_labels);
}

/* The snapshot of Workload `key` from the stores. False when there is nothing
 * to reconcile: the Workload is gone (copies of deleted jobs are the orphan
 * GC's), has no owner, or its owner's kind is not watched. */
static bool snapshot_take(struct wlc *c, const char *key, bool owned, struct recon *r)
{
    *r = (struct recon){.key = key, .owned = owned};
    r->wl = owned ? store_get_ref(c->cfg.src.workloads, key) : store_get(c->cfg.src.workloads, key);
    json_t *owner = r->wl ? jx_owner_controller(r->wl) : NULL;
    r->k = owner ? owner_kind(c, r->wl, owner) : NULL;
    struct store *js = r->k && c->cfg.src.jobs ? c->cfg.src.jobs(c->cfg.src.ud, r->k) : NULL;
    if (!r->wl || !js || !jx_str(owner, "name", NULL))
        return false;
    r->okey = jx_key_make(jx_namespace(r->wl), jx_str(owner, "name", ""));
    r->job = owned ? store_get_ref(js, r->okey) : store_get(js, r->okey);
    const char *owner_uid = jx_str(owner, "uid", NULL);
    if (r->job && owner_uid && jx_uid(r->job) && strcmp(owner_uid, jx_uid(r->job)) != 0) {
        if (owned)
            json_decref(r->job);
        r->job = NULL; /* a new job with the same name: not this workload's */
    }
    int64_t now = now_ms(c);
    fmt_time(now, r->now, sizeof r->now);
    r->flavor_labels = json_object();
    store_foreach(c->cfg.src.flavors, collect_flavor, r->flavor_labels);
    r->cw = (struct copy_walk){.c = c,
                               .k = r->k,
                               .okey = r->okey,
                               .o = {.origin = c->cfg.opts.origin, .origin_uid = owner_uid},
                               .owned = owned};
    if (c->cfg.opts.direct && owner_uid)
        store_foreach(c->cfg.src.cluster_metrics, collect_copy, &r->cw);
    r->s = (struct wl_snapshot){
        .workload = r->wl,
        .job = r->job,
        .kind = r->k,
        .check_name = our_check(c, r->wl),
        .flavor_labels = r->flavor_labels,
        .copies = r->cw.v,
        .n_copies = r->cw.n,
        .now_ms = now,
        .now = r->now,
        .opts = c->cfg.opts,
    };
    return true;
}

/* True while the copy of the Workload's admission that a pass made on `placed` is not in the
 * worker's store yet (10 s at most: a copy deleted before its informer ever showed it is made
 * again then). Drops the entry once over. */
static bool copy_sent_held(struct wlc *c, const struct recon *r, const char *placed)
{
    json_t *cs = json_object_get(c->copy_sent, r->key);
    if (!cs)
        return false;
    char *tok = wl_placement_token(r->wl);
    /* before the job store shows the placement (a placing pass's copy, wl.h state 5): held
     * for its admission, so a placement decided again on the old view makes no second copy */
    bool held = tok && strcmp(jx_str(cs, "token", ""), tok) == 0 &&
                r->s.now_ms - jx_int(cs, "at", 0) <= 10000 &&
                (!placed || (strcmp(jx_str(cs, "cluster", ""), placed) == 0 &&
                             !copy_on_cluster(&r->cw, placed)));
    free(tok);
    if (!held)
        json_object_del(c->copy_sent, r->key);
    else /* a pass decided without the copy: its sight is that pass's news (copy_sight_skip) */
        json_object_set_new(cs, "quiet", json_false());
    return held;
}

/* The parts of the snapshot only a Workload with our check needs: the per-cluster fit, the
 * state of the cluster the job is placed on, whether its copy there is on its way. */
static void snapshot_ours(struct wlc *c, struct recon *r)
{
    struct wl_snapshot *s = &r->s;
    if (wl_wants_explain(s))
        s->explain = r->explain =
            compute_explain(c, s, false, &s->explain_never, &s->explain_unknown);
    const char *placed = r->job ? xf_placed_cluster(r->job) : NULL;
    if (placed) {
        s->placed.usable = cluster_usable(c, placed, r->k, s->now_ms, &s->placed.reachable,
                                          &s->placed.unusable_since_ms);
        s->unsched = unsched_of(c, placed, r->job, &r->us);
    }
    s->copy_sent = copy_sent_held(c, r, placed);
    s->evicted_told = jx_str(c->evicted_told, r->key, NULL);
}

/* Our own placement write, not yet delivered by the job informer, is held
 * (c->placing) until the job shows it (placed-for = the token) — not merely
 * a newer version, which may be another writer's (the Job controller's
 * Suspended condition) — with a 10 s backstop. Drops the hold once over. */
static void placing_expire(struct wlc *c, const char *key, const json_t *job, int64_t now)
{
    json_t *pg = json_object_get(c->placing, key);
    const char *pf_now = job ? jx_annotation(job, XF_ANN_PLACED_FOR) : NULL;
    if (pg && (!job || (pf_now && strcmp(pf_now, jx_str(pg, "token", "")) == 0) ||
               now - jx_int(pg, "at", 0) > 10000))
        json_object_del(c->placing, key);
}

/* True while a placement of the Workload's current admission is held. */
static bool placing_held(struct wlc *c, const char *key, const json_t *wl)
{
    json_t *pg = json_object_get(c->placing, key);
    if (!pg)
        return false;
    char *tok = wl_placement_token(wl);
    bool held = tok && strcmp(jx_str(pg, "token", ""), tok) == 0;
    free(tok);
    return held;
}

/* The pass places the job: hold further placements of this admission until
 * the job store shows it (placing_expire). */
static void placing_hold(struct wlc *c, const struct recon *r)
{
    if (r->acts.outcome.kind != WL_OUT_PLACED || !r->job || !jx_resource_version(r->job))
        return;
    char *tok = wl_placement_token(r->wl);
    json_object_set_new(
        c->placing, r->key,
        json_pack("{s:s, s:I}", "token", tok ? tok : "", "at", (json_int_t)r->s.now_ms));
    free(tok);
}

/* The last pass's own writes are not in the stores yet: the Workload or the
 * hub job is still at the resourceVersion that pass read (watch events lag
 * write responses). A pass now would decide on the replaced view and repeat
 * those writes (on the devhub a resourceVersion-guarded status patch that
 * 409s, on a real server the same apply again) or act on the state before
 * them. The object's event queues the key again (1 s backstop); the hold
 * ends when the stores show newer versions, or after 10 s. */
static bool own_held(struct wlc *c, const struct recon *r)
{
    json_t *w = json_object_get(c->written, r->key);
    if (!w)
        return false;
    const char *wl = jx_str(w, "wl", NULL), *job = jx_str(w, "job", NULL);
    const char *wl_now = jx_resource_version(r->wl);
    const char *job_now = r->job ? jx_resource_version(r->job) : NULL;
    bool held =
        (wl && wl_now && strcmp(wl, wl_now) == 0) || (job && job_now && strcmp(job, job_now) == 0);
    if (!held || r->s.now_ms - jx_int(w, "at", 0) > 10000) {
        json_object_del(c->written, r->key);
        return false;
    }
    c->st.own_holds++;
    json_object_set_new(w, "held", json_true()); /* its write's event must queue it (echo_skip) */
    log_v(c->cfg.lg, 5, "pass held: own write not in the stores yet", "workload", r->key, "wl_rv",
          wl ? wl : "", "job_rv", job ? job : "");
    return true;
}

/* Dispatches are under way: a job is placed with no copy yet, or keys wait in the plain
 * queue (reservations to place; not a background pass, nor the keys queued ahead: hub job
 * events and copies' status changes, which are no dispatch waiting). */
static bool dispatch_busy(const struct wlc *c)
{
    struct wq_stats ws;
    wq_stats(c->q, &ws);
    return strmap_len(&c->dispatching) > 0 || ws.depth > ws.urgent + ws.background;
}

/* The check's running message of `key` waits while dispatches are under way, for
 * DEFER_MAX_MS at most (wl_snapshot.defer_running). */
static bool defer_wanted(const struct wlc *c, const char *key, int64_t now)
{
    if (!dispatch_busy(c))
        return false;
    json_t *since = json_object_get(c->deferred, key);
    return !since || now - json_integer_value(since) < DEFER_MAX_MS;
}

/* Once no dispatch is under way, the deferred keys run (ahead of any new reservation). */
static void defer_flush(struct wlc *c)
{
    if (json_object_size(c->deferred) == 0 || dispatch_busy(c))
        return;
    const char *k;
    json_t *v;
    json_object_foreach(c->deferred, k, v)
    {
        wq_add_urgent(c->q, k);
    }
    json_object_clear(c->deferred);
}

/* Dispatch before status return: a job placed by this pass is being dispatched until a pass
 * of its key decides anything else (the copy made, evicted...); a pass that deferred the
 * running message runs again when no job is being dispatched, or after DEFER_MAX_MS. */
static void defer_note(struct wlc *c, const char *key, const struct wl_actions *a, int64_t now)
{
    if (a->outcome.kind == WL_OUT_PLACED)
        strmap_put(&c->dispatching, key, DEP_MARK);
    else
        strmap_del(&c->dispatching, key);
    if (!a->deferred) {
        json_object_del(c->deferred, key);
        return;
    }
    c->st.deferrals++;
    if (json_object_get(c->deferred, key))
        return;
    json_object_set_new(c->deferred, key, json_integer(now));
    wq_add_after(c->q, key, DEFER_MAX_MS / 1000.0);
}

/* Append s (NULL: none) to a fingerprint, length first: no two inputs read the same.
 * Sets *bad when the buffer's cap refused it (a truncated fingerprint could match another). */
static void fp_put(struct buf *b, const char *s, bool *bad)
{
    char n[24];
    if (!s) {
        *bad = *bad || buf_puts(b, "-;") < 0;
        return;
    }
    snprintf(n, sizeof n, "%zu:", strlen(s));
    *bad = *bad || buf_puts(b, n) < 0 || buf_puts(b, s) < 0;
}

/* What a decision on the placed job reads besides the clock: the Workload and the hub job
 * (by resourceVersion: a store holds one object per version), our check, the copies, the
 * placed cluster's state, the worker's unschedulable report, the fit text. New string;
 * NULL when it does not fit its cap (never compared then). */
static char *defer_fingerprint(const struct recon *r)
{
    const struct wl_snapshot *s = &r->s;
    struct buf b;
    bool bad = false;
    buf_init(&b, (size_t)1 << 20);
    fp_put(&b, jx_resource_version(r->wl), &bad);
    fp_put(&b, r->job ? jx_resource_version(r->job) : NULL, &bad);
    fp_put(&b, s->check_name, &bad);
    char t[96];
    snprintf(t, sizeof t, "%d%d%lld", s->placed.usable, s->placed.reachable,
             (long long)s->placed.unusable_since_ms);
    fp_put(&b, t, &bad);
    if (s->unsched) {
        snprintf(t, sizeof t, "%lld", (long long)s->unsched->since_ms);
        fp_put(&b, t, &bad);
        fp_put(&b, s->unsched->uid, &bad);
        fp_put(&b, s->unsched->cause, &bad);
        fp_put(&b, s->unsched->reason, &bad);
        fp_put(&b, s->unsched->message, &bad);
    } else {
        fp_put(&b, NULL, &bad);
    }
    fp_put(&b, s->explain, &bad);
    for (size_t i = 0; i < s->n_copies; i++) {
        fp_put(&b, s->copies[i].cluster, &bad);
        fp_put(&b, jx_uid(s->copies[i].obj), &bad);
        fp_put(&b, jx_resource_version(s->copies[i].obj), &bad);
    }
    if (bad) {
        buf_free(&b);
        return NULL;
    }
    return buf_detach(&b);
}

/* A pass that deferred the running message and did nothing else is not made again while
 * dispatches are still under way (defer_wanted: within DEFER_MAX_MS) and nothing it read
 * changed: the deferred keys run again each time the queue is briefly idle
 * (defer_flush), and during a burst they would all decide the same, over and over.
 * The key stays deferred; its DEFER_MAX_MS timer, the next flush or a change of its
 * objects runs the pass. True when the pass is skipped (the key is done with). */
static bool defer_unchanged(struct wlc *c, struct wq *q, const struct recon *r)
{
    const char *was = strmap_get(&c->defer_fp, r->key);
    if (!was || !defer_wanted(c, r->key, r->s.now_ms))
        return false;
    char *fp = defer_fingerprint(r);
    bool same = fp && strcmp(fp, was) == 0;
    free(fp);
    if (!same)
        return false;
    c->st.defer_skips++;
    struct wl_actions deferred = {.deferred = true}; /* what such a pass decides */
    defer_note(c, r->key, &deferred, r->s.now_ms);
    log_v(c->cfg.lg, 5, "pass skipped: deferred, nothing changed", "workload", r->key);
    json_object_del(c->written, r->key); /* as on_done after a pass without writes */
    json_object_del(c->refused, r->key);
    wq_forget(q, r->key);
    wq_done(q, r->key);
    update_depth(c);
    return true;
}

/* After a decision: remember what a pass that only deferred saw (defer_unchanged). */
static void defer_remember(struct wlc *c, const struct recon *r)
{
    char *fp = r->acts.deferred && r->acts.n == 0 && !c->pass_read ? defer_fingerprint(r) : NULL;
    free(fp ? strmap_put(&c->defer_fp, r->key, fp) : strmap_del(&c->defer_fp, r->key));
}

/* Carries out the decision; false when nothing could be started (the key is
 * to be forgotten), else on_done finishes the key. */
static bool pass_perform(struct wlc *c, struct recon *r)
{
    struct wlx_ops ops = c->cfg.ops;
    ops.reserve = on_reserve;
    ops.unreserve = on_unreserve;
    ops.resv_ud = c;
    struct pass *ps = pass_new(c, r->key, &r->acts.outcome, r->wl, &r->cw);
    ps->copy_ran = ps->create && copy_reported(r->job, ps->placed);
    const char *job_rv = r->job ? jx_resource_version(r->job) : NULL;
    ps->job_rv = job_rv ? xstrdup(job_rv) : NULL;
    ps->relay_only = r->acts.n == 1 && r->acts.v[0].type == WL_ACT_PATCH_JOB && r->acts.v[0].relay;
    if (ps->relay_only) {
        const char *v = jx_annotation(r->acts.v[0].patch, XF_ANN_REMOTE_STATUS);
        ps->relayed = v ? xstrdup(v) : NULL;
        strmap_put(&c->relays, r->key, ps);
    }
    if (ps->create)
        strmap_put(&c->creating, r->key, ps);
    ps->placed_log = placed_log_new(r->wl, r->okey, &r->pr, &r->acts.outcome);
    ps->jkey = r->okey ? xstrdup(r->okey) : NULL;
    ps->copy_held = r->s.copy_sent;
    placing_hold(c, r);
    json_t *told = json_object_get(c->events_told, r->key);
    if (told) {
        wl_events_once(&r->acts, told);
    } else { /* kept only for a Workload that was told something */
        told = json_object();
        wl_events_once(&r->acts, told);
        if (json_object_size(told))
            json_object_set(c->events_told, r->key, told);
        json_decref(told);
    }
    struct err e = {0};
    c->cur = &r->pr;
    int rc = wlx_perform(&ops, r->key, r->wl, r->job, r->k, &r->acts, on_done, ps, &e);
    c->cur = NULL;
    if (rc < 0) {
        json_object_del(c->placing, r->key);
        if (strmap_get(&c->relays, r->key) == ps)
            strmap_del(&c->relays, r->key);
        if (strmap_get(&c->creating, r->key) == ps)
            strmap_del(&c->creating, r->key);
        pass_free(ps);
        log_warn(c->cfg.lg, "workload reconcile", "workload", r->key, "error", e.msg);
        return false;
    }
    return true;
}

/* Placement (when the decision needs one), decision, logs, perform, for a
 * Workload with our check. True when the key is taken care of (requeued, or
 * writes under way); false when it is to be forgotten. */
static bool reconcile(struct wlc *c, struct wq *q, struct recon *r)
{
    if (own_held(c, r)) {
        wq_forget(q, r->key);
        wq_add_after(q, r->key, 1.0);
        wq_done(q, r->key);
        return true;
    }
    snapshot_ours(c, r);
    placing_expire(c, r->key, r->job, r->s.now_ms);
    if (defer_unchanged(c, q, r))
        return true;
    const char *pinned = NULL;
    if (wl_wants_placement(&r->s, &pinned)) {
        if (placing_held(c, r->key, r->wl)) {
            log_v(c->cfg.lg, 5, "pass held: own placement not in the job store yet", "workload",
                  r->key);
            /* the job's update event queues the key again; the timer is a backstop */
            wq_forget(q, r->key);
            wq_add_after(q, r->key, 1.0);
            wq_done(q, r->key);
            return true;
        }
        bool start_wait;
        compute_placement(c, &r->s, pinned, &r->pr, &r->pmsg, &r->wp, &start_wait);
        /* only a job placed nowhere: one placed for an earlier admission has that placement
         * and its copies to undo (st_place), which cannot wait */
        if (start_wait && !(r->job && xf_placed_cluster(r->job))) {
            c->st.start_holds++;
            log_v(c->cfg.lg, 5, "pass held: a worker not known since the start may fit it",
                  "workload", r->key);
            /* the worker's change (known, its metrics) queues the key again (deps_note: the
             * pass read every cluster); the grace's end is a backstop */
            wq_forget(q, r->key);
            wq_add_after(q, r->key,
                         (double)(c->born_ms + AC_UNKNOWN_GRACE_MS - r->s.now_ms) / 1000.0);
            wq_done(q, r->key);
            return true;
        }
        r->s.placement = &r->wp;
    }
    r->s.defer_running = defer_wanted(c, r->key, r->s.now_ms);
    struct err e = {0};
    if (wl_decide(&r->s, &r->acts, &e) < 0) {
        log_warn(c->cfg.lg, "workload reconcile", "workload", r->key, "error", e.msg);
        return false;
    }
    defer_note(c, r->key, &r->acts, r->s.now_ms);
    defer_remember(c, r);
    if (log_v_enabled(c->cfg.lg, 5)) {
        char n[24];
        snprintf(n, sizeof n, "%zu", r->acts.n);
        char *out = wl_outcome_describe(&r->acts.outcome);
        log_v(c->cfg.lg, 5, "pass decided", "workload", r->key, "outcome", out, "actions", n,
              "deferred", r->acts.deferred ? "true" : "false", "wl_rv",
              jx_resource_version(r->wl) ? jx_resource_version(r->wl) : "", "job_rv",
              r->job && jx_resource_version(r->job) ? jx_resource_version(r->job) : "");
        free(out);
    }
    return pass_perform(c, r);
}

/* A reservation held for `key` and its copy on the reservation's cluster, not being removed
 * (resv_copy_seen: an old copy going away says nothing of the new placement's pods): the
 * copy's uid is recorded (its watch ADDED records it first, with or without a pass), so
 * metrics that list it in countedJobs with all its pods end the reservation (any kind; the
 * agent lists batch/v1 Job copies). A copy (a batch/v1 Job) whose pods are all ready is
 * bound, so the next metrics of the cluster show them and the reservation need not wait out
 * the whole settle time, from an older agent too (until then the same pods count twice: a
 * burst could use about half of a cluster's capacity). Other kinds keep the settle time. */
static void note_copy(struct wlc *c, const char *key, const struct recon *r)
{
    const char *cluster = NULL;
    if (!r->wl || !r->k || !place_resv_lookup(&c->resv, key, &cluster))
        return;
    const json_t *copy = NULL;
    for (size_t i = 0; i < r->cw.n && !copy; i++)
        if (r->cw.v[i].cluster && strcmp(r->cw.v[i].cluster, cluster) == 0)
            copy = r->cw.v[i].obj;
    if (!copy || !resv_copy_seen(c, key, r->wl, copy, cluster) ||
        r->k->status_rule != KIND_STATUS_JOB)
        return;
    long long pods = 0;
    const json_t *ps = jx_arr(r->wl, "spec.podSets");
    for (size_t i = 0; i < json_array_size(ps); i++)
        pods += jx_int(json_array_get(ps, i), "count", 0);
    if (pods > 0 && jx_int(copy, "status.ready", 0) >= pods)
        place_resv_pods_seen(&c->resv, key, now_ms(c));
}

static void process(struct wq *q, const char *key, void *ud)
{
    struct wlc *c = ud;
    c->st.reconciles++;
    log_v(c->cfg.lg, 5, "pass", "workload", key);
    if (c->cfg.src.synced && !c->cfg.src.synced(c->cfg.src.ud)) {
        /* back where it was: the start-up lists' pass stays behind the changes */
        wq_add_after_level(q, key, 1.0, wq_handed_level(q, key));
        wq_done(q, key);
        return;
    }
    c->pass_read = false;
    char *dkey = xstrdup(key); /* `key` is the queue's: wq_done may free it before the end */
    struct recon r;
    bool handled;
    bool taken = snapshot_take(c, key, wq_handed_level(q, key) == WQ_BACKGROUND, &r);
    if (!taken) {
        json_object_del(c->placing, key);
        json_object_del(c->written, key);
        json_object_del(c->copy_sent, key);
        json_object_del(c->relayed, key);
        json_object_del(c->refused, key);
        json_object_del(c->placed_logged, key);
        json_object_del(c->finished_logged, key);
        json_object_del(c->evicted_told, key);
        json_object_del(c->events_told, key);
        json_object_del(c->deferred, key);
        free(strmap_del(&c->defer_fp, key));
        strmap_del(&c->dispatching, key);
        handled = false;
    } else {
        if (!r.s.check_name) { /* our check gone: no dispatch of ours under way (review) */
            strmap_del(&c->dispatching, key);
            json_object_del(c->copy_sent, key);
        }
        note_copy(c, key, &r);
        handled =
            relay_kueue_reason(c, q, key, r.okey, &r.s) || (r.s.check_name && reconcile(c, q, &r));
    }
    if (!handled) {
        wq_forget(q, key);
        wq_done(q, key);
    }
    deps_note(c, dkey, taken && c->pass_read, taken && r.job ? xf_placed_cluster(r.job) : NULL);
    free(dkey);
    recon_release(&r);
    defer_flush(c);
}

/* ---- public --------------------------------------------------------------- */

/* Dispatch and status-return latencies: 50 ms .. ~7 min. */
static const double latency_buckets[] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};

static int register_metrics(struct wlc *c, struct metrics_registry *reg, struct err *e)
{
    const size_t nb = sizeof latency_buckets / sizeof latency_buckets[0];
    struct metrics_counter_vec *errs;
    struct metrics_gauge_vec *depth;
    if (!(c->m_placed =
              metrics_counter_vec_new(reg, "kueue_ks_workloads_placed_total",
                                      "Workloads dispatched to a worker cluster (copy created)",
                                      METRICS_LABELS("cluster"), e)) ||
        !(c->m_evicted = metrics_counter_vec_new(
              reg, "kueue_ks_workloads_evicted_total",
              "Placements undone (quota reservation lost or workload deactivated)",
              METRICS_LABELS("cluster"), e)) ||
        !(c->m_rejected =
              metrics_counter_new(reg, "kueue_ks_workloads_rejected_total",
                                  "Workloads whose check was Rejected (fit no cluster)", e)) ||
        !(c->m_dispatch = metrics_histogram_new(
              reg, "kueue_ks_dispatch_latency_seconds",
              "Quota reservation (QuotaReserved lastTransitionTime) to worker copy created",
              latency_buckets, nb, e)) ||
        !(c->m_return = metrics_histogram_new(
              reg, "kueue_ks_status_return_latency_seconds",
              "Worker copy terminal (condition lastTransitionTime) to final hub status written",
              latency_buckets, nb, e)) ||
        !(c->m_up = metrics_gauge_vec_new(
              reg, "kueue_ks_worker_up",
              "1 when the worker cluster is usable (Ready, fresh metrics, connected), else 0",
              METRICS_LABELS("cluster"), e)) ||
        !(errs = metrics_counter_vec_shared(reg, "kueue_ks_reconcile_errors_total",
                                            "Failed reconciles (writes) per controller",
                                            METRICS_LABELS("controller"), e)) ||
        !(depth = metrics_gauge_vec_shared(reg, "kueue_ks_workqueue_depth",
                                           "Keys waiting in each controller's work queue",
                                           METRICS_LABELS("controller"), e)))
        return e ? e->code : -EINVAL;
    c->m_errors = metrics_counter_vec_with(errs, "workload");
    c->m_depth = metrics_gauge_vec_with(depth, "workload");
    return 0;
}

int wlc_new(const struct wlc_config *cfg, struct wlc **out, struct err *e)
{
    *out = NULL;
    if (!cfg || !cfg->loop || !cfg->src.workloads || !cfg->src.admission_checks ||
        !cfg->src.flavors || !cfg->src.cluster_metrics || !cfg->src.jobs || !cfg->ops.hub)
        return err_set(e, -EINVAL, "workload controller: loop, stores and hub client are required");
    struct wlc *c = xcalloc(1, sizeof(*c));
    c->cfg = *cfg;
    if (cfg->metrics && register_metrics(c, cfg->metrics, e) < 0) {
        free(c);
        return e ? e->code : -EINVAL;
    }
    c->pending_placed = json_object();
    c->ac_inflight = json_object();
    ev_timer_init(&c->ac_retry, ac_retry_cb, 1.0, 0);
    c->ac_retry.data = c;
    ev_init(&c->ac_grace, ac_retry_cb);
    c->ac_grace.data = c;
    c->placing = json_object();
    c->copy_sent = json_object();
    c->written = json_object();
    c->relayed = json_object();
    c->refused = json_object();
    c->placed_logged = json_object();
    c->finished_logged = json_object();
    c->evicted_told = json_object();
    c->events_told = json_object();
    c->gc_said = json_object();
    c->deferred = json_object();
    keyset_init(&c->placed, keyset_str_key);
    c->born_ms = now_ms(c);
    if (c->cfg.metrics_stale_after_ms <= 0)
        c->cfg.metrics_stale_after_ms = 120000;
    if (c->cfg.opts.worker_lost_timeout_ms <= 0)
        c->cfg.opts.worker_lost_timeout_ms = 300000;
    if (c->cfg.opts.unschedulable_timeout_ms <= 0)
        c->cfg.opts.unschedulable_timeout_ms = 300000;
    if (c->cfg.opts.exclusion_ms <= 0)
        c->cfg.opts.exclusion_ms = 600000;
    if (c->cfg.opts.no_fit_requeue_ms <= 0)
        c->cfg.opts.no_fit_requeue_ms = 5000;
    if (c->cfg.opts.pin_unknown_requeue_ms <= 0)
        c->cfg.opts.pin_unknown_requeue_ms = 30000;
    if (c->cfg.opts.quiet_new_ms == 0)
        c->cfg.opts.quiet_new_ms = 2000;
    else if (c->cfg.opts.quiet_new_ms < 0) /* asked for none */
        c->cfg.opts.quiet_new_ms = 0;
    if (!c->cfg.opts.origin)
        c->cfg.opts.origin = "kueue-ks";
    place_resv_init(&c->resv);
    strmap_init(&c->parsed_cm);
    c->unusable_since = json_object();
    struct wq_opts qo = {.loop = cfg->loop,
                         .name = "workloads",
                         .workers = cfg->workers > 0 ? cfg->workers : 4,
                         .process = process,
                         .ud = c};
    c->q = wq_new(&qo);
    *out = c;
    return 0;
}

void wlc_free(struct wlc *c)
{
    if (!c)
        return;
    wq_free(c->q);
    place_resv_free(&c->resv);
    strmap_free(&c->parsed_cm, parsed_cm_free);
    strmap_free(&c->waiting, NULL);
    keyset_free_elems(&c->placed, free);
    strmap_free(&c->seen_usable, NULL);
    strmap_free(&c->dispatching, NULL);
    strmap_free(&c->relays, NULL);
    strmap_free(&c->creating, NULL);
    strmap_free(&c->defer_fp, free);
    json_decref(c->deferred);
    json_decref(c->unusable_since);
    json_decref(c->pending_placed);
    json_decref(c->ac_inflight);
    ev_timer_stop(c->cfg.loop, &c->ac_retry);
    ev_timer_stop(c->cfg.loop, &c->ac_grace);
    json_decref(c->placing);
    json_decref(c->copy_sent);
    json_decref(c->written);
    json_decref(c->relayed);
    json_decref(c->refused);
    json_decref(c->placed_logged);
    json_decref(c->finished_logged);
    json_decref(c->evicted_told);
    json_decref(c->events_told);
    json_decref(c->gc_said);
    free(c);
}

void wlc_enqueue(struct wlc *c, const char *key)
{
    wq_add(c->q, key);
}

/* What wants_placement() reads of a Workload and of its job (wl_wants_placement, our_check,
 * owner_kind and the Event it may write): the passes over every Workload read views of these
 * (store_get_view), not the whole objects, whose specs and admissions are most of them
 * (test_wl: the decision is the same on the views). */
const char *const wlc_workload_view[] = {"apiVersion",
                                         "kind",
                                         "metadata.name",
                                         "metadata.namespace",
                                         "metadata.uid",
                                         "metadata.resourceVersion",
                                         "metadata.ownerReferences",
                                         "spec.active",
                                         "status.conditions",
                                         "status.admissionChecks",
                                         NULL};
const char *const wlc_job_view[] = {"metadata.uid", "metadata.labels", "metadata.annotations",
                                    NULL};
/* What wlc_on_workload and wlc_on_job read of an object a list adds (its key, version, uid
 * and labels). */
const char *const wlc_workload_listed_view[] = {"metadata.name", "metadata.namespace",
                                                "metadata.resourceVersion", NULL};
const char *const wlc_job_listed_view[] = {"metadata.name",   "metadata.namespace",
                                           "metadata.uid",    "metadata.resourceVersion",
                                           "metadata.labels", NULL};

/* Whether a pass of `wl` would place its job (wl_wants_placement), from the stores alone:
 * the Workload (at least wlc_workload_view), its hub job, our check. Cheap (no copies, no
 * clusters). */
static bool wants_placement(struct wlc *c, const json_t *wl)
{
    const char *check = wl ? our_check(c, wl) : NULL;
    if (!wl_check_pending(wl, check))
        return false; /* before its job is read from the store */
    json_t *owner = jx_owner_controller(wl);
    const struct kind_def *k = owner ? owner_kind(c, wl, owner) : NULL;
    struct store *js = k && c->cfg.src.jobs ? c->cfg.src.jobs(c->cfg.src.ud, k) : NULL;
    const char *name = owner ? jx_str(owner, "name", NULL) : NULL;
    if (!js || !name)
        return false;
    char *okey = jx_key_make(jx_namespace(wl), name);
    json_t *job = store_get_view(js, okey, wlc_job_view); /* a pass's read: not cached */
    free(okey);
    const char *owner_uid = jx_str(owner, "uid", NULL);
    bool wants = false;
    if (!job || !owner_uid || !jx_uid(job) || strcmp(owner_uid, jx_uid(job)) == 0) {
        /* else a new job with the same name: not this workload's */
        struct wl_snapshot s = {.workload = wl, .job = job, .check_name = check};
        wants = wl_wants_placement(&s, NULL);
    }
    json_decref(job);
    return wants;
}

/* Queue `key` of a pass over many Workloads: ahead when it wants a placement, else behind
 * the changes (WQ_BACKGROUND): at a restart a reservation or a copy's status that comes by
 * watch does not wait behind a pass over 10,000 Workloads. */
static void add_passing(struct wlc *c, const char *key, const json_t *wl)
{
    if (wants_placement(c, wl))
        wq_add_urgent(c->q, key);
    else
        wq_add_level(c->q, key, WQ_BACKGROUND);
}

/* Queue `key` for a change of one of its objects: ahead while its dispatch is under way
 * (placed, no copy yet), else in order. After a placement the pass that makes the copy
 * waits for the placement's own Workload event (own_held): in order, that event would
 * queue it behind every key of a pass over all Workloads (a restart's), seconds at
 * N = 10,000 (bench-scale's first_dispatch_s). */
static void add_changed(struct wlc *c, const char *key)
{
    if (strmap_get(&c->dispatching, key))
        wq_add_level(c->q, key, WQ_FIRST); /* as a hub job's event */
    else
        wq_add(c->q, key);
}

void wlc_on_workload(struct wlc *c, const json_t *wl)
{
    char *key = jx_obj_key(wl);
    log_v(c->cfg.lg, 5, "workload event", "workload", key ? key : "", "rv",
          jx_resource_version(wl) ? jx_resource_version(wl) : "");
    if (key)
        add_changed(c, key);
    free(key);
}

/*
 * A hub job's update that is the echo of a pass's own status relay (wl_action.relay): the
 * update from the version that pass read to the one its patch answered, from a watch (an
 * update of a list can fold another writer's change into it), and no pass of the key held
 * for it (own_held). The relay's pass decided on everything else as it is; a pass now would
 * decide the same and write nothing (one of about four passes per dispatch:
 * docs/performance.md). The update often comes before the answer (the server sends the event
 * first): then the pass still out notes it, and its answer settles it (echo_settle).
 */
static bool echo_skip(struct wlc *c, const char *key, const json_t *old, const json_t *obj,
                      bool relist)
{
    const char *ov = old ? jx_resource_version(old) : NULL, *nv = jx_resource_version(obj);
    if (relist || !ov || !nv || strcmp(ov, nv) == 0) /* a resync's is no write */
        return false;
    struct pass *p = strmap_get(&c->relays, key);
    if (p) { /* the relay's answer is still out: it settles this (echo_settle) */
        const char *shown = jx_annotation(obj, XF_ANN_REMOTE_STATUS);
        if (p->echo_seen || !p->job_rv || strcmp(ov, p->job_rv) != 0 || !p->relayed || !shown ||
            strcmp(shown, p->relayed) != 0) /* not (only) the relay: at once */
            return false;
        p->echo_seen = xstrdup(nv);
        return true;
    }
    json_t *w = json_object_get(c->written, key);
    const char *from = jx_str(w, "echo_from", NULL), *to = jx_str(w, "echo_to", NULL);
    if (!from || !to || jx_bool(w, "held", false) || strcmp(ov, from) != 0 || strcmp(nv, to) != 0)
        return false;
    c->st.echo_skips++;
    log_v(c->cfg.lg, 5, "own status relay in the job store, no pass", "workload", key, "rv", nv);
    json_object_del(c->written, key);
    return true;
}

/* `relist`: an update from a list (echo_skip); `copy`: how a copy's change came (wlc_on_copy;
 * XF_COPY_OTHER for a hub job's), `cluster` the copy's worker. */
static void on_job(struct wlc *c, const json_t *old, const json_t *obj, bool relist,
                   enum xf_copy_change copy, const char *cluster)
{
    const char *uid = jx_label(obj, XF_LABEL_ORIGIN_UID);
    bool hub = !uid; /* a copy carries its hub job's uid */
    if (!uid)
        uid = jx_uid(obj);
    if (!uid)
        return;
    json_t *keys = store_index_keys(c->cfg.src.workloads, WLC_INDEX_OWNER, uid, NULL);
    for (size_t i = 0; keys && i < json_array_size(keys); i++) {
        const char *k = json_string_value(json_array_get(keys, i));
        log_v(c->cfg.lg, 5, hub ? "job event" : "copy event", "workload", k, "rv",
              jx_resource_version(obj) ? jx_resource_version(obj) : "");
        /* the copy's uid for its placement's reservation as soon as it exists, before its
         * pods, even when no pass follows (copy_sight_skip); only from a watch's ADDED: a
         * DELETED (told as XF_COPY_STATUS) may show an old copy without a deletionTimestamp,
         * and every other change queues a pass, whose note_copy reads the store */
        if (!hub && copy == XF_COPY_ADDED)
            (void)resv_copy_seen(c, k, NULL, obj, cluster);
        if (hub) {
            if (!echo_skip(c, k, old, obj, relist))
                wq_add_level(c->q, k, WQ_FIRST); /* ahead of the start-up's reservations too */
        } else if (copy == XF_COPY_ADDED && copy_sight_skip(c, k, obj, cluster)) {
            continue;
        } else if (copy == XF_COPY_STATUS || copy == XF_COPY_ADDED) {
            wq_add_level(c->q, k, WQ_FIRST); /* behind a burst's placements it waited seconds */
        } else if (copy == XF_COPY_LISTED && !strmap_get(&c->dispatching, k)) {
            wq_add_level(c->q, k, WQ_BACKGROUND);
        } else {
            add_changed(c, k);
        }
    }
    json_decref(keys);
}

void wlc_on_job(struct wlc *c, const json_t *obj)
{
    on_job(c, NULL, obj, false, XF_COPY_OTHER, NULL);
}

void wlc_on_job_update(struct wlc *c, const json_t *old, const json_t *obj, bool relist)
{
    on_job(c, old, obj, relist, XF_COPY_OTHER, NULL);
}

void wlc_on_copy(struct wlc *c, const json_t *copy, const char *cluster, enum xf_copy_change how)
{
    on_job(c, NULL, copy, false, how, cluster);
}

static int enqueue_one(const char *k, void *ud)
{
    struct wlc *c = ud;
    /* Queued already: its pass reads the stores when it runs. At a restart the lists' pass
     * queued every key, and each change of the workers before the queue drains (reachable,
     * synced) came back here: a read of every Workload and its job each time, decoded from
     * packed stores (docs/performance.md "Start-up: passes and heap trims"). */
    if (wq_queued(c->q, k))
        return 0;
    json_t *wl = store_get_view(c->cfg.src.workloads, k, wlc_workload_view); /* one at a time */
    add_passing(c, k, wl);
    json_decref(wl);
    return 0;
}

void wlc_enqueue_all(struct wlc *c)
{
    store_foreach_key(c->cfg.src.workloads, enqueue_one, c);
}

void wlc_on_metrics(struct wlc *c, const json_t *cm)
{
    size_t n = place_resv_counted(&c->resv, jx_name(cm), cm);
    c->st.counted_drops += n;
    if (n > 0)
        log_v(c->cfg.lg, 4, "reservations ended by the counts of the cluster's metrics", "cluster",
              jx_name(cm), "count", LOG_UINT(n));
}

void wlc_on_cluster(struct wlc *c, const char *cluster)
{
    if (!cluster_changed(c, cluster)) {
        /* a report of copies whose pods cannot be scheduled there concerns the Workloads
         * placed on the cluster, whose recovery clock it starts (wl.h, unschedulable) */
        json_t *cm = store_get(c->cfg.src.cluster_metrics, cluster);
        if (json_array_size(jx_arr(cm, "status.unschedulableJobs")) > 0)
            enqueue_placed_on(c, cluster, WQ_PLAIN);
    }
    strmap_foreach(&c->waiting, enqueue_key, c->q);
}

struct check_walk {
    struct wlc *c;
    bool any;
};

static int check_cluster(const char *key, json_t *obj, void *ud)
{
    (void)obj;
    struct check_walk *w = ud;
    w->any |= cluster_changed(w->c, key);
    return 0;
}

void wlc_check_clusters(struct wlc *c)
{
    struct check_walk w = {.c = c};
    store_foreach(c->cfg.src.cluster_metrics, check_cluster, &w);
    if (w.any)
        strmap_foreach(&c->waiting, enqueue_key, c->q);
}

struct ac_walk {
    struct wlc *c;
    int64_t now;
    size_t usable, registered;
    size_t unknown; /* not usable and not known since the start (src.known) */
    bool held;      /* a write was held by the start-up grace */
    size_t writes;
};

static int count_cluster(const char *key, json_t *obj, void *ud)
{
    (void)obj;
    struct ac_walk *w = ud;
    bool reach;
    int64_t since;
    w->registered++;
    /* reachability is per worker, not per kind: the Job copies store stands for it */
    bool up = cluster_usable(w->c, key, kind_lookup("batch/v1", "Job"), w->now, &reach, &since);
    if (up)
        w->usable++;
    else if (w->c->cfg.src.known && !w->c->cfg.src.known(w->c->cfg.src.ud, key))
        w->unknown++;
    if (w->c->m_up) {
        metrics_gauge_set(metrics_gauge_vec_with(w->c->m_up, key), up ? 1.0 : 0.0);
        /* exported at 0 from the start (rate() needs the first sample) */
        metrics_counter_add(metrics_counter_vec_with(w->c->m_placed, key), 0);
        metrics_counter_add(metrics_counter_vec_with(w->c->m_evicted, key), 0);
    }
    return 0;
}

struct ac_call {
    struct wlc *c;
    char *name;
    char *active, *message; /* the Active condition written */
};

static void on_ac_done(void *ud, const struct kube_result *r)
{
    struct ac_call *ac = ud;
    struct wlc *c = ac->c;
    json_object_del(c->ac_inflight, ac->name);
    if (r->rc == -ECANCELED || r->rc == -ESHUTDOWN) {
        /* stopping */
    } else if (r->rc < 0) {
        c->st.ac_failures++;
        /* a conflict only means our store was behind: retried shortly */
        if (r->status == 409)
            log_v(c->cfg.lg, 1, "AdmissionCheck status write conflicted, retrying",
                  "admissionCheck", ac->name);
        else
            log_warn(c->cfg.lg, "AdmissionCheck status write failed, retrying", "admissionCheck",
                     ac->name, "error", r->err->msg);
        if (!ev_is_active(&c->ac_retry))
            ev_timer_start(c->cfg.loop, &c->ac_retry);
    } else {
        c->st.ac_writes++;
        /* Kueue admits through the check only while it is Active (an inactive one makes its
         * ClusterQueues inactive): a user following the log sees when and why that changes */
        log_info(c->cfg.lg, "admission check status written", "admissionCheck", ac->name, "active",
                 ac->active ? ac->active : "", "why", ac->message ? ac->message : "");
    }
    free(ac->name);
    free(ac->active);
    free(ac->message);
    free(ac);
}

static void ac_retry_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    wlc_sync_admission_checks(t->data);
}

static int sync_ac(const char *key, json_t *ac, void *ud)
{
    struct ac_walk *w = ud;
    if (!acc_is_ours(ac))
        return 0;
    char nowbuf[40];
    fmt_time(w->now, nowbuf, sizeof nowbuf);
    json_t *patch = NULL;
    if (json_object_get(w->c->ac_inflight, key))
        return 0; /* one write at a time: its informer update triggers the next sync */
    /* a restart is no outage: Active=False (Kueue stops admitting through the check) waits
     * until every worker is known, the worker change syncs again (controller.h) */
    if (w->usable == 0 && w->unknown > 0 && w->now - w->c->born_ms < AC_UNKNOWN_GRACE_MS) {
        w->held = true;
        return 0;
    }
    if (acc_decide(ac, w->usable, w->registered, nowbuf, &patch, NULL) <= 0)
        return 0;
    const char *ver = w->c->cfg.ops.kueue_version ? w->c->cfg.ops.kueue_version : "v1beta1";
    char *path = kube_path("kueue.x-k8s.io", ver, "admissionchecks", NULL, key, "status");
    struct err e = {0};
    struct ac_call *call = xcalloc(1, sizeof(*call));
    call->c = w->c;
    call->name = xstrdup(key);
    const json_t *cond = jx_find_by(jx_arr(patch, "status.conditions"), "type", "Active");
    call->active = xstrdup(jx_str(cond, "status", ""));
    call->message = xstrdup(jx_str(cond, "message", ""));
    if (kube_client_patch(w->c->cfg.ops.hub, path, KUBE_CT_MERGE_PATCH, patch, on_ac_done, call,
                          NULL, &e) == 0) {
        json_object_set_new(w->c->ac_inflight, key, json_true());
        w->writes++;
    } else {
        log_warn(w->c->cfg.lg, "AdmissionCheck status write", "error", e.msg);
        free(call->name);
        free(call->active);
        free(call->message);
        free(call);
    }
    free(path);
    json_decref(patch);
    return 0;
}

size_t wlc_sync_admission_checks(struct wlc *c)
{
    struct ac_walk w = {.c = c, .now = now_ms(c)};
    store_foreach(c->cfg.src.cluster_metrics, count_cluster, &w);
    store_foreach(c->cfg.src.admission_checks, sync_ac, &w);
    if (w.held && !ev_is_active(&c->ac_grace)) {
        /* the grace's end is a change of its own: nothing else may come to sync then */
        ev_timer_set(&c->ac_grace, (double)(c->born_ms + AC_UNKNOWN_GRACE_MS - w.now) / 1000.0, 0);
        ev_timer_start(c->cfg.loop, &c->ac_grace);
    }
    return w.writes;
}

static int collect_uid(const char *key, json_t *obj, void *ud)
{
    (void)key;
    if (jx_uid(obj))
        json_object_set_new(ud, jx_uid(obj), json_true());
    return 0;
}

static bool uid_in(void *ud, const char *uid)
{
    return json_object_get(ud, uid) != NULL;
}

static void on_gc_done(void *ud, const char *key, const struct wlx_result *r)
{
    struct wlc *c = ud;
    if (r->rc < 0) {
        c->gc_pending = true; /* the next tick sweeps again */
        log_warn(c->cfg.lg, "orphan GC: delete failed", "pass", key, "error", r->err.msg);
    }
}

/* The kinds with a hub store (src.kinds, default the table). */
static const struct kind_def *gc_kind(const struct wlc *c, size_t i, size_t *n)
{
    const struct kind_def *const *watched =
        c->cfg.src.kinds ? c->cfg.src.kinds(c->cfg.src.ud, n) : NULL;
    if (watched)
        return i < *n ? watched[i] : NULL;
    const struct kind_def *tab = kind_table(n);
    return i < *n ? &tab[i] : NULL;
}

struct gc_walk {
    struct wlc *c;
    const char *key; /* wlc_gc_key: the one key looked at; NULL = every copy */
    size_t deleted;
    json_t *said; /* where the orphans seen go: the next c->gc_said (sweep), or c->gc_said */
};

/* One line per hub job deleted whose copy is removed, once per copy. */
static void log_gc(struct gc_walk *g, const struct kind_def *kd, const struct wl_actions *acts)
{
    for (size_t i = 0; i < acts->n; i++) {
        const struct wl_action *x = &acts->v[i];
        if (x->type != WL_ACT_DELETE_COPY)
            continue;
        char *job = jx_key_make(x->ns, x->name);
        char *id = xasprintf("%s/%s/%s/%s", x->cluster, kd->kind, job, x->uid ? x->uid : "");
        if (!json_object_get(g->c->gc_said, id))
            log_info(g->c->cfg.lg, "job deleted on the hub: removing its copy", "job", job, "kind",
                     kd->kind, "cluster", x->cluster);
        json_object_set_new(g->said, id, json_true());
        free(id);
        free(job);
    }
}

/* Perform the d deletions of orphans in acts (copies of kind kd on `cluster`); frees acts.
 * Returns how many were started. */
static size_t gc_perform(struct gc_walk *g, const char *cluster, const struct kind_def *kd,
                         struct wl_actions *acts, size_t d)
{
    struct wlc *c = g->c;
    if (d > 0) {
        log_gc(g, kd, acts);
        char *key = xasprintf("gc/%s/%s", cluster, kd->resource);
        struct wlx_ops ops = c->cfg.ops;
        ops.reserve = NULL;
        ops.unreserve = NULL;
        if (wlx_perform(&ops, key, NULL, NULL, kd, acts, on_gc_done, c, NULL) < 0)
            d = 0;
        free(key);
    }
    wl_actions_free(acts);
    return d;
}

/* What wl_gc_orphans reads of a copy. */
static const char *const GC_VIEW[] = {"metadata", NULL};

/* Delete the orphans among v[0..n) (copies of kind kd on `cluster`). */
static size_t gc_delete(struct gc_walk *g, const char *cluster, const struct kind_def *kd,
                        const json_t *const *v, size_t n, bool (*hub_has)(void *, const char *),
                        void *ud)
{
    struct wl_actions acts;
    wl_actions_init(&acts);
    size_t d = wl_gc_orphans(cluster, v, n, g->c->cfg.opts.origin, hub_has, ud, &acts);
    return gc_perform(g, cluster, kd, &acts, d);
}

/* A hub job of the store `ud` has this uid (WLC_INDEX_UID); without the index,
 * yes: the sweep judges it. */
static bool uid_indexed(void *ud, const char *uid)
{
    size_t n = 0;
    return store_index_count(ud, WLC_INDEX_UID, uid, &n, NULL) < 0 || n > 0;
}

static int gc_cluster(const char *cluster, json_t *cm, void *ud)
{
    (void)cm;
    struct gc_walk *g = ud;
    struct wlc *c = g->c;
    size_t nk = 0;
    const struct kind_def *kd;
    for (size_t i = 0; (kd = gc_kind(c, i, &nk)) != NULL; i++) {
        struct store *js = c->cfg.src.jobs(c->cfg.src.ud, kd);
        struct store *cs = copies_store(c, cluster, kd);
        if (!js || !cs)
            continue;
        /* The sweep reads every copy and, without the uid index, every hub job: one decoded
         * tree at a time (store_get_ref), not all of them until the next trim (at 4,000 jobs
         * the sweep held 17 MB of trees; docs/performance.md "Scale"). */
        json_t *uids = store_index_keys(js, WLC_INDEX_UID, "", NULL);
        bool indexed = uids != NULL;
        json_decref(uids);
        uids = NULL;
        if (!indexed) {
            uids = json_object();
            json_t *keys = store_keys(js);
            for (size_t j = 0; j < json_array_size(keys); j++) {
                json_t *job = store_get_ref(js, json_string_value(json_array_get(keys, j)));
                if (job)
                    collect_uid(NULL, job, uids);
                json_decref(job);
            }
            json_decref(keys);
        }
        /* ours by the origin index when the store has it (the shared Job store holds every
         * hub-work Job of the worker); wl_gc_orphans judges only ours either way */
        json_t *keys = store_index_keys(cs, XF_INDEX_ORIGIN, c->cfg.opts.origin, NULL);
        if (!keys)
            keys = store_keys(cs);
        struct wl_actions acts;
        wl_actions_init(&acts);
        size_t d = 0;
        for (size_t j = 0; j < json_array_size(keys); j++) {
            json_t *copy = store_get_view(cs, json_string_value(json_array_get(keys, j)), GC_VIEW);
            const json_t *v = copy;
            if (copy)
                d += wl_gc_orphans(cluster, &v, 1, c->cfg.opts.origin,
                                   indexed ? uid_indexed : uid_in, indexed ? (void *)js : uids,
                                   &acts);
            json_decref(copy);
        }
        g->deleted += gc_perform(g, cluster, kd, &acts, d);
        json_decref(keys);
        json_decref(uids);
    }
    return 0;
}

size_t wlc_gc(struct wlc *c)
{
    if (!c->cfg.opts.direct || (c->cfg.src.synced && !c->cfg.src.synced(c->cfg.src.ud)))
        return 0;
    c->gc_pending = false;
    struct gc_walk g = {.c = c, .said = json_object()};
    store_foreach(c->cfg.src.cluster_metrics, gc_cluster, &g);
    json_decref(c->gc_said);
    c->gc_said = g.said;
    c->st.gc_deleted += g.deleted;
    return g.deleted;
}

static int gc_key_cluster(const char *cluster, json_t *cm, void *ud)
{
    (void)cm;
    struct gc_walk *g = ud;
    size_t nk = 0;
    const struct kind_def *kd;
    for (size_t i = 0; (kd = gc_kind(g->c, i, &nk)) != NULL; i++) {
        struct store *js = g->c->cfg.src.jobs(g->c->cfg.src.ud, kd);
        struct store *cs = copies_store(g->c, cluster, kd);
        /* a view: at a copies relist every listed copy comes here (copy_event), and its
         * whole tree would be decoded a second time and cached (store.h) */
        json_t *copy = js && cs ? store_get_view(cs, g->key, GC_VIEW) : NULL;
        const json_t *v = copy;
        if (copy)
            g->deleted += gc_delete(g, cluster, kd, &v, 1, uid_indexed, js);
        json_decref(copy);
    }
    return 0;
}

size_t wlc_gc_key(struct wlc *c, const char *key)
{
    if (!c->cfg.opts.direct || !key)
        return 0;
    if (c->cfg.src.synced && !c->cfg.src.synced(c->cfg.src.ud)) {
        c->gc_pending = true; /* a missing hub job would look deleted: the sweep judges later */
        return 0;
    }
    /* the line for a copy is logged once: this check adds to what the sweeps saw */
    struct gc_walk g = {.c = c, .key = key, .said = c->gc_said};
    store_foreach(c->cfg.src.cluster_metrics, gc_key_cluster, &g);
    c->st.gc_deleted += g.deleted;
    return g.deleted;
}

bool wlc_gc_pending(const struct wlc *c)
{
    return c->gc_pending;
}

bool wlc_no_apply(struct wlc *c)
{
    bool was = c->cfg.ops.server_side_apply;
    c->cfg.ops.server_side_apply = false;
    return was;
}

bool wlc_sweep_due(struct wlc *c, double now)
{
    if (!wlc_placing(c)) {
        c->sweep_held = false;
        return true;
    }
    if (!c->sweep_held) {
        c->sweep_held = true;
        c->sweep_held_since = now;
    }
    if (now - c->sweep_held_since < WLC_SWEEP_WAIT_S)
        return false;
    c->sweep_held = false;
    return true;
}

bool wlc_placing(const struct wlc *c)
{
    struct wq_stats st;
    wq_stats(c->q, &st);
    return st.depth > st.background || strmap_len(&c->dispatching) > 0;
}

void wlc_get_stats(const struct wlc *c, struct wlc_stats *out)
{
    *out = c->st;
    out->reservations = c->resv.n;
    out->parsed_clusters = strmap_len(&c->parsed_cm);
    out->waiting = strmap_len(&c->waiting);
    out->placed = keyset_len(&c->placed);
    struct wq_stats qs;
    wq_stats(c->q, &qs);
    out->queued = qs.depth;
    out->queued_urgent = qs.urgent;
    out->queued_first = qs.first;
    out->queued_background = qs.background;
    out->server_side_apply = c->cfg.ops.server_side_apply;
}
