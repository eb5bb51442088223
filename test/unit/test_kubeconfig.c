/* Unit tests for pkg/kube/kubeconfig, pkg/kube/incluster and pkg/kube/kfile. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#define _XOPEN_SOURCE_EXTENDED 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pkg/kube/incluster.h"
#include "pkg/kube/kfile.h"
#include "pkg/kube/kubeconfig.h"
#include "pkg/kube/restconfig.h"
#include "pkg/util/log.h"
#include "pkg/util/xalloc.h"
#include "test/support/tdir.h"

#define CA_PEM   "-----BEGIN CERTIFICATE-----\nMIIBCAFAKE\n-----END CERTIFICATE-----\n"
#define CERT_PEM "-----BEGIN CERTIFICATE-----\nMIIBCLIENT\n-----END CERTIFICATE-----\n"
#define KEY_PEM  "-----BEGIN EC PRIVATE KEY-----\nMHcKEY\n-----END EC PRIVATE KEY-----\n"
/* base64 of the three PEM blocks above */
#define CA_B64                                                                                     \
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJDQUZBS0UKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
#define CERT_B64                                                                                   \
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJDTElFTlQKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
#define KEY_B64                                                                                    \
    "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0tFWQotLS0tLUVORCBFQyBQUklWQVRFIEtFWS0tLS0tCg=="

struct fx {
    char dir[64];
};

static int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof *f);
    if (tdir_make(f->dir, sizeof f->dir, "kks-kubeconfig") < 0)
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

/* Write `content` to DIR/name (creating one level of subdirectory), return the path (new). */
static char *put(struct fx *f, const char *name, const char *content)
{
    char *path = xasprintf("%s/%s", f->dir, name);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdir(path, 0700);
    *slash = '/';
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(content, fp);
    fclose(fp);
    return path;
}

static const char *k_single = "apiVersion: v1\n"
                              "kind: Config\n"
                              "preferences: {}\n"
                              "clusters:\n"
                              "- name: prod\n"
                              "  cluster:\n"
                              "    server: https://10.0.0.1:6443/\n"
                              "    certificate-authority-data: " CA_B64 "\n"
                              "    tls-server-name: api.internal\n"
                              "users:\n"
                              "- name: admin\n"
                              "  user:\n"
                              "    token: secret-token\n"
                              "contexts:\n"
                              "- name: prod-admin\n"
                              "  context:\n"
                              "    cluster: prod\n"
                              "    user: admin\n"
                              "    namespace: team-a\n"
                              "current-context: prod-admin\n";

static void test_single_file(void **state)
{
    struct fx *f = *state;
    char *path = put(f, "config", k_single);
    struct kubeconfig_opts o = {.explicit_path = path};
    struct kube_rest_config *c = NULL;
    char *ns = NULL;
    struct err e;
    int rc = kubeconfig_load(&o, &c, &ns, &e);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://10.0.0.1:6443");
    assert_string_equal(c->tls_server_name, "api.internal");
    assert_int_equal(c->ca_len, strlen(CA_PEM));
    assert_memory_equal(c->ca_pem, CA_PEM, c->ca_len);
    assert_false(c->insecure_skip_tls_verify);
    assert_null(c->cert_pem);
    assert_null(c->exec);
    assert_string_equal(ns, "team-a");
    const char *tok = NULL;
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "secret-token");
    char *want_src = xasprintf("kubeconfig %s, context prod-admin", path);
    assert_string_equal(c->source, want_src);
    free(want_src);
    kube_rest_config_free(c);
    free(ns);
    free(path);
}

