/* Unit tests for pkg/kube/cache: shared informers against the scripted fake API server. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/kube/cache.h"
#include "pkg/kube/client.h"
#include "pkg/kube/restconfig.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

#define CMS "/apis/galaxy.kubestellar.io/v1alpha1/clustermetrics"

struct user {
    int adds, updates, deletes;
    struct cache_reg *release_on_update; /* released by this user's update handler */
};

static void u_add(void *ud, json_t *obj)
{
    (void)obj;
    ((struct user *)ud)->adds++;
}

static void u_update(void *ud, json_t *o, json_t *n)
{
    (void)o;
    (void)n;
    struct user *u = ud;
    u->updates++;
    if (u->release_on_update) {
        cache_release(u->release_on_update);
        u->release_on_update = NULL;
    }
}

static void u_delete(void *ud, json_t *obj)
{
    (void)obj;
    ((struct user *)ud)->deletes++;
}

struct fx {
    struct ev_loop *loop;
    struct fakesrv *srv;
    struct kube_rest_config *cfg;
    struct kube_client *client;
    struct kcache *cache;
};

static void fx_init(struct fx *f)
{
    memset(f, 0, sizeof *f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->srv = fakesrv_start(NULL);
    f->cfg = kube_rest_config_new();
    f->cfg->server = xstrdup(fakesrv_url(f->srv));
    struct kube_client_opts co = {.max_retries = -1, .backoff_s = 0.01};
    struct err e = {0};
    assert_int_equal(kube_client_new(f->loop, f->cfg, &co, NULL, &f->client, &e), 0);
    f->cache = cache_new(f->client);
}

static void fx_free(struct fx *f)
{
    cache_free(f->cache);
    kube_client_free(f->client);
    fakesrv_stop(f->srv);
    kube_rest_config_free(f->cfg);
    ev_loop_destroy(f->loop);
}

static const struct informer_opts cm_opts = {
    .group = "galaxy.kubestellar.io",
    .version = "v1alpha1",
    .resource = "clustermetrics",
    .backoff_initial_s = 0.01,
    .backoff_max_s = 0.1,
    .backoff_jitter = -1,
    .seed = 7,
};

/* Requests to `path`: lists (no watch= in the query) and watches. */
static void count_requests(struct fakesrv *s, const char *path, size_t *lists, size_t *watches)
{
    *lists = *watches = 0;
    for (size_t i = 0; i < fakesrv_nreq(s); i++) {
        struct fakesrv_req *r = fakesrv_req_get(s, i);
        if (strcmp(r->path, path) == 0) {
            if (strstr(r->query, "watch="))
                (*watches)++;
            else
                (*lists)++;
        }
        fakesrv_req_free(r);
    }
}

struct until {
    bool (*pred)(void *);
    void *arg;
    bool ok;
};

static void poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    struct until *u = w->data;
    if (u->pred(u->arg)) {
        u->ok = true;
        ev_break(loop, EVBREAK_ALL);
    }
}

static void deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until pred(arg); false after `timeout` seconds. */
static bool run_until(struct ev_loop *loop, bool (*pred)(void *), void *arg, double timeout)
{
    struct until u = {pred, arg, false};
    ev_timer poll, deadline;
    ev_now_update(loop);
    ev_timer_init(&poll, poll_cb, 0.002, 0.002);
    poll.data = &u;
    ev_timer_init(&deadline, deadline_cb, timeout, 0.);
    ev_timer_start(loop, &poll);
    ev_timer_start(loop, &deadline);
    ev_run(loop, 0);
    ev_timer_stop(loop, &poll);
    ev_timer_stop(loop, &deadline);
    return u.ok;
}

static bool both_updated(void *arg)
{
    struct user *u = arg;
    return u[0].updates >= 1 && u[1].updates >= 1;
}

static bool two_updates(void *arg)
{
    return ((struct user *)arg)->updates >= 2;
}

#define LIST_BODY                                                                                  \
    "{\"kind\":\"ClusterMetricsList\",\"metadata\":{\"resourceVersion\":\"10\"},\"items\":["       \
    "{\"metadata\":{\"name\":\"cluster1\",\"resourceVersion\":\"5\"}},"                            \
    "{\"metadata\":{\"name\":\"cluster2\",\"resourceVersion\":\"6\"}}]}"
