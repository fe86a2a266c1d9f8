/*
 * measure.c — run fixtures and keep their metrics (measure.h): the fixture
 * loop of `check` and `gate`.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "measure.h"
#include "onnxparity/model.h"
#include "onnxparity/tfile.h"
#include "report.h"

int measure_fixture(onp_session *s, const onp_fixture *f, const meas_opts *o, meas_fixture *r,
                    onp_error *e)
{
    size_t n_out = onp_session_output_count(s);
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s", f->dir);
    r->index = f->index;
    r->n_out = f->n_outputs;
    r->outs = calloc(f->n_outputs ? f->n_outputs : 1, sizeof *r->outs);
    onp_tensor *in = calloc(f->n_inputs ? f->n_inputs : 1, sizeof *in);
    onp_tensor *got = calloc(n_out ? n_out : 1, sizeof *got);
    int rc = 0;
    if (!r->outs || !in || !got) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, f->dir, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < f->n_outputs; k++)
        snprintf(r->outs[k].name, sizeof r->outs[k].name, "%s",
                 k < n_out ? onp_session_output(s, k)->name : "?");
    if (!f->n_outputs) {
        r->status = 2;
        snprintf(r->msg, sizeof r->msg, "no output_K.pb: nothing to compare");
        goto done;
    }
    for (size_t k = 0; k < f->n_inputs; k++) {
        if (onp_tfile_read(f->inputs[k], NULL, &in[k], e)) {
            rc = -1;
            goto done;
        }
        onp_tensor_set_name(&in[k], NULL, e); /* fed by position */
    }
    onp_error re;
    onp_error_clear(&re);
    if (onp_session_run(s, in, f->n_inputs, NULL, 0, got, &re)) {
        r->status = 2;
        onp_error_format(&re, r->msg, sizeof r->msg);
        r->runtime = onp_ort_lost_worker(&re);
        for (size_t k = 0; k < f->n_outputs; k++)
            snprintf(r->outs[k].note, sizeof r->outs[k].note, "not run");
        goto done;
    }
    for (size_t k = 0; k < f->n_outputs; k++) {
        meas_out *x = &r->outs[k];
        if (k >= n_out) {
            snprintf(x->note, sizeof x->note,
                     "output_%zu.pb has no graph output %zu (the graph has %zu)", k, k, n_out);
            r->status = 1;
            continue;
        }
        onp_tensor want;
        if (onp_tfile_read(f->outputs[k], NULL, &want, e)) {
            rc = -1;
            goto done;
        }
        x->rank = want.rank;
        memcpy(x->dims, want.dims, sizeof want.dims);
        onp_error ce;
        if (onp_compare(&want, &got[k], o->tol(o->ctx, x->name, want.dtype), &x->m, &ce)) {
            snprintf(x->note, sizeof x->note, "%s", ce.msg);
        } else {
            x->compared = 1;
            x->pass = x->m.pass;
            int is_cls = want.rank == 2 && want.dims[1] > 1 && x->m.shape_ok;
            int k_top = o->topk == -1 ? (is_cls ? 1 : 0) : o->topk;
            if (k_top > 0 && x->m.shape_ok && (want.rank == 1 || want.rank == 2) &&
                !onp_compare_topk(&want, &got[k], k_top, &x->tk, &ce)) {
                x->has_topk = 1;
                if (x->tk.flipped) x->pass = 0;
            }
            if (!x->m.shape_ok)
                snprintf(x->note, sizeof x->note, "shape differs");
            else if (!x->m.dtype_ok)
                snprintf(x->note, sizeof x->note, "dtype differs: %s vs %s",
                         onp_dtype_name(x->m.expected_dtype), onp_dtype_name(x->m.actual_dtype));
            else if (x->has_topk && x->tk.flipped)
                snprintf(x->note, sizeof x->note, "%lld of %lld top-1 labels flipped",
                         (long long)x->tk.flipped, (long long)x->tk.rows);
        }
        onp_tensor_release(&want);
        if (!x->pass) r->status = 1;
    }
done:
    r->error = r->status == 2;
    for (size_t k = 0; in && k < f->n_inputs; k++) onp_tensor_release(&in[k]);
    for (size_t k = 0; got && k < n_out; k++) onp_tensor_release(&got[k]);
    free(in);
    free(got);
    return rc;
}

int measure_run(const cli_ort *ort_opts, const char *target, meas_tol_fn tol, void *ctx,
                meas_result *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s/model.onnx", target);
    onp_error e;
    onp_error_clear(&e);
    onp_testdata td;
    memset(&td, 0, sizeof td);
    if (onp_testdata_scan(target, &td, &e)) return cli_report(&e);
    int rc = 0;
    if (!td.n) {
        rc = cli_usage_error("gate", "no test_data_set_N folders under %s: nothing to measure",
                             target);
        goto out_td;
    }
    onp_model *m;
    if (onp_model_open(out->model, &m, &e)) {
        rc = cli_report(&e);
        goto out_td;
    }
    onp_model_sha256(m, out->sha256);
    char manifest[4200];
    struct stat st;
    onp_lint_opts lo = {NULL};
    snprintf(manifest, sizeof manifest, "%s/parity.json", target);
    if (stat(manifest, &st) == 0) lo.manifest = manifest;
    rc = onp_lint_run(m, &lo, &out->lint, &e) ? cli_report(&e) : 0;
    onp_ort *ort;
    onp_session *s;
    int upgraded;
    if (!rc) rc = cli_ort_session(ort_opts, out->model, m, &ort, &s, &upgraded);
    onp_model_close(m);
    if (rc) goto out_td;
    out->fix = calloc(td.n, sizeof *out->fix);
    if (!out->fix) rc = cli_usage_error("gate", "out of memory");
    meas_opts mo = {tol, ctx, -1};
    for (size_t i = 0; out->fix && i < td.n && !rc; i++, out->n_fix++)
        if (measure_fixture(s, &td.sets[i], &mo, &out->fix[i], &e)) rc = cli_report(&e);
    const onp_session_desc *d = onp_session_describe(s);
    cJSON *holder = cJSON_CreateObject();
    cJSON *env = report_environment(holder, ort, d->provider, d->opt_level, d->intra_threads,
                                    d->inter_threads, out->sha256, ort_opts->so.config,
                                    ort_opts->so.n_config);
    cJSON_AddBoolToObject(env, "upgraded_to_opset7", upgraded);
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
    for (size_t i = 0; r->fix && i < r->n_fix; i++) free(r->fix[i].outs);
    free(r->fix);
    onp_lint_result_free(&r->lint);
    cJSON_Delete(r->environment);
    memset(r, 0, sizeof *r);
}
