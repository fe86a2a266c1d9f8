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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint/lint_int.h"
#include "model/dataflow.h"

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

int lint_value_used(const lint_scope *s, const char *name)
{
    if (!name || !name[0]) return 0;
    for (size_t i = 0; i < s->g->n_nodes; i++)
        if (onp_node_reads(&s->g->nodes[i], name)) return 1;
    /* a value of a subgraph is visible outside it only as one of its outputs */
    for (size_t k = 0; k < s->g->n_outputs; k++)
        if (!strcmp(s->g->outputs[k].name, name)) return 1;
    return 0;
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

// --- value ranges -----------------------------------------------------------------

/* Bounds are doubles: ±infinity is "unbounded", and every finite bound is
 * kept within ±2^53, where doubles hold integers exactly, by widening
 * (a lower bound above 2^53 drops to 2^53, one below -2^53 to -infinity),
 * so the arithmetic below is sound for int64 shape values.  Finite bounds
 * are whole numbers (float constants and quotients are widened to them), so
 * Floor, Ceil, Round and casts to integers keep them. */
#define EXACT 9007199254740992.0 /* 2^53 */
#define INF HUGE_VAL

static double norm_lo(double x)
{
    if (x != x || x < -EXACT) return -INF;
    return x > EXACT ? EXACT : x;
}

static double norm_hi(double x)
{
    if (x != x || x > EXACT) return INF;
    return x < -EXACT ? -EXACT : x;
}

static lint_range mk_range(double lo, double hi)
{
    lint_range r = {norm_lo(lo), norm_hi(hi)};
    if (r.lo > r.hi) r = (lint_range){-INF, INF};
    return r;
}

static const lint_range UNBOUNDED = {-HUGE_VAL, HUGE_VAL};

static lint_range hull(lint_range a, lint_range b)
{
    return mk_range(a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi);
}

/* x * y where 0 times anything (infinity included) is 0. */
static double mul0(double x, double y)
{
    return x == 0 || y == 0 ? 0 : x * y;
}

static lint_range range_mul(lint_range a, lint_range b)
{
    double p[4] = {mul0(a.lo, b.lo), mul0(a.lo, b.hi), mul0(a.hi, b.lo), mul0(a.hi, b.hi)};
    double lo = p[0], hi = p[0];
    for (int i = 1; i < 4; i++) {
        if (p[i] < lo) lo = p[i];
        if (p[i] > hi) hi = p[i];
    }
    return mk_range(lo, hi);
}

/* Real quotient bounds, widened to whole numbers: truncating integer
 * division lands between floor and ceil of the real quotient.  A divisor
 * range holding 0 bounds nothing. */
static lint_range range_div(lint_range a, lint_range b)
{
    if (b.lo <= 0 && b.hi >= 0) return UNBOUNDED;
    double q[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
    double lo = INF, hi = -INF;
    for (int i = 0; i < 4; i++) {
        if (q[i] != q[i]) return UNBOUNDED; /* inf / inf */
        if (q[i] < lo) lo = q[i];
        if (q[i] > hi) hi = q[i];
    }
    return mk_range(floor(lo), ceil(hi));
}

/* Mod: fmod=0 takes the divisor's sign, fmod=1 the dividend's; |r| < |d|. */
static lint_range range_mod(lint_range a, lint_range b, int fmod)
{
    double m = fabs(b.lo) > fabs(b.hi) ? fabs(b.lo) : fabs(b.hi);
    if (!fmod) {
        if (b.lo > 0) return mk_range(0, a.lo >= 0 && a.hi < b.hi ? a.hi : b.hi);
        if (b.hi < 0) return mk_range(b.lo, 0);
        return mk_range(-m, m);
    }
    if (a.lo >= 0) return mk_range(0, a.hi < m ? a.hi : m);
    if (a.hi <= 0) return mk_range(-a.lo < m ? a.lo : -m, 0);
    return mk_range(-m, m);
}

/* The largest whole number a float type holds exactly, or 0 for other types. */
static double float_exact(int32_t dt)
{
    switch (dt) {
    case ONP_DOUBLE: return EXACT;
    case ONP_FLOAT: return 16777216.0;
    case ONP_FLOAT16: return 2048.0;
    case ONP_BFLOAT16: return 256.0;
    default: return 0;
    }
}

/* Cast's output: the input's range where the target holds it, else what
 * the target alone promises (wrapping and rounding are not followed). */
static lint_range range_cast(lint_range a, int32_t from, int32_t to)
{
    const onp_dtype_desc *d = onp_dtype_info(to), *f = onp_dtype_info(from);
    if (!d) return UNBOUNDED;
    if (to == ONP_BOOL) return mk_range(0, 1);
    /* a target that holds every value of the source: nothing wraps */
    if (f && (from == to || f->kind == ONP_KIND_BOOL ||
              (f->kind == ONP_KIND_SINT && d->kind == ONP_KIND_SINT && f->size <= d->size) ||
              (f->kind == ONP_KIND_UINT && d->kind == ONP_KIND_SINT && f->size < d->size) ||
              (f->kind == ONP_KIND_UINT && d->kind == ONP_KIND_UINT && f->size <= d->size)))
        return a;
    if (d->kind == ONP_KIND_FLOAT) {
        double x = float_exact(to);
        return x ? mk_range(a.lo < -x  ? -INF
                            : a.lo > x ? x
                                       : a.lo,
                            a.hi > x    ? INF
                            : a.hi < -x ? -x
                                        : a.hi)
                 : UNBOUNDED;
    }
    double bits = 8.0 * (double)d->size;
    if (d->kind == ONP_KIND_SINT) {
        double lim = ldexp(1.0, (int)bits - 1);
        if (a.lo >= -lim && a.hi < lim) return mk_range(floor(a.lo), ceil(a.hi));
        return UNBOUNDED;
    }
    if (d->kind == ONP_KIND_UINT) {
        if (a.lo >= 0 && a.hi < ldexp(1.0, (int)bits)) return mk_range(floor(a.lo), ceil(a.hi));
        return mk_range(0, INF);
    }
    return UNBOUNDED;
}

/* The walk behind lint_value_range / lint_static_extent: one memo per
 * question, a budget on visited values, a cap on depth (a malformed model
 * may hold a cycle). */
#define FACT_BUDGET 4096
#define FACT_DEPTH 200

typedef struct fact_walk {
    lint_ctx *c;
    onp_strmap memo; /* name -> index into ranges / flags */
    lint_range *ranges;
    unsigned char *flags;
    size_t n, cap;
    int budget;
} fact_walk;

static void fact_walk_free(fact_walk *w)
{
    onp_strmap_free(&w->memo);
    free(w->ranges);
    free(w->flags);
}

/* The memo slot of `name`: 1 and *ix when known, 0 when new. */
static int memo_get(fact_walk *w, const char *name, size_t *ix)
{
    return onp_strmap_get(&w->memo, name, ix);
}

static void memo_put(fact_walk *w, const char *name, lint_range r, unsigned char flag)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 32;
        lint_range *rp = realloc(w->ranges, cap * sizeof *rp);
        if (rp) w->ranges = rp;
        unsigned char *fp = rp ? realloc(w->flags, cap) : NULL;
        if (fp) w->flags = fp;
        if (!rp || !fp) {
            w->c->oom = 1;
            return;
        }
        w->cap = cap;
    }
    if (onp_strmap_put(&w->memo, name, w->n)) {
        w->c->oom = 1;
        return;
    }
    w->ranges[w->n] = r;
    w->flags[w->n++] = flag;
}

