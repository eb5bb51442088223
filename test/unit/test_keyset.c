/* Unit tests for pkg/util/keyset: elements found by the key they carry, checked against a
 * strmap filled the same way. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/keyset.h"
#include "pkg/util/strmap.h"

struct elem {
    int id;
    char key[24];
};

static const char *key_of(const void *e)
{
    return ((const struct elem *)e)->key;
}

static void test_put_get_del(void **state)
{
    (void)state;
    struct keyset s;
    keyset_init(&s, key_of);
    struct elem a = {1, "x"}, b = {2, "x"}, c = {3, "y"};
    assert_null(keyset_get(&s, "x"));
    assert_null(keyset_del(&s, "x"));
    assert_null(keyset_put(&s, &a));
    assert_ptr_equal(keyset_get(&s, "x"), &a);
    assert_ptr_equal(keyset_put(&s, &b), &a); /* same key: replaced, not added */
    assert_null(keyset_put(&s, &c));
    assert_int_equal(keyset_len(&s), 2);
    assert_ptr_equal(keyset_get(&s, "x"), &b);
    assert_ptr_equal(keyset_del(&s, "x"), &b);
    assert_null(keyset_get(&s, "x"));
    assert_ptr_equal(keyset_get(&s, "y"), &c);
    assert_int_equal(keyset_len(&s), 1);
    keyset_free(&s);
    assert_int_equal(keyset_len(&s), 0);
    assert_null(keyset_get(&s, "y"));
    keyset_free(&s); /* twice is fine */
}

struct walk {
    const void *seen[4096];
    size_t n;
    int stop_at;
};

static int walk_cb(void *e, void *ud)
{
    struct walk *w = ud;
    w->seen[w->n++] = e;
    return w->n == (size_t)w->stop_at ? 7 : 0;
}

static int map_walk_cb(const char *key, void *val, void *ud)
{
    (void)key;
    return walk_cb(val, ud);
}

/* Random puts, replacements and deletes (long probe runs: keys with equal hashes modulo the
 * table, deletions in the middle of runs) against a strmap: the same elements, found the same,
 * walked in the same order. */
/* Elements that are their own key (keyset_str_key), records whose key comes first included;
 * keyset_free_elems frees each one (the unit tests' leak check fails on one left) and empties the
 * set. */
static void test_str_key_and_free_elems(void **state)
{
    (void)state;
    struct keyset s;
    keyset_init(&s, keyset_str_key);
    char *rec = malloc(8);
    memcpy(rec, "ns/a\0c1", 8); /* a key, then more bytes */
    assert_null(keyset_put(&s, rec));
    for (int i = 0; i < 100; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        assert_null(keyset_put(&s, strdup(k)));
    }
    assert_ptr_equal(keyset_get(&s, "ns/a"), rec);
    assert_non_null(keyset_get(&s, "k42"));
    assert_null(keyset_get(&s, "c1"));
    keyset_free_elems(&s, free);
    assert_int_equal(keyset_len(&s), 0);
    assert_null(keyset_get(&s, "ns/a"));
}

static void test_against_strmap(void **state)
{
    (void)state;
    enum { N = 1500 };
    static struct elem pool[2][N];
    struct keyset s;
    keyset_init(&s, key_of);
    struct strmap m;
    strmap_init(&m);
    unsigned seed = 12345;
    for (int round = 0; round < 40000; round++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % N);
        int op = (int)((seed >> 20) % 3);
        int gen = (int)((seed >> 24) & 1);
        struct elem *e = &pool[gen][k];
        e->id = k;
        snprintf(e->key, sizeof e->key, "ns/job-%d", k);
        if (op < 2) {
            /* the other generation's element with this key leaves the set here */
            void *prev = keyset_put(&s, e);
            void *mprev = strmap_put(&m, e->key, e);
            assert_ptr_equal(prev, mprev);
        } else {
            assert_ptr_equal(keyset_del(&s, e->key), strmap_del(&m, e->key));
        }
        if (round % 997 == 0) {
            for (int j = 0; j < N; j++) {
                char key[24];
                snprintf(key, sizeof key, "ns/job-%d", j);
                assert_ptr_equal(keyset_get(&s, key), strmap_get(&m, key));
            }
        }
    }
    assert_int_equal(keyset_len(&s), strmap_len(&m));
    struct walk *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    assert_int_equal(keyset_foreach(&s, walk_cb, a), 0);
    assert_int_equal(strmap_foreach(&m, map_walk_cb, b), 0);
    assert_int_equal(a->n, keyset_len(&s));
    assert_int_equal(a->n, b->n);
    assert_memory_equal(a->seen, b->seen, a->n * sizeof a->seen[0]);
    /* a walk stops where its callback says, with that value */
    memset(a, 0, sizeof *a);
    a->stop_at = 3;
    assert_int_equal(keyset_foreach(&s, walk_cb, a), 7);
    assert_int_equal(a->n, 3);
    free(a);
    free(b);
    keyset_free(&s);
    strmap_free(&m, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_del),
        cmocka_unit_test(test_against_strmap),
        cmocka_unit_test(test_str_key_and_free_elems),
    };
    return cmocka_run_group_tests_name("keyset", tests, NULL, NULL);
}
