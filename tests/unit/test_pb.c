/*
 * test_pb.c — ONNX TensorProto files (.pb): onp_pb_tensor_decode,
 * onp_pb_tensor_encode, onp_tfile_read and onp_tfile_write (src/tfile/pb.c,
 * src/tfile/tfile.c over src/model/tensorproto.c).
 *
 * Round trips read -> write -> read for every dtype, with raw_data and with
 * the typed fields, ranks 0..4 including 0-element dims, in memory and
 * through files; TensorProtos encoded by hand here (typed fields packed,
 * unpacked and split over several occurrences, float16 in int32_data one
 * value per element, every integer width at its limits); malformed tensors,
 * each checked for its error code, the field it names and the byte offset;
 * and the atomic writer (no file left by a failed write, none in a missing
 * folder, an existing file kept intact).
 */
#include <dirent.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnxparity/tfile.h"
#include "pb/wire.h"
#include "pbenc.h"
#include "testhelp.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* TensorProto field numbers, from onnx.proto (written out here, not taken
 * from the code under test). */
enum {
    F_DIMS = 1,
    F_DATA_TYPE = 2,
    F_SEGMENT = 3,
    F_FLOAT = 4,
    F_INT32 = 5,
    F_STRING = 6,
    F_INT64 = 7,
    F_NAME = 8,
    F_RAW = 9,
    F_DOUBLE = 10,
    F_UINT64 = 11,
    F_DOC = 12,
    F_EXTERNAL = 13,
    F_LOCATION = 14
};

// --- helpers -------------------------------------------------------------------

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint64_t rnd64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static char tmpdir[64];

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/onp_test_pb_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        exit(2);
    }
}

static void remove_tmpdir(void)
{
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

/* Number of entries in `dir` (excluding . and ..), or -1. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    closedir(d);
    return n;
}

static int file_exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Read a whole file into a malloc'd buffer. */
static uint8_t *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
    if (b && len > 0 && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)(len > 0 ? len : 0);
    return b;
}

static int spit(const char *p, const void *d, size_t n)
{
    FILE *f = fopen(p, "wb");
    if (!f) return -1;
    size_t w = n ? fwrite(d, 1, n, f) : 0;
    return fclose(f) == 0 && w == n ? 0 : -1;
}

static const char *const string_pool[] = {"", "a", "hello, world", "\xc3\xbc\xc3\xb1", "x\0y"};

/* A tensor of dtype `dt` and the given shape with random contents (bools
 * 0/1, strings from the pool, one with a NUL inside). */
static int make_tensor(onp_tensor *t, int32_t dt, int rank, const int64_t *dims)
{
    onp_error e;
    if (dt == ONP_STRING) {
        int64_t count = 1;
        for (int i = 0; i < rank; i++) count *= dims[i];
        size_t *lens = calloc((size_t)count + 1, sizeof *lens);
        for (int64_t i = 0; i < count; i++) lens[i] = i % 5 == 4 ? 3 : strlen(string_pool[i % 5]);
        int rc = onp_tensor_alloc_strings(t, rank, dims, lens, &e);
        for (int64_t i = 0; !rc && i < count; i++)
            if (lens[i]) memcpy(onp_tensor_string_at(t, i), string_pool[i % 5], lens[i]);
        free(lens);
        return rc;
    }
    if (onp_tensor_alloc(t, dt, rank, dims, &e)) return -1;
    uint8_t *p = t->data;
    for (size_t i = 0; i < t->nbytes; i++) p[i] = (uint8_t)(rnd64() >> 24);
    if (dt == ONP_BOOL)
        for (size_t i = 0; i < t->nbytes; i++) p[i] &= 1;
    return 0;
}

/* The typed field onnx.proto assigns to each dtype. */
static int typed_field_of(int32_t dt)
{
    switch (dt) {
    case ONP_FLOAT:
    case ONP_COMPLEX64: return F_FLOAT;
    case ONP_DOUBLE:
    case ONP_COMPLEX128: return F_DOUBLE;
    case ONP_INT64: return F_INT64;
    case ONP_UINT32:
    case ONP_UINT64: return F_UINT64;
    case ONP_STRING: return F_STRING;
    default: return F_INT32;
    }
}

/* Which top-level fields an encoding holds: a bit per field number. */
static uint32_t fields_present(const onp_buf *b)
{
    onp_pb_cursor c;
    onp_pb_field f;
    onp_error e;
    uint32_t mask = 0;
    onp_pb_cursor_init(&c, b->p, b->n, b->p, NULL);
    while (onp_pb_next(&c, &f, &e) == 1)
        if (f.num < 32) mask |= 1u << f.num;
    return mask;
}

static int decode_buf(const onp_buf *b, int64_t base, onp_tensor *t, onp_error *e)
{
    onp_error_clear(e);
    return onp_pb_tensor_decode(b->p ? b->p : (const uint8_t *)"", b->n, "h.pb", base, t, e);
}

/* The decode of `b` fails with `code`, naming `field`, at byte `off` (-2:
 * don't check); with a base offset of 1000 the offset moves by 1000. */
