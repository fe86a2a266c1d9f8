/*
 * test_npz.c — the .npz reader and writer (src/tfile/npz.c).
 *
 * Round trips with several members, stored and deflate, in memory and through
 * a file; archives written by numpy (np.savez, np.savez_compressed, and one
 * rewritten with zip64 end records) read and checked value by value; numpy
 * reading ours; and hostile archives made by patching bytes of valid ones:
 * unsafe and duplicate names, a zip bomb whose declared size is small, a
 * member over the caller's cap, bad CRCs, unknown methods, truncation.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zip.h>

#include "onnxparity/tfile.h"
#include "testhelp.h"

#define PY "/usr/bin/python3"

// --- helpers -------------------------------------------------------------------

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

static void put32(uint8_t *p, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    memcpy(p, b, 4);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Replace every occurrence of `from` with `to` (same length); the count. */
static int patch_all(uint8_t *p, size_t n, const void *from, const void *to, size_t len)
{
    int k = 0;
    for (size_t i = 0; i + len <= n; i++)
        if (!memcmp(p + i, from, len)) {
            memcpy(p + i, to, len);
            k++;
        }
    return k;
}

/* Offset of the first record with signature `sig` ("PK\1\2", ...), or -1. */
static long find_sig(const uint8_t *p, size_t n, const char *sig)
{
    for (size_t i = 0; i + 4 <= n; i++)
        if (!memcmp(p + i, sig, 4)) return (long)i;
    return -1;
}

static uint64_t rng = 88172645463325252u;

static void fill(onp_tensor *t)
{
    uint8_t *p = t->data;
    for (size_t i = 0; i < t->nbytes; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        p[i] = t->dtype == ONP_BOOL ? (uint8_t)(rng & 1) : (uint8_t)(rng >> 32);
    }
}

/* A set of named tensors of several dtypes, shapes and a string one. */
enum { NT = 6 };
static void make_set(onp_tensor *ts)
{
    static const struct {
        const char *name;
        int32_t dtype;
        int rank;
        int64_t dims[3];
    } spec[NT - 1] = {{"a", ONP_FLOAT, 2, {3, 4}},
                      {"dir/b", ONP_INT64, 0, {0}},
                      {"empty", ONP_BOOL, 2, {0, 5}},
                      {"cplx", ONP_COMPLEX128, 2, {2, 2}},
                      {"zeros", ONP_UINT16, 1, {2000}}};
    for (int i = 0; i < NT - 1; i++) {
        CHECK(onp_tensor_alloc(&ts[i], spec[i].dtype, spec[i].rank, spec[i].dims, NULL) == 0);
        if (i != NT - 2) fill(&ts[i]);
        CHECK(onp_tensor_set_name(&ts[i], spec[i].name, NULL) == 0);
    }
    static const char *const words[3] = {"one", "", "thr\xc3\xa9\x65"};
    size_t lens[3] = {3, 0, 6};
    int64_t d[1] = {3};
    CHECK(onp_tensor_alloc_strings(&ts[NT - 1], 1, d, lens, NULL) == 0);
    for (int i = 0; i < 3; i++) memcpy(onp_tensor_string_at(&ts[NT - 1], i), words[i], lens[i]);
    CHECK(onp_tensor_set_name(&ts[NT - 1], "str", NULL) == 0);
}

static void release_set(onp_tensor *ts, size_t n)
{
    for (size_t i = 0; i < n; i++) onp_tensor_release(&ts[i]);
}

/* Encode the set into *b. */
static int encode_set(onp_tensor *ts, size_t n, int deflate, onp_buf *b)
{
    const onp_tensor *ptrs[NT];
    onp_twrite_opts o = {0};
    o.deflate = deflate;
    for (size_t i = 0; i < n; i++) ptrs[i] = &ts[i];
    onp_buf_init(b, 0);
    onp_error e;
    if (onp_npz_encode(ptrs, n, &o, b, &e)) {
        fprintf(stderr, "npz encode: %s: %s\n", e.field, e.msg);
        return -1;
    }
    return 0;
}

