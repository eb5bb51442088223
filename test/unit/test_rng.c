/* Unit tests for pkg/util/rng. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pkg/util/rng.h"

static void test_seeded_sequences_repeat(void **state)
{
    (void)state;
    struct rng a, b, c;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    rng_seed(&c, 43);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = rng_u64(&a);
        assert_true(x == rng_u64(&b));
        if (x != rng_u64(&c))
            differ++;
    }
    assert_true(differ > 990);
    rng_seed(&a, 0); /* zero would be a fixed point of xorshift */
    assert_true(a.s != 0);
    assert_true(rng_u64(&a) != 0 || rng_u64(&a) != 0);
}

static void test_double_range_and_mean(void **state)
{
    (void)state;
    struct rng r = {0};
    int salt = 0;
    rng_seed_entropy(&r, &salt);
    double sum = 0, lo = 1, hi = 0;
    for (int i = 0; i < 100000; i++) {
        double x = rng_double(&r);
        assert_true(x >= 0.0 && x < 1.0);
        sum += x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    /* Uniform: the mean of 1e5 samples is within ~0.005 of 0.5 with overwhelming probability. */
    assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
    assert_true(lo < 0.001 && hi > 0.999);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeded_sequences_repeat),
        cmocka_unit_test(test_double_range_and_mean),
    };
    return cmocka_run_group_tests_name("rng", tests, NULL, NULL);
}
