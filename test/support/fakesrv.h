/*
 * fakesrv: a scripted HTTP(S) server for unit tests (libmicrohttpd, its own
 * threads; one thread per connection so delays and held streams are cheap).
 *
 * It binds 127.0.0.1 on an ephemeral port and answers from a script: the test
 * pushes responses, each with a match rule (method, path prefix, query
 * substring), and every incoming request takes the FIRST queued response that
 * matches it (FIFO among matches; a response with `times` > 1 or -1 stays
 * queued). A request that matches nothing gets 404 with a Status body whose
 * message starts "fakesrv: no scripted response" and is counted in
 * fakesrv_unmatched(). Every request is recorded (method, path, raw query,
 * headers, body, arrival time, connection id).
 *
 * A list + watch sequence for an informer test:
 *
 *   fakesrv_push_json(s, "GET", "/api/v1/pods", "watch=", 200, LIST_JSON);   // see note
 *   const char *ev[] = {"{\"type\":\"ADDED\",\"object\":{...}}", NULL};
 *   fakesrv_push_watch(s, "/api/v1/pods", ev, FAKESRV_HOLD);
 *
 * fakesrv_push_json's `query_lacks` argument ("watch=" above) keeps the list
 * response from answering the watch request; fakesrv_push_watch only matches
 * requests whose query contains "watch=". Paging: push one response per page
 * with query_contains "continue=<token>" via fakesrv_push(). Expired continue
 * token / 410 watch: fakesrv_push_status(..., 410, "Expired", "...").
 * A watch ERROR event: fakesrv_watch_error_line(410) gives the line.
 *
 * Streams: a response with chunks is sent with chunked transfer encoding,
 * each chunk after its delay (to split an event mid-line), then ends as
 * `end` says: FINISH (clean end), HOLD (keep the connection open sending
 * nothing until fakesrv_release() or fakesrv_stop()), DROP (close the
 * connection without the terminating chunk: the client sees a truncated
 * transfer).
 *
 * Thread safety: every function may be called from the test thread while the
 * server runs; the server thread only reads the script under a lock.
 * Functions abort the test (via abort()) on setup failures, so tests need no
 * error handling around them.
 */
#ifndef KKS_TEST_FAKESRV_H
#define KKS_TEST_FAKESRV_H

#include <stdbool.h>
#include <stddef.h>

struct fakesrv;

enum fakesrv_end {
    FAKESRV_FINISH = 0, /* finish the response normally */
    FAKESRV_HOLD,       /* after the chunks, keep the connection open, send nothing */
    FAKESRV_DROP,       /* after the chunks, close the connection abruptly */
};

struct fakesrv_chunk {
    double delay_s;   /* wait before sending this chunk */
    const char *data; /* bytes to send */
    size_t len;       /* 0 = strlen(data) */
};

/* One scripted response and its match rule. Everything is deep-copied by fakesrv_push(). */
struct fakesrv_resp {
    const char *method;         /* NULL = any */
    const char *path;           /* path prefix (no query); NULL = any */
    const char *query_contains; /* raw (still encoded) query must contain this; NULL = any */
    const char *query_lacks;    /* raw query must not contain this; NULL = no rule */
    int status;                 /* 0 = 200 */
    const char *const *headers; /* NULL-terminated "Name: value" strings; may be NULL.
                                   Content-Type defaults to application/json */
    const char *body;           /* whole body (Content-Length); NULL = empty */
    const struct fakesrv_chunk *chunks; /* if n_chunks > 0: streamed chunked instead of body */
    size_t n_chunks;
    double delay_s; /* wait before sending the response headers */
    enum fakesrv_end end;
    int times; /* 0 or 1 = answer one request; n > 1 = n requests; -1 = forever */
};