static void expect_error(const onp_buf *b, onp_errcode code, const char *field, int64_t off,
                         const char *what)
{
    onp_tensor t;
    onp_error e;
    int rc = decode_buf(b, 0, &t, &e);
    CHECKF(rc == -1, "%s: decoded", what);
    if (rc == 0) {
        onp_tensor_release(&t);
        return;
    }
    CHECKF(e.code == code, "%s: code %s (%s)", what, onp_errcode_name(e.code), e.msg);
    CHECKF(!strcmp(e.field, field), "%s: field '%s', expected '%s' (%s)", what, e.field, field,
           e.msg);
    CHECKF(!strcmp(e.file, "h.pb"), "%s: file '%s'", what, e.file);
    if (off != -2)
        CHECKF(e.offset == off, "%s: offset %" PRId64 ", expected %" PRId64, what, e.offset, off);
    CHECK(t.data == NULL && t.strings == NULL && t.name == NULL); /* nothing to release */
    rc = decode_buf(b, 1000, &t, &e);
    CHECK(rc == -1);
    if (off >= 0)
        CHECKF(e.offset == off + 1000, "%s: base offset not added (%" PRId64 ")", what, e.offset);
}

/* TensorProto building blocks. */
static void put_dims(onp_buf *b, int rank, const int64_t *dims)
{
    for (int i = 0; i < rank; i++) onp_pb_put_uint(b, F_DIMS, (uint64_t)dims[i]);
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* Start a tensor: dims then data_type. */
static void begin(onp_buf *b, int32_t dt, int rank, const int64_t *dims)
{
    onp_buf_init(b, 0);
    put_dims(b, rank, dims);
    onp_pb_put_uint(b, F_DATA_TYPE, (uint64_t)dt);
}

// --- round trips -------------------------------------------------------------------

static const struct {
    int rank;
    int64_t dims[4];
} shapes[] = {
    {0, {0}},    {1, {0}},       {1, {5}},          {2, {2, 3}},
    {2, {3, 0}}, {3, {2, 1, 3}}, {4, {1, 2, 0, 2}}, {4, {2, 2, 1, 3}},
};

static void test_round_trip_memory(void)
{
    int bad_eq = 0, bad_fields = 0, bad_enc = 0, n = 0;
    for (int32_t dt = 1; dt < ONP_DTYPE_COUNT; dt++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int typed = 0; typed < 2; typed++) {
                onp_tensor t, back, again;
                onp_error e;
                if (make_tensor(&t, dt, shapes[s].rank, shapes[s].dims)) {
                    bad_enc++;
                    continue;
                }
                onp_tensor_set_name(&t, "x", &e);
                onp_twrite_opts o = {0};
                o.pb_typed = typed;
                onp_buf b = {0}, b2 = {0};
                if (onp_pb_tensor_encode(&t, &o, &b, &e) || decode_buf(&b, 0, &back, &e)) {
                    fprintf(stderr, "  dt %d shape %zu typed %d: %s\n", dt, s, typed, e.msg);
                    bad_enc++;
                    onp_tensor_release(&t);
                    onp_buf_free(&b);
                    continue;
                }
                n++;
                if (!onp_tensor_equal(&t, &back) || !back.name || strcmp(back.name, "x")) bad_eq++;
                /* which field carries the data */
                uint32_t mask = fields_present(&b);
                int want = typed_field_of(dt);
                int has_raw = !!(mask & (1u << F_RAW)), has_typed = !!(mask & (1u << want));
                if (dt == ONP_STRING) {
                    if (has_raw || has_typed != (t.count > 0)) bad_fields++;
                } else if (typed) {
                    if (has_raw || has_typed != (t.count > 0)) bad_fields++;
                } else if (!has_raw || has_typed) {
                    bad_fields++;
                }
                /* again, from what was read: the same bytes */
                if (onp_pb_tensor_encode(&back, &o, &b2, &e) || b2.n != b.n ||
                    memcmp(b2.p, b.p, b.n))
                    bad_eq++;
                else if (decode_buf(&b2, 0, &again, &e) == 0) {
                    if (!onp_tensor_equal(&again, &t)) bad_eq++;
                    onp_tensor_release(&again);
                } else {
                    bad_eq++;
                }
                onp_tensor_release(&t);
                onp_tensor_release(&back);
                onp_buf_free(&b);
                onp_buf_free(&b2);
            }
    CHECKF(bad_enc == 0, "%d tensors failed to encode or decode", bad_enc);
    CHECKF(bad_eq == 0, "%d round trips changed the tensor", bad_eq);
    CHECKF(bad_fields == 0, "%d encodings used the wrong field", bad_fields);
    CHECK(n == 2 * 8 * (ONP_DTYPE_COUNT - 1));
}

static void test_round_trip_files(void)
{
    int bad = 0, n = 0;
    for (int32_t dt = 1; dt < ONP_DTYPE_COUNT; dt++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int typed = 0; typed < 2; typed++) {
                onp_tensor t, r1, r2;
                onp_error e;
                char p1[128], p2[128], name[64];
                snprintf(name, sizeof name, "t_%d_%zu_%d.pb", dt, s, typed);
                path_in(p1, sizeof p1, name);
                snprintf(name, sizeof name, "u_%d_%zu_%d.pb", dt, s, typed);
                path_in(p2, sizeof p2, name);
                if (make_tensor(&t, dt, shapes[s].rank, shapes[s].dims)) {
                    bad++;
                    continue;
                }
                onp_twrite_opts o = {0};
                o.pb_typed = typed;
                /* no name: the reader names it after the file */
                int ok =
                    onp_tfile_write(p1, &t, &o, &e) == 0 && onp_tfile_read(p1, NULL, &r1, &e) == 0;
                if (!ok) {
                    fprintf(stderr, "  %s: %s\n", p1, e.msg);
                    bad++;
                    onp_tensor_release(&t);
                    continue;
                }
                char stem[64];
                snprintf(stem, sizeof stem, "t_%d_%zu_%d", dt, s, typed);
                if (!onp_tensor_equal(&t, &r1) || !r1.name || strcmp(r1.name, stem)) bad++;
                if (onp_tfile_write(p2, &r1, &o, &e) || onp_tfile_read(p2, NULL, &r2, &e)) {
                    bad++;
                } else {
                    if (!onp_tensor_equal(&r1, &r2) || strcmp(r2.name, stem)) bad++;
                    /* r1 carried a name, t did not: r2's file holds it */
                    size_t n1, n2;
                    uint8_t *b1 = slurp(p1, &n1), *b2 = slurp(p2, &n2);
                    if (!b1 || !b2 || n2 != n1 + 2 + strlen(stem)) bad++;
                    free(b1);
                    free(b2);
                    onp_tensor_release(&r2);
                }
                n++;
                onp_tensor_release(&t);
                onp_tensor_release(&r1);
            }
    CHECKF(bad == 0, "%d file round trips failed", bad);
    CHECK(n == 2 * 8 * (ONP_DTYPE_COUNT - 1));
    /* every write left exactly its file: no temporaries */
    CHECK(count_entries(tmpdir) == 2 * n);
}

// --- hand-encoded tensors --------------------------------------------------------

static void test_typed_float_forms(void)
{
    onp_tensor t;
    onp_error e;
    onp_buf b;
    /* unpacked */
    int64_t d3[1] = {3};
    begin(&b, ONP_FLOAT, 1, d3);
    put_fixed32(&b, F_FLOAT, fbits(1.5f));
    put_fixed32(&b, F_FLOAT, fbits(-2.0f));
    put_fixed32(&b, F_FLOAT, fbits(3.25f));
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(t.dtype == ONP_FLOAT && t.rank == 1 && t.dims[0] == 3 && t.count == 3 && t.nbytes == 12);
    CHECK(((float *)t.data)[0] == 1.5f && ((float *)t.data)[1] == -2.0f &&
          ((float *)t.data)[2] == 3.25f);
    CHECK(t.name == NULL);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* split: packed {1,2}, a name, unpacked 3, packed {4}, dims packed */
    onp_buf_init(&b, 0);
    uint64_t dv[2] = {2, 2};
    put_packed_u64(&b, F_DIMS, dv, 2);
    onp_pb_put_uint(&b, F_DATA_TYPE, ONP_FLOAT);
    float a12[2] = {1, 2}, a4[1] = {4};
    put_packed_f32(&b, F_FLOAT, a12, 2);
    onp_pb_put_len(&b, F_NAME, "w", 1);
    put_fixed32(&b, F_FLOAT, fbits(3));
    onp_pb_put_len(&b, F_DOC, "doc", 3); /* ignored */
    onp_pb_put_uint(&b, 100, 7);         /* unknown field: ignored */
    put_packed_f32(&b, F_FLOAT, a4, 1);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(t.rank == 2 && t.dims[0] == 2 && t.dims[1] == 2 && t.count == 4);
    for (int i = 0; i < 4; i++) CHECK(((float *)t.data)[i] == (float)(i + 1));
    CHECK(t.name && !strcmp(t.name, "w"));
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* double: unpacked + packed */
    begin(&b, ONP_DOUBLE, 1, d3);
    put_fixed64(&b, F_DOUBLE, dbits(0.1));
    onp_pb_put_header(&b, F_DOUBLE, 16);
    uint64_t u2[2] = {dbits(-1e300), dbits(5e-324)};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 8; k++) {
            uint8_t c = (uint8_t)(u2[i] >> (8 * k));
            onp_buf_append(&b, &c, 1);
        }
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(((double *)t.data)[0] == 0.1 && ((double *)t.data)[1] == -1e300 &&
          ((double *)t.data)[2] == 5e-324);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* complex64: two floats per element */
    int64_t d2[1] = {2};
    begin(&b, ONP_COMPLEX64, 1, d2);
    float c4[4] = {1, -1, 2, -2};
    put_packed_f32(&b, F_FLOAT, c4, 4);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(t.nbytes == 16 && !memcmp(t.data, c4, 16));
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* complex128: two doubles per element */
    int64_t d1[1] = {1};
    begin(&b, ONP_COMPLEX128, 1, d1);
    put_fixed64(&b, F_DOUBLE, dbits(3.5));
    put_fixed64(&b, F_DOUBLE, dbits(-4.5));
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(t.nbytes == 16 && ((double *)t.data)[0] == 3.5 && ((double *)t.data)[1] == -4.5);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* complex64 with one float per element: refused */
    begin(&b, ONP_COMPLEX64, 1, d2);
    size_t at = b.n;
    put_packed_f32(&b, F_FLOAT, c4, 2);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.float_data", (int64_t)at, "complex64 short");
    onp_buf_free(&b);
}

