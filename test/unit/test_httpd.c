/*
 * Unit tests for pkg/httpd: the server runs on a libev loop in the test
 * thread; a helper thread issues requests with libcurl easy (one handle, so
 * keep-alive is exercised) and wakes the loop with an ev_async when done.
 * Every run has an ev_timer guard so a hang fails the test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <ev.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pkg/util/clock.h"

#include "pkg/httpd/httpd.h"
#include "pkg/metrics/metrics.h"
#include "pkg/util/xalloc.h"

struct req {
    const char *method;
    const char *path;
    const char *body; /* NULL: none */
    long status;
    char ctype[128];
    char allow[128];
    struct buf resp;
};

struct run {
    struct ev_loop *loop;
    int port;
    struct req *reqs;
    size_t n;
    ev_async done;
    ev_timer guard;
    bool timed_out;
    int curl_rc; /* first CURLcode that was not CURLE_OK */
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    buf_append(ud, p, sz * n);
    return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    struct req *r = ud;
    size_t len = sz * n;
    if (len > 7 && strncasecmp(p, "Allow: ", 7) == 0) {
        size_t v = len - 7;
        while (v && (p[7 + v - 1] == '\r' || p[7 + v - 1] == '\n'))
            v--;
        if (v >= sizeof(r->allow))
            v = sizeof(r->allow) - 1;
        memcpy(r->allow, p + 7, v);
        r->allow[v] = 0;
    }
    return len;
}

static void *client_main(void *arg)
{
    struct run *run = arg;
    CURL *c = curl_easy_init();
    char url[256];
    for (size_t i = 0; i < run->n; i++) {
        struct req *r = &run->reqs[i];
        snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", run->port, r->path);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->resp);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
        curl_easy_setopt(c, CURLOPT_NOBODY, strcmp(r->method, "HEAD") == 0 ? 1L : 0L);
        if (strcmp(r->method, "HEAD") != 0)
            curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
        else
            curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, NULL);
        if (r->body) {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(r->body));
        } else {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, NULL);
            curl_easy_setopt(c, CURLOPT_HTTPGET, strcmp(r->method, "HEAD") == 0 ? 0L : 1L);
            if (strcmp(r->method, "HEAD") != 0)
                curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
        }
        CURLcode rc = curl_easy_perform(c);
        if (rc != CURLE_OK && !run->curl_rc)
            run->curl_rc = (int)rc;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
        char *ct = NULL;
        curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
        snprintf(r->ctype, sizeof(r->ctype), "%s", ct ? ct : "");
    }
    curl_easy_cleanup(c);
    ev_async_send(run->loop, &run->done);
    return NULL;
}

static void on_done(struct ev_loop *loop, ev_async *w, int revents)
{
    ev_break(loop, EVBREAK_ALL);
}

static void on_guard(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct run *run = w->data;
    run->timed_out = true;
    ev_break(loop, EVBREAK_ALL);
}

/* Serve `srv` from `loop` while a thread performs reqs[0..n). */
static void perform(struct ev_loop *loop, struct httpd *srv, struct req *reqs, size_t n)
{
    struct run run = {.loop = loop, .port = httpd_port(srv), .reqs = reqs, .n = n};
    for (size_t i = 0; i < n; i++)
        buf_init(&reqs[i].resp, 1 << 20);
    ev_async_init(&run.done, on_done);
    ev_async_start(loop, &run.done);
    ev_timer_init(&run.guard, on_guard, 20., 0.);
    run.guard.data = &run;
    ev_timer_start(loop, &run.guard);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, client_main, &run), 0);
    ev_run(loop, 0);
    pthread_join(th, NULL);
    ev_timer_stop(loop, &run.guard);
    ev_async_stop(loop, &run.done);
    assert_false(run.timed_out);
    assert_int_equal(run.curl_rc, 0);
}

static void free_reqs(struct req *reqs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_free(&reqs[i].resp);
}

/* ---- handlers used by the tests ---------------------------------------- */

struct flag {
    bool ok;
    const char *why;
};

static int flag_check(void *ud, struct err *e)
{
    struct flag *f = ud;
    if (f->ok)
        return 0;
    return err_set(e, -EAGAIN, "%s", f->why);
}

static void echo_handler(const struct httpd_request *req, struct httpd_response *resp, void *ud)
{
    size_t len = 0;
    const char *body = httpd_request_body(req, &len);
    const char *v = NULL;
    bool has = httpd_request_query(req, "name", &v);
    const char *ua = httpd_request_header(req, "user-agent");
    resp->status = 201;
    resp->content_type = "application/json";
    buf_printf(&resp->body, "%s %s len=%zu body=%s name=%s ua=%s", httpd_request_method(req),
               httpd_request_path(req), len, body, has ? (v ? v : "(novalue)") : "(absent)",
               ua ? "set" : "unset");
    (*(int *)ud)++;
}

