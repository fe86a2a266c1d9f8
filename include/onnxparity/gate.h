/*
 * gate.h — parity as a CI gate: the release criteria, what `gate --record`
 * records from a run, and how `gate` judges a run against them.
 *
 * The criteria (schema "onnxparity.criteria/1", docs/gate.md) say, per
 * output, the tolerance, the top-1 agreement floor, the flip-rate bound,
 * the allowed mismatch fraction, the shapes a fixture set must hold, and
 * the limits max_abs / needed_rtol / needed_atol; bundle-wide, the fixture
 * count, the lint rules that must stay clean, and the environment the run
 * was recorded in.  Every rule of the gate lives here, once:
 *
 *   the criteria   onp_criteria_parse (strict: the first problem names the
 *                  field), onp_criteria_find, onp_gate_tol (the tolerance
 *                  each output is judged with);
 *   record         onp_gate_recordable (a bundle that fails, does not run or
 *                  has lint errors is no baseline), onp_gate_record (the
 *                  limits: measured x margin, floored by the noise envelope),
 *                  onp_criteria_to_json (the file);
 *   judge          onp_gate_judge: every regression with its numbers and
 *                  message, every criterion as checked (the worst value
 *                  against its limit), the environment drift under a policy
 *                  (onp_gate_drift_effect), and the verdict (an
 *                  onp_run_verdict: its exit code is onp_run_exit_code's).
 *
 * The tool (cli/cmd_gate.c) parses the command line, runs the bundle
 * (run.h), calls these and formats the result; it decides nothing.
 *
 * Worked example (error checks shortened; `run` is an onp_run_result of
 * the bundle, `lint` the lint it used, run.h):
 *
 *     // record: criteria from a healthy run
 *     onp_gate_refusal_why why;
 *     if (onp_gate_recordable(&run, &lint, 0, &why) == ONP_RUN_PASS) {
 *         onp_criteria rec;
 *         onp_gate_record(&run, &lint, sha256, 2.0, &rec, &e);
 *         cJSON *doc = onp_criteria_to_json(&rec);   // written to criteria.json
 *         ...
 *         onp_criteria_free(&rec);
 *     }
 *
 *     // gate: a later run against them (its tolerances: onp_gate_tol_fn)
 *     onp_criteria c;
 *     onp_criteria_parse(text, len, "criteria.json", &c, &e);
 *     onp_gate_result g;
 *     onp_gate_judge(&c, &run, &lint, ONP_GATE_DRIFT_WARN, &g, &e);
 *     for (size_t i = 0; i < g.n_reg; i++) printf("regressed: %s\n", g.reg[i].msg);
 *     return onp_run_exit_code(g.verdict);            // 0 pass, 1 fail, 4 error
 *     ...
 *     onp_gate_result_release(&g);  onp_criteria_free(&c);
 *
 * Pointers in results (fixture names, outputs, drift values) point into the
 * run and the criteria given: keep those alive while the result is read.
 * The criteria parser needs neither ONNX Runtime nor the run layer
 * (src/gate/criteria.c; the fuzzer fuzz/fuzz_criteria.c links it alone).
 */
#ifndef ONNXPARITY_GATE_H
#define ONNXPARITY_GATE_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/compare.h"
#include "onnxparity/env.h"
#include "onnxparity/error.h"
#include "onnxparity/judge.h"
#include "onnxparity/lint.h"
#include "onnxparity/noise.h"
#include "onnxparity/run.h"
#include "onnxparity/tensor.h"

struct cJSON;

// --- the criteria ------------------------------------------------------------------

#define ONP_CRITERIA_SCHEMA "onnxparity.criteria/1"
#define ONP_CRITERIA_MAX_SHAPES 64
/* The largest criteria file a reader should accept (the tool's cap). */
#define ONP_CRITERIA_MAX_FILE ((size_t)64 << 20)

