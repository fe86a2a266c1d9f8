/*
 * decode.h — parity of a generative model's decode loop, token by token,
 * with the KV cache (docs/decode.md: the bundle; docs/generate.md: the rule).
 *
 * A decode bundle (python: onnxparity.capture_decode) holds the exported
 * forward of a causal LM — (input_ids, attention_mask, position_ids,
 * past key/values) -> (logits, present key/values) — and the eager greedy
 * generation over its prompts: tokens, top-K logits of every step, the
 * float64 noise of every step's logits, the full logits of a bounded subset
 * of batches, the cache shapes.  onp_decode_run() runs the same greedy loop
 * in ONNX Runtime, batch by batch: the prefill, then one token per step,
 * ORT's own present key/values fed back as the next step's past, the mask
 * grown by one column and the position ids advanced as the capture's rule
 * says (cumsum of the mask - 1).  Each row (prompt) of each step is judged:
 *   - the logits with the noise rule (noise.h): against the float64 logits
 *     where the batch kept them, else on eager's top-K ids against the
 *     step's float64 statistics;
 *   - the token: ORT's argmax against eager's.  A different token is a
 *     near-tie when every step of the row so far, this one included, has
 *     logits that pass, and eager's margin between its token and ORT's is
 *     inside the step's noise envelope (margin <= envelope_max: the rule
 *     top-1 flips follow in check); else a defect.
 *   - the cache: ORT's present shapes against the capture's; where the
 *     batch kept eager's cache, each layer's new entries against it (the
 *     first entry to leave its noise names the layer where a defect starts).
 * A step ONNX Runtime refuses to run (an input shape the graph does not
 * take, e.g. a past length baked at trace) makes every row of its batch a
 * defect at that step, with ORT's message; the batch stops there, the run
 * goes on.  A worker lost to a crash or a timeout is an error.
 * After a row's first divergence ORT is fed eager's token for that row
 * (teacher forcing, its own cache still fed back), so later steps compare
 * the same context.  A prompt is AGREE (every token the same, logits pass),
 * NEAR_TIE (its divergences are near-ties) or DEFECT.  The run fails when
 * any prompt is a defect (or, strict, any diverges at all).
 *
 * Worked example (error checks shortened):
 *     onp_decode_opts o;  onp_decode_opts_init(&o);
 *     o.steps = 8;
 *     onp_decode_result *r;  onp_error e;
 *     if (onp_decode_run("gen/", &o, &r, &e) != 0) ...;   // e: file, field, why
 *     for (size_t i = 0; i < r->n_prompts; i++)
 *         printf("%zu %s step %d\n", i, onp_decode_class_name(r->prompts[i].cls),
 *                r->prompts[i].first_step);
 *     int code = onp_run_exit_code(r->verdict);
 *     onp_decode_result_free(r);
 *
 * Memory: one batch's arrays and one step's tensors at a time, whatever the
 * number of prompts; the result holds per prompt and step a few numbers.
 */
#ifndef ONNXPARITY_DECODE_H
#define ONNXPARITY_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/agreement.h"
#include "onnxparity/error.h"
#include "onnxparity/noise.h"
#include "onnxparity/ort.h"
#include "onnxparity/run.h"

struct cJSON;

/* What one prompt's generation came to. */
typedef enum onp_decode_class {
    ONP_DECODE_AGREE = 0, /* "agree": every token eager's, every step's logits pass */
    ONP_DECODE_NEAR_TIE,  /* "near-tie": tokens diverge only where eager's margin is noise */
    ONP_DECODE_DEFECT,    /* "defect": logits beyond noise, a flip beyond it, or a cache shape */
    ONP_DECODE_CLASS_COUNT
} onp_decode_class;

/* "agree", "near-tie", "defect"; "?" out of range. */
const char *onp_decode_class_name(onp_decode_class c);

/* One step of one prompt. */
typedef struct onp_decode_step {
    int64_t eager_token, ort_token; /* ORT's argmax (first maximum) */
    int logits_pass;                /* the noise rule's pass on this step's logits */
    onp_verdict verdict;            /* its verdict */
    int full;                       /* judged on the full logits (else eager's top-K ids) */
    double gap_max;                 /* |ORT - eager| over the values judged */
    double envelope_max;            /* the step's noise envelope ((K+1) N + U) */
    double margin;       /* flip: eager's logit of its token minus that of ORT's; else NAN */
    int margin_bound;    /* 1: ORT's token is outside eager's top-K: margin is a lower bound */
    int cache_ok;        /* ORT's present shapes are the capture's */
    int eager_processed; /* eager's token is not the argmax of eager's own raw logits: a
                            generation setting (a logits processor: repetition penalty, ...)
                            applied on eager's side only; a flip there is a defect */
    /* Sampling (strategy "sample"): the step's uniform draw, and the bound
     * on how far the logits' noise can move eager's CDF
     * (onp_decode_cdf_envelope); a flip's margin is then the distance from
     * the draw to eager's CDF boundary between the two tokens. */
    double uniform;      /* NAN under greedy */
    double cdf_envelope; /* NAN under greedy */
} onp_decode_step;