/* The bounds of a small constant's elements. */
static int const_range(lint_ctx *c, const lint_scope *s, const char *name, lint_range *out)
{
    onp_tensor t;
    int over = 0;
    if (!lint_const(c, s, name, 4096, &t, &over)) return 0;
    if (over || t.count < 1) {
        onp_tensor_release(&t);
        return over ? (*out = UNBOUNDED, 1) : 0;
    }
    double lo = INF, hi = -INF;
    int is64 = t.dtype == ONP_INT64 || t.dtype == ONP_UINT64;
    for (int64_t i = 0; i < t.count; i++) {
        double v = is64 ? (double)lint_i64(&t, i) : onp_tensor_get_f64(&t, i);
        if (v != v) {
            lo = -INF, hi = INF;
            break;
        }
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    onp_tensor_release(&t);
    *out = mk_range(floor(lo), ceil(hi));
    return 1;
}

static lint_range range_of(fact_walk *w, const lint_scope *s, const char *name, int depth);

static lint_range range_in(fact_walk *w, const lint_scope *s, const onp_node *n, size_t k,
                           int depth)
{
    if (k >= n->n_inputs || !n->inputs[k][0]) return UNBOUNDED;
    return range_of(w, s, n->inputs[k], depth + 1);
}

/* A Clip bound: input k (opset 11+) or attribute `attr` (before). */
static double clip_bound(fact_walk *w, const lint_scope *s, const onp_node *n, size_t k,
                         const char *attr, int lower)
{
    const onp_attr *a = onp_node_attr(n, attr);
    if (a) return a->f;
    if (k < n->n_inputs && n->inputs[k][0]) {
        lint_range r;
        if (const_range(w->c, s, n->inputs[k], &r)) return lower ? r.lo : r.hi;
    }
    return lower ? -INF : INF;
}

/* Operators whose output values are a selection of input 0's. */
static const char *const selects =
    "|Identity|Reshape|Flatten|Squeeze|Unsqueeze|Transpose|Slice|Gather|GatherElements|GatherND|"
    "Expand|Tile|Split|ReduceMax|ReduceMin|Compress|DepthToSpace|SpaceToDepth|ReverseSequence|"
    "Floor|Ceil|Round|";

static lint_range range_node(fact_walk *w, const lint_scope *s, const onp_node *n, size_t slot,
                             int depth)
{
    const char *op = n->op_type;
    if (n->domain[0] && strcmp(n->domain, "ai.onnx")) return UNBOUNDED;
    if (!strcmp(op, "Shape") || !strcmp(op, "Size") || !strcmp(op, "NonZero") ||
        !strcmp(op, "ArgMax") || !strcmp(op, "ArgMin") || !strcmp(op, "Sqrt") ||
        !strcmp(op, "Exp") || !strcmp(op, "Sigmoid") || !strcmp(op, "Softmax") ||
        !strcmp(op, "Softplus") || !strcmp(op, "Relu") || !strcmp(op, "Abs"))
        return mk_range(0, INF);
    if ((!strcmp(op, "TopK") || !strcmp(op, "Unique")) && slot > 0) return mk_range(0, INF);
    if (lint_in_list("|Equal|Less|LessOrEqual|Greater|GreaterOrEqual|And|Or|Xor|Not|IsNaN|IsInf|",
                     op))
        return mk_range(0, 1);
    if (lint_in_list(selects, op) && (slot == 0 || !strcmp(op, "Split")))
        return range_in(w, s, n, 0, depth);
    if (!strcmp(op, "Concat") || !strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Where") ||
        !strcmp(op, "Mean")) {
        size_t first = !strcmp(op, "Where") ? 1 : 0;
        if (n->n_inputs <= first) return UNBOUNDED;
        lint_range r = range_in(w, s, n, first, depth);
        for (size_t k = first + 1; k < n->n_inputs; k++) {
            lint_range q = range_in(w, s, n, k, depth);
            if (!strcmp(op, "Max"))
                r = mk_range(q.lo > r.lo ? q.lo : r.lo, q.hi > r.hi ? q.hi : r.hi);
            else if (!strcmp(op, "Min"))
                r = mk_range(q.lo < r.lo ? q.lo : r.lo, q.hi < r.hi ? q.hi : r.hi);
            else
                r = hull(r, q);
        }
        return r;
    }
    if (!strcmp(op, "Add") || !strcmp(op, "Sum")) {
        if (!n->n_inputs) return UNBOUNDED;
        lint_range r = range_in(w, s, n, 0, depth);
        for (size_t k = 1; k < n->n_inputs; k++) {
            lint_range q = range_in(w, s, n, k, depth);
            r = mk_range(r.lo + q.lo, r.hi + q.hi); /* -inf + inf only with both unbounded */
        }
        return r;
    }
    if (!strcmp(op, "Neg")) {
        lint_range a = range_in(w, s, n, 0, depth);
        return mk_range(-a.hi, -a.lo);
    }
    if (n->n_inputs >= 2 && (!strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div") ||
                             !strcmp(op, "Mod") || !strcmp(op, "Pow"))) {
        lint_range a = range_in(w, s, n, 0, depth), b = range_in(w, s, n, 1, depth);
        if (!strcmp(op, "Sub")) return mk_range(a.lo - b.hi, a.hi - b.lo);
        if (!strcmp(op, "Mul")) return range_mul(a, b);
        if (!strcmp(op, "Div")) return range_div(a, b);
        if (!strcmp(op, "Mod")) return range_mod(a, b, (int)attr_int(n, "fmod", 0) != 0);
        return a.lo >= 0 ? mk_range(0, INF) : UNBOUNDED;
    }
    if (!strcmp(op, "Clip")) {
        lint_range a = range_in(w, s, n, 0, depth);
        /* whole-number bounds, as everywhere here: Floor or a cast may follow */
        double lo = floor(clip_bound(w, s, n, 1, "min", 1));
        double hi = ceil(clip_bound(w, s, n, 2, "max", 0));
        return mk_range(a.lo > lo ? a.lo : lo, a.hi < hi ? a.hi : hi);
    }
    if (!strcmp(op, "Cast"))
        return range_cast(range_in(w, s, n, 0, depth),
                          n->n_inputs ? lint_dtype(s, n->inputs[0]) : 0,
                          (int32_t)attr_int(n, "to", 0));
    if (!strcmp(op, "ConstantOfShape")) {
        const onp_attr *a = onp_node_attr(n, "value");
        onp_tensor t;
        onp_error e;
        onp_error_clear(&e);
        if (!a || !a->t) return mk_range(0, 0);
        if (a->t->count != 1 || onp_model_tensor(w->c->m, a->t, &t, &e)) return UNBOUNDED;
        double v = t.dtype == ONP_INT64 ? (double)lint_i64(&t, 0) : onp_tensor_get_f64(&t, 0);
        onp_tensor_release(&t);
        return v == v ? mk_range(floor(v), ceil(v)) : UNBOUNDED;
    }
    if (!strcmp(op, "Range") && n->n_inputs >= 3) {
        lint_range st = range_in(w, s, n, 0, depth), lim = range_in(w, s, n, 1, depth);
        lint_range d = range_in(w, s, n, 2, depth);
        if (d.lo > 0) return mk_range(st.lo, st.hi > lim.hi ? st.hi : lim.hi);
        if (d.hi < 0) return mk_range(st.lo < lim.lo ? st.lo : lim.lo, st.hi);
        return UNBOUNDED;
    }
    if (!strcmp(op, "ReduceSum") || !strcmp(op, "ReduceProd")) {
        lint_range a = range_in(w, s, n, 0, depth);
        if (a.lo >= 0) return mk_range(0, INF);
        if (!strcmp(op, "ReduceSum") && a.hi <= 0) return mk_range(-INF, 0);
    }
    return UNBOUNDED;
}

static lint_range range_of(fact_walk *w, const lint_scope *s, const char *name, int depth)
{
    size_t ix;
    if (memo_get(w, name, &ix)) return w->ranges[ix];
    lint_range r = UNBOUNDED;
    if (depth > FACT_DEPTH || w->budget-- <= 0 || w->c->oom) return r;
    memo_put(w, name, r, 0); /* a cycle reads "unbounded" */
    const lint_scope *where = s;
    const onp_node *n = lint_producer(s, name, &where);
    if (n && !lint_is_op(n, "Constant") && !lint_is_op(n, "Identity"))
        r = range_node(w, where, n, output_slot(n, name), depth);
    else if (!const_range(w->c, s, name, &r) && n && lint_is_op(n, "Identity") && n->n_inputs)
        r = range_of(w, where, n->inputs[0], depth + 1);
    else if (!n && lint_is_graph_input(s, name)) {
        const onp_dtype_desc *d = onp_dtype_info(lint_dtype(s, name));
        if (d && (d->kind == ONP_KIND_UINT || d->kind == ONP_KIND_BOOL)) r = mk_range(0, INF);
    }
    if (memo_get(w, name, &ix)) w->ranges[ix] = r;
    return r;
}

lint_range lint_value_range(lint_ctx *c, const lint_scope *s, const char *name)
{
    fact_walk w;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.budget = FACT_BUDGET;
    lint_range r = name && name[0] ? range_of(&w, s, name, 0) : UNBOUNDED;
    fact_walk_free(&w);
    return r;
}

// --- static extents ---------------------------------------------------------------

/* flags of the extent walk */
enum { F_EXTENT = 1, F_VALUE = 2 };

static unsigned facts_of(fact_walk *w, const lint_scope *s, const char *name, int depth);

static unsigned facts_in(fact_walk *w, const lint_scope *s, const onp_node *n, size_t k, int depth)
{
    if (k >= n->n_inputs || !n->inputs[k][0]) return F_EXTENT | F_VALUE; /* absent: fine */
    return facts_of(w, s, n->inputs[k], depth + 1);
}

/* Elementwise and shape-arithmetic operators: the output is static when
 * every input is. */
static const char *const static_ops =
    "|Identity|Cast|Neg|Abs|Not|Floor|Ceil|Round|Relu|Sign|Sqrt|Reciprocal|Add|Sub|Mul|Div|Mod|"
    "Pow|Max|Min|Sum|Equal|Less|LessOrEqual|Greater|GreaterOrEqual|And|Or|Xor|Where|Concat|"
    "Transpose|Gather|Squeeze|Unsqueeze|Slice|";

static unsigned facts_node(fact_walk *w, const lint_scope *s, const onp_node *n, int depth)
{
    const char *op = n->op_type;
    if (n->domain[0] && strcmp(n->domain, "ai.onnx")) return 0;
    if (!strcmp(op, "Shape") || !strcmp(op, "Size"))
        return F_EXTENT | (facts_in(w, s, n, 0, depth) & F_EXTENT ? F_VALUE : 0);
    if (lint_in_list(static_ops, op)) {
        unsigned all = F_EXTENT | F_VALUE;
        for (size_t k = 0; k < n->n_inputs; k++) all &= facts_in(w, s, n, k, depth);
        /* the operands that only say where (axes, starts, ends, steps) must be
         * static values for the extent to be static */
        size_t first_arg =
            !strcmp(op, "Slice") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")
                ? 1
                : n->n_inputs;
        for (size_t k = first_arg; k < n->n_inputs; k++)
            if (!(facts_in(w, s, n, k, depth) & F_VALUE)) all = 0;
        return all;
    }
    if (!strcmp(op, "Reshape") || !strcmp(op, "Expand") || !strcmp(op, "Tile")) {
        unsigned data = facts_in(w, s, n, 0, depth), shape = facts_in(w, s, n, 1, depth);
        if (n->n_inputs < 2 || !(shape & F_VALUE)) return 0;
        return data;
    }
    if (!strcmp(op, "ConstantOfShape") || !strcmp(op, "Range")) {
        unsigned all = F_EXTENT | F_VALUE;
        for (size_t k = 0; k < n->n_inputs; k++) all &= facts_in(w, s, n, k, depth);
        return all & F_VALUE ? F_EXTENT | F_VALUE : 0;
    }
    return 0;
}

/* 1 when `name` is an initializer that no caller can override (not also a
 * graph input): its data is never read here. */
static int fixed_initializer(const lint_scope *s, const char *name)
{
    for (; s; s = s->parent) {
        if (onp_strmap_get(&s->input, name, NULL)) return 0;
        if (onp_strmap_get(&s->init, name, NULL)) return 1;
        if (onp_strmap_get(&s->producer, name, NULL)) return 0;
    }
    return 0;
}

static unsigned facts_of(fact_walk *w, const lint_scope *s, const char *name, int depth)
{
    size_t ix;
    if (memo_get(w, name, &ix)) return w->flags[ix];
    if (depth > FACT_DEPTH || w->budget-- <= 0 || w->c->oom) return 0;
    memo_put(w, name, UNBOUNDED, 0);
    const lint_scope *where = s;
    const onp_node *n = lint_producer(s, name, &where);
    unsigned f = 0;
    if (n && !lint_is_op(n, "Constant"))
        f = facts_node(w, where, n, depth);
    else if (n || fixed_initializer(s, name))
        f = F_EXTENT | F_VALUE;
    if (memo_get(w, name, &ix)) w->flags[ix] = (unsigned char)f;
    return f;
}

int lint_static_extent(lint_ctx *c, const lint_scope *s, const char *name)
{
    fact_walk w;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.budget = FACT_BUDGET;
    int r = name && name[0] && (facts_of(&w, s, name, 0) & F_EXTENT);
    fact_walk_free(&w);
    return r;
}
