/* validate: request body checks with apiserver-compatible errors. See validate.h. */
#include "devhub/validate.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/quantity/quantity.h"
#include "pkg/util/xalloc.h"

/* ---- messages (k8s.io/apimachinery/pkg/util/validation) ------------------ */

#define DNS1123_LABEL_MSG                                                                          \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define DNS1123_SUBDOMAIN_MSG                                                                      \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define DNS1035_LABEL_MSG                                                                          \
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "   \
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "           \
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
#define QNAME_PART_MSG                                                                             \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define LABEL_VALUE_MSG                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "             \
    "'my_value',  or '12345', regex used for validation is "                                       \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define CONFIG_KEY_MSG                                                                             \
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "           \
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "                    \
    "'[-._a-zA-Z0-9]+')"

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
    return isalnum((unsigned char)c) != 0;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n) */
static bool label_ok(const char *s, size_t n)
{
    if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

static const char *too_long(char *buf, size_t n, size_t max)
{
    snprintf(buf, n, "must be no more than %zu characters", max);
    return buf;
}

const char *valid_dns1123_label(const char *s, char *buf, size_t n)
{
    size_t len = strlen(s);
    if (len > 63)
        return too_long(buf, n, 63);
    return label_ok(s, len) ? NULL : DNS1123_LABEL_MSG;
}

const char *valid_dns1123_subdomain(const char *s, char *buf, size_t n)
{
    size_t len = strlen(s);
    if (len > 253)
        return too_long(buf, n, 253);
    if (len == 0)
        return DNS1123_SUBDOMAIN_MSG;
    const char *p = s;
    for (;;) {
        size_t l = strcspn(p, ".");
        if (!label_ok(p, l))
            return DNS1123_SUBDOMAIN_MSG;
        if (p[l] == '\0')
            return NULL;
        p += l + 1;
    }
}

const char *valid_dns1035_label(const char *s, char *buf, size_t n)
{
    size_t len = strlen(s);
    if (len > 63)
        return too_long(buf, n, 63);
    if (!label_ok(s, len) || !(s[0] >= 'a' && s[0] <= 'z'))
        return DNS1035_LABEL_MSG;
    return NULL;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static bool qname_part_ok(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

const char *valid_qualified_name(const char *s, char *buf, size_t n)
{
    const char *slash = strchr(s, '/');
    const char *name = s;
    if (slash) {
        if (strchr(slash + 1, '/')) {
            snprintf(buf, n,
                     "a qualified name %s with an optional DNS subdomain prefix and '/' "
                     "(e.g. 'example.com/MyName')",
                     QNAME_PART_MSG);
            return buf;
        }
        size_t plen = (size_t)(slash - s);
        char prefix[300];
        if (plen == 0)
            return "prefix part must be non-empty";
        if (plen >= sizeof prefix) {
            snprintf(buf, n, "prefix part must be no more than 253 characters");
            return buf;
        }
        memcpy(prefix, s, plen);
        prefix[plen] = '\0';
        char tmp[128];
        const char *m = valid_dns1123_subdomain(prefix, tmp, sizeof tmp);
        if (m) {
            snprintf(buf, n, "prefix part %s", m);
            return buf;
        }
        name = slash + 1;
    }
    size_t len = strlen(name);
    if (len == 0)
        return "name part must be non-empty";
    if (len > 63)
        return "name part must be no more than 63 characters";
    if (!qname_part_ok(name, len))
        return "name part " QNAME_PART_MSG;
    return NULL;
}

const char *valid_label_value(const char *s, char *buf, size_t n)
{
    size_t len = strlen(s);
    if (len > 63)
        return too_long(buf, n, 63);
    if (len > 0 && !qname_part_ok(s, len))
        return LABEL_VALUE_MSG;
    return NULL;
}

/* ---- results ------------------------------------------------------------- */

static void res_clear(struct valid_result *r)
{
    memset(r, 0, sizeof *r);
}

static int bad_request(struct valid_result *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad_request(struct valid_result *r, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
    if (code == 413) {
        r->code = 413;
        snprintf(r->reason, sizeof r->reason, "RequestEntityTooLarge");
        return -E2BIG;
    }
    r->code = 400;
    snprintf(r->reason, sizeof r->reason, "BadRequest");
    return -EINVAL;
}

/* Record one field error: type is the CauseType, body the ErrorBody() text. */
static void add_cause(struct valid_result *r, const char *type, const char *field, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));

static void add_cause(struct valid_result *r, const char *type, const char *field, const char *fmt,
                      ...)
{
    if (r->ncauses >= VALID_MAX_CAUSES)
        return;
    struct valid_cause *c = &r->causes[r->ncauses++];
    snprintf(c->reason, sizeof c->reason, "%s", type);
    snprintf(c->field, sizeof c->field, "%s", field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->message, sizeof c->message, fmt, ap);
    va_end(ap);
}

static void required(struct valid_result *r, const char *field, const char *detail)
{
    if (detail)
        add_cause(r, "FieldValueRequired", field, "Required value: %s", detail);
    else
        add_cause(r, "FieldValueRequired", field, "Required value");
}

static void invalid(struct valid_result *r, const char *field, const char *value,
                    const char *detail)
{
    add_cause(r, "FieldValueInvalid", field, "Invalid value: \"%.200s\": %s", value, detail);
}

/* Turn the causes in r into a 422 Invalid result for kind qk of group, object name. */
static int finish_invalid(struct valid_result *r, const char *qk, const char *group,
                          const char *name)
{
    r->code = 422;
    snprintf(r->reason, sizeof r->reason, "Invalid");
    snprintf(r->kind, sizeof r->kind, "%s", qk);
    snprintf(r->group, sizeof r->group, "%s", group ? group : "");
    snprintf(r->name, sizeof r->name, "%s", name ? name : "");
    char qkind[200];
    if (group && *group)
        snprintf(qkind, sizeof qkind, "%.100s.%.96s", qk, group);
    else
        snprintf(qkind, sizeof qkind, "%.100s", qk);
    /* Message: `Kind.group "name" is invalid: field: body` or `...: [e1, e2]`. */
    size_t off = (size_t)snprintf(r->message, sizeof r->message, "%s \"%s\" is invalid: %s", qkind,
                                  name ? name : "", r->ncauses > 1 ? "[" : "");
    for (size_t i = 0; i < r->ncauses && off < sizeof r->message; i++)
        off += (size_t)snprintf(r->message + off, sizeof r->message - off, "%s%s: %s",
                                i ? ", " : "", r->causes[i].field, r->causes[i].message);
    if (r->ncauses > 1 && off < sizeof r->message)
        snprintf(r->message + off, sizeof r->message - off, "]");
    return -EINVAL;
}

int valid_fail_field(struct valid_result *r, const char *group, const char *kind, const char *name,
                     const char *reason, const char *field, const char *message)
{
    res_clear(r);
    add_cause(r, reason, field, "%s", message);
    return finish_invalid(r, kind, group, name);
}

/* ---- helpers -------------------------------------------------------------- */

static const char *str_at(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static json_t *path_get(const json_t *o, const char *p1, const char *p2, const char *p3)
{
    const char *ks[3] = {p1, p2, p3};
    const json_t *cur = o;
    for (int i = 0; i < 3 && ks[i]; i++)
        cur = json_object_get(cur, ks[i]);
    return (json_t *)cur;
}

/* ---- quantities (decode-time, as resource.Quantity's UnmarshalJSON) ------- */

#define QUANTITY_MSG                                                                               \
    "quantities must match the regular expression "                                                \
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

/* A map of resource name -> quantity: false when a string value does not parse. */
static bool qty_map_ok(const json_t *m)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)m, k, v)
    {
        struct qty q;
        struct err e = {0};
        if (json_is_string(v) && qty_parse(json_string_value(v), &q, &e))
            return false;
    }
    return true;
}

static bool resources_ok(const json_t *res)
{
    return qty_map_ok(json_object_get(res, "requests")) &&
           qty_map_ok(json_object_get(res, "limits"));
}

static bool pod_spec_quantities_ok(const json_t *spec)
{
    static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers"};
    for (size_t l = 0; l < 3; l++) {
        json_t *cs = json_object_get(spec, lists[l]);
        for (size_t i = 0; i < json_array_size(cs); i++)
            if (!resources_ok(json_object_get(json_array_get(cs, i), "resources")))
                return false;
    }
    return resources_ok(json_object_get(spec, "resources")) &&
           qty_map_ok(json_object_get(spec, "overhead"));
}

/* Quantity fields of the built-ins that carry them; 400 like a decode error. */
static int check_quantities(const struct valid_target *t, const json_t *obj, struct valid_result *r)
{
    bool ok = true;
    if (!strcmp(t->kind, "Pod"))
        ok = pod_spec_quantities_ok(json_object_get(obj, "spec"));
    else if (!strcmp(t->kind, "Job") || !strcmp(t->kind, "Deployment"))
        ok = pod_spec_quantities_ok(path_get(obj, "spec", "template", "spec"));
    else if (!strcmp(t->kind, "PodTemplate"))
        ok = pod_spec_quantities_ok(path_get(obj, "template", "spec", NULL));
    else if (!strcmp(t->kind, "Node"))
        ok = qty_map_ok(path_get(obj, "status", "capacity", NULL)) &&
             qty_map_ok(path_get(obj, "status", "allocatable", NULL));
    if (ok)
        return 0;
    return bad_request(r, 400, "%s in version \"%s\" cannot be handled as a %s: %s", t->kind,
                       t->version ? t->version : "", t->kind, QUANTITY_MSG);
}

static bool is_rbac_kind(const char *kind)
{
    return !strcmp(kind, "ClusterRole") || !strcmp(kind, "ClusterRoleBinding") ||
           !strcmp(kind, "Role") || !strcmp(kind, "RoleBinding");
}

static void check_name(const struct valid_target *t, const char *name, struct valid_result *r)
{
    char buf[160];
    const char *m;
    if (!strcmp(t->kind, "Namespace"))
        m = valid_dns1123_label(name, buf, sizeof buf);
    else if (!strcmp(t->kind, "Service"))
        m = valid_dns1035_label(name, buf, sizeof buf);
    else if (is_rbac_kind(t->kind)) {
        /* path.IsValidPathSegmentName */
        if (!strcmp(name, ".") || !strcmp(name, ".."))
            m = "may not be '.' or '..'";
        else if (strchr(name, '/'))
            m = "may not contain '/'";
        else if (strchr(name, '%'))
            m = "may not contain '%'";
        else
            m = NULL;
    } else
        m = valid_dns1123_subdomain(name, buf, sizeof buf);
    if (m)
        invalid(r, "metadata.name", name, m);
}

static void check_string_map(const json_t *m, const char *field, bool values_are_labels,
                             struct valid_result *r, size_t *total)
{
    const char *k;
    json_t *v;
    char buf[640];
    json_object_foreach((json_t *)m, k, v)
    {
        const char *msg = valid_qualified_name(k, buf, sizeof buf);
        if (msg)
            invalid(r, field, k, msg);
        const char *sv = json_string_value(v);
        if (values_are_labels && sv) {
            char vb[64];
            msg = valid_label_value(sv, vb, sizeof vb);
            if (msg)
                invalid(r, field, sv, msg);
        }
        if (total)
            *total += strlen(k) + (sv ? strlen(sv) : 0);
    }
}

/* Containers of a pod spec at `prefix` ("spec" / "spec.template.spec"). */
/* Overcommit is allowed for native resources (no "/" or a kubernetes.io/ prefix) except
 * hugepages; extended resources such as nvidia.com/gpu need limit == request. */
static bool overcommit_allowed(const char *name)
{
    return (!strchr(name, '/') || strstr(name, "kubernetes.io/")) &&
           strncmp(name, "hugepages-", 10) != 0;
}

/* The apiserver's resource rules of one container (quantities parse: checked before). */
static void check_resources(const json_t *res, const char *cf, struct valid_result *r)
{
    json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
    const char *k;
    json_t *v;
    char f[256];
    json_object_foreach(req, k, v)
    {
        struct qty qr, ql;
        json_t *lv = json_object_get(lim, k);
        if (!json_is_string(v) || qty_parse(json_string_value(v), &qr, NULL))
            continue;
        bool has_lim = json_is_string(lv) && qty_parse(json_string_value(lv), &ql, NULL) == 0;
        snprintf(f, sizeof f, "%s.resources.requests[%.100s]", cf, k);
        if (has_lim && qty_cmp(&qr, &ql) > 0) {
            add_cause(
                r, "FieldValueInvalid", f,
                "Invalid value: \"%.60s\": must be less than or equal to %.100s limit of %.60s",
                json_string_value(v), k, json_string_value(lv));
        } else if (!overcommit_allowed(k) && !has_lim) {
            snprintf(f, sizeof f, "%s.resources.limits", cf);
            required(r, f, "Limit must be set for non overcommitable resources");
        } else if (!overcommit_allowed(k) && qty_cmp(&qr, &ql) != 0) {
            add_cause(r, "FieldValueInvalid", f,
                      "Invalid value: \"%.60s\": must be equal to %.100s limit of %.60s",
                      json_string_value(v), k, json_string_value(lv));
        }
    }
}

static void check_pod_spec(const json_t *spec, const char *prefix, struct valid_result *r)
{
    char f[160];
    json_t *cs = json_object_get(spec, "containers");
    if (!json_is_array(cs) || json_array_size(cs) == 0) {
        snprintf(f, sizeof f, "%s.containers", prefix);
        required(r, f, NULL);
        return;
    }
    for (size_t i = 0; i < json_array_size(cs); i++) {
        json_t *c = json_array_get(cs, i);
        const char *name = str_at(c, "name");
        snprintf(f, sizeof f, "%s.containers[%zu].name", prefix, i);
        if (!name || !*name) {
            required(r, f, NULL);
        } else {
            char buf[64];
            const char *m = valid_dns1123_label(name, buf, sizeof buf);
            if (m)
                invalid(r, f, name, m);
        }
        for (size_t j = 0; name && *name && j < i; j++) {
            const char *other = str_at(json_array_get(cs, j), "name");
            if (other && !strcmp(other, name)) {
                add_cause(r, "FieldValueDuplicate", f, "Duplicate value: \"%.100s\"", name);
                break;
            }
        }
        const char *image = str_at(c, "image");
        if (!image || !*image) {
            snprintf(f, sizeof f, "%s.containers[%zu].image", prefix, i);
            required(r, f, NULL);
        }
        snprintf(f, sizeof f, "%s.containers[%zu]", prefix, i);
        check_resources(json_object_get(c, "resources"), f, r);
    }
    json_t *ics = json_object_get(spec, "initContainers");
    for (size_t i = 0; i < json_array_size(ics); i++) {
        snprintf(f, sizeof f, "%s.initContainers[%zu]", prefix, i);
        check_resources(json_object_get(json_array_get(ics, i), "resources"), f, r);
    }
}

static void check_data_keys(const json_t *obj, const char *field, struct valid_result *r)
{
    json_t *d = json_object_get(obj, field);
    const char *k;
    json_t *v;
    json_object_foreach(d, k, v)
    {
        size_t n = strlen(k);
        bool ok = n > 0 && n <= 253 && strcmp(k, ".") != 0 && strcmp(k, "..") != 0 &&
                  strncmp(k, "..", 2) != 0;
        for (size_t i = 0; ok && i < n; i++)
            ok = is_alnum(k[i]) || k[i] == '-' || k[i] == '_' || k[i] == '.';
        if (!ok) {
            char f[160];
            snprintf(f, sizeof f, "%s[%.100s]", field, k);
            invalid(r, f, k, CONFIG_KEY_MSG);
        }
    }
}

static void check_builtin(const struct valid_target *t, const json_t *obj, struct valid_result *r)
{
    const char *kind = t->kind;
    if (!strcmp(kind, "Pod")) {
        check_pod_spec(json_object_get(obj, "spec"), "spec", r);
    } else if (!strcmp(kind, "Job")) {
        json_t *ps = path_get(obj, "spec", "template", "spec");
        check_pod_spec(ps, "spec.template.spec", r);
        const char *rp = str_at(ps, "restartPolicy");
        if (!rp)
            rp = "Always"; /* the pod default the apiserver applies before validating */
        if (strcmp(rp, "OnFailure") != 0 && strcmp(rp, "Never") != 0)
            add_cause(r, "FieldValueNotSupported", "spec.template.spec.restartPolicy",
                      "Unsupported value: \"%.100s\": supported values: \"OnFailure\", \"Never\"",
                      rp);
    } else if (!strcmp(kind, "Deployment") || !strcmp(kind, "ReplicaSet") ||
               !strcmp(kind, "StatefulSet") || !strcmp(kind, "DaemonSet")) {
        json_t *sel = path_get(obj, "spec", "selector", NULL);
        if (!json_is_object(sel) || json_object_size(sel) == 0)
            required(r, "spec.selector", NULL);
        json_t *ml = json_object_get(sel, "matchLabels");
        json_t *tl = path_get(obj, "spec", "template", "metadata");
        tl = json_object_get(tl, "labels");
        const char *k;
        json_t *v;
        bool match = true;
        json_object_foreach(ml, k, v)
        {
            json_t *w = json_object_get(tl, k);
            if (!w || !json_equal(v, w))
                match = false;
        }
        if (!match) {
            char *s = json_dumps(tl ? tl : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
            add_cause(r, "FieldValueInvalid", "spec.template.metadata.labels",
                      "Invalid value: %.300s: `selector` does not match template `labels`",
                      s ? s : "null");
            free(s);
        }
        check_pod_spec(path_get(obj, "spec", "template", "spec"), "spec.template.spec", r);
    } else if (!strcmp(kind, "Service")) {
        json_t *spec = json_object_get(obj, "spec");
        const char *type = str_at(spec, "type");
        const char *cip = str_at(spec, "clusterIP");
        json_t *ports = json_object_get(spec, "ports");
        bool headless = cip && !strcmp(cip, "None");
        bool external = type && !strcmp(type, "ExternalName");
        if (!headless && !external && (!json_is_array(ports) || json_array_size(ports) == 0))
            required(r, "spec.ports", NULL);
    } else if (!strcmp(kind, "ConfigMap")) {
        check_data_keys(obj, "data", r);
        check_data_keys(obj, "binaryData", r);
    } else if (!strcmp(kind, "Secret")) {
        check_data_keys(obj, "data", r);
        check_data_keys(obj, "stringData", r);
    } else if (!strcmp(kind, "Lease")) {
        json_t *spec = json_object_get(obj, "spec");
        json_t *d = json_object_get(spec, "leaseDurationSeconds");
        if (json_is_integer(d) && json_integer_value(d) <= 0)
            add_cause(r, "FieldValueInvalid", "spec.leaseDurationSeconds",
                      "Invalid value: %" JSON_INTEGER_FORMAT ": must be greater than 0",
                      json_integer_value(d));
        json_t *tr = json_object_get(spec, "leaseTransitions");
        if (json_is_integer(tr) && json_integer_value(tr) < 0)
            add_cause(r, "FieldValueInvalid", "spec.leaseTransitions",
                      "Invalid value: %" JSON_INTEGER_FORMAT ": must be greater than or equal to 0",
                      json_integer_value(tr));
    } else if (!strcmp(kind, "CustomResourceDefinition")) {
        const char *plural = str_at(path_get(obj, "spec", "names", NULL), "plural");
        const char *group = str_at(json_object_get(obj, "spec"), "group");
        const char *name = str_at(json_object_get(obj, "metadata"), "name");
        if (!plural || !*plural)
            required(r, "spec.names.plural", NULL);
        if (!group || !*group)
            required(r, "spec.group", NULL);
        if (plural && group && name) {
            char *want = xasprintf("%s.%s", plural, group);
            if (strcmp(want, name) != 0) {
                char d[400];
                snprintf(d, sizeof d, "must be spec.names.plural+\".\"+spec.group");
                invalid(r, "metadata.name", name, d);
            }
            free(want);
        }
        if (!str_at(path_get(obj, "spec", "names", NULL), "kind"))
            required(r, "spec.names.kind", NULL);
        json_t *versions = path_get(obj, "spec", "versions", NULL);
        if (!json_is_array(versions) || json_array_size(versions) == 0)
            required(r, "spec.versions", "must have exactly one version marked as storage version");
    }
}

/* ---- public ---------------------------------------------------------------- */

int valid_parse_body(const char *body, size_t len, size_t max, json_t **out, struct valid_result *r)
{
    res_clear(r);
    if (max == 0)
        max = VALID_MAX_BODY;
    if (len > max)
        return bad_request(r, 413, "Request entity too large: limit is %zu", max);
    if (!body || len == 0)
        return bad_request(r, 400, "the request body is empty: expected a JSON object");
    json_error_t je;
    json_t *v = json_loadb(body, len, JSON_DECODE_ANY, &je);
    if (!v)
        return bad_request(r, 400,
                           "couldn't get version/kind; json parse error: %s (line %d, column %d)",
                           je.text, je.line, je.column);
    if (!json_is_object(v)) {
        json_decref(v);
        return bad_request(r, 400,
                           "couldn't get version/kind; json parse error: the request body must "
                           "be a JSON object");
    }
    *out = v;
    return 0;
}

static const char *json_kind_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    default:
        return "null";
    }
}

