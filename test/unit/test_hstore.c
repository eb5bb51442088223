/* Unit tests for devhub/hstore: writes, RVs, listing, change replay, compaction, reopen. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devhub/hstore.h"

static json_t *obj(const char *name, int v)
{
    return json_pack("{s:s, s:{s:s}, s:i}", "kind", "ConfigMap", "metadata", "name", name, "v", v);
}

static const char *rv_of(json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
}

struct collect {
    int n;
    char keys[16][64];
    int64_t rvs[16];
    int types[16];
};

static int collect_obj(const char *key, json_t *o, void *ud)
{
    struct collect *c = ud;
    (void)o;
    snprintf(c->keys[c->n], 64, "%s", key);
    c->n++;
    return 0;
}

static int collect_change(int64_t rv, enum hstore_event ev, const char *key, json_t *o, void *ud)
{
    struct collect *c = ud;
    (void)o;
    snprintf(c->keys[c->n], 64, "%s", key);
    c->rvs[c->n] = rv;
    c->types[c->n] = ev;
    c->n++;
    return 0;
}

static void test_write_get_list(void **state)
{
    (void)state;
    struct hstore *s = NULL;
    struct err e;
    assert_int_equal(hstore_open(&s, NULL, 0, &e), 0);
    assert_int_equal(hstore_rv(s), 0);
    json_t *a = obj("a", 1), *b = obj("b", 2), *c = obj("c", 3);
    int64_t rv = 0;
    assert_int_equal(hstore_write(s, HSTORE_ADDED, "configmaps./ns1/b", b, &rv, &e), 0);
    assert_int_equal(rv, 1);
    assert_string_equal(rv_of(b), "1");
    assert_int_equal(hstore_write(s, HSTORE_ADDED, "configmaps./ns1/a", a, &rv, &e), 0);
    assert_int_equal(hstore_write(s, HSTORE_ADDED, "configmaps./ns2/c", c, &rv, &e), 0);
    assert_int_equal(rv, 3);
    assert_int_equal(hstore_rv(s), 3);

    json_t *got = NULL;
    assert_int_equal(hstore_get(s, "configmaps./ns1/a", &got, &e), 0);
    assert_string_equal(rv_of(got), "2");
    assert_int_equal(json_integer_value(json_object_get(got, "v")), 1);
    json_decref(got);
    assert_int_equal(hstore_get(s, "configmaps./ns1/zz", &got, &e), -ENOENT);
    assert_null(got);

    struct collect col = {0};
    assert_int_equal(hstore_list(s, "configmaps./ns1/", NULL, collect_obj, &col, &e), 0);
    assert_int_equal(col.n, 2);
    assert_string_equal(col.keys[0], "configmaps./ns1/a");
    assert_string_equal(col.keys[1], "configmaps./ns1/b");
    memset(&col, 0, sizeof(col));
    assert_int_equal(hstore_list(s, "configmaps./", "configmaps./ns1/a", collect_obj, &col, &e), 0);
    assert_int_equal(col.n, 2);
    assert_string_equal(col.keys[0], "configmaps./ns1/b");
    assert_string_equal(col.keys[1], "configmaps./ns2/c");
    assert_int_equal(hstore_count(s, "configmaps./"), 3);
    assert_int_equal(hstore_count(s, "secrets./"), 0);

    /* Update and delete append changes with increasing RVs. */
    json_object_set_new(a, "v", json_integer(10));
    assert_int_equal(hstore_write(s, HSTORE_MODIFIED, "configmaps./ns1/a", a, &rv, &e), 0);
    assert_int_equal(rv, 4);
    assert_int_equal(hstore_write(s, HSTORE_DELETED, "configmaps./ns1/b", b, &rv, &e), 0);
    assert_int_equal(rv, 5);
    assert_int_equal(hstore_get(s, "configmaps./ns1/b", &got, &e), -ENOENT);

    memset(&col, 0, sizeof(col));
    assert_int_equal(hstore_changes(s, 2, "configmaps./ns1/", collect_change, &col, &e), 0);
    assert_int_equal(col.n, 2);
    assert_int_equal(col.rvs[0], 4);
    assert_int_equal(col.types[0], HSTORE_MODIFIED);
    assert_int_equal(col.rvs[1], 5);
    assert_int_equal(col.types[1], HSTORE_DELETED);
    assert_string_equal(hstore_event_name(HSTORE_DELETED), "DELETED");

    json_decref(a);
    json_decref(b);
    json_decref(c);
    hstore_close(s);
}

static void test_compaction(void **state)
{
    (void)state;
    struct hstore *s = NULL;
    struct err e;
    assert_int_equal(hstore_open(&s, ":memory:", 3, &e), 0);
    for (int i = 0; i < 10; i++) {
        json_t *o = obj("x", i);
        assert_int_equal(
            hstore_write(s, i ? HSTORE_MODIFIED : HSTORE_ADDED, "r./ns/x", o, NULL, &e), 0);
        json_decref(o);
    }
    assert_int_equal(hstore_compact(s, &e), 7);
    assert_int_equal(hstore_compacted_rv(s), 7);
    assert_int_equal(hstore_compact(s, &e), 0);
    struct collect col = {0};
    err_clear(&e);
    assert_int_equal(hstore_changes(s, 3, "r./", collect_change, &col, &e), -ERANGE);
    assert_non_null(strstr(e.msg, "too old resource version: 3 (8)"));
    assert_int_equal(col.n, 0);
    assert_int_equal(hstore_changes(s, 7, "r./", collect_change, &col, &e), 0);
    assert_int_equal(col.n, 3);
    assert_int_equal(col.rvs[0], 8);
    assert_int_equal(hstore_compact_to(s, 100, &e), 3);
    assert_int_equal(hstore_compacted_rv(s), 10);
    /* The objects themselves survive compaction. */
    json_t *got = NULL;
    assert_int_equal(hstore_get(s, "r./ns/x", &got, &e), 0);
    assert_int_equal(json_integer_value(json_object_get(got, "v")), 9);
    json_decref(got);
    hstore_close(s);
}