/* The criteria of one output.  A limit < 0 is not checked. */
typedef struct onp_crit_out {
    char name[256];
    double rtol, atol;        /* the tolerance the output is judged with */
    double top1_min;          /* fraction of rows; < 0: not checked */
    double mismatch_frac_max; /* allowed fraction of elements outside the tolerance */
    double max_abs, needed_rtol, needed_atol; /* limits; < 0: not checked */
    double envelope_max;    /* the largest noise envelope recorded (noise.h); < 0: none (older
                               criteria, or no noise estimate): then only the limits apply */
    double max_flip_rate;   /* the flip rate's upper bound may not exceed this; < 0: not checked */
    long quiet_change_max;  /* fixtures allowed within tolerance but beyond their float64-measured
                               noise (onp_judgment_within_tol_beyond_noise); < 0: not checked
                               (criteria recorded before it) */
    double flip_confidence; /* the bound's confidence, in (0, 1); 0.95 when absent */
    size_t n_shapes;
    int rank[ONP_CRITERIA_MAX_SHAPES];                   /* [n_shapes] */
    int64_t dims[ONP_CRITERIA_MAX_SHAPES][ONP_MAX_RANK]; /* [n_shapes][rank[i]] */
    /* what was measured, written for people by onp_criteria_to_json and
     * never judged (the parser leaves them: -1, ONP_NOISE_NONE) */
    onp_noise_src noise_source; /* the weakest source of envelope_max */
    double measured_max_abs, measured_max_rel, measured_needed_rtol, measured_needed_atol;
} onp_crit_out;

typedef struct onp_criteria {
    char model_sha256[65]; /* recorded for people ("" when parsed: not judged) */
    long fixtures;         /* at least this many fixtures */
    double margin;         /* 0 when absent */
    size_t n_lint;
    char (*lint)[32]; /* [n_lint] rule ids that must have no finding */
    size_t n_out;
    onp_crit_out *outs; /* [n_out] */
    int has_env;        /* 1 when the criteria record an "environment" */
    onp_env env;        /* what they record (fields absent there are empty) */
    /* criteria that name deployment targets ("targets", docs/gate.md): one
     * entry per target, each with its own criteria; then the fields above
     * are empty (n_out 0) */
    size_t n_targets;
    struct onp_crit_target *targets; /* [n_targets] */
} onp_criteria;

/* One deployment target of the criteria: what runs the bundle, and the
 * criteria recorded under it. */
#define ONP_CRITERIA_MAX_TARGETS 8
#define ONP_CRIT_TARGET_MAX_OPTS 16
typedef struct onp_crit_target {
    char name[64];          /* letters, digits, '.', '_', '-'; unique in the file */
    char ort_library[1024]; /* "": the library the command line names (--ort-lib, else the
                               usual search); "env": the capturing environment's onnxruntime
                               (parity.json, followed as check follows it); else a path */
    char opt_level[16];     /* "": the command line's; else an opt-level name (ort.h) */
    char provider[64];      /* "": the command line's provider and its options; else this
                               provider with provider_opts (none: its defaults) */
    size_t n_provider_opts;
    char provider_opts[ONP_CRIT_TARGET_MAX_OPTS][512]; /* [n_provider_opts] "KEY=VALUE" */
    onp_criteria crit;                                 /* its criteria (no targets of its own) */
} onp_crit_target;

/* gate --target-provider NAME=PROVIDER and --target-provider-opt
 * NAME=KEY=VALUE: the provider (and its options) of the target `name` among
 * t[n].  0, or -1 with e (ONP_ERR_USAGE): no such target, a provider given
 * twice, an option without a provider, too many options. */
int onp_crit_target_provider(onp_crit_target *t, size_t n, const char *spec, int is_opt,
                             onp_error *e);

/* "NAME=LIBRARY[@OPT_LEVEL]" (gate --target) into t (its crit zeroed):
 * LIBRARY "bundled" (the command line's), "env" or a path.  0, or -1
 * with e (ONP_ERR_USAGE) saying what is wrong. */
int onp_crit_target_parse(const char *spec, onp_crit_target *t, onp_error *e);

/* Parse a criteria document of `n` bytes (no NUL needed).  `path` names it
 * in errors (may be NULL).  Strict: every required key present with the
 * right type, every number finite and >= 0, fractions in [0, 1], lint rule
 * ids that exist, shapes of whole dims.  On success (0) *c holds the
 * criteria and owns its arrays: free them with onp_criteria_free().  On
 * failure (-1) *c is zeroed (nothing to free) and `e` says why:
 * ONP_ERR_INPUT for a malformed document (not JSON, with the byte offset;
 * or the field and what is wrong), ONP_ERR_NOMEM when memory ran out.
 * Never reads past text[n]. */
int onp_criteria_parse(const char *text, size_t n, const char *path, onp_criteria *c, onp_error *e);

/* Free the arrays and zero *c.  Accepts NULL and a zeroed struct. */
void onp_criteria_free(onp_criteria *c);

