/*
 * rules_opsem.c — the op-semantics family (ONP401-413): operators whose
 * definition at the model's opset has edge cases where it and eager
 * PyTorch part ways.  Each check fires only where the edge can be reached:
 * TopK only when its indices are used, Resize only with a mode / rounding
 * pair torch's interpolate does not have, Div only on signed integers,
 * Scatter only when its indices are computed or repeat.  Warnings are
 * risks until a comparison confirms them; infos need special values (NaN,
 * out-of-range, half-way) to matter.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint/lint_int.h"

/* A string attribute into buf, or dflt. */
static const char *attr_str(const onp_node *n, const char *name, const char *dflt, char *buf,
                            size_t size)
{
    const onp_attr *a = onp_node_attr(n, name);
    if (!a || !a->s.p) return dflt;
    size_t k = a->s.n < size - 1 ? a->s.n : size - 1;
    memcpy(buf, a->s.p, k);
    buf[k] = '\0';
    return buf;
}

static int64_t attr_int(const onp_node *n, const char *name, int64_t dflt)
{
    const onp_attr *a = onp_node_attr(n, name);
    return a ? a->i : dflt;
}

static int64_t opset_of(const lint_ctx *c)
{
    return c->opset < 0 ? INT64_MAX : c->opset;
}

static onp_dkind kind_of(const lint_scope *s, const onp_node *n, size_t first, size_t last)
{
    for (size_t k = first; k <= last && k < n->n_inputs; k++) {
        if (!n->inputs[k][0]) continue;
        const onp_dtype_desc *d = onp_dtype_info(lint_dtype(s, n->inputs[k]));
        if (d) return d->kind;
    }
    return ONP_KIND_NONE;
}

static const char *dtype_of(const lint_scope *s, const char *name)
{
    return onp_dtype_name(lint_dtype(s, name));
}

// --- TopK, ArgMax/ArgMin ------------------------------------------------------------

void lint_check_topk(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    if (n->n_outputs < 2 || !lint_value_used(ln->s, n->outputs[1])) return;
    char lab[600];
    lint_node_label(ln, lab, sizeof lab);
    int unsorted = opset_of(c) >= 11 && attr_int(n, "sorted", 1) == 0;
    lint_emit_node(c, R_TOPK_TIES, ln,
                   "TopK %s: its indices '%s' are used; among equal values ONNX puts the lower "
                   "index first while torch.topk promises no order, so the indices (and what "
                   "is gathered with them) can differ wherever values tie (ReLU zeros, "
                   "saturated or quantised scores)%s",
                   lab, n->outputs[1],
                   unsorted ? "; sorted=0 also leaves the order of the k results unspecified" : "");
}

void lint_check_argmax(lint_ctx *c, const lint_node *ln)
{
    if (attr_int(ln->n, "select_last_index", 0) != 1) return;
    char lab[600];
    lint_node_label(ln, lab, sizeof lab);
    lint_emit_node(c, R_ARG_SELECT_LAST, ln,
                   "%s %s has select_last_index=1: among equal extremes it returns the last "
                   "index, torch.%s the first",
                   ln->n->op_type, lab, lint_is_op(ln->n, "ArgMax") ? "argmax" : "argmin");
}

// --- Resize, Upsample, Pad ---------------------------------------------------------------

