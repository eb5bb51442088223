/*
 * log: the one logger. Lines go to a FILE (stderr in the binaries) as
 * key=value text (logfmt) or JSON lines:
 *
 *   ts=2026-11-22T14:33:56.123Z level=info msg="workload placed" workload=ns/a cluster=c1
 *
 * Structured fields are passed as const char * key/value pairs; the macros
 * append the terminating NULL. Numbers go through LOG_INT()/LOG_UINT(), which
 * format into a temporary on the caller's stack. Levels are checked before
 * arguments are evaluated. Never pass secrets or tokens as values.
 *
 * The logger is a value owned by main and handed to modules by pointer; a
 * NULL logger discards everything (handy in unit tests).
 */
#ifndef KKS_UTIL_LOG_H
#define KKS_UTIL_LOG_H

#include <stdbool.h>
#include <stdio.h>

enum log_level { LOG_LVL_ERROR = 0, LOG_LVL_WARN = 1, LOG_LVL_INFO = 2, LOG_LVL_DEBUG = 3 };
enum log_format { LOG_FMT_TEXT = 0, LOG_FMT_JSON = 1 };

struct logger {
    FILE *out;     /* borrowed */
    int verbosity; /* klog-style --v: log_v(lg, n, ...) prints when n <= verbosity */
    enum log_format format;
    const char *component; /* optional "component=" field on every line, borrowed */
};

void log_init(struct logger *lg, FILE *out, int verbosity, enum log_format format);
/* "text" or "json" -> format. Returns 0 or -EINVAL. */
int log_parse_format(const char *s, enum log_format *out);
bool log_v_enabled(const struct logger *lg, int v);

/* Emit one line. Varargs: key, value, key, value, ..., NULL. A NULL value prints as "". */
void log_emit(const struct logger *lg, enum log_level lvl, const char *msg, ...);

#define log_error(lg, msg, ...) log_emit((lg), LOG_LVL_ERROR, (msg), ##__VA_ARGS__, (const char *)0)
#define log_warn(lg, msg, ...)  log_emit((lg), LOG_LVL_WARN, (msg), ##__VA_ARGS__, (const char *)0)
#define log_info(lg, msg, ...)  log_emit((lg), LOG_LVL_INFO, (msg), ##__VA_ARGS__, (const char *)0)
/* Verbose info: only when --v >= v. Arguments are not evaluated otherwise. */
#define log_v(lg, v, msg, ...)                                                                     \
    do {                                                                                           \
        if (log_v_enabled((lg), (v)))                                                              \
            log_emit((lg), (v) >= 4 ? LOG_LVL_DEBUG : LOG_LVL_INFO, (msg), ##__VA_ARGS__,          \
                     (const char *)0);                                                             \
    } while (0)

/* Format numbers for use as values (the buffer lives until the end of the full expression). */
const char *log_fmt_int(char *buf, long long v);
const char *log_fmt_uint(char *buf, unsigned long long v);
const char *log_fmt_double(char *buf, double v);
#define LOG_INT(n)  log_fmt_int((char[24]){0}, (long long)(n))
#define LOG_UINT(n) log_fmt_uint((char[24]){0}, (unsigned long long)(n))
#define LOG_DBL(d)  log_fmt_double((char[32]){0}, (double)(d))

#endif
