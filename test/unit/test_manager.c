/*
 * Unit tests for pkg/manager against the scripted fakesrv: start-up probe,
 * health endpoints, runnables with and without leader election, graceful
 * SIGTERM with Lease release, fail-fast on an unreachable server.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pkg/kube/client.h"
#include "pkg/manager/manager.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

#define VERSION_JSON "{\"major\":\"1\",\"minor\":\"32\",\"gitVersion\":\"v1.32.0\"}"

struct fixture {
    char dir[64];
    char kubeconfig[128];
    struct fakesrv *srv;
};

static void write_kubeconfig(struct fixture *f, const char *server)
{
    FILE *fp = fopen(f->kubeconfig, "w");
    assert_non_null(fp);
    fprintf(fp,
            "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
            "clusters:\n- name: c\n  cluster:\n    server: %s\n"
            "contexts:\n- name: t\n  context: {cluster: c, user: u, namespace: ops}\n"
            "users:\n- name: u\n  user: {token: secret-token}\n",
            server);
    fclose(fp);
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/kks-mgr-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->kubeconfig, sizeof f->kubeconfig, "%s/kubeconfig", f->dir);
    f->srv = fakesrv_start(NULL);
    write_kubeconfig(f, fakesrv_url(f->srv));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    fakesrv_stop(f->srv);
    unlink(f->kubeconfig);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* What the test runnable observed. */
struct probe {
    struct mgr *m;
    struct ev_loop *loop;
    int started;
    int stopped;
    bool leader_at_start;
    int readyz_status;
    char readyz_body[512];
    int metrics_status;
    bool metrics_has_requests;
    struct kube_client *hc; /* client towards the manager's own health server */
    struct kube_rest_config *hcfg;
    ev_timer guard;
    bool timed_out;
};

static void on_guard(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct probe *p = w->data;
    p->timed_out = true;
    mgr_shutdown(p->m, 99);
}

static void on_readyz(void *ud, const struct kube_result *r)
{
    struct probe *p = ud;
    p->readyz_status = r->status;
    snprintf(p->readyz_body, sizeof p->readyz_body, "%s", r->raw);
    /* Done probing: terminate like the kubelet would. */
    raise(SIGTERM);
}

static int runnable_start(void *ud, struct mgr *m, struct err *e)
{
    struct probe *p = ud;
    p->started++;
    p->leader_at_start = mgr_is_leader(m);
    int port = httpd_port(mgr_health(m));
    assert_true(port > 0);
    p->hcfg = kube_rest_config_new();
    p->hcfg->server = xasprintf("http://127.0.0.1:%d", port);
    struct kube_client_opts co = {0};
    co.max_retries = -1;
    assert_int_equal(kube_client_new(mgr_loop(m), p->hcfg, &co, NULL, &p->hc, NULL), 0);
    const char *q[] = {"verbose", "1", NULL};
    assert_int_equal(kube_client_get(p->hc, "/readyz", q, on_readyz, p, NULL, NULL), 0);
    return 0;
}

static void runnable_stop(void *ud)
{
    struct probe *p = ud;
    p->stopped++;
}

static int run_manager(struct fixture *f, struct probe *p, bool leader_elect)
{
    struct ev_loop *loop = ev_default_loop(0);
    struct mgr_options o = {
        .kubeconfig = f->kubeconfig,
        .metrics_bind = "127.0.0.1:0",
        .health_bind = "127.0.0.1:0",
        .leader_elect = leader_elect,
        .le_id = "kks-test",
        .lease_duration_s = 1.5,
        .renew_deadline_s = 1.0,
        .retry_period_s = 0.2,
    };
    struct err e;
    err_clear(&e);
    int rc = mgr_new(loop, &o, NULL, &p->m, &e);
    assert_int_equal(rc, 0);
    assert_string_equal(mgr_namespace(p->m), "ops");
    struct mgr_runnable r = {"probe", runnable_start, runnable_stop, p};
    mgr_add_runnable(p->m, &r);
    ev_timer_init(&p->guard, on_guard, 10.0, 0);
    p->guard.data = p;
    ev_timer_start(loop, &p->guard);
    int code = mgr_run(p->m);
    ev_timer_stop(loop, &p->guard);
    kube_client_free(p->hc);
    kube_rest_config_free(p->hcfg);
    mgr_free(p->m);
    return code;
}

