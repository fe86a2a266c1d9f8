/*
 * dataflow.h — what a value of a graph is computed from: the nodes upstream
 * of it, and whether a node reads a name.  A node with subgraphs (an If's
 * branches, a Loop's or Scan's body) reads, besides its inputs, every
 * outer-scope name its subgraphs' nodes read; nesting is followed 64 deep
 * (the parser's limit).  The one data-flow walk of the library: the lint's
 * state rules (is a graph output computed from a mutated buffer?), its use
 * checks, and the causes (is this output computed from that TopK?) ask it.
 * Pure queries over the parsed graph; internal.
 */
#ifndef ONP_MODEL_DATAFLOW_H
#define ONP_MODEL_DATAFLOW_H

#include <stddef.h>

#include "onnxparity/model.h"

/* 1 when node n reads `name`: as one of its inputs, or from a node of one
 * of its subgraphs; else 0 ("" and NULL are read by nobody). */
int onp_node_reads(const onp_node *n, const char *name);

/* Mark in up[g->n_nodes] (the caller zeroes it) every node of g that one
 * of values[0..n-1] is computed from: its producer (the first node that
 * outputs it), and, walked back, the producers of all that each marked node
 * reads.  A graph input or an initializer has no producer and stops the
 * walk.  Linear in the graph's size.  0, or -1 when out of memory (up then
 * partly marked). */
int onp_graph_upstream(const onp_graph *g, const char *const *values, size_t n, unsigned char *up);

#endif
