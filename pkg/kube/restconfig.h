/*
 * restconfig: everything the REST client needs to reach one API server,
 * produced by the kubeconfig loader (pkg/kube/kubeconfig.h) or the in-cluster
 * loader, and consumed by the REST client (pkg/kube/client.h).
 *
 * TLS material is kept in memory (PEM bytes) and handed to libcurl as blobs;
 * it is never written to disk. Bearer tokens come from a static value, a
 * token file (re-read when it changes, like client-go's cached file token
 * source) or an exec credential plugin (cached until its expiry).
 */
#ifndef KKS_KUBE_RESTCONFIG_H
#define KKS_KUBE_RESTCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "pkg/util/err.h"

/* An exec credential plugin (client.authentication.k8s.io/v1). */
struct kube_exec_config {
    char *command; /* resolved against the kubeconfig's directory when relative */
    char **args;   /* NULL-terminated, may be NULL */
    char **env;    /* NULL-terminated "NAME=value" entries added to the child's environment */
    char *api_version;
    char *install_hint;
    bool provide_cluster_info;
    char *interactive_mode; /* Never / IfAvailable / Always */
};

/* Token files (projected service account tokens are ~1 KiB; 1 MiB is far
 * beyond any real token and still bounded). */
#define KUBE_TOKEN_FILE_MAX       (1u << 20)
#define KUBE_TOKEN_FILE_RECHECK_S 1.0

struct kube_rest_config {
    char *server;          /* "https://host:port[/prefix]" without trailing slash */
    char *tls_server_name; /* optional SNI / verification name */
    char *ca_pem;          /* CA bundle (PEM), NULL = system store */
    size_t ca_len;
    char *cert_pem; /* client certificate (PEM), may be NULL */
    size_t cert_len;
    char *key_pem; /* client key (PEM), may be NULL; never logged, never on disk */
    size_t key_len;
    bool insecure_skip_tls_verify;
    char *token;      /* static bearer token, may be NULL */
    char *token_file; /* bearer token file: checked (stat) at most every token_file_recheck_s,
                         re-read when its mtime/size changed or after a 401; at most
                         KUBE_TOKEN_FILE_MAX bytes (a bigger file is an error, never cut) */
    double token_file_recheck_s;   /* 0 = KUBE_TOKEN_FILE_RECHECK_S, < 0 = every call */
    struct kube_exec_config *exec; /* may be NULL */
    char *source; /* where this came from, for messages: "kubeconfig /p, context c" */

    /* Client-side tuning; the loader leaves 0 (= defaults). */
    double qps;
    int burst;
    int exec_timeout_ms; /* exec plugin run-time bound, 0 = EXEC_CRED_DEFAULT_TIMEOUT_MS (60 s) */

    /* Credential cache (owned; managed by kube_rest_config_token). */
    char *cached_token;
    struct timespec cached_token_mtime;
    off_t cached_token_size;
    time_t cached_token_expiry;    /* wall clock; 0 = no expiry */
    double cached_token_checked_s; /* monotonic time of the last token file check */
    char *exec_cert_pem;           /* client cert/key returned by an exec plugin */
    char *exec_key_pem;
    unsigned exec_pem_gen; /* bumped whenever exec_cert_pem/exec_key_pem are replaced or
                              dropped (the client re-applies them to the handles it reuses) */
};

/* Allocate a zeroed config (never NULL). */
struct kube_rest_config *kube_rest_config_new(void);
/* Free a config and everything it owns (key material is wiped first). NULL is fine. */
void kube_rest_config_free(struct kube_rest_config *c);
/* Deep copy. */
struct kube_rest_config *kube_rest_config_dup(const struct kube_rest_config *c);

/*
 * The bearer token to send now, or *token = NULL when the config has none.
 * Re-reads token_file when it changed, runs the exec plugin when the cached
 * credential expired (blocking: the REST client runs it asynchronously
 * first, see kube_rest_config_exec_due). The returned string is borrowed from `c` and valid
 * until the next call. Returns 0 or a negative code with a message in `e`.
 */
int kube_rest_config_token(struct kube_rest_config *c, const char **token, struct err *e);

/* For callers on a loop that run the exec plugin asynchronously
 * (exec_cred_start) instead of inside kube_rest_config_token: true when the
 * plugin must run (no credential yet, or expired); the options to run it
 * with (cl holds what o points to; both borrow from c); and storing its
 * answer (the strings are moved out of cred). */
struct exec_cred;
struct exec_cred_cluster;
struct exec_cred_opts;
bool kube_rest_config_exec_due(const struct kube_rest_config *c);
void kube_rest_config_exec_opts(const struct kube_rest_config *c, struct exec_cred_cluster *cl,
                                struct exec_cred_opts *o);
void kube_rest_config_exec_store(struct kube_rest_config *c, struct exec_cred *cred);

/* Forget cached credentials (after a 401) so the next call re-reads / re-runs. */
void kube_rest_config_invalidate(struct kube_rest_config *c);

#endif
