/*
 * chainmatch.c — a stage's first divergent value (chain.h,
 * onp_chain_match).  The two graphs' values are paired two ways:
 *
 *   by name   the values both graphs compute under one name (ONNX Runtime's
 *             optimizer keeps the name of the value a fused group ends in;
 *             a float16 conversion and QDQ quantization keep every node's
 *             output name);
 *   by value  a stage value the export does not name (a transform renamed
 *             it: the transformer optimizer's EmbedLayerNormalization
 *             writes a value of its own) is paired with the export value,
 *             among those the stage does not name, of the same shape on the
 *             fixture, computed from the export counterparts of its
 *             producer's matched inputs and feeding those of its consumers'
 *             matched outputs (structure), whose Pearson correlation with it
 *             is highest and at least MATCH_MIN_CORR (value).
 *
 * Every such value is exposed as an output of its graph, one fixture run
 * through both, and the pairs compared in the stage's node order.  The
 * first divergent value's stage producer is mapped onto the export as a
 * group: the export nodes from its outputs' counterparts back to values
 * paired in both graphs (a fused node stands for the nodes it replaced).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/chain.h"
#include "onnxparity/dtype.h"

/* An export value at least this large is a sentinel, not a number to
 * compare at a precision (an attention mask's torch.finfo(float32).min,
 * which a float16 conversion clamps): left out of the error, the scale and
 * the SQNR. */
#define MATCH_SENTINEL 1e30

/* The SQNR a drop counts from at most: float32's resolution, 20 log10 2^24
 * (an exact value, SQNR inf, is as good as float32 holds). */
#define MATCH_SQNR_CAP 144.49

/* At most this many values are exposed per graph (both sessions hold them
 * all for one fixture). */
#define MATCH_MAX_VALUES 8192

/* A renamed value is paired by value only with an export value that
 * correlates at least this well with it: a value a planted fault or a
 * precision changed still correlates with its counterpart (a scaled value
 * exactly), one of another computation does not. */
#define MATCH_MIN_CORR 0.9

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int is_float(int32_t dt)
{
    const onp_dtype_desc *d = onp_dtype_info(dt);
    return d && d->kind == ONP_KIND_FLOAT;
}

/* p's numbers: stage tensor s against export tensor o. */
static int measure(const onp_tensor *o, const onp_tensor *s, onp_chain_point *p)
{
    if (!is_float(o->dtype) || !is_float(s->dtype) || o->count != s->count || o->count == 0)
        return 0;
    double gap = 0, scale = 0, se = 0, ss = 0;
    int64_t bad = 0, fin = 0;
    for (int64_t i = 0; i < o->count; i++) {
        double a = onp_tensor_get_f64(o, i), b = onp_tensor_get_f64(s, i);
        if (isfinite(a) && fabs(a) >= MATCH_SENTINEL) continue;
        int fa = isfinite(a), fb = isfinite(b);
        if (fa && fb) {
            double d = fabs(a - b);
            if (d > gap) gap = d;
            se += d * d;
            ss += a * a;
            fin++;
        } else if (fa != fb || (isnan(a) != isnan(b)) || (!isnan(a) && a != b)) {
            bad++;
        }
        if (fa && fabs(a) > scale) scale = fabs(a);
    }
    p->max_abs = gap;
    p->scale_max = scale;
    p->nonfinite = bad;
    p->rel_err = bad ? INFINITY : scale > 0 ? gap / scale : gap > 0 ? INFINITY : 0;
    p->sqnr_db = bad || (se > 0 && ss == 0) ? -INFINITY : se > 0 ? 10 * log10(ss / se) : INFINITY;
    (void)fin;
    p->drop_db = NAN;
    return 1;
}

