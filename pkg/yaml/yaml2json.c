#include "pkg/yaml/yaml2json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

/* An open mapping or sequence. */
struct frame {
    json_t *node;   /* object or array, owned */
    char *key;      /* pending mapping key (owned) while waiting for its value */
    size_t key_len; /* keys may contain NUL (double-quoted "\0") */
    bool have_key;
    bool merge;    /* the pending key is the merge key "<<" */
    char *anchor;  /* owned, NULL when none */
    size_t nodes0; /* ctx.nodes when this collection started */
    unsigned height;
};

/* A completed anchored node; values of ctx.anchors index into this array. */
struct anchor {
    json_t *value; /* owned reference */
    size_t nodes;
    unsigned height;
};

struct ctx {
    size_t max_depth, max_nodes, max_alias_nodes;
    struct frame *st;
    size_t depth;
    json_t *anchor_ix; /* name -> integer index into an[] */
    struct anchor *an;
    size_t n_an, cap_an;
    size_t nodes, alias_nodes;
    json_t *root; /* the current document's value */
    bool root_set;
    struct err *e;
};

static int fail_at(struct ctx *c, const yaml_mark_t *m, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_at(struct ctx *c, const yaml_mark_t *m, int code, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(c->e, code, "%zu:%zu: %s", m->line + 1, m->column + 1, msg);
}

static void anchors_clear(struct ctx *c)
{
    for (size_t i = 0; i < c->n_an; i++)
        json_decref(c->an[i].value);
    c->n_an = 0;
    json_object_clear(c->anchor_ix);
}

static void frames_free(struct ctx *c)
{
    while (c->depth > 0) {
        struct frame *f = &c->st[--c->depth];
        json_decref(f->node);
        free(f->key);
        free(f->anchor);
    }
}

/* ---- scalar resolution --------------------------------------------------- */

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

static const char *const k_true[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                     "True", "TRUE", "on",  "On",  "ON",  NULL};
static const char *const k_false[] = {"n",     "N",     "no",  "No",  "NO",  "false",
                                      "False", "FALSE", "off", "Off", "OFF", NULL};
static const char *const k_null[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const k_nonfinite[] = {".nan",  ".NaN",  ".NAN",  ".inf",  ".Inf",
                                          ".INF",  "+.inf", "+.Inf", "+.INF", "-.inf",
                                          "-.Inf", "-.INF", NULL};

static int digit_val(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A' + 10;
    return 99;
}

/*
 * Go's strconv.ParseUint(s, 0, 64) on an unsigned digit string: "0x", "0o",
 * "0b" prefixes, leading "0" = octal. Returns false on syntax or range error.
 */
static bool parse_u64(const char *s, uint64_t *out)
{
    int base = 10;
    if (s[0] == '0' && s[1] != '\0') {
        if (s[1] == 'x' || s[1] == 'X') {
            base = 16;
            s += 2;
        } else if (s[1] == 'o' || s[1] == 'O') {
            base = 8;
            s += 2;
        } else if (s[1] == 'b' || s[1] == 'B') {
            base = 2;
            s += 2;
        } else {
            base = 8;
            s += 1;
        }
    }
    if (*s == '\0')
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        int d = digit_val(*s);
        if (d >= base)
            return false;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return true;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool yaml_style_float(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    size_t nd = 0;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9') {
            s++;
            nd++;
        }
        if (nd == 0)
            return false;
    } else {
        while (*s >= '0' && *s <= '9') {
            s++;
            nd++;
        }
        if (nd == 0)
            return false;
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9')
                s++;
        }
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        nd = 0;
        while (*s >= '0' && *s <= '9') {
            s++;
            nd++;
        }
        if (nd == 0)
            return false;
    }
    return *s == '\0';
}

enum rtype { R_STR, R_NULL, R_BOOL, R_INT, R_UINT, R_FLOAT, R_NONFINITE };

struct resolved {
    enum rtype t;
    bool b;
    int64_t i;
    uint64_t u;
    double f;
};

