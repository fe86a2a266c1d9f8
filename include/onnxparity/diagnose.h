/*
 * diagnose.h — the full investigation as the library runs it: the bundle
 * opened once and linted, the probes (determinism, batch invariance, shape
 * and fixture dependence), the sweep over optimization levels with the
 * optimizer search, then the run (run.h) with the probes and the sweep as
 * evidence, bisected with the run's plan where a fixture fails.  The tool's
 * `diagnose` and the Python API's diagnose() both call it; its document is
 * onp_doc_diagnose (doc.h).
 *
 *     onp_run_args a;  onp_run_args_init(&a);
 *     onp_bundle_spec where = {.bundle = "bundle/"};
 *     onp_diagnosis d;  onp_error e;
 *     if (onp_diagnosis_open(&d, &where, &a, &e) == 0 &&     // lint: before ORT loads
 *         onp_diagnosis_run(&d, &a, 0, NULL, NULL, &e) == 0)
 *         printf("%s\n", onp_run_verdict_name(d.run.verdict));
 *     onp_diagnosis_release(&d);
 *
 * The library never prints; `stage` (or NULL) hears one line per stage.
 */
#ifndef ONNXPARITY_DIAGNOSE_H
#define ONNXPARITY_DIAGNOSE_H

#include "onnxparity/probe.h"
#include "onnxparity/run.h"

typedef struct onp_diagnosis {
    onp_bundle *bundle;
    onp_fixset *fixtures; /* the probes' view of the same fixtures */
    onp_lint_result lint; /* linted before ORT loads */
    onp_ort *ort;
    onp_session *session;
    int upgraded;
    int load_failed;         /* 1: ONNX Runtime could not load the model (e says why) */
    onp_probe_result probe;  /* valid once the probes ran */
    onp_sweep_result *sweep; /* or NULL (no_sweep) */
    int ran;                 /* 1: run holds the judged run, its verdict the diagnosis' */
    onp_run_result run;
} onp_diagnosis;

/* Stage lines (e.g. "diagnose: probes (...)"), or NULL. */
typedef void (*onp_stage_fn)(void *ctx, const char *what);

/* Open where, check the outputs the run will write (--save-repro), check
 * external data by this tool's rules, lint.  0, or -1 with e (release d
 * either way). */
int onp_diagnosis_open(onp_diagnosis *d, const onp_bundle_spec *where, onp_run_args *a,
                       onp_error *e);

/* Load ORT, run the probes, the sweep unless no_sweep, then the run with
 * their evidence; the verdict is onp_run_diagnosis_verdict's.  -1 with e:
 * ORT refused the model (load_failed, e's code the session error's: a
 * provider ORT lacks is ONP_ERR_USAGE, a model it refuses ONP_ERR_RUNTIME),
 * or a file could not be read. */
int onp_diagnosis_run(onp_diagnosis *d, onp_run_args *a, int no_sweep, onp_stage_fn stage,
                      void *stage_ctx, onp_error *e);

/* Free everything d owns; accepts a zeroed struct. */
void onp_diagnosis_release(onp_diagnosis *d);

#endif
