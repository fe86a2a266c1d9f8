/*
 * noise.h — bug or float noise: the per-value judgment behind every verdict,
 * bisection and gate (docs/compare.md, "The noise rule").
 *
 * A fixed rtol/atol answers "is this a bug?" only for shallow models: a deep
 * network's float32 eager output is itself off from the exact result, and
 * ONNX Runtime's is off by about as much, in other bits.  So a value whose
 * gap ORT-vs-eager exceeds the tolerance is held against that value's own
 * float noise: how far a float32 computation of it strays from a
 * higher-precision one.  The noise comes, best first, from
 *   FLOAT64  the bundle's float64 eager run of the same fixture: a
 *            reference tensor (reference64/output_J.pb: ORT's own error is
 *            then measured against it) or statistics only (intermediates);
 *   SCALED   float64 statistics of other fixtures of the same output, applied
 *            to this fixture relative to its scale;
 *   ORT      estimated on ORT's side by measurement: the spread of the same
 *            session's outputs when every floating input moves by one ulp.
 *
 * The rule (onp_noise_rule; exact statement in docs/compare.md):
 *   U (floor)   = ONP_NOISE_ULPS * eps(dtype) * scale_max
 *   reference:  within noise  iff  |ORT - f64|max <= K |eager - f64|max + U
 *                              and  |ORT - f64|rms <= K |eager - f64|rms + U
 *   statistics: within noise  iff  gap_max <= (K+1) N_max + U
 *                              and  gap_rms <= (K+1) N_rms + U
 * with K = ONP_NOISE_FACTOR.  A value passes when it is within the tolerance,
 * or (unless strict) within noise.  Shape, dtype, NaN/Inf and integer
 * mismatches are never noise.  A reference whose NaN/Inf positions are not
 * eager's (all-NaN, say: no finite pair, both distances 0) measures nothing
 * and is refused as a noise source (ref_refused): the next source decides.
 * Vacuous comparisons are flagged: the tolerance exceeds the value's scale
 * (every |expected| <= atol: judged again with atol = rtol * scale, unless
 * the caller says the user chose that atol), or every row of the batch is
 * identical.
 *
 * Worked example:
 *     onp_metrics m;  onp_judgment j;  onp_error e;
 *     onp_judge_opts o;  onp_judge_opts_init(&o);
 *     o.tol = onp_tol_default(want.dtype);
 *     if (onp_judge_value(&want, &got, ref64_or_NULL, stats_or_NULL, &o, &m, &j, &e) == 0)
 *         printf("%s (gap %g, envelope %g)\n", onp_verdict_name(j.verdict),
 *                j.gap_max, j.envelope_max);
 *
 * Depends on compare and tensor only; never prints.
 */
#ifndef ONNXPARITY_NOISE_H
#define ONNXPARITY_NOISE_H

#include <stdint.h>

#include "onnxparity/compare.h"
#include "onnxparity/error.h"
#include "onnxparity/tensor.h"

/* K: ORT may be this many times as far from float64 as float32 eager is. */
#define ONP_NOISE_FACTOR 4.0
/* The floor, in units of the dtype's epsilon times the value's largest magnitude. */
#define ONP_NOISE_ULPS 8.0

/* Where a value's noise estimate came from. */
typedef enum onp_noise_src {
    ONP_NOISE_NONE = 0, /* no estimate: the tolerance alone decides */
    ONP_NOISE_FLOAT64,  /* float64 eager of the same fixture (tensor or statistics) */
    ONP_NOISE_SCALED,   /* float64 statistics of other fixtures, relative to scale */
    ONP_NOISE_ORT,      /* ORT's spread under one-ulp input perturbation */
    ONP_NOISE_ULP,      /* a float8 output's own ulp: one step between codes (float8judge.h) */
    ONP_NOISE_SRC_COUNT
} onp_noise_src;

/* "none", "float64", "float64-scaled", "ort-perturbation"; "?" out of range. */
const char *onp_noise_src_name(onp_noise_src s);

/* The source named `name` (as onp_noise_src_name writes it) into *out:
 * 0, or -1 for an unknown name (*out untouched). */
int onp_noise_src_from_name(const char *name, onp_noise_src *out);

/* Deviation of a float32 computation of one value from its reference, and
 * the value's own scale (all >= 0; finite elements only). */
typedef struct onp_noise {
    onp_noise_src src;
    double max_abs, rms, q999;   /* |float32 - reference|: max, root mean square, 99.9th pct */
    double scale_max, scale_rms; /* |value|: max, root mean square */
} onp_noise;

