/*
 * compare.c — the comparator (include/onnxparity/compare.h).
 *
 * Work is cut into fixed blocks of BLOCK elements.  Each block is measured
 * by a branch-free loop the compiler vectorizes (one per float dtype); for
 * float32, the common case, hand-written AVX-512 and AVX2 versions of that
 * loop are chosen at run time, doing the same lane arithmetic in fewer
 * instructions (same bits).  A block holding a non-finite value is
 * measured again by the exact scalar loop that classifies NaN and
 * infinities.  Block results are merged in
 * block order, so sums (and everything else) are the same whatever the
 * number of threads.  The worst element's index is found afterwards by
 * rescanning the one block that holds it.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnxparity/compare.h"
/* a copy built with its public names renamed (-Donp_compare=..., as
 * bench/cmpsame.c's portable loop is) renames this one too */
#if defined(onp_compare) && !defined(onp_compare_ref)
#define onp_compare_ref onp_compare_ref_renamed_copy
#endif
#include "compare/compare_ref.h"
#include "onnxparity/half.h"

#define BLOCK 65536
#define N_EDGES (ONP_HIST_BINS - 1)

const double onp_hist_edges[N_EDGES] = {0.0,  1e-9, 1e-8, 1e-7, 1e-6, 1e-5,
                                        1e-4, 1e-3, 1e-2, 1e-1, 1.0};

static int g_threads; /* 0 = decide from the machine */

void onp_compare_set_threads(int n)
{
    g_threads = n < 0 ? 0 : n;
}

onp_tol onp_tol_default(int32_t dtype)
{
    switch (dtype) {
    case ONP_FLOAT:
    case ONP_COMPLEX64: return (onp_tol){1e-4, 1e-5};
    case ONP_FLOAT16: return (onp_tol){1e-3, 1e-3};
    case ONP_BFLOAT16: return (onp_tol){1e-2, 1e-2};
    case ONP_DOUBLE:
    case ONP_COMPLEX128: return (onp_tol){1e-7, 1e-9};
    default: return (onp_tol){0.0, 0.0};
    }
}

onp_tol onp_tol_with(int32_t dtype, double rtol, double atol)
{
    onp_tol t = onp_tol_default(dtype);
    if (rtol >= 0) t.rtol = rtol;
    if (atol >= 0) t.atol = atol;
    return t;
}

/* One block's measurements. */
typedef struct acc {
    int64_t n_fin; /* finite pairs */
    int64_t mism, nan_m, nan_x, inf_x;
    double sum_abs, sum_sq, dot, ee, aa;
    double max_abs, max_rel, need_atol, need_rtol;
    double max_excess;   /* max of |d| - (atol + rtol|e|); +inf for NaN/Inf mismatches */
    int64_t gt[N_EDGES]; /* count of |d| > edge */
    int nonfinite;       /* the fast loop saw a non-finite value */
} acc;

static void acc_init(acc *r)
{
    memset(r, 0, sizeof *r);
    r->max_excess = -INFINITY;
}

/* --- element loaders ----------------------------------------------------- */

static inline double ld_f32(const void *p, int64_t i)
{
    float f;
    memcpy(&f, (const char *)p + 4 * i, 4);
    return f;
}
static inline double ld_f64(const void *p, int64_t i)
{
    double d;
    memcpy(&d, (const char *)p + 8 * i, 8);
    return d;
}
static inline double ld_f16(const void *p, int64_t i)
{
    uint16_t h;
    memcpy(&h, (const char *)p + 2 * i, 2);
    return onp_f16_to_f64(h);
}
static inline double ld_bf16(const void *p, int64_t i)
{
    uint16_t h;
    memcpy(&h, (const char *)p + 2 * i, 2);
    return onp_bf16_to_f64(h);
}

typedef double (*loader)(const void *, int64_t);

/* Generic loader for any numeric dtype (slow path, mixed dtypes). */
typedef struct view {
    const onp_tensor *t;
    int complex_parts; /* complex: elements are the 2*count parts */
} view;

static double ld_any(const onp_tensor *t, int64_t i)
{
    if (t->dtype == ONP_COMPLEX64) return ld_f32(t->data, i);
    if (t->dtype == ONP_COMPLEX128) return ld_f64(t->data, i);
    return onp_tensor_get_f64(t, i);
}

/* --- the exact per-element rule ----------------------------------------- */

/* Excess of one pair over its tolerance: <= 0 passes; +inf for a NaN or
 * infinity mismatch; -inf for agreeing NaNs/infinities. */
static inline double excess_of(double e, double a, onp_tol tol)
{
    if (isnan(e) || isnan(a)) return isnan(e) && isnan(a) ? -INFINITY : INFINITY;
    if (isinf(e) || isinf(a)) return a == e ? -INFINITY : INFINITY;
    double ad = fabs(a - e);
    return (ad - tol.rtol * fabs(e)) - tol.atol;
}

static void slow_pair(acc *r, double e, double a, onp_tol tol)
{
    if (isnan(e) || isnan(a)) {
        if (isnan(e) && isnan(a)) {
            r->nan_m++;
        } else {
            r->nan_x++;
            r->mism++;
            r->max_excess = INFINITY;
        }
        return;
    }
    if (isinf(e) || isinf(a)) {
        if (a != e) {
            r->inf_x++;
            r->mism++;
            r->max_excess = INFINITY;
        }
        return;
    }
    double d = a - e, ad = fabs(d), ae = fabs(e);
    double limit = tol.atol + tol.rtol * ae;
    r->n_fin++;
    r->sum_abs += ad;
    r->sum_sq += d * d;
    r->dot += a * e;
    r->ee += e * e;
    r->aa += a * a;
    if (ad > r->max_abs) r->max_abs = ad;
    if (ae > 0 && ad / ae > r->max_rel) r->max_rel = ad / ae;
    if (ad > limit) r->mism++;
    double na = ad - tol.rtol * ae;
    if (na - tol.atol > r->max_excess) r->max_excess = na - tol.atol;
    if (na > r->need_atol) r->need_atol = na;
    if (ad > tol.atol) {
        double nr = ae > 0 ? (ad - tol.atol) / ae : INFINITY;
        if (nr > r->need_rtol) r->need_rtol = nr;
    }
    for (int k = 0; k < N_EDGES; k++) r->gt[k] += ad > onp_hist_edges[k];
}

/* The fast loop: assumes finite values, flags a block that is not.
 *
 * Written with GCC/clang vector extensions on 8 double lanes, so it is
 * vectorized on every compiler and ISA (SSE2, AVX2, AVX-512 through the
 * target clones below) with the same lane-wise arithmetic: no sum is ever
 * reassociated, and every machine and thread count gives the same bits.
 * Each lane keeps its own accumulators; lanes are merged in order at the
 * end of the block. */
#define VINLINE static inline __attribute__((always_inline))
typedef double v8d __attribute__((vector_size(64)));
typedef long long v8l __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(ONP_NO_CLONES)
#define ONP_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ONP_CLONES
#endif

/* Lane-wise helpers as macros: vectors never cross a function boundary, so
 * no ABI question arises whatever the target of the clone. */
#define v_splat(x) ((v8d){(x), (x), (x), (x), (x), (x), (x), (x)})
#define ABS_MASK                                                                                   \
    ((v8l){INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX})
