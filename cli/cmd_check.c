/*
 * cmd_check.c — `onnxparity check TARGET` / `check --model M --data DIR...`:
 * run the model under ONNX Runtime on every fixture and compare every output
 * with the eager truth.
 *
 * TARGET is a folder holding model.onnx and test_data_set_N/ folders (the
 * ONNX test-data layout): input_K.pb feeds graph input K (by position, as
 * ONNX's own test runner does) and output_K.pb is the expected value of
 * graph output K.  A fixture ORT cannot run is a failed fixture carrying
 * ORT's message; the run goes on.
 *
 * The run is the library's (run.h, onp_check_run: the bundle opened once,
 * the lint, one session, the one fixture loop, the bisect when a fixture
 * fails, the causes, the verdict); its options are parsed by the library's
 * table.  This file parses the output options and formats: text, the
 * library's JSON document (doc.h), JUnit, SARIF, the summary, annotations.
 *
 * Exit: 0 every output of every fixture passes; 1 anything fails (a flipped
 * top-1 label included); 2 bad usage or no fixtures; 3 unreadable files;
 * 4 ONNX Runtime cannot load the model.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ghactions.h"
#include "junit.h"
#include "lintdoc.h"
#include "target.h"
#include "onnxparity/adequacy.h"
#include "onnxparity/agreement.h"
#include "onnxparity/bisect.h"
#include "onnxparity/causes.h"
#include "onnxparity/compare.h"
#include "onnxparity/doc.h"
#include "onnxparity/env.h"
#include "onnxparity/lint.h"
#include "onnxparity/model.h"
#include "onnxparity/run.h"
#include "onnxparity/tfile.h"
#include "ortopts.h"
#include "report.h"

#define MAX_DATA 64

typedef struct opts {
    onp_run_args args; /* the run's options, parsed by the library's table (run.h) */
    const char *target, *model;
    const char *data[MAX_DATA];
    size_t n_data;
    cli_format fmt;
    const char *junit;   /* --junit FILE, or NULL */
    const char *sarif;   /* --sarif FILE (lint findings), or NULL */
    const char *html;    /* --html FILE (the report page), or NULL */
    const char *summary; /* --summary FILE: a Markdown summary appended, or NULL */
    int annotations;     /* --annotations: GitHub Actions workflow commands on stdout */
    int quiet, verbose;  /* progress on stderr: off / with ORT's log */
} opts;

static int parse_args(int argc, char **argv, opts *o)
{
    const char *v;
    onp_run_args_init(&o->args);
    for (int i = 1; i < argc; i++) {
        int r = cli_run_opt(&o->args, ONP_RUN_ARGS_CHECK, argc, argv, &i);
        if (r < 0) return -1;
        if (r) continue;
        if ((r = cli_opt(argc, argv, &i, "model", &v))) {
            if (r < 0) return -1;
            o->model = v;
        } else if ((r = cli_opt(argc, argv, &i, "data", &v))) {
            if (r < 0) return -1;
            if (o->n_data >= MAX_DATA)
                return cli_usage_error(argv[0], "at most %d --data", MAX_DATA), -1;
            o->data[o->n_data++] = v;
        } else if ((r = cli_opt(argc, argv, &i, "format", &v))) {
            if (r < 0 || cli_parse_format(argv[0], v, &o->fmt)) return -1;
        } else if ((r = cli_opt(argc, argv, &i, "junit", &v))) {
            if (r < 0) return -1;
            o->junit = v;
        } else if ((r = cli_opt(argc, argv, &i, "sarif", &v))) {
            if (r < 0) return -1;
            o->sarif = v;
        } else if ((r = cli_opt(argc, argv, &i, "html", &v))) {
            if (r < 0) return -1;
            o->html = v;
        } else if (cli_progress_opt(argv, i, &o->quiet, &o->verbose)) {
        } else if ((r = cli_opt(argc, argv, &i, "summary", &v))) {
            if (r < 0) return -1;
            o->summary = v;
        } else if (cli_flag(argv, i, "annotations")) {
            o->annotations = 1;
        } else if (cli_target_arg(argv, i, "target", &o->target)) {
            return -1;
        }
    }
    if (o->target && (o->model || o->n_data))
        return cli_usage_error(argv[0], "give TARGET or --model/--data, not both"), -1;
    if (!o->target && !(o->model && o->n_data))
        return cli_usage_error(argv[0], "usage: onnxparity check TARGET | --model M --data DIR..."),
               -1;
    if (o->annotations && o->fmt == FMT_JSON)
        return cli_usage_error(argv[0], "--annotations writes workflow commands on stdout, where "
                                        "--format json writes the document: use one"),
               -1;
    return 0;
}

