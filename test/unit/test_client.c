/* Unit tests for pkg/kube/client against the scripted server test/support/fakesrv. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <ev.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pkg/kube/client.h"
#include "pkg/kube/kfile.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

/* ---- harness ------------------------------------------------------------- */

#define MAX_RESULTS 128

struct got {
    int rc;
    int status;
    int attempts;
    long new_connections;
    double seconds;
    char msg[ERR_MSG_MAX];
    char reason[64];
    int http_status;
    char *body; /* compact JSON dump of the parsed body, or NULL */
    char *rv;   /* r->resource_version (copied), or NULL */
};

struct fx {
    struct ev_loop *loop;
    struct fakesrv *srv;
    struct kube_rest_config *cfg;
    struct kube_client *c;
    ev_timer guard;
    bool timed_out;
    int want; /* stop the loop when this many results arrived */
    int n;
    struct got got[MAX_RESULTS];
    int hook_calls;
    int hook_codes[MAX_RESULTS];
    size_t stream_max, stream_total; /* a stream's largest chunk and its bytes */
};

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct fx *f = w->data;
    f->timed_out = true;
    ev_break(loop, EVBREAK_ALL);
}

static void done_cb(void *ud, const struct kube_result *r)
{
    struct fx *f = ud;
    assert_true(f->n < MAX_RESULTS);
    struct got *g = &f->got[f->n++];
    g->rc = r->rc;
    g->status = r->status;
    g->attempts = r->attempts;
    g->new_connections = r->new_connections;
    g->seconds = r->seconds;
    assert_non_null(r->err);
    assert_int_equal(r->err->code, r->rc);
    snprintf(g->msg, sizeof g->msg, "%s", r->err->msg);
    snprintf(g->reason, sizeof g->reason, "%s", r->err->reason);
    g->http_status = r->err->http_status;
    g->body = r->body ? json_dumps(r->body, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    g->rv = r->resource_version ? xstrdup(r->resource_version) : NULL;
    if (f->n >= f->want)
        ev_break(f->loop, EVBREAK_ALL);
}

static void hook(void *ud, const char *verb, int code, double seconds)
{
    struct fx *f = ud;
    if (f->hook_calls < MAX_RESULTS)
        f->hook_codes[f->hook_calls] = code;
    f->hook_calls++;
    assert_true(seconds >= 0);
}

static void fx_client(struct fx *f, const struct kube_client_opts *opts)
{
    struct err e;
    kube_client_free(f->c);
    f->c = NULL;
    struct kube_client_opts o = opts ? *opts : (struct kube_client_opts){0};
    if (!o.on_response) {
        o.on_response = hook;
        o.on_response_ud = f;
    }
    if (!o.backoff_s)
        o.backoff_s = 0.02;
    int rc = kube_client_new(f->loop, f->cfg, &o, NULL, &f->c, &e);
    if (rc < 0)
        fail_msg("kube_client_new: %s", e.msg);
}

static struct fx *fx_new(const struct fakesrv_opts *so)
{
    struct fx *f = xcalloc(1, sizeof *f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->srv = fakesrv_start(so);
    f->cfg = kube_rest_config_new();
    f->cfg->server = xstrdup(fakesrv_url(f->srv));
    f->cfg->token = xstrdup("static-token");
    ev_timer_init(&f->guard, guard_cb, 20., 0.);
    f->guard.data = f;
    fx_client(f, NULL);
    return f;
}

static void fx_free(struct fx *f)
{
    kube_client_free(f->c);
    fakesrv_stop(f->srv);
    kube_rest_config_free(f->cfg);
    ev_loop_destroy(f->loop);
    for (int i = 0; i < f->n; i++) {
        free(f->got[i].body);
        free(f->got[i].rv);
    }
    free(f);
}

/* Run the loop until `want` results in total arrived; fails the test on a hang. */
static void fx_run(struct fx *f, int want, double timeout_s)
{
    f->want = want;
    if (f->n >= want)
        return;
    if (getenv("KKS_VALGRIND")) /* everything, TLS most of all, is ~20x slower there */
        timeout_s *= 6;
    ev_timer_set(&f->guard, timeout_s, 0.);
    ev_timer_start(f->loop, &f->guard);
    ev_run(f->loop, 0);
    ev_timer_stop(f->loop, &f->guard);
    if (f->timed_out)
        fail_msg("event loop test timed out after %.1f s (%d of %d results)", timeout_s, f->n,
                 want);
}

static void do_req(struct fx *f, const char *method, const char *path, const char *const *query,
                   const char *body_json, const char *ct)
{
    json_t *body = NULL;
    if (body_json) {
        json_error_t je;
        body = json_loads(body_json, 0, &je);
        assert_non_null(body);
    }
    struct kube_request r = {
        .method = method, .path = path, .query = query, .body = body, .content_type = ct};
    struct err e;
    assert_int_equal(kube_client_do(f->c, &r, done_cb, f, NULL, &e), 0);
    json_decref(body);
}

/* ---- pure helpers ---------------------------------------------------------- */

static void test_path_and_query(void **state)
{
    char *p = kube_path("", "v1", "pods", "a", "p", "status");
    assert_string_equal(p, "/api/v1/namespaces/a/pods/p/status");
    free(p);
    p = kube_path(NULL, "v1", "namespaces", NULL, "kube-system", NULL);
    assert_string_equal(p, "/api/v1/namespaces/kube-system");
    free(p);
    p = kube_path("kueue.x-k8s.io", "v1beta1", "workloads", NULL, NULL, NULL);
    assert_string_equal(p, "/apis/kueue.x-k8s.io/v1beta1/workloads");
    free(p);
    p = kube_path("rbac.authorization.k8s.io", "v1", "clusterroles", "", "system:x y", NULL);
    assert_string_equal(p, "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Ax%20y");
    free(p);

    struct buf b;
    buf_init(&b, 1024);
    buf_puts(&b, "/api/v1/pods");
    const char *q[] = {"labelSelector", "a in (x,y),!b", "limit", "500", "skip", NULL, NULL};
    assert_int_equal(kube_query_append(&b, q), 0);
    assert_string_equal(buf_str(&b),
                        "/api/v1/pods?labelSelector=a%20in%20%28x%2Cy%29%2C%21b&limit=500");
    const char *q2[] = {"continue", "tok=/+", NULL};
    assert_int_equal(kube_query_append(&b, q2), 0);
    assert_true(strstr(buf_str(&b), "&continue=tok%3D%2F%2B") != NULL);
    buf_free(&b);
}

static void test_status_codes(void **state)
{
    assert_int_equal(kube_status_code(404, "NotFound"), -ENOENT);
    assert_int_equal(kube_status_code(409, "AlreadyExists"), -EEXIST);
    assert_int_equal(kube_status_code(409, "Conflict"), -EBUSY);
    assert_int_equal(kube_status_code(410, "Gone"), -ESTALE);
    assert_int_equal(kube_status_code(500, "Expired"), -ESTALE);
    assert_int_equal(kube_status_code(422, "Invalid"), -EINVAL);
    assert_int_equal(kube_status_code(429, ""), -EAGAIN);
    assert_int_equal(kube_status_code(503, NULL), -EIO);
    assert_int_equal(kube_status_code(504, NULL), -ETIMEDOUT);
    assert_int_equal(kube_status_code(403, NULL), -EPERM);
    assert_int_equal(kube_status_code(418, NULL), -EPROTO);

    struct err e;
    json_error_t je;
    json_t *st = json_loads("{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\","
                            "\"message\":\"too old resource version\"}",
                            0, &je);
    assert_int_equal(kube_status_to_err(&e, "GET", "/api/v1/pods", 410, st, NULL, 0), -ESTALE);
    assert_true(kube_err_is_gone(&e));
    assert_string_equal(e.msg, "GET /api/v1/pods: 410 Expired: too old resource version");
    json_decref(st);
    /* Not a Status: the raw text is quoted, sanitised. */
    assert_int_equal(kube_status_to_err(&e, "GET", "/x", 502, NULL, "bad\ngateway", 11), -EIO);
    assert_string_equal(e.msg, "GET /x: 502: bad gateway");
    assert_false(kube_err_is_gone(&e));
}

/* ---- round trips ------------------------------------------------------------ */

static void test_round_trips(void **state)
{
    struct fx *f = fx_new(NULL);
    fakesrv_push_json(f->srv, "GET", "/api/v1/namespaces/a/pods/p", NULL, 200,
                      "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}");
    fakesrv_push_json(f->srv, "POST", "/api/v1/namespaces/a/pods", NULL, 201,
                      "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"q\",\"uid\":\"u1\"}}");
    fakesrv_push_json(f->srv, "PUT", "/api/v1/namespaces/a/pods/q", NULL, 200,
                      "{\"metadata\":{\"resourceVersion\":\"7\"}}");
    fakesrv_push_json(f->srv, "PATCH", "/api/v1/namespaces/a/pods/q", NULL, 200,
                      "{\"metadata\":{\"labels\":{\"x\":\"1\"}}}");
    fakesrv_push_json(f->srv, "DELETE", "/api/v1/namespaces/a/pods/q", NULL, 200,
                      "{\"kind\":\"Status\",\"status\":\"Success\"}");

    do_req(f, "GET", "/api/v1/namespaces/a/pods/p", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    do_req(f, "POST", "/api/v1/namespaces/a/pods", NULL, "{\"metadata\":{\"name\":\"q\"}}", NULL);
    fx_run(f, 2, 10);
    do_req(f, "PUT", "/api/v1/namespaces/a/pods/q", NULL, "{\"metadata\":{\"name\":\"q\"}}", NULL);
    fx_run(f, 3, 10);
    json_error_t je;
    json_t *patch = json_loads("{\"metadata\":{\"labels\":{\"x\":\"1\"}}}", 0, &je);
    struct err e;
    assert_int_equal(
        kube_client_patch(f->c, "/api/v1/namespaces/a/pods/q", NULL, patch, done_cb, f, NULL, &e),
        0);
    json_decref(patch);
    fx_run(f, 4, 10);
    assert_int_equal(
        kube_client_delete(f->c, "/api/v1/namespaces/a/pods/q", NULL, done_cb, f, NULL, &e), 0);
    fx_run(f, 5, 10);

    assert_int_equal(f->got[0].rc, 0);
    assert_int_equal(f->got[0].status, 200);
    assert_string_equal(f->got[0].body, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}");
    assert_int_equal(f->got[1].status, 201);
    assert_string_equal(f->got[1].body,
                        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"q\",\"uid\":\"u1\"}}");
    assert_string_equal(f->got[2].body, "{\"metadata\":{\"resourceVersion\":\"7\"}}");
    assert_string_equal(f->got[3].body, "{\"metadata\":{\"labels\":{\"x\":\"1\"}}}");
    assert_int_equal(f->got[4].rc, 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(f->got[i].attempts, 1);

    assert_int_equal(fakesrv_nreq(f->srv), 5);
    assert_int_equal(fakesrv_unmatched(f->srv), 0);
    struct fakesrv_req *r = fakesrv_req_get(f->srv, 0);
    assert_string_equal(r->method, "GET");
    assert_string_equal(fakesrv_req_header(r, "Authorization"), "Bearer static-token");
    assert_string_equal(fakesrv_req_header(r, "accept"), "application/json");
    assert_null(fakesrv_req_header(r, "content-type"));
    assert_string_equal(r->body, "");
    fakesrv_req_free(r);
    r = fakesrv_req_get(f->srv, 1);
    assert_string_equal(r->method, "POST");
    assert_string_equal(fakesrv_req_header(r, "Content-Type"), "application/json");
    assert_string_equal(r->body, "{\"metadata\":{\"name\":\"q\"}}");
    fakesrv_req_free(r);
    r = fakesrv_req_get(f->srv, 2);
    assert_string_equal(r->method, "PUT");
    assert_string_equal(r->body, "{\"metadata\":{\"name\":\"q\"}}");
    fakesrv_req_free(r);
    r = fakesrv_req_get(f->srv, 3);
    assert_string_equal(r->method, "PATCH");
    assert_string_equal(fakesrv_req_header(r, "Content-Type"), "application/merge-patch+json");
    assert_string_equal(r->body, "{\"metadata\":{\"labels\":{\"x\":\"1\"}}}");
    fakesrv_req_free(r);
    r = fakesrv_req_get(f->srv, 4);
    assert_string_equal(r->method, "DELETE");
    assert_string_equal(r->path, "/api/v1/namespaces/a/pods/q");
    fakesrv_req_free(r);
    assert_int_equal(f->hook_calls, 5);
    assert_int_equal(f->hook_codes[1], 201);
    fx_free(f);
}

/* A server URL with a path (an API server behind a path-routing proxy): the path goes before
 * every request's, and the query stays as sent. */
static void test_server_path_prefix(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    free(f->cfg->server);
    f->cfg->server = xasprintf("%s/k8s/clusters/c1/", fakesrv_url(f->srv));
    fx_client(f, NULL);
    fakesrv_push_json(f->srv, "GET", "/k8s/clusters/c1/api/v1/namespaces/a/pods", NULL, 200,
                      "{\"kind\":\"PodList\",\"items\":[]}");
    const char *q[] = {"labelSelector", "a=b", NULL};
    do_req(f, "GET", "/api/v1/namespaces/a/pods", q, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].status, 200);
    struct fakesrv_req *r = fakesrv_req_get(f->srv, 0);
    assert_string_equal(r->path, "/k8s/clusters/c1/api/v1/namespaces/a/pods");
    assert_string_equal(r->query, "labelSelector=a%3Db");
    fakesrv_req_free(r);
    fx_free(f);
}

/* Through a plain http:// proxy a request names the whole URL (absolute form): the fake server
 * stands in for the proxy and records the target as received. */
static void test_http_proxy_whole_url(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    /* the machine's own no_proxy (libcurl reads it before NO_PROXY) must not bypass it */
    static const char *const vars[] = {"http_proxy", "no_proxy", "NO_PROXY"};
    char *saved[3];
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? xstrdup(v) : NULL;
    }
    setenv("http_proxy", fakesrv_url(f->srv), 1);
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    fx_client(f, NULL);
    fakesrv_push_json(f->srv, "GET", NULL, NULL, 200, "{\"kind\":\"Pod\"}");
    do_req(f, "GET", "/api/v1/namespaces/a/pods/p", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    for (int i = 0; i < 3; i++) {
        if (saved[i])
            setenv(vars[i], saved[i], 1);
        else
            unsetenv(vars[i]);
        free(saved[i]);
    }
    struct fakesrv_req *r = fakesrv_req_get(f->srv, 0);
    char *want = xasprintf("%s/api/v1/namespaces/a/pods/p", fakesrv_url(f->srv));
    assert_string_equal(r->path, want);
    free(want);
    fakesrv_req_free(r);
    fx_free(f);
}

static void test_patch_content_types(void **state)
{
    struct fx *f = fx_new(NULL);
    const char *cts[] = {KUBE_CT_JSON_PATCH, KUBE_CT_STRATEGIC_PATCH, KUBE_CT_MERGE_PATCH};
    for (int i = 0; i < 3; i++) {
        fakesrv_push_json(f->srv, "PATCH", "/x", NULL, 200, "{}");
        do_req(f, "PATCH", "/x", NULL, i == 0 ? "[{\"op\":\"remove\",\"path\":\"/a\"}]" : "{}",
               cts[i]);
    }
    fx_run(f, 3, 10);
    for (int i = 0; i < 3; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, (size_t)i);
        assert_non_null(r);
        /* Requests can complete in any order; find the one with this content type. */
        bool found = false;
        for (int j = 0; j < 3; j++)
            found |= !strcmp(fakesrv_req_header(r, "content-type"), cts[j]);
        assert_true(found);
        fakesrv_req_free(r);
    }
    fx_free(f);
}

/* ---- Status errors ---------------------------------------------------------- */

static void test_status_errors(void **state)
{
    struct fx *f = fx_new(NULL);
    fakesrv_push_status(f->srv, "GET", "/api/v1/namespaces/a/pods/b", 404, "NotFound",
                        "pods \"b\" not found");
    fakesrv_push_status(f->srv, "POST", "/api/v1/namespaces/a/pods", 409, "AlreadyExists",
                        "pods \"q\" already exists");
    fakesrv_push_status(f->srv, "PUT", "/api/v1/namespaces/a/pods/q", 409, "Conflict",
                        "the object has been modified");
    fakesrv_push_json(
        f->srv, "POST", "/apis/batch/v1/namespaces/a/jobs", NULL, 422,
        "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Invalid\",\"code\":422,"
        "\"message\":\"Job.batch \\\"j\\\" is invalid\",\"details\":{\"causes\":["
        "{\"field\":\"spec.template\",\"message\":\"Required value\"},"
        "{\"field\":\"metadata.name\",\"message\":\"must be a DNS-1123 subdomain\"}]}}");

    do_req(f, "GET", "/api/v1/namespaces/a/pods/b", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    do_req(f, "POST", "/api/v1/namespaces/a/pods", NULL, "{}", NULL);
    fx_run(f, 2, 10);
    do_req(f, "PUT", "/api/v1/namespaces/a/pods/q", NULL, "{}", NULL);
    fx_run(f, 3, 10);
    do_req(f, "POST", "/apis/batch/v1/namespaces/a/jobs", NULL, "{}", NULL);
    fx_run(f, 4, 10);

    assert_int_equal(f->got[0].rc, -ENOENT);
    assert_int_equal(f->got[0].http_status, 404);
    assert_string_equal(f->got[0].reason, "NotFound");
    assert_string_equal(f->got[0].msg,
                        "GET /api/v1/namespaces/a/pods/b: 404 NotFound: pods \"b\" not found");
    assert_non_null(f->got[0].body); /* the Status is handed to the callback too */
    assert_int_equal(f->got[0].attempts, 1);
    assert_int_equal(f->got[1].rc, -EEXIST);
    assert_string_equal(f->got[1].reason, "AlreadyExists");
    assert_int_equal(f->got[2].rc, -EBUSY);
    assert_string_equal(f->got[2].reason, "Conflict");
    assert_true(strstr(f->got[2].msg, "PUT /api/v1/namespaces/a/pods/q: 409 Conflict") != NULL);
    assert_int_equal(f->got[3].rc, -EINVAL);
    assert_int_equal(f->got[3].http_status, 422);
    assert_string_equal(f->got[3].reason, "Invalid");
    assert_string_equal(f->got[3].msg,
                        "POST /apis/batch/v1/namespaces/a/jobs: 422 Invalid: Job.batch \"j\" is "
                        "invalid: spec.template: Required value; metadata.name: must be a "
                        "DNS-1123 subdomain");
    /* 4xx errors are not retried. */
    assert_int_equal(fakesrv_nreq(f->srv), 4);
    fx_free(f);
}

/* ---- retries ------------------------------------------------------------------ */

static void test_429_retry_after(void **state)
{
    struct fx *f = fx_new(NULL);
    const char *h[] = {"Retry-After: 1", NULL};
    struct fakesrv_resp busy = {.method = "GET",
                                .path = "/api/v1/pods",
                                .status = 429,
                                .headers = h,
                                .body = "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\","
                                        "\"code\":429,\"message\":\"slow down\"}"};
    fakesrv_push(f->srv, &busy);
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{\"items\":[]}");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, 0);
    assert_int_equal(f->got[0].attempts, 2);
    assert_int_equal(fakesrv_nreq(f->srv), 2);
    struct fakesrv_req *a = fakesrv_req_get(f->srv, 0), *b = fakesrv_req_get(f->srv, 1);
    double gap = b->t - a->t;
    fakesrv_req_free(a);
    fakesrv_req_free(b);
    /* It waited the server's 1 s (not the 20 ms backoff): on the wall clock at least that
     * (a loaded machine runs later, never sooner), and it asked for exactly that. */
    assert_true(gap >= 0.9);
    unsigned long nretry = 0;
    assert_true(kube_client_retry_waits(f->c, &nretry) == 1.0);
    assert_int_equal(nretry, 1);
    assert_int_equal(f->hook_calls, 2);
    assert_int_equal(f->hook_codes[0], 429);
    assert_int_equal(f->hook_codes[1], 200);
    fx_free(f);
}

/* A Status error response with a Retry-After header. */
static void push_status_ra(struct fakesrv *s, const char *method, const char *path, int code,
                           const char *reason, const char *retry_after, int times)
{
    const char *h[] = {retry_after, NULL};
    char *body = xasprintf("{\"kind\":\"Status\",\"code\":%d,\"reason\":\"%s\","
                           "\"message\":\"injected\"}",
                           code, reason);
    struct fakesrv_resp r = {.method = method,
                             .path = path,
                             .status = code,
                             .headers = retry_after ? h : NULL,
                             .body = body,
                             .times = times};
    fakesrv_push(s, &r);
    free(body);
}

static void test_500_retried_then_success(void **state)
{
    struct fx *f = fx_new(NULL);
    push_status_ra(f->srv, "GET", "/api/v1/nodes", 500, "InternalError", "Retry-After: 0", 1);
    push_status_ra(f->srv, "GET", "/api/v1/nodes", 503, "ServiceUnavailable", "Retry-After: 0", 1);
    fakesrv_push_json(f->srv, "GET", "/api/v1/nodes", NULL, 200, "{\"items\":[1]}");
    do_req(f, "GET", "/api/v1/nodes", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, 0);
    assert_int_equal(f->got[0].attempts, 3);
    assert_string_equal(f->got[0].body, "{\"items\":[1]}");
    assert_int_equal(fakesrv_nreq(f->srv), 3);
    fx_free(f);
}

static void test_retries_exhausted(void **state)
{
    struct fx *f = fx_new(NULL);
    struct kube_client_opts o = {.max_retries = 2, .backoff_s = 0.01};
    fx_client(f, &o);
    const char *h[] = {"Retry-After: 0", NULL};
    struct fakesrv_resp r = {.method = "PUT",
                             .path = "/x",
                             .status = 503,
                             .headers = h,
                             .times = -1,
                             .body = "{\"kind\":\"Status\",\"code\":503,"
                                     "\"reason\":\"ServiceUnavailable\",\"message\":\"down\"}"};
    fakesrv_push(f->srv, &r);
    do_req(f, "PUT", "/x", NULL, "{}", NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, -EIO);
    assert_int_equal(f->got[0].attempts, 3);
    assert_int_equal(f->got[0].http_status, 503);
    assert_string_equal(f->got[0].msg, "PUT /x: 503 ServiceUnavailable: down (after 3 attempts)");
    assert_int_equal(fakesrv_nreq(f->srv), 3);
    fx_free(f);
}

static void test_post_500_not_retried(void **state)
{
    struct fx *f = fx_new(NULL);
    fakesrv_push_status(f->srv, "POST", "/x", 500, "InternalError", "boom");
    fakesrv_push_json(f->srv, "POST", "/x", NULL, 201, "{}");
    do_req(f, "POST", "/x", NULL, "{}", NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, -EIO);
    assert_int_equal(f->got[0].attempts, 1);
    assert_int_equal(fakesrv_nreq(f->srv), 1);
    fx_free(f);
}

/* Without Retry-After a 5xx or 429 is not retried, whatever the verb: a
 * 504 may come after the write was committed (a retried PUT or DELETE would
 * come back as 409/404), and a read without the server's go-ahead is the
 * caller's to repeat. Each used to be retried (GET/PUT/DELETE 5xx, any 429). */
static void test_5xx_without_retry_after_not_retried(void **state)
{
    const char *verbs[] = {"GET", "PUT", "DELETE", "PATCH"};
    const int codes[] = {504, 500, 503, 429};
    for (size_t i = 0; i < 4; i++) {
        struct fx *f = fx_new(NULL);
        push_status_ra(f->srv, verbs[i], "/x", codes[i],
                       codes[i] == 429 ? "TooManyRequests" : "Timeout", NULL, 1);
        fakesrv_push_json(f->srv, verbs[i], "/x", NULL, 200, "{}");
        do_req(f, verbs[i], "/x", NULL, strcmp(verbs[i], "GET") ? "{}" : NULL, NULL);
        fx_run(f, 1, 10);
        assert_int_not_equal(f->got[0].rc, 0);
        assert_int_equal(f->got[0].attempts, 1);
        assert_int_equal(fakesrv_nreq(f->srv), 1);
        fx_free(f);
    }
    /* With Retry-After the server asks for it: a write is retried too. */
    struct fx *f = fx_new(NULL);
    push_status_ra(f->srv, "PUT", "/x", 429, "TooManyRequests", "Retry-After: 0", 1);
    fakesrv_push_json(f->srv, "PUT", "/x", NULL, 200, "{}");
    do_req(f, "PUT", "/x", NULL, "{}", NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, 0);
    assert_int_equal(f->got[0].attempts, 2);
    fx_free(f);
}

static void test_connection_lost_retry_rule(void **state)
{
    struct fx *f = fx_new(NULL);
    /* Headers, then the connection is cut: a GET is retried, a POST is not. */
    struct fakesrv_resp cut = {.status = 200, .end = FAKESRV_DROP};
    cut.method = "GET";
    fakesrv_push(f->srv, &cut);
    fakesrv_push_json(f->srv, "GET", "/x", NULL, 200, "{\"ok\":1}");
    cut.method = "POST";
    fakesrv_push(f->srv, &cut);
    do_req(f, "GET", "/x", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, 0);
    assert_int_equal(f->got[0].attempts, 2);
    assert_string_equal(f->got[0].body, "{\"ok\":1}");
    do_req(f, "POST", "/x", NULL, "{}", NULL);
    fx_run(f, 2, 10);
    assert_int_equal(f->got[1].rc, -ECONNRESET);
    assert_int_equal(f->got[1].attempts, 1);
    assert_int_equal(fakesrv_nreq(f->srv), 3);
    fx_free(f);
}

static void test_connect_refused(void **state)
{
    struct fx *f = fx_new(NULL);
    /* A port nobody listens on: take one from a stopped server. */
    struct fakesrv *tmp = fakesrv_start(NULL);
    free(f->cfg->server);
    f->cfg->server = xstrdup(fakesrv_url(tmp));
    fakesrv_stop(tmp);
    struct kube_client_opts o = {.max_retries = 1, .backoff_s = 0.01};
    fx_client(f, &o);
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, -ECONNREFUSED);
    assert_int_equal(f->got[0].attempts, 2);
    assert_int_equal(f->got[0].status, 0);
    assert_true(strstr(f->got[0].msg, "GET /api/v1/pods: http://127.0.0.1:") != NULL);
    assert_int_equal(f->hook_codes[0], 0);
    fx_free(f);
}

/* ---- limiter, timeout, encoding, reuse ------------------------------------------ */

static void test_many_concurrent(void **state)
{
    struct fx *f = fx_new(NULL);
    struct fakesrv_resp r = {
        .method = "GET", .path = "/q", .times = -1, .delay_s = 0.05, .body = "{\"n\":1}"};
    fakesrv_push(f->srv, &r);
    for (int i = 0; i < 100; i++)
        do_req(f, "GET", "/q", NULL, NULL, NULL);
    assert_int_equal(kube_client_pending(f->c), 100);
    fx_run(f, 100, 20);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(f->got[i].rc, 0);
        assert_string_equal(f->got[i].body, "{\"n\":1}");
    }
    assert_int_equal(kube_client_pending(f->c), 0);
    assert_int_equal(fakesrv_nreq(f->srv), 100);
    fx_free(f);
}

