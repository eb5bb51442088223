/* affinity: node affinity as kube-scheduler applies it (see affinity.h). */
#include "pkg/sched/affinity.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/labels/sel.h"
#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"

#define AFF_TEXT_MAX 2048
#define AFF_ERR_MAX  2048

enum aff_op { AFF_IN, AFF_NOTIN, AFF_EXISTS, AFF_DNE, AFF_GT, AFF_LT };

static const char *const op_names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

struct aff_req {
    char *key;
    enum aff_op op;
    char **vals;
    size_t nvals;
    int64_t num; /* Gt / Lt */
};

struct aff_term {
    struct aff_req *lab; /* matchExpressions */
    size_t nlab;
    struct aff_req *fld; /* matchFields */
    size_t nfld;
    bool bad; /* an invalid expression: the term never matches */
    int64_t weight;
};

struct affinity {
    bool has_required;
    struct aff_term *req;
    size_t nreq;
    struct aff_term *pref;
    size_t npref;
    char *text;
    char *errors; /* NULL = none */
};

/* strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no overflow. */
static bool parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s)
        return false;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return false;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (lim - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    return true;
}

static void req_free(struct aff_req *r)
{
    free(r->key);
    for (size_t i = 0; i < r->nvals; i++)
        free(r->vals[i]);
    free(r->vals);
}

static void term_free(struct aff_term *t)
{
    for (size_t i = 0; i < t->nlab; i++)
        req_free(&t->lab[i]);
    for (size_t i = 0; i < t->nfld; i++)
        req_free(&t->fld[i]);
    free(t->lab);
    free(t->fld);
}

void affinity_free(struct affinity *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nreq; i++)
        term_free(&a->req[i]);
    for (size_t i = 0; i < a->npref; i++)
        term_free(&a->pref[i]);
    free(a->req);
    free(a->pref);
    free(a->text);
    free(a->errors);
    free(a);
}

static void add_err(struct buf *errs, const char *path, const char *fmt, const char *arg)
{
    if (buf_str(errs)[0])
        buf_puts(errs, "; ");
    buf_printf(errs, "%s: ", path);
    buf_printf(errs, fmt, arg);
}

/* One NodeSelectorRequirement; false (with an error) when invalid. */
static bool req_parse(const json_t *j, bool field, const char *path, struct aff_req *r,
                      struct buf *errs)
{
    memset(r, 0, sizeof *r);
    char p[256];
    if (!json_is_object(j)) {
        add_err(errs, path, "%s", "not an object");
        return false;
    }
    const char *key = json_string_value(json_object_get(j, "key"));
    const char *op = json_string_value(json_object_get(j, "operator"));
    const json_t *vals = json_object_get(j, "values");
    bool ok = true;
    snprintf(p, sizeof p, "%s.key", path);
    if (!key) {
        add_err(errs, p, "%s", "missing or not a string");
        ok = false;
    } else if (!field) {
        struct err e = {0};
        if (sel_validate_key(key, &e) < 0) {
            add_err(errs, p, "%s", e.msg);
            ok = false;
        }
    }
    r->key = xstrdup(key ? key : "");
    size_t nops = field ? 2 : sizeof op_names / sizeof op_names[0];
    size_t k = 0;
    while (op && k < nops && strcmp(op, op_names[k]) != 0)
        k++;
    snprintf(p, sizeof p, "%s.operator", path);
    if (!op || k == nops) {
        char m[160];
        snprintf(m, sizeof m, "\"%.60s\" is not one of %s", op ? op : "",
                 field ? "In, NotIn" : "In, NotIn, Exists, DoesNotExist, Gt, Lt");
        add_err(errs, p, "%s", m);
        return false;
    }
    r->op = (enum aff_op)k;
    snprintf(p, sizeof p, "%s.values", path);
    if (vals && !json_is_null(vals) && !json_is_array(vals)) {
        add_err(errs, p, "%s", "not an array");
        return false;
    }
    size_t n = json_array_size(vals);
    r->vals = xcalloc(n ? n : 1, sizeof *r->vals);
    for (size_t i = 0; i < n; i++) {
        const char *v = json_string_value(json_array_get(vals, i));
        if (!v) {
            add_err(errs, p, "%s", "a value is not a string");
            return false;
        }
        r->vals[r->nvals++] = xstrdup(v);
        struct err e = {0};
        if (!field && sel_validate_value(v, &e) < 0) {
            add_err(errs, p, "%s", e.msg);
            ok = false;
        }
    }
    if (field) {
        if (n != 1) {
            add_err(errs, p, "%s", "must have one element");
            ok = false;
        }
        return ok;
    }
    switch (r->op) {
    case AFF_IN:
    case AFF_NOTIN:
        if (n == 0) {
            add_err(errs, p, "%s", "must be non-empty for operator In / NotIn");
            ok = false;
        }
        break;
    case AFF_EXISTS:
    case AFF_DNE:
        if (n != 0) {
            add_err(errs, p, "%s", "must be empty for operator Exists / DoesNotExist");
            ok = false;
        }
        break;
    case AFF_GT:
    case AFF_LT:
        if (n != 1) {
            add_err(errs, p, "%s", "operator Gt / Lt needs exactly one value");
            ok = false;
        } else if (!parse_i64(r->vals[0], &r->num)) {
            add_err(errs, p, "operator Gt / Lt needs an integer, not \"%.60s\"", r->vals[0]);
            ok = false;
        }
        break;
    }
    return ok;
}

