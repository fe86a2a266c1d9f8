/*
 * run.h — the run: one bundle opened once, its fixtures run through one
 * ONNX Runtime session and judged with the noise rule, the causes derived,
 * the first divergent node bisected where something fails, and one verdict.
 *
 * Every command that judges fixtures (check, gate, diagnose, and any other
 * client: a Python binding, a service) is this run plus its own reading of
 * the result; none has a fixture loop, a bisect plan or an exit mapping of
 * its own.  Three pieces:
 *
 *   onp_bundle   what the run is about, read ONCE: the model (mapped), its
 *                sha256 (hashed on a second thread while ORT loads), the
 *                fixtures, and parity.json (one strict parse) with all that
 *                is derived from it: the noise book, the fixture adequacy,
 *                the traced fixture, the export environment, the lint's
 *                manifest.
 *   onp_run()    the fixture loop (shards, the traced fixture as evidence,
 *                top-K, the noise rule), the lint, the bisect when a fixture
 *                fails (onp_run_bisect_plan: the one builder of the plan, so
 *                every command that bisects names the same node), the
 *                causes, the verdict.
 *   the verdict  onp_run_verdict with one name table and the one mapping
 *                onto exit codes (onp_run_exit_code); errors map through
 *                onp_error_exit_code (error.h).
 *
 * Worked example (error checks shortened):
 *     onp_bundle_spec sp = {.bundle = "bundle/"};
 *     onp_bundle *b;       onp_error e;
 *     onp_bundle_open(&sp, &b, &e);
 *     onp_run_opts o;      onp_run_opts_init(&o);
 *     onp_ort *ort;        onp_session *s;   int upgraded;
 *     onp_run_session_open(b, &o, &ort, &s, &upgraded, &e);
 *     onp_run_result r;
 *     if (onp_run(b, ort, s, &o, &r, &e) == 0)
 *         printf("%s\n", onp_run_verdict_name(r.verdict));   // "pass"
 *     onp_run_result_release(&r);
 *     onp_session_close(s);  onp_ort_close(ort);  onp_bundle_close(b);
 *
 * The library never prints; the tool formats onp_run_result.
 */
#ifndef ONNXPARITY_RUN_H
#define ONNXPARITY_RUN_H

#include <stddef.h>

#include "onnxparity/adequacy.h"
#include "onnxparity/baseline.h"
#include "onnxparity/bisect.h"
#include "onnxparity/causes.h"
#include "onnxparity/env.h"
#include "onnxparity/error.h"
#include "onnxparity/judge.h"
#include "onnxparity/lint.h"
#include "onnxparity/manifest.h"
#include "onnxparity/model.h"
#include "onnxparity/ort.h"
#include "onnxparity/probe.h"
#include "onnxparity/tfile.h"

// --- the verdict and its exit code -------------------------------------------

/* The documented exit codes (docs/cli.md). */
typedef enum onp_exit {
    ONP_EXIT_PASS = 0,    /* parity holds / clean */
    ONP_EXIT_FAIL = 1,    /* parity fails / findings */
    ONP_EXIT_USAGE = 2,   /* usage or bad input */
    ONP_EXIT_IO = 3,      /* I/O or format error */
    ONP_EXIT_RUNTIME = 4, /* ONNX Runtime failure */
    ONP_EXIT_COUNT
} onp_exit;

/* What a run (or a command built on it) concludes; result documents carry
 * its name as "verdict". */
typedef enum onp_run_verdict {
    ONP_RUN_PASS = 0, /* "pass" */
    ONP_RUN_FAIL,     /* "fail": a fixture fails, a lint error, a regression */
    ONP_RUN_ERROR,    /* "error": ONNX Runtime lost a fixture (crash, timeout) */
    ONP_RUN_VERDICT_COUNT
} onp_run_verdict;

/* "pass", "fail", "error"; "?" out of range. */
const char *onp_run_verdict_name(onp_run_verdict v);

/* The name back to the enum: 0, or -1 for any other string (NULL too). */
int onp_run_verdict_from_name(const char *name, onp_run_verdict *out);

/* The exit code of a verdict: PASS 0, FAIL 1, ERROR 4.  The only place the
 * tool maps a verdict onto an exit status; errors use onp_error_exit_code. */