static void test_qps_limiter(void **state)
{
    struct fx *f = fx_new(NULL);
    struct kube_client_opts o = {.qps = 20, .burst = 1};
    fx_client(f, &o);
    struct fakesrv_resp r = {.method = "GET", .path = "/q", .times = -1, .body = "{}"};
    fakesrv_push(f->srv, &r);
    double t0 = clock_mono_s();
    for (int i = 0; i < 10; i++)
        do_req(f, "GET", "/q", NULL, NULL, NULL);
    fx_run(f, 10, 10);
    double took = clock_mono_s() - t0;
    for (int i = 0; i < 10; i++)
        assert_int_equal(f->got[i].rc, 0);
    /* 1 token at once, then one every 50 ms: 9 waits = 0.45 s. The wall clock bounds it
     * from below only: a loaded machine runs late. What the limiter asked for is bounded
     * both ways, however late the loop ran (a late wake-up finds more tokens, never more
     * than the burst of 1): one wait of at most 50 ms before each request after the first,
     * so they went out one at a time, not bunched. */
    assert_true(took >= 0.42);
    unsigned long nwaits = 0;
    double waits = kube_client_limiter_waits(f->c, &nwaits);
    assert_int_equal(nwaits, 9);
    assert_true(waits <= 0.45 + 1e-6);
    assert_true(waits > 0.0);
    fx_free(f);
}

