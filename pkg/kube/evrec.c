/* evrec: core/v1 Event recorder with client-go's correlation (see events.h). */
#include "pkg/kube/evrec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

/* ---- a small string-keyed LRU ------------------------------------------ */

struct lru_node {
    char *key;
    struct lru_node *prev, *next; /* recency list, most recent after the sentinel */
    struct lru_node *hnext;       /* hash chain */
    void *val;
};

struct lru {
    struct lru_node **buckets;
    size_t nbuckets;
    size_t n, max;
    struct lru_node head; /* sentinel of the circular recency list */
    void (*free_val)(void *);
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static void lru_init(struct lru *l, size_t max, void (*free_val)(void *))
{
    l->max = max;
    l->nbuckets = 64;
    while (l->nbuckets < max)
        l->nbuckets *= 2;
    l->buckets = xcalloc(l->nbuckets, sizeof(*l->buckets));
    l->n = 0;
    l->head.prev = l->head.next = &l->head;
    l->free_val = free_val;
}

static void lru_unlink(struct lru_node *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
}

static void lru_push_front(struct lru *l, struct lru_node *n)
{
    n->next = l->head.next;
    n->prev = &l->head;
    l->head.next->prev = n;
    l->head.next = n;
}

static void *lru_get(struct lru *l, const char *key)
{
    for (struct lru_node *n = l->buckets[fnv1a(key) & (l->nbuckets - 1)]; n; n = n->hnext) {
        if (strcmp(n->key, key) == 0) {
            lru_unlink(n);
            lru_push_front(l, n);
            return n->val;
        }
    }
    return NULL;
}

static void lru_remove_node(struct lru *l, struct lru_node *victim)
{
    struct lru_node **pp = &l->buckets[fnv1a(victim->key) & (l->nbuckets - 1)];
    while (*pp != victim)
        pp = &(*pp)->hnext;
    *pp = victim->hnext;
    lru_unlink(victim);
    l->free_val(victim->val);
    free(victim->key);
    free(victim);
    l->n--;
}

/* Insert a new key (the caller checked it is absent); takes `val`. */
static void lru_put(struct lru *l, const char *key, void *val)
{
    struct lru_node *n = xcalloc(1, sizeof(*n));
    n->key = xstrdup(key);
    n->val = val;
    size_t b = fnv1a(key) & (l->nbuckets - 1);
    n->hnext = l->buckets[b];
    l->buckets[b] = n;
    lru_push_front(l, n);
    l->n++;
    if (l->n > l->max)
        lru_remove_node(l, l->head.prev);
}

static void lru_free(struct lru *l)
{
    while (l->n)
        lru_remove_node(l, l->head.prev);
    free(l->buckets);
}

/* ---- recorder ---------------------------------------------------------- */

struct bucket {
    double tokens;
    double last; /* monotonic seconds of the last refill computation */
};

/* What we remember about an Event we wrote. */
struct seen {
    char *name;
    char *ns;
    char *first_ts;
    long count;
    double last; /* monotonic seconds of the last occurrence */
};

/* Aggregation of similar events (same object, type, reason; different messages). */
struct agg {
    uint64_t msgs[EVREC_AGGREGATE_MAX]; /* hashes of the distinct messages seen */
    size_t n;
    double last;
};

enum wkind { W_CREATE, W_PATCH };

struct write {
    struct write *next;
    enum wkind kind;
    char *ns;
    char *name;
    json_t *event; /* the full Event (used for create, and as the fallback of a patch) */
};

struct evrec {
    struct kube_client *client;
    struct ev_loop *loop;
    const struct logger *lg;
    char *component, *host;
    int burst;
    double refill_s;
    size_t max_queued;
    double (*now)(void *ud);
    void *now_ud;

    struct lru spam;   /* spam key -> struct bucket */
    struct lru events; /* event key -> struct seen */
    struct lru aggs;   /* aggregate key -> struct agg */

