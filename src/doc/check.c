/*
 * check.c — the check document (doc.h; docs/schemas/check-1.json) of one
 * run: the verdict, the environment, the judging options, every fixture x
 * output with its metrics and noise judgment, the summary, the causes, the
 * first divergent node, the lint, the adequacy, the shard.  The tool prints
 * it for `check --format json`, the Python API returns it: one writer.
 */
#include <cjson/cJSON.h>
#include <math.h>

#include "onnxparity/doc.h"

/* One output of one fixture. */
static cJSON *output_json(const onp_output_verdict *x)
{
    cJSON *oj = cJSON_CreateObject();
    cJSON_AddStringToObject(oj, "name", x->name);
    cJSON_AddBoolToObject(oj, "pass", x->pass);
    if (x->note[0]) cJSON_AddStringToObject(oj, "note", x->note);
    if (x->compared) {
        cJSON_AddStringToObject(oj, "dtype", onp_dtype_name(x->m.expected_dtype));
        cJSON *sh = cJSON_AddArrayToObject(oj, "shape");
        for (int j = 0; j < x->rank; j++)
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)x->dims[j]));
        onp_doc_metrics(oj, &x->m);
        onp_doc_judgment(oj, &x->j);
    }
    if (x->has_topk) {
        cJSON *t = cJSON_AddObjectToObject(oj, "topk");
        cJSON_AddNumberToObject(t, "k", x->tk.k);
        cJSON_AddNumberToObject(t, "rows", (double)x->tk.rows);
        cJSON_AddNumberToObject(t, "top1_agree", (double)x->tk.top1_agree);
        cJSON_AddNumberToObject(t, "flipped", (double)x->tk.flipped);
        cJSON_AddNumberToObject(t, "topk_agree", (double)x->tk.topk_agree);
        cJSON_AddNumberToObject(t, "noise_driven_flips", (double)x->noise_flips);
        if (isfinite(x->min_margin))
            onp_doc_num(t, "min_margin", x->min_margin);
        else
            cJSON_AddNullToObject(t, "min_margin");
    }
    return oj;
}

/* One fixture: index, folder, status, why, every output. */
static cJSON *fixture_json(const onp_fixture_verdict *r)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddNumberToObject(f, "index", r->index);
    cJSON_AddStringToObject(f, "dir", r->dir);
    cJSON_AddStringToObject(f, "status", onp_fixture_status_name(r->status));
    if (r->status == ONP_FIXTURE_ERROR) cJSON_AddStringToObject(f, "error", r->msg);
    if (r->runtime) cJSON_AddStringToObject(f, "runtime_failure", r->runtime);
    if (r->ort_runs) { /* a fixture judged by onp_judge_fixture: ORT ran it */
        cJSON_AddNumberToObject(f, "ort_runs", r->ort_runs);
        cJSON_AddStringToObject(f, "noise_rerun", onp_rerun_name(r->rerun));
    }
    if (r->tie_order != ONP_TIE_ORDER_NONE) /* judged against the tie-ordered reference too */
        cJSON_AddStringToObject(f, "tie_order", onp_tie_order_name(r->tie_order));
    cJSON *arr = cJSON_AddArrayToObject(f, "outputs");
    for (size_t k = 0; r->status != ONP_FIXTURE_ERROR && k < r->n_out; k++)
        cJSON_AddItemToArray(arr, output_json(&r->outs[k]));
    return f;
}

cJSON *onp_doc_fixtures(const onp_fixture_verdict *fix, size_t n)
{
    cJSON *fx = cJSON_CreateArray();
    for (size_t i = 0; fx && i < n; i++) cJSON_AddItemToArray(fx, fixture_json(&fix[i]));
    return fx;
}

/* The summary: the run's tally, and top-K agreement with its statistic. */
static void summary_json(cJSON *root, const onp_run_result *r)
{
    onp_run_tally t;
    onp_run_tally_of(r->fix, r->n_fix, &t);
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "fixtures", (double)r->n_fix);
    cJSON_AddNumberToObject(sum, "fixtures_failed", (double)r->failed);
    cJSON_AddNumberToObject(sum, "outputs_compared", (double)t.outputs);
    cJSON_AddNumberToObject(sum, "outputs_failed", (double)t.outputs_failed);
    cJSON_AddNumberToObject(sum, "outputs_within_noise", (double)t.within_noise);
    cJSON_AddNumberToObject(sum, "outputs_vacuous", (double)t.vacuous);
    cJSON_AddNumberToObject(sum, "outputs_within_tolerance_beyond_noise", (double)t.quiet);
    if (!t.topk_rows) return;
    cJSON *k = cJSON_AddObjectToObject(sum, "topk");
    cJSON_AddNumberToObject(k, "rows", (double)t.topk_rows);
    cJSON_AddNumberToObject(k, "top1_agree", (double)t.top1_agree);
    cJSON_AddNumberToObject(k, "flipped", (double)(t.topk_rows - t.top1_agree));
    cJSON_AddNumberToObject(k, "topk_agree", (double)t.topk_agree);
    onp_agreement ag; /* the flip rate as a statistic */
    onp_agreement_collect(r->fix, r->n_fix, NULL, ONP_AGREEMENT_CONFIDENCE, &ag);
    onp_doc_agreement(k, &ag);
}

/* The judging options (docs/cli.md): merge refuses shards judged otherwise. */
static void options_json(cJSON *root, const onp_run_opts *o)
{
    cJSON *optj = cJSON_AddObjectToObject(root, "options");
    if (o->topk > 0)
        cJSON_AddNumberToObject(optj, "top_k", o->topk);
    else
        cJSON_AddStringToObject(optj, "top_k", o->topk ? "auto" : "off");
    cJSON_AddBoolToObject(optj, "strict_tol", o->strict);
    cJSON_AddBoolToObject(optj, "noise_estimate", !o->no_estimate);
    cJSON_AddBoolToObject(optj, "lint", !o->no_lint);
}

