/*
 * exec_cred: runs an exec credential plugin (client.authentication.k8s.io/v1
 * or v1beta1 ExecCredential) without a shell and parses its answer.
 *
 * The plugin runs with fork + execve: argv is the command and its args (no
 * shell; a command without '/' is looked up in $PATH like execvp), stdin is
 * /dev/null (plugins are never interactive here), the environment is the
 * parent's plus the configured `env` entries plus KUBERNETES_EXEC_INFO (an
 * ExecCredential with spec.interactive=false and, with provideClusterInfo,
 * spec.cluster). stdout is captured with a size cap, stderr is captured for
 * the error message. The run is bounded (EXEC_CRED_DEFAULT_TIMEOUT_MS, then
 * SIGKILL). exec_cred_run_opts blocks its caller for the plugin's run time
 * (for the CLI); exec_cred_start runs it on a libev loop (non-blocking pipes
 * as ev_io, a deadline timer, the exit reaped with waitpid(WNOHANG) once
 * both pipes closed: ev_child needs the default loop, this works on any),
 * so a slow plugin never stalls the loop (lease renewal, watches, probes,
 * signals).
 *
 * The answer must be an ExecCredential of the configured apiVersion with
 * status.token or status.clientCertificateData + clientKeyData, optionally
 * status.expirationTimestamp (RFC 3339). Tokens and keys are never logged or
 * put into error messages.
 */
#ifndef KKS_KUBE_EXEC_CRED_H
#define KKS_KUBE_EXEC_CRED_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "pkg/kube/restconfig.h"
#include "pkg/util/err.h"

#define EXEC_CRED_DEFAULT_TIMEOUT_MS 60000
#define EXEC_CRED_MAX_OUTPUT         (1u << 20)

struct exec_cred {
    char *token;    /* owned, may be NULL when the plugin returned a client cert */
    char *cert_pem; /* owned, may be NULL */
    char *key_pem;  /* owned, may be NULL */
    time_t expiry;  /* 0 = none given */
};

/* Cluster information passed to the plugin when provide_cluster_info is set (borrowed). */
struct exec_cred_cluster {
    const char *server;
    const char *tls_server_name; /* may be NULL */
    const char *ca_pem;          /* may be NULL */
    size_t ca_len;
    bool insecure_skip_tls_verify;
};

struct exec_cred_opts {
    int timeout_ms;                          /* 0 = EXEC_CRED_DEFAULT_TIMEOUT_MS */
    size_t max_output;                       /* stdout cap, 0 = EXEC_CRED_MAX_OUTPUT */
    const struct exec_cred_cluster *cluster; /* may be NULL */
    char *const *base_env; /* environment to extend, NULL = the process's environ */
};

/* Free a kube_exec_config (defined in restconfig.h). NULL is fine. */
void kube_exec_config_free(struct kube_exec_config *x);

/* Free the strings of `c` (the key is wiped first) and zero it. */
void exec_cred_clear(struct exec_cred *c);

/*
 * Run the plugin and parse its stdout. Fills `out` (free with
 * exec_cred_clear). Returns 0, or a negative code with a message naming the
 * command: -ENOENT not found, -ETIMEDOUT too slow, -EIO non-zero exit (the
 * message has the first stderr line and the install hint), -EINVAL a bad
 * answer. `o` may be NULL (defaults).
 */
int exec_cred_run_opts(const struct kube_exec_config *x, const struct exec_cred_opts *o,
                       struct exec_cred *out, struct err *e);

/*
 * Asynchronous run. cb(ud, rc, cred, e) runs once, from the loop, never from
 * inside exec_cred_start: rc 0 with the credential (cred: the callback takes
 * its strings by moving them out, what is left is cleared after it returns),
 * or the codes of exec_cred_run_opts with a message. `x` and the strings of
 * `o` are borrowed until the callback has run or the run was cancelled.
 * Returns 0 and *out, or a negative code (no callback): -ENOENT executable
 * not found, or a pipe/fork failure. The run (and *out) is freed after the
 * callback.
 */
struct exec_cred_async;
typedef void (*exec_cred_cb)(void *ud, int rc, struct exec_cred *cred, const struct err *e);
int exec_cred_start(struct ev_loop *loop, const struct kube_exec_config *x,
                    const struct exec_cred_opts *o, exec_cred_cb cb, void *ud,
                    struct exec_cred_async **out, struct err *e);
/* Kill the plugin (SIGKILL to its process group), reap it, free the run;
 * the callback never runs. NULL is fine. Not from inside the callback. */
void exec_cred_cancel(struct exec_cred_async *a);

/* exec_cred_run_opts with default options and only the server as cluster info. */
int exec_cred_run(const struct kube_exec_config *x, const char *server, struct exec_cred *out,
                  struct err *e);

#endif
