/* heaptrim: a burst of requests makes one malloc_trim, after the delay; a loop without a
 * trimmer trims at once; one trimmer per loop; freeing detaches it; the hook runs after each
 * trim and alone for heaptrim_release, coalesced alike. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ev.h>
#include <stdlib.h>

#include "pkg/util/heaptrim.h"

/* Runs the loop in short steps until `h` made `want` trims or 10 s went by. */
static void run_until_trims(struct ev_loop *loop, const struct heaptrim *h, size_t want)
{
    size_t req = 0, trims = 0;
    for (int i = 0; i < 1000; i++) {
        heaptrim_counts(h, &req, &trims);
        if (trims >= want)
            return;
        ev_run(loop, EVRUN_ONCE);
    }
}

static void test_burst_coalesced(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct heaptrim *h = heaptrim_new(loop, 0.01);
    assert_non_null(h);
    assert_ptr_equal(ev_userdata(loop), h);
    assert_null(heaptrim_new(loop, 0.01)); /* one per loop */
    for (int i = 0; i < 5; i++)
        heaptrim_request(loop);
    size_t req = 0, trims = 0;
    heaptrim_counts(h, &req, &trims);
    assert_int_equal(req, 5);
    assert_int_equal(trims, 0); /* not at once */
    run_until_trims(loop, h, 1);
    heaptrim_counts(h, &req, &trims);
    assert_int_equal(trims, 1);
    /* the timer is one-shot: the loop has nothing left to run */
    assert_int_equal(ev_run(loop, EVRUN_NOWAIT), 0);
    heaptrim_counts(h, &req, &trims);
    assert_int_equal(trims, 1);
    /* a later request makes a second trim */
    heaptrim_request(loop);
    run_until_trims(loop, h, 2);
    heaptrim_counts(h, &req, &trims);
    assert_int_equal(req, 6);
    assert_int_equal(trims, 2);
    /* freed with a request pending: dropped, the loop detached */
    heaptrim_request(loop);
    heaptrim_free(h);
    assert_null(ev_userdata(loop));
    assert_int_equal(ev_run(loop, EVRUN_NOWAIT), 0);
    heaptrim_request(loop); /* no trimmer: at once */
    heaptrim_free(NULL);
    ev_loop_destroy(loop);
}

/* A loop whose userdata is someone else's: no trimmer is attached, requests trim at once and
 * leave the userdata alone. */
static void test_userdata_taken(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    int other = 42;
    ev_set_userdata(loop, &other);
    assert_null(heaptrim_new(loop, 0.01));
    heaptrim_request(loop);
    assert_ptr_equal(ev_userdata(loop), &other);
    assert_int_equal(other, 42);
    ev_set_userdata(loop, NULL);
    ev_loop_destroy(loop);
}

static void count_hook(void *ud)
{
    (*(int *)ud)++;
}

/* Runs the loop in short steps until *n reaches want or 10 s went by. */
static void run_until_hooks(struct ev_loop *loop, const int *n, int want)
{
    for (int i = 0; i < 1000 && *n < want; i++)
        ev_run(loop, EVRUN_ONCE);
}

static void test_hook(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    struct heaptrim *h = heaptrim_new(loop, 0.01);
    heaptrim_release(loop); /* no hook yet: nothing to run */
    assert_int_equal(ev_run(loop, EVRUN_NOWAIT), 0);
    int n = 0;
    heaptrim_set_hook(h, count_hook, &n);
    /* releases alone: one hook, no trim */
    heaptrim_release(loop);
    heaptrim_release(loop);
    assert_int_equal(n, 0); /* not at once */
    run_until_hooks(loop, &n, 1);
    size_t req = 0, trims = 0;
    heaptrim_counts(h, &req, &trims);
    assert_int_equal(n, 1);
    assert_int_equal(trims, 0);
    assert_int_equal(ev_run(loop, EVRUN_NOWAIT), 0);
    assert_int_equal(n, 1);
    /* a release with a request: one trim and one hook */
    heaptrim_release(loop);
    heaptrim_request(loop);
    heaptrim_release(loop);
    run_until_hooks(loop, &n, 2);
    heaptrim_counts(h, &req, &trims);
    assert_int_equal(n, 2);
    assert_int_equal(trims, 1);
    assert_int_equal(req, 1);
    /* the next release alone trims nothing */
    heaptrim_release(loop);
    run_until_hooks(loop, &n, 3);
    heaptrim_counts(h, &req, &trims);
    assert_int_equal(n, 3);
    assert_int_equal(trims, 1);
    heaptrim_set_hook(h, NULL, NULL);
    heaptrim_request(loop);
    run_until_trims(loop, h, 2);
    assert_int_equal(n, 3);
    heaptrim_free(h);
    ev_loop_destroy(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_coalesced),
        cmocka_unit_test(test_userdata_taken),
        cmocka_unit_test(test_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
