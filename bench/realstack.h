/*
 * realstack: what the real-stack benches (bench-dispatch --real, bench-scale --real) share.
 * Header only: each bench is one directory linked alone.
 */
#ifndef KKS_BENCH_REALSTACK_H
#define KKS_BENCH_REALSTACK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pkg/json/jsonx.h"
#include "pkg/quantity/quantity.h"

/* The kwok Node a bench adds to a worker, as scripts/realstack/stack.sh makes the stack's own
 * nodes (kwok's annotation, the `instance` label a ResourceFlavor selects): a new Node object
 * named `name`, labelled instance=`inst`, with cpu cores, mem_gi GiB and
 * room for `pods` pods. */
static inline json_t *bench_kwok_node(const char *name, const char *inst, int cpu, int mem_gi,
                                      int pods)
{
    char c[32], m[32], p[32];
    snprintf(c, sizeof c, "%d", cpu);
    snprintf(m, sizeof m, "%dGi", mem_gi);
    snprintf(p, sizeof p, "%d", pods);
    json_t *cap = json_pack("{s:s, s:s, s:s}", "cpu", c, "memory", m, "pods", p);
    return json_pack(
        "{s:s, s:s, s:{s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s, s:s}}, s:{s:O, s:o}}",
        "apiVersion", "v1", "kind", "Node", "metadata", "name", name, "annotations",
        "kwok.x-k8s.io/node", "fake", "node.alpha.kubernetes.io/ttl", "0", "labels", "type", "kwok",
        "instance", inst, "node.kubernetes.io/instance-type", inst, "kubernetes.io/hostname", name,
        "kubernetes.io/os", "linux", "kubernetes.io/arch", "amd64", "status", "capacity", cap,
        "allocatable", cap);
}

/* Whether ClusterQueue `cq`'s nominal CPU quota of flavor spot, which the operator's quota
 * controller sets from the workers' nodes, holds `milli` CPU: real Kueue reserves only what
 * fits, so the benches wait for it before creating their jobs. */
static inline bool bench_spot_cpu_holds(const json_t *cq, int64_t milli)
{
    struct qty need = qty_from_milli(milli, QTY_DECIMAL_SI), have = {0};
    const json_t *fl = jx_find_by(jx_arr(cq, "spec.resourceGroups[0].flavors"), "name", "spot");
    const json_t *cpu = jx_find_by(jx_arr(fl, "resources"), "name", "cpu");
    return cpu && qty_parse_json(json_object_get(cpu, "nominalQuota"), &have, NULL) == 0 &&
           have.nano >= need.nano;
}

#endif
