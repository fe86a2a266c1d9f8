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
    cli_ort ort;
    cli_target tg; /* TARGET, or --model/--data */
    const char *target;
    long fixture; /* -1: every fixture */
    double rtol, atol;
    cli_format fmt;
    const char *html;   /* --html FILE (the report page), or NULL */
    int quiet, verbose; /* stage lines on stderr: a terminal or --verbose, never --quiet */
    int reference;      /* onp_bisect_ref; AUTO unless --reference */
    long chunk;         /* --chunk N; 0: automatic */
    unsigned long long max_exposed; /* --max-exposed-bytes; 0: the library's default */
    int no_noise;           /* --no-noise-estimate: no perturbed rerun without float64 statistics */
    int strict_tol;         /* --strict-tol: the tolerance binds, noise or not */
    const char *save_repro; /* --save-repro DIR, or NULL */
} opts;

/* "1073741824", "512M", "2G", "64K" (binary units) into *out; -1 + usage
 * message when malformed or 0. */
static int parse_bytes(const char *cmd, const char *s, unsigned long long *out)
{
    char *end;
    if (!isdigit((unsigned char)s[0])) goto bad; /* strtoull would take " -1" */
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10), mul = 1;
    if (end == s || errno == ERANGE) goto bad;
    static const char units[] = "KMGT"; /* binary: K = 2^10, ... */
    int up = *end & ~0x20;              /* upper case; 0 for NUL and ' ' */
    const char *u = up ? strchr(units, up) : NULL;
    if (u) {
        mul = 1ULL << (10 * (u - units + 1));
        end++;
    }
    if (mul > 1 && *end == 'i') end++; /* "MiB" */
    if (*end == 'B') end++;
    if (*end || !v || v > ~0ULL / mul) goto bad;
    *out = v * mul;
    return 0;
