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

#include "model/dataflow.h"

static const char *const confidence_names[] = {"high", "medium", "low"};
_Static_assert(sizeof confidence_names / sizeof *confidence_names == ONP_CONFIDENCE_COUNT,
               "confidence_names");

const char *onp_confidence_name(onp_confidence c)
{
    return (unsigned)c < ONP_CONFIDENCE_COUNT ? confidence_names[c] : "?";
}

int onp_confidence_from_name(const char *name, onp_confidence *out)
{
    for (int c = 0; name && c < ONP_CONFIDENCE_COUNT; c++)
        if (!strcmp(name, confidence_names[c])) {
            *out = (onp_confidence)c;
            return 0;
        }
    return -1;
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
    int shape_evidence;               /* a fixture fails by shape, or a probe saw shapes matter */
    /* the fixtures failing by shape (shape_failure), counted once */
    size_t n_failing, n_shape;
    const onp_fixture_verdict *shape_first; /* the first of them, or NULL */
    int shape_kind;                         /* its shape_failure: 1 refused, 2 an output's shape */
    size_t shape_out;                       /* kind 2: that output */
    char refused_at[256];                   /* the node ORT names in the first refusal, or "" */
    /* what explains a fixture failing by shape: baked-shape, or the cause of
     * a finding on the node ORT names in its refusal (an unrolled loop) */
    onp_cause shape_cause;
    char shape_node[256]; /* the node holding the fixed size, or "" */
    /* the fixture the export was traced on (evidence traced_fixture): NULL
     * when not known or not judged; whether it fails, and by shape */
    const onp_fixture_verdict *traced;
    int traced_fails, traced_shape;
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

/* Record that cause `id` explains n of the m failing fixtures (the most
 * any of its rules stated). */
static void explains(onp_causes *cs, onp_cause id, size_t n, size_t m)
{
    onp_cause_item *c = &cs->items[id];
    if (n > c->n_explained || !c->n_failing) c->n_explained = n, c->n_failing = m;
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
    /* bisect's node closes a region of nodes without eager values: the error
     * is in that region, so a warning at the node is likely, not certain */
    int region = F->bis && F->bis->local.ran && F->bis->local.n_nodes > 1;
    /* bisect proved the error starts at its node alone: fed eager's values,
     * that one node diverges by itself */
    int alone = fd && F->bis->local.ran && F->bis->local.local && F->bis->local.n_nodes == 1;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < l->n; i++) {
            const onp_lint_finding *f = &l->findings[i];
            int rank = onp_lint_cause_rank(f, F->any_fail, fd);
            if (rank == 0 && region && f->rule->severity == ONP_LINT_WARNING) rank = 1;
            if ((f->loc.kind == ONP_LINT_LOC_NODE) != (pass == 0)) continue;
            /* where the error provably starts at one node, a risk at another
             * node of the main graph explains none of it (a warning at that
             * node ranks high above; a source-located one, such as a traced
             * branch, can still have made that node what it is) */
            if (alone && rank > 0 && f->rule->severity == ONP_LINT_WARNING &&
                f->loc.kind == ONP_LINT_LOC_NODE && !(f->loc.graph && f->loc.graph[0]) &&
                f->loc.name && strcmp(f->loc.name, fd))
                rank = -1;
            /* a narrowing Cast explains only errors of its size: rule 7c decides */
            if (f->rule->cause == ONP_CAUSE_REDUCED_PRECISION) rank = -1;
            /* a static or baked size explains only failures where shapes matter
             * (a fixture of another shape, a probe), or the node bisect names:
             * a static-by-design export whose fixtures all match it keeps the
             * warning latent beside an unrelated failure */
            if (f->rule->cause == ONP_CAUSE_BAKED_SHAPE && f->rule->severity == ONP_LINT_WARNING &&
                !F->shape_evidence && rank > 0)
                rank = -1;
            /* a branch fixed at trace time is the right branch for the traced
             * fixture: when that fixture fails too, something else is wrong
             * (the warning stays latent unless bisect names its node) */
            if (f->rule->cause == ONP_CAUSE_TRACED_CONTROL_FLOW &&
                f->rule->severity == ONP_LINT_WARNING && F->traced_fails && rank > 0)
                rank = -1;
            /* a state change the capture reran without effect on the
             * outputs (an attribute: ONP703; a parameter or buffer no
             * output is computed from: ONP704; with an effect it is ONP701)
             * explains no numbers: a risk for later calls, latent */
            if ((!strcmp(f->rule->id, "ONP703") || !strcmp(f->rule->id, "ONP704")) && rank > 0)
                rank = -1;
            if (rank < 0) {
                /* the node the shape evidence (a fixture failing by shape, a
                 * probe) is put on explains that evidence: no latent risk */
                if (F->shape_evidence && f->loc.kind == ONP_LINT_LOC_NODE && F->shape_node[0] &&
                    f->loc.name && !strcmp(f->loc.name, F->shape_node))
                    continue;
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

/* The node ONNX Runtime names in a run failure ("... while running Reshape
 * node. Name:'/Reshape' Status Message: ..."), into out; 0 when none. */
static int ort_failed_node(const char *msg, char *out, size_t n)
{
    static const char key[] = "node. Name:'";
    const char *p = strstr(msg, key);
    if (!p) return 0;
    p += sizeof key - 1;
    const char *q = strchr(p, '\'');
    if (!q || q == p) return 0;
    snprintf(out, n, "%.*s", (int)(q - p), p);
    return 1;
}

/* A warning- or error-level finding located at node `node`, or NULL. */
static const onp_lint_finding *finding_at(const onp_lint_result *l, const char *node)
{
    for (size_t i = 0; i < l->n; i++) {
        const onp_lint_finding *f = &l->findings[i];
        if (f->rule->severity != ONP_LINT_INFO && f->loc.kind == ONP_LINT_LOC_NODE &&
            !strcmp(f->loc.name, node))
            return f;
    }
    return NULL;
}

/* The first finding of rule `id` at any severity (infos included), or NULL. */
static const onp_lint_finding *finding_of(const onp_lint_result *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->findings[i].rule->id, id)) return &l->findings[i];
    return NULL;
}

/* The capture's determinism finding (lint ONP602, from parity.json
 * determinism: eager reruns differed; not state drift), or NULL. */
static const onp_lint_finding *capture_nondeterministic(const onp_lint_result *l)
{
    return finding_of(l, "ONP602");
}

/* A TracerWarning of a tensor made a Python boolean: a branch resolved at
 * trace time (an integer or len() is a size, a boolean is a path). */
static const onp_lint_finding *traced_branch(const onp_lint_result *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->findings[i].rule->id, "ONP301") &&
            strstr(l->findings[i].message, "Python boolean"))
            return &l->findings[i];
    return NULL;
}

static int failing(const onp_fixture_verdict *f)
{
    return f->status == ONP_FIXTURE_FAIL || refused(f);
}

static const char *base(const char *dir)
{
    const char *slash = strrchr(dir, '/');
    return slash ? slash + 1 : dir;
}

/* How fixture f fails by shape: 1 ORT refused it, 2 an output came out in
 * another shape than eager's; 0 not by shape. */
