/*
 * test_causes.c — the cause derivation (causes.h): evidence records made by
 * hand (lint findings from the real rule table, judged fixtures, probe,
 * sweep and bisect results), the causes that must come out, table-driven.
 * Each case states its expectation as a careful engineer would read the
 * evidence; contradictions (a run that is not reproducible) and latent
 * findings (a warning while everything passes) among them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnxparity/causes.h"
#include "testhelp.h"

// --- building evidence ----------------------------------------------------------

#define MAX_F 4

/* One case: what is known, and what must be derived. */
typedef struct tcase {
    const char *what;
    /* lint: up to MAX_F findings, by rule id, at a node ("" none) */
    const char *rule[MAX_F];
    const char *node[MAX_F];
    /* fixtures: 0 none given; else each output's verdict (one output per fixture) */
    int n_fix;
    onp_verdict verdict[3];
    int flipped;            /* a top-1 label flipped on fixture 0 */
    int refused;            /* ORT refused fixture 1 (status error); 2: it crashed instead;
                               3: refused for an input's dtype (dtype_refused) */
    const char *refused_at; /* the node ORT's refusal names (refused 1), or NULL */
    const char *msg0;       /* the first finding's message ("a finding" when NULL) */
    int shape_differs;      /* fixture 1's output came out in another shape */
    int in_shapes_differ;   /* fixture 1's inputs have other shapes than the others' */
    int nan;                /* NaN on one side only in every failing output */
    int flips_in_noise;     /* the flip of fixture 0 is noise-driven (flipped) */
    double gap_rel;         /* failing outputs: |ORT - eager| / scale (0: 1e-4 at scale 0) */
    onp_noise_src noise_src;
    /* probe (0: no probes) */
    int probe;
    int nondet, shape_dep, fixture_dep, batch_fail, batch_shape_error, probe_failed;
    /* sweep (0: none) */
    int sweep;
    int sweep_culprit, sweep_nondet, ep_disagree, sweep_break_at_basic;
    /* bisect (0: none) */
    int bisect;
    const char *bis_node;
    int bis_local, bis_disable;
    const char *bis_op; /* the first divergent node's op type ("X" when NULL) */
    int bis_nan;        /* its value: NaN on one side only */
    size_t bis_region; /* nodes in the local rerun (0: 1, the node alone) */
    /* expected */
    const char *top; /* cause id of the top cause, or NULL: no cause at all */
    const char *top_conf;
    const char *top_node; /* substring of the top cause's node, or NULL */
    int strong;           /* causes->strong */
    const char *absent;   /* a cause id that must not be derived, or NULL */
    const char *absent2;
    int nondet_flag;
    size_t want_explained, want_failing; /* the top cause's explains (0 of 0: not checked) */
    const char *not_latent;              /* a node no latent finding may be at, or NULL */
    int traced; /* 1 + the fixture the export was traced on (evidence traced_fixture); 0: unknown */
    int traced_apart;    /* that fixture is not among the fixtures: its verdict, failing, apart */
    const char *fix_has; /* a substring of the top cause's fix, or NULL */
} tcase;

/* The hand-made results a case points at. */
typedef struct world {
    onp_lint_result lint;
    onp_lint_finding findings[MAX_F];
    onp_fixture_verdict fix[3];
    onp_output_verdict out[3];
    onp_probe_result pr;
    onp_sweep_result sw;
    onp_bisect_result bis;
    onp_bisect_point pt[2];
    int traced;
    onp_fixture_verdict apart; /* the traced fixture judged apart (a shard) */
    onp_output_verdict apart_out;
} world;

