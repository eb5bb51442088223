#include "devhub/tlsgen.h"

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/xalloc.h"

static char *bio_string(BIO *bio)
{
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);
    char *s = xstrndup(data ? data : "", n > 0 ? (size_t)n : 0);
    return s;
}

static char *cert_pem(X509 *x)
{
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, x);
    char *s = bio_string(bio);
    BIO_free(bio);
    return s;
}

static char *key_pem(EVP_PKEY *k)
{
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, k, NULL, NULL, 0, NULL, NULL);
    char *s = bio_string(bio);
    BIO_free(bio);
    return s;
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ex)
        return -1;
    int ok = X509_add_ext(cert, ex, -1);
    X509_EXTENSION_free(ex);
    return ok ? 0 : -1;
}

/* Issue a certificate for key, signed by (issuer, ikey); self-signed if issuer is NULL. */
static X509 *issue(EVP_PKEY *key, const char *cn, const char *org, X509 *issuer, EVP_PKEY *ikey,
                   int days, int kind)
{
    X509 *x = X509_new();
    unsigned char serial[16];
    BIGNUM *bn = NULL;
    ASN1_INTEGER *ai = NULL;
    bool ok = false;
    if (!x)
        return NULL;
    X509_set_version(x, 2);
    RAND_bytes(serial, sizeof(serial));
    serial[0] &= 0x7f;
    bn = BN_bin2bn(serial, sizeof(serial), NULL);
    ai = BN_to_ASN1_INTEGER(bn, NULL);
    X509_set_serialNumber(x, ai);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    if (org)
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)org, -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509 *iss = issuer ? issuer : x;
    if (kind == 0) {
        if (add_ext(x, iss, NID_basic_constraints, "critical,CA:TRUE") ||
            add_ext(x, iss, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") ||
            add_ext(x, iss, NID_subject_key_identifier, "hash"))
            goto out;
    } else {
        if (add_ext(x, iss, NID_basic_constraints, "critical,CA:FALSE") ||
            add_ext(x, iss, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
            add_ext(x, iss, NID_ext_key_usage, kind == 1 ? "serverAuth" : "clientAuth") ||
            add_ext(x, iss, NID_authority_key_identifier, "keyid:always"))
            goto out;
        if (kind == 1 && add_ext(x, iss, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"))
            goto out;
    }
    if (!X509_sign(x, ikey ? ikey : key, EVP_sha256()))
        goto out;
    ok = true;
out:
    ASN1_INTEGER_free(ai);
    BN_free(bn);
    if (!ok) {
        X509_free(x);
        return NULL;
    }
    return x;
}

int tlsgen_bundle(struct tls_bundle *b, const char *name, int days, struct err *e)
{
    EVP_PKEY *cakey = NULL, *skey = NULL, *ckey = NULL;
    X509 *ca = NULL, *srv = NULL, *cli = NULL;
    int ret = 0;
    memset(b, 0, sizeof(*b));
    cakey = EVP_EC_gen("P-256");
    skey = EVP_EC_gen("P-256");
    ckey = EVP_EC_gen("P-256");
    if (!cakey || !skey || !ckey) {
        ret = err_set(e, -EIO, "cannot generate TLS keys: %s",
                      ERR_reason_error_string(ERR_get_error()));
        goto out;
    }
    char cn[256];
    snprintf(cn, sizeof(cn), "kueue-ks-devhub-ca-%s", name ? name : "devhub");
    ca = issue(cakey, cn, NULL, NULL, NULL, days, 0);
    srv = ca ? issue(skey, "kueue-ks-devhub", NULL, ca, cakey, days, 1) : NULL;
    cli = ca ? issue(ckey, "admin", "system:masters", ca, cakey, days, 2) : NULL;
    if (!ca || !srv || !cli) {
        ret = err_set(e, -EIO, "cannot issue TLS certificates: %s",
                      ERR_reason_error_string(ERR_get_error()));
        goto out;
    }
    b->ca_cert = cert_pem(ca);
    b->server_cert = cert_pem(srv);
    b->server_key = key_pem(skey);
    b->client_cert = cert_pem(cli);
    b->client_key = key_pem(ckey);
out:
    X509_free(ca);
    X509_free(srv);
    X509_free(cli);
    EVP_PKEY_free(cakey);
    EVP_PKEY_free(skey);
    EVP_PKEY_free(ckey);
    return ret;
}

static void free_secret(char *s)
{
    if (!s)
        return;
    OPENSSL_cleanse(s, strlen(s));
    free(s);
}

void tlsgen_free(struct tls_bundle *b)
{
    free(b->ca_cert);
    free(b->server_cert);
    free_secret(b->server_key);
    free(b->client_cert);
    free_secret(b->client_key);
    memset(b, 0, sizeof(*b));
}
