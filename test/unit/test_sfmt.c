/* Unit tests for pkg/util/sfmt (and its users xasprintf, buf_printf) and clock_rfc3339. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/sfmt.h"
#include "pkg/util/xalloc.h"

static void test_plain(void **state)
{
    (void)state;
    static const char *const yes[] = {"",
                                      "abc",
                                      "%s",
                                      "%s/%s",
                                      "a%%b",
                                      "%%",
                                      "%s%%%s",
                                      "x%"
                                      "%"};
    static const char *const no[] = {"%d", "%5s", "%.3s", "a%sb%zu", "%-s", "%", "abc%", "%%%d"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(sfmt_plain(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (sfmt_plain(no[i]))
            fail_msg("\"%s\" taken as %%s-only", no[i]);
}

/* sfmt_vs(out, cap, fmt, a, b, c) against vsnprintf: the same length, the same bytes. */
static void agree(size_t cap, const char *fmt, ...)
{
    char want[64], got[64];
    memset(want, 'W', sizeof want);
    memset(got, 'W', sizeof got);
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(cap ? want : NULL, cap, fmt, ap);
    size_t m = sfmt_vs(cap ? got : NULL, cap, fmt, ap2);
    va_end(ap2);
    va_end(ap);
    assert_true(n >= 0);
    if ((size_t)n != m || memcmp(want, got, sizeof want) != 0)
        fail_msg("\"%s\" cap %zu: vsnprintf %d \"%.*s\", sfmt %zu \"%.*s\"", fmt, cap, n,
                 (int)(cap ? cap : 1), want, m, (int)(cap ? cap : 1), got);
}

static void test_same_as_vsnprintf(void **state)
{
    (void)state;
    const char *null = NULL;
    for (size_t cap = 0; cap < 24; cap++) {
        agree(cap, "");
        agree(cap, "literal only");
        agree(cap, "%s", "ns-a");
        agree(cap, "%s/%s", "team-a", "job-17");
        agree(cap, "/apis/%s/%s/namespaces/%s", "batch", "v1", "default");
        agree(cap, "100%% of %s%%", "cpu");
        agree(cap, "%s%s%s", "", "x", "");
        agree(cap, "[%s]", null); /* glibc writes (null) */
    }
}

static void test_users(void **state)
{
    (void)state;
    char *s = xasprintf("%s/%s", "default", "bench-1");
    assert_string_equal(s, "default/bench-1");
    free(s);
    s = xasprintf("%s=%d%%", "n", 42); /* not %s-only: printf's */
    assert_string_equal(s, "n=42%");
    free(s);
    char big[600];
    memset(big, 'k', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    s = xasprintf("<%s>", big);
    assert_int_equal(strlen(s), sizeof big + 1);
    assert_true(s[0] == '<' && s[sizeof big] == '>');
    free(s);
    struct buf b;
    buf_init(&b, 1024);
    assert_int_equal(buf_printf(&b, "%s\x1f%s", "a", "b"), 0);
    assert_int_equal(buf_printf(&b, "/%d", 7), 0);
    assert_string_equal(buf_str(&b), "a\x1f"
                                     "b/7");
    buf_free(&b);
}

/* The snprintf form clock_rfc3339 had (and keeps for what its digits do not cover). */
static void rfc3339_ref(char *out, size_t n, const struct timespec *ts, int micro)
{
    struct tm tm;
    if (!gmtime_r(&ts->tv_sec, &tm))
        memset(&tm, 0, sizeof tm);
    if (micro)
        snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts->tv_nsec / 1000);
    else
        snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* clock_rfc3339 writes what the snprintf form writes, in buffers of every size around the
 * forms' lengths (exact-size heap buffers: ASan sees a write past them), for years 0 to 9999
 * and outside them, and for nanoseconds outside a second. */
static void test_rfc3339(void **state)
{
    (void)state;
    static const time_t secs[] = {0,
                                  59,
                                  951782400 /* 2000-02-29 */,
                                  1795910399,
                                  2147483648LL,
                                  253402300799LL /* 9999-12-31T23:59:59 */,
                                  253402300800LL /* year 10000 */,
                                  -62167219200LL /* 0000-01-01 */,
                                  -62167219201LL /* year -1 */};
    static const long nsecs[] = {0, 999, 1000, 123456789, 999999999, -1, 1000000000};
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        for (size_t j = 0; j < sizeof nsecs / sizeof nsecs[0]; j++) {
            struct timespec ts = {.tv_sec = secs[i], .tv_nsec = nsecs[j]};
            for (int micro = 0; micro < 2; micro++) {
                for (size_t n = 1; n <= 40; n++) {
                    char want[64];
                    rfc3339_ref(want, n, &ts, micro);
                    char *got = malloc(n);
                    assert_non_null(got);
                    assert_ptr_equal(clock_rfc3339(got, n, &ts, micro), got);
                    if (strcmp(got, want) != 0)
                        fail_msg("%lld.%ld micro %d in %zu bytes: \"%s\", want \"%s\"",
                                 (long long)ts.tv_sec, ts.tv_nsec, micro, n, got, want);
                    free(got);
                }
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_same_as_vsnprintf),
        cmocka_unit_test(test_users),
        cmocka_unit_test(test_rfc3339),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
