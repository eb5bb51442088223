/*
 * workers: the worker clusters of the direct transport (docs/design.md §1 "Worker
 * registration in direct mode"), on the hub client's libev loop.
 *
 * Workers come from
 *   - `--worker NAME=KUBECONFIG_PATH` (workers_add_file, before start; fixed
 *     for the life of the process), and
 *   - Secrets in the operator's namespace labelled kueue-ks.io/worker=true
 *     with the kubeconfig under data.kubeconfig and the cluster's name in the
 *     label `name` (required), watched by an informer on the hub: a new
 *     Secret adds a worker, a changed kubeconfig re-creates it, a deleted
 *     Secret removes it. A flag worker wins over a Secret of the same name.
 *     Secret kubeconfigs may not reference files or run exec plugins
 *     (kubeconfig_load_data defaults). With run_agents, removing a Secret
 *     worker also deletes its ClusterMetrics on the hub.
 * A worker's kubeconfig must use TLS with verification (https:// and no
 * insecure-skip-tls-verify) unless allow_insecure is set.
 *
 * Per worker: a kube_client; optionally an in-process ClusterMetrics agent
 * (controllers/agent/agent.h) writing ClusterMetrics <name> to the hub; one
 * informer per job kind of the kind table on the worker's copies (label
 * selector kueue-ks.io/origin=<origin>, all namespaces; batch/v1 Job:
 * kubestellar.io/cluster, every copy of a hub job, ours or another
 * kueue-ks's or KubeStellar's, the agent's selection: see below); and a reachability
 * probe (GET /version every probe_interval_s, no retries). A worker is
 * *reachable* while its probes succeed (it turns unreachable after two failed
 * probes in a row, so one lost probe is not an outage, also right after a
 * start) and its Job copies informer has synced. on_change(cluster) runs on the loop whenever a
 * worker is added, removed, becomes reachable / unreachable or known (workers_known); on_copy(obj,
 * how) for every add, update and delete of a copy on any worker (of ours: label
 * kueue-ks.io/origin=<origin>; an update that takes the label away is passed on too), with how
 * it came (workers_copy_event).
 *
 * Shared informers: each worker client has one informer cache (pkg/kube/cache.h)
 * through which the copies informers and the agent's Nodes, Pods and Jobs
 * informers are acquired. The Job copies informer and the agent's Job informer
 * are one (same selector kubestellar.io/cluster, same lean projection): one
 * list, one watch and one store per worker. Its store (workers_copies for
 * batch/v1 Job) therefore holds every hub-work Job on the worker; ours are the
 * ones with our origin label, listed by the store index XF_INDEX_ORIGIN (every
 * copies store has it). Removing a worker releases every registration: the
 * informers stop and go with the worker's cache; a re-registered worker gets
 * new ones.
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_WORKERS_H
#define KKS_CONTROLLERS_WORKLOAD_WORKERS_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "controllers/workload/kinds.h"
#include "controllers/workload/xf.h"
#include "pkg/json/jsonx.h"
#include "pkg/kube/client.h"
#include "pkg/kube/restconfig.h"
#include "pkg/kube/store.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

#define WORKERS_SECRET_LABEL "kueue-ks.io/worker"
#define WORKERS_SECRET_KEY   "kubeconfig"
#define WORKERS_NAME_LABEL   "name"
#define WORKERS_MAX_KINDS    32

struct jpack_tab;

struct workers_config {
    struct kube_client *hub;     /* borrowed, required: Secrets informer and agent writes */
    const char *ns;              /* operator namespace for worker Secrets; NULL/"" = none watched */
    const char *origin;          /* required: kueue-ks.io/origin of our copies */
    bool allow_insecure;         /* accept http:// or insecure-skip-tls-verify kubeconfigs */
    bool run_agents;             /* run one ClusterMetrics agent per worker */
    bool http1_only;             /* worker clients never offer HTTP/2 (--http2=false) */
    double probe_interval_s;     /* 0 = 5 s */
    double agent_min_interval_s; /* 0 = the agent's default */
    jx_lifetime_fn json_lifetime; /* for the agents (agent_opts); may be NULL */
    double informer_backoff_s;    /* 0 = the informer's default (tests shorten it) */
    /* The job kinds whose copies are watched (borrowed table entries, e.g. the
     * kinds the hub serves); NULL = batch/v1 Job only. Job is always watched. */
    const struct kind_def *const *kinds;
    size_t n_kinds;
    void (*on_change)(void *ud, const char *cluster); /* may be NULL; must not remove
                                                           workers (it runs in their tick) */
    /* may be NULL; obj borrowed; cluster: the worker's name (borrowed) */
    void (*on_copy)(void *ud, json_t *obj, const char *cluster, enum xf_copy_change how);
    /* True while the in-process agents wait (may be NULL: they do not): the hub's lists a
     * placement reads are not in, or placements are under way (a restart's first dispatches) */
    bool (*agents_hold)(void *ud);
    void *ud;
    const struct logger *lg; /* borrowed, may be NULL */
    /* Copies kept in packed stores (store.h), with this intern table (pkg/json/jpack.h;
     * borrowed, must outlive the workers; NULL = one per store). */
    bool packed;
    struct jpack_tab *tab;
};

