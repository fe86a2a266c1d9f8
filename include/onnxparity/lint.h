/*
 * lint.h — static checks of an exported model: the rules that name a
 * likely cause of an ONNX / PyTorch disagreement from the graph alone (and
 * from the capture manifest, parity.json, when there is one).
 *
 * A rule has a stable id ("ONP101"), a short name ("dropout-training"), a
 * severity, the cause it points at (the cause ids of DESIGN.md), a one-line
 * summary and a fix hint in PyTorch terms.  onp_lint_run() applies every
 * rule to an open model and collects findings: which rule, where (a node,
 * a graph input or output, a torch module, a source line), and a message
 * naming the values concerned.  Findings come sorted: model-level first,
 * then graph inputs by position, nodes in graph order (the nodes of a
 * subgraph right after the node holding it), graph outputs, and manifest
 * findings in the manifest's order; within one place, by rule id.
 *
 * Error-level findings are defects whatever the numbers say (a live Dropout
 * agrees with eager under ORT_ENABLE_ALL only because ONNX Runtime removed
 * it): `check` fails on them.  Warnings are risks to confirm with evidence;
 * infos are notes.  Library code never prints: the CLI (cli/cmd_lint.c)
 * writes text, JSON and SARIF.
 *
 * Worked example:
 *     onp_lint_result r; onp_error e;
 *     onp_lint_opts o = {.manifest = "bundle/parity.json"};  // or .manifest_doc = mf
 *     if (onp_lint_run(model, &o, &r, &e) != 0) { print e; }
 *     for (size_t i = 0; i < r.n; i++)
 *         printf("%s %s: %s\n", r.findings[i].rule->id, r.findings[i].loc.name,
 *                r.findings[i].message);
 *     if (r.counts[ONP_LINT_ERROR]) fail();
 *     onp_lint_result_free(&r);
 */
#ifndef ONNXPARITY_LINT_H
#define ONNXPARITY_LINT_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/error.h"
#include "onnxparity/manifest.h"
#include "onnxparity/model.h"

/* Ordered: a higher value is more severe. */
typedef enum onp_lint_severity {
    ONP_LINT_INFO = 0,
    ONP_LINT_WARNING,
    ONP_LINT_ERROR,
    ONP_LINT_SEVERITY_COUNT
} onp_lint_severity;

/* The causes of DESIGN.md; onp_cause_name() gives the stable JSON ids. */
typedef enum onp_cause {
    ONP_CAUSE_TRAINING_MODE = 0,
    ONP_CAUSE_BAKED_SHAPE,
    ONP_CAUSE_TRACED_CONTROL_FLOW,
    ONP_CAUSE_OP_SEMANTICS,
    ONP_CAUSE_GRAPH_OPTIMIZATION,
    ONP_CAUSE_EXECUTION_PROVIDER,
    ONP_CAUSE_RUNTIME_VERSION, /* another ONNX Runtime version judges the same fixtures otherwise */
    ONP_CAUSE_NONDETERMINISM,
    ONP_CAUSE_REFERENCE,
    ONP_CAUSE_STATE_MUTATION,    /* the forward writes its inputs or its own state */
    ONP_CAUSE_REDUCED_PRECISION, /* a cast to float16/bfloat16 inside the graph */
    ONP_CAUSE_INPUT_DTYPE,       /* a fixture feeds an input in another dtype than declared */
    ONP_CAUSE_FLOAT_NOISE,       /* no defect: beyond the tolerance, inside the float noise */
    ONP_CAUSE_UNKNOWN,
    ONP_CAUSE_COUNT
} onp_cause;

/* "error", "warning", "info"; "?" when out of range. */
const char *onp_lint_severity_name(onp_lint_severity s);

/* The name back to the enum (as documents carry it): 0, or -1 for any
 * other string (NULL too). */
int onp_lint_severity_from_name(const char *name, onp_lint_severity *out);

/* "training-mode", "baked-shape", ..., "state-mutation", "reduced-precision", "input-dtype",
 * "float-noise", "unknown"; "?" when out of range. */
const char *onp_cause_name(onp_cause c);

/* One rule.  Every string is static. */
typedef struct onp_lint_rule {
    const char *id;   /* "ONP101": stable, never reused */
    const char *name; /* "dropout-training": stable, kebab-case */
    onp_lint_severity severity;
    onp_cause cause;
    const char *summary; /* one line: what the rule looks for */
    const char *fix;     /* one line: how to fix it, in PyTorch terms */
} onp_lint_rule;

