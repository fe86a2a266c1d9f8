/*
 * test_model.c — the zero-copy ModelProto view, external data and the
 * splicing writer (include/onnxparity/model.h, src/model/).
 *
 * Models are built here with a small ONNX encoder (onp_buf + the wire
 * encoder; field numbers written out from onnx.proto).  Covered: every field
 * of ModelProto, GraphProto, NodeProto and AttributeProto (each attribute
 * type, floats/ints packed, unpacked and mixed, subgraphs, sparse tensors,
 * type protos), value infos with dim_value/dim_param and every type kind,
 * functions, metadata, opset imports, the lookup helpers, initializers
 * materialised with onp_model_tensor; malformed models with the field path
 * and byte offset of the error; nesting depth (the cap exactly, and 10,000
 * levels of graphs and of types built without recursion); Git LFS pointers
 * and empty files; external data (values, every refused location, symlinks,
 * ranges past the end, a 3 GiB sparse file); and the writer
 * (onp_model_add_outputs, onp_model_extract) copying nodes and initializers
 * byte for byte.
 */
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnxparity/model.h"
#include "pb/wire.h"
#include "pbenc.h"
#include "testhelp.h"

// --- field numbers (onnx.proto) --------------------------------------------------

enum { /* ModelProto */
       M_IR = 1,
       M_PRODUCER = 2,
       M_PRODUCER_VERSION = 3,
       M_DOMAIN = 4,
       M_MODEL_VERSION = 5,
       M_DOC = 6,
       M_GRAPH = 7,
       M_OPSET = 8,
       M_METADATA = 14,
       M_FUNCTIONS = 25
};
enum { /* GraphProto */
       G_NODE = 1,
       G_NAME = 2,
       G_INIT = 5,
       G_DOC = 10,
       G_INPUT = 11,
       G_OUTPUT = 12,
       G_VALUE_INFO = 13,
       G_SPARSE_INIT = 15
};
enum { /* NodeProto */
       N_INPUT = 1,
       N_OUTPUT = 2,
       N_NAME = 3,
       N_OP = 4,
       N_ATTR = 5,
       N_DOC = 6,
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
       A_TPS = 15,
       A_TYPE = 20,
       A_REF = 21,
       A_SPARSE = 22,
       A_SPARSES = 23
};
enum { /* TensorProto */
       T_DIMS = 1,
       T_DTYPE = 2,
       T_INT32 = 5,
       T_STRING = 6,
       T_INT64 = 7,
       T_NAME = 8,
       T_RAW = 9,
       T_EXTERNAL = 13,
       T_LOCATION = 14
};

// --- helpers -------------------------------------------------------------------

static char tmpdir[64];

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

static int spit(const char *p, const void *d, size_t n)
{
    FILE *f = fopen(p, "wb");
    if (!f) return -1;
    size_t w = n ? fwrite(d, 1, n, f) : 0;
    return fclose(f) == 0 && w == n ? 0 : -1;
}

static uint8_t *find_bytes(const onp_buf *b, const void *needle, size_t n)
{
    return memmem(b->p, b->n, needle, n);
}

/* Offset just past the unique marker string in b, or -1. */
static int64_t after_marker(const onp_buf *b, const char *marker)
{
    size_t n = strlen(marker);
    uint8_t *p = find_bytes(b, marker, n);
    if (!p || memmem(p + 1, b->n - (size_t)(p + 1 - b->p), marker, n)) return -1;
    return (int64_t)(p - b->p) + (int64_t)n;
}

static int span_is(const onp_span *s, const onp_buf *b)
{
    return s->n == b->n && (!b->n || !memcmp(s->p, b->p, b->n));
}

// --- a tiny ONNX encoder --------------------------------------------------------

static void ext_entry(onp_buf *t, const char *key, const char *value)
{
    onp_buf kv = {0};
    put_str(&kv, 1, key);
    put_str(&kv, 2, value);
    put_msg(t, T_EXTERNAL, &kv);
}

/* A TensorProto with external data; offset/length < 0: absent. */
static void tensor_ext(onp_buf *t, const char *name, int32_t dt, int rank, const int64_t *dims,
                       const char *location, int64_t offset, int64_t length)
{
    char num[32];
    onp_buf_init(t, 0);
    for (int i = 0; i < rank; i++) onp_pb_put_uint(t, T_DIMS, (uint64_t)dims[i]);
    onp_pb_put_uint(t, T_DTYPE, (uint64_t)dt);
    put_str(t, T_NAME, name);
    ext_entry(t, "location", location);
    if (offset >= 0) {
        snprintf(num, sizeof num, "%" PRId64, offset);
        ext_entry(t, "offset", num);
    }
    if (length >= 0) {
        snprintf(num, sizeof num, "%" PRId64, length);
        ext_entry(t, "length", num);
    }
    ext_entry(t, "checksum", "abc"); /* kept */
    ext_entry(t, "other", "x");      /* ignored */
    onp_pb_put_uint(t, T_LOCATION, 1);
}

/* TypeProto of a tensor.  dims: "3" dim_value, "N" dim_param, "?" neither;
 * rank -1: no shape at all. */
static void type_tensor(onp_buf *tp, uint32_t which, int32_t elem, int rank,
                        const char *const *dims)
{
    onp_buf tt = {0}, sh = {0};
    if (elem) onp_pb_put_uint(&tt, 1, (uint64_t)elem);
    if (rank >= 0) {
        for (int i = 0; i < rank; i++) {
            onp_buf d = {0};
            if (dims[i][0] >= '0' && dims[i][0] <= '9')
                onp_pb_put_uint(&d, 1, strtoull(dims[i], NULL, 10));
            else if (dims[i][0] != '?')
                put_str(&d, 2, dims[i]);
            put_msg(&sh, 1, &d);
        }
        put_msg(&tt, 2, &sh);
    }
    onp_buf_init(tp, 0);
    put_msg(tp, which, &tt); /* 1 tensor_type, 8 sparse_tensor_type */
}

/* TypeProto wrapping `inner` in sequence_type (4) or optional_type (9). */
static void type_wrap(onp_buf *tp, uint32_t which, onp_buf *inner)
{
    onp_buf w = {0};
    put_msg(&w, 1, inner);
    onp_buf_init(tp, 0);
    put_msg(tp, which, &w);
}

/* A ValueInfoProto; type may be NULL (freed otherwise). */
static void value_info(onp_buf *vi, const char *name, onp_buf *type)
{
    onp_buf_init(vi, 0);
    put_str(vi, 1, name);
    if (type) put_msg(vi, 2, type);
}

static void vi_tensor(onp_buf *vi, const char *name, int32_t elem, int rank,
                      const char *const *dims)
{
    onp_buf tp;
    type_tensor(&tp, 1, elem, rank, dims);
    value_info(vi, name, &tp);
}

/* A NodeProto; ins/outs are comma-separated ("X,,W" has an empty middle
 * input; "" has none).  name/domain NULL: field absent. */
static void node(onp_buf *n, const char *name, const char *op, const char *domain, const char *ins,
                 const char *outs)
{
    onp_buf_init(n, 0);
    const char *lists[2] = {ins, outs};
    for (int l = 0; l < 2; l++) {
        const char *p = lists[l];
        if (!*p) continue;
        for (;;) {
            const char *c = strchr(p, ',');
            size_t k = c ? (size_t)(c - p) : strlen(p);
            onp_pb_put_len(n, l ? N_OUTPUT : N_INPUT, p, k);
            if (!c) break;
            p = c + 1;
        }
    }
    if (name) put_str(n, N_NAME, name);
    put_str(n, N_OP, op);
    if (domain) put_str(n, N_DOMAIN, domain);
}

static void attr_begin(onp_buf *a, const char *name, int type)
{
    onp_buf_init(a, 0);
    put_str(a, A_NAME, name);
    if (type) onp_pb_put_uint(a, A_TYPE, (uint64_t)type);
}

static void opset(onp_buf *m, const char *domain, int64_t version)
{
    onp_buf o = {0};
    if (domain) put_str(&o, 1, domain);
    onp_pb_put_uint(&o, 2, (uint64_t)version);
    put_msg(m, M_OPSET, &o);
}

/* A ModelProto around a graph (freed). */
static void model_of(onp_buf *m, onp_buf *graph)
{
    onp_buf_init(m, 0);
    onp_pb_put_uint(m, M_IR, 8);
    opset(m, NULL, 17);
    put_msg(m, M_GRAPH, graph);
}

static onp_model *parse_ok(const onp_buf *b, const char *path)
{
    onp_model *m = NULL;
    onp_error e;
    onp_error_clear(&e);
    int rc = onp_model_parse(b->p, b->n, path, &m, &e);
    CHECKF(rc == 0 && m, "parse: %s: %s at %" PRId64 ": %s", e.file, e.field, e.offset, e.msg);
    return rc == 0 ? m : NULL;
}

/* Parse must fail with `code`, naming `field` (prefix match when it ends in
 * '*'), at `off` (-2: not checked). */
static void parse_fails(const onp_buf *b, const char *path, onp_errcode code, const char *field,
                        int64_t off, const char *what)
{
    onp_model *m = (onp_model *)&m; /* must be reset to NULL */
    onp_error e;
    onp_error_clear(&e);
    int rc = onp_model_parse(b->p, b->n, path, &m, &e);
    CHECKF(rc == -1 && m == NULL, "%s: parsed", what);
    if (rc == 0) {
        onp_model_close(m);
        return;
    }
    CHECKF(e.code == code, "%s: code %s: %s", what, onp_errcode_name(e.code), e.msg);
    size_t fl = strlen(field);
    int match =
        fl && field[fl - 1] == '*' ? !strncmp(e.field, field, fl - 1) : !strcmp(e.field, field);
    CHECKF(match, "%s: field '%s', expected '%s' (%s)", what, e.field, field, e.msg);
    if (off != -2)
        CHECKF(e.offset == off, "%s: offset %" PRId64 ", expected %" PRId64 " (%s)", what, e.offset,
               off, e.msg);
    if (path) CHECKF(!strcmp(e.file, path), "%s: file '%s'", what, e.file);
}

// --- every field -----------------------------------------------------------------

static void sparse_msg(onp_buf *s, const char *vname, int64_t d0, int64_t d1)
{
    onp_buf v, ix;
    int64_t two[1] = {2};
    float vals[2] = {1.25f, -8};
    int64_t idx[2] = {1, 3};
    tensor_raw(&v, vname, ONP_FLOAT, 1, two, vals, 8);
    tensor_raw(&ix, NULL, ONP_INT64, 1, two, idx, 16);
    onp_buf_init(s, 0);
    put_msg(s, 1, &v);
    put_msg(s, 2, &ix);
    onp_pb_put_uint(s, 3, (uint64_t)d0);
    onp_pb_put_uint(s, 3, (uint64_t)d1);
}

