/*
 * utf8.h — the UTF-8 decoder the markup writers (cli/html.c, cli/junit.c)
 * share: names from models are escaped code point by code point, and bytes
 * that are not valid UTF-8 are replaced, never copied into a page or report.
 */
#ifndef ONP_CLI_UTF8_H
#define ONP_CLI_UTF8_H

#include <stddef.h>

/* Decode one UTF-8 sequence at s (NUL-terminated).  Returns its length
 * (1-4) and the code point in *cp, or 0 when the bytes are not valid UTF-8
 * (overlong, surrogate, above U+10FFFF, truncated). */
size_t utf8_decode(const unsigned char *s, unsigned long *cp);

#endif
