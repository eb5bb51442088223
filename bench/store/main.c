/*
 * bench-store: memory per cached object and store throughput.
 *
 * Builds N synthetic Pod-like objects (metadata with labels, annotations,
 * managedFields, ownerReferences; a spec with containers; a status with
 * conditions), the way a list response decodes them, then caches them in a
 * store (a) whole and (b) through a projection that keeps what a controller
 * reads. Prints heap bytes per object as decoded and as cached once the
 * decoded list is released (mallinfo2 deltas, indexes included), upsert and
 * replace() throughput, and index lookup time.
 *
 * Then, per kind the workload controller caches, N copies (distinct names and
 * uids) of a Job and a Workload as a real API server returns them
 * (bench/store/testdata/{job,workload}.json: managedFields, the last-applied
 * annotation), cached whole (the baseline) and through store_project_lean
 * (what `kueue-ks run` keeps for hub Jobs, Workloads and worker copies); one
 * JSON line per kind:
 *   {"bench":"store","kind":..,"json_bytes":..,"whole_bytes":..,"lean_bytes":..,
 *    "lean_ratio":..,"packed_bytes":..,"packed_ratio":..,"lean_index_bytes":..,
 *    "packed_index_bytes":..}
 * (bytes per cached object; lean_ratio = lean / whole; packed: lean in a packed store
 * (store.h, pkg/json/jpack.h) with its own intern table, decoded trees trimmed, the
 * table included; *_index_bytes: with the index the controller registers on that kind).
 *
 * And the agent's pod cache: N Pod-like objects (above) cached whole and as the
 * agent's compact records (controllers/agent/podrec.h: one packed string per pod):
 *   {"bench":"store","kind":"Pod","json_bytes":..,"whole_bytes":..,
 *    "compact_bytes":..,"compact_ratio":..,"record_us_whole":..,"record_us_reads":..,
 *    "record_reads_ratio":..}
 * (record_us_*: CPU to make a pod's record from its text, parsed whole and built of
 * podrec_reads as the agent's informer does; the ratio from the same run).
 *
 *   bench-store [N]      default N = 10000
 */
#include <limits.h>
#include <stdbool.h>
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/agent/podrec.h"
#include "pkg/json/jscan.h"
#include "pkg/kube/store.h"
#include "pkg/util/clock.h"
#include "pkg/json/jsonx.h"

