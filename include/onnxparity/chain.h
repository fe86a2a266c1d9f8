/*
 * chain.h — parity through the deployment chain: the models a team ships
 * after the export (ONNX Runtime's offline optimization, onnxslim, a
 * float16 conversion, int8 quantization), each judged against eager over
 * the bundle's fixtures, with an envelope scaled to the stage's precision
 * (docs/chain.md).
 *
 * A chain is the bundle's own export (stage 0, "export", float32) and the
 * stages after it, each a model file with a precision.  Every stage is the
 * run of run.h (onp_run_fixtures over the bundle's fixtures, its noise book
 * and float64 references) on a session opened on the stage's model: no
 * fixture loop of its own.  What the chain adds:
 *
 *   the stage envelope  each output of each fixture judged again at the
 *            stage's precision p: the float32 noise of the value scaled by
 *            eps(p) / eps(float32) and the floor ONP_NOISE_ULPS * eps(p) *
 *            scale (the noise rule of noise.h, unchanged otherwise).  A
 *            float32 stage is judged exactly as check judges it.  A stage
 *            is "within" (as accurate as its precision allows) when every
 *            output of every fixture is; the first stage that is not is
 *            named (first_beyond).
 *   the divergence  for a stage beyond its envelope, its first divergent
 *            value: every value computed in both the stage's graph and the
 *            export's under the same name is exposed in both, and so is every
 *            value of either graph the other does not name (a transform
 *            renamed or fused it); the failing fixture is run through both;
 *            a renamed stage value is matched by value (the export value of
 *            its shape, computed between the same matched values, that
 *            correlates best with it); the first value in the stage's node
 *            order whose error relative to its scale exceeds the stage's
 *            limit is named, with its producing node in each graph and the
 *            group of export nodes that producer stands for.
 *
 * Worked example (error checks shortened):
 *     onp_run_args a;  onp_run_args_init(&a);
 *     onp_chain_stage_spec st[] = {{"fp16", "model.fp16.onnx", ONP_CHAIN_FP16, 1}};
 *     onp_bundle_spec where = {.bundle = "bundle/"};
 *     onp_chain c;  onp_error e;
 *     if (onp_chain_run(&c, &where, &a, st, 1, &e) == 0 && c.first_beyond >= 0)
 *         printf("%s\n", c.stages[c.first_beyond].name);
 *     onp_chain_release(&c);
 *
 * Depends on run (and through it judge, ort, model); never prints.
 */
#ifndef ONNXPARITY_CHAIN_H
#define ONNXPARITY_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/error.h"
#include "onnxparity/run.h"

struct cJSON;

// --- the precision of a stage ------------------------------------------------------

/* How to add one: a value here, a row in precs[] (src/run/chain.c: name,
 * epsilon) and a line in docs/chain.md's table. */
typedef enum onp_chain_prec {
    ONP_CHAIN_FP32 = 0, /* float32: judged as check judges */
    ONP_CHAIN_FP16,     /* float16 values (a converted model): eps 2^-10 */
    ONP_CHAIN_BF16,     /* bfloat16 values: eps 2^-7 */
    ONP_CHAIN_INT8,     /* int8 quantized (dynamic or QDQ): one step of a symmetric int8 grid
                           relative to its range, 2^-7 */
    ONP_CHAIN_PREC_COUNT
} onp_chain_prec;

/* "fp32", "fp16", "bf16", "int8"; "?" out of range. */
const char *onp_chain_prec_name(onp_chain_prec p);

/* The name back: 0, or -1 for any other string (NULL too). */
int onp_chain_prec_from_name(const char *name, onp_chain_prec *out);

/* The epsilon of p (the table above); 0 out of range. */
double onp_chain_prec_eps(onp_chain_prec p);

/* The precision a model's graph says it has, for a stage given without
 * one: int8 when a node is QuantizeLinear, DynamicQuantizeLinear,
 * MatMulInteger, ConvInteger, QLinearConv or QLinearMatMul; else fp16 when
 * an initializer is float16; else bf16 when one is bfloat16; else fp32. */
onp_chain_prec onp_chain_prec_of_model(const onp_model *m);

// --- what a chain is ----------------------------------------------------------------

typedef struct onp_chain_stage_spec {
    const char *name;    /* "fp16", "ort-extended", ...: unique in the chain */
    const char *model;   /* the stage's model file */
    onp_chain_prec prec; /* with prec_given */
    int prec_given;      /* 0: onp_chain_prec_of_model decides */
} onp_chain_stage_spec;

