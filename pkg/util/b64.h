/*
 * b64: standard base64 (RFC 4648 §4, with padding) over OpenSSL's EVP
 * encoder, the one implementation for kubeconfig data fields, Secret data,
 * exec-credential cluster info, and the devhub's continue tokens and bytes.
 */
#ifndef KKS_PKG_UTIL_B64_H
#define KKS_PKG_UTIL_B64_H

#include <stddef.h>

/* The encoding of p[0..n), a new NUL-terminated string. */
char *b64_encode(const void *p, size_t n);

/*
 * Decode in[0..n): whitespace between groups is allowed, padding is required.
 * On success 0, *out a new buffer of *out_len bytes plus a terminating NUL.
 * -EINVAL for input that is not base64, -E2BIG above 1 GiB, -ENOMEM when OpenSSL
 * cannot allocate its context; *out is then NULL
 * and the scratch buffer was wiped (the input may be a secret).
 */
int b64_decode(const char *in, size_t n, char **out, size_t *out_len);

#endif