static void name_point(onp_chain_point *p, const char *value, const char *orig_value, int by_value,
                       double corr, const onp_graph *sg, const onp_graph *og)
{
    snprintf(p->value, sizeof p->value, "%s", value);
    snprintf(p->orig_value, sizeof p->orig_value, "%s", orig_value);
    p->by_value = by_value;
    p->corr = by_value ? corr : NAN;
    const onp_node *n = onp_graph_producer(sg, value, NULL);
    snprintf(p->node, sizeof p->node, "%s", n ? n->name : "");
    snprintf(p->op_type, sizeof p->op_type, "%s", n ? n->op_type : "");
    n = onp_graph_producer(og, orig_value, NULL);
    snprintf(p->orig_node, sizeof p->orig_node, "%s", n ? n->name : "");
    snprintf(p->orig_op_type, sizeof p->orig_op_type, "%s", n ? n->op_type : "");
}

// --- a graph's values by name -------------------------------------------------------

typedef struct vref {
    const char *name;
    size_t node; /* its producer */
} vref;

typedef struct gidx {
    const onp_graph *g;
    vref *v; /* [n], sorted by name */
    size_t n;
} gidx;

static int cmp_vref(const void *a, const void *b)
{
    return strcmp(((const vref *)a)->name, ((const vref *)b)->name);
}

static int gidx_build(gidx *x, const onp_graph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_nodes; i++) n += g->nodes[i].n_outputs;
    x->g = g;
    x->n = 0;
    x->v = malloc((n ? n : 1) * sizeof *x->v);
    if (!x->v) return -1;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_outputs; k++)
            if (g->nodes[i].outputs[k][0]) x->v[x->n++] = (vref){g->nodes[i].outputs[k], i};
    qsort(x->v, x->n, sizeof *x->v, cmp_vref);
    return 0;
}

/* The index of the node that computes `name`; -1 for a graph input, an
 * initializer or an unknown name. */
static long producer_of(const gidx *x, const char *name)
{
    vref key = {name, 0};
    const vref *r = bsearch(&key, x->v, x->n, sizeof *x->v, cmp_vref);
    return r ? (long)r->node : -1;
}

/* A sorted set of names (borrowed). */
typedef struct nameset {
    const char **v;
    size_t n;
} nameset;

static int in_set(const nameset *s, const char *name)
{
    return s && s->n && bsearch(&name, s->v, s->n, sizeof *s->v, cmp_str) != NULL;
}

/* mark[i] = 1 for every node `name` depends on, its producer included; a
 * value in `stop` is not entered past (the start is).  stack: room for
 * every node. */
static void ancestors(const gidx *x, const char *name, const nameset *stop, unsigned char *mark,
                      size_t *stack)
{
    memset(mark, 0, x->g->n_nodes ? x->g->n_nodes : 1);
    long p = producer_of(x, name);
    if (p < 0) return;
    size_t top = 0;
    mark[p] = 1;
    stack[top++] = (size_t)p;
    while (top) {
        const onp_node *nd = &x->g->nodes[stack[--top]];
        for (size_t k = 0; k < nd->n_inputs; k++) {
            if (!nd->inputs[k][0] || in_set(stop, nd->inputs[k])) continue;
            long q = producer_of(x, nd->inputs[k]);
            if (q >= 0 && !mark[q]) {
                mark[q] = 1;
                stack[top++] = (size_t)q;
            }
        }
    }
}

/* Pearson correlation of stage tensor s with export tensor o over the
 * elements finite on both sides (export sentinels left out); NaN for a
 * constant side, a different shape or a non-float tensor. */
static double pearson(const onp_tensor *o, const onp_tensor *s)
{
    if (!is_float(o->dtype) || !is_float(s->dtype) || o->rank != s->rank || o->count != s->count ||
        o->count < 2)
        return NAN;
    for (int k = 0; k < o->rank; k++)
        if (o->dims[k] != s->dims[k]) return NAN;
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, n = 0;
    for (int64_t i = 0; i < o->count; i++) {
        double a = onp_tensor_get_f64(o, i), b = onp_tensor_get_f64(s, i);
        if (!isfinite(a) || !isfinite(b) || fabs(a) >= MATCH_SENTINEL) continue;
        sa += a, sb += b, saa += a * a, sbb += b * b, sab += a * b, n++;
    }
    if (n < 2) return NAN;
    double va = saa - sa * sa / n, vb = sbb - sb * sb / n, cab = sab - sa * sb / n;
    if (!(va > 0) || !(vb > 0)) return NAN;
    return cab / sqrt(va * vb);
}

