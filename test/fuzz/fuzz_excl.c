/*
 * Fuzz target for controllers/workload/excl: the kueue-ks.io/excluded-clusters
 * annotation, which anyone who can edit the hub job writes.
 * Properties: no crash; excl_with() keeps what excl_until() reads: the new
 * cluster is excluded until the given time, and every other cluster as long
 * as before.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/workload/excl.h"
#include "pkg/util/xalloc.h"

#define NOW 1795514400000LL /* 2026-11-24T10:00:00Z */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = xstrndup((const char *)data, size);
    static const char *const names[] = {"cluster1", "cluster2", "c", ""};
    char *out = excl_with(in, "cluster1", NOW + 600000, NOW);
    if (excl_until(out, "cluster1", NOW) != NOW + 600000)
        abort();
    for (size_t i = 1; i < sizeof names / sizeof names[0]; i++)
        if (size < EXCL_MAX_VALUE - 64 &&
            excl_until(in, names[i], NOW) != excl_until(out, names[i], NOW))
            abort();
    free(out);
    free(in);
    return 0;
}
