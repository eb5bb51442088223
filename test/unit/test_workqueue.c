/* Unit tests for pkg/workqueue. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/xalloc.h"
#include "pkg/workqueue/workqueue.h"
#include "test/support/tloop.h"

struct fake_clock {
    double t;
};

static double fake_now(void *ud)
{
    return ((struct fake_clock *)ud)->t;
}

static void test_dedup(void **state)
{
    (void)state;
    struct wq_opts o = {.name = "t"};
    struct wq *q = wq_new(&o);
    wq_add(q, "ns/a");
    wq_add(q, "ns/b");
    wq_add(q, "ns/a");
    wq_add(q, "ns/a");
    struct wq_stats st;
    wq_stats(q, &st);
    assert_int_equal(st.depth, 2);
    assert_int_equal(st.adds, 2);
    assert_string_equal(wq_name(q), "t");
    assert_string_equal(wq_get(q), "ns/a");
    assert_string_equal(wq_get(q), "ns/b");
    assert_null(wq_get(q));
    wq_stats(q, &st);
    assert_int_equal(st.processing, 2);
    assert_int_equal(wq_done(q, "ns/a"), 0);
    assert_int_equal(wq_done(q, "ns/b"), 0);
    assert_int_equal(wq_done(q, "ns/b"), -ENOENT);
    assert_int_equal(wq_done(q, "nope"), -ENOENT);
    wq_stats(q, &st);
    assert_int_equal(st.processing, 0);
    assert_int_equal(st.depth, 0);
    wq_free(q);
}

static void test_dirty_while_processing(void **state)
{
    (void)state;
    struct wq_opts o = {0};
    struct wq *q = wq_new(&o);
    wq_add(q, "k");
    const char *k = wq_get(q);
    assert_string_equal(k, "k");
    /* Added while processing: marked dirty, not handed out a second time. */
    wq_add(q, "k");
    wq_add(q, "k");
    struct wq_stats st;
    wq_stats(q, &st);
    assert_int_equal(st.depth, 0);
    assert_int_equal(st.adds, 2);
    assert_null(wq_get(q));
    /* Done re-queues it exactly once. */
    assert_int_equal(wq_done(q, k), 0);
    wq_stats(q, &st);
    assert_int_equal(st.depth, 1);
    assert_string_equal(wq_get(q), "k");
    assert_null(wq_get(q));
    assert_int_equal(wq_done(q, "k"), 0);
    wq_stats(q, &st);
    assert_int_equal(st.depth, 0);
    assert_int_equal(st.processing, 0);
    wq_free(q);
}

/* wq_queued: true only while a key waits to be handed out now: not before it is added, not
 * while it waits out a delay, not while it is processed (even when added again meanwhile),
 * again once wq_done re-queues it, not after that. */
static void test_queued(void **state)
{
    (void)state;
    struct wq_opts o = {0};
    struct wq *q = wq_new(&o);
    assert_false(wq_queued(q, "k"));
    wq_add_after(q, "k", 60);
    assert_false(wq_queued(q, "k"));
    wq_add(q, "k");
    assert_true(wq_queued(q, "k"));
    assert_false(wq_queued(q, "other"));
    assert_string_equal(wq_get(q), "k");
    assert_false(wq_queued(q, "k"));
    wq_add(q, "k"); /* dirty while processing */
    assert_false(wq_queued(q, "k"));
    assert_int_equal(wq_done(q, "k"), 0);
    assert_true(wq_queued(q, "k"));
    assert_string_equal(wq_get(q), "k");
    assert_int_equal(wq_done(q, "k"), 0);
    assert_false(wq_queued(q, "k"));
    wq_free(q);
}

/* wq_add_urgent: ahead of the keys added with wq_add (first in, first out among urgent ones);
 * a queued key moves ahead without being queued twice; one being processed is re-queued
 * ahead when done; a later plain add leaves an urgent key where it is. */
