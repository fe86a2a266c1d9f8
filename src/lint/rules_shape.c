/*
 * rules_shape.c — the baked-shape family read from the graph (ONP201-203):
 * graph inputs with a static batch dim, shape constants that hold an
 * input's export-time size, and reshapes to a constant dim 0 of a value
 * whose dim 0 is dynamic.
 *
 * Export-time sizes come from the graph (a static dim 0 of an input) and,
 * for dims the graph declares dynamic, from parity.json's traced fixture
 * (manifest.c).  Sizes 0 and 1 are never matched: too common to mean
 * anything.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lint/lint_int.h"
#include "model/dataflow.h"

void lint_check_inputs(lint_ctx *c, const lint_scope *main)
{
    const onp_graph *g = main->g;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const onp_value_info *vi = &g->inputs[i];
        if (onp_strmap_get(&main->init, vi->name, NULL)) continue;
        const onp_type *t = &vi->type;
        if (t->kind != ONP_TYPE_TENSOR || !t->has_shape || t->rank < 1) continue;
        const onp_dim *d0 = &t->dims[0];
        if ((d0->param && d0->param[0]) || d0->value < 0) continue;
        int all_static = 1;
        for (size_t k = 0; k < t->rank; k++)
            if ((t->dims[k].param && t->dims[k].param[0]) || t->dims[k].value < 0) all_static = 0;
        char shape[512];
        onp_type_shape_str(t, shape, sizeof shape);
        onp_lint_location loc = {ONP_LINT_LOC_INPUT, "", vi->name, "", (int64_t)i, "", -1};
        lint_emit(c, R_STATIC_BATCH_INPUT, &loc, LINT_ORDER(LINT_SEC_INPUT, i),
                  "input '%s' has shape %s: dim 0 (the batch) is fixed at %" PRId64
                  "%s; ONNX Runtime refuses any other batch size, and sizes computed from it "
                  "were folded into constants (declare it with dynamic_axes / dynamic_shapes)",
                  vi->name, shape, d0->value, all_static ? " and every dim is static" : "");
    }
}

/* "[8, -1]" (first entries). */
static void vec_text(const onp_tensor *t, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int64_t i = 0; i < t->count && k < n; i++) {
        if (i == 8) {
            k += (size_t)snprintf(buf + k, n - k, ", ...");
            break;
        }
        k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? ", " : "", lint_i64(t, i));
    }
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* The export-time size `v` matches, or NULL. */
static const lint_size *size_match(const lint_ctx *c, int64_t v)
{
    if (v <= 1) return NULL;
    for (size_t i = 0; i < c->n_sizes; i++)
        if (c->sizes[i].size == v) return &c->sizes[i];
    return NULL;
}

/* ONP203: Reshape to a constant dim 0 of a value whose dim 0 is dynamic. */
static int reshape_dynamic(lint_ctx *c, const lint_node *ln, const onp_tensor *shape,
                           const char *src)
{
    const onp_node *n = ln->n;
    if (ln->s->parent || !lint_is_op(n, "Reshape") || shape->count < 1) return 0;
    if (!onp_strmap_get(&c->batchdyn, n->inputs[0], NULL)) return 0;
    int64_t d0 = lint_i64(shape, 0);
    if (d0 <= 0) return 0; /* 0 copies dim 0, -1 infers it */
    char lab[600], vec[256];
    lint_node_label(ln, lab, sizeof lab);
    vec_text(shape, vec, sizeof vec);
    lint_emit_node(c, R_CONSTANT_SHAPE_DYNAMIC, ln,
                   "Reshape %s reshapes '%s', whose dim 0 comes from a dynamic batch dim, to "
                   "%s = %s: dim 0 is fixed at %" PRId64
                   " (a size computed at export was folded into a constant); any other batch "
                   "size fails or mixes samples",
                   lab, n->inputs[0], src, vec, d0);
    return 1;
}

/* The shape-like operands of a node: (input index or -1 for an attribute,
 * attribute name, which entries to look at: -1 all, else that axis only). */
typedef struct shape_operand {
    int input;
    const char *attr;
    int axis0_only; /* look at the entries that address axis 0 only */
} shape_operand;

