#include "pkg/util/clock.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

uint64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double clock_mono_s(void)
{
    return (double)clock_mono_ns() / 1e9;
}

/* v as exactly w decimal digits at p (v within range). */
static char *put_digits(char *p, long v, int w)
{
    for (int i = w - 1; i >= 0; i--, v /= 10)
        p[i] = (char)('0' + v % 10);
    return p + w;
}

char *clock_rfc3339(char *buf, size_t n, const struct timespec *ts, int micro)
{
    struct tm tm;
    if (!gmtime_r(&ts->tv_sec, &tm)) /* a year beyond int: a fixed string, not stack bytes */
        memset(&tm, 0, sizeof tm);
    /* every Event and condition carries one: digits by hand, not snprintf (2,900 instructions) */
    int year = tm.tm_year + 1900;
    if (year >= 0 && year <= 9999 && n >= 28 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000) {
        char *p = put_digits(buf, year, 4);
        *p++ = '-';
        p = put_digits(p, tm.tm_mon + 1, 2);
        *p++ = '-';
        p = put_digits(p, tm.tm_mday, 2);
        *p++ = 'T';
        p = put_digits(p, tm.tm_hour, 2);
        *p++ = ':';
        p = put_digits(p, tm.tm_min, 2);
        *p++ = ':';
        p = put_digits(p, tm.tm_sec, 2);
        if (micro) {
            *p++ = '.';
            p = put_digits(p, ts->tv_nsec / 1000, 6);
        }
        *p++ = 'Z';
        *p = '\0';
        return buf;
    }
    if (micro)
        snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts->tv_nsec / 1000);
    else
        snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return buf;
}

char *clock_now_rfc3339(char *buf, size_t n, int micro)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return clock_rfc3339(buf, n, &ts, micro);
}

static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)**p))
            return -EINVAL;
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    *out = v;
    return 0;
}

int clock_parse_rfc3339(const char *s, struct timespec *out)
{
    int Y, M, D, h, m, sec;
    const char *p = s;
    if (digits(&p, 4, &Y) || *p++ != '-' || digits(&p, 2, &M) || *p++ != '-' || digits(&p, 2, &D) ||
        (*p != 'T' && *p != 't' && *p != ' '))
        return -EINVAL;
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &m) || *p++ != ':' || digits(&p, 2, &sec))
        return -EINVAL;
    if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
        return -EINVAL;
    long nsec = 0;
    if (*p == '.') {
        p++;
        int nd = 0;
        if (!isdigit((unsigned char)*p))
            return -EINVAL;
        while (isdigit((unsigned char)*p)) {
            if (nd < 9) {
                nsec = nsec * 10 + (*p - '0');
                nd++;
            }
            p++;
        }
        while (nd++ < 9)
            nsec *= 10;
    }
    long off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1;
        int oh, om;
        p++;
        if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om))
            return -EINVAL;
        off = sign * (oh * 3600L + om * 60L);
    } else {
        return -EINVAL;
    }
    if (*p)
        return -EINVAL;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    out->tv_sec = timegm(&tm) - off;
    out->tv_nsec = nsec;
    return 0;
}
