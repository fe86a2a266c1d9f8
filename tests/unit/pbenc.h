/*
 * pbenc.h — protobuf encoding helpers for the unit tests that build ONNX
 * messages by hand (test_model, test_lint, test_pb, test_ort): thin wrappers
 * over the library's own writer (src/pb/wire.h), so a test's bytes are
 * exactly what the field numbers say.  Header-only, static inline.
 *
 * Conventions: put_msg appends a finished sub-message and frees it;
 * put_copy appends it and keeps it.  Fixed-width and packed values are
 * written little-endian whatever the host.
 */
#ifndef ONP_TEST_PBENC_H
#define ONP_TEST_PBENC_H

#include <stdint.h>
#include <string.h>

#include "onnxparity/buf.h"
#include "pb/wire.h"

static inline void put_str(onp_buf *b, uint32_t num, const char *s)
{
    onp_pb_put_len(b, num, s, strlen(s));
}

/* Field `num` holding message m; m is freed. */
static inline void put_msg(onp_buf *b, uint32_t num, onp_buf *m)
{
    onp_pb_put_len(b, num, m->p, m->n);
    onp_buf_free(m);
}

/* Same, keeping m (for byte comparisons later). */
static inline void put_copy(onp_buf *b, uint32_t num, const onp_buf *m)
{
    onp_pb_put_len(b, num, m->p, m->n);
}

static inline void put_fixed32(onp_buf *b, uint32_t num, uint32_t v)
{
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    onp_pb_put_tag(b, num, ONP_WT_I32);
    onp_buf_append(b, le, 4);
}

static inline void put_fixed64(onp_buf *b, uint32_t num, uint64_t v)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)(v >> (8 * i));
    onp_pb_put_tag(b, num, ONP_WT_I64);
    onp_buf_append(b, le, 8);
}

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline void put_f32(onp_buf *b, uint32_t num, float f)
{
    put_fixed32(b, num, f32_bits(f));
}

static inline void put_packed_f32(onp_buf *b, uint32_t num, const float *v, size_t n)
{
    onp_pb_put_header(b, num, 4 * n);
    for (size_t i = 0; i < n; i++) {
        uint32_t u = f32_bits(v[i]);
        uint8_t le[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
        onp_buf_append(b, le, 4);
    }
}

/* Packed varints; int64 values are written as their two's complement
 * (10 bytes for a negative one), as protobuf's int64 is. */
static inline void put_packed_u64(onp_buf *b, uint32_t num, const uint64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += onp_pb_varint_size(v[i]);
    onp_pb_put_header(b, num, len);
    for (size_t i = 0; i < n; i++) onp_pb_put_varint(b, v[i]);
}

static inline void put_packed_i64(onp_buf *b, uint32_t num, const int64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += onp_pb_varint_size((uint64_t)v[i]);
    onp_pb_put_header(b, num, len);
    for (size_t i = 0; i < n; i++) onp_pb_put_varint(b, (uint64_t)v[i]);
}

/* A TensorProto (into a fresh t) with dims, data_type, an optional name and
 * raw_data (ONNX field numbers 1, 2, 8, 9). */
static inline void tensor_raw(onp_buf *t, const char *name, int32_t dt, int rank,
                              const int64_t *dims, const void *raw, size_t n)
{
    onp_buf_init(t, 0);
    for (int i = 0; i < rank; i++) onp_pb_put_uint(t, 1, (uint64_t)dims[i]);
    onp_pb_put_uint(t, 2, (uint64_t)dt);
    if (name) put_str(t, 8, name);
    onp_pb_put_len(t, 9, raw, n);
}

#endif
