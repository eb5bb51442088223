/* table: meta.k8s.io/v1 Table bodies for kubectl get. See table.h. */
#include "devhub/table.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/buf.h"
#include "pkg/util/clock.h"
#include "pkg/util/xalloc.h"

#define DESC_NAME                                                                                  \
    "Name must be unique within a namespace. Is required when creating resources, although some "  \
    "resources may allow a client to request the generation of an appropriate name "               \
    "automatically. Name is primarily intended for creation idempotence and configuration "        \
    "definition. Cannot be updated. More info: "                                                   \
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
#define DESC_CREATED                                                                               \
    "CreationTimestamp is a timestamp representing the server time when this object was "          \
    "created. It is not guaranteed to be set in happens-before order across separate "             \
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "     \
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "                      \
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"                            \
    "api-conventions.md#metadata"

/* ---- ages ------------------------------------------------------------------ */

char *table_human_duration(double d, char *buf, size_t n)
{
    long long seconds = (long long)d;
    if (seconds < -1) {
        snprintf(buf, n, "<invalid>");
        return buf;
    }
    if (seconds < 0) {
        snprintf(buf, n, "0s");
        return buf;
    }
    if (seconds < 60 * 2) {
        snprintf(buf, n, "%llds", seconds);
        return buf;
    }
    long long minutes = seconds / 60;
    if (minutes < 10) {
        long long s = seconds % 60;
        if (s == 0)
            snprintf(buf, n, "%lldm", minutes);
        else
            snprintf(buf, n, "%lldm%llds", minutes, s);
        return buf;
    }
    if (minutes < 60 * 3) {
        snprintf(buf, n, "%lldm", minutes);
        return buf;
    }
    long long hours = seconds / 3600;
    if (hours < 8) {
        long long m = minutes % 60;
        if (m == 0)
            snprintf(buf, n, "%lldh", hours);
        else
            snprintf(buf, n, "%lldh%lldm", hours, m);
    } else if (hours < 48) {
        snprintf(buf, n, "%lldh", hours);
    } else if (hours < 24 * 8) {
        long long h = hours % 24;
        if (h == 0)
            snprintf(buf, n, "%lldd", hours / 24);
        else
            snprintf(buf, n, "%lldd%lldh", hours / 24, h);
    } else if (hours < 24 * 365 * 2) {
        snprintf(buf, n, "%lldd", hours / 24);
    } else if (hours < 24 * 365 * 8) {
        long long dy = (hours / 24) % 365;
        if (dy == 0)
            snprintf(buf, n, "%lldy", hours / 24 / 365);
        else
            snprintf(buf, n, "%lldy%lldd", hours / 24 / 365, dy);
    } else {
        snprintf(buf, n, "%lldy", hours / 24 / 365);
    }
    return buf;
}

char *table_age(const char *ts, time_t now, char *buf, size_t n)
{
    struct timespec t;
    if (!ts || !*ts || clock_parse_rfc3339(ts, &t) != 0) {
        snprintf(buf, n, "<unknown>");
        return buf;
    }
    double d = (double)(now - t.tv_sec) - (double)t.tv_nsec / 1e9;
    return table_human_duration(d, buf, n);
}

/* ---- jsonPath subset ----------------------------------------------------- */

struct jp {
    const char *s; /* cursor */
    const char *expr;
    struct err *e;
};

static int jp_fail(struct jp *p, const char *what)
{
    return err_set(p->e, -EINVAL, "invalid jsonPath \"%.200s\" at offset %zu: %s", p->expr,
                   (size_t)(p->s - p->expr), what);
}

/* A field name: until an unescaped '.', '[' or the end (or ')'/space/= inside filters). */
static char *jp_name(struct jp *p, bool in_filter)
{
    struct buf b;
    buf_init(&b, 4096);
    while (*p->s) {
        char c = *p->s;
        if (c == '\\' && p->s[1]) {
            buf_append(&b, p->s + 1, 1);
            p->s += 2;
            continue;
        }
        if (c == '.' || c == '[' || c == '}')
            break;
        if (in_filter && (c == ')' || c == ' ' || c == '=' || c == '!'))
            break;
        buf_append(&b, &c, 1);
        p->s++;
    }
    return buf_detach(&b);
}

/* A quoted literal at p->s ('...' or "..."), no escapes beyond \\ and \quote. */
static char *jp_quoted(struct jp *p)
{
    char q = *p->s++;
    struct buf b;
    buf_init(&b, 4096);
    while (*p->s && *p->s != q) {
        if (*p->s == '\\' && p->s[1])
            p->s++;
        buf_append(&b, p->s, 1);
        p->s++;
    }
    if (*p->s != q) {
        buf_free(&b);
        return NULL;
    }
    p->s++;
    return buf_detach(&b);
}

static bool jp_value_equal(const json_t *v, const json_t *lit)
{
    if (json_is_number(v) && json_is_number(lit))
        return json_number_value(v) == json_number_value(lit);
    return json_equal(v, lit);
}

