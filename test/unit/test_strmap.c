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

/* Where a key is first seen, for strmap_foreach. */
static int first_key(const char *key, void *val, void *ud)
{
    (void)val;
    *(const char **)ud = key;
    return 1;
}

/* A borrowed map keeps the caller's pointers: a replacement takes the new one (the old key's
 * memory may go at once: ASan sees any later read), deletion and free leave them alone. */
static void test_borrowed_keys(void **state)
{
    (void)state;
    struct strmap m;
    strmap_init_borrowed(&m);
    int a = 1, b = 2;
    char *k1 = strdup("ns/a"), *k2 = strdup("ns/a");
    assert_null(strmap_put(&m, k1, &a));
    const char *seen = NULL;
    strmap_foreach(&m, first_key, &seen);
    assert_ptr_equal(seen, k1); /* not copied */
    assert_ptr_equal(strmap_put(&m, k2, &b), &a);
    free(k1); /* the map holds k2 now */
    assert_ptr_equal(strmap_get(&m, "ns/a"), &b);
    strmap_foreach(&m, first_key, &seen);
    assert_ptr_equal(seen, k2);
    /* enough keys to grow the table several times */
    char *keys[100];
    for (int i = 0; i < 100; i++) {
        keys[i] = malloc(16);
        snprintf(keys[i], 16, "k%d", i);
        assert_null(strmap_put(&m, keys[i], &a));
    }
    for (int i = 0; i < 100; i += 2)
        assert_ptr_equal(strmap_del(&m, keys[i]), &a);
    for (int i = 0; i < 100; i++)
        assert_true((strmap_get(&m, keys[i]) != NULL) == (i % 2 == 1));
    assert_int_equal(strmap_len(&m), 51);
    strmap_free(&m, NULL);
    assert_true(m.borrowed); /* still a borrowed map, empty */
    for (int i = 0; i < 100; i++)
        free(keys[i]); /* the caller's all along: no double free */
    free(k2);
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
        cmocka_unit_test(test_borrowed_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
