/*
 * bisect.c — the bisect document (doc.h; docs/schemas/bisect-1.json): the
 * verdict, the environment, the chunks, the plain model's check, the first
 * divergent node with its inputs and the local rerun, the curve; and the
 * words the tool's text report uses for the same result.
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "onnxparity/doc.h"

const char *onp_doc_bisect_verdict(const onp_bisect_result *r)
{
    return r->first >= 0 ? "diverges" : onp_bisect_inconclusive(r) ? "inconclusive" : "agrees";
}

/* 1 when every input of the first divergent node is known to agree. */
int onp_doc_bisect_inputs_agree(const onp_bisect_result *r)
{
    for (size_t k = 0; k < r->n_inputs; k++)
        if (r->inputs[k].src == ONP_BISECT_SRC_NONE ||
            (r->inputs[k].src != ONP_BISECT_SRC_OMITTED && !r->inputs[k].pass))
            return 0;
    return 1;
}

const char *onp_doc_bisect_ref_words(const onp_bisect_result *r)
{
    return r->reference == ONP_BISECT_REF_DISABLE ? "ORT at opt-level disable" : "eager";
}

/* An input's source; a compared value is "disable" with that reference. */
const char *onp_doc_bisect_src_name(const onp_bisect_result *r, onp_bisect_src src)
{
    if (src == ONP_BISECT_SRC_EAGER && r->reference == ONP_BISECT_REF_DISABLE) return "disable";
    return onp_bisect_src_name(src);
}

const char *onp_doc_bisect_local_verdict(const onp_bisect_local *L)
{
    return !L->ran ? NULL : L->local ? "local" : "inherited";
}

static cJSON *doc_base(const char *verdict, const char *model, int fixture)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.bisect/1");
    cJSON_AddStringToObject(root, "verdict", verdict);
    cJSON_AddStringToObject(root, "model", model);
    if (fixture >= 0)
        cJSON_AddNumberToObject(root, "fixture", (double)fixture);
    else
        cJSON_AddNullToObject(root, "fixture");
    return root;
}

static void add_env(cJSON *root, const onp_session_opts *so, const onp_bisect_result *r,
                    onp_ort *ort)
{
    cJSON *env = onp_doc_environment(root, ort, r->provider, r->opt_level, r->intra_threads,
                                     r->inter_threads, r->sha256, so->config, so->n_config);
    cJSON_AddBoolToObject(env, "upgraded_to_opset7", r->upgraded);
    cJSON_AddBoolToObject(env, "external_data", r->external);
}

static void add_verify(cJSON *root, const onp_bisect_result *r)
{
    const onp_bisect_verify *v = &r->verify;
    if (!v->ran) {
        cJSON_AddNullToObject(root, "instrumented_reproduces");
        cJSON_AddNullToObject(root, "reproduce");
    } else {
        cJSON_AddBoolToObject(root, "instrumented_reproduces", v->reproduces);
        cJSON *rp = cJSON_AddObjectToObject(root, "reproduce");
        cJSON *pl = cJSON_AddObjectToObject(rp, "plain");
        onp_doc_num(pl, "max_abs", v->plain_max_abs);
        onp_doc_num(pl, "max_rel", v->plain_max_rel);
        cJSON_AddBoolToObject(pl, "pass", v->plain_pass);
        cJSON *in = cJSON_AddObjectToObject(rp, "instrumented");
        onp_doc_num(in, "max_abs", v->instrumented_max_abs);
        onp_doc_num(in, "max_rel", v->instrumented_max_rel);
        cJSON_AddBoolToObject(in, "pass", v->instrumented_pass);
        cJSON_AddStringToObject(rp, "against", onp_doc_bisect_ref_words(r));
        if (v->expected_ran) { /* DISABLE: the plain model vs the fixtures' own outputs */
            cJSON *ex = cJSON_AddObjectToObject(rp, "expected");
            onp_doc_num(ex, "max_abs", v->expected_max_abs);
            onp_doc_num(ex, "max_rel", v->expected_max_rel);
            cJSON_AddBoolToObject(ex, "pass", v->expected_pass);
        }
        if (v->note[0]) cJSON_AddStringToObject(rp, "note", v->note);
    }
    /* issue 35: a divergence the outputs absorb, in the words the text uses */
    if (onp_bisect_absorbed(r))
        cJSON_AddStringToObject(root, "absorbed", ONP_BISECT_ABSORBED_WORDS);
    else
        cJSON_AddNullToObject(root, "absorbed");
    /* issue 35: the traced branch before the first divergent node */
    if (r->branch.found) {
        cJSON *br = cJSON_AddObjectToObject(root, "branch");
        cJSON_AddStringToObject(br, "where", r->branch.where);
        cJSON_AddStringToObject(br, "code", r->branch.code);
        cJSON *ms = cJSON_AddArrayToObject(br, "modules");
        for (size_t i = 0; ms && i < r->branch.n_modules && i < 4; i++)
            cJSON_AddItemToArray(ms, cJSON_CreateString(r->branch.modules[i]));
        cJSON_AddNumberToObject(br, "modules_total", (double)r->branch.n_modules);
        cJSON_AddNumberToObject(br, "traced_fixture", r->branch.traced_fixture);
    } else {
        cJSON_AddNullToObject(root, "branch");
    }
    cJSON_AddNumberToObject(root, "fixtures_without_intermediates", /* issue 19 */
                            (double)r->n_without_intermediates);
    cJSON *rf = cJSON_AddArrayToObject(root, "fixtures_refused");
    for (size_t i = 0; rf && i < r->n_refused; i++)
        cJSON_AddItemToArray(rf, cJSON_CreateNumber(r->refused[i]));
    if (r->n_refused)
        cJSON_AddStringToObject(root, "refused_message", r->refused_msg);
    else
        cJSON_AddNullToObject(root, "refused_message");
    if (r->reference_note[0])
        cJSON_AddStringToObject(root, "reference_note", r->reference_note);
    else
        cJSON_AddNullToObject(root, "reference_note");
    if (r->fallback[0]) {
        cJSON *fb = cJSON_AddObjectToObject(root, "fallback");
        cJSON_AddStringToObject(fb, "mode", r->fallback);
        cJSON_AddStringToObject(fb, "note", r->fallback_note);
    } else {
        cJSON_AddNullToObject(root, "fallback");
    }
}

