/*
 * record.c — what `gate --record` records (gate.h): whether a run may be a
 * baseline at all, the criteria measured from it (the limit formula:
 * measured x margin, floored by the noise envelope), and the criteria
 * document written from them.  Reads a judged run (run.h); never runs
 * anything, never prints.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/agreement.h"
#include "onnxparity/doc.h"
#include "onnxparity/gate.h"

// --- may it be recorded -----------------------------------------------------------

onp_run_verdict onp_gate_recordable(const onp_run_result *r, const onp_lint_result *lint,
                                    int allow_failing, onp_gate_refusal_why *why)
{
    memset(why, 0, sizeof *why);
    for (size_t i = 0; i < r->n_fix; i++)
        if (r->fix[i].status == ONP_FIXTURE_ERROR) {
            why->why = ONP_GATE_REFUSE_NOT_RUNNING;
            why->fixture = &r->fix[i];
            return ONP_RUN_FAIL;
        }
    if (allow_failing) return ONP_RUN_PASS;
    for (size_t i = 0; i < r->n_fix; i++) {
        const onp_fixture_verdict *f = &r->fix[i];
        if (f->status != ONP_FIXTURE_FAIL) continue;
        if (!why->failing++) {
            why->fixture = f;
            for (size_t k = 0; !why->output && k < f->n_out; k++)
                if (!f->outs[k].pass) why->output = &f->outs[k];
        }
    }
    if (why->failing) {
        why->why = ONP_GATE_REFUSE_FAILING;
        return ONP_RUN_FAIL;
    }
    why->lint_errors = lint->counts[ONP_LINT_ERROR];
    for (size_t i = 0; why->lint_errors && !why->finding && i < lint->n; i++)
        if (lint->findings[i].rule->severity == ONP_LINT_ERROR) why->finding = &lint->findings[i];
    if (!why->lint_errors) return ONP_RUN_PASS;
    why->why = ONP_GATE_REFUSE_LINT;
    return ONP_RUN_FAIL;
}

// --- the criteria measured ----------------------------------------------------------

/* Add y's shape to o's unless it is there already or o holds the most. */
static void add_shape(onp_crit_out *o, const onp_output_verdict *y)
{
    for (size_t s = 0; s < o->n_shapes; s++)
        if (o->rank[s] == y->rank &&
            !memcmp(o->dims[s], y->dims, (size_t)y->rank * sizeof y->dims[0]))
            return;
    if (o->n_shapes >= ONP_CRITERIA_MAX_SHAPES) return;
    o->rank[o->n_shapes] = y->rank;
    memcpy(o->dims[o->n_shapes], y->dims, (size_t)y->rank * sizeof y->dims[0]);
    o->n_shapes++;
}

/* The criteria of output x (first compared in fixture `first`) over every
 * fixture from there on: the worst of each metric, the noise, the top-1
 * rows, the shapes; then the limits. */
static void record_output(const onp_run_result *r, size_t first, const onp_output_verdict *x,
                          double margin, onp_crit_out *o)
{
    double max_abs = 0, max_rel = 0, nr = 0, na = 0, mf = 0, env = -1;
    long quiet = 0; /* fixtures within tolerance but beyond their float noise */
    onp_noise_src weakest = ONP_NOISE_NONE;
    int64_t rows = 0, agree = 0;
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", x->name);
    o->rtol = x->m.tol.rtol;
    o->atol = x->m.tol.atol;
    for (size_t j = first; j < r->n_fix; j++)
        for (size_t q = 0; q < r->fix[j].n_out; q++) {
            const onp_output_verdict *y = &r->fix[j].outs[q];
            if (!y->compared || strcmp(y->name, x->name)) continue;
            max_abs = fmax(max_abs, y->m.max_abs);
            max_rel = fmax(max_rel, y->m.max_rel);
            nr = isinf(y->m.needed_rtol) ? INFINITY : fmax(nr, y->m.needed_rtol);
            na = fmax(na, y->m.needed_atol);
            mf = fmax(mf, y->m.mismatch_frac);
            if (y->j.noise.src != ONP_NOISE_NONE) {
                env = fmax(env, y->j.envelope_max);
                if (y->j.noise.src > weakest) weakest = y->j.noise.src;
            }
            quiet += onp_judgment_within_tol_beyond_noise(&y->j);
            if (y->has_topk) rows += y->tk.rows, agree += y->tk.top1_agree;
            add_shape(o, y);
        }
    o->top1_min = rows ? (double)agree / (double)rows : -1;
    o->max_flip_rate = -1;
    o->flip_confidence = ONP_AGREEMENT_CONFIDENCE;
    if (rows) { /* issue 19: the flip rate's bound as measured (edit it to a release goal) */
        onp_agreement ag;
        onp_agreement_of(rows, agree, ONP_AGREEMENT_CONFIDENCE, &ag);
        o->max_flip_rate = ag.flip_upper;
        o->flip_confidence = ag.confidence;
    }
    o->mismatch_frac_max = mf;
    /* limits: measured x margin, floored by the noise envelope so that a
     * harmless change (a retrain, another summation order) inside the float
     * noise never reads as a regression; an infinite one is no limit */
    double lim_abs = fmax(max_abs * margin, env), lim_atol = fmax(na * margin, env);
    o->max_abs = isfinite(lim_abs) ? lim_abs : -1;
    o->needed_rtol = isfinite(nr) ? nr * margin : -1;
    o->needed_atol = isfinite(lim_atol) ? lim_atol : -1;
    o->envelope_max = env; /* -1: no noise estimate anywhere */
    o->noise_source = env >= 0 ? weakest : ONP_NOISE_NONE;
    /* as measured: a healthy export has none; a bundle recorded with some
     * keeps them allowed, and any more regress */
    o->quiet_change_max = quiet;
    o->measured_max_abs = max_abs;
    o->measured_max_rel = max_rel;
    o->measured_needed_rtol = nr;
    o->measured_needed_atol = na;
}

