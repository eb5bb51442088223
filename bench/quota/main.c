/*
 * bench-quota: cost of the quota aggregation (controllers/quota/aggregate)
 * for 100 clusters x 100 nodes, 2 flavors x 3 resources:
 *   - incremental: one ClusterMetrics update + agg_compute,
 *   - full: agg_recompute_all + agg_compute.
 * Prints one JSON line and one human line. Options: --clusters N --nodes N --iters N.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/quota/aggregate.h"
#include "pkg/util/clock.h"
#include "pkg/json/jsonx.h"

static json_t *make_cm(int c, int nodes, int gen)
{
    char name[32];
    snprintf(name, sizeof name, "cluster%03d", c);
    json_t *arr = json_array();
    for (int i = 0; i < nodes; i++) {
        char nn[32], cpu[16], req[16];
        snprintf(nn, sizeof nn, "node%03d", i);
        snprintf(cpu, sizeof cpu, "%d", 32 + (i % 4) * 16);
        snprintf(req, sizeof req, "%dm", 1500 + ((i * 7 + gen) % 50) * 100);
        bool gpu = i % 5 == 0;
        json_t *n =
            json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}}", "name", nn,
                      "allocatableResources", "cpu", cpu, "memory", "251Gi", "nvidia.com/gpu",
                      gpu ? "8" : "0", "allocatedResourceRequests", "cpu", req, "memory", "12.5Gi",
                      "labels", "instance", gpu ? "h100" : "cpu", "kubernetes.io/hostname", nn);
        json_array_append_new(arr, n);
    }
    return json_pack("{s:{s:s}, s:{s:s, s:o}}", "metadata", "name", name, "status", "lastUpdated",
                     "2026-11-22T10:00:00Z", "nodes", arr);
}

static int arg(int argc, char **argv, const char *name, int def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return (int)strtol(argv[i + 1], NULL, 10);
    return def;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    jx_use_xalloc();
    int nclusters = arg(argc, argv, "--clusters", 100);
    int nnodes = arg(argc, argv, "--nodes", 100);
    int iters = arg(argc, argv, "--iters", 50);
    if (nclusters < 1 || nnodes < 1 || iters < 1) {
        fprintf(stderr, "usage: bench-quota [--clusters N] [--nodes N] [--iters N]\n");
        return 2;
    }
    const int64_t now = 1795341600000LL + 1000; /* 1 s after lastUpdated */
    struct agg_cfg cfg;
    agg_cfg_default(&cfg);
    struct agg *a = agg_new(&cfg);
    json_t *fl = json_loads("{\"metadata\":{\"name\":\"h100\"},\"spec\":{\"nodeLabels\":"
                            "{\"instance\":\"h100\"}}}",
                            0, NULL);
    agg_set_flavor(a, fl, NULL);
    json_decref(fl);
    json_t *cq = json_loads(
        "{\"metadata\":{\"name\":\"cq\"},\"spec\":{\"resourceGroups\":[{\"coveredResources\":"
        "[\"cpu\",\"memory\",\"nvidia.com/gpu\"],\"flavors\":["
        "{\"name\":\"h100\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"0\"},"
        "{\"name\":\"memory\",\"nominalQuota\":\"0\"},{\"name\":\"nvidia.com/gpu\","
        "\"nominalQuota\":\"0\"}]},"
        "{\"name\":\"default-flavor\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"0\"},"
        "{\"name\":\"memory\",\"nominalQuota\":\"0\"},{\"name\":\"nvidia.com/gpu\","
        "\"nominalQuota\":\"0\"}]}]}]}}",
        0, NULL);
    agg_set_queue(a, cq, NULL);
    for (int c = 0; c < nclusters; c++) {
        json_t *cm = make_cm(c, nnodes, 0);
        agg_update_cluster(a, cm, NULL, NULL);
        json_decref(cm);
    }
    struct agg_result r;
    agg_compute(a, now, &r);
    agg_result_free(&r);

    /* Pre-build the update objects so only the aggregation is timed. */
    json_t **upd = calloc((size_t)iters, sizeof *upd);
    for (int i = 0; i < iters; i++)
        upd[i] = make_cm(i % nclusters, nnodes, i + 1);
    uint64_t *inc = calloc((size_t)iters, sizeof *inc);
    uint64_t *full = calloc((size_t)iters, sizeof *full);
    size_t changes = 0;
    for (int i = 0; i < iters; i++) {
        uint64_t t0 = clock_mono_ns();
        agg_update_cluster(a, upd[i], NULL, NULL);
        agg_compute(a, now, &r);
        inc[i] = clock_mono_ns() - t0;
        changes += r.n_changes;
        agg_result_free(&r);
    }
    for (int i = 0; i < iters; i++) {
        uint64_t t0 = clock_mono_ns();
        agg_recompute_all(a);
        agg_compute(a, now, &r);
        full[i] = clock_mono_ns() - t0;
        agg_result_free(&r);
    }
    char total[64];
    agg_total(a, "default-flavor", "cpu", total, sizeof total);
    qsort(inc, (size_t)iters, sizeof *inc, cmp_u64);
    qsort(full, (size_t)iters, sizeof *full, cmp_u64);
    double inc_p50 = inc[iters / 2] / 1e3, inc_max = inc[iters - 1] / 1e3;
    double full_p50 = full[iters / 2] / 1e3, full_max = full[iters - 1] / 1e3;
    printf("{\"bench\":\"quota\",\"clusters\":%d,\"nodes_per_cluster\":%d,\"iters\":%d,"
           "\"incremental_us_p50\":%.1f,\"incremental_us_max\":%.1f,"
           "\"full_us_p50\":%.1f,\"full_us_max\":%.1f,\"speedup\":%.1f}\n",
           nclusters, nnodes, iters, inc_p50, inc_max, full_p50, full_max,
           inc_p50 > 0 ? full_p50 / inc_p50 : 0.0);
    printf("quota aggregation, %d clusters x %d nodes: one ClusterMetrics update %.0f us "
           "(p50, max %.0f us); full recompute %.0f us (p50, max %.0f us); %.1fx; "
           "default-flavor cpu total %s\n",
           nclusters, nnodes, inc_p50, inc_max, full_p50, full_max,
           inc_p50 > 0 ? full_p50 / inc_p50 : 0.0, total);
    for (int i = 0; i < iters; i++)
        json_decref(upd[i]);
    free(upd);
    free(inc);
    free(full);
    json_decref(cq);
    agg_free(a);
    (void)changes;
    return 0;
}
