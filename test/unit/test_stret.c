/* Unit tests for bench/dispatch/stret: the final-status wait follows the workers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>

#include "bench/dispatch/stret.h"
#include "test/support/tjson.h"

static json_t *copy_running(void)
{
    return tjson("{'status':{'active':1,'ready':1}}");
}

static json_t *copy_done(void)
{
    return tjson("{'status':{'succeeded':1,'conditions':[{'type':'Complete','status':'True'}]}}");
}

static json_t *hub_final(void)
{
    json_t *j =
        tjson("{'metadata':{'annotations':{}},"
              "'status':{'succeeded':1,'conditions':[{'type':'Complete','status':'True'}]}}");
    json_object_set_new(json_object_get(json_object_get(j, "metadata"), "annotations"),
                        "kueue-ks.io/remote-status", json_string("{\"succeeded\":1}"));
    return j;
}

/* While a copy runs on its worker the wait goes to the cap, however late (a worker that marks
 * copies Complete 50 s after their pods end is not the hub's lag); once every copy finished,
 * a short grace after the last one, never past the cap. */
static void test_wait_follows_workers(void **state)
{
    (void)state;
    struct stret *s = stret_new(3);
    json_t *run = copy_running(), *done = copy_done(), *fin = hub_final();
    for (int i = 0; i < 3; i++)
        stret_copy(s, i, run, 1.0);
    assert_int_equal(stret_terminal(s), 0);
    assert_true(stret_wait_until(s, 300.0, 30.0) == 300.0);
    stret_copy(s, 0, done, 100.0);
    stret_copy(s, 1, done, 150.0);
    assert_int_equal(stret_terminal(s), 2);
    assert_true(stret_wait_until(s, 300.0, 30.0) == 300.0); /* job 2 still runs */
    stret_hub(s, 0, fin, 101.0);
    assert_int_equal(stret_finals(s), 1);
    stret_copy(s, 2, done, 200.0); /* the last copy finishes: 30 s more for the hub */
    assert_int_equal(stret_terminal(s), 3);
    assert_true(stret_wait_until(s, 300.0, 30.0) == 230.0);
    assert_true(stret_wait_until(s, 210.0, 30.0) == 210.0); /* never past the cap */
    struct stret_fig f;
    stret_figures(s, &f);
    assert_int_equal(f.terminal, 3);
    assert_int_equal(f.finals, 1);
    json_decref(run);
    json_decref(done);
    json_decref(fin);
    stret_free(s);
}

/* A copy never seen on a worker is not finished: the wait goes to the cap. */
static void test_unseen_copy_waits(void **state)
{
    (void)state;
    struct stret *s = stret_new(2);
    json_t *done = copy_done();
    stret_copy(s, 0, done, 5.0);
    assert_true(stret_wait_until(s, 99.0, 30.0) == 99.0);
    assert_int_equal(stret_terminal(s), 1);
    json_decref(done);
    stret_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wait_follows_workers),
        cmocka_unit_test(test_unseen_copy_waits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
