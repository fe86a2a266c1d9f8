/*
 * causes.c — the cause derivation (causes.h): a table of rules over one
 * evidence record.  Each rule reads the record (and the causes the rules
 * before it added) and adds or strengthens causes; the table's order is
 * the procedure of docs/diagnose.md, "The derivation".
 *
 * How to add a rule: write `static void rule_NAME(const facts *F,
 * onp_causes *cs)`, add a row to `rules[]` where it belongs in the order,
 * describe it in docs/diagnose.md's table, and give it cases in
 * tests/unit/test_causes.c.
 */
#include "onnxparity/causes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const confidence_names[] = {"high", "medium", "low"};
_Static_assert(sizeof confidence_names / sizeof *confidence_names == ONP_CONFIDENCE_COUNT,
               "confidence_names");

const char *onp_confidence_name(onp_confidence c)
{
    return (unsigned)c < ONP_CONFIDENCE_COUNT ? confidence_names[c] : "?";
}

/* What the rules read: the record and what follows from it. */
typedef struct facts {
    const onp_evidence *ev;
    const onp_lint_result *lint;
    const onp_probe_result *pr;       /* NULL: no probes */
    const onp_sweep_result *sw;       /* NULL: no sweep */
    const onp_bisect_result *bis;     /* a bisect that found a first divergent node, or NULL */
    const onp_bisect_result *bis_run; /* any bisect that ran, or NULL */
    int numbers_fail;                 /* a fixture fails at the configuration under test */
    int any_fail;                     /* ... or at a swept level/provider, or not reproducible */
    int nondet;                       /* some run not reproducible: the veto applies */
    int lint_cause[ONP_CAUSE_COUNT];  /* warning- or error-level findings per cause */
    int lint_err[ONP_CAUSE_COUNT];    /* error-level findings per cause */
} facts;

/* A fixture ONNX Runtime refused to run (a shape the graph cannot take):
 * a failure of the export, unlike a crash or a timeout of ORT itself. */
static int refused(const onp_fixture_verdict *f)
{
    return f->status == ONP_FIXTURE_ERROR && !f->runtime && f->n_out && f->outs;
}

/* Add (or strengthen) cause `id` with one line of evidence.  The first
 * node and fix given stick unless a stronger confidence brings its own. */
static void add_cause(onp_causes *cs, onp_cause id, onp_confidence conf, const char *node,
                      const char *fix, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void add_cause(onp_causes *cs, onp_cause id, onp_confidence conf, const char *node,
                      const char *fix, const char *fmt, ...)
{
    onp_cause_item *c = &cs->items[id];
    int stronger = !c->present || conf < c->confidence;
    if (!c->present) c->confidence = conf;
    c->present = 1;
    if (conf < c->confidence) c->confidence = conf;
    if (node && node[0] && (!c->node[0] || stronger)) snprintf(c->node, sizeof c->node, "%s", node);
    if (fix && fix[0] && !c->fix[0]) snprintf(c->fix, sizeof c->fix, "%s", fix);
    if (c->n_evidence < ONP_CAUSE_MAX_EVIDENCE) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->evidence[c->n_evidence++], sizeof c->evidence[0], fmt, ap);
        va_end(ap);
    }
}

/* The first node a warning- or error-level finding of `cause` (or of the
 * rule `rule_id`, when not NULL) points at. */
static const char *lint_node(const onp_lint_result *l, onp_cause cause, const char *rule_id)
{
    for (size_t i = 0; i < l->n; i++) {
        const onp_lint_finding *f = &l->findings[i];
        if (f->rule->severity == ONP_LINT_INFO || f->loc.kind != ONP_LINT_LOC_NODE) continue;
        if (rule_id ? !strcmp(f->rule->id, rule_id) : f->rule->cause == cause) return f->loc.name;
    }
    return NULL;
}

static const char *const ND_FIX =
    "remove random ops from forward (torch.randn_like, dropout in train mode) or draw them "
    "outside the model; export in eval mode";

/* The cause a non-reproducible run points at: a live training-mode
 * Dropout explains it when lint found one. */
static onp_cause nd_cause(const facts *F)
{
    return F->lint_err[ONP_CAUSE_TRAINING_MODE] ? ONP_CAUSE_TRAINING_MODE
                                                : ONP_CAUSE_NONDETERMINISM;
}