static int shape_failure(const onp_fixture_verdict *f, size_t *out)
{
    if (refused(f)) return f->dtype_refused ? 0 : 1; /* a dtype is no size fixed at export */
    if (f->status != ONP_FIXTURE_FAIL) return 0;
    for (size_t k = 0; k < f->n_out; k++)
        if (f->outs[k].compared && !f->outs[k].m.shape_ok) {
            *out = k;
            return 2;
        }
    return 0;
}

static const char *const SHAPE_FIX =
    "declare the varying dims dynamic (dynamic_axes / dynamic_shapes, or capture with "
    "dynamic_axes=\"auto\") and compute sizes from the tensor (x.flatten(1), "
    "x.view(x.size(0), -1)), never int(), len() or literals";

static const char TRACED_SHAPE_FIX[] =
    "find where the graph computes that shape: onnxparity bisect (the first value off eager), "
    "onnxparity sweep (an optimization level that breaks it), or the node's shape inputs against "
    "the eager sizes; dynamic_axes cannot fix a graph that refuses its own traced input";

/* Whether graph value `v` is computed from the main graph's node `node`
 * (its index), through the outer-scope values of subgraphs too
 * (model/dataflow.h).  1 yes, 0 no, -1 not known (no graph; out of
 * memory). */
static int computed_from(const onp_graph *g, const char *v, int64_t node)
{
    if (!g || node < 0 || (size_t)node >= g->n_nodes) return -1;
    unsigned char *up = calloc(g->n_nodes, 1);
    int found = up && !onp_graph_upstream(g, &v, 1, up) ? up[node] : -1;
    free(up);
    return found;
}

/* The main graph's node whose subgraph lint's location path `path` starts
 * in ("NODE/ATTR..." with NODE the node's name, or op_type#index: lint.c),
 * or -1.  Node names hold '/' themselves, so each node's label is matched
 * as a prefix followed by one of its graph attributes' names. */
static int64_t main_node_of(const onp_graph *g, const char *path)
{
    char label[600];
    for (size_t i = 0; g && i < g->n_nodes; i++) {
        const onp_node *nd = &g->nodes[i];
        if (nd->name[0])
            snprintf(label, sizeof label, "%s", nd->name);
        else
            snprintf(label, sizeof label, "%s#%zu", nd->op_type, i);
        size_t n = strlen(label);
        if (strncmp(path, label, n) || path[n] != '/') continue;
        const char *rest = path + n + 1;
        for (size_t a = 0; a < nd->n_attrs; a++) {
            const onp_attr *at = &nd->attrs[a];
            size_t an = strlen(at->name);
            if ((at->g || at->n_graphs) && !strncmp(rest, at->name, an) &&
                (!rest[an] || rest[an] == '/' || rest[an] == '['))
                return (int64_t)i;
        }
    }
    return -1;
}

/* The ONP401 finding (a TopK whose indices are used) that output `name` is
 * computed from: the TopK's node, or for a TopK inside a subgraph the main
 * graph's node holding it (an If, a Loop).  With no graph (a caller without
 * the model), the first such finding, as before the data flow was known.
 * NULL when none. */
static const onp_lint_finding *tied_topk_of(const facts *F, const char *name)
{
    for (size_t i = 0; i < F->lint->n; i++) {
        const onp_lint_finding *t = &F->lint->findings[i];
        if (strcmp(t->rule->id, "ONP401") || t->loc.kind != ONP_LINT_LOC_NODE) continue;
        if (!F->ev->graph) return t;
        int64_t node = t->loc.graph && t->loc.graph[0] ? main_node_of(F->ev->graph, t->loc.graph)
                                                       : t->loc.index;
        if (computed_from(F->ev->graph, name, node) == 1) return t;
    }
    return NULL;
}

/* 1b, a size chosen among exact ties: a graph whose TopK indices are used
 * (lint ONP401) fails by shape on its own traced input, and an output that
 * comes out in another shape holds, in eager, one value in every row (every
 * score the same: the values TopK chose among tie exactly) and is computed
 * from that TopK (the graph's data flow; a size that differs on an
 * independent branch is no tie's doing).  ONNX keeps the lower index among
 * equal values, torch promises no order, so other elements are selected and
 * what follows (NonMaxSuppression, a threshold) keeps another count.
 * op-semantics, medium: the numbers show the ties, not which tie ORT broke
 * otherwise.  1 when added. */
static int tie_selected_size(const facts *F, onp_causes *cs, size_t n_shape, size_t n_fail)
{
    if (!finding_of(F->lint, "ONP401")) return 0;
    for (size_t i = 0; i < F->ev->n_fixtures; i++) {
        const onp_fixture_verdict *f = &F->ev->fixtures[i];
        if (f->status != ONP_FIXTURE_FAIL) continue;
        for (size_t k = 0; k < f->n_out; k++) {
            const onp_output_verdict *o = &f->outs[k];
            if (!o->compared || o->m.shape_ok || o->j.vacuous != ONP_VACUOUS_CONSTANT) continue;
            const onp_lint_finding *topk = tied_topk_of(F, o->name);
            if (!topk) continue;
            explains(cs, ONP_CAUSE_OP_SEMANTICS, n_shape, n_fail);
            add_cause(cs, ONP_CAUSE_OP_SEMANTICS, ONP_CONFIDENCE_MEDIUM, topk->loc.name,
                      topk->rule->fix,
                      "%zu of %zu failing fixture(s) fail by shape on the graph's own traced "
                      "input, and in %.120s eager's %.200s holds one value in every row: the "
                      "values chosen among tie exactly; lint ONP401 at %s: ONNX keeps the lower "
                      "index among equal values and torch promises no order, so other elements "
                      "are selected and what follows keeps another count",
                      n_shape, n_fail, base(f->dir), o->name, topk->loc.name);
            return 1;
        }
    }
    return 0;
}

/* 1b. fixtures that fail by shape (ORT refuses them, or an output comes out
 * in another shape) while eager ran them: the graph holds a size fixed at
 * export.  High when that explains every failing fixture.  The node is the
 * one ORT names, else a baked-shape finding's; when ORT names a node that a
 * finding of another cause sits on (an unrolled loop's Gather), that cause
 * explains the refusal instead. */
