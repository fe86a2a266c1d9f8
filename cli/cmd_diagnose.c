/*
 * cmd_diagnose.c — `onnxparity diagnose TARGET`: the full investigation.
 * Lint (graph + parity.json), the numbers at the configuration under test,
 * the probes (determinism, batch invariance, shape and fixture
 * dependence), the optimization-level sweep with the optimizer search, and
 * bisect when the bundle has eager intermediates; then the decision
 * procedure of docs/diagnose.md turns the evidence into ranked causes
 * [{id, confidence, node, evidence[], fix}].
 *
 * The lint-to-cause step follows cli/cmd_check.c's collect_causes (copied
 * in spirit, not shared: check is edited elsewhere): error-level findings
 * are high when anything fails, medium when the numbers agree; warnings
 * are low, and only count when something fails.
 *
 * Exit: 0 healthy; 1 causes found or parity fails; 2 bad usage or no
 * fixtures; 3 unreadable files; 4 ONNX Runtime cannot load the model.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "infile.h"
#include "onnxparity/bisect.h"
#include "onnxparity/json.h"
#include "onnxparity/lint.h"
#include "onnxparity/model.h"
#include "onnxparity/probe.h"
#include "ortopts.h"
#include "report.h"

typedef struct opts {
    cli_ort ort;
    const char *target;
    double rtol, atol;
    int no_sweep, no_bisect;
    cli_format fmt;
    const char *html;   /* --html FILE (the report page), or NULL */
    int quiet, verbose; /* stage lines on stderr: a terminal or --verbose, never --quiet */
} opts;

/* One line on stderr per stage of a long run (cli_stage's rule). */
static void stage(const opts *o, const char *what)
{
    cli_stage(o->quiet, o->verbose, what);
}

static int parse_args(int argc, char **argv, opts *o)
{
    const char *v;
    cli_ort_init(&o->ort);
    o->rtol = o->atol = -1;
    for (int i = 1; i < argc; i++) {
        int r = cli_ort_opt(&o->ort, argc, argv, &i);
        if (r < 0) return -1;
        if (r) continue;
        if ((r = cli_tol_format_opt(argc, argv, &i, &o->rtol, &o->atol, &o->fmt))) {
            if (r < 0) return -1;
        } else if ((r = cli_opt(argc, argv, &i, "html", &v))) {
            if (r < 0) return -1;
            o->html = v;
        } else if (cli_progress_opt(argv, i, &o->quiet, &o->verbose)) {
        } else if (cli_flag(argv, i, "no-sweep")) {
            o->no_sweep = 1;
        } else if (cli_flag(argv, i, "no-bisect")) {
            o->no_bisect = 1;
        } else if (cli_target_arg(argv, i, "target", &o->target)) {
            return -1;
        }
    }
    if (!o->target) return cli_usage_error(argv[0], "usage: onnxparity diagnose TARGET"), -1;
    return 0;
}

/* parity.json's export_args.traced_fixture, or -1 (also when the file is
 * missing or refused: the lint reports a bad parity.json itself). */
static int traced_fixture(const char *manifest)
{
    if (!manifest) return -1;
    onp_buf b;
    onp_error e;
    onp_error_clear(&e);
    cJSON *root = NULL;
    if (!cli_read_file(manifest, 1u << 30, "", &b, &e))
        root = onp_json_parse(b.p, b.n, manifest, ONP_ERR_FORMAT, "not valid JSON", &e);
    onp_buf_free(&b);
    int64_t k = -1;
    cJSON *t = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "export_args"), "traced_fixture");
    if (onp_json_int(t, 0, INT_MAX, &k)) k = -1;
    cJSON_Delete(root);
    return (int)k;
}

// --- causes: the decision procedure (docs/diagnose.md) --------------------------

#define MAX_EV 12

typedef struct dcause {
    int present;
    int rank; /* 0 high, 1 medium, 2 low */
    char node[256];
    char fix[1024];
    char ev[MAX_EV][600];
    size_t n_ev;
} dcause;

