/*
 * test_wire.c — the protobuf wire primitives (src/pb/wire.h).
 *
 * Varints of every length 1..10 (including 2^64 - 1), over-long (11-byte),
 * overflowing (10th byte > 1) and truncated varints; the cursor over each
 * wire type with absolute offsets, refusing groups (3/4) and wire types 6/7,
 * field number 0, lengths past the end, truncated fixed fields, and
 * advancing only on success; sub-cursors keep file offsets; onp_pb_expect;
 * repeated scalars packed and unpacked (varint, fixed32, fixed64) with bad
 * packed lengths refused; the encoder byte for byte and in random round
 * trips, and onp_buf's hard cap.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pb/wire.h"
#include "testhelp.h"

// --- helpers -------------------------------------------------------------------

static uint64_t rng = 0xD1B54A32D192ED03u;

static uint64_t rnd64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Decode one field from bytes; returns onp_pb_next's result. */
static int next_of(const uint8_t *p, size_t n, onp_pb_field *f, onp_error *e)
{
    onp_pb_cursor c;
    onp_pb_cursor_init(&c, p, n, p, "t.bin");
    onp_error_clear(e);
    return onp_pb_next(&c, f, e);
}

/* The refusal of `p[0..n)` by onp_pb_next: code FORMAT, field "protobuf",
 * at byte `off`. */
static void check_refused(const uint8_t *p, size_t n, int64_t off, const char *what)
{
    onp_pb_field f;
    onp_error e;
    onp_pb_cursor c;
    onp_pb_cursor_init(&c, p, n, p, "t.bin");
    onp_error_clear(&e);
    int r = onp_pb_next(&c, &f, &e);
    CHECKF(r == -1, "%s: expected a refusal, got %d", what, r);
    CHECKF(e.code == ONP_ERR_FORMAT, "%s: code %d", what, (int)e.code);
    CHECKF(!strcmp(e.field, "protobuf"), "%s: field '%s'", what, e.field);
    CHECKF(e.offset == off, "%s: offset %lld, expected %lld", what, (long long)e.offset,
           (long long)off);
    CHECKF(!strcmp(e.file, "t.bin"), "%s: file '%s'", what, e.file);
    CHECKF(c.p == p, "%s: the cursor moved on failure", what);
}

// --- varints ---------------------------------------------------------------------