/* Events take tokens of a bucket of their own (controller-runtime's recorder has a client of
 * its own): an Event does not wait behind the writes that used up the main bucket, and the
 * main bucket's requests do not wait behind Events. */
static void test_events_bucket(void **state)
{
    struct fx *f = fx_new(NULL);
    struct kube_client_opts o = {.qps = 4, .burst = 1};
    fx_client(f, &o);
    struct fakesrv_resp r = {.method = "GET", .path = "/q", .times = -1, .body = "{}"};
    fakesrv_push(f->srv, &r);
    struct fakesrv_resp ev = {.method = "POST", .path = "/e", .times = -1, .body = "{}"};
    fakesrv_push(f->srv, &ev);
    for (int i = 0; i < 3; i++)
        do_req(f, "GET", "/q", NULL, NULL, NULL);
    json_t *body = json_object();
    for (int i = 0; i < 2; i++) {
        struct kube_request er = {
            .method = "POST", .path = "/e", .body = body, .bucket = KUBE_BUCKET_EVENTS};
        struct err e;
        assert_int_equal(kube_client_do(f->c, &er, done_cb, f, NULL, &e), 0);
    }
    json_decref(body);
    struct kube_request bad = {.method = "GET", .path = "/q", .bucket = KUBE_BUCKETS};
    struct err e;
    assert_int_equal(kube_client_do(f->c, &bad, done_cb, f, NULL, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "no token bucket"));
    fx_run(f, 5, 10);
    for (int i = 0; i < 5; i++)
        assert_int_equal(f->got[i].rc, 0);
    /* Each bucket has one token at once, then one every 250 ms: the first GET and the first
     * Event go at once (in either order: two connections), the second Event with the second
     * GET's token time, and the last request is the third GET. With one bucket for both the
     * Events would come last, after every GET. */
    struct fakesrv_req *q[5];
    size_t first_events = 0;
    for (int i = 0; i < 5; i++) {
        q[i] = fakesrv_req_get(f->srv, (size_t)i);
        if (i < 2 && !strcmp(q[i]->path, "/e"))
            first_events++;
    }
    assert_int_equal(first_events, 1);
    assert_string_equal(q[4]->path, "/q");
    /* the GETs still spread by their bucket: two waits of 250 ms at most for the GETs and
     * one for the Events (one bucket for all would wait four times); what the limiter asked
     * for, which a loaded machine's lateness does not change */
    unsigned long nwaits = 0;
    double waits = kube_client_limiter_waits(f->c, &nwaits);
    assert_int_equal(nwaits, 3);
    assert_true(waits > 0.0 && waits <= 0.75 + 1e-6);
    for (int i = 0; i < 5; i++)
        fakesrv_req_free(q[i]);
    fx_free(f);
}

