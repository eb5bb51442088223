#include "pkg/kube/incluster.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/kube/kfile.h"
#include "pkg/util/xalloc.h"

void incluster_opts_from_env(struct incluster_opts *o)
{
    o->host = getenv("KUBERNETES_SERVICE_HOST");
    o->port = getenv("KUBERNETES_SERVICE_PORT");
}

bool incluster_available(const struct incluster_opts *o)
{
    return o && o->host && *o->host && o->port && *o->port;
}

static void trim(char *s, size_t *len)
{
    size_t n = *len;
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    *len = n;
}

int incluster_load(const struct incluster_opts *o, struct kube_rest_config **out,
                   char **namespace_out, struct err *e)
{
    *out = NULL;
    if (namespace_out)
        *namespace_out = NULL;
    if (!incluster_available(o))
        return err_set(e, -ENOENT,
                       "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                       "must be set (not running in a pod?)");
    for (const char *p = o->port; *p; p++)
        if (*p < '0' || *p > '9')
            return err_set(e, -EINVAL,
                           "in-cluster config: KUBERNETES_SERVICE_PORT=%.32s is not a port",
                           o->port);
    const char *dir = o->dir ? o->dir : INCLUSTER_DEFAULT_DIR;
    char *token_path = xasprintf("%s/token", dir);
    char *ca_path = xasprintf("%s/ca.crt", dir);
    char *ns_path = xasprintf("%s/namespace", dir);
    char *tok = NULL, *ca = NULL, *ns = NULL;
    size_t tok_len = 0, ca_len = 0, ns_len = 0;
    struct kube_rest_config *c = NULL;
    int rc = kfile_read(token_path, 1 << 20, &tok, &tok_len, e);
    if (rc < 0)
        goto fail;
    trim(tok, &tok_len);
    if (tok_len == 0) {
        rc = err_set(e, -EINVAL, "service-account token file %s is empty", token_path);
        goto fail;
    }
    rc = kfile_read(ca_path, 1 << 20, &ca, &ca_len, e);
    if (rc < 0)
        goto fail;
    if (!memmem(ca, ca_len, "-----BEGIN ", 11)) {
        rc = err_set(e, -EINVAL, "service-account CA %s is not a PEM certificate", ca_path);
        goto fail;
    }
    rc = kfile_read(ns_path, 4096, &ns, &ns_len, e);
    if (rc == -ENOENT) {
        ns = xstrdup("default");
        rc = 0;
    } else if (rc < 0) {
        goto fail;
    } else {
        trim(ns, &ns_len);
        if (ns_len == 0) {
            free(ns);
            ns = xstrdup("default");
        }
    }
    c = kube_rest_config_new();
    if (strchr(o->host, ':'))
        c->server = xasprintf("https://[%s]:%s", o->host, o->port);
    else
        c->server = xasprintf("https://%s:%s", o->host, o->port);
    c->ca_pem = ca;
    c->ca_len = ca_len;
    ca = NULL;
    c->token_file = token_path;
    token_path = NULL;
    c->source = xstrdup("in-cluster config");
    *out = c;
    if (namespace_out) {
        *namespace_out = ns;
        ns = NULL;
    }
    rc = 0;
    goto done;
fail:
    err_prefix(e, "in-cluster config");
done:
    kfile_wipe_free(tok, tok_len);
    free(ca);
    free(ns);
    free(token_path);
    free(ca_path);
    free(ns_path);
    return rc;
}
