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
#include "junit.h"
#include "measure.h"
#include "onnxparity/buf.h"
#include "ortopts.h"
#include "report.h"

#define CRIT_SCHEMA "onnxparity.criteria/1"
#define MAX_SHAPES 64

/* --- the criteria -------------------------------------------------------- */

typedef struct crit_out {
    char name[256];
    double rtol, atol;
    double top1_min;          /* fraction of rows; < 0: not checked */
    double mismatch_frac_max; /* allowed fraction of elements outside the tolerance */
    double max_abs, needed_rtol, needed_atol; /* limits; < 0: not checked */
    size_t n_shapes;
    int rank[MAX_SHAPES];
    int64_t dims[MAX_SHAPES][ONP_MAX_RANK];
} crit_out;

typedef struct criteria {
    long fixtures; /* at least this many fixtures */
    double margin;
    size_t n_lint;
    char (*lint)[32]; /* [n_lint] rule ids that must have no finding */
    size_t n_out;
    crit_out *outs; /* [n_out] */
} criteria;

static void criteria_free(criteria *c)
{
    free(c->lint);
    free(c->outs);
    memset(c, 0, sizeof *c);
}

static int bad(onp_error *e, const char *file, const char *field, const char *msg)
{
    return onp_error_set(e, ONP_ERR_INPUT, file, field, -1, "%s", msg);
}

/* A finite number >= 0 (or, when allow_null, null -> -1). */
static int get_num(const cJSON *o, const char *key, int allow_null, double *out, const char *file,
                   const char *ctx, onp_error *e)
{
    char field[200];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    snprintf(field, sizeof field, "%s%s", ctx, key);
    if (!v) return bad(e, file, field, "missing");
    if (allow_null && cJSON_IsNull(v)) {
        *out = -1;
        return 0;
    }
    if (!cJSON_IsNumber(v)) return bad(e, file, field, "not a number");
    if (!isfinite(v->valuedouble) || v->valuedouble < 0)
        return bad(e, file, field, "not a finite number >= 0");
    *out = v->valuedouble;
    return 0;
}

