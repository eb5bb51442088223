/*
 * nodes: the devhub's `--nodes SPEC` flag -> Ready Node objects.
 *
 * Grammar (spaces around tokens are ignored):
 *
 *   spec      = [count ("x" | "X" | "*")] item ("," item)* (";" section)*
 *   item      = resource "=" quantity          cpu=8, memory=32Gi, nvidia.com/gpu=1, pods=64
 *             | "label=" key "=" value          (the inline form of docs/devhub.md)
 *             | "taint=" taint
 *   section   = "labels=" key "=" value ("," key "=" value)*
 *             | "taints=" taint ("," taint)*
 *   taint     = key ["=" value] ":" ("NoSchedule" | "PreferNoSchedule" | "NoExecute")
 *
 * Examples:
 *   4xcpu=8,memory=32Gi,nvidia.com/gpu=2,label=instance=h100
 *   2 x cpu=8,memory=32Gi,nvidia.com/gpu=1;labels=instance=h100,zone=a;taints=gpu=true:NoSchedule
 *   cpu=4                     (one node)
 *
 * count defaults to 1 (at most NODES_MAX_COUNT). Quantities are Kubernetes
 * quantities (pkg/quantity), stored in canonical form; negative values are
 * refused. Defaults when absent: cpu=4, memory=16Gi, pods=110. Label keys,
 * label values and taint keys are validated like the apiserver does.
 *
 * Every node gets: capacity = allocatable; labels kubernetes.io/hostname,
 * kubernetes.io/os=linux, kubernetes.io/arch=amd64, the spec's labels, and
 * node.kubernetes.io/instance-type=<v> when the labels carry instance=<v> or
 * instance-type=<v>; conditions Ready=True (KubeletReady) and
 * MemoryPressure/DiskPressure/PIDPressure=False; addresses InternalIP
 * 10.<a>.<b>.<c> (a from the prefix, b.c from the index) and Hostname;
 * nodeInfo kubeletVersion v1.32.0. Names are <prefix>-node-<i>, i from 1.
 */
#ifndef KKS_DEVHUB_NODES_H
#define KKS_DEVHUB_NODES_H

#include <jansson.h>

#include "pkg/util/err.h"

#define NODES_MAX_COUNT       10000
#define NODES_KUBELET_VERSION "v1.32.0"

struct nodes_spec {
    unsigned count;
    json_t *resources; /* object name -> canonical quantity string (owned) */
    json_t *labels;    /* object key -> value (owned) */
    json_t *taints;    /* array of {key, value?, effect} (owned) */
};

/*
 * Parse one --nodes value. On success fills *out (release with
 * nodes_spec_release); on error returns -EINVAL with a message naming the
 * spec and the bad part, and *out is empty.
 */
int nodes_parse(const char *spec, struct nodes_spec *out, struct err *e);
void nodes_spec_release(struct nodes_spec *s);

/*
 * The Node object for node number `index` (1-based) of `prefix` (e.g. the
 * devhub --name), created at RFC 3339 `created` (used for creationTimestamp
 * and condition times). New reference. The caller's storage assigns uid
 * and resourceVersion.
 */
json_t *nodes_make(const struct nodes_spec *s, const char *prefix, unsigned index,
                   const char *created);

/*
 * Append s->count nodes numbered first_index, first_index+1, ... to the JSON
 * array `out` (borrowed). Returns the next free index.
 */
unsigned nodes_build(const struct nodes_spec *s, const char *prefix, unsigned first_index,
                     const char *created, json_t *out);

#endif
