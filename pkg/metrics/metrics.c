/* metrics: Prometheus registry and text exposition (see metrics.h). */
#include "pkg/metrics/metrics.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pkg/util/xalloc.h"

const double metrics_default_buckets[11] = {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};

enum mtype { MT_COUNTER, MT_GAUGE, MT_HISTOGRAM };

/* One time series (one combination of label values). */
struct mchild {
    char **values; /* nlabels copies, in declaration order */
    double v;      /* counter / gauge value */
    double sum;    /* histogram */
    unsigned long long count;
    unsigned long long *counts; /* histogram: per finite bucket, not cumulative */
    const double *bounds;       /* histogram: the family's bounds (borrowed) */
    size_t nb;
};

struct metrics_counter {
    struct mchild m;
};
struct metrics_gauge {
    struct mchild m;
};
struct metrics_histogram {
    struct mchild m;
};

/* One metric family. */
struct family {
    enum mtype type;
    char *name;
    char *help;
    char **labels; /* nlabels names, declaration order */
    size_t nlabels;
    size_t order[METRICS_MAX_LABELS]; /* label indexes sorted by name (output order) */
    double *bounds;                   /* histogram upper bounds */
    size_t nb;
    struct mchild **children; /* sorted by label values in output order */
    size_t nchildren, capchildren;
    struct mchild *sink; /* detached child for misuse, never exposed */
};

struct metrics_counter_vec {
    struct family f;
};
struct metrics_gauge_vec {
    struct family f;
};
struct metrics_histogram_vec {
    struct family f;
};

struct collector {
    metrics_collect_fn fn;
    void *ud;
};

/* Gauges/counters of the process collector. */
struct proc_metrics {
    struct metrics_counter *cpu;
    struct metrics_gauge *open_fds, *max_fds, *vsize, *rss, *start;
};

struct metrics_registry {
    struct family **fams; /* sorted by name */
    size_t n, cap;
    struct collector *collectors;
    size_t ncollectors;
    struct proc_metrics *proc; /* owned, NULL unless registered */
};

/* ---- names ------------------------------------------------------------- */

