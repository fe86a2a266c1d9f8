/*
 * test_noise.c — the noise rule (noise.h) on hand-made values: golden cases
 * of onp_noise_rule whose verdicts are worked out by hand from the rule in
 * docs/compare.md, then the tensor-level judgment (vacuity, the float64
 * reference, the ORT-side spread) and the one-ulp perturbation.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "onnxparity/noise.h"
#include "testhelp.h"

#define EPS32 0x1p-23

/* One golden case of the rule on numbers. */
typedef struct rule_case {
    const char *what;
    int pass_tol, shape_ok, nan_mismatch;
    double gap_max, gap_rms;
    onp_noise_src src;
    double n_max, n_rms, scale;
    int has_ref;
    double ort_err, ort_rms, eager_err, eager_rms;
    double eps;
    int strict;
    onp_verdict want;
    int want_pass;
} rule_case;

/* Envelope with K = 4: (K+1) N + 8 eps scale. */
static const rule_case rule_cases[] = {
    {"within the tolerance", 1, 1, 0, 1e-6, 1e-7, ONP_NOISE_NONE, 0, 0, 1, 0, 0, 0, 0, 0, EPS32, 0,
     ONP_VERDICT_WITHIN_TOL, 1},
    {"beyond, no estimate", 0, 1, 0, 1e-3, 1e-4, ONP_NOISE_NONE, 0, 0, 1, 0, 0, 0, 0, 0, EPS32, 0,
     ONP_VERDICT_BEYOND_TOL, 0},
    /* envelope 5 * 1e-3 + 8 * 2^-23 * 10 = 5.0095e-3 */
    {"deep net: gap 4e-3 inside 5.01e-3", 0, 1, 0, 4e-3, 3e-4, ONP_NOISE_FLOAT64, 1e-3, 1e-4, 10, 0,
     0, 0, 0, 0, EPS32, 0, ONP_VERDICT_WITHIN_NOISE, 1},
    {"gap 6e-3 beyond 5.01e-3", 0, 1, 0, 6e-3, 3e-4, ONP_NOISE_FLOAT64, 1e-3, 1e-4, 10, 0, 0, 0, 0,
     0, EPS32, 0, ONP_VERDICT_BEYOND_NOISE, 0},
    /* rms envelope 5 * 1e-4 + 9.5e-6 = 5.095e-4: a few large errors spread wide */
    {"max inside, rms beyond", 0, 1, 0, 4e-3, 6e-4, ONP_NOISE_FLOAT64, 1e-3, 1e-4, 10, 0, 0, 0, 0,
     0, EPS32, 0, ONP_VERDICT_BEYOND_NOISE, 0},
    {"strict: inside noise still fails", 0, 1, 0, 4e-3, 3e-4, ONP_NOISE_FLOAT64, 1e-3, 1e-4, 10, 0,
     0, 0, 0, 0, EPS32, 1, ONP_VERDICT_WITHIN_NOISE, 0},
    /* the FCN: ORT closer to float64 (2.3e-3) than eager is (4.0e-3) */
    {"reference: ORT closer than eager", 0, 1, 0, 5e-3, 5e-4, ONP_NOISE_FLOAT64, 4e-3, 4e-4, 10, 1,
     2.3e-3, 2e-4, 4e-3, 4e-4, EPS32, 0, ONP_VERDICT_WITHIN_NOISE, 1},
    /* 4 * 4e-3 + 9.5e-6 = 1.601e-2 < 2e-2 */
    {"reference: ORT 5x worse than eager", 0, 1, 0, 2e-2, 5e-4, ONP_NOISE_FLOAT64, 4e-3, 4e-4, 10,
     1, 2e-2, 4e-4, 4e-3, 4e-4, EPS32, 0, ONP_VERDICT_BEYOND_NOISE, 0},
    {"reference: ORT 3.9x, inside", 0, 1, 0, 1.9e-2, 5e-4, ONP_NOISE_FLOAT64, 4e-3, 4e-4, 10, 1,
     1.56e-2, 4e-4, 4e-3, 4e-4, EPS32, 0, ONP_VERDICT_WITHIN_NOISE, 1},
    {"shape mismatch is never noise", 0, 0, 0, 0, 0, ONP_NOISE_FLOAT64, 1, 1, 1, 0, 0, 0, 0, 0,
     EPS32, 0, ONP_VERDICT_NOT_NUMERIC, 0},
    {"NaN on one side is never noise", 0, 1, 1, 1e-9, 1e-9, ONP_NOISE_FLOAT64, 1, 1, 1, 0, 0, 0, 0,
     0, EPS32, 0, ONP_VERDICT_NOT_NUMERIC, 0},
    {"integer mismatch is never noise", 0, 1, 0, 1, 1, ONP_NOISE_FLOAT64, 5, 5, 10, 0, 0, 0, 0, 0,
     0, 0, ONP_VERDICT_NOT_NUMERIC, 0},
    /* exact eager (N = 0): floor 8 * 2^-23 * 1 = 9.54e-7 */
    {"floor only: 5e-7 inside 9.5e-7", 0, 1, 0, 5e-7, 1e-7, ONP_NOISE_FLOAT64, 0, 0, 1, 0, 0, 0, 0,
     0, EPS32, 0, ONP_VERDICT_WITHIN_NOISE, 1},
    {"floor only: 1e-6 beyond 9.5e-7", 0, 1, 0, 1e-6, 1e-7, ONP_NOISE_FLOAT64, 0, 0, 1, 0, 0, 0, 0,
     0, EPS32, 0, ONP_VERDICT_BEYOND_NOISE, 0},
    /* float16 floor 8 * 2^-10 * 2 = 1.5625e-2 */
    {"float16 floor", 0, 1, 0, 1.5e-2, 1e-3, ONP_NOISE_ORT, 0, 0, 2, 0, 0, 0, 0, 0, 0x1p-10, 0,
     ONP_VERDICT_WITHIN_NOISE, 1},
    /* a training-mode BatchNorm: 71 against noise 3e-5 */
    {"a defect: 71 against noise 3e-5", 0, 1, 0, 71, 9, ONP_NOISE_SCALED, 3e-5, 4e-6, 50, 0, 0, 0,
     0, 0, EPS32, 0, ONP_VERDICT_BEYOND_NOISE, 0},
};