#define v_abs(x) ((v8d)((v8l)(x)&ABS_MASK))
/* m ? a : b, lane by lane */
#define v_blend(m, a, b) ((v8d)(((v8l)(a) & (m)) | ((v8l)(b) & ~(m))))
/* a where a > b, else b: a NaN in a never wins */
#define v_max(a, b) v_blend((a) > (b), (a), (b))
#define v_sel(m, a) ((v8d)((v8l)(a) & (m)))
/* A running maximum over 8 lanes, kept as two 4-lane halves.  v_max on
 * the 64-byte vectors is the same value, but GCC turns its select into one
 * it cannot do in the lanes of a 64-byte vector on a narrower target (the
 * AVX2 and SSE2 clones): a scalar compare and move per element, a third of
 * a 100 MiB check with a float64 reference.  A 32-byte half is a native
 * vector on AVX2 (vcmppd, vblendvpd); the lanes and their order are
 * unchanged, so are the bits. */
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));
typedef struct vmax8 {
    v4d lo, hi; /* lanes 0-3, 4-7 */
} vmax8;
#define v4_max(a, b) ((v4d)(((v4l)(a) & ((a) > (b))) | ((v4l)(b) & ~((a) > (b)))))
#define vmax8_put(M, x)                                                                            \
    do {                                                                                           \
        v4d lo_ = __builtin_shufflevector((x), (x), 0, 1, 2, 3);                                   \
        v4d hi_ = __builtin_shufflevector((x), (x), 4, 5, 6, 7);                                   \
        (M).lo = v4_max(lo_, (M).lo);                                                              \
        (M).hi = v4_max(hi_, (M).hi);                                                              \
    } while (0)
#define vmax8_store(dst, M) (memcpy((dst), &(M).lo, 32), memcpy((dst) + 4, &(M).hi, 32))
/* Per lane, how many x had bits below those of `lim` (finite pairs:
 * |d| + |r| below +inf's bits), as two 4-lane halves for the same reason. */
typedef struct vcnt8 {
    v4l lo, hi;
} vcnt8;
#define vcnt8_below(C, x, lim)                                                                     \
    do {                                                                                           \
        v4l lo_ = __builtin_shufflevector((v8l)(x), (v8l)(x), 0, 1, 2, 3);                         \
        v4l hi_ = __builtin_shufflevector((v8l)(x), (v8l)(x), 4, 5, 6, 7);                         \
        (C).lo -= lo_ < (lim);                                                                     \
        (C).hi -= hi_ < (lim);                                                                     \
    } while (0)

/* Load 8 elements from index i as doubles into *out. */
VINLINE void ld8_f32(const void *p, int64_t i, v8d *out)
{
    v8f t;
    memcpy(&t, (const char *)p + 4 * i, sizeof t);
    *out = __builtin_convertvector(t, v8d);
}
VINLINE void ld8_f64(const void *p, int64_t i, v8d *out)
{
    memcpy(out, (const char *)p + 8 * i, sizeof *out);
}
VINLINE void ld8_f16(const void *p, int64_t i, v8d *out)
{
    double t[8];
    for (int k = 0; k < 8; k++) t[k] = ld_f16(p, i + k);
    memcpy(out, t, sizeof *out);
}
VINLINE void ld8_bf16(const void *p, int64_t i, v8d *out)
{
    double t[8];
    for (int k = 0; k < 8; k++) t[k] = ld_bf16(p, i + k);
    memcpy(out, t, sizeof *out);
}

/* One block's vector-loop results, lane by lane (lane j holds elements j,
 * j + 8, j + 16, ... of the block), before they are merged in lane order. */
typedef struct lanes {
    double sum_abs[8], sum_sq[8], dot[8], ee[8], aa[8];
    double max_abs[8], max_rel[8], need_rtol[8], max_na[8]; /* max_na: max |d| - rtol|e| */
    long long mism[8], gt[N_EDGES][8];
} lanes;

/* End of a fast block: elements [nv, n) (fewer than 8) exactly as the slow
 * loop does them, then the lanes merged in order into *r.  vec_nonfin:
 * non-finite values the vector loop saw; any (here or in the tail) flags
 * the block for the exact loop instead. */
/* The tail [nv, n) of a fast block by slow_pair into *r: the number of
 * non-finite pairs it met (those it leaves out). */
static int64_t tail_pairs(const void *E, loader load_e, const void *A, loader load_a, int64_t nv,
                          int64_t n, onp_tol tol, acc *r)
{
    int64_t nonfin = 0;
    for (int64_t i = nv; i < n; i++) {
        double e1 = load_e(E, i), a1 = load_a(A, i);
        if (!(fabs(a1 - e1) <= DBL_MAX && fabs(e1) <= DBL_MAX))
            nonfin++;
        else
            slow_pair(r, e1, a1, tol);
    }
    return nonfin;
}

static void finish_block(const void *E, const void *A, int64_t nv, int64_t n, onp_tol tol,
                         loader load1, int64_t vec_nonfin, const lanes *L, acc *r)
{
    acc_init(r);
    int64_t tail_nonfin = tail_pairs(E, load1, A, load1, nv, n, tol, r);
    if (tail_nonfin || vec_nonfin) {
        r->nonfinite = 1;
        return;
    }
    for (int j = 0; j < 8; j++) { /* lanes merged in order: deterministic */
        r->mism += L->mism[j];
        r->sum_abs += L->sum_abs[j];
        r->sum_sq += L->sum_sq[j];
        r->dot += L->dot[j];
        r->ee += L->ee[j];
        r->aa += L->aa[j];
        if (L->max_abs[j] > r->max_abs) r->max_abs = L->max_abs[j];
        if (L->max_rel[j] > r->max_rel) r->max_rel = L->max_rel[j];
        if (L->max_na[j] > r->need_atol) r->need_atol = L->max_na[j];
        if (L->need_rtol[j] > r->need_rtol) r->need_rtol = L->need_rtol[j];
        if (L->max_na[j] - tol.atol > r->max_excess) r->max_excess = L->max_na[j] - tol.atol;
        for (int k = 0; k < N_EDGES; k++) r->gt[k] += L->gt[k][j];
    }
    r->n_fin += nv; /* the tail was counted by slow_pair */
}