/* The rule table, sorted by id.  onp_lint_rule_at(i) for i < count. */
size_t onp_lint_rule_count(void);
const onp_lint_rule *onp_lint_rule_at(size_t i); /* NULL when i >= count */

/* The rule with this id or name, or NULL. */
const onp_lint_rule *onp_lint_rule_find(const char *id_or_name);

/* Where a finding points. */
typedef enum onp_lint_loc_kind {
    ONP_LINT_LOC_MODEL = 0, /* the model as a whole (opset, manifest summary) */
    ONP_LINT_LOC_INPUT,     /* a graph input: name, index = position */
    ONP_LINT_LOC_OUTPUT,    /* a graph output: name, index = position */
    ONP_LINT_LOC_NODE,      /* a node: name, op_type, index in its graph, graph */
    ONP_LINT_LOC_MODULE,    /* a torch module path (from parity.json): name */
    ONP_LINT_LOC_SOURCE     /* a line of Python source (from parity.json): file, line */
} onp_lint_loc_kind;

/* "model", "input", "output", "node", "module", "source". */
const char *onp_lint_loc_kind_name(onp_lint_loc_kind k);

/* Every string is owned by the result and never NULL ("" when absent). */
typedef struct onp_lint_location {
    onp_lint_loc_kind kind;
    const char *graph;   /* nodes: "" in the main graph, else the path of the subgraph,
                            "NODE/ATTR" per level (NODE = name, or op_type#index) */
    const char *name;    /* node, value or module name */
    const char *op_type; /* nodes: the operator ("Dropout"); with domain "dom::Op" */
    int64_t index;       /* node index in its graph, input/output position; -1 otherwise */
    const char *file;    /* kind SOURCE: the Python file */
    int64_t line;        /* kind SOURCE: the line; -1 otherwise */
} onp_lint_location;

typedef struct onp_lint_finding {
    const onp_lint_rule *rule; /* into the static table */
    onp_lint_location loc;
    char *message;  /* owned; one line naming the values concerned */
    uint64_t order; /* sort key (place in the model); internal, but stable */
} onp_lint_finding;

typedef struct onp_lint_result {
    onp_lint_finding *findings; /* [n], sorted (see the top of this file) */
    size_t n, cap;
    size_t counts[ONP_LINT_SEVERITY_COUNT]; /* findings per severity */
    int64_t opset;                          /* default-domain opset of the model, -1 if none */
    int manifest_read;                      /* 1 when a parity.json was read */
    size_t tracer_warnings; /* TracerWarning records in parity.json's "warnings", each repeat
                               and benign one counted (the distinct, relevant ones are ONP301
                               findings) */
} onp_lint_result;

typedef struct onp_lint_opts {
    /* parity.json written by the capture package (python/onnxparity), or
     * NULL.  Unknown keys are ignored, missing keys are fine; a file that
     * cannot be read or is not a JSON object is an error naming it. */
    const char *manifest;
    /* parity.json already open (manifest.h), or NULL.  When set it is used
     * instead of `manifest` (borrowed: the caller frees it after the run),
     * and manifest_read is 1. */
    const onp_manifest *manifest_doc;
} onp_lint_opts;

/* Apply every rule to `m` (opts may be NULL: no manifest).  On success
 * *out holds the findings, which the caller frees with
 * onp_lint_result_free(); they own every string, so they outlive `m`.
 * On failure (-1: unreadable or malformed manifest, out of memory) *out is
 * empty (and needs no free) and `e` says why.  Reads the model only: the
 * small constants the rules look at (shape vectors, flags) are
 * materialised; initializer data is otherwise never read. */
int onp_lint_run(const onp_model *m, const onp_lint_opts *opts, onp_lint_result *out, onp_error *e);

/* Free the findings and zero the result.  Accepts NULL and a zeroed result. */
void onp_lint_result_free(onp_lint_result *r);

/* How strongly a finding supports its cause, given what else is known:
 * 0 high (an error-level finding while the numbers fail, or a finding on
 * the first divergent node), 1 medium (an error-level finding while the
 * numbers agree: the defect is there, the runtime or fixtures hide it),
 * 2 low (a warning-level finding while the numbers fail), -1 not a cause
 * (infos; warnings while the numbers agree).  `first_divergent` may be
 * NULL.  The one rule `check` and `diagnose` rank lint findings by. */
int onp_lint_cause_rank(const onp_lint_finding *f, int numbers_fail, const char *first_divergent);

#endif
