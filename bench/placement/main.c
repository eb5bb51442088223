/*
 * bench-placement: cost of one placement decision (controllers/workload/placement)
 * for a burst of workloads over 100 clusters x 100 nodes, each decision held as
 * a reservation so later ones see the earlier ones (up to 1000 reservations).
 * Prints one JSON line and one human line. Options: --clusters N --nodes N --jobs N.
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
    if (nc < 1 || nn < 1 || nj < 1) {
        fprintf(stderr, "usage: bench-placement [--clusters N] [--nodes N] [--jobs N]\n");
        return 2;
    }
    struct place_cluster *cs = calloc((size_t)nc, sizeof *cs);
    for (int c = 0; c < nc; c++) {
        json_t *arr = json_array();
        for (int i = 0; i < nn; i++) {
            char name[32], req[16];
            snprintf(name, sizeof name, "node%03d", i);
            snprintf(req, sizeof req, "%dm", (i * 37 + c * 11) % 8000);
            json_array_append_new(arr, json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s}, s:{s:s}}",
                                                 "name", name, "allocatableResources", "cpu", "32",
                                                 "memory", "128Gi", "pods", "110",
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
    int ok = 0;
    uint64_t t0 = clock_mono_ns();
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
           "\"placed\":%d,\"us_per_decision\":%.1f,\"decisions_per_s\":%.0f}\n",
           nc, nn, nj, ok, us, 1e6 / us);
    printf("placement, %d clusters x %d nodes, %d jobs held as reservations: %.0f us per "
           "decision (%.0f decisions/s), %d placed\n",
           nc, nn, nj, us, 1e6 / us, ok);
    place_resv_free(&rv);
    for (int j = 0; j < nj; j++)
        place_workload_free(&ws[j]);
    free(ws);
    for (int c = 0; c < nc; c++)
        place_cluster_free(&cs[c]);
    free(cs);
    return 0;
}
