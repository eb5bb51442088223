#include "pkg/kube/exec_cred.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pkg/util/b64.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

extern char **environ;

#define STDERR_KEEP 4096

void exec_cred_clear(struct exec_cred *c)
{
    if (!c)
        return;
    if (c->token)
        explicit_bzero(c->token, strlen(c->token));
    free(c->token);
    free(c->cert_pem);
    if (c->key_pem)
        explicit_bzero(c->key_pem, strlen(c->key_pem));
    free(c->key_pem);
    memset(c, 0, sizeof *c);
}

/* ---- preparing the child ------------------------------------------------- */

/* Look `cmd` up like execvp: as is when it has a '/', else in each $PATH entry. */
static char *find_command(const char *cmd, char *const *env)
{
    if (strchr(cmd, '/'))
        return access(cmd, X_OK) == 0 ? xstrdup(cmd) : NULL;
    const char *path = NULL;
    for (char *const *p = env; p && *p; p++)
        if (strncmp(*p, "PATH=", 5) == 0)
            path = *p + 5;
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (;;) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        char *cand = n == 0 ? xasprintf("./%s", cmd) : xasprintf("%.*s/%s", (int)n, path, cmd);
        if (access(cand, X_OK) == 0)
            return cand;
        free(cand);
        if (!end)
            return NULL;
        path = end + 1;
    }
}

static bool env_name_in(const char *entry, char *const *list, const char *extra)
{
    const char *eq = strchr(entry, '=');
    size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
    if (extra && strlen(extra) == n && strncmp(entry, extra, n) == 0)
        return true;
    for (char *const *p = list; p && *p; p++) {
        const char *peq = strchr(*p, '=');
        size_t pn = peq ? (size_t)(peq - *p) : strlen(*p);
        if (pn == n && strncmp(*p, entry, n) == 0)
            return true;
    }
    return false;
}

/* The child's environment: base minus overridden names, then the plugin's env, then exec info. */
static char **build_env(char *const *base, char *const *add, const char *exec_info)
{
    size_t n = 0;
    for (char *const *p = base; p && *p; p++)
        n++;
    for (char *const *p = add; p && *p; p++)
        n++;
    char **env = xcalloc(n + 2, sizeof *env);
    size_t k = 0;
    for (char *const *p = base; p && *p; p++)
        if (!env_name_in(*p, add, "KUBERNETES_EXEC_INFO"))
            env[k++] = *p;
    for (char *const *p = add; p && *p; p++)
        env[k++] = *p;
    env[k++] = (char *)exec_info;
    env[k] = NULL;
    return env; /* the strings stay borrowed */
}

static char *exec_info_env(const struct kube_exec_config *x, const struct exec_cred_opts *o)
{
    const char *api = x->api_version ? x->api_version : "client.authentication.k8s.io/v1";
    json_t *spec = json_pack("{s:b}", "interactive", 0);
    if (x->provide_cluster_info && o->cluster) {
        const struct exec_cred_cluster *cl = o->cluster;
        json_t *c = json_object();
        json_object_set_new(c, "server", json_string(cl->server ? cl->server : ""));
        if (cl->tls_server_name)
            json_object_set_new(c, "tls-server-name", json_string(cl->tls_server_name));
        if (cl->insecure_skip_tls_verify)
            json_object_set_new(c, "insecure-skip-tls-verify", json_true());
        if (cl->ca_pem && cl->ca_len) {
            char *enc = b64_encode(cl->ca_pem, cl->ca_len);
            json_object_set_new(c, "certificate-authority-data", json_string(enc));
            free(enc);
        }
        json_object_set_new(spec, "cluster", c);
    }
    json_t *info =
        json_pack("{s:s, s:s, s:o}", "apiVersion", api, "kind", "ExecCredential", "spec", spec);
    char *s = json_dumps(info, JSON_COMPACT);
    json_decref(info);
    char *env = xasprintf("KUBERNETES_EXEC_INFO=%s", s);
    free(s);
    return env;
}