/* The lines under an output row that say what the noise rule saw: beyond
 * the tolerance (within or beyond the noise, against what reference), and
 * a vacuous comparison. */
static void print_judgment_text(const onp_output_verdict *x)
{
    const onp_judgment *j = &x->j;
    char a[16], b[16], c[16], d[16];
    if (j->vacuous == ONP_VACUOUS_BELOW_ATOL)
        printf("%-18s   vacuous: every |expected| is below atol (largest %s): judged with atol = "
               "rtol x that scale = %s instead\n",
               "", report_fmt(j->scale_max, a, sizeof a),
               report_fmt(j->tol_used.atol, b, sizeof b));
    else if (j->vacuous == ONP_VACUOUS_CONSTANT)
        printf("%-18s   vacuous: every row of the batch is identical in eager: the output does not "
               "depend on the sample here\n",
               "");
    /* the noise test's line: beyond the tolerance it is the verdict; within
     * it, said only when the float64-measured noise does not explain it */
    const char *what = onp_judgment_within_tol_beyond_noise(j)
                           ? "within tolerance, BEYOND float noise"
                       : j->verdict == ONP_VERDICT_WITHIN_NOISE ? "within float noise"
                       : j->verdict == ONP_VERDICT_BEYOND_NOISE ? "BEYOND float noise"
                                                                : NULL;
    if (!what) return;
    if (j->has_ref)
        printf("%-18s   %s: ORT vs float64 %s, eager vs float64 %s (float64 reference); gap %s, "
               "envelope %s\n",
               "", what, report_fmt(j->ort_err_max, a, sizeof a),
               report_fmt(j->eager_err_max, b, sizeof b), report_fmt(j->gap_max, c, sizeof c),
               report_fmt(j->envelope_max, d, sizeof d));
    else
        printf("%-18s   %s: gap %s, envelope %s (noise %s from %s)\n", "", what,
               report_fmt(j->gap_max, a, sizeof a), report_fmt(j->envelope_max, b, sizeof b),
               report_fmt(j->noise.max_abs, c, sizeof c), onp_noise_src_name(j->noise.src));
    if (j->verdict == ONP_VERDICT_WITHIN_TOL)
        printf("%-18s   a change smaller than the tolerance, not rounding: bisect's biggest "
               "error jump shows where it starts\n",
               "");
    if (j->verdict == ONP_VERDICT_WITHIN_NOISE)
        printf("%-18s   the export is as accurate as float32 eager; atol %s covers its float "
               "noise (--strict-tol makes the tolerance bind)\n",
               "", report_fmt(j->suggest_atol, a, sizeof a));
}

/* --- agreement and adequacy (issue 19) ------------------------------------
 * Top-1 agreement over every classifier row with the flip rate's
 * Clopper-Pearson bound (agreement.h), and the capture's fixture adequacy
 * report (adequacy.h), as text lines and JSON objects. */

static void print_agreement_text(const onp_fixture_verdict *res, size_t n)
{
    onp_agreement a;
    onp_agreement_collect(res, n, NULL, ONP_AGREEMENT_CONFIDENCE, &a);
    if (!a.rows) return;
    char r[16], u[16];
    printf("agreement top-1 %lld/%lld samples, %lld flipped: flip rate %s, at most %s at %g%% "
           "confidence (Clopper-Pearson)\n",
           (long long)a.agree, (long long)a.rows, (long long)a.flipped,
           report_fmt(a.flip_rate, r, sizeof r), report_fmt(a.flip_upper, u, sizeof u),
           100 * a.confidence);
}

