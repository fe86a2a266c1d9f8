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
#include "onnxparity/probe.h"
#include "onnxparity/run.h"
#include "ortopts.h"
#include "onnxparity/doc.h"
#include "report.h"
#include "target.h"

typedef struct opts {
    cli_ort ort;
    cli_target tg; /* TARGET, or --model/--data */
    const char *target;
    double rtol, atol;
    int no_sweep, no_bisect;
    cli_format fmt;
    const char *html;       /* --html FILE (the report page), or NULL */
    const char *sarif;      /* --sarif FILE: the lint findings, as check writes them */
    const char *save_repro; /* --save-repro DIR: bisect's reproducer of the named node */
    int quiet, verbose;     /* stage lines on stderr: a terminal or --verbose, never --quiet */
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
        } else if ((r = cli_opt(argc, argv, &i, "sarif", &v))) {
            if (r < 0) return -1;
            o->sarif = v;
        } else if (cli_progress_opt(argv, i, &o->quiet, &o->verbose)) {
        } else if (cli_flag(argv, i, "no-sweep")) {
            o->no_sweep = 1;
        } else if (cli_flag(argv, i, "no-bisect")) {
            o->no_bisect = 1;
        } else if ((r = cli_opt(argc, argv, &i, "save-repro", &v))) {
            if (r < 0) return -1;
            o->save_repro = v;
        } else if ((r = cli_target_opt(&o->tg, argc, argv, &i))) {
            if (r < 0) return -1;
        } else if (cli_target_arg(argv, i, "target", &o->target)) {
            return -1;
        }
    }
    return cli_target_finish(&o->tg, argv[0], o->target);
}

// --- output ----------------------------------------------------------------------

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
        onp_doc_num(d, "max_abs", pr->det_max_abs);
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

/* What diagnose knows, for the text page. */
typedef struct shown {
    const onp_probe_result *pr;
    const onp_sweep_result *sw;
    const onp_bisect_result *bis;     /* with a first divergent node, or NULL */
    const onp_bisect_result *bis_run; /* any that ran, or NULL */
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

/* The run's options from the command line (the probes' evidence is added
 * once they ran). */
static void run_opts(const opts *o, onp_run_opts *ro)
{
    onp_run_opts_init(ro);
    ro->ort_lib = o->ort.lib;
    ro->session = o->ort.so;
    ro->rtol = o->rtol;
    ro->atol = o->atol;
    ro->atol_given = o->atol >= 0;
    ro->no_bisect = o->no_bisect;
    ro->save_repro = o->save_repro;
}

/* The JSON document when ONNX Runtime could not load the model. */
static void print_load_error(const opts *o, const char *model, const char *why)
{
    fprintf(stderr, "onnxparity: ONNX Runtime could not load %s: %s\n", model, why);
    if (o->fmt != FMT_JSON) return;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.diagnose/1");
    cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(ONP_RUN_ERROR));
    cJSON_AddStringToObject(root, "model", model);
    cJSON_AddStringToObject(root, "error", why);
    report_print_json(root);
}

/* The bisect's part of the document. */
static void bisect_json(cJSON *root, const onp_bisect_result *bis)
{
    const onp_bisect_point *p = bis && bis->status == ONP_BISECT_DIVERGES && bis->first >= 0
                                    ? &bis->points[bis->first]
                                    : NULL;
    if (p) {
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
    if (bis && bis->repro[0])
        cJSON_AddStringToObject(root, "repro", bis->repro);
    else
        cJSON_AddNullToObject(root, "repro");
    if (bis && bis->verify.ran)
        cJSON_AddBoolToObject(root, "instrumented_reproduces", bis->verify.reproduces);
    else
        cJSON_AddNullToObject(root, "instrumented_reproduces");
}

/* The document (printed and/or the page); returns the page's exit code. */
static int emit_doc(const opts *o, const char *model, const char *sha, onp_ort *ort,
                    const onp_run_result *run, const onp_probe_result *pr,
                    const onp_sweep_result *sw, const onp_lint_result *lint)
{
    const onp_causes *cs = run->causes;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.diagnose/1");
    cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(run->verdict));
    cJSON_AddStringToObject(root, "model", model);
    cJSON_AddItemToObject(root, "causes", onp_doc_causes(cs));
    cJSON_AddBoolToObject(root, "nondeterministic", cs->nondeterministic);
    cJSON_AddItemToObject(root, "latent", onp_doc_latent(cs));
    bisect_json(root, run->bisect);
    if (sw)
        cJSON_AddItemToObject(root, "sweep", sweep_json(sw));
    else
        cJSON_AddNullToObject(root, "sweep");
    cJSON_AddItemToObject(root, "probes", probes_json(pr));
    cJSON *lj = cJSON_AddObjectToObject(root, "lint");
    cJSON_AddNumberToObject(lj, "errors", (double)lint->counts[ONP_LINT_ERROR]);
    cJSON_AddNumberToObject(lj, "warnings", (double)lint->counts[ONP_LINT_WARNING]);
    cJSON_AddNumberToObject(lj, "infos", (double)lint->counts[ONP_LINT_INFO]);
    onp_doc_environment(root, ort,
                        o->ort.so.provider && o->ort.so.provider[0] ? o->ort.so.provider
                                                                    : "CPUExecutionProvider",
                        o->ort.so.opt_level, o->ort.so.intra_threads, o->ort.so.inter_threads, sha,
                        o->ort.so.config, o->ort.so.n_config);
    return report_emit(root, o->fmt == FMT_JSON, o->html, model);
}

