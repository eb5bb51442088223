/*
 * clustersel: which worker clusters a job may use, by their labels. Pure.
 *
 * The selector is the annotation kueue-ks.io/cluster-selector (label-selector
 * syntax of pkg/labels: "location-group=eu,gpu-vendor in (nvidia)") on the
 * hub job; when the job has none, the same annotation on the ClusterQueue
 * that admitted the workload is the default. No annotation (or "") = every
 * cluster. Both transports.
 *
 * A cluster's labels: name=<cluster name>, the labels of its ClusterMetrics
 * object (metadata.labels, for clusters registered outside kueue-ks, e.g.
 * KubeStellar ManagedClusters mirrored there), and the extra labels the
 * driver knows (with the direct transport: the worker Secret's labels);
 * later sources win on equal keys, `name` always is the cluster's name.
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_CLUSTERSEL_H
#define KKS_CONTROLLERS_WORKLOAD_CLUSTERSEL_H

#include <jansson.h>

#include "pkg/labels/sel.h"
#include "pkg/util/err.h"

#define CLSEL_ANNOTATION "kueue-ks.io/cluster-selector"

/*
 * The selector in force for `job` (borrowed), with `cq` (the ClusterQueue,
 * borrowed, may be NULL) as the default. *out: a new selector, or NULL when
 * every cluster may be used; *text (borrowed from the object) and *from
 * ("job" / "ClusterQueue <name>", static or borrowed) describe it. Returns 0,
 * or -EINVAL with a message naming the object and the parse error.
 */
int clsel_for(const json_t *job, const json_t *cq, struct sel **out, const char **text,
              const char **from, struct err *e);

/* The labels of cluster `name` (see above): a new JSON object. `cm` and
 * `extra` are borrowed and may be NULL; non-string values are skipped. */
json_t *clsel_cluster_labels(const char *name, const json_t *cm, const json_t *extra);

#endif
