/*
 * cmd_gate.c — `onnxparity gate TARGET --criteria FILE [--record [--margin M]]`:
 * parity as a CI gate against recorded release criteria (docs/gate.md).
 *
 * --record measures the bundle (every fixture, as check does) and writes the
 * criteria file atomically: per output the tolerance, the top-1 agreement
 * floor, the allowed mismatch fraction, the shapes present, and the limits
 * max_abs / needed_rtol / needed_atol = measured x margin; plus the fixture
 * count and the lint rules that are clean.  Without --record the criteria
 * are read (strictly: a malformed file is exit 2 naming the file and the
 * field or byte) and every regression against them is printed.
 *
 * Exit: 0 nothing regressed (or recorded), 1 something regressed, 2 bad
 * usage or a malformed criteria file, 3 unreadable files, 4 ORT failure.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "criteria.h"
#include "ghactions.h"
#include "junit.h"
#include "onnxparity/bisect.h"
#include "onnxparity/causes.h"
#include "onnxparity/env.h"
#include "measure.h"
#include "onnxparity/agreement.h"
#include "onnxparity/buf.h"
#include "ortopts.h"
#include "onnxparity/doc.h"
#include "report.h"

/* --- options ------------------------------------------------------------- */

typedef struct opts {
    cli_ort ort;
    cli_target tg; /* TARGET, or --model/--data */
    const char *target, *criteria, *junit;
    const char *summary; /* --summary FILE: a Markdown summary appended */
    const char *sarif;   /* --sarif FILE: the lint findings, as check writes them */
    const char *html;    /* --html FILE: the gate result as a page (gating only) */
    int annotations;     /* --annotations: GitHub Actions workflow commands on stdout */
    int record;
    int allow_failing; /* --allow-failing: record criteria for a failing bundle on purpose */
    int margin_given;
    int env_fail;  /* --env-drift fail: a runtime or export drift is a regression */
    int env_given; /* --env-drift seen */
    int no_bisect; /* --no-bisect: no first divergent node on a failing gate */
    double margin, rtol, atol;
    cli_format fmt;
} opts;

static int parse_args(int argc, char **argv, opts *o)
{
    const char *v;
    cli_ort_init(&o->ort);
    o->margin = 2;
    o->rtol = o->atol = -1;
    for (int i = 1; i < argc; i++) {
        int r = cli_ort_opt(&o->ort, argc, argv, &i);
        if (r < 0) return -1;
        if (r) continue;
        if ((r = cli_target_opt(&o->tg, argc, argv, &i))) {
            if (r < 0) return -1;
        } else if ((r = cli_opt(argc, argv, &i, "criteria", &v))) {
            if (r < 0) return -1;
            o->criteria = v;
        } else if ((r = cli_opt(argc, argv, &i, "junit", &v))) {
            if (r < 0) return -1;
            o->junit = v;
        } else if ((r = cli_opt(argc, argv, &i, "margin", &v))) {
            if (r < 0 || cli_double(argv[0], "margin", v, &o->margin)) return -1;
            if (o->margin < 1 || !isfinite(o->margin))
                return cli_usage_error(argv[0], "--margin wants a number >= 1, not '%s'", v), -1;
            o->margin_given = 1;
        } else if ((r = cli_opt(argc, argv, &i, "env-drift", &v))) {
            if (r < 0) return -1;
            if (strcmp(v, "warn") && strcmp(v, "fail"))
                return cli_usage_error(argv[0], "--env-drift wants warn or fail, not '%s'", v), -1;
            o->env_fail = !strcmp(v, "fail");
            o->env_given = 1;
        } else if (cli_flag(argv, i, "no-bisect")) {
            o->no_bisect = 1;
        } else if ((r = cli_opt(argc, argv, &i, "summary", &v))) {
            if (r < 0) return -1;
            o->summary = v;
        } else if (cli_flag(argv, i, "annotations")) {
            o->annotations = 1;
        } else if ((r = cli_opt(argc, argv, &i, "sarif", &v))) {
            if (r < 0) return -1;
            o->sarif = v;
        } else if ((r = cli_opt(argc, argv, &i, "html", &v))) {
            if (r < 0) return -1;
            o->html = v;
        } else if ((r = cli_tol_format_opt(argc, argv, &i, &o->rtol, &o->atol, &o->fmt))) {
            if (r < 0) return -1;
        } else if (cli_flag(argv, i, "record")) {
            o->record = 1;
        } else if (cli_flag(argv, i, "allow-failing")) {
            o->allow_failing = 1;
        } else if (cli_target_arg(argv, i, "target", &o->target)) {
            return -1;
        }
    }
    if (cli_target_finish(&o->tg, argv[0], o->target)) return -1;
    if (!o->criteria)
        return cli_usage_error(argv[0], "usage: onnxparity gate TARGET --criteria FILE [--record "
                                        "[--margin M]]"),
               -1;
    /* no flag without effect: what only recording uses is refused when
     * gating, and the reverse */
    const char *rec_only = o->margin_given    ? "--margin"
                           : o->rtol >= 0     ? "--rtol"
                           : o->atol >= 0     ? "--atol"
                           : o->allow_failing ? "--allow-failing"
                                              : NULL;
    if (!o->record && rec_only)
        return cli_usage_error(argv[0],
                               "%s applies to --record only (gating uses the tolerances the "
                               "criteria recorded)",
                               rec_only),
               -1;
    const char *gate_only = o->env_given     ? "--env-drift"
                            : o->no_bisect   ? "--no-bisect"
                            : o->summary     ? "--summary"
                            : o->annotations ? "--annotations"
                            : o->html        ? "--html"
                                             : NULL;
    if (o->record && gate_only)
        return cli_usage_error(argv[0], "%s applies to gating only, not to --record", gate_only),
               -1;
    if (o->annotations && o->fmt == FMT_JSON)
        return cli_usage_error(argv[0], "--annotations writes workflow commands on stdout, where "
                                        "--format json writes the document: use one"),
               -1;
    return 0;
}

typedef struct tol_ctx {
    const opts *o;
    const criteria *c; /* NULL when recording */
} tol_ctx;

static onp_tol tol_for(void *ctx, const char *name, int32_t dtype)
{
    const tol_ctx *t = ctx;
    const crit_out *co = criteria_find(t->c, name);
    if (co) return (onp_tol){co->rtol, co->atol};
    onp_tol d = onp_tol_default(dtype);
    if (t->o->rtol >= 0) d.rtol = t->o->rtol;
    if (t->o->atol >= 0) d.atol = t->o->atol;
    return d;
}

static const char *base(const char *dir)
{
    const char *s = strrchr(dir, '/');
    return s ? s + 1 : dir;
}

/* --- record -------------------------------------------------------------- */

