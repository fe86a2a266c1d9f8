/*
 * lint.c — onp_lint_run(): read the manifest, walk the model (every node of
 * the main graph and of its subgraphs, in order), hand each node to the
 * checks of registry.c that look at its operator, collect the findings and
 * sort them.  Also the finding store (lint_emit) and onp_lint_result_free.
 *
 * Depends on the model view only; never prints.  Nodes of model-local
 * functions are not linted (exporters from torch 1.13 write none).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint/lint_int.h"
#include "onnxparity/utf8.h"

/* Nesting cap for subgraphs (the model reader caps message depth too). */
#define LINT_MAX_DEPTH 64

// --- the finding store ----------------------------------------------------------

/* Findings carry names and text from the model and parity.json into JSON,
 * SARIF and HTML, which must be UTF-8: each byte that does not start a
 * valid sequence becomes '?', in place. */
static void utf8_scrub(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        unsigned long cp;
        size_t k = onp_utf8_decode(p, &cp);
        if (k)
            p += k;
        else
            *p++ = '?';
    }
}

/* A finding's strings live in one block: message, graph, name, op_type,
 * file, NUL-separated; `message` points at its start and frees it. */
void lint_emit(lint_ctx *c, lint_rule_ix ix, const onp_lint_location *loc, uint64_t order,
               const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    onp_lint_result *r = c->r;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        onp_lint_finding *p = realloc(r->findings, cap * sizeof *p);
        if (!p) {
            c->oom = 1;
            return;
        }
        r->findings = p;
        r->cap = cap;
    }
    const char *parts[5] = {msg, loc->graph, loc->name, loc->op_type, loc->file};
    size_t lens[5], total = 0;
    for (int i = 0; i < 5; i++) {
        if (!parts[i]) parts[i] = "";
        lens[i] = strlen(parts[i]);
        total += lens[i] + 1;
    }
    char *block = malloc(total), *p = block;
    if (!block) {
        c->oom = 1;
        return;
    }
    char *at[5];
    for (int i = 0; i < 5; i++) {
        memcpy(p, parts[i], lens[i] + 1);
        utf8_scrub(p);
        at[i] = p;
        p += lens[i] + 1;
    }
    onp_lint_finding *f = &r->findings[r->n++];
    f->rule = lint_rule(ix);
    f->loc = *loc;
    f->message = at[0];
    f->loc.graph = at[1];
    f->loc.name = at[2];
    f->loc.op_type = at[3];
    f->loc.file = at[4];
    f->order = order;
}

void lint_emit_node(lint_ctx *c, lint_rule_ix ix, const lint_node *ln, const char *fmt, ...)
{
    char msg[1536], op[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const onp_node *n = ln->n;
    if (n->domain[0] && strcmp(n->domain, "ai.onnx"))
        snprintf(op, sizeof op, "%s::%s", n->domain, n->op_type);
    else
        snprintf(op, sizeof op, "%s", n->op_type);
    onp_lint_location loc = {ONP_LINT_LOC_NODE,  ln->s->path, n->name, op,
                             (int64_t)ln->index, "",          -1};
    lint_emit(c, ix, &loc, LINT_ORDER(LINT_SEC_NODE, ln->seq), "%s", msg);
}

int lint_once(lint_ctx *c, lint_rule_ix ix, const lint_node *ln,
              int (*qualifies)(const lint_scope *s, const onp_node *n), size_t *more)
{
    const char *op = ln->n->op_type;
    *more = 0;
    if (onp_strmap_get(&c->once[ix], op, NULL)) return 0;
    if (onp_strmap_put(&c->once[ix], op, 1)) {
        c->oom = 1;
        return 0;
    }
    const onp_graph *g = ln->s->g;
    for (size_t i = ln->index + 1; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i].op_type, op) && qualifies(ln->s, &g->nodes[i])) ++*more;
    return 1;
}

void onp_lint_result_free(onp_lint_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) free(r->findings[i].message);
    free(r->findings);
    memset(r, 0, sizeof *r);
}

// --- sorting ----------------------------------------------------------------------

static int before(const onp_lint_finding *a, const onp_lint_finding *b)
{
    if (a->order != b->order) return a->order < b->order;
    return strcmp(a->rule->id, b->rule->id) < 0;
}

/* Stable merge sort (equal keys keep the order the checks emitted them). */
static int sort_findings(onp_lint_finding *f, size_t n)
{
    if (n < 2) return 0;
    onp_lint_finding *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return -1;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = before(&f[j], &f[i]) ? f[j++] : f[i++];
            while (i < mid) tmp[k++] = f[i++];
            while (j < hi) tmp[k++] = f[j++];
        }
        memcpy(f, tmp, n * sizeof *f);
    }
    free(tmp);
    return 0;
}

// --- the walk ---------------------------------------------------------------------

