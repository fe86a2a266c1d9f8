/*
 * chain.c — the deployment chain (chain.h): the bundle's export and each
 * stage after it run by the run layer's fixture loop (onp_run_fixtures on
 * a session opened on the stage's model), each output judged again at the
 * stage's precision, the first stage beyond its envelope named, and the
 * first divergent value of each such stage matched across the two graphs
 * (chainmatch.c).  No fixture loop and no comparison of its own: the
 * numbers are the judge's; this file scales the envelope and decides the
 * stage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "onnxparity/chain.h"
#include "onnxparity/dtype.h"
#include "onnxparity/manifest.h"
#include "onnxparity/noise.h"

// --- the precisions ------------------------------------------------------------

static const struct {
    const char *name;
    double eps;
} precs[] = {
    [ONP_CHAIN_FP32] = {"fp32", 0x1p-23},
    [ONP_CHAIN_FP16] = {"fp16", 0x1p-10},
    [ONP_CHAIN_BF16] = {"bf16", 0x1p-7},
    [ONP_CHAIN_INT8] = {"int8", 0x1p-7},
};
_Static_assert(sizeof precs / sizeof precs[0] == ONP_CHAIN_PREC_COUNT, "one row per precision");

const char *onp_chain_prec_name(onp_chain_prec p)
{
    return (unsigned)p < ONP_CHAIN_PREC_COUNT ? precs[p].name : "?";
}

int onp_chain_prec_from_name(const char *name, onp_chain_prec *out)
{
    for (int k = 0; name && k < ONP_CHAIN_PREC_COUNT; k++)
        if (!strcmp(name, precs[k].name)) {
            *out = (onp_chain_prec)k;
            return 0;
        }
    return -1;
}

double onp_chain_prec_eps(onp_chain_prec p)
{
    return (unsigned)p < ONP_CHAIN_PREC_COUNT ? precs[p].eps : 0;
}

static const char *const quant_ops[] = {"QuantizeLinear", "DynamicQuantizeLinear", "MatMulInteger",
                                        "ConvInteger",    "QLinearConv",           "QLinearMatMul"};

onp_chain_prec onp_chain_prec_of_model(const onp_model *m)
{
    const onp_graph *g = onp_model_graph(m);
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t q = 0; q < sizeof quant_ops / sizeof quant_ops[0]; q++)
            if (!strcmp(g->nodes[i].op_type, quant_ops[q])) return ONP_CHAIN_INT8;
    int bf16 = 0;
    for (size_t i = 0; i < g->n_initializers; i++) {
        if (g->initializers[i].data_type == ONP_FLOAT16) return ONP_CHAIN_FP16;
        bf16 |= g->initializers[i].data_type == ONP_BFLOAT16;
    }
    return bf16 ? ONP_CHAIN_BF16 : ONP_CHAIN_FP32;
}

static const char *const status_names[] = {"within", "beyond", "error"};
_Static_assert(sizeof status_names / sizeof status_names[0] == ONP_CHAIN_STATUS_COUNT,
               "one name per status");

const char *onp_chain_status_name(onp_chain_status s)
{
    return (unsigned)s < ONP_CHAIN_STATUS_COUNT ? status_names[s] : "?";
}

// --- one output judged at the stage's precision ---------------------------------------

/* What one fixture's output says at precision eps_p (docs/chain.md, "The
 * stage envelope"). */
typedef struct judged {
    int within;
    double envelope; /* 0: none (the tolerance decided) */
    const char *why; /* when not within */
} judged;