static void limit_num(cJSON *o, const char *key, double measured, double margin)
{
    if (isfinite(measured))
        onp_doc_num(o, key, measured * margin);
    else
        cJSON_AddNullToObject(o, key); /* inf needed_rtol: no limit can be recorded */
}

/* A bundle that fails (some output beyond its tolerance and its noise, a
 * flipped label) or has an error-level lint finding is not a baseline:
 * say why on stderr and return 1; 0 when it may be recorded. */
static int refuse_failing(const meas_result *r)
{
    size_t failing = 0;
    const onp_fixture_verdict *ff = NULL;
    const onp_output_verdict *fo = NULL;
    for (size_t i = 0; i < r->n_fix; i++) {
        if (r->fix[i].status != ONP_FIXTURE_FAIL) continue;
        if (!failing++) {
            ff = &r->fix[i];
            for (size_t k = 0; !fo && k < ff->n_out; k++)
                if (!ff->outs[k].pass) fo = &ff->outs[k];
        }
    }
    size_t lint_errors = r->lint.counts[ONP_LINT_ERROR];
    if (!failing && !lint_errors) return 0;
    if (failing) {
        char ga[16], en[16];
        fprintf(stderr,
                "onnxparity gate: not recording criteria: %zu of %zu fixtures fail (first: %s, "
                "output %s: %s%s%s, max_abs %s, noise envelope %s); fix the export, or pass "
                "--allow-failing to record a failing baseline on purpose\n",
                failing, r->n_fix, base(ff->dir), fo ? fo->name : "?",
                fo ? onp_verdict_name(fo->j.verdict) : "?", fo && fo->note[0] ? ", " : "",
                fo ? fo->note : "", report_fmt(fo ? fo->m.max_abs : NAN, ga, sizeof ga),
                report_fmt(fo ? fo->j.envelope_max : NAN, en, sizeof en));
    } else {
        const onp_lint_finding *f = NULL;
        for (size_t i = 0; !f && i < r->lint.n; i++)
            if (r->lint.findings[i].rule->severity == ONP_LINT_ERROR) f = &r->lint.findings[i];
        fprintf(stderr,
                "onnxparity gate: not recording criteria: %zu error-level lint finding(s) (first: "
                "%s %s at %s); fix the export, or pass --allow-failing to record a failing "
                "baseline on purpose\n",
                lint_errors, f->rule->id, f->rule->name,
                f->loc.name && f->loc.name[0] ? f->loc.name : "(model)");
    }
    return 1;
}

/* --record over an existing criteria file: one line per limit that
 * changes, "limit    OUTPUT.FIELD: OLD -> NEW", so that a re-record on
 * purpose shows what it loosens or tightens. */
static void limit_diff(FILE *to, const criteria *old, const cJSON *outs)
{
    static const char *const keys[] = {"rtol",    "atol",        "top1_min",    "mismatch_frac_max",
                                       "max_abs", "needed_rtol", "needed_atol", "envelope_max"};
    const cJSON *oj;
    cJSON_ArrayForEach(oj, outs)
    {
        const crit_out *co = criteria_find(old, oj->string);
        if (!co) {
            fprintf(to, "limit    %s: new output (not in the old criteria)\n", oj->string);
            continue;
        }
        const double was[] = {co->rtol,    co->atol,        co->top1_min,    co->mismatch_frac_max,
                              co->max_abs, co->needed_rtol, co->needed_atol, co->envelope_max};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(oj, keys[k]);
            double now = cJSON_IsNumber(v) ? v->valuedouble
                         : cJSON_IsRaw(v)  ? strtod(v->valuestring, NULL) /* report_num's form */
                                           : -1;
            char a[32], b[32];
            if (now == was[k]) continue;
            snprintf(a, sizeof a, "%.9g", was[k]);
            snprintf(b, sizeof b, "%.9g", now);
            fprintf(to, "limit    %s.%s: %s -> %s\n", oj->string, keys[k], was[k] < 0 ? "null" : a,
                    now < 0 ? "null" : b);
        }
    }
    for (size_t i = 0; i < old->n_out; i++)
        if (!cJSON_GetObjectItemCaseSensitive(outs, old->outs[i].name))
            fprintf(to, "limit    %s: no longer recorded (not in the bundle)\n", old->outs[i].name);
}

/* The criteria already at `path`, if any, for limit_diff.  Read with plain
 * stdio, not cli_read_file: that would note the file as an input, and the
 * output rule would then refuse to replace it.  0 when *old holds them. */
static int read_old(const char *path, criteria *old)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    onp_buf b;
    onp_buf_init(&b, (size_t)64 << 20);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) onp_buf_append(&b, chunk, n);
    int bad = ferror(f) || b.failed;
    fclose(f);
    onp_error e;
    onp_error_clear(&e);
    int rc = bad ? -1 : criteria_parse((const char *)b.p, b.n, path, old, &e);
    onp_buf_free(&b);
    return rc;
}