/* The judgment of one value. */
typedef enum onp_verdict {
    ONP_VERDICT_WITHIN_TOL = 0, /* passes rtol/atol (the comparator's rule) */
    ONP_VERDICT_WITHIN_NOISE,   /* beyond the tolerance, inside the noise envelope */
    ONP_VERDICT_BEYOND_NOISE,   /* beyond both: a defect */
    ONP_VERDICT_BEYOND_TOL,     /* beyond the tolerance, no noise estimate to weigh it */
    ONP_VERDICT_NOT_NUMERIC,    /* shape, dtype, NaN/Inf or exact-type mismatch: never noise */
    ONP_VERDICT_COUNT
} onp_verdict;

/* "within-tolerance", "within-noise", "beyond-noise", "beyond-tolerance",
 * "not-numeric"; "?" when out of range. */
const char *onp_verdict_name(onp_verdict v);

/* The verdict named `name` (as onp_verdict_name writes it) into *out: 0,
 * or -1 for an unknown name (*out untouched). */
int onp_verdict_from_name(const char *name, onp_verdict *out);

/* Why a comparison proves little. */
typedef enum onp_vacuity {
    ONP_VACUOUS_NO = 0,
    ONP_VACUOUS_BELOW_ATOL, /* every |expected| <= atol: re-judged with atol = rtol * scale */
    ONP_VACUOUS_CONSTANT,   /* every row along dim 0 (N >= 2) is identical in expected */
    ONP_VACUITY_COUNT
} onp_vacuity;

/* "no", "below-atol", "constant-across-batch"; "?" when out of range. */
const char *onp_vacuity_name(onp_vacuity v);

typedef struct onp_judge_opts {
    onp_tol tol;    /* the tolerance asked for */
    int strict;     /* 1: the tolerance binds; within-noise fails */
    int atol_given; /* 1: the user chose atol: a value below it is reported vacuous but
                       judged at that atol, as asked */
    int eager_random; /* 1: float32 eager is not reproducible run to run (the capture's
                         determinism rerun said so): a float64 estimate beyond
                         ONP_NOISE_FLOAT64_MAX_REL of the scale is then a random op's
                         doing, not ill-conditioning, and is refused */
} onp_judge_opts;

/* tol = float32 defaults, not strict. */
void onp_judge_opts_init(onp_judge_opts *o);

typedef struct onp_judgment {
    onp_verdict verdict;
    int pass;                          /* WITHIN_TOL, or WITHIN_NOISE when not strict */
    onp_vacuity vacuous;               /* reported beside the verdict */
    onp_tol tol_used;                  /* the tolerance applied (atol replaced when BELOW_ATOL) */
    onp_noise noise;                   /* the estimate used (src NONE: none) */
    double scale_max;                  /* max |expected| over finite elements */
    double floor;                      /* U */
    double gap_max, gap_rms;           /* |ORT - eager| */
    double envelope_max, envelope_rms; /* the gap's bound: (K+1) N + U; 0 without noise */
    double ratio;                      /* gap_max / envelope_max (0 without noise) */
    int beyond_envelope; /* the noise test fails: set for beyond-noise, and for a value within the
                            tolerance that the same test puts outside its float noise (a change
                            smaller than the tolerance, not rounding); 0 without noise */
    int has_ref;         /* a float64 reference tensor was given */
    int noise_refused;   /* an estimate was given but refused (beyond
                            ONP_NOISE_FLOAT64_MAX_REL of the scale, eager_random set) */
    int ill_conditioned; /* the float64 estimate (FLOAT64 or SCALED) is beyond
                            ONP_NOISE_FLOAT64_MAX_REL of the scale and eager is reproducible:
                            float32 eager itself took another path than float64 (a sort,
                            top-k, NMS or argmax on near-ties; a near-singular step).  The
                            estimate is kept: the value is judged against that noise */
    double ort_err_max, ort_err_rms;     /* |ORT - f64| (has_ref) */
    double eager_err_max, eager_err_rms; /* |eager - f64| (has_ref) */
    double needed_atol;  /* smallest atol passing at tol_used.rtol (metrics' needed_atol) */
    double suggest_atol; /* an atol that covers the noise: max(needed_atol, envelope_max) */
    int64_t ref_refused; /* a float64 reference tensor was given and refused as a noise
                            source: this many elements are NaN or infinite in one of it and
                            float32 eager and not the same at that position in the other
                            (positions compared as positions: an all-NaN reference is not
                            "no element to measure"); the statistics given, if any, were used
                            instead (noise.src says which).  0: accepted, or none given */
} onp_judgment;

/* Whether j is a value the tolerance passes that its float noise does not
 * explain: within-tolerance, beyond its envelope, the noise measured in
 * float64 (the value's own reference or the capture's scaled statistics;
 * an ORT-side estimate is too weak to say it).  A pass all the same: the
 * tolerance decides; check reports it so that a change smaller than the
 * tolerance is not silent. */
int onp_judgment_within_tol_beyond_noise(const onp_judgment *j);

/* The value statistics the rule needs, from one tensor: largest and RMS
 * magnitude over finite elements, and whether every row along dim 0 is
 * bytewise identical (rank >= 1, dims[0] >= 2, count > 0). */
