/* Unit tests for pkg/metrics: registration, validation, exact exposition text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pkg/metrics/metrics.h"

static char *expose(struct metrics_registry *reg)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    assert_int_equal(metrics_registry_write(reg, &b), 0);
    return buf_detach(&b);
}

static void test_counter_vec_exposition(void **state)
{
    (void)state;
    struct err e = {0};
    struct metrics_registry *reg = metrics_registry_new();
    struct metrics_counter_vec *req =
        metrics_counter_vec_new(reg, "rest_client_requests_total", "Requests by verb and code.",
                                METRICS_LABELS("verb", "code"), &e);
    assert_non_null(req);
    metrics_counter_inc(metrics_counter_vec_with(req, "GET", "200"));
    metrics_counter_inc(metrics_counter_vec_with(req, "GET", "200"));
    metrics_counter_add(metrics_counter_vec_with(req, "PUT", "409"), 3);
    metrics_counter_inc(metrics_counter_vec_with(req, "DELETE", "200"));
    /* Negative increments are ignored. */
    metrics_counter_add(metrics_counter_vec_with(req, "GET", "200"), -5);
    metrics_counter_add(metrics_counter_vec_with(req, "GET", "200"), NAN);
    assert_true(metrics_counter_value(metrics_counter_vec_with(req, "GET", "200")) == 2.0);
    /* The same child comes back for the same values. */
    assert_ptr_equal(metrics_counter_vec_with(req, "PUT", "409"),
                     metrics_counter_vec_with(req, "PUT", "409"));

    char *text = expose(reg);
    /* Labels are printed sorted by name, children sorted by those values. */
    assert_string_equal(text, "# HELP rest_client_requests_total Requests by verb and code.\n"
                              "# TYPE rest_client_requests_total counter\n"
                              "rest_client_requests_total{code=\"200\",verb=\"DELETE\"} 1\n"
                              "rest_client_requests_total{code=\"200\",verb=\"GET\"} 2\n"
                              "rest_client_requests_total{code=\"409\",verb=\"PUT\"} 3\n");
    free(text);

    /* Deleting a child removes it from the output. */
    assert_int_equal(metrics_counter_vec_delete(req, METRICS_LABELS("GET", "200")), 0);
    assert_int_equal(metrics_counter_vec_delete(req, METRICS_LABELS("GET", "200")), -ENOENT);
    assert_int_equal(metrics_counter_vec_delete(req, METRICS_LABELS("GET")), -ENOENT);
    text = expose(reg);
    assert_null(strstr(text, "verb=\"GET\""));
    assert_non_null(strstr(text, "verb=\"PUT\""));
    free(text);
    metrics_registry_free(reg);
}

static void test_gauges_and_ordering(void **state)
{
    (void)state;
    struct err e = {0};
    struct metrics_registry *reg = metrics_registry_new();
    struct metrics_gauge *up = metrics_gauge_new(reg, "zz_up", "Is it up.", &e);
    struct metrics_gauge_vec *q =
        metrics_gauge_vec_new(reg, "kueue_ks_queue_depth", "Items.\nSecond line with \\ backslash.",
                              METRICS_LABELS("queue"), &e);
    /* A family without children is not printed at all. */
    struct metrics_gauge_vec *empty =
        metrics_gauge_vec_new(reg, "aa_empty", "nothing", METRICS_LABELS("x"), &e);
    assert_non_null(up);
    assert_non_null(q);
    assert_non_null(empty);
    metrics_gauge_set(up, 1);
    metrics_gauge_set(metrics_gauge_vec_with(q, "b"), 1e6);
    metrics_gauge_set(metrics_gauge_vec_with(q, "a\"quoted\"\n\\"), -0.25);
    struct metrics_gauge *c = metrics_gauge_vec_with(q, "c");
    metrics_gauge_inc(c);
    metrics_gauge_inc(c);
    metrics_gauge_dec(c);
    metrics_gauge_add(c, 1.5);
    assert_true(metrics_gauge_value(c) == 2.5);
    /* A wrong number of label values is a detached sink, never exposed. */
    metrics_gauge_set(metrics_gauge_vec_with(q, "x", "y"), 99);
    /* So is a value that is not UTF-8 (overlong, surrogate, truncated); valid UTF-8 is kept. */
    metrics_gauge_set(metrics_gauge_vec_with(q, "bad\xc0\xaf"), 98);
    metrics_gauge_set(metrics_gauge_vec_with(q, "bad\xed\xa0\x80"), 97);
    metrics_gauge_set(metrics_gauge_vec_with(q, "bad\xe2\x82"), 96);
    metrics_gauge_set(metrics_gauge_vec_with(q, "d\xc3\xa9j\xc3\xa0 \xf0\x9f\x98\x80"), 3);

    char *text = expose(reg);
    assert_string_equal(text,
                        "# HELP kueue_ks_queue_depth Items.\\nSecond line with \\\\ backslash.\n"
                        "# TYPE kueue_ks_queue_depth gauge\n"
                        "kueue_ks_queue_depth{queue=\"a\\\"quoted\\\"\\n\\\\\"} -0.25\n"
                        "kueue_ks_queue_depth{queue=\"b\"} 1e+06\n"
                        "kueue_ks_queue_depth{queue=\"c\"} 2.5\n"
                        "kueue_ks_queue_depth{queue=\"d\xc3\xa9j\xc3\xa0 \xf0\x9f\x98\x80\"} 3\n"
                        "# HELP zz_up Is it up.\n"
                        "# TYPE zz_up gauge\n"
                        "zz_up 1\n");
    free(text);
    metrics_registry_free(reg);
}

