/*
 * lint_int.h — what the lint rule families share: the rule indices (one per
 * row of the table in registry.c), the walk context, and the graph helpers
 * a rule needs to decide (constants, element types, producers, consumers,
 * export-time sizes).  Internal to src/lint/.
 *
 * A check is a function that looks at one node (or at the model, or at the
 * manifest) and calls lint_emit*() for every finding; it never fails: a
 * helper that runs out of memory marks the context and the run reports it.
 */
#ifndef ONP_LINT_INT_H
#define ONP_LINT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/lint.h"
#include "onnxparity/model.h"
#include "onnxparity/tensor.h"
#include "util/strmap.h"

/* One per row of the rule table (registry.c), in id order. */
typedef enum lint_rule_ix {
    R_DROPOUT_TRAINING = 0,      /* ONP101 */
    R_DROPOUT_TRAINING_UNKNOWN,  /* ONP102 */
    R_DROPOUT_TRAINING_NOOP,     /* ONP103 */
    R_BATCHNORM_TRAINING,        /* ONP104 */
    R_RANDOM_DROPOUT_MASK,       /* ONP105 */
    R_MODULES_IN_TRAINING,       /* ONP106 */
    R_EXPORTER_TRAINING,         /* ONP107 */
    R_MODULES_IN_TRAINING_INERT, /* ONP108 */
    R_STATIC_BATCH_INPUT,        /* ONP201 */
    R_BATCH_CONSTANT,            /* ONP202 */
    R_CONSTANT_SHAPE_DYNAMIC,    /* ONP203 */
    R_SHAPE_RISK,                /* ONP204 */
    R_EXPORTER_SHAPE,            /* ONP205 */
    R_CONSTANT_RESIZE_SIZE,      /* ONP206 */
    R_SIZE_ONE_TRACE,            /* ONP207 */
    R_TRACER_WARNING,            /* ONP301 */
    R_TRACE_PATH_DIFFERS,        /* ONP302 */
    R_UNROLLED_LOOP,             /* ONP303 */
    R_TOPK_TIES,                 /* ONP401 */
    R_ARG_SELECT_LAST,           /* ONP402 */
    R_RESIZE_SEMANTICS,          /* ONP403 */
    R_UPSAMPLE,                  /* ONP404 */
    R_PAD_MODE,                  /* ONP405 */
    R_INTEGER_DIV,               /* ONP406 */
    R_MOD_SIGN,                  /* ONP407 */
    R_NAN_PROPAGATION,           /* ONP408 */
    R_ROUND_HALF_EVEN,           /* ONP409 */
    R_CAST_FLOAT_INT,            /* ONP410 */
    R_GRID_SAMPLE,               /* ONP411 */
    R_NMS,                       /* ONP412 */
    R_SCATTER_DUPLICATES,        /* ONP413 */
    R_EXPORTER_OP,               /* ONP414 */
    R_EXPORTER_NOTE,             /* ONP415 */
    R_REDUCED_PRECISION,         /* ONP416 */
    R_FLOAT8_SATURATE,           /* ONP417 */
    R_LEGACY_OPSET,              /* ONP501 */
    R_OUTPUT_UNTYPED,            /* ONP502 */
    R_OUTPUT_SHAPELESS,          /* ONP503 */
    R_RANDOM_OP,                 /* ONP601 */
    R_EAGER_NONDETERMINISTIC,    /* ONP602 */
    R_STATE_MUTATION,            /* ONP701 */
    R_INPUT_MUTATION,            /* ONP702 */
    R_ATTRIBUTE_MUTATION,        /* ONP703 */
    R_STATE_MUTATION_UNREAD,     /* ONP704 */
    R_COUNT
} lint_rule_ix;

/* The table row of rule `ix` (registry.c). */
const onp_lint_rule *lint_rule(lint_rule_ix ix);

/* A graph being walked, with lookup tables, linked to the graph holding it
 * (names of outer graphs are visible inside subgraphs). */
typedef struct lint_scope {
    const onp_graph *g;
    const struct lint_scope *parent; /* NULL for the main graph */
    const char *path;                /* "" for the main graph (owned by the walk) */
    onp_strmap producer;             /* value name -> node index */
    onp_strmap init;                 /* initializer name -> index */
    onp_strmap input;                /* graph input name -> index */
    onp_strmap vinfo;                /* value_info name -> index */
} lint_scope;

/* An export-time size of an input dimension: from a static dim of the
 * graph, or from parity.json's traced fixture for a symbolic one. */
typedef struct lint_size {
    const char *input; /* graph input name (in the model's storage) */
    size_t dim;
    int64_t size;
    int symbolic; /* the graph declares this dim dynamic */
} lint_size;

