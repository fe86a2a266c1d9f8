/*
 * wire.h — protobuf wire-format primitives: a cursor reader that returns
 * views, and an encoder into onp_buf.  Internal; knows nothing of ONNX.
 *
 * Reader contract: pure functions of (data, len); a varint is at most 10
 * bytes; a length-delimited field must fit in what remains; wire types 3/4
 * (groups) and 6/7 are refused.  The cursor advances only on success.
 * Offsets are absolute (from the start of the file) so errors can say where.
 */
#ifndef ONP_PB_WIRE_H
#define ONP_PB_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/buf.h"
#include "onnxparity/error.h"

enum { ONP_WT_VARINT = 0, ONP_WT_I64 = 1, ONP_WT_LEN = 2, ONP_WT_I32 = 5 };

/* Nesting depth cap for messages (graphs inside attributes inside nodes...). */
#define ONP_PB_MAX_DEPTH 64

/* Decode a varint at p[0..n).  Returns bytes consumed (1..10), 0 when
 * truncated or longer than 10 bytes or overflowing 64 bits. */
size_t onp_pb_varint(const uint8_t *p, size_t n, uint64_t *out);

typedef struct onp_pb_cursor {
    const uint8_t *p;    /* current position */
    const uint8_t *end;  /* end of the message */
    const uint8_t *base; /* start of the file, for offsets */
    const char *file;    /* for errors */
} onp_pb_cursor;

typedef struct onp_pb_field {
    uint32_t num;        /* field number */
    uint32_t wt;         /* wire type */
    uint64_t v;          /* VARINT, I64, I32 value */
    const uint8_t *data; /* LEN payload */
    size_t len;
    const uint8_t *start; /* first byte of the tag (for splicing) */
    const uint8_t *stop;  /* one past the field's last byte */
} onp_pb_field;

void onp_pb_cursor_init(onp_pb_cursor *c, const uint8_t *p, size_t n, const uint8_t *base,
                        const char *file);

/* Next field: 1 = got one, 0 = end of message, -1 = malformed (error set
 * with field "protobuf" and the offset). */
int onp_pb_next(onp_pb_cursor *c, onp_pb_field *f, onp_error *e);

/* A sub-cursor over a LEN field's payload. */
void onp_pb_sub(const onp_pb_cursor *c, const onp_pb_field *f, onp_pb_cursor *sub);

/* Offset of a pointer inside the file. */
static inline int64_t onp_pb_off(const onp_pb_cursor *c, const uint8_t *p)
{
    return (int64_t)(p - c->base);
}

/* Fail unless f->wt == wt, naming `what` (e.g. "NodeProto.op_type"). */
int onp_pb_expect(const onp_pb_cursor *c, const onp_pb_field *f, uint32_t wt, const char *what,
                  onp_error *e);

/* Repeated scalar fields come packed (one LEN field) or one per tag.  These
 * count / decode elements of either encoding from one field occurrence.
 * `kind`: ONP_WT_VARINT, ONP_WT_I32 or ONP_WT_I64 element encoding. */
int onp_pb_packed_count(const onp_pb_cursor *c, const onp_pb_field *f, uint32_t kind, size_t *count,
                        onp_error *e);
/* Decode the elements of one occurrence into out[0..count) as uint64 bit
 * patterns (fixed32 zero-extended).  Count must come from packed_count. */
void onp_pb_packed_read(const onp_pb_field *f, uint32_t kind, uint64_t *out);

/* --- encoder ----------------------------------------------------------- */

size_t onp_pb_varint_size(uint64_t v);
int onp_pb_put_varint(onp_buf *b, uint64_t v);
int onp_pb_put_tag(onp_buf *b, uint32_t num, uint32_t wt);
int onp_pb_put_len(onp_buf *b, uint32_t num, const void *p, size_t n); /* tag + len + bytes */
int onp_pb_put_uint(onp_buf *b, uint32_t num, uint64_t v);             /* tag + varint */
int onp_pb_put_header(onp_buf *b, uint32_t num, size_t n); /* tag + len, payload to follow */

#endif