static void small_graph(onp_buf *g, const char *name)
{
    onp_buf n, vi;
    onp_buf_init(g, 0);
    put_str(g, G_NAME, name);
    node(&n, NULL, "Identity", NULL, "X", "sub_out");
    put_msg(g, G_NODE, &n);
    value_info(&vi, "sub_out", NULL);
    put_msg(g, G_OUTPUT, &vi);
}

/* The node carrying one attribute of every kind. */
static void big_node(onp_buf *n)
{
    onp_buf a, t, g, s, tp;
    node(n, "n0", "Custom", "com.microsoft", "X,,W", "mid,");
    attr_begin(&a, "a_f", ONP_ATTR_FLOAT);
    put_f32(&a, A_F, 0.25f);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_i", ONP_ATTR_INT);
    onp_pb_put_uint(&a, A_I, (uint64_t)(int64_t)-7);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_s", ONP_ATTR_STRING);
    onp_pb_put_len(&a, A_S, "bytes\0x", 7);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_t", ONP_ATTR_TENSOR);
    int64_t two[1] = {2};
    float tv[2] = {0.5f, 2};
    tensor_raw(&t, "tval", ONP_FLOAT, 1, two, tv, 8);
    put_msg(&a, A_T, &t);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_g", ONP_ATTR_GRAPH);
    small_graph(&g, "sub");
    put_msg(&a, A_G, &g);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_floats_packed", ONP_ATTR_FLOATS);
    float fp[3] = {1.5f, -2.5f, 3};
    put_packed_f32(&a, A_FLOATS, fp, 3);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_floats_unpacked", ONP_ATTR_FLOATS);
    put_f32(&a, A_FLOATS, 4);
    put_f32(&a, A_FLOATS, 5);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_floats_mixed", ONP_ATTR_FLOATS);
    float one[1] = {1}, three[2] = {3, 4};
    put_packed_f32(&a, A_FLOATS, one, 1);
    put_f32(&a, A_FLOATS, 2);
    put_packed_f32(&a, A_FLOATS, three, 2);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_ints_packed", ONP_ATTR_INTS);
    int64_t ip[3] = {1, -1, INT64_MAX};
    put_packed_i64(&a, A_INTS, ip, 3);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_ints_unpacked", ONP_ATTR_INTS);
    onp_pb_put_uint(&a, A_INTS, 10);
    onp_pb_put_uint(&a, A_INTS, 20);
    int64_t thirty[1] = {30};
    put_packed_i64(&a, A_INTS, thirty, 1);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_strings", ONP_ATTR_STRINGS);
    put_str(&a, A_STRINGS, "a");
    put_str(&a, A_STRINGS, "");
    put_str(&a, A_STRINGS, "ccc");
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_tensors", ONP_ATTR_TENSORS);
    int64_t three_d[1] = {3};
    tensor_raw(&t, "t0", ONP_INT8, 1, three_d, "\x01\xff\x7f", 3);
    put_msg(&a, A_TENSORS, &t);
    double dv = -0.125;
    tensor_raw(&t, "t1", ONP_DOUBLE, 0, NULL, &dv, 8);
    put_msg(&a, A_TENSORS, &t);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_graphs", ONP_ATTR_GRAPHS);
    small_graph(&g, "g1");
    put_msg(&a, A_GRAPHS, &g);
    small_graph(&g, "g2");
    put_msg(&a, A_GRAPHS, &g);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_sparse", ONP_ATTR_SPARSE_TENSOR);
    sparse_msg(&s, "sv", 3, 4);
    put_msg(&a, A_SPARSE, &s);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_sparses", ONP_ATTR_SPARSE_TENSORS);
    sparse_msg(&s, "sv1", 2, 2);
    put_msg(&a, A_SPARSES, &s);
    sparse_msg(&s, "sv2", 1, 4);
    put_msg(&a, A_SPARSES, &s);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_tp", ONP_ATTR_TYPE_PROTO);
    const char *seven[1] = {"7"};
    type_tensor(&tp, 1, ONP_INT64, 1, seven);
    put_msg(&a, A_TP, &tp);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_tps", ONP_ATTR_TYPE_PROTOS);
    type_tensor(&tp, 1, ONP_FLOAT, -1, NULL);
    put_msg(&a, A_TPS, &tp);
    onp_buf inner;
    type_tensor(&inner, 1, ONP_BOOL, -1, NULL);
    type_wrap(&tp, 4, &inner);
    put_msg(&a, A_TPS, &tp);
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_ref", ONP_ATTR_INT);
    put_str(&a, A_REF, "outer");
    put_msg(n, N_ATTR, &a);
    attr_begin(&a, "a_untyped", 0);
    put_msg(n, N_ATTR, &a);
    put_str(n, N_DOC, "ignored doc");
}

typedef struct full_model {
    onp_buf bytes;
    onp_buf node0, node1, init_w, vi_x; /* copies of some messages */
} full_model;

static void build_full(full_model *fm)
{
    onp_buf g = {0}, t, vi, tp, inner, s;
    put_str(&g, G_NAME, "main");
    big_node(&fm->node0);
    put_copy(&g, G_NODE, &fm->node0);
    node(&fm->node1, NULL, "Relu", NULL, "mid", "out");
    put_copy(&g, G_NODE, &fm->node1);
    /* initializers */
    int64_t d3[1] = {3}, d2[1] = {2}, d0[1] = {0};
    float w[3] = {1, -2, 3.5f};
    tensor_raw(&fm->init_w, "W", ONP_FLOAT, 1, d3, w, 12);
    put_copy(&g, G_INIT, &fm->init_w);
    onp_buf_init(&t, 0); /* typed int64 */
    onp_pb_put_uint(&t, T_DIMS, 2);
    onp_pb_put_uint(&t, T_DTYPE, ONP_INT64);
    put_str(&t, T_NAME, "K");
    int64_t kv[2] = {-3, (int64_t)1 << 40};
    put_packed_i64(&t, T_INT64, kv, 2);
    put_msg(&g, G_INIT, &t);
    onp_buf_init(&t, 0); /* strings */
    onp_pb_put_uint(&t, T_DIMS, 2);
    onp_pb_put_uint(&t, T_DTYPE, ONP_STRING);
    put_str(&t, T_NAME, "STR");
    put_str(&t, T_STRING, "hello");
    put_str(&t, T_STRING, "");
    put_msg(&g, G_INIT, &t);
    onp_buf_init(&t, 0); /* float16 in int32_data */
    onp_pb_put_uint(&t, T_DIMS, 2);
    onp_pb_put_uint(&t, T_DTYPE, ONP_FLOAT16);
    put_str(&t, T_NAME, "H");
    onp_pb_put_uint(&t, T_INT32, 0x3c00);
    onp_pb_put_uint(&t, T_INT32, 0xfbff);
    put_msg(&g, G_INIT, &t);
    tensor_raw(&t, "E", ONP_FLOAT, 1, d0, NULL, 0);
    put_msg(&g, G_INIT, &t);
    (void)d2;
    /* sparse initializer */
    sparse_msg(&s, "sp", 5, 1);
    put_msg(&g, G_SPARSE_INIT, &s);
    /* inputs of every type kind */
    const char *xdims[2] = {"N", "3"};
    vi_tensor(&fm->vi_x, "X", ONP_FLOAT, 2, xdims);
    put_copy(&g, G_INPUT, &fm->vi_x);
    value_info(&vi, "Y", NULL);
    put_msg(&g, G_INPUT, &vi);
    type_tensor(&inner, 1, ONP_INT64, -1, NULL);
    type_wrap(&tp, 4, &inner);
    value_info(&vi, "S", &tp);
    put_msg(&g, G_INPUT, &vi);
    type_tensor(&inner, 1, ONP_FLOAT16, -1, NULL);
    type_wrap(&tp, 9, &inner);
    value_info(&vi, "O", &tp);
    put_msg(&g, G_INPUT, &vi);
    onp_buf_init(&tp, 0);
    onp_buf mt = {0};
    onp_pb_put_uint(&mt, 1, ONP_STRING);
    put_msg(&tp, 5, &mt);
    value_info(&vi, "M", &tp);
    put_msg(&g, G_INPUT, &vi);
    const char *four[1] = {"4"};
    type_tensor(&tp, 8, ONP_FLOAT, 1, four);
    value_info(&vi, "SP", &tp);
    put_msg(&g, G_INPUT, &vi);
    vi_tensor(&vi, "Z", ONP_FLOAT, -1, NULL);
    put_msg(&g, G_INPUT, &vi);
    vi_tensor(&vi, "SC", ONP_DOUBLE, 0, NULL);
    put_msg(&g, G_INPUT, &vi);
    const char *unk[2] = {"?", "batch"};
    vi_tensor(&vi, "U", ONP_UINT8, 2, unk);
    put_msg(&g, G_INPUT, &vi);
    /* output and value_info */
    vi_tensor(&vi, "out", ONP_FLOAT, 2, xdims);
    put_msg(&g, G_OUTPUT, &vi);
    vi_tensor(&vi, "mid", ONP_INT32, 1, four);
    put_msg(&g, G_VALUE_INFO, &vi);
    put_str(&g, G_DOC, "graph doc"); /* ignored */
    /* the model */
    onp_buf *m = &fm->bytes;
    onp_buf_init(m, 0);
    onp_pb_put_uint(m, M_IR, 8);
    put_str(m, M_PRODUCER, "onnxparity-test");
    put_str(m, M_PRODUCER_VERSION, "1.2.3");
    put_str(m, M_DOMAIN, "org.test");
    onp_pb_put_uint(m, M_MODEL_VERSION, 42);
    put_str(m, M_DOC, "model doc");
    opset(m, NULL, 17);
    put_msg(m, M_GRAPH, &g);
    opset(m, "com.microsoft", 1);
    opset(m, "ai.onnx.ml", 3);
    onp_buf kvm = {0};
    put_str(&kvm, 1, "k1");
    put_str(&kvm, 2, "v1");
    put_msg(m, M_METADATA, &kvm);
    put_str(&kvm, 1, "author");
    put_str(&kvm, 2, "me");
    put_msg(m, M_METADATA, &kvm);
    onp_buf fn = {0}, fnode;
    put_str(&fn, 1, "MyFn");
    put_str(&fn, 4, "x");
    put_str(&fn, 5, "y");
    node(&fnode, "fn_neg", "Neg", NULL, "x", "y");
    put_msg(&fn, 7, &fnode);
    onp_buf fo = {0};
    onp_pb_put_uint(&fo, 2, 17);
    put_msg(&fn, 9, &fo);
    put_str(&fn, 10, "custom");
    put_msg(m, M_FUNCTIONS, &fn);
    onp_pb_put_uint(m, 99, 5); /* an unknown field */
}

static void free_full(full_model *fm)
{
    onp_buf_free(&fm->bytes);
    onp_buf_free(&fm->node0);
    onp_buf_free(&fm->node1);
    onp_buf_free(&fm->init_w);
    onp_buf_free(&fm->vi_x);
}

static int strs_are(const char *const *got, size_t n, const char *const *want, size_t nw)
{
    if (n != nw) return 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(got[i], want[i])) return 0;
    return 1;
}