static void test_run_without_election(void **state)
{
    struct fixture *f = *state;
    fakesrv_push(f->srv,
                 &(struct fakesrv_resp){
                     .method = "GET", .path = "/version", .body = VERSION_JSON, .times = -1});
    struct probe p = {0};
    int code = run_manager(f, &p, false);
    assert_false(p.timed_out);
    assert_int_equal(code, 0);
    assert_int_equal(p.started, 1);
    assert_int_equal(p.stopped, 1);
    assert_true(p.leader_at_start);
    assert_int_equal(p.readyz_status, 200);
    assert_non_null(strstr(p.readyz_body, "api-server ok"));
    /* The bearer token reached the server and nothing else was asked of it. */
    struct fakesrv_req *req = fakesrv_req_get(f->srv, 0);
    assert_non_null(req);
    assert_string_equal(req->path, "/version");
    assert_string_equal(fakesrv_req_header(req, "authorization"), "Bearer secret-token");
    fakesrv_req_free(req);
    assert_int_equal(fakesrv_nreq(f->srv), 1);
}

/* The API server does not answer at first (a control-plane restart): the manager asks
 * again with backoff instead of exiting, and starts once it answers (the real-stack chaos
 * test restarted the operator while the hub's apiserver was down: it exited for good). */
static void test_unreachable_then_up(void **state)
{
    struct fixture *f = *state;
    fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "GET",
                                                .path = "/version",
                                                .status = 503,
                                                .body = "{\"kind\":\"Status\",\"code\":503}",
                                                .times = 2});
    fakesrv_push(f->srv,
                 &(struct fakesrv_resp){
                     .method = "GET", .path = "/version", .body = VERSION_JSON, .times = -1});
    struct probe p = {0};
    int code = run_manager(f, &p, false);
    assert_false(p.timed_out);
    assert_int_equal(code, 0);
    assert_int_equal(p.started, 1);
    assert_int_equal(fakesrv_nreq(f->srv), 3);
}

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/ops/leases/kks-test"
#define LEASE_BODY                                                                                 \
    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"        \
    "\"kks-test\",\"namespace\":\"ops\",\"resourceVersion\":\"7\"},\"spec\":{}}"

static void test_run_with_election_releases_lease(void **state)
{
    struct fixture *f = *state;
    fakesrv_push(f->srv,
                 &(struct fakesrv_resp){
                     .method = "GET", .path = "/version", .body = VERSION_JSON, .times = -1});
    fakesrv_push_status(f->srv, "GET", LEASE_PATH, 404, "NotFound",
                        "leases.coordination.k8s.io \"kks-test\" not found");
    fakesrv_push(f->srv, &(struct fakesrv_resp){.method = "POST",
                                                .path = "/apis/coordination.k8s.io/v1/namespaces/"
                                                        "ops/leases",
                                                .status = 201,
                                                .body = LEASE_BODY});
    fakesrv_push(f->srv, &(struct fakesrv_resp){
                             .method = "PUT", .path = LEASE_PATH, .body = LEASE_BODY, .times = -1});
    struct probe p = {0};
    int code = run_manager(f, &p, true);
    assert_false(p.timed_out);
    assert_int_equal(code, 0);
    assert_int_equal(p.started, 1);
    assert_int_equal(p.stopped, 1);
    assert_true(p.leader_at_start);
    /* The Lease was created with our identity, and released (empty holder) on SIGTERM. */
    size_t n = fakesrv_nreq(f->srv);
    bool created = false, released = false;
    for (size_t i = 0; i < n; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        if (!strcmp(r->method, "POST") && strstr(r->body, "\"holderIdentity\":\"") &&
            !strstr(r->body, "\"holderIdentity\":\"\""))
            created = true;
        if (!strcmp(r->method, "PUT") && strstr(r->body, "\"holderIdentity\":\"\""))
            released = true;
        fakesrv_req_free(r);
    }
    assert_true(created);
    assert_true(released);
}

