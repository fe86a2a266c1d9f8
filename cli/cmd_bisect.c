/*
 * cmd_bisect.c — `onnxparity bisect TARGET [--fixture K] [--reference
 * eager|disable] [--chunk N] [--max-exposed-bytes B]`: name the first node
 * where ONNX Runtime leaves eager PyTorch (or ORT at opt-level disable).
 *
 * The work is libonnxparity's (include/onnxparity/bisect.h): the values to
 * compare become graph outputs, chunk by chunk, each session runs each
 * fixture once, the values are compared in topological order, the first
 * divergent node is rerun alone (local or inherited), and the plain model
 * tells whether the instrumented one reproduces the mismatch.  This file
 * parses flags and prints the result: text that leads with the first
 * divergent node in one line, or the "onnxparity.bisect/1" JSON document
 * (docs/cli.md, "## bisect").  The reference defaults to eager when the
 * bundle has intermediates, else to ORT at disable.
 *
 * Exit: 0 every compared value agrees; 1 a first divergent node was found,
 * or none was but the plain model's outputs fail (verdict "inconclusive");
 * 2 bad usage, no fixtures, or --reference eager without intermediates;
 * 3 unreadable files; 4 ONNX Runtime cannot load or run the model.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h> /* first: it defines __GLIBC__ */
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "onnxparity/bisect.h"
#include "onnxparity/run.h"
#include "ortopts.h"
#include "onnxparity/doc.h"
#include "report.h"
#include "target.h"

#define CURVE_WINDOW 5 /* text: curve points shown either side of the first divergent */

typedef struct opts {
    cli_ort ort;   /* the run's options (ORT, tolerance, bisect's own), parsed by run.h's table */
    cli_target tg; /* TARGET, or --model/--data */
    const char *target;
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
    for (int i = 1; i < argc; i++) {
        int r = cli_ort_opt_groups(
            &o->ort, ONP_RUN_ARGS_ORT | ONP_RUN_ARGS_TOL | ONP_RUN_ARGS_BISECT, argc, argv, &i);
        if (r < 0) return -1;
        if (r) continue;
        if ((r = cli_opt(argc, argv, &i, "format", &v))) {
            if (r < 0 || cli_parse_format(argv[0], v, &o->fmt)) return -1;
        } else if ((r = cli_opt(argc, argv, &i, "html", &v))) {
            if (r < 0) return -1;
            o->html = v;
        } else if (cli_progress_opt(argv, i, &o->quiet, &o->verbose)) {
        } else if ((r = cli_target_opt(&o->tg, argc, argv, &i))) {
            if (r < 0) return -1;
        } else if (cli_target_arg(argv, i, "target", &o->target)) {
            return -1;
        }
    }
    return cli_target_finish(&o->tg, argv[0], o->target);
}

// --- text -----------------------------------------------------------------------

static void print_point(size_t i, const onp_bisect_point *p, int mark)
{
    char ma[16] = "-", mr[16] = "-", ev[16] = "-", jp[16] = "-";
    if (p->compared) {
        report_fmt(p->max_abs, ma, sizeof ma);
        report_fmt(p->max_rel, mr, sizeof mr);
        if (p->noise.src != ONP_NOISE_NONE) report_fmt(p->envelope_max, ev, sizeof ev);
        report_fmt(p->jump, jp, sizeof jp);
    }
    printf("%s%4zu  %-20s %-28s %-10s %-10s %-10s %-9s %s%s%s\n  %6s%s\n", mark ? "> " : "  ", i,
           p->op_type, p->module[0] ? p->module : "-", ma, mr, ev, jp,
           !p->compared                             ? "-"
           : !p->pass                               ? "FAIL"
           : p->verdict == ONP_VERDICT_WITHIN_NOISE ? "ok (noise)"
                                                    : "ok",
           p->note[0] ? ": " : "", p->note, "", p->value);
}

/* What the first divergent line says of where the divergence starts: one
 * statement that the local rerun (printed below it) cannot contradict. */