int metrics_valid_metric_name(const char *name)
{
    if (!name || !*name)
        return 0;
    for (const char *p = name; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                  (p != name && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

int metrics_valid_label_name(const char *name)
{
    if (!name || !*name)
        return 0;
    if (name[0] == '_' && name[1] == '_')
        return 0;
    for (const char *p = name; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                  (p != name && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

/* ---- numbers ----------------------------------------------------------- */

const char *metrics_format_float(char *buf, size_t n, double v)
{
    if (isnan(v)) {
        snprintf(buf, n, "NaN");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, n, "%s", v > 0 ? "+Inf" : "-Inf");
        return buf;
    }
    if (v == 0) {
        snprintf(buf, n, "%s", signbit(v) ? "-0" : "0");
        return buf;
    }
    /* Shortest number of significant digits that round-trips. */
    char tmp[40];
    int digits = 17;
    for (int p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof(tmp), "%.*e", p - 1, v);
        if (strtod(tmp, NULL) == v) {
            digits = p;
            break;
        }
    }
    snprintf(tmp, sizeof(tmp), "%.*e", digits - 1, v);
    const char *e = strchr(tmp, 'e');
    long exp = e ? strtol(e + 1, NULL, 10) : 0;
    /* Go's 'g' with shortest precision uses %e when exp < -4 || exp >= 6. */
    long eprec = 6;
    if (exp < -4 || exp >= eprec) {
        snprintf(buf, n, "%s", tmp);
    } else {
        int prec = digits - 1 - (int)exp;
        snprintf(buf, n, "%.*f", prec < 0 ? 0 : prec, v);
    }
    return buf;
}

void metrics_linear_buckets(double start, double width, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = start + width * (double)i;
}

void metrics_exponential_buckets(double start, double factor, size_t n, double *out)
{
    double v = start;
    for (size_t i = 0; i < n; i++) {
        out[i] = v;
        v *= factor;
    }
}

/* ---- registry ---------------------------------------------------------- */

struct metrics_registry *metrics_registry_new(void)
{
    return xcalloc(1, sizeof(struct metrics_registry));
}

static void child_free(struct mchild *c, size_t nlabels)
{
    if (!c)
        return;
    for (size_t i = 0; i < nlabels; i++)
        free(c->values[i]);
    free(c->values);
    free(c->counts);
    free(c);
}

static void family_free(struct family *f)
{
    for (size_t i = 0; i < f->nchildren; i++)
        child_free(f->children[i], f->nlabels);
    child_free(f->sink, 0);
    free(f->children);
    for (size_t i = 0; i < f->nlabels; i++)
        free(f->labels[i]);
    free(f->labels);
    free(f->bounds);
    free(f->name);
    free(f->help);
    free(f);
}

void metrics_registry_free(struct metrics_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++)
        family_free(reg->fams[i]);
    free(reg->fams);
    free(reg->collectors);
    free(reg->proc);
    free(reg);
}

/* Allocate a child: struct metrics_counter/gauge/histogram all wrap an mchild
 * as their only member, so one allocation size serves all three types. */
static struct mchild *child_alloc(const struct family *f, const char *const *values)
{
    struct metrics_histogram *h = xcalloc(1, sizeof(*h));
    struct mchild *c = &h->m;
    if (values) {
        c->values = xcalloc(f->nlabels ? f->nlabels : 1, sizeof(char *));
        for (size_t i = 0; i < f->nlabels; i++)
            c->values[i] = xstrdup(values[i]);
    }
    if (f->type == MT_HISTOGRAM) {
        c->nb = f->nb;
        c->bounds = f->bounds;
        c->counts = xcalloc(f->nb ? f->nb : 1, sizeof(unsigned long long));
    }
    return c;
}

static int new_family(struct metrics_registry *reg, struct family *f, enum mtype type,
                      const char *name, const char *help, const char *const *labels,
                      const double *buckets, size_t nbuckets, struct err *e)
{
    if (!metrics_valid_metric_name(name))
        return err_set(e, -EINVAL, "metrics: invalid metric name \"%s\"", name ? name : "(null)");
    size_t nl = 0;
    while (labels && labels[nl])
        nl++;
    if (nl > METRICS_MAX_LABELS)
        return err_set(e, -EINVAL, "metrics: %s: too many labels (%zu, max %d)", name, nl,
                       METRICS_MAX_LABELS);
    for (size_t i = 0; i < nl; i++) {
        if (!metrics_valid_label_name(labels[i]))
            return err_set(e, -EINVAL, "metrics: %s: invalid label name \"%s\"", name, labels[i]);
        if (type == MT_HISTOGRAM && strcmp(labels[i], "le") == 0)
            return err_set(e, -EINVAL, "metrics: %s: label \"le\" is reserved for histograms",
                           name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(labels[i], labels[j]) == 0)
                return err_set(e, -EINVAL, "metrics: %s: duplicate label name \"%s\"", name,
                               labels[i]);
    }
    if (type == MT_HISTOGRAM) {
        if (!buckets || nbuckets == 0) {
            buckets = metrics_default_buckets;
            nbuckets = sizeof(metrics_default_buckets) / sizeof(metrics_default_buckets[0]);
        }
        if (isinf(buckets[nbuckets - 1]) && buckets[nbuckets - 1] > 0)
            nbuckets--;
        if (nbuckets > METRICS_MAX_BUCKETS)
            return err_set(e, -EINVAL, "metrics: %s: too many buckets (%zu, max %d)", name,
                           nbuckets, METRICS_MAX_BUCKETS);
        for (size_t i = 0; i < nbuckets; i++) {
            if (!isfinite(buckets[i]) || (i > 0 && !(buckets[i] > buckets[i - 1])))
                return err_set(e, -EINVAL,
                               "metrics: %s: histogram buckets must be finite and strictly "
                               "increasing (bucket %zu)",
                               name, i);
        }
    }
    /* Find the insertion point (families sorted by name), reject duplicates. */
    size_t lo = 0, hi = reg->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(reg->fams[mid]->name, name);
        if (c == 0)
            return err_set(e, -EEXIST, "metrics: %s: already registered", name);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }

    f->type = type;
    f->name = xstrdup(name);
    f->help = xstrdup(help ? help : "");
    f->nlabels = nl;
    f->labels = xcalloc(nl ? nl : 1, sizeof(char *));
    for (size_t i = 0; i < nl; i++) {
        f->labels[i] = xstrdup(labels[i]);
        f->order[i] = i;
    }
    /* Insertion sort of the output order by label name. */
    for (size_t i = 1; i < nl; i++) {
        size_t k = f->order[i], j = i;
        while (j > 0 && strcmp(f->labels[f->order[j - 1]], f->labels[k]) > 0) {
            f->order[j] = f->order[j - 1];
            j--;
        }
        f->order[j] = k;
    }
    if (type == MT_HISTOGRAM) {
        f->nb = nbuckets;
        f->bounds = xcalloc(nbuckets ? nbuckets : 1, sizeof(double));
        memcpy(f->bounds, buckets, nbuckets * sizeof(double));
    }
    f->sink = child_alloc(f, NULL);

    if (reg->n == reg->cap) {
        reg->cap = reg->cap ? reg->cap * 2 : 16;
        reg->fams = xrealloc(reg->fams, reg->cap * sizeof(*reg->fams));
    }
    memmove(&reg->fams[lo + 1], &reg->fams[lo], (reg->n - lo) * sizeof(*reg->fams));
    reg->fams[lo] = f;
    reg->n++;
    return 0;
}

struct metrics_counter_vec *metrics_counter_vec_new(struct metrics_registry *reg, const char *name,
                                                    const char *help, const char *const *labels,
                                                    struct err *e)
{
    struct metrics_counter_vec *v = xcalloc(1, sizeof(*v));
    if (new_family(reg, &v->f, MT_COUNTER, name, help, labels, NULL, 0, e) < 0) {
        free(v);
        return NULL;
    }
    return v;
}

struct metrics_gauge_vec *metrics_gauge_vec_new(struct metrics_registry *reg, const char *name,
                                                const char *help, const char *const *labels,
                                                struct err *e)
{
    struct metrics_gauge_vec *v = xcalloc(1, sizeof(*v));
    if (new_family(reg, &v->f, MT_GAUGE, name, help, labels, NULL, 0, e) < 0) {
        free(v);
        return NULL;
    }
    return v;
}

struct metrics_histogram_vec *metrics_histogram_vec_new(struct metrics_registry *reg,
                                                        const char *name, const char *help,
                                                        const char *const *labels,
                                                        const double *buckets, size_t nbuckets,
                                                        struct err *e)
{
    struct metrics_histogram_vec *v = xcalloc(1, sizeof(*v));
    if (new_family(reg, &v->f, MT_HISTOGRAM, name, help, labels, buckets, nbuckets, e) < 0) {
        free(v);
        return NULL;
    }
    return v;
}

/* The registered family `name` when it has this type and exactly these label names. */
static struct family *find_family(struct metrics_registry *reg, enum mtype type, const char *name,
                                  const char *const *labels)
{
    for (size_t i = 0; name && i < reg->n; i++) {
        struct family *f = reg->fams[i];
        if (strcmp(f->name, name) != 0)
            continue;
        if (f->type != type)
            return NULL;
        size_t nl = 0;
        while (labels && labels[nl])
            nl++;
        if (nl != f->nlabels)
            return NULL;
        for (size_t j = 0; j < nl; j++)
            if (strcmp(f->labels[j], labels[j]) != 0)
                return NULL;
        return f;
    }
    return NULL;
}

struct metrics_counter_vec *metrics_counter_vec_shared(struct metrics_registry *reg,
                                                       const char *name, const char *help,
                                                       const char *const *labels, struct err *e)
{
    struct family *f = find_family(reg, MT_COUNTER, name, labels);
    if (f)
        return (struct metrics_counter_vec *)f; /* f is the first member */
    return metrics_counter_vec_new(reg, name, help, labels, e);
}

struct metrics_gauge_vec *metrics_gauge_vec_shared(struct metrics_registry *reg, const char *name,
                                                   const char *help, const char *const *labels,
                                                   struct err *e)
{
    struct family *f = find_family(reg, MT_GAUGE, name, labels);
    if (f)
        return (struct metrics_gauge_vec *)f;
    return metrics_gauge_vec_new(reg, name, help, labels, e);
}

/* ---- children ---------------------------------------------------------- */

/* Compare a child's values with a query tuple, in output (label name) order. */
static int cmp_values(const struct family *f, char *const *a, const char *const *b)
{
    for (size_t i = 0; i < f->nlabels; i++) {
        size_t k = f->order[i];
        int c = strcmp(a[k], b[k]);
        if (c)
            return c;
    }
    return 0;
}

/* Index of the child with these values, or -(insertion point) - 1. */
static long find_child(const struct family *f, const char *const *values)
{
    size_t lo = 0, hi = f->nchildren;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_values(f, f->children[mid]->values, values);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(long)lo - 1;
}

/* Strict UTF-8 (no overlongs, surrogates or code points above U+10FFFF). */
static bool valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        size_t n;
        unsigned min;
        if (c < 0x80) {
            p++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1;
            min = 0x80;
            c &= 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2;
            min = 0x800;
            c &= 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3;
            min = 0x10000;
            c &= 0x07;
        } else {
            return false;
        }
        for (size_t i = 1; i <= n; i++) {
            if ((p[i] & 0xC0) != 0x80)
                return false;
            c = (c << 6) | (p[i] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return false;
        p += n + 1;
    }
    return true;
}

static bool values_ok(const struct family *f, const char *const *values)
{
    size_t n = 0;
    while (values && values[n]) {
        if (!valid_utf8(values[n]))
            return false;
        n++;
    }
    return n == f->nlabels;
}

static struct mchild *family_with(struct family *f, const char *const *values)
{
    static const char *const none[] = {NULL};
    if (!values)
        values = none;
    if (!values_ok(f, values))
        return f->sink;
    long idx = find_child(f, values);
    if (idx >= 0)
        return f->children[idx];
    size_t at = (size_t)(-(idx + 1));
    if (f->nchildren == f->capchildren) {
        f->capchildren = f->capchildren ? f->capchildren * 2 : 8;
        f->children = xrealloc(f->children, f->capchildren * sizeof(*f->children));
    }
    memmove(&f->children[at + 1], &f->children[at], (f->nchildren - at) * sizeof(*f->children));
    f->children[at] = child_alloc(f, values);
    f->nchildren++;
    return f->children[at];
}

static int family_delete(struct family *f, const char *const *values)
{
    static const char *const none[] = {NULL};
    if (!values)
        values = none;
    if (!values_ok(f, values))
        return -ENOENT;
    long idx = find_child(f, values);
    if (idx < 0)
        return -ENOENT;
    child_free(f->children[idx], f->nlabels);
    memmove(&f->children[idx], &f->children[idx + 1],
            (f->nchildren - (size_t)idx - 1) * sizeof(*f->children));
    f->nchildren--;
    return 0;
}

/* A NULL vector (a failed *_new whose error was ignored) is a caller bug. */
static struct family *fam_or_die(struct family *f)
{
    if (!f)
        abort();
    return f;
}

struct metrics_counter *metrics_counter_vec_with_v(struct metrics_counter_vec *v,
                                                   const char *const *values)
{
    return (struct metrics_counter *)family_with(fam_or_die(v ? &v->f : NULL), values);
}

struct metrics_gauge *metrics_gauge_vec_with_v(struct metrics_gauge_vec *v,
                                               const char *const *values)
{
    return (struct metrics_gauge *)family_with(fam_or_die(v ? &v->f : NULL), values);
}

struct metrics_histogram *metrics_histogram_vec_with_v(struct metrics_histogram_vec *v,
                                                       const char *const *values)
{
    return (struct metrics_histogram *)family_with(fam_or_die(v ? &v->f : NULL), values);
}

int metrics_counter_vec_delete(struct metrics_counter_vec *v, const char *const *values)
{
    return v ? family_delete(&v->f, values) : -ENOENT;
}

int metrics_gauge_vec_delete(struct metrics_gauge_vec *v, const char *const *values)
{
    return v ? family_delete(&v->f, values) : -ENOENT;
}

int metrics_histogram_vec_delete(struct metrics_histogram_vec *v, const char *const *values)
{
    return v ? family_delete(&v->f, values) : -ENOENT;
}

struct metrics_counter *metrics_counter_new(struct metrics_registry *reg, const char *name,
                                            const char *help, struct err *e)
{
    struct metrics_counter_vec *v = metrics_counter_vec_new(reg, name, help, NULL, e);
    return v ? metrics_counter_vec_with_v(v, NULL) : NULL;
}

struct metrics_gauge *metrics_gauge_new(struct metrics_registry *reg, const char *name,
                                        const char *help, struct err *e)
{
    struct metrics_gauge_vec *v = metrics_gauge_vec_new(reg, name, help, NULL, e);
    return v ? metrics_gauge_vec_with_v(v, NULL) : NULL;
}

struct metrics_histogram *metrics_histogram_new(struct metrics_registry *reg, const char *name,
                                                const char *help, const double *buckets,
                                                size_t nbuckets, struct err *e)
{
    struct metrics_histogram_vec *v =
        metrics_histogram_vec_new(reg, name, help, NULL, buckets, nbuckets, e);
    return v ? metrics_histogram_vec_with_v(v, NULL) : NULL;
}

/* ---- values ------------------------------------------------------------ */

void metrics_counter_inc(struct metrics_counter *c)
{
    c->m.v += 1;
}

void metrics_counter_add(struct metrics_counter *c, double delta)
{
    if (!(delta >= 0))
        return;
    c->m.v += delta;
}

double metrics_counter_value(const struct metrics_counter *c)
{
    return c->m.v;
}

void metrics_gauge_set(struct metrics_gauge *g, double v)
{
    g->m.v = v;
}

void metrics_gauge_inc(struct metrics_gauge *g)
{
    g->m.v += 1;
}

void metrics_gauge_dec(struct metrics_gauge *g)
{
    g->m.v -= 1;
}

void metrics_gauge_add(struct metrics_gauge *g, double delta)
{
    g->m.v += delta;
}

double metrics_gauge_value(const struct metrics_gauge *g)
{
    return g->m.v;
}

void metrics_histogram_observe(struct metrics_histogram *h, double v)
{
    struct mchild *c = &h->m;
    /* First bound >= v; NaN and values above the largest bound count only in +Inf. */
    size_t lo = 0, hi = c->nb;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->bounds[mid] >= v)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo < c->nb && c->bounds[lo] >= v)
        c->counts[lo]++;
    c->count++;
    c->sum += v;
}

