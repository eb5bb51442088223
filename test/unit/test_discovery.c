/*
 * Unit tests for pkg/kube/discovery: a discovery GET is repeated after a
 * transient error and reports only a definitive answer; the Kueue version rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ev.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/kube/client.h"
#include "pkg/kube/discovery.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

struct fx {
    struct ev_loop *loop;
    struct fakesrv *srv;
    struct kube_client *c;
    int done_calls, rc, retries;
    char version[16];
    char last_retry[ERR_MSG_MAX];
    struct disc *d;
};

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof *f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->srv = fakesrv_start(NULL);
    struct kube_rest_config *cfg = kube_rest_config_new();
    cfg->server = xstrdup(fakesrv_url(f->srv));
    struct kube_client_opts co = {.max_retries = -1};
    assert_int_equal(kube_client_new(f->loop, cfg, &co, NULL, &f->c, NULL), 0);
    kube_rest_config_free(cfg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    disc_free(f->d);
    kube_client_free(f->c);
    fakesrv_stop(f->srv);
    ev_loop_destroy(f->loop);
    free(f);
    return 0;
}

static void on_done(void *ud, int rc, const json_t *body)
{
    struct fx *f = ud;
    f->done_calls++;
    f->rc = rc;
    const char *v = "";
    if (rc == 0)
        disc_kueue_version(body, &v, NULL);
    snprintf(f->version, sizeof f->version, "%s", v);
    disc_free(f->d); /* allowed from the callback */
    f->d = NULL;
    ev_break(f->loop, EVBREAK_ALL);
}

static void on_retry(void *ud, const struct err *e, double delay_s)
{
    struct fx *f = ud;
    f->retries++;
    assert_true(delay_s > 0 && delay_s <= 0.02);
    snprintf(f->last_retry, sizeof f->last_retry, "%s", e->msg);
}

static int accept_kueue(void *ud, const json_t *body, struct err *e)
{
    (void)ud;
    const char *v;
    return disc_kueue_version(body, &v, e);
}

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* Run until done (10 s guard). */
static void run(struct fx *f, bool retry_not_found)
{
    struct disc_opts o = {.client = f->c,
                          .path = DISC_KUEUE_GROUP_PATH,
                          .retry_not_found = retry_not_found,
                          .backoff_s = 0.01,
                          .backoff_max_s = 0.02,
                          .accept = accept_kueue,
                          .done = on_done,
                          .on_retry = on_retry,
                          .ud = f};
    assert_int_equal(disc_start(&o, &f->d, NULL), 0);
    ev_timer guard;
    ev_timer_init(&guard, guard_cb, 10.0, 0);
    ev_timer_start(f->loop, &guard);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &guard);
}

#define GROUP_B2 "{\"kind\":\"APIGroup\",\"versions\":[{\"version\":\"v1beta2\"}]}"

static void test_transient_errors_retried(void **state)
{
    struct fx *f = *state;
    fakesrv_push_status(f->srv, "GET", DISC_KUEUE_GROUP_PATH, 403, "Forbidden", "rbac pending");
    fakesrv_push_status(f->srv, "GET", DISC_KUEUE_GROUP_PATH, 503, "ServiceUnavailable", "busy");
    fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "GET",
                                                .path = DISC_KUEUE_GROUP_PATH,
                                                .delay_s = 0,
                                                .status = 500,
                                                .body = "not json"});
    /* a served group without a version we know: transient as well */
    fakesrv_push_json(f->srv, "GET", DISC_KUEUE_GROUP_PATH, NULL, 200,
                      "{\"kind\":\"APIGroup\",\"versions\":[{\"version\":\"v1alpha9\"}]}");
    fakesrv_push_json(f->srv, "GET", DISC_KUEUE_GROUP_PATH, NULL, 200, GROUP_B2);
    run(f, false);
    assert_int_equal(f->done_calls, 1);
    assert_int_equal(f->rc, 0);
    assert_string_equal(f->version, "v1beta2");
    assert_int_equal(f->retries, 4);
    assert_non_null(strstr(f->last_retry, "neither v1beta2 nor v1beta1"));
    assert_int_equal(fakesrv_nreq(f->srv), 5);
}

static void test_not_found(void **state)
{
    struct fx *f = *state;
    /* definitive by default */
    run(f, false);
    assert_int_equal(f->done_calls, 1);
    assert_int_equal(f->rc, -ENOENT);
    assert_int_equal(f->retries, 0);
    /* waited for with retry_not_found (Kueue installed later) */
    f->done_calls = 0;
    fakesrv_push_status(f->srv, "GET", DISC_KUEUE_GROUP_PATH, 404, "NotFound", "no group");
    fakesrv_push_json(f->srv, "GET", DISC_KUEUE_GROUP_PATH, NULL, 200, GROUP_B2);
    run(f, true);
    assert_int_equal(f->done_calls, 1);
    assert_int_equal(f->rc, 0);
    assert_int_equal(f->retries, 1);
}

static void test_kueue_version_rule(void **state)
{
    (void)state;
    const char *v = NULL;
    struct err e = {0};
    json_t *both =
        json_loads("{\"versions\":[{\"version\":\"v1beta1\"},{\"version\":\"v1beta2\"}]}", 0, NULL);
    assert_int_equal(disc_kueue_version(both, &v, &e), 0);
    assert_string_equal(v, "v1beta2");
    json_t *b1 = json_loads("{\"versions\":[{\"version\":\"v1beta1\"}]}", 0, NULL);
    assert_int_equal(disc_kueue_version(b1, &v, &e), 0);
    assert_string_equal(v, "v1beta1");
    /* hostile documents: no crash, a clear error */
    json_t *bad = json_loads("{\"versions\":[1,null,{\"version\":7}]}", 0, NULL);
    assert_int_equal(disc_kueue_version(bad, &v, &e), -ENOTSUP);
    assert_int_equal(disc_kueue_version(NULL, &v, &e), -ENOTSUP);
    assert_true(disc_definitive(0));
    assert_true(disc_definitive(-ENOENT));
    assert_false(disc_definitive(-EPERM));
    assert_false(disc_definitive(-ETIMEDOUT));
    json_decref(both);
    json_decref(b1);
    json_decref(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_transient_errors_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_found, setup, teardown),
        cmocka_unit_test(test_kueue_version_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