/* The probes, then the sweep; -1 after the error was reported (*rc set). */
static int probe_and_sweep(const opts *o, onp_ort *ort, onp_bundle *b, const onp_fixset *fs,
                           onp_probe_result *pr, onp_sweep_result **sw, int *rc)
{
    const char *model = onp_bundle_model_path(b);
    onp_error e;
    onp_error_clear(&e);
    onp_probe_opts po;
    onp_probe_opts_init(&po);
    po.session = o->ort.so;
    po.rtol = o->rtol;
    po.atol = o->atol;
    po.export_fixture = onp_bundle_traced_fixture(b); /* -1 without a manifest */
    stage(o, "diagnose: probes (determinism, batch invariance, shapes, fixture dependence)");
    if (onp_probe_run(ort, model, fs, &po, pr, &e)) return *rc = cli_report(&e), -1;
    if (!pr->ran) {
        print_load_error(o, model, pr->error);
        /* the session error's own exit code, as every command maps it: a
         * provider this ONNX Runtime lacks is bad input (2), a model ORT
         * refuses a runtime failure (4) */
        onp_error pe = {.code = pr->error_code};
        *rc = pr->error_code == ONP_ERR_NONE ? ONP_EXIT_RUNTIME : onp_error_exit_code(&pe);
        return -1;
    }
    if (!o->no_sweep) stage(o, "diagnose: sweep over the optimization levels");
    if (!o->no_sweep && onp_sweep_run(ort, model, fs, &po, sw, &e)) return *rc = cli_report(&e), -1;
    return 0;
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
    onp_fixset *fs = NULL;
    onp_bundle *b = NULL;
    onp_ort *ort = NULL;
    onp_session *s = NULL;
    onp_sweep_result *sw = NULL;
    onp_run_result run;
    memset(&run, 0, sizeof run);
    onp_probe_result pr;
    memset(&pr, 0, sizeof pr);
    onp_lint_result lint;
    memset(&lint, 0, sizeof lint);
    onp_bundle_spec sp = {o.tg.bundle, o.tg.model, o.tg.data, o.tg.n_data};
    onp_run_opts ro;
    run_opts(&o, &ro);
    if (onp_fixset_load_dirs(o.tg.data, o.tg.n_data, &fs, &e) || onp_bundle_open(&sp, &b, &e) ||
        onp_run_check_outputs(b, &ro, &e) || /* --save-repro: refused before anything runs */
        onp_model_check_external(onp_bundle_model(b), &e)) /* by our rules, before ORT */
        goto out;
    stage(&o, "diagnose: lint");
    if (onp_run_lint(b, &lint, &e)) goto out;
    /* the findings for code scanning, written before ORT runs: they stand
     * whatever the runtime does */
    if (o.sarif && (rc = lint_sarif_write(o.sarif, model, &lint))) goto out;
    if (onp_ort_open(o.ort.lib, &ort, &e)) goto out;
    if (probe_and_sweep(&o, ort, b, fs, &pr, &sw, &rc)) goto out;
    /* the fixtures judged as check judges them: the same run and plan */
    stage(&o, "diagnose: the fixtures, judged with the noise rule; bisect where they fail");
    ro.lint = &lint;
    ro.probe = &pr;
    ro.sweep = sw;
    int upgraded;
    if (onp_run_session_open(b, &ro, &ort, &s, &upgraded, &e) || onp_run(b, ort, s, &ro, &run, &e))
        goto out;
    run.verdict = onp_run_diagnosis_verdict(&run);
    rc = onp_run_exit_code(run.verdict);
    const char *sha = onp_bundle_sha256(b);
    const onp_bisect_result *bis = run.bisect;
    shown F = {&pr, sw, onp_run_first_divergent(&run) ? bis : NULL, bis};
    if (o.fmt == FMT_JSON || o.html) {
        int html_rc = emit_doc(&o, model, sha, ort, &run, &pr, sw, &lint);
        if (html_rc) rc = html_rc;
    }
    if (o.fmt != FMT_JSON)
        print_text(model, sha, ort, &o, run.causes, &lint, &F, run.verdict != ONP_RUN_PASS);
out:
    if (e.code) rc = cli_report(&e);
    onp_run_result_release(&run);
    onp_session_close(s);
    onp_sweep_free(sw);
    onp_ort_close(ort);
    onp_lint_result_free(&lint);
    onp_bundle_close(b);
    onp_fixset_free(fs);
    return rc;
}
