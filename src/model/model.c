/*
 * model.c — decode a ModelProto into the zero-copy view of model.h.
 *
 * Every repeated field is read in two passes over the same bytes: count,
 * allocate the array once in the arena, fill.  Tensor bytes are never
 * touched here (tensorproto.c keeps spans).  Nesting (graphs in attributes
 * in nodes, types in types) is capped at ONP_PB_MAX_DEPTH.  Errors carry the
 * path of the element ("graph.node[3].attribute[0]") and the byte offset.
 *
 * Field numbers are onnx.proto's; the enums below are the only place that
 * names them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"
#include "model/tensorproto.h"
#include "util/sha256.h"

enum { /* ModelProto */
       M_IR_VERSION = 1,
       M_PRODUCER_NAME = 2,
       M_PRODUCER_VERSION = 3,
       M_DOMAIN = 4,
       M_MODEL_VERSION = 5,
       M_DOC_STRING = 6,
       M_GRAPH = 7,
       M_OPSET_IMPORT = 8,
       M_METADATA_PROPS = 14,
       M_FUNCTIONS = 25
};
enum { /* GraphProto */
       G_NODE = 1,
       G_NAME = 2,
       G_INITIALIZER = 5,
       G_INPUT = 11,
       G_OUTPUT = 12,
       G_VALUE_INFO = 13,
       G_SPARSE_INITIALIZER = 15
};
enum { /* NodeProto */
       N_INPUT = 1,
       N_OUTPUT = 2,
       N_NAME = 3,
       N_OP_TYPE = 4,
       N_ATTRIBUTE = 5,
       N_DOMAIN = 7
};
enum { /* AttributeProto */
       A_NAME = 1,
       A_F = 2,
       A_I = 3,
       A_S = 4,
       A_T = 5,
       A_G = 6,
       A_FLOATS = 7,
       A_INTS = 8,
       A_STRINGS = 9,
       A_TENSORS = 10,
       A_GRAPHS = 11,
       A_TP = 14,
       A_TYPE_PROTOS = 15,
       A_TYPE = 20,
       A_REF_ATTR_NAME = 21,
       A_SPARSE_TENSOR = 22,
       A_SPARSE_TENSORS = 23
};
enum { /* FunctionProto */
       F_NAME = 1,
       F_INPUT = 4,
       F_OUTPUT = 5,
       F_NODE = 7,
       F_OPSET_IMPORT = 9,
       F_DOMAIN = 10
};

typedef struct ctx {
    onp_model *m;
    onp_arena *a;
    const char *file;
    const uint8_t *base;
    onp_error *e;
} ctx;

static int nomem(ctx *x)
{
    return onp_error_set(x->e, ONP_ERR_NOMEM, x->file, NULL, -1, "out of memory");
}

static int str_field(ctx *x, const onp_pb_cursor *c, const onp_pb_field *f, const char *what,
                     const char **out)
{
    if (onp_pb_expect(c, f, ONP_WT_LEN, what, x->e)) return -1;
    char *s = onp_arena_strndup(x->a, f->data, f->len);
    if (!s) return nomem(x);
    *out = s;
    return 0;
}

static int int_field(ctx *x, const onp_pb_cursor *c, const onp_pb_field *f, const char *what,
                     int64_t *out)
{
    if (onp_pb_expect(c, f, ONP_WT_VARINT, what, x->e)) return -1;
    *out = (int64_t)f->v;
    return 0;
}

/* Count occurrences of each field number below 32 in a message. */
static int count_fields(ctx *x, const onp_pb_cursor *c, size_t counts[32])
{
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    int r;
    memset(counts, 0, 32 * sizeof counts[0]);
    while ((r = onp_pb_next(&cur, &f, x->e)) == 1)
        if (f.num < 32) counts[f.num]++;
    return r < 0 ? -1 : 0;
}

static void *arr(ctx *x, size_t n, size_t size)
{
    return onp_arena_array(x->a, n ? n : 1, size);
}

static int span_of(const onp_pb_cursor *c, const onp_pb_field *f, onp_span *s)
{
    s->p = f->data;
    s->n = f->len;
    s->off = (uint64_t)onp_pb_off(c, f->data);
    return 0;
}

static int prefix_idx(onp_error *e, const char *name, size_t i)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s[%zu]", name, i);
    return onp_error_field_prefix(e, buf);
}

/* --- types ------------------------------------------------------------ */