/* Type errors the Go decoder would report (400). Returns 0 when the shapes are right. */
static int check_shapes(const json_t *obj, struct valid_result *r)
{
    static const char *const strs[] = {"apiVersion", "kind"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(obj, strs[i]);
        if (v && !json_is_string(v))
            return bad_request(r, 400,
                               "couldn't get version/kind; json parse error: json: cannot "
                               "unmarshal %s into Go struct field .%s of type string",
                               json_kind_name(v), strs[i]);
    }
    json_t *md = json_object_get(obj, "metadata");
    if (!md || json_is_null(md))
        return 0;
    if (!json_is_object(md))
        return bad_request(r, 400,
                           "json: cannot unmarshal %s into Go struct field .metadata of type "
                           "v1.ObjectMeta",
                           json_kind_name(md));
    static const char *const mstrs[] = {"name", "generateName", "namespace", "resourceVersion",
                                        "uid"};
    for (size_t i = 0; i < sizeof mstrs / sizeof mstrs[0]; i++) {
        json_t *v = json_object_get(md, mstrs[i]);
        if (v && !json_is_string(v) && !json_is_null(v))
            return bad_request(r, 400,
                               "json: cannot unmarshal %s into Go struct field "
                               "ObjectMeta.metadata.%s of type string",
                               json_kind_name(v), mstrs[i]);
    }
    static const char *const maps[] = {"labels", "annotations"};
    for (size_t i = 0; i < 2; i++) {
        json_t *m = json_object_get(md, maps[i]);
        if (!m || json_is_null(m))
            continue;
        if (!json_is_object(m))
            return bad_request(r, 400,
                               "json: cannot unmarshal %s into Go struct field "
                               "ObjectMeta.metadata.%s of type map[string]string",
                               json_kind_name(m), maps[i]);
        const char *k;
        json_t *v;
        json_object_foreach(m, k, v)
        {
            if (!json_is_string(v) && !json_is_null(v))
                return bad_request(r, 400,
                                   "json: cannot unmarshal %s into Go struct field "
                                   "ObjectMeta.metadata.%s of type string",
                                   json_kind_name(v), maps[i]);
        }
    }
    json_t *fin = json_object_get(md, "finalizers");
    if (fin && !json_is_null(fin)) {
        if (!json_is_array(fin))
            return bad_request(r, 400,
                               "json: cannot unmarshal %s into Go struct field "
                               "ObjectMeta.metadata.finalizers of type []string",
                               json_kind_name(fin));
        for (size_t i = 0; i < json_array_size(fin); i++)
            if (!json_is_string(json_array_get(fin, i)))
                return bad_request(r, 400,
                                   "json: cannot unmarshal %s into Go struct field "
                                   "ObjectMeta.metadata.finalizers of type string",
                                   json_kind_name(json_array_get(fin, i)));
    }
    return 0;
}

