/* jscan: a checking JSON walker that keeps one field (see jscan.h). */
#include "pkg/json/jscan.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/util/utf8.h"
#include "pkg/util/xalloc.h"

struct scan {
    const unsigned char *start, *p, *end;
    struct err *e;
};

static int fail(struct scan *s, const char *what)
{
    return err_set(s->e, -EBADMSG, "invalid JSON at byte %zu: %s", (size_t)(s->p - s->start), what);
}

static void skip_ws(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int peek(const struct scan *s)
{
    return s->p < s->end ? *s->p : -1;
}

static int hex4(const unsigned char *p, const unsigned char *end, uint32_t *out)
{
    if (end - p < 4)
        return -1;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p[i];
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = (v << 4) | (uint32_t)d;
    }
    *out = v;
    return 0;
}

/* Append the decoded bytes to out[0..cap) while they fit; *len counts them all. */
static void put(char *out, size_t cap, size_t *len, const void *b, size_t n)
{
    if (out && *len + n <= cap)
        memcpy(out + *len, b, n);
    *len += n;
}

static size_t utf8_put(uint32_t cp, unsigned char *b)
{
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | (cp >> 6));
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    b[0] = (unsigned char)(0xF0 | (cp >> 18));
    b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* plain[c]: byte c stands for itself in a string (printable ASCII but '"' and '\\'): one load
 * a byte in the scan's inner loop instead of four comparisons. */
static const bool plain[256] = {
#define P(c)  [c] = ((c) >= 0x20 && (c) < 0x80 && (c) != '"' && (c) != '\\')
#define P8(c) P(c), P(c + 1), P(c + 2), P(c + 3), P(c + 4), P(c + 5), P(c + 6), P(c + 7)
    P8(0x20), P8(0x28), P8(0x30), P8(0x38), P8(0x40), P8(0x48),
    P8(0x50), P8(0x58), P8(0x60), P8(0x68), P8(0x70), P8(0x78),
#undef P8
#undef P
};

/* Bytes of a 64-bit word: one of each, or the high bit of each. */
#define ONES  0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* The non-plain bytes of a word, as their high bits: a control character, '"', '\\' or one of
 * 0x80 and above ("determine if a word has a zero byte", with x - n*ONES for "less than n").
 * A borrow only runs upwards, so the lowest bit set marks the first such byte exactly. */
static uint64_t word_special(uint64_t w)
{
    uint64_t quote = w ^ (ONES * '"'), bslash = w ^ (ONES * '\\');
    uint64_t ctl = (w - ONES * 0x20) & ~w;
    uint64_t q0 = (quote - ONES) & ~quote, b0 = (bslash - ONES) & ~bslash;
    return (ctl | q0 | b0 | w) & HIGHS;
}

/* The end of the run of plain bytes from p: eight at a time (names, uids, timestamps), the
 * first other byte found in its word by its bit; the last few bytes one by one. A watch
 * event's strings took 12.6 % of bench-watch's instructions a byte per table load before. */
static const unsigned char *plain_run(const unsigned char *p, const unsigned char *end)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ /* the first byte is the lowest */
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, sizeof w);
        uint64_t m = word_special(w);
        if (m)
            return p + (__builtin_ctzll(m) >> 3);
        p += 8;
    }
#endif
    while (p < end && plain[*p])
        p++;
    return p;
}

/*
 * The string at s->p (its opening quote), checked; s->p ends after the closing quote. The
 * decoded bytes go to out[0..cap) when out is not NULL (what does not fit is dropped) and
 * *len is their full count. 0 or -EBADMSG.
 */
