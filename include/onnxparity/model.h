/*
 * model.h — a zero-copy view of an ONNX ModelProto, external data, and the
 * splicing writer.
 *
 * onp_model_open() memory-maps the file and decodes the protobuf wire format
 * in place.  Names and small repeated fields (dims, ints, floats) are decoded
 * into the model's arena; tensor bytes (raw_data, typed *_data, external
 * data) are never copied: an onp_tensor_view holds spans into the mapping.
 * Every span, name and pointer below lives until onp_model_close().
 * The cost of opening grows with the number of messages, not with the bytes
 * of the initializers.
 *
 * Worked example:
 *     onp_model *m; onp_error e;
 *     if (onp_model_open("model.onnx", &m, &e) != 0) { print e; }
 *     const onp_graph *g = onp_model_graph(m);
 *     for (size_t i = 0; i < g->n_nodes; i++) puts(g->nodes[i].op_type);
 *     onp_model_close(m);
 */
#ifndef ONNXPARITY_MODEL_H
#define ONNXPARITY_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/buf.h"
#include "onnxparity/error.h"
#include "onnxparity/tensor.h"

/* A span of the model file: where a message or field sits. */
typedef struct onp_span {
    const uint8_t *p; /* into the mapping */
    size_t n;
    uint64_t off; /* byte offset of p in the file */
} onp_span;

typedef struct onp_dim {
    int64_t value;     /* dim_value, or -1 when symbolic/unknown */
    const char *param; /* dim_param, or NULL */
} onp_dim;

typedef enum onp_type_kind {
    ONP_TYPE_NONE = 0, /* no TypeProto */
    ONP_TYPE_TENSOR,
    ONP_TYPE_SPARSE_TENSOR,
    ONP_TYPE_SEQUENCE,
    ONP_TYPE_MAP,
    ONP_TYPE_OPTIONAL,
    ONP_TYPE_OTHER
} onp_type_kind;

typedef struct onp_type {
    onp_type_kind kind;
    int32_t elem_type; /* tensor element type (for sequence/optional: of the inner tensor) */
    int has_shape;     /* 0: rank unknown */
    size_t rank;
    onp_dim *dims; /* [rank] */
} onp_type;

typedef struct onp_value_info {
    const char *name;
    onp_type type;
    onp_span raw; /* the whole ValueInfoProto message */
} onp_value_info;

typedef struct onp_external {
    const char *location; /* relative path as written in the model */
    uint64_t offset;      /* default 0 */
    int64_t length;       /* -1 when absent (= to end of file) */
    const char *checksum; /* or NULL */
} onp_external;

/* A TensorProto, decoded as far as it can be without touching its bytes. */
typedef struct onp_tensor_view {
    const char *name;
    int32_t data_type;
    size_t rank;
    int64_t *dims;     /* [rank] */
    int64_t count;     /* element count (checked product of dims) */
    int has_raw;       /* raw_data present */
    onp_span raw_data; /* raw_data bytes */
    int is_external;   /* data_location == EXTERNAL */
    onp_external external;
    uint64_t bytes; /* bytes the values occupy (raw, typed or external) */
    onp_span msg;   /* the whole TensorProto; typed fields are re-read from it */
} onp_tensor_view;

typedef struct onp_graph onp_graph;

typedef enum onp_attr_type {
    ONP_ATTR_UNDEFINED = 0,
    ONP_ATTR_FLOAT = 1,
    ONP_ATTR_INT = 2,
    ONP_ATTR_STRING = 3,
    ONP_ATTR_TENSOR = 4,
    ONP_ATTR_GRAPH = 5,
    ONP_ATTR_FLOATS = 6,
    ONP_ATTR_INTS = 7,
    ONP_ATTR_STRINGS = 8,
    ONP_ATTR_TENSORS = 9,
    ONP_ATTR_GRAPHS = 10,
    ONP_ATTR_SPARSE_TENSOR = 11,
    ONP_ATTR_SPARSE_TENSORS = 12,
    ONP_ATTR_TYPE_PROTO = 13,
    ONP_ATTR_TYPE_PROTOS = 14
} onp_attr_type;

