/* Unit tests for pkg/util/log and pkg/util/clock. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/clock.h"
#include "pkg/util/log.h"

/* Capture one logger's output in memory. */
struct cap {
    char *data;
    size_t len;
    FILE *f;
};

static void cap_open(struct cap *c)
{
    c->data = NULL;
    c->len = 0;
    c->f = open_memstream(&c->data, &c->len);
    assert_non_null(c->f);
}

static void cap_close(struct cap *c)
{
    fclose(c->f);
    free(c->data);
}

static int evaluated;
static const char *side_effect(void)
{
    evaluated++;
    return "x";
}

static void test_text_format(void **state)
{
    (void)state;
    struct cap c;
    cap_open(&c);
    struct logger lg;
    log_init(&lg, c.f, 0, LOG_FMT_TEXT);
    log_info(&lg, "workload placed", "workload", "ns/a", "cluster", "c1", "n", LOG_INT(-42), "note",
             "has space \"q\"", "empty", "");
    fflush(c.f);
    assert_non_null(strstr(c.data, " level=info msg=\"workload placed\" workload=ns/a cluster=c1"
                                   " n=-42 note=\"has space \\\"q\\\"\" empty=\"\"\n"));
    assert_true(strncmp(c.data, "ts=", 3) == 0);
    cap_close(&c);
}

static void test_verbosity_gate(void **state)
{
    (void)state;
    struct cap c;
    cap_open(&c);
    struct logger lg;
    log_init(&lg, c.f, 1, LOG_FMT_TEXT);
    evaluated = 0;
    log_v(&lg, 2, "hidden", "k", side_effect());
    fflush(c.f);
    assert_int_equal(c.len, 0);
    assert_int_equal(evaluated, 0); /* arguments not evaluated below the level */
    log_v(&lg, 1, "shown", "k", side_effect());
    fflush(c.f);
    assert_int_equal(evaluated, 1);
    assert_non_null(strstr(c.data, "msg=shown k=x"));
    /* NULL logger is a sink. */
    log_error(NULL, "nothing");
    cap_close(&c);
}

static void test_json_format(void **state)
{
    (void)state;
    struct cap c;
    cap_open(&c);
    struct logger lg;
    log_init(&lg, c.f, 0, LOG_FMT_JSON);
    lg.component = "quota";
    log_warn(&lg, "bad \"value\"\n", "cluster", "c\t1", "bytes", LOG_UINT(18446744073709551615ull));
    fflush(c.f);
    json_error_t je;
    json_t *j = json_loads(c.data, 0, &je);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "level")), "warn");
    assert_string_equal(json_string_value(json_object_get(j, "component")), "quota");
    assert_string_equal(json_string_value(json_object_get(j, "msg")), "bad \"value\"\n");
    assert_string_equal(json_string_value(json_object_get(j, "cluster")), "c\t1");
    assert_string_equal(json_string_value(json_object_get(j, "bytes")), "18446744073709551615");
    json_decref(j);
    enum log_format f;
    assert_int_equal(log_parse_format("json", &f), 0);
    assert_int_equal(f, LOG_FMT_JSON);
    assert_int_equal(log_parse_format("text", &f), 0);
    assert_int_equal(f, LOG_FMT_TEXT);
    assert_int_not_equal(log_parse_format("xml", &f), 0);
    cap_close(&c);
}

static void test_rfc3339(void **state)
{
    (void)state;
    struct timespec ts;
    assert_int_equal(clock_parse_rfc3339("2024-02-29T23:59:58Z", &ts), 0);
    assert_int_equal(ts.tv_sec, 1709251198);
    assert_int_equal(ts.tv_nsec, 0);
    char b[64];
    assert_string_equal(clock_rfc3339(b, sizeof b, &ts, 0), "2024-02-29T23:59:58Z");
    assert_int_equal(clock_parse_rfc3339("2024-02-29T23:59:58.123456Z", &ts), 0);
    assert_int_equal(ts.tv_nsec, 123456000);
    assert_string_equal(clock_rfc3339(b, sizeof b, &ts, 1), "2024-02-29T23:59:58.123456Z");
    assert_int_equal(clock_parse_rfc3339("2024-03-01T01:59:58+02:00", &ts), 0);
    assert_int_equal(ts.tv_sec, 1709251198);
    assert_int_not_equal(clock_parse_rfc3339("2024-02-29", &ts), 0);
    assert_int_not_equal(clock_parse_rfc3339("2024-13-01T00:00:00Z", &ts), 0);
    assert_int_not_equal(clock_parse_rfc3339("2024-01-01T00:00:00Zjunk", &ts), 0);
    assert_int_not_equal(clock_parse_rfc3339("", &ts), 0);
    uint64_t a = clock_mono_ns(), z = clock_mono_ns();
    assert_true(z >= a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_format),
        cmocka_unit_test(test_verbosity_gate),
        cmocka_unit_test(test_json_format),
        cmocka_unit_test(test_rfc3339),
    };
    return cmocka_run_group_tests_name("util_log_clock", tests, NULL, NULL);
}