typedef struct onp_value_stats {
    double scale_max, scale_rms;
    int constant_rows;
} onp_value_stats;

void onp_value_stats_of(const onp_tensor *t, onp_value_stats *s);

/* The machine epsilon of a floating dtype (float32 2^-23, float16 2^-10,
 * bfloat16 2^-7, float64 2^-52; complex as its parts); 0 for others. */
double onp_dtype_eps(int32_t dtype);

/* The rule on numbers alone (what the unit tests drive with golden values).
 * m: ORT vs eager under j->tol_used (already set by the caller, as are
 * vacuous and the reference errors when has_ref).  Fills verdict, pass,
 * floor, gap, envelope, ratio, beyond_envelope, needed/suggested atol.  `eps` is the
 * expected dtype's epsilon (0: an exact type). */
void onp_noise_rule(const onp_metrics *m, const onp_noise *n, double eps, int strict,
                    onp_judgment *j);

/* Judge ORT's `actual` against eager `expected`.  ref64 (float64 eager of
 * the same fixture, same shape) or NULL; stats (a noise estimate) or NULL —
 * ref64 wins when both are given, unless it is refused (j->ref_refused: a
 * NaN or infinity where eager has none, or the reverse): stats then decide.  Fills *m (the
 * comparator's metrics under the tolerance applied) and *j.  Returns 0, or -1 with *e set when the
 * tensors cannot be compared at all (strings vs numbers, out of memory). */
int onp_judge_value(const onp_tensor *expected, const onp_tensor *actual, const onp_tensor *ref64,
                    const onp_noise *stats, const onp_judge_opts *o, onp_metrics *m,
                    onp_judgment *j, onp_error *e);

/* What every judgment measures of `expected` before it compares: the
 * statistics' scale_max and constant_rows (scale_rms left 0). */
void onp_value_scale(const onp_tensor *t, onp_value_stats *s);

/* s->scale_rms of t (s from onp_value_scale(t)) exactly as the noise rule
 * measures it when a noise source needs it (float32: that one sum; other
 * dtypes: all of *s anew, onp_value_stats_of): onp_judge_value_scaled then
 * takes a positive scale_rms from its `scale` instead of a pass of its own
 * (a value measured beside the ORT run). */
void onp_value_scale_rms(const onp_tensor *t, onp_value_stats *s);

/* onp_judge_value with `scale`, onp_value_scale(expected), measured before
 * (a caller that reads the expected value while ONNX Runtime runs measures
 * it there, off the path that waits for ORT's output); NULL: measured here.
 * The same judgment either way. */
int onp_judge_value_scaled(const onp_tensor *expected, const onp_tensor *actual,
                           const onp_tensor *ref64, const onp_noise *stats,
                           const onp_value_stats *scale, const onp_judge_opts *o, onp_metrics *m,
                           onp_judgment *j, onp_error *e);

/* float32 eager farther than this fraction of the value's scale from its
 * float64 twin is not rounding noise: the float64 run took another path.
 * Where eager is reproducible, the value is ill-conditioned (a discrete
 * choice on near-ties: NMS, top-k, sort, argmax) and the float64 estimate is
 * kept, flagged (j->ill_conditioned): it is the value's own measured noise,
 * and a one-ulp ORT-side estimate, which sees no near-tie, must not replace
 * it.  Where eager is random (opts eager_random), it is refused. */
#define ONP_NOISE_FLOAT64_MAX_REL 1e-2

/* An ORT-side spread above this fraction of the value's scale is not float
 * noise: the outputs are not reproducible (a random op) or ill-conditioned. */
#define ONP_NOISE_SPREAD_MAX_REL 1e-3

/* Noise from two computations of the same value that differ only by float
 * rounding (ORT on inputs and on one-ulp perturbed inputs): max, RMS and the
 * scale of `a`; src ORT.  A spread above ONP_NOISE_SPREAD_MAX_REL of the
 * scale is refused as an estimate: src NONE, and 1 is returned (0 when
 * accepted, -1 with e set when the tensors cannot be compared). */
int onp_noise_spread(const onp_tensor *a, const onp_tensor *b, onp_noise *out, onp_error *e);

/* Move every element of a floating tensor by one ulp, up or down by a fixed
 * pseudo-random sign per element (seeded by `seed`); other dtypes are left
 * as they are.  In place; the tensor must own writable data. */
void onp_perturb_ulp(onp_tensor *t, uint64_t seed);

/* The ORT-side estimate's input k: a copy of `src` (which may be a read-only
 * view) moved by one ulp with the seed of input position k, the same in
 * check, bisect and the probes.  *dst is owned; 0, or -1 with e set. */
int onp_perturbed_input(onp_tensor *dst, const onp_tensor *src, size_t k, onp_error *e);

#endif