static size_t heap_used(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static json_t *make_obj(int i)
{
    char name[32], uid[48], node[16], owner[48];
    snprintf(name, sizeof name, "pod-%06d", i);
    snprintf(uid, sizeof uid, "0b7c6a1e-%04x-4e9b-9d51-%012d", i & 0xffff, i);
    snprintf(node, sizeof node, "node-%03d", i % 100);
    snprintf(owner, sizeof owner, "5f1d2c3b-%04x-4a5b-8c7d-%012d", (i / 4) & 0xffff, i / 4);
    return json_pack(
        "{s:s, s:s,"
        " s:{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s},"
        "    s:[{s:s, s:s, s:s, s:s, s:b}],"
        "    s:[{s:s, s:s, s:s, s:s, s:{s:{s:{}, s:{}}}}]},"
        " s:{s:s, s:[{s:s, s:s, s:{s:{s:s, s:s}}, s:[{s:s, s:s}]}]},"
        " s:{s:s, s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}], s:s}}",
        "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", "team-a", "uid",
        uid, "resourceVersion", "123456", "creationTimestamp", "2026-11-22T14:00:00Z", "labels",
        "app", "trainer", "kueue.x-k8s.io/queue-name", "user-queue", "kubestellar.io/cluster",
        "cluster1", "annotations", "kubectl.kubernetes.io/last-applied-configuration",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"},\"spec\":{}}",
        "ownerReferences", "apiVersion", "batch/v1", "kind", "Job", "name", "job-x", "uid", owner,
        "controller", 1, "managedFields", "manager", "kube-controller-manager", "operation",
        "Update", "apiVersion", "v1", "time", "2026-11-22T14:00:00Z", "fieldsV1", "f:metadata",
        "f:labels", "f:ownerReferences", "spec", "nodeName", node, "containers", "name", "main",
        "image", "registry.example.com/ml/trainer:1.2.3", "resources", "requests", "cpu", "2",
        "memory", "8Gi", "env", "name", "MODE", "value", "train", "status", "phase", "Running",
        "conditions", "type", "Ready", "status", "True", "lastTransitionTime",
        "2026-11-22T14:01:00Z", "type", "PodScheduled", "status", "True", "lastTransitionTime",
        "2026-11-22T14:00:01Z", "startTime", "2026-11-22T14:00:01Z");
}

static json_t *project(json_t *obj, void *ud)
{
    static const char *const paths[] = {"metadata.labels", "metadata.ownerReferences",
                                        "spec.nodeName", "status.phase", NULL};
    return store_project_fields(obj, paths);
}

static void run(const char *label, int n, store_project_fn proj)
{
    size_t before = heap_used();
    json_t *list = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(list, make_obj(i));
    size_t decoded = heap_used();
    struct store_opts o = {.project = proj};
    struct store *s = store_new(&o);
    store_add_index(s, "node", store_index_by_field, "spec.nodeName", NULL);
    store_add_index(s, "owner", store_index_by_owner_uid, NULL, NULL);
    double t0 = clock_mono_s();
    for (int i = 0; i < n; i++)
        store_upsert(s, json_array_get(list, (size_t)i), NULL, NULL, NULL);
    double t1 = clock_mono_s();
    /* What stays once the decoded list is gone: the store's share of it. */
    json_decref(list);
    size_t after = heap_used();
    double t2 = clock_mono_s();
    int hits = 0;
    for (int i = 0; i < n; i++) {
        json_t *r = store_by_index(s, "node", "node-042", NULL);
        hits += (int)json_array_size(r);
        json_decref(r);
        if (i == 999)
            break;
    }
    double t3 = clock_mono_s();
    /* Re-list of the same contents: diff only, no events. */
    json_t *again = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(again, make_obj(i));
    double t4 = clock_mono_s();
    store_replace(s, again, NULL, NULL, NULL);
    double t5 = clock_mono_s();
    json_decref(again);
    printf("%-10s objects=%d  decoded/object=%6zu B  cached/object=%6zu B  upsert=%7.0f obj/s  "
           "replace(no change)=%7.0f "
           "obj/s  index lookup=%5.1f us (%d hits/lookup)\n",
           label, n, (decoded - before) / (size_t)n,
           (after > before ? after - before : 0) / (size_t)n, n / (t1 - t0), n / (t5 - t4),
           (t3 - t2) / 1000 * 1e6, hits / 1000);
    store_free(s);
}

/* Heap bytes per object of n renamed copies of `proto` cached through `proj` (NULL = whole),
 * once the decoded list is released. */
struct cache_mode {
    bool packed;        /* a packed store (store.h), its own intern table, trimmed */
    store_index_fn idx; /* an index to register, or NULL */
};

/* Every string value of v equal to one of from[0..n) replaced by the same index of to. */
static void replace_strings(json_t *v, const char *const *from, const char *const *to, size_t n)
{
    const char *k;
    json_t *m;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach(v, k, m)
        {
            for (size_t j = 0; json_is_string(m) && j < n; j++)
                if (from[j] && strcmp(json_string_value(m), from[j]) == 0) {
                    json_string_set(m, to[j]);
                    break;
                }
            replace_strings(m, from, to, n);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, m)
        {
            replace_strings(m, from, to, n);
        }
    }
}

