/*
 * Fuzz target for devhub/listtext.h: on arbitrary bytes listtext_item() must never crash or
 * read beyond them, and whenever it answers 0 its text must be what the devhub's parse path
 * writes for the same object: json_loadb, apiVersion/kind deleted (strip) or set to the
 * served ones, json_dumps(JSON_COMPACT). The bytes are tried as they are and as jansson's
 * compact dump of them (what hstore stores). A disagreement traps.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/listtext.h"
#include "pkg/util/buf.h"

#define AV   "ex.io/v1"
#define KIND "Thing"

static void check(const char *txt, size_t n, bool strip)
{
    struct buf out;
    buf_init(&out, 1 << 20);
    buf_append(&out, "x", 1); /* appends after what is there, or leaves it */
    int rc = listtext_item(txt, n, strip, AV, KIND, &out);
    if (rc != 0) {
        if (out.len != 1)
            __builtin_trap();
        buf_free(&out);
        return;
    }
    json_t *j = json_loadb(txt, n, 0, NULL);
    if (!json_is_object(j))
        __builtin_trap();
    if (strip) {
        json_object_del(j, "apiVersion");
        json_object_del(j, "kind");
    } else {
        json_object_set_new(j, "apiVersion", json_string(AV));
        json_object_set_new(j, "kind", json_string(KIND));
    }
    char *want = json_dumps(j, JSON_COMPACT);
    if (!want || strlen(want) != out.len - 1 || memcmp(want, out.data + 1, out.len - 1) != 0)
        __builtin_trap();
    free(want);
    json_decref(j);
    buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a private copy, so that a read past `size` is caught by the sanitizer */
    char *p = malloc(size ? size : 1);
    memcpy(p, data, size);
    json_t *j = json_loadb(p, size, 0, NULL);
    if (j) {
        char *dumped = json_dumps(j, JSON_COMPACT);
        if (dumped) {
            check(dumped, strlen(dumped), true);
            check(dumped, strlen(dumped), false);
        }
        free(dumped);
        json_decref(j);
    }
    /* raw bytes: only the verdict's consequences are checked (0 must match a parse) */
    json_t *raw = json_loadb(p, size, 0, NULL);
    char *again = raw ? json_dumps(raw, JSON_COMPACT) : NULL;
    bool canonical = again && strlen(again) == size && memcmp(again, p, size) == 0;
    free(again);
    json_decref(raw);
    if (canonical) {
        check(p, size, true);
        check(p, size, false);
    } else {
        struct buf out;
        buf_init(&out, 1 << 20);
        (void)listtext_item(p, size, true, AV, KIND, &out);
        (void)listtext_item(p, size, false, AV, KIND, &out);
        buf_free(&out);
    }
    free(p);
    return 0;
}