static const char *const conf_names[] = {"high", "medium", "low"};

/* Add (or strengthen) cause `id` with one line of evidence.  The first
 * node and fix given stick unless a stronger rank brings its own. */
static void add_cause(dcause *cs, onp_cause id, int rank, const char *node, const char *fix,
                      const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

static void add_cause(dcause *cs, onp_cause id, int rank, const char *node, const char *fix,
                      const char *fmt, ...)
{
    dcause *c = &cs[id];
    int stronger = !c->present || rank < c->rank;
    if (!c->present) c->rank = rank;
    c->present = 1;
    if (rank < c->rank) c->rank = rank;
    if (node && node[0] && (!c->node[0] || stronger)) snprintf(c->node, sizeof c->node, "%s", node);
    if (fix && fix[0] && !c->fix[0]) snprintf(c->fix, sizeof c->fix, "%s", fix);
    if (c->n_ev < MAX_EV) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->ev[c->n_ev++], sizeof c->ev[0], fmt, ap);
        va_end(ap);
    }
}

typedef struct facts {
    const onp_lint_result *lint;
    const onp_probe_result *pr;
    const onp_sweep_result *sw;       /* NULL with --no-sweep */
    const onp_bisect_result *bis;     /* a bisect that found a first divergent node, or NULL */
    const onp_bisect_result *bis_run; /* any bisect that ran (its reproduce check), or NULL */
    int numbers_fail;                 /* a fixture fails at the configuration under test */
    int any_fail;                     /* ... or at a swept level, or a run is not reproducible */
    int nondet;                       /* ORT not reproducible in some configuration */
    int lint_cause[ONP_CAUSE_COUNT];  /* warning- or error-level findings per cause */
    int lint_err[ONP_CAUSE_COUNT];    /* error-level findings per cause */
} facts;

/* The first node a warning- or error-level finding of `cause` (or of the
 * rule `rule_id`, when not NULL) points at: the place a probe's evidence
 * is about, when the probe itself cannot name one. */
static const char *lint_node(const onp_lint_result *l, onp_cause cause, const char *rule_id)
{
    for (size_t i = 0; i < l->n; i++) {
        const onp_lint_finding *f = &l->findings[i];
        if (f->rule->severity == ONP_LINT_INFO || f->loc.kind != ONP_LINT_LOC_NODE) continue;
        if (rule_id ? !strcmp(f->rule->id, rule_id) : f->rule->cause == cause) return f->loc.name;
    }
    return NULL;
}

/* What bisect's local-vs-inherited rerun, its reproduce check and its
 * disable reference add (docs/diagnose.md, rule 8a). */