bad:
    return cli_usage_error(cmd, "--max-exposed-bytes %s: expected a positive size (e.g. 512M, 2G)",
                           s),
           -1;
}

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
    o->fixture = -1;
    o->reference = ONP_BISECT_REF_AUTO;
    for (int i = 1; i < argc; i++) {
        int r = cli_ort_opt(&o->ort, argc, argv, &i);
        if (r < 0) return -1;
        if (r) continue;
        if ((r = cli_opt(argc, argv, &i, "fixture", &v))) {
            if (r < 0 || cli_int(argv[0], "fixture", v, &o->fixture)) return -1;
            if (o->fixture > 1000000000L)
                return cli_usage_error(argv[0], "--fixture %s is out of range", v), -1;
        } else if ((r = cli_tol_format_opt(argc, argv, &i, &o->rtol, &o->atol, &o->fmt))) {
            if (r < 0) return -1;
        } else if ((r = cli_opt(argc, argv, &i, "html", &v))) {
            if (r < 0) return -1;
            o->html = v;
        } else if ((r = cli_opt(argc, argv, &i, "reference", &v))) {
            if (r < 0) return -1;
            if (!strcmp(v, "eager"))
                o->reference = ONP_BISECT_REF_EAGER;
            else if (!strcmp(v, "disable"))
                o->reference = ONP_BISECT_REF_DISABLE;
            else
                return cli_usage_error(argv[0], "--reference %s: expected eager or disable", v), -1;
        } else if ((r = cli_opt(argc, argv, &i, "chunk", &v))) {
            if (r < 0 || cli_int(argv[0], "chunk", v, &o->chunk)) return -1;
            if (o->chunk < 1 || o->chunk > 1000000000L)
                return cli_usage_error(argv[0], "--chunk %s: expected N >= 1", v), -1;
        } else if ((r = cli_opt(argc, argv, &i, "max-exposed-bytes", &v))) {
            if (r < 0 || parse_bytes(argv[0], v, &o->max_exposed)) return -1;
        } else if (cli_progress_opt(argv, i, &o->quiet, &o->verbose)) {
        } else if (cli_flag(argv, i, "no-noise-estimate")) {
            o->no_noise = 1;
        } else if (cli_flag(argv, i, "strict-tol")) {
            o->strict_tol = 1;
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

/* 1 when every input of the first divergent node is known to agree. */
static int inputs_agree(const onp_bisect_result *r)
{
    for (size_t k = 0; k < r->n_inputs; k++)
        if (r->inputs[k].src == ONP_BISECT_SRC_NONE ||
            (r->inputs[k].src != ONP_BISECT_SRC_OMITTED && !r->inputs[k].pass))
            return 0;
    return 1;
}

static const char *no_ref_msg(const onp_bisect_result *r, char *buf, size_t n)
{
    snprintf(buf, n,
             "no eager reference: the fixtures have no intermediates/index.json (capture with "
             "intermediates=True), so none of the %zu node outputs can be compared "
             "(--reference disable compares with ORT at opt-level disable instead)",
             r->n_exposed);
    return buf;
}

static const char *ref_words(const onp_bisect_result *r)
{
    return r->reference == ONP_BISECT_REF_DISABLE ? "ORT at opt-level disable" : "eager";
}

/* An input's source; a compared value is "disable" with that reference. */
static const char *src_name(const onp_bisect_result *r, onp_bisect_src src)
{
    if (src == ONP_BISECT_SRC_EAGER && r->reference == ONP_BISECT_REF_DISABLE) return "disable";
    return onp_bisect_src_name(src);
}

static const char *local_verdict(const onp_bisect_local *L)
{
    return !L->ran ? NULL : L->local ? "local" : "inherited";
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
    if (!inputs_agree(r)) return "an input has no eager reference: it may start upstream";
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
               ref_words(r), pa, v->plain_pass ? "pass" : "FAIL", ia,
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
    if (f)
        printf("first divergent: node %s (%s), output %s, module %s: max_abs %s, max_rel %s, "
               "noise envelope %s, error grown %sx over its inputs (fixture %d); %s\n",
               f->node[0] ? f->node : "(unnamed)", f->op_type, f->value,
               f->module[0] ? f->module : "-", report_fmt(f->max_abs, ma, sizeof ma),
               report_fmt(f->max_rel, mr, sizeof mr),
               f->noise.src != ONP_NOISE_NONE ? report_fmt(f->envelope_max, ev, sizeof ev) : "-",
               report_fmt(f->jump, jp, sizeof jp), f->fail_fixture, first_clause(r));
    else if (r->n_refused) {
        char list[256] = "";
        for (size_t i = 0, u = 0; i < r->n_refused && u < sizeof list - 16; i++)
            u += (size_t)snprintf(list + u, sizeof list - u, "%s%d", i ? ", " : "", r->refused[i]);
        printf("inconclusive: all %zu values compared agree with %s on the fixtures ONNX Runtime "
               "runs, but it refused %zu fixture(s) (%s), which cannot be bisected: a shape or "
               "dtype the graph does not take%s%s%s (ONNX Runtime: %s)\n",
               compared, ref_words(r), r->n_refused, list, a ? "; onnxparity check " : "",
               a ? a : "", a ? " names why" : "", r->refused_msg);
    } else if (onp_bisect_inconclusive_by_expected(r))
        printf("inconclusive: all %zu values compared agree with %s, but the plain model's "
               "outputs fail against the fixtures' expected outputs (max_abs %s): the model "
               "computes the same at every optimization level, so the difference is in the "
               "export itself (or in the expected outputs); to bisect it against eager, capture "
               "a bundle with onnxparity.capture (it stores eager's intermediates)\n",
               compared, ref_words(r), report_fmt(r->verify.expected_max_abs, ma, sizeof ma));
    else if (onp_bisect_inconclusive(r))
        printf("inconclusive: all %zu values compared agree with %s, but the plain model's "
               "outputs fail: the divergence is not where the curve can see it%s%s%s\n",
               compared, ref_words(r), a ? "; onnxparity diagnose " : "", a ? a : "",
               a ? " probes what bisect cannot see (a branch fixed at trace time, a shape, "
                   "the batch)"
                 : "");
    else
        printf("agrees: all %zu values compared agree with %s: no value leaves its tolerance or "
               "its noise envelope\n",
               compared, ref_words(r));
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
            printf("  %-40s %-13s", x->name[0] ? x->name : "\"\"", src_name(r, x->src));
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

static cJSON *doc_base(const opts *o, const char *verdict, const char *model)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.bisect/1");
    cJSON_AddStringToObject(root, "verdict", verdict);
    cJSON_AddStringToObject(root, "model", model);
    if (o->fixture >= 0)
        cJSON_AddNumberToObject(root, "fixture", (double)o->fixture);
    else
        cJSON_AddNullToObject(root, "fixture");
    return root;
}

static void add_env(cJSON *root, const opts *o, const onp_bisect_result *r, onp_ort *ort)
{
    cJSON *env =
        onp_doc_environment(root, ort, r->provider, r->opt_level, r->intra_threads, r->inter_threads,
                           r->sha256, o->ort.so.config, o->ort.so.n_config);
    cJSON_AddBoolToObject(env, "upgraded_to_opset7", r->upgraded);
    cJSON_AddBoolToObject(env, "external_data", r->external);
}

static void add_verify(cJSON *root, const onp_bisect_result *r)
{
    const onp_bisect_verify *v = &r->verify;
    if (!v->ran) {
        cJSON_AddNullToObject(root, "instrumented_reproduces");
        cJSON_AddNullToObject(root, "reproduce");
    } else {
        cJSON_AddBoolToObject(root, "instrumented_reproduces", v->reproduces);
        cJSON *rp = cJSON_AddObjectToObject(root, "reproduce");
        cJSON *pl = cJSON_AddObjectToObject(rp, "plain");
        onp_doc_num(pl, "max_abs", v->plain_max_abs);
        onp_doc_num(pl, "max_rel", v->plain_max_rel);
        cJSON_AddBoolToObject(pl, "pass", v->plain_pass);
        cJSON *in = cJSON_AddObjectToObject(rp, "instrumented");
        onp_doc_num(in, "max_abs", v->instrumented_max_abs);
        onp_doc_num(in, "max_rel", v->instrumented_max_rel);
        cJSON_AddBoolToObject(in, "pass", v->instrumented_pass);
        cJSON_AddStringToObject(rp, "against", ref_words(r));
        if (v->expected_ran) { /* DISABLE: the plain model vs the fixtures' own outputs */
            cJSON *ex = cJSON_AddObjectToObject(rp, "expected");
            onp_doc_num(ex, "max_abs", v->expected_max_abs);
            onp_doc_num(ex, "max_rel", v->expected_max_rel);
            cJSON_AddBoolToObject(ex, "pass", v->expected_pass);
        }
        if (v->note[0]) cJSON_AddStringToObject(rp, "note", v->note);
    }
    cJSON_AddNumberToObject(root, "fixtures_without_intermediates", /* issue 19 */
                            (double)r->n_without_intermediates);
    cJSON *rf = cJSON_AddArrayToObject(root, "fixtures_refused");
    for (size_t i = 0; rf && i < r->n_refused; i++)
        cJSON_AddItemToArray(rf, cJSON_CreateNumber(r->refused[i]));
    if (r->n_refused)
        cJSON_AddStringToObject(root, "refused_message", r->refused_msg);
    else
        cJSON_AddNullToObject(root, "refused_message");
    if (r->reference_note[0])
        cJSON_AddStringToObject(root, "reference_note", r->reference_note);
    else
        cJSON_AddNullToObject(root, "reference_note");
    if (r->fallback[0]) {
        cJSON *fb = cJSON_AddObjectToObject(root, "fallback");
        cJSON_AddStringToObject(fb, "mode", r->fallback);
        cJSON_AddStringToObject(fb, "note", r->fallback_note);
    } else {
        cJSON_AddNullToObject(root, "fallback");
    }
}

static void add_local(cJSON *fd, const onp_bisect_result *r)
{
    const onp_bisect_local *L = &r->local;
    cJSON *l = cJSON_AddObjectToObject(fd, "local");
    const char *verdict = local_verdict(L);
    if (verdict) {
        cJSON_AddStringToObject(l, "verdict", verdict);
        onp_doc_num(l, "max_abs", L->max_abs);
        onp_doc_num(l, "max_rel", L->max_rel);
        cJSON_AddNumberToObject(l, "mismatches", (double)L->mismatches);
    } else {
        cJSON_AddNullToObject(l, "verdict");
        cJSON_AddNullToObject(l, "max_abs");
        cJSON_AddNullToObject(l, "max_rel");
        cJSON_AddNullToObject(l, "mismatches");
    }
    cJSON_AddNumberToObject(l, "fixture", L->fixture);
    cJSON_AddNumberToObject(l, "nodes", (double)L->n_nodes);
    cJSON_AddNumberToObject(l, "inputs_fed", (double)L->n_fed);
    onp_doc_num(l, "input_max_abs", L->input_max_abs);
    if (L->note[0]) cJSON_AddStringToObject(l, "note", L->note);
}

/* A curve point's noise judgment: verdict, envelope, ratio, jump. */
static void point_noise_json(cJSON *c, const onp_bisect_point *p)
{
    cJSON_AddStringToObject(c, "verdict", onp_verdict_name(p->verdict));
    cJSON_AddStringToObject(c, "noise_source", onp_noise_src_name(p->noise.src));
    if (p->noise.src != ONP_NOISE_NONE) {
        onp_doc_num(c, "envelope_max", p->envelope_max);
        onp_doc_num(c, "ratio", p->ratio);
    } else {
        cJSON_AddNullToObject(c, "envelope_max");
        cJSON_AddNullToObject(c, "ratio");
    }
    onp_doc_num(c, "rel_err", p->rel_err);
    onp_doc_num(c, "jump", p->jump);
}

static cJSON *doc_json(const opts *o, const onp_bisect_result *r, onp_ort *ort)
{
    cJSON *root = doc_base(o,
                           r->first >= 0                ? "diverges"
                           : onp_bisect_inconclusive(r) ? "inconclusive"
                                                        : "agrees",
                           r->model);
    cJSON *fx = cJSON_AddArrayToObject(root, "fixtures");
    for (size_t i = 0; i < r->n_fixtures; i++)
        cJSON_AddItemToArray(fx, cJSON_CreateNumber(r->fixtures[i]));
    add_env(root, o, r, ort);
    cJSON_AddStringToObject(root, "reference", onp_bisect_ref_name(r->reference));
    cJSON *ch = cJSON_AddObjectToObject(root, "chunks");
    cJSON_AddNumberToObject(ch, "size", (double)r->chunk);
    cJSON_AddNumberToObject(ch, "sessions", (double)r->n_chunks);
    cJSON_AddNumberToObject(ch, "max_exposed_bytes", (double)r->budget);
    if (r->estimated_bytes)
        cJSON_AddNumberToObject(ch, "estimated_bytes", (double)r->estimated_bytes);
    else
        cJSON_AddNullToObject(ch, "estimated_bytes");
    add_verify(root, r);
    size_t failed = 0, compared = 0;
    cJSON *curve = cJSON_CreateArray();
    for (size_t i = 0; i < r->n_points; i++) {
        const onp_bisect_point *p = &r->points[i];
        compared += p->compared > 0;
        failed += p->compared && !p->pass;
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "value", p->value);
        cJSON_AddStringToObject(c, "node", p->node);
        cJSON_AddStringToObject(c, "op_type", p->op_type);
        cJSON_AddStringToObject(c, "module", p->module);
        if (p->compared) {
            onp_doc_num(c, "max_abs", p->max_abs);
            onp_doc_num(c, "max_rel", p->max_rel);
            cJSON_AddBoolToObject(c, "pass", p->pass);
            point_noise_json(c, p);
        } else {
            cJSON_AddNullToObject(c, "max_abs");
            cJSON_AddNullToObject(c, "max_rel");
            cJSON_AddNullToObject(c, "pass");
        }
        if (p->note[0]) cJSON_AddStringToObject(c, "note", p->note);
        cJSON_AddItemToArray(curve, c);
    }
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "values_exposed", (double)r->n_exposed);
    cJSON_AddNumberToObject(sum, "values_compared", (double)compared);
    cJSON_AddNumberToObject(sum, "values_failed", (double)failed);
    cJSON_AddNumberToObject(sum, "references_unmatched", (double)r->n_unmatched);
    cJSON *nz = cJSON_AddObjectToObject(root, "noise");
    cJSON_AddNumberToObject(nz, "fixtures_float64", (double)r->n_noise_float64);
    cJSON_AddNumberToObject(nz, "fixtures_estimated", (double)r->n_noise_ort);
    if (r->jump_point >= 0) {
        const onp_bisect_point *jpt = &r->points[r->jump_point];
        cJSON *bj = cJSON_AddObjectToObject(root, "biggest_jump");
        cJSON_AddNumberToObject(bj, "index", (double)r->jump_point);
        cJSON_AddStringToObject(bj, "node", jpt->node);
        cJSON_AddStringToObject(bj, "op_type", jpt->op_type);
        cJSON_AddStringToObject(bj, "output", jpt->value);
        cJSON_AddStringToObject(bj, "module", jpt->module);
        onp_doc_num(bj, "rel_err", jpt->rel_err);
        onp_doc_num(bj, "jump", jpt->jump);
    } else {
        cJSON_AddNullToObject(root, "biggest_jump");
    }
    if (r->first >= 0) {
        const onp_bisect_point *f = &r->points[r->first];
        cJSON *fd = cJSON_AddObjectToObject(root, "first_divergent");
        cJSON_AddStringToObject(fd, "node", f->node);
        cJSON_AddStringToObject(fd, "op_type", f->op_type);
        cJSON_AddStringToObject(fd, "output", f->value);
        cJSON_AddStringToObject(fd, "module", f->module);
        onp_doc_num(fd, "max_abs", f->max_abs);
        onp_doc_num(fd, "max_rel", f->max_rel);
        cJSON_AddNumberToObject(fd, "fixture", f->fail_fixture);
        cJSON_AddNumberToObject(fd, "index", (double)r->first);
        cJSON_AddBoolToObject(fd, "inputs_agree", inputs_agree(r));
        point_noise_json(fd, f);
        if (f->note[0]) cJSON_AddStringToObject(fd, "note", f->note);
        cJSON *ins = cJSON_AddArrayToObject(fd, "inputs");
        for (size_t k = 0; k < r->n_inputs; k++) {
            const onp_bisect_input *x = &r->inputs[k];
            cJSON *ij = cJSON_CreateObject();
            cJSON_AddStringToObject(ij, "name", x->name);
            cJSON_AddStringToObject(ij, "source", src_name(r, x->src));
            if (x->src == ONP_BISECT_SRC_NONE || x->src == ONP_BISECT_SRC_OMITTED) {
                cJSON_AddNullToObject(ij, "max_abs");
                cJSON_AddNullToObject(ij, "pass");
            } else {
                onp_doc_num(ij, "max_abs", x->max_abs);
                onp_doc_num(ij, "max_rel", x->max_rel);
                cJSON_AddBoolToObject(ij, "pass", x->pass);
            }
            cJSON_AddItemToArray(ins, ij);
        }
        add_local(fd, r);
        if (r->repro[0])
            cJSON_AddStringToObject(fd, "repro", r->repro);
        else
            cJSON_AddNullToObject(fd, "repro");
        if (r->repro_note[0]) cJSON_AddStringToObject(fd, "repro_note", r->repro_note);
        cJSON *metrics = cJSON_AddObjectToObject(fd, "metrics");
        onp_doc_metrics(metrics, &f->m);
    } else {
        cJSON_AddNullToObject(root, "first_divergent");
    }
    cJSON_AddItemToObject(root, "curve", curve);
    return root;
}

