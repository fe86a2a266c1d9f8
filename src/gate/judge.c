/*
 * judge.c — a run judged against release criteria (gate.h): the
 * regression rules (each with its numbers and its one-line message), every
 * criterion as checked (the worst value against its limit), the drift
 * policy over the environment, and the gate's verdict.  Reads a judged run
 * (run.h) and its criteria; never runs anything, never prints.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/agreement.h"
#include "onnxparity/doc.h"
#include "onnxparity/gate.h"

// --- names -----------------------------------------------------------------------------

/* How to add a policy or an effect: one enum entry in gate.h, one name
 * here (the asserts keep the tables as long as the enums), and its rule in
 * onp_gate_drift_effect. */
static const char *const policy_names[] = {
    [ONP_GATE_DRIFT_WARN] = "warn",
    [ONP_GATE_DRIFT_FAIL] = "fail",
};
_Static_assert(sizeof policy_names / sizeof *policy_names == ONP_GATE_DRIFT_POLICY_COUNT,
               "one name per drift policy");

static const char *const effect_names[] = {
    [ONP_DRIFT_EFFECT_NOTE] = "note",
    [ONP_DRIFT_EFFECT_WARNING] = "warning",
    [ONP_DRIFT_EFFECT_FAILURE] = "failure",
};
_Static_assert(sizeof effect_names / sizeof *effect_names == ONP_DRIFT_EFFECT_COUNT,
               "one name per drift effect");

static int name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

const char *onp_gate_drift_policy_name(onp_gate_drift_policy p)
{
    return (unsigned)p < ONP_GATE_DRIFT_POLICY_COUNT ? policy_names[p] : "?";
}

int onp_gate_drift_policy_from_name(const char *name, onp_gate_drift_policy *out)
{
    int i = name_index(policy_names, ONP_GATE_DRIFT_POLICY_COUNT, name);
    if (i < 0) return -1;
    *out = (onp_gate_drift_policy)i;
    return 0;
}

const char *onp_drift_effect_name(onp_drift_effect f)
{
    return (unsigned)f < ONP_DRIFT_EFFECT_COUNT ? effect_names[f] : "?";
}

int onp_drift_effect_from_name(const char *name, onp_drift_effect *out)
{
    int i = name_index(effect_names, ONP_DRIFT_EFFECT_COUNT, name);
    if (i < 0) return -1;
    *out = (onp_drift_effect)i;
    return 0;
}

// --- the environment ---------------------------------------------------------------------

onp_drift_effect onp_gate_drift_effect(const onp_env_drift *d, onp_gate_drift_policy p)
{
    if (d->kind == ONP_DRIFT_NOTE) return ONP_DRIFT_EFFECT_NOTE;
    return p == ONP_GATE_DRIFT_FAIL ? ONP_DRIFT_EFFECT_FAILURE : ONP_DRIFT_EFFECT_WARNING;
}

const char *onp_gate_env_shown(onp_env_field f, const char *v, char *buf, size_t n)
{
    if (!v[0]) return "unknown";
    if (f == ONP_ENV_MODEL_SHA256 || f == ONP_ENV_ORT_LIBRARY_SHA256) {
        snprintf(buf, n, "%.12s", v);
        return buf;
    }
    size_t k = 0;
    for (const char *p = v; *p && k + 3 < n; p++) {
        if (*p == '\n')
            buf[k++] = ';', buf[k++] = ' ';
        else
            buf[k++] = *p;
    }
    buf[k] = '\0';
    return buf;
}

void onp_gate_drift_text(const onp_env_drift *d, char *buf, size_t n)
{
    char a[200], b[200];
    snprintf(buf, n, "%s: %s at record time, %s now", onp_env_field_name(d->field),
             onp_gate_env_shown(d->field, d->recorded, a, sizeof a),
             onp_gate_env_shown(d->field, d->current, b, sizeof b));
}

// --- the result: regressions and checks -------------------------------------------------

void onp_gate_result_release(onp_gate_result *g)
{
    if (!g) return;
    free(g->reg);
    free(g->checks);
    memset(g, 0, sizeof *g);
}

/* Record one comparison of `v` with `lim` under (output, check): the entry
 * keeps the worst value and the limit (the same for every fixture). */
