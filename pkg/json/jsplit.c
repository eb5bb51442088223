/* jsplit: a list body split into its items as it arrives (see jsplit.h). The walk here is
 * loose (brackets matched outside strings, the top level's keys followed); every value it
 * passes over is checked by jscan_load afterwards (the items by the callback's loader, the
 * rest at the end), and whatever it does not expect is left to the rest's jscan_load. */
#include "pkg/json/jsplit.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "pkg/json/jscan.h"
#include "pkg/util/buf.h"
#include "pkg/util/xalloc.h"

#define NOT_ENDED SIZE_MAX

enum st {
    S_TOP,        /* before the top-level value */
    S_KEY_START,  /* in the top object: a key (or its end) */
    S_KEY,        /* in a top-level key */
    S_COLON,      /* after a top-level key */
    S_VALUE,      /* before a top-level member's value */
    S_VAL,        /* in a top-level member's value (not the split items) */
    S_AFTER_VAL,  /* after a top-level member: ',' or the end */
    S_ITEMS,      /* just inside the split items array: an item or ']' */
    S_ELEM,       /* in an item */
    S_AFTER_ELEM, /* after an item: ',' or ']' */
    S_ELEM_NEXT,  /* after an item's ',': the next item */
    S_RAW,        /* the top object ended, or is none: the rest is copied as it is */
};

/* A value being passed over, resumable at any byte: a container up to its matching bracket,
 * a string up to its closing quote, anything else up to the next delimiter. */
struct vscan {
    char kind; /* 'c', 's' or 'l' */
    size_t depth;
    bool in_str, esc, opened;
};

struct jsplit {
    enum st st;
    jsplit_item_cb cb;
    void *ud;
    const char *const *needed;
    size_t max_hold;
    struct buf rest; /* the text outside the split items, "[]" for them */
    struct buf item; /* the current item's text while it spans pieces */
    struct vscan v;
    json_t *head; /* the members before the items, handed to the callback */
    bool hold;    /* a needed member is not before the items: they are held */
    struct buf held;
    size_t *held_end; /* held item k is held.data[held_end[k-1]..held_end[k]) */
    size_t nheld, held_cap;
    size_t key_len;
    bool key_items, key_esc, is_items;
    bool split;
    size_t members; /* top-level members counted by the walk */
    size_t count;   /* items handed over */
    size_t off;     /* bytes fed before the current piece */
    int rc;         /* sticky error */
    struct err err;
};

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_delim(char c)
{
    return c == ',' || c == '}' || c == ']' || is_ws(c);
}

#ifdef __SSE2__
/* Bit k: the parity of bits 0..k of x (16 bits): set from an opening quote up to its closing
 * one, which is not. */
static unsigned prefix_xor16(unsigned x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    return x & 0xffffu;
}
#endif

/* The container's end in d[i..n): sixteen bytes at a time where SSE2 is there and they hold
 * no backslash (a list's bytes are mostly short strings, and a byte at a time was all of a
 * split's cost): the quotes' running parity says which bytes are in strings, and only the
 * brackets outside them count. A block with a backslash goes a byte at a time. */
static size_t container_run(struct vscan *v, const char *d, size_t i, size_t n)
{
    if (v->esc && i < n) { /* a backslash ended the last piece: this byte is escaped */
        v->esc = false;
        i++;
    }
    while (i < n) {
        size_t stop = n; /* a byte at a time up to here */
#ifdef __SSE2__
        if (i + 16 <= n) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(d + i));
            if (!_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('\\')))) {
                /* '[' and ']' are '{' and '}' without the 0x20 bit */
                __m128i f = _mm_or_si128(x, _mm_set1_epi8(0x20));
                unsigned q = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')));
                unsigned open = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, _mm_set1_epi8('{')));
                unsigned close = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, _mm_set1_epi8('}')));
                unsigned inside = prefix_xor16(q) ^ (v->in_str ? 0xffffu : 0);
                for (unsigned br = (open | close) & ~inside; br; br &= br - 1) {
                    unsigned k = (unsigned)__builtin_ctz(br);
                    if (open >> k & 1)
                        v->depth++;
                    else if (v->depth == 0 || --v->depth == 0)
                        return i + k + 1;
                }
                if (__builtin_popcount(q) & 1)
                    v->in_str = !v->in_str;
                i += 16;
                continue;
            }
            stop = i + 16; /* the block with a backslash */
        }
#endif
        while (i < stop) {
            char c = d[i++];
            if (v->in_str) {
                if (c == '\\') {
                    if (i < n)
                        i++;
                    else
                        v->esc = true;
                } else if (c == '"') {
                    v->in_str = false;
                }
            } else if (c == '"') {
                v->in_str = true;
            } else if ((c | 0x20) == '{') {
                v->depth++;
            } else if ((c | 0x20) == '}' && (v->depth == 0 || --v->depth == 0)) {
                return i;
            }
        }
    }
    return NOT_ENDED;
}

