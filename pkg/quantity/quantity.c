/* quantity: exact resource quantities as 128-bit nano counts. */
#include "pkg/quantity/quantity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/xalloc.h"

typedef unsigned __int128 u128;

#define NANO 1000000000ULL
/* Largest magnitude: 2^127 - 1 (INT128_MIN is excluded so negation never overflows). */
#define QTY_MAXMAG ((u128)(((u128)1 << 127) - 1))

/* ---- a small fixed-size bignum for exact parsing ------------------------------------- */

#define BN_LIMBS 28 /* 896 bits: 127 digits * 2^60 * 10^39 fits with room to spare */

struct bn {
    uint32_t l[BN_LIMBS]; /* little endian */
};

/* b = b * m + add. Returns -1 on overflow. */
static int bn_muladd(struct bn *b, uint32_t m, uint32_t add)
{
    uint64_t carry = add;
    for (int i = 0; i < BN_LIMBS; i++) {
        uint64_t v = (uint64_t)b->l[i] * m + carry;
        b->l[i] = (uint32_t)v;
        carry = v >> 32;
    }
    return carry ? -1 : 0;
}

/* b = b / d; returns the remainder. */
static uint32_t bn_divsmall(struct bn *b, uint32_t d)
{
    uint64_t rem = 0;
    for (int i = BN_LIMBS - 1; i >= 0; i--) {
        uint64_t cur = (rem << 32) | b->l[i];
        b->l[i] = (uint32_t)(cur / d);
        rem = cur % d;
    }
    return (uint32_t)rem;
}

static bool bn_is_zero(const struct bn *b)
{
    for (int i = 0; i < BN_LIMBS; i++)
        if (b->l[i])
            return false;
    return true;
}

/* To u128 when it fits in 127 bits. */
static int bn_to_u128(const struct bn *b, u128 *out)
{
    for (int i = 4; i < BN_LIMBS; i++)
        if (b->l[i])
            return -1;
    u128 v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 32) | b->l[i];
    if (v > QTY_MAXMAG)
        return -1;
    *out = v;
    return 0;
}

/* ---- parsing ---------------------------------------------------------------------------- */