static void check_note(onp_gate_result *g, const char *output, const char *check, double v,
                       double lim, int floor, int regressed)
{
    onp_gate_check *k = NULL;
    for (size_t i = 0; !k && i < g->n_checks; i++)
        if (!strcmp(g->checks[i].check, check) &&
            (g->checks[i].output == output ||
             (g->checks[i].output && output && !strcmp(g->checks[i].output, output))))
            k = &g->checks[i];
    if (!k) {
        if (g->n_checks == g->cap_checks) {
            size_t cap = g->cap_checks ? 2 * g->cap_checks : 16;
            onp_gate_check *p = realloc(g->checks, cap * sizeof *p);
            if (!p) {
                g->nomem = 1;
                return;
            }
            g->checks = p, g->cap_checks = cap;
        }
        k = &g->checks[g->n_checks++];
        memset(k, 0, sizeof *k);
        k->output = output;
        snprintf(k->check, sizeof k->check, "%s", check);
        k->measured = v;
        k->limit = lim;
        k->floor = floor;
    } else if (!isnan(k->measured) && (isnan(v) || (floor ? v < k->measured : v > k->measured))) {
        k->measured = v;
    }
    k->regressed |= regressed;
}

/* A new regression (message empty), or NULL when memory ran out. */
static onp_gate_regression *reg_add(onp_gate_result *g, const char *fixture, const char *output,
                                    const char *check, double value, double limit)
{
    if (g->n_reg == g->cap_reg) {
        size_t cap = g->cap_reg ? 2 * g->cap_reg : 16;
        onp_gate_regression *p = realloc(g->reg, cap * sizeof *p);
        if (!p) {
            g->nomem = 1;
            return NULL;
        }
        g->reg = p, g->cap_reg = cap;
    }
    onp_gate_regression *x = &g->reg[g->n_reg++];
    memset(x, 0, sizeof *x);
    x->fixture = fixture;
    x->output = output;
    snprintf(x->check, sizeof x->check, "%s", check);
    x->value = value;
    x->limit = limit;
    return x;
}

/* "OUTPUT: CHECK V > recorded limit L (fixture F)" */
static void reg_limit(onp_gate_result *g, const char *fx, const char *out, const char *check,
                      double v, double lim, const char *what)
{
    char a[32], b[32];
    onp_gate_regression *x = reg_add(g, fx, out, check, v, lim);
    /* as many digits as it takes for the value to read differently from the limit */
    for (int prec = 3; prec <= 17; prec++) {
        snprintf(a, sizeof a, "%.*g", prec, v);
        snprintf(b, sizeof b, "%.*g", prec, lim);
        if (strcmp(a, b) || !isfinite(v)) break;
    }
    if (!isfinite(v)) onp_doc_short_num(v, a, sizeof a);
    if (x) snprintf(x->msg, sizeof x->msg, "%s: %s %s > %s %s (%s)", out, check, a, what, b, fx);
}

/* Judge v against the upper limit lim (NaN is beyond any limit): noted as
 * a check, a regression when beyond. */
static void judge_limit(onp_gate_result *g, const char *fx, const char *out, const char *check,
                        double v, double lim, const char *what)
{
    int beyond = !(v <= lim);
    check_note(g, out, check, v, lim, 0, beyond);
    if (beyond) reg_limit(g, fx, out, check, v, lim, what);
}

// --- the rules --------------------------------------------------------------------------

/* fixtures: at least as many as recorded. */
static void judge_count(const onp_criteria *c, const onp_run_result *r, onp_gate_result *g)
{
    onp_gate_regression *x;
    int fewer = (long)r->n_fix < c->fixtures;
    check_note(g, NULL, "fixtures", (double)r->n_fix, (double)c->fixtures, 1, fewer);
    if (fewer && (x = reg_add(g, NULL, NULL, "fixtures", (double)r->n_fix, (double)c->fixtures)))
        snprintf(x->msg, sizeof x->msg, "fixtures: %zu present, criteria require %ld", r->n_fix,
                 c->fixtures);
}