static void test_urgent_first(void **state)
{
    (void)state;
    struct wq_opts o = {0};
    struct wq *q = wq_new(&o);
    wq_add(q, "a");
    wq_add(q, "b");
    wq_add(q, "c");
    wq_add_urgent(q, "x");
    wq_add_urgent(q, "c"); /* queued: moves ahead */
    wq_add(q, "c");        /* stays ahead */
    wq_add_urgent(q, "x"); /* already ahead: once */
    struct wq_stats st;
    wq_stats(q, &st);
    assert_int_equal(st.depth, 4);
    assert_int_equal(st.urgent, 2);
    assert_string_equal(wq_get(q), "x");
    assert_string_equal(wq_get(q), "c");
    assert_string_equal(wq_get(q), "a");
    /* "a" is processing: added urgent, it comes back ahead of "b" when done */
    wq_add_urgent(q, "a");
    wq_stats(q, &st);
    assert_int_equal(st.depth, 1);
    assert_int_equal(st.urgent, 0);
    assert_int_equal(wq_done(q, "a"), 0);
    assert_string_equal(wq_get(q), "a");
    assert_string_equal(wq_get(q), "b");
    assert_null(wq_get(q));
    /* done without a new add: nothing re-queued, and a plain add later goes last */
    assert_int_equal(wq_done(q, "x"), 0);
    assert_int_equal(wq_done(q, "c"), 0);
    assert_int_equal(wq_done(q, "a"), 0);
    assert_int_equal(wq_done(q, "b"), 0);
    wq_add(q, "b");
    wq_add(q, "a");
    assert_string_equal(wq_get(q), "b");
    assert_string_equal(wq_get(q), "a");
    wq_stats(q, &st);
    assert_int_equal(st.depth, 0);
    wq_add_urgent(q, "z");
    wq_shutdown(q);
    assert_null(wq_get(q));
    wq_free(q);
}

/* Levels: WQ_FIRST ahead of WQ_URGENT ahead of the plain adds, first in first out within
 * one; a queued key moves up, never down; a key being processed comes back at the highest
 * level it was added with meanwhile. */
static void test_levels(void **state)
{
    (void)state;
    struct wq_opts o = {0};
    struct wq *q = wq_new(&o);
    wq_add(q, "p1");
    wq_add_urgent(q, "u1");
    wq_add_urgent(q, "u2");
    wq_add_level(q, "f1", WQ_FIRST);
    wq_add_level(q, "u2", WQ_FIRST); /* moves up */
    wq_add_urgent(q, "f1");          /* not down */
    wq_add(q, "p2");
    struct wq_stats st;
    wq_stats(q, &st);
    assert_int_equal(st.depth, 5);
    assert_int_equal(st.urgent, 3);
    assert_int_equal(st.first, 2);
    assert_string_equal(wq_get(q), "f1");
    assert_string_equal(wq_get(q), "u2");
    assert_string_equal(wq_get(q), "u1");
    /* "p1" is being processed: added urgent then first, it comes back first */
    assert_string_equal(wq_get(q), "p1");
    wq_add_urgent(q, "p1");
    wq_add_level(q, "p1", WQ_FIRST);
    wq_add_urgent(q, "u9");
    assert_int_equal(wq_done(q, "p1"), 0);
    assert_string_equal(wq_get(q), "p1");
    assert_string_equal(wq_get(q), "u9");
    assert_string_equal(wq_get(q), "p2");
    assert_null(wq_get(q));
    /* done with no add meanwhile: a later plain add is plain */
    assert_int_equal(wq_done(q, "p1"), 0);
    wq_add_urgent(q, "u3");
    wq_add(q, "p1");
    assert_string_equal(wq_get(q), "u3");
    assert_string_equal(wq_get(q), "p1");
    wq_free(q);
}

/* WQ_BACKGROUND: behind the plain adds; a plain add moves such a key up; a key handed out
 * is background again only when added so. */
