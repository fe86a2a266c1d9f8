/*
 * cmd_inspect.c — `onnxparity inspect MODEL|TARGET [--format text|json]`; TARGET is a
 * bundle folder, whose model.onnx is inspected.
 *
 * Opens the model through the zero-copy view and prints what a user asks
 * first: IR version, opsets, producer, inputs and outputs with static and
 * symbolic dims, the op-type histogram, node and initializer counts and
 * bytes (inline / external), metadata.  External data is checked (location
 * and bounds) without being read.  Exit 0, or 2/3 on bad input.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "onnxparity/doc.h"
#include "report.h"
#include "onnxparity/model.h"

typedef struct op_count {
    const char *op;
    const char *domain;
    long n;
} op_count;

typedef struct stats {
    op_count *ops;
    size_t n_ops, cap_ops;
    long nodes, sub_nodes, subgraphs;
    long inits, ext_inits;
    uint64_t inline_bytes, ext_bytes;
    int oom;
} stats;

static void count_op(stats *s, const onp_node *n)
{
    for (size_t i = 0; i < s->n_ops; i++)
        if (!strcmp(s->ops[i].op, n->op_type) && !strcmp(s->ops[i].domain, n->domain)) {
            s->ops[i].n++;
            return;
        }
    if (s->n_ops == s->cap_ops) {
        size_t cap = s->cap_ops ? 2 * s->cap_ops : 32;
        op_count *p = realloc(s->ops, cap * sizeof *p);
        if (!p) {
            s->oom = 1;
            return;
        }
        s->ops = p;
        s->cap_ops = cap;
    }
    s->ops[s->n_ops++] = (op_count){n->op_type, n->domain, 1};
}

static int check_tensor(const onp_model *m, const onp_tensor_view *v, stats *s, onp_error *e)
{
    s->inits++;
    if (!v->is_external) {
        s->inline_bytes += v->bytes;
        return 0;
    }
    s->ext_inits++;
    s->ext_bytes += v->bytes;
    onp_span span;
    return onp_model_external_span(m, v, &span, e);
}

/* External data of a sparse tensor (values or indices) is checked the same
 * way: ONNX Runtime would load it too. */
static int check_sparse(const onp_model *m, const onp_sparse_view *sp, stats *s, onp_error *e)
{
    if (sp->values.is_external && check_tensor(m, &sp->values, s, e)) return -1;
    if (sp->indices.is_external && check_tensor(m, &sp->indices, s, e)) return -1;
    return 0;
}

static int walk(const onp_model *m, const onp_graph *g, int depth, stats *s, onp_error *e)
{
    for (size_t i = 0; i < g->n_initializers; i++)
        if (check_tensor(m, &g->initializers[i], s, e)) return -1;
    for (size_t i = 0; i < g->n_sparse_initializers; i++)
        if (check_sparse(m, &g->sparse_initializers[i], s, e)) return -1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onp_node *n = &g->nodes[i];
        if (depth)
            s->sub_nodes++;
        else
            s->nodes++;
        count_op(s, n);
        for (size_t a = 0; a < n->n_attrs; a++) {
            const onp_attr *at = &n->attrs[a];
            if (at->t && at->t->is_external && check_tensor(m, at->t, s, e)) return -1;
            for (size_t k = 0; k < at->n_tensors; k++)
                if (at->tensors[k].is_external && check_tensor(m, &at->tensors[k], s, e)) return -1;
            if (at->sparse && check_sparse(m, at->sparse, s, e)) return -1;
            for (size_t k = 0; k < at->n_sparse; k++)
                if (check_sparse(m, &at->sparse_tensors[k], s, e)) return -1;
            if (at->g) {
                s->subgraphs++;
                if (walk(m, at->g, depth + 1, s, e)) return -1;
            }
            for (size_t k = 0; k < at->n_graphs; k++) {
                s->subgraphs++;
                if (walk(m, at->graphs[k], depth + 1, s, e)) return -1;
            }
        }
    }
    return 0;
}

static int cmp_ops(const void *a, const void *b)
{
    const op_count *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    int c = strcmp(x->domain, y->domain);
    return c ? c : strcmp(x->op, y->op);
}

