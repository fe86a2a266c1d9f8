/*
 * fuzz_wire.c — libFuzzer target for the protobuf wire reader and encoder
 * (src/pb/wire.h).
 *
 * The input is read as a message: every field is checked for sane bounds,
 * re-encoded with the encoder and decoded again (the same number, wire type,
 * value and payload must come back), counted and read as a packed repeated
 * field of each element kind, and each length-delimited payload is walked
 * again as a nested message, to a fixed depth.  Varints are also checked
 * against a reference decoder written here.  Any disagreement traps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pb/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DEPTH 12

#define ENSURE(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) __builtin_trap();                                                                \
    } while (0)

/* The varint rules of wire.h, written independently: at most 10 bytes, the
 * 10th may only be 0 or 1. */
static size_t ref_varint(const uint8_t *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 10; i++) {
        if (i >= n) return 0;
        if (i == 9 && p[i] > 1) return 0;
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (p[i] < 0x80) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

/* Re-encode field f and decode it again. */
static void reencode(const onp_pb_field *f)
{
    onp_buf b;
    onp_buf_init(&b, 0);
    switch (f->wt) {
    case ONP_WT_VARINT: onp_pb_put_uint(&b, f->num, f->v); break;
    case ONP_WT_LEN: onp_pb_put_len(&b, f->num, f->data, f->len); break;
    case ONP_WT_I64: {
        uint8_t le[8];
        for (int i = 0; i < 8; i++) le[i] = (uint8_t)(f->v >> (8 * i));
        onp_pb_put_tag(&b, f->num, ONP_WT_I64);
        onp_buf_append(&b, le, 8);
        break;
    }
    default: {
        uint8_t le[4];
        for (int i = 0; i < 4; i++) le[i] = (uint8_t)(f->v >> (8 * i));
        onp_pb_put_tag(&b, f->num, ONP_WT_I32);
        onp_buf_append(&b, le, 4);
        break;
    }
    }
    ENSURE(!b.failed);
    onp_pb_cursor c;
    onp_pb_field g;
    onp_error e;
    onp_pb_cursor_init(&c, b.p, b.n, b.p, NULL);
    ENSURE(onp_pb_next(&c, &g, &e) == 1);
    ENSURE(g.num == f->num && g.wt == f->wt && g.v == f->v && g.len == f->len);
    if (f->len) ENSURE(!memcmp(g.data, f->data, f->len));
    ENSURE(onp_pb_next(&c, &g, &e) == 0);
    /* the encoder is canonical: a field is never longer than the original */
    ENSURE(b.n <= (size_t)(f->stop - f->start));
    onp_buf_free(&b);
}

static void packed(const onp_pb_cursor *c, const onp_pb_field *f)
{
    static const uint32_t kinds[3] = {ONP_WT_VARINT, ONP_WT_I32, ONP_WT_I64};
    for (int k = 0; k < 3; k++) {
        size_t n = (size_t)-1;
        onp_error e;
        if (onp_pb_packed_count(c, f, kinds[k], &n, &e)) {
            ENSURE(e.code == ONP_ERR_FORMAT);
            continue;
        }
        if (f->wt == kinds[k]) {
            ENSURE(n == 1);
        } else {
            ENSURE(f->wt == ONP_WT_LEN && n <= f->len);
            if (kinds[k] == ONP_WT_I32) ENSURE(n * 4 == f->len);
            if (kinds[k] == ONP_WT_I64) ENSURE(n * 8 == f->len);
        }
        uint64_t *out = malloc((n ? n : 1) * sizeof *out);
        if (!out) return;
        onp_pb_packed_read(f, kinds[k], out);
        if (kinds[k] == ONP_WT_I32)
            for (size_t i = 0; i < n; i++) ENSURE(out[i] <= 0xffffffffu);
        if (kinds[k] == ONP_WT_VARINT && f->wt == ONP_WT_LEN && n) {
            uint64_t v;
            ENSURE(ref_varint(f->data, f->len, &v) && v == out[0]);
        }
        free(out);
    }
}

static void walk(const uint8_t *p, size_t n, const uint8_t *base, size_t total, int depth)
{
    onp_pb_cursor c;
    onp_pb_field f;
    onp_error e;
    onp_error_clear(&e);
    onp_pb_cursor_init(&c, p, n, base, "fuzz");
    int r;
    while ((r = onp_pb_next(&c, &f, &e)) == 1) {
        ENSURE(f.start >= p && f.stop <= p + n && f.start < f.stop && c.p == f.stop);
        ENSURE(f.num >= 1 && f.num <= 536870911u);
        ENSURE(f.wt == ONP_WT_VARINT || f.wt == ONP_WT_I64 || f.wt == ONP_WT_LEN ||
               f.wt == ONP_WT_I32);
        if (f.wt == ONP_WT_LEN) ENSURE(f.data > f.start && f.data + f.len == f.stop);
        if (f.wt == ONP_WT_I32) ENSURE(f.v <= 0xffffffffu);
        uint64_t tag;
        ENSURE(ref_varint(f.start, (size_t)(f.stop - f.start), &tag));
        ENSURE((tag >> 3) == f.num && (tag & 7) == f.wt);
        /* onp_pb_expect agrees with the wire type */
        ENSURE(onp_pb_expect(&c, &f, f.wt, "x", &e) == 0);
        reencode(&f);
        packed(&c, &f);
        if (f.wt == ONP_WT_LEN && depth < MAX_DEPTH) {
            onp_pb_cursor sub;
            onp_pb_sub(&c, &f, &sub);
            ENSURE(sub.p == f.data && sub.end == f.data + f.len && sub.base == base);
            walk(f.data, f.len, base, total, depth + 1);
        }
    }
    if (r < 0) {
        ENSURE(e.code == ONP_ERR_FORMAT && !strcmp(e.field, "protobuf"));
        ENSURE(e.offset >= (int64_t)(p - base) && e.offset <= (int64_t)(p - base + n));
        ENSURE(e.offset <= (int64_t)total);
    } else {
        ENSURE(c.p == p + n);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* varints at the first offsets, against the reference */
    for (size_t i = 0; i < size && i < 32; i++) {
        uint64_t a = 0, b = 0;
        size_t ka = onp_pb_varint(data + i, size - i, &a);
        size_t kb = ref_varint(data + i, size - i, &b);
        ENSURE(ka == kb && (!ka || a == b));
        if (ka) ENSURE(onp_pb_varint_size(a) <= ka);
    }
    walk(data, size, data, size, 0);
    return 0;
}