static const char *first_clause(const onp_bisect_result *r)
{
    if (!onp_doc_bisect_inputs_agree(r))
        return "an input has no eager reference: it may start upstream";
    if (r->local.ran && r->local.local)
        return "its inputs are inside their tolerance or noise and the node alone fails: the "
               "divergence starts here";
    if (r->local.ran)
        return "its inputs are inside their tolerance or noise, yet the node alone on reference "
               "inputs agrees: it amplifies the small differences its inputs carry";
    return "its inputs are inside their tolerance or noise: the value leaves its envelope here";
}

/* Where the noise estimates came from, in words. */
static const char *noise_words(const onp_bisect_result *r, char *buf, size_t n)
{
    if (r->n_noise_float64 && !r->n_noise_ort)
        snprintf(buf, n, "float64 statistics of the capture (%zu fixture%s)", r->n_noise_float64,
                 r->n_noise_float64 == 1 ? "" : "s");
    else if (r->n_noise_ort)
        snprintf(buf, n,
                 "estimated on ORT's side: the spread of each value under one-ulp input "
                 "perturbation (%zu fixture%s without float64 statistics)",
                 r->n_noise_ort, r->n_noise_ort == 1 ? "" : "s");
    else
        snprintf(buf, n, "none: the tolerance alone decides");
    return buf;
}

/* The branch: line (issue 35): the branch the trace fixed, which left no
 * node of its own before the first divergent node f. */
static void print_branch(const onp_bisect_result *r, const onp_bisect_point *f)
{
    if (!r->branch.found) return;
    char mods[700] = "";
    for (size_t i = 0, u = 0; i < r->branch.n_modules && i < 4 && u < sizeof mods; i++)
        u += (size_t)snprintf(mods + u, sizeof mods - u, "%s%s", i ? ", " : "",
                              r->branch.modules[i][0] ? r->branch.modules[i] : "(the model itself)");
    printf("branch:  decided at trace time by %s%s%s%s%s%s%s: a branch leaves no node of its own, "
           "so %s is the first value after it; the traced fixture %d takes the graph's path, "
           "fixture %d diverges\n",
           r->branch.where, r->branch.code[0] ? " (`" : "", r->branch.code,
           r->branch.code[0] ? "`)" : "",
           r->branch.n_modules ? (r->branch.n_modules > 1 ? " in modules " : " in module ") : "",
           mods, r->branch.n_modules > 4 ? " and more" : "", f->node[0] ? f->node : "(unnamed)",
           r->branch.traced_fixture, f->fail_fixture);
}

/* One line: does the first divergent node own its error? */
static void print_local(const onp_bisect_result *r)
{
    const onp_bisect_local *L = &r->local;
    const char *ref = r->reference == ONP_BISECT_REF_DISABLE ? "disable-level" : "eager";
    char ma[16], mi[16], nodes[64] = "";
    if (L->n_nodes > 1)
        snprintf(nodes, sizeof nodes, " (with %zu unmapped nodes before it)", L->n_nodes - 1);
    if (!L->ran)
        printf("local:   not determined: %s\n", L->note[0] ? L->note : "not run");
    else if (L->local && L->n_nodes > 1) /* no eager value between: any of them may own it */
        printf("local:   the node%s on %s inputs still fails: max_abs %s, %lld mismatches "
               "(fixture %d): the error is LOCAL to those %zu nodes, not necessarily to this one "
               "(none of the others has an eager value to compare)\n",
               nodes, ref, report_fmt(L->max_abs, ma, sizeof ma), L->mismatches, L->fixture,
               L->n_nodes);
    else if (L->local)
        printf("local:   the node alone on %s inputs still fails: max_abs %s, %lld mismatches "
               "(fixture %d): the error is LOCAL, the node owns it\n",
               ref, report_fmt(L->max_abs, ma, sizeof ma), L->mismatches, L->fixture);
    else
        printf("local:   the node alone%s on %s inputs agrees (max_abs %s, fixture %d): the error "
               "is INHERITED from its inputs (worst input max_abs %s)\n",
               nodes, ref, report_fmt(L->max_abs, ma, sizeof ma), L->fixture,
               report_fmt(L->input_max_abs, mi, sizeof mi));
}