static void print_adequacy_text(const onp_adequacy *a)
{
    if (!a || a->verdict == ONP_ADEQUACY_ABSENT) return;
    printf("fixtures %s: %lld samples in %lld fixtures, %lld shape group(s), %lld near a decision "
           "boundary\n",
           onp_adequacy_verdict_name(a->verdict), (long long)a->samples, (long long)a->fixtures,
           (long long)a->shape_groups, (long long)a->near_boundary);
    for (size_t i = 0; i < a->n_flags; i++)
        printf("         %s %s: %s\n", onp_adequacy_level_name(a->flags[i].level), a->flags[i].id,
               a->flags[i].message);
}

/* The capturing environment's onnxruntime, when parity.json records it:
 * its verdict beside the one under test, or why it was not checked. */
static void print_env_target(const onp_run_result *run)
{
    const onp_env_target *t = run->env_target;
    if (!t) return;
    if (!t->checked) {
        printf("target   capture environment: %s %s (%s) not checked: %s\n",
               t->package[0] ? t->package : "onnxruntime", t->version, t->library, t->why_not);
        return;
    }
    printf("target   capture environment: ONNX Runtime %s (%s) %s, %zu of %zu fixtures failed\n",
           t->version, t->library, onp_run_verdict_name(t->run.verdict), t->run.failed,
           t->run.n_fix);
}

/* The one-ulp rerun (ORT's noise estimate, docs/compare.md): one line when
 * some fixture ran it, or needed it and went without (issue 34: the reruns
 * stated); nothing when no output needed one (every fixture's noise_rerun
 * "not-needed" in the JSON document). */
static void print_reruns(const onp_fixture_verdict *res, size_t n)
{
    size_t c[ONP_RERUN_COUNT] = {0};
    for (size_t i = 0; i < n; i++)
        if ((unsigned)res[i].rerun < ONP_RERUN_COUNT) c[res[i].rerun]++;
    size_t wanted =
        c[ONP_RERUN_RAN] + c[ONP_RERUN_OFF] + c[ONP_RERUN_NO_FLOAT_INPUT] + c[ONP_RERUN_FAILED];
    if (!wanted) return;
    printf("noise    %zu of %zu fixture(s) had an output beyond its tolerance with no float64 "
           "statistic: ONNX Runtime reran %zu with one-ulp perturbed inputs",
           wanted, n, c[ONP_RERUN_RAN] + c[ONP_RERUN_FAILED]);
    if (c[ONP_RERUN_FAILED]) printf(" (%zu refused or lost)", c[ONP_RERUN_FAILED]);
    if (c[ONP_RERUN_OFF]) printf("; %zu not rerun: --no-noise-estimate", c[ONP_RERUN_OFF]);
    if (c[ONP_RERUN_NO_FLOAT_INPUT])
        printf("; %zu not rerun: no floating input", c[ONP_RERUN_NO_FLOAT_INPUT]);
    printf("\n");
}

/* The exporter the capture used, and a fallback between exporters. */
static void print_export(const onp_manifest *mf)
{
    const char *used = onp_manifest_exporter(mf), *fallback = onp_manifest_exporter_fallback(mf);
    if (!used) return;
    printf("export   %s exporter%s%s%s\n", used, fallback ? " (fallback under exporter=auto: " : "",
           fallback ? fallback : "", fallback ? ")" : "");
}