int onp_run_exit_code(onp_run_verdict v);

/* The verdict of fixtures judged at one configuration: ERROR when ORT lost
 * any (runtime set), else FAIL when any failed or `lint_errors` > 0, else
 * PASS. */
onp_run_verdict onp_run_verdict_of(const onp_fixture_verdict *fix, size_t n, size_t lint_errors);

/* The verdict of a lint alone: FAIL when it has an error-level finding. */
onp_run_verdict onp_run_verdict_of_lint(const onp_lint_result *r);

/* The verdict of a comparison with a baseline (baseline.h): FAIL when it
 * regressed or is mixed, else PASS. */
onp_run_verdict onp_run_verdict_of_baseline(onp_baseline_verdict v);

/* The verdict of tensor pairs compared (`compare`): FAIL when any of them
 * differs (`pairs_failed` > 0), else PASS. */
onp_run_verdict onp_run_verdict_of_compare(size_t pairs_failed);

/* The verdict of a sweep (probe.h): ERROR when no configuration could run
 * (ONNX Runtime loads the model nowhere), else FAIL when an available
 * configuration fails at some level, else PASS. */
onp_run_verdict onp_run_verdict_of_sweep(const onp_sweep_result *r);

/* The verdict a result document's "verdict" member names (and a check
 * document's fixture "status"): "pass", "fail", "error", and the bisect
 * document's own words "agrees" (PASS) and "diverges" (FAIL), as
 * onp_bisect_status_name writes them.  0, or -1 for any other word (a
 * bisect's "inconclusive" too: it says neither) and NULL. */
int onp_run_verdict_of_doc(const char *name, onp_run_verdict *out);

/* The verdict of several documents together (a page, a job), from their
 * "verdict" members verdicts[0..n-1]: the worst they name, ERROR over FAIL
 * over PASS; a name onp_run_verdict_of_doc does not know (or NULL) does
 * not decide; PASS when none does. */
onp_run_verdict onp_run_verdict_of_docs(const char *const *verdicts, size_t n);

// --- the bundle ----------------------------------------------------------------

/* What to open: a bundle folder, or a model and fixture folders. */
typedef struct onp_bundle_spec {
    const char *bundle;      /* BUNDLE (model.onnx, test_data_set_K/, parity.json), or NULL */
    const char *model;       /* with bundle NULL: the model */
    const char *const *data; /* with bundle NULL: [n_data] folders of fixtures */
    size_t n_data;
} onp_bundle_spec;

typedef struct onp_bundle onp_bundle;

/* Scan the fixtures (several folders numbered by position across them),
 * require one that holds an expected output (else ONP_ERR_USAGE, exit 2,
 * before anything else is read), map the model, read parity.json once when
 * the bundle has one, and derive the noise book and the adequacy from it.
 * The model's sha256 is computed on a second thread started right after
 * the next fork (ORT's worker) or on demand.  The strings of `spec` are
 * copied.  On error *out is NULL and e says which file. */
int onp_bundle_open(const onp_bundle_spec *spec, onp_bundle **out, onp_error *e);

/* The bundle folder (NULL with a model and folders), the model's path, and
 * the fixture folders as given (the bundle itself for a bundle). */
const char *onp_bundle_dir(const onp_bundle *b);
const char *onp_bundle_model_path(const onp_bundle *b);
const char *const *onp_bundle_data(const onp_bundle *b, size_t *n);

/* The model, mapped (valid until onp_bundle_close). */
const onp_model *onp_bundle_model(const onp_bundle *b);

/* Every fixture in order, indexed as onp_fixture.index says. */
const onp_testdata *onp_bundle_fixtures(const onp_bundle *b);

/* parity.json as parsed once, or NULL (none); what the run derives from it:
 * the noise book (never NULL: empty without a manifest), the adequacy (or
 * NULL), the fixture the export was traced on (or -1). */
const onp_manifest *onp_bundle_manifest(const onp_bundle *b);
const onp_noisebook *onp_bundle_noise(const onp_bundle *b);
const onp_adequacy *onp_bundle_adequacy(const onp_bundle *b);
int onp_bundle_traced_fixture(const onp_bundle *b);

/* The model file's sha256 in hex (64 characters): waits for the hashing
 * thread, or hashes now. */
const char *onp_bundle_sha256(onp_bundle *b);