void lint_check_resize(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    char lab[600], mb[64], cb[64], nb[64], why[1024] = "";
    lint_node_label(ln, lab, sizeof lab);
    const char *mode = attr_str(n, "mode", "nearest", mb, sizeof mb);
    int64_t v = opset_of(c);
    if (v <= 10) {
        if (!strcmp(mode, "nearest")) return;
        lint_emit_node(c, R_RESIZE_SEMANTICS, ln,
                       "Resize %s at opset %lld has mode=%s with the asymmetric coordinates "
                       "of opset 10 (no coordinate_transformation_mode): torch's "
                       "align_corners=False samples at half-pixel centres, so every output "
                       "pixel moves",
                       lab, (long long)v, mode);
        return;
    }
    const char *ctm = attr_str(n, "coordinate_transformation_mode", "half_pixel", cb, sizeof cb);
    const char *nm = attr_str(n, "nearest_mode", "round_prefer_floor", nb, sizeof nb);
    size_t k = 0;
#define WHY(...)                                                                                   \
    do {                                                                                           \
        if (k < sizeof why) k += (size_t)snprintf(why + k, sizeof why - k, "%s", k ? "; " : "");   \
        if (k < sizeof why) k += (size_t)snprintf(why + k, sizeof why - k, __VA_ARGS__);           \
    } while (0)
    if (!strcmp(ctm, "tf_crop_and_resize") || !strcmp(ctm, "tf_half_pixel_for_nn"))
        WHY("coordinate_transformation_mode=%s has no torch counterpart", ctm);
    if (!strcmp(mode, "nearest")) {
        int as_torch = !strcmp(ctm, "asymmetric") && !strcmp(nm, "floor");
        int as_exact = (!strcmp(ctm, "half_pixel") || !strcmp(ctm, "pytorch_half_pixel")) &&
                       !strcmp(nm, "round_prefer_ceil");
        if (!as_torch && !as_exact)
            WHY("nearest with coordinate_transformation_mode=%s and nearest_mode=%s picks other "
                "pixels than torch's 'nearest' (asymmetric + floor) or 'nearest-exact' "
                "(half_pixel + round_prefer_ceil)",
                ctm, nm);
    } else {
        if (!strcmp(ctm, "asymmetric"))
            WHY("%s with asymmetric coordinates: torch samples at half-pixel centres "
                "(align_corners=False) or aligns the corners",
                mode);
        if (!strcmp(mode, "cubic")) {
            const onp_attr *a = onp_node_attr(n, "cubic_coeff_a");
            if (a && a->f != -0.75f)
                WHY("cubic_coeff_a=%g where torch's bicubic uses -0.75", (double)a->f);
            if (attr_int(n, "exclude_outside", 0))
                WHY("exclude_outside=1 renormalises the weights at the border; torch does not");
        }
    }
#undef WHY
    if (!why[0]) return;
    lint_emit_node(c, R_RESIZE_SEMANTICS, ln, "Resize %s (mode=%s): %s", lab, mode, why);
}

void lint_check_upsample(lint_ctx *c, const lint_node *ln)
{
    char lab[600], mb[64];
    lint_node_label(ln, lab, sizeof lab);
    const char *mode = attr_str(ln->n, "mode", "nearest", mb, sizeof mb);
    int64_t v = opset_of(c);
    int linear = strcmp(mode, "nearest") != 0;
    if (v < 10 && !linear) return;
    const char *asym = "its linear mode uses asymmetric coordinates, unlike torch's "
                       "align_corners=False (half-pixel centres)";
    if (v >= 10)
        lint_emit_node(c, R_UPSAMPLE, ln,
                       "Upsample %s (mode=%s): deprecated since opset 10 (exporters write "
                       "Resize)%s%s",
                       lab, mode, linear ? "; " : "", linear ? asym : "");
    else
        lint_emit_node(c, R_UPSAMPLE, ln, "Upsample %s (mode=%s): %s", lab, mode, asym);
}

static int pad_qualifies(const lint_scope *s, const onp_node *n)
{
    char mb[64];
    (void)s;
    return lint_is_op(n, "Pad") &&
           strcmp(attr_str(n, "mode", "constant", mb, sizeof mb), "constant");
}

/* " (and 3 more Pad nodes in this graph)" or "". */
static const char *more_text(size_t more, const char *op, char *buf, size_t n)
{
    buf[0] = '\0';
    if (more)
        snprintf(buf, n, " (and %zu more %s node%s in this graph)", more, op, more > 1 ? "s" : "");
    return buf;
}

/* The words of a note reported once per op type (lint_once). */
typedef struct once_text {
    char lab[600];  /* the node's label (lint_node_label) */
    char more[128]; /* more_text: the later nodes of its op type that qualify too */
} once_text;

