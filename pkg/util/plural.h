/*
 * plural: count agreement in user-visible messages ("1 pod", "2 pods", never "1 pods").
 *
 *   xasprintf("%zu pod%s", n, plural_s(n));
 *   xasprintf("%zu %s", n, plural_of(n, "copy", "copies"));
 */
#ifndef KKS_PKG_UTIL_PLURAL_H
#define KKS_PKG_UTIL_PLURAL_H

/* "" when n is 1 (or -1), else "s". */
const char *plural_s(long long n);
/* `one` when n is 1 (or -1), else `many` (both borrowed, returned as given). */
const char *plural_of(long long n, const char *one, const char *many);

#endif
