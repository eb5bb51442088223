/*
 * incluster: the configuration of a process running in a pod, like
 * client-go's rest.InClusterConfig: server https://$KUBERNETES_SERVICE_HOST:
 * $KUBERNETES_SERVICE_PORT (IPv6 addresses bracketed), the service-account
 * token file (re-read by kube_rest_config_token when kubelet rotates it), the
 * cluster CA from ca.crt and the pod's namespace from the namespace file.
 */
#ifndef KKS_KUBE_INCLUSTER_H
#define KKS_KUBE_INCLUSTER_H

#include <stdbool.h>

#include "pkg/kube/restconfig.h"
#include "pkg/util/err.h"

#define INCLUSTER_DEFAULT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct incluster_opts {
    const char *host; /* KUBERNETES_SERVICE_HOST, NULL = not in a cluster */
    const char *port; /* KUBERNETES_SERVICE_PORT */
    const char *dir;  /* service-account directory, NULL = INCLUSTER_DEFAULT_DIR */
};

/* Fill host and port from the environment (borrowed strings); dir is left alone. */
void incluster_opts_from_env(struct incluster_opts *o);

/* True when host and port are set (the process seems to run in a pod). */
bool incluster_available(const struct incluster_opts *o);

/*
 * Build the in-cluster config. *out: new config; *namespace_out (optional):
 * new string, the namespace file's content or "default" when it is absent.
 * Returns 0, -ENOENT when host/port are unset, or a negative errno with a
 * message naming the missing variable or unreadable file.
 */
int incluster_load(const struct incluster_opts *o, struct kube_rest_config **out,
                   char **namespace_out, struct err *e);

#endif