static void test_typed_integers(void)
{
    onp_tensor t;
    onp_error e;
    onp_buf b;
    int64_t d4[1] = {4}, d2[1] = {2}, d3[1] = {3};
    /* int64: packed {-5, 0}, unpacked INT64_MIN, INT64_MAX */
    begin(&b, ONP_INT64, 1, d4);
    uint64_t v2[2] = {(uint64_t)-5, 0};
    put_packed_u64(&b, F_INT64, v2, 2);
    onp_pb_put_uint(&b, F_INT64, (uint64_t)INT64_MIN);
    onp_pb_put_uint(&b, F_INT64, (uint64_t)INT64_MAX);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    int64_t *i64 = t.data;
    CHECK(i64[0] == -5 && i64[1] == 0 && i64[2] == INT64_MIN && i64[3] == INT64_MAX);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* int32: -1 sign-extended (10 bytes), packed {INT32_MIN, INT32_MAX} */
    begin(&b, ONP_INT32, 1, d3);
    onp_pb_put_uint(&b, F_INT32, (uint64_t)(int64_t)-1);
    uint64_t v32[2] = {(uint64_t)(int64_t)INT32_MIN, (uint64_t)INT32_MAX};
    put_packed_u64(&b, F_INT32, v32, 2);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    int32_t *i32 = t.data;
    CHECK(i32[0] == -1 && i32[1] == INT32_MIN && i32[2] == INT32_MAX);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* the small integer types travel in int32_data */
    struct {
        int32_t dt;
        int64_t in[2];
        uint8_t out[4]; /* little-endian element bytes */
        size_t size;
    } small[] = {
        {ONP_INT8, {-128, 127}, {0x80, 0x7f}, 1},
        {ONP_UINT8, {255, 0}, {0xff, 0x00}, 1},
        {ONP_INT16, {-32768, 32767}, {0x00, 0x80, 0xff, 0x7f}, 2},
        {ONP_UINT16, {65535, 1}, {0xff, 0xff, 0x01, 0x00}, 2},
        {ONP_BOOL, {0, 5}, {0, 1}, 1}, /* any non-zero is true */
    };
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        begin(&b, small[i].dt, 1, d2);
        uint64_t v[2] = {(uint64_t)small[i].in[0], (uint64_t)small[i].in[1]};
        put_packed_u64(&b, F_INT32, v, 2);
        int rc = decode_buf(&b, 0, &t, &e);
        CHECKF(rc == 0, "dtype %d: %s", small[i].dt, e.msg);
        if (!rc) {
            CHECKF(t.nbytes == 2 * small[i].size && !memcmp(t.data, small[i].out, t.nbytes),
                   "dtype %d values", small[i].dt);
            onp_tensor_release(&t);
        }
        onp_buf_free(&b);
    }
    /* uint32 and uint64 travel in uint64_data */
    begin(&b, ONP_UINT32, 1, d2);
    onp_pb_put_uint(&b, F_UINT64, 0xffffffffu);
    onp_pb_put_uint(&b, F_UINT64, 7);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(((uint32_t *)t.data)[0] == 0xffffffffu && ((uint32_t *)t.data)[1] == 7);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    begin(&b, ONP_UINT64, 1, d2);
    uint64_t vu[2] = {UINT64_MAX, (uint64_t)1 << 63};
    put_packed_u64(&b, F_UINT64, vu, 2);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(((uint64_t *)t.data)[0] == UINT64_MAX && ((uint64_t *)t.data)[1] == (uint64_t)1 << 63);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* the typed encoder writes int8 -1 as a sign-extended 10-byte varint */
    onp_tensor x;
    CHECK(onp_tensor_alloc(&x, ONP_INT8, 1, d2, &e) == 0);
    ((int8_t *)x.data)[0] = -1;
    ((int8_t *)x.data)[1] = 3;
    onp_twrite_opts o = {0};
    o.pb_typed = 1;
    onp_buf_init(&b, 0);
    CHECK(onp_pb_tensor_encode(&x, &o, &b, &e) == 0);
    static const uint8_t want[] = {0x08, 0x02, 0x10, 0x03, 0x2a, 0x0b, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x03};
    CHECK(b.n == sizeof want && !memcmp(b.p, want, sizeof want));
    onp_buf_free(&b);
    onp_tensor_release(&x);
}

