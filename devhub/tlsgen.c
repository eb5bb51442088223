#include "devhub/tlsgen.h"

#include <errno.h>
#include <fcntl.h>
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
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "pkg/kube/kfile.h"
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

/* ---- persistence ------------------------------------------------------------ */

#define TLS_FILE_MAX (64 * 1024)

struct tls_file {
    const char *name;
    size_t off; /* of the string in struct tls_bundle */
    mode_t mode;
    bool secret;
};

static const struct tls_file tls_files[] = {
    {"ca.crt", offsetof(struct tls_bundle, ca_cert), 0644, false},
    {"server.crt", offsetof(struct tls_bundle, server_cert), 0644, false},
    {"server.key", offsetof(struct tls_bundle, server_key), 0600, true},
    {"client.crt", offsetof(struct tls_bundle, client_cert), 0644, false},
    {"client.key", offsetof(struct tls_bundle, client_key), 0600, true},
};
#define N_TLS_FILES (sizeof tls_files / sizeof *tls_files)

static char **field(struct tls_bundle *b, const struct tls_file *f)
{
    return (char **)((char *)b + f->off);
}

static int write_one(const char *path, const char *data, mode_t mode, struct err *e)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return err_set(e, -errno, "cannot write %s: %s", path, strerror(errno));
    size_t n = strlen(data), off = 0;
    int ret = 0;
    while (off < n) {
        ssize_t w = write(fd, data + off, n - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            ret = err_set(e, -errno, "cannot write %s: %s", path, strerror(errno));
            break;
        }
        off += (size_t)w;
    }
    if (!ret && fsync(fd))
        ret = err_set(e, -errno, "cannot write %s: %s", path, strerror(errno));
    if (close(fd) && !ret)
        ret = err_set(e, -errno, "cannot write %s: %s", path, strerror(errno));
    return ret;
}

static void remove_tmp(const char *tmp)
{
    for (size_t i = 0; i < N_TLS_FILES; i++) {
        char *p = xasprintf("%s/%s", tmp, tls_files[i].name);
        unlink(p);
        free(p);
    }
    rmdir(tmp);
}

static int save(struct tls_bundle *b, const char *dir, struct err *e)
{
    char *tmp = xasprintf("%s.tmp.%d", dir, (int)getpid());
    remove_tmp(tmp); /* a leftover of an earlier crash with the same pid */
    int ret = 0;
    if (mkdir(tmp, 0700)) {
        ret = err_set(e, -errno, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    for (size_t i = 0; i < N_TLS_FILES && !ret; i++) {
        char *p = xasprintf("%s/%s", tmp, tls_files[i].name);
        ret = write_one(p, *field(b, &tls_files[i]), tls_files[i].mode, e);
        free(p);
    }
    if (!ret && rename(tmp, dir))
        ret = err_set(e, -errno, "cannot rename %s to %s: %s", tmp, dir, strerror(errno));
    if (ret)
        remove_tmp(tmp);
out:
    free(tmp);
    return ret;
}

static X509 *pem_cert(const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    X509 *x = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    return x;
}

static EVP_PKEY *pem_key(const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *k = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    return k;
}

/* The leaf is signed by ca, matches its key and is within its validity. */
static int check_leaf(const char *dir, const char *what, X509 *ca, const char *cert_pem_s,
                      const char *key_pem_s, struct err *e)
{
    X509 *x = pem_cert(cert_pem_s);
    EVP_PKEY *k = pem_key(key_pem_s);
    EVP_PKEY *capub = X509_get0_pubkey(ca);
    int ret = 0;
    if (!x || !k)
        ret = err_set(e, -EINVAL, "%s/%s.crt or %s.key: not a PEM certificate / private key", dir,
                      what, what);
    else if (!capub || X509_verify(x, capub) != 1)
        ret = err_set(e, -EINVAL, "%s/%s.crt is not signed by %s/ca.crt", dir, what, dir);
    else if (X509_check_private_key(x, k) != 1)
        ret = err_set(e, -EINVAL, "%s/%s.key does not match %s/%s.crt", dir, what, dir, what);
    else if (X509_cmp_current_time(X509_get0_notAfter(x)) <= 0)
        ret = err_set(e, -EINVAL, "%s/%s.crt has expired", dir, what);
    X509_free(x);
    EVP_PKEY_free(k);
    return ret;
}

static int load(struct tls_bundle *b, const char *dir, struct err *e)
{
    int ret = 0;
    for (size_t i = 0; i < N_TLS_FILES && !ret; i++) {
        char *p = xasprintf("%s/%s", dir, tls_files[i].name);
        size_t len;
        ret = kfile_read(p, TLS_FILE_MAX, field(b, &tls_files[i]), &len, e);
        free(p);
    }
    if (ret)
        return ret;
    X509 *ca = pem_cert(b->ca_cert);
    if (!ca)
        return err_set(e, -EINVAL, "%s/ca.crt: not a PEM certificate", dir);
    ret = check_leaf(dir, "server", ca, b->server_cert, b->server_key, e);
    if (!ret)
        ret = check_leaf(dir, "client", ca, b->client_cert, b->client_key, e);
    X509_free(ca);
    return ret;
}

int tlsgen_persist(struct tls_bundle *b, const char *dir, const char *name, int days, bool *created,
                   struct err *e)
{
    memset(b, 0, sizeof(*b));
    if (created)
        *created = false;
    struct stat st;
    if (stat(dir, &st) == 0) {
        int ret = load(b, dir, e);
        if (ret) {
            err_prefix(e,
                       "TLS material in %s (remove the directory to make a new CA; "
                       "kubeconfigs written before then stop working)",
                       dir);
            tlsgen_free(b);
        }
        return ret;
    }
    if (errno != ENOENT)
        return err_set(e, -errno, "cannot read %s: %s", dir, strerror(errno));
    int ret = tlsgen_bundle(b, name, days, e);
    if (!ret)
        ret = save(b, dir, e);
    if (ret)
        tlsgen_free(b);
    else if (created)
        *created = true;
    return ret;
}
