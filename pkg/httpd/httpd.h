/*
 * httpd: the operator's own HTTP endpoints (/healthz, /readyz, /metrics and
 * anything registered with httpd_handle), served by libmicrohttpd driven
 * from the caller's libev loop: MHD runs in external-select epoll mode with
 * no threads of its own; an ev_io watches MHD's epoll fd and an ev_timer
 * follows MHD_get_timeout, and both call MHD_run. Handlers therefore run on
 * the loop thread and may read any loop-owned state.
 *
 *   struct httpd *srv = httpd_new(loop, &(struct httpd_config){
 *       .bind_addr = ":8081", .metrics = reg, .lg = &lg}, &e);
 *   httpd_add_readyz_check(srv, "informers-synced", synced_check, ctx);
 *   httpd_handle(srv, "GET", "/debug/queues", queues_handler, ctx);
 *   httpd_start(srv, &e);   // binds, listens; httpd_port(srv) is the bound port
 *   ...
 *   httpd_free(srv);        // stops the watchers and closes every connection
 *
 * Health endpoints behave like the Kubernetes apiserver's:
 *   GET /healthz, /readyz          200 "ok", or 500 listing every check
 *                                  ("[+]name ok" / "[-]name failed: reason
 *                                  withheld") and "<endpoint> check failed";
 *   ?verbose                       the list and "<endpoint> check passed"
 *                                  even when all pass;
 *   ?exclude=name (repeatable)     skip a check ("[+]name excluded: ok");
 *   GET /healthz/<name>            one check: 200 "ok", or 500
 *                                  "internal server error: <message>".
 * The failing check's message is logged, not returned on the aggregate
 * endpoints. A built-in "ping" check is always present on both.
 * GET /metrics serves the registry (if any) with Content-Type
 * "text/plain; version=0.0.4; charset=utf-8". Unknown paths get 404, a known
 * path with a method it is not registered for gets 405 with an Allow header.
 * HEAD is accepted wherever GET is.
 */
#ifndef KKS_HTTPD_HTTPD_H
#define KKS_HTTPD_HTTPD_H

#include <ev.h>
#include <stdbool.h>

#include "pkg/metrics/metrics.h"
#include "pkg/util/buf.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

struct httpd;
struct httpd_request;

/* Request bodies larger than this are refused with 413. */
#define HTTPD_MAX_BODY (1 << 20)
/* Response bodies are capped at this size (a handler's appends fail beyond it). */
#define HTTPD_MAX_RESPONSE (64 << 20)

struct httpd_config {
    /*
     * Listen address in controller-runtime's flag syntax: "host:port",
     * ":port" (all interfaces, IPv6 dual-stack when available), "[::1]:port";
     * port 0 picks an ephemeral port. "0" or "" disables the server
     * (httpd_start then succeeds without listening and httpd_port is 0).
     * Borrowed for the httpd_new call.
     */
    const char *bind_addr;
    struct metrics_registry *metrics; /* borrowed, may be NULL (no /metrics route) */
    const struct logger *lg;          /* borrowed, may be NULL */
    unsigned connection_timeout_s;    /* idle connection timeout; 0 = 30 s */
    unsigned max_connections;         /* 0 = 64 */
};

/* The response a handler fills. status defaults to 200, content_type to text/plain. */
struct httpd_response {
    int status;
    const char *content_type; /* static or borrowed until the handler returns (copied) */
    struct buf body;          /* append with buf_* (capped at HTTPD_MAX_RESPONSE) */
    char *allow;              /* internal */
};

/* A request handler; runs on the loop thread and must not block. */
typedef void (*httpd_handler_fn)(const struct httpd_request *req, struct httpd_response *resp,
                                 void *userdata);

/* A health check: 0 when healthy, else a negative code with a message in `e`. */
typedef int (*httpd_check_fn)(void *userdata, struct err *e);

/*
 * Parse a bind address (see httpd_config.bind_addr). On success *host is a
 * new string ("" for all interfaces; brackets removed from IPv6) and *port
 * the port; *disabled is true for "0" and "" (then *host is NULL).
 * Returns 0 or -EINVAL with a message naming the bad part.
 */
int httpd_parse_bind(const char *addr, char **host, int *port, bool *disabled, struct err *e);

/*
 * Create a server on `loop` (borrowed; must outlive the server). Nothing is
 * bound until httpd_start. Returns NULL with -EINVAL in `e` for a bad bind
 * address.
 */
struct httpd *httpd_new(struct ev_loop *loop, const struct httpd_config *cfg, struct err *e);

/*
 * Register a handler for an exact path ("/debug/x") and method ("GET",
 * "POST", ...). Registering the same method and path again replaces the
 * handler. The built-in /healthz, /readyz, /metrics routes can be
 * overridden the same way. 0, or -EINVAL for a path not starting with '/'.
 */
int httpd_handle(struct httpd *srv, const char *method, const char *path, httpd_handler_fn fn,
                 void *userdata);

/* Add a named check to /healthz or /readyz (name copied, also served at /<endpoint>/<name>).
 * 0, -EINVAL for an empty name or one containing '/', -EEXIST when the name is taken. */
int httpd_add_healthz_check(struct httpd *srv, const char *name, httpd_check_fn fn, void *userdata);
int httpd_add_readyz_check(struct httpd *srv, const char *name, httpd_check_fn fn, void *userdata);

/*
 * Bind, listen and start serving from the loop. 0 (also when disabled), or
 * a negative code: -EADDRINUSE, -EADDRNOTAVAIL, -EACCES... with the address
 * in the message; -EALREADY when already started.
 */
int httpd_start(struct httpd *srv, struct err *e);

/* The bound TCP port, 0 when not started or disabled. */
int httpd_port(const struct httpd *srv);

/* Stop serving: stop the watchers, close the listen socket and every connection. Idempotent. */
void httpd_stop(struct httpd *srv);
/* httpd_stop and free. NULL is fine. */
void httpd_free(struct httpd *srv);

/* Request accessors (valid during the handler call only). */
const char *httpd_request_method(const struct httpd_request *req);
const char *httpd_request_path(const struct httpd_request *req);
/* Body bytes (NUL-terminated; "" when none). */
const char *httpd_request_body(const struct httpd_request *req, size_t *len);
/* A request header (case-insensitive name), or NULL. */
const char *httpd_request_header(const struct httpd_request *req, const char *name);
/*
 * Query parameter: true when present (also for "?verbose" without a value);
 * *value (optional) is the value or NULL when given without one. For a
 * repeated key the first occurrence wins.
 */
bool httpd_request_query(const struct httpd_request *req, const char *key, const char **value);

#endif
