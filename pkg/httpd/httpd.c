/* httpd: libmicrohttpd on the libev loop (see httpd.h). */
#include "pkg/httpd/httpd.h"

#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pkg/util/xalloc.h"

#define TEXT_PLAIN "text/plain; charset=utf-8"

struct route {
    char *method;
    char *path;
    httpd_handler_fn fn;
    void *ud;
};

struct check {
    char *name;
    httpd_check_fn fn;
    void *ud;
};

struct checks {
    const char *endpoint; /* "healthz" / "readyz" */
    struct check *v;
    size_t n;
};

struct httpd {
    struct ev_loop *loop;
    const struct logger *lg;
    struct metrics_registry *metrics;
    char *host;
    int want_port;
    bool disabled;
    unsigned conn_timeout_s;
    unsigned max_conns;

    struct MHD_Daemon *daemon;
    int port;
    ev_io io;
    ev_timer timer;

    struct route *routes;
    size_t nroutes;
    struct checks healthz, readyz;
};

struct httpd_request {
    struct MHD_Connection *conn;
    const char *method;
    const char *path;
    const char *body;
    size_t body_len;
};

/* Per-request state kept in MHD's con_cls. */
struct reqstate {
    struct buf body;
    bool too_big;
};

/* ---- bind address ------------------------------------------------------ */

int httpd_parse_bind(const char *addr, char **host, int *port, bool *disabled, struct err *e)
{
    *host = NULL;
    *port = 0;
    *disabled = false;
    if (!addr || !*addr || strcmp(addr, "0") == 0) {
        *disabled = true;
        return 0;
    }
    const char *hs, *he, *ps;
    if (addr[0] == '[') {
        const char *rb = strchr(addr, ']');
        if (!rb || rb[1] != ':')
            return err_set(e, -EINVAL,
                           "bind address \"%s\": expected [ipv6]:port (e.g. [::1]:8080)", addr);
        hs = addr + 1;
        he = rb;
        ps = rb + 2;
    } else {
        const char *colon = strrchr(addr, ':');
        if (!colon)
            return err_set(e, -EINVAL,
                           "bind address \"%s\": missing port (use host:port, :port, or 0 to "
                           "disable)",
                           addr);
        if (memchr(addr, ':', (size_t)(colon - addr)))
            return err_set(e, -EINVAL,
                           "bind address \"%s\": too many colons (write IPv6 as [addr]:port)",
                           addr);
        hs = addr;
        he = colon;
        ps = colon + 1;
    }
    for (const char *c = hs; c < he; c++) {
        if (*c == '[' || *c == ']' || (unsigned char)*c <= ' ' || *c == '/' || *c == 0x7f)
            return err_set(e, -EINVAL, "bind address \"%s\": unexpected character in host", addr);
    }
    if (!*ps)
        return err_set(e, -EINVAL, "bind address \"%s\": missing port", addr);
    char *end = NULL;
    errno = 0;
    long p = strtol(ps, &end, 10);
    if (errno || *end || p < 0 || p > 65535 || ps[0] == '-' || ps[0] == '+')
        return err_set(e, -EINVAL, "bind address \"%s\": port \"%s\" is not a number in 0-65535",
                       addr, ps);
    *host = xstrndup(hs, (size_t)(he - hs));
    *port = (int)p;
    return 0;
}

/* ---- construction ------------------------------------------------------ */

struct httpd *httpd_new(struct ev_loop *loop, const struct httpd_config *cfg, struct err *e)
{
    char *host = NULL;
    int port = 0;
    bool disabled = false;
    if (httpd_parse_bind(cfg->bind_addr, &host, &port, &disabled, e) < 0)
        return NULL;
    struct httpd *srv = xcalloc(1, sizeof(*srv));
    srv->loop = loop;
    srv->lg = cfg->lg;
    srv->metrics = cfg->metrics;
    srv->host = host;
    srv->want_port = port;
    srv->disabled = disabled;
    srv->conn_timeout_s = cfg->connection_timeout_s ? cfg->connection_timeout_s : 30;
    srv->max_conns = cfg->max_connections ? cfg->max_connections : 64;
    srv->healthz.endpoint = "healthz";
    srv->readyz.endpoint = "readyz";
    return srv;
}