static void print_text(const opts *o, const char *model, onp_bundle *b, onp_ort *ort,
                       onp_session *s, const onp_run_result *run)
{
    const char *sha = onp_bundle_sha256(b);
    const onp_fixture_verdict *res = run->fix;
    size_t n = run->n_fix;
    size_t failed = run->failed, lint_errors = run->lint_errors;
    const onp_session_desc *d = onp_session_describe(s);
    printf("model    %s (sha256 %.12s)\n", model, sha);
    printf("runtime  ONNX Runtime %s, %s, opt-level %s\n", onp_ort_version(ort), d->provider,
           onp_ort_opt_level_name(d->opt_level));
    print_export(onp_bundle_manifest(b));
    print_env_target(run);
    printf("%-18s %-22s %-9s %-14s %-9s %-9s %-12s %-7s %-9s %s\n", "FIXTURE", "OUTPUT", "DTYPE",
           "SHAPE", "MAX_ABS", "MAX_REL", "MISMATCH", "TOP1", "ENVELOPE", "RESULT");
    onp_run_tally tally;
    onp_run_tally_of(res, n, &tally);
    size_t outs = tally.outputs;
    for (size_t i = 0; i < n; i++) {
        const onp_fixture_verdict *r = &res[i];
        const char *fx = strrchr(r->dir, '/') ? strrchr(r->dir, '/') + 1 : r->dir;
        if (r->status == 2) {
            printf("%-18s %-22s ERROR: %s\n", fx, "-", r->msg);
            continue;
        }
        for (size_t k = 0; k < r->n_out; k++) {
            const onp_output_verdict *x = &r->outs[k];
            char sh[64] = "-", ma[16] = "-", mr[16] = "-", mm[32] = "-", t1[24] = "-", ev[16] = "-";
            if (x->compared) {
                onp_shape_str(x->rank, x->dims, sh, sizeof sh);
                report_fmt(x->m.max_abs, ma, sizeof ma);
                report_fmt(x->m.max_rel, mr, sizeof mr);
                snprintf(mm, sizeof mm, "%lld/%lld", (long long)x->m.mismatches,
                         (long long)x->m.count);
            }
            if (x->has_topk)
                snprintf(t1, sizeof t1, "%lld/%lld", (long long)x->tk.top1_agree,
                         (long long)x->tk.rows);
            if (x->compared && x->j.noise.src != ONP_NOISE_NONE)
                report_fmt(x->j.envelope_max, ev, sizeof ev);
            const char *res_word = !x->pass ? "FAIL"
                                   : x->compared && x->j.verdict == ONP_VERDICT_WITHIN_NOISE
                                       ? "ok (float noise)"
                                       : "ok";
            printf("%-18s %-22s %-9s %-14s %-9s %-9s %-12s %-7s %-9s %s%s%s\n", fx, x->name,
                   x->compared ? onp_dtype_name(x->m.expected_dtype) : "-", sh, ma, mr, mm, t1, ev,
                   res_word, x->note[0] ? ": " : "", x->note);
            if (x->compared) print_judgment_text(x);
            if (x->compared && !x->pass && x->m.worst_index >= 0 && x->m.shape_ok) {
                char we[16], wa[16], nr[16], na[16];
                printf("%-18s   worst at index %lld: expected %s, got %s; passes with rtol %s or "
                       "atol %s\n",
                       "", (long long)x->m.worst_index,
                       report_fmt(x->m.worst_expected, we, sizeof we),
                       report_fmt(x->m.worst_actual, wa, sizeof wa),
                       report_fmt(x->m.needed_rtol, nr, sizeof nr),
                       report_fmt(x->m.needed_atol, na, sizeof na));
            }
        }
    }
    print_agreement_text(res, n);
    print_reruns(res, n);
    size_t lost = run->lost;
    if (run->verdict == ONP_RUN_ERROR)
        printf("verdict: ERROR — ONNX Runtime crashed or timed out on %zu of %zu fixtures (the "
               "others: %zu outputs compared, %zu fixtures failed in all)\n",
               lost, n, outs, failed);
    else if (!failed && lint_errors)
        printf("verdict: FAIL — the numbers agree (%zu fixtures, %zu outputs), but %zu error-level "
               "lint "
               "finding(s): see the causes above\n",
               n, outs, lint_errors);
    else
        printf("verdict: %s — %zu fixtures, %zu outputs compared, %zu fixtures failed\n",
               run->verdict == ONP_RUN_FAIL ? "FAIL" : "pass", n, outs, failed);
    size_t quiet = lost ? 0 : tally.quiet;
    if (quiet) {
        char q[4200];
        printf("note     %zu output(s) within tolerance but beyond their float noise (marked "
               "above): the tolerance passes a change that is not rounding%s%s%s\n",
               quiet, o->target ? "; onnxparity bisect " : "",
               o->target ? onp_shell_quote(o->target, q, sizeof q) : "",
               o->target ? " shows where the error jumps" : "");
    }
}

