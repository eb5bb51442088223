/*
 * client: the asynchronous Kubernetes REST client.
 *
 * One `struct kube_client` talks to one API server (one kube_rest_config).
 * It drives a libcurl multi handle (multi-socket API) from a libev loop, so
 * all requests of the process share one thread and reuse connections
 * (HTTP/2 streams over TLS where the server speaks h2, else HTTP/1.1
 * keep-alive). Nothing blocks: a call queues the request and
 * returns; the completion callback runs later from the loop.
 *
 * What the client does for every request:
 *   - client-side rate limit: token bucket (qps/burst, default 1000/1000 as Kueue v0.20, or
 *     kube_rest_config.qps/burst when non-zero), one for Events beside the main one
 *     (kube_request.bucket); requests wait on the loop;
 *   - bearer token from kube_rest_config_token() (token file re-read when it
 *     changes, exec plugin re-run on expiry); on a 401 the cached credential
 *     is invalidated and the request retried once with a fresh token;
 *   - TLS from in-memory PEM blobs (CA, client cert, key; or the cert/key an
 *     exec plugin returned); verification on unless insecure_skip_tls_verify
 *     (a warning is logged once per client); tls_server_name is honoured
 *     (SNI + verification name; the connection still goes to the server's
 *     host via CURLOPT_CONNECT_TO);
 *   - over https://, HTTP/2 when the server agrees in ALPN (kube-apiserver
 *     does): every request and watch is a stream of one connection (another
 *     one only when the server's stream limit is reached; a timed-out or
 *     cancelled call resets its stream, not the connection). Otherwise, and
 *     always over http:// or with opts.http1_only, HTTP/1.1 with keep-alive
 *     (each open watch holds one connection);
 *     CURLOPT_NOSIGNAL is set, the daemon should still ignore SIGPIPE;
 *   - every TCP connection has keepalive (idle 30 s, then every 15 s) and
 *     TCP_USER_TIMEOUT KUBE_CLIENT_TCP_USER_TIMEOUT_MS: the kernel closes a
 *     connection whose sent bytes or keepalive probes go unacknowledged that
 *     long, so a peer gone without a reset (a dropped NAT entry, a failed-over
 *     load balancer) fails its requests and watches in under a minute instead
 *     of after TCP's ~15 minutes of retransmissions; over HTTP/2 that is every
 *     request and watch to the server, since a timed-out stream leaves the
 *     connection open;
 *   - JSON request bodies (jansson) and JSON response bodies, capped
 *     (default 64 MiB; a bigger response fails with -EFBIG);
 *   - per-request timeout (default 30 s, per attempt; streams have none);
 *   - libcurl easy handles reused from finished attempts (the per-request options —
 *     URL, method, body, headers, timeout — are set afresh on each use);
 *   - every request goes to the server's scheme://authority/ and names its own target
 *     (CURLOPT_REQUEST_TARGET: the server URL's path, then the request's path and query), so
 *     libcurl does not parse and rebuild a URL per request; not for an http:// server when
 *     an http_proxy/all_proxy variable is set (a proxy needs the whole URL);
 *   - retries (at most max_retries), as client-go's rest.Request does them
 *     (IsNextRetry/checkWait: a response is retried only when the server
 *     sent Retry-After; a transport error only for GET):
 *       outcome                             GET     POST/PUT/PATCH/DELETE
 *       429 with Retry-After (seconds)      retry   retry   (not processed)
 *       5xx with Retry-After                retry   retry   (server asks for it)
 *       429 / 5xx without Retry-After       no      no      (a 504 may follow a
 *                                                   committed write: a retried
 *                                                   PUT/DELETE would meet 409/404)
 *       connect refused / failed, resolve   retry   retry   (nothing was sent)
 *       reset, empty reply, lost mid-body   retry   no      (may have been sent)
 *       timeout                             no      no
 *       401 after sending a token           once, at once, with fresh credentials
 *       any other 4xx                       no      no
 *       a stream that delivered data        no (the caller re-lists / re-watches)
 *     The delay is the server's Retry-After (capped at 60 s), else jittered
 *     exponential backoff (0.25 s doubling, capped at 30 s). Callers own the
 *     retries above this (work queues requeue with their own rate limit);
 *   - a `Status` error body decoded into `struct err` (see the table below).
 *
 * Error codes (result.rc and err.code), from the HTTP status / Status reason:
 *   400 BadRequest          -EINVAL        401 Unauthorized     -EACCES
 *   403 Forbidden           -EPERM         404 NotFound         -ENOENT
 *   405 MethodNotAllowed    -EOPNOTSUPP    406/415              -EINVAL
 *   409 AlreadyExists       -EEXIST        409 Conflict (other) -EBUSY
 *   410 Gone / Expired      -ESTALE  (also reason "Expired" with any code:
 *                                     the informer must re-list)
 *   413 RequestEntityTooLarge -E2BIG       422 Invalid          -EINVAL
 *   429 TooManyRequests     -EAGAIN        504 / Timeout        -ETIMEDOUT
 *   other 5xx               -EIO           other 4xx            -EPROTO
 *   transport: timeout -ETIMEDOUT, connect refused/failed -ECONNREFUSED,
 *   connection lost -ECONNRESET, TLS failure -EPROTO (message says why),
 *   resolve failure -EHOSTUNREACH, response over the cap -EFBIG,
 *   2xx body that is not JSON -EBADMSG, cancelled -ECANCELED,
 *   client shutting down -ESHUTDOWN.
 * err.http_status is the HTTP status (0 for transport errors), err.reason the
 * Status reason ("NotFound", "Conflict", ...) and err.msg reads like
 *   "GET /api/v1/namespaces/a/pods/b: 404 NotFound: pods \"b\" not found".
 * For 422 the Status causes are appended ("spec.x: Required value").
 *
 * Callback rules (all callbacks run on the loop thread):
 *   - a submit call that returns 0 calls its completion callback exactly once,
 *     later, from the loop (never from inside the submit call), unless the
 *     call is cancelled with kube_call_cancel(), in which case it is never
 *     called;
 *   - a submit call that returns < 0 never calls the callback;
 *   - inside any callback you may submit requests and cancel calls (including
 *     the current one from a stream's on_data);
 *   - kube_client_free() completes every pending call with rc -ECANCELED
 *     (so per-request userdata can be released); during that, submitting new
 *     requests fails with -ESHUTDOWN;
 *   - never call kube_client_free() from one of the client's own callbacks
 *     (defer it, e.g. with ev_break or a zero timer).
 */