typedef struct lint_ctx {
    const onp_model *m;
    int64_t opset; /* default domain; -1 when not imported */
    onp_lint_result *r;
    int oom;              /* an allocation failed: the run fails */
    const void *manifest; /* cJSON object (borrowed from manifest_own or the caller), or NULL */
    void *manifest_own;   /* onp_manifest opened by lint_manifest_load, or NULL */
    lint_size *sizes;     /* [n_sizes] export-time sizes (dim 0 of every input, symbolic dims) */
    size_t n_sizes, cap_sizes;
    onp_strmap batchdyn;      /* main-graph values whose dim 0 is a dynamic batch dim */
    onp_strmap once[R_COUNT]; /* per rule: op types already reported (lint_once) */
} lint_ctx;

/* The node a check is looking at. */
typedef struct lint_node {
    const lint_scope *s;
    const onp_node *n;
    size_t index; /* in s->g */
    uint64_t seq; /* pre-order position in the whole model (sort key) */
} lint_node;

/* Sort keys: section << 56 | position. */
enum { LINT_SEC_MODEL = 0, LINT_SEC_INPUT, LINT_SEC_NODE, LINT_SEC_OUTPUT, LINT_SEC_MANIFEST };
#define LINT_ORDER(sec, pos) (((uint64_t)(sec) << 56) | ((uint64_t)(pos) & ((1ull << 56) - 1)))

/* --- emitting findings ----------------------------------------------------- */

/* Add a finding of rule `ix` at `loc` (strings copied) with sort key
 * `order`.  Marks c->oom on failure. */