static void bisect_checks(const facts *F, dcause *cs)
{
    const onp_bisect_result *b = F->bis_run;
    if (!b) return;
    const onp_bisect_verify *v = &b->verify;
    if (v->ran && !v->reproduces && !v->plain_pass) {
        const dcause *go = &cs[ONP_CAUSE_GRAPH_OPTIMIZATION];
        add_cause(
            cs, ONP_CAUSE_GRAPH_OPTIMIZATION, go->present ? go->rank : 2, NULL,
            "run at the highest level that passes (--opt-level) and report upstream",
            "bisect: with every intermediate exposed the outputs pass (max_abs %g) where "
            "the plain model fails (max_abs %g): a fusion the exposure blocks is involved%s%s",
            v->instrumented_max_abs, v->plain_max_abs, b->fallback[0] ? "; fallback: " : "",
            b->fallback);
    }
    if (!F->bis) return;
    const onp_bisect_point *p = &b->points[b->first];
    const onp_bisect_local *L = &b->local;
    const char *ref = b->reference == ONP_BISECT_REF_DISABLE ? "ORT-at-disable" : "eager";
    if (b->reference == ONP_BISECT_REF_DISABLE) {
        const dcause *go = &cs[ONP_CAUSE_GRAPH_OPTIMIZATION];
        add_cause(cs, ONP_CAUSE_GRAPH_OPTIMIZATION, go->present ? go->rank : 2, p->node,
                  "run at the highest level that passes (--opt-level) and report upstream",
                  "bisect against ORT at opt-level disable (no eager intermediates): the first "
                  "node where the configuration under test leaves disable is %s (%s), max_abs %g",
                  p->node, p->op_type, p->max_abs);
    }
    if (b->fallback[0] && !strcmp(b->fallback, "disable"))
        for (int c = 0; c < ONP_CAUSE_COUNT; c++)
            if (cs[c].present && cs[c].rank <= 1)
                add_cause(cs, (onp_cause)c, cs[c].rank, NULL, NULL,
                          "bisect: bisected at opt-level disable: %s", b->fallback_note);
    if (!L->ran || !p->node[0]) return; /* an unnamed node matches no cause's node */
    /* the causes that name this node by their own evidence */
    for (int c = 0; c < ONP_CAUSE_COUNT; c++) {
        if (!cs[c].present || strcmp(cs[c].node, p->node)) continue;
        if (L->local)
            add_cause(cs, (onp_cause)c, 0, p->node, NULL,
                      "bisect: %s run alone on %s inputs still fails (max_abs %g, %lld "
                      "mismatches): the error is local to it",
                      p->node, ref, L->max_abs, L->mismatches);
        else
            add_cause(cs, (onp_cause)c, cs[c].rank, p->node, NULL,
                      "bisect: %s run alone on %s inputs agrees (max_abs %g): its error is "
                      "inherited from its inputs (worst input max_abs %g)",
                      p->node, ref, L->max_abs, L->input_max_abs);
    }
}