static void check_small_graph(const onp_graph *g, const char *name)
{
    CHECK(g && !strcmp(g->name, name));
    if (!g) return;
    CHECK(g->n_nodes == 1 && !strcmp(g->nodes[0].op_type, "Identity"));
    CHECK(g->n_outputs == 1 && !strcmp(g->outputs[0].name, "sub_out"));
    CHECK(g->outputs[0].type.kind == ONP_TYPE_NONE);
}

static void check_sparse(const onp_sparse_view *s, const char *vname, int64_t d0, int64_t d1)
{
    CHECK(s->rank == 2 && s->dims[0] == d0 && s->dims[1] == d1);
    CHECK(!strcmp(s->values.name, vname) && s->values.data_type == ONP_FLOAT);
    CHECK(s->values.count == 2 && s->values.bytes == 8);
    CHECK(s->indices.data_type == ONP_INT64 && s->indices.count == 2);
}

static void test_every_field(void)
{
    full_model fm;
    memset(&fm, 0, sizeof fm);
    build_full(&fm);
    CHECK(!fm.bytes.failed);
    onp_model *m = parse_ok(&fm.bytes, "mem/model.onnx");
    if (!m) {
        free_full(&fm);
        return;
    }
    size_t nb;
    CHECK(onp_model_bytes(m, &nb) == fm.bytes.p && nb == fm.bytes.n);
    CHECK(!strcmp(onp_model_path(m), "mem/model.onnx"));
    CHECK(onp_model_has_external(m) == 0);
    /* ModelProto */
    const onp_model_info *in = onp_model_info_get(m);
    CHECK(in->ir_version == 8 && in->model_version == 42);
    CHECK(!strcmp(in->producer_name, "onnxparity-test") && !strcmp(in->producer_version, "1.2.3"));
    CHECK(!strcmp(in->domain, "org.test") && !strcmp(in->doc_string, "model doc"));
    CHECK(in->n_opsets == 3);
    if (in->n_opsets == 3) {
        CHECK(!strcmp(in->opsets[0].domain, "") && in->opsets[0].version == 17);
        CHECK(!strcmp(in->opsets[1].domain, "com.microsoft") && in->opsets[1].version == 1);
        CHECK(!strcmp(in->opsets[2].domain, "ai.onnx.ml") && in->opsets[2].version == 3);
    }
    CHECK(onp_model_opset(m, "") == 17 && onp_model_opset(m, "ai.onnx") == 17);
    CHECK(onp_model_opset(m, NULL) == 17);
    CHECK(onp_model_opset(m, "com.microsoft") == 1 && onp_model_opset(m, "ai.onnx.ml") == 3);
    CHECK(onp_model_opset(m, "nope") == -1);
    CHECK(in->n_metadata == 2);
    if (in->n_metadata == 2) {
        CHECK(!strcmp(in->metadata[0].key, "k1") && !strcmp(in->metadata[0].value, "v1"));
        CHECK(!strcmp(in->metadata[1].key, "author") && !strcmp(in->metadata[1].value, "me"));
    }
    CHECK(in->n_functions == 1);
    if (in->n_functions == 1) {
        const onp_function *f = &in->functions[0];
        CHECK(!strcmp(f->name, "MyFn") && !strcmp(f->domain, "custom"));
        CHECK(f->n_inputs == 1 && !strcmp(f->inputs[0], "x"));
        CHECK(f->n_outputs == 1 && !strcmp(f->outputs[0], "y"));
        CHECK(f->n_nodes == 1 && !strcmp(f->nodes[0].op_type, "Neg") &&
              !strcmp(f->nodes[0].name, "fn_neg"));
        CHECK(f->n_opsets == 1 && !strcmp(f->opsets[0].domain, "") && f->opsets[0].version == 17);
    }
    /* GraphProto */
    const onp_graph *g = onp_model_graph(m);
    CHECK(!strcmp(g->name, "main"));
    CHECK(g->raw.p == fm.bytes.p + g->raw.off);
    CHECK(g->n_nodes == 2 && g->n_initializers == 5 && g->n_sparse_initializers == 1);
    CHECK(g->n_inputs == 9 && g->n_outputs == 1 && g->n_value_info == 1);
    if (g->n_nodes != 2 || g->n_inputs != 9 || g->n_initializers != 5) {
        onp_model_close(m);
        free_full(&fm);
        return;
    }
    /* NodeProto */
    const onp_node *n0 = &g->nodes[0], *n1 = &g->nodes[1];
    CHECK(!strcmp(n0->name, "n0") && !strcmp(n0->op_type, "Custom"));
    CHECK(!strcmp(n0->domain, "com.microsoft"));
    const char *ins[3] = {"X", "", "W"}, *outs[2] = {"mid", ""};
    CHECK(strs_are(n0->inputs, n0->n_inputs, ins, 3));
    CHECK(strs_are(n0->outputs, n0->n_outputs, outs, 2));
    CHECK(span_is(&n0->raw, &fm.node0) && n0->raw.p == fm.bytes.p + n0->raw.off);
    CHECK(!strcmp(n1->name, "") && !strcmp(n1->domain, "") && !strcmp(n1->op_type, "Relu"));
    CHECK(span_is(&n1->raw, &fm.node1));
    CHECK(n0->n_attrs == 19);
    /* AttributeProto, one of each */
    const onp_attr *a;
    CHECK((a = onp_node_attr(n0, "a_f")) && a->type == ONP_ATTR_FLOAT && a->f == 0.25f);
    CHECK((a = onp_node_attr(n0, "a_i")) && a->type == ONP_ATTR_INT && a->i == -7);
    CHECK((a = onp_node_attr(n0, "a_s")) && a->type == ONP_ATTR_STRING && a->s.n == 7 &&
          !memcmp(a->s.p, "bytes\0x", 7) && a->s.p == fm.bytes.p + a->s.off);
    a = onp_node_attr(n0, "a_t");
    CHECK(a && a->type == ONP_ATTR_TENSOR && a->t);
    if (a && a->t) {
        CHECK(!strcmp(a->t->name, "tval") && a->t->data_type == ONP_FLOAT && a->t->rank == 1);
        onp_tensor t;
        onp_error e;
        CHECK(onp_model_tensor(m, a->t, &t, &e) == 0);
        CHECK(t.count == 2 && ((float *)t.data)[0] == 0.5f && ((float *)t.data)[1] == 2);
        CHECK(t.name && !strcmp(t.name, "tval"));
        onp_tensor_release(&t);
    }
    a = onp_node_attr(n0, "a_g");
    CHECK(a && a->type == ONP_ATTR_GRAPH && a->g);
    if (a) check_small_graph(a->g, "sub");
    a = onp_node_attr(n0, "a_floats_packed");
    CHECK(a && a->n_floats == 3 && a->floats[0] == 1.5f && a->floats[1] == -2.5f &&
          a->floats[2] == 3);
    a = onp_node_attr(n0, "a_floats_unpacked");
    CHECK(a && a->n_floats == 2 && a->floats[0] == 4 && a->floats[1] == 5);
    a = onp_node_attr(n0, "a_floats_mixed");
    CHECK(a && a->n_floats == 4);
    for (size_t i = 0; a && i < a->n_floats && i < 4; i++) CHECK(a->floats[i] == (float)(i + 1));
    a = onp_node_attr(n0, "a_ints_packed");
    CHECK(a && a->type == ONP_ATTR_INTS && a->n_ints == 3 && a->ints[0] == 1 && a->ints[1] == -1 &&
          a->ints[2] == INT64_MAX);
    a = onp_node_attr(n0, "a_ints_unpacked");
    CHECK(a && a->n_ints == 3 && a->ints[0] == 10 && a->ints[1] == 20 && a->ints[2] == 30);
    a = onp_node_attr(n0, "a_strings");
    CHECK(a && a->n_strings == 3 && a->strings[0].n == 1 && a->strings[0].p[0] == 'a' &&
          a->strings[1].n == 0 && a->strings[2].n == 3 && !memcmp(a->strings[2].p, "ccc", 3));
    a = onp_node_attr(n0, "a_tensors");
    CHECK(a && a->n_tensors == 2);
    if (a && a->n_tensors == 2) {
        CHECK(!strcmp(a->tensors[0].name, "t0") && a->tensors[0].data_type == ONP_INT8);
        CHECK(a->tensors[1].rank == 0 && a->tensors[1].count == 1);
        onp_tensor t;
        onp_error e;
        CHECK(onp_model_tensor(m, &a->tensors[0], &t, &e) == 0);
        CHECK(t.count == 3 && !memcmp(t.data, "\x01\xff\x7f", 3));
        onp_tensor_release(&t);
        CHECK(onp_model_tensor(m, &a->tensors[1], &t, &e) == 0);
        CHECK(t.rank == 0 && *(double *)t.data == -0.125);
        onp_tensor_release(&t);
    }
    a = onp_node_attr(n0, "a_graphs");
    CHECK(a && a->n_graphs == 2 && !a->g);
    if (a && a->n_graphs == 2) {
        check_small_graph(a->graphs[0], "g1");
        check_small_graph(a->graphs[1], "g2");
    }
    a = onp_node_attr(n0, "a_sparse");
    CHECK(a && a->sparse);
    if (a && a->sparse) check_sparse(a->sparse, "sv", 3, 4);
    a = onp_node_attr(n0, "a_sparses");
    CHECK(a && a->n_sparse == 2);
    if (a && a->n_sparse == 2) {
        check_sparse(&a->sparse_tensors[0], "sv1", 2, 2);
        check_sparse(&a->sparse_tensors[1], "sv2", 1, 4);
    }
    a = onp_node_attr(n0, "a_tp");
    CHECK(a && a->tp && a->tp->kind == ONP_TYPE_TENSOR && a->tp->elem_type == ONP_INT64 &&
          a->tp->has_shape && a->tp->rank == 1 && a->tp->dims[0].value == 7);
    a = onp_node_attr(n0, "a_tps");
    CHECK(a && a->n_type_protos == 2);
    if (a && a->n_type_protos == 2) {
        CHECK(a->type_protos[0].kind == ONP_TYPE_TENSOR &&
              a->type_protos[0].elem_type == ONP_FLOAT);
        CHECK(!a->type_protos[0].has_shape);
        CHECK(a->type_protos[1].kind == ONP_TYPE_SEQUENCE &&
              a->type_protos[1].elem_type == ONP_BOOL);
    }
    a = onp_node_attr(n0, "a_ref");
    CHECK(a && a->ref_attr_name && !strcmp(a->ref_attr_name, "outer") && a->i == 0);
    a = onp_node_attr(n0, "a_untyped");
    CHECK(a && a->type == ONP_ATTR_UNDEFINED && !a->ref_attr_name && !a->t && !a->g);
    CHECK(onp_node_attr(n0, "nope") == NULL);
    CHECK(n1->n_attrs == 0);
    /* value infos */
    const onp_value_info *v = g->inputs;
    CHECK(!strcmp(v[0].name, "X") && v[0].type.kind == ONP_TYPE_TENSOR &&
          v[0].type.elem_type == ONP_FLOAT && v[0].type.has_shape && v[0].type.rank == 2);
    if (v[0].type.rank == 2) {
        CHECK(v[0].type.dims[0].value == -1 && v[0].type.dims[0].param &&
              !strcmp(v[0].type.dims[0].param, "N"));
        CHECK(v[0].type.dims[1].value == 3 && v[0].type.dims[1].param == NULL);
    }
    CHECK(span_is(&v[0].raw, &fm.vi_x));
    CHECK(!strcmp(v[1].name, "Y") && v[1].type.kind == ONP_TYPE_NONE);
    CHECK(!strcmp(v[2].name, "S") && v[2].type.kind == ONP_TYPE_SEQUENCE &&
          v[2].type.elem_type == ONP_INT64);
    CHECK(!strcmp(v[3].name, "O") && v[3].type.kind == ONP_TYPE_OPTIONAL &&
          v[3].type.elem_type == ONP_FLOAT16);
    CHECK(!strcmp(v[4].name, "M") && v[4].type.kind == ONP_TYPE_MAP);
    CHECK(!strcmp(v[5].name, "SP") && v[5].type.kind == ONP_TYPE_SPARSE_TENSOR &&
          v[5].type.elem_type == ONP_FLOAT && v[5].type.rank == 1);
    CHECK(!strcmp(v[6].name, "Z") && v[6].type.kind == ONP_TYPE_TENSOR && !v[6].type.has_shape);
    CHECK(!strcmp(v[7].name, "SC") && v[7].type.has_shape && v[7].type.rank == 0 &&
          v[7].type.elem_type == ONP_DOUBLE);
    CHECK(!strcmp(v[8].name, "U") && v[8].type.rank == 2);
    if (v[8].type.rank == 2) {
        CHECK(v[8].type.dims[0].value == -1 && v[8].type.dims[0].param == NULL);
        CHECK(v[8].type.dims[1].value == -1 && !strcmp(v[8].type.dims[1].param, "batch"));
    }
    CHECK(!strcmp(g->outputs[0].name, "out") && g->outputs[0].type.rank == 2);
    CHECK(!strcmp(g->value_info[0].name, "mid") && g->value_info[0].type.elem_type == ONP_INT32);
    /* lookups */
    size_t idx = 99;
    CHECK(onp_graph_producer(g, "mid", &idx) == n0 && idx == 0);
    CHECK(onp_graph_producer(g, "out", &idx) == n1 && idx == 1);
    CHECK(onp_graph_producer(g, "X", NULL) == NULL);
    onp_type ty;
    CHECK(onp_graph_value_type(g, "mid", &ty) == 0 && ty.elem_type == ONP_INT32);
    CHECK(onp_graph_value_type(g, "X", &ty) == 0 && ty.elem_type == ONP_FLOAT && ty.rank == 2);
    CHECK(onp_graph_value_type(g, "out", &ty) == 0 && ty.kind == ONP_TYPE_TENSOR);
    CHECK(onp_graph_value_type(g, "K", &ty) == 0 && ty.elem_type == ONP_INT64);
    CHECK(onp_graph_value_type(g, "Y", &ty) == -1); /* listed without a type */
    CHECK(onp_graph_value_type(g, "nope", &ty) == -1);
    size_t nv;
    const char **vals = onp_model_node_values(m, &nv);
    const char *want_vals[2] = {"mid", "out"};
    CHECK(vals && strs_are(vals, nv, want_vals, 2));
    /* initializers */
    const onp_tensor_view *tv = onp_graph_initializer(g, "W");
    CHECK(tv == &g->initializers[0] && onp_graph_initializer(g, "nope") == NULL);
    CHECK(span_is(&tv->msg, &fm.init_w) && tv->msg.p == fm.bytes.p + tv->msg.off);
    CHECK(tv->has_raw && tv->raw_data.n == 12 && tv->bytes == 12 && tv->count == 3);
    CHECK(tv->raw_data.p == fm.bytes.p + tv->raw_data.off && !tv->is_external);
    onp_tensor t;
    onp_error e;
    CHECK(onp_model_tensor(m, tv, &t, &e) == 0);
    CHECK(t.dtype == ONP_FLOAT && t.count == 3 && ((float *)t.data)[2] == 3.5f);
    CHECK(t.name && !strcmp(t.name, "W"));
    onp_tensor_release(&t);
    CHECK(onp_model_tensor(m, &g->initializers[1], &t, &e) == 0);
    CHECK(t.dtype == ONP_INT64 && ((int64_t *)t.data)[0] == -3 &&
          ((int64_t *)t.data)[1] == (int64_t)1 << 40);
    CHECK(!g->initializers[1].has_raw && g->initializers[1].bytes == 16);
    onp_tensor_release(&t);
    CHECK(onp_model_tensor(m, &g->initializers[2], &t, &e) == 0);
    CHECK(t.dtype == ONP_STRING && t.count == 2 && t.strings[0].n == 5 &&
          !memcmp(t.strings[0].p, "hello", 5) && t.strings[1].n == 0);
    onp_tensor_release(&t);
    CHECK(onp_model_tensor(m, &g->initializers[3], &t, &e) == 0);
    CHECK(t.dtype == ONP_FLOAT16 && ((uint16_t *)t.data)[0] == 0x3c00 &&
          ((uint16_t *)t.data)[1] == 0xfbff);
    onp_tensor_release(&t);
    CHECK(onp_model_tensor(m, &g->initializers[4], &t, &e) == 0);
    CHECK(t.count == 0 && t.rank == 1 && t.dims[0] == 0);
    onp_tensor_release(&t);
    check_sparse(&g->sparse_initializers[0], "sp", 5, 1);
    CHECK(onp_model_tensor(m, &g->sparse_initializers[0].values, &t, &e) == 0);
    CHECK(t.count == 2 && ((float *)t.data)[0] == 1.25f && ((float *)t.data)[1] == -8);
    onp_tensor_release(&t);
    onp_model_close(m);
    onp_model_close(NULL);
    /* without a path */
    m = parse_ok(&fm.bytes, NULL);
    CHECK(m && onp_model_path(m) == NULL);
    onp_model_close(m);
    free_full(&fm);
}

