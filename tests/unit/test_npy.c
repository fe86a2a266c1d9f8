/*
 * test_npy.c — the .npy reader and writer (src/tfile/npy.c).
 *
 * Round trips over every numeric dtype and strings, both byte orders, both
 * memory orders, versions 1/2/3 and ranks 0..4 with empty dims; files written
 * by numpy itself (generated at run time with /usr/bin/python3, skipped when
 * numpy is absent), byte-for-byte agreement with np.save, numpy reading our
 * files back; and malformed inputs, each checked for its error code and the
 * field it names.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnxparity/tfile.h"
#include "testhelp.h"

#define PY "/usr/bin/python3"

// --- helpers -------------------------------------------------------------------

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint8_t rnd8(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint8_t)(rng >> 24);
}

/* Random element bytes; bools 0/1 (the reader normalises them). */
static void fill(onp_tensor *t)
{
    uint8_t *p = t->data;
    for (size_t i = 0; i < t->nbytes; i++) p[i] = rnd8();
    if (t->dtype == ONP_BOOL)
        for (size_t i = 0; i < t->nbytes; i++) p[i] &= 1;
}

static int make_strings(onp_tensor *t, int rank, const int64_t *dims, const char *const *pool,
                        size_t npool)
{
    int64_t count = 1;
    for (int i = 0; i < rank; i++) count *= dims[i];
    size_t *lens = calloc((size_t)count + 1, sizeof *lens);
    for (int64_t i = 0; i < count; i++) lens[i] = strlen(pool[(size_t)i % npool]);
    int rc = onp_tensor_alloc_strings(t, rank, dims, lens, NULL);
    for (int64_t i = 0; !rc && i < count; i++)
        memcpy(onp_tensor_string_at(t, i), pool[(size_t)i % npool], lens[i]);
    free(lens);
    return rc;
}

/* Encode then decode; the encoded bytes stay in *b for inspection. */
static int roundtrip(const onp_tensor *t, const onp_twrite_opts *o, onp_buf *b, onp_tensor *back)
{
    onp_error e;
    onp_buf_init(b, 0);
    if (onp_npy_encode(t, o, b, &e)) {
        fprintf(stderr, "encode: %s\n", e.msg);
        return -1;
    }
    if (onp_npy_decode(b->p, b->n, "rt.npy", NULL, back, &e)) {
        fprintf(stderr, "decode: %s: %s\n", e.field, e.msg);
        return -1;
    }
    return 0;
}

/* Offset of the data in an encoded file. */
static size_t data_offset(const uint8_t *p)
{
    if (p[6] == 1) return 10 + (size_t)(p[8] | p[9] << 8);
    return 12 + (size_t)(p[8] | p[9] << 8 | p[10] << 16 | (uint32_t)p[11] << 24);
}

/* Build "\x93NUMPY" + version + exact header length + dict + data. */
static size_t mk(uint8_t *out, int major, const char *dict, const void *data, size_t dn)
{
    size_t hl = strlen(dict), pre = major == 1 ? 10 : 12;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (uint8_t)major;
    out[7] = 0;
    out[8] = (uint8_t)hl;
    out[9] = (uint8_t)(hl >> 8);
    if (major != 1) out[10] = out[11] = 0;
    memcpy(out + pre, dict, hl);
    if (dn) memcpy(out + pre + hl, data, dn);
    return pre + hl + dn;
}

static int have_numpy(void)
{
    return system(PY " -c 'import numpy' >/dev/null 2>&1") == 0;
}

static int write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = n ? fwrite(p, 1, n, f) : 0;
    return fclose(f) == 0 && w == n ? 0 : -1;
}

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, k = 0, r;
    uint8_t *p = malloc(cap);
    while (p && (r = fread(p + k, 1, cap - k, f)) > 0) {
        k += r;
        if (k == cap) p = realloc(p, cap *= 2);
    }
    fclose(f);
    *n = k;
    return p;
}

