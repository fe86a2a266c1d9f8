/*
 * utf8.c — one UTF-8 sequence at a time (include/onnxparity/utf8.h).
 */
#include "onnxparity/utf8.h"

size_t onp_utf8_decode(const unsigned char *s, unsigned long *cp)
{
    unsigned long c = s[0], min;
    size_t len;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2, c &= 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, c &= 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, c &= 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0; /* also stops at the NUL */
        c = (c << 6) | (s[k] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return len;
}