static void add_local(cJSON *fd, const onp_bisect_result *r)
{
    const onp_bisect_local *L = &r->local;
    cJSON *l = cJSON_AddObjectToObject(fd, "local");
    const char *verdict = onp_doc_bisect_local_verdict(L);
    if (verdict) {
        cJSON_AddStringToObject(l, "verdict", verdict);
        onp_doc_num(l, "max_abs", L->max_abs);
        onp_doc_num(l, "max_rel", L->max_rel);
        cJSON_AddNumberToObject(l, "mismatches", (double)L->mismatches);
    } else {
        cJSON_AddNullToObject(l, "verdict");
        cJSON_AddNullToObject(l, "max_abs");
        cJSON_AddNullToObject(l, "max_rel");
        cJSON_AddNullToObject(l, "mismatches");
    }
    cJSON_AddNumberToObject(l, "fixture", L->fixture);
    cJSON_AddNumberToObject(l, "nodes", (double)L->n_nodes);
    cJSON_AddNumberToObject(l, "inputs_fed", (double)L->n_fed);
    onp_doc_num(l, "input_max_abs", L->input_max_abs);
    if (L->note[0]) cJSON_AddStringToObject(l, "note", L->note);
}

/* A curve point's noise judgment: verdict, envelope, ratio, jump. */
static void point_noise_json(cJSON *c, const onp_bisect_point *p)
{
    cJSON_AddStringToObject(c, "verdict", onp_verdict_name(p->verdict));
    cJSON_AddStringToObject(c, "noise_source", onp_noise_src_name(p->noise.src));
    if (p->noise.src != ONP_NOISE_NONE) {
        onp_doc_num(c, "envelope_max", p->envelope_max);
        onp_doc_num(c, "ratio", p->ratio);
    } else {
        cJSON_AddNullToObject(c, "envelope_max");
        cJSON_AddNullToObject(c, "ratio");
    }
    onp_doc_num(c, "rel_err", p->rel_err);
    onp_doc_num(c, "jump", p->jump);
}