static size_t operands(const lint_ctx *c, const onp_node *n, shape_operand *out)
{
    const char *op = n->op_type;
    int64_t v = c->opset < 0 ? INT64_MAX : c->opset;
    if (!strcmp(op, "Reshape")) {
        out[0] = v >= 5 ? (shape_operand){1, NULL, 0} : (shape_operand){-1, "shape", 0};
        return 1;
    }
    if (!strcmp(op, "Expand") || !strcmp(op, "Tile")) {
        out[0] = (shape_operand){1, NULL, 0};
        return 1;
    }
    if (!strcmp(op, "ConstantOfShape")) {
        out[0] = (shape_operand){0, NULL, 0};
        return 1;
    }
    if (!strcmp(op, "Resize") && v >= 11) {
        out[0] = (shape_operand){3, NULL, 1};
        return 1;
    }
    if (!strcmp(op, "Slice")) {
        if (v >= 10) {
            out[0] = (shape_operand){1, NULL, 1};
            out[1] = (shape_operand){2, NULL, 1};
        } else {
            out[0] = (shape_operand){-1, "starts", 1};
            out[1] = (shape_operand){-1, "ends", 1};
        }
        return 2;
    }
    return 0;
}

/* Which entries of a Slice's starts/ends address axis 0: a mask over the
 * first 64 entries; 0 when the axes cannot be told. */
static uint64_t slice_axis0(lint_ctx *c, const lint_node *ln, int64_t count)
{
    const onp_node *n = ln->n;
    int64_t v = c->opset < 0 ? INT64_MAX : c->opset;
    if (v < 10) {
        const onp_attr *a = onp_node_attr(n, "axes");
        if (!a) return 1; /* default axes [0, 1, ...]: entry 0 is axis 0 */
        uint64_t m = 0;
        for (size_t i = 0; i < a->n_ints && i < 64; i++)
            if (a->ints[i] == 0) m |= 1ull << i;
        return m;
    }
    if (n->n_inputs < 4 || !n->inputs[3][0]) return count > 0 ? 1 : 0;
    onp_tensor t;
    if (!lint_const(c, ln->s, n->inputs[3], 64, &t, NULL)) return 0;
    uint64_t m = 0;
    for (int64_t i = 0; i < t.count; i++)
        if (lint_i64(&t, i) == 0) m |= 1ull << i;
    onp_tensor_release(&t);
    return m;
}

/* 1 when `name` is a shape vector: Shape's output, seen through Identity
 * and Cast.  Slicing one addresses dims, not the batch. */
static int is_shape_vector(const lint_scope *s, const char *name)
{
    for (int step = 0; step < 8 && name && name[0]; step++) {
        const onp_node *p = lint_producer(s, name, &s);
        if (!p) return 0;
        if (lint_is_op(p, "Shape")) return 1;
        if ((!lint_is_op(p, "Identity") && !lint_is_op(p, "Cast")) || !p->n_inputs) return 0;
        name = p->inputs[0];
    }
    return 0;
}

static int dim_not_batch(lint_ctx *c, const lint_scope *s, const char *name, int64_t k, int depth);

/* The rank a graph input declares, or -1. */
static int64_t input_rank(const lint_scope *s, const char *name)
{
    for (; s; s = s->parent) {
        size_t i;
        if (onp_strmap_get(&s->input, name, &i))
            return s->g->inputs[i].type.kind == ONP_TYPE_TENSOR && s->g->inputs[i].type.has_shape
                       ? (int64_t)s->g->inputs[i].type.rank
                       : -1;
    }
    return -1;
}

/* The one-element integer constant `name`, or INT64_MIN. */
static int64_t const_int(lint_ctx *c, const lint_scope *s, const char *name)
{
    onp_tensor t;
    if (!lint_const(c, s, name, 1, &t, NULL)) return INT64_MIN;
    int64_t v = t.count == 1 ? lint_i64(&t, 0) : INT64_MIN;
    onp_tensor_release(&t);
    return v;
}

/* 1 when the scalar `name` (through Cast, Identity, Unsqueeze) is a size
 * that is not the batch: Gather(Shape(v), k) with dim k of v not the batch. */