#ifndef KKS_KUBE_CLIENT_H
#define KKS_KUBE_CLIENT_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/kube/restconfig.h"
#include "pkg/util/buf.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

#define KUBE_CLIENT_DEFAULT_QPS           1000.0 /* Kueue v0.20's manager client */
#define KUBE_CLIENT_DEFAULT_BURST         1000
#define KUBE_CLIENT_DEFAULT_TIMEOUT_S     30.0
#define KUBE_CLIENT_STREAM_BUFFER         4096 /* a watch's receive buffer over HTTP/1.1 */
#define KUBE_CLIENT_DEFAULT_RETRIES       5
#define KUBE_CLIENT_DEFAULT_BACKOFF_S     0.25
#define KUBE_CLIENT_DEFAULT_BACKOFF_MAX_S 30.0
#define KUBE_CLIENT_DEFAULT_MAX_BODY      ((size_t)64 << 20)
#define KUBE_CLIENT_RETRY_AFTER_MAX_S     60.0
#define KUBE_CLIENT_H2_STREAMS            1000  /* our cap on streams a connection */
#define KUBE_CLIENT_IDLE_HANDLES          16    /* libcurl easy handles kept for reuse */
#define KUBE_CLIENT_TCP_USER_TIMEOUT_MS   30000 /* see above: unacknowledged this long, closed */

