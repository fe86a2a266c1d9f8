/*
 * bisect.h — find the first node where ONNX Runtime, at the configuration
 * under test, separates from its reference: eager PyTorch, or ORT itself at
 * ORT_DISABLE_ALL.
 *
 * A bundle made by the capture package (docs/capture.md) holds, per fixture,
 * test_data_set_K/intermediates/: the eager output of every module whose
 * ONNX value could be mapped, and index.json naming the value and module of
 * each.  onp_bisect_run() adds every such value as a graph output
 * (onp_model_add_outputs), opens an ORT session on the edited model, runs
 * each fixture once, and compares each exposed value with its eager
 * reference in topological order (the graph's node order), comparing as it
 * goes and releasing each ORT output once compared.  The first value that
 * fails the comparison names the first divergent node; the errors of that
 * node's inputs show whether the divergence starts there (inputs agree) or
 * may come from upstream (an input without a reference sits in between).
 *
 * Reference (o->reference): EAGER as above; DISABLE compares every node
 * output of the main graph with the same ORT at ORT_DISABLE_ALL (a second
 * session on the same edited bytes), so any ONNX test-data folder can be
 * bisected: the first node where an optimization level changes results;
 * AUTO is EAGER when any fixture has intermediates, else DISABLE.  With
 * EAGER and no intermediates the result has status ONP_BISECT_NO_REFERENCE
 * and one curve point per node output (what would be compared); ORT is not
 * run.
 *
 * Chunks (o->chunk, o->max_exposed_bytes): at most `chunk` values are
 * exposed per instrumented session; each session runs every fixture once
 * and its values are compared as they arrive, so one run holds the chunk's
 * values only.  Automatic: packed by declared shapes into the byte budget,
 * or, when shapes are not declared, sized from the largest input, then from
 * the largest value seen.  At ORT_DISABLE_ALL the result does not depend on
 * the chunking; above it a session may fuse values another exposes, which
 * moves errors by rounding only.
 *
 * Three checks follow (each can be turned off, none fails the bisection):
 *   local    the first divergent node alone on reference inputs
 *            (onp_bisect_local): local or inherited error;
 *   verify   the plain model's final outputs vs the instrumented sessions'
 *            (onp_bisect_verify): extra outputs can block fusions;
 *   fallback when the plain model fails and the instrumented one does not:
 *            bisect at ORT_DISABLE_ALL when the plain model fails there too
 *            ("disable"), else one exposed value per session, binary search
 *            ("single"), else "none".
 *
 * Noise (noise.h): every value is judged with the noise rule, not the
 * tolerance alone.  Its float noise comes from the index.json entry's
 * float64 statistics (the capture's reference64 pass), else, unless
 * o->no_noise, from a second run of the same session on one-ulp perturbed
 * inputs (an estimate refused when the spread exceeds
 * ONP_NOISE_SPREAD_MAX_REL of the value's scale: not reproducible).  So the
 * first divergent value is the first that leaves its own envelope; each
 * point's `jump` (its relative error over its node's compared inputs')
 * names where the error grows, and jump_point the largest.
 *
 * Over several fixtures, each value's curve point holds its worst error
 * over the fixtures that have a reference for it, and it passes only when
 * every fixture passes.
 *
 * Legacy models (default-domain opset < 7, no external data) are upgraded
 * to opset 7 in memory first, as `check` does; `upgraded` says so.  Models
 * with external data are written beside the original as a hidden temporary
 * file (ORT resolves external data relative to the model's path), opened by
 * path, and the file is removed at once.
 *
 * Worked example (error checks shortened):
 *     onp_ort *ort;  onp_error e;  onp_bisect_result *r;
 *     onp_ort_open(NULL, &ort, &e);
 *     onp_bisect_opts o;
 *     onp_bisect_opts_init(&o);
 *     o.fixture = 0;
 *     if (onp_bisect_run(ort, "bundle/", &o, &r, &e) == 0 && r->first >= 0)
 *         printf("%s\n", r->points[r->first].node);
 *     onp_bisect_free(r);
 *     onp_ort_close(ort);
 *
 * The library never prints; the CLI (cli/cmd_bisect.c) formats results.
 */
