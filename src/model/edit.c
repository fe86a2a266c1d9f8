/*
 * edit.c — the splicing writer: edited models made by re-encoding only the
 * ModelProto and GraphProto framing and copying every other byte (nodes,
 * initializers, value infos) exactly as they were.
 *
 *   onp_model_add_outputs  expose values as extra graph outputs
 *   onp_model_extract      cut the subgraph between given inputs and outputs
 *
 * Element types of new outputs come from value_info, graph inputs/outputs or
 * initializers, else from a small table of operator output-type rules
 * (infer_types below), else the output is written with its name only, which
 * ONNX Runtime accepts.
 */
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"
#include "util/strmap.h"

/* --- element types of every value --------------------------------------- */

/* Output elem type of node output k from input types, or 0 when unknown.
 * How to add an operator: one case below, returning the ONNX dtype. */
static int32_t rule_type(const onp_node *n, size_t k, const int32_t *in, size_t n_in)
{
    const char *op = n->op_type;
    int32_t first = 0;
    for (size_t i = 0; i < n_in && !first; i++) first = in[i];
    const onp_attr *a;
#define OP(s) (!strcmp(op, s))
    if (n->domain[0] && strcmp(n->domain, "ai.onnx")) return 0; /* custom domains: unknown */
    if (OP("Cast")) return (a = onp_node_attr(n, "to")) ? (int32_t)a->i : 0;
    if (OP("CastLike")) return n_in > 1 ? in[1] : 0;
    if (OP("Shape") || OP("Size") || OP("NonZero") || OP("ArgMax") || OP("ArgMin") ||
        OP("NonMaxSuppression"))
        return ONP_INT64;
    if (OP("Equal") || OP("Less") || OP("Greater") || OP("LessOrEqual") || OP("GreaterOrEqual") ||
        OP("Not") || OP("And") || OP("Or") || OP("Xor") || OP("IsNaN") || OP("IsInf"))
        return ONP_BOOL;
    if (OP("TopK") || OP("MaxPool")) return k == 1 ? ONP_INT64 : (n_in ? in[0] : 0);
    if (OP("Unique")) return k == 0 ? (n_in ? in[0] : 0) : ONP_INT64;
    if (OP("Dropout")) return k == 1 ? ONP_BOOL : (n_in ? in[0] : 0);
    if (OP("Where")) return n_in > 1 ? in[1] : 0;
    if (OP("Constant")) {
        if ((a = onp_node_attr(n, "value")) && a->t) return a->t->data_type;
        if (onp_node_attr(n, "value_float") || onp_node_attr(n, "value_floats")) return ONP_FLOAT;
        if (onp_node_attr(n, "value_int") || onp_node_attr(n, "value_ints")) return ONP_INT64;
        if (onp_node_attr(n, "value_string") || onp_node_attr(n, "value_strings"))
            return ONP_STRING;
        return 0;
    }
    if (OP("ConstantOfShape"))
        return (a = onp_node_attr(n, "value")) && a->t ? a->t->data_type : ONP_FLOAT;
    if (OP("RandomNormal") || OP("RandomUniform"))
        return (a = onp_node_attr(n, "dtype")) ? (int32_t)a->i : ONP_FLOAT;
    if (OP("RandomNormalLike") || OP("RandomUniformLike") || OP("EyeLike") || OP("Bernoulli"))
        return (a = onp_node_attr(n, "dtype")) ? (int32_t)a->i : (n_in ? in[0] : 0);
    if (OP("Multinomial")) return (a = onp_node_attr(n, "dtype")) ? (int32_t)a->i : ONP_INT32;
    if (OP("QuantizeLinear")) return n_in > 2 && in[2] ? in[2] : ONP_UINT8;
    if (OP("DequantizeLinear")) return n_in > 1 && in[1] ? in[1] : ONP_FLOAT;
    if (OP("DynamicQuantizeLinear")) return k == 1 ? ONP_FLOAT : ONP_UINT8;
    if (OP("MatMulInteger") || OP("ConvInteger")) return ONP_INT32;
    if (OP("QLinearConv") || OP("QLinearMatMul")) return n_in > 7 ? in[7] : 0;
    if (OP("StringNormalizer") || OP("RegexFullMatch"))
        return OP("StringNormalizer") ? ONP_STRING : ONP_BOOL;
    if (OP("LayerNormalization") && k > 0)
        return (a = onp_node_attr(n, "stash_type")) ? (int32_t)a->i : ONP_FLOAT;
    if (OP("If") || OP("Loop") || OP("Scan") || OP("SequenceConstruct") || OP("SplitToSequence") ||
        OP("SequenceEmpty") || OP("SequenceAt") || OP("Optional") || OP("OptionalGetElement"))
        return 0; /* types live in subgraphs or sequences */
#undef OP
    return first; /* most operators: the type of their first typed input */
}

