/* Unit tests for pkg/kube/exec_cred and the exec path of kube_rest_config_token. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pkg/kube/exec_cred.h"
#include "pkg/kube/kfile.h"
#include "pkg/kube/kubeconfig.h"
#include "pkg/kube/restconfig.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"
#include "test/support/tdir.h"

#define V1 "client.authentication.k8s.io/v1"

struct fx {
    char dir[64];
};

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof *f);
    if (tdir_make(f->dir, sizeof f->dir, "kks-exec") < 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tdir_remove(f->dir);
    free(f);
    return 0;
}

/* Write an executable #!/bin/sh plugin DIR/name with `body`; returns its path (new). */
static char *plugin(struct fx *f, const char *name, const char *body)
{
    char *path = xasprintf("%s/%s", f->dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, "#!/bin/sh\n%s\n", body);
    fclose(fp);
    assert_int_equal(chmod(path, 0700), 0);
    return path;
}

static char *slurp(struct fx *f, const char *name)
{
    char *path = xasprintf("%s/%s", f->dir, name);
    char *d = NULL;
    size_t n;
    struct err e;
    if (kfile_read(path, 1 << 20, &d, &n, &e) < 0)
        fail_msg("%s", e.msg);
    free(path);
    return d;
}

static int run_count(struct fx *f)
{
    char *s = slurp(f, "count");
    int n = (int)strtol(s, NULL, 10);
    free(s);
    return n;
}

/* A plugin that counts its runs in $DIR/count and answers token "tok-N" expiring at $EXPIRY. */
static const char *k_counting =
    "n=$(cat \"$DIR/count\" 2>/dev/null || echo 0)\n"
    "n=$((n + 1))\n"
    "echo $n > \"$DIR/count\"\n"
    "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
    "\"status\":{\"token\":\"tok-%s\",\"expirationTimestamp\":\"%s\"}}' \"$n\" \"$EXPIRY\"";

/* A kubeconfig using `cmd` as exec plugin with env DIR and EXPIRY. */
static char *exec_kubeconfig(struct fx *f, const char *cmd, const char *expiry)
{
    return xasprintf("clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                     "users:\n"
                     "- name: u\n"
                     "  user:\n"
                     "    exec:\n"
                     "      apiVersion: " V1 "\n"
                     "      interactiveMode: Never\n"
                     "      command: %s\n"
                     "      env: [{name: DIR, value: '%s'}, {name: EXPIRY, value: '%s'}]\n"
                     "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                     "current-context: x\n",
                     cmd, f->dir, expiry);
}

static struct kube_rest_config *load(const char *yaml)
{
    struct kube_rest_config *c = NULL;
    struct err e;
    if (kubeconfig_load_data(yaml, strlen(yaml), "test", NULL, KUBECONFIG_ALLOW_EXEC, NULL, &c,
                             NULL, &e) != 0)
        fail_msg("%s", e.msg);
    return c;
}

static void test_token_and_expiry_cache(void **state)
{
    struct fx *f = *state;
    char *cmd = plugin(f, "counting", k_counting);
    char future[64];
    struct timespec ts = {.tv_sec = time(NULL) + 3600};
    clock_rfc3339(future, sizeof future, &ts, 0);
    char *y = exec_kubeconfig(f, cmd, future);
    struct kube_rest_config *c = load(y);
    struct err e;
    const char *tok = NULL;
    /* Two calls before the expiry: one run. */
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "tok-1");
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "tok-1");
    assert_int_equal(run_count(f), 1);
    assert_int_equal(c->cached_token_expiry, ts.tv_sec);
    /* After a 401 the caller invalidates: the plugin runs again. */
    kube_rest_config_invalidate(c);
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "tok-2");
    assert_int_equal(run_count(f), 2);
    kube_rest_config_free(c);
    free(y);

    /* An already expired credential is fetched again on every call. */
    y = exec_kubeconfig(f, cmd, "2001-01-01T00:00:00Z");
    c = load(y);
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "tok-3");
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "tok-4");
    assert_int_equal(run_count(f), 4);
    kube_rest_config_free(c);
    free(y);
    free(cmd);
}

