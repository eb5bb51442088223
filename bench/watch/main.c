/*
 * bench-watch: throughput of the watch line splitter + event decoder
 * (pkg/kube/watch.h) on realistic Pod and Workload watch events of about
 * 2-4 KB, generated in memory and fed in 16 KiB pieces (lines split across
 * pieces, as they arrive from the network).
 *
 * Prints one JSON line, then a human line:
 *   {"bench":"watch_decode","events":...,"bytes":...,"seconds":...,"events_per_s":...,"mb_per_s":...}
 *   watch decode: 123456 events/s, 345.6 MB/s (N events, avg B bytes/event)
 * Then the same for the forms an event's object can take, over up to 2,000 of the events,
 * each against the tree a watch event builds now (built and freed; best of 3 each):
 *   {"bench":"watch_forms","events":..,"bytes_per_event":..,"tree_us":..,"scan_ratio":..,
 *    "pack_text_ratio":..,"encode_ratio":..,"decode_ratio":..}
 * scan: the text checked alone (jscan_rv), the floor of anything that reads the text; pack_text:
 * packed straight from the text (jscan_walk into jpack_build, managedFields skipped, the same
 * bytes as the tree packed: checked for every event); encode: the tree packed (a store trim);
 * decode: a packed object decoded whole and freed (a pass over a trimmed object).
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

/* Packs an event line as a lean store keeps it: object.metadata.managedFields skipped (the
 * only part of store_drops() these events have). */
struct pk {
    struct jpack_build *b;
    int depth; /* open containers */
    bool meta; /* the container at depth 3 is object.metadata */
    bool key_object, key_meta;
};

static int pk_open(void *ud, bool obj)
{
    struct pk *k = ud;
    if (++k->depth == 3)
        k->meta = k->key_meta;
    return jpack_build_open(k->b, obj);
}
static int pk_close(void *ud, bool obj)
{
    (void)obj;
    struct pk *k = ud;
    k->depth--;
    return jpack_build_close(k->b);
}
static int pk_key(void *ud, const char *key, size_t n)
{
    struct pk *k = ud;
    if (k->depth == 1)
        k->key_object = n == 6 && memcmp(key, "object", 6) == 0;
    if (k->depth == 2)
        k->key_meta = k->key_object && n == 8 && memcmp(key, "metadata", 8) == 0;
    if (k->depth == 3 && k->meta && n == 13 && memcmp(key, "managedFields", 13) == 0)
        return 1; /* checked, not packed */
    return jpack_build_key(k->b, key, n);
}
static int pk_str(void *ud, const char *v, size_t n)
{
    return jpack_build_str(((struct pk *)ud)->b, v, n);
}
static int pk_int(void *ud, long long v)
{
    return jpack_build_int(((struct pk *)ud)->b, v);
}
static int pk_real(void *ud, double v)
{
    return jpack_build_real(((struct pk *)ud)->b, v);
}
static int pk_lit(void *ud, char which)
{
    return jpack_build_lit(((struct pk *)ud)->b, which);
}
static const struct jscan_sink pack_sink = {pk_open, pk_close, pk_key, pk_str,
                                            pk_int,  pk_real,  pk_lit};

enum form { F_TREE, F_SCAN, F_PACK_TEXT, F_ENCODE, F_DECODE, F_N };

struct forms {
    const char **line;
    size_t *len;
    json_t **tree;
    uint8_t **packed;
    size_t *plen;
    int n;
    const struct jscan_paths *lean;
    struct jpack_tab *tab;
    struct jpack_build *b;
};