static judged judge_at(const onp_output_verdict *x, onp_chain_prec p)
{
    judged r = {0, 0, NULL};
    if (!x->compared) {
        r.why = "not compared";
        return r;
    }
    if (p == ONP_CHAIN_FP32) {
        r.within = x->pass;
        r.envelope = x->j.envelope_max;
        r.why = x->pass                        ? NULL
                : x->has_topk && x->tk.flipped ? "a top-1 label flipped"
                                               : "beyond its float32 noise";
        return r;
    }
    double eps32 = onp_dtype_eps(ONP_FLOAT), eps = onp_chain_prec_eps(p);
    onp_judgment j = x->j;
    if (j.verdict == ONP_VERDICT_NOT_NUMERIC) {
        r.why = "not numeric (NaN/Inf where eager has numbers, or shape/dtype)";
        return r;
    }
    if (j.noise.src == ONP_NOISE_NONE) {
        r.within = j.verdict == ONP_VERDICT_WITHIN_TOL;
        r.why = r.within ? NULL : "beyond the tolerance (no float64 noise to scale)";
    } else {
        double k = eps / eps32;
        onp_noise n = j.noise;
        n.max_abs *= k;
        n.rms *= k;
        n.q999 *= k;
        j.eager_err_max *= k;
        j.eager_err_rms *= k;
        onp_noise_rule(&x->m, &n, eps, 0, &j);
        r.envelope = j.envelope_max;
        r.within = j.verdict != ONP_VERDICT_NOT_NUMERIC && !j.beyond_envelope;
        r.within |= x->j.verdict == ONP_VERDICT_WITHIN_TOL;
        r.why = r.within ? NULL : "beyond the envelope of its precision";
    }
    /* a flipped label is the precision's doing only where some row's eager
     * margin is within twice that envelope; else it fails */
    if (r.within && x->has_topk && x->tk.flipped && !(x->min_margin <= 2 * r.envelope)) {
        r.within = 0;
        r.why = "a top-1 label flipped with a margin beyond its precision's envelope";
    }
    return r;
}

/* The stage's outputs over its fixtures (worst fixture's numbers). */
static int judge_stage(onp_chain_stage *st, onp_error *e)
{
    const onp_run_result *r = &st->run;
    size_t n = 0;
    for (size_t i = 0; i < r->n_fix; i++)
        if (r->fix[i].n_out > n) n = r->fix[i].n_out;
    st->outs = calloc(n ? n : 1, sizeof *st->outs);
    if (!st->outs) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    st->n_out = n;
    for (size_t k = 0; k < n; k++) {
        st->outs[k].worst_fixture = -1;
        st->outs[k].sqnr_db = INFINITY;
    }
    int lost = 0, beyond = 0;
    for (size_t i = 0; i < r->n_fix; i++) {
        const onp_fixture_verdict *f = &r->fix[i];
        if (f->status == ONP_FIXTURE_ERROR) {
            lost = 1;
            if (!st->msg[0])
                snprintf(st->msg, sizeof st->msg, "fixture %d: %.900s", f->index, f->msg);
            continue;
        }
        for (size_t k = 0; k < f->n_out; k++) {
            const onp_output_verdict *x = &f->outs[k];
            onp_chain_output *o = &st->outs[k];
            if (!o->name[0]) snprintf(o->name, sizeof o->name, "%s", x->name);
            judged jd = judge_at(x, st->prec);
            if (!jd.within) {
                o->beyond++;
                if (!o->why) o->why = jd.why;
            }
            if (!x->compared) continue;
            o->compared++;
            o->flips += x->has_topk ? x->tk.flipped : 0;
            double gap = x->m.max_abs, scale = x->j.noise.scale_max;
            if (!isfinite(gap) || x->m.nan_mismatch || x->m.inf_mismatch) gap = INFINITY;
            double ratio = jd.envelope > 0 ? gap / jd.envelope : 0;
            if (o->worst_fixture < 0 || ratio > o->ratio ||
                (ratio == o->ratio && gap > o->max_abs)) {
                o->worst_fixture = f->index;
                o->ratio = ratio;
                o->envelope_max = jd.envelope;
            }
            if (gap > o->max_abs) {
                o->max_abs = gap;
                o->max_rel = scale > 0 ? gap / scale : 0;
            }
            if (x->m.rms > o->rms) o->rms = x->m.rms;
            if (scale > o->scale_max) o->scale_max = scale;
            double srms = x->j.noise.scale_rms;
            if (srms > 0) {
                double db = gap == INFINITY ? -INFINITY
                            : x->m.rms > 0  ? 20 * log10(srms / x->m.rms)
                                            : INFINITY;
                if (db < o->sqnr_db) o->sqnr_db = db;
            }
        }
    }
    for (size_t k = 0; k < n; k++) {
        onp_chain_output *o = &st->outs[k];
        o->within = o->beyond == 0 && o->compared > 0;
        beyond |= !o->within;
    }
    st->status = lost ? ONP_CHAIN_ERROR : beyond ? ONP_CHAIN_BEYOND : ONP_CHAIN_WITHIN;
    return 0;
}