static void test_env_args_and_exec_info(void **state)
{
    struct fx *f = *state;
    char *cmd = plugin(f, "dump",
                       "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$DIR/info\"\n"
                       "printf '%s|%s|%s' \"$FOO\" \"$1\" \"$2\" > \"$DIR/env\"\n"
                       "printf '%s' \"$HOME_SEEN\" > \"$DIR/inherited\"\n"
                       "echo '{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
                       "\"status\":{\"token\":\"t\"}}'");
    char *y =
        xasprintf("clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9', "
                  "tls-server-name: api.test, certificate-authority-data: "
                  "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
                  "}}]\n"
                  "users:\n"
                  "- name: u\n"
                  "  user:\n"
                  "    exec:\n"
                  "      apiVersion: " V1 "\n"
                  "      interactiveMode: IfAvailable\n"
                  "      provideClusterInfo: true\n"
                  "      command: %s\n"
                  "      args: [first arg, \"$NOT_EXPANDED\"]\n"
                  "      env: [{name: DIR, value: '%s'}, {name: FOO, value: 'bar baz'}]\n"
                  "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                  "current-context: x\n",
                  cmd, f->dir);
    struct kube_rest_config *c = load(y);
    struct err e;
    const char *tok;
    assert_int_equal(setenv("HOME_SEEN", "inherited-value", 1), 0);
    if (kube_rest_config_token(c, &tok, &e) != 0)
        fail_msg("%s", e.msg);
    unsetenv("HOME_SEEN");
    assert_string_equal(tok, "t");
    char *env = slurp(f, "env");
    /* No shell in between: arguments arrive verbatim, "$NOT_EXPANDED" is not expanded. */
    assert_string_equal(env, "bar baz|first arg|$NOT_EXPANDED");
    free(env);
    char *inh = slurp(f, "inherited");
    assert_string_equal(inh, "inherited-value");
    free(inh);
    char *info = slurp(f, "info");
    json_error_t je;
    json_t *j = json_loads(info, 0, &je);
    if (!j)
        fail_msg("KUBERNETES_EXEC_INFO is not JSON: %s", info);
    assert_string_equal(json_string_value(json_object_get(j, "kind")), "ExecCredential");
    assert_string_equal(json_string_value(json_object_get(j, "apiVersion")), V1);
    json_t *spec = json_object_get(j, "spec");
    assert_true(json_is_false(json_object_get(spec, "interactive")));
    json_t *cl = json_object_get(spec, "cluster");
    assert_string_equal(json_string_value(json_object_get(cl, "server")), "https://127.0.0.1:9");
    assert_string_equal(json_string_value(json_object_get(cl, "tls-server-name")), "api.test");
    assert_string_equal(
        json_string_value(json_object_get(cl, "certificate-authority-data")),
        "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=");
    json_decref(j);
    free(info);
    kube_rest_config_free(c);
    free(y);
    free(cmd);
}

