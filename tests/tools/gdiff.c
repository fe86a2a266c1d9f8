/*
 * gdiff.c — test tool: diff the main graphs of two models with
 * onp_graph_diff_files (include/onnxparity/probe.h) and print the result,
 * one tab-separated line per node, so python tests can build model pairs
 * with onnx.helper and check the diff:
 *
 *   N <nodes_from> <nodes_to>
 *   R <name> <op_type> <domain or -> <replaced_by name or -> <folded 0|1>
 *   A <name> <op_type> <domain or -> <replaced names, comma-separated, or ->
 *   E <one-line error>            (exit 1)
 *
 * Usage: gdiff FROM.onnx TO.onnx
 */
#include <stdio.h>

#include "onnxparity/probe.h"

static const char *dash(const char *s)
{
    return s && s[0] ? s : "-";
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gdiff FROM.onnx TO.onnx\n");
        return 2;
    }
    onp_graph_diff *d;
    onp_error e;
    if (onp_graph_diff_files(argv[1], argv[2], &d, &e)) {
        char buf[1024];
        printf("E\t%s\n", onp_error_format(&e, buf, sizeof buf));
        return 1;
    }
    printf("N\t%zu\t%zu\n", d->nodes_from, d->nodes_to);
    for (size_t i = 0; i < d->n_removed; i++) {
        const onp_gdiff_node *n = &d->removed[i];
        printf("R\t%s\t%s\t%s\t%s\t%d\n", dash(n->name), n->op_type, dash(n->domain),
               n->replaced_by >= 0 ? dash(d->added[n->replaced_by].name) : "-", n->folded);
    }
    for (size_t i = 0; i < d->n_added; i++) {
        const onp_gdiff_node *n = &d->added[i];
        printf("A\t%s\t%s\t%s\t", dash(n->name), n->op_type, dash(n->domain));
        for (size_t k = 0; k < n->n_replaces; k++)
            printf("%s%s", k ? "," : "", dash(d->removed[n->replaces[k]].name));
        printf("%s\n", n->n_replaces ? "" : "-");
    }
    onp_graph_diff_free(d);
    return 0;
}