static void build(const tcase *c, world *w, onp_evidence *ev)
{
    memset(w, 0, sizeof *w);
    memset(ev, 0, sizeof *ev);
    for (int i = 0; i < MAX_F && c->rule[i]; i++) {
        const onp_lint_rule *r = onp_lint_rule_find(c->rule[i]);
        CHECKF(r != NULL, "%s: no rule %s", c->what, c->rule[i]);
        if (!r) continue;
        onp_lint_finding *f = &w->findings[w->lint.n++];
        f->rule = r;
        f->loc.kind = c->node[i] && c->node[i][0] ? ONP_LINT_LOC_NODE : ONP_LINT_LOC_MODEL;
        f->loc.name = c->node[i] ? c->node[i] : "";
        f->loc.graph = "";
        f->message = (char *)(i == 0 && c->msg0 ? c->msg0 : "a finding");
        w->lint.counts[r->severity]++;
    }
    w->lint.findings = w->findings;
    ev->lint = &w->lint;
    for (int i = 0; i < c->n_fix; i++) {
        onp_output_verdict *x = &w->out[i];
        snprintf(x->name, sizeof x->name, "logits");
        x->compared = 1;
        x->m.shape_ok = x->m.dtype_ok = 1;
        x->j.verdict = c->verdict[i];
        x->j.pass =
            c->verdict[i] == ONP_VERDICT_WITHIN_TOL || c->verdict[i] == ONP_VERDICT_WITHIN_NOISE;
        x->j.noise.src = c->noise_src;
        x->j.gap_max = 1e-4;
        x->j.envelope_max = 5e-4;
        x->j.suggest_atol = 5e-4;
        x->has_topk = c->flipped && i == 0;
        x->tk.flipped = x->has_topk;
        x->noise_flips = x->has_topk && c->flips_in_noise;
        if (c->gap_rel > 0) x->j.scale_max = 2, x->j.gap_max = 2 * c->gap_rel;
        if (!x->j.pass && c->nan) x->m.nan_mismatch = 3;
        if (c->shape_differs && i == 1) {
            x->m.shape_ok = 0;
            x->j.pass = 0;
        }
        x->pass = x->j.pass && !x->tk.flipped;
        onp_fixture_verdict *f = &w->fix[i];
        snprintf(f->dir, sizeof f->dir, "b/test_data_set_%d", i);
        f->index = i;
        f->n_out = 1;
        f->outs = x;
        f->status = x->pass ? ONP_FIXTURE_PASS : ONP_FIXTURE_FAIL;
        snprintf(f->in_shapes, sizeof f->in_shapes, "%s",
                 c->in_shapes_differ && i == 1 ? "[3, 12]" : "[2, 12]");
        if (c->refused && i == 1) {
            x->compared = 0;
            f->status = ONP_FIXTURE_ERROR;
            f->runtime = c->refused == 2 ? "crashed" : NULL;
            f->dtype_refused = c->refused == 3;
            if (c->refused == 3)
                snprintf(f->msg, sizeof f->msg,
                         "input 'x': expected float32 [s0, 12], given float64 [3, 12]");
            else if (c->refused_at)
                snprintf(f->msg, sizeof f->msg,
                         "Run [ORT_FAIL]: Non-zero status code returned while running X node. "
                         "Name:'%s' Status Message: bad shape",
                         c->refused_at);
            else
                snprintf(f->msg, sizeof f->msg, "input 'x': expected [s0, 12], given [3, 16]");
        }
    }
    if (c->n_fix) ev->fixtures = w->fix, ev->n_fixtures = (size_t)c->n_fix;
    if (c->traced) {
        w->traced = c->traced - 1;
        ev->traced_fixture = &w->traced;
    }
    if (c->traced_apart) {
        w->apart_out = w->out[0];
        w->apart_out.j.verdict = ONP_VERDICT_BEYOND_NOISE;
        w->apart_out.j.pass = w->apart_out.pass = 0;
        snprintf(w->apart.dir, sizeof w->apart.dir, "b/test_data_set_%d", w->traced);
        w->apart.index = w->traced;
        w->apart.n_out = 1;
        w->apart.outs = &w->apart_out;
        w->apart.status = ONP_FIXTURE_FAIL;
        ev->traced_verdict = &w->apart;
    }
    if (c->probe) {
        onp_probe_result *p = &w->pr;
        p->ran = 1;
        p->deterministic = !c->nondet;
        p->det_fixture = c->nondet ? 0 : -1;
        snprintf(p->det_output, sizeof p->det_output, "logits");
        p->shape_dependent = c->shape_dep;
        p->fixture_dependent = c->fixture_dep;
        p->batch_tested = 1;
        p->batch_pass = !c->batch_fail;
        p->batch_shape_error = c->batch_shape_error;
        p->fixtures_failed = c->probe_failed;
        ev->probe = p;
    }
    if (c->sweep) {
        onp_sweep_result *s = &w->sw;
        s->first_failing = -1;
        for (int lv = 0; lv < ONP_SWEEP_LEVELS; lv++) {
            s->levels[lv].ran = 1;
            s->levels[lv].pass = 1;
            s->levels[lv].deterministic = 1;
        }
        if (c->sweep_culprit) {
            s->levels[ONP_SWEEP_LEVELS - 1].pass = 0;
            s->searched = 1;
            snprintf(s->culprit, sizeof s->culprit, "ConvAddFusion");
        }
        if (c->sweep_break_at_basic) {
            s->levels[1].pass = 0;
            s->first_failing = 1;
        }
        if (c->sweep_nondet) {
            s->levels[0].deterministic = 0;
            s->levels[0].pass = 0;
            if (!c->sweep_culprit) {
                s->levels[ONP_SWEEP_LEVELS - 1].pass = 0;
                s->searched = 1; /* all fails, disable "passes" by chance */
            }
        }
        s->ep_disagree = c->ep_disagree;
        ev->sweep = s;
    }
    if (c->bisect) {
        onp_bisect_result *b = &w->bis;
        w->pt[0].node = "/a/Conv";
        w->pt[0].op_type = "Conv";
        w->pt[0].value = "/a/Conv_output_0";
        w->pt[0].module = "";
        w->pt[1].node = c->bis_node;
        w->pt[1].op_type = c->bis_op ? c->bis_op : "X";
        w->pt[1].m.nan_mismatch = c->bis_nan;
        w->pt[1].m.expected_dtype = ONP_FLOAT;
        w->pt[1].value = "v";
        w->pt[1].module = "";
        w->pt[1].jump = 1e6;
        b->points = w->pt;
        b->n_points = 2;
        b->status = ONP_BISECT_DIVERGES;
        b->first = 1;
        b->reference = c->bis_disable ? ONP_BISECT_REF_DISABLE : ONP_BISECT_REF_EAGER;
        b->local.ran = 1;
        b->local.local = c->bis_local;
        b->local.n_nodes = c->bis_region ? c->bis_region : 1;
        b->jump_point = 1;
        ev->bisect = b;
    }
}

static const onp_cause_item *find(const onp_causes *cs, const char *id)
{
    for (size_t i = 0; i < cs->n; i++)
        if (!strcmp(onp_cause_name(cs->items[cs->order[i]].id), id))
            return &cs->items[cs->order[i]];
    return NULL;
}

#define PASS3                                                                                      \
    {                                                                                              \
        ONP_VERDICT_WITHIN_TOL, ONP_VERDICT_WITHIN_TOL, ONP_VERDICT_WITHIN_TOL                     \
    }
#define FAIL3                                                                                      \
    {                                                                                              \
        ONP_VERDICT_BEYOND_NOISE, ONP_VERDICT_BEYOND_NOISE, ONP_VERDICT_BEYOND_NOISE               \
    }
#define FAIL1                                                                                      \
    {                                                                                              \
        ONP_VERDICT_WITHIN_TOL, ONP_VERDICT_BEYOND_NOISE, ONP_VERDICT_WITHIN_TOL                   \
    }
#define NOISE3                                                                                     \
    {                                                                                              \
        ONP_VERDICT_WITHIN_NOISE, ONP_VERDICT_WITHIN_TOL, ONP_VERDICT_WITHIN_NOISE                 \
    }
#define F64 ONP_NOISE_FLOAT64