/* Run fixture f's inputs through an instrumented copy of m (names
 * exposed); out[n] filled.  0, or -1 with e. */
static int run_exposed(onp_ort *ort, const onp_session_opts *so, const onp_model *m,
                       const char *label, const char *const *names, size_t n, const onp_tensor *in,
                       size_t n_in, onp_tensor *out, onp_error *e)
{
    onp_buf buf;
    onp_buf_init(&buf, 0);
    if (onp_model_add_outputs(m, names, n, &buf, e)) {
        onp_buf_free(&buf);
        return -1;
    }
    onp_session *s = NULL;
    int rc = onp_session_open_bytes(ort, buf.p, buf.n, label, so, &s, e);
    onp_buf_free(&buf);
    if (rc) return -1;
    rc = onp_session_run(s, in, n_in, names, n, out, e);
    onp_session_close(s);
    return rc;
}

/* The value the rest of a quantized graph reads for `v`: the output of the
 * DequantizeLinear after the QuantizeLinear that is v's consumer (QDQ
 * format), else v itself.  A QDQ quantizer drops a Relu after a Conv (the
 * activation's uint8 range clamps it) and gives the Conv the Relu's output
 * name: the value named alike is the Conv's before the clamp, the value
 * read downstream is the clamped one. */
static const char *quantized_view(const onp_graph *g, const char *v)
{
    const char *q = NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onp_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_inputs; k++) {
            if (strcmp(n->inputs[k], v)) continue;
            if (strcmp(n->op_type, "QuantizeLinear") || k || q || !n->n_outputs) return v;
            q = n->outputs[0];
        }
    }
    for (size_t i = 0; q && i < g->n_nodes; i++) {
        const onp_node *n = &g->nodes[i];
        if (!strcmp(n->op_type, "DequantizeLinear") && n->n_inputs && n->n_outputs &&
            !strcmp(n->inputs[0], q))
            return n->outputs[0];
    }
    return v;
}

/* A stage value the export does not name is matched by value unless a
 * transform's plumbing made it: a quantizer's QuantizeLinear /
 * DequantizeLinear (their values are compared through quantized_view), a
 * converter's Cast. */
static int renamed_candidate(const onp_node *n)
{
    static const char *const plumbing[] = {"QuantizeLinear", "DequantizeLinear",
                                           "DynamicQuantizeLinear", "Cast"};
    if (!n) return 0;
    for (size_t k = 0; k < sizeof plumbing / sizeof *plumbing; k++)
        if (!strcmp(n->op_type, plumbing[k])) return 0;
    return 1;
}

/* One pair of values: stage exposure si against export exposure ei. */
typedef struct vpair {
    size_t si, ei;
    size_t pos; /* the stage value's place in the stage's node order */
    int by_value;
    double corr;
} vpair;

static int cmp_pair_pos(const void *a, const void *b)
{
    size_t x = ((const vpair *)a)->pos, y = ((const vpair *)b)->pos;
    return x < y ? -1 : x > y;
}

/* Everything one match holds. */
typedef struct matcher {
    const onp_graph *sg, *og;
    gidx sx, ox;
    const char **sname, **ename; /* exposures, [ns], [ne] */
    const char **sorig;          /* sname's value before quantized_view, [ns] */
    size_t ns, ne, n_common;     /* the first n_common of both lists are the name pairs */
    size_t *spos;                /* [ns]: place in the stage's node order */
    onp_tensor *st, *ot;         /* [ns], [ne] */
    vpair *pairs;                /* [n_pairs], then sorted by pos */
    size_t n_pairs;
    unsigned char *mark, *tmp, *claimed; /* [og nodes], [og nodes], [ne] */
    size_t *stack;
} matcher;

