#include "pkg/util/xalloc.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pkg/util/sfmt.h"

static void xalloc_die(size_t n)
{
    /* No logger here on purpose: logging may itself need memory. */
    char msg[96];
    int len = snprintf(msg, sizeof msg, "fatal: out of memory (allocating %zu bytes)\n", n);
    if (len > 0) {
        ssize_t w = write(2, msg, (size_t)len);
        (void)w;
    }
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        xalloc_die(n);
    return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (!p)
        xalloc_die(nmemb * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        xalloc_die(n);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s);
    char *p = xmalloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    /* One formatting pass for the common short string (keys, paths, tokens): into a
     * stack buffer first, a second pass only when it did not fit; a format of %s alone
     * without printf (sfmt.h). */
    char tmp[256];
    va_list ap, ap2;
    bool plain = sfmt_plain(fmt);
    va_start(ap, fmt);
    va_copy(ap2, ap);
    size_t m = plain ? sfmt_vs(tmp, sizeof tmp, fmt, ap) : 0;
    int n = !plain ? vsnprintf(tmp, sizeof tmp, fmt, ap) : m > INT_MAX ? -1 : (int)m;
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return xstrdup("");
    }
    char *p = xmalloc((size_t)n + 1);
    if ((size_t)n < sizeof tmp)
        memcpy(p, tmp, (size_t)n + 1);
    else if (plain)
        sfmt_vs(p, (size_t)n + 1, fmt, ap2);
    else
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    /* the text may be a secret (a bearer token's header): none left on the stack */
    explicit_bzero(tmp, (size_t)n < sizeof tmp ? (size_t)n + 1 : sizeof tmp);
    return p;
}