static void test_limiter_from_rest_config(void **state)
{
    struct fx *f = fx_new(NULL);
    f->cfg->qps = 10;
    f->cfg->burst = 2;
    fx_client(f, NULL);
    struct fakesrv_resp r = {.method = "GET", .path = "/q", .times = -1, .body = "{}"};
    fakesrv_push(f->srv, &r);
    double t0 = clock_mono_s();
    for (int i = 0; i < 5; i++)
        do_req(f, "GET", "/q", NULL, NULL, NULL);
    fx_run(f, 5, 10);
    /* 2 at once, then one per 100 ms: 3 waits = 0.3 s. */
    assert_true(clock_mono_s() - t0 >= 0.27);
    fx_free(f);
}

static void test_default_limiter_is_fast(void **state)
{
    struct fx *f = fx_new(NULL);
    /* Defaults are 1000 QPS / burst 1000, Kueue v0.20's (the Go tools' 5/10 is their
     * bottleneck; 200/400 capped dispatch on a real API server, docs/performance.md); a config's
     * own values win over the defaults and explicit options win over both. */
    double qps;
    int burst;
    kube_client_limits(f->c, &qps, &burst);
    assert_true(qps == KUBE_CLIENT_DEFAULT_QPS);
    assert_int_equal(burst, KUBE_CLIENT_DEFAULT_BURST);
    assert_true(KUBE_CLIENT_DEFAULT_QPS == 1000.0);
    assert_int_equal(KUBE_CLIENT_DEFAULT_BURST, 1000);
    struct fakesrv_resp r = {.method = "GET", .path = "/q", .times = -1, .body = "{}"};
    fakesrv_push(f->srv, &r);
    for (int i = 0; i < 20; i++)
        do_req(f, "GET", "/q", NULL, NULL, NULL);
    fx_run(f, 20, 10);
    for (int i = 0; i < 20; i++)
        assert_int_equal(f->got[i].rc, 0);
    fx_free(f);
}

static void test_timeout(void **state)
{
    struct fx *f = fx_new(NULL);
    struct kube_client_opts o = {.timeout_s = 0.3};
    fx_client(f, &o);
    /* The answer would come after 30 s: the call ends at its timeout, long before (the loop's
     * guard is 10 s), however busy the machine. */
    struct fakesrv_resp slow = {.method = "GET", .path = "/slow", .delay_s = 30.0, .body = "{}"};
    fakesrv_push(f->srv, &slow);
    double t0 = clock_mono_s();
    do_req(f, "GET", "/slow", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    double took = clock_mono_s() - t0;
    assert_int_equal(f->got[0].rc, -ETIMEDOUT);
    assert_int_equal(f->got[0].attempts, 1); /* timeouts are not retried */
    assert_true(took >= 0.25); /* it waited for its timeout; -ETIMEDOUT says it ended it */
    assert_true(strstr(f->got[0].msg, "GET /slow: no complete response") != NULL);
    fx_free(f);
}

static void test_query_encoding(void **state)
{
    struct fx *f = fx_new(NULL);
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{}");
    const char *q[] = {"labelSelector", "a in (x,y),!b", "fieldSelector", "spec.nodeName=n 1",
                       NULL};
    do_req(f, "GET", "/api/v1/pods", q, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, 0);
    struct fakesrv_req *r = fakesrv_req_get(f->srv, 0);
    assert_string_equal(r->path, "/api/v1/pods");
    assert_string_equal(r->query,
                        "labelSelector=a%20in%20%28x%2Cy%29%2C%21b&fieldSelector=spec.nodeName%"
                        "3Dn%201");
    fakesrv_req_free(r);
    fx_free(f);
}

static int stream_cb(void *ud, const char *data, size_t len, struct err *e)
{
    (void)data;
    (void)e;
    struct fx *f = ud;
    f->stream_max = len > f->stream_max ? len : f->stream_max;
    f->stream_total += len;
    return 0;
}

/* A stream reads with a small buffer over HTTP/1.1 (KUBE_CLIENT_STREAM_BUFFER: a watch holds
 * its handle for good); the next request on the same handle reads with libcurl's own again,
 * its large body whole. */
static void test_stream_buffer(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    size_t big = 3 * KUBE_CLIENT_STREAM_BUFFER + 100;
    char *chunk = xmalloc(big + 1);
    memset(chunk, 'x', big);
    chunk[big] = '\0';
    struct fakesrv_chunk ch = {.data = chunk};
    struct fakesrv_resp sr = {.method = "GET", .path = "/stream", .chunks = &ch, .n_chunks = 1};
    fakesrv_push(f->srv, &sr);
    struct kube_request r = {.method = "GET", .path = "/stream", .on_data = stream_cb};
    struct err e;
    assert_int_equal(kube_client_do(f->c, &r, done_cb, f, NULL, &e), 0);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, 0);
    assert_int_equal(f->stream_total, big);
    assert_true(f->stream_max <= KUBE_CLIENT_STREAM_BUFFER);
    assert_int_equal(kube_client_handles_made(f->c), 1);
    /* the same handle, a plain request: its body whole */
    char *body = xasprintf("{\"v\":\"%s\"}", chunk);
    fakesrv_push_json(f->srv, "GET", "/plain", NULL, 200, body);
    do_req(f, "GET", "/plain", NULL, NULL, NULL);
    fx_run(f, 2, 10);
    assert_int_equal(f->got[1].rc, 0);
    assert_int_equal(kube_client_handles_made(f->c), 1);
    assert_int_equal(strlen(f->got[1].body), strlen(body));
    assert_true(kube_client_largest_read(f->c) > KUBE_CLIENT_STREAM_BUFFER);
    free(body);
    free(chunk);
    fx_free(f);
}

static void test_connection_reuse(void **state)
{
    struct fx *f = fx_new(NULL);
    fakesrv_push_json(f->srv, "GET", "/a", NULL, 200, "{}");
    fakesrv_push_json(f->srv, "GET", "/b", NULL, 200, "{}");
    do_req(f, "GET", "/a", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    do_req(f, "GET", "/b", NULL, NULL, NULL);
    fx_run(f, 2, 10);
    assert_int_equal(f->got[0].new_connections, 1);
    assert_int_equal(f->got[1].new_connections, 0);
    assert_int_equal(fakesrv_connections(f->srv), 1);
    struct fakesrv_req *a = fakesrv_req_get(f->srv, 0), *b = fakesrv_req_get(f->srv, 1);
    assert_int_equal(a->conn_id, b->conn_id);
    fakesrv_req_free(a);
    fakesrv_req_free(b);
    fx_free(f);
}

/* The client's connections (this process's sockets whose peer is the fake server) carry
 * TCP_USER_TIMEOUT and keepalive (client.h). Returns how many were checked. */
static int check_client_sockets(const char *url)
{
    const char *colon = strrchr(url, ':');
    assert_non_null(colon);
    int port = (int)strtol(colon + 1, NULL, 10);
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int checked = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        int fd = (int)strtol(de->d_name, NULL, 10);
        struct sockaddr_in peer;
        socklen_t len = sizeof peer;
        if (de->d_name[0] == '.' || fd == dirfd(d) ||
            getpeername(fd, (struct sockaddr *)&peer, &len) < 0 || peer.sin_family != AF_INET ||
            ntohs(peer.sin_port) != port)
            continue;
        unsigned int ms = 0;
        int keep = 0;
        socklen_t l1 = sizeof ms, l2 = sizeof keep;
        assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, &l1), 0);
        assert_int_equal(ms, KUBE_CLIENT_TCP_USER_TIMEOUT_MS);
        assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &keep, &l2), 0);
        assert_int_equal(keep, 1);
        checked++;
    }
    closedir(d);
    return checked;
}