static void test_half_in_int32_data(void)
{
    onp_tensor t;
    onp_error e;
    onp_buf b;
    int64_t d3[1] = {3}, d2[1] = {2};
    int32_t dts[2] = {ONP_FLOAT16, ONP_BFLOAT16};
    for (int k = 0; k < 2; k++) {
        /* one int32 per element, holding the bit pattern */
        begin(&b, dts[k], 1, d3);
        uint64_t v[3] = {0x3c00, 0xc000, 0x7bff};
        put_packed_u64(&b, F_INT32, v, 1);
        onp_pb_put_uint(&b, F_INT32, v[1]);
        onp_pb_put_uint(&b, F_INT32, v[2]);
        CHECK(decode_buf(&b, 0, &t, &e) == 0);
        uint16_t *h = t.data;
        CHECK(t.nbytes == 6 && h[0] == 0x3c00 && h[1] == 0xc000 && h[2] == 0x7bff);
        onp_tensor_release(&t);
        onp_buf_free(&b);
        /* 2 values for 3 elements, 4 for 2 (not two per int32), 6 for 3 */
        size_t ns[3] = {2, 4, 6};
        const int64_t *dd[3] = {d3, d2, d3};
        for (int j = 0; j < 3; j++) {
            begin(&b, dts[k], 1, dd[j]);
            size_t at = b.n;
            uint64_t w[6] = {1, 2, 3, 4, 5, 6};
            put_packed_u64(&b, F_INT32, w, ns[j]);
            expect_error(&b, ONP_ERR_FORMAT, "TensorProto.int32_data", (int64_t)at,
                         "16-bit floats counted per element");
            onp_buf_free(&b);
        }
    }
}