static void test_reopen_file(void **state)
{
    (void)state;
    char path[] = "/tmp/devhub-store-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    struct hstore *s = NULL;
    struct err e;
    assert_int_equal(hstore_open(&s, path, 100, &e), 0);
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof(name), "o%d", i);
        char key[32];
        snprintf(key, sizeof(key), "r./ns/%s", name);
        json_t *o = obj(name, i);
        assert_int_equal(hstore_write(s, HSTORE_ADDED, key, o, NULL, &e), 0);
        json_decref(o);
    }
    assert_int_equal(hstore_compact_to(s, 2, &e), 2);
    hstore_close(s);

    assert_int_equal(hstore_open(&s, path, 100, &e), 0);
    assert_int_equal(hstore_rv(s), 5);
    assert_int_equal(hstore_compacted_rv(s), 2);
    assert_int_equal(hstore_count(s, "r./ns/"), 5);
    struct collect col = {0};
    assert_int_equal(hstore_changes(s, 3, "", collect_change, &col, &e), 0);
    assert_int_equal(col.n, 2);
    assert_string_equal(col.keys[0], "r./ns/o3");
    json_t *o = obj("o5", 5);
    int64_t rv = 0;
    assert_int_equal(hstore_write(s, HSTORE_ADDED, "r./ns/o5", o, &rv, &e), 0);
    assert_int_equal(rv, 6);
    json_decref(o);
    hstore_close(s);

    /* A bad path gives a clear error. */
    err_clear(&e);
    assert_int_equal(hstore_open(&s, "/nonexistent-dir/x.db", 0, &e), -EIO);
    assert_null(s);
    assert_non_null(strstr(e.msg, "/nonexistent-dir/x.db"));
    char side[300];
    snprintf(side, sizeof(side), "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", path);
    unlink(side);
    unlink(path);
}

static void test_gc_indexes(void **state)
{
    (void)state;
    struct hstore *s = NULL;
    struct err e;
    assert_int_equal(hstore_open(&s, NULL, 0, &e), 0);
    json_t *owner = json_pack("{s:{s:s, s:s}}", "metadata", "name", "o", "uid", "u-owner");
    json_t *dep = json_pack("{s:{s:s, s:s, s:[{s:s}, {s:s}]}}", "metadata", "name", "d", "uid",
                            "u-dep", "ownerReferences", "uid", "u-other", "uid", "u-owner");
    json_t *plain = json_pack("{s:{s:s, s:s}}", "metadata", "name", "p", "uid", "u-owner-2");
    assert_int_equal(hstore_write(s, HSTORE_ADDED, "r./ns/o", owner, NULL, &e), 0);
    assert_int_equal(hstore_write(s, HSTORE_ADDED, "r./ns/d", dep, NULL, &e), 0);
    assert_int_equal(hstore_write(s, HSTORE_ADDED, "r./ns/p", plain, NULL, &e), 0);
    assert_true(hstore_uid_exists(s, "u-owner"));
    assert_false(hstore_uid_exists(s, "u-nope"));
    assert_false(hstore_uid_exists(s, ""));
    assert_true(hstore_has_dependents(s, "u-owner"));
    assert_true(hstore_has_dependents(s, "u-other"));
    /* "u-owner-2" is not a prefix match of "u-owner". */
    assert_false(hstore_has_dependents(s, "u-owner-2"));
    assert_false(hstore_has_dependents(s, "u-dep"));
    struct collect col = {0};
    assert_int_equal(hstore_list_owned(s, collect_obj, &col, &e), 0);
    assert_int_equal(col.n, 1);
    assert_string_equal(col.keys[0], "r./ns/d");
    memset(&col, 0, sizeof(col));
    assert_int_equal(hstore_list_dependents(s, "u-owner", collect_obj, &col, &e), 0);
    assert_int_equal(col.n, 1);
    memset(&col, 0, sizeof(col));
    assert_int_equal(hstore_list_foreground(s, collect_obj, &col, &e), 0);
    assert_int_equal(col.n, 0);
    /* Foreground deletion in progress is indexed; deleting clears the indexes. */
    json_object_set_new(json_object_get(owner, "metadata"), "deletionTimestamp",
                        json_string("2026-01-01T00:00:00Z"));
    json_object_set_new(json_object_get(owner, "metadata"), "finalizers",
                        json_pack("[s]", "foregroundDeletion"));
    assert_int_equal(hstore_write(s, HSTORE_MODIFIED, "r./ns/o", owner, NULL, &e), 0);
    assert_int_equal(hstore_list_foreground(s, collect_obj, &col, &e), 0);
    assert_int_equal(col.n, 1);
    assert_string_equal(col.keys[0], "r./ns/o");
    assert_int_equal(hstore_write(s, HSTORE_DELETED, "r./ns/d", dep, NULL, &e), 0);
    assert_false(hstore_has_dependents(s, "u-owner"));
    assert_int_equal(hstore_write(s, HSTORE_DELETED, "r./ns/o", owner, NULL, &e), 0);
    assert_false(hstore_uid_exists(s, "u-owner"));
    json_decref(owner);
    json_decref(dep);
    json_decref(plain);
    hstore_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_get_list),
        cmocka_unit_test(test_compaction),
        cmocka_unit_test(test_reopen_file),
        cmocka_unit_test(test_gc_indexes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