#define DEFINE_FAST(NAME, LOAD8, LOAD1, CROSS)                                                     \
    ONP_CLONES static void NAME(const void *E, const void *A, int64_t n, onp_tol tol, acc *r)      \
    {                                                                                              \
        const v8d zero = v_splat(0.0), one = v_splat(1.0), inf = v_splat(INFINITY);                \
        const v8d atol = v_splat(tol.atol), rtol = v_splat(tol.rtol);                              \
        v8d sum_abs = zero, sum_sq = zero, dot = zero, ee = zero, aa = zero;                       \
        v8d max_rel = zero, need_rtol = zero;                                                      \
        vmax8 max_abs = {{0}, {0}};                                                                \
        /* CROSS: ratios tracked as (numerator, denominator) pairs compared by cross               \
         * multiplication, no division in the loop; exact for inputs of <= 24-bit                  \
         * mantissas (float32/16, bfloat16), so float64 divides instead */                         \
        v8d rel_n = zero, rel_d = one, nr_n = zero, nr_d = one;                                    \
        v8d max_na = v_splat(-INFINITY); /* max |d| - rtol|e|: gives need_atol and the excess */   \
        v8l mism = {0}, fin = {0};                                                                 \
        v8l g0 = {0}, g1 = {0}, g2 = {0}, g3 = {0}, g4 = {0}, g5 = {0}, g6 = {0}, g7 = {0};        \
        v8l g8 = {0}, g9 = {0}, g10 = {0};                                                         \
        _Static_assert(N_EDGES == 11, "g0..g10 must cover every histogram edge");                  \
        int64_t i = 0;                                                                             \
        for (; i + 8 <= n; i += 8) {                                                               \
            v8d e, a;                                                                              \
            LOAD8(E, i, &e);                                                                       \
            LOAD8(A, i, &a);                                                                       \
            v8d d = a - e, ad = v_abs(d), ae = v_abs(e);                                           \
            /* finite pair: |d| + |e| has bits below those of +inf (an overflow to inf             \
             * only sends the block to the exact loop) */                                          \
            fin -= (v8l)(ad + ae) < (v8l)inf;                                                      \
            v8d limit = atol + rtol * ae;                                                          \
            sum_abs += ad;                                                                         \
            sum_sq += d * d;                                                                       \
            dot += a * e;                                                                          \
            ee += e * e;                                                                           \
            aa += a * a;                                                                           \
            vmax8_put(max_abs, ad);                                                                \
            if (CROSS) {                                                                           \
                v8d aez = v_blend(ae > zero, ae, inf); /* e == 0 never wins max_rel */             \
                v8l m = ad * rel_d > rel_n * aez;                                                  \
                rel_n = v_blend(m, ad, rel_n);                                                     \
                rel_d = v_blend(m, aez, rel_d);                                                    \
                v8d num = ad - atol; /* e == 0 < num: den 0, the ratio is +inf */                  \
                m = num * nr_d > nr_n * ae;                                                        \
                nr_n = v_blend(m, num, nr_n);                                                      \
                nr_d = v_blend(m, ae, nr_d);                                                       \
            } else {                                                                               \
                v8d inv = one / ae; /* inf where e == 0 */                                         \
                max_rel = v_max(v_sel(ae > zero, ad * inv), max_rel);                              \
                need_rtol = v_max((ad - atol) * inv, need_rtol);                                   \
            }                                                                                      \
            mism -= ad > limit;                                                                    \
            max_na = v_max(ad - rtol * ae, max_na);                                                \
            g0 -= ad > v_splat(onp_hist_edges[0]);                                                 \
            g1 -= ad > v_splat(onp_hist_edges[1]);                                                 \
            g2 -= ad > v_splat(onp_hist_edges[2]);                                                 \
            g3 -= ad > v_splat(onp_hist_edges[3]);                                                 \
            g4 -= ad > v_splat(onp_hist_edges[4]);                                                 \
            g5 -= ad > v_splat(onp_hist_edges[5]);                                                 \
            g6 -= ad > v_splat(onp_hist_edges[6]);                                                 \
            g7 -= ad > v_splat(onp_hist_edges[7]);                                                 \
            g8 -= ad > v_splat(onp_hist_edges[8]);                                                 \
            g9 -= ad > v_splat(onp_hist_edges[9]);                                                 \
            g10 -= ad > v_splat(onp_hist_edges[10]);                                               \
        }                                                                                          \
        lanes L;                                                                                   \
        const v8l gts[N_EDGES] = {g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, g10};                    \
        long long l_fin[8];                                                                        \
        memcpy(L.sum_abs, &sum_abs, 64), memcpy(L.sum_sq, &sum_sq, 64), memcpy(L.dot, &dot, 64);   \
        memcpy(L.ee, &ee, 64), memcpy(L.aa, &aa, 64), vmax8_store(L.max_abs, max_abs);             \
        if (CROSS) {                                                                               \
            max_rel = rel_n / rel_d;                                                               \
            need_rtol = v_max(nr_n / nr_d, zero); /* 0 / 1 when nothing exceeded atol */           \
        }                                                                                          \
        memcpy(L.max_rel, &max_rel, 64), memcpy(L.need_rtol, &need_rtol, 64);                      \
        memcpy(L.max_na, &max_na, 64);                                                             \
        memcpy(L.mism, &mism, 64), memcpy(l_fin, &fin, 64);                                        \
        for (int k = 0; k < N_EDGES; k++) memcpy(L.gt[k], &gts[k], 64);                            \
        int64_t vec_nonfin = 0;                                                                    \
        for (int j = 0; j < 8; j++) vec_nonfin += (i / 8) - l_fin[j];                              \
        finish_block(E, A, i, n, tol, LOAD1, vec_nonfin, &L, r);                                   \
    }

DEFINE_FAST(fast_f32, ld8_f32, ld_f32, 1)
DEFINE_FAST(fast_f64, ld8_f64, ld_f64, 0)
DEFINE_FAST(fast_f16, ld8_f16, ld_f16, 1)
DEFINE_FAST(fast_bf16, ld8_bf16, ld_bf16, 1)

/* --- the gaps to a float64 reference, both sides in one walk --------------
 *
 * The noise rule needs, of a float64 reference R against the expected value
 * E and against the actual value A, the largest gap, the root mean square
 * gap and the NaN/infinity mismatches: what onp_compare(R, E, {0, 0}) and
 * onp_compare(R, A, {0, 0}) report in max_abs, rms, nan_mismatch and
 * inf_mismatch, E and A widened to float64.  The loop below loads R, E and
 * A once and keeps only those sums: each lane meets its elements in the
 * order fast_f64 does, with the same operations (d = x - r, d * d summed,
 * |d| maxed as "a > b ? a : b", the same finiteness test sending a block to
 * the exact loop), and lanes and blocks merge in the same order, so the four
 * numbers have fast_f64's bits (tests/unit/test_compare_ref.c holds them to
 * the three onp_compare calls). */

/* One block's lanes: sums of d * d and maxima of |d|, per side. */
typedef struct ref_lanes {
    double sq_e[8], mx_e[8], sq_a[8], mx_a[8];
    int64_t nonfin_e, nonfin_a; /* lanes that saw a non-finite pair */
} ref_lanes;

#define DEFINE_REF(NAME, LOADX8)                                                                   \
    ONP_CLONES static void NAME(const void *R, const void *E, const void *A, int64_t nv,           \
                                ref_lanes *L)                                                      \
    {                                                                                              \
        const v8d zero = v_splat(0.0);                                                             \
        v8d sq_e = zero, sq_a = zero;                                                              \
        vmax8 mx_e = {{0}, {0}}, mx_a = {{0}, {0}};                                                \
        const v4l inf_bits = (v4l)((v4d){INFINITY, INFINITY, INFINITY, INFINITY});                 \
        vcnt8 fin_e = {{0}, {0}}, fin_a = {{0}, {0}};                                              \
        for (int64_t i = 0; i < nv; i += 8) {                                                      \
            v8d r, e, a;                                                                           \
            ld8_f64(R, i, &r);                                                                     \
            LOADX8(E, i, &e);                                                                      \
            LOADX8(A, i, &a);                                                                      \
            v8d ar = v_abs(r);                                                                     \
            v8d de = e - r, ade = v_abs(de);                                                       \
            v8d da = a - r, ada = v_abs(da);                                                       \
            vcnt8_below(fin_e, ade + ar, inf_bits);                                                \
            vcnt8_below(fin_a, ada + ar, inf_bits);                                                \
            sq_e += de * de;                                                                       \
            sq_a += da * da;                                                                       \
            vmax8_put(mx_e, ade);                                                                  \
            vmax8_put(mx_a, ada);                                                                  \
        }                                                                                          \
        long long fe[8], fa[8];                                                                    \
        memcpy(L->sq_e, &sq_e, 64), vmax8_store(L->mx_e, mx_e);                                    \
        memcpy(L->sq_a, &sq_a, 64), vmax8_store(L->mx_a, mx_a);                                    \
        vmax8_store(fe, fin_e), vmax8_store(fa, fin_a);                                            \
        L->nonfin_e = L->nonfin_a = 0;                                                             \
        for (int j = 0; j < 8; j++)                                                                \
            L->nonfin_e += (nv / 8) - fe[j], L->nonfin_a += (nv / 8) - fa[j];                      \
    }

DEFINE_REF(ref_f32, ld8_f32)
DEFINE_REF(ref_f64, ld8_f64)
DEFINE_REF(ref_f16, ld8_f16)
DEFINE_REF(ref_bf16, ld8_bf16)

/* The walk and the scalar loader for one dtype of E and A. */
typedef struct ref_kind {
    int32_t dtype;
    size_t esize;
    void (*walk)(const void *, const void *, const void *, int64_t, ref_lanes *);
    loader load1;
} ref_kind;

static const ref_kind ref_kinds[] = {
    {ONP_FLOAT, 4, ref_f32, ld_f32},
    {ONP_DOUBLE, 8, ref_f64, ld_f64},
    {ONP_FLOAT16, 2, ref_f16, ld_f16},
    {ONP_BFLOAT16, 2, ref_bf16, ld_bf16},
};

static const ref_kind *ref_kind_of(int32_t dtype)
{
    for (size_t k = 0; k < sizeof ref_kinds / sizeof *ref_kinds; k++)
        if (ref_kinds[k].dtype == dtype) return &ref_kinds[k];
    return NULL;
}

