/*
 * Fuzz target: a --nodes SPEC string. Parsing must never crash; a parsed
 * spec must build Node objects that serialise.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/nodes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    struct nodes_spec spec;
    struct err e;
    if (nodes_parse(s, &spec, &e) == 0) {
        json_t *n = nodes_make(&spec, "fuzz", spec.count, "2026-11-22T12:00:00Z");
        char *out = json_dumps(n, JSON_COMPACT);
        if (!out)
            __builtin_trap();
        free(out);
        json_decref(n);
        nodes_spec_release(&spec);
    }
    free(s);
    return 0;
}
