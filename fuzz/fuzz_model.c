/*
 * fuzz_model.c — libFuzzer target for the ModelProto view and the splicing
 * writer (include/onnxparity/model.h).
 *
 * onp_model_parse on the bytes (path NULL: external data is refused), then a
 * walk of everything the view exposes: every string is read, every span is
 * checked to lie inside the input, every graph (subgraphs too) is visited,
 * every non-external tensor (initializers, attribute tensors, sparse values
 * and indices) is materialised with onp_model_tensor, which must succeed for
 * a view that parsed.  Then every node value is added as an output with
 * onp_model_add_outputs and the result must parse again with the same nodes,
 * byte for byte; and the subgraph from the graph inputs to the last value is
 * extracted and must parse.  Any disagreement traps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENSURE(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) __builtin_trap();                                                                \
    } while (0)

#define MAX_WALK_DEPTH 100

typedef struct walker {
    const onp_model *m;
    const uint8_t *buf; /* [n] the model bytes */
    size_t n;
    size_t strings, tensors, graphs; /* what was visited */
    double fsum;                     /* attribute floats and ints, read */
    uint64_t isum;
} walker;

static void str(walker *w, const char *s)
{
    if (!s) return;
    w->strings += strlen(s) + 1;
}

static void span(walker *w, const onp_span *s)
{
    if (!s->n) return;
    ENSURE(s->p >= w->buf && s->p + s->n <= w->buf + w->n);
    ENSURE(s->off == (uint64_t)(s->p - w->buf));
}

static void type(walker *w, const onp_type *t)
{
    if (!t) return;
    ENSURE(t->kind >= ONP_TYPE_NONE && t->kind <= ONP_TYPE_OTHER);
    if (t->has_shape)
        for (size_t i = 0; i < t->rank; i++) {
            str(w, t->dims[i].param);
            volatile int64_t v = t->dims[i].value; /* readable */
            (void)v;
        }
}

static void tensor(walker *w, const onp_tensor_view *v)
{
    if (!v->msg.p) return; /* a sparse part that was absent: never parsed */
    str(w, v->name);
    span(w, &v->msg);
    if (v->has_raw) span(w, &v->raw_data);
    ENSURE(v->rank <= ONP_MAX_RANK && v->count >= 0);
    onp_tensor t;
    onp_error e;
    onp_error_clear(&e);
    int rc = onp_model_tensor(w->m, v, &t, &e);
    if (v->is_external) {
        ENSURE(rc == -1 && e.code != ONP_ERR_NONE); /* no folder: refused */
        str(w, v->external.location);
        return;
    }
    /* the parse checked sizes and counts: only memory can fail now */
    ENSURE(rc == 0 || e.code == ONP_ERR_NOMEM);
    if (rc) return;
    ENSURE(t.dtype == v->data_type && t.count == v->count && (size_t)t.rank == v->rank);
    if (t.dtype != ONP_STRING) ENSURE(t.nbytes == v->bytes);
    w->tensors++;
    onp_tensor_release(&t);
}

static void sparse(walker *w, const onp_sparse_view *s)
{
    tensor(w, &s->values);
    tensor(w, &s->indices);
    for (size_t i = 0; i < s->rank; i++) ENSURE(s->dims[i] >= 0);
}

static void value_infos(walker *w, const onp_value_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        str(w, v[i].name);
        span(w, &v[i].raw);
        type(w, &v[i].type);
    }
}

static void graph(walker *w, const onp_graph *g, int depth);

static void node(walker *w, const onp_node *n, int depth)
{
    str(w, n->name);
    str(w, n->op_type);
    str(w, n->domain);
    span(w, &n->raw);
    for (size_t i = 0; i < n->n_inputs; i++) str(w, n->inputs[i]);
    for (size_t i = 0; i < n->n_outputs; i++) str(w, n->outputs[i]);
    for (size_t i = 0; i < n->n_attrs; i++) {
        const onp_attr *a = &n->attrs[i];
        str(w, a->name);
        str(w, a->ref_attr_name);
        ENSURE(onp_node_attr(n, a->name) != NULL);
        span(w, &a->s);
        if (a->t) tensor(w, a->t);
        if (a->g) graph(w, a->g, depth + 1);
        if (a->sparse) sparse(w, a->sparse);
        type(w, a->tp);
        for (size_t k = 0; k < a->n_floats; k++) w->fsum += a->floats[k];
        for (size_t k = 0; k < a->n_ints; k++) w->isum ^= (uint64_t)a->ints[k];
        for (size_t k = 0; k < a->n_strings; k++) span(w, &a->strings[k]);
        for (size_t k = 0; k < a->n_tensors; k++) tensor(w, &a->tensors[k]);
        for (size_t k = 0; k < a->n_graphs; k++) graph(w, a->graphs[k], depth + 1);
        for (size_t k = 0; k < a->n_sparse; k++) sparse(w, &a->sparse_tensors[k]);
        for (size_t k = 0; k < a->n_type_protos; k++) type(w, &a->type_protos[k]);
    }
}