/* A connection is bounded when its peer vanishes without a reset: the kernel closes it after
 * KUBE_CLIENT_TCP_USER_TIMEOUT_MS of unacknowledged bytes or probes. */
static void test_connections_bounded(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fakesrv_push_json(f->srv, "GET", "/a", NULL, 200, "{}");
    do_req(f, "GET", "/a", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, 0);
    /* the connection stays open for reuse: exactly one, with the options */
    assert_int_equal(check_client_sockets(fakesrv_url(f->srv)), 1);
    fx_free(f);
}

/* Requests one after another reuse one libcurl handle, and none carries over anything of the
 * request before it: method, body, Content-Type, timeout. */
static void test_handle_reuse_starts_clean(void **state)
{
    struct fx *f = fx_new(NULL);
    fakesrv_push_json(f->srv, "POST", "/p", NULL, 201, "{}");
    fakesrv_push_json(f->srv, "DELETE", "/d", NULL, 200, "{}");
    fakesrv_push_json(f->srv, "PATCH", "/q", NULL, 200, "{}");
    fakesrv_push_json(f->srv, "GET", "/g", NULL, 200, "{}");
    fakesrv_push_json(f->srv, "POST", "/e", NULL, 201, "{}");
    do_req(f, "POST", "/p", NULL, "{\"a\":1}", NULL);
    fx_run(f, 1, 10);
    do_req(f, "DELETE", "/d", NULL, NULL, NULL); /* no body after a body */
    fx_run(f, 2, 10);
    do_req(f, "PATCH", "/q", NULL, "[{\"op\":\"remove\",\"path\":\"/a\"}]", KUBE_CT_JSON_PATCH);
    fx_run(f, 3, 10);
    do_req(f, "GET", "/g", NULL, NULL, NULL); /* GET after a custom method with a body */
    fx_run(f, 4, 10);
    do_req(f, "POST", "/e", NULL, NULL, NULL); /* a POST without body after a GET */
    fx_run(f, 5, 10);
    for (int i = 0; i < 5; i++)
        assert_int_equal(f->got[i].rc, 0);
    assert_int_equal(kube_client_handles_made(f->c), 1);

    static const struct {
        const char *method, *path, *ct, *body;
    } want[] = {
        {"POST", "/p", "application/json", "{\"a\":1}"},
        {"DELETE", "/d", NULL, ""},
        {"PATCH", "/q", KUBE_CT_JSON_PATCH, "[{\"op\":\"remove\",\"path\":\"/a\"}]"},
        {"GET", "/g", NULL, ""},
        /* libcurl's own type for an empty POST body, as on a new handle (below): not the
         * JSON patch type of the request before */
        {"POST", "/e", "application/x-www-form-urlencoded", ""},
    };
    assert_int_equal(fakesrv_nreq(f->srv), 5);
    for (size_t i = 0; i < 5; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        assert_string_equal(r->method, want[i].method);
        assert_string_equal(r->path, want[i].path);
        assert_string_equal(r->body, want[i].body);
        const char *ct = fakesrv_req_header(r, "Content-Type");
        if (want[i].ct)
            assert_string_equal(ct, want[i].ct);
        else
            assert_null(ct);
        assert_string_equal(fakesrv_req_header(r, "Authorization"), "Bearer static-token");
        fakesrv_req_free(r);
    }

    /* a timeout set for one request is gone for the next one, which has none */
    struct fakesrv_resp slow = {.method = "GET", .path = "/slow", .delay_s = 0.6, .body = "{}"};
    fakesrv_push(f->srv, &slow);
    struct kube_request quick = {.method = "GET", .path = "/slow", .timeout_s = 0.2};
    struct err e;
    assert_int_equal(kube_client_do(f->c, &quick, done_cb, f, NULL, &e), 0);
    fx_run(f, 6, 10);
    assert_int_equal(f->got[5].rc, -ETIMEDOUT);
    fakesrv_push(f->srv, &slow);
    struct kube_request patient = {.method = "GET", .path = "/slow", .timeout_s = -1};
    assert_int_equal(kube_client_do(f->c, &patient, done_cb, f, NULL, &e), 0);
    fx_run(f, 7, 10);
    assert_int_equal(f->got[6].rc, 0);
    assert_int_equal(kube_client_handles_made(f->c), 1);

    /* the empty POST on a new handle of a new client */
    fx_client(f, NULL);
    fakesrv_push_json(f->srv, "POST", "/e", NULL, 201, "{}");
    do_req(f, "POST", "/e", NULL, NULL, NULL);
    fx_run(f, 8, 10);
    assert_int_equal(kube_client_handles_made(f->c), 1);
    struct fakesrv_req *r = fakesrv_req_get(f->srv, fakesrv_nreq(f->srv) - 1);
    assert_string_equal(r->path, "/e");
    assert_string_equal(fakesrv_req_header(r, "Content-Type"), want[4].ct);
    fakesrv_req_free(r);
    fx_free(f);
}

/* Requests in flight together each have their own handle; once done, the handles are kept
 * (up to KUBE_CLIENT_IDLE_HANDLES) and the next ones create none. */
static void test_handles_kept_for_reuse(void **state)
{
    struct fx *f = fx_new(NULL);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 4; i++) {
            struct fakesrv_resp held = {
                .method = "GET", .path = "/h", .delay_s = 0.1, .body = "{}"};
            fakesrv_push(f->srv, &held);
            do_req(f, "GET", "/h", NULL, NULL, NULL);
        }
        fx_run(f, 4 * (round + 1), 10);
        assert_true(kube_client_handles_made(f->c) <= 4);
    }
    for (int i = 0; i < 8; i++)
        assert_int_equal(f->got[i].rc, 0);
    fx_free(f);
}

static void test_body_cap_and_bad_json(void **state)
{
    struct fx *f = fx_new(NULL);
    struct kube_client_opts o = {.max_body = 64};
    fx_client(f, &o);
    char big[200];
    memset(big, 'x', sizeof big - 1);
    big[0] = '"';
    big[sizeof big - 2] = '"';
    big[sizeof big - 1] = '\0';
    fakesrv_push_json(f->srv, "GET", "/big", NULL, 200, big);
    fakesrv_push_json(f->srv, "GET", "/notjson", NULL, 200, "<html>");
    do_req(f, "GET", "/big", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    do_req(f, "GET", "/notjson", NULL, NULL, NULL);
    fx_run(f, 2, 10);
    assert_int_equal(f->got[0].rc, -EFBIG);
    assert_true(strstr(f->got[0].msg, "larger than 64 bytes") != NULL);
    assert_int_equal(f->got[1].rc, -EBADMSG);
    assert_true(strstr(f->got[1].msg, "GET /notjson: 200 response is not JSON") != NULL);
    fx_free(f);
}

/* body_unused: a 2xx body is not parsed (no tree, and not-JSON is no error); an
 * error's Status body still is (reason and message). */
static void test_body_unused(void **state)
{
    struct fx *f = fx_new(NULL);
    fakesrv_push_json(f->srv, "POST", "/api/v1/namespaces/a/events", NULL, 201,
                      "{\"kind\":\"Event\",\"metadata\":{\"name\":\"e\"}}");
    fakesrv_push_json(f->srv, "POST", "/api/v1/namespaces/a/events", NULL, 201, "<html>");
    fakesrv_push_status(f->srv, "POST", "/api/v1/namespaces/a/events", 404, "NotFound",
                        "namespaces \"a\" not found");
    json_t *body = json_pack("{s:s}", "kind", "Event");
    struct kube_request r = {
        .method = "POST", .path = "/api/v1/namespaces/a/events", .body = body, .body_unused = true};
    struct err e;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kube_client_do(f->c, &r, done_cb, f, NULL, &e), 0);
        fx_run(f, i + 1, 10);
    }
    json_decref(body);
    assert_int_equal(f->got[0].rc, 0);
    assert_int_equal(f->got[0].status, 201);
    assert_null(f->got[0].body);
    assert_int_equal(f->got[1].rc, 0);
    assert_null(f->got[1].body);
    assert_int_equal(f->got[2].rc, -ENOENT);
    assert_string_equal(f->got[2].reason, "NotFound");
    assert_non_null(f->got[2].body);
    fx_free(f);
}

/* body_rv_only: a 2xx body gives its metadata.resourceVersion, the same as reading it from the
 * parsed body, and no tree; a body that is not JSON up to there fails as it did when parsed,
 * what follows it is not read; an error's Status body is still parsed. */