/* Content types for request bodies. */
#define KUBE_CT_JSON            "application/json"
#define KUBE_CT_MERGE_PATCH     "application/merge-patch+json"
#define KUBE_CT_JSON_PATCH      "application/json-patch+json"
#define KUBE_CT_STRATEGIC_PATCH "application/strategic-merge-patch+json"

struct kube_client;
struct kube_call;

/*
 * Observer hook for metrics: called once per attempt (each HTTP response or
 * transport failure) with the verb ("GET", ...), the HTTP status (0 for a
 * transport failure) and the attempt's duration in seconds.
 */
typedef void (*kube_response_hook)(void *ud, const char *verb, int code, double seconds);

/* Client options. Zero-initialise, then set what you need; 0 means default. */
struct kube_client_opts {
    double qps;                     /* 0: cfg->qps if set, else 1000; < 0: unlimited */
    int burst;                      /* 0: cfg->burst if set, else 1000 */
    double timeout_s;               /* per-attempt timeout; 0: 30 s; < 0: none */
    int max_retries;                /* 0: 5; < 0: never retry (401 refresh still happens) */
    double backoff_s;               /* first retry delay; 0: 0.25 s */
    double backoff_max_s;           /* cap; 0: 30 s */
    size_t max_body;                /* response body cap; 0: 64 MiB */
    const char *user_agent;         /* 0: "kueue-ks/<version>"; copied */
    bool http1_only;                /* never offer HTTP/2 (default: h2 over TLS when the
                                       server agrees; --http2=false) */
    kube_response_hook on_response; /* optional */
    void *on_response_ud;
};

/*
 * Create a client on `loop` for `cfg` (deep-copied: the client keeps its own
 * credential cache). `opts` and `lg` may be NULL; `lg` is borrowed and must
 * outlive the client. Returns 0 and *out (owned by the caller, free with
 * kube_client_free), -EINVAL (no server, a URL that is not http(s)://, or a
 * tls_server_name that cannot be applied) or -EIO (libcurl initialisation
 * failed), with a message in `e`.
 */
int kube_client_new(struct ev_loop *loop, const struct kube_rest_config *cfg,
                    const struct kube_client_opts *opts, const struct logger *lg,
                    struct kube_client **out, struct err *e);

/*
 * Cancel everything and free the client. Pending calls complete with
 * -ECANCELED (see the callback rules above); open watches are closed the
 * same way. Call it before destroying the loop. NULL is fine.
 */
void kube_client_free(struct kube_client *c);

/* The loop the client runs on (borrowed). */
struct ev_loop *kube_client_loop(const struct kube_client *c);
/* The logger (borrowed, may be NULL). */
const struct logger *kube_client_logger(const struct kube_client *c);
/* The client's copy of the rest config (borrowed; e.g. for cfg->server). */
const struct kube_rest_config *kube_client_config(const struct kube_client *c);
/* The effective client-side rate limit: requests/s (<= 0: unlimited) and burst. */
void kube_client_limits(const struct kube_client *c, double *qps, int *burst);
/* Calls submitted and not yet completed/cancelled (queued, waiting or in flight). */
size_t kube_client_pending(const struct kube_client *c);
/* libcurl easy handles created so far: an attempt reuses the handle of a finished one
 * (up to KUBE_CLIENT_IDLE_HANDLES are kept), so this stays below the number of attempts. */
size_t kube_client_handles_made(const struct kube_client *c);
/* The largest piece of a response body (not a stream's) libcurl handed over at once: its
 * receive buffer's size bounds it (a watch's is KUBE_CLIENT_STREAM_BUFFER over HTTP/1.1). */
size_t kube_client_largest_read(const struct kube_client *c);
/* Seconds the token buckets chose to wait, summed, and in *n (may be NULL) how many waits:
 * what the limiter asked for, whatever the loop's lateness added (a late wake-up finds more
 * tokens, up to the burst, and waits less next). */
double kube_client_limiter_waits(const struct kube_client *c, unsigned long *n);
/* The same for the waits before retries (backoff or the server's Retry-After). */
double kube_client_retry_waits(const struct kube_client *c, unsigned long *n);
/* The response body cap (kube_client_opts.max_body, or its default). */
size_t kube_client_max_body(const struct kube_client *c);
/* Whether the kubeconfig's client certificate and key were read once for every connection
 * (tlscreds.h), rather than by libcurl at each. */
