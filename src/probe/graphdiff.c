/*
 * graphdiff.c — what an optimizer did to a graph: the nodes two versions of
 * one main graph do not share, and which old nodes each new one replaced
 * (onp_graph_diff_files, include/onnxparity/probe.h).
 *
 * Both models are read with the zero-copy model view; only the names the
 * result keeps are copied (into one arena, freed with the diff).  Matching
 * is by wiring: (domain, op_type, inputs, outputs).  ORT keeps the value
 * names of what it does not touch, so an untouched node matches and a fused
 * one does not.  Never prints; needs no ONNX Runtime.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/model.h"
#include "onnxparity/probe.h"
#include "util/arena.h"
#include "util/strmap.h"

/* The matching key of a node: domain, op_type, inputs, outputs, separated
 * by bytes that cannot occur in the names ORT or torch write. */
static char *node_key(onp_arena *a, const onp_node *n)
{
    size_t len = strlen(n->domain) + strlen(n->op_type) + 4;
    for (size_t i = 0; i < n->n_inputs; i++) len += strlen(n->inputs[i]) + 1;
    for (size_t i = 0; i < n->n_outputs; i++) len += strlen(n->outputs[i]) + 1;
    char *k = onp_arena_alloc(a, len);
    if (!k) return NULL;
    char *p = k;
    p += strlen(strcpy(p, n->domain));
    *p++ = '\x1d';
    p += strlen(strcpy(p, n->op_type));
    *p++ = '\x1d';
    for (size_t i = 0; i < n->n_inputs; i++) {
        p += strlen(strcpy(p, n->inputs[i]));
        *p++ = '\x1f';
    }
    *p++ = '\x1d';
    for (size_t i = 0; i < n->n_outputs; i++) {
        p += strlen(strcpy(p, n->outputs[i]));
        *p++ = '\x1f';
    }
    *p = '\0';
    return k;
}

static int copy_node(onp_arena *a, const onp_node *n, onp_gdiff_node *d)
{
    d->name = onp_arena_strndup(a, n->name, strlen(n->name));
    d->op_type = onp_arena_strndup(a, n->op_type, strlen(n->op_type));
    d->domain = onp_arena_strndup(a, n->domain, strlen(n->domain));
    d->replaced_by = -1;
    return d->name && d->op_type && d->domain ? 0 : -1;
}

/* Union-find over the added nodes (groups of nodes wired to each other). */
static size_t root_of(size_t *up, size_t i)
{
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
}

void onp_graph_diff_free(onp_graph_diff *d)
{
    if (!d) return;
    if (d->mem_) {
        onp_arena_free(d->mem_);
        free(d->mem_);
    }
    free(d->from_file);
    free(d->to_file);
    free(d);
}

/* The tables one diff works with (diff_graphs allocates and frees them). */
typedef struct gdiff_work {
    const onp_graph *A, *B; /* the graph before and after */
    onp_graph_diff *d;      /* the result, its names in `a` */
    onp_arena *a;
    onp_strmap keys;       /* node key -> first A node with it */
    onp_strmap prod_a;     /* value -> its producer in A */
    onp_strmap prod_b;     /* value -> its producer in B, for added nodes only */
    unsigned char *kept_a; /* [A->n_nodes] 1 when the node is in both graphs */
    unsigned char *kept_b; /* [B->n_nodes] likewise */
    size_t *rem_of;        /* [A->n_nodes] removed[] index + 1, 0 when kept */
    size_t *add_of;        /* [B->n_nodes] added[] index + 1, 0 when kept */
    size_t *up;            /* [d->n_added] union-find parent */
    size_t *stack;         /* [A->n_nodes] the walk's stack */
    unsigned char *taken;  /* [A->n_nodes] 1 when the walk reached the node */
} gdiff_work;

/* Match B's nodes to A's by key: a key maps to the first unmatched A node
 * holding it (SSA makes keys of nodes with outputs unique; duplicates fall
 * back to unmatched).  Fills keys, prod_a, kept_a, kept_b. */
static int match_nodes(gdiff_work *w)
{
    const onp_graph *A = w->A, *B = w->B;
    for (size_t i = 0; i < A->n_nodes; i++) {
        char *k = node_key(w->a, &A->nodes[i]);
        if (!k || onp_strmap_put(&w->keys, k, i)) return -1;
        for (size_t o = 0; o < A->nodes[i].n_outputs; o++)
            if (A->nodes[i].outputs[o][0] && onp_strmap_put(&w->prod_a, A->nodes[i].outputs[o], i))
                return -1;
    }
    for (size_t j = 0; j < B->n_nodes; j++) {
        char *k = node_key(w->a, &B->nodes[j]);
        size_t i;
        if (!k) return -1;
        if (onp_strmap_get(&w->keys, k, &i) && !w->kept_a[i]) w->kept_a[i] = w->kept_b[j] = 1;
    }
    return 0;
}

