/* jsplit: a list body split into its items (see jsplit.h). The walk here is loose (brackets
 * matched outside strings); every value it passes over is checked by jscan_load afterwards,
 * and whatever it does not expect sends the whole text to jscan_load instead. */
#include "pkg/json/jsplit.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "pkg/json/jscan.h"
#include "pkg/util/xalloc.h"

static size_t skip_ws(const char *d, size_t i, size_t n)
{
    while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
        i++;
    return i;
}

/* The first quote or backslash at d[i..n), or n. */
static size_t find_quote(const char *d, size_t i, size_t n)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(d + i));
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bs)));
        if (m)
            return i + (size_t)__builtin_ctz(m);
    }
#endif
    while (i < n && d[i] != '"' && d[i] != '\\')
        i++;
    return i;
}

/* One past the closing quote of the string opened at d[i]; 0 when the text ends first.
 * *esc: it holds a backslash. */
static size_t string_end(const char *d, size_t i, size_t n, bool *esc)
{
    for (i++; i < n; i += 2) { /* past a backslash and the byte it escapes */
        i = find_quote(d, i, n);
        if (i >= n)
            return 0;
        if (d[i] == '"')
            return i + 1;
        *esc = true;
    }
    return 0;
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

/* One past the container opened at d[i] (its matching bracket outside strings); 0 when the
 * text ends first. Sixteen bytes at a time where SSE2 is there and they hold no backslash
 * (a list's bytes are mostly short strings, and a byte at a time was all of a split's cost):
 * the quotes' running parity says which bytes are in strings, and only the brackets outside
 * them count. A block with a backslash goes a byte at a time. */
static size_t container_end(const char *d, size_t i, size_t n)
{
    size_t depth = 0;
    bool in_str = false;
    while (i < n) {
        size_t stop = n; /* a byte at a time up to here */
#ifdef __SSE2__
        if (i + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(d + i));
            if (!_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')))) {
                /* '[' and ']' are '{' and '}' without the 0x20 bit */
                __m128i f = _mm_or_si128(v, _mm_set1_epi8(0x20));
                unsigned q = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
                unsigned open = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, _mm_set1_epi8('{')));
                unsigned close = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, _mm_set1_epi8('}')));
                unsigned inside = prefix_xor16(q) ^ (in_str ? 0xffffu : 0);
                for (unsigned br = (open | close) & ~inside; br; br &= br - 1) {
                    unsigned k = (unsigned)__builtin_ctz(br);
                    if (open >> k & 1)
                        depth++;
                    else if (--depth == 0)
                        return i + k + 1;
                }
                if (__builtin_popcount(q) & 1)
                    in_str = !in_str;
                i += 16;
                continue;
            }
            stop = i + 16; /* the block with a backslash */
        }
#endif
        while (i < stop) {
            char c = d[i++];
            if (in_str) {
                if (c == '\\')
                    i++;
                else if (c == '"')
                    in_str = false;
            } else if (c == '"') {
                in_str = true;
            } else if ((c | 0x20) == '{') {
                depth++;
            } else if ((c | 0x20) == '}' && --depth == 0) {
                return i;
            }
        }
    }
    return 0;
}

/* One past the value at d[i]: a container up to its matching bracket, a string up to its
 * quote, anything else up to the next delimiter; 0 when the text ends first. */
static size_t value_end(const char *d, size_t i, size_t n)
{
    bool esc = false;
    if (i >= n)
        return 0;
    if (d[i] == '"')
        return string_end(d, i, n, &esc);
    if (d[i] == '{' || d[i] == '[')
        return container_end(d, i, n);
    while (i < n && d[i] != ',' && d[i] != '}' && d[i] != ']' && d[i] != ' ' && d[i] != '\t' &&
           d[i] != '\n' && d[i] != '\r')
        i++;
    return i;
}

/* The items array opened at d[i]: the spans of its elements (objects) into l; one past its
 * ']', or 0 when it is not an array of objects with JSON's punctuation. */
static size_t split_items(const char *d, size_t i, size_t n, struct jsplit *l)
{
    size_t cap = 0;
    i = skip_ws(d, i + 1, n);
    if (i < n && d[i] == ']')
        return i + 1;
    for (;;) {
        if (i >= n || d[i] != '{')
            return 0;
        size_t end = value_end(d, i, n);
        if (!end)
            return 0;
        if (l->n == cap) {
            cap = cap ? cap * 2 : 256;
            l->items = xrealloc(l->items, cap * sizeof(*l->items));
        }
        l->items[l->n++] = (struct jsplit_span){i, end - i};
        i = skip_ws(d, end, n);
        if (i < n && d[i] == ',') {
            i = skip_ws(d, i + 1, n);
            continue;
        }
        return i < n && d[i] == ']' ? i + 1 : 0;
    }
}

/* The top-level object's raw "items" array: its value is d[*a..*b); false when the text is
 * not an object of raw keys with one "items" array of objects. */
static bool find_items(const char *d, size_t n, struct jsplit *l, size_t *a, size_t *b)
{
    *a = *b = 0;
    size_t i = skip_ws(d, 0, n);
    if (i >= n || d[i] != '{')
        return false;
    i = skip_ws(d, i + 1, n);
    for (;;) {
        bool esc = false;
        if (i >= n || d[i] != '"')
            return false;
        size_t ke = string_end(d, i, n, &esc);
        if (!ke || esc) /* an escaped key might read "items" */
            return false;
        bool is_items = ke - i == 7 && memcmp(d + i, "\"items\"", 7) == 0;
        i = skip_ws(d, ke, n);
        if (i >= n || d[i] != ':')
            return false;
        i = skip_ws(d, i + 1, n);
        size_t end;
        if (is_items) {
            if (*b || i >= n || d[i] != '[') /* twice, or not an array */
                return false;
            *a = i;
            end = *b = split_items(d, i, n, l);
        } else {
            end = value_end(d, i, n);
        }
        if (!end)
            return false;
        i = skip_ws(d, end, n);
        if (i < n && d[i] == ',') {
            i = skip_ws(d, i + 1, n);
            continue;
        }
        return i < n && d[i] == '}' && *b;
    }
}

int jsplit_list(const char *data, size_t n, struct jsplit *out, struct err *e)
{
    memset(out, 0, sizeof(*out));
    out->data = data;
    size_t a, b;
    if (!find_items(data, n, out, &a, &b)) {
        FREE_AND_NULL(out->items);
        out->n = 0;
        out->rest = jscan_load(data, n, e);
        return out->rest ? 0 : -EBADMSG;
    }
    /* the rest: the same text with [] for the items (the same byte positions before them) */
    size_t rn = n - (b - a) + 2;
    char *rest = xmalloc(rn);
    memcpy(rest, data, a);
    memcpy(rest + a, "[]", 2);
    memcpy(rest + a + 2, data + b, n - b);
    out->rest = jscan_load(rest, rn, e);
    free(rest);
    if (!out->rest)
        return -EBADMSG;
    json_object_del(out->rest, "items");
    return 0;
}

json_t *jsplit_item(const struct jsplit *l, size_t i, struct err *e)
{
    return jscan_load(l->data + l->items[i].off, l->items[i].len, e);
}

void jsplit_release(struct jsplit *l)
{
    json_decref(l->rest);
    free(l->items);
    memset(l, 0, sizeof(*l));
}