static void test_varint_lengths(void)
{
    /* for k = 1..10: the smallest and largest values taking k bytes */
    for (int k = 1; k <= 10; k++) {
        uint64_t lo = k == 1 ? 0 : (uint64_t)1 << (7 * (k - 1));
        uint64_t hi = k == 10 ? UINT64_MAX : ((uint64_t)1 << (7 * k)) - 1;
        uint64_t vals[2] = {lo, hi};
        for (int j = 0; j < 2; j++) {
            uint64_t v = vals[j];
            uint8_t bytes[16];
            int n = 0;
            uint64_t x = v;
            do { /* reference encoder, written here */
                bytes[n] = (uint8_t)(x & 0x7f);
                x >>= 7;
                if (x) bytes[n] |= 0x80;
                n++;
            } while (x);
            CHECKF(n == k, "k=%d value %llu took %d bytes", k, (unsigned long long)v, n);
            CHECK(onp_pb_varint_size(v) == (size_t)k);
            uint64_t out = 0x5555;
            CHECKF(onp_pb_varint(bytes, (size_t)n, &out) == (size_t)k && out == v,
                   "decode of the %d-byte varint %llu", k, (unsigned long long)v);
            /* with trailing bytes: still k consumed */
            bytes[n] = 0xff;
            bytes[n + 1] = 0x01;
            CHECK(onp_pb_varint(bytes, (size_t)n + 2, &out) == (size_t)k && out == v);
            /* the encoder writes the same bytes */
            onp_buf b = {0};
            CHECK(onp_pb_put_varint(&b, v) == 0);
            CHECK(b.n == (size_t)n && !memcmp(b.p, bytes, (size_t)n));
            onp_buf_free(&b);
            /* cut one byte short: truncated */
            CHECK(onp_pb_varint(bytes, (size_t)n - 1, &out) == 0);
        }
    }
    static const uint8_t max10[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    uint64_t out = 0;
    CHECK(onp_pb_varint(max10, 10, &out) == 10 && out == UINT64_MAX);
    static const uint8_t b300[2] = {0xac, 0x02};
    CHECK(onp_pb_varint(b300, 2, &out) == 2 && out == 300);
}

static void test_varint_refused(void)
{
    uint64_t out = 77;
    /* 11 bytes: ten continuation bytes then a terminator */
    static const uint8_t eleven[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                       0x80, 0x80, 0x80, 0x80, 0x00};
    CHECK(onp_pb_varint(eleven, 11, &out) == 0);
    /* 10th byte 2..0x7f: more than 64 bits */
    static const uint8_t over[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    CHECK(onp_pb_varint(over, 10, &out) == 0);
    static const uint8_t over7f[10] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f};
    CHECK(onp_pb_varint(over7f, 10, &out) == 0);
    /* 10th byte with the continuation bit set */
    static const uint8_t cont[11] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0x81, 0x00};
    CHECK(onp_pb_varint(cont, 11, &out) == 0);
    /* a 10th byte of 0 or 1 is fine even when non-canonical */
    static const uint8_t zero10[10] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    CHECK(onp_pb_varint(zero10, 10, &out) == 10 && out == 0);
    /* truncated: empty, lone continuation bytes */
    static const uint8_t trunc[3] = {0xff, 0xff, 0xff};
    CHECK(onp_pb_varint(trunc, 0, &out) == 0);
    CHECK(onp_pb_varint(trunc, 1, &out) == 0);
    CHECK(onp_pb_varint(trunc, 3, &out) == 0);
    CHECK(out == 0); /* untouched by the failures since the last success */
}

// --- the cursor ----------------------------------------------------------------

static void test_each_wire_type(void)
{
    /* field 1 varint 150; field 2 fixed64; field 3 "abc"; field 4 fixed32;
     * field 536870911 (largest) varint 1 */
    static const uint8_t msg[] = {
        0x08, 0x96, 0x01,                                     /* 0: 1 varint */
        0x11, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* 3: 2 fixed64 */
        0x1a, 0x03, 'a',  'b',  'c',                          /* 12: 3 LEN */
        0x25, 0xef, 0xbe, 0xad, 0xde,                         /* 17: 4 fixed32 */
        0xf8, 0xff, 0xff, 0xff, 0x0f, 0x01,                   /* 22: 2^29-1 varint */
    };
    onp_pb_cursor c;
    onp_pb_field f;
    onp_error e;
    onp_error_clear(&e);
    onp_pb_cursor_init(&c, msg, sizeof msg, msg, "m.bin");
    CHECK(onp_pb_next(&c, &f, &e) == 1);
    CHECK(f.num == 1 && f.wt == ONP_WT_VARINT && f.v == 150);
    CHECK(f.start == msg && f.stop == msg + 3 && c.p == msg + 3);
    CHECK(onp_pb_next(&c, &f, &e) == 1);
    CHECK(f.num == 2 && f.wt == ONP_WT_I64 && f.v == 0x0102030405060708ull);
    CHECK(f.start == msg + 3 && f.stop == msg + 12);
    CHECK(onp_pb_next(&c, &f, &e) == 1);
    CHECK(f.num == 3 && f.wt == ONP_WT_LEN && f.len == 3 && f.data == msg + 14);
    CHECK(!memcmp(f.data, "abc", 3) && f.stop == msg + 17);
    CHECK(onp_pb_off(&c, f.data) == 14);
    CHECK(onp_pb_next(&c, &f, &e) == 1);
    CHECK(f.num == 4 && f.wt == ONP_WT_I32 && f.v == 0xdeadbeefu);
    CHECK(onp_pb_next(&c, &f, &e) == 1);
    CHECK(f.num == 536870911u && f.wt == ONP_WT_VARINT && f.v == 1);
    CHECK(onp_pb_next(&c, &f, &e) == 0);
    CHECK(onp_pb_next(&c, &f, &e) == 0); /* stays at the end */
    CHECK(e.code == ONP_ERR_NONE);
    /* an empty message */
    onp_pb_cursor_init(&c, msg, 0, msg, NULL);
    CHECK(onp_pb_next(&c, &f, &e) == 0);
    /* an empty LEN field */
    static const uint8_t empty_len[] = {0x0a, 0x00};
    CHECK(next_of(empty_len, 2, &f, &e) == 1 && f.len == 0 && f.wt == ONP_WT_LEN);
}