/* The compression method of each member, through libzip directly. */
static int methods(const uint8_t *p, size_t n, int *out, int max)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *s = zip_source_buffer_create(p, n, 0, &ze);
    zip_t *za = s ? zip_open_from_source(s, ZIP_RDONLY, &ze) : NULL;
    zip_error_fini(&ze);
    if (!za) {
        if (s) zip_source_free(s);
        return -1;
    }
    int k = (int)zip_get_num_entries(za, 0);
    for (int i = 0; i < k && i < max; i++) {
        zip_stat_t st;
        zip_stat_index(za, (zip_uint64_t)i, 0, &st);
        out[i] = st.comp_method;
    }
    zip_discard(za);
    return k;
}

// --- round trips -------------------------------------------------------------------

static void check_set(onp_npz *z, onp_tensor *ts)
{
    CHECK(onp_npz_count(z) == NT);
    for (size_t i = 0; i < NT && onp_npz_count(z) == NT; i++) {
        onp_tensor t;
        onp_error e;
        CHECK(!strcmp(onp_npz_name(z, i), ts[i].name));
        CHECK(onp_npz_find(z, ts[i].name) == (long)i);
        CHECKF(onp_npz_read(z, i, &t, &e) == 0, "%s: %s", e.field, e.msg);
        CHECK(onp_tensor_equal(&t, &ts[i]) && t.name && !strcmp(t.name, ts[i].name));
        onp_tensor_release(&t);
    }
    CHECK(onp_npz_find(z, "missing") == -1 && onp_npz_find(z, "a.npy") == -1);
    CHECK(onp_npz_name(z, NT) == NULL);
    onp_tensor t;
    onp_error e;
    CHECK(onp_npz_read(z, NT, &t, &e) == -1 && e.code == ONP_ERR_USAGE);
}

static void test_roundtrip(void)
{
    onp_tensor ts[NT];
    make_set(ts);
    for (int deflate = 0; deflate < 2; deflate++) {
        onp_buf b;
        onp_npz *z = NULL;
        onp_error e;
        CHECK(encode_set(ts, NT, deflate, &b) == 0);
        int m[NT] = {-1, -1, -1, -1, -1, -1};
        CHECK(methods(b.p, b.n, m, NT) == NT);
        CHECK(m[0] == (deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE));
        CHECK(m[4] == (deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE)); /* zeros compress */
        CHECKF(onp_npz_open_mem(b.p, b.n, "rt.npz", NULL, &z, &e) == 0, "%s", e.msg);
        if (z) check_set(z, ts);
        onp_npz_close(z);

        /* reproducible: the same tensors give the same bytes */
        onp_buf b2;
        CHECK(encode_set(ts, NT, deflate, &b2) == 0);
        CHECK(b.n == b2.n && !memcmp(b.p, b2.p, b.n));
        onp_buf_free(&b2);
        onp_buf_free(&b);
    }
    /* member options pass through: big-endian Fortran-order members */
    const onp_tensor *ptrs[NT];
    for (int i = 0; i < NT; i++) ptrs[i] = &ts[i];
    onp_twrite_opts o = {1, 1, 2, 1, 0};
    onp_buf b;
    onp_buf_init(&b, 0);
    onp_npz *z = NULL;
    CHECK(onp_npz_encode(ptrs, NT, &o, &b, NULL) == 0);
    CHECK(onp_npz_open_mem(b.p, b.n, "rt.npz", NULL, &z, NULL) == 0);
    if (z) check_set(z, ts);
    onp_npz_close(z);
    onp_buf_free(&b);

    /* through a file */
    char dir[] = "/tmp/onp_npz_XXXXXX", path[600];
    if (mkdtemp(dir)) {
        snprintf(path, sizeof path, "%s/x.npz", dir);
        CHECK(encode_set(ts, NT, 1, &b) == 0 && write_file(path, b.p, b.n) == 0);
        onp_buf_free(&b);
        onp_error e;
        z = NULL;
        CHECK(onp_npz_open(path, NULL, &z, &e) == 0);
        if (z) check_set(z, ts);
        onp_npz_close(z);
        snprintf(path, sizeof path, "%s/missing.npz", dir);
        CHECK(onp_npz_open(path, NULL, &z, &e) == -1 && e.code == ONP_ERR_IO && z == NULL);
        rm_dir(dir);
    }
    release_set(ts, NT);
    onp_npz_close(NULL);
}