static void derive(facts *F, dcause *cs)
{
    const onp_lint_result *l = F->lint;
    const onp_probe_result *pr = F->pr;
    const onp_sweep_result *sw = F->sw;
    const char *fd = F->bis ? F->bis->points[F->bis->first].node : NULL;
    /* 1. lint, as check does: node-located findings first */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < l->n; i++) {
            const onp_lint_finding *f = &l->findings[i];
            int rank = onp_lint_cause_rank(f, F->any_fail, fd);
            if (rank < 0 || (f->loc.kind == ONP_LINT_LOC_NODE) != (pass == 0)) continue;
            int err = f->rule->severity == ONP_LINT_ERROR;
            F->lint_cause[f->rule->cause]++;
            if (err) F->lint_err[f->rule->cause]++;
            add_cause(
                cs, f->rule->cause, rank, f->loc.kind == ONP_LINT_LOC_NODE ? f->loc.name : NULL,
                f->rule->fix, "lint %s %s at %s: %.400s", f->rule->id, f->rule->name,
                f->loc.name[0] ? f->loc.name : onp_lint_loc_kind_name(f->loc.kind), f->message);
        }
    /* 2. determinism; a live training-mode Dropout explains it */
    onp_cause nd =
        F->lint_err[ONP_CAUSE_TRAINING_MODE] ? ONP_CAUSE_TRAINING_MODE : ONP_CAUSE_NONDETERMINISM;
    const char *nd_fix = "remove random ops from forward (torch.randn_like, dropout in train mode) "
                         "or draw them outside the model; export in eval mode";
    /* the random node: a random-op finding, or a hand-made dropout mask (ONP105) */
    const char *nd_node = lint_node(l, ONP_CAUSE_NONDETERMINISM, NULL);
    if (!nd_node) nd_node = lint_node(l, ONP_CAUSE_NONDETERMINISM, "ONP105");
    if (pr->ran && !pr->deterministic)
        add_cause(cs, nd, 0, nd_node, nd_fix,
                  "probe: fixture %d run twice gives different bytes for output %s (max_abs %g)",
                  pr->det_fixture, pr->det_output, pr->det_max_abs);
    for (int lv = 0; sw && lv < ONP_SWEEP_LEVELS; lv++)
        if (sw->levels[lv].ran && !sw->levels[lv].deterministic) {
            add_cause(cs, nd, 0, nd_node, nd_fix,
                      "sweep: at level %s fixture %d is not reproducible (output %s)",
                      onp_ort_opt_level_name(sw->levels[lv].level), sw->levels[lv].nondet_fixture,
                      sw->levels[lv].nondet_output);
            break;
        }
    /* 3. shape dependence; the node from a baked-shape finding (a literal
     * reshape, a constant shape) when lint has one */
    const char *shape_node = lint_node(l, ONP_CAUSE_BAKED_SHAPE, NULL);
    if (pr->shape_dependent)
        add_cause(cs, ONP_CAUSE_BAKED_SHAPE, 0, shape_node,
                  "declare the varying dims dynamic (dynamic_axes={'x': {0: 'batch'}}) and compute "
                  "sizes from the tensor: x.flatten(1) or x.view(x.size(0), -1), never literals",
                  "probe (shapes): %s", pr->shape_note);
    /* 4. batch invariance (confounded by randomness: then evidence only) */
    if (pr->batch_tested && !pr->batch_pass) {
        if (!pr->deterministic)
            add_cause(cs, nd, 0, NULL, nd_fix, "probe (batch): %s", pr->batch_note);
        else if (pr->batch_shape_error)
            add_cause(cs, ONP_CAUSE_BAKED_SHAPE, F->numbers_fail ? 0 : 1, shape_node,
                      "compute sizes from the tensor: x.flatten(1) or x.view(x.size(0), -1) "
                      "instead of x.view(4, -1), and declare dim 0 dynamic",
                      "probe (batch invariance): %s", pr->batch_note);
        else
            add_cause(cs, ONP_CAUSE_TRAINING_MODE, 1, NULL,
                      "call model.eval() before export: BatchNormalization in training mode "
                      "normalises with batch statistics",
                      "probe (batch invariance): %s — samples interact across the batch "
                      "(batch-statistics BatchNormalization)",
                      pr->batch_note);
    }
    /* 5. fixture dependence */
    if (pr->fixture_dependent && pr->deterministic && !pr->shape_dependent)
        add_cause(cs, ONP_CAUSE_TRACED_CONTROL_FLOW,
                  F->lint_cause[ONP_CAUSE_TRACED_CONTROL_FLOW] ? 0 : 1, NULL,
                  "express the branch with torch.where (or torch.cond); no .item(), int() or "
                  "`if tensor` in forward",
                  "probe (fixture dependence): %s: the graph holds one traced path", pr->dep_note);
    /* 6. sweep */
    if (sw && sw->searched) {
        if (sw->culprit[0]) {
            char fix[1024];
            snprintf(fix, sizeof fix,
                     "report the fusion upstream; meanwhile disable %s "
                     "(--session-config 'optimization.disable_specified_optimizers=%s', or "
                     "SessionOptions.add_session_config_entry; ';' separates names)",
                     sw->culprit, sw->culprit);
            add_cause(cs, ONP_CAUSE_GRAPH_OPTIMIZATION, 0, NULL, fix,
                      "sweep: parity holds at disable, fails at all; %s", sw->search_note);
        } else {
            add_cause(cs, ONP_CAUSE_GRAPH_OPTIMIZATION, 1, NULL,
                      "run at the highest level that passes (--opt-level) and report upstream",
                      "sweep: parity holds at disable, fails at all; %s", sw->search_note);
        }
    } else if (sw && sw->first_failing >= 0 && sw->levels[ONP_SWEEP_LEVELS - 1].pass) {
        add_cause(cs, ONP_CAUSE_GRAPH_OPTIMIZATION, 2, NULL,
                  "run at a level that passes (--opt-level) and report upstream",
                  "sweep: parity breaks at level %s but holds at all",
                  onp_ort_opt_level_name(sw->levels[sw->first_failing].level));
    }
    /* 6b. execution providers: one provider passes where another of the
     * same library fails (the sweep adds the CPU as the reference column
     * when another provider is under test) */
    if (sw && sw->ep_disagree)
        add_cause(cs, ONP_CAUSE_EXECUTION_PROVIDER, 0, NULL,
                  "run on the provider that agrees (the CPU) until the kernel is fixed; report "
                  "the failing operator upstream with this bundle",
                  "sweep: %s", sw->ep_note);
    /* 7. nothing explains a failure */
    int strong = 0;
    for (int c = 0; c < ONP_CAUSE_COUNT; c++)
        if (cs[c].present && cs[c].rank <= 1) strong = 1;
    if (F->any_fail && !strong)
        add_cause(cs, ONP_CAUSE_UNKNOWN, 2, fd,
                  "bisect the bundle (onnxparity bisect) and inspect the first divergent node",
                  "outputs differ beyond tolerance; no rule or probe explains it");
    /* 8a. bisect's extra checks (before its node is lent to other causes) */
    bisect_checks(F, cs);
    /* bisect's node: evidence for every cause, the node for those without one */
    if (F->bis) {
        const onp_bisect_point *p = &F->bis->points[F->bis->first];
        for (int c = 0; c < ONP_CAUSE_COUNT; c++)
            if (cs[c].present && cs[c].rank <= 1)
                add_cause(cs, (onp_cause)c, cs[c].rank, p->node, NULL,
                          "bisect: first divergent node %s (%s), output %s%s%s", p->node,
                          p->op_type, p->value, p->module[0] ? ", module " : "", p->module);
    }
}