/* The criteria of the output `name` (the first, when a name repeats), or
 * NULL (also when c is NULL). */
const onp_crit_out *onp_criteria_find(const onp_criteria *c, const char *name);

/* The tolerance output `name` (of `dtype`) is judged with: the criteria's
 * for an output they record; else the dtype's default (onp_tol_default)
 * with `rtol` and `atol` in place of its parts where >= 0 (what --record
 * was given).  c may be NULL (recording). */
onp_tol onp_gate_tol(const onp_criteria *c, const char *name, int32_t dtype, double rtol,
                     double atol);

/* onp_gate_tol as the run's tolerance hook (onp_run_opts.tol, with tol_ctx
 * pointing at an onp_gate_tol_ctx that outlives the run). */
typedef struct onp_gate_tol_ctx {
    const onp_criteria *criteria; /* NULL when recording */
    double rtol, atol;            /* < 0: the dtype's */
} onp_gate_tol_ctx;
onp_tol onp_gate_tol_fn(void *ctx, const char *name, int32_t dtype);

/* A fixture's name in regressions and reports: the last part of its
 * folder (a pointer into `dir`). */
const char *onp_gate_fixture_name(const char *dir);

// --- record ------------------------------------------------------------------------

/* Why a run may not be recorded as a baseline. */
typedef enum onp_gate_refusal {
    ONP_GATE_RECORDABLE = 0,
    ONP_GATE_REFUSE_NOT_RUNNING, /* a fixture ONNX Runtime refused or lost (even with
                                    allow_failing: there is nothing to measure) */
    ONP_GATE_REFUSE_FAILING,     /* fixtures fail: beyond tolerance and noise, a flipped label */
    ONP_GATE_REFUSE_LINT,        /* error-level lint findings */
    ONP_GATE_REFUSAL_COUNT
} onp_gate_refusal;

/* What the refusal is about, for its message (pointers into the run and
 * the lint given). */
typedef struct onp_gate_refusal_why {
    onp_gate_refusal why;
    const onp_fixture_verdict *fixture; /* NOT_RUNNING: the first that does not run;
                                           FAILING: the first that fails */
    const onp_output_verdict *output;   /* FAILING: that fixture's first failing output, or NULL */
    size_t failing;                     /* FAILING: how many fixtures fail */
    const onp_lint_finding *finding;    /* LINT: the first error-level finding */
    size_t lint_errors;                 /* LINT: how many */
} onp_gate_refusal_why;

/* May run r (with the lint it used) be recorded?  ONP_RUN_PASS: yes
 * (why->why RECORDABLE); ONP_RUN_FAIL: no, and *why says which rule
 * refused it, checked in this order: a fixture that does not run; unless
 * `allow_failing`, failing fixtures, then error-level lint findings.  The
 * refusal is a FAIL (exit 1) whatever the reason: nothing was recorded. */
onp_run_verdict onp_gate_recordable(const onp_run_result *r, const onp_lint_result *lint,
                                    int allow_failing, onp_gate_refusal_why *why);

/* The criteria recorded from run r (every fixture of the bundle) and its
 * lint: per output first met (compared somewhere), over every fixture that
 * compared it:
 *   rtol, atol            the tolerance it was compared with (the first
 *                         fixture's);
 *   top1_min              top-1 agreement as measured (-1 without top-K
 *                         rows), max_flip_rate / flip_confidence the
 *                         Clopper-Pearson bound at ONP_AGREEMENT_CONFIDENCE;
 *   mismatch_frac_max     the worst fraction measured;
 *   shapes                each distinct shape (at most 64);
 *   max_abs, needed_atol  worst x margin, floored by envelope_max so that
 *                         a harmless change inside the float noise never
 *                         regresses; needed_rtol worst x margin; -1 (null)
 *                         when not finite;
 *   envelope_max          the largest noise envelope, with its weakest
 *                         source (-1 without any noise estimate);
 *   quiet_change_max      fixtures within tolerance but beyond their noise,
 *                         as measured (0 on a healthy export);
 * bundle-wide the fixture count, the margin, the lint rules without any
 * finding, the environment r->env (has_env 1) and `model_sha256` (NULL:
 * ""; kept for people).  Does not check recordability (the caller asks
 * onp_gate_recordable first).  0, or -1 with e (ONP_ERR_NOMEM); *out is
 * then zeroed.  *out is the caller's to free with onp_criteria_free. */
