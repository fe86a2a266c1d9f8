/*
 * cmd_diagnose.c — `onnxparity diagnose TARGET`: the full investigation.
 * Lint (graph + parity.json), the numbers at the configuration under test,
 * the probes (determinism, batch invariance, shape and fixture
 * dependence), the optimization-level sweep with the optimizer search, and
 * bisect when the bundle has eager intermediates; then the decision
 * procedure of docs/diagnose.md turns the evidence into ranked causes
 * [{id, confidence, node, evidence[], fix}].
 *
 * The fixtures are judged by the library's run (run.h) as check judges
 * them, with the probes and the sweep as extra evidence; the bisect is the
 * run's plan, so check and diagnose name the same node.
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
#include "onnxparity/causes.h"
#include "onnxparity/judge.h"
#include "onnxparity/json.h"
#include "onnxparity/lint.h"
#include "onnxparity/model.h"
#include "onnxparity/diagnose.h"
#include "onnxparity/doc.h"
#include "onnxparity/probe.h"
#include "onnxparity/run.h"
#include "ortopts.h"
#include "onnxparity/doc.h"
#include "report.h"
#include "target.h"

typedef struct opts {
    cli_ort ort; /* the run's options (ORT, tolerance, --no-bisect, --save-repro): run.h's table */
    cli_target tg; /* TARGET, or --model/--data */
    const char *target;
    int no_sweep;
    cli_format fmt;
    const char *html;   /* --html FILE (the report page), or NULL */
    const char *sarif;  /* --sarif FILE: the lint findings, as check writes them */
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
    for (int i = 1; i < argc; i++) {
        int r =
            cli_ort_opt_groups(&o->ort, ONP_RUN_ARGS_ORT | ONP_RUN_ARGS_DIAGNOSE, argc, argv, &i);
        if (r < 0) return -1;
        if (r) continue;
        if ((r = cli_opt(argc, argv, &i, "format", &v))) {
            if (r < 0 || cli_parse_format(argv[0], v, &o->fmt)) return -1;
        } else if ((r = cli_opt(argc, argv, &i, "html", &v))) {
            if (r < 0) return -1;
            o->html = v;
        } else if ((r = cli_opt(argc, argv, &i, "sarif", &v))) {
            if (r < 0) return -1;
            o->sarif = v;
        } else if (cli_progress_opt(argv, i, &o->quiet, &o->verbose)) {
        } else if (cli_flag(argv, i, "no-sweep")) {
            o->no_sweep = 1;
        } else if ((r = cli_target_opt(&o->tg, argc, argv, &i))) {
            if (r < 0) return -1;
        } else if (cli_target_arg(argv, i, "target", &o->target)) {
            return -1;
        }
    }
    return cli_target_finish(&o->tg, argv[0], o->target);
}

// --- output ----------------------------------------------------------------------

/* What diagnose knows, for the text page. */
typedef struct shown {
    const onp_probe_result *pr;
    const onp_sweep_result *sw;
    const onp_bisect_result *bis;     /* with a first divergent node, or NULL */
    const onp_bisect_result *bis_run; /* any that ran, or NULL */
    size_t tie_matched;               /* fixtures that pass only against their tie-ordered
                                         reference (judge.h, onp_tie_order) */
} shown;

