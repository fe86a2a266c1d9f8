/*
 * check.c — onp_check_run (run.h): the check as one call, the tool's
 * `check` and the Python API's check() both.  Order matters to users: the
 * fixtures and the model first (bad input is exit 2/3 before ORT loads),
 * the lint before ORT (its findings stand whatever ORT does), then one
 * session and the run.
 */
#include <string.h>

#include "onnxparity/run.h"

int onp_check_run(onp_check *c, const onp_bundle_spec *where, onp_run_args *a, onp_error *e)
{
    memset(c, 0, sizeof *c);
    if (onp_bundle_open(where, &c->bundle, e) ||
        onp_run_args_check_outputs(a, onp_bundle_model(c->bundle), e))
        return -1;
    if (!a->run.no_lint) {
        if (onp_run_lint(c->bundle, &c->lint, e)) return -1;
        a->run.lint = &c->lint;
    }
    if (onp_run_session_open(c->bundle, &a->run, &c->ort, &c->session, &c->upgraded, e)) {
        c->load_failed = 1;
        return -1;
    }
    if (onp_run(c->bundle, c->ort, c->session, &a->run, &c->run, e)) return -1;
    c->ran = 1;
    return onp_check_env_target(c, a, e);
}

void onp_check_release(onp_check *c)
{
    if (!c) return;
    onp_run_result_release(&c->run);
    onp_run_result_release(&c->env.run);
    onp_session_close(c->env.session);
    onp_ort_close(c->env.ort);
    onp_lint_result_free(&c->lint);
    onp_session_close(c->session);
    onp_ort_close(c->ort);
    onp_bundle_close(c->bundle);
    memset(c, 0, sizeof *c);
}