static const char *nd_node(const facts *F)
{
    const char *n = lint_node(F->lint, ONP_CAUSE_NONDETERMINISM, NULL);
    return n ? n : lint_node(F->lint, ONP_CAUSE_NONDETERMINISM, "ONP105");
}

// --- the rules --------------------------------------------------------------------

/* 1. lint: node-located findings first, ranked by onp_lint_cause_rank. */
static void rule_lint(const facts *F, onp_causes *cs)
{
    const onp_lint_result *l = F->lint;
    const char *fd = F->bis ? F->bis->points[F->bis->first].node : NULL;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < l->n; i++) {
            const onp_lint_finding *f = &l->findings[i];
            int rank = onp_lint_cause_rank(f, F->any_fail, fd);
            if ((f->loc.kind == ONP_LINT_LOC_NODE) != (pass == 0)) continue;
            if (rank < 0) {
                if (f->rule->severity == ONP_LINT_WARNING) { /* explains no failure */
                    if (cs->n_latent < ONP_CAUSES_MAX_LATENT)
                        cs->latent[cs->n_latent++].finding = f;
                    cs->n_latent_total++;
                }
                continue;
            }
            add_cause(cs, f->rule->cause, (onp_confidence)rank,
                      f->loc.kind == ONP_LINT_LOC_NODE ? f->loc.name : NULL, f->rule->fix,
                      "lint %s %s at %s: %.400s", f->rule->id, f->rule->name,
                      f->loc.name && f->loc.name[0] ? f->loc.name
                                                    : onp_lint_loc_kind_name(f->loc.kind),
                      f->message);
        }
}

/* 1b. a fixture ORT refused, and a baked-shape finding to say why: the
 * finding explains it (the cheap inference check can make without probes). */
static void rule_refused(const facts *F, onp_causes *cs)
{
    if (!F->lint_cause[ONP_CAUSE_BAKED_SHAPE]) return;
    for (size_t i = 0; i < F->ev->n_fixtures; i++) {
        const onp_fixture_verdict *f = &F->ev->fixtures[i];
        if (!refused(f)) continue;
        const char *slash = strrchr(f->dir, '/');
        add_cause(cs, ONP_CAUSE_BAKED_SHAPE, ONP_CONFIDENCE_MEDIUM,
                  lint_node(F->lint, ONP_CAUSE_BAKED_SHAPE, NULL),
                  "declare the varying dims dynamic (dynamic_axes / dynamic_shapes, or capture "
                  "with dynamic_axes=\"auto\") and compute sizes from the tensor",
                  "ONNX Runtime refused %.120s: %.400s", slash ? slash + 1 : f->dir, f->msg);
        return;
    }
}

/* 2. determinism (probe and sweep reruns). */
static void rule_determinism(const facts *F, onp_causes *cs)
{
    const onp_probe_result *pr = F->pr;
    const onp_sweep_result *sw = F->sw;
    if (pr && pr->ran && !pr->deterministic)
        add_cause(cs, nd_cause(F), ONP_CONFIDENCE_HIGH, nd_node(F), ND_FIX,
                  "probe: fixture %d run twice gives different bytes for output %s (max_abs %g)",
                  pr->det_fixture, pr->det_output, pr->det_max_abs);
    for (int lv = 0; sw && lv < ONP_SWEEP_LEVELS; lv++)
        if (sw->levels[lv].ran && !sw->levels[lv].deterministic) {
            add_cause(cs, nd_cause(F), ONP_CONFIDENCE_HIGH, nd_node(F), ND_FIX,
                      "sweep: at level %s fixture %d is not reproducible (output %s)",
                      onp_ort_opt_level_name(sw->levels[lv].level), sw->levels[lv].nondet_fixture,
                      sw->levels[lv].nondet_output);
            break;
        }
}

/* 3. shape dependence (the node from a baked-shape finding). */
static void rule_shapes(const facts *F, onp_causes *cs)
{
    if (F->pr && F->pr->shape_dependent)
        add_cause(cs, ONP_CAUSE_BAKED_SHAPE, ONP_CONFIDENCE_HIGH,
                  lint_node(F->lint, ONP_CAUSE_BAKED_SHAPE, NULL),
                  "declare the varying dims dynamic (dynamic_axes={'x': {0: 'batch'}}) and compute "
                  "sizes from the tensor: x.flatten(1) or x.view(x.size(0), -1), never literals",
                  "probe (shapes): %s", F->pr->shape_note);
}