unsigned long long metrics_histogram_count(const struct metrics_histogram *h)
{
    return h->m.count;
}

double metrics_histogram_sum(const struct metrics_histogram *h)
{
    return h->m.sum;
}

/* ---- exposition -------------------------------------------------------- */

/* Output with a sticky error: every append after the cap was hit is dropped. */
struct wr {
    struct buf *b;
    int err;
};

static void put(struct wr *w, const char *s)
{
    if (!w->err)
        w->err = buf_puts(w->b, s);
}

static void put_escaped(struct wr *w, const char *s, bool quote)
{
    const char *run = s;
    for (const char *p = s;; p++) {
        const char *rep = NULL;
        if (*p == '\\')
            rep = "\\\\";
        else if (*p == '\n')
            rep = "\\n";
        else if (quote && *p == '"')
            rep = "\\\"";
        else if (*p)
            continue;
        if (!w->err && p > run)
            w->err = buf_append(w->b, run, (size_t)(p - run));
        if (!rep)
            return;
        put(w, rep);
        run = p + 1;
    }
}

/* name{labels[,le="x"]} value */
static void put_sample(struct wr *out, const struct family *f, const struct mchild *c,
                       const char *suffix, const char *le, double value)
{
    char num[40];
    put(out, f->name);
    put(out, suffix);
    if (f->nlabels || le) {
        put(out, "{");
        for (size_t i = 0; i < f->nlabels; i++) {
            size_t k = f->order[i];
            if (i)
                put(out, ",");
            put(out, f->labels[k]);
            put(out, "=\"");
            put_escaped(out, c->values[k], true);
            put(out, "\"");
        }
        if (le) {
            if (f->nlabels)
                put(out, ",");
            put(out, "le=\"");
            put(out, le);
            put(out, "\"");
        }
        put(out, "}");
    }
    put(out, " ");
    put(out, metrics_format_float(num, sizeof(num), value));
    put(out, "\n");
}

