/*
 * compare_ref.h — the comparator's walk against a float64 reference, for
 * the noise rule (noise.c).  Internal: not part of the public API.
 */
#ifndef ONP_COMPARE_REF_H
#define ONP_COMPARE_REF_H

#include "onnxparity/compare.h"

/* The gap between a float64 reference and one side, as onp_compare(R, X,
 * {0, 0}) reports it in the fields of the same names. */
typedef struct onp_ref_gap {
    int shape_ok;
    int64_t count;
    double max_abs, rms;
    int64_t nan_mismatch, inf_mismatch;
} onp_ref_gap;

/* onp_compare(E, A, tol, m_ea), and the gaps of R to E (*g_e) and to A
 * (*g_a), bit for bit what onp_compare(R, E, {0, 0}) and onp_compare(R, A,
 * {0, 0}) give in those fields.  One walk over the three tensors when E
 * and A share a float dtype (float32, float64, float16, bfloat16), R is
 * float64 and all three have one shape; otherwise the three calls.  0, or
 * -1 + e as onp_compare. */
int onp_compare_ref(const onp_tensor *E, const onp_tensor *A, const onp_tensor *R, onp_tol tol,
                    onp_metrics *m_ea, onp_ref_gap *g_e, onp_ref_gap *g_a, onp_error *e);

#endif