/* Run a python script (text) with the folder as argv[1]; 0 when it exits 0. */
static int run_py(const char *dir, const char *script)
{
    char path[512], cmd[1200];
    snprintf(path, sizeof path, "%s/script.py", dir);
    if (write_file(path, script, strlen(script))) return -1;
    snprintf(cmd, sizeof cmd, PY " %s %s", path, dir);
    int st = system(cmd);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void rm_dir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static int decode_file(const char *dir, const char *name, onp_tensor *t, onp_error *e)
{
    char path[512];
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    uint8_t *p = read_file(path, &n);
    if (!p) {
        memset(t, 0, sizeof *t);
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot read");
    }
    int rc = onp_npy_decode(p, n, name, NULL, t, e);
    free(p);
    if (rc) fprintf(stderr, "%s: %s: %s\n", name, e->field, e->msg);
    return rc;
}

static int str_is(const onp_tensor *t, int64_t i, const char *s, size_t n)
{
    return t->dtype == ONP_STRING && i < t->count && t->strings[i].n == n &&
           !memcmp(t->strings[i].p, s, n);
}

// --- round trips -----------------------------------------------------------------

static const int32_t numeric[] = {ONP_FLOAT16, ONP_FLOAT, ONP_DOUBLE,    ONP_INT8,      ONP_INT16,
                                  ONP_INT32,   ONP_INT64, ONP_UINT8,     ONP_UINT16,    ONP_UINT32,
                                  ONP_UINT64,  ONP_BOOL,  ONP_COMPLEX64, ONP_COMPLEX128};

static const struct {
    int rank;
    int64_t dims[4];
} shapes[] = {{0, {0}},       {1, {5}},          {1, {0}},          {2, {3, 4}}, {2, {0, 3}},
              {3, {2, 3, 4}}, {4, {2, 1, 3, 2}}, {4, {2, 0, 2, 1}}, {2, {1, 7}}};

static void test_roundtrip_numeric(void)
{
    int bad = 0, runs = 0;
    for (size_t d = 0; d < sizeof numeric / sizeof numeric[0]; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int opt = 0; opt < 16; opt++) {
                onp_twrite_opts o = {0};
                o.big_endian = opt & 1;
                o.fortran_order = opt >> 1 & 1;
                o.npy_version = opt >> 2; /* 0 (auto), 1, 2, 3 */
                onp_tensor t, back;
                onp_buf b;
                CHECK(onp_tensor_alloc(&t, numeric[d], shapes[s].rank, shapes[s].dims, NULL) == 0);
                fill(&t);
                int ok = roundtrip(&t, &o, &b, &back) == 0 && onp_tensor_equal(&t, &back) &&
                         back.name == NULL;
                /* layout: version byte, 64-byte aligned data, '\n' before it */
                int want_v = o.npy_version ? o.npy_version : 1;
                ok = ok && b.p[6] == want_v && b.p[7] == 0 && data_offset(b.p) % 64 == 0 &&
                     b.p[data_offset(b.p) - 1] == '\n' && b.n == data_offset(b.p) + t.nbytes;
                if (!ok) {
                    bad++;
                    fprintf(stderr, "round trip failed: %s shape#%zu opts %d\n",
                            onp_dtype_name(numeric[d]), s, opt);
                }
                runs++;
                onp_tensor_release(&back);
                onp_tensor_release(&t);
                onp_buf_free(&b);
            }
    CHECKF(bad == 0, "%d of %d numeric round trips failed", bad, runs);
    CHECK(runs == 14 * 9 * 16);
}

static void test_roundtrip_strings(void)
{
    static const char *const pool[] = {
        "alpha", "", "b", "h\xc3\xa9llo", "\xe6\x97\xa5\xe6\x9c\xac", "longer string here", "x y"};
    int bad = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int opt = 0; opt < 16; opt++) {
            onp_twrite_opts o = {opt & 1, opt >> 1 & 1, opt >> 2, 0, 0};
            onp_tensor t, back;
            onp_buf b;
            CHECK(make_strings(&t, shapes[s].rank, shapes[s].dims, pool, 7) == 0);
            if (roundtrip(&t, &o, &b, &back) || !onp_tensor_equal(&t, &back)) bad++;
            onp_tensor_release(&back);
            onp_tensor_release(&t);
            onp_buf_free(&b);
        }
    CHECKF(bad == 0, "%d string round trips failed", bad);

    /* the descr is |S<longest>, and all-empty strings still use S1 */
    onp_tensor t;
    onp_buf b;
    onp_buf_init(&b, 0);
    int64_t dims[1] = {3};
    static const char *const three[] = {"ab", "", "abcd"};
    CHECK(make_strings(&t, 1, dims, three, 3) == 0);
    CHECK(onp_npy_encode(&t, NULL, &b, NULL) == 0);
    CHECK(b.n > 0 && memmem(b.p, b.n, "'descr': '|S4'", 14) != NULL);
    onp_tensor_release(&t);
    onp_buf_free(&b);
    static const char *const empties[] = {""};
    CHECK(make_strings(&t, 1, dims, empties, 1) == 0);
    CHECK(onp_npy_encode(&t, NULL, &b, NULL) == 0);
    CHECK(b.n > 0 && memmem(b.p, b.n, "'descr': '|S1'", 14) != NULL);
    onp_tensor_release(&t);
    onp_buf_free(&b);
}

