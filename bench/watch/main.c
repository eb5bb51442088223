/*
 * bench-watch: throughput of the watch line splitter + event decoder
 * (pkg/kube/watch.h) on realistic Pod and Workload watch events of about
 * 2-4 KB, generated in memory and fed in 16 KiB pieces (lines split across
 * pieces, as they arrive from the network).
 *
 * Prints one JSON line, then a human line:
 *   {"bench":"watch_decode","events":...,"bytes":...,"seconds":...,"events_per_s":...,"mb_per_s":...}
 *   watch decode: 123456 events/s, 345.6 MB/s (N events, avg B bytes/event)
 * Then the same for the forms an event's object can take, over up to 2,000 of the events'
 * objects, each against the tree a watch event builds now (the lean projection's, built and
 * freed; best of 3 each):
 *   {"bench":"watch_forms","events":..,"bytes_per_object":..,"tree_us":..,"scan_ratio":..,
 *    "pack_text_ratio":..,"encode_ratio":..,"decode_ratio":..}
 * scan: the text checked alone (jscan_rv), the floor of anything that reads the text; pack_text:
 * packed straight from the text as a packed lean store's list item is (store_list_add_text,
 * the list freed with its items); encode: the tree packed (a store trim); decode: a packed
 * object decoded whole and freed (a pass over a trimmed object).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jpack.h"
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

/* ---- object forms: what an event's object costs in each form the stores know ---- */

enum form { F_TREE, F_SCAN, F_PACK_TEXT, F_ENCODE, F_DECODE, F_N };

struct forms {
    const char **obj; /* each event's object, its text within the line */
    size_t *len;
    json_t **tree;
    uint8_t **packed;
    size_t *plen;
    int n;
    struct jscan_paths *lean; /* what a lean store builds of an object */
    struct store *store;      /* packed, lean: what its lists pack from the text */
    struct jpack_tab *tab;    /* the store's */
};

/* One pass of form f over the sample: its seconds, or < 0 on a failure. */
static double forms_pass(struct forms *fm, enum form f)
{
    struct err e;
    struct store_list *l = f == F_PACK_TEXT ? store_list_new(fm->store) : NULL;
    double t0 = clock_mono_s();
    for (int i = 0; i < fm->n; i++) {
        switch (f) {
        case F_TREE: { /* what a watch event builds now, then frees */
            json_t *t = jscan_load_with(fm->obj[i], fm->len[i], fm->lean, &e);
            if (!t)
                return -1;
            json_decref(t);
            break;
        }
        case F_SCAN: { /* the text checked, nothing built */
            char *rv = NULL;
            if (jscan_rv(fm->obj[i], fm->len[i], &rv, &e) < 0)
                return -1;
            free(rv);
            break;
        }
        case F_PACK_TEXT: /* packed from the text, as a list item is (store_list_add_text) */
            if (store_list_add_text(l, fm->obj[i], fm->len[i], NULL, NULL, &e) < 0) {
                store_list_free(l);
                return -1;
            }
            break;
        case F_ENCODE: { /* a tree packed, as a trim does */
            uint8_t *o = NULL;
            size_t n = jpack_encode(fm->tab, fm->tree[i], &o);
            jpack_release(fm->tab, o, n);
            free(o);
            break;
        }
        case F_DECODE: { /* a packed object decoded whole and freed, as a pass reads one */
            json_t *t = jpack_decode(fm->tab, fm->packed[i], fm->plen[i]);
            if (!t)
                return -1;
            json_decref(t);
            break;
        }
        case F_N:
            break;
        }
    }
    store_list_free(l); /* the packed items with it: part of the form's cost */
    return clock_mono_s() - t0;
}

/* The object of the event line p[0..n) (the bench writes {"type":..,"object":{..}}), or NULL. */
static const char *event_object(const char *p, size_t n, size_t *len)
{
    static const char key[] = "\"object\":";
    const char *o = memmem(p, n, key, sizeof key - 1);
    if (!o || p[n - 1] != '}')
        return NULL;
    o += sizeof key - 1;
    *len = (size_t)(p + n - 1 - o);
    return o;
}