/* One output of one fixture against its criteria co. */
static void judge_value(const onp_crit_out *co, const char *fx, const onp_output_verdict *x,
                        onp_gate_result *g)
{
    onp_gate_regression *rg;
    if (!x->compared || !x->m.shape_ok || !x->m.dtype_ok) {
        if ((rg = reg_add(g, fx, x->name, "compare", NAN, NAN)))
            snprintf(rg->msg, sizeof rg->msg, "%.255s: %s (%.200s)", x->name,
                     !x->compared     ? "not compared"
                     : !x->m.shape_ok ? "shape differs from the eager output"
                                      : "dtype differs from the eager output",
                     fx);
        return;
    }
    if (co->envelope_max >= 0 && x->j.noise.src != ONP_NOISE_NONE)
        check_note(g, x->name, "noise", x->j.ratio, 1, 0, x->j.verdict == ONP_VERDICT_BEYOND_NOISE);
    if (co->envelope_max >= 0 && x->j.verdict == ONP_VERDICT_BEYOND_NOISE) {
        char a1[16], b1[16];
        if ((rg = reg_add(g, fx, x->name, "noise", x->j.gap_max, x->j.envelope_max)))
            snprintf(rg->msg, sizeof rg->msg,
                     "%.255s: beyond its float noise: max_abs %s > envelope %s (%.200s)", x->name,
                     onp_doc_short_num(x->j.gap_max, a1, sizeof a1),
                     onp_doc_short_num(x->j.envelope_max, b1, sizeof b1), fx);
    }
    /* elements outside the tolerance but inside the noise are not a
     * regression when the criteria carry an envelope */
    int in_noise = co->envelope_max >= 0 && x->j.verdict == ONP_VERDICT_WITHIN_NOISE;
    if (!in_noise)
        judge_limit(g, fx, x->name, "mismatch_frac", x->m.mismatch_frac, co->mismatch_frac_max,
                    "allowed");
    if (co->max_abs >= 0)
        judge_limit(g, fx, x->name, "max_abs", x->m.max_abs, co->max_abs, "recorded limit");
    if (co->needed_rtol >= 0)
        judge_limit(g, fx, x->name, "needed_rtol", x->m.needed_rtol, co->needed_rtol,
                    "recorded limit");
    if (co->needed_atol >= 0)
        judge_limit(g, fx, x->name, "needed_atol", x->m.needed_atol, co->needed_atol,
                    "recorded limit");
}

/* Every fixture: one that does not run, then each output the criteria cover. */
static void judge_fixtures(const onp_criteria *c, const onp_run_result *r, onp_gate_result *g)
{
    for (size_t i = 0; i < r->n_fix; i++) {
        const onp_fixture_verdict *f = &r->fix[i];
        const char *fx = onp_gate_fixture_name(f->dir);
        onp_gate_regression *x;
        if (f->status == ONP_FIXTURE_ERROR) {
            if ((x = reg_add(g, fx, NULL, "error", NAN, NAN)))
                snprintf(x->msg, sizeof x->msg, "%.200s: does not run: %.900s", fx, f->msg);
            continue;
        }
        for (size_t k = 0; k < f->n_out; k++) {
            const onp_crit_out *co = onp_criteria_find(c, f->outs[k].name);
            if (co) judge_value(co, fx, &f->outs[k], g); /* else: not covered */
        }
    }
}

/* quiet_change: the n fixtures on which output co is within its tolerance
 * but beyond its float64-measured noise (check's mark, noise.h).  More of
 * them than the criteria allow regress, each marked fixture named. */
static void judge_quiet(const onp_crit_out *co, const onp_run_result *r, long n, onp_gate_result *g)
{
    int beyond = n > co->quiet_change_max;
    check_note(g, co->name, "quiet_change", (double)n, (double)co->quiet_change_max, 0, beyond);
    for (size_t i = 0; beyond && i < r->n_fix; i++)
        for (size_t k = 0; k < r->fix[i].n_out; k++) {
            const onp_output_verdict *x = &r->fix[i].outs[k];
            const char *fx = onp_gate_fixture_name(r->fix[i].dir);
            onp_gate_regression *rg;
            char a[16], b[16];
            if (strcmp(x->name, co->name) || !onp_judgment_within_tol_beyond_noise(&x->j) ||
                !(rg = reg_add(g, fx, co->name, "quiet_change", (double)n,
                               (double)co->quiet_change_max)))
                continue;
            /* as check words its mark: the float64 reference's errors, or the
             * gap against the scaled envelope */
            int ref = x->j.has_ref;
            snprintf(rg->msg, sizeof rg->msg,
                     "%.255s: within tolerance but beyond its float noise: %s %s, %s %s (%.200s; "
                     "%ld fixture(s), the criteria allow %ld)",
                     co->name, ref ? "ORT vs float64" : "gap",
                     onp_doc_short_num(ref ? x->j.ort_err_max : x->j.gap_max, a, sizeof a),
                     ref ? "eager vs float64" : "envelope",
                     onp_doc_short_num(ref ? x->j.eager_err_max : x->j.envelope_max, b, sizeof b),
                     fx, n, co->quiet_change_max);
        }
}

