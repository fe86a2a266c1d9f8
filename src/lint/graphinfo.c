/*
 * graphinfo.c — what a lint rule asks of the graph around a node: who
 * produces a value, whether it is a constant (and which), its element type,
 * who reads it, and which values carry a dynamic batch dim.  Lookups go
 * through per-scope hash maps, from a subgraph outward to the main graph.
 *
 * Everything here answers "don't know" rather than guess: a rule fires on
 * what these helpers prove, so an unknown type or a computed value keeps a
 * precise rule quiet.  Constants are materialised only when small (shape
 * vectors, flags, indices): initializer data is otherwise never read.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lint/lint_int.h"

/* Steps followed through Identity / pass-through producers. */
#define LINT_MAX_CHAIN 64

int lint_is_op(const onp_node *n, const char *op)
{
    return (!n->domain[0] || !strcmp(n->domain, "ai.onnx")) && !strcmp(n->op_type, op);
}

const char *lint_node_label(const lint_node *ln, char *buf, size_t n)
{
    if (ln->n->name[0])
        snprintf(buf, n, "'%s'", ln->n->name);
    else
        snprintf(buf, n, "#%zu (%s)", ln->index, ln->n->op_type);
    return buf;
}

// --- scopes -----------------------------------------------------------------------

int lint_scope_init(lint_scope *s, const onp_graph *g, const lint_scope *parent, const char *path)
{
    memset(s, 0, sizeof *s);
    s->g = g;
    s->parent = parent;
    s->path = path;
    int rc = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onp_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k][0] && !onp_strmap_get(&s->producer, n->outputs[k], NULL))
                rc |= onp_strmap_put(&s->producer, n->outputs[k], i);
    }
    for (size_t i = 0; i < g->n_initializers; i++)
        rc |= onp_strmap_put(&s->init, g->initializers[i].name, i);
    for (size_t i = 0; i < g->n_inputs; i++) rc |= onp_strmap_put(&s->input, g->inputs[i].name, i);
    for (size_t i = 0; i < g->n_value_info; i++)
        rc |= onp_strmap_put(&s->vinfo, g->value_info[i].name, i);
    if (rc) lint_scope_release(s);
    return rc ? -1 : 0;
}

void lint_scope_release(lint_scope *s)
{
    onp_strmap_free(&s->producer);
    onp_strmap_free(&s->init);
    onp_strmap_free(&s->input);
    onp_strmap_free(&s->vinfo);
}

const onp_node *lint_producer(const lint_scope *s, const char *name, const lint_scope **where)
{
    for (; s; s = s->parent) {
        size_t i;
        if (onp_strmap_get(&s->producer, name, &i)) {
            if (where) *where = s;
            return &s->g->nodes[i];
        }
        if (onp_strmap_get(&s->init, name, NULL) || onp_strmap_get(&s->input, name, NULL))
            return NULL;
    }
    return NULL;
}

int lint_is_graph_input(const lint_scope *s, const char *name)
{
    for (; s; s = s->parent) {
        if (onp_strmap_get(&s->init, name, NULL)) return 0;
        if (onp_strmap_get(&s->input, name, NULL)) return 1;
        if (onp_strmap_get(&s->producer, name, NULL)) return 0;
    }
    return 0;
}

// --- constants --------------------------------------------------------------------

/* A failed materialisation: "not a constant", and out of memory noted on c
 * so that onp_lint_run fails instead of silently skipping a rule. */
static int not_const(lint_ctx *c, const onp_error *e)
{
    if (e->code == ONP_ERR_NOMEM) c->oom = 1;
    return 0;
}

static int small_vector(lint_ctx *c, onp_tensor *out, int32_t dt, size_t n, const void *vals,
                        int rank, int64_t max_count)
{
    int64_t dims[1] = {(int64_t)n};
    onp_error e;
    onp_error_clear(&e);
    if ((int64_t)n > max_count) return 0;
    if (onp_tensor_alloc(out, dt, rank, dims, &e)) return not_const(c, &e);
    if (n) memcpy(out->data, vals, n * onp_dtype_size(dt));
    return 1;
}

