/* utf8: strict UTF-8 (see utf8.h). */
#include "pkg/util/utf8.h"

#include <stdint.h>

size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char u = p[0];
    size_t n;
    uint32_t v;
    if (u < 0x80)
        return 1;
    if (u >= 0xC2 && u <= 0xDF) {
        n = 2;
        v = u & 0x1F;
    } else if (u >= 0xE0 && u <= 0xEF) {
        n = 3;
        v = u & 0x0F;
    } else if (u >= 0xF0 && u <= 0xF4) {
        n = 4;
        v = u & 0x07;
    } else {
        return 0;
    }
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) || (n == 3 && v < 0x800) ||
        (n == 4 && v < 0x10000))
        return 0;
    return n;
}
