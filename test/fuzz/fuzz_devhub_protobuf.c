/*
 * Fuzz target: devhub/protobuf request-body decoding. The input is used as is
 * and behind the "k8s\0" magic; nothing may crash, leak or trip a sanitizer,
 * and a decoded object always has apiVersion and kind.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devhub/protobuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *o = pb_decode_object(data, size, NULL);
    if (o && (!json_is_string(json_object_get(o, "kind")) ||
              !json_is_string(json_object_get(o, "apiVersion"))))
        abort();
    json_decref(o);
    unsigned char *buf = malloc(size + 4);
    memcpy(buf, "k8s\0", 4);
    memcpy(buf + 4, data, size);
    o = pb_decode_object(buf, size + 4, NULL);
    json_decref(o);
    free(buf);
    return 0;
}