static void test_unreachable_server_exits_1(void **state)
{
    struct fixture *f = *state;
    /* Nothing listens on port 1: connection refused at once. */
    write_kubeconfig(f, "http://127.0.0.1:1");
    struct probe p = {0};
    struct ev_loop *loop = ev_default_loop(0);
    /* With --startup-timeout: it gives up once the next attempt would pass it (1 s backoff). */
    struct mgr_options o = {.kubeconfig = f->kubeconfig,
                            .metrics_bind = "0",
                            .health_bind = "0",
                            .startup_timeout_s = 2.5};
    assert_int_equal(mgr_new(loop, &o, NULL, &p.m, NULL), 0);
    mgr_add_runnable(p.m, &(struct mgr_runnable){"probe", runnable_start, runnable_stop, &p});
    ev_timer_init(&p.guard, on_guard, 10.0, 0);
    p.guard.data = &p;
    ev_timer_start(loop, &p.guard);
    int code = mgr_run(p.m);
    ev_timer_stop(loop, &p.guard);
    mgr_free(p.m);
    assert_false(p.timed_out);
    assert_int_equal(code, 1);
    assert_int_equal(p.started, 0); /* controllers never start without a server */
}

static void test_bad_kubeconfig_named(void **state)
{
    struct fixture *f = *state;
    FILE *fp = fopen(f->kubeconfig, "w");
    fputs("apiVersion: v1\ncontexts: [\n", fp);
    fclose(fp);
    struct mgr *m = NULL;
    struct err e;
    err_clear(&e);
    struct mgr_options o = {.kubeconfig = f->kubeconfig, .metrics_bind = "0", .health_bind = "0"};
    assert_true(mgr_new(ev_default_loop(0), &o, NULL, &m, &e) < 0);
    assert_null(m);
    assert_non_null(strstr(e.msg, f->kubeconfig));
}

static void test_bad_bind_address(void **state)
{
    struct fixture *f = *state;
    struct mgr *m = NULL;
    struct err e;
    err_clear(&e);
    struct mgr_options o = {
        .kubeconfig = f->kubeconfig, .metrics_bind = "nonsense:port:x", .health_bind = "0"};
    assert_true(mgr_new(ev_default_loop(0), &o, NULL, &m, &e) < 0);
    assert_null(m);
    assert_non_null(strstr(e.msg, "--metrics-bind-address"));
}

static int stop_at_start(void *ud, struct mgr *m, struct err *e)
{
    (void)ud;
    (void)m;
    (void)e;
    raise(SIGTERM);
    return 0;
}

static void no_stop(void *ud)
{
    (void)ud;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Both http servers off (--metrics-bind-address 0 --health-probe-bind-address 0): one line
 * says so for the process, naming both (it used to be two identical lines, one per server,
 * naming neither); one server off: the line names that one. */
static void test_disabled_servers_logged_once(void **state)
{
    struct fixture *f = *state;
    fakesrv_push(f->srv,
                 &(struct fakesrv_resp){
                     .method = "GET", .path = "/version", .body = VERSION_JSON, .times = -1});
    static const char *const health[] = {"0", "127.0.0.1:0"};
    static const char *const want[] = {"servers=metrics,health-probes", "servers=metrics"};
    for (int k = 0; k < 2; k++) {
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        assert_non_null(out);
        struct logger lg;
        log_init(&lg, out, 0, LOG_FMT_TEXT);
        struct mgr_options o = {
            .kubeconfig = f->kubeconfig, .metrics_bind = "0", .health_bind = health[k]};
        struct mgr *m = NULL;
        struct err e;
        err_clear(&e);
        assert_int_equal(mgr_new(ev_default_loop(0), &o, &lg, &m, &e), 0);
        struct mgr_runnable r = {"stop", stop_at_start, no_stop, NULL};
        mgr_add_runnable(m, &r);
        assert_int_equal(mgr_run(m), 0);
        mgr_free(m);
        fclose(out);
        assert_int_equal(count_of(text, "http server disabled"), 1);
        assert_non_null(strstr(text, want[k]));
        if (k == 1) /* only the metrics server is off: health-probes is not named */
            assert_null(strstr(text, "servers=metrics,health-probes"));
        assert_int_equal(count_of(text, "serving health probes"), (size_t)k);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_run_without_election, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_with_election_releases_lease, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreachable_server_exits_1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreachable_then_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_kubeconfig_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_bind_address, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disabled_servers_logged_once, setup, teardown),
    };
    int rc = cmocka_run_group_tests_name("manager", tests, NULL, NULL);
    ev_loop_destroy(ev_default_loop(0));
    return rc;
}
