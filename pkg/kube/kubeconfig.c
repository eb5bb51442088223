#include "pkg/kube/kubeconfig.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/kube/exec_cred.h"
#include "pkg/kube/kfile.h"
#include "pkg/util/b64.h"
#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"
#include "pkg/yaml/yaml2json.h"

#define API_V1      "client.authentication.k8s.io/v1"
#define API_V1BETA1 "client.authentication.k8s.io/v1beta1"

/* One loaded kubeconfig file (or in-memory text). */
struct kc_file {
    char *label; /* path, or the in-memory source name */
    char *dir;   /* directory for relative paths; NULL = relative paths are an error */
    json_t *doc;
};

/* The merged view of all files. Map values are [body, file index, list index]. */
struct kc {
    struct kc_file *files;
    size_t nfiles;
    json_t *clusters, *users, *contexts;
    char *current; /* first current-context seen */
    size_t current_file;
    const struct logger *lg;
    unsigned flags; /* KUBECONFIG_ALLOW_*, for in-memory text */
};

/* Where a field lives, for messages: "kubeconfig FILE: SEC[IDX].BODY.FIELD: ..." */
struct where {
    const struct kc *kc;
    const struct kc_file *file;
    const char *sec;  /* "clusters" */
    size_t idx;       /* index in the file's list */
    const char *body; /* "cluster" */
    struct err *e;
};