/* 4. batch invariance (confounded by randomness: then evidence only). */
static void rule_batch(const facts *F, onp_causes *cs)
{
    const onp_probe_result *pr = F->pr;
    if (!pr || !pr->batch_tested || pr->batch_pass) return;
    if (!pr->deterministic)
        add_cause(cs, nd_cause(F), ONP_CONFIDENCE_HIGH, NULL, ND_FIX, "probe (batch): %s",
                  pr->batch_note);
    else if (pr->batch_shape_error)
        add_cause(cs, ONP_CAUSE_BAKED_SHAPE,
                  F->numbers_fail ? ONP_CONFIDENCE_HIGH : ONP_CONFIDENCE_MEDIUM,
                  lint_node(F->lint, ONP_CAUSE_BAKED_SHAPE, NULL),
                  "compute sizes from the tensor: x.flatten(1) or x.view(x.size(0), -1) "
                  "instead of x.view(4, -1), and declare dim 0 dynamic",
                  "probe (batch invariance): %s", pr->batch_note);
    else if (F->numbers_fail)
        add_cause(cs, ONP_CAUSE_TRAINING_MODE, ONP_CONFIDENCE_MEDIUM, NULL,
                  "call model.eval() before export: BatchNormalization in training mode "
                  "normalises with batch statistics",
                  "probe (batch invariance): %s — samples interact across the batch "
                  "(batch-statistics BatchNormalization)",
                  pr->batch_note);
    else /* eager agrees on every batched fixture: the model itself mixes samples */
        add_cause(cs, ONP_CAUSE_TRAINING_MODE, ONP_CONFIDENCE_LOW, NULL,
                  "nothing to fix in the export when the model means to mix samples (a max or "
                  "mean over the batch); else call model.eval() before export",
                  "probe (batch invariance): %s — samples interact across the batch, but eager "
                  "agrees on every batched fixture: the model mixes them itself",
                  pr->batch_note);
}

/* 5. fixture dependence. */
static void rule_fixture_dependence(const facts *F, onp_causes *cs)
{
    const onp_probe_result *pr = F->pr;
    if (pr && pr->fixture_dependent && pr->deterministic && !pr->shape_dependent)
        add_cause(cs, ONP_CAUSE_TRACED_CONTROL_FLOW,
                  F->lint_cause[ONP_CAUSE_TRACED_CONTROL_FLOW] ? ONP_CONFIDENCE_HIGH
                                                               : ONP_CONFIDENCE_MEDIUM,
                  NULL,
                  "express the branch with torch.where (or torch.cond); no .item(), int() or "
                  "`if tensor` in forward",
                  "probe (fixture dependence): %s: the graph holds one traced path", pr->dep_note);
}

/* 6. the sweep over optimization levels; vetoed when runs are not
 * reproducible (a level "fails" because random differs from random). */
static void rule_sweep(const facts *F, onp_causes *cs)
{
    const onp_sweep_result *sw = F->sw;
    if (!sw) return;
    int says = sw->searched || (sw->first_failing >= 0 && sw->levels[ONP_SWEEP_LEVELS - 1].pass);
    if (says && F->nondet) {
        add_cause(cs, nd_cause(F), ONP_CONFIDENCE_HIGH, nd_node(F), ND_FIX,
                  "sweep: its levels compare runs that are not reproducible: not used as "
                  "evidence of an optimizer");
        return;
    }
    if (sw->searched) {
        if (sw->culprit[0]) {
            char fix[1024];
            snprintf(fix, sizeof fix,
                     "report the fusion upstream; meanwhile disable %s "
                     "(--session-config 'optimization.disable_specified_optimizers=%s', or "
                     "SessionOptions.add_session_config_entry; ';' separates names)",
                     sw->culprit, sw->culprit);
            add_cause(cs, ONP_CAUSE_GRAPH_OPTIMIZATION, ONP_CONFIDENCE_HIGH, NULL, fix,
                      "sweep: parity holds at disable, fails at all; %s", sw->search_note);
        } else {
            add_cause(cs, ONP_CAUSE_GRAPH_OPTIMIZATION, ONP_CONFIDENCE_MEDIUM, NULL,
                      "run at the highest level that passes (--opt-level) and report upstream",
                      "sweep: parity holds at disable, fails at all; %s", sw->search_note);
        }
    } else if (sw->first_failing >= 0 && sw->levels[ONP_SWEEP_LEVELS - 1].pass) {
        add_cause(cs, ONP_CAUSE_GRAPH_OPTIMIZATION, ONP_CONFIDENCE_LOW, NULL,
                  "run at a level that passes (--opt-level) and report upstream",
                  "sweep: parity breaks at level %s but holds at all",
                  onp_ort_opt_level_name(sw->levels[sw->first_failing].level));
    }
}