static int criteria_read(const char *path, criteria *c, onp_error *e)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f) return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot open the criteria file");
    onp_buf b;
    onp_buf_init(&b, 64u << 20);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) onp_buf_append(&b, chunk, n);
    int rerr = ferror(f);
    fclose(f);
    if (rerr || b.failed) {
        onp_buf_free(&b);
        return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot read the criteria file");
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(b.n ? (const char *)b.p : "", b.n, &end, 0);
    if (!root) {
        int64_t off = end && b.p ? (int64_t)(end - (const char *)b.p) : 0;
        onp_buf_free(&b);
        return onp_error_set(e, ONP_ERR_INPUT, path, NULL, off, "not valid JSON");
    }
    onp_buf_free(&b);
    int rc = -1;
    const cJSON *v, *it;
    char ctx[320];
    if (!cJSON_IsObject(root)) {
        bad(e, path, NULL, "not a JSON object");
        goto out;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, CRIT_SCHEMA)) {
        bad(e, path, "schema", "must be \"" CRIT_SCHEMA "\"");
        goto out;
    }
    double d;
    if (get_num(root, "fixtures", 0, &d, path, "", e)) goto out;
    if (d != floor(d) || d > 1e15) {
        bad(e, path, "fixtures", "not a whole number");
        goto out;
    }
    c->fixtures = (long)d;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "margin")) && !cJSON_IsNull(v) &&
        get_num(root, "margin", 0, &c->margin, path, "", e))
        goto out;
    v = cJSON_GetObjectItemCaseSensitive(root, "lint_clean");
    if (!cJSON_IsArray(v)) {
        bad(e, path, "lint_clean", v ? "not an array" : "missing");
        goto out;
    }
    c->lint = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *c->lint);
    if (!c->lint) goto nomem;
    cJSON_ArrayForEach(it, v)
    {
        snprintf(ctx, sizeof ctx, "lint_clean[%zu]", c->n_lint);
        if (!cJSON_IsString(it) || !onp_lint_rule_find(it->valuestring)) {
            bad(e, path, ctx, cJSON_IsString(it) ? "no lint rule with this id" : "not a string");
            goto out;
        }
        snprintf(c->lint[c->n_lint++], sizeof c->lint[0], "%s",
                 onp_lint_rule_find(it->valuestring)->id);
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "outputs");
    if (!cJSON_IsObject(v)) {
        bad(e, path, "outputs", v ? "not an object" : "missing");
        goto out;
    }
    c->outs = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *c->outs);
    if (!c->outs) goto nomem;
    cJSON_ArrayForEach(it, v)
    {
        crit_out *o = &c->outs[c->n_out];
        snprintf(ctx, sizeof ctx, "outputs.%.200s.", it->string);
        if (!cJSON_IsObject(it)) {
            ctx[strlen(ctx) - 1] = '\0';
            bad(e, path, ctx, "not an object");
            goto out;
        }
        if (strlen(it->string) >= sizeof o->name) {
            bad(e, path, ctx, "output name too long");
            goto out;
        }
        snprintf(o->name, sizeof o->name, "%s", it->string);
        if (get_num(it, "rtol", 0, &o->rtol, path, ctx, e) ||
            get_num(it, "atol", 0, &o->atol, path, ctx, e) ||
            get_num(it, "top1_min", 1, &o->top1_min, path, ctx, e) ||
            get_num(it, "mismatch_frac_max", 0, &o->mismatch_frac_max, path, ctx, e) ||
            get_num(it, "max_abs", 1, &o->max_abs, path, ctx, e) ||
            get_num(it, "needed_rtol", 1, &o->needed_rtol, path, ctx, e) ||
            get_num(it, "needed_atol", 1, &o->needed_atol, path, ctx, e))
            goto out;
        if (o->top1_min > 1 || o->mismatch_frac_max > 1) {
            bad(e, path, ctx, "top1_min and mismatch_frac_max are fractions in [0, 1]");
            goto out;
        }
        const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(it, "shapes"), *sh, *dim;
        char sctx[400];
        snprintf(sctx, sizeof sctx, "%sshapes", ctx);
        if (!cJSON_IsArray(shapes) || cJSON_GetArraySize(shapes) > MAX_SHAPES) {
            bad(e, path, sctx, shapes ? "not an array of at most 64 shapes" : "missing");
            goto out;
        }
        cJSON_ArrayForEach(sh, shapes)
        {
            snprintf(sctx, sizeof sctx, "%sshapes[%zu]", ctx, o->n_shapes);
            if (!cJSON_IsArray(sh) || cJSON_GetArraySize(sh) > ONP_MAX_RANK) {
                bad(e, path, sctx, "not an array of dims");
                goto out;
            }
            int r = 0;
            cJSON_ArrayForEach(dim, sh)
            {
                if (!cJSON_IsNumber(dim) || !isfinite(dim->valuedouble) || dim->valuedouble < 0 ||
                    dim->valuedouble != floor(dim->valuedouble) || dim->valuedouble > 9e15) {
                    bad(e, path, sctx, "a dim is not a whole number >= 0");
                    goto out;
                }
                o->dims[o->n_shapes][r++] = (int64_t)dim->valuedouble;
            }
            o->rank[o->n_shapes++] = r;
        }
        c->n_out++;
    }
    rc = 0;
    goto out;
nomem:
    onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
out:
    cJSON_Delete(root);
    if (rc) criteria_free(c);
    return rc;
}

/* --- options ------------------------------------------------------------- */

typedef struct opts {
    cli_ort ort;
    const char *target, *criteria, *junit;
    int record;
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
        if ((r = cli_opt(argc, argv, &i, "criteria", &v))) {
            if (r < 0) return -1;
            o->criteria = v;
        } else if ((r = cli_opt(argc, argv, &i, "junit", &v))) {
            if (r < 0) return -1;
            o->junit = v;
        } else if ((r = cli_opt(argc, argv, &i, "margin", &v))) {
            if (r < 0 || cli_double(argv[0], "margin", v, &o->margin)) return -1;
            if (o->margin < 1 || !isfinite(o->margin))
                return cli_usage_error(argv[0], "--margin wants a number >= 1, not '%s'", v), -1;
        } else if ((r = cli_tol_format_opt(argc, argv, &i, &o->rtol, &o->atol, &o->fmt))) {
            if (r < 0) return -1;
        } else if (cli_flag(argv, i, "record")) {
            o->record = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error(argv[0], "unknown option '%s'", argv[i]), -1;
        } else if (!o->target) {
            o->target = argv[i];
        } else {
            return cli_usage_error(argv[0], "one target at a time ('%s' is extra)", argv[i]), -1;
        }
    }
    if (!o->target || !o->criteria)
        return cli_usage_error(argv[0], "usage: onnxparity gate TARGET --criteria FILE [--record "
                                        "[--margin M]]"),
               -1;
    return 0;
}