static void test_model_open_file(void)
{
    full_model fm;
    memset(&fm, 0, sizeof fm);
    build_full(&fm);
    char p[128];
    path_in(p, sizeof p, "full.onnx");
    CHECK(spit(p, fm.bytes.p, fm.bytes.n) == 0);
    onp_model *m = NULL;
    onp_error e;
    CHECK(onp_model_open(p, &m, &e) == 0);
    if (m) {
        CHECK(!strcmp(onp_model_path(m), p));
        CHECK(onp_model_graph(m)->n_nodes == 2);
        size_t n;
        const uint8_t *b = onp_model_bytes(m, &n);
        CHECK(n == fm.bytes.n && !memcmp(b, fm.bytes.p, n) && b != fm.bytes.p); /* mapped */
        onp_model_close(m);
    }
    /* a missing file, a folder */
    path_in(p, sizeof p, "missing.onnx");
    CHECK(onp_model_open(p, &m, &e) == -1 && e.code == ONP_ERR_IO && m == NULL);
    CHECK(onp_model_open(tmpdir, &m, &e) == -1 && e.code != ONP_ERR_NONE && m == NULL);
    free_full(&fm);
}

// --- malformed models ------------------------------------------------------------

static void test_malformed(void)
{
    onp_buf g, n, m, a, vi, t;
    /* op_type with the wrong wire type in node[1] */
    onp_buf_init(&g, 0);
    node(&n, "first", "Relu", NULL, "X", "Y");
    put_msg(&g, G_NODE, &n);
    onp_buf_init(&n, 0);
    put_str(&n, N_NAME, "MARKER_N1");
    onp_pb_put_uint(&n, N_OP, 5);
    put_msg(&g, G_NODE, &n);
    model_of(&m, &g);
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "graph.node[1].NodeProto.op_type",
                after_marker(&m, "MARKER_N1"), "op_type varint");
    onp_buf_free(&m);
    /* attribute i as LEN, in attribute[1] of node[0] */
    onp_buf_init(&g, 0);
    node(&n, NULL, "Op", NULL, "X", "Y");
    attr_begin(&a, "ok", ONP_ATTR_INT);
    onp_pb_put_uint(&a, A_I, 1);
    put_msg(&n, N_ATTR, &a);
    attr_begin(&a, "MARK_ATTR", ONP_ATTR_INT);
    put_str(&a, A_I, "x");
    put_msg(&n, N_ATTR, &a);
    put_msg(&g, G_NODE, &n);
    model_of(&m, &g);
    /* the bad field follows the type field (tag 20: 2 bytes, value: 1) after the name */
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "graph.node[0].attribute[1].AttributeProto.i",
                after_marker(&m, "MARK_ATTR") + 3, "attribute i LEN");
    onp_buf_free(&m);
    /* a bad op_type inside a subgraph inside an attribute */
    onp_buf sub = {0};
    onp_buf_init(&n, 0);
    put_str(&n, N_NAME, "MARK_SUB");
    onp_pb_put_uint(&n, N_OP, 1);
    put_msg(&sub, G_NODE, &n);
    onp_buf_init(&g, 0);
    node(&n, NULL, "If", NULL, "c", "y");
    attr_begin(&a, "then_branch", ONP_ATTR_GRAPH);
    put_msg(&a, A_G, &sub);
    put_msg(&n, N_ATTR, &a);
    put_msg(&g, G_NODE, &n);
    model_of(&m, &g);
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT,
                "graph.node[0].attribute[0].node[0].NodeProto.op_type",
                after_marker(&m, "MARK_SUB"), "nested op_type");
    onp_buf_free(&m);
    /* a bad initializer: raw_data too short */
    onp_buf_init(&g, 0);
    int64_t d2[1] = {2};
    tensor_raw(&t, "ok", ONP_FLOAT, 1, d2, "\0\0\0\0\0\0\0\0", 8);
    put_msg(&g, G_INIT, &t);
    onp_buf_init(&t, 0);
    onp_pb_put_uint(&t, T_DIMS, 2);
    onp_pb_put_uint(&t, T_DTYPE, ONP_FLOAT);
    put_str(&t, T_NAME, "MARK_INIT");
    onp_pb_put_len(&t, T_RAW, "\0\0\0\0", 4);
    put_msg(&g, G_INIT, &t);
    model_of(&m, &g);
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "graph.initializer[1].TensorProto.raw_data",
                after_marker(&m, "MARK_INIT"), "short raw_data");
    onp_buf_free(&m);
    /* a value info whose name is a varint */
    onp_buf_init(&g, 0);
    value_info(&vi, "MARK_VI", NULL);
    put_msg(&g, G_OUTPUT, &vi);
    value_info(&vi, "fine", NULL);
    put_msg(&g, G_OUTPUT, &vi);
    onp_buf_init(&vi, 0);
    onp_pb_put_uint(&vi, 1, 3);
    put_msg(&g, G_OUTPUT, &vi);
    model_of(&m, &g);
    /* output[2]: its tag is 2 bytes past the second output's end */
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "graph.output[2].ValueInfoProto.name",
                after_marker(&m, "fine") + 2, "value info name varint");
    onp_buf_free(&m);
    /* ModelProto.ir_version as LEN at byte 0 */
    onp_buf_init(&m, 0);
    put_str(&m, M_IR, "8");
    onp_buf_init(&g, 0);
    put_msg(&m, M_GRAPH, &g);
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "ModelProto.ir_version", 0, "ir_version LEN");
    onp_buf_free(&m);
    /* no graph */
    onp_buf_init(&m, 0);
    onp_pb_put_uint(&m, M_IR, 8);
    opset(&m, NULL, 17);
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "ModelProto.graph", -2, "no graph");
    onp_buf_free(&m);
    /* two graphs */
    onp_buf_init(&g, 0);
    put_str(&g, G_NAME, "one");
    model_of(&m, &g);
    int64_t second = (int64_t)m.n;
    onp_buf_init(&g, 0);
    put_str(&g, G_NAME, "two");
    put_msg(&m, M_GRAPH, &g);
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "ModelProto.graph", second, "two graphs");
    onp_buf_free(&m);
    /* graph as a varint */
    onp_buf_init(&m, 0);
    onp_pb_put_uint(&m, M_GRAPH, 1);
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "ModelProto.graph", 0, "graph varint");
    onp_buf_free(&m);
    /* a bad node inside a function */
    onp_buf_init(&g, 0);
    model_of(&m, &g);
    onp_buf fn = {0};
    put_str(&fn, 1, "F");
    onp_buf_init(&n, 0);
    put_str(&n, N_NAME, "MARK_FN");
    onp_pb_put_uint(&n, N_INPUT, 1);
    put_msg(&fn, 7, &n);
    put_msg(&m, M_FUNCTIONS, &fn);
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "functions[0].node[0].NodeProto.input",
                after_marker(&m, "MARK_FN"), "function node");
    onp_buf_free(&m);
    /* packed attribute floats of 6 bytes */
    onp_buf_init(&g, 0);
    node(&n, NULL, "Op", NULL, "", "y");
    attr_begin(&a, "MARK_FL", ONP_ATTR_FLOATS);
    onp_pb_put_len(&a, A_FLOATS, "\0\0\0\0\0\0", 6);
    put_msg(&n, N_ATTR, &a);
    put_msg(&g, G_NODE, &n);
    model_of(&m, &g);
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "graph.node[0].attribute[0].AttributeProto.floats",
                after_marker(&m, "MARK_FL") + 5, "floats of 6 bytes");
    onp_buf_free(&m);
    /* a wire-level error deep inside: an 11-byte varint in a dim */
    onp_buf_init(&g, 0);
    onp_buf tp = {0}, tt = {0}, sh = {0}, dim = {0};
    onp_buf_append(&dim, "\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 12);
    put_msg(&sh, 1, &dim);
    put_msg(&tt, 2, &sh);
    put_msg(&tp, 1, &tt);
    value_info(&vi, "MARK_DIM", &tp);
    put_msg(&g, G_INPUT, &vi);
    model_of(&m, &g);
    parse_fails(&m, "bad.onnx", ONP_ERR_FORMAT, "graph.input[0]*", -2, "11-byte dim");
    onp_buf_free(&m);
}

