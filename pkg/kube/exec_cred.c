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

#include "pkg/json/jsonx.h"
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
    char *s = jx_dumps_flags(info, JSON_COMPACT);
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

/* Start the plugin: *pid, and the read ends of its stdout / stderr in
 * fds[0] / fds[1] (the caller closes them). 0 with *pid = 0 when execve
 * failed (r->exec_errno, child reaped), or a negative code. The only wait
 * is for the exec itself (the report pipe closes on exec). */
static int spawn_child(const char *path, char *const *argv, char *const *envp, struct run_result *r,
                       pid_t *pid_out, int fds[2], struct err *e, const char *cmd)
{
    int out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, rep_p[2] = {-1, -1};
    int devnull = -1;
    int rc = 0;
    *pid_out = 0;
    fds[0] = fds[1] = -1;
    if (pipe2(out_p, O_CLOEXEC) < 0 || pipe2(err_p, O_CLOEXEC) < 0 || pipe2(rep_p, O_CLOEXEC) < 0) {
        rc = err_set(e, -errno, "exec plugin \"%s\": pipe: %s", cmd, strerror(errno));
        goto out;
    }
    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0) {
        rc = err_set(e, -errno, "exec plugin \"%s\": /dev/null: %s", cmd, strerror(errno));
        goto out;
    }
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
    *pid_out = pid;
    fds[0] = out_p[0];
    fds[1] = err_p[0];
    out_p[0] = err_p[0] = -1;
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

/* Keep a chunk read from the plugin: stdout up to the cap (false when over
 * it), stderr up to STDERR_KEEP. */
static bool keep_output(struct run_result *r, int which, const char *chunk, size_t k)
{
    if (which == 0) {
        if (buf_append(&r->out, chunk, k) < 0) {
            r->too_big = true;
            return false;
        }
    } else if (r->err.len < STDERR_KEEP) {
        size_t keep = STDERR_KEEP - r->err.len;
        buf_append(&r->err, chunk, k < keep ? k : keep);
    }
    return true;
}

static int run_child(const char *path, char *const *argv, char *const *envp, int timeout_ms,
                     struct run_result *r, struct err *e, const char *cmd)
{
    uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000u;
    pid_t pid;
    int pfd[2];
    int rc = spawn_child(path, argv, envp, r, &pid, pfd, e, cmd);
    if (rc < 0 || pid == 0)
        return rc;
    int out_p[2] = {pfd[0], -1}, err_p[2] = {pfd[1], -1};

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
            if (!keep_output(r, i, chunk, (size_t)k)) {
                open_fds = 0;
                break;
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
    }
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

/* What a run needs, prepared from the config. */
struct prepared {
    const char *cmd;
    const char *hint;
    int timeout_ms;
    size_t max_output;
    char *path;
    char **argv;
    char *info;
    char **envp;
};

static void prepared_free(struct prepared *p)
{
    free(p->envp);
    free(p->info);
    free(p->argv);
    free(p->path);
    memset(p, 0, sizeof *p);
}

static int prepare(const struct kube_exec_config *x, const struct exec_cred_opts *o,
                   struct prepared *p, struct err *e)
{
    memset(p, 0, sizeof *p);
    p->cmd = x->command ? x->command : "";
    p->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : EXEC_CRED_DEFAULT_TIMEOUT_MS;
    p->max_output = o->max_output ? o->max_output : EXEC_CRED_MAX_OUTPUT;
    char *const *base = o->base_env ? o->base_env : environ;
    p->hint = x->install_hint && *x->install_hint ? x->install_hint : NULL;
    p->path = find_command(p->cmd, base);
    if (!*p->cmd || !p->path) {
        int rc = err_set(e, -ENOENT, "exec plugin \"%s\": executable not found%s%s", p->cmd,
                         p->hint ? "; " : "", p->hint ? p->hint : "");
        prepared_free(p);
        return rc;
    }
    size_t nargs = 0;
    for (char **a = x->args; a && *a; a++)
        nargs++;
    p->argv = xcalloc(nargs + 2, sizeof *p->argv);
    p->argv[0] = (char *)p->cmd;
    for (size_t i = 0; i < nargs; i++)
        p->argv[i + 1] = x->args[i];
    p->info = exec_info_env(x, o);
    p->envp = build_env(base, x->env, p->info);
    return 0;
}

/* The outcome of a finished run. */
static int finish(const struct kube_exec_config *x, const struct prepared *p, struct run_result *r,
                  struct exec_cred *out, struct err *e)
{
    const char *cmd = p->cmd;
    char line[256];
    if (r->exec_errno)
        return err_set(e, -r->exec_errno, "exec plugin \"%s\": cannot execute %s: %s", cmd, p->path,
                       strerror(r->exec_errno));
    if (r->timed_out)
        return err_set(e, -ETIMEDOUT, "exec plugin \"%s\": no answer within %d ms, killed", cmd,
                       p->timeout_ms);
    if (r->too_big)
        return err_set(e, -E2BIG, "exec plugin \"%s\": output larger than %zu bytes", cmd,
                       p->max_output);
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0) {
        first_line(&r->err, line, sizeof line);
        char how[64];
        if (WIFSIGNALED(r->status))
            snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(r->status));
        else
            snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(r->status));
        return err_set(e, -EIO, "exec plugin \"%s\" failed: %s%s%s%s%s", cmd, how,
                       line[0] ? ": " : "", line, p->hint ? "; " : "", p->hint ? p->hint : "");
    }
    return parse_answer(x, buf_str(&r->out), r->out.len, out, e);
}