/* One line, louder when the instrumented model does not reproduce. */
static void print_verify(const onp_bisect_result *r)
{
    const onp_bisect_verify *v = &r->verify;
    char pa[16], ia[16];
    if (!v->ran) {
        if (v->note[0]) printf("reproduce: not checked: %s\n", v->note);
        return;
    }
    report_fmt(v->plain_max_abs, pa, sizeof pa);
    report_fmt(v->instrumented_max_abs, ia, sizeof ia);
    if (v->reproduces)
        printf("reproduce: the instrumented model reproduces the plain model's outputs vs %s "
               "(plain max_abs %s %s, instrumented %s %s)\n",
               onp_doc_bisect_ref_words(r), pa, v->plain_pass ? "pass" : "FAIL", ia,
               v->instrumented_pass ? "pass" : "FAIL");
    else
        printf("WARNING: the instrumented model does NOT reproduce the mismatch (plain max_abs %s "
               "%s, instrumented %s %s): %s\n",
               pa, v->plain_pass ? "pass" : "FAIL", ia, v->instrumented_pass ? "pass" : "FAIL",
               v->note);
    if (r->fallback[0]) printf("fallback: %s: %s\n", r->fallback, r->fallback_note);
    if (r->reference_note[0]) printf("reference: %s\n", r->reference_note); /* issue 19 */
}