static const tcase cases[] = {
    /* a fixture ORT refuses */
    {.what = "refused shape with a static-dim finding: baked-shape medium, not latent",
     .rule = {"ONP204"},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .top = "baked-shape",
     .top_conf = "high",
     .strong = 1},
    {.what = "refused shape, no finding: baked-shape, high (the refusal is every failure)",
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .top = "baked-shape",
     .top_conf = "high"},
    /* a traced branch, judged without the probes (check) */
    {.what = "a boolean TracerWarning, one fixture passes and one of the same shapes fails: "
             "traced-control-flow medium without the probes, no unknown",
     .rule = {"ONP301"},
     .msg0 = "TracerWarning: Converting a tensor to a Python boolean",
     .n_fix = 3,
     .verdict = {ONP_VERDICT_WITHIN_TOL, ONP_VERDICT_BEYOND_NOISE, ONP_VERDICT_WITHIN_TOL},
     .top = "traced-control-flow",
     .top_conf = "medium",
     .absent = "unknown",
     .fix_has = "torch.where"},
    {.what = "the same, but the failing fixture has other input shapes: no fixture-dependence "
             "evidence, the warning alone stays low",
     .rule = {"ONP301"},
     .msg0 = "TracerWarning: Converting a tensor to a Python boolean",
     .n_fix = 3,
     .verdict = {ONP_VERDICT_WITHIN_TOL, ONP_VERDICT_BEYOND_NOISE, ONP_VERDICT_WITHIN_TOL},
     .in_shapes_differ = 1,
     .top = "traced-control-flow",
     .top_conf = "low"},
    {.what = "refused for an input's dtype: input-dtype high, not a baked shape",
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 3,
     .top = "input-dtype",
     .top_conf = "high",
     .absent = "baked-shape",
     .absent2 = "unknown",
     .want_explained = 1,
     .want_failing = 1,
     .fix_has = "in the dtype the graph declares"},
    {.what = "refused for an input's dtype beside a static-dim finding: still input-dtype, "
             "the finding explains no size",
     .rule = {"ONP204"},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 3,
     .top = "input-dtype",
     .top_conf = "high",
     .absent = "unknown"},
    {.what = "one fixture refused for its dtype, another fails in numbers: input-dtype medium",
     .n_fix = 3,
     .verdict = {ONP_VERDICT_BEYOND_NOISE, ONP_VERDICT_WITHIN_TOL, ONP_VERDICT_WITHIN_TOL},
     .refused = 3,
     .absent = "baked-shape",
     .top = "input-dtype",
     .top_conf = "medium",
     .want_explained = 1,
     .want_failing = 2},
    {.what = "a crash of ORT is no evidence against the export: the warning stays latent",
     .rule = {"ONP204"},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 2,
     .top = NULL},
    /* healthy, nothing at all */
    {.what = "healthy: no cause", .n_fix = 3, .verdict = PASS3, .top = NULL},
    {.what = "healthy with probes and sweep: no cause",
     .n_fix = 3,
     .verdict = PASS3,
     .probe = 1,
     .sweep = 1,
     .top = NULL},
    /* float noise */
    {.what = "within noise, float64: float-noise high, not strong",
     .n_fix = 3,
     .verdict = NOISE3,
     .noise_src = F64,
     .top = "float-noise",
     .top_conf = "high",
     .strong = 0},
    {.what = "within noise, scaled: medium",
     .n_fix = 3,
     .verdict = NOISE3,
     .noise_src = ONP_NOISE_SCALED,
     .top = "float-noise",
     .top_conf = "medium"},
    {.what = "within noise, ORT estimate: low",
     .n_fix = 3,
     .verdict = NOISE3,
     .noise_src = ONP_NOISE_ORT,
     .top = "float-noise",
     .top_conf = "low"},
    {.what = "noise on one output, a defect on another fixture: no float-noise",
     .n_fix = 3,
     .verdict = {ONP_VERDICT_WITHIN_NOISE, ONP_VERDICT_BEYOND_NOISE, ONP_VERDICT_WITHIN_TOL},
     .noise_src = F64,
     .top = "unknown",
     .absent = "float-noise",
     .strong = 0},
    {.what = "within noise but an error-level finding: the finding, no float-noise",
     .rule = {"ONP101"},
     .node = {"/d/Dropout"},
     .n_fix = 3,
     .verdict = NOISE3,
     .noise_src = F64,
     .top = "training-mode",
     .top_conf = "medium",
     .absent = "float-noise",
     .strong = 1},
    /* lint with numbers */
    {.what = "training BN, numbers fail: training-mode high at the BN",
     .rule = {"ONP104"},
     .node = {"/bn/BatchNormalization"},
     .n_fix = 3,
     .verdict = FAIL3,
     .top = "training-mode",
     .top_conf = "high",
     .top_node = "/bn/",
     .strong = 1},
    {.what = "live dropout, numbers agree (ORT removed it): medium, still strong",
     .rule = {"ONP101"},
     .node = {"/d/Dropout"},
     .n_fix = 3,
     .verdict = PASS3,
     .top = "training-mode",
     .top_conf = "medium",
     .strong = 1},
    {.what = "latent: a warning while everything passes is no cause",
     .rule = {"ONP406"},
     .node = {"/Div"},
     .n_fix = 3,
     .verdict = PASS3,
     .top = NULL,
     .absent = "op-semantics"},
    {.what = "latent: two warnings, everything passes",
     .rule = {"ONP406", "ONP202"},
     .node = {"/Div", "/Reshape"},
     .n_fix = 3,
     .verdict = PASS3,
     .top = NULL},
    {.what = "a warning while numbers fail: low, and unknown beside it",
     .rule = {"ONP406"},
     .node = {"/Div"},
     .n_fix = 3,
     .verdict = FAIL1,
     .top = "op-semantics",
     .top_conf = "low",
     .strong = 0},
    {.what = "a warning at bisect's node: high",
     .rule = {"ONP406"},
     .node = {"/Div"},
     .n_fix = 3,
     .verdict = FAIL1,
     .bisect = 1,
     .bis_node = "/Div",
     .bis_local = 1,
     .top = "op-semantics",
     .top_conf = "high",
     .top_node = "/Div",
     .strong = 1},
    {.what = "a Resize that fails alone on eager inputs: op-semantics high there, no unknown",
     .n_fix = 3,
     .verdict = FAIL1,
     .bisect = 1,
     .bis_node = "/up/Resize",
     .bis_op = "Resize",
     .bis_local = 1,
     .top = "op-semantics",
     .top_conf = "high",
     .top_node = "/up/Resize",
     .strong = 1},
    {.what = "a ReduceMax failing alone without NaN: not its NaN semantics, unknown",
     .n_fix = 3,
     .verdict = FAIL1,
     .bisect = 1,
     .bis_node = "/r/ReduceMax",
     .bis_op = "ReduceMax",
     .bis_local = 1,
     .top = "unknown",
     .top_conf = "low",
     .top_node = "/r/ReduceMax"},
    {.what = "a ReduceMax with NaN on one side, in a region of unmapped nodes: op-semantics medium",
     .n_fix = 3,
     .verdict = FAIL1,
     .bisect = 1,
     .bis_node = "/r/ReduceMax",
     .bis_op = "ReduceMax",
     .bis_nan = 2,
     .bis_local = 1,
     .bis_region = 3,
     .top = "op-semantics",
     .top_conf = "medium",
     .top_node = "/r/ReduceMax",
     .strong = 1},
    {.what = "a Resize whose error is inherited from its inputs: not its semantics",
     .n_fix = 3,
     .verdict = FAIL1,
     .bisect = 1,
     .bis_node = "/up/Resize",
     .bis_op = "Resize",
     .top = "unknown",
     .top_conf = "low",
     .top_node = "/up/Resize"},
    {.what = "failing numbers, nothing explains: unknown low at bisect's node",
     .n_fix = 3,
     .verdict = FAIL1,
     .bisect = 1,
     .bis_node = "/x/Gemm",
     .top = "unknown",
     .top_conf = "low",
     .top_node = "/x/Gemm"},
    {.what = "a flipped label alone fails: unknown",
     .n_fix = 1,
     .verdict = PASS3,
     .flipped = 1,
     .top = "unknown"},
    /* probes */
    {.what = "not reproducible: nondeterminism high",
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .nondet = 1,
     .top = "nondeterminism",
     .top_conf = "high",
     .strong = 1,
     .nondet_flag = 1},
    {.what = "not reproducible with a live dropout: training-mode explains it",
     .rule = {"ONP101"},
     .node = {"/d/Dropout"},
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .nondet = 1,
     .top = "training-mode",
     .top_conf = "high",
     .absent = "nondeterminism"},
    {.what = "a random op found by lint: nondeterminism at its node",
     .rule = {"ONP601"},
     .node = {"/RandomNormalLike"},
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .nondet = 1,
     .top = "nondeterminism",
     .top_node = "/RandomNormalLike"},
    {.what = "shape dependence: baked-shape high at the Reshape",
     .rule = {"ONP202"},
     .node = {"/Reshape"},
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .shape_dep = 1,
     .top = "baked-shape",
     .top_conf = "high",
     .top_node = "/Reshape"},
    {.what = "fixture dependence with a TracerWarning: traced-control-flow high",
     .rule = {"ONP301"},
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .fixture_dep = 1,
     .top = "traced-control-flow",
     .top_conf = "high"},
    {.what = "fixture dependence alone: traced-control-flow medium",
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .fixture_dep = 1,
     .top = "traced-control-flow",
     .top_conf = "medium",
     .absent = "unknown"},
    {.what = "fixture dependence confounded by randomness: not traced-control-flow",
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .fixture_dep = 1,
     .nondet = 1,
     .top = "nondeterminism",
     .absent = "traced-control-flow"},
    {.what = "batch invariance broken, numbers fail: training-mode medium (batch statistics)",
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .batch_fail = 1,
     .top = "training-mode",
     .top_conf = "medium",
     .strong = 1},
    {.what = "batch invariance broken, eager agrees: the model mixes samples itself, low",
     .n_fix = 3,
     .verdict = PASS3,
     .probe = 1,
     .batch_fail = 1,
     .top = "training-mode",
     .top_conf = "low",
     .strong = 0},
    {.what = "a single sample refused: baked-shape, high when numbers fail",
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .batch_fail = 1,
     .batch_shape_error = 1,
     .top = "baked-shape",
     .top_conf = "high"},
    {.what = "a single sample refused, numbers pass: baked-shape medium",
     .n_fix = 3,
     .verdict = PASS3,
     .probe = 1,
     .batch_fail = 1,
     .batch_shape_error = 1,
     .top = "baked-shape",
     .top_conf = "medium"},
    {.what = "a single sample refused at a baked Reshape, numbers pass: the finding is the "
             "cause's node, not a latent risk beside it",
     .rule = {"ONP203", "ONP301"},
     .node = {"/Reshape", ""},
     .n_fix = 3,
     .verdict = PASS3,
     .probe = 1,
     .batch_fail = 1,
     .batch_shape_error = 1,
     .top = "baked-shape",
     .top_conf = "medium",
     .top_node = "/Reshape",
     .not_latent = "/Reshape"},
    {.what = "failures follow the shape groups with a baked size finding: not latent either",
     .rule = {"ONP202"},
     .node = {"/Expand"},
     .n_fix = 3,
     .verdict = PASS3,
     .probe = 1,
     .shape_dep = 1,
     .top = "baked-shape",
     .top_node = "/Expand",
     .not_latent = "/Expand"},
    /* sweep */
    {.what = "sweep names an optimizer: graph-optimization high",
     .n_fix = 3,
     .verdict = FAIL3,
     .probe = 1,
     .sweep = 1,
     .sweep_culprit = 1,
     .top = "graph-optimization",
     .top_conf = "high"},
    {.what = "breaks at basic, holds at all: graph-optimization low",
     .n_fix = 3,
     .verdict = PASS3,
     .probe = 1,
     .sweep = 1,
     .sweep_break_at_basic = 1,
     .top = "graph-optimization",
     .top_conf = "low"},
    {.what = "veto: the sweep's levels differ because runs are random, not an optimizer",
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .sweep = 1,
     .sweep_nondet = 1,
     .top = "nondeterminism",
     .top_conf = "high",
     .absent = "graph-optimization",
     .nondet_flag = 1},
    {.what = "veto: bisect against disable on random outputs is not an optimizer",
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .nondet = 1,
     .bisect = 1,
     .bis_node = "/r/Add",
     .bis_disable = 1,
     .top = "nondeterminism",
     .absent = "graph-optimization",
     .nondet_flag = 1},
    {.what = "bisect against disable, reproducible: graph-optimization at its node",
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .bisect = 1,
     .bis_node = "/f/Add",
     .bis_disable = 1,
     .top = "graph-optimization",
     .top_node = "/f/Add"},
    {.what = "providers disagree: execution-provider high",
     .n_fix = 3,
     .verdict = FAIL1,
     .probe = 1,
     .sweep = 1,
     .ep_disagree = 1,
     .top = "execution-provider",
     .top_conf = "high"},
    /* bisect's local rerun */
    {.what = "local node, nothing explains it: unknown stays low, at the node",
     .n_fix = 3,
     .verdict = FAIL1,
     .bisect = 1,
     .bis_node = "/w/Conv",
     .bis_local = 1,
     .top = "unknown",
     .top_conf = "low",
     .top_node = "/w/Conv"},
    {.what = "local at a warning's node lifts it to high",
     .rule = {"ONP402"},
     .node = {"/p/MaxPool"},
     .n_fix = 3,
     .verdict = FAIL1,
     .bisect = 1,
     .bis_node = "/p/MaxPool",
     .bis_local = 1,
     .top = "op-semantics",
     .top_conf = "high",
     .top_node = "/p/MaxPool"},
    {.what = "local only with 22 nodes before it that have no eager value: the warning at "
             "the node is medium, not high (the defect may be any of them)",
     .rule = {"ONP402"},
     .node = {"/p/MaxPool"},
     .n_fix = 3,
     .verdict = FAIL1,
     .bisect = 1,
     .bis_node = "/p/MaxPool",
     .bis_local = 1,
     .bis_region = 23,
     .top = "op-semantics",
     .top_conf = "medium",
     .top_node = "/p/MaxPool"},
    {.what = "error-level BN with bisect elsewhere: still high, bisect's node is evidence",
     .rule = {"ONP104"},
     .node = {"/bn/BatchNormalization"},
     .n_fix = 3,
     .verdict = FAIL3,
     .bisect = 1,
     .bis_node = "/c/Conv",
     .top = "training-mode",
     .top_conf = "high",
     .top_node = "/bn/"},
    {.what = "state mutation recorded, numbers fail: state-mutation",
     .rule = {"ONP701"},
     .n_fix = 3,
     .verdict = FAIL3,
     .top = "state-mutation",
     .top_conf = "high"},
    /* failures by shape, NaN positions, label flips, reduced precision */
    {.what = "an output in another shape, no finding: baked-shape high",
     .n_fix = 3,
     .verdict = PASS3,
     .shape_differs = 1,
     .top = "baked-shape",
     .top_conf = "high"},
    {.what = "an output in another shape, constant Resize sizes: baked-shape at the Resize",
     .rule = {"ONP206", "ONP301"},
     .node = {"/Resize", ""},
     .n_fix = 3,
     .verdict = PASS3,
     .shape_differs = 1,
     .top = "baked-shape",
     .top_conf = "high",
     .top_node = "/Resize"},
    {.what = "ORT refuses at the Gather an unrolled-loop finding sits on: traced-control-flow",
     .rule = {"ONP303", "ONP301"},
     .node = {"/Gather_2", ""},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Gather_2",
     .top = "traced-control-flow",
     .top_conf = "high",
     .top_node = "/Gather_2",
     .absent = "baked-shape"},
    {.what = "unrolled loop refused, and the shape probe fails too: still the loop",
     .rule = {"ONP303"},
     .node = {"/Gather_2"},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Gather_2",
     .probe = 1,
     .shape_dep = 1,
     .batch_fail = 1,
     .batch_shape_error = 1,
     .top = "traced-control-flow",
     .top_conf = "high",
     .top_node = "/Gather_2",
     .absent = "baked-shape"},
    {.what = "a branch decided in Python (boolean TracerWarning) fixed the shapes: "
             "traced-control-flow at the node ORT names, not baked-shape",
     .rule = {"ONP301"},
     .msg0 = "TracerWarning: Converting a tensor to a Python boolean might cause the trace to "
             "be incorrect",
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Reshape_3",
     .top = "traced-control-flow",
     .top_conf = "high",
     .top_node = "/Reshape_3",
     .absent = "baked-shape"},
    {.what = "an integer TracerWarning is a size: baked-shape at the node ORT names",
     .rule = {"ONP301"},
     .msg0 = "TracerWarning: Converting a tensor to a Python integer might cause the trace to "
             "be incorrect",
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Reshape",
     .top = "baked-shape",
     .top_conf = "high",
     .top_node = "/Reshape"},
    {.what = "static by design, every fixture matches it, an unrelated failure: the static "
             "batch stays latent, never the top cause",
     .rule = {"ONP201", "ONP202"},
     .node = {"", "/Reshape"},
     .n_fix = 3,
     .verdict = FAIL1,
     .bisect = 1,
     .bis_node = "/layer3/Conv",
     .bis_local = 1,
     .top = "unknown",
     .top_conf = "low",
     .top_node = "/layer3/Conv",
     .absent = "baked-shape"},
    {.what = "ORT refuses at a Reshape, no finding: baked-shape at the node ORT names",
     .rule = {"ONP301"},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Reshape",
     .top = "baked-shape",
     .top_conf = "high",
     .top_node = "/Reshape"},
    {.what = "ORT refuses at an Add fed by an Expand holding the batch: baked-shape at the Expand",
     .rule = {"ONP202"},
     .node = {"/Expand"},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Add",
     .top = "baked-shape",
     .top_conf = "high",
     .top_node = "/Expand"},
    {.what = "a refusal and a numeric failure: baked-shape explains one of two, medium",
     .n_fix = 3,
     .verdict = {ONP_VERDICT_BEYOND_NOISE, ONP_VERDICT_WITHIN_TOL, ONP_VERDICT_WITHIN_TOL},
     .refused = 1,
     .top_conf = "medium",
     .top = "baked-shape",
     .want_explained = 1,
     .want_failing = 2},
    {.what = "NaN on one side in every failure, NaN-sensitive op: op-semantics high there",
     .rule = {"ONP408"},
     .node = {"/ReduceMax"},
     .n_fix = 3,
     .verdict = FAIL1,
     .nan = 1,
     .top = "op-semantics",
     .top_conf = "high",
     .top_node = "/ReduceMax"},
    {.what = "NaN on one side, no NaN-sensitive op: no op-semantics",
     .n_fix = 3,
     .verdict = FAIL1,
     .nan = 1,
     .top = "unknown",
     .top_conf = "low",
     .absent = "op-semantics"},
    {.what = "labels flip inside the noise, values agree: float-noise, verdict still fails",
     .n_fix = 3,
     .verdict = PASS3,
     .flipped = 1,
     .flips_in_noise = 1,
     .noise_src = F64,
     .top = "float-noise",
     .top_conf = "high",
     .strong = 0,
     .absent = "unknown"},
    {.what = "labels flip beyond the noise: not float noise",
     .n_fix = 3,
     .verdict = PASS3,
     .flipped = 1,
     .noise_src = F64,
     .top = "unknown",
     .absent = "float-noise"},
    {.what = "a float16 Cast and failures within what float16 allows: reduced-precision high",
     .rule = {"ONP416"},
     .node = {"/narrow/Cast"},
     .n_fix = 3,
     .verdict = FAIL3,
     .gap_rel = 1e-3,
     .top = "reduced-precision",
     .top_conf = "high",
     .top_node = "/narrow/Cast",
     .want_explained = 3,
     .want_failing = 3},
    {.what = "a float16 Cast but errors far beyond float16: not reduced-precision",
     .rule = {"ONP416"},
     .node = {"/narrow/Cast"},
     .n_fix = 3,
     .verdict = FAIL3,
     .gap_rel = 0.5,
     .top = "unknown",
     .absent = "reduced-precision"},
    /* tracing fits the graph to the traced input: a failure there is no
     * size or branch fixed at trace time */
    {.what = "ORT refuses the very fixture the export was traced on: unknown at that node, "
             "not baked-shape (a shape computation in the graph is wrong)",
     .rule = {"ONP203"},
     .node = {"/Reshape"},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Reshape",
     .traced = 2,
     .top = "unknown",
     .top_conf = "medium",
     .top_node = "/Reshape",
     .absent = "baked-shape",
     .absent2 = "traced-control-flow",
     .want_explained = 1,
     .want_failing = 1},
    {.what = "... and the batch probe's refusal is no baked batch then either, nor does it make "
             "the size-holding warning a cause",
     .rule = {"ONP203"},
     .node = {"/Reshape"},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Reshape",
     .traced = 2,
     .probe = 1,
     .batch_fail = 1,
     .batch_shape_error = 1,
     .top = "unknown",
     .top_conf = "medium",
     .absent = "baked-shape"},
    {.what = "the same refusal with the export traced on a fixture that runs: baked-shape high",
     .rule = {"ONP203"},
     .node = {"/Reshape"},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Reshape",
     .traced = 1,
     .top = "baked-shape",
     .top_conf = "high",
     .top_node = "/Reshape"},
    {.what = "a boolean TracerWarning while the traced fixture fails too: latent, the node "
             "bisect names on top",
     .rule = {"ONP301"},
     .msg0 = "TracerWarning: Converting a tensor to a Python boolean might cause the trace to "
             "be incorrect",
     .n_fix = 3,
     .verdict = FAIL3,
     .traced = 1,
     .bisect = 1,
     .bis_node = "/norm2/Add_1",
     .top = "unknown",
     .top_node = "/norm2/Add_1",
     .absent = "traced-control-flow"},
    {.what = "traced at size 1 in a dynamic dim (ONP207), the other sizes refused: baked-shape, "
             "and the fix is another traced fixture, not dynamic_axes",
     .rule = {"ONP203", "ONP207"},
     .node = {"/Reshape", ""},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Reshape",
     .traced = 1,
     .top = "baked-shape",
     .top_conf = "high",
     .top_node = "/Reshape",
     .fix_has = "trace_fixture"},
    {.what = "the same refusal without ONP207: the fix is the size-holding finding's",
     .rule = {"ONP203"},
     .node = {"/Reshape"},
     .n_fix = 3,
     .verdict = PASS3,
     .refused = 1,
     .refused_at = "/Reshape",
     .top = "baked-shape",
     .fix_has = "x.size(0)"},
    {.what = "an attribute the forward changes without effect on the outputs (ONP703) beside "
             "a failure: latent, not state-mutation",
     .rule = {"ONP703"},
     .n_fix = 3,
     .verdict = FAIL1,
     .top = "unknown",
     .absent = "state-mutation"},
    {.what = "a buffer the forward changes that no output depends on (ONP704) beside a "
             "failure: latent, not state-mutation",
     .rule = {"ONP704"},
     .n_fix = 3,
     .verdict = FAIL1,
     .top = "unknown",
     .absent = "state-mutation"},
    {.what = "a shard without the traced fixture, judged apart and failing: the TracerWarning "
             "stays latent as in the whole run",
     .rule = {"ONP301"},
     .msg0 = "TracerWarning: Converting a tensor to a Python boolean might cause the trace to "
             "be incorrect",
     .n_fix = 3,
     .verdict = FAIL1,
     .traced = 4,
     .traced_apart = 1,
     .top = "unknown",
     .absent = "traced-control-flow"},
    {.what = "the TracerWarning while only another fixture than the traced one fails: "
             "traced-control-flow stays a cause, medium (the traced fixture passes, one of the "
             "same shapes fails)",
     .rule = {"ONP301"},
     .msg0 = "TracerWarning: Converting a tensor to a Python boolean might cause the trace to "
             "be incorrect",
     .n_fix = 3,
     .verdict = FAIL1,
     .traced = 1,
     .top = "traced-control-flow",
     .top_conf = "medium"},
    {.what = "the same with the failing fixture in other input shapes: low, as the warning "
             "alone",
     .rule = {"ONP301"},
     .msg0 = "TracerWarning: Converting a tensor to a Python boolean might cause the trace to "
             "be incorrect",
     .n_fix = 3,
     .verdict = FAIL1,
     .in_shapes_differ = 1,
     .traced = 1,
     .top = "traced-control-flow",
     .top_conf = "low"},
    {.what = "latent only: a float16 Cast and an unrolled loop while everything passes",
     .rule = {"ONP416", "ONP303"},
     .node = {"/narrow/Cast", "/Gather_2"},
     .n_fix = 3,
     .verdict = PASS3,
     .top = NULL},
};