int httpd_handle(struct httpd *srv, const char *method, const char *path, httpd_handler_fn fn,
                 void *userdata)
{
    if (!path || path[0] != '/' || !method || !*method || !fn)
        return -EINVAL;
    for (size_t i = 0; i < srv->nroutes; i++) {
        struct route *r = &srv->routes[i];
        if (strcmp(r->path, path) == 0 && strcmp(r->method, method) == 0) {
            r->fn = fn;
            r->ud = userdata;
            return 0;
        }
    }
    srv->routes = xrealloc(srv->routes, (srv->nroutes + 1) * sizeof(*srv->routes));
    srv->routes[srv->nroutes++] = (struct route){xstrdup(method), xstrdup(path), fn, userdata};
    return 0;
}

static int add_check(struct checks *cs, const char *name, httpd_check_fn fn, void *ud)
{
    if (!name || !*name || strchr(name, '/') || !fn)
        return -EINVAL;
    if (strcmp(name, "ping") == 0)
        return -EEXIST;
    for (size_t i = 0; i < cs->n; i++)
        if (strcmp(cs->v[i].name, name) == 0)
            return -EEXIST;
    cs->v = xrealloc(cs->v, (cs->n + 1) * sizeof(*cs->v));
    cs->v[cs->n++] = (struct check){xstrdup(name), fn, ud};
    return 0;
}

int httpd_add_healthz_check(struct httpd *srv, const char *name, httpd_check_fn fn, void *userdata)
{
    return add_check(&srv->healthz, name, fn, userdata);
}

int httpd_add_readyz_check(struct httpd *srv, const char *name, httpd_check_fn fn, void *userdata)
{
    return add_check(&srv->readyz, name, fn, userdata);
}

/* ---- request accessors ------------------------------------------------- */

const char *httpd_request_method(const struct httpd_request *req)
{
    return req->method;
}

const char *httpd_request_path(const struct httpd_request *req)
{
    return req->path;
}

const char *httpd_request_body(const struct httpd_request *req, size_t *len)
{
    if (len)
        *len = req->body_len;
    return req->body;
}

const char *httpd_request_header(const struct httpd_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

bool httpd_request_query(const struct httpd_request *req, const char *key, const char **value)
{
    const char *v = NULL;
    if (MHD_lookup_connection_value_n(req->conn, MHD_GET_ARGUMENT_KIND, key, strlen(key), &v,
                                      NULL) != MHD_YES)
        return false;
    if (value)
        *value = v;
    return true;
}

/* ---- health checks ----------------------------------------------------- */

static int ping_check(void *ud, struct err *e)
{
    return 0;
}

struct excludes {
    const char *names[32];
    bool used[32];
    size_t n;
};

static enum MHD_Result collect_exclude(void *cls, enum MHD_ValueKind kind, const char *key,
                                       const char *value)
{
    struct excludes *ex = cls;
    if (strcmp(key, "exclude") == 0 && value && *value &&
        ex->n < sizeof(ex->names) / sizeof(ex->names[0]))
        ex->names[ex->n++] = value;
    return MHD_YES;
}

static bool excluded(struct excludes *ex, const char *name)
{
    bool hit = false;
    for (size_t i = 0; i < ex->n; i++) {
        if (strcmp(ex->names[i], name) == 0) {
            ex->used[i] = true;
            hit = true;
        }
    }
    return hit;
}

static void run_one(struct httpd *srv, const struct checks *cs, const char *name, httpd_check_fn fn,
                    void *ud, struct excludes *ex, struct buf *out, int *failed)
{
    struct err ce = {0};
    if (excluded(ex, name)) {
        buf_printf(out, "[+]%s excluded: ok\n", name);
        return;
    }
    if (fn(ud, &ce) == 0) {
        buf_printf(out, "[+]%s ok\n", name);
        return;
    }
    (*failed)++;
    /* The reason stays out of the response (probes are unauthenticated) but is logged. */
    buf_printf(out, "[-]%s failed: reason withheld\n", name);
    log_v(srv->lg, 2, "health check failed", "endpoint", cs->endpoint, "check", name, "reason",
          ce.msg);
}

static void serve_checks(struct httpd *srv, const struct checks *cs,
                         const struct httpd_request *req, struct httpd_response *resp)
{
    struct excludes ex = {0};
    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, collect_exclude, &ex);
    struct buf out;
    buf_init(&out, HTTPD_MAX_RESPONSE);
    int failed = 0;
    run_one(srv, cs, "ping", ping_check, NULL, &ex, &out, &failed);
    for (size_t i = 0; i < cs->n; i++)
        run_one(srv, cs, cs->v[i].name, cs->v[i].fn, cs->v[i].ud, &ex, &out, &failed);
    bool first = true;
    for (size_t i = 0; i < ex.n; i++) {
        if (ex.used[i])
            continue;
        buf_printf(&out, "%s\"%s\"",
                   first ? "warn: some health checks cannot be excluded: no matches for " : ",",
                   ex.names[i]);
        first = false;
    }
    if (!first)
        buf_puts(&out, "\n");
    resp->content_type = TEXT_PLAIN;
    if (failed) {
        resp->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        buf_puts(&resp->body, buf_str(&out));
        buf_printf(&resp->body, "%s check failed\n", cs->endpoint);
    } else if (!httpd_request_query(req, "verbose", NULL)) {
        buf_puts(&resp->body, "ok");
    } else {
        buf_puts(&resp->body, buf_str(&out));
        buf_printf(&resp->body, "%s check passed\n", cs->endpoint);
    }
    buf_free(&out);
}