static int parse_shape(ctx *x, const onp_pb_cursor *c, onp_type *t)
{
    size_t counts[32];
    if (count_fields(x, c, counts)) return -1;
    t->has_shape = 1;
    t->rank = counts[1];
    if (!(t->dims = arr(x, t->rank, sizeof *t->dims))) return nomem(x);
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    size_t i = 0;
    while (onp_pb_next(&cur, &f, x->e) == 1) {
        if (f.num != 1) continue;
        if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "TensorShapeProto.dim", x->e)) return -1;
        onp_dim *d = &t->dims[i++];
        d->value = -1;
        onp_pb_cursor dc;
        onp_pb_field g;
        onp_pb_sub(&cur, &f, &dc);
        int r;
        while ((r = onp_pb_next(&dc, &g, x->e)) == 1) {
            if (g.num == 1) {
                int64_t v;
                if (int_field(x, &dc, &g, "Dimension.dim_value", &v)) return -1;
                d->value = v;
            } else if (g.num == 2) {
                if (str_field(x, &dc, &g, "Dimension.dim_param", &d->param)) return -1;
            }
        }
        if (r < 0) return -1;
    }
    return 0;
}

static int parse_type(ctx *x, const onp_pb_cursor *c, onp_type *t, int depth)
{
    if (depth > ONP_PB_MAX_DEPTH)
        return onp_error_set(x->e, ONP_ERR_FORMAT, x->file, "TypeProto", onp_pb_off(c, c->p),
                             "types nested deeper than %d", ONP_PB_MAX_DEPTH);
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    int r;
    while ((r = onp_pb_next(&cur, &f, x->e)) == 1) {
        onp_pb_cursor sc;
        if (f.num == 1 || f.num == 8) { /* tensor_type, sparse_tensor_type */
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "TypeProto.tensor_type", x->e)) return -1;
            t->kind = f.num == 1 ? ONP_TYPE_TENSOR : ONP_TYPE_SPARSE_TENSOR;
            onp_pb_sub(&cur, &f, &sc);
            onp_pb_field g;
            while ((r = onp_pb_next(&sc, &g, x->e)) == 1) {
                if (g.num == 1) {
                    int64_t v;
                    if (int_field(x, &sc, &g, "TypeProto.Tensor.elem_type", &v)) return -1;
                    t->elem_type = (int32_t)v;
                } else if (g.num == 2) {
                    if (onp_pb_expect(&sc, &g, ONP_WT_LEN, "TypeProto.Tensor.shape", x->e))
                        return -1;
                    onp_pb_cursor shc;
                    onp_pb_sub(&sc, &g, &shc);
                    if (parse_shape(x, &shc, t)) return -1;
                }
            }
            if (r < 0) return -1;
        } else if (f.num == 4 || f.num == 9) { /* sequence_type, optional_type: elem_type = 1 */
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "TypeProto.sequence_type", x->e)) return -1;
            onp_pb_sub(&cur, &f, &sc);
            onp_pb_field g;
            onp_type inner = {0};
            while ((r = onp_pb_next(&sc, &g, x->e)) == 1) {
                if (g.num != 1) continue;
                if (onp_pb_expect(&sc, &g, ONP_WT_LEN, "TypeProto.elem_type", x->e)) return -1;
                onp_pb_cursor ic;
                onp_pb_sub(&sc, &g, &ic);
                if (parse_type(x, &ic, &inner, depth + 1)) return -1;
            }
            if (r < 0) return -1;
            t->kind = f.num == 4 ? ONP_TYPE_SEQUENCE : ONP_TYPE_OPTIONAL;
            t->elem_type = inner.elem_type;
        } else if (f.num == 5) {
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "TypeProto.map_type", x->e)) return -1;
            t->kind = ONP_TYPE_MAP;
        }
    }
    return r < 0 ? -1 : 0;
}

static int parse_value_info(ctx *x, const onp_pb_cursor *c, onp_value_info *vi)
{
    vi->name = "";
    vi->raw.p = c->p;
    vi->raw.n = (size_t)(c->end - c->p);
    vi->raw.off = (uint64_t)onp_pb_off(c, c->p);
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    int r;
    while ((r = onp_pb_next(&cur, &f, x->e)) == 1) {
        if (f.num == 1) {
            if (str_field(x, &cur, &f, "ValueInfoProto.name", &vi->name)) return -1;
        } else if (f.num == 2) {
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "ValueInfoProto.type", x->e)) return -1;
            onp_pb_cursor tc;
            onp_pb_sub(&cur, &f, &tc);
            if (parse_type(x, &tc, &vi->type, 0)) return -1;
        }
    }
    return r < 0 ? -1 : 0;
}

static int parse_tensor(ctx *x, const onp_pb_cursor *c, const onp_pb_field *f, const char *what,
                        onp_tensor_view *v)
{
    if (onp_pb_expect(c, f, ONP_WT_LEN, what, x->e)) return -1;
    onp_pb_cursor tc;
    onp_pb_sub(c, f, &tc);
    if (onp_tp_parse(&tc, x->a, v, x->e)) return -1;
    if (v->is_external) x->m->has_external = 1;
    return 0;
}

