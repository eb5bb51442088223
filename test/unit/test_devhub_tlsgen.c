/* Unit tests for devhub/tlsgen: the generated chain verifies and carries the right names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <string.h>

#include "devhub/tlsgen.h"

static X509 *load(const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
    BIO_free(b);
    return x;
}

static int verify(X509 *ca, X509 *leaf, int purpose)
{
    X509_STORE *st = X509_STORE_new();
    X509_STORE_add_cert(st, ca);
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, st, leaf, NULL);
    X509_STORE_CTX_set_purpose(ctx, purpose);
    int ok = X509_verify_cert(ctx);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(st);
    return ok;
}

static void test_bundle(void **state)
{
    (void)state;
    struct tls_bundle b;
    struct err e = {0};
    assert_int_equal(tlsgen_bundle(&b, "unit", 1, &e), 0);
    assert_non_null(strstr(b.server_key, "BEGIN PRIVATE KEY"));
    assert_non_null(strstr(b.client_key, "BEGIN PRIVATE KEY"));
    X509 *ca = load(b.ca_cert), *srv = load(b.server_cert), *cli = load(b.client_cert);
    assert_non_null(ca);
    assert_non_null(srv);
    assert_non_null(cli);
    assert_int_equal(verify(ca, srv, X509_PURPOSE_SSL_SERVER), 1);
    assert_int_equal(verify(ca, cli, X509_PURPOSE_SSL_CLIENT), 1);
    /* The serving cert is for 127.0.0.1 and localhost, not for other hosts. */
    assert_int_equal(X509_check_ip_asc(srv, "127.0.0.1", 0), 1);
    assert_int_equal(X509_check_host(srv, "localhost", 0, 0, NULL), 1);
    assert_int_equal(X509_check_host(srv, "example.com", 0, 0, NULL), 0);
    /* The client cert is admin in system:masters and not a server cert. */
    char cn[64];
    X509_NAME_get_text_by_NID(X509_get_subject_name(cli), NID_commonName, cn, sizeof(cn));
    assert_string_equal(cn, "admin");
    X509_NAME_get_text_by_NID(X509_get_subject_name(cli), NID_organizationName, cn, sizeof(cn));
    assert_string_equal(cn, "system:masters");
    assert_int_not_equal(verify(ca, cli, X509_PURPOSE_SSL_SERVER), 1);
    /* A second bundle has a different CA: certificates do not cross-verify. */
    struct tls_bundle b2;
    assert_int_equal(tlsgen_bundle(&b2, "other", 1, &e), 0);
    X509 *ca2 = load(b2.ca_cert);
    assert_int_not_equal(verify(ca2, cli, X509_PURPOSE_SSL_CLIENT), 1);
    X509_free(ca);
    X509_free(ca2);
    X509_free(srv);
    X509_free(cli);
    tlsgen_free(&b);
    tlsgen_free(&b2);
    assert_null(b.ca_cert);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bundle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