static int record(const opts *o, const meas_result *r)
{
    for (size_t i = 0; i < r->n_fix; i++)
        if (r->fix[i].status == ONP_FIXTURE_ERROR) {
            fprintf(stderr,
                    "onnxparity gate: %s: %s: not recording criteria for a bundle that "
                    "does not run\n",
                    r->fix[i].dir, r->fix[i].msg);
            return EXIT_FAIL;
        }
    if (!o->allow_failing && refuse_failing(r)) return EXIT_FAIL;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", CRIT_SCHEMA);
    cJSON_AddStringToObject(root, "model_sha256", r->sha256);
    if (onp_env_write_json(&r->env, cJSON_AddObjectToObject(root, "environment"))) {
        cJSON_Delete(root);
        return cli_usage_error("gate", "out of memory");
    }
    onp_doc_num(root, "margin", o->margin);
    cJSON_AddNumberToObject(root, "fixtures", (double)r->n_fix);
    cJSON *lc = cJSON_AddArrayToObject(root, "lint_clean");
    for (size_t k = 0; k < onp_lint_rule_count(); k++) {
        const onp_lint_rule *rule = onp_lint_rule_at(k);
        size_t hits = 0;
        for (size_t i = 0; i < r->lint.n; i++) hits += r->lint.findings[i].rule == rule;
        if (!hits) cJSON_AddItemToArray(lc, cJSON_CreateString(rule->id));
    }
    cJSON *outs = cJSON_AddObjectToObject(root, "outputs");
    for (size_t i = 0; i < r->n_fix; i++)
        for (size_t k = 0; k < r->fix[i].n_out; k++) {
            const onp_output_verdict *x = &r->fix[i].outs[k];
            if (!x->compared || cJSON_GetObjectItemCaseSensitive(outs, x->name)) continue;
            double max_abs = 0, max_rel = 0, nr = 0, na = 0, mf = 0, env = -1;
            long quiet = 0; /* fixtures within tolerance but beyond their float noise */
            onp_noise_src weakest = ONP_NOISE_NONE;
            int64_t rows = 0, agree = 0;
            cJSON *oj = cJSON_AddObjectToObject(outs, x->name), *shapes;
            onp_doc_num(oj, "rtol", x->m.tol.rtol);
            onp_doc_num(oj, "atol", x->m.tol.atol);
            shapes = cJSON_CreateArray();
            for (size_t j = i; j < r->n_fix; j++)
                for (size_t q = 0; q < r->fix[j].n_out; q++) {
                    const onp_output_verdict *y = &r->fix[j].outs[q];
                    if (!y->compared || strcmp(y->name, x->name)) continue;
                    max_abs = fmax(max_abs, y->m.max_abs);
                    max_rel = fmax(max_rel, y->m.max_rel);
                    nr = isinf(y->m.needed_rtol) ? INFINITY : fmax(nr, y->m.needed_rtol);
                    na = fmax(na, y->m.needed_atol);
                    mf = fmax(mf, y->m.mismatch_frac);
                    if (y->j.noise.src != ONP_NOISE_NONE) {
                        env = fmax(env, y->j.envelope_max);
                        if (y->j.noise.src > weakest) weakest = y->j.noise.src;
                    }
                    quiet += onp_judgment_within_tol_beyond_noise(&y->j);
                    if (y->has_topk) rows += y->tk.rows, agree += y->tk.top1_agree;
                    cJSON *sh = cJSON_CreateArray();
                    for (int d = 0; d < y->rank; d++)
                        cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)y->dims[d]));
                    int dup = 0;
                    const cJSON *prev;
                    cJSON_ArrayForEach(prev, shapes) dup |= cJSON_Compare(prev, sh, 1);
                    if (dup || cJSON_GetArraySize(shapes) >= CRIT_MAX_SHAPES)
                        cJSON_Delete(sh);
                    else
                        cJSON_AddItemToArray(shapes, sh);
                }
            if (rows)
                onp_doc_num(oj, "top1_min", (double)agree / (double)rows);
            else
                cJSON_AddNullToObject(oj, "top1_min");
            if (rows) { /* issue 19: the flip rate's bound as measured (edit it to a release goal)
                         */
                onp_agreement ag;
                onp_agreement_of(rows, agree, ONP_AGREEMENT_CONFIDENCE, &ag);
                onp_doc_num(oj, "max_flip_rate", ag.flip_upper);
                onp_doc_num(oj, "flip_confidence", ag.confidence);
            } else {
                cJSON_AddNullToObject(oj, "max_flip_rate");
            }
            onp_doc_num(oj, "mismatch_frac_max", mf);
            cJSON_AddItemToObject(oj, "shapes", shapes);
            /* limits: measured x margin, floored by the noise envelope so that a
             * harmless change (a retrain, another summation order) inside the
             * float noise never reads as a regression */
            limit_num(oj, "max_abs", fmax(max_abs * o->margin, env), 1);
            limit_num(oj, "needed_rtol", nr, o->margin);
            limit_num(oj, "needed_atol", fmax(na * o->margin, env), 1);
            if (env >= 0) {
                onp_doc_num(oj, "envelope_max", env);
                cJSON_AddStringToObject(oj, "noise_source", onp_noise_src_name(weakest));
            } else {
                cJSON_AddNullToObject(oj, "envelope_max");
            }
            /* as measured: a healthy export has none; a bundle recorded with
             * some keeps them allowed, and any more regress */
            cJSON_AddNumberToObject(oj, "quiet_change_max", (double)quiet);
            cJSON *meas = cJSON_AddObjectToObject(oj, "measured");
            onp_doc_num(meas, "max_abs", max_abs);
            onp_doc_num(meas, "max_rel", max_rel);
            onp_doc_num(meas, "needed_rtol", nr);
            onp_doc_num(meas, "needed_atol", na);
        }
    criteria old;
    if (!read_old(o->criteria, &old)) { /* re-recording: say what moves */
        limit_diff(o->fmt == FMT_JSON ? stderr : stdout, &old, outs);
        criteria_free(&old);
    }
    char *txt = onp_doc_print(root);
    onp_buf b;
    onp_buf_init(&b, 0);
    if (txt) onp_buf_append(&b, txt, strlen(txt)), onp_buf_append(&b, "\n", 1);
    onp_error e;
    onp_error_clear(&e);
    int rc = EXIT_PASS;
    if (!txt || b.failed)
        rc = cli_usage_error("gate", "out of memory");
    else if (onp_buf_write_file(&b, o->criteria, &e))
        rc = cli_report(&e);
    onp_buf_free(&b);
    cJSON_Delete(root);
    if (!rc && o->fmt == FMT_JSON)
        fputs(txt, stdout), fputc('\n', stdout); /* the criteria document itself */
    else if (!rc)
        printf("recorded %s: %zu fixtures, margin %g, model sha256 %.12s\n", o->criteria, r->n_fix,
               o->margin, r->sha256);
    free(txt);
    return rc;
}

/* --- judge --------------------------------------------------------------- */

typedef struct regression {
    const char *fixture; /* folder name, or NULL for a bundle-wide check */
    const char *output;  /* or NULL */
    char check[32];
    char item[64]; /* what a bundle-wide check is about: a rule id, a field, a shape */
    double value, limit;
    char msg[1200];
} regression;

/* One criterion as judged: the worst value measured against its limit over
 * every fixture it applies to, and whether any of them regressed.  The
 * JSON document's "checks" and the --html page's criteria table. */
typedef struct crit_check {
    const char *output; /* or NULL for a bundle-wide criterion */
    char check[32];     /* the regression's `check` name */
    double measured;    /* the worst value judged (NaN stays NaN: it regressed) */
    double limit;
    int floor;     /* 1: the value must be >= limit (fixtures, shapes, top1), else <= */
    int regressed; /* 1 when some fixture (or the bundle) regressed on it */
} crit_check;

/* The verdict's record: every regression (r), every criterion judged (ck). */
typedef struct reglist {
    regression *r;
    size_t n, cap;
    crit_check *ck;
    size_t n_ck, cap_ck;
} reglist;

static void reglist_free(reglist *l)
{
    free(l->r);
    free(l->ck);
}

/* Record one comparison of `v` with `lim` under (output, check): the entry
 * keeps the worst value and the limit (the same for every fixture). */
