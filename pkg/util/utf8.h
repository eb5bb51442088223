/*
 * utf8: strict UTF-8 decoding, as jansson checks it (no overlong forms, no
 * surrogates, at most U+10FFFF), for the JSON reader and writer (pkg/json).
 */
#ifndef KKS_UTIL_UTF8_H
#define KKS_UTIL_UTF8_H

#include <stddef.h>

/* Length (1-4) of the valid UTF-8 sequence at p, which ends before `end` (p < end);
 * 0 when the bytes there are not one. */
size_t utf8_len(const unsigned char *p, const unsigned char *end);

#endif
