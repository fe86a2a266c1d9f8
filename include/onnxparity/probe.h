/*
 * probe.h — experiments that explain a disagreement: the sweep (a matrix of
 * ORT libraries x execution providers x optimization levels, with the
 * search for the one ORT optimizer that changes results and the diff of the
 * graphs ORT optimized) and the probes that need no eager truth
 * (determinism, batch invariance) or only the check's numbers (fixture
 * dependence, shape dependence).
 *
 * A bundle's fixtures are read once into an onp_fixset (inputs and
 * expected outputs, by position as the ONNX test-data layout feeds them);
 * the sweep and the probes then open as many sessions as they need on the
 * same tensors.  Nothing here prints: the CLI (cli/cmd_sweep.c,
 * cli/cmd_diagnose.c) formats the results; docs/diagnose.md states how
 * diagnose turns them into causes.
 *
 * Worked example (error checks shortened):
 *     onp_fixset *fs;  onp_sweep_result *sw;  onp_probe_result pr;  onp_error e;
 *     onp_fixset_load("bundle", &fs, &e);
 *     onp_probe_opts o;
 *     onp_probe_opts_init(&o);
 *     onp_sweep_run(ort, "bundle/model.onnx", fs, &o, &sw, &e);
 *     if (sw->culprit[0]) printf("disable %s restores parity\n", sw->culprit);
 *     for (size_t i = 0; sw->culprit_diff && i < sw->culprit_diff->n_added; i++)
 *         printf("it made %s\n", sw->culprit_diff->added[i].op_type);   // "FusedConv"
 *     onp_sweep_free(sw);
 *     const char *provs[] = {"cpu", "cuda"};                          // the provider axis
 *     o.providers = provs;
 *     o.n_providers = 2;
 *     onp_ort *libs[2] = {ort, ort130};                               // the library axis
 *     onp_sweep_run_libs(libs, 2, "bundle/model.onnx", fs, &o, &sw, &e);
 *     for (size_t c = 0; c < sw->n_configs; c++)                      // cuda: unavailable here
 *         printf("%s %s: %s\n", sw->configs[c].provider, sw->configs[c].ort_version,
 *                sw->configs[c].available ? "swept" : sw->configs[c].unavailable);
 *     if (sw->ep_disagree) printf("execution providers disagree: %s\n", sw->ep_note);
 *     onp_probe_run(ort, "bundle/model.onnx", fs, &o, &pr, &e);
 *     if (!pr.deterministic) printf("fixture %d is not reproducible\n", pr.det_fixture);
 *     onp_sweep_free(sw);
 *     onp_fixset_free(fs);
 */
#ifndef ONNXPARITY_PROBE_H
#define ONNXPARITY_PROBE_H

#include <stddef.h>

#include "onnxparity/compare.h"
#include "onnxparity/error.h"
#include "onnxparity/ort.h"

/* --- fixtures, read once --------------------------------------------------- */

typedef struct onp_fixset onp_fixset;

/* Read every test_data_set_K/input_I and output_J (.pb, .npy, .npz) under
 * `target`.  On success *out is the caller's (onp_fixset_free).
 * ONP_ERR_USAGE when nothing is to be compared (onp_testdata_require);
 * read errors as onp_tfile_read gives them. */
int onp_fixset_load(const char *target, onp_fixset **out, onp_error *e);
/* The same over the fixtures of several folders (onp_testdata_scan_dirs). */
int onp_fixset_load_dirs(const char *const *dirs, size_t n_dirs, onp_fixset **out, onp_error *e);
void onp_fixset_free(onp_fixset *fs); /* accepts NULL */
size_t onp_fixset_count(const onp_fixset *fs);
int onp_fixset_index(const onp_fixset *fs, size_t i); /* the K of test_data_set_K */

/* --- options ---------------------------------------------------------------- */

