/*
 * dataflow.c — the nodes a value is computed from (dataflow.h).
 */
#include "model/dataflow.h"

#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

#define MAX_DEPTH 64

static int reads_at(const onp_node *n, const char *name, int depth)
{
    for (size_t k = 0; k < n->n_inputs; k++)
        if (!strcmp(n->inputs[k], name)) return 1;
    if (depth >= MAX_DEPTH) return 0;
    for (size_t a = 0; a < n->n_attrs; a++) {
        const onp_attr *at = &n->attrs[a];
        for (size_t k = 0; k <= at->n_graphs; k++) { /* g, then graphs[] */
            const onp_graph *one = k ? at->graphs[k - 1] : at->g;
            for (size_t i = 0; one && i < one->n_nodes; i++)
                if (reads_at(&one->nodes[i], name, depth + 1)) return 1;
        }
    }
    return 0;
}

int onp_node_reads(const onp_node *n, const char *name)
{
    return name && name[0] && reads_at(n, name, 0);
}

/* The walk: the producers by name, the marks, and the nodes marked whose
 * reads are not yet followed. */
typedef struct walk {
    onp_strmap producer;
    unsigned char *up;
    size_t *todo, n_todo;
} walk;

static void mark(walk *w, const char *name)
{
    size_t at;
    if (name[0] && onp_strmap_get(&w->producer, name, &at) && !w->up[at]) {
        w->up[at] = 1;
        w->todo[w->n_todo++] = at;
    }
}

/* Mark the producers of what node n reads, its subgraphs' reads included. */
static void mark_reads(walk *w, const onp_node *n, int depth)
{
    for (size_t k = 0; k < n->n_inputs; k++) mark(w, n->inputs[k]);
    if (depth >= MAX_DEPTH) return;
    for (size_t a = 0; a < n->n_attrs; a++) {
        const onp_attr *at = &n->attrs[a];
        for (size_t k = 0; k <= at->n_graphs; k++) { /* g, then graphs[] */
            const onp_graph *one = k ? at->graphs[k - 1] : at->g;
            for (size_t i = 0; one && i < one->n_nodes; i++)
                mark_reads(w, &one->nodes[i], depth + 1);
        }
    }
}

int onp_graph_upstream(const onp_graph *g, const char *const *values, size_t n, unsigned char *up)
{
    walk w = {.up = up};
    int rc = -1;
    w.todo = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *w.todo);
    if (!w.todo) goto done;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_outputs; k++) {
            const char *o = g->nodes[i].outputs[k];
            if (o[0] && !onp_strmap_get(&w.producer, o, NULL) && onp_strmap_put(&w.producer, o, i))
                goto done;
        }
    for (size_t v = 0; v < n; v++)
        if (values[v]) mark(&w, values[v]);
    while (w.n_todo) mark_reads(&w, &g->nodes[w.todo[--w.n_todo]], 0);
    rc = 0;
done:
    onp_strmap_free(&w.producer);
    free(w.todo);
    return rc;
}