static void print_text(const char *model, const char *sha, onp_ort *ort, const opts *o,
                       const onp_causes *cs, const onp_lint_result *lint, const shown *F, int fail)
{
    const onp_probe_result *pr = F->pr;
    for (size_t i = 0; i < cs->n; i++) {
        const onp_cause_item *c = &cs->items[cs->order[i]];
        printf("cause    %s (%s confidence)%s%s\n", onp_cause_name(c->id),
               onp_confidence_name(c->confidence), c->node[0] ? " at " : "", c->node);
        for (size_t k = 0; k < c->n_evidence; k++) printf("         - %s\n", c->evidence[k]);
        printf("         fix: %s\n", c->fix);
    }
    report_latent_text(cs, lint, cli_target_name(&o->tg));
    printf("model    %s (sha256 %.12s)\n", model, sha);
    printf("runtime  ONNX Runtime %s, opt-level %s\n", onp_ort_version(ort),
           onp_ort_opt_level_name(o->ort.so.opt_level));
    printf("numbers  %zu fixtures, %d failed (%d refused by ONNX Runtime)\n", pr->n_fixtures,
           pr->fixtures_failed, pr->fixtures_error);
    if (F->tie_matched)
        printf("ties     %zu fixture(s) pass against eager rerun with ONNX's tie order (tie-order: "
               "eager chose among exactly tied values in another order)\n",
               F->tie_matched);
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
        if (L->ran) { /* a region without reference values is not the node alone */
            char region[96] = "alone";
            if (L->n_nodes > 1)
                snprintf(region, sizeof region,
                         "with the %zu node(s) before it that have no reference value,",
                         L->n_nodes - 1);
            printf("         %s: %s on reference inputs it %s (max_abs %g)%s\n",
                   L->local ? "local" : "inherited", region, L->local ? "still fails" : "agrees",
                   L->max_abs,
                   L->local && L->n_nodes > 1
                       ? ": the error is in those nodes, not necessarily at this one"
                       : "");
        }
    }
    if (F->bis_run && F->bis_run->repro[0])
        printf("repro    %s: the node alone, its reference inputs and expected output (see its "
               "README)\n",
               F->bis_run->repro);
    else if (F->bis_run && F->bis_run->repro_note[0])
        printf("repro    %s\n", F->bis_run->repro_note);
    if (F->bis_run && F->bis_run->verify.ran && !F->bis_run->verify.reproduces)
        printf("bisect   the instrumented model does NOT reproduce the mismatch (plain max_abs %g, "
               "instrumented %g)%s%s\n",
               F->bis_run->verify.plain_max_abs, F->bis_run->verify.instrumented_max_abs,
               F->bis_run->fallback[0] ? "; fallback: " : "", F->bis_run->fallback);
    if (fail)
        printf("verdict: FAIL — top cause %s\n",
               cs->n ? onp_cause_name(cs->items[cs->order[0]].id) : "unknown");
    else
        printf("verdict: pass — parity holds at every level, probes agree, no cause found\n");
}

// --- the command ------------------------------------------------------------------

/* The JSON document when ONNX Runtime could not load the model. */
static void print_load_error(const opts *o, const char *model, const onp_error *e)
{
    if (o->fmt != FMT_JSON) return;
    const char *why = strstr(e->msg, ": ");
    report_print_json(onp_doc_not_run("onnxparity.diagnose/1", model, why ? why + 2 : e->msg));
}

static void stage_line(void *ctx, const char *what)
{
    stage(ctx, what);
}

int cmd_diagnose(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) return EXIT_USAGE;
    const char *model = o.tg.model;
    onp_error e;
    onp_error_clear(&e);
    int rc = EXIT_PASS;
    onp_diagnosis d;
    onp_bundle_spec where = {o.tg.bundle, o.tg.model, o.tg.data, o.tg.n_data};
    stage(&o, "diagnose: lint");
    if (onp_diagnosis_open(&d, &where, &o.ort.a, &e)) goto out;
    /* the findings for code scanning, written before ORT runs: they stand
     * whatever the runtime does */
    if (o.sarif && (rc = lint_sarif_write(o.sarif, model, &d.lint))) goto out;
    if (onp_diagnosis_run(&d, &o.ort.a, o.no_sweep, stage_line, &o, &e)) {
        if (d.load_failed) print_load_error(&o, model, &e);
        goto out;
    }
    rc = onp_run_exit_code(d.run.verdict);
    const onp_bisect_result *bis = d.run.bisect;
    shown F = {&d.probe, d.sweep, onp_run_first_divergent(&d.run) ? bis : NULL, bis, 0};
    size_t tie[ONP_TIE_ORDER_COUNT];
    onp_tie_order_counts(d.run.fix, d.run.n_fix, tie);
    F.tie_matched = tie[ONP_TIE_ORDER_MATCHED];
    if (o.fmt == FMT_JSON || o.html) {
        int html_rc = report_emit(onp_doc_diagnose(&d, &o.ort.a), o.fmt == FMT_JSON, o.html, model);
        if (html_rc) rc = html_rc;
    }
    if (o.fmt != FMT_JSON)
        print_text(model, onp_bundle_sha256(d.bundle), d.ort, &o, d.run.causes, &d.lint, &F,
                   d.run.verdict != ONP_RUN_PASS);
out:
    if (e.code) rc = cli_report(&e);
    onp_diagnosis_release(&d);
    return rc;
}