int onp_gate_record(const onp_run_result *r, const onp_lint_result *lint, const char *model_sha256,
                    double margin, onp_criteria *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    snprintf(out->model_sha256, sizeof out->model_sha256, "%s", model_sha256 ? model_sha256 : "");
    out->fixtures = (long)r->n_fix;
    out->margin = margin;
    out->has_env = 1;
    out->env = r->env;
    size_t n_outs = 0;
    for (size_t i = 0; i < r->n_fix; i++) n_outs += r->fix[i].n_out;
    out->lint = calloc(onp_lint_rule_count() + 1, sizeof *out->lint);
    out->outs = calloc(n_outs + 1, sizeof *out->outs);
    if (!out->lint || !out->outs) {
        onp_criteria_free(out);
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    }
    for (size_t k = 0; k < onp_lint_rule_count(); k++) { /* the rules without any finding */
        const onp_lint_rule *rule = onp_lint_rule_at(k);
        size_t hits = 0;
        for (size_t i = 0; i < lint->n; i++) hits += lint->findings[i].rule == rule;
        if (!hits) snprintf(out->lint[out->n_lint++], sizeof out->lint[0], "%s", rule->id);
    }
    for (size_t i = 0; i < r->n_fix; i++)
        for (size_t k = 0; k < r->fix[i].n_out; k++) {
            const onp_output_verdict *x = &r->fix[i].outs[k];
            if (!x->compared || onp_criteria_find(out, x->name)) continue;
            record_output(r, i, x, margin, &out->outs[out->n_out++]);
        }
    return 0;
}

// --- the document ----------------------------------------------------------------------

/* o[key] = v, or null when v < 0 (not checked). */
static void num_or_null(cJSON *o, const char *key, double v)
{
    if (v >= 0)
        onp_doc_num(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *output_json(const onp_crit_out *co)
{
    cJSON *oj = cJSON_CreateObject(), *shapes = cJSON_CreateArray();
    if (!oj || !shapes) {
        cJSON_Delete(oj);
        cJSON_Delete(shapes);
        return NULL;
    }
    onp_doc_num(oj, "rtol", co->rtol);
    onp_doc_num(oj, "atol", co->atol);
    num_or_null(oj, "top1_min", co->top1_min);
    num_or_null(oj, "max_flip_rate", co->max_flip_rate);
    if (co->max_flip_rate >= 0) onp_doc_num(oj, "flip_confidence", co->flip_confidence);
    onp_doc_num(oj, "mismatch_frac_max", co->mismatch_frac_max);
    for (size_t s = 0; s < co->n_shapes; s++) {
        cJSON *sh = cJSON_CreateArray();
        for (int d = 0; d < co->rank[s]; d++)
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)co->dims[s][d]));
        cJSON_AddItemToArray(shapes, sh);
    }
    cJSON_AddItemToObject(oj, "shapes", shapes);
    num_or_null(oj, "max_abs", co->max_abs);
    num_or_null(oj, "needed_rtol", co->needed_rtol);
    num_or_null(oj, "needed_atol", co->needed_atol);
    num_or_null(oj, "envelope_max", co->envelope_max);
    if (co->envelope_max >= 0)
        cJSON_AddStringToObject(oj, "noise_source", onp_noise_src_name(co->noise_source));
    if (co->quiet_change_max >= 0)
        cJSON_AddNumberToObject(oj, "quiet_change_max", (double)co->quiet_change_max);
    if (co->measured_max_abs >= 0) {
        cJSON *meas = cJSON_AddObjectToObject(oj, "measured");
        onp_doc_num(meas, "max_abs", co->measured_max_abs);
        onp_doc_num(meas, "max_rel", co->measured_max_rel);
        onp_doc_num(meas, "needed_rtol", co->measured_needed_rtol);
        onp_doc_num(meas, "needed_atol", co->measured_needed_atol);
    }
    return oj;
}