static int json_error(const opts *o, const char *model, const char *msg, int rc)
{
    if (o->fmt == FMT_JSON) {
        cJSON *root = doc_base(o, "error", model);
        cJSON_AddStringToObject(root, "error", msg);
        report_print_json(root);
    }
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
    if (o.chunk || o.max_exposed) mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    /* the run's plan (run.h), as check, gate and diagnose bisect, plus
     * this command's own choices: one fixture, the chunking */
    onp_run_opts ro;
    onp_run_opts_init(&ro);
    ro.session = o.ort.so;
    ro.rtol = o.rtol;
    ro.atol = o.atol;
    ro.strict = o.strict_tol;
    ro.no_estimate = o.no_noise;
    ro.save_repro = o.save_repro;
    ro.reference = (onp_bisect_ref)o.reference;
    onp_bundle_spec where = {o.tg.bundle, o.tg.model, o.tg.data, o.tg.n_data};
    onp_bisect_opts bo;
    onp_run_bisect_plan(&where, &ro, &bo);
    bo.fixture = (int)o.fixture;
    bo.chunk = (size_t)o.chunk;
    bo.max_exposed_bytes = o.max_exposed;
    onp_bisect_result *r = NULL;
    int rc;
    stage(&o, "bisect: exposing the intermediates, one ONNX Runtime run per fixture");
    if (onp_bisect_run(ort, cli_target_name(&o.tg), &bo, &r, &e)) {
        rc = cli_report(&e);
        rc = json_error(&o, model, onp_error_format(&e, buf, sizeof buf), rc);
    } else if (r->status == ONP_BISECT_NO_REFERENCE) {
        fprintf(stderr, "onnxparity bisect: %s\n",
                r->reference_note[0] ? r->reference_note : no_ref_msg(r, buf, sizeof buf));
        rc = json_error(&o, model, buf, EXIT_USAGE);
    } else {
        int html_rc = 0;
        if (o.fmt == FMT_JSON || o.html)
            html_rc = report_emit(doc_json(&o, r, ort), o.fmt == FMT_JSON, o.html, model);
        if (o.fmt != FMT_JSON) print_text(&o, r, ort);
        rc = onp_run_exit_code(onp_run_bisect_verdict(r));
        if (html_rc) rc = html_rc;
    }
    onp_bisect_free(r); /* NULL when the run failed */
    onp_ort_close(ort);
    return rc;
}
