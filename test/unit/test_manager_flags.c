/* Unit tests for pkg/manager/mgrflags: the manager flags of run and agent. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/manager/mgrflags.h"

static const struct flag *find(const struct flag *fl, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(fl[i].name, name))
            return &fl[i];
    return NULL;
}

/* Fragment for `cmd`, defaults applied, argv parsed; returns the count. */
static size_t parse(struct mgr_flag_values *o, enum mgr_flags_cmd cmd, struct flag *fl, int argc,
                    char **argv)
{
    memset(o, 0, sizeof *o);
    size_t n = mgr_flags(o, cmd, fl);
    struct err e;
    err_clear(&e);
    bool help = false;
    assert_int_equal(flags_set_defaults(fl, n, &e), 0);
    assert_int_equal(flags_parse(fl, n, argc, argv, NULL, NULL, &help, &e), 0);
    assert_false(help);
    return n;
}

/* A flag's name and the help text it must have. */
struct help_want {
    const char *name;
    const char *help;
};

/* Defaults of `cmd`: the shared ones, the Lease name and timing, and the
 * command's own help texts (byte-identical to what the commands printed). */
static void check_defaults(enum mgr_flags_cmd cmd, size_t nwant_flags, const char *le_id,
                           double lease_s, double renew_s, double retry_s,
                           const struct help_want *hw, size_t nhw)
{
    struct mgr_flag_values o;
    struct flag fl[MGR_FLAGS_MAX];
    size_t n = parse(&o, cmd, fl, 0, NULL);
    assert_int_equal(n, nwant_flags);
    assert_string_equal(fl[0].name, "kubeconfig");
    assert_string_equal(fl[1].name, "context");
    assert_string_equal(fl[n - 1].name, "log-format");
    struct mgr_options mo;
    memset(&mo, 0xff, sizeof mo);
    mgr_flags_options(&o, &mo);
    assert_null(mo.kubeconfig);
    assert_null(mo.context);
    assert_string_equal(mo.metrics_bind, ":8080");
    assert_string_equal(mo.health_bind, ":8081");
    assert_false(mo.leader_elect);
    assert_string_equal(mo.le_namespace, "");
    assert_string_equal(mo.le_id, le_id);
    assert_true(mo.lease_duration_s == lease_s);
    assert_true(mo.renew_deadline_s == renew_s);
    assert_true(mo.retry_period_s == retry_s);
    assert_true(mo.qps == 1000.0);
    assert_int_equal(mo.burst, 1000);
    assert_false(mo.http1_only); /* HTTP/2 where the server speaks it (docs/operations.md) */
    assert_true(mo.probe_timeout_s == 0.0);
    assert_true(mo.startup_timeout_s == 0.0); /* keep trying: no crash loop */
    assert_int_equal(o.verbosity, 0);
    assert_string_equal(o.log_format, "text");
    for (size_t i = 0; i < nhw; i++) {
        const struct flag *f = find(fl, n, hw[i].name);
        if (!hw[i].help) {
            assert_null(f);
            continue;
        }
        assert_non_null(f);
        assert_string_equal(f->help, hw[i].help);
    }
    flags_free(fl, n);
}

static void test_run_defaults(void **state)
{
    (void)state;
    const struct help_want hw[] = {
        {"kubeconfig",
         "Path to the hub kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)"},
        {"leader-election-namespace", "Namespace of the leader Lease (default: the kubeconfig "
                                      "context's namespace, else kueue-ks-system)"},
        {"qps", "Client-side request rate limit to the API server"},
        {"leader-election-retry-period", "Interval between leader election attempts"},
    };
    check_defaults(MGR_FLAGS_RUN, 16, "kueue-ks-leader", 15.0, 10.0, 2.0, hw,
                   sizeof hw / sizeof hw[0]);
}

static void test_agent_defaults(void **state)
{
    (void)state;
    /* No Lease timing flags for the agent: the manager's defaults (0) apply. */
    const struct help_want hw[] = {
        {"context", "Kubeconfig context of the watched cluster"},
        {"leader-elect", "Report only while holding the leader Lease (for several replicas)"},
        {"burst", "Client-side request burst to the API servers"},
        {"leader-election-lease-duration", NULL},
        {"leader-election-renew-deadline", NULL},
        {"leader-election-retry-period", NULL},
    };
    check_defaults(MGR_FLAGS_AGENT, 13, "kueue-ks-agent", 0.0, 0.0, 0.0, hw,
                   sizeof hw / sizeof hw[0]);
}

