/* sel: label selector and field selector parsing, matching and formatting. */
#include "pkg/labels/sel.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"

/* ---- validation ------------------------------------------------------------ */

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63 bytes; empty only when allow_empty. */
static const char *check_name(const char *s, size_t n, bool allow_empty)
{
    if (n == 0)
        return allow_empty ? NULL : "must not be empty";
    if (n > 63)
        return "must be no more than 63 characters";
    if (!is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return "must begin and end with an alphanumeric character";
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!is_alnum(c) && c != '-' && c != '_' && c != '.')
            return "may contain only alphanumerics, '-', '_' and '.'";
    }
    return NULL;
}

/* DNS-1123 subdomain: lowercase labels [a-z0-9]([-a-z0-9]*[a-z0-9])? joined by '.', <= 253. */
static const char *check_subdomain(const char *s, size_t n)
{
    if (n == 0)
        return "prefix must not be empty";
    if (n > 253)
        return "prefix must be no more than 253 characters";
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (i == start)
                return "prefix must be a DNS subdomain (empty label)";
            char a = s[start], b = s[i - 1];
            bool a_ok = (a >= 'a' && a <= 'z') || (a >= '0' && a <= '9');
            bool b_ok = (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9');
            if (!a_ok || !b_ok)
                return "prefix must be a lowercase DNS subdomain";
            start = i + 1;
            continue;
        }
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return "prefix must be a lowercase DNS subdomain";
    }
    return NULL;
}

static const char *check_key(const char *k, size_t n)
{
    const char *slash = memchr(k, '/', n);
    if (!slash)
        return check_name(k, n, false);
    size_t plen = (size_t)(slash - k);
    const char *why = check_subdomain(k, plen);
    if (why)
        return why;
    const char *name = slash + 1;
    size_t nlen = n - plen - 1;
    if (memchr(name, '/', nlen))
        return "may contain at most one '/'";
    why = check_name(name, nlen, false);
    return why ? why : NULL;
}

int sel_validate_key(const char *key, struct err *e)
{
    const char *why = key ? check_key(key, strlen(key)) : "must not be empty";
    if (why)
        return err_set(e, -EINVAL, "invalid label key \"%.100s\": %s", key ? key : "", why);
    return 0;
}

int sel_validate_value(const char *value, struct err *e)
{
    const char *why = value ? check_name(value, strlen(value), true) : "missing";
    if (why)
        return err_set(e, -EINVAL, "invalid label value \"%.100s\": %s", value ? value : "", why);
    return 0;
}

/* Strict int64 parse. */
static bool parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s)
        return false;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s)
        return false;
    *out = v;
    return true;
}

/* ---- selector construction --------------------------------------------------- */

static void req_release(struct sel_req *r)
{
    free(r->key);
    for (size_t i = 0; i < r->nvalues; i++)
        free(r->values[i]);
    free(r->values);
}

void sel_free(struct sel *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        req_release(&s->reqs[i]);
    free(s->reqs);
    free(s);
}

struct sel *sel_everything(void)
{
    return xcalloc(1, sizeof(struct sel));
}

struct sel *sel_nothing(void)
{
    struct sel *s = xcalloc(1, sizeof(struct sel));
    s->nothing = true;
    return s;
}

bool sel_is_everything(const struct sel *s)
{
    return s && !s->nothing && s->n == 0;
}

bool sel_is_nothing(const struct sel *s)
{
    return !s || s->nothing;
}

