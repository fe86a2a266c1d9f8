/*
 * rules_training.c — the training-mode family (ONP101-105) and random
 * operators (ONP601): Dropout and BatchNormalization read with the
 * semantics of the model's opset, and random draws.
 *
 * Dropout by opset:
 *   1-6    attribute is_test (default 0 = training: drops `ratio`, default
 *          0.5).  ONNX Runtime has no kernel; upgrades to 7 drop is_test and
 *          make it the identity, so runtimes disagree.
 *   7-11   no training flag: defined for inference only (the identity).
 *   12+    optional input training_mode (default false): a constant true is
 *          live dropout; a graph input or a computed value is not provably
 *          false.  ONNX Runtime removes the node at ORT_ENABLE_ALL whatever
 *          the flag, which hides it; ORT_DISABLE_ALL drops at random.
 * BatchNormalization by opset:
 *   1-6    attribute is_test (default 0 = training mode).
 *   7-13   training mode is the form with the extra outputs (running mean,
 *          running var, saved mean, saved var); inference has one output.
 *   14+    attribute training_mode (default 0); the extra outputs exist only
 *          with training_mode=1.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "lint/lint_int.h"

/* Opset semantics to apply: an absent default-domain import reads as the
 * newest opset. */
static int64_t effective_opset(const lint_ctx *c)
{
    return c->opset < 0 ? INT64_MAX : c->opset;
}

// --- Dropout ----------------------------------------------------------------------

/* 1 when parity.json says the model was in training mode at export
 * (training.any, modules_in_training, or the export mode TRAINING). */
static int manifest_training(const lint_ctx *c)
{
    const cJSON *tr = cJSON_IsObject(c->manifest)
                          ? cJSON_GetObjectItemCaseSensitive(c->manifest, "training")
                          : NULL;
    if (!cJSON_IsObject(tr)) return 0;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(tr, "modules_in_training");
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(tr, "export_mode");
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tr, "any")) ||
           (cJSON_IsArray(list) && cJSON_GetArraySize(list) > 0) ||
           (cJSON_IsString(mode) && mode->valuestring && !strcmp(mode->valuestring, "TRAINING"));
}

/* The Dropout ratio: *known = 0 when it is computed. */
static double dropout_ratio(lint_ctx *c, const lint_node *ln, int *known)
{
    const onp_node *n = ln->n;
    *known = 1;
    if (n->n_inputs < 2 || !n->inputs[1][0]) return 0.5;
    onp_tensor t;
    if (!lint_const(c, ln->s, n->inputs[1], 1, &t, NULL) || t.count != 1) {
        onp_tensor_release(&t);
        *known = 0;
        return 0.5;
    }
    double r = onp_tensor_get_f64(&t, 0);
    onp_tensor_release(&t);
    return r;
}