/* 1 with t filled when ln qualifies for rule ix and is the first node of
 * its op type to get it; 0 otherwise (lint_once). */
static int report_once(lint_ctx *c, lint_rule_ix ix, const lint_node *ln,
                       int (*qualifies)(const lint_scope *s, const onp_node *n), once_text *t)
{
    size_t more;
    if (!qualifies(ln->s, ln->n) || !lint_once(c, ix, ln, qualifies, &more)) return 0;
    lint_node_label(ln, t->lab, sizeof t->lab);
    more_text(more, ln->n->op_type, t->more, sizeof t->more);
    return 1;
}

void lint_check_pad(lint_ctx *c, const lint_node *ln)
{
    char mb[64];
    once_text t;
    if (!report_once(c, R_PAD_MODE, ln, pad_qualifies, &t)) return;
    const char *mode = attr_str(ln->n, "mode", "constant", mb, sizeof mb);
    lint_emit_node(c, R_PAD_MODE, ln,
                   "Pad %s has mode=%s%s: where a pad reaches the size of its dimension, or is "
                   "negative, runtimes and torch (which refuses reflect pads that large) differ",
                   t.lab, mode, t.more);
}

// --- integer arithmetic -------------------------------------------------------------------

void lint_check_div_mod(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    char lab[600];
    lint_node_label(ln, lab, sizeof lab);
    onp_dkind k = kind_of(ln->s, n, 0, 1);
    if (lint_is_op(n, "Div")) {
        if (k != ONP_KIND_SINT || n->n_inputs < 2) return;
        /* truncation and floor agree where the quotient cannot be negative
         * (operands of one sign, as in shape arithmetic) or the divisor is +-1 */
        lint_range a = lint_value_range(c, ln->s, n->inputs[0]);
        lint_range b = lint_value_range(c, ln->s, n->inputs[1]);
        if ((a.lo >= 0 && b.lo >= 0) || (a.hi <= 0 && b.hi <= 0)) return;
        if ((b.lo == 1 && b.hi == 1) || (b.lo == -1 && b.hi == -1)) return;
        const char *open = a.lo < 0 ? n->inputs[0] : n->inputs[1];
        lint_emit_node(c, R_INTEGER_DIV, ln,
                       "Div %s divides %s integers and '%s' is not proven non-negative: ONNX "
                       "truncates toward zero, torch's // and div(rounding_mode='floor') floor, "
                       "so results differ by one wherever the operands' signs differ",
                       lab, dtype_of(ln->s, n->inputs[0]), open);
        return;
    }
    int64_t fmod = attr_int(n, "fmod", 0);
    if (k == ONP_KIND_FLOAT && fmod == 0)
        lint_emit_node(c, R_MOD_SIGN, ln,
                       "Mod %s on floats has fmod=0: ONNX defines float Mod only with fmod=1 "
                       "(runtimes refuse it or compute C fmod, the dividend's sign), while "
                       "torch's %% takes the divisor's sign",
                       lab);
    else if (k == ONP_KIND_SINT && fmod == 1)
        lint_emit_node(c, R_MOD_SIGN, ln,
                       "Mod %s has fmod=1: the result takes the dividend's sign (torch.fmod); "
                       "torch's %% and torch.remainder take the divisor's, so negative operands "
                       "give other results",
                       lab);
}

// --- NaN, rounding, casts ---------------------------------------------------------------

static int nan_qualifies(const lint_scope *s, const onp_node *n)
{
    return (lint_is_op(n, "Clip") || lint_is_op(n, "Max") || lint_is_op(n, "Min") ||
            lint_is_op(n, "ReduceMax") || lint_is_op(n, "ReduceMin")) &&
           n->n_inputs && kind_of(s, n, 0, 0) == ONP_KIND_FLOAT;
}

void lint_check_nan(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    once_text t;
    if (!report_once(c, R_NAN_PROPAGATION, ln, nan_qualifies, &t)) return;
    lint_emit_node(c, R_NAN_PROPAGATION, ln,
                   "%s %s on %s%s: torch propagates NaN through max, min and clamp; runtime "
                   "kernels may return the other operand or the bound instead, so a NaN in "
                   "eager can be a number here, or the reverse",
                   n->op_type, t.lab, dtype_of(ln->s, n->inputs[0]), t.more);
}

