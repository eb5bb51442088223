#include "pkg/util/err.h"

#include <stdbool.h>
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

/* A byte that continues a UTF-8 sequence: a cut before it splits a character. */
static bool cont(char c)
{
    return ((unsigned char)c & 0xC0) == 0x80;
}

/* The largest m <= n at which s can be cut without splitting a UTF-8 character
 * (s has at least n bytes; s[n] is read when it is not the end). A split one
 * makes the message invalid UTF-8, and JSON built from it (an Event) is refused. */
static size_t floor_cut(const char *s, size_t n)
{
    size_t m = n;
    while (m > 0 && n - m < 3 && cont(s[m]))
        m--;
    return cont(s[m]) ? n : m; /* not UTF-8 there: cut where asked */
}

int err_vset(struct err *e, int code, const char *fmt, va_list ap)
{
    if (!e)
        return code;
    e->code = code;
    e->http_status = 0;
    e->reason[0] = '\0';
    int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    if (n >= (int)sizeof e->msg) {
        /* cut: vsnprintf may have split the last character; s[len] is the
         * cut's first byte, which vsnprintf replaced by the terminator */
        size_t l = sizeof e->msg - 1;
        while (l > 0 && sizeof e->msg - 1 - l < 3 && cont(e->msg[l - 1]))
            l--;
        if (l > 0 && ((unsigned char)e->msg[l - 1] & 0xC0) == 0xC0) {
            /* l-1 starts a sequence: complete only when its length fits */
            unsigned char lead = (unsigned char)e->msg[l - 1];
            size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
            size_t have = sizeof e->msg - 1 - (l - 1);
            if (have < need)
                e->msg[l - 1] = '\0';
        }
    }
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
        size_t m = floor_cut(s, n);
        memcpy(dst, s, m);
        return m;
    }
    size_t m = floor_cut(s, n - 3);
    memcpy(dst, s, m);
    memcpy(dst + m, "...", 3);
    return m + 3;
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
        size_t head = floor_cut(old, left / 3), tail = left - left / 3 - 3;
        while (tail > 0 && cont(old[lo - tail]))
            tail--; /* the end starts on a character */
        memcpy(e->msg + off, old, head);
        memcpy(e->msg + off + head, "...", 3);
        memcpy(e->msg + off + head + 3, old + lo - tail, tail);
        off += head + 3 + tail;
    }
    e->msg[off] = '\0';
    return e->code;
}