void metrics_registry_add_collector(struct metrics_registry *reg, metrics_collect_fn fn,
                                    void *userdata)
{
    reg->collectors = xrealloc(reg->collectors, (reg->ncollectors + 1) * sizeof(*reg->collectors));
    reg->collectors[reg->ncollectors++] = (struct collector){fn, userdata};
}

/* ---- process collector ------------------------------------------------- */

static double boot_time(void)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return 0;
    char line[256];
    double bt = 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "btime ", 6) == 0) {
            bt = strtod(line + 6, NULL);
            break;
        }
    }
    fclose(f);
    return bt;
}

static void collect_process(void *ud)
{
    struct proc_metrics *pm = ud;
    long ticks = sysconf(_SC_CLK_TCK);
    long page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/stat", "re");
    if (f) {
        char line[1024];
        if (fgets(line, sizeof(line), f)) {
            /* Fields after the command name, which is in parentheses and may contain spaces. */
            const char *p = strrchr(line, ')');
            unsigned long long v[24] = {0};
            int n = 0;
            if (p) {
                p++;
                while (*p && n < 24) {
                    while (*p == ' ')
                        p++;
                    char *end = NULL;
                    v[n] = strtoull(p, &end, 10);
                    if (end == p) { /* the state letter */
                        v[n] = 0;
                        end = (char *)p + 1;
                    }
                    n++;
                    p = end;
                }
            }
            /* v[0] = state (field 3), so field k is v[k - 3]. */
            if (n >= 22 && ticks > 0) {
                pm->cpu->m.v = (double)(v[14 - 3] + v[15 - 3]) / (double)ticks;
                metrics_gauge_set(pm->start, boot_time() + (double)v[22 - 3] / (double)ticks);
                metrics_gauge_set(pm->vsize, (double)v[23 - 3]);
                metrics_gauge_set(pm->rss, (double)v[24 - 3] * (double)page);
            }
        }
        fclose(f);
    }
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        long n = 0;
        struct dirent *de;
        while ((de = readdir(d)))
            if (de->d_name[0] != '.')
                n++;
        closedir(d);
        metrics_gauge_set(pm->open_fds, (double)(n - 1)); /* minus the DIR's own fd */
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        metrics_gauge_set(pm->max_fds,
                          rl.rlim_cur == RLIM_INFINITY ? INFINITY : (double)rl.rlim_cur);
}