#ifndef ONNXPARITY_BISECT_H
#define ONNXPARITY_BISECT_H

#include <stddef.h>

#include "onnxparity/compare.h"
#include "onnxparity/error.h"
#include "onnxparity/judge.h"
#include "onnxparity/manifest.h"
#include "onnxparity/noise.h"
#include "onnxparity/ort.h"

/* What the configuration under test is compared against, node by node. */
typedef enum onp_bisect_ref {
    ONP_BISECT_REF_EAGER = 0, /* the bundle's eager intermediates; none: NO_REFERENCE */
    ONP_BISECT_REF_DISABLE,   /* the same ORT at ORT_DISABLE_ALL, every node output exposed */
    ONP_BISECT_REF_AUTO,      /* EAGER when any fixture has intermediates, else DISABLE */
    ONP_BISECT_REF_COUNT
} onp_bisect_ref;

/* "eager", "disable", "auto"; "?" when out of range. */
const char *onp_bisect_ref_name(onp_bisect_ref r);

/* Default memory budget of the automatic chunk size: 1 GiB of exposed values
 * per fixture run (both sessions' when the reference is DISABLE). */
#define ONP_BISECT_DEFAULT_BUDGET ((unsigned long long)1 << 30)

/* When value sizes are not declared, the first instrumented session exposes
 * budget / (largest fixture input) values but at most this many; each later
 * one budget / (largest value seen so far) values. */
#define ONP_BISECT_FIRST_CHUNK 64

typedef struct onp_bisect_opts {
    onp_session_opts session; /* how the ORT session is made (caller keeps its strings) */
    double rtol, atol;        /* < 0: the expected dtype's default (onp_tol_default) */
    int fixture;              /* test_data_set_K index to use; -1: every fixture */
    onp_bisect_ref reference; /* EAGER by default (the behaviour before the other two) */
    size_t chunk;             /* values exposed per instrumented session; 0: automatic */
    unsigned long long max_exposed_bytes; /* automatic chunk budget; 0: the default */
    int no_local;           /* 1: skip the local-vs-inherited rerun of the first divergent node */
    int no_verify;          /* 1: skip the plain-model run (instrumented_reproduces) */
    int no_fallback;        /* 1: never rerun at ORT_DISABLE_ALL when the check fails */
    int no_noise;           /* 1: no ORT-side noise estimate (no perturbed rerun) for fixtures whose
                               index.json has no float64 statistics: the tolerance alone decides */
    int strict;             /* 1: the tolerance binds (a value within noise still fails) */
    int eager_random;       /* float32 eager not reproducible (noise.h): 1 or 0 as the caller
                               knows it from the bundle it opened (the run passes its noise
                               book's); -1 (the default): read from `target`/parity.json */
    const onp_manifest *manifest; /* the bundle's parity.json as the caller opened it (borrowed,
                                     read during the call), or NULL: read from
                                     `target`/parity.json where the result needs it (the
                                     traced branch) */
    const char *save_repro; /* a new folder, or NULL: when the first divergent node's error
                               is local, write the node alone as an ONNX test-data folder (its
                               reference inputs and expected output, a README) there; made
                               under outpath.h's rule for folders (onp_out_mkdir_new), once,
                               for the result returned */
    /* [n_judged] the fixtures' verdicts at the outputs as the caller's run
     * judged them (onp_run_fixtures, with its tolerances and top-K), or
     * NULL: a bounded bundle's fixtures without intermediates that are not
     * among them are judged here (onp_judge_fixture), at the options'
     * tolerance and the default top-K; borrowed */
    const onp_fixture_verdict *judged;
    size_t n_judged;
    const char *model;      /* the model, or NULL: `target`/model.onnx */
    const char *const *data; /* [n_data] fixture folders (onp_testdata_scan_dirs), or NULL:
                                `target` itself */
    size_t n_data;
} onp_bisect_opts;