/* The criteria of c (of the file, or of one target) into root. */
static int criteria_body(cJSON *root, const onp_criteria *c);

cJSON *onp_criteria_to_json(const onp_criteria *c)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "schema", ONP_CRITERIA_SCHEMA);
    if (!c->n_targets) {
        if (criteria_body(root, c)) cJSON_Delete(root), root = NULL;
        return root;
    }
    cJSON *arr = cJSON_AddArrayToObject(root, "targets");
    for (size_t k = 0; arr && k < c->n_targets; k++) {
        const onp_crit_target *t = &c->targets[k];
        cJSON *x = cJSON_CreateObject();
        if (!x || !cJSON_AddItemToArray(arr, x)) {
            cJSON_Delete(x);
            arr = NULL;
            break;
        }
        cJSON_AddStringToObject(x, "name", t->name);
        if (t->ort_library[0])
            cJSON_AddStringToObject(x, "ort_library", t->ort_library);
        else
            cJSON_AddNullToObject(x, "ort_library");
        if (t->opt_level[0])
            cJSON_AddStringToObject(x, "opt_level", t->opt_level);
        else
            cJSON_AddNullToObject(x, "opt_level");
        if (t->provider[0]) {
            cJSON_AddStringToObject(x, "provider", t->provider);
            cJSON *po = cJSON_AddArrayToObject(x, "provider_options");
            for (size_t q = 0; po && q < t->n_provider_opts; q++)
                cJSON_AddItemToArray(po, cJSON_CreateString(t->provider_opts[q]));
        } else {
            cJSON_AddNullToObject(x, "provider");
            cJSON_AddNullToObject(x, "provider_options");
        }
        if (criteria_body(x, &t->crit)) arr = NULL;
    }
    if (!arr) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

static int criteria_body(cJSON *root, const onp_criteria *c)
{
    cJSON_AddStringToObject(root, "model_sha256", c->model_sha256);
    if (c->has_env && onp_env_write_json(&c->env, cJSON_AddObjectToObject(root, "environment")))
        return -1;
    onp_doc_num(root, "margin", c->margin);
    cJSON_AddNumberToObject(root, "fixtures", (double)c->fixtures);
    cJSON *lc = cJSON_AddArrayToObject(root, "lint_clean");
    for (size_t k = 0; k < c->n_lint; k++) cJSON_AddItemToArray(lc, cJSON_CreateString(c->lint[k]));
    cJSON *outs = cJSON_AddObjectToObject(root, "outputs");
    for (size_t i = 0; outs && i < c->n_out; i++) {
        cJSON *oj = output_json(&c->outs[i]);
        if (!oj) return -1;
        cJSON_AddItemToObject(outs, c->outs[i].name, oj);
    }
    return outs && lc ? 0 : -1;
}

// --- why not, for people ------------------------------------------------------------

void onp_gate_refusal_text(const onp_gate *g, char *buf, size_t n)
{
    for (size_t k = 0; k < g->n_targets; k++) /* the first target that is no baseline */
        if (g->targets[k].verdict != ONP_RUN_PASS) {
            int u = snprintf(buf, n, "target %s: ", g->targets[k].target);
            if (u > 0 && (size_t)u < n)
                onp_gate_refusal_text(&g->targets[k], buf + u, n - (size_t)u);
            return;
        }
    const onp_gate_refusal_why *w = &g->refusal;
    const char *again = "fix the export, or pass --allow-failing to record a failing baseline on "
                        "purpose";
    buf[0] = '\0';
    if (w->why == ONP_GATE_REFUSE_NOT_RUNNING) {
        snprintf(buf, n, "%s: %s: not recording criteria for a bundle that does not run",
                 w->fixture->dir, w->fixture->msg);
    } else if (w->why == ONP_GATE_REFUSE_FAILING) {
        const onp_output_verdict *fo = w->output;
        char ga[16], en[16];
        snprintf(buf, n,
                 "not recording criteria: %zu of %zu fixtures fail (first: %s, output %s: %s%s%s, "
                 "max_abs %s, noise envelope %s); %s",
                 w->failing, g->check.run.n_fix, onp_gate_fixture_name(w->fixture->dir),
                 fo ? fo->name : "?", fo ? onp_verdict_name(fo->j.verdict) : "?",
                 fo && fo->note[0] ? ", " : "", fo ? fo->note : "",
                 onp_doc_short_num(fo ? fo->m.max_abs : NAN, ga, sizeof ga),
                 onp_doc_short_num(fo ? fo->j.envelope_max : NAN, en, sizeof en), again);
    } else if (w->why == ONP_GATE_REFUSE_LINT) {
        const onp_lint_finding *f = w->finding;
        snprintf(buf, n,
                 "not recording criteria: %zu error-level lint finding(s) (first: %s %s at %s); %s",
                 w->lint_errors, f->rule->id, f->rule->name,
                 f->loc.name && f->loc.name[0] ? f->loc.name : "(model)", again);
    }
}