static void test_strings_hand(void)
{
    onp_tensor t;
    onp_error e;
    onp_buf b;
    int64_t d3[1] = {3};
    begin(&b, ONP_STRING, 1, d3);
    onp_pb_put_len(&b, F_STRING, "a", 1);
    onp_pb_put_len(&b, F_STRING, "", 0);
    onp_pb_put_len(&b, F_STRING, "\0x\xff", 3);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(t.dtype == ONP_STRING && t.count == 3);
    CHECK(t.strings[0].n == 1 && t.strings[0].p[0] == 'a');
    CHECK(t.strings[1].n == 0);
    CHECK(t.strings[2].n == 3 && !memcmp(t.strings[2].p, "\0x\xff", 3));
    onp_tensor_release(&t);
    /* one string too many */
    onp_pb_put_len(&b, F_STRING, "d", 1);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.string_data", -2, "4 strings for 3");
    onp_buf_free(&b);
}

static void test_scalars_and_raw(void)
{
    onp_tensor t;
    onp_error e;
    onp_buf b;
    /* scalar: no dims, 4 raw bytes */
    begin(&b, ONP_FLOAT, 0, NULL);
    float v = -7.5f;
    onp_pb_put_len(&b, F_RAW, &v, 4);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(t.rank == 0 && t.count == 1 && t.nbytes == 4 && *(float *)t.data == -7.5f);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* scalar with typed data */
    begin(&b, ONP_INT64, 0, NULL);
    onp_pb_put_uint(&b, F_INT64, 42);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(t.rank == 0 && t.count == 1 && *(int64_t *)t.data == 42);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* raw bools are normalised to 0/1 */
    int64_t d3[1] = {3};
    begin(&b, ONP_BOOL, 1, d3);
    onp_pb_put_len(&b, F_RAW, "\x00\x07\x01", 3);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(!memcmp(t.data, "\x00\x01\x01", 3));
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* empty tensor, no data field at all */
    int64_t d0[2] = {4, 0};
    begin(&b, ONP_DOUBLE, 2, d0);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(t.count == 0 && t.nbytes == 0 && t.rank == 2 && t.dims[0] == 4 && t.dims[1] == 0);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    /* rank 32 is the limit */
    int64_t ones[33];
    for (int i = 0; i < 33; i++) ones[i] = 1;
    begin(&b, ONP_UINT8, 32, ones);
    onp_pb_put_len(&b, F_RAW, "z", 1);
    CHECK(decode_buf(&b, 0, &t, &e) == 0);
    CHECK(t.rank == 32 && t.count == 1);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    begin(&b, ONP_UINT8, 33, ones);
    onp_pb_put_len(&b, F_RAW, "z", 1);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.dims", 0, "rank 33");
    onp_buf_free(&b);
}

// --- malformed ----------------------------------------------------------------------

static void test_raw_size_mismatch(void)
{
    onp_buf b;
    int64_t d[2] = {2, 3};
    uint8_t bytes[32] = {0};
    size_t lens[2] = {20, 28};
    for (int i = 0; i < 2; i++) {
        begin(&b, ONP_FLOAT, 2, d);
        onp_pb_put_len(&b, F_NAME, "w", 1);
        size_t at = b.n;
        onp_pb_put_len(&b, F_RAW, bytes, lens[i]);
        expect_error(&b, ONP_ERR_FORMAT, "TensorProto.raw_data", (int64_t)at,
                     i ? "raw_data too long" : "raw_data too short");
        onp_buf_free(&b);
    }
    /* scalars: 0 and 8 bytes for a float */
    for (size_t n = 0; n <= 8; n += 8) {
        begin(&b, ONP_FLOAT, 0, NULL);
        size_t at = b.n;
        onp_pb_put_len(&b, F_RAW, bytes, n);
        expect_error(&b, ONP_ERR_FORMAT, "TensorProto.raw_data", (int64_t)at, "scalar raw size");
        onp_buf_free(&b);
    }
    /* 0-element tensor with raw bytes */
    int64_t d0[1] = {0};
    begin(&b, ONP_INT32, 1, d0);
    size_t at = b.n;
    onp_pb_put_len(&b, F_RAW, bytes, 4);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.raw_data", (int64_t)at, "0 elements, 4 bytes");
    onp_buf_free(&b);
    /* raw_data on a string tensor */
    int64_t d1[1] = {1};
    begin(&b, ONP_STRING, 1, d1);
    at = b.n;
    onp_pb_put_len(&b, F_RAW, "abc", 3);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.raw_data", (int64_t)at, "raw strings");
    onp_buf_free(&b);
}

static void test_bad_dims(void)
{
    onp_buf b;
    uint8_t raw[8] = {0};
    /* negative */
    int64_t neg[2] = {2, -1};
    begin(&b, ONP_FLOAT, 2, neg);
    onp_pb_put_len(&b, F_RAW, raw, 8);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.dims", 0, "negative dim");
    onp_buf_free(&b);
    /* products that overflow int64, and counts whose bytes overflow size_t */
    struct {
        int32_t dt;
        int64_t d[2];
    } over[] = {
        {ONP_FLOAT, {(int64_t)1 << 32, (int64_t)1 << 32}},
        {ONP_UINT8, {3, (int64_t)1 << 62}},
        {ONP_UINT8, {INT64_MAX, 2}},
        {ONP_COMPLEX128, {(int64_t)1 << 60, 1}}, /* 2^60 x 16 bytes */
        {ONP_DOUBLE, {(int64_t)1 << 61, 1}},     /* 2^61 x 8 bytes */
    };
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
        begin(&b, over[i].dt, 2, over[i].d);
        onp_buf_append(&b, "\x4a\x00", 2); /* raw_data, empty */
        char what[48];
        snprintf(what, sizeof what, "overflowing dims %zu", i);
        expect_error(&b, ONP_ERR_FORMAT, "TensorProto.dims", 0, what);
        onp_buf_free(&b);
    }
    /* dims as fixed32: wrong wire type for a repeated varint field */
    onp_buf_init(&b, 0);
    put_fixed32(&b, F_DIMS, 2);
    onp_pb_put_uint(&b, F_DATA_TYPE, ONP_UINT8);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.dims", 0, "dims fixed32");
    onp_buf_free(&b);
    /* packed dims with a truncated varint */
    onp_buf_init(&b, 0);
    onp_buf_append(&b, "\x0a\x02\x02\x80", 4);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.dims", 3, "packed dims truncated");
    onp_buf_free(&b);
}