static int parse_sparse(ctx *x, const onp_pb_cursor *c, const onp_pb_field *f, onp_sparse_view *s)
{
    if (onp_pb_expect(c, f, ONP_WT_LEN, "SparseTensorProto", x->e)) return -1;
    onp_pb_cursor sc;
    onp_pb_sub(c, f, &sc);
    size_t counts[32];
    if (count_fields(x, &sc, counts)) return -1;
    size_t nd = 0;
    onp_pb_cursor cur = sc;
    onp_pb_field g;
    while (onp_pb_next(&cur, &g, x->e) == 1)
        if (g.num == 3) {
            size_t k;
            if (onp_pb_packed_count(&cur, &g, ONP_WT_VARINT, &k, x->e)) return -1;
            nd += k;
        }
    if (nd > ONP_MAX_RANK)
        return onp_error_set(x->e, ONP_ERR_FORMAT, x->file, "SparseTensorProto.dims",
                             onp_pb_off(c, f->start), "rank %zu exceeds %d", nd, ONP_MAX_RANK);
    if (!(s->dims = arr(x, nd, sizeof *s->dims))) return nomem(x);
    s->values.name = s->indices.name = ""; /* a part may be absent */
    cur = sc;
    while (onp_pb_next(&cur, &g, x->e) == 1) {
        if (g.num == 1 && parse_tensor(x, &cur, &g, "SparseTensorProto.values", &s->values))
            return -1;
        if (g.num == 2 && parse_tensor(x, &cur, &g, "SparseTensorProto.indices", &s->indices))
            return -1;
        if (g.num == 3) {
            uint64_t tmp[ONP_MAX_RANK];
            size_t k;
            onp_pb_packed_count(&cur, &g, ONP_WT_VARINT, &k, x->e);
            onp_pb_packed_read(&g, ONP_WT_VARINT, tmp);
            for (size_t i = 0; i < k; i++) s->dims[s->rank++] = (int64_t)tmp[i];
        }
    }
    for (size_t i = 0; i < s->rank; i++)
        if (s->dims[i] < 0)
            return onp_error_set(x->e, ONP_ERR_FORMAT, x->file, "SparseTensorProto.dims",
                                 onp_pb_off(c, f->start), "dimension %zu is negative", i);
    return 0;
}

static int parse_graph(ctx *x, const onp_pb_cursor *c, onp_graph *g, int depth);

static int parse_subgraph(ctx *x, const onp_pb_cursor *c, const onp_pb_field *f, int depth,
                          onp_graph **out)
{
    if (onp_pb_expect(c, f, ONP_WT_LEN, "AttributeProto.g", x->e)) return -1;
    onp_graph *g = onp_arena_alloc(x->a, sizeof *g);
    if (!g) return nomem(x);
    onp_pb_cursor gc;
    onp_pb_sub(c, f, &gc);
    if (parse_graph(x, &gc, g, depth + 1)) return -1;
    *out = g;
    return 0;
}

/* The arrays of an AttributeProto's repeated fields, sized for every
 * occurrence (floats and ints counted element by element: they may be
 * packed); their n_* counts left 0 for parse_attr_repeated to fill. */
static int alloc_attr_arrays(ctx *x, const onp_pb_cursor *c, onp_attr *at)
{
    size_t counts[32];
    if (count_fields(x, c, counts)) return -1;
    size_t nf = 0, ni = 0;
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    while (onp_pb_next(&cur, &f, x->e) == 1) {
        size_t k;
        if (f.num == A_FLOATS) {
            if (onp_pb_packed_count(&cur, &f, ONP_WT_I32, &k, x->e))
                return onp_error_field_prefix(x->e, "AttributeProto.floats");
            nf += k;
        } else if (f.num == A_INTS) {
            if (onp_pb_packed_count(&cur, &f, ONP_WT_VARINT, &k, x->e))
                return onp_error_field_prefix(x->e, "AttributeProto.ints");
            ni += k;
        }
    }
    if (!(at->floats = arr(x, nf, sizeof(float))) || !(at->ints = arr(x, ni, sizeof(int64_t))) ||
        !(at->strings = arr(x, counts[A_STRINGS], sizeof(onp_span))) ||
        !(at->tensors = arr(x, counts[A_TENSORS], sizeof(onp_tensor_view))) ||
        !(at->graphs = arr(x, counts[A_GRAPHS], sizeof(onp_graph *))) ||
        !(at->sparse_tensors = arr(x, counts[A_SPARSE_TENSORS], sizeof(onp_sparse_view))) ||
        !(at->type_protos = arr(x, counts[A_TYPE_PROTOS], sizeof(onp_type))))
        return nomem(x);
    return 0;
}