static void test_derivation_table(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const tcase *c = &cases[i];
        world w;
        onp_evidence ev;
        build(c, &w, &ev);
        onp_causes *cs = NULL;
        onp_error e;
        CHECKF(onp_causes_derive(&ev, &cs, &e) == 0, "%s: derive failed", c->what);
        if (!cs) continue;
        if (!c->top) {
            CHECKF(cs->n == 0, "%s: %zu causes, top %s", c->what, cs->n,
                   cs->n ? onp_cause_name(cs->items[cs->order[0]].id) : "-");
        } else {
            const onp_cause_item *t = cs->n ? &cs->items[cs->order[0]] : NULL;
            CHECKF(t && !strcmp(onp_cause_name(t->id), c->top), "%s: top %s, want %s", c->what,
                   t ? onp_cause_name(t->id) : "none", c->top);
            if (t && c->top_conf)
                CHECKF(!strcmp(onp_confidence_name(t->confidence), c->top_conf),
                       "%s: confidence %s, want %s", c->what, onp_confidence_name(t->confidence),
                       c->top_conf);
            if (t && c->top_node)
                CHECKF(strstr(t->node, c->top_node) != NULL, "%s: node '%s', want '%s'", c->what,
                       t->node, c->top_node);
            if (t) CHECKF(t->n_evidence > 0 && t->fix[0], "%s: no evidence or fix", c->what);
            if (t && c->fix_has)
                CHECKF(strstr(t->fix, c->fix_has) != NULL, "%s: fix '%s', want '%s'", c->what,
                       t->fix, c->fix_has);
            if (t && c->want_failing)
                CHECKF(t->n_explained == c->want_explained && t->n_failing == c->want_failing,
                       "%s: explains %zu of %zu, want %zu of %zu", c->what, t->n_explained,
                       t->n_failing, c->want_explained, c->want_failing);
        }
        if (c->strong >= 0 && (c->top_conf || !c->top))
            CHECKF(cs->strong ==
                       (c->strong || (c->top && c->top_conf && strcmp(c->top, "float-noise") &&
                                      strcmp(c->top_conf, "low"))),
                   "%s: strong %d", c->what, cs->strong);
        if (c->absent) CHECKF(!find(cs, c->absent), "%s: %s derived", c->what, c->absent);
        if (c->absent2) CHECKF(!find(cs, c->absent2), "%s: %s derived", c->what, c->absent2);
        if (c->nondet_flag) CHECK(cs->nondeterministic);
        for (size_t k = 0; c->not_latent && k < cs->n_latent; k++)
            CHECKF(strcmp(cs->latent[k].finding->loc.name, c->not_latent), "%s: %s latent", c->what,
                   c->not_latent);
        if (c->not_latent) CHECKF(cs->n_latent_total == cs->n_latent, "%s: latent cut", c->what);
        onp_causes_free(cs);
    }
    CHECK(sizeof cases / sizeof *cases >= 30);
}

