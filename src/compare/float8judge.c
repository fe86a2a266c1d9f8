/*
 * float8judge.c — a float8 output judged by its own ulp (float8judge.h): the
 * comparison decodes every code to float64 (onp_compare's per-element
 * path), then the distance in representable values per element decides
 * noise.  Depends on compare.h, noise.h and float8.h only.
 */
#include "compare/float8judge.h"

#include <math.h>
#include <string.h>

#include "onnxparity/compare.h"
#include "onnxparity/float8.h"

int onp_judge_float8(const onp_tensor *expected, const onp_tensor *actual, int strict,
                     onp_metrics *m, onp_judgment *j, onp_error *e)
{
    if (onp_compare(expected, actual, j->tol_used, m, e)) return -1;
    j->gap_max = m->max_abs;
    j->gap_rms = m->rms;
    j->needed_atol = j->suggest_atol = m->needed_atol;
    memset(&j->noise, 0, sizeof j->noise); /* the ulp source is set below, for numbers only */
    if (!m->shape_ok || !m->dtype_ok || m->nan_mismatch || m->inf_mismatch) {
        j->verdict = ONP_VERDICT_NOT_NUMERIC;
        j->pass = 0;
        return 0;
    }
    const uint8_t *pe = expected->data, *pa = actual->data;
    int steps_max = 0;
    double env = 0; /* the largest one-step gap of any element, either side */
    for (int64_t i = 0; i < expected->count; i++) {
        double ue = onp_f8_ulp(expected->dtype, pe[i]), ua = onp_f8_ulp(expected->dtype, pa[i]);
        if (ue > env) env = ue; /* NaN (a NaN or infinite code) compares false */
        if (ua > env) env = ua;
        int s = onp_f8_steps(expected->dtype, pe[i], pa[i]);
        if (s > steps_max) steps_max = s; /* -1: NaN at both, not a mismatch */
    }
    j->noise.src = ONP_NOISE_ULP;
    j->noise.max_abs = j->noise.rms = env;
    j->noise.scale_max = j->scale_max;
    j->floor = j->envelope_max = j->envelope_rms = env;
    j->ratio = steps_max;
    j->beyond_envelope = steps_max > 1;
    if (env > j->suggest_atol) j->suggest_atol = env;
    if (m->pass) {
        j->verdict = ONP_VERDICT_WITHIN_TOL;
        j->pass = 1;
        return 0;
    }
    j->verdict = steps_max <= 1 ? ONP_VERDICT_WITHIN_NOISE : ONP_VERDICT_BEYOND_NOISE;
    j->pass = steps_max <= 1 && !strict;
    return 0;
}