static void test_run_command_line(void **state)
{
    (void)state;
    struct mgr_flag_values o;
    struct flag fl[MGR_FLAGS_MAX];
    char *argv[] = {"--kubeconfig=/tmp/hub.kubeconfig",
                    "--context",
                    "kind-hub",
                    "--metrics-bind-address=0",
                    "--health-probe-bind-address",
                    "127.0.0.1:9000",
                    "--leader-elect",
                    "--leader-election-namespace=ops",
                    "--leader-election-id=kks",
                    "--leader-election-lease-duration=1m",
                    "--leader-election-renew-deadline",
                    "45s",
                    "--leader-election-retry-period=500ms",
                    "--qps=50.5",
                    "--burst",
                    "7",
                    "--http2=true",
                    "--v=3",
                    "--log-format=json"};
    size_t n = parse(&o, MGR_FLAGS_RUN, fl, (int)(sizeof argv / sizeof argv[0]), argv);
    struct mgr_options mo;
    mgr_flags_options(&o, &mo);
    assert_string_equal(mo.kubeconfig, "/tmp/hub.kubeconfig");
    assert_string_equal(mo.context, "kind-hub");
    assert_string_equal(mo.metrics_bind, "0");
    assert_string_equal(mo.health_bind, "127.0.0.1:9000");
    assert_true(mo.leader_elect);
    assert_string_equal(mo.le_namespace, "ops");
    assert_string_equal(mo.le_id, "kks");
    assert_true(mo.lease_duration_s == 60.0);
    assert_true(mo.renew_deadline_s == 45.0);
    assert_true(mo.retry_period_s == 0.5);
    assert_true(mo.qps == 50.5);
    assert_int_equal(mo.burst, 7);
    assert_false(mo.http1_only);
    /* Borrowed from the values, not copies. */
    assert_ptr_equal(mo.kubeconfig, o.kubeconfig);

    struct logger lg;
    struct err e;
    err_clear(&e);
    assert_int_equal(mgr_flags_log_init(&o, &lg, stderr, &e), 0);
    assert_int_equal(lg.format, LOG_FMT_JSON);
    assert_true(log_v_enabled(&lg, 3));
    assert_false(log_v_enabled(&lg, 4));
    flags_free(fl, n);
}

static void test_agent_rejects_run_only_flags(void **state)
{
    (void)state;
    struct mgr_flag_values o;
    memset(&o, 0, sizeof o);
    struct flag fl[MGR_FLAGS_MAX];
    size_t n = mgr_flags(&o, MGR_FLAGS_AGENT, fl);
    struct err e;
    err_clear(&e);
    bool help = false;
    assert_int_equal(flags_set_defaults(fl, n, &e), 0);
    char *argv[] = {"--leader-election-lease-duration=1m"};
    assert_int_equal(flags_parse(fl, n, 1, argv, NULL, NULL, &help, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "leader-election-lease-duration"));
    char *argv2[] = {"--leader-election-id", "other", "--kubeconfig", "/w.kubeconfig"};
    assert_int_equal(flags_parse(fl, n, 4, argv2, NULL, NULL, &help, &e), 0);
    struct mgr_options mo;
    mgr_flags_options(&o, &mo);
    assert_string_equal(mo.le_id, "other");
    assert_string_equal(mo.kubeconfig, "/w.kubeconfig");
    flags_free(fl, n);
}

static void test_bad_log_format(void **state)
{
    (void)state;
    struct mgr_flag_values o;
    struct flag fl[MGR_FLAGS_MAX];
    char *argv[] = {"--log-format", "xml", "--v=2"};
    size_t n = parse(&o, MGR_FLAGS_AGENT, fl, 3, argv);
    struct logger lg;
    log_init(&lg, stderr, 0, LOG_FMT_TEXT);
    struct err e;
    err_clear(&e);
    assert_int_equal(mgr_flags_log_init(&o, &lg, stderr, &e), -EINVAL);
    assert_string_equal(e.msg, "--log-format must be text or json");
    /* Untouched on error. */
    assert_int_equal(lg.format, LOG_FMT_TEXT);
    assert_false(log_v_enabled(&lg, 1));
    flags_free(fl, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_defaults),
        cmocka_unit_test(test_agent_defaults),
        cmocka_unit_test(test_run_command_line),
        cmocka_unit_test(test_agent_rejects_run_only_flags),
        cmocka_unit_test(test_bad_log_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
