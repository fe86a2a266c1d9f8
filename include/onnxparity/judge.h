/*
 * judge.h — the domain layer: one fixture loop and one per-output judgment,
 * used by check and gate (and by any other client: a Python binding, a
 * service), so that every command calls the same things pass, noise or a
 * defect.
 *
 * onp_judge_fixture() runs one test_data_set_K through an ORT session and
 * judges every output_J.pb against graph output J with the noise rule
 * (noise.h): the tolerance first, then the value's float noise — from the
 * fixture's float64 eager reference (test_data_set_K/reference64/output_J.pb,
 * written by the capture), else from the bundle's float64 statistics of
 * other fixtures scaled to this one (the noise book, read from parity.json),
 * else, when an output is beyond its tolerance, estimated on ORT's side by
 * running the fixture again with every floating input moved by one ulp.
 * Classifier outputs ([N, C], C >= 2, or every rank-1/2 output with an
 * explicit K) also get top-K agreement: a flipped label fails the output
 * whatever the noise says, and each flip is classed noise-driven when the
 * eager margin between the two labels is inside the noise envelope.
 *
 * Worked example (error checks shortened):
 *     onp_noisebook *nb;  onp_noisebook_read("bundle/parity.json", &nb, &e);
 *     onp_judge_fixture_opts o;  onp_judge_fixture_opts_init(&o);
 *     o.noise = nb;
 *     onp_fixture_verdict r;
 *     onp_judge_fixture(session, &td.sets[0], &o, &r, &e);
 *     for (size_t k = 0; k < r.n_out; k++)
 *         printf("%s %s\n", r.outs[k].name, onp_verdict_name(r.outs[k].j.verdict));
 *     onp_fixture_verdict_release(&r);
 *     onp_noisebook_free(nb);
 *
 * The library never prints; the CLI formats these structs.
 */
#ifndef ONNXPARITY_JUDGE_H
#define ONNXPARITY_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/compare.h"
#include "onnxparity/error.h"
#include "onnxparity/manifest.h"
#include "onnxparity/noise.h"
#include "onnxparity/ort.h"
#include "onnxparity/precision.h"
#include "onnxparity/tfile.h"

// --- the noise book: float64 statistics recorded by the capture --------------

typedef struct onp_noisebook onp_noisebook;

/* Read the "noise" section of a capture's parity.json.  A file without one
 * (an older bundle, another tool's) gives an empty book (*out non-NULL,
 * onp_noisebook_reference() NULL).  Errors: ONP_ERR_IO unreadable,
 * ONP_ERR_FORMAT not JSON or a malformed "noise" member (named). */
int onp_noisebook_read(const char *parity_json, onp_noisebook **out, onp_error *e);

/* The same from a manifest already open (manifest.h), which stays the
 * caller's; errors name onp_manifest_path(mf).  mf NULL (a bundle without
 * parity.json) gives an empty book. */
int onp_noisebook_from_manifest(const onp_manifest *mf, onp_noisebook **out, onp_error *e);

/* "float64" when the capture ran a float64 pass, else NULL; why not (or NULL). */
const char *onp_noisebook_reference(const onp_noisebook *nb);
const char *onp_noisebook_reason(const onp_noisebook *nb);

/* Fixtures the float64 pass covered. */
size_t onp_noisebook_covered(const onp_noisebook *nb);

/* 1 when the capture's determinism rerun found float32 eager not
 * reproducible (parity.json determinism.verdict "nondeterministic" or
 * "state-drift"): a
 * float64 statistic far from float32 eager is then a random op's doing, not
 * the value's ill-conditioning (noise.h, onp_judge_opts.eager_random). */
int onp_noisebook_eager_random(const onp_noisebook *nb);

/* Whether the capture found output `name` a classifier's logits
 * (parity.json adequacy.output_roles, docs/compare.md "Which outputs are
 * logits"): 1 yes, 0 no, -1 not recorded (or nb NULL). */
int onp_noisebook_logits(const onp_noisebook *nb, const char *name);

/* The name test of that rule, for outputs the capture did not class (a
 * plain ONNX test-data folder): 1 when a word of `name` says it holds
 * something other than class scores (boxes, coordinates, masks, features,
 * hidden states ...: the list is python/onnxparity/_roles.py NOT_WORDS). */
int onp_output_name_not_logits(const char *name);

