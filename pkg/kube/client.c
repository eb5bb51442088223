/*
 * client: asynchronous Kubernetes REST client on the libcurl multi-socket
 * API driven by libev (docs/architecture.md).
 *
 * Life of a call: kube_client_do() queues it on the rate limiter (never
 * touches libcurl, so it is safe from any callback) -> the limiter timer
 * starts an attempt (token, easy handle, curl_multi_add_handle) -> libcurl
 * reports CURLMSG_DONE -> finish_attempt() either schedules a retry (backoff
 * timer -> limiter again) or completes the call (user callback, then free).
 *
 * Re-entrancy: libcurl functions are never called from libcurl callbacks.
 * `in_curl` is set around curl_multi_socket_action(); a cancel that happens
 * then (e.g. a watch stopped from its own event callback, which runs inside
 * the write callback) only marks the call and queues it for reaping right
 * after socket_action returns; the write callback returns
 * CURL_WRITEFUNC_ERROR for a cancelled call.
 */
#include "pkg/kube/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "pkg/util/rng.h"
#include "pkg/util/clock.h"
#include "pkg/json/jdump.h"
#include "pkg/json/jscan.h"
#include "pkg/kube/exec_cred.h"
#include "pkg/kube/tlscreds.h"
#include "pkg/util/xalloc.h"

#ifndef KKS_VERSION
#define KKS_VERSION "dev"
#endif

/* A token bucket (the client's qps/burst) and the calls waiting on it. */
struct bucket {
    struct kube_client *c;
    double tokens;
    double last_refill;
    ev_timer timer;
    struct kube_call *q_head, *q_tail;
};

/* CALL_CRED: waiting for the exec credential plugin (c->cred_wait). */
enum call_state { CALL_QUEUED, CALL_BACKOFF, CALL_CRED, CALL_INFLIGHT, CALL_DONE };

struct kube_call {
    struct kube_client *c;
    struct kube_call *prev, *next; /* all live calls of the client */
    struct kube_call *qnext;       /* limiter FIFO */
    enum kube_bucket bucket;       /* the token bucket it waits on */
    struct kube_call *rnext;       /* deferred reap list */
    enum call_state state;
    bool cancelled;
    bool reap_queued;

    char *method;
    char *path; /* path + encoded query, for messages */
    /* what the request names (target_setup): the whole URL (base + path) when the client has
     * no origin, the target (prefix + path) when the server URL has a path, else NULL (the
     * target is `path` itself) */
    char *url;
    char *body;
    size_t body_len;
    char *content_type;
    double timeout_s;
    int max_retries;
    kube_data_cb on_data;
    kube_data_cb on_body; /* kube_request.on_body: a 2xx body streamed to it */
    bool body_unused;     /* kube_request.body_unused: a 2xx body is not parsed */
    bool rv_only;         /* kube_request.body_rv_only: a 2xx body is scanned, not parsed */
    char *rv;             /* what the scan found (kube_result.resource_version), or NULL */
    kube_done_cb done;
    void *ud;

    CURL *easy;
    unsigned easy_gen; /* the client's tls_gen when easy's client cert/key were set */
    struct curl_slist *hdrs;
    char errbuf[CURL_ERROR_SIZE];
    struct buf resp;
    double retry_after; /* seconds from the last response's Retry-After, < 0 none */
    bool token_sent;
    bool auth_retried;
    bool data_seen;  /* a stream delivered bytes: never retried after that */
    bool cred_ready; /* the exec plugin just answered for this attempt */
    int attempts;
    int retries;
    double t_submit;
    double t_attempt;
    ev_timer backoff;
    int abort_rc; /* set when on_data or the body cap aborted the transfer */
    struct err abort_err;
};

struct sock_rec {
    ev_io io;
    curl_socket_t fd;
    struct kube_client *c;
    struct sock_rec *prev, *next;
};

struct kube_client {
    struct ev_loop *loop;
    CURLM *multi;
    ev_timer curl_timer;
    struct kube_rest_config *cfg;
    const struct logger *lg;
    char *user_agent;
    char *base; /* URL prefix requests go to (host replaced by tls_server_name) */
    /* base's scheme://authority/ and path prefix when requests name their target themselves
     * (target_setup), else NULL */
    char *origin, *prefix;
    struct curl_slist *connect_to; /* maps tls_server_name back to the real host, or NULL */
    bool http2;             /* https:// and not opts.http1_only: offer h2 in ALPN, multiplex */
    bool h2_seen;           /* a response came over h2: the server speaks it (ALPN agreed) */
    size_t largest_read;    /* the largest piece of a (not streamed) body libcurl handed over */
    double limiter_waits_s; /* the token buckets' waits as scheduled, summed */
    unsigned long limiter_waits; /* and how many */
    double retry_waits_s;        /* the retries' waits as scheduled, summed */
    unsigned long retry_waits;   /* and how many */
    /* the kubeconfig's client certificate and key, read once (tlscreds.h), or NULL: then
     * libcurl reads them from blobs per connection (an exec plugin's, or another backend) */
    struct tlscreds *creds;

    double qps; /* <= 0: unlimited */
    double burst;
    double timeout_s;
    int max_retries;
    double backoff_s;
    double backoff_max_s;
    size_t max_body;
    kube_response_hook on_response;
    void *on_response_ud;

    struct bucket buckets[KUBE_BUCKETS];

    struct exec_cred_async *exec_run;        /* the plugin running for everyone, or NULL */
    struct kube_call *cred_head, *cred_tail; /* calls waiting for it (via qnext) */
    struct kube_call *calls;                 /* doubly linked list of live calls */
    size_t pending;
    struct kube_call *reap;
    int in_curl;
    bool shutting_down;
    struct sock_rec *socks;
    struct rng rng;

    /* Easy handles of finished attempts, kept for the next ones (curl_easy_init, the
     * options that never change and libcurl's buffers are paid once; the connections
     * live in the multi handle either way). idle_gen[i]: tls_gen of idle[i]'s cert/key. */
    CURL *idle[KUBE_CLIENT_IDLE_HANDLES];
    unsigned idle_gen[KUBE_CLIENT_IDLE_HANDLES];
    size_t n_idle;
    size_t handles_made; /* curl_easy_init calls, for the tests */
};

/* ---- small helpers ------------------------------------------------------ */

