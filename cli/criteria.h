/*
 * criteria.h — the release criteria file of `onnxparity gate`
 * (schema "onnxparity.criteria/1", docs/gate.md): parsed strictly into a
 * plain struct.  The parser depends on cJSON and the public API only (the
 * lint rule table, onp_buf), never on ONNX Runtime, so the fuzzer
 * fuzz/fuzz_criteria.c links it alone.  `gate --record` writes the file
 * (cli/cmd_gate.c); this reads it.
 */
#ifndef ONP_CLI_CRITERIA_H
#define ONP_CLI_CRITERIA_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/env.h"
#include "onnxparity/error.h"
#include "onnxparity/tensor.h"

#define CRIT_SCHEMA "onnxparity.criteria/1"
#define CRIT_MAX_SHAPES 64

/* The criteria of one output. */
typedef struct crit_out {
    char name[256];
    double rtol, atol;
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
    int rank[CRIT_MAX_SHAPES];                   /* [n_shapes] */
    int64_t dims[CRIT_MAX_SHAPES][ONP_MAX_RANK]; /* [n_shapes][rank[i]] */
} crit_out;

typedef struct criteria {
    long fixtures; /* at least this many fixtures */
    double margin; /* 0 when absent */
    size_t n_lint;
    char (*lint)[32]; /* [n_lint] rule ids that must have no finding */
    size_t n_out;
    crit_out *outs; /* [n_out] */
    int has_env;    /* 1 when the file records an "environment" */
    onp_env env;    /* what it records (fields absent there are empty) */
} criteria;

/* Parse a criteria document of `n` bytes (no NUL needed).  `path` names it
 * in errors (may be NULL).  On success (0) *c holds the criteria and owns
 * its arrays: free them with criteria_free().  On failure (-1) *c is zeroed
 * (nothing to free) and `e` says why: ONP_ERR_INPUT for a malformed
 * document (not JSON, with the byte offset; or the field and what is
 * wrong), ONP_ERR_NOMEM when memory ran out.  Never reads past text[n]. */
int criteria_parse(const char *text, size_t n, const char *path, criteria *c, onp_error *e);

/* Read the file at `path` (at most 64 MiB) and parse it as above;
 * ONP_ERR_IO when it cannot be opened or read. */
int criteria_read(const char *path, criteria *c, onp_error *e);

/* Free the arrays and zero *c.  Accepts NULL and a zeroed struct. */
void criteria_free(criteria *c);

/* The criteria of the output `name`, or NULL (also when c is NULL). */
const crit_out *criteria_find(const criteria *c, const char *name);

#endif