static void test_wrong_typed_field(void)
{
    onp_buf b;
    int64_t d1[1] = {1};
    struct {
        int32_t dt;
        uint32_t field;
        const char *name;
    } cases[] = {
        {ONP_FLOAT, F_INT64, "TensorProto.int64_data"},
        {ONP_INT64, F_INT32, "TensorProto.int32_data"},
        {ONP_FLOAT16, F_FLOAT, "TensorProto.float_data"},
        {ONP_STRING, F_INT32, "TensorProto.int32_data"},
        {ONP_UINT32, F_INT32, "TensorProto.int32_data"},
        {ONP_DOUBLE, F_FLOAT, "TensorProto.float_data"},
        {ONP_INT32, F_UINT64, "TensorProto.uint64_data"},
        {ONP_UINT8, F_STRING, "TensorProto.string_data"},
        {ONP_FLOAT, F_DOUBLE, "TensorProto.double_data"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        begin(&b, cases[i].dt, 1, d1);
        size_t at = b.n;
        if (cases[i].field == F_FLOAT)
            put_fixed32(&b, F_FLOAT, 0);
        else if (cases[i].field == F_DOUBLE)
            put_fixed64(&b, F_DOUBLE, 0);
        else if (cases[i].field == F_STRING)
            onp_pb_put_len(&b, F_STRING, "s", 1);
        else
            onp_pb_put_uint(&b, cases[i].field, 1);
        char what[64];
        snprintf(what, sizeof what, "dtype %d in field %u", cases[i].dt, cases[i].field);
        expect_error(&b, ONP_ERR_FORMAT, cases[i].name, (int64_t)at, what);
        onp_buf_free(&b);
    }
    /* both raw_data and the right typed field */
    begin(&b, ONP_FLOAT, 1, d1);
    onp_pb_put_len(&b, F_RAW, "\0\0\0\0", 4);
    size_t at = b.n;
    put_fixed32(&b, F_FLOAT, fbits(1));
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.float_data", (int64_t)at, "raw and typed");
    onp_buf_free(&b);
    /* typed before raw: same */
    begin(&b, ONP_INT64, 1, d1);
    at = b.n;
    onp_pb_put_uint(&b, F_INT64, 1);
    onp_pb_put_len(&b, F_RAW, "\0\0\0\0\0\0\0\0", 8);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.int64_data", (int64_t)at, "typed and raw");
    onp_buf_free(&b);
    /* too few typed values; none at all */
    int64_t d3[1] = {3};
    begin(&b, ONP_FLOAT, 1, d3);
    at = b.n;
    float two[2] = {1, 2};
    put_packed_f32(&b, F_FLOAT, two, 2);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.float_data", (int64_t)at, "2 floats for 3");
    onp_buf_free(&b);
    begin(&b, ONP_FLOAT, 1, d3);
    at = b.n;
    put_fixed32(&b, F_FLOAT, fbits(1));
    put_fixed32(&b, F_FLOAT, fbits(2));
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.float_data", (int64_t)at, "first occurrence");
    onp_buf_free(&b);
    begin(&b, ONP_FLOAT, 1, d3);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.float_data", 0, "no data");
    onp_buf_free(&b);
    /* packed float_data whose length is not a multiple of 4 */
    begin(&b, ONP_FLOAT, 1, d1);
    at = b.n;
    onp_pb_put_len(&b, F_FLOAT, "\0\0\0\0\0\0", 6);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.float_data", (int64_t)at + 2,
                 "float_data 6 bytes");
    onp_buf_free(&b);
    /* float_data as varints */
    begin(&b, ONP_FLOAT, 1, d1);
    at = b.n;
    onp_pb_put_uint(&b, F_FLOAT, 1);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.float_data", (int64_t)at, "float_data varint");
    onp_buf_free(&b);
    /* string_data as a varint */
    begin(&b, ONP_STRING, 1, d1);
    at = b.n;
    onp_pb_put_uint(&b, F_STRING, 1);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.string_data", (int64_t)at, "string_data varint");
    onp_buf_free(&b);
}