/* Threads in this process (entries of /proc/self/task). */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static struct ev_loop *new_loop(void)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    assert_non_null(loop);
    return loop;
}

/* ---- tests ------------------------------------------------------------- */

static void test_health_endpoints(void **state)
{
    (void)state;
    struct err e = {0};
    struct ev_loop *loop = new_loop();
    struct httpd *srv = httpd_new(loop, &(struct httpd_config){.bind_addr = "127.0.0.1:0"}, &e);
    assert_non_null(srv);
    struct flag synced = {.ok = true, .why = "informers not synced: 2 of 5"};
    struct flag leader = {.ok = true};
    assert_int_equal(httpd_add_readyz_check(srv, "informers-synced", flag_check, &synced), 0);
    assert_int_equal(httpd_add_readyz_check(srv, "leader-or-standby", flag_check, &leader), 0);
    assert_int_equal(httpd_add_readyz_check(srv, "informers-synced", flag_check, &synced), -EEXIST);
    assert_int_equal(httpd_add_readyz_check(srv, "a/b", flag_check, &synced), -EINVAL);
    assert_int_equal(httpd_port(srv), 0);
    int threads = thread_count();
    assert_int_equal(httpd_start(srv, &e), 0);
    assert_true(httpd_port(srv) > 0);
    /* MHD runs on our loop: starting it adds no thread. */
    assert_int_equal(thread_count(), threads);
    assert_int_equal(httpd_start(srv, &e), -EALREADY);

    struct req ok[] = {
        {.method = "GET", .path = "/healthz"},
        {.method = "GET", .path = "/readyz"},
        {.method = "GET", .path = "/readyz?verbose"},
        {.method = "GET", .path = "/readyz/informers-synced"},
        {.method = "HEAD", .path = "/healthz"},
    };
    perform(loop, srv, ok, 5);
    assert_int_equal(ok[0].status, 200);
    assert_string_equal(buf_str(&ok[0].resp), "ok");
    assert_string_equal(ok[0].ctype, "text/plain; charset=utf-8");
    assert_int_equal(ok[1].status, 200);
    assert_string_equal(buf_str(&ok[1].resp), "ok");
    assert_int_equal(ok[2].status, 200);
    assert_string_equal(buf_str(&ok[2].resp), "[+]ping ok\n"
                                              "[+]informers-synced ok\n"
                                              "[+]leader-or-standby ok\n"
                                              "readyz check passed\n");
    assert_int_equal(ok[3].status, 200);
    assert_string_equal(buf_str(&ok[3].resp), "ok");
    assert_int_equal(ok[4].status, 200);
    assert_string_equal(buf_str(&ok[4].resp), "");
    free_reqs(ok, 5);

    /* A failing check: 500 with the list (always verbose on failure), reason withheld. */
    synced.ok = false;
    struct req bad[] = {
        {.method = "GET", .path = "/readyz"},
        {.method = "GET", .path = "/readyz/informers-synced"},
        {.method = "GET", .path = "/readyz?exclude=informers-synced&exclude=nope&verbose"},
        {.method = "GET", .path = "/healthz"},
        {.method = "GET", .path = "/readyz/nope"},
    };
    perform(loop, srv, bad, 5);
    assert_int_equal(bad[0].status, 500);
    assert_string_equal(buf_str(&bad[0].resp), "[+]ping ok\n"
                                               "[-]informers-synced failed: reason withheld\n"
                                               "[+]leader-or-standby ok\n"
                                               "readyz check failed\n");
    assert_int_equal(bad[1].status, 500);
    assert_string_equal(buf_str(&bad[1].resp),
                        "internal server error: informers not synced: 2 of 5\n");
    assert_int_equal(bad[2].status, 200);
    assert_string_equal(buf_str(&bad[2].resp),
                        "[+]ping ok\n"
                        "[+]informers-synced excluded: ok\n"
                        "[+]leader-or-standby ok\n"
                        "warn: some health checks cannot be excluded: no matches for \"nope\"\n"
                        "readyz check passed\n");
    /* healthz has its own (empty) list: still fine. */
    assert_int_equal(bad[3].status, 200);
    assert_int_equal(bad[4].status, 404);
    free_reqs(bad, 5);

    httpd_free(srv);
    ev_loop_destroy(loop);
}

