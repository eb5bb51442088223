/*
 * kubeconfig: load a kubeconfig (v1) the way kubectl / client-go do and turn
 * the selected context into a struct kube_rest_config (pkg/kube/restconfig.h).
 *
 * Where the configuration comes from (client-go's ClientConfigLoadingRules):
 *   1. opts.explicit_path (--kubeconfig): that file only; it must exist.
 *   2. else opts.env_kubeconfig ($KUBECONFIG, ':'-separated): every listed
 *      file, merged; missing files are skipped, empty entries and duplicates
 *      ignored. The first file to define a cluster / user / context name
 *      wins; the first file to set current-context wins.
 *   3. else opts.home + "/.kube/config" when it exists.
 *   4. when nothing was found (or the files define no context at all) and
 *      opts.allow_in_cluster is set and the service environment is present:
 *      the in-cluster config (pkg/kube/incluster.h).
 * opts.context (--context) overrides current-context.
 *
 * Relative paths (certificate-authority, client-certificate, client-key,
 * tokenFile, and an exec command containing a '/') are resolved against the
 * directory of the file that defined them. Certificate and key material,
 * from files or `*-data` fields (base64), is held in memory only, checked to
 * be PEM, and never logged. Nothing reads the process environment here:
 * callers pass $KUBECONFIG and $HOME in (kubeconfig_opts_from_env does it),
 * so tests are hermetic.
 *
 * Supported: clusters (server, certificate-authority(-data),
 * insecure-skip-tls-verify, tls-server-name; proxy-url is ignored with a
 * warning), users (client-certificate(-data), client-key(-data), token,
 * tokenFile, exec), contexts (cluster, user, namespace), current-context.
 * Rejected with a clear error: username/password, auth-provider,
 * impersonation (as, as-groups, as-uid), a CA together with
 * insecure-skip-tls-verify, a client certificate without its key.
 *
 * Every error names the file (or the in-memory source name) and the field,
 * e.g. `kubeconfig /tmp/k: context "dev": user "bob" not found`,
 * `kubeconfig /tmp/k:3:7: YAML syntax error: ...`,
 * `kubeconfig /tmp/k: users[0].user.client-key-data: invalid base64`.
 */
#ifndef KKS_KUBE_KUBECONFIG_H
#define KKS_KUBE_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "pkg/kube/incluster.h"
#include "pkg/kube/restconfig.h"
#include "pkg/util/err.h"
#include "pkg/util/log.h"

/* Size cap for a kubeconfig file and for files it references. */
#define KUBECONFIG_MAX_FILE (4u << 20)

struct kubeconfig_opts {
    const char *explicit_path;        /* --kubeconfig, NULL = none */
    const char *context;              /* --context, NULL = current-context */
    const char *env_kubeconfig;       /* value of $KUBECONFIG, NULL or "" = unset */
    const char *home;                 /* home directory for ~/.kube/config, NULL = none */
    bool allow_in_cluster;            /* fall back to the in-cluster config (step 4) */
    struct incluster_opts in_cluster; /* used for the fallback */
    const struct logger *lg;          /* warnings; NULL = discard */
};

/*
 * Fill env_kubeconfig, home and in_cluster from the process environment
 * ($KUBECONFIG, $HOME, KUBERNETES_SERVICE_HOST/PORT). The strings are
 * borrowed from the environment. Other fields are left as they are.
 */
void kubeconfig_opts_from_env(struct kubeconfig_opts *o);

/*
 * Load the configuration (see the top of this file). On success *out is a new
 * config (free with kube_rest_config_free) and, when namespace_out is not
 * NULL, *namespace_out a new string: the context's namespace, "default" when
 * the context sets none (the pod's namespace in-cluster). Returns 0, -ENOENT
 * when no configuration was found, -EINVAL for invalid content, or another
 * negative errno; `e` says which file and field.
 */
int kubeconfig_load(const struct kubeconfig_opts *o, struct kube_rest_config **out,
                    char **namespace_out, struct err *e);

/* Flags for kubeconfig_load_data. */
enum {
    /* Allow absolute file references (certificate-authority, client-certificate, client-key,
     * tokenFile, exec command path). */
    KUBECONFIG_ALLOW_FILES = 1 << 0,
    /* Allow exec credential plugins. */
    KUBECONFIG_ALLOW_EXEC = 1 << 1,
};

/*
 * Load a kubeconfig held in memory (e.g. a worker cluster's kubeconfig from
 * a Secret). `name` (borrowed) names the source in messages ("secret
 * kueue-system/worker1"); `context` may be NULL (current-context). Relative
 * file paths are always an error (there is no directory to resolve them
 * against). By default (flags 0) file references and exec plugins are
 * rejected too, as Kueue's MultiKueue does: whoever can write the Secret
 * could otherwise make the operator read its own files (say, its service
 * account token) or run programs. `flags` lifts that. Same results as
 * kubeconfig_load.
 */
int kubeconfig_load_data(const char *data, size_t len, const char *name, const char *context,
                         unsigned flags, const struct logger *lg, struct kube_rest_config **out,
                         char **namespace_out, struct err *e);

#endif