static void dims_text(const onp_type *t, char *buf, size_t n)
{
    buf[0] = '\0';
    if (t->kind != ONP_TYPE_TENSOR && t->kind != ONP_TYPE_SPARSE_TENSOR) {
        snprintf(buf, n, "%s", t->kind == ONP_TYPE_NONE ? "(no type)" : "(non-tensor)");
        return;
    }
    if (!t->has_shape) {
        snprintf(buf, n, "%s (rank unknown)", onp_dtype_name(t->elem_type));
        return;
    }
    char shape[1024];
    snprintf(buf, n, "%s %s", onp_dtype_name(t->elem_type),
             onp_type_shape_str(t, shape, sizeof shape));
}

static cJSON *type_json(const onp_type *t)
{
    cJSON *o = cJSON_CreateObject();
    static const char *kinds[] = {"none", "tensor",   "sparse_tensor", "sequence",
                                  "map",  "optional", "other"};
    cJSON_AddStringToObject(o, "kind", kinds[t->kind]);
    cJSON_AddStringToObject(o, "dtype", t->elem_type ? onp_dtype_name(t->elem_type) : "undefined");
    if (t->has_shape) {
        cJSON *dims = cJSON_AddArrayToObject(o, "shape");
        for (size_t i = 0; i < t->rank; i++) {
            const onp_dim *d = &t->dims[i];
            if (d->param && d->param[0])
                cJSON_AddItemToArray(dims, cJSON_CreateString(d->param));
            else if (d->value >= 0)
                cJSON_AddItemToArray(dims, cJSON_CreateNumber((double)d->value));
            else
                cJSON_AddItemToArray(dims, cJSON_CreateNull());
        }
    } else {
        cJSON_AddNullToObject(o, "shape");
    }
    return o;
}

static void print_json(const char *path, const onp_model *m, const stats *s)
{
    const onp_model_info *info = onp_model_info_get(m);
    const onp_graph *g = onp_model_graph(m);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.inspect/1");
    cJSON_AddStringToObject(root, "model", path);
    cJSON_AddNumberToObject(root, "ir_version", (double)info->ir_version);
    cJSON_AddStringToObject(root, "producer_name", info->producer_name);
    cJSON_AddStringToObject(root, "producer_version", info->producer_version);
    cJSON_AddStringToObject(root, "domain", info->domain);
    cJSON_AddNumberToObject(root, "model_version", (double)info->model_version);
    cJSON *ops = cJSON_AddArrayToObject(root, "opset_import");
    for (size_t i = 0; i < info->n_opsets; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "domain",
                                info->opsets[i].domain[0] ? info->opsets[i].domain : "ai.onnx");
        cJSON_AddNumberToObject(o, "version", (double)info->opsets[i].version);
        cJSON_AddItemToArray(ops, o);
    }
    const onp_value_info *lists[2] = {g->inputs, g->outputs};
    size_t counts[2] = {g->n_inputs, g->n_outputs};
    const char *keys[2] = {"inputs", "outputs"};
    for (int l = 0; l < 2; l++) {
        cJSON *arr = cJSON_AddArrayToObject(root, keys[l]);
        for (size_t i = 0; i < counts[l]; i++) {
            if (l == 0 && onp_graph_initializer(g, lists[l][i].name)) continue;
            cJSON *o = type_json(&lists[l][i].type);
            cJSON_AddStringToObject(o, "name", lists[l][i].name);
            cJSON_AddItemToArray(arr, o);
        }
    }
    cJSON_AddNumberToObject(root, "nodes", (double)s->nodes);
    cJSON_AddNumberToObject(root, "subgraph_nodes", (double)s->sub_nodes);
    cJSON *hist = cJSON_AddObjectToObject(root, "op_types");
    for (size_t i = 0; i < s->n_ops; i++) {
        char key[512];
        if (s->ops[i].domain[0] && strcmp(s->ops[i].domain, "ai.onnx"))
            snprintf(key, sizeof key, "%s::%s", s->ops[i].domain, s->ops[i].op);
        else
            snprintf(key, sizeof key, "%s", s->ops[i].op);
        cJSON_AddNumberToObject(hist, key, (double)s->ops[i].n);
    }
    cJSON *in = cJSON_AddObjectToObject(root, "initializers");
    cJSON_AddNumberToObject(in, "count", (double)s->inits);
    cJSON_AddNumberToObject(in, "inline_bytes", (double)s->inline_bytes);
    cJSON_AddNumberToObject(in, "external_count", (double)s->ext_inits);
    cJSON_AddNumberToObject(in, "external_bytes", (double)s->ext_bytes);
    cJSON *meta = cJSON_AddObjectToObject(root, "metadata");
    for (size_t i = 0; i < info->n_metadata; i++)
        cJSON_AddStringToObject(meta, info->metadata[i].key, info->metadata[i].value);
    cJSON_AddNumberToObject(root, "functions", (double)info->n_functions);
    char *txt = onp_doc_print(root);
    if (txt) report_json_puts(txt, stdout);
    free(txt);
    cJSON_Delete(root);
}

