/*
 * causes.h — one cause derivation for every command: from an evidence
 * record (lint findings; the judged fixtures; and, when they ran, the
 * probes, the sweep and bisect) to ranked causes {id, confidence, node,
 * evidence, fix}.  `check` derives with what it has (lint, fixtures,
 * bisect); `diagnose` adds probes and sweep to the same record and calls the
 * same function, so the two can differ only by that added evidence.
 *
 * The derivation is a table of rules (src/judge/causes.c, docs/diagnose.md
 * "The derivation"), each a function that reads the record and adds or
 * strengthens causes.  Contradictions veto: when a run is not reproducible,
 * the comparisons that assume reproducibility (the sweep's levels, bisect
 * against ORT at opt-level disable) are not used as evidence, and the cause
 * says so.  A cause at high or medium confidence fails the verdict.
 *
 * Worked example:
 *     onp_evidence ev = {.lint = &lint, .fixtures = res, .n_fixtures = n, .bisect = bis};
 *     onp_causes *cs;
 *     if (onp_causes_derive(&ev, &cs, &e) == 0)
 *         for (size_t i = 0; i < cs->n; i++) {
 *             const onp_cause_item *c = &cs->items[cs->order[i]];
 *             printf("%s (%s)\n", onp_cause_name(c->id), onp_confidence_name(c->confidence));
 *         }
 *     onp_causes_free(cs);
 *
 * The library never prints; the CLI formats these structs.
 */
#ifndef ONNXPARITY_CAUSES_H
#define ONNXPARITY_CAUSES_H

#include <stddef.h>

#include "onnxparity/bisect.h"
#include "onnxparity/error.h"
#include "onnxparity/judge.h"
#include "onnxparity/lint.h"
#include "onnxparity/probe.h"

typedef enum onp_confidence {
    ONP_CONFIDENCE_HIGH = 0,
    ONP_CONFIDENCE_MEDIUM,
    ONP_CONFIDENCE_LOW,
    ONP_CONFIDENCE_COUNT
} onp_confidence;

/* "high", "medium", "low"; "?" when out of range. */
const char *onp_confidence_name(onp_confidence c);

/* The name back to the enum (as documents carry it): 0, or -1 for any
 * other string (NULL too). */
int onp_confidence_from_name(const char *name, onp_confidence *out);

/* A second target judged on the same fixtures (run.h: the capturing
 * environment's ONNX Runtime when it is not the one under test): where one
 * passes and the other fails, the difference is the cause
 * `runtime-version`. */
typedef struct onp_other_target {
    const char *what;                    /* "the capturing environment's onnxruntime 1.23.2" */
    const char *version;                 /* its ONNX Runtime version */
    const char *library;                 /* its library path */
    const char *this_version;            /* the version of the target under test */
    const onp_fixture_verdict *fixtures; /* [n_fixtures] judged at the other target */
    size_t n_fixtures;
    const onp_bisect_result *bisect; /* its bisect against eager, or NULL */
} onp_other_target;

/* What is known.  Every pointer but lint may be NULL: that evidence was not
 * gathered (check has no probes or sweep). */
typedef struct onp_evidence {
    const onp_lint_result *lint;
    const onp_fixture_verdict *fixtures; /* [n_fixtures] judged at the configuration under test */
    size_t n_fixtures;
    const onp_probe_result *probe;
    const onp_sweep_result *sweep;
    const onp_bisect_result *bisect; /* a bisect that ran (any status) */
    /* the test_data_set index the export was traced on (parity.json
     * export_args.traced_fixture), or NULL: not known (a folder of fixtures).
     * Tracing makes the graph right for that input: a failure there is not
     * a size baked in or a branch fixed at trace time. */
    const int *traced_fixture;
    /* that fixture's verdict when it is not among `fixtures` (a shard of the
     * run judges it as evidence only, so shards derive what the whole run
     * derives), or NULL */
    const onp_fixture_verdict *traced_verdict;
    /* another ONNX Runtime judged on the same fixtures, or NULL */
    const onp_other_target *other;
    /* the model's main graph (borrowed), or NULL: the data flow the rules
     * that name a node for an output need (is that output computed from
     * it?); without it they fall back to what the findings alone say */
    const onp_graph *graph;
} onp_evidence;

#define ONP_CAUSE_MAX_EVIDENCE 12

typedef struct onp_cause_item {
    onp_cause id;
    int present;
    onp_confidence confidence;
    char node[256]; /* the graph node it points at, or "" */
    char fix[1024];
    size_t n_evidence;
    char evidence[ONP_CAUSE_MAX_EVIDENCE][600];
    double suggested_atol; /* float-noise, reduced-precision: the atol that covers it; else 0 */
    /* What it explains, where the rule that found it can tell: n_explained of
     * the n_failing failing fixtures (0 of 0: not stated).  A cause stated to
     * explain fewer than every failing fixture is never high. */
    size_t n_explained, n_failing;
} onp_cause_item;

/* A finding that explains no observed failure: a warning while everything
 * passes (a static batch every fixture matches, a risky op whose outputs
 * agree).  Listed apart, never a cause. */
typedef struct onp_latent {
    const onp_lint_finding *finding; /* into the evidence's lint result */
} onp_latent;

#define ONP_CAUSES_MAX_LATENT 64

typedef struct onp_causes {
    onp_cause_item items[ONP_CAUSE_COUNT]; /* by cause id */
    size_t n;                              /* present causes */
    int order[ONP_CAUSE_COUNT];            /* [n] their ids, most likely first */
    int strong;                            /* some cause at high or medium confidence */
    int numbers_fail;                      /* a fixture fails at the configuration under test */
    int any_fail;         /* ... or at a swept level or provider, or a run is not reproducible */
    int nondeterministic; /* some run was not reproducible (the veto above applied) */
    size_t n_latent;      /* latent findings (at most ONP_CAUSES_MAX_LATENT listed) */
    size_t n_latent_total;
    onp_latent latent[ONP_CAUSES_MAX_LATENT];
} onp_causes;

/* Derive the causes of `ev` into a new *out (onp_causes_free).  Returns 0,
 * or -1 with e set (out of memory, no lint result). */
int onp_causes_derive(const onp_evidence *ev, onp_causes **out, onp_error *e);

/* Accepts NULL. */
void onp_causes_free(onp_causes *cs);

/* The rules of the derivation in the order they run, for documentation and
 * tests: name i (i < onp_causes_rule_count()). */
size_t onp_causes_rule_count(void);
const char *onp_causes_rule_name(size_t i);

#endif
