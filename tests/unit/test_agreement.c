/*
 * test_agreement.c — the flip-rate bound (agreement.h) against golden
 * Clopper–Pearson limits (the Beta(k+1, n-k) quantile, computed once with
 * scipy.stats.beta.ppf), its edge cases, and the criterion.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnxparity/agreement.h"
#include "testhelp.h"

typedef struct cp_case {
    int64_t k, n;
    double confidence, want;
} cp_case;

static void test_golden(void)
{
    static const cp_case cases[] = {
        {0, 500, 0.95, 0.005973551516349557},
        {1, 500, 0.95, 0.00945228220807518},
        {5, 200, 0.95, 0.05184333912029053},
        {3, 10, 0.99, 0.7028835276794626},
        {0, 1, 0.95, 0.95},
        {50, 100, 0.9, 0.5685831744062191},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const cp_case *c = &cases[i];
        double got = onp_clopper_pearson_upper(c->k, c->n, c->confidence);
        CHECKF(fabs(got - c->want) < 1e-9 * fmax(1, c->want), "k=%lld n=%lld: %.15g, want %.15g",
               (long long)c->k, (long long)c->n, got, c->want);
    }
}

static void test_edges(void)
{
    CHECK(onp_clopper_pearson_upper(0, 0, 0.95) == 1);
    CHECK(onp_clopper_pearson_upper(7, 7, 0.95) == 1);
    CHECK(isnan(onp_clopper_pearson_upper(8, 7, 0.95)));
    CHECK(isnan(onp_clopper_pearson_upper(-1, 7, 0.95)));
    CHECK(isnan(onp_clopper_pearson_upper(0, 7, 1.0)));
    CHECK(isnan(onp_clopper_pearson_upper(0, 7, 0)));
    /* more rows with no flip: a tighter bound; one flip more: a looser one */
    CHECK(onp_clopper_pearson_upper(0, 1000, 0.95) < onp_clopper_pearson_upper(0, 500, 0.95));
    CHECK(onp_clopper_pearson_upper(1, 500, 0.95) > onp_clopper_pearson_upper(0, 500, 0.95));
    /* a large n stays finite and above the observed rate */
    double big = onp_clopper_pearson_upper(30, 1000000, 0.95);
    CHECK(big > 30e-6 && big < 60e-6);
}

static void test_agreement_of(void)
{
    onp_agreement a;
    CHECK(onp_agreement_of(500, 500, 0.95, &a) == 0);
    CHECK(a.flipped == 0 && a.flip_rate == 0);
    CHECK(fabs(a.flip_upper - 0.005973551516349557) < 1e-12);
    CHECK(onp_agreement_meets(&a, 0.01));
    CHECK(!onp_agreement_meets(&a, 0.005)); /* 500 samples cannot show < 0.5 % */
    CHECK(onp_agreement_of(500, 499, 0.95, &a) == 0 && a.flipped == 1);
    CHECK(!onp_agreement_meets(&a, 0.009));
    CHECK(onp_agreement_of(0, 0, 0.95, &a) == 0 && a.flip_upper == 1);
    CHECK(!onp_agreement_meets(&a, 1)); /* no rows: no evidence */
    CHECK(onp_agreement_of(5, 6, 0.95, &a) == -1 && isnan(a.flip_upper));
}

static void test_collect(void)
{
    onp_output_verdict outs[3];
    memset(outs, 0, sizeof outs);
    snprintf(outs[0].name, sizeof outs[0].name, "logits");
    outs[0].has_topk = 1, outs[0].tk.rows = 64, outs[0].tk.top1_agree = 63;
    snprintf(outs[1].name, sizeof outs[1].name, "aux");
    outs[1].has_topk = 1, outs[1].tk.rows = 64, outs[1].tk.top1_agree = 60;
    snprintf(outs[2].name, sizeof outs[2].name, "embedding"); /* no top-k: not counted */
    outs[2].tk.rows = 99;
    onp_fixture_verdict res[2];
    memset(res, 0, sizeof res);
    res[0].outs = outs, res[0].n_out = 3;
    res[1].outs = outs, res[1].n_out = 1;
    onp_agreement a;
    onp_agreement_collect(res, 2, "logits", 0.95, &a);
    CHECK(a.rows == 128 && a.agree == 126 && a.flipped == 2);
    onp_agreement_collect(res, 2, NULL, 0.95, &a);
    CHECK(a.rows == 192 && a.agree == 186);
    onp_agreement_collect(res, 2, "none", 0.95, &a);
    CHECK(a.rows == 0 && a.flip_upper == 1);
}

TEST_MAIN(test_golden, test_edges, test_agreement_of, test_collect)