int metrics_register_process_collector(struct metrics_registry *reg, struct err *e)
{
    if (reg->proc)
        return err_set(e, -EEXIST, "metrics: process collector already registered");
    struct proc_metrics pm = {0};
    pm.cpu = metrics_counter_new(reg, "process_cpu_seconds_total",
                                 "Total user and system CPU time spent in seconds.", e);
    pm.open_fds = metrics_gauge_new(reg, "process_open_fds", "Number of open file descriptors.", e);
    pm.max_fds =
        metrics_gauge_new(reg, "process_max_fds", "Maximum number of open file descriptors.", e);
    pm.vsize =
        metrics_gauge_new(reg, "process_virtual_memory_bytes", "Virtual memory size in bytes.", e);
    pm.rss = metrics_gauge_new(reg, "process_resident_memory_bytes",
                               "Resident memory size in bytes.", e);
    pm.start = metrics_gauge_new(reg, "process_start_time_seconds",
                                 "Start time of the process since unix epoch in seconds.", e);
    if (!pm.cpu || !pm.open_fds || !pm.max_fds || !pm.vsize || !pm.rss || !pm.start)
        return e ? e->code : -EEXIST; /* a name is taken: the families already made stay */
    reg->proc = xmalloc(sizeof(*reg->proc));
    *reg->proc = pm;
    metrics_registry_add_collector(reg, collect_process, reg->proc);
    return 0;
}