/* One side's block result as finish_block leaves it (the sums and maxima
 * the gap needs; the rest of *r stays as acc_init left it): the tail
 * [nv, n) by slow_pair first, then the lanes in order. */
static void ref_finish(const void *R, const void *X, loader load_x, int64_t nv, int64_t n,
                       const double *sq, const double *mx, int64_t vec_nonfin, acc *r)
{
    acc_init(r);
    int64_t tail_nonfin = tail_pairs(R, ld_f64, X, load_x, nv, n, (onp_tol){0, 0}, r);
    if (tail_nonfin || vec_nonfin) {
        r->nonfinite = 1;
        return;
    }
    for (int j = 0; j < 8; j++) {
        r->sum_sq += sq[j];
        if (mx[j] > r->max_abs) r->max_abs = mx[j];
    }
    r->n_fin += nv;
}

/* R against E and against A over one block of n elements (pointers at the
 * block's start), into re and ra. */
static void ref_pair(const ref_kind *k, const void *R, const void *E, const void *A, int64_t n,
                     acc *re, acc *ra)
{
    ref_lanes L;
    int64_t nv = n / 8 * 8;
    k->walk(R, E, A, nv, &L);
    ref_finish(R, E, k->load1, nv, n, L.sq_e, L.mx_e, L.nonfin_e, re);
    ref_finish(R, A, k->load1, nv, n, L.sq_a, L.mx_a, L.nonfin_a, ra);
}

/* The float32 loop by hand for AVX-512 (chosen at run time when the CPU has
 * it).  Lane for lane it does the very operations of fast_f32 above, in the
 * same order (no fused multiply-add, max as "a > b ? a : b", which is what
 * vmaxpd computes), so it gives the same bits; what it saves is
 * instructions: compares land in mask registers and count through masked
 * adds, two histogram counters share one 64-bit lane (32 bits each: a lane
 * counts at most BLOCK / 8), and there is no per-element finiteness test.
 * For float32, |a - e| and e * e cannot overflow in double, so the block
 * held a NaN or an infinity exactly when a lane of sum |d| or of sum e * e
 * ends non-finite; that is checked once per block. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(ONP_NO_CLONES)
#include <immintrin.h>
#define ONP_AVX512 1

__attribute__((target("avx512f"))) static void fast_f32_avx512(const void *E, const void *A,
                                                               int64_t n, onp_tol tol, acc *r)
{
    const char *pe = E, *pa = A; /* [n] float32, any alignment */
    const __m512d zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0);
    const __m512d inf = _mm512_set1_pd(INFINITY);
    const __m512d atol = _mm512_set1_pd(tol.atol), rtol = _mm512_set1_pd(tol.rtol);
    const __m512i one_lo = _mm512_set1_epi64(1), one_hi = _mm512_set1_epi64((long long)1 << 32);
    __m512d sum_abs = zero, sum_sq = zero, dot = zero, ee = zero, aa = zero, max_abs = zero;
    __m512d rel_n = zero, rel_d = one, nr_n = zero, nr_d = one;
    __m512d max_na = _mm512_set1_pd(-INFINITY);
    __m512i mism = _mm512_setzero_si512();
    /* gK: edge 2K counted in the low half of each lane, edge 2K + 1 in the high half */
    __m512i g0 = mism, g1 = mism, g2 = mism, g3 = mism, g4 = mism, g5 = mism;
    _Static_assert(N_EDGES == 11, "g0..g5 must cover every histogram edge");
    _Static_assert(BLOCK / 8 < ((int64_t)1 << 32), "a lane's count fits in 32 bits");
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 e4, a4; /* 8 floats each, loaded through memcpy */
        memcpy(&e4, pe + 4 * i, sizeof e4);
        memcpy(&a4, pa + 4 * i, sizeof a4);
        __m512d e = _mm512_cvtps_pd(e4), a = _mm512_cvtps_pd(a4);
        __m512d d = _mm512_sub_pd(a, e), ad = _mm512_abs_pd(d), ae = _mm512_abs_pd(e);
        __m512d rae = _mm512_mul_pd(rtol, ae);
        __m512d limit = _mm512_add_pd(atol, rae);
        sum_abs = _mm512_add_pd(sum_abs, ad);
        sum_sq = _mm512_add_pd(sum_sq, _mm512_mul_pd(d, d));
        dot = _mm512_add_pd(dot, _mm512_mul_pd(a, e));
        ee = _mm512_add_pd(ee, _mm512_mul_pd(e, e));
        aa = _mm512_add_pd(aa, _mm512_mul_pd(a, a));
        max_abs = _mm512_max_pd(ad, max_abs);
        /* max_rel and needed rtol as (numerator, denominator) pairs, as above */
        __m512d aez = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(ae, zero, _CMP_GT_OQ), inf, ae);
        __mmask8 m =
            _mm512_cmp_pd_mask(_mm512_mul_pd(ad, rel_d), _mm512_mul_pd(rel_n, aez), _CMP_GT_OQ);
        rel_n = _mm512_mask_blend_pd(m, rel_n, ad);
        rel_d = _mm512_mask_blend_pd(m, rel_d, aez);
        __m512d num = _mm512_sub_pd(ad, atol);
        m = _mm512_cmp_pd_mask(_mm512_mul_pd(num, nr_d), _mm512_mul_pd(nr_n, ae), _CMP_GT_OQ);
        nr_n = _mm512_mask_blend_pd(m, nr_n, num);
        nr_d = _mm512_mask_blend_pd(m, nr_d, ae);
        mism = _mm512_mask_add_epi64(mism, _mm512_cmp_pd_mask(ad, limit, _CMP_GT_OQ), mism, one_lo);
        max_na = _mm512_max_pd(_mm512_sub_pd(ad, rae), max_na);
#define COUNT_EDGE(G, K, ONE)                                                                      \
    G = _mm512_mask_add_epi64(                                                                     \
        G, _mm512_cmp_pd_mask(ad, _mm512_set1_pd(onp_hist_edges[K]), _CMP_GT_OQ), G, ONE)
        COUNT_EDGE(g0, 0, one_lo), COUNT_EDGE(g0, 1, one_hi), COUNT_EDGE(g1, 2, one_lo);
        COUNT_EDGE(g1, 3, one_hi), COUNT_EDGE(g2, 4, one_lo), COUNT_EDGE(g2, 5, one_hi);
        COUNT_EDGE(g3, 6, one_lo), COUNT_EDGE(g3, 7, one_hi), COUNT_EDGE(g4, 8, one_lo);
        COUNT_EDGE(g4, 9, one_hi), COUNT_EDGE(g5, 10, one_lo);
#undef COUNT_EDGE
    }
    lanes L;
    _mm512_storeu_pd(L.sum_abs, sum_abs), _mm512_storeu_pd(L.sum_sq, sum_sq);
    _mm512_storeu_pd(L.dot, dot), _mm512_storeu_pd(L.ee, ee), _mm512_storeu_pd(L.aa, aa);
    _mm512_storeu_pd(L.max_abs, max_abs);
    _mm512_storeu_pd(L.max_rel, _mm512_div_pd(rel_n, rel_d));
    _mm512_storeu_pd(L.need_rtol, _mm512_max_pd(_mm512_div_pd(nr_n, nr_d), zero));
    _mm512_storeu_pd(L.max_na, max_na);
    _mm512_storeu_si512(L.mism, mism);
    const __m512i gs[(N_EDGES + 1) / 2] = {g0, g1, g2, g3, g4, g5};
    for (int k = 0; k < N_EDGES; k++) {
        long long two[8];
        _mm512_storeu_si512(two, gs[k / 2]);
        for (int j = 0; j < 8; j++)
            L.gt[k][j] = k % 2 ? (long long)((uint64_t)two[j] >> 32) : two[j] & 0xffffffff;
    }
    int64_t vec_nonfin = 0;
    for (int j = 0; j < 8; j++) vec_nonfin += !(L.sum_abs[j] <= DBL_MAX && L.ee[j] <= DBL_MAX);
    finish_block(E, A, i, n, tol, ld_f32, vec_nonfin, &L, r);
}

