/*
 * float8judge.h — the noise rule for a float8 output (noise.c calls it from
 * onp_judge_value).  Internal to src/compare/.
 */
#ifndef ONP_COMPARE_FLOAT8JUDGE_H
#define ONP_COMPARE_FLOAT8JUDGE_H

#include "onnxparity/noise.h"

/* Judge a float8 output `actual` against `expected` (same float8 dtype;
 * j's scale_max, tol_used and vacuous already set by the caller): the
 * tolerance j->tol_used first (m filled by onp_compare), then the value's
 * own rounding envelope.  A float8 value is the rounding of a wider one,
 * so two computations whose wide results differ by float noise give the
 * same code, or neighbouring codes where the wide values straddle a
 * rounding boundary: one step of the value's own ulp, at every element, is
 * noise; two or more steps anywhere is not.  The noise source is
 * ONP_NOISE_ULP; envelope_max (floor, noise.max_abs the same) is the largest
 * one-step gap of any element on either side, the most one step can move a
 * value of this output; ratio the largest distance in steps.  NaN and
 * infinity mismatches (E5M2's infinity against its largest finite value
 * too, though onp_f8_steps counts them one step apart) and shape or dtype
 * differences are not numeric.  0, or -1 with e set. */
int onp_judge_float8(const onp_tensor *expected, const onp_tensor *actual, int strict,
                     onp_metrics *m, onp_judgment *j, onp_error *e);

#endif