int metrics_registry_write(struct metrics_registry *reg, struct buf *out)
{
    for (size_t i = 0; i < reg->ncollectors; i++)
        reg->collectors[i].fn(reg->collectors[i].ud);
    static const char *const types[] = {"counter", "gauge", "histogram"};
    struct wr w = {out, 0};
    for (size_t i = 0; i < reg->n && !w.err; i++) {
        const struct family *f = reg->fams[i];
        if (f->nchildren == 0)
            continue;
        put(&w, "# HELP ");
        put(&w, f->name);
        put(&w, " ");
        put_escaped(&w, f->help, false);
        put(&w, "\n# TYPE ");
        put(&w, f->name);
        put(&w, " ");
        put(&w, types[f->type]);
        put(&w, "\n");
        for (size_t j = 0; j < f->nchildren; j++) {
            const struct mchild *c = f->children[j];
            if (f->type != MT_HISTOGRAM) {
                put_sample(&w, f, c, "", NULL, c->v);
                continue;
            }
            unsigned long long cum = 0;
            char le[40];
            for (size_t b = 0; b < f->nb; b++) {
                cum += c->counts[b];
                put_sample(&w, f, c, "_bucket", metrics_format_float(le, sizeof(le), f->bounds[b]),
                           (double)cum);
            }
            put_sample(&w, f, c, "_bucket", "+Inf", (double)c->count);
            put_sample(&w, f, c, "_sum", NULL, c->sum);
            put_sample(&w, f, c, "_count", NULL, (double)c->count);
        }
    }
    return w.err;
}