static void print_text(const char *path, const onp_model *m, const stats *s)
{
    const onp_model_info *info = onp_model_info_get(m);
    const onp_graph *g = onp_model_graph(m);
    char b1[32], b2[32], dims[1024];
    printf("%s\n", path);
    printf("  ir_version    %" PRId64 "\n", info->ir_version);
    printf("  producer      %s %s\n", info->producer_name[0] ? info->producer_name : "(none)",
           info->producer_version);
    printf("  opsets       ");
    for (size_t i = 0; i < info->n_opsets; i++)
        printf(" %s %" PRId64 "%s", info->opsets[i].domain[0] ? info->opsets[i].domain : "ai.onnx",
               info->opsets[i].version, i + 1 < info->n_opsets ? "," : "");
    printf("\n  nodes         %ld", s->nodes);
    if (s->subgraphs) printf(" (+%ld in %ld subgraphs)", s->sub_nodes, s->subgraphs);
    printf("\n  initializers  %ld, %s inline, %s external (%ld tensors)\n", s->inits,
           cli_bytes((double)s->inline_bytes, b1, sizeof b1),
           cli_bytes((double)s->ext_bytes, b2, sizeof b2), s->ext_inits);
    if (info->n_functions) printf("  functions     %zu\n", info->n_functions);
    printf("inputs\n");
    for (size_t i = 0; i < g->n_inputs; i++) {
        if (onp_graph_initializer(g, g->inputs[i].name)) continue;
        dims_text(&g->inputs[i].type, dims, sizeof dims);
        printf("  %-24s %s\n", g->inputs[i].name, dims);
    }
    printf("outputs\n");
    for (size_t i = 0; i < g->n_outputs; i++) {
        dims_text(&g->outputs[i].type, dims, sizeof dims);
        printf("  %-24s %s\n", g->outputs[i].name, dims);
    }
    printf("op types\n");
    for (size_t i = 0; i < s->n_ops; i++) {
        if (s->ops[i].domain[0] && strcmp(s->ops[i].domain, "ai.onnx"))
            printf("  %6ld  %s::%s\n", s->ops[i].n, s->ops[i].domain, s->ops[i].op);
        else
            printf("  %6ld  %s\n", s->ops[i].n, s->ops[i].op);
    }
    if (info->n_metadata) {
        printf("metadata\n");
        for (size_t i = 0; i < info->n_metadata; i++)
            printf("  %s = %s\n", info->metadata[i].key, info->metadata[i].value);
    }
}

int cmd_inspect(int argc, char **argv)
{
    const char *path = NULL, *v;
    cli_format fmt = FMT_TEXT;
    for (int i = 1; i < argc; i++) {
        int r = cli_opt(argc, argv, &i, "format", &v);
        if (r < 0) return EXIT_USAGE;
        if (r) {
            if (cli_parse_format(argv[0], v, &fmt)) return EXIT_USAGE;
        } else if (cli_target_arg(argv, i, "model", &path)) {
            return EXIT_USAGE;
        }
    }
    if (!path)
        return cli_usage_error(argv[0], "usage: onnxparity inspect MODEL [--format text|json]");
    onp_error e;
    onp_error_clear(&e);
    char bundle_model[4096];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* a bundle: its model.onnx */
        snprintf(bundle_model, sizeof bundle_model, "%s/model.onnx", path);
        path = bundle_model;
    }
    onp_model *m;
    if (onp_model_open(path, &m, &e)) return cli_report(&e);
    stats s = {0};
    int rc = walk(m, onp_model_graph(m), 0, &s, &e);
    if (!rc && s.oom) rc = onp_error_set(&e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    if (rc) {
        free(s.ops);
        onp_model_close(m);
        return cli_report(&e);
    }
    if (s.n_ops) qsort(s.ops, s.n_ops, sizeof s.ops[0], cmp_ops); /* s.ops is NULL when 0 */
    if (fmt == FMT_JSON)
        print_json(path, m, &s);
    else
        print_text(path, m, &s);
    free(s.ops);
    onp_model_close(m);
    return EXIT_PASS;
}
