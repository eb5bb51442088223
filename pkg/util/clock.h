/*
 * clock: time helpers. Deadlines, backoff and lease observation use the
 * monotonic clock; wall-clock time is only for timestamps written to the API.
 */
#ifndef KKS_UTIL_CLOCK_H
#define KKS_UTIL_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Monotonic time in nanoseconds / seconds. */
uint64_t clock_mono_ns(void);
double clock_mono_s(void);

/* Format a wall-clock time as RFC 3339 UTC: "2026-11-22T14:33:56Z", or with
 * micro=1 the MicroTime form "2026-11-22T14:33:56.123456Z". Returns buf. */
char *clock_rfc3339(char *buf, size_t n, const struct timespec *ts, int micro);
/* Now, formatted as above. */
char *clock_now_rfc3339(char *buf, size_t n, int micro);
/* Parse RFC 3339 ("Z" or "+hh:mm" offsets, optional fraction). 0 or -EINVAL. */
int clock_parse_rfc3339(const char *s, struct timespec *out);

#endif