struct workers;

/* Create (copies the config's strings). 0 or -EINVAL (no hub client / origin). */
int workers_new(const struct workers_config *cfg, struct workers **out, struct err *e);
/* Stop and free every worker (agents, informers, clients: pending calls on the
 * worker clients complete with -ECANCELED). Call before freeing the hub client.
 * NULL is fine. */
void workers_free(struct workers *w);

/* Register a worker from "NAME=KUBECONFIG_PATH". Loads and checks the file now:
 * -EINVAL (bad spec, insecure kubeconfig), -EEXIST (name taken) or the
 * loader's code, with a message naming the worker and file. */
int workers_add_file(struct workers *w, const char *spec, struct err *e);

/* Watch our copies of one more kind on every worker, now and for workers
 * registered later (k borrowed: it must outlive the workers). Started at once
 * on started workers. A worker that does not serve the kind never syncs that
 * informer, so workers_copies() stays NULL for it (the controller treats the
 * cluster as unusable for that kind). 0 (also when already watched), or
 * -ENOSPC beyond WORKERS_MAX_KINDS kinds / the informer's code. */
int workers_add_kind(struct workers *w, const struct kind_def *k, struct err *e);

/* Start every worker and the Secrets informer. A worker's in-process agent starts once its Job
 * copies informer has synced and cfg.agents_hold lets it (or the worker is known down, or 5 s
 * later): its Pod list, the biggest, comes after the lists a placement reads and after the
 * placements made from them. 0, or a negative code. */
int workers_start(struct workers *w, struct err *e);
/* Stop informers, agents and probes (workers stay registered). */
void workers_stop(struct workers *w);

/* The client of worker `name` (borrowed) when registered, else NULL. */
struct kube_client *workers_client(struct workers *w, const char *name);
/* The store of our copies of kind k on `name` (borrowed) when the worker is
 * reachable and that informer has synced, else NULL. For batch/v1 Job it holds
 * the other hub-work Jobs of the worker too (see above): filter with
 * xf_is_ours() or read the XF_INDEX_ORIGIN index. */
struct store *workers_copies(struct workers *w, const char *name, const struct kind_def *k);
bool workers_reachable(struct workers *w, const char *name);
/* True once this process knows worker `name`'s state: its Job copies informer
 * has synced once since the worker was added and its in-process agent (if any)
 * has written ClusterMetrics once (the hub's may be stale from before a
 * restart; 60 s after the worker's start at the latest), or its probes made it
 * unreachable; also true for a name that is not registered once the workers'
 * Secrets have been listed (it is known to be gone). Until then "not reachable"
 * only means "not heard from yet": a restarted operator must not count that
 * time as an outage (--worker-lost-timeout), nor flip the AdmissionCheck.
 * on_change runs when it turns true. */
bool workers_known(struct workers *w, const char *name);
/* The labels of worker `name`'s Secret (a new reference), or NULL (a --worker
 * flag worker, or unknown). For the cluster selector (clustersel.h). */
json_t *workers_labels(struct workers *w, const char *name);
/* The registered worker names, sorted, as a new JSON array of strings. */
json_t *workers_names(struct workers *w);
/* True when every registered worker is reachable (false when there are none). */
bool workers_all_reachable(struct workers *w);

/* ---- pure helpers (tested on their own) ---------------------------------- */

/* Split "NAME=PATH": *name and *path are new strings. -EINVAL with a message
 * when the spec has no '=', an empty side, or a name that is not a DNS label. */
int workers_parse_spec(const char *spec, char **name, char **path, struct err *e);
/* Refuse an insecure config (http://, or insecure-skip-tls-verify) unless
 * allow_insecure: -EINVAL with a message naming the worker and the flag. */
int workers_check_secure(const char *name, const struct kube_rest_config *cfg, bool allow_insecure,
                         struct err *e);
/* From a worker Secret (borrowed): *name (label `name`, new string) and the
 * decoded kubeconfig (*data new buffer, NUL-terminated, length *len).
 * -EINVAL with a message naming the Secret when the label, the key or the
 * base64 is missing or bad. */
int workers_from_secret(const json_t *secret, char **name, char **data, size_t *len, struct err *e);

#endif