/* One occurrence of a repeated field (floats, ints, strings, tensors,
 * graphs, sparse_tensors, type_protos), appended to its array
 * (alloc_attr_arrays sized them); any other field is left alone. */
static int parse_attr_repeated(ctx *x, const onp_pb_cursor *cur, const onp_pb_field *f,
                               onp_attr *at, int depth)
{
    switch (f->num) {
    case A_FLOATS: {
        if (f->wt == ONP_WT_I32) {
            uint32_t u = (uint32_t)f->v;
            memcpy(&at->floats[at->n_floats++], &u, 4);
            break;
        }
        for (size_t i = 0; i + 4 <= f->len; i += 4) { /* packed fixed32, little-endian */
            uint32_t u = (uint32_t)f->data[i] | (uint32_t)f->data[i + 1] << 8 |
                         (uint32_t)f->data[i + 2] << 16 | (uint32_t)f->data[i + 3] << 24;
            memcpy(&at->floats[at->n_floats++], &u, 4);
        }
        break;
    }
    case A_INTS: {
        if (f->wt == ONP_WT_VARINT) {
            at->ints[at->n_ints++] = (int64_t)f->v;
            break;
        }
        const uint8_t *p = f->data, *end = f->data + f->len;
        while (p < end) {
            uint64_t v;
            size_t k = onp_pb_varint(p, (size_t)(end - p), &v);
            if (!k) break;
            p += k;
            at->ints[at->n_ints++] = (int64_t)v;
        }
        break;
    }
    case A_STRINGS:
        if (onp_pb_expect(cur, f, ONP_WT_LEN, "AttributeProto.strings", x->e)) return -1;
        span_of(cur, f, &at->strings[at->n_strings++]);
        break;
    case A_TENSORS:
        if (parse_tensor(x, cur, f, "AttributeProto.tensors", &at->tensors[at->n_tensors]))
            return prefix_idx(x->e, "tensors", at->n_tensors);
        at->n_tensors++;
        break;
    case A_GRAPHS:
        if (parse_subgraph(x, cur, f, depth, &at->graphs[at->n_graphs]))
            return prefix_idx(x->e, "graphs", at->n_graphs);
        at->n_graphs++;
        break;
    case A_SPARSE_TENSORS:
        if (parse_sparse(x, cur, f, &at->sparse_tensors[at->n_sparse])) return -1;
        at->n_sparse++;
        break;
    case A_TYPE_PROTOS: {
        if (onp_pb_expect(cur, f, ONP_WT_LEN, "AttributeProto.type_protos", x->e)) return -1;
        onp_pb_cursor tc;
        onp_pb_sub(cur, f, &tc);
        if (parse_type(x, &tc, &at->type_protos[at->n_type_protos++], 0)) return -1;
        break;
    }
    default: break;
    }
    return 0;
}

static int parse_attr(ctx *x, const onp_pb_cursor *c, onp_attr *at, int depth)
{
    at->name = "";
    if (alloc_attr_arrays(x, c, at)) return -1;
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    int r;
    while ((r = onp_pb_next(&cur, &f, x->e)) == 1) {
        switch (f.num) {
        case A_NAME:
            if (str_field(x, &cur, &f, "AttributeProto.name", &at->name)) return -1;
            break;
        case A_REF_ATTR_NAME:
            if (str_field(x, &cur, &f, "AttributeProto.ref_attr_name", &at->ref_attr_name))
                return -1;
            break;
        case A_TYPE: {
            int64_t v;
            if (int_field(x, &cur, &f, "AttributeProto.type", &v)) return -1;
            at->type = (int32_t)v;
            break;
        }
        case A_F: {
            if (onp_pb_expect(&cur, &f, ONP_WT_I32, "AttributeProto.f", x->e)) return -1;
            uint32_t u = (uint32_t)f.v;
            memcpy(&at->f, &u, 4);
            break;
        }
        case A_I:
            if (int_field(x, &cur, &f, "AttributeProto.i", &at->i)) return -1;
            break;
        case A_S:
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "AttributeProto.s", x->e)) return -1;
            span_of(&cur, &f, &at->s);
            break;
        case A_T:
            if (!(at->t = onp_arena_alloc(x->a, sizeof *at->t))) return nomem(x);
            if (parse_tensor(x, &cur, &f, "AttributeProto.t", at->t)) return -1;
            break;
        case A_G:
            if (parse_subgraph(x, &cur, &f, depth, &at->g)) return -1;
            break;
        case A_SPARSE_TENSOR:
            if (!(at->sparse = onp_arena_alloc(x->a, sizeof *at->sparse))) return nomem(x);
            if (parse_sparse(x, &cur, &f, at->sparse)) return -1;
            break;
        case A_TP: {
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "AttributeProto.tp", x->e)) return -1;
            if (!(at->tp = onp_arena_alloc(x->a, sizeof *at->tp))) return nomem(x);
            onp_pb_cursor tc;
            onp_pb_sub(&cur, &f, &tc);
            if (parse_type(x, &tc, at->tp, 0)) return -1;
            break;
        }
        default:
            if (parse_attr_repeated(x, &cur, &f, at, depth)) return -1;
            break;
        }
    }
    return r < 0 ? -1 : 0;
}