static void expected_api_version(const struct valid_target *t, char *buf, size_t n)
{
    if (t->group && *t->group)
        snprintf(buf, n, "%s/%s", t->group, t->version ? t->version : "");
    else
        snprintf(buf, n, "%s", t->version ? t->version : "v1");
}

int valid_check(const struct valid_target *t, enum valid_op op, const json_t *obj,
                struct valid_result *r)
{
    res_clear(r);
    if (!json_is_object(obj))
        return bad_request(r, 400, "the request body must be a JSON object");
    int rc = check_shapes(obj, r);
    if (rc)
        return rc;

    /* apiVersion / kind against the URL. */
    char want[200];
    expected_api_version(t, want, sizeof want);
    /* The apiserver accepts only the URL's exact group/version (AcceptsGroupVersion). */
    const char *av = str_at(obj, "apiVersion");
    if (av && *av && strcmp(av, want) != 0)
        return bad_request(r, 400,
                           "the API version in the data (%.100s) does not match the expected API "
                           "version (%s)",
                           av, want);
    /*
     * Another kind: a built-in type cannot be decoded (400, transformDecodeError);
     * a custom resource fails validation on `kind` (422, with the other field errors).
     */
    const char *kind = str_at(obj, "kind");
    bool crd_kind_mismatch = false;
    if (kind && *kind && strcmp(kind, t->kind) != 0) {
        if (t->builtin)
            return bad_request(r, 400,
                               "%.100s in version \"%s\" cannot be handled as a %s: the kind "
                               "does not match the resource in the URL",
                               kind, t->version ? t->version : "", t->kind);
        crd_kind_mismatch = true;
    }
    if (t->builtin && (rc = check_quantities(t, obj, r)))
        return rc;