static void print_text(const opts *o, const onp_bisect_result *r, onp_ort *ort)
{
    const onp_bisect_point *f = r->first >= 0 ? &r->points[r->first] : NULL;
    char ma[16], mr[16];
    size_t failed = 0, compared = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        compared += r->points[i].compared > 0;
        failed += r->points[i].compared && !r->points[i].pass;
    }
    char ev[16], jp[16], nw[256], args[8192];
    /* the same target for the commands the inconclusive lines name */
    const char *a = cli_target_args(o->tg.bundle, o->tg.model, (const char *const *)o->tg.data,
                                    o->tg.n_data, args, sizeof args);
    if (f) {
        printf("first divergent: node %s (%s), output %s, module %s: max_abs %s, max_rel %s, "
               "noise envelope %s, error grown %sx over its inputs (fixture %d); %s\n",
               f->node[0] ? f->node : "(unnamed)", f->op_type, f->value,
               f->module[0] ? f->module : "-", report_fmt(f->max_abs, ma, sizeof ma),
               report_fmt(f->max_rel, mr, sizeof mr),
               f->noise.src != ONP_NOISE_NONE ? report_fmt(f->envelope_max, ev, sizeof ev) : "-",
               report_fmt(f->jump, jp, sizeof jp), f->fail_fixture, first_clause(r));
        print_branch(r, f);
        if (onp_bisect_absorbed(r))
            printf("absorbed: " ONP_BISECT_ABSORBED_WORDS
                   " (the plain model's outputs pass, max_abs "
                   "%s): the divergence at %s is real but does not reach them, so onnxparity "
                   "check%s%s passes\n",
                   report_fmt(r->verify.plain_max_abs, ma, sizeof ma),
                   f->node[0] ? f->node : "(unnamed)", a ? " " : "", a ? a : "");
    } else if (r->n_refused) {
        char list[256] = "";
        for (size_t i = 0, u = 0; i < r->n_refused && u < sizeof list - 16; i++)
            u += (size_t)snprintf(list + u, sizeof list - u, "%s%d", i ? ", " : "", r->refused[i]);
        printf("inconclusive: all %zu values compared agree with %s on the fixtures ONNX Runtime "
               "runs, but it refused %zu fixture(s) (%s), which cannot be bisected: a shape or "
               "dtype the graph does not take%s%s%s (ONNX Runtime: %s)\n",
               compared, onp_doc_bisect_ref_words(r), r->n_refused, list,
               a ? "; onnxparity check " : "", a ? a : "", a ? " names why" : "", r->refused_msg);
    } else if (onp_bisect_inconclusive_by_expected(r))
        printf("inconclusive: all %zu values compared agree with %s, but the plain model's "
               "outputs fail against the fixtures' expected outputs (max_abs %s): the model "
               "computes the same at every optimization level, so the difference is in the "
               "export itself (or in the expected outputs); to bisect it against eager, capture "
               "a bundle with onnxparity.capture (it stores eager's intermediates)\n",
               compared, onp_doc_bisect_ref_words(r),
               report_fmt(r->verify.expected_max_abs, ma, sizeof ma));
    else if (onp_bisect_inconclusive(r))
        printf("inconclusive: all %zu values compared agree with %s, but the plain model's "
               "outputs fail: the divergence is not where the curve can see it%s%s%s\n",
               compared, onp_doc_bisect_ref_words(r), a ? "; onnxparity diagnose " : "", a ? a : "",
               a ? " probes what bisect cannot see (a branch fixed at trace time, a shape, "
                   "the batch)"
                 : "");
    else
        printf("agrees: all %zu values compared agree with %s: no value leaves its tolerance or "
               "its noise envelope\n",
               compared, onp_doc_bisect_ref_words(r));
    if (r->jump_point >= 0) {
        const onp_bisect_point *jpt = &r->points[r->jump_point];
        printf("biggest error jump: node %s (%s), module %s: relative error %s, %sx its inputs'\n",
               jpt->node[0] ? jpt->node : "(unnamed)", jpt->op_type,
               jpt->module[0] ? jpt->module : "-", report_fmt(jpt->rel_err, ma, sizeof ma),
               report_fmt(jpt->jump, jp, sizeof jp));
    }
    printf("noise    %s\n", noise_words(r, nw, sizeof nw));
    if (f) print_local(r);
    if (r->repro[0])
        printf("repro    %s: the node alone, its reference inputs and expected output (onnxparity "
               "check '%s' --strict-tol; README.md there)\n",
               r->repro, r->repro);
    else if (r->repro_note[0])
        printf("repro    %s\n", r->repro_note);
    print_verify(r);
    printf("model    %s (sha256 %.12s)\n", r->model, r->sha256);
    printf("runtime  ONNX Runtime %s, %s, opt-level %s\n", onp_ort_version(ort), r->provider,
           onp_ort_opt_level_name(r->opt_level));
    printf("reference %s\n", r->reference == ONP_BISECT_REF_DISABLE
                                 ? "ORT at opt-level disable, every node output exposed"
                                 : "the bundle's eager intermediates");
    printf("chunks   %zu instrumented session%s of at most %zu values", r->n_chunks,
           r->n_chunks == 1 ? "" : "s", r->chunk);
    if (r->estimated_bytes)
        printf(" (estimated %llu bytes per run, budget %llu)", r->estimated_bytes, r->budget);
    printf("\n");
    if (r->upgraded) printf("note     legacy opset < 7 model upgraded to opset 7 in memory\n");
    printf("fixtures");
    for (size_t i = 0; i < r->n_fixtures; i++) printf(" %d", r->fixtures[i]);
    printf("; %zu values exposed, %zu compared, %zu fail", r->n_exposed, compared, failed);
    if (r->n_unmatched) printf(", %zu references no node computes", r->n_unmatched);
    printf("\n");
    if (f) {
        printf("inputs of %s:\n", f->node[0] ? f->node : "the first divergent node");
        for (size_t k = 0; k < r->n_inputs; k++) {
            const onp_bisect_input *x = &r->inputs[k];
            printf("  %-40s %-13s", x->name[0] ? x->name : "\"\"",
                   onp_doc_bisect_src_name(r, x->src));
            if (x->src == ONP_BISECT_SRC_EAGER)
                printf(" max_abs %-10s %s", report_fmt(x->max_abs, ma, sizeof ma),
                       x->pass ? "ok" : "FAIL");
            printf("\n");
        }
    }
    size_t lo = 0, hi = r->n_points;
    if (f) {
        lo = (size_t)r->first > CURVE_WINDOW ? (size_t)r->first - CURVE_WINDOW : 0;
        hi = (size_t)r->first + CURVE_WINDOW + 1 < r->n_points ? (size_t)r->first + CURVE_WINDOW + 1
                                                               : r->n_points;
    }
    printf("curve (topological order%s):\n", f ? ", around the first divergent" : "");
    printf("  %4s  %-20s %-28s %-10s %-10s %-10s %-9s %s\n", "#", "OP", "MODULE", "MAX_ABS",
           "MAX_REL", "ENVELOPE", "JUMP", "RESULT");
    if (lo) printf("  ... %zu before\n", lo);
    for (size_t i = lo; i < hi; i++) print_point(i, &r->points[i], (long)i == r->first);
    if (hi < r->n_points)
        printf("  ... %zu after (--format json has the whole curve)\n", r->n_points - hi);
    (void)o;
}