typedef struct onp_sparse_view {
    onp_tensor_view values;
    onp_tensor_view indices;
    size_t rank;
    int64_t *dims; /* [rank] */
} onp_sparse_view;

typedef struct onp_attr {
    const char *name;
    const char *ref_attr_name; /* inside functions, or NULL */
    int32_t type;              /* onp_attr_type as written (0 if absent) */
    float f;
    int64_t i;
    onp_span s;
    onp_tensor_view *t;      /* or NULL */
    onp_graph *g;            /* or NULL */
    onp_sparse_view *sparse; /* or NULL */
    onp_type *tp;            /* or NULL */
    size_t n_floats;
    float *floats; /* [n_floats] */
    size_t n_ints;
    int64_t *ints; /* [n_ints] */
    size_t n_strings;
    onp_span *strings; /* [n_strings] */
    size_t n_tensors;
    onp_tensor_view *tensors; /* [n_tensors] */
    size_t n_graphs;
    onp_graph **graphs; /* [n_graphs] */
    size_t n_sparse;
    onp_sparse_view *sparse_tensors; /* [n_sparse] */
    size_t n_type_protos;
    onp_type *type_protos; /* [n_type_protos] */
} onp_attr;

typedef struct onp_node {
    const char *name; /* "" when unnamed */
    const char *op_type;
    const char *domain; /* "" = ai.onnx */
    size_t n_inputs;
    const char **inputs; /* [n_inputs]; "" marks an omitted optional input */
    size_t n_outputs;
    const char **outputs;
    size_t n_attrs;
    onp_attr *attrs; /* [n_attrs] */
    onp_span raw;    /* the whole NodeProto */
} onp_node;

struct onp_graph {
    const char *name;
    size_t n_nodes;
    onp_node *nodes;
    size_t n_initializers;
    onp_tensor_view *initializers;
    size_t n_sparse_initializers;
    onp_sparse_view *sparse_initializers;
    size_t n_inputs;
    onp_value_info *inputs;
    size_t n_outputs;
    onp_value_info *outputs;
    size_t n_value_info;
    onp_value_info *value_info;
    onp_span raw; /* the whole GraphProto */
};

typedef struct onp_opset {
    const char *domain; /* "" = ai.onnx */
    int64_t version;
} onp_opset;

typedef struct onp_kv {
    const char *key;
    const char *value;
} onp_kv;

typedef struct onp_function {
    const char *name;
    const char *domain;
    size_t n_inputs;
    const char **inputs;
    size_t n_outputs;
    const char **outputs;
    size_t n_nodes;
    onp_node *nodes;
    size_t n_opsets;
    onp_opset *opsets;
} onp_function;

typedef struct onp_model_info {
    int64_t ir_version;
    const char *producer_name;
    const char *producer_version;
    const char *domain;
    int64_t model_version;
    const char *doc_string;
    size_t n_opsets;
    onp_opset *opsets;
    size_t n_metadata;
    onp_kv *metadata;
    size_t n_functions;
    onp_function *functions;
} onp_model_info;

typedef struct onp_model onp_model;

/* Open and decode `path` (memory-mapped).  Errors name the path, the field
 * ("graph.node[12].attribute[0]") and the byte offset. */
int onp_model_open(const char *path, onp_model **out, onp_error *e);

/* Decode a model held in memory.  `buf` must outlive the model; `path` is
 * used for error messages and as the base for external data (may be NULL:
 * then external data is refused). */
int onp_model_parse(const uint8_t *buf, size_t n, const char *path, onp_model **out, onp_error *e);

void onp_model_close(onp_model *m); /* accepts NULL */

const onp_model_info *onp_model_info_get(const onp_model *m);
const onp_graph *onp_model_graph(const onp_model *m);
const char *onp_model_path(const onp_model *m); /* or NULL */
const uint8_t *onp_model_bytes(const onp_model *m, size_t *n);

/* The opset version imported for `domain` ("" = ai.onnx), or -1. */
int64_t onp_model_opset(const onp_model *m, const char *domain);

