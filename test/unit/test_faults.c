/* Unit tests for devhub/faults. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/faults.h"

static void test_defaults_and_rng(void **state)
{
    (void)state;
    struct faults f;
    faults_init(&f);
    struct faults_rng rng;
    faults_rng_seed(&rng, 42);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(faults_decide_write(&f, &rng), 0);
    assert_int_equal(faults_latency_ms(&f), 0);
    assert_false(faults_paused(&f));
    assert_true(faults_watch_cut_in(&f, 100.0) < 0);
    /* The RNG is deterministic per seed and stays in [0, 1). */
    struct faults_rng a, b;
    faults_rng_seed(&a, 7);
    faults_rng_seed(&b, 7);
    for (int i = 0; i < 1000; i++) {
        double x = faults_rng_next(&a);
        assert_true(x >= 0.0 && x < 1.0);
        assert_true(x == faults_rng_next(&b));
    }
    faults_rng_seed(&a, 0);
    assert_true(a.s != 0);
}

static void test_decide_rate_and_codes(void **state)
{
    (void)state;
    struct faults f;
    faults_init(&f);
    f.write_fail_rate = 0.25;
    struct faults_rng rng;
    faults_rng_seed(&rng, 12345);
    int n = 20000, failed = 0, c409 = 0, c429 = 0, c500 = 0;
    for (int i = 0; i < n; i++) {
        int c = faults_decide_write(&f, &rng);
        if (!c)
            continue;
        failed++;
        c409 += c == 409;
        c429 += c == 429;
        c500 += c == 500;
    }
    assert_int_equal(failed, c409 + c429 + c500);
    /* 25% +- 1.5 points; each code about a third of the failures. */
    assert_true(failed > n * 0.235 && failed < n * 0.265);
    assert_true(c409 > failed / 4 && c429 > failed / 4 && c500 > failed / 4);
    f.write_fail_rate = 1.0;
    struct err e = {0};
    assert_int_equal(faults_parse_codes(&f, "429", &e), 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(faults_decide_write(&f, &rng), 429);
    assert_int_equal(faults_parse_codes(&f, "500,409,500", &e), 0);
    assert_int_equal(f.nfail_codes, 2);
    assert_int_equal(faults_parse_codes(&f, "404", &e), -EINVAL);
    assert_non_null(strstr(e.msg, "409,429,500"));
    assert_int_equal(faults_parse_codes(&f, "409;", &e), -EINVAL);
    assert_int_equal(faults_parse_codes(&f, "", &e), -EINVAL);
    assert_int_equal(f.nfail_codes, 2);
}

static void test_json(void **state)
{
    (void)state;
    struct faults f;
    faults_init(&f);
    struct err e = {0};
    json_t *j = json_loads("{\"writeFailRate\":0.5,\"failCodes\":[429],\"latencyMs\":20,"
                           "\"cutWatchesEverySec\":3,\"paused\":true,\"retryAfterSeconds\":2}",
                           0, NULL);
    assert_int_equal(faults_update_json(&f, j, &e), 0);
    json_decref(j);
    assert_true(f.write_fail_rate == 0.5);
    assert_int_equal(f.nfail_codes, 1);
    assert_int_equal(f.fail_codes[0], 429);
    assert_int_equal(faults_latency_ms(&f), 20);
    assert_true(faults_paused(&f));
    assert_true(faults_watch_cut_in(&f, 1.0) == 2.0);
    assert_true(faults_watch_cut_in(&f, 5.0) == 0.0);
    json_t *out = faults_to_json(&f);
    char *s = json_dumps(out, JSON_COMPACT);
    assert_string_equal(s, "{\"writeFailRate\":0.5,\"failCodes\":[429],\"retryAfterSeconds\":2,"
                           "\"latencyMs\":20,\"cutWatchesEverySec\":3,\"paused\":true}");
    free(s);
    json_decref(out);
    /* Partial update: only paused changes. */
    j = json_loads("{\"paused\":false}", 0, NULL);
    assert_int_equal(faults_update_json(&f, j, &e), 0);
    json_decref(j);
    assert_false(f.paused);
    assert_int_equal(f.latency_ms, 20);
    /* Errors leave everything unchanged. */
    static const char *bad[][2] = {
        {"{\"writeFailRate\":1.5}", "writeFailRate must be a number between 0 and 1"},
        {"{\"writeFailRate\":\"x\"}", "writeFailRate must be a number between 0 and 1"},
        {"{\"failCodes\":[404]}", "failCodes must be a non-empty list of 409, 429, 500"},
        {"{\"failCodes\":[]}", "failCodes must be a non-empty list of 409, 429, 500"},
        {"{\"latencyMs\":-1}", "latencyMs must be an integer between 0 and 60000"},
        {"{\"paused\":1}", "paused must be true or false"},
        {"{\"latencyMs\":5,\"bogus\":1}", "unknown field \"bogus\""},
        {"[]", "fault settings must be a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = json_loads(bad[i][0], 0, NULL);
        assert_int_equal(faults_update_json(&f, j, &e), -EINVAL);
        assert_non_null(strstr(e.msg, bad[i][1]));
        json_decref(j);
    }
    assert_int_equal(f.latency_ms, 20);
    assert_true(f.write_fail_rate == 0.5);
}

static void expect_json(json_t *got, const char *want)
{
    json_t *w = json_loads(want, 0, NULL);
    assert_non_null(w);
    if (!json_equal(got, w)) {
        char *g = json_dumps(got, JSON_COMPACT);
        print_error("got %s\n", g);
        free(g);
        fail();
    }
    json_decref(w);
    json_decref(got);
}

static void test_status_bodies(void **state)
{
    (void)state;
    struct faults f;
    faults_init(&f);
    f.retry_after_sec = 3;
    unsigned ra = 99;
    expect_json(faults_status_body(&f, 429, NULL, NULL, NULL, &ra),
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                "\"message\":\"Too many requests, please try again later.\",\"reason\":"
                "\"TooManyRequests\",\"details\":{\"retryAfterSeconds\":3},\"code\":429}");
    assert_int_equal(ra, 3);
    expect_json(
        faults_status_body(&f, 409, "batch", "jobs", "j1", &ra),
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"Operation cannot be fulfilled on jobs.batch \\\"j1\\\": the object "
        "has been modified; please apply your changes to the latest version and try again\","
        "\"reason\":\"Conflict\",\"details\":{\"name\":\"j1\",\"group\":\"batch\",\"kind\":"
        "\"jobs\"},\"code\":409}");
    assert_int_equal(ra, 0);
    expect_json(
        faults_status_body(&f, 409, "", "pods", "p", NULL),
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"Operation cannot be fulfilled on pods \\\"p\\\": the object has been "
        "modified; please apply your changes to the latest version and try again\","
        "\"reason\":\"Conflict\",\"details\":{\"name\":\"p\",\"kind\":\"pods\"},"
        "\"code\":409}");
    json_t *st = faults_status_body(&f, 500, NULL, NULL, NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "InternalError");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 500);
    json_decref(st);
    assert_null(faults_status_body(&f, 404, NULL, NULL, NULL, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_rng),
        cmocka_unit_test(test_decide_rate_and_codes),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_status_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
