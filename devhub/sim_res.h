/*
 * sim_res: resource lists and node matching shared by the devhub simulators
 * (job runner and Kueue emulator). A resource list is a JSON object
 * {"cpu": "500m", "memory": "1Gi", ...} of Kubernetes quantities, like
 * PodSpec requests or Node allocatable. Quantities that do not parse count
 * as zero (inputs come from API objects the simulators do not own).
 */
#ifndef KKS_DEVHUB_SIM_RES_H
#define KKS_DEVHUB_SIM_RES_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Effective requests of one pod spec (or Pod), by pkg/podres rules
 * (podres_pod: containers + sidecars vs init containers, limit-as-request,
 * pod-level resources, overhead). New reference: {} when none, and {} for a
 * malformed spec (a bad or negative quantity, containers not an array). */
json_t *simres_pod_requests(const json_t *podspec);

/* acc[r] += add[r] * times for every resource of add. acc is modified in place. */
void simres_add(json_t *acc, const json_t *add, int64_t times);
/* acc[r] -= sub[r] (clamped at zero is NOT applied; negatives stay). */
void simres_sub(json_t *acc, const json_t *sub);

/* True when, for every resource r requested non-zero in req, used[r] + req[r]
 * <= cap[r] (a resource missing from cap has capacity 0; used may be NULL).
 * On false, *short_of (optional) names the first resource that does not fit
 * (borrowed from req). */
bool simres_fits(const json_t *req, const json_t *used, const json_t *cap, const char **short_of);

/* Compare one resource in two lists: <0, 0, >0 (missing = 0). */
int simres_cmp(const json_t *a, const json_t *b, const char *resource);
/* True when every quantity in the list is zero (or the list is empty/NULL). */
bool simres_is_zero(const json_t *l);

/* nodeSelector (object key -> value) matched against labels; NULL/{} matches.
 * = sched_selector_matches_json (pkg/sched). */
bool simres_selector_matches(const json_t *node_selector, const json_t *labels);
/* True when `tolerations` (array, may be NULL) tolerate every taint of
 * `taints` with effect NoSchedule or NoExecute (PreferNoSchedule is ignored).
 * = sched_tolerates_all_json (pkg/sched, Kubernetes ToleratesTaint rules). */
bool simres_tolerates_all(const json_t *tolerations, const json_t *taints);

#endif