// --- the chain ----------------------------------------------------------------------

/* The relative error a value may have before the match calls it divergent:
 * the largest relative envelope of the stage's outputs beyond it (what the
 * stage was allowed where it failed), at least ONP_NOISE_ULPS * eps(p). */
static double match_limit(const onp_chain_stage *st)
{
    double lim = ONP_NOISE_ULPS * onp_chain_prec_eps(st->prec);
    for (size_t k = 0; k < st->n_out; k++) {
        const onp_chain_output *o = &st->outs[k];
        if (o->scale_max > 0 && o->envelope_max > 0 && o->envelope_max / o->scale_max > lim)
            lim = o->envelope_max / o->scale_max;
    }
    return lim;
}

/* The first fixture of stage st beyond its envelope (the worst fixture of
 * its first output beyond), or -1. */
static int failing_fixture(const onp_chain_stage *st)
{
    for (size_t k = 0; k < st->n_out; k++)
        if (!st->outs[k].within && st->outs[k].worst_fixture >= 0) return st->outs[k].worst_fixture;
    return -1;
}

static int run_stage(onp_chain *c, onp_run_args *a, onp_chain_stage *st, onp_error *e)
{
    onp_run_opts o = a->run;
    o.no_lint = 1;   /* the export's lint is check's; a stage's graph is the tool's output */
    o.no_bisect = 1; /* the divergence is matched across graphs below */
    o.lint = NULL;
    o.save_repro = NULL;
    /* a reduced-precision stage is judged on float64 noise scaled to its
     * precision: an ORT-side perturbation would measure the stage's own
     * rounding and scale it again */
    if (st->prec != ONP_CHAIN_FP32) o.no_estimate = 1;
    /* --save-optimized writes the export's optimized graph, once */
    if (st != &c->stages[0]) o.session.optimized_model_path = NULL;
    onp_model *m = NULL;
    if (onp_model_open(st->model, &m, e)) return -1;
    if (!st->prec_given) st->prec = onp_chain_prec_of_model(m);
    onp_session *s = NULL;
    int upgraded = 0;
    onp_error le;
    onp_error_clear(&le);
    if (onp_run_session_open_model(o.ort_lib, &o.session, st->model, m, &c->ort, &s, &upgraded,
                                   &le)) {
        onp_model_close(m);
        if (le.code != ONP_ERR_RUNTIME) {
            *e = le;
            return -1;
        }
        st->status = ONP_CHAIN_ERROR;
        onp_error_format(&le, st->msg, sizeof st->msg);
        return 0;
    }
    int rc = onp_run_fixtures(c->bundle, c->ort, s, &o, &st->run, e);
    onp_session_close(s);
    onp_model_close(m);
    if (rc) return -1;
    st->ran = 1;
    return judge_stage(st, e);
}