static const char *const DEC_SUFFIX[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
static const char *const BIN_SUFFIX[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

/* Interpret a suffix: base 10 with exponent, or base 2 with exponent. 0 or -1. */
static int parse_suffix(const char *s, int *base, long *exp, enum qty_format *fmt)
{
    for (int i = 0; i < 10; i++) {
        if (strcmp(s, DEC_SUFFIX[i]) == 0) {
            *base = 10;
            *exp = (i - 3) * 3;
            *fmt = QTY_DECIMAL_SI;
            return 0;
        }
    }
    for (int i = 1; i < 7; i++) {
        if (strcmp(s, BIN_SUFFIX[i]) == 0) {
            *base = 2;
            *exp = i * 10;
            *fmt = QTY_BINARY_SI;
            return 0;
        }
    }
    if (s[0] != 'e' && s[0] != 'E')
        return -1;
    const char *p = s + 1;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (*p == '\0')
        return -1;
    long v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        if (v < 1000000) /* saturate: anything this large over/underflows anyway */
            v = v * 10 + (*p - '0');
    }
    *base = 10;
    *exp = neg ? -v : v;
    *fmt = QTY_DECIMAL_EXP;
    return 0;
}

int qty_parse_reference(const char *s, struct qty *out, struct err *e)
{
    out->nano = 0;
    out->format = QTY_DECIMAL_SI;
    if (!s || !*s)
        return err_set(e, -EINVAL, "invalid quantity \"\": empty");
    size_t len = strlen(s);
    if (len > QTY_INPUT_MAX)
        return err_set(e, -EINVAL, "invalid quantity \"%.32s...\": longer than %d characters", s,
                       QTY_INPUT_MAX);
    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    const char *num = p;
    while (*p >= '0' && *p <= '9')
        p++;
    size_t num_len = (size_t)(p - num);
    const char *frac = p;
    size_t frac_len = 0;
    if (*p == '.') {
        frac = ++p;
        while (*p >= '0' && *p <= '9')
            p++;
        frac_len = (size_t)(p - frac);
    }
    if (num_len + frac_len == 0)
        return err_set(e, -EINVAL, "invalid quantity \"%s\": expected a number", s);
    int base;
    long exp;
    enum qty_format fmt;
    if (parse_suffix(p, &base, &exp, &fmt) < 0)
        return err_set(e, -EINVAL,
                       "invalid quantity \"%s\": unknown suffix \"%s\" (want one of n u m k M G T "
                       "P E Ki Mi Gi Ti Pi Ei, or e<exponent>)",
                       s, p);

    struct bn b;
    memset(&b, 0, sizeof(b));
    for (size_t i = 0; i < num_len; i++)
        bn_muladd(&b, 10, (uint32_t)(num[i] - '0'));
    for (size_t i = 0; i < frac_len; i++)
        bn_muladd(&b, 10, (uint32_t)(frac[i] - '0'));

    u128 mag = 0;
    if (!bn_is_zero(&b)) {
        long shift; /* power of ten to apply to get nano units */
        if (base == 2) {
            for (long i = 0; i < exp; i += 10)
                bn_muladd(&b, 1024, 0);
            shift = 9 - (long)frac_len;
        } else {
            shift = exp + 9 - (long)frac_len;
        }
        bool sticky = false;
        if (shift >= 40)
            goto range;
        if (shift > 0) {
            for (long i = 0; i < shift; i++)
                if (bn_muladd(&b, 10, 0) < 0)
                    goto range;
        } else if (shift < -300) {
            memset(&b, 0, sizeof(b));
            sticky = true;
        } else {
            for (long i = 0; i < -shift; i++)
                if (bn_divsmall(&b, 10))
                    sticky = true;
        }
        if (bn_to_u128(&b, &mag) < 0)
            goto range;
        if (sticky) { /* round finer-than-nano values up, away from zero */
            if (mag == QTY_MAXMAG)
                goto range;
            mag++;
        }
    }
    if (fmt == QTY_BINARY_SI && mag > 0 && mag < NANO)
        fmt = QTY_DECIMAL_SI; /* like Kubernetes: 0 < |x| < 1 is not written in binary */
    out->nano = neg ? -(__int128)mag : (__int128)mag;
    out->format = fmt;
    return 0;
range:
    return err_set(e, -ERANGE, "quantity \"%s\" is out of range (magnitude must be below 1.7e29)",
                   s);
}

static const uint64_t POW10[20] = {1ULL,
                                   10ULL,
                                   100ULL,
                                   1000ULL,
                                   10000ULL,
                                   100000ULL,
                                   1000000ULL,
                                   10000000ULL,
                                   100000000ULL,
                                   1000000000ULL,
                                   10000000000ULL,
                                   100000000000ULL,
                                   1000000000000ULL,
                                   10000000000000ULL,
                                   100000000000000ULL,
                                   1000000000000000ULL,
                                   10000000000000000ULL,
                                   100000000000000000ULL,
                                   1000000000000000000ULL,
                                   10000000000000000000ULL};

/*
 * The common quantities ("500m", "2", "1Gi", "128974848") in 64-bit arithmetic: at
 * most 19 digits, a suffix of one or two letters. 1 when it did not apply (the caller
 * takes the exact path), 0 with *out set. The bignum path costs thousands of
 * instructions a value, and a restart parses every pod's requests (bench-scale).
 */
static int parse_small(const char *s, struct qty *out)
{
    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    uint64_t v = 0;
    int digits = 0, frac_len = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++, frac_len++)
            v = v * 10 + (uint64_t)(*p - '0');
    if (digits == 0 || digits > 19)
        return 1;
    int base;
    long exp;
    enum qty_format fmt;
    if (parse_suffix(p, &base, &exp, &fmt) < 0 || fmt == QTY_DECIMAL_EXP)
        return 1; /* the exact path says what is wrong, or takes the exponent */
    int bin = base == 2 ? (int)(exp / 10) : 0; /* power of 1024 */
    long shift = base == 2 ? 9 : exp + 9;      /* power of ten to nano units */
    if (shift > 18)
        return 1; /* T P E need more than 64 bits of nano */
    shift -= frac_len;
    u128 mag = (u128)v << (10 * bin); /* below 2^124: 19 digits are below 2^64, Ei is 2^60 */
    if (shift >= 0) {
        u128 m = POW10[shift]; /* shift is at most 18 here */
        if (mag > QTY_MAXMAG / m)
            return 1;
        mag *= m;
    } else {
        u128 d = POW10[-shift]; /* frac_len is at most 19 */
        /* finer than nano rounds up, away from zero */
        mag = mag / d + (mag % d != 0);
    }
    if (fmt == QTY_BINARY_SI && mag > 0 && mag < NANO)
        fmt = QTY_DECIMAL_SI;
    out->nano = neg ? -(__int128)mag : (__int128)mag;
    out->format = fmt;
    return 0;
}

int qty_parse(const char *s, struct qty *out, struct err *e)
{
    if (s && *s && parse_small(s, out) == 0)
        return 0;
    return qty_parse_reference(s, out, e);
}