/* The export counterpart of stage value v among the pairs so far, or NULL. */
static const char *counterpart(const matcher *m, const char *v)
{
    for (size_t i = 0; i < m->n_pairs; i++)
        if (!strcmp(m->sorig[m->pairs[i].si], v)) return m->ename[m->pairs[i].ei];
    return NULL;
}

/* Pair renamed stage value j (exposure index) by structure and value. */
static void match_renamed(matcher *m, size_t j)
{
    const onp_tensor *sv = &m->st[j];
    if (!is_float(sv->dtype) || sv->count < 2) return;
    long sp = producer_of(&m->sx, m->sname[j]);
    if (sp < 0) return;
    const onp_node *S = &m->sg->nodes[sp];
    size_t nog = m->og->n_nodes;
    /* down: the export nodes every matched output of a consumer depends on */
    int has_down = 0;
    for (size_t i = 0; i < m->sg->n_nodes; i++) {
        const onp_node *T = &m->sg->nodes[i];
        int reads = 0;
        for (size_t k = 0; k < T->n_inputs && !reads; k++)
            reads = !strcmp(T->inputs[k], m->sname[j]);
        for (size_t k = 0; reads && k < T->n_outputs; k++) {
            const char *c = counterpart(m, T->outputs[k]);
            if (!c || producer_of(&m->ox, c) < 0) continue;
            ancestors(&m->ox, c, NULL, m->tmp, m->stack);
            if (!has_down) memcpy(m->mark, m->tmp, nog ? nog : 1);
            for (size_t q = 0; has_down && q < nog; q++) m->mark[q] &= m->tmp[q];
            has_down = 1;
        }
    }
    double best = NAN;
    size_t bi = 0;
    for (size_t e = m->n_common; e < m->ne; e++) {
        if (m->claimed[e]) continue;
        long ep = producer_of(&m->ox, m->ename[e]);
        if (ep < 0 || (has_down && !m->mark[ep])) continue;
        double r = pearson(&m->ot[e], sv);
        if (!(r >= MATCH_MIN_CORR) || (!isnan(best) && r <= best)) continue;
        /* up: computed from the export counterparts of S's matched inputs */
        ancestors(&m->ox, m->ename[e], NULL, m->tmp, m->stack);
        int ok = 1;
        for (size_t k = 0; ok && k < S->n_inputs; k++) {
            const char *c = S->inputs[k][0] ? counterpart(m, S->inputs[k]) : NULL;
            long cp = c ? producer_of(&m->ox, c) : -1;
            if (cp >= 0 && (!m->tmp[cp] || cp == ep)) ok = 0;
        }
        if (!ok) continue;
        best = r;
        bi = e;
    }
    if (isnan(best)) return;
    m->claimed[bi] = 1;
    m->pairs[m->n_pairs++] = (vpair){j, bi, m->spos[j], 1, best};
}

/* d->group: the export nodes the first divergent value's stage producer
 * stands for (chain.h). */