/* Latent findings: listed apart while nothing fails, causes once it does. */
static void test_latent(void)
{
    tcase pass = {.what = "latent",
                  .rule = {"ONP406", "ONP202"},
                  .node = {"/Div", "/Reshape"},
                  .n_fix = 3,
                  .verdict = PASS3};
    world w;
    onp_evidence ev;
    onp_causes *cs;
    onp_error e;
    build(&pass, &w, &ev);
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    CHECK(cs->n == 0 && cs->n_latent == 2 && cs->n_latent_total == 2);
    CHECK(!strcmp(cs->latent[0].finding->loc.name, "/Div"));
    onp_causes_free(cs);
    tcase fail = pass;
    fail.verdict[1] = ONP_VERDICT_BEYOND_NOISE;
    build(&fail, &w, &ev);
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    /* op-semantics low; the batch constant stays latent: no fixture fails by shape */
    CHECK(find(cs, "op-semantics") && !find(cs, "baked-shape"));
    CHECK(cs->n_latent == 1 && !strcmp(cs->latent[0].finding->loc.name, "/Reshape"));
    onp_causes_free(cs);
}

/* A node of a hand-built graph (domain "", one attribute or none); ins,
 * outs and attr must outlive it. */
static onp_node mknode(const char *name, const char *op, const char **ins, size_t n_in,
                       const char **outs, size_t n_out, onp_attr *attr)
{
    return (onp_node){.name = name,
                      .op_type = op,
                      .domain = "",
                      .n_inputs = n_in,
                      .inputs = ins,
                      .n_outputs = n_out,
                      .outputs = outs,
                      .n_attrs = attr ? 1 : 0,
                      .attrs = attr};
}