static int parse_node(ctx *x, const onp_pb_cursor *c, onp_node *n, int depth)
{
    size_t counts[32];
    if (count_fields(x, c, counts)) return -1;
    n->name = n->op_type = n->domain = "";
    n->raw.p = c->p;
    n->raw.n = (size_t)(c->end - c->p);
    n->raw.off = (uint64_t)onp_pb_off(c, c->p);
    if (!(n->inputs = arr(x, counts[N_INPUT], sizeof(char *))) ||
        !(n->outputs = arr(x, counts[N_OUTPUT], sizeof(char *))) ||
        !(n->attrs = arr(x, counts[N_ATTRIBUTE], sizeof(onp_attr))))
        return nomem(x);
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    int r;
    while ((r = onp_pb_next(&cur, &f, x->e)) == 1) {
        switch (f.num) {
        case N_INPUT:
            if (str_field(x, &cur, &f, "NodeProto.input", &n->inputs[n->n_inputs++])) return -1;
            break;
        case N_OUTPUT:
            if (str_field(x, &cur, &f, "NodeProto.output", &n->outputs[n->n_outputs++])) return -1;
            break;
        case N_NAME:
            if (str_field(x, &cur, &f, "NodeProto.name", &n->name)) return -1;
            break;
        case N_OP_TYPE:
            if (str_field(x, &cur, &f, "NodeProto.op_type", &n->op_type)) return -1;
            break;
        case N_DOMAIN:
            if (str_field(x, &cur, &f, "NodeProto.domain", &n->domain)) return -1;
            break;
        case N_ATTRIBUTE: {
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "NodeProto.attribute", x->e)) return -1;
            onp_pb_cursor ac;
            onp_pb_sub(&cur, &f, &ac);
            if (parse_attr(x, &ac, &n->attrs[n->n_attrs], depth))
                return prefix_idx(x->e, "attribute", n->n_attrs);
            n->n_attrs++;
            break;
        }
        default: break;
        }
    }
    return r < 0 ? -1 : 0;
}

static int parse_vi_field(ctx *x, const onp_pb_cursor *c, const onp_pb_field *f, const char *what,
                          onp_value_info *vi)
{
    if (onp_pb_expect(c, f, ONP_WT_LEN, what, x->e)) return -1;
    onp_pb_cursor vc;
    onp_pb_sub(c, f, &vc);
    return parse_value_info(x, &vc, vi);
}

static int parse_graph(ctx *x, const onp_pb_cursor *c, onp_graph *g, int depth)
{
    if (depth > ONP_PB_MAX_DEPTH)
        return onp_error_set(x->e, ONP_ERR_FORMAT, x->file, "GraphProto", onp_pb_off(c, c->p),
                             "subgraphs nested deeper than %d", ONP_PB_MAX_DEPTH);
    size_t counts[32];
    if (count_fields(x, c, counts)) return -1;
    g->name = "";
    g->raw.p = c->p;
    g->raw.n = (size_t)(c->end - c->p);
    g->raw.off = (uint64_t)onp_pb_off(c, c->p);
    if (!(g->nodes = arr(x, counts[G_NODE], sizeof(onp_node))) ||
        !(g->initializers = arr(x, counts[G_INITIALIZER], sizeof(onp_tensor_view))) ||
        !(g->sparse_initializers = arr(x, counts[G_SPARSE_INITIALIZER], sizeof(onp_sparse_view))) ||
        !(g->inputs = arr(x, counts[G_INPUT], sizeof(onp_value_info))) ||
        !(g->outputs = arr(x, counts[G_OUTPUT], sizeof(onp_value_info))) ||
        !(g->value_info = arr(x, counts[G_VALUE_INFO], sizeof(onp_value_info))))
        return nomem(x);
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    int r;
    while ((r = onp_pb_next(&cur, &f, x->e)) == 1) {
        switch (f.num) {
        case G_NODE: {
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "GraphProto.node", x->e)) return -1;
            onp_pb_cursor nc;
            onp_pb_sub(&cur, &f, &nc);
            if (parse_node(x, &nc, &g->nodes[g->n_nodes], depth))
                return prefix_idx(x->e, "node", g->n_nodes);
            g->n_nodes++;
            break;
        }
        case G_NAME:
            if (str_field(x, &cur, &f, "GraphProto.name", &g->name)) return -1;
            break;
        case G_INITIALIZER:
            if (parse_tensor(x, &cur, &f, "GraphProto.initializer",
                             &g->initializers[g->n_initializers]))
                return prefix_idx(x->e, "initializer", g->n_initializers);
            g->n_initializers++;
            break;
        case G_SPARSE_INITIALIZER:
            if (parse_sparse(x, &cur, &f, &g->sparse_initializers[g->n_sparse_initializers]))
                return prefix_idx(x->e, "sparse_initializer", g->n_sparse_initializers);
            g->n_sparse_initializers++;
            break;
        case G_INPUT:
            if (parse_vi_field(x, &cur, &f, "GraphProto.input", &g->inputs[g->n_inputs]))
                return prefix_idx(x->e, "input", g->n_inputs);
            g->n_inputs++;
            break;
        case G_OUTPUT:
            if (parse_vi_field(x, &cur, &f, "GraphProto.output", &g->outputs[g->n_outputs]))
                return prefix_idx(x->e, "output", g->n_outputs);
            g->n_outputs++;
            break;
        case G_VALUE_INFO:
            if (parse_vi_field(x, &cur, &f, "GraphProto.value_info",
                               &g->value_info[g->n_value_info]))
                return prefix_idx(x->e, "value_info", g->n_value_info);
            g->n_value_info++;
            break;
        default: break;
        }
    }
    return r < 0 ? -1 : 0;
}