/* Follow a simple dotted path (already split) under `v`; borrowed result or NULL. */
static const json_t *jp_follow(const json_t *v, char **names, size_t n)
{
    for (size_t i = 0; i < n && v; i++)
        v = json_object_get(v, names[i]);
    return v;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* [?(@.a.b == "x")] after "[?(" ; filters `cur` (array of nodes) into `next`. */
static int jp_filter(struct jp *p, const json_t *cur, json_t *next)
{
    char **names = NULL;
    size_t nn = 0;
    json_t *lit = NULL;
    int op = 0; /* 0 exists, 1 ==, 2 != */
    int rc = 0;
    while (*p->s == ' ')
        p->s++;
    if (*p->s != '@') {
        rc = jp_fail(p, "filter must start with @");
        goto out;
    }
    p->s++;
    while (*p->s == '.') {
        p->s++;
        char *nm = jp_name(p, true);
        if (!*nm) {
            free(nm);
            rc = jp_fail(p, "empty field name in filter");
            goto out;
        }
        names = xrealloc(names, (nn + 1) * sizeof *names);
        names[nn++] = nm;
    }
    while (*p->s == ' ')
        p->s++;
    if (!strncmp(p->s, "==", 2) || !strncmp(p->s, "!=", 2)) {
        op = p->s[0] == '=' ? 1 : 2;
        p->s += 2;
        while (*p->s == ' ')
            p->s++;
        if (*p->s == '"' || *p->s == '\'') {
            char *q = jp_quoted(p);
            if (!q) {
                rc = jp_fail(p, "unterminated string");
                goto out;
            }
            lit = json_string(q);
            free(q);
            if (!lit) {
                rc = jp_fail(p, "string is not valid UTF-8");
                goto out;
            }
        } else if (!strncmp(p->s, "true", 4)) {
            lit = json_true();
            p->s += 4;
        } else if (!strncmp(p->s, "false", 5)) {
            lit = json_false();
            p->s += 5;
        } else {
            char *end = NULL;
            double d = strtod(p->s, &end);
            if (end == p->s) {
                rc = jp_fail(p, "expected a quoted string, number or boolean");
                goto out;
            }
            lit = json_real(d);
            p->s = end;
        }
        while (*p->s == ' ')
            p->s++;
    }
    if (p->s[0] != ')' || p->s[1] != ']') {
        rc = jp_fail(p, "expected )]");
        goto out;
    }
    p->s += 2;
    for (size_t i = 0; i < json_array_size(cur); i++) {
        json_t *node = json_array_get(cur, i);
        if (!json_is_array(node))
            continue;
        for (size_t j = 0; j < json_array_size(node); j++) {
            json_t *el = json_array_get(node, j);
            const json_t *v = jp_follow(el, names, nn);
            bool keep = op == 0 ? v != NULL
                                : (op == 1 ? (v && jp_value_equal(v, lit))
                                           : (v && !jp_value_equal(v, lit)));
            if (keep)
                json_array_append(next, el);
        }
    }
out:
    free_names(names, nn);
    json_decref(lit);
    return rc;
}

int table_jsonpath(const char *expr, const json_t *obj, json_t **out, struct err *e)
{
    struct jp p = {.s = expr, .expr = expr, .e = e};
    json_t *cur = json_array();
    json_array_append(cur, (json_t *)obj);
    int rc = 0;
    bool braces = false;
    while (*p.s == ' ')
        p.s++;
    if (*p.s == '{') {
        braces = true;
        p.s++;
    }
    if (*p.s == '$')
        p.s++;
    if (*p.s != '.' && *p.s != '[' && !(braces && *p.s == '}')) {
        rc = jp_fail(&p, "expected '.' or '['");
        goto out;
    }
    while (*p.s && !(braces && *p.s == '}')) {
        json_t *next = json_array();
        if (*p.s == '.') {
            p.s++;
            if (*p.s == '.') {
                json_decref(next);
                rc = jp_fail(&p, "recursive descent (..) is not supported");
                goto out;
            }
            if (*p.s == '\0' || *p.s == '}' || *p.s == '[') {
                /* "." alone selects the current node */
                json_decref(next);
                continue;
            }
            char *nm = jp_name(&p, false);
            for (size_t i = 0; i < json_array_size(cur); i++) {
                json_t *v = json_object_get(json_array_get(cur, i), nm);
                if (v)
                    json_array_append(next, v);
            }
            free(nm);
        } else if (*p.s == '[') {
            p.s++;
            if (*p.s == '*' && p.s[1] == ']') {
                p.s += 2;
                for (size_t i = 0; i < json_array_size(cur); i++) {
                    json_t *n = json_array_get(cur, i);
                    if (json_is_array(n)) {
                        for (size_t j = 0; j < json_array_size(n); j++)
                            json_array_append(next, json_array_get(n, j));
                    } else if (json_is_object(n)) {
                        for (void *it = json_object_iter(n); it; it = json_object_iter_next(n, it))
                            json_array_append(next, json_object_iter_value(it));
                    }
                }
            } else if (*p.s == '\'' || *p.s == '"') {
                char *q = jp_quoted(&p);
                if (!q || *p.s != ']') {
                    free(q);
                    json_decref(next);
                    rc = jp_fail(&p, "expected a quoted key and ]");
                    goto out;
                }
                p.s++;
                for (size_t i = 0; i < json_array_size(cur); i++) {
                    json_t *v = json_object_get(json_array_get(cur, i), q);
                    if (v)
                        json_array_append(next, v);
                }
                free(q);
            } else if (p.s[0] == '?' && p.s[1] == '(') {
                p.s += 2;
                rc = jp_filter(&p, cur, next);
                if (rc) {
                    json_decref(next);
                    goto out;
                }
            } else if (strchr("-0123456789:", *p.s) && p.s[strspn(p.s, "-0123456789")] == ':') {
                /* Slice [start:end] (either may be omitted or negative), as `[-1:]`. */
                char *end = NULL;
                bool has_lo = *p.s != ':', has_hi;
                errno = 0;
                long lo = has_lo ? strtol(p.s, &end, 10) : 0;
                if (has_lo && (end == p.s || errno)) {
                    json_decref(next);
                    rc = jp_fail(&p, "bad slice start");
                    goto out;
                }
                p.s = has_lo ? end + 1 : p.s + 1;
                has_hi = *p.s != ']';
                long hi = has_hi ? strtol(p.s, &end, 10) : 0;
                if ((has_hi && (end == p.s || errno)) || *(has_hi ? end : p.s) != ']') {
                    json_decref(next);
                    rc = jp_fail(&p, "bad slice (only [start:end] is supported)");
                    goto out;
                }
                p.s = (has_hi ? end : p.s) + 1;
                for (size_t i = 0; i < json_array_size(cur); i++) {
                    json_t *n = json_array_get(cur, i);
                    if (!json_is_array(n))
                        continue;
                    long sz = (long)json_array_size(n);
                    long a = has_lo ? (lo < 0 ? sz + lo : lo) : 0;
                    long b = has_hi ? (hi < 0 ? sz + hi : hi) : sz;
                    if (a < 0)
                        a = 0;
                    if (b > sz)
                        b = sz;
                    for (long j = a; j < b; j++)
                        json_array_append(next, json_array_get(n, (size_t)j));
                }
            } else {
                char *end = NULL;
                errno = 0;
                long idx = strtol(p.s, &end, 10);
                if (end == p.s || *end != ']' || errno) {
                    json_decref(next);
                    rc = jp_fail(&p, "expected an index, *, a quoted key or a ?() filter");
                    goto out;
                }
                p.s = end + 1;
                for (size_t i = 0; i < json_array_size(cur); i++) {
                    json_t *n = json_array_get(cur, i);
                    if (!json_is_array(n))
                        continue;
                    long sz = (long)json_array_size(n);
                    long at = idx < 0 ? sz + idx : idx;
                    if (at >= 0 && at < sz)
                        json_array_append(next, json_array_get(n, (size_t)at));
                }
            }
        } else {
            json_decref(next);
            rc = jp_fail(&p, "expected '.' or '['");
            goto out;
        }
        json_decref(cur);
        cur = next;
    }
    if (braces) {
        if (*p.s != '}') {
            rc = jp_fail(&p, "missing }");
            goto out;
        }
        p.s++;
        while (*p.s == ' ')
            p.s++;
        if (*p.s) {
            rc = jp_fail(&p, "text after }");
            goto out;
        }
    }
out:
    if (rc) {
        json_decref(cur);
        return rc;
    }
    *out = cur;
    return 0;
}

/* ---- helpers for printers ------------------------------------------------ */

static json_t *oget(const json_t *o, const char *k)
{
    return json_object_get(o, k);
}

static long long iget(const json_t *o, const char *k, long long def)
{
    json_t *v = json_object_get(o, k);
    if (json_is_integer(v))
        return (long long)json_integer_value(v);
    if (json_is_real(v))
        return (long long)json_real_value(v);
    return def;
}

static const char *meta_name(const json_t *obj)
{
    return jx_field_str(oget(obj, "metadata"), "name");
}

static void cell_str(json_t *cells, const char *s)
{
    json_t *v = json_string(s);
    json_array_append_new(cells, v ? v : json_string("<invalid>"));
}

static void cell_int(json_t *cells, long long v)
{
    json_array_append_new(cells, json_integer((json_int_t)v));
}

static void cell_age(json_t *cells, const json_t *obj, time_t now)
{
    char b[32];
    cell_str(cells,
             table_age(jx_field_str(oget(obj, "metadata"), "creationTimestamp"), now, b, sizeof b));
}

static void cell_or(json_t *cells, const char *s, const char *fallback)
{
    cell_str(cells, s && *s ? s : fallback);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void join_sorted(struct buf *out, char **items, size_t n, const char *sep)
{
    if (n == 0)
        return;
    qsort(items, n, sizeof *items, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (i)
            buf_puts(out, sep);
        buf_puts(out, items[i]);
    }
}

/* metav1.LabelSelectorAsSelector(sel).String(); "" for an empty selector. */
static char *format_selector(const json_t *sel)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    size_t n = 0;
    char **items = NULL;
    const char *k;
    json_t *v;
    json_object_foreach(oget(sel, "matchLabels"), k, v)
    {
        items = xrealloc(items, (n + 1) * sizeof *items);
        items[n++] = xasprintf("%s=%s", k, json_string_value(v) ? json_string_value(v) : "");
    }
    json_t *exprs = oget(sel, "matchExpressions");
    for (size_t i = 0; i < json_array_size(exprs); i++) {
        json_t *x = json_array_get(exprs, i);
        const char *op = jx_field_str(x, "operator");
        const char *key = jx_field_str(x, "key");
        struct buf vals;
        buf_init(&vals, 1 << 16);
        json_t *vs = oget(x, "values");
        char **vv = xcalloc(json_array_size(vs) + 1, sizeof *vv);
        size_t nv = 0;
        for (size_t j = 0; j < json_array_size(vs); j++)
            if (json_is_string(json_array_get(vs, j)))
                vv[nv++] = (char *)json_string_value(json_array_get(vs, j));
        join_sorted(&vals, vv, nv, ",");
        free(vv);
        char *item;
        if (!strcmp(op, "In"))
            item = xasprintf("%s in (%s)", key, buf_str(&vals));
        else if (!strcmp(op, "NotIn"))
            item = xasprintf("%s notin (%s)", key, buf_str(&vals));
        else if (!strcmp(op, "Exists"))
            item = xstrdup(key);
        else if (!strcmp(op, "DoesNotExist"))
            item = xasprintf("!%s", key);
        else
            item = xasprintf("%s %s", key, op);
        buf_free(&vals);
        items = xrealloc(items, (n + 1) * sizeof *items);
        items[n++] = item;
    }
    join_sorted(&b, items, n, ",");
    for (size_t i = 0; i < n; i++)
        free(items[i]);
    free(items);
    return buf_detach(&b);
}

/* Container names and images joined by ",". */
static void container_cells(json_t *cells, const json_t *containers)
{
    struct buf names, images;
    buf_init(&names, 1 << 20);
    buf_init(&images, 1 << 20);
    for (size_t i = 0; i < json_array_size(containers); i++) {
        json_t *c = json_array_get(containers, i);
        if (i) {
            buf_puts(&names, ",");
            buf_puts(&images, ",");
        }
        buf_puts(&names, jx_field_str(c, "name"));
        buf_puts(&images, jx_field_str(c, "image"));
    }
    cell_str(cells, buf_str(&names));
    cell_str(cells, buf_str(&images));
    buf_free(&names);
    buf_free(&images);
}

/* ---- built-in printers ------------------------------------------------------ */

struct coldef {
    const char *name;
    const char *type;
    const char *format;
    const char *desc;
    int priority;
};

#define COL_NAME                                                                                   \
    {                                                                                              \
        "Name", "string", "name", DESC_NAME, 0                                                     \
    }
#define COL_AGE                                                                                    \
    {                                                                                              \
        "Age", "string", "", DESC_CREATED, 0                                                       \
    }

static void row_namespace(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    cell_str(cells, meta_name(o));
    cell_str(cells, jx_field_str(oget(o, "status"), "phase"));
    cell_age(cells, o, now);
}

static const struct coldef cols_namespace[] = {
    COL_NAME,
    {"Status", "string", "", "The status of the namespace", 0},
    COL_AGE,
};

static void row_node(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    json_t *st = oget(o, "status");
    struct buf status;
    buf_init(&status, 256);
    json_t *cs = oget(st, "conditions");
    bool found = false;
    for (size_t i = 0; i < json_array_size(cs); i++) {
        json_t *c = json_array_get(cs, i);
        if (!strcmp(jx_field_str(c, "type"), "Ready")) {
            buf_puts(&status, !strcmp(jx_field_str(c, "status"), "True") ? "Ready" : "NotReady");
            found = true;
        }
    }
    if (!found)
        buf_puts(&status, "Unknown");
    if (json_is_true(oget(oget(o, "spec"), "unschedulable")))
        buf_puts(&status, ",SchedulingDisabled");
    /* Roles from node-role.kubernetes.io/<role> and kubernetes.io/role labels. */
    char **roles = NULL;
    size_t nr = 0;
    const char *k;
    json_t *v;
    json_object_foreach(oget(oget(o, "metadata"), "labels"), k, v)
    {
        const char *role = NULL;
        if (!strncmp(k, "node-role.kubernetes.io/", 24) && k[24])
            role = k + 24;
        else if (!strcmp(k, "kubernetes.io/role") && json_string_value(v) && *json_string_value(v))
            role = json_string_value(v);
        if (!role)
            continue;
        bool dup = false;
        for (size_t i = 0; i < nr; i++)
            dup = dup || !strcmp(roles[i], role);
        if (dup)
            continue;
        roles = xrealloc(roles, (nr + 1) * sizeof *roles);
        roles[nr++] = (char *)role;
    }
    struct buf rb;
    buf_init(&rb, 4096);
    join_sorted(&rb, roles, nr, ",");
    free(roles);
    cell_str(cells, meta_name(o));
    cell_str(cells, buf_str(&status));
    cell_or(cells, buf_str(&rb), "<none>");
    cell_age(cells, o, now);
    json_t *info = oget(st, "nodeInfo");
    cell_str(cells, jx_field_str(info, "kubeletVersion"));
    const char *internal = "", *external = "";
    json_t *addrs = oget(st, "addresses");
    for (size_t i = 0; i < json_array_size(addrs); i++) {
        json_t *a = json_array_get(addrs, i);
        if (!*internal && !strcmp(jx_field_str(a, "type"), "InternalIP"))
            internal = jx_field_str(a, "address");
        if (!*external && !strcmp(jx_field_str(a, "type"), "ExternalIP"))
            external = jx_field_str(a, "address");
    }
    cell_or(cells, internal, "<none>");
    cell_or(cells, external, "<none>");
    cell_or(cells, jx_field_str(info, "osImage"), "<unknown>");
    cell_or(cells, jx_field_str(info, "kernelVersion"), "<unknown>");
    cell_or(cells, jx_field_str(info, "containerRuntimeVersion"), "<unknown>");
    buf_free(&status);
    buf_free(&rb);
}

static const struct coldef cols_node[] = {
    COL_NAME,
    {"Status", "string", "", "The status of the node", 0},
    {"Roles", "string", "", "The roles of the node", 0},
    COL_AGE,
    {"Version", "string", "", "Kubelet Version reported by the node.", 0},
    {"Internal-IP", "string", "",
     "List of addresses reachable to the node. Queried from cloud "
     "provider, if available.",
     1},
    {"External-IP", "string", "",
     "List of addresses reachable to the node. Queried from cloud "
     "provider, if available.",
     1},
    {"OS-Image", "string", "",
     "OS Image reported by the node from /etc/os-release (e.g. Debian "
     "GNU/Linux 7 (wheezy)).",
     1},
    {"Kernel-Version", "string", "",
     "Kernel Version reported by the node from 'uname -r' (e.g. "
     "3.16.0-0.bpo.4-amd64).",
     1},
    {"Container-Runtime", "string", "",
     "ContainerRuntime Version reported by the node through "
     "runtime remote API (e.g. containerd://1.4.2).",
     1},
};

/* The latest lastState.terminated.finishedAt seen; kept as a string (RFC 3339 sorts). */
static void later(char *best, size_t n, const json_t *status)
{
    const char *f = jx_field_str(oget(oget(status, "lastState"), "terminated"), "finishedAt");
    if (*f && strcmp(f, best) > 0)
        snprintf(best, n, "%s", f);
}

static bool is_restartable_init(const json_t *spec, const char *name)
{
    json_t *ics = oget(spec, "initContainers");
    for (size_t i = 0; i < json_array_size(ics); i++) {
        json_t *c = json_array_get(ics, i);
        if (!strcmp(jx_field_str(c, "name"), name))
            return !strcmp(jx_field_str(c, "restartPolicy"), "Always");
    }
    return false;
}

static void row_pod(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    json_t *spec = oget(o, "spec"), *st = oget(o, "status");
    long long restarts = 0, sidecar_restarts = 0;
    long long total = (long long)json_array_size(oget(spec, "containers")), ready = 0;
    char last[64] = "", last_sidecar[64] = "";
    const char *phase = jx_field_str(st, "phase");
    char reason[256];
    snprintf(reason, sizeof reason, "%s",
             *jx_field_str(st, "reason") ? jx_field_str(st, "reason") : phase);
    json_t *conds = oget(st, "conditions");
    for (size_t i = 0; i < json_array_size(conds); i++) {
        json_t *c = json_array_get(conds, i);
        if (!strcmp(jx_field_str(c, "type"), "PodScheduled") &&
            !strcmp(jx_field_str(c, "reason"), "SchedulingGated"))
            snprintf(reason, sizeof reason, "SchedulingGated");
    }
    if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")) {
        bool ok = !strcmp(phase, "Succeeded");
        json_t *rc = json_array();
        json_array_append_new(
            rc,
            json_pack("{s:s,s:s,s:s,s:s}", "type", "Completed", "status", "True", "reason", phase,
                      "message", ok ? "The pod has completed successfully." : "The pod failed."));
        json_object_set_new(row, "conditions", rc);
    }
    json_t *ics = oget(spec, "initContainers");
    for (size_t i = 0; i < json_array_size(ics); i++)
        if (!strcmp(jx_field_str(json_array_get(ics, i), "restartPolicy"), "Always"))
            total++;
    bool initializing = false;
    json_t *iss = oget(st, "initContainerStatuses");
    for (size_t i = 0; i < json_array_size(iss); i++) {
        json_t *c = json_array_get(iss, i);
        restarts += iget(c, "restartCount", 0);
        later(last, sizeof last, c);
        bool sidecar = is_restartable_init(spec, jx_field_str(c, "name"));
        if (sidecar) {
            sidecar_restarts += iget(c, "restartCount", 0);
            later(last_sidecar, sizeof last_sidecar, c);
        }
        json_t *state = oget(c, "state");
        json_t *term = oget(state, "terminated");
        json_t *wait = oget(state, "waiting");
        if (term && iget(term, "exitCode", 0) == 0)
            continue;
        if (sidecar && json_is_true(oget(c, "started"))) {
            if (json_is_true(oget(c, "ready")))
                ready++;
            continue;
        }
        if (term) {
            if (!*jx_field_str(term, "reason")) {
                if (iget(term, "signal", 0))
                    snprintf(reason, sizeof reason, "Init:Signal:%lld", iget(term, "signal", 0));
                else
                    snprintf(reason, sizeof reason, "Init:ExitCode:%lld",
                             iget(term, "exitCode", 0));
            } else {
                snprintf(reason, sizeof reason, "Init:%.200s", jx_field_str(term, "reason"));
            }
        } else if (wait && *jx_field_str(wait, "reason") &&
                   strcmp(jx_field_str(wait, "reason"), "PodInitializing")) {
            snprintf(reason, sizeof reason, "Init:%.200s", jx_field_str(wait, "reason"));
        } else {
            snprintf(reason, sizeof reason, "Init:%zu/%zu", i, json_array_size(ics));
        }
        initializing = true;
        break;
    }
    if (!initializing || jx_cond_is_true(o, "Initialized")) {
        restarts = sidecar_restarts;
        snprintf(last, sizeof last, "%s", last_sidecar);
        bool has_running = false;
        json_t *css = oget(st, "containerStatuses");
        for (size_t i = json_array_size(css); i-- > 0;) {
            json_t *c = json_array_get(css, i);
            restarts += iget(c, "restartCount", 0);
            later(last, sizeof last, c);
            json_t *state = oget(c, "state");
            json_t *term = oget(state, "terminated");
            json_t *wait = oget(state, "waiting");
            if (wait && *jx_field_str(wait, "reason")) {
                snprintf(reason, sizeof reason, "%.200s", jx_field_str(wait, "reason"));
            } else if (term && *jx_field_str(term, "reason")) {
                snprintf(reason, sizeof reason, "%.200s", jx_field_str(term, "reason"));
            } else if (term) {
                if (iget(term, "signal", 0))
                    snprintf(reason, sizeof reason, "Signal:%lld", iget(term, "signal", 0));
                else
                    snprintf(reason, sizeof reason, "ExitCode:%lld", iget(term, "exitCode", 0));
            } else if (json_is_true(oget(c, "ready")) && oget(state, "running")) {
                has_running = true;
                ready++;
            }
        }
        if (!strcmp(reason, "Completed") && has_running)
            snprintf(reason, sizeof reason, "%s",
                     jx_cond_is_true(o, "Ready") ? "Running" : "NotReady");
    }
    bool deleting = oget(oget(o, "metadata"), "deletionTimestamp") != NULL;
    if (deleting && !strcmp(jx_field_str(st, "reason"), "NodeLost"))
        snprintf(reason, sizeof reason, "Unknown");
    else if (deleting && strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0)
        snprintf(reason, sizeof reason, "Terminating");

    char rs[96], ago[32], rdy[48];
    if (restarts != 0 && *last)
        snprintf(rs, sizeof rs, "%lld (%s ago)", restarts, table_age(last, now, ago, sizeof ago));
    else
        snprintf(rs, sizeof rs, "%lld", restarts);
    snprintf(rdy, sizeof rdy, "%lld/%lld", ready, total);
    cell_str(cells, meta_name(o));
    cell_str(cells, rdy);
    cell_str(cells, reason);
    cell_str(cells, rs);
    cell_age(cells, o, now);
    json_t *ips = oget(st, "podIPs");
    const char *ip = json_array_size(ips) ? jx_field_str(json_array_get(ips, 0), "ip") : "";
    cell_or(cells, ip, "<none>");
    cell_or(cells, jx_field_str(spec, "nodeName"), "<none>");
    cell_or(cells, jx_field_str(st, "nominatedNodeName"), "<none>");
    json_t *gates = oget(spec, "readinessGates");
    if (json_array_size(gates) == 0) {
        cell_str(cells, "<none>");
    } else {
        size_t ok = 0;
        for (size_t i = 0; i < json_array_size(gates); i++)
            ok += jx_cond_is_true(o, jx_field_str(json_array_get(gates, i), "conditionType"));
        char g[48];
        snprintf(g, sizeof g, "%zu/%zu", ok, json_array_size(gates));
        cell_str(cells, g);
    }
}