void lint_check_dropout(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    int64_t v = effective_opset(c);
    char lab[600];
    lint_node_label(ln, lab, sizeof lab);
    if (v <= 6) {
        const onp_attr *t = onp_node_attr(n, "is_test");
        if (t && t->i) return;
        const onp_attr *r = onp_node_attr(n, "ratio");
        double ratio = r ? r->f : 0.5;
        if (ratio > 0)
            lint_emit_node(c, R_DROPOUT_TRAINING, ln,
                           "Dropout %s at opset %lld has %s: by that opset's definition it runs in "
                           "training mode and zeroes about %.0f%% of activations at random; "
                           "ONNX Runtime has no kernel before opset 7, and an upgrade to 7 drops "
                           "is_test and makes it the identity, so runtimes disagree",
                           lab, (long long)v, t ? "is_test=0" : "no is_test attribute",
                           100 * ratio);
        else
            lint_emit_node(c, R_DROPOUT_TRAINING_NOOP, ln,
                           "Dropout %s at opset %lld runs in training mode (%s) with ratio 0: "
                           "no effect, but the model was exported in training mode",
                           lab, (long long)v, t ? "is_test=0" : "no is_test");
        return;
    }
    if (v <= 11) return; /* defined for inference only */
    if (n->n_inputs < 3 || !n->inputs[2][0]) return;
    const char *tm = n->inputs[2];
    onp_tensor t;
    int over = 0;
    if (lint_const(c, ln->s, tm, 16, &t, &over)) {
        int on = 0;
        for (int64_t i = 0; i < t.count; i++) on |= lint_i64(&t, i) != 0;
        onp_tensor_release(&t);
        if (!on) {
            if (over)
                lint_emit_node(c, R_DROPOUT_TRAINING_UNKNOWN, ln,
                               "Dropout %s: training_mode '%s' is an initializer that is also a "
                               "graph input: false by default, but a caller can feed true",
                               lab, tm);
            return;
        }
        int known;
        double ratio = dropout_ratio(c, ln, &known);
        /* ratio 0 changes nothing: F.dropout(x, p=0) (training=True by
         * default) in an eval export writes this node too, so only the
         * manifest can say the model was in training mode */
        if (known && ratio == 0) {
            if (manifest_training(c))
                lint_emit_node(c, R_DROPOUT_TRAINING_NOOP, ln,
                               "Dropout %s has training_mode '%s' = true but ratio 0: no effect, "
                               "yet parity.json says the model was in training mode at export",
                               lab, tm);
        } else if (known)
            lint_emit_node(c, R_DROPOUT_TRAINING, ln,
                           "Dropout %s has training_mode '%s' = true (a constant%s): it zeroes "
                           "about %.0f%% of activations at random and scales the rest by "
                           "1/(1-ratio); ONNX Runtime removes the node at ORT_ENABLE_ALL, so "
                           "numbers may agree there, but ORT_DISABLE_ALL and other runtimes drop "
                           "at random",
                           lab, tm, over ? " that a caller can override" : "", 100 * ratio);
        else
            lint_emit_node(c, R_DROPOUT_TRAINING, ln,
                           "Dropout %s has training_mode '%s' = true (a constant) and a computed "
                           "ratio '%s': it zeroes activations at random; ONNX Runtime removes "
                           "the node at ORT_ENABLE_ALL, so numbers may agree there, but "
                           "ORT_DISABLE_ALL and other runtimes drop at random",
                           lab, tm, n->inputs[1]);
        return;
    }
    if (lint_is_graph_input(ln->s, tm)) {
        lint_emit_node(c, R_DROPOUT_TRAINING_UNKNOWN, ln,
                       "Dropout %s takes training_mode from graph input '%s': whoever feeds "
                       "true turns dropout on",
                       lab, tm);
        return;
    }
    const onp_node *p = lint_producer(ln->s, tm, NULL);
    lint_emit_node(c, R_DROPOUT_TRAINING_UNKNOWN, ln,
                   "Dropout %s: training_mode '%s' is computed%s%s%s%s: it cannot be proven false",
                   lab, tm, p ? " by " : "", p ? p->op_type : "", p && p->name[0] ? " " : "",
                   p ? p->name : "");
}

/* 1 when a graph (or one nested in it) holds a Dropout. */
static int holds_dropout(const onp_graph *g, int depth)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onp_node *n = &g->nodes[i];
        if (lint_is_op(n, "Dropout")) return 1;
        for (size_t a = 0; a < n->n_attrs && depth < 16; a++) {
            const onp_attr *at = &n->attrs[a];
            if (at->g && holds_dropout(at->g, depth + 1)) return 1;
            for (size_t k = 0; k < at->n_graphs; k++)
                if (at->graphs[k] && holds_dropout(at->graphs[k], depth + 1)) return 1;
        }
    }
    return 0;
}