/* The unmatched nodes into d->removed (A's, with `folded` when every output
 * became an initializer of B) and d->added (B's), in graph order; fills
 * rem_of, add_of and prod_b. */
static int list_changes(gdiff_work *w)
{
    const onp_graph *A = w->A, *B = w->B;
    onp_graph_diff *d = w->d;
    for (size_t i = 0; i < A->n_nodes; i++) d->n_removed += !w->kept_a[i];
    for (size_t j = 0; j < B->n_nodes; j++) d->n_added += !w->kept_b[j];
    d->removed = onp_arena_array(w->a, d->n_removed ? d->n_removed : 1, sizeof *d->removed);
    d->added = onp_arena_array(w->a, d->n_added ? d->n_added : 1, sizeof *d->added);
    if (!d->removed || !d->added) return -1;
    size_t r = 0, ad = 0;
    for (size_t i = 0; i < A->n_nodes; i++)
        if (!w->kept_a[i]) {
            if (copy_node(w->a, &A->nodes[i], &d->removed[r])) return -1;
            w->rem_of[i] = ++r;
            /* folded: every output is now an initializer */
            const onp_node *n = &A->nodes[i];
            int all = n->n_outputs > 0;
            for (size_t o = 0; o < n->n_outputs && all; o++)
                if (!onp_graph_initializer(B, n->outputs[o])) all = 0;
            d->removed[r - 1].folded = all;
        }
    for (size_t j = 0; j < B->n_nodes; j++)
        if (!w->kept_b[j]) {
            if (copy_node(w->a, &B->nodes[j], &d->added[ad])) return -1;
            w->add_of[j] = ++ad;
            for (size_t o = 0; o < B->nodes[j].n_outputs; o++)
                if (B->nodes[j].outputs[o][0] &&
                    onp_strmap_put(&w->prod_b, B->nodes[j].outputs[o], j))
                    return -1;
        }
    return 0;
}

/* Group the added nodes wired to each other (union-find in `up`) and number
 * the groups in the new graph's order: added[].group, d->n_groups. */
static void group_added(gdiff_work *w)
{
    const onp_graph *B = w->B;
    onp_graph_diff *d = w->d;
    size_t *up = w->up;
    for (size_t g = 0; g < d->n_added; g++) up[g] = g;
    for (size_t j = 0; j < B->n_nodes; j++) {
        if (!w->add_of[j]) continue;
        for (size_t k = 0; k < B->nodes[j].n_inputs; k++) {
            size_t p;
            /* wired through a value the old graph did not have: one
             * rewrite (ReorderInput -> Conv -> ReorderOutput); through an
             * old value: two neighbouring rewrites, kept apart */
            if (!B->nodes[j].inputs[k][0] ||
                !onp_strmap_get(&w->prod_b, B->nodes[j].inputs[k], &p) ||
                onp_strmap_get(&w->prod_a, B->nodes[j].inputs[k], NULL))
                continue;
            size_t x = root_of(up, w->add_of[j] - 1), y = root_of(up, w->add_of[p] - 1);
            if (x != y) up[x] = y;
        }
    }
    /* a group's number is given at its first member (a union-find root need
     * not be its first member) */
    for (size_t g = 0; g < d->n_added; g++) d->added[g].group = SIZE_MAX;
    for (size_t g = 0; g < d->n_added; g++) {
        size_t root = root_of(up, g);
        if (d->added[root].group == SIZE_MAX) d->added[root].group = d->n_groups++;
    }
    for (size_t g = 0; g < d->n_added; g++) d->added[g].group = d->added[root_of(up, g)].group;
}

/* Mark in `taken` the removed A nodes that group g (a union-find root)
 * replaced: walk back from the group's outputs through removed producers
 * of A, stopping at a value the group reads or one the new graph still
 * computes elsewhere.  *n_taken: how many. */
static int walk_group(gdiff_work *w, size_t g, size_t *n_taken)
{
    const onp_graph *A = w->A, *B = w->B;
    size_t sp = 0;
    onp_strmap gin = {0}; /* the values the group reads */
    *n_taken = 0;
    memset(w->taken, 0, A->n_nodes);
    for (size_t j = 0; j < B->n_nodes; j++) {
        if (!w->add_of[j] || root_of(w->up, w->add_of[j] - 1) != g) continue;
        for (size_t q = 0; q < B->nodes[j].n_inputs; q++)
            if (B->nodes[j].inputs[q][0] && onp_strmap_put(&gin, B->nodes[j].inputs[q], 0)) {
                onp_strmap_free(&gin);
                return -1;
            }
        for (size_t o = 0; o < B->nodes[j].n_outputs; o++) {
            size_t i;
            if (onp_strmap_get(&w->prod_a, B->nodes[j].outputs[o], &i) && w->rem_of[i] &&
                !w->taken[i]) {
                w->taken[i] = 1;
                w->stack[sp++] = i;
            }
        }
    }
    while (sp) {
        size_t i = w->stack[--sp];
        (*n_taken)++;
        const onp_node *n = &A->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++) {
            const char *v = n->inputs[k];
            size_t p, pj;
            if (!v[0] || !onp_strmap_get(&w->prod_a, v, &p) || !w->rem_of[p] || w->taken[p])
                continue;
            /* a value the group reads is its boundary */
            int boundary = onp_strmap_get(&gin, v, NULL);
            /* and so is a value the new graph still computes elsewhere */
            if (!boundary && onp_strmap_get(&w->prod_b, v, &pj) &&
                root_of(w->up, w->add_of[pj] - 1) != g)
                boundary = 1;
            if (boundary) continue;
            w->taken[p] = 1;
            w->stack[sp++] = p;
        }
    }
    onp_strmap_free(&gin);
    return 0;
}