static void graph(walker *w, const onp_graph *g, int depth)
{
    ENSURE(g && depth <= MAX_WALK_DEPTH);
    w->graphs++;
    str(w, g->name);
    span(w, &g->raw);
    for (size_t i = 0; i < g->n_nodes; i++) node(w, &g->nodes[i], depth);
    for (size_t i = 0; i < g->n_initializers; i++) {
        tensor(w, &g->initializers[i]);
        const onp_tensor_view *v = onp_graph_initializer(g, g->initializers[i].name);
        ENSURE(v && !strcmp(v->name, g->initializers[i].name));
    }
    for (size_t i = 0; i < g->n_sparse_initializers; i++) sparse(w, &g->sparse_initializers[i]);
    value_infos(w, g->inputs, g->n_inputs);
    value_infos(w, g->outputs, g->n_outputs);
    value_infos(w, g->value_info, g->n_value_info);
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_outputs; k++) {
            size_t at = (size_t)-1;
            ENSURE(onp_graph_producer(g, g->nodes[i].outputs[k], &at) != NULL && at <= i);
            onp_type t;
            if (onp_graph_value_type(g, g->nodes[i].outputs[k], &t) == 0) type(w, &t);
        }
}

/* Every node value as an extra output: the result parses, with the same
 * nodes and initializers byte for byte. */
static void add_outputs(const onp_model *m)
{
    size_t nv = 0;
    const char **vals = onp_model_node_values(m, &nv);
    if (!vals) return;
    onp_buf out;
    onp_buf_init(&out, 0);
    onp_error e;
    if (onp_model_add_outputs(m, vals, nv, &out, &e) == 0) {
        onp_model *o = NULL;
        ENSURE(onp_model_parse(out.p, out.n, NULL, &o, &e) == 0);
        const onp_graph *g = onp_model_graph(m), *h = onp_model_graph(o);
        ENSURE(h->n_nodes == g->n_nodes && h->n_initializers == g->n_initializers);
        ENSURE(h->n_outputs >= g->n_outputs && h->n_outputs <= g->n_outputs + nv);
        for (size_t i = 0; i < g->n_nodes; i++)
            ENSURE(h->nodes[i].raw.n == g->nodes[i].raw.n &&
                   !memcmp(h->nodes[i].raw.p, g->nodes[i].raw.p, g->nodes[i].raw.n));
        for (size_t i = 0; i < g->n_initializers; i++)
            ENSURE(h->initializers[i].msg.n == g->initializers[i].msg.n &&
                   !memcmp(h->initializers[i].msg.p, g->initializers[i].msg.p,
                           g->initializers[i].msg.n));
        onp_model_close(o);
    } else {
        ENSURE(e.code == ONP_ERR_NOMEM || e.code == ONP_ERR_USAGE);
    }
    onp_buf_free(&out);
}

/* The subgraph from every graph input to the last node value. */
static void extract(const onp_model *m)
{
    const onp_graph *g = onp_model_graph(m);
    size_t nv = 0;
    const char **vals = onp_model_node_values(m, &nv);
    if (!vals || !nv) return;
    const char **ins = malloc((g->n_inputs ? g->n_inputs : 1) * sizeof *ins);
    if (!ins) return;
    for (size_t i = 0; i < g->n_inputs; i++) ins[i] = g->inputs[i].name;
    onp_buf out;
    onp_buf_init(&out, 0);
    onp_error e;
    if (onp_model_extract(m, ins, g->n_inputs, &vals[nv - 1], 1, &out, &e) == 0) {
        onp_model *o = NULL;
        ENSURE(onp_model_parse(out.p, out.n, NULL, &o, &e) == 0);
        ENSURE(onp_model_graph(o)->n_nodes <= g->n_nodes);
        onp_model_close(o);
    } else {
        ENSURE(e.code == ONP_ERR_NOMEM || e.code == ONP_ERR_USAGE);
    }
    onp_buf_free(&out);
    free(ins);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onp_model *m = NULL;
    onp_error e;
    onp_error_clear(&e);
    if (onp_model_parse(data, size, NULL, &m, &e)) {
        ENSURE(m == NULL);
        /* FORMAT: bytes that do not decode; INPUT: refused by policy (a
         * repeated external_data key); NOMEM */
        ENSURE(e.code == ONP_ERR_FORMAT || e.code == ONP_ERR_INPUT || e.code == ONP_ERR_NOMEM);
        ENSURE(e.offset >= -1 && e.offset <= (int64_t)size);
        return 0;
    }
    walker w;
    memset(&w, 0, sizeof w);
    w.m = m;
    w.buf = onp_model_bytes(m, &w.n);
    ENSURE(w.buf == data && w.n == size);
    ENSURE(onp_model_path(m) == NULL);
    const onp_model_info *in = onp_model_info_get(m);
    str(&w, in->producer_name);
    str(&w, in->producer_version);
    str(&w, in->domain);
    str(&w, in->doc_string);
    for (size_t i = 0; i < in->n_opsets; i++) {
        str(&w, in->opsets[i].domain);
        (void)onp_model_opset(m, in->opsets[i].domain);
    }
    for (size_t i = 0; i < in->n_metadata; i++) {
        str(&w, in->metadata[i].key);
        str(&w, in->metadata[i].value);
    }
    for (size_t i = 0; i < in->n_functions; i++) {
        const onp_function *f = &in->functions[i];
        str(&w, f->name);
        str(&w, f->domain);
        for (size_t k = 0; k < f->n_inputs; k++) str(&w, f->inputs[k]);
        for (size_t k = 0; k < f->n_outputs; k++) str(&w, f->outputs[k]);
        for (size_t k = 0; k < f->n_nodes; k++) node(&w, &f->nodes[k], 1);
        for (size_t k = 0; k < f->n_opsets; k++) str(&w, f->opsets[k].domain);
    }
    graph(&w, onp_model_graph(m), 0);
    (void)onp_model_has_external(m);
    add_outputs(m);
    extract(m);
    onp_model_close(m);
    return 0;
}