static int is_unreserved(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

static int pct_encode(struct buf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char tmp[3];
        int rc;
        if (is_unreserved(*p)) {
            rc = buf_append(out, p, 1);
        } else {
            tmp[0] = '%';
            tmp[1] = hex[*p >> 4];
            tmp[2] = hex[*p & 15];
            rc = buf_append(out, tmp, 3);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

int kube_query_append(struct buf *out, const char *const *kv)
{
    if (!kv)
        return 0;
    bool first = !(out->data && memchr(out->data, '?', out->len));
    for (size_t i = 0; kv[i]; i += 2) {
        if (!kv[i + 1])
            continue;
        int rc = buf_append(out, first ? "?" : "&", 1);
        if (rc == 0)
            rc = pct_encode(out, kv[i]);
        if (rc == 0)
            rc = buf_append(out, "=", 1);
        if (rc == 0)
            rc = pct_encode(out, kv[i + 1]);
        if (rc < 0)
            return rc;
        first = false;
    }
    return 0;
}

char *kube_path(const char *group, const char *version, const char *resource, const char *ns,
                const char *name, const char *subresource)
{
    struct buf b;
    buf_init(&b, (size_t)1 << 20);
    if (!group || !*group)
        buf_printf(&b, "/api/%s", version && *version ? version : "v1");
    else
        buf_printf(&b, "/apis/%s/%s", group, version ? version : "");
    if (ns && *ns) {
        buf_puts(&b, "/namespaces/");
        pct_encode(&b, ns);
    }
    if (resource && *resource) {
        buf_puts(&b, "/");
        buf_puts(&b, resource);
    }
    if (name && *name) {
        buf_puts(&b, "/");
        pct_encode(&b, name);
    }
    if (subresource && *subresource) {
        buf_puts(&b, "/");
        pct_encode(&b, subresource);
    }
    return buf_detach(&b);
}

int kube_status_code(int http_status, const char *reason)
{
    if (reason && (!strcmp(reason, "Expired") || !strcmp(reason, "Gone")))
        return -ESTALE;
    switch (http_status) {
    case 400:
        return -EINVAL;
    case 401:
        return -EACCES;
    case 403:
        return -EPERM;
    case 404:
        return -ENOENT;
    case 405:
        return -EOPNOTSUPP;
    case 406:
    case 415:
        return -EINVAL;
    case 409:
        return reason && !strcmp(reason, "AlreadyExists") ? -EEXIST : -EBUSY;
    case 410:
        return -ESTALE;
    case 413:
        return -E2BIG;
    case 422:
        return -EINVAL;
    case 429:
        return -EAGAIN;
    case 504:
        return -ETIMEDOUT;
    default:
        break;
    }
    if (reason && !strcmp(reason, "Timeout"))
        return -ETIMEDOUT;
    if (http_status >= 500)
        return -EIO;
    return -EPROTO;
}

static const char *default_reason(int status)
{
    switch (status) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 406:
        return "NotAcceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 500:
        return "InternalError";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return "";
    }
}

/* Copy up to max bytes of raw text, replacing control characters, for messages. */
static void sanitize(char *dst, size_t dstsz, const char *src, size_t n)
{
    size_t j = 0;
    for (size_t i = 0; i < n && j + 1 < dstsz; i++) {
        unsigned char ch = (unsigned char)src[i];
        dst[j++] = (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
    }
    dst[j] = '\0';
}

int kube_status_to_err(struct err *e, const char *method, const char *path, int http_status,
                       json_t *body, const char *raw, size_t raw_len)
{
    const char *reason = NULL, *message = NULL;
    int code = http_status;
    if (json_is_object(body)) {
        reason = json_string_value(json_object_get(body, "reason"));
        message = json_string_value(json_object_get(body, "message"));
        json_t *jc = json_object_get(body, "code");
        if (json_is_integer(jc) && json_integer_value(jc) > 0 && json_integer_value(jc) < 1000)
            code = (int)json_integer_value(jc);
        if (!http_status)
            http_status = code;
    }
    if (!reason || !*reason)
        reason = default_reason(http_status);
    int rc = kube_status_code(http_status, reason);

    struct buf m;
    buf_init(&m, ERR_MSG_MAX * 2);
    buf_printf(&m, "%s %s: %d", method ? method : "", path ? path : "", http_status);
    if (*reason)
        buf_printf(&m, " %s", reason);
    if (message && *message) {
        buf_printf(&m, ": %s", message);
        json_t *causes = json_object_get(json_object_get(body, "details"), "causes");
        size_t i;
        json_t *cause;
        int n = 0;
        json_array_foreach(causes, i, cause)
        {
            const char *field = json_string_value(json_object_get(cause, "field"));
            const char *cmsg = json_string_value(json_object_get(cause, "message"));
            if (!cmsg)
                continue;
            /* The Status message usually repeats the causes; add them only when it does not. */
            if (strstr(message, cmsg))
                continue;
            buf_printf(&m, "%s%s%s%s", n++ ? "; " : ": ", field ? field : "", field ? ": " : "",
                       cmsg);
        }
    } else if (raw && raw_len) {
        char snip[201];
        sanitize(snip, sizeof snip, raw, raw_len < 200 ? raw_len : 200);
        buf_printf(&m, ": %s", snip);
    }
    err_set(e, rc, "%s", buf_str(&m));
    buf_free(&m);
    e->http_status = http_status;
    snprintf(e->reason, sizeof e->reason, "%s", reason);
    return rc;
}

bool kube_err_is_gone(const struct err *e)
{
    if (!e)
        return false;
    return e->code == -ESTALE || e->http_status == 410 || !strcmp(e->reason, "Expired") ||
           !strcmp(e->reason, "Gone");
}

bool kube_err_is_rv_too_large(const struct err *e)
{
    /* 504 Timeout with cause ResourceVersionTooLarge; the cause's and the
     * Status's message both read "Too large resource version" (the only
     * mark before Kubernetes 1.19), and both end up in e->msg */
    return e && (e->http_status == 504 || !strcmp(e->reason, "Timeout")) &&
           strstr(e->msg, "Too large resource version") != NULL;
}

static int curl_code_to_rc(CURLcode res)
{
    switch (res) {
    case CURLE_OPERATION_TIMEDOUT:
        return -ETIMEDOUT;
    case CURLE_COULDNT_CONNECT:
        return -ECONNREFUSED;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return -EHOSTUNREACH;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED:
        return -EPROTO;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return -ECONNRESET;
    default:
        return -EIO;
    }
}

/* ---- call list / limiter ---------------------------------------------- */

static void list_add(struct kube_client *c, struct kube_call *call)
{
    call->next = c->calls;
    call->prev = NULL;
    if (c->calls)
        c->calls->prev = call;
    c->calls = call;
    c->pending++;
}

static void list_del(struct kube_client *c, struct kube_call *call)
{
    if (call->prev)
        call->prev->next = call->next;
    else if (c->calls == call)
        c->calls = call->next;
    else
        return; /* not linked */
    if (call->next)
        call->next->prev = call->prev;
    call->prev = call->next = NULL;
    c->pending--;
}

static void queue_push(struct kube_client *c, struct kube_call *call)
{
    struct bucket *b = &c->buckets[call->bucket];
    call->state = CALL_QUEUED;
    call->qnext = NULL;
    if (b->q_tail)
        b->q_tail->qnext = call;
    else
        b->q_head = call;
    b->q_tail = call;
    if (!ev_is_active(&b->timer)) {
        ev_timer_set(&b->timer, 0., 0.);
        ev_timer_start(c->loop, &b->timer);
    }
}

static void queue_remove(struct kube_client *c, struct kube_call *call)
{
    struct bucket *b = &c->buckets[call->bucket];
    struct kube_call **pp = &b->q_head, *prev = NULL;
    while (*pp && *pp != call) {
        prev = *pp;
        pp = &(*pp)->qnext;
    }
    if (!*pp)
        return;
    *pp = call->qnext;
    if (b->q_tail == call)
        b->q_tail = prev;
    call->qnext = NULL;
}

/*
 * A handle out of the multi goes back to the idle list. Its per-request pointers into the
 * call (headers, error buffer, write data) are cleared first: the call is about to be freed.
 * The next user sets every per-request option again (start_attempt).
 */
static void handle_put(struct kube_client *c, CURL *h, unsigned gen)
{
    if (!h)
        return;
    if (c->n_idle == KUBE_CLIENT_IDLE_HANDLES || c->shutting_down) {
        curl_easy_cleanup(h);
        return;
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, (char *)NULL);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, (void *)NULL);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, (void *)NULL);
    curl_easy_setopt(h, CURLOPT_PRIVATE, (void *)NULL);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, (char *)NULL);
    c->idle[c->n_idle] = h;
    c->idle_gen[c->n_idle] = gen;
    c->n_idle++;
}

