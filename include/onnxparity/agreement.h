/*
 * agreement.h — top-1 agreement as a statistic: over N classifier rows
 * (samples) with K flipped labels, the observed flip rate K/N and an upper
 * confidence bound on the true flip rate, so that "0 flips in 500" can be
 * stated as "the flip rate is below 0.6 % at 95 % confidence" and a release
 * criterion can be a rate (gate's max_flip_rate).
 *
 * The bound is the one-sided Clopper–Pearson (exact binomial) upper limit:
 * the p at which P(X <= K | N, p) = 1 - confidence, X ~ Binomial(N, p); the
 * quantile of Beta(K + 1, N - K).  For K = 0 it is 1 - (1 - confidence)^(1/N)
 * (about 3/N at 95 %, the "rule of three").  K = N gives 1.  No rows: the
 * bound is 1 (nothing is known).
 *
 * Worked example:
 *     onp_agreement a;
 *     onp_agreement_collect(res, n_fix, NULL, 0.95, &a);  // every classifier output
 *     printf("top-1 %lld/%lld, flip rate <= %.4g at %g%%\n", (long long)a.agree,
 *            (long long)a.rows, a.flip_upper, 100 * a.confidence);
 *     if (!onp_agreement_meets(&a, 0.01)) ...;  // a gate criterion
 *
 * Pure computation: no I/O, no allocation; depends on judge.h's structs only.
 */
#ifndef ONNXPARITY_AGREEMENT_H
#define ONNXPARITY_AGREEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/judge.h"

/* The confidence of check's reported bound (and gate's default). */
#define ONP_AGREEMENT_CONFIDENCE 0.95

typedef struct onp_agreement {
    int64_t rows;      /* samples compared (classifier rows over the fixtures) */
    int64_t agree;     /* rows whose top-1 label is the same */
    int64_t flipped;   /* rows - agree */
    double confidence; /* of the bound, in (0, 1) */
    double flip_rate;  /* flipped / rows; 0 when rows == 0 */
    double flip_upper; /* one-sided Clopper–Pearson upper bound at `confidence`; 1 when rows == 0 */
} onp_agreement;

/* The one-sided Clopper–Pearson upper bound for k successes in n trials at
 * `confidence` (0 < confidence < 1; 0 <= k <= n).  Returns 1 when n == 0 or
 * k >= n, NaN for arguments out of range.  Accurate to about 1e-12. */
double onp_clopper_pearson_upper(int64_t k, int64_t n, double confidence);

/* Fill *out from counts (agree <= rows).  Returns 0, or -1 (and *out zeroed
 * with flip_upper NaN) when the counts or the confidence are out of range. */
int onp_agreement_of(int64_t rows, int64_t agree, double confidence, onp_agreement *out);

/* Sum the top-1 counts of the judged outputs named `name` (NULL: every
 * output with top-K agreement) over res[0..n) and fill *out as above. */
void onp_agreement_collect(const onp_fixture_verdict *res, size_t n, const char *name,
                           double confidence, onp_agreement *out);

/* The criterion "flip rate at most max_rate at a's confidence": 1 when a has
 * rows and its upper bound is <= max_rate, else 0 (no rows: no evidence). */
int onp_agreement_meets(const onp_agreement *a, double max_rate);

#endif