static int size_not_batch(lint_ctx *c, const lint_scope *s, const char *name, int depth)
{
    const onp_node *p = lint_producer(s, name, &s);
    while (p && p->n_inputs &&
           (lint_is_op(p, "Cast") || lint_is_op(p, "Identity") || lint_is_op(p, "Unsqueeze")))
        p = lint_producer(s, p->inputs[0], &s);
    if (!p || !lint_is_op(p, "Gather") || p->n_inputs < 2) return 0;
    const onp_node *sh = lint_producer(s, p->inputs[0], NULL);
    if (!sh || !lint_is_op(sh, "Shape") || !sh->n_inputs || onp_node_attr(sh, "start")) return 0;
    int64_t k = const_int(c, s, p->inputs[1]);
    return k != INT64_MIN && dim_not_batch(c, s, sh->inputs[0], k, depth + 1);
}

/* 1 when dim k of `name` is proven to be some other size than the batch:
 * a dim other than 0 of a graph input, and what carries one along: the
 * mask of x.new_zeros(x.shape[-2:]), an arange over its rows, slices of
 * them, scatters into them.  A bound on such an axis is not the batch. */
static int dim_not_batch(lint_ctx *c, const lint_scope *s, const char *name, int64_t k, int depth)
{
    for (int step = 0; step < 32 && depth < 8 && name && name[0]; step++) {
        if (lint_is_graph_input(s, name)) {
            int64_t rank = input_rank(s, name);
            if (k < 0) k = rank > 0 ? k + rank : 0;
            return k > 0 && (rank < 0 || k < rank);
        }
        const onp_node *p = lint_producer(s, name, &s);
        if (!p || !p->n_inputs || (p->domain[0] && strcmp(p->domain, "ai.onnx"))) return 0;
        /* output 0 has the shape of input 0, or a part of it along its axes */
        if (lint_in_list("|Identity|Cast|Neg|Abs|Relu|Sigmoid|Tanh|Not|Slice|ScatterND|"
                         "ScatterElements|Scatter|",
                         p->op_type)) {
            name = p->inputs[0];
            continue;
        }
        /* ConstantOfShape(Concat(Unsqueeze(n0), Unsqueeze(n1), ...)): dim k is n_k */
        if (lint_is_op(p, "ConstantOfShape")) {
            const onp_node *cat = lint_producer(s, p->inputs[0], NULL);
            if (!cat || !lint_is_op(cat, "Concat") || k < 0 || (size_t)k >= cat->n_inputs) return 0;
            for (int64_t i = 0; i <= k; i++) {
                const onp_node *u = lint_producer(s, cat->inputs[i], NULL);
                if (!u || !lint_is_op(u, "Unsqueeze")) return 0; /* one entry each */
            }
            return size_not_batch(c, s, cat->inputs[k], depth + 1);
        }
        /* Range(0, n, 1) is n long */
        if (lint_is_op(p, "Range") && p->n_inputs == 3 && (k == 0 || k == -1))
            return const_int(c, s, p->inputs[0]) == 0 && const_int(c, s, p->inputs[2]) == 1 &&
                   size_not_batch(c, s, p->inputs[1], depth + 1);
        return 0;
    }
    return 0;
}

/* torch's legacy export of x.expand(4, 6): the shape is Where(Equal(C, -1),
 * ..., C) over a constant C; fills *out with C (1), or 0. */
static int where_shape(lint_ctx *c, const lint_scope *s, const char *name, onp_tensor *out)
{
    const onp_node *w = lint_producer(s, name, NULL);
    if (!w || !lint_is_op(w, "Where") || w->n_inputs != 3) return 0;
    const onp_node *eq = lint_producer(s, w->inputs[0], NULL);
    if (!eq || !lint_is_op(eq, "Equal") || eq->n_inputs != 2) return 0;
    if (!lint_const(c, s, w->inputs[2], 64, out, NULL)) return 0;
    onp_tensor probe;
    memset(&probe, 0, sizeof probe);
    int same = lint_const(c, s, eq->inputs[0], 64, &probe, NULL) && probe.count == out->count;
    onp_tensor_release(&probe);
    if (!same) onp_tensor_release(out);
    return same;
}

/* The static product of dims 1.. of `name` as its declaration (a graph
 * input or a value_info of the scope or an outer one) gives them; 0 when a
 * dim beyond 0 is unknown or symbolic, or there is no declaration. */