    json_t *md = json_object_get(obj, "metadata");
    const char *name = str_at(md, "name");
    const char *gen = str_at(md, "generateName");
    const char *ns = str_at(md, "namespace");

    if (op == VALID_UPDATE && t->name && strcmp(name ? name : "", t->name) != 0)
        return bad_request(r, 400,
                           "the name of the object (%.253s) does not match the name on the URL "
                           "(%.253s)",
                           name ? name : "", t->name);
    if (t->namespaced && ns && *ns && t->namespace && strcmp(ns, t->namespace) != 0) {
        if (op == VALID_UPDATE)
            return bad_request(r, 400,
                               "the namespace of the object (%.63s) does not match the namespace "
                               "on the request (%.63s)",
                               ns, t->namespace);
        return bad_request(r, 400,
                           "the namespace of the provided object does not match the "
                           "namespace sent on the request");
    }

    /* Field validation (422). */
    if (crd_kind_mismatch)
        add_cause(r, "FieldValueInvalid", "kind", "Invalid value: \"%.100s\": must be %s", kind,
                  t->kind);
    if (!name || !*name) {
        if (op == VALID_CREATE && (!gen || !*gen))
            required(r, "metadata.name", "name or generateName is required");
        else if (op == VALID_UPDATE)
            required(r, "metadata.name", "name or generateName is required");
    } else {
        check_name(t, name, r);
    }
    if (gen && *gen && (!name || !*name)) {
        /* The prefix plus 5 random characters must be a valid name; check the prefix body. */
        char trimmed[300];
        snprintf(trimmed, sizeof trimmed, "%s", gen);
        size_t n = strlen(trimmed);
        while (n > 0 && trimmed[n - 1] == '-')
            trimmed[--n] = '\0';
        char buf[160];
        const char *m = n ? valid_dns1123_subdomain(trimmed, buf, sizeof buf) : NULL;
        if (m)
            invalid(r, "metadata.generateName", gen, m);
    }
    json_t *labels = json_object_get(md, "labels");
    if (json_is_object(labels))
        check_string_map(labels, "metadata.labels", true, r, NULL);
    json_t *ann = json_object_get(md, "annotations");
    if (json_is_object(ann)) {
        size_t total = 0;
        check_string_map(ann, "metadata.annotations", false, r, &total);
        if (total > VALID_MAX_ANNOTATIONS)
            add_cause(r, "FieldValueTooLong", "metadata.annotations",
                      "Too long: may not be more than %d bytes", VALID_MAX_ANNOTATIONS);
    }
    if (t->builtin)
        check_builtin(t, obj, r);

