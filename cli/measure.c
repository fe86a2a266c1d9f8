/*
 * measure.c — set up a bundle's run for `check` and `gate` (measure.h); the
 * fixture loop itself is the library's onp_judge_fixture.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "junit.h"
#include "measure.h"
#include "onnxparity/model.h"
#include "onnxparity/tfile.h"
#include "report.h"

int measure_noisebook(const char *target, onp_noisebook **out)
{
    char path[4200];
    struct stat st;
    onp_error e;
    onp_error_clear(&e);
    *out = NULL;
    if (!target) return 0; /* --model/--data: no bundle, no parity.json */
    snprintf(path, sizeof path, "%s/parity.json", target);
    if (stat(path, &st) != 0) return 0;
    return onp_noisebook_read(path, out, &e) ? cli_report(&e) : 0;
}

/* Report e (printed, as cli_report does) and keep it as the run's reason. */
static int failed(meas_result *out, const onp_error *e)
{
    onp_error_format(e, out->why, sizeof out->why);
    return cli_report(e);
}

int measure_run(const cli_ort *ort_opts, const cli_target *t, const onp_judge_fixture_opts *jo,
                meas_result *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s", t->model);
    onp_error e;
    onp_error_clear(&e);
    onp_testdata td;
    memset(&td, 0, sizeof td);
    if (onp_testdata_scan_dirs(t->data, t->n_data, &td, &e)) return failed(out, &e);
    int rc = 0;
    if (onp_testdata_require(&td, t->data[0], &e)) {
        rc = failed(out, &e);
        goto out_td;
    }
    onp_model *m;
    if (onp_model_open(out->model, &m, &e)) {
        rc = failed(out, &e);
        goto out_td;
    }
    onp_model_sha256(m, out->sha256);
    char manifest[4200];
    onp_lint_opts lo = {NULL};
    lo.manifest = cli_target_manifest(t, manifest, sizeof manifest);
    rc = onp_lint_run(m, &lo, &out->lint, &e) ? cli_report(&e) : 0;
    if (!rc && (rc = measure_noisebook(t->bundle, &out->noise)))
        snprintf(out->why, sizeof out->why, "%.900s/parity.json: unreadable noise book",
                 t->bundle ? t->bundle : t->model);
    onp_ort *ort;
    onp_session *s;
    int upgraded;
    if (!rc && (rc = cli_ort_session(ort_opts, out->model, m, &ort, &s, &upgraded)))
        snprintf(out->why, sizeof out->why,
                 "ONNX Runtime could not open a session on %.900s (exit %d; the log says why)",
                 out->model, rc);
    if (!rc) {
        onp_env_init(&out->env);
        onp_env_set(&out->env, ONP_ENV_MODEL_SHA256, out->sha256);
        onp_env_set_config(&out->env, ort_opts->so.config, ort_opts->so.n_config);
        if (onp_env_from_session(&out->env, ort, s, &e) ||
            onp_env_from_bundle(&out->env, m, lo.manifest, &e)) {
            rc = failed(out, &e);
            onp_session_close(s);
            onp_ort_close(ort);
        }
    }
    onp_model_close(m);
    if (rc) goto out_td;
    out->fix = calloc(td.n, sizeof *out->fix);
    out->secs = calloc(td.n, sizeof *out->secs);
    if (!out->fix || !out->secs) rc = cli_usage_error("gate", "out of memory");
    onp_judge_fixture_opts mo = *jo;
    mo.noise = out->noise;
    for (size_t i = 0; out->fix && out->secs && i < td.n && !rc; i++, out->n_fix++) {
        double t0 = junit_clock();
        if (onp_judge_fixture(s, &td.sets[i], &mo, &out->fix[i], &e)) rc = failed(out, &e);
        out->secs[i] = junit_clock() - t0;
    }
    const onp_session_desc *d = onp_session_describe(s);
    cJSON *holder = cJSON_CreateObject();
    cJSON *env = report_environment(holder, ort, d->provider, d->opt_level, d->intra_threads,
                                    d->inter_threads, out->sha256, ort_opts->so.config,
                                    ort_opts->so.n_config);
    cJSON_AddBoolToObject(env, "upgraded_to_opset7", upgraded);
    onp_env_write_json(&out->env, env);
    out->environment = cJSON_DetachItemFromObject(holder, "environment");
    cJSON_Delete(holder);
    onp_session_close(s);
    onp_ort_close(ort);
out_td:
    onp_testdata_free(&td);
    return rc;
}

void measure_free(meas_result *r)
{
    if (!r) return;
    for (size_t i = 0; r->fix && i < r->n_fix; i++) onp_fixture_verdict_release(&r->fix[i]);
    onp_noisebook_free(r->noise);
    free(r->fix);
    free(r->secs);
    onp_lint_result_free(&r->lint);
    cJSON_Delete(r->environment);
    memset(r, 0, sizeof *r);
}