static void map_group(matcher *m, onp_chain_divergence *d)
{
    const onp_node *S = onp_graph_producer(m->sg, d->first.value, NULL);
    size_t nog = m->og->n_nodes;
    const char **paired = malloc((m->n_pairs ? m->n_pairs : 1) * sizeof *paired);
    unsigned char *any = calloc(nog ? nog : 1, 1);
    if (!S || !paired || !any) {
        free(paired);
        free(any);
        return;
    }
    for (size_t i = 0; i < m->n_pairs; i++) paired[i] = m->ename[m->pairs[i].ei];
    qsort(paired, m->n_pairs, sizeof *paired, cmp_str);
    nameset stop = {paired, m->n_pairs};
    for (size_t k = 0; k < S->n_outputs; k++) {
        const char *c = S->outputs[k][0] ? counterpart(m, S->outputs[k]) : NULL;
        if (!c) continue;
        ancestors(&m->ox, c, &stop, m->tmp, m->stack);
        for (size_t q = 0; q < nog; q++) any[q] |= m->tmp[q];
    }
    size_t n = 0;
    for (size_t q = 0; q < nog; q++) n += any[q];
    if (n > ONP_CHAIN_GROUP_MAX) n = ONP_CHAIN_GROUP_MAX;
    d->group = n ? calloc(n, sizeof *d->group) : NULL;
    for (size_t q = 0; d->group && q < nog && d->n_group < n; q++) {
        if (!any[q]) continue;
        onp_chain_group_node *g = &d->group[d->n_group++];
        snprintf(g->node, sizeof g->node, "%s", m->og->nodes[q].name);
        snprintf(g->op_type, sizeof g->op_type, "%s", m->og->nodes[q].op_type);
        snprintf(g->value, sizeof g->value, "%s",
                 m->og->nodes[q].n_outputs ? m->og->nodes[q].outputs[0] : "");
    }
    free(paired);
    free(any);
}

/* The exposures of both graphs: first the values named alike (stage order;
 * the stage's through quantized_view), then the stage's values the export
 * does not name, then the export's values the stage does not name.  0 or
 * -1 (no memory). */
static int expose_lists(matcher *m, const onp_model *om, const onp_model *sm)
{
    size_t no = 0, ns = 0;
    const char **ov = onp_model_node_values(om, &no);
    const char **sv = onp_model_node_values(sm, &ns);
    const char **so = malloc((no ? no : 1) * sizeof *so);
    const char **ss = malloc((ns ? ns : 1) * sizeof *ss);
    size_t cap_s = ns + 1, cap_e = no + ns + 1;
    m->sname = malloc(cap_s * sizeof *m->sname);
    m->sorig = malloc(cap_s * sizeof *m->sorig);
    m->spos = malloc(cap_s * sizeof *m->spos);
    m->ename = malloc(cap_e * sizeof *m->ename);
    if (!ov || !sv || !so || !ss || !m->sname || !m->sorig || !m->spos || !m->ename) {
        free(so);
        free(ss);
        return -1;
    }
    memcpy(so, ov, no * sizeof *so);
    qsort(so, no, sizeof *so, cmp_str);
    memcpy(ss, sv, ns * sizeof *ss);
    qsort(ss, ns, sizeof *ss, cmp_str);
    nameset os = {so, no}, sset = {ss, ns};
    for (size_t i = 0; i < ns && m->ns < MATCH_MAX_VALUES; i++)
        if (sv[i][0] && in_set(&os, sv[i])) {
            m->sorig[m->ns] = sv[i];
            m->sname[m->ns] = quantized_view(m->sg, sv[i]);
            m->ename[m->ne++] = sv[i];
            m->spos[m->ns++] = i;
        }
    m->n_common = m->ns;
    for (size_t i = 0; i < ns && m->ns < MATCH_MAX_VALUES; i++)
        if (sv[i][0] && !in_set(&os, sv[i]) &&
            renamed_candidate(onp_graph_producer(m->sg, sv[i], NULL))) {
            int viewed = 0; /* a quantized_view target is exposed already */
            for (size_t k = 0; k < m->n_common && !viewed; k++) viewed = m->sname[k] == sv[i];
            if (viewed) continue;
            m->sorig[m->ns] = m->sname[m->ns] = sv[i];
            m->spos[m->ns++] = i;
        }
    for (size_t i = 0; i < no && m->ne < MATCH_MAX_VALUES; i++)
        if (ov[i][0] && !in_set(&sset, ov[i])) m->ename[m->ne++] = ov[i];
    free(so);
    free(ss);
    return 0;
}

/* The worst compared input of the first point's producer: in the stage,
 * else (a quantized node reads DequantizeLinear outputs) in the export. */
