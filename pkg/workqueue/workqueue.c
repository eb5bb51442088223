/*
 * workqueue: see workqueue.h. One record per known key holds every piece of
 * per-key state (dirty, processing, queued, position in the delay heap,
 * failure count); it lives in a chained hash table and is freed when none
 * of that state remains.
 */
#include "pkg/workqueue/workqueue.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#define HEAP_NONE SIZE_MAX

struct wq_item {
    struct wq_item *hnext; /* hash chain */
    struct wq_item *qnext; /* FIFO links while queued */
    struct wq_item *qprev;
    char *key;
    uint32_t hash;
    bool dirty;
    uint8_t prio;       /* enum wq_level: the FIFO it is queued in (or re-queued into by wq_done) */
    uint8_t after_prio; /* the level a delayed add asked for (the highest), while waiting */
    uint8_t handed;     /* the level it was handed out from (wq_handed_level) */
    bool processing;
    bool queued;
    size_t heap_idx; /* HEAP_NONE when not waiting */
    double ready_at;
    unsigned failures;
};

struct wq {
    struct ev_loop *loop;
    char *name;
    int workers;
    int batch;
    wq_process_fn process;
    void *ud;
    wq_now_fn now;
    void *now_ud;

    double base_delay, max_delay, qps;
    int burst;
    double tokens;    /* token bucket level (may go negative: reservations) */
    double tokens_at; /* time of the last bucket update */
    bool tokens_init;

    /* hash table */
    struct wq_item **buckets;
    size_t nbuckets;
    size_t nitems;

    /* FIFOs of queued items, one per level, the highest served first; depth counts all */
    struct wq_item *head[WQ_LEVELS], *tail[WQ_LEVELS];
    size_t depth, ldepth[WQ_LEVELS];

    /* min-heap on ready_at */
    struct wq_item **heap;
    size_t heap_len, heap_cap;

    size_t processing;
    uint64_t adds, retries;
    bool shutting_down;

    ev_idle idle;
    ev_timer timer;
};

static double wq_clock(struct wq *q)
{
    return q->now ? q->now(q->now_ud) : clock_mono_s();
}

/* ---- hash table ---------------------------------------------------------- */

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

static struct wq_item *item_find(const struct wq *q, const char *key)
{
    uint32_t h = hash_str(key);
    for (struct wq_item *it = q->buckets[h & (q->nbuckets - 1)]; it; it = it->hnext)
        if (it->hash == h && strcmp(it->key, key) == 0)
            return it;
    return NULL;
}

static void table_grow(struct wq *q)
{
    size_t n = q->nbuckets * 2;
    struct wq_item **b = xcalloc(n, sizeof(*b));
    for (size_t i = 0; i < q->nbuckets; i++) {
        struct wq_item *it = q->buckets[i];
        while (it) {
            struct wq_item *next = it->hnext;
            it->hnext = b[it->hash & (n - 1)];
            b[it->hash & (n - 1)] = it;
            it = next;
        }
    }
    free(q->buckets);
    q->buckets = b;
    q->nbuckets = n;
}

static struct wq_item *item_get(struct wq *q, const char *key)
{
    struct wq_item *it = item_find(q, key);
    if (it)
        return it;
    if (q->nitems + 1 > q->nbuckets)
        table_grow(q);
    it = xcalloc(1, sizeof(*it));
    it->key = xstrdup(key);
    it->hash = hash_str(key);
    it->heap_idx = HEAP_NONE;
    size_t b = it->hash & (q->nbuckets - 1);
    it->hnext = q->buckets[b];
    q->buckets[b] = it;
    q->nitems++;
    return it;
}

/* Free the record when nothing refers to the key any more. */
static void item_maybe_release(struct wq *q, struct wq_item *it)
{
    if (it->dirty || it->processing || it->queued || it->heap_idx != HEAP_NONE || it->failures)
        return;
    struct wq_item **pp = &q->buckets[it->hash & (q->nbuckets - 1)];
    while (*pp != it)
        pp = &(*pp)->hnext;
    *pp = it->hnext;
    q->nitems--;
    free(it->key);
    free(it);
}

/* ---- heap ---------------------------------------------------------------- */

static void heap_set(struct wq *q, size_t i, struct wq_item *it)
{
    q->heap[i] = it;
    it->heap_idx = i;
}

