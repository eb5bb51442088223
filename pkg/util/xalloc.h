/*
 * xalloc: allocation wrappers. Out of memory is not recoverable in an
 * operator (Kubernetes restarts the pod), so these log and abort instead of
 * returning NULL; callers never check for NULL.
 */
#ifndef KKS_UTIL_XALLOC_H
#define KKS_UTIL_XALLOC_H

#include <stddef.h>

/* Each returns memory owned by the caller (free with free()). Never NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a new string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Free *pp and set it to NULL. */
#define FREE_AND_NULL(p)                                                                           \
    do {                                                                                           \
        free(p);                                                                                   \
        (p) = NULL;                                                                                \
    } while (0)

#endif