static void check_note(reglist *l, const char *output, const char *check, double v, double lim,
                       int floor, int regressed)
{
    crit_check *k = NULL;
    for (size_t i = 0; !k && i < l->n_ck; i++)
        if (!strcmp(l->ck[i].check, check) &&
            (l->ck[i].output == output ||
             (l->ck[i].output && output && !strcmp(l->ck[i].output, output))))
            k = &l->ck[i];
    if (!k) {
        if (l->n_ck == l->cap_ck) {
            size_t cap = l->cap_ck ? 2 * l->cap_ck : 16;
            crit_check *p = realloc(l->ck, cap * sizeof *p);
            if (!p) return;
            l->ck = p, l->cap_ck = cap;
        }
        k = &l->ck[l->n_ck++];
        memset(k, 0, sizeof *k);
        k->output = output;
        snprintf(k->check, sizeof k->check, "%s", check);
        k->measured = v;
        k->limit = lim;
        k->floor = floor;
    } else if (!isnan(k->measured) && (isnan(v) || (floor ? v < k->measured : v > k->measured))) {
        k->measured = v;
    }
    k->regressed |= regressed;
}

static regression *reg_add(reglist *l, const char *fixture, const char *output, const char *check,
                           double value, double limit)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        regression *p = realloc(l->r, cap * sizeof *p);
        if (!p) return NULL;
        l->r = p, l->cap = cap;
    }
    regression *g = &l->r[l->n++];
    memset(g, 0, sizeof *g);
    g->fixture = fixture;
    g->output = output;
    snprintf(g->check, sizeof g->check, "%s", check);
    g->value = value;
    g->limit = limit;
    return g;
}

/* "OUTPUT: CHECK V > recorded limit L (fixture F)" */
static void reg_limit(reglist *l, const char *fx, const char *out, const char *check, double v,
                      double lim, const char *what)
{
    char a[32], b[32];
    regression *g = reg_add(l, fx, out, check, v, lim);
    /* as many digits as it takes for the value to read differently from the limit */
    for (int prec = 3; prec <= 17; prec++) {
        snprintf(a, sizeof a, "%.*g", prec, v);
        snprintf(b, sizeof b, "%.*g", prec, lim);
        if (strcmp(a, b) || !isfinite(v)) break;
    }
    if (!isfinite(v)) report_fmt(v, a, sizeof a);
    if (g) snprintf(g->msg, sizeof g->msg, "%s: %s %s > %s %s (%s)", out, check, a, what, b, fx);
}

/* Judge v against the upper limit lim (NaN is beyond any limit): noted as
 * a check, a regression when beyond. */
static void judge_limit(reglist *l, const char *fx, const char *out, const char *check, double v,
                        double lim, const char *what)
{
    int beyond = !(v <= lim);
    check_note(l, out, check, v, lim, 0, beyond);
    if (beyond) reg_limit(l, fx, out, check, v, lim, what);
}

/* quiet_change: the n fixtures on which output co is within its tolerance
 * but beyond its float64-measured noise (check's mark, noise.h).  More of
 * them than the criteria allow regress, each marked fixture named. */
static void judge_quiet(reglist *l, const crit_out *co, const meas_result *r, long n)
{
    int beyond = n > co->quiet_change_max;
    check_note(l, co->name, "quiet_change", (double)n, (double)co->quiet_change_max, 0, beyond);
    for (size_t i = 0; beyond && i < r->n_fix; i++)
        for (size_t k = 0; k < r->fix[i].n_out; k++) {
            const onp_output_verdict *x = &r->fix[i].outs[k];
            regression *g;
            char a[16], b[16];
            if (strcmp(x->name, co->name) || !onp_judgment_within_tol_beyond_noise(&x->j) ||
                !(g = reg_add(l, base(r->fix[i].dir), co->name, "quiet_change", (double)n,
                              (double)co->quiet_change_max)))
                continue;
            /* as check words its mark: the float64 reference's errors, or the
             * gap against the scaled envelope */
            int ref = x->j.has_ref;
            snprintf(g->msg, sizeof g->msg,
                     "%.255s: within tolerance but beyond its float noise: %s %s, %s %s (%.200s; "
                     "%ld fixture(s), the criteria allow %ld)",
                     co->name, ref ? "ORT vs float64" : "gap",
                     report_fmt(ref ? x->j.ort_err_max : x->j.gap_max, a, sizeof a),
                     ref ? "eager vs float64" : "envelope",
                     report_fmt(ref ? x->j.eager_err_max : x->j.envelope_max, b, sizeof b),
                     base(r->fix[i].dir), n, co->quiet_change_max);
        }
}

