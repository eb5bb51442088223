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
 *
 * Fault injection (when srv_opts.faults is set): writes (POST, PUT, PATCH,
 * DELETE on API resources) fail at writeFailRate with 409/429/500 Status
 * bodies (429 with Retry-After); every API response is delayed by latencyMs;
 * paused holds API requests unanswered until resumed; watch streams are
 * closed cutWatchesEverySec after they started. /devhub/faults (GET the
 * settings, PUT/POST/PATCH a partial update) and the other /devhub/ endpoints are never
 * affected, so a paused server can be resumed.
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
    /* Fault injection settings (devhub/faults.h), borrowed and changed through
     * GET/PUT/POST /devhub/faults. NULL = no faults and no endpoint. */
    struct faults *faults;
    unsigned long long seed; /* RNG seed for fault decisions */
};

struct srv;

/* Bind and start serving. 0 or a negative code with e filled. */
int srv_start(struct srv **out, const struct srv_opts *o, struct err *e);
/* The bound port. */
int srv_port(const struct srv *s);
/* Apply the current fault settings (pause/resume, watch cutting) after the
 * struct faults was changed by the caller. */
void srv_faults_changed(struct srv *s);
/* Stop: ends watches, closes connections and frees. NULL ok. */
void srv_stop(struct srv *s);

#endif