cJSON *onp_doc_bisect(const onp_bisect_result *r, onp_ort *ort, const onp_session_opts *so,
                      int fixture)
{
    cJSON *root = doc_base(onp_doc_bisect_verdict(r), r->model, fixture);
    cJSON *fx = cJSON_AddArrayToObject(root, "fixtures");
    for (size_t i = 0; i < r->n_fixtures; i++)
        cJSON_AddItemToArray(fx, cJSON_CreateNumber(r->fixtures[i]));
    add_env(root, so, r, ort);
    cJSON_AddStringToObject(root, "reference", onp_bisect_ref_name(r->reference));
    cJSON *ch = cJSON_AddObjectToObject(root, "chunks");
    cJSON_AddNumberToObject(ch, "size", (double)r->chunk);
    cJSON_AddNumberToObject(ch, "sessions", (double)r->n_chunks);
    cJSON_AddNumberToObject(ch, "max_exposed_bytes", (double)r->budget);
    if (r->estimated_bytes)
        cJSON_AddNumberToObject(ch, "estimated_bytes", (double)r->estimated_bytes);
    else
        cJSON_AddNullToObject(ch, "estimated_bytes");
    add_verify(root, r);
    size_t failed = 0, compared = 0;
    cJSON *curve = cJSON_CreateArray();
    for (size_t i = 0; i < r->n_points; i++) {
        const onp_bisect_point *p = &r->points[i];
        compared += p->compared > 0;
        failed += p->compared && !p->pass;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "value", p->value);
        cJSON_AddStringToObject(c, "node", p->node);
        cJSON_AddStringToObject(c, "op_type", p->op_type);
        cJSON_AddStringToObject(c, "module", p->module);
        if (p->compared) {
            onp_doc_num(c, "max_abs", p->max_abs);
            onp_doc_num(c, "max_rel", p->max_rel);
            cJSON_AddBoolToObject(c, "pass", p->pass);
            point_noise_json(c, p);
        } else {
            cJSON_AddNullToObject(c, "max_abs");
            cJSON_AddNullToObject(c, "max_rel");
            cJSON_AddNullToObject(c, "pass");
        }
        if (p->note[0]) cJSON_AddStringToObject(c, "note", p->note);
        cJSON_AddItemToArray(curve, c);
    }
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "values_exposed", (double)r->n_exposed);
    cJSON_AddNumberToObject(sum, "values_compared", (double)compared);
    cJSON_AddNumberToObject(sum, "values_failed", (double)failed);
    cJSON_AddNumberToObject(sum, "references_unmatched", (double)r->n_unmatched);
    cJSON *nz = cJSON_AddObjectToObject(root, "noise");
    cJSON_AddNumberToObject(nz, "fixtures_float64", (double)r->n_noise_float64);
    cJSON_AddNumberToObject(nz, "fixtures_estimated", (double)r->n_noise_ort);
    if (r->jump_point >= 0) {
        const onp_bisect_point *jpt = &r->points[r->jump_point];
        cJSON *bj = cJSON_AddObjectToObject(root, "biggest_jump");
        cJSON_AddNumberToObject(bj, "index", (double)r->jump_point);
        onp_doc_point_names(bj, jpt);
        onp_doc_num(bj, "rel_err", jpt->rel_err);
        onp_doc_num(bj, "jump", jpt->jump);
    } else {
        cJSON_AddNullToObject(root, "biggest_jump");
    }
    if (r->first >= 0) {
        const onp_bisect_point *f = &r->points[r->first];
        cJSON *fd = cJSON_AddObjectToObject(root, "first_divergent");
        onp_doc_point_names(fd, f);
        onp_doc_num(fd, "max_abs", f->max_abs);
        onp_doc_num(fd, "max_rel", f->max_rel);
        cJSON_AddNumberToObject(fd, "fixture", f->fail_fixture);
        cJSON_AddNumberToObject(fd, "index", (double)r->first);
        cJSON_AddBoolToObject(fd, "inputs_agree", onp_doc_bisect_inputs_agree(r));
        point_noise_json(fd, f);
        if (f->note[0]) cJSON_AddStringToObject(fd, "note", f->note);
        cJSON *ins = cJSON_AddArrayToObject(fd, "inputs");
        for (size_t k = 0; k < r->n_inputs; k++) {
            const onp_bisect_input *x = &r->inputs[k];
            cJSON *ij = cJSON_CreateObject();
            cJSON_AddStringToObject(ij, "name", x->name);
            cJSON_AddStringToObject(ij, "source", onp_doc_bisect_src_name(r, x->src));
            if (x->src == ONP_BISECT_SRC_NONE || x->src == ONP_BISECT_SRC_OMITTED) {
                cJSON_AddNullToObject(ij, "max_abs");
                cJSON_AddNullToObject(ij, "pass");
            } else {
                onp_doc_num(ij, "max_abs", x->max_abs);
                onp_doc_num(ij, "max_rel", x->max_rel);
                cJSON_AddBoolToObject(ij, "pass", x->pass);
            }
            cJSON_AddItemToArray(ins, ij);
        }
        add_local(fd, r);
        if (r->repro[0])
            cJSON_AddStringToObject(fd, "repro", r->repro);
        else
            cJSON_AddNullToObject(fd, "repro");
        if (r->repro_note[0]) cJSON_AddStringToObject(fd, "repro_note", r->repro_note);
        cJSON *metrics = cJSON_AddObjectToObject(fd, "metrics");
        onp_doc_metrics(metrics, &f->m);
    } else {
        cJSON_AddNullToObject(root, "first_divergent");
    }
    cJSON_AddItemToObject(root, "curve", curve);
    return root;
}

const char *onp_doc_bisect_no_reference(const onp_bisect_result *r, char *buf, size_t n)
{
    snprintf(buf, n,
             "no eager reference: the fixtures have no intermediates/index.json (capture with "
             "intermediates=True), so none of the %zu node outputs can be compared "
             "(--reference disable compares with ORT at opt-level disable instead)",
             r->n_exposed);
    return buf;
}

cJSON *onp_doc_bisect_error(const char *model, int fixture, const char *msg)
{
    cJSON *root = doc_base("error", model, fixture);
    cJSON_AddStringToObject(root, "error", msg);
    return root;
}