struct fakesrv_opts {
    bool tls; /* serve HTTPS with a self-signed certificate for 127.0.0.1 generated at start
                 (fakesrv_ca_pem() returns it for the client's CA bundle) */
    bool client_certs; /* with tls: also generate a client certificate (CN "fakesrv-client",
                          signed by the server certificate) and ask clients for theirs; the
                          CN of a verified client certificate is recorded per request */
};

/* Start a server (opts may be NULL: plain HTTP). Never NULL (aborts on failure). */
struct fakesrv *fakesrv_start(const struct fakesrv_opts *opts);
/* Stop: held/delayed responses are ended, threads joined, everything freed. NULL is fine. */
void fakesrv_stop(struct fakesrv *s);

/* "http://127.0.0.1:PORT" or "https://...". Borrowed, valid until stop. */
const char *fakesrv_url(const struct fakesrv *s);
/* PEM of the server certificate (TLS mode; acts as the CA), else NULL. Borrowed. */
const char *fakesrv_ca_pem(const struct fakesrv *s);
/* PEM of the generated client certificate and its key (client_certs mode), else NULL. */
const char *fakesrv_client_cert_pem(const struct fakesrv *s);
const char *fakesrv_client_key_pem(const struct fakesrv *s);

/* Queue a scripted response (deep copy). */
void fakesrv_push(struct fakesrv *s, const struct fakesrv_resp *r);
/* Queue `status` with a JSON body, for `method` and path prefix `path`;
   query_lacks may be NULL. */
void fakesrv_push_json(struct fakesrv *s, const char *method, const char *path,
                       const char *query_lacks, int status, const char *body);
/* Queue a Kubernetes Status error: {"kind":"Status","status":"Failure","code":status,
   "reason":reason,"message":message}. */
void fakesrv_push_status(struct fakesrv *s, const char *method, const char *path, int status,
                         const char *reason, const char *message);
/* Queue a watch stream for GET `path` with "watch=" in the query: one chunk per
   event line (each gets a '\n' appended), then `end`. `events` is NULL-terminated. */
void fakesrv_push_watch(struct fakesrv *s, const char *path, const char *const *events,
                        enum fakesrv_end end);
/* A watch ERROR event line for `code` (410 -> reason Expired). New string, caller frees. */
char *fakesrv_watch_error_line(int code);

/* End every held (FAKESRV_HOLD) response now and any future ones immediately. */
void fakesrv_release(struct fakesrv *s);
/* Remove all queued responses. */
void fakesrv_clear(struct fakesrv *s);

/* A recorded request: a copy owned by the caller (fakesrv_req_free). */
struct fakesrv_req {
    char *method;
    char *path;     /* decoded path as libmicrohttpd saw it, without the query */
    char *query;    /* raw query string as sent (still percent-encoded), "" if none */
    char **headers; /* NULL-terminated "name: value" with the name lowercased */
    char *body;     /* NUL-terminated, "" if none */
    size_t body_len;
    double t;              /* monotonic seconds (clock_mono_s) when the request was complete */
    unsigned long conn_id; /* 1, 2, ... per accepted connection: equal ids = reused connection */
    char *client_cn;       /* CN of the verified client certificate, NULL if none (or invalid) */
};

/* Number of requests received so far. */
size_t fakesrv_nreq(struct fakesrv *s);
/* Copy of request i (0-based), or NULL when i >= fakesrv_nreq(). */
struct fakesrv_req *fakesrv_req_get(struct fakesrv *s, size_t i);
void fakesrv_req_free(struct fakesrv_req *r);
/* Value of header `name` (case-insensitive) in a recorded request, or NULL. Borrowed. */
const char *fakesrv_req_header(const struct fakesrv_req *r, const char *name);

/* Connections accepted so far. */
size_t fakesrv_connections(struct fakesrv *s);
/* Requests that matched no scripted response. */
size_t fakesrv_unmatched(struct fakesrv *s);
/* Scripted responses still queued (a "forever" response counts as 1). */
size_t fakesrv_queued(struct fakesrv *s);

#endif
