/*
 * jv: the text of `kueue-ks explain KIND/NAME` (cmd/kueue-ks/explain.c
 * reads the objects, this renders them): Kueue's state for the job (queue,
 * ClusterQueue, quota reservation, priority), our admission check, where the
 * job is placed and what its worker copy reported, and the per-cluster fit
 * table (explain.h: fits now / fits when empty / never / unknown, needed per
 * pod vs the largest free and allocatable amount on a matching node) with the
 * one-line verdict. Pure: the same objects give the same text
 * (test_jv.c checks it exactly).
 */
#ifndef KKS_CONTROLLERS_WORKLOAD_JV_H
#define KKS_CONTROLLERS_WORKLOAD_JV_H

#include <jansson.h>
#include <stdint.h>

#include "pkg/util/buf.h"

struct jv_input {
    const json_t *job;              /* required: the hub job (any kind) */
    const json_t *workload;         /* its Workload, NULL = none yet */
    const json_t *local_queue;      /* the LocalQueue it names, NULL = not found */
    const json_t *cluster_metrics;  /* ClusterMetrics list ({"items":[...]}), NULL = none */
    const json_t *flavors;          /* ResourceFlavor list, NULL = none */
    const json_t *admission_checks; /* AdmissionCheck list, NULL = none */
    /* ClusterQueue list, NULL = none: the default cluster selector (clustersel.h) */
    const json_t *cluster_queues;
    int64_t now_ms;         /* wall clock, for metrics freshness */
    int64_t stale_after_ms; /* metrics older than this: cannot judge (0 = 60000) */
};

/* Render into `out`. 0, or -EINVAL without a job. */
int jv_render(const struct jv_input *in, struct buf *out);

#endif
