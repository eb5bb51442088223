/*
 * Fuzz target for cmd/kueue-ks/sv, which renders API lists
 * (outside input). Input: a JSON text. An array [ClusterMetricsList,
 * JobList, ClusterQueueList, WorkloadList] feeds each list its element; any
 * other JSON value is used for all four. Rendered both plain and wide.
 * Properties: no crash, no leak, no undefined behaviour, and the output is
 * a NUL-free text ending in a newline.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/kueue-ks/sv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *root = json_loadb((const char *)data, size, 0, NULL);
    if (!root)
        return 0;
    const json_t *l[4] = {root, root, root, root};
    if (json_is_array(root) && json_array_size(root) == 4)
        for (size_t i = 0; i < 4; i++)
            l[i] = json_array_get(root, i);
    for (int wide = 0; wide < 2; wide++) {
        struct sv_input in = {.cluster_metrics = l[0],
                              .jobs = l[1],
                              .cluster_queues = l[2],
                              .workloads = l[3],
                              .now_ms = 1795341600000LL,
                              .wide = wide};
        struct buf b;
        buf_init(&b, (size_t)16 << 20);
        if (sv_render(&in, &b) == 0) {
            if (b.len == 0 || b.data[b.len - 1] != '\n' || strlen(b.data) != b.len)
                abort();
        }
        buf_free(&b);
    }
    json_decref(root);
    return 0;
}
