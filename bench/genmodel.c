/*
 * genmodel.c — benchmark input generator: a valid ONNX model whose weights
 * total BYTES, inline or in an external data file, with a node count that
 * does not depend on BYTES.
 *
 *   genmodel OUT.onnx BYTES TENSORS [--external]
 *
 * Graph: x (float32 [E]) -> Add(w_0) -> Add(w_1) -> ... -> y, E = BYTES /
 * TENSORS / 4.  External data goes to OUT.onnx.data beside the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pb/wire.h"

static void put_str(onp_buf *b, uint32_t num, const char *s)
{
    onp_pb_put_len(b, num, s, strlen(s));
}

/* ValueInfoProto{name, type{tensor_type{elem_type=1, shape{dim{dim_value=E}}}}} */
static void value_info(onp_buf *g, uint32_t field, const char *name, long long e)
{
    onp_buf dim = {0}, shape = {0}, tt = {0}, type = {0}, vi = {0};
    onp_pb_put_uint(&dim, 1, (uint64_t)e);
    onp_pb_put_len(&shape, 1, dim.p, dim.n);
    onp_pb_put_uint(&tt, 1, 1);
    onp_pb_put_len(&tt, 2, shape.p, shape.n);
    onp_pb_put_len(&type, 1, tt.p, tt.n);
    put_str(&vi, 1, name);
    onp_pb_put_len(&vi, 2, type.p, type.n);
    onp_pb_put_len(g, field, vi.p, vi.n);
    onp_buf_free(&dim), onp_buf_free(&shape), onp_buf_free(&tt), onp_buf_free(&type),
        onp_buf_free(&vi);
}

static void kv(onp_buf *t, const char *k, const char *v)
{
    onp_buf e = {0};
    put_str(&e, 1, k);
    put_str(&e, 2, v);
    onp_pb_put_len(t, 13, e.p, e.n);
    onp_buf_free(&e);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: genmodel OUT.onnx BYTES TENSORS [--external]\n");
        return 2;
    }
    const char *out = argv[1];
    long long bytes = atoll(argv[2]), k = atoll(argv[3]);
    int external = argc > 4 && !strcmp(argv[4], "--external");
    long long e = bytes / k / 4;
    size_t tbytes = (size_t)e * 4;
    float *vals = malloc(tbytes);
    if (!vals) return 1;
    for (long long i = 0; i < e; i++) vals[i] = (float)(i % 1000) * 1e-3f;
    char data_path[4096], data_name[4096];
    snprintf(data_path, sizeof data_path, "%s.data", out);
    const char *slash = strrchr(data_path, '/');
    snprintf(data_name, sizeof data_name, "%s", slash ? slash + 1 : data_path);
    FILE *df = external ? fopen(data_path, "wb") : NULL;
    if (external && !df) return 1;
    FILE *f = fopen(out, "wb");
    if (!f) return 1;
    /* the graph is assembled in pieces so inline weights are streamed out */
    onp_buf head = {0}, g = {0};
    onp_pb_put_uint(&head, 1, 8);          /* ir_version */
    put_str(&head, 2, "onnxparity-bench"); /* producer_name */
    onp_buf op = {0};
    onp_pb_put_uint(&op, 2, 17);
    onp_pb_put_len(&head, 8, op.p, op.n); /* opset_import ai.onnx 17 */
    onp_buf_free(&op);
    char name[64], prev[64] = "x";
    for (long long i = 0; i < k; i++) { /* nodes */
        onp_buf n = {0};
        snprintf(name, sizeof name, "w_%lld", i);
        char o[64];
        snprintf(o, sizeof o, i + 1 == k ? "y" : "h_%lld", i);
        put_str(&n, 1, prev);
        put_str(&n, 1, name);
        put_str(&n, 2, o);
        put_str(&n, 4, "Add");
        onp_pb_put_len(&g, 1, n.p, n.n);
        onp_buf_free(&n);
        snprintf(prev, sizeof prev, "%s", o);
    }
    put_str(&g, 2, "bench");
    value_info(&g, 11, "x", e);
    value_info(&g, 12, "y", e);
    /* initializers: header fields in a buffer, raw_data streamed */
    size_t init_total = 0;
    onp_buf *hdrs = calloc((size_t)k, sizeof *hdrs);
    for (long long i = 0; i < k; i++) {
        onp_buf *t = &hdrs[i];
        onp_pb_put_uint(t, 1, (uint64_t)e); /* dims */
        onp_pb_put_uint(t, 2, 1);           /* FLOAT */
        snprintf(name, sizeof name, "w_%lld", i);
        put_str(t, 8, name);
        if (external) {
            char off[32], len[32];
            snprintf(off, sizeof off, "%lld", (long long)i * (long long)tbytes);
            snprintf(len, sizeof len, "%zu", tbytes);
            kv(t, "location", data_name);
            kv(t, "offset", off);
            kv(t, "length", len);
            onp_pb_put_uint(t, 14, 1);
        }
        size_t body = t->n + (external ? 0 : 1 + onp_pb_varint_size(tbytes) + tbytes);
        init_total += 1 + onp_pb_varint_size(body) + body;
    }
    size_t graph_len = g.n + init_total;
    onp_pb_put_header(&head, 7, graph_len);
    fwrite(head.p, 1, head.n, f);
    fwrite(g.p, 1, g.n, f);
    for (long long i = 0; i < k; i++) {
        onp_buf *t = &hdrs[i];
        size_t body = t->n + (external ? 0 : 1 + onp_pb_varint_size(tbytes) + tbytes);
        onp_buf pre = {0};
        onp_pb_put_header(&pre, 5, body);
        fwrite(pre.p, 1, pre.n, f);
        fwrite(t->p, 1, t->n, f);
        onp_buf_free(&pre);
        if (external) {
            fwrite(vals, 1, tbytes, df);
        } else {
            onp_buf rh = {0};
            onp_pb_put_header(&rh, 9, tbytes);
            fwrite(rh.p, 1, rh.n, f);
            fwrite(vals, 1, tbytes, f);
            onp_buf_free(&rh);
        }
        onp_buf_free(t);
    }
    free(hdrs);
    onp_buf_free(&head);
    onp_buf_free(&g);
    free(vals);
    if (df && fclose(df)) return 1;
    return fclose(f) ? 1 : 0;
}