static void judge(const criteria *c, const meas_result *r, reglist *l)
{
    regression *g;
    char a[16], b[16];
    check_note(l, NULL, "fixtures", (double)r->n_fix, (double)c->fixtures, 1,
               (long)r->n_fix < c->fixtures);
    if ((long)r->n_fix < c->fixtures &&
        (g = reg_add(l, NULL, NULL, "fixtures", (double)r->n_fix, (double)c->fixtures)))
        snprintf(g->msg, sizeof g->msg, "fixtures: %zu present, criteria require %ld", r->n_fix,
                 c->fixtures);
    for (size_t i = 0; i < r->n_fix; i++) {
        const onp_fixture_verdict *f = &r->fix[i];
        if (f->status == ONP_FIXTURE_ERROR &&
            (g = reg_add(l, base(f->dir), NULL, "error", NAN, NAN)))
            snprintf(g->msg, sizeof g->msg, "%.200s: does not run: %.900s", base(f->dir), f->msg);
        for (size_t k = 0; f->status != ONP_FIXTURE_ERROR && k < f->n_out; k++) {
            const onp_output_verdict *x = &f->outs[k];
            const crit_out *co = criteria_find(c, x->name);
            if (!co) continue; /* an output the criteria do not cover */
            if (!x->compared || !x->m.shape_ok || !x->m.dtype_ok) {
                if ((g = reg_add(l, base(f->dir), x->name, "compare", NAN, NAN)))
                    snprintf(g->msg, sizeof g->msg, "%.255s: %s (%.200s)", x->name,
                             !x->compared     ? "not compared"
                             : !x->m.shape_ok ? "shape differs from the eager output"
                                              : "dtype differs from the eager output",
                             base(f->dir));
                continue;
            }
            if (co->envelope_max >= 0 && x->j.noise.src != ONP_NOISE_NONE)
                check_note(l, x->name, "noise", x->j.ratio, 1, 0,
                           x->j.verdict == ONP_VERDICT_BEYOND_NOISE);
            if (co->envelope_max >= 0 && x->j.verdict == ONP_VERDICT_BEYOND_NOISE) {
                char a1[16], b1[16];
                if ((g = reg_add(l, base(f->dir), x->name, "noise", x->j.gap_max,
                                 x->j.envelope_max)))
                    snprintf(g->msg, sizeof g->msg,
                             "%.255s: beyond its float noise: max_abs %s > envelope %s (%.200s)",
                             x->name, report_fmt(x->j.gap_max, a1, sizeof a1),
                             report_fmt(x->j.envelope_max, b1, sizeof b1), base(f->dir));
            }
            /* elements outside the tolerance but inside the noise are not a
             * regression when the criteria carry an envelope */
            int in_noise = co->envelope_max >= 0 && x->j.verdict == ONP_VERDICT_WITHIN_NOISE;
            if (!in_noise)
                judge_limit(l, base(f->dir), x->name, "mismatch_frac", x->m.mismatch_frac,
                            co->mismatch_frac_max, "allowed");
            if (co->max_abs >= 0)
                judge_limit(l, base(f->dir), x->name, "max_abs", x->m.max_abs, co->max_abs,
                            "recorded limit");
            if (co->needed_rtol >= 0)
                judge_limit(l, base(f->dir), x->name, "needed_rtol", x->m.needed_rtol,
                            co->needed_rtol, "recorded limit");
            if (co->needed_atol >= 0)
                judge_limit(l, base(f->dir), x->name, "needed_atol", x->m.needed_atol,
                            co->needed_atol, "recorded limit");
        }
    }
    for (size_t o = 0; o < c->n_out; o++) {
        const crit_out *co = &c->outs[o];
        int64_t rows = 0, agree = 0;
        size_t seen = 0;
        long quiet = 0;
        int have[CRIT_MAX_SHAPES] = {0};
        for (size_t i = 0; i < r->n_fix; i++)
            for (size_t k = 0; k < r->fix[i].n_out; k++) {
                const onp_output_verdict *x = &r->fix[i].outs[k];
                if (strcmp(x->name, co->name)) continue;
                seen++;
                quiet += onp_judgment_within_tol_beyond_noise(&x->j);
                if (x->has_topk) rows += x->tk.rows, agree += x->tk.top1_agree;
                for (size_t s = 0; x->compared && s < co->n_shapes; s++)
                    if (co->rank[s] == x->rank &&
                        !memcmp(co->dims[s], x->dims, (size_t)x->rank * sizeof x->dims[0]))
                        have[s] = 1;
            }
        if (!seen && (g = reg_add(l, NULL, co->name, "missing", NAN, NAN))) {
            snprintf(g->msg, sizeof g->msg, "%s: no such output in the bundle", co->name);
            continue;
        }
        if (co->quiet_change_max >= 0) judge_quiet(l, co, r, quiet);
        size_t present = 0;
        for (size_t s = 0; s < co->n_shapes; s++) present += (size_t)have[s];
        if (co->n_shapes)
            check_note(l, co->name, "shapes", (double)present, (double)co->n_shapes, 1,
                       present < co->n_shapes);
        for (size_t s = 0; s < co->n_shapes; s++)
            if (!have[s] && (g = reg_add(l, NULL, co->name, "shapes", NAN, NAN))) {
                char sh[256];
                onp_shape_str(co->rank[s], co->dims[s], sh, sizeof sh);
                snprintf(g->item, sizeof g->item, "%.63s", sh);
                snprintf(g->msg, sizeof g->msg,
                         "%s: no fixture with shape %s (criteria require it)", co->name, sh);
            }
        if (co->max_flip_rate >= 0) { /* issue 19: the flip rate at a confidence */
            onp_agreement ag;
            onp_agreement_of(rows, agree, co->flip_confidence, &ag);
            check_note(l, co->name, "flip_rate", ag.flip_upper, co->max_flip_rate, 0,
                       !onp_agreement_meets(&ag, co->max_flip_rate));
            if (!onp_agreement_meets(&ag, co->max_flip_rate) &&
                (g = reg_add(l, NULL, co->name, "flip_rate", ag.flip_upper, co->max_flip_rate)))
                snprintf(g->msg, sizeof g->msg,
                         "%s: flip rate at most %s at %g%% confidence (%lld flipped of %lld "
                         "samples, Clopper-Pearson) > max_flip_rate %s",
                         co->name, report_fmt(ag.flip_upper, a, sizeof a), 100 * ag.confidence,
                         (long long)ag.flipped, (long long)ag.rows,
                         report_fmt(co->max_flip_rate, b, sizeof b));
        }
        if (co->top1_min >= 0) {
            double frac = rows ? (double)agree / (double)rows : 0;
            check_note(l, co->name, "top1", frac, co->top1_min, 1, frac < co->top1_min);
            if (frac < co->top1_min && (g = reg_add(l, NULL, co->name, "top1", frac, co->top1_min)))
                snprintf(g->msg, sizeof g->msg,
                         "%s: top-1 agreement %s (%lld/%lld rows) < recorded floor %s", co->name,
                         report_fmt(frac, a, sizeof a), (long long)agree, (long long)rows,
                         report_fmt(co->top1_min, b, sizeof b));
        }
    }
    size_t lint_hits = 0; /* findings of the rules recorded clean: one check, limit 0 */
    for (size_t k = 0; k < c->n_lint; k++)
        for (size_t i = 0; i < r->lint.n; i++)
            lint_hits += !strcmp(r->lint.findings[i].rule->id, c->lint[k]);
    if (c->n_lint) check_note(l, NULL, "lint", (double)lint_hits, 0, 0, lint_hits > 0);
    for (size_t k = 0; k < c->n_lint; k++) {
        size_t hits = 0;
        const onp_lint_finding *first = NULL;
        for (size_t i = 0; i < r->lint.n; i++)
            if (!strcmp(r->lint.findings[i].rule->id, c->lint[k])) {
                if (!hits++) first = &r->lint.findings[i];
            }
        if (hits && (g = reg_add(l, NULL, NULL, "lint", (double)hits, 0)) &&
            snprintf(g->item, sizeof g->item, "%s", c->lint[k]) >= 0)
            snprintf(g->msg, sizeof g->msg, "lint %s %s: %zu finding(s), first at %s: %s",
                     first->rule->id, first->rule->name, hits,
                     first->loc.name[0] ? first->loc.name : "(model)", first->message);
    }
}

/* --- the environment ----------------------------------------------------- */

typedef struct drift_list {
    onp_env_drift d[ONP_ENV_FIELD_COUNT]; /* [n] */
    size_t n;
} drift_list;

/* What a drift does under the policy: "note", "warning" or "failure". */
static const char *drift_effect(const opts *o, const onp_env_drift *d)
{
    return d->kind == ONP_DRIFT_NOTE ? "note" : o->env_fail ? "failure" : "warning";
}

/* A value as it is shown: hashes to 12 digits, config entries joined by "; ". */
static const char *shown_value(onp_env_field f, const char *v, char *buf, size_t n)
{
    if (!v[0]) return "unknown";
    if (f == ONP_ENV_MODEL_SHA256 || f == ONP_ENV_ORT_LIBRARY_SHA256) {
        snprintf(buf, n, "%.12s", v);
        return buf;
    }
    size_t k = 0;
    for (const char *p = v; *p && k + 3 < n; p++) {
        if (*p == '\n')
            buf[k++] = ';', buf[k++] = ' ';
        else
            buf[k++] = *p;
    }
    buf[k] = '\0';
    return buf;
}