    struct write *head, *tail;
    size_t nqueued;
    struct write *inflight;
    struct kube_call *call;
    ev_timer kick;
    uint64_t last_suffix;
    struct evrec_stats st;
};

static void free_seen(void *p)
{
    struct seen *s = p;
    free(s->name);
    free(s->ns);
    free(s->first_ts);
    free(s);
}

static void write_free(struct write *w)
{
    if (!w)
        return;
    free(w->ns);
    free(w->name);
    json_decref(w->event);
    free(w);
}

static double default_now(void *ud)
{
    return clock_mono_s();
}

int evrec_new(struct kube_client *client, const struct evrec_config *cfg, const struct logger *lg,
              struct evrec **out, struct err *e)
{
    *out = NULL;
    if (!cfg->component || !*cfg->component)
        return err_set(e, -EINVAL, "event recorder: a component name is required");
    struct evrec *r = xcalloc(1, sizeof(*r));
    r->client = client;
    r->loop = kube_client_loop(client);
    r->lg = lg;
    r->component = xstrdup(cfg->component);
    if (cfg->host) {
        r->host = xstrdup(cfg->host);
    } else {
        char h[256] = {0};
        if (gethostname(h, sizeof(h) - 1) < 0)
            h[0] = 0;
        r->host = xstrdup(h);
    }
    size_t cache = cfg->cache_size ? cfg->cache_size : EVREC_DEFAULT_CACHE_SIZE;
    r->burst = cfg->burst > 0 ? cfg->burst : EVREC_DEFAULT_BURST;
    r->refill_s = cfg->refill_s > 0 ? cfg->refill_s : EVREC_DEFAULT_REFILL_S;
    r->max_queued = cfg->max_queued ? cfg->max_queued : EVREC_DEFAULT_MAX_QUEUED;
    r->now = cfg->now ? cfg->now : default_now;
    r->now_ud = cfg->now_ud;
    lru_init(&r->spam, cache, free);
    lru_init(&r->events, cache, free_seen);
    lru_init(&r->aggs, cache, free);
    r->kick.data = r;
    *out = r;
    return 0;
}

/* ---- writing ----------------------------------------------------------- */

static void pump(struct evrec *r);

static void on_written(void *ud, const struct kube_result *res)
{
    struct evrec *r = ud;
    struct write *w = r->inflight;
    r->inflight = NULL;
    r->call = NULL;
    if (w->kind == W_PATCH && res->rc == -ENOENT) {
        /* The Event expired or was deleted: create it again with the current count. */
        w->kind = W_CREATE;
        json_object_del(json_object_get(w->event, "metadata"), "resourceVersion");
        w->next = r->head;
        r->head = w;
        if (!r->tail)
            r->tail = w;
        r->nqueued++;
        pump(r);
        return;
    }
    if (res->rc == 0) {
        if (w->kind == W_CREATE)
            r->st.created++;
        else
            r->st.patched++;
    } else {
        r->st.failed++;
        log_warn(r->lg, "event not written", "event", w->name, "namespace", w->ns, "error",
                 res->err->msg);
    }
    write_free(w);
    pump(r);
}

/* Start the next write if none is in flight. */
static void pump(struct evrec *r)
{
    while (!r->inflight && r->head) {
        struct write *w = r->head;
        r->head = w->next;
        if (!r->head)
            r->tail = NULL;
        r->nqueued--;
        w->next = NULL;
        struct err e = {0};
        int rc;
        r->inflight = w;
        if (w->kind == W_CREATE) {
            char *path = kube_path("", "v1", "events", w->ns, NULL, NULL);
            /* the written Event is not read back: its body is not parsed */
            struct kube_request req = {.method = "POST",
                                       .path = path,
                                       .body = w->event,
                                       .body_unused = true,
                                       .bucket = KUBE_BUCKET_EVENTS};
            rc = kube_client_do(r->client, &req, on_written, r, &r->call, &e);
            free(path);
        } else {
            char *path = kube_path("", "v1", "events", w->ns, w->name, NULL);
            json_t *patch =
                json_pack("{s:O, s:O, s:O}", "count", json_object_get(w->event, "count"),
                          "lastTimestamp", json_object_get(w->event, "lastTimestamp"), "message",
                          json_object_get(w->event, "message"));
            struct kube_request req = {.method = "PATCH",
                                       .path = path,
                                       .body = patch,
                                       .content_type = KUBE_CT_MERGE_PATCH,
                                       .body_unused = true,
                                       .bucket = KUBE_BUCKET_EVENTS};
            rc = kube_client_do(r->client, &req, on_written, r, &r->call, &e);
            json_decref(patch);
            free(path);
        }
        if (rc < 0) {
            r->inflight = NULL;
            r->call = NULL;
            r->st.failed++;
            write_free(w);
            if (rc == -ESHUTDOWN) {
                /* The client is going away: drop the rest at once. */
                size_t dropped = r->nqueued;
                while (r->head) {
                    struct write *x = r->head;
                    r->head = x->next;
                    write_free(x);
                }
                r->tail = NULL;
                r->nqueued = 0;
                r->st.failed += dropped;
                log_warn(r->lg, "events not written: client shutting down", "dropped",
                         LOG_UINT(dropped + 1));
                return;
            }
            log_warn(r->lg, "event not written", "error", e.msg);
        }
    }
}

static void on_kick(struct ev_loop *loop, ev_timer *t, int revents)
{
    pump(t->data);
}

static void enqueue(struct evrec *r, struct write *w)
{
    if (r->nqueued >= r->max_queued) {
        r->st.queue_dropped++;
        log_v(r->lg, 4, "event dropped: write queue full", "event", w->name);
        write_free(w);
        return;
    }
    if (r->tail)
        r->tail->next = w;
    else
        r->head = w;
    r->tail = w;
    r->nqueued++;
    /* Write from the loop, never from inside the caller. */
    if (!ev_is_active(&r->kick) && !r->inflight) {
        ev_timer_init(&r->kick, on_kick, 0., 0.);
        r->kick.data = r;
        ev_timer_start(r->loop, &r->kick);
    }
}

/* ---- recording --------------------------------------------------------- */

/* Truncate to at most `max` bytes without splitting a UTF-8 sequence. */
static void truncate_utf8(char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    s[n] = 0;
}

static bool allow_spam(struct evrec *r, const char *key, double now)
{
    struct bucket *b = lru_get(&r->spam, key);
    if (!b) {
        b = xcalloc(1, sizeof(*b));
        b->tokens = r->burst;
        b->last = now;
        lru_put(&r->spam, key, b);
    }
    double add = (now - b->last) / r->refill_s;
    if (add > 0) {
        b->tokens += add;
        if (b->tokens > r->burst)
            b->tokens = r->burst;
        b->last = now;
    }
    if (b->tokens < 1.0)
        return false;
    b->tokens -= 1.0;
    return true;
}

/*
 * client-go's EventAggregator: remember the distinct messages seen for one
 * aggregate key within the window; once there are EVREC_AGGREGATE_MAX of them
 * the event is folded into the aggregate Event (true). As in client-go, one
 * message is then forgotten so the set does not grow.
 */
static bool aggregate(struct evrec *r, const char *key, const char *msg, double now)
{
    struct agg *a = lru_get(&r->aggs, key);
    if (!a) {
        a = xcalloc(1, sizeof(*a));
        lru_put(&r->aggs, key, a);
    } else if (now - a->last > EVREC_AGGREGATE_WINDOW_S) {
        a->n = 0;
    }
    a->last = now;
    uint64_t h = fnv1a(msg);
    bool known = false;
    for (size_t i = 0; i < a->n && !known; i++)
        known = a->msgs[i] == h;
    if (!known)
        a->msgs[a->n++] = h;
    if (a->n < EVREC_AGGREGATE_MAX)
        return false;
    a->n--;
    return true;
}

static void next_suffix(struct evrec *r, char *out, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t v = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    if (v <= r->last_suffix)
        v = r->last_suffix + 1;
    r->last_suffix = v;
    snprintf(out, n, "%llx", (unsigned long long)v);
}

/* Set a string member. `valid`: v is known to be UTF-8 (checked above, taken from a
 * JSON string, or ours), so jansson need not check it again; the configured component
 * and host are checked here (a NULL, i.e. OOM or a name that is not UTF-8, aborts, as
 * the json_pack this replaces did). */
static void obj_str(json_t *o, const char *key, const char *v, bool valid)
{
    json_t *js = valid ? json_string_nocheck(v) : json_string(v);
    if (!js || json_object_set_new_nocheck(o, key, js) < 0)
        abort();
}

void evrec_eventv(struct evrec *r, const json_t *involved, const char *type, const char *reason,
                  const char *fmt, va_list ap)
{
    const json_t *meta = json_object_get(involved, "metadata");
    const char *kind = jx_field_str(involved, "kind");
    const char *api = jx_field_str(involved, "apiVersion");
    const char *name = jx_field_str(meta, "name");
    const char *ons = jx_field_str(meta, "namespace");
    const char *uid = jx_field_str(meta, "uid");
    const char *orv = jx_field_str(meta, "resourceVersion");
    if (!type || (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0)) {
        r->st.invalid++;
        log_error(r->lg, "event dropped: type must be Normal or Warning", "type", type, "reason",
                  reason);
        return;
    }
    if (!*name || !*kind || !reason || !*reason) {
        r->st.invalid++;
        log_error(r->lg,
                  "event dropped: involved object needs kind and metadata.name, and a "
                  "reason is required",
                  "kind", kind, "name", name, "reason", reason);
        return;
    }
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        abort(); /* only fails on OOM */
    truncate_utf8(msg, EVREC_MAX_MESSAGE);
    json_t *probe_msg = json_string(msg), *probe_reason = json_string(reason);
    bool utf8_ok = probe_msg && probe_reason;
    json_decref(probe_msg);
    json_decref(probe_reason);
    if (!utf8_ok) {
        r->st.invalid++;
        log_error(r->lg, "event dropped: message or reason is not valid UTF-8", "reason", reason);
        free(msg);
        return;
    }
    double now = r->now(r->now_ud);
    const char *ns = *ons ? ons : "default";

    /* Spam filter, per source and involved object. */
    struct buf key;
    buf_init(&key, 1 << 20);
    buf_printf(&key, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", r->component, r->host, kind, ons,
               name, uid, api);
    if (!allow_spam(r, buf_str(&key), now)) {
        r->st.spam_dropped++;
        log_v(r->lg, 4, "event dropped by the spam filter", "kind", kind, "namespace", ons, "name",
              name, "reason", reason);
        buf_free(&key);
        free(msg);
        return;
    }
    /* Aggregation: many different messages for the same object, type and reason. */
    buf_printf(&key, "\x1f%s\x1f%s", type, reason);
    if (aggregate(r, buf_str(&key), msg, now)) {
        char *combined = xasprintf("(combined from similar events): %s", msg);
        truncate_utf8(combined, EVREC_MAX_MESSAGE);
        free(msg);
        msg = combined;
        buf_puts(&key, "\x1f\x1e"); /* the aggregate Event's own cache key */
    } else {
        /* Correlation: the same object, type, reason and message. */
        buf_printf(&key, "\x1f%s", msg);
    }
    char ts[40];
    clock_now_rfc3339(ts, sizeof(ts), 0);
    struct seen *s = lru_get(&r->events, buf_str(&key));
    bool repeat = s && now - s->last <= EVREC_AGGREGATE_WINDOW_S;
    if (repeat) {
        s->count++;
        s->last = now;
    } else {
        char suffix[32];
        next_suffix(r, suffix, sizeof(suffix));
        struct seen *fresh = xcalloc(1, sizeof(*fresh));
        fresh->name = xasprintf("%s.%s", name, suffix);
        fresh->ns = xstrdup(ns);
        fresh->first_ts = xstrdup(ts);
        fresh->count = 1;
        fresh->last = now;
        if (s) {
            /* Outside the window: replace the old entry's contents. */
            free(s->name);
            free(s->ns);
            free(s->first_ts);
            *s = *fresh;
            free(fresh);
        } else {
            lru_put(&r->events, buf_str(&key), fresh);
            s = fresh;
        }
    }
    buf_free(&key);

    json_t *io = json_object();
    json_object_set_new(io, "kind", json_string(kind));
    if (*api)
        json_object_set_new(io, "apiVersion", json_string(api));
    json_object_set_new(io, "name", json_string(name));
    if (*ons)
        json_object_set_new(io, "namespace", json_string(ons));
    if (*uid)
        json_object_set_new(io, "uid", json_string(uid));
    if (*orv)
        json_object_set_new(io, "resourceVersion", json_string(orv));
    /* built key by key: json_pack parses its format string on every call, which cost
     * several times the object itself (issue 12, CPU per dispatch) */
    json_t *ev = json_object(), *meta_o = json_object(), *src = json_object();
    obj_str(meta_o, "name", s->name, true);
    obj_str(meta_o, "namespace", s->ns, true);
    obj_str(src, "component", r->component, false);
    obj_str(src, "host", r->host, false);
    obj_str(ev, "apiVersion", "v1", true);
    obj_str(ev, "kind", "Event", true);
    json_object_set_new_nocheck(ev, "metadata", meta_o);
    json_object_set_new_nocheck(ev, "involvedObject", io);
    obj_str(ev, "reason", reason, true);
    obj_str(ev, "message", msg, true);
    obj_str(ev, "type", type, true);
    json_object_set_new_nocheck(ev, "source", src);
    obj_str(ev, "firstTimestamp", s->first_ts, true);
    obj_str(ev, "lastTimestamp", ts, true);
    json_object_set_new_nocheck(ev, "count", json_integer((json_int_t)s->count));
    obj_str(ev, "reportingComponent", r->component, false);
    obj_str(ev, "reportingInstance", r->host, false);
    free(msg);
    struct write *w = xcalloc(1, sizeof(*w));
    w->kind = repeat ? W_PATCH : W_CREATE;
    w->ns = xstrdup(s->ns);
    w->name = xstrdup(s->name);
    w->event = ev;
    enqueue(r, w);
}

void evrec_event(struct evrec *rec, const json_t *involved, const char *type, const char *reason,
                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    evrec_eventv(rec, involved, type, reason, fmt, ap);
    va_end(ap);
}

size_t evrec_pending(const struct evrec *rec)
{
    return rec->nqueued + (rec->inflight ? 1 : 0);
}

void evrec_get_stats(const struct evrec *rec, struct evrec_stats *out)
{
    *out = rec->st;
}

void evrec_free(struct evrec *r)
{
    if (!r)
        return;
    ev_timer_stop(r->loop, &r->kick);
    if (r->call)
        kube_call_cancel(r->call);
    write_free(r->inflight);
    while (r->head) {
        struct write *w = r->head;
        r->head = w->next;
        write_free(w);
    }
    lru_free(&r->spam);
    lru_free(&r->events);
    lru_free(&r->aggs);
    free(r->component);
    free(r->host);
    free(r);
}
