/* Unit tests for pkg/kube/store. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jpack.h"
#include "pkg/json/jsonx.h"
#include "pkg/json/jscan.h"
#include "pkg/kube/store.h"
#include "pkg/util/xalloc.h"

static json_t *pod(const char *ns, const char *name, const char *rv, const char *node,
                   const char *app)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s}}, s:{s:s, s:s}}", "apiVersion",
                          "v1", "kind", "Pod", "metadata", "name", name, "namespace", ns,
                          "resourceVersion", rv, "labels", "app", app, "spec", "nodeName", node,
                          "huge", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    assert_non_null(o);
    return o;
}

static void add_owner(json_t *o, const char *uid)
{
    json_t *md = json_object_get(o, "metadata");
    json_t *refs = json_object_get(md, "ownerReferences");
    if (!refs) {
        refs = json_array();
        json_object_set_new(md, "ownerReferences", refs);
    }
    json_array_append_new(refs, json_pack("{s:s, s:s}", "kind", "Job", "uid", uid));
}

/* Keys of an index lookup joined with ',' for compact assertions. */
static char *idx(struct store *s, const char *index, const char *value)
{
    json_t *keys = store_index_keys(s, index, value, NULL);
    assert_non_null(keys);
    char out[512] = "";
    size_t off = 0;
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        off += (size_t)snprintf(out + off, sizeof out - off, "%s%s", i ? "," : "",
                                json_string_value(k));
    }
    json_decref(keys);
    return xstrdup(out);
}

/* A store in the mode the test runs in: *state is NULL (unpacked) or points to true (packed,
 * which must behave the same). */
static struct store *mk(void **state, const struct store_opts *o)
{
    struct store_opts x = o ? *o : (struct store_opts){0};
    x.packed = *state && *(const bool *)*state;
    return store_new(&x);
}

/* The keys idx() lists (comma-separated), and as many from store_index_count(). */
#define assert_idx(s, index, value, want)                                                          \
    do {                                                                                           \
        char *got_ = idx((s), (index), (value));                                                   \
        assert_string_equal(got_, (want));                                                         \
        free(got_);                                                                                \
        assert_int_equal(idx_count((s), (index), (value)), keys_in(want));                         \
    } while (0)

static size_t keys_in(const char *list)
{
    size_t n = *list ? 1 : 0;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    return n;
}

static size_t idx_count(struct store *s, const char *index, const char *value)
{
    size_t n = 99;
    assert_int_equal(store_index_count(s, index, value, &n, NULL), 0);
    return n;
}

static void test_keys(void **state)
{
    (void)state;
    json_t *o = pod("ns1", "a", "1", "n1", "web");
    char *k = store_key_of(o, NULL);
    assert_string_equal(k, "ns1/a");
    free(k);
    json_t *c = json_pack("{s:{s:s}}", "metadata", "name", "node1");
    k = store_key_of(c, NULL);
    assert_string_equal(k, "node1");
    free(k);
    json_t *bad = json_pack("{s:{s:i}}", "metadata", "name", 3);
    struct err e;
    err_clear(&e);
    assert_null(store_key_of(bad, &e));
    assert_int_equal(e.code, -EINVAL);
    assert_non_null(strstr(e.msg, "metadata.name"));
    assert_null(store_key_of(json_null(), NULL));
    json_decref(o);
    json_decref(c);
    json_decref(bad);
}

static void test_upsert_get_delete_indexes(void **state)
{
    struct store *s = mk(state, NULL);
    assert_int_equal(store_add_index(s, "node", store_index_by_field, "spec.nodeName", NULL), 0);
    assert_int_equal(store_add_index(s, "app", store_index_by_label, "app", NULL), 0);
    assert_int_equal(store_add_index(s, "owner", store_index_by_owner_uid, NULL, NULL), 0);
    struct err e;
    err_clear(&e);
    assert_int_equal(store_add_index(s, "node", store_index_by_field, "x", &e), -EEXIST);

    json_t *a = pod("ns", "a", "1", "n1", "web");
    json_t *b = pod("ns", "b", "2", "n1", "db");
    json_t *c = pod("other", "c", "3", "n2", "web");
    add_owner(a, "u1");
    add_owner(a, "u2");
    add_owner(b, "u1");
    json_t *stored = NULL, *old = NULL;
    assert_int_equal(store_upsert(s, a, &stored, &old, NULL), 0);
    assert_ptr_equal(stored, a); /* no projection: shared, not copied */
    assert_null(old);
    json_decref(stored);
    assert_int_equal(store_upsert(s, b, NULL, NULL, NULL), 0);
    assert_int_equal(store_upsert(s, c, NULL, NULL, NULL), 0);
    assert_int_equal(store_len(s), 3);
    assert_ptr_equal(store_get(s, "ns/a"), a);
    assert_null(store_get(s, "ns/zz"));
    assert_idx(s, "node", "n1", "ns/a,ns/b");
    assert_idx(s, "node", "n2", "other/c");
    assert_idx(s, "app", "web", "ns/a,other/c");
    assert_idx(s, "owner", "u1", "ns/a,ns/b");
    assert_idx(s, "owner", "u2", "ns/a");
    assert_idx(s, "owner", "nope", "");
    err_clear(&e);
    assert_null(store_by_index(s, "missing", "x", &e));
    assert_int_equal(e.code, -ENOENT);

    /* Update moves index entries: a goes to node n2, label db, loses owner u2. */
    json_t *a2 = pod("ns", "a", "5", "n2", "db");
    add_owner(a2, "u1");
    assert_int_equal(store_upsert(s, a2, NULL, &old, NULL), 0);
    assert_ptr_equal(old, a);
    json_decref(old);
    assert_idx(s, "node", "n1", "ns/b");
    assert_idx(s, "node", "n2", "ns/a,other/c");
    assert_idx(s, "app", "web", "other/c");
    assert_idx(s, "app", "db", "ns/a,ns/b");
    assert_idx(s, "owner", "u2", "");
    json_t *objs = store_by_index(s, "app", "db", NULL);
    assert_int_equal(json_array_size(objs), 2);
    assert_ptr_equal(json_array_get(objs, 0), a2);
    assert_ptr_equal(json_array_get(objs, 1), b);
    json_decref(objs);

    /* Delete removes the index entries and returns the last object. */
    assert_int_equal(store_delete(s, b, &old, NULL), 0);
    assert_ptr_equal(old, b);
    json_decref(old);
    assert_int_equal(store_delete(s, b, &old, NULL), 0);
    assert_null(old);
    assert_int_equal(store_delete_key(s, "ns/b", NULL), -ENOENT);
    assert_idx(s, "node", "n1", "");
    assert_idx(s, "app", "db", "ns/a");
    assert_idx(s, "owner", "u1", "ns/a");
    assert_int_equal(store_len(s), 2);

    /* An index added later covers the existing objects. */
    assert_int_equal(store_add_index(s, "ns", store_index_by_field, "metadata.namespace", NULL), 0);
    assert_idx(s, "ns", "other", "other/c");
    assert_idx(s, "ns", "ns", "ns/a");

    json_t *keys = store_keys(s);
    assert_int_equal(json_array_size(keys), 2);
    json_decref(keys);
    json_t *noname = json_pack("{s:{}}", "metadata");
    assert_int_equal(store_upsert(s, noname, NULL, NULL, NULL), -EINVAL);
    json_decref(noname);

    json_decref(a);
    json_decref(a2);
    json_decref(b);
    json_decref(c);
    store_free(s);
    store_free(NULL);
}