/* rtol = atol = -1, fixture -1, reference EAGER, automatic chunks, every
 * check on, a zeroed session (CPU, ORT defaults). */
void onp_bisect_opts_init(onp_bisect_opts *o);

typedef enum onp_bisect_status {
    ONP_BISECT_AGREES = 0,   /* every compared value passes */
    ONP_BISECT_DIVERGES,     /* `first` names the first value that fails */
    ONP_BISECT_NO_REFERENCE, /* no eager intermediates: nothing compared */
    ONP_BISECT_STATUS_COUNT
} onp_bisect_status;

/* "agrees", "diverges", "no-reference"; "?" when out of range. */
const char *onp_bisect_status_name(onp_bisect_status s);

/* One exposed value, in topological order: a point of the error curve. */
typedef struct onp_bisect_point {
    const char *value;   /* the ONNX value name */
    const char *node;    /* its producing node's name ("" when unnamed) */
    const char *op_type; /* and op_type */
    const char *module;  /* module path from index.json ("path#N" for call N > 0), or "" */
    size_t node_index;   /* position of the node in graph.node */
    int compared;        /* fixtures in which it was compared (0: no reference) */
    int pass;            /* compared and, in every such fixture, within its tolerance or its
                            noise envelope (noise.h) */
    double max_abs;      /* worst over the compared fixtures */
    double max_rel;
    int fail_fixture;    /* first fixture index in which it failed, -1 */
    onp_metrics m;       /* full metrics of the fixture with the largest max_abs */
    const char *note;    /* why it failed when not by numbers ("shape differs"), or "" */
    onp_verdict verdict; /* the noise rule's verdict in the fixture with the largest ratio */
    onp_noise noise;     /* that fixture's noise estimate (src NONE: the tolerance alone) */
    double envelope_max; /* its envelope (0 without noise) */
    double ratio;        /* worst gap / envelope over the fixtures (0 without noise) */
    double scale_max;    /* largest |reference| over the fixtures */
    double rel_err;      /* max_abs / scale_max: the error relative to the value's scale */
    double jump;         /* rel_err / max(rel_err of the node's compared inputs, 2^-23):
                            how much this node grew the error; 0 when not compared */
} onp_bisect_point;

/* Where an input of the first divergent node comes from. */
typedef enum onp_bisect_src {
    ONP_BISECT_SRC_EAGER = 0,   /* a compared value: `point` indexes points[] */
    ONP_BISECT_SRC_GRAPH_INPUT, /* fed from input_I.pb: identical on both sides */
    ONP_BISECT_SRC_INITIALIZER, /* a weight: identical on both sides */
    ONP_BISECT_SRC_CONSTANT,    /* computed from initializers and Constant nodes only
                                   (e.g. Identity of a shared weight): identical too */
    ONP_BISECT_SRC_NONE,        /* computed but no eager reference (unmapped) */
    ONP_BISECT_SRC_OMITTED      /* "" in the node's input list */
} onp_bisect_src;

/* "eager", "graph-input", "initializer", "constant", "no-reference", "omitted". */
const char *onp_bisect_src_name(onp_bisect_src s);

typedef struct onp_bisect_input {
    const char *name;
    onp_bisect_src src;
    long point;     /* index into points[] when src is EAGER, else -1 */
    int pass;       /* EAGER: that point's pass; GRAPH_INPUT/INITIALIZER/CONSTANT: 1; else 0 */
    double max_abs; /* EAGER: that point's; GRAPH_INPUT/INITIALIZER/CONSTANT: 0 */
    double max_rel;
} onp_bisect_input;

/* The first divergent node run alone: a model extracted from the graph
 * (onp_model_extract) whose inputs are the nearest values with a reference
 * (the node's own inputs when they have one; else further back, so a few
 * unmapped nodes may come along), fed with the REFERENCE values, run at the
 * configuration under test, its output compared with the reference.
 * Fails -> "local" (the node owns the error); passes -> "inherited" (its
 * inputs' differences, however small, carry the error in). */
