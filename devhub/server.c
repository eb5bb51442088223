#include "devhub/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devhub/faults.h"
#include "devhub/kstatus.h"
#include "devhub/route.h"
#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"

#define MAX_QUERY 32

/* How long to wait before running MHD again when it asks for an immediate run but no
 * connection can make progress (see can_progress): its epoll mode keeps a connection whose
 * TLS handshake waits for the client in its ready list, so MHD_get_timeout says 0 until the
 * client answers, and a loop trusting it spins a core (docs/devhub.md "TLS handshakes"). The
 * epoll fd wakes the loop as soon as data comes; this only bounds a case the check misses. */
#define SPIN_BACKOFF_S 0.005

struct peer;

struct conn {
    struct srv *s;
    struct MHD_Connection *mc;
    struct buf body;
    bool too_big;
    bool suspended;
    bool delayed;
    bool responding;   /* its whole request came: a response is queued or being sent */
    struct peer *peer; /* its connection's (NULL once the connection closed) */
    struct hub_watch *watch;
    struct conn *next, *prev; /* suspended / delayed connections */
    ev_timer delay;
};

struct srv {
    struct ev_loop *loop;
    struct hub *hub;
    const struct logger *lg;
    struct MHD_Daemon *d;
    ev_io io;
    ev_timer run_timer;
    int port;
    char *token;
    bool stopping;
    struct conn *conns; /* connections with a watch */
    struct peer *peers; /* every open connection */
    struct pollfd *pfd; /* can_progress's scratch, npeers long */
    size_t npeers, cap_pfd;
    struct faults *faults;
    struct faults_rng rng;
};

static void run_mhd(struct srv *s);
static bool can_progress(struct srv *s);

static void arm(struct srv *s)
{
    MHD_UNSIGNED_LONG_LONG to = 0;
    double after = 1.0;
    if (MHD_get_timeout(s->d, &to) == MHD_YES)
        after = (double)to / 1000.0;
    if (after > 1.0)
        after = 1.0;
    if (after == 0 && !can_progress(s))
        after = SPIN_BACKOFF_S;
    ev_timer_stop(s->loop, &s->run_timer);
    ev_timer_set(&s->run_timer, after, 0);
    ev_timer_start(s->loop, &s->run_timer);
}

static void run_mhd(struct srv *s)
{
    MHD_run(s->d);
    arm(s);
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    run_mhd(w->data);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    run_mhd(w->data);
}

static void kick(struct srv *s)
{
    ev_timer_stop(s->loop, &s->run_timer);
    ev_timer_set(&s->run_timer, 0, 0);
    ev_timer_start(s->loop, &s->run_timer);
}

/* warnings: NULL or newline-separated `Warning` header values (borrowed). */
static enum MHD_Result send_body(struct MHD_Connection *mc, int code, char *body, const char *ctype,
                                 const char *warnings)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", ctype);
    MHD_add_response_header(r, "Cache-Control", "no-cache, private");
    for (const char *w = warnings; w && *w;) {
        const char *nl = strchr(w, '\n');
        size_t n = nl ? (size_t)(nl - w) : strlen(w);
        char *one = xasprintf("%.*s", (int)n, w);
        MHD_add_response_header(r, "Warning", one);
        free(one);
        w += n + (nl ? 1 : 0);
    }
    enum MHD_Result ret = MHD_queue_response(mc, (unsigned)code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_status(struct MHD_Connection *mc, json_t *st)
{
    int code = (int)json_integer_value(json_object_get(st, "code"));
    char *body = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    return send_body(mc, code, body, "application/json", NULL);
}

static void unlink_conn(struct srv *s, struct conn *c)
{
    if (!c->prev && s->conns != c)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->next = c->prev = NULL;
}

static void link_conn(struct srv *s, struct conn *c)
{
    c->next = s->conns;
    c->prev = NULL;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
}

static void on_watch_data(void *ud)
{
    struct conn *c = ud;
    if (c->suspended) {
        c->suspended = false;
        MHD_resume_connection(c->mc);
        kick(c->s);
    }
}

static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct conn *c = cls;
    (void)pos;
    ssize_t n = hub_watch_read(c->watch, buf, max);
    if (n > 0)
        return n;
    if (n < 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    c->suspended = true;
    MHD_suspend_connection(c->mc);
    return 0;
}

/* A TLS connection's client certificate verdict, checked at its first request. Verifying
 * the chain (ECC signatures, an X.509 decode) at every request was a third of the hub
 * devhub's CPU in bench-dispatch (perf); a connection's peer certificate cannot change
 * (MHD does not renegotiate). */
struct peer {
    int verdict; /* 0: not checked yet, 1: verified, -1: none or not valid */
    char user[128];
    struct MHD_Connection *mc;
    int fd;
    struct conn *active; /* its request in progress, if any */
    struct peer *next, *prev;
};

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct srv *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        struct peer *p = xcalloc(1, sizeof(*p));
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
        p->mc = mc;
        p->fd = ci ? ci->connect_fd : -1;
        p->next = s->peers;
        if (s->peers)
            s->peers->prev = p;
        s->peers = p;
        s->npeers++;
        *socket_context = p;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct peer *p = *socket_context;
        if (!p)
            return;
        if (p->prev)
            p->prev->next = p->next;
        else
            s->peers = p->next;
        if (p->next)
            p->next->prev = p->prev;
        s->npeers--;
        if (p->active)
            p->active->peer = NULL;
        free(p);
        *socket_context = NULL;
    }
}