static void heap_up(struct wq *q, size_t i)
{
    struct wq_item *it = q->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (q->heap[p]->ready_at <= it->ready_at)
            break;
        heap_set(q, i, q->heap[p]);
        i = p;
    }
    heap_set(q, i, it);
}

static void heap_down(struct wq *q, size_t i)
{
    struct wq_item *it = q->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        double mv = it->ready_at;
        if (l < q->heap_len && q->heap[l]->ready_at < mv) {
            m = l;
            mv = q->heap[l]->ready_at;
        }
        if (r < q->heap_len && q->heap[r]->ready_at < mv)
            m = r;
        if (m == i)
            break;
        heap_set(q, i, q->heap[m]);
        i = m;
    }
    heap_set(q, i, it);
}

static void heap_push(struct wq *q, struct wq_item *it)
{
    if (q->heap_len == q->heap_cap) {
        q->heap_cap = q->heap_cap ? q->heap_cap * 2 : 16;
        q->heap = xrealloc(q->heap, q->heap_cap * sizeof(*q->heap));
    }
    heap_set(q, q->heap_len++, it);
    heap_up(q, it->heap_idx);
}

static struct wq_item *heap_pop(struct wq *q)
{
    struct wq_item *top = q->heap[0];
    top->heap_idx = HEAP_NONE;
    q->heap_len--;
    if (q->heap_len > 0) {
        heap_set(q, 0, q->heap[q->heap_len]);
        heap_down(q, 0);
    }
    return top;
}

/* ---- watchers ------------------------------------------------------------ */

static void wq_kick(struct wq *q)
{
    if (!q->loop || !q->process || q->shutting_down)
        return;
    if (q->depth > 0 && q->processing < (size_t)q->workers && !ev_is_active(&q->idle))
        ev_idle_start(q->loop, &q->idle);
}

static void wq_arm_timer(struct wq *q)
{
    if (!q->loop)
        return;
    ev_timer_stop(q->loop, &q->timer);
    if (q->heap_len == 0 || q->shutting_down)
        return;
    double d = q->heap[0]->ready_at - wq_clock(q);
    if (d < 0)
        d = 0;
    ev_timer_set(&q->timer, d, 0.);
    ev_timer_start(q->loop, &q->timer);
}

static void wq_push_queue(struct wq *q, struct wq_item *it)
{
    struct wq_item **head = &q->head[it->prio];
    struct wq_item **tail = &q->tail[it->prio];
    it->queued = true;
    it->qnext = NULL;
    it->qprev = *tail;
    if (*tail)
        (*tail)->qnext = it;
    else
        *head = it;
    *tail = it;
    q->depth++;
    q->ldepth[it->prio]++;
    wq_kick(q);
}

/* Take a queued item out of its FIFO. */
static void wq_unlink(struct wq *q, struct wq_item *it)
{
    struct wq_item **head = &q->head[it->prio];
    struct wq_item **tail = &q->tail[it->prio];
    if (it->qprev)
        it->qprev->qnext = it->qnext;
    else
        *head = it->qnext;
    if (it->qnext)
        it->qnext->qprev = it->qprev;
    else
        *tail = it->qprev;
    it->qnext = it->qprev = NULL;
    it->queued = false;
    q->depth--;
    q->ldepth[it->prio]--;
}

static struct wq_item *wq_pop_queue(struct wq *q)
{
    struct wq_item *it = NULL;
    for (int l = WQ_LEVELS - 1; l >= 0 && !it; l--)
        it = q->head[l];
    if (!it)
        return NULL;
    wq_unlink(q, it);
    it->handed = it->prio;
    it->prio = WQ_BACKGROUND; /* what it is added with next time decides */
    return it;
}

static void wq_add_item(struct wq *q, struct wq_item *it)
{
    if (it->dirty)
        return;
    it->dirty = true;
    q->adds++;
    if (it->processing)
        return;
    wq_push_queue(q, it);
}

/* Queue `it` at `level` at least: a queued item moves up, never down; one being processed is
 * re-queued at the highest level it was added with. */
static void wq_add_at(struct wq *q, struct wq_item *it, enum wq_level level)
{
    if (it->queued && it->prio < level) {
        wq_unlink(q, it);
        it->prio = (uint8_t)level;
        wq_push_queue(q, it);
        return;
    }
    if (it->prio < level)
        it->prio = (uint8_t)level;
    wq_add_item(q, it);
}