/* Known bytes: big-endian swaps, Fortran order permutes, header text. */
static void test_layout(void)
{
    onp_tensor t;
    onp_buf b;
    int64_t dims[2] = {2, 3};
    CHECK(onp_tensor_alloc(&t, ONP_INT32, 2, dims, NULL) == 0);
    for (int32_t i = 0; i < 6; i++) memcpy((uint8_t *)t.data + 4 * i, &i, 4);

    onp_twrite_opts o = {0};
    o.fortran_order = 1;
    o.big_endian = 1;
    onp_buf_init(&b, 0);
    CHECK(onp_npy_encode(&t, &o, &b, NULL) == 0);
    static const char want[] = "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }";
    CHECK(b.n >= 10 + sizeof want && !memcmp(b.p + 10, want, sizeof want - 1));
    size_t off = data_offset(b.p);
    CHECK(off == 128 && b.n == off + 24);
    static const int order[6] = {0, 3, 1, 4, 2, 5};
    int ok = 1;
    for (int k = 0; k < 6 && b.n == off + 24; k++)
        ok &= b.p[off + 4 * k] == 0 && b.p[off + 4 * k + 3] == order[k];
    CHECK(ok);
    onp_buf_free(&b);

    /* appends to what the buffer holds */
    onp_buf_init(&b, 0);
    CHECK(onp_buf_append(&b, "xyz", 3) == 0);
    CHECK(onp_npy_encode(&t, NULL, &b, NULL) == 0);
    CHECK(b.n == 3 + 128 + 24 && !memcmp(b.p, "xyz\x93NUMPY", 9));
    onp_buf_free(&b);

    /* a capped buffer that is too small fails with NOMEM */
    onp_error e;
    onp_buf_init(&b, 100);
    CHECK(onp_npy_encode(&t, NULL, &b, &e) == -1 && e.code == ONP_ERR_NOMEM);
    onp_buf_free(&b);
    onp_tensor_release(&t);
}

// --- hand-made headers that must be accepted ------------------------------------