/* "FIELD: REC at record time, CUR now" */
static void drift_text(const onp_env_drift *d, char *buf, size_t n)
{
    char a[200], b[200];
    snprintf(buf, n, "%s: %s at record time, %s now", onp_env_field_name(d->field),
             shown_value(d->field, d->recorded, a, sizeof a),
             shown_value(d->field, d->current, b, sizeof b));
}

/* Compare the recorded environment with this run's (env.h decides what a
 * difference is); under --env-drift fail each runtime or export drift is a
 * regression (check "environment"). */
static void judge_env(const opts *o, const criteria *c, const meas_result *r, drift_list *dl,
                      reglist *l)
{
    dl->n = c->has_env ? onp_env_compare(&c->env, &r->env, dl->d) : 0;
    for (size_t i = 0; o->env_fail && i < dl->n; i++) {
        regression *g;
        if (dl->d[i].kind == ONP_DRIFT_NOTE ||
            !(g = reg_add(l, NULL, NULL, "environment", NAN, NAN)))
            continue;
        char t[900];
        drift_text(&dl->d[i], t, sizeof t);
        snprintf(g->item, sizeof g->item, "%s", onp_env_field_name(dl->d[i].field));
        snprintf(g->msg, sizeof g->msg, "environment drift: %s (--env-drift fail)", t);
    }
}

/* --- causes and the first divergent node --------------------------------- */

/* --- writers ------------------------------------------------------------- */

/* The JUnit name of a bundle-wide regression: "CHECK[ OUTPUT][ ITEM]". */
static void bundle_case_name(const regression *g, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s%s%s", g->check, g->output ? " " : "", g->output ? g->output : "",
             g->item[0] ? " " : "", g->item);
}

/* One testcase per fixture x output (failing when a regression names it),
 * one per environment field recorded (failing, or passing with the drift in
 * system-out), one per other bundle-wide regression; the environment and
 * the policy as properties. */
static int write_junit(const opts *o, const criteria *c, const meas_result *r, const reglist *l,
                       const drift_list *dl)
{
    junit j;
    junit_init(&j);
    junit_env_properties(&j, &r->env);
    junit_property(&j, "env_drift_policy", o->env_fail ? "fail" : "warn");
    for (size_t i = 0; i < r->n_fix; i++) {
        const onp_fixture_verdict *f = &r->fix[i];
        junit_set_time(&j, r->secs ? r->secs[i] / (double)(f->n_out ? f->n_out : 1) : 0);
        if (f->status == ONP_FIXTURE_ERROR && !f->n_out)
            junit_case(&j, base(f->dir), "(fixture)", JUNIT_ERROR, f->msg, NULL);
        for (size_t k = 0; k < f->n_out; k++) {
            const onp_output_verdict *x = &f->outs[k];
            char msg[2048] = "", txt[4096] = "";
            for (size_t q = 0; q < l->n; q++) {
                const regression *g = &l->r[q];
                if (!g->fixture || strcmp(g->fixture, base(f->dir)) ||
                    (g->output && strcmp(g->output, x->name)))
                    continue;
                snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s%s", msg[0] ? "; " : "",
                         g->msg);
            }
            if (!msg[0]) {
                junit_case(&j, base(f->dir), x->name, JUNIT_PASS, NULL, NULL);
                continue;
            }
            if (x->compared) junit_metrics_text(&x->m, txt, sizeof txt);
            junit_case(&j, base(f->dir), x->name,
                       f->status == ONP_FIXTURE_ERROR ? JUNIT_ERROR : JUNIT_FAIL, msg,
                       txt[0] ? txt : msg);
        }
    }
    junit_set_time(&j, 0);
    for (int fld = 0; c->has_env && fld < ONP_ENV_FIELD_COUNT; fld++) {
        if (!c->env.v[fld][0]) continue; /* not recorded: not compared */
        const onp_env_drift *d = NULL;
        for (size_t i = 0; i < dl->n; i++)
            if ((int)dl->d[i].field == fld) d = &dl->d[i];
        char t[900], m[1000];
        if (!d) {
            junit_case(&j, "environment", onp_env_field_name((onp_env_field)fld), JUNIT_PASS, NULL,
                       NULL);
            continue;
        }
        drift_text(d, t, sizeof t);
        snprintf(m, sizeof m, "%s: %s", drift_effect(o, d), t);
        junit_case(&j, "environment", onp_env_field_name(d->field),
                   !strcmp(drift_effect(o, d), "failure") ? JUNIT_FAIL : JUNIT_WARN, m, m);
    }
    for (size_t q = 0; q < l->n; q++) {
        char name[400];
        if (l->r[q].fixture || !strcmp(l->r[q].check, "environment")) continue;
        bundle_case_name(&l->r[q], name, sizeof name);
        junit_case(&j, "criteria", name, JUNIT_FAIL, l->r[q].msg, NULL);
    }
    onp_error e;
    onp_error_clear(&e);
    int rc = junit_write(&j, "onnxparity gate", o->junit, &e) ? cli_report(&e) : 0;
    junit_free(&j);
    return rc;
}