static void test_histogram_default_buckets(void **state)
{
    (void)state;
    struct err e = {0};
    struct metrics_registry *reg = metrics_registry_new();
    struct metrics_histogram_vec *h = metrics_histogram_vec_new(
        reg, "req_duration_seconds", "Latency.", METRICS_LABELS("verb"), NULL, 0, &e);
    assert_non_null(h);
    struct metrics_histogram *g = metrics_histogram_vec_with(h, "GET");
    metrics_histogram_observe(g, 0.005); /* on a bound: counts in that bucket */
    metrics_histogram_observe(g, 0.3);
    metrics_histogram_observe(g, 20);
    assert_int_equal(metrics_histogram_count(g), 3);
    assert_true(fabs(metrics_histogram_sum(g) - 20.305) < 1e-9);

    char *text = expose(reg);
    assert_string_equal(text, "# HELP req_duration_seconds Latency.\n"
                              "# TYPE req_duration_seconds histogram\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"0.005\"} 1\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"0.01\"} 1\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"0.025\"} 1\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"0.05\"} 1\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"0.1\"} 1\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"0.25\"} 1\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"0.5\"} 2\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"1\"} 2\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"2.5\"} 2\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"5\"} 2\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"10\"} 2\n"
                              "req_duration_seconds_bucket{verb=\"GET\",le=\"+Inf\"} 3\n"
                              "req_duration_seconds_sum{verb=\"GET\"} 20.305\n"
                              "req_duration_seconds_count{verb=\"GET\"} 3\n");
    free(text);
    metrics_registry_free(reg);
}

static void test_histogram_custom_buckets(void **state)
{
    (void)state;
    struct err e = {0};
    struct metrics_registry *reg = metrics_registry_new();
    double b[4];
    metrics_exponential_buckets(1, 10, 3, b);
    b[3] = INFINITY; /* trailing +Inf is accepted and dropped */
    struct metrics_histogram *h = metrics_histogram_new(reg, "size_bytes", "", b, 4, &e);
    assert_non_null(h);
    metrics_histogram_observe(h, 0.5);
    metrics_histogram_observe(h, 10);
    metrics_histogram_observe(h, 11);
    metrics_histogram_observe(h, 1000);
    char *text = expose(reg);
    assert_string_equal(text, "# HELP size_bytes \n"
                              "# TYPE size_bytes histogram\n"
                              "size_bytes_bucket{le=\"1\"} 1\n"
                              "size_bytes_bucket{le=\"10\"} 2\n"
                              "size_bytes_bucket{le=\"100\"} 3\n"
                              "size_bytes_bucket{le=\"+Inf\"} 4\n"
                              "size_bytes_sum 1021.5\n"
                              "size_bytes_count 4\n");
    free(text);

    double lin[3];
    metrics_linear_buckets(0.5, 0.25, 3, lin);
    assert_true(lin[0] == 0.5 && lin[1] == 0.75 && lin[2] == 1.0);
    metrics_registry_free(reg);
}