/* The noise of output `name` in fixture `fixture`: src FLOAT64 when that
 * fixture was covered; else SCALED from the covered fixtures of the same
 * output (relative to scale: the caller's value statistics `vs` of this
 * fixture's expected tensor give the absolute numbers); else 0 (nothing
 * known).  Returns 1 when *out was filled. */
int onp_noisebook_lookup(const onp_noisebook *nb, int fixture, const char *name,
                         const onp_value_stats *vs, onp_noise *out);

/* Accepts NULL. */
void onp_noisebook_free(onp_noisebook *nb);

// --- one fixture ---------------------------------------------------------------

/* Tolerance for output `name` of dtype `dtype`. */
typedef onp_tol (*onp_tol_fn)(void *ctx, const char *name, int32_t dtype);

typedef struct onp_judge_fixture_opts {
    onp_tol_fn tol; /* NULL: onp_tol_default */
    void *tol_ctx;
    int topk;        /* 0 off; -1 top-1 on outputs shaped [N, C], C >= 2; K: top-K on every
                        rank-1/2 output */
    int strict;      /* the tolerance binds: within-noise fails */
    int atol_given;  /* the user chose atol (noise.h: vacuous values are then not re-judged) */
    int no_estimate; /* 1: never rerun with perturbed inputs (no ORT-side estimate) */
    const onp_noisebook *noise; /* or NULL */
} onp_judge_fixture_opts;

/* tol NULL, topk -1, not strict, estimate on, no book. */
void onp_judge_fixture_opts_init(onp_judge_fixture_opts *o);

typedef struct onp_output_verdict {
    char name[256]; /* graph output name ("?" when the graph has none for output_K.pb) */
    int compared;   /* m, j, rank, dims valid */
    int pass;       /* compared, j.pass, no top-k label flipped */
    onp_metrics m;  /* ORT vs eager under j.tol_used */
    onp_judgment j;
    int rank;
    int64_t dims[ONP_MAX_RANK];
    int has_topk;
    onp_topk tk;
    int64_t noise_flips; /* flipped rows whose eager margin is inside the envelope */
    double min_margin;   /* smallest eager top-1/top-2 margin over rows (has_topk) */
    int unreproducible;  /* the ORT-side estimate was refused: a one-ulp input change moved
                            the output beyond ONP_NOISE_SPREAD_MAX_REL of its scale */
    char note[1024];     /* why it failed when not by the numbers alone, or "" */
    /* A target computing in a lower precision (the fixture's precision,
     * lowered): the noise rule again with the noise and the floor scaled to
     * that precision (docs/diagnose.md, "Precision of a target"): the
     * float32 noise times eps(precision) / eps(dtype), the floor
     * ONP_NOISE_ULPS * eps(precision) * scale.  Evidence only: the verdict
     * stays the float32 one.  prec_envelope 0: not judged (a float32 target,
     * no noise estimate, not compared). */
    double prec_envelope; /* the scaled envelope_max */
    int prec_within;      /* the scaled noise test holds: as accurate as that precision allows */
} onp_output_verdict;

typedef enum onp_fixture_status {
    ONP_FIXTURE_PASS = 0,
    ONP_FIXTURE_FAIL,
    ONP_FIXTURE_ERROR, /* not run, or nothing to compare */
    ONP_FIXTURE_STATUS_COUNT
} onp_fixture_status;

/* "pass", "fail", "error". */
const char *onp_fixture_status_name(onp_fixture_status s);

/* The name back to the enum (as documents carry it): 0, or -1 for any
 * other string (NULL too).  src/judge/status.c. */
int onp_fixture_status_from_name(const char *name, onp_fixture_status *out);

/* The one-ulp perturbation rerun of a fixture (the ORT-side noise estimate,
 * docs/compare.md "Where the noise comes from"): whether it ran, and why not
 * when it did not.  It is asked for only when an output is beyond its
 * tolerance with no float64 statistic (reference file or noise book): no
 * other evidence can then say whether the gap is noise. */
