/*
 * adequacy.h — are the fixtures adequate for a parity verdict?  The capture
 * measures the fixture set (python/onnxparity/_adequacy.py: samples, shape
 * groups, per-input statistics, the classes the eager model predicts, the
 * samples near a decision boundary) and writes the measurements and their
 * flags into parity.json "adequacy" (schema "onnxparity.adequacy/1",
 * docs/formats.md).  This reads that section into a struct with enums and
 * decides the verdict: INADEQUATE when any flag is at level warn, ADEQUATE
 * otherwise, ABSENT when the bundle has no report (a plain ONNX test-data
 * folder, an older capture).  Unknown flag ids are kept (a newer capture)
 * at the level the file gives them.
 *
 * Worked example:
 *     onp_adequacy *a;
 *     if (onp_adequacy_read("bundle/parity.json", &a, &e)) return -1;
 *     printf("%s, %lld samples\n", onp_adequacy_verdict_name(a->verdict), (long long)a->samples);
 *     for (size_t i = 0; i < a->n_flags; i++) puts(a->flags[i].message);
 *     onp_adequacy_free(a);
 *
 * Ownership: *out and every string in it belong to the struct until
 * onp_adequacy_free.  No ONNX Runtime; reads one file (or none: a manifest
 * already open, onp_adequacy_from_manifest).
 */
#ifndef ONNXPARITY_ADEQUACY_H
#define ONNXPARITY_ADEQUACY_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/error.h"
#include "onnxparity/manifest.h"

typedef enum onp_adequacy_verdict {
    ONP_ADEQUACY_ABSENT = 0, /* no "adequacy" section: nothing measured */
    ONP_ADEQUACY_ADEQUATE,   /* measured, no warn-level flag */
    ONP_ADEQUACY_INADEQUATE, /* at least one warn-level flag */
    ONP_ADEQUACY_VERDICT_COUNT
} onp_adequacy_verdict;

typedef enum onp_adequacy_level {
    ONP_ADEQUACY_INFO = 0, /* worth knowing; the verdict stays adequate */
    ONP_ADEQUACY_WARN,     /* the fixtures do not support a parity verdict */
    ONP_ADEQUACY_LEVEL_COUNT
} onp_adequacy_level;

typedef struct onp_adequacy_flag {
    char *id; /* "synthetic-normal", "class-dominates", ... (docs/formats.md) */
    onp_adequacy_level level;
    char *message; /* one line, for people */
    char *where;   /* the input or output it is about, or "" */
} onp_adequacy_flag;

/* One classifier output's class coverage. */
typedef struct onp_adequacy_output {
    char *name;
    int64_t classes;           /* C of [N, C] */
    int64_t classes_predicted; /* classes the eager model predicts at least once */
    int64_t samples;
    int64_t near_boundary; /* samples whose top-1/top-2 margin is within the noise bound */
} onp_adequacy_output;

typedef struct onp_adequacy {
    onp_adequacy_verdict verdict;
    int64_t samples, fixtures, shape_groups, near_boundary;
    size_t n_flags;
    onp_adequacy_flag *flags; /* [n_flags] */
    size_t n_outputs;
    onp_adequacy_output *outputs; /* [n_outputs] */
} onp_adequacy;

/* Read parity.json at `path`.  A file without an "adequacy" key gives a
 * struct with verdict ABSENT (0 returned).  -1 with `e` filled: the file
 * cannot be read (ONP_ERR_IO), is not strict JSON or its "adequacy" is
 * malformed (ONP_ERR_FORMAT, naming the field), out of memory. */
int onp_adequacy_read(const char *path, onp_adequacy **out, onp_error *e);

/* The same from a manifest already open (manifest.h), which stays the
 * caller's; errors name onp_manifest_path(mf).  mf NULL (a bundle without
 * parity.json): *out NULL and 0 returned, no report to read. */
int onp_adequacy_from_manifest(const onp_manifest *mf, onp_adequacy **out, onp_error *e);

/* Free; accepts NULL. */
void onp_adequacy_free(onp_adequacy *a);

const char *onp_adequacy_verdict_name(onp_adequacy_verdict v); /* "absent", "adequate", ... */
const char *onp_adequacy_level_name(onp_adequacy_level l);     /* "info", "warn" */

/* The verdict's name back to the enum (as documents carry it): 0, or -1
 * for any other string (NULL too). */
int onp_adequacy_verdict_from_name(const char *name, onp_adequacy_verdict *out);

#endif