typedef struct onp_probe_opts {
    /* The configuration under test (the probes run with it; the sweep
     * replaces its opt_level and adds one config entry).  Strings stay the
     * caller's. */
    onp_session_opts session;
    double rtol, atol;  /* < 0: the dtype's default (onp_tol_default) */
    int export_fixture; /* the test_data_set index the graph was traced with
                           (parity.json traced_fixture); -1: the first one */
    int find_optimizer; /* sweep: search for the optimizer (default 1) */
    /* Optimizer names to try; NULL: onp_probe_default_optimizers(). */
    const char *const *candidates; /* [n_candidates] */
    size_t n_candidates;

    /* Sweep only.  The provider axis: providers to sweep ("cpu", "cuda",
     * ORT's full names, ...), each one a configuration of its own; NULL/0:
     * session.provider, and the CPU's beside it when that is another one
     * (the reference for execution-provider evidence).
     * session.provider_opts go to every provider but the CPU's (which takes
     * none). */
    const char *const *providers; /* [n_providers] */
    size_t n_providers;
    /* Optimized-graph diffs: 0 (default) only where a level breaks parity
     * (that level against the one below) and for the optimizer the search
     * names; 1 every level against the one below, in every configuration;
     * -1 never. */
    int diff_graphs;
    /* Keep the optimized models ORT saves in this folder (created when
     * missing); NULL: temporary files, removed before onp_sweep_run
     * returns. */
    const char *save_optimized_dir;
    /* Sweep only: run each fixture once per level instead of twice, so no
     * determinism check (levels report deterministic = -1, "not checked");
     * for timing against plain checks.  Default 0. */
    int once;
} onp_probe_opts;

/* rtol = atol = -1, export_fixture -1, find_optimizer 1, a zeroed session,
 * no provider list, diff_graphs 0, no folder for the optimized models. */
void onp_probe_opts_init(onp_probe_opts *o);

/* ORT's graph transformers and rewrite rules that can change CPU results,
 * by the names `optimization.disable_specified_optimizers` takes (ORT
 * ignores names it does not know, so a name only counts by its effect).
 * NULL-terminated, static. */
const char *const *onp_probe_default_optimizers(size_t *n);

/* --- optimized-graph diff ----------------------------------------------------- */

/* One node of a graph diff.  Strings are owned by the diff. */
typedef struct onp_gdiff_node {
    const char *name;    /* "" when unnamed */
    const char *op_type; /* "FusedConv", ... */
    const char *domain;  /* "" = ai.onnx; "com.microsoft", "com.microsoft.nchwc", ... */
    /* removed nodes: the added node that took its place (index into added[]),
     * -1 when none did (eliminated, or folded) */
    long replaced_by;
    int folded; /* removed nodes: every output is an initializer afterwards */
    /* added nodes: the removed nodes it (with the added nodes wired to it)
     * replaced, indices into removed[] */
    size_t *replaces; /* [n_replaces]; shared by every node of its group */
    size_t n_replaces;
    size_t group; /* added nodes: its group, 0 .. n_groups-1 */
} onp_gdiff_node;

/* What changed between two versions of one graph (the main graph only).
 * Nodes are matched by (domain, op_type, input names, output names), not by
 * node name or attributes: a node whose wiring changed counts as removed
 * and added.  Added nodes wired to each other through values the old graph
 * did not have (ReorderInput -> Conv -> ReorderOutput) form one group; the
 * group replaced the removed nodes reached by walking back from its outputs
 * through the producers of the old graph, stopping at the group's inputs. */
typedef struct onp_graph_diff {
    char from[96], to[96]; /* labels: "basic", "all", "all without X" */
    size_t nodes_from, nodes_to;
    onp_gdiff_node *removed; /* [n_removed], in the old graph's order */
    size_t n_removed;
    onp_gdiff_node *added; /* [n_added], in the new graph's order */
    size_t n_added;
    size_t n_groups;           /* groups of added nodes (one rewrite each) */
    char *from_file, *to_file; /* the saved models when kept, else NULL */
    void *mem_;                /* private: the storage of the strings */
} onp_graph_diff;

/* Diff the main graphs of two model files (e.g. saved by ORT at two
 * optimization levels: onp_session_opts.optimized_model_path).  Labels are
 * left empty.  On success *out is the caller's (onp_graph_diff_free).
 * Errors: as onp_model_open, ONP_ERR_NOMEM. */
