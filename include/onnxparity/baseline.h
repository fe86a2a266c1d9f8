/*
 * baseline.h — what got worse between two parity runs of one model (a
 * baseline, e.g. main's check document, and a candidate, e.g. a pull
 * request's): the decision behind `onnxparity diff OLD.json NEW.json`.
 *
 * The caller reduces each side to onp_baseline_values per output (over all
 * fixtures) and per fixture x output; onp_baseline_judge() classes each
 * pair, onp_baseline_verdict() sums the classes into one verdict.  The
 * rule, in order:
 *   - present on one side only: ONP_CHANGE_ONLY_OLD (coverage lost: counts
 *     as worse) or ONP_CHANGE_ONLY_NEW (neutral);
 *   - passing on one side only: WORSE (now fails) or BETTER (now passes);
 *   - fewer top-1 labels agree, or a larger fraction of elements outside
 *     the tolerance: WORSE (and the reverse BETTER);
 *   - max_abs grown by more than ONP_BASELINE_FACTOR and by more than the
 *     float noise envelope (when one is known): WORSE (the reverse: BETTER);
 *     anything smaller is SAME: float noise moves max_abs between runs of a
 *     harmless change, and a diff that cried wolf on it would be ignored.
 *
 *     onp_baseline_values a = {1, 1, 2.4e-7, 1e-6, 0, 1, 8e-7}, b = a;
 *     b.max_abs = 3e-3;
 *     char why[200];
 *     onp_change c = onp_baseline_judge(&a, &b, why, sizeof why);  // WORSE
 *
 * Pure functions of their arguments: no I/O, no allocation.
 */
#ifndef ONNXPARITY_BASELINE_H
#define ONNXPARITY_BASELINE_H

#include <stddef.h>

/* max_abs must grow (or shrink) by more than this factor to count. */
#define ONP_BASELINE_FACTOR 2.0

typedef struct onp_baseline_values {
    int present;          /* 0: this side has no such output / fixture */
    int pass;             /* 1 when every fixture of it passes */
    double max_abs;       /* worst |actual - expected|; NaN unknown */
    double max_rel;       /* NaN unknown (reported, not judged) */
    double mismatch_frac; /* worst fraction of elements outside the tolerance; NaN unknown */
    double top1;          /* fraction of rows whose top-1 label agrees; < 0 not a classifier */
    double envelope;      /* the largest noise envelope; NaN or < 0 unknown */
} onp_baseline_values;

typedef enum onp_change {
    ONP_CHANGE_SAME,
    ONP_CHANGE_BETTER,
    ONP_CHANGE_WORSE,
    ONP_CHANGE_ONLY_OLD,
    ONP_CHANGE_ONLY_NEW,
    ONP_CHANGE_COUNT
} onp_change;

typedef enum onp_baseline_verdict {
    ONP_BASELINE_UNCHANGED, /* nothing better, nothing worse */
    ONP_BASELINE_IMPROVED,  /* something better, nothing worse */
    ONP_BASELINE_REGRESSED, /* something worse (or lost), nothing better */
    ONP_BASELINE_MIXED,     /* both */
    ONP_BASELINE_VERDICT_COUNT
} onp_baseline_verdict;

/* "same", "better", "worse", "only-old", "only-new". */
const char *onp_change_name(onp_change c);
/* "unchanged", "improved", "regressed", "mixed". */
const char *onp_baseline_verdict_name(onp_baseline_verdict v);

/* Class the pair (old, new) by the rule above.  `why` (n bytes, may be
 * NULL) gets one line saying which measure decided, e.g. "max_abs 2.4e-07
 * -> 0.003 (x12500, above the noise envelope 8e-07)"; "" for SAME. */
onp_change onp_baseline_judge(const onp_baseline_values *old, const onp_baseline_values *now,
                              char *why, size_t n);

/* The verdict over counts[ONP_CHANGE_COUNT] pairs of each class. */
onp_baseline_verdict onp_baseline_verdict_of(const size_t counts[ONP_CHANGE_COUNT]);

#endif