void lint_emit(lint_ctx *c, lint_rule_ix ix, const onp_lint_location *loc, uint64_t order,
               const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Same, located at the node `ln`. */
void lint_emit_node(lint_ctx *c, lint_rule_ix ix, const lint_node *ln, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Notes that would repeat on every node of a kind (a Clip per ReLU6) are
 * reported once per op type: 1 when `ln` is the first node of its op type
 * to get rule `ix`, with *more = how many later nodes of its graph qualify
 * too; 0 for those later ones. */
int lint_once(lint_ctx *c, lint_rule_ix ix, const lint_node *ln,
              int (*qualifies)(const lint_scope *s, const onp_node *n), size_t *more);

/* --- graph helpers (graphinfo.c) ------------------------------------------- */

/* 1 when `op` (not empty, no '|') is an entry of the list "|A|B|". */
int lint_in_list(const char *list, const char *op);

/* 1 when the node is in the default (ai.onnx) domain and its op is `op`. */
int lint_is_op(const onp_node *n, const char *op);

/* "'NAME'" for messages, or "#INDEX (OP)" when the node has no name. */
const char *lint_node_label(const lint_node *ln, char *buf, size_t n);

/* Build / release a scope's lookup tables.  0, or -1 out of memory. */
int lint_scope_init(lint_scope *s, const onp_graph *g, const lint_scope *parent, const char *path);
void lint_scope_release(lint_scope *s);

/* The node producing `name` in s or an enclosing scope, or NULL. */
const onp_node *lint_producer(const lint_scope *s, const char *name, const lint_scope **where);

/* 1 when `name` is a graph input (not an initializer) of s or an enclosing scope. */
int lint_is_graph_input(const lint_scope *s, const char *name);

/* A constant value: an initializer, a Constant node (value, value_int(s),
 * value_float(s)), or either seen through Identity nodes.  At most
 * `max_count` elements.  Returns 1 and fills *out (released by the caller)
 * when found; *overridable = 1 when it is an initializer that is also a
 * graph input (the caller can feed another value).  0 when not a constant
 * (or too large, or unreadable). */
int lint_const(lint_ctx *c, const lint_scope *s, const char *name, int64_t max_count,
               onp_tensor *out, int *overridable);

/* Element i of an integer, float or bool tensor as int64 (saturated). */
int64_t lint_i64(const onp_tensor *t, int64_t i);

/* The element type of a value (onp_dtype), or 0 when it cannot be told
 * from initializers, declared types, or the operators that produce it. */
int32_t lint_dtype(const lint_scope *s, const char *name);

/* 1 when a node of s (or of its subgraphs) reads `name`, or it is an output
 * of s's graph. */
int lint_value_used(const lint_scope *s, const char *name);

/* Call fn(consumer) for every node of s's graph reading `name`. */
void lint_for_consumers(const lint_scope *s, const char *name,
                        void (*fn)(const onp_node *consumer, void *arg), void *arg);

/* Bounds over every element of a value: lo <= x <= hi, with -HUGE_VAL /
 * HUGE_VAL for "unbounded" (finite bounds lie within +-2^53). */
typedef struct lint_range {
    double lo, hi;
} lint_range;

/* What the graph proves about the elements of `name`: constants,
 * Shape/Size (non-negative), and the arithmetic, selection and casts that
 * shape computations use (Add, Sub, Mul, Div, Mod, Gather, Concat, Cast,
 * Clip, Max, Min, ...).  Unbounded when nothing is proven. */
lint_range lint_value_range(lint_ctx *c, const lint_scope *s, const char *name);

/* 1 when the shape of `name` is proven independent of every graph input's
 * dims: it is computed from constants and from Shape/Size values through
 * operators whose output shape follows from static operands (shape
 * arithmetic, F.pad's pads vector).  Such a value never carries the batch. */
int lint_static_extent(lint_ctx *c, const lint_scope *s, const char *name);

/* Compute c->batchdyn over the main graph (inputs with a symbolic dim 0,
 * carried through operators that keep dim 0). */
void lint_batchdyn_compute(lint_ctx *c, const lint_scope *main);

/* Record an export-time size (manifest.c and the input rules). */
void lint_size_add(lint_ctx *c, const char *input, size_t dim, int64_t size, int symbolic);

/* --- the checks (one file per family) -------------------------------------- */

typedef void (*lint_node_fn)(lint_ctx *c, const lint_node *ln);
typedef void (*lint_model_fn)(lint_ctx *c, const lint_scope *main);

/* rules_training.c */
void lint_check_dropout(lint_ctx *c, const lint_node *ln);
void lint_check_batchnorm(lint_ctx *c, const lint_node *ln);
void lint_check_random(lint_ctx *c, const lint_node *ln);
/* How many Dropouts of the model can drop: a training mode not provably
 * false with a ratio not provably 0 (manifest.c: the exporter's dropout
 * warning). */
size_t lint_live_dropouts(lint_ctx *c, const lint_scope *main);
/* How many nodes of the main graph compute as in training mode: the live
 * Dropouts, BatchNormalizations in their training form, random operators
 * (manifest.c: whether modules left in training mode left a trace). */
size_t lint_training_nodes(lint_ctx *c, const lint_scope *main);
/* rules_shape.c */
void lint_check_inputs(lint_ctx *c, const lint_scope *main);
void lint_check_shape_constants(lint_ctx *c, const lint_node *ln);
void lint_check_resize_size(lint_ctx *c, const lint_node *ln);
void lint_check_unrolled(lint_ctx *c, const lint_node *ln);
/* rules_opsem.c */
void lint_check_topk(lint_ctx *c, const lint_node *ln);
void lint_check_argmax(lint_ctx *c, const lint_node *ln);
void lint_check_resize(lint_ctx *c, const lint_node *ln);
void lint_check_upsample(lint_ctx *c, const lint_node *ln);
void lint_check_pad(lint_ctx *c, const lint_node *ln);
void lint_check_div_mod(lint_ctx *c, const lint_node *ln);
void lint_check_nan(lint_ctx *c, const lint_node *ln);
void lint_check_round(lint_ctx *c, const lint_node *ln);
void lint_check_cast(lint_ctx *c, const lint_node *ln);
void lint_check_lowp_cast(lint_ctx *c, const lint_node *ln);
void lint_check_float8_cast(lint_ctx *c, const lint_node *ln);
void lint_check_gridsample(lint_ctx *c, const lint_node *ln);
void lint_check_nms(lint_ctx *c, const lint_node *ln);
void lint_check_scatter(lint_ctx *c, const lint_node *ln);
/* rules_model.c */
void lint_check_opset(lint_ctx *c, const lint_scope *main);
void lint_check_outputs(lint_ctx *c, const lint_scope *main);
/* manifest.c */
/* Use opts->manifest_doc (borrowed) when set, else open opts->manifest;
 * nothing when neither is set.  -1: the file cannot be read or is not a
 * JSON object (e names it). */
int lint_manifest_load(lint_ctx *c, const onp_lint_opts *opts, onp_error *e);
void lint_manifest_sizes(lint_ctx *c, const lint_scope *main);
void lint_check_manifest(lint_ctx *c, const lint_scope *main);
void lint_manifest_free(lint_ctx *c);
/* rules_state.c (called by lint_check_manifest; *pos is its order counter) */
void lint_check_state(lint_ctx *c, const lint_scope *main, uint64_t *pos);

/* The check tables (registry.c). */
typedef struct lint_node_check {
    const char *ops; /* ops it looks at, "|A|B|" (default domain); NULL = every node */
    lint_node_fn fn;
} lint_node_check;
extern const lint_node_check lint_node_checks[];
extern const size_t lint_n_node_checks;
extern const lint_model_fn lint_model_checks[]; /* before the node walk */
extern const size_t lint_n_model_checks;

#endif