// --- JSON -----------------------------------------------------------------------

static int json_error(const opts *o, const char *model, const char *msg, int rc)
{
    if (o->fmt == FMT_JSON) report_print_json(onp_doc_bisect_error(model, o->ort.a.fixture, msg));
    return rc;
}

int cmd_bisect(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) return EXIT_USAGE;
    char buf[2048];
    const char *model = o.tg.model;
    onp_error e;
    onp_error_clear(&e);
    onp_ort *ort;
    if (onp_ort_open(o.ort.lib, &ort, &e)) {
        int rc = cli_report(&e);
        return json_error(&o, model, onp_error_format(&e, buf, sizeof buf), rc);
    }
#if defined(__GLIBC__)
    /* Asked to bound memory: glibc raises its mmap threshold after each large
     * free, so the next chunk's outputs would come from a heap that never
     * shrinks and the peak would not follow the chunk.  A fixed 1 MiB
     * threshold returns each large tensor to the system when released
     * (resnet18, batch 4, --chunk 2: peak 336 -> 242 MB; ~20% slower). */
    if (o.ort.a.chunk || o.ort.a.max_exposed) mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    /* the run's plan (run.h), as check, gate and diagnose bisect, plus
     * this command's own choices: one fixture, the chunking */
    onp_bundle_spec where = {o.tg.bundle, o.tg.model, o.tg.data, o.tg.n_data};
    onp_bisect_opts bo;
    onp_run_args_bisect_plan(&o.ort.a, &where, &bo);
    onp_bisect_result *r = NULL;
    int rc;
    stage(&o, "bisect: exposing the intermediates, one ONNX Runtime run per fixture");
    if (onp_bisect_run(ort, cli_target_name(&o.tg), &bo, &r, &e)) {
        rc = cli_report(&e);
        rc = json_error(&o, model, onp_error_format(&e, buf, sizeof buf), rc);
    } else if (r->status == ONP_BISECT_NO_REFERENCE) {
        fprintf(stderr, "onnxparity bisect: %s\n",
                r->reference_note[0] ? r->reference_note
                                     : onp_doc_bisect_no_reference(r, buf, sizeof buf));
        rc = json_error(&o, model, buf, EXIT_USAGE);
    } else {
        int html_rc = 0;
        if (o.fmt == FMT_JSON || o.html)
            html_rc = report_emit(onp_doc_bisect(r, ort, &o.ort.so, o.ort.a.fixture),
                                  o.fmt == FMT_JSON, o.html, model);
        if (o.fmt != FMT_JSON) print_text(&o, r, ort);
        rc = onp_run_exit_code(onp_run_bisect_verdict(r));
        if (html_rc) rc = html_rc;
    }
    onp_bisect_free(r); /* NULL when the run failed */
    onp_ort_close(ort);
    return rc;
}