/* Resolve a plain scalar's text (len bytes, NUL-terminated) like goyaml.v2. */
static void resolve_plain(const char *s, size_t len, struct resolved *r)
{
    memset(r, 0, sizeof *r);
    r->t = R_STR;
    if (strlen(s) != len) /* embedded NUL: cannot be anything but a string */
        return;
    if (in_list(s, k_null)) {
        r->t = R_NULL;
        return;
    }
    if (in_list(s, k_true) || in_list(s, k_false)) {
        r->t = R_BOOL;
        r->b = in_list(s, k_true);
        return;
    }
    if (in_list(s, k_nonfinite)) {
        r->t = R_NONFINITE;
        return;
    }
    char c0 = s[0];
    if (c0 == '.') {
        if (yaml_style_float(s)) {
            errno = 0;
            char *end = NULL;
            double f = strtod(s, &end);
            if (errno == 0 && end && *end == '\0') {
                r->t = R_FLOAT;
                r->f = f;
            }
        }
        return;
    }
    if (!(c0 == '+' || c0 == '-' || (c0 >= '0' && c0 <= '9')))
        return;
    /* Remove '_' separators (goyaml.v2 does this before ParseInt/ParseFloat). */
    char *plain = xmalloc(len + 1);
    size_t n = 0;
    for (size_t k = 0; k < len; k++)
        if (s[k] != '_')
            plain[n++] = s[k];
    plain[n] = '\0';
    const char *digits = plain;
    bool neg = false;
    if (*digits == '+' || *digits == '-') {
        neg = *digits == '-';
        digits++;
    }
    uint64_t u;
    if (parse_u64(digits, &u)) {
        if (!neg && u <= (uint64_t)INT64_MAX) {
            r->t = R_INT;
            r->i = (int64_t)u;
        } else if (neg && u <= (uint64_t)INT64_MAX + 1u) {
            r->t = R_INT;
            r->i = u == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)u;
        } else if (!neg && plain[0] != '+') {
            r->t = R_UINT; /* ParseUint takes no sign */
            r->u = u;
        }
        if (r->t != R_STR)
            goto out;
    }
    if (yaml_style_float(plain)) {
        errno = 0;
        char *end = NULL;
        double f = strtod(plain, &end);
        if (errno == 0 && end && *end == '\0') {
            r->t = R_FLOAT;
            r->f = f;
        }
    }
out:
    free(plain);
}

static json_t *resolved_json(const struct resolved *r, const char *s, size_t len)
{
    switch (r->t) {
    case R_NULL:
        return json_null();
    case R_BOOL:
        return json_boolean(r->b);
    case R_INT:
        return json_integer((json_int_t)r->i);
    case R_UINT:
        return json_real((double)r->u);
    case R_FLOAT:
        return json_real(r->f);
    case R_NONFINITE:
        return NULL;
    case R_STR:
    default:
        return json_stringn(s, len);
    }
}

static const char *rtype_tag(enum rtype t)
{
    switch (t) {
    case R_NULL:
        return "!!null";
    case R_BOOL:
        return "!!bool";
    case R_INT:
    case R_UINT:
        return "!!int";
    case R_FLOAT:
    case R_NONFINITE:
        return "!!float";
    case R_STR:
    default:
        return "!!str";
    }
}

/*
 * Build the JSON value of a scalar event. *merge is set for the plain merge
 * key "<<". Returns 0 and a new reference in *out, or an error.
 */
static int scalar_value(struct ctx *c, const yaml_event_t *ev, json_t **out, bool *merge)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    *merge = false;
    *out = NULL;

    const char *want = NULL; /* type forced by a tag */
    bool as_string = false;
    if (!tag) {
        as_string = !plain;
    } else if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) == 0) {
        const char *t = tag + strlen(TAG_PREFIX);
        if (strcmp(t, "null") == 0 || strcmp(t, "bool") == 0 || strcmp(t, "int") == 0 ||
            strcmp(t, "float") == 0)
            want = t;
        else
            as_string = true; /* str, binary, timestamp, and others */
    } else {
        as_string = true; /* "!" and application tags */
    }

    if (as_string) {
        *out = json_stringn(s, len);
        goto check;
    }
    if (plain && !tag && len == 2 && memcmp(s, "<<", 2) == 0) {
        *merge = true;
        *out = json_string("<<");
        return 0;
    }
    struct resolved r;
    resolve_plain(s, len, &r);
    if (want) {
        bool ok = strcmp(want, rtype_tag(r.t) + 2) == 0;
        if (!ok && strcmp(want, "float") == 0 && (r.t == R_INT || r.t == R_UINT)) {
            r.f = r.t == R_INT ? (double)r.i : (double)r.u;
            r.t = R_FLOAT;
            ok = true;
        }
        if (!ok)
            return fail_at(c, &ev->start_mark, -EINVAL, "cannot decode %s `%.40s` as a !!%s",
                           rtype_tag(r.t), s, want);
    }
    if (r.t == R_NONFINITE)
        return fail_at(c, &ev->start_mark, -EINVAL, "%.40s cannot be represented in JSON", s);
    *out = resolved_json(&r, s, len);
