/*
 * Fuzz target for metrics_format_float (sample values and "le" labels of the
 * exposition): the text always parses back to the same double (NaN to NaN).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/metrics/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    double v;
    if (size < sizeof(v))
        return 0;
    memcpy(&v, data, sizeof(v));
    char b[40];
    const char *s = metrics_format_float(b, sizeof(b), v);
    if (strlen(s) >= sizeof(b) - 1)
        abort();
    if (isnan(v)) {
        if (strcmp(s, "NaN") != 0)
            abort();
        return 0;
    }
    char *end = NULL;
    double back = strtod(s, &end);
    if (*end || back != v || signbit(back) != signbit(v))
        abort();
    return 0;
}