typedef struct onp_bisect_local {
    int ran;        /* 0: not tried or could not run (note says why) */
    int local;      /* 1 local, 0 inherited (when ran) */
    int fixture;    /* the fixture it was run on (the first that failed) */
    double max_abs; /* the node alone vs the reference */
    double max_rel;
    long long mismatches;
    size_t n_nodes;       /* nodes in the extracted model (1: the node alone) */
    size_t n_fed;         /* its inputs fed with reference values */
    double input_max_abs; /* worst error of the node's compared inputs in the full run */
    onp_metrics m;
    char note[256];
} onp_bisect_local;

/* The final outputs of the plain model and of the instrumented sessions,
 * each compared with the reference outputs (eager: output_J.pb; DISABLE:
 * the plain model at ORT_DISABLE_ALL).  reproduces = both verdicts agree.
 * With DISABLE the plain model's outputs are also judged against the
 * fixtures' expected outputs (output_J.pb, as check judges them), where the
 * fixtures have any: expected_ran says so, expected_pass is that verdict. */
typedef struct onp_bisect_verify {
    int ran;
    int reproduces;
    int plain_pass, instrumented_pass;
    double plain_max_abs, plain_max_rel;
    double instrumented_max_abs, instrumented_max_rel; /* worst over the chunk sessions */
    int expected_ran, expected_pass;                   /* DISABLE: vs output_J.pb */
    double expected_max_abs, expected_max_rel;
    char note[256];
} onp_bisect_verify;

typedef struct onp_bisect_result {
    onp_bisect_status status;
    char model[1024]; /* path of the model.onnx bisected */
    char sha256[65];  /* of that model file */
    int upgraded;     /* legacy opset < 7 upgraded in memory */
    int external;     /* the model has external data (opened through a temp file) */

    size_t n_fixtures;  /* fixtures run (with a reference) */
    int *fixtures;      /* [n_fixtures] their test_data_set indices */
    size_t n_exposed;   /* values added as graph outputs */
    size_t n_unmatched; /* index.json values no main-graph node computes (skipped) */

    size_t n_points;
    onp_bisect_point *points; /* [n_points] topological order */
    long first;               /* index into points[] of the first failing value, -1 */
    size_t n_inputs;
    onp_bisect_input *inputs; /* [n_inputs] the inputs of points[first].node */

    onp_bisect_ref reference; /* EAGER or DISABLE: what the values were compared with */

    /* the noise rule (noise.h): a value diverges when it leaves its envelope */
    size_t n_noise_float64; /* fixtures whose values had float64 statistics (index.json) */
    size_t n_noise_ort;     /* fixtures whose noise was estimated by a perturbed rerun */
    long jump_point;        /* index into points[] of the largest jump, -1 */

    /* chunks: values exposed per instrumented session */
    size_t chunk;                       /* the most values one session exposed */
    size_t n_chunks;                    /* instrumented sessions (x2 with DISABLE) */
    unsigned long long budget;          /* the automatic budget used (bytes) */
    unsigned long long estimated_bytes; /* largest chunk's estimate; 0: sizes unknown */
    unsigned long long measured_bytes;  /* most bytes of exposed values one fixture run
                                           fetched (both sessions' with DISABLE) */
    int planned; /* chunks planned from declared shapes or --chunk (else adaptive) */

    onp_bisect_local local;   /* the first divergent node alone (when first >= 0) */
    char repro[1024];         /* the folder written for o->save_repro, or "" */
    char repro_note[512];     /* why none was written (when asked), or "" */
    onp_bisect_verify verify; /* does the instrumented model reproduce the mismatch */
    char fallback[16];        /* "" none tried; "disable": this result was bisected at
                                 ORT_DISABLE_ALL because the instrumented model at the
                                 level asked did not reproduce; "none": no fallback could */
    char fallback_note[256];

    /* bounded bundles (issue 19): fixtures asked for that store no
     * intermediates (the capture keeps them for a subset), and what that did
     * to the reference: "" when every fixture asked for has them */
    size_t n_without_intermediates;
    char reference_note[512];

    /* fixtures ONNX Runtime refused to run in the first instrumented session
     * (a shape the graph cannot take: check calls that a failure by shape):
     * not bisected; the others are.  refused[n_refused] their indices,
     * refused_msg ORT's first refusal */
    size_t n_refused;
    int *refused;
    char refused_msg[512];

    /* issue 35: a branch the trace fixed (parity.json's TracerWarning of a
     * tensor made a Python boolean) when the first divergence is in a fixture
     * other than the traced one: the branch left no node of its own, so the
     * first divergent node is the one after it; this names the line and the
     * module whose forward holds it (warnings[].modules).  found 0: none. */
    struct {
        int found;
        char where[600];   /* file:line */
        char code[256];    /* the source line */
        char modules[4][160]; /* the first paths of the module class ("" the model) */
        size_t n_modules;     /* all the paths the capture recorded */
        int traced_fixture;   /* the fixture the export traced */
    } branch;

    /* the session as made (onp_session_describe), for the fingerprint */
    char provider[64];
    onp_ort_opt_level opt_level;
    int intra_threads, inter_threads;
    char notes[256];

    void *priv; /* owner of the strings above (an arena) */
} onp_bisect_result;

