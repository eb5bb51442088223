/* lease: leader election on a coordination.k8s.io/v1 Lease (see lease.h). */
#include "pkg/kube/lease.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/rng.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#define LEASE_GROUP "coordination.k8s.io"

/* The fields of a Lease spec that make up a leader election record. */
struct record {
    char *holder; /* "" when none */
    long duration_s;
    char *acquire; /* MicroTime or "" */
    char *renew;
    long transitions;
};

enum state { LS_INIT, LS_ACQUIRING, LS_LEADING, LS_STOPPING, LS_STOPPED };
enum step { STEP_NONE, STEP_FAST_PUT, STEP_GET, STEP_CREATE, STEP_PUT, STEP_RELEASE };

struct lease_elector {
    struct kube_client *client;
    struct ev_loop *loop;
    const struct logger *lg;
    char *ns, *name, *identity, *desc; /* desc: "ns/name" for logs */
    char *item_path, *coll_path;
    double ld, rd, rp;
    bool release_on_cancel;
    struct lease_callbacks cb;

    enum state state;
    bool led; /* on_started_leading was called */
    ev_timer timer;
    struct kube_call *call;
    enum step step;
    struct record pending; /* the record the current try wants to write */

    json_t *lease; /* last Lease object returned by the server (for resourceVersion) */
    struct record observed;
    bool have_observed;
    double observed_time; /* monotonic seconds when `observed` was set */
    char *observed_raw;   /* canonical JSON of the last record read with GET */
    char *reported_leader;

    bool in_cycle; /* a renew cycle is running (tries failing) */
    double cycle_start;
    struct rng rng;

    bool stop_called;
    bool release_wanted;
    void (*stop_done)(void *ud, int rc);
    void *stop_ud;
    int stop_rc;
};

/* ---- records ----------------------------------------------------------- */

static void record_clear(struct record *r)
{
    FREE_AND_NULL(r->holder);
    FREE_AND_NULL(r->acquire);
    FREE_AND_NULL(r->renew);
    r->duration_s = 0;
    r->transitions = 0;
}

static void record_copy(struct record *dst, const struct record *src)
{
    record_clear(dst);
    dst->holder = xstrdup(src->holder ? src->holder : "");
    dst->acquire = xstrdup(src->acquire ? src->acquire : "");
    dst->renew = xstrdup(src->renew ? src->renew : "");
    dst->duration_s = src->duration_s;
    dst->transitions = src->transitions;
}

