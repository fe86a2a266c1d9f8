/*
 * measure.h — run a bundle's fixtures the way `check` does and keep every
 * metric: `check` judges and prints them, `gate` holds them against release
 * criteria.  The fixture loop and the per-output judgment are the
 * library's (onp_judge_fixture, judge.h); this file only sets up the run:
 * testdata scan, lint, the noise book, one ORT session, the fingerprint.
 */
#ifndef ONP_CLI_MEASURE_H
#define ONP_CLI_MEASURE_H

#include "onnxparity/compare.h"
#include "onnxparity/env.h"
#include "onnxparity/judge.h"
#include "onnxparity/lint.h"
#include "onnxparity/tfile.h"
#include "ortopts.h"
#include "target.h"

typedef struct meas_result {
    char model[4096];
    char sha256[65];
    size_t n_fix;
    onp_fixture_verdict *fix; /* [n_fix], owned */
    double *secs;             /* [n_fix] seconds each fixture took, owned */
    onp_lint_result lint;
    onp_noisebook *noise; /* owned */
    cJSON *environment;   /* the environment fingerprint (report_environment), owned */
    onp_env env;          /* the same fields gate compares with the recorded ones */
    char why[1024];       /* when measure_run fails: the error, one line (for JUnit) */
} meas_result;

/* Measure the target (a bundle folder, or a model and data folders).
 * Returns 0, or the exit code after printing the error (2 nothing to
 * compare, 3 unreadable files, 4 ORT). */
int measure_run(const cli_ort *ort, const cli_target *t, const onp_judge_fixture_opts *jo,
                meas_result *out);

/* The bundle's noise book (TARGET/parity.json's "noise"; empty without
 * one, or when target is NULL).  Returns 0, or the exit code after printing the error. */
int measure_noisebook(const char *target, onp_noisebook **out);

/* Free everything; accepts a zeroed result. */
void measure_free(meas_result *r);

#endif