static void call_free(struct kube_call *call)
{
    struct kube_client *c = call->c;
    list_del(c, call);
    ev_timer_stop(c->loop, &call->backoff);
    if (call->easy)
        handle_put(c, call->easy, call->easy_gen);
    curl_slist_free_all(call->hdrs);
    free(call->method);
    free(call->path);
    free(call->url);
    free(call->body);
    free(call->content_type);
    free(call->rv);
    buf_free(&call->resp);
    free(call);
}

static void cred_remove(struct kube_client *c, struct kube_call *call)
{
    struct kube_call **pp = &c->cred_head, *prev = NULL;
    while (*pp && *pp != call) {
        prev = *pp;
        pp = &(*pp)->qnext;
    }
    if (!*pp)
        return;
    *pp = call->qnext;
    if (c->cred_tail == call)
        c->cred_tail = prev;
    call->qnext = NULL;
}

/* Detach a call from libcurl, the limiter and its timer (not from the call list). */
static void call_detach(struct kube_call *call)
{
    struct kube_client *c = call->c;
    if (call->state == CALL_QUEUED)
        queue_remove(c, call);
    if (call->state == CALL_CRED)
        cred_remove(c, call);
    ev_timer_stop(c->loop, &call->backoff);
    if (call->easy) {
        curl_multi_remove_handle(c->multi, call->easy);
        curl_easy_cleanup(call->easy);
        call->easy = NULL;
    }
}

/* Finish a call: run its callback, then free it. `body` (may be NULL) is consumed. */
static void complete(struct kube_call *call, int rc, const struct err *e, int status, json_t *body)
{
    struct kube_client *c = call->c;
    struct kube_result r = {0};
    struct err ok;
    err_clear(&ok);
    call->state = CALL_DONE;
    r.rc = rc;
    r.err = rc < 0 ? e : &ok;
    r.status = status;
    r.body = body;
    r.raw = buf_str(&call->resp);
    r.raw_len = call->resp.len;
    r.resource_version = call->rv;
    r.attempts = call->attempts;
    long nc = 0;
    if (call->easy)
        curl_easy_getinfo(call->easy, CURLINFO_NUM_CONNECTS, &nc);
    r.new_connections = nc;
    r.seconds = clock_mono_s() - call->t_submit;
    if (rc < 0)
        log_v(c->lg, 4, "request failed", "verb", call->method, "path", call->path, "error",
              e->msg);
    call->done(call->ud, &r);
    json_decref(body);
    call_free(call);
}

static void start_attempt(struct kube_call *call);

static void limiter_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct bucket *b = w->data;
    struct kube_client *c = b->c;
    double now = clock_mono_s();
    if (c->qps > 0) {
        b->tokens += (now - b->last_refill) * c->qps;
        if (b->tokens > c->burst)
            b->tokens = c->burst;
    }
    b->last_refill = now;
    while (b->q_head && !c->shutting_down) {
        if (c->qps > 0 && b->tokens < 1.0) {
            double wait = (1.0 - b->tokens) / c->qps;
            c->limiter_waits_s += wait;
            c->limiter_waits++;
            ev_timer_set(&b->timer, wait, 0.);
            ev_timer_start(loop, &b->timer);
            return;
        }
        struct kube_call *call = b->q_head;
        b->q_head = call->qnext;
        if (!b->q_head)
            b->q_tail = NULL;
        call->qnext = NULL;
        if (c->qps > 0)
            b->tokens -= 1.0;
        start_attempt(call);
    }
}

/* ---- libcurl callbacks (no libcurl calls in here) ---------------------- */

static size_t header_cb(char *p, size_t size, size_t nmemb, void *ud)
{
    struct kube_call *call = ud;
    size_t n = size * nmemb;
    if (n >= 5 && !strncmp(p, "HTTP/", 5)) {
        call->retry_after = -1;
    } else if (n > 12 && !strncasecmp(p, "Retry-After:", 12)) {
        char tmp[32];
        size_t k = n - 12 < sizeof tmp - 1 ? n - 12 : sizeof tmp - 1;
        memcpy(tmp, p + 12, k);
        tmp[k] = '\0';
        char *end;
        errno = 0;
        long v = strtol(tmp, &end, 10);
        while (*end == ' ' || *end == '\r' || *end == '\n' || *end == '\t')
            end++;
        /* Only delta-seconds; an HTTP-date falls back to the computed backoff. */
        if (!errno && end != tmp && !*end && v >= 0)
            call->retry_after = (double)v;
    }
    return n;
}

static size_t write_cb(char *p, size_t size, size_t nmemb, void *ud)
{
    struct kube_call *call = ud;
    size_t n = size * nmemb;
    if (call->cancelled)
        return CURL_WRITEFUNC_ERROR;
    long status = 0;
    curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &status);
    kube_data_cb sink = call->on_data ? call->on_data : call->on_body;
    if (sink && status >= 200 && status < 300) {
        call->data_seen = true;
        err_clear(&call->abort_err);
        int rc = sink(call->ud, p, n, &call->abort_err);
        if (call->cancelled)
            return CURL_WRITEFUNC_ERROR;
        if (rc < 0) {
            call->abort_rc = rc;
            if (!call->abort_err.code)
                err_set(&call->abort_err, rc, "%s %s: stream aborted (%d)", call->method,
                        call->path, rc);
            return CURL_WRITEFUNC_ERROR;
        }
        return n;
    }
    if (n > call->c->largest_read)
        call->c->largest_read = n;
    if (buf_append(&call->resp, p, n) < 0) {
        call->abort_rc = -EFBIG;
        err_set(&call->abort_err, -EFBIG, "%s %s: response body larger than %zu bytes",
                call->method, call->path, call->resp.max);
        return CURL_WRITEFUNC_ERROR;
    }
    return n;
}

static void check_multi_info(struct kube_client *c);
static void reap_deferred(struct kube_client *c);

static void socket_action(struct kube_client *c, curl_socket_t fd, int mask)
{
    int running = 0;
    c->in_curl++;
    curl_multi_socket_action(c->multi, fd, mask, &running);
    c->in_curl--;
    reap_deferred(c);
    check_multi_info(c);
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct sock_rec *s = w->data;
    struct kube_client *c = s->c;
    int mask = 0;
    if (revents & EV_READ)
        mask |= CURL_CSELECT_IN;
    if (revents & EV_WRITE)
        mask |= CURL_CSELECT_OUT;
    if (revents & EV_ERROR)
        mask |= CURL_CSELECT_ERR;
    /* `s` may be freed during socket_action (CURL_POLL_REMOVE): do not touch it after. */
    socket_action(c, s->fd, mask);
}