size_t lint_live_dropouts(lint_ctx *c, const lint_scope *main)
{
    int64_t v = effective_opset(c);
    size_t live = 0;
    if (v >= 7 && v <= 11) return 0; /* defined for inference only */
    for (size_t i = 0; i < main->g->n_nodes; i++) {
        const onp_node *n = &main->g->nodes[i];
        lint_node ln = {main, n, i, 0};
        int known = 1;
        double ratio;
        if (!lint_is_op(n, "Dropout")) {
            /* a Dropout inside a subgraph is not followed: count it */
            for (size_t a = 0; a < n->n_attrs; a++) {
                const onp_attr *at = &n->attrs[a];
                live += at->g && holds_dropout(at->g, 1);
                for (size_t k = 0; k < at->n_graphs; k++)
                    live += at->graphs[k] && holds_dropout(at->graphs[k], 1);
            }
            continue;
        }
        if (v <= 6) {
            const onp_attr *t = onp_node_attr(n, "is_test"), *r = onp_node_attr(n, "ratio");
            live += !(t && t->i) && (r ? r->f : 0.5f) > 0;
            continue;
        }
        if (n->n_inputs < 3 || !n->inputs[2][0]) continue;
        onp_tensor t;
        int over = 0;
        if (lint_const(c, main, n->inputs[2], 16, &t, &over)) {
            int on = 0;
            for (int64_t k = 0; k < t.count; k++) on |= lint_i64(&t, k) != 0;
            onp_tensor_release(&t);
            if (!on && !over) continue;
        }
        ratio = dropout_ratio(c, &ln, &known);
        live += !(known && ratio == 0);
    }
    return live;
}

/* A BatchNormalization in its training form: training_mode=1 (opset 14+),
 * running-statistics outputs, or no is_test=1 up to opset 6. */
static int batchnorm_training(const onp_node *n, int64_t v)
{
    int extra = 0;
    for (size_t k = 1; k < n->n_outputs; k++) extra |= n->outputs[k][0] != 0;
    if (v <= 6) {
        const onp_attr *t = onp_node_attr(n, "is_test");
        return extra || !(t && t->i);
    }
    const onp_attr *tm = v >= 14 ? onp_node_attr(n, "training_mode") : NULL;
    return extra || (tm && tm->i);
}

size_t lint_training_nodes(lint_ctx *c, const lint_scope *main)
{
    int64_t v = effective_opset(c);
    size_t count = lint_live_dropouts(c, main);
    for (size_t i = 0; i < main->g->n_nodes; i++) {
        const onp_node *n = &main->g->nodes[i];
        if (n->domain[0] && strcmp(n->domain, "ai.onnx")) continue;
        if (lint_is_op(n, "BatchNormalization"))
            count += (size_t)batchnorm_training(n, v);
        else
            count += (size_t)lint_in_list("|RandomUniform|RandomNormal|RandomUniformLike|"
                                          "RandomNormalLike|Bernoulli|Multinomial|",
                                          n->op_type);
    }
    return count;
}

// --- BatchNormalization -------------------------------------------------------------

