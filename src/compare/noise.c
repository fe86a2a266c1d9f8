/*
 * noise.c — the noise rule (noise.h): is a gap beyond the tolerance float
 * noise or a defect?  Pure functions of tensors and numbers; the callers
 * (the CLI's fixture loop, bisect) find the float64 references and
 * statistics and pass them in.  Depends on compare and tensor only.
 */
#include "onnxparity/noise.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "compare/compare_ref.h"
#include "compare/float8judge.h"
#include "onnxparity/float8.h"
#include "onnxparity/dtype.h"

static const char *const src_names[] = {"none", "float64", "float64-scaled", "ort-perturbation",
                                        "float8-ulp"};
_Static_assert(sizeof src_names / sizeof *src_names == ONP_NOISE_SRC_COUNT, "src_names");

static const char *const verdict_names[] = {"within-tolerance", "within-noise", "beyond-noise",
                                            "beyond-tolerance", "not-numeric"};
_Static_assert(sizeof verdict_names / sizeof *verdict_names == ONP_VERDICT_COUNT, "verdict_names");

static const char *const vacuity_names[] = {"no", "below-atol", "constant-across-batch"};
_Static_assert(sizeof vacuity_names / sizeof *vacuity_names == ONP_VACUITY_COUNT, "vacuity_names");

const char *onp_noise_src_name(onp_noise_src s)
{
    return (unsigned)s < ONP_NOISE_SRC_COUNT ? src_names[s] : "?";
}

const char *onp_verdict_name(onp_verdict v)
{
    return (unsigned)v < ONP_VERDICT_COUNT ? verdict_names[v] : "?";
}

/* The index of `name` in names[0..n), or -1. */
static int name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

int onp_noise_src_from_name(const char *name, onp_noise_src *out)
{
    int i = name_index(src_names, ONP_NOISE_SRC_COUNT, name);
    if (i < 0) return -1;
    *out = (onp_noise_src)i;
    return 0;
}

int onp_verdict_from_name(const char *name, onp_verdict *out)
{
    int i = name_index(verdict_names, ONP_VERDICT_COUNT, name);
    if (i < 0) return -1;
    *out = (onp_verdict)i;
    return 0;
}

const char *onp_vacuity_name(onp_vacuity v)
{
    return (unsigned)v < ONP_VACUITY_COUNT ? vacuity_names[v] : "?";
}

void onp_judge_opts_init(onp_judge_opts *o)
{
    memset(o, 0, sizeof *o);
    o->tol = onp_tol_default(ONP_FLOAT);
}

double onp_dtype_eps(int32_t dtype)
{
    switch (dtype) {
    case ONP_FLOAT:
    case ONP_COMPLEX64: return 0x1p-23;
    case ONP_DOUBLE:
    case ONP_COMPLEX128: return 0x1p-52;
    case ONP_FLOAT16: return 0x1p-10;
    case ONP_BFLOAT16: return 0x1p-7;
    default: return onp_f8_eps(dtype); /* 2^-3 or 2^-2 for float8, else 0 */
    }
}

static int is_floating(int32_t dtype)
{
    return onp_dtype_eps(dtype) > 0;
}

/* A source measured against a float64 run (of this fixture, or scaled from others). */
static int is_float64_src(onp_noise_src s)
{
    return s == ONP_NOISE_FLOAT64 || s == ONP_NOISE_SCALED;
}

// --- value statistics ----------------------------------------------------------

/* Whether every row (along dim 0, two or more) of t holds the same bytes. */
static int constant_rows(const onp_tensor *t)
{
    if (!(t->rank >= 1 && t->dims[0] >= 2 && t->nbytes > 0)) return 0;
    size_t row = t->nbytes / (size_t)t->dims[0];
    const unsigned char *p = t->data;
    int same = row > 0;
    for (int64_t r = 1; same && r < t->dims[0]; r++)
        same = memcmp(p, p + (size_t)r * row, row) == 0;
    return same;
}

/* The part of onp_value_stats_of that every judgment needs before its
 * comparison: scale_max and constant_rows (scale_rms left 0; the caller
 * asks onp_value_stats_of when it needs that).  For float32, the largest
 * finite |x| eight lanes at a time (GCC vector extensions: SSE on any
 * x86-64, no target needed): a maximum is the same whatever the order, so
 * the bits equal onp_value_stats_of's (issue 34: its sequential sum of
 * squares made every judgment an extra pass over the output). */
typedef int32_t i32x4 __attribute__((vector_size(16)));

