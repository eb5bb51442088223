#include "pkg/util/err.h"

#include <stdio.h>
#include <string.h>

void err_clear(struct err *e)
{
    if (!e)
        return;
    e->code = 0;
    e->http_status = 0;
    e->reason[0] = '\0';
    e->msg[0] = '\0';
}

int err_vset(struct err *e, int code, const char *fmt, va_list ap)
{
    if (!e)
        return code;
    e->code = code;
    e->http_status = 0;
    e->reason[0] = '\0';
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    return code;
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, code, fmt, ap);
    va_end(ap);
    return code;
}

/* Copy at most n bytes of s to dst, ending in "..." when s is longer. Returns the length written.
 */
static size_t put_cut(char *dst, const char *s, size_t n)
{
    size_t l = strlen(s);
    if (l <= n) {
        memcpy(dst, s, l);
        return l;
    }
    if (n < 3) {
        memcpy(dst, s, n);
        return n;
    }
    memcpy(dst, s, n - 3);
    memcpy(dst + n - 3, "...", 3);
    return n;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
    if (!e)
        return 0;
    char pre[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    char old[ERR_MSG_MAX];
    memcpy(old, e->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    size_t cap = sizeof e->msg - 1, lp = strlen(pre), lo = strlen(old);
    if (lp + 2 + lo <= cap) {
        memcpy(e->msg, pre, lp);
        memcpy(e->msg + lp, ": ", 2);
        memcpy(e->msg + lp + 2, old, lo + 1);
        return e->code;
    }
    /* Too long: the root cause (the old message, which ends with what the
     * server said) is kept; the context is shortened first. The prefix
     * keeps at least ERR_PREFIX_MIN bytes; when even that does not fit, the
     * middle of the old message goes, never its end. */
    size_t want_pre = lp < ERR_PREFIX_MIN ? lp : ERR_PREFIX_MIN;
    size_t room = cap - 2 > lo ? cap - 2 - lo : 0;
    size_t np = room > want_pre ? room : want_pre;
    size_t off = put_cut(e->msg, pre, np);
    memcpy(e->msg + off, ": ", 2);
    off += 2;
    size_t left = cap - off;
    if (lo <= left) {
        memcpy(e->msg + off, old, lo);
        off += lo;
    } else {
        size_t head = left / 3, tail = left - head - 3;
        memcpy(e->msg + off, old, head);
        memcpy(e->msg + off + head, "...", 3);
        memcpy(e->msg + off + head + 3, old + lo - tail, tail);
        off += left;
    }
    e->msg[off] = '\0';
    return e->code;
}
