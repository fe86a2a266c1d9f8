/*
 * utf8.h — one UTF-8 sequence at a time: the decoder every writer of text
 * that holds names from models shares (result documents, HTML pages, JUnit
 * and SARIF files, lint messages).  Names are escaped code point by code
 * point, and bytes that are not valid UTF-8 are replaced, never copied.
 *
 *     unsigned long cp;
 *     size_t n = onp_utf8_decode((const unsigned char *)"\xC3\xA9", &cp);  // 2, U+00E9
 */
#ifndef ONNXPARITY_UTF8_H
#define ONNXPARITY_UTF8_H

#include <stddef.h>

/* Decode one UTF-8 sequence at s (NUL-terminated).  Returns its length
 * (1-4) and the code point in *cp, or 0 when the bytes are not valid UTF-8
 * (overlong, surrogate, above U+10FFFF, truncated). */
size_t onp_utf8_decode(const unsigned char *s, unsigned long *cp);

#endif
