#include "pkg/kube/restconfig.h"
#include "pkg/kube/exec_cred.h"
#include "pkg/kube/kfile.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct kube_rest_config *kube_rest_config_new(void)
{
    return xcalloc(1, sizeof(struct kube_rest_config));
}

static void wipe_free(char *p, size_t n)
{
    if (!p)
        return;
    /* explicit_bzero is not optimised away, unlike memset before free. */
    explicit_bzero(p, n ? n : strlen(p));
    free(p);
}

static void free_strv(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

static char **dup_strv(char *const *v)
{
    if (!v)
        return NULL;
    size_t n = 0;
    while (v[n])
        n++;
    char **out = xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        out[i] = xstrdup(v[i]);
    return out;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static char *dup_mem(const char *p, size_t n)
{
    if (!p)
        return NULL;
    char *q = xmalloc(n + 1);
    memcpy(q, p, n);
    q[n] = '\0';
    return q;
}

void kube_exec_config_free(struct kube_exec_config *x)
{
    if (!x)
        return;
    free(x->command);
    free_strv(x->args);
    free_strv(x->env);
    free(x->api_version);
    free(x->install_hint);
    free(x->interactive_mode);
    free(x);
}

void kube_rest_config_free(struct kube_rest_config *c)
{
    if (!c)
        return;
    free(c->server);
    free(c->tls_server_name);
    free(c->ca_pem);
    free(c->cert_pem);
    wipe_free(c->key_pem, c->key_len);
    wipe_free(c->token, 0);
    free(c->token_file);
    kube_exec_config_free(c->exec);
    free(c->source);
    wipe_free(c->cached_token, 0);
    free(c->exec_cert_pem);
    wipe_free(c->exec_key_pem, 0);
    free(c);
}

struct kube_rest_config *kube_rest_config_dup(const struct kube_rest_config *c)
{
    struct kube_rest_config *d = kube_rest_config_new();
    d->server = dup_or_null(c->server);
    d->tls_server_name = dup_or_null(c->tls_server_name);
    d->ca_pem = dup_mem(c->ca_pem, c->ca_len);
    d->ca_len = c->ca_len;
    d->cert_pem = dup_mem(c->cert_pem, c->cert_len);
    d->cert_len = c->cert_len;
    d->key_pem = dup_mem(c->key_pem, c->key_len);
    d->key_len = c->key_len;
    d->insecure_skip_tls_verify = c->insecure_skip_tls_verify;
    d->token = dup_or_null(c->token);
    d->token_file = dup_or_null(c->token_file);
    d->token_file_recheck_s = c->token_file_recheck_s;
    if (c->exec) {
        d->exec = xcalloc(1, sizeof *d->exec);
        d->exec->command = dup_or_null(c->exec->command);
        d->exec->args = dup_strv(c->exec->args);
        d->exec->env = dup_strv(c->exec->env);
        d->exec->api_version = dup_or_null(c->exec->api_version);
        d->exec->install_hint = dup_or_null(c->exec->install_hint);
        d->exec->provide_cluster_info = c->exec->provide_cluster_info;
        d->exec->interactive_mode = dup_or_null(c->exec->interactive_mode);
    }
    d->source = dup_or_null(c->source);
    d->qps = c->qps;
    d->burst = c->burst;
    d->exec_timeout_ms = c->exec_timeout_ms;
    return d;
}

/* Read a whole token file (size-checked: a token is never cut, which would
 * earn an endless 401); trailing whitespace is trimmed like client-go. */
static int read_token_file(const char *path, char **out, struct err *e)
{
    char *data = NULL;
    size_t n = 0;
    int rc = kfile_read(path, KUBE_TOKEN_FILE_MAX, &data, &n, e);
    if (rc == -E2BIG)
        return err_set(e, rc, "token file %s is larger than %u bytes: not a bearer token", path,
                       KUBE_TOKEN_FILE_MAX);
    if (rc < 0) {
        err_prefix(e, "token file");
        return rc; /* not err_prefix's: that is 0 when e is NULL */
    }
    while (n > 0 && (data[n - 1] == '\n' || data[n - 1] == '\r' || data[n - 1] == ' ' ||
                     data[n - 1] == '\t'))
        data[--n] = '\0';
    if (n == 0 || strlen(data) != n) {
        kfile_wipe_free(data, n);
        return err_set(e, -EINVAL, "token file %s is %s", path,
                       n == 0 ? "empty" : "not text (it holds a NUL byte)");
    }
    *out = data;
    return 0;
}

bool kube_rest_config_exec_due(const struct kube_rest_config *c)
{
    if (!c->exec)
        return false;
    bool have = c->cached_token || c->exec_cert_pem;
    return !have || (c->cached_token_expiry && time(NULL) >= c->cached_token_expiry);
}

void kube_rest_config_exec_opts(const struct kube_rest_config *c, struct exec_cred_cluster *cl,
                                struct exec_cred_opts *o)
{
    *cl = (struct exec_cred_cluster){
        .server = c->server,
        .tls_server_name = c->tls_server_name,
        .ca_pem = c->ca_pem,
        .ca_len = c->ca_len,
        .insecure_skip_tls_verify = c->insecure_skip_tls_verify,
    };
    *o = (struct exec_cred_opts){.cluster = cl, .timeout_ms = c->exec_timeout_ms};
}

void kube_rest_config_exec_store(struct kube_rest_config *c, struct exec_cred *cred)
{
    wipe_free(c->cached_token, 0);
    c->cached_token = cred->token;
    c->cached_token_expiry = cred->expiry;
    free(c->exec_cert_pem);
    wipe_free(c->exec_key_pem, 0);
    c->exec_cert_pem = cred->cert_pem;
    c->exec_key_pem = cred->key_pem;
    c->exec_pem_gen++;
    memset(cred, 0, sizeof *cred);
}

int kube_rest_config_token(struct kube_rest_config *c, const char **token, struct err *e)
{
    *token = NULL;
    if (c->exec) {
        if (kube_rest_config_exec_due(c)) {
            struct exec_cred cred = {0};
            struct exec_cred_cluster cl;
            struct exec_cred_opts o;
            kube_rest_config_exec_opts(c, &cl, &o);
            int rc = exec_cred_run_opts(c->exec, &o, &cred, e);
            if (rc < 0)
                return rc;
            kube_rest_config_exec_store(c, &cred);
        }
        *token = c->cached_token;
        return 0;
    }
    if (c->token_file) {
        /* Not stat'ed per request: at most every recheck interval (a 401
         * invalidates the cache and forces a re-read). */
        double now = clock_mono_s();
        double every = c->token_file_recheck_s > 0   ? c->token_file_recheck_s
                       : c->token_file_recheck_s < 0 ? 0
                                                     : KUBE_TOKEN_FILE_RECHECK_S;
        if (c->cached_token && now - c->cached_token_checked_s < every) {
            *token = c->cached_token;
            return 0;
        }
        c->cached_token_checked_s = now;
        struct stat st;
        if (stat(c->token_file, &st) < 0) {
            /* Keep using the last good token if the file vanished briefly. */
            if (c->cached_token) {
                *token = c->cached_token;
                return 0;
            }
            return err_set(e, -errno, "cannot read token file %s: %s", c->token_file,
                           strerror(errno));
        }
        if (!c->cached_token || st.st_mtim.tv_sec != c->cached_token_mtime.tv_sec ||
            st.st_mtim.tv_nsec != c->cached_token_mtime.tv_nsec ||
            st.st_size != c->cached_token_size) {
            char *t = NULL;
            int rc = read_token_file(c->token_file, &t, e);
            if (rc < 0)
                return rc;
            wipe_free(c->cached_token, 0);
            c->cached_token = t;
            c->cached_token_mtime = st.st_mtim;
            c->cached_token_size = st.st_size;
        }
        *token = c->cached_token;
        return 0;
    }
    *token = c->token;
    return 0;
}

void kube_rest_config_invalidate(struct kube_rest_config *c)
{
    wipe_free(c->cached_token, 0);
    c->cached_token = NULL;
    /* An exec plugin's client certificate is re-fetched too (the client copied it). */
    FREE_AND_NULL(c->exec_cert_pem);
    wipe_free(c->exec_key_pem, 0);
    c->exec_key_pem = NULL;
    c->exec_pem_gen++;
    c->cached_token_expiry = 0;
    memset(&c->cached_token_mtime, 0, sizeof c->cached_token_mtime);
}