#define MOD_EVENT                                                                                  \
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"cluster1\","                      \
    "\"resourceVersion\":\"11\"}}}"

/* Two users of the same (cluster, resource, selector): one list, one watch,
 * both get every event; a late third user gets the cached objects replayed. */
static void test_two_users_one_list_and_watch(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fakesrv_push_json(f.srv, "GET", CMS, "watch=", 200, LIST_BODY);
    const char *ev[] = {MOD_EVENT, NULL};
    fakesrv_push_watch(f.srv, CMS, ev, FAKESRV_HOLD);
    struct user u[3] = {0};
    struct cache_reg *r[3];
    struct err e = {0};
    for (int i = 0; i < 2; i++) {
        struct informer_handlers h = {u_add, u_update, u_delete, &u[i]};
        assert_int_equal(cache_acquire(f.cache, &cm_opts, &h, &r[i], &e), 0);
        assert_int_equal(cache_start(r[i], &e), 0); /* the second start is a no-op */
    }
    assert_int_equal(cache_informers(f.cache), 1);
    assert_ptr_equal(cache_informer(r[0]), cache_informer(r[1]));
    assert_true(run_until(f.loop, both_updated, u, 5.0));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(u[i].adds, 2);
        assert_int_equal(u[i].updates, 1);
    }
    size_t lists, watches;
    count_requests(f.srv, CMS, &lists, &watches);
    assert_int_equal(lists, 1);
    assert_int_equal(watches, 1);
    /* A late joiner: the two cached objects at once, no new request. */
    struct informer_handlers h = {u_add, u_update, u_delete, &u[2]};
    assert_int_equal(cache_acquire(f.cache, &cm_opts, &h, &r[2], &e), 0);
    assert_int_equal(u[2].adds, 2);
    count_requests(f.srv, CMS, &lists, &watches);
    assert_int_equal(lists, 1);
    assert_int_equal(cache_users(f.cache), 3);
    /* A different selector is another informer. */
    struct informer_opts sel = cm_opts;
    sel.label_selector = "a=b";
    struct cache_reg *other;
    assert_int_equal(cache_acquire(f.cache, &sel, NULL, &other, &e), 0);
    assert_int_equal(cache_informers(f.cache), 2);
    cache_release(other);
    assert_int_equal(cache_informers(f.cache), 1);
    /* Refcount: the informer lives until its last user goes. */
    cache_release(r[0]);
    cache_release(r[2]);
    assert_int_equal(cache_informers(f.cache), 1);
    assert_true(informer_has_synced(cache_informer(r[1])));
    cache_release(r[1]);
    assert_int_equal(cache_informers(f.cache), 0);
    assert_int_equal(cache_users(f.cache), 0);
    fx_free(&f);
}

/* What a user's on_add got of each listed object: "name,spec,status" for the members present
 * (a view of a packed store holds only what the users read). */
struct shape_user {
    char seen[4][64];
    int n;
};

static void shape_add(void *ud, json_t *obj)
{
    struct shape_user *u = ud;
    if (u->n == 4)
        return;
    json_t *md = json_object_get(obj, "metadata");
    snprintf(u->seen[u->n++], sizeof u->seen[0], "%s,%s,%s",
             json_object_get(md, "name") ? "name" : "-",
             json_object_get(obj, "spec") ? "spec" : "-",
             json_object_get(obj, "status") ? "status" : "-");
}

#define LIST_BODY_SPEC                                                                             \
    "{\"kind\":\"ClusterMetricsList\",\"metadata\":{\"resourceVersion\":\"10\"},\"items\":["       \
    "{\"metadata\":{\"name\":\"cluster1\",\"resourceVersion\":\"5\"},\"spec\":{\"a\":1},"          \
    "\"status\":{\"b\":2}}]}"

static bool one_add(void *arg)
{
    return ((struct shape_user *)arg)->n >= 1;
}