static int round_qualifies(const lint_scope *s, const onp_node *n)
{
    (void)s;
    return lint_is_op(n, "Round");
}

void lint_check_round(lint_ctx *c, const lint_node *ln)
{
    once_text t;
    if (!report_once(c, R_ROUND_HALF_EVEN, ln, round_qualifies, &t)) return;
    lint_emit_node(c, R_ROUND_HALF_EVEN, ln,
                   "Round %s%s rounds half to even (2.5 -> 2, like torch.round); an eager model "
                   "that rounds another way (floor(x + 0.5), a custom kernel) differs at every "
                   "half-way value",
                   t.lab, t.more);
}

static const onp_dtype_desc *cast_target(const lint_scope *s, const onp_node *n)
{
    const onp_dtype_desc *dt = onp_dtype_info((int32_t)attr_int(n, "to", 0));
    if (!dt || (dt->kind != ONP_KIND_SINT && dt->kind != ONP_KIND_UINT)) return NULL;
    if (!n->n_inputs || kind_of(s, n, 0, 0) != ONP_KIND_FLOAT) return NULL;
    return dt;
}

static int cast_qualifies(const lint_scope *s, const onp_node *n)
{
    return lint_is_op(n, "Cast") && cast_target(s, n);
}

void lint_check_cast(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    once_text t;
    if (!report_once(c, R_CAST_FLOAT_INT, ln, cast_qualifies, &t)) return;
    const onp_dtype_desc *dt = cast_target(ln->s, n);
    lint_emit_node(c, R_CAST_FLOAT_INT, ln,
                   "Cast %s from %s to %s%s truncates toward zero (as torch does); NaN, "
                   "infinities and values out of %s's range are undefined and differ between "
                   "CPUs and runtimes%s",
                   t.lab, dtype_of(ln->s, n->inputs[0]), dt->name, t.more, dt->name,
                   dt->kind == ONP_KIND_UINT ? ", and negative values wrap differently" : "");
}

// --- GridSample, NonMaxSuppression ------------------------------------------------------

void lint_check_gridsample(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    if (strcmp(n->op_type, "GridSample")) return;
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") && strcmp(n->domain, "com.microsoft")) return;
    char lab[600], mb[64], pb[64];
    lint_node_label(ln, lab, sizeof lab);
    const char *mode = attr_str(n, "mode", "bilinear", mb, sizeof mb);
    const char *pad = attr_str(n, "padding_mode", "zeros", pb, sizeof pb);
    lint_emit_node(c, R_GRID_SAMPLE, ln,
                   "GridSample %s (mode=%s, padding_mode=%s, align_corners=%" PRId64
                   "): coordinates outside [-1, 1], %s padding and nearest rounding are where "
                   "implementations differ from torch's grid_sample",
                   lab, mode, pad, attr_int(n, "align_corners", 0), pad);
}

void lint_check_nms(lint_ctx *c, const lint_node *ln)
{
    char lab[600];
    lint_node_label(ln, lab, sizeof lab);
    lint_emit_node(c, R_NMS, ln,
                   "NonMaxSuppression %s: boxes with equal scores may be kept in another order "
                   "or another one kept, and boxes at exactly the IoU threshold decided "
                   "differently from torchvision.ops.nms; its output is [num_selected, 3] "
                   "(batch, class, box) triples, not an index list (center_point_box=%" PRId64 ")",
                   lab, attr_int(ln->n, "center_point_box", 0));
}

// --- Scatter ----------------------------------------------------------------------------

/* Constant indices: 1 when two updates address the same element, 0 when
 * none do, -1 when it cannot be told. */