/* Grow an array of n elements for one more: capacity doubles at powers of two. */
static void *grow(void *p, size_t n, size_t elsize)
{
    if (n >= 4 && (n & (n - 1)) != 0)
        return p;
    return xrealloc(p, (n < 4 ? 4 : n * 2) * elsize);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A requirement under construction: values appended, then sorted/deduplicated. */
static void req_add_value(struct sel_req *r, const char *v, size_t n)
{
    r->values = grow(r->values, r->nvalues, sizeof(char *));
    r->values[r->nvalues++] = xstrndup(v, n);
}

static void req_normalize(struct sel_req *r)
{
    if (r->nvalues < 2)
        return;
    qsort(r->values, r->nvalues, sizeof(char *), cmp_str);
    size_t w = 1;
    for (size_t i = 1; i < r->nvalues; i++) {
        if (strcmp(r->values[i], r->values[w - 1]) == 0) {
            free(r->values[i]);
            continue;
        }
        r->values[w++] = r->values[i];
    }
    r->nvalues = w;
}

/* Append (moves r into s). */
static void sel_push(struct sel *s, struct sel_req *r)
{
    s->reqs = grow(s->reqs, s->n, sizeof(struct sel_req));
    s->reqs[s->n++] = *r;
    memset(r, 0, sizeof(*r));
}

struct ranked_req {
    struct sel_req r;
    size_t rank; /* original position: makes qsort stable */
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked_req *x = a, *y = b;
    int c = strcmp(x->r.key, y->r.key);
    if (c)
        return c;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Stable sort by key, O(n log n) (selectors from clients may be long). */
static void sel_sort(struct sel *s)
{
    if (s->n < 2)
        return;
    struct ranked_req *tmp = xmalloc(s->n * sizeof(*tmp));
    for (size_t i = 0; i < s->n; i++) {
        tmp[i].r = s->reqs[i];
        tmp[i].rank = i;
    }
    qsort(tmp, s->n, sizeof(*tmp), cmp_ranked);
    for (size_t i = 0; i < s->n; i++)
        s->reqs[i] = tmp[i].r;
    free(tmp);
}

/* Check values against the operator; message into why. */
static const char *req_check(const struct sel_req *r, const char **badval)
{
    *badval = NULL;
    switch (r->op) {
    case SEL_OP_EXISTS:
    case SEL_OP_NOT_EXISTS:
        return r->nvalues ? "values must be empty" : NULL;
    case SEL_OP_IN:
    case SEL_OP_NOTIN:
        if (r->nvalues == 0)
            return "values must be non-empty";
        break;
    case SEL_OP_EQ:
    case SEL_OP_NEQ:
    case SEL_OP_GT:
    case SEL_OP_LT:
        if (r->nvalues != 1)
            return "exactly one value is required";
        break;
    }
    for (size_t i = 0; i < r->nvalues; i++) {
        const char *v = r->values[i];
        const char *why = check_name(v, strlen(v), true);
        if (why) {
            *badval = v;
            return why;
        }
        int64_t dummy;
        if ((r->op == SEL_OP_GT || r->op == SEL_OP_LT) && !parse_i64(v, &dummy)) {
            *badval = v;
            return "must be an integer for > and <";
        }
    }
    return NULL;
}

/* ---- lexer / parser --------------------------------------------------------------- */

enum tok {
    T_EOS,
    T_ID,
    T_IN,
    T_NOTIN,
    T_EQ,
    T_DEQ,
    T_NEQ,
    T_NOT,
    T_LPAR,
    T_RPAR,
    T_COMMA,
    T_GT,
    T_LT
};

struct lexer {
    const char *s;
    size_t len;
    size_t pos;
    /* last token read */
    enum tok t;
    size_t start;
    size_t tlen;
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
    return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

/* Read the next token. In value context, "in"/"notin" are plain identifiers. */
static enum tok lex(struct lexer *l, bool values)
{
    while (l->pos < l->len && is_space(l->s[l->pos]))
        l->pos++;
    l->start = l->pos;
    if (l->pos >= l->len) {
        l->tlen = 0;
        return l->t = T_EOS;
    }
    char c = l->s[l->pos];
    char d = l->pos + 1 < l->len ? l->s[l->pos + 1] : '\0';
    enum tok t;
    size_t n = 1;
    switch (c) {
    case '!':
        t = d == '=' ? T_NEQ : T_NOT;
        n = d == '=' ? 2 : 1;
        break;
    case '=':
        t = d == '=' ? T_DEQ : T_EQ;
        n = d == '=' ? 2 : 1;
        break;
    case '(':
        t = T_LPAR;
        break;
    case ')':
        t = T_RPAR;
        break;
    case ',':
        t = T_COMMA;
        break;
    case '>':
        t = T_GT;
        break;
    case '<':
        t = T_LT;
        break;
    default:
        n = 0;
        while (l->pos + n < l->len && !is_space(l->s[l->pos + n]) && !is_special(l->s[l->pos + n]))
            n++;
        t = T_ID;
        if (!values && n == 2 && memcmp(l->s + l->pos, "in", 2) == 0)
            t = T_IN;
        else if (!values && n == 5 && memcmp(l->s + l->pos, "notin", 5) == 0)
            t = T_NOTIN;
        break;
    }
    l->pos += n;
    l->tlen = n;
    return l->t = t;
}

/* Look at the next token without consuming it. */
static enum tok peek(struct lexer *l, bool values)
{
    struct lexer save = *l;
    enum tok t = lex(l, values);
    *l = save;
    return t;
}

static int perr(struct err *e, const struct lexer *l, size_t pos, const char *what)
{
    return err_set(e, -EINVAL, "selector \"%.200s\": %s at position %zu", l->s, what, pos);
}

static int parse_values(struct lexer *l, struct sel_req *r, struct err *e)
{
    if (lex(l, true) != T_LPAR)
        return perr(e, l, l->start, "expected \"(\"");
    for (;;) {
        enum tok t = lex(l, true);
        if (t == T_ID) {
            req_add_value(r, l->s + l->start, l->tlen);
            t = lex(l, true);
        } else if (t == T_COMMA || t == T_RPAR) {
            /* empty item: "()", "(,x)", "(x,)" mean the empty value */
            req_add_value(r, "", 0);
        } else if (t == T_EOS) {
            return perr(e, l, l->start, "missing \")\"");
        } else {
            return perr(e, l, l->start, "expected a value, \",\" or \")\"");
        }
        if (t == T_RPAR)
            return 0;
        if (t == T_EOS)
            return perr(e, l, l->start, "missing \")\"");
        if (t != T_COMMA)
            return perr(e, l, l->start, "expected \",\" or \")\"");
    }
}

static int parse_requirement(struct lexer *l, struct sel *s, struct err *e)
{
    struct sel_req r = {0};
    int rc = 0;
    enum tok t = lex(l, false);
    bool neg = false;
    if (t == T_NOT) {
        neg = true;
        t = lex(l, false);
        if (t != T_ID) {
            rc = perr(e, l, l->start, "expected a key after \"!\"");
            goto out;
        }
    }
    if (t != T_ID) {
        rc = perr(e, l, l->start, "expected a key or \"!\"");
        goto out;
    }
    size_t key_pos = l->start;
    r.key = xstrndup(l->s + l->start, l->tlen);
    const char *why = check_key(r.key, l->tlen);
    if (why) {
        char msg[256];
        snprintf(msg, sizeof(msg), "invalid key \"%.100s\" (%s)", r.key, why);
        rc = perr(e, l, key_pos, msg);
        goto out;
    }
    if (neg) {
        r.op = SEL_OP_NOT_EXISTS;
        goto push;
    }
    t = peek(l, false);
    if (t == T_EOS || t == T_COMMA) {
        r.op = SEL_OP_EXISTS;
        goto push;
    }
    t = lex(l, false);
    switch (t) {
    case T_IN:
    case T_NOTIN:
        r.op = t == T_IN ? SEL_OP_IN : SEL_OP_NOTIN;
        rc = parse_values(l, &r, e);
        if (rc < 0)
            goto out;
        break;
    case T_EQ:
    case T_DEQ:
    case T_NEQ:
    case T_GT:
    case T_LT:
        r.op = t == T_NEQ ? SEL_OP_NEQ : t == T_GT ? SEL_OP_GT : t == T_LT ? SEL_OP_LT : SEL_OP_EQ;
        t = peek(l, true);
        if (t == T_EOS || t == T_COMMA) {
            req_add_value(&r, "", 0);
        } else if (lex(l, true) == T_ID) {
            req_add_value(&r, l->s + l->start, l->tlen);
        } else {
            rc = perr(e, l, l->start, "expected a value");
            goto out;
        }
        break;
    default:
        rc = perr(e, l, l->start, "expected an operator (=, ==, !=, in, notin, >, <)");
        goto out;
    }
push:
    req_normalize(&r);
    const char *badval;
    why = req_check(&r, &badval);
    if (why) {
        char msg[256];
        if (badval)
            snprintf(msg, sizeof(msg), "invalid value \"%.63s\" for key \"%.100s\" (%s)", badval,
                     r.key, why);
        else
            snprintf(msg, sizeof(msg), "key \"%.100s\": %s", r.key, why);
        rc = perr(e, l, key_pos, msg);
        goto out;
    }
    sel_push(s, &r);
out:
    req_release(&r);
    return rc;
}

int sel_parse(const char *str, struct sel **out, struct err *e)
{
    *out = NULL;
    if (!str)
        str = "";
    size_t len = strlen(str);
    if (len > SEL_MAX_LEN)
        return err_set(e, -E2BIG, "selector of %zu bytes is longer than the limit of %d", len,
                       SEL_MAX_LEN);
    struct lexer l = {.s = str, .len = len};
    struct sel *s = sel_everything();
    int rc = 0;
    if (peek(&l, false) == T_EOS)
        goto done;
    for (;;) {
        rc = parse_requirement(&l, s, e);
        if (rc < 0)
            goto fail;
        enum tok t = lex(&l, false);
        if (t == T_EOS)
            break;
        if (t != T_COMMA) {
            rc = perr(e, &l, l.start, "expected \",\" or the end of the selector");
            goto fail;
        }
    }
done:
    sel_sort(s);
    *out = s;
    return 0;
fail:
    sel_free(s);
    return rc;
}

int sel_from_label_selector(const json_t *ls, struct sel **out, struct err *e)
{
    *out = NULL;
    if (!ls || json_is_null(ls)) {
        *out = sel_nothing();
        return 0;
    }
    if (!json_is_object(ls))
        return err_set(e, -EINVAL, "label selector: must be an object");
    struct sel *s = sel_everything();
    struct sel_req r = {0};
    int rc = 0;
    json_t *ml = json_object_get(ls, "matchLabels");
    if (ml && !json_is_null(ml)) {
        if (!json_is_object(ml)) {
            rc = err_set(e, -EINVAL, "matchLabels: must be an object");
            goto fail;
        }
        const char *k;
        json_t *v;
        json_object_foreach(ml, k, v)
        {
            if (!json_is_string(v)) {
                rc = err_set(e, -EINVAL, "matchLabels[\"%.100s\"]: value must be a string", k);
                goto fail;
            }
            const char *why = check_key(k, strlen(k));
            if (why) {
                rc = err_set(e, -EINVAL, "matchLabels: invalid key \"%.100s\": %s", k, why);
                goto fail;
            }
            const char *sv = json_string_value(v);
            why = check_name(sv, strlen(sv), true);
            if (why) {
                rc = err_set(e, -EINVAL, "matchLabels[\"%.100s\"]: invalid value \"%.63s\": %s", k,
                             sv, why);
                goto fail;
            }
            r.key = xstrdup(k);
            r.op = SEL_OP_EQ;
            req_add_value(&r, sv, strlen(sv));
            sel_push(s, &r);
        }
    }
    json_t *mx = json_object_get(ls, "matchExpressions");
    if (mx && !json_is_null(mx)) {
        if (!json_is_array(mx)) {
            rc = err_set(e, -EINVAL, "matchExpressions: must be an array");
            goto fail;
        }
        size_t i;
        json_t *x;
        json_array_foreach(mx, i, x)
        {
            const char *k = json_string_value(json_object_get(x, "key"));
            const char *op = json_string_value(json_object_get(x, "operator"));
            json_t *vals = json_object_get(x, "values");
            if (!json_is_object(x)) {
                rc = err_set(e, -EINVAL, "matchExpressions[%zu]: must be an object", i);
                goto fail;
            }
            if (!k) {
                rc = err_set(e, -EINVAL, "matchExpressions[%zu].key: required", i);
                goto fail;
            }
            const char *why = check_key(k, strlen(k));
            if (why) {
                rc = err_set(e, -EINVAL, "matchExpressions[%zu].key: invalid key \"%.100s\": %s", i,
                             k, why);
                goto fail;
            }
            if (!op) {
                rc = err_set(e, -EINVAL, "matchExpressions[%zu].operator: required", i);
                goto fail;
            }
            if (strcmp(op, "In") == 0)
                r.op = SEL_OP_IN;
            else if (strcmp(op, "NotIn") == 0)
                r.op = SEL_OP_NOTIN;
            else if (strcmp(op, "Exists") == 0)
                r.op = SEL_OP_EXISTS;
            else if (strcmp(op, "DoesNotExist") == 0)
                r.op = SEL_OP_NOT_EXISTS;
            else {
                rc = err_set(e, -EINVAL,
                             "matchExpressions[%zu].operator: \"%.50s\" is not a valid operator "
                             "(In, NotIn, Exists, DoesNotExist)",
                             i, op);
                goto fail;
            }
            r.key = xstrdup(k);
            if (vals && !json_is_null(vals)) {
                if (!json_is_array(vals)) {
                    rc = err_set(e, -EINVAL, "matchExpressions[%zu].values: must be an array", i);
                    goto fail;
                }
                size_t j;
                json_t *v;
                json_array_foreach(vals, j, v)
                {
                    if (!json_is_string(v)) {
                        rc = err_set(e, -EINVAL,
                                     "matchExpressions[%zu].values[%zu]: must be a string", i, j);
                        goto fail;
                    }
                    req_add_value(&r, json_string_value(v), json_string_length(v));
                }
            }
            req_normalize(&r);
            const char *badval;
            why = req_check(&r, &badval);
            if (why && badval) {
                rc =
                    err_set(e, -EINVAL, "matchExpressions[%zu].values: invalid value \"%.63s\": %s",
                            i, badval, why);
                goto fail;
            }
            if (why) {
                rc = err_set(e, -EINVAL, "matchExpressions[%zu].values: %s for operator %s", i,
                             r.op == SEL_OP_IN || r.op == SEL_OP_NOTIN ? "must be non-empty"
                                                                       : "must be empty",
                             op);
                goto fail;
            }
            sel_push(s, &r);
        }
    }
    sel_sort(s);
    *out = s;
    return 0;
fail:
    req_release(&r);
    sel_free(s);
    return rc;
}

/* ---- matching ---------------------------------------------------------------------- */

typedef const char *(*lookup_fn)(const void *ctx, const char *key);

static bool req_matches(const struct sel_req *r, const char *have)
{
    switch (r->op) {
    case SEL_OP_EXISTS:
        return have != NULL;
    case SEL_OP_NOT_EXISTS:
        return have == NULL;
    case SEL_OP_EQ:
    case SEL_OP_IN:
        if (!have)
            return false;
        for (size_t i = 0; i < r->nvalues; i++)
            if (strcmp(r->values[i], have) == 0)
                return true;
        return false;
    case SEL_OP_NEQ:
    case SEL_OP_NOTIN:
        if (!have)
            return true;
        for (size_t i = 0; i < r->nvalues; i++)
            if (strcmp(r->values[i], have) == 0)
                return false;
        return true;
    case SEL_OP_GT:
    case SEL_OP_LT: {
        int64_t hv, rv;
        if (!have || r->nvalues != 1 || !parse_i64(have, &hv) || !parse_i64(r->values[0], &rv))
            return false;
        return r->op == SEL_OP_GT ? hv > rv : hv < rv;
    }
    }
    return false;
}

static bool sel_match_with(const struct sel *s, lookup_fn fn, const void *ctx)
{
    if (sel_is_nothing(s))
        return false;
    for (size_t i = 0; i < s->n; i++)
        if (!req_matches(&s->reqs[i], fn(ctx, s->reqs[i].key)))
            return false;
    return true;
}

static const char *lookup_json(const void *ctx, const char *key)
{
    json_t *v = json_object_get((const json_t *)ctx, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

bool sel_matches(const struct sel *s, const json_t *labels)
{
    return sel_match_with(s, lookup_json, json_is_object(labels) ? labels : NULL);
}

struct kv_ctx {
    const struct sel_label *labels;
    size_t n;
};

static const char *lookup_kv(const void *ctx, const char *key)
{
    const struct kv_ctx *c = ctx;
    for (size_t i = 0; i < c->n; i++)
        if (c->labels[i].key && strcmp(c->labels[i].key, key) == 0)
            return c->labels[i].value ? c->labels[i].value : "";
    return NULL;
}

bool sel_matches_kv(const struct sel *s, const struct sel_label *labels, size_t n)
{
    struct kv_ctx c = {labels, n};
    return sel_match_with(s, lookup_kv, &c);
}

/* ---- formatting / comparison ----------------------------------------------------------- */

char *sel_format(const struct sel *s)
{
    struct buf b;
    buf_init(&b, (size_t)SEL_MAX_LEN * 4);
    for (size_t i = 0; s && !s->nothing && i < s->n; i++) {
        const struct sel_req *r = &s->reqs[i];
        if (i)
            buf_puts(&b, ",");
        const char *v0 = r->nvalues ? r->values[0] : "";
        switch (r->op) {
        case SEL_OP_EXISTS:
            buf_puts(&b, r->key);
            break;
        case SEL_OP_NOT_EXISTS:
            buf_printf(&b, "!%s", r->key);
            break;
        case SEL_OP_EQ:
            buf_printf(&b, "%s=%s", r->key, v0);
            break;
        case SEL_OP_NEQ:
            buf_printf(&b, "%s!=%s", r->key, v0);
            break;
        case SEL_OP_GT:
            buf_printf(&b, "%s>%s", r->key, v0);
            break;
        case SEL_OP_LT:
            buf_printf(&b, "%s<%s", r->key, v0);
            break;
        case SEL_OP_IN:
        case SEL_OP_NOTIN:
            buf_printf(&b, "%s %s (", r->key, r->op == SEL_OP_IN ? "in" : "notin");
            for (size_t j = 0; j < r->nvalues; j++)
                buf_printf(&b, "%s%s", j ? "," : "", r->values[j]);
            buf_puts(&b, ")");
            break;
        }
    }
    return buf_detach(&b);
}

bool sel_equal(const struct sel *a, const struct sel *b)
{
    if (sel_is_nothing(a) || sel_is_nothing(b))
        return sel_is_nothing(a) && sel_is_nothing(b);
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        const struct sel_req *x = &a->reqs[i], *y = &b->reqs[i];
        if (x->op != y->op || strcmp(x->key, y->key) != 0 || x->nvalues != y->nvalues)
            return false;
        for (size_t j = 0; j < x->nvalues; j++)
            if (strcmp(x->values[j], y->values[j]) != 0)
                return false;
    }
    return true;
}

const char *sel_exact_value(const struct sel *s, const char *key)
{
    for (size_t i = 0; s && !s->nothing && i < s->n; i++) {
        const struct sel_req *r = &s->reqs[i];
        if (strcmp(r->key, key) != 0)
            continue;
        if ((r->op == SEL_OP_EQ || r->op == SEL_OP_IN) && r->nvalues == 1)
            return r->values[0];
    }
    return NULL;
}

/* ---- field selectors ---------------------------------------------------------------------- */

static void field_escape(struct buf *b, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == ',' || *v == '=')
            buf_append(b, "\\", 1);
        buf_append(b, v, 1);
    }
}

static char *term_text(const struct sel_field_term *t)
{
    struct buf b;
    buf_init(&b, (size_t)SEL_MAX_LEN * 2 + 16);
    buf_puts(&b, t->field);
    buf_puts(&b, t->op == SEL_FIELD_EQ ? "=" : "!=");
    field_escape(&b, t->value);
    return buf_detach(&b);
}

void sel_field_free(struct sel_field *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        free(f->terms[i].field);
        free(f->terms[i].value);
    }
    free(f->terms);
    free(f);
}

static int ferr(struct err *e, const char *s, size_t pos, const char *what)
{
    return err_set(e, -EINVAL, "field selector \"%.200s\": %s at position %zu", s, what, pos);
}

/* Parse one raw term s[a, b). */
static int field_term(const char *s, size_t a, size_t b, struct sel_field_term *t, struct err *e)
{
    size_t i, oplen = 0;
    for (i = a; i < b; i++) {
        if (s[i] == '!' && i + 1 < b && s[i + 1] == '=') {
            t->op = SEL_FIELD_NEQ;
            oplen = 2;
            break;
        }
        if (s[i] == '=') {
            t->op = SEL_FIELD_EQ;
            oplen = (i + 1 < b && s[i + 1] == '=') ? 2 : 1;
            break;
        }
    }
    if (!oplen)
        return ferr(e, s, a, "expected an operator (=, ==, !=) in term");
    if (i == a)
        return ferr(e, s, a, "missing field name");
    for (size_t k = a; k < i; k++) {
        char c = s[k];
        if (is_space(c) || c == '\\' || c == '(' || c == ')' || c == '!')
            return ferr(e, s, k, "invalid character in field name");
    }
    struct buf v;
    buf_init(&v, SEL_MAX_LEN + 1);
    for (size_t k = i + oplen; k < b; k++) {
        char c = s[k];
        if (c == '\\') {
            if (k + 1 >= b) {
                buf_free(&v);
                return ferr(e, s, k, "unterminated escape \"\\\"");
            }
            char d = s[k + 1];
            if (d != '\\' && d != ',' && d != '=') {
                buf_free(&v);
                return ferr(e, s, k,
                            "invalid escape sequence (only \\\\, \\, and \\= are allowed)");
            }
            buf_append(&v, &d, 1);
            k++;
            continue;
        }
        if (c == '=' || c == ',') {
            buf_free(&v);
            return ferr(e, s, k, "unescaped \"=\" or \",\" in value");
        }
        buf_append(&v, &c, 1);
    }
    t->field = xstrndup(s + a, i - a);
    t->value = buf_detach(&v);
    return 0;
}

static int cmp_term(const void *x, const void *y)
{
    const struct sel_field_term *a = x, *b = y;
    char *ta = term_text(a), *tb = term_text(b);
    int c = strcmp(ta, tb);
    free(ta);
    free(tb);
    return c;
}

int sel_field_parse(const char *s, struct sel_field **out, struct err *e)
{
    *out = NULL;
    if (!s)
        s = "";
    size_t len = strlen(s);
    if (len > SEL_MAX_LEN)
        return err_set(e, -E2BIG, "field selector of %zu bytes is longer than the limit of %d", len,
                       SEL_MAX_LEN);
    struct sel_field *f = xcalloc(1, sizeof(*f));
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] == '\\') {
            i++; /* skip the escaped character (validated in field_term) */
            if (i < len)
                continue;
        }
        if (i < len && s[i] != ',')
            continue;
        size_t end = i > len ? len : i;
        if (end > start) {
            struct sel_field_term t = {0};
            int rc = field_term(s, start, end, &t, e);
            if (rc < 0) {
                sel_field_free(f);
                return rc;
            }
            f->terms = grow(f->terms, f->n, sizeof(*f->terms));
            f->terms[f->n++] = t;
        }
        start = i + 1;
    }
    if (f->n > 1)
        qsort(f->terms, f->n, sizeof(*f->terms), cmp_term);
    *out = f;
    return 0;
}