/* Users that say what their on_add reads of a listed object (listed_view) share a view of
 * the union of it from a packed store; a user that reads whole objects makes them whole for
 * all; a user released before the list, or one without on_add, has no say. */
static void test_listed_view_union(void **state)
{
    (void)state;
    static const char *const name[] = {"metadata.name", NULL};
    static const char *const spec[] = {"spec", NULL};
    for (int whole = 0; whole < 2; whole++) {
        struct fx f;
        fx_init(&f);
        fakesrv_push_json(f.srv, "GET", CMS, "watch=", 200, LIST_BODY_SPEC);
        const char *none[] = {NULL};
        fakesrv_push_watch(f.srv, CMS, none, FAKESRV_HOLD);
        struct informer_opts io = cm_opts;
        io.packed = true;
        struct shape_user u[3] = {0};
        struct cache_reg *r[4];
        struct err e = {0};
        struct informer_handlers h0 = {.on_add = shape_add, .ud = &u[0], .listed_view = name};
        struct informer_handlers h1 = {.on_add = shape_add, .ud = &u[1], .listed_view = spec};
        struct informer_handlers h2 = {.on_add = shape_add, .ud = &u[2]}; /* whole objects */
        struct informer_handlers h3 = {.on_update = u_update, .ud = &(struct user){0}};
        assert_int_equal(cache_acquire(f.cache, &io, &h0, &r[0], &e), 0);
        assert_int_equal(cache_acquire(f.cache, &io, &h2, &r[2], &e), 0);
        assert_int_equal(cache_acquire(f.cache, &io, &h1, &r[1], &e), 0);
        assert_int_equal(cache_acquire(f.cache, &io, &h3, &r[3], &e), 0);
        if (!whole) {
            cache_release(r[2]);
            r[2] = NULL;
        }
        assert_int_equal(cache_start(r[0], &e), 0);
        assert_true(run_until(f.loop, one_add, &u[1], 5.0));
        const char *want = whole ? "name,spec,status" : "name,spec,-";
        for (int i = 0; i < 3; i++) {
            if (i == 2 && !whole) {
                assert_int_equal(u[i].n, 0);
                continue;
            }
            assert_int_equal(u[i].n, 1);
            assert_string_equal(u[i].seen[0], want);
        }
        /* the store holds the object whole */
        json_t *o = store_get(informer_store(cache_informer(r[0])), "cluster1");
        assert_non_null(json_object_get(o, "status"));
        for (int i = 0; i < 4; i++)
            cache_release(r[i]);
        fx_free(&f);
    }
}

/* A released user gets no more events, also when it is released by another
 * user's handler in the middle of a fan-out. */
static void test_release_stops_events(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fakesrv_push_json(f.srv, "GET", CMS, "watch=", 200, LIST_BODY);
    const char *ev[] = {MOD_EVENT, MOD_EVENT, NULL};
    fakesrv_push_watch(f.srv, CMS, ev, FAKESRV_HOLD);
    struct user u[2] = {0};
    struct cache_reg *r[2];
    struct err e = {0};
    for (int i = 0; i < 2; i++) {
        struct informer_handlers h = {u_add, u_update, u_delete, &u[i]};
        assert_int_equal(cache_acquire(f.cache, &cm_opts, &h, &r[i], &e), 0);
    }
    u[0].release_on_update = r[1]; /* the first update of user 0 releases user 1 */
    assert_int_equal(cache_start(r[0], &e), 0);
    assert_true(run_until(f.loop, two_updates, &u[0], 5.0));
    assert_int_equal(u[0].updates, 2);
    assert_int_equal(u[1].updates, 0); /* released before its turn in the first fan-out */
    assert_int_equal(cache_users(f.cache), 1);
    cache_release(r[0]);
    assert_int_equal(cache_informers(f.cache), 0);
    fx_free(&f);
}

static bool both_added(void *arg)
{
    struct user *u = arg;
    return u[0].adds >= 2 && u[1].adds >= 2;
}

static bool updated(void *arg)
{
    return ((struct user *)arg)->updates >= 1;
}

struct srv_lists {
    struct fakesrv *srv;
    size_t want;
};