static json_t *project_same(json_t *obj, void *ud)
{
    (void)ud;
    return json_incref(obj);
}

/* An unpacked store whose projection says what it reads builds a listed item with only that
 * and the store's own members (its key, resourceVersion, uid, type); the text is still
 * checked whole; reads beyond jscan_load_paths' limits are refused. */
static void test_list_text_reads(void **state)
{
    (void)state;
    static const char *const reads[] = {"spec.nodeName", NULL};
    struct store_opts o = {.project = project_same, .reads = reads};
    struct store *s = store_new(&o);
    struct store_list *l = store_list_new(s);
    const char *t = "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"uid\":\"u\","
                    "\"resourceVersion\":\"3\",\"labels\":{\"x\":\"y\"},\"managedFields\":[{}]},"
                    "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"image\":\"i\"}]},"
                    "\"status\":{\"phase\":\"Running\"}}";
    assert_int_equal(store_list_add_text(l, t, strlen(t), "Pod", "v1", NULL), 0);
    struct err e;
    err_clear(&e);
    const char *bad = "{\"metadata\":{\"name\":\"b\"},\"status\":{\"x\":[1,]}}";
    assert_int_equal(store_list_add_text(l, bad, strlen(bad), "Pod", "v1", &e), -EBADMSG);
    assert_int_equal(store_list_commit(l, NULL, NULL, NULL), 0);
    store_list_free(l);
    char *a = json_dumps(store_get(s, "ns/a"), JSON_COMPACT);
    assert_string_equal(a, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"uid\":\"u\","
                           "\"resourceVersion\":\"3\"},\"spec\":{\"nodeName\":\"n1\"},"
                           "\"kind\":\"Pod\",\"apiVersion\":\"v1\"}");
    free(a);
    store_free(s);
    assert_int_equal(store_reads_check(reads, &e), 0);
    assert_int_equal(store_reads_check(NULL, &e), 0);
    const char *many[JSCAN_PATHS_MAX + 1];
    for (int i = 0; i < JSCAN_PATHS_MAX; i++)
        many[i] = i % 2 ? "spec.a" : "spec.b";
    many[JSCAN_PATHS_MAX] = NULL; /* with the store's own paths, beyond the limit */
    assert_int_equal(store_reads_check(many, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "more than"));
}

static json_t *project_pod(json_t *obj, void *ud)
{
    int *calls = ud;
    (*calls)++;
    static const char *const paths[] = {"spec.nodeName", "metadata.labels", NULL};
    return store_project_fields(obj, paths);
}

static void test_projection(void **state)
{
    int calls = 0;
    struct store_opts o = {.project = project_pod, .project_ud = &calls};
    struct store *s = mk(state, &o);
    json_t *a = pod("ns", "a", "1", "n1", "web");
    json_object_set_new(json_object_get(a, "metadata"), "managedFields",
                        json_pack("[{s:s}]", "manager", "kubectl"));
    char blob[2048];
    memset(blob, 'z', sizeof blob - 1);
    blob[sizeof blob - 1] = '\0';
    json_object_set_new(a, "status", json_pack("{s:s, s:s}", "phase", "Running", "log", blob));
    char *full_s = json_dumps(a, JSON_COMPACT);
    json_t *stored = NULL;
    assert_int_equal(store_upsert(s, a, &stored, NULL, NULL), 0);
    assert_int_equal(calls, 1);
    assert_ptr_not_equal(stored, a);
    /* Kept fields. */
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(stored, "spec"), "nodeName")), "n1");
    json_t *md = json_object_get(stored, "metadata");
    assert_string_equal(json_string_value(json_object_get(md, "name")), "a");
    assert_string_equal(json_string_value(json_object_get(md, "namespace")), "ns");
    assert_string_equal(json_string_value(json_object_get(md, "resourceVersion")), "1");
    assert_string_equal(json_string_value(json_object_get(json_object_get(md, "labels"), "app")),
                        "web");
    assert_string_equal(json_string_value(json_object_get(stored, "kind")), "Pod");
    /* Dropped fields. */
    assert_null(json_object_get(json_object_get(stored, "spec"), "huge"));
    assert_null(json_object_get(md, "managedFields"));
    assert_null(json_object_get(stored, "status"));
    char *proj_s = json_dumps(stored, JSON_COMPACT);
    assert_true(strlen(proj_s) < strlen(full_s) / 2);
    free(proj_s);
    free(full_s);
    json_decref(stored);
    /* The store holds no reference to the received object, nor to dropped subtrees. */
    json_t *status = json_incref(json_object_get(a, "status"));
    assert_int_equal(a->refcount, 1);
    json_decref(a);
    assert_int_equal(status->refcount, 1);
    json_decref(status);
    assert_non_null(store_get(s, "ns/a"));
    store_free(s);
}

struct events {
    char log[32][64];
    int n;
    struct store *s;
    size_t len_seen;
};

static void record(enum store_event_type t, json_t *old, json_t *new_obj, void *ud)
{
    struct events *ev = ud;
    char *k = store_key_of(new_obj ? new_obj : old, NULL);
    const char *rv_old = old ? json_string_value(json_object_get(json_object_get(old, "metadata"),
                                                                 "resourceVersion"))
                             : "-";
    const char *rv_new = new_obj ? json_string_value(json_object_get(
                                       json_object_get(new_obj, "metadata"), "resourceVersion"))
                                 : "-";
    snprintf(ev->log[ev->n++], sizeof ev->log[0], "%s %s %s>%s",
             t == STORE_ADD      ? "add"
             : t == STORE_UPDATE ? "update"
                                 : "delete",
             k, rv_old, rv_new);
    free(k);
    /* The store is fully replaced before the first event. */
    ev->len_seen = store_len(ev->s);
}