/* Where a prompt's defect is placed (docs/generate.md, "Where it starts"). */
typedef enum onp_decode_where {
    ONP_DECODE_WHERE_NONE = 0, /* "none": no defect, or none placed */
    ONP_DECODE_WHERE_CACHE,    /* "cache-entry": the first cache entry beyond its noise */
    ONP_DECODE_WHERE_INPUT,    /* "graph-input": a past input whose sequence length the
                                  graph fixes (baked at trace), the step ORT refused */
    ONP_DECODE_WHERE_SETTING,  /* "generation-setting": a setting applied on one side
                                  only; no layer */
    ONP_DECODE_WHERE_COUNT
} onp_decode_where;

/* "none", "cache-entry", "graph-input", "generation-setting"; "?" out of range. */
const char *onp_decode_where_name(onp_decode_where w);

typedef struct onp_decode_prompt {
    int batch, row; /* where it sits in the bundle */
    int prompt_len; /* its real tokens (padding excluded) */
    onp_decode_class cls;
    int first_step;       /* the first step whose token differs or whose logits fail; -1 none */
    int first_token_step; /* the first step whose token differs; -1 none */
    int first_logit_step; /* the first step whose logits fail; -1 none */
    int first_cache_step; /* the first step whose cache shape differs; -1 none */
    int tokens_agree;     /* steps whose ORT token is eager's */
    int steps_run;        /* steps judged: n_steps, or fewer when ORT refused a step */
    int refused_step;     /* the step ORT refused to run (an input shape the graph does not
                             take: a baked cache length), then a defect; -1 none */
    char why[768];        /* the first defect in words, or "" */
    /* The first cache entry that left its noise (batches that kept their
     * logits and cache): the first step, and in it the lowest entry
     * (layer, then key before value), whose new positions fail the noise
     * rule against eager's cache with its float64 twin as the reference.
     * Evidence of where a defect starts; the class does not depend on it. */
    int cache_judged; /* 1: the batch kept its cache, entries judged */
    int cache_step;   /* -1 none */
    int cache_layer;  /* layer index */
    int cache_value;  /* 0 key, 1 value */
    double cache_gap, cache_envelope;
    /* The defect placed: a cache entry (cache_* above), a past input the
     * graph fixes (cache_step / layer / value name it, baked_len its fixed
     * length), or a generation setting (no layer). */
    onp_decode_where where;
    int64_t baked_len;      /* graph-input: the sequence length the graph fixes; else -1 */
    int eos_step;           /* the step eager emitted eos_token_id (the row stops after it); -1 */
    int stop_step;          /* the first step one side's token is the EOS and the other's not (a
                               row stopping on one side only, a token divergence); -1 none */
    int stop_ort;           /* at stop_step: 1 ORT stops (eager goes on), 0 eager stops */
    int padded;             /* shorter than its batch's longest prompt: left padding in its row */
    int cause;              /* a defect: its index in the result's causes; -1 none */
    onp_decode_step *steps; /* [n_steps], owned by the result */
} onp_decode_prompt;

typedef struct onp_decode_opts {
    int steps;  /* steps to run (0: all the capture recorded; more is refused) */
    int strict; /* 1: a near-tie divergence fails the run too */
    /* Release criteria (0 / negative: off).  max_differ_rate: the run fails
     * when the upper bound on the share of prompts whose generation is not
     * eager's (near-ties included) passes it; min_divergence_step: when a
     * prompt's first token divergence comes before this step. */
    double max_differ_rate;
    int min_divergence_step;
    double confidence;   /* of the agreement bound; ONP_AGREEMENT_CONFIDENCE */
    onp_tol tol;         /* the logits' tolerance; rtol/atol < 0 keep float32's default */
    const char *ort_lib; /* NULL: onp_ort_open's search */
    onp_session_opts session;
    /* Progress on long runs, or NULL: called before each batch, k of n
     * (from 1), its folder. */
    onp_run_progress_fn progress;
    void *progress_ctx;
} onp_decode_opts;

/* steps 0, not strict, no criteria, 95 %, default tolerance, a zeroed session. */
void onp_decode_opts_init(onp_decode_opts *o);

