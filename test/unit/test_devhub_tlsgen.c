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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devhub/tlsgen.h"
#include "pkg/util/xalloc.h"

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

static char *tmpdir_new(void)
{
    char tmpl[] = "/tmp/kks-tlsgen-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return xstrdup(d);
}

static void rm_rf(const char *dir)
{
    const char *names[] = {"ca.crt", "server.crt", "server.key", "client.crt", "client.key"};
    char *tls = xasprintf("%s/tls", dir);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *p = xasprintf("%s/%s", tls, names[i]);
        unlink(p);
        free(p);
    }
    rmdir(tls);
    free(tls);
    rmdir(dir);
}

static mode_t mode_of(const char *dir, const char *name)
{
    char *p = xasprintf("%s/%s", dir, name);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    free(p);
    return st.st_mode & 07777;
}

/* The material survives a restart: the same CA and client certificate, so a
 * kubeconfig written before keeps working (each start used to make a new CA). */
static void test_persist(void **state)
{
    (void)state;
    char *root = tmpdir_new();
    char *dir = xasprintf("%s/tls", root);
    struct tls_bundle a, b;
    struct err e = {0};
    bool created = false;
    assert_int_equal(tlsgen_persist(&a, dir, "unit", 1, &created, &e), 0);
    assert_true(created);
    assert_int_equal(mode_of(dir, ""), 0700);
    assert_int_equal(mode_of(dir, "server.key"), 0600);
    assert_int_equal(mode_of(dir, "client.key"), 0600);
    assert_int_equal(mode_of(dir, "ca.crt") & 0077, 0044);
    assert_int_equal(tlsgen_persist(&b, dir, "unit", 1, &created, &e), 0);
    assert_false(created);
    assert_string_equal(a.ca_cert, b.ca_cert);
    assert_string_equal(a.client_cert, b.client_cert);
    assert_string_equal(a.client_key, b.client_key);
    assert_string_equal(a.server_cert, b.server_cert);
    X509 *ca = load(b.ca_cert), *cli = load(a.client_cert);
    assert_int_equal(verify(ca, cli, X509_PURPOSE_SSL_CLIENT), 1);
    X509_free(ca);
    X509_free(cli);
    tlsgen_free(&b);
    /* A key that belongs to another bundle: refused, never replaced silently. */
    struct tls_bundle other;
    assert_int_equal(tlsgen_bundle(&other, "other", 1, &e), 0);
    char *kp = xasprintf("%s/client.key", dir);
    FILE *f = fopen(kp, "w");
    assert_non_null(f);
    fputs(other.client_key, f);
    fclose(f);
    assert_int_equal(tlsgen_persist(&b, dir, "unit", 1, &created, &e), -EINVAL);
    assert_non_null(strstr(e.msg, "client.key does not match"));
    assert_non_null(strstr(e.msg, "remove the directory"));
    assert_null(b.ca_cert);
    /* A missing file: named. */
    unlink(kp);
    assert_true(tlsgen_persist(&b, dir, "unit", 1, &created, &e) < 0);
    assert_non_null(strstr(e.msg, "client.key"));
    free(kp);
    tlsgen_free(&other);
    tlsgen_free(&a);
    rm_rf(root);
    free(dir);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bundle),
        cmocka_unit_test(test_persist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
