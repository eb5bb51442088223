/*
 * bench-watch: throughput of the watch line splitter + event decoder
 * (pkg/kube/watch.h) on realistic Pod and Workload watch events of about
 * 2-4 KB, generated in memory and fed in 16 KiB pieces (lines split across
 * pieces, as they arrive from the network).
 *
 * Prints one JSON line, then a human line:
 *   {"bench":"watch_decode","events":...,"bytes":...,"seconds":...,"events_per_s":...,"mb_per_s":...}
 *   watch decode: 123456 events/s, 345.6 MB/s (N events, avg B bytes/event)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jscan.h"
#include "pkg/kube/store.h"
#include "pkg/kube/watch.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/json/jsonx.h"
#include "pkg/util/xalloc.h"

static const char *const TYPES[] = {"ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"};

static void pod_event(struct buf *b, int i)
{
    buf_printf(
        b,
        "{\"type\":\"%s\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{"
        "\"name\":\"train-%06d-worker-0\",\"namespace\":\"team-%d\",\"uid\":"
        "\"6c0c2a1e-%04x-4b8e-9d0a-%012d\",\"resourceVersion\":\"%d\",\"creationTimestamp\":"
        "\"2026-11-22T14:33:56Z\",\"labels\":{\"app\":\"train\",\"job-name\":\"train-%06d\","
        "\"kueue.x-k8s.io/queue-name\":\"user-queue\",\"kubestellar.io/cluster\":\"cluster%d\","
        "\"batch.kubernetes.io/controller-uid\":\"c0ffee00-%04x\"},\"annotations\":{"
        "\"kueue-ks.io/origin\":\"hub-1\",\"kueue-ks.io/origin-uid\":\"ab12cd34-%04x\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":"
        "\"train-%06d\",\"uid\":\"0f0f0f0f-%04x\",\"controller\":true,\"blockOwnerDeletion\":"
        "true}],\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":"
        "\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-22T14:33:56Z\",\"fieldsType\":"
        "\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{},"
        "\"f:job-name\":{}},\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"0f0f\\\"}\":{}}},"
        "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"trainer\\\"}\":{\".\":{},"
        "\"f:command\":{},\"f:env\":{},\"f:image\":{},\"f:resources\":{\"f:limits\":{},"
        "\"f:requests\":{}}}}}}},{\"manager\":\"kubelet\",\"operation\":\"Update\","
        "\"apiVersion\":\"v1\",\"time\":\"2026-11-22T14:34:10Z\",\"fieldsType\":\"FieldsV1\","
        "\"subresource\":\"status\",\"fieldsV1\":{\"f:status\":{\"f:conditions\":{},"
        "\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:phase\":{},\"f:podIP\":{},"
        "\"f:startTime\":{}}}}]},\"spec\":{\"restartPolicy\":\"Never\",\"schedulerName\":"
        "\"default-scheduler\","
        "\"nodeName\":\"node-%d\",\"nodeSelector\":{\"instance\":\"h100\"},\"tolerations\":[{"
        "\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}],"
        "\"containers\":[{\"name\":\"trainer\",\"image\":\"registry.example.com/ml/"
        "trainer:v1.%d.0\",\"command\":[\"python\",\"-m\",\"train\",\"--epochs\",\"%d\"],"
        "\"env\":[{\"name\":\"RANK\",\"value\":\"0\"},{\"name\":\"WORLD_SIZE\",\"value\":\"8\"},"
        "{\"name\":\"MASTER_ADDR\",\"value\":\"train-%06d-master-0\"}],\"resources\":{"
        "\"requests\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"nvidia.com/gpu\":\"1\"},\"limits\":{"
        "\"memory\":\"16Gi\",\"nvidia.com/gpu\":\"1\"}},\"volumeMounts\":[{\"name\":\"data\","
        "\"mountPath\":\"/data\"},{\"name\":\"kube-api-access\",\"mountPath\":"
        "\"/var/run/secrets/kubernetes.io/serviceaccount\",\"readOnly\":true}]}],\"volumes\":[{"
        "\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"dataset-%d\"}}]},"
        "\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Initialized\","
        "\"status\":\"True\",\"lastTransitionTime\":\"2026-11-22T14:34:00Z\"},{\"type\":"
        "\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"2026-11-22T14:34:10Z\"},{"
        "\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":"
        "\"2026-11-22T14:33:57Z\"}],\"hostIP\":\"10.0.%d.%d\",\"podIP\":\"10.244.%d.%d\","
        "\"startTime\":\"2026-11-22T14:33:58Z\",\"containerStatuses\":[{\"name\":\"trainer\","
        "\"ready\":true,\"restartCount\":0,\"image\":\"registry.example.com/ml/trainer:v1.%d.0\","
        "\"imageID\":\"sha256:%064d\",\"started\":true,\"state\":{\"running\":{\"startedAt\":"
        "\"2026-11-22T14:34:05Z\"}}}],\"qosClass\":\"Burstable\"}}}\n",
        TYPES[i % 5], i, i % 7, i & 0xffff, i, 1000 + i, i, i % 3, i & 0xffff, i & 0xffff, i,
        i & 0xffff, i % 64, i % 9, 10 + i % 90, i, i % 11, i % 250, i % 250, i % 250, i % 250,
        i % 9, i);
}

static void workload_event(struct buf *b, int i)
{
    buf_printf(
        b,
        "{\"type\":\"%s\",\"object\":{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
        "\"Workload\",\"metadata\":{\"name\":\"job-train-%06d-3c1f2\",\"namespace\":\"team-%d\","
        "\"uid\":\"7d1d3b2f-%04x-4c9f-8e1b-%012d\",\"resourceVersion\":\"%d\",\"generation\":2,"
        "\"labels\":{\"kueue.x-k8s.io/job-uid\":\"0f0f0f0f-%04x\"},\"ownerReferences\":[{"
        "\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"train-%06d\",\"uid\":"
        "\"0f0f0f0f-%04x\",\"controller\":true,\"blockOwnerDeletion\":true}]},\"spec\":{"
        "\"active\":true,\"queueName\":\"user-queue\",\"priority\":%d,\"podSets\":[{\"name\":"
        "\"main\",\"count\":%d,\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
        "\"containers\":[{\"name\":\"trainer\",\"image\":\"registry.example.com/ml/trainer:v1\","
        "\"resources\":{\"requests\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"nvidia.com/gpu\":"
        "\"1\"}}}]}}}]},\"status\":{\"admission\":{\"clusterQueue\":\"cluster-queue\","
        "\"podSetAssignments\":[{\"name\":\"main\",\"count\":%d,\"flavors\":{\"cpu\":"
        "\"default-flavor\",\"memory\":\"default-flavor\",\"nvidia.com/gpu\":\"h100\"},"
        "\"resourceUsage\":{\"cpu\":\"%d\",\"memory\":\"%dGi\",\"nvidia.com/gpu\":\"%d\"}}]},"
        "\"admissionChecks\":[{\"name\":\"ks-check\",\"state\":\"Pending\",\"message\":"
        "\"placed on cluster%d\",\"lastTransitionTime\":\"2026-11-22T14:34:00Z\"}],"
        "\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\",\"reason\":"
        "\"QuotaReserved\",\"message\":\"Quota reserved in ClusterQueue cluster-queue\","
        "\"lastTransitionTime\":\"2026-11-22T14:33:59Z\",\"observedGeneration\":2},{\"type\":"
        "\"Admitted\",\"status\":\"False\",\"reason\":\"NoReservation\",\"message\":"
        "\"The workload has no reservation\",\"lastTransitionTime\":\"2026-11-22T14:33:59Z\"},"
        "{\"type\":\"PodsReady\",\"status\":\"False\",\"reason\":\"PodsReady\",\"message\":"
        "\"Not all pods are ready or succeeded\",\"lastTransitionTime\":"
        "\"2026-11-22T14:33:59Z\"},{\"type\":"
        "\"ClusterAssigned\",\"status\":\"True\",\"reason\":\"ClusterAssigned\",\"message\":"
        "\"assigned to cluster%d\",\"lastTransitionTime\":\"2026-11-22T14:34:00Z\"}]}}}\n",
        TYPES[i % 5], i, i % 7, i & 0xffff, i, 2000 + i, i & 0xffff, i, i & 0xffff, i % 100,
        1 + i % 8, 1 + i % 8, 4 * (1 + i % 8), 16 * (1 + i % 8), 1 + i % 8, i % 3, i % 3);
}

/* What the informer does with an event's object before its store holds it: the lean
 * projection (a copy without managedFields when they were built, the object itself when not). */