/* --- causes: the library's derivation (causes.h) over what check knows -----
 *
 * The lint findings, the judged fixtures and, on a failure, bisect: the same
 * record and the same rules as `diagnose`, which adds its probes and sweep. */

/* --annotations: the causes, then one ::error per failing output (at most
 * 50) with its metrics. */
static void print_annotations(const char *model, const onp_fixture_verdict *res, size_t n,
                              const onp_causes *cs)
{
    gh_causes_commands(stdout, cs, model);
    size_t shown = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < res[i].n_out && shown < 50; k++) {
            const onp_output_verdict *x = &res[i].outs[k];
            const char *fx = strrchr(res[i].dir, '/') ? strrchr(res[i].dir, '/') + 1 : res[i].dir;
            char title[400], txt[2048] = "";
            if (x->pass) continue;
            snprintf(title, sizeof title, "onnxparity check: %s fails on %s", x->name, fx);
            if (x->compared) junit_metrics_text(&x->m, txt, sizeof txt);
            gh_command(stdout, "error", model, title, txt[0] ? txt : x->note);
            shown++;
        }
}

/* --summary FILE: the verdict, the causes and the outputs (failing ones
 * first, at most 100 rows) as Markdown, appended. */
static int write_summary(const opts *o, const char *model, const onp_run_result *run)
{
    FILE *f;
    int open_rc = gh_summary_open(o->summary, &f);
    if (open_rc) return open_rc;
    const onp_fixture_verdict *res = run->fix;
    size_t n = run->n_fix;
    fprintf(f, "### onnxparity check: %s\n\n`", report_verdict_word(run->verdict));
    gh_md_text(f, model);
    fprintf(f, "`: %zu fixture(s), %zu failed, %zu error-level lint finding(s)\n", n, run->failed,
            run->lint_errors);
    gh_md_causes(f, run->causes);
    const onp_bisect_point *p = onp_run_first_divergent(run);
    if (p) {
        fputs("\n**First divergent node**: `", f);
        gh_md_text(f, p->node[0] ? p->node : "(unnamed)");
        fprintf(f, "` (%s)\n", p->op_type);
    }
    fputs("\n| fixture | output | max_abs | max_rel | needed atol | envelope | result |\n"
          "|---|---|---|---|---|---|---|\n",
          f);
    size_t rows = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < res[i].n_out && rows < 100; k++) {
                const onp_output_verdict *x = &res[i].outs[k];
                const char *fx =
                    strrchr(res[i].dir, '/') ? strrchr(res[i].dir, '/') + 1 : res[i].dir;
                char a[16], r[16], na[16], ev[16];
                if (x->pass != pass) continue;
                fputs("| ", f);
                gh_md_text(f, fx);
                fputs(" | ", f);
                gh_md_text(f, x->name);
                fprintf(f, " | %s | %s | %s | %s | %s |\n", report_fmt(x->m.max_abs, a, sizeof a),
                        report_fmt(x->m.max_rel, r, sizeof r),
                        report_fmt(x->m.needed_atol, na, sizeof na),
                        x->j.noise.src != ONP_NOISE_NONE
                            ? report_fmt(x->j.envelope_max, ev, sizeof ev)
                            : "-",
                        x->pass ? "ok" : "**FAIL**");
                rows++;
            }
    fputc('\n', f);
    return fclose(f) ? EXIT_IO : 0;
}

/* --junit FILE: one testcase per fixture x output (classname: the fixture's
 * folder name), failures carrying the metrics; one failing testcase
 * (classname "lint") per error-level lint finding, since those fail the
 * check too. */
