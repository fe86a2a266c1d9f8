/*
 * buf.h — a growable byte buffer with a hard cap.
 *
 * Used by every encoder.  On any failure (cap exceeded, out of memory) the
 * buffer frees itself and every later append fails too, so a caller can
 * append many pieces and check once.  Zero-initialise, or onp_buf_init().
 */
#ifndef ONNXPARITY_BUF_H
#define ONNXPARITY_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct onp_buf {
    uint8_t *p; /* [n] bytes, owned; NULL when empty or failed */
    size_t n;   /* bytes used */
    size_t cap; /* bytes allocated */
    size_t max; /* hard cap in bytes; 0 = SIZE_MAX */
    int failed; /* sticky: an append failed */
} onp_buf;

void onp_buf_init(onp_buf *b, size_t max);
/* Append n bytes; 0 on success, -1 (buffer freed, failed set) otherwise. */
int onp_buf_append(onp_buf *b, const void *p, size_t n);
/* Make room for n more bytes and return a pointer to them (n is added to
 * b->n); NULL on failure. */
uint8_t *onp_buf_grow(onp_buf *b, size_t n);
/* Write the bytes to `path` atomically (temporary file + rename): on
 * failure no file, partial or old-replaced, is left behind. */
struct onp_error;
int onp_buf_write_file(const onp_buf *b, const char *path, struct onp_error *e);
/* Free the bytes; accepts a zeroed or failed buffer. */
void onp_buf_free(onp_buf *b);

/* `s` as one POSIX shell word, for commands the tool suggests (a path with
 * spaces or quotes copy-pastes): s itself when every byte is a letter, a
 * digit or one of _ . / : = @ % + , - (and s is not empty), else s inside
 * single quotes with each ' written '\''.  Writes at most n bytes to out
 * including the NUL and returns out; "" when it does not fit. */
const char *onp_shell_quote(const char *s, char *out, size_t n);

#endif