static const struct coldef cols_pod[] = {
    COL_NAME,
    {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
    {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
    {"Restarts", "string", "",
     "The number of times the containers in this pod have been "
     "restarted and when the last container in this pod has restarted.",
     0},
    COL_AGE,
    {"IP", "string", "",
     "podIP address allocated to the pod. Routable at least within the "
     "cluster. Empty if not yet allocated.",
     1},
    {"Node", "string", "", "NodeName indicates in which node this pod is scheduled.", 1},
    {"Nominated Node", "string", "",
     "nominatedNodeName is set only when this pod preempts other "
     "pods on the node, but it cannot be scheduled right away as "
     "preemption victims receive their graceful termination "
     "periods.",
     1},
    {"Readiness Gates", "string", "",
     "If specified, all readiness gates will be evaluated for "
     "pod readiness.",
     1},
};

static void row_job(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    json_t *spec = oget(o, "spec"), *st = oget(o, "status");
    const char *status;
    if (jx_cond_is_true(o, "Complete"))
        status = "Complete";
    else if (jx_cond_is_true(o, "Failed"))
        status = "Failed";
    else if (oget(oget(o, "metadata"), "deletionTimestamp"))
        status = "Terminating";
    else if (jx_cond_is_true(o, "Suspended"))
        status = "Suspended";
    else if (jx_cond_is_true(o, "FailureTarget"))
        status = "FailureTarget";
    else if (jx_cond_is_true(o, "SuccessCriteriaMet"))
        status = "SuccessCriteriaMet";
    else
        status = "Running";
    long long succeeded = iget(st, "succeeded", 0);
    char comp[96];
    if (oget(spec, "completions") && !json_is_null(oget(spec, "completions")))
        snprintf(comp, sizeof comp, "%lld/%lld", succeeded, iget(spec, "completions", 0));
    else if (iget(spec, "parallelism", 1) > 1)
        snprintf(comp, sizeof comp, "%lld/1 of %lld", succeeded, iget(spec, "parallelism", 1));
    else
        snprintf(comp, sizeof comp, "%lld/1", succeeded);
    char dur[32] = "";
    struct timespec start, end;
    if (clock_parse_rfc3339(jx_field_str(st, "startTime"), &start) == 0) {
        double d;
        if (clock_parse_rfc3339(jx_field_str(st, "completionTime"), &end) == 0)
            d = (double)(end.tv_sec - start.tv_sec);
        else
            d = (double)(now - start.tv_sec);
        table_human_duration(d, dur, sizeof dur);
    }
    cell_str(cells, meta_name(o));
    cell_str(cells, status);
    cell_str(cells, comp);
    cell_str(cells, dur);
    cell_age(cells, o, now);
    container_cells(cells, oget(oget(oget(spec, "template"), "spec"), "containers"));
    char *sel = format_selector(oget(spec, "selector"));
    cell_or(cells, sel, "<none>");
    free(sel);
}

static const struct coldef cols_job[] = {
    COL_NAME,
    {"Status", "string", "", "Status of the job.", 0},
    {"Completions", "string", "",
     "The desired number of successfully finished pods the job "
     "should be run with.",
     0},
    {"Duration", "string", "", "Time required to complete the job.", 0},
    COL_AGE,
    {"Containers", "string", "", "Names of each container in the template.", 1},
    {"Images", "string", "", "Images referenced by each container in the template.", 1},
    {"Selector", "string", "", "A label query over pods that should match the pod count.", 1},
};

static void row_deployment(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    json_t *spec = oget(o, "spec"), *st = oget(o, "status");
    char rdy[64];
    snprintf(rdy, sizeof rdy, "%lld/%lld", iget(st, "readyReplicas", 0), iget(spec, "replicas", 1));
    cell_str(cells, meta_name(o));
    cell_str(cells, rdy);
    cell_int(cells, iget(st, "updatedReplicas", 0));
    cell_int(cells, iget(st, "availableReplicas", 0));
    cell_age(cells, o, now);
    container_cells(cells, oget(oget(oget(spec, "template"), "spec"), "containers"));
    char *sel = format_selector(oget(spec, "selector"));
    cell_str(cells, sel);
    free(sel);
}

static const struct coldef cols_deployment[] = {
    COL_NAME,
    {"Ready", "string", "", "Number of the pod with ready state", 0},
    {"Up-to-date", "string", "",
     "Total number of non-terminated pods targeted by this "
     "deployment that have the desired template spec.",
     0},
    {"Available", "string", "",
     "Total number of available pods (ready for at least "
     "minReadySeconds) targeted by this deployment.",
     0},
    COL_AGE,
    {"Containers", "string", "", "Names of each container in the template.", 1},
    {"Images", "string", "", "Images referenced by each container in the template.", 1},
    {"Selector", "string", "",
     "Label selector for pods. Existing ReplicaSets whose pods are "
     "selected by this will be the ones affected by this deployment.",
     1},
};

static void row_secret(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    cell_str(cells, meta_name(o));
    cell_str(cells, jx_field_str(o, "type"));
    cell_int(cells, (long long)json_object_size(oget(o, "data")));
    cell_age(cells, o, now);
}

static const struct coldef cols_secret[] = {
    COL_NAME,
    {"Type", "string", "", "Used to facilitate programmatic handling of secret data.", 0},
    {"Data", "string", "", "Data contains the secret data.", 0},
    COL_AGE,
};

static void row_configmap(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    cell_str(cells, meta_name(o));
    cell_int(cells, (long long)(json_object_size(oget(o, "data")) +
                                json_object_size(oget(o, "binaryData"))));
    cell_age(cells, o, now);
}

static const struct coldef cols_configmap[] = {
    COL_NAME,
    {"Data", "string", "", "Data contains the configuration data.", 0},
    COL_AGE,
};

static void row_serviceaccount(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    cell_str(cells, meta_name(o));
    cell_int(cells, (long long)json_array_size(oget(o, "secrets")));
    cell_age(cells, o, now);
}

static const struct coldef cols_serviceaccount[] = {
    COL_NAME,
    {"Secrets", "string", "",
     "Secrets is a list of the secrets in the same namespace that pods "
     "running using this ServiceAccount are allowed to use.",
     0},
    COL_AGE,
};

static void row_service(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    json_t *spec = oget(o, "spec");
    const char *type = *jx_field_str(spec, "type") ? jx_field_str(spec, "type") : "ClusterIP";
    struct buf ext, ports;
    buf_init(&ext, 1 << 16);
    buf_init(&ports, 1 << 16);
    json_t *eips = oget(spec, "externalIPs");
    if (!strcmp(type, "ExternalName")) {
        buf_puts(&ext, jx_field_str(spec, "externalName"));
    } else if (!strcmp(type, "LoadBalancer")) {
        json_t *ing = oget(oget(oget(o, "status"), "loadBalancer"), "ingress");
        for (size_t i = 0; i < json_array_size(ing); i++) {
            json_t *x = json_array_get(ing, i);
            buf_printf(&ext, "%s%s", i ? "," : "",
                       *jx_field_str(x, "ip") ? jx_field_str(x, "ip")
                                              : jx_field_str(x, "hostname"));
        }
        if (ext.len == 0)
            buf_puts(&ext, "<pending>");
    }
    if (strcmp(type, "ExternalName") != 0)
        for (size_t i = 0; i < json_array_size(eips); i++)
            buf_printf(&ext, "%s%s", ext.len ? "," : "",
                       json_string_value(json_array_get(eips, i))
                           ? json_string_value(json_array_get(eips, i))
                           : "");
    json_t *ps = oget(spec, "ports");
    for (size_t i = 0; i < json_array_size(ps); i++) {
        json_t *p = json_array_get(ps, i);
        const char *proto = *jx_field_str(p, "protocol") ? jx_field_str(p, "protocol") : "TCP";
        if (iget(p, "nodePort", 0))
            buf_printf(&ports, "%s%lld:%lld/%s", i ? "," : "", iget(p, "port", 0),
                       iget(p, "nodePort", 0), proto);
        else
            buf_printf(&ports, "%s%lld/%s", i ? "," : "", iget(p, "port", 0), proto);
    }
    cell_str(cells, meta_name(o));
    cell_str(cells, type);
    cell_or(cells, jx_field_str(spec, "clusterIP"), "<none>");
    cell_or(cells, buf_str(&ext), "<none>");
    cell_or(cells, buf_str(&ports), "<none>");
    cell_age(cells, o, now);
    /* labels.FormatLabels: sorted k=v joined by ",", "<none>" when empty. */
    char **items = NULL;
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(oget(spec, "selector"), k, v)
    {
        items = xrealloc(items, (n + 1) * sizeof *items);
        items[n++] = xasprintf("%s=%s", k, json_string_value(v) ? json_string_value(v) : "");
    }
    struct buf sel;
    buf_init(&sel, 1 << 16);
    join_sorted(&sel, items, n, ",");
    for (size_t i = 0; i < n; i++)
        free(items[i]);
    free(items);
    cell_or(cells, buf_str(&sel), "<none>");
    buf_free(&sel);
    buf_free(&ext);
    buf_free(&ports);
}

static const struct coldef cols_service[] = {
    COL_NAME,
    {"Type", "string", "", "type determines how the Service is exposed.", 0},
    {"Cluster-IP", "string", "",
     "clusterIP is the IP address of the service and is usually "
     "assigned randomly.",
     0},
    {"External-IP", "string", "",
     "externalIPs is a list of IP addresses for which nodes in the "
     "cluster will also accept traffic for this service.",
     0},
    {"Port(s)", "string", "", "The list of ports that are exposed by this service.", 0},
    COL_AGE,
    {"Selector", "string", "",
     "Route service traffic to pods with label keys and values "
     "matching this selector.",
     1},
};

static void row_lease(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    cell_str(cells, meta_name(o));
    cell_str(cells, jx_field_str(oget(o, "spec"), "holderIdentity"));
    cell_age(cells, o, now);
}

static const struct coldef cols_lease[] = {
    COL_NAME,
    {"Holder", "string", "", "The holder of the lease.", 0},
    COL_AGE,
};

static void event_row(const json_t *o, time_t now, json_t *cells, bool v1)
{
    /* events.k8s.io/v1 names the core fields differently. */
    const char *first_f = v1 ? "deprecatedFirstTimestamp" : "firstTimestamp";
    const char *last_f = v1 ? "deprecatedLastTimestamp" : "lastTimestamp";
    const char *count_f = v1 ? "deprecatedCount" : "count";
    json_t *inv = oget(o, v1 ? "regarding" : "involvedObject");
    json_t *src = oget(o, v1 ? "deprecatedSource" : "source");
    char first[32], last[32];
    if (*jx_field_str(o, first_f))
        table_age(jx_field_str(o, first_f), now, first, sizeof first);
    else
        table_age(jx_field_str(o, "eventTime"), now, first, sizeof first);
    if (*jx_field_str(o, last_f))
        table_age(jx_field_str(o, last_f), now, last, sizeof last);
    else
        snprintf(last, sizeof last, "%s", first);
    long long count = iget(o, count_f, 0);
    json_t *series = oget(o, "series");
    if (json_is_object(series)) {
        table_age(jx_field_str(series, "lastObservedTime"), now, last, sizeof last);
        count = iget(series, "count", 0);
    } else if (count == 0) {
        count = 1;
    }
    char kind[128];
    snprintf(kind, sizeof kind, "%s", jx_field_str(inv, "kind"));
    for (char *p = kind; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    char *target = *jx_field_str(inv, "name") ? xasprintf("%s/%s", kind, jx_field_str(inv, "name"))
                                              : xstrdup(kind);
    const char *comp = *jx_field_str(src, "component") ? jx_field_str(src, "component")
                                                       : jx_field_str(o, "reportingController");
    const char *inst = *jx_field_str(src, "host") ? jx_field_str(src, "host")
                                                  : jx_field_str(o, "reportingInstance");
    char *source = *inst ? xasprintf("%s, %s", comp, inst) : xstrdup(comp);
    const char *msg = jx_field_str(o, v1 ? "note" : "message");
    size_t ml = strlen(msg);
    while (ml && isspace((unsigned char)*msg)) {
        msg++;
        ml--;
    }
    while (ml && isspace((unsigned char)msg[ml - 1]))
        ml--;
    char *tmsg = xstrndup(msg, ml);
    cell_str(cells, last);
    cell_str(cells, jx_field_str(o, "type"));
    cell_str(cells, jx_field_str(o, "reason"));
    cell_str(cells, target);
    cell_str(cells, jx_field_str(inv, "fieldPath"));
    cell_str(cells, source);
    cell_str(cells, tmsg);
    cell_str(cells, first);
    cell_int(cells, count);
    cell_str(cells, meta_name(o));
    free(target);
    free(source);
    free(tmsg);
}

static void row_event(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    event_row(o, now, cells, false);
}

static void row_event_v1(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    event_row(o, now, cells, true);
}

static const struct coldef cols_event[] = {
    {"Last Seen", "string", "", "The last time this event was observed.", 0},
    {"Type", "string", "",
     "Type of this event (Normal, Warning), new types could be added in "
     "the future.",
     0},
    {"Reason", "string", "",
     "This should be a short, machine understandable string that gives "
     "the reason for the transition into the object's current status.",
     0},
    {"Object", "string", "", "The object that this event is about.", 0},
    {"Subobject", "string", "", "The subobject that this event is about.", 1},
    {"Source", "string", "", "The component reporting this event.", 1},
    {"Message", "string", "", "A human-readable description of the status of this operation.", 0},
    {"First Seen", "string", "", "The first time this event was observed.", 1},
    {"Count", "string", "", "The number of times this event has occurred.", 1},
    {"Name", "string", "name", DESC_NAME, 1},
};

static void row_rolebinding(const json_t *o, time_t now, json_t *cells, json_t *row)
{
    json_t *ref = oget(o, "roleRef");
    char *role = xasprintf("%s/%s", jx_field_str(ref, "kind"), jx_field_str(ref, "name"));
    cell_str(cells, meta_name(o));
    cell_str(cells, role);
    cell_age(cells, o, now);
    free(role);
    /* rbac.SubjectsStrings: users, groups, "namespace/name" service accounts. */
    struct buf users, groups, sas;
    buf_init(&users, 1 << 16);
    buf_init(&groups, 1 << 16);
    buf_init(&sas, 1 << 16);
    json_t *subjects = oget(o, "subjects");
    for (size_t i = 0; i < json_array_size(subjects); i++) {
        json_t *sj = json_array_get(subjects, i);
        const char *kind = jx_field_str(sj, "kind");
        struct buf *b = NULL;
        if (!strcmp(kind, "User"))
            b = &users;
        else if (!strcmp(kind, "Group"))
            b = &groups;
        else if (!strcmp(kind, "ServiceAccount"))
            b = &sas;
        if (!b)
            continue;
        if (b->len)
            buf_puts(b, ", ");
        if (b == &sas)
            buf_printf(b, "%s/%s", jx_field_str(sj, "namespace"), jx_field_str(sj, "name"));
        else
            buf_puts(b, jx_field_str(sj, "name"));
    }
    cell_str(cells, buf_str(&users));
    cell_str(cells, buf_str(&groups));
    cell_str(cells, buf_str(&sas));
    buf_free(&users);
    buf_free(&groups);
    buf_free(&sas);
}

static const struct coldef cols_rolebinding[] = {
    COL_NAME,
    {"Role", "string", "",
     "RoleRef can reference a Role in the current namespace or a "
     "ClusterRole in the global namespace.",
     0},
    COL_AGE,
    {"Users", "string", "", "Users in the roleBinding", 1},
    {"Groups", "string", "", "Groups in the roleBinding", 1},
    {"ServiceAccounts", "string", "", "ServiceAccounts in the roleBinding", 1},
};

typedef void (*row_fn)(const json_t *obj, time_t now, json_t *cells, json_t *row);

static const struct builtin {
    const char *group;
    const char *kind;
    const struct coldef *cols;
    size_t ncols;
    row_fn row;
} builtins[] = {
#define B(g, k, c, f)                                                                              \
    {                                                                                              \
        g, k, c, sizeof c / sizeof c[0], f                                                         \
    }
    B("", "Namespace", cols_namespace, row_namespace),
    B("", "Node", cols_node, row_node),
    B("", "Pod", cols_pod, row_pod),
    B("batch", "Job", cols_job, row_job),
    B("apps", "Deployment", cols_deployment, row_deployment),
    B("", "Secret", cols_secret, row_secret),
    B("", "ConfigMap", cols_configmap, row_configmap),
    B("", "ServiceAccount", cols_serviceaccount, row_serviceaccount),
    B("", "Service", cols_service, row_service),
    B("coordination.k8s.io", "Lease", cols_lease, row_lease),
    B("", "Event", cols_event, row_event),
    B("events.k8s.io", "Event", cols_event, row_event_v1),
    B("rbac.authorization.k8s.io", "RoleBinding", cols_rolebinding, row_rolebinding),
    B("rbac.authorization.k8s.io", "ClusterRoleBinding", cols_rolebinding, row_rolebinding),
#undef B
};

/* ---- printers ---------------------------------------------------------------- */

enum printer_kind { PRINTER_BUILTIN, PRINTER_DEFAULT, PRINTER_CRD };

struct crd_col {
    char *type;
    char *path;
};

struct table_printer {
    enum printer_kind kind;
    const struct builtin *b;
    json_t *columns; /* columnDefinitions */
    struct crd_col *crd;
    size_t ncrd;
};

int table_parse_include(const char *s, enum table_include *out, struct err *e)
{
    if (!s || !*s || !strcmp(s, "Metadata")) {
        *out = TABLE_INCLUDE_METADATA;
        return 0;
    }
    if (!strcmp(s, "None")) {
        *out = TABLE_INCLUDE_NONE;
        return 0;
    }
    if (!strcmp(s, "Object")) {
        *out = TABLE_INCLUDE_OBJECT;
        return 0;
    }
    return err_set(e, -EINVAL,
                   "includeObject: Unsupported value: \"%.100s\": supported values: \"None\", "
                   "\"Metadata\", \"Object\"",
                   s);
}

static json_t *coldef_json(const char *name, const char *type, const char *format, const char *desc,
                           long long priority)
{
    json_t *c = json_object();
    json_object_set_new(c, "name", json_string(name));
    json_object_set_new(c, "type", json_string(type));
    json_object_set_new(c, "format", json_string(format ? format : ""));
    json_object_set_new(c, "description", json_string(desc ? desc : ""));
    json_object_set_new(c, "priority", json_integer((json_int_t)priority));
    return c;
}

struct table_printer *table_printer_builtin(const char *group, const char *kind)
{
    struct table_printer *p = xcalloc(1, sizeof *p);
    p->columns = json_array();
    const char *g = group ? group : "";
    for (size_t i = 0; kind && i < sizeof builtins / sizeof builtins[0]; i++) {
        if (strcmp(builtins[i].group, g) != 0 || strcmp(builtins[i].kind, kind) != 0)
            continue;
        p->kind = PRINTER_BUILTIN;
        p->b = &builtins[i];
        for (size_t c = 0; c < builtins[i].ncols; c++) {
            const struct coldef *d = &builtins[i].cols[c];
            json_array_append_new(p->columns,
                                  coldef_json(d->name, d->type, d->format, d->desc, d->priority));
        }
        return p;
    }
    p->kind = PRINTER_DEFAULT;
    json_array_append_new(p->columns, coldef_json("Name", "string", "name", DESC_NAME, 0));
    json_array_append_new(p->columns, coldef_json("Created At", "date", "", DESC_CREATED, 0));
    return p;
}

struct table_printer *table_printer_crd(const json_t *columns, struct err *e)
{
    struct table_printer *p = xcalloc(1, sizeof *p);
    p->kind = PRINTER_CRD;
    p->columns = json_array();
    json_array_append_new(p->columns, coldef_json("Name", "string", "name", DESC_NAME, 0));
    size_t n = json_array_size(columns);
    if (n == 0) {
        p->crd = xcalloc(1, sizeof *p->crd);
        p->crd[0].type = xstrdup("date");
        p->crd[0].path = xstrdup(".metadata.creationTimestamp");
        p->ncrd = 1;
        json_array_append_new(p->columns, coldef_json("Age", "date", "", DESC_CREATED, 0));
        return p;
    }
    p->crd = xcalloc(n, sizeof *p->crd);
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(columns, i);
        const char *name = jx_field_str(c, "name"), *type = jx_field_str(c, "type"),
                   *path = jx_field_str(c, "jsonPath");
        if (!*name || !*type || !*path) {
            err_set(e, -EINVAL,
                    "additionalPrinterColumns[%zu]: name, type and jsonPath are required", i);
            goto fail;
        }
        if (strcmp(type, "string") && strcmp(type, "integer") && strcmp(type, "number") &&
            strcmp(type, "boolean") && strcmp(type, "date")) {
            err_set(e, -EINVAL,
                    "additionalPrinterColumns[%zu].type: Unsupported value: \"%.50s\": supported "
                    "values: \"boolean\", \"date\", \"integer\", \"number\", \"string\"",
                    i, type);
            goto fail;
        }
        json_t *probe = NULL;
        if (table_jsonpath(path, json_null(), &probe, e) != 0) {
            err_prefix(e, "additionalPrinterColumns[%zu].jsonPath", i);
            goto fail;
        }
        json_decref(probe);
        p->crd[i].type = xstrdup(type);
        p->crd[i].path = xstrdup(path);
        p->ncrd = i + 1;
        const char *desc = jx_field_str(c, "description");
        char *dflt = NULL;
        if (!*desc) {
            dflt = xasprintf("Custom resource definition column (in JSONPath format): %s", path);
            desc = dflt;
        }
        json_array_append_new(p->columns, coldef_json(name, type, jx_field_str(c, "format"), desc,
                                                      iget(c, "priority", 0)));
        free(dflt);
    }
    return p;
fail:
    table_printer_free(p);
    return NULL;
}

void table_printer_free(struct table_printer *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->ncrd; i++) {
        free(p->crd[i].type);
        free(p->crd[i].path);
    }
    free(p->crd);
    json_decref(p->columns);
    free(p);
}

/* cellForJSONValue of the CRD convertor. New reference (json null when nothing fits). */
static json_t *crd_cell(const char *type, const json_t *v, time_t now)
{
    if (!v || json_is_null(v))
        return json_null();
    if (!strcmp(type, "integer")) {
        if (json_is_integer(v))
            return json_integer(json_integer_value(v));
        if (json_is_real(v))
            return json_integer((json_int_t)json_real_value(v));
    } else if (!strcmp(type, "number")) {
        if (json_is_number(v))
            return json_real(json_number_value(v));
    } else if (!strcmp(type, "boolean")) {
        if (json_is_boolean(v))
            return json_boolean(json_is_true(v));
    } else if (!strcmp(type, "date")) {
        if (json_is_string(v)) {
            char b[32];
            struct timespec t;
            if (clock_parse_rfc3339(json_string_value(v), &t) != 0)
                return json_string("<invalid>");
            return json_string(table_age(json_string_value(v), now, b, sizeof b));
        }
    } else { /* string: printed as the jsonpath printer prints the value */
        if (json_is_string(v))
            return json_string(json_string_value(v));
        char tmp[64];
        if (json_is_integer(v)) {
            snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            return json_string(tmp);
        }
        if (json_is_real(v)) {
            snprintf(tmp, sizeof tmp, "%g", json_real_value(v));
            return json_string(tmp);
        }
        if (json_is_boolean(v))
            return json_string(json_is_true(v) ? "true" : "false");
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        json_t *r = json_string(s ? s : "");
        free(s);
        return r ? r : json_null();
    }
    return json_null();
}

static void row_default(const json_t *o, time_t now, json_t *cells)
{
    cell_str(cells, meta_name(o));
    struct timespec t;
    const char *ts = jx_field_str(oget(o, "metadata"), "creationTimestamp");
    if (clock_parse_rfc3339(ts, &t) == 0) {
        char b[40];
        cell_str(cells, clock_rfc3339(b, sizeof b, &t, 0));
    } else {
        json_array_append_new(cells, json_null());
    }
}

json_t *table_build(const struct table_printer *p, const json_t *items, const struct table_opts *o)
{
    json_t *t = json_object();
    json_object_set_new(t, "kind", json_string("Table"));
    json_object_set_new(t, "apiVersion", json_string("meta.k8s.io/v1"));
    json_t *md = json_object();
    if (o->resource_version && *o->resource_version)
        json_object_set_new(md, "resourceVersion", json_string(o->resource_version));
    if (o->continue_token && *o->continue_token)
        json_object_set_new(md, "continue", json_string(o->continue_token));
    json_object_set_new(t, "metadata", md);
    json_object_set_new(t, "columnDefinitions", jx_deep_copy(p->columns));
    json_t *rows = json_array();
    for (size_t i = 0; i < json_array_size(items); i++) {
        const json_t *obj = json_array_get(items, i);
        json_t *row = json_object();
        json_t *cells = json_array();
        if (p->kind == PRINTER_BUILTIN) {
            p->b->row(obj, o->now, cells, row);
        } else if (p->kind == PRINTER_DEFAULT) {
            row_default(obj, o->now, cells);
        } else {
            cell_str(cells, meta_name(obj));
            for (size_t c = 0; c < p->ncrd; c++) {
                json_t *res = NULL;
                const json_t *v = NULL;
                if (table_jsonpath(p->crd[c].path, obj, &res, NULL) == 0 &&
                    json_array_size(res) > 0)
                    v = json_array_get(res, 0);
                json_array_append_new(cells, crd_cell(p->crd[c].type, v, o->now));
                json_decref(res);
            }
        }
        json_object_set_new(row, "cells", cells);
        if (o->include == TABLE_INCLUDE_OBJECT) {
            json_t *whole = jx_deep_copy(obj);
            if (o->kind && !json_object_get(whole, "kind"))
                json_object_set_new(whole, "kind", json_string(o->kind));
            if (o->api_version && !json_object_get(whole, "apiVersion"))
                json_object_set_new(whole, "apiVersion", json_string(o->api_version));
            json_object_set_new(row, "object", whole);
        } else if (o->include == TABLE_INCLUDE_METADATA) {
            json_t *pom = json_object();
            json_object_set_new(pom, "kind", json_string("PartialObjectMetadata"));
            json_object_set_new(pom, "apiVersion", json_string("meta.k8s.io/v1"));
            json_t *m = oget(obj, "metadata");
            json_object_set_new(pom, "metadata", m ? jx_deep_copy(m) : json_object());
            json_object_set_new(row, "object", pom);
        }
        json_array_append_new(rows, row);
    }
    json_object_set_new(t, "rows", rows);
    return t;
}
