/*
 * generate.c — the generate document (decode.h; docs/schemas/generate-1.json,
 * schema onnxparity.generate/1) of one decode-loop run: the verdict, the
 * bundle and runtime, the summary (classes, token agreement, the prompts'
 * agreement bound), the logit error's growth per step, and every prompt
 * with its first divergence and its steps.  One writer: the tool prints it
 * for `generate-check --format json`.
 */
#include <cjson/cJSON.h>
#include <math.h>

#include "onnxparity/decode.h"
#include "onnxparity/doc.h"
#include "onnxparity/version.h"

static cJSON *step_json(const onp_decode_step *st, int t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "step", t);
    cJSON_AddNumberToObject(o, "eager_token", (double)st->eager_token);
    cJSON_AddNumberToObject(o, "ort_token", (double)st->ort_token);
    cJSON_AddStringToObject(o, "logits", onp_verdict_name(st->verdict));
    cJSON_AddBoolToObject(o, "logits_pass", st->logits_pass);
    cJSON_AddStringToObject(o, "judged_on", st->full ? "logits" : "top-k");
    onp_doc_num(o, "gap_max", st->gap_max);
    onp_doc_num(o, "envelope_max", st->envelope_max);
    if (isnan(st->margin))
        cJSON_AddNullToObject(o, "margin");
    else
        onp_doc_num(o, "margin", st->margin);
    cJSON_AddBoolToObject(o, "margin_is_bound", st->margin_bound);
    cJSON_AddBoolToObject(o, "cache_ok", st->cache_ok);
    cJSON_AddBoolToObject(o, "eager_processed", st->eager_processed);
    if (!isnan(st->uniform)) {
        onp_doc_num(o, "uniform", st->uniform);
        onp_doc_num(o, "cdf_envelope", st->cdf_envelope);
    }
    return o;
}

static void add_step_or_null(cJSON *o, const char *key, int step)
{
    if (step < 0)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, step);
}

static cJSON *prompt_json(const onp_decode_result *r, const onp_decode_prompt *p, size_t index)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", (double)index);
    cJSON_AddNumberToObject(o, "batch", p->batch);
    cJSON_AddNumberToObject(o, "row", p->row);
    cJSON_AddNumberToObject(o, "prompt_len", p->prompt_len);
    cJSON_AddStringToObject(o, "class", onp_decode_class_name(p->cls));
    cJSON_AddNumberToObject(o, "tokens_agree", p->tokens_agree);
    add_step_or_null(o, "first_divergent_step", p->first_step);
    add_step_or_null(o, "first_token_step", p->first_token_step);
    add_step_or_null(o, "first_logit_step", p->first_logit_step);
    add_step_or_null(o, "first_cache_step", p->first_cache_step);
    add_step_or_null(o, "refused_step", p->refused_step);
    cJSON_AddNumberToObject(o, "steps_run", p->steps_run);
    if (p->first_step >= 0) { /* the step and its tokens (ORT's null where it refused) */
        const onp_decode_step *st = &p->steps[p->first_step];
        cJSON *fd = cJSON_AddObjectToObject(o, "first_divergence");
        cJSON_AddNumberToObject(fd, "step", p->first_step);
        cJSON_AddNumberToObject(fd, "eager_token", (double)st->eager_token);
        if (st->ort_token < 0)
            cJSON_AddNullToObject(fd, "ort_token");
        else
            cJSON_AddNumberToObject(fd, "ort_token", (double)st->ort_token);
    } else {
        cJSON_AddNullToObject(o, "first_divergence");
    }
    if (p->first_token_step >= 0) {
        const onp_decode_step *st = &p->steps[p->first_token_step];
        cJSON *d = cJSON_AddObjectToObject(o, "divergence");
        cJSON_AddNumberToObject(d, "step", p->first_token_step);
        cJSON_AddNumberToObject(d, "eager_token", (double)st->eager_token);
        cJSON_AddNumberToObject(d, "ort_token", (double)st->ort_token);
        onp_doc_num(d, "margin", st->margin);
        cJSON_AddBoolToObject(d, "margin_is_bound", st->margin_bound);
        onp_doc_num(d, "envelope_max", st->envelope_max);
    } else {
        cJSON_AddNullToObject(o, "divergence");
    }
    if (p->cache_judged && p->where == ONP_DECODE_WHERE_CACHE) {
        cJSON *ce = cJSON_AddObjectToObject(o, "first_cache_entry");
        cJSON_AddNumberToObject(ce, "step", p->cache_step);
        cJSON_AddNumberToObject(ce, "layer", p->cache_layer);
        cJSON_AddStringToObject(ce, "entry", p->cache_value ? "value" : "key");
        onp_doc_num(ce, "gap_max", p->cache_gap);
        onp_doc_num(ce, "envelope_max", p->cache_envelope);
    } else {
        cJSON_AddNullToObject(o, "first_cache_entry");
    }
    cJSON_AddBoolToObject(o, "cache_judged", p->cache_judged);
    cJSON *w = cJSON_AddObjectToObject(o, "where");
    cJSON_AddStringToObject(w, "kind", onp_decode_where_name(p->where));
    int layered = p->where == ONP_DECODE_WHERE_CACHE || p->where == ONP_DECODE_WHERE_INPUT;
    if (layered) {
        cJSON_AddNumberToObject(w, "step", p->cache_step);
        cJSON_AddNumberToObject(w, "layer", p->cache_layer);
        cJSON_AddStringToObject(w, "entry", p->cache_value ? "value" : "key");
    } else {
        if (p->where == ONP_DECODE_WHERE_SETTING)
            cJSON_AddNumberToObject(w, "step", p->first_token_step);
        else
            cJSON_AddNullToObject(w, "step");
        cJSON_AddNullToObject(w, "layer");
        cJSON_AddNullToObject(w, "entry");
    }
    if (p->where == ONP_DECODE_WHERE_INPUT)
        cJSON_AddNumberToObject(w, "baked_length", (double)p->baked_len);
    add_step_or_null(o, "eos_step", p->eos_step);
    if (p->cause >= 0)
        cJSON_AddStringToObject(o, "cause", r->causes[p->cause].id);
    else
        cJSON_AddNullToObject(o, "cause");
    if (p->stop_step >= 0) {
        cJSON *sd = cJSON_AddObjectToObject(o, "stop_divergence");
        cJSON_AddNumberToObject(sd, "step", p->stop_step);
        cJSON_AddStringToObject(sd, "stops", p->stop_ort ? "ort" : "eager");
    } else {
        cJSON_AddNullToObject(o, "stop_divergence");
    }
    if (p->why[0])
        cJSON_AddStringToObject(o, "why", p->why);
    else
        cJSON_AddNullToObject(o, "why");
    cJSON *steps = cJSON_AddArrayToObject(o, "steps");
    for (int t = 0; t < p->steps_run; t++) cJSON_AddItemToArray(steps, step_json(&p->steps[t], t));
    return o;
}

