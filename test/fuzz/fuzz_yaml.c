/* libFuzzer target: arbitrary bytes through the YAML -> JSON converter. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "pkg/util/err.h"
#include "pkg/yaml/yaml2json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err e;
    /* Small caps keep each run fast; the code paths are the same. */
    struct yaml_limits lim = {.max_depth = 64, .max_nodes = 50000, .max_alias_nodes = 5000};
    json_t *j = yaml_to_json((const char *)data, size, &lim, &e);
    if (j) {
        char *s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
        free(s);
        json_decref(j);
    }
    j = yaml_to_json_all((const char *)data, size, &lim, &e);
    json_decref(j);
    return 0;
}