static void test_rule_golden(void)
{
    for (size_t i = 0; i < sizeof rule_cases / sizeof *rule_cases; i++) {
        const rule_case *c = &rule_cases[i];
        onp_metrics m;
        memset(&m, 0, sizeof m);
        m.shape_ok = c->shape_ok;
        m.dtype_ok = 1;
        m.pass = c->pass_tol;
        m.max_abs = c->gap_max;
        m.rms = c->gap_rms;
        m.nan_mismatch = c->nan_mismatch;
        m.needed_atol = c->gap_max;
        onp_noise n = {c->src, c->n_max, c->n_rms, 0, c->scale, c->scale};
        onp_judgment j;
        memset(&j, 0, sizeof j);
        j.has_ref = c->has_ref;
        j.ort_err_max = c->ort_err, j.ort_err_rms = c->ort_rms;
        j.eager_err_max = c->eager_err, j.eager_err_rms = c->eager_rms;
        onp_noise_rule(&m, c->src == ONP_NOISE_NONE ? NULL : &n, c->eps, c->strict, &j);
        CHECKF(j.verdict == c->want, "%s: %s, want %s", c->what, onp_verdict_name(j.verdict),
               onp_verdict_name(c->want));
        CHECKF(j.pass == c->want_pass, "%s: pass %d", c->what, j.pass);
        if (c->src != ONP_NOISE_NONE && c->shape_ok && !c->nan_mismatch && c->eps > 0) {
            double env = (ONP_NOISE_FACTOR + 1) * c->n_max + ONP_NOISE_ULPS * c->eps * c->scale;
            CHECKF(fabs(j.envelope_max - env) <= 1e-15 * (1 + env), "%s: envelope %g want %g",
                   c->what, j.envelope_max, env);
            CHECK(j.suggest_atol >= j.envelope_max);
        }
        /* beyond the tolerance, the noise test is the verdict */
        if (!c->pass_tol && j.verdict != ONP_VERDICT_NOT_NUMERIC)
            CHECKF(j.beyond_envelope == (j.verdict == ONP_VERDICT_BEYOND_NOISE),
                   "%s: beyond_envelope %d", c->what, j.beyond_envelope);
        CHECK(!onp_judgment_within_tol_beyond_noise(&j) || c->pass_tol);
    }
}