static void vscan_start(struct vscan *v, char c)
{
    *v = (struct vscan){.kind = c == '{' || c == '[' ? 'c' : c == '"' ? 's' : 'l'};
}

/* One past the value's last byte in d[i..n), or NOT_ENDED when it goes on past n. */
static size_t vscan_run(struct vscan *v, const char *d, size_t i, size_t n)
{
    if (v->kind == 'c')
        return container_run(v, d, i, n);
    if (v->kind == 's') {
        while (i < n) {
            char c = d[i++];
            if (!v->opened)
                v->opened = true; /* the opening quote */
            else if (v->esc)
                v->esc = false;
            else if (c == '\\')
                v->esc = true;
            else if (c == '"')
                return i;
        }
        return NOT_ENDED;
    }
    while (i < n && !is_delim(d[i]))
        i++;
    return i < n ? i : NOT_ENDED;
}

struct jsplit *jsplit_new(const char *const *needed, size_t max_hold, jsplit_item_cb cb, void *ud)
{
    struct jsplit *s = xcalloc(1, sizeof(*s));
    s->cb = cb;
    s->ud = ud;
    s->needed = needed;
    s->max_hold = max_hold;
    buf_init(&s->rest, max_hold);
    buf_init(&s->item, max_hold);
    buf_init(&s->held, max_hold);
    return s;
}

void jsplit_free(struct jsplit *s)
{
    if (!s)
        return;
    buf_free(&s->rest);
    buf_free(&s->item);
    buf_free(&s->held);
    free(s->held_end);
    json_decref(s->head);
    free(s);
}

size_t jsplit_count(const struct jsplit *s)
{
    return s->count;
}

int jsplit_did_split(const struct jsplit *s)
{
    return s->split;
}

static int fail(struct jsplit *s, struct err *e, int rc)
{
    s->rc = rc;
    s->err = *e;
    return rc;
}

static int too_big(struct jsplit *s, struct err *e, const char *what)
{
    err_set(e, -EFBIG, "%s larger than %zu bytes", what, s->max_hold);
    return fail(s, e, -EFBIG);
}

static int bad(struct jsplit *s, struct err *e, size_t at, const char *what)
{
    err_set(e, -EBADMSG, "invalid JSON at byte %zu: %s", s->off + at, what);
    return fail(s, e, -EBADMSG);
}

static int keep(struct jsplit *s, const char *d, size_t n, struct err *e)
{
    if (n && buf_append(&s->rest, d, n) < 0)
        return too_big(s, e, "list without its items");
    return 0;
}

/* The items array opened: what came before it, with "[]}" to close it, is the head. */
static int items_open(struct jsplit *s, struct err *e)
{
    if (buf_append(&s->rest, "]}", 2) < 0)
        return too_big(s, e, "list without its items");
    s->head = jscan_load(s->rest.data, s->rest.len, e);
    s->rest.len -= 2;
    s->rest.data[s->rest.len] = '\0';
    if (!s->head)
        return fail(s, e, -EBADMSG);
    for (size_t k = 0; s->needed && s->needed[k]; k++)
        if (!json_object_get(s->head, s->needed[k]))
            s->hold = true;
    if (s->hold) {
        json_decref(s->head);
        s->head = NULL;
    }
    s->split = true;
    return 0;
}

static int deliver(struct jsplit *s, const char *text, size_t n, struct err *e)
{
    if (s->hold) {
        if (buf_append(&s->held, text, n) < 0)
            return too_big(s, e, "list items held until its kind");
        if (s->nheld == s->held_cap) {
            s->held_cap = s->held_cap ? s->held_cap * 2 : 64;
            s->held_end = xrealloc(s->held_end, s->held_cap * sizeof(*s->held_end));
        }
        s->held_end[s->nheld++] = s->held.len;
        return 0;
    }
    err_clear(e);
    int rc = s->cb(s->ud, s->head, s->count, text, n, e);
    s->count++;
    if (rc < 0) {
        if (!e->code)
            err_set(e, rc, "list item %zu refused (%d)", s->count - 1, rc);
        return fail(s, e, rc);
    }
    return 0;
}

static bool in_items(enum st st)
{
    return st == S_ITEMS || st == S_ELEM || st == S_AFTER_ELEM || st == S_ELEM_NEXT;
}