/* Bisect the bundle at `target` (a folder holding model.onnx and
 * test_data_set_K/ folders), or o->model over the fixtures of o->data when
 * set (`target` then only names the run in errors).  `ort` is the library to run with (the caller
 * keeps ownership).
 *
 * On success returns 0 and *out is a new result the caller owns
 * (onp_bisect_free); status says whether a divergence was found, or that
 * no eager reference exists.  Errors:
 *   ONP_ERR_USAGE    no test_data_set_K folders; o->fixture names none;
 *                    o->save_repro refused by the output rule for folders
 *                    (onp_out_check_new_dir: it exists, is a link, or lies
 *                    inside `target` / an o->data folder / a fixture
 *                    folder), before anything runs;
 *   ONP_ERR_FORMAT   an unreadable index.json or reference tensor;
 *   ONP_ERR_INPUT    an index.json file name that leaves its folder;
 *   ONP_ERR_IO       missing files;
 *   ONP_ERR_RUNTIME  ORT refuses the instrumented model or a fixture.
 * On failure *out is NULL and nothing leaks (a temp model file included). */
int onp_bisect_run(onp_ort *ort, const char *target, const onp_bisect_opts *o,
                   onp_bisect_result **out, onp_error *e);

/* Release a result.  Accepts NULL. */
void onp_bisect_free(onp_bisect_result *r);

/* 1 when no value diverges yet the plain model's outputs fail: against the
 * reference (the instrumented model does not see the divergence, or the
 * path to the outputs is not mapped), or, bisected against ORT at opt-level
 * disable, against the fixtures' expected outputs (the model computes the
 * same at every level, and that is not what the fixtures expect); or when
 * no value diverges on the fixtures that ran while ORT refused others
 * (n_refused).  The verdict "inconclusive" (exit 1 in the CLI). */
int onp_bisect_inconclusive(const onp_bisect_result *r);

/* 1 when r is inconclusive only by the fixtures' expected outputs (bisected
 * against ORT at opt-level disable, which agrees with the plain model). */
int onp_bisect_inconclusive_by_expected(const onp_bisect_result *r);

/* The sentence check and bisect both write when a value inside the graph
 * leaves its noise envelope but the outputs do not (onp_bisect_absorbed). */
#define ONP_BISECT_ABSORBED_WORDS "internal divergence absorbed: outputs within noise"

/* Whether r's divergence does not reach the outputs: a first divergent
 * value, and the plain model's outputs pass against the reference (and the
 * fixtures' expected outputs, where judged) — the bundle check passes.  A
 * LayerNorm epsilon changed inside a branch scaled by 1e-6 does that: the
 * divergence is real, its effect below the outputs' noise.  The verdict
 * stays "diverges". */
int onp_bisect_absorbed(const onp_bisect_result *r);

#endif