static bool lists_reach(void *arg)
{
    struct srv_lists *l = arg;
    size_t lists, watches;
    count_requests(l->srv, CMS, &lists, &watches);
    return lists >= l->want;
}

static void index_other(json_t *obj, struct store_values *vals, void *ud)
{
    (void)obj;
    (void)vals;
    (void)ud;
}

/* Starts are counted per user: one user's stop leaves the informer running for the other
 * (its events go on, to both registrations); the last stop stops it (a start lists again).
 * Indexes are shared by name; a clash is refused. The last release frees the informer and a
 * new acquire makes a new one. */
static void test_stop_counts_starts_and_indexes(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    struct fakesrv_resp list = {
        .method = "GET", .path = CMS, .query_lacks = "watch=", .body = LIST_BODY, .times = -1};
    fakesrv_push(f.srv, &list);
    struct fakesrv_chunk late = {.delay_s = 0.3, .data = MOD_EVENT "\n"};
    struct fakesrv_resp watch = {.method = "GET",
                                 .path = CMS,
                                 .query_contains = "watch=",
                                 .chunks = &late,
                                 .n_chunks = 1,
                                 .end = FAKESRV_HOLD};
    fakesrv_push(f.srv, &watch);
    fakesrv_push_watch(f.srv, CMS, NULL, FAKESRV_HOLD);
    fakesrv_push_watch(f.srv, CMS, NULL, FAKESRV_HOLD);
    struct user u[2] = {0};
    struct cache_reg *r[2];
    struct err e = {0};
    for (int i = 0; i < 2; i++) {
        struct informer_handlers h = {u_add, u_update, u_delete, &u[i]};
        assert_int_equal(cache_acquire(f.cache, &cm_opts, &h, &r[i], &e), 0);
        assert_int_equal(cache_start(r[i], &e), 0);
        assert_int_equal(
            cache_add_index(r[i], "by-name", store_index_by_field, (void *)"metadata.name", &e), 0);
    }
    err_clear(&e);
    assert_int_equal(cache_add_index(r[1], "by-name", index_other, NULL, &e), -EEXIST);
    assert_non_null(strstr(e.msg, "by-name"));
    assert_true(run_until(f.loop, both_added, u, 5.0));
    json_t *hit = store_by_index(informer_store(cache_informer(r[0])), "by-name", "cluster2", NULL);
    assert_int_equal(json_array_size(hit), 1);
    json_decref(hit);
    /* user 0 stops: the informer runs on for user 1, and both still get its events */
    cache_stop(r[0]);
    assert_true(run_until(f.loop, updated, &u[1], 5.0));
    assert_int_equal(u[0].updates, 1);
    size_t lists, watches;
    count_requests(f.srv, CMS, &lists, &watches);
    assert_int_equal(lists, 1);
    /* the last stop stops it: a start lists again */
    cache_stop(r[1]);
    assert_int_equal(cache_start(r[1], &e), 0);
    struct srv_lists two = {f.srv, 2};
    assert_true(run_until(f.loop, lists_reach, &two, 5.0));
    /* releasing the only started user stops it too; the last release frees it */
    cache_release(r[1]);
    assert_int_equal(cache_informers(f.cache), 1);
    cache_release(r[0]);
    assert_int_equal(cache_informers(f.cache), 0);
    /* a new user after that: a new informer, a new list */
    struct user v = {0};
    struct informer_handlers h = {u_add, u_update, u_delete, &v};
    struct cache_reg *again;
    assert_int_equal(cache_acquire(f.cache, &cm_opts, &h, &again, &e), 0);
    assert_int_equal(cache_add_index(again, "by-name", index_other, NULL, &e), 0);
    assert_int_equal(cache_start(again, &e), 0);
    struct srv_lists three = {f.srv, 3};
    assert_true(run_until(f.loop, lists_reach, &three, 5.0));
    cache_release(again);
    assert_int_equal(cache_users(f.cache), 0);
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_users_one_list_and_watch),
        cmocka_unit_test(test_release_stops_events),
        cmocka_unit_test(test_stop_counts_starts_and_indexes),
        cmocka_unit_test(test_listed_view_union),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
