/* Unit tests for pkg/util/flags. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/flags.h"

struct opts {
    char *kubeconfig;
    bool leader;
    int burst;
    double qps;
    double lost;
    struct flag_strv workers;
};

#define NFLAGS 6
static void table(struct opts *o, struct flag *fl)
{
    memset(o, 0, sizeof *o);
    struct flag t[NFLAGS] = {
        {"kubeconfig", FLAG_STRING, &o->kubeconfig, "path", NULL},
        {"leader-elect", FLAG_BOOL, &o->leader, "elect", "false"},
        {"burst", FLAG_INT, &o->burst, "burst", "400"},
        {"qps", FLAG_DOUBLE, &o->qps, "qps", "200"},
        {"worker-lost-timeout", FLAG_DURATION, &o->lost, "lost", "5m"},
        {"worker", FLAG_STRINGS, &o->workers, "worker", NULL},
    };
    memcpy(fl, t, sizeof t);
}

static void test_parse_forms(void **state)
{
    (void)state;
    struct opts o;
    struct flag fl[NFLAGS];
    table(&o, fl);
    struct err e;
    assert_int_equal(flags_set_defaults(fl, NFLAGS, &e), 0);
    assert_int_equal(o.burst, 400);
    assert_true(o.qps == 200.0);
    assert_true(o.lost == 300.0);
    char *argv[] = {
        "--kubeconfig", "/a",     "--leader-elect",  "-burst=7", "--qps=1.5",
        "--worker",     "c1=/k1", "--worker=c2=/k2", "pos1",     "--worker-lost-timeout",
        "1m30s",        "--",     "--not-a-flag"};
    const char **pos = NULL;
    size_t npos = 0;
    bool help = false;
    assert_int_equal(flags_parse(fl, NFLAGS, 13, argv, &pos, &npos, &help, &e), 0);
    assert_string_equal(o.kubeconfig, "/a");
    assert_true(o.leader);
    assert_int_equal(o.burst, 7);
    assert_true(o.qps == 1.5);
    assert_true(o.lost == 90.0);
    assert_int_equal(o.workers.n, 2);
    assert_string_equal(o.workers.v[0], "c1=/k1");
    assert_string_equal(o.workers.v[1], "c2=/k2");
    assert_int_equal(npos, 2);
    assert_string_equal(pos[0], "pos1");
    assert_string_equal(pos[1], "--not-a-flag");
    assert_false(help);
    free(pos);
    flags_free(fl, NFLAGS);
    assert_null(o.kubeconfig);
}

static void test_errors(void **state)
{
    (void)state;
    struct opts o;
    struct flag fl[NFLAGS];
    table(&o, fl);
    struct err e;
    char *a1[] = {"--nope"};
    assert_int_equal(flags_parse(fl, NFLAGS, 1, a1, NULL, NULL, NULL, &e), -EINVAL);
    assert_string_equal(e.msg, "unknown flag: --nope (see --help)");
    char *a1s[] = {"-o", "json"}; /* a short flag is named as written, not as "--o" */
    assert_int_equal(flags_parse(fl, NFLAGS, 2, a1s, NULL, NULL, NULL, &e), -EINVAL);
    assert_string_equal(e.msg, "unknown flag: -o (see --help)");
    char *a1e[] = {"--nope=3"};
    assert_int_equal(flags_parse(fl, NFLAGS, 1, a1e, NULL, NULL, NULL, &e), -EINVAL);
    assert_string_equal(e.msg, "unknown flag: --nope (see --help)");
    char *a2[] = {"--burst=x"};
    assert_int_equal(flags_parse(fl, NFLAGS, 1, a2, NULL, NULL, NULL, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "--burst"));
    char *a3[] = {"--kubeconfig"};
    assert_int_equal(flags_parse(fl, NFLAGS, 1, a3, NULL, NULL, NULL, &e), -EINVAL);
    assert_string_equal(e.msg, "flag needs an argument: --kubeconfig");
    char *a4[] = {"--leader-elect=maybe"};
    assert_int_equal(flags_parse(fl, NFLAGS, 1, a4, NULL, NULL, NULL, &e), -EINVAL);
    char *a5[] = {"--worker-lost-timeout=5"};
    assert_int_equal(flags_parse(fl, NFLAGS, 1, a5, NULL, NULL, NULL, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "duration"));
    char *a6[] = {"positional"};
    assert_int_equal(flags_parse(fl, NFLAGS, 1, a6, NULL, NULL, NULL, &e), -EINVAL);
    char *a7[] = {"--leader-elect=false", "-h"};
    bool help = false;
    o.leader = true;
    assert_int_equal(flags_parse(fl, NFLAGS, 2, a7, NULL, NULL, &help, &e), 0);
    assert_false(o.leader);
    assert_true(help);
    flags_free(fl, NFLAGS);
}

