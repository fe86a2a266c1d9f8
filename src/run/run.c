/*
 * run.c — onp_run (run.h): the one fixture loop every command shares, the
 * one bisect plan, the evidence handed to the causes.  Decides what the
 * run concludes; prints nothing (the tool formats onp_run_result).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxparity/outpath.h"
#include "onnxparity/run.h"

void onp_run_opts_init(onp_run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->rtol = o->atol = -1;
    o->topk = -1;
    o->reference = ONP_BISECT_REF_AUTO;
}

void onp_run_bisect_plan(const onp_bundle_spec *where, const onp_run_opts *o, onp_bisect_opts *bo)
{
    onp_bisect_opts_init(bo);
    bo->session = o->session;
    bo->rtol = o->rtol;
    bo->atol = o->atol;
    bo->strict = o->strict;
    bo->no_noise = o->no_estimate;
    bo->fixture = -1;
    bo->save_repro = o->save_repro;
    bo->reference = o->reference;
    if (o->reference == ONP_BISECT_REF_AUTO && o->session.opt_level == ONP_ORT_OPT_DISABLE)
        bo->reference = ONP_BISECT_REF_EAGER;
    if (!where->bundle) {
        bo->model = where->model;
        bo->data = where->data;
        bo->n_data = where->n_data;
    }
}

int onp_run_check_outputs(const onp_bundle *b, const onp_run_opts *o, onp_error *e)
{
    if (!o->save_repro) return 0;
    size_t n;
    const char *const *reads = onp_bundle_data(b, &n);
    return onp_out_check_new_dir(o->save_repro, reads, n, e);
}

int onp_run_lint(const onp_bundle *b, onp_lint_result *out, onp_error *e)
{
    onp_lint_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.manifest_doc = onp_bundle_manifest(b);
    return onp_lint_run(onp_bundle_model(b), &lo, out, e);
}

const onp_lint_result *onp_run_lint_of(const onp_run_opts *o, const onp_run_result *r)
{
    return o->lint ? o->lint : &r->lint;
}

/* The tolerance without a per-output rule: the options' rtol/atol over the
 * dtype's default. */