/* Accepts NULL. */
void onp_bundle_close(onp_bundle *b);

// --- the run ------------------------------------------------------------------------

/* Progress, called before each fixture: k of n (from 1), its folder. */
typedef void (*onp_run_progress_fn)(void *ctx, size_t k, size_t n, const char *dir);

typedef struct onp_run_opts {
    /* ONNX Runtime: the library (NULL: the usual search, ort.h) and how
     * sessions are made (the caller keeps the strings) */
    const char *ort_lib;
    onp_session_opts session;
    /* the judgment */
    double rtol, atol; /* < 0: the dtype's default */
    onp_tol_fn tol;    /* per-output tolerance (--tol, criteria), or NULL: rtol/atol */
    void *tol_ctx;
    int atol_given;  /* the user chose atol (noise.h) */
    int topk;        /* 0 off, -1 auto, K */
    int strict;      /* the tolerance binds: within-noise fails */
    int no_estimate; /* no ORT-side noise estimate (no perturbed rerun) */
    /* which fixtures: --shard I/N (shard_n 0: every one); the traced
     * fixture is judged as evidence when the shard lacks it */
    long shard_i, shard_n;
    int no_lint; /* skip the lint (its errors fail the run) */
    /* the bisect, when a fixture fails by its numbers */
    int no_bisect;
    /* check --intermediates (issue 35): bisect a passing run too, against
     * the bundle's stored intermediates, so that a divergence the outputs
     * absorb is named (onp_bisect_absorbed); off by default: one more
     * instrumented run per fixture with intermediates */
    int intermediates;
    onp_bisect_ref reference; /* AUTO by default (see onp_run_bisect_plan) */
    const char *save_repro;   /* a folder for the local reproducer, or NULL */
    /* what a caller computed itself, or NULL: the lint (onp_run_lint, run
     * before ORT loads so its findings stand whatever ORT does; borrowed)
     * and diagnose's probes and sweep (evidence for the causes) */
    const onp_lint_result *lint;
    const onp_probe_result *probe;
    const onp_sweep_result *sweep;
    onp_run_progress_fn progress;
    void *progress_ctx;
    /* check: do not judge the capturing environment's onnxruntime as a second
     * target (onp_check_env_target) */
    int no_env_target;
} onp_run_opts;

// --- the run's options by name: the one parser -----------------------------------

/* The options of a run given by their command-line names, as the tool and
 * every binding give them: one table (src/run/args.c) parses them all, so
 * a value means the same whoever passes it.  Strings are borrowed (the
 * caller keeps them alive while the run uses them), except --tol names,
 * which are copied.  The struct holds the arrays run.session points into:
 * initialise it in place and never copy it. */
#define ONP_RUN_MAX_KV 64

typedef struct onp_run_tol {
    char name[256]; /* a graph output */
    onp_tol tol;
} onp_run_tol;

typedef struct onp_run_args {
    onp_run_opts run;                           /* what onp_run gets */
    const char *config[ONP_RUN_MAX_KV];         /* --session-config K=V */
    const char *provider_opts[ONP_RUN_MAX_KV];  /* --provider-opt K=V */
    const char *custom_op_libs[ONP_RUN_MAX_KV]; /* --custom-op-lib PATH */
    onp_run_tol tols[ONP_RUN_MAX_KV];           /* --tol NAME=RTOL,ATOL */
    size_t n_tols;
    /* the bisect command's own choices (onp_run_args_bisect_plan) */
    int fixture;                    /* --fixture K; -1: every fixture */
    size_t chunk;                   /* --chunk N; 0: automatic */
    unsigned long long max_exposed; /* --max-exposed-bytes; 0: the library's default */
} onp_run_args;