static void curl_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct kube_client *c = w->data;
    socket_action(c, CURL_SOCKET_TIMEOUT, 0);
}

static int sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    struct kube_client *c = userp;
    struct sock_rec *s = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (s) {
            ev_io_stop(c->loop, &s->io);
            if (s->prev)
                s->prev->next = s->next;
            else
                c->socks = s->next;
            if (s->next)
                s->next->prev = s->prev;
            free(s); /* libcurl forgets the socket's pointer itself on REMOVE */
        }
        return 0;
    }
    int ev = (what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0);
    if (!s) {
        s = xcalloc(1, sizeof *s);
        s->c = c;
        s->fd = fd;
        s->next = c->socks;
        if (c->socks)
            c->socks->prev = s;
        c->socks = s;
        ev_init(&s->io, io_cb);
        s->io.data = s;
        curl_multi_assign(c->multi, fd, s);
    } else {
        ev_io_stop(c->loop, &s->io);
    }
    /* Always stop, set, start: libev must see fd reuse (ev.pod). */
    ev_io_set(&s->io, fd, ev);
    ev_io_start(c->loop, &s->io);
    return 0;
}

static int timer_fn(CURLM *multi, long timeout_ms, void *userp)
{
    struct kube_client *c = userp;
    ev_timer_stop(c->loop, &c->curl_timer);
    if (timeout_ms >= 0) {
        /* Never call libcurl from here; just re-arm (divide by 1000.0, not 1000). */
        ev_timer_set(&c->curl_timer, (double)timeout_ms / 1000.0, 0.);
        ev_timer_start(c->loop, &c->curl_timer);
    }
    return 0;
}

/* ---- attempts ----------------------------------------------------------- */

static void backoff_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    struct kube_call *call = w->data;
    queue_push(call->c, call);
}

/* The retry table of client.h (client-go's rest.Request rules). */
static bool retryable(const struct kube_call *call, int status, CURLcode res)
{
    if (call->data_seen)
        return false;
    /* The server asks for the retry: it did not process the request. Without
     * Retry-After a 5xx (a 504 above all) may come after a committed write,
     * and a blind retry would come back as 409/404. */
    if (status == 429 || status >= 500)
        return call->retry_after >= 0;
    if (status == 0 && res != CURLE_OK) {
        if (res == CURLE_OPERATION_TIMEDOUT)
            return false;
        /* nothing was sent */
        if (res == CURLE_COULDNT_CONNECT || res == CURLE_COULDNT_RESOLVE_HOST)
            return true;
        /* the request may have been sent: reads only */
        if (!strcmp(call->method, "GET") && curl_code_to_rc(res) == -ECONNRESET)
            return true;
    }
    return false;
}

static void schedule_retry(struct kube_call *call, const char *why)
{
    struct kube_client *c = call->c;
    double delay;
    if (call->retry_after >= 0) {
        delay = call->retry_after;
        if (delay > KUBE_CLIENT_RETRY_AFTER_MAX_S)
            delay = KUBE_CLIENT_RETRY_AFTER_MAX_S;
    } else {
        double d = c->backoff_s * ldexp(1.0, call->retries);
        if (d > c->backoff_max_s)
            d = c->backoff_max_s;
        delay = d * (0.5 + 0.5 * rng_double(&c->rng));
    }
    call->retries++;
    c->retry_waits_s += delay;
    c->retry_waits++;
    log_v(c->lg, 2, "retrying request", "verb", call->method, "path", call->path, "reason", why,
          "attempt", LOG_INT(call->attempts + 1), "delay_s", LOG_DBL(delay));
    handle_put(c, call->easy, call->easy_gen);
    call->easy = NULL;
    buf_reset(&call->resp);
    call->state = CALL_BACKOFF;
    ev_timer_set(&call->backoff, delay, 0.);
    ev_timer_start(c->loop, &call->backoff);
}

static void err_suffix_attempts(struct err *e, int attempts)
{
    size_t n = strlen(e->msg);
    if (n < sizeof e->msg)
        snprintf(e->msg + n, sizeof e->msg - n, " (after %d attempts)", attempts);
}

static void finish_attempt(struct kube_call *call, CURLcode res)
{
    struct kube_client *c = call->c;
    long status = 0, version = 0;
    curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status && curl_easy_getinfo(call->easy, CURLINFO_HTTP_VERSION, &version) == CURLE_OK &&
        version == CURL_HTTP_VERSION_2_0)
        c->h2_seen = true;
    double secs = clock_mono_s() - call->t_attempt;
    if (c->on_response)
        c->on_response(c->on_response_ud, call->method, res == CURLE_OK ? (int)status : 0, secs);
    /* klog -v=6 style request trace (path only: no tokens, no bodies); new_conns: the
     * connections this attempt opened (a TLS handshake each) */
    if (log_v_enabled(c->lg, 6)) {
        long nc = 0;
        curl_easy_getinfo(call->easy, CURLINFO_NUM_CONNECTS, &nc);
        log_v(c->lg, 6, "api request", "verb", call->method, "path", call->path, "status",
              LOG_INT(res == CURLE_OK ? status : 0), "ms", LOG_DBL(secs * 1000.0), "attempt",
              LOG_INT(call->attempts), "new_conns", LOG_INT(nc));
    }
    struct err e;
    err_clear(&e);

    if (call->abort_rc) {
        complete(call, call->abort_rc, &call->abort_err, (int)status, NULL);
        return;
    }
    if (res != CURLE_OK) {
        int rc = curl_code_to_rc(res);
        if ((call->on_data || call->on_body) && call->data_seen && rc == -ECONNRESET)
            err_set(&e, rc, "%s %s: stream from %s ended abruptly: %s", call->method, call->path,
                    c->cfg->server, call->errbuf[0] ? call->errbuf : curl_easy_strerror(res));
        else if (res == CURLE_OPERATION_TIMEDOUT)
            err_set(&e, rc, "%s %s: no complete response from %s within %.3g s", call->method,
                    call->path, c->cfg->server, call->timeout_s);
        else
            err_set(&e, rc, "%s %s: %s: %s", call->method, call->path, c->cfg->server,
                    call->errbuf[0] ? call->errbuf : curl_easy_strerror(res));
        if (call->retries < call->max_retries && retryable(call, 0, res)) {
            call->retry_after = -1;
            schedule_retry(call, e.msg);
            return;
        }
        if (call->retries > 0)
            err_suffix_attempts(&e, call->attempts);
        complete(call, rc, &e, (int)status, NULL);
        return;
    }
    if (status >= 200 && status < 300) {
        json_t *j = NULL;
        bool held = !call->on_data && !call->on_body && !call->body_unused;
        if (held && call->rv_only && call->resp.len > 0) {
            if (jscan_rv_head(call->resp.data, call->resp.len, &call->rv, &e) < 0) {
                err_prefix(&e, "%s %s: %ld response is not JSON", call->method, call->path, status);
                complete(call, -EBADMSG, &e, (int)status, NULL);
                return;
            }
        } else if (held && call->resp.len > 0) {
            j = jscan_load(call->resp.data, call->resp.len, &e);
            if (!j) {
                err_prefix(&e, "%s %s: %ld response is not JSON", call->method, call->path, status);
                complete(call, -EBADMSG, &e, (int)status, NULL);
                return;
            }
        }
        complete(call, 0, &e, (int)status, j);
        return;
    }
    if (status == 401 && call->token_sent && !call->auth_retried) {
        /* Credentials may have rotated: drop the cache and retry once at once. */
        call->auth_retried = true;
        kube_rest_config_invalidate(c->cfg);
        log_v(c->lg, 2, "401 Unauthorized, refreshing credentials", "verb", call->method, "path",
              call->path);
        handle_put(c, call->easy, call->easy_gen);
        call->easy = NULL;
        buf_reset(&call->resp);
        queue_push(c, call);
        return;
    }
    json_t *j = call->resp.len ? jscan_load(call->resp.data, call->resp.len, NULL) : NULL;
    int rc = kube_status_to_err(&e, call->method, call->path, (int)status, j, call->resp.data,
                                call->resp.len);
    if (call->retries < call->max_retries && retryable(call, (int)status, res)) {
        json_decref(j);
        schedule_retry(call, e.msg);
        return;
    }
    if (call->retries > 0)
        err_suffix_attempts(&e, call->attempts);
    complete(call, rc, &e, (int)status, j);
}