/* Fill `types` (name -> elem type) for every value of graph g. */
static int infer_types(const onp_graph *g, onp_strmap *types)
{
    for (size_t i = 0; i < g->n_initializers; i++)
        if (onp_strmap_put(types, g->initializers[i].name, (size_t)g->initializers[i].data_type))
            return -1;
    const onp_value_info *lists[3] = {g->inputs, g->value_info, g->outputs};
    size_t counts[3] = {g->n_inputs, g->n_value_info, g->n_outputs};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < counts[l]; i++)
            if (lists[l][i].type.kind == ONP_TYPE_TENSOR && lists[l][i].type.elem_type &&
                onp_strmap_put(types, lists[l][i].name, (size_t)lists[l][i].type.elem_type))
                return -1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onp_node *n = &g->nodes[i];
        int32_t in[16] = {0};
        size_t n_in = n->n_inputs < 16 ? n->n_inputs : 16;
        for (size_t k = 0; k < n_in; k++) {
            size_t t;
            if (n->inputs[k][0] && onp_strmap_get(types, n->inputs[k], &t)) in[k] = (int32_t)t;
        }
        for (size_t k = 0; k < n->n_outputs; k++) {
            if (!n->outputs[k][0] || onp_strmap_get(types, n->outputs[k], NULL)) continue;
            int32_t t = rule_type(n, k, in, n_in);
            if (t && onp_dtype_info(t) && onp_strmap_put(types, n->outputs[k], (size_t)t))
                return -1;
        }
    }
    return 0;
}

/* --- encoding helpers -------------------------------------------------- */

/* A field whose payload is a span of the original file. */
static int put_span(onp_buf *b, uint32_t num, const onp_span *s)
{
    return onp_pb_put_len(b, num, s->p, s->n);
}

static const onp_value_info *find_vi(const onp_value_info *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name)) return &v[i];
    return NULL;
}

/* Encode a ValueInfoProto for `name` as GraphProto field `num`: the original
 * message when the graph has one with a type, else name + inferred type. */
static int put_value_info(onp_buf *b, uint32_t num, const onp_graph *g, const onp_strmap *types,
                          const char *name)
{
    const onp_value_info *vi = find_vi(g->value_info, g->n_value_info, name);
    if (!vi || vi->type.kind == ONP_TYPE_NONE) vi = find_vi(g->inputs, g->n_inputs, name);
    if (!vi || vi->type.kind == ONP_TYPE_NONE) vi = find_vi(g->outputs, g->n_outputs, name);
    if (vi && vi->type.kind != ONP_TYPE_NONE) return put_span(b, num, &vi->raw);
    size_t t = 0;
    onp_strmap_get(types, name, &t);
    size_t nl = strlen(name);
    /* TypeProto{ tensor_type(1){ elem_type(1) } } */
    size_t tensor_len = t ? 1 + onp_pb_varint_size(t) : 0;
    size_t type_len = t ? 1 + onp_pb_varint_size(tensor_len) + tensor_len : 0;
    size_t vi_len =
        1 + onp_pb_varint_size(nl) + nl + (t ? 1 + onp_pb_varint_size(type_len) + type_len : 0);
    onp_pb_put_header(b, num, vi_len);
    onp_pb_put_len(b, 1, name, nl);
    if (t) {
        onp_pb_put_header(b, 2, type_len);
        onp_pb_put_header(b, 1, tensor_len);
        onp_pb_put_uint(b, 1, t);
    }
    return b->failed ? -1 : 0;
}

/* Write the model with its graph field replaced by `graph` (a GraphProto
 * payload). */
static int splice_graph(const onp_model *m, const onp_buf *graph, onp_buf *out, onp_error *e)
{
    size_t head = (size_t)(m->graph_field_start - m->buf);
    size_t tail = m->n - (size_t)(m->graph_field_stop - m->buf);
    onp_buf_append(out, m->buf, head);
    onp_pb_put_len(out, 7, graph->p, graph->n);
    onp_buf_append(out, m->graph_field_stop, tail);
    if (out->failed)
        return onp_error_set(e, ONP_ERR_NOMEM, m->path, NULL, -1,
                             "out of memory writing the model");
    return 0;
}