int qty_parse_json(const json_t *v, struct qty *out, struct err *e)
{
    out->nano = 0;
    out->format = QTY_DECIMAL_SI;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        while (n && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
            s++;
            n--;
        }
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
            n--;
        if (memchr(s, '\0', n))
            return err_set(e, -EINVAL, "invalid quantity \"%.32s\": contains a NUL byte", s);
        if (n > QTY_INPUT_MAX)
            return err_set(e, -EINVAL, "invalid quantity \"%.32s...\": longer than %d characters",
                           s, QTY_INPUT_MAX);
        char tmp[QTY_INPUT_MAX + 1];
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        return qty_parse(tmp, out, e);
    }
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        *out = qty_from_int((int64_t)i, QTY_DECIMAL_SI);
        return 0;
    }
    if (json_is_real(v)) {
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "%.15g", json_real_value(v));
        return qty_parse(tmp, out, e);
    }
    return err_set(e, -EINVAL, "invalid quantity: expected a string or a number, got %s",
                   !v                   ? "nothing"
                   : json_is_null(v)    ? "null"
                   : json_is_boolean(v) ? "a boolean"
                   : json_is_object(v)  ? "an object"
                                        : "an array");
}

/* ---- formatting ---------------------------------------------------------------------------- */

static u128 umag(__int128 v)
{
    return v < 0 ? (u128)(-v) : (u128)v;
}

/* Decimal digits of v into p (no NUL); returns length. */
static size_t u128_digits(u128 v, char *p)
{
    char tmp[48];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
    return n;
}

const char *qty_fmt_amount(char *buf, const char *res, int64_t milli)
{
    bool bytes = res && (strstr(res, "memory") || strstr(res, "storage"));
    struct qty q = qty_from_milli(milli < 0 ? 0 : milli, bytes ? QTY_BINARY_SI : QTY_DECIMAL_SI);
    return qty_fmt(&q, buf);
}

const char *qty_fmt(const struct qty *q, char *buf)
{
    if (q->nano == 0) {
        memcpy(buf, "0", 2);
        return buf;
    }
    u128 m = umag(q->nano);
    size_t n = 0;
    if (q->nano < 0)
        buf[n++] = '-';
    enum qty_format fmt = q->format;
    if (fmt == QTY_BINARY_SI && (m < (u128)1024 * NANO || m % NANO != 0))
        fmt = QTY_DECIMAL_SI;
    const char *suffix;
    char sbuf[16];
    if (fmt == QTY_BINARY_SI) {
        u128 u = m / NANO;
        int k = 0;
        while (k < 6 && u % 1024 == 0) {
            u /= 1024;
            k++;
        }
        n += u128_digits(u, buf + n);
        suffix = BIN_SUFFIX[k];
    } else {
        int t = 0;
        while (m % 10 == 0) {
            m /= 10;
            t++;
        }
        int ex = t - 9;
        int e3 = ex >= 0 ? ex / 3 * 3 : -((-ex + 2) / 3) * 3;
        for (int i = 0; i < ex - e3; i++)
            m *= 10;
        n += u128_digits(m, buf + n);
        if (fmt == QTY_DECIMAL_SI && e3 >= -9 && e3 <= 18) {
            suffix = DEC_SUFFIX[e3 / 3 + 3];
        } else if (e3 == 0) {
            suffix = "";
        } else {
            snprintf(sbuf, sizeof(sbuf), "e%d", e3);
            suffix = sbuf;
        }
    }
    size_t sl = strlen(suffix);
    memcpy(buf + n, suffix, sl + 1);
    return buf;
}

char *qty_to_str(const struct qty *q)
{
    char buf[QTY_STR_MAX];
    return xstrdup(qty_fmt(q, buf));
}

json_t *qty_to_json(const struct qty *q)
{
    char buf[QTY_STR_MAX];
    return json_string(qty_fmt(q, buf));
}

/* ---- construction / arithmetic -----------------------------------------------------------------
 */

struct qty qty_from_int(int64_t v, enum qty_format f)
{
    struct qty q = {(__int128)v * NANO, f};
    return q;
}

struct qty qty_from_milli(int64_t v, enum qty_format f)
{
    struct qty q = {(__int128)v * 1000000, f};
    if (f == QTY_BINARY_SI && q.nano != 0 && umag(q.nano) < NANO)
        q.format = QTY_DECIMAL_SI;
    return q;
}

static bool in_range(__int128 v)
{
    return umag(v) <= QTY_MAXMAG && v != -(__int128)QTY_MAXMAG - 1;
}

static int range_err(struct err *e, const char *op, const struct qty *a, const struct qty *b)
{
    char x[QTY_STR_MAX], y[QTY_STR_MAX];
    return err_set(e, -ERANGE, "quantity overflow: %s %s %s", qty_fmt(a, x), op, qty_fmt(b, y));
}