static void run_result_free(struct run_result *r)
{
    if (r->out.data)
        explicit_bzero(r->out.data, r->out.len);
    buf_free(&r->out);
    buf_free(&r->err);
}

int exec_cred_run_opts(const struct kube_exec_config *x, const struct exec_cred_opts *o,
                       struct exec_cred *out, struct err *e)
{
    struct exec_cred_opts defaults = {0};
    if (!o)
        o = &defaults;
    memset(out, 0, sizeof *out);
    struct prepared p;
    int rc = prepare(x, o, &p, e);
    if (rc < 0)
        return rc;
    struct run_result r = {0};
    buf_init(&r.out, p.max_output);
    buf_init(&r.err, STDERR_KEEP + 1);
    rc = run_child(p.path, p.argv, p.envp, p.timeout_ms, &r, e, p.cmd);
    if (rc == 0)
        rc = finish(x, &p, &r, out, e);
    run_result_free(&r);
    prepared_free(&p);
    return rc;
}

/* ---- asynchronous runs ------------------------------------------------------------ */

struct exec_cred_async {
    struct ev_loop *loop;
    const struct kube_exec_config *x; /* borrowed: must outlive the run */
    struct prepared p;
    struct run_result r;
    pid_t pid;
    int fd[2];
    ev_io io[2];
    ev_timer deadline;
    ev_timer reap; /* both pipes closed: poll waitpid until the child is gone */
    exec_cred_cb cb;
    void *ud;
};

static void async_close_fds(struct exec_cred_async *a)
{
    for (int i = 0; i < 2; i++) {
        ev_io_stop(a->loop, &a->io[i]);
        if (a->fd[i] >= 0)
            close(a->fd[i]);
        a->fd[i] = -1;
    }
}

static void async_free(struct exec_cred_async *a)
{
    async_close_fds(a);
    ev_timer_stop(a->loop, &a->deadline);
    ev_timer_stop(a->loop, &a->reap);
    run_result_free(&a->r);
    prepared_free(&a->p);
    free(a);
}

/* Deliver the outcome and free the run (the callback may start another). */
static void async_done(struct exec_cred_async *a)
{
    struct exec_cred cred = {0};
    struct err e;
    err_clear(&e);
    int rc = finish(a->x, &a->p, &a->r, &cred, &e);
    exec_cred_cb cb = a->cb;
    void *ud = a->ud;
    async_free(a);
    cb(ud, rc, rc == 0 ? &cred : NULL, &e);
    exec_cred_clear(&cred);
}