bool kube_client_creds_read_once(const struct kube_client *c);

/* What a completion callback receives. Everything is borrowed for the duration of the callback. */
struct kube_result {
    int rc;                       /* 0 for a 2xx response, else a negative code (table above) */
    const struct err *err;        /* never NULL; err->code == rc; msg names method and path */
    int status;                   /* final HTTP status, 0 when no response was received */
    json_t *body;                 /* parsed JSON body (2xx, or the Status of an error); NULL when
                                     the body is empty, not JSON, or the call was a stream.
                                     Borrowed: json_incref() it to keep it. */
    const char *resource_version; /* body_rv_only: metadata.resourceVersion of the 2xx
                                     body, NULL when it has none (or not a string) */
    const char *raw;              /* raw body bytes, NUL-terminated ("" for streams) */
    size_t raw_len;
    int attempts;         /* HTTP attempts made (1 + retries) */
    long new_connections; /* connections opened by the last attempt (0 = reused) */
    double seconds;       /* from submit to completion, including queueing and backoff */
};

typedef void (*kube_done_cb)(void *ud, const struct kube_result *r);

/*
 * Streaming body sink (used by watches): receives the body of a 2xx response
 * as it arrives, in arbitrary pieces. Return 0 to continue or a negative code
 * to abort the transfer; the call then completes with that code (the message
 * is taken from `e` if the sink filled it). Non-2xx responses are not
 * streamed: they are buffered and decoded as a Status like any other call.
 */
typedef int (*kube_data_cb)(void *ud, const char *data, size_t len, struct err *e);

/*
 * The client's token buckets, each of qps/burst. KUBE_BUCKET_EVENTS is for Events:
 * controller-runtime's event recorder has a client (so a rate limiter) of its own beside the
 * manager's, over the same connections, and Kueue's Events do not take its writes' tokens.
 */
enum kube_bucket { KUBE_BUCKET_MAIN = 0, KUBE_BUCKET_EVENTS, KUBE_BUCKETS };

/* One request. Strings are copied at submit time; `body` is serialised at submit time. */
struct kube_request {
    const char *method;       /* "GET", "POST", "PUT", "PATCH", "DELETE" */
    const char *path;         /* absolute path, e.g. from kube_path(); already encoded */
    const char *const *query; /* NULL-terminated key, value, key, value...; raw values,
                                 percent-encoded by the client; may be NULL */
    json_t *body;             /* borrowed; NULL = no body */
    const char *content_type; /* NULL: application/json (PATCH: merge patch) */
    double timeout_s;         /* 0: client default; < 0: none. Ignored for streams
                                 (they have no timeout, see kube_watch) */
    int max_retries;          /* 0: client default; < 0: never */
    kube_data_cb on_data;     /* non-NULL makes this a stream (no body cap, no JSON parse,
                                 TCP keep-alive on, no timeout) */
    kube_data_cb on_body;     /* non-NULL: a 2xx body goes to it as it arrives instead of
                                 being held (no body cap: the sink holds what it keeps; no
                                 JSON parse; r->raw ""). Otherwise an ordinary call: its
                                 timeout, and retries only before the sink saw a byte. */
    bool body_unused;         /* the caller never reads a 2xx body: it is not parsed
                                 (r->body NULL, r->raw still set; a 2xx body that is not
                                 JSON is no error). Error bodies are parsed as always. */
    bool body_rv_only;        /* the caller reads only metadata.resourceVersion of a 2xx
                                 body: it is scanned up to there and checked so far
                                 (jscan_rv_head, pkg/json/jscan.h) instead of parsed into a
                                 tree, r->body is NULL and r->resource_version set; a 2xx
                                 body that is not JSON up to its resourceVersion is -EBADMSG
                                 (r->raw holds it all). Error bodies are parsed as always. */
    enum kube_bucket bucket;  /* the tokens it takes, retries too; 0: the client's main */
};

