/* Unit tests for pkg/util/strmap. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/strmap.h"

static void test_put_get_del(void **state)
{
    (void)state;
    struct strmap m;
    strmap_init(&m);
    int a = 1, b = 2;
    assert_null(strmap_get(&m, "x"));
    assert_null(strmap_del(&m, "x"));
    assert_null(strmap_put(&m, "x", &a));
    assert_ptr_equal(strmap_get(&m, "x"), &a);
    assert_ptr_equal(strmap_put(&m, "x", &b), &a); /* replaced, not added */
    assert_int_equal(strmap_len(&m), 1);
    assert_ptr_equal(strmap_del(&m, "x"), &b);
    assert_null(strmap_get(&m, "x"));
    assert_int_equal(strmap_len(&m), 0);
    strmap_free(&m, NULL);
}

static int count_cb(const char *key, void *val, void *ud)
{
    (void)key;
    (void)val;
    (*(size_t *)ud)++;
    return 0;
}

/* Random inserts and deletes checked against a plain array: deletion's
 * backward shift must keep every other key reachable (collisions, wrap). */
static void test_random_against_reference(void **state)
{
    (void)state;
    enum { K = 2000 };
    static uintptr_t ref[K]; /* 0 = absent, else the value */
    memset(ref, 0, sizeof ref);
    struct strmap m;
    strmap_init(&m);
    unsigned seed = 12345;
    for (int step = 0; step < 40000; step++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % K);
        char key[32];
        snprintf(key, sizeof key, "node-%d", k);
        if ((seed >> 4) % 3 == 0) {
            void *got = strmap_del(&m, key);
            assert_int_equal((uintptr_t)got, ref[k]);
            ref[k] = 0;
        } else {
            uintptr_t v = (uintptr_t)step + 1;
            void *prev = strmap_put(&m, key, (void *)v);
            assert_int_equal((uintptr_t)prev, ref[k]);
            ref[k] = v;
        }
    }
    size_t live = 0;
    for (int k = 0; k < K; k++) {
        char key[32];
        snprintf(key, sizeof key, "node-%d", k);
        assert_int_equal((uintptr_t)strmap_get(&m, key), ref[k]);
        live += ref[k] != 0;
    }
    assert_int_equal(strmap_len(&m), live);
    size_t seen = 0;
    strmap_foreach(&m, count_cb, &seen);
    assert_int_equal(seen, live);
    strmap_free(&m, NULL);
}

static void test_free_values(void **state)
{
    (void)state;
    struct strmap m;
    strmap_init(&m);
    for (int i = 0; i < 100; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        strmap_put(&m, key, malloc(8)); /* freed by strmap_free: ASan checks leaks */
    }
    strmap_free(&m, free);
    assert_int_equal(strmap_len(&m), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_del),
        cmocka_unit_test(test_random_against_reference),
        cmocka_unit_test(test_free_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
