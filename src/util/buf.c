/*
 * buf.c — growable byte buffer with a hard cap (include/onnxparity/buf.h).
 */
#include <stdlib.h>
#include <string.h>

#include "onnxparity/buf.h"
#include "onnxparity/error.h"
#include "util/fsio.h"

void onp_buf_init(onp_buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

static void fail(onp_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    b->failed = 1;
}

uint8_t *onp_buf_grow(onp_buf *b, size_t n)
{
    if (b->failed) return NULL;
    size_t max = b->max ? b->max : SIZE_MAX;
    if (n > max - b->n) {
        fail(b);
        return NULL;
    }
    size_t need = b->n + n;
    if (need > b->cap || !b->p) { /* never hand out NULL + offset */
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        if (cap > max) cap = max;
        uint8_t *p = realloc(b->p, cap ? cap : 1);
        if (!p) {
            fail(b);
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    uint8_t *at = b->p + b->n;
    b->n = need;
    return at;
}

int onp_buf_append(onp_buf *b, const void *p, size_t n)
{
    uint8_t *at = onp_buf_grow(b, n);
    if (!at) return -1;
    if (n) memcpy(at, p, n);
    return 0;
}

void onp_buf_free(onp_buf *b)
{
    if (!b) return;
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

int onp_buf_write_file(const onp_buf *b, const char *path, onp_error *e)
{
    if (b->failed)
        return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "the buffer failed earlier");
    onp_piece piece = {b->p, b->n};
    return onp_write_atomic(path, &piece, 1, e);
}

const char *onp_shell_quote(const char *s, char *out, size_t n)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_./:=@%+,-";
    if (!n) return out;
    int quote = !*s || s[strspn(s, safe)] != '\0';
    size_t need = 1; /* the NUL */
    for (const char *p = s; *p; p++) need += quote && *p == '\'' ? 4 : 1;
    if (quote) need += 2;
    if (need > n) {
        out[0] = '\0';
        return out;
    }
    char *w = out;
    if (quote) *w++ = '\'';
    for (const char *p = s; *p; p++) {
        if (quote && *p == '\'') {
            memcpy(w, "'\\''", 4); /* close, an escaped quote, reopen */
            w += 4;
        } else {
            *w++ = *p;
        }
    }
    if (quote) *w++ = '\'';
    *w = '\0';
    return out;
}