static void check_multi_info(struct kube_client *c)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(c->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode res = msg->data.result;
        char *priv = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
        struct kube_call *call = (struct kube_call *)priv;
        curl_multi_remove_handle(c->multi, easy);
        if (!call || call->cancelled)
            continue; /* reaped separately */
        finish_attempt(call, res);
    }
}

static void reap_deferred(struct kube_client *c)
{
    while (c->reap) {
        struct kube_call *call = c->reap;
        c->reap = call->rnext;
        call_detach(call);
        call_free(call);
    }
}

static void set_blob(CURL *h, CURLoption opt, const char *p, size_t n)
{
    struct curl_blob blob = {.data = (void *)p, .len = n, .flags = CURL_BLOB_COPY};
    curl_easy_setopt(h, opt, &blob);
}

static void start_attempt(struct kube_call *call);

/* The exec plugin answered: the waiting calls go on (or fail with its error). */
static void exec_done(void *ud, int rc, struct exec_cred *cred, const struct err *pe)
{
    struct kube_client *c = ud;
    c->exec_run = NULL;
    if (rc == 0)
        kube_rest_config_exec_store(c->cfg, cred);
    else
        log_warn(c->lg, "exec credential plugin failed", "server", c->cfg->server, "error",
                 pe->msg);
    /* One at a time from the head: a callback may cancel other waiting calls. */
    while (c->cred_head) {
        struct kube_call *call = c->cred_head;
        c->cred_head = call->qnext;
        if (!c->cred_head)
            c->cred_tail = NULL;
        call->qnext = NULL;
        call->state = CALL_QUEUED; /* not in any list now */
        if (rc == 0) {
            /* this answer is used even when already expired (as the
             * blocking path does): the next attempt asks again */
            call->cred_ready = true;
            start_attempt(call);
        } else {
            struct err e = *pe;
            err_prefix(&e, "%s %s: credentials", call->method, call->path);
            complete(call, rc, &e, 0, NULL);
        }
    }
}

/* The credential needs the exec plugin: park the call and start the plugin
 * on the loop (once for all waiting calls). True when parked (or failed). */
static bool wait_for_exec(struct kube_call *call)
{
    struct kube_client *c = call->c;
    if (!kube_rest_config_exec_due(c->cfg))
        return false;
    if (!c->exec_run) {
        struct exec_cred_cluster cl;
        struct exec_cred_opts o;
        kube_rest_config_exec_opts(c->cfg, &cl, &o);
        struct err e;
        err_clear(&e);
        if (exec_cred_start(c->loop, c->cfg->exec, &o, exec_done, c, &c->exec_run, &e) < 0) {
            err_prefix(&e, "%s %s: credentials", call->method, call->path);
            complete(call, e.code ? e.code : -EIO, &e, 0, NULL);
            return true;
        }
    }
    call->state = CALL_CRED;
    call->qnext = NULL;
    if (c->cred_tail)
        c->cred_tail->qnext = call;
    else
        c->cred_head = call;
    c->cred_tail = call;
    return true;
}

/* The client cert/key to present: the kubeconfig's, else an exec plugin's (may change). The
 * kubeconfig's read once (c->creds) go in from ssl_ctx_cb instead. */
static void set_client_cert(const struct kube_client *c, CURL *h, bool fresh)
{
    const struct kube_rest_config *cfg = c->cfg;
    if (c->creds)
        return;
    const char *cert = cfg->cert_pem, *key = cfg->key_pem;
    size_t cert_len = cfg->cert_len, key_len = cfg->key_len;
    if (!cert && cfg->exec_cert_pem) {
        cert = cfg->exec_cert_pem;
        cert_len = strlen(cert);
    }
    if (!key && cfg->exec_key_pem) {
        key = cfg->exec_key_pem;
        key_len = strlen(key);
    }
    if (cert && cert_len) {
        set_blob(h, CURLOPT_SSLCERT_BLOB, cert, cert_len);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (!fresh) {
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, (struct curl_blob *)NULL);
    }
    if (key && key_len) {
        set_blob(h, CURLOPT_SSLKEY_BLOB, key, key_len);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (!fresh) {
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, (struct curl_blob *)NULL);
    }
}

/* Each new TLS connection's SSL_CTX (libcurl's OpenSSL backend): the client certificate and
 * key read once. A failure fails that connection with CURLE_SSL_CERTPROBLEM. */
static CURLcode ssl_ctx_cb(CURL *h, void *ssl_ctx, void *ud)
{
    (void)h;
    const struct kube_client *c = ud;
    struct err e;
    err_clear(&e);
    if (tlscreds_apply(c->creds, ssl_ctx, &e) < 0) {
        log_error(c->lg, "TLS client certificate not presented", "server", c->cfg->server, "error",
                  e.msg);
        return CURLE_SSL_CERTPROBLEM;
    }
    return CURLE_OK;
}

/* Whether libcurl may reach the server through an HTTPS proxy (its environment variables for
 * https:// URLs): its one SSL_CTX callback would also run for the proxy's handshake. */
static bool https_proxy_set(void)
{
    static const char *const vars[] = {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && strncasecmp(v, "https://", 8) == 0)
            return true;
    }
    return false;
}

/* The kubeconfig's client certificate and key read once for every connection (c->creds),
 * when libcurl's TLS backend is OpenSSL, the only one whose SSL_CTX ssl_ctx_cb knows, and no
 * HTTPS proxy is in the way (the certificate is the API server's business only). A pair that
 * does not read is left to libcurl, which reports it at each connection as before. */
static void creds_setup(struct kube_client *c)
{
    const struct kube_rest_config *cfg = c->cfg;
    const char *ssl = curl_version_info(CURLVERSION_NOW)->ssl_version;
    if (!cfg->cert_pem || !cfg->cert_len || !cfg->key_pem || !cfg->key_len || !ssl ||
        strncmp(ssl, "OpenSSL/", 8) != 0 || https_proxy_set())
        return;
    struct err e;
    err_clear(&e);
    if (tlscreds_new(cfg->cert_pem, cfg->cert_len, cfg->key_pem, cfg->key_len, &c->creds, &e) < 0)
        log_warn(c->lg, "client certificate not read ahead; libcurl reads it per connection",
                 "server", cfg->server, "source", cfg->source, "error", e.msg);
}

