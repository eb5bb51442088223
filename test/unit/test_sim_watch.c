/* Unit tests for devhub/sim_watch: a watch-maintained copy of a hub collection. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/hub.h"
#include "devhub/sim_api.h"
#include "devhub/sim_watch.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"
#include "test/support/tloop.h"

#define CMS "/api/v1/namespaces/default/configmaps"

struct fx {
    struct ev_loop *loop;
    struct hub *h;
    json_t *seen; /* array of [key, old data.v or null, new data.v or null] */
};

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    f->loop = ev_loop_new(0);
    struct hub_opts o = {.loop = f->loop};
    struct err e = {0};
    if (hub_new(&f->h, &o, &e))
        return -1;
    f->seen = json_array();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    hub_free(f->h);
    ev_loop_destroy(f->loop);
    json_decref(f->seen);
    free(f);
    return 0;
}

static void on_change(const char *key, const json_t *old, const json_t *obj, void *ud)
{
    struct fx *f = ud;
    json_t *o = jx_get(old, "data.v"), *n = jx_get(obj, "data.v");
    json_array_append_new(f->seen,
                          json_pack("[s,O,O]", key, o ? o : json_null(), n ? n : json_null()));
}

static void put_cm(struct fx *f, const char *name, const char *v, const char *label)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{%s%s%s}},\"data\":{\"v\":\"%s\"}}",
             name, label ? "\"" : "", label ? label : "", label ? "\":\"y\"" : "", v);
    json_t *o = json_loads(body, 0, NULL);
    char *path = xasprintf(CMS "/%s", name);
    if (simapi_get(f->h, path, NULL) == 200) {
        json_t *p = json_pack("{s:{s:s},s:{s:o}}", "data", "v", v, "metadata", "labels",
                              label ? json_pack("{s:s}", label, "y") : json_null());
        assert_int_equal(simapi_patch(f->h, path, p, NULL), 200);
        json_decref(p);
    } else {
        assert_int_equal(simapi_create(f->h, CMS, o, NULL), 201);
    }
    free(path);
    json_decref(o);
}

static void del_cm(struct fx *f, const char *name)
{
    char *path = xasprintf(CMS "/%s", name);
    assert_int_equal(simapi_delete(f->h, path), 200);
    free(path);
}

static const char *copy_v(struct simwatch *w, const char *key)
{
    return jx_str(json_object_get(simwatch_objs(w), key), "data.v", NULL);
}

static void test_copy_follows_changes(void **state)
{
    struct fx *f = *state;
    put_cm(f, "a", "1", NULL);
    struct simwatch *w = simwatch_new(f->h, "/api/v1/configmaps", NULL);
    assert_int_equal(json_object_size(simwatch_objs(w)), 0); /* nothing read yet */
    /* first sync: built from scratch, no callbacks */
    assert_int_equal(simwatch_sync(w, on_change, f), 1);
    assert_int_equal(json_array_size(f->seen), 0);
    assert_string_equal(copy_v(w, "default/a"), "1");
    /* nothing new */
    assert_int_equal(simwatch_sync(w, on_change, f), 0);
    assert_int_equal(json_array_size(f->seen), 0);
    /* add, modify, delete: one callback each, with the previous copy */
    put_cm(f, "b", "2", NULL);
    put_cm(f, "a", "3", NULL);
    del_cm(f, "b");
    assert_int_equal(simwatch_sync(w, on_change, f), 0);
    json_t *want = json_loads("[[\"default/b\",null,\"2\"],[\"default/a\",\"1\",\"3\"],"
                              "[\"default/b\",\"2\",null]]",
                              0, NULL);
    assert_true(json_equal(f->seen, want));
    json_decref(want);
    assert_int_equal(json_object_size(simwatch_objs(w)), 1);
    assert_string_equal(copy_v(w, "default/a"), "3");
    /* a hand-put copy stays until the watch says otherwise */
    json_t *mine = json_pack("{s:{s:s,s:s},s:{s:s}}", "metadata", "name", "a", "namespace",
                             "default", "data", "v", "mine");
    simwatch_put(w, "default/a", mine);
    json_decref(mine);
    assert_string_equal(copy_v(w, "default/a"), "mine");
    put_cm(f, "a", "4", NULL);
    assert_int_equal(simwatch_sync(w, NULL, NULL), 0);
    assert_string_equal(copy_v(w, "default/a"), "4");
    simwatch_free(w);
}

static void test_label_selector(void **state)
{
    struct fx *f = *state;
    struct simwatch *w = simwatch_new(f->h, "/api/v1/configmaps", "pick");
    assert_int_equal(simwatch_sync(w, on_change, f), 1);
    put_cm(f, "in", "1", "pick");
    put_cm(f, "out", "1", NULL);
    assert_int_equal(simwatch_sync(w, on_change, f), 0);
    assert_int_equal(json_object_size(simwatch_objs(w)), 1);
    assert_string_equal(copy_v(w, "default/in"), "1");
    /* losing the label is a deletion for this copy */
    put_cm(f, "in", "2", NULL);
    assert_int_equal(simwatch_sync(w, on_change, f), 0);
    assert_int_equal(json_object_size(simwatch_objs(w)), 0);
    json_t *last = json_array_get(f->seen, json_array_size(f->seen) - 1);
    assert_string_equal(json_string_value(json_array_get(last, 0)), "default/in");
    assert_true(json_is_null(json_array_get(last, 2)));
    simwatch_free(w);
}

static void test_ended_watch_rebuilds(void **state)
{
    struct fx *f = *state;
    put_cm(f, "a", "1", NULL);
    put_cm(f, "b", "1", NULL);
    struct simwatch *w = simwatch_new(f->h, "/api/v1/configmaps", NULL);
    assert_int_equal(simwatch_sync(w, on_change, f), 1);
    size_t watches = hub_watch_count(f->h);
    /* the hub ends every watch (fault injection); meanwhile b goes and c comes */
    hub_set_watch_cut(f->h, 0.01);
    tloop_run_for(f->loop, 0.1);
    hub_set_watch_cut(f->h, 0);
    del_cm(f, "b");
    put_cm(f, "c", "1", NULL);
    /* rebuilt from a new watch: exactly the current objects, no callbacks */
    assert_int_equal(simwatch_sync(w, on_change, f), 1);
    assert_int_equal(json_array_size(f->seen), 0);
    assert_int_equal(json_object_size(simwatch_objs(w)), 2);
    assert_non_null(json_object_get(simwatch_objs(w), "default/a"));
    assert_non_null(json_object_get(simwatch_objs(w), "default/c"));
    assert_int_equal(hub_watch_count(f->h), watches); /* the old watch was released */
    simwatch_free(w);
    assert_int_equal(hub_watch_count(f->h), watches - 1);
}

static void test_not_served(void **state)
{
    struct fx *f = *state;
    struct simwatch *w = simwatch_new(f->h, "/apis/example.com/v1/widgets", NULL);
    assert_int_equal(simwatch_sync(w, on_change, f), 404);
    assert_int_equal(json_object_size(simwatch_objs(w)), 0);
    assert_int_equal(simwatch_sync(w, on_change, f), 404);
    simwatch_free(w);
    simwatch_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copy_follows_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_label_selector, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ended_watch_rebuilds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_served, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
