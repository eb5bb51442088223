/*
 * tlscreds: a client certificate (with the chain that follows it) and its private key, read
 * once and presented on every TLS connection of a client.
 *
 * libcurl's OpenSSL backend reads CURLOPT_SSLCERT_BLOB and CURLOPT_SSLKEY_BLOB again for each
 * new connection, through OpenSSL 3's decoders: about 6 million instructions a connection,
 * more than the handshake's own signature. A restart on the devhub (HTTP/1.1: a connection per
 * list and watch) opened 21 of them (docs/performance.md). kube_client reads the kubeconfig's
 * certificate and key here once and installs them into each connection's SSL_CTX from
 * libcurl's CURLOPT_SSL_CTX_FUNCTION.
 *
 * The PEM texts are what a kubeconfig's client-certificate(-data) and client-key(-data) hold:
 * the certificate first, then any intermediate certificates (sent as its chain); the key
 * unencrypted (an encrypted key is refused: the read declines to ask for a passphrase, so
 * nothing waits on a terminal). Bad input returns an error
 * that names what was wrong, with OpenSSL's reason; it never crashes.
 */
#ifndef KKS_KUBE_TLSCREDS_H
#define KKS_KUBE_TLSCREDS_H

#include <stddef.h>

#include "pkg/util/err.h"

struct tlscreds;

/*
 * Read cert_pem[0..cert_len) and key_pem[0..key_len) (borrowed). 0 and *out (free with
 * tlscreds_free), or -EINVAL with a message in `e`: no certificate, a chain certificate that
 * does not read, a key that is not one (or is encrypted), a key that does not belong to the
 * certificate, or a certificate, chain or key that a client SSL_CTX refuses (OpenSSL's
 * security level): what is read applies. -ENOMEM when OpenSSL runs out of memory.
 */
int tlscreds_new(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
                 struct tlscreds **out, struct err *e);

void tlscreds_free(struct tlscreds *t);

/* Install the certificate, its chain and the key into an OpenSSL SSL_CTX * (void * keeps
 * OpenSSL out of this header). 0, or -EINVAL with OpenSSL's reason in `e`. */
int tlscreds_apply(const struct tlscreds *t, void *ssl_ctx, struct err *e);

/* The number of certificates after the first (the chain sent with it). */
size_t tlscreds_chain_len(const struct tlscreds *t);

#endif