/* The float32 loop by hand for AVX2 (a CPU without AVX-512, or valgrind,
 * which emulates up to AVX2).  Sixteen 256-bit registers cannot hold the 8
 * double lanes of every accumulator, so each stretch of CHUNK elements
 * (in L1) is walked per half (lanes 0-3, then 4-7) in two passes: the
 * sums, maxima and mismatch count, which also store |a - e| of the
 * stretch; then the histogram over those stored values.  Every lane still
 * sees its elements in order with the operations of fast_f32, so the bits
 * are the same.
 *
 * The two ratio trackers (max_rel and the needed rtol, (numerator,
 * denominator) pairs updated where ad * den > num * |e|) change only where
 * a ratio beats the lane's running maximum, which is rare after the first
 * elements.  The first pass tests each group against a threshold a little
 * below each lane's maximum (thr: num / den * (1 - 2^-30)); only a group
 * that passes it takes the exact update, the very compare-and-blend of
 * fast_f32.  The test is conservative: num / den, thr * |e| and the exact
 * products each round by at most one half ulp (float32 inputs: no product
 * of two of these underflows or overflows in double), which moves a
 * comparison by under 2^-50 relative, far inside the 2^-30 margin; so every
 * element the exact test would take passes the threshold, and skipping the
 * others changes nothing.  A lane's maximum only grows, so a threshold
 * from before an update stays below it. */
#define CHUNK 1024

typedef struct avx2_half { /* lanes 4h .. 4h + 3 */
    __m256d sum_abs, sum_sq, dot, ee, aa, max_abs, max_na;
    __m256d rel_n, rel_d, nr_n, nr_d; /* the trackers, exact */
    __m256d thr_rel, thr_nr;          /* a little below rel_n / rel_d and nr_n / nr_d */
    __m256i mism, g[N_EDGES];
} avx2_half;

/* Lanes 4h .. 4h + 3 of group t (elements 8t + 4h ...) as doubles. */
__attribute__((always_inline, target("avx2"))) static inline __m256d avx2_load(const char *p,
                                                                               int64_t t, int h)
{
    __m128 f; /* 4 floats, loaded through memcpy */
    memcpy(&f, p + 4 * (8 * t + 4 * h), sizeof f);
    return _mm256_cvtps_pd(f);
}

/* The exact update of both trackers by one group (fast_f32's), then their
 * thresholds anew. */
__attribute__((noinline, target("avx2"))) static void avx2_track(__m256d ad, __m256d ae,
                                                                 onp_tol tol, avx2_half *s)
{
    const __m256d zero = _mm256_setzero_pd(), inf = _mm256_set1_pd(INFINITY);
    const __m256d below = _mm256_set1_pd(1.0 - 0x1p-30);
    __m256d aez = _mm256_blendv_pd(inf, ae, _mm256_cmp_pd(ae, zero, _CMP_GT_OQ));
    __m256d m = _mm256_cmp_pd(_mm256_mul_pd(ad, s->rel_d), _mm256_mul_pd(s->rel_n, aez), _CMP_GT_OQ);
    s->rel_n = _mm256_blendv_pd(s->rel_n, ad, m);
    s->rel_d = _mm256_blendv_pd(s->rel_d, aez, m);
    __m256d num = _mm256_sub_pd(ad, _mm256_set1_pd(tol.atol));
    m = _mm256_cmp_pd(_mm256_mul_pd(num, s->nr_d), _mm256_mul_pd(s->nr_n, ae), _CMP_GT_OQ);
    s->nr_n = _mm256_blendv_pd(s->nr_n, num, m);
    s->nr_d = _mm256_blendv_pd(s->nr_d, ae, m);
    s->thr_rel = _mm256_mul_pd(_mm256_div_pd(s->rel_n, s->rel_d), below);
    s->thr_nr = _mm256_mul_pd(_mm256_div_pd(s->nr_n, s->nr_d), below);
}

/* Pass one over groups [t0, t1) of half h: sums, maxima, mismatches, the
 * trackers; |a - e| of each element into ad_out (4 per group).  Returns
 * the largest |a - e| of the stretch (a NaN never wins): the histogram
 * counts only the edges it passes. */
__attribute__((target("avx2"))) static double avx2_sums(const char *pe, const char *pa, int64_t t0,
                                                        int64_t t1, int h, onp_tol tol,
                                                        avx2_half *s, double *ad_out)
{
    const __m256d absm = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
    const __m256d zero = _mm256_setzero_pd();
    const __m256d atol = _mm256_set1_pd(tol.atol), rtol = _mm256_set1_pd(tol.rtol);
    __m256d sum_abs = s->sum_abs, sum_sq = s->sum_sq, dot = s->dot, ee = s->ee, aa = s->aa;
    __m256d max_na = s->max_na;
    __m256d thr_rel = s->thr_rel, thr_nr = s->thr_nr;
    __m256i mism = s->mism;
    __m256d here = zero;
    for (int64_t t = t0; t < t1; t++) {
        __m256d e = avx2_load(pe, t, h), a = avx2_load(pa, t, h);
        __m256d d = _mm256_sub_pd(a, e), ad = _mm256_and_pd(d, absm), ae = _mm256_and_pd(e, absm);
        __m256d rae = _mm256_mul_pd(rtol, ae);
        __m256d limit = _mm256_add_pd(atol, rae);
        sum_abs = _mm256_add_pd(sum_abs, ad);
        sum_sq = _mm256_add_pd(sum_sq, _mm256_mul_pd(d, d));
        dot = _mm256_add_pd(dot, _mm256_mul_pd(a, e));
        ee = _mm256_add_pd(ee, _mm256_mul_pd(e, e));
        aa = _mm256_add_pd(aa, _mm256_mul_pd(a, a));
        here = _mm256_max_pd(ad, here); /* into max_abs after the loop: the same maxima */
        mism = _mm256_sub_epi64(mism, _mm256_castpd_si256(_mm256_cmp_pd(ad, limit, _CMP_GT_OQ)));
        max_na = _mm256_max_pd(_mm256_sub_pd(ad, rae), max_na);
        _mm256_storeu_pd(ad_out, ad);
        ad_out += 4;
        /* e == 0 never wins max_rel; thr * 0 = 0 keeps such an element
         * for the needed rtol, whose ratio is then +inf */
        __m256d up = _mm256_and_pd(_mm256_cmp_pd(ad, _mm256_mul_pd(thr_rel, ae), _CMP_GT_OQ),
                                   _mm256_cmp_pd(ae, zero, _CMP_GT_OQ));
        up = _mm256_or_pd(up, _mm256_cmp_pd(_mm256_sub_pd(ad, atol), _mm256_mul_pd(thr_nr, ae),
                                            _CMP_GT_OQ));
        if (__builtin_expect(_mm256_movemask_pd(up), 0)) {
            avx2_track(ad, ae, tol, s);
            thr_rel = s->thr_rel, thr_nr = s->thr_nr;
        }
    }
    s->sum_abs = sum_abs, s->sum_sq = sum_sq, s->dot = dot, s->ee = ee, s->aa = aa;
    s->max_abs = _mm256_max_pd(here, s->max_abs), s->max_na = max_na, s->mism = mism;
    double m[4];
    _mm256_storeu_pd(m, here);
    double mx = m[0] > m[1] ? m[0] : m[1], my = m[2] > m[3] ? m[2] : m[3];
    return mx > my ? mx : my;
}

/* The histogram's counts for edges 0 .. k-1 over ng groups of stored
 * |a - e|; no value of the stretch passes the other edges (k from
 * avx2_sums' maximum), so theirs stay as they are. */