static void test_replace_diff(void **state)
{
    struct store *s = mk(state, NULL);
    assert_int_equal(store_add_index(s, "node", store_index_by_field, "spec.nodeName", NULL), 0);
    struct events ev = {.s = s};
    json_t *l1 = json_array();
    json_array_append_new(l1, pod("ns", "a", "1", "n1", "x"));
    json_array_append_new(l1, pod("ns", "b", "2", "n1", "x"));
    json_array_append_new(l1, pod("ns", "c", "3", "n2", "x"));
    assert_int_equal(store_replace(s, l1, record, &ev, NULL), 0);
    assert_int_equal(ev.n, 3);
    assert_string_equal(ev.log[0], "add ns/a ->1");
    assert_string_equal(ev.log[1], "add ns/b ->2");
    assert_string_equal(ev.log[2], "add ns/c ->3");
    assert_int_equal(ev.len_seen, 3);
    assert_idx(s, "node", "n1", "ns/a,ns/b");
    json_t *kept_a = store_get(s, "ns/a");

    /* Re-list: a unchanged (same RV), b changed, c gone, d new. */
    ev.n = 0;
    json_t *l2 = json_array();
    json_array_append_new(l2, pod("ns", "a", "1", "n1", "x"));
    json_array_append_new(l2, pod("ns", "b", "7", "n2", "x"));
    json_array_append_new(l2, pod("ns", "d", "8", "n3", "x"));
    assert_int_equal(store_replace(s, l2, record, &ev, NULL), 0);
    assert_int_equal(ev.n, 3);
    assert_string_equal(ev.log[0], "update ns/b 2>7");
    assert_string_equal(ev.log[1], "add ns/d ->8");
    assert_string_equal(ev.log[2], "delete ns/c 3>-"); /* last known object */
    assert_int_equal(ev.len_seen, 3);
    assert_int_equal(store_len(s), 3);
    assert_ptr_equal(store_get(s, "ns/a"), kept_a); /* unchanged keeps its copy */
    assert_null(store_get(s, "ns/c"));
    assert_idx(s, "node", "n1", "ns/a");
    assert_idx(s, "node", "n2", "ns/b");
    assert_idx(s, "node", "n3", "ns/d");

    /* Without resourceVersion, content decides. */
    ev.n = 0;
    json_t *l3 = json_array();
    json_array_append_new(l3, json_pack("{s:{s:s}, s:i}", "metadata", "name", "x", "v", 1));
    assert_int_equal(store_replace(s, l3, record, &ev, NULL), 0);
    assert_int_equal(ev.n, 4); /* add x, delete a, b, d */
    ev.n = 0;
    assert_int_equal(store_replace(s, l3, record, &ev, NULL), 0);
    assert_int_equal(ev.n, 0);
    json_decref(l3);
    l3 = json_array();
    json_array_append_new(l3, json_pack("{s:{s:s}, s:i}", "metadata", "name", "x", "v", 2));
    assert_int_equal(store_replace(s, l3, record, &ev, NULL), 0);
    assert_int_equal(ev.n, 1);
    assert_int_equal(strncmp(ev.log[0], "update x", 8), 0);

    /* Invalid input changes nothing. */
    struct err e;
    err_clear(&e);
    json_t *bad = json_array();
    json_array_append_new(bad, pod("ns", "q", "1", "n1", "x"));
    json_array_append_new(bad, json_pack("{s:{}}", "metadata"));
    ev.n = 0;
    assert_int_equal(store_replace(s, bad, record, &ev, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "item 1"));
    assert_int_equal(ev.n, 0);
    assert_int_equal(store_len(s), 1);
    assert_int_equal(store_replace(s, json_object_get(l1, "nope"), NULL, NULL, NULL), -EINVAL);

    /* Empty list deletes everything, NULL callback allowed. */
    json_t *empty = json_array();
    assert_int_equal(store_replace(s, empty, NULL, NULL, NULL), 0);
    assert_int_equal(store_len(s), 0);
    assert_idx(s, "node", "n3", "");

    json_decref(empty);
    json_decref(bad);
    json_decref(l1);
    json_decref(l2);
    json_decref(l3);
    store_free(s);
}

/* A projection that counts its calls (and keeps the object whole). */
static json_t *count_project(json_t *obj, void *ud)
{
    (*(int *)ud)++;
    return json_incref(obj);
}

/* A list added item by item: each item projected once, when added (its tree may go at once),
 * none for an unchanged one; the commit reports what store_replace reports. */
static void test_list_parts(void **state)
{
    int calls = 0;
    struct store_opts o = {.project = count_project, .project_ud = &calls};
    struct store *s = mk(state, &o);
    assert_int_equal(store_add_index(s, "node", store_index_by_field, "spec.nodeName", NULL), 0);
    struct events ev = {.s = s};
    struct store_list *l = store_list_new(s);
    const char *names[] = {"a", "b", "c"}, *rvs[] = {"1", "2", "3"}, *nodes[] = {"n1", "n1", "n2"};
    for (int i = 0; i < 3; i++) {
        json_t *p = pod("ns", names[i], rvs[i], nodes[i], "x");
        assert_int_equal(store_list_add(l, p, NULL), 0);
        json_decref(p); /* the part's tree goes before the next one */
        assert_int_equal(calls, i + 1);
    }
    assert_int_equal(store_len(s), 0); /* nothing stored before the commit */
    assert_int_equal(store_list_len(l), 3);
    assert_int_equal(store_list_commit(l, record, &ev, NULL), 0);
    store_list_free(l);
    assert_int_equal(calls, 3);
    assert_int_equal(ev.n, 3);
    assert_string_equal(ev.log[0], "add ns/a ->1");
    assert_string_equal(ev.log[2], "add ns/c ->3");
    assert_int_equal(ev.len_seen, 3);
    assert_idx(s, "node", "n1", "ns/a,ns/b");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(store_get(s, "ns/c"), "spec"), "nodeName")),
                        "n2");

    /* Re-list: a unchanged (no projection), b changed, b listed again (the later wins, one
     * event), c gone, d new. */
    calls = 0;
    ev.n = 0;
    l = store_list_new(s);
    json_t *items[] = {pod("ns", "a", "1", "n1", "x"), pod("ns", "b", "6", "n2", "x"),
                       pod("ns", "d", "8", "n3", "x"), pod("ns", "b", "7", "n3", "x")};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(store_list_add(l, items[i], NULL), 0);
        json_decref(items[i]);
    }
    assert_int_equal(calls, 3);
    assert_int_equal(store_list_len(l), 3);
    assert_int_equal(store_list_commit(l, record, &ev, NULL), 0);
    store_list_free(l);
    assert_int_equal(calls, 3);
    assert_int_equal(ev.n, 3);
    assert_string_equal(ev.log[0], "update ns/b 2>7");
    assert_string_equal(ev.log[1], "add ns/d ->8");
    assert_string_equal(ev.log[2], "delete ns/c 3>-");
    assert_int_equal(store_len(s), 3);
    assert_idx(s, "node", "n1", "ns/a");
    assert_idx(s, "node", "n2", "");
    assert_idx(s, "node", "n3", "ns/b,ns/d");

    /* No name: -EINVAL, nothing added; a list freed without a commit changes nothing. */
    struct err e;
    err_clear(&e);
    l = store_list_new(s);
    json_t *bad = json_pack("{s:{}}", "metadata");
    assert_int_equal(store_list_add(l, bad, &e), -EINVAL);
    json_decref(bad);
    assert_int_equal(store_list_len(l), 0);
    json_t *x = pod("ns", "x", "9", "n1", "x");
    assert_int_equal(store_list_add(l, x, NULL), 0);
    json_decref(x);
    store_list_free(l);
    assert_int_equal(store_len(s), 3);
    assert_null(store_get(s, "ns/x"));

    /* The store changed under an item found unchanged: -ESTALE, nothing changed. */
    l = store_list_new(s);
    json_t *a = pod("ns", "a", "1", "n1", "x"), *a2 = pod("ns", "a", "5", "n1", "x");
    assert_int_equal(store_list_add(l, a, NULL), 0);
    assert_int_equal(store_upsert(s, a2, NULL, NULL, NULL), 0);
    ev.n = 0;
    err_clear(&e);
    assert_int_equal(store_list_commit(l, record, &ev, &e), -ESTALE);
    assert_non_null(strstr(e.msg, "changed"));
    store_list_free(l);
    assert_int_equal(ev.n, 0);
    assert_int_equal(store_len(s), 3);
    json_decref(a);
    json_decref(a2);
    store_free(s);
}