/*
 * Submit a request. `done` is required. `*call` (optional) receives a handle
 * valid until the callback has returned or the call was cancelled. Returns 0,
 * -EINVAL for a bad request (message in `e`) or -ESHUTDOWN during
 * kube_client_free().
 */
int kube_client_do(struct kube_client *c, const struct kube_request *req, kube_done_cb done,
                   void *ud, struct kube_call **call, struct err *e);

/* Conveniences over kube_client_do (same contract). */
int kube_client_get(struct kube_client *c, const char *path, const char *const *query,
                    kube_done_cb done, void *ud, struct kube_call **call, struct err *e);
int kube_client_post(struct kube_client *c, const char *path, json_t *body, kube_done_cb done,
                     void *ud, struct kube_call **call, struct err *e);
int kube_client_put(struct kube_client *c, const char *path, json_t *body, kube_done_cb done,
                    void *ud, struct kube_call **call, struct err *e);
/* content_type: one of the KUBE_CT_*_PATCH types (NULL = merge patch). */
int kube_client_patch(struct kube_client *c, const char *path, const char *content_type,
                      json_t *patch, kube_done_cb done, void *ud, struct kube_call **call,
                      struct err *e);
/* body: optional DeleteOptions, may be NULL. */
int kube_client_delete(struct kube_client *c, const char *path, json_t *body, kube_done_cb done,
                       void *ud, struct kube_call **call, struct err *e);

/*
 * Cancel a call that has not completed: its callback will not run, its
 * resources are released (at once, or right after the current libcurl
 * callback returns when called from inside one). Safe from any callback,
 * including the call's own on_data. NULL is fine.
 */
void kube_call_cancel(struct kube_call *call);

/*
 * Build a resource path. group NULL or "" is the core group (/api/v1),
 * otherwise /apis/<group>/<version>. ns NULL/"" = cluster scope or all
 * namespaces; name NULL/"" = the collection; subresource NULL/"" = none.
 * Namespace, name and subresource are percent-encoded as path segments.
 * Returns a new string (caller frees). Examples:
 *   ("", "v1", "pods", "a", "p", "status") -> /api/v1/namespaces/a/pods/p/status
 *   ("kueue.x-k8s.io", "v1beta1", "workloads", NULL, NULL, NULL)
 *       -> /apis/kueue.x-k8s.io/v1beta1/workloads
 */
char *kube_path(const char *group, const char *version, const char *resource, const char *ns,
                const char *name, const char *subresource);

/*
 * Append "?k=v&k2=v2" to `out` with keys and values percent-encoded
 * (RFC 3986: everything but ALPHA DIGIT - . _ ~ is %XX-escaped, so label
 * selectors like "a in (x,y),!b" survive). `kv` is NULL-terminated pairs;
 * NULL or empty appends nothing; a pair with a NULL value is skipped.
 * Returns 0 or -E2BIG (buffer cap).
 */
int kube_query_append(struct buf *out, const char *const *kv);

/* Map an HTTP status and Status reason to the error codes of the table above. */
int kube_status_code(int http_status, const char *reason);

/*
 * Decode a Kubernetes Status (or any error body) into `e`:
 * code from kube_status_code(), http_status, reason, and msg =
 * "<method> <path>: <status> <reason>: <message>[: <causes>]". `body` may be
 * NULL or not a Status (then msg carries the HTTP status text and a prefix of
 * `raw`). Returns e->code. `e` must not be NULL.
 */
int kube_status_to_err(struct err *e, const char *method, const char *path, int http_status,
                       json_t *body, const char *raw, size_t raw_len);

/* True when `e` is a 410 Gone / Expired error (the informer must re-list). */
bool kube_err_is_gone(const struct err *e);
/* True when `e` is the server's "Too large resource version" (504 Timeout,
 * cause ResourceVersionTooLarge): the RV asked for is ahead of the server
 * (it lost data, or is a different server); a watch must re-list. */
bool kube_err_is_rv_too_large(const struct err *e);

#endif