static void rule_shape_failures(const facts *F, onp_causes *cs)
{
    size_t n_fail = F->n_failing, n_shape = F->n_shape, out = F->shape_out;
    const onp_fixture_verdict *first = F->shape_first;
    int kind = F->shape_kind;
    const char *node = F->refused_at;
    if (!n_shape) return;
    onp_confidence conf = n_shape == n_fail ? ONP_CONFIDENCE_HIGH : ONP_CONFIDENCE_MEDIUM;
    if (F->traced_shape) { /* the graph cannot take the input it was traced on */
        int tied = tie_selected_size(F, cs, n_shape, n_fail);
        explains(cs, ONP_CAUSE_UNKNOWN, n_shape, n_fail);
        add_cause(cs, ONP_CAUSE_UNKNOWN, tied ? ONP_CONFIDENCE_LOW : ONP_CONFIDENCE_MEDIUM,
                  node[0] ? node : NULL,
                  TRACED_SHAPE_FIX,
                  "%zu of %zu failing fixture(s) fail by shape, among them %.120s, the fixture "
                  "the export was traced on: no size was fixed by tracing (the trace fits that "
                  "input); a shape computation inside the graph is wrong%s%s",
                  n_shape, n_fail, base(F->traced->dir),
                  node[0] ? "; ONNX Runtime refused at " : "", node);
        return;
    }
    const onp_lint_finding *on = node[0] ? finding_at(F->lint, node) : NULL;
    explains(cs, F->shape_cause, n_shape, n_fail);
    if (F->shape_cause != ONP_CAUSE_BAKED_SHAPE) {
        const onp_lint_finding *why = on ? on : traced_branch(F->lint);
        add_cause(cs, F->shape_cause, conf, F->shape_node, why ? why->rule->fix : NULL,
                  "%zu of %zu failing fixture(s) fail by shape (first: %.120s%s%s), and lint "
                  "%s %s%s%s: %.300s",
                  n_shape, n_fail, base(first->dir), node[0] ? ", refused at " : "", node,
                  why ? why->rule->id : "?", why ? why->rule->name : "?",
                  on ? " sits on that node" : "", on ? "" : " (a branch fixed at trace time)",
                  why ? why->message : "");
        return;
    }
    const char *at = F->shape_node[0] ? F->shape_node : NULL;
    /* traced at size 1 in a dynamic dim: the dim was declared dynamic and
     * specialized anyway; the fix is another traced fixture */
    const onp_lint_finding *one = finding_of(F->lint, "ONP207");
    const char *fix = one ? one->rule->fix : SHAPE_FIX;
    if (kind == 1)
        add_cause(cs, ONP_CAUSE_BAKED_SHAPE, conf, at, fix,
                  "%zu of %zu failing fixture(s) fail by shape; ONNX Runtime refused %.120s: "
                  "%.400s",
                  n_shape, n_fail, base(first->dir), first->msg);
    else
        add_cause(cs, ONP_CAUSE_BAKED_SHAPE, conf, at, fix,
                  "%zu of %zu failing fixture(s) fail by shape; in %.120s output %.200s comes "
                  "out in another shape than eager's",
                  n_shape, n_fail, base(first->dir), first->outs[out].name);
    if (one) /* whichever finding lent the cause its fix first, this one is the fix */
        snprintf(cs->items[ONP_CAUSE_BAKED_SHAPE].fix, sizeof cs->items[0].fix, "%s", fix);
}

static const char INPUT_DTYPE_FIX[] =
    "feed every input in the dtype the graph declares (onnxparity inspect MODEL lists them; "
    "numpy: a.astype(np.float32), torch: x.float()); the export fixes each input's dtype at "
    "trace time, so a model that must take another dtype needs an export traced on it";

/* 1b'. fixtures ONNX Runtime refuses because an input comes in another
 * dtype than the graph declares (float64 data for a float32 model): no
 * size was fixed, so not baked-shape; the fixture, or the dtype the export
 * fixed, is the cause.  High when that is every failing fixture. */
static void rule_input_dtype(const facts *F, onp_causes *cs)
{
    const onp_fixture_verdict *first = NULL;
    size_t n = 0;
    for (size_t i = 0; i < F->ev->n_fixtures; i++) {
        const onp_fixture_verdict *f = &F->ev->fixtures[i];
        if (!refused(f) || !f->dtype_refused) continue;
        if (!first) first = f;
        n++;
    }
    if (!n) return;
    explains(cs, ONP_CAUSE_INPUT_DTYPE, n, F->n_failing);
    add_cause(cs, ONP_CAUSE_INPUT_DTYPE,
              n == F->n_failing ? ONP_CONFIDENCE_HIGH : ONP_CONFIDENCE_MEDIUM, NULL,
              INPUT_DTYPE_FIX,
              "%zu of %zu failing fixture(s) feed an input in another dtype than the graph "
              "declares; ONNX Runtime refused %.120s: %.400s",
              n, F->n_failing, base(first->dir), first->msg);
}

/* 1c. NaN where eager has a number, or the reverse, on the outputs of a
 * model with a NaN-sensitive operator (lint ONP408, an info while nothing
 * fails): the runtime's kernel treats NaN otherwise. */