/* The forms over up to 2,000 of the stream's events' objects, best of `rounds` each, printed
 * against the tree a watch event builds now (docs/performance.md "Scans, answers and
 * formatting"). 0, or -1 on a failure. */
static int forms_bench(const struct buf *stream, int rounds)
{
    struct forms fm = {.tab = jpack_tab_new()};
    struct store_opts so = {.project = store_project_lean, .packed = true, .tab = fm.tab};
    fm.store = store_new(&so);
    struct err e;
    int rc = jscan_paths_new_drop(NULL, store_drops(fm.store), &fm.lean, &e) < 0 ? -1 : 0;
    int cap = 2000;
    fm.obj = xcalloc((size_t)cap, sizeof *fm.obj);
    fm.len = xcalloc((size_t)cap, sizeof *fm.len);
    fm.tree = xcalloc((size_t)cap, sizeof *fm.tree);
    fm.packed = xcalloc((size_t)cap, sizeof *fm.packed);
    fm.plen = xcalloc((size_t)cap, sizeof *fm.plen);
    size_t bytes = 0;
    for (const char *p = stream->data, *end = p + stream->len; rc == 0 && p < end && fm.n < cap;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t ol = 0;
        const char *o = event_object(p, l, &ol);
        json_t *t = o ? jscan_load_with(o, ol, fm.lean, &e) : NULL;
        if (!t) {
            rc = -1;
            break;
        }
        fm.obj[fm.n] = o;
        fm.len[fm.n] = ol;
        fm.tree[fm.n] = t;
        fm.plen[fm.n] = jpack_encode(fm.tab, t, &fm.packed[fm.n]);
        bytes += ol;
        fm.n++;
        p += l + 1;
    }
    double best[F_N];
    for (int f = 0; rc == 0 && f < F_N; f++) {
        best[f] = 1e9;
        for (int r = 0; r < rounds; r++) {
            double dt = forms_pass(&fm, (enum form)f);
            if (dt < 0) {
                rc = -1;
                break;
            }
            if (dt < best[f])
                best[f] = dt;
        }
    }
    if (rc < 0)
        fprintf(stderr, "bench-watch: object forms failed: %s\n", e.msg);
    if (rc == 0 && fm.n > 0) {
        double us = best[F_TREE] / fm.n * 1e6;
        printf("{\"bench\":\"watch_forms\",\"events\":%d,\"bytes_per_object\":%zu,"
               "\"tree_us\":%.2f,\"scan_ratio\":%.3f,\"pack_text_ratio\":%.3f,"
               "\"encode_ratio\":%.3f,\"decode_ratio\":%.3f}\n",
               fm.n, bytes / (size_t)fm.n, us, best[F_SCAN] / best[F_TREE],
               best[F_PACK_TEXT] / best[F_TREE], best[F_ENCODE] / best[F_TREE],
               best[F_DECODE] / best[F_TREE]);
        printf("object forms (%d events' objects): the tree an event builds now %.2f us each "
               "(built and freed); against it: the text checked alone %.2fx, packed from the "
               "text as a list item %.2fx, the tree packed %.2fx, a packed object decoded and "
               "freed %.2fx\n",
               fm.n, us, best[F_SCAN] / best[F_TREE], best[F_PACK_TEXT] / best[F_TREE],
               best[F_ENCODE] / best[F_TREE], best[F_DECODE] / best[F_TREE]);
    }
    for (int i = 0; i < fm.n; i++) {
        json_decref(fm.tree[i]);
        jpack_release(fm.tab, fm.packed[i], fm.plen[i]);
        free(fm.packed[i]);
    }
    free(fm.obj);
    free(fm.len);
    free(fm.tree);
    free(fm.packed);
    free(fm.plen);
    jscan_paths_free(fm.lean);
    store_free(fm.store);
    jpack_tab_free(fm.tab);
    return rc;
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
    int rc = forms_bench(&stream, rounds);
    buf_free(&stream);
    return rc < 0 ? 1 : 0;
}