static __attribute__((noinline)) int scan_string_slow(struct scan *s, char *out, size_t cap,
                                                      size_t *len)
{
    *len = 0;
    s->p++; /* the opening quote */
    for (;;) {
        if (s->p >= s->end)
            return fail(s, "premature end of input in a string");
        unsigned char c = *s->p;
        if (c == '"') {
            s->p++;
            return 0;
        }
        if (c < 0x20)
            return fail(s, "control character in a string");
        if (c >= 0x80) {
            size_t n = utf8_len(s->p, s->end);
            if (!n)
                return fail(s, "invalid UTF-8");
            put(out, cap, len, s->p, n);
            s->p += n;
            continue;
        }
        if (c != '\\') {
            const unsigned char *q = plain_run(s->p + 1, s->end);
            put(out, cap, len, s->p, (size_t)(q - s->p));
            s->p = q;
            continue;
        }
        if (s->end - s->p < 2)
            return fail(s, "premature end of input in a string");
        char ch;
        switch (s->p[1]) {
        case '"':
        case '\\':
        case '/':
            ch = (char)s->p[1];
            break;
        case 'b':
            ch = '\b';
            break;
        case 'f':
            ch = '\f';
            break;
        case 'n':
            ch = '\n';
            break;
        case 'r':
            ch = '\r';
            break;
        case 't':
            ch = '\t';
            break;
        case 'u': {
            uint32_t cp;
            if (hex4(s->p + 2, s->end, &cp) < 0)
                return fail(s, "invalid \\u escape");
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return fail(s, "lone low surrogate in a \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (s->end - s->p < 12 || s->p[6] != '\\' || s->p[7] != 'u' ||
                    hex4(s->p + 8, s->end, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
                    return fail(s, "high surrogate not followed by a low one");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s->p += 6;
            }
            if (cp == 0)
                return fail(s, "\\u0000 in a string");
            unsigned char b[4];
            size_t bn = utf8_put(cp, b);
            put(out, cap, len, b, bn);
            s->p += 6;
            continue;
        }
        default:
            return fail(s, "invalid escape in a string");
        }
        put(out, cap, len, &ch, 1);
        s->p += 2;
    }
}

/* Most strings have neither escapes nor UTF-8: one run of plain bytes to the closing quote,
 * found without the general loop (whose set-up cost more than the scan of a short key). */
static inline int scan_string(struct scan *s, char *out, size_t cap, size_t *len)
{
    const unsigned char *b = s->p + 1;
    const unsigned char *q = plain_run(b, s->end);
    if (q < s->end && *q == '"') {
        size_t n = (size_t)(q - b);
        if (out && n <= cap)
            memcpy(out, b, n);
        *len = n;
        s->p = q + 1;
        return 0;
    }
    return scan_string_slow(s, out, cap, len);
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* The number at s->p, in JSON's grammar; an integer must fit long long and a real must not
 * overflow a double (what jansson's lexer checks with strtoll and strtod). *real tells which
 * it is, and *iv or *dv holds its value. */
static int scan_number(struct scan *s, bool *is_real, long long *iv, double *dv)
{
    const unsigned char *b = s->p;
    bool real = false;
    if (peek(s) == '-')
        s->p++;
    if (peek(s) == '0') {
        s->p++;
    } else if (is_digit(peek(s))) {
        while (is_digit(peek(s)))
            s->p++;
    } else {
        return fail(s, "invalid number");
    }
    if (peek(s) == '.') {
        s->p++;
        if (!is_digit(peek(s)))
            return fail(s, "invalid number");
        while (is_digit(peek(s)))
            s->p++;
        real = true;
    }
    if (peek(s) == 'e' || peek(s) == 'E') {
        s->p++;
        if (peek(s) == '+' || peek(s) == '-')
            s->p++;
        if (!is_digit(peek(s)))
            return fail(s, "invalid number");
        while (is_digit(peek(s)))
            s->p++;
        real = true;
    }
    /* range check on a NUL-terminated copy (numbers are short; a long one goes to the heap);
     * strtod reads '.' as jansson does: the operator stays in the C locale (no setlocale) */
    size_t n = (size_t)(s->p - b);
    char small[64];
    char *t = n < sizeof small ? small : xmalloc(n + 1);
    memcpy(t, b, n);
    t[n] = '\0';
    errno = 0;
    bool over;
    *is_real = real;
    if (real) {
        double d = strtod(t, NULL);
        over = errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL);
        *dv = d;
    } else {
        *iv = strtoll(t, NULL, 10);
        over = errno == ERANGE;
    }
    if (t != small)
        free(t);
    if (over)
        return fail(s, real ? "real number overflow" : "integer out of range");
    return 0;
}

static int scan_literal(struct scan *s)
{
    static const char *const lits[] = {"true", "false", "null"};
    for (size_t i = 0; i < sizeof lits / sizeof lits[0]; i++) {
        size_t n = strlen(lits[i]);
        if ((size_t)(s->end - s->p) >= n && memcmp(s->p, lits[i], n) == 0) {
            s->p += n;
            return 0;
        }
    }
    return fail(s, "invalid token");
}

/* A key compared with the names this walker looks for; longer keys are cut (no match). */
#define KEY_CAP 16

static bool key_is(const char *k, size_t n, const char *name)
{
    return n == strlen(name) && memcmp(k, name, n) == 0;
}

/* The string at found (its opening quote, checked already), decoded: a new string. */
static char *rv_copy(const struct scan *s, const unsigned char *found, struct err *e)
{
    struct scan v = {.start = s->start, .p = found, .end = s->end, .e = e};
    size_t len;
    (void)scan_string(&v, NULL, 0, &len); /* checked above */
    char *out = xmalloc(len + 1);
    v.p = found;
    (void)scan_string(&v, out, len, &len);
    out[len] = '\0';
    return out;
}

/* jscan_rv(), or with head jscan_rv_head(): back as soon as the first resourceVersion string
 * of the top-level metadata is read. */
static int rv_scan(const char *data, size_t n, char **rv, bool head, struct err *e)
{
    *rv = NULL;
    struct scan s = {.start = (const unsigned char *)data,
                     .p = (const unsigned char *)data,
                     .end = (const unsigned char *)data + n,
                     .e = e};
    /* one bit per open container: 1 = object */
    unsigned char objs[JSCAN_MAX_DEPTH / 8] = {0};
    int depth = 0;                     /* open containers */
    bool in_meta = false;              /* the container at depth 2 is the top object's metadata */
    bool key_meta = false;             /* the current key of the top object is "metadata" */
    bool key_rv = false;               /* the current key of metadata is "resourceVersion" */
    const unsigned char *found = NULL; /* the resourceVersion string (its opening quote) */

    skip_ws(&s);
    if (peek(&s) != '{' && peek(&s) != '[')
        return fail(&s, "'[' or '{' expected");
    for (;;) {
        /* a value: depth containers enclose it */
        skip_ws(&s);
        if (depth + 1 > JSCAN_MAX_DEPTH)
            return fail(&s, "maximum nesting depth reached");
        bool is_meta = depth == 1 && key_meta; /* the value of the top object's metadata */
        bool is_rv = depth == 2 && in_meta && key_rv;
        int c = peek(&s);
        if (is_meta)
            found = NULL; /* the last metadata wins; only an object can hold one */
        if (c == '{' || c == '[') {
            bool obj = c == '{';
            if (obj)
                objs[depth / 8] |= (unsigned char)(1u << (depth % 8));
            else
                objs[depth / 8] &= (unsigned char)~(1u << (depth % 8));
            depth++;
            if (is_rv)
                found = NULL;
            if (depth == 2)
                in_meta = obj && is_meta;
            s.p++;
            skip_ws(&s);
            if (peek(&s) == (obj ? '}' : ']')) {
                s.p++;
                depth--;
                goto after_value;
            }
            if (!obj)
                continue;
            goto key;
        } else if (c == '"') {
            const unsigned char *q = s.p;
            size_t len;
            if (scan_string(&s, NULL, 0, &len) < 0)
                return -EBADMSG;
            if (is_rv)
                found = q;
            if (is_rv && head) {
                *rv = rv_copy(&s, q, e);
                return 0;
            }
        } else {
            if (is_rv)
                found = NULL;
            if (c == '-' || is_digit(c)) {
                bool real;
                long long iv;
                double dv;
                if (scan_number(&s, &real, &iv, &dv) < 0)
                    return -EBADMSG;
            } else if (scan_literal(&s) < 0) {
                return -EBADMSG;
            }
            /* jansson's lexer reads one character past a number or a literal and puts it back;
             * a NUL put back that way is lost (its stream takes NUL for "nothing buffered"),
             * so one NUL right after such a token is skipped, not refused */
            if (peek(&s) == 0)
                s.p++;
        }
    after_value:
        /* after a value: a separator, or the end of containers */
        for (;;) {
            if (depth == 0) {
                skip_ws(&s);
                if (s.p != s.end)
                    return fail(&s, "end of input expected");
                if (found)
                    *rv = rv_copy(&s, found, e);
                return 0;
            }
            bool obj = objs[(depth - 1) / 8] & (1u << ((depth - 1) % 8));
            skip_ws(&s);
            c = peek(&s);
            if (c == ',') {
                s.p++;
                break;
            }
            if (c != (obj ? '}' : ']'))
                return fail(&s, obj ? "',' or '}' expected" : "',' or ']' expected");
            s.p++;
            if (depth == 2)
                in_meta = false;
            depth--;
        }
        if (!(objs[(depth - 1) / 8] & (1u << ((depth - 1) % 8))))
            continue; /* the next array element */
        skip_ws(&s);
    key:
        if (peek(&s) != '"')
            return fail(&s, "string or '}' expected");
        {
            char k[KEY_CAP];
            size_t klen;
            if (scan_string(&s, k, sizeof k, &klen) < 0)
                return -EBADMSG;
            if (depth == 1)
                key_meta = key_is(k, klen, "metadata");
            else if (depth == 2 && in_meta)
                key_rv = key_is(k, klen, "resourceVersion");
        }
        skip_ws(&s);
        if (peek(&s) != ':')
            return fail(&s, "':' expected");
        s.p++;
    }
}

int jscan_rv(const char *data, size_t n, char **rv, struct err *e)
{
    return rv_scan(data, n, rv, false, e);
}

int jscan_rv_head(const char *data, size_t n, char **rv, struct err *e)
{
    return rv_scan(data, n, rv, true, e);
}

/* ---- jscan_walk ------------------------------------------------------------ */

/* A scratch buffer for decoded strings (escapes). */
struct sbuf {
    char *p;
    size_t cap;
};

/* The string scanned from q (its opening quote) to s->p, of decoded length len: the bytes
 * between the quotes when it had no escapes, else decoded into b. */
static const char *str_at(const struct scan *s, const unsigned char *q, size_t len, struct sbuf *b)
{
    if (len == (size_t)(s->p - q) - 2)
        return (const char *)q + 1;
    if (len + 1 > b->cap) {
        b->cap = len + 1 > 2 * b->cap ? len + 1 : 2 * b->cap;
        free(b->p);
        b->p = xmalloc(b->cap);
    }
    struct scan v = {.start = s->start, .p = q, .end = s->end, .e = s->e};
    (void)scan_string(&v, b->p, len, &len); /* checked already */
    b->p[len] = '\0';
    return b->p;
}

#define BIT(st, d)  ((st)[(d) / 8] & (1u << ((d) % 8)))
#define SETB(st, d) ((st)[(d) / 8] |= (unsigned char)(1u << ((d) % 8)))
#define CLRB(st, d) ((st)[(d) / 8] &= (unsigned char)~(1u << ((d) % 8)))

/* The walk, inlined into its callers: jscan_load's calls to its own sink are then direct.
 * It is the path of every watch event: through pointers a load cost 6 % more instructions
 * than jscan_load's own loop before, inlined 1.6 % (callgrind, bench/store's workload.json). */
static inline __attribute__((always_inline)) int
walk(const char *data, size_t n, const struct jscan_sink *k, void *ud, struct err *e)
{
    struct scan s = {.start = (const unsigned char *)data,
                     .p = (const unsigned char *)data,
                     .end = (const unsigned char *)data + n,
                     .e = e};
    unsigned char objs[JSCAN_MAX_DEPTH / 8] = {0}; /* one bit per open container: 1 = object */
    int depth = 0;                                 /* open containers */
    int mute = 0; /* > 0: a member key() skipped sits at this depth; nothing in it is reported */
    struct sbuf kb = {0}, vb = {0}; /* a key stays valid while its value is reported */
    int rc = 0;

    skip_ws(&s);
    if (peek(&s) != '{' && peek(&s) != '[')
        return fail(&s, "'[' or '{' expected");
    for (;;) {
        /* a value: depth containers enclose it */
        skip_ws(&s);
        if (depth + 1 > JSCAN_MAX_DEPTH) {
            rc = fail(&s, "maximum nesting depth reached");
            goto out;
        }
        bool quiet = mute && depth >= mute;
        int c = peek(&s);
        if (c == '{' || c == '[') {
            bool obj = c == '{';
            if (obj)
                SETB(objs, depth);
            else
                CLRB(objs, depth);
            if (!quiet && (rc = k->open(ud, obj)) < 0)
                goto out;
            depth++;
            s.p++;
            skip_ws(&s);
            if (peek(&s) == (obj ? '}' : ']')) {
                s.p++;
                depth--;
                if (!quiet && (rc = k->close(ud, obj)) < 0)
                    goto out;
                goto after_value;
            }
            if (!obj)
                continue;
            goto key;
        } else if (c == '"') {
            const unsigned char *q = s.p;
            size_t len;
            if (scan_string(&s, NULL, 0, &len) < 0) {
                rc = -EBADMSG;
                goto out;
            }
            if (!quiet && (rc = k->string(ud, str_at(&s, q, len, &vb), len)) < 0)
                goto out;
        } else {
            if (c == '-' || is_digit(c)) {
                bool real;
                long long iv = 0;
                double dv = 0;
                if (scan_number(&s, &real, &iv, &dv) < 0) {
                    rc = -EBADMSG;
                    goto out;
                }
                if (!quiet && (rc = real ? k->real(ud, dv) : k->integer(ud, iv)) < 0)
                    goto out;
            } else {
                const unsigned char *q = s.p;
                if (scan_literal(&s) < 0) {
                    rc = -EBADMSG;
                    goto out;
                }
                if (!quiet && (rc = k->literal(ud, (char)*q)) < 0)
                    goto out;
            }
            if (peek(&s) == 0)
                s.p++; /* jansson's lost NUL after a number or a literal (see jscan_rv) */
        }
    after_value:
        if (mute == depth)
            mute = 0; /* the skipped value ended */
        /* after a value: a separator, or the end of containers */
        for (;;) {
            if (depth == 0) {
                skip_ws(&s);
                if (s.p != s.end)
                    rc = fail(&s, "end of input expected");
                goto out;
            }
            bool obj = BIT(objs, depth - 1);
            skip_ws(&s);
            c = peek(&s);
            if (c == ',') {
                s.p++;
                break;
            }
            if (c != (obj ? '}' : ']')) {
                rc = fail(&s, obj ? "',' or '}' expected" : "',' or ']' expected");
                goto out;
            }
            s.p++;
            depth--;
            if (!(mute && depth >= mute) && (rc = k->close(ud, obj)) < 0)
                goto out;
            if (mute == depth)
                mute = 0;
        }
        if (!BIT(objs, depth - 1))
            continue; /* the next array element */
        skip_ws(&s);
    key:
        if (peek(&s) != '"') {
            rc = fail(&s, "string or '}' expected");
            goto out;
        }
        {
            const unsigned char *q = s.p;
            size_t len;
            if (scan_string(&s, NULL, 0, &len) < 0) {
                rc = -EBADMSG;
                goto out;
            }
            if (!(mute && depth >= mute)) {
                int r = k->key(ud, str_at(&s, q, len, &kb), len);
                if (r < 0) {
                    rc = r;
                    goto out;
                }
                if (r == 1)
                    mute = depth;
            }
        }
        skip_ws(&s);
        if (peek(&s) != ':') {
            rc = fail(&s, "':' expected");
            goto out;
        }
        s.p++;
    }
out:
    free(kb.p);
    free(vb.p);
    return rc;
}

int jscan_walk(const char *data, size_t n, const struct jscan_sink *k, void *ud, struct err *e)
{
    return walk(data, n, k, ud, e);
}

/* ---- jscan_load ------------------------------------------------------------ */

/* The tree being built: the open containers, each referenced by its parent (or the root);
 * the stack only borrows them. */
struct load {
    json_t *root;
    json_t *small[32];
    json_t **st;
    size_t depth, cap;
    const char *key; /* the pending member's key (valid while its value is reported) */
    size_t klen;
};

/* Add v (consumed) to the innermost container, or make it the root. */
static int attach(struct load *l, json_t *v)
{
    if (!v)
        return -ENOMEM;
    if (!l->depth) {
        l->root = v;
        return 0;
    }
    json_t *c = l->st[l->depth - 1];
    if (json_is_object(c))
        json_object_setn_new_nocheck(c, l->key, l->klen, v);
    else
        json_array_append_new(c, v);
    return 0;
}

static int load_open(void *ud, bool obj)
{
    struct load *l = ud;
    json_t *v = obj ? json_object() : json_array();
    int rc = attach(l, json_incref(v));
    json_decref(v);
    if (rc < 0)
        return rc;
    if (l->depth == l->cap) {
        size_t ncap = l->cap * 2;
        json_t **nst = xmalloc(ncap * sizeof *nst);
        memcpy(nst, l->st, l->depth * sizeof *nst);
        if (l->st != l->small)
            free(l->st);
        l->st = nst;
        l->cap = ncap;
    }
    l->st[l->depth++] = v;
    return 0;
}

static int load_close(void *ud, bool obj)
{
    (void)obj;
    ((struct load *)ud)->depth--;
    return 0;
}

static int load_key(void *ud, const char *k, size_t n)
{
    struct load *l = ud;
    l->key = k;
    l->klen = n;
    return 0;
}

static int load_string(void *ud, const char *s, size_t n)
{
    return attach(ud, json_stringn_nocheck(s, n));
}

static int load_integer(void *ud, long long v)
{
    return attach(ud, json_integer(v));
}

static int load_real(void *ud, double v)
{
    return attach(ud, json_real(v));
}

static int load_literal(void *ud, char which)
{
    return attach(ud, which == 't' ? json_true() : which == 'f' ? json_false() : json_null());
}

static const struct jscan_sink load_sink = {load_open,    load_close, load_key,    load_string,
                                            load_integer, load_real,  load_literal};

json_t *jscan_load(const char *data, size_t n, struct err *e)
{
    struct load l = {.cap = sizeof l.small / sizeof l.small[0]};
    l.st = l.small;
    int rc = walk(data, n, &load_sink, &l, e);
    if (l.st != l.small)
        free(l.st);
    if (rc < 0) {
        if (rc == -ENOMEM)
            err_set(e, rc, "out of memory loading JSON");
        json_decref(l.root);
        return NULL;
    }
    return l.root;
}

/* ---- jscan_load_paths --------------------------------------------------------- */

struct pseg {
    const char *s;
    size_t n;
};

_Static_assert(JSCAN_PATHS_MAX <= 64, "one bit per path in struct psel");

struct pathset {
    size_t np;
    /* np entries (NULL when none): sized to the paths, as 64 fixed entries of a keep and a drop
     * set were 17 KB per informer and store (0.4 MB in the operator) */
    struct pseg (*seg)[JSCAN_PATH_SEGS_MAX];
    unsigned char nseg[JSCAN_PATHS_MAX];
    char *text[JSCAN_PATHS_MAX]; /* the paths' own copies (unescaped), which seg points into */
};

struct jscan_paths {
    struct pathset keep, drop;
    bool all; /* no keep paths: everything not dropped */
};

/* What is kept of an open container's members: the paths still to match below it (a bit per
 * path; its members match segment `lvl`), or all of them; an array's elements share it. The
 * drop paths still matching (dbits) follow objects only. */
struct psel {
    uint64_t bits, dbits;
    unsigned lvl;
    bool whole;
    bool arr; /* the container is an array */
};

struct pload {
    struct load l;
    const struct jscan_paths *ps;
    struct psel small[32], *st, next;
    size_t depth, cap;
    /* open containers from the first one kept whole with no drop path below it (itself
     * included): everything in them is built as jscan_load() builds it, with no selection of
     * their own (not on st) */
    size_t plain;
    bool head;     /* jscan_load_head(): stop at a top-level key once `seen` has every path */
    uint64_t seen; /* the paths whose top-level member was read */
};

/* What pl_key returns to end a head load (not an errno: the walk passes it through). */
#define PL_HEAD_DONE (-100000)

static void pathset_release(struct pathset *s)
{
    for (size_t i = 0; i < s->np; i++)
        free(s->text[i]);
    free(s->seg);
}

void jscan_paths_free(struct jscan_paths *ps)
{
    if (!ps)
        return;
    pathset_release(&ps->keep);
    pathset_release(&ps->drop);
    free(ps);
}

/* Split `paths` into s (np 0, the rest unset): segments at dots; a backslash makes the next
 * character part of the segment. */
static int pathset_parse(struct pathset *s, const char *const *paths, struct err *e)
{
    size_t count = 0;
    while (paths && paths[count] && count < JSCAN_PATHS_MAX) /* more are refused below */
        count++;
    s->seg = count ? xmalloc(count * sizeof(*s->seg)) : NULL;
    for (size_t i = 0; paths && paths[i]; i++) {
        if (i == JSCAN_PATHS_MAX)
            return err_set(e, -EINVAL, "jscan: more than %d paths", JSCAN_PATHS_MAX);
        char *t = s->text[s->np++] = xstrdup(paths[i]);
        unsigned k = 0;
        char *w = t, *start = t;
        for (const char *r = t;; r++) {
            if (*r == '\\') { /* the next character is the key's, a dot too */
                if (!r[1])
                    return err_set(e, -EINVAL, "jscan: path \"%s\" ends in a backslash", paths[i]);
                *w++ = *++r;
                continue;
            }
            if (*r != '.' && *r) {
                *w++ = *r;
                continue;
            }
            size_t n = (size_t)(w - start);
            if (n == 0)
                return err_set(e, -EINVAL, "jscan: path \"%s\" has an empty segment", paths[i]);
            if (k >= JSCAN_PATH_SEGS_MAX)
                return err_set(e, -EINVAL, "jscan: path \"%s\" has more than %d segments", paths[i],
                               JSCAN_PATH_SEGS_MAX);
            s->seg[i][k++] = (struct pseg){start, n};
            if (!*r)
                break;
            start = w; /* w <= r: the unescaped text never overtakes the read */
        }
        s->nseg[i] = (unsigned char)k;
    }
    return 0;
}

int jscan_paths_new_drop(const char *const *keep, const char *const *drop, struct jscan_paths **out,
                         struct err *e)
{
    *out = NULL;
    if (!keep && (!drop || !drop[0]))
        return 0;
    /* not zeroed: only the first np entries of each fixed array are written and read (zeroing
     * the 17 KB a set was then cost 18,000 instructions a call) */
    struct jscan_paths *ps = xmalloc(sizeof *ps);
    ps->keep.np = ps->drop.np = 0;
    ps->keep.seg = ps->drop.seg = NULL;
    ps->all = !keep;
    int rc = pathset_parse(&ps->keep, keep, e);
    if (rc == 0)
        rc = pathset_parse(&ps->drop, drop, e);
    if (rc < 0) {
        jscan_paths_free(ps);
        return rc;
    }
    *out = ps;
    return 0;
}

int jscan_paths_new(const char *const *paths, struct jscan_paths **out, struct err *e)
{
    return jscan_paths_new_drop(paths, NULL, out, e);
}

int jscan_paths_check(const char *const *paths, struct err *e)
{
    struct jscan_paths *ps = NULL;
    int rc = jscan_paths_new(paths, &ps, e);
    jscan_paths_free(ps);
    return rc;
}

/* A bit for each of n paths. */
static uint64_t mask_of(size_t n)
{
    return n >= 64 ? UINT64_MAX : ((uint64_t)1 << n) - 1;
}

/* The selection of the value about to be reported: an array's elements share the array's. */
static struct psel pl_cur(const struct pload *p)
{
    return p->depth && p->st[p->depth - 1].arr ? p->st[p->depth - 1] : p->next;
}

static int pl_open(void *ud, bool obj)
{
    struct pload *p = ud;
    if (p->plain) {
        p->plain++;
        return load_open(&p->l, obj);
    }
    struct psel cur = pl_cur(p);
    int rc = load_open(&p->l, obj);
    if (rc < 0)
        return rc;
    if (cur.whole && !cur.dbits) {
        p->plain = 1;
        return 0;
    }
    if (p->depth == p->cap) {
        size_t ncap = p->cap * 2;
        struct psel *nst = xmalloc(ncap * sizeof *nst);
        memcpy(nst, p->st, p->depth * sizeof *nst);
        if (p->st != p->small)
            free(p->st);
        p->st = nst;
        p->cap = ncap;
    }
    cur.arr = !obj;
    if (!obj)
        cur.dbits = 0; /* drop paths go through objects only */
    p->st[p->depth++] = cur;
    return 0;
}

static int pl_close(void *ud, bool obj)
{
    struct pload *p = ud;
    if (p->plain)
        p->plain--;
    else
        p->depth--;
    return load_close(&p->l, obj);
}

static int pl_key(void *ud, const char *k, size_t n)
{
    struct pload *p = ud;
    if (p->plain)
        return load_key(&p->l, k, n);
    const struct psel *t = &p->st[p->depth - 1];
    if (p->head && p->depth == 1 && p->seen == mask_of(p->ps->keep.np))
        return PL_HEAD_DONE;
    struct psel nx = {.lvl = t->lvl + 1, .whole = t->whole};
    for (uint64_t b = t->dbits; b; b &= b - 1) {
        unsigned i = (unsigned)__builtin_ctzll(b);
        const struct pseg *sg = &p->ps->drop.seg[i][t->lvl];
        if (sg->n != n || memcmp(sg->s, k, n) != 0)
            continue;
        if (t->lvl + 1u == p->ps->drop.nseg[i])
            return 1; /* dropped: checked, not kept */
        nx.dbits |= (uint64_t)1 << i;
    }
    for (uint64_t b = t->whole ? 0 : t->bits; b && !nx.whole; b &= b - 1) {
        unsigned i = (unsigned)__builtin_ctzll(b);
        const struct pseg *sg = &p->ps->keep.seg[i][t->lvl];
        if (sg->n != n || memcmp(sg->s, k, n) != 0)
            continue;
        if (t->lvl + 1u == p->ps->keep.nseg[i])
            nx.whole = true;
        else
            nx.bits |= (uint64_t)1 << i;
    }
    for (size_t i = 0; p->head && p->depth == 1 && i < p->ps->keep.np; i++) {
        const struct pseg *sg = &p->ps->keep.seg[i][0];
        if (sg->n == n && memcmp(sg->s, k, n) == 0)
            p->seen |= (uint64_t)1 << i;
    }
    if (!nx.whole && !nx.bits)
        return 1; /* checked, not kept */
    p->next = nx;
    return load_key(&p->l, k, n);
}

static int pl_string(void *ud, const char *s, size_t n)
{
    return load_string(&((struct pload *)ud)->l, s, n);
}

static int pl_integer(void *ud, long long v)
{
    return load_integer(&((struct pload *)ud)->l, v);
}

static int pl_real(void *ud, double v)
{
    return load_real(&((struct pload *)ud)->l, v);
}

static int pl_literal(void *ud, char which)
{
    return load_literal(&((struct pload *)ud)->l, which);
}

static const struct jscan_sink pload_sink = {pl_open,    pl_close, pl_key,    pl_string,
                                             pl_integer, pl_real,  pl_literal};

static json_t *load_with(const char *data, size_t n, const struct jscan_paths *ps, bool head,
                         struct err *e)
{
    struct pload p = {.ps = ps, .depth = 0, .head = head};
    p.l = (struct load){.cap = sizeof p.l.small / sizeof p.l.small[0]};
    p.l.st = p.l.small;
    p.st = p.small;
    p.cap = sizeof p.small / sizeof p.small[0];
    p.next = (struct psel){
        .bits = mask_of(ps->keep.np), .dbits = mask_of(ps->drop.np), .whole = ps->all};
    int rc = walk(data, n, &pload_sink, &p, e); /* inlined: direct calls, as jscan_load's */
    if (rc == PL_HEAD_DONE)
        rc = 0;
    if (p.l.st != p.l.small)
        free(p.l.st);
    if (p.st != p.small)
        free(p.st);
    if (rc < 0) {
        if (rc == -ENOMEM)
            err_set(e, rc, "out of memory loading JSON");
        json_decref(p.l.root);
        return NULL;
    }
    return p.l.root;
}

json_t *jscan_load_with(const char *data, size_t n, const struct jscan_paths *ps, struct err *e)
{
    if (!ps)
        return jscan_load(data, n, e);
    return load_with(data, n, ps, false, e);
}

json_t *jscan_load_head(const char *data, size_t n, const struct jscan_paths *ps, struct err *e)
{
    if (!ps || ps->keep.np == 0)
        return jscan_load_with(data, n, ps, e); /* no path to end at */
    return load_with(data, n, ps, true, e);
}

json_t *jscan_load_paths(const char *data, size_t n, const char *const *paths, struct err *e)
{
    struct jscan_paths *ps = NULL;
    if (jscan_paths_new(paths, &ps, e) < 0)
        return NULL;
    json_t *j = jscan_load_with(data, n, ps, e);
    jscan_paths_free(ps);
    return j;
}