/* One output of one stage, over the fixtures: the worst fixture's numbers. */
typedef struct onp_chain_output {
    char name[256];
    size_t compared;     /* fixtures in which it was compared */
    size_t beyond;       /* of those, beyond the stage's envelope */
    int within;          /* compared in every fixture that ran, never beyond */
    double max_abs;      /* worst |stage - eager| over the fixtures */
    double rms;          /* worst RMS gap */
    double scale_max;    /* largest |eager| (0: no noise estimate gave it) */
    double max_rel;      /* max_abs / scale_max at the worst fixture (0: no scale) */
    double envelope_max; /* the stage envelope at the fixture of the worst ratio */
    double ratio;        /* worst gap / stage envelope (0: no envelope) */
    double sqnr_db;      /* lowest 20 log10(scale_rms / rms) over the fixtures (inf: exact) */
    int worst_fixture;   /* fixture index of the worst ratio (or max_abs), -1 */
    int64_t flips;       /* top-1 flips over the fixtures */
    const char *why;     /* the first fixture's reason when beyond, or NULL */
} onp_chain_output;

/* One value matched across the export's graph and a stage's: by name (the
 * same name in both), or by value where the stage renamed it (chainmatch.c:
 * the export value of the same shape, computed from the same matched
 * values, that correlates best with it on the fixture). */
typedef struct onp_chain_point {
    char value[256];      /* its name in the stage's graph */
    char orig_value[256]; /* its name in the export's graph (= value when by_name) */
    int by_value;         /* 1: matched by value (correlation), 0: by name */
    double corr;          /* by_value: the Pearson correlation that matched it; else NaN */
    char node[256];       /* producer in the stage's graph ("" unnamed) */
    char op_type[64];
    char orig_node[256]; /* producer in the export's graph */
    char orig_op_type[64];
    double max_abs;    /* |stage - export| over finite pairs */
    double scale_max;  /* largest |export| */
    double rel_err;    /* max_abs / scale_max; inf for a NaN/Inf one side only */
    int64_t nonfinite; /* NaN or Inf on one side only */
    double sqnr_db;    /* 20 log10(RMS |export| / RMS |stage - export|); inf exact, -inf
                          non-finite */
    double drop_db;    /* the lowest SQNR of the compared inputs of its producer in the
                          export minus its own, both capped at float32's 144.49 dB: how
                                much this node lost; NaN when no input was compared */
} onp_chain_point;

/* An export node of a fused group (chainmatch.c). */
typedef struct onp_chain_group_node {
    char node[256];
    char op_type[64];
    char value[256]; /* its first output */
} onp_chain_group_node;

#define ONP_CHAIN_MAX_MODULES 16

/* The first divergent value of a stage (src/run/chainmatch.c). */
typedef struct onp_chain_divergence {
    int ran;           /* 1: the match ran (found or not) */
    int found;         /* 1: first holds the first divergent value */
    int fixture;       /* the fixture run through both graphs */
    double limit;      /* the relative error a value may have (docs/chain.md) */
    size_t n_common;   /* values named alike in both graphs */
    size_t n_by_value; /* stage values a transform renamed, matched by value */
    size_t n_compared; /* of both, compared (floating, same shape) */
    onp_chain_point first;
    onp_chain_point input; /* the worst of the first's producer's compared inputs ("" none) */
    onp_chain_point worst; /* the value of the largest relative error */
    /* the export nodes the first divergent value's stage producer stands for:
     * from the export producer of its outputs back to values matched in both
     * graphs (one node where nothing was fused; the fused group where a
     * fusion replaced several), export order; at most ONP_CHAIN_GROUP_MAX */
    size_t n_group;
    onp_chain_group_node *group; /* [n_group], owned (onp_chain_release), or NULL */
    /* the torch modules of the first divergent value, through the bundle's
     * module_map {module path: export value} (src/run/chain.c): those whose
     * value is its export value or one a node of its group computes (the
     * modules a fused node stands for); call order, at most
     * ONP_CHAIN_MAX_MODULES */
    size_t n_modules;
    char modules[ONP_CHAIN_MAX_MODULES][256];
    char note[512];          /* why it did not run or found nothing, or "" */
    size_t n_points;         /* with per_value: every compared value, stage node order */
    onp_chain_point *points; /* [n_points], owned (onp_chain_release), or NULL */
} onp_chain_divergence;

#define ONP_CHAIN_GROUP_MAX 256

typedef enum onp_chain_status {
    ONP_CHAIN_WITHIN = 0, /* "within": as accurate as its precision allows */
    ONP_CHAIN_BEYOND,     /* "beyond": some output leaves the stage envelope */
    ONP_CHAIN_ERROR,      /* "error": ONNX Runtime refused or lost the stage */
    ONP_CHAIN_STATUS_COUNT
} onp_chain_status;