static int write_junit(const opts *o, const onp_fixture_verdict *res, const double *secs, size_t n,
                       const onp_lint_result *l, const onp_env *env)
{
    junit j;
    junit_init(&j);
    junit_env_properties(&j, env);
    /* bundle-wide cases once: in shard 0 of a sharded run */
    for (size_t i = 0; (!o->args.run.shard_n || o->args.run.shard_i == 0) && i < l->n; i++) {
        const onp_lint_finding *f = &l->findings[i];
        char name[512];
        if (f->rule->severity != ONP_LINT_ERROR) continue;
        snprintf(name, sizeof name, "%s %s%s%s", f->rule->id, f->rule->name,
                 f->loc.name[0] ? " at " : "", f->loc.name);
        junit_case(&j, "lint", name, JUNIT_FAIL, f->message, f->rule->fix);
    }
    for (size_t i = 0; i < n; i++) {
        const onp_fixture_verdict *r = &res[i];
        const char *fx = strrchr(r->dir, '/') ? strrchr(r->dir, '/') + 1 : r->dir;
        junit_set_time(&j, secs ? secs[i] / (double)(r->n_out ? r->n_out : 1) : 0);
        if (r->status == 2 && !r->n_out) junit_case(&j, fx, "(fixture)", JUNIT_ERROR, r->msg, NULL);
        for (size_t k = 0; k < r->n_out; k++) {
            const onp_output_verdict *x = &r->outs[k];
            char txt[2048] = "",
                 msg[sizeof x->note + 2 + sizeof txt]; /* note ": " metrics, whole */
            if (x->pass) {
                junit_case(&j, fx, x->name, JUNIT_PASS, NULL, NULL);
                continue;
            }
            if (r->status == 2) {
                junit_case(&j, fx, x->name, JUNIT_ERROR, r->msg, NULL);
                continue;
            }
            if (x->compared) junit_metrics_text(&x->m, txt, sizeof txt);
            if (x->has_topk)
                snprintf(txt + strlen(txt), sizeof txt - strlen(txt), "; top-1 agreement %lld/%lld",
                         (long long)x->tk.top1_agree, (long long)x->tk.rows);
            snprintf(msg, sizeof msg, "%s%s%s", x->note, x->note[0] && txt[0] ? ": " : "", txt);
            junit_case(&j, fx, x->name, JUNIT_FAIL, msg, msg);
        }
    }
    onp_agreement ag; /* issue 19: one testcase carrying the flip-rate statistic */
    onp_agreement_collect(res, n, NULL, ONP_AGREEMENT_CONFIDENCE, &ag);
    junit_agreement_case(&j, &ag);
    onp_error e;
    onp_error_clear(&e);
    int rc = junit_write(&j, "onnxparity check", o->junit, &e) ? cli_report(&e) : 0;
    junit_free(&j);
    return rc;
}

/* Progress on stderr: only on a terminal (never in CI logs) or with
 * --verbose; --quiet silences it. */
static void progress(void *ctx, size_t k, size_t n, const char *dir)
{
    const opts *o = ctx;
    fprintf(stderr, o->verbose ? "check: fixture %zu/%zu %s\n" : "\rcheck: fixture %zu/%zu %s ", k,
            n, dir);
}

/* The JSON document when ONNX Runtime could not load the model. */
static void print_load_error(const opts *o, const char *model)
{
    if (o->fmt != FMT_JSON) return;
    report_print_json(onp_doc_not_run("onnxparity.check/1", model,
                                      "ONNX Runtime could not load the model (see stderr)"));
}

/* The document (printed and/or the page); returns the page's exit code. */
static int emit_doc(const opts *o, const char *model, onp_bundle *b, onp_ort *ort, onp_session *s,
                    const onp_run_opts *ro, const onp_run_result *run, int upgraded)
{
    return report_emit(onp_doc_check(b, ort, s, ro, run, upgraded), o->fmt == FMT_JSON, o->html,
                       model);
}