/* In the child after fork: only async-signal-safe calls. Never returns. */
static void child_exec(const char *path, char *const *argv, char *const *envp, int in_fd,
                       int out_fd, int err_fd, int report_fd)
{
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, NULL);
    setpgid(0, 0); /* own process group, so a timeout kills the plugin's children too */
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        goto fail;
    execve(path, argv, envp);
fail:;
    int err = errno;
    ssize_t w = write(report_fd, &err, sizeof err);
    (void)w;
    _exit(127);
}

/* ---- running ------------------------------------------------------------- */

struct run_result {
    struct buf out;
    struct buf err;
    int status; /* waitpid status */
    bool timed_out;
    bool too_big;
    int exec_errno;
};

static int remaining_ms(uint64_t deadline_ns)
{
    uint64_t now = clock_mono_ns();
    if (now >= deadline_ns)
        return 0;
    uint64_t ms = (deadline_ns - now) / 1000000u + 1;
    return ms > 60 * 60 * 1000 ? 60 * 60 * 1000 : (int)ms;
}

static void kill_and_reap(pid_t pid, int *status)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
}

static int run_child(const char *path, char *const *argv, char *const *envp, int timeout_ms,
                     struct run_result *r, struct err *e, const char *cmd)
{
    int out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, rep_p[2] = {-1, -1};
    int devnull = -1;
    int rc = 0;
    if (pipe2(out_p, O_CLOEXEC) < 0 || pipe2(err_p, O_CLOEXEC) < 0 || pipe2(rep_p, O_CLOEXEC) < 0) {
        rc = err_set(e, -errno, "exec plugin \"%s\": pipe: %s", cmd, strerror(errno));
        goto out;
    }
    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0) {
        rc = err_set(e, -errno, "exec plugin \"%s\": /dev/null: %s", cmd, strerror(errno));
        goto out;
    }
    uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000u;
    pid_t pid = fork();
    if (pid < 0) {
        rc = err_set(e, -errno, "exec plugin \"%s\": fork: %s", cmd, strerror(errno));
        goto out;
    }
    if (pid == 0)
        child_exec(path, argv, envp, devnull, out_p[1], err_p[1], rep_p[1]);
    close(out_p[1]);
    close(err_p[1]);
    close(rep_p[1]);
    out_p[1] = err_p[1] = rep_p[1] = -1;

    /* Did execve work? The report pipe closes on exec, or carries errno. */
    int child_errno = 0;
    ssize_t got;
    do {
        got = read(rep_p[0], &child_errno, sizeof child_errno);
    } while (got < 0 && errno == EINTR);
    if (got == (ssize_t)sizeof child_errno) {
        r->exec_errno = child_errno;
        while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
            ;
        goto out;
    }

    struct pollfd fds[2] = {{.fd = out_p[0], .events = POLLIN}, {.fd = err_p[0], .events = POLLIN}};
    int open_fds = 2;
    char chunk[4096];
    while (open_fds > 0) {
        int ms = remaining_ms(deadline);
        if (ms == 0) {
            r->timed_out = true;
            break;
        }
        int n = poll(fds, 2, ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = err_set(e, -errno, "exec plugin \"%s\": poll: %s", cmd, strerror(errno));
            kill_and_reap(pid, &r->status);
            goto out;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t k = read(fds[i].fd, chunk, sizeof chunk);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                fds[i].fd = -1;
                open_fds--;
                continue;
            }
            if (i == 0) {
                if (buf_append(&r->out, chunk, (size_t)k) < 0) {
                    r->too_big = true;
                    open_fds = 0;
                    break;
                }
            } else if (r->err.len < STDERR_KEEP) {
                size_t keep = STDERR_KEEP - r->err.len;
                buf_append(&r->err, chunk, (size_t)k < keep ? (size_t)k : keep);
            }
        }
    }
    explicit_bzero(chunk, sizeof chunk);
    if (r->timed_out || r->too_big) {
        kill_and_reap(pid, &r->status);
        goto out;
    }
    /* Both pipes closed; the process should be exiting. Wait, still bounded. */
    for (;;) {
        pid_t w = waitpid(pid, &r->status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) { /* ECHILD: reaped by someone else (a SIGCHLD handler); assume success */
            r->status = 0;
            break;
        }
        if (remaining_ms(deadline) == 0) {
            r->timed_out = true;
            kill_and_reap(pid, &r->status);
            break;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
out:
    for (int i = 0; i < 2; i++) {
        if (out_p[i] >= 0)
            close(out_p[i]);
        if (err_p[i] >= 0)
            close(err_p[i]);
        if (rep_p[i] >= 0)
            close(rep_p[i]);
    }
    if (devnull >= 0)
        close(devnull);
    return rc;
}

/* ---- the answer ---------------------------------------------------------- */

/* First non-empty line of the plugin's stderr, for messages (into dst). */
static void first_line(const struct buf *b, char *dst, size_t n)
{
    const char *s = buf_str(b);
    while (*s == '\n' || *s == '\r' || *s == ' ')
        s++;
    size_t len = strcspn(s, "\r\n");
    if (len >= n)
        len = n - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

static int parse_answer(const struct kube_exec_config *x, const char *data, size_t len,
                        struct exec_cred *out, struct err *e)
{
    const char *cmd = x->command;
    json_error_t jerr;
    json_t *j = json_loadb(data, len, 0, &jerr);
    int rc = 0;
    if (!j)
        return err_set(e, -EINVAL,
                       "exec plugin \"%s\": output is not a JSON ExecCredential: %s (line %d, "
                       "column %d)",
                       cmd, jerr.text, jerr.line, jerr.column);
    const char *kind = json_string_value(json_object_get(j, "kind"));
    const char *api = json_string_value(json_object_get(j, "apiVersion"));
    json_t *status = json_object_get(j, "status");
    if (!json_is_object(j) || !kind || strcmp(kind, "ExecCredential") != 0) {
        rc = err_set(e, -EINVAL, "exec plugin \"%s\": output is not an ExecCredential (kind %s)",
                     cmd, kind ? kind : "missing");
        goto out;
    }
    const char *want = x->api_version;
    if (!api || (want && strcmp(api, want) != 0) ||
        (!want && strcmp(api, "client.authentication.k8s.io/v1") != 0 &&
         strcmp(api, "client.authentication.k8s.io/v1beta1") != 0)) {
        rc = err_set(e, -EINVAL,
                     "exec plugin \"%s\" is configured to use API version %s, plugin returned "
                     "version %s",
                     cmd, want ? want : "client.authentication.k8s.io/v1", api ? api : "(none)");
        goto out;
    }
    if (!json_is_object(status)) {
        rc = err_set(e, -EINVAL, "exec plugin \"%s\": ExecCredential has no status", cmd);
        goto out;
    }
    const char *token = json_string_value(json_object_get(status, "token"));
    const char *cert = json_string_value(json_object_get(status, "clientCertificateData"));
    const char *key = json_string_value(json_object_get(status, "clientKeyData"));
    const char *exp = json_string_value(json_object_get(status, "expirationTimestamp"));
    if (token && !*token)
        token = NULL;
    if (cert && !*cert)
        cert = NULL;
    if (key && !*key)
        key = NULL;
    if ((cert == NULL) != (key == NULL)) {
        rc = err_set(e, -EINVAL,
                     "exec plugin \"%s\": status.clientCertificateData and status.clientKeyData "
                     "must be given together",
                     cmd);
        goto out;
    }
    if (!token && !cert) {
        rc = err_set(e, -EINVAL,
                     "exec plugin \"%s\": ExecCredential status has neither a token nor a client "
                     "certificate",
                     cmd);
        goto out;
    }
    time_t expiry = 0;
    if (exp && *exp) {
        struct timespec ts;
        if (clock_parse_rfc3339(exp, &ts) < 0) {
            rc = err_set(e, -EINVAL,
                         "exec plugin \"%s\": status.expirationTimestamp \"%.40s\" is not RFC 3339",
                         cmd, exp);
            goto out;
        }
        expiry = ts.tv_sec;
        if (expiry == 0)
            expiry = 1; /* 0 means "none" */
    }
    memset(out, 0, sizeof *out);
    out->token = token ? xstrdup(token) : NULL;
    out->cert_pem = cert ? xstrdup(cert) : NULL;
    out->key_pem = key ? xstrdup(key) : NULL;
    out->expiry = expiry;
out:
    json_decref(j); /* jansson does not wipe; the token copy lives on in `out` only */
    return rc;
}

int exec_cred_run_opts(const struct kube_exec_config *x, const struct exec_cred_opts *o,
                       struct exec_cred *out, struct err *e)
{
    struct exec_cred_opts defaults = {0};
    if (!o)
        o = &defaults;
    memset(out, 0, sizeof *out);
    const char *cmd = x->command ? x->command : "";
    int timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : EXEC_CRED_DEFAULT_TIMEOUT_MS;
    size_t max_output = o->max_output ? o->max_output : EXEC_CRED_MAX_OUTPUT;
    char *const *base = o->base_env ? o->base_env : environ;
    const char *hint = x->install_hint && *x->install_hint ? x->install_hint : NULL;

    char *path = find_command(cmd, base);
    if (!*cmd || !path) {
        free(path);
        return err_set(e, -ENOENT, "exec plugin \"%s\": executable not found%s%s", cmd,
                       hint ? "; " : "", hint ? hint : "");
    }
    size_t nargs = 0;
    for (char **p = x->args; p && *p; p++)
        nargs++;
    char **argv = xcalloc(nargs + 2, sizeof *argv);
    argv[0] = (char *)cmd;
    for (size_t i = 0; i < nargs; i++)
        argv[i + 1] = x->args[i];
    char *info = exec_info_env(x, o);
    char **envp = build_env(base, x->env, info);

    struct run_result r = {0};
    buf_init(&r.out, max_output);
    buf_init(&r.err, STDERR_KEEP + 1);
    int rc = run_child(path, argv, envp, timeout_ms, &r, e, cmd);
    char line[256];
    if (rc < 0)
        goto out;
    if (r.exec_errno) {
        rc = err_set(e, -r.exec_errno, "exec plugin \"%s\": cannot execute %s: %s", cmd, path,
                     strerror(r.exec_errno));
        goto out;
    }
    if (r.timed_out) {
        rc = err_set(e, -ETIMEDOUT, "exec plugin \"%s\": no answer within %d ms, killed", cmd,
                     timeout_ms);
        goto out;
    }
    if (r.too_big) {
        rc =
            err_set(e, -E2BIG, "exec plugin \"%s\": output larger than %zu bytes", cmd, max_output);
        goto out;
    }
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
        first_line(&r.err, line, sizeof line);
        char how[64];
        if (WIFSIGNALED(r.status))
            snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(r.status));
        else
            snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(r.status));
        rc = err_set(e, -EIO, "exec plugin \"%s\" failed: %s%s%s%s%s", cmd, how,
                     line[0] ? ": " : "", line, hint ? "; " : "", hint ? hint : "");
        goto out;
    }
    rc = parse_answer(x, buf_str(&r.out), r.out.len, out, e);
out:
    if (r.out.data)
        explicit_bzero(r.out.data, r.out.len);
    buf_free(&r.out);
    buf_free(&r.err);
    free(envp);
    free(info);
    free(argv);
    free(path);
    return rc;
}

int exec_cred_run(const struct kube_exec_config *x, const char *server, struct exec_cred *out,
                  struct err *e)
{
    struct exec_cred_cluster cl = {.server = server};
    struct exec_cred_opts o = {.cluster = &cl};
    return exec_cred_run_opts(x, &o, out, e);
}