static bool reqs_parse(const json_t *arr, bool field, const char *path, struct aff_req **out,
                       size_t *n, struct buf *errs)
{
    if (!json_is_array(arr)) {
        add_err(errs, path, "%s", "not an array");
        return false;
    }
    size_t cnt = json_array_size(arr);
    *out = xcalloc(cnt ? cnt : 1, sizeof **out);
    bool ok = true;
    for (size_t i = 0; i < cnt; i++) {
        char p[200];
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        if (!req_parse(json_array_get(arr, i), field, p, &(*out)[i], errs))
            ok = false;
        (*n)++;
    }
    return ok;
}

static bool json_empty_list(const json_t *j)
{
    return !j || json_is_null(j) || (json_is_array(j) && json_array_size(j) == 0);
}

/* A NodeSelectorTerm. Returns false for an empty term (to be dropped). */
static bool term_parse(const json_t *j, const char *path, struct aff_term *t, struct buf *errs)
{
    memset(t, 0, sizeof *t);
    if (!json_is_object(j)) {
        add_err(errs, path, "%s", "not an object");
        t->bad = true;
        return true;
    }
    const json_t *me = json_object_get(j, "matchExpressions");
    const json_t *mf = json_object_get(j, "matchFields");
    if (json_empty_list(me) && json_empty_list(mf))
        return false;
    char p[200];
    if (!json_empty_list(me)) {
        snprintf(p, sizeof p, "%s.matchExpressions", path);
        if (!reqs_parse(me, false, p, &t->lab, &t->nlab, errs))
            t->bad = true;
    }
    if (!json_empty_list(mf)) {
        snprintf(p, sizeof p, "%s.matchFields", path);
        if (!reqs_parse(mf, true, p, &t->fld, &t->nfld, errs))
            t->bad = true;
    }
    return true;
}

static void text_req(struct buf *b, const struct aff_req *r)
{
    buf_printf(b, "%s %s", r->key, op_names[r->op]);
    if (r->op == AFF_EXISTS || r->op == AFF_DNE)
        return;
    buf_puts(b, " [");
    for (size_t i = 0; i < r->nvals; i++)
        buf_printf(b, "%s%s", i ? "," : "", r->vals[i]);
    buf_puts(b, "]");
}

static void text_build(struct affinity *a)
{
    struct buf b;
    buf_init(&b, AFF_TEXT_MAX);
    for (size_t i = 0; i < a->nreq; i++) {
        const struct aff_term *t = &a->req[i];
        buf_puts(&b, i ? " or (" : "(");
        if (t->bad) {
            buf_puts(&b, "invalid)");
            continue;
        }
        for (size_t k = 0; k < t->nlab; k++) {
            if (k)
                buf_puts(&b, ", ");
            text_req(&b, &t->lab[k]);
        }
        for (size_t k = 0; k < t->nfld; k++) {
            if (k || t->nlab)
                buf_puts(&b, ", ");
            text_req(&b, &t->fld[k]);
        }
        buf_puts(&b, ")");
    }
    if (a->has_required && a->nreq == 0)
        buf_puts(&b, "(no terms: matches no node)");
    a->text = buf_detach(&b);
}