static int usable(const onp_tensor_view *v, int64_t max_count)
{
    const onp_dtype_desc *d = onp_dtype_info(v->data_type);
    return d && d->kind != ONP_KIND_STRING && d->kind != ONP_KIND_COMPLEX && v->count >= 0 &&
           v->count <= max_count;
}

/* The value of a Constant node, when it holds a small numeric one. */
static int constant_node(lint_ctx *c, const onp_node *n, int64_t max_count, onp_tensor *out)
{
    for (size_t a = 0; a < n->n_attrs; a++) {
        const onp_attr *at = &n->attrs[a];
        onp_error e;
        onp_error_clear(&e);
        if (!strcmp(at->name, "value") && at->t) {
            if (!usable(at->t, max_count)) return 0;
            return onp_model_tensor(c->m, at->t, out, &e) == 0 ? 1 : not_const(c, &e);
        }
        if (!strcmp(at->name, "value_int")) return small_vector(c, out, ONP_INT64, 1, &at->i, 0, 1);
        if (!strcmp(at->name, "value_float"))
            return small_vector(c, out, ONP_FLOAT, 1, &at->f, 0, 1);
        if (!strcmp(at->name, "value_ints"))
            return small_vector(c, out, ONP_INT64, at->n_ints, at->ints, 1, max_count);
        if (!strcmp(at->name, "value_floats"))
            return small_vector(c, out, ONP_FLOAT, at->n_floats, at->floats, 1, max_count);
    }
    return 0;
}

int lint_const(lint_ctx *c, const lint_scope *s, const char *name, int64_t max_count,
               onp_tensor *out, int *overridable)
{
    memset(out, 0, sizeof *out);
    if (overridable) *overridable = 0;
    for (int step = 0; step < LINT_MAX_CHAIN && name && name[0]; step++) {
        for (const lint_scope *sc = s; sc; sc = sc->parent) {
            size_t i;
            if (onp_strmap_get(&sc->init, name, &i)) {
                const onp_tensor_view *v = &sc->g->initializers[i];
                onp_error e;
                onp_error_clear(&e);
                if (!usable(v, max_count)) return 0;
                if (onp_model_tensor(c->m, v, out, &e)) return not_const(c, &e);
                if (overridable) *overridable = onp_strmap_get(&sc->input, name, NULL);
                return 1;
            }
            if (onp_strmap_get(&sc->input, name, NULL)) return 0;
            if (onp_strmap_get(&sc->producer, name, &i)) {
                const onp_node *n = &sc->g->nodes[i];
                if (lint_is_op(n, "Constant")) return constant_node(c, n, max_count, out);
                if (!lint_is_op(n, "Identity") || n->n_inputs < 1) return 0;
                name = n->inputs[0];
                s = sc;
                goto next;
            }
        }
        return 0;
    next:;
    }
    return 0;
}

