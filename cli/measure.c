/*
 * measure.c — gate's run of a bundle (measure.h) through the library's run
 * (run.h): open, lint, one session, onp_run_fixtures; the bisect and the
 * causes when gate asks.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "measure.h"
#include "onnxparity/doc.h"
#include "report.h"

/* Report e (printed, as cli_report does) and keep it as the run's reason. */
static int failed(meas_result *out, const onp_error *e)
{
    onp_error_format(e, out->why, sizeof out->why);
    return cli_report(e);
}

/* The fingerprint as JSON, from the session. */
static void environment_json(meas_result *out, const cli_ort *ort_opts, onp_session *s,
                             int upgraded)
{
    const onp_session_desc *d = onp_session_describe(s);
    cJSON *holder = cJSON_CreateObject();
    cJSON *env = onp_doc_environment(holder, out->ort, d->provider, d->opt_level, d->intra_threads,
                                     d->inter_threads, out->sha256, ort_opts->so.config,
                                     ort_opts->so.n_config);
    cJSON_AddBoolToObject(env, "upgraded_to_opset7", upgraded);
    onp_env_write_json(&out->env, env);
    out->environment = cJSON_DetachItemFromObject(holder, "environment");
    cJSON_Delete(holder);
}

int measure_run(const cli_ort *ort_opts, const cli_target *t, const onp_run_opts *ro,
                meas_result *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s", t->model);
    out->ro = *ro;
    onp_error e;
    onp_error_clear(&e);
    onp_bundle_spec sp = {t->bundle, t->model, t->data, t->n_data};
    if (onp_bundle_open(&sp, &out->bundle, &e) || onp_run_lint(out->bundle, &out->lint, &e))
        return failed(out, &e);
    out->ro.lint = &out->lint;
    onp_session *s;
    int upgraded, rc;
    if ((rc = cli_ort_session(ort_opts, out->model, onp_bundle_model(out->bundle), &out->ort, &s,
                              &upgraded))) {
        snprintf(out->why, sizeof out->why,
                 "ONNX Runtime could not open a session on %.900s (exit %d; the log says why)",
                 out->model, rc);
        return rc;
    }
    if (onp_run_fixtures(out->bundle, out->ort, s, &out->ro, &out->run, &e)) {
        rc = failed(out, &e);
    } else {
        snprintf(out->sha256, sizeof out->sha256, "%s", onp_bundle_sha256(out->bundle));
        out->env = out->run.env;
        out->fix = out->run.fix;
        out->n_fix = out->run.n_fix;
        out->secs = out->run.secs;
        environment_json(out, ort_opts, s, upgraded);
        if (onp_run_causes(&out->ro, &out->run, &e)) rc = failed(out, &e);
    }
    onp_session_close(s);
    return rc;
}

const onp_bisect_point *measure_bisect(meas_result *r)
{
    onp_error e;
    onp_error_clear(&e);
    onp_run_bisect(r->bundle, r->ort, &r->ro, &r->run);
    if (r->run.bisect && onp_run_causes(&r->ro, &r->run, &e)) cli_report(&e);
    return onp_run_first_divergent(&r->run);
}

void measure_free(meas_result *r)
{
    if (!r) return;
    onp_run_result_release(&r->run);
    onp_lint_result_free(&r->lint);
    cJSON_Delete(r->environment);
    onp_ort_close(r->ort);
    onp_bundle_close(r->bundle);
    memset(r, 0, sizeof *r);
}
