/*
 * causes.c — the causes of a decode loop's defects, read from their
 * pattern (docs/generate.md, "Causes"): where each defect is placed (a
 * graph input, a generation setting, a cache entry), which rows fail
 * (padded ones only), and whether the prefill passed.  Each defect prompt
 * gets the first rule that explains it, in the order below; each cause
 * carries its evidence and its fix.
 */
#include <stdio.h>
#include <string.h>

#include "decode/decode_int.h"

static const char FIX_BAKED[] =
    "export the past key/values with their sequence dim dynamic (torch.export: Dim.DYNAMIC on "
    "dim 2 of every past input), so one graph takes the prefill's empty past and every step's";
static const char FIX_SETTING[] =
    "apply the same generation settings on both sides (the logits processor eager picked "
    "through, or none), then compare again";
static const char FIX_MASK[] =
    "make the graph use attention_mask: padded positions must be masked out of attention "
    "(an export that drops or constant-folds the mask attends to the padding)";
static const char FIX_POSITIONS[] =
    "feed position_ids advanced at each step (the real tokens so far - 1, cumsum of the mask "
    "- 1) and make the graph use them in the decode path (not a constant, not the new tokens' "
    "count)";
static const char FIX_LAYER[] =
    "that layer's computation differs between eager and the graph: compare its weights, then "
    "bisect one forward of it (onnxparity capture + bisect) to the first node";
static const char FIX_AFTER[] =
    "every cache entry is within its noise: the difference enters after the cache (the final "
    "norm, the head, or an op on the logits): compare those";
static const char FIX_UNPLACED[] =
    "no rule explains it; see the prompt's why and its first cache entry";

/* The cause `id` (layer/value for decode-layer), added when new; -1 full. */
static int cause_of(onp_decode_result *r, const char *id, int layer, int value, const char *fix)
{
    for (size_t c = 0; c < r->n_causes; c++)
        if (!strcmp(r->causes[c].id, id) && r->causes[c].layer == layer &&
            r->causes[c].value == value)
            return (int)c;
    if (r->n_causes == ONP_DECODE_MAX_CAUSES) return -1;
    onp_decode_cause *c = &r->causes[r->n_causes];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    c->layer = layer;
    c->value = value;
    c->fix = fix;
    return (int)r->n_causes++;
}

/* The attention-mask pattern: defects, each on a padded row, and at least
 * one unpadded row, none of them a defect. */
static int padded_only(const onp_decode_result *r)
{
    size_t defects = 0, unpadded = 0;
    for (size_t i = 0; i < r->n_prompts; i++) {
        const onp_decode_prompt *p = &r->prompts[i];
        if (!p->padded) unpadded++;
        if (p->cls != ONP_DECODE_DEFECT) continue;
        if (!p->padded || p->where == ONP_DECODE_WHERE_INPUT) return 0;
        defects++;
    }
    return defects > 0 && unpadded > 0;
}

/* The positions pattern: a defect row whose prefill (step 0) passed and
 * whose first cache entry off is layer 0's key, at a later step: the
 * decode path differs where positions enter. */
static int positions_seen(const onp_decode_result *r)
{
    for (size_t i = 0; i < r->n_prompts; i++) {
        const onp_decode_prompt *p = &r->prompts[i];
        if (p->cls == ONP_DECODE_DEFECT && p->where == ONP_DECODE_WHERE_CACHE &&
            p->cache_layer == 0 && !p->cache_value && p->cache_step > 0 && p->steps_run > 0 &&
            p->steps[0].logits_pass && p->steps[0].ort_token == p->steps[0].eager_token)
            return 1;
    }
    return 0;
}