/* Each recorded shape of co present (have[s] set by the caller). */
static void judge_shapes(const onp_crit_out *co, const int *have, onp_gate_result *g)
{
    size_t present = 0;
    for (size_t s = 0; s < co->n_shapes; s++) present += (size_t)have[s];
    if (co->n_shapes)
        check_note(g, co->name, "shapes", (double)present, (double)co->n_shapes, 1,
                   present < co->n_shapes);
    for (size_t s = 0; s < co->n_shapes; s++) {
        onp_gate_regression *x;
        if (have[s] || !(x = reg_add(g, NULL, co->name, "shapes", NAN, NAN))) continue;
        char sh[256];
        onp_shape_str(co->rank[s], co->dims[s], sh, sizeof sh);
        snprintf(x->item, sizeof x->item, "%.63s", sh);
        snprintf(x->msg, sizeof x->msg, "%s: no fixture with shape %s (criteria require it)",
                 co->name, sh);
    }
}

/* The labels of co over `rows` top-K rows, `agree` of them agreeing: the
 * flip rate's bound, then the top-1 floor. */
static void judge_labels(const onp_crit_out *co, int64_t rows, int64_t agree, onp_gate_result *g)
{
    onp_gate_regression *x;
    char a[16], b[16];
    if (co->max_flip_rate >= 0) { /* issue 19: the flip rate at a confidence */
        onp_agreement ag;
        onp_agreement_of(rows, agree, co->flip_confidence, &ag);
        int beyond = !onp_agreement_meets(&ag, co->max_flip_rate);
        check_note(g, co->name, "flip_rate", ag.flip_upper, co->max_flip_rate, 0, beyond);
        if (beyond &&
            (x = reg_add(g, NULL, co->name, "flip_rate", ag.flip_upper, co->max_flip_rate)))
            snprintf(x->msg, sizeof x->msg,
                     "%s: flip rate at most %s at %g%% confidence (%lld flipped of %lld "
                     "samples, Clopper-Pearson) > max_flip_rate %s",
                     co->name, onp_doc_short_num(ag.flip_upper, a, sizeof a), 100 * ag.confidence,
                     (long long)ag.flipped, (long long)ag.rows,
                     onp_doc_short_num(co->max_flip_rate, b, sizeof b));
    }
    if (co->top1_min >= 0) {
        double frac = rows ? (double)agree / (double)rows : 0;
        check_note(g, co->name, "top1", frac, co->top1_min, 1, frac < co->top1_min);
        if (frac < co->top1_min && (x = reg_add(g, NULL, co->name, "top1", frac, co->top1_min)))
            snprintf(x->msg, sizeof x->msg,
                     "%s: top-1 agreement %s (%lld/%lld rows) < recorded floor %s", co->name,
                     onp_doc_short_num(frac, a, sizeof a), (long long)agree, (long long)rows,
                     onp_doc_short_num(co->top1_min, b, sizeof b));
    }
}

/* Every output of the criteria over the whole run: present, quiet changes,
 * shapes, labels. */
static void judge_outputs(const onp_criteria *c, const onp_run_result *r, onp_gate_result *g)
{
    for (size_t o = 0; o < c->n_out; o++) {
        const onp_crit_out *co = &c->outs[o];
        int64_t rows = 0, agree = 0;
        size_t seen = 0;
        long quiet = 0;
        int have[ONP_CRITERIA_MAX_SHAPES] = {0};
        for (size_t i = 0; i < r->n_fix; i++)
            for (size_t k = 0; k < r->fix[i].n_out; k++) {
                const onp_output_verdict *x = &r->fix[i].outs[k];
                if (strcmp(x->name, co->name)) continue;
                seen++;
                quiet += onp_judgment_within_tol_beyond_noise(&x->j);
                if (x->has_topk) rows += x->tk.rows, agree += x->tk.top1_agree;
                for (size_t s = 0; x->compared && s < co->n_shapes; s++)
                    if (co->rank[s] == x->rank &&
                        !memcmp(co->dims[s], x->dims, (size_t)x->rank * sizeof x->dims[0]))
                        have[s] = 1;
            }
        onp_gate_regression *x;
        if (!seen) {
            if ((x = reg_add(g, NULL, co->name, "missing", NAN, NAN)))
                snprintf(x->msg, sizeof x->msg, "%s: no such output in the bundle", co->name);
            continue;
        }
        if (co->quiet_change_max >= 0) judge_quiet(co, r, quiet, g);
        judge_shapes(co, have, g);
        judge_labels(co, rows, agree, g);
    }
}