static int fail(const struct where *w, const char *field, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(const struct where *w, const char *field, int code, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(w->e, code, "kubeconfig %s: %s[%zu].%s%s%s: %s", w->file->label, w->sec, w->idx,
                   w->body, field ? "." : "", field ? field : "", msg);
}

static void kc_free(struct kc *kc)
{
    for (size_t i = 0; i < kc->nfiles; i++) {
        free(kc->files[i].label);
        free(kc->files[i].dir);
        json_decref(kc->files[i].doc);
    }
    free(kc->files);
    json_decref(kc->clusters);
    json_decref(kc->users);
    json_decref(kc->contexts);
    free(kc->current);
}

static void kc_init(struct kc *kc, const struct logger *lg)
{
    memset(kc, 0, sizeof *kc);
    kc->clusters = json_object();
    kc->users = json_object();
    kc->contexts = json_object();
    kc->lg = lg;
}

/*
 * A scalar as a string, the way sigs.k8s.io/yaml coerces numbers and booleans
 * into string fields. Returns 1 with a new string, 0 when absent or null, -1
 * for a mapping or sequence.
 */
static int scalar_str(const json_t *v, char **out)
{
    *out = NULL;
    switch (v ? json_typeof(v) : JSON_NULL) {
    case JSON_NULL:
        return 0;
    case JSON_STRING:
        *out = xstrndup(json_string_value(v), json_string_length(v));
        return 1;
    case JSON_INTEGER:
        *out = xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return 1;
    case JSON_REAL:
        *out = xasprintf("%.17g", json_real_value(v));
        return 1;
    case JSON_TRUE:
        *out = xstrdup("true");
        return 1;
    case JSON_FALSE:
        *out = xstrdup("false");
        return 1;
    default:
        return -1;
    }
}

/* A string field: *out new string or NULL when absent/null/empty. */
static int get_str(const struct where *w, const json_t *obj, const char *field, char **out)
{
    int r = scalar_str(json_object_get(obj, field), out);
    if (r < 0)
        return fail(w, field, -EINVAL, "expected a string");
    if (*out && !**out)
        FREE_AND_NULL(*out);
    return 0;
}

static int get_bool(const struct where *w, const json_t *obj, const char *field, bool *out)
{
    const json_t *v = json_object_get(obj, field);
    *out = false;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return fail(w, field, -EINVAL, "expected true or false");
    *out = json_is_true(v);
    return 0;
}

static bool is_pem(const char *p, size_t n)
{
    return p && memmem(p, n, "-----BEGIN ", 11) != NULL;
}

/* Resolve a path found in `w->file` (new string). */
static int resolve_path(const struct where *w, const char *field, const char *p, char **out)
{
    *out = NULL;
    if (p[0] != '/') {
        if (!w->file->dir)
            return fail(w, field, -EINVAL,
                        "relative path \"%s\" cannot be used in a kubeconfig that is not a file",
                        p);
        *out = xasprintf("%s/%s", w->file->dir, p);
        return 0;
    }
    if (!w->file->dir && !(w->kc->flags & KUBECONFIG_ALLOW_FILES))
        return fail(w, field, -EPERM,
                    "file references are not allowed in a kubeconfig that is not a file (use "
                    "the -data fields)");
    *out = xstrdup(p);
    return 0;
}

/*
 * PEM material from FIELD-data (base64) or FIELD (a file). Sets pem and len
 * (new buffer), or leaves them NULL / 0 when neither field is given. `what`
 * names the material for the PEM check ("certificate", "private key").
 */
static int get_pem(const struct where *w, const json_t *obj, const char *field, const char *what,
                   char **pem, size_t *len)
{
    char data_field[64];
    snprintf(data_field, sizeof data_field, "%s-data", field);
    char *data = NULL, *file = NULL, *path = NULL;
    int rc = get_str(w, obj, data_field, &data);
    if (rc == 0)
        rc = get_str(w, obj, field, &file);
    if (rc < 0)
        goto out;
    if (data) {
        /* Like client-go, the inline data wins over a file reference. */
        if (b64_decode(data, strlen(data), pem, len) < 0) {
            rc = fail(w, data_field, -EINVAL, "invalid base64");
            goto out;
        }
        if (!is_pem(*pem, *len)) {
            rc = fail(w, data_field, -EINVAL, "not a PEM-encoded %s", what);
            goto out;
        }
    } else if (file) {
        rc = resolve_path(w, field, file, &path);
        if (rc < 0)
            goto out;
        struct err fe;
        rc = kfile_read(path, KUBECONFIG_MAX_FILE, pem, len, &fe);
        if (rc < 0) {
            rc = fail(w, field, rc, "%s", fe.msg);
            goto out;
        }
        if (!is_pem(*pem, *len)) {
            rc = fail(w, field, -EINVAL, "%s is not a PEM-encoded %s", path, what);
            goto out;
        }
    }
out:
    if (rc < 0) {
        kfile_wipe_free(*pem, *len);
        *pem = NULL;
        *len = 0;
    }
    if (data)
        explicit_bzero(data, strlen(data));
    free(data);
    free(file);
    free(path);
    return rc;
}

/* ---- loading and merging ------------------------------------------------- */

static const struct {
    const char *sec, *body;
} k_sections[] = {{"clusters", "cluster"}, {"users", "user"}, {"contexts", "context"}};

static json_t *section_map(struct kc *kc, size_t s)
{
    return s == 0 ? kc->clusters : s == 1 ? kc->users : kc->contexts;
}

/* Prefix a yaml2json message with the file, keeping "FILE:LINE:COL: ..." form. */
static void yaml_prefix(struct err *e, const char *label)
{
    if (!e)
        return;
    char old[ERR_MSG_MAX];
    memcpy(old, e->msg, sizeof old);
    bool pos = isdigit((unsigned char)old[0]);
    if (snprintf(e->msg, sizeof e->msg, "kubeconfig %s%s%s", label, pos ? ":" : ": ", old) >=
        (int)sizeof e->msg)
        e->msg[sizeof e->msg - 1] = '\0';
}

/* Parse one file's text and merge it in (first definition of a name wins). */
static int kc_add(struct kc *kc, const char *label, const char *dir, const char *data, size_t len,
                  struct err *e)
{
    struct yaml_limits lim = {
        .max_input = KUBECONFIG_MAX_FILE, .max_depth = 64, .max_alias_nodes = 10000};
    json_t *doc = yaml_to_json(data, len, &lim, e);
    if (!doc) {
        yaml_prefix(e, label);
        return e ? e->code : -EINVAL;
    }
    kc->files = xrealloc(kc->files, (kc->nfiles + 1) * sizeof *kc->files);
    size_t fi = kc->nfiles++;
    struct kc_file *f = &kc->files[fi];
    f->label = xstrdup(label);
    f->dir = dir ? xstrdup(dir) : NULL;
    f->doc = doc;
    if (json_is_null(doc))
        return 0; /* an empty file is an empty config */
    if (!json_is_object(doc))
        return err_set(e, -EINVAL, "kubeconfig %s: expected a mapping at the top level", label);

    int rc = 0;
    for (size_t s = 0; s < 3 && rc == 0; s++) {
        const char *sec = k_sections[s].sec, *body_key = k_sections[s].body;
        json_t *list = json_object_get(doc, sec);
        if (!list || json_is_null(list))
            continue;
        if (!json_is_array(list))
            return err_set(e, -EINVAL, "kubeconfig %s: %s: expected a list", label, sec);
        json_t *seen = json_object();
        for (size_t i = 0; i < json_array_size(list); i++) {
            json_t *item = json_array_get(list, i);
            struct where w = {kc, f, sec, i, "", e};
            char *name = NULL;
            if (!json_is_object(item)) {
                rc = err_set(e, -EINVAL, "kubeconfig %s: %s[%zu]: expected a mapping", label, sec,
                             i);
                break;
            }
            if (scalar_str(json_object_get(item, "name"), &name) < 0 || !name || !*name) {
                free(name);
                rc = err_set(e, -EINVAL, "kubeconfig %s: %s[%zu].name: missing", label, sec, i);
                break;
            }
            json_t *body = json_object_get(item, body_key);
            if (body && !json_is_null(body) && !json_is_object(body)) {
                w.body = body_key;
                rc = fail(&w, NULL, -EINVAL, "expected a mapping");
                free(name);
                break;
            }
            if (json_object_get(seen, name)) {
                rc = err_set(e, -EINVAL, "kubeconfig %s: %s[%zu]: duplicate name \"%s\"", label,
                             sec, i, name);
                free(name);
                break;
            }
            json_object_set_new(seen, name, json_true());
            json_t *map = section_map(kc, s);
            if (!json_object_get(map, name)) {
                json_t *b = body && json_is_object(body) ? json_incref(body) : json_object();
                json_object_set_new(map, name,
                                    json_pack("[o, I, I]", b, (json_int_t)fi, (json_int_t)i));
            }
            free(name);
        }
        json_decref(seen);
    }
    if (rc < 0)
        return rc;
    char *cur = NULL;
    if (scalar_str(json_object_get(doc, "current-context"), &cur) < 0)
        return err_set(e, -EINVAL, "kubeconfig %s: current-context: expected a string", label);
    if (cur && *cur && !kc->current) {
        kc->current = cur;
        kc->current_file = fi;
        cur = NULL;
    }
    free(cur);
    return 0;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

/* Read and merge a file. `must_exist`: a missing file is an error, else skipped (returns 1). */
static int kc_add_file(struct kc *kc, const char *path, bool must_exist, struct err *e)
{
    char *data = NULL;
    size_t len = 0;
    struct err fe;
    int rc = kfile_read(path, KUBECONFIG_MAX_FILE, &data, &len, &fe);
    if (rc == -ENOENT && !must_exist)
        return 1;
    if (rc < 0)
        return err_set(e, rc, "kubeconfig: %s", fe.msg);
    char *dir = dir_of(path);
    rc = kc_add(kc, path, dir, data, len, e);
    free(dir);
    kfile_wipe_free(data, len);
    return rc;
}

/* ---- building the rest config ------------------------------------------- */

static void entry(const json_t *v, json_t **body, size_t *file, size_t *idx)
{
    *body = json_array_get(v, 0);
    *file = (size_t)json_integer_value(json_array_get(v, 1));
    *idx = (size_t)json_integer_value(json_array_get(v, 2));
}

static int build_cluster(struct kc *kc, const json_t *ent, struct kube_rest_config *c,
                         struct err *e)
{
    json_t *body;
    size_t fi, idx;
    entry(ent, &body, &fi, &idx);
    struct where w = {kc, &kc->files[fi], "clusters", idx, "cluster", e};
    char *server = NULL, *proxy = NULL;
    int rc = get_str(&w, body, "server", &server);
    if (rc < 0)
        goto out;
    if (!server) {
        rc = fail(&w, "server", -EINVAL, "missing (the API server's URL)");
        goto out;
    }
    if (!strstr(server, "://")) {
        char *s = xasprintf("https://%s", server); /* like client-go: host[:port] means https */
        free(server);
        server = s;
    }
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0) {
        rc =
            fail(&w, "server", -EINVAL, "unsupported URL scheme in \"%s\" (want https://)", server);
        goto out;
    }
    /* Strip trailing slashes, never into the scheme ("https://" alone has no host). */
    size_t hoff = (size_t)(strstr(server, "://") - server) + 3;
    size_t sl = strlen(server);
    while (sl > hoff && server[sl - 1] == '/')
        server[--sl] = '\0';
    const char *host = server + hoff;
    if (!*host) {
        rc = fail(&w, "server", -EINVAL, "no host in \"%s\"", server);
        goto out;
    }
    c->server = server;
    server = NULL;
    if ((rc = get_str(&w, body, "tls-server-name", &c->tls_server_name)) < 0 ||
        (rc = get_bool(&w, body, "insecure-skip-tls-verify", &c->insecure_skip_tls_verify)) < 0 ||
        (rc = get_pem(&w, body, "certificate-authority", "certificate", &c->ca_pem, &c->ca_len)) <
            0 ||
        (rc = get_str(&w, body, "proxy-url", &proxy)) < 0)
        goto out;
    if (c->ca_pem && c->insecure_skip_tls_verify) {
        rc = fail(&w, NULL, -EINVAL,
                  "certificate-authority and insecure-skip-tls-verify cannot both be set "
                  "(specifying a root certificates file with the insecure flag is not allowed)");
        goto out;
    }
    if (proxy)
        log_warn(kc->lg, "kubeconfig: proxy-url is not supported and is ignored", "file",
                 w.file->label, "cluster_index", LOG_INT(idx));
out:
    free(server);
    free(proxy);
    return rc;
}

static int build_exec(struct kc *kc, const struct where *uw, const json_t *ex,
                      struct kube_rest_config *c)
{
    struct where w = *uw;
    w.body = "user.exec";
    if (!w.file->dir && !(kc->flags & KUBECONFIG_ALLOW_EXEC))
        return fail(&w, NULL, -EPERM,
                    "exec plugins are not allowed in a kubeconfig that is not a file");
    struct kube_exec_config *x = xcalloc(1, sizeof *x);
    char *cmd = NULL;
    int rc = 0;
    if ((rc = get_str(&w, ex, "command", &cmd)) < 0)
        goto out;
    if (!cmd) {
        rc = fail(&w, "command", -EINVAL, "missing");
        goto out;
    }
    if (strchr(cmd, '/') && cmd[0] != '/') { /* exec is allowed: an absolute path is too */
        rc = resolve_path(&w, "command", cmd, &x->command);
        if (rc < 0)
            goto out;
    } else {
        x->command = cmd;
        cmd = NULL;
    }
    if ((rc = get_str(&w, ex, "apiVersion", &x->api_version)) < 0 ||
        (rc = get_str(&w, ex, "installHint", &x->install_hint)) < 0 ||
        (rc = get_bool(&w, ex, "provideClusterInfo", &x->provide_cluster_info)) < 0 ||
        (rc = get_str(&w, ex, "interactiveMode", &x->interactive_mode)) < 0)
        goto out;
    if (!x->api_version) {
        rc = fail(&w, "apiVersion", -EINVAL, "missing (use %s)", API_V1);
        goto out;
    }
    bool v1 = strcmp(x->api_version, API_V1) == 0;
    if (!v1 && strcmp(x->api_version, API_V1BETA1) != 0) {
        rc = fail(&w, "apiVersion", -EINVAL, "\"%s\" is not supported (use %s or %s)",
                  x->api_version, API_V1, API_V1BETA1);
        goto out;
    }
    if (!x->interactive_mode) {
        if (v1) {
            rc = fail(&w, "interactiveMode", -EINVAL, "must be set for %s (Never or IfAvailable)",
                      API_V1);
            goto out;
        }
        x->interactive_mode = xstrdup("IfAvailable");
    } else if (strcmp(x->interactive_mode, "Always") == 0) {
        rc = fail(&w, "interactiveMode", -EINVAL,
                  "Always needs a terminal, which an operator does not have; use Never or "
                  "IfAvailable");
        goto out;
    } else if (strcmp(x->interactive_mode, "Never") != 0 &&
               strcmp(x->interactive_mode, "IfAvailable") != 0) {
        rc = fail(&w, "interactiveMode", -EINVAL, "\"%s\" is not one of Never, IfAvailable",
                  x->interactive_mode);
        goto out;
    }
    json_t *args = json_object_get(ex, "args");
    if (args && !json_is_null(args)) {
        if (!json_is_array(args)) {
            rc = fail(&w, "args", -EINVAL, "expected a list of strings");
            goto out;
        }
        x->args = xcalloc(json_array_size(args) + 1, sizeof(char *));
        for (size_t i = 0; i < json_array_size(args); i++) {
            if (scalar_str(json_array_get(args, i), &x->args[i]) < 0 || !x->args[i]) {
                rc = fail(&w, "args", -EINVAL, "element %zu is not a string", i);
                goto out;
            }
        }
    }
    json_t *env = json_object_get(ex, "env");
    if (env && !json_is_null(env)) {
        if (!json_is_array(env)) {
            rc = fail(&w, "env", -EINVAL, "expected a list of {name, value}");
            goto out;
        }
        x->env = xcalloc(json_array_size(env) + 1, sizeof(char *));
        size_t k = 0;
        for (size_t i = 0; i < json_array_size(env); i++) {
            json_t *it = json_array_get(env, i);
            char *name = NULL, *value = NULL;
            if (!json_is_object(it) || scalar_str(json_object_get(it, "name"), &name) < 0 ||
                !name || !*name || strchr(name, '=') ||
                scalar_str(json_object_get(it, "value"), &value) < 0) {
                free(name);
                free(value);
                rc = fail(&w, "env", -EINVAL, "element %zu: expected {name, value}", i);
                goto out;
            }
            x->env[k++] = xasprintf("%s=%s", name, value ? value : "");
            free(name);
            free(value);
        }
    }
    c->exec = x;
    x = NULL;
out:
    free(cmd);
    kube_exec_config_free(x);
    return rc;
}

static int build_user(struct kc *kc, const json_t *ent, struct kube_rest_config *c, struct err *e)
{
    json_t *body;
    size_t fi, idx;
    entry(ent, &body, &fi, &idx);
    struct where w = {kc, &kc->files[fi], "users", idx, "user", e};
    char *tok_file = NULL;
    int rc = 0;
    static const char *const basic[] = {"username", "password"};
    for (size_t i = 0; i < 2; i++) {
        char *v = NULL;
        if ((rc = get_str(&w, body, basic[i], &v)) < 0)
            return rc;
        bool set = v != NULL;
        if (v)
            explicit_bzero(v, strlen(v));
        free(v);
        if (set)
            return fail(&w, basic[i], -ENOTSUP,
                        "basic authentication (username/password) is not supported; use a token, "
                        "a client certificate or an exec plugin");
    }
    json_t *ap = json_object_get(body, "auth-provider");
    if (ap && !json_is_null(ap)) {
        const char *name = json_string_value(json_object_get(ap, "name"));
        return fail(&w, "auth-provider", -ENOTSUP,
                    "auth-provider plugins (%s) are not supported; use an exec credential "
                    "plugin instead (for example kubelogin or gke-gcloud-auth-plugin)",
                    name ? name : "unnamed");
    }
    static const char *const imp[] = {"as", "as-groups", "as-uid", "as-user-extra"};
    for (size_t i = 0; i < sizeof imp / sizeof imp[0]; i++)
        if (json_object_get(body, imp[i]) && !json_is_null(json_object_get(body, imp[i])))
            return fail(&w, imp[i], -ENOTSUP, "impersonation is not supported");
    if ((rc = get_pem(&w, body, "client-certificate", "certificate", &c->cert_pem, &c->cert_len)) <
            0 ||
        (rc = get_pem(&w, body, "client-key", "private key", &c->key_pem, &c->key_len)) < 0 ||
        (rc = get_str(&w, body, "token", &c->token)) < 0 ||
        (rc = get_str(&w, body, "tokenFile", &tok_file)) < 0)
        goto out;
    if (!c->cert_pem != !c->key_pem) {
        rc = fail(&w, c->cert_pem ? "client-key" : "client-certificate", -EINVAL,
                  "missing: client-certificate(-data) and client-key(-data) must be given "
                  "together");
        goto out;
    }
    if (tok_file && (rc = resolve_path(&w, "tokenFile", tok_file, &c->token_file)) < 0)
        goto out;
    json_t *ex = json_object_get(body, "exec");
    if (ex && !json_is_null(ex)) {
        if (!json_is_object(ex)) {
            rc = fail(&w, "exec", -EINVAL, "expected a mapping");
            goto out;
        }
        rc = build_exec(kc, &w, ex, c);
    }
out:
    free(tok_file);
    return rc;
}

/* True when the merged files give nothing to select (in-cluster fallback applies). */
static bool kc_empty(const struct kc *kc)
{
    return kc->nfiles == 0 || (json_object_size(kc->contexts) == 0 && !kc->current);
}

static int kc_select(struct kc *kc, const char *label, const char *context,
                     struct kube_rest_config **out, char **namespace_out, struct err *e)
{
    const char *name = context && *context ? context : kc->current;
    if (!name)
        return err_set(e, -EINVAL,
                       "kubeconfig %s: no current-context is set; choose one with --context",
                       label);
    json_t *ent = json_object_get(kc->contexts, name);
    if (!ent)
        return err_set(e, -EINVAL, "kubeconfig %s: context \"%s\" not found", label, name);
    json_t *body;
    size_t fi, idx;
    entry(ent, &body, &fi, &idx);
    struct where w = {kc, &kc->files[fi], "contexts", idx, "context", e};
    const char *flabel = kc->files[fi].label;
    char *cluster = NULL, *user = NULL, *ns = NULL;
    struct kube_rest_config *c = NULL;
    int rc;
    if ((rc = get_str(&w, body, "cluster", &cluster)) < 0 ||
        (rc = get_str(&w, body, "user", &user)) < 0 ||
        (rc = get_str(&w, body, "namespace", &ns)) < 0)
        goto out;
    if (!cluster) {
        rc = err_set(e, -EINVAL, "kubeconfig %s: context \"%s\": no cluster set", flabel, name);
        goto out;
    }
    json_t *cl = json_object_get(kc->clusters, cluster);
    if (!cl) {
        rc = err_set(e, -EINVAL, "kubeconfig %s: context \"%s\": cluster \"%s\" not found", flabel,
                     name, cluster);
        goto out;
    }
    json_t *us = user ? json_object_get(kc->users, user) : NULL;
    if (user && !us) {
        rc = err_set(e, -EINVAL, "kubeconfig %s: context \"%s\": user \"%s\" not found", flabel,
                     name, user);
        goto out;
    }
    c = kube_rest_config_new();
    if ((rc = build_cluster(kc, cl, c, e)) < 0)
        goto out;
    if (us && (rc = build_user(kc, us, c, e)) < 0)
        goto out;
    c->source = xasprintf("kubeconfig %s, context %s", flabel, name);
    *out = c;
    c = NULL;
    if (namespace_out) {
        *namespace_out = ns ? ns : xstrdup("default");
        ns = NULL;
    }
out:
    kube_rest_config_free(c);
    free(cluster);
    free(user);
    free(ns);
    return rc;
}

/* ---- public -------------------------------------------------------------- */

void kubeconfig_opts_from_env(struct kubeconfig_opts *o)
{
    o->env_kubeconfig = getenv("KUBECONFIG");
    o->home = getenv("HOME");
    incluster_opts_from_env(&o->in_cluster);
}

int kubeconfig_load_data(const char *data, size_t len, const char *name, const char *context,
                         unsigned flags, const struct logger *lg, struct kube_rest_config **out,
                         char **namespace_out, struct err *e)
{
    *out = NULL;
    if (namespace_out)
        *namespace_out = NULL;
    struct kc kc;
    kc_init(&kc, lg);
    kc.flags = flags;
    int rc = kc_add(&kc, name ? name : "(in memory)", NULL, data, len, e);
    if (rc == 0)
        rc = kc_select(&kc, kc.files[0].label, context, out, namespace_out, e);
    kc_free(&kc);
    return rc;
}

int kubeconfig_load(const struct kubeconfig_opts *o, struct kube_rest_config **out,
                    char **namespace_out, struct err *e)
{
    *out = NULL;
    if (namespace_out)
        *namespace_out = NULL;
    struct kc kc;
    kc_init(&kc, o->lg);
    struct buf label;
    buf_init(&label, 1 << 16);
    char *home_cfg = NULL;
    int rc = 0;
    if (o->explicit_path && *o->explicit_path) {
        rc = kc_add_file(&kc, o->explicit_path, true, e);
        buf_puts(&label, o->explicit_path);
    } else if (o->env_kubeconfig && *o->env_kubeconfig) {
        const char *p = o->env_kubeconfig;
        json_t *seen = json_object();
        while (rc >= 0) {
            const char *end = strchr(p, ':');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            char *path = xstrndup(p, n);
            if (n > 0 && !json_object_get(seen, path)) {
                json_object_set_new(seen, path, json_true());
                rc = kc_add_file(&kc, path, false, e);
                if (rc == 0)
                    buf_printf(&label, "%s%s", label.len ? ":" : "", path);
            }
            free(path);
            if (!end)
                break;
            p = end + 1;
        }
        json_decref(seen);
        if (rc > 0)
            rc = 0;
        if (rc == 0 && kc.nfiles == 0)
            buf_printf(&label, "(none of KUBECONFIG=%s exists)", o->env_kubeconfig);
    } else if (o->home && *o->home) {
        home_cfg = xasprintf("%s/.kube/config", o->home);
        rc = kc_add_file(&kc, home_cfg, false, e);
        if (rc > 0)
            rc = 0;
        buf_puts(&label, home_cfg);
    }
    if (rc < 0)
        goto out;
    if (kc_empty(&kc)) {
        if (o->allow_in_cluster && incluster_available(&o->in_cluster)) {
            rc = incluster_load(&o->in_cluster, out, namespace_out, e);
            goto out;
        }
        if (kc.nfiles == 0) {
            rc = err_set(e, -ENOENT,
                         "no kubeconfig found (%s); set KUBECONFIG or pass --kubeconfig%s",
                         label.len ? buf_str(&label) : "no KUBECONFIG and no home directory",
                         o->allow_in_cluster ? ", or run in a pod" : "");
            goto out;
        }
    }
    rc = kc_select(&kc, buf_str(&label), o->context, out, namespace_out, e);
out:
    buf_free(&label);
    free(home_cfg);
    kc_free(&kc);
    return rc;
}