/* 6b. execution providers: one passes where another of the same library fails. */
static void rule_providers(const facts *F, onp_causes *cs)
{
    if (F->sw && F->sw->ep_disagree)
        add_cause(cs, ONP_CAUSE_EXECUTION_PROVIDER, ONP_CONFIDENCE_HIGH, NULL,
                  "run on the provider that agrees (the CPU) until the kernel is fixed; report "
                  "the failing operator upstream with this bundle",
                  "sweep: %s", F->sw->ep_note);
}

/* 7. float noise: outputs beyond their tolerance but inside their noise,
 * while nothing fails.  Confidence follows the weakest noise source. */
static void rule_float_noise(const facts *F, onp_causes *cs)
{
    if (F->any_fail || F->lint->counts[ONP_LINT_ERROR]) return;
    size_t n = 0;
    const onp_fixture_verdict *wf = NULL;
    const onp_output_verdict *wx = NULL;
    onp_noise_src weakest = ONP_NOISE_FLOAT64;
    double suggest = 0;
    for (size_t i = 0; i < F->ev->n_fixtures; i++)
        for (size_t k = 0; k < F->ev->fixtures[i].n_out; k++) {
            const onp_output_verdict *x = &F->ev->fixtures[i].outs[k];
            if (!x->compared || x->j.verdict != ONP_VERDICT_WITHIN_NOISE) continue;
            n++;
            if (!wx || x->j.gap_max > wx->j.gap_max) wf = &F->ev->fixtures[i], wx = x;
            if (x->j.noise.src > weakest) weakest = x->j.noise.src;
            if (x->j.suggest_atol > suggest) suggest = x->j.suggest_atol;
        }
    if (!n) return;
    onp_confidence conf = weakest == ONP_NOISE_FLOAT64  ? ONP_CONFIDENCE_HIGH
                          : weakest == ONP_NOISE_SCALED ? ONP_CONFIDENCE_MEDIUM
                                                        : ONP_CONFIDENCE_LOW;
    char fix[400];
    snprintf(fix, sizeof fix,
             "none needed: the export is as accurate as float32 eager; to make the tolerance "
             "itself pass, use --atol %.3g (or --tol NAME=RTOL,ATOL per output)",
             suggest);
    const char *slash = strrchr(wf->dir, '/');
    const onp_judgment *j = &wx->j;
    if (j->has_ref)
        add_cause(cs, ONP_CAUSE_FLOAT_NOISE, conf, NULL, fix,
                  "%zu output(s) beyond the tolerance but inside float noise; largest: %.120s "
                  "output %.200s, ORT vs float64 %.3g, eager float32 vs float64 %.3g (gap %.3g, "
                  "envelope %.3g)",
                  n, slash ? slash + 1 : wf->dir, wx->name, j->ort_err_max, j->eager_err_max,
                  j->gap_max, j->envelope_max);
    else
        add_cause(cs, ONP_CAUSE_FLOAT_NOISE, conf, NULL, fix,
                  "%zu output(s) beyond the tolerance but inside float noise; largest: %.120s "
                  "output %.200s, gap %.3g, envelope %.3g (noise from %s)",
                  n, slash ? slash + 1 : wf->dir, wx->name, j->gap_max, j->envelope_max,
                  onp_noise_src_name(j->noise.src));
    cs->items[ONP_CAUSE_FLOAT_NOISE].suggested_atol = suggest;
}

/* 8. nothing explains a failure. */
static void rule_unknown(const facts *F, onp_causes *cs)
{
    int strong = 0;
    for (int c = 0; c < ONP_CAUSE_COUNT; c++)
        if (cs->items[c].present && cs->items[c].confidence <= ONP_CONFIDENCE_MEDIUM) strong = 1;
    if (F->any_fail && !strong)
        add_cause(cs, ONP_CAUSE_UNKNOWN, ONP_CONFIDENCE_LOW,
                  F->bis ? F->bis->points[F->bis->first].node : NULL,
                  "bisect the bundle (onnxparity bisect) and inspect the first divergent node",
                  "outputs differ beyond tolerance and noise; no rule or probe explains it");
}