void onp_value_scale(const onp_tensor *t, onp_value_stats *s)
{
    memset(s, 0, sizeof *s);
    if (!t || t->dtype == ONP_STRING || t->count <= 0 || !t->data) return;
    if (t->dtype != ONP_FLOAT) {
        onp_value_stats_of(t, s);
        return;
    }
    /* |x| of a float32 as its bits: for finite non-negative floats the
     * integer order is the float order, and NaN and the infinities are the
     * bit patterns at and above 0x7f800000 */
    const unsigned char *p = t->data;
    const i32x4 abs_mask = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
    const i32x4 inf = {0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000};
    i32x4 mx[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    int64_t i = 0, n = t->count;
    for (; i + 8 <= n; i += 8)
        for (int h = 0; h < 2; h++) {
            i32x4 v;
            memcpy(&v, p + (size_t)(i + 4 * h) * 4, sizeof v);
            v &= abs_mask; /* non-negative: the signed order is the unsigned one */
            i32x4 take = (v > mx[h]) & (v < inf); /* all ones where finite and larger */
            mx[h] = (v & take) | (mx[h] & ~take);
        }
    uint32_t m = 0;
    for (int l = 0; l < 8; l++) m = (uint32_t)mx[l / 4][l % 4] > m ? (uint32_t)mx[l / 4][l % 4] : m;
    for (; i < n; i++) {
        uint32_t v;
        memcpy(&v, p + (size_t)i * 4, 4);
        v &= 0x7fffffffu;
        if (v < 0x7f800000u && v > m) m = v;
    }
    float f;
    memcpy(&f, &m, 4);
    s->scale_max = (double)f;
    s->constant_rows = constant_rows(t);
}

/* sqrt(mean x^2) over the finite float32 values of t, in four independent
 * sums (the sequential one in onp_value_stats_of waits on each addition:
 * a quarter of a 100 MiB check's judgment, issue 34).  The same value up to
 * the order of the additions: fixed, so the same bits every run. */
typedef double f64x2 __attribute__((vector_size(16)));

static double value_rms_f32(const onp_tensor *t)
{
    const unsigned char *p = t->data;
    const i32x4 abs_mask = {0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff};
    const i32x4 inf = {0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000};
    f64x2 lo = {0, 0}, hi = {0, 0};
    int64_t finite = 0, i = 0, n = t->count;
    while (i + 4 <= n) {
        i32x4 cnt = {0, 0, 0, 0}; /* -1 per finite value: flushed before it can wrap */
        int64_t end = n - (n - i) % 4, stop = i + ((int64_t)1 << 30);
        if (stop < end) end = stop;
        for (; i < end; i += 4) {
            i32x4 b;
            memcpy(&b, p + (size_t)i * 4, sizeof b);
            i32x4 fin = (b & abs_mask) < inf; /* -1 where finite */
            b &= fin;                         /* a non-finite value counts as 0 */
            float f[4];
            memcpy(f, &b, sizeof f);
            f64x2 a = {(double)f[0], (double)f[1]}, c = {(double)f[2], (double)f[3]};
            lo += a * a;
            hi += c * c;
            cnt += fin;
        }
        finite -= (int64_t)cnt[0] + cnt[1] + cnt[2] + cnt[3];
    }
    double sum = (lo[0] + lo[1]) + (hi[0] + hi[1]);
    for (; i < n; i++) {
        float f;
        memcpy(&f, p + (size_t)i * 4, 4);
        double v = (double)f;
        if (isfinite(v)) sum += v * v, finite++;
    }
    return finite ? sqrt(sum / (double)finite) : 0.0;
}

void onp_value_scale_rms(const onp_tensor *t, onp_value_stats *s)
{
    if (t && t->dtype == ONP_FLOAT && t->count > 0 && t->data)
        s->scale_rms = value_rms_f32(t); /* scale_max: value_scale's, the same */
    else
        onp_value_stats_of(t, s);
}

void onp_value_stats_of(const onp_tensor *t, onp_value_stats *s)
{
    memset(s, 0, sizeof *s);
    if (!t || t->dtype == ONP_STRING || t->count <= 0 || !t->data) return;
    double mx = 0, ss = 0;
    int64_t n = 0;
    if (t->dtype == ONP_FLOAT) {
        const float *p = t->data;
        for (int64_t i = 0; i < t->count; i++) {
            double v = fabs((double)p[i]);
            if (!isfinite(v)) continue;
            if (v > mx) mx = v;
            ss += v * v;
            n++;
        }
    } else {
        for (int64_t i = 0; i < t->count; i++) {
            double v = fabs(onp_tensor_get_f64(t, i));
            if (!isfinite(v)) continue;
            if (v > mx) mx = v;
            ss += v * v;
            n++;
        }
    }
    s->scale_max = mx;
    s->scale_rms = n ? sqrt(ss / (double)n) : 0.0;
    s->constant_rows = constant_rows(t);
}

// --- the rule ------------------------------------------------------------------

void onp_noise_rule(const onp_metrics *m, const onp_noise *n, double eps, int strict,
                    onp_judgment *j)
{
    j->gap_max = m->max_abs;
    j->gap_rms = m->rms;
    j->needed_atol = m->needed_atol;
    j->suggest_atol = m->needed_atol;
    j->floor = 0;
    j->envelope_max = j->envelope_rms = j->ratio = 0;
    j->beyond_envelope = 0;
    if (n)
        j->noise = *n;
    else
        memset(&j->noise, 0, sizeof j->noise);
    if (!m->shape_ok || !m->dtype_ok || m->nan_mismatch || m->inf_mismatch ||
        (!m->pass && eps <= 0)) {
        j->verdict = ONP_VERDICT_NOT_NUMERIC;
        j->pass = 0;
        return;
    }
    if (m->pass) {
        j->verdict = ONP_VERDICT_WITHIN_TOL;
        j->pass = 1;
    }
    if (!n || n->src == ONP_NOISE_NONE) {
        if (!m->pass) j->verdict = ONP_VERDICT_BEYOND_TOL, j->pass = 0;
        return;
    }
    const double K = ONP_NOISE_FACTOR;
    double U = ONP_NOISE_ULPS * eps * n->scale_max;
    j->floor = U;
    j->envelope_max = (K + 1) * n->max_abs + U;
    j->envelope_rms = (K + 1) * n->rms + U;
    j->ratio = j->envelope_max > 0 ? j->gap_max / j->envelope_max : (j->gap_max > 0 ? INFINITY : 0);
    if (j->envelope_max > j->suggest_atol) j->suggest_atol = j->envelope_max;
    /* the noise test, asked of a value within the tolerance too: the
     * tolerance decides its verdict, the test says whether it is noise */
    int within;
    if (j->has_ref)
        within = j->ort_err_max <= K * j->eager_err_max + U &&
                 j->ort_err_rms <= K * j->eager_err_rms + U;
    else
        within = j->gap_max <= j->envelope_max && j->gap_rms <= j->envelope_rms;
    j->beyond_envelope = !within;
    if (m->pass) return;
    j->verdict = within ? ONP_VERDICT_WITHIN_NOISE : ONP_VERDICT_BEYOND_NOISE;
    j->pass = within && !strict;
}

int onp_judgment_within_tol_beyond_noise(const onp_judgment *j)
{
    return j->verdict == ONP_VERDICT_WITHIN_TOL && j->beyond_envelope &&
           (j->noise.src == ONP_NOISE_FLOAT64 || j->noise.src == ONP_NOISE_SCALED);
}

// --- tensors -------------------------------------------------------------------

int onp_judge_value(const onp_tensor *expected, const onp_tensor *actual, const onp_tensor *ref64,
                    const onp_noise *stats, const onp_judge_opts *o, onp_metrics *m,
                    onp_judgment *j, onp_error *e)
{
    return onp_judge_value_scaled(expected, actual, ref64, stats, NULL, o, m, j, e);
}

int onp_judge_value_scaled(const onp_tensor *expected, const onp_tensor *actual,
                           const onp_tensor *ref64, const onp_noise *stats,
                           const onp_value_stats *scale, const onp_judge_opts *o, onp_metrics *m,
                           onp_judgment *j, onp_error *e)
{
    memset(j, 0, sizeof *j);
    onp_value_stats vs;
    if (scale)
        vs = *scale;
    else
        onp_value_scale(expected, &vs); /* scale_rms below, where a noise source needs it */
    j->scale_max = vs.scale_max;
    j->tol_used = o->tol;
    int floating = is_floating(expected->dtype);
    if (floating && expected->count > 0 && vs.scale_max <= o->tol.atol && vs.scale_max > 0) {
        j->vacuous = ONP_VACUOUS_BELOW_ATOL;
        if (!o->atol_given) j->tol_used.atol = o->tol.rtol * vs.scale_max;
    } else if (vs.constant_rows) {
        j->vacuous = ONP_VACUOUS_CONSTANT;
    }
    /* float8: its own ulp is the envelope (float8judge.h); no float64
     * reference or statistics enter */
    if (onp_f8_is(expected->dtype) && actual->dtype == expected->dtype)
        return onp_judge_float8(expected, actual, o->strict, m, j, e);
    onp_noise n;
    memset(&n, 0, sizeof n);
    onp_ref_gap rm, rma; /* the reference against expected, against actual */
    int use_ref = floating && ref64 && ref64->rank == expected->rank &&
                  ref64->count == expected->count && is_floating(ref64->dtype);
    /* with a reference: the three comparisons in one walk over the bytes */
    if (use_ref ? onp_compare_ref(expected, actual, ref64, j->tol_used, m, &rm, &rma, e)
                : onp_compare(expected, actual, j->tol_used, m, e))
        return -1;
    if (use_ref && m->shape_ok) {
        /* NaN and infinities are positions: a reference that has one where
         * eager has a number (or the reverse) is not a float64 twin of this
         * value, and its distances over the remaining finite pairs (none at
         * all for an all-NaN reference: 0) measure nothing */
        j->ref_refused = rm.nan_mismatch + rm.inf_mismatch;
        if (!j->ref_refused) {
            j->eager_err_max = rm.max_abs;
            j->eager_err_rms = rm.rms;
            n.src = ONP_NOISE_FLOAT64;
            n.max_abs = rm.max_abs;
            n.rms = rm.rms;
            j->ort_err_max = rma.max_abs;
            j->ort_err_rms = rma.rms;
            j->has_ref = 1;
        }
    }
    if (n.src == ONP_NOISE_NONE && floating && stats && stats->src != ONP_NOISE_NONE) n = *stats;
    if (n.src != ONP_NOISE_NONE && n.scale_max <= 0) {
        if (!(vs.scale_rms > 0)) onp_value_scale_rms(expected, &vs); /* unless measured before */
        n.scale_max = vs.scale_max;
        n.scale_rms = vs.scale_rms;
    }
    if (n.src != ONP_NOISE_NONE && n.max_abs > ONP_NOISE_FLOAT64_MAX_REL * n.scale_max) {
        if (is_float64_src(n.src) && !o->eager_random) {
            j->ill_conditioned = 1; /* the value's own float64 noise: kept (noise.h) */
        } else {
            memset(&n, 0, sizeof n); /* not rounding noise: the tolerance alone decides */
            j->has_ref = 0;
            j->noise_refused = 1;
        }
    }
    onp_noise_rule(m, n.src != ONP_NOISE_NONE ? &n : NULL, onp_dtype_eps(expected->dtype),
                   o->strict, j);
    return 0;
}

int onp_noise_spread(const onp_tensor *a, const onp_tensor *b, onp_noise *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    onp_metrics m;
    onp_tol zero = {0, 0};
    if (onp_compare(a, b, zero, &m, e)) return -1;
    onp_value_stats vs;
    onp_value_stats_of(a, &vs);
    out->src = ONP_NOISE_ORT;
    out->max_abs = m.max_abs;
    out->rms = m.rms;
    out->scale_max = vs.scale_max;
    out->scale_rms = vs.scale_rms;
    if (!m.shape_ok || m.nan_mismatch || m.inf_mismatch ||
        m.max_abs > ONP_NOISE_SPREAD_MAX_REL * vs.scale_max) {
        out->src = ONP_NOISE_NONE;
        return 1;
    }
    return 0;
}

// --- one-ulp perturbation ------------------------------------------------------

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One step of a 16-bit float's magnitude (half or bfloat16), keeping it
 * finite and nonzero; exp_mask marks the exponent bits. */
static uint16_t step16(uint16_t v, int up, uint16_t exp_mask)
{
    uint16_t mag = v & 0x7fff, sign = v & 0x8000;
    if (!mag || (mag & exp_mask) == exp_mask) return v; /* zero, inf, NaN */
    uint16_t nm = up ? (uint16_t)(mag + 1) : (uint16_t)(mag - 1);
    if (!nm || (nm & exp_mask) == exp_mask) return v;
    return (uint16_t)(sign | nm);
}

int onp_perturbed_input(onp_tensor *dst, const onp_tensor *src, size_t k, onp_error *e)
{
    if (onp_tensor_copy(dst, src, e)) return -1;
    onp_perturb_ulp(dst, 0x6f6e7000u + k);
    return 0;
}

void onp_perturb_ulp(onp_tensor *t, uint64_t seed)
{
    if (!t || !t->data || t->count <= 0) return;
    uint64_t s = seed ? seed : 1;
    uint64_t bits = 0;
    int left = 0;
    for (int64_t i = 0; i < t->count; i++) {
        if (!left) bits = splitmix(&s), left = 64;
        int up = (int)(bits & 1);
        bits >>= 1, left--;
        switch (t->dtype) {
        case ONP_FLOAT: {
            float *p = (float *)t->data + i;
            if (*p != 0 && isfinite(*p)) {
                float q = nextafterf(*p, up ? INFINITY : -INFINITY);
                if (isfinite(q)) *p = q;
            }
            break;
        }
        case ONP_DOUBLE: {
            double *p = (double *)t->data + i;
            if (*p != 0 && isfinite(*p)) {
                double q = nextafter(*p, up ? INFINITY : -INFINITY);
                if (isfinite(q)) *p = q;
            }
            break;
        }
        case ONP_FLOAT16:
        case ONP_BFLOAT16: {
            uint16_t v;
            unsigned char *p = (unsigned char *)t->data + 2 * (size_t)i;
            memcpy(&v, p, 2);
            v = step16(v, up, t->dtype == ONP_FLOAT16 ? 0x7c00 : 0x7f80);
            memcpy(p, &v, 2);
            break;
        }
        default: return;
        }
    }
}