static void test_cursor_refusals(void)
{
    /* wire types 3, 4 (groups), 6, 7 */
    for (uint8_t wt = 3; wt <= 7; wt++) {
        if (wt == 5) continue;
        uint8_t m[4] = {0x08, 0x01, (uint8_t)((5 << 3) | wt), 0x00};
        char what[32];
        snprintf(what, sizeof what, "wire type %u", wt);
        check_refused(m + 2, 2, 0, what);
        /* after a good field, the offset is absolute */
        onp_pb_cursor c;
        onp_pb_field f;
        onp_error e;
        onp_error_clear(&e);
        onp_pb_cursor_init(&c, m, 4, m, "t.bin");
        CHECK(onp_pb_next(&c, &f, &e) == 1);
        CHECK(onp_pb_next(&c, &f, &e) == -1 && e.offset == 2 && c.p == m + 2);
    }
    /* field number 0, with each wire type */
    static const uint8_t zero_v[] = {0x00, 0x01};
    static const uint8_t zero_len[] = {0x02, 0x00};
    check_refused(zero_v, 2, 0, "field 0 varint");
    check_refused(zero_len, 2, 0, "field 0 LEN");
    /* field number 2^29 (one past the largest) */
    static const uint8_t big[] = {0x80, 0x80, 0x80, 0x80, 0x10, 0x00};
    check_refused(big, sizeof big, 0, "field 2^29");
    /* a tag longer than 10 bytes, and a truncated tag */
    static const uint8_t long_tag[] = {0x88, 0x80, 0x80, 0x80, 0x80, 0x80,
                                       0x80, 0x80, 0x80, 0x80, 0x00};
    check_refused(long_tag, sizeof long_tag, 0, "11-byte tag");
    static const uint8_t trunc_tag[] = {0x88};
    check_refused(trunc_tag, 1, 0, "truncated tag");
    /* LEN longer than what remains: 5 claimed, 3 present (offset: the payload) */
    static const uint8_t len_long[] = {0x0a, 0x05, 'a', 'b', 'c'};
    check_refused(len_long, sizeof len_long, 2, "LEN past the end");
    /* LEN of 2^64-1 (the check must not overflow) */
    static const uint8_t len_huge[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 0x01, 'x'};
    check_refused(len_huge, sizeof len_huge, 11, "LEN 2^64-1");
    /* truncated length, truncated varint value, over-long varint value */
    static const uint8_t len_trunc[] = {0x0a, 0x80};
    check_refused(len_trunc, sizeof len_trunc, 1, "truncated length");
    static const uint8_t val_trunc[] = {0x08, 0xff, 0xff};
    check_refused(val_trunc, sizeof val_trunc, 1, "truncated varint value");
    static const uint8_t val_over[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 0x02};
    check_refused(val_over, sizeof val_over, 1, "varint value 10th byte 2");
    static const uint8_t val_missing[] = {0x08};
    check_refused(val_missing, 1, 1, "varint value missing");
    /* truncated fixed32 / fixed64 */
    static const uint8_t f32_trunc[] = {0x0d, 1, 2, 3};
    check_refused(f32_trunc, sizeof f32_trunc, 1, "truncated fixed32");
    static const uint8_t f64_trunc[] = {0x09, 1, 2, 3, 4, 5, 6, 7};
    check_refused(f64_trunc, sizeof f64_trunc, 1, "truncated fixed64");
    /* the cursor is bounded by its own end, not by the buffer */
    static const uint8_t two[] = {0x08, 0x01, 0x08, 0x02};
    onp_pb_cursor c;
    onp_pb_field f;
    onp_error e;
    onp_pb_cursor_init(&c, two, 3, two, NULL);
    CHECK(onp_pb_next(&c, &f, &e) == 1 && f.v == 1);
    CHECK(onp_pb_next(&c, &f, &e) == -1); /* 0x08 then the end */
}

