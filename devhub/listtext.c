#include "devhub/listtext.h"

#include <errno.h>
#include <string.h>

/* End of the string that starts at txt[i] == '"': the index after its closing quote, 0 when
 * it does not end within n. */
static size_t skip_string(const char *txt, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (txt[i] == '\\')
            i++;
        else if (txt[i] == '"')
            return i + 1;
    }
    return 0;
}

/* End of the value that starts at txt[i] (compact JSON): the index after it, 0 when it does
 * not end within n. Containers are skipped by depth; strings by their quotes. */
static size_t skip_value(const char *txt, size_t n, size_t i)
{
    if (i >= n)
        return 0;
    if (txt[i] == '"')
        return skip_string(txt, n, i);
    if (txt[i] != '{' && txt[i] != '[') {
        size_t start = i;
        while (i < n && txt[i] != ',' && txt[i] != '}' && txt[i] != ']') {
            if (txt[i] == ' ' || txt[i] == '\n' || txt[i] == '\t' || txt[i] == '\r' ||
                txt[i] == '"' || txt[i] == ':')
                return 0;
            i++;
        }
        return i < n && i > start ? i : 0; /* a scalar is never empty */
    }
    size_t depth = 0;
    while (i < n) {
        char c = txt[i];
        if (c == '"') {
            i = skip_string(txt, n, i);
            if (!i)
                return 0;
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (--depth == 0)
                return i + 1;
        }
        i++;
    }
    return 0;
}

static bool key_is(const char *txt, size_t ks, size_t ke, const char *name)
{
    size_t len = strlen(name);
    return ke - ks == len + 2 && memcmp(txt + ks + 1, name, len) == 0;
}

/* value text [vs, ve) is exactly the JSON string "want" (no escapes) */
static bool value_is(const char *txt, size_t vs, size_t ve, const char *want)
{
    size_t len = strlen(want);
    return ve - vs == len + 2 && txt[vs] == '"' && memcmp(txt + vs + 1, want, len) == 0 &&
           txt[ve - 1] == '"' && !memchr(txt + vs + 1, '\\', len);
}

static void rollback(struct buf *out, size_t len)
{
    out->len = len;
    if (out->data)
        out->data[len] = 0;
}

int listtext_item(const char *txt, size_t n, bool strip, const char *api_version, const char *kind,
                  struct buf *out)
{
    if (n < 2 || txt[0] != '{' || txt[n - 1] != '}')
        return -EAGAIN;
    size_t start = out->len;
    int kept = 0, av_seen = 0, kind_seen = 0, av_ok = 0, kind_ok = 0;
    /* strip: the kept members are copied as they are scanned, joined by commas */
    if (strip && buf_append(out, "{", 1) < 0)
        return -EAGAIN;
    size_t i = 1;
    while (txt[i] != '}') {
        size_t ms = i;
        if (txt[i] != '"')
            goto fail;
        size_t ke = skip_string(txt, n, i);
        if (!ke || ke >= n || txt[ke] != ':')
            goto fail;
        size_t vs = ke + 1, ve = skip_value(txt, n, vs);
        if (!ve || ve >= n)
            goto fail;
        bool is_av = key_is(txt, ms, ke, "apiVersion"), is_kind = key_is(txt, ms, ke, "kind");
        if (is_av) {
            av_seen++;
            av_ok = strip || value_is(txt, vs, ve, api_version);
        } else if (is_kind) {
            kind_seen++;
            kind_ok = strip || value_is(txt, vs, ve, kind);
        } else if (strip) {
            if ((kept++ && buf_append(out, ",", 1) < 0) || buf_append(out, txt + ms, ve - ms) < 0)
                goto fail;
        }
        i = ve;
        if (txt[i] == ',' && i + 1 < n && txt[i + 1] != '}')
            i++;
        else if (txt[i] != '}')
            goto fail;
    }
    if (i != n - 1 || av_seen > 1 || kind_seen > 1)
        goto fail; /* something after the object, or a duplicate key (the parser's case) */
    if (strip)
        return buf_append(out, "}", 1) < 0 ? (rollback(out, start), -EAGAIN) : 0;
    if (!av_ok || !kind_ok)
        return -EAGAIN;
    return buf_append(out, txt, n) < 0 ? -EAGAIN : 0;
fail:
    rollback(out, start);
    return -EAGAIN;
}