static void check_node(lint_ctx *c, const lint_node *ln)
{
    int dflt = !ln->n->domain[0] || !strcmp(ln->n->domain, "ai.onnx");
    for (size_t k = 0; k < lint_n_node_checks; k++) {
        const lint_node_check *ck = &lint_node_checks[k];
        if (!ck->ops || (dflt && lint_in_list(ck->ops, ln->n->op_type))) ck->fn(c, ln);
    }
}

static void walk(lint_ctx *c, const lint_scope *s, uint64_t *seq, int depth)
{
    const onp_graph *g = s->g;
    for (size_t i = 0; i < g->n_nodes && !c->oom; i++) {
        const onp_node *n = &g->nodes[i];
        lint_node ln = {s, n, i, (*seq)++};
        check_node(c, &ln);
        for (size_t a = 0; a < n->n_attrs && !c->oom; a++) {
            const onp_attr *at = &n->attrs[a];
            size_t ng = at->g ? 1 : at->n_graphs;
            for (size_t k = 0; k < ng && !c->oom; k++) {
                const onp_graph *sub = at->g ? at->g : at->graphs[k];
                if (!sub || depth + 1 >= LINT_MAX_DEPTH) continue;
                char path[1024], label[600];
                if (n->name[0])
                    snprintf(label, sizeof label, "%s", n->name);
                else
                    snprintf(label, sizeof label, "%s#%zu", n->op_type, i);
                if (at->g)
                    snprintf(path, sizeof path, "%s%s%s/%s", s->path, s->path[0] ? "/" : "", label,
                             at->name);
                else
                    snprintf(path, sizeof path, "%s%s%s/%s[%zu]", s->path, s->path[0] ? "/" : "",
                             label, at->name, k);
                lint_scope sub_s;
                if (lint_scope_init(&sub_s, sub, s, path)) {
                    c->oom = 1;
                    break;
                }
                walk(c, &sub_s, seq, depth + 1);
                lint_scope_release(&sub_s);
            }
        }
    }
}

/* Export-time sizes the graph itself declares: every static dim 0. */
static void graph_sizes(lint_ctx *c, const lint_scope *main)
{
    const onp_graph *g = main->g;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const onp_value_info *vi = &g->inputs[i];
        if (onp_strmap_get(&main->init, vi->name, NULL)) continue;
        const onp_type *t = &vi->type;
        if (t->kind != ONP_TYPE_TENSOR || !t->has_shape || !t->rank) continue;
        const onp_dim *d = &t->dims[0];
        if (d->value > 1 && !(d->param && d->param[0])) lint_size_add(c, vi->name, 0, d->value, 0);
    }
}

void lint_size_add(lint_ctx *c, const char *input, size_t dim, int64_t size, int symbolic)
{
    for (size_t i = 0; i < c->n_sizes; i++)
        if (c->sizes[i].dim == dim && !strcmp(c->sizes[i].input, input)) return;
    if (c->n_sizes == c->cap_sizes) {
        size_t cap = c->cap_sizes ? 2 * c->cap_sizes : 8;
        lint_size *p = realloc(c->sizes, cap * sizeof *p);
        if (!p) {
            c->oom = 1;
            return;
        }
        c->sizes = p;
        c->cap_sizes = cap;
    }
    c->sizes[c->n_sizes++] = (lint_size){input, dim, size, symbolic};
}

int onp_lint_run(const onp_model *m, const onp_lint_opts *opts, onp_lint_result *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    lint_ctx c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.r = out;
    c.opset = onp_model_opset(m, "");
    out->opset = c.opset;
    const char *path = onp_model_path(m);
    if (lint_manifest_load(&c, opts, e)) return -1;
    out->manifest_read = c.manifest != NULL;
    lint_scope main_s;
    int rc = lint_scope_init(&main_s, onp_model_graph(m), NULL, "");
    if (rc == 0) {
        graph_sizes(&c, &main_s);
        lint_manifest_sizes(&c, &main_s);
        lint_batchdyn_compute(&c, &main_s);
        for (size_t k = 0; k < lint_n_model_checks && !c.oom; k++)
            lint_model_checks[k](&c, &main_s);
        uint64_t seq = 0;
        if (!c.oom) walk(&c, &main_s, &seq, 0);
        lint_scope_release(&main_s);
    }
    lint_manifest_free(&c);
    onp_strmap_free(&c.batchdyn);
    for (int k = 0; k < R_COUNT; k++) onp_strmap_free(&c.once[k]);
    free(c.sizes);
    if (rc || c.oom || sort_findings(out->findings, out->n)) {
        onp_lint_result_free(out);
        return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory while linting");
    }
    for (size_t i = 0; i < out->n; i++) out->counts[out->findings[i].rule->severity]++;
    return 0;
}

int onp_lint_cause_rank(const onp_lint_finding *f, int numbers_fail, const char *first_divergent)
{
    int err = f->rule->severity == ONP_LINT_ERROR;
    if (f->rule->severity == ONP_LINT_INFO || (!err && !numbers_fail)) return -1;
    if (first_divergent && f->loc.name && !strcmp(f->loc.name, first_divergent)) return 0;
    return err ? (numbers_fail ? 0 : 1) : 2;
}
