/*
 * sfmt: formatting of the strings the operator builds most (object keys "ns/name", API
 * paths, tokens) without printf's machinery: a format whose only conversions are %s and %%
 * is copied piece by piece. glibc's vsnprintf costs about a thousand instructions for such
 * a string, 4 % of a dispatch's (docs/performance.md "Operator CPU per dispatch").
 */
#ifndef KKS_UTIL_SFMT_H
#define KKS_UTIL_SFMT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Whether fmt's only conversions are %s and %% (no flags, width or precision). */
bool sfmt_plain(const char *fmt);

/*
 * vsnprintf(out, cap, fmt, ap) for a format sfmt_plain() accepts (the caller checks it):
 * the same bytes, NUL-terminated within cap (out may be NULL when cap is 0), a NULL string
 * argument written "(null)" as glibc does, and the full length returned. `ap` is consumed.
 */
size_t sfmt_vs(char *out, size_t cap, const char *fmt, va_list ap);

#endif
