/* uid: see uid.h. */
#include "pkg/util/uid.h"

static int hex_val(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool uid_to_bytes(const char *s, size_t n, uint8_t out[16])
{
    if (n != UID_TEXT_LEN || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')
        return false;
    size_t o = 0;
    for (size_t i = 0; i < UID_TEXT_LEN; i += 2) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            i++;
        int hi = hex_val(s[i]), lo = hex_val(s[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[o++] = (uint8_t)(hi << 4 | lo);
    }
    return o == 16;
}

void uid_from_bytes(const uint8_t in[16], char out[UID_TEXT_LEN])
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[in[i] >> 4];
        out[o++] = hex[in[i] & 15];
    }
}