static void test_background(void **state)
{
    (void)state;
    struct wq_opts o = {0};
    struct wq *q = wq_new(&o);
    wq_add_level(q, "b1", WQ_BACKGROUND);
    wq_add_level(q, "b2", WQ_BACKGROUND);
    wq_add_level(q, "b3", WQ_BACKGROUND);
    wq_add(q, "p1");
    wq_add(q, "b2");                      /* moves up to plain, behind p1 */
    wq_add_level(q, "p1", WQ_BACKGROUND); /* not down */
    struct wq_stats st;
    wq_stats(q, &st);
    assert_int_equal(st.depth, 4);
    assert_int_equal(st.background, 2);
    assert_int_equal(st.urgent, 0);
    assert_string_equal(wq_get(q), "p1");
    assert_int_equal(wq_handed_level(q, "p1"), WQ_PLAIN);
    assert_string_equal(wq_get(q), "b2");
    assert_string_equal(wq_get(q), "b1");
    assert_int_equal(wq_handed_level(q, "b1"), WQ_BACKGROUND);
    /* put back where it was at once: behind p2 below */
    wq_add_after_level(q, "b1", 0, wq_handed_level(q, "b1"));
    assert_int_equal(wq_done(q, "b1"), 0);
    wq_stats(q, &st);
    assert_int_equal(st.background, 2);
    wq_add_level(q, "p1", WQ_BACKGROUND); /* p1 is processed: it comes back background */
    assert_int_equal(wq_done(q, "p1"), 0);
    wq_add(q, "p2");
    assert_string_equal(wq_get(q), "p2");
    assert_string_equal(wq_get(q), "b3");
    assert_string_equal(wq_get(q), "b1");
    assert_string_equal(wq_get(q), "p1");
    assert_null(wq_get(q));
    wq_free(q);
}

static void test_backoff_sequence(void **state)
{
    (void)state;
    struct fake_clock c = {.t = 50};
    struct wq_opts o = {.now = fake_now, .now_ud = &c};
    struct wq *q = wq_new(&o);
    double want = 0.005;
    for (unsigned i = 0; i < 30; i++) {
        double d = wq_when(q, "ns/x");
        double exp = want > 1000 ? 1000 : want;
        assert_true(fabs(d - exp) < 1e-9);
        assert_int_equal(wq_num_requeues(q, "ns/x"), i + 1);
        want *= 2;
        c.t += 1; /* keep the bucket full so only the per-item limiter counts */
    }
    /* Explicit first values: 5 ms, 10 ms, 20 ms. */
    wq_forget(q, "ns/x");
    assert_int_equal(wq_num_requeues(q, "ns/x"), 0);
    assert_true(fabs(wq_when(q, "ns/x") - 0.005) < 1e-12);
    assert_true(fabs(wq_when(q, "ns/x") - 0.010) < 1e-12);
    assert_true(fabs(wq_when(q, "ns/x") - 0.020) < 1e-12);
    /* Other keys are independent. */
    assert_true(fabs(wq_when(q, "ns/y") - 0.005) < 1e-12);
    wq_forget(q, "ns/x");
    wq_forget(q, "ns/y");
    wq_free(q);
}

static void test_bucket_limit(void **state)
{
    (void)state;
    struct fake_clock c = {.t = 100};
    struct wq_opts o = {.now = fake_now, .now_ud = &c};
    struct wq *q = wq_new(&o);
    char key[32];
    /* Burst of 100: each fresh key gets the per-item 5 ms. */
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_true(fabs(wq_when(q, key) - 0.005) < 1e-12);
    }
    /* Then 10 per second: 0.1 s, 0.2 s, 0.3 s. */
    assert_true(fabs(wq_when(q, "k100") - 0.1) < 1e-9);
    assert_true(fabs(wq_when(q, "k101") - 0.2) < 1e-9);
    assert_true(fabs(wq_when(q, "k102") - 0.3) < 1e-9);
    /* One second later 10 tokens were refilled: the deficit of 3 is paid, 7 left. */
    c.t += 1.0;
    for (int i = 0; i < 7; i++) {
        snprintf(key, sizeof key, "m%d", i);
        assert_true(fabs(wq_when(q, key) - 0.005) < 1e-12);
    }
    assert_true(fabs(wq_when(q, "m7") - 0.1) < 1e-9);
    /* The bucket never holds more than the burst. */
    c.t += 1000;
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof key, "n%d", i);
        assert_true(fabs(wq_when(q, key) - 0.005) < 1e-12);
    }
    assert_true(fabs(wq_when(q, "n100") - 0.1) < 1e-9);
    wq_free(q);
}