static int scatter_repeats(const onp_node *n, const onp_tensor *t)
{
    enum { MAX_UPDATES = 2048 };
    if (t->rank < 1) return -1;
    if (lint_is_op(n, "ScatterND")) {
        int64_t q = t->dims[t->rank - 1];
        if (q <= 0) return 0;
        int64_t m = t->count / q;
        if (m > MAX_UPDATES) return -1;
        for (int64_t a = 0; a < m; a++)
            for (int64_t b = a + 1; b < m; b++) {
                int64_t j = 0;
                while (j < q && lint_i64(t, a * q + j) == lint_i64(t, b * q + j)) j++;
                if (j == q) return 1;
            }
        return 0;
    }
    /* ScatterElements / Scatter: update i goes to its own coordinates with
     * the coordinate on `axis` replaced by the index. */
    int64_t axis = attr_int(n, "axis", 0), r = t->rank;
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r || t->count > MAX_UPDATES) return -1;
    int64_t *key = malloc((size_t)(t->count * r) * sizeof *key);
    if (!key) return -1;
    for (int64_t i = 0; i < t->count; i++) {
        int64_t rem = i;
        for (int64_t d = r - 1; d >= 0; d--) {
            key[i * r + d] = t->dims[d] ? rem % t->dims[d] : 0;
            rem = t->dims[d] ? rem / t->dims[d] : 0;
        }
        key[i * r + axis] = lint_i64(t, i);
    }
    int rep = 0;
    for (int64_t a = 0; a < t->count && !rep; a++)
        for (int64_t b = a + 1; b < t->count && !rep; b++)
            rep = !memcmp(&key[a * r], &key[b * r], (size_t)r * sizeof *key);
    free(key);
    return rep;
}

/* A small constant integer vector into v[max]; its length, or -1. */
static int64_t const_ints(lint_ctx *c, const lint_scope *s, const char *name, int64_t *v,
                          int64_t max)
{
    onp_tensor t;
    if (!name || !name[0] || !lint_const(c, s, name, max, &t, NULL)) return -1;
    int64_t n = t.count;
    for (int64_t i = 0; i < n; i++) v[i] = lint_i64(&t, i);
    onp_tensor_release(&t);
    return n;
}

/* 1 when `name` is a strictly monotonic 1-D integer sequence: a Range with
 * a constant non-zero delta, seen through Identity, Cast and Slices of
 * axis 0 with non-zero constant steps. */
static int monotonic_1d(lint_ctx *c, const lint_scope *s, const char *name)
{
    for (int step = 0; step < 16 && name && name[0]; step++) {
        const onp_node *p = lint_producer(s, name, &s);
        int64_t v[4];
        if (!p) return 0;
        if (lint_is_op(p, "Range"))
            return p->n_inputs >= 3 && const_ints(c, s, p->inputs[2], v, 1) == 1 && v[0] != 0;
        if (lint_is_op(p, "Slice")) {
            if (c->opset >= 0 && c->opset < 10) return 0;
            int64_t na =
                p->n_inputs > 3 && p->inputs[3][0] ? const_ints(c, s, p->inputs[3], v, 1) : 1;
            if (na != 1 || (p->n_inputs > 3 && p->inputs[3][0] && v[0] != 0 && v[0] != -1))
                return 0;
            if (p->n_inputs > 4 && p->inputs[4][0] &&
                (const_ints(c, s, p->inputs[4], v, 1) != 1 || v[0] == 0))
                return 0;
        } else if (!lint_is_op(p, "Identity") && !lint_is_op(p, "Cast")) {
            return 0;
        }
        if (!p->n_inputs) return 0;
        name = p->inputs[0];
    }
    return 0;
}

/* One index component of a slice assignment: Unsqueeze(-1) of
 * Expand(Reshape(seq, [1, .., -1, .., 1]), shape) or of Expand(seq, shape). */
typedef struct grid_part {
    const char *base;   /* the value before Expand (the Reshape's output, or the sequence) */
    const char *shape;  /* Expand's shape operand */
    int64_t rank, axis; /* the axis (from the right) the sequence runs along */
} grid_part;