int jsplit_feed(struct jsplit *s, const char *d, size_t n, struct err *e)
{
    struct err own;
    if (!e)
        e = &own;
    if (s->rc) {
        *e = s->err;
        return s->rc;
    }
    size_t i = 0, mark = 0, from = 0; /* mark: the rest not kept yet; from: the item's start */
    int rc = 0;
    while (i < n && rc == 0) {
        char c = d[i];
        if (is_ws(c) && s->st != S_KEY && s->st != S_VAL && s->st != S_ELEM && s->st != S_RAW) {
            i++;
            continue;
        }
        switch (s->st) {
        case S_TOP:
            s->st = c == '{' ? S_KEY_START : S_RAW;
            i += c == '{';
            break;
        case S_KEY_START:
            if (c != '"') {
                s->st = S_RAW;
                break;
            }
            s->members++;
            s->key_len = 0;
            s->key_items = true;
            s->key_esc = false;
            s->st = S_KEY;
            i++;
            break;
        case S_KEY:
            i++;
            if (s->key_esc) {
                s->key_esc = false;
                s->key_len++;
            } else if (c == '\\') {
                s->key_esc = true;
                s->key_items = false; /* an escaped "items" is not split: see jsplit.h */
            } else if (c == '"') {
                s->is_items = s->key_items && s->key_len == 5;
                s->st = S_COLON;
            } else {
                if (s->key_len >= 5 || c != "items"[s->key_len])
                    s->key_items = false;
                s->key_len++;
            }
            break;
        case S_COLON:
            s->st = c == ':' ? S_VALUE : S_RAW;
            i += c == ':';
            break;
        case S_VALUE:
            if (s->is_items && !s->split && c == '[') {
                i++;
                rc = keep(s, d + mark, i - mark, e);
                if (rc == 0)
                    rc = items_open(s, e);
                s->st = S_ITEMS;
                break;
            }
            vscan_start(&s->v, c);
            s->st = S_VAL;
            break;
        case S_VAL: {
            size_t end = vscan_run(&s->v, d, i, n);
            i = end == NOT_ENDED ? n : end;
            if (end != NOT_ENDED)
                s->st = S_AFTER_VAL;
            break;
        }
        case S_AFTER_VAL:
            s->st = c == ',' ? S_KEY_START : S_RAW;
            i += c == ',';
            break;
        case S_ITEMS:
        case S_ELEM_NEXT:
            if (c == ']' && s->st == S_ITEMS) {
                mark = i++;
                s->st = S_AFTER_VAL;
                break;
            }
            if (is_delim(c)) {
                rc = bad(s, e, i, "expected a list item");
                break;
            }
            vscan_start(&s->v, c);
            from = i;
            s->st = S_ELEM;
            break;
        case S_ELEM: {
            size_t end = vscan_run(&s->v, d, i, n);
            if (end == NOT_ENDED) {
                if (buf_append(&s->item, d + from, n - from) < 0)
                    rc = too_big(s, e, "list item");
                i = n;
                break;
            }
            if (s->item.len) {
                if (buf_append(&s->item, d + from, end - from) < 0)
                    rc = too_big(s, e, "list item");
                else
                    rc = deliver(s, s->item.data, s->item.len, e);
                buf_reset(&s->item);
            } else if (end - from > s->max_hold) { /* the same cap, held or not */
                rc = too_big(s, e, "list item");
            } else {
                rc = deliver(s, d + from, end - from, e);
            }
            i = end;
            s->st = S_AFTER_ELEM;
            break;
        }
        case S_AFTER_ELEM:
            if (c == ',') {
                s->st = S_ELEM_NEXT;
                i++;
            } else if (c == ']') {
                mark = i++;
                s->st = S_AFTER_VAL;
            } else {
                rc = bad(s, e, i, "expected ',' or ']' after a list item");
            }
            break;
        case S_RAW:
            i = n;
            break;
        }
    }
    if (rc == 0 && !in_items(s->st))
        rc = keep(s, d + mark, n - mark, e);
    s->off += n;
    return rc;
}

json_t *jsplit_finish(struct jsplit *s, struct err *e)
{
    struct err own;
    if (!e)
        e = &own;
    if (s->rc) {
        *e = s->err;
        return NULL;
    }
    if (in_items(s->st)) {
        bad(s, e, 0, "the text ends in the list's items");
        return NULL;
    }
    /* whatever follows, nothing more is fed nor finished */
    struct err done;
    err_set(&done, -EINVAL, "list split already finished");
    fail(s, &done, -EINVAL);
    json_t *rest = jscan_load(buf_str(&s->rest), s->rest.len, e);
    if (!rest) {
        fail(s, e, -EBADMSG);
        return NULL;
    }
    if (!s->split)
        return rest;
    if (json_object_size(rest) != s->members) {
        err_set(e, -EBADMSG, "invalid list: a top-level member is named twice");
        fail(s, e, -EBADMSG);
        json_decref(rest);
        return NULL;
    }
    json_object_del(rest, "items");
    if (s->hold) {
        s->hold = false;
        json_decref(s->head);
        s->head = json_incref(rest);
        for (size_t k = 0; k < s->nheld; k++) {
            size_t a = k ? s->held_end[k - 1] : 0;
            if (deliver(s, s->held.data + a, s->held_end[k] - a, e) < 0) {
                json_decref(rest);
                return NULL;
            }
        }
    }
    return rest;
}