__attribute__((target("avx2"))) static void avx2_hist(const double *ad_in, int64_t ng, int k,
                                                      avx2_half *s)
{
    __m256i g0 = s->g[0], g1 = s->g[1], g2 = s->g[2], g3 = s->g[3], g4 = s->g[4], g5 = s->g[5];
    __m256i g6 = s->g[6], g7 = s->g[7], g8 = s->g[8], g9 = s->g[9], g10 = s->g[10];
    _Static_assert(N_EDGES == 11, "g0..g10 must cover every histogram edge");
    for (int64_t t = 0; t < ng; t++) {
        __m256d ad = _mm256_loadu_pd(ad_in + 4 * t);
#define COUNT_EDGE(G, K)                                                                           \
    G = _mm256_sub_epi64(                                                                          \
        G, _mm256_castpd_si256(_mm256_cmp_pd(ad, _mm256_set1_pd(onp_hist_edges[K]), _CMP_GT_OQ)))
        switch (k) { /* edges k-1 down to 0 */
        case 11: COUNT_EDGE(g10, 10); /* fall through */
        case 10: COUNT_EDGE(g9, 9);   /* fall through */
        case 9: COUNT_EDGE(g8, 8);    /* fall through */
        case 8: COUNT_EDGE(g7, 7);    /* fall through */
        case 7: COUNT_EDGE(g6, 6);    /* fall through */
        case 6: COUNT_EDGE(g5, 5);    /* fall through */
        case 5: COUNT_EDGE(g4, 4);    /* fall through */
        case 4: COUNT_EDGE(g3, 3);    /* fall through */
        case 3: COUNT_EDGE(g2, 2);    /* fall through */
        case 2: COUNT_EDGE(g1, 1);    /* fall through */
        case 1: COUNT_EDGE(g0, 0);    /* fall through */
        default: break;
        }
#undef COUNT_EDGE
    }
    s->g[0] = g0, s->g[1] = g1, s->g[2] = g2, s->g[3] = g3, s->g[4] = g4, s->g[5] = g5;
    s->g[6] = g6, s->g[7] = g7, s->g[8] = g8, s->g[9] = g9, s->g[10] = g10;
}

__attribute__((target("avx2"))) static void fast_f32_avx2(const void *E, const void *A, int64_t n,
                                                          onp_tol tol, acc *r)
{
    const char *pe = E, *pa = A; /* [n] float32, any alignment */
    avx2_half s[2];
    double ad[CHUNK / 2]; /* |a - e| of one half of a stretch */
    for (int h = 0; h < 2; h++) {
        avx2_half *x = &s[h];
        x->sum_abs = x->sum_sq = x->dot = x->ee = x->aa = x->max_abs = _mm256_setzero_pd();
        x->rel_n = x->nr_n = x->thr_rel = x->thr_nr = _mm256_setzero_pd();
        x->rel_d = x->nr_d = _mm256_set1_pd(1.0);
        x->max_na = _mm256_set1_pd(-INFINITY);
        x->mism = _mm256_setzero_si256();
        for (int k = 0; k < N_EDGES; k++) x->g[k] = _mm256_setzero_si256();
    }
    int64_t nt = n / 8; /* groups of 8 elements, one per lane */
    for (int64_t t0 = 0; t0 < nt; t0 += CHUNK / 8) {
        int64_t t1 = t0 + CHUNK / 8 < nt ? t0 + CHUNK / 8 : nt;
        for (int h = 0; h < 2; h++) {
            double here = avx2_sums(pe, pa, t0, t1, h, tol, &s[h], ad);
            int k = 0; /* the edges some |a - e| here passes: a prefix */
            while (k < N_EDGES && here > onp_hist_edges[k]) k++;
            avx2_hist(ad, t1 - t0, k, &s[h]);
        }
    }
    lanes L;
    for (int h = 0; h < 2; h++) {
        const avx2_half *x = &s[h];
        int o = 4 * h;
        _mm256_storeu_pd(L.sum_abs + o, x->sum_abs), _mm256_storeu_pd(L.sum_sq + o, x->sum_sq);
        _mm256_storeu_pd(L.dot + o, x->dot), _mm256_storeu_pd(L.ee + o, x->ee);
        _mm256_storeu_pd(L.aa + o, x->aa), _mm256_storeu_pd(L.max_abs + o, x->max_abs);
        _mm256_storeu_pd(L.max_rel + o, _mm256_div_pd(x->rel_n, x->rel_d));
        _mm256_storeu_pd(L.need_rtol + o,
                         _mm256_max_pd(_mm256_div_pd(x->nr_n, x->nr_d), _mm256_setzero_pd()));
        _mm256_storeu_pd(L.max_na + o, x->max_na);
        _mm256_storeu_si256((__m256i *)(L.mism + o), x->mism);
        for (int k = 0; k < N_EDGES; k++) _mm256_storeu_si256((__m256i *)(L.gt[k] + o), x->g[k]);
    }
    int64_t vec_nonfin = 0;
    for (int j = 0; j < 8; j++) vec_nonfin += !(L.sum_abs[j] <= DBL_MAX && L.ee[j] <= DBL_MAX);
    finish_block(E, A, nt * 8, n, tol, ld_f32, vec_nonfin, &L, r);
}
#endif

/* --- the job: blocks, threads, merge ------------------------------------ */

typedef struct job {
    const onp_tensor *E, *A;
    int64_t n; /* elements (complex: parts) */
    onp_tol tol;
    int exact_int; /* integers/bool: equality decides, values measured in double */
    void (*fast)(const void *, const void *, int64_t, onp_tol, acc *);
    size_t esize; /* bytes per element for the fast loop */
    int widen;    /* mixed real dtypes (a float64 reference against float32):
                     each block widened to float64, then fast_f64 */
    acc *blocks;  /* [n_blocks] */
    int64_t n_blocks;
} job;

static int ints_equal(const onp_tensor *E, const onp_tensor *A, int64_t i)
{
    size_t s = onp_dtype_size(E->dtype);
    return !memcmp((const char *)E->data + (size_t)i * s, (const char *)A->data + (size_t)i * s, s);
}

/* Elements lo..lo+n of t as float64: t's own bytes when it is float64, else
 * widened into out[n] (exact for every float dtype; one dtype switch per
 * block, not per element). */
static const void *widen(const onp_tensor *t, int64_t lo, int64_t n, double *out)
{
    const char *p = (const char *)t->data;
    switch (t->dtype) {
    case ONP_DOUBLE: return p + (size_t)lo * 8;
    case ONP_FLOAT:
        for (int64_t i = 0; i < n; i++) out[i] = ld_f32(p, lo + i);
        break;
    case ONP_FLOAT16:
        for (int64_t i = 0; i < n; i++) out[i] = ld_f16(p, lo + i);
        break;
    case ONP_BFLOAT16:
        for (int64_t i = 0; i < n; i++) out[i] = ld_bf16(p, lo + i);
        break;
    default:
        for (int64_t i = 0; i < n; i++) out[i] = onp_tensor_get_f64(t, lo + i);
        break;
    }
    return out;
}

static void exact_block(job *j, int64_t b);

/* Block b of the job into j->blocks[b].  scratch: [2 * BLOCK] doubles for a
 * widening job, or NULL (then the exact per-element loop). */
static void run_block(job *j, int64_t b, double *scratch)
{
    acc *r = &j->blocks[b];
    int64_t lo = b * BLOCK, hi = lo + BLOCK < j->n ? lo + BLOCK : j->n;
    acc_init(r);
    if (j->fast) {
        j->fast((const char *)j->E->data + (size_t)lo * j->esize,
                (const char *)j->A->data + (size_t)lo * j->esize, hi - lo, j->tol, r);
        if (!r->nonfinite) return;
        acc_init(r);
    } else if (j->widen && scratch) {
        fast_f64(widen(j->E, lo, hi - lo, scratch), widen(j->A, lo, hi - lo, scratch + BLOCK),
                 hi - lo, j->tol, r);
        if (!r->nonfinite) return;
        acc_init(r);
    }
    exact_block(j, b);
}