int onp_graph_diff_files(const char *from_path, const char *to_path, onp_graph_diff **out,
                         onp_error *e);
void onp_graph_diff_free(onp_graph_diff *d); /* accepts NULL */

/* --- sweep ------------------------------------------------------------------ */

/* The levels swept, in this order. */
#define ONP_SWEEP_LEVELS 5

typedef struct onp_sweep_cell {
    int pass;         /* every fixture passes for this output */
    double max_abs;   /* worst over the fixtures (inf when a shape differs) */
    int fail_fixture; /* first failing fixture index, -1 */
} onp_sweep_cell;

typedef struct onp_sweep_level {
    onp_ort_opt_level level;
    int ran;            /* the session opened and every fixture ran */
    char error[512];    /* why not, when !ran */
    int pass;           /* every output of every fixture passes */
    int deterministic;  /* 1: every fixture ran twice gave identical bytes; 0: one
                           did not; -1: not checked (onp_probe_opts.once) */
    int nondet_fixture; /* first fixture that did not, -1 */
    char nondet_output[256];
    onp_sweep_cell *cells; /* [n_outputs] */
    /* The graph ORT optimized at this level against the one it optimized
     * at the level below; NULL when not computed (see diff_graphs) */
    onp_graph_diff *graph_diff;
} onp_sweep_level;

/* One column of the matrix: one provider of one ORT library. */
typedef struct onp_sweep_config {
    char requested[64];      /* the provider as asked ("cuda"), "cpu" by default */
    char provider[64];       /* ORT's name once a session opened, else as asked */
    size_t library;          /* index into the libraries swept */
    char ort_version[32];    /* "1.29.0" */
    char ort_library[1024];  /* the absolute path loaded */
    int available;           /* the library offers the provider and a session opened */
    char unavailable[512];   /* why not, when !available */
    int pass;                /* available, and every level passes and is deterministic */
    long first_failing;      /* as onp_sweep_result.first_failing, for this column */
    onp_sweep_level *levels; /* [ONP_SWEEP_LEVELS]; configs[0].levels is
                                onp_sweep_result.levels */
} onp_sweep_config;

typedef struct onp_sweep_result {
    size_t n_fixtures;
    size_t n_outputs;
    char **outputs; /* [n_outputs] graph output names */
    onp_sweep_level levels[ONP_SWEEP_LEVELS];
    long first_failing;    /* index into levels[] of the lowest level that fails
                              while the one below passes, -1 */
    int searched;          /* 1: `all` fails and `disable` passes: optimizers tried */
    int sessions_tried;    /* sessions opened by the search */
    char culprit[256];     /* the optimizer(s) whose disabling restores parity,
                              ';'-separated as ORT's config entry takes them, or "" */
    char search_note[512]; /* how the search ended */
    char providers[512];   /* the providers the library offers, ", "-separated */

    /* The matrix: libraries x providers (library-major).  configs[0] is the
     * configuration of levels[] above (the first library, the first
     * provider); the fields above describe it, except where said. */
    onp_sweep_config *configs; /* [n_configs] */
    size_t n_configs;
    long search_config;           /* the column the optimizer search ran on, -1 */
    onp_graph_diff *culprit_diff; /* the graph at `all` with the culprit disabled
                                     against without: the nodes it fused; or NULL */
    /* Execution providers: a provider that passes where another provider of
     * the same library fails (at some level, both ran).  The evidence for
     * the execution-provider cause. */
    int ep_disagree;
    char ep_provider[64]; /* the provider that disagrees with the CPU's (or
                             with the first one's when the CPU is not swept) */
    int ep_level;         /* index into levels[] where they disagree first */
    char ep_note[512];
    /* Libraries: the same provider passes with one library, fails with
     * another (at some level). */
    int lib_disagree;
    char lib_note[512];
    char graph_note[512]; /* why an optimized graph could not be saved or
                             read, or "" */
} onp_sweep_result;