int64_t lint_i64(const onp_tensor *t, int64_t i)
{
    if (i < 0 || i >= t->count) return 0;
    if (t->dtype == ONP_INT64) {
        int64_t v;
        memcpy(&v, (const uint8_t *)t->data + 8 * i, 8);
        return v;
    }
    if (t->dtype == ONP_UINT64) {
        uint64_t v;
        memcpy(&v, (const uint8_t *)t->data + 8 * i, 8);
        return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    double d = onp_tensor_get_f64(t, i);
    if (d != d) return 0;
    if (d >= 9.2e18) return INT64_MAX;
    if (d <= -9.2e18) return INT64_MIN;
    return (int64_t)d;
}

// --- element types ----------------------------------------------------------------

/* Operators whose output has the element type of their first input. */
static const char *const passthrough =
    "|Identity|Reshape|Flatten|Squeeze|Unsqueeze|Transpose|Expand|Tile|Slice|Gather|"
    "GatherElements|GatherND|Concat|Split|Pad|Add|Sub|Mul|Div|Mod|Pow|Neg|Abs|Relu|LeakyRelu|"
    "PRelu|Sigmoid|Tanh|Exp|Log|Sqrt|Reciprocal|Floor|Ceil|Round|Sign|Clip|Max|Min|Sum|Mean|"
    "ReduceSum|ReduceMean|ReduceMax|ReduceMin|ReduceProd|ReduceL1|ReduceL2|ReduceLogSum|"
    "ReduceLogSumExp|ReduceSumSquare|MatMul|Gemm|Conv|ConvTranspose|MaxPool|AveragePool|"
    "GlobalAveragePool|GlobalMaxPool|LpPool|BatchNormalization|InstanceNormalization|"
    "LayerNormalization|LpNormalization|Softmax|LogSoftmax|Hardmax|Dropout|Resize|Upsample|Erf|"
    "Elu|Selu|Celu|HardSigmoid|HardSwish|Softplus|Softsign|Sin|Cos|Tan|Asin|Acos|Atan|Sinh|Cosh|"
    "Asinh|Acosh|Atanh|CumSum|Einsum|DepthToSpace|SpaceToDepth|ScatterND|ScatterElements|Scatter|"
    "Trilu|ReverseSequence|Range|Mish|Gelu|Compress|LRN|MeanVarianceNormalization|Shrink|"
    "ThresholdedRelu|TopK|Unique|";

int lint_in_list(const char *list, const char *op)
{
    size_t n = strlen(op);
    if (!n || strchr(op, '|')) return 0;
    for (const char *p = list; (p = strstr(p, op)) != NULL; p++)
        if (p > list && p[-1] == '|' && p[n] == '|') return 1;
    return 0;
}

static int64_t attr_int(const onp_node *n, const char *name, int64_t dflt)
{
    const onp_attr *a = onp_node_attr(n, name);
    return a ? a->i : dflt;
}

static size_t output_slot(const onp_node *n, const char *name)
{
    for (size_t k = 0; k < n->n_outputs; k++)
        if (!strcmp(n->outputs[k], name)) return k;
    return 0;
}

/* A declared type: initializer, graph input/output or value_info of a scope. */
static int32_t declared(const lint_scope *sc, const char *name)
{
    size_t i;
    if (onp_strmap_get(&sc->init, name, &i)) return sc->g->initializers[i].data_type;
    const onp_type *t = NULL;
    if (onp_strmap_get(&sc->input, name, &i))
        t = &sc->g->inputs[i].type;
    else if (onp_strmap_get(&sc->vinfo, name, &i))
        t = &sc->g->value_info[i].type;
    else
        for (size_t k = 0; k < sc->g->n_outputs && !t; k++)
            if (!strcmp(sc->g->outputs[k].name, name)) t = &sc->g->outputs[k].type;
    return t && t->kind == ONP_TYPE_TENSOR ? t->elem_type : 0;
}

int32_t lint_dtype(const lint_scope *s, const char *name)
{
    for (int step = 0; step < LINT_MAX_CHAIN && name && name[0]; step++) {
        const lint_scope *where = NULL;
        for (const lint_scope *sc = s; sc; sc = sc->parent) {
            int32_t dt = declared(sc, name);
            if (dt) return dt;
        }
        const onp_node *n = lint_producer(s, name, &where);
        if (!n || (n->domain[0] && strcmp(n->domain, "ai.onnx"))) return 0;
        const char *op = n->op_type;
        size_t slot = output_slot(n, name);
        const onp_attr *a;
        if (!strcmp(op, "Constant")) {
            for (size_t k = 0; k < n->n_attrs; k++) {
                const onp_attr *at = &n->attrs[k];
                if (!strcmp(at->name, "value") && at->t) return at->t->data_type;
                if (!strcmp(at->name, "value_int") || !strcmp(at->name, "value_ints"))
                    return ONP_INT64;
                if (!strcmp(at->name, "value_float") || !strcmp(at->name, "value_floats"))
                    return ONP_FLOAT;
                if (!strncmp(at->name, "value_string", 12)) return ONP_STRING;
            }
            return 0;
        }
        if (!strcmp(op, "Cast")) return (int32_t)attr_int(n, "to", 0);
        if (!strcmp(op, "Shape") || !strcmp(op, "Size") || !strcmp(op, "NonZero") ||
            !strcmp(op, "ArgMax") || !strcmp(op, "ArgMin") || !strcmp(op, "NonMaxSuppression"))
            return ONP_INT64;
        if ((!strcmp(op, "TopK") || !strcmp(op, "MaxPool")) && slot == 1) return ONP_INT64;
        if (!strcmp(op, "Unique") && slot > 0) return ONP_INT64;
        if (!strcmp(op, "Dropout") && slot == 1) return ONP_BOOL;
        if (lint_in_list(
                "|Equal|Less|LessOrEqual|Greater|GreaterOrEqual|And|Or|Xor|Not|IsNaN|IsInf|", op))
            return ONP_BOOL;
        if (!strcmp(op, "ConstantOfShape")) {
            a = onp_node_attr(n, "value");
            return a && a->t ? a->t->data_type : ONP_FLOAT;
        }
        if (!strcmp(op, "RandomNormal") || !strcmp(op, "RandomUniform"))
            return (int32_t)attr_int(n, "dtype", ONP_FLOAT);
        if (!strcmp(op, "Multinomial")) return (int32_t)attr_int(n, "dtype", ONP_INT32);
        if (!strcmp(op, "DequantizeLinear")) return ONP_FLOAT;
        if (lint_in_list("|RandomNormalLike|RandomUniformLike|Bernoulli|EyeLike|", op) &&
            onp_node_attr(n, "dtype"))
            return (int32_t)attr_int(n, "dtype", 0);
        const char *next;
        if (!strcmp(op, "CastLike") || !strcmp(op, "Where"))
            next = n->n_inputs > 1 ? n->inputs[1] : NULL;
        else if (lint_in_list("|RandomNormalLike|RandomUniformLike|Bernoulli|EyeLike|", op) ||
                 (lint_in_list(passthrough, op) && (slot == 0 || !strcmp(op, "Split"))))
            next = n->n_inputs > 0 ? n->inputs[0] : NULL;
        else
            return 0;
        name = next;
        s = where;
    }
    return 0;
}

// --- consumers --------------------------------------------------------------------

static int graph_reads(const onp_graph *g, const char *name, int depth)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onp_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++)
            if (!strcmp(n->inputs[k], name)) return 1;
        if (depth >= 64) continue;
        for (size_t a = 0; a < n->n_attrs; a++) {
            const onp_attr *at = &n->attrs[a];
            if (at->g && graph_reads(at->g, name, depth + 1)) return 1;
            for (size_t k = 0; k < at->n_graphs; k++)
                if (at->graphs[k] && graph_reads(at->graphs[k], name, depth + 1)) return 1;
        }
    }
    for (size_t k = 0; k < g->n_outputs; k++)
        if (depth == 0 && !strcmp(g->outputs[k].name, name)) return 1;
    return 0;
}

