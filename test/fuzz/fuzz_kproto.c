/*
 * Fuzz target: a protobuf request body. Decoding must never crash or leak;
 * a decoded object must be a JSON object with apiVersion and kind that
 * serialises.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "devhub/kproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = NULL;
    struct err e;
    struct kproto_limits lim = {.max_bytes = 1 << 16, .max_depth = 12};
    if (kproto_decode_ex(data, size, &lim, &obj, &e) == 0) {
        if (!json_is_object(obj) || !json_is_string(json_object_get(obj, "kind")) ||
            !json_is_string(json_object_get(obj, "apiVersion")))
            __builtin_trap();
        char *out = json_dumps(obj, JSON_COMPACT);
        if (!out)
            __builtin_trap();
        free(out);
        json_decref(obj);
    } else if (obj != NULL || e.msg[0] == '\0') {
        __builtin_trap();
    }
    return 0;
}