static int classify(onp_decode_result *r, const onp_decode_prompt *p, int mask, int positions)
{
    if (p->where == ONP_DECODE_WHERE_INPUT)
        return cause_of(r, "decode-past-baked", -1, -1, FIX_BAKED);
    if (p->where == ONP_DECODE_WHERE_SETTING)
        return cause_of(r, "decode-generation-setting", -1, -1, FIX_SETTING);
    if (mask) return cause_of(r, "decode-attention-mask", -1, -1, FIX_MASK);
    if (p->where == ONP_DECODE_WHERE_CACHE) {
        if (positions && p->cache_layer == 0 && !p->cache_value)
            return cause_of(r, "decode-positions", -1, -1, FIX_POSITIONS);
        return cause_of(r, "decode-layer", p->cache_layer, p->cache_value, FIX_LAYER);
    }
    if (p->cache_judged && p->refused_step < 0 && p->first_cache_step < 0)
        return cause_of(r, "decode-after-cache", -1, -1, FIX_AFTER);
    return cause_of(r, "decode-unplaced", -1, -1, FIX_UNPLACED);
}

static void evidence(onp_decode_result *r, onp_decode_cause *c, const onp_decode_prompt *first)
{
    size_t padded = 0, unpadded = 0;
    for (size_t i = 0; i < r->n_prompts; i++)
        if (r->prompts[i].padded)
            padded++;
        else
            unpadded++;
    if (!strcmp(c->id, "decode-past-baked"))
        snprintf(c->evidence, sizeof c->evidence,
                 "ONNX Runtime refused step %d: layer %d's %s past input has its sequence length "
                 "fixed at %lld in the graph",
                 first->cache_step, first->cache_layer, first->cache_value ? "value" : "key",
                 (long long)first->baked_len);
    else if (!strcmp(c->id, "decode-generation-setting"))
        snprintf(c->evidence, sizeof c->evidence,
                 "the raw logits agree; eager's token is not the argmax of its own logits (first "
                 "at step %d of prompt %d/%d)",
                 first->first_token_step, first->batch, first->row);
    else if (!strcmp(c->id, "decode-attention-mask"))
        snprintf(c->evidence, sizeof c->evidence,
                 "only padded rows are defects (%zu of %zu padded), every one of the %zu unpadded "
                 "rows passes; first cache entry off: layer %d's %s at step %d",
                 c->prompts, padded, unpadded, first->cache_layer,
                 first->cache_value ? "value" : "key", first->cache_step);
    else if (!strcmp(c->id, "decode-positions"))
        snprintf(c->evidence, sizeof c->evidence,
                 "the prefill passes where its positions are right, then layer 0's key (where "
                 "positions enter) leaves its noise first, from step %d",
                 first->cache_step);
    else if (!strcmp(c->id, "decode-layer"))
        snprintf(c->evidence, sizeof c->evidence,
                 "layer %d's %s is the first cache entry beyond its noise (step %d; gap %.3g, "
                 "envelope %.3g); the entries before it agree",
                 c->layer, c->value ? "value" : "key", first->cache_step, first->cache_gap,
                 first->cache_envelope);
    else if (!strcmp(c->id, "decode-after-cache"))
        snprintf(c->evidence, sizeof c->evidence,
                 "the generation leaves eager's (first at step %d: %s) while every cache entry "
                 "stays within its noise",
                 first->first_step, first->first_logit_step >= 0 ? "the logits" : "the token");
    else
        snprintf(c->evidence, sizeof c->evidence, "%.300s", first->why);
}

void onp_dec_causes(onp_decode_result *r)
{
    int mask = padded_only(r), positions = positions_seen(r);
    const onp_decode_prompt *first[ONP_DECODE_MAX_CAUSES] = {0};
    r->n_causes = 0;
    for (size_t i = 0; i < r->n_prompts; i++) {
        onp_decode_prompt *p = &r->prompts[i];
        p->cause = -1;
        if (p->cls != ONP_DECODE_DEFECT) continue;
        int c = classify(r, p, mask, positions);
        if (c < 0) continue;
        p->cause = c;
        if (!r->causes[c].prompts++) first[c] = p;
    }
    for (size_t c = 0; c < r->n_causes; c++) evidence(r, &r->causes[c], first[c]);
}