static onp_tol default_tol(void *ctx, const char *name, int32_t dtype)
{
    const onp_run_opts *o = ctx;
    (void)name;
    return onp_tol_with(dtype, o->rtol, o->atol);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --shard I/N: the fixture at position k belongs to shard k mod N. */
static int in_shard(const onp_run_opts *o, size_t k)
{
    return !o->shard_n || (long)(k % (size_t)o->shard_n) == o->shard_i;
}

/* The export environment and the runtime's, for the fingerprint. */
static int fill_env(onp_bundle *b, onp_ort *ort, onp_session *s, const onp_run_opts *o,
                    onp_run_result *r, onp_error *e)
{
    onp_env_init(&r->env);
    if (onp_env_from_session(&r->env, ort, s, e) ||
        onp_env_from_manifest(&r->env, onp_bundle_model(b), onp_bundle_manifest(b), e))
        return -1;
    onp_env_set_config(&r->env, o->session.config, o->session.n_config);
    onp_env_set(&r->env, ONP_ENV_MODEL_SHA256, onp_bundle_sha256(b));
    return 0;
}

int onp_run_fixtures(onp_bundle *b, onp_ort *ort, onp_session *s, const onp_run_opts *o,
                     onp_run_result *r, onp_error *e)
{
    memset(r, 0, sizeof *r);
    if (onp_run_check_outputs(b, o, e)) return -1;
    const onp_testdata *td = onp_bundle_fixtures(b);
    r->n_total = td->n;
    r->traced = onp_bundle_traced_fixture(b);
    r->graph = onp_model_graph(onp_bundle_model(b));
    if (!o->lint && !o->no_lint && onp_run_lint(b, &r->lint, e)) return -1;
    const onp_lint_result *lint = onp_run_lint_of(o, r);
    r->lint_errors = lint->counts[ONP_LINT_ERROR];
    if (fill_env(b, ort, s, o, r, e)) return -1;
    size_t n = 0;
    for (size_t k = 0; k < td->n; k++) n += in_shard(o, k);
    r->fix = calloc(n ? n : 1, sizeof *r->fix);
    r->secs = calloc(n ? n : 1, sizeof *r->secs);
    if (!r->fix || !r->secs)
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    onp_judge_fixture_opts jo;
    onp_judge_fixture_opts_init(&jo);
    jo.tol = o->tol ? o->tol : default_tol;
    jo.tol_ctx = o->tol ? o->tol_ctx : (void *)o;
    jo.topk = o->topk;
    jo.strict = o->strict;
    jo.atol_given = o->atol_given;
    jo.no_estimate = o->no_estimate;
    jo.noise = onp_bundle_noise(b);
    int traced_in = 0;
    for (size_t k = 0; k < td->n; k++) {
        if (!in_shard(o, k)) continue;
        if (o->progress) o->progress(o->progress_ctx, r->n_fix + 1, n, td->sets[k].dir);
        double t0 = now_s();
        onp_fixture_verdict *f = &r->fix[r->n_fix++];
        if (onp_judge_fixture(s, &td->sets[k], &jo, f, e)) return -1;
        r->secs[r->n_fix - 1] = now_s() - t0;
        r->failed += f->status != ONP_FIXTURE_PASS;
        r->lost += f->runtime != NULL;
        traced_in |= f->index == r->traced;
    }
    /* the fixture the export was traced on is evidence for the causes
     * (causes.h): a shard without it judges it too, reported nowhere else */
    for (size_t k = 0; r->traced >= 0 && !traced_in && k < td->n; k++)
        if (td->sets[k].index == r->traced) {
            traced_in = r->traced_judged = 1;
            if (onp_judge_fixture(s, &td->sets[k], &jo, &r->traced_extra, e)) return -1;
        }
    r->verdict = onp_run_verdict_of(r->fix, r->n_fix, r->lint_errors);
    return 0;
}

void onp_run_bisect(const onp_bundle *b, onp_ort *ort, const onp_run_opts *o, onp_run_result *r)
{
    int numbers_fail = 0;
    for (size_t i = 0; i < r->n_fix; i++) numbers_fail |= r->fix[i].status == ONP_FIXTURE_FAIL;
    /* only crashes and timeouts: nothing to bisect; a pass only when asked
     * (--intermediates), and kept only when its divergence is absorbed */
    if ((!numbers_fail && !o->intermediates) || r->bisect) return;
    onp_bisect_opts bo;
    onp_bundle_spec where = onp_bundle_where(b);
    onp_run_bisect_plan(&where, o, &bo);
    bo.eager_random = onp_noisebook_eager_random(onp_bundle_noise(b)); /* read once, by the bundle */
    bo.manifest = onp_bundle_manifest(b);
    bo.judged = r->fix; /* a bounded bundle's fixtures without intermediates: judged once */
    bo.n_judged = r->n_fix;
    onp_error e;
    onp_error_clear(&e);
    const char *target = onp_bundle_dir(b) ? onp_bundle_dir(b) : onp_bundle_model_path(b);
    if (onp_bisect_run(ort, target, &bo, &r->bisect, &e) ||
        r->bisect->status == ONP_BISECT_NO_REFERENCE ||
        (!numbers_fail && !onp_bisect_absorbed(r->bisect))) {
        onp_bisect_free(r->bisect);
        r->bisect = NULL;
    }
}

int onp_run_causes(const onp_run_opts *o, onp_run_result *r, onp_error *e)
{
    onp_causes_free(r->causes);
    r->causes = NULL;
    onp_evidence ev = {.lint = onp_run_lint_of(o, r),
                       .fixtures = r->fix,
                       .n_fixtures = r->n_fix,
                       .probe = o->probe,
                       .sweep = o->sweep,
                       /* an absorbed divergence explains no failure */
                       .bisect = r->bisect && !onp_run_absorbed(r) ? r->bisect : NULL,
                       .traced_fixture = r->traced >= 0 ? &r->traced : NULL,
                       .traced_verdict = r->traced_judged ? &r->traced_extra : NULL,
                       .other = r->other,
                       .graph = r->graph};
    return onp_causes_derive(&ev, &r->causes, e);
}

int onp_run(onp_bundle *b, onp_ort *ort, onp_session *s, const onp_run_opts *o, onp_run_result *r,
            onp_error *e)
{
    if (onp_run_fixtures(b, ort, s, o, r, e)) return -1;
    if (!o->no_bisect) onp_run_bisect(b, ort, o, r);
    return onp_run_causes(o, r, e);
}

int onp_run_absorbed(const onp_run_result *r)
{
    for (size_t i = 0; i < r->n_fix; i++)
        if (r->fix[i].status != ONP_FIXTURE_PASS) return 0;
    return r->bisect && onp_bisect_absorbed(r->bisect);
}

onp_run_verdict onp_run_diagnosis_verdict(const onp_run_result *r)
{
    const onp_causes *cs = r->causes;
    return (cs && (cs->any_fail || cs->strong)) || r->lint_errors ? ONP_RUN_FAIL : ONP_RUN_PASS;
}

onp_run_verdict onp_run_bisect_verdict(const onp_bisect_result *r)
{
    return r->status == ONP_BISECT_DIVERGES || onp_bisect_inconclusive(r) ? ONP_RUN_FAIL
                                                                          : ONP_RUN_PASS;
}

const onp_bisect_point *onp_run_first_divergent(const onp_run_result *r)
{
    const onp_bisect_result *bis = r->bisect;
    return bis && bis->status == ONP_BISECT_DIVERGES && bis->first >= 0 ? &bis->points[bis->first]
                                                                        : NULL;
}

void onp_run_result_release(onp_run_result *r)
{
    if (!r) return;
    for (size_t i = 0; r->fix && i < r->n_fix; i++) onp_fixture_verdict_release(&r->fix[i]);
    free(r->fix);
    free(r->secs);
    onp_fixture_verdict_release(&r->traced_extra);
    onp_lint_result_free(&r->lint);
    onp_bisect_free(r->bisect);
    onp_causes_free(r->causes);
    memset(r, 0, sizeof *r);
}