/* Rule 1b names the TopK only for an output computed from it, through the
 * graph's data flow: here the output comes out of an If whose branch reads
 * the TopK's indices from the outer scope (no input of the If itself), and
 * an output of an independent Relu is no tie's doing. */
static void test_tie_rule_through_subgraph(void)
{
    const char *topk_in[] = {"x", "k"}, *topk_out[] = {"vals", "idx"};
    const char *gather_in[] = {"x", "idx"}, *gather_out[] = {"picked"};
    const char *if_in[] = {"cond"}, *if_out[] = {"out"};
    const char *relu_in[] = {"x"}, *relu_out[] = {"other"};
    onp_node branch_nodes[] = {mknode("g", "Gather", gather_in, 2, gather_out, 1, NULL)};
    onp_graph branch = {.name = "then", .n_nodes = 1, .nodes = branch_nodes};
    onp_attr if_attr = {.name = "then_branch", .type = ONP_ATTR_GRAPH, .g = &branch};
    onp_node nodes[] = {mknode("topk", "TopK", topk_in, 2, topk_out, 2, NULL),
                        mknode("if", "If", if_in, 1, if_out, 1, &if_attr),
                        mknode("relu", "Relu", relu_in, 1, relu_out, 1, NULL)};
    onp_graph g = {.name = "main", .n_nodes = 3, .nodes = nodes};
    tcase c = {.what = "tie through an If",
               .rule = {"ONP401"},
               .node = {"topk"},
               .n_fix = 3,
               .verdict = FAIL1,
               .shape_differs = 1,
               .traced = 2};
    /* the TopK inside the branch instead (lint's location: its index in
     * the branch, the path "NODE/ATTR" of a node whose name holds '/'):
     * the If holding it is what the output is computed from */
    const char *inner_out[] = {"t_vals", "t_idx"}, *inner_g_in[] = {"x", "t_idx"};
    onp_node inner_nodes[] = {mknode("topk", "TopK", topk_in, 2, inner_out, 2, NULL),
                              mknode("g", "Gather", inner_g_in, 2, gather_out, 1, NULL)};
    onp_graph inner = {.name = "then", .n_nodes = 2, .nodes = inner_nodes};
    onp_attr inner_attr = {.name = "then_branch", .type = ONP_ATTR_GRAPH, .g = &inner};
    onp_node nodes2[] = {mknode("/det/If_3", "If", if_in, 1, if_out, 1, &inner_attr), nodes[2]};
    onp_graph g2 = {.name = "main", .n_nodes = 2, .nodes = nodes2};
    const char *names[] = {"out", "other", "out", "other"};
    for (int i = 0; i < 4; i++) {
        world w;
        onp_evidence ev;
        onp_causes *cs;
        onp_error e;
        build(&c, &w, &ev);
        w.findings[0].loc.index = 0;
        if (i >= 2) w.findings[0].loc.graph = "/det/If_3/then_branch";
        w.out[1].j.vacuous = ONP_VACUOUS_CONSTANT;
        snprintf(w.out[1].name, sizeof w.out[1].name, "%s", names[i]);
        ev.graph = i < 2 ? &g : &g2;
        CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
        const onp_cause_item *op = find(cs, "op-semantics");
        int named = op && op->confidence == ONP_CONFIDENCE_MEDIUM && !strcmp(op->node, "topk");
        CHECKF(named == (i % 2 == 0), "case %d, output '%s': op-semantics medium at the TopK %s", i,
               names[i], i % 2 == 0 ? "missing" : "named for an independent branch");
        onp_causes_free(cs);
    }
}

