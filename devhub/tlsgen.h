/*
 * tlsgen: per-instance TLS material generated in memory with OpenSSL: a
 * self-signed CA, a serving certificate (SAN IP:127.0.0.1, DNS:localhost)
 * and a client certificate (CN=admin, O=system:masters) for the kubeconfig.
 * Keys are ECDSA P-256. tlsgen_bundle keeps everything in memory;
 * tlsgen_persist keeps the bundle in a directory so that a restarted devhub
 * (with --data) serves with the same CA and accepts the same client
 * certificate: a kubeconfig written before the restart keeps working, as
 * with a real API server.
 */
#ifndef KKS_DEVHUB_TLSGEN_H
#define KKS_DEVHUB_TLSGEN_H

#include <stdbool.h>

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
/*
 * The bundle kept in `dir`: files ca.crt, server.crt, server.key,
 * client.crt, client.key (keys 0600, certificates 0644, dir 0700; the CA key
 * is not kept: nothing is issued after the first start). When `dir` does not
 * exist, a new bundle is generated and written to a temporary directory that
 * is then renamed to `dir` (a crash never leaves half a set). When it
 * exists, the files are loaded and checked: each certificate parses, the
 * serving and client certificates are signed by the CA and match their keys,
 * none has expired. *created says which happened (may be NULL).
 * 0, or a negative errno with a message naming the file; a bad set is never
 * replaced silently (the message says to remove `dir`).
 */
int tlsgen_persist(struct tls_bundle *b, const char *dir, const char *name, int days, bool *created,
                   struct err *e);
/* Free the strings (keys are cleansed first). */
void tlsgen_free(struct tls_bundle *b);

#endif