/* Group g's replaced nodes (walk_group) as every member's `replaces`, and
 * the group's first added node as each such node's `replaced_by` (when it
 * has none yet). */
static int record_replacements(gdiff_work *w, size_t g)
{
    onp_graph_diff *d = w->d;
    size_t n_taken;
    if (walk_group(w, g, &n_taken)) return -1;
    if (!n_taken) return 0;
    size_t *list = onp_arena_array(w->a, n_taken, sizeof *list);
    if (!list) return -1;
    size_t m = 0;
    for (size_t i = 0; i < w->A->n_nodes; i++)
        if (w->taken[i]) list[m++] = w->rem_of[i] - 1;
    for (size_t x = 0; x < d->n_added; x++)
        if (root_of(w->up, x) == g) {
            d->added[x].replaces = list;
            d->added[x].n_replaces = m;
        }
    /* the group's first added node stands for it */
    size_t first = g;
    for (size_t x = 0; x < d->n_added; x++)
        if (root_of(w->up, x) == g) {
            first = x;
            break;
        }
    for (size_t q = 0; q < m; q++)
        if (d->removed[list[q]].replaced_by < 0) d->removed[list[q]].replaced_by = (long)first;
    return 0;
}

/* The diff proper, over two open graphs, into *d (its names in `a`); -1 when
 * out of memory.  Scratch tables freed here. */
static int diff_graphs(const onp_graph *A, const onp_graph *B, onp_graph_diff *d, onp_arena *a)
{
    gdiff_work w;
    memset(&w, 0, sizeof w);
    w.A = A;
    w.B = B;
    w.d = d;
    w.a = a;
    size_t na = A->n_nodes, nb = B->n_nodes;
    w.kept_a = calloc(na ? na : 1, 1);
    w.kept_b = calloc(nb ? nb : 1, 1);
    w.rem_of = calloc(na ? na : 1, sizeof *w.rem_of);
    w.add_of = calloc(nb ? nb : 1, sizeof *w.add_of);
    int rc = -1;
    if (!w.kept_a || !w.kept_b || !w.rem_of || !w.add_of) goto done;
    d->nodes_from = na;
    d->nodes_to = nb;
    if (match_nodes(&w) || list_changes(&w)) goto done;
    w.up = calloc(d->n_added ? d->n_added : 1, sizeof *w.up);
    w.stack = calloc(na ? na : 1, sizeof *w.stack);
    w.taken = calloc(na ? na : 1, 1);
    if (!w.up || !w.stack || !w.taken) goto done;
    group_added(&w);
    for (size_t g = 0; g < d->n_added; g++)
        if (root_of(w.up, g) == g && record_replacements(&w, g)) goto done;
    rc = 0;
done:
    onp_strmap_free(&w.keys);
    onp_strmap_free(&w.prod_a);
    onp_strmap_free(&w.prod_b);
    free(w.kept_a);
    free(w.kept_b);
    free(w.rem_of);
    free(w.add_of);
    free(w.up);
    free(w.stack);
    free(w.taken);
    return rc;
}

int onp_graph_diff_files(const char *from_path, const char *to_path, onp_graph_diff **out,
                         onp_error *e)
{
    *out = NULL;
    onp_model *ma = NULL, *mb = NULL;
    if (onp_model_open(from_path, &ma, e)) return -1;
    if (onp_model_open(to_path, &mb, e)) {
        onp_model_close(ma);
        return -1;
    }
    onp_graph_diff *d = calloc(1, sizeof *d);
    onp_arena *a = calloc(1, sizeof *a);
    int rc = -1;
    if (d && a) {
        d->mem_ = a;
        rc = diff_graphs(onp_model_graph(ma), onp_model_graph(mb), d, a);
    } else {
        free(a);
    }
    onp_model_close(ma);
    onp_model_close(mb);
    if (rc) {
        onp_graph_diff_free(d);
        return onp_error_set(e, ONP_ERR_NOMEM, to_path, NULL, -1, "out of memory");
    }
    *out = d;
    return 0;
}
