/* Unit tests for pkg/quantity (cases follow k8s.io/apimachinery quantity_test.go). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/quantity/quantity.h"

static struct qty Q(const char *s) {
    struct qty q;
    struct err e;
    if (qty_parse(s, &q, &e) != 0)
        fail_msg("parse \"%s\": %s", s, e.msg);
    return q;
}

static void
assert_qstr(const struct qty *q, const char *want)
{
    char buf[QTY_STR_MAX];
    if (strcmp(qty_fmt(q, buf), want) != 0)
        fail_msg("got \"%s\", want \"%s\"", buf, want);
}

/* input -> canonical output (Kubernetes String()). */
static const char *CANON[][2] = {
    {"0", "0"},
    {"0n", "0"},
    {"0Ki", "0"},
    {"0M", "0"},
    {"1", "1"},
    {"1Ki", "1Ki"},
    {"8Ki", "8Ki"},
    {"7Mi", "7Mi"},
    {"6Gi", "6Gi"},
    {"5Ti", "5Ti"},
    {"4Pi", "4Pi"},
    {"3Ei", "3Ei"},
    {"100Ti", "100Ti"},
    {"5n", "5n"},
    {"4u", "4u"},
    {"3m", "3m"},
    {"100m", "100m"},
    {"8k", "8k"},
    {"2k", "2k"},
    {"50k", "50k"},
    {"7M", "7M"},
    {"6G", "6G"},
    {"5T", "5T"},
    {"40T", "40T"},
    {"300T", "300T"},
    {"2P", "2P"},
    {"1E", "1E"},
    {"12E", "12E"},
    /* decimal exponents keep their form, exponent a multiple of 3 */
    {"1E-3", "1e-3"},
    {"1e3", "1e3"},
    {"1E6", "1e6"},
    {"1e9", "1e9"},
    {"1E12", "1e12"},
    {"1e15", "1e15"},
    {"1E18", "1e18"},
    {"1e14", "100e12"},
    {"1e13", "10e12"},
    {"0.5e0", "500e-3"},
    {"0.5e-1", "50e-3"},
    {"0.5e-2", "5e-3"},
    {"1.2e3", "1200"},
    {"1.3E+6", "1300e3"},
    {"1.40e9", "1400e6"},
    {"1.53E12", "1530e9"},
    {"1.7E18", "1700e15"},
    /* things that look like floating point */
    {"100.035k", "100035"},
    {"0.001", "1m"},
    {"0.0005k", "500m"},
    {"0.005", "5m"},
    {"0.5", "500m"},
    {"0.00050k", "500m"},
    {"0.50000", "500m"},
    {"10.035M", "10035k"},
    {"9.01", "9010m"},
    {"1.5", "1500m"},
    {"8.1k", "8100"},
    {"7.123456M", "7123456"},
    {"6.987654321G", "6987654321"},
    {"5.444T", "5444G"},
    {"40.1T", "40100G"},
    {"300.2T", "300200G"},
    {"2.5P", "2500T"},
    {"1.01E", "1010P"},
    {"1.2345", "1234500u"},
    {"12000", "12k"},
    {"1000M", "1G"},
    {"+5", "5"},
    {"-1", "-1"},
    /* saturate / round up below nano */
    {"3.001n", "4n"},
    {"1.1E-9", "2e-9"},
    {"0.0000000001", "1n"},
    {"0.0000000005", "1n"},
    {"0.00000000050", "1n"},
    {"0.5e-9", "1e-9"},
    {"0.9n", "1n"},
    {"0.00000012345", "124n"},
    {"1e-300000", "1e-9"},
    /* binary */
    {"1.5Gi", "1536Mi"},
    {"1000Mi", "1000Mi"},
    {"1024Mi", "1Gi"},
    {"1025", "1025"},
    {"100.035Ki", "102435840m"},
    {"0.5Mi", "512Ki"},
    {"0.5Ki", "512"},
    {"0.05Gi", "53687091200m"},
    {"0.025Ti", "27487790694400m"},
    {".001Ki", "1024m"},
    {".000001Ki", "1024u"},
    {".000000001Ki", "1024n"},
    {".000000000001Ki", "2n"},
    {"9Ei", "9Ei"},
    {"1024Ei", "1024Ei"},
    /* written by trolls */
    {".001", "1m"},
    {".0001k", "100m"},
    {"1.", "1"},
    {"1.G", "1G"},
    {"0000123", "123"},
    /* no DecimalSI suffix above E: exponent notation */
    {"1000E", "1e21"},
    {"5000E", "5e21"},
    {"1e24", "1e24"},
};

