/*
 * buf: a growable byte buffer with a mandatory size cap (curl's dynbuf idea).
 * Used for URLs, request bodies, response bodies and watch line assembly.
 * The data is always NUL-terminated (the NUL is not counted in len).
 */
#ifndef KKS_UTIL_BUF_H
#define KKS_UTIL_BUF_H

#include <stddef.h>

struct buf {
    char *data; /* NULL until the first append */
    size_t len;
    size_t cap;
    size_t max; /* appends that would grow len beyond max fail with -E2BIG */
};

/* Initialise an empty buffer that may hold at most `max` bytes. */
void buf_init(struct buf *b, size_t max);
/* Free the storage; the buffer is empty and reusable (same max) afterwards. */
void buf_free(struct buf *b);
/* Drop the contents, keep the storage. */
void buf_reset(struct buf *b);
/* Append n bytes. 0, or -E2BIG when the cap would be exceeded (nothing appended). */
int buf_append(struct buf *b, const void *p, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Remove the first n bytes (n > len removes all). */
void buf_consume(struct buf *b, size_t n);
/* Take the data (caller frees; never NULL, "" when empty); the buffer becomes empty. */
char *buf_detach(struct buf *b);
/* The data as a string; "" when empty. Borrowed. */
const char *buf_str(const struct buf *b);

#endif
