/* b64: see b64.h. */
#include "pkg/util/b64.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>

#include "pkg/util/xalloc.h"

char *b64_encode(const void *p, size_t n)
{
    char *out = xmalloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)p, (int)n);
    return out;
}

int b64_decode(const char *in, size_t n, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (n > (size_t)1 << 30)
        return -E2BIG;
    unsigned char *buf = xmalloc(n + 16);
    EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
    if (!ctx) {
        free(buf);
        return -ENOMEM;
    }
    int len = 0, tail = 0, rc = 0;
    EVP_DecodeInit(ctx);
    if (EVP_DecodeUpdate(ctx, buf, &len, (const unsigned char *)in, (int)n) < 0 ||
        EVP_DecodeFinal(ctx, buf + len, &tail) < 0)
        rc = -EINVAL;
    EVP_ENCODE_CTX_free(ctx);
    if (rc < 0) {
        OPENSSL_cleanse(buf, n + 16);
        free(buf);
        return rc;
    }
    len += tail;
    buf[len] = '\0';
    *out = (char *)buf;
    *out_len = (size_t)len;
    return 0;
}
