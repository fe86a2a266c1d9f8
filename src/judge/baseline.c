/*
 * baseline.c — classing the change between two parity runs (baseline.h).
 * Pure: no I/O, no allocation; depends on nothing but libm.
 */
#include <math.h>
#include <stdio.h>

#include "onnxparity/baseline.h"

static const char *const change_names[] = {"same", "better", "worse", "only-old", "only-new"};
_Static_assert(sizeof change_names / sizeof change_names[0] == ONP_CHANGE_COUNT,
               "one name per onp_change");
static const char *const verdict_names[] = {"unchanged", "improved", "regressed", "mixed"};
_Static_assert(sizeof verdict_names / sizeof verdict_names[0] == ONP_BASELINE_VERDICT_COUNT,
               "one name per onp_baseline_verdict");

const char *onp_change_name(onp_change c)
{
    return (unsigned)c < ONP_CHANGE_COUNT ? change_names[c] : "?";
}

const char *onp_baseline_verdict_name(onp_baseline_verdict v)
{
    return (unsigned)v < ONP_BASELINE_VERDICT_COUNT ? verdict_names[v] : "?";
}

static onp_change say(onp_change c, char *why, size_t n, const char *what, double a, double b)
{
    if (why && n) snprintf(why, n, "%s %.6g -> %.6g", what, a, b);
    return c;
}

/* The larger of the two envelopes, or 0 when neither is known. */
static double noise_of(const onp_baseline_values *a, const onp_baseline_values *b)
{
    double e = 0;
    if (a->envelope >= 0) e = a->envelope;
    if (b->envelope >= 0 && b->envelope > e) e = b->envelope;
    return e;
}

onp_change onp_baseline_judge(const onp_baseline_values *old, const onp_baseline_values *now,
                              char *why, size_t n)
{
    if (why && n) why[0] = '\0';
    if (!old->present || !now->present) {
        if (why && n) snprintf(why, n, "%s", old->present ? "missing in NEW" : "new in NEW");
        return old->present ? ONP_CHANGE_ONLY_OLD : ONP_CHANGE_ONLY_NEW;
    }
    if (old->pass != now->pass) {
        if (why && n)
            snprintf(why, n, "%s",
                     now->pass ? "fails in OLD, passes in NEW" : "passes in OLD, fails in NEW");
        return now->pass ? ONP_CHANGE_BETTER : ONP_CHANGE_WORSE;
    }
    if (old->top1 >= 0 && now->top1 >= 0 && old->top1 != now->top1)
        return say(now->top1 < old->top1 ? ONP_CHANGE_WORSE : ONP_CHANGE_BETTER, why, n,
                   "top-1 agreement", old->top1, now->top1);
    if (isfinite(old->mismatch_frac) && isfinite(now->mismatch_frac) &&
        old->mismatch_frac != now->mismatch_frac)
        return say(now->mismatch_frac > old->mismatch_frac ? ONP_CHANGE_WORSE : ONP_CHANGE_BETTER,
                   why, n, "mismatch_frac", old->mismatch_frac, now->mismatch_frac);
    double a = old->max_abs, b = now->max_abs, noise = noise_of(old, now);
    if (isnan(a) || isnan(b) || a == b) return ONP_CHANGE_SAME;
    double hi = fmax(a, b), lo = fmin(a, b);
    if (!(hi > ONP_BASELINE_FACTOR * lo) || !(hi - lo > noise)) return ONP_CHANGE_SAME;
    onp_change c = b > a ? ONP_CHANGE_WORSE : ONP_CHANGE_BETTER;
    if (why && n) {
        if (noise > 0)
            snprintf(why, n,
                     "max_abs %.6g -> %.6g (more than x%g apart, beyond the noise envelope %.3g)",
                     a, b, ONP_BASELINE_FACTOR, noise);
        else
            snprintf(why, n, "max_abs %.6g -> %.6g (more than x%g apart)", a, b,
                     ONP_BASELINE_FACTOR);
    }
    return c;
}

onp_baseline_verdict onp_baseline_verdict_of(const size_t counts[ONP_CHANGE_COUNT])
{
    int worse = counts[ONP_CHANGE_WORSE] || counts[ONP_CHANGE_ONLY_OLD];
    int better = counts[ONP_CHANGE_BETTER] != 0;
    return worse && better ? ONP_BASELINE_MIXED
           : worse         ? ONP_BASELINE_REGRESSED
           : better        ? ONP_BASELINE_IMPROVED
                           : ONP_BASELINE_UNCHANGED;
}