int affinity_from_json(const json_t *affinity, struct affinity **out, struct err *e)
{
    *out = NULL;
    if (affinity && !json_is_null(affinity) && !json_is_object(affinity))
        return err_set(e, -EINVAL, "affinity: not an object");
    const json_t *na = json_object_get(affinity, "nodeAffinity");
    if (na && !json_is_null(na) && !json_is_object(na))
        return err_set(e, -EINVAL, "affinity.nodeAffinity: not an object");
    struct affinity *a = xcalloc(1, sizeof *a);
    struct buf errs;
    buf_init(&errs, AFF_ERR_MAX);
    const json_t *rq = json_object_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
    if (rq && !json_is_null(rq)) {
        a->has_required = true;
        const json_t *terms = json_object_get(rq, "nodeSelectorTerms");
        if (!json_is_object(rq) || (terms && !json_is_null(terms) && !json_is_array(terms))) {
            add_err(&errs, "nodeSelectorTerms", "%s", "not an array");
        } else {
            size_t cnt = json_array_size(terms);
            a->req = xcalloc(cnt ? cnt : 1, sizeof *a->req);
            for (size_t i = 0; i < cnt; i++) {
                char p[64];
                snprintf(p, sizeof p, "nodeSelectorTerms[%zu]", i);
                if (term_parse(json_array_get(terms, i), p, &a->req[a->nreq], &errs))
                    a->nreq++;
                else
                    term_free(&a->req[a->nreq]);
            }
        }
    }
    const json_t *pf = json_object_get(na, "preferredDuringSchedulingIgnoredDuringExecution");
    if (pf && !json_is_null(pf) && !json_is_array(pf))
        add_err(&errs, "preferredDuringSchedulingIgnoredDuringExecution", "%s", "not an array");
    size_t cnt = json_array_size(pf);
    a->pref = xcalloc(cnt ? cnt : 1, sizeof *a->pref);
    for (size_t i = 0; i < cnt; i++) {
        const json_t *pt = json_array_get(pf, i);
        char p[96];
        snprintf(p, sizeof p, "preferredDuringSchedulingIgnoredDuringExecution[%zu]", i);
        const json_t *w = json_object_get(pt, "weight");
        if (!json_is_integer(w) || json_integer_value(w) < 0 || json_integer_value(w) > 100) {
            char wp[128];
            snprintf(wp, sizeof wp, "%s.weight", p);
            add_err(&errs, wp, "%s", "not an integer in 0..100");
            continue;
        }
        if (json_integer_value(w) == 0)
            continue;
        char tp[128];
        snprintf(tp, sizeof tp, "%s.preference", p);
        struct aff_term t;
        if (!term_parse(json_object_get(pt, "preference"), tp, &t, &errs))
            continue;
        if (t.bad) { /* upstream refuses invalid preferred terms; they score nothing */
            term_free(&t);
            continue;
        }
        t.weight = json_integer_value(w);
        a->pref[a->npref++] = t;
    }
    if (buf_str(&errs)[0])
        a->errors = buf_detach(&errs);
    else
        buf_free(&errs);
    text_build(a);
    *out = a;
    return 0;
}

static bool req_matches_label(const struct aff_req *r, const json_t *labels)
{
    const char *v = json_string_value(json_object_get(labels, r->key));
    bool has = v != NULL;
    bool in = false;
    for (size_t i = 0; has && i < r->nvals && !in; i++)
        in = strcmp(r->vals[i], v) == 0;
    int64_t num;
    switch (r->op) {
    case AFF_IN:
        return in;
    case AFF_NOTIN:
        return !in;
    case AFF_EXISTS:
        return has;
    case AFF_DNE:
        return !has;
    case AFF_GT:
        return has && parse_i64(v, &num) && num > r->num;
    case AFF_LT:
        return has && parse_i64(v, &num) && num < r->num;
    }
    return false;
}

static bool term_matches(const struct aff_term *t, const char *name, const json_t *labels)
{
    if (t->bad)
        return false;
    for (size_t i = 0; i < t->nlab; i++)
        if (!req_matches_label(&t->lab[i], labels))
            return false;
    if (!name || !name[0])
        return true; /* upstream: no node fields, the field check is skipped */
    for (size_t i = 0; i < t->nfld; i++) {
        const struct aff_req *r = &t->fld[i];
        const char *have = strcmp(r->key, "metadata.name") == 0 ? name : "";
        bool eq = strcmp(have, r->vals[0]) == 0;
        if ((r->op == AFF_IN) != eq)
            return false;
    }
    return true;
}

bool affinity_has_required(const struct affinity *a)
{
    return a && a->has_required;
}

bool affinity_required_matches(const struct affinity *a, const char *node_name,
                               const json_t *labels)
{
    if (!a || !a->has_required)
        return true;
    for (size_t i = 0; i < a->nreq; i++)
        if (term_matches(&a->req[i], node_name, labels))
            return true;
    return false;
}

int64_t affinity_preferred_score(const struct affinity *a, const char *node_name,
                                 const json_t *labels)
{
    int64_t s = 0;
    for (size_t i = 0; a && i < a->npref; i++)
        if (term_matches(&a->pref[i], node_name, labels))
            s += a->pref[i].weight;
    return s;
}

int64_t affinity_preferred_total(const struct affinity *a)
{
    int64_t s = 0;
    for (size_t i = 0; a && i < a->npref; i++)
        s += a->pref[i].weight;
    return s;
}

const char *affinity_required_text(const struct affinity *a)
{
    return a && a->text ? a->text : "";
}

const char *affinity_errors(const struct affinity *a)
{
    return a ? a->errors : NULL;
}