/* argv[*i] ("--NAME", "--NAME=VALUE", or "--NAME" then argv[*i + 1]) as
 * one of generate's own options: --steps N (>= 1), --strict,
 * --max-differ-rate R (in [0, 1]), --min-divergence-step N (>= 0),
 * --rtol R, --atol A (>= 0).  1 set (*i moved past a separate value), 0
 * not one of them (nothing read), -1 with e (ONP_ERR_USAGE) naming the
 * option and what it wants.  The binding's parser (api.h:
 * onp_api_generate); the ORT options are run.h's. */
int onp_decode_args_parse(onp_decode_opts *o, int argc, const char *const *argv, int *i,
                          onp_error *e);

/* A cause of the loop's defects (docs/generate.md, "Causes"): which, how
 * many prompts it explains, the evidence, the fix. */
#define ONP_DECODE_MAX_CAUSES 16
typedef struct onp_decode_cause {
    char id[32]; /* decode-past-baked, decode-generation-setting, decode-attention-mask,
                    decode-positions, decode-layer, decode-after-cache, decode-unplaced */
    size_t prompts;
    int layer, value; /* decode-layer: the entry; else -1 */
    char evidence[384];
    const char *fix; /* static text */
} onp_decode_cause;

typedef struct onp_decode_result {
    onp_run_verdict verdict;
    char strategy[16];    /* "greedy" or "sample" */
    double temperature;   /* sample: T; greedy: NAN */
    int64_t eos_token_id; /* -1: none */
    char bundle[1024];
    char model_type[64];
    char exporter[32];
    int n_steps;
    size_t n_prompts;
    onp_decode_prompt *prompts; /* [n_prompts] */
    size_t counts[ONP_DECODE_CLASS_COUNT];
    int64_t tokens, tokens_agree; /* prompt x step token comparisons, and agreements */
    onp_agreement agreement;      /* prompts whose whole generation agrees (AGREE) */
    int rate_exceeded;            /* max_differ_rate set and agreement.flip_upper above it */
    size_t early;                 /* prompts diverging before min_divergence_step */
    onp_decode_cause causes[ONP_DECODE_MAX_CAUSES]; /* the defects' causes, in order met */
    size_t n_causes;
    /* per step over prompts: the largest gap / envelope ratio (the logit
     * error's growth) [n_steps] */
    double *step_ratio;
    double seconds;
    char ort_version[64];
    char provider[64]; /* ORT's name of the provider the session ran on */
} onp_decode_result;

/* Run bundle `dir`'s decode loop in ORT and judge it.  0 with *out (the
 * caller's: onp_decode_result_free), or -1 with e: ONP_ERR_IO/FORMAT for
 * an unreadable or malformed bundle (generate.json's member named by its
 * path, an array's file and shape), ONP_ERR_USAGE for options, ONP_ERR_RUNTIME
 * when ORT refuses the model or a step. */
int onp_decode_run(const char *dir, const onp_decode_opts *o, onp_decode_result **out,
                   onp_error *e);

/* Accepts NULL. */
void onp_decode_result_free(onp_decode_result *r);

/* The judgment of one step's token, pure (unit-tested): `cls_so_far` the
 * prompt's class before this step, `logits_pass` this step's, `flipped`
 * whether ORT's token differs, `margin` eager's margin between the two
 * tokens (ignored unless flipped), `envelope` the step's envelope_max.
 * Returns the class after this step. */
onp_decode_class onp_decode_judge_step(onp_decode_class cls_so_far, int logits_pass, int flipped,
                                       double margin, double envelope);

/* Sampling: how far eager's CDF may move when every logit moves by at most
 * `envelope` at temperature `temperature`: exp(2 envelope / T) - 1 (each
 * probability moves by a factor within exp(+-2 envelope / T)); 0 when the
 * envelope is not positive. */
double onp_decode_cdf_envelope(double envelope, double temperature);

/* Sampling: the token drawn by `u` in [0, 1) from logits l[V] at
 * temperature T, inverse-CDF in vocabulary order, in float64:
 * w_i = exp((l_i - max l) / T), c_k = (w_0 + ... + w_k) / (w_0 + ... +
 * w_{V-1}) summed in that order, the token the first k with u < c_k (the
 * last k with w_k > 0 when rounding leaves none).  The rule the capture's
 * sampler follows (python/onnxparity/_decode.py, sample_pick). */
int64_t onp_decode_sample(const float *l, int64_t V, double T, double u);

/* The generate document (docs/schemas/generate-1.json, schema
 * onnxparity.generate/1): verdict, bundle, summary with the agreement
 * bound, every prompt with its first divergence and per-step errors.
 * src/doc/generate.c.  A new tree, the caller's. */
struct cJSON *onp_doc_generate(const onp_decode_result *r);

#endif