static void test_truncated_models(void)
{
    full_model fm;
    memset(&fm, 0, sizeof fm);
    build_full(&fm);
    int bad = 0, ok = 0;
    for (size_t n = 1; n < fm.bytes.n; n++) {
        onp_model *m = NULL;
        onp_error e;
        onp_error_clear(&e);
        int rc = onp_model_parse(fm.bytes.p, n, NULL, &m, &e);
        if (rc == 0) {
            ok++;
            onp_model_close(m);
        } else if (e.code != ONP_ERR_FORMAT || e.offset > (int64_t)n || m) {
            bad++;
        }
    }
    CHECKF(bad == 0, "%d truncated models failed the wrong way", bad);
    /* prefixes ending after the graph (opsets, metadata, functions cut off) parse */
    CHECK(ok > 0);
    free_full(&fm);
}

// --- nesting -------------------------------------------------------------------------

/* A model whose graph holds `levels` graphs nested through node attributes
 * (field 6 `g`, or 11 `graphs` when use_list), built without recursion: the
 * payload sizes are computed from the inside out, then the prefixes written
 * from the outside in.  The innermost graph is named "leaf". */
static void nested_graphs(onp_buf *out, size_t levels, int use_list)
{
    size_t *size = calloc(levels + 1, sizeof *size); /* graph payload at depth k */
    size_t *attr_len = calloc(levels + 1, sizeof *attr_len);
    size_t *node_len = calloc(levels + 1, sizeof *node_len);
    static const char leaf[] = "\x12\x04leaf"; /* GraphProto.name = "leaf" */
    const uint32_t gfield = use_list ? A_GRAPHS : A_G;
    const uint64_t gtype = use_list ? ONP_ATTR_GRAPHS : ONP_ATTR_GRAPH;
    /* attr: name "b" (3) + type (tag 2 bytes + value) + g tag (1) + len + inner */
    size[levels] = sizeof leaf - 1;
    for (size_t k = levels; k-- > 0;) {
        size_t s = size[k + 1];
        attr_len[k] = 3 + 2 + onp_pb_varint_size(gtype) + 1 + onp_pb_varint_size(s) + s;
        node_len[k] = 4 + 1 + onp_pb_varint_size(attr_len[k]) + attr_len[k]; /* op_type "If" */
        size[k] = 1 + onp_pb_varint_size(node_len[k]) + node_len[k];
    }
    onp_buf_init(out, 0);
    onp_pb_put_uint(out, M_IR, 8);
    opset(out, NULL, 17);
    onp_pb_put_header(out, M_GRAPH, size[0]);
    for (size_t k = 0; k < levels; k++) {
        onp_pb_put_header(out, G_NODE, node_len[k]);
        put_str(out, N_OP, "If");
        onp_pb_put_header(out, N_ATTR, attr_len[k]);
        put_str(out, A_NAME, "b");
        onp_pb_put_uint(out, A_TYPE, gtype);
        onp_pb_put_header(out, gfield, size[k + 1]);
    }
    onp_buf_append(out, leaf, sizeof leaf - 1);
    free(size);
    free(attr_len);
    free(node_len);
}

/* A model with one graph input whose type is `levels` sequence_types deep
 * around a float tensor, built the same way. */
static void nested_types(onp_buf *out, size_t levels)
{
    size_t *tsize = calloc(levels + 1, sizeof *tsize); /* TypeProto payload at depth k */
    static const char inner[] = "\x0a\x02\x08\x01";    /* tensor_type { elem_type 1 } */
    tsize[levels] = sizeof inner - 1;
    for (size_t k = levels; k-- > 0;) {
        size_t s = tsize[k + 1];
        size_t seq = 1 + onp_pb_varint_size(s) + s; /* Sequence { elem_type = T } */
        tsize[k] = 1 + onp_pb_varint_size(seq) + seq;
    }
    size_t vi = 3 + 1 + onp_pb_varint_size(tsize[0]) + tsize[0]; /* name "x" + type */
    size_t graph = 1 + onp_pb_varint_size(vi) + vi;
    onp_buf_init(out, 0);
    onp_pb_put_uint(out, M_IR, 8);
    onp_pb_put_header(out, M_GRAPH, graph);
    onp_pb_put_header(out, G_INPUT, vi);
    put_str(out, 1, "x");
    onp_pb_put_header(out, 2, tsize[0]);
    for (size_t k = 0; k < levels; k++) {
        size_t s = tsize[k + 1];
        onp_pb_put_header(out, 4, 1 + onp_pb_varint_size(s) + s);
        onp_pb_put_header(out, 1, s);
    }
    onp_buf_append(out, inner, sizeof inner - 1);
    free(tsize);
}

static void test_nesting(void)
{
    onp_buf m;
    for (int use_list = 0; use_list < 2; use_list++) {
        /* exactly the cap: parses, and the leaf is reachable */
        nested_graphs(&m, ONP_PB_MAX_DEPTH, use_list);
        onp_model *mod = parse_ok(&m, NULL);
        if (mod) {
            const onp_graph *g = onp_model_graph(mod);
            size_t depth = 0;
            while (g && g->n_nodes == 1 && g->nodes[0].n_attrs == 1) {
                const onp_attr *a = &g->nodes[0].attrs[0];
                g = use_list ? (a->n_graphs == 1 ? a->graphs[0] : NULL) : a->g;
                depth++;
            }
            CHECKF(depth == ONP_PB_MAX_DEPTH && g && !strcmp(g->name, "leaf"), "walked %zu levels",
                   depth);
            onp_model_close(mod);
        }
        onp_buf_free(&m);
        /* one more: refused */
        nested_graphs(&m, ONP_PB_MAX_DEPTH + 1, use_list);
        parse_fails(&m, NULL, ONP_ERR_FORMAT, "graph.node[0].attribute[0]*", -2, "cap + 1");
        onp_buf_free(&m);
        /* 10,000 levels: refused cleanly */
        nested_graphs(&m, 10000, use_list);
        CHECK(m.n > 100000 && !m.failed);
        parse_fails(&m, NULL, ONP_ERR_FORMAT, "graph.node[0].attribute[0]*", -2, "10,000 graphs");
        onp_error e;
        onp_model *x = NULL;
        onp_model_parse(m.p, m.n, NULL, &x, &e);
        CHECK(strstr(e.msg, "nested") != NULL);
        onp_buf_free(&m);
    }
    /* types: at the cap fine, 10,000 deep refused */
    nested_types(&m, ONP_PB_MAX_DEPTH);
    onp_model *mod = parse_ok(&m, NULL);
    if (mod) {
        const onp_graph *g = onp_model_graph(mod);
        CHECK(g->n_inputs == 1 && g->inputs[0].type.kind == ONP_TYPE_SEQUENCE &&
              g->inputs[0].type.elem_type == ONP_FLOAT);
        onp_model_close(mod);
    }
    onp_buf_free(&m);
    nested_types(&m, 10000);
    parse_fails(&m, NULL, ONP_ERR_FORMAT, "graph.input[0]*", -2, "10,000 types");
    onp_buf_free(&m);
}

// --- not a model -------------------------------------------------------------------

