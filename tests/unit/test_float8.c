/*
 * test_float8.c — the four ONNX float8 types (include/onnxparity/float8.h),
 * their TensorProto form and their noise rule (src/compare/float8judge.c).
 *
 * Decoding: all 256 codes of each type against a reference built here
 * another way — a normal code's float32 bit pattern assembled from its
 * fields, a subnormal as an integer times a power of two, the NaN and
 * infinity codes listed from the ONNX table (docs/compare.md) — bit for bit
 * (the sign of zero included).  Steps: for every pair of codes, against
 * their distance in the sorted list of the type's distinct values.  Ulp:
 * against the gap to the neighbour in that list.  TensorProto: typed
 * (int32_data) and raw encodings round-trip every code.  The judge: the
 * same codes pass within the tolerance, one step is within noise (and fails
 * when strict), two steps beyond it, NaN against a number not numeric; the
 * envelope is the largest one-step gap of the output (noise source float8-ulp).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/buf.h"
#include "onnxparity/dtype.h"
#include "onnxparity/float8.h"
#include "onnxparity/noise.h"
#include "onnxparity/tfile.h"
#include "testhelp.h"

typedef struct ref_type {
    int32_t dtype;
    const char *name;
    int ebits, mbits, bias;
    double largest; /* the spec's largest finite value */
} ref_type;

static const ref_type TYPES[] = {
    {ONP_FLOAT8E4M3FN, "float8_e4m3fn", 4, 3, 7, 448.0},
    {ONP_FLOAT8E4M3FNUZ, "float8_e4m3fnuz", 4, 3, 8, 240.0},
    {ONP_FLOAT8E5M2, "float8_e5m2", 5, 2, 15, 57344.0},
    {ONP_FLOAT8E5M2FNUZ, "float8_e5m2fnuz", 5, 2, 16, 57344.0},
};
#define N_TYPES (sizeof TYPES / sizeof TYPES[0])

