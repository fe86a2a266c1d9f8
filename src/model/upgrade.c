/*
 * upgrade.c — bring a legacy model (default-domain opset < 7) to opset 7 so
 * that ONNX Runtime, which has no kernels for the pre-7 versions of the
 * broadcasting operators, can run it.
 *
 * Opset 7 changed these operators (the others keep their pre-7 kernels):
 *   Add Sub Mul Div Pow   legacy `broadcast`/`axis` attributes dropped; with
 *                         an explicit axis that is not suffix alignment, B is
 *                         unsqueezed so numpy broadcasting gives the legacy
 *                         result
 *   Gemm                  `broadcast` dropped (C always broadcasts now)
 *   PRelu                 slope [C] applied per channel (axis 1) before;
 *                         unsqueezed to [C, 1, ...] for numpy broadcasting
 *   BatchNormalization    `is_test` dropped (opset 7 is inference-only here)
 *   AveragePool           nothing to change (count_include_pad defaults to 0)
 * Changed nodes are re-encoded field by field (untouched fields copied
 * verbatim); every other node and initializer is copied as it is; the
 * opset_import entry of the default domain becomes 7.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

static int is_broadcast_op(const char *op)
{
    return !strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div") ||
           !strcmp(op, "Pow");
}

/* Rank of a value from graph inputs, value_info, outputs or initializers; -1
 * when unknown. */
static int rank_of(const onp_graph *g, const char *name)
{
    const onp_tensor_view *t = onp_graph_initializer(g, name);
    if (t) return (int)t->rank;
    onp_type ty;
    if (!onp_graph_value_type(g, name, &ty) && ty.has_shape) return (int)ty.rank;
    return -1;
}

/* Encode NodeProto Unsqueeze(in) -> out with axes [from, to). */
static int put_unsqueeze(onp_buf *graph, const char *in, const char *out, int from, int to)
{
    onp_buf n, a;
    onp_buf_init(&n, 0);
    onp_buf_init(&a, 0);
    onp_pb_put_len(&a, 1, "axes", 4);
    for (int k = from; k < to; k++) onp_pb_put_uint(&a, 8, (uint64_t)k);
    onp_pb_put_uint(&a, 20, 7); /* INTS */
    onp_pb_put_len(&n, 1, in, strlen(in));
    onp_pb_put_len(&n, 2, out, strlen(out));
    onp_pb_put_len(&n, 4, "Unsqueeze", 9);
    onp_pb_put_len(&n, 5, a.p, a.n);
    int rc = a.failed || n.failed ? -1 : onp_pb_put_len(graph, 1, n.p, n.n);
    onp_buf_free(&a);
    onp_buf_free(&n);
    return rc;
}

/* Re-encode node `nd` into `graph`: attributes named in `drop` (NULL
 * terminated) are left out; input `repl_idx` (or -1) is replaced by
 * `repl_name`. */
static int put_node(onp_buf *graph, const onp_node *nd, const char *const *drop, int repl_idx,
                    const char *repl_name, onp_error *e)
{
    onp_buf n;
    onp_buf_init(&n, 0);
    onp_pb_cursor c;
    onp_pb_field f;
    onp_pb_cursor_init(&c, nd->raw.p, nd->raw.n, nd->raw.p, NULL);
    int in_idx = 0, r;
    while ((r = onp_pb_next(&c, &f, e)) == 1) {
        if (f.num == 1 && f.wt == ONP_WT_LEN) {
            if (in_idx++ == repl_idx) {
                onp_pb_put_len(&n, 1, repl_name, strlen(repl_name));
                continue;
            }
        } else if (f.num == 5 && f.wt == ONP_WT_LEN) {
            /* AttributeProto: left out when its name is in `drop` */
            int dropped = 0;
            onp_pb_cursor ac;
            onp_pb_field g;
            onp_pb_sub(&c, &f, &ac);
            while (!dropped && onp_pb_next(&ac, &g, e) == 1)
                if (g.num == 1 && g.wt == ONP_WT_LEN)
                    for (const char *const *d = drop; d && *d; d++)
                        if (strlen(*d) == g.len && !memcmp(*d, g.data, g.len)) dropped = 1;
            if (dropped) continue;
        }
        onp_buf_append(&n, f.start, (size_t)(f.stop - f.start));
    }
    int rc = r < 0 || n.failed ? -1 : onp_pb_put_len(graph, 1, n.p, n.n);
    onp_buf_free(&n);
    return rc;
}