typedef enum onp_rerun {
    ONP_RERUN_NOT_NEEDED = 0,  /* every output within its tolerance, or judged against float64 */
    ONP_RERUN_RAN,             /* ran: ORT ran the fixture twice */
    ONP_RERUN_OFF,             /* asked for, but turned off (onp_judge_fixture_opts.no_estimate) */
    ONP_RERUN_NO_FLOAT_INPUT,  /* asked for, but no floating input to move by one ulp */
    ONP_RERUN_FAILED,          /* ran, and ORT refused or lost the perturbed run */
    ONP_RERUN_FIXTURE_NOT_RUN, /* the fixture's own run failed: nothing was judged */
    ONP_RERUN_COUNT
} onp_rerun;

/* "not-needed", "ran", "off", "no-floating-input", "failed",
 * "fixture-not-run"; "?" out of range. */
const char *onp_rerun_name(onp_rerun r);

/* What a fixture's tie-ordered reference said (docs/compare.md, "Exact
 * ties"): NONE, none read (the fixture passed against eager, or the
 * capture wrote none: no exact tie that changed eager's outputs); MATCHED,
 * the fixture failed against eager and passed against eager rerun with
 * ONNX's tie order (the fixture passes; its outputs are judged against
 * that reference); DIFFERS, it failed against both (the fixture fails as
 * judged against eager). */
typedef enum onp_tie_order {
    ONP_TIE_ORDER_NONE,
    ONP_TIE_ORDER_MATCHED,
    ONP_TIE_ORDER_DIFFERS,
    ONP_TIE_ORDER_COUNT
} onp_tie_order;

/* "none", "matched", "differs"; "?" out of range. */
const char *onp_tie_order_name(onp_tie_order t);

typedef struct onp_fixture_verdict {
    char dir[1024];
    int index;
    onp_fixture_status status;
    const char *runtime; /* ERROR: "crashed"/"timeout" when ORT's worker died, else NULL */
    char msg[1024];      /* why, when ERROR */
    int dtype_refused;   /* ERROR: an input's dtype is not the one the graph declares (the
                            pre-run check refuses it whatever its shape) */
    int estimated;       /* the fixture was rerun with one-ulp perturbed inputs */
    onp_rerun rerun;     /* that rerun: ran, or why not */
    int ort_runs;        /* runs of ORT for this fixture: 1, or 2 with the rerun (one more
                            where the tie-ordered judgment reran it) */
    onp_tie_order tie_order; /* the tie-ordered reference's judgment */
    char in_shapes[256]; /* the inputs' shapes ("[2, 16] [2]"): fixtures with the same
                            string are one shape group */
    size_t n_out;
    onp_output_verdict *outs; /* [n_out], owned: onp_fixture_verdict_release */
    onp_precision precision;  /* what the session's target computes in (precision.h; FP32 when
                                 the session does not say) */
} onp_fixture_verdict;

/* Run fixture f through s and judge every output.  A run ORT refuses or
 * loses is not an error here: status ERROR with msg.  Returns -1 (e set)
 * only when a fixture file cannot be read or memory runs out; r is then
 * still safe to release. */
int onp_judge_fixture(onp_session *s, const onp_fixture *f, const onp_judge_fixture_opts *o,
                      onp_fixture_verdict *r, onp_error *e);

/* Free r->outs; accepts a zeroed struct. */
void onp_fixture_verdict_release(onp_fixture_verdict *r);

/* How many of fix[0..n) each tie_order holds: count[ONP_TIE_ORDER_MATCHED]
 * and so on (count zeroed here).  diagnose's document and its text both
 * report them. */
void onp_tie_order_counts(const onp_fixture_verdict *fix, size_t n,
                          size_t count[ONP_TIE_ORDER_COUNT]);

/* A near-tie reorder among one fixture's n outputs (want: eager's, got:
 * ORT's; outs[k] judged: compared, pass, m, j): when the failing outputs
 * (real numbers: float, integer, bool) are row-aligned with a sorted
 * floating rank-1 output that passes and holds at least two distinct
 * values (a detector's scores beside its boxes and labels), the rows that
 * do not match eager's in place are a permutation of each other (paired
 * by sorting; each eager row used once), each pair near-tied in the key
 * (within its envelope or atol), and each failing output, its rows put
 * back in eager's order, passes onp_judge_value again: those outputs pass
 * with a note (docs/compare.md).  O(n log n).  Nothing under `strict`.
 * check (onp_judge_fixture) and diagnose's probes both call it. */
void onp_judge_near_tie_reorder(const onp_tensor *want, const onp_tensor *got, size_t n,
                                onp_output_verdict *outs, int strict);

#endif
