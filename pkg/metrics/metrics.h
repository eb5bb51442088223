/*
 * metrics: a Prometheus metrics registry (counters, gauges, histograms, each
 * optionally a vector over a fixed set of label names) and its text
 * exposition format 0.0.4, as served on /metrics.
 *
 *   struct metrics_registry *reg = metrics_registry_new();
 *   struct metrics_counter_vec *req = metrics_counter_vec_new(reg,
 *       "kueue_ks_rest_requests_total", "REST requests by verb and code.",
 *       METRICS_LABELS("verb", "code"), &e);
 *   metrics_counter_inc(metrics_counter_vec_with(req, "GET", "200"));
 *   metrics_registry_write(reg, &out);
 *
 * Semantics follow the Go client (prometheus/client_golang): metric names
 * match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]* and must
 * not start with "__"; histograms may not use the label "le"; the default
 * buckets are .005 .01 .025 .05 .1 .25 .5 1 2.5 5 10; the output lists
 * families sorted by name and children sorted by label values; numbers are
 * printed like Go's strconv.FormatFloat(v, 'g', -1, 64) ("1e+06", "0.005",
 * "+Inf", "NaN").
 *
 * Not thread-safe: use it from the event loop thread (like everything else).
 * Children returned by *_with() are owned by their vector and live until the
 * registry is freed or the child is deleted with *_vec_delete().
 */
#ifndef KKS_METRICS_METRICS_H
#define KKS_METRICS_METRICS_H

#include <stddef.h>

#include "pkg/util/buf.h"
#include "pkg/util/err.h"

struct metrics_registry;
struct metrics_counter_vec;
struct metrics_gauge_vec;
struct metrics_histogram_vec;
struct metrics_counter;
struct metrics_gauge;
struct metrics_histogram;

/* A NULL-terminated list of label names / values for the *_new and *_v calls. */
#define METRICS_LABELS(...) ((const char *const[]){__VA_ARGS__, (const char *)0})

/* Maximum number of labels per metric and of buckets per histogram. */
#define METRICS_MAX_LABELS  16
#define METRICS_MAX_BUCKETS 64

/* The Go client's DefBuckets. */
extern const double metrics_default_buckets[11];

/* A new empty registry (never NULL). Free with metrics_registry_free. */
struct metrics_registry *metrics_registry_new(void);
/* Free the registry and every metric in it; pointers into it become invalid. NULL is fine. */
void metrics_registry_free(struct metrics_registry *reg);

/*
 * Register a metric family. `labels` is a NULL-terminated list of label
 * names (NULL or an empty list: a single unlabelled metric), copied.
 * Returns the vector (owned by the registry), or NULL with `e` filled:
 * -EINVAL for an invalid metric or label name, a duplicate label name, too
 * many labels, bad buckets; -EEXIST when the name is already registered.
 */
struct metrics_counter_vec *metrics_counter_vec_new(struct metrics_registry *reg, const char *name,
                                                    const char *help, const char *const *labels,
                                                    struct err *e);
struct metrics_gauge_vec *metrics_gauge_vec_new(struct metrics_registry *reg, const char *name,
                                                const char *help, const char *const *labels,
                                                struct err *e);
/*
 * `buckets`: `nbuckets` strictly increasing finite upper bounds (a trailing
 * +Inf is accepted and dropped: the +Inf bucket is always implicit); NULL or
 * 0 buckets selects metrics_default_buckets.
 */
struct metrics_histogram_vec *metrics_histogram_vec_new(struct metrics_registry *reg,
                                                        const char *name, const char *help,
                                                        const char *const *labels,
                                                        const double *buckets, size_t nbuckets,
                                                        struct err *e);

/*
 * Register-or-get, for a family several components write to (e.g.
 * kueue_ks_reconcile_errors_total{controller}): when `name` is already
 * registered with the same type and the same label names (same order), that
 * vector is returned; otherwise as *_vec_new (-EEXIST when the name is taken
 * by a different type or label set).
 */
struct metrics_counter_vec *metrics_counter_vec_shared(struct metrics_registry *reg,
                                                       const char *name, const char *help,
                                                       const char *const *labels, struct err *e);
struct metrics_gauge_vec *metrics_gauge_vec_shared(struct metrics_registry *reg, const char *name,
                                                   const char *help, const char *const *labels,
                                                   struct err *e);

/* Unlabelled shorthands: register and return the single child. NULL on error (see above). */
struct metrics_counter *metrics_counter_new(struct metrics_registry *reg, const char *name,
                                            const char *help, struct err *e);