static void test_metrics_404_405_and_routes(void **state)
{
    (void)state;
    struct err e = {0};
    struct ev_loop *loop = new_loop();
    struct metrics_registry *reg = metrics_registry_new();
    struct metrics_counter *c = metrics_counter_new(reg, "demo_total", "A demo counter.", &e);
    metrics_counter_add(c, 7);
    struct httpd *srv =
        httpd_new(loop, &(struct httpd_config){.bind_addr = "127.0.0.1:0", .metrics = reg}, &e);
    assert_non_null(srv);
    int calls = 0;
    assert_int_equal(httpd_handle(srv, "POST", "/echo", echo_handler, &calls), 0);
    assert_int_equal(httpd_handle(srv, "PUT", "/echo", echo_handler, &calls), 0);
    assert_int_equal(httpd_handle(srv, "GET", "no-slash", echo_handler, &calls), -EINVAL);
    assert_int_equal(httpd_start(srv, &e), 0);

    struct req r[] = {
        {.method = "GET", .path = "/metrics"},
        {.method = "GET", .path = "/nope"},
        {.method = "POST", .path = "/metrics"},
        {.method = "POST", .path = "/echo?name=x%20y", .body = "{\"a\":1}"},
        {.method = "GET", .path = "/echo"},
        {.method = "PUT", .path = "/echo?name"},
        {.method = "DELETE", .path = "/healthz"},
        {.method = "GET", .path = "/healthz/"},
    };
    size_t n = sizeof(r) / sizeof(r[0]);
    perform(loop, srv, r, n);
    assert_int_equal(r[0].status, 200);
    assert_string_equal(r[0].ctype, "text/plain; version=0.0.4; charset=utf-8");
    assert_string_equal(buf_str(&r[0].resp), "# HELP demo_total A demo counter.\n"
                                             "# TYPE demo_total counter\n"
                                             "demo_total 7\n");
    assert_int_equal(r[1].status, 404);
    assert_int_equal(r[2].status, 405);
    assert_string_equal(r[2].allow, "GET, HEAD");
    assert_int_equal(r[3].status, 201);
    assert_string_equal(r[3].ctype, "application/json");
    assert_string_equal(buf_str(&r[3].resp), "POST /echo len=7 body={\"a\":1} name=x y ua=unset");
    assert_int_equal(r[4].status, 405);
    assert_string_equal(r[4].allow, "POST, PUT");
    assert_int_equal(r[5].status, 201);
    assert_string_equal(buf_str(&r[5].resp), "PUT /echo len=0 body= name=(novalue) ua=unset");
    assert_int_equal(r[6].status, 405);
    assert_int_equal(r[7].status, 404);
    assert_int_equal(calls, 2);
    free_reqs(r, n);

    /* Metrics change between scrapes. */
    metrics_counter_inc(c);
    struct req again[] = {{.method = "GET", .path = "/metrics"}};
    perform(loop, srv, again, 1);
    assert_non_null(strstr(buf_str(&again[0].resp), "demo_total 8\n"));
    free_reqs(again, 1);

    httpd_free(srv);
    metrics_registry_free(reg);
    ev_loop_destroy(loop);
}

static void test_large_body_and_stop(void **state)
{
    (void)state;
    struct err e = {0};
    struct ev_loop *loop = new_loop();
    struct httpd *srv = httpd_new(loop, &(struct httpd_config){.bind_addr = "127.0.0.1:0"}, &e);
    int calls = 0;
    httpd_handle(srv, "POST", "/echo", echo_handler, &calls);
    assert_int_equal(httpd_start(srv, &e), 0);
    size_t big = HTTPD_MAX_BODY + 10;
    char *body = xmalloc(big + 1);
    memset(body, 'x', big);
    body[big] = 0;
    struct req r[] = {{.method = "POST", .path = "/echo", .body = body}};
    perform(loop, srv, r, 1);
    assert_int_equal(r[0].status, 413);
    assert_int_equal(calls, 0);
    free_reqs(r, 1);
    free(body);

    /* After stop the port is closed; stop is idempotent. */
    int port = httpd_port(srv);
    httpd_stop(srv);
    httpd_stop(srv);
    assert_int_equal(httpd_port(srv), 0);
    CURL *c = curl_easy_init();
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/healthz", port);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 2L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    assert_int_equal(curl_easy_perform(c), CURLE_COULDNT_CONNECT);
    curl_easy_cleanup(c);
    httpd_free(srv);
    ev_loop_destroy(loop);
}

/* An idle client: connects, sends nothing, waits for the server to close. */
struct idle {
    struct ev_loop *loop;
    int port;
    ev_async done;
    double closed_after; /* seconds until the server closed the idle connection, < 0: never */
    long other_status;   /* a normal request made while the idle connection is open */
};

