/*
 * vocab: the scheduling vocabulary shared by the workload controller's
 * placement (controllers/workload/placement) and the quota computation
 * (controllers/quota/aggregate): label pairs, taints, tolerations and
 * ResourceFlavors parsed from JSON, the matching rules over them (thin
 * wrappers over pkg/sched), and the capped list of warnings about bad data
 * that both record. No I/O.
 */
#ifndef KKS_PKG_SCHED_VOCAB_H
#define KKS_PKG_SCHED_VOCAB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/err.h"

struct vocab_kv {
    char *key;   /* owned */
    char *value; /* owned */
};

struct vocab_taint {
    char *key;    /* owned, never NULL ("" when absent) */
    char *value;  /* owned, never NULL */
    char *effect; /* owned, never NULL: NoSchedule, PreferNoSchedule, NoExecute */
};

struct vocab_toleration {
    char *key;    /* owned, "" = any key (with Exists) */
    bool exists;  /* operator Exists; false = Equal (the default) */
    char *value;  /* owned, never NULL */
    char *effect; /* owned, "" = every effect */
};

/* Warnings about skipped bad data (converters record, never fail for it). */
struct vocab_warnings {
    char **msg; /* owned strings, at most VOCAB_WARN_MAX kept */
    size_t n;
    size_t dropped; /* warnings beyond the cap, counted only */
};
#define VOCAB_WARN_MAX 64

void vocab_warnings_add(struct vocab_warnings *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vocab_warnings_free(struct vocab_warnings *w);

/*
 * Kubernetes toleration matching (k8s.io/api core/v1 Toleration.ToleratesTaint):
 * the effect must be equal unless the toleration's effect is empty; the key
 * must be equal unless the toleration's key is empty (which with Exists
 * tolerates every taint); Exists ignores the value, Equal compares it.
 * Thin wrappers over pkg/sched (the one implementation of these rules).
 */
bool vocab_toleration_matches(const struct vocab_toleration *t, const struct vocab_taint *taint);
/* True when `taint` does not block scheduling (effect PreferNoSchedule) or
 * one of the tolerations in either list tolerates it. Lists may be empty. */
bool vocab_taint_tolerated(const struct vocab_taint *taint, const struct vocab_toleration *a,
                           size_t na, const struct vocab_toleration *b, size_t nb);
/* True when every want[i] is present with an equal value in `labels` (a JSON
 * object of strings, NULL = no labels). n == 0 matches every node. */
bool vocab_labels_match(const json_t *labels, const struct vocab_kv *want, size_t n);

/* Parse `taints` / `tolerations` JSON arrays (NULL or absent = empty). On a
 * malformed entry: -EINVAL and a message naming `what` and the index. The
 * output arrays are new (free with the matching _free). */
int vocab_taints_from_json(const json_t *arr, const char *what, struct vocab_taint **out, size_t *n,
                           struct err *e);
void vocab_taints_free(struct vocab_taint *t, size_t n);
int vocab_tolerations_from_json(const json_t *arr, const char *what, struct vocab_toleration **out,
                                size_t *n, struct err *e);
void vocab_tolerations_free(struct vocab_toleration *t, size_t n);
/* Parse a string→string JSON object (NULL = empty) into a kv array sorted by key. */
int vocab_kvs_from_json(const json_t *obj, const char *what, struct vocab_kv **out, size_t *n,
                        struct err *e);
void vocab_kvs_free(struct vocab_kv *kv, size_t n);

/* ---- ResourceFlavor ---------------------------------------------------- */

struct vocab_flavor {
    char *name; /* owned */
    struct vocab_kv *node_labels;
    size_t n_node_labels;
    struct vocab_taint *node_taints;
    size_t n_node_taints;
    struct vocab_toleration *tolerations;
    size_t n_tolerations;
};

/* From a ResourceFlavor object (metadata.name, spec.nodeLabels, spec.nodeTaints,
 * spec.tolerations). 0, or -EINVAL with a message; *out is then empty. */
int vocab_flavor_from_json(const json_t *rf, struct vocab_flavor *out, struct err *e);
void vocab_flavor_free(struct vocab_flavor *f);

/* True when a ClusterMetrics status has been reported: `status` is an object
 * holding status.lastUpdated or a status.nodes array (the galaxy agent
 * writes nodes without lastUpdated). An object created without status (its
 * producer's status write not made yet) has reported nothing: it is not a
 * cluster with 0 nodes. The quota uses the same rule. */
bool vocab_status_reported(const json_t *status);

#endif