/* Within the tolerance the verdict stays within-tolerance (a pass); the
 * noise test is still asked: a value the tolerance passes that its float64
 * noise does not explain is said (check's note), not one inside its noise,
 * nor one weighed against an ORT-side estimate or no estimate at all. */
static void test_within_tol_beyond_noise(void)
{
    static const struct {
        const char *what;
        onp_noise_src src;
        int has_ref;
        double gap, n_max, ort_err, eager_err;
        int want_beyond, want_said;
    } cases[] = {
        /* 100x LayerNorm eps: ORT 5.1e-6 from float64, eager 3.3e-7: 4 * 3.3e-7 + 9.5e-7 */
        {"reference: ORT 15x eager, within tol", ONP_NOISE_FLOAT64, 1, 5e-6, 3.3e-7, 5.1e-6, 3.3e-7,
         1, 1},
        {"reference: ORT as close as eager", ONP_NOISE_FLOAT64, 1, 5e-7, 3.3e-7, 3e-7, 3.3e-7, 0,
         0},
        /* scaled: envelope 5 * 1e-7 + 9.5e-7 = 1.45e-6 */
        {"scaled: gap 4e-6 beyond 1.45e-6", ONP_NOISE_SCALED, 0, 4e-6, 1e-7, 0, 0, 1, 1},
        {"scaled: gap 1e-6 inside 1.45e-6", ONP_NOISE_SCALED, 0, 1e-6, 1e-7, 0, 0, 0, 0},
        {"ORT-side estimate: beyond, not said", ONP_NOISE_ORT, 0, 4e-6, 1e-7, 0, 0, 1, 0},
        {"no estimate: nothing to say", ONP_NOISE_NONE, 0, 4e-6, 0, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        onp_metrics m;
        memset(&m, 0, sizeof m);
        m.shape_ok = m.dtype_ok = m.pass = 1;
        m.max_abs = cases[i].gap;
        m.rms = cases[i].gap / 10;
        onp_noise n = {cases[i].src, cases[i].n_max, cases[i].n_max / 10, 0, 1, 1};
        onp_judgment j;
        memset(&j, 0, sizeof j);
        j.has_ref = cases[i].has_ref;
        j.ort_err_max = cases[i].ort_err, j.ort_err_rms = cases[i].ort_err / 10;
        j.eager_err_max = cases[i].eager_err, j.eager_err_rms = cases[i].eager_err / 10;
        onp_noise_rule(&m, cases[i].src == ONP_NOISE_NONE ? NULL : &n, EPS32, 0, &j);
        CHECKF(j.verdict == ONP_VERDICT_WITHIN_TOL && j.pass, "%s: %s", cases[i].what,
               onp_verdict_name(j.verdict));
        CHECKF(j.beyond_envelope == cases[i].want_beyond, "%s: beyond_envelope %d", cases[i].what,
               j.beyond_envelope);
        CHECKF(onp_judgment_within_tol_beyond_noise(&j) == cases[i].want_said, "%s: said",
               cases[i].what);
    }
}

static void fill_f32(onp_tensor *t, int rank, const int64_t *dims, const float *v)
{
    onp_error e;
    CHECK(onp_tensor_alloc(t, ONP_FLOAT, rank, dims, &e) == 0);
    memcpy(t->data, v, t->nbytes);
}

static void test_vacuous(void)
{
    int64_t d[2] = {2, 3};
    float tiny[6] = {1e-13f, 2e-13f, 3e-13f, 4e-13f, 5e-13f, 6e-13f};
    float half[6] = {0.5e-13f, 1e-13f, 1.5e-13f, 2e-13f, 2.5e-13f, 3e-13f};
    onp_tensor e_, a_;
    fill_f32(&e_, 2, d, tiny);
    fill_f32(&a_, 2, d, half);
    onp_judge_opts o;
    onp_judge_opts_init(&o);
    onp_metrics m;
    onp_judgment j;
    onp_error err;
    /* at atol 1e-5 anything this small passes: vacuous, judged at rtol x scale */
    CHECK(onp_judge_value(&e_, &a_, NULL, NULL, &o, &m, &j, &err) == 0);
    CHECK(j.vacuous == ONP_VACUOUS_BELOW_ATOL);
    CHECK(fabs(j.tol_used.atol - 1e-4 * 6e-13) < 1e-20);
    CHECK(!j.pass && j.verdict == ONP_VERDICT_BEYOND_TOL);
    /* an atol the user chose is honoured: still flagged vacuous, judged at it */
    o.atol_given = 1;
    CHECK(onp_judge_value(&e_, &a_, NULL, NULL, &o, &m, &j, &err) == 0);
    CHECK(j.vacuous == ONP_VACUOUS_BELOW_ATOL && j.tol_used.atol == o.tol.atol && j.pass);
    o.atol_given = 0;
    /* the same tiny values agreeing to 1e-7 relative pass, still flagged */
    onp_tensor_release(&a_);
    float close[6];
    for (int i = 0; i < 6; i++) close[i] = tiny[i] * (1 + 1e-7f);
    fill_f32(&a_, 2, d, close);
    CHECK(onp_judge_value(&e_, &a_, NULL, NULL, &o, &m, &j, &err) == 0);
    CHECK(j.vacuous == ONP_VACUOUS_BELOW_ATOL && j.pass && j.verdict == ONP_VERDICT_WITHIN_TOL);
    onp_tensor_release(&e_);
    onp_tensor_release(&a_);
    /* identical rows: constant across the batch */
    float rows[6] = {1, 2, 3, 1, 2, 3};
    fill_f32(&e_, 2, d, rows);
    fill_f32(&a_, 2, d, rows);
    CHECK(onp_judge_value(&e_, &a_, NULL, NULL, &o, &m, &j, &err) == 0);
    CHECK(j.vacuous == ONP_VACUOUS_CONSTANT && j.pass);
    onp_tensor_release(&e_);
    onp_tensor_release(&a_);
    /* one row only: not constant-across-batch */
    int64_t d1[2] = {1, 3};
    fill_f32(&e_, 2, d1, rows);
    fill_f32(&a_, 2, d1, rows);
    CHECK(onp_judge_value(&e_, &a_, NULL, NULL, &o, &m, &j, &err) == 0);
    CHECK(j.vacuous == ONP_VACUOUS_NO);
    onp_tensor_release(&e_);
    onp_tensor_release(&a_);
}

static void test_reference(void)
{
    int64_t d[1] = {4};
    float ev[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    float av[4] = {1.001f, 2.0f, 3.0f, 4.0f};
    onp_tensor e_, a_, r_;
    fill_f32(&e_, 1, d, ev);
    fill_f32(&a_, 1, d, av);
    onp_error err;
    CHECK(onp_tensor_alloc(&r_, ONP_DOUBLE, 1, d, &err) == 0);
    double rv[4] = {1.0008, 2.0, 3.0, 4.0}; /* the truth sits near ORT */
    memcpy(r_.data, rv, sizeof rv);
    onp_judge_opts o;
    onp_judge_opts_init(&o);
    onp_metrics m;
    onp_judgment j;
    CHECK(onp_judge_value(&e_, &a_, &r_, NULL, &o, &m, &j, &err) == 0);
    CHECK(j.has_ref && j.noise.src == ONP_NOISE_FLOAT64);
    CHECKF(fabs(j.eager_err_max - 8e-4) < 1e-9, "eager err %g", j.eager_err_max);
    CHECKF(fabs(j.ort_err_max - ((double)1.001f - 1.0008)) < 1e-9, "ort err %g", j.ort_err_max);
    CHECK(j.verdict == ONP_VERDICT_WITHIN_NOISE && j.pass);
    /* the truth at eager: ORT's 1e-3 is 4x beyond an exact eager's floor */
    rv[0] = 1.0;
    memcpy(r_.data, rv, sizeof rv);
    CHECK(onp_judge_value(&e_, &a_, &r_, NULL, &o, &m, &j, &err) == 0);
    CHECK(j.verdict == ONP_VERDICT_BEYOND_NOISE && !j.pass);
    onp_tensor_release(&e_);
    onp_tensor_release(&a_);
    onp_tensor_release(&r_);
}

/* Issue 36: a float64 reference whose NaN/Inf positions are not eager's is
 * no noise source.  All-NaN (or all-Inf) made both distances "0 over no
 * finite element", and 0 <= 4 * 0 + U passed ORT shifted by 0.05. */
static void test_reference_nonfinite(void)
{
    int64_t d[1] = {4};
    float ev[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    float av[4] = {1.05f, 2.05f, 3.05f, 4.05f};
    onp_tensor e_, a_, r_;
    fill_f32(&e_, 1, d, ev);
    fill_f32(&a_, 1, d, av);
    onp_error err;
    CHECK(onp_tensor_alloc(&r_, ONP_DOUBLE, 1, d, &err) == 0);
    double *rv = r_.data;
    onp_judge_opts o;
    onp_judge_opts_init(&o);
    onp_metrics m;
    onp_judgment j;
    const double bad[3] = {NAN, INFINITY, -INFINITY};
    for (int b = 0; b < 3; b++) {
        for (int i = 0; i < 4; i++) rv[i] = bad[b];
        CHECK(onp_judge_value(&e_, &a_, &r_, NULL, &o, &m, &j, &err) == 0);
        CHECKF(!j.pass && j.verdict == ONP_VERDICT_BEYOND_TOL, "reference %g: %s", bad[b],
               onp_verdict_name(j.verdict));
        CHECK(!j.has_ref && j.noise.src == ONP_NOISE_NONE && j.ref_refused == 4);
        /* the next source decides: float64 statistics of the same output */
        onp_noise st = {ONP_NOISE_SCALED, 1e-6, 1e-7, 0, 4, 2.7};
        CHECK(onp_judge_value(&e_, &a_, &r_, &st, &o, &m, &j, &err) == 0);
        CHECK(!j.pass && j.verdict == ONP_VERDICT_BEYOND_NOISE && j.noise.src == ONP_NOISE_SCALED);
        CHECK(!j.has_ref && j.ref_refused == 4);
        /* ... and passes what is noise by that source */
        st.max_abs = 0.02, st.rms = 0.02;
        CHECK(onp_judge_value(&e_, &a_, &r_, &st, &o, &m, &j, &err) == 0);
        CHECK(j.pass && j.verdict == ONP_VERDICT_WITHIN_NOISE && j.ref_refused == 4);
    }
    /* one NaN where eager is finite: positions differ, refused */
    double one_nan[4] = {1.0, NAN, 3.0, 4.0};
    memcpy(rv, one_nan, sizeof one_nan);
    CHECK(onp_judge_value(&e_, &a_, &r_, NULL, &o, &m, &j, &err) == 0);
    CHECK(!j.pass && j.ref_refused == 1 && !j.has_ref);
    /* eager overflowed where float64 did not: refused too */
    double finite[4] = {1.0, 2.0, 3.0, 4.0};
    memcpy(rv, finite, sizeof finite);
    ((float *)e_.data)[3] = INFINITY;
    ((float *)a_.data)[3] = INFINITY;
    CHECK(onp_judge_value(&e_, &a_, &r_, NULL, &o, &m, &j, &err) == 0);
    CHECK(!j.pass && j.ref_refused == 1);
    /* the same NaN/Inf positions on all three: the reference stands, measured
     * on the finite elements, and the shift is still a defect */
    double same[4] = {1.0, 2.0, NAN, INFINITY};
    memcpy(rv, same, sizeof same);
    ((float *)e_.data)[2] = NAN;
    ((float *)a_.data)[2] = NAN;
    CHECK(onp_judge_value(&e_, &a_, &r_, NULL, &o, &m, &j, &err) == 0);
    CHECK(j.has_ref && j.ref_refused == 0 && j.noise.src == ONP_NOISE_FLOAT64);
    CHECK(!j.pass && j.verdict == ONP_VERDICT_BEYOND_NOISE);
    /* and ORT within rounding of it passes as before */
    float near[4] = {1.0f + 1e-6f, 2.0f, NAN, INFINITY};
    memcpy(a_.data, near, sizeof near);
    rv[0] = 1.0 + 5e-7;
    CHECK(onp_judge_value(&e_, &a_, &r_, NULL, &o, &m, &j, &err) == 0);
    CHECK(j.has_ref && j.ref_refused == 0 && j.pass);
    onp_tensor_release(&e_);
    onp_tensor_release(&a_);
    onp_tensor_release(&r_);
}

/* A float64 reference far from float32 eager (boxes gathered by a top-k on
 * near-ties: float64 picked other boxes).  Eager reproducible: the value is
 * ill-conditioned, its own float64 noise is kept and ORT is held against it
 * (no ORT-side estimate replaces it).  Eager random (the capture's
 * determinism rerun differed): refused, the tolerance alone decides. */
static void test_reference_ill_conditioned(void)
{
    int64_t d[1] = {4};
    float ev[4] = {10.0f, 200.0f, 30.0f, 300.0f}; /* eager float32: boxes A */
    float av[4] = {250.0f, 20.0f, 300.0f, 40.0f}; /* ORT: boxes B */
    double rv[4] = {240.0, 25.0, 290.0, 35.0};    /* float64: boxes B' */
    onp_tensor e_, a_, r_;
    fill_f32(&e_, 1, d, ev);
    fill_f32(&a_, 1, d, av);
    onp_error err;
    CHECK(onp_tensor_alloc(&r_, ONP_DOUBLE, 1, d, &err) == 0);
    memcpy(r_.data, rv, sizeof rv);
    onp_judge_opts o;
    onp_judge_opts_init(&o);
    onp_metrics m;
    onp_judgment j;
    CHECK(onp_judge_value(&e_, &a_, &r_, NULL, &o, &m, &j, &err) == 0);
    CHECKF(j.pass && j.verdict == ONP_VERDICT_WITHIN_NOISE, "%s", onp_verdict_name(j.verdict));
    CHECK(j.ill_conditioned && !j.noise_refused && j.has_ref && j.noise.src == ONP_NOISE_FLOAT64);
    CHECK(j.eager_err_max == 265.0 && j.ort_err_max == 10.0);
    /* ORT farther from float64 than K times eager is still a defect */
    float far[4] = {10.0f, 2000.0f, 30.0f, 3000.0f};
    memcpy(a_.data, far, sizeof far);
    CHECK(onp_judge_value(&e_, &a_, &r_, NULL, &o, &m, &j, &err) == 0);
    CHECK(!j.pass && j.verdict == ONP_VERDICT_BEYOND_NOISE && j.ill_conditioned);
    memcpy(a_.data, av, sizeof av);
    /* the same as statistics (the noise book), of this fixture and scaled */
    onp_noise st = {ONP_NOISE_FLOAT64, 265.0, 150.0, 0, 300.0, 180.0};
    CHECK(onp_judge_value(&e_, &a_, NULL, &st, &o, &m, &j, &err) == 0);
    CHECK(j.pass && j.verdict == ONP_VERDICT_WITHIN_NOISE && j.ill_conditioned);
    st.src = ONP_NOISE_SCALED;
    CHECK(onp_judge_value(&e_, &a_, NULL, &st, &o, &m, &j, &err) == 0);
    CHECK(j.pass && j.verdict == ONP_VERDICT_WITHIN_NOISE && j.ill_conditioned);
    /* an ORT-side spread that wide is never kept: not a float64 measurement */
    st.src = ONP_NOISE_ORT;
    CHECK(onp_judge_value(&e_, &a_, NULL, &st, &o, &m, &j, &err) == 0);
    CHECK(!j.pass && j.verdict == ONP_VERDICT_BEYOND_TOL && j.noise_refused);
    /* eager not reproducible: the float64 distance is the random op's */
    o.eager_random = 1;
    CHECK(onp_judge_value(&e_, &a_, &r_, NULL, &o, &m, &j, &err) == 0);
    CHECK(!j.pass && j.verdict == ONP_VERDICT_BEYOND_TOL && j.noise_refused && !j.ill_conditioned);
    onp_tensor_release(&e_);
    onp_tensor_release(&a_);
    onp_tensor_release(&r_);
}

static void test_perturb(void)
{
    int64_t d[1] = {64};
    onp_tensor t, u;
    onp_error e;
    CHECK(onp_tensor_alloc(&t, ONP_FLOAT, 1, d, &e) == 0);
    float *p = t.data;
    for (int i = 0; i < 64; i++) p[i] = (float)(i - 32) * 0.37f;
    CHECK(onp_tensor_copy(&u, &t, &e) == 0);
    onp_perturb_ulp(&u, 42);
    const float *q = u.data;
    int up = 0, down = 0;
    for (int i = 0; i < 64; i++) {
        if (p[i] == 0) {
            CHECK(q[i] == 0);
            continue;
        }
        CHECK(q[i] == nextafterf(p[i], INFINITY) || q[i] == nextafterf(p[i], -INFINITY));
        up += q[i] > p[i], down += q[i] < p[i];
    }
    CHECK(up > 10 && down > 10); /* both directions */
    onp_noise n;
    CHECK(onp_noise_spread(&t, &u, &n, &e) == 0);
    CHECK(n.src == ONP_NOISE_ORT && n.max_abs > 0 && n.max_abs <= 11.84 * EPS32 * 2);
    /* the same seed moves the same way */
    onp_tensor w;
    CHECK(onp_tensor_copy(&w, &t, &e) == 0);
    onp_perturb_ulp(&w, 42);
    CHECK(!memcmp(w.data, u.data, u.nbytes));
    onp_tensor_release(&t);
    onp_tensor_release(&u);
    onp_tensor_release(&w);
    /* float16: one unit of the bit pattern; 0 and inf kept; int64 untouched */
    CHECK(onp_tensor_alloc(&t, ONP_FLOAT16, 1, d, &e) == 0);
    uint16_t *h = t.data;
    h[0] = 0x3c00; /* 1.0 */
    h[1] = 0x0000;
    h[2] = 0x7c00; /* inf */
    onp_perturb_ulp(&t, 7);
    CHECK(h[0] == 0x3c01 || h[0] == 0x3bff);
    CHECK(h[1] == 0 && h[2] == 0x7c00);
    onp_tensor_release(&t);
    CHECK(onp_tensor_alloc(&t, ONP_INT64, 1, d, &e) == 0);
    ((int64_t *)t.data)[3] = 5;
    onp_perturb_ulp(&t, 7);
    CHECK(((int64_t *)t.data)[3] == 5);
    onp_tensor_release(&t);
}

static void test_names(void)
{
    CHECK(!strcmp(onp_verdict_name(ONP_VERDICT_WITHIN_NOISE), "within-noise"));
    CHECK(!strcmp(onp_verdict_name(ONP_VERDICT_COUNT), "?"));
    CHECK(!strcmp(onp_noise_src_name(ONP_NOISE_FLOAT64), "float64"));
    CHECK(!strcmp(onp_vacuity_name(ONP_VACUOUS_CONSTANT), "constant-across-batch"));
    CHECK(onp_dtype_eps(ONP_FLOAT) == EPS32 && onp_dtype_eps(ONP_INT32) == 0);
    CHECK(onp_dtype_eps(ONP_BFLOAT16) == 0x1p-7 && onp_dtype_eps(ONP_DOUBLE) == 0x1p-52);
    /* the names read back: every one, and nothing else */
    for (int v = 0; v < ONP_VERDICT_COUNT; v++) {
        onp_verdict got = ONP_VERDICT_COUNT;
        CHECK(onp_verdict_from_name(onp_verdict_name((onp_verdict)v), &got) == 0 && (int)got == v);
    }
    for (int s = 0; s < ONP_NOISE_SRC_COUNT; s++) {
        onp_noise_src got = ONP_NOISE_SRC_COUNT;
        CHECK(onp_noise_src_from_name(onp_noise_src_name((onp_noise_src)s), &got) == 0 &&
              (int)got == s);
    }
    onp_verdict v = ONP_VERDICT_WITHIN_NOISE;
    onp_noise_src src = ONP_NOISE_ORT;
    CHECK(onp_verdict_from_name("?", &v) == -1 && v == ONP_VERDICT_WITHIN_NOISE);
    CHECK(onp_verdict_from_name(NULL, &v) == -1 && onp_noise_src_from_name("Float64", &src) == -1 &&
          src == ONP_NOISE_ORT);
}

/* The judgment's scale (the largest finite |x| of a float32 output, found
 * eight lanes at a time, issue 34) is onp_value_stats_of's to the bit:
 * lengths around the lane width, the largest value at every position, NaN,
 * both infinities, FLT_MAX, subnormals, -0, all-non-finite. */
static void test_scale_matches_stats(void)
{
    uint64_t st = 0x9e3779b97f4a7c15u;
    onp_judge_opts o;
    onp_judge_opts_init(&o);
    onp_metrics m;
    onp_judgment j;
    onp_error err;
    int bad = 0, runs = 0;
    for (int64_t n = 1; n <= 41; n++)
        for (int64_t at = 0; at < n; at++)
            for (int kind = 0; kind < 5; kind++) {
                float v[41];
                for (int64_t i = 0; i < n; i++) {
                    st = st * 6364136223846793005u + 1442695040888963407u;
                    v[i] = (float)((int64_t)(st >> 40) - (1 << 23)) / 4096.0f;
                    if (st % 7 == 0) v[i] = NAN;
                    if (st % 11 == 0) v[i] = (st & 1) ? INFINITY : -INFINITY;
                }
                float big[5] = {-1e9f, FLT_MAX, 1e-40f, -0.0f, NAN};
                v[at] = big[kind];
                if (kind == 4)
                    for (int64_t i = 0; i < n; i++) v[i] = i % 2 ? NAN : -INFINITY;
                onp_tensor t;
                int64_t d[1] = {n};
                fill_f32(&t, 1, d, v);
                onp_value_stats vs;
                onp_value_stats_of(&t, &vs);
                if (onp_judge_value(&t, &t, NULL, NULL, &o, &m, &j, &err) ||
                    memcmp(&j.scale_max, &vs.scale_max, sizeof j.scale_max))
                    bad++;
                runs++;
                onp_tensor_release(&t);
            }
    CHECKF(bad == 0, "%d of %d scales differ", bad, runs);
    /* the noise's scale_rms beside a float64 reference (four sums, another
     * order of the same additions): onp_value_stats_of's to 1e-12 */
    int far = 0;
    for (int64_t n = 1; n <= 41; n++) {
        float v[41];
        double w[41];
        for (int64_t i = 0; i < n; i++) {
            st = st * 6364136223846793005u + 1442695040888963407u;
            v[i] = (float)((int64_t)(st >> 40) - (1 << 23)) / 4096.0f;
            if (st % 13 == 0) v[i] = INFINITY; /* eager and float64 agree on it */
            w[i] = (double)v[i];
        }
        onp_tensor t, r;
        int64_t d[1] = {n};
        fill_f32(&t, 1, d, v);
        CHECK(onp_tensor_alloc(&r, ONP_DOUBLE, 1, d, &err) == 0);
        memcpy(r.data, w, sizeof *w * (size_t)n);
        onp_value_stats vs;
        onp_value_stats_of(&t, &vs);
        if (onp_judge_value(&t, &t, &r, NULL, &o, &m, &j, &err) ||
            j.noise.src != ONP_NOISE_FLOAT64 ||
            fabs(j.noise.scale_rms - vs.scale_rms) > 1e-12 * vs.scale_rms ||
            j.noise.scale_max != vs.scale_max)
            far++;
        onp_tensor_release(&t);
        onp_tensor_release(&r);
    }
    CHECKF(far == 0, "%d noise scales differ", far);
}

TEST_MAIN(test_rule_golden, test_within_tol_beyond_noise, test_vacuous, test_reference,
          test_reference_nonfinite, test_reference_ill_conditioned, test_perturb, test_names,
          test_scale_matches_stats)