static void test_validation(void **state)
{
    (void)state;
    struct err e = {0};
    struct metrics_registry *reg = metrics_registry_new();
    assert_null(metrics_counter_vec_new(reg, "1bad", "h", NULL, &e));
    assert_int_equal(e.code, -EINVAL);
    assert_non_null(strstr(e.msg, "invalid metric name"));
    assert_null(metrics_counter_vec_new(reg, "bad-name", "h", NULL, &e));
    assert_null(metrics_counter_vec_new(reg, "", "h", NULL, &e));
    assert_null(metrics_counter_vec_new(reg, "ok", "h", METRICS_LABELS("__reserved"), &e));
    assert_non_null(strstr(e.msg, "invalid label name"));
    assert_null(metrics_counter_vec_new(reg, "ok", "h", METRICS_LABELS("a:b"), &e));
    assert_null(metrics_counter_vec_new(reg, "ok", "h", METRICS_LABELS("a", "b", "a"), &e));
    assert_non_null(strstr(e.msg, "duplicate label"));
    assert_null(metrics_histogram_vec_new(reg, "ok", "h", METRICS_LABELS("le"), NULL, 0, &e));
    double bad[] = {1, 1};
    assert_null(metrics_histogram_vec_new(reg, "ok", "h", NULL, bad, 2, &e));
    assert_non_null(strstr(e.msg, "strictly increasing"));
    double nan_b[] = {NAN};
    assert_null(metrics_histogram_vec_new(reg, "ok", "h", NULL, nan_b, 1, &e));

    assert_non_null(metrics_counter_vec_new(reg, "ns:ok_total", "h", METRICS_LABELS("_a1"), &e));
    assert_null(metrics_gauge_vec_new(reg, "ns:ok_total", "h", NULL, &e));
    assert_int_equal(e.code, -EEXIST);
    assert_true(metrics_valid_metric_name("a:b_c9"));
    assert_false(metrics_valid_label_name("9a"));
    metrics_registry_free(reg);
}

static void test_format_float(void **state)
{
    (void)state;
    char b[40];
    assert_string_equal(metrics_format_float(b, sizeof(b), 0), "0");
    assert_string_equal(metrics_format_float(b, sizeof(b), 1), "1");
    assert_string_equal(metrics_format_float(b, sizeof(b), -1), "-1");
    assert_string_equal(metrics_format_float(b, sizeof(b), 0.1), "0.1");
    assert_string_equal(metrics_format_float(b, sizeof(b), 123456), "123456");
    assert_string_equal(metrics_format_float(b, sizeof(b), 1234567), "1.234567e+06");
    assert_string_equal(metrics_format_float(b, sizeof(b), 0.0001), "0.0001");
    assert_string_equal(metrics_format_float(b, sizeof(b), 0.00001), "1e-05");
    assert_string_equal(metrics_format_float(b, sizeof(b), 1.0 / 3), "0.3333333333333333");
    assert_string_equal(metrics_format_float(b, sizeof(b), 1.7e9), "1.7e+09");
    assert_string_equal(metrics_format_float(b, sizeof(b), INFINITY), "+Inf");
    assert_string_equal(metrics_format_float(b, sizeof(b), -INFINITY), "-Inf");
    assert_string_equal(metrics_format_float(b, sizeof(b), NAN), "NaN");
}

static void test_output_cap(void **state)
{
    (void)state;
    struct err e = {0};
    struct metrics_registry *reg = metrics_registry_new();
    struct metrics_counter_vec *v =
        metrics_counter_vec_new(reg, "c_total", "h", METRICS_LABELS("k"), &e);
    char val[16];
    for (int i = 0; i < 100; i++) {
        snprintf(val, sizeof(val), "v%03d", i);
        metrics_counter_inc(metrics_counter_vec_with(v, val));
    }
    struct buf b;
    buf_init(&b, 256);
    assert_int_equal(metrics_registry_write(reg, &b), -E2BIG);
    assert_true(b.len <= 256);
    buf_free(&b);
    metrics_registry_free(reg);
}

/* Value of an unlabelled sample in the exposition text, asserted present. */
static double sample(const char *text, const char *name)
{
    char pat[128];
    snprintf(pat, sizeof(pat), "\n%s ", name);
    const char *p = strstr(text, pat);
    assert_non_null(p);
    return strtod(p + strlen(pat), NULL);
}