int onp_gate_record(const onp_run_result *r, const onp_lint_result *lint, const char *model_sha256,
                    double margin, onp_criteria *out, onp_error *e);

/* The criteria document (what `gate --record` writes): schema,
 * model_sha256, environment, margin, fixtures, lint_clean, outputs with
 * their limits (null where < 0), noise_source and "measured".  The
 * caller owns it (cJSON_Delete); NULL when memory ran out. */
struct cJSON *onp_criteria_to_json(const onp_criteria *c);

// --- judge ---------------------------------------------------------------------------

/* One regression: a criterion a fixture (or the bundle) does not meet. */
typedef struct onp_gate_regression {
    const char *target;  /* the target's name (criteria with targets), or NULL */
    const char *fixture; /* onp_gate_fixture_name of its folder, or NULL for a bundle-wide check */
    const char *output;  /* or NULL */
    char check[32];      /* "fixtures", "error", "compare", "noise", "mismatch_frac", "max_abs",
                            "needed_rtol", "needed_atol", "missing", "quiet_change", "shapes",
                            "flip_rate", "top1", "lint", "environment"; "parity" from
                            onp_gate_record_failures */
    char item[64];       /* what a bundle-wide check is about: a rule id, a field, a shape */
    double value, limit; /* NaN: none */
    char msg[1200];      /* one line for people, with the numbers */
} onp_gate_regression;

/* One criterion as judged: the worst value measured against its limit over
 * every fixture it applies to, and whether any of them regressed (the
 * gate document's "checks" and the --html page's criteria table). */
typedef struct onp_gate_check {
    const char *target; /* the target's name (criteria with targets), or NULL */
    const char *output; /* or NULL for a bundle-wide criterion */
    char check[32];     /* the regression's `check` name */
    double measured;    /* the worst value judged (NaN stays NaN: it regressed) */
    double limit;
    int floor;     /* 1: the value must be >= limit (fixtures, shapes, top1), else <= */
    int regressed; /* 1 when some fixture (or the bundle) regressed on it */
} onp_gate_check;

/* How far a criterion is from its limit, as a ratio: limit / measured for a
 * bound max (2: the value may double before it regresses; infinity when it
 * measured 0), measured / limit for a bound min; below 1 it regressed.  NaN
 * when either number is unknown (NaN, or a limit not recorded). */
double onp_gate_margin(const onp_gate_check *k);

/* What a difference in the environment does (--env-drift). */
typedef enum onp_gate_drift_policy {
    ONP_GATE_DRIFT_WARN = 0, /* "warn": a runtime or export drift is a warning */
    ONP_GATE_DRIFT_FAIL,     /* "fail": ... a regression (check "environment") */
    ONP_GATE_DRIFT_POLICY_COUNT
} onp_gate_drift_policy;

/* "warn", "fail"; "?" out of range. */
const char *onp_gate_drift_policy_name(onp_gate_drift_policy p);
/* The name back: 0, or -1 for any other string (NULL too). */
int onp_gate_drift_policy_from_name(const char *name, onp_gate_drift_policy *out);

/* The effect of one drift under a policy. */
typedef enum onp_drift_effect {
    ONP_DRIFT_EFFECT_NOTE = 0, /* "note": expected to change (a re-export's sha256) */
    ONP_DRIFT_EFFECT_WARNING,  /* "warning" */
    ONP_DRIFT_EFFECT_FAILURE,  /* "failure": a regression */
    ONP_DRIFT_EFFECT_COUNT
} onp_drift_effect;

/* "note", "warning", "failure"; "?" out of range. */
const char *onp_drift_effect_name(onp_drift_effect f);
/* The name back: 0, or -1 for any other string (NULL too). */
int onp_drift_effect_from_name(const char *name, onp_drift_effect *out);

/* The drift policy: a NOTE kind (env.h) is a note whatever the policy;
 * any other drift is a warning under WARN, a failure under FAIL. */
onp_drift_effect onp_gate_drift_effect(const onp_env_drift *d, onp_gate_drift_policy p);

/* An environment value as reports show it: "unknown" when empty, hashes
 * cut to 12 digits, session config entries joined by "; " (into buf, of
 * n bytes).  Returns buf or a constant string. */
const char *onp_gate_env_shown(onp_env_field f, const char *v, char *buf, size_t n);

/* "FIELD: REC at record time, CUR now" into buf (n bytes). */
void onp_gate_drift_text(const onp_env_drift *d, char *buf, size_t n);

