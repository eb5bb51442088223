/* jdump: compact JSON text, byte for byte what json_dumps(JSON_COMPACT) writes (see jdump.h). */
#include "pkg/json/jdump.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jsonx.h"
#include "pkg/util/utf8.h"
#include "pkg/util/xalloc.h"

struct out {
    char *p;
    size_t len, cap;
};

static void grow(struct out *o, size_t n)
{
    if (o->len + n + 1 <= o->cap)
        return;
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + n + 1)
        cap *= 2;
    o->p = xrealloc(o->p, cap);
    o->cap = cap;
}

static void put(struct out *o, const void *b, size_t n)
{
    grow(o, n);
    memcpy(o->p + o->len, b, n);
    o->len += n;
}

static void putc1(struct out *o, char c)
{
    grow(o, 1);
    o->p[o->len++] = c;
}

/* A quoted string; false when s is not valid UTF-8 (jansson cannot write it). */
static bool put_string(struct out *o, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    putc1(o, '"');
    while (p < end) {
        const unsigned char *q = p;
        while (q < end && *q >= 0x20 && *q != '"' && *q != '\\' && *q < 0x80)
            q++;
        put(o, p, (size_t)(q - p));
        p = q;
        if (p == end)
            break;
        unsigned char c = *p;
        if (c >= 0x80) {
            size_t k = utf8_len(p, end);
            if (!k)
                return false;
            put(o, p, k);
            p += k;
            continue;
        }
        char esc[8];
        const char *t = esc;
        switch (c) {
        case '"':
            t = "\\\"";
            break;
        case '\\':
            t = "\\\\";
            break;
        case '\b':
            t = "\\b";
            break;
        case '\f':
            t = "\\f";
            break;
        case '\n':
            t = "\\n";
            break;
        case '\r':
            t = "\\r";
            break;
        case '\t':
            t = "\\t";
            break;
        default:
            snprintf(esc, sizeof esc, "\\u%04X", (unsigned)c);
        }
        put(o, t, strlen(t));
        p++;
    }
    putc1(o, '"');
    return true;
}

/* false: hand the whole value to jansson */
static bool put_value(struct out *o, const json_t *v, int depth)
{
    if (depth > JDUMP_MAX_DEPTH)
        return false;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        putc1(o, '{');
        bool first = true;
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            if (!first)
                putc1(o, ',');
            first = false;
            if (!put_string(o, json_object_iter_key(it), json_object_iter_key_len(it)))
                return false;
            putc1(o, ':');
            if (!put_value(o, json_object_iter_value(it), depth + 1))
                return false;
        }
        putc1(o, '}');
        return true;
    }
    case JSON_ARRAY: {
        putc1(o, '[');
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++) {
            if (i)
                putc1(o, ',');
            if (!put_value(o, json_array_get(v, i), depth + 1))
                return false;
        }
        putc1(o, ']');
        return true;
    }
    case JSON_STRING:
        return put_string(o, json_string_value(v), json_string_length(v));
    case JSON_INTEGER: {
        char b[32];
        int n = snprintf(b, sizeof b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        put(o, b, (size_t)n);
        return true;
    }
    case JSON_REAL: {
        /* jansson's own formatting of doubles (precision, ".0", exponent) */
        char r[64];
        size_t n = json_dumpb(v, r, sizeof r, JSON_COMPACT | JSON_ENCODE_ANY);
        if (n == 0 || n > sizeof r)
            return false;
        put(o, r, n);
        return true;
    }
    case JSON_TRUE:
        put(o, "true", 4);
        return true;
    case JSON_FALSE:
        put(o, "false", 5);
        return true;
    case JSON_NULL:
        put(o, "null", 4);
        return true;
    }
    return false;
}

char *jdump_compact(const json_t *v, size_t *len)
{
    struct out o = {0};
    if (json_is_object(v) || json_is_array(v)) {
        if (put_value(&o, v, 1)) {
            o.p[o.len] = '\0';
            if (len)
                *len = o.len;
            return o.p;
        }
    }
    free(o.p);
    char *s = jx_dumps_flags(v, JSON_COMPACT);
    if (s && len)
        *len = strlen(s);
    return s;
}