static void test_body_rv_only(void **state)
{
    struct fx *f = fx_new(NULL);
    const char *path = "/apis/kueue.x-k8s.io/v1beta1/namespaces/a/workloads/w/status";
    static const char *const answers[] = {
        "{\"kind\":\"Workload\",\"metadata\":{\"name\":\"w\",\"labels\":{\"resourceVersion\":"
        "\"no\"},\"resourceVersion\":\"41\\u0032\"},\"spec\":{\"metadata\":{\"resourceVersion\":"
        "\"inner\"}},\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\"}]}}",
        "{\"kind\":\"Workload\",\"metadata\":{\"name\":\"w\"}}",
        "{\"metadata\":{\"name\":w,\"resourceVersion\":\"1\"}}",
    };
    for (size_t i = 0; i < 3; i++) {
        /* the same answer twice: read as a whole first, then scanned */
        fakesrv_push_json(f->srv, "PATCH", path, NULL, 200, answers[i]);
        fakesrv_push_json(f->srv, "PATCH", path, NULL, 200, answers[i]);
    }
    fakesrv_push_status(f->srv, "PATCH", path, 409, "Conflict", "the object has been modified");
    /* scanned up to the resourceVersion: what follows it is not read */
    fakesrv_push_json(f->srv, "PATCH", path, NULL, 200,
                      "{\"metadata\":{\"resourceVersion\":\"1\",\"x\":[}} trailing");
    json_t *body = json_pack("{s:{s:s}}", "metadata", "resourceVersion", "40");
    struct kube_request r = {.method = "PATCH", .path = path, .body = body};
    struct err e;
    for (int i = 0; i < 8; i++) {
        r.body_rv_only = i % 2 == 1 || i >= 6;
        assert_int_equal(kube_client_do(f->c, &r, done_cb, f, NULL, &e), 0);
        fx_run(f, i + 1, 10);
    }
    json_decref(body);
    /* found, escapes decoded: the scan gives what the tree held */
    assert_int_equal(f->got[0].rc, 0);
    assert_non_null(f->got[0].body);
    assert_non_null(strstr(f->got[0].body, "\"resourceVersion\":\"412\""));
    assert_null(f->got[0].rv);
    assert_int_equal(f->got[1].rc, 0);
    assert_int_equal(f->got[1].status, 200);
    assert_null(f->got[1].body);
    assert_non_null(f->got[1].rv);
    assert_string_equal(f->got[1].rv, "412");
    /* absent */
    assert_int_equal(f->got[3].rc, 0);
    assert_null(f->got[3].body);
    assert_null(f->got[3].rv);
    /* not JSON: the same failure both ways */
    assert_int_equal(f->got[4].rc, -EBADMSG);
    assert_int_equal(f->got[5].rc, -EBADMSG);
    assert_true(strstr(f->got[5].msg, "200 response is not JSON") != NULL);
    assert_null(f->got[5].rv);
    /* an error's Status */
    assert_int_equal(f->got[6].rc, -EBUSY);
    assert_string_equal(f->got[6].reason, "Conflict");
    assert_non_null(f->got[6].body);
    assert_null(f->got[6].rv);
    assert_int_equal(f->got[7].rc, 0);
    assert_string_equal(f->got[7].rv, "1");
    fx_free(f);
}

/* ---- auth -------------------------------------------------------------------- */

static void write_file(const char *path, const char *s)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(s, fp);
    fclose(fp);
}

static void test_401_refreshes_token(void **state)
{
    struct fx *f = fx_new(NULL);
    char path[] = "/tmp/kks-token-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, "old-token\n");
    free(f->cfg->token);
    f->cfg->token = NULL;
    f->cfg->token_file = xstrdup(path);
    fx_client(f, NULL);

    const char *unauth = "{\"kind\":\"Status\",\"code\":401,\"reason\":\"Unauthorized\"}";
    struct fakesrv_resp slow401 = {
        .method = "GET", .path = "/api/v1/pods", .status = 401, .delay_s = 0.3, .body = unauth};
    fakesrv_push(f->srv, &slow401);
    fakesrv_push_status(f->srv, "GET", "/api/v1/pods", 401, "Unauthorized", "Unauthorized");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    /* Rotate the token while the first request waits for its answer. Same length and maybe
       the same mtime: only the 401's invalidation makes the client re-read it. */
    double t0 = clock_mono_s();
    while (fakesrv_nreq(f->srv) < 1 && clock_mono_s() - t0 < 5)
        ev_run(f->loop, EVRUN_ONCE);
    assert_int_equal(fakesrv_nreq(f->srv), 1);
    write_file(path, "new-token\n");
    fx_run(f, 1, 10);
    /* The retry also got 401: only one refresh, then the error. */
    assert_int_equal(f->got[0].rc, -EACCES);
    assert_int_equal(f->got[0].attempts, 2);
    assert_int_equal(fakesrv_nreq(f->srv), 2);
    struct fakesrv_req *a = fakesrv_req_get(f->srv, 0), *b = fakesrv_req_get(f->srv, 1);
    assert_string_equal(fakesrv_req_header(a, "authorization"), "Bearer old-token");
    assert_string_equal(fakesrv_req_header(b, "authorization"), "Bearer new-token");
    fakesrv_req_free(a);
    fakesrv_req_free(b);

    /* A 401 followed by success. */
    write_file(path, "newer-token\n");
    fakesrv_push_status(f->srv, "GET", "/api/v1/pods", 401, "Unauthorized", "Unauthorized");
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{}");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 2, 10);
    assert_int_equal(f->got[1].rc, 0);
    assert_int_equal(f->got[1].attempts, 2);
    b = fakesrv_req_get(f->srv, 3);
    assert_string_equal(fakesrv_req_header(b, "authorization"), "Bearer newer-token");
    fakesrv_req_free(b);
    unlink(path);
    fx_free(f);
}

static void test_token_error(void **state)
{
    struct fx *f = fx_new(NULL);
    free(f->cfg->token);
    f->cfg->token = NULL;
    f->cfg->token_file = xstrdup("/nonexistent/kks/token");
    fx_client(f, NULL);
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, -ENOENT);
    assert_true(strstr(f->got[0].msg, "GET /api/v1/pods: credentials") != NULL);
    assert_true(strstr(f->got[0].msg, "/nonexistent/kks/token") != NULL);
    assert_int_equal(fakesrv_nreq(f->srv), 0);
    fx_free(f);
}

/* A token longer than 16 KiB is sent whole (it used to be cut at 16383
 * bytes: an endless 401); a file over KUBE_TOKEN_FILE_MAX is a clear error.
 * The file is not looked at per request: a change is picked up at the next
 * check (here: a long interval, so only a 401 makes the client re-read). */
static void test_token_file_size_and_recheck(void **state)
{
    struct fx *f = fx_new(NULL);
    char path[] = "/tmp/kks-token-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    size_t n = 20000;
    char *tok = xmalloc(n + 2);
    for (size_t i = 0; i < n; i++)
        tok[i] = (char)('a' + i % 26);
    tok[n] = '\n';
    tok[n + 1] = '\0';
    write_file(path, tok);
    free(f->cfg->token);
    f->cfg->token = NULL;
    f->cfg->token_file = xstrdup(path);
    f->cfg->token_file_recheck_s = 3600;
    fx_client(f, NULL);
    fakesrv_push(f->srv, &(struct fakesrv_resp){
                             .method = "GET", .path = "/api/v1/pods", .body = "{}", .times = 2});
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, 0);
    struct fakesrv_req *a = fakesrv_req_get(f->srv, 0);
    const char *h = fakesrv_req_header(a, "authorization");
    assert_non_null(h);
    assert_int_equal(strlen(h), strlen("Bearer ") + n);
    assert_memory_equal(h + 7, tok, n);
    fakesrv_req_free(a);
    /* rotated, but not re-checked before the interval: the cached token */
    write_file(path, "rotated\n");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 2, 10);
    assert_int_equal(f->got[1].rc, 0);
    a = fakesrv_req_get(f->srv, 1);
    assert_int_equal(strlen(fakesrv_req_header(a, "authorization")), strlen("Bearer ") + n);
    fakesrv_req_free(a);
    /* a 401 re-reads it at once */
    fakesrv_push_status(f->srv, "GET", "/api/v1/pods", 401, "Unauthorized", "Unauthorized");
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{}");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 3, 10);
    assert_int_equal(f->got[2].rc, 0);
    a = fakesrv_req_get(f->srv, 3);
    assert_string_equal(fakesrv_req_header(a, "authorization"), "Bearer rotated");
    fakesrv_req_free(a);
    fx_free(f);
    /* Too big: an error naming the file, nothing sent. */
    f = fx_new(NULL);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    for (size_t i = 0; i <= KUBE_TOKEN_FILE_MAX / n + 1; i++)
        fwrite(tok, 1, n, fp);
    fclose(fp);
    free(f->cfg->token);
    f->cfg->token = NULL;
    f->cfg->token_file = xstrdup(path);
    fx_client(f, NULL);
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, -E2BIG);
    assert_non_null(strstr(f->got[0].msg, "larger than"));
    assert_non_null(strstr(f->got[0].msg, path));
    assert_int_equal(fakesrv_nreq(f->srv), 0);
    fx_free(f);
    free(tok);
    unlink(path);
}

struct ticks {
    const char *marker; /* exists while the plugin runs */
    int during;         /* loop turns seen while it existed */
};

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct ticks *t = w->data;
    if (access(t->marker, F_OK) == 0)
        t->during++;
}

/* An exec credential plugin runs off the loop: while a slow plugin runs,
 * timers (lease renewal, probes, watches' watchdogs) keep firing, and every
 * request waiting for it goes on with its answer. It used to run inside the
 * request's start, blocking the loop for the plugin's whole run (up to 60 s). */
static void test_exec_plugin_does_not_block_the_loop(void **state)
{
    struct fx *f = fx_new(NULL);
    char dir[] = "/tmp/kks-execc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *marker = xasprintf("%s/running", dir);
    char *cmd = xasprintf("%s/plugin", dir);
    char *count = xasprintf("%s/count", dir);
    FILE *fp = fopen(cmd, "w");
    assert_non_null(fp);
    fprintf(fp,
            "#!/bin/sh\necho x >> '%s'\ntouch '%s'\nsleep 1\nrm -f '%s'\n"
            "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
            "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"exec-tok\"}}'\n",
            count, marker, marker);
    fclose(fp);
    assert_int_equal(chmod(cmd, 0700), 0);
    free(f->cfg->token);
    f->cfg->token = NULL;
    f->cfg->exec = xcalloc(1, sizeof *f->cfg->exec);
    f->cfg->exec->command = xstrdup(cmd);
    f->cfg->exec->api_version = xstrdup("client.authentication.k8s.io/v1");
    fx_client(f, NULL);
    fakesrv_push(f->srv, &(struct fakesrv_resp){
                             .method = "GET", .path = "/api/v1/pods", .body = "{}", .times = 3});
    struct ticks t = {.marker = marker};
    ev_timer tick;
    ev_timer_init(&tick, tick_cb, 0.02, 0.02);
    tick.data = &t;
    ev_timer_start(f->loop, &tick);
    /* three requests while the credential is unknown: one plugin run */
    for (int i = 0; i < 3; i++)
        do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 3, 15);
    ev_timer_stop(f->loop, &tick);
    for (int i = 0; i < 3; i++)
        assert_int_equal(f->got[i].rc, 0);
    assert_true(t.during >= 3);
    for (size_t i = 0; i < 3; i++) {
        struct fakesrv_req *r = fakesrv_req_get(f->srv, i);
        assert_string_equal(fakesrv_req_header(r, "authorization"), "Bearer exec-tok");
        fakesrv_req_free(r);
    }
    char *runs = NULL;
    size_t n = 0;
    assert_int_equal(kfile_read(count, 4096, &runs, &n, NULL), 0);
    assert_string_equal(runs, "x\n");
    free(runs);
    fx_free(f);
    unlink(count);
    unlink(cmd);
    rmdir(dir);
    free(count);
    free(cmd);
    free(marker);
}