/* Cause ids ordered by rank, then by id order (training-mode first). */
static size_t ranked(const dcause *cs, int *order)
{
    size_t n = 0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < ONP_CAUSE_COUNT; c++)
            if (cs[c].present && cs[c].rank == r) order[n++] = c;
    return n;
}

// --- output ----------------------------------------------------------------------

static cJSON *causes_json(const dcause *cs)
{
    int order[ONP_CAUSE_COUNT];
    size_t n = ranked(cs, order);
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const dcause *c = &cs[order[i]];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", onp_cause_name((onp_cause)order[i]));
        cJSON_AddStringToObject(j, "confidence", conf_names[c->rank]);
        if (c->node[0])
            cJSON_AddStringToObject(j, "node", c->node);
        else
            cJSON_AddNullToObject(j, "node");
        cJSON *ev = cJSON_AddArrayToObject(j, "evidence");
        for (size_t k = 0; k < c->n_ev; k++) cJSON_AddItemToArray(ev, cJSON_CreateString(c->ev[k]));
        cJSON_AddStringToObject(j, "fix", c->fix);
        cJSON_AddItemToArray(arr, j);
    }
    return arr;
}

static cJSON *probes_json(const onp_probe_result *pr)
{
    cJSON *p = cJSON_CreateObject();
    cJSON *n = cJSON_AddObjectToObject(p, "numbers");
    cJSON_AddNumberToObject(n, "fixtures", (double)pr->n_fixtures);
    cJSON_AddNumberToObject(n, "failed", pr->fixtures_failed);
    cJSON_AddNumberToObject(n, "refused", pr->fixtures_error);
    cJSON *d = cJSON_AddObjectToObject(p, "determinism");
    cJSON_AddBoolToObject(d, "deterministic", pr->deterministic);
    cJSON_AddNumberToObject(d, "fixture", pr->det_fixture);
    if (!pr->deterministic) {
        cJSON_AddStringToObject(d, "output", pr->det_output);
        report_num(d, "max_abs", pr->det_max_abs);
    }
    cJSON *b = cJSON_AddObjectToObject(p, "batch_invariance");
    cJSON_AddBoolToObject(b, "tested", pr->batch_tested);
    cJSON_AddBoolToObject(b, "pass", !pr->batch_tested || pr->batch_pass);
    cJSON_AddNumberToObject(b, "fixture", pr->batch_fixture);
    cJSON_AddBoolToObject(b, "shape_error", pr->batch_shape_error);
    cJSON_AddStringToObject(b, "note", pr->batch_note);
    cJSON *s = cJSON_AddObjectToObject(p, "shapes");
    cJSON_AddNumberToObject(s, "groups", pr->n_shape_groups);
    cJSON_AddBoolToObject(s, "shape_dependent", pr->shape_dependent);
    cJSON_AddNumberToObject(s, "fail_fixture", pr->shape_fail_fixture);
    cJSON_AddStringToObject(s, "note", pr->shape_note);
    cJSON *f = cJSON_AddObjectToObject(p, "fixture_dependence");
    cJSON_AddBoolToObject(f, "dependent", pr->fixture_dependent);
    cJSON_AddNumberToObject(f, "pass_fixture", pr->dep_pass_fixture);
    cJSON_AddNumberToObject(f, "fail_fixture", pr->dep_fail_fixture);
    cJSON_AddStringToObject(f, "note", pr->dep_note);
    return p;
}