static void test_sub_cursor_offsets(void)
{
    /* 3 filler bytes, then field 2 { field 1 = 7, field 3 { field 4 fixed32 } } */
    static const uint8_t file[] = {
        0x08, 0x01, 0x00,                         /* junk we skip: starts at 0 */
        0x12, 0x09,                               /* 3: field 2 LEN 9 */
        0x08, 0x07,                               /* 5: field 1 = 7 */
        0x1a, 0x05, 0x25, 0x01, 0x02, 0x03, 0x04, /* 7: field 3 LEN 5 { field 4 fixed32 } */
        0x00                                      /* 14: past the message: never read */
    };
    onp_pb_cursor top, sub, sub2;
    onp_pb_field f;
    onp_error e;
    onp_error_clear(&e);
    onp_pb_cursor_init(&top, file + 3, 11, file, "f.bin");
    CHECK(onp_pb_next(&top, &f, &e) == 1 && f.num == 2 && f.len == 9);
    onp_pb_sub(&top, &f, &sub);
    CHECK(sub.base == file && sub.p == file + 5 && sub.end == file + 14);
    CHECK(onp_pb_next(&sub, &f, &e) == 1 && f.num == 1 && f.v == 7);
    CHECK(onp_pb_off(&sub, f.start) == 5);
    CHECK(onp_pb_next(&sub, &f, &e) == 1 && f.num == 3 && f.len == 5);
    onp_pb_sub(&sub, &f, &sub2);
    CHECK(onp_pb_next(&sub2, &f, &e) == 1 && f.num == 4 && f.v == 0x04030201u);
    CHECK(onp_pb_off(&sub2, f.start) == 9);
    CHECK(onp_pb_next(&sub2, &f, &e) == 0);
    CHECK(onp_pb_next(&sub, &f, &e) == 0);
    CHECK(onp_pb_next(&top, &f, &e) == 0);
    /* an error inside a sub-message reports the absolute offset */
    static const uint8_t bad[] = {0x08, 0x01, 0x12, 0x02, 0x0f, 0x00};
    onp_pb_cursor_init(&top, bad, sizeof bad, bad, "b.bin");
    CHECK(onp_pb_next(&top, &f, &e) == 1);
    CHECK(onp_pb_next(&top, &f, &e) == 1 && f.len == 2);
    onp_pb_sub(&top, &f, &sub);
    CHECK(onp_pb_next(&sub, &f, &e) == -1);
    CHECK(e.offset == 4 && !strcmp(e.file, "b.bin"));
}

static void test_expect(void)
{
    static const uint8_t m[] = {0x08, 0x01, 0x12, 0x01, 'x'};
    onp_pb_cursor c;
    onp_pb_field f;
    onp_error e;
    onp_error_clear(&e);
    onp_pb_cursor_init(&c, m, sizeof m, m, "x.onnx");
    CHECK(onp_pb_next(&c, &f, &e) == 1);
    CHECK(onp_pb_expect(&c, &f, ONP_WT_VARINT, "Thing.a", &e) == 0);
    CHECK(onp_pb_next(&c, &f, &e) == 1);
    CHECK(onp_pb_expect(&c, &f, ONP_WT_VARINT, "Thing.b", &e) == -1);
    CHECK(e.code == ONP_ERR_FORMAT && !strcmp(e.field, "Thing.b") && e.offset == 2);
    CHECK(!strcmp(e.file, "x.onnx"));
    CHECK(strstr(e.msg, "length-delimited") && strstr(e.msg, "varint"));
    CHECK(onp_pb_expect(&c, &f, ONP_WT_LEN, "Thing.b", &e) == 0);
}

