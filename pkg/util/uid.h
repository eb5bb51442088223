/*
 * uid: a Kubernetes uid in its canonical text form (36 characters, lowercase hex digits in
 * groups of 8-4-4-4-12) as 16 bytes, and back. For the compact forms that keep uids as bytes
 * (pkg/json/jpack, the agent's pod records): only the canonical form converts, so the text
 * comes back exactly; any other text (uppercase, a cut uid) is not a uid here.
 */
#ifndef KKS_UTIL_UID_H
#define KKS_UTIL_UID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UID_TEXT_LEN 36

/* s[0..n) as 16 bytes into out: true, or false (out unspecified) when it is not canonical. */
bool uid_to_bytes(const char *s, size_t n, uint8_t out[16]);
/* The canonical text of 16 bytes into out (UID_TEXT_LEN characters, no NUL). */
void uid_from_bytes(const uint8_t in[16], char out[UID_TEXT_LEN]);

#endif
