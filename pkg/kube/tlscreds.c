#include "pkg/kube/tlscreds.h"

#include <errno.h>
#include <limits.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>

#include "pkg/util/xalloc.h"

struct tlscreds {
    X509 *cert;
    STACK_OF(X509) * chain; /* the certificates after the first, or NULL */
    EVP_PKEY *key;
};

/* OpenSSL's reason for the last failure ("no reason" when it left none), its queue cleared:
 * what a connection's own errors are read from next. */
static const char *ossl_reason(char *buf, size_t n)
{
    unsigned long code = ERR_peek_last_error();
    if (code)
        ERR_error_string_n(code, buf, n);
    else
        snprintf(buf, n, "no reason given");
    ERR_clear_error();
    return buf;
}

/* Never prompt for a passphrase (OpenSSL's default asks the terminal): an encrypted key fails. */
static int no_passphrase(char *buf, int size, int rwflag, void *ud)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)ud;
    return -1;
}

static BIO *mem_bio(const char *p, size_t n)
{
    return n <= INT_MAX ? BIO_new_mem_buf(p, (int)n) : NULL;
}

void tlscreds_free(struct tlscreds *t)
{
    if (!t)
        return;
    X509_free(t->cert);
    sk_X509_pop_free(t->chain, X509_free);
    EVP_PKEY_free(t->key);
    free(t);
}

static int read_cert(struct tlscreds *t, const char *pem, size_t n, struct err *e)
{
    char why[256];
    BIO *b = mem_bio(pem, n);
    if (!b)
        return err_set(e, -EINVAL, "client certificate: too large (%zu bytes)", n);
    t->cert = PEM_read_bio_X509_AUX(b, NULL, no_passphrase, NULL);
    if (!t->cert) {
        BIO_free(b);
        return err_set(e, -EINVAL, "client certificate: no PEM certificate (%s)",
                       ossl_reason(why, sizeof why));
    }
    X509 *x;
    while ((x = PEM_read_bio_X509(b, NULL, no_passphrase, NULL)) != NULL) {
        if (!t->chain)
            t->chain = sk_X509_new_null();
        if (!t->chain || !sk_X509_push(t->chain, x)) {
            X509_free(x);
            BIO_free(b);
            return err_set(e, -ENOMEM, "client certificate chain: out of memory");
        }
    }
    BIO_free(b);
    /* No further PEM block is how the loop ends; a block that does not read is an error, as
     * for libcurl's own reading, not a chain cut short without a word. */
    unsigned long code = ERR_peek_last_error();
    if (code && !(ERR_GET_LIB(code) == ERR_LIB_PEM && ERR_GET_REASON(code) == PEM_R_NO_START_LINE))
        return err_set(e, -EINVAL, "client certificate chain: certificate %d does not read (%s)",
                       (int)tlscreds_chain_len(t) + 2, ossl_reason(why, sizeof why));
    ERR_clear_error();
    return 0;
}

int tlscreds_new(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
                 struct tlscreds **out, struct err *e)
{
    *out = NULL;
    char why[256];
    if (!cert_pem || !cert_len)
        return err_set(e, -EINVAL, "client certificate: empty");
    if (!key_pem || !key_len)
        return err_set(e, -EINVAL, "client key: empty");
    ERR_clear_error();
    struct tlscreds *t = xcalloc(1, sizeof *t);
    int rc = read_cert(t, cert_pem, cert_len, e);
    if (rc < 0) {
        tlscreds_free(t);
        return rc;
    }
    BIO *b = mem_bio(key_pem, key_len);
    if (!b) {
        tlscreds_free(t);
        return err_set(e, -EINVAL, "client key: too large (%zu bytes)", key_len);
    }
    t->key = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
    BIO_free(b);
    if (!t->key) {
        tlscreds_free(t);
        return err_set(e, -EINVAL, "client key: not an unencrypted PEM private key (%s)",
                       ossl_reason(why, sizeof why));
    }
    if (X509_check_private_key(t->cert, t->key) != 1) {
        tlscreds_free(t);
        return err_set(e, -EINVAL, "client key: does not match the client certificate (%s)",
                       ossl_reason(why, sizeof why));
    }
    /* What a connection's SSL_CTX would refuse (a key below OpenSSL's security level) is
     * refused here, once, rather than at every connection. */
    SSL_CTX *probe = SSL_CTX_new(TLS_client_method());
    rc = probe ? tlscreds_apply(t, probe, e)
               : err_set(e, -ENOMEM, "client certificate: no TLS context (%s)",
                         ossl_reason(why, sizeof why));
    SSL_CTX_free(probe);
    if (rc < 0) {
        tlscreds_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int tlscreds_apply(const struct tlscreds *t, void *ssl_ctx, struct err *e)
{
    char why[256];
    SSL_CTX *ctx = ssl_ctx;
    if (SSL_CTX_use_certificate(ctx, t->cert) != 1)
        return err_set(e, -EINVAL, "client certificate: not accepted (%s)",
                       ossl_reason(why, sizeof why));
    for (int i = 0; t->chain && i < sk_X509_num(t->chain); i++)
        if (SSL_CTX_add1_chain_cert(ctx, sk_X509_value(t->chain, i)) != 1)
            return err_set(e, -EINVAL, "client certificate chain: certificate %d not accepted (%s)",
                           i + 2, ossl_reason(why, sizeof why));
    if (SSL_CTX_use_PrivateKey(ctx, t->key) != 1)
        return err_set(e, -EINVAL, "client key: not accepted (%s)", ossl_reason(why, sizeof why));
    return 0;
}

size_t tlscreds_chain_len(const struct tlscreds *t)
{
    return t && t->chain ? (size_t)sk_X509_num(t->chain) : 0;
}