static void test_parse_canonical(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(CANON) / sizeof(CANON[0]); i++) {
        struct qty q = Q(CANON[i][0]);
        char buf[QTY_STR_MAX];
        if (strcmp(qty_fmt(&q, buf), CANON[i][1]) != 0)
            fail_msg("\"%s\": got \"%s\", want \"%s\"", CANON[i][0], buf, CANON[i][1]);
        /* The canonical text parses to the same value and prints the same. */
        struct qty q2 = Q(buf);
        assert_int_equal(qty_cmp(&q, &q2), 0);
        assert_qstr(&q2, CANON[i][1]);
        /* Negative: same magnitude, "-" prefix (zero stays "0"). */
        if (CANON[i][0][0] == '-')
            continue;
        char neg[QTY_INPUT_MAX + 2];
        snprintf(neg, sizeof(neg), "-%s", CANON[i][0][0] == '+' ? CANON[i][0] + 1 : CANON[i][0]);
        struct qty qn = Q(neg);
        assert_true(qn.nano == -q.nano);
        char want[QTY_STR_MAX + 1];
        snprintf(want, sizeof(want), "%s%s", q.nano ? "-" : "", CANON[i][1]);
        if (strcmp(qty_fmt(&qn, buf), want) != 0)
            fail_msg("\"%s\": got \"%s\", want \"%s\"", neg, buf, want);
    }
}

static void test_exact_values(void **state)
{
    (void)state;
    assert_true(Q("100m").nano == 100000000);
    assert_true(Q("1Ki").nano == (__int128)1024 * 1000000000);
    assert_true(Q("1.5Gi").nano == (__int128)1610612736 * 1000000000);
    assert_true(Q("3Ei").nano == (__int128)3 * ((__int128)1 << 60) * 1000000000);
    assert_true(Q("1n").nano == 1);
    assert_true(Q("-0.9n").nano == -1); /* rounds away from zero */
    assert_int_equal(Q("1Ki").format, QTY_BINARY_SI);
    assert_int_equal(Q("0.5Ki").format, QTY_BINARY_SI);            /* 512: >= 1 stays binary */
    assert_int_equal(Q(".000000000001Ki").format, QTY_DECIMAL_SI); /* < 1 leaves binary */
    assert_int_equal(Q("1e3").format, QTY_DECIMAL_EXP);
    assert_int_equal(Q("1E").format, QTY_DECIMAL_SI);
    /* The largest value: (2^127 - 1) nano. */
    struct qty max = Q("170141183460469231731687303715.884105727");
    assert_true(max.nano == (__int128)(((unsigned __int128)1 << 127) - 1));
    struct qty min = Q("-170141183460469231731687303715.884105727");
    assert_true(min.nano == -max.nano);
}

