/*
 * cmd_check.c — `onnxparity check TARGET` / `check --model M --data DIR...`:
 * run the model under ONNX Runtime on every fixture and compare every output
 * with the eager truth.
 *
 * TARGET is a folder holding model.onnx and test_data_set_N/ folders (the
 * ONNX test-data layout): input_K.pb feeds graph input K (by position, as
 * ONNX's own test runner does) and output_K.pb is the expected value of
 * graph output K.  One ORT session serves every fixture.  A fixture ORT
 * cannot run is a failed fixture carrying ORT's message; the run goes on.
 *
 * When a bundle with eager intermediates fails, the first failed fixture is
 * bisected (as `onnxparity bisect` does) and the first divergent node is
 * reported; --no-bisect skips that.
 *
 * Exit: 0 every output of every fixture passes; 1 anything fails (a flipped
 * top-1 label included); 2 bad usage or no fixtures; 3 unreadable files;
 * 4 ONNX Runtime cannot load the model.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ghactions.h"
#include "junit.h"
#include "lintdoc.h"
#include "measure.h"
#include "target.h"
#include "onnxparity/adequacy.h"
#include "onnxparity/agreement.h"
#include "onnxparity/bisect.h"
#include "onnxparity/buf.h"
#include "onnxparity/causes.h"
#include "onnxparity/compare.h"
#include "onnxparity/env.h"
#include "onnxparity/lint.h"
#include "onnxparity/model.h"
#include "onnxparity/tfile.h"
#include "ortopts.h"
#include "report.h"

#define MAX_DATA 64
#define MAX_TOLS 64

typedef struct tol_override {
    const char *name;
    onp_tol tol;
} tol_override;

typedef struct opts {
    cli_ort ort;
    const char *target, *model;
    const char *data[MAX_DATA];
    size_t n_data;
    double rtol, atol; /* < 0: the dtype's default */
    tol_override tols[MAX_TOLS];
    size_t n_tols;
    int topk;        /* 0 off, -1 auto (the default), K */
    int strict_tol;  /* --strict-tol: beyond the tolerance fails even inside the noise */
    int no_estimate; /* --no-noise-estimate: never rerun on perturbed inputs */
    int no_bisect;
    int no_lint;
    cli_format fmt;
    const char *junit;     /* --junit FILE, or NULL */
    const char *sarif;     /* --sarif FILE (lint findings), or NULL */
    const char *html;      /* --html FILE (the report page), or NULL */
    const char *summary;   /* --summary FILE: a Markdown summary appended, or NULL */
    int annotations;       /* --annotations: GitHub Actions workflow commands on stdout */
    int quiet, verbose;    /* progress on stderr: off / with ORT's log */
    long shard_i, shard_n; /* --shard I/N; shard_n 0: every fixture */
} opts;

static int parse_tol(const char *cmd, const char *v, tol_override *t)
{
    const char *eq = strrchr(v, '=');
    double r, a;
    if (!eq || eq == v || cli_tol_pair(eq + 1, &r, &a))
        return cli_usage_error(cmd, "--tol wants NAME=RTOL,ATOL, not '%s'", v), -1;
    static char names[MAX_TOLS][256];
    static size_t used;
    size_t n = (size_t)(eq - v);
    if (n >= sizeof names[0] || used >= MAX_TOLS)
        return cli_usage_error(cmd, "--tol name too long or too many"), -1;
    memcpy(names[used], v, n);
    names[used][n] = '\0';
    t->name = names[used++];
    t->tol.rtol = r;
    t->tol.atol = a;
    return 0;
}