static cJSON *drift_json(const opts *o, const drift_list *dl)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < dl->n; i++) {
        const onp_env_drift *d = &dl->d[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "field", onp_env_field_name(d->field));
        cJSON_AddStringToObject(x, "kind", onp_drift_kind_name(d->kind));
        cJSON_AddStringToObject(x, "recorded", d->recorded);
        if (d->current[0])
            cJSON_AddStringToObject(x, "current", d->current);
        else
            cJSON_AddNullToObject(x, "current");
        cJSON_AddStringToObject(x, "effect", drift_effect(o, d));
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

/* "checks": every criterion judged, the worst value against its limit. */
static cJSON *checks_json(const reglist *l)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < l->n_ck; i++) {
        const crit_check *k = &l->ck[i];
        cJSON *x = cJSON_CreateObject();
        if (k->output)
            cJSON_AddStringToObject(x, "output", k->output);
        else
            cJSON_AddNullToObject(x, "output");
        cJSON_AddStringToObject(x, "check", k->check);
        onp_doc_num(x, "measured", k->measured);
        onp_doc_num(x, "limit", k->limit);
        cJSON_AddStringToObject(x, "bound", k->floor ? "min" : "max");
        cJSON_AddBoolToObject(x, "pass", !k->regressed);
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

/* The result document (onnxparity.gate/1, docs/gate.md); takes
 * r->environment.  The caller owns it. */
static cJSON *gate_json(const opts *o, const criteria *c, meas_result *r, const reglist *l,
                        const drift_list *dl, const onp_causes *cs, const onp_bisect_result *bis,
                        const char *verdict)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.gate/1");
    cJSON_AddStringToObject(root, "verdict", verdict);
    cJSON_AddStringToObject(root, "model", r->model);
    cJSON_AddStringToObject(root, "criteria", o->criteria);
    cJSON_AddItemToObject(root, "environment", r->environment);
    r->environment = NULL;
    cJSON_AddBoolToObject(root, "environment_recorded", c->has_env);
    cJSON_AddStringToObject(root, "env_drift_policy", o->env_fail ? "fail" : "warn");
    cJSON_AddItemToObject(root, "environment_drift", drift_json(o, dl));
    cJSON_AddItemToObject(root, "causes", onp_doc_causes(cs));
    if (bis)
        cJSON_AddItemToObject(root, "first_divergent", onp_doc_first_divergent(bis));
    else
        cJSON_AddNullToObject(root, "first_divergent");
    cJSON *arr = cJSON_AddArrayToObject(root, "regressions");
    for (size_t q = 0; q < l->n; q++) {
        cJSON *g = cJSON_CreateObject();
        const regression *x = &l->r[q];
        if (x->fixture)
            cJSON_AddStringToObject(g, "fixture", x->fixture);
        else
            cJSON_AddNullToObject(g, "fixture");
        if (x->output)
            cJSON_AddStringToObject(g, "output", x->output);
        else
            cJSON_AddNullToObject(g, "output");
        cJSON_AddStringToObject(g, "check", x->check);
        if (isnan(x->value))
            cJSON_AddNullToObject(g, "value");
        else
            onp_doc_num(g, "value", x->value);
        if (isnan(x->limit))
            cJSON_AddNullToObject(g, "limit");
        else
            onp_doc_num(g, "limit", x->limit);
        cJSON_AddStringToObject(g, "message", x->msg);
        cJSON_AddItemToArray(arr, g);
    }
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "fixtures", (double)r->n_fix);
    cJSON_AddNumberToObject(sum, "outputs", (double)c->n_out);
    cJSON_AddNumberToObject(sum, "regressions", (double)l->n);
    cJSON_AddItemToObject(root, "checks", checks_json(l));
    return root;
}

/* The text: the run, the environment against the recorded one, the causes
 * and the first divergent node (as check derives them), the regressions,
 * the verdict. */
static void print_text(const opts *o, const criteria *c, const meas_result *r, const reglist *l,
                       const drift_list *dl, const onp_causes *cs, const onp_bisect_result *bis,
                       size_t lost)
{
    char t[900];
    printf("gate     %s against %s (model sha256 %.12s)\n", cli_target_name(&o->tg), o->criteria,
           r->sha256);
    printf("runtime  ONNX Runtime %s, %s, opt-level %s\n", r->env.v[ONP_ENV_ORT_VERSION],
           r->env.v[ONP_ENV_PROVIDER], r->env.v[ONP_ENV_OPT_LEVEL]);
    if (!c->has_env)
        printf("note     %s records no environment (recorded before environments were): "
               "nothing to compare; --record again to add one\n",
               o->criteria);
    size_t drifted = 0; /* the drift lines; a note (a re-export's new sha256) is none */
    for (size_t i = 0; i < dl->n; i++) {
        const char *eff = drift_effect(o, &dl->d[i]);
        drift_text(&dl->d[i], t, sizeof t);
        if (!strcmp(eff, "note"))
            printf("note     %s (a re-export changes it)\n", t);
        else {
            drifted++;
            printf("drift    %s (%s%s)\n", t, eff,
                   strcmp(eff, "warning") ? "" : "; --env-drift fail makes it a regression");
        }
    }
    char args[8192];
    report_causes_text(cs,
                       cli_target_args(o->tg.bundle, o->tg.model, (const char *const *)o->tg.data,
                                       o->tg.n_data, args, sizeof args));
    report_latent_text(cs, &r->lint, cli_target_name(&o->tg));
    if (bis) {
        const onp_bisect_point *p = &bis->points[bis->first];
        char q[4200];
        printf("first divergent node: %s (%s), output %s%s%s (onnxparity bisect %s)\n",
               p->node[0] ? p->node : "(unnamed)", p->op_type, p->value,
               p->module[0] ? ", module " : "", p->module,
               onp_shell_quote(cli_target_name(&o->tg), q, sizeof q));
    }
    for (size_t q = 0; q < l->n; q++) printf("regressed: %s\n", l->r[q].msg);
    if (lost)
        printf("verdict: ERROR — ONNX Runtime crashed or timed out on %zu fixture(s)\n", lost);
    else if (l->n)
        printf("verdict: FAIL — %zu regression(s) against %s\n", l->n, o->criteria);
    else
        printf("verdict: pass — %zu fixtures, %zu outputs within the criteria of %s%s\n", r->n_fix,
               c->n_out, o->criteria, drifted ? " (see the drift lines above)" : "");
}

/* --annotations: the causes, each drift that warns or fails, each
 * regression (at most 50) as workflow commands; then the verdict. */
static void print_annotations(const opts *o, const meas_result *r, const reglist *l,
                              const drift_list *dl, const onp_causes *cs, size_t lost)
{
    char t[900], title[200];
    gh_causes_commands(stdout, cs, r->model);
    for (size_t i = 0; i < dl->n; i++) {
        const char *eff = drift_effect(o, &dl->d[i]);
        if (!strcmp(eff, "note")) continue;
        drift_text(&dl->d[i], t, sizeof t);
        gh_command(stdout, !strcmp(eff, "failure") ? "error" : "warning", o->criteria,
                   "onnxparity gate: environment drift", t);
    }
    for (size_t q = 0; q < l->n && q < 50; q++) {
        if (!strcmp(l->r[q].check, "environment")) continue; /* said above */
        snprintf(title, sizeof title, "onnxparity gate: regressed (%s)", l->r[q].check);
        gh_command(stdout, "error", r->model, title, l->r[q].msg);
    }
    if (lost || l->n)
        gh_command(stdout, "error", NULL, "onnxparity gate",
                   lost ? "ONNX Runtime crashed or timed out"
                        : "parity regressed against the criteria");
}

/* --summary FILE: the verdict, the environment, the causes, the first
 * divergent node and the regressions as Markdown, appended. */