static struct wq_item *wq_take(struct wq *q)
{
    struct wq_item *it = wq_pop_queue(q);
    if (!it)
        return NULL;
    it->dirty = false;
    it->processing = true;
    q->processing++;
    return it;
}

static void wq_idle_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
    struct wq *q = w->data;
    int n = 0;
    while (!q->shutting_down && q->depth > 0 && q->processing < (size_t)q->workers &&
           n < q->batch) {
        struct wq_item *it = wq_take(q);
        n++;
        q->process(q, it->key, q->ud);
    }
    if (q->shutting_down || q->depth == 0 || q->processing >= (size_t)q->workers)
        ev_idle_stop(loop, w);
}

static void wq_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct wq *q = w->data;
    double now = wq_clock(q);
    while (q->heap_len > 0 && q->heap[0]->ready_at <= now) {
        struct wq_item *it = heap_pop(q);
        enum wq_level level = (enum wq_level)it->after_prio;
        it->after_prio = WQ_BACKGROUND;
        wq_add_at(q, it, level);
        item_maybe_release(q, it);
    }
    wq_arm_timer(q);
}

/* ---- public -------------------------------------------------------------- */

struct wq *wq_new(const struct wq_opts *opts)
{
    struct wq *q = xcalloc(1, sizeof(*q));
    q->loop = opts->loop;
    q->name = xstrdup(opts->name ? opts->name : "");
    q->workers = opts->workers > 0 ? opts->workers : 1;
    q->batch = opts->batch > 0 ? opts->batch : WQ_DEFAULT_BATCH;
    q->process = opts->process;
    q->ud = opts->ud;
    q->now = opts->now;
    q->now_ud = opts->now_ud;
    q->base_delay = opts->base_delay > 0 ? opts->base_delay : WQ_DEFAULT_BASE_DELAY;
    q->max_delay = opts->max_delay > 0 ? opts->max_delay : WQ_DEFAULT_MAX_DELAY;
    q->qps = opts->qps > 0 ? opts->qps : WQ_DEFAULT_QPS;
    q->burst = opts->burst > 0 ? opts->burst : WQ_DEFAULT_BURST;
    q->nbuckets = 64;
    q->buckets = xcalloc(q->nbuckets, sizeof(*q->buckets));
    ev_idle_init(&q->idle, wq_idle_cb);
    q->idle.data = q;
    ev_timer_init(&q->timer, wq_timer_cb, 0., 0.);
    q->timer.data = q;
    return q;
}

void wq_free(struct wq *q)
{
    if (!q)
        return;
    if (q->loop) {
        ev_idle_stop(q->loop, &q->idle);
        ev_timer_stop(q->loop, &q->timer);
    }
    for (size_t i = 0; i < q->nbuckets; i++) {
        struct wq_item *it = q->buckets[i];
        while (it) {
            struct wq_item *next = it->hnext;
            free(it->key);
            free(it);
            it = next;
        }
    }
    free(q->buckets);
    free(q->heap);
    free(q->name);
    free(q);
}

void wq_add(struct wq *q, const char *key)
{
    if (q->shutting_down)
        return;
    wq_add_at(q, item_get(q, key), WQ_PLAIN);
}

void wq_add_level(struct wq *q, const char *key, enum wq_level level)
{
    if (q->shutting_down || level >= WQ_LEVELS)
        return;
    wq_add_at(q, item_get(q, key), level);
}

bool wq_queued(const struct wq *q, const char *key)
{
    const struct wq_item *it = item_find(q, key);
    return it && it->queued && !it->processing;
}

void wq_add_urgent(struct wq *q, const char *key)
{
    wq_add_level(q, key, WQ_URGENT);
}

void wq_add_after(struct wq *q, const char *key, double delay)
{
    wq_add_after_level(q, key, delay, WQ_PLAIN);
}

enum wq_level wq_handed_level(const struct wq *q, const char *key)
{
    const struct wq_item *it = item_find(q, key);
    return it && it->processing ? (enum wq_level)it->handed : WQ_PLAIN;
}

