/*
 * diagnose.c — the diagnosis (diagnose.h): the probes and the sweep, then
 * the run with them as evidence.  The order is the user's: bad input and
 * refused outputs before anything runs, the lint before ORT loads.
 */
#include <string.h>

#include "onnxparity/diagnose.h"

int onp_diagnosis_open(onp_diagnosis *d, const onp_bundle_spec *where, onp_run_args *a,
                       onp_error *e)
{
    memset(d, 0, sizeof *d);
    if (onp_fixset_load_dirs(where->bundle ? &where->bundle : where->data,
                             where->bundle ? 1 : where->n_data, &d->fixtures, e) ||
        onp_bundle_open(where, &d->bundle, e) || onp_run_check_outputs(d->bundle, &a->run, e) ||
        onp_model_check_external(onp_bundle_model(d->bundle), e) ||
        onp_run_lint(d->bundle, &d->lint, e))
        return -1;
    a->run.lint = &d->lint;
    return 0;
}

static void say(onp_stage_fn stage, void *ctx, const char *what)
{
    if (stage) stage(ctx, what);
}

/* The probes and the sweep over the same options as the run. */
static int probe(onp_diagnosis *d, const onp_run_args *a, int no_sweep, onp_stage_fn stage,
                 void *ctx, onp_error *e)
{
    const char *model = onp_bundle_model_path(d->bundle);
    onp_probe_opts po;
    onp_probe_opts_init(&po);
    po.session = a->run.session;
    po.rtol = a->run.rtol;
    po.atol = a->run.atol;
    po.export_fixture = onp_bundle_traced_fixture(d->bundle); /* -1 without a manifest */
    say(stage, ctx, "diagnose: probes (determinism, batch invariance, shapes, fixture dependence)");
    if (onp_probe_run(d->ort, model, d->fixtures, &po, &d->probe, e)) return -1;
    if (!d->probe.ran) { /* the session error's own code: a provider ORT lacks is bad input */
        d->load_failed = 1;
        return onp_error_set(
            e, d->probe.error_code == ONP_ERR_NONE ? ONP_ERR_RUNTIME : d->probe.error_code, NULL,
            NULL, -1, "ONNX Runtime could not load %s: %s", model, d->probe.error);
    }
    if (no_sweep) return 0;
    say(stage, ctx, "diagnose: sweep over the optimization levels");
    return onp_sweep_run(d->ort, model, d->fixtures, &po, &d->sweep, e);
}

int onp_diagnosis_run(onp_diagnosis *d, onp_run_args *a, int no_sweep, onp_stage_fn stage,
                      void *stage_ctx, onp_error *e)
{
    if (onp_ort_open(a->run.ort_lib, &d->ort, e) || probe(d, a, no_sweep, stage, stage_ctx, e))
        return -1;
    say(stage, stage_ctx,
        "diagnose: the fixtures, judged with the noise rule; bisect where they fail");
    a->run.probe = &d->probe;
    a->run.sweep = d->sweep;
    if (onp_run_session_open(d->bundle, &a->run, &d->ort, &d->session, &d->upgraded, e) ||
        onp_run(d->bundle, d->ort, d->session, &a->run, &d->run, e))
        return -1;
    d->run.verdict = onp_run_diagnosis_verdict(&d->run);
    d->ran = 1;
    return 0;
}

void onp_diagnosis_release(onp_diagnosis *d)
{
    if (!d) return;
    onp_run_result_release(&d->run);
    onp_session_close(d->session);
    onp_sweep_free(d->sweep);
    onp_ort_close(d->ort);
    onp_lint_result_free(&d->lint);
    onp_bundle_close(d->bundle);
    onp_fixset_free(d->fixtures);
    memset(d, 0, sizeof *d);
}