/* Stage names: non-empty, unique, not "export". */
static int check_specs(const onp_chain_stage_spec *st, size_t n, onp_error *e)
{
    for (size_t i = 0; i < n; i++) {
        if (!st[i].name || !st[i].name[0] || !strcmp(st[i].name, "export"))
            return onp_error_set(e, ONP_ERR_USAGE, NULL, "--stage", -1,
                                 "stage %zu: a name other than '' and 'export' is needed", i + 1);
        if (!st[i].model || !st[i].model[0])
            return onp_error_set(e, ONP_ERR_USAGE, NULL, "--stage", -1, "stage '%s' has no model",
                                 st[i].name);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(st[i].name, st[j].name))
                return onp_error_set(e, ONP_ERR_USAGE, NULL, "--stage", -1,
                                     "stage name '%s' given twice", st[i].name);
    }
    return 0;
}

/* Match stage s (i > 0) against the export on its failing fixture (the
 * first fixture for a stage within, with per_value). */
static void match_stage(onp_chain *c, const onp_run_args *a, onp_chain_stage *s, int per_value)
{
    const onp_testdata *td = onp_bundle_fixtures(c->bundle);
    int beyond = s->status == ONP_CHAIN_BEYOND;
    if (!(beyond || (per_value && s->status == ONP_CHAIN_WITHIN)) || !td->n) return;
    int fx = beyond ? failing_fixture(s) : td->sets[0].index;
    onp_session_opts so = a->run.session;
    so.optimized_model_path = NULL; /* the instrumented graphs are not what was asked for */
    for (size_t k = 0; fx >= 0 && k < td->n; k++)
        if (td->sets[k].index == fx) {
            onp_chain_match(c->ort, &so, c->stages[0].model, s->model, &td->sets[k], match_limit(s),
                            per_value, &s->div);
            break;
        }
    if (!beyond) { /* a stage within has no first divergent value */
        s->div.found = 0;
        memset(&s->div.first, 0, sizeof s->div.first);
        memset(&s->div.input, 0, sizeof s->div.input);
        free(s->div.group);
        s->div.group = NULL;
        s->div.n_group = 0;
        s->div.note[0] = 0;
    }
}

/* The torch modules of s's first divergent value (chain.h), through the
 * bundle's module_map {module path: value}: every module whose value is its
 * export value or the value of a node of its group (the modules a fused
 * node stands for), in the map's (call) order. */
static void stage_modules(const onp_chain *c, onp_chain_stage *s)
{
    onp_chain_divergence *d = &s->div;
    const onp_manifest *mf = onp_bundle_manifest(c->bundle);
    const cJSON *doc = mf ? onp_manifest_doc(mf) : NULL;
    const cJSON *map = doc ? cJSON_GetObjectItemCaseSensitive(doc, "module_map") : NULL;
    d->n_modules = 0;
    if (!d->found || !cJSON_IsObject(map)) return;
    const cJSON *it;
    cJSON_ArrayForEach(it, map)
    {
        if (d->n_modules == ONP_CHAIN_MAX_MODULES) break;
        if (!cJSON_IsString(it) || !it->string) continue;
        int in = !strcmp(it->valuestring, d->first.orig_value);
        for (size_t i = 0; !in && i < d->n_group; i++)
            in = !strcmp(it->valuestring, d->group[i].value);
        if (in) snprintf(d->modules[d->n_modules++], sizeof d->modules[0], "%s", it->string);
    }
}