/* Block b of the job by the exact per-element loop, into j->blocks[b]. */
static void exact_block(job *j, int64_t b)
{
    acc *r = &j->blocks[b];
    int64_t lo = b * BLOCK, hi = lo + BLOCK < j->n ? lo + BLOCK : j->n;
    acc_init(r);
    for (int64_t i = lo; i < hi; i++) {
        double e = ld_any(j->E, i), a = ld_any(j->A, i);
        if (j->exact_int) {
            int64_t before = r->mism;
            slow_pair(r, e, a, (onp_tol){0, 0});
            /* equality in the native type decides (int64 extremes are not
             * exact in double) */
            int eq = ints_equal(j->E, j->A, i);
            r->mism = before + !eq;
        } else {
            slow_pair(r, e, a, j->tol);
        }
    }
}

/* A share of the blocks of a walk: fn(arg, b, scratch) for b in [b0, b1). */
typedef struct worker {
    void (*fn)(void *arg, int64_t b, double *scratch);
    void *arg;
    int want_scratch; /* a [2 * BLOCK] double scratch per thread */
    int64_t b0, b1;
} worker;

static void *work(void *p)
{
    worker *w = p;
    double *scratch = w->want_scratch ? malloc(2 * BLOCK * sizeof *scratch) : NULL;
    for (int64_t b = w->b0; b < w->b1; b++) w->fn(w->arg, b, scratch);
    free(scratch);
    return NULL;
}

static int n_threads(int64_t n_blocks)
{
    /* under 4 Mi elements: one thread, and no sysconf (a read of
     * /sys/devices/system/cpu/online per call: 70,000 small .npz members) */
    if (n_blocks < 64) return 1;
    int t = g_threads;
    if (!t) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        t = c > 8 ? 8 : (c < 1 ? 1 : (int)c);
    }
    if (t > n_blocks) t = (int)n_blocks;
    return t < 1 ? 1 : t;
}

/* fn over blocks [0, n_blocks), cut into contiguous shares, one per thread. */
static void run_blocks(int64_t n_blocks, void (*fn)(void *, int64_t, double *), void *arg,
                       int want_scratch)
{
    int t = n_threads(n_blocks);
    pthread_t th[8];
    worker w[8];
    int started = 0;
    for (int i = 0; i < t; i++) {
        w[i] = (worker){fn, arg, want_scratch, n_blocks * i / t, n_blocks * (i + 1) / t};
        if (i > 0 && pthread_create(&th[i], NULL, work, &w[i]) == 0)
            started |= 1 << i;
        else if (i > 0)
            work(&w[i]); /* no thread: do it here */
    }
    work(&w[0]);
    for (int i = 1; i < t; i++)
        if (started & (1 << i)) pthread_join(th[i], NULL);
}

static void job_block(void *arg, int64_t b, double *scratch)
{
    run_block(arg, b, scratch);
}

static void run_job(job *j)
{
    run_blocks(j->n_blocks, job_block, j, j->widen);
}

/* The flat index of the first element whose excess equals block b's max. */
static int64_t find_worst(const job *j, int64_t b)
{
    int64_t lo = b * BLOCK, hi = lo + BLOCK < j->n ? lo + BLOCK : j->n;
    double want = j->blocks[b].max_excess;
    onp_tol tol = j->exact_int ? (onp_tol){0, 0} : j->tol;
    /* the float dtypes' typed loaders where both sides have one: the same values */
    const ref_kind *ke = ref_kind_of(j->E->dtype), *ka = ref_kind_of(j->A->dtype);
    for (int64_t i = lo; i < hi; i++) {
        double e = ke && ka ? ke->load1(j->E->data, i) : ld_any(j->E, i);
        double a = ke && ka ? ka->load1(j->A->data, i) : ld_any(j->A, i);
        double ex = excess_of(e, a, tol);
        if (ex == want || (isnan(ex) && isnan(want))) return i;
    }
    return lo;
}

static void merge(const job *j, onp_metrics *m)
{
    acc t;
    acc_init(&t);
    int64_t worst_b = -1;
    for (int64_t b = 0; b < j->n_blocks; b++) {
        const acc *r = &j->blocks[b];
        t.n_fin += r->n_fin;
        t.mism += r->mism;
        t.nan_m += r->nan_m;
        t.nan_x += r->nan_x;
        t.inf_x += r->inf_x;
        t.sum_abs += r->sum_abs;
        t.sum_sq += r->sum_sq;
        t.dot += r->dot;
        t.ee += r->ee;
        t.aa += r->aa;
        if (r->max_abs > t.max_abs) t.max_abs = r->max_abs;
        if (r->max_rel > t.max_rel) t.max_rel = r->max_rel;
        if (r->need_atol > t.need_atol) t.need_atol = r->need_atol;
        if (r->need_rtol > t.need_rtol) t.need_rtol = r->need_rtol;
        if (r->max_excess > t.max_excess) { /* first block holding the maximum */
            t.max_excess = r->max_excess;
            worst_b = b;
        }
        for (int k = 0; k < N_EDGES; k++) t.gt[k] += r->gt[k];
    }
    m->mismatches = t.mism;
    m->nan_matched = t.nan_m;
    m->nan_mismatch = t.nan_x;
    m->inf_mismatch = t.inf_x;
    m->max_abs = t.max_abs;
    m->max_rel = t.max_rel;
    m->needed_atol = t.need_atol;
    m->needed_rtol = t.need_rtol;
    m->mean_abs = t.n_fin ? t.sum_abs / (double)t.n_fin : 0.0;
    m->rms = t.n_fin ? sqrt(t.sum_sq / (double)t.n_fin) : 0.0;
    if (t.ee == 0 && t.aa == 0)
        m->cosine = 1.0;
    else if (t.ee == 0 || t.aa == 0)
        m->cosine = 0.0;
    else
        m->cosine = t.dot / (sqrt(t.ee) * sqrt(t.aa));
    m->hist[0] = t.n_fin - t.gt[0];
    for (int k = 1; k < N_EDGES; k++) m->hist[k] = t.gt[k - 1] - t.gt[k];
    m->hist[N_EDGES] = t.gt[N_EDGES - 1];
    if (worst_b >= 0) {
        int64_t i = find_worst(j, worst_b);
        int parts = j->E->dtype == ONP_COMPLEX64 || j->E->dtype == ONP_COMPLEX128;
        m->worst_index = parts ? i / 2 : i;
        m->worst_expected = ld_any(j->E, i);
        m->worst_actual = ld_any(j->A, i);
    }
}