/* SHA-256 of the serialized model (external data files not included) as
 * 64 hex digits + NUL; for result fingerprints. */
void onp_model_sha256(const onp_model *m, char hex[65]);

/* 1 when any initializer (main graph or subgraph) has external data. */
int onp_model_has_external(const onp_model *m);

/* Check every external-data reference of the model (initializers, sparse
 * initializers and attribute tensors, in every graph) as
 * onp_model_external_span does: location inside the model's folder, no
 * "..", absolute path or symlink, offset + length inside the file.  Maps the
 * files (kept until onp_model_close), reads no tensor.  0, or -1 with the
 * first problem in e (ONP_ERR_INPUT for an unsafe location, ONP_ERR_IO /
 * ONP_ERR_FORMAT otherwise).  For callers that hand the model to another
 * reader (ONNX Runtime) that would otherwise be first to see the files. */
int onp_model_check_external(const onp_model *m, onp_error *e);

/* --- tensors ------------------------------------------------------------ */

/* Materialise a tensor view: raw_data, every typed field, or external data
 * (resolved against the model's folder: the location must stay inside it;
 * absolute paths, ".." and symlinks are refused; offset and length are
 * checked against the file).  The result owns its data. */
int onp_model_tensor(const onp_model *m, const onp_tensor_view *v, onp_tensor *out, onp_error *e);

/* The bytes of an external tensor, mapped in place (no copy), after the
 * same checks as onp_model_tensor.  Valid until onp_model_close(). */
int onp_model_external_span(const onp_model *m, const onp_tensor_view *v, onp_span *out,
                            onp_error *e);

/* Find an initializer of the main graph by name, or NULL. */
const onp_tensor_view *onp_graph_initializer(const onp_graph *g, const char *name);

/* Find the node producing value `name`, or NULL. */
const onp_node *onp_graph_producer(const onp_graph *g, const char *name, size_t *index);

/* The type of a value: graph input/output, value_info, or initializer
 * (kind TENSOR with its dims).  Returns 0 when found. */
int onp_graph_value_type(const onp_graph *g, const char *name, onp_type *out);

/* "[1, N, ?]": a type's dims (symbolic names as written, "?" for a dim with
 * neither value nor name) into buf, truncated to n bytes; returns buf. */
char *onp_type_shape_str(const onp_type *t, char *buf, size_t n);

/* Find an attribute of a node by name, or NULL. */
const onp_attr *onp_node_attr(const onp_node *n, const char *name);

/* --- splicing writer ---------------------------------------------------- */

/* Write a model identical to `m` except that the listed values are added as
 * graph outputs (names already outputs are skipped).  Element types come from
 * value_info or are inferred from the producing node where the operator
 * defines them; a value whose type cannot be found is added with its name
 * only.  Only ModelProto and GraphProto are re-encoded; every other byte is
 * copied as it is. */
int onp_model_add_outputs(const onp_model *m, const char *const *names, size_t n, onp_buf *out,
                          onp_error *e);

/* Write the subgraph that computes `outputs` from `inputs`: the nodes between
 * them, the initializers they use, the given inputs as graph inputs.  Fails
 * (ONP_ERR_USAGE) when an output depends on a graph input not listed. */
int onp_model_extract(const onp_model *m, const char *const *inputs, size_t n_inputs,
                      const char *const *outputs, size_t n_outputs, onp_buf *out, onp_error *e);

/* Legacy models: when the default-domain opset is below 7, write the model
 * upgraded to opset 7 (the operators whose semantics changed at 7 are
 * rewritten, see src/model/upgrade.c) and set *changed = 1; otherwise
 * write nothing and set *changed = 0.  ONNX Runtime has no kernels for the
 * pre-7 versions of Add, Mul, Gemm, PRelu, BatchNormalization, ... */
int onp_model_upgrade_opset7(const onp_model *m, onp_buf *out, int *changed, onp_error *e);

/* Every value computed by a node of the main graph, in topological order
 * (the order nodes appear, which ONNX requires to be topological).  The
 * array is allocated in the model's arena. */
const char **onp_model_node_values(const onp_model *m, size_t *n);

#endif