/* The text report. */
static void emit_text(const opts *o, const char *model, onp_bundle *b, onp_ort *ort, onp_session *s,
                      const onp_run_opts *ro, const onp_run_result *run, int upgraded)
{
    if (upgraded) printf("note     legacy opset < 7 model upgraded to opset 7 in memory\n");
    if (ro->shard_n)
        printf("shard    %ld/%ld: %zu of %zu fixtures\n", ro->shard_i, ro->shard_n, run->n_fix,
               run->n_total);
    char args[8192];
    report_causes_text(run->causes, cli_target_args(o->target, model, (const char *const *)o->data,
                                                    o->n_data, args, sizeof args));
    report_latent_text(run->causes, onp_run_lint_of(ro, run), o->target ? o->target : model);
    print_adequacy_text(onp_bundle_adequacy(b));
    print_text(o, model, b, ort, s, run);
    const onp_bisect_point *p = onp_run_first_divergent(run);
    if (p) {
        char q[4200];
        printf("first divergent node: %s (%s), output %s%s%s (onnxparity bisect %s)\n",
               p->node[0] ? p->node : "(unnamed)", p->op_type, p->value,
               p->module[0] ? ", module " : "", p->module,
               onp_shell_quote(o->target ? o->target : model, q, sizeof q));
        if (onp_run_absorbed(run)) /* issue 35: the sentence bisect writes too */
            printf("absorbed: " ONP_BISECT_ABSORBED_WORDS
                   ": %s leaves its noise envelope (fixture %d) but the outputs pass\n",
                   p->node[0] ? p->node : "(unnamed)", p->fail_fixture);
    }
}

/* Every report the options ask for; returns the exit code. */
static int emit(const opts *o, const char *model, onp_bundle *b, onp_ort *ort, onp_session *s,
                const onp_run_opts *ro, const onp_run_result *run, int upgraded)
{
    int rc = onp_run_exit_code(run->verdict);
    int html_rc =
        o->fmt == FMT_JSON || o->html ? emit_doc(o, model, b, ort, s, ro, run, upgraded) : 0;
    if (o->fmt != FMT_JSON) emit_text(o, model, b, ort, s, ro, run, upgraded);
    if (html_rc) rc = html_rc;
    if (o->fmt != FMT_JSON && o->annotations)
        print_annotations(model, run->fix, run->n_fix, run->causes);
    int sum_rc = o->summary ? write_summary(o, model, run) : 0;
    if (sum_rc) rc = sum_rc;
    const onp_lint_result *lint = onp_run_lint_of(ro, run);
    int junit_rc = o->junit ? write_junit(o, run->fix, run->secs, run->n_fix, lint, &run->env) : 0;
    if (junit_rc) rc = junit_rc;
    int sarif_rc = o->sarif ? lint_sarif_write(o->sarif, model, lint) : 0;
    if (sarif_rc) rc = sarif_rc; /* the lint findings for code scanning */
    return rc;
}

int cmd_check(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) return EXIT_USAGE;
    if (o.target) o.data[o.n_data++] = o.target;
    if (cli_progress_on(o.quiet, o.verbose)) {
        o.args.run.progress = progress;
        o.args.run.progress_ctx = &o;
    }
    onp_bundle_spec sp = {o.target, o.model, (const char *const *)o.data, o.n_data};
    onp_error e;
    onp_error_clear(&e);
    onp_check c;
    int rc = 0;
    int run_rc = onp_check_run(&c, &sp, &o.args, &e);
    if (o.args.run.progress && !o.verbose) fprintf(stderr, "\r\033[K");
    if (o.verbose) { /* what ONNX Runtime logged (warnings and above) */
        char log[8192];
        if (onp_ort_log_take(log, sizeof log))
            fprintf(stderr, "check: ONNX Runtime said:\n%s\n", log);
    }
    const char *model = c.bundle ? onp_bundle_model_path(c.bundle) : o.model;
    if (run_rc) {
        rc = cli_report(&e);
        if (c.load_failed) print_load_error(&o, model);
    } else {
        rc = emit(&o, model, c.bundle, c.ort, c.session, &o.args.run, &c.run, c.upgraded);
    }
    int ran = c.ran;
    onp_check_release(&c);
    if (rc >= EXIT_USAGE && o.junit && !ran) { /* the upload step still gets a file */
        char why[1400];
        if (e.code)
            onp_error_format(&e, why, sizeof why);
        else
            snprintf(why, sizeof why, "the check could not run (exit %d): the log says why", rc);
        junit_write_error("onnxparity check", "run", why, o.junit);
    }
    return rc;
}