static void test_lfs_and_empty(void)
{
    static const char lfs[] =
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 12345\n";
    onp_buf b = {0};
    onp_buf_append(&b, lfs, sizeof lfs - 1);
    onp_model *m = NULL;
    onp_error e;
    onp_error_clear(&e);
    CHECK(onp_model_parse(b.p, b.n, "w.onnx", &m, &e) == -1 && m == NULL);
    CHECK(e.code == ONP_ERR_FORMAT && strstr(e.msg, "Git LFS") && strstr(e.msg, "git lfs pull"));
    CHECK(!strcmp(e.file, "w.onnx") && e.offset == 0);
    char p[128];
    path_in(p, sizeof p, "lfs.onnx");
    CHECK(spit(p, b.p, b.n) == 0);
    CHECK(onp_model_open(p, &m, &e) == -1 && e.code == ONP_ERR_FORMAT && strstr(e.msg, "LFS"));
    CHECK(!strcmp(e.file, p));
    onp_buf_free(&b);
    /* empty, in memory and as a file */
    CHECK(onp_model_parse((const uint8_t *)"", 0, "e.onnx", &m, &e) == -1);
    CHECK(e.code == ONP_ERR_FORMAT && strstr(e.msg, "empty"));
    path_in(p, sizeof p, "empty.onnx");
    CHECK(spit(p, "", 0) == 0);
    CHECK(onp_model_open(p, &m, &e) == -1 && e.code == ONP_ERR_FORMAT && strstr(e.msg, "empty"));
    CHECK(!strcmp(e.file, p));
    /* text that is not protobuf */
    static const char text[] = "hello, this is not a model\n";
    CHECK(onp_model_parse((const uint8_t *)text, sizeof text - 1, "t.onnx", &m, &e) == -1);
    CHECK(e.code == ONP_ERR_FORMAT && m == NULL);
}

// --- external data -------------------------------------------------------------------

/* weights.bin: float[4] {1,2,3,4} at 0, int64[2] {-9, 2^40} at 16, double[2]
 * {0.5, -0.25} at 32: 48 bytes.  sub/dir/w3.bin: uint8 {7,8,9}. */
static void make_ext_files(void)
{
    uint8_t w[48];
    float f[4] = {1, 2, 3, 4};
    int64_t i[2] = {-9, (int64_t)1 << 40};
    double d[2] = {0.5, -0.25};
    memcpy(w, f, 16);
    memcpy(w + 16, i, 16);
    memcpy(w + 32, d, 16);
    char p[160];
    path_in(p, sizeof p, "weights.bin");
    CHECK(spit(p, w, 48) == 0);
    path_in(p, sizeof p, "sub");
    mkdir(p, 0755);
    path_in(p, sizeof p, "sub/dir");
    mkdir(p, 0755);
    path_in(p, sizeof p, "sub/dir/w3.bin");
    CHECK(spit(p, "\x07\x08\x09", 3) == 0);
    char target[160];
    path_in(p, sizeof p, "link.bin");
    CHECK(symlink("weights.bin", p) == 0);
    path_in(p, sizeof p, "linkdir");
    CHECK(symlink("sub/dir", p) == 0);
    path_in(p, sizeof p, "abslink.bin");
    path_in(target, sizeof target, "weights.bin");
    CHECK(symlink(target, p) == 0);
}

/* A model with the given initializers (TensorProto messages, freed). */
static void model_with_inits(onp_buf *m, onp_buf *inits, size_t n)
{
    onp_buf g = {0};
    put_str(&g, G_NAME, "ext");
    for (size_t i = 0; i < n; i++) put_msg(&g, G_INIT, &inits[i]);
    model_of(m, &g);
}

static void test_external_ok(void)
{
    onp_buf t[5], m;
    int64_t d4[1] = {4}, d2[1] = {2}, d3[1] = {3}, d0[1] = {0};
    tensor_ext(&t[0], "W1", ONP_FLOAT, 1, d4, "weights.bin", -1, 16);
    tensor_ext(&t[1], "W2", ONP_INT64, 1, d2, "weights.bin", 16, -1);
    tensor_ext(&t[2], "W3", ONP_UINT8, 1, d3, "sub/dir/w3.bin", 0, 3);
    tensor_ext(&t[3], "W4", ONP_DOUBLE, 1, d2, "./weights.bin", 32, 16);
    tensor_ext(&t[4], "W5", ONP_FLOAT, 1, d0, "weights.bin", 48, 0); /* empty, at the end */
    model_with_inits(&m, t, 5);
    char p[160];
    path_in(p, sizeof p, "model.onnx");
    CHECK(spit(p, m.p, m.n) == 0);
    onp_model *mod = NULL;
    onp_error e;
    CHECK(onp_model_open(p, &mod, &e) == 0);
    if (!mod) {
        onp_buf_free(&m);
        return;
    }
    CHECK(onp_model_has_external(mod) == 1);
    const onp_graph *g = onp_model_graph(mod);
    CHECK(g->n_initializers == 5);
    const onp_tensor_view *v = g->initializers;
    CHECK(v[0].is_external && !strcmp(v[0].external.location, "weights.bin"));
    CHECK(v[0].external.offset == 0 && v[0].external.length == 16 && v[0].bytes == 16);
    CHECK(v[0].external.checksum && !strcmp(v[0].external.checksum, "abc"));
    CHECK(v[1].external.offset == 16 && v[1].external.length == -1);
    onp_tensor x;
    int rc = onp_model_tensor(mod, &v[0], &x, &e);
    CHECKF(rc == 0, "W1: %s", e.msg);
    if (!rc) {
        CHECK(x.count == 4 && ((float *)x.data)[0] == 1 && ((float *)x.data)[3] == 4);
        CHECK(x.name && !strcmp(x.name, "W1"));
        onp_tensor_release(&x);
    }
    rc = onp_model_tensor(mod, &v[1], &x, &e);
    CHECKF(rc == 0, "W2: %s", e.msg);
    if (!rc) {
        CHECK(((int64_t *)x.data)[0] == -9 && ((int64_t *)x.data)[1] == (int64_t)1 << 40);
        onp_tensor_release(&x);
    }
    rc = onp_model_tensor(mod, &v[2], &x, &e);
    CHECKF(rc == 0, "W3: %s", e.msg);
    if (!rc) {
        CHECK(x.nbytes == 3 && !memcmp(x.data, "\x07\x08\x09", 3));
        onp_tensor_release(&x);
    }
    rc = onp_model_tensor(mod, &v[3], &x, &e);
    CHECKF(rc == 0, "W4: %s", e.msg);
    if (!rc) {
        CHECK(((double *)x.data)[0] == 0.5 && ((double *)x.data)[1] == -0.25);
        onp_tensor_release(&x);
    }
    rc = onp_model_tensor(mod, &v[4], &x, &e);
    CHECKF(rc == 0, "W5: %s", e.msg);
    if (!rc) {
        CHECK(x.count == 0);
        onp_tensor_release(&x);
    }
    onp_span s;
    CHECK(onp_model_external_span(mod, &v[1], &s, &e) == 0);
    int64_t want[2] = {-9, (int64_t)1 << 40};
    CHECK(s.n == 16 && s.off == 16 && !memcmp(s.p, want, 16));
    onp_model_close(mod);
    /* parsed from memory without a path: external data refused */
    mod = parse_ok(&m, NULL);
    if (mod) {
        onp_error_clear(&e);
        CHECK(onp_model_tensor(mod, &onp_model_graph(mod)->initializers[0], &x, &e) == -1);
        CHECK(e.code != ONP_ERR_NONE);
        onp_model_close(mod);
    }
    onp_buf_free(&m);
}

/* One float[1] initializer at `location`; materialising it must fail with
 * `code` (and for INPUT, name the location field). */
static void ext_refused(const char *location, onp_errcode code, const char *what)
{
    onp_buf t, m;
    int64_t d1[1] = {1};
    tensor_ext(&t, "W", ONP_FLOAT, 1, d1, location, -1, -1);
    model_with_inits(&m, &t, 1);
    char p[160];
    path_in(p, sizeof p, "refuse.onnx"); /* the folder is the base; the file need not exist */
    onp_model *mod = parse_ok(&m, p);
    if (mod) {
        onp_tensor x;
        onp_error e;
        onp_error_clear(&e);
        int rc = onp_model_tensor(mod, &onp_model_graph(mod)->initializers[0], &x, &e);
        CHECKF(rc == -1, "%s ('%s'): accepted", what, location);
        if (rc == 0) onp_tensor_release(&x);
        CHECKF(e.code == code, "%s ('%s'): code %s: %s", what, location, onp_errcode_name(e.code),
               e.msg);
        if (code == ONP_ERR_INPUT)
            CHECKF(!strcmp(e.field, "TensorProto.external_data.location"), "%s: field '%s'", what,
                   e.field);
        onp_span s;
        CHECK(onp_model_external_span(mod, &onp_model_graph(mod)->initializers[0], &s, &e) == -1);
        onp_model_close(mod);
    }
    onp_buf_free(&m);
}

static void test_external_refused(void)
{
    ext_refused("../x", ONP_ERR_INPUT, "parent");
    ext_refused("a/../../x", ONP_ERR_INPUT, "parent inside");
    ext_refused("sub/../weights.bin", ONP_ERR_INPUT, "'..' even when it stays inside");
    ext_refused("..", ONP_ERR_INPUT, "'..' alone");
    ext_refused("/etc/passwd", ONP_ERR_INPUT, "absolute");
    ext_refused("link.bin", ONP_ERR_INPUT, "symlink to a file inside");
    ext_refused("abslink.bin", ONP_ERR_INPUT, "absolute symlink");
    ext_refused("linkdir/w3.bin", ONP_ERR_INPUT, "through a symlinked folder");
    ext_refused("*/_ORT_MEM_ADDR_/*", ONP_ERR_INPUT, "ORT memory marker");
    ext_refused("sub\\dir\\w3.bin", ONP_ERR_INPUT, "backslash");
    ext_refused("", ONP_ERR_INPUT, "empty");
    ext_refused("nope.bin", ONP_ERR_IO, "missing");
}

static void test_external_ranges(void)
{
    onp_buf t, m;
    int64_t d4[1] = {4};
    struct {
        int64_t off, len;
        const char *what;
    } cases[] = {
        {40, 16, "offset + length past the end"},
        {100, -1, "offset past the end"},
        {48, -1, "offset at the end, 16 bytes wanted"},
        {36, -1, "12 bytes left for 16"},
        {INT64_MAX, 16, "offset 2^63 - 1"},
    };
    char p[160];
    path_in(p, sizeof p, "range.onnx");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tensor_ext(&t, "W", ONP_FLOAT, 1, d4, "weights.bin", cases[i].off, cases[i].len);
        model_with_inits(&m, &t, 1);
        onp_model *mod = parse_ok(&m, p);
        if (mod) {
            onp_tensor x;
            onp_error e;
            onp_error_clear(&e);
            int rc = onp_model_tensor(mod, &onp_model_graph(mod)->initializers[0], &x, &e);
            CHECKF(rc == -1 && e.code == ONP_ERR_FORMAT, "%s: rc %d code %s", cases[i].what, rc,
                   onp_errcode_name(e.code));
            CHECKF(!strcmp(e.field, "TensorProto.external_data"), "%s: field '%s'", cases[i].what,
                   e.field);
            if (rc == 0) onp_tensor_release(&x);
            onp_model_close(mod);
        }
        onp_buf_free(&m);
    }
    /* a length that does not match the dims: refused when parsing */
    tensor_ext(&t, "W", ONP_FLOAT, 1, d4, "weights.bin", 0, 12);
    model_with_inits(&m, &t, 1);
    parse_fails(&m, p, ONP_ERR_FORMAT, "graph.initializer[0].TensorProto.external_data", -2,
                "length 12 for float[4]");
    onp_buf_free(&m);
    /* an external tensor that also has raw_data */
    tensor_ext(&t, "W", ONP_FLOAT, 1, d4, "weights.bin", 0, 16);
    onp_pb_put_len(&t, T_RAW, "0123456789abcdef", 16);
    model_with_inits(&m, &t, 1);
    parse_fails(&m, p, ONP_ERR_FORMAT, "graph.initializer[0]*", -2, "external + raw");
    onp_buf_free(&m);
}