static int count_cb(const char *key, json_t *obj, void *ud)
{
    int *n = ud;
    (*n)++;
    return *n == 2 ? 42 : 0;
}

static void test_foreach(void **state)
{
    struct store *s = mk(state, NULL);
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        json_t *o = pod("ns", name, "1", "n", "x");
        assert_int_equal(store_upsert(s, o, NULL, NULL, NULL), 0);
        json_decref(o);
    }
    int n = 0;
    assert_int_equal(store_foreach(s, count_cb, &n), 42);
    assert_int_equal(n, 2);
    store_free(s);
}

/* The lean projection drops managedFields and the last-applied annotation,
 * keeps everything else (shared, not copied), and leaves the received object
 * untouched; an object without either is stored as it is. */
static void test_project_lean(void **state)
{
    (void)state;
    json_t *a = pod("ns", "a", "1", "n1", "web");
    json_t *md = json_object_get(a, "metadata");
    json_object_set_new(md, "managedFields", json_pack("[{s:s}]", "manager", "kubectl"));
    json_object_set_new(md, "annotations",
                        json_pack("{s:s, s:s}", "kubectl.kubernetes.io/last-applied-configuration",
                                  "{\"big\":1}", "keep", "me"));
    json_t *p = store_project_lean(a, NULL);
    assert_ptr_not_equal(p, a);
    json_t *pm = json_object_get(p, "metadata");
    assert_null(json_object_get(pm, "managedFields"));
    json_t *pa = json_object_get(pm, "annotations");
    assert_int_equal(json_object_size(pa), 1);
    assert_string_equal(json_string_value(json_object_get(pa, "keep")), "me");
    assert_string_equal(json_string_value(json_object_get(pm, "name")), "a");
    assert_ptr_equal(json_object_get(p, "spec"), json_object_get(a, "spec")); /* shared */
    /* the received object is unchanged */
    assert_non_null(json_object_get(md, "managedFields"));
    assert_int_equal(json_object_size(json_object_get(md, "annotations")), 2);
    json_decref(p);
    json_t *b = pod("ns", "b", "1", "n1", "web");
    json_t *pb = store_project_lean(b, NULL);
    assert_ptr_equal(pb, b);
    json_decref(pb);
    json_decref(b);
    json_decref(a);
}

/* What a lean store drops (store_drops): an object built without it projects exactly as the
 * whole object does, whatever the shape of its metadata; other stores drop nothing. */
static void test_lean_drops(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":"
        "{\"f:spec\":{\"f:x\":{}}}}],\"annotations\":{\"kubectl.kubernetes.io/"
        "last-applied-configuration\":\"{}\",\"keep\":\"me\"}},\"spec\":{\"x\":1}}",
        /* the annotation alone: an empty annotations object stays */
        "{\"metadata\":{\"name\":\"b\",\"annotations\":{\"kubectl.kubernetes.io\\/"
        "last-applied-configuration\":\"{}\"}}}",
        "{\"metadata\":{\"name\":\"c\",\"managedFields\":null,\"managedFields\":[{}]}}",
        "{\"metadata\":{\"name\":\"d\",\"annotations\":\"kubectl.kubernetes.io/x\"}}",
        "{\"metadata\":[{\"managedFields\":[]}],\"managedFields\":[]}",
        "{\"spec\":{\"metadata\":{\"managedFields\":[]}}}",
    };
    struct store_opts lo = {.project = store_project_lean};
    struct store *lean = store_new(&lo), *whole = store_new(NULL);
    assert_null(store_drops(whole));
    struct jscan_paths *ps = NULL;
    assert_int_equal(jscan_paths_new_drop(NULL, store_drops(lean), &ps, NULL), 0);
    assert_non_null(ps);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        json_t *w = jscan_load(texts[i], strlen(texts[i]), NULL);
        json_t *d = jscan_load_with(texts[i], strlen(texts[i]), ps, NULL);
        assert_non_null(w);
        assert_non_null(d);
        json_t *pw = store_project_lean(w, NULL), *pd = store_project_lean(d, NULL);
        char *a = json_dumps(pw, JSON_COMPACT), *b = json_dumps(pd, JSON_COMPACT);
        assert_string_equal(a, b);
        if (i < 3) /* built without them: nothing left for the projection to drop */
            assert_ptr_equal(pd, d);
        free(a);
        free(b);
        json_decref(pw);
        json_decref(pd);
        json_decref(w);
        json_decref(d);
    }
    jscan_paths_free(ps);
    store_free(lean);
    store_free(whole);
}

/* An index value with many keys (past the small set) and removals from it. */
static void test_big_index_set(void **state)
{
    struct store *s = mk(state, NULL);
    assert_int_equal(store_add_index(s, "node", store_index_by_field, "spec.nodeName", NULL), 0);
    for (int i = 0; i < 20; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%02d", i);
        json_t *o = pod("ns", name, "1", "n1", "x");
        assert_int_equal(store_upsert(s, o, NULL, NULL, NULL), 0);
        json_decref(o);
    }
    for (int i = 0; i < 20; i += 2) {
        char key[16];
        snprintf(key, sizeof key, "ns/p%02d", i);
        assert_int_equal(store_delete_key(s, key, NULL), 0);
    }
    assert_idx(s, "node", "n1",
               "ns/p01,ns/p03,ns/p05,ns/p07,ns/p09,ns/p11,ns/p13,ns/p15,ns/p17,ns/p19");
    json_t *moved = pod("ns", "p05", "2", "n2", "x");
    assert_int_equal(store_upsert(s, moved, NULL, NULL, NULL), 0);
    json_decref(moved);
    assert_idx(s, "node", "n2", "ns/p05");
    for (int i = 1; i < 20; i += 2) {
        char key[16];
        snprintf(key, sizeof key, "ns/p%02d", i);
        assert_int_equal(store_delete_key(s, key, NULL), 0);
    }
    assert_idx(s, "node", "n1", "");
    assert_idx(s, "node", "n2", "");
    assert_int_equal(store_len(s), 0);
    size_t n = 7;
    struct err e;
    err_clear(&e);
    assert_int_equal(store_index_count(s, "nope", "n1", &n, &e), -ENOENT);
    assert_int_equal(n, 0);
    store_free(s);
}

/* An index value of one key (kept without a set) becomes a set at a second key and stays
 * right as keys come and go. */
