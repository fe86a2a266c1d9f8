/*
 * compare.h — the comparator: is ACTUAL (ONNX Runtime) equal to EXPECTED
 * (the eager truth) within an explicit tolerance, and by how much not.
 *
 * The rule (docs/compare.md states it exactly):
 *   floats    |actual - expected| <= atol + rtol * |expected|, computed in
 *             double; NaN agrees only with NaN (counted in nan_matched);
 *             an infinity agrees only with the same infinity.
 *   complex   the rule on the real and imaginary parts separately; counts
 *             are over the 2N parts.
 *   integers, bool, strings   exact equality.
 * Shape must match exactly and the dtypes must be the same; otherwise the
 * pair fails with shape_ok or dtype_ok = 0 (values of same-shape numeric
 * tensors of different dtypes are still measured, for diagnosis).
 *
 * One streaming pass over both tensors in fixed blocks, so results do not
 * depend on the thread count; large tensors are split over threads.
 */
#ifndef ONNXPARITY_COMPARE_H
#define ONNXPARITY_COMPARE_H

#include <stdint.h>

#include "onnxparity/error.h"
#include "onnxparity/tensor.h"

typedef struct onp_tol {
    double rtol;
    double atol;
} onp_tol;

/* Default tolerance for a dtype (float32: rtol 1e-4, atol 1e-5; float16:
 * 1e-3, 1e-3; bfloat16: 1e-2, 1e-2; float64: 1e-7, 1e-9; others: 0, 0). */
onp_tol onp_tol_default(int32_t dtype);

/* The tolerance the user's --rtol/--atol make of the dtype's default:
 * each of rtol, atol that is >= 0 replaces the default's (< 0: kept).  The
 * one place that rule lives (check, bisect, gate, probes, compare). */
onp_tol onp_tol_with(int32_t dtype, double rtol, double atol);

/* Histogram of |actual - expected| over finite pairs, on fixed decades:
 * bin 0 exactly 0; bin 1 (0, 1e-9]; bin k (edges[k-1], edges[k]] for
 * k = 1..10, i.e. up to (0.1, 1]; bin 11 above 1. */
#define ONP_HIST_BINS 12
extern const double onp_hist_edges[ONP_HIST_BINS - 1]; /* {0, 1e-9, 1e-8, ..., 1e-1, 1} */

typedef struct onp_metrics {
    int32_t expected_dtype, actual_dtype;
    int shape_ok;          /* identical shapes */
    int dtype_ok;          /* identical dtypes */
    int pass;              /* shape_ok && dtype_ok && mismatches == 0 */
    int64_t count;         /* elements compared (0 when shapes differ) */
    int64_t mismatches;    /* elements outside the rule */
    double mismatch_frac;  /* mismatches / count (0 when count is 0) */
    double max_abs;        /* max |a - e| over finite pairs */
    double max_rel;        /* max |a - e| / |e| over finite pairs with e != 0 */
    double mean_abs;       /* mean |a - e| over finite pairs */
    double rms;            /* sqrt(mean (a - e)^2) over finite pairs */
    double cosine;         /* cosine similarity over finite pairs; 1 when both are all zero */
    int64_t worst_index;   /* flat index of the worst element (-1 if none) */
    double worst_expected; /* its values */
    double worst_actual;
    double needed_atol;  /* smallest atol that passes at the given rtol (finite pairs) */
    double needed_rtol;  /* smallest rtol that passes at the given atol (inf: an exact 0 differs) */
    int64_t nan_matched; /* NaN on both sides (agreement) */
    int64_t nan_mismatch; /* NaN on one side only */
    int64_t inf_mismatch; /* an infinity not matched by the same infinity */
    int64_t hist[ONP_HIST_BINS];
    onp_tol tol; /* the tolerance applied */
} onp_metrics;

/* Compare two tensors under `tol`.  Returns 0 with *m filled (pass or fail
 * is in m->pass); -1 only for an unsupported dtype (strings vs numbers). */
int onp_compare(const onp_tensor *expected, const onp_tensor *actual, onp_tol tol, onp_metrics *m,
                onp_error *e);

/* Threads used for tensors above 4 Mi elements (default: online CPUs, at
 * most 8).  Results are identical for every value. */
void onp_compare_set_threads(int n);

/* Classifier agreement over outputs shaped [N, C] (or [C], one row).
 * For each row: the argmax of expected and actual (first index on ties) and
 * whether expected's top-1 label is among actual's top k. */
typedef struct onp_topk {
    int64_t rows;    /* N */
    int64_t classes; /* C */
    int k;
    int64_t top1_agree; /* rows whose argmax is the same */
    int64_t flipped;    /* rows - top1_agree */
    int64_t topk_agree; /* rows whose expected label is in actual's top k */
    int64_t first_flip; /* first flipped row, -1 if none */
} onp_topk;

/* 0 and *out filled, or -1 when the shapes are not [N, C] / [C] or differ,
 * or the dtypes are not float. */
int onp_compare_topk(const onp_tensor *expected, const onp_tensor *actual, int k, onp_topk *out,
                     onp_error *e);

#endif