/* /<endpoint>/<name>: 1 when `path` names a check of `cs` (response filled), else 0. */
static int serve_single_check(const struct checks *cs, const char *name,
                              struct httpd_response *resp)
{
    httpd_check_fn fn = NULL;
    void *ud = NULL;
    if (strcmp(name, "ping") == 0) {
        fn = ping_check;
    } else {
        for (size_t i = 0; i < cs->n; i++) {
            if (strcmp(cs->v[i].name, name) == 0) {
                fn = cs->v[i].fn;
                ud = cs->v[i].ud;
                break;
            }
        }
    }
    if (!fn)
        return 0;
    struct err ce = {0};
    resp->content_type = TEXT_PLAIN;
    if (fn(ud, &ce) == 0) {
        buf_puts(&resp->body, "ok");
    } else {
        resp->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        buf_printf(&resp->body, "internal server error: %s\n", ce.msg[0] ? ce.msg : "check failed");
    }
    return 1;
}

static void serve_metrics(struct httpd *srv, struct httpd_response *resp)
{
    resp->content_type = METRICS_CONTENT_TYPE;
    if (metrics_registry_write(srv->metrics, &resp->body) < 0) {
        buf_reset(&resp->body);
        resp->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        resp->content_type = TEXT_PLAIN;
        buf_puts(&resp->body, "metrics output exceeds the response size limit\n");
        log_warn(srv->lg, "metrics output exceeds the response size limit", "limit",
                 LOG_INT(HTTPD_MAX_RESPONSE));
    }
}

/* Built-in routes. Returns 1 when the path is built in (response filled or 405 allowed set). */
static int serve_builtin(struct httpd *srv, const struct httpd_request *req, bool get,
                         struct httpd_response *resp)
{
    const struct checks *cs = NULL;
    const char *sub = NULL;
    const char *p = req->path;
    if (strncmp(p, "/healthz", 8) == 0 && (p[8] == 0 || p[8] == '/')) {
        cs = &srv->healthz;
        sub = p[8] ? p + 9 : NULL;
    } else if (strncmp(p, "/readyz", 7) == 0 && (p[7] == 0 || p[7] == '/')) {
        cs = &srv->readyz;
        sub = p[7] ? p + 8 : NULL;
    } else if (!(strcmp(p, "/metrics") == 0 && srv->metrics)) {
        return 0;
    }
    if (cs && sub && *sub) {
        /* Probe the name first so that unknown checks are 404 whatever the method. */
        struct httpd_response probe = {.status = 200};
        buf_init(&probe.body, HTTPD_MAX_RESPONSE);
        int found = serve_single_check(cs, sub, get ? resp : &probe);
        buf_free(&probe.body);
        if (!found)
            return 0;
    } else if (cs && sub) {
        return 0; /* "/healthz/" */
    }
    if (!get) {
        resp->status = MHD_HTTP_METHOD_NOT_ALLOWED;
        resp->content_type = TEXT_PLAIN;
        resp->allow = xstrdup("GET, HEAD");
        buf_printf(&resp->body, "method %s not allowed on %s\n", req->method, req->path);
        return 1;
    }
    if (cs && !sub)
        serve_checks(srv, cs, req, resp);
    else if (!cs)
        serve_metrics(srv, resp);
    return 1;
}

