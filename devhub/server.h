/*
 * server: the devhub's HTTPS front end. libmicrohttpd in external-select mode
 * (MHD_USE_EPOLL, no MHD threads) driven from the caller's libev loop: one
 * ev_io on MHD's epoll fd and one ev_timer for MHD_get_timeout. Everything -
 * HTTP, the hub's timers and later simulators - runs on one thread, so the
 * hub needs no locks. Watch responses are chunked callback responses; when a
 * watcher has nothing to send its connection is suspended and resumed by the
 * hub's notify callback, so idle watches cost nothing and never block other
 * requests.
 *
 * Authentication: a client certificate verified against the instance CA
 * (MHD_OPTION_HTTPS_MEM_TRUST + gnutls_certificate_verify_peers2), or
 * `Authorization: Bearer <token>` when a token is configured. Anything else
 * gets 401 with a Status body. /healthz, /readyz and /livez are served
 * anonymously, like the apiserver's default RBAC allows.
 */
#ifndef KKS_DEVHUB_SERVER_H
#define KKS_DEVHUB_SERVER_H

#include <ev.h>

#include "devhub/hub.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

struct srv_opts {
    struct ev_loop *loop;    /* borrowed */
    struct hub *hub;         /* borrowed */
    const struct logger *lg; /* borrowed, may be NULL */
    const char *host;        /* listen address: a loopback IPv4 literal */
    int port;                /* 0 = ephemeral */
    const char *cert_pem;    /* serving certificate */
    const char *key_pem;     /* serving key */
    const char *ca_pem;      /* CA that signs client certificates */
    const char *token;       /* bearer token, NULL = none accepted */
    /* Optional hook run before each API request (fault injection): return 0
     * to continue, or an HTTP status to fail with (message in *msg, static).
     * delay_ms (out) adds latency. NULL = none. */
    int (*before)(void *userdata, const char *method, const char *path, const char **msg,
                  const char **reason, double *delay_s);
    void *before_userdata;
};

struct srv;

/* Bind and start serving. 0 or a negative code with e filled. */
int srv_start(struct srv **out, const struct srv_opts *o, struct err *e);
/* The bound port. */
int srv_port(const struct srv *s);
/* Pause (stop answering: requests wait) or resume. */
void srv_set_paused(struct srv *s, int paused);
/* Close every watch stream now (fault injection / shutdown). */
void srv_cut_watches(struct srv *s);
/* Stop: ends watches, closes connections and frees. NULL ok. */
void srv_stop(struct srv *s);

#endif