static void test_index_one_key(void **state)
{
    struct store *s = mk(state, NULL);
    assert_int_equal(store_add_index(s, "node", store_index_by_field, "spec.nodeName", NULL), 0);
    json_t *p1 = pod("ns", "p1", "1", "n1", "x"), *p1b = pod("ns", "p1", "2", "n1", "y");
    json_t *p2 = pod("ns", "p2", "1", "n1", "x"), *p3 = pod("ns", "p3", "1", "n3", "x");
    json_t *p3m = pod("ns", "p3", "2", "n4", "x");
    assert_int_equal(store_upsert(s, p1, NULL, NULL, NULL), 0);
    assert_idx(s, "node", "n1", "ns/p1");
    assert_int_equal(store_upsert(s, p1b, NULL, NULL, NULL), 0); /* same value again */
    assert_idx(s, "node", "n1", "ns/p1");
    assert_int_equal(store_upsert(s, p2, NULL, NULL, NULL), 0);
    assert_idx(s, "node", "n1", "ns/p1,ns/p2");
    assert_int_equal(store_delete_key(s, "ns/p1", NULL), 0);
    assert_idx(s, "node", "n1", "ns/p2");
    assert_int_equal(store_upsert(s, p1, NULL, NULL, NULL), 0);
    assert_idx(s, "node", "n1", "ns/p1,ns/p2");
    assert_int_equal(store_delete_key(s, "ns/p2", NULL), 0);
    assert_int_equal(store_delete_key(s, "ns/p1", NULL), 0);
    assert_idx(s, "node", "n1", "");
    assert_int_equal(store_upsert(s, p3, NULL, NULL, NULL), 0);
    assert_int_equal(store_upsert(s, p3m, NULL, NULL, NULL), 0); /* moves: one key to another */
    assert_idx(s, "node", "n3", "");
    assert_idx(s, "node", "n4", "ns/p3");
    json_t *got = store_by_index(s, "node", "n4", NULL);
    assert_int_equal(json_array_size(got), 1);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_array_get(got, 0), "spec"), "nodeName")),
                        "n4");
    json_decref(got);
    json_decref(p1), json_decref(p1b), json_decref(p2), json_decref(p3), json_decref(p3m);
    store_free(s); /* a value of one key left in the index: freed with it (ASan) */
}

/* Index values that are uids are kept in a compact form: each still finds its own keys only,
 * next to values that are almost uids (uppercase, another digit) and values that begin with
 * the forms' markers. */
static void test_index_uid_values(void **state)
{
    struct store *s = mk(state, NULL);
    assert_int_equal(store_add_index(s, "node", store_index_by_field, "spec.nodeName", NULL), 0);
    static const char *const vals[] = {"027b6140-ca2c-4f81-90e0-b96b17951b22",
                                       "027b6140-ca2c-4f81-90e0-b96b17951b23",
                                       "027B6140-CA2C-4F81-90E0-B96B17951B22",
                                       "\x01"
                                       "0123456789012345678901",
                                       "\x02"
                                       "\x01"
                                       "0123456789012345678901",
                                       "\x02",
                                       "027b6140-ca2c-4f81-90e0-b96b17951b2"};
    enum { N = sizeof vals / sizeof *vals };
    for (size_t i = 0; i < N; i++) {
        char name[8];
        snprintf(name, sizeof name, "p%zu", i);
        json_t *p = pod("ns", name, "1", vals[i], "x");
        assert_int_equal(store_upsert(s, p, NULL, NULL, NULL), 0);
        json_decref(p);
    }
    for (size_t i = 0; i < N; i++) {
        char want[8];
        snprintf(want, sizeof want, "ns/p%zu", i);
        assert_idx(s, "node", vals[i], want);
        size_t n = 0;
        assert_int_equal(store_index_count(s, "node", vals[i], &n, NULL), 0);
        assert_int_equal(n, 1);
    }
    assert_int_equal(store_delete_key(s, "ns/p0", NULL), 0);
    assert_idx(s, "node", vals[0], "");
    assert_idx(s, "node", vals[1], "ns/p1");
    store_free(s);
}

/* A packed store compares resourceVersions without decoding: one shaped like a timestamp or a
 * uid (packed as a number) reads the same whether its tree is cached or trimmed, so a list
 * that found the object unchanged still commits after a trim in between. */
static void count_events(enum store_event_type t, json_t *old, json_t *new_obj, void *ud)
{
    (void)t, (void)old, (void)new_obj;
    (*(int *)ud)++;
}

static void test_packed_shaped_rv(void **state)
{
    (void)state;
    static const char *const rvs[] = {"2024-01-01T00:00:00Z",
                                      "027b6140-ca2c-4f81-90e0-b96b17951b22", "12345"};
    for (size_t i = 0; i < sizeof rvs / sizeof *rvs; i++) {
        bool packed = true;
        void *st = &packed;
        struct store *s = mk(&st, NULL);
        json_t *o = pod("ns", "a", rvs[i], "n1", "x");
        assert_int_equal(store_upsert(s, o, NULL, NULL, NULL), 0);
        struct store_list *l = store_list_new(s);
        assert_int_equal(store_list_add(l, o, NULL), 0); /* unchanged: the stored copy stays */
        store_trim(s, true);                             /* its tree goes before the commit */
        int events = 0;
        assert_int_equal(store_list_commit(l, count_events, &events, NULL), 0);
        assert_int_equal(events, 0);
        store_list_free(l);
        json_decref(o);
        store_free(s);
    }
}

/* Packed: reads return a cached decoded tree until store_trim(); references taken survive it;
 * stores sharing an intern table give every string back when their objects go. */
static void test_packed_lifetime(void **state)
{
    (void)state;
    struct jpack_tab *tab = jpack_tab_new();
    struct store_opts o = {.packed = true, .tab = tab};
    struct store *s1 = store_new(&o), *s2 = store_new(&o);
    assert_int_equal(store_add_index(s1, "node", store_index_by_field, "spec.nodeName", NULL), 0);
    json_t *a = pod("ns", "a", "1", "n1", "web"), *b = pod("ns", "b", "2", "n1", "web");
    assert_int_equal(store_upsert(s1, a, NULL, NULL, NULL), 0);
    assert_int_equal(store_upsert(s1, b, NULL, NULL, NULL), 0);
    assert_int_equal(store_upsert(s2, a, NULL, NULL, NULL), 0);
    assert_int_equal(jpack_tab_len(tab), 0);    /* an upserted object is packed at its trim */
    assert_ptr_equal(store_get(s1, "ns/a"), a); /* the stored tree stays cached until a trim */
    assert_int_equal(store_decoded(s1), 2);
    json_t *kept = json_incref(store_get(s1, "ns/a"));
    assert_int_equal(store_trim(s1, true), 2);
    assert_int_equal(store_decoded(s1), 0);
    assert_true(jpack_tab_len(tab) > 0);
    assert_int_equal(store_trim(s2, true), 1);
    json_t *d = store_get(s1, "ns/a");
    assert_ptr_not_equal(d, a); /* decoded again */
    assert_true(json_equal(d, a));
    assert_ptr_equal(store_get(s1, "ns/a"), d); /* once per trim, not per read */
    assert_int_equal(store_decoded(s1), 1);
    /* second chance: a tree read since the last partial trim stays, one not read goes */
    assert_int_equal(store_trim(s1, false), 0);
    assert_ptr_equal(store_get(s1, "ns/a"), d);
    assert_int_equal(store_trim(s1, false), 0);
    assert_int_equal(store_trim(s1, false), 1);
    assert_int_equal(store_decoded(s1), 0);
    d = store_get(s1, "ns/a");
    assert_true(json_equal(kept, a)); /* the reference taken before the trim */
    json_decref(kept);
    assert_idx(s1, "node", "n1", "ns/a,ns/b");
    json_t *objs = store_by_index(s1, "node", "n1", NULL);
    assert_int_equal(json_array_size(objs), 2);
    assert_true(json_equal(json_array_get(objs, 1), b));
    json_decref(objs);
    /* replace after a trim: unchanged by resourceVersion without decoding; b changed */
    store_trim(s1, true);
    json_t *l = json_array();
    json_array_append(l, a);
    json_array_append_new(l, pod("ns", "b", "3", "n2", "web"));
    struct events ev = {.s = s1};
    assert_int_equal(store_replace(s1, l, record, &ev, NULL), 0);
    assert_int_equal(ev.n, 1);
    assert_string_equal(ev.log[0], "update ns/b 2>3");
    assert_idx(s1, "node", "n1", "ns/a");
    assert_idx(s1, "node", "n2", "ns/b");
    json_decref(l);
    assert_int_equal(store_delete_key(s1, "ns/a", NULL), 0);
    store_free(s1);
    assert_true(jpack_tab_len(tab) > 0); /* s2 still holds a */
    store_free(s2);
    assert_int_equal(jpack_tab_len(tab), 0);
    jpack_tab_free(tab);
    json_decref(a);
    json_decref(b);
}