/*
 * Whether MHD could do anything now: a connection waiting for a request has bytes to read (or
 * hung up), TLS data is decrypted but not read, or a response is in progress with room in
 * its socket. A connection in its TLS handshake waiting for the client has none of these,
 * however often MHD asks to be run for it. Suspended connections (watches without events,
 * delayed requests) wait for their resume, which kicks the loop.
 */
static bool can_progress(struct srv *s)
{
    if (s->cap_pfd < s->npeers) {
        s->cap_pfd = s->npeers * 2;
        s->pfd = xrealloc(s->pfd, s->cap_pfd * sizeof(*s->pfd));
    }
    nfds_t n = 0;
    for (struct peer *p = s->peers; p; p = p->next) {
        if (p->fd < 0)
            return true; /* not known: trust MHD */
        if (p->active && p->active->suspended)
            continue;
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(p->mc, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        if (ci && ci->tls_session &&
            gnutls_record_check_pending((gnutls_session_t)ci->tls_session) > 0)
            return true;
        /* a connection sending a response is not read by MHD meanwhile: bytes its client
         * sent ahead (or a half-close) would say "progress" for as long as it sends */
        short ev = p->active && p->active->responding ? POLLOUT : POLLIN;
        s->pfd[n++] = (struct pollfd){.fd = p->fd, .events = ev};
    }
    return n == 0 || poll(s->pfd, n, 0) != 0;
}

/* The client certificate verified against the instance CA; user receives its CN. */
static bool cert_verify(struct MHD_Connection *mc, char *user, size_t n)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session)
        return false;
    gnutls_session_t sess = (gnutls_session_t)ci->tls_session;
    unsigned int status = 0;
    if (gnutls_certificate_verify_peers2(sess, &status) != GNUTLS_E_SUCCESS || status != 0)
        return false;
    unsigned int nc = 0;
    const gnutls_datum_t *peers = gnutls_certificate_get_peers(sess, &nc);
    if (!peers || nc == 0)
        return false;
    gnutls_x509_crt_t crt;
    if (gnutls_x509_crt_init(&crt) != GNUTLS_E_SUCCESS)
        return false;
    size_t len = n;
    if (gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) != GNUTLS_E_SUCCESS ||
        gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, user, &len) !=
            GNUTLS_E_SUCCESS)
        snprintf(user, n, "unknown");
    gnutls_x509_crt_deinit(crt);
    return true;
}

/* Verified client certificate (once per connection, struct peer)? user receives its CN. */
static bool cert_ok(struct MHD_Connection *mc, char *user, size_t n)
{
    const union MHD_ConnectionInfo *pi =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct peer *p = pi ? pi->socket_context : NULL;
    if (!p)
        return cert_verify(mc, user, n);
    if (!p->verdict)
        p->verdict = cert_verify(mc, p->user, sizeof p->user) ? 1 : -1;
    if (p->verdict < 0)
        return false;
    snprintf(user, n, "%s", p->user);
    return true;
}

static bool token_ok(struct srv *s, struct MHD_Connection *mc)
{
    if (!s->token)
        return false;
    const char *h = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Authorization");
    if (!h || strncmp(h, "Bearer ", 7))
        return false;
    const char *t = h + 7;
    size_t a = strlen(t), b = strlen(s->token);
    unsigned char diff = (unsigned char)(a != b);
    for (size_t i = 0; i < a && i < b; i++)
        diff |= (unsigned char)(t[i] ^ s->token[i]);
    return diff == 0;
}

struct qcollect {
    struct hub_kv kv[MAX_QUERY];
    size_t n;
};

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    struct qcollect *q = cls;
    (void)kind;
    if (q->n < MAX_QUERY) {
        q->kv[q->n].key = key;
        q->kv[q->n].value = value;
        q->n++;
    }
    return MHD_YES;
}