static void async_kill(struct exec_cred_async *a)
{
    if (a->pid > 0)
        kill_and_reap(a->pid, &a->r.status);
    a->pid = 0;
}

static void reap_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct exec_cred_async *a = w->data;
    pid_t got = waitpid(a->pid, &a->r.status, WNOHANG);
    if (got == 0)
        return; /* still exiting: the repeat polls again, the deadline bounds it */
    if (got < 0)
        a->r.status = 0; /* ECHILD: reaped elsewhere; the output decides */
    a->pid = 0;
    async_done(a);
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    struct exec_cred_async *a = w->data;
    int which = w == &a->io[0] ? 0 : 1;
    char chunk[4096];
    ssize_t k = read(a->fd[which], chunk, sizeof chunk);
    if (k < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (k > 0) {
        bool ok = keep_output(&a->r, which, chunk, (size_t)k);
        explicit_bzero(chunk, sizeof chunk);
        if (!ok) {
            async_kill(a);
            async_done(a);
        }
        return;
    }
    ev_io_stop(a->loop, &a->io[which]);
    close(a->fd[which]);
    a->fd[which] = -1;
    if (a->fd[0] < 0 && a->fd[1] < 0)
        ev_timer_start(a->loop, &a->reap);
}

static void now_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    async_done(w->data);
}

static void deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    struct exec_cred_async *a = w->data;
    a->r.timed_out = true;
    async_kill(a);
    async_done(a);
}

int exec_cred_start(struct ev_loop *loop, const struct kube_exec_config *x,
                    const struct exec_cred_opts *o, exec_cred_cb cb, void *ud,
                    struct exec_cred_async **out, struct err *e)
{
    *out = NULL;
    struct exec_cred_opts defaults = {0};
    if (!o)
        o = &defaults;
    struct exec_cred_async *a = xcalloc(1, sizeof *a);
    a->loop = loop;
    a->x = x;
    a->cb = cb;
    a->ud = ud;
    a->fd[0] = a->fd[1] = -1;
    int rc = prepare(x, o, &a->p, e);
    if (rc < 0) {
        free(a);
        return rc;
    }
    buf_init(&a->r.out, a->p.max_output);
    buf_init(&a->r.err, STDERR_KEEP + 1);
    ev_timer_init(&a->deadline, deadline_cb, a->p.timeout_ms / 1000.0, 0);
    a->deadline.data = a;
    ev_timer_init(&a->reap, reap_cb, 0.005, 0.005);
    a->reap.data = a;
    rc = spawn_child(a->p.path, a->p.argv, a->p.envp, &a->r, &a->pid, a->fd, e, a->p.cmd);
    if (rc < 0) {
        async_free(a);
        return rc;
    }
    if (a->pid == 0) {
        /* execve failed (child reaped): the outcome is known, delivered from
         * the loop, never from inside this call */
        ev_timer_init(&a->reap, now_cb, 0, 0);
        ev_timer_start(loop, &a->reap);
        *out = a;
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(a->fd[i], F_SETFL, fcntl(a->fd[i], F_GETFL) | O_NONBLOCK);
        ev_io_init(&a->io[i], io_cb, a->fd[i], EV_READ);
        a->io[i].data = a;
        ev_io_start(loop, &a->io[i]);
    }
    ev_timer_start(loop, &a->deadline);
    *out = a;
    return 0;
}

void exec_cred_cancel(struct exec_cred_async *a)
{
    if (!a)
        return;
    async_kill(a);
    async_free(a);
}

int exec_cred_run(const struct kube_exec_config *x, const char *server, struct exec_cred *out,
                  struct err *e)
{
    struct exec_cred_cluster cl = {.server = server};
    struct exec_cred_opts o = {.cluster = &cl};
    return exec_cred_run_opts(x, &o, out, e);
}