static int parse_opset(ctx *x, const onp_pb_cursor *c, const onp_pb_field *f, onp_opset *o)
{
    if (onp_pb_expect(c, f, ONP_WT_LEN, "OperatorSetIdProto", x->e)) return -1;
    onp_pb_cursor oc;
    onp_pb_sub(c, f, &oc);
    onp_pb_field g;
    int r;
    o->domain = "";
    while ((r = onp_pb_next(&oc, &g, x->e)) == 1) {
        if (g.num == 1 && str_field(x, &oc, &g, "OperatorSetIdProto.domain", &o->domain)) return -1;
        if (g.num == 2 && int_field(x, &oc, &g, "OperatorSetIdProto.version", &o->version))
            return -1;
    }
    return r < 0 ? -1 : 0;
}

static int parse_function(ctx *x, const onp_pb_cursor *c, onp_function *fn)
{
    size_t counts[32];
    if (count_fields(x, c, counts)) return -1;
    fn->name = fn->domain = "";
    if (!(fn->inputs = arr(x, counts[F_INPUT], sizeof(char *))) ||
        !(fn->outputs = arr(x, counts[F_OUTPUT], sizeof(char *))) ||
        !(fn->nodes = arr(x, counts[F_NODE], sizeof(onp_node))) ||
        !(fn->opsets = arr(x, counts[F_OPSET_IMPORT], sizeof(onp_opset))))
        return nomem(x);
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    int r;
    while ((r = onp_pb_next(&cur, &f, x->e)) == 1) {
        switch (f.num) {
        case F_NAME:
            if (str_field(x, &cur, &f, "FunctionProto.name", &fn->name)) return -1;
            break;
        case F_DOMAIN:
            if (str_field(x, &cur, &f, "FunctionProto.domain", &fn->domain)) return -1;
            break;
        case F_INPUT:
            if (str_field(x, &cur, &f, "FunctionProto.input", &fn->inputs[fn->n_inputs++]))
                return -1;
            break;
        case F_OUTPUT:
            if (str_field(x, &cur, &f, "FunctionProto.output", &fn->outputs[fn->n_outputs++]))
                return -1;
            break;
        case F_NODE: {
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "FunctionProto.node", x->e)) return -1;
            onp_pb_cursor nc;
            onp_pb_sub(&cur, &f, &nc);
            if (parse_node(x, &nc, &fn->nodes[fn->n_nodes], 1))
                return prefix_idx(x->e, "node", fn->n_nodes);
            fn->n_nodes++;
            break;
        }
        case F_OPSET_IMPORT:
            if (parse_opset(x, &cur, &f, &fn->opsets[fn->n_opsets++])) return -1;
            break;
        default: break;
        }
    }
    return r < 0 ? -1 : 0;
}