check:
    if (!*out)
        return fail_at(c, &ev->start_mark, -EINVAL, "scalar is not valid UTF-8");
    return 0;
}

/* ---- tree building ------------------------------------------------------- */

/* Convert a scalar used as a mapping key to its string form (new string, *len set). */
static int key_string(struct ctx *c, const yaml_mark_t *m, json_t *v, char **key, size_t *len)
{
    char tmp[32];
    switch (json_typeof(v)) {
    case JSON_STRING:
        *len = json_string_length(v);
        *key = xmalloc(*len + 1);
        memcpy(*key, json_string_value(v), *len + 1);
        return 0;
    case JSON_INTEGER:
        snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        snprintf(tmp, sizeof tmp, "%.17g", json_real_value(v));
        break;
    case JSON_TRUE:
        snprintf(tmp, sizeof tmp, "true");
        break;
    case JSON_FALSE:
        snprintf(tmp, sizeof tmp, "false");
        break;
    case JSON_NULL:
        return fail_at(c, m, -EINVAL, "unsupported map key: null");
    default:
        return fail_at(c, m, -EINVAL, "unsupported map key: a mapping or sequence");
    }
    *key = xstrdup(tmp);
    *len = strlen(tmp);
    return 0;
}

static int merge_into(struct ctx *c, const yaml_mark_t *m, json_t *obj, json_t *v)
{
    if (json_is_object(v)) {
        json_object_update_missing(obj, v);
        return 0;
    }
    if (json_is_array(v)) {
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++)
            if (!json_is_object(json_array_get(v, i)))
                return fail_at(c, m, -EINVAL,
                               "map merge requires a map or a sequence of maps as the value");
        for (size_t i = 0; i < n; i++)
            json_object_update_missing(obj, json_array_get(v, i));
        return 0;
    }
    return fail_at(c, m, -EINVAL, "map merge requires a map or a sequence of maps as the value");
}

/*
 * Attach a completed value (consumed) of the given height to the open
 * collection, or make it the document root. `merge` marks the "<<" key.
 */
static int attach(struct ctx *c, const yaml_mark_t *m, json_t *v, unsigned height, bool merge)
{
    int rc = 0;
    if (c->depth == 0) {
        c->root = v;
        c->root_set = true;
        return 0;
    }
    struct frame *f = &c->st[c->depth - 1];
    if (height + 1 > f->height)
        f->height = height + 1;
    if (json_is_array(f->node)) {
        json_array_append_new(f->node, v);
        return 0;
    }
    if (!f->have_key) {
        if (merge) {
            f->merge = true;
            f->have_key = true;
            json_decref(v);
            return 0;
        }
        rc = key_string(c, m, v, &f->key, &f->key_len);
        json_decref(v);
        if (rc == 0)
            f->have_key = true;
        return rc;
    }
    if (f->merge)
        rc = merge_into(c, m, f->node, v);
    else
        json_object_setn(f->node, f->key, f->key_len, v); /* last one wins */
    json_decref(v);
    FREE_AND_NULL(f->key);
    f->have_key = false;
    f->merge = false;
    return rc;
}

static int count_node(struct ctx *c, const yaml_mark_t *m)
{
    if (++c->nodes > c->max_nodes)
        return fail_at(c, m, -E2BIG, "document has more than %zu nodes", c->max_nodes);
    return 0;
}

static void add_anchor(struct ctx *c, const char *name, json_t *v, size_t nodes, unsigned height)
{
    if (c->n_an == c->cap_an) {
        c->cap_an = c->cap_an ? c->cap_an * 2 : 16;
        c->an = xrealloc(c->an, c->cap_an * sizeof *c->an);
    }
    c->an[c->n_an] = (struct anchor){json_incref(v), nodes, height};
    json_object_set_new(c->anchor_ix, name, json_integer((json_int_t)c->n_an));
    c->n_an++;
}

