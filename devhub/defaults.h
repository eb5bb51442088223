/*
 * defaults: what kube-apiserver fills into a built-in object it stores
 * (scheme defaulting, the strategies' PrepareForCreate and the default
 * admission plugins), so `kubectl get -o yaml` and `kubectl describe` show
 * what they show against a real cluster.
 *
 *  - batch/v1 Job: parallelism / completions (both 1 when both unset,
 *    parallelism 1 otherwise), backoffLimit 6 (2147483647 with
 *    backoffLimitPerIndex), completionMode NonIndexed, suspend false,
 *    podReplacementPolicy (Failed with a podFailurePolicy, else
 *    TerminatingOrFailed), onPodConditions status True; unless
 *    spec.manualSelector: the pod template labels batch.kubernetes.io/job-name,
 *    job-name, batch.kubernetes.io/controller-uid, controller-uid and
 *    spec.selector = {matchLabels: {batch.kubernetes.io/controller-uid: <uid>}}
 *    (a selector or uid label the user wrote that is not the generated one is
 *    422 as the apiserver's generated-selector validation says); the Job's
 *    labels are the template's when it has none; status {} (Jobs and
 *    Deployments read back with an empty status until a controller writes).
 *  - Pod specs (Pods, Job and Deployment templates): dnsPolicy ClusterFirst,
 *    restartPolicy Always, securityContext {}, schedulerName default-scheduler,
 *    terminationGracePeriodSeconds 30; containers: imagePullPolicy (Always
 *    for no tag or :latest, else IfNotPresent), terminationMessagePath
 *    /dev/termination-log, terminationMessagePolicy File, resources {},
 *    ports' protocol TCP.
 *  - Pods only: enableServiceLinks true, requests copied from limits where
 *    unset, priority 0, preemptionPolicy PreemptLowerPriority,
 *    serviceAccountName/serviceAccount default, the not-ready/unreachable
 *    NoExecute tolerations for 300 s, status.phase Pending, status.qosClass.
 *  - apps/v1 Deployment: replicas 1, strategy RollingUpdate 25%/25%,
 *    revisionHistoryLimit 10, progressDeadlineSeconds 600.
 *  - Namespace: spec.finalizers [kubernetes]. Secret: type Opaque.
 */
#ifndef KKS_DEVHUB_DEFAULTS_H
#define KKS_DEVHUB_DEFAULTS_H

#include <jansson.h>
#include <stdbool.h>

#include "devhub/validate.h"

/*
 * Default a new built-in object of group/kind (metadata.name and uid already
 * set). 0, or -EINVAL with r filled (422) for a Job whose selector or
 * controller-uid label is not the one the apiserver generates.
 */
int dflt_create(const char *group, const char *kind, json_t *obj, struct valid_result *r);

/*
 * Default an updated built-in object (the decode-time defaults; no selector
 * is generated). 0, or -EINVAL with r filled (422 `spec.selector: Required
 * value`) for a Job without spec.selector.
 */
int dflt_update(const char *group, const char *kind, json_t *obj, struct valid_result *r);

/* Drop empty or null metadata labels, annotations, finalizers, ownerReferences,
 * managedFields (omitempty in the apiserver's encoding); any kind. */
void dflt_meta(json_t *obj);

/* Pod QoS class of a pod spec: "Guaranteed", "Burstable" or "BestEffort". */
const char *dflt_qos_class(const json_t *podspec);

#endif
