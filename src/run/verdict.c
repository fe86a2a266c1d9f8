/*
 * verdict.c — the run's verdict, its names and its exit codes (run.h): the
 * one table every command and every result document uses, the verdicts of
 * the other results (lint, baseline, compare, sweep, a document's name),
 * and the tally of judged outputs every report shows.  Reads result
 * structs and names only.
 */
#include <string.h>

#include "onnxparity/run.h"

/* How to add a verdict: one enum entry in run.h, one name here, one exit
 * code in exit_of; the asserts keep the tables as long as the enum. */
static const char *const names[] = {
    [ONP_RUN_PASS] = "pass",
    [ONP_RUN_FAIL] = "fail",
    [ONP_RUN_ERROR] = "error",
};
_Static_assert(sizeof names / sizeof names[0] == ONP_RUN_VERDICT_COUNT, "one name per verdict");

static const int exit_of[] = {
    [ONP_RUN_PASS] = ONP_EXIT_PASS,
    [ONP_RUN_FAIL] = ONP_EXIT_FAIL,
    [ONP_RUN_ERROR] = ONP_EXIT_RUNTIME,
};
_Static_assert(sizeof exit_of / sizeof exit_of[0] == ONP_RUN_VERDICT_COUNT, "one exit per verdict");

const char *onp_run_verdict_name(onp_run_verdict v)
{
    return (unsigned)v < ONP_RUN_VERDICT_COUNT ? names[v] : "?";
}

int onp_run_verdict_from_name(const char *name, onp_run_verdict *out)
{
    for (int v = 0; name && v < ONP_RUN_VERDICT_COUNT; v++)
        if (!strcmp(name, names[v])) {
            *out = (onp_run_verdict)v;
            return 0;
        }
    return -1;
}

int onp_run_exit_code(onp_run_verdict v)
{
    return (unsigned)v < ONP_RUN_VERDICT_COUNT ? exit_of[v] : ONP_EXIT_RUNTIME;
}

onp_run_verdict onp_run_verdict_of(const onp_fixture_verdict *fix, size_t n, size_t lint_errors)
{
    int failed = lint_errors > 0;
    for (size_t i = 0; i < n; i++) {
        if (fix[i].runtime) return ONP_RUN_ERROR;
        failed |= fix[i].status != ONP_FIXTURE_PASS;
    }
    return failed ? ONP_RUN_FAIL : ONP_RUN_PASS;
}

onp_run_verdict onp_run_verdict_of_lint(const onp_lint_result *r)
{
    return r->counts[ONP_LINT_ERROR] ? ONP_RUN_FAIL : ONP_RUN_PASS;
}

onp_run_verdict onp_run_verdict_of_baseline(onp_baseline_verdict v)
{
    return v == ONP_BASELINE_REGRESSED || v == ONP_BASELINE_MIXED ? ONP_RUN_FAIL : ONP_RUN_PASS;
}

onp_run_verdict onp_run_verdict_of_compare(size_t pairs_failed)
{
    return pairs_failed ? ONP_RUN_FAIL : ONP_RUN_PASS;
}

onp_run_verdict onp_run_verdict_of_sweep(const onp_sweep_result *r)
{
    int available = 0, pass = 1;
    for (size_t c = 0; c < r->n_configs; c++)
        if (r->configs[c].available) {
            available = 1;
            pass &= r->configs[c].pass != 0;
        }
    return !available ? ONP_RUN_ERROR : pass ? ONP_RUN_PASS : ONP_RUN_FAIL;
}

int onp_run_verdict_of_doc(const char *name, onp_run_verdict *out)
{
    if (!onp_run_verdict_from_name(name, out)) return 0;
    if (name && !strcmp(name, onp_bisect_status_name(ONP_BISECT_AGREES))) {
        *out = ONP_RUN_PASS;
        return 0;
    }
    if (name && !strcmp(name, onp_bisect_status_name(ONP_BISECT_DIVERGES))) {
        *out = ONP_RUN_FAIL;
        return 0;
    }
    return -1;
}

/* How bad a verdict is: the order onp_run_verdict_of_docs keeps. */
static int severity(onp_run_verdict v)
{
    return v == ONP_RUN_ERROR ? 2 : v == ONP_RUN_FAIL ? 1 : 0;
}

onp_run_verdict onp_run_verdict_of_docs(const char *const *verdicts, size_t n)
{
    onp_run_verdict worst = ONP_RUN_PASS, v;
    for (size_t i = 0; i < n; i++)
        if (!onp_run_verdict_of_doc(verdicts[i], &v) && severity(v) > severity(worst)) worst = v;
    return worst;
}

void onp_run_tally_of(const onp_fixture_verdict *fix, size_t n, onp_run_tally *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < fix[i].n_out; k++) {
            const onp_output_verdict *x = &fix[i].outs[k];
            if (x->compared) {
                t->within_noise += x->j.verdict == ONP_VERDICT_WITHIN_NOISE;
                t->vacuous += x->j.vacuous != ONP_VACUOUS_NO;
                t->quiet += onp_judgment_within_tol_beyond_noise(&x->j);
            }
            if (fix[i].status == ONP_FIXTURE_ERROR) continue;
            t->outputs++;
            t->outputs_failed += !x->pass;
            if (x->has_topk) {
                t->topk_rows += x->tk.rows;
                t->top1_agree += x->tk.top1_agree;
                t->topk_agree += x->tk.topk_agree;
            }
        }
}