/* --- add outputs -------------------------------------------------------- */

int onp_model_add_outputs(const onp_model *m, const char *const *names, size_t n, onp_buf *out,
                          onp_error *e)
{
    const onp_graph *g = m->graph;
    onp_strmap known = {0}, types = {0};
    onp_buf graph;
    onp_buf_init(&graph, 0);
    int rc = -1;
    for (size_t i = 0; i < g->n_inputs; i++) onp_strmap_put(&known, g->inputs[i].name, 1);
    for (size_t i = 0; i < g->n_initializers; i++)
        onp_strmap_put(&known, g->initializers[i].name, 1);
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_outputs; k++)
            onp_strmap_put(&known, g->nodes[i].outputs[k], 1);
    for (size_t i = 0; i < n; i++)
        if (!onp_strmap_get(&known, names[i], NULL)) {
            onp_error_set(e, ONP_ERR_USAGE, m->path, "graph", -1,
                          "no value named '%s' in the graph", names[i]);
            goto done;
        }
    if (infer_types(g, &types)) goto nomem;
    /* the original graph payload, then one output field per new name */
    onp_buf_append(&graph, g->raw.p, g->raw.n);
    onp_strmap added = {0};
    for (size_t i = 0; i < g->n_outputs; i++) onp_strmap_put(&added, g->outputs[i].name, 1);
    for (size_t i = 0; i < n; i++) {
        if (onp_strmap_get(&added, names[i], NULL)) continue;
        onp_strmap_put(&added, names[i], 1);
        put_value_info(&graph, 12, g, &types, names[i]);
    }
    onp_strmap_free(&added);
    if (graph.failed) goto nomem;
    rc = splice_graph(m, &graph, out, e);
    goto done;
nomem:
    onp_error_set(e, ONP_ERR_NOMEM, m->path, NULL, -1, "out of memory");
done:
    onp_strmap_free(&known);
    onp_strmap_free(&types);
    onp_buf_free(&graph);
    return rc;
}

/* --- extract ------------------------------------------------------------ */

/* Mark outer-scope names used inside subgraphs of node n as needed. */
static int need_subgraph_inputs(const onp_node *n, onp_strmap *need, int depth)
{
    if (depth > ONP_PB_MAX_DEPTH) return 0;
    for (size_t a = 0; a < n->n_attrs; a++) {
        const onp_attr *at = &n->attrs[a];
        const onp_graph *gs[1] = {at->g};
        size_t ng = at->g ? 1 : 0;
        for (size_t gi = 0; gi < ng + at->n_graphs; gi++) {
            const onp_graph *sg = gi < ng ? gs[0] : at->graphs[gi - ng];
            for (size_t i = 0; i < sg->n_nodes; i++) {
                for (size_t k = 0; k < sg->nodes[i].n_inputs; k++)
                    if (sg->nodes[i].inputs[k][0] &&
                        onp_strmap_put(need, sg->nodes[i].inputs[k], 1))
                        return -1;
                if (need_subgraph_inputs(&sg->nodes[i], need, depth + 1)) return -1;
            }
        }
    }
    return 0;
}