struct depth {
    struct metrics_gauge *g;
    int calls;
};

static void collect_depth(void *ud)
{
    struct depth *d = ud;
    d->calls++;
    metrics_gauge_set(d->g, d->calls * 10);
}

static void test_shared_families(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_new();
    struct err e = {0};
    struct metrics_counter_vec *a =
        metrics_counter_vec_shared(reg, "errs_total", "h", METRICS_LABELS("controller"), &e);
    struct metrics_counter_vec *b =
        metrics_counter_vec_shared(reg, "errs_total", "h", METRICS_LABELS("controller"), &e);
    assert_non_null(a);
    assert_ptr_equal(a, b);
    metrics_counter_inc(metrics_counter_vec_with(a, "quota"));
    metrics_counter_inc(metrics_counter_vec_with(b, "workload"));
    /* same name, other labels or other type: refused */
    assert_null(metrics_counter_vec_shared(reg, "errs_total", "h", METRICS_LABELS("c"), &e));
    assert_int_equal(e.code, -EEXIST);
    assert_null(metrics_gauge_vec_shared(reg, "errs_total", "h", METRICS_LABELS("controller"), &e));
    assert_int_equal(e.code, -EEXIST);
    struct metrics_gauge_vec *g =
        metrics_gauge_vec_shared(reg, "depth", "d", METRICS_LABELS("controller"), &e);
    assert_ptr_equal(g,
                     metrics_gauge_vec_shared(reg, "depth", "d", METRICS_LABELS("controller"), &e));
    metrics_gauge_set(metrics_gauge_vec_with(g, "quota"), 3);
    struct buf out;
    buf_init(&out, 1 << 16);
    assert_int_equal(metrics_registry_write(reg, &out), 0);
    assert_string_equal(buf_str(&out),
                        "# HELP depth d\n# TYPE depth gauge\ndepth{controller=\"quota\"} 3\n"
                        "# HELP errs_total h\n# TYPE errs_total counter\n"
                        "errs_total{controller=\"quota\"} 1\n"
                        "errs_total{controller=\"workload\"} 1\n");
    buf_free(&out);
    metrics_registry_free(reg);
}

static void test_collectors(void **state)
{
    (void)state;
    struct err e = {0};
    struct metrics_registry *reg = metrics_registry_new();
    assert_int_equal(metrics_register_process_collector(reg, &e), 0);
    assert_int_equal(metrics_register_process_collector(reg, &e), -EEXIST);
    struct depth d = {.g = metrics_gauge_new(reg, "queue_depth", "Depth.", &e)};
    metrics_registry_add_collector(reg, collect_depth, &d);

    char *text = expose(reg);
    assert_int_equal(d.calls, 1);
    assert_true(sample(text, "queue_depth") == 10);
    assert_non_null(strstr(text, "# TYPE process_cpu_seconds_total counter\n"));
    assert_true(sample(text, "process_resident_memory_bytes") > 1e5);
    assert_true(sample(text, "process_virtual_memory_bytes") >=
                sample(text, "process_resident_memory_bytes"));
    double open_fds = sample(text, "process_open_fds");
    assert_true(open_fds >= 3);
    assert_true(sample(text, "process_max_fds") >= open_fds);
    double start = sample(text, "process_start_time_seconds");
    time_t now = time(NULL);
    assert_true(start <= (double)now + 2 && start > (double)now - 3600);
    assert_true(sample(text, "process_cpu_seconds_total") >= 0);
    free(text);

    /* Collectors run again on every scrape. */
    FILE *extra = fopen("/dev/null", "r");
    text = expose(reg);
    assert_int_equal(d.calls, 2);
    assert_true(sample(text, "queue_depth") == 20);
    assert_true(sample(text, "process_open_fds") == open_fds + 1);
    free(text);
    fclose(extra);
    metrics_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_vec_exposition),
        cmocka_unit_test(test_gauges_and_ordering),
        cmocka_unit_test(test_histogram_default_buckets),
        cmocka_unit_test(test_histogram_custom_buckets),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_format_float),
        cmocka_unit_test(test_output_cap),
        cmocka_unit_test(test_shared_families),
        cmocka_unit_test(test_collectors),
    };
    return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