static size_t cached_per_object_mode(const json_t *proto, int n, store_project_fn proj,
                                     const struct cache_mode *m)
{
    size_t before = heap_used();
    json_t *list = json_array();
    const json_t *pmd = json_object_get(proto, "metadata");
    const json_t *own = json_array_get(json_object_get(pmd, "ownerReferences"), 0);
    const char *from[] = {json_string_value(json_object_get(pmd, "name")),
                          json_string_value(json_object_get(pmd, "uid")),
                          json_string_value(json_object_get(own, "name")),
                          json_string_value(json_object_get(own, "uid"))};
    for (int i = 0; i < n; i++) {
        /* a list decodes every object anew: nothing shared between them. Each copy has its own
         * name and uid wherever the object repeats them, as a real server's objects do (a
         * Job's selector and template labels, a Workload's owner and its job-uid label). */
        json_t *o = json_deep_copy(proto);
        char name[64], uid[48], oname[64], ouid[48];
        snprintf(name, sizeof name, "%s-%06d", from[0] ? from[0] : "x", i);
        snprintf(uid, sizeof uid, "0b7c6a1e-%04x-4e9b-9d51-%012d", i & 0xffff, i);
        snprintf(oname, sizeof oname, "%s-%06d", from[2] ? from[2] : "x", i);
        snprintf(ouid, sizeof ouid, "0b7c6a1f-%04x-4e9b-9d51-%012d", i & 0xffff, i);
        const char *to[] = {name, uid, oname, ouid};
        replace_strings(o, from, to, 4);
        json_t *md = json_object_get(o, "metadata");
        json_object_set_new(md, "name", json_string(name));
        json_object_set_new(md, "uid", json_string(uid));
        json_array_append_new(list, o);
    }
    struct store_opts so = {.project = proj, .packed = m && m->packed};
    struct store *s = store_new(&so);
    if (m && m->idx)
        store_add_index(s, "idx", m->idx, NULL, NULL);
    for (int i = 0; i < n; i++)
        store_upsert(s, json_array_get(list, (size_t)i), NULL, NULL, NULL);
    json_decref(list);
    store_trim(s, true); /* packed: what stays between loop iterations (informer.h) */
    size_t after = heap_used();
    store_free(s);
    return (after > before ? after - before : 0) / (size_t)n;
}

static size_t cached_per_object(const json_t *proto, int n, store_project_fn proj)
{
    return cached_per_object_mode(proto, n, proj, NULL);
}