/* The groups of options (a command accepts the groups it runs). */
enum {
    ONP_RUN_ARGS_ORT = 1, /* how ORT runs: --ort-lib, --opt-level, --provider, ... */
    ONP_RUN_ARGS_TOL = 2, /* the tolerance: --rtol, --atol, --strict-tol, --no-noise-estimate */
    ONP_RUN_ARGS_JUDGE =
        4, /* the run of a bundle: --tol, --top-k, --shard, --no-lint, --no-bisect */
    ONP_RUN_ARGS_BISECT = 8,    /* bisect's: --fixture, --reference, --chunk, --max-exposed-bytes,
                                   --save-repro */
    ONP_RUN_ARGS_DIAGNOSE = 16, /* diagnose's: --rtol, --atol, --no-bisect, --save-repro */
    ONP_RUN_ARGS_TARGETS = 32,  /* check's second target: --no-env-target */
    ONP_RUN_ARGS_INTERNAL = 64, /* check's --intermediates */
    ONP_RUN_ARGS_CHECK = ONP_RUN_ARGS_ORT | ONP_RUN_ARGS_TOL | ONP_RUN_ARGS_JUDGE |
                         ONP_RUN_ARGS_TARGETS | ONP_RUN_ARGS_INTERNAL
};

/* onp_run_opts_init, and the session the tool defaults to: optimization
 * level all, CPU, isolated in a worker process, no time limit; the
 * tolerance hook reads --tol, then --rtol/--atol, then the dtype. */
void onp_run_args_init(onp_run_args *a);

/* The groups of option `name` (no leading dashes; a mask of the above, an
 * option may belong to several), 0 when it is none;
 * *takes_value 1 when it takes a value, 0 for a switch. */
int onp_run_args_lookup(const char *name, int *takes_value);

/* Set option `name` to `value` (NULL for a switch; a switch given a value
 * takes "1"/"true" to set it and "0"/"false" to leave it unset).  0, or -1
 * with e (ONP_ERR_USAGE) saying what the option wants: "--threads wants an
 * integer from 0 to 2147483647, not 'x'". */
int onp_run_args_set(onp_run_args *a, const char *name, const char *value, onp_error *e);

/* The bisect plan (onp_run_bisect_plan) with the bisect command's own
 * choices on top: one fixture, the chunking. */
void onp_run_args_bisect_plan(const onp_run_args *a, const onp_bundle_spec *where,
                              onp_bisect_opts *bo);

/* argv[*i] ("--NAME", "--NAME=VALUE", or "--NAME" then argv[*i + 1] as
 * its value) as an option of `groups`: 1 set (*i moved past a separate
 * value), 0 not one of them (nothing read), -1 with e (ONP_ERR_USAGE) for
 * a bad or missing value. */
int onp_run_args_parse(onp_run_args *a, int groups, int argc, const char *const *argv, int *i,
                       onp_error *e);

/* Each --tol NAME must be an output of m: -1 (ONP_ERR_USAGE) naming the
 * first that is not. */
int onp_run_args_check_outputs(const onp_run_args *a, const onp_model *m, onp_error *e);

/* Defaults: ORT's search, a zeroed session (onp_session_opts as the tool
 * initialises it is the caller's), dtype tolerances, top-1 auto, estimate
 * on, every fixture, lint on, bisect on with reference AUTO. */
void onp_run_opts_init(onp_run_opts *o);

/* THE bisect plan: the options every command that bisects uses, from the
 * run's options, so check, gate, diagnose and bisect name the same node:
 * the session, rtol/atol, strict, no_estimate (no ORT-side noise), every
 * fixture, the reference (AUTO, but EAGER at opt-level disable, where a
 * disable reference would compare a run with itself), save_repro, and the
 * model and folders when `where` is not a bundle.  bo's strings borrow from
 * o and where.  The bisect command adds its own choices (one fixture, the
 * chunking) on top; nothing else sets bisect options. */
void onp_run_bisect_plan(const onp_bundle_spec *where, const onp_run_opts *o, onp_bisect_opts *bo);

/* What b was opened on (its strings live as long as b). */
onp_bundle_spec onp_bundle_where(const onp_bundle *b);

/* Open one session on the bundle's model (the _model form: on any model,
 * `m` its view of model_path, or NULL to map it here), in the ONNX Runtime
 * *ort when the caller has one loaded, else loading it (*ort NULL on entry;
 * then it is the caller's to close, and NULL again on error): external
 * data checked by this tool's rules first, a legacy model (opset < 7)
 * upgraded to opset 7 in memory (*upgraded 1), --save-optimized's output
 * rule, a timeout needing the worker process (ONP_ERR_USAGE).  *s is the
 * caller's to close; NULL on error. */