static int grid_component(lint_ctx *c, const lint_scope *s, const char *name, grid_part *g)
{
    int64_t v[8];
    const onp_node *u = lint_producer(s, name, &s);
    if (!u || !lint_is_op(u, "Unsqueeze") || !u->n_inputs) return 0;
    const onp_attr *ax = onp_node_attr(u, "axes");
    if (ax ? ax->n_ints != 1 || ax->ints[0] != -1
           : u->n_inputs < 2 || const_ints(c, s, u->inputs[1], v, 1) != 1 || v[0] != -1)
        return 0;
    const onp_node *e = lint_producer(s, u->inputs[0], &s);
    if (!e || !lint_is_op(e, "Expand") || e->n_inputs < 2) return 0;
    g->base = e->inputs[0];
    g->shape = e->inputs[1];
    const onp_node *r = lint_producer(s, g->base, NULL);
    if (r && lint_is_op(r, "Reshape") && r->n_inputs >= 2) {
        int64_t k = const_ints(c, s, r->inputs[1], v, 8), moving = -1;
        if (k < 1) return 0;
        for (int64_t i = 0; i < k; i++)
            if (v[i] != 1) {
                if (moving >= 0) return 0;
                moving = i;
            }
        if (moving < 0) return 0;
        g->rank = k;
        g->axis = k - 1 - moving;
        return monotonic_1d(c, s, r->inputs[0]);
    }
    g->rank = 1;
    g->axis = 0;
    return monotonic_1d(c, s, g->base);
}

/* 1 when `v` is Shape(sum of exactly the bases), possibly inside torch's
 * expand_as pattern Where(Equal(S, -1s), 1s, S): the grid's own extent. */
static int grid_extent(const lint_scope *s, const char *v, const grid_part *g, size_t n)
{
    const onp_node *p = lint_producer(s, v, &s);
    if (p && lint_is_op(p, "Where") && p->n_inputs == 3) p = lint_producer(s, p->inputs[2], &s);
    if (!p || !lint_is_op(p, "Shape") || !p->n_inputs) return 0;
    const onp_node *sum = lint_producer(s, p->inputs[0], NULL);
    if (n == 1) return !strcmp(p->inputs[0], g[0].base);
    if (!sum || !lint_is_op(sum, "Add") || sum->n_inputs != n) return 0;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t k = 0; k < n; k++) seen |= !strcmp(sum->inputs[k], g[i].base);
        if (!seen) return 0;
    }
    return 1;
}

/* 1 when ScatterND indices are the grid of a slice assignment
 * (x[a:b, c:d] = v as torch exports it): one strictly monotonic sequence
 * per axis of the grid, broadcast against each other: no index repeats. */
static int slice_grid(lint_ctx *c, const lint_scope *s, const onp_node *n)
{
    enum { MAX_PARTS = 8 };
    grid_part g[MAX_PARTS];
    const char *idx = n->inputs[1];
    const onp_node *cat = lint_producer(s, idx, NULL);
    if (!lint_is_op(n, "ScatterND") || !cat || !lint_is_op(cat, "Concat")) return 0;
    const onp_attr *axis = onp_node_attr(cat, "axis");
    size_t parts = cat->n_inputs;
    if (!axis || axis->i != -1 || parts < 1 || parts > MAX_PARTS) return 0;
    uint32_t axes = 0;
    for (size_t i = 0; i < parts; i++) {
        if (!grid_component(c, s, cat->inputs[i], &g[i])) return 0;
        if (g[i].rank > (int64_t)parts || g[i].axis >= (int64_t)parts || axes >> g[i].axis & 1)
            return 0;
        axes |= 1u << g[i].axis;
    }
    if (axes != (1u << parts) - 1) return 0;
    for (size_t i = 0; i < parts; i++)
        if (!grid_extent(s, g[i].shape, g, parts)) return 0;
    return 1;
}