static void stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* A hanging plugin: bounded by exec_timeout_ms (the waiting request fails
 * with -ETIMEDOUT, the loop stays free); freeing the client while a plugin
 * runs kills it and cancels the waiting request. */
static void test_exec_plugin_timeout_and_cancel(void **state)
{
    struct fx *f = fx_new(NULL);
    char dir[] = "/tmp/kks-exech-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *cmd = xasprintf("%s/plugin", dir);
    FILE *fp = fopen(cmd, "w");
    assert_non_null(fp);
    fputs("#!/bin/sh\nsleep 30\n", fp);
    fclose(fp);
    assert_int_equal(chmod(cmd, 0700), 0);
    free(f->cfg->token);
    f->cfg->token = NULL;
    f->cfg->exec = xcalloc(1, sizeof *f->cfg->exec);
    f->cfg->exec->command = xstrdup(cmd);
    f->cfg->exec_timeout_ms = 300;
    fx_client(f, NULL);
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, -ETIMEDOUT);
    assert_non_null(strstr(f->got[0].msg, "credentials"));
    assert_int_equal(fakesrv_nreq(f->srv), 0);
    /* no timeout this time: freed while it runs */
    f->cfg->exec_timeout_ms = 60000;
    fx_client(f, NULL);
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    ev_timer stop;
    ev_timer_init(&stop, stop_cb, 0.2, 0);
    ev_timer_start(f->loop, &stop);
    ev_run(f->loop, 0);
    assert_int_equal(f->n, 1);
    kube_client_free(f->c);
    f->c = NULL;
    assert_int_equal(f->n, 2);
    assert_int_equal(f->got[1].rc, -ECANCELED);
    fx_free(f);
    unlink(cmd);
    rmdir(dir);
    free(cmd);
}

/* ---- TLS --------------------------------------------------------------------- */

static void test_tls(void **state)
{
    struct fakesrv_opts so = {.tls = true};
    struct fx *f = fx_new(&so);
    assert_true(!strncmp(fakesrv_url(f->srv), "https://127.0.0.1:", 18));
    const char *ca = fakesrv_ca_pem(f->srv);
    assert_non_null(ca);

    /* Without the CA: verification fails, with a TLS error. */
    struct kube_client_opts o = {.max_retries = -1};
    fx_client(f, &o);
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{\"items\":[]}");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, -EPROTO);
    assert_int_equal(fakesrv_nreq(f->srv), 0);

    /* With the CA from memory: verified, and the bearer token is sent. */
    f->cfg->ca_pem = xstrdup(ca);
    f->cfg->ca_len = strlen(ca);
    fx_client(f, &o);
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 2, 10);
    assert_int_equal(f->got[1].rc, 0);
    assert_string_equal(f->got[1].body, "{\"items\":[]}");
    struct fakesrv_req *r = fakesrv_req_get(f->srv, 0);
    assert_string_equal(fakesrv_req_header(r, "authorization"), "Bearer static-token");
    fakesrv_req_free(r);

    /* tls_server_name: verified against that name (in the certificate) while connecting to
       the server's address; a name the certificate does not have is refused. */
    f->cfg->tls_server_name = xstrdup("localhost");
    fx_client(f, &o);
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{\"sni\":1}");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 3, 10);
    assert_int_equal(f->got[2].rc, 0);
    assert_string_equal(f->got[2].body, "{\"sni\":1}");
    free(f->cfg->tls_server_name);
    f->cfg->tls_server_name = xstrdup("wrong.example");
    fx_client(f, &o);
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 4, 10);
    assert_int_equal(f->got[3].rc, -EPROTO);
    assert_true(strstr(f->got[3].msg, "wrong.example") != NULL);
    free(f->cfg->tls_server_name);
    f->cfg->tls_server_name = NULL;

    /* insecure_skip_tls_verify without a CA also connects. */
    free(f->cfg->ca_pem);
    f->cfg->ca_pem = NULL;
    f->cfg->ca_len = 0;
    f->cfg->insecure_skip_tls_verify = true;
    fx_client(f, &o);
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{}");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 5, 10);
    assert_int_equal(f->got[4].rc, 0);
    fx_free(f);
}

/* A TLS server that asks for client certificates, its CA trusted, no token. */
static struct fx *fx_tls_certs(void)
{
    struct fakesrv_opts so = {.tls = true, .client_certs = true};
    struct fx *f = fx_new(&so);
    const char *ca = fakesrv_ca_pem(f->srv);
    f->cfg->ca_pem = xstrdup(ca);
    f->cfg->ca_len = strlen(ca);
    free(f->cfg->token);
    f->cfg->token = NULL;
    return f;
}

static void test_tls_client_cert(void **state)
{
    struct fx *f = fx_tls_certs();
    /* No client certificate: the server sees none. */
    fx_client(f, NULL);
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{}");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->got[0].rc, 0);
    struct fakesrv_req *r = fakesrv_req_get(f->srv, 0);
    assert_null(r->client_cn);
    assert_null(fakesrv_req_header(r, "authorization"));
    fakesrv_req_free(r);

    /* Client certificate and key from memory blobs. */
    const char *cert = fakesrv_client_cert_pem(f->srv), *key = fakesrv_client_key_pem(f->srv);
    f->cfg->cert_pem = xstrdup(cert);
    f->cfg->cert_len = strlen(cert);
    f->cfg->key_pem = xstrdup(key);
    f->cfg->key_len = strlen(key);
    fx_client(f, NULL);
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{}");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 2, 10);
    assert_int_equal(f->got[1].rc, 0);
    r = fakesrv_req_get(f->srv, 1);
    assert_non_null(r->client_cn);
    assert_string_equal(r->client_cn, "fakesrv-client");
    fakesrv_req_free(r);
    fx_free(f);
}

/* The kubeconfig's certificate and key are read once and presented on every connection: three
 * requests at once over HTTP/1.1 open three, and the server sees the client on each. */
static void test_tls_client_cert_read_once(void **state)
{
    struct fx *f = fx_tls_certs();
    const char *cert = fakesrv_client_cert_pem(f->srv), *key = fakesrv_client_key_pem(f->srv);
    f->cfg->cert_pem = xstrdup(cert);
    f->cfg->cert_len = strlen(cert);
    f->cfg->key_pem = xstrdup(key);
    f->cfg->key_len = strlen(key);
    struct kube_client_opts o = {.http1_only = true};
    fx_client(f, &o);
    assert_true(kube_client_creds_read_once(f->c));
    struct fakesrv_resp slow = {
        .method = "GET", .path = "/api/v1/pods", .times = 3, .delay_s = 0.3, .body = "{}"};
    fakesrv_push(f->srv, &slow);
    for (int i = 0; i < 3; i++)
        do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 3, 10);
    assert_int_equal(fakesrv_connections(f->srv), 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(f->got[i].rc, 0);
        struct fakesrv_req *r = fakesrv_req_get(f->srv, (size_t)i);
        assert_non_null(r->client_cn);
        assert_string_equal(r->client_cn, "fakesrv-client");
        fakesrv_req_free(r);
    }
    /* With an https:// proxy set the certificate goes to libcurl per connection: its TLS-context
     * hook would run for the proxy's handshake too. An http:// proxy changes nothing. */
    setenv("HTTPS_PROXY", "https://proxy.example:3128", 1);
    fx_client(f, &o);
    assert_false(kube_client_creds_read_once(f->c));
    setenv("HTTPS_PROXY", "http://proxy.example:3128", 1);
    fx_client(f, &o);
    assert_true(kube_client_creds_read_once(f->c));
    unsetenv("HTTPS_PROXY");
    /* A key that does not read is not read ahead: libcurl refuses it itself. */
    free(f->cfg->key_pem);
    f->cfg->key_pem = xstrdup("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
    f->cfg->key_len = strlen(f->cfg->key_pem);
    fx_client(f, &o);
    assert_false(kube_client_creds_read_once(f->c));
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{}");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 4, 10);
    assert_int_not_equal(f->got[3].rc, 0);
    fx_free(f);
}

/* An exec plugin's client certificate arrives after a request was made without one (a 401
 * re-runs the plugin): the retry, on the handle of the first attempt, presents it. */