int onp_run_session_open_model(const char *ort_lib, const onp_session_opts *so,
                               const char *model_path, const onp_model *m, onp_ort **ort,
                               onp_session **s, int *upgraded, onp_error *e);
int onp_run_session_open(onp_bundle *b, const onp_run_opts *o, onp_ort **ort, onp_session **s,
                         int *upgraded, onp_error *e);

typedef struct onp_run_result {
    onp_run_verdict verdict;  /* onp_run_verdict_of(fix, lint errors) */
    size_t n_total;           /* fixtures in the bundle */
    size_t n_fix;             /* fixtures judged (the shard's) */
    onp_fixture_verdict *fix; /* [n_fix], owned */
    double *secs;             /* [n_fix] seconds each took, owned */
    size_t failed;            /* fixtures not passing (FAIL or ERROR) */
    size_t lost;              /* fixtures ORT lost (runtime set) */
    int traced;               /* the traced fixture's index, or -1 */
    int traced_judged;        /* 1: traced_extra holds it (outside the shard) */
    onp_fixture_verdict traced_extra;
    onp_lint_result lint;      /* the run's own lint; zeroed with no_lint or o->lint given */
    size_t lint_errors;        /* error-level findings of the lint used */
    onp_bisect_result *bisect; /* the bisect that ran (any status but NO_REFERENCE), or NULL */
    onp_causes *causes;        /* owned; never NULL after success */
    onp_env env;               /* the fingerprint's export and runtime fields */
    /* a second target judged on the same fixtures (check's capture-environment
     * target), or NULL: evidence for runtime-version; owned by whoever set it */
    const onp_other_target *other;
    /* check's capture-environment target, checked or not, when parity.json
     * records one (for the document's "targets"), or NULL */
    const struct onp_env_target *env_target;
    /* the bundle's main graph (borrowed: valid while the bundle is open),
     * set by onp_run_fixtures: the causes' data flow (onp_evidence.graph) */
    const onp_graph *graph;
} onp_run_result;

/* The verdict of a diagnosis (the run with the probes' evidence): FAIL
 * when any cause explains a failure, a cause is strong on its own (a batch
 * that mixes samples, nondeterminism), or the lint has errors; else PASS. */
onp_run_verdict onp_run_diagnosis_verdict(const onp_run_result *r);

/* The verdict of a bisect on its own: FAIL when a value diverges or the
 * bisect is inconclusive (onp_bisect_inconclusive: the plain model fails
 * where nothing diverges), else PASS. */
onp_run_verdict onp_run_bisect_verdict(const onp_bisect_result *r);

/* The outputs the run will write, checked before anything runs: the
 * --save-repro folder under the rule for a new output folder
 * (onp_out_check_new_dir, outpath.h; the bundle and the fixture folders
 * are what the run reads).  onp_run_fixtures calls it first; a client that
 * does other work before (diagnose's probes) calls it earlier.  -1 with e
 * (ONP_ERR_USAGE naming the path). */
int onp_run_check_outputs(const onp_bundle *b, const onp_run_opts *o, onp_error *e);

/* The lint of b's model with its parity.json (the manifest parsed once).
 * -1 for a malformed manifest (named) or out of memory. */
int onp_run_lint(const onp_bundle *b, onp_lint_result *out, onp_error *e);

/* The run over session s (opened on b's model): onp_run_fixtures, then
 * onp_run_bisect when a fixture fails by its numbers (unless no_bisect),
 * then onp_run_causes.  A fixture ORT refuses or
 * loses is a judged ERROR fixture, not a failure of the call: -1 only when
 * a file cannot be read, the lint's manifest is malformed, or memory runs
 * out; r is then still safe to release. */
int onp_run(onp_bundle *b, onp_ort *ort, onp_session *s, const onp_run_opts *o, onp_run_result *r,
            onp_error *e);

// --- the check: a bundle opened, linted, run and judged ---------------------------

/* The capturing environment's ONNX Runtime as a second target of check
 * (issue 29): parity.json's "onnxruntime" record (the package, version,
 * library and sha256 the capture saw, docs/capture.md).  When that library
 * exists and is not the one under test (another sha256), check judges the
 * same fixtures under it with the same session options, bisects where it
 * fails, and a difference between the two is the cause runtime-version
 * (causes.h onp_other_target); the check fails when either target fails.
 * --no-env-target (no_env_target) keeps one target. */