/* Packed: a watch event's object (store_upsert) keeps its tree, unpacked, until a trim drops
 * it; a version replaced before that is never packed; what a trim packed decodes to the same
 * object, and every interned string goes back when the objects go. */
static void test_packed_lazy(void **state)
{
    (void)state;
    struct jpack_tab *tab = jpack_tab_new();
    struct store_opts o = {.packed = true, .tab = tab};
    struct store *s = store_new(&o);
    assert_int_equal(store_add_index(s, "node", store_index_by_field, "spec.nodeName", NULL), 0);
    json_t *v1 = pod("ns", "a", "1", "n1", "web"), *v2 = pod("ns", "a", "2", "n2", "web");
    assert_int_equal(store_upsert(s, v1, NULL, NULL, NULL), 0);
    json_t *old = NULL;
    assert_int_equal(store_upsert(s, v2, NULL, &old, NULL), 0);
    assert_ptr_equal(old, v1);
    json_decref(old);
    assert_int_equal(store_decoded(s), 1);
    assert_int_equal(jpack_tab_len(tab), 0);
    assert_ptr_equal(store_get(s, "ns/a"), v2);
    assert_int_equal(store_trim(s, false), 0); /* read since the last trim: a second chance */
    assert_int_equal(jpack_tab_len(tab), 0);
    assert_int_equal(store_trim(s, false), 1); /* packed now */
    assert_true(jpack_tab_len(tab) > 0);
    assert_int_equal(store_decoded(s), 0);
    json_t *d = store_get(s, "ns/a");
    assert_ptr_not_equal(d, v2);
    assert_true(json_equal(d, v2));
    assert_idx(s, "node", "n2", "ns/a");
    assert_idx(s, "node", "n1", "");
    /* a list with the same version keeps the packed entry; a delete gives every string back */
    assert_int_equal(store_trim(s, true), 1);
    json_t *l = json_array();
    json_array_append(l, v2);
    struct events ev = {.s = s};
    assert_int_equal(store_replace(s, l, record, &ev, NULL), 0);
    assert_int_equal(ev.n, 0);
    assert_int_equal(store_decoded(s), 0);
    json_decref(l);
    assert_int_equal(store_upsert(s, v1, NULL, NULL, NULL), 0); /* lazy again over a packed one */
    assert_int_equal(jpack_tab_len(tab), 0);                    /* v2's bytes went with it */
    assert_int_equal(store_trim(s, true), 1);
    assert_true(jpack_tab_len(tab) > 0);
    assert_int_equal(store_delete_key(s, "ns/a", NULL), 0);
    assert_int_equal(jpack_tab_len(tab), 0);
    assert_int_equal(store_decoded(s), 0);
    /* a list read while watch events wait to be packed, trimmed before its commit */
    assert_int_equal(store_upsert(s, v1, NULL, NULL, NULL), 0);
    struct store_list *sl = store_list_new(s);
    assert_int_equal(store_list_add(sl, v1, NULL), 0); /* unchanged: same resourceVersion */
    assert_int_equal(store_trim(s, true), 1);
    assert_int_equal(store_list_commit(sl, record, &ev, NULL), 0);
    store_list_free(sl);
    assert_int_equal(ev.n, 0);
    assert_true(json_equal(store_get(s, "ns/a"), v1));
    /* freed with watch events not packed yet */
    json_t *v3 = pod("ns", "b", "3", "n1", "web");
    assert_int_equal(store_upsert(s, v3, NULL, NULL, NULL), 0);
    json_decref(v3);
    store_free(s);
    assert_int_equal(jpack_tab_len(tab), 0);
    jpack_tab_free(tab);
    json_decref(v1);
    json_decref(v2);
}

/* Packed: what cannot be packed (nested deeper than jpack encodes) or does not carry its key
 * once projected stays a whole tree, out of the trimmed ones, and reads as stored. */
static json_t *drop_namespace(json_t *obj, void *ud)
{
    (void)ud;
    json_t *p = jx_deep_copy(obj);
    json_object_del(json_object_get(p, "metadata"), "namespace");
    return p;
}

static void test_packed_unpackable(void **state)
{
    (void)state;
    struct jpack_tab *tab = jpack_tab_new();
    struct store_opts o = {.packed = true, .tab = tab};
    struct store *s = store_new(&o);
    json_t *deep = pod("ns", "deep", "1", "n1", "web"), *leaf = json_object();
    json_t *top = leaf;
    for (int i = 0; i < 2000; i++) {
        json_t *up = json_object();
        json_object_set_new(up, "x", top);
        top = up;
    }
    json_object_set_new(deep, "spec", top);
    assert_int_equal(store_upsert(s, deep, NULL, NULL, NULL), 0);
    assert_int_equal(store_decoded(s), 1);
    assert_int_equal(store_trim(s, true), 0); /* not packed: kept whole, not counted */
    assert_int_equal(store_decoded(s), 0);
    assert_int_equal(jpack_tab_len(tab), 0);
    assert_ptr_equal(store_get(s, "ns/deep"), deep);
    assert_int_equal(store_delete_key(s, "ns/deep", NULL), 0);
    store_free(s);
    json_decref(deep);

    struct store_opts o2 = {.packed = true, .tab = tab, .project = drop_namespace};
    s = store_new(&o2);
    json_t *a = pod("ns", "a", "1", "n1", "web");
    assert_int_equal(store_upsert(s, a, NULL, NULL, NULL), 0);
    assert_int_equal(store_trim(s, true), 0); /* "a" is not its key "ns/a": kept whole */
    assert_int_equal(store_len(s), 1);
    assert_non_null(store_get(s, "ns/a"));
    assert_null(store_get(s, "a"));
    store_free(s);
    assert_int_equal(jpack_tab_len(tab), 0);
    jpack_tab_free(tab);
    json_decref(a);
}

