/* sfmt: %s-only formatting (see sfmt.h). */
#include "pkg/util/sfmt.h"

#include <string.h>

bool sfmt_plain(const char *fmt)
{
    for (const char *p = strchr(fmt, '%'); p; p = strchr(p + 2, '%')) {
        if (p[1] != 's' && p[1] != '%')
            return false;
    }
    return true;
}

/* Append s[0..n) to out within cap (room kept for the NUL); *len counts every byte. */
static void put(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len + 1 < cap) {
        size_t room = cap - 1 - *len;
        memcpy(out + *len, s, n < room ? n : room);
    }
    *len += n;
}

size_t sfmt_vs(char *out, size_t cap, const char *fmt, va_list ap)
{
    size_t len = 0;
    const char *p = fmt;
    for (;;) {
        const char *pct = strchr(p, '%');
        if (!pct) {
            put(out, cap, &len, p, strlen(p));
            break;
        }
        put(out, cap, &len, p, (size_t)(pct - p));
        if (pct[1] == '%') {
            put(out, cap, &len, "%", 1);
        } else {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            put(out, cap, &len, s, strlen(s));
        }
        p = pct + 2;
    }
    if (cap)
        out[len < cap ? len : cap - 1] = '\0';
    return len;
}