int qty_add(const struct qty *a, const struct qty *b, struct qty *out, struct err *e)
{
    __int128 r;
    if (__builtin_add_overflow(a->nano, b->nano, &r) || !in_range(r))
        return range_err(e, "+", a, b);
    enum qty_format f = a->nano == 0 ? b->format : a->format;
    out->nano = r;
    out->format = f;
    return 0;
}

int qty_sub(const struct qty *a, const struct qty *b, struct qty *out, struct err *e)
{
    __int128 r;
    if (__builtin_sub_overflow(a->nano, b->nano, &r) || !in_range(r))
        return range_err(e, "-", a, b);
    enum qty_format f = a->nano == 0 ? b->format : a->format;
    out->nano = r;
    out->format = f;
    return 0;
}

int qty_mul_int(const struct qty *q, int64_t n, struct qty *out, struct err *e)
{
    __int128 r;
    if (__builtin_mul_overflow(q->nano, (__int128)n, &r) || !in_range(r)) {
        struct qty nq = qty_from_int(n, QTY_DECIMAL_SI);
        return range_err(e, "*", q, &nq);
    }
    out->nano = r;
    out->format = q->format;
    return 0;
}

struct qty qty_truncate(const struct qty *q, int exp10)
{
    struct qty r = *q;
    if (exp10 < -9)
        exp10 = -9;
    if (exp10 > 18)
        exp10 = 18;
    u128 unit = 1;
    for (int i = -9; i < exp10; i++)
        unit *= 10;
    u128 m = umag(q->nano);
    m -= m % unit;
    r.nano = q->nano < 0 ? -(__int128)m : (__int128)m;
    return r;
}

int qty_scale(const struct qty *q, const struct qty *factor, struct qty *out, struct err *e)
{
    if (factor->nano < 0)
        return err_set(e, -EINVAL, "quantity scale factor must not be negative");
    /* |q| * f / 1e9 with q = hi * 1e9 + lo and f in nano: hi * f + lo * f / 1e9. */
    u128 m = umag(q->nano);
    u128 f = (u128)factor->nano;
    u128 hi = m / NANO, lo = m % NANO;
    u128 a, bpart;
    /* lo < 1e9 and f may be large: split f too so lo * f cannot overflow. */
    u128 fhi = f / NANO, flo = f % NANO;
    if (__builtin_mul_overflow(hi, f, &a))
        goto range;
    bpart = lo * fhi + (lo * flo) / NANO; /* lo*fhi < 1e9 * 2^98: fits */
    u128 r;
    if (__builtin_add_overflow(a, bpart, &r) || r > QTY_MAXMAG)
        goto range;
    struct qty res = {q->nano < 0 ? -(__int128)r : (__int128)r, q->format};
    *out = qty_truncate(&res, q->format == QTY_BINARY_SI ? 0 : -3);
    if (out->format == QTY_BINARY_SI && out->nano != 0 && umag(out->nano) < NANO)
        out->format = QTY_DECIMAL_SI;
    return 0;
range:
    return range_err(e, "*", q, factor);
}

int qty_cmp(const struct qty *a, const struct qty *b)
{
    return a->nano < b->nano ? -1 : a->nano > b->nano ? 1 : 0;
}

int qty_sign(const struct qty *q)
{
    return q->nano < 0 ? -1 : q->nano > 0 ? 1 : 0;
}

bool qty_is_zero(const struct qty *q)
{
    return q->nano == 0;
}

const struct qty *qty_max(const struct qty *a, const struct qty *b)
{
    return qty_cmp(a, b) >= 0 ? a : b;
}

const struct qty *qty_min(const struct qty *a, const struct qty *b)
{
    return qty_cmp(a, b) <= 0 ? a : b;
}

/* ceil(|q| / unit) with q's sign, into an int64. */
static int scaled(const struct qty *q, u128 unit, int64_t *out, struct err *e, const char *what)
{
    u128 m = umag(q->nano);
    u128 v = m / unit + (m % unit ? 1 : 0);
    if (v > (u128)INT64_MAX) {
        char b[QTY_STR_MAX];
        return err_set(e, -ERANGE, "quantity %s: %s does not fit a 64-bit integer", qty_fmt(q, b),
                       what);
    }
    *out = q->nano < 0 ? -(int64_t)v : (int64_t)v;
    return 0;
}

int qty_value(const struct qty *q, int64_t *out, struct err *e)
{
    return scaled(q, NANO, out, e, "value");
}

int qty_milli_value(const struct qty *q, int64_t *out, struct err *e)
{
    return scaled(q, 1000000, out, e, "milli value");
}

double qty_approx(const struct qty *q)
{
    return (double)q->nano / 1e9;
}