/* The controller's index of a kind: owner uid for Workloads, own uid for jobs. */
static void index_uid(json_t *obj, struct store_values *vals, void *ud)
{
    (void)ud;
    store_values_add(vals,
                     json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid")));
}

/* The agent's projection of a pod: its compact record. */
static json_t *compact(json_t *obj, void *ud)
{
    (void)ud;
    return podrec_new(obj, NULL);
}

/* Microseconds per pod to make its record from the text of `texts` (n of them): parsed whole
 * (paths NULL) or built of `paths` only (jscan_load_paths). */
static double record_us(char **texts, int n, const char *const *paths)
{
    struct jscan_paths *ps = NULL;
    if (jscan_paths_new(paths, &ps, NULL) < 0)
        return 0;
    double t0 = clock_mono_s();
    for (int i = 0; i < n; i++) {
        json_t *pod = jscan_load_with(texts[i], strlen(texts[i]), ps, NULL);
        json_t *rec = podrec_new(pod, NULL);
        json_decref(rec);
        json_decref(pod);
    }
    double us = (clock_mono_s() - t0) * 1e6 / (n ? n : 1);
    jscan_paths_free(ps);
    return us;
}

/* The agent's pods: whole and as compact records (bytes per cached pod), and the CPU of a
 * record from a list item's or watch event's text, parsed whole and built of podrec_reads
 * (what the agent's informer does). */
static void run_pods(int n)
{
    json_t *proto = make_obj(0);
    char *dump = json_dumps(proto, JSON_COMPACT);
    size_t json_bytes = dump ? strlen(dump) : 0;
    free(dump);
    size_t whole = cached_per_object(proto, n, NULL);
    size_t small = cached_per_object(proto, n, compact);
    json_decref(proto);
    char **texts = calloc((size_t)n, sizeof(*texts));
    for (int i = 0; i < n && texts; i++) {
        json_t *o = make_obj(i);
        texts[i] = json_dumps(o, JSON_COMPACT);
        json_decref(o);
    }
    double us_whole = 1e9, us_reads = 1e9;
    for (int round = 0; round < 3 && texts; round++) { /* the best of three, alternating */
        double w = record_us(texts, n, NULL), r = record_us(texts, n, podrec_reads);
        us_whole = w < us_whole ? w : us_whole;
        us_reads = r < us_reads ? r : us_reads;
    }
    for (int i = 0; i < n && texts; i++)
        free(texts[i]);
    free(texts);
    printf("{\"bench\":\"store\",\"kind\":\"Pod\",\"objects\":%d,\"json_bytes\":%zu,"
           "\"whole_bytes\":%zu,\"compact_bytes\":%zu,\"compact_ratio\":%.3f,"
           "\"record_us_whole\":%.2f,\"record_us_reads\":%.2f,\"record_reads_ratio\":%.3f}\n",
           n, json_bytes, whole, small, whole ? (double)small / (double)whole : 0.0, us_whole,
           us_reads, us_whole > 0 ? us_reads / us_whole : 0.0);
    printf("%-10s a record from the text: %.2f us parsed whole, %.2f us built of what it reads "
           "(%.2fx)\n",
           "Pod", us_whole, us_reads, us_whole > 0 ? us_reads / us_whole : 0.0);
    printf("%-10s %zu B of JSON: cached whole %zu B/object, compact record (the agent) %zu "
           "B/object (%.1f %% of whole)\n",
           "Pod", json_bytes, whole, small, whole ? 100.0 * (double)small / (double)whole : 0.0);
}

/* The kinds the workload controller caches, from bench/store/testdata/<file>. */
static int run_kind(const char *root, const char *file, int n)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/bench/store/testdata/%s", root, file);
    json_error_t je;
    json_t *proto = json_load_file(path, 0, &je);
    if (!proto) {
        fprintf(stderr, "bench-store: %s: %s\n", path, je.text);
        return -1;
    }
    char *dump = json_dumps(proto, JSON_COMPACT);
    size_t json_bytes = dump ? strlen(dump) : 0;
    free(dump);
    size_t whole = cached_per_object(proto, n, NULL);
    size_t lean = cached_per_object(proto, n, store_project_lean);
    const char *kind = json_string_value(json_object_get(proto, "kind"));
    bool is_wl = kind && strcmp(kind, "Workload") == 0;
    struct cache_mode pm = {.packed = true};
    size_t packed = cached_per_object_mode(proto, n, store_project_lean, &pm);
    struct cache_mode lim = {.idx = is_wl ? store_index_by_owner_uid : index_uid};
    size_t lean_idx = cached_per_object_mode(proto, n, store_project_lean, &lim);
    struct cache_mode pim = {.packed = true, .idx = lim.idx};
    size_t packed_idx = cached_per_object_mode(proto, n, store_project_lean, &pim);
    printf("{\"bench\":\"store\",\"kind\":\"%s\",\"objects\":%d,\"json_bytes\":%zu,"
           "\"whole_bytes\":%zu,\"lean_bytes\":%zu,\"lean_ratio\":%.2f,\"packed_bytes\":%zu,"
           "\"packed_ratio\":%.3f,\"lean_index_bytes\":%zu,\"packed_index_bytes\":%zu}\n",
           kind, n, json_bytes, whole, lean, whole ? (double)lean / (double)whole : 0.0, packed,
           whole ? (double)packed / (double)whole : 0.0, lean_idx, packed_idx);
    printf("%-10s packed (lean, jpack + interned strings, decoded trees trimmed) %zu B/object "
           "(%.1f %% of whole); with the controller's %s index: lean %zu, packed %zu B/object\n",
           kind, packed, whole ? 100.0 * (double)packed / (double)whole : 0.0,
           is_wl ? "owner-uid" : "uid", lean_idx, packed_idx);
    printf("%-10s %zu B of JSON: cached whole %zu B/object, lean (no managedFields, no "
           "last-applied) %zu B/object (%.0f %% of whole)\n",
           kind, json_bytes, whole, lean, whole ? 100.0 * (double)lean / (double)whole : 0.0);
    json_decref(proto);
    return 0;
}

int main(int argc, char **argv)
{
    jx_use_xalloc();
    int n = 10000;
    if (argc > 1) {
        char *end = NULL;
        long v = strtol(argv[1], &end, 10);
        if (!end || *end || v <= 0 || v > 10000000) {
            fprintf(stderr, "usage: bench-store [N]\n");
            return 2;
        }
        n = (int)v;
    }
    json_t *one = make_obj(0);
    char *s = json_dumps(one, JSON_COMPACT);
    printf("bench-store: object JSON size %zu B\n", strlen(s));
    free(s);
    json_decref(one);
    run("whole", n, NULL);
    run("projected", n, project);
    run_pods(n);
    /* the repository root: bin/bench-store -> .. */
    char root[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", root, sizeof root - 1);
    if (len <= 0)
        return 1;
    root[len] = 0;
    for (int k = 0; k < 2; k++) {
        char *slash = strrchr(root, '/');
        if (slash)
            *slash = 0;
    }
    if (run_kind(root, "job.json", n) < 0 || run_kind(root, "workload.json", n) < 0)
        return 1;
    return 0;
}