static int64_t declared_rest(const lint_scope *s, const char *name)
{
    for (const lint_scope *sc = s; sc; sc = sc->parent) {
        size_t i;
        const onp_type *t = NULL;
        if (onp_strmap_get(&sc->input, name, &i))
            t = &sc->g->inputs[i].type;
        else if (onp_strmap_get(&sc->vinfo, name, &i))
            t = &sc->g->value_info[i].type;
        if (!t) continue;
        if (t->kind != ONP_TYPE_TENSOR || !t->has_shape || t->rank < 1) return 0;
        int64_t prod = 1;
        for (size_t d = 1; d < t->rank; d++) {
            int64_t v = t->dims[d].value;
            if ((t->dims[d].param && t->dims[d].param[0]) || v <= 0 || v > INT64_MAX / prod)
                return 0;
            prod *= v;
        }
        return prod;
    }
    return 0;
}

/* 1 when a Reshape to the constant `shape` keeps its data's dim 0 as its
 * own dim 0 and splits or merges only the other dims: entry 0 copies dim 0
 * (0, without allowzero) or infers it (-1), and entries 1.. multiply to the
 * product of the data's dims 1.., static in its declaration (so -1 is dim
 * 0 itself).  Those entries are then sizes of the other dims (BERT's
 * [-1, 8, 4, 8]: length 8, 4 attention heads of 8), never the batch,
 * whatever size the batch was traced at. */
static int reshape_keeps_dim0(const lint_node *ln, const onp_tensor *shape)
{
    const onp_node *n = ln->n;
    if (shape->count < 2) return 0;
    int64_t d0 = lint_i64(shape, 0);
    const onp_attr *az = onp_node_attr(n, "allowzero");
    if (d0 != -1 && !(d0 == 0 && (!az || az->i == 0))) return 0;
    int64_t rest = declared_rest(ln->s, n->inputs[0]), prod = 1;
    for (int64_t i = 1; i < shape->count; i++) {
        int64_t v = lint_i64(shape, i);
        if (v <= 0 || v > INT64_MAX / prod) return 0;
        prod *= v;
    }
    return rest > 0 && prod == rest;
}

/* Whether input k of node n takes a parameter vector: one entry per axis
 * or per pad (a Pad's pads and axes, a Reshape's, Expand's or
 * ConstantOfShape's shape, Tile's repeats, a Slice's starts..steps, a
 * Resize's roi, scales and sizes, Squeeze's and Unsqueeze's axes): its
 * length counts axes, never samples. */
static int parameter_input(const onp_node *n, size_t k)
{
    if (lint_is_op(n, "ConstantOfShape")) return k == 0;
    if (lint_in_list("|Pad|Reshape|Expand|Tile|Slice|Resize|Upsample|Squeeze|Unsqueeze|",
                     n->op_type))
        return k >= 1;
    return 0;
}

/* Whether input k of n passes its value on to n's output 0 as data of the
 * same small vector (torch's F.pad reorders its pads so: Concat, Reshape,
 * Slice, Transpose, Cast). */
static int vector_pass(const onp_node *n, size_t k)
{
    if (lint_in_list("|Concat|", n->op_type)) return 1;
    return k == 0 && lint_in_list("|Cast|Identity|Reshape|Slice|Transpose|Squeeze|Unsqueeze|"
                                  "Flatten|",
                                  n->op_type);
}

/* 1 when every use of `name` in scope s, followed through vector_pass, is
 * a parameter vector (parameter_input), and it has one: none is a graph
 * output or read by a subgraph. */
static int only_parameters(const lint_scope *s, const char *name, int depth)
{
    if (depth > 12 || !lint_value_used(s, name)) return 0;
    for (size_t k = 0; k < s->g->n_outputs; k++)
        if (!strcmp(s->g->outputs[k].name, name)) return 0;
    for (size_t i = 0; i < s->g->n_nodes; i++) {
        const onp_node *n = &s->g->nodes[i];
        int direct = 0;
        for (size_t k = 0; k < n->n_inputs; k++) {
            if (strcmp(n->inputs[k], name)) continue;
            direct = 1;
            if (parameter_input(n, k)) continue;
            if (!vector_pass(n, k) || !n->n_outputs || !only_parameters(s, n->outputs[0], depth + 1))
                return 0;
        }
        if (!direct && onp_node_reads(n, name)) return 0; /* a subgraph reads it */
    }
    return 1;
}

