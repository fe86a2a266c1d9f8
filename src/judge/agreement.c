/*
 * agreement.c — the flip-rate statistic of agreement.h: the binomial lower
 * tail in log space and a bisection for the Clopper–Pearson upper bound.
 * Depends on libm and judge.h's structs only.
 */
#include "onnxparity/agreement.h"

#include <math.h>
#include <string.h>

/* P(X <= k) for X ~ Binomial(n, p), 0 < p < 1, summed in log space from the
 * largest term so that no term underflows before it matters. */
static double binom_cdf(int64_t k, int64_t n, double p)
{
    double lp = log(p), lq = log1p(-p), lnf = lgamma((double)n + 1), top = -INFINITY;
    for (int64_t i = 0; i <= k; i++) {
        double t = lnf - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) + (double)i * lp +
                   (double)(n - i) * lq;
        if (t > top) top = t;
    }
    double s = 0;
    for (int64_t i = 0; i <= k; i++)
        s += exp(lnf - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) + (double)i * lp +
                 (double)(n - i) * lq - top);
    return exp(top) * s;
}

double onp_clopper_pearson_upper(int64_t k, int64_t n, double confidence)
{
    if (!(confidence > 0 && confidence < 1) || k < 0 || n < 0 || k > n) return NAN;
    if (n == 0 || k == n) return 1;
    double alpha = 1 - confidence;
    if (k == 0) return -expm1(log(alpha) / (double)n); /* closed form */
    /* the cdf falls from 1 (p = k/n gives >= 1/2) to 0 as p grows: bisect
     * for cdf(p) = alpha above k/n */
    double lo = (double)k / (double)n, hi = 1;
    for (int it = 0; it < 200 && hi - lo > 1e-15; it++) {
        double mid = 0.5 * (lo + hi);
        if (binom_cdf(k, n, mid) > alpha)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

int onp_agreement_of(int64_t rows, int64_t agree, double confidence, onp_agreement *out)
{
    memset(out, 0, sizeof *out);
    if (rows < 0 || agree < 0 || agree > rows || !(confidence > 0 && confidence < 1)) {
        out->flip_upper = NAN;
        return -1;
    }
    out->rows = rows;
    out->agree = agree;
    out->flipped = rows - agree;
    out->confidence = confidence;
    out->flip_rate = rows ? (double)out->flipped / (double)rows : 0;
    out->flip_upper = onp_clopper_pearson_upper(out->flipped, rows, confidence);
    return 0;
}

void onp_agreement_collect(const onp_fixture_verdict *res, size_t n, const char *name,
                           double confidence, onp_agreement *out)
{
    int64_t rows = 0, agree = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < res[i].n_out; k++) {
            const onp_output_verdict *x = &res[i].outs[k];
            if (!x->has_topk || (name && strcmp(x->name, name))) continue;
            rows += x->tk.rows;
            agree += x->tk.top1_agree;
        }
    onp_agreement_of(rows, agree, confidence, out);
}

int onp_agreement_meets(const onp_agreement *a, double max_rate)
{
    return a->rows > 0 && a->flip_upper <= max_rate;
}
