/*
 * Fuzz target for pkg/kube/tlscreds (a kubeconfig's client certificate and key). The input is
 * the certificate's PEM, a NUL, then the key's (no NUL: all certificate, no key). Properties:
 * no crash or leak on any input; a pair that is read applies to an SSL_CTX; an error always
 * says which of the two was wrong.
 */
#include <openssl/ssl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/kube/tlscreds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *cert = (const char *)data;
    const char *nul = memchr(data, 0, size);
    size_t cert_len = nul ? (size_t)(nul - cert) : size;
    const char *key = nul ? nul + 1 : "";
    size_t key_len = nul ? size - cert_len - 1 : 0;
    struct tlscreds *t = NULL;
    struct err e = {0};
    int rc = tlscreds_new(cert, cert_len, key, key_len, &t, &e);
    if (rc < 0) {
        if (t || (!strstr(e.msg, "client certificate") && !strstr(e.msg, "client key")))
            abort();
        return 0;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx || tlscreds_apply(t, ctx, &e) != 0)
        abort();
    SSL_CTX_free(ctx);
    tlscreds_free(t);
    return 0;
}