int onp_model_upgrade_opset7(const onp_model *m, onp_buf *out, int *changed, onp_error *e)
{
    *changed = 0;
    int64_t v = onp_model_opset(m, "");
    if (v < 0 || v >= 7) return 0;
    const onp_graph *g = m->graph;
    static const char *const drop_bcast[] = {"broadcast", "axis", NULL};
    static const char *const drop_gemm[] = {"broadcast", NULL};
    static const char *const drop_bn[] = {"is_test", NULL};
    onp_buf graph;
    onp_buf_init(&graph, 0);
    onp_pb_cursor c;
    onp_pb_field f;
    onp_pb_cursor_init(&c, g->raw.p, g->raw.n, m->buf, m->path);
    size_t node_i = 0, extra = 0;
    int r;
    while ((r = onp_pb_next(&c, &f, e)) == 1) {
        if (f.num != 1 || f.wt != ONP_WT_LEN || node_i >= g->n_nodes) {
            onp_buf_append(&graph, f.start, (size_t)(f.stop - f.start));
            continue;
        }
        const onp_node *nd = &g->nodes[node_i++];
        const char *op = nd->op_type;
        if (nd->domain[0] && strcmp(nd->domain, "ai.onnx")) {
            onp_buf_append(&graph, f.start, (size_t)(f.stop - f.start));
            continue;
        }
        int rc = 0;
        if (is_broadcast_op(op) && nd->n_inputs == 2) {
            const onp_attr *ax = onp_node_attr(nd, "axis"), *bc = onp_node_attr(nd, "broadcast");
            int ra = rank_of(g, nd->inputs[0]), rb = rank_of(g, nd->inputs[1]);
            if (bc && bc->i && ax && ra >= 0 && rb >= 0) {
                int axis = (int)(ax->i < 0 ? ax->i + ra : ax->i);
                if (axis + rb < ra) { /* not suffix-aligned: unsqueeze the tail of B */
                    char name[512];
                    snprintf(name, sizeof name, "%s__onp_opset7_%zu", nd->inputs[1], extra++);
                    char *nm = onp_arena_strndup((onp_arena *)&m->arena, name, strlen(name));
                    if (!nm || put_unsqueeze(&graph, nd->inputs[1], nm, rb, ra - axis))
                        rc = -1;
                    else
                        rc = put_node(&graph, nd, drop_bcast, 1, nm, e);
                    goto next;
                }
            }
            rc = put_node(&graph, nd, drop_bcast, -1, NULL, e);
        } else if (!strcmp(op, "Gemm")) {
            rc = put_node(&graph, nd, drop_gemm, -1, NULL, e);
        } else if (!strcmp(op, "BatchNormalization")) {
            rc = put_node(&graph, nd, drop_bn, -1, NULL, e);
        } else if (!strcmp(op, "PRelu") && nd->n_inputs == 2) {
            int rx = rank_of(g, nd->inputs[0]), rs = rank_of(g, nd->inputs[1]);
            if (rx > 2 && rs == 1) { /* slope [C] on axis 1: [C, 1, ..., 1] */
                char name[512];
                snprintf(name, sizeof name, "%s__onp_opset7_%zu", nd->inputs[1], extra++);
                char *nm = onp_arena_strndup((onp_arena *)&m->arena, name, strlen(name));
                if (!nm || put_unsqueeze(&graph, nd->inputs[1], nm, 1, rx - 1))
                    rc = -1;
                else
                    rc = put_node(&graph, nd, NULL, 1, nm, e);
            } else {
                onp_buf_append(&graph, f.start, (size_t)(f.stop - f.start));
            }
        } else {
            onp_buf_append(&graph, f.start, (size_t)(f.stop - f.start));
        }
    next:
        if (rc) {
            onp_buf_free(&graph);
            return onp_error_set(e, ONP_ERR_NOMEM, m->path, NULL, -1,
                                 "out of memory upgrading the model");
        }
    }
    if (r < 0 || graph.failed) {
        onp_buf_free(&graph);
        return r < 0 ? -1 : onp_error_set(e, ONP_ERR_NOMEM, m->path, NULL, -1, "out of memory");
    }
    /* ModelProto: new graph, default-domain opset 7, the rest verbatim */
    onp_pb_cursor_init(&c, m->buf, m->n, m->buf, m->path);
    while ((r = onp_pb_next(&c, &f, e)) == 1) {
        if (f.num == 7 && f.wt == ONP_WT_LEN) {
            onp_pb_put_len(out, 7, graph.p, graph.n);
        } else if (f.num == 8 && f.wt == ONP_WT_LEN) {
            /* OperatorSetIdProto: rewrite the default domain's version */
            onp_pb_cursor oc;
            onp_pb_field of;
            onp_pb_sub(&c, &f, &oc);
            int is_default = 1;
            while (onp_pb_next(&oc, &of, e) == 1)
                if (of.num == 1 && of.wt == ONP_WT_LEN && of.len &&
                    !(of.len == 7 && !memcmp(of.data, "ai.onnx", 7)))
                    is_default = 0;
            if (is_default) {
                onp_buf os;
                onp_buf_init(&os, 0);
                onp_pb_put_uint(&os, 2, 7);
                onp_pb_put_len(out, 8, os.p, os.n);
                onp_buf_free(&os);
            } else {
                onp_buf_append(out, f.start, (size_t)(f.stop - f.start));
            }
        } else {
            onp_buf_append(out, f.start, (size_t)(f.stop - f.start));
        }
    }
    onp_buf_free(&graph);
    if (r < 0) return -1;
    if (out->failed) return onp_error_set(e, ONP_ERR_NOMEM, m->path, NULL, -1, "out of memory");
    *changed = 1;
    return 0;
}