static void *idle_main(void *arg)
{
    struct idle *id = arg;
    id->closed_after = -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)id->port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    double t0 = clock_mono_s();
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
        /* Meanwhile another client is served normally (one thread, no blocking). */
        CURL *c = curl_easy_init();
        char url[64];
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/healthz", id->port);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 3L);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        struct buf sink;
        buf_init(&sink, 4096);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
        if (curl_easy_perform(c) == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &id->other_status);
        curl_easy_cleanup(c);
        buf_free(&sink);
        char b;
        if (recv(fd, &b, 1, 0) == 0)
            id->closed_after = clock_mono_s() - t0;
    }
    close(fd);
    ev_async_send(id->loop, &id->done);
    return NULL;
}

static void test_idle_connection_timeout(void **state)
{
    (void)state;
    struct err e = {0};
    struct ev_loop *loop = new_loop();
    struct httpd *srv = httpd_new(
        loop, &(struct httpd_config){.bind_addr = "127.0.0.1:0", .connection_timeout_s = 1}, &e);
    assert_int_equal(httpd_start(srv, &e), 0);
    struct idle id = {.loop = loop, .port = httpd_port(srv)};
    ev_async_init(&id.done, on_done);
    ev_async_start(loop, &id.done);
    struct run guard_run = {0};
    ev_timer guard;
    ev_timer_init(&guard, on_guard, 10., 0.);
    guard.data = &guard_run;
    ev_timer_start(loop, &guard);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, idle_main, &id), 0);
    ev_run(loop, 0);
    pthread_join(th, NULL);
    ev_timer_stop(loop, &guard);
    ev_async_stop(loop, &id.done);
    assert_false(guard_run.timed_out);
    assert_int_equal(id.other_status, 200);
    /* Closed by MHD's connection timeout, which only fires through the ev_timer. */
    assert_true(id.closed_after >= 0.9);
    assert_true(id.closed_after < 4.0);
    httpd_free(srv);
    ev_loop_destroy(loop);
}

static void test_bind_parse_and_errors(void **state)
{
    (void)state;
    struct err e = {0};
    char *host = NULL;
    int port = -1;
    bool dis = true;
    assert_int_equal(httpd_parse_bind(":8080", &host, &port, &dis, &e), 0);
    assert_string_equal(host, "");
    assert_int_equal(port, 8080);
    assert_false(dis);
    free(host);
    assert_int_equal(httpd_parse_bind("127.0.0.1:0", &host, &port, &dis, &e), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 0);
    free(host);
    assert_int_equal(httpd_parse_bind("[::1]:9443", &host, &port, &dis, &e), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 9443);
    free(host);
    assert_int_equal(httpd_parse_bind("0", &host, &port, &dis, &e), 0);
    assert_true(dis);
    assert_null(host);
    assert_int_equal(httpd_parse_bind("", &host, &port, &dis, &e), 0);
    assert_true(dis);
    const char *bad[] = {"8080",    "host:", "h:70000",   "h:-1",  "h:8x",  "::1:80",
                         "[::1]80", "[::1",  "[[::1]:80", "a]:80", "a b:80"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(httpd_parse_bind(bad[i], &host, &port, &dis, &e), -EINVAL);
        assert_null(host);
        assert_non_null(strstr(e.msg, bad[i]));
    }
    assert_null(httpd_new(NULL, &(struct httpd_config){.bind_addr = "nope"}, &e));
    assert_int_equal(e.code, -EINVAL);

    /* Disabled: start succeeds without listening. */
    struct ev_loop *loop = new_loop();
    struct httpd *off = httpd_new(loop, &(struct httpd_config){.bind_addr = "0"}, &e);
    assert_non_null(off);
    assert_int_equal(httpd_start(off, &e), 0);
    assert_int_equal(httpd_port(off), 0);
    httpd_free(off);

    /* A port in use is reported with the address. */
    struct httpd *a = httpd_new(loop, &(struct httpd_config){.bind_addr = "127.0.0.1:0"}, &e);
    assert_int_equal(httpd_start(a, &e), 0);
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", httpd_port(a));
    struct httpd *b = httpd_new(loop, &(struct httpd_config){.bind_addr = addr}, &e);
    assert_int_equal(httpd_start(b, &e), -EADDRINUSE);
    assert_non_null(strstr(e.msg, addr));
    assert_int_equal(httpd_port(b), 0);
    httpd_free(b);
    httpd_free(a);
    ev_loop_destroy(loop);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_health_endpoints),
        cmocka_unit_test(test_metrics_404_405_and_routes),
        cmocka_unit_test(test_large_body_and_stop),
        cmocka_unit_test(test_idle_connection_timeout),
        cmocka_unit_test(test_bind_parse_and_errors),
    };
    int rc = cmocka_run_group_tests_name("httpd", tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