static void test_rules_and_names(void)
{
    CHECK(onp_causes_rule_count() >= 10);
    CHECK(!strcmp(onp_causes_rule_name(0), "lint"));
    CHECK(onp_causes_rule_name(onp_causes_rule_count()) == NULL);
    CHECK(!strcmp(onp_confidence_name(ONP_CONFIDENCE_MEDIUM), "medium"));
    CHECK(!strcmp(onp_confidence_name(ONP_CONFIDENCE_COUNT), "?"));
    CHECK(!strcmp(onp_cause_name(ONP_CAUSE_FLOAT_NOISE), "float-noise"));
    CHECK(!strcmp(onp_cause_name(ONP_CAUSE_REDUCED_PRECISION), "reduced-precision"));
    onp_causes *cs = (onp_causes *)1;
    onp_error e;
    onp_evidence ev;
    memset(&ev, 0, sizeof ev);
    CHECK(onp_causes_derive(&ev, &cs, &e) == -1 && cs == NULL);
    onp_causes_free(NULL);
}

/* docs/diagnose.md "The derivation, as a table" names every rule, in the
 * order the code runs them (run from the repository root, as run_unit.sh
 * does). */
static void test_docs_table_matches_code(void)
{
    FILE *f = fopen("docs/diagnose.md", "r");
    CHECKF(f != NULL, "docs/diagnose.md: not found (run from the repository root)");
    if (!f) return;
    char line[4096];
    int in_table = 0;
    size_t next = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "### The derivation, as a table"))
            in_table = 1;
        else if (in_table && !strncmp(line, "###", 3))
            break;
        if (!in_table || line[0] != '|') continue;
        const char *a = strchr(line + 1, '|');
        const char *q = a ? strchr(a, '`') : NULL;
        const char *z = q ? strchr(q + 1, '`') : NULL;
        if (!z || strchr(a + 1, '|') < q) continue; /* the header, the rule */
        const char *want = onp_causes_rule_name(next);
        CHECKF(want && (size_t)(z - q - 1) == strlen(want) && !strncmp(q + 1, want, strlen(want)),
               "docs/diagnose.md row %zu names '%.*s', the code runs '%s'", next, (int)(z - q - 1),
               q + 1, want ? want : "(no more rules)");
        next++;
    }
    fclose(f);
    CHECKF(next == onp_causes_rule_count(), "docs/diagnose.md lists %zu rules, the code %zu", next,
           onp_causes_rule_count());
}

TEST_MAIN(test_derivation_table, test_latent, test_tie_rule_through_subgraph, test_rules_and_names,
          test_docs_table_matches_code)