static void test_empty_archive(void)
{
    onp_buf b;
    onp_npz *z = NULL;
    onp_buf_init(&b, 0);
    CHECK(onp_npz_encode(NULL, 0, NULL, &b, NULL) == 0 && b.n == 22);
    CHECK(onp_npz_open_mem(b.p, b.n, "e.npz", NULL, &z, NULL) == 0 && onp_npz_count(z) == 0);
    CHECK(onp_npz_find(z, "x") == -1);
    onp_npz_close(z);
    onp_buf_free(&b);
}

// --- malformed archives -------------------------------------------------------------

static void refuse_open(const uint8_t *p, size_t n, onp_errcode code, const char *field,
                        const char *msg, int line)
{
    onp_npz *z = (onp_npz *)(uintptr_t)1; /* the call must reset it to NULL */
    onp_error e;
    onp_error_clear(&e);
    int rc = onp_npz_open_mem(p, n, "bad.npz", NULL, &z, &e);
    CHECKF(rc == -1 && z == NULL && e.code == code && !strcmp(e.field, field) &&
               !strcmp(e.file, "bad.npz") && (!msg || strstr(e.msg, msg)),
           "line %d: rc %d code %s field '%s' msg '%s'", line, rc, onp_errcode_name(e.code),
           e.field, e.msg);
    if (!rc) onp_npz_close(z);
}

/* The archive opens but reading member 0 fails as described. */
static void refuse_read(const uint8_t *p, size_t n, size_t max, onp_errcode code, const char *field,
                        const char *msg, int line)
{
    onp_npz *z = NULL;
    onp_error e;
    onp_tensor t;
    onp_tread_opts ro = {max};
    onp_error_clear(&e);
    int rc = onp_npz_open_mem(p, n, "bad.npz", &ro, &z, &e);
    CHECKF(rc == 0, "line %d: open failed: %s", line, e.msg);
    if (rc) return;
    rc = onp_npz_read(z, 0, &t, &e);
    CHECKF(rc == -1 && e.code == code && !strcmp(e.field, field) && (!msg || strstr(e.msg, msg)) &&
               t.data == NULL,
           "line %d: rc %d code %s field '%s' msg '%s'", line, rc, onp_errcode_name(e.code),
           e.field, e.msg);
    if (!rc) onp_tensor_release(&t);
    onp_npz_close(z);
}

#define REFUSE_OPEN(p, n, code, field, msg) refuse_open(p, n, code, field, msg, __LINE__)
#define REFUSE_READ(p, n, max, code, field, msg) refuse_read(p, n, max, code, field, msg, __LINE__)

/* One float32 member called `name` (10 chars + ".npy"), stored or deflated. */
static void one_member(const char *name, int64_t elems, int deflate, onp_buf *b)
{
    onp_tensor t;
    int64_t dims[1] = {elems};
    CHECK(onp_tensor_alloc(&t, ONP_FLOAT, 1, dims, NULL) == 0);
    CHECK(onp_tensor_set_name(&t, name, NULL) == 0);
    CHECK(encode_set(&t, 1, deflate, b) == 0);
    onp_tensor_release(&t);
}