/* 9a. bisect's own checks: a fusion the exposure blocks, the disable
 * reference (vetoed when not reproducible), local vs inherited. */
static void rule_bisect_checks(const facts *F, onp_causes *cs)
{
    const onp_bisect_result *b = F->bis_run;
    if (!b) return;
    const onp_bisect_verify *v = &b->verify;
    const onp_cause_item *go = &cs->items[ONP_CAUSE_GRAPH_OPTIMIZATION];
    if (v->ran && !v->reproduces && !v->plain_pass && !F->nondet)
        add_cause(
            cs, ONP_CAUSE_GRAPH_OPTIMIZATION, go->present ? go->confidence : ONP_CONFIDENCE_LOW,
            NULL, "run at the highest level that passes (--opt-level) and report upstream",
            "bisect: with every intermediate exposed the outputs pass (max_abs %g) where "
            "the plain model fails (max_abs %g): a fusion the exposure blocks is involved%s%s",
            v->instrumented_max_abs, v->plain_max_abs, b->fallback[0] ? "; fallback: " : "",
            b->fallback);
    if (!F->bis) return;
    const onp_bisect_point *p = &b->points[b->first];
    const onp_bisect_local *L = &b->local;
    const char *ref = b->reference == ONP_BISECT_REF_DISABLE ? "ORT-at-disable" : "eager";
    if (b->reference == ONP_BISECT_REF_DISABLE) {
        if (F->nondet)
            add_cause(cs, nd_cause(F), ONP_CONFIDENCE_HIGH, nd_node(F), ND_FIX,
                      "bisect against ORT at opt-level disable compared runs that are not "
                      "reproducible: its first divergent node (%s) is not evidence of an "
                      "optimizer",
                      p->node);
        else
            add_cause(cs, ONP_CAUSE_GRAPH_OPTIMIZATION,
                      go->present ? go->confidence : ONP_CONFIDENCE_LOW, p->node,
                      "run at the highest level that passes (--opt-level) and report upstream",
                      "bisect against ORT at opt-level disable (no eager intermediates): the first "
                      "node where the configuration under test leaves disable is %s (%s), max_abs "
                      "%g",
                      p->node, p->op_type, p->max_abs);
    }
    if (b->fallback[0] && !strcmp(b->fallback, "disable"))
        for (int c = 0; c < ONP_CAUSE_COUNT; c++)
            if (cs->items[c].present && cs->items[c].confidence <= ONP_CONFIDENCE_MEDIUM)
                add_cause(cs, (onp_cause)c, cs->items[c].confidence, NULL, NULL,
                          "bisect: bisected at opt-level disable: %s", b->fallback_note);
    if (!L->ran || !p->node[0]) return; /* an unnamed node matches no cause's node */
    for (int c = 0; c < ONP_CAUSE_COUNT; c++) {
        const onp_cause_item *it = &cs->items[c];
        if (!it->present || strcmp(it->node, p->node)) continue;
        if (L->local) /* the node is certain; an unknown cause stays unknown (low) */
            add_cause(cs, (onp_cause)c,
                      c == ONP_CAUSE_UNKNOWN ? it->confidence : ONP_CONFIDENCE_HIGH, p->node, NULL,
                      "bisect: %s run alone on %s inputs still fails (max_abs %g, %lld "
                      "mismatches): the error is local to it",
                      p->node, ref, L->max_abs, L->mismatches);
        else
            add_cause(cs, (onp_cause)c, it->confidence, p->node, NULL,
                      "bisect: %s run alone on %s inputs agrees (max_abs %g): its error is "
                      "inherited from its inputs (worst input max_abs %g)",
                      p->node, ref, L->max_abs, L->input_max_abs);
    }
}

/* 9b. bisect's node: evidence for every strong cause, the node for those
 * without one. */
static void rule_bisect_node(const facts *F, onp_causes *cs)
{
    if (!F->bis) return;
    const onp_bisect_point *p = &F->bis->points[F->bis->first];
    for (int c = 0; c < ONP_CAUSE_COUNT; c++)
        if (cs->items[c].present && cs->items[c].confidence <= ONP_CONFIDENCE_MEDIUM)
            add_cause(cs, (onp_cause)c, cs->items[c].confidence, p->node, NULL,
                      "bisect: first divergent node %s (%s), output %s%s%s; error grown %.3gx "
                      "over its inputs",
                      p->node, p->op_type, p->value, p->module[0] ? ", module " : "", p->module,
                      p->jump);
}

