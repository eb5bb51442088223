#include "devhub/select.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/xalloc.h"

enum op { OP_EXISTS, OP_NOT_EXISTS, OP_EQ, OP_NE, OP_IN, OP_NOTIN };

struct req {
    enum op op;
    char *key;
    char **vals;
    size_t nvals;
};

struct sel {
    struct req *reqs;
    size_t n;
};

static void add_req(struct sel *s, struct req r)
{
    s->reqs = xrealloc(s->reqs, (s->n + 1) * sizeof(*s->reqs));
    s->reqs[s->n++] = r;
}

static void req_free(struct req *r)
{
    free(r->key);
    for (size_t i = 0; i < r->nvals; i++)
        free(r->vals[i]);
    free(r->vals);
}

void sel_free(struct sel *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        req_free(&s->reqs[i]);
    free(s->reqs);
    free(s);
}

void sel_and(struct sel *a, struct sel *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++)
        add_req(a, b->reqs[i]);
    free(b->reqs);
    free(b);
}

static char *trim(const char *p, size_t n)
{
    while (n && isspace((unsigned char)*p)) {
        p++;
        n--;
    }
    while (n && isspace((unsigned char)p[n - 1]))
        n--;
    return xstrndup(p, n);
}

static bool valid_token(const char *s, bool allow_empty)
{
    if (!*s)
        return allow_empty;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!isalnum(c) && c != '-' && c != '_' && c != '.' && c != '/')
            return false;
    }
    return true;
}

static void add_val(struct req *r, char *v)
{
    r->vals = xrealloc(r->vals, (r->nvals + 1) * sizeof(*r->vals));
    r->vals[r->nvals++] = v;
}

/* One requirement in [p, p+n). */
static int parse_one(struct sel *s, const char *p, size_t n, bool fields, struct err *e)
{
    char *t = trim(p, n);
    struct req r = {0};
    int ret = 0;
    char *op;
    if (!*t) {
        ret = err_set(e, -EINVAL, "found '', expected: identifier");
        goto out;
    }
    if ((op = strstr(t, "!=")) || (op = strstr(t, "==")) || (op = strchr(t, '='))) {
        r.op = op[0] == '!' ? OP_NE : OP_EQ;
        size_t oplen = (op[0] == '!' || op[1] == '=') ? 2 : 1;
        r.key = trim(t, (size_t)(op - t));
        add_val(&r, trim(op + oplen, strlen(op + oplen)));
    } else if (!fields && (op = strstr(t, " notin ")) != NULL) {
        r.op = OP_NOTIN;
        r.key = trim(t, (size_t)(op - t));
        op += 7;
    } else if (!fields && (op = strstr(t, " in ")) != NULL) {
        r.op = OP_IN;
        r.key = trim(t, (size_t)(op - t));
        op += 4;
    } else if (!fields && t[0] == '!') {
        r.op = OP_NOT_EXISTS;
        r.key = trim(t + 1, strlen(t + 1));
    } else if (!fields) {
        r.op = OP_EXISTS;
        r.key = xstrdup(t);
    } else {
        ret = err_set(e, -EINVAL, "invalid selector: '%s'; can't understand '%s'", t, t);
        goto out;
    }
    if (r.op == OP_IN || r.op == OP_NOTIN) {
        while (isspace((unsigned char)*op))
            op++;
        size_t l = strlen(op);
        if (*op != '(' || l < 2 || op[l - 1] != ')') {
            ret = err_set(e, -EINVAL, "found '%s', expected: '('", op);
            goto out;
        }
        const char *v = op + 1, *end = op + l - 1;
        while (v <= end) {
            const char *c = memchr(v, ',', (size_t)(end - v));
            size_t vl = c ? (size_t)(c - v) : (size_t)(end - v);
            add_val(&r, trim(v, vl));
            v += vl + 1;
        }
    }
    if (!valid_token(r.key, false)) {
        ret = err_set(e, -EINVAL, "invalid label key \"%s\"", r.key);
        goto out;
    }
    for (size_t i = 0; i < r.nvals; i++) {
        if (!valid_token(r.vals[i], true) && !fields) {
            ret = err_set(e, -EINVAL, "invalid label value: \"%s\"", r.vals[i]);
            goto out;
        }
    }
    add_req(s, r);
    r = (struct req){0};
out:
    req_free(&r);
    free(t);
    return ret;
}

static int parse(const char *str, struct sel **out, bool fields, struct err *e)
{
    struct sel *s = xcalloc(1, sizeof(*s));
    const char *p = str;
    int depth = 0, ret = 0;
    const char *start = p;
    for (;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        if ((*p == ',' && depth == 0) || !*p) {
            ret = parse_one(s, start, (size_t)(p - start), fields, e);
            if (ret)
                break;
            if (!*p)
                break;
            start = p + 1;
        }
    }
    if (ret) {
        sel_free(s);
        s = NULL;
    }
    *out = s;
    return ret;
}

int sel_parse_labels(const char *s, struct sel **out, struct err *e)
{
    return parse(s, out, false, e);
}

int sel_parse_fields(const char *s, struct sel **out, struct err *e)
{
    return parse(s, out, true, e);
}

static bool eval(const struct sel *s, const char *(*get)(void *, const char *), void *ud)
{
    if (!s)
        return true;
    for (size_t i = 0; i < s->n; i++) {
        const struct req *r = &s->reqs[i];
        const char *v = get(ud, r->key);
        bool in = false;
        for (size_t k = 0; v && k < r->nvals; k++)
            if (!strcmp(v, r->vals[k]))
                in = true;
        switch (r->op) {
        case OP_EXISTS:
            if (!v)
                return false;
            break;
        case OP_NOT_EXISTS:
            if (v)
                return false;
            break;
        case OP_EQ:
        case OP_IN:
            if (!in)
                return false;
            break;
        case OP_NE:
        case OP_NOTIN:
            if (in)
                return false;
            break;
        }
    }
    return true;
}

static const char *get_label(void *ud, const char *k)
{
    return json_string_value(json_object_get((json_t *)ud, k));
}

bool sel_match_labels(const struct sel *s, json_t *labels)
{
    return eval(s, get_label, labels);
}

static const char *get_field(void *ud, const char *path)
{
    json_t *cur = ud;
    const char *p = path;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        char key[256];
        if (n >= sizeof(key))
            return "";
        memcpy(key, p, n);
        key[n] = '\0';
        cur = json_object_get(cur, key);
        p += n;
        if (*p == '.')
            p++;
    }
    if (json_is_string(cur))
        return json_string_value(cur);
    if (json_is_true(cur))
        return "true";
    if (json_is_false(cur))
        return "false";
    return "";
}

bool sel_match_fields(const struct sel *s, json_t *obj)
{
    return eval(s, get_field, obj);
}