typedef struct tol_ctx {
    const opts *o;
    const criteria *c; /* NULL when recording */
} tol_ctx;

static const crit_out *crit_find(const criteria *c, const char *name)
{
    for (size_t i = 0; c && i < c->n_out; i++)
        if (!strcmp(c->outs[i].name, name)) return &c->outs[i];
    return NULL;
}

static onp_tol tol_for(void *ctx, const char *name, int32_t dtype)
{
    const tol_ctx *t = ctx;
    const crit_out *co = crit_find(t->c, name);
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
        report_num(o, key, measured * margin);
    else
        cJSON_AddNullToObject(o, key); /* inf needed_rtol: no limit can be recorded */
}

static int record(const opts *o, const meas_result *r)
{
    for (size_t i = 0; i < r->n_fix; i++)
        if (r->fix[i].error) {
            fprintf(stderr,
                    "onnxparity gate: %s: %s: not recording criteria for a bundle that "
                    "does not run\n",
                    r->fix[i].dir, r->fix[i].msg);
            return EXIT_FAIL;
        }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", CRIT_SCHEMA);
    cJSON_AddStringToObject(root, "model_sha256", r->sha256);
    report_num(root, "margin", o->margin);
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
            const meas_out *x = &r->fix[i].outs[k];
            if (!x->compared || cJSON_GetObjectItemCaseSensitive(outs, x->name)) continue;
            double max_abs = 0, max_rel = 0, nr = 0, na = 0, mf = 0;
            int64_t rows = 0, agree = 0;
            cJSON *oj = cJSON_AddObjectToObject(outs, x->name), *shapes;
            report_num(oj, "rtol", x->m.tol.rtol);
            report_num(oj, "atol", x->m.tol.atol);
            shapes = cJSON_CreateArray();
            for (size_t j = i; j < r->n_fix; j++)
                for (size_t q = 0; q < r->fix[j].n_out; q++) {
                    const meas_out *y = &r->fix[j].outs[q];
                    if (!y->compared || strcmp(y->name, x->name)) continue;
                    max_abs = fmax(max_abs, y->m.max_abs);
                    max_rel = fmax(max_rel, y->m.max_rel);
                    nr = isinf(y->m.needed_rtol) ? INFINITY : fmax(nr, y->m.needed_rtol);
                    na = fmax(na, y->m.needed_atol);
                    mf = fmax(mf, y->m.mismatch_frac);
                    if (y->has_topk) rows += y->tk.rows, agree += y->tk.top1_agree;
                    cJSON *sh = cJSON_CreateArray();
                    for (int d = 0; d < y->rank; d++)
                        cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)y->dims[d]));
                    int dup = 0;
                    const cJSON *prev;
                    cJSON_ArrayForEach(prev, shapes) dup |= cJSON_Compare(prev, sh, 1);
                    if (dup || cJSON_GetArraySize(shapes) >= MAX_SHAPES)
                        cJSON_Delete(sh);
                    else
                        cJSON_AddItemToArray(shapes, sh);
                }
            if (rows)
                report_num(oj, "top1_min", (double)agree / (double)rows);
            else
                cJSON_AddNullToObject(oj, "top1_min");
            report_num(oj, "mismatch_frac_max", mf);
            cJSON_AddItemToObject(oj, "shapes", shapes);
            limit_num(oj, "max_abs", max_abs, o->margin);
            limit_num(oj, "needed_rtol", nr, o->margin);
            limit_num(oj, "needed_atol", na, o->margin);
            cJSON *meas = cJSON_AddObjectToObject(oj, "measured");
            report_num(meas, "max_abs", max_abs);
            report_num(meas, "max_rel", max_rel);
            report_num(meas, "needed_rtol", nr);
            report_num(meas, "needed_atol", na);
        }
    char *txt = cJSON_Print(root);
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
    free(txt);
    cJSON_Delete(root);
    if (!rc)
        printf("recorded %s: %zu fixtures, margin %g, model sha256 %.12s\n", o->criteria, r->n_fix,
               o->margin, r->sha256);
    return rc;
}