static void test_accepts(void)
{
    uint8_t f[512];
    onp_tensor t;
    onp_error e;
    const float v[3] = {1.5f, -2.0f, 0.25f};
    /* other key order, double quotes, no trailing comma, '=' order, blanks */
    size_t n = mk(f, 1, "{ \"shape\" : (3,) ,'descr':\"=f4\",\n 'fortran_order':False}\n", v, 12);
    CHECK(onp_npy_decode(f, n, "a.npy", NULL, &t, &e) == 0 && t.dtype == ONP_FLOAT && t.rank == 1 &&
          t.dims[0] == 3 && !memcmp(t.data, v, 12));
    onp_tensor_release(&t);
    /* Python 2 long integers in a version 1.0 header */
    n = mk(f, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }", v, 12);
    CHECK(onp_npy_decode(f, n, "a.npy", NULL, &t, &e) == 0 && t.count == 3);
    onp_tensor_release(&t);
    /* ... but not in version 3.0 */
    n = mk(f, 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }", v, 12);
    CHECK(onp_npy_decode(f, n, "a.npy", NULL, &t, &e) == -1 && e.code == ONP_ERR_FORMAT);
    /* '|' on a multi-byte type means native; bool bytes are normalised */
    n = mk(f, 2, "{'descr': '|f4', 'fortran_order': False, 'shape': (3,), }", v, 12);
    CHECK(onp_npy_decode(f, n, "a.npy", NULL, &t, &e) == 0 && !memcmp(t.data, v, 12));
    onp_tensor_release(&t);
    n = mk(f, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", "\0\2\1", 3);
    CHECK(onp_npy_decode(f, n, "a.npy", NULL, &t, &e) == 0 && t.dtype == ONP_BOOL &&
          !memcmp(t.data, "\0\1\1", 3));
    onp_tensor_release(&t);
    /* 'S' keeps embedded NULs, strips trailing ones; 'U' big-endian */
    n = mk(f, 1, "{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }", "a\0b\0\0\0", 6);
    CHECK(onp_npy_decode(f, n, "a.npy", NULL, &t, &e) == 0 && str_is(&t, 0, "a\0b", 3) &&
          str_is(&t, 1, "", 0));
    onp_tensor_release(&t);
    static const uint8_t ube[8] = {0, 0, 0, 0xE9, 0, 1, 0xF6, 0x00};
    n = mk(f, 1, "{'descr': '>U2', 'fortran_order': False, 'shape': (), }", ube, 8);
    CHECK(onp_npy_decode(f, n, "a.npy", NULL, &t, &e) == 0 && t.rank == 0 &&
          str_is(&t, 0, "\xc3\xa9\xf0\x9f\x98\x80", 6));
    onp_tensor_release(&t);
}

// --- malformed inputs ------------------------------------------------------------------

/* Decode f[n]; it must fail with `code` naming `field` (and `msg` when given). */
static void refuse(const uint8_t *f, size_t n, const onp_tread_opts *ro, onp_errcode code,
                   const char *field, const char *msg, int line)
{
    onp_tensor t;
    onp_error e;
    onp_error_clear(&e);
    memset(&t, 0x5a, sizeof t);
    int rc = onp_npy_decode(f, n, "bad.npy", ro, &t, &e);
    CHECKF(rc == -1 && e.code == code && !strcmp(e.field, field) && !strcmp(e.file, "bad.npy") &&
               (!msg || strstr(e.msg, msg)) && t.data == NULL && t.strings == NULL,
           "line %d: rc %d code %s field '%s' msg '%s'", line, rc, onp_errcode_name(e.code),
           e.field, e.msg);
    if (rc == 0) onp_tensor_release(&t);
}

#define REFUSE(f, n, code, field, msg) refuse(f, n, NULL, code, field, msg, __LINE__)
#define HDR(d, s) "{'descr': '" d "', 'fortran_order': False, 'shape': " s ", }"

static void test_malformed(void)
{
    uint8_t f[1024], z[64];
    size_t n;
    memset(z, 0, sizeof z);
    const onp_errcode FMT = ONP_ERR_FORMAT, INP = ONP_ERR_INPUT;

    n = mk(f, 1, HDR("<f4", "(1,)"), z, 4);
    f[5] = 'Z';
    REFUSE(f, n, FMT, "npy.magic", "magic"); /* 1: bad magic */
    REFUSE(f, 3, FMT, "npy.magic", NULL);    /* 2: shorter than the magic */
    REFUSE(NULL, 0, FMT, "npy.magic", NULL); /* 3: nothing at all */
    n = mk(f, 4, HDR("<f4", "(1,)"), z, 4);
    REFUSE(f, n, FMT, "npy.version", "4.0"); /* 4: unknown major */
    n = mk(f, 1, HDR("<f4", "(1,)"), z, 4);
    f[7] = 1;
    REFUSE(f, n, FMT, "npy.version", "1.1"); /* 5: minor != 0 */
    /* 6: a 4 GiB header length in a 12-byte file: refused, nothing allocated */
    memcpy(f, "\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
    REFUSE(f, 12, FMT, "npy.header_len", "4294967295");
    memcpy(f, "\x93NUMPY\x01\x00\xff\xff", 10);
    REFUSE(f, 10, FMT, "npy.header_len", NULL); /* 7: v1 length past the end */
    REFUSE(f, 9, FMT, "npy.header_len", NULL);  /* 8: length field cut */

    /* keys */
    n = mk(f, 1, "{'descr': '<f4', 'fortran_order': False, }", z, 4);
    REFUSE(f, n, FMT, "npy.header", "missing key 'shape'"); /* 9 */
    n = mk(f, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1, }", z, 4);
    REFUSE(f, n, FMT, "npy.header", "unexpected key 'x'"); /* 10 */
    n = mk(f, 1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", z, 4);
    REFUSE(f, n, FMT, "npy.header.descr", "duplicate"); /* 11 */
    n = mk(f, 1, "{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", z, 4);
    REFUSE(f, n, FMT, "npy.header", "':'"); /* 12: missing colon */
    n = mk(f, 1, "{'descr': '<f4", z, 0);
    REFUSE(f, n, FMT, "npy.header", "unterminated"); /* 13 */
    n = mk(f, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", z, 4);
    REFUSE(f, n, FMT, "npy.header", "after the dict"); /* 14 */
    n = mk(f, 1, "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,)}", z, 4);
    REFUSE(f, n, FMT, "npy.header", "escapes"); /* 15 */
    n = mk(f, 1, "['descr', '<f4']", z, 4);
    REFUSE(f, n, FMT, "npy.header", "'{'"); /* 16: not a dict */
    n = mk(f, 1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", z, 4);
    REFUSE(f, n, FMT, "npy.header.fortran_order", NULL); /* 17 */

    /* dtypes */
    n = mk(f, 1, HDR("|O", "(1,)"), z, 8);
    REFUSE(f, n, INP, "npy.header.descr", "object/pickled arrays are never loaded"); /* 18 */
    n = mk(f, 1, HDR("<M8[ns]", "(1,)"), z, 8);
    REFUSE(f, n, INP, "npy.header.descr", "unsupported dtype"); /* 19 */
    n = mk(f, 1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,)}", z, 4);
    REFUSE(f, n, INP, "npy.header.descr", "structured"); /* 20 */
    n = mk(f, 1, HDR("<f16", "(1,)"), z, 16);
    REFUSE(f, n, INP, "npy.header.descr", "unsupported dtype"); /* 21: long double */
    n = mk(f, 1, HDR("|S0", "(1,)"), z, 0);
    REFUSE(f, n, FMT, "npy.header.descr", "zero-length"); /* 22 */

    /* data size */
    n = mk(f, 1, HDR("<f4", "(4,)"), z, 12);
    REFUSE(f, n, FMT, "npy.data", "truncated"); /* 23 */
    n = mk(f, 1, HDR("<f4", "(4,)"), z, 20);
    REFUSE(f, n, FMT, "npy.data", "trailing"); /* 24 */
    {
        onp_tensor t;
        onp_error e;
        CHECK(onp_npy_decode(f, n, "bad.npy", NULL, &t, &e) == -1 && e.offset == (int64_t)(n - 4));
    }
    /* shapes */
    n = mk(f, 1, HDR("<f4", "(2, -3)"), z, 0);
    REFUSE(f, n, FMT, "npy.header.shape", "negative"); /* 25 */
    n = mk(f, 1, HDR("<f4", "(1099511627776, 1099511627776)"), z, 0);
    REFUSE(f, n, FMT, "npy.header.shape", "overflow"); /* 26: product overflows */
    n = mk(f, 1, HDR("<f4", "(4611686018427387904,)"), z, 0);
    REFUSE(f, n, FMT, "npy.header.shape", NULL); /* 27: bytes overflow size_t */
    n = mk(f, 1, HDR("<f4", "(9223372036854775808,)"), z, 0);
    REFUSE(f, n, FMT, "npy.header.shape", "2^63"); /* 28: dim past int64 */
    n = mk(f, 1, HDR("<f4", "(4)"), z, 16);
    REFUSE(f, n, FMT, "npy.header.shape", "tuple"); /* 29: an int, not a tuple */
    n = mk(f, 1, HDR("<f4", "[4]"), z, 16);
    REFUSE(f, n, FMT, "npy.header.shape", "tuple"); /* 30 */
    n = mk(f, 1, HDR("<f4", "(04,)"), z, 16);
    REFUSE(f, n, FMT, "npy.header.shape", NULL); /* 31: leading zero */
    n = mk(f, 1, HDR("<f4", "(,)"), z, 0);
    REFUSE(f, n, FMT, "npy.header.shape", NULL); /* 32 */
    n = mk(f, 1, HDR("<f4", "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)"),
           z, 4);
    REFUSE(f, n, INP, "npy.header.shape", "more than 32"); /* 33 */

    /* strings */
    static const uint8_t sur[4] = {0x00, 0xD8, 0, 0}, big[4] = {0x00, 0x00, 0x11, 0};
    n = mk(f, 1, HDR("<U1", "(1,)"), sur, 4);
    REFUSE(f, n, FMT, "npy.data", "code point"); /* 34: a surrogate */
    n = mk(f, 1, HDR("<U1", "(1,)"), big, 4);
    REFUSE(f, n, FMT, "npy.data", "code point"); /* 35: past U+10FFFF */

    /* the caller's cap */
    onp_tread_opts ro = {8};
    n = mk(f, 1, HDR("<f4", "(4,)"), z, 16);
    refuse(f, n, &ro, INP, "npy.data", "limit", __LINE__); /* 36 */
    n = mk(f, 1, HDR("|S4", "(4,)"), z, 16);
    ro.max_bytes = 64;
    refuse(f, n, &ro, INP, "npy.data", "limit", __LINE__); /* 37: string views count */
}

static void test_encode_refusals(void)
{
    onp_tensor t;
    onp_error e;
    onp_buf b;
    int64_t dims[1] = {2};
    onp_buf_init(&b, 0);
    CHECK(onp_tensor_alloc(&t, ONP_BFLOAT16, 1, dims, NULL) == 0);
    CHECK(onp_npy_encode(&t, NULL, &b, &e) == -1 && e.code == ONP_ERR_USAGE &&
          strstr(e.msg, "bfloat16") && strstr(e.msg, ".pb") && b.n == 0);
    onp_tensor_release(&t);

    static const char *const nul[] = {"ok", "a\0b"};
    size_t lens[2] = {2, 3};
    CHECK(onp_tensor_alloc_strings(&t, 1, dims, lens, NULL) == 0);
    memcpy(onp_tensor_string_at(&t, 0), nul[0], 2);
    memcpy(onp_tensor_string_at(&t, 1), nul[1], 3);
    CHECK(onp_npy_encode(&t, NULL, &b, &e) == -1 && e.code == ONP_ERR_USAGE &&
          strstr(e.msg, "NUL") && b.n == 0);
    onp_tensor_release(&t);

    CHECK(onp_tensor_alloc(&t, ONP_FLOAT, 1, dims, NULL) == 0);
    onp_twrite_opts o = {0};
    o.npy_version = 4;
    CHECK(onp_npy_encode(&t, &o, &b, &e) == -1 && e.code == ONP_ERR_USAGE &&
          !strcmp(e.field, "npy.version"));
    onp_tensor_release(&t);
    onp_buf_free(&b);
}

// --- numpy ---------------------------------------------------------------------------

static const char gen_script[] =
    "import sys, numpy as np\n"
    "from numpy.lib import format as fmt\n"
    "d = sys.argv[1]\n"
    "def s(n, a): np.save(d + '/' + n, a)\n"
    "s('f4', np.arange(6, dtype='<f4').reshape(2, 3))\n"
    "s('f8be', np.arange(5, dtype='>f8') * 1.5)\n"
    "s('fort', np.asfortranarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)))\n"
    "s('fortbe', np.asfortranarray(np.arange(12, dtype='>i8').reshape(3, 4)))\n"
    "s('u', np.array([['h\\u00e9llo', '\\u65e5\\u672c'], ['a\\U0001F600', '']]))\n"
    "s('ube', np.array(['ab', 'c\\u00e9d']).astype('>U3'))\n"
    "s('ufort', np.asfortranarray(np.array([['a', 'bb'], ['ccc', 'd']])))\n"
    "s('s', np.array([b'ab', b'c\\x00d', b'', b'xyz']))\n"
    "s('b', np.array([True, False, True]))\n"
    "s('c8', np.array([1+2j, 3-4j], dtype=np.complex64))\n"
    "s('c16be', np.array([0.5-1j], dtype='>c16'))\n"
    "s('f2', np.array([0.5, -2, np.inf], dtype=np.float16))\n"
    "s('scalar', np.float64(3.25))\n"
    "s('empty', np.zeros((0, 3), dtype='<u2'))\n"
    "s('u64', np.array([2**64 - 1, 7], dtype=np.uint64))\n"
    "s('i8be', np.array([-1, -128, 127], dtype='>i2'))\n"
    "for v in (2, 3):\n"
    "    with open(d + '/v%d.npy' % v, 'wb') as f:\n"
    "        fmt.write_array(f, np.arange(4, dtype='<i8'), version=(v, 0))\n"
    "s('obj', np.array([{'a': 1}, None], dtype=object))\n";

static void test_numpy_files(void)
{
    if (!have_numpy()) SKIP("/usr/bin/python3 has no numpy");
    char dir[] = "/tmp/onp_npy_XXXXXX";
    if (!mkdtemp(dir)) SKIP("no temp dir");
    CHECK(run_py(dir, gen_script) == 0);
    onp_tensor t;
    onp_error e;
    float f4[6];
    memset(f4, 0, sizeof f4);

    CHECK(decode_file(dir, "f4.npy", &t, &e) == 0 && t.dtype == ONP_FLOAT && t.rank == 2 &&
          t.dims[0] == 2 && t.dims[1] == 3);
    if (t.data) memcpy(f4, t.data, sizeof f4);
    CHECK(f4[0] == 0.0f && f4[5] == 5.0f);
    onp_tensor_release(&t);

    CHECK(decode_file(dir, "f8be.npy", &t, &e) == 0 && t.dtype == ONP_DOUBLE && t.count == 5 &&
          onp_tensor_get_f64(&t, 3) == 4.5);
    onp_tensor_release(&t);

    int ok = decode_file(dir, "fort.npy", &t, &e) == 0 && t.dtype == ONP_INT32 && t.rank == 3;
    for (int64_t i = 0; ok && i < 24; i++) ok = onp_tensor_get_f64(&t, i) == (double)i;
    CHECK(ok);
    onp_tensor_release(&t);
    ok = decode_file(dir, "fortbe.npy", &t, &e) == 0 && t.dtype == ONP_INT64 && t.dims[0] == 3;
    for (int64_t i = 0; ok && i < 12; i++) ok = onp_tensor_get_f64(&t, i) == (double)i;
    CHECK(ok);
    onp_tensor_release(&t);

    CHECK(decode_file(dir, "u.npy", &t, &e) == 0 && t.rank == 2 && t.count == 4 &&
          str_is(&t, 0, "h\xc3\xa9llo", 6) && str_is(&t, 1, "\xe6\x97\xa5\xe6\x9c\xac", 6) &&
          str_is(&t, 2, "a\xf0\x9f\x98\x80", 5) && str_is(&t, 3, "", 0));
    onp_tensor_release(&t);
    CHECK(decode_file(dir, "ube.npy", &t, &e) == 0 && str_is(&t, 0, "ab", 2) &&
          str_is(&t, 1, "c\xc3\xa9\x64", 4));
    onp_tensor_release(&t);
    CHECK(decode_file(dir, "ufort.npy", &t, &e) == 0 && str_is(&t, 0, "a", 1) &&
          str_is(&t, 1, "bb", 2) && str_is(&t, 2, "ccc", 3) && str_is(&t, 3, "d", 1));
    onp_tensor_release(&t);
    CHECK(decode_file(dir, "s.npy", &t, &e) == 0 && str_is(&t, 0, "ab", 2) &&
          str_is(&t, 1, "c\0d", 3) && str_is(&t, 2, "", 0) && str_is(&t, 3, "xyz", 3));
    onp_tensor_release(&t);

    CHECK(decode_file(dir, "b.npy", &t, &e) == 0 && t.dtype == ONP_BOOL &&
          !memcmp(t.data, "\1\0\1", 3));
    onp_tensor_release(&t);
    float c8[4] = {0};
    CHECK(decode_file(dir, "c8.npy", &t, &e) == 0 && t.dtype == ONP_COMPLEX64 && t.nbytes == 16);
    if (t.data) memcpy(c8, t.data, 16);
    CHECK(c8[0] == 1 && c8[1] == 2 && c8[2] == 3 && c8[3] == -4);
    onp_tensor_release(&t);
    double c16[2] = {0};
    CHECK(decode_file(dir, "c16be.npy", &t, &e) == 0 && t.dtype == ONP_COMPLEX128);
    if (t.data) memcpy(c16, t.data, 16);
    CHECK(c16[0] == 0.5 && c16[1] == -1);
    onp_tensor_release(&t);
    CHECK(decode_file(dir, "f2.npy", &t, &e) == 0 && t.dtype == ONP_FLOAT16 &&
          onp_tensor_get_f64(&t, 0) == 0.5 && onp_tensor_get_f64(&t, 1) == -2 &&
          onp_tensor_get_f64(&t, 2) > 1e300);
    onp_tensor_release(&t);
    CHECK(decode_file(dir, "scalar.npy", &t, &e) == 0 && t.rank == 0 && t.count == 1 &&
          onp_tensor_get_f64(&t, 0) == 3.25);
    onp_tensor_release(&t);
    CHECK(decode_file(dir, "empty.npy", &t, &e) == 0 && t.dtype == ONP_UINT16 && t.rank == 2 &&
          t.count == 0 && t.dims[1] == 3);
    onp_tensor_release(&t);
    uint64_t u64 = 0;
    CHECK(decode_file(dir, "u64.npy", &t, &e) == 0 && t.dtype == ONP_UINT64);
    if (t.data) memcpy(&u64, t.data, 8);
    CHECK(u64 == UINT64_MAX);
    onp_tensor_release(&t);
    CHECK(decode_file(dir, "i8be.npy", &t, &e) == 0 && t.dtype == ONP_INT16 &&
          onp_tensor_get_f64(&t, 0) == -1 && onp_tensor_get_f64(&t, 1) == -128 &&
          onp_tensor_get_f64(&t, 2) == 127);
    onp_tensor_release(&t);
    CHECK(decode_file(dir, "v2.npy", &t, &e) == 0 && t.count == 4 &&
          onp_tensor_get_f64(&t, 3) == 3);
    onp_tensor_release(&t);
    CHECK(decode_file(dir, "v3.npy", &t, &e) == 0 && t.count == 4);
    onp_tensor_release(&t);
    CHECK(decode_file(dir, "obj.npy", &t, &e) == -1 && e.code == ONP_ERR_INPUT &&
          !strcmp(e.field, "npy.header.descr"));
    rm_dir(dir);
}

/* Our encoder's bytes equal np.save's for the same arrays. */
static const char same_script[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1]\n"
    "np.save(d + '/n1.npy', np.arange(6, dtype='<f4').reshape(2, 3))\n"
    "np.save(d + '/n2.npy', np.asfortranarray(np.arange(6, dtype='<i8').reshape(2, 3)))\n"
    "np.save(d + '/n3.npy', np.array(7, dtype='<u2'))\n"
    "np.save(d + '/n4.npy', np.array([b'ab', b'', b'xyz']))\n"
    "np.save(d + '/n5.npy', np.arange(4, dtype='>f8'))\n"
    "np.save(d + '/n6.npy', np.zeros((0, 12345678901), dtype='|b1'))\n";

static void test_numpy_same_bytes(void)
{
    if (!have_numpy()) SKIP("/usr/bin/python3 has no numpy");
    char dir[] = "/tmp/onp_npy_XXXXXX", path[600];
    if (!mkdtemp(dir)) SKIP("no temp dir");
    CHECK(run_py(dir, same_script) == 0);
    for (int k = 1; k <= 6; k++) {
        char name[16];
        snprintf(name, sizeof name, "n%d.npy", k);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        size_t n = 0;
        uint8_t *want = read_file(path, &n);
        onp_tensor t;
        onp_error e;
        onp_buf b;
        onp_buf_init(&b, 0);
        int rc = want ? onp_npy_decode(want, n, name, NULL, &t, &e) : -1;
        onp_twrite_opts o = {0};
        o.fortran_order = k == 2;
        o.big_endian = k == 5;
        CHECKF(rc == 0 && onp_npy_encode(&t, &o, &b, &e) == 0 && b.n == n && !memcmp(b.p, want, n),
               "%s differs from np.save (%zu vs %zu bytes)", name, b.n, n);
        if (!rc) onp_tensor_release(&t);
        onp_buf_free(&b);
        free(want);
    }
    rm_dir(dir);
}

/* numpy reads what we write, in every layout. */
static const char check_script[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1]\n"
    "exp = np.arange(24, dtype=np.float64).reshape(2, 3, 4)\n"
    "for o in range(16):\n"
    "    a = np.load(d + '/w%d.npy' % o)\n"
    "    assert a.shape == exp.shape and (a == exp).all(), o\n"
    "    assert a.dtype.byteorder == ('>' if o & 1 else '='), (o, a.dtype)\n"
    "    assert a.flags.f_contiguous == bool(o & 2), o\n"
    "s = np.load(d + '/ws.npy')\n"
    "assert s.tolist() == [[b'a', b''], [b'ccc', b'dd']], s\n"
    "c = np.load(d + '/wc.npy')\n"
    "assert c.dtype.str == '>c8' and c.tolist() == [1 + 2j, -3 + 0.5j], c\n";

static void test_numpy_reads_ours(void)
{
    if (!have_numpy()) SKIP("/usr/bin/python3 has no numpy");
    char dir[] = "/tmp/onp_npy_XXXXXX", path[600];
    if (!mkdtemp(dir)) SKIP("no temp dir");
    onp_tensor t;
    onp_buf b;
    int64_t dims[3] = {2, 3, 4};
    CHECK(onp_tensor_alloc(&t, ONP_DOUBLE, 3, dims, NULL) == 0);
    for (int i = 0; i < 24; i++) ((double *)t.data)[i] = i;
    for (int opt = 0; opt < 16; opt++) {
        onp_twrite_opts o = {opt & 1, opt >> 1 & 1, opt >> 2, 0, 0};
        onp_buf_init(&b, 0);
        snprintf(path, sizeof path, "%s/w%d.npy", dir, opt);
        CHECK(onp_npy_encode(&t, &o, &b, NULL) == 0 && write_file(path, b.p, b.n) == 0);
        onp_buf_free(&b);
    }
    onp_tensor_release(&t);
    static const char *const pool[] = {"a", "", "ccc", "dd"};
    int64_t d2[2] = {2, 2};
    CHECK(make_strings(&t, 2, d2, pool, 4) == 0);
    onp_twrite_opts fo = {0, 1, 0, 0, 0};
    onp_buf_init(&b, 0);
    snprintf(path, sizeof path, "%s/ws.npy", dir);
    CHECK(onp_npy_encode(&t, &fo, &b, NULL) == 0 && write_file(path, b.p, b.n) == 0);
    onp_buf_free(&b);
    onp_tensor_release(&t);
    int64_t d1[1] = {2};
    CHECK(onp_tensor_alloc(&t, ONP_COMPLEX64, 1, d1, NULL) == 0);
    const float cv[4] = {1, 2, -3, 0.5f};
    memcpy(t.data, cv, 16);
    onp_twrite_opts bo = {1, 0, 0, 0, 0};
    onp_buf_init(&b, 0);
    snprintf(path, sizeof path, "%s/wc.npy", dir);
    CHECK(onp_npy_encode(&t, &bo, &b, NULL) == 0 && write_file(path, b.p, b.n) == 0);
    onp_buf_free(&b);
    onp_tensor_release(&t);
    CHECK(run_py(dir, check_script) == 0);
    rm_dir(dir);
}

/* The fuzz seeds: those named bad_* are refused, every other one decodes. */
static void test_corpus(void)
{
    DIR *d = opendir("fuzz/corpus/npy");
    if (!d) SKIP("fuzz/corpus/npy not found (run from the repository root)");
    struct dirent *de;
    int seen = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[600];
        size_t n = 0;
        snprintf(path, sizeof path, "fuzz/corpus/npy/%s", de->d_name);
        uint8_t *p = read_file(path, &n);
        onp_tensor t;
        onp_error e;
        int rc = p ? onp_npy_decode(p, n, de->d_name, NULL, &t, &e) : -2;
        int bad = !strncmp(de->d_name, "bad_", 4);
        CHECKF(bad ? rc == -1 : rc == 0, "%s: rc %d %s", de->d_name, rc, rc ? e.msg : "");
        if (rc == 0) onp_tensor_release(&t);
        free(p);
        seen++;
    }
    closedir(d);
    CHECK(seen >= 10);
}

TEST_MAIN(test_corpus, test_roundtrip_numeric, test_roundtrip_strings, test_layout, test_accepts,
          test_malformed, test_encode_refusals, test_numpy_files, test_numpy_same_bytes,
          test_numpy_reads_ours)