static void test_invalid(void **state)
{
    (void)state;
    const char *bad[] = {
        "",        "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i",   "-3.01i",
        "-3.01e-", " 1",    "1 ",     "1.5.5", "Gi",    "1 Gi", "--1", "1Qi",  ".",
        "-",       "+",     "e3",     "1e",    "1E+",   "1K",   "1kb", "1e3m", "0x1",
        "1,5",     "1e3.5", "+-1",    "1\t",   "Ki1",   "1.5e", "1mm", "1KiB",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct qty q = {123, QTY_BINARY_SI};
        struct err e;
        err_clear(&e);
        if (qty_parse(bad[i], &q, &e) != -EINVAL)
            fail_msg("\"%s\" parsed unexpectedly", bad[i]);
        assert_true(q.nano == 0);
        char want[64];
        snprintf(want, sizeof(want), "invalid quantity \"%s\"", bad[i]);
        if (!strstr(e.msg, want))
            fail_msg("\"%s\": message \"%s\" does not name the input", bad[i], e.msg);
    }
    struct err e;
    struct qty q;
    assert_int_equal(qty_parse("1Qi", &q, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "unknown suffix \"Qi\""));
    assert_int_equal(qty_parse("--1", &q, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "expected a number"));
    assert_int_equal(qty_parse(NULL, &q, &e), -EINVAL);
    /* Overlong input is rejected before any arithmetic. */
    char big[QTY_INPUT_MAX + 2];
    memset(big, '1', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(qty_parse(big, &q, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "longer than 128"));
    big[QTY_INPUT_MAX] = '\0'; /* exactly the limit: a valid (huge) number, out of range */
    assert_int_equal(qty_parse(big, &q, &e), -ERANGE);
    /* A long but small value at the limit is fine. */
    char small[QTY_INPUT_MAX + 1];
    memset(small, '0', QTY_INPUT_MAX);
    small[1] = '.';
    small[QTY_INPUT_MAX - 1] = '1';
    small[QTY_INPUT_MAX] = '\0';
    assert_int_equal(qty_parse(small, &q, &e), 0);
    assert_qstr(&q, "1n");
}

static void test_overflow(void **state)
{
    (void)state;
    const char *range[] = {
        "1e40",
        "200000000000000000000000000000",
        "170141183460469231731687303715.884105728",
        "-1e39",
        "200000000000Ei",
        "99999999999999999999999999999999999999999e-3",
    };
    for (size_t i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
        struct qty q;
        struct err e;
        err_clear(&e);
        if (qty_parse(range[i], &q, &e) != -ERANGE)
            fail_msg("\"%s\": expected -ERANGE", range[i]);
        assert_non_null(strstr(e.msg, "out of range"));
        assert_non_null(strstr(e.msg, range[i]));
    }
    struct qty max = Q("170141183460469231731687303715.884105727");
    struct qty min = Q("-170141183460469231731687303715.884105727");
    struct qty one_n = Q("1n"), r = Q("7");
    struct err e;
    assert_int_equal(qty_add(&max, &one_n, &r, &e), -ERANGE);
    assert_non_null(strstr(e.msg, "quantity overflow"));
    assert_qstr(&r, "7"); /* untouched */
    assert_int_equal(qty_sub(&min, &one_n, &r, &e), -ERANGE);
    assert_int_equal(qty_add(&max, &min, &r, &e), 0);
    assert_true(qty_is_zero(&r));
    assert_int_equal(qty_mul_int(&max, 2, &r, &e), -ERANGE);
    assert_int_equal(qty_mul_int(&max, -1, &r, &e), 0);
    assert_true(r.nano == min.nano);
    struct qty two = Q("2");
    assert_int_equal(qty_scale(&max, &two, &r, &e), -ERANGE);
    int64_t v;
    struct qty big = Q("9223372036854775808");
    assert_int_equal(qty_value(&big, &v, &e), -ERANGE);
    assert_non_null(strstr(e.msg, "does not fit"));
    big = Q("9223372036854775807");
    assert_int_equal(qty_value(&big, &v, &e), 0);
    assert_true(v == INT64_MAX);
    big = Q("10E");
    assert_int_equal(qty_milli_value(&big, &v, &e), -ERANGE);
}

static void test_arithmetic(void **state)
{
    (void)state;
    struct qty a = Q("500m"), b = Q("500m"), r;
    assert_int_equal(qty_add(&a, &b, &r, NULL), 0);
    assert_qstr(&r, "1");
    a = Q("1.5Gi");
    b = Q("512Mi");
    assert_int_equal(qty_add(&a, &b, &r, NULL), 0);
    assert_qstr(&r, "2Gi");
    /* 10000 x 100m is exactly 1000. */
    struct qty sum = qty_from_int(0, QTY_DECIMAL_SI), step = Q("100m");
    for (int i = 0; i < 10000; i++)
        assert_int_equal(qty_add(&sum, &step, &sum, NULL), 0);
    struct qty k = Q("1000");
    assert_int_equal(qty_cmp(&sum, &k), 0);
    assert_qstr(&sum, "1k");
    /* ... and subtracting them again gives exactly zero. */
    for (int i = 0; i < 10000; i++)
        assert_int_equal(qty_sub(&sum, &step, &sum, NULL), 0);
    assert_true(qty_is_zero(&sum));
    assert_qstr(&sum, "0");
    /* Zero takes the other operand's format (Kubernetes Add/Sub). */
    struct qty zero = Q("0"), gi = Q("1Gi");
    assert_int_equal(qty_add(&zero, &gi, &r, NULL), 0);
    assert_qstr(&r, "1Gi");
    assert_int_equal(qty_add(&gi, &zero, &r, NULL), 0);
    assert_qstr(&r, "1Gi");
    assert_int_equal(qty_sub(&zero, &gi, &r, NULL), 0);
    assert_qstr(&r, "-1Gi");
    a = Q("1");
    b = Q("100m");
    assert_int_equal(qty_sub(&a, &b, &r, NULL), 0);
    assert_qstr(&r, "900m");
    a = Q("2Gi");
    b = Q("1.5Gi");
    assert_int_equal(qty_sub(&a, &b, &r, NULL), 0);
    assert_qstr(&r, "512Mi");
    assert_int_equal(qty_sign(&r), 1);
    assert_int_equal(qty_mul_int(&step, 30, &r, NULL), 0);
    assert_qstr(&r, "3");
    assert_int_equal(qty_mul_int(&a, 3, &r, NULL), 0);
    assert_qstr(&r, "6Gi");
    /* compare */
    struct qty x = Q("10000T"), y = Q("100Gi");
    assert_int_equal(qty_cmp(&x, &y), 1);
    assert_int_equal(qty_cmp(&y, &x), -1);
    x = Q("1");
    y = Q("1000m");
    assert_int_equal(qty_cmp(&x, &y), 0);
    x = Q("100m");
    y = Q("50m");
    assert_ptr_equal(qty_max(&x, &y), &x);
    assert_ptr_equal(qty_min(&x, &y), &y);
    assert_int_equal(qty_sign(&zero), 0);
    struct qty m = Q("-3");
    assert_int_equal(qty_sign(&m), -1);
    assert_true(qty_approx(&step) > 0.0999 && qty_approx(&step) < 0.1001);
}

static void test_scale(void **state)
{
    (void)state;
    struct {
        const char *q, *f, *want;
    } cases[] = {
        {"10", "0.9", "9"},
        {"7", "0.33", "2310m"},
        {"1Gi", "0.9", "966367641"}, /* binary: whole units, rounded down */
        {"4Gi", "0.5", "2Gi"},
        {"100m", "0.5", "50m"},
        {"1m", "0.5", "0"}, /* below the milli precision */
        {"3", "1.5", "4500m"},
        {"10", "1", "10"},
        {"10", "0", "0"},
        {"-10", "0.25", "-2500m"},
        {"1Ei", "0.999999999", "1152921503453925471"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct qty q = Q(cases[i].q), f = Q(cases[i].f), r;
        struct err e;
        if (qty_scale(&q, &f, &r, &e) != 0)
            fail_msg("%s * %s: %s", cases[i].q, cases[i].f, e.msg);
        char buf[QTY_STR_MAX];
        if (strcmp(qty_fmt(&r, buf), cases[i].want) != 0)
            fail_msg("%s * %s = %s, want %s", cases[i].q, cases[i].f, buf, cases[i].want);
    }
    struct qty q = Q("1"), f = Q("-0.5"), r;
    assert_int_equal(qty_scale(&q, &f, &r, NULL), -EINVAL);
    q = Q("1.23456789");
    r = qty_truncate(&q, -3);
    assert_qstr(&r, "1234m");
    r = qty_truncate(&q, 0);
    assert_qstr(&r, "1");
}

static void test_int_views(void **state)
{
    (void)state;
    struct {
        const char *q;
        int64_t value, milli;
    } cases[] = {
        {"100m", 1, 100},  {"1.5", 2, 1500}, {"-1.5", -2, -1500},
        {"1n", 1, 1},      {"0", 0, 0},      {"1Ki", 1024, 1024000},
        {"2.0001m", 1, 3}, {"5", 5, 5000},   {"1Gi", 1073741824, 1073741824000},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct qty q = Q(cases[i].q);
        int64_t v = 99, m = 99;
        assert_int_equal(qty_value(&q, &v, NULL), 0);
        assert_int_equal(qty_milli_value(&q, &m, NULL), 0);
        if (v != cases[i].value || m != cases[i].milli)
            fail_msg("%s: value %lld milli %lld", cases[i].q, (long long)v, (long long)m);
    }
    struct qty q = qty_from_int(1024, QTY_BINARY_SI);
    assert_qstr(&q, "1Ki");
    q = qty_from_int(1000, QTY_DECIMAL_SI);
    assert_qstr(&q, "1k");
    q = qty_from_int(1000000, QTY_DECIMAL_EXP);
    assert_qstr(&q, "1e6");
    q = qty_from_int(1234000, QTY_DECIMAL_SI);
    assert_qstr(&q, "1234k");
    /* Binary, not a multiple of 1Ki: no suffix (as Kubernetes); re-parsed it is decimal. */
    q = qty_from_int(1025000, QTY_BINARY_SI);
    assert_qstr(&q, "1025000");
    q = Q("1025000");
    assert_qstr(&q, "1025k");
    q = qty_from_milli(1024, QTY_BINARY_SI);
    assert_qstr(&q, "1024m");
    q = qty_from_milli(1, QTY_DECIMAL_SI);
    assert_qstr(&q, "1m");
    q = qty_from_milli(1000000, QTY_DECIMAL_EXP);
    assert_qstr(&q, "1e3");
    char *s = qty_to_str(&q);
    assert_string_equal(s, "1e3");
    free(s);
    json_t *j = qty_to_json(&q);
    assert_string_equal(json_string_value(j), "1e3");
    json_decref(j);
    assert_string_equal(QTY_STR(&q), "1e3");
}

static void test_json(void **state)
{
    (void)state;
    struct {
        const char *json;
        const char *want;
    } ok[] = {
        {"\"1Gi\"", "1Gi"}, {"\" 100m \"", "100m"}, {"10", "10"},
        {"-1", "-1"},       {"1.5", "1500m"},       {"0.1", "100m"},
        {"1e3", "1k"},      {"1000000", "1M"},      {"2.5e-3", "2500u"},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        json_error_t je;
        json_t *v = json_loads(ok[i].json, JSON_DECODE_ANY, &je);
        assert_non_null(v);
        struct qty q;
        struct err e;
        if (qty_parse_json(v, &q, &e) != 0)
            fail_msg("%s: %s", ok[i].json, e.msg);
        char buf[QTY_STR_MAX];
        if (strcmp(qty_fmt(&q, buf), ok[i].want) != 0)
            fail_msg("%s: got %s want %s", ok[i].json, buf, ok[i].want);
        json_decref(v);
    }
    const char *bad[] = {"null", "true", "{}", "[]", "\"abc\"", "\"1 Gi\"", "\"\""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_error_t je;
        json_t *v = json_loads(bad[i], JSON_DECODE_ANY, &je);
        struct qty q;
        struct err e;
        err_clear(&e);
        assert_int_equal(qty_parse_json(v, &q, &e), -EINVAL);
        assert_non_null(strstr(e.msg, "invalid quantity"));
        json_decref(v);
    }
    struct qty q;
    assert_int_equal(qty_parse_json(NULL, &q, NULL), -EINVAL);
    json_t *nul = json_stringn("1\0", 2);
    assert_int_equal(qty_parse_json(nul, &q, NULL), -EINVAL);
    json_decref(nul);
}

/* qty_parse's 64-bit shortcut agrees with the exact bignum parse: the code, the value and
 * the format, for the boundary cases and for generated numbers around them. */
static void assert_same_as_reference(const char *s)
{
    struct qty a, b;
    struct err ea, eb;
    err_clear(&ea);
    err_clear(&eb);
    int ra = qty_parse(s, &a, &ea), rb = qty_parse_reference(s, &b, &eb);
    if (ra != rb || a.nano != b.nano || a.format != b.format || strcmp(ea.msg, eb.msg) != 0)
        fail_msg("\"%s\": %d %s/%d vs reference %d %s/%d (%s | %s)", s, ra, QTY_STR(&a), a.format,
                 rb, QTY_STR(&b), b.format, ea.msg, eb.msg);
}

static void test_shortcut_matches_reference(void **state)
{
    (void)state;
    const char *fixed[] = {
        "0",
        "-0",
        "+0",
        "0n",
        "0Ki",
        "0.000",
        "1",
        "500m",
        "2",
        "1Gi",
        "128974848",
        "1.5Gi",
        "0.5Ki",
        ".5",
        "1.",
        "1n",
        "0.1n",
        "-0.1n",
        "3.001n",
        "1u",
        "1k",
        "1M",
        "1G",
        "1T",
        "1P",
        "1E",
        "1e3",
        "1E3",
        "1Ki",
        "1Mi",
        "1Ti",
        "1Pi",
        "1Ei",
        "8Ei",
        "16Ei",
        "9223372036854775807",
        "9999999999999999999",
        "18446744073709551615",
        "10000000000000000000",
        "9999999999999999999G",
        "170141183460469231731G",
        "1234567890123456789Ei",
        "9999999999999999999Ei",
        "0.0000000000000000001",
        "0.9999999999999999999n",
        "999999999999999999.9",
        "-999999999999999999.9G",
        "1.234567890123456789Ki",
        "1Ki ",
        "1K",
        "1ki",
        "1mi",
        "1Mx",
        "1i",
        "--1",
        "+-1",
        "-",
        "+",
        ".",
        "Gi",
        "1..2",
        "1.2.3",
        "",
    };
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        assert_same_as_reference(fixed[i]);
    static const char *const SUFFIX[] = {"",   "n",  "u",  "m",  "k",  "M",  "G",  "T",
                                         "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e2", "x"};
    unsigned seed = 12345;
    for (int i = 0; i < 20000; i++) {
        char buf[64];
        size_t n = 0;
        seed = seed * 1103515245u + 12345u;
        if (seed >> 30 == 0)
            buf[n++] = '-';
        int digits = (int)((seed >> 8) % 21), point = (int)((seed >> 16) % 23);
        for (int d = 0; d < digits; d++) {
            if (d == point)
                buf[n++] = '.';
            seed = seed * 1103515245u + 12345u;
            /* mostly nines and zeros: the edges of 64 bits and of nano */
            unsigned r = (seed >> 16) % 4;
            buf[n++] = r == 0 ? '0' : r == 1 ? '9' : (char)('0' + (seed >> 20) % 10);
        }
        seed = seed * 1103515245u + 12345u;
        const char *suf = SUFFIX[(seed >> 16) % (sizeof(SUFFIX) / sizeof(SUFFIX[0]))];
        memcpy(buf + n, suf, strlen(suf) + 1);
        assert_same_as_reference(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_canonical),
        cmocka_unit_test(test_exact_values),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_scale),
        cmocka_unit_test(test_int_views),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_shortcut_matches_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