static void worst_input(const matcher *m, const onp_chain_point *pts, const int *ok,
                        onp_chain_divergence *d)
{
    for (int side = 0; side < 2 && !d->input.value[0]; side++) {
        const onp_node *p = side ? onp_graph_producer(m->og, d->first.orig_value, NULL)
                                 : onp_graph_producer(m->sg, d->first.value, NULL);
        for (size_t k = 0; p && k < p->n_inputs; k++)
            for (size_t i = 0; i < m->n_pairs; i++) {
                const vpair *q = &m->pairs[i];
                const char *nm = side ? m->ename[q->ei] : m->sorig[q->si];
                if (ok[i] && !strcmp(nm, p->inputs[k]) &&
                    (!d->input.value[0] || pts[i].rel_err > d->input.rel_err)) {
                    d->input = pts[i];
                    name_point(&d->input, m->sorig[q->si], m->ename[q->ei], q->by_value, q->corr,
                               m->sg, m->og);
                }
            }
    }
}

/* Every compared point into d->points, named, with its drop: the lowest
 * SQNR of the compared inputs of its producer in the export minus its own. */
static void keep_all(const matcher *m, const onp_chain_point *pts, const int *ok,
                     onp_chain_divergence *d)
{
    size_t n = m->n_pairs;
    d->points = calloc(n ? n : 1, sizeof *d->points);
    if (!d->points) return;
    for (size_t i = 0; i < n; i++) {
        if (!ok[i]) continue;
        const vpair *q = &m->pairs[i];
        onp_chain_point *p = &d->points[d->n_points++];
        *p = pts[i];
        name_point(p, m->sorig[q->si], m->ename[q->ei], q->by_value, q->corr, m->sg, m->og);
        /* the export's producer: its inputs keep their names in the stage,
         * where a quantized node reads DequantizeLinear outputs instead */
        const onp_node *pr = onp_graph_producer(m->og, m->ename[q->ei], NULL);
        double low = INFINITY;
        int any = 0;
        for (size_t k = 0; pr && k < pr->n_inputs; k++)
            for (size_t j = 0; j < n; j++)
                if (ok[j] && j != i && !strcmp(m->ename[m->pairs[j].ei], pr->inputs[k])) {
                    any = 1;
                    if (pts[j].sqnr_db < low) low = pts[j].sqnr_db;
                }
        p->drop_db = any ? fmin(low, MATCH_SQNR_CAP) - fmin(p->sqnr_db, MATCH_SQNR_CAP) : NAN;
    }
}

static void matcher_free(matcher *m)
{
    for (size_t i = 0; m->st && i < m->ns; i++) onp_tensor_release(&m->st[i]);
    for (size_t i = 0; m->ot && i < m->ne; i++) onp_tensor_release(&m->ot[i]);
    free(m->st);
    free(m->ot);
    free(m->sx.v);
    free(m->ox.v);
    free(m->sname);
    free(m->sorig);
    free(m->ename);
    free(m->spos);
    free(m->pairs);
    free(m->mark);
    free(m->tmp);
    free(m->claimed);
    free(m->stack);
}