static void print_text(const char *model, const char *sha, onp_ort *ort, const opts *o,
                       const dcause *cs, const facts *F, int fail)
{
    int order[ONP_CAUSE_COUNT];
    size_t n = ranked(cs, order);
    const onp_probe_result *pr = F->pr;
    for (size_t i = 0; i < n; i++) {
        const dcause *c = &cs[order[i]];
        printf("cause    %s (%s confidence)%s%s\n", onp_cause_name((onp_cause)order[i]),
               conf_names[c->rank], c->node[0] ? " at " : "", c->node);
        for (size_t k = 0; k < c->n_ev; k++) printf("         - %s\n", c->ev[k]);
        printf("         fix: %s\n", c->fix);
    }
    printf("model    %s (sha256 %.12s)\n", model, sha);
    printf("runtime  ONNX Runtime %s, opt-level %s\n", onp_ort_version(ort),
           onp_ort_opt_level_name(o->ort.so.opt_level));
    printf("numbers  %zu fixtures, %d failed (%d refused by ONNX Runtime)\n", pr->n_fixtures,
           pr->fixtures_failed, pr->fixtures_error);
    printf("probes   determinism: %s", pr->deterministic ? "reproducible" : "NOT reproducible");
    if (!pr->deterministic) printf(" (fixture %d, output %s)", pr->det_fixture, pr->det_output);
    printf("\n         batch invariance: %s: %s\n",
           !pr->batch_tested ? "not tested"
           : pr->batch_pass  ? "ok"
                             : "FAIL",
           pr->batch_note);
    printf("         shapes: %d group(s)%s%s\n", pr->n_shape_groups,
           pr->shape_dependent ? ", failures follow the shape: " : "", pr->shape_note);
    printf("         fixture dependence: %s%s\n", pr->fixture_dependent ? "yes: " : "no",
           pr->dep_note);
    if (F->sw) {
        printf("sweep\n");
        sweep_print_text(F->sw);
    }
    if (F->bis) {
        const onp_bisect_point *p = &F->bis->points[F->bis->first];
        const onp_bisect_local *L = &F->bis->local;
        printf("first divergent node: %s (%s), output %s%s%s (vs %s)\n",
               p->node[0] ? p->node : "(unnamed)", p->op_type, p->value,
               p->module[0] ? ", module " : "", p->module,
               F->bis->reference == ONP_BISECT_REF_DISABLE ? "ORT at opt-level disable" : "eager");
        if (L->ran)
            printf("         %s: alone on reference inputs it %s (max_abs %g)\n",
                   L->local ? "local" : "inherited", L->local ? "still fails" : "agrees",
                   L->max_abs);
    }
    if (F->bis_run && F->bis_run->verify.ran && !F->bis_run->verify.reproduces)
        printf("bisect   the instrumented model does NOT reproduce the mismatch (plain max_abs %g, "
               "instrumented %g)%s%s\n",
               F->bis_run->verify.plain_max_abs, F->bis_run->verify.instrumented_max_abs,
               F->bis_run->fallback[0] ? "; fallback: " : "", F->bis_run->fallback);
    if (fail)
        printf("verdict: FAIL — top cause %s\n",
               n ? onp_cause_name((onp_cause)order[0]) : "unknown");
    else
        printf("verdict: pass — parity holds at every level, probes agree, no cause found\n");
}

// --- the command ------------------------------------------------------------------