    if (r->ncauses == 0)
        return 0;

    /* The qualified kind is the one in the data (it differs from the URL's on a CRD mismatch). */
    return finish_invalid(r, crd_kind_mismatch ? kind : t->kind, t->group, name);
}

void valid_normalize(const struct valid_target *t, json_t *obj)
{
    if (!json_is_object(obj))
        return;
    const char *av = str_at(obj, "apiVersion");
    if (!av || !*av) {
        char want[200];
        expected_api_version(t, want, sizeof want);
        json_object_set_new(obj, "apiVersion", json_string(want));
    }
    const char *kind = str_at(obj, "kind");
    if (!kind || !*kind)
        json_object_set_new(obj, "kind", json_string(t->kind));
    json_t *md = json_object_get(obj, "metadata");
    if (!json_is_object(md)) {
        md = json_object();
        json_object_set_new(obj, "metadata", md);
    }
    if (t->namespaced && t->namespace)
        json_object_set_new(md, "namespace", json_string(t->namespace));
    else if (!t->namespaced)
        json_object_del(md, "namespace");
}

/* A JSON string even when truncation cut a UTF-8 sequence: bad bytes become '?'. */
static json_t *lossy_str(const char *s)
{
    json_t *v = json_string(s);
    if (v)
        return v;
    char *c = xstrdup(s);
    for (char *p = c; *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    v = json_string(c);
    free(c);
    return v;
}

json_t *valid_status_body(const struct valid_result *r)
{
    json_t *st = json_object();
    json_object_set_new(st, "kind", json_string("Status"));
    json_object_set_new(st, "apiVersion", json_string("v1"));
    json_object_set_new(st, "metadata", json_object());
    json_object_set_new(st, "status", json_string("Failure"));
    json_object_set_new(st, "message", lossy_str(r->message));
    json_object_set_new(st, "reason", json_string(r->reason));
    json_object_set_new(st, "code", json_integer(r->code));
    if (r->code == 422) {
        json_t *d = json_object();
        if (r->name[0])
            json_object_set_new(d, "name", lossy_str(r->name));
        if (r->group[0])
            json_object_set_new(d, "group", json_string(r->group));
        if (r->kind[0])
            json_object_set_new(d, "kind", json_string(r->kind));
        json_t *causes = json_array();
        for (size_t i = 0; i < r->ncauses; i++) {
            json_t *c = json_object();
            json_object_set_new(c, "reason", json_string(r->causes[i].reason));
            json_object_set_new(c, "message", lossy_str(r->causes[i].message));
            json_object_set_new(c, "field", lossy_str(r->causes[i].field));
            json_array_append_new(causes, c);
        }
        json_object_set_new(d, "causes", causes);
        /* Status field order as the apiserver writes it: details before code. */
        json_object_del(st, "code");
        json_object_set_new(st, "details", d);
        json_object_set_new(st, "code", json_integer(r->code));
    }
    return st;
}