// --- repeated scalars ----------------------------------------------------------

/* Parse the single field in p[0..n), count as `kind`, read; returns the count
 * or -1 on refusal (error in *e). */
static long count_read(const uint8_t *p, size_t n, uint32_t kind, uint64_t *out, onp_error *e)
{
    onp_pb_cursor c;
    onp_pb_field f;
    onp_error_clear(e);
    onp_pb_cursor_init(&c, p, n, p, "r.bin");
    if (onp_pb_next(&c, &f, e) != 1) return -2;
    size_t k = 99;
    if (onp_pb_packed_count(&c, &f, kind, &k, e)) return -1;
    onp_pb_packed_read(&f, kind, out);
    return (long)k;
}

static void test_packed_varint(void)
{
    uint64_t out[8];
    onp_error e;
    /* packed: 1, 300, 2^64-1, 0 */
    static const uint8_t packed[] = {0x0a, 0x0e, 0x01, 0xac, 0x02, 0xff, 0xff, 0xff,
                                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00};
    CHECK(count_read(packed, sizeof packed, ONP_WT_VARINT, out, &e) == 4);
    CHECK(out[0] == 1 && out[1] == 300 && out[2] == UINT64_MAX && out[3] == 0);
    /* unpacked: one per tag */
    static const uint8_t one[] = {0x08, 0xac, 0x02};
    CHECK(count_read(one, sizeof one, ONP_WT_VARINT, out, &e) == 1 && out[0] == 300);
    /* empty packed */
    static const uint8_t none[] = {0x0a, 0x00};
    CHECK(count_read(none, sizeof none, ONP_WT_VARINT, out, &e) == 0);
    /* packed with a truncated last element: refused at that element */
    static const uint8_t trunc[] = {0x0a, 0x03, 0x01, 0x02, 0x80};
    CHECK(count_read(trunc, sizeof trunc, ONP_WT_VARINT, out, &e) == -1);
    CHECK(e.code == ONP_ERR_FORMAT && e.offset == 4);
    /* packed with an overflowing element */
    static const uint8_t over[] = {0x0a, 0x0a, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    CHECK(count_read(over, sizeof over, ONP_WT_VARINT, out, &e) == -1 && e.offset == 2);
    /* a wire type that is neither the element's nor LEN */
    static const uint8_t wrong[] = {0x0d, 1, 2, 3, 4};
    CHECK(count_read(wrong, sizeof wrong, ONP_WT_VARINT, out, &e) == -1);
    CHECK(e.code == ONP_ERR_FORMAT && e.offset == 0);
    static const uint8_t wrong64[] = {0x09, 1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(count_read(wrong64, sizeof wrong64, ONP_WT_VARINT, out, &e) == -1);
}

static void test_packed_fixed(void)
{
    uint64_t out[8];
    onp_error e;
    /* packed fixed32: 3 elements */
    static const uint8_t p32[] = {0x0a, 0x0c, 0x01, 0x00, 0x00, 0x00, 0xff,
                                  0xff, 0xff, 0xff, 0x00, 0x00, 0x80, 0x3f};
    CHECK(count_read(p32, sizeof p32, ONP_WT_I32, out, &e) == 3);
    CHECK(out[0] == 1 && out[1] == 0xffffffffu && out[2] == 0x3f800000u); /* zero-extended */
    /* unpacked fixed32 */
    static const uint8_t u32[] = {0x0d, 0x00, 0x00, 0xc0, 0x7f};
    CHECK(count_read(u32, sizeof u32, ONP_WT_I32, out, &e) == 1 && out[0] == 0x7fc00000u);
    /* packed fixed64: 2 elements */
    static const uint8_t p64[] = {0x0a, 0x10, 1,    2,    3,    4,    5,    6,    7,
                                  8,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    CHECK(count_read(p64, sizeof p64, ONP_WT_I64, out, &e) == 2);
    CHECK(out[0] == 0x0807060504030201ull && out[1] == UINT64_MAX);
    /* unpacked fixed64 */
    static const uint8_t u64[] = {0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    CHECK(count_read(u64, sizeof u64, ONP_WT_I64, out, &e) == 1 && out[0] == 0x3ff0000000000000ull);
    /* lengths that are not a multiple of the width: refused, offset of the payload */
    for (uint8_t len = 1; len < 16; len++) {
        uint8_t m[2 + 16] = {0x0a, len};
        long k32 = count_read(m, 2u + len, ONP_WT_I32, out, &e);
        if (len % 4) {
            CHECKF(k32 == -1 && e.code == ONP_ERR_FORMAT && e.offset == 2,
                   "packed fixed32 of %u bytes", len);
        } else {
            CHECKF(k32 == len / 4, "packed fixed32 of %u bytes: %ld", len, k32);
        }
        long k64 = count_read(m, 2u + len, ONP_WT_I64, out, &e);
        if (len % 8) {
            CHECKF(k64 == -1 && e.code == ONP_ERR_FORMAT && e.offset == 2,
                   "packed fixed64 of %u bytes", len);
        } else {
            CHECKF(k64 == len / 8, "packed fixed64 of %u bytes: %ld", len, k64);
        }
    }
    /* the wrong fixed width unpacked */
    CHECK(count_read(u64, sizeof u64, ONP_WT_I32, out, &e) == -1);
    CHECK(count_read(u32, sizeof u32, ONP_WT_I64, out, &e) == -1);
    /* a varint where fixed32 elements belong */
    static const uint8_t v[] = {0x08, 0x01};
    CHECK(count_read(v, sizeof v, ONP_WT_I32, out, &e) == -1 && e.code == ONP_ERR_FORMAT);
}

/* A repeated field split over several occurrences, packed and unpacked, read
 * the way the decoders do: count every occurrence, then read them in turn. */
static void test_repeated_mixed(void)
{
    onp_buf b = {0};
    uint64_t want[] = {5, 1u << 20, 7, UINT64_MAX, 0, 42};
    /* 5 unpacked; {2^20, 7} packed; 2^64-1 unpacked; {0, 42} packed */
    onp_pb_put_uint(&b, 3, want[0]);
    onp_buf pk = {0};
    onp_pb_put_varint(&pk, want[1]);
    onp_pb_put_varint(&pk, want[2]);
    onp_pb_put_len(&b, 3, pk.p, pk.n);
    onp_buf_free(&pk);
    onp_pb_put_uint(&b, 9, 1234); /* another field in between */
    onp_pb_put_uint(&b, 3, want[3]);
    onp_pb_put_varint(&pk, want[4]);
    onp_pb_put_varint(&pk, want[5]);
    onp_pb_put_len(&b, 3, pk.p, pk.n);
    onp_buf_free(&pk);
    CHECK(!b.failed);
    onp_pb_cursor c;
    onp_pb_field f;
    onp_error e;
    onp_error_clear(&e);
    size_t total = 0;
    onp_pb_cursor_init(&c, b.p, b.n, b.p, NULL);
    while (onp_pb_next(&c, &f, &e) == 1) {
        size_t k;
        if (f.num != 3) continue;
        CHECK(onp_pb_packed_count(&c, &f, ONP_WT_VARINT, &k, &e) == 0);
        total += k;
    }
    CHECK(total == 6);
    uint64_t got[6] = {0};
    size_t at = 0;
    onp_pb_cursor_init(&c, b.p, b.n, b.p, NULL);
    while (onp_pb_next(&c, &f, &e) == 1) {
        size_t k;
        if (f.num != 3) continue;
        onp_pb_packed_count(&c, &f, ONP_WT_VARINT, &k, &e);
        if (at + k <= 6) onp_pb_packed_read(&f, ONP_WT_VARINT, got + at);
        at += k;
    }
    CHECK(at == 6 && !memcmp(got, want, sizeof want));
    onp_buf_free(&b);
}

// --- encoder -----------------------------------------------------------------

static void test_encoder_bytes(void)
{
    onp_buf b = {0};
    CHECK(onp_pb_put_uint(&b, 1, 150) == 0);
    CHECK(b.n == 3 && !memcmp(b.p, "\x08\x96\x01", 3));
    onp_buf_free(&b);
    CHECK(onp_pb_put_len(&b, 2, "testing", 7) == 0);
    CHECK(b.n == 9 && !memcmp(b.p, "\x12\x07testing", 9));
    onp_buf_free(&b);
    CHECK(onp_pb_put_tag(&b, 536870911u, ONP_WT_I32) == 0);
    CHECK(b.n == 5 && !memcmp(b.p, "\xfd\xff\xff\xff\x0f", 5));
    onp_buf_free(&b);
    CHECK(onp_pb_put_header(&b, 16, 300) == 0);
    CHECK(b.n == 4 && !memcmp(b.p, "\x82\x01\xac\x02", 4));
    onp_buf_free(&b);
    CHECK(onp_pb_put_len(&b, 5, NULL, 0) == 0);
    CHECK(b.n == 2 && !memcmp(b.p, "\x2a\x00", 2));
    onp_buf_free(&b);
    CHECK(onp_pb_put_varint(&b, 0) == 0 && b.n == 1 && b.p[0] == 0);
    onp_buf_free(&b);
    for (int k = 0; k < 64; k++) {
        uint64_t v = (uint64_t)1 << k;
        CHECK(onp_pb_varint_size(v) == (size_t)(k / 7 + 1));
    }
}

static void test_encoder_round_trip(void)
{
    enum { N = 2000 };
    static uint32_t nums[N], wts[N];
    static uint64_t vals[N];
    static uint8_t payload[300];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i * 7 + 3);
    onp_buf b = {0};
    for (int i = 0; i < N; i++) {
        uint64_t r = rnd64();
        nums[i] = (uint32_t)(r % 536870911u) + 1;
        static const uint32_t kinds[4] = {ONP_WT_VARINT, ONP_WT_I64, ONP_WT_LEN, ONP_WT_I32};
        wts[i] = kinds[(r >> 32) % 4];
        uint64_t v = rnd64() >> (rnd64() % 64);
        if (wts[i] == ONP_WT_I32) v &= 0xffffffffu;
        if (wts[i] == ONP_WT_LEN) v %= sizeof payload;
        vals[i] = v;
        switch (wts[i]) {
        case ONP_WT_VARINT: onp_pb_put_uint(&b, nums[i], v); break;
        case ONP_WT_LEN: onp_pb_put_len(&b, nums[i], payload, (size_t)v); break;
        case ONP_WT_I64: {
            uint8_t le[8];
            for (int k = 0; k < 8; k++) le[k] = (uint8_t)(v >> (8 * k));
            onp_pb_put_tag(&b, nums[i], ONP_WT_I64);
            onp_buf_append(&b, le, 8);
            break;
        }
        default: {
            uint8_t le[4];
            for (int k = 0; k < 4; k++) le[k] = (uint8_t)(v >> (8 * k));
            onp_pb_put_tag(&b, nums[i], ONP_WT_I32);
            onp_buf_append(&b, le, 4);
            break;
        }
        }
    }
    CHECK(!b.failed);
    onp_pb_cursor c;
    onp_pb_field f;
    onp_error e;
    onp_error_clear(&e);
    onp_pb_cursor_init(&c, b.p, b.n, b.p, NULL);
    int bad = 0, i = 0, r;
    while ((r = onp_pb_next(&c, &f, &e)) == 1 && i < N) {
        if (f.num != nums[i] || f.wt != wts[i]) bad++;
        if (f.wt == ONP_WT_LEN) {
            if (f.len != vals[i] || (f.len && memcmp(f.data, payload, f.len))) bad++;
        } else if (f.v != vals[i]) {
            bad++;
        }
        i++;
    }
    CHECKF(r == 0 && i == N && bad == 0, "round trip: %d fields read, %d wrong, r=%d", i, bad, r);
    onp_buf_free(&b);
}

static void test_buf_cap(void)
{
    onp_buf b;
    onp_buf_init(&b, 8);
    CHECK(onp_pb_put_len(&b, 1, "abcdef", 6) == 0 && b.n == 8);
    CHECK(onp_pb_put_uint(&b, 1, 1) == -1);
    CHECK(b.failed && b.p == NULL && b.n == 0);
    CHECK(onp_pb_put_varint(&b, 1) == -1); /* sticky */
    onp_buf_free(&b);
    onp_buf_free(&b); /* twice is fine */
    onp_buf_init(&b, 3);
    CHECK(onp_pb_put_len(&b, 1, "abcdef", 6) == -1 && b.failed);
    onp_buf_free(&b);
    onp_buf_free(NULL);
}

/* Appending nothing to a fresh buffer: fine, and no NULL + 0 pointer
 * arithmetic (undefined behaviour; UBSan builds abort).  In a child process
 * so an abort shows as a failed check. */
static void test_buf_empty_append(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        onp_buf b = {0};
        if (onp_buf_append(&b, "", 0) != 0 || b.n != 0 || b.failed) _exit(1);
        if (onp_buf_append(&b, "ab", 2) != 0 || b.n != 2 || memcmp(b.p, "ab", 2)) _exit(1);
        onp_buf_free(&b);
        _exit(0);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "zero-length append to an empty onp_buf: status %d (it must succeed, without "
           "computing NULL + 0)",
           st);
}

/* onp_shell_quote: each case the word a POSIX shell reads back as s
 * (checked against /bin/sh itself below). */
static void test_shell_quote(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"bundle/test_data_set_0", "bundle/test_data_set_0"},
        {"my bundle", "'my bundle'"},
        {"it's", "'it'\\''s'"},
        {"$HOME`x`\"*", "'$HOME`x`\"*'"},
        {"", "''"},
        {"a;b", "'a;b'"},
        {"~user", "'~user'"},
        {"v=1,2:3@4%5+6-7.8_9", "v=1,2:3@4%5+6-7.8_9"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        onp_shell_quote(cases[i].in, buf, sizeof buf);
        CHECKF(!strcmp(buf, cases[i].out), "'%s' -> %s, expected %s", cases[i].in, buf,
               cases[i].out);
        /* the shell reads the word back as the input */
        char cmd[256], got[64] = "";
        snprintf(cmd, sizeof cmd, "printf '%%s' %s", buf);
        FILE *p = popen(cmd, "r");
        if (p) {
            size_t n = fread(got, 1, sizeof got - 1, p);
            got[n] = '\0';
            pclose(p);
        }
        CHECKF(!strcmp(got, cases[i].in), "sh read %s back as '%s'", buf, got);
    }
    /* too small: "" rather than a cut word; the exact fit works */
    CHECK(!strcmp(onp_shell_quote("my bundle", buf, 11), "") && buf[0] == '\0');
    CHECK(!strcmp(onp_shell_quote("my bundle", buf, 12), "'my bundle'"));
    CHECK(!strcmp(onp_shell_quote("abc", buf, 3), "") &&
          !strcmp(onp_shell_quote("abc", buf, 4), "abc"));
}

TEST_MAIN(test_varint_lengths, test_varint_refused, test_each_wire_type, test_cursor_refusals,
          test_sub_cursor_offsets, test_expect, test_packed_varint, test_packed_fixed,
          test_repeated_mixed, test_encoder_bytes, test_encoder_round_trip, test_buf_cap,
          test_buf_empty_append, test_shell_quote)
