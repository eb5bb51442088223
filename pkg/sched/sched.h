/*
 * sched: the node-matching rules of the Kubernetes scheduler, in one place:
 * toleration-vs-taint (k8s.io/api core/v1 Toleration.ToleratesTaint, the
 * TaintToleration filter) and nodeSelector / label matching (NodeAffinity's
 * spec.nodeSelector part). Pure: no I/O, no allocation.
 *
 * The per-pod resource arithmetic lives in pkg/podres; this module only
 * answers "may a pod with these tolerations / this nodeSelector go to a node
 * with these taints / labels".
 *
 * Taints and tolerations are passed as views: structs of borrowed strings,
 * which callers fill from their own representation (parsed structs, or JSON
 * with sched_taint_view / sched_toleration_view) without copying. A NULL
 * string in a view reads as "".
 *
 * Toleration rule (ToleratesTaint):
 *   - the effects must be equal, unless the toleration's effect is empty
 *     (then it matches every effect);
 *   - the keys must be equal, unless the toleration's key is empty (with
 *     Exists that tolerates every taint; the API server rejects an empty key
 *     with Equal, and this rule then compares values only, as Kubernetes does);
 *   - operator Exists ignores the value; Equal (or empty, the default)
 *     compares it; any other operator tolerates nothing.
 * Scheduling rule: only taints with effect NoSchedule or NoExecute keep a pod
 * off a node; PreferNoSchedule (a preference) and unknown effects do not.
 */
#ifndef KKS_PKG_SCHED_H
#define KKS_PKG_SCHED_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum sched_op {
    SCHED_OP_EQUAL = 0, /* "Equal" or "" (the default) */
    SCHED_OP_EXISTS,    /* "Exists" */
    SCHED_OP_INVALID    /* anything else: tolerates nothing */
};

/* A taint, strings borrowed. */
struct sched_taint {
    const char *key;
    const char *value;
    const char *effect; /* NoSchedule, PreferNoSchedule, NoExecute */
};

/* A toleration, strings borrowed. */
struct sched_toleration {
    const char *key; /* "" = any key (with Exists) */
    enum sched_op op;
    const char *value;
    const char *effect; /* "" = every effect */
};

/* "Equal"/""/NULL -> SCHED_OP_EQUAL, "Exists" -> SCHED_OP_EXISTS, else SCHED_OP_INVALID. */
enum sched_op sched_op_parse(const char *op);

/* True when toleration t tolerates taint (the rule above, any effect). */
bool sched_tolerates(const struct sched_toleration *t, const struct sched_taint *taint);

/* True when a taint with this effect keeps untolerating pods off the node:
 * NoSchedule or NoExecute. NULL is false. */
bool sched_effect_blocks(const char *effect);

/*
 * Views of a JSON taint ({"key","value","effect"}) or toleration
 * ({"key","operator","value","effect"}); strings borrowed from `j`. Lenient:
 * a field that is absent or not a string reads as "" (a toleration operator
 * that is not a string reads as SCHED_OP_INVALID). `j` not an object gives an
 * all-empty view.
 */
void sched_taint_view(const json_t *j, struct sched_taint *out);
void sched_toleration_view(const json_t *j, struct sched_toleration *out);

/* True when every NoSchedule/NoExecute taint of the JSON array `taints` is
 * tolerated by some toleration of the JSON array `tolerations`. Either may be
 * NULL or not an array (= empty); entries that are not objects read as
 * all-empty views. */
bool sched_tolerates_all_json(const json_t *tolerations, const json_t *taints);

/* True when `labels` (a JSON object of strings; NULL = no labels) has `key`
 * with a string value equal to `value`. */
bool sched_label_matches(const json_t *labels, const char *key, const char *value);

/* nodeSelector matching: true when every entry of the JSON object `selector`
 * (NULL or not an object = no constraint) is a string equal to the label of
 * the same key in `labels`. A non-string selector value matches nothing. */
bool sched_selector_matches_json(const json_t *selector, const json_t *labels);

#endif