static int write_summary(const opts *o, const criteria *c, const meas_result *r, const reglist *l,
                         const drift_list *dl, const onp_causes *cs, const onp_bisect_result *bis,
                         size_t lost)
{
    FILE *f;
    int open_rc = gh_summary_open(o->summary, &f);
    if (open_rc) return open_rc;
    char a[200], b[200];
    fprintf(f, "### onnxparity gate: %s\n\n",
            lost   ? "ERROR (ONNX Runtime crashed or timed out)"
            : l->n ? "FAIL"
                   : "pass");
    fputs("`", f);
    gh_md_text(f, cli_target_name(&o->tg));
    fputs("` against `", f);
    gh_md_text(f, o->criteria);
    fprintf(f,
            "`: %zu fixtures, %zu outputs, %zu regression(s); ONNX Runtime %s (%s, opt-level %s)\n",
            r->n_fix, c->n_out, l->n, r->env.v[ONP_ENV_ORT_VERSION], r->env.v[ONP_ENV_PROVIDER],
            r->env.v[ONP_ENV_OPT_LEVEL]);
    if (dl->n) {
        fprintf(f,
                "\n**Environment** (policy `--env-drift %s`):\n\n"
                "| field | at record time | now | effect |\n|---|---|---|---|\n",
                o->env_fail ? "fail" : "warn");
        for (size_t i = 0; i < dl->n; i++) {
            const onp_env_drift *d = &dl->d[i];
            fprintf(f, "| %s | ", onp_env_field_name(d->field));
            gh_md_text(f, shown_value(d->field, d->recorded, a, sizeof a));
            fputs(" | ", f);
            gh_md_text(f, shown_value(d->field, d->current, b, sizeof b));
            fprintf(f, " | %s |\n", drift_effect(o, d));
        }
    }
    gh_md_causes(f, cs);
    if (bis) {
        const onp_bisect_point *p = &bis->points[bis->first];
        fputs("\n**First divergent node**: `", f);
        gh_md_text(f, p->node[0] ? p->node : "(unnamed)");
        fprintf(f, "` (%s), output `", p->op_type);
        gh_md_text(f, p->value);
        fputs("`\n", f);
    }
    if (l->n) {
        fputs("\n| fixture | output | check | regression |\n|---|---|---|---|\n", f);
        for (size_t q = 0; q < l->n && q < 100; q++) {
            fputs("| ", f);
            gh_md_text(f, l->r[q].fixture ? l->r[q].fixture : "(bundle)");
            fputs(" | ", f);
            gh_md_text(f, l->r[q].output ? l->r[q].output : "");
            fprintf(f, " | %s | ", l->r[q].check);
            gh_md_text(f, l->r[q].msg);
            fputs(" |\n", f);
        }
        if (l->n > 100) fprintf(f, "\n%zu more in the log and the JUnit file.\n", l->n - 100);
    }
    fputc('\n', f);
    return fclose(f) ? EXIT_IO : 0;
}

/* --record --junit: the measured run, each output failing where it fails. */
static int record_junit(const opts *o, const meas_result *r)
{
    reglist l;
    memset(&l, 0, sizeof l);
    for (size_t i = 0; i < r->n_fix; i++)
        for (size_t k = 0; k < r->fix[i].n_out; k++) {
            const onp_output_verdict *x = &r->fix[i].outs[k];
            regression *g;
            if (x->pass || !(g = reg_add(&l, base(r->fix[i].dir), x->name, "parity", NAN, NAN)))
                continue;
            snprintf(g->msg, sizeof g->msg, "%.255s: %s%s%.600s (%.200s)", x->name,
                     onp_verdict_name(x->j.verdict), x->note[0] ? ": " : "", x->note,
                     base(r->fix[i].dir));
        }
    criteria none;
    memset(&none, 0, sizeof none);
    drift_list dl = {.n = 0};
    int rc = write_junit(o, &none, r, &l, &dl);
    reglist_free(&l);
    return rc;
}

int cmd_gate(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) return EXIT_USAGE;
    criteria c;
    memset(&c, 0, sizeof c);
    onp_error e;
    onp_error_clear(&e);
    if (!o.record && criteria_read(o.criteria, &c, &e)) {
        char why[1400];
        if (o.junit)
            junit_write_error("onnxparity gate", "criteria", onp_error_format(&e, why, sizeof why),
                              o.junit);
        return cli_report(&e);
    }
    tol_ctx tc = {&o, o.record ? NULL : &c};
    meas_result r;
    onp_run_opts ro;
    onp_run_opts_init(&ro);
    ro.ort_lib = o.ort.lib;
    ro.session = o.ort.so;
    ro.rtol = o.rtol;
    ro.atol = o.atol;
    ro.tol = tol_for;
    ro.tol_ctx = &tc;
    ro.atol_given = o.atol >= 0;
    int rc = measure_run(&o.ort, &o.tg, &ro, &r);
    if (rc) { /* the run could not start: the upload step still gets a file saying why */
        if (o.junit)
            junit_write_error("onnxparity gate", "run",
                              r.why[0] ? r.why : "the run could not start", o.junit);
        goto out;
    }
    if (o.sarif && (rc = lint_sarif_write(o.sarif, r.model, &r.lint))) goto out;
    if (o.record) {
        rc = record(&o, &r);
        int junit_rc = o.junit ? record_junit(&o, &r) : 0;
        if (junit_rc) rc = junit_rc;
        goto out;
    }
    reglist l;
    memset(&l, 0, sizeof l);
    drift_list dl;
    judge(&c, &r, &l);
    judge_env(&o, &c, &r, &dl, &l);
    /* the first divergent node where a criterion regressed (run.h's plan) */
    const onp_bisect_result *bis = l.n && !o.no_bisect && measure_bisect(&r) ? r.run.bisect : NULL;
    const onp_causes *cs = r.run.causes;
    onp_run_verdict verdict = r.run.lost ? ONP_RUN_ERROR : l.n ? ONP_RUN_FAIL : ONP_RUN_PASS;
    size_t lost = r.run.lost; /* fixtures on which ONNX Runtime crashed or timed out */
    rc = onp_run_exit_code(verdict);
    if (o.fmt == FMT_JSON || o.html) { /* the document: printed, and/or the page */
        cJSON *doc = gate_json(&o, &c, &r, &l, &dl, cs, bis, onp_run_verdict_name(verdict));
        int html_rc = report_emit(doc, o.fmt == FMT_JSON, o.html, o.criteria);
        if (html_rc) rc = html_rc;
    }
    if (o.fmt != FMT_JSON) print_text(&o, &c, &r, &l, &dl, cs, bis, lost);
    if (o.annotations) print_annotations(&o, &r, &l, &dl, cs, lost);
    int sum_rc = o.summary ? write_summary(&o, &c, &r, &l, &dl, cs, bis, lost) : 0;
    if (sum_rc) rc = sum_rc;
    int junit_rc = o.junit ? write_junit(&o, &c, &r, &l, &dl) : 0;
    if (junit_rc) rc = junit_rc;
    reglist_free(&l);
out:
    measure_free(&r);
    criteria_free(&c);
    return rc;
}
