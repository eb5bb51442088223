#include "pkg/kube/client.h"

#include <errno.h>

/* First commit: API only; the implementation follows. */
int kube_client_new(struct ev_loop *loop, const struct kube_rest_config *cfg,
                    const struct kube_client_opts *opts, const struct logger *lg,
                    struct kube_client **out, struct err *e)
{
    *out = NULL;
    return err_set(e, -ENOSYS, "kube client: not implemented yet");
}

void kube_client_free(struct kube_client *c)
{
}