static uint64_t bits64(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* The ONNX table: which codes are NaN, which infinite. */
static int ref_nan(const ref_type *t, unsigned c)
{
    switch (t->dtype) {
    case ONP_FLOAT8E4M3FN: return c == 0x7f || c == 0xff;
    case ONP_FLOAT8E5M2: return (c & 0x7c) == 0x7c && (c & 3) != 0;
    default: return c == 0x80; /* the fnuz types */
    }
}

static int ref_inf(const ref_type *t, unsigned c)
{
    return t->dtype == ONP_FLOAT8E5M2 && (c == 0x7c || c == 0xfc);
}

/* The value of code c, assembled as a float32 bit pattern (normal) or an
 * integer scaled by a power of two (subnormal). */
static double ref_value(const ref_type *t, unsigned c)
{
    if (ref_nan(t, c)) return NAN;
    unsigned s = c >> 7, e = (c >> t->mbits) & ((1u << t->ebits) - 1),
             m = c & ((1u << t->mbits) - 1);
    double v;
    if (ref_inf(t, c)) {
        v = INFINITY;
    } else if (e) {
        uint32_t u = ((e - (unsigned)t->bias + 127u) << 23) | (m << (23 - t->mbits));
        float f;
        memcpy(&f, &u, 4);
        v = f;
    } else {
        v = (double)m;
        for (int k = 0; k < t->bias - 1 + t->mbits; k++) v /= 2; /* m * 2^(1 - bias - mbits) */
    }
    return s ? -v : v;
}

static void test_decode_every_code(void)
{
    for (size_t k = 0; k < N_TYPES; k++) {
        const ref_type *t = &TYPES[k];
        int bad = 0, nan = 0;
        double largest = 0;
        CHECK(onp_f8_is(t->dtype) && onp_dtype_size(t->dtype) == 1);
        CHECK(!strcmp(onp_dtype_name(t->dtype), t->name) && onp_dtype_parse(t->name) == t->dtype);
        for (unsigned c = 0; c < 256; c++) {
            double want = ref_value(t, c), got = onp_f8_to_f64(t->dtype, (uint8_t)c);
            float got32 = onp_f8_to_f32(t->dtype, (uint8_t)c);
            if (isnan(want)) {
                nan++;
                bad += !isnan(got) || !isnan(got32);
                continue;
            }
            bad += bits64(got) != bits64(want) || bits64((double)got32) != bits64(want);
            if (isfinite(want) && fabs(want) > largest) largest = fabs(want);
        }
        CHECKF(bad == 0, "%s: %d codes decoded wrong", t->name, bad);
        CHECKF(largest == t->largest, "%s: largest %g", t->name, largest);
        CHECK(nan == (t->dtype == ONP_FLOAT8E4M3FN ? 2 : t->dtype == ONP_FLOAT8E5M2 ? 6 : 1));
    }
    /* anchors from the ONNX table */
    CHECK(onp_f8_to_f64(ONP_FLOAT8E4M3FN, 0x7e) == 448.0);
    CHECK(onp_f8_to_f64(ONP_FLOAT8E4M3FN, 0x01) == 0x1p-9);
    CHECK(bits64(onp_f8_to_f64(ONP_FLOAT8E4M3FN, 0x80)) == bits64(-0.0));
    CHECK(isnan(onp_f8_to_f64(ONP_FLOAT8E4M3FNUZ, 0x80)));
    CHECK(onp_f8_to_f64(ONP_FLOAT8E4M3FNUZ, 0x7f) == 240.0);
    CHECK(onp_f8_to_f64(ONP_FLOAT8E5M2, 0xfc) == -INFINITY);
    CHECK(onp_f8_to_f64(ONP_FLOAT8E5M2FNUZ, 0x01) == 0x1p-17);
    CHECK(isnan(onp_f8_to_f64(ONP_FLOAT, 0x3c)) && !onp_f8_is(ONP_BFLOAT16));
    CHECK(onp_f8_eps(ONP_FLOAT8E4M3FN) == 0.125 && onp_f8_eps(ONP_FLOAT8E5M2FNUZ) == 0.25);
    CHECK(onp_dtype_eps(ONP_FLOAT8E5M2) == 0.25 && onp_dtype_eps(ONP_INT8) == 0.0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Index of v in sorted[0..n) (present). */
static int rank_of(const double *sorted, int n, double v)
{
    for (int i = 0; i < n; i++)
        if (sorted[i] == v) return i;
    return -1;
}

static void test_steps_and_ulp(void)
{
    for (size_t k = 0; k < N_TYPES; k++) {
        const ref_type *t = &TYPES[k];
        double vals[256];
        int n = 0;
        for (unsigned c = 0; c < 256; c++) {
            double v = ref_value(t, c);
            if (isnan(v) || (v == 0 && c)) continue; /* zero once */
            vals[n++] = v;
        }
        qsort(vals, (size_t)n, sizeof *vals, cmp_double);
        int bad_steps = 0, bad_ulp = 0, bad_nan = 0;
        for (unsigned a = 0; a < 256; a++) {
            double va = ref_value(t, a);
            for (unsigned b = 0; b < 256; b++) {
                double vb = ref_value(t, b);
                int got = onp_f8_steps(t->dtype, (uint8_t)a, (uint8_t)b);
                if (isnan(va) || isnan(vb)) {
                    bad_nan += got != -1;
                    continue;
                }
                bad_steps += got != abs(rank_of(vals, n, va) - rank_of(vals, n, vb));
            }
            if (isnan(va) || isinf(va)) {
                bad_ulp += !isnan(onp_f8_ulp(t->dtype, (uint8_t)a));
                continue;
            }
            /* the gap to the next magnitude away from zero, among finite values */
            int r = rank_of(vals, n, fabs(va));
            double want =
                r + 1 < n && isfinite(vals[r + 1]) ? vals[r + 1] - vals[r] : vals[r] - vals[r - 1];
            bad_ulp += onp_f8_ulp(t->dtype, (uint8_t)a) != want;
        }
        CHECKF(bad_steps == 0 && bad_nan == 0, "%s: %d step counts wrong, %d NaN pairs", t->name,
               bad_steps, bad_nan);
        CHECKF(bad_ulp == 0, "%s: %d ulps wrong", t->name, bad_ulp);
    }
    CHECK(onp_f8_steps(ONP_FLOAT8E4M3FN, 0x01, 0x81) == 2); /* through zero */
    CHECK(onp_f8_steps(ONP_FLOAT8E4M3FN, 0x00, 0x80) == 0); /* +0, -0 */
    CHECK(onp_f8_steps(ONP_FLOAT8E5M2, 0x7b, 0x7c) == 1);   /* largest, inf */
    CHECK(onp_f8_ulp(ONP_FLOAT8E4M3FN, 0x38) == 0.125);     /* at 1.0 */
    CHECK(onp_f8_ulp(ONP_FLOAT8E4M3FN, 0x7e) == 32.0);      /* 448: down to 416 */
    CHECK(onp_f8_steps(ONP_INT8, 1, 2) == -1);
}

static void test_tensorproto_every_code(void)
{
    for (size_t k = 0; k < N_TYPES; k++) {
        onp_tensor t, back;
        onp_error e;
        int64_t dims[1] = {256};
        memset(&e, 0, sizeof e);
        if (onp_tensor_alloc(&t, TYPES[k].dtype, 1, dims, &e)) {
            CHECK(0);
            return;
        }
        for (int c = 0; c < 256; c++) ((uint8_t *)t.data)[c] = (uint8_t)c;
        for (int typed = 0; typed < 2; typed++) {
            onp_twrite_opts o;
            memset(&o, 0, sizeof o);
            o.pb_typed = typed;
            onp_buf b;
            onp_buf_init(&b, 0);
            int rc = onp_pb_tensor_encode(&t, &o, &b, &e);
            CHECK(rc == 0 && !b.failed);
            rc = onp_pb_tensor_decode(b.p, b.n, "f8.pb", 0, &back, &e);
            CHECKF(rc == 0, "%s typed=%d: %s", TYPES[k].name, typed, e.msg);
            if (!rc) {
                CHECK(back.dtype == TYPES[k].dtype && back.count == 256 &&
                      !memcmp(back.data, t.data, 256));
                CHECK(onp_tensor_get_f64(&back, 0x38) == ref_value(&TYPES[k], 0x38));
                onp_tensor_release(&back);
            }
            onp_buf_free(&b);
        }
        onp_tensor_release(&t);
    }
}

/* A [2, 4] tensor of float8 codes of type dt. */
static void codes(onp_tensor *t, int32_t dt, const uint8_t *c)
{
    int64_t dims[2] = {2, 4};
    onp_error e;
    memset(&e, 0, sizeof e);
    if (onp_tensor_alloc(t, dt, 2, dims, &e)) abort();
    memcpy(t->data, c, 8);
}

static onp_judgment judge_dt(int32_t dt, const uint8_t *exp, const uint8_t *act, int strict)
{
    onp_tensor E, A;
    onp_judge_opts o;
    onp_metrics m;
    onp_judgment j;
    onp_error e;
    memset(&e, 0, sizeof e);
    codes(&E, dt, exp);
    codes(&A, dt, act);
    onp_judge_opts_init(&o);
    o.strict = strict;
    if (onp_judge_value(&E, &A, NULL, NULL, &o, &m, &j, &e)) j.verdict = (onp_verdict)-1;
    onp_tensor_release(&E);
    onp_tensor_release(&A);
    return j;
}

static onp_judgment judge(const uint8_t *exp, const uint8_t *act, int strict)
{
    return judge_dt(ONP_FLOAT8E4M3FN, exp, act, strict);
}

static void test_judge_by_own_ulp(void)
{
    /* 1.0, 1.5, -2.0, 448, 0, 2^-9, -240, 3.25 */
    const uint8_t base[8] = {0x38, 0x3c, 0xc0, 0x7e, 0x00, 0x01, 0xf7, 0x45};
    uint8_t one[8], two[8], nan[8];
    memcpy(one, base, 8), memcpy(two, base, 8), memcpy(nan, base, 8);
    one[1] = 0x3d; /* 1.5 -> 1.625: one step */
    one[3] = 0x7d; /* 448 -> 416: one step */
    two[2] = 0xc2; /* -2.0 -> -2.5: two steps */
    nan[0] = 0x7f;
    onp_judgment j = judge(base, base, 0);
    CHECK(j.verdict == ONP_VERDICT_WITHIN_TOL && j.pass && j.ratio == 0);
    j = judge(base, one, 0);
    CHECKF(j.verdict == ONP_VERDICT_WITHIN_NOISE && j.pass, "verdict %d", (int)j.verdict);
    CHECK(j.ratio == 1 && j.envelope_max == 32.0 && j.gap_max == 32.0 && !j.beyond_envelope);
    CHECK(j.noise.src == ONP_NOISE_ULP && !strcmp(onp_noise_src_name(j.noise.src), "float8-ulp"));
    j = judge(base, one, 1);
    CHECK(j.verdict == ONP_VERDICT_WITHIN_NOISE && !j.pass);
    j = judge(base, two, 0);
    CHECKF(j.verdict == ONP_VERDICT_BEYOND_NOISE && !j.pass && j.ratio == 2 && j.beyond_envelope,
           "verdict %d ratio %g", (int)j.verdict, j.ratio);
    j = judge(base, nan, 0);
    CHECK(j.verdict == ONP_VERDICT_NOT_NUMERIC && !j.pass);
    /* E5M2: its infinity is one step above the largest finite value
     * (onp_f8_steps), yet an infinity against a number is not numeric (a
     * saturating Cast against torch's inf on overflow), and -inf against
     * +inf neither; both sides infinite alike agree */
    const uint8_t e5[8] = {0x3c, 0x7b, 0xfb, 0x7c, 0x00, 0x01, 0x80, 0x40};
    uint8_t inf1[8], flip[8];
    memcpy(inf1, e5, 8), memcpy(flip, e5, 8);
    inf1[1] = 0x7c; /* 57344 -> +inf */
    flip[3] = 0xfc; /* +inf -> -inf */
    CHECK(onp_f8_steps(ONP_FLOAT8E5M2, 0x7b, 0x7c) == 1);
    j = judge_dt(ONP_FLOAT8E5M2, e5, inf1, 0);
    CHECKF(j.verdict == ONP_VERDICT_NOT_NUMERIC && !j.pass, "verdict %d", (int)j.verdict);
    j = judge_dt(ONP_FLOAT8E5M2, e5, flip, 0);
    CHECK(j.verdict == ONP_VERDICT_NOT_NUMERIC && !j.pass);
    j = judge_dt(ONP_FLOAT8E5M2, e5, e5, 0);
    CHECK(j.verdict == ONP_VERDICT_WITHIN_TOL && j.pass && j.ratio == 0);
}

TEST_MAIN(test_decode_every_code, test_steps_and_ulp, test_tensorproto_every_code,
          test_judge_by_own_ulp)
