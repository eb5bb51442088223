/* sv: see sv.h. */
#include "cmd/kueue-ks/sv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/quota/aggregate.h"
#include "pkg/json/jsonx.h"
#include "pkg/quantity/quantity.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#define SV_PAD        3
#define SV_SOURCE_MAX 40
#define SV_MAX_COLS   12

/* ---- a kubectl-like table (tabwriter, padding 3) ------------------------------ */

/* How a column's cells read in JSON (-o json). */
enum col_kind {
    COL_STR,      /* the text */
    COL_INT,      /* a number; "-" -> null */
    COL_PAIR,     /* "a/b" -> {pair_a: "a", pair_b: "b"}; "-" -> null */
    COL_PAIR_INT, /* "a/b" -> {pair_a: a, pair_b: b} as numbers */
};

/* A column: its text header and its camelCase JSON field, as kubectl's JSON names fields. */
struct col {
    const char *header, *key;
    enum col_kind kind;
    const char *pair_a, *pair_b;
};

struct table {
    size_t ncols;
    const struct col *cols; /* borrowed, ncols of them */
    char **cells;           /* rows * ncols, owned */
    size_t nrows, cap;
};

static void table_row(struct table *t, const char *const *cells);

/* The header row is the columns' headers. */
static void table_init(struct table *t, const struct col *cols, size_t ncols)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->cols = cols;
    const char *hdr[SV_MAX_COLS];
    for (size_t c = 0; c < ncols && c < SV_MAX_COLS; c++)
        hdr[c] = cols[c].header;
    table_row(t, hdr);
}

/* Append a row of ncols strings (copied). */
static void table_row(struct table *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = xrealloc(t->cells, t->cap * t->ncols * sizeof *t->cells);
    }
    for (size_t c = 0; c < t->ncols; c++)
        t->cells[t->nrows * t->ncols + c] = xstrdup(cells[c] ? cells[c] : "");
    t->nrows++;
}

static int cmp_rows(const void *a, const void *b, void *ncols)
{
    (void)ncols;
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort rows 1.. (after the header) by their first columns, stably enough for equal names:
 * the rows are built in a deterministic order and qsort_r compares the full key. */
static void table_sort(struct table *t, size_t key_cols)
{
    if (t->nrows < 3)
        return;
    size_t n = t->nrows - 1;
    char **keys = xcalloc(n, sizeof *keys);
    for (size_t r = 0; r < n; r++) {
        struct buf b;
        buf_init(&b, 1 << 16);
        for (size_t c = 0; c < key_cols; c++)
            buf_printf(&b, "%s%c", t->cells[(r + 1) * t->ncols + c], 1);
        buf_printf(&b, "%c%08zu", 2, r); /* keep the build order for equal keys */
        keys[r] = buf_detach(&b);
    }
    qsort_r(keys, n, sizeof *keys, cmp_rows, NULL);
    char **cells = xcalloc(n * t->ncols, sizeof *cells);
    for (size_t r = 0; r < n; r++) {
        size_t from = (size_t)strtoul(strrchr(keys[r], 2) + 1, NULL, 10);
        memcpy(&cells[r * t->ncols], &t->cells[(from + 1) * t->ncols], t->ncols * sizeof *cells);
        free(keys[r]);
    }
    memcpy(&t->cells[t->ncols], cells, n * t->ncols * sizeof *cells);
    free(cells);
    free(keys);
}

static int table_write(struct table *t, struct buf *out)
{
    size_t w[SV_MAX_COLS] = {0};
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t l = strlen(t->cells[r * t->ncols + c]);
            if (l > w[c])
                w[c] = l;
        }
    int rc = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            if (c + 1 == t->ncols)
                rc |= buf_printf(out, "%s\n", s);
            else
                rc |= buf_printf(out, "%-*s", (int)(w[c] + SV_PAD), s);
        }
    }
    return rc < 0 ? -E2BIG : 0;
}

/* A number from a cell, or the text when it is not one ("?"). New reference. */
static json_t *cell_int(const char *v)
{
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    return end != v && !*end ? json_integer((json_int_t)n) : json_string(v);
}

static json_t *cell_json(const struct col *c, const char *v)
{
    if (c->kind != COL_STR && strcmp(v, "-") == 0)
        return json_null();
    if (c->kind == COL_INT)
        return cell_int(v);
    const char *slash = c->kind == COL_STR ? NULL : strchr(v, '/');
    if (!slash)
        return json_string(v);
    char *a = xstrndup(v, (size_t)(slash - v));
    json_t *o = json_object();
    json_object_set_new(o, c->pair_a, c->kind == COL_PAIR_INT ? cell_int(a) : json_string(a));
    json_object_set_new(o, c->pair_b,
                        c->kind == COL_PAIR_INT ? cell_int(slash + 1) : json_string(slash + 1));
    free(a);
    return o;
}