/* --- judge --------------------------------------------------------------- */

typedef struct regression {
    const char *fixture; /* folder name, or NULL for a bundle-wide check */
    const char *output;  /* or NULL */
    char check[32];
    double value, limit;
    char msg[1200];
} regression;

typedef struct reglist {
    regression *r;
    size_t n, cap;
} reglist;

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
    char a[16], b[16];
    regression *g = reg_add(l, fx, out, check, v, lim);
    if (g)
        snprintf(g->msg, sizeof g->msg, "%s: %s %s > %s %s (%s)", out, check,
                 report_fmt(v, a, sizeof a), what, report_fmt(lim, b, sizeof b), fx);
}

static void judge(const criteria *c, const meas_result *r, reglist *l)
{
    regression *g;
    char a[16], b[16];
    if ((long)r->n_fix < c->fixtures &&
        (g = reg_add(l, NULL, NULL, "fixtures", (double)r->n_fix, (double)c->fixtures)))
        snprintf(g->msg, sizeof g->msg, "fixtures: %zu present, criteria require %ld", r->n_fix,
                 c->fixtures);
    for (size_t i = 0; i < r->n_fix; i++) {
        const meas_fixture *f = &r->fix[i];
        if (f->error && (g = reg_add(l, base(f->dir), NULL, "error", NAN, NAN)))
            snprintf(g->msg, sizeof g->msg, "%.200s: does not run: %.900s", base(f->dir), f->msg);
        for (size_t k = 0; !f->error && k < f->n_out; k++) {
            const meas_out *x = &f->outs[k];
            const crit_out *co = crit_find(c, x->name);
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
            if (!(x->m.mismatch_frac <= co->mismatch_frac_max))
                reg_limit(l, base(f->dir), x->name, "mismatch_frac", x->m.mismatch_frac,
                          co->mismatch_frac_max, "allowed");
            if (co->max_abs >= 0 && !(x->m.max_abs <= co->max_abs))
                reg_limit(l, base(f->dir), x->name, "max_abs", x->m.max_abs, co->max_abs,
                          "recorded limit");
            if (co->needed_rtol >= 0 && !(x->m.needed_rtol <= co->needed_rtol))
                reg_limit(l, base(f->dir), x->name, "needed_rtol", x->m.needed_rtol,
                          co->needed_rtol, "recorded limit");
            if (co->needed_atol >= 0 && !(x->m.needed_atol <= co->needed_atol))
                reg_limit(l, base(f->dir), x->name, "needed_atol", x->m.needed_atol,
                          co->needed_atol, "recorded limit");
        }
    }
    for (size_t o = 0; o < c->n_out; o++) {
        const crit_out *co = &c->outs[o];
        int64_t rows = 0, agree = 0;
        size_t seen = 0;
        int have[MAX_SHAPES] = {0};
        for (size_t i = 0; i < r->n_fix; i++)
            for (size_t k = 0; k < r->fix[i].n_out; k++) {
                const meas_out *x = &r->fix[i].outs[k];
                if (strcmp(x->name, co->name)) continue;
                seen++;
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
        for (size_t s = 0; s < co->n_shapes; s++)
            if (!have[s] && (g = reg_add(l, NULL, co->name, "shapes", NAN, NAN))) {
                char sh[256];
                onp_shape_str(co->rank[s], co->dims[s], sh, sizeof sh);
                snprintf(g->msg, sizeof g->msg,
                         "%s: no fixture with shape %s (criteria require it)", co->name, sh);
            }
        if (co->top1_min >= 0) {
            double frac = rows ? (double)agree / (double)rows : 0;
            if (frac < co->top1_min && (g = reg_add(l, NULL, co->name, "top1", frac, co->top1_min)))
                snprintf(g->msg, sizeof g->msg,
                         "%s: top-1 agreement %s (%lld/%lld rows) < recorded floor %s", co->name,
                         report_fmt(frac, a, sizeof a), (long long)agree, (long long)rows,
                         report_fmt(co->top1_min, b, sizeof b));
        }
    }
    for (size_t k = 0; k < c->n_lint; k++) {
        size_t hits = 0;
        const onp_lint_finding *first = NULL;
        for (size_t i = 0; i < r->lint.n; i++)
            if (!strcmp(r->lint.findings[i].rule->id, c->lint[k])) {
                if (!hits++) first = &r->lint.findings[i];
            }
        if (hits && (g = reg_add(l, NULL, NULL, "lint", (double)hits, 0)))
            snprintf(g->msg, sizeof g->msg, "lint %s %s: %zu finding(s), first at %s: %s",
                     first->rule->id, first->rule->name, hits,
                     first->loc.name[0] ? first->loc.name : "(model)", first->message);
    }
}

static int write_junit(const opts *o, const meas_result *r, const reglist *l)
{
    junit j;
    junit_init(&j);
    for (size_t i = 0; i < r->n_fix; i++) {
        const meas_fixture *f = &r->fix[i];
        for (size_t k = 0; k < f->n_out; k++) {
            const meas_out *x = &f->outs[k];
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
            junit_case(&j, base(f->dir), x->name, f->error ? JUNIT_ERROR : JUNIT_FAIL, msg,
                       txt[0] ? txt : msg);
        }
    }
    for (size_t q = 0; q < l->n; q++)
        if (!l->r[q].fixture)
            junit_case(&j, "criteria", l->r[q].output ? l->r[q].output : l->r[q].check, JUNIT_FAIL,
                       l->r[q].msg, NULL);
    onp_error e;
    onp_error_clear(&e);
    int rc = junit_write(&j, "onnxparity gate", o->junit, &e) ? cli_report(&e) : 0;
    junit_free(&j);
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
    if (!o.record && criteria_read(o.criteria, &c, &e)) return cli_report(&e);
    tol_ctx tc = {&o, o.record ? NULL : &c};
    meas_result r;
    int rc = measure_run(&o.ort, o.target, tol_for, &tc, &r);
    if (rc) goto out;
    if (o.record) {
        rc = record(&o, &r);
        goto out;
    }
    reglist l = {NULL, 0, 0};
    judge(&c, &r, &l);
    if (o.fmt == FMT_JSON) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "schema", "onnxparity.gate/1");
        cJSON_AddStringToObject(root, "verdict", l.n ? "fail" : "pass");
        cJSON_AddStringToObject(root, "model", r.model);
        cJSON_AddStringToObject(root, "criteria", o.criteria);
        cJSON_AddItemToObject(root, "environment", r.environment);
        r.environment = NULL;
        cJSON *arr = cJSON_AddArrayToObject(root, "regressions");
        for (size_t q = 0; q < l.n; q++) {
            cJSON *g = cJSON_CreateObject();
            const regression *x = &l.r[q];
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
                report_num(g, "value", x->value);
            if (isnan(x->limit))
                cJSON_AddNullToObject(g, "limit");
            else
                report_num(g, "limit", x->limit);
            cJSON_AddStringToObject(g, "message", x->msg);
            cJSON_AddItemToArray(arr, g);
        }
        cJSON *sum = cJSON_AddObjectToObject(root, "summary");
        cJSON_AddNumberToObject(sum, "fixtures", (double)r.n_fix);
        cJSON_AddNumberToObject(sum, "outputs", (double)c.n_out);
        cJSON_AddNumberToObject(sum, "regressions", (double)l.n);
        report_print_json(root);
    } else {
        printf("gate     %s against %s (model sha256 %.12s)\n", o.target, o.criteria, r.sha256);
        for (size_t q = 0; q < l.n; q++) printf("regressed: %s\n", l.r[q].msg);
        if (l.n)
            printf("verdict: FAIL — %zu regression(s) against %s\n", l.n, o.criteria);
        else
            printf("verdict: pass — %zu fixtures, %zu outputs within the criteria of %s\n", r.n_fix,
                   c.n_out, o.criteria);
    }
    rc = l.n ? EXIT_FAIL : EXIT_PASS;
    if (o.junit && write_junit(&o, &r, &l)) rc = EXIT_IO;
    free(l.r);
out:
    measure_free(&r);
    criteria_free(&c);
    return rc;
}
