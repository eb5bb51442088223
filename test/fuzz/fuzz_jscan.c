/*
 * Fuzz target for pkg/json/jscan.h: on arbitrary bytes jscan_rv() must never crash, leak or
 * overrun, and must agree with jansson (json_loadb with flags 0, then
 * metadata.resourceVersion): the same verdict and the same string. A disagreement traps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/json/jscan.h"
#include "pkg/json/jsonx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    json_error_t je;
    json_t *j = json_loadb(p, size, 0, &je);
    char *rv = NULL;
    struct err e;
    int rc = jscan_rv(p, size, &rv, &e);
    if (!j) {
        if (rc != -EBADMSG || rv || e.code != -EBADMSG)
            __builtin_trap();
    } else {
        const char *want = jx_resource_version(j);
        if (rc != 0 || !want != !rv || (want && strcmp(want, rv) != 0))
            __builtin_trap();
        json_decref(j);
    }
    free(rv);
    return 0;
}