/* Run every fixture at every level (disable, basic, extended, layout, all),
 * twice each for determinism, on the CPU or the provider of o->session.
 * When `all` fails and `disable` passes (and o->find_optimizer), bisect the
 * candidate list through optimization.disable_specified_optimizers at
 * `all` (';'-joined: ORT 1.29 splits on ';' only) down to a minimal set
 * whose disabling restores parity: usually one optimizer, sometimes two
 * that each change results.
 * A level whose session cannot open is recorded (ran = 0), not an error.
 * Returns 0 and *out (onp_sweep_free), or -1 on allocation failure. */
int onp_sweep_run(onp_ort *ort, const char *model_path, const onp_fixset *fs,
                  const onp_probe_opts *o, onp_sweep_result **out, onp_error *e);

/* onp_sweep_run over several ORT libraries (the library axis: one process
 * holds them side by side, see ort.h) and the providers of o->providers.
 * Every (library, provider) pair is a configuration swept at every level.
 * A provider a library does not offer, or whose sessions cannot open at any
 * level (no CUDA driver, ...), is a configuration marked unavailable with
 * the reason, never an error.  The optimizer search runs on the first
 * configuration where `all` fails and `disable` passes.  Optimized-graph
 * diffs as o->diff_graphs says; a graph that cannot be saved or read is
 * noted in graph_note, never an error.  n_orts >= 1. */
int onp_sweep_run_libs(onp_ort *const *orts, size_t n_orts, const char *model_path,
                       const onp_fixset *fs, const onp_probe_opts *o, onp_sweep_result **out,
                       onp_error *e);
void onp_sweep_free(onp_sweep_result *r); /* accepts NULL */

/* Recompute the evidence across configurations (ep_disagree, ep_provider,
 * ep_level, ep_note, lib_disagree, lib_note) from r->configs, library-major
 * with n_providers configurations per library: the providers of one library
 * against its CPU configuration (else its first available one), each
 * library's configuration of a provider against the first library's; a
 * disagreement is a level where both ran and one passes, the other fails.
 * onp_sweep_run_libs calls it; for results a caller assembles or edits.
 * Nothing is found when n_configs is not a multiple of n_providers. */
void onp_sweep_cross_check(onp_sweep_result *r, size_t n_providers);

/* --- probes ----------------------------------------------------------------- */

typedef struct onp_probe_result {
    int ran;                /* the session of the configuration under test opened */
    char error[512];        /* why not */
    onp_errcode error_code; /* and its kind: ONP_ERR_USAGE for a provider this ORT lacks
                               (exit 2, as in every command), ONP_ERR_RUNTIME when ORT
                               refuses the model (exit 4) */
    size_t n_fixtures;

    /* determinism: each fixture twice, bitwise */
    int deterministic;
    int det_fixture; /* first fixture that differs, -1 */
    char det_output[256];
    double det_max_abs;

    /* numbers: pass/fail of each fixture against its expected outputs */
    int fixtures_failed;
    int fixtures_error;     /* ORT refused the fixture (e.g. a baked reshape) */
    int first_fail_fixture; /* index of the first failing fixture, -1 */

    /* batch invariance: the samples of a batched fixture one at a time */
    int batch_tested;  /* a fixture with dim 0 > 1 on every input was found */
    int batch_fixture; /* the one split */
    int batch_pass;
    int batch_shape_error; /* a single sample was refused or changed shape */
    char batch_output[256];
    double batch_max_abs;
    char batch_note[512];

    /* shape dependence: failures exactly on the fixtures whose input shapes
     * differ from the traced fixture's */
    int n_shape_groups;     /* distinct input-shape signatures */
    int shape_dependent;    /* traced shape passes, every other shape fails */
    int shape_fail_fixture; /* a failing fixture of another shape, -1 */
    char shape_note[512];

    /* fixture dependence: fixtures of one shape, some pass, some fail */
    int fixture_dependent;
    int dep_pass_fixture, dep_fail_fixture; /* an example of each, -1 */
    char dep_note[512];
} onp_probe_result;

/* Run the probes with o->session.  Returns 0 with *out filled (ran = 0 and
 * error set when the session cannot open), -1 on allocation failure. */
int onp_probe_run(onp_ort *ort, const char *model_path, const onp_fixset *fs,
                  const onp_probe_opts *o, onp_probe_result *out, onp_error *e);

#endif
