/*
 * chainmatch.c — a stage's first divergent value (chain.h,
 * onp_chain_match): the values both graphs compute under one name (ONNX
 * Runtime's optimizer keeps the name of the value a fused group ends in; a
 * float16 conversion and QDQ quantization keep every node's output name)
 * exposed as outputs of each graph, one fixture run through both, and the
 * values compared in the stage's node order.  Values renamed by a
 * transform are not matched (docs/chain.md says what that misses).
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

static void name_point(onp_chain_point *p, const char *value, const onp_graph *sg,
                       const onp_graph *og)
{
    snprintf(p->value, sizeof p->value, "%s", value);
    const onp_node *n = onp_graph_producer(sg, value, NULL);
    snprintf(p->node, sizeof p->node, "%s", n ? n->name : "");
    snprintf(p->op_type, sizeof p->op_type, "%s", n ? n->op_type : "");
    n = onp_graph_producer(og, value, NULL);
    snprintf(p->orig_node, sizeof p->orig_node, "%s", n ? n->name : "");
    snprintf(p->orig_op_type, sizeof p->orig_op_type, "%s", n ? n->op_type : "");
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

/* The names stage and export both compute, in the stage's node order. */
static const char **common_values(const onp_model *om, const onp_model *sm, size_t *n_out)
{
    size_t no = 0, ns = 0, n = 0;
    const char **ov = onp_model_node_values(om, &no);
    const char **sv = onp_model_node_values(sm, &ns);
    const char **sorted = malloc((no ? no : 1) * sizeof *sorted);
    const char **common = malloc((ns ? ns : 1) * sizeof *common);
    if (!sorted || !common || !ov || !sv) {
        free(sorted);
        free(common);
        return NULL;
    }
    memcpy(sorted, ov, no * sizeof *sorted);
    qsort(sorted, no, sizeof *sorted, cmp_str);
    for (size_t i = 0; i < ns && n < MATCH_MAX_VALUES; i++)
        if (sv[i][0] && bsearch(&sv[i], sorted, no, sizeof *sorted, cmp_str)) common[n++] = sv[i];
    free(sorted);
    *n_out = n;
    return common;
}

/* The worst compared input of the first point's producer: in the stage,
 * else (a quantized node reads DequantizeLinear outputs) in the export. */
static void worst_input(const onp_graph *sg, const onp_graph *og, const char *const *names,
                        const onp_chain_point *pts, const int *ok, size_t n,
                        onp_chain_divergence *d)
{
    for (int side = 0; side < 2 && !d->input.value[0]; side++) {
        const onp_node *p = onp_graph_producer(side ? og : sg, d->first.value, NULL);
        for (size_t k = 0; p && k < p->n_inputs; k++)
            for (size_t i = 0; i < n; i++)
                if (ok[i] && !strcmp(names[i], p->inputs[k]) &&
                    (!d->input.value[0] || pts[i].rel_err > d->input.rel_err)) {
                    d->input = pts[i];
                    name_point(&d->input, names[i], sg, og);
                }
    }
}

/* Every compared point into d->points, named, with its drop: the lowest
 * SQNR of the compared inputs of its producer in the export minus its own. */
static void keep_all(const onp_graph *sg, const onp_graph *og, const char *const *names,
                     const onp_chain_point *pts, const int *ok, size_t n, onp_chain_divergence *d)
{
    d->points = calloc(n ? n : 1, sizeof *d->points);
    if (!d->points) return;
    for (size_t i = 0; i < n; i++) {
        if (!ok[i]) continue;
        onp_chain_point *p = &d->points[d->n_points++];
        *p = pts[i];
        name_point(p, names[i], sg, og);
        /* the export's producer: its inputs keep their names in the stage,
         * where a quantized node reads DequantizeLinear outputs instead */
        const onp_node *pr = onp_graph_producer(og, names[i], NULL);
        double low = INFINITY;
        int any = 0;
        for (size_t k = 0; pr && k < pr->n_inputs; k++)
            for (size_t j = 0; j < n; j++)
                if (ok[j] && j != i && !strcmp(names[j], pr->inputs[k])) {
                    any = 1;
                    if (pts[j].sqnr_db < low) low = pts[j].sqnr_db;
                }
        p->drop_db = any ? fmin(low, MATCH_SQNR_CAP) - fmin(p->sqnr_db, MATCH_SQNR_CAP) : NAN;
    }
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
    const char **names = NULL, **views = NULL;
    size_t n = 0, n_in = f->n_inputs;
    onp_tensor *in = calloc(n_in ? n_in : 1, sizeof *in);
    onp_tensor *ot = NULL, *st = NULL;
    onp_chain_point *pts = NULL;
    int *ok = NULL;
    if (!in || onp_model_open(orig_model, &om, &e) || onp_model_open(stage_model, &sm, &e))
        goto fail;
    if (onp_model_has_external(om) || onp_model_has_external(sm)) {
        snprintf(d->note, sizeof d->note, "a model with external data is not matched");
        goto out;
    }
    names = common_values(om, sm, &n);
    d->n_common = n;
    if (!names || !n) {
        snprintf(d->note, sizeof d->note, "no value is named alike in both graphs");
        goto out;
    }
    ot = calloc(n, sizeof *ot);
    st = calloc(n, sizeof *st);
    pts = calloc(n, sizeof *pts);
    ok = calloc(n, sizeof *ok);
    if (!ot || !st || !pts || !ok) goto fail;
    for (size_t k = 0; k < n_in; k++) {
        if (onp_tfile_read(f->inputs[k], NULL, &in[k], &e)) goto fail;
        onp_tensor_set_name(&in[k], NULL, &e);
    }
    const onp_graph *sg = onp_model_graph(sm), *og = onp_model_graph(om);
    views = malloc(n * sizeof *views);
    if (!views) goto fail;
    for (size_t i = 0; i < n; i++) views[i] = quantized_view(sg, names[i]);
    if (run_exposed(ort, so, om, orig_model, names, n, in, n_in, ot, &e) ||
        run_exposed(ort, so, sm, stage_model, views, n, in, n_in, st, &e))
        goto fail;
    d->ran = 1;
    for (size_t i = 0; i < n; i++) {
        ok[i] = measure(&ot[i], &st[i], &pts[i]);
        if (!ok[i]) continue;
        d->n_compared++;
        if (!d->found && pts[i].rel_err > limit) {
            d->found = 1;
            d->first = pts[i];
            name_point(&d->first, names[i], sg, og);
        }
        if (!d->worst.value[0] || pts[i].rel_err > d->worst.rel_err) {
            d->worst = pts[i];
            name_point(&d->worst, names[i], sg, og);
        }
    }
    if (keep_points) keep_all(sg, og, names, pts, ok, n, d);
    if (d->found)
        worst_input(sg, og, names, pts, ok, n, d);
    else
        snprintf(d->note, sizeof d->note,
                 "no value named alike in both graphs leaves the limit: the error is in values a "
                 "transform renamed");
    goto out;
fail:
    onp_error_format(&e, d->note, sizeof d->note);
out:
    for (size_t i = 0; ot && i < n; i++) onp_tensor_release(&ot[i]);
    for (size_t i = 0; st && i < n; i++) onp_tensor_release(&st[i]);
    for (size_t k = 0; k < n_in; k++) onp_tensor_release(&in[k]);
    free(ot);
    free(st);
    free(pts);
    free(ok);
    free(in);
    free(names);
    free(views);
    onp_model_close(om);
    onp_model_close(sm);
}