/* A run judged against criteria. */
typedef struct onp_gate_result {
    onp_run_verdict verdict;  /* ERROR when ORT lost a fixture, else FAIL when anything
                                 regressed, else PASS */
    size_t lost;              /* fixtures ONNX Runtime crashed or timed out on */
    onp_gate_regression *reg; /* [n_reg] in the order judged, owned */
    size_t n_reg;
    onp_gate_check *checks; /* [n_checks] each criterion once, owned */
    size_t n_checks;
    onp_env_drift drift[ONP_ENV_FIELD_COUNT]; /* [n_drift] recorded vs now, field order */
    size_t n_drift;
    onp_gate_drift_policy policy;
    size_t cap_reg, cap_checks; /* internal */
    int nomem;                  /* internal: an allocation failed */
} onp_gate_result;

/* Judge run r (its fixtures, r->lost, r->env) and the lint it used against
 * criteria c, in this order:
 *   fixtures      at least c->fixtures fixtures;
 *   per fixture   a fixture that does not run ("error"); per output the
 *                 criteria cover: not compared or another shape/dtype
 *                 ("compare"); beyond its float noise where the criteria
 *                 carry an envelope ("noise"); the mismatch fraction
 *                 (skipped for an output within its noise when the
 *                 criteria carry an envelope), max_abs, needed_rtol,
 *                 needed_atol against their limits (NaN is beyond any);
 *   per output    "missing" from the bundle; more quiet changes than
 *                 allowed (each marked fixture named); each recorded shape
 *                 present; the flip rate's bound at flip_confidence; top-1
 *                 agreement against its floor;
 *   lint          each rule recorded clean without a finding;
 *   environment   c->env against r->env (onp_env_compare); under
 *                 ONP_GATE_DRIFT_FAIL each runtime or export drift
 *                 regresses;
 * then the verdict.  0, or -1 with e (ONP_ERR_NOMEM); *out is safe to
 * release either way. */
int onp_gate_judge(const onp_criteria *c, const onp_run_result *r, const onp_lint_result *lint,
                   onp_gate_drift_policy policy, onp_gate_result *out, onp_error *e);

/* --record's own judgment, for its JUnit file: one "parity" regression per
 * output of r that does not pass (NaN value and limit; the message names
 * the output, its noise verdict, the note and the fixture); verdict FAIL
 * when there is one, ERROR when ORT lost a fixture.  0, or -1 with e
 * (ONP_ERR_NOMEM). */
int onp_gate_record_failures(const onp_run_result *r, onp_gate_result *out, onp_error *e);

/* Free what g owns and zero it; accepts a zeroed result. */
void onp_gate_result_release(onp_gate_result *g);

// --- the gate as one run: its options, the run, the judgment ------------------------

/* gate's own options (the ORT ones are the run's, run.h): parsed by
 * onp_gate_args_parse, checked together by onp_gate_args_finish. */
typedef struct onp_gate_args {
    const char *criteria; /* --criteria FILE: read when gating, written when recording */
    int record;           /* --record */
    int allow_failing;    /* --allow-failing: record a failing baseline on purpose */
    double margin;        /* --margin M (>= 1; 2 by default) */
    int margin_given;
    onp_gate_drift_policy drift; /* --env-drift warn|fail */
    int drift_given;
    int no_bisect; /* --no-bisect: no first divergent node on a failing gate */
    /* --target NAME=LIBRARY[@OPT_LEVEL] (recording; gating reads the targets
     * from the criteria) */
    size_t n_targets;
    onp_crit_target *targets; /* [n_targets]: onp_gate_args_release frees them */
} onp_gate_args;

/* Defaults: margin 2, the dtype's tolerances, drift warns, bisect on. */
void onp_gate_args_init(onp_gate_args *g);

/* Free the --target specs; accepts a zeroed struct. */
void onp_gate_args_release(onp_gate_args *g);

/* argv[*i] as one of gate's options above ("--NAME", "--NAME=VALUE" or
 * "--NAME VALUE"), or --rtol/--atol (the recording tolerance, parsed by
 * the run's table into a->run): 1 set (*i moved past a separate value), 0
 * not one of them, -1 with e (ONP_ERR_USAGE) for a bad or missing value. */
int onp_gate_args_parse(onp_gate_args *g, onp_run_args *a, int argc, const char *const *argv,
                        int *i, onp_error *e);

