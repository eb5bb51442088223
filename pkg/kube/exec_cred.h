/*
 * exec_cred: runs an exec credential plugin (client.authentication.k8s.io/v1
 * ExecCredential) without a shell and parses its answer.
 */
#ifndef KKS_KUBE_EXEC_CRED_H
#define KKS_KUBE_EXEC_CRED_H

#include <time.h>

#include "pkg/kube/restconfig.h"
#include "pkg/util/err.h"

struct exec_cred {
    char *token;    /* owned, may be NULL when the plugin returned a client cert */
    char *cert_pem; /* owned, may be NULL */
    char *key_pem;  /* owned, may be NULL */
    time_t expiry;  /* 0 = none given */
};

/* Free a kube_exec_config (defined in restconfig.h). NULL is fine. */
void kube_exec_config_free(struct kube_exec_config *x);

/*
 * Run the plugin (fork + execve, argv array, KUBERNETES_EXEC_INFO set,
 * bounded run time) and parse its stdout. Fills `out` (caller frees the
 * strings). Returns 0 or a negative code with a message naming the command.
 */
int exec_cred_run(const struct kube_exec_config *x, const char *server, struct exec_cred *out,
                  struct err *e);

#endif