static int same_shape(const onp_tensor *a, const onp_tensor *b)
{
    if (a->rank != b->rank) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

static void compare_strings(const onp_tensor *E, const onp_tensor *A, onp_metrics *m)
{
    for (int64_t i = 0; i < E->count; i++) {
        int eq = E->strings[i].n == A->strings[i].n &&
                 (!E->strings[i].n || !memcmp(E->strings[i].p, A->strings[i].p, E->strings[i].n));
        if (!eq && m->mismatches++ == 0) m->worst_index = i;
    }
}

/* The metrics' header for E against A, and the job that measures the
 * values (*j->blocks allocated) when there are values to measure: 1 with a
 * job to run, 0 when *m is already complete but for job_close, -1 + e. */
static int job_open(const onp_tensor *E, const onp_tensor *A, onp_tol tol, onp_metrics *m, job *j,
                    onp_error *e)
{
    memset(m, 0, sizeof *m);
    memset(j, 0, sizeof *j);
    m->expected_dtype = E->dtype;
    m->actual_dtype = A->dtype;
    m->tol = tol;
    m->worst_index = -1;
    m->cosine = 1.0;
    m->dtype_ok = E->dtype == A->dtype;
    m->shape_ok = same_shape(E, A);
    if (!m->shape_ok) return 0;
    int es = E->dtype == ONP_STRING, as = A->dtype == ONP_STRING;
    if (es != as)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "cannot compare %s with %s",
                             onp_dtype_name(E->dtype), onp_dtype_name(A->dtype));
    m->count = E->count;
    if (es) {
        compare_strings(E, A, m);
        return 0;
    }
    if (!E->count) return 0;
    const onp_dtype_desc *d = onp_dtype_info(E->dtype);
    const onp_dtype_desc *ad = onp_dtype_info(A->dtype);
    if (!d || !ad)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "unsupported dtype in comparison");
    int cplx = d->kind == ONP_KIND_COMPLEX;
    if (cplx && !m->dtype_ok)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "cannot compare %s with %s", d->name,
                             ad->name);
    j->E = E;
    j->A = A;
    j->tol = tol;
    j->n = cplx ? 2 * E->count : E->count;
    j->exact_int = m->dtype_ok && d->kind != ONP_KIND_FLOAT && !cplx;
    /* a float64 reference against float32 (or any two real dtypes) */
    j->widen = !m->dtype_ok && !cplx && ad->kind != ONP_KIND_COMPLEX &&
               (d->kind == ONP_KIND_FLOAT || ad->kind == ONP_KIND_FLOAT);
    if (m->dtype_ok) {
        switch (E->dtype) {
        case ONP_FLOAT:
        case ONP_COMPLEX64: j->fast = fast_f32, j->esize = 4;
#ifdef ONP_AVX512
            __builtin_cpu_init();
            if (__builtin_cpu_supports("avx512f"))
                j->fast = fast_f32_avx512;
            else if (__builtin_cpu_supports("avx2"))
                j->fast = fast_f32_avx2;
#endif
            break;
        case ONP_DOUBLE:
        case ONP_COMPLEX128: j->fast = fast_f64, j->esize = 8; break;
        case ONP_FLOAT16: j->fast = fast_f16, j->esize = 2; break;
        case ONP_BFLOAT16: j->fast = fast_bf16, j->esize = 2; break;
        default: break;
        }
    }
    j->n_blocks = (j->n + BLOCK - 1) / BLOCK;
    j->blocks = malloc((size_t)j->n_blocks * sizeof *j->blocks);
    if (!j->blocks) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    return 1;
}

/* The metrics from the job's blocks (when it ran: has_job), then the
 * fields every comparison ends with; frees the blocks. */
static void job_close(job *j, int has_job, onp_metrics *m)
{
    if (has_job) {
        merge(j, m);
        free(j->blocks);
        j->blocks = NULL;
        m->count = j->n; /* complex: counted over the 2N real parts */
    }
    m->mismatch_frac = m->count ? (double)m->mismatches / (double)m->count : 0.0;
    m->pass = m->shape_ok && m->dtype_ok && m->mismatches == 0;
}

int onp_compare(const onp_tensor *E, const onp_tensor *A, onp_tol tol, onp_metrics *m, onp_error *e)
{
    job j;
    int has = job_open(E, A, tol, m, &j, e);
    if (has < 0) return -1;
    if (has) run_job(&j);
    job_close(&j, has, m);
    return 0;
}

/* The three jobs of onp_compare_ref, walked block by block together. */
typedef struct ref_walk {
    job ea, re, ra;
    const ref_kind *k;
} ref_walk;

static void ref_block(void *arg, int64_t b, double *scratch)
{
    (void)scratch;
    ref_walk *w = arg;
    run_block(&w->ea, b, NULL); /* E against A: its own loop, as onp_compare does */
    int64_t lo = b * BLOCK, hi = lo + BLOCK < w->ea.n ? lo + BLOCK : w->ea.n;
    size_t es = w->k->esize;
    acc *re = &w->re.blocks[b], *ra = &w->ra.blocks[b];
    ref_pair(w->k, (const double *)w->re.E->data + lo,
             (const char *)w->ea.E->data + (size_t)lo * es,
             (const char *)w->ea.A->data + (size_t)lo * es, hi - lo, re, ra);
    if (re->nonfinite) exact_block(&w->re, b);
    if (ra->nonfinite) exact_block(&w->ra, b);
}

static void gap_of(const onp_metrics *m, onp_ref_gap *g)
{
    g->shape_ok = m->shape_ok;
    g->count = m->count;
    g->max_abs = m->max_abs;
    g->rms = m->rms;
    g->nan_mismatch = m->nan_mismatch;
    g->inf_mismatch = m->inf_mismatch;
}

int onp_compare_ref(const onp_tensor *E, const onp_tensor *A, const onp_tensor *R, onp_tol tol,
                    onp_metrics *m_ea, onp_ref_gap *g_e, onp_ref_gap *g_a, onp_error *e)
{
    onp_tol zero = {0, 0};
    onp_metrics m_re, m_ra;
    const ref_kind *k = ref_kind_of(E->dtype);
    if (!k || R->dtype != ONP_DOUBLE || A->dtype != E->dtype || !same_shape(E, A) ||
        !same_shape(R, E) || !E->count) { /* no shared walk: the three comparisons */
        if (onp_compare(E, A, tol, m_ea, e) || onp_compare(R, E, zero, &m_re, e) ||
            onp_compare(R, A, zero, &m_ra, e))
            return -1;
        gap_of(&m_re, g_e);
        gap_of(&m_ra, g_a);
        return 0;
    }
    ref_walk w = {.k = k};
    /* same shapes, numeric, count > 0: each open gives a job of the same
     * blocks, or fails (out of memory) */
    if (job_open(E, A, tol, m_ea, &w.ea, e) < 0 || job_open(R, E, zero, &m_re, &w.re, e) < 0 ||
        job_open(R, A, zero, &m_ra, &w.ra, e) < 0) {
        free(w.ea.blocks);
        free(w.re.blocks);
        free(w.ra.blocks);
        return -1;
    }
    run_blocks(w.ea.n_blocks, ref_block, &w, 0);
    job_close(&w.ea, 1, m_ea);
    job_close(&w.re, 1, &m_re);
    job_close(&w.ra, 1, &m_ra);
    gap_of(&m_re, g_e);
    gap_of(&m_ra, g_a);
    return 0;
}

/* --- classifiers --------------------------------------------------------- */

static int64_t argmax_row(const onp_tensor *t, int64_t row, int64_t c)
{
    int64_t best = -1;
    double bv = 0;
    for (int64_t j = 0; j < c; j++) {
        double v = onp_tensor_get_f64(t, row * c + j);
        if (isnan(v)) continue;
        if (best < 0 || v > bv) {
            best = j;
            bv = v;
        }
    }
    return best < 0 ? 0 : best;
}

/* Rank of class `lab` in row: how many classes score strictly higher (ties
 * broken by index, as argmax does). */
static int64_t rank_of(const onp_tensor *t, int64_t row, int64_t c, int64_t lab)
{
    double v = onp_tensor_get_f64(t, row * c + lab);
    int64_t r = 0;
    for (int64_t j = 0; j < c; j++) {
        double x = onp_tensor_get_f64(t, row * c + j);
        if (x > v || (x == v && j < lab) || (isnan(v) && !isnan(x))) r++;
    }
    return r;
}

int onp_compare_topk(const onp_tensor *E, const onp_tensor *A, int k, onp_topk *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    out->first_flip = -1;
    const onp_dtype_desc *d = onp_dtype_info(E->dtype), *ad = onp_dtype_info(A->dtype);
    if (!d || !ad || d->kind != ONP_KIND_FLOAT || ad->kind != ONP_KIND_FLOAT)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "top-k needs float outputs");
    if (!same_shape(E, A) || (E->rank != 1 && E->rank != 2))
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "top-k needs outputs shaped [N, C] or [C]");
    int64_t rows = E->rank == 2 ? E->dims[0] : 1, c = E->dims[E->rank - 1];
    out->rows = rows;
    out->classes = c;
    out->k = k < 1 ? 1 : k;
    if (c < 1) return 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t le = argmax_row(E, r, c), la = argmax_row(A, r, c);
        if (le == la)
            out->top1_agree++;
        else if (out->first_flip < 0)
            out->first_flip = r;
        if (rank_of(A, r, c, le) < out->k) out->topk_agree++;
    }
    out->flipped = rows - out->top1_agree;
    return 0;
}