static void test_duration(void **state)
{
    (void)state;
    double d;
    assert_int_equal(flags_parse_duration("500ms", &d), 0);
    assert_true(d == 0.5);
    assert_int_equal(flags_parse_duration("1h2m3.5s", &d), 0);
    assert_true(d == 3723.5);
    assert_int_equal(flags_parse_duration("0", &d), 0);
    assert_true(d == 0);
    assert_int_equal(flags_parse_duration("-2s", &d), 0);
    assert_true(d == -2);
    assert_int_equal(flags_parse_duration("10", &d), -EINVAL);
    assert_int_equal(flags_parse_duration("", &d), -EINVAL);
    assert_int_equal(flags_parse_duration("s", &d), -EINVAL);
    assert_int_equal(flags_parse_duration("5x", &d), -EINVAL);
    assert_int_equal(flags_parse_duration("1m-5s", &d), -EINVAL);
}

static void test_usage(void **state)
{
    (void)state;
    struct opts o;
    struct flag fl[NFLAGS];
    table(&o, fl);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    flags_usage(f, fl, NFLAGS);
    fclose(f);
    assert_non_null(strstr(buf, "--kubeconfig string"));
    assert_non_null(strstr(buf, "--burst int"));
    assert_non_null(strstr(buf, "(default 400)"));
    assert_non_null(strstr(buf, "--worker-lost-timeout duration"));
    assert_null(strstr(buf, "(default false)"));
    free(buf);
}

/* Help texts start in one column, even after a flag longer than 38 columns;
 * a shorthand parses like its long name. */
static void test_usage_aligned_and_shorthand(void **state)
{
    (void)state;
    char *out = NULL, *ns = NULL;
    bool on = false;
    struct flag fl[3] = {
        {"output", FLAG_STRING, &out, "HELP-A", "", 'o'},
        {"a-very-long-flag-name-that-is-wider-than-the-column", FLAG_BOOL, &on, "HELP-B", NULL},
        {"namespace", FLAG_STRING, &ns, "HELP-C", "default", 'n'},
    };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    flags_usage(f, fl, 3);
    fclose(f);
    long col[3];
    const char *h[3] = {"HELP-A", "HELP-B", "HELP-C"};
    for (int i = 0; i < 3; i++) {
        const char *p = strstr(buf, h[i]);
        assert_non_null(p);
        const char *bol = p;
        while (bol > buf && bol[-1] != '\n')
            bol--;
        col[i] = p - bol;
    }
    assert_int_equal(col[0], col[1]);
    assert_int_equal(col[1], col[2]);
    assert_non_null(strstr(buf, "-o, --output string"));
    free(buf);
    struct err e;
    char *argv[] = {"-o", "json", "-n=team-a"};
    assert_int_equal(flags_set_defaults(fl, 3, &e), 0);
    assert_int_equal(flags_parse(fl, 3, 3, argv, NULL, NULL, NULL, &e), 0);
    assert_string_equal(out, "json");
    assert_string_equal(ns, "team-a");
    flags_free(fl, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_forms),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_usage_aligned_and_shorthand),
    };
    return cmocka_run_group_tests_name("flags", tests, NULL, NULL);
}