int cmd_diagnose(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) return EXIT_USAGE;
    char model[4096], manifest[4096];
    snprintf(model, sizeof model, "%s/model.onnx", o.target);
    snprintf(manifest, sizeof manifest, "%s/parity.json", o.target);
    struct stat st;
    int has_manifest = stat(manifest, &st) == 0;
    onp_error e;
    onp_error_clear(&e);
    int rc = EXIT_PASS;
    onp_fixset *fs = NULL;
    onp_ort *ort = NULL;
    onp_sweep_result *sw = NULL;
    onp_bisect_result *bis = NULL;
    onp_lint_result lint;
    memset(&lint, 0, sizeof lint);
    if (onp_fixset_load(o.target, &fs, &e)) return cli_report(&e);
    onp_model *m;
    if (onp_model_open(model, &m, &e)) {
        rc = cli_report(&e);
        goto out;
    }
    if (onp_model_check_external(m, &e)) { /* by our rules, before ORT opens a file */
        onp_model_close(m);
        rc = cli_report(&e);
        goto out;
    }
    char sha[65];
    onp_model_sha256(m, sha);
    onp_lint_opts lo = {has_manifest ? manifest : NULL};
    stage(&o, "diagnose: lint");
    if (onp_lint_run(m, &lo, &lint, &e)) {
        onp_model_close(m);
        rc = cli_report(&e);
        goto out;
    }
    onp_model_close(m);
    if (onp_ort_open(o.ort.lib, &ort, &e)) {
        rc = cli_report(&e);
        goto out;
    }
    onp_probe_opts po;
    onp_probe_opts_init(&po);
    po.session = o.ort.so;
    po.rtol = o.rtol;
    po.atol = o.atol;
    po.export_fixture = has_manifest ? traced_fixture(manifest) : -1;
    onp_probe_result pr;
    stage(&o, "diagnose: probes (determinism, batch invariance, shapes, fixture dependence)");
    if (onp_probe_run(ort, model, fs, &po, &pr, &e)) {
        rc = cli_report(&e);
        goto out;
    }
    if (!pr.ran) {
        fprintf(stderr, "onnxparity: ONNX Runtime could not load %s: %s\n", model, pr.error);
        if (o.fmt == FMT_JSON) {
            cJSON *root = cJSON_CreateObject();
            cJSON_AddStringToObject(root, "schema", "onnxparity.diagnose/1");
            cJSON_AddStringToObject(root, "verdict", "error");
            cJSON_AddStringToObject(root, "model", model);
            cJSON_AddStringToObject(root, "error", pr.error);
            report_print_json(root);
        }
        rc = EXIT_RUNTIME;
        goto out;
    }
    if (!o.no_sweep) stage(&o, "diagnose: sweep over the optimization levels");
    if (!o.no_sweep && onp_sweep_run(ort, model, fs, &po, &sw, &e)) {
        rc = cli_report(&e);
        goto out;
    }
    facts F;
    memset(&F, 0, sizeof F);
    F.lint = &lint;
    F.pr = &pr;
    F.sw = sw;
    F.numbers_fail = pr.fixtures_failed > 0;
    F.nondet = !pr.deterministic;
    F.any_fail = F.numbers_fail || F.nondet;
    for (int lv = 0; sw && lv < ONP_SWEEP_LEVELS; lv++) {
        if (!sw->levels[lv].pass) F.any_fail = 1;
        if (sw->levels[lv].ran && !sw->levels[lv].deterministic) F.nondet = F.any_fail = 1;
    }
    for (size_t c = 0; sw && c < sw->n_configs; c++) /* every provider and library swept */
        if (sw->configs[c].available && !sw->configs[c].pass) F.any_fail = 1;
    if (F.numbers_fail && !o.no_bisect) {
        onp_bisect_opts bo;
        onp_bisect_opts_init(&bo);
        bo.session = o.ort.so;
        bo.rtol = o.rtol;
        bo.atol = o.atol;
        bo.fixture = pr.first_fail_fixture;
        /* without eager intermediates: against ORT at disable, unless that is
         * the configuration under test */
        bo.reference =
            o.ort.so.opt_level == ONP_ORT_OPT_DISABLE ? ONP_BISECT_REF_EAGER : ONP_BISECT_REF_AUTO;
        onp_error be;
        stage(&o, "diagnose: bisect of the first failing fixture");
        if (onp_bisect_run(ort, o.target, &bo, &bis, &be) ||
            bis->status == ONP_BISECT_NO_REFERENCE) {
            onp_bisect_free(bis);
            bis = NULL;
        }
    }
    F.bis_run = bis;
    F.bis = bis && bis->status == ONP_BISECT_DIVERGES && bis->first >= 0 ? bis : NULL;
    dcause cs[ONP_CAUSE_COUNT];
    memset(cs, 0, sizeof cs);
    derive(&F, cs);
    int strong = 0;
    for (int c = 0; c < ONP_CAUSE_COUNT; c++)
        if (cs[c].present && cs[c].rank <= 1) strong = 1;
    int fail =
        F.any_fail || strong || lint.counts[ONP_LINT_ERROR] || (pr.batch_tested && !pr.batch_pass);
    rc = fail ? EXIT_FAIL : EXIT_PASS;
    if (o.fmt == FMT_JSON || o.html) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "schema", "onnxparity.diagnose/1");
        cJSON_AddStringToObject(root, "verdict", fail ? "fail" : "pass");
        cJSON_AddStringToObject(root, "model", model);
        cJSON_AddItemToObject(root, "causes", causes_json(cs));
        if (F.bis) {
            const onp_bisect_point *p = &bis->points[bis->first];
            cJSON *fd = cJSON_AddObjectToObject(root, "first_divergent");
            cJSON_AddStringToObject(fd, "node", p->node);
            cJSON_AddStringToObject(fd, "op_type", p->op_type);
            cJSON_AddStringToObject(fd, "output", p->value);
            cJSON_AddStringToObject(fd, "module", p->module);
            cJSON_AddStringToObject(fd, "reference", onp_bisect_ref_name(bis->reference));
            if (bis->local.ran)
                cJSON_AddStringToObject(fd, "local", bis->local.local ? "local" : "inherited");
            else
                cJSON_AddNullToObject(fd, "local");
        } else {
            cJSON_AddNullToObject(root, "first_divergent");
        }
        if (bis && bis->verify.ran)
            cJSON_AddBoolToObject(root, "instrumented_reproduces", bis->verify.reproduces);
        else
            cJSON_AddNullToObject(root, "instrumented_reproduces");
        if (sw)
            cJSON_AddItemToObject(root, "sweep", sweep_json(sw));
        else
            cJSON_AddNullToObject(root, "sweep");
        cJSON_AddItemToObject(root, "probes", probes_json(&pr));
        cJSON *lj = cJSON_AddObjectToObject(root, "lint");
        cJSON_AddNumberToObject(lj, "errors", (double)lint.counts[ONP_LINT_ERROR]);
        cJSON_AddNumberToObject(lj, "warnings", (double)lint.counts[ONP_LINT_WARNING]);
        cJSON_AddNumberToObject(lj, "infos", (double)lint.counts[ONP_LINT_INFO]);
        report_environment(root, ort,
                           o.ort.so.provider && o.ort.so.provider[0] ? o.ort.so.provider
                                                                     : "CPUExecutionProvider",
                           o.ort.so.opt_level, o.ort.so.intra_threads, o.ort.so.inter_threads, sha,
                           o.ort.so.config, o.ort.so.n_config);
        int html_rc = report_emit(root, o.fmt == FMT_JSON, o.html, model);
        if (html_rc) rc = html_rc;
    }
    if (o.fmt != FMT_JSON) print_text(model, sha, ort, &o, cs, &F, fail);
out:
    onp_bisect_free(bis);
    onp_sweep_free(sw);
    onp_ort_close(ort);
    onp_lint_result_free(&lint);
    onp_fixset_free(fs);
    return rc;
}