int onp_model_extract(const onp_model *m, const char *const *inputs, size_t n_inputs,
                      const char *const *outputs, size_t n_outputs, onp_buf *out, onp_error *e)
{
    const onp_graph *g = m->graph;
    onp_strmap cut = {0}, need = {0}, inits = {0}, produced = {0}, types = {0};
    onp_buf graph;
    onp_buf_init(&graph, 0);
    char *keep = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    int rc = -1;
    if (!keep) goto nomem;
    for (size_t i = 0; i < n_inputs; i++)
        if (onp_strmap_put(&cut, inputs[i], 1)) goto nomem;
    for (size_t i = 0; i < g->n_initializers; i++)
        if (onp_strmap_put(&inits, g->initializers[i].name, i)) goto nomem;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_outputs; k++)
            if (onp_strmap_put(&produced, g->nodes[i].outputs[k], i)) goto nomem;
    for (size_t i = 0; i < n_outputs; i++) {
        if (!onp_strmap_get(&produced, outputs[i], NULL) &&
            !onp_strmap_get(&cut, outputs[i], NULL)) {
            int is_input = find_vi(g->inputs, g->n_inputs, outputs[i]) != NULL;
            onp_error_set(e, ONP_ERR_USAGE, m->path, "graph", -1,
                          is_input ? "output '%s' is a graph input; list it among the cut inputs"
                                   : "no node computes '%s'",
                          outputs[i]);
            goto done;
        }
        if (onp_strmap_put(&need, outputs[i], 1)) goto nomem;
    }
    for (size_t i = 0; i < n_inputs; i++) {
        if (!onp_strmap_get(&produced, inputs[i], NULL) &&
            !find_vi(g->inputs, g->n_inputs, inputs[i])) {
            onp_error_set(e, ONP_ERR_USAGE, m->path, "graph", -1,
                          "no value named '%s' in the graph", inputs[i]);
            goto done;
        }
    }
    /* walk back from the outputs: nodes appear in topological order */
    for (size_t i = g->n_nodes; i-- > 0;) {
        const onp_node *n = &g->nodes[i];
        int wanted = 0;
        for (size_t k = 0; k < n->n_outputs && !wanted; k++)
            wanted = n->outputs[k][0] && onp_strmap_get(&need, n->outputs[k], NULL) &&
                     !onp_strmap_get(&cut, n->outputs[k], NULL);
        if (!wanted) continue;
        keep[i] = 1;
        for (size_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k][0] && onp_strmap_put(&need, n->inputs[k], 1)) goto nomem;
        if (need_subgraph_inputs(n, &need, 0)) goto nomem;
    }
    /* every needed value must now come from a kept node, a cut input or an
     * initializer; a graph input not listed is an error */
    for (size_t i = 0; i < g->n_inputs; i++) {
        const char *name = g->inputs[i].name;
        if (onp_strmap_get(&need, name, NULL) && !onp_strmap_get(&cut, name, NULL) &&
            !onp_strmap_get(&inits, name, NULL)) {
            onp_error_set(
                e, ONP_ERR_USAGE, m->path, "graph", -1,
                "the outputs depend on graph input '%s', which is not among the cut inputs", name);
            goto done;
        }
    }
    if (infer_types(g, &types)) goto nomem;
    /* GraphProto: name, kept nodes, used initializers, inputs, outputs, value_info */
    if (g->name[0]) onp_pb_put_len(&graph, 2, g->name, strlen(g->name));
    for (size_t i = 0; i < g->n_nodes; i++)
        if (keep[i]) put_span(&graph, 1, &g->nodes[i].raw);
    for (size_t i = 0; i < g->n_initializers; i++) {
        const char *name = g->initializers[i].name;
        if (onp_strmap_get(&need, name, NULL) && !onp_strmap_get(&cut, name, NULL))
            put_span(&graph, 5, &g->initializers[i].msg);
    }
    for (size_t i = 0; i < g->n_sparse_initializers; i++) {
        const onp_tensor_view *v = &g->sparse_initializers[i].values;
        if (onp_strmap_get(&need, v->name, NULL) && !onp_strmap_get(&cut, v->name, NULL)) {
            /* the SparseTensorProto holds values + indices; re-emit its parts */
            onp_buf sp;
            onp_buf_init(&sp, 0);
            const onp_sparse_view *s = &g->sparse_initializers[i];
            if (s->values.msg.p) put_span(&sp, 1, &s->values.msg);
            if (s->indices.msg.p) put_span(&sp, 2, &s->indices.msg);
            for (size_t d = 0; d < s->rank; d++) onp_pb_put_uint(&sp, 3, (uint64_t)s->dims[d]);
            if (sp.failed || onp_pb_put_len(&graph, 15, sp.p, sp.n)) {
                onp_buf_free(&sp);
                goto nomem;
            }
            onp_buf_free(&sp);
        }
    }
    for (size_t i = 0; i < n_inputs; i++) put_value_info(&graph, 11, g, &types, inputs[i]);
    for (size_t i = 0; i < n_outputs; i++) put_value_info(&graph, 12, g, &types, outputs[i]);
    for (size_t i = 0; i < g->n_value_info; i++) {
        size_t p;
        const char *name = g->value_info[i].name;
        if (onp_strmap_get(&produced, name, &p) && keep[p] && !onp_strmap_get(&cut, name, NULL))
            put_span(&graph, 13, &g->value_info[i].raw);
    }
    if (graph.failed) goto nomem;
    rc = splice_graph(m, &graph, out, e);
    goto done;
nomem:
    onp_error_set(e, ONP_ERR_NOMEM, m->path, NULL, -1, "out of memory");
done:
    free(keep);
    onp_strmap_free(&cut);
    onp_strmap_free(&need);
    onp_strmap_free(&inits);
    onp_strmap_free(&produced);
    onp_strmap_free(&types);
    onp_buf_free(&graph);
    return rc;
}
