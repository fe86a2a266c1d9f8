/*
 * gate.c — onp_gate_run (gate.h): the gate as one call, the tool's `gate`
 * and the Python API's gate() both.  The order is the user's: a malformed
 * criteria file fails before anything runs; the bundle runs as check runs
 * it (run.h's onp_check_run) with the criteria's tolerances and without
 * its bisect; then the record or the judgment (gate.h's rules), and the
 * bisect only where a criterion regressed, with the run's one plan.
 */
#include <string.h>

#include "onnxparity/gate.h"

/* Gating's bisect: the first divergent node where a criterion regressed,
 * and the causes derived again with it.  Best effort, as check's. */
static int bisect_regressed(onp_gate *g, onp_run_args *a, onp_error *e)
{
    onp_run_result *r = &g->check.run;
    a->run.no_bisect = 0;
    onp_run_bisect(g->check.bundle, g->check.ort, &a->run, r);
    if (r->bisect && onp_run_causes(&a->run, r, e)) return -1;
    if (onp_run_first_divergent(r)) g->bisect = r->bisect;
    return 0;
}

int onp_gate_run(onp_gate *g, const onp_bundle_spec *where, onp_run_args *a,
                 const onp_gate_args *ga, onp_error *e)
{
    memset(g, 0, sizeof *g);
    if (!ga->record) {
        if (onp_criteria_read(ga->criteria, &g->criteria, e)) return -1;
        g->have_criteria = 1;
    }
    /* the tolerances: the criteria's when gating, --rtol/--atol recording */
    g->tol = (onp_gate_tol_ctx){ga->record ? NULL : &g->criteria, a->run.rtol, a->run.atol};
    a->run.tol = onp_gate_tol_fn;
    a->run.tol_ctx = &g->tol;
    a->run.no_bisect = 1;     /* below, and only where a criterion regressed */
    a->run.no_env_target = 1; /* gate judges the target its options describe (run.h) */
    if (onp_check_run(&g->check, where, a, e)) return -1;
    onp_run_result *r = &g->check.run;
    if (ga->record) {
        g->verdict = onp_gate_recordable(r, &g->check.lint, ga->allow_failing, &g->refusal);
        if (g->verdict != ONP_RUN_PASS) return 0;
        if (onp_gate_record(r, &g->check.lint, onp_bundle_sha256(g->check.bundle), ga->margin,
                            &g->criteria, e))
            return -1;
        g->have_criteria = 1;
        return 0;
    }
    if (onp_gate_judge(&g->criteria, r, &g->check.lint, ga->drift, &g->result, e)) return -1;
    g->verdict = g->result.verdict;
    return g->result.n_reg && !ga->no_bisect ? bisect_regressed(g, a, e) : 0;
}

void onp_gate_release(onp_gate *g)
{
    if (!g) return;
    onp_gate_result_release(&g->result);
    onp_criteria_free(&g->criteria);
    onp_check_release(&g->check);
    memset(g, 0, sizeof *g);
}