static int count_cb(void *ud, const struct watch_event *ev)
{
    unsigned long *n = ud;
    json_t *p = store_project_lean(ev->object, NULL);
    if (ev->resource_version && p)
        (*n)++;
    json_decref(p);
    return 0;
}

/* Decode the stream in 16 KiB pieces, `rounds` times, building what `paths` say (NULL: whole):
 * the best time, or < 0 on a failure. */
static double decode_best(const struct buf *stream, const struct jscan_paths *paths, int nev,
                          int rounds)
{
    const size_t piece = 16 * 1024;
    double best = 1e9;
    for (int r = 0; r < rounds; r++) {
        struct watch_decoder d;
        struct err e;
        unsigned long n = 0;
        watch_decoder_init(&d, 0, count_cb, &n);
        d.paths = paths;
        double t0 = clock_mono_s();
        for (size_t off = 0; off < stream->len; off += piece) {
            size_t len = stream->len - off < piece ? stream->len - off : piece;
            if (watch_decoder_feed(&d, stream->data + off, len, &e) < 0) {
                fprintf(stderr, "bench-watch: decode failed: %s\n", e.msg);
                watch_decoder_release(&d);
                return -1;
            }
        }
        double dt = clock_mono_s() - t0;
        watch_decoder_release(&d);
        if (n != (unsigned long)nev) {
            fprintf(stderr, "bench-watch: decoded %lu of %d events\n", n, nev);
            return -1;
        }
        if (dt < best)
            best = dt;
    }
    return best;
}

