/*
 * affinity: a pod's node affinity (spec.affinity.nodeAffinity) as
 * kube-scheduler's NodeAffinity plugin applies it
 * (k8s.io/component-helpers/scheduling/corev1/nodeaffinity). Pure: no I/O.
 * spec.nodeSelector is not part of this module (sched.h matches it); a pod
 * fits a node when both match.
 *
 * Required (requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms):
 *   - absent (no affinity, no nodeAffinity, no required field): every node;
 *   - terms are ORed, the expressions of a term ANDed;
 *   - a term with neither matchExpressions nor matchFields is dropped; a
 *     required field whose terms are all dropped (or empty) matches NO node;
 *   - matchExpressions: In / NotIn (values non-empty; NotIn also matches a
 *     node without the key), Exists / DoesNotExist (no values), Gt / Lt
 *     (exactly one integer value; the node's label must hold an integer
 *     greater / less than it, else no match); keys and values must be valid
 *     label keys / values;
 *   - matchFields: only In / NotIn with exactly one value; the only node
 *     field is metadata.name (any other key reads as the empty string); a
 *     node without a name skips the field check, as upstream does;
 *   - a term with any invalid expression (unknown operator, wrong number of
 *     values, Gt/Lt value that is not an integer, bad key/value) never
 *     matches; the other terms still do (the scheduler's "lazy error"
 *     selector). affinity_errors() names every such problem.
 * Preferred (preferredDuringSchedulingIgnoredDuringExecution[]): a term with
 * weight 0 or an empty preference is ignored; an invalid one is ignored and
 * named by affinity_errors(); the score of a node is the sum of the weights
 * of the terms it matches (the scheduler's raw NodeAffinity score).
 *
 * Hostile input never crashes: a field of the wrong JSON type is reported in
 * affinity_errors() like an invalid expression (its term never matches).
 */
#ifndef KKS_PKG_SCHED_AFFINITY_H
#define KKS_PKG_SCHED_AFFINITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "pkg/util/err.h"

struct affinity;

/*
 * Compile a pod spec's `affinity` object (borrowed; NULL or JSON null = no
 * affinity). *out is new (free with affinity_free). Returns 0, or -EINVAL
 * when `affinity` (or its nodeAffinity) is not an object; content errors
 * below that are not failures (see above).
 */
int affinity_from_json(const json_t *affinity, struct affinity **out, struct err *e);
void affinity_free(struct affinity *a);

/* True when a required node affinity is set (it may match no node). */
bool affinity_has_required(const struct affinity *a);
/* True when the node (name may be NULL or "", labels a JSON object of
 * strings, NULL = none) satisfies the required node affinity. NULL a = true. */
bool affinity_required_matches(const struct affinity *a, const char *node_name,
                               const json_t *labels);
/* Sum of the weights of the valid preferred terms the node matches. */
int64_t affinity_preferred_score(const struct affinity *a, const char *node_name,
                                 const json_t *labels);
/* Sum of the weights of all valid preferred terms (0: no preference). */
int64_t affinity_preferred_total(const struct affinity *a);

/* The required terms as text, for "why not" messages (borrowed, "" when none):
 *   (gpu In [a100,h100], zone Exists) or (metadata.name NotIn [n1])
 * An invalid term reads "(invalid)". */
const char *affinity_required_text(const struct affinity *a);
/* The content errors, "; "-separated with their field paths, e.g.
 *   nodeSelectorTerms[0].matchExpressions[1].operator: "Foo" is not one of In,
 *   NotIn, Exists, DoesNotExist, Gt, Lt
 * or NULL when there are none (borrowed). */
const char *affinity_errors(const struct affinity *a);

#endif