static void test_external_sparse_3gib(void)
{
    char p[160];
    path_in(p, sizeof p, "big.bin");
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) SKIP("cannot create the big file");
    const int64_t size = (int64_t)3 << 30, at = (int64_t)5 << 29; /* 3 GiB, 2.5 GiB */
    if (ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        unlink(p);
        SKIP("the filesystem refuses a 3 GiB sparse file");
    }
    float vals[4] = {-1.5f, 2.5f, 1e30f, -0.0f};
    CHECK(pwrite(fd, vals, 16, (off_t)at) == 16);
    CHECK(pwrite(fd, "END!", 4, (off_t)(size - 4)) == 4);
    close(fd);
    onp_buf t[3], m;
    int64_t d4[1] = {4}, d1[1] = {1};
    tensor_ext(&t[0], "far", ONP_FLOAT, 1, d4, "big.bin", at, 16);
    tensor_ext(&t[1], "last", ONP_UINT8, 1, d4, "big.bin", size - 4, -1);
    tensor_ext(&t[2], "past", ONP_FLOAT, 1, d1, "big.bin", size - 2, 4);
    model_with_inits(&m, t, 3);
    char mp[160];
    path_in(mp, sizeof mp, "big.onnx");
    onp_model *mod = parse_ok(&m, mp);
    if (mod) {
        const onp_graph *g = onp_model_graph(mod);
        onp_tensor x;
        onp_error e;
        int rc = onp_model_tensor(mod, &g->initializers[0], &x, &e);
        CHECKF(rc == 0, "far: %s", e.msg);
        if (!rc) {
            CHECK(x.nbytes == 16 && !memcmp(x.data, vals, 16));
            onp_tensor_release(&x);
        }
        rc = onp_model_tensor(mod, &g->initializers[1], &x, &e);
        CHECKF(rc == 0, "last: %s", e.msg);
        if (!rc) {
            CHECK(!memcmp(x.data, "END!", 4));
            onp_tensor_release(&x);
        }
        onp_span s;
        CHECK(onp_model_external_span(mod, &g->initializers[0], &s, &e) == 0 &&
              s.off == (uint64_t)at);
        CHECK(onp_model_tensor(mod, &g->initializers[2], &x, &e) == -1 && e.code == ONP_ERR_FORMAT);
        onp_model_close(mod);
    }
    onp_buf_free(&m);
    unlink(p);
}

// --- the splicing writer -----------------------------------------------------------

/* A -> Relu -> B -> Neg -> C -> Exp -> D -> Mul(D, W) -> E -> Shape -> S.
 * Input A float[2,3]; output E; value_info for B and D; initializers W (used
 * by Mul) and U (unused).  Metadata after the graph checks the tail copy. */
typedef struct chain {
    onp_buf bytes;
    onp_buf vi_a, vi_b, vi_d, vi_e;
} chain;

static void build_chain(chain *c)
{
    const char *dims[2] = {"2", "3"};
    onp_buf g = {0}, n, t;
    put_str(&g, G_NAME, "chain");
    node(&n, "relu", "Relu", NULL, "A", "B");
    put_msg(&g, G_NODE, &n);
    node(&n, "neg", "Neg", NULL, "B", "C");
    put_msg(&g, G_NODE, &n);
    node(&n, "exp", "Exp", NULL, "C", "D");
    put_msg(&g, G_NODE, &n);
    node(&n, "mul", "Mul", NULL, "D,W", "E");
    put_msg(&g, G_NODE, &n);
    node(&n, "shape", "Shape", NULL, "E", "S");
    put_msg(&g, G_NODE, &n);
    int64_t d3[1] = {3}, d1[1] = {1};
    float w[3] = {2, 4, 8}, u[1] = {9};
    tensor_raw(&t, "W", ONP_FLOAT, 1, d3, w, 12);
    put_msg(&g, G_INIT, &t);
    tensor_raw(&t, "U", ONP_FLOAT, 1, d1, u, 4);
    put_msg(&g, G_INIT, &t);
    vi_tensor(&c->vi_a, "A", ONP_FLOAT, 2, dims);
    put_copy(&g, G_INPUT, &c->vi_a);
    vi_tensor(&c->vi_e, "E", ONP_FLOAT, 2, dims);
    put_copy(&g, G_OUTPUT, &c->vi_e);
    vi_tensor(&c->vi_b, "B", ONP_FLOAT, 2, dims);
    put_copy(&g, G_VALUE_INFO, &c->vi_b);
    vi_tensor(&c->vi_d, "D", ONP_FLOAT, -1, NULL);
    put_copy(&g, G_VALUE_INFO, &c->vi_d);
    onp_buf *m = &c->bytes;
    onp_buf_init(m, 0);
    onp_pb_put_uint(m, M_IR, 8);
    put_str(m, M_PRODUCER, "chain-maker");
    opset(m, NULL, 13);
    put_msg(m, M_GRAPH, &g);
    onp_buf kv = {0};
    put_str(&kv, 1, "after");
    put_str(&kv, 2, "graph");
    put_msg(m, M_METADATA, &kv);
}

static void free_chain(chain *c)
{
    onp_buf_free(&c->bytes);
    onp_buf_free(&c->vi_a);
    onp_buf_free(&c->vi_b);
    onp_buf_free(&c->vi_d);
    onp_buf_free(&c->vi_e);
}

static int same_span(const onp_span *a, const onp_span *b)
{
    return a->n == b->n && !memcmp(a->p, b->p, a->n);
}

/* The parts of a written model outside the graph match the original. */
static void check_model_level(const onp_model *orig, const onp_model *out)
{
    const onp_model_info *a = onp_model_info_get(orig), *b = onp_model_info_get(out);
    CHECK(a->ir_version == b->ir_version && !strcmp(a->producer_name, b->producer_name));
    CHECK(b->n_opsets == 1 && b->opsets[0].version == 13);
    CHECK(b->n_metadata == 1 && !strcmp(b->metadata[0].key, "after"));
    CHECK(!strcmp(onp_model_graph(out)->name, "chain"));
}

static void test_add_outputs(void)
{
    chain c;
    memset(&c, 0, sizeof c);
    build_chain(&c);
    onp_model *m = parse_ok(&c.bytes, "chain.onnx");
    if (!m) {
        free_chain(&c);
        return;
    }
    const onp_graph *g = onp_model_graph(m);
    onp_error e;
    onp_buf out;
    /* nothing added: the same bytes */
    onp_buf_init(&out, 0);
    CHECK(onp_model_add_outputs(m, NULL, 0, &out, &e) == 0);
    CHECK(out.n == c.bytes.n && !memcmp(out.p, c.bytes.p, out.n));
    onp_buf_free(&out);
    /* C (inferred), B (value_info), S (Shape: int64), E (already an output), A (input) */
    const char *names[] = {"C", "B", "S", "E", "A", "C"};
    onp_buf_init(&out, 0);
    int rc = onp_model_add_outputs(m, names, 6, &out, &e);
    CHECKF(rc == 0, "add_outputs: %s", e.msg);
    onp_model *o = rc ? NULL : parse_ok(&out, "out.onnx");
    if (o) {
        const onp_graph *h = onp_model_graph(o);
        check_model_level(m, o);
        CHECK(h->n_nodes == g->n_nodes);
        for (size_t i = 0; i < h->n_nodes && i < g->n_nodes; i++)
            CHECKF(same_span(&h->nodes[i].raw, &g->nodes[i].raw) &&
                       !strcmp(h->nodes[i].name, g->nodes[i].name),
                   "node %zu differs", i);
        CHECK(h->n_initializers == 2);
        for (size_t i = 0; i < h->n_initializers && i < 2; i++)
            CHECK(same_span(&h->initializers[i].msg, &g->initializers[i].msg));
        /* the original graph payload comes first, unchanged */
        CHECK(h->raw.n > g->raw.n && !memcmp(h->raw.p, g->raw.p, g->raw.n));
        CHECK(h->n_outputs == 5);
        if (h->n_outputs == 5) {
            const onp_value_info *v = h->outputs;
            CHECK(!strcmp(v[0].name, "E") && span_is(&v[0].raw, &c.vi_e));
            CHECK(!strcmp(v[1].name, "C") && v[1].type.kind == ONP_TYPE_TENSOR &&
                  v[1].type.elem_type == ONP_FLOAT && !v[1].type.has_shape);
            CHECK(!strcmp(v[2].name, "B") && span_is(&v[2].raw, &c.vi_b));
            CHECK(!strcmp(v[3].name, "S") && v[3].type.elem_type == ONP_INT64);
            CHECK(!strcmp(v[4].name, "A") && span_is(&v[4].raw, &c.vi_a));
        }
        onp_tensor t;
        CHECK(onp_model_tensor(o, &h->initializers[0], &t, &e) == 0 && ((float *)t.data)[2] == 8);
        onp_tensor_release(&t);
        onp_model_close(o);
    }
    onp_buf_free(&out);
    /* every node value at once (what bisection does) */
    size_t nv;
    const char **vals = onp_model_node_values(m, &nv);
    CHECK(nv == 5);
    onp_buf_init(&out, 0);
    CHECK(onp_model_add_outputs(m, vals, nv, &out, &e) == 0);
    o = parse_ok(&out, NULL);
    if (o) {
        const onp_graph *h = onp_model_graph(o);
        CHECK(h->n_outputs == 5); /* E was there; B C D S added */
        for (size_t i = 0; i < h->n_outputs; i++)
            CHECKF(h->outputs[i].type.elem_type != 0, "output %s has no type", h->outputs[i].name);
        onp_model_close(o);
    }
    onp_buf_free(&out);
    /* an unknown name */
    const char *bad[] = {"B", "nope"};
    onp_buf_init(&out, 0);
    onp_error_clear(&e);
    CHECK(onp_model_add_outputs(m, bad, 2, &out, &e) == -1);
    CHECK(e.code == ONP_ERR_USAGE && strstr(e.msg, "'nope'"));
    onp_buf_free(&out);
    onp_model_close(m);
    free_chain(&c);
}

