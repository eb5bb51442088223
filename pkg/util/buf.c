#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/sfmt.h"

void buf_init(struct buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void buf_free(struct buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static int buf_grow(struct buf *b, size_t extra)
{
    if (extra > b->max || b->len > b->max - extra)
        return -E2BIG;
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap < need)
        ncap *= 2;
    if (b->max < SIZE_MAX && ncap > b->max + 1) /* SIZE_MAX: no cap (max + 1 would wrap) */
        ncap = b->max + 1;
    b->data = xrealloc(b->data, ncap);
    b->cap = ncap;
    return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
    int rc = buf_grow(b, n);
    if (rc < 0)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int buf_puts(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    bool plain = sfmt_plain(fmt); /* %s only: without printf's machinery */
    va_start(ap, fmt);
    size_t m = plain ? sfmt_vs(NULL, 0, fmt, ap) : 0;
    int n = !plain ? vsnprintf(NULL, 0, fmt, ap) : m > INT_MAX ? -1 : (int)m; /* as vsnprintf */
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    int rc = buf_grow(b, (size_t)n);
    if (rc < 0)
        return rc;
    va_start(ap, fmt);
    if (plain)
        sfmt_vs(b->data + b->len, (size_t)n + 1, fmt, ap);
    else
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void buf_consume(struct buf *b, size_t n)
{
    if (n >= b->len) {
        buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

char *buf_detach(struct buf *b)
{
    char *p = b->data ? b->data : xstrdup("");
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

const char *buf_str(const struct buf *b)
{
    return b->data ? b->data : "";
}