int lint_value_used(const lint_scope *s, const char *name)
{
    /* a value of a subgraph is visible outside it only as one of its outputs */
    return name && name[0] && graph_reads(s->g, name, 0);
}

void lint_for_consumers(const lint_scope *s, const char *name,
                        void (*fn)(const onp_node *consumer, void *arg), void *arg)
{
    if (!name || !name[0]) return;
    for (size_t i = 0; i < s->g->n_nodes; i++) {
        const onp_node *n = &s->g->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++)
            if (!strcmp(n->inputs[k], name)) {
                fn(n, arg);
                break;
            }
    }
}

// --- dynamic batch ----------------------------------------------------------------

/* Operators whose output 0 keeps dim 0 of input 0 whatever their
 * attributes (element-wise, convolutions, pools, normalisations). */
static const char *const keeps_dim0 =
    "|Identity|Cast|Relu|LeakyRelu|PRelu|Sigmoid|Tanh|Exp|Log|Sqrt|Reciprocal|Floor|Ceil|Round|"
    "Sign|Clip|Neg|Abs|Erf|Elu|Selu|Celu|HardSigmoid|HardSwish|Softplus|Softsign|Sin|Cos|Mish|"
    "Gelu|Not|IsNaN|IsInf|Add|Sub|Mul|Div|Pow|Max|Min|Mod|Equal|Less|Greater|LessOrEqual|"
    "GreaterOrEqual|And|Or|Xor|Where|Conv|ConvTranspose|MaxPool|AveragePool|GlobalAveragePool|"
    "GlobalMaxPool|LpPool|BatchNormalization|InstanceNormalization|LayerNormalization|"
    "LpNormalization|LRN|Dropout|MatMul|Resize|Upsample|DepthToSpace|SpaceToDepth|Softmax|"
    "LogSoftmax|Hardmax|CumSum|";