/* Extract and re-parse; returns the new model or NULL. */
static onp_model *extract(const onp_model *m, const char *const *ins, size_t ni,
                          const char *const *outs, size_t no, onp_buf *out)
{
    onp_error e;
    onp_buf_init(out, 0);
    onp_error_clear(&e);
    int rc = onp_model_extract(m, ins, ni, outs, no, out, &e);
    CHECKF(rc == 0, "extract: %s", e.msg);
    return rc ? NULL : parse_ok(out, NULL);
}

static void test_extract(void)
{
    chain c;
    memset(&c, 0, sizeof c);
    build_chain(&c);
    onp_model *m = parse_ok(&c.bytes, "chain.onnx");
    if (!m) {
        free_chain(&c);
        return;
    }
    const onp_graph *g = onp_model_graph(m);
    onp_buf out;
    /* B -> C: the Neg node alone */
    const char *in_b[] = {"B"}, *out_c[] = {"C"};
    onp_model *o = extract(m, in_b, 1, out_c, 1, &out);
    if (o) {
        const onp_graph *h = onp_model_graph(o);
        check_model_level(m, o);
        CHECK(h->n_nodes == 1 && same_span(&h->nodes[0].raw, &g->nodes[1].raw));
        CHECK(h->n_initializers == 0 && h->n_value_info == 0);
        CHECK(h->n_inputs == 1 && span_is(&h->inputs[0].raw, &c.vi_b));
        CHECK(h->n_outputs == 1 && !strcmp(h->outputs[0].name, "C") &&
              h->outputs[0].type.elem_type == ONP_FLOAT);
        onp_model_close(o);
    }
    onp_buf_free(&out);
    /* C -> E: Exp and Mul in order, W copied byte for byte, U left out,
     * D's value_info kept */
    const char *in_c[] = {"C"}, *out_e[] = {"E"};
    o = extract(m, in_c, 1, out_e, 1, &out);
    if (o) {
        const onp_graph *h = onp_model_graph(o);
        CHECK(h->n_nodes == 2);
        if (h->n_nodes == 2) {
            CHECK(same_span(&h->nodes[0].raw, &g->nodes[2].raw));
            CHECK(same_span(&h->nodes[1].raw, &g->nodes[3].raw));
        }
        CHECK(h->n_initializers == 1 &&
              same_span(&h->initializers[0].msg, &g->initializers[0].msg));
        CHECK(h->n_inputs == 1 && !strcmp(h->inputs[0].name, "C") &&
              h->inputs[0].type.elem_type == ONP_FLOAT);
        CHECK(h->n_outputs == 1 && span_is(&h->outputs[0].raw, &c.vi_e));
        CHECK(h->n_value_info == 1 && span_is(&h->value_info[0].raw, &c.vi_d));
        onp_tensor t;
        onp_error e;
        CHECK(onp_model_tensor(o, &h->initializers[0], &t, &e) == 0 && ((float *)t.data)[1] == 4);
        onp_tensor_release(&t);
        onp_model_close(o);
    }
    onp_buf_free(&out);
    /* A -> S, D: the whole chain, two outputs */
    const char *in_a[] = {"A"}, *out_sd[] = {"S", "D"};
    o = extract(m, in_a, 1, out_sd, 2, &out);
    if (o) {
        const onp_graph *h = onp_model_graph(o);
        CHECK(h->n_nodes == 5);
        for (size_t i = 0; i < h->n_nodes && i < 5; i++)
            CHECKF(same_span(&h->nodes[i].raw, &g->nodes[i].raw), "node %zu", i);
        CHECK(h->n_outputs == 2 && h->outputs[0].type.elem_type == ONP_INT64 &&
              span_is(&h->outputs[1].raw, &c.vi_d));
        CHECK(h->n_value_info == 2); /* B and D, both produced by kept nodes */
        onp_model_close(o);
    }
    onp_buf_free(&out);
    /* refusals, each naming the value */
    struct {
        const char *in[2];
        size_t ni;
        const char *out[2];
        size_t no;
        const char *name;
    } bad[] = {
        {{NULL}, 0, {"C"}, 1, "'A'"},      /* depends on A, not listed */
        {{"C"}, 1, {"S", "B"}, 2, "'A'"},  /* B needs A */
        {{"nope"}, 1, {"C"}, 1, "'nope'"}, /* no such input */
        {{"B"}, 1, {"zzz"}, 1, "'zzz'"},   /* no such output */
        {{"B"}, 1, {"A"}, 1, "'A'"},       /* output is an unlisted graph input */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        onp_error e;
        onp_buf_init(&out, 0);
        onp_error_clear(&e);
        int rc = onp_model_extract(m, bad[i].in, bad[i].ni, bad[i].out, bad[i].no, &out, &e);
        CHECKF(rc == -1 && e.code == ONP_ERR_USAGE && strstr(e.msg, bad[i].name),
               "case %zu: rc %d code %s msg %s", i, rc, onp_errcode_name(e.code), e.msg);
        onp_buf_free(&out);
    }
    onp_model_close(m);
    free_chain(&c);
}

/* Wait for a child; 0 when it exited with status 0, else the status. */
static int child_status(pid_t pid, char *why, size_t n)
{
    int st = 0;
    if (pid <= 0 || waitpid(pid, &st, 0) != pid) {
        snprintf(why, n, "fork/wait failed");
        return -1;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    if (WIFSIGNALED(st))
        snprintf(why, n, "killed by signal %d", WTERMSIG(st));
    else
        snprintf(why, n, "exit status %d", WEXITSTATUS(st));
    return st ? st : -1;
}

/* A SparseTensorProto missing its values or its indices: the view must stay
 * safe (names "" or the model refused), and extract, which looks sparse
 * initializers up by their values' name and re-emits both parts, must not
 * crash and must write a model that parses.  Run in a child process so a
 * crash shows as a failed check.  Exit 2: a NULL name in the view; 3: the
 * extracted model does not parse. */
static void sparse_part_missing(int with_values, int with_indices)
{
    onp_buf part, sp = {0}, g = {0}, n, vi, m;
    int64_t d1[1] = {1};
    if (with_values) {
        tensor_raw(&part, "SV", ONP_FLOAT, 1, d1, "\0\0\x80\x3f", 4);
        put_msg(&sp, 1, &part);
    }
    if (with_indices) {
        tensor_raw(&part, NULL, ONP_INT64, 1, d1, "\0\0\0\0\0\0\0\0", 8);
        put_msg(&sp, 2, &part);
    }
    onp_pb_put_uint(&sp, 3, 3);
    node(&n, NULL, "Add", NULL, "X,SV", "Y");
    put_msg(&g, G_NODE, &n);
    put_msg(&g, G_SPARSE_INIT, &sp);
    value_info(&vi, "X", NULL);
    put_msg(&g, G_INPUT, &vi);
    model_of(&m, &g);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        onp_model *mod, *o;
        onp_error e;
        if (onp_model_parse(m.p, m.n, NULL, &mod, &e)) _exit(0); /* refusing is fine */
        const onp_sparse_view *s = &onp_model_graph(mod)->sparse_initializers[0];
        if (!s->values.name || !s->indices.name) _exit(2);
        const char *in[] = {"X"}, *out[] = {"Y"};
        onp_buf ob = {0};
        if (onp_model_extract(mod, in, 1, out, 1, &ob, &e) == 0) {
            if (onp_model_parse(ob.p, ob.n, NULL, &o, &e)) _exit(3);
            onp_model_close(o);
        }
        onp_buf_free(&ob);
        onp_model_close(mod);
        _exit(0);
    }
    char why[64];
    int rc = child_status(pid, why, sizeof why);
    CHECKF(rc == 0,
           "sparse initializer with%s values, with%s indices: %s (an absent part must read as "
           "named \"\" and extract must not re-emit it)",
           with_values ? "" : "out", with_indices ? "" : "out", why);
    onp_buf_free(&m);
}

static void test_extract_sparse_parts_missing(void)
{
    sparse_part_missing(0, 1);
    sparse_part_missing(1, 0);
    sparse_part_missing(1, 1); /* the control: must pass */
}

/* The writer when the graph field is the first thing in the file, and when
 * the graph is empty: zero-length appends to a fresh onp_buf (undefined
 * behaviour in buf.c if it computes NULL + 0; UBSan builds abort).  In a
 * child process so an abort shows as a failed check. */
static void test_writer_graph_first(void)
{
    onp_buf g = {0}, n, vi, m = {0}, empty = {0};
    node(&n, "r", "Relu", NULL, "X", "Y");
    put_msg(&g, G_NODE, &n);
    vi_tensor(&vi, "X", ONP_FLOAT, -1, NULL);
    put_msg(&g, G_INPUT, &vi);
    put_msg(&m, M_GRAPH, &g); /* graph first */
    onp_pb_put_uint(&m, M_IR, 8);
    opset(&m, NULL, 17);
    put_msg(&empty, M_GRAPH, &g); /* an empty graph, first too */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        onp_model *mod, *o;
        onp_error e;
        const char *names[] = {"Y"}, *in[] = {"X"};
        onp_buf out = {0};
        if (onp_model_parse(m.p, m.n, NULL, &mod, &e)) _exit(4);
        if (onp_model_add_outputs(mod, names, 1, &out, &e)) _exit(5);
        if (onp_model_parse(out.p, out.n, NULL, &o, &e)) _exit(6);
        if (onp_model_graph(o)->n_outputs != 1 || onp_model_info_get(o)->ir_version != 8) _exit(7);
        onp_model_close(o);
        onp_buf_free(&out);
        if (onp_model_extract(mod, in, 1, names, 1, &out, &e)) _exit(8);
        if (onp_model_parse(out.p, out.n, NULL, &o, &e)) _exit(9);
        onp_model_close(o);
        onp_buf_free(&out);
        onp_model_close(mod);
        if (onp_model_parse(empty.p, empty.n, NULL, &mod, &e)) _exit(10);
        if (onp_model_add_outputs(mod, NULL, 0, &out, &e)) _exit(11);
        if (out.n != empty.n || memcmp(out.p, empty.p, out.n)) _exit(12);
        onp_buf_free(&out);
        onp_model_close(mod);
        _exit(0);
    }
    char why[64];
    int rc = child_status(pid, why, sizeof why);
    CHECKF(rc == 0, "writer with the graph first / an empty graph: %s", why);
    onp_buf_free(&m);
    onp_buf_free(&empty);
}

// --- setup ---------------------------------------------------------------------------

static void test_setup(void)
{
    strcpy(tmpdir, "/tmp/onp_test_model_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        exit(2);
    }
    make_ext_files();
}

static void test_cleanup(void)
{
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    CHECK(access(tmpdir, F_OK) != 0);
}

TEST_MAIN(test_setup, test_every_field, test_model_open_file, test_malformed, test_truncated_models,
          test_nesting, test_lfs_and_empty, test_external_ok, test_external_refused,
          test_external_ranges, test_external_sparse_3gib, test_add_outputs, test_extract,
          test_extract_sparse_parts_missing, test_writer_graph_first, test_cleanup)