static void test_bad_names(void)
{
    static const struct {
        const char *to; /* replaces "QQQQQQQQQQ.npy" */
        const char *msg;
    } cases[] = {
        {"QQQQ/../QQ.npy", "\"..\""},     {"/QQQQQQQQQ.npy", "absolute"},
        {"QQQQ\\QQQQQ.npy", "backslash"}, {"Q.npy\0QQQQQQQQ", "NUL"},
        {"QQQQQQQQQQ.npz", ".npy"},       {"QQQQQQQQQQQ/QQ", ".npy"},
        {"..QQQQQQQQ.npy", "\"..\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        onp_buf b;
        one_member("QQQQQQQQQQ", 4, 0, &b);
        CHECK(patch_all(b.p, b.n, "QQQQQQQQQQ.npy", cases[i].to, 14) == 2);
        REFUSE_OPEN(b.p, b.n, ONP_ERR_INPUT, "npz.member", cases[i].msg);
        onp_buf_free(&b);
    }
    /* duplicates: two members, the second renamed to the first */
    onp_tensor ts[2];
    int64_t d[1] = {3};
    for (int i = 0; i < 2; i++) {
        CHECK(onp_tensor_alloc(&ts[i], ONP_INT8, 1, d, NULL) == 0);
        CHECK(onp_tensor_set_name(&ts[i], i ? "QQQQQQQQQ2" : "QQQQQQQQQ1", NULL) == 0);
    }
    onp_buf b;
    CHECK(encode_set(ts, 2, 0, &b) == 0);
    CHECK(patch_all(b.p, b.n, "QQQQQQQQQ2", "QQQQQQQQQ1", 10) == 2);
    REFUSE_OPEN(b.p, b.n, ONP_ERR_INPUT, "npz.member", "duplicate");
    onp_buf_free(&b);
    release_set(ts, 2);
}

static void test_bad_archives(void)
{
    onp_buf b;
    static const uint8_t junk[64] = "this is not a zip archive at all, just some words.";
    REFUSE_OPEN(junk, sizeof junk, ONP_ERR_FORMAT, "npz", NULL);
    REFUSE_OPEN(NULL, 0, ONP_ERR_FORMAT, "npz", "empty");

    one_member("QQQQQQQQQQ", 1000, 1, &b);
    REFUSE_OPEN(b.p, b.n - 30, ONP_ERR_FORMAT, "npz", NULL);      /* end record cut */
    REFUSE_OPEN(b.p + 10, b.n - 10, ONP_ERR_FORMAT, "npz", NULL); /* start cut */

    /* zip bomb: the member claims 100 bytes but inflates to 4128 */
    long lh = find_sig(b.p, b.n, "PK\3\4"), cd = find_sig(b.p, b.n, "PK\1\2");
    CHECK(lh == 0 && cd > 0 && get32(b.p + 22) == 4128 && get32(b.p + cd + 24) == 4128);
    put32(b.p + 22, 100);
    put32(b.p + cd + 24, 100);
    REFUSE_READ(b.p, b.n, 0, ONP_ERR_FORMAT, "npz.member", "inflates past its declared size");
    /* the other way: it claims more than it holds */
    put32(b.p + 22, 5000);
    put32(b.p + cd + 24, 5000);
    REFUSE_READ(b.p, b.n, 0, ONP_ERR_FORMAT, "npz.member", "ends after 4128");
    put32(b.p + 22, 4128);
    put32(b.p + cd + 24, 4128);
    /* inflated size over the caller's cap */
    REFUSE_READ(b.p, b.n, 4000, ONP_ERR_INPUT, "npz.member", "limit");
    /* an unknown compression method (12 = bzip2) */
    b.p[8] = 12;
    b.p[cd + 10] = 12;
    REFUSE_READ(b.p, b.n, 0, ONP_ERR_INPUT, "npz.member", "method");
    onp_buf_free(&b);

    /* a stored member with a flipped data byte fails its CRC */
    one_member("QQQQQQQQQQ", 16, 0, &b);
    b.p[30 + (b.p[26] | b.p[27] << 8) + (b.p[28] | b.p[29] << 8) + 128 + 3] ^= 0x40;
    REFUSE_READ(b.p, b.n, 0, ONP_ERR_FORMAT, "npz.member", "cannot be read");
    onp_buf_free(&b);
}

/* A member whose npy bytes are bad (valid CRC): the error names member, field. */
static void test_bad_member_npy(void)
{
    /* write by hand: libzip computes the CRC of whatever bytes we give it */
    static const char bad[] = "\x93NUMPY\x01\x00\x0f\x00{'descr': '|O'}";
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
    zip_t *za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
    zip_source_keep(src);
    zip_source_t *m = zip_source_buffer_create(bad, sizeof bad - 1, 0, &ze);
    CHECK(zip_file_add(za, "obj.npy", m, 0) == 0);
    CHECK(zip_close(za) == 0);
    uint8_t out[1024];
    zip_int64_t n = 0;
    if (zip_source_open(src) == 0) {
        n = zip_source_read(src, out, sizeof out);
        zip_source_close(src);
    }
    zip_source_free(src);
    zip_error_fini(&ze);
    onp_npz *z = NULL;
    onp_error e;
    onp_tensor r;
    CHECK(n > 0 && onp_npz_open_mem(out, (size_t)n, "bad.npz", NULL, &z, &e) == 0);
    CHECK(z && onp_npz_read(z, 0, &r, &e) == -1 && e.code == ONP_ERR_INPUT &&
          !strcmp(e.field, "npz.member.npy.header.descr") && !strcmp(e.file, "bad.npz:obj"));
    onp_npz_close(z);
}

static void test_encode_refusals(void)
{
    onp_tensor ts[2];
    int64_t d[1] = {3};
    onp_error e;
    onp_buf b;
    onp_buf_init(&b, 0);
    for (int i = 0; i < 2; i++) CHECK(onp_tensor_alloc(&ts[i], ONP_INT8, 1, d, NULL) == 0);
    const onp_tensor *p[2] = {&ts[0], &ts[1]};
    CHECK(onp_npz_encode(p, 2, NULL, &b, &e) == -1 && e.code == ONP_ERR_USAGE &&
          strstr(e.msg, "no name"));
    CHECK(onp_tensor_set_name(&ts[0], "x", NULL) == 0 &&
          onp_tensor_set_name(&ts[1], "x", NULL) == 0);
    CHECK(onp_npz_encode(p, 2, NULL, &b, &e) == -1 && e.code == ONP_ERR_USAGE &&
          !strcmp(e.field, "npz.member") && strstr(e.msg, "two tensors"));
    static const char *const unsafe[] = {"../x", "/abs", "a\\b", "", "a/../b"};
    for (size_t i = 0; i < sizeof unsafe / sizeof unsafe[0]; i++) {
        CHECK(onp_tensor_set_name(&ts[1], unsafe[i], NULL) == 0);
        CHECK(onp_npz_encode(p, 2, NULL, &b, &e) == -1 && e.code == ONP_ERR_USAGE &&
              !strcmp(e.field, "npz.member"));
    }
    onp_tensor bf;
    CHECK(onp_tensor_alloc(&bf, ONP_BFLOAT16, 1, d, NULL) == 0);
    CHECK(onp_tensor_set_name(&bf, "bf", NULL) == 0);
    const onp_tensor *q[1] = {&bf};
    CHECK(onp_npz_encode(q, 1, NULL, &b, &e) == -1 && e.code == ONP_ERR_USAGE &&
          !strcmp(e.field, "npz.member.npy.header.descr") && strstr(e.msg, "'bf.npy'"));
    CHECK(b.n == 0);
    /* a member name longer than the message: the name is kept, the line cut at its bound */
    char longname[800];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK(onp_tensor_set_name(&bf, longname, NULL) == 0);
    CHECK(onp_npz_encode(q, 1, NULL, &b, &e) == -1 && e.code == ONP_ERR_USAGE &&
          e.msg[0] == '\'' && strlen(e.msg) == sizeof e.msg - 1 && e.msg[700] == 'n');
    onp_tensor_release(&bf);
    release_set(ts, 2);
    onp_buf_free(&b);
}

// --- numpy ------------------------------------------------------------------------------

static const char gen_script[] =
    "import sys, struct, numpy as np\n"
    "d = sys.argv[1]\n"
    "arrs = dict(f=np.arange(6, dtype='<f4').reshape(2, 3),\n"
    "            be=np.arange(5, dtype='>f8') * 1.5,\n"
    "            fort=np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4)),\n"
    "            u=np.array(['h\\u00e9llo', '', 'ab']),\n"
    "            s=np.array([b'ab', b'c']),\n"
    "            scalar=np.int64(-7))\n"
    "np.savez(d + '/plain.npz', **arrs)\n"
    "np.savez_compressed(d + '/comp.npz', **arrs)\n"
    "np.savez(d + '/pos.npz', np.arange(3, dtype=np.uint8), np.ones(2))\n"
    "np.savez(d + '/empty.npz')\n"
    "np.savez(d + '/obj.npz', o=np.array([None, 1], dtype=object))\n"
    "# the same archive with zip64 end records (counts and offsets in them)\n"
    "b = open(d + '/comp.npz', 'rb').read()\n"
    "e = b.rfind(b'PK\\x05\\x06')\n"
    "_, _, _, _, cnt, size, off, clen = struct.unpack('<IHHHHIIH', b[e:e + 22])\n"
    "z64 = struct.pack('<IQHHIIQQQQ', 0x06064b50, 44, 45, 45, 0, 0, cnt, cnt, size, off)\n"
    "loc = struct.pack('<IIQI', 0x07064b50, 0, e, 1)\n"
    "eocd = struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,\n"
    "                   0xFFFFFFFF, 0)\n"
    "open(d + '/z64.npz', 'wb').write(b[:e] + z64 + loc + eocd)\n";

static void check_numpy_set(onp_npz *z, const char *label)
{
    onp_tensor t;
    onp_error e;
    long i;
    CHECKF(onp_npz_count(z) == 6, "%s", label);
    i = onp_npz_find(z, "f");
    CHECK(i >= 0 && onp_npz_read(z, (size_t)i, &t, &e) == 0 && t.dtype == ONP_FLOAT &&
          t.count == 6 && onp_tensor_get_f64(&t, 5) == 5 && !strcmp(t.name, "f"));
    onp_tensor_release(&t);
    i = onp_npz_find(z, "be");
    CHECK(i >= 0 && onp_npz_read(z, (size_t)i, &t, &e) == 0 && t.dtype == ONP_DOUBLE &&
          onp_tensor_get_f64(&t, 4) == 6.0);
    onp_tensor_release(&t);
    i = onp_npz_find(z, "fort");
    int ok = i >= 0 && onp_npz_read(z, (size_t)i, &t, &e) == 0 && t.rank == 2 && t.dims[0] == 3;
    for (int64_t k = 0; ok && k < 12; k++) ok = onp_tensor_get_f64(&t, k) == (double)k;
    CHECK(ok);
    onp_tensor_release(&t);
    i = onp_npz_find(z, "u");
    CHECK(i >= 0 && onp_npz_read(z, (size_t)i, &t, &e) == 0 && t.dtype == ONP_STRING &&
          t.count == 3 && t.strings[0].n == 6 && !memcmp(t.strings[0].p, "h\xc3\xa9llo", 6) &&
          t.strings[1].n == 0 && t.strings[2].n == 2);
    onp_tensor_release(&t);
    i = onp_npz_find(z, "s");
    CHECK(i >= 0 && onp_npz_read(z, (size_t)i, &t, &e) == 0 && t.count == 2 &&
          t.strings[1].n == 1 && t.strings[1].p[0] == 'c');
    onp_tensor_release(&t);
    i = onp_npz_find(z, "scalar");
    CHECK(i >= 0 && onp_npz_read(z, (size_t)i, &t, &e) == 0 && t.rank == 0 &&
          onp_tensor_get_f64(&t, 0) == -7);
    onp_tensor_release(&t);
}

static void test_numpy_files(void)
{
    if (!have_numpy()) SKIP("/usr/bin/python3 has no numpy");
    char dir[] = "/tmp/onp_npz_XXXXXX", path[600];
    if (!mkdtemp(dir)) SKIP("no temp dir");
    CHECK(run_py(dir, gen_script) == 0);
    static const char *const files[] = {"plain.npz", "comp.npz", "z64.npz"};
    for (int k = 0; k < 3; k++) {
        onp_npz *z = NULL;
        onp_error e;
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        CHECKF(onp_npz_open(path, NULL, &z, &e) == 0, "%s: %s", files[k], e.msg);
        if (z) check_numpy_set(z, files[k]);
        onp_npz_close(z);
    }
    onp_npz *z = NULL;
    onp_error e;
    onp_tensor t;
    snprintf(path, sizeof path, "%s/pos.npz", dir);
    CHECK(onp_npz_open(path, NULL, &z, &e) == 0 && onp_npz_count(z) == 2 &&
          !strcmp(onp_npz_name(z, 0), "arr_0") && onp_npz_find(z, "arr_1") == 1);
    onp_npz_close(z);
    snprintf(path, sizeof path, "%s/empty.npz", dir);
    CHECK(onp_npz_open(path, NULL, &z, &e) == 0 && onp_npz_count(z) == 0);
    onp_npz_close(z);
    snprintf(path, sizeof path, "%s/obj.npz", dir);
    CHECK(onp_npz_open(path, NULL, &z, &e) == 0 && onp_npz_read(z, 0, &t, &e) == -1 &&
          e.code == ONP_ERR_INPUT && strstr(e.msg, "object/pickled"));
    onp_npz_close(z);
    rm_dir(dir);
}

static const char check_script[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1]\n"
    "for name in ('stored.npz', 'deflate.npz'):\n"
    "    z = np.load(d + '/' + name)\n"
    "    assert sorted(z.files) == ['dir/b', 'fort', 'str'], z.files\n"
    "    assert z['dir/b'].shape == () and z['dir/b'] == -5\n"
    "    f = z['fort']\n"
    "    assert f.flags.f_contiguous and f.dtype.str == '>f4'\n"
    "    assert (f == np.arange(12, dtype=np.float32).reshape(3, 4)).all()\n"
    "    assert z['str'].tolist() == [b'x', b'yy'], z['str']\n";

static void test_numpy_reads_ours(void)
{
    if (!have_numpy()) SKIP("/usr/bin/python3 has no numpy");
    char dir[] = "/tmp/onp_npz_XXXXXX", path[600];
    if (!mkdtemp(dir)) SKIP("no temp dir");
    onp_tensor ts[3];
    int64_t d2[2] = {3, 4}, d1[1] = {2};
    CHECK(onp_tensor_alloc(&ts[0], ONP_INT64, 0, NULL, NULL) == 0);
    int64_t v = -5;
    memcpy(ts[0].data, &v, 8);
    CHECK(onp_tensor_alloc(&ts[1], ONP_FLOAT, 2, d2, NULL) == 0);
    for (int i = 0; i < 12; i++) ((float *)ts[1].data)[i] = (float)i;
    CHECK(onp_tensor_alloc_strings(&ts[2], 1, d1, (size_t[]){1, 2}, NULL) == 0);
    memcpy(onp_tensor_string_at(&ts[2], 0), "x", 1);
    memcpy(onp_tensor_string_at(&ts[2], 1), "yy", 2);
    static const char *const names[3] = {"dir/b", "fort", "str"};
    for (int i = 0; i < 3; i++) CHECK(onp_tensor_set_name(&ts[i], names[i], NULL) == 0);
    const onp_tensor *p[3] = {&ts[0], &ts[1], &ts[2]};
    for (int deflate = 0; deflate < 2; deflate++) {
        onp_twrite_opts o = {1, 1, 0, deflate, 0};
        onp_buf b;
        onp_buf_init(&b, 0);
        snprintf(path, sizeof path, "%s/%s", dir, deflate ? "deflate.npz" : "stored.npz");
        CHECK(onp_npz_encode(p, 3, &o, &b, NULL) == 0 && write_file(path, b.p, b.n) == 0);
        onp_buf_free(&b);
    }
    CHECK(run_py(dir, check_script) == 0);
    release_set(ts, 3);
    rm_dir(dir);
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

/* The fuzz seeds: those named bad_* fail to open or to read some member;
 * every member of the others reads, except object arrays. */
static void test_corpus(void)
{
    DIR *d = opendir("fuzz/corpus/npz");
    if (!d) SKIP("fuzz/corpus/npz not found (run from the repository root)");
    struct dirent *de;
    int seen = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[600];
        size_t n = 0;
        snprintf(path, sizeof path, "fuzz/corpus/npz/%s", de->d_name);
        uint8_t *p = read_file(path, &n);
        onp_npz *z = NULL;
        onp_error e;
        int failed = !p || onp_npz_open_mem(p, n, de->d_name, NULL, &z, &e) != 0;
        for (size_t i = 0; !failed && i < onp_npz_count(z); i++) {
            onp_tensor t;
            failed = onp_npz_read(z, i, &t, &e) != 0;
            onp_tensor_release(&t);
        }
        onp_npz_close(z);
        int bad = !strncmp(de->d_name, "bad_", 4) || !strcmp(de->d_name, "object.npz");
        CHECKF(failed == bad, "%s: %s", de->d_name, failed ? e.msg : "read");
        free(p);
        seen++;
    }
    closedir(d);
    CHECK(seen >= 10);
}

TEST_MAIN(test_corpus, test_roundtrip, test_empty_archive, test_bad_names, test_bad_archives,
          test_bad_member_npy, test_encode_refusals, test_numpy_files, test_numpy_reads_ours)