void lint_check_shape_constants(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    if (lint_is_op(n, "Slice") && n->n_inputs && is_shape_vector(ln->s, n->inputs[0])) return;
    /* a Reshape keeps its data's element count: of a value whose shape is
     * static (F.pad's pads vector, shape arithmetic) no dim is the batch */
    if (lint_is_op(n, "Reshape") && n->n_inputs && lint_static_extent(c, ln->s, n->inputs[0]))
        return;
    /* a Slice on the axis 0 of a value whose dim 0 is not the batch */
    if (lint_is_op(n, "Slice") && n->n_inputs && dim_not_batch(c, ln->s, n->inputs[0], 0, 0))
        return;
    /* a 1-D ConstantOfShape read only as a parameter vector (torch's F.pad
     * builds its pads so: ConstantOfShape([2]) then Concat): its length
     * counts pads or axes, whatever size the batch was traced at */
    if (lint_is_op(n, "ConstantOfShape") && n->n_outputs && only_parameters(ln->s, n->outputs[0], 0))
        return;
    shape_operand ops[2];
    size_t nops = operands(c, n, ops);
    for (size_t k = 0; k < nops; k++) {
        onp_tensor t;
        memset(&t, 0, sizeof t);
        char src[600];
        if (ops[k].input >= 0) {
            if ((size_t)ops[k].input >= n->n_inputs || !n->inputs[ops[k].input][0]) continue;
            if (!lint_const(c, ln->s, n->inputs[ops[k].input], 64, &t, NULL) &&
                !where_shape(c, ln->s, n->inputs[ops[k].input], &t))
                continue;
            snprintf(src, sizeof src, "constant '%s'", n->inputs[ops[k].input]);
        } else {
            const onp_attr *a = onp_node_attr(n, ops[k].attr);
            if (!a || !a->n_ints) continue;
            int64_t dims[1] = {(int64_t)a->n_ints};
            if (a->n_ints > 64 || onp_tensor_alloc(&t, ONP_INT64, 1, dims, NULL)) continue;
            memcpy(t.data, a->ints, a->n_ints * sizeof(int64_t));
            snprintf(src, sizeof src, "attribute '%s'", ops[k].attr);
        }
        if (k == 0 && reshape_dynamic(c, ln, &t, src)) {
            onp_tensor_release(&t);
            return;
        }
        uint64_t mask =
            ops[k].axis0_only ? (lint_is_op(n, "Resize") ? 1 : slice_axis0(c, ln, t.count)) : ~0ull;
        if (k == 0 && lint_is_op(n, "Reshape") && reshape_keeps_dim0(ln, &t)) mask = 0;
        const lint_size *hit = NULL;
        for (int64_t i = 0; i < t.count && i < 64 && !hit; i++)
            if (mask >> i & 1) hit = size_match(c, lint_i64(&t, i));
        if (hit) {
            char lab[600], vec[256];
            lint_node_label(ln, lab, sizeof lab);
            vec_text(&t, vec, sizeof vec);
            lint_emit_node(
                c, R_BATCH_CONSTANT, ln,
                "%s %s takes %s from %s = %s: %" PRId64
                " is the export-time size of input '%s' dim %zu%s; at another size "
                "this %s",
                n->op_type, lab, k == 0 && !lint_is_op(n, "Slice") ? "its shape" : "a bound", src,
                vec, hit->size, hit->input, hit->dim,
                hit->symbolic ? " (declared dynamic, traced at that size)" : "",
                lint_is_op(n, "Reshape") ? "reshape fails or mixes samples" : "constant is wrong");
            onp_tensor_release(&t);
            return;
        }
        onp_tensor_release(&t);
    }
}

// --- Resize to constant sizes, unrolled loops -------------------------------------------

/* The first symbolic dim beyond dim 0 of a graph input (a sequence length,
 * an image size), or NULL: the model means that dim to vary. */
