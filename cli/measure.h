/*
 * measure.h — run a bundle's fixtures the way `check` does and keep every
 * metric: `check` judges and prints them, `gate` holds them against release
 * criteria.  measure_fixture is the one fixture loop of both.  A
 * client of the public API only: testdata scan, lint, one ORT session,
 * onp_compare and onp_compare_topk (top-1 on outputs shaped [N, C], C > 1).
 */
#ifndef ONP_CLI_MEASURE_H
#define ONP_CLI_MEASURE_H

#include "onnxparity/compare.h"
#include "onnxparity/lint.h"
#include "onnxparity/tfile.h"
#include "ortopts.h"

typedef struct meas_out {
    char name[256]; /* graph output name ("?" when the graph has none for output_K.pb) */
    int compared;   /* m, rank, dims valid */
    int pass;       /* compared, within tolerance, no top-k label flipped */
    onp_metrics m;
    int rank;
    int64_t dims[ONP_MAX_RANK];
    int has_topk;
    onp_topk tk;
    char note[1024]; /* why it failed when not by the numbers alone, or "" */
} meas_out;

typedef struct meas_fixture {
    char dir[1024];
    int index;
    int status;          /* 0 pass, 1 fail, 2 error (not run, or nothing to compare) */
    int error;           /* status == 2 */
    const char *runtime; /* with status 2: "crashed" / "timeout" when ONNX Runtime's
                            worker process died or was killed, else NULL */
    char msg[1024];      /* why, when error */
    size_t n_out;
    meas_out *outs; /* [n_out], owned */
} meas_fixture;

/* Tolerance for output `name` of dtype `dtype`. */
typedef onp_tol (*meas_tol_fn)(void *ctx, const char *name, int32_t dtype);

/* How one fixture is judged. */
typedef struct meas_opts {
    meas_tol_fn tol;
    void *ctx;
    int topk; /* 0 off, -1 top-1 on outputs shaped [N, C] with C > 1, K: top-K
                 on every rank-1/2 output; a flipped label fails the output */
} meas_opts;

/* Run fixture f through s and compare every output_K.pb with graph output
 * K, filling r (r->outs is the caller's to free).  A run that ORT refuses
 * or loses is not an error here: r->status 2 with r->msg.  Returns -1 (e
 * set) only when a fixture file cannot be read (exit 2/3). */
int measure_fixture(onp_session *s, const onp_fixture *f, const meas_opts *o, meas_fixture *r,
                    onp_error *e);

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