static int parse_model(ctx *x, const onp_pb_cursor *c)
{
    onp_model *m = x->m;
    onp_model_info *info = &m->info;
    size_t counts[32];
    if (count_fields(x, c, counts)) return -1;
    /* functions (25) sit beyond the 32-slot table: count them here */
    size_t n_fn = 0;
    {
        onp_pb_cursor cur = *c;
        onp_pb_field f;
        while (onp_pb_next(&cur, &f, x->e) == 1)
            if (f.num == M_FUNCTIONS) n_fn++;
    }
    info->producer_name = info->producer_version = info->domain = info->doc_string = "";
    if (!(info->opsets = arr(x, counts[M_OPSET_IMPORT], sizeof(onp_opset))) ||
        !(info->metadata = arr(x, counts[M_METADATA_PROPS], sizeof(onp_kv))) ||
        !(info->functions = arr(x, n_fn, sizeof(onp_function))) ||
        !(m->graph = onp_arena_alloc(x->a, sizeof *m->graph)))
        return nomem(x);
    int have_graph = 0;
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    int r;
    while ((r = onp_pb_next(&cur, &f, x->e)) == 1) {
        switch (f.num) {
        case M_IR_VERSION:
            if (int_field(x, &cur, &f, "ModelProto.ir_version", &info->ir_version)) return -1;
            break;
        case M_PRODUCER_NAME:
            if (str_field(x, &cur, &f, "ModelProto.producer_name", &info->producer_name)) return -1;
            break;
        case M_PRODUCER_VERSION:
            if (str_field(x, &cur, &f, "ModelProto.producer_version", &info->producer_version))
                return -1;
            break;
        case M_DOMAIN:
            if (str_field(x, &cur, &f, "ModelProto.domain", &info->domain)) return -1;
            break;
        case M_MODEL_VERSION:
            if (int_field(x, &cur, &f, "ModelProto.model_version", &info->model_version)) return -1;
            break;
        case M_DOC_STRING:
            if (str_field(x, &cur, &f, "ModelProto.doc_string", &info->doc_string)) return -1;
            break;
        case M_GRAPH: {
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "ModelProto.graph", x->e)) return -1;
            if (have_graph)
                return onp_error_set(x->e, ONP_ERR_FORMAT, x->file, "ModelProto.graph",
                                     onp_pb_off(&cur, f.start),
                                     "the model holds more than one graph");
            onp_pb_cursor gc;
            onp_pb_sub(&cur, &f, &gc);
            if (parse_graph(x, &gc, m->graph, 0)) return onp_error_field_prefix(x->e, "graph");
            m->graph_field_start = f.start;
            m->graph_field_stop = f.stop;
            have_graph = 1;
            break;
        }
        case M_OPSET_IMPORT:
            if (parse_opset(x, &cur, &f, &info->opsets[info->n_opsets++])) return -1;
            break;
        case M_METADATA_PROPS: {
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "ModelProto.metadata_props", x->e)) return -1;
            onp_kv *kv = &info->metadata[info->n_metadata++];
            kv->key = kv->value = "";
            onp_pb_cursor kc;
            onp_pb_sub(&cur, &f, &kc);
            onp_pb_field g;
            while ((r = onp_pb_next(&kc, &g, x->e)) == 1) {
                if (g.num == 1 && str_field(x, &kc, &g, "StringStringEntryProto.key", &kv->key))
                    return -1;
                if (g.num == 2 && str_field(x, &kc, &g, "StringStringEntryProto.value", &kv->value))
                    return -1;
            }
            if (r < 0) return -1;
            break;
        }
        case M_FUNCTIONS: {
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "ModelProto.functions", x->e)) return -1;
            onp_pb_cursor fc;
            onp_pb_sub(&cur, &f, &fc);
            if (parse_function(x, &fc, &info->functions[info->n_functions]))
                return prefix_idx(x->e, "functions", info->n_functions);
            info->n_functions++;
            break;
        }
        default: break;
        }
    }
    if (r < 0) return -1;
    if (!have_graph)
        return onp_error_set(x->e, ONP_ERR_FORMAT, x->file, "ModelProto.graph", -1,
                             "no graph: not an ONNX model (%zu bytes)", (size_t)(c->end - c->p));
    return 0;
}

/* A Git LFS pointer or an empty file is a common mistake: say so. */
static int sniff(const uint8_t *buf, size_t n, const char *path, onp_error *e)
{
    static const char lfs[] = "version https://git-lfs";
    if (n == 0)
        return onp_error_set(e, ONP_ERR_FORMAT, path, NULL, 0, "empty file, not an ONNX model");
    if (n >= sizeof lfs - 1 && !memcmp(buf, lfs, sizeof lfs - 1))
        return onp_error_set(e, ONP_ERR_FORMAT, path, NULL, 0,
                             "a Git LFS pointer, not the model: run 'git lfs pull'");
    return 0;
}

int onp_model_parse(const uint8_t *buf, size_t n, const char *path, onp_model **out, onp_error *e)
{
    *out = NULL;
    if (sniff(buf, n, path, e)) return -1;
    onp_model *m = calloc(1, sizeof *m);
    if (!m) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    m->buf = buf;
    m->n = n;
    if (path) {
        m->path = strdup(path);
        const char *slash = strrchr(path, '/');
        m->dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
        if (!m->path || !m->dir) {
            onp_model_close(m);
            return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
        }
    }
    ctx x = {m, &m->arena, path, buf, e};
    onp_pb_cursor c;
    onp_pb_cursor_init(&c, buf, n, buf, path);
    if (parse_model(&x, &c)) {
        onp_error_set_file(e, path);
        onp_model_close(m);
        return -1;
    }
    *out = m;
    return 0;
}