static const lint_size *symbolic_inner_dim(const lint_ctx *c)
{
    for (size_t i = 0; i < c->n_sizes; i++)
        if (c->sizes[i].symbolic && c->sizes[i].dim >= 1) return &c->sizes[i];
    return NULL;
}

void lint_check_resize_size(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    const lint_size *dyn = symbolic_inner_dim(c);
    if (ln->s->parent || !dyn || n->n_inputs < 4 || !n->inputs[3][0]) return;
    onp_tensor t;
    memset(&t, 0, sizeof t);
    /* the sizes, or their spatial tail: torch's legacy export concatenates
     * Shape(x)[:2] with the constant output sizes */
    const char *src = n->inputs[3];
    const onp_node *cat = lint_producer(ln->s, src, NULL);
    int whole = lint_const(c, ln->s, src, 16, &t, NULL);
    if (!whole && cat && lint_is_op(cat, "Concat") && cat->n_inputs >= 2) {
        src = cat->inputs[cat->n_inputs - 1];
        if (!lint_const(c, ln->s, src, 16, &t, NULL)) return;
    } else if (!whole) {
        return;
    }
    if (t.count >= (whole ? 3 : 1)) {
        char lab[600], vec[256];
        lint_node_label(ln, lab, sizeof lab);
        vec_text(&t, vec, sizeof vec);
        lint_emit_node(c, R_CONSTANT_RESIZE_SIZE, ln,
                       "Resize %s resizes to the constant sizes in '%s' = %s while input '%s' dim "
                       "%zu is declared dynamic: at any other input size the output keeps the "
                       "export-time size (an int() of a traced size, or a literal)",
                       lab, src, vec, dyn->input, dyn->dim);
    }
    onp_tensor_release(&t);
}

/* The scalar constant index of a Gather on axis 0, or -1. */
static int64_t gather_index0(lint_ctx *c, const lint_scope *s, const onp_node *n)
{
    const onp_attr *axis = onp_node_attr(n, "axis");
    if (!lint_is_op(n, "Gather") || n->n_inputs < 2 || (axis && axis->i != 0)) return -1;
    onp_tensor t;
    memset(&t, 0, sizeof t);
    if (!lint_const(c, s, n->inputs[1], 1, &t, NULL)) return -1;
    int64_t k = t.rank == 0 && t.count == 1 ? lint_i64(&t, 0) : -1;
    onp_tensor_release(&t);
    return k;
}

typedef struct unroll_scan {
    lint_ctx *c;
    const lint_scope *s;
    uint64_t seen; /* bit k: a Gather takes index k (k < 64) */
    int64_t max;
} unroll_scan;

static void unroll_visit(const onp_node *consumer, void *arg)
{
    unroll_scan *u = arg;
    int64_t k = gather_index0(u->c, u->s, consumer);
    if (k < 0 || k >= 64) return;
    u->seen |= 1ull << k;
    if (k > u->max) u->max = k;
}

/* ONP303: Gathers of the indices 0..k-1 (k >= 2) along the dynamic dim 0
 * of one value: the trace unrolled `for i in range(x.shape[0])`.  Reported
 * at the Gather of the last index, the first to fail at a smaller size. */
void lint_check_unrolled(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    if (ln->s->parent || n->n_inputs < 2 || !onp_strmap_get(&c->batchdyn, n->inputs[0], NULL))
        return;
    int64_t k = gather_index0(c, ln->s, n);
    if (k < 1) return;
    unroll_scan u = {c, ln->s, 0, -1};
    lint_for_consumers(ln->s, n->inputs[0], unroll_visit, &u);
    if (u.max != k || u.seen != (k + 1 >= 64 ? ~0ull : (1ull << (k + 1)) - 1)) return;
    char lab[600];
    lint_node_label(ln, lab, sizeof lab);
    lint_emit_node(c, R_UNROLLED_LOOP, ln,
                   "%" PRId64 " Gathers take rows 0..%" PRId64
                   " of '%s', whose dim 0 is dynamic: a Python loop over it was unrolled at "
                   "trace time (%s takes the last row); at a smaller size it fails, at a larger "
                   "one the rows past %" PRId64 " are dropped",
                   k + 1, k, n->inputs[0], lab, k);
}