static int on_alias(struct ctx *c, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    json_t *ix = json_object_get(c->anchor_ix, name);
    if (!ix)
        return fail_at(c, &ev->start_mark, -EINVAL, "unknown anchor '%.64s' referenced", name);
    const struct anchor *a = &c->an[json_integer_value(ix)];
    c->alias_nodes += a->nodes;
    if (c->alias_nodes > c->max_alias_nodes)
        return fail_at(c, &ev->start_mark, -E2BIG,
                       "aliases expand to more than %zu nodes (alias bomb?)", c->max_alias_nodes);
    c->nodes += a->nodes;
    if (c->nodes > c->max_nodes)
        return fail_at(c, &ev->start_mark, -E2BIG, "document has more than %zu nodes",
                       c->max_nodes);
    if (c->depth + a->height > c->max_depth)
        return fail_at(c, &ev->start_mark, -E2BIG, "nesting deeper than %zu levels", c->max_depth);
    bool merge = false;
    return attach(c, &ev->start_mark, json_deep_copy(a->value), a->height, merge);
}

static int on_scalar(struct ctx *c, const yaml_event_t *ev)
{
    int rc = count_node(c, &ev->start_mark);
    if (rc < 0)
        return rc;
    json_t *v = NULL;
    bool merge = false;
    rc = scalar_value(c, ev, &v, &merge);
    if (rc < 0)
        return rc;
    if (ev->data.scalar.anchor)
        add_anchor(c, (const char *)ev->data.scalar.anchor, v, 1, 0);
    return attach(c, &ev->start_mark, v, 0, merge);
}

static int on_start(struct ctx *c, const yaml_event_t *ev, bool mapping)
{
    int rc = count_node(c, &ev->start_mark);
    if (rc < 0)
        return rc;
    if (c->depth >= c->max_depth)
        return fail_at(c, &ev->start_mark, -E2BIG, "nesting deeper than %zu levels", c->max_depth);
    const yaml_char_t *anchor =
        mapping ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    struct frame *f = &c->st[c->depth++];
    memset(f, 0, sizeof *f);
    f->node = mapping ? json_object() : json_array();
    f->anchor = anchor ? xstrdup((const char *)anchor) : NULL;
    f->nodes0 = c->nodes - 1;
    return 0;
}

static int on_end(struct ctx *c, const yaml_event_t *ev)
{
    struct frame f = c->st[--c->depth];
    int rc = 0;
    if (f.anchor)
        add_anchor(c, f.anchor, f.node, c->nodes - f.nodes0, f.height);
    free(f.anchor);
    free(f.key);
    if (f.have_key) /* cannot happen with a well-formed event stream */
        rc = fail_at(c, &ev->start_mark, -EINVAL, "mapping key without a value");
    if (rc == 0)
        rc = attach(c, &ev->start_mark, f.node, f.height, false);
    else
        json_decref(f.node);
    return rc;
}

/* Line/column of a byte offset (reader errors only carry an offset). */
static void offset_mark(const char *data, size_t len, size_t off, yaml_mark_t *m)
{
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < off && i < len; i++) {
        if (data[i] == '\n') {
            m->line++;
            m->column = 0;
        } else {
            m->column++;
        }
    }
}

static int parser_error(struct ctx *c, const yaml_parser_t *p, const char *data, size_t len)
{
    yaml_mark_t m = p->problem_mark;
    const char *problem = p->problem ? p->problem : "unknown error";
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return err_set(c->e, -ENOMEM, "YAML parser out of memory");
    case YAML_READER_ERROR:
        offset_mark(data, len, p->problem_offset, &m);
        return fail_at(c, &m, -EINVAL, "YAML syntax error: %s", problem);
    case YAML_SCANNER_ERROR:
    case YAML_PARSER_ERROR:
        if (p->context)
            return fail_at(c, &m, -EINVAL, "YAML syntax error: %s %s (line %zu column %zu)",
                           problem, p->context, p->context_mark.line + 1,
                           p->context_mark.column + 1);
        return fail_at(c, &m, -EINVAL, "YAML syntax error: %s", problem);
    default:
        return fail_at(c, &m, -EINVAL, "YAML syntax error: %s", problem);
    }
}