static void test_bad_data_type(void)
{
    onp_buf b;
    int64_t d1[1] = {1};
    /* 21: UINT4, the first type the reader does not take */
    uint64_t bad[] = {0, 21, 99, 255, (uint64_t)1 << 31, (uint64_t)1 << 40, UINT64_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        onp_buf_init(&b, 0);
        onp_pb_put_len(&b, F_NAME, "n", 1);
        put_dims(&b, 1, d1);
        onp_pb_put_uint(&b, F_DATA_TYPE, bad[i]);
        onp_pb_put_len(&b, F_RAW, "\0\0\0\0", 4);
        char what[48];
        snprintf(what, sizeof what, "data_type %" PRIu64, bad[i]);
        expect_error(&b, ONP_ERR_FORMAT, "TensorProto.data_type", 0, what);
        onp_buf_free(&b);
    }
    /* no data_type at all */
    onp_buf_init(&b, 0);
    put_dims(&b, 1, d1);
    onp_pb_put_len(&b, F_RAW, "\0\0\0\0", 4);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.data_type", 0, "no data_type");
    onp_buf_free(&b);
    /* data_type with the wrong wire type */
    onp_buf_init(&b, 0);
    put_dims(&b, 1, d1);
    size_t at = b.n;
    onp_pb_put_len(&b, F_DATA_TYPE, "\x01", 1);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.data_type", (int64_t)at, "data_type LEN");
    onp_buf_free(&b);
    /* data_type as an 11-byte varint */
    onp_buf_init(&b, 0);
    put_dims(&b, 1, d1);
    at = b.n;
    onp_buf_append(&b, "\x10\x81\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 12);
    expect_error(&b, ONP_ERR_FORMAT, "protobuf", (int64_t)at + 1, "11-byte varint");
    onp_buf_free(&b);
}

static void test_other_malformed(void)
{
    onp_buf b;
    int64_t d1[1] = {1};
    size_t at;
    /* segment */
    begin(&b, ONP_FLOAT, 1, d1);
    at = b.n;
    onp_pb_put_len(&b, F_SEGMENT, "\x08\x00\x10\x01", 4);
    onp_pb_put_len(&b, F_RAW, "\0\0\0\0", 4);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.segment", (int64_t)at, "segment");
    onp_buf_free(&b);
    /* external data in a .pb fixture */
    begin(&b, ONP_FLOAT, 1, d1);
    onp_buf ent = {0};
    onp_pb_put_len(&ent, 1, "location", 8);
    onp_pb_put_len(&ent, 2, "w.bin", 5);
    onp_pb_put_len(&b, F_EXTERNAL, ent.p, ent.n);
    onp_buf_free(&ent);
    onp_pb_put_uint(&b, F_LOCATION, 1);
    expect_error(&b, ONP_ERR_INPUT, "TensorProto.data_location", 0, "external in .pb");
    /* ... and through a file: the error names it */
    char p[128];
    path_in(p, sizeof p, "ext.pb");
    CHECK(spit(p, b.p, b.n) == 0);
    onp_tensor t;
    onp_error e;
    CHECK(onp_tfile_read(p, NULL, &t, &e) == -1);
    CHECK(e.code == ONP_ERR_INPUT && !strcmp(e.file, p) && e.offset == 0);
    CHECK(!strcmp(e.field, "TensorProto.data_location"));
    remove(p);
    onp_buf_free(&b);
    /* external data with a negative offset: a format error first */
    begin(&b, ONP_FLOAT, 1, d1);
    at = b.n;
    onp_pb_put_len(&ent, 1, "offset", 6);
    onp_pb_put_len(&ent, 2, "-1", 2);
    onp_pb_put_len(&b, F_EXTERNAL, ent.p, ent.n);
    onp_buf_free(&ent);
    onp_pb_put_uint(&b, F_LOCATION, 1);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.external_data", (int64_t)at, "negative offset");
    onp_buf_free(&b);
    /* data_location 2 */
    begin(&b, ONP_FLOAT, 1, d1);
    onp_pb_put_len(&b, F_RAW, "\0\0\0\0", 4);
    at = b.n;
    onp_pb_put_uint(&b, F_LOCATION, 2);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.data_location", (int64_t)at, "location 2");
    onp_buf_free(&b);
    /* name and raw_data with the wrong wire types */
    begin(&b, ONP_FLOAT, 1, d1);
    at = b.n;
    onp_pb_put_uint(&b, F_NAME, 3);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.name", (int64_t)at, "name varint");
    onp_buf_free(&b);
    begin(&b, ONP_FLOAT, 1, d1);
    at = b.n;
    put_fixed32(&b, F_RAW, 0);
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.raw_data", (int64_t)at, "raw fixed32");
    onp_buf_free(&b);
    /* group wire type anywhere */
    begin(&b, ONP_FLOAT, 1, d1);
    at = b.n;
    onp_buf_append(&b, "\x63\x64", 2); /* field 12 start group, end group */
    expect_error(&b, ONP_ERR_FORMAT, "protobuf", (int64_t)at, "group");
    onp_buf_free(&b);
}

static void test_truncated(void)
{
    /* every prefix of a valid encoding decodes or fails cleanly; cuts inside a
     * field fail with a format error */
    onp_tensor t;
    onp_error e;
    int64_t d[2] = {2, 3};
    CHECK(make_tensor(&t, ONP_INT32, 2, d) == 0);
    onp_tensor_set_name(&t, "tensor_name", &e);
    for (int typed = 0; typed < 2; typed++) {
        onp_twrite_opts o = {0};
        o.pb_typed = typed;
        onp_buf b = {0};
        CHECK(onp_pb_tensor_encode(&t, &o, &b, &e) == 0);
        /* field boundaries */
        char boundary[256] = {0};
        onp_pb_cursor c;
        onp_pb_field f;
        onp_pb_cursor_init(&c, b.p, b.n, b.p, NULL);
        boundary[0] = 1;
        while (onp_pb_next(&c, &f, &e) == 1) boundary[c.p - b.p] = 1;
        int bad = 0;
        for (size_t n = 0; n < b.n; n++) {
            onp_tensor x;
            onp_error_clear(&e);
            int rc = onp_pb_tensor_decode(b.p, n, "cut.pb", 0, &x, &e);
            if (rc == 0) {
                bad++; /* every proper prefix misses the data or the dtype */
                onp_tensor_release(&x);
            } else if (e.code != ONP_ERR_FORMAT) {
                bad++;
            } else if (!boundary[n] &&
                       (strcmp(e.field, "protobuf") || e.offset < 0 || e.offset > (int64_t)n)) {
                bad++;
            }
        }
        CHECKF(bad == 0, "typed=%d: %d prefixes handled wrongly", typed, bad);
        onp_buf_free(&b);
    }
    onp_tensor_release(&t);
    /* an empty buffer: no data_type */
    onp_buf b = {0};
    expect_error(&b, ONP_ERR_FORMAT, "TensorProto.data_type", 0, "empty");
}

// --- the atomic writer -----------------------------------------------------------

static void test_write_missing_folder(void)
{
    onp_tensor t;
    onp_error e;
    int64_t d[1] = {4};
    CHECK(make_tensor(&t, ONP_FLOAT, 1, d) == 0);
    char dir[128], p[160];
    path_in(dir, sizeof dir, "atomic");
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(p, sizeof p, "%s/no/such/x.pb", dir);
    onp_error_clear(&e);
    CHECK(onp_tfile_write(p, &t, NULL, &e) == -1);
    CHECK(e.code == ONP_ERR_IO && !strcmp(e.file, p));
    CHECK(count_entries(dir) == 0);
    /* unknown extension: refused before anything is written */
    snprintf(p, sizeof p, "%s/x.bin", dir);
    CHECK(onp_tfile_write(p, &t, NULL, &e) == -1 && e.code == ONP_ERR_USAGE);
    CHECK(!file_exists(p) && count_entries(dir) == 0);
    /* a bfloat16 .npy: the encoder refuses, no file, an existing one kept */
    onp_tensor h;
    CHECK(make_tensor(&h, ONP_BFLOAT16, 1, d) == 0);
    snprintf(p, sizeof p, "%s/h.npy", dir);
    CHECK(onp_tfile_write(p, &h, NULL, &e) == -1 && e.code != ONP_ERR_NONE);
    CHECK(!file_exists(p) && count_entries(dir) == 0);
    CHECK(spit(p, "keep", 4) == 0);
    CHECK(onp_tfile_write(p, &h, NULL, &e) == -1);
    size_t n;
    uint8_t *got = slurp(p, &n);
    CHECK(got && n == 4 && !memcmp(got, "keep", 4));
    free(got);
    CHECK(count_entries(dir) == 1);
    /* a successful write replaces the file and leaves nothing else */
    snprintf(p, sizeof p, "%s/x.pb", dir);
    CHECK(spit(p, "old", 3) == 0);
    CHECK(onp_tfile_write(p, &t, NULL, &e) == 0);
    onp_tensor r;
    CHECK(onp_tfile_read(p, NULL, &r, &e) == 0 && onp_tensor_equal(&r, &t));
    onp_tensor_release(&r);
    CHECK(count_entries(dir) == 2);
    onp_tensor_release(&h);
    onp_tensor_release(&t);
}

/* The .pb encoder fails only when memory runs out: make it run out in a
 * child process with a small address-space limit and a large tensor whose
 * bytes are an untouched mapping; the target file must keep its content. */
static void test_write_failed_encode(void)
{
#ifdef UNDER_ASAN
    SKIP("address-space limits do not mix with AddressSanitizer");
#else
    char p[160];
    path_in(p, sizeof p, "atomic/big.pb");
    CHECK(spit(p, "original", 8) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        size_t big = (size_t)512 << 20;
        void *m = mmap(NULL, big, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) _exit(3);
        onp_tensor t;
        memset(&t, 0, sizeof t);
        t.dtype = ONP_UINT8;
        t.rank = 1;
        t.dims[0] = (int64_t)big;
        t.count = (int64_t)big;
        t.nbytes = big;
        t.data = m;
        long pages = 0, page = sysconf(_SC_PAGESIZE);
        FILE *f = fopen("/proc/self/statm", "r");
        if (!f || fscanf(f, "%ld", &pages) != 1) _exit(3);
        fclose(f);
        struct rlimit rl = {(rlim_t)pages * (rlim_t)page + ((rlim_t)256 << 20), RLIM_INFINITY};
        if (setrlimit(RLIMIT_AS, &rl)) _exit(3);
        onp_error e;
        onp_error_clear(&e);
        int rc = onp_tfile_write(p, &t, NULL, &e);
        _exit(rc == -1 && e.code == ONP_ERR_NOMEM ? 0 : 1);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3) SKIP("could not set up the memory limit");
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
    size_t n;
    uint8_t *got = slurp(p, &n);
    CHECK(got && n == 8 && !memcmp(got, "original", 8));
    free(got);
    char dir[128];
    path_in(dir, sizeof dir, "atomic");
    CHECK(count_entries(dir) == 3); /* h.npy, x.pb, big.pb: no temporary left */
#endif
}

static void test_setup(void)
{
    make_tmpdir();
}

static void test_cleanup(void)
{
    remove_tmpdir();
    CHECK(!file_exists(tmpdir));
}

TEST_MAIN(test_setup, test_round_trip_memory, test_round_trip_files, test_typed_float_forms,
          test_typed_integers, test_half_in_int32_data, test_strings_hand, test_scalars_and_raw,
          test_raw_size_mismatch, test_bad_dims, test_wrong_typed_field, test_bad_data_type,
          test_other_malformed, test_truncated, test_write_missing_folder, test_write_failed_encode,
          test_cleanup)