/* Each new TCP connection: TCP_USER_TIMEOUT (client.h). A socket that refuses it (not TCP)
 * is used as it is. */
static int sockopt_cb(void *ud, curl_socket_t fd, curlsocktype purpose)
{
    (void)ud;
    if (purpose == CURLSOCKTYPE_IPCXN) {
        unsigned int ms = KUBE_CLIENT_TCP_USER_TIMEOUT_MS;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
    }
    return CURL_SOCKOPT_OK;
}

/* A new easy handle with the options every request of this client shares. */
static CURL *handle_new(struct kube_client *c)
{
    CURL *h = curl_easy_init();
    if (!h)
        return NULL;
    c->handles_made++;
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (c->http2) {
        /* h2 when ALPN agrees (kube-apiserver), else HTTP/1.1. PIPEWAIT: in a
         * burst, wait for the first connection's ALPN answer and multiplex
         * on it rather than open one connection per request. */
        curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
    } else {
        curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    }
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
    if (c->connect_to)
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
    curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, sockopt_cb);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
    /* Request bodies are a patch or an object (a few KB); libcurl's default upload buffer of
     * 64 KB per handle was 1.1 MB of the operator's heap at 17 handles (bench-scale). */
    curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
    const struct kube_rest_config *cfg = c->cfg;
    if (cfg->insecure_skip_tls_verify) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    }
    if (cfg->ca_pem && cfg->ca_len)
        set_blob(h, CURLOPT_CAINFO_BLOB, cfg->ca_pem, cfg->ca_len);
    if (c->creds) {
        curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, ssl_ctx_cb);
        curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, c);
    }
    set_client_cert(c, h, true);
    return h;
}

/*
 * An easy handle for the call's next attempt: an idle one (its client cert/key set again
 * when an exec plugin replaced them since) or a new one. Every option a request sets is set
 * here on each use, and the ones only some requests set are first put back to libcurl's
 * defaults, so nothing of an earlier request (method, body, timeout, headers) carries over.
 */
static CURL *handle_for(struct kube_call *call)
{
    struct kube_client *c = call->c;
    CURL *h;
    if (c->n_idle > 0) {
        c->n_idle--;
        h = c->idle[c->n_idle];
        if (c->idle_gen[c->n_idle] != c->cfg->exec_pem_gen)
            set_client_cert(c, h, false);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, (char *)NULL);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)-1);
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L); /* method GET, no upload, no NOBODY */
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, (char *)NULL);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 0L);
    } else {
        h = handle_new(c);
        if (!h)
            return NULL;
    }
    call->easy_gen = c->cfg->exec_pem_gen;

    if (c->origin) {
        curl_easy_setopt(h, CURLOPT_URL, c->origin);
        curl_easy_setopt(h, CURLOPT_REQUEST_TARGET, call->url ? call->url : call->path);
    } else {
        curl_easy_setopt(h, CURLOPT_URL, call->url);
    }
    curl_easy_setopt(h, CURLOPT_PRIVATE, (char *)call);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, call->hdrs);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, call->errbuf);
    call->errbuf[0] = '\0';
    curl_easy_setopt(h, CURLOPT_WRITEDATA, call);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, call);
    if (!call->on_data && call->timeout_s > 0)
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(call->timeout_s * 1000.0));
    /* A watch holds its handle for good and brings an event now and then: over HTTP/1.1 (one
     * connection a watch: 17 on the devhub in bench-scale) a receive buffer of
     * KUBE_CLIENT_STREAM_BUFFER instead of libcurl's 16 KB. Not once the server answered over
     * h2 (a watch starts after its list), where libcurl 7.88 pauses the whole connection while
     * a frame larger than a stream's buffer drains. 0 is libcurl's default; set on every use,
     * as a reused handle keeps its last size. */
    curl_easy_setopt(h, CURLOPT_BUFFERSIZE,
                     call->on_data && !c->h2_seen ? (long)KUBE_CLIENT_STREAM_BUFFER : 0L);
    if (!strcmp(call->method, "GET")) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
        if (strcmp(call->method, "POST") != 0)
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, call->method);
        if (call->body || !strcmp(call->method, "POST")) {
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)call->body_len);
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, call->body ? call->body : "");
        }
    }
    return h;
}

static void start_attempt(struct kube_call *call)
{
    struct kube_client *c = call->c;
    struct err e;
    err_clear(&e);
    const char *token = NULL;
    int rc = 0;
    if (c->cfg->exec) {
        /* never run inside kube_rest_config_token: it would block the loop */
        if (!call->cred_ready && wait_for_exec(call))
            return;
        call->cred_ready = false;
        token = c->cfg->cached_token;
    } else {
        rc = kube_rest_config_token(c->cfg, &token, &e);
    }
    if (rc < 0) {
        err_prefix(&e, "%s %s: credentials", call->method, call->path);
        complete(call, rc, &e, 0, NULL);
        return;
    }
    curl_slist_free_all(call->hdrs);
    call->hdrs = NULL;
    call->hdrs = curl_slist_append(call->hdrs, "Accept: application/json");
    if (call->body) {
        char *ct = xasprintf("Content-Type: %s", call->content_type);
        call->hdrs = curl_slist_append(call->hdrs, ct);
        free(ct);
    }
    call->hdrs = curl_slist_append(call->hdrs, "Expect:");
    call->token_sent = false;
    if (token && *token) {
        char *auth = xasprintf("Authorization: Bearer %s", token);
        call->hdrs = curl_slist_append(call->hdrs, auth);
        explicit_bzero(auth, strlen(auth));
        free(auth);
        call->token_sent = true;
    }
    CURL *h = handle_for(call);
    if (!h) {
        err_set(&e, -ENOMEM, "%s %s: cannot create a libcurl handle", call->method, call->path);
        complete(call, -ENOMEM, &e, 0, NULL);
        return;
    }
    call->easy = h;

    call->retry_after = -1;
    call->abort_rc = 0;
    call->attempts++;
    call->t_attempt = clock_mono_s();
    call->state = CALL_INFLIGHT;
    CURLMcode mc = curl_multi_add_handle(c->multi, h);
    if (mc != CURLM_OK) {
        curl_easy_cleanup(h);
        call->easy = NULL;
        err_set(&e, -EIO, "%s %s: cannot start the request: %s", call->method, call->path,
                curl_multi_strerror(mc));
        complete(call, -EIO, &e, 0, NULL);
    }
}

/*
 * Requests name their target (CURLOPT_REQUEST_TARGET) and all go to one URL, the server's
 * scheme://authority/: libcurl 7.88 otherwise parses each request's URL, puts it together
 * again and copies its path out through its printf engine a byte at a time (about an eighth
 * of the operator's instructions per dispatch, docs/performance.md). Not when a plain http://
 * server may be reached through a proxy, which needs the whole URL as the target; nor for a
 * base with a query or fragment (not a kubeconfig's server).
 */