static const char *json_str_or(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

static void record_from_lease(const json_t *lease, struct record *r)
{
    record_clear(r);
    const json_t *spec = json_object_get(lease, "spec");
    r->holder = xstrdup(json_str_or(spec, "holderIdentity", ""));
    r->acquire = xstrdup(json_str_or(spec, "acquireTime", ""));
    r->renew = xstrdup(json_str_or(spec, "renewTime", ""));
    r->duration_s = (long)json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
    r->transitions = (long)json_integer_value(json_object_get(spec, "leaseTransitions"));
}

static json_t *record_to_spec(const struct record *r)
{
    json_t *spec = json_object();
    json_object_set_new(spec, "holderIdentity", json_string(r->holder ? r->holder : ""));
    json_object_set_new(spec, "leaseDurationSeconds", json_integer(r->duration_s));
    if (r->acquire && *r->acquire)
        json_object_set_new(spec, "acquireTime", json_string(r->acquire));
    if (r->renew && *r->renew)
        json_object_set_new(spec, "renewTime", json_string(r->renew));
    json_object_set_new(spec, "leaseTransitions", json_integer(r->transitions));
    return spec;
}

static char *record_raw(const struct record *r)
{
    json_t *spec = record_to_spec(r);
    char *s = jx_dumps_flags(spec, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(spec);
    if (!s)
        abort(); /* only fails on OOM */
    return s;
}

/* ---- config ------------------------------------------------------------ */

int lease_config_validate(struct lease_config *cfg, struct err *e)
{
    if (!cfg->namespace_ || !*cfg->namespace_ || !cfg->name || !*cfg->name)
        return err_set(e, -EINVAL, "leader election: lease namespace and name are required");
    if (cfg->identity && !*cfg->identity)
        return err_set(e, -EINVAL, "leader election: identity must not be empty");
    if (cfg->lease_duration_s == 0)
        cfg->lease_duration_s = LEASE_DEFAULT_DURATION_S;
    if (cfg->renew_deadline_s == 0)
        cfg->renew_deadline_s = LEASE_DEFAULT_RENEW_DEADLINE_S;
    if (cfg->retry_period_s == 0)
        cfg->retry_period_s = LEASE_DEFAULT_RETRY_PERIOD_S;
    if (!(cfg->retry_period_s > 0) || !(cfg->renew_deadline_s > 0) || !(cfg->lease_duration_s > 0))
        return err_set(e, -EINVAL, "leader election: durations must be positive");
    if (!(cfg->lease_duration_s > cfg->renew_deadline_s))
        return err_set(e, -EINVAL,
                       "leader election: lease duration (%gs) must be greater than the renew "
                       "deadline (%gs)",
                       cfg->lease_duration_s, cfg->renew_deadline_s);
    if (!(cfg->renew_deadline_s > LEASE_JITTER_FACTOR * cfg->retry_period_s))
        return err_set(e, -EINVAL,
                       "leader election: renew deadline (%gs) must be greater than %.1f x the "
                       "retry period (%gs)",
                       cfg->renew_deadline_s, LEASE_JITTER_FACTOR, cfg->retry_period_s);
    return 0;
}

static void fill_random(void *p, size_t n)
{
    unsigned char *b = p;
    while (n) {
        ssize_t got = getrandom(b, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            /* No entropy source: fall back to time and pid (identity uniqueness only). */
            uint64_t v = clock_mono_ns() ^ ((uint64_t)getpid() << 32);
            for (size_t i = 0; i < n; i++) {
                v = v * 6364136223846793005ULL + 1442695040888963407ULL;
                b[i] = (unsigned char)(v >> 56);
            }
            return;
        }
        b += got;
        n -= (size_t)got;
    }
}

char *lease_default_identity(void)
{
    char host[256] = {0};
    if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
        snprintf(host, sizeof(host), "unknown");
    unsigned char u[16];
    fill_random(u, sizeof(u));
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    return xasprintf("%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                     host, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                     u[12], u[13], u[14], u[15]);
}

/* ---- helpers ----------------------------------------------------------- */

static bool is_leader(const struct lease_elector *le)
{
    return le->have_observed && strcmp(le->observed.holder, le->identity) == 0;
}

static bool lease_valid(const struct lease_elector *le, double now)
{
    return le->have_observed && le->observed_time + (double)le->observed.duration_s > now;
}

static void set_observed(struct lease_elector *le, const struct record *r)
{
    record_copy(&le->observed, r);
    le->have_observed = true;
    le->observed_time = clock_mono_s();
}

static void keep_lease(struct lease_elector *le, json_t *body)
{
    if (!json_is_object(body))
        return;
    json_decref(le->lease);
    le->lease = json_incref(body);
}

static void schedule(struct lease_elector *le, double after)
{
    ev_timer_stop(le->loop, &le->timer);
    ev_timer_set(&le->timer, after < 0 ? 0 : after, 0.);
    ev_timer_start(le->loop, &le->timer);
}

static void maybe_report_transition(struct lease_elector *le)
{
    if (!le->have_observed)
        return;
    const char *h = le->observed.holder;
    if (le->reported_leader && strcmp(le->reported_leader, h) == 0)
        return;
    free(le->reported_leader);
    le->reported_leader = xstrdup(h);
    if (!*h)
        return;
    log_info(le->lg, "leader election: new leader", "lease", le->desc, "leader", h);
    if (le->cb.on_new_leader)
        le->cb.on_new_leader(le->cb.ud, h);
}

/* ---- requests ---------------------------------------------------------- */

static void on_done(void *ud, const struct kube_result *r);

static double request_timeout(const struct lease_elector *le)
{
    if (le->state == LS_LEADING && le->in_cycle) {
        double left = le->rd - (clock_mono_s() - le->cycle_start);
        return left > 0.001 ? left : 0.001;
    }
    return le->rd;
}

/* Submit; on a submit error returns it (the callback will not run). */
static int submit(struct lease_elector *le, enum step step, const char *method, const char *path,
                  json_t *body)
{
    struct err e = {0};
    struct kube_request req = {
        .method = method,
        .path = path,
        .body = body,
        .timeout_s = step == STEP_RELEASE ? le->rd : request_timeout(le),
        .max_retries = -1,
    };
    le->step = step;
    int rc = kube_client_do(le->client, &req, on_done, le, &le->call, &e);
    if (rc < 0) {
        le->step = STEP_NONE;
        le->call = NULL;
        log_warn(le->lg, "leader election: request not sent", "lease", le->desc, "error", e.msg);
    }
    return rc;
}

/* PUT `rec` onto the last Lease we saw. */
static int put_record(struct lease_elector *le, enum step step, const struct record *rec)
{
    if (!le->lease)
        return -EINVAL;
    json_t *obj = jx_deep_copy(le->lease);
    json_object_set_new(obj, "apiVersion", json_string(LEASE_GROUP "/v1"));
    json_object_set_new(obj, "kind", json_string("Lease"));
    json_object_set_new(obj, "spec", record_to_spec(rec));
    int rc = submit(le, step, "PUT", le->item_path, obj);
    json_decref(obj);
    return rc;
}

static int create_lease(struct lease_elector *le)
{
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", LEASE_GROUP "/v1", "kind",
                            "Lease", "metadata", "name", le->name, "namespace", le->ns);
    json_object_set_new(obj, "spec", record_to_spec(&le->pending));
    int rc = submit(le, STEP_CREATE, "POST", le->coll_path, obj);
    json_decref(obj);
    return rc;
}

static void attempt_done(struct lease_elector *le, bool ok);

/* tryAcquireOrRenew, first half. */
static void try_acquire_or_renew(struct lease_elector *le)
{
    char now[40];
    clock_now_rfc3339(now, sizeof(now), 1);
    record_clear(&le->pending);
    le->pending.holder = xstrdup(le->identity);
    le->pending.duration_s = (long)ceil(le->ld);
    le->pending.acquire = xstrdup(now);
    le->pending.renew = xstrdup(now);
    le->pending.transitions = 0;

    /* 1. Fast path: we lead and our view is valid: update optimistically. */
    if (is_leader(le) && lease_valid(le, clock_mono_s()) && le->lease) {
        free(le->pending.acquire);
        le->pending.acquire = xstrdup(le->observed.acquire);
        le->pending.transitions = le->observed.transitions;
        if (put_record(le, STEP_FAST_PUT, &le->pending) == 0)
            return;
    }
    /* 2. Slow path: read the Lease. */
    if (submit(le, STEP_GET, "GET", le->item_path, NULL) < 0)
        attempt_done(le, false);
}

/* tryAcquireOrRenew, after the GET. */
static void after_get(struct lease_elector *le, json_t *body)
{
    struct record rec = {0};
    record_from_lease(body, &rec);
    keep_lease(le, body);
    /* 3. Remember when the record last changed, on our clock. */
    char *raw = record_raw(&rec);
    if (!le->observed_raw || strcmp(raw, le->observed_raw) != 0) {
        set_observed(le, &rec);
        free(le->observed_raw);
        le->observed_raw = raw;
        raw = NULL;
    }
    free(raw);
    if (*rec.holder && lease_valid(le, clock_mono_s()) && !is_leader(le)) {
        log_v(le->lg, 4, "leader election: lease is held and not expired", "lease", le->desc,
              "holder", rec.holder);
        record_clear(&rec);
        attempt_done(le, false);
        return;
    }
    /* 4. Write our record. */
    if (is_leader(le)) {
        free(le->pending.acquire);
        le->pending.acquire = xstrdup(rec.acquire);
        le->pending.transitions = rec.transitions;
    } else {
        le->pending.transitions = rec.transitions + 1;
    }
    record_clear(&rec);
    if (put_record(le, STEP_PUT, &le->pending) < 0)
        attempt_done(le, false);
}

static void finish_stop(struct lease_elector *le, int rc)
{
    le->state = LS_STOPPED;
    ev_timer_stop(le->loop, &le->timer);
    if (le->led) {
        le->led = false;
        if (le->cb.on_stopped_leading)
            le->cb.on_stopped_leading(le->cb.ud);
    }
    void (*done)(void *, int) = le->stop_done;
    le->stop_done = NULL;
    if (done)
        done(le->stop_ud, rc);
}

/* Stopping: PUT the release record if wanted and we hold the lease, else finish. */
static void begin_release(struct lease_elector *le)
{
    if (le->release_wanted && is_leader(le) && le->lease) {
        char now[40];
        clock_now_rfc3339(now, sizeof(now), 1);
        record_clear(&le->pending);
        le->pending.holder = xstrdup("");
        le->pending.duration_s = 1;
        le->pending.acquire = xstrdup(now);
        le->pending.renew = xstrdup(now);
        le->pending.transitions = le->observed.transitions;
        int rc = put_record(le, STEP_RELEASE, &le->pending);
        if (rc == 0)
            return;
        le->stop_rc = rc;
    }
    schedule(le, 0); /* finish from the loop */
}

static void on_done(void *ud, const struct kube_result *r)
{
    struct lease_elector *le = ud;
    enum step step = le->step;
    le->call = NULL;
    le->step = STEP_NONE;
    if (le->state == LS_STOPPING && step != STEP_RELEASE) {
        /* Stop was requested while this request was in flight: take in what it
         * did (so a release carries the current resourceVersion), then release. */
        if (r->rc == 0 && step == STEP_GET && json_is_object(r->body)) {
            struct record rec = {0};
            record_from_lease(r->body, &rec);
            keep_lease(le, r->body);
            set_observed(le, &rec);
            record_clear(&rec);
        } else if (r->rc == 0 && step != STEP_GET) {
            keep_lease(le, r->body);
            set_observed(le, &le->pending);
        }
        begin_release(le);
        return;
    }
    switch (step) {
    case STEP_FAST_PUT:
        if (r->rc == 0) {
            keep_lease(le, r->body);
            set_observed(le, &le->pending);
            attempt_done(le, true);
            return;
        }
        log_warn(le->lg, "leader election: optimistic renew failed, falling back to a read",
                 "lease", le->desc, "error", r->err->msg);
        if (submit(le, STEP_GET, "GET", le->item_path, NULL) < 0)
            attempt_done(le, false);
        return;
    case STEP_GET:
        if (r->rc == -ENOENT) {
            if (create_lease(le) < 0)
                attempt_done(le, false);
            return;
        }
        if (r->rc < 0 || !json_is_object(r->body)) {
            log_warn(le->lg, "leader election: cannot read the lease", "lease", le->desc, "error",
                     r->rc < 0 ? r->err->msg : "response is not a JSON object");
            attempt_done(le, false);
            return;
        }
        after_get(le, r->body);
        return;
    case STEP_CREATE:
    case STEP_PUT:
        if (r->rc == 0) {
            keep_lease(le, r->body);
            set_observed(le, &le->pending);
            attempt_done(le, true);
            return;
        }
        log_warn(le->lg,
                 step == STEP_CREATE ? "leader election: cannot create the lease"
                                     : "leader election: cannot update the lease",
                 "lease", le->desc, "error", r->err->msg);
        attempt_done(le, false);
        return;
    case STEP_RELEASE:
        if (r->rc == 0) {
            keep_lease(le, r->body);
            set_observed(le, &le->pending);
            log_info(le->lg, "leader election: lease released", "lease", le->desc);
        } else {
            log_warn(le->lg, "leader election: cannot release the lease", "lease", le->desc,
                     "error", r->err->msg);
        }
        finish_stop(le, r->rc);
        return;
    case STEP_NONE:
        return;
    }
}

static void lose(struct lease_elector *le)
{
    log_error(le->lg, "leader election lost: the lease could not be renewed in time", "lease",
              le->desc, "renew_deadline_s", LOG_DBL(le->rd));
    le->state = LS_STOPPED;
    le->in_cycle = false;
    ev_timer_stop(le->loop, &le->timer);
    if (le->led) {
        le->led = false;
        if (le->cb.on_stopped_leading)
            le->cb.on_stopped_leading(le->cb.ud);
    }
}

static void attempt_done(struct lease_elector *le, bool ok)
{
    maybe_report_transition(le);
    if (le->state == LS_ACQUIRING) {
        if (!ok) {
            schedule(le, le->rp * (1.0 + LEASE_JITTER_FACTOR * rng_double(&le->rng)));
            return;
        }
        le->state = LS_LEADING;
        le->led = true;
        le->in_cycle = false;
        log_info(le->lg, "leader election: acquired the lease", "lease", le->desc, "identity",
                 le->identity);
        schedule(le, le->rp);
        if (le->cb.on_started_leading)
            le->cb.on_started_leading(le->cb.ud);
        return;
    }
    if (le->state != LS_LEADING)
        return;
    if (ok) {
        le->in_cycle = false;
        schedule(le, le->rp);
        return;
    }
    double elapsed = clock_mono_s() - le->cycle_start;
    if (elapsed >= le->rd) {
        lose(le);
        return;
    }
    double next = le->rd - elapsed;
    schedule(le, next < le->rp ? next : le->rp);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct lease_elector *le = w->data;
    switch (le->state) {
    case LS_ACQUIRING:
        try_acquire_or_renew(le);
        return;
    case LS_LEADING:
        if (!le->in_cycle) {
            le->in_cycle = true;
            le->cycle_start = clock_mono_s();
        } else if (clock_mono_s() - le->cycle_start >= le->rd) {
            lose(le);
            return;
        }
        try_acquire_or_renew(le);
        return;
    case LS_STOPPING:
        finish_stop(le, le->stop_rc);
        return;
    case LS_INIT:
    case LS_STOPPED:
        return;
    }
}

/* ---- public ------------------------------------------------------------ */

int lease_elector_new(struct kube_client *client, const struct lease_config *cfg_in,
                      const struct logger *lg, struct lease_elector **out, struct err *e)
{
    struct lease_config cfg = *cfg_in;
    *out = NULL;
    int rc = lease_config_validate(&cfg, e);
    if (rc < 0)
        return rc;
    struct lease_elector *le = xcalloc(1, sizeof(*le));
    le->client = client;
    le->loop = kube_client_loop(client);
    le->lg = lg;
    le->ns = xstrdup(cfg.namespace_);
    le->name = xstrdup(cfg.name);
    le->identity = cfg.identity ? xstrdup(cfg.identity) : lease_default_identity();
    le->desc = xasprintf("%s/%s", le->ns, le->name);
    le->item_path = kube_path(LEASE_GROUP, "v1", "leases", le->ns, le->name, NULL);
    le->coll_path = kube_path(LEASE_GROUP, "v1", "leases", le->ns, NULL, NULL);
    le->ld = cfg.lease_duration_s;
    le->rd = cfg.renew_deadline_s;
    le->rp = cfg.retry_period_s;
    le->release_on_cancel = cfg.release_on_cancel;
    le->cb = cfg.cb;
    uint64_t seed = 0;
    fill_random(&seed, sizeof seed);
    rng_seed(&le->rng, seed);
    ev_timer_init(&le->timer, on_timer, 0., 0.);
    le->timer.data = le;
    *out = le;
    return 0;
}

int lease_elector_start(struct lease_elector *le)
{
    if (le->state != LS_INIT)
        return -EALREADY;
    le->state = LS_ACQUIRING;
    log_info(le->lg, "leader election: trying to acquire the lease", "lease", le->desc, "identity",
             le->identity);
    schedule(le, 0);
    return 0;
}

bool lease_elector_is_leader(const struct lease_elector *le)
{
    return le && le->state == LS_LEADING;
}

const char *lease_elector_leader(const struct lease_elector *le)
{
    return le->have_observed ? le->observed.holder : "";
}

const char *lease_elector_identity(const struct lease_elector *le)
{
    return le->identity;
}

int lease_elector_stop(struct lease_elector *le, void (*done)(void *ud, int rc), void *ud)
{
    if (le->stop_called)
        return -EALREADY;
    le->stop_called = true;
    le->release_wanted = le->state == LS_LEADING && le->release_on_cancel;
    le->state = LS_STOPPING;
    le->stop_done = done;
    le->stop_ud = ud;
    le->stop_rc = 0;
    ev_timer_stop(le->loop, &le->timer);
    /* A request in flight may already have changed the Lease: let it finish
     * (on_done then continues with begin_release). */
    if (le->call)
        return 0;
    begin_release(le);
    return 0;
}

void lease_elector_free(struct lease_elector *le)
{
    if (!le)
        return;
    ev_timer_stop(le->loop, &le->timer);
    if (le->call)
        kube_call_cancel(le->call);
    record_clear(&le->pending);
    record_clear(&le->observed);
    json_decref(le->lease);
    free(le->observed_raw);
    free(le->reported_leader);
    free(le->ns);
    free(le->name);
    free(le->identity);
    free(le->desc);
    free(le->item_path);
    free(le->coll_path);
    free(le);
}