static int parse_args(int argc, char **argv, opts *o)
{
    const char *v;
    cli_ort_init(&o->ort);
    o->rtol = o->atol = -1;
    o->topk = -1;
    for (int i = 1; i < argc; i++) {
        int r = cli_ort_opt(&o->ort, argc, argv, &i);
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
        } else if ((r = cli_tol_format_opt(argc, argv, &i, &o->rtol, &o->atol, &o->fmt))) {
            if (r < 0) return -1;
        } else if ((r = cli_opt(argc, argv, &i, "tol", &v))) {
            if (r < 0) return -1;
            if (o->n_tols >= MAX_TOLS)
                return cli_usage_error(argv[0], "at most %d --tol", MAX_TOLS), -1;
            if (parse_tol(argv[0], v, &o->tols[o->n_tols++])) return -1;
        } else if ((r = cli_opt(argc, argv, &i, "top-k", &v))) {
            long k;
            if (r < 0) return -1;
            if (!strcmp(v, "auto"))
                o->topk = -1;
            else if (!strcmp(v, "off"))
                o->topk = 0;
            else if (cli_int_in(argv[0], "top-k", v, 1, INT_MAX, &k))
                return -1;
            else
                o->topk = (int)k;
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
        } else if ((r = cli_opt(argc, argv, &i, "shard", &v))) {
            char tail;
            if (r < 0) return -1;
            if (sscanf(v, "%ld/%ld%c", &o->shard_i, &o->shard_n, &tail) != 2 || o->shard_n < 1 ||
                o->shard_i < 0 || o->shard_i >= o->shard_n)
                return cli_usage_error(argv[0], "--shard wants I/N with 0 <= I < N, not '%s'", v),
                       -1;
        } else if (cli_flag(argv, i, "no-bisect")) {
            o->no_bisect = 1;
        } else if (cli_flag(argv, i, "strict-tol")) {
            o->strict_tol = 1;
        } else if (cli_flag(argv, i, "no-noise-estimate")) {
            o->no_estimate = 1;
        } else if (cli_flag(argv, i, "no-lint")) {
            o->no_lint = 1;
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

static onp_tol tol_for(void *ctx, const char *name, int32_t dtype)
{
    const opts *o = ctx;
    for (size_t i = 0; i < o->n_tols; i++)
        if (!strcmp(o->tols[i].name, name)) return o->tols[i].tol;
    onp_tol t = onp_tol_default(dtype);
    if (o->rtol >= 0) t.rtol = o->rtol;
    if (o->atol >= 0) t.atol = o->atol;
    return t;
}

static void shape_str(int rank, const int64_t *dims, char *buf, size_t n)
{
    onp_shape_str(rank, dims, buf, n);
}

/* Compared outputs whose judgment is v / that are vacuous. */
static size_t count_verdict(const onp_fixture_verdict *res, size_t n, onp_verdict v)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < res[i].n_out; k++)
            c += res[i].outs[k].compared && res[i].outs[k].j.verdict == v;
    return c;
}

/* Compared outputs the tolerance passes and their float noise does not
 * explain (noise.h). */
static size_t count_quiet(const onp_fixture_verdict *res, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < res[i].n_out; k++)
            c += res[i].outs[k].compared && onp_judgment_within_tol_beyond_noise(&res[i].outs[k].j);
    return c;
}

static size_t count_vacuous(const onp_fixture_verdict *res, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < res[i].n_out; k++)
            c += res[i].outs[k].compared && res[i].outs[k].j.vacuous != ONP_VACUOUS_NO;
    return c;
}

