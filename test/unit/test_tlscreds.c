/* tlscreds: a client certificate, its chain and key read once; bad input is an error. */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pkg/kube/tlscreds.h"
#include "pkg/util/xalloc.h"
#include "test/support/fakesrv.h"

struct fx {
    struct fakesrv *srv;
    const char *cert, *key, *ca;
};

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof *f);
    struct fakesrv_opts so = {.tls = true, .client_certs = true};
    f->srv = fakesrv_start(&so);
    f->cert = fakesrv_client_cert_pem(f->srv);
    f->key = fakesrv_client_key_pem(f->srv);
    f->ca = fakesrv_ca_pem(f->srv);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    fakesrv_stop(f->srv);
    free(f);
    return 0;
}

/* The PEM of a new key that no certificate here belongs to; encrypted with `pass` if given. */
static char *other_key_pem(const char *pass)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    assert_non_null(k);
    BIO *b = BIO_new(BIO_s_mem());
    const EVP_CIPHER *c = pass ? EVP_aes_128_cbc() : NULL;
    assert_int_equal(PEM_write_bio_PrivateKey(b, k, c, (unsigned char *)pass,
                                              pass ? (int)strlen(pass) : 0, NULL, NULL),
                     1);
    char *p = NULL;
    long n = BIO_get_mem_data(b, &p);
    char *out = xstrndup(p, (size_t)n);
    BIO_free(b);
    EVP_PKEY_free(k);
    return out;
}

static void test_reads_and_applies(void **state)
{
    struct fx *f = *state;
    struct tlscreds *t = NULL;
    struct err e = {0};
    assert_int_equal(tlscreds_new(f->cert, strlen(f->cert), f->key, strlen(f->key), &t, &e), 0);
    assert_non_null(t);
    assert_int_equal(tlscreds_chain_len(t), 0);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_int_equal(tlscreds_apply(t, ctx, &e), 0);
    X509 *x = SSL_CTX_get0_certificate(ctx);
    assert_non_null(x);
    char cn[64] = "";
    X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof cn);
    assert_string_equal(cn, "fakesrv-client");
    assert_int_equal(SSL_CTX_check_private_key(ctx), 1);
    SSL_CTX_free(ctx);
    tlscreds_free(t);
}

/* Certificates after the first are its chain, sent with it. */
static void test_chain(void **state)
{
    struct fx *f = *state;
    char *both = xasprintf("%s%s", f->cert, f->ca);
    struct tlscreds *t = NULL;
    struct err e = {0};
    assert_int_equal(tlscreds_new(both, strlen(both), f->key, strlen(f->key), &t, &e), 0);
    assert_int_equal(tlscreds_chain_len(t), 1);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_int_equal(tlscreds_apply(t, ctx, &e), 0);
    STACK_OF(X509) *chain = NULL;
    assert_int_equal(SSL_CTX_get0_chain_certs(ctx, &chain), 1);
    assert_int_equal(sk_X509_num(chain), 1);
    SSL_CTX_free(ctx);
    tlscreds_free(t);
    free(both);
}

/* A self-signed certificate of a 512-bit RSA key, as PEM: below OpenSSL's default security
 * level for a certificate of the chain. */
static char *weak_cert_pem(void)
{
    EVP_PKEY *k = EVP_RSA_gen(512);
    assert_non_null(k);
    X509 *x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, k);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                               (const unsigned char *)"weak", -1, -1, 0);
    X509_set_issuer_name(x, X509_get_subject_name(x));
    assert_true(X509_sign(x, k, EVP_sha256()) > 0);
    BIO *b = BIO_new(BIO_s_mem());
    assert_int_equal(PEM_write_bio_X509(b, x), 1);
    char *p = NULL;
    long n = BIO_get_mem_data(b, &p);
    char *out = xstrndup(p, (size_t)n);
    BIO_free(b);
    X509_free(x);
    EVP_PKEY_free(k);
    return out;
}

static void expect_error(const char *cert, const char *key, const char *want)
{
    struct tlscreds *t = (struct tlscreds *)1;
    struct err e = {0};
    int rc = tlscreds_new(cert, cert ? strlen(cert) : 0, key, key ? strlen(key) : 0, &t, &e);
    assert_int_equal(rc, -EINVAL);
    assert_null(t);
    if (!strstr(e.msg, want))
        fail_msg("error \"%s\" does not say \"%s\"", e.msg, want);
}

static void test_errors(void **state)
{
    struct fx *f = *state;
    expect_error(NULL, f->key, "client certificate: empty");
    expect_error(f->cert, "", "client key: empty");
    expect_error("not a certificate", f->key, "client certificate: no PEM certificate");
    expect_error("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n", f->key,
                 "client certificate: no PEM certificate");
    expect_error(f->cert, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                 "client key: not an unencrypted PEM private key");
    /* the certificate where the key should be */
    expect_error(f->cert, f->cert, "client key: not an unencrypted PEM private key");
    char *other = other_key_pem(NULL);
    expect_error(f->cert, other, "client key: does not match the client certificate");
    free(other);
    /* a chain certificate that does not read is an error, not a chain cut short */
    char *bad_chain =
        xasprintf("%s-----BEGIN CERTIFICATE-----\nMIIB!!!!\n-----END CERTIFICATE-----\n", f->cert);
    expect_error(bad_chain, f->key, "client certificate chain: certificate 2 does not read");
    free(bad_chain);
    /* a chain certificate a connection would refuse is refused once, here */
    char *weak = weak_cert_pem(), *chain = xasprintf("%s%s", f->cert, weak);
    expect_error(chain, f->key, "client certificate chain: certificate 2 not accepted");
    free(weak);
    free(chain);
    /* encrypted: refused (the read declines to ask for a passphrase) */
    char *enc = other_key_pem("secret");
    expect_error(f->cert, enc, "client key: not an unencrypted PEM private key");
    free(enc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_and_applies),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