/* The rows after the header as objects keyed by the columns' JSON fields. New reference. */
static json_t *table_json(const struct table *t)
{
    json_t *arr = json_array();
    for (size_t r = 1; r < t->nrows; r++) {
        json_t *o = json_object();
        for (size_t c = 0; c < t->ncols; c++)
            json_object_set_new(o, t->cols[c].key,
                                cell_json(&t->cols[c], t->cells[r * t->ncols + c]));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* Text table, or (JSON output) the rows under `key` of in->json_out. */
static int table_emit(const struct sv_input *in, struct table *t, const char *key, struct buf *out)
{
    if (in->json_out) {
        json_object_set_new(in->json_out, key, table_json(t));
        return 0;
    }
    return table_write(t, out);
}

/* A section without a table: its note as text, or as "<key>Note" in JSON. */
static int note_emit(const struct sv_input *in, const char *key, const char *title,
                     const char *note, struct buf *out)
{
    if (in->json_out) {
        char k[64];
        snprintf(k, sizeof k, "%sNote", key);
        json_object_set_new(in->json_out, key, json_array());
        json_object_set_new(in->json_out, k, json_string(note));
        return 0;
    }
    return buf_printf(out, "%s: %s\n", title, note) < 0 ? -E2BIG : 0;
}

static void table_free(struct table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
}

/* ---- helpers --------------------------------------------------------------------- */

const char *sv_age(int64_t ms, char *buf, size_t n)
{
    int64_t s = ms / 1000;
    if (ms < 0) {
        snprintf(buf, n, "-");
        return buf;
    }
    int64_t m = s / 60, h = s / 3600, d = h / 24;
    if (s < 120)
        snprintf(buf, n, "%" PRId64 "s", s);
    else if (m < 10)
        snprintf(buf, n, s % 60 ? "%" PRId64 "m%" PRId64 "s" : "%" PRId64 "m", m, s % 60);
    else if (m < 180)
        snprintf(buf, n, "%" PRId64 "m", m);
    else if (h < 8)
        snprintf(buf, n, m % 60 ? "%" PRId64 "h%" PRId64 "m" : "%" PRId64 "h", h, m % 60);
    else if (h < 48)
        snprintf(buf, n, "%" PRId64 "h", h);
    else if (h < 24 * 8)
        snprintf(buf, n, h % 24 ? "%" PRId64 "d%" PRId64 "h" : "%" PRId64 "d", d, h % 24);
    else
        snprintf(buf, n, "%" PRId64 "d", d);
    return buf;
}

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_string_value(v);
}

static const char *name_of(const json_t *o)
{
    const char *n = str_at(o, "metadata", "name");
    return n ? n : "";
}

/* Sum of resource `res` over nodes[].field into *sum; false when a value is bad. */
struct sum {
    struct qty q;
    bool any, bad;
};

static void sum_add(struct sum *s, const json_t *v)
{
    if (!v)
        return;
    struct qty q;
    if (qty_parse_json(v, &q, NULL) < 0 || qty_sign(&q) < 0) {
        s->bad = true;
        return;
    }
    struct qty t;
    if (!s->any) {
        s->q = q;
        s->any = true;
    } else if (qty_add(&s->q, &q, &t, NULL) == 0) {
        s->q = t;
    } else {
        s->bad = true;
    }
}

static const char *sum_fmt(const struct sum *s, char *buf)
{
    if (s->bad)
        return "?";
    if (!s->any)
        return "0";
    return qty_fmt(&s->q, buf);
}

static void used_cap(const json_t *nodes, const char *res, char *out, size_t n, bool dash_if_none)
{
    struct sum used = {0}, cap = {0};
    size_t i;
    json_t *nd;
    json_array_foreach(nodes, i, nd)
    {
        if (!json_is_object(nd))
            continue;
        sum_add(&used, json_object_get(json_object_get(nd, "allocatedResourceRequests"), res));
        sum_add(&cap, json_object_get(json_object_get(nd, "allocatableResources"), res));
    }
    if (dash_if_none && !cap.any && !cap.bad && !used.any) {
        snprintf(out, n, "-");
        return;
    }
    char a[QTY_STR_MAX], b[QTY_STR_MAX];
    snprintf(out, n, "%s/%s", sum_fmt(&used, a), sum_fmt(&cap, b));
}

static const char *ready_of(const json_t *cm)
{
    const char *s = jx_cond_status(cm, "Ready");
    return s ? s : "Unknown";
}

/* Complete/Failed (batch Jobs) or Succeeded/Failed (Kubeflow jobs) True: the job ran; its
 * cluster label stays, but it no longer runs there. */
static bool job_finished(const json_t *j)
{
    return jx_cond_is_true(j, "Complete") || jx_cond_is_true(j, "Failed") ||
           jx_cond_is_true(j, "Succeeded");
}

static size_t jobs_on(const json_t *jobs, const char *cluster)
{
    size_t n = 0, i;
    json_t *j;
    json_array_foreach(json_object_get(jobs, "items"), i, j)
    {
        if (job_finished(j))
            continue;
        const char *c = json_string_value(json_object_get(
            json_object_get(json_object_get(j, "metadata"), "labels"), SV_CLUSTER_LABEL));
        if (c && strcmp(c, cluster) == 0)
            n++;
    }
    return n;
}

static int render_clusters(const struct sv_input *in, struct buf *out)
{
    if (!in->cluster_metrics)
        return note_emit(in, "clusters", "CLUSTERS",
                         in->cluster_metrics_note ? in->cluster_metrics_note : "unavailable", out);
    json_t *items = json_object_get(in->cluster_metrics, "items");
    if (json_array_size(items) == 0)
        return note_emit(in, "clusters", "CLUSTERS",
                         "no ClusterMetrics found (is the agent running?)", out);
    static const struct col cols[] = {
        {"CLUSTER", "name", COL_STR, NULL, NULL},
        {"READY", "ready", COL_STR, NULL, NULL},
        {"NODES", "nodes", COL_PAIR_INT, "ready", "total"},
        {"CPU(used/cap)", "cpu", COL_PAIR, "used", "capacity"},
        {"MEMORY(used/cap)", "memory", COL_PAIR, "used", "capacity"},
        {"GPU(used/cap)", "gpu", COL_PAIR, "used", "capacity"},
        {"METRICS-AGE", "metricsAge", COL_STR, NULL, NULL},
        {"JOBS", "jobs", COL_INT, NULL, NULL},
        {"UNSCHEDULABLE", "unschedulableNodes", COL_INT, NULL, NULL},
        {"TAINTED", "taintedNodes", COL_INT, NULL, NULL},
    };
    struct table t;
    table_init(&t, cols, in->wide ? 10 : 8);
    size_t i;
    json_t *cm;
    json_array_foreach(items, i, cm)
    {
        if (!json_is_object(cm))
            continue;
        const json_t *nodes = json_object_get(json_object_get(cm, "status"), "nodes");
        size_t total = 0, ready = 0, unsched = 0, tainted = 0, k;
        json_t *nd;
        json_array_foreach(nodes, k, nd)
        {
            if (!json_is_object(nd))
                continue;
            total++;
            if (!json_is_false(json_object_get(nd, "ready")))
                ready++;
            if (json_is_true(json_object_get(nd, "unschedulable")))
                unsched++;
            if (json_array_size(json_object_get(nd, "taints")) > 0)
                tainted++;
        }
        char nodes_s[48], cpu[2 * QTY_STR_MAX + 2], mem[2 * QTY_STR_MAX + 2],
            gpu[2 * QTY_STR_MAX + 2], age[16] = "-", jobs[24] = "-", us[24], ts[24];
        snprintf(nodes_s, sizeof nodes_s, "%zu/%zu", ready, total);
        used_cap(nodes, "cpu", cpu, sizeof cpu, false);
        used_cap(nodes, "memory", mem, sizeof mem, false);
        used_cap(nodes, SV_GPU_RESOURCE, gpu, sizeof gpu, true);
        const char *lu = str_at(json_object_get(cm, "status"), "lastUpdated", NULL);
        struct timespec tsp;
        const char *rd = ready_of(cm);
        if (lu && clock_parse_rfc3339(lu, &tsp) == 0) {
            int64_t age_ms = in->now_ms - ((int64_t)tsp.tv_sec * 1000 + tsp.tv_nsec / 1000000);
            sv_age(age_ms, age, sizeof age);
            /* the agent of an unreachable worker cannot say False: its last True ages */
            if (age_ms > SV_METRICS_STALE_MS && strcmp(rd, "True") == 0)
                rd = "Stale";
        }
        if (in->jobs)
            snprintf(jobs, sizeof jobs, "%zu", jobs_on(in->jobs, name_of(cm)));
        snprintf(us, sizeof us, "%zu", unsched);
        snprintf(ts, sizeof ts, "%zu", tainted);
        const char *row[] = {name_of(cm), rd, nodes_s, cpu, mem, gpu, age, jobs, us, ts};
        table_row(&t, row);
    }
    table_sort(&t, 1);
    int rc = table_emit(in, &t, "clusters", out);
    table_free(&t);
    return rc;
}

/* The total of `res` for flavor `fl` in a flavorsReservation/flavorsUsage list. */
static void flavor_total(const json_t *list, const char *fl, const char *res, char *buf)
{
    size_t i, k;
    json_t *f, *r;
    json_array_foreach(list, i, f)
    {
        const char *n = json_string_value(json_object_get(f, "name"));
        if (!n || strcmp(n, fl) != 0)
            continue;
        json_array_foreach(json_object_get(f, "resources"), k, r)
        {
            const char *rn = json_string_value(json_object_get(r, "name"));
            if (!rn || strcmp(rn, res) != 0)
                continue;
            struct qty q;
            if (qty_parse_json(json_object_get(r, "total"), &q, NULL) < 0) {
                snprintf(buf, QTY_STR_MAX, "?");
                return;
            }
            qty_fmt(&q, buf);
            return;
        }
    }
    snprintf(buf, QTY_STR_MAX, "0");
}

/* From "fl/res=V: c1=4 c2=2 reserved=1; fl/res2=...; stale: c3": the part after
 * "fl/res=V:" up to the next "; ". New string, or NULL. */
static char *source_of(const char *ann, const char *fl, const char *res)
{
    char *key = xasprintf("%s/%s=", fl, res);
    const char *p = ann;
    char *out = NULL;
    size_t kl = strlen(key);
    while (p && *p) {
        if (strncmp(p, key, kl) == 0) {
            const char *c = strchr(p + kl, ':');
            const char *end = strstr(p, "; ");
            if (c && (!end || c < end)) {
                c++;
                while (*c == ' ')
                    c++;
                out = end ? xstrndup(c, (size_t)(end - c)) : xstrdup(c);
            }
            break;
        }
        p = strstr(p, "; ");
        if (p)
            p += 2;
    }
    free(key);
    return out;
}

static int render_queues(const struct sv_input *in, struct buf *out)
{
    if (!in->cluster_queues)
        return note_emit(in, "queues", "QUEUES",
                         in->cluster_queues_note ? in->cluster_queues_note : "unavailable", out);
    json_t *items = json_object_get(in->cluster_queues, "items");
    if (json_array_size(items) == 0)
        return note_emit(in, "queues", "QUEUES", "no ClusterQueues found", out);
    /* IN-USE (Kueue's flavorsUsage) counts Admitted workloads only; under our
     * check a placed workload stays quota-reserved (the check is never Ready),
     * so it is 0 for queues kueue-ks serves: shown in wide/JSON only. */
    bool use_col = in->wide || in->json_out;
    static const struct col cols[] = {
        {"CLUSTERQUEUE", "clusterQueue", COL_STR, NULL, NULL},
        {"FLAVOR", "flavor", COL_STR, NULL, NULL},
        {"RESOURCE", "resource", COL_STR, NULL, NULL},
        {"QUOTA", "quota", COL_STR, NULL, NULL},
        {"RESERVED", "reserved", COL_STR, NULL, NULL},
        {"IN-USE", "inUse", COL_STR, NULL, NULL},
        {"SOURCE", "source", COL_STR, NULL, NULL},
    };
    enum { NCOLS = sizeof cols / sizeof cols[0] };
    struct col shown[NCOLS]; /* cols without IN-USE unless use_col; the rows below match */
    size_t nshown = 0;
    for (size_t c = 0; c < NCOLS; c++)
        if (use_col || strcmp(cols[c].key, "inUse") != 0)
            shown[nshown++] = cols[c];
    struct table t;
    table_init(&t, shown, nshown);
    size_t i, gi, fi, ri;
    json_t *cq, *g, *f, *r;
    json_array_foreach(items, i, cq)
    {
        const char *ann = json_string_value(
            json_object_get(json_object_get(json_object_get(cq, "metadata"), "annotations"),
                            AGG_SOURCE_ANNOTATION));
        const json_t *st = json_object_get(cq, "status");
        const char *stale = ann ? strstr(ann, "; stale: ") : NULL;
        json_array_foreach(json_object_get(json_object_get(cq, "spec"), "resourceGroups"), gi, g)
        {
            json_array_foreach(json_object_get(g, "flavors"), fi, f)
            {
                const char *fl = json_string_value(json_object_get(f, "name"));
                if (!fl)
                    continue;
                json_array_foreach(json_object_get(f, "resources"), ri, r)
                {
                    const char *rn = json_string_value(json_object_get(r, "name"));
                    if (!rn)
                        continue;
                    char quota[QTY_STR_MAX], res[QTY_STR_MAX], use[QTY_STR_MAX];
                    struct qty q;
                    if (qty_parse_json(json_object_get(r, "nominalQuota"), &q, NULL) == 0)
                        qty_fmt(&q, quota);
                    else
                        snprintf(quota, sizeof quota, "?");
                    flavor_total(json_object_get(st, "flavorsReservation"), fl, rn, res);
                    flavor_total(json_object_get(st, "flavorsUsage"), fl, rn, use);
                    char *src = ann ? source_of(ann, fl, rn) : NULL;
                    struct buf sb;
                    buf_init(&sb, 1 << 16);
                    buf_puts(&sb, src ? src : "-");
                    if (in->wide && stale && src)
                        buf_printf(&sb, " (stale:%s)", stale + strlen("; stale:"));
                    if (!in->wide && sb.len > SV_SOURCE_MAX) {
                        char *s = xstrndup(buf_str(&sb), SV_SOURCE_MAX - 3);
                        buf_reset(&sb);
                        buf_printf(&sb, "%s...", s);
                        free(s);
                    }
                    const char *row[] = {name_of(cq), fl,  rn,
                                         quota,       res, use_col ? use : buf_str(&sb),
                                         buf_str(&sb)};
                    table_row(&t, row);
                    buf_free(&sb);
                    free(src);
                }
            }
        }
    }
    table_sort(&t, 1);
    int rc = table_emit(in, &t, "queues", out);
    table_free(&t);
    return rc;
}

static int render_workloads(const struct sv_input *in, struct buf *out)
{
    if (!in->workloads)
        return note_emit(in, "workloads", "WORKLOADS",
                         in->workloads_note ? in->workloads_note : "unavailable", out);
    size_t pending = 0, reserved = 0, admitted = 0, finished = 0, i;
    json_t *items = json_object_get(in->workloads, "items"), *w;
    json_array_foreach(items, i, w)
    {
        if (jx_cond_is_true(w, "Finished"))
            finished++;
        else if (jx_cond_is_true(w, "Admitted"))
            admitted++;
        else if (jx_cond_is_true(w, "QuotaReserved"))
            reserved++;
        else
            pending++;
    }
    if (in->json_out) {
        json_object_set_new(
            in->json_out, "workloads",
            json_pack("{s:I,s:I,s:I,s:I,s:I}", "total", (json_int_t)json_array_size(items),
                      "pending", (json_int_t)pending, "quotaReserved", (json_int_t)reserved,
                      "admitted", (json_int_t)admitted, "finished", (json_int_t)finished));
        return 0;
    }
    if (buf_printf(out,
                   "WORKLOADS: %zu (pending %zu, quota-reserved %zu, admitted %zu, finished %zu)\n",
                   json_array_size(items), pending, reserved, admitted, finished) < 0)
        return -E2BIG;
    /* a Kueue user expects "admitted" to count the running jobs */
    if (reserved > 0 &&
        buf_puts(out, "  (a job kueue-ks places stays quota-reserved, never Admitted: its check "
                      "stays Pending and its hub Job suspended while a worker runs it; JOBS above "
                      "counts them)\n") < 0)
        return -E2BIG;
    return 0;
}

json_t *sv_render_json(const struct sv_input *in)
{
    struct sv_input j = *in;
    j.json_out = json_object();
    j.wide = true; /* every column, sources whole: JSON is read by programs, not widths */
    struct buf unused;
    buf_init(&unused, 16);
    sv_render(&j, &unused);
    buf_free(&unused);
    return j.json_out;
}

int sv_render(const struct sv_input *in, struct buf *out)
{
    if (render_clusters(in, out) < 0 || buf_puts(out, "\n") < 0 || render_queues(in, out) < 0 ||
        buf_puts(out, "\n") < 0 || render_workloads(in, out) < 0)
        return -E2BIG;
    return 0;
}