typedef struct onp_env_target {
    int recorded;          /* parity.json names a library */
    int checked;           /* 1: the fixtures ran under it (run holds them) */
    char why_not[512];     /* recorded but not checked: why ("the same library", ...) */
    char package[64];      /* as recorded */
    char version[64];      /* as recorded, then as the library reports itself */
    char library[1024];    /* as recorded */
    char this_version[64]; /* the version of the target under test */
    char label[256];       /* "the capturing environment's onnxruntime 1.23.2" */
    onp_ort *ort;
    onp_session *session;
    onp_run_result run;
    onp_other_target other; /* what run.other points at: views into this struct */
} onp_env_target;

/* What `check` runs, whoever asks (the tool, the Python API): everything a
 * report of the run needs, owned here. */
typedef struct onp_check {
    onp_bundle *bundle;
    onp_ort *ort;
    onp_session *session; /* NULL after an error: load_failed says whether ORT refused */
    int upgraded;         /* the model was upgraded to opset 7 in memory */
    int load_failed;      /* 1: ONNX Runtime could not open a session (e says why) */
    int ran;              /* 1: run holds the judged run */
    onp_lint_result lint; /* linted before ORT loads: the findings stand whatever ORT does */
    onp_run_result run;
    onp_env_target env; /* the capturing environment's ORT (second target), when recorded */
} onp_check;

/* The second target of c (onp_env_target above) after c's run: 0 (run or
 * not, env.why_not says why not), -1 with e only when memory runs out or a
 * fixture file cannot be read.  ORT refusing the second library is not an
 * error: why_not holds its message. onp_check_run calls it. */
int onp_check_env_target(onp_check *c, onp_run_args *a, onp_error *e);

/* Open where, check --tol names against the model's outputs, lint (unless
 * no_lint), open the session, run (a->run; its lint is c->lint).  0 with
 * c->ran; -1 with e, c holding what got done (release it either way). */
int onp_check_run(onp_check *c, const onp_bundle_spec *where, onp_run_args *a, onp_error *e);

/* Free everything c owns; accepts a zeroed struct. */
void onp_check_release(onp_check *c);

/* The steps of onp_run, for a client that decides between them (gate
 * bisects only where a criterion regressed).  onp_run_fixtures fills every
 * field but bisect and causes (verdict included); onp_run_bisect bisects
 * with the plan when a fixture FAILs (a bisect that cannot run leaves
 * r->bisect NULL: best effort, never an error); onp_run_causes (re)derives
 * r->causes from everything r holds. */
int onp_run_fixtures(onp_bundle *b, onp_ort *ort, onp_session *s, const onp_run_opts *o,
                     onp_run_result *r, onp_error *e);
void onp_run_bisect(const onp_bundle *b, onp_ort *ort, const onp_run_opts *o, onp_run_result *r);
int onp_run_causes(const onp_run_opts *o, onp_run_result *r, onp_error *e);

/* The lint the run used: the caller's (o->lint) or its own. */
const onp_lint_result *onp_run_lint_of(const onp_run_opts *o, const onp_run_result *r);

/* The outputs of judged fixtures counted the way every report counts them:
 * outputs (and failed ones) of fixtures that ran; compared outputs within
 * their noise, vacuous, or within tolerance but beyond their noise; top-K
 * rows and agreement. */
typedef struct onp_run_tally {
    size_t outputs, outputs_failed;
    size_t within_noise, vacuous, quiet;
    long long topk_rows, top1_agree, topk_agree;
} onp_run_tally;
void onp_run_tally_of(const onp_fixture_verdict *fix, size_t n, onp_run_tally *t);

/* The bisect result's first divergent point, or NULL (no bisect, or it
 * found none). */
const onp_bisect_point *onp_run_first_divergent(const onp_run_result *r);

/* 1 when every fixture passes and the run's bisect (check --intermediates)
 * found a value beyond its noise that the outputs absorb
 * (onp_bisect_absorbed): the verdict stays pass, the causes ignore the
 * bisect, and check says ONP_BISECT_ABSORBED_WORDS with the node. */
int onp_run_absorbed(const onp_run_result *r);

/* Free everything r owns; accepts a zeroed result. */
void onp_run_result_release(onp_run_result *r);

#endif