/* ---- loop-driven tests ---------------------------------------------------- */

struct rec {
    struct ev_loop *loop;
    char order[16][16];
    int n;
    int want;
    bool done_sync; /* call wq_done from process */
    bool timed_out;
    ev_timer timeout;
};

static void rec_process(struct wq *q, const char *key, void *ud)
{
    struct rec *r = ud;
    if (r->n < 16)
        snprintf(r->order[r->n], sizeof r->order[0], "%s", key);
    r->n++;
    if (r->done_sync)
        assert_int_equal(wq_done(q, key), 0);
    if (r->want && r->n >= r->want)
        ev_break(r->loop, EVBREAK_ALL);
}

static void rec_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct rec *r = w->data;
    r->timed_out = true;
    ev_break(loop, EVBREAK_ALL);
}

static void rec_init(struct rec *r, struct ev_loop *loop, double timeout)
{
    memset(r, 0, sizeof *r);
    r->loop = loop;
    ev_now_update(loop);
    ev_timer_init(&r->timeout, rec_timeout, timeout, 0.);
    r->timeout.data = r;
    ev_timer_start(loop, &r->timeout);
}

static void test_add_after_order(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct rec r;
    rec_init(&r, loop, 5.0);
    r.done_sync = true;
    r.want = 4;
    struct wq_opts o = {.loop = loop, .process = rec_process, .ud = &r};
    struct wq *q = wq_new(&o);
    wq_add_after(q, "c", 0.15);
    wq_add_after(q, "a", 0.05);
    wq_add_after(q, "b", 0.10);
    /* Earlier time wins for a waiting key; a later one is ignored. */
    wq_add_after(q, "c", 0.02);
    wq_add_after(q, "a", 2.0);
    struct wq_stats st;
    wq_stats(q, &st);
    assert_int_equal(st.waiting, 3);
    assert_int_equal(st.depth, 0);
    /* delay <= 0 adds now. */
    wq_add_after(q, "now", 0);
    wq_add_after(q, "now", -1);
    wq_stats(q, &st);
    assert_int_equal(st.depth, 1);
    ev_run(loop, 0);
    assert_false(r.timed_out);
    assert_int_equal(r.n, 4);
    assert_string_equal(r.order[0], "now");
    assert_string_equal(r.order[1], "c");
    assert_string_equal(r.order[2], "a");
    assert_string_equal(r.order[3], "b");
    wq_stats(q, &st);
    assert_int_equal(st.waiting, 0);
    assert_int_equal(st.depth, 0);
    assert_int_equal(st.processing, 0);
    wq_free(q);
    ev_timer_stop(loop, &r.timeout);
    ev_loop_destroy(loop);
}

struct bg_rec {
    struct rec r;
    struct wq *q;
};

static void bg_process(struct wq *q, const char *key, void *ud)
{
    struct bg_rec *b = ud;
    if (strcmp(key, "b1") != 0) /* b1 is held until release_b1 */
        b->r.done_sync = true;
    else
        b->r.done_sync = false;
    rec_process(q, key, &b->r);
}

static void release_b1(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct bg_rec *b = w->data;
    assert_int_equal(wq_done(b->q, "b1"), 0);
}

/* A delayed add (a retry, a requeue delay) comes plain: ahead of a background backlog; one
 * made at WQ_BACKGROUND (a pass put back, wq_handed_level) stays behind it. */