void lint_check_scatter(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    char lab[600], rb[64];
    if (strcmp(attr_str(n, "reduction", "none", rb, sizeof rb), "none")) return;
    if (n->n_inputs < 2 || !n->inputs[1][0]) return;
    lint_node_label(ln, lab, sizeof lab);
    onp_tensor t;
    if (lint_const(c, ln->s, n->inputs[1], 1 << 16, &t, NULL)) {
        int rep = scatter_repeats(n, &t);
        onp_tensor_release(&t);
        if (rep == 0) return;
        if (rep == 1) {
            lint_emit_node(c, R_SCATTER_DUPLICATES, ln,
                           "%s %s: constant indices '%s' address the same element twice; "
                           "which update wins is unspecified (ONNX Runtime's CPU kernel "
                           "applies them in order, torch's index_put_/scatter_ leave it "
                           "undefined and CUDA varies run to run)",
                           n->op_type, lab, n->inputs[1]);
            return;
        }
    } else if (slice_grid(c, ln->s, n)) {
        return;
    }
    lint_emit_node(c, R_SCATTER_DUPLICATES, ln,
                   "%s %s without reduction: if indices '%s' repeat, which update wins is "
                   "unspecified (ONNX Runtime's CPU kernel applies them in order, torch's "
                   "index_put_/scatter_ leave it undefined and CUDA varies run to run)",
                   n->op_type, lab, n->inputs[1]);
}

// --- reduced precision ------------------------------------------------------------------

static int lowp_qualifies(const lint_scope *s, const onp_node *n)
{
    if (!lint_is_op(n, "Cast") || !n->n_inputs) return 0;
    int64_t to = attr_int(n, "to", 0);
    int32_t from = lint_dtype(s, n->inputs[0]);
    return (to == ONP_FLOAT16 || to == ONP_BFLOAT16) && (from == ONP_FLOAT || from == ONP_DOUBLE);
}

/* ONP416: a wide float narrowed to float16/bfloat16 inside the graph. */
void lint_check_lowp_cast(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    once_text t;
    if (!report_once(c, R_REDUCED_PRECISION, ln, lowp_qualifies, &t)) return;
    int is16 = attr_int(n, "to", 0) == ONP_FLOAT16;
    lint_emit_node(c, R_REDUCED_PRECISION, ln,
                   "Cast %s narrows %s to %s%s: every value is rounded to %s bits of mantissa "
                   "there (relative error up to %g), far beyond float32 noise",
                   t.lab, dtype_of(ln->s, n->inputs[0]), is16 ? "float16" : "bfloat16", t.more,
                   is16 ? "10" : "7", is16 ? 0x1p-11 : 0x1p-8);
}

// --- float8 saturation ------------------------------------------------------------------

static int f8sat_qualifies(const lint_scope *s, const onp_node *n)
{
    (void)s;
    if (!lint_is_op(n, "Cast")) return 0;
    int64_t to = attr_int(n, "to", 0);
    return to >= ONP_FLOAT8E4M3FN && to <= ONP_FLOAT8E5M2FNUZ && attr_int(n, "saturate", 1) != 0;
}

/* ONP417: a saturating Cast to float8.  Where a value overflows the type,
 * ONNX gives the largest finite value and torch's .to() inf or NaN (torch
 * 2.15 saturates float8_e4m3fn too): a difference only at overflow. */
void lint_check_float8_cast(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    once_text t;
    if (!report_once(c, R_FLOAT8_SATURATE, ln, f8sat_qualifies, &t)) return;
    int32_t to = (int32_t)attr_int(n, "to", 0);
    double largest = to == ONP_FLOAT8E4M3FN ? 448 : to == ONP_FLOAT8E4M3FNUZ ? 240 : 57344;
    lint_emit_node(c, R_FLOAT8_SATURATE, ln,
                   "Cast %s to %s saturates (saturate=%s)%s: a value beyond +-%g becomes +-%g "
                   "there, where torch's .to(torch.%s) gives %s; the numbers differ only where "
                   "a value overflows",
                   t.lab, onp_dtype_name(to),
                   attr_int(n, "saturate", -1) == 1 ? "1" : "1, the default", t.more, largest,
                   largest, onp_dtype_name(to),
                   to == ONP_FLOAT8E5M2     ? "inf"
                   : to == ONP_FLOAT8E4M3FN ? "NaN (torch 2.15 saturates this one too)"
                                            : "NaN");
}
