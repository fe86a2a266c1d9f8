/*
 * measure.h — gate's run of a bundle: the library's run (run.h) without
 * its bisect, so that gate bisects only where a criterion regressed; the
 * fields gate reads, and the environment fingerprint as JSON.  No fixture
 * loop here: onp_run_fixtures is the one check and diagnose use too.
 */
#ifndef ONP_CLI_MEASURE_H
#define ONP_CLI_MEASURE_H

#include "onnxparity/compare.h"
#include "onnxparity/env.h"
#include "onnxparity/judge.h"
#include "onnxparity/lint.h"
#include "onnxparity/run.h"
#include "onnxparity/tfile.h"
#include "ortopts.h"
#include "target.h"

typedef struct meas_result {
    char model[4096];
    char sha256[65];
    size_t n_fix;             /* run.n_fix */
    onp_fixture_verdict *fix; /* run.fix: [n_fix], owned by run */
    double *secs;             /* run.secs: [n_fix] seconds each fixture took */
    onp_lint_result lint;     /* the lint (run before ORT loads), owned */
    cJSON *environment;       /* the environment fingerprint (report_environment), owned */
    onp_env env;              /* the same fields gate compares with the recorded ones */
    char why[1024];           /* when measure_run fails: the error, one line (for JUnit) */
    /* the run, kept open for the bisect */
    onp_bundle *bundle;
    onp_ort *ort;
    onp_run_opts ro;
    onp_run_result run;
} meas_result;

/* Measure the target (a bundle folder, or a model and data folders) with
 * the run's options `ro` (its lint and bisect fields are set here).
 * Returns 0, or the exit code after printing the error (2 nothing to
 * compare, 3 unreadable files, 4 ORT). */
int measure_run(const cli_ort *ort, const cli_target *t, const onp_run_opts *ro, meas_result *out);

/* Bisect where a fixture fails (run.h's plan) and derive the causes again
 * with it; best effort.  The first divergent point, or NULL. */
const onp_bisect_point *measure_bisect(meas_result *r);

/* Free everything; accepts a zeroed result. */
void measure_free(meas_result *r);

#endif