/* s->cause and s->fix for a stage beyond its envelope (chain.h). */
static void stage_cause(onp_chain_stage *s)
{
    s->cause = ONP_CAUSE_COUNT;
    s->fix[0] = 0;
    if (s->status != ONP_CHAIN_BEYOND) return;
    const char *node = s->div.found ? s->div.first.orig_node : "";
    switch (s->prec) {
    case ONP_CHAIN_FP16:
    case ONP_CHAIN_BF16:
        s->cause = ONP_CAUSE_REDUCED_PRECISION;
        if (node[0])
            snprintf(
                s->fix, sizeof s->fix,
                "keep %.200s (%.60s) in float32: convert again with node_block_list=['%.200s'], "
                "then check the stage again",
                node, s->div.first.orig_op_type, node);
        else
            snprintf(s->fix, sizeof s->fix,
                     "no node named: compare with --per-value, or keep the converter's op types "
                     "that the output depends on in float32 (op_block_list)");
        break;
    case ONP_CHAIN_INT8:
        s->cause = ONP_CAUSE_REDUCED_PRECISION;
        if (node[0])
            snprintf(
                s->fix, sizeof s->fix,
                "leave %.200s (%.60s) in float: quantize again with nodes_to_exclude=['%.200s'], "
                "or check its scale and calibration",
                node, s->div.first.orig_op_type, node);
        else
            snprintf(s->fix, sizeof s->fix,
                     "no node named: look at the values where SQNR drops most (--per-value)");
        break;
    default:
        s->cause = ONP_CAUSE_GRAPH_OPTIMIZATION;
        if (node[0])
            snprintf(s->fix, sizeof s->fix,
                     "the transform changed what %.200s (%.60s) computes: compare the two graphs "
                     "there, or ship the export without this step",
                     node, s->div.first.orig_op_type);
        else
            snprintf(s->fix, sizeof s->fix,
                     "the transform changed values it renamed: ship the export without this step, "
                     "or bisect it at --opt-level disable");
        break;
    }
}

int onp_chain_run(onp_chain *c, const onp_bundle_spec *where, onp_run_args *a,
                  const onp_chain_stage_spec *st, size_t n, int per_value, onp_error *e)
{
    memset(c, 0, sizeof *c);
    c->first_beyond = -1;
    if (check_specs(st, n, e)) return -1;
    if (onp_bundle_open(where, &c->bundle, e)) return -1;
    c->stages = calloc(n + 1, sizeof *c->stages);
    if (!c->stages) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    c->n = n + 1;
    snprintf(c->stages[0].name, sizeof c->stages[0].name, "export");
    snprintf(c->stages[0].model, sizeof c->stages[0].model, "%s", onp_bundle_model_path(c->bundle));
    c->stages[0].prec = ONP_CHAIN_FP32;
    c->stages[0].prec_given = 1;
    for (size_t i = 0; i < n; i++) {
        onp_chain_stage *s = &c->stages[i + 1];
        snprintf(s->name, sizeof s->name, "%s", st[i].name);
        snprintf(s->model, sizeof s->model, "%s", st[i].model);
        s->prec = st[i].prec;
        s->prec_given = st[i].prec_given;
    }
    for (size_t i = 0; i < c->n; i++)
        if (run_stage(c, a, &c->stages[i], e)) return -1;
    int any_error = 0, any_beyond = 0;
    for (size_t i = 0; i < c->n; i++) {
        onp_chain_stage *s = &c->stages[i];
        any_error |= s->status == ONP_CHAIN_ERROR;
        any_beyond |= s->status == ONP_CHAIN_BEYOND;
        if (s->status != ONP_CHAIN_WITHIN && c->first_beyond < 0) c->first_beyond = (int)i;
        if (i > 0) match_stage(c, a, s, per_value);
        if (i > 0) stage_modules(c, s);
        stage_cause(s);
    }
    c->verdict = any_error ? ONP_RUN_ERROR : any_beyond ? ONP_RUN_FAIL : ONP_RUN_PASS;
    return 0;
}

void onp_chain_release(onp_chain *c)
{
    if (!c) return;
    for (size_t i = 0; c->stages && i < c->n; i++) {
        onp_run_result_release(&c->stages[i].run);
        free(c->stages[i].outs);
        free(c->stages[i].div.points);
        free(c->stages[i].div.group);
    }
    free(c->stages);
    onp_ort_close(c->ort);
    onp_bundle_close(c->bundle);
    memset(c, 0, sizeof *c);
    c->first_beyond = -1;
}
