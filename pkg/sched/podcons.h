/*
 * podcons: which inter-pod constraints of a pod template placement can judge
 * from ClusterMetrics (node inventory only, no pods) and which it cannot.
 * Pure: no I/O.
 *
 * Judged: a required pod anti-affinity term
 * (podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution) with
 * topologyKey kubernetes.io/hostname whose labelSelector matches the
 * template's own labels, in the pod's own namespace (no namespaces, no
 * namespaceSelector, no mismatchLabelKeys): the pods of the pod set repel
 * each other, so at most one of them goes on a node (`one_per_node`). Other
 * pods on the worker are not visible in ClusterMetrics and are not counted.
 *
 * Not judged (named in `left`, placement places on capacity and says that
 * the worker's scheduler decides): required pod affinity, every other
 * required anti-affinity term, preferred pod (anti-)affinity, and
 * topologySpreadConstraints.
 */
#ifndef KKS_PKG_SCHED_PODCONS_H
#define KKS_PKG_SCHED_PODCONS_H

#include <jansson.h>
#include <stdbool.h>

#define PODCONS_HOSTNAME_KEY "kubernetes.io/hostname"

struct podcons {
    bool one_per_node; /* see above */
    char *left; /* owned: e.g. "required pod affinity, topology spread (zone)"; NULL = none */
};

/* From a pod template ({metadata:{labels}, spec:{affinity, topologySpreadConstraints}},
 * borrowed). Never fails: a malformed field is named in `left` as not judged. */
void podcons_from_template(const json_t *tmpl, struct podcons *out);
void podcons_free(struct podcons *pc);

#endif
