/*
 * tlsgen: per-instance TLS material generated in memory with OpenSSL: a
 * self-signed CA, a serving certificate (SAN IP:127.0.0.1, DNS:localhost)
 * and a client certificate (CN=admin, O=system:masters) for the kubeconfig.
 * Keys are ECDSA P-256. Nothing touches the disk.
 */
#ifndef KKS_DEVHUB_TLSGEN_H
#define KKS_DEVHUB_TLSGEN_H

#include "pkg/util/err.h"

struct tls_bundle {
    char *ca_cert;     /* PEM */
    char *server_cert; /* PEM */
    char *server_key;  /* PEM (PKCS#8) */
    char *client_cert; /* PEM */
    char *client_key;  /* PEM (PKCS#8) */
};

/* Generate everything; valid for `days` days. 0 or -EIO with a message. */
int tlsgen_bundle(struct tls_bundle *b, const char *name, int days, struct err *e);
/* Free the strings (keys are cleansed first). */
void tlsgen_free(struct tls_bundle *b);

#endif