/* store_foreach_key: every key once, none of the objects read (a packed store decodes
 * nothing); a non-zero return stops the walk and is returned. */
static int count_key(const char *key, void *ud)
{
    size_t *n = ud;
    if (strncmp(key, "ns/", 3) != 0)
        return -1;
    return ++*n == 100 ? 7 : 0;
}

static void test_foreach_key(void **state)
{
    struct store *s = mk(state, NULL);
    for (int i = 0; i < 200; i++) {
        char name[16], rv[16];
        snprintf(name, sizeof name, "p%d", i);
        snprintf(rv, sizeof rv, "%d", i + 1);
        json_t *p = pod("ns", name, rv, "n1", "web");
        assert_int_equal(store_upsert(s, p, NULL, NULL, NULL), 0);
        json_decref(p);
    }
    store_trim(s, true);
    size_t n = 0;
    assert_int_equal(store_foreach_key(s, count_key, &n), 7); /* stopped at the 100th */
    assert_int_equal(n, 100);
    assert_int_equal(store_decoded(s), 0);
    store_free(s);
}

/* store_get_ref: a new reference in both modes; a packed store's tree that is not cached is
 * decoded for the caller and left uncached (a pass holds one at a time), a cached one is
 * shared and counts as read. */
static void test_get_ref(void **state)
{
    struct store *s = mk(state, NULL);
    bool packed = *state && *(const bool *)*state;
    json_t *a = pod("ns", "a", "1", "n1", "web"), *b = pod("ns", "b", "2", "n1", "web");
    assert_int_equal(store_upsert(s, a, NULL, NULL, NULL), 0);
    assert_int_equal(store_upsert(s, b, NULL, NULL, NULL), 0);
    assert_null(store_get_ref(s, "ns/none"));
    json_t *r = store_get_ref(s, "ns/a"); /* cached (or unpacked): the stored tree */
    assert_ptr_equal(r, store_get(s, "ns/a"));
    json_decref(r);
    store_trim(s, true);
    assert_int_equal(store_decoded(s), 0);
    r = store_get_ref(s, "ns/b");
    assert_non_null(r);
    assert_true(json_equal(r, b));
    if (packed) {
        assert_int_equal(store_decoded(s), 0); /* not cached */
        assert_ptr_not_equal(r, store_get(s, "ns/b"));
        assert_int_equal(store_decoded(s), 1);
        assert_int_equal(store_trim(s, true), 1);
    }
    assert_true(json_equal(r, b)); /* the caller's reference outlives trims */
    json_decref(r);
    store_free(s);
    json_decref(a);
    json_decref(b);
}

/* A custom index: computed from the tree (the text path decodes the object for it). */
static void index_node_tree(json_t *obj, struct store_values *vals, void *ud)
{
    (void)ud;
    store_values_add(vals,
                     json_string_value(json_object_get(json_object_get(obj, "spec"), "nodeName")));
}

/* An index whose function says what it was given: a view ("view": no metadata) or the whole
 * object ("whole"). */
static void index_seen(json_t *obj, struct store_values *vals, void *ud)
{
    (void)ud;
    store_values_add(vals, json_object_get(obj, "metadata") ? "whole" : "view");
}

static struct store *mk_lean(struct jpack_tab *tab)
{
    struct store_opts o = {.project = store_project_lean, .packed = true, .tab = tab};
    struct store *s = store_new(&o);
    assert_int_equal(store_add_index(s, "uid", store_index_by_field, "metadata.uid", NULL), 0);
    assert_int_equal(store_add_index(s, "app", store_index_by_label, "app", NULL), 0);
    assert_int_equal(store_add_index(s, "owner", store_index_by_owner_uid, NULL, NULL), 0);
    assert_int_equal(store_add_index(s, "node", index_node_tree, NULL, NULL), 0);
    static const char *const spec[] = {"spec", NULL};
    assert_int_equal(store_add_index(s, "seen", index_seen, NULL, NULL), 0);
    assert_int_equal(store_index_view(s, "seen", spec), 0);
    assert_int_equal(store_index_view(s, "none", spec), -ENOENT);
    return s;
}

/* What the informer did before store_list_add_text: the tree, typed, through store_list_add. */
static int add_tree(struct store_list *l, const char *text)
{
    json_error_t je;
    json_t *it = json_loads(text, 0, &je);
    if (!it)
        return -EBADMSG;
    store_item_typed(it, "Pod", "v1");
    int rc = store_list_add(l, it, NULL);
    json_decref(it);
    return rc;
}

/* A list read from its items' texts (store_list_add_text) stores, indexes and reports what the
 * trees did, packed without a tree, and leaves no decoded tree behind its commit. */