/* The paths a lean informer builds its events with: the whole event less what the store's
 * projection drops, under "object." (informer.c, event_paths_new). */
static struct jscan_paths *lean_event_paths(void)
{
    struct store_opts o = {.project = store_project_lean};
    struct store *s = store_new(&o);
    const char *const *drops = store_drops(s);
    char *under[8] = {0};
    for (size_t i = 0; drops && drops[i] && i + 1 < sizeof under / sizeof under[0]; i++)
        under[i] = xasprintf("object.%s", drops[i]);
    struct jscan_paths *ps = NULL;
    struct err e;
    if (jscan_paths_new_drop(NULL, (const char *const *)under, &ps, &e) < 0)
        fprintf(stderr, "bench-watch: %s\n", e.msg);
    for (size_t i = 0; under[i]; i++)
        free(under[i]);
    store_free(s);
    return ps;
}

int main(int argc, char **argv)
{
    jx_use_xalloc();
    int nev = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 10000;
    if (nev <= 0)
        nev = 10000;
    struct buf stream;
    buf_init(&stream, (size_t)1 << 31);
    for (int i = 0; i < nev; i++) {
        if (i % 2)
            pod_event(&stream, i);
        else
            workload_event(&stream, i);
    }
    int rounds = 3;
    struct jscan_paths *lean = lean_event_paths();
    double best = decode_best(&stream, NULL, nev, rounds);
    double best_lean = lean ? decode_best(&stream, lean, nev, rounds) : -1;
    jscan_paths_free(lean);
    if (best < 0 || best_lean < 0) {
        buf_free(&stream);
        return 1;
    }
    double eps = nev / best;
    double mbps = (double)stream.len / best / 1e6;
    printf("{\"bench\":\"watch_decode\",\"events\":%d,\"bytes\":%zu,\"seconds\":%.4f,"
           "\"events_per_s\":%.0f,\"mb_per_s\":%.1f,\"lean_seconds\":%.4f,\"lean_ratio\":%.3f}\n",
           nev, stream.len, best, eps, mbps, best_lean, best_lean / best);
    printf("watch decode: %.0f events/s, %.1f MB/s (%d events, avg %zu bytes/event, best of %d, "
           "each projected lean); built without what the lean projection drops: %.0f events/s "
           "(%.2fx the time)\n",
           eps, mbps, nev, stream.len / (size_t)nev, rounds, nev / best_lean, best_lean / best);
    buf_free(&stream);
    return 0;
}