/* Fixtures whose run was lost to a crash or a timeout of ONNX Runtime. */
static size_t count_runtime(const onp_fixture_verdict *res, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += res[i].runtime != NULL;
    return k;
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

static void agreement_json(cJSON *t, const onp_agreement *a)
{
    report_num(t, "flip_rate", a->flip_rate);
    report_num(t, "flip_rate_upper", a->flip_upper);
    report_num(t, "confidence", a->confidence);
    cJSON_AddStringToObject(t, "bound", "clopper-pearson-one-sided");
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

static cJSON *adequacy_json(const onp_adequacy *a)
{
    if (!a || a->verdict == ONP_ADEQUACY_ABSENT) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "verdict", onp_adequacy_verdict_name(a->verdict));
    cJSON_AddNumberToObject(o, "samples", (double)a->samples);
    cJSON_AddNumberToObject(o, "fixtures", (double)a->fixtures);
    cJSON_AddNumberToObject(o, "shape_groups", (double)a->shape_groups);
    cJSON_AddNumberToObject(o, "near_boundary", (double)a->near_boundary);
    cJSON *fl = cJSON_AddArrayToObject(o, "flags");
    for (size_t i = 0; i < a->n_flags; i++) {
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "id", a->flags[i].id);
        cJSON_AddStringToObject(f, "level", onp_adequacy_level_name(a->flags[i].level));
        cJSON_AddStringToObject(f, "message", a->flags[i].message);
        if (a->flags[i].where[0]) cJSON_AddStringToObject(f, "where", a->flags[i].where);
        cJSON_AddItemToArray(fl, f);
    }
    cJSON *outs = cJSON_AddArrayToObject(o, "classifier_outputs");
    for (size_t i = 0; i < a->n_outputs; i++) {
        const onp_adequacy_output *x = &a->outputs[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", x->name);
        cJSON_AddNumberToObject(j, "classes", (double)x->classes);
        cJSON_AddNumberToObject(j, "classes_predicted", (double)x->classes_predicted);
        cJSON_AddNumberToObject(j, "samples", (double)x->samples);
        cJSON_AddNumberToObject(j, "near_boundary", (double)x->near_boundary);
        cJSON_AddItemToArray(outs, j);
    }
    return o;
}

static void print_text(const opts *o, const char *model, const char *sha, onp_ort *ort,
                       onp_session *s, const onp_fixture_verdict *res, size_t n, int failed,
                       int lint_errors)
{
    const onp_session_desc *d = onp_session_describe(s);
    printf("model    %s (sha256 %.12s)\n", model, sha);
    printf("runtime  ONNX Runtime %s, %s, opt-level %s\n", onp_ort_version(ort), d->provider,
           onp_ort_opt_level_name(d->opt_level));
    printf("%-18s %-22s %-9s %-14s %-9s %-9s %-12s %-7s %-9s %s\n", "FIXTURE", "OUTPUT", "DTYPE",
           "SHAPE", "MAX_ABS", "MAX_REL", "MISMATCH", "TOP1", "ENVELOPE", "RESULT");
    long outs = 0, out_failed = 0;
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
            outs++;
            if (!x->pass) out_failed++;
            if (x->compared) {
                shape_str(x->rank, x->dims, sh, sizeof sh);
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
    size_t lost = count_runtime(res, n);
    if (lost)
        printf("verdict: ERROR — ONNX Runtime crashed or timed out on %zu of %zu fixtures (the "
               "others: %ld outputs compared, %d fixtures failed in all)\n",
               lost, n, outs, failed);
    else if (!failed && lint_errors)
        printf("verdict: FAIL — the numbers agree (%zu fixtures, %ld outputs), but %d error-level "
               "lint "
               "finding(s): see the causes above\n",
               n, outs, lint_errors);
    else
        printf("verdict: %s — %zu fixtures, %ld outputs compared, %d fixtures failed\n",
               failed ? "FAIL" : "pass", n, outs, failed);
    size_t quiet = lost ? 0 : count_quiet(res, n);
    if (quiet) {
        char q[4200];
        printf("note     %zu output(s) within tolerance but beyond their float noise (marked "
               "above): the tolerance passes a change that is not rounding%s%s%s\n",
               quiet, o->target ? "; onnxparity bisect " : "",
               o->target ? onp_shell_quote(o->target, q, sizeof q) : "",
               o->target ? " shows where the error jumps" : "");
    }
}

static cJSON *doc_json(const opts *o, const char *model, const char *sha, onp_ort *ort,
                       onp_session *s, const onp_env *env, const onp_fixture_verdict *res, size_t n,
                       int failed)
{
    const onp_session_desc *d = onp_session_describe(s);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.check/1");
    cJSON_AddStringToObject(root, "verdict",
                            count_runtime(res, n) ? "error"
                            : failed              ? "fail"
                                                  : "pass");
    cJSON_AddStringToObject(root, "model", model);
    cJSON *envj = report_environment(root, ort, d->provider, d->opt_level, d->intra_threads,
                                     d->inter_threads, sha, o->ort.so.config, o->ort.so.n_config);
    onp_env_write_json(env, envj);
    /* the judging options (docs/cli.md): merge refuses shards judged otherwise */
    cJSON *optj = cJSON_AddObjectToObject(root, "options");
    if (o->topk > 0)
        cJSON_AddNumberToObject(optj, "top_k", o->topk);
    else
        cJSON_AddStringToObject(optj, "top_k", o->topk ? "auto" : "off");
    cJSON_AddBoolToObject(optj, "strict_tol", o->strict_tol);
    cJSON_AddBoolToObject(optj, "noise_estimate", !o->no_estimate);
    cJSON_AddBoolToObject(optj, "lint", !o->no_lint);
    long outs = 0, out_failed = 0, rows = 0, agree = 0, topk_agree = 0;
    cJSON *fx = cJSON_AddArrayToObject(root, "fixtures");
    for (size_t i = 0; i < n; i++) {
        const onp_fixture_verdict *r = &res[i];
        cJSON *f = cJSON_CreateObject();
        cJSON_AddNumberToObject(f, "index", r->index);
        cJSON_AddStringToObject(f, "dir", r->dir);
        cJSON_AddStringToObject(f, "status",
                                r->status == 0   ? "pass"
                                : r->status == 1 ? "fail"
                                                 : "error");
        if (r->status == 2) cJSON_AddStringToObject(f, "error", r->msg);
        if (r->runtime) cJSON_AddStringToObject(f, "runtime_failure", r->runtime);
        cJSON *arr = cJSON_AddArrayToObject(f, "outputs");
        for (size_t k = 0; r->status != 2 && k < r->n_out; k++) {
            const onp_output_verdict *x = &r->outs[k];
            cJSON *oj = cJSON_CreateObject();
            outs++;
            if (!x->pass) out_failed++;
            cJSON_AddStringToObject(oj, "name", x->name);
            cJSON_AddBoolToObject(oj, "pass", x->pass);
            if (x->note[0]) cJSON_AddStringToObject(oj, "note", x->note);
            if (x->compared) {
                cJSON_AddStringToObject(oj, "dtype", onp_dtype_name(x->m.expected_dtype));
                cJSON *sh = cJSON_AddArrayToObject(oj, "shape");
                for (int j = 0; j < x->rank; j++)
                    cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)x->dims[j]));
                report_metrics_json(oj, &x->m);
                report_judgment_json(oj, &x->j);
            }
            if (x->has_topk) {
                cJSON *t = cJSON_AddObjectToObject(oj, "topk");
                cJSON_AddNumberToObject(t, "k", x->tk.k);
                cJSON_AddNumberToObject(t, "rows", (double)x->tk.rows);
                cJSON_AddNumberToObject(t, "top1_agree", (double)x->tk.top1_agree);
                cJSON_AddNumberToObject(t, "flipped", (double)x->tk.flipped);
                cJSON_AddNumberToObject(t, "topk_agree", (double)x->tk.topk_agree);
                cJSON_AddNumberToObject(t, "noise_driven_flips", (double)x->noise_flips);
                if (isfinite(x->min_margin))
                    report_num(t, "min_margin", x->min_margin);
                else
                    cJSON_AddNullToObject(t, "min_margin");
                rows += x->tk.rows;
                agree += x->tk.top1_agree;
                topk_agree += x->tk.topk_agree;
            }
            cJSON_AddItemToArray(arr, oj);
        }
        cJSON_AddItemToArray(fx, f);
    }
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "fixtures", (double)n);
    cJSON_AddNumberToObject(sum, "fixtures_failed", failed);
    cJSON_AddNumberToObject(sum, "outputs_compared", (double)outs);
    cJSON_AddNumberToObject(sum, "outputs_failed", (double)out_failed);
    cJSON_AddNumberToObject(sum, "outputs_within_noise",
                            (double)count_verdict(res, n, ONP_VERDICT_WITHIN_NOISE));
    cJSON_AddNumberToObject(sum, "outputs_vacuous", (double)count_vacuous(res, n));
    cJSON_AddNumberToObject(sum, "outputs_within_tolerance_beyond_noise",
                            (double)count_quiet(res, n));
    if (rows) {
        cJSON *t = cJSON_AddObjectToObject(sum, "topk");
        cJSON_AddNumberToObject(t, "rows", (double)rows);
        cJSON_AddNumberToObject(t, "top1_agree", (double)agree);
        cJSON_AddNumberToObject(t, "flipped", (double)(rows - agree));
        cJSON_AddNumberToObject(t, "topk_agree", (double)topk_agree);
        onp_agreement ag; /* issue 19: the flip rate as a statistic */
        onp_agreement_collect(res, n, NULL, ONP_AGREEMENT_CONFIDENCE, &ag);
        agreement_json(t, &ag);
    }
    cJSON_AddArrayToObject(root, "causes");
    cJSON_AddNullToObject(root, "first_divergent");
    return root;
}