void lint_check_batchnorm(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    int64_t v = effective_opset(c);
    char lab[600];
    lint_node_label(ln, lab, sizeof lab);
    size_t extra = 0, used = 0;
    for (size_t k = 1; k < n->n_outputs; k++)
        if (n->outputs[k][0]) {
            extra++;
            used += (size_t)lint_value_used(ln->s, n->outputs[k]);
        }
    const char *why = "the statistics of each batch, not the running ones: a sample's output "
                      "depends on the rest of its batch (and a batch of 1 has zero variance)";
    if (v <= 6) {
        const onp_attr *t = onp_node_attr(n, "is_test");
        if (t && t->i && !extra) return;
        lint_emit_node(c, R_BATCHNORM_TRAINING, ln,
                       "BatchNormalization %s at opset %lld has %s%s: training mode by that "
                       "opset's definition, normalising with %s",
                       lab, (long long)v,
                       t && t->i ? "is_test=1"
                       : t       ? "is_test=0"
                                 : "no is_test",
                       extra ? " and running-statistics outputs" : "", why);
        return;
    }
    const onp_attr *tm = v >= 14 ? onp_node_attr(n, "training_mode") : NULL;
    if (tm && tm->i) {
        lint_emit_node(c, R_BATCHNORM_TRAINING, ln,
                       "BatchNormalization %s has training_mode=1: it normalises with %s", lab,
                       why);
        return;
    }
    if (!extra) return;
    lint_emit_node(c, R_BATCHNORM_TRAINING, ln,
                   "BatchNormalization %s has %zu outputs (running mean/var%s; %zu of the extra "
                   "ones used): %s, normalising with %s",
                   lab, extra + 1, extra > 2 ? ", saved mean/var" : "", used,
                   v >= 14 ? "at opset 14+ they exist only in training mode, yet training_mode "
                             "is 0 (an invalid model)"
                           : "the training-mode form of this opset",
                   why);
}

// --- random operators ---------------------------------------------------------------

typedef struct mask_walk {
    const lint_scope *s;
    int depth;
    int masked;  /* the value is a comparison of random numbers (a 0/1 mask) */
    int *budget; /* nodes left to visit: each visit scans the graph */
    const onp_node *sink;
} mask_walk;

static void mask_visit(const onp_node *n, void *arg)
{
    mask_walk *w = arg;
    if (w->sink || w->depth >= 4 || !n->n_outputs || *w->budget <= 0) return;
    --*w->budget;
    mask_walk next = {w->s, w->depth + 1, w->masked, w->budget, NULL};
    if (lint_is_op(n, "Less") || lint_is_op(n, "Greater") || lint_is_op(n, "LessOrEqual") ||
        lint_is_op(n, "GreaterOrEqual"))
        next.masked = 1;
    else if (w->masked && (lint_is_op(n, "Mul") || lint_is_op(n, "Where") || lint_is_op(n, "Div") ||
                           lint_is_op(n, "And"))) {
        w->sink = n;
        return;
    } else if (!lint_is_op(n, "Cast") && !lint_is_op(n, "Not") && !lint_is_op(n, "Identity") &&
               !lint_is_op(n, "Sub"))
        return;
    lint_for_consumers(w->s, n->outputs[0], mask_visit, &next);
    if (next.sink) w->sink = next.sink;
}

void lint_check_random(lint_ctx *c, const lint_node *ln)
{
    const onp_node *n = ln->n;
    char lab[600], seed[64] = "";
    lint_node_label(ln, lab, sizeof lab);
    const onp_attr *sd = onp_node_attr(n, "seed");
    if (sd) snprintf(seed, sizeof seed, " (seed=%g: repeatable, but not torch's draws)", sd->f);
    if (n->n_outputs && !lint_is_op(n, "Multinomial") && !lint_is_op(n, "RandomNormal") &&
        !lint_is_op(n, "RandomNormalLike")) {
        int budget = 64;
        mask_walk w = {ln->s, 0, lint_is_op(n, "Bernoulli"), &budget, NULL};
        lint_for_consumers(ln->s, n->outputs[0], mask_visit, &w);
        if (w.sink) {
            lint_emit_node(c, R_RANDOM_DROPOUT_MASK, ln,
                           "%s %s becomes a 0/1 mask that %s %s%s%s applies to activations: a "
                           "dropout written by hand, live at inference%s",
                           n->op_type, lab, w.sink->op_type, w.sink->name[0] ? "'" : "",
                           w.sink->name, w.sink->name[0] ? "'" : "", seed);
            return;
        }
    }
    lint_emit_node(c, R_RANDOM_OP, ln,
                   "%s %s draws random values%s: no runtime reproduces torch's generator, so the "
                   "outputs it reaches cannot match eager%s",
                   n->op_type, lab, seed, sd ? "" : " and differ from run to run");
}
