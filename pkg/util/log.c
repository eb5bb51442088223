#include "pkg/util/log.h"
#include "pkg/util/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

void log_init(struct logger *lg, FILE *out, int verbosity, enum log_format format)
{
    lg->out = out;
    lg->verbosity = verbosity;
    lg->format = format;
    lg->component = NULL;
}

int log_parse_format(const char *s, enum log_format *out)
{
    if (!strcmp(s, "text") || !strcmp(s, "logfmt")) {
        *out = LOG_FMT_TEXT;
        return 0;
    }
    if (!strcmp(s, "json")) {
        *out = LOG_FMT_JSON;
        return 0;
    }
    return -EINVAL;
}

bool log_v_enabled(const struct logger *lg, int v)
{
    return lg && lg->out && v <= lg->verbosity;
}

const char *log_fmt_int(char *buf, long long v)
{
    snprintf(buf, 24, "%lld", v);
    return buf;
}

const char *log_fmt_uint(char *buf, unsigned long long v)
{
    snprintf(buf, 24, "%llu", v);
    return buf;
}

const char *log_fmt_double(char *buf, double v)
{
    snprintf(buf, 32, "%g", v);
    return buf;
}

static const char *const level_names[] = {"error", "warn", "info", "debug"};

static void put_escaped(struct buf *b, const char *s, bool json)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            buf_puts(b, "\\\"");
            break;
        case '\\':
            buf_puts(b, "\\\\");
            break;
        case '\n':
            buf_puts(b, "\\n");
            break;
        case '\r':
            buf_puts(b, "\\r");
            break;
        case '\t':
            buf_puts(b, "\\t");
            break;
        default:
            if (*p < 0x20)
                buf_printf(b, json ? "\\u%04x" : "\\x%02x", *p);
            else
                buf_append(b, p, 1);
        }
    }
}

/* logfmt values need quotes when empty or when they contain space, quote or '='. */
static bool needs_quotes(const char *s)
{
    if (!*s)
        return true;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\')
            return true;
    return false;
}

static void put_field(struct buf *b, const char *k, const char *v, bool json, bool first)
{
    if (json) {
        buf_puts(b, first ? "{\"" : ",\"");
        put_escaped(b, k, true);
        buf_puts(b, "\":\"");
        put_escaped(b, v, true);
        buf_puts(b, "\"");
        return;
    }
    if (!first)
        buf_puts(b, " ");
    buf_puts(b, k);
    buf_puts(b, "=");
    if (needs_quotes(v)) {
        buf_puts(b, "\"");
        put_escaped(b, v, false);
        buf_puts(b, "\"");
    } else {
        buf_puts(b, v);
    }
}

void log_emit(const struct logger *lg, enum log_level lvl, const char *msg, ...)
{
    if (!lg || !lg->out)
        return;
    bool json = lg->format == LOG_FMT_JSON;
    struct buf b;
    buf_init(&b, 64 * 1024);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char tbuf[96];
    snprintf(tbuf, sizeof tbuf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);

    put_field(&b, "ts", tbuf, json, true);
    put_field(&b, "level", level_names[lvl <= LOG_LVL_DEBUG ? lvl : LOG_LVL_DEBUG], json, false);
    if (lg->component)
        put_field(&b, "component", lg->component, json, false);
    put_field(&b, "msg", msg ? msg : "", json, false);

    va_list ap;
    va_start(ap, msg);
    for (;;) {
        const char *k = va_arg(ap, const char *);
        if (!k)
            break;
        const char *v = va_arg(ap, const char *);
        put_field(&b, k, v ? v : "", json, false);
    }
    va_end(ap);
    buf_puts(&b, json ? "}\n" : "\n");
    /* One write per line so concurrent writers never interleave within a line. */
    fwrite(buf_str(&b), 1, b.len, lg->out);
    fflush(lg->out);
    buf_free(&b);
}