/* The options as a whole: --criteria given, and no option without effect
 * (--margin, --rtol, --atol, --allow-failing apply to --record only;
 * --env-drift and --no-bisect to gating only).  0, or -1 with e
 * (ONP_ERR_USAGE) naming the option. */
int onp_gate_args_finish(const onp_gate_args *g, const onp_run_args *a, onp_error *e);

/* The criteria file at `path`: a regular file of at most
 * ONP_CRITERIA_MAX_FILE bytes (a FIFO or a folder is refused without
 * blocking), noted as read (no output of the process may replace it),
 * parsed by onp_criteria_parse.  0, or -1 with e (ONP_ERR_IO unreadable,
 * ONP_ERR_INPUT malformed); *c zeroed then. */
int onp_criteria_read(const char *path, onp_criteria *c, onp_error *e);

/* The criteria document (onp_criteria_to_json) written atomically to
 * `path` under the output rule (outpath.h): never a partial file.  *text,
 * when not NULL, receives the document as written (free()).  0, or -1
 * with e. */
int onp_criteria_write(const onp_criteria *c, const char *path, char **text, onp_error *e);

/* A gate run: the bundle measured (check's run, its bisect only where a
 * criterion regressed), and either judged against the criteria file or
 * recorded.  Everything a report of it needs, owned here. */
typedef struct onp_gate {
    onp_check check;                 /* the run (run.h); check.ran says it ran */
    onp_criteria criteria;           /* gating: the file's; recording: the criteria to write */
    int have_criteria;               /* 1: criteria holds them */
    onp_gate_tol_ctx tol;            /* the run's tolerance hook reads it */
    onp_gate_result result;          /* gating: the judgment */
    onp_gate_refusal_why refusal;    /* recording: why the run is no baseline */
    onp_run_verdict verdict;         /* gating: result.verdict; recording: PASS when recordable */
    const onp_bisect_result *bisect; /* gating: the bisect that names the first divergent
                                        node where a criterion regressed, or NULL */
    /* several targets (--target, or criteria with "targets"): one gate per
     * target, run in order, each with its check, criteria and result; this
     * gate's verdict is the worst of theirs, its result every regression
     * and check of theirs (each naming its target), its criteria the file
     * (targets[k].crit empty: moved into the target's gate) */
    size_t n_targets;
    struct onp_gate *targets; /* [n_targets] */
    char target[64];          /* a target's gate: its name */
    char library[1024];       /* a target's gate: the library it ran ("" the usual search) */
} onp_gate;

/* The gate of `where` with the run's options a (its tolerance hook and
 * bisect are set here, pointing into g: g must not move while a is used) and gate's own ga: gating
 * reads ga->criteria first (a malformed file fails before anything runs), runs the bundle with the
 * criteria's tolerances, judges it (onp_gate_judge) and, where something regressed and bisect is
 * on, bisects with the run's plan and derives the causes again; recording runs it with
 * --rtol/--atol, asks onp_gate_recordable, and when recordable measures the criteria
 * (onp_gate_record; nothing is written: onp_criteria_write).  With targets
 * (ga's --target when recording, the file's "targets" when gating) each
 * target is that whole gate in its own gate g->targets[k], its library and
 * opt-level in place of a's ("env": onp_gate_env_library); recording
 * refuses unless every target is recordable, and g->criteria then holds
 * the targets with their criteria.  0 with g->verdict; -1 with e (a
 * target's error names it), g holding what got done (release it either
 * way). */
int onp_gate_run(onp_gate *g, const onp_bundle_spec *where, onp_run_args *a,
                 const onp_gate_args *ga, onp_error *e);

/* The capturing environment's ONNX Runtime library of bundle b, followed
 * as check follows it (run.h onp_env_target: an absolute path to a
 * libonnxruntime.so* outside the bundle whose sha256 parity.json
 * recorded) into lib (n bytes): 0, or -1 with why (wn bytes) saying why
 * not. */
int onp_gate_env_library(const onp_bundle *b, char *lib, size_t n, char *why, size_t wn);

/* Why g's run may not be recorded, one line for people ("not recording
 * criteria: 2 of 8 fixtures fail (first: ...)"), into buf (n bytes). */
void onp_gate_refusal_text(const onp_gate *g, char *buf, size_t n);

/* Free everything g owns; accepts a zeroed struct. */
void onp_gate_release(onp_gate *g);

#endif
