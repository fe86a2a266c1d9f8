/*
 * gate.c — onp_gate_run (gate.h): the gate as one call, the tool's `gate`
 * and the Python API's gate() both.  The order is the user's: a malformed
 * criteria file fails before anything runs; the bundle runs as check runs
 * it (run.h's onp_check_run) with the criteria's tolerances and without
 * its bisect; then the record or the judgment (gate.h's rules), and the
 * bisect only where a criterion regressed, with the run's one plan.
 *
 * Several deployment targets (--target when recording, the criteria's
 * "targets" when gating) are that same gate once per target, in its own
 * onp_gate, with the target's library and opt-level in place of the
 * command line's; the gate of them all carries the worst verdict and every
 * regression and check, each naming its target.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* One gate over one target: g->criteria already holds what it is judged
 * against when gating. */
static int gate_one(onp_gate *g, const onp_bundle_spec *where, onp_run_args *a,
                    const onp_gate_args *ga, onp_error *e)
{
    /* the tolerances: the criteria's when gating, --rtol/--atol recording */
    g->tol = (onp_gate_tol_ctx){ga->record ? NULL : &g->criteria, a->run.rtol, a->run.atol};
    a->run.tol = onp_gate_tol_fn;
    a->run.tol_ctx = &g->tol;
    a->run.no_bisect = 1;     /* below, and only where a criterion regressed */
    a->run.no_env_target = 1; /* gate judges the targets its options describe (run.h) */
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

/* The library target `spec` runs: "env" followed from the bundle's
 * parity.json, a path as given, "" the command line's (`given`, or ""
 * for the usual search).  0, or -1 with e. */
static int target_library(const onp_crit_target *spec, const onp_bundle_spec *where,
                          const char *given, char *lib, size_t n, onp_error *e)
{
    if (strcmp(spec->ort_library, "env")) {
        snprintf(lib, n, "%s", spec->ort_library[0] ? spec->ort_library : given ? given : "");
        return 0;
    }
    onp_bundle *b = NULL;
    char why[700];
    if (onp_bundle_open(where, &b, e)) return -1;
    int rc = onp_gate_env_library(b, lib, n, why, sizeof why);
    onp_bundle_close(b);
    if (rc)
        return onp_error_set(e, ONP_ERR_RUNTIME, NULL, NULL, -1,
                             "ort_library env: the capturing environment's onnxruntime is not "
                             "loaded: %s",
                             why);
    return 0;
}

/* Prefix e's message with "target NAME: " (its file and field stay). */
static int name_target(onp_error *e, const char *name)
{
    char msg[sizeof e->msg];
    memcpy(msg, e->msg, sizeof msg);
    snprintf(e->msg, sizeof e->msg, "target %.60s: %.690s", name, msg);
    return -1;
}

/* base[0..n) then add[0..k), each of size bytes, in one realloc; NULL
 * (base untouched) when out of memory. */
static void *append(void *base, size_t n, const void *add, size_t k, size_t size)
{
    if (n + k < n || n + k > SIZE_MAX / size) return NULL;
    char *p = realloc(base, (n + k) * size);
    if (p) memcpy(p + n * size, add, k * size);
    return p;
}

/* Append t's regressions and checks to the gate of all targets, each
 * naming t. */
static int merge(onp_gate_result *all, const onp_gate *t, onp_error *e)
{
    const onp_gate_result *r = &t->result;
    if (r->n_reg) {
        onp_gate_regression *g = append(all->reg, all->n_reg, r->reg, r->n_reg, sizeof *g);
        if (!g) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        for (size_t q = all->n_reg; q < all->n_reg + r->n_reg; q++) g[q].target = t->target;
        all->reg = g;
        all->n_reg += r->n_reg;
    }
    if (r->n_checks) {
        onp_gate_check *g = append(all->checks, all->n_checks, r->checks, r->n_checks, sizeof *g);
        if (!g) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        for (size_t q = all->n_checks; q < all->n_checks + r->n_checks; q++)
            g[q].target = t->target;
        all->checks = g;
        all->n_checks += r->n_checks;
    }
    all->lost += r->lost;
    if (r->verdict > all->verdict) all->verdict = r->verdict;
    return 0;
}

/* The gate once per target of `specs` (n of them), in order. */
static int gate_targets(onp_gate *g, const onp_crit_target *specs, size_t n,
                        const onp_bundle_spec *where, onp_run_args *a, const onp_gate_args *ga,
                        onp_error *e)
{
    const char *lib0 = a->run.ort_lib;
    onp_ort_opt_level lvl0 = a->run.session.opt_level;
    const char *prov0 = a->run.session.provider;
    const char *const *popts0 = a->run.session.provider_opts;
    size_t n_popts0 = a->run.session.n_provider_opts;
    const char *popts[ONP_CRIT_TARGET_MAX_OPTS];
    if (!(g->targets = calloc(n, sizeof *g->targets)))
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    g->n_targets = n;
    g->result.policy = ga->drift;
    int rc = 0;
    for (size_t k = 0; !rc && k < n; k++) {
        onp_gate *t = &g->targets[k];
        snprintf(t->target, sizeof t->target, "%s", specs[k].name);
        if (!ga->record) { /* the target's criteria move into its gate */
            t->criteria = g->criteria.targets[k].crit;
            memset(&g->criteria.targets[k].crit, 0, sizeof g->criteria.targets[k].crit);
            t->have_criteria = 1;
        }
        if (target_library(&specs[k], where, lib0, t->library, sizeof t->library, e))
            rc = -1;
        else if (specs[k].opt_level[0] &&
                 onp_ort_opt_level_parse(specs[k].opt_level, &a->run.session.opt_level, e))
            rc = -1;
        if (!rc && specs[k].provider[0]) { /* its provider, with its options only */
            for (size_t q = 0; q < specs[k].n_provider_opts; q++)
                popts[q] = specs[k].provider_opts[q];
            a->run.session.provider = specs[k].provider;
            a->run.session.provider_opts = popts;
            a->run.session.n_provider_opts = specs[k].n_provider_opts;
        }
        if (!rc) {
            a->run.ort_lib = t->library[0] ? t->library : NULL;
            rc = gate_one(t, where, a, ga, e);
        }
        a->run.ort_lib = lib0;
        a->run.session.opt_level = lvl0;
        a->run.session.provider = prov0;
        a->run.session.provider_opts = popts0;
        a->run.session.n_provider_opts = n_popts0;
        if (rc) return name_target(e, t->target);
        if (!ga->record && merge(&g->result, t, e)) return -1;
        if (t->verdict > g->verdict) g->verdict = t->verdict;
    }
    if (!ga->record || g->verdict != ONP_RUN_PASS) return 0;
    /* recorded: the file's targets, each with the criteria its gate measured */
    if (!(g->criteria.targets = calloc(n, sizeof *g->criteria.targets)))
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    g->criteria.n_targets = n;
    for (size_t k = 0; k < n; k++) {
        onp_crit_target *c = &g->criteria.targets[k];
        *c = specs[k];
        c->crit = g->targets[k].criteria;
        memset(&g->targets[k].criteria, 0, sizeof g->targets[k].criteria);
        g->targets[k].have_criteria = 0;
    }
    g->have_criteria = 1;
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
    if (ga->record && ga->n_targets)
        return gate_targets(g, ga->targets, ga->n_targets, where, a, ga, e);
    if (!ga->record && g->criteria.n_targets) {
        /* the specs are the file's: copied, since the targets' criteria move out */
        size_t n = g->criteria.n_targets;
        onp_crit_target *specs = malloc(n * sizeof *specs);
        if (!specs) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        for (size_t k = 0; k < n; k++) {
            specs[k] = g->criteria.targets[k];
            memset(&specs[k].crit, 0, sizeof specs[k].crit);
        }
        int rc = gate_targets(g, specs, n, where, a, ga, e);
        free(specs);
        return rc;
    }
    return gate_one(g, where, a, ga, e);
}

void onp_gate_release(onp_gate *g)
{
    if (!g) return;
    for (size_t k = 0; k < g->n_targets; k++) onp_gate_release(&g->targets[k]);
    free(g->targets);
    onp_gate_result_release(&g->result);
    onp_criteria_free(&g->criteria);
    onp_check_release(&g->check);
    memset(g, 0, sizeof *g);
}