static void dispatch(struct httpd *srv, const struct httpd_request *req,
                     struct httpd_response *resp)
{
    bool is_head = strcmp(req->method, "HEAD") == 0;
    struct buf allow;
    buf_init(&allow, 4096);
    bool path_known = false;
    for (size_t i = 0; i < srv->nroutes; i++) {
        const struct route *r = &srv->routes[i];
        if (strcmp(r->path, req->path) != 0)
            continue;
        path_known = true;
        if (strcmp(r->method, req->method) == 0 || (is_head && strcmp(r->method, "GET") == 0)) {
            buf_free(&allow);
            r->fn(req, resp, r->ud);
            return;
        }
        buf_printf(&allow, "%s%s", allow.len ? ", " : "", r->method);
        if (strcmp(r->method, "GET") == 0)
            buf_puts(&allow, ", HEAD");
    }
    bool get = is_head || strcmp(req->method, "GET") == 0;
    if (!path_known && serve_builtin(srv, req, get, resp)) {
        buf_free(&allow);
        return;
    }
    resp->content_type = TEXT_PLAIN;
    if (path_known) {
        resp->status = MHD_HTTP_METHOD_NOT_ALLOWED;
        resp->allow = buf_detach(&allow);
        buf_printf(&resp->body, "method %s not allowed on %s\n", req->method, req->path);
    } else {
        resp->status = MHD_HTTP_NOT_FOUND;
        buf_printf(&resp->body, "404 page not found: %s\n", req->path);
    }
    buf_free(&allow);
}

/* ---- MHD callbacks ----------------------------------------------------- */

static enum MHD_Result queue(struct MHD_Connection *conn, struct httpd_response *resp)
{
    if (!resp->status)
        resp->status = MHD_HTTP_OK;
    size_t len = resp->body.len;
    char *data = buf_detach(&resp->body);
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            resp->content_type ? resp->content_type : TEXT_PLAIN);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (resp->allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, resp->allow);
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)resp->status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls)
{
    struct httpd *srv = cls;
    struct reqstate *st = *con_cls;
    if (!st) {
        st = xcalloc(1, sizeof(*st));
        buf_init(&st->body, HTTPD_MAX_BODY);
        *con_cls = st;
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!st->too_big && buf_append(&st->body, upload_data, *upload_data_size) < 0) {
            st->too_big = true;
            buf_free(&st->body);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }

    struct httpd_response resp = {.status = MHD_HTTP_OK};
    buf_init(&resp.body, HTTPD_MAX_RESPONSE);
    if (st->too_big) {
        resp.status = MHD_HTTP_CONTENT_TOO_LARGE;
        buf_printf(&resp.body, "request body exceeds %d bytes\n", HTTPD_MAX_BODY);
    } else {
        struct httpd_request req = {
            .conn = conn,
            .method = method,
            .path = url,
            .body = buf_str(&st->body),
            .body_len = st->body.len,
        };
        dispatch(srv, &req, &resp);
    }
    enum MHD_Result ret = queue(conn, &resp);
    buf_free(&resp.body);
    free(resp.allow);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct reqstate *st = *con_cls;
    if (!st)
        return;
    buf_free(&st->body);
    free(st);
    *con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct httpd *srv = cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = 0;
    log_warn(srv->lg, "http server", "detail", msg);
}

/* ---- libev integration ------------------------------------------------- */

static void reschedule(struct httpd *srv)
{
    MHD_UNSIGNED_LONG_LONG to = 0;
    ev_timer_stop(srv->loop, &srv->timer);
    if (MHD_get_timeout(srv->daemon, &to) == MHD_YES) {
        ev_timer_set(&srv->timer, (double)to / 1000.0, 0.);
        ev_timer_start(srv->loop, &srv->timer);
    }
}

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
    struct httpd *srv = w->data;
    MHD_run(srv->daemon);
    reschedule(srv);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct httpd *srv = w->data;
    MHD_run(srv->daemon);
    reschedule(srv);
}

/* ---- start / stop ------------------------------------------------------ */

static int sock_err(struct err *e, int code, const char *what, const char *host, int port)
{
    char eb[128];
    const char *es = strerror_r(-code, eb, sizeof(eb));
    return err_set(e, code, "http server: %s %s:%d: %s", what, *host ? host : "(all interfaces)",
                   port, es);
}

/* Bind one address; returns the fd or a negative code. */
static int try_bind(const struct sockaddr *sa, socklen_t salen, bool dual)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (dual)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    if (bind(fd, sa, salen) < 0 || listen(fd, 128) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    return fd;
}