typedef void (*rule_fn)(const facts *F, onp_causes *cs);

/* The procedure, in order (docs/diagnose.md, "The derivation"). */
static const struct {
    const char *name;
    rule_fn fn;
} rules[] = {
    {"lint", rule_lint},
    {"refused", rule_refused},
    {"determinism", rule_determinism},
    {"shapes", rule_shapes},
    {"batch-invariance", rule_batch},
    {"fixture-dependence", rule_fixture_dependence},
    {"sweep", rule_sweep},
    {"providers", rule_providers},
    {"float-noise", rule_float_noise},
    {"unknown", rule_unknown},
    {"bisect-checks", rule_bisect_checks},
    {"bisect-node", rule_bisect_node},
};

size_t onp_causes_rule_count(void)
{
    return sizeof rules / sizeof *rules;
}

const char *onp_causes_rule_name(size_t i)
{
    return i < onp_causes_rule_count() ? rules[i].name : NULL;
}

// --- the derivation ---------------------------------------------------------------

static void gather(const onp_evidence *ev, facts *F)
{
    memset(F, 0, sizeof *F);
    F->ev = ev;
    F->lint = ev->lint;
    F->pr = ev->probe && ev->probe->ran ? ev->probe : NULL;
    F->sw = ev->sweep;
    F->bis_run = ev->bisect;
    F->bis = ev->bisect && ev->bisect->status == ONP_BISECT_DIVERGES && ev->bisect->first >= 0
                 ? ev->bisect
                 : NULL;
    for (size_t i = 0; i < ev->n_fixtures; i++)
        if (ev->fixtures[i].status == ONP_FIXTURE_FAIL || refused(&ev->fixtures[i]))
            F->numbers_fail = 1;
    if (!ev->fixtures && F->pr) F->numbers_fail = F->pr->fixtures_failed > 0;
    F->nondet = F->pr && !F->pr->deterministic;
    F->any_fail = F->numbers_fail || F->nondet;
    for (int lv = 0; F->sw && lv < ONP_SWEEP_LEVELS; lv++) {
        if (!F->sw->levels[lv].pass) F->any_fail = 1;
        if (F->sw->levels[lv].ran && !F->sw->levels[lv].deterministic) F->nondet = F->any_fail = 1;
    }
    for (size_t c = 0; F->sw && c < F->sw->n_configs; c++)
        if (F->sw->configs[c].available && !F->sw->configs[c].pass) F->any_fail = 1;
    for (size_t i = 0; i < F->lint->n; i++) {
        const onp_lint_finding *f = &F->lint->findings[i];
        if (onp_lint_cause_rank(f, F->any_fail, NULL) < 0) continue;
        F->lint_cause[f->rule->cause]++;
        if (f->rule->severity == ONP_LINT_ERROR) F->lint_err[f->rule->cause]++;
    }
}

int onp_causes_derive(const onp_evidence *ev, onp_causes **out, onp_error *e)
{
    *out = NULL;
    if (!ev || !ev->lint)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "no lint result to derive from");
    onp_causes *cs = calloc(1, sizeof *cs);
    if (!cs) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    for (int c = 0; c < ONP_CAUSE_COUNT; c++) cs->items[c].id = (onp_cause)c;
    facts F;
    gather(ev, &F);
    for (size_t r = 0; r < onp_causes_rule_count(); r++) rules[r].fn(&F, cs);
    for (int conf = 0; conf < ONP_CONFIDENCE_COUNT; conf++)
        for (int c = 0; c < ONP_CAUSE_COUNT; c++)
            if (cs->items[c].present && (int)cs->items[c].confidence == conf)
                cs->order[cs->n++] = c;
    for (int c = 0; c < ONP_CAUSE_COUNT; c++)
        if (c != ONP_CAUSE_FLOAT_NOISE && cs->items[c].present &&
            cs->items[c].confidence <= ONP_CONFIDENCE_MEDIUM)
            cs->strong = 1;
    cs->numbers_fail = F.numbers_fail;
    cs->any_fail = F.any_fail;
    cs->nondeterministic = F.nondet;
    *out = cs;
    return 0;
}

void onp_causes_free(onp_causes *cs)
{
    free(cs);
}
