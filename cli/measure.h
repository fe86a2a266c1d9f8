/*
 * measure.h — run a bundle's fixtures the way `check` does and keep every
 * metric, for commands that judge the numbers themselves (`gate`).  A
 * client of the public API only: testdata scan, lint, one ORT session,
 * onp_compare and onp_compare_topk (top-1 on outputs shaped [N, C], C > 1).
 */
#ifndef ONP_CLI_MEASURE_H
#define ONP_CLI_MEASURE_H

#include "onnxparity/compare.h"
#include "onnxparity/lint.h"
#include "ortopts.h"

typedef struct meas_out {
    char name[256]; /* graph output name ("?" when the graph has none for output_K.pb) */
    int compared;   /* m, rank, dims valid */
    onp_metrics m;
    int rank;
    int64_t dims[ONP_MAX_RANK];
    int has_topk;
    onp_topk tk;
} meas_out;

typedef struct meas_fixture {
    char dir[1024];
    int index;
    int error;      /* ORT could not run it, or it has no outputs */
    char msg[1024]; /* why, when error */
    size_t n_out;
    meas_out *outs; /* [n_out], owned */
} meas_fixture;

/* Tolerance for output `name` of dtype `dtype`. */
typedef onp_tol (*meas_tol_fn)(void *ctx, const char *name, int32_t dtype);

typedef struct meas_result {
    char model[4096];
    char sha256[65];
    size_t n_fix;
    meas_fixture *fix; /* [n_fix], owned */
    onp_lint_result lint;
    cJSON *environment; /* the environment fingerprint (report_environment), owned */
} meas_result;

/* Measure TARGET (a bundle folder).  Returns 0, or the exit code after
 * printing the error (2 no fixtures, 3 unreadable files, 4 ORT). */
int measure_run(const cli_ort *ort, const char *target, meas_tol_fn tol, void *ctx,
                meas_result *out);

/* Free everything; accepts a zeroed result. */
void measure_free(meas_result *r);

#endif