static void test_delayed_add_is_plain(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct bg_rec b;
    rec_init(&b.r, loop, 5.0);
    b.r.want = 4;
    struct wq_opts o = {.loop = loop, .process = bg_process, .ud = &b, .workers = 1};
    b.q = wq_new(&o);
    wq_add_level(b.q, "b1", WQ_BACKGROUND);
    wq_add_level(b.q, "b2", WQ_BACKGROUND);
    wq_add_after(b.q, "d", 0.05);
    wq_add_after_level(b.q, "e", 0.05, WQ_BACKGROUND);
    ev_timer rel;
    ev_timer_init(&rel, release_b1, 0.15, 0);
    rel.data = &b;
    ev_timer_start(loop, &rel);
    ev_run(loop, 0);
    assert_false(b.r.timed_out);
    assert_int_equal(b.r.n, 4);
    assert_string_equal(b.r.order[0], "b1");
    assert_string_equal(b.r.order[1], "d");
    assert_string_equal(b.r.order[2], "b2");
    assert_string_equal(b.r.order[3], "e");
    wq_free(b.q);
    ev_timer_stop(loop, &rel);
    ev_timer_stop(loop, &b.r.timeout);
    ev_loop_destroy(loop);
}

static void test_concurrency_limit(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct rec r;
    rec_init(&r, loop, 5.0);
    struct wq_opts o = {.loop = loop, .workers = 2, .process = rec_process, .ud = &r};
    struct wq *q = wq_new(&o);
    const char *keys[] = {"k1", "k2", "k3", "k4", "k5"};
    for (int i = 0; i < 5; i++)
        wq_add(q, keys[i]);
    tloop_run_for(loop, 0.02);
    struct wq_stats st;
    wq_stats(q, &st);
    assert_int_equal(r.n, 2);
    assert_int_equal(st.processing, 2);
    assert_int_equal(st.depth, 3);
    assert_string_equal(r.order[0], "k1");
    assert_string_equal(r.order[1], "k2");
    /* Adding a key in processing only marks it dirty. */
    wq_add(q, "k1");
    wq_stats(q, &st);
    assert_int_equal(st.depth, 3);
    /* Finishing one frees a slot: exactly one more is handed out. */
    assert_int_equal(wq_done(q, "k2"), 0);
    tloop_run_for(loop, 0.02);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.order[2], "k3");
    /* k1 finishes and is re-queued behind k4, k5 (dirty while processing). */
    assert_int_equal(wq_done(q, "k1"), 0);
    assert_int_equal(wq_done(q, "k3"), 0);
    tloop_run_for(loop, 0.02);
    assert_int_equal(r.n, 5);
    assert_string_equal(r.order[3], "k4");
    assert_string_equal(r.order[4], "k5");
    assert_int_equal(wq_done(q, "k4"), 0);
    assert_int_equal(wq_done(q, "k5"), 0);
    tloop_run_for(loop, 0.02);
    assert_int_equal(r.n, 6);
    assert_string_equal(r.order[5], "k1");
    assert_int_equal(wq_done(q, "k1"), 0);
    wq_stats(q, &st);
    assert_int_equal(st.processing, 0);
    assert_int_equal(st.depth, 0);
    assert_false(r.timed_out);
    wq_free(q);
    ev_timer_stop(loop, &r.timeout);
    ev_loop_destroy(loop);
}

static void test_rate_limited_and_forget(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct rec r;
    rec_init(&r, loop, 5.0);
    r.done_sync = true;
    r.want = 1;
    struct wq_opts o = {.loop = loop, .process = rec_process, .ud = &r};
    struct wq *q = wq_new(&o);
    wq_add_rate_limited(q, "ns/x");
    struct wq_stats st;
    wq_stats(q, &st);
    assert_int_equal(st.waiting, 1);
    assert_int_equal(st.depth, 0);
    assert_int_equal(st.retries, 1);
    assert_int_equal(wq_num_requeues(q, "ns/x"), 1);
    ev_run(loop, 0);
    assert_false(r.timed_out);
    assert_int_equal(r.n, 1);
    /* Failure count survives processing until forget. */
    assert_int_equal(wq_num_requeues(q, "ns/x"), 1);
    wq_add_rate_limited(q, "ns/x");
    assert_int_equal(wq_num_requeues(q, "ns/x"), 2);
    r.want = 2;
    ev_run(loop, 0);
    assert_false(r.timed_out);
    assert_int_equal(r.n, 2);
    wq_forget(q, "ns/x");
    assert_int_equal(wq_num_requeues(q, "ns/x"), 0);
    wq_stats(q, &st);
    assert_int_equal(st.retries, 2);
    assert_int_equal(st.waiting, 0);
    wq_free(q);
    ev_timer_stop(loop, &r.timeout);
    ev_loop_destroy(loop);
}