static void test_exec_cert_on_reused_handle(void **state)
{
    struct fx *f = fx_tls_certs();
    char dir[] = "/tmp/kks-execcert-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *cred1 = xasprintf("%s/cred1.json", dir), *cred2 = xasprintf("%s/cred2.json", dir);
    char *ran = xasprintf("%s/ran", dir), *cmd = xasprintf("%s/plugin", dir);
    json_t *st = json_pack("{s:s}", "token", "exec-tok");
    json_t *doc = json_pack("{s:s, s:s, s:o}", "apiVersion", "client.authentication.k8s.io/v1",
                            "kind", "ExecCredential", "status", st);
    assert_int_equal(json_dump_file(doc, cred1, 0), 0);
    json_object_set_new(st, "clientCertificateData", json_string(fakesrv_client_cert_pem(f->srv)));
    json_object_set_new(st, "clientKeyData", json_string(fakesrv_client_key_pem(f->srv)));
    assert_int_equal(json_dump_file(doc, cred2, 0), 0);
    json_decref(doc);
    char *script = xasprintf("#!/bin/sh\nif [ -e '%s' ]; then cat '%s'; else touch '%s'; "
                             "cat '%s'; fi\n",
                             ran, cred2, ran, cred1);
    write_file(cmd, script);
    free(script);
    assert_int_equal(chmod(cmd, 0700), 0);
    f->cfg->exec = xcalloc(1, sizeof *f->cfg->exec);
    f->cfg->exec->command = xstrdup(cmd);
    f->cfg->exec->api_version = xstrdup("client.authentication.k8s.io/v1");
    fx_client(f, NULL);
    fakesrv_push_status(f->srv, "GET", "/api/v1/pods", 401, "Unauthorized", "Unauthorized");
    fakesrv_push_json(f->srv, "GET", "/api/v1/pods", NULL, 200, "{}");
    do_req(f, "GET", "/api/v1/pods", NULL, NULL, NULL);
    fx_run(f, 1, 15);
    assert_int_equal(f->got[0].rc, 0);
    assert_int_equal(f->got[0].attempts, 2);
    assert_int_equal(kube_client_handles_made(f->c), 1);
    assert_int_equal(fakesrv_nreq(f->srv), 2);
    struct fakesrv_req *r = fakesrv_req_get(f->srv, 0);
    assert_null(r->client_cn);
    fakesrv_req_free(r);
    r = fakesrv_req_get(f->srv, 1);
    assert_non_null(r->client_cn);
    assert_string_equal(r->client_cn, "fakesrv-client");
    fakesrv_req_free(r);
    fx_free(f);
    unlink(cred1);
    unlink(cred2);
    unlink(ran);
    unlink(cmd);
    rmdir(dir);
    free(cred1);
    free(cred2);
    free(ran);
    free(cmd);
}

static void test_insecure_warns_once(void **state)
{
    struct fakesrv_opts so = {.tls = true};
    struct fx *f = fx_new(&so);
    char *out = NULL;
    size_t outlen = 0;
    FILE *mem = open_memstream(&out, &outlen);
    struct logger lg;
    log_init(&lg, mem, 0, LOG_FMT_TEXT);
    f->cfg->insecure_skip_tls_verify = true;
    struct kube_client *c = NULL;
    struct err e;
    assert_int_equal(kube_client_new(f->loop, f->cfg, NULL, &lg, &c, &e), 0);
    kube_client_free(f->c);
    f->c = c;
    for (int i = 0; i < 3; i++) {
        fakesrv_push_json(f->srv, "GET", "/x", NULL, 200, "{}");
        do_req(f, "GET", "/x", NULL, NULL, NULL);
    }
    fx_run(f, 3, 10);
    for (int i = 0; i < 3; i++)
        assert_int_equal(f->got[i].rc, 0);
    kube_client_free(f->c);
    f->c = NULL;
    fclose(mem);
    const char *w = strstr(out, "TLS verification is disabled");
    assert_non_null(w);
    assert_null(strstr(w + 1, "TLS verification is disabled"));
    assert_non_null(strstr(out, "level=warn"));
    assert_null(strstr(out, "static-token")); /* never log tokens */
    free(out);
    fx_free(f);
}

/* ---- cancel and shutdown ------------------------------------------------------ */

static void test_cancel(void **state)
{
    struct fx *f = fx_new(NULL);
    struct fakesrv_resp slow = {.method = "GET", .path = "/slow", .delay_s = 1.0, .body = "{}"};
    fakesrv_push(f->srv, &slow);
    fakesrv_push_json(f->srv, "GET", "/fast", NULL, 200, "{\"ok\":true}");
    struct kube_call *call = NULL;
    struct kube_request r = {.method = "GET", .path = "/slow"};
    struct err e;
    assert_int_equal(kube_client_do(f->c, &r, done_cb, f, &call, &e), 0);
    assert_non_null(call);
    assert_int_equal(kube_client_pending(f->c), 1);
    /* Cancel while queued: nothing reaches the server. */
    kube_call_cancel(call);
    assert_int_equal(kube_client_pending(f->c), 0);

    /* Cancel in flight: the server sees the request, the callback never runs. */
    assert_int_equal(kube_client_do(f->c, &r, done_cb, f, &call, &e), 0);
    double t0 = clock_mono_s();
    while (fakesrv_nreq(f->srv) < 1 && clock_mono_s() - t0 < 5)
        ev_run(f->loop, EVRUN_ONCE | EVRUN_NOWAIT);
    assert_int_equal(fakesrv_nreq(f->srv), 1);
    kube_call_cancel(call);
    assert_int_equal(kube_client_pending(f->c), 0);
    /* The client keeps working. */
    do_req(f, "GET", "/fast", NULL, NULL, NULL);
    fx_run(f, 1, 10);
    assert_int_equal(f->n, 1);
    assert_string_equal(f->got[0].body, "{\"ok\":true}");
    fx_free(f);
}

static void resubmit_cb(void *ud, const struct kube_result *r)
{
    struct fx *f = ud;
    done_cb(ud, r);
    /* Submitting during shutdown is refused, not crashing. */
    struct err e;
    struct kube_request req = {.method = "GET", .path = "/again"};
    assert_int_equal(kube_client_do(f->c, &req, done_cb, f, NULL, &e), -ESHUTDOWN);
}

static void test_free_cancels_pending(void **state)
{
    struct fx *f = fx_new(NULL);
    struct fakesrv_resp slow = {.method = "GET", .path = "/slow", .delay_s = 0.5, .body = "{}"};
    fakesrv_push(f->srv, &slow);
    struct kube_request r = {.method = "GET", .path = "/slow"};
    struct err e;
    assert_int_equal(kube_client_do(f->c, &r, resubmit_cb, f, NULL, &e), 0);
    /* Let it get in flight. */
    double t0 = clock_mono_s();
    while (fakesrv_nreq(f->srv) < 1 && clock_mono_s() - t0 < 5)
        ev_run(f->loop, EVRUN_ONCE | EVRUN_NOWAIT);
    assert_int_equal(kube_client_do(f->c, &r, resubmit_cb, f, NULL, &e), 0); /* queued */
    kube_client_free(f->c);
    f->c = NULL;
    assert_int_equal(f->n, 2);
    assert_int_equal(f->got[0].rc, -ECANCELED);
    assert_int_equal(f->got[1].rc, -ECANCELED);
    assert_true(strstr(f->got[0].msg, "shutting down") != NULL);
    fx_free(f);
}

static void test_bad_requests(void **state)
{
    struct fx *f = fx_new(NULL);
    struct err e;
    struct kube_request r = {.method = "BREW", .path = "/x"};
    assert_int_equal(kube_client_do(f->c, &r, done_cb, f, NULL, &e), -EINVAL);
    r.method = "GET";
    r.path = "api/v1";
    assert_int_equal(kube_client_do(f->c, &r, done_cb, f, NULL, &e), -EINVAL);
    assert_true(strstr(e.msg, "must start with '/'") != NULL);
    assert_int_equal(kube_client_pending(f->c), 0);

    struct kube_rest_config *bad = kube_rest_config_new();
    struct kube_client *c = NULL;
    assert_int_equal(kube_client_new(f->loop, bad, NULL, NULL, &c, &e), -EINVAL);
    assert_null(c);
    bad->server = xstrdup("ftp://x");
    assert_int_equal(kube_client_new(f->loop, bad, NULL, NULL, &c, &e), -EINVAL);
    kube_rest_config_free(bad);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_and_query),
        cmocka_unit_test(test_status_codes),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_server_path_prefix),
        cmocka_unit_test(test_http_proxy_whole_url),
        cmocka_unit_test(test_patch_content_types),
        cmocka_unit_test(test_status_errors),
        cmocka_unit_test(test_429_retry_after),
        cmocka_unit_test(test_500_retried_then_success),
        cmocka_unit_test(test_retries_exhausted),
        cmocka_unit_test(test_post_500_not_retried),
        cmocka_unit_test(test_5xx_without_retry_after_not_retried),
        cmocka_unit_test(test_connection_lost_retry_rule),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_many_concurrent),
        cmocka_unit_test(test_qps_limiter),
        cmocka_unit_test(test_events_bucket),
        cmocka_unit_test(test_limiter_from_rest_config),
        cmocka_unit_test(test_default_limiter_is_fast),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_query_encoding),
        cmocka_unit_test(test_stream_buffer),
        cmocka_unit_test(test_connection_reuse),
        cmocka_unit_test(test_connections_bounded),
        cmocka_unit_test(test_handle_reuse_starts_clean),
        cmocka_unit_test(test_handles_kept_for_reuse),
        cmocka_unit_test(test_body_cap_and_bad_json),
        cmocka_unit_test(test_body_unused),
        cmocka_unit_test(test_body_rv_only),
        cmocka_unit_test(test_401_refreshes_token),
        cmocka_unit_test(test_token_file_size_and_recheck),
        cmocka_unit_test(test_exec_plugin_does_not_block_the_loop),
        cmocka_unit_test(test_exec_plugin_timeout_and_cancel),
        cmocka_unit_test(test_token_error),
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_tls_client_cert),
        cmocka_unit_test(test_tls_client_cert_read_once),
        cmocka_unit_test(test_exec_cert_on_reused_handle),
        cmocka_unit_test(test_insecure_warns_once),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_free_cancels_pending),
        cmocka_unit_test(test_bad_requests),
    };
    return cmocka_run_group_tests_name("kube_client", tests, NULL, NULL);
}