void wq_add_after_level(struct wq *q, const char *key, double delay, enum wq_level level)
{
    if (q->shutting_down || level >= WQ_LEVELS)
        return;
    if (delay <= 0) {
        wq_add_level(q, key, level);
        return;
    }
    struct wq_item *it = item_get(q, key);
    if (it->after_prio < level)
        it->after_prio = (uint8_t)level;
    double ready = wq_clock(q) + delay;
    if (it->heap_idx != HEAP_NONE) {
        if (ready < it->ready_at) {
            it->ready_at = ready;
            heap_up(q, it->heap_idx);
        }
    } else {
        it->ready_at = ready;
        heap_push(q, it);
    }
    if (q->heap[0] == it)
        wq_arm_timer(q);
}

/* golang.org/x/time/rate Reserve(): refill, take one token, wait for a deficit. */
static double bucket_delay(struct wq *q)
{
    double now = wq_clock(q);
    if (!q->tokens_init) {
        q->tokens = q->burst;
        q->tokens_at = now;
        q->tokens_init = true;
    }
    if (now > q->tokens_at) {
        q->tokens += (now - q->tokens_at) * q->qps;
        if (q->tokens > q->burst)
            q->tokens = q->burst;
        q->tokens_at = now;
    }
    q->tokens -= 1;
    return q->tokens < 0 ? -q->tokens / q->qps : 0;
}

double wq_when(struct wq *q, const char *key)
{
    struct wq_item *it = item_get(q, key);
    unsigned exp = it->failures;
    if (it->failures < UINT32_MAX)
        it->failures++;
    double item = q->base_delay * pow(2.0, (double)exp);
    if (!isfinite(item) || item > q->max_delay)
        item = q->max_delay;
    double bucket = bucket_delay(q);
    return item > bucket ? item : bucket;
}

void wq_add_rate_limited(struct wq *q, const char *key)
{
    if (q->shutting_down)
        return;
    q->retries++;
    wq_add_after(q, key, wq_when(q, key));
}

void wq_forget(struct wq *q, const char *key)
{
    struct wq_item *it = item_find(q, key);
    if (!it)
        return;
    it->failures = 0;
    item_maybe_release(q, it);
}

unsigned wq_num_requeues(const struct wq *q, const char *key)
{
    const struct wq_item *it = item_find(q, key);
    return it ? it->failures : 0;
}

int wq_done(struct wq *q, const char *key)
{
    struct wq_item *it = item_find(q, key);
    if (!it || !it->processing)
        return -ENOENT;
    it->processing = false;
    q->processing--;
    if (it->dirty && !q->shutting_down) {
        wq_push_queue(q, it);
    } else {
        it->dirty = false;
        it->prio = WQ_BACKGROUND;
    }
    item_maybe_release(q, it);
    wq_kick(q);
    return 0;
}

const char *wq_get(struct wq *q)
{
    if (q->shutting_down)
        return NULL;
    struct wq_item *it = wq_take(q);
    return it ? it->key : NULL;
}

void wq_shutdown(struct wq *q)
{
    if (q->shutting_down)
        return;
    q->shutting_down = true;
    if (q->loop) {
        ev_idle_stop(q->loop, &q->idle);
        ev_timer_stop(q->loop, &q->timer);
    }
    struct wq_item *it;
    while ((it = wq_pop_queue(q)) != NULL) {
        it->dirty = false;
        item_maybe_release(q, it);
    }
    while (q->heap_len > 0) {
        it = heap_pop(q);
        item_maybe_release(q, it);
    }
    /* Keys in processing: a later add must not re-queue them. */
    for (size_t i = 0; i < q->nbuckets; i++)
        for (it = q->buckets[i]; it; it = it->hnext)
            it->dirty = false;
}

bool wq_shutting_down(const struct wq *q)
{
    return q->shutting_down;
}

void wq_stats(const struct wq *q, struct wq_stats *out)
{
    out->depth = q->depth;
    out->urgent = q->ldepth[WQ_URGENT] + q->ldepth[WQ_FIRST];
    out->first = q->ldepth[WQ_FIRST];
    out->background = q->ldepth[WQ_BACKGROUND];
    out->waiting = q->heap_len;
    out->processing = q->processing;
    out->adds = q->adds;
    out->retries = q->retries;
}

const char *wq_name(const struct wq *q)
{
    return q->name;
}