/* The rules recorded clean: one check (limit 0 findings), one regression
 * per rule with findings. */
static void judge_lint(const onp_criteria *c, const onp_lint_result *lint, onp_gate_result *g)
{
    size_t lint_hits = 0;
    for (size_t k = 0; k < c->n_lint; k++)
        for (size_t i = 0; i < lint->n; i++)
            lint_hits += !strcmp(lint->findings[i].rule->id, c->lint[k]);
    if (c->n_lint) check_note(g, NULL, "lint", (double)lint_hits, 0, 0, lint_hits > 0);
    for (size_t k = 0; k < c->n_lint; k++) {
        size_t hits = 0;
        const onp_lint_finding *first = NULL;
        for (size_t i = 0; i < lint->n; i++)
            if (!strcmp(lint->findings[i].rule->id, c->lint[k]) && !hits++)
                first = &lint->findings[i];
        onp_gate_regression *x;
        if (!hits || !(x = reg_add(g, NULL, NULL, "lint", (double)hits, 0))) continue;
        snprintf(x->item, sizeof x->item, "%s", c->lint[k]);
        snprintf(x->msg, sizeof x->msg, "lint %s %s: %zu finding(s), first at %s: %s",
                 first->rule->id, first->rule->name, hits,
                 first->loc.name[0] ? first->loc.name : "(model)", first->message);
    }
}

/* The recorded environment against this run's (env.h decides what a
 * difference is); under the fail policy each runtime or export drift is a
 * regression (check "environment"). */
static void judge_env(const onp_criteria *c, const onp_run_result *r, onp_gate_result *g)
{
    g->n_drift = c->has_env ? onp_env_compare(&c->env, &r->env, g->drift) : 0;
    for (size_t i = 0; i < g->n_drift; i++) {
        onp_gate_regression *x;
        if (onp_gate_drift_effect(&g->drift[i], g->policy) != ONP_DRIFT_EFFECT_FAILURE ||
            !(x = reg_add(g, NULL, NULL, "environment", NAN, NAN)))
            continue;
        char t[900];
        onp_gate_drift_text(&g->drift[i], t, sizeof t);
        snprintf(x->item, sizeof x->item, "%s", onp_env_field_name(g->drift[i].field));
        snprintf(x->msg, sizeof x->msg, "environment drift: %s (--env-drift fail)", t);
    }
}

/* The gate's verdict: ERROR when ONNX Runtime lost a fixture, else FAIL
 * when anything regressed, else PASS. */
static onp_run_verdict verdict_of(size_t lost, size_t n_reg)
{
    return lost ? ONP_RUN_ERROR : n_reg ? ONP_RUN_FAIL : ONP_RUN_PASS;
}

static int finish(onp_gate_result *g, size_t lost, onp_error *e)
{
    g->lost = lost;
    g->verdict = verdict_of(lost, g->n_reg);
    if (g->nomem) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    return 0;
}

int onp_gate_judge(const onp_criteria *c, const onp_run_result *r, const onp_lint_result *lint,
                   onp_gate_drift_policy policy, onp_gate_result *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    out->policy = policy;
    judge_count(c, r, out);
    judge_fixtures(c, r, out);
    judge_outputs(c, r, out);
    judge_lint(c, lint, out);
    judge_env(c, r, out);
    return finish(out, r->lost, e);
}

int onp_gate_record_failures(const onp_run_result *r, onp_gate_result *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < r->n_fix; i++)
        for (size_t k = 0; k < r->fix[i].n_out; k++) {
            const onp_output_verdict *x = &r->fix[i].outs[k];
            const char *fx = onp_gate_fixture_name(r->fix[i].dir);
            onp_gate_regression *g;
            if (x->pass || !(g = reg_add(out, fx, x->name, "parity", NAN, NAN))) continue;
            snprintf(g->msg, sizeof g->msg, "%.255s: %s%s%.600s (%.200s)", x->name,
                     onp_verdict_name(x->j.verdict), x->note[0] ? ": " : "", x->note, fx);
        }
    return finish(out, r->lost, e);
}

double onp_gate_margin(const onp_gate_check *k)
{
    double m = k->measured, l = k->limit;
    if (isnan(m) || isnan(l) || l < 0 || m < 0) return NAN;
    if (k->floor) return l > 0 ? m / l : INFINITY;
    return m > 0 ? l / m : INFINITY;
}