/* --- causes: the library's derivation (causes.h) over what check knows -----
 *
 * The lint findings, the judged fixtures and, on a failure, bisect: the same
 * record and the same rules as `diagnose`, which adds its probes and sweep. */

/* On a failed check of a bundle, bisect it the way `onnxparity bisect
 * TARGET` does (the same routine and defaults: every fixture, the noise
 * rule, eager intermediates or ORT at opt-level disable), so both name the
 * same first divergent node.  Best effort: any problem (ORT refusing the
 * instrumented model) leaves *out NULL and the check's verdict as it is. */
static void find_first_divergent(const opts *o, onp_ort *ort, const onp_fixture_verdict *res,
                                 size_t n, onp_bisect_result **out)
{
    *out = NULL;
    int any = 0;
    for (size_t i = 0; i < n; i++) any |= res[i].status == ONP_FIXTURE_FAIL;
    if (!any) return; /* only crashes and timeouts: nothing to bisect */
    onp_bisect_opts bo;
    onp_bisect_opts_init(&bo);
    bo.session = o->ort.so;
    bo.rtol = o->rtol;
    bo.atol = o->atol;
    bo.fixture = -1;
    bo.reference = ONP_BISECT_REF_AUTO;
    bo.strict = o->strict_tol;
    bo.no_noise = o->no_estimate;
    onp_error e;
    onp_error_clear(&e);
    onp_bisect_result *r = NULL;
    if (onp_bisect_run(ort, o->target, &bo, &r, &e) || r->status != ONP_BISECT_DIVERGES ||
        r->first < 0) {
        onp_bisect_free(r);
        return;
    }
    *out = r;
}

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
static int write_summary(const opts *o, const char *model, const onp_fixture_verdict *res, size_t n,
                         const onp_causes *cs, const onp_bisect_result *bis, int failed,
                         int lint_errors)
{
    FILE *f;
    int open_rc = gh_summary_open(o->summary, &f);
    if (open_rc) return open_rc;
    size_t lost = count_runtime(res, n);
    fprintf(f, "### onnxparity check: %s\n\n`",
            lost                    ? "ERROR"
            : failed || lint_errors ? "FAIL"
                                    : "pass");
    gh_md_text(f, model);
    fprintf(f, "`: %zu fixture(s), %d failed, %d error-level lint finding(s)\n", n, failed,
            lint_errors);
    gh_md_causes(f, cs);
    if (bis) {
        const onp_bisect_point *p = &bis->points[bis->first];
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
    for (size_t i = 0; (!o->shard_n || o->shard_i == 0) && i < l->n; i++) {
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
            char msg[1536], txt[2048] = "";
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

typedef struct sha_job {
    const onp_model *m;
    char hex[65];
} sha_job;

static void *sha_thread(void *p)
{
    sha_job *j = p;
    onp_model_sha256(j->m, j->hex);
    return NULL;
}

/* The fingerprint hashes the whole model file, on a second thread while the
 * ONNX Runtime worker builds its session.  The worker is forked, and a
 * process must not fork while another of its threads may hold a lock
 * (under ASan the child can deadlock in the allocator): so the thread is
 * started by an atfork handler right after the fork, and every later fork
 * (a worker restarted after a crash, bisect's sessions) first waits for it.
 * Only the main thread opens sessions, so only it touches g_sha. */
static struct {
    sha_job job;
    pthread_t th;
    int state; /* 0 not started (job.m set: wanted), 1 running, 2 done */
} g_sha;

static void sha_before_fork(void)
{
    if (g_sha.state == 1) pthread_join(g_sha.th, NULL);
    if (g_sha.state == 1) g_sha.state = 2;
}

static void sha_after_fork_parent(void)
{
    if (g_sha.state || !g_sha.job.m) return;
    g_sha.state = pthread_create(&g_sha.th, NULL, sha_thread, &g_sha.job) == 0 ? 1 : 0;
}

/* The hash, whether or not a fork started the thread. */
static const char *sha_finish(void)
{
    sha_before_fork();
    if (!g_sha.state) {
        sha_thread(&g_sha.job);
        g_sha.state = 2;
    }
    return g_sha.job.hex;
}

int cmd_check(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) return EXIT_USAGE;
    char model_buf[4096];
    const char *model = o.model;
    if (o.target) {
        snprintf(model_buf, sizeof model_buf, "%s/model.onnx", o.target);
        model = model_buf;
        o.data[o.n_data++] = o.target;
    }
    onp_error e;
    onp_error_clear(&e);
    /* fixtures first: a target without them is bad input, before ORT loads */
    onp_testdata td[MAX_DATA];
    memset(td, 0, sizeof td);
    size_t n_fix = 0, n_total = 0;
    int rc = EXIT_PASS, junit_done = 0;
    for (size_t i = 0; i < o.n_data; i++) {
        if (onp_testdata_scan(o.data[i], &td[i], &e)) {
            rc = cli_report(&e);
            goto out_td;
        }
        /* several --data folders: fixtures numbered by position across
         * them, as onp_testdata_scan_dirs numbers them for the others */
        for (size_t j = 0; o.n_data > 1 && j < td[i].n; j++)
            td[i].sets[j].index = (int)(n_total + j);
        n_total += td[i].n;
    }
    /* --shard I/N: the fixture at position k (over every --data folder, in
     * order) belongs to shard k mod N */
    for (size_t k = 0; k < n_total; k++)
        if (!o.shard_n || (long)(k % (size_t)o.shard_n) == o.shard_i) n_fix++;
    /* nothing to compare (no fixture, or none holds an output_K): exit 2 */
    size_t comparable = o.n_data;
    for (size_t i = 0; i < o.n_data && comparable == o.n_data; i++)
        if (!onp_testdata_require(&td[i], o.data[i], &e)) comparable = i;
    if (comparable == o.n_data) {
        onp_testdata_require(&td[0], o.data[0], &e);
        rc = cli_report(&e);
        goto out_td;
    }
    onp_model *m;
    if (onp_model_open(model, &m, &e)) {
        rc = cli_report(&e);
        goto out_td;
    }
    /* --tol NAME=...: NAME must be a graph output (docs/cli.md: exit 2) */
    for (size_t t = 0; t < o.n_tols; t++) {
        const onp_graph *g = onp_model_graph(m);
        size_t k = 0;
        while (k < g->n_outputs && strcmp(g->outputs[k].name, o.tols[t].name)) k++;
        if (k == g->n_outputs) {
            rc = cli_usage_error(argv[0], "--tol %s: the model has no output named '%s'",
                                 o.tols[t].name, o.tols[t].name);
            onp_model_close(m);
            goto out_td;
        }
    }
    static int atfork_set;
    if (!atfork_set) atfork_set = pthread_atfork(sha_before_fork, sha_after_fork_parent, NULL) == 0;
    memset(&g_sha, 0, sizeof g_sha);
    g_sha.job.m = m;
    const char *sha = g_sha.job.hex;
    /* lint the graph (and parity.json when the bundle has one): error-level
     * findings fail the check even when the numbers agree */
    onp_lint_result lint;
    memset(&lint, 0, sizeof lint);
    if (!o.no_lint) {
        char manifest[4096];
        onp_lint_opts lo = {NULL};
        struct stat st;
        if (o.target) {
            snprintf(manifest, sizeof manifest, "%s/parity.json", o.target);
            if (stat(manifest, &st) == 0) lo.manifest = manifest;
        }
        if (onp_lint_run(m, &lo, &lint, &e)) {
            onp_model_close(m);
            rc = cli_report(&e);
            goto out_td;
        }
    }
    onp_ort *ort;
    onp_session *s;
    int upgraded;
    rc = cli_ort_session(&o.ort, model, m, &ort, &s, &upgraded);
    onp_env env; /* the environment fingerprint's export and runtime fields */
    onp_env_init(&env);
    if (!rc) {
        char manifest[4096];
        snprintf(manifest, sizeof manifest, "%s/parity.json", o.target ? o.target : "");
        if (onp_env_from_session(&env, ort, s, &e) ||
            onp_env_from_bundle(&env, m, o.target ? manifest : NULL, &e)) {
            rc = cli_report(&e);
            onp_session_close(s);
            onp_ort_close(ort);
        }
        onp_env_set_config(&env, o.ort.so.config, o.ort.so.n_config);
    }
    sha = sha_finish();
    onp_env_set(&env, ONP_ENV_MODEL_SHA256, sha);
    g_sha.job.m = NULL; /* no thread after this: the model is closed */
    onp_model_close(m);
    if (rc) {
        if (o.fmt == FMT_JSON) {
            cJSON *root = cJSON_CreateObject();
            cJSON_AddStringToObject(root, "schema", "onnxparity.check/1");
            cJSON_AddStringToObject(root, "verdict", "error");
            cJSON_AddStringToObject(root, "model", model);
            cJSON_AddStringToObject(root, "error",
                                    "ONNX Runtime could not load the model (see stderr)");
            report_print_json(root);
        }
        goto out_lint;
    }
    onp_noisebook *noise = NULL;
    if (o.target && (rc = measure_noisebook(o.target, &noise))) goto out_session;
    onp_adequacy *adequacy = NULL; /* issue 19: the capture's fixture adequacy report */
    if (o.target) {
        char pj[4200];
        struct stat pst;
        snprintf(pj, sizeof pj, "%s/parity.json", o.target);
        if (stat(pj, &pst) == 0 && onp_adequacy_read(pj, &adequacy, &e)) {
            rc = cli_report(&e);
            onp_noisebook_free(noise);
            goto out_session;
        }
    }
    onp_fixture_verdict *res = calloc(n_fix ? n_fix : 1, sizeof *res);
    double *secs = calloc(n_fix ? n_fix : 1, sizeof *secs); /* [n_fix] seconds per fixture */
    onp_judge_fixture_opts mo;
    onp_judge_fixture_opts_init(&mo);
    mo.tol = tol_for;
    mo.tol_ctx = &o;
    mo.topk = o.topk;
    mo.strict = o.strict_tol;
    mo.atol_given = o.atol >= 0 || o.n_tols > 0;
    mo.no_estimate = o.no_estimate;
    mo.noise = noise;
    size_t k = 0, pos = 0;
    int failed = 0;
    /* progress on stderr only when it is a terminal (never in CI logs), or
     * with --verbose; --quiet silences it */
    int progress = cli_progress_on(o.quiet, o.verbose);
    for (size_t i = 0; res && i < o.n_data && !rc; i++)
        for (size_t j = 0; j < td[i].n && !rc; j++, pos++) {
            if (o.shard_n && (long)(pos % (size_t)o.shard_n) != o.shard_i) continue;
            if (progress)
                fprintf(stderr,
                        o.verbose ? "check: fixture %zu/%zu %s\n" : "\rcheck: fixture %zu/%zu %s ",
                        k + 1, n_fix, td[i].sets[j].dir);
            double t0 = junit_clock();
            if (onp_judge_fixture(s, &td[i].sets[j], &mo, &res[k++], &e))
                rc = cli_report(&e);
            else if (res[k - 1].status)
                failed++;
            if (secs) secs[k - 1] = junit_clock() - t0;
        }
    if (progress && !o.verbose) fprintf(stderr, "\r\033[K");
    /* the fixture the export was traced on is evidence for the causes
     * (causes.h): a shard without it judges it too, reported nowhere else */
    int traced = -1, traced_in = 0, traced_judged = 0;
    onp_fixture_verdict traced_extra;
    memset(&traced_extra, 0, sizeof traced_extra);
    if (o.target) {
        char pj[4096];
        snprintf(pj, sizeof pj, "%s/parity.json", o.target);
        traced = cli_target_traced_fixture(pj);
    }
    for (size_t i = 0; res && i < k; i++) traced_in |= res[i].index == traced;
    for (size_t i = 0; traced >= 0 && !traced_in && !rc && res && i < o.n_data; i++)
        for (size_t j = 0; !traced_in && j < td[i].n; j++) {
            if (td[i].sets[j].index != traced) continue;
            traced_in = traced_judged = 1;
            if (onp_judge_fixture(s, &td[i].sets[j], &mo, &traced_extra, &e)) rc = cli_report(&e);
        }
    if (o.verbose) { /* what ONNX Runtime logged (warnings and above) */
        char log[8192];
        if (onp_ort_log_take(log, sizeof log))
            fprintf(stderr, "check: ONNX Runtime said:\n%s\n", log);
    }
    if (!res) rc = cli_usage_error(argv[0], "out of memory");
    onp_bisect_result *bis = NULL;
    if (!rc && failed && o.target && !o.no_bisect) find_first_divergent(&o, ort, res, n_fix, &bis);
    int lint_errors = (int)lint.counts[ONP_LINT_ERROR];
    onp_causes *cs = NULL;
    onp_evidence ev = {.lint = &lint,
                       .fixtures = res,
                       .n_fixtures = n_fix,
                       .bisect = bis,
                       .traced_fixture = traced >= 0 ? &traced : NULL,
                       .traced_verdict = traced_judged ? &traced_extra : NULL};
    if (!rc && onp_causes_derive(&ev, &cs, &e)) rc = cli_report(&e);
    int html_rc = 0;
    if (!rc) {
        if (o.fmt == FMT_JSON || o.html) { /* the document: printed, and/or the page */
            cJSON *doc = doc_json(&o, model, sha, ort, s, &env, res, n_fix, failed);
            if (lint_errors && !failed && !count_runtime(res, n_fix))
                cJSON_ReplaceItemInObject(doc, "verdict", cJSON_CreateString("fail"));
            cJSON_ReplaceItemInObject(doc, "causes", report_causes_json(cs));
            cJSON_AddItemToObject(doc, "latent", report_latent_json(cs));
            cJSON_AddItemToObject(doc, "lint", lintdoc_json(&lint));
            cJSON_AddItemToObject(doc, "adequacy", adequacy_json(adequacy));
            if (bis)
                cJSON_ReplaceItemInObject(doc, "first_divergent", report_first_divergent_json(bis));
            cJSON_AddBoolToObject(cJSON_GetObjectItem(doc, "environment"), "upgraded_to_opset7",
                                  upgraded);
            if (o.shard_n) {
                cJSON *sh = cJSON_AddObjectToObject(doc, "shard");
                cJSON_AddNumberToObject(sh, "index", (double)o.shard_i);
                cJSON_AddNumberToObject(sh, "count", (double)o.shard_n);
                cJSON_AddNumberToObject(sh, "fixtures_total", (double)n_total);
            }
            html_rc = report_emit(doc, o.fmt == FMT_JSON, o.html, model);
        }
        if (o.fmt != FMT_JSON) {
            if (upgraded) printf("note     legacy opset < 7 model upgraded to opset 7 in memory\n");
            if (o.shard_n)
                printf("shard    %ld/%ld: %zu of %zu fixtures\n", o.shard_i, o.shard_n, n_fix,
                       n_total);
            char args[8192];
            report_causes_text(cs, cli_target_args(o.target, model, (const char *const *)o.data,
                                                   o.n_data, args, sizeof args));
            report_latent_text(cs, &lint, o.target ? o.target : model);
            print_adequacy_text(adequacy);
            print_text(&o, model, sha, ort, s, res, n_fix, failed, lint_errors);
            if (bis) {
                const onp_bisect_point *p = &bis->points[bis->first];
                char q[4200];
                printf("first divergent node: %s (%s), output %s%s%s (onnxparity bisect %s)\n",
                       p->node[0] ? p->node : "(unnamed)", p->op_type, p->value,
                       p->module[0] ? ", module " : "", p->module,
                       onp_shell_quote(o.target, q, sizeof q));
            }
        }
        rc = count_runtime(res, n_fix) ? EXIT_RUNTIME
             : failed || lint_errors   ? EXIT_FAIL
                                       : EXIT_PASS;
        if (html_rc) rc = html_rc;
        if (o.fmt != FMT_JSON && o.annotations) print_annotations(model, res, n_fix, cs);
        int sum_rc =
            o.summary ? write_summary(&o, model, res, n_fix, cs, bis, failed, lint_errors) : 0;
        if (sum_rc) rc = sum_rc;
        junit_done = 1;
        int junit_rc = o.junit ? write_junit(&o, res, secs, n_fix, &lint, &env) : 0;
        if (junit_rc) rc = junit_rc;
        int sarif_rc = o.sarif ? lint_sarif_write(o.sarif, model, &lint) : 0;
        if (sarif_rc) rc = sarif_rc; /* the lint findings for code scanning */
    }
    onp_causes_free(cs);
    onp_bisect_free(bis);
    for (size_t i = 0; res && i < n_fix; i++) onp_fixture_verdict_release(&res[i]);
    free(res);
    onp_fixture_verdict_release(&traced_extra);
    free(secs);
    onp_noisebook_free(noise);
    onp_adequacy_free(adequacy);
out_session:
    onp_session_close(s);
    onp_ort_close(ort);
out_lint:
    onp_lint_result_free(&lint);
out_td:
    for (size_t i = 0; i < o.n_data; i++) onp_testdata_free(&td[i]);
    if (rc >= EXIT_USAGE && o.junit && !junit_done) { /* the upload step still gets a file */
        char why[1400];
        if (e.code)
            onp_error_format(&e, why, sizeof why);
        else
            snprintf(why, sizeof why, "the check could not run (exit %d): the log says why", rc);
        junit_write_error("onnxparity check", "run", why, o.junit);
    }
    return rc;
}