static void expect_run_err(const struct kube_exec_config *x, const struct exec_cred_opts *o,
                           int code, const char *needle)
{
    struct exec_cred out;
    struct err e;
    err_clear(&e);
    int rc = exec_cred_run_opts(x, o, &out, &e);
    if (rc != code)
        fail_msg("rc %d (%s), want %d", rc, e.msg, code);
    if (!strstr(e.msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, needle);
    assert_null(out.token);
}

static void test_failures(void **state)
{
    struct fx *f = *state;
    struct kube_exec_config x = {.api_version = V1, .install_hint = "install it from example.com"};

    x.command = plugin(f, "failing",
                       "echo 'some progress' >&2; echo\n"
                       "echo 'error: you are not logged in' >&2; exit 3");
    expect_run_err(&x, NULL, -EIO, "exit status 3: some progress; install it from example.com");
    free(x.command);

    x.command = plugin(f, "garbage", "echo 'hello, I am not JSON'");
    expect_run_err(&x, NULL, -EINVAL, "output is not a JSON ExecCredential");
    free(x.command);

    x.command = plugin(f, "wrongkind", "echo '{\"apiVersion\":\"" V1 "\",\"kind\":\"Pod\"}'");
    expect_run_err(&x, NULL, -EINVAL, "output is not an ExecCredential (kind Pod)");
    free(x.command);

    x.command = plugin(f, "wrongver",
                       "echo '{\"apiVersion\":\"client.authentication.k8s.io/"
                       "v1beta1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":"
                       "\"t\"}}'");
    expect_run_err(&x, NULL, -EINVAL,
                   "is configured to use API version " V1
                   ", plugin returned version client.authentication.k8s.io/v1beta1");
    free(x.command);

    x.command =
        plugin(f, "nostatus",
               "echo '{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{}}'");
    expect_run_err(&x, NULL, -EINVAL, "neither a token nor a client certificate");
    free(x.command);

    x.command = plugin(f, "badexp",
                       "echo '{\"apiVersion\":\"" V1
                       "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
                       "\"expirationTimestamp\":\"tomorrow\"}}'");
    expect_run_err(&x, NULL, -EINVAL, "status.expirationTimestamp \"tomorrow\" is not RFC 3339");
    free(x.command);

    x.command = plugin(f, "halfcert",
                       "echo '{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{"
                       "\"clientCertificateData\":\"C\"}}'");
    expect_run_err(&x, NULL, -EINVAL, "must be given together");
    free(x.command);

    /* Too much output. */
    x.command = plugin(f, "chatty",
                       "i=0; while [ $i -lt 200 ]; do echo "
                       "0123456789012345678901234567890123456789; i=$((i+1)); done");
    struct exec_cred_opts small = {.max_output = 1000};
    expect_run_err(&x, &small, -E2BIG, "output larger than 1000 bytes");
    free(x.command);

    /* Not found, with the install hint; not executable. */
    x.command = xasprintf("%s/no-such-plugin", f->dir);
    expect_run_err(&x, NULL, -ENOENT, "executable not found; install it from example.com");
    free(x.command);
    x.command = "kks-surely-not-on-path-plugin";
    expect_run_err(&x, NULL, -ENOENT, "\"kks-surely-not-on-path-plugin\": executable not found");
    x.command = xasprintf("%s/notexec", f->dir);
    FILE *fp = fopen(x.command, "w");
    fputs("#!/bin/sh\n", fp);
    fclose(fp);
    expect_run_err(&x, NULL, -ENOENT, "executable not found");
    free(x.command);
}

/* The process is gone: no such pid, or a zombie nobody reaped yet (it is dead). */
static bool pid_gone(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return true;
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* the state follows the command's name */
    return paren && paren[1] == ' ' && paren[2] == 'Z';
}

static void test_hanging_plugin(void **state)
{
    struct fx *f = *state;
    struct kube_exec_config x = {.api_version = V1};
    /* The child `sleep` keeps stdout open: the whole process group must be killed. Were it
     * not, the call would end only with the sleep, and the script would write `late`; so the
     * sleep must die (waited for) and `late` never appear, whatever the machine's load. */
    char *body = xasprintf("sleep 30 & echo $! > '%s/sleep.pid'; wait; echo late > '%s/late'",
                           f->dir, f->dir);
    x.command = plugin(f, "hang", body);
    free(body);
    struct exec_cred_opts o = {.timeout_ms = 300};
    expect_run_err(&x, &o, -ETIMEDOUT, "no answer within 300 ms, killed");
    char *pid_s = slurp(f, "sleep.pid");
    pid_t pid = (pid_t)strtol(pid_s, NULL, 10);
    free(pid_s);
    assert_true(pid > 1);
    double t0 = clock_mono_s();
    while (!pid_gone(pid) && clock_mono_s() - t0 < 20.0) /* a guard, not a bound */
        usleep(10 * 1000);
    assert_true(pid_gone(pid));
    char *late = xasprintf("%s/late", f->dir);
    assert_int_equal(access(late, F_OK), -1);
    free(late);
    /* Through the rest config, with its configurable bound. */
    char *y = exec_kubeconfig(f, x.command, "");
    struct kube_rest_config *c = load(y);
    c->exec_timeout_ms = 200;
    const char *tok;
    struct err e;
    assert_int_equal(kube_rest_config_token(c, &tok, &e), -ETIMEDOUT);
    kube_rest_config_free(c);
    free(y);
    free(x.command);
}

static void test_path_lookup_and_cert_answer(void **state)
{
    struct fx *f = *state;
    char *p =
        plugin(f, "kks-cert-plugin",
               "n=$(cat \"$DIR/count\" 2>/dev/null || echo 0); echo $((n+1)) > \"$DIR/count\"\n"
               "printf '{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\",\"status\":{"
               "\"clientCertificateData\":\"CERT\",\"clientKeyData\":\"KEY\"}}' "
               "\"${API:-client.authentication.k8s.io/v1}\"");
    free(p);
    /* A command without '/' is looked up in PATH (here: only the temp dir). */
    char *path_env = xasprintf("PATH=/nonexistent:%s", f->dir);
    char *dir_env = xasprintf("DIR=%s", f->dir);
    char *base[] = {path_env, NULL};
    char *add[] = {dir_env, "API=client.authentication.k8s.io/v1beta1", NULL};
    struct kube_exec_config x = {.command = "kks-cert-plugin",
                                 .api_version = "client.authentication.k8s.io/v1beta1",
                                 .env = add};
    struct exec_cred_opts o = {.base_env = base};
    struct exec_cred out;
    struct err e;
    if (exec_cred_run_opts(&x, &o, &out, &e) != 0)
        fail_msg("%s", e.msg);
    assert_null(out.token);
    assert_string_equal(out.cert_pem, "CERT");
    assert_string_equal(out.key_pem, "KEY");
    assert_int_equal(out.expiry, 0);
    exec_cred_clear(&out);
    assert_null(out.cert_pem);

    /* Through the rest config: a certificate-only answer is cached too. */
    char *cmd = xasprintf("%s/kks-cert-plugin", f->dir);
    char *y = exec_kubeconfig(f, cmd, "");
    struct kube_rest_config *c = load(y);
    const char *tok = "x";
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_null(tok);
    assert_string_equal(c->exec_cert_pem, "CERT");
    assert_string_equal(c->exec_key_pem, "KEY");
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_int_equal(run_count(f), 2); /* one run above, one here */
    kube_rest_config_free(c);
    free(y);
    free(cmd);
    free(path_env);
    free(dir_env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_token_and_expiry_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_args_and_exec_info, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hanging_plugin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_lookup_and_cert_answer, setup, teardown),
    };
    return cmocka_run_group_tests_name("exec_cred", tests, NULL, NULL);
}