static void target_setup(struct kube_client *c)
{
    static const char *const vars[] = {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"};
    const char *sep = strstr(c->base, "://");
    if (!sep || strpbrk(c->base, "?#"))
        return;
    if (strncmp(c->base, "http://", 7) == 0)
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
            if (getenv(vars[i]) && *getenv(vars[i]))
                return;
    const char *slash = strchr(sep + 3, '/');
    size_t n = slash ? (size_t)(slash - c->base) : strlen(c->base);
    c->origin = xasprintf("%.*s/", (int)n, c->base);
    c->prefix = xstrdup(slash ? slash : ""); /* base ends without '/' (kube_client_new) */
}

/* ---- public API ---------------------------------------------------------- */

/*
 * tls_server_name: libcurl has no option for "verify this name, connect to
 * that host", so requests go to https://<tls_server_name>:<port>/... and
 * CURLOPT_CONNECT_TO maps that name back to the real host (SNI and
 * certificate verification use tls_server_name; the Host header carries it
 * too, which API servers ignore).
 */
static int setup_server_name(struct kube_client *c, struct err *e)
{
    const char *name = c->cfg->tls_server_name;
    if (!name || !*name || strncmp(c->cfg->server, "https://", 8) != 0) {
        c->base = xstrdup(c->cfg->server);
        return 0;
    }
    int rc = 0;
    char *host = NULL, *port = NULL, *url = NULL;
    CURLU *u = curl_url();
    if (curl_url_set(u, CURLUPART_URL, c->cfg->server, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_HOST, name, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
        rc = err_set(e, -EINVAL, "kube client: cannot use tls-server-name \"%s\" with server %s",
                     name, c->cfg->server);
        goto out;
    }
    c->base = xstrdup(url);
    size_t n = strlen(c->base);
    while (n > 0 && c->base[n - 1] == '/')
        c->base[--n] = '\0';
    char *map = xasprintf("%s:%s:%s:%s", name, port, host, port);
    c->connect_to = curl_slist_append(NULL, map);
    free(map);
out:
    curl_free(host);
    curl_free(port);
    curl_free(url);
    curl_url_cleanup(u);
    return rc;
}

int kube_client_new(struct ev_loop *loop, const struct kube_rest_config *cfg,
                    const struct kube_client_opts *opts, const struct logger *lg,
                    struct kube_client **out, struct err *e)
{
    *out = NULL;
    if (!loop || !cfg || !cfg->server || !*cfg->server)
        return err_set(e, -EINVAL, "kube client: no API server URL%s%s",
                       cfg && cfg->source ? " in " : "", cfg && cfg->source ? cfg->source : "");
    if (strncmp(cfg->server, "https://", 8) != 0 && strncmp(cfg->server, "http://", 7) != 0)
        return err_set(e, -EINVAL, "kube client: server URL %s must start with https:// or http://",
                       cfg->server);
    static const struct kube_client_opts none;
    if (!opts)
        opts = &none;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return err_set(e, -EIO, "kube client: libcurl initialisation failed");

    struct kube_client *c = xcalloc(1, sizeof *c);
    c->loop = loop;
    c->lg = lg;
    c->cfg = kube_rest_config_dup(cfg);
    /* Drop a trailing slash so "server + path" never has "//". */
    size_t sl = strlen(c->cfg->server);
    while (sl > 0 && c->cfg->server[sl - 1] == '/')
        c->cfg->server[--sl] = '\0';
    c->user_agent = xstrdup(opts->user_agent ? opts->user_agent : "kueue-ks/" KKS_VERSION);
    int rc = setup_server_name(c, e);
    if (rc == 0)
        target_setup(c);
    if (rc < 0) {
        kube_rest_config_free(c->cfg);
        free(c->user_agent);
        free(c);
        curl_global_cleanup();
        return rc;
    }
    c->qps = opts->qps ? opts->qps : (cfg->qps > 0 ? cfg->qps : KUBE_CLIENT_DEFAULT_QPS);
    c->burst =
        opts->burst > 0 ? opts->burst : (cfg->burst > 0 ? cfg->burst : KUBE_CLIENT_DEFAULT_BURST);
    c->timeout_s = opts->timeout_s ? opts->timeout_s : KUBE_CLIENT_DEFAULT_TIMEOUT_S;
    c->max_retries = opts->max_retries ? (opts->max_retries < 0 ? 0 : opts->max_retries)
                                       : KUBE_CLIENT_DEFAULT_RETRIES;
    c->backoff_s = opts->backoff_s > 0 ? opts->backoff_s : KUBE_CLIENT_DEFAULT_BACKOFF_S;
    c->backoff_max_s =
        opts->backoff_max_s > 0 ? opts->backoff_max_s : KUBE_CLIENT_DEFAULT_BACKOFF_MAX_S;
    c->max_body = opts->max_body ? opts->max_body : KUBE_CLIENT_DEFAULT_MAX_BODY;
    c->http2 = !opts->http1_only && !strncmp(c->cfg->server, "https://", 8) &&
               (curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_HTTP2);
    c->on_response = opts->on_response;
    c->on_response_ud = opts->on_response_ud;
    for (int i = 0; i < KUBE_BUCKETS; i++) {
        c->buckets[i].c = c;
        c->buckets[i].tokens = c->burst;
        c->buckets[i].last_refill = clock_mono_s();
    }
    rng_seed_entropy(&c->rng, c);
    creds_setup(c);

    c->multi = curl_multi_init();
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_fn);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    if (c->http2) {
        curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
        /* libcurl's default is 100 streams a connection; the server's
         * SETTINGS_MAX_CONCURRENT_STREAMS (kube-apiserver:
         * --http2-max-streams-per-connection) still caps it. Watches hold
         * streams for good, so the cap must leave room for requests. */
        curl_multi_setopt(c->multi, CURLMOPT_MAX_CONCURRENT_STREAMS, (long)KUBE_CLIENT_H2_STREAMS);
    }
    /* No CURLMOPT_MAX_HOST_CONNECTIONS: over HTTP/1.1 (http://, or a server
     * that refuses h2) each watch holds a connection for good, and a cap
     * would queue requests behind them; over h2 a full connection must be
     * able to open the next one (as Go's transport does). */
    ev_init(&c->curl_timer, curl_timer_cb);
    c->curl_timer.data = c;
    for (int i = 0; i < KUBE_BUCKETS; i++) {
        ev_init(&c->buckets[i].timer, limiter_cb);
        c->buckets[i].timer.data = &c->buckets[i];
    }

    if (cfg->insecure_skip_tls_verify)
        log_warn(lg, "TLS verification is disabled for this API server (insecure-skip-tls-verify)",
                 "server", c->cfg->server, "source", cfg->source);
    *out = c;
    return 0;
}

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    c->shutting_down = true;
    exec_cred_cancel(c->exec_run);
    c->exec_run = NULL;
    reap_deferred(c);
    while (c->calls) {
        struct kube_call *call = c->calls;
        if (call->cancelled) { /* defensive: should have been reaped */
            call_detach(call);
            call_free(call);
            continue;
        }
        call_detach(call);
        struct err e;
        err_set(&e, -ECANCELED, "%s %s: cancelled: the client is shutting down", call->method,
                call->path);
        complete(call, -ECANCELED, &e, 0, NULL);
        reap_deferred(c);
    }
    for (int i = 0; i < KUBE_BUCKETS; i++)
        ev_timer_stop(c->loop, &c->buckets[i].timer);
    while (c->n_idle > 0)
        curl_easy_cleanup(c->idle[--c->n_idle]);
    curl_multi_cleanup(c->multi);
    ev_timer_stop(c->loop, &c->curl_timer);
    while (c->socks) {
        struct sock_rec *s = c->socks;
        c->socks = s->next;
        ev_io_stop(c->loop, &s->io);
        free(s);
    }
    kube_rest_config_free(c->cfg);
    tlscreds_free(c->creds);
    free(c->user_agent);
    free(c->base);
    free(c->origin);
    free(c->prefix);
    curl_slist_free_all(c->connect_to);
    free(c);
    curl_global_cleanup();
}