void onp_chain_match(onp_ort *ort, const onp_session_opts *so, const char *orig_model,
                     const char *stage_model, const onp_fixture *f, double limit, int keep_points,
                     onp_chain_divergence *d)
{
    memset(d, 0, sizeof *d);
    d->fixture = f->index;
    d->limit = limit;
    onp_model *om = NULL, *sm = NULL;
    onp_error e;
    onp_error_clear(&e);
    matcher m;
    memset(&m, 0, sizeof m);
    size_t n_in = f->n_inputs;
    onp_tensor *in = calloc(n_in ? n_in : 1, sizeof *in);
    onp_chain_point *pts = NULL;
    int *ok = NULL;
    if (!in || onp_model_open(orig_model, &om, &e) || onp_model_open(stage_model, &sm, &e))
        goto fail;
    if (onp_model_has_external(om) || onp_model_has_external(sm)) {
        snprintf(d->note, sizeof d->note, "a model with external data is not matched");
        goto out;
    }
    m.sg = onp_model_graph(sm);
    m.og = onp_model_graph(om);
    size_t nog = m.og->n_nodes ? m.og->n_nodes : 1;
    if (gidx_build(&m.sx, m.sg) || gidx_build(&m.ox, m.og) || expose_lists(&m, om, sm)) goto nomem;
    d->n_common = m.n_common;
    if (!m.n_common && m.ns == 0) {
        snprintf(d->note, sizeof d->note, "no value is named alike in both graphs");
        goto out;
    }
    m.st = calloc(m.ns ? m.ns : 1, sizeof *m.st);
    m.ot = calloc(m.ne ? m.ne : 1, sizeof *m.ot);
    m.pairs = calloc(m.ns ? m.ns : 1, sizeof *m.pairs);
    m.claimed = calloc(m.ne ? m.ne : 1, 1);
    m.mark = malloc(nog);
    m.tmp = malloc(nog);
    m.stack = malloc(nog * sizeof *m.stack);
    pts = calloc(m.ns ? m.ns : 1, sizeof *pts);
    ok = calloc(m.ns ? m.ns : 1, sizeof *ok);
    if (!m.st || !m.ot || !m.pairs || !m.claimed || !m.mark || !m.tmp || !m.stack || !pts || !ok)
        goto nomem;
    for (size_t k = 0; k < n_in; k++) {
        if (onp_tfile_read(f->inputs[k], NULL, &in[k], &e)) goto fail;
        onp_tensor_set_name(&in[k], NULL, &e);
    }
    if (run_exposed(ort, so, om, orig_model, m.ename, m.ne, in, n_in, m.ot, &e) ||
        run_exposed(ort, so, sm, stage_model, m.sname, m.ns, in, n_in, m.st, &e))
        goto fail;
    d->ran = 1;
    for (size_t i = 0; i < m.n_common; i++) m.pairs[m.n_pairs++] = (vpair){i, i, m.spos[i], 0, NAN};
    for (size_t j = m.n_common; j < m.ns; j++) match_renamed(&m, j);
    d->n_by_value = m.n_pairs - m.n_common;
    qsort(m.pairs, m.n_pairs, sizeof *m.pairs, cmp_pair_pos);
    for (size_t i = 0; i < m.n_pairs; i++) {
        const vpair *q = &m.pairs[i];
        ok[i] = measure(&m.ot[q->ei], &m.st[q->si], &pts[i]);
        if (!ok[i]) continue;
        d->n_compared++;
        if (!d->found && pts[i].rel_err > limit) {
            d->found = 1;
            d->first = pts[i];
            name_point(&d->first, m.sorig[q->si], m.ename[q->ei], q->by_value, q->corr, m.sg, m.og);
        }
        if (!d->worst.value[0] || pts[i].rel_err > d->worst.rel_err) {
            d->worst = pts[i];
            name_point(&d->worst, m.sorig[q->si], m.ename[q->ei], q->by_value, q->corr, m.sg, m.og);
        }
    }
    if (keep_points) keep_all(&m, pts, ok, d);
    if (d->found) {
        worst_input(&m, pts, ok, d);
        map_group(&m, d);
    } else {
        snprintf(
            d->note, sizeof d->note,
            "no value matched in both graphs (by name or by value) leaves the limit: the error "
            "is in values a transform renamed and no export value matched");
    }
    goto out;
nomem:
    onp_error_set(&e, ONP_ERR_NOMEM, NULL, NULL, -1, "chain match: out of memory");
fail:
    onp_error_format(&e, d->note, sizeof d->note);
out:
    for (size_t k = 0; k < n_in; k++) onp_tensor_release(&in[k]);
    matcher_free(&m);
    free(pts);
    free(ok);
    free(in);
    onp_model_close(om);
    onp_model_close(sm);
}
