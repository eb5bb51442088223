/*
 * podres: what one pod takes from its node, as the Kubernetes scheduler
 * computes it (k8s.io/component-helpers resource.PodRequests/PodLimits), with
 * exact quantities (pkg/quantity). Pure: no I/O, no clock.
 *
 * Effective requests of a pod, per resource:
 *
 *   max( sum over containers + sum over sidecars,
 *        max over init containers i of (request_i + sidecars started before i) )
 *   (pod-level spec.resources.requests replace that figure for the resources
 *    they name, Kubernetes >= 1.32 PodLevelResources)
 *   + spec.overhead
 *
 * where a sidecar is an init container with restartPolicy: Always
 * (Kubernetes >= 1.29): it keeps running, so it adds to the regular
 * containers and to every init container started after it. A container that
 * sets a limit but no request for a resource requests its limit (the API
 * server's defaulting, which a development API server may not apply).
 * Limits follow the same rule, and the overhead is added only to resources
 * that have a limit (as Kubernetes does: no limit means unlimited).
 *
 * A pod counts on a node when it is bound (spec.nodeName set) and not
 * terminal (status.phase not Succeeded/Failed): Pending-bound and Running
 * pods hold their requests, as the scheduler assumes.
 *
 * Resource lists keep their entries sorted by name; sums keep the first
 * operand's format (pkg/quantity rules) so "1.5Gi" + "512Mi" prints "2Gi"
 * and "500m" + "1" prints "1500m".
 */
#ifndef KKS_PKG_PODRES_H
#define KKS_PKG_PODRES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pkg/quantity/quantity.h"
#include "pkg/util/err.h"

struct podres_item {
    char *name; /* owned */
    struct qty q;
};

/* Resource name -> quantity, sorted by name. Zero-initialise; free with podres_free. */
struct podres_list {
    struct podres_item *v;
    size_t n, cap;
};

void podres_free(struct podres_list *l);
/* The quantity for `name` (borrowed), or NULL. */
const struct qty *podres_get(const struct podres_list *l, const char *name);
/* Set l[name] = q. */
void podres_set(struct podres_list *l, const char *name, const struct qty *q);
/* l[name] += q (absent = 0). 0 or -ERANGE (l unchanged). */
int podres_add(struct podres_list *l, const char *name, const struct qty *q, struct err *e);
/* l[name] = max(l[name], q) (absent: set). */
void podres_max(struct podres_list *l, const char *name, const struct qty *q);
/* dst += src, per resource. 0 or -ERANGE. */
int podres_add_list(struct podres_list *dst, const struct podres_list *src, struct err *e);
/* dst = max(dst, src), per resource. */
void podres_max_list(struct podres_list *dst, const struct podres_list *src);
/* Deep copy of src into dst (dst freed first). */
void podres_copy(struct podres_list *dst, const struct podres_list *src);
/* Equal names and values (formats ignored). */
bool podres_equal(const struct podres_list *a, const struct podres_list *b);

/*
 * Add a JSON resource map ({"cpu": "500m", "memory": 1073741824}; NULL or
 * null is empty) into `out` (summing). Negative values and quantities that do
 * not parse are -EINVAL (-ERANGE when out of range) with a message naming
 * `what` and the resource; on error `out` may hold the entries added before
 * the bad one.
 */
int podres_add_json(struct podres_list *out, const json_t *obj, const char *what, struct err *e);
/* {"name": "<canonical quantity>", ...}, keys sorted. New reference. */
json_t *podres_to_json(const struct podres_list *l);

/*
 * The effective requests and limits of a pod (or of a bare pod spec: `pod`
 * may be the Pod or its .spec), per the rule at the top. `req` and `lim`
 * (either may be NULL) are freed and refilled. 0, or -EINVAL for a malformed
 * pod (containers not an array, a bad or negative quantity...) or -ERANGE for
 * a quantity or sum out of range, with a message naming the container and
 * field; the lists are then empty.
 */
int podres_pod(const json_t *pod, struct podres_list *req, struct podres_list *lim, struct err *e);

/* True when the pod holds node resources: spec.nodeName set and
 * status.phase not Succeeded/Failed. */
bool podres_pod_counts(const json_t *pod);

#endif
