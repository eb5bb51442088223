/*
 * manager: the process lifecycle of `kueue-ks run` (and the agent), in the
 * spirit of controller-runtime's Manager, on one libev loop:
 *
 *   1. load the kubeconfig (or in-cluster config) and create the REST client;
 *   2. probe the API server (GET /version) and fail fast with one clear line
 *      when it cannot be reached or refuses our credentials;
 *   3. serve /metrics and /healthz + /readyz (pkg/httpd);
 *   4. with leader election, start the runnables only while leading (a lost
 *      lease ends the process, as client-go recommends); without, at once;
 *   5. on SIGTERM/SIGINT stop the runnables, release the Lease (bounded
 *      time) and return exit code 0.
 * Meanwhile the heap is trimmed (malloc_trim: glibc keeps the pages of freed lists resident
 * otherwise) when 1 MB more is free than at the last trim, looked at every 5 s during the
 * first minute, then every minute; the give-back hook (mgr_set_give_back) runs at each look and
 * after each of the informers' coalesced trims and releases (pkg/util/heaptrim.h).
 *
 * Runnables are the controllers; they get the client and metrics registry
 * from the manager and register their own readiness checks.
 */
#ifndef KKS_MANAGER_MANAGER_H
#define KKS_MANAGER_MANAGER_H

#include <ev.h>
#include <stdbool.h>

#include "pkg/httpd/httpd.h"
#include "pkg/kube/client.h"
#include "pkg/metrics/metrics.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

struct mgr;

struct mgr_options {
    const char *kubeconfig;   /* --kubeconfig, NULL = $KUBECONFIG / ~/.kube/config / in-cluster */
    const char *context;      /* --context */
    const char *metrics_bind; /* --metrics-bind-address, "0" disables */
    const char *health_bind;  /* --health-probe-bind-address, "0" disables */
    bool leader_elect;        /* --leader-elect */
    const char *le_namespace; /* --leader-election-namespace ("" = kubeconfig/pod namespace) */
    const char *le_id;        /* Lease name */
    double lease_duration_s;  /* 0 = defaults (15/10/2) */
    double renew_deadline_s;
    double retry_period_s;
    double qps; /* client QPS/burst (0 = defaults) */
    int burst;
    bool http1_only;        /* --http2=false: the clients never offer HTTP/2 */
    double probe_timeout_s; /* start-up probe timeout, 0 = 10 s */
    /* An API server that cannot be reached at start is asked again with backoff (1 s doubling
     * to 30 s, a warning each time), as client-go's informers and leader election do, so a
     * control-plane restart does not crash-loop the operator. > 0: give up after this many
     * seconds (exit 1); 0: keep trying (--startup-timeout). */
    double startup_timeout_s;
};

/* A controller (or any component) started while leading. */
struct mgr_runnable {
    const char *name; /* borrowed; static string */
    /* Start on the loop. 0 or negative with `e` filled (the manager then exits 1). */
    int (*start)(void *ud, struct mgr *m, struct err *e);
    /* Stop: stop taking work; in-flight writes may finish. Called once, on the loop. */
    void (*stop)(void *ud);
    void *ud;
};

/*
 * Load the configuration and create the client, metrics registry and HTTP
 * servers (not started yet). Errors name the kubeconfig file and field.
 * `lg` is borrowed and must outlive the manager.
 */
int mgr_new(struct ev_loop *loop, const struct mgr_options *o, const struct logger *lg,
            struct mgr **out, struct err *e);
void mgr_free(struct mgr *m);

/* Register a runnable (before mgr_run). The struct is copied. */
void mgr_add_runnable(struct mgr *m, const struct mgr_runnable *r);

/* fn(ud) gives back memory the process keeps apart from malloc's heap (main's JSON pool) at
 * each look at the heap and after each coalesced trim; fn NULL: none. */
void mgr_set_give_back(struct mgr *m, void (*fn)(void *ud), void *ud);

/* Run the loop until shutdown; returns the process exit code. */
int mgr_run(struct mgr *m);

/* Ask the manager to stop with `code` (e.g. a fatal controller error). */
void mgr_shutdown(struct mgr *m, int code);

/* Accessors (borrowed). */
struct kcache;
struct kube_client *mgr_client(struct mgr *m);
/* The shared informer cache over mgr_client (pkg/kube/cache.h): runnables
 * that watch the same resource share one list and watch through it. Its
 * users release their registrations before mgr_free(). */
struct kcache *mgr_cache(struct mgr *m);
struct metrics_registry *mgr_metrics(struct mgr *m);
struct httpd *mgr_health(struct mgr *m); /* may be NULL when disabled */
const char *mgr_namespace(const struct mgr *m);
const struct logger *mgr_logger(const struct mgr *m);
struct ev_loop *mgr_loop(const struct mgr *m);
bool mgr_is_leader(const struct mgr *m);

#endif
