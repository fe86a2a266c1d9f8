/*
 * wire.c — protobuf wire primitives (wire.h).
 */
#include <string.h>

#include "pb/wire.h"

size_t onp_pb_varint(const uint8_t *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n && i < 10; i++) {
        uint64_t b = p[i];
        if (i == 9 && b > 1) return 0; /* would overflow 64 bits */
        v |= (b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

void onp_pb_cursor_init(onp_pb_cursor *c, const uint8_t *p, size_t n, const uint8_t *base,
                        const char *file)
{
    c->p = p;
    c->end = p + n;
    c->base = base ? base : p;
    c->file = file;
}

int onp_pb_next(onp_pb_cursor *c, onp_pb_field *f, onp_error *e)
{
    if (c->p >= c->end) return 0;
    const uint8_t *p = c->p;
    size_t left = (size_t)(c->end - p);
    uint64_t tag;
    size_t k = onp_pb_varint(p, left, &tag);
    if (!k)
        return onp_error_set(e, ONP_ERR_FORMAT, c->file, "protobuf", onp_pb_off(c, p),
                             "truncated or over-long varint in a field tag");
    uint64_t num = tag >> 3;
    if (num == 0 || num > 536870911u)
        return onp_error_set(e, ONP_ERR_FORMAT, c->file, "protobuf", onp_pb_off(c, p),
                             "invalid field number %llu", (unsigned long long)num);
    f->start = p;
    f->num = (uint32_t)num;
    f->wt = (uint32_t)(tag & 7);
    f->data = NULL;
    f->len = 0;
    f->v = 0;
    p += k;
    left -= k;
    switch (f->wt) {
    case ONP_WT_VARINT:
        k = onp_pb_varint(p, left, &f->v);
        if (!k)
            return onp_error_set(e, ONP_ERR_FORMAT, c->file, "protobuf", onp_pb_off(c, p),
                                 "truncated or over-long varint (field %u)", f->num);
        p += k;
        break;
    case ONP_WT_I64:
        if (left < 8)
            return onp_error_set(e, ONP_ERR_FORMAT, c->file, "protobuf", onp_pb_off(c, p),
                                 "truncated fixed64 (field %u)", f->num);
        for (int i = 7; i >= 0; i--) f->v = (f->v << 8) | p[i];
        p += 8;
        break;
    case ONP_WT_I32:
        if (left < 4)
            return onp_error_set(e, ONP_ERR_FORMAT, c->file, "protobuf", onp_pb_off(c, p),
                                 "truncated fixed32 (field %u)", f->num);
        f->v = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
        p += 4;
        break;
    case ONP_WT_LEN: {
        uint64_t len;
        k = onp_pb_varint(p, left, &len);
        if (!k)
            return onp_error_set(e, ONP_ERR_FORMAT, c->file, "protobuf", onp_pb_off(c, p),
                                 "truncated or over-long length varint (field %u)", f->num);
        p += k;
        left -= k;
        if (len > left)
            return onp_error_set(e, ONP_ERR_FORMAT, c->file, "protobuf", onp_pb_off(c, p),
                                 "field %u claims %llu bytes but only %zu remain", f->num,
                                 (unsigned long long)len, left);
        f->data = p;
        f->len = (size_t)len;
        p += len;
        break;
    }
    default:
        return onp_error_set(e, ONP_ERR_FORMAT, c->file, "protobuf", onp_pb_off(c, f->start),
                             "unsupported wire type %u (field %u)", f->wt, f->num);
    }
    f->stop = p;
    c->p = p;
    return 1;
}

void onp_pb_sub(const onp_pb_cursor *c, const onp_pb_field *f, onp_pb_cursor *sub)
{
    onp_pb_cursor_init(sub, f->data, f->len, c->base, c->file);
}

static const char *wt_name(uint32_t wt)
{
    switch (wt) {
    case ONP_WT_VARINT: return "varint";
    case ONP_WT_I64: return "fixed64";
    case ONP_WT_LEN: return "length-delimited";
    case ONP_WT_I32: return "fixed32";
    default: return "?";
    }
}

int onp_pb_expect(const onp_pb_cursor *c, const onp_pb_field *f, uint32_t wt, const char *what,
                  onp_error *e)
{
    if (f->wt == wt) return 0;
    return onp_error_set(e, ONP_ERR_FORMAT, c->file, what, onp_pb_off(c, f->start),
                         "wire type %s where %s was expected", wt_name(f->wt), wt_name(wt));
}

int onp_pb_packed_count(const onp_pb_cursor *c, const onp_pb_field *f, uint32_t kind, size_t *count,
                        onp_error *e)
{
    if (f->wt == kind) {
        *count = 1;
        return 0;
    }
    if (f->wt != ONP_WT_LEN)
        return onp_error_set(e, ONP_ERR_FORMAT, c->file, NULL, onp_pb_off(c, f->start),
                             "wire type %s for a repeated %s field", wt_name(f->wt), wt_name(kind));
    if (kind == ONP_WT_I32 || kind == ONP_WT_I64) {
        size_t w = kind == ONP_WT_I32 ? 4 : 8;
        if (f->len % w)
            return onp_error_set(e, ONP_ERR_FORMAT, c->file, NULL, onp_pb_off(c, f->data),
                                 "packed %s field of %zu bytes is not a multiple of %zu",
                                 wt_name(kind), f->len, w);
        *count = f->len / w;
        return 0;
    }
    size_t n = 0;
    const uint8_t *p = f->data, *end = f->data + f->len;
    while (p < end) {
        uint64_t v;
        size_t k = onp_pb_varint(p, (size_t)(end - p), &v);
        if (!k)
            return onp_error_set(e, ONP_ERR_FORMAT, c->file, NULL, onp_pb_off(c, p),
                                 "truncated or over-long varint in a packed field");
        p += k;
        n++;
    }
    *count = n;
    return 0;
}

void onp_pb_packed_read(const onp_pb_field *f, uint32_t kind, uint64_t *out)
{
    if (f->wt == kind) {
        out[0] = f->v;
        return;
    }
    const uint8_t *p = f->data, *end = f->data + f->len;
    size_t i = 0;
    if (kind == ONP_WT_VARINT) {
        while (p < end) {
            size_t k = onp_pb_varint(p, (size_t)(end - p), &out[i++]);
            if (!k) return; /* validated by packed_count */
            p += k;
        }
    } else {
        size_t w = kind == ONP_WT_I32 ? 4 : 8;
        for (; p + w <= end; p += w) {
            uint64_t v = 0;
            for (size_t b = w; b-- > 0;) v = (v << 8) | p[b];
            out[i++] = v;
        }
    }
}

/* --- encoder ----------------------------------------------------------- */

size_t onp_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

int onp_pb_put_varint(onp_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) tmp[n] |= 0x80;
        n++;
    } while (v);
    return onp_buf_append(b, tmp, n);
}

int onp_pb_put_tag(onp_buf *b, uint32_t num, uint32_t wt)
{
    return onp_pb_put_varint(b, ((uint64_t)num << 3) | wt);
}

int onp_pb_put_header(onp_buf *b, uint32_t num, size_t n)
{
    if (onp_pb_put_tag(b, num, ONP_WT_LEN)) return -1;
    return onp_pb_put_varint(b, n);
}

int onp_pb_put_len(onp_buf *b, uint32_t num, const void *p, size_t n)
{
    if (onp_pb_put_header(b, num, n)) return -1;
    return onp_buf_append(b, p, n);
}

int onp_pb_put_uint(onp_buf *b, uint32_t num, uint64_t v)
{
    if (onp_pb_put_tag(b, num, ONP_WT_VARINT)) return -1;
    return onp_pb_put_varint(b, v);
}
