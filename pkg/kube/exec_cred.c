#include "pkg/kube/exec_cred.h"

#include <errno.h>

/* Placeholder until the kubeconfig work lands: exec plugins are reported as unsupported. */
int exec_cred_run(const struct kube_exec_config *x, const char *server, struct exec_cred *out,
                  struct err *e)
{
    (void)server;
    (void)out;
    return err_set(e, -ENOTSUP, "exec credential plugin %s: not supported yet", x->command);
}