/* All axes in the attribute `name` or in constant input `input` are >= 1. */
static int axes_skip_dim0(lint_ctx *c, const lint_scope *s, const onp_node *n, size_t input)
{
    const onp_attr *a = onp_node_attr(n, "axes");
    if (a) {
        for (size_t i = 0; i < a->n_ints; i++)
            if (a->ints[i] < 1) return 0;
        return a->n_ints > 0;
    }
    if (n->n_inputs <= input || !n->inputs[input][0]) return 0;
    onp_tensor t;
    if (!lint_const(c, s, n->inputs[input], 64, &t, NULL)) return 0;
    int ok = t.count > 0;
    for (int64_t i = 0; i < t.count; i++)
        if (lint_i64(&t, i) < 1) ok = 0;
    onp_tensor_release(&t);
    return ok;
}

static int keeps_batch(lint_ctx *c, const lint_scope *s, const onp_node *n)
{
    const char *op = n->op_type;
    if (lint_in_list(keeps_dim0, op)) return 1;
    if (!strcmp(op, "Flatten")) return attr_int(n, "axis", 1) >= 1;
    if (!strcmp(op, "Gemm")) return attr_int(n, "transA", 0) == 0;
    if (!strcmp(op, "Concat") || !strcmp(op, "Split") || !strcmp(op, "Gather"))
        return attr_int(n, "axis", 0) >= 1;
    if (!strcmp(op, "Transpose")) {
        const onp_attr *p = onp_node_attr(n, "perm");
        return p && p->n_ints > 0 && p->ints[0] == 0;
    }
    if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") || !strcmp(op, "Slice"))
        return axes_skip_dim0(c, s, n, !strcmp(op, "Slice") ? 3 : 1);
    if (!strncmp(op, "Reduce", 6)) return axes_skip_dim0(c, s, n, 1);
    if (!strcmp(op, "Reshape") && n->n_inputs > 1) {
        onp_tensor t;
        if (!lint_const(c, s, n->inputs[1], 64, &t, NULL)) return 0;
        int ok = t.count > 0 && lint_i64(&t, 0) == 0 && attr_int(n, "allowzero", 0) == 0;
        onp_tensor_release(&t);
        return ok;
    }
    return 0;
}

void lint_batchdyn_compute(lint_ctx *c, const lint_scope *main)
{
    const onp_graph *g = main->g;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const onp_value_info *vi = &g->inputs[i];
        const onp_type *t = &vi->type;
        if (onp_strmap_get(&main->init, vi->name, NULL)) continue;
        if (t->kind != ONP_TYPE_TENSOR || !t->has_shape || t->rank < 1) continue;
        if ((t->dims[0].param && t->dims[0].param[0]) || t->dims[0].value < 0)
            if (onp_strmap_put(&c->batchdyn, vi->name, i)) c->oom = 1;
    }
    for (size_t i = 0; i < g->n_nodes && !c->oom; i++) {
        const onp_node *n = &g->nodes[i];
        if (n->domain[0] && strcmp(n->domain, "ai.onnx")) continue;
        if (n->n_inputs < 1 || !onp_strmap_get(&c->batchdyn, n->inputs[0], NULL)) continue;
        if (!keeps_batch(c, main, n)) continue;
        size_t nout = !strcmp(n->op_type, "Split") ? n->n_outputs : (n->n_outputs ? 1 : 0);
        for (size_t k = 0; k < nout; k++)
            if (n->outputs[k][0] && onp_strmap_put(&c->batchdyn, n->outputs[k], i)) c->oom = 1;
    }
}