cJSON *onp_doc_run_environment(cJSON *root, onp_bundle *b, onp_ort *ort, onp_session *s,
                               const onp_run_opts *o, const onp_run_result *r, int upgraded)
{
    const onp_session_desc *d = onp_session_describe(s);
    cJSON *envj = onp_doc_environment(root, ort, d->provider, d->opt_level, d->intra_threads,
                                      d->inter_threads, onp_bundle_sha256(b), o->session.config,
                                      o->session.n_config);
    onp_env_write_json(&r->env, envj);
    cJSON_AddBoolToObject(envj, "upgraded_to_opset7", upgraded);
    return envj;
}

/* One target's entry of "targets" (docs/cli.md, "Targets"). */
static cJSON *target_json(const char *role, const char *package, const char *version,
                          const char *library, const onp_run_result *r)
{
    cJSON *t = cJSON_CreateObject();
    if (!t) return NULL;
    cJSON_AddStringToObject(t, "role", role);
    if (package) cJSON_AddStringToObject(t, "package", package);
    cJSON_AddStringToObject(t, "ort_version", version);
    cJSON_AddStringToObject(t, "ort_library", library);
    cJSON_AddBoolToObject(t, "checked", r != NULL);
    if (!r) return t;
    cJSON_AddStringToObject(
        t, "verdict", onp_run_verdict_name(onp_run_verdict_of(r->fix, r->n_fix, r->lint_errors)));
    cJSON_AddNumberToObject(t, "fixtures", (double)r->n_fix);
    cJSON_AddNumberToObject(t, "fixtures_failed", (double)r->failed);
    if (onp_run_first_divergent(r))
        cJSON_AddItemToObject(t, "first_divergent", onp_doc_first_divergent(r->bisect));
    else
        cJSON_AddNullToObject(t, "first_divergent");
    return t;
}

/* "targets": the library under test, then the capturing environment's
 * onnxruntime (checked, or why not), when parity.json records one. */
static void targets_json(cJSON *root, onp_ort *ort, const onp_run_result *r)
{
    const onp_env_target *t = r->env_target;
    if (!t) return;
    cJSON *arr = cJSON_AddArrayToObject(root, "targets");
    cJSON_AddItemToArray(
        arr, target_json("under-test", NULL, onp_ort_version(ort), onp_ort_lib_path(ort), r));
    cJSON *e = target_json("capture-environment", t->package, t->version, t->library,
                           t->checked ? &t->run : NULL);
    if (e && !t->checked) cJSON_AddStringToObject(e, "not_checked", t->why_not);
    cJSON_AddItemToArray(arr, e);
}

/* "export": the exporter the capture used and any fallback between
 * exporters, from parity.json; null for a bundle without one. */
static void export_json(cJSON *root, const onp_bundle *b)
{
    const onp_manifest *mf = onp_bundle_manifest(b);
    const char *used = onp_manifest_exporter(mf);
    if (!used) {
        cJSON_AddNullToObject(root, "export");
        return;
    }
    cJSON *ex = cJSON_AddObjectToObject(root, "export");
    if (!ex) return;
    const char *asked = onp_manifest_exporter_requested(mf);
    const char *fallback = onp_manifest_exporter_fallback(mf);
    cJSON_AddStringToObject(ex, "exporter", used);
    if (asked)
        cJSON_AddStringToObject(ex, "exporter_requested", asked);
    else
        cJSON_AddNullToObject(ex, "exporter_requested");
    if (fallback)
        cJSON_AddStringToObject(ex, "fallback", fallback);
    else
        cJSON_AddNullToObject(ex, "fallback");
}

cJSON *onp_doc_check(onp_bundle *b, onp_ort *ort, onp_session *s, const onp_run_opts *o,
                     const onp_run_result *r, int upgraded)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "schema", "onnxparity.check/1");
    cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(r->verdict));
    cJSON_AddStringToObject(root, "model", onp_bundle_model_path(b));
    onp_doc_run_environment(root, b, ort, s, o, r, upgraded);
    export_json(root, b);
    options_json(root, o);
    cJSON_AddItemToObject(root, "fixtures", onp_doc_fixtures(r->fix, r->n_fix));
    summary_json(root, r);
    targets_json(root, ort, r);
    cJSON_AddItemToObject(root, "causes", onp_doc_causes(r->causes));
    const onp_bisect_point *p = onp_run_first_divergent(r);
    if (p)
        cJSON_AddItemToObject(root, "first_divergent", onp_doc_first_divergent(r->bisect));
    else
        cJSON_AddNullToObject(root, "first_divergent");
    /* issue 35: a divergence inside the graph that the outputs absorb
     * (--intermediates), in the words bisect uses */
    if (onp_run_absorbed(r))
        cJSON_AddStringToObject(root, "absorbed", ONP_BISECT_ABSORBED_WORDS);
    else
        cJSON_AddNullToObject(root, "absorbed");
    cJSON_AddItemToObject(root, "latent", onp_doc_latent(r->causes));
    cJSON_AddItemToObject(root, "lint", onp_doc_lint(onp_run_lint_of(o, r)));
    cJSON_AddItemToObject(root, "adequacy", onp_doc_adequacy(onp_bundle_adequacy(b)));
    if (o->shard_n) {
        cJSON *sh = cJSON_AddObjectToObject(root, "shard");
        cJSON_AddNumberToObject(sh, "index", (double)o->shard_i);
        cJSON_AddNumberToObject(sh, "count", (double)o->shard_n);
        cJSON_AddNumberToObject(sh, "fixtures_total", (double)r->n_total);
    }
    return root;
}