static void test_shutdown(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct rec r;
    rec_init(&r, loop, 5.0);
    struct wq_opts o = {.loop = loop, .workers = 1, .process = rec_process, .ud = &r};
    struct wq *q = wq_new(&o);
    char key[32];
    for (int i = 0; i < 50; i++) {
        snprintf(key, sizeof key, "ns/q%d", i);
        wq_add(q, key);
        snprintf(key, sizeof key, "ns/w%d", i);
        wq_add_after(q, key, 10 + i);
        snprintf(key, sizeof key, "ns/r%d", i);
        wq_add_rate_limited(q, key);
    }
    tloop_run_for(loop, 0.01);
    assert_int_equal(r.n, 1); /* one worker, never done */
    wq_shutdown(q);
    assert_true(wq_shutting_down(q));
    struct wq_stats st;
    wq_stats(q, &st);
    assert_int_equal(st.depth, 0);
    assert_int_equal(st.waiting, 0);
    assert_int_equal(st.processing, 1);
    /* Adds after shutdown are ignored; nothing else is handed out. */
    wq_add(q, "ns/late");
    wq_add(q, "ns/q0");
    wq_add_after(q, "ns/late2", 0.001);
    wq_add_rate_limited(q, "ns/late3");
    assert_null(wq_get(q));
    tloop_run_for(loop, 0.02);
    assert_int_equal(r.n, 1);
    wq_stats(q, &st);
    assert_int_equal(st.depth, 0);
    assert_int_equal(st.waiting, 0);
    /* The in-flight key can still be finished; it is not re-queued. */
    assert_int_equal(wq_done(q, "ns/q0"), 0);
    wq_stats(q, &st);
    assert_int_equal(st.processing, 0);
    assert_int_equal(st.depth, 0);
    /* Freeing releases everything (failure counts included): LeakSanitizer checks. */
    wq_free(q);
    ev_timer_stop(loop, &r.timeout);
    ev_loop_destroy(loop);
}

static void test_free_with_inflight(void **state)
{
    (void)state;
    struct wq_opts o = {0};
    struct wq *q = wq_new(&o);
    char key[32];
    for (int i = 0; i < 500; i++) { /* forces the table to grow */
        snprintf(key, sizeof key, "ns/k%d", i);
        wq_add(q, key);
    }
    assert_string_equal(wq_get(q), "ns/k0");
    wq_add_after(q, "ns/later", 100);
    struct wq_stats st;
    wq_stats(q, &st);
    assert_int_equal(st.depth, 499);
    assert_int_equal(st.waiting, 1);
    wq_free(q);
    wq_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dedup),
        cmocka_unit_test(test_dirty_while_processing),
        cmocka_unit_test(test_urgent_first),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_backoff_sequence),
        cmocka_unit_test(test_bucket_limit),
        cmocka_unit_test(test_add_after_order),
        cmocka_unit_test(test_concurrency_limit),
        cmocka_unit_test(test_rate_limited_and_forget),
        cmocka_unit_test(test_queued),
        cmocka_unit_test(test_background),
        cmocka_unit_test(test_delayed_add_is_plain),
        cmocka_unit_test(test_shutdown),
        cmocka_unit_test(test_free_with_inflight),
    };
    return cmocka_run_group_tests_name("workqueue", tests, NULL, NULL);
}
