/*
 * bench-placement: cost of one placement decision (controllers/workload/placement)
 * for a burst of workloads over 100 clusters x 100 nodes, each decision held as
 * a reservation so later ones see the earlier ones (up to 1000 reservations).
 * The same decisions are first timed with no reservation held (the baseline of
 * this run): held_ratio = cost with the burst's reservations held / cost
 * without, which stays near 1 when a decision does not walk the reservations
 * (the machine is shared: ratios, not absolute times, are comparable).
 * Prints one JSON line and one human line. Options: --clusters N --nodes N --jobs N
 * --node-cpu N (allocatable cpu per node, default 32; memory is 4Gi and pods 4
 * per cpu: raise it so a large burst fits, as in bench-dispatch).
 * For repeatable CPU figures run it under `valgrind --tool=callgrind` at two
 * --jobs values and compare instructions per decision.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/placement.h"
#include "pkg/util/clock.h"
#include "pkg/json/jsonx.h"

static int arg(int argc, char **argv, const char *name, int def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return (int)strtol(argv[i + 1], NULL, 10);
    return def;
}

int main(int argc, char **argv)
{
    jx_use_xalloc();
    int nc = arg(argc, argv, "--clusters", 100);
    int nn = arg(argc, argv, "--nodes", 100);
    int nj = arg(argc, argv, "--jobs", 1000);
    int ncpu = arg(argc, argv, "--node-cpu", 32);
    if (nc < 1 || nn < 1 || nj < 1 || ncpu < 1) {
        fprintf(stderr, "usage: bench-placement [--clusters N] [--nodes N] [--jobs N] "
                        "[--node-cpu N]\n");
        return 2;
    }
    struct place_cluster *cs = calloc((size_t)nc, sizeof *cs);
    for (int c = 0; c < nc; c++) {
        json_t *arr = json_array();
        for (int i = 0; i < nn; i++) {
            char name[32], req[16], cpu[24], mem[24], pods[24];
            snprintf(cpu, sizeof cpu, "%d", ncpu);
            snprintf(mem, sizeof mem, "%dGi", ncpu * 4);
            snprintf(pods, sizeof pods, "%d", ncpu * 4);
            snprintf(name, sizeof name, "node%03d", i);
            snprintf(req, sizeof req, "%dm", (i * 37 + c * 11) % 8000);
            json_array_append_new(arr, json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s}, s:{s:s}}",
                                                 "name", name, "allocatableResources", "cpu", cpu,
                                                 "memory", mem, "pods", pods,
                                                 "allocatedResourceRequests", "cpu", req, "memory",
                                                 "8Gi", "labels", "kubernetes.io/hostname", name));
        }
        char name[32];
        snprintf(name, sizeof name, "cluster%03d", c);
        json_t *cm = json_pack("{s:{s:s}, s:{s:s, s:o}}", "metadata", "name", name, "status",
                               "lastUpdated", "2026-11-22T10:00:00Z", "nodes", arr);
        if (place_cluster_from_json(cm, &cs[c], NULL, NULL) != 0)
            return 1;
        json_decref(cm);
    }
    /* Pre-convert the workloads so only the decision is timed. */
    struct place_workload *ws = calloc((size_t)nj, sizeof *ws);
    for (int j = 0; j < nj; j++) {
        char s[512];
        snprintf(s, sizeof s,
                 "{\"metadata\":{\"name\":\"job%d\",\"namespace\":\"ns\"},\"spec\":{\"podSets\":"
                 "[{\"count\":%d,\"template\":{\"spec\":{\"containers\":[{\"resources\":"
                 "{\"requests\":{\"cpu\":\"1500m\",\"memory\":\"3Gi\"}}}]}}}]}}",
                 j, 1 + j % 8);
        json_t *wj = json_loads(s, 0, NULL);
        if (place_workload_from_json(wj, &ws[j], NULL) != 0)
            return 1;
        json_decref(wj);
    }
    struct place_resv rv;
    place_resv_init(&rv);
    /* Baseline: the same decisions, nothing held. */
    uint64_t t0 = clock_mono_ns();
    for (int j = 0; j < nj; j++) {
        struct place_result r;
        place_decide(&ws[j], cs, (size_t)nc, NULL, 0, &rv, NULL, &r);
        place_result_free(&r);
    }
    double us_empty = (double)(clock_mono_ns() - t0) / 1e3 / nj;
    int ok = 0;
    t0 = clock_mono_ns();
    for (int j = 0; j < nj; j++) {
        struct place_result r;
        place_decide(&ws[j], cs, (size_t)nc, NULL, 0, &rv, NULL, &r);
        if (r.status == PLACE_OK) {
            place_resv_add(&rv, ws[j].key, &r, 0);
            ok++;
        }
        place_result_free(&r);
    }
    double us = (double)(clock_mono_ns() - t0) / 1e3 / nj;
    printf("{\"bench\":\"placement\",\"clusters\":%d,\"nodes_per_cluster\":%d,\"jobs\":%d,"
           "\"placed\":%d,\"us_per_decision\":%.1f,\"decisions_per_s\":%.0f,"
           "\"us_per_decision_empty\":%.1f,\"held_ratio\":%.2f}\n",
           nc, nn, nj, ok, us, 1e6 / us, us_empty, us / us_empty);
    printf("placement, %d clusters x %d nodes, %d jobs held as reservations: %.0f us per "
           "decision (%.0f decisions/s), %d placed; %.2fx the cost with nothing held\n",
           nc, nn, nj, us, 1e6 / us, ok, us / us_empty);
    place_resv_free(&rv);
    for (int j = 0; j < nj; j++)
        place_workload_free(&ws[j]);
    free(ws);
    for (int c = 0; c < nc; c++)
        place_cluster_free(&cs[c]);
    free(cs);
    return 0;
}