static void test_merge_kubeconfig_list(void **state)
{
    struct fx *f = *state;
    char *a = put(f, "a.yaml",
                  "current-context: ctx-a\n"
                  "clusters:\n"
                  "- {name: shared, cluster: {server: 'https://a.example:6443'}}\n"
                  "users:\n"
                  "- {name: u, user: {token: token-a}}\n"
                  "contexts:\n"
                  "- {name: ctx-a, context: {cluster: shared, user: u}}\n");
    char *b = put(f, "b.yaml",
                  "current-context: ctx-b\n"
                  "clusters:\n"
                  "- {name: shared, cluster: {server: 'https://b.example:6443'}}\n"
                  "- {name: only-b, cluster: {server: 'https://only-b.example'}}\n"
                  "users:\n"
                  "- {name: u, user: {token: token-b}}\n"
                  "- {name: v, user: {token: token-v}}\n"
                  "contexts:\n"
                  "- {name: ctx-a, context: {cluster: only-b, user: v}}\n"
                  "- {name: ctx-b, context: {cluster: only-b, user: u, namespace: nsb}}\n");
    char *missing = xasprintf("%s/does-not-exist", f->dir);
    char *list = xasprintf("%s::%s:%s:%s", missing, a, b, a);
    struct kubeconfig_opts o = {.env_kubeconfig = list};
    struct kube_rest_config *c = NULL;
    char *ns = NULL;
    struct err e;
    const char *tok;

    /* a.yaml comes first: its current-context, cluster "shared", user "u", context "ctx-a" win. */
    if (kubeconfig_load(&o, &c, &ns, &e) != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://a.example:6443");
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "token-a");
    assert_string_equal(ns, "default");
    kube_rest_config_free(c);
    free(ns);

    /* --context picks b.yaml's context; its user "u" still resolves to a.yaml's. */
    o.context = "ctx-b";
    if (kubeconfig_load(&o, &c, &ns, &e) != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://only-b.example");
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "token-a");
    assert_string_equal(ns, "nsb");
    kube_rest_config_free(c);
    free(ns);

    /* Reversed order: b.yaml wins everything. */
    char *rev = xasprintf("%s:%s", b, a);
    o.env_kubeconfig = rev;
    o.context = NULL;
    if (kubeconfig_load(&o, &c, NULL, &e) != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://only-b.example");
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "token-b");
    kube_rest_config_free(c);

    /* --kubeconfig overrides KUBECONFIG, and must exist. */
    o.explicit_path = a;
    if (kubeconfig_load(&o, &c, NULL, &e) != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://a.example:6443");
    kube_rest_config_free(c);
    o.explicit_path = missing;
    assert_int_equal(kubeconfig_load(&o, &c, NULL, &e), -ENOENT);
    assert_null(c);
    assert_non_null(strstr(e.msg, "does-not-exist"));

    /* Only missing files: nothing found. */
    o.explicit_path = NULL;
    o.env_kubeconfig = missing;
    assert_int_equal(kubeconfig_load(&o, &c, NULL, &e), -ENOENT);
    assert_non_null(strstr(e.msg, "no kubeconfig found"));

    /* Default: $HOME/.kube/config. */
    free(put(f, ".kube/config", k_single));
    o.env_kubeconfig = NULL;
    o.home = f->dir;
    if (kubeconfig_load(&o, &c, NULL, &e) != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://10.0.0.1:6443");
    kube_rest_config_free(c);

    free(rev);
    free(list);
    free(missing);
    free(a);
    free(b);
}

static void test_relative_paths(void **state)
{
    struct fx *f = *state;
    free(put(f, "sub/ca.crt", CA_PEM));
    free(put(f, "sub/client.crt", CERT_PEM));
    free(put(f, "sub/client.key", KEY_PEM));
    free(put(f, "sub/token", "file-token\n"));
    char *path = put(f, "sub/kubeconfig",
                     "clusters:\n"
                     "- name: c\n"
                     "  cluster:\n"
                     "    server: 10.1.2.3:6443\n"
                     "    certificate-authority: ca.crt\n"
                     "users:\n"
                     "- name: u\n"
                     "  user:\n"
                     "    client-certificate: client.crt\n"
                     "    client-key: ./client.key\n"
                     "    tokenFile: token\n"
                     "contexts:\n"
                     "- {name: x, context: {cluster: c, user: u}}\n"
                     "current-context: x\n");
    struct kubeconfig_opts o = {.explicit_path = path};
    struct kube_rest_config *c = NULL;
    struct err e;
    if (kubeconfig_load(&o, &c, NULL, &e) != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://10.1.2.3:6443"); /* no scheme means https */
    assert_memory_equal(c->ca_pem, CA_PEM, c->ca_len);
    assert_int_equal(c->cert_len, strlen(CERT_PEM));
    assert_memory_equal(c->cert_pem, CERT_PEM, c->cert_len);
    assert_int_equal(c->key_len, strlen(KEY_PEM));
    assert_memory_equal(c->key_pem, KEY_PEM, c->key_len);
    char *want = xasprintf("%s/sub/token", f->dir);
    assert_string_equal(c->token_file, want);
    const char *tok;
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "file-token");
    free(want);
    kube_rest_config_free(c);
    free(path);

    /* A missing referenced file names the field and the resolved path. */
    path = put(f, "sub/k2",
               "clusters: [{name: c, cluster: {server: https://x, "
               "certificate-authority: nope.crt}}]\n"
               "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n");
    o.explicit_path = path;
    assert_int_equal(kubeconfig_load(&o, &c, NULL, &e), -ENOENT);
    char *msg = xasprintf("kubeconfig %s: clusters[0].cluster.certificate-authority: cannot read "
                          "%s/sub/nope.crt",
                          path, f->dir);
    if (!strstr(e.msg, msg))
        fail_msg("got %s", e.msg);
    free(msg);
    free(path);
}

static void test_data_fields_and_base64(void **state)
{
    struct fx *f = *state;
    const char *good =
        "clusters: [{name: c, cluster: {server: https://h, "
        "certificate-authority-data: " CA_B64 "}}]\n"
        "users:\n"
        "- name: u\n"
        "  user:\n"
        "    client-certificate-data: " CERT_B64 "\n"
        "    client-key-data: |\n"
        "      LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0tFWQotLS0tLUVORCBFQyBQ\n"
        "      UklWQVRFIEtFWS0tLS0tCg==\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "current-context: x\n";
    struct kube_rest_config *c = NULL;
    struct err e;
    if (kubeconfig_load_data(good, strlen(good), "secret ns/w1", NULL, 0, NULL, &c, NULL, &e) != 0)
        fail_msg("%s", e.msg);
    assert_memory_equal(c->cert_pem, CERT_PEM, c->cert_len);
    assert_int_equal(c->key_len, strlen(KEY_PEM));
    assert_memory_equal(c->key_pem, KEY_PEM, c->key_len);
    kube_rest_config_free(c);

    const char *bad = "clusters: [{name: c, cluster: {server: https://h}}]\n"
                      "users:\n"
                      "- name: u\n"
                      "  user:\n"
                      "    client-certificate-data: " CERT_B64 "\n"
                      "    client-key-data: 'not*base64!'\n"
                      "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                      "current-context: x\n";
    char *path = put(f, "bad", bad);
    struct kubeconfig_opts o = {.explicit_path = path};
    assert_int_equal(kubeconfig_load(&o, &c, NULL, &e), -EINVAL);
    assert_null(c);
    char *want = xasprintf("kubeconfig %s: users[0].user.client-key-data: invalid base64", path);
    assert_string_equal(e.msg, want);
    free(want);
    free(path);

    /* Valid base64 that is not PEM; unpadded base64. */
    const char *notpem = "clusters: [{name: c, cluster: {server: https://h, "
                         "certificate-authority-data: aGVsbG8=}}]\n"
                         "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n";
    assert_int_equal(kubeconfig_load_data(notpem, strlen(notpem), "m", NULL, 0, NULL, &c, NULL, &e),
                     -EINVAL);
    assert_string_equal(e.msg, "kubeconfig m: clusters[0].cluster.certificate-authority-data: not "
                               "a PEM-encoded certificate");
    const char *unpadded = "clusters: [{name: c, cluster: {server: https://h, "
                           "certificate-authority-data: aGVsbG8}}]\n"
                           "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n";
    assert_int_equal(
        kubeconfig_load_data(unpadded, strlen(unpadded), "m", NULL, 0, NULL, &c, NULL, &e),
        -EINVAL);
    assert_non_null(strstr(e.msg, "invalid base64"));
}

static void expect_load_err_flags(const char *yaml, const char *context, unsigned flags, int code,
                                  const char *msg)
{
    struct kube_rest_config *c = NULL;
    char *ns = NULL;
    struct err e;
    int rc = kubeconfig_load_data(yaml, strlen(yaml), "mem", context, flags, NULL, &c, &ns, &e);
    if (rc != code)
        fail_msg("rc %d (%s), want %d", rc, rc ? e.msg : "ok", code);
    assert_null(c);
    assert_null(ns);
    if (!strstr(e.msg, msg))
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, msg);
}

static void expect_load_err(const char *yaml, const char *context, int code, const char *msg)
{
    expect_load_err_flags(yaml, context, 0, code, msg);
}

static void test_missing_references(void **state)
{
    (void)state;
    const char *y = "clusters: [{name: c, cluster: {server: https://h}}]\n"
                    "users: [{name: u, user: {token: t}}]\n"
                    "contexts:\n"
                    "- {name: no-user, context: {cluster: c, user: bob}}\n"
                    "- {name: no-cluster, context: {cluster: zz, user: u}}\n"
                    "- {name: empty, context: {}}\n"
                    "- {name: anon, context: {cluster: c}}\n";
    expect_load_err(y, "dev", -EINVAL, "kubeconfig mem: context \"dev\" not found");
    expect_load_err(y, "no-user", -EINVAL,
                    "kubeconfig mem: context \"no-user\": user \"bob\" not found");
    expect_load_err(y, "no-cluster", -EINVAL,
                    "kubeconfig mem: context \"no-cluster\": cluster \"zz\" not found");
    expect_load_err(y, "empty", -EINVAL, "kubeconfig mem: context \"empty\": no cluster set");
    expect_load_err(y, NULL, -EINVAL, "kubeconfig mem: no current-context is set");
    /* A context without a user: no credentials, still valid. */
    struct kube_rest_config *c = NULL;
    struct err e;
    assert_int_equal(kubeconfig_load_data(y, strlen(y), "mem", "anon", 0, NULL, &c, NULL, &e), 0);
    const char *tok = "x";
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_null(tok);
    kube_rest_config_free(c);
    /* Structure errors. */
    expect_load_err("clusters: {a: b}\n", NULL, -EINVAL,
                    "kubeconfig mem: clusters: expected a list");
    expect_load_err("users: [{user: {token: t}}]\n", NULL, -EINVAL,
                    "kubeconfig mem: users[0].name: missing");
    expect_load_err("users: [{name: a}, {name: a}]\n", NULL, -EINVAL,
                    "kubeconfig mem: users[1]: duplicate name \"a\"");
    expect_load_err("[1, 2]\n", NULL, -EINVAL,
                    "kubeconfig mem: expected a mapping at the top level");
    expect_load_err("clusters: [{name: c, cluster: {server: [1]}}]\n"
                    "contexts: [{name: x, context: {cluster: c}}]\n",
                    "x", -EINVAL, "kubeconfig mem: clusters[0].cluster.server: expected a string");
    expect_load_err("clusters: [{name: c, cluster: {}}]\n"
                    "contexts: [{name: x, context: {cluster: c}}]\n",
                    "x", -EINVAL, "kubeconfig mem: clusters[0].cluster.server: missing");
    expect_load_err("clusters: [{name: c, cluster: {server: 'ftp://h'}}]\n"
                    "contexts: [{name: x, context: {cluster: c}}]\n",
                    "x", -EINVAL, "unsupported URL scheme");
    /* Found by fuzzing: a scheme with no host must not walk into the scheme. */
    expect_load_err("clusters: [{name: c, cluster: {server: 'https://'}}]\n"
                    "contexts: [{name: x, context: {cluster: c}}]\n",
                    "x", -EINVAL, "no host in \"https://\"");
    expect_load_err("clusters: [{name: c, cluster: {server: 'https:///'}}]\n"
                    "contexts: [{name: x, context: {cluster: c}}]\n",
                    "x", -EINVAL, "no host");
}

static void test_yaml_syntax_error(void **state)
{
    struct fx *f = *state;
    char *path = put(f, "broken", "clusters:\n- name: c\n  cluster: {server: [\n");
    struct kubeconfig_opts o = {.explicit_path = path};
    struct kube_rest_config *c = NULL;
    struct err e;
    assert_int_equal(kubeconfig_load(&o, &c, NULL, &e), -EINVAL);
    char *want = xasprintf("kubeconfig %s:4:1: YAML syntax error: ", path);
    if (strncmp(e.msg, want, strlen(want)) != 0)
        fail_msg("got %s", e.msg);
    free(want);
    free(path);
    expect_load_err("a: b\n  c: d\n", NULL, -EINVAL,
                    "kubeconfig mem:2:4: YAML syntax error: mapping values are not allowed");
}

static void test_unsupported_and_conflicts(void **state)
{
    (void)state;
    const char *head = "clusters: [{name: c, cluster: {server: https://h}}]\n"
                       "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                       "current-context: x\n";
    const unsigned all = KUBECONFIG_ALLOW_FILES | KUBECONFIG_ALLOW_EXEC;
    char *y = xasprintf("%susers: [{name: u, user: {username: a, password: b}}]\n", head);
    expect_load_err(y, NULL, -ENOTSUP, "users[0].user.username: basic authentication");
    free(y);
    y = xasprintf("%susers: [{name: u, user: {auth-provider: {name: oidc}}}]\n", head);
    expect_load_err(y, NULL, -ENOTSUP, "users[0].user.auth-provider: auth-provider plugins (oidc)");
    free(y);
    y = xasprintf("%susers: [{name: u, user: {token: t, as: root}}]\n", head);
    expect_load_err(y, NULL, -ENOTSUP, "users[0].user.as: impersonation");
    free(y);
    y = xasprintf("%susers: [{name: u, user: {client-certificate-data: " CERT_B64 "}}]\n", head);
    expect_load_err(y, NULL, -EINVAL, "users[0].user.client-key: missing");
    free(y);
    y = xasprintf("%susers: [{name: u, user: {exec: {command: p, apiVersion: "
                  "client.authentication.k8s.io/v1}}}]\n",
                  head);
    expect_load_err_flags(y, NULL, all, -EINVAL, "users[0].user.exec.interactiveMode: must be set");
    free(y);
    y = xasprintf("%susers: [{name: u, user: {exec: {command: p, apiVersion: "
                  "client.authentication.k8s.io/v1alpha1}}}]\n",
                  head);
    expect_load_err_flags(
        y, NULL, all, -EINVAL,
        "users[0].user.exec.apiVersion: \"client.authentication.k8s.io/v1alpha1\" is "
        "not supported");
    free(y);
    y = xasprintf("%susers: [{name: u, user: {exec: {command: ./bin/p, apiVersion: "
                  "client.authentication.k8s.io/v1beta1}}}]\n",
                  head);
    expect_load_err_flags(y, NULL, all, -EINVAL,
                          "users[0].user.exec.command: relative path \"./bin/p\"");
    /* In-memory kubeconfigs may not run programs or read files unless allowed. */
    expect_load_err(y, NULL, -EPERM,
                    "kubeconfig mem: users[0].user.exec: exec plugins are not allowed");
    free(y);
    y = xasprintf("%susers: [{name: u, user: {tokenFile: tok}}]\n", head);
    expect_load_err_flags(y, NULL, all, -EINVAL, "users[0].user.tokenFile: relative path \"tok\"");
    free(y);
    y = xasprintf("%susers: [{name: u, user: {tokenFile: "
                  "/var/run/secrets/kubernetes.io/serviceaccount/token}}]\n",
                  head);
    expect_load_err(y, NULL, -EPERM, "users[0].user.tokenFile: file references are not allowed");
    struct kube_rest_config *c = NULL;
    struct err e;
    assert_int_equal(
        kubeconfig_load_data(y, strlen(y), "mem", NULL, KUBECONFIG_ALLOW_FILES, NULL, &c, NULL, &e),
        0);
    assert_string_equal(c->token_file, "/var/run/secrets/kubernetes.io/serviceaccount/token");
    kube_rest_config_free(c);
    free(y);
    expect_load_err("clusters: [{name: c, cluster: {server: https://h, insecure-skip-tls-verify: "
                    "true, certificate-authority-data: " CA_B64 "}}]\n"
                    "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
                    NULL, -EINVAL,
                    "clusters[0].cluster: certificate-authority and insecure-skip-tls-verify "
                    "cannot both be set");
}

static void test_insecure_proxy_and_exec_fields(void **state)
{
    struct fx *f = *state;
    char *path = put(f, "k",
                     "clusters:\n"
                     "- name: c\n"
                     "  cluster:\n"
                     "    server: http://127.0.0.1:8080\n"
                     "    insecure-skip-tls-verify: yes\n" /* YAML 1.1 bool, as kubectl */
                     "    proxy-url: http://proxy:3128\n"
                     "users:\n"
                     "- name: u\n"
                     "  user:\n"
                     "    exec:\n"
                     "      apiVersion: client.authentication.k8s.io/v1\n"
                     "      command: bin/get-token\n"
                     "      args: [--cluster, c1, 42]\n"
                     "      env: [{name: FOO, value: bar}, {name: EMPTY}]\n"
                     "      installHint: install get-token from example.com\n"
                     "      provideClusterInfo: true\n"
                     "      interactiveMode: Never\n"
                     "contexts: [{name: x, context: {cluster: c, user: u, namespace: 7}}]\n"
                     "current-context: x\n");
    char *logbuf = NULL;
    size_t loglen = 0;
    FILE *lf = open_memstream(&logbuf, &loglen);
    struct logger lg;
    log_init(&lg, lf, 0, LOG_FMT_TEXT);
    struct kubeconfig_opts o = {.explicit_path = path, .lg = &lg};
    struct kube_rest_config *c = NULL;
    char *ns = NULL;
    struct err e;
    if (kubeconfig_load(&o, &c, &ns, &e) != 0)
        fail_msg("%s", e.msg);
    fclose(lf);
    assert_non_null(strstr(logbuf, "proxy-url is not supported"));
    assert_true(c->insecure_skip_tls_verify);
    assert_string_equal(c->server, "http://127.0.0.1:8080");
    assert_string_equal(ns, "7");
    assert_non_null(c->exec);
    char *cmd = xasprintf("%s/bin/get-token", f->dir);
    assert_string_equal(c->exec->command, cmd);
    assert_string_equal(c->exec->args[0], "--cluster");
    assert_string_equal(c->exec->args[1], "c1");
    assert_string_equal(c->exec->args[2], "42");
    assert_null(c->exec->args[3]);
    assert_string_equal(c->exec->env[0], "FOO=bar");
    assert_string_equal(c->exec->env[1], "EMPTY=");
    assert_null(c->exec->env[2]);
    assert_string_equal(c->exec->install_hint, "install get-token from example.com");
    assert_true(c->exec->provide_cluster_info);
    assert_string_equal(c->exec->interactive_mode, "Never");
    /* The deep copy keeps everything. */
    struct kube_rest_config *d = kube_rest_config_dup(c);
    assert_string_equal(d->exec->command, cmd);
    assert_string_equal(d->exec->env[0], "FOO=bar");
    kube_rest_config_free(d);
    free(cmd);
    free(ns);
    free(logbuf);
    kube_rest_config_free(c);
    free(path);
}

static void test_in_cluster(void **state)
{
    struct fx *f = *state;
    free(put(f, "sa/token", "tok-1\n"));
    free(put(f, "sa/ca.crt", CA_PEM));
    free(put(f, "sa/namespace", "kueue-system\n"));
    char *sa = xasprintf("%s/sa", f->dir);
    struct incluster_opts io = {.host = "10.96.0.1", .port = "443", .dir = sa};
    struct kube_rest_config *c = NULL;
    char *ns = NULL;
    struct err e;
    if (incluster_load(&io, &c, &ns, &e) != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://10.96.0.1:443");
    assert_string_equal(ns, "kueue-system");
    assert_memory_equal(c->ca_pem, CA_PEM, c->ca_len);
    /* the change detection itself, checked at every call (by default at
     * most once a second: test_client test_token_file_size_and_recheck) */
    c->token_file_recheck_s = -1;
    const char *tok;
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "tok-1");
    /* kubelet rotates the token: the next call sees the new one (size changes too). */
    free(put(f, "sa/token", "tok-rotated\n"));
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "tok-rotated");
    /* Same size, new content: detected by the mtime (set explicitly to be independent of clock
     * granularity). */
    char *tp = put(f, "sa/token", "tok-rotatex\n");
    struct timespec ts[2] = {{.tv_sec = 1000, .tv_nsec = 0}, {.tv_sec = 1000, .tv_nsec = 0}};
    assert_int_equal(utimensat(AT_FDCWD, tp, ts, 0), 0);
    assert_int_equal(kube_rest_config_token(c, &tok, &e), 0);
    assert_string_equal(tok, "tok-rotatex");
    free(tp);
    kube_rest_config_free(c);
    free(ns);

    /* IPv6 service host is bracketed; no namespace file means "default". */
    char *ns_path = xasprintf("%s/sa/namespace", f->dir);
    unlink(ns_path);
    free(ns_path);
    io.host = "fd00::1";
    if (incluster_load(&io, &c, &ns, &e) != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://[fd00::1]:443");
    assert_string_equal(ns, "default");
    kube_rest_config_free(c);
    free(ns);

    /* Fallback from kubeconfig_load when no kubeconfig exists. */
    struct kubeconfig_opts o = {
        .home = "/nonexistent-home", .allow_in_cluster = true, .in_cluster = io};
    if (kubeconfig_load(&o, &c, &ns, &e) != 0)
        fail_msg("%s", e.msg);
    assert_string_equal(c->source, "in-cluster config");
    kube_rest_config_free(c);
    free(ns);
    o.allow_in_cluster = false;
    assert_int_equal(kubeconfig_load(&o, &c, NULL, &e), -ENOENT);
    assert_non_null(strstr(e.msg, "/nonexistent-home/.kube/config"));

    /* Not in a pod; a missing token file. */
    struct incluster_opts none = {0};
    assert_int_equal(incluster_load(&none, &c, NULL, &e), -ENOENT);
    assert_non_null(strstr(e.msg, "KUBERNETES_SERVICE_HOST"));
    char *tok_path = xasprintf("%s/sa/token", f->dir);
    unlink(tok_path);
    assert_int_equal(incluster_load(&io, &c, NULL, &e), -ENOENT);
    assert_non_null(strstr(e.msg, tok_path));
    free(tok_path);
    free(sa);
}

static void test_kfile(void **state)
{
    struct fx *f = *state;
    char *p = put(f, "big", "0123456789");
    char *d = NULL;
    size_t n = 0;
    struct err e;
    assert_int_equal(kfile_read(p, 10, &d, &n, &e), 0);
    assert_int_equal(n, 10);
    assert_string_equal(d, "0123456789");
    free(d);
    assert_int_equal(kfile_read(p, 9, &d, &n, &e), -E2BIG);
    assert_null(d);
    assert_int_equal(kfile_read(f->dir, 9, &d, &n, &e), -EISDIR);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_single_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_kubeconfig_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relative_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_data_fields_and_base64, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_references, setup, teardown),
        cmocka_unit_test_setup_teardown(test_yaml_syntax_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsupported_and_conflicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_insecure_proxy_and_exec_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_cluster, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kfile, setup, teardown),
    };
    return cmocka_run_group_tests_name("kubeconfig", tests, NULL, NULL);
}