struct metrics_gauge *metrics_gauge_new(struct metrics_registry *reg, const char *name,
                                        const char *help, struct err *e);
struct metrics_histogram *metrics_histogram_new(struct metrics_registry *reg, const char *name,
                                                const char *help, const double *buckets,
                                                size_t nbuckets, struct err *e);

/*
 * The child for one combination of label values (created at zero on first
 * use; values are copied). Pass exactly as many values as the vector has
 * label names; the macros add the terminating NULL. A wrong number of values
 * (or a value that is not valid UTF-8, which would break the scrape) is a
 * programming error: the result is then a detached sink that accepts
 * updates and is never exposed, so the caller cannot crash. `v` must not be
 * NULL (aborts). Borrowed; never NULL.
 */
struct metrics_counter *metrics_counter_vec_with_v(struct metrics_counter_vec *v,
                                                   const char *const *values);
struct metrics_gauge *metrics_gauge_vec_with_v(struct metrics_gauge_vec *v,
                                               const char *const *values);
struct metrics_histogram *metrics_histogram_vec_with_v(struct metrics_histogram_vec *v,
                                                       const char *const *values);
#define metrics_counter_vec_with(v, ...)                                                           \
    metrics_counter_vec_with_v((v), (const char *const[]){__VA_ARGS__, (const char *)0})
#define metrics_gauge_vec_with(v, ...)                                                             \
    metrics_gauge_vec_with_v((v), (const char *const[]){__VA_ARGS__, (const char *)0})
#define metrics_histogram_vec_with(v, ...)                                                         \
    metrics_histogram_vec_with_v((v), (const char *const[]){__VA_ARGS__, (const char *)0})

/*
 * Remove the child with these label values (e.g. a cluster that went away).
 * Pointers previously returned for it become invalid. 0, or -ENOENT.
 */
int metrics_counter_vec_delete(struct metrics_counter_vec *v, const char *const *values);
int metrics_gauge_vec_delete(struct metrics_gauge_vec *v, const char *const *values);
int metrics_histogram_vec_delete(struct metrics_histogram_vec *v, const char *const *values);

/* Counter: only goes up. Negative or NaN increments are ignored (the Go client panics). */
void metrics_counter_inc(struct metrics_counter *c);
void metrics_counter_add(struct metrics_counter *c, double delta);
double metrics_counter_value(const struct metrics_counter *c);

void metrics_gauge_set(struct metrics_gauge *g, double v);
void metrics_gauge_inc(struct metrics_gauge *g);
void metrics_gauge_dec(struct metrics_gauge *g);
void metrics_gauge_add(struct metrics_gauge *g, double delta);
double metrics_gauge_value(const struct metrics_gauge *g);

/* Count v in the first bucket whose upper bound is >= v (and in +Inf); add it to the sum. */
void metrics_histogram_observe(struct metrics_histogram *h, double v);
unsigned long long metrics_histogram_count(const struct metrics_histogram *h);
double metrics_histogram_sum(const struct metrics_histogram *h);

/* Bucket helpers (like prometheus.LinearBuckets / ExponentialBuckets). Fill `out[0..n)`. */
void metrics_linear_buckets(double start, double width, size_t n, double *out);
void metrics_exponential_buckets(double start, double factor, size_t n, double *out);

/*
 * A collector refreshes metrics whose values are read on demand (process
 * stats, queue lengths...). Collectors run, in registration order, at the
 * start of every metrics_registry_write.
 */
typedef void (*metrics_collect_fn)(void *userdata);
void metrics_registry_add_collector(struct metrics_registry *reg, metrics_collect_fn fn,
                                    void *userdata);

/*
 * Register the Go client's standard process metrics, refreshed from /proc
 * at each scrape: process_cpu_seconds_total, process_open_fds,
 * process_max_fds, process_virtual_memory_bytes,
 * process_resident_memory_bytes, process_start_time_seconds.
 * 0, or -EEXIST when already registered.
 */
int metrics_register_process_collector(struct metrics_registry *reg, struct err *e);

/*
 * Run the collectors, then append the whole registry in text exposition
 * format 0.0.4 to `out`. 0, or -E2BIG when `out`'s cap is reached (the
 * output is then truncated).
 */
int metrics_registry_write(struct metrics_registry *reg, struct buf *out);

/* The Content-Type of that output. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Format a sample value like Go's FormatFloat(v, 'g', -1, 64) into buf (>= 32 bytes). */
const char *metrics_format_float(char *buf, size_t n, double v);

/* Name validation (exposed for callers that build names). */
int metrics_valid_metric_name(const char *name);
int metrics_valid_label_name(const char *name);

#endif
