/*
 * acc: the AdmissionCheck controller's pure decision (DESIGN §5.1).
 *
 * For every AdmissionCheck with spec.controllerName ACC_CONTROLLER_NAME,
 * keep the condition Active:
 *   True,  reason "Active",           while at least one worker cluster is usable;
 *   False, reason "NoUsableClusters", otherwise (the message says how many are
 *          registered and why none is usable), so Kueue marks the ClusterQueues
 *          that use the check inactive instead of admitting work nobody can run.
 * Only Active is written: the SingleInstanceInClusterQueue / FlavorIndependent
 * conditions of the Go original no longer exist in Kueue (>= v0.12), and other
 * conditions are left as they are.
 *
 * The write is a JSON merge patch for the status subresource carrying the
 * whole status.conditions list (arrays are replaced whole by a merge patch)
 * and metadata.resourceVersion as a precondition, so a concurrent writer
 * causes a 409 and a requeue rather than a lost condition.
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_ACC_H
#define KKS_CONTROLLERS_WORKLOAD_ACC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/err.h"

#define ACC_CONTROLLER_NAME "kubestellar.io/ks-kueue"

/* True when ac is an AdmissionCheck with our controllerName. */
bool acc_is_ours(const json_t *ac);

/*
 * Decide the Active condition of `ac` given `n_usable` usable workers out of
 * `n_registered`. `now` (RFC 3339) is the lastTransitionTime for a changed
 * status (NULL = current time). On a change: returns 1 and *patch (new
 * reference) is the merge patch; when the condition is already right: 0 and
 * *patch NULL. -EINVAL (e filled) when ac is not ours or has no name.
 */
int acc_decide(const json_t *ac, size_t n_usable, size_t n_registered, const char *now,
               json_t **patch, struct err *e);

#endif