static int open_listener(struct httpd *srv, int *family, struct err *e)
{
    if (!*srv->host) {
        struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
                                  .sin6_port = htons((uint16_t)srv->want_port),
                                  .sin6_addr = IN6ADDR_ANY_INIT};
        int fd = try_bind((struct sockaddr *)&a6, sizeof(a6), true);
        if (fd >= 0) {
            *family = AF_INET6;
            return fd;
        }
        if (fd != -EAFNOSUPPORT && fd != -EADDRNOTAVAIL)
            return sock_err(e, fd, "listen on", srv->host, srv->want_port);
        struct sockaddr_in a4 = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)srv->want_port),
                                 .sin_addr.s_addr = htonl(INADDR_ANY)};
        fd = try_bind((struct sockaddr *)&a4, sizeof(a4), false);
        if (fd < 0)
            return sock_err(e, fd, "listen on", srv->host, srv->want_port);
        *family = AF_INET;
        return fd;
    }
    char ps[8];
    snprintf(ps, sizeof(ps), "%d", srv->want_port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
                             .ai_family = AF_UNSPEC};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(srv->host, ps, &hints, &res);
    if (gai != 0)
        return err_set(e, -EADDRNOTAVAIL, "http server: resolve bind host \"%s\": %s", srv->host,
                       gai_strerror(gai));
    int fd = -EADDRNOTAVAIL;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = try_bind(ai->ai_addr, ai->ai_addrlen, false);
        if (fd >= 0) {
            *family = ai->ai_family;
            break;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        return sock_err(e, fd, "listen on", srv->host, srv->want_port);
    return fd;
}

int httpd_start(struct httpd *srv, struct err *e)
{
    if (srv->daemon)
        return err_set(e, -EALREADY, "http server: already started");
    if (srv->disabled)
        return 0; /* the caller says so once for all its servers (mgr) */
    int family = AF_INET;
    int fd = open_listener(srv, &family, e);
    if (fd < 0)
        return fd;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        int rc = -errno;
        close(fd);
        return sock_err(e, rc, "getsockname", srv->host, srv->want_port);
    }
    int port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                        : ((struct sockaddr_in *)&ss)->sin_port);
    unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* The logger goes first: libmicrohttpd warns about (and logs to stderr) anything
     * it reports while parsing the options that precede it. */
    srv->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_access, srv, MHD_OPTION_EXTERNAL_LOGGER,
                                   on_mhd_log, srv, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                                   MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
                                   MHD_OPTION_CONNECTION_TIMEOUT, srv->conn_timeout_s,
                                   MHD_OPTION_CONNECTION_LIMIT, srv->max_conns, MHD_OPTION_END);
    if (!srv->daemon) {
        close(fd);
        return err_set(e, -EIO, "http server: libmicrohttpd failed to start on port %d", port);
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    if (!di) {
        MHD_stop_daemon(srv->daemon);
        srv->daemon = NULL;
        return err_set(e, -ENOTSUP, "http server: libmicrohttpd has no epoll support");
    }
    srv->port = port;
    ev_io_init(&srv->io, on_io, di->epoll_fd, EV_READ);
    srv->io.data = srv;
    ev_io_start(srv->loop, &srv->io);
    ev_timer_init(&srv->timer, on_timer, 0., 0.);
    srv->timer.data = srv;
    reschedule(srv);
    log_info(srv->lg, "http server listening", "address", *srv->host ? srv->host : "*", "port",
             LOG_INT(port));
    return 0;
}

int httpd_port(const struct httpd *srv)
{
    return srv && srv->daemon ? srv->port : 0;
}

void httpd_stop(struct httpd *srv)
{
    if (!srv || !srv->daemon)
        return;
    ev_io_stop(srv->loop, &srv->io);
    ev_timer_stop(srv->loop, &srv->timer);
    MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
    srv->port = 0;
}

void httpd_free(struct httpd *srv)
{
    if (!srv)
        return;
    httpd_stop(srv);
    for (size_t i = 0; i < srv->nroutes; i++) {
        free(srv->routes[i].method);
        free(srv->routes[i].path);
    }
    free(srv->routes);
    struct checks *lists[] = {&srv->healthz, &srv->readyz};
    for (size_t l = 0; l < 2; l++) {
        for (size_t i = 0; i < lists[l]->n; i++)
            free(lists[l]->v[i].name);
        free(lists[l]->v);
    }
    free(srv->host);
    free(srv);
}