static void rule_nan(const facts *F, onp_causes *cs)
{
    const onp_lint_finding *nf = finding_of(F->lint, "ONP408");
    if (!nf || F->nondet) return;
    size_t n_fail = 0, n_nan = 0;
    const onp_fixture_verdict *first = NULL;
    const onp_output_verdict *fx = NULL;
    for (size_t i = 0; i < F->ev->n_fixtures; i++) {
        const onp_fixture_verdict *f = &F->ev->fixtures[i];
        if (!failing(f)) continue;
        n_fail++;
        for (size_t k = 0; k < f->n_out; k++)
            if (f->outs[k].compared && f->outs[k].m.nan_mismatch > 0) {
                n_nan++;
                if (!first) first = f, fx = &f->outs[k];
                break;
            }
    }
    if (!n_nan) return;
    explains(cs, ONP_CAUSE_OP_SEMANTICS, n_nan, n_fail);
    add_cause(cs, ONP_CAUSE_OP_SEMANTICS,
              n_nan == n_fail ? ONP_CONFIDENCE_HIGH : ONP_CONFIDENCE_MEDIUM,
              nf->loc.kind == ONP_LINT_LOC_NODE ? nf->loc.name : NULL, nf->rule->fix,
              "%zu of %zu failing fixture(s) hold NaN on one side only (%.120s output %.200s: "
              "%lld values) and lint %s %s: %.300s",
              n_nan, n_fail, base(first->dir), fx->name, (long long)fx->m.nan_mismatch,
              nf->rule->id, nf->rule->name, nf->message);
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

/* 2b. determinism as the capture saw it: its rerun of a fixture from the
 * restored state gave other eager outputs (parity.json determinism, lint
 * ONP602).  check has no probe to rerun: this is its evidence.  With a
 * random op in the graph or a live Dropout (lint), that cause at its node;
 * else the eager reference itself moves (reference).  High: the capture
 * measured it; the failing fixtures are not evidence of a defect. */
static void rule_capture_determinism(const facts *F, onp_causes *cs)
{
    const onp_lint_finding *f = capture_nondeterministic(F->lint);
    if (!f || !F->numbers_fail) return;
    int in_graph = F->lint_cause[ONP_CAUSE_NONDETERMINISM] || F->lint_err[ONP_CAUSE_TRAINING_MODE];
    onp_cause c = in_graph ? nd_cause(F) : ONP_CAUSE_REFERENCE;
    explains(cs, c, F->n_failing, F->n_failing);
    add_cause(
        cs, c, ONP_CONFIDENCE_HIGH, in_graph ? nd_node(F) : NULL, in_graph ? ND_FIX : f->rule->fix,
        "capture: its determinism rerun found eager not reproducible (%.300s)%s", f->message,
        in_graph ? "; the graph draws random values too: outputs cannot match run to run" : "");
}

/* 3. shape dependence (the node from a baked-shape finding). */
static int size_specialised(const facts *F);

static void rule_shapes(const facts *F, onp_causes *cs)
{
    if (F->pr && F->pr->shape_dependent && !size_specialised(F)) /* else rule 3b's */
        add_cause(cs, F->shape_cause, ONP_CONFIDENCE_HIGH, F->shape_node[0] ? F->shape_node : NULL,
                  "declare the varying dims dynamic (dynamic_axes={'x': {0: 'batch'}}) and compute "
                  "sizes from the tensor: x.flatten(1) or x.view(x.size(0), -1), never literals",
                  "probe (shapes): %s", F->pr->shape_note);
}

/* Whether a size was decided at export inside a graph that takes every
 * shape: no fixture refused or come out in another shape, the traced
 * fixture passes, every failing fixture has other input shapes than it, no
 * baked-shape finding claims it, runs reproducible.  The dims were declared dynamic,
 * yet the graph keeps the traced path: torch.export specialised a branch on a size (`if x.shape[1]
 * > 8`), or a size became a Python number. */
static int size_specialised(const facts *F)
{
    const onp_fixture_verdict *t = F->traced;
    if (!F->numbers_fail || F->n_shape || F->nondet || !t || F->traced_fails || !t->in_shapes[0] ||
        F->lint_cause[ONP_CAUSE_BAKED_SHAPE])
        return 0;
    int other = 0;
    for (size_t i = 0; i < F->ev->n_fixtures; i++) {
        const onp_fixture_verdict *f = &F->ev->fixtures[i];
        if (f->status != ONP_FIXTURE_FAIL) continue;
        if (!f->in_shapes[0] || !strcmp(f->in_shapes, t->in_shapes)) return 0;
        other = 1;
    }
    return other;
}

static const char SPECIALISED_FIX[] =
    "the dims were declared dynamic, but a size decided the path at export (torch.export "
    "specialises `if x.shape[1] > 8` to the traced size): write the branch with torch.cond, or "
    "with tensor ops that take every size (torch.where, sizes from x.shape kept symbolic), or "
    "export once per size range";

/* 3b. the numbers follow the input shapes in a graph that takes them all
 * (size_specialised): traced-control-flow, not baked-shape — declaring the
 * dims dynamic was done and did not help.  High with the shape probe's
 * evidence (diagnose), medium from the fixtures' verdicts alone (check). */
static void rule_size_specialised(const facts *F, onp_causes *cs)
{
    int probe = F->pr && F->pr->shape_dependent;
    /* a legacy TracerWarning on the branch without a probe: rules 1 and 5 weigh it */
    if (!size_specialised(F) || (!probe && F->lint_cause[ONP_CAUSE_TRACED_CONTROL_FLOW])) return;
    const onp_fixture_verdict *fail = NULL;
    for (size_t i = 0; i < F->ev->n_fixtures && !fail; i++)
        if (F->ev->fixtures[i].status == ONP_FIXTURE_FAIL) fail = &F->ev->fixtures[i];
    explains(cs, ONP_CAUSE_TRACED_CONTROL_FLOW, F->n_failing, F->n_failing);
    add_cause(
        cs, ONP_CAUSE_TRACED_CONTROL_FLOW, probe ? ONP_CONFIDENCE_HIGH : ONP_CONFIDENCE_MEDIUM,
        F->bis ? F->bis->points[F->bis->first].node : NULL, SPECIALISED_FIX,
        "the traced fixture's input shapes (%.100s) pass, %.100s (%.100s) fails, and the graph "
        "took every shape (none refused): a size decided the path at export%s%.200s",
        F->traced->in_shapes, base(fail->dir), fail->in_shapes, probe ? "; probe (shapes): " : "",
        probe ? F->pr->shape_note : "");
}

/* 4. batch invariance (confounded by randomness: then evidence only). */
static void rule_batch(const facts *F, onp_causes *cs)
{
    const onp_probe_result *pr = F->pr;
    if (!pr || !pr->batch_tested || pr->batch_pass) return;
    if (!pr->deterministic)
        add_cause(cs, nd_cause(F), ONP_CONFIDENCE_HIGH, NULL, ND_FIX, "probe (batch): %s",
                  pr->batch_note);
    else if (pr->batch_shape_error && F->traced_shape)
        return; /* the graph refuses its own traced input too: rule 1b says what that means */
    else if (pr->batch_shape_error)
        add_cause(cs, F->shape_cause, F->numbers_fail ? ONP_CONFIDENCE_HIGH : ONP_CONFIDENCE_MEDIUM,
                  F->shape_node[0] ? F->shape_node : NULL,
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

static const char BRANCH_FIX[] = "express the branch with torch.where (or torch.cond); no "
                                 ".item(), int() or `if tensor` in forward";

/* Without the probes (check, gate): a fixture that passes and one that
 * fails in numbers with the same input shapes -> *pass, *fail; 0 none. */
static int same_shape_pass_and_fail(const onp_evidence *ev, const onp_fixture_verdict **pass,
                                    const onp_fixture_verdict **fail)
{
    for (size_t i = 0; i < ev->n_fixtures; i++) {
        const onp_fixture_verdict *a = &ev->fixtures[i];
        if (a->status != ONP_FIXTURE_PASS || !a->in_shapes[0]) continue;
        for (size_t j = 0; j < ev->n_fixtures; j++) {
            const onp_fixture_verdict *b = &ev->fixtures[j];
            if (b->status == ONP_FIXTURE_FAIL && !strcmp(a->in_shapes, b->in_shapes)) {
                *pass = a, *fail = b;
                return 1;
            }
        }
    }
    return 0;
}

/* 5. fixture dependence: the probe's (deterministic runs, one shape group
 * with a pass and a fail); without the probes, the fixtures' own verdicts
 * beside a traced-control-flow finding, medium (the runs were not checked
 * for determinism: diagnose does), unless the traced fixture fails itself
 * (its own path is the one traced: the branch does not explain it). */
static void rule_fixture_dependence(const facts *F, onp_causes *cs)
{
    const onp_probe_result *pr = F->pr;
    const onp_fixture_verdict *p = NULL, *f = NULL;
    if (pr && pr->fixture_dependent && pr->deterministic && !pr->shape_dependent)
        add_cause(cs, ONP_CAUSE_TRACED_CONTROL_FLOW,
                  F->lint_cause[ONP_CAUSE_TRACED_CONTROL_FLOW] ? ONP_CONFIDENCE_HIGH
                                                               : ONP_CONFIDENCE_MEDIUM,
                  NULL, BRANCH_FIX,
                  "probe (fixture dependence): %s: the graph holds one traced path", pr->dep_note);
    else if (!pr && !F->nondet && F->lint_cause[ONP_CAUSE_TRACED_CONTROL_FLOW] &&
             !F->lint_cause[ONP_CAUSE_NONDETERMINISM] && !F->lint_cause[ONP_CAUSE_TRAINING_MODE] &&
             !(F->traced && F->traced_fails) && same_shape_pass_and_fail(F->ev, &p, &f))
        add_cause(cs, ONP_CAUSE_TRACED_CONTROL_FLOW, ONP_CONFIDENCE_MEDIUM, NULL, BRANCH_FIX,
                  "%s and %s have the same input shapes (%s); the first passes, the second "
                  "fails: the graph holds one traced path (runs not probed for determinism: "
                  "onnxparity diagnose does)",
                  base(p->dir), base(f->dir), p->in_shapes);
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
    const onp_cause_item *rp = &cs->items[ONP_CAUSE_REDUCED_PRECISION];
    if (F->sw && F->sw->ep_disagree && rp->present && rp->confidence == ONP_CONFIDENCE_HIGH) {
        /* the provider computes in a lower precision and that explains it
         * (rule 6a): the disagreement is its evidence, not a kernel bug */
        add_cause(cs, ONP_CAUSE_REDUCED_PRECISION, ONP_CONFIDENCE_HIGH, NULL, NULL,
                  "sweep: %s (what the precision explains)", F->sw->ep_note);
        return;
    }
    if (F->sw && F->sw->ep_disagree)
        add_cause(cs, ONP_CAUSE_EXECUTION_PROVIDER, ONP_CONFIDENCE_HIGH, NULL,
                  "run on the provider that agrees (the CPU) until the kernel is fixed; report "
                  "the failing operator upstream with this bundle",
                  "sweep: %s", F->sw->ep_note);
}

/* The confidence a noise source allows: float64 high, scaled medium, else low. */
static onp_confidence noise_confidence(onp_noise_src weakest)
{
    return weakest == ONP_NOISE_FLOAT64  ? ONP_CONFIDENCE_HIGH
           : weakest == ONP_NOISE_SCALED ? ONP_CONFIDENCE_MEDIUM
                                         : ONP_CONFIDENCE_LOW;
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
    onp_confidence conf = noise_confidence(weakest);
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

/* 7b. labels that flip inside the noise: every failing fixture fails only
 * by top-1 flips, its values agree, and every flipped row's eager margin is
 * inside the noise envelope.  The verdict stays a failure (a different
 * label is a different answer); the cause is the boundary, not the export. */
static void rule_label_flips(const facts *F, onp_causes *cs)
{
    if (F->nondet || F->lint->counts[ONP_LINT_ERROR]) return;
    size_t n_fail = 0, n_flip_only = 0;
    long long flips = 0, noise = 0;
    double margin = -1, envelope = 0;
    const onp_fixture_verdict *first = NULL;
    onp_noise_src weakest = ONP_NOISE_FLOAT64;
    for (size_t i = 0; i < F->ev->n_fixtures; i++) {
        const onp_fixture_verdict *f = &F->ev->fixtures[i];
        if (!failing(f)) continue;
        n_fail++;
        int only = f->status == ONP_FIXTURE_FAIL;
        for (size_t k = 0; k < f->n_out && only; k++) {
            const onp_output_verdict *x = &f->outs[k];
            if (x->pass) continue;
            if (!x->compared || !x->j.pass || !x->has_topk || !x->tk.flipped) {
                only = 0;
                break;
            }
            flips += x->tk.flipped;
            noise += x->noise_flips;
            if (margin < 0 || x->min_margin < margin) margin = x->min_margin;
            if (x->j.envelope_max > envelope) envelope = x->j.envelope_max;
            if (x->j.noise.src > weakest) weakest = x->j.noise.src;
        }
        if (only && !first) first = f;
        n_flip_only += only != 0;
    }
    if (!n_fail || n_flip_only != n_fail || !flips || noise != flips) return;
    explains(cs, ONP_CAUSE_FLOAT_NOISE, n_fail, n_fail);
    add_cause(cs, ONP_CAUSE_FLOAT_NOISE, noise_confidence(weakest), NULL,
              "nothing to fix in the export: these rows sit on a decision boundary closer than "
              "float32 rounding; check them with real inputs, or accept with --top-k off",
              "%lld top-1 label(s) flipped in %zu fixture(s) (first: %.120s) while every value "
              "agrees within the tolerance; each flipped row's eager margin is inside the "
              "noise envelope (smallest margin %.3g, envelope %.3g): float noise decides them",
              flips, n_fail, base(first->dir), margin, envelope);
}

/* 7c. a Cast to float16/bfloat16 inside the graph (lint ONP416) and failing
 * values whose error is what that precision allows (within 16 ulps of the
 * narrow type at the output's scale).  High when that explains every
 * failing fixture. */
static void rule_reduced_precision(const facts *F, onp_causes *cs)
{
    const onp_lint_finding *lp = finding_of(F->lint, "ONP416");
    if (!lp || F->nondet) return;
    double eps = strstr(lp->message, "bfloat16") ? 0x1p-7 : 0x1p-10;
    size_t n_fail = 0, n_within = 0;
    double worst = 0, worst_scale = 0, need_atol = 0;
    const onp_fixture_verdict *first = NULL;
    for (size_t i = 0; i < F->ev->n_fixtures; i++) {
        const onp_fixture_verdict *f = &F->ev->fixtures[i];
        if (!failing(f)) continue;
        n_fail++;
        int within = f->status == ONP_FIXTURE_FAIL, any = 0;
        for (size_t k = 0; k < f->n_out && within; k++) {
            const onp_output_verdict *x = &f->outs[k];
            if (x->pass) continue;
            if (!x->compared || !x->m.shape_ok || x->m.nan_mismatch || x->m.inf_mismatch ||
                x->j.gap_max > 16 * eps * x->j.scale_max) {
                within = 0;
                break;
            }
            any = 1;
            if (x->j.gap_max > worst) worst = x->j.gap_max, worst_scale = x->j.scale_max;
            if (x->j.needed_atol > need_atol) need_atol = x->j.needed_atol;
        }
        if (within && any) {
            n_within++;
            if (!first) first = f;
        }
    }
    if (!n_within) return;
    explains(cs, ONP_CAUSE_REDUCED_PRECISION, n_within, n_fail);
    char fix[600];
    snprintf(fix, sizeof fix,
             "%s; to compare at what %s allows, --atol %.2g (or --tol NAME=RTOL,ATOL per output)",
             lp->rule->fix, eps < 0x1p-8 ? "float16" : "bfloat16", 2 * need_atol);
    add_cause(cs, ONP_CAUSE_REDUCED_PRECISION,
              n_within == n_fail ? ONP_CONFIDENCE_HIGH : ONP_CONFIDENCE_MEDIUM,
              lp->loc.kind == ONP_LINT_LOC_NODE ? lp->loc.name : NULL, fix,
              "%zu of %zu failing fixture(s) differ by what the narrow type allows (largest "
              "|ORT - eager| %.3g at scale %.3g: %.2g of it; %s rounds at %.3g) and lint %s: "
              "%.300s",
              n_within, n_fail, worst, worst_scale, worst_scale > 0 ? worst / worst_scale : 0,
              eps < 0x1p-8 ? "float16" : "bfloat16", eps / 2, lp->rule->id, lp->message);
    cs->items[ONP_CAUSE_REDUCED_PRECISION].suggested_atol = 2 * need_atol;
}

// --- another ONNX Runtime on the same fixtures (issue 29) ------------------------------

/* Fixtures failing (FAIL, or refused/lost: ERROR) among f[0..n). */
static size_t n_failing_of(const onp_fixture_verdict *f, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += failing(&f[i]) != 0;
    return k;
}

/* 6c. another ONNX Runtime (the capturing environment's) judged the same
 * fixtures: where one version passes and the other fails, the versions
 * differ (runtime-version, high), named with both versions, at the first
 * value the failing one separates from eager at (its bisect), with that
 * value's op.  Both failing: evidence only when they fail differently. */
static void rule_runtime_version(const facts *F, onp_causes *cs)
{
    const onp_other_target *o = F->ev->other;
    if (!o || F->nondet) return;
    size_t here = n_failing_of(F->ev->fixtures, F->ev->n_fixtures);
    size_t there = n_failing_of(o->fixtures, o->n_fixtures);
    if ((here == 0) == (there == 0)) return; /* both pass, or both fail */
    const char *bad = there ? o->version : o->this_version;
    const char *good = there ? o->this_version : o->version;
    const onp_bisect_result *b = there ? o->bisect : F->bis;
    const onp_bisect_point *p =
        b && b->status == ONP_BISECT_DIVERGES && b->first >= 0 ? &b->points[b->first] : NULL;
    char fix[1024];
    snprintf(fix, sizeof fix,
             "deploy ONNX Runtime %s (it passes), or check the ONNX Runtime you deploy: "
             "--ort-lib %s; report %s's result on %s upstream",
             good, there ? F->ev->other->library : "the library under test", bad,
             p ? p->op_type : "this model");
    explains(cs, ONP_CAUSE_RUNTIME_VERSION, here, here);
    add_cause(cs, ONP_CAUSE_RUNTIME_VERSION, ONP_CONFIDENCE_HIGH, p ? p->node : NULL, fix,
              "ONNX Runtime %s fails %zu of %zu fixture(s) that ONNX Runtime %s passes (%s: %s)",
              bad, there ? there : here, there ? o->n_fixtures : F->ev->n_fixtures, good, o->what,
              o->library);
    if (p)
        add_cause(cs, ONP_CAUSE_RUNTIME_VERSION, ONP_CONFIDENCE_HIGH, NULL, NULL,
                  "the first value where ONNX Runtime %s separates from eager: %s (%s), output "
                  "%s, max_abs %g (%.3g of its scale)",
                  bad, p->node, p->op_type, p->value, p->max_abs, p->rel_err);
}

// --- a target's precision (issue 29) -------------------------------------------------

/* The precision the target under test computes in, when lowered (the
 * fixtures ran in one session: the first that says), or NULL. */
static const onp_precision *target_precision(const facts *F)
{
    for (size_t i = 0; i < F->ev->n_fixtures; i++)
        if (F->ev->fixtures[i].precision.lowered) return &F->ev->fixtures[i].precision;
    return NULL;
}

/* The CPU provider's column of the sweep (diagnose): 1 passes, 0 fails, -1
 * not swept. */
static int cpu_swept(const facts *F)
{
    for (size_t c = 0; F->sw && c < F->sw->n_configs; c++)
        if (F->sw->configs[c].available &&
            !strcmp(F->sw->configs[c].provider, "CPUExecutionProvider"))
            return F->sw->configs[c].pass;
    return -1;
}

/* What the outputs say under precision P: n of the failing fixtures whose
 * failing outputs all sit inside their envelope scaled to P (judge.h
 * prec_within; a label flip that noise does not drive counts against). */
typedef struct prec_outs {
    size_t n_fail, n_within;
    double gap, envelope, scale, need_atol; /* the worst output's */
} prec_outs;

static void prec_outputs(const facts *F, prec_outs *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < F->ev->n_fixtures; i++) {
        const onp_fixture_verdict *f = &F->ev->fixtures[i];
        if (!failing(f)) continue;
        o->n_fail++;
        int within = f->status == ONP_FIXTURE_FAIL, any = 0;
        for (size_t k = 0; k < f->n_out && within; k++) {
            const onp_output_verdict *x = &f->outs[k];
            if (x->pass) continue;
            within = x->compared && x->prec_envelope > 0 && x->prec_within &&
                     !(x->has_topk && x->tk.flipped > x->noise_flips);
            any = 1;
            if (x->j.gap_max / (x->prec_envelope > 0 ? x->prec_envelope : 1) >=
                o->gap / (o->envelope > 0 ? o->envelope : 1))
                o->gap = x->j.gap_max, o->envelope = x->prec_envelope, o->scale = x->j.scale_max;
            if (x->j.needed_atol > o->need_atol) o->need_atol = x->j.needed_atol;
        }
        o->n_within += within && any;
    }
}

/* The float32 bisect read at precision P: where the error starts (its first
 * divergent value, which P explains when it is the first matmul-class value
 * compared and its error, relative to its scale, is between eps/256 and
 * ONP_NOISE_ULPS eps), and the first value that leaves what P allows (error
 * above ONP_NOISE_ULPS eps of its scale, grown more than ONP_NOISE_ULPS
 * times over its inputs): a defect P does not explain, or NULL. */
static const onp_bisect_point *prec_bisect(const facts *F, const onp_precision *P, int *onset_ok)
{
    const onp_bisect_result *b = F->bis;
    *onset_ok = 0;
    if (!b) return NULL;
    const onp_bisect_point *on = &b->points[b->first];
    int earlier = 0;
    for (long i = 0; i < b->first; i++)
        earlier |= b->points[i].compared && onp_precision_matmul_class(b->points[i].op_type);
    *onset_ok = !earlier && onp_precision_matmul_class(on->op_type) &&
                on->rel_err >= P->eps / 256 && on->rel_err <= ONP_NOISE_ULPS * P->eps;
    for (size_t i = (size_t)b->first; i < b->n_points; i++) {
        const onp_bisect_point *q = &b->points[i];
        if (q->compared && q->rel_err > ONP_NOISE_ULPS * P->eps && q->jump > ONP_NOISE_ULPS)
            return q;
    }
    return NULL;
}

/* 6a. a target that computes in a lower precision than the graph asks (a
 * provider's setting or default: OpenVINO's inference precision hint, CUDA
 * TF32, ...; precision.h), tested against the error pattern: the failing
 * outputs inside their envelopes scaled to that precision, the error
 * starting at the first matmul-class value at about that precision's
 * epsilon (bisect), the CPU provider passing where the sweep ran.  High
 * when all hold; a value beyond what the precision allows is a defect of
 * its own, named at its node (unknown, medium), reduced-precision then low.
 * docs/diagnose.md, "Precision of a target". */
static void rule_provider_precision(const facts *F, onp_causes *cs)
{
    const onp_precision *P = target_precision(F);
    if (!P || F->nondet || !F->numbers_fail) return;
    const char *kind = onp_precision_kind_name(P->kind);
    prec_outs o;
    prec_outputs(F, &o);
    int onset_ok;
    const onp_bisect_point *beyond = prec_bisect(F, P, &onset_ok);
    const onp_bisect_point *on = F->bis ? &F->bis->points[F->bis->first] : NULL;
    int cpu = cpu_swept(F);
    if (beyond) {
        char fix[1024];
        snprintf(fix, sizeof fix,
                 "inspect %s: its error is beyond what %s explains (at float32 it shows "
                 "without the precision's error: %s)",
                 beyond->node, kind, P->fix);
        add_cause(cs, ONP_CAUSE_UNKNOWN, ONP_CONFIDENCE_MEDIUM, beyond->node, fix,
                  "%s (%s), output %s, leaves what %s allows: error %.3g of its scale (%s allows "
                  "%g), grown %.3gx over its inputs; before it the error is %s's (%s)",
                  beyond->node, beyond->op_type, beyond->value, kind, beyond->rel_err, kind,
                  ONP_NOISE_ULPS * P->eps, beyond->jump, kind, P->setting);
        /* no node: bisect's local check would lift a cause at its node to high */
        add_cause(cs, ONP_CAUSE_REDUCED_PRECISION, ONP_CONFIDENCE_LOW, NULL, P->fix,
                  "%s computes in %s (%s): it explains the error from %s (%s) on, not %s's",
                  P->provider, kind, P->setting, on ? on->node : "?", on ? on->op_type : "?",
                  beyond->node);
        return;
    }
    if (!o.n_within) { /* not the precision: the provider where the CPU agrees, else unknown */
        add_cause(cs, cpu == 1 ? ONP_CAUSE_EXECUTION_PROVIDER : ONP_CAUSE_UNKNOWN,
                  cpu == 1 ? ONP_CONFIDENCE_MEDIUM : ONP_CONFIDENCE_LOW, on ? on->node : NULL, NULL,
                  "%s computes in %s (%s), but the failing outputs are beyond what %s allows "
                  "(|ORT - eager| %.3g, %s envelope %.3g): not the precision alone%s",
                  P->provider, kind, P->setting, kind, o.gap, kind, o.envelope,
                  cpu == 1 ? "; the CPU provider passes (sweep)" : "");
        return;
    }
    onp_confidence conf = o.n_within < o.n_fail || cpu == 0 ? ONP_CONFIDENCE_MEDIUM
                          : on && onset_ok                  ? ONP_CONFIDENCE_HIGH
                                                            : ONP_CONFIDENCE_MEDIUM;
    char fix[1024];
    snprintf(fix, sizeof fix, "%s; to accept %s: --atol %.2g (or --tol NAME=RTOL,ATOL per output)",
             P->fix, kind, 2 * o.need_atol);
    explains(cs, ONP_CAUSE_REDUCED_PRECISION, o.n_within, o.n_fail);
    add_cause(cs, ONP_CAUSE_REDUCED_PRECISION, conf, on && onset_ok ? on->node : NULL, fix,
              "%s computes in %s: %s%s", P->provider, kind, P->setting,
              P->from_default ? " (no option asked for it)" : "");
    add_cause(cs, ONP_CAUSE_REDUCED_PRECISION, conf, NULL, NULL,
              "%zu of %zu failing fixture(s) within the %s envelope (largest |ORT - eager| %.3g "
              "at scale %.3g; envelope at %s %.3g: the float32 noise x %.0f, floor %g of the "
              "scale)",
              o.n_within, o.n_fail, kind, o.gap, o.scale, kind, o.envelope,
              P->eps / onp_dtype_eps(1), ONP_NOISE_ULPS * P->eps);
    if (on)
        add_cause(cs, ONP_CAUSE_REDUCED_PRECISION, conf, NULL, NULL,
                  "bisect: the error starts at %s (%s), %s, at %.3g of its scale (%s eps %g)",
                  on->node, on->op_type,
                  onset_ok ? "the first matmul-class value"
                           : "not where precision starts (the first matmul-class value at "
                             "about eps)",
                  on->rel_err, kind, P->eps);
    if (cpu >= 0)
        add_cause(cs, ONP_CAUSE_REDUCED_PRECISION, conf, NULL, NULL, "sweep: the CPU provider %s",
                  cpu ? "passes (the graph is exact at float32)"
                      : "fails too: not the precision alone");
    cs->items[ONP_CAUSE_REDUCED_PRECISION].suggested_atol = 2 * o.need_atol;
}

/* What torch and ONNX define differently for an operator, and the numbers
 * that show it at the value: how to add one: a row with the op type, the
 * dimension (as the evidence words it) and the test on the value's numbers
 * (OPSEM_ANY: the node alone failing is enough). */
enum { OPSEM_ANY, OPSEM_NAN, OPSEM_EXACT };
static const struct {
    const char *op, *dimension;
    int needs;
} opsem_ops[] = {
    {"ReduceMax", "NaN: torch propagates it, a kernel may skip it", OPSEM_NAN},
    {"ReduceMin", "NaN: torch propagates it, a kernel may skip it", OPSEM_NAN},
    {"Max", "NaN: torch propagates it, a kernel may skip it", OPSEM_NAN},
    {"Min", "NaN: torch propagates it, a kernel may skip it", OPSEM_NAN},
    {"MaxPool", "NaN: torch propagates it, a kernel may skip it", OPSEM_NAN},
    {"Clip", "NaN: torch propagates it, a kernel may skip it", OPSEM_NAN},
    {"ArgMax", "ties and NaN: which index wins", OPSEM_ANY},
    {"ArgMin", "ties and NaN: which index wins", OPSEM_ANY},
    {"TopK", "ties: which index comes first", OPSEM_ANY},
    {"Div", "integer rounding: torch floors, ONNX truncates toward zero", OPSEM_EXACT},
    {"Mod", "integer rounding: the sign of the remainder (fmod)", OPSEM_EXACT},
    {"Round", "rounding of halves", OPSEM_ANY},
    {"Resize",
     "filters and coordinates (antialias, cubic coefficient, half_pixel vs "
     "align_corners, nearest rounding)",
     OPSEM_ANY},
    {"Upsample", "filters and coordinates (align_corners, nearest rounding)", OPSEM_ANY},
    {"GridSample", "sampling: align_corners, padding mode", OPSEM_ANY},
    {"RoiAlign", "sampling: aligned half-pixel offset, sampling ratio", OPSEM_ANY},
    {"AveragePool", "the divisor at the border (count_include_pad, ceil_mode)", OPSEM_ANY},
    {"Pad", "reflect and edge padding at the border", OPSEM_ANY},
};

/* 7e. op-semantics by the numbers: bisect's first divergent node, run alone
 * on eager inputs, still fails (local), and its operator is one whose torch
 * and ONNX definitions differ in a known dimension, which the value's
 * numbers show (NaN on one side only; an exact type).  High when the node
 * was run alone, medium when unmapped nodes came along (the error is in
 * that region).  No lint rule needed: the evidence is the node's own. */
static void rule_opsem_numbers(const facts *F, onp_causes *cs)
{
    if (!F->bis || !F->bis->local.ran || !F->bis->local.local) return;
    const onp_bisect_point *p = &F->bis->points[F->bis->first];
    const onp_bisect_local *L = &F->bis->local;
    for (size_t i = 0; p->op_type && i < sizeof opsem_ops / sizeof *opsem_ops; i++) {
        if (strcmp(p->op_type, opsem_ops[i].op)) continue;
        int nan = p->m.nan_mismatch > 0 || L->m.nan_mismatch > 0;
        int exact = onp_dtype_eps(p->m.expected_dtype) <= 0 && p->m.expected_dtype != 0;
        if ((opsem_ops[i].needs == OPSEM_NAN && !nan) ||
            (opsem_ops[i].needs == OPSEM_EXACT && !exact))
            return;
        explains(cs, ONP_CAUSE_OP_SEMANTICS, F->n_failing, F->n_failing);
        add_cause(cs, ONP_CAUSE_OP_SEMANTICS,
                  L->n_nodes > 1 ? ONP_CONFIDENCE_MEDIUM : ONP_CONFIDENCE_HIGH, p->node,
                  "compute it with the operator's torch semantics spelled out in tensor ops, or "
                  "choose the behaviour both sides share (an opset or attribute that matches)",
                  "bisect: %s (%s) run %s on eager inputs still fails (max_abs %g%s): torch and "
                  "ONNX define %s differently in %s",
                  p->node, p->op_type,
                  L->n_nodes > 1 ? "with the unmapped nodes before it" : "alone", L->max_abs,
                  nan ? ", NaN on one side only" : "", p->op_type, opsem_ops[i].dimension);
        return;
    }
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
                  "run onnxparity bisect on the same target and inspect the first divergent "
                  "node",
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
        if (L->local && L->n_nodes > 1) /* a region without eager values: the node is not certain */
            add_cause(cs, (onp_cause)c, it->confidence, p->node, NULL,
                      "bisect: %s run with the %zu node(s) before it that have no %s value to "
                      "compare, on %s inputs, still fails (max_abs %g, %lld mismatches): the error "
                      "is in those %zu nodes, not necessarily at %s",
                      p->node, L->n_nodes - 1, ref, ref, L->max_abs, L->mismatches, L->n_nodes,
                      p->node);
        else if (L->local) /* the node is certain; an unknown cause stays unknown (low) */
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
    {"shape-failures", rule_shape_failures},
    {"input-dtype", rule_input_dtype},
    {"nan-positions", rule_nan},
    {"determinism", rule_determinism},
    {"capture-determinism", rule_capture_determinism},
    {"shapes", rule_shapes},
    {"size-specialised", rule_size_specialised},
    {"batch-invariance", rule_batch},
    {"fixture-dependence", rule_fixture_dependence},
    {"sweep", rule_sweep},
    {"provider-precision", rule_provider_precision},
    {"providers", rule_providers},
    {"runtime-version", rule_runtime_version},
    {"float-noise", rule_float_noise},
    {"label-flips", rule_label_flips},
    {"reduced-precision", rule_reduced_precision},
    {"op-semantics-numbers", rule_opsem_numbers},
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

/* The lint rules whose finding sits on the node holding a fixed size (a
 * shape constant, constant Resize sizes). */
static int holds_size(const onp_lint_finding *f)
{
    return f->loc.kind == ONP_LINT_LOC_NODE &&
           (!strcmp(f->rule->id, "ONP202") || !strcmp(f->rule->id, "ONP203") ||
            !strcmp(f->rule->id, "ONP206"));
}

/* F->shape_cause and shape_node, in this order: ORT's refusal names a node
 * a finding of another cause sits on (an unrolled loop's Gather): that
 * cause there; a size-holding finding (ONP202, ONP203, ONP206) on the node
 * ORT names: baked-shape there; a traced branch (a boolean TracerWarning:
 * the path taken at trace time fixed the shapes, a Swin's window padding)
 * when ORT refused inside the graph (a refusal at the declared inputs is
 * the declaration's): traced-control-flow at the node ORT names; a size-holding finding
 * anywhere: baked-shape there; else baked-shape at the node ORT names or at
 * any baked-shape finding's node. */
static void shape_owner(facts *F)
{
    F->shape_cause = ONP_CAUSE_BAKED_SHAPE;
    const char *named = F->refused_at;
    const onp_lint_finding *on = named[0] ? finding_at(F->lint, named) : NULL;
    if (on && on->rule->cause != ONP_CAUSE_BAKED_SHAPE) {
        F->shape_cause = on->rule->cause;
        snprintf(F->shape_node, sizeof F->shape_node, "%s", named);
        return;
    }
    if (on && holds_size(on)) {
        snprintf(F->shape_node, sizeof F->shape_node, "%s", named);
        return;
    }
    if (named[0] && traced_branch(F->lint)) { /* refused inside the graph, not at its inputs */
        F->shape_cause = ONP_CAUSE_TRACED_CONTROL_FLOW;
        snprintf(F->shape_node, sizeof F->shape_node, "%s", named);
        return;
    }
    for (size_t i = 0; i < F->lint->n; i++)
        if (holds_size(&F->lint->findings[i])) {
            snprintf(F->shape_node, sizeof F->shape_node, "%s", F->lint->findings[i].loc.name);
            return;
        }
    const char *any = lint_node(F->lint, ONP_CAUSE_BAKED_SHAPE, NULL);
    snprintf(F->shape_node, sizeof F->shape_node, "%s", named[0] ? named : any ? any : "");
}

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
    /* the capture's rerun differed: a veto on failures, not a failure itself */
    F->nondet |= F->numbers_fail && capture_nondeterministic(F->lint) != NULL;
    for (int lv = 0; F->sw && lv < ONP_SWEEP_LEVELS; lv++) {
        if (!F->sw->levels[lv].pass) F->any_fail = 1;
        if (F->sw->levels[lv].ran && !F->sw->levels[lv].deterministic) F->nondet = F->any_fail = 1;
    }
    for (size_t c = 0; F->sw && c < F->sw->n_configs; c++)
        if (F->sw->configs[c].available && !F->sw->configs[c].pass) F->any_fail = 1;
    for (size_t i = 0; i < ev->n_fixtures; i++) {
        const onp_fixture_verdict *f = &ev->fixtures[i];
        size_t k = 0;
        int sk = shape_failure(f, &k);
        F->n_failing += failing(f) != 0;
        if (!sk) continue;
        F->n_shape++;
        if (!F->shape_first) F->shape_first = f, F->shape_kind = sk, F->shape_out = k;
        if (sk == 1 && !F->refused_at[0])
            ort_failed_node(f->msg, F->refused_at, sizeof F->refused_at);
    }
    for (size_t i = 0; ev->traced_fixture && !F->traced && i < ev->n_fixtures; i++)
        if (ev->fixtures[i].index == *ev->traced_fixture) F->traced = &ev->fixtures[i];
    if (ev->traced_fixture && !F->traced) F->traced = ev->traced_verdict; /* judged apart */
    if (F->traced) {
        size_t k = 0;
        F->traced_fails = failing(F->traced) != 0;
        F->traced_shape = shape_failure(F->traced, &k) != 0;
    }
    /* shapes matter only where the traced input itself fits the graph */
    F->shape_evidence = F->n_shape > 0 && !F->traced_shape;
    shape_owner(F);
    if (F->pr && (F->pr->shape_dependent || (F->pr->batch_shape_error && !F->traced_shape)))
        F->shape_evidence = 1;
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
    /* high only when it explains every failing fixture it was measured against */
    for (int c = 0; c < ONP_CAUSE_COUNT; c++) {
        onp_cause_item *it = &cs->items[c];
        if (it->present && it->confidence == ONP_CONFIDENCE_HIGH && it->n_explained < it->n_failing)
            it->confidence = ONP_CONFIDENCE_MEDIUM;
    }
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