struct ev_loop *kube_client_loop(const struct kube_client *c)
{
    return c->loop;
}

const struct logger *kube_client_logger(const struct kube_client *c)
{
    return c->lg;
}

const struct kube_rest_config *kube_client_config(const struct kube_client *c)
{
    return c->cfg;
}

void kube_client_limits(const struct kube_client *c, double *qps, int *burst)
{
    *qps = c->qps;
    *burst = (int)c->burst;
}

size_t kube_client_pending(const struct kube_client *c)
{
    return c->pending;
}

size_t kube_client_handles_made(const struct kube_client *c)
{
    return c->handles_made;
}

double kube_client_limiter_waits(const struct kube_client *c, unsigned long *n)
{
    if (n)
        *n = c->limiter_waits;
    return c->limiter_waits_s;
}

double kube_client_retry_waits(const struct kube_client *c, unsigned long *n)
{
    if (n)
        *n = c->retry_waits;
    return c->retry_waits_s;
}

size_t kube_client_max_body(const struct kube_client *c)
{
    return c->max_body;
}

size_t kube_client_largest_read(const struct kube_client *c)
{
    return c->largest_read;
}

bool kube_client_creds_read_once(const struct kube_client *c)
{
    return c->creds != NULL;
}

static bool valid_method(const char *m)
{
    static const char *const ok[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (!strcmp(m, ok[i]))
            return true;
    return false;
}

int kube_client_do(struct kube_client *c, const struct kube_request *req, kube_done_cb done,
                   void *ud, struct kube_call **out, struct err *e)
{
    if (out)
        *out = NULL;
    if (c->shutting_down)
        return err_set(e, -ESHUTDOWN, "kube client: shutting down, request refused");
    if (!req || !done || !req->method || !valid_method(req->method))
        return err_set(e, -EINVAL, "kube client: bad request: %s",
                       !req || !req->method ? "no method"
                       : !done              ? "no callback"
                                            : req->method);
    if (!req->path || req->path[0] != '/')
        return err_set(e, -EINVAL, "kube client: %s: path must start with '/' (got \"%s\")",
                       req->method, req->path ? req->path : "");
    if ((unsigned)req->bucket >= KUBE_BUCKETS)
        return err_set(e, -EINVAL, "kube client: %s %s: no token bucket %u", req->method, req->path,
                       (unsigned)req->bucket);

    struct kube_call *call = xcalloc(1, sizeof *call);
    call->c = c;
    call->method = xstrdup(req->method);
    struct buf p;
    buf_init(&p, (size_t)1 << 20);
    int rc = buf_puts(&p, req->path);
    if (rc == 0)
        rc = kube_query_append(&p, req->query);
    if (rc < 0) {
        buf_free(&p);
        free(call->method);
        free(call);
        return err_set(e, -EINVAL, "kube client: %s: URL too long", req->method);
    }
    call->path = buf_detach(&p);
    if (!c->origin)
        call->url = xasprintf("%s%s", c->base, call->path);
    else if (*c->prefix)
        call->url = xasprintf("%s%s", c->prefix, call->path); /* the target */
    if (req->body) {
        call->body = jdump_compact(req->body, &call->body_len);
        if (!call->body) {
            free(call->url);
            free(call->path);
            free(call->method);
            free(call);
            return err_set(e, -EINVAL, "kube client: %s %s: body cannot be serialised", req->method,
                           req->path);
        }
        const char *ct = req->content_type;
        if (!ct)
            ct = !strcmp(req->method, "PATCH") ? KUBE_CT_MERGE_PATCH : KUBE_CT_JSON;
        call->content_type = xstrdup(ct);
    }
    call->bucket = req->bucket;
    call->timeout_s = req->timeout_s ? req->timeout_s : c->timeout_s;
    call->max_retries =
        req->max_retries ? (req->max_retries < 0 ? 0 : req->max_retries) : c->max_retries;
    call->on_data = req->on_data;
    call->on_body = req->on_data ? NULL : req->on_body;
    call->body_unused = req->body_unused;
    call->rv_only = req->body_rv_only;
    call->done = done;
    call->ud = ud;
    call->retry_after = -1;
    call->t_submit = clock_mono_s();
    buf_init(&call->resp, c->max_body);
    ev_init(&call->backoff, backoff_cb);
    call->backoff.data = call;
    list_add(c, call);
    queue_push(c, call);
    if (out)
        *out = call;
    return 0;
}

int kube_client_get(struct kube_client *c, const char *path, const char *const *query,
                    kube_done_cb done, void *ud, struct kube_call **call, struct err *e)
{
    struct kube_request r = {.method = "GET", .path = path, .query = query};
    return kube_client_do(c, &r, done, ud, call, e);
}

int kube_client_post(struct kube_client *c, const char *path, json_t *body, kube_done_cb done,
                     void *ud, struct kube_call **call, struct err *e)
{
    struct kube_request r = {.method = "POST", .path = path, .body = body};
    return kube_client_do(c, &r, done, ud, call, e);
}

int kube_client_put(struct kube_client *c, const char *path, json_t *body, kube_done_cb done,
                    void *ud, struct kube_call **call, struct err *e)
{
    struct kube_request r = {.method = "PUT", .path = path, .body = body};
    return kube_client_do(c, &r, done, ud, call, e);
}

int kube_client_patch(struct kube_client *c, const char *path, const char *content_type,
                      json_t *patch, kube_done_cb done, void *ud, struct kube_call **call,
                      struct err *e)
{
    struct kube_request r = {
        .method = "PATCH",
        .path = path,
        .body = patch,
        .content_type = content_type ? content_type : KUBE_CT_MERGE_PATCH,
    };
    return kube_client_do(c, &r, done, ud, call, e);
}

int kube_client_delete(struct kube_client *c, const char *path, json_t *body, kube_done_cb done,
                       void *ud, struct kube_call **call, struct err *e)
{
    struct kube_request r = {.method = "DELETE", .path = path, .body = body};
    return kube_client_do(c, &r, done, ud, call, e);
}

void kube_call_cancel(struct kube_call *call)
{
    if (!call || call->cancelled || call->state == CALL_DONE)
        return;
    struct kube_client *c = call->c;
    call->cancelled = true;
    if (call->state == CALL_INFLIGHT && c->in_curl) {
        /* Inside a libcurl callback: no libcurl calls now; reap after socket_action. */
        if (!call->reap_queued) {
            call->reap_queued = true;
            call->rnext = c->reap;
            c->reap = call;
        }
        return;
    }
    call_detach(call);
    call_free(call);
}
