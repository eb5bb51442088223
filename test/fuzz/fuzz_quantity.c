/*
 * Fuzz target for pkg/quantity. Properties: no crash on any input; qty_parse agrees with
 * qty_parse_reference; a parsed
 * value formats to a string that parses back to the same value (and the text is
 * stable after one round); arithmetic on it either succeeds exactly or reports -ERANGE.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/quantity/quantity.h"
#include "pkg/util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = xstrndup((const char *)data, size);
    struct qty q, q2, r, ref;
    /* the 64-bit shortcut and the exact parse agree on every input */
    int rc_ref = qty_parse_reference(in, &ref, NULL);
    int prc = qty_parse(in, &q, NULL);
    if (prc != rc_ref || q.nano != ref.nano || q.format != ref.format)
        abort();
    if (prc == 0) {
        char a[QTY_STR_MAX], b[QTY_STR_MAX];
        qty_fmt(&q, a);
        if (strlen(a) >= QTY_STR_MAX || qty_parse(a, &q2, NULL) != 0 || qty_cmp(&q, &q2) != 0)
            abort();
        /* Like Kubernetes, a binary value that is not a multiple of 1Ki prints without a
         * suffix and re-parses as decimal ("1025000" binary -> "1025k"); from there the
         * text is a fixed point. */
        struct qty q3;
        qty_fmt(&q2, b);
        if (qty_parse(b, &q3, NULL) != 0 || qty_cmp(&q, &q3) != 0)
            abort();
        char c[QTY_STR_MAX];
        if (strcmp(qty_fmt(&q3, c), b) != 0)
            abort();
        int rc = qty_add(&q, &q, &r, NULL);
        if (rc != 0 && rc != -ERANGE)
            abort();
        if (rc == 0) {
            if (r.nano != q.nano * 2)
                abort();
            if (qty_sub(&r, &q, &r, NULL) != 0 || r.nano != q.nano)
                abort();
        }
        struct qty f;
        if (qty_parse("0.9", &f, NULL) == 0 && qty_scale(&q, &f, &r, NULL) == 0 &&
            qty_sign(&q) > 0 && qty_cmp(&r, &q) > 0)
            abort();
        int64_t v;
        (void)qty_value(&q, &v, NULL);
        (void)qty_milli_value(&q, &v, NULL);
    }
    free(in);
    return 0;
}
