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

/* The diff proper, over two open graphs; scratch tables freed here. */
static int diff_graphs(const onp_graph *A, const onp_graph *B, onp_graph_diff *d, onp_arena *a)
{
    onp_strmap keys = {0}, prod_a = {0}, prod_b = {0};
    size_t na = A->n_nodes, nb = B->n_nodes;
    unsigned char *kept_a = calloc(na ? na : 1, 1), *kept_b = calloc(nb ? nb : 1, 1);
    size_t *rem_of = calloc(na ? na : 1, sizeof *rem_of); /* A node -> removed[] + 1, 0 kept */
    size_t *add_of = calloc(nb ? nb : 1, sizeof *add_of); /* B node -> added[] + 1, 0 kept */
    size_t *up = NULL, *stack = NULL;
    unsigned char *taken = NULL;
    int rc = -1;
    if (!kept_a || !kept_b || !rem_of || !add_of) goto done;
    d->nodes_from = na;
    d->nodes_to = nb;
    /* match: a key maps to the first unmatched A node holding it (SSA makes
     * keys of nodes with outputs unique; duplicates fall back to unmatched) */
    for (size_t i = 0; i < na; i++) {
        char *k = node_key(a, &A->nodes[i]);
        if (!k || onp_strmap_put(&keys, k, i)) goto done;
        for (size_t o = 0; o < A->nodes[i].n_outputs; o++)
            if (A->nodes[i].outputs[o][0] && onp_strmap_put(&prod_a, A->nodes[i].outputs[o], i))
                goto done;
    }
    for (size_t j = 0; j < nb; j++) {
        char *k = node_key(a, &B->nodes[j]);
        size_t i;
        if (!k) goto done;
        if (onp_strmap_get(&keys, k, &i) && !kept_a[i]) kept_a[i] = kept_b[j] = 1;
    }
    for (size_t i = 0; i < na; i++) d->n_removed += !kept_a[i];
    for (size_t j = 0; j < nb; j++) d->n_added += !kept_b[j];
    d->removed = onp_arena_array(a, d->n_removed ? d->n_removed : 1, sizeof *d->removed);
    d->added = onp_arena_array(a, d->n_added ? d->n_added : 1, sizeof *d->added);
    if (!d->removed || !d->added) goto done;
    size_t r = 0, ad = 0;
    for (size_t i = 0; i < na; i++)
        if (!kept_a[i]) {
            if (copy_node(a, &A->nodes[i], &d->removed[r])) goto done;
            rem_of[i] = ++r;
            /* folded: every output is now an initializer */
            const onp_node *n = &A->nodes[i];
            int all = n->n_outputs > 0;
            for (size_t o = 0; o < n->n_outputs && all; o++)
                if (!onp_graph_initializer(B, n->outputs[o])) all = 0;
            d->removed[r - 1].folded = all;
        }
    for (size_t j = 0; j < nb; j++)
        if (!kept_b[j]) {
            if (copy_node(a, &B->nodes[j], &d->added[ad])) goto done;
            add_of[j] = ++ad;
            for (size_t o = 0; o < B->nodes[j].n_outputs; o++)
                if (B->nodes[j].outputs[o][0] && onp_strmap_put(&prod_b, B->nodes[j].outputs[o], j))
                    goto done;
        }
    /* groups of added nodes wired to each other */
    up = calloc(d->n_added ? d->n_added : 1, sizeof *up);
    stack = calloc(na ? na : 1, sizeof *stack);
    taken = calloc(na ? na : 1, 1);
    if (!up || !stack || !taken) goto done;
    for (size_t g = 0; g < d->n_added; g++) up[g] = g;
    for (size_t j = 0; j < nb; j++) {
        if (!add_of[j]) continue;
        for (size_t k = 0; k < B->nodes[j].n_inputs; k++) {
            size_t p;
            /* wired through a value the old graph did not have: one
             * rewrite (ReorderInput -> Conv -> ReorderOutput); through an
             * old value: two neighbouring rewrites, kept apart */
            if (!B->nodes[j].inputs[k][0] || !onp_strmap_get(&prod_b, B->nodes[j].inputs[k], &p) ||
                onp_strmap_get(&prod_a, B->nodes[j].inputs[k], NULL))
                continue;
            size_t x = root_of(up, add_of[j] - 1), y = root_of(up, add_of[p] - 1);
            if (x != y) up[x] = y;
        }
    }
    /* number the groups in the new graph's order: a group's number is given
     * at its first member (a union-find root need not be its first member) */
    for (size_t g = 0; g < d->n_added; g++) d->added[g].group = SIZE_MAX;
    for (size_t g = 0; g < d->n_added; g++) {
        size_t root = root_of(up, g);
        if (d->added[root].group == SIZE_MAX) d->added[root].group = d->n_groups++;
    }
    for (size_t g = 0; g < d->n_added; g++) d->added[g].group = d->added[root_of(up, g)].group;
    /* each group: walk back from its outputs through removed producers of
     * A, stopping at the group's own inputs */
    for (size_t g = 0; g < d->n_added; g++) {
        if (root_of(up, g) != g) continue;
        size_t sp = 0, n_taken = 0;
        onp_strmap gin = {0}; /* the values the group reads */
        memset(taken, 0, na);
        for (size_t j = 0; j < nb; j++) {
            if (!add_of[j] || root_of(up, add_of[j] - 1) != g) continue;
            for (size_t q = 0; q < B->nodes[j].n_inputs; q++)
                if (B->nodes[j].inputs[q][0] && onp_strmap_put(&gin, B->nodes[j].inputs[q], 0)) {
                    onp_strmap_free(&gin);
                    goto done;
                }
            for (size_t o = 0; o < B->nodes[j].n_outputs; o++) {
                size_t i;
                if (onp_strmap_get(&prod_a, B->nodes[j].outputs[o], &i) && rem_of[i] && !taken[i]) {
                    taken[i] = 1;
                    stack[sp++] = i;
                }
            }
        }
        while (sp) {
            size_t i = stack[--sp];
            n_taken++;
            const onp_node *n = &A->nodes[i];
            for (size_t k = 0; k < n->n_inputs; k++) {
                const char *v = n->inputs[k];
                size_t p, pj;
                if (!v[0] || !onp_strmap_get(&prod_a, v, &p) || !rem_of[p] || taken[p]) continue;
                /* a value the group reads is its boundary */
                int boundary = onp_strmap_get(&gin, v, NULL);
                /* and so is a value the new graph still computes elsewhere */
                if (!boundary && onp_strmap_get(&prod_b, v, &pj) &&
                    root_of(up, add_of[pj] - 1) != g)
                    boundary = 1;
                if (boundary) continue;
                taken[p] = 1;
                stack[sp++] = p;
            }
        }
        onp_strmap_free(&gin);
        if (!n_taken) continue;
        size_t *list = onp_arena_array(a, n_taken, sizeof *list);
        if (!list) goto done;
        size_t m = 0;
        for (size_t i = 0; i < na; i++)
            if (taken[i]) list[m++] = rem_of[i] - 1;
        for (size_t x = 0; x < d->n_added; x++)
            if (root_of(up, x) == g) {
                d->added[x].replaces = list;
                d->added[x].n_replaces = m;
            }
        /* the group's first added node stands for it */
        size_t first = g;
        for (size_t x = 0; x < d->n_added; x++)
            if (root_of(up, x) == g) {
                first = x;
                break;
            }
        for (size_t q = 0; q < m; q++)
            if (d->removed[list[q]].replaced_by < 0) d->removed[list[q]].replaced_by = (long)first;
    }
    rc = 0;
done:
    onp_strmap_free(&keys);
    onp_strmap_free(&prod_a);
    onp_strmap_free(&prod_b);
    free(kept_a);
    free(kept_b);
    free(rem_of);
    free(add_of);
    free(up);
    free(stack);
    free(taken);
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
