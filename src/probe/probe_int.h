/*
 * probe_int.h — what the files of src/probe/ share (internal; the public
 * API is include/onnxparity/probe.h): the fixture set's layout, one
 * configuration's evaluation (evaluate.c), the optimizer search
 * (optsearch.c), the store of optimized graphs (optgraphs.c) and the
 * sweep's levels (sweep.c).
 *
 *   fixset.c     onp_fixset: the fixtures read once
 *   evaluate.c   one configuration: session options, run, judge
 *   sweep.c      the level sweep over every configuration, and its matrix
 *   optsearch.c  which optimizer breaks parity
 *   optgraphs.c  the graphs ORT optimized, saved and diffed
 *   graphdiff.c  what an optimizer did to a graph (onp_graph_diff_files)
 *   probes.c     determinism, shape groups, batch invariance
 */
#ifndef ONP_PROBE_INT_H
#define ONP_PROBE_INT_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/compare.h"
#include "onnxparity/ort.h"
#include "onnxparity/probe.h"
#include "onnxparity/tensor.h"

// --- the fixture set (fixset.c) ----------------------------------------------

typedef struct probe_fx {
    int index;
    size_t n_in, n_out;
    onp_tensor *in;    /* [n_in], unnamed: fed by position */
    onp_tensor *out;   /* [n_out] expected */
    onp_tensor *ref64; /* [n_out] the capture's float64 reference (count 0 when absent) */
    onp_tensor *tie;   /* [n_out] the tie-ordered reference (tie_ordered/output_K.pb, every
                          output's), or NULL: eager rerun with ONNX's tie order */
} probe_fx;

struct onp_fixset {
    size_t n;
    probe_fx *f; /* [n] */
};

// --- one configuration (evaluate.c) ------------------------------------------

/* What probe_eval_config() learns about one configuration. */
typedef struct probe_evalres {
    int opened;
    char error[512];
    int pass;
    int deterministic;
    int nondet_fixture;
    char nondet_output[256];
    double nondet_max_abs;
    onp_sweep_cell *cells; /* [n_cells] filled when not NULL */
    size_t n_cells;
    int *fix_status;   /* [fs->n] 0 pass, 1 fail, 2 error; when not NULL */
    char provider[64]; /* ORT's name of the provider the session used */
} probe_evalres;

/* The dtype's default tolerance with the caller's rtol/atol where given
 * (>= 0). */
onp_tol probe_tol_of(const onp_probe_opts *o, int32_t dtype);

/* Release t[0..n) (t may be NULL). */
void probe_release_all(onp_tensor *t, size_t n);

/* Run every fixture of fs on session s (twice when `twice`, comparing the
 * runs bytewise) and judge every output as check does; fills *r (its
 * cells and fix_status when the caller gave them).  A fixture that does not
 * run is a failure in r, not an error; -1 only when out of memory. */
int probe_eval_session(onp_session *s, const onp_fixset *fs, const onp_probe_opts *o, int twice,
                       probe_evalres *r, onp_error *e);

/* Open a session on `model` with `so` and evaluate it (probe_eval_session).
 * A session that cannot open is r->opened = 0 with its message in r->error,
 * not an error. */
int probe_eval_config(onp_ort *ort, const char *model, const onp_fixset *fs,
                      const onp_probe_opts *o, const onp_session_opts *so, int twice,
                      probe_evalres *r, onp_error *e);

/* 1 when `p` names ORT's CPU provider (NULL and "" do: the default). */
int probe_is_cpu(const char *p);

/* The session options of one configuration: the caller's, with `provider`
 * (provider options dropped for the CPU) and no optimized-model path. */
onp_session_opts probe_config_session(const onp_probe_opts *o, const char *provider);

/* *so = `base` plus the config entry `entry`; *cfg (the entry list *so
 * points at) is the caller's to free.  0, or -1 when out of memory. */
int probe_with_entry(const onp_session_opts *base, const char *entry, onp_session_opts *so,
                     const char ***cfg, onp_error *e);

// --- the sweep (sweep.c) -----------------------------------------------------

/* The levels swept, in order: disable, basic, extended, layout, all. */
extern const onp_ort_opt_level probe_sweep_levels[ONP_SWEEP_LEVELS];

// --- the optimizer search (optsearch.c) --------------------------------------

/* The optimizer search on the configuration `base` (where level all fails
 * and disable passes): sets r->searched, r->sessions_tried, r->culprit (the
 * minimal set, ';'-joined; empty when disabling every candidate does not
 * restore parity) and r->search_note.  0, or -1 on error. */
int probe_run_search(onp_ort *ort, const char *model, const onp_fixset *fs, const onp_probe_opts *o,
                     const onp_session_opts *base, onp_sweep_result *r, onp_error *e);

// --- the optimized graphs (optgraphs.c) --------------------------------------

/* Where the sweep's optimized models go: a temporary folder removed at the
 * end, or the caller's folder, kept. */
typedef struct probe_gstore {
    char dir[2048];
    int ready, keep;
    char **files; /* [n] every file written, removed at the end unless keep */
    size_t n;
    char *note; /* the result's graph_note */
    size_t note_size;
} probe_gstore;

/* Remove what the store wrote (unless it is the caller's folder, kept) and
 * free it. */
void probe_gstore_release(probe_gstore *g);

/* c->levels[hi].graph_diff = the graph ORT optimized at level hi against
 * the one at level lo (both saved into the store); left NULL, with the
 * store's note, when a graph cannot be saved or read. */
void probe_diff_levels(probe_gstore *g, onp_ort *ort, const char *model,
                       const onp_session_opts *base, const onp_probe_opts *o, onp_sweep_config *c,
                       size_t n_orts, int lo, int hi);

/* r->culprit_diff = the graph at level all against the graph at all with
 * r->culprit disabled: the nodes the culprit rewrote.  0, or -1 when out of
 * memory. */
int probe_culprit_graphs(probe_gstore *g, onp_ort *ort, const char *model,
                         const onp_session_opts *base, const onp_probe_opts *o, onp_sweep_config *c,
                         size_t n_orts, onp_sweep_result *r, onp_error *e);

/* A malloc'd copy of s, NULL when out of memory. */
static inline char *probe_dup_str(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d) strcpy(d, s);
    return d;
}

#endif /* ONP_PROBE_INT_H */