cJSON *onp_doc_generate(const onp_decode_result *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.generate/1");
    cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(r->verdict));
    cJSON_AddStringToObject(root, "bundle", r->bundle);
    cJSON_AddStringToObject(root, "model_type", r->model_type);
    cJSON_AddStringToObject(root, "exporter", r->exporter);
    cJSON *env = cJSON_AddObjectToObject(root, "environment");
    cJSON_AddStringToObject(env, "onnxparity", onp_version());
    cJSON_AddStringToObject(env, "ort_version", r->ort_version);
    cJSON_AddStringToObject(env, "provider", r->provider);
    cJSON_AddNumberToObject(root, "steps", r->n_steps);
    cJSON *gen = cJSON_AddObjectToObject(root, "generation");
    cJSON_AddStringToObject(gen, "strategy", r->strategy);
    if (isnan(r->temperature))
        cJSON_AddNullToObject(gen, "temperature");
    else
        onp_doc_num(gen, "temperature", r->temperature);
    if (r->eos_token_id < 0)
        cJSON_AddNullToObject(gen, "eos_token_id");
    else
        cJSON_AddNumberToObject(gen, "eos_token_id", (double)r->eos_token_id);
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "prompts", (double)r->n_prompts);
    cJSON *cls = cJSON_AddObjectToObject(sum, "classes");
    for (int c = 0; c < ONP_DECODE_CLASS_COUNT; c++)
        cJSON_AddNumberToObject(cls, onp_decode_class_name((onp_decode_class)c),
                                (double)r->counts[c]);
    cJSON_AddNumberToObject(sum, "tokens", (double)r->tokens);
    cJSON_AddNumberToObject(sum, "tokens_agree", (double)r->tokens_agree);
    cJSON *ag = cJSON_AddObjectToObject(sum, "prompt_agreement");
    cJSON_AddNumberToObject(ag, "prompts", (double)r->agreement.rows);
    cJSON_AddNumberToObject(ag, "agree", (double)r->agreement.agree);
    onp_doc_agreement(ag, &r->agreement);
    onp_doc_num(sum, "seconds", r->seconds);
    cJSON *cr = cJSON_AddObjectToObject(root, "criteria");
    cJSON_AddBoolToObject(cr, "rate_exceeded", r->rate_exceeded);
    cJSON_AddNumberToObject(cr, "early_divergences", (double)r->early);
    cJSON *causes = cJSON_AddArrayToObject(root, "causes");
    for (size_t c = 0; c < r->n_causes; c++) {
        const onp_decode_cause *k = &r->causes[c];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "id", k->id);
        cJSON_AddNumberToObject(x, "prompts", (double)k->prompts);
        if (k->layer >= 0) {
            cJSON_AddNumberToObject(x, "layer", k->layer);
            cJSON_AddStringToObject(x, "entry", k->value ? "value" : "key");
        }
        cJSON_AddStringToObject(x, "evidence", k->evidence);
        cJSON_AddStringToObject(x, "fix", k->fix);
        cJSON_AddItemToArray(causes, x);
    }
    cJSON *growth = cJSON_AddArrayToObject(root, "step_ratio");
    for (int t = 0; t < r->n_steps; t++) {
        cJSON *x = cJSON_CreateObject();
        onp_doc_num(x, "v", r->step_ratio[t]);
        cJSON_AddItemToArray(growth, cJSON_DetachItemFromObject(x, "v"));
        cJSON_Delete(x);
    }
    cJSON *ps = cJSON_AddArrayToObject(root, "prompts");
    for (size_t i = 0; i < r->n_prompts; i++)
        cJSON_AddItemToArray(ps, prompt_json(r, &r->prompts[i], i));
    return root;
}