/* "within", "beyond", "error"; "?" out of range. */
const char *onp_chain_status_name(onp_chain_status s);

typedef struct onp_chain_stage {
    char name[128];
    char model[1024];
    onp_chain_prec prec;
    int prec_given; /* 0: read from the graph */
    onp_chain_status status;
    char msg[1024];     /* ERROR: why */
    int ran;            /* run holds the judged fixtures */
    onp_run_result run; /* the run (verdict at float32 for a float32 stage) */
    size_t n_out;
    onp_chain_output *outs; /* [n_out], owned */
    onp_chain_divergence div;
    /* a stage beyond: what it is (ONP_CAUSE_REDUCED_PRECISION for a fp16, bf16
     * or int8 stage, ONP_CAUSE_GRAPH_OPTIMIZATION for a float32 one: a graph
     * rewrite) and the fix for its first divergent node (the converter's
     * node_block_list, the quantizer's nodes_to_exclude); ONP_CAUSE_COUNT and
     * "" otherwise */
    onp_cause cause;
    char fix[1024];
} onp_chain_stage;

typedef struct onp_chain {
    onp_bundle *bundle;
    onp_ort *ort;
    size_t n;                /* stages, the export first */
    onp_chain_stage *stages; /* [n], owned */
    int first_beyond;        /* the first stage not within (beyond or error), -1 */
    onp_run_verdict verdict; /* ERROR when a stage is ERROR, else FAIL when one is BEYOND */
} onp_chain;

// --- the chain's options by name: one parser for the tool and the API ------------

#define ONP_CHAIN_MAX_STAGES 32

/* --stage NAME=MODEL (repeatable, in order), --precision NAME=P,
 * --per-value.  Strings of MODEL are borrowed from argv; names are copied.
 * Initialise with memset 0. */
typedef struct onp_chain_args {
    onp_chain_stage_spec st[ONP_CHAIN_MAX_STAGES]; /* [n] */
    char names[ONP_CHAIN_MAX_STAGES][128];
    size_t n;
    const char *prec[ONP_CHAIN_MAX_STAGES]; /* --precision values as given, [n_prec] */
    size_t n_prec;
    int per_value;
} onp_chain_args;

/* argv[*i] as one of the chain's options ("--NAME VALUE" or
 * "--NAME=VALUE"): 1 set (*i moved past a separate value), 0 not one of
 * them, -1 with e (ONP_ERR_USAGE) for a bad or missing value. */
int onp_chain_args_parse(onp_chain_args *ca, int argc, const char *const *argv, int *i,
                         onp_error *e);

/* After parsing: at least one stage, and each --precision NAME=P onto the
 * stage of that name.  0, or -1 with e (ONP_ERR_USAGE) naming the value. */
int onp_chain_args_finish(onp_chain_args *ca, onp_error *e);

/* Open `where`, run its own export as stage 0 and then each of st[0..n)
 * in order, over every fixture with a->run's options (the lint and the
 * bisect of the export are check's business: not run here), judge each
 * stage at its precision and match the first divergent value of every
 * stage beyond its envelope.  per_value: match every stage that ran (a
 * stage within keeps no first divergent value) and keep every compared
 * value's numbers (div.points: SQNR along the graph).  Returns 0 with *c filled (a stage ORT
 * refuses is status ERROR, not a failure of the call); -1 with e for a
 * bad stage list (ONP_ERR_USAGE: an empty or repeated name, naming it), a
 * stage model or fixture that cannot be read (ONP_ERR_IO) or no memory.
 * Release c either way. */
int onp_chain_run(onp_chain *c, const onp_bundle_spec *where, onp_run_args *a,
                  const onp_chain_stage_spec *st, size_t n, int per_value, onp_error *e);

/* Free everything c owns; accepts a zeroed struct. */
void onp_chain_release(onp_chain *c);

/* The first divergent value of stage model `stage_model` (precision
 * limit `limit`, relative) against the export `orig` on fixture f: see
 * above; keep_points: every compared value into d->points.  Best effort: d->note says why nothing
 * was found. */
void onp_chain_match(onp_ort *ort, const onp_session_opts *so, const char *orig_model,
                     const char *stage_model, const onp_fixture *f, double limit, int keep_points,
                     onp_chain_divergence *d);

/* The chain document (docs/schemas/chain-1.json, onnxparity.chain/1). */
struct cJSON *onp_doc_chain(const onp_chain *c, const onp_run_opts *o);

#endif