/* Parse the stream; each document's value (consumed) is handed to `docs` (array) in order. */
static int convert(const char *data, size_t len, const struct yaml_limits *lim, bool multi,
                   json_t *docs, struct err *e)
{
    size_t max_input = lim && lim->max_input ? lim->max_input : YAML_DEFAULT_MAX_INPUT;
    if (len > max_input)
        return err_set(e, -E2BIG, "YAML input is %zu bytes, larger than the limit of %zu", len,
                       max_input);
    struct ctx c = {
        .max_depth = lim && lim->max_depth ? lim->max_depth : YAML_DEFAULT_MAX_DEPTH,
        .max_nodes = lim && lim->max_nodes ? lim->max_nodes : YAML_DEFAULT_MAX_NODES,
        .max_alias_nodes =
            lim && lim->max_alias_nodes ? lim->max_alias_nodes : YAML_DEFAULT_MAX_ALIAS_NODES,
        .e = e,
    };
    c.st = xcalloc(c.max_depth, sizeof *c.st);
    c.anchor_ix = json_object();
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        free(c.st);
        json_decref(c.anchor_ix);
        return err_set(e, -ENOMEM, "YAML parser out of memory");
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
    int rc = 0;
    size_t ndocs = 0;
    bool done = false;
    while (!done && rc == 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = parser_error(&c, &p, data, len);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (!multi && ndocs > 0)
                rc = fail_at(&c, &ev.start_mark, -EINVAL,
                             "expected a single YAML document, found another one");
            ndocs++;
            c.root = NULL;
            c.root_set = false;
            break;
        case YAML_DOCUMENT_END_EVENT:
            anchors_clear(&c);
            if (c.root_set && (!multi || !json_is_null(c.root)))
                json_array_append_new(docs, c.root);
            else
                json_decref(c.root);
            c.root = NULL;
            c.root_set = false;
            break;
        case YAML_ALIAS_EVENT:
            rc = on_alias(&c, &ev);
            break;
        case YAML_SCALAR_EVENT:
            rc = on_scalar(&c, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            rc = on_start(&c, &ev, false);
            break;
        case YAML_MAPPING_START_EVENT:
            rc = on_start(&c, &ev, true);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            rc = on_end(&c, &ev);
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    frames_free(&c);
    json_decref(c.root);
    anchors_clear(&c);
    free(c.an);
    json_decref(c.anchor_ix);
    free(c.st);
    return rc;
}

json_t *yaml_to_json(const char *data, size_t len, const struct yaml_limits *lim, struct err *e)
{
    json_t *docs = json_array();
    int rc = convert(data, len, lim, false, docs, e);
    json_t *out = NULL;
    if (rc == 0) {
        out = json_array_size(docs) > 0 ? json_incref(json_array_get(docs, 0)) : json_null();
    }
    json_decref(docs);
    return out;
}

json_t *yaml_to_json_all(const char *data, size_t len, const struct yaml_limits *lim, struct err *e)
{
    json_t *docs = json_array();
    if (convert(data, len, lim, true, docs, e) < 0) {
        json_decref(docs);
        return NULL;
    }
    return docs;
}

/* Prefix `e` with the file, as "PATH:L:C: ..." when the message starts with a position. */
static void file_prefix(struct err *e, const char *path)
{
    if (!e)
        return;
    char old[ERR_MSG_MAX];
    memcpy(old, e->msg, sizeof old);
    bool pos = old[0] >= '0' && old[0] <= '9';
    if (snprintf(e->msg, sizeof e->msg, "%s%s%s", path, pos ? ":" : ": ", old) >=
        (int)sizeof e->msg)
        e->msg[sizeof e->msg - 1] = '\0';
}

json_t *yaml_file_to_json(const char *path, bool multi, const struct yaml_limits *lim,
                          struct err *e)
{
    size_t max = lim && lim->max_input ? lim->max_input : YAML_DEFAULT_MAX_INPUT;
    FILE *f = fopen(path, "re");
    if (!f) {
        err_set(e, -errno, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    struct buf b;
    buf_init(&b, max);
    char chunk[65536];
    int rc = 0;
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (buf_append(&b, chunk, n) < 0) {
            rc = err_set(e, -E2BIG, "%s: larger than the limit of %zu bytes", path, max);
            break;
        }
    }
    if (rc == 0 && ferror(f))
        rc = err_set(e, -EIO, "%s: read error", path);
    fclose(f);
    json_t *j = NULL;
    if (rc == 0) {
        j = multi ? yaml_to_json_all(buf_str(&b), b.len, lim, e)
                  : yaml_to_json(buf_str(&b), b.len, lim, e);
        if (!j)
            file_prefix(e, path);
    }
    buf_free(&b);
    return j;
}