/* One pass of form f over the sample: its seconds, or < 0 on a failure. */
static double forms_pass(struct forms *fm, enum form f)
{
    struct err e;
    double t0 = clock_mono_s();
    for (int i = 0; i < fm->n; i++) {
        switch (f) {
        case F_TREE: { /* what a watch event builds now, then frees */
            json_t *t = jscan_load_with(fm->line[i], fm->len[i], fm->lean, &e);
            if (!t)
                return -1;
            json_decref(t);
            break;
        }
        case F_SCAN: { /* the text checked, nothing built */
            char *rv = NULL;
            if (jscan_rv(fm->line[i], fm->len[i], &rv, &e) < 0)
                return -1;
            free(rv);
            break;
        }
        case F_PACK_TEXT: { /* packed from the text, as a list item is */
            jpack_build_reset(fm->b);
            struct pk k = {.b = fm->b};
            if (jscan_walk(fm->line[i], fm->len[i], &pack_sink, &k, &e) < 0)
                return -1;
            const uint8_t *o;
            size_t l = jpack_build_take(fm->b, &o);
            jpack_release(fm->tab, o, l); /* the table's references go with it */
            break;
        }
        case F_ENCODE: { /* a tree packed, as a trim does */
            uint8_t *o = NULL;
            size_t l = jpack_encode(fm->tab, fm->tree[i], &o);
            jpack_release(fm->tab, o, l);
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
    return clock_mono_s() - t0;
}

/* The forms over up to 2,000 of the stream's events (each line whole), best of `rounds`
 * each, printed against the tree a watch event builds now (docs/performance.md "Scans,
 * answers and formatting"). 0, or -1 on a failure. */
static int forms_bench(const struct buf *stream, const struct jscan_paths *lean, int rounds)
{
    struct forms fm = {.lean = lean, .tab = jpack_tab_new()};
    fm.b = jpack_build_new(fm.tab);
    int cap = 2000;
    fm.line = xcalloc((size_t)cap, sizeof *fm.line);
    fm.len = xcalloc((size_t)cap, sizeof *fm.len);
    fm.tree = xcalloc((size_t)cap, sizeof *fm.tree);
    fm.packed = xcalloc((size_t)cap, sizeof *fm.packed);
    fm.plen = xcalloc((size_t)cap, sizeof *fm.plen);
    int rc = 0;
    size_t bytes = 0;
    for (const char *p = stream->data, *end = p + stream->len; p < end && fm.n < cap;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        struct err e;
        json_t *t = jscan_load_with(p, l, lean, &e);
        if (!t) {
            rc = -1;
            break;
        }
        fm.line[fm.n] = p;
        fm.len[fm.n] = l;
        fm.tree[fm.n] = t;
        fm.plen[fm.n] = jpack_encode(fm.tab, t, &fm.packed[fm.n]);
        /* the forms compared hold the same object: packed from the text as from the tree */
        jpack_build_reset(fm.b);
        struct pk k = {.b = fm.b};
        const uint8_t *o = NULL;
        size_t ol = jscan_walk(p, l, &pack_sink, &k, &e) == 0 ? jpack_build_take(fm.b, &o) : 0;
        bool same = ol == fm.plen[fm.n] && memcmp(o, fm.packed[fm.n], ol) == 0;
        if (ol)
            jpack_release(fm.tab, o, ol);
        if (!same) {
            fprintf(stderr, "bench-watch: event %d packed from its text differs from its tree\n",
                    fm.n);
            json_decref(t);
            free(fm.packed[fm.n]);
            rc = -1;
            break;
        }
        bytes += l;
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
    if (rc == 0 && fm.n > 0) {
        double us = best[F_TREE] / fm.n * 1e6;
        printf("{\"bench\":\"watch_forms\",\"events\":%d,\"bytes_per_event\":%zu,"
               "\"tree_us\":%.2f,\"scan_ratio\":%.3f,\"pack_text_ratio\":%.3f,"
               "\"encode_ratio\":%.3f,\"decode_ratio\":%.3f}\n",
               fm.n, bytes / (size_t)fm.n, us, best[F_SCAN] / best[F_TREE],
               best[F_PACK_TEXT] / best[F_TREE], best[F_ENCODE] / best[F_TREE],
               best[F_DECODE] / best[F_TREE]);
        printf("object forms (%d events): the tree an event builds now %.2f us each (built and "
               "freed); against it: the text checked alone %.2fx, packed from the text %.2fx, "
               "the tree packed %.2fx, a packed object decoded and freed %.2fx\n",
               fm.n, us, best[F_SCAN] / best[F_TREE], best[F_PACK_TEXT] / best[F_TREE],
               best[F_ENCODE] / best[F_TREE], best[F_DECODE] / best[F_TREE]);
    }
    for (int i = 0; i < fm.n; i++) {
        json_decref(fm.tree[i]);
        jpack_release(fm.tab, fm.packed[i], fm.plen[i]);
        free(fm.packed[i]);
    }
    free(fm.line);
    free(fm.len);
    free(fm.tree);
    free(fm.packed);
    free(fm.plen);
    jpack_build_free(fm.b);
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
    if (best < 0 || best_lean < 0) {
        jscan_paths_free(lean);
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
    int rc = forms_bench(&stream, lean, rounds);
    jscan_paths_free(lean);
    buf_free(&stream);
    return rc < 0 ? 1 : 0;
}