/* Text of a JSON scalar at path for field matching; "" when absent. Writes into tmp when needed. */
static const char *field_value(const json_t *obj, const char *path, char *tmp, size_t n)
{
    json_t *v = jx_get(obj, path);
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_true(v))
        return "true";
    if (json_is_false(v))
        return "false";
    if (json_is_integer(v)) {
        snprintf(tmp, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return tmp;
    }
    return "";
}

bool sel_field_matches(const struct sel_field *f, const json_t *obj)
{
    for (size_t i = 0; f && i < f->n; i++) {
        char tmp[32];
        const char *have = field_value(obj, f->terms[i].field, tmp, sizeof(tmp));
        bool eq = strcmp(have, f->terms[i].value) == 0;
        if (eq != (f->terms[i].op == SEL_FIELD_EQ))
            return false;
    }
    return true;
}

char *sel_field_format(const struct sel_field *f)
{
    struct buf b;
    buf_init(&b, (size_t)SEL_MAX_LEN * 4);
    for (size_t i = 0; f && i < f->n; i++) {
        char *t = term_text(&f->terms[i]);
        if (i)
            buf_puts(&b, ",");
        buf_puts(&b, t);
        free(t);
    }
    return buf_detach(&b);
}

bool sel_field_equal(const struct sel_field *a, const struct sel_field *b)
{
    size_t na = a ? a->n : 0, nb = b ? b->n : 0;
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        const struct sel_field_term *x = &a->terms[i], *y = &b->terms[i];
        if (x->op != y->op || strcmp(x->field, y->field) != 0 || strcmp(x->value, y->value) != 0)
            return false;
    }
    return true;
}

const char *sel_field_exact_value(const struct sel_field *f, const char *field)
{
    for (size_t i = 0; f && i < f->n; i++)
        if (f->terms[i].op == SEL_FIELD_EQ && strcmp(f->terms[i].field, field) == 0)
            return f->terms[i].value;
    return NULL;
}