int onp_model_open(const char *path, onp_model **out, onp_error *e)
{
    onp_map *map;
    *out = NULL;
    if (onp_map_open(path, &map, e)) return -1;
    if (onp_model_parse(map->p, map->n, path, out, e)) {
        onp_map_unref(map);
        return -1;
    }
    (*out)->map = map;
    return 0;
}

void onp_model_close(onp_model *m)
{
    if (!m) return;
    onp_model_ext_release(m);
    onp_arena_free(&m->arena);
    onp_map_unref(m->map);
    free(m->path);
    free(m->dir);
    free(m);
}

const onp_model_info *onp_model_info_get(const onp_model *m)
{
    return &m->info;
}

const onp_graph *onp_model_graph(const onp_model *m)
{
    return m->graph;
}

const char *onp_model_path(const onp_model *m)
{
    return m->path;
}

const uint8_t *onp_model_bytes(const onp_model *m, size_t *n)
{
    if (n) *n = m->n;
    return m->buf;
}

int64_t onp_model_opset(const onp_model *m, const char *domain)
{
    for (size_t i = 0; i < m->info.n_opsets; i++) {
        const char *d = m->info.opsets[i].domain;
        int is_default = !*d || !strcmp(d, "ai.onnx");
        int want_default = !domain || !*domain || !strcmp(domain, "ai.onnx");
        if ((is_default && want_default) || (!want_default && !strcmp(d, domain)))
            return m->info.opsets[i].version;
    }
    return -1;
}

void onp_model_sha256(const onp_model *m, char hex[65])
{
    onp_sha256_hex(m->buf, m->n, hex);
}

int onp_model_has_external(const onp_model *m)
{
    return m->has_external;
}

const onp_tensor_view *onp_graph_initializer(const onp_graph *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializers; i++)
        if (!strcmp(g->initializers[i].name, name)) return &g->initializers[i];
    return NULL;
}

const onp_node *onp_graph_producer(const onp_graph *g, const char *name, size_t *index)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_outputs; k++)
            if (!strcmp(g->nodes[i].outputs[k], name)) {
                if (index) *index = i;
                return &g->nodes[i];
            }
    return NULL;
}

static const onp_value_info *find_vi(const onp_value_info *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name)) return &v[i];
    return NULL;
}

int onp_graph_value_type(const onp_graph *g, const char *name, onp_type *out)
{
    const onp_value_info *vi = find_vi(g->outputs, g->n_outputs, name);
    if (!vi || vi->type.kind == ONP_TYPE_NONE) vi = find_vi(g->value_info, g->n_value_info, name);
    if (!vi || vi->type.kind == ONP_TYPE_NONE) vi = find_vi(g->inputs, g->n_inputs, name);
    if (vi && vi->type.kind != ONP_TYPE_NONE) {
        *out = vi->type;
        return 0;
    }
    const onp_tensor_view *t = onp_graph_initializer(g, name);
    if (t) {
        memset(out, 0, sizeof *out);
        out->kind = ONP_TYPE_TENSOR;
        out->elem_type = t->data_type;
        return 0; /* element type only: the shape is in the tensor view */
    }
    return -1;
}

const onp_attr *onp_node_attr(const onp_node *n, const char *name)
{
    for (size_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

const char **onp_model_node_values(const onp_model *m, size_t *n)
{
    const onp_graph *g = m->graph;
    size_t total = 0;
    for (size_t i = 0; i < g->n_nodes; i++) total += g->nodes[i].n_outputs;
    const char **v = onp_arena_array((onp_arena *)&m->arena, total ? total : 1, sizeof *v);
    if (!v) {
        *n = 0;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t j = 0; j < g->nodes[i].n_outputs; j++)
            if (g->nodes[i].outputs[j][0]) v[k++] = g->nodes[i].outputs[j];
    *n = k;
    return v;
}

char *onp_type_shape_str(const onp_type *t, char *buf, size_t n)
{
    if (!n) return buf;
    size_t k = (size_t)snprintf(buf, n, "[");
    for (size_t i = 0; i < t->rank && k < n; i++) {
        const onp_dim *d = &t->dims[i];
        const char *sep = i ? ", " : "";
        if (d->param && d->param[0])
            k += (size_t)snprintf(buf + k, n - k, "%s%s", sep, d->param);
        else if (d->value >= 0)
            k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, sep, d->value);
        else
            k += (size_t)snprintf(buf + k, n - k, "%s?", sep);
    }
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}