static void test_list_text(void **state)
{
    (void)state;
    static const char *const items[] = {
        /* a real server's item: no kind, managedFields, last-applied, escapes in a key */
        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"uid\":\"u-a\","
        "\"resourceVersion\":\"1\",\"labels\":{\"app\":\"web\"},"
        "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"{big}\","
        "\"keep\":\"me\"},\"managedFields\":[{\"manager\":\"kubectl\",\"fieldsV1\":{\"f:x\":{}}}],"
        "\"ownerReferences\":[{\"uid\":\"o1\"},{\"uid\":\"o2\"}]},"
        "\"spec\":{\"node\\u004eame\":\"n1\",\"n\":-12,\"r\":1.5,\"t\":true,\"z\":null}}",
        /* kind not a string: replaced in place (the tree's way) */
        "{\"kind\":5,\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\",\"resourceVersion\":\"1\","
        "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"x\"}}}",
        /* a repeated key: the last value at the first one's place (the tree's way) */
        "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"resourceVersion\":\"1\"},"
        "\"spec\":{\"nodeName\":\"n1\",\"x\":1,\"nodeName\":\"n2\"}}",
        /* typed already, cluster-scoped */
        "{\"apiVersion\":\"v2\",\"kind\":\"Node\",\"metadata\":{\"name\":\"d\","
        "\"resourceVersion\":\"1\",\"labels\":{\"app\":\"web\"}}}",
    };
    struct jpack_tab *tab = jpack_tab_new();
    struct store *s = mk_lean(tab), *t = mk_lean(tab);
    struct events ev = {.s = s}, evt = {.s = t};
    struct store_list *l = store_list_new(s), *lt = store_list_new(t);
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        assert_int_equal(store_list_add_text(l, items[i], strlen(items[i]), "Pod", "v1", NULL), 0);
        assert_int_equal(add_tree(lt, items[i]), 0);
    }
    assert_int_equal(store_list_commit(l, record, &ev, NULL), 0);
    assert_int_equal(store_list_commit(lt, record, &evt, NULL), 0);
    store_list_free(l);
    store_list_free(lt);
    assert_int_equal(ev.n, 4);
    for (int i = 0; i < ev.n; i++)
        assert_string_equal(ev.log[i], evt.log[i]);
    assert_int_equal(ev.len_seen, 4);
    /* the events' trees went with them; b and c took the tree path, which keeps its trees
     * until the informer's trim */
    assert_int_equal(store_decoded(s), 2);
    assert_int_equal(store_decoded(t), 4);
    const char *keys[] = {"ns/a", "ns/b", "ns/c", "d"};
    for (size_t i = 0; i < 4; i++)
        assert_true(json_equal(store_get(s, keys[i]), store_get(t, keys[i])));
    char *a = json_dumps(store_get(s, "ns/a"), JSON_COMPACT);
    assert_string_equal(a, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"uid\":\"u-a\","
                           "\"resourceVersion\":\"1\",\"labels\":{\"app\":\"web\"},"
                           "\"annotations\":{\"keep\":\"me\"},"
                           "\"ownerReferences\":[{\"uid\":\"o1\"},{\"uid\":\"o2\"}]},"
                           "\"spec\":{\"nodeName\":\"n1\",\"n\":-12,\"r\":1.5,\"t\":true,"
                           "\"z\":null},\"kind\":\"Pod\",\"apiVersion\":\"v1\"}");
    free(a);
    assert_string_equal(json_string_value(json_object_get(store_get(s, "ns/b"), "kind")), "Pod");
    assert_string_equal(json_string_value(json_object_get(store_get(s, "d"), "apiVersion")), "v2");
    assert_idx(s, "uid", "u-a", "ns/a");
    assert_idx(s, "app", "web", "d,ns/a");
    assert_idx(s, "owner", "o2", "ns/a");
    assert_idx(s, "node", "n1", "ns/a");
    assert_idx(s, "node", "n2", "ns/c");
    /* the text path's objects are indexed from the view, the tree path's from the tree */
    assert_idx(s, "seen", "view", "d,ns/a");
    assert_idx(s, "seen", "whole", "ns/b,ns/c");
    assert_idx(t, "seen", "whole", "d,ns/a,ns/b,ns/c");

    /* Re-list: a unchanged (no event), c changed, b and d gone. */
    ev.n = 0;
    l = store_list_new(s);
    const char *c2 = "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"resourceVersion\":\"2\","
                     "\"labels\":{\"app\":\"db\"}},\"spec\":{\"nodeName\":\"n3\"}}";
    assert_int_equal(store_list_add_text(l, items[0], strlen(items[0]), "Pod", "v1", NULL), 0);
    assert_int_equal(store_list_add_text(l, c2, strlen(c2), "Pod", "v1", NULL), 0);
    assert_int_equal(store_list_commit(l, record, &ev, NULL), 0);
    store_list_free(l);
    assert_int_equal(ev.n, 3);
    assert_string_equal(ev.log[0], "update ns/c 1>2");
    assert_idx(s, "node", "n2", "");
    assert_idx(s, "node", "n3", "ns/c");
    assert_idx(s, "app", "db", "ns/c");
    assert_idx(s, "app", "web", "ns/a");

    /* Bad texts: not JSON, no name; nothing added, no reference left behind. */
    struct err e;
    err_clear(&e);
    l = store_list_new(s);
    assert_int_equal(store_list_add_text(l, "{\"metadata\":{", 13, NULL, NULL, &e), -EBADMSG);
    assert_non_null(strstr(e.msg, "invalid JSON"));
    err_clear(&e);
    const char *noname = "{\"metadata\":{\"namespace\":\"ns\",\"labels\":{\"zz-only\":\"here\"}}}";
    assert_int_equal(store_list_add_text(l, noname, strlen(noname), NULL, NULL, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "metadata.name"));
    assert_int_equal(store_list_len(l), 0);
    store_list_free(l);
    store_free(s);
    store_free(t);
    assert_int_equal(jpack_tab_len(tab), 0);
    jpack_tab_free(tab);
}

/* A view decodes the listed members alone from a packed entry, at any depth; a cached tree, an
 * unpacked store or more paths than a view takes give the whole object. */
static void test_get_view(void **state)
{
    (void)state;
    struct store *s = store_new(&(struct store_opts){.packed = true});
    json_t *a = pod("ns", "a", "1", "n1", "web");
    assert_int_equal(store_upsert(s, a, NULL, NULL, NULL), 0);
    store_trim(s, true); /* packed, no tree */
    static const char *const paths[] = {
        "metadata.labels", "spec.nodeName", "kind", "nope", "spec.nodeName.deeper", "..", NULL};
    json_t *v = store_get_view(s, "ns/a", paths);
    char *d = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(d, "{\"kind\":\"Pod\",\"metadata\":{\"labels\":{\"app\":\"web\"}},"
                           "\"spec\":{\"nodeName\":\"n1\"}}");
    free(d);
    json_decref(v);
    assert_int_equal(store_decoded(s), 0);
    assert_null(store_get_view(s, "ns/none", paths));
    static const char *const deep[] = {"a.b.c.d.e.f.g.h.i", NULL};
    v = store_get_view(s, "ns/a", deep);
    assert_true(json_is_object(v) && json_object_size(v) == 0); /* nothing there */
    json_decref(v);
    const char *many[JPACK_VIEW_MAX + 2];
    for (size_t i = 0; i <= JPACK_VIEW_MAX; i++)
        many[i] = "kind";
    many[JPACK_VIEW_MAX + 1] = NULL;
    v = store_get_view(s, "ns/a", many);
    assert_true(json_equal(v, a));
    json_decref(v);
    json_t *cached = store_get(s, "ns/a");
    v = store_get_view(s, "ns/a", paths);
    assert_ptr_equal(v, cached);
    json_decref(v);
    store_free(s);
    s = store_new(NULL);
    assert_int_equal(store_upsert(s, a, NULL, NULL, NULL), 0);
    v = store_get_view(s, "ns/a", paths);
    assert_ptr_equal(v, a);
    json_decref(v);
    store_free(s);
    json_decref(a);
}

int main(void)
{
    static bool packed = true;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_upsert_get_delete_indexes),
        cmocka_unit_test(test_projection),
        cmocka_unit_test(test_replace_diff),
        cmocka_unit_test(test_foreach),
        cmocka_unit_test(test_project_lean),
        cmocka_unit_test(test_lean_drops),
        cmocka_unit_test_prestate(test_upsert_get_delete_indexes, &packed),
        cmocka_unit_test_prestate(test_projection, &packed),
        cmocka_unit_test_prestate(test_replace_diff, &packed),
        cmocka_unit_test(test_list_parts),
        cmocka_unit_test_prestate(test_list_parts, &packed),
        cmocka_unit_test_prestate(test_foreach, &packed),
        cmocka_unit_test(test_big_index_set),
        cmocka_unit_test(test_index_one_key),
        cmocka_unit_test(test_index_uid_values),
        cmocka_unit_test(test_packed_shaped_rv),
        cmocka_unit_test_prestate(test_index_one_key, &packed),
        cmocka_unit_test_prestate(test_big_index_set, &packed),
        cmocka_unit_test(test_packed_lifetime),
        cmocka_unit_test(test_packed_lazy),
        cmocka_unit_test(test_packed_unpackable),
        cmocka_unit_test(test_get_ref),
        cmocka_unit_test_prestate(test_get_ref, &packed),
        cmocka_unit_test(test_foreach_key),
        cmocka_unit_test_prestate(test_foreach_key, &packed),
        cmocka_unit_test(test_list_text),
        cmocka_unit_test(test_list_text_reads),
        cmocka_unit_test(test_get_view),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