static void delay_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop;
    (void)revents;
    struct conn *c = (struct conn *)((char *)t - offsetof(struct conn, delay));
    if (c->suspended && !(c->s->faults && faults_paused(c->s->faults))) {
        c->suspended = false;
        unlink_conn(c->s, c);
        MHD_resume_connection(c->mc);
        kick(c->s);
    }
}

static bool is_write(const char *m)
{
    return !strcmp(m, "POST") || !strcmp(m, "PUT") || !strcmp(m, "PATCH") || !strcmp(m, "DELETE");
}

static enum MHD_Result send_injected(struct srv *s, struct MHD_Connection *mc, const char *url,
                                     int code)
{
    struct route rt;
    route_parse(url, &rt);
    unsigned retry = 0;
    json_t *st = faults_status_body(s->faults, code, rt.group, rt.resource, rt.name, &retry);
    if (!st)
        st = kstatus_new(500, "InternalError", "Internal error occurred: injected fault", NULL);
    char *body = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (retry) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%u", retry);
        MHD_add_response_header(r, "Retry-After", ra);
    }
    log_v(s->lg, 2, "injected fault", "path", url, "code", LOG_INT(code));
    enum MHD_Result ret = MHD_queue_response(mc, (unsigned)code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result handle_faults(struct srv *s, struct MHD_Connection *mc, const char *method,
                                     struct conn *c)
{
    if (strcmp(method, "GET")) {
        if (strcmp(method, "PUT") && strcmp(method, "POST") && strcmp(method, "PATCH"))
            return send_status(mc, kstatus_new(405, "MethodNotAllowed",
                                               "use GET, or PUT/POST/PATCH a JSON object", NULL));
        json_error_t je;
        json_t *j = json_loadb(c->body.data ? c->body.data : "", c->body.len, 0, &je);
        struct err e = {0};
        if (!json_is_object(j)) {
            json_decref(j);
            return send_status(mc, kstatus_new(400, "BadRequest",
                                               "the fault settings must be a JSON object", NULL));
        }
        int rc = faults_update_json(s->faults, j, &e);
        json_decref(j);
        if (rc)
            return send_status(mc, kstatus_new(400, "BadRequest", e.msg, NULL));
        srv_faults_changed(s);
        json_t *now = faults_to_json(s->faults);
        char *txt = json_dumps(now, JSON_COMPACT);
        log_info(s->lg, "fault settings changed", "faults", txt);
        free(txt);
        json_decref(now);
    }
    json_t *cur = faults_to_json(s->faults);
    char *body = json_dumps(cur, JSON_COMPACT);
    json_decref(cur);
    return send_body(mc, 200, body, "application/json", NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    struct srv *s = cls;
    struct conn *c = *con_cls;
    (void)version;
    if (!c) {
        c = xcalloc(1, sizeof(*c));
        c->s = s;
        c->mc = mc;
        buf_init(&c->body, HUB_MAX_BODY);
        ev_timer_init(&c->delay, delay_cb, 0, 0);
        const union MHD_ConnectionInfo *pi =
            MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        c->peer = pi ? pi->socket_context : NULL;
        if (c->peer)
            c->peer->active = c;
        *con_cls = c;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!c->too_big && buf_append(&c->body, upload, *upload_size))
            c->too_big = true;
        *upload_size = 0;
        return MHD_YES;
    }
    c->responding = true; /* every path below queues a response, or suspends */
    bool health = !strcmp(url, "/healthz") || !strcmp(url, "/readyz") || !strcmp(url, "/livez");
    char user[128] = "";
    if (!health && !cert_ok(mc, user, sizeof(user))) {
        if (!token_ok(s, mc))
            return send_status(mc, kstatus_new(401, "Unauthorized", "Unauthorized", NULL));
        snprintf(user, sizeof(user), "token");
    }
    bool admin = !strncmp(url, "/devhub/", 8);
    if (s->faults && admin && !strcmp(url, "/devhub/faults"))
        return handle_faults(s, mc, method, c);
    if (s->faults && !admin && !health && !c->delayed) {
        if (is_write(method)) {
            int code = faults_decide_write(s->faults, &s->rng);
            if (code)
                return send_injected(s, mc, url, code);
        }
        unsigned ms = faults_latency_ms(s->faults);
        if (ms > 0 || faults_paused(s->faults)) {
            c->delayed = true;
            c->suspended = true;
            link_conn(s, c);
            MHD_suspend_connection(mc);
            if (ms > 0 && !faults_paused(s->faults)) {
                ev_timer_set(&c->delay, ms / 1000.0, 0);
                ev_timer_start(s->loop, &c->delay);
            }
            return MHD_YES;
        }
    }
    if (c->too_big)
        return send_status(mc, kstatus_new(413, "RequestEntityTooLarge",
                                           "Request entity too large: limit is 3145728", NULL));
    struct qcollect q = {0};
    MHD_get_connection_values(mc, MHD_GET_ARGUMENT_KIND, collect_query, &q);
    struct hub_req req = {
        .method = method,
        .path = url,
        .query = q.kv,
        .nquery = q.n,
        .content_type = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Content-Type"),
        .accept = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Accept"),
        .body = c->body.data,
        .body_len = c->body.len,
        .user = user,
    };
    struct hub_resp resp;
    hub_handle(s->hub, &req, &resp);
    if (resp.watch) {
        c->watch = resp.watch;
        hub_watch_set_notify(c->watch, on_watch_data, c);
        link_conn(s, c);
        struct MHD_Response *r =
            MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, watch_reader, c, NULL);
        MHD_add_response_header(r, "Content-Type", "application/json");
        MHD_add_response_header(r, "Cache-Control", "no-cache, private");
        enum MHD_Result ret = MHD_queue_response(mc, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    char *body = resp.body ? resp.body : xstrdup("");
    resp.body = NULL;
    enum MHD_Result ret =
        send_body(mc, resp.code, body, resp.content_type ? resp.content_type : "application/json",
                  resp.warnings);
    hub_resp_release(&resp);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct srv *s = cls;
    struct conn *c = *con_cls;
    (void)mc;
    (void)toe;
    if (!c)
        return;
    unlink_conn(s, c);
    if (c->peer && c->peer->active == c)
        c->peer->active = NULL;
    ev_timer_stop(s->loop, &c->delay);
    if (c->watch)
        hub_watch_release(c->watch);
    buf_free(&c->body);
    free(c);
    *con_cls = NULL;
}

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
    struct srv *s = cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    log_v(s->lg, 2, "http server", "detail", msg);
}

int srv_start(struct srv **out, const struct srv_opts *o, struct err *e)
{
    struct srv *s = xcalloc(1, sizeof(*s));
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)o->port);
    *out = NULL;
    if (inet_pton(AF_INET, o->host, &sa.sin_addr) != 1) {
        free(s);
        return err_set(e, -EINVAL, "--listen: %s is not an IPv4 address", o->host);
    }
    s->loop = o->loop;
    s->hub = o->hub;
    s->lg = o->lg;
    s->token = o->token && *o->token ? xstrdup(o->token) : NULL;
    s->faults = o->faults;
    faults_rng_seed(&s->rng, o->seed);
    unsigned flags = MHD_USE_TLS | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, log_mhd, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_HTTPS_MEM_CERT, o->cert_pem,
        MHD_OPTION_HTTPS_MEM_KEY, o->key_pem, MHD_OPTION_HTTPS_MEM_TRUST, o->ca_pem,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        s, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)0, MHD_OPTION_CONNECTION_LIMIT, (unsigned)4000,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_END);
    if (!s->d) {
        free(s->token);
        free(s);
        return err_set(e, -EADDRINUSE,
                       "cannot listen on %s:%d (address in use or TLS setup failed)", o->host,
                       o->port);
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : o->port;
    di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
    ev_io_init(&s->io, io_cb, di->epoll_fd, EV_READ);
    s->io.data = s;
    ev_io_start(s->loop, &s->io);
    ev_timer_init(&s->run_timer, timer_cb, 0, 0);
    s->run_timer.data = s;
    arm(s);
    *out = s;
    return 0;
}

int srv_port(const struct srv *s)
{
    return s->port;
}

static void resume_held(struct srv *s)
{
    struct conn *c = s->conns, *next;
    for (; c; c = next) {
        next = c->next;
        if (c->delayed && c->suspended && !ev_is_active(&c->delay)) {
            c->suspended = false;
            unlink_conn(s, c);
            MHD_resume_connection(c->mc);
        }
    }
    kick(s);
}

void srv_faults_changed(struct srv *s)
{
    if (!s->faults)
        return;
    if (!faults_paused(s->faults))
        resume_held(s);
    hub_set_watch_cut(s->hub, (double)s->faults->cut_watches_every_sec);
}

void srv_stop(struct srv *s)
{
    if (!s)
        return;
    s->stopping = true;
    resume_held(s);
    hub_close_watches(s->hub);
    /* Let the resumed watch streams finish (bounded). */
    for (int i = 0; i < 50 && s->conns; i++) {
        MHD_run(s->d);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    ev_io_stop(s->loop, &s->io);
    ev_timer_stop(s->loop, &s->run_timer);
    MHD_stop_daemon(s->d);
    free(s->pfd);
    free(s->token);
    free(s);
}
