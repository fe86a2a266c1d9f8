/*
 * test_compare_ref.c — the walk against a float64 reference
 * (src/compare/compare_ref.h) gives, bit for bit, what the three
 * onp_compare calls it replaces give: expected against actual (every
 * field), the reference's gap to each side (max, rms, NaN/inf mismatches).
 * Every float dtype it walks, several blocks with a tail, NaN and
 * infinities planted in some blocks (those go through the exact loop),
 * reference zeros (1 / |R| infinite), one thread and two.
 */
#include <math.h>
#include <stdint.h>

#include "compare/compare_ref.h"
#include "onnxparity/half.h"
#include "onnxparity/tensor.h"
#include "testhelp.h"

static uint64_t rng = 0x243f6a8885a308d3ull;

static double uniform(void) /* [-1, 1) */
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

static void put(onp_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case ONP_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case ONP_DOUBLE: ((double *)t->data)[i] = v; break;
    case ONP_FLOAT16: ((uint16_t *)t->data)[i] = onp_f64_to_f16(v); break;
    case ONP_BFLOAT16: ((uint16_t *)t->data)[i] = onp_f64_to_bf16(v); break;
    }
}

/* R, E ~ R rounded with some noise, A ~ E with a gap; planted specials
 * when `special`. */
static void fill(onp_tensor *r, onp_tensor *e, onp_tensor *a, int special)
{
    int64_t n = r->count;
    for (int64_t i = 0; i < n; i++) {
        double x = uniform() * 4;
        if (i % 97 == 0) x = 0; /* 1 / |R| = inf */
        ((double *)r->data)[i] = x;
        put(e, i, x * (1 + 1e-6 * uniform()));
        put(a, i, x * (1 + 1e-4 * uniform()) + (i % 1031 == 0 ? 1e-3 : 0));
    }
    if (!special) return;
    int64_t b = 65536;
    put(e, b + 5, NAN);                             /* block 1: NaN in expected only */
    put(a, 2 * b + 7, INFINITY);                    /* block 2: inf in actual */
    ((double *)r->data)[3 * b + 9] = NAN;           /* block 3: NaN in the reference */
    put(e, 4 * b + 1, NAN), put(a, 4 * b + 1, NAN); /* block 4: matching NaN */
    put(a, n - 2, -INFINITY);                       /* the tail */
}

static void one_case(int32_t dtype, int64_t n, int special, int threads)
{
    onp_tensor r, e, a;
    onp_error err;
    int64_t dims[2] = {n / 7, 7};
    int rank = n % 7 ? 1 : 2;
    if (rank == 1) dims[0] = n;
    CHECK(onp_tensor_alloc(&r, ONP_DOUBLE, rank, dims, &err) == 0);
    CHECK(onp_tensor_alloc(&e, dtype, rank, dims, &err) == 0);
    CHECK(onp_tensor_alloc(&a, dtype, rank, dims, &err) == 0);
    fill(&r, &e, &a, special);
    onp_compare_set_threads(threads);
    onp_tol tol = onp_tol_default(dtype), zero = {0, 0};
    onp_metrics w, s[3];
    onp_ref_gap g[2];
    CHECK(onp_compare_ref(&e, &a, &r, tol, &w, &g[0], &g[1], &err) == 0);
    CHECK(onp_compare(&e, &a, tol, &s[0], &err) == 0);
    CHECK(onp_compare(&r, &e, zero, &s[1], &err) == 0);
    CHECK(onp_compare(&r, &a, zero, &s[2], &err) == 0);
    CHECKF(!memcmp(&w, &s[0], sizeof w),
           "dtype %d n %lld special %d threads %d: expected vs actual", dtype, (long long)n,
           special, threads);
    for (int k = 0; k < 2; k++) {
        const onp_metrics *m = &s[k + 1];
        CHECKF(g[k].shape_ok == m->shape_ok && g[k].count == m->count &&
                   !memcmp(&g[k].max_abs, &m->max_abs, sizeof m->max_abs) &&
                   !memcmp(&g[k].rms, &m->rms, sizeof m->rms) &&
                   g[k].nan_mismatch == m->nan_mismatch && g[k].inf_mismatch == m->inf_mismatch,
               "dtype %d n %lld special %d threads %d side %d: max %.17g vs %.17g, rms %.17g vs "
               "%.17g",
               dtype, (long long)n, special, threads, k, g[k].max_abs, m->max_abs, g[k].rms,
               m->rms);
    }
    /* the walk measured something: the planted gaps are seen */
    CHECK(g[1].max_abs > 0 && g[1].count == n);
    if (special) CHECK(w.nan_mismatch == 1 && g[1].inf_mismatch == 2 && g[0].nan_mismatch == 3);
    onp_compare_set_threads(0);
    onp_tensor_release(&r);
    onp_tensor_release(&e);
    onp_tensor_release(&a);
}

static void test_every_dtype(void)
{
    static const int32_t dts[] = {ONP_FLOAT, ONP_DOUBLE, ONP_FLOAT16, ONP_BFLOAT16};
    for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
        one_case(dts[k], 5 * 65536 + 13, 1, 1);
        one_case(dts[k], 5 * 65536 + 13, 0, 1);
        one_case(dts[k], 1003, 0, 1); /* one block, shorter than a stretch */
        one_case(dts[k], 6, 0, 1);    /* no full group of 8 */
    }
}

static void test_threads(void)
{
    /* 64 blocks and more: the walk is cut between threads */
    one_case(ONP_FLOAT, 64 * 65536 + 3, 1, 2);
    one_case(ONP_FLOAT, 64 * 65536 + 3, 1, 1);
}

/* Outside the walk's dtypes and shapes it makes the three calls. */
static void test_fallback(void)
{
    onp_tensor r, e, a;
    onp_error err;
    int64_t d1[1] = {100}, d2[2] = {10, 10};
    CHECK(onp_tensor_alloc(&r, ONP_FLOAT, 1, d1, &err) == 0); /* a float32 "reference" */
    CHECK(onp_tensor_alloc(&e, ONP_FLOAT, 1, d1, &err) == 0);
    CHECK(onp_tensor_alloc(&a, ONP_FLOAT, 2, d2, &err) == 0); /* another shape */
    for (int i = 0; i < 100; i++) {
        ((float *)r.data)[i] = (float)i;
        ((float *)e.data)[i] = (float)i + 0.5f;
        ((float *)a.data)[i] = (float)i;
    }
    onp_metrics m;
    onp_ref_gap g[2];
    CHECK(onp_compare_ref(&e, &a, &r, onp_tol_default(ONP_FLOAT), &m, &g[0], &g[1], &err) == 0);
    CHECK(!m.shape_ok && g[0].shape_ok && g[0].max_abs == 0.5 && !g[1].shape_ok);
    onp_tensor_release(&r);
    onp_tensor_release(&e);
    onp_tensor_release(&a);
}

TEST_MAIN(test_every_dtype, test_threads, test_fallback)
