/*
 * cmd_gate.c — `onnxparity gate TARGET --criteria FILE [--record [--margin M]]`:
 * parity as a CI gate against recorded release criteria (docs/gate.md).
 *
 * --record measures the bundle (every fixture, as check does) and writes the
 * criteria file atomically; without --record the criteria are read
 * (strictly: a malformed file is exit 2 naming the file and the field or
 * byte) and every regression against them is printed.  What is recorded,
 * the limits, the regression rules, the drift policy and the verdict are
 * the library's (include/onnxparity/gate.h); this file parses the command
 * line, runs the bundle (measure.c), calls them, and formats the result as
 * text, JSON, JUnit, a Markdown summary, workflow annotations and HTML.
 *
 * Exit: 0 nothing regressed (or recorded), 1 something regressed, 2 bad
 * usage or a malformed criteria file, 3 unreadable files, 4 ORT failure.
 */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ghactions.h"
#include "infile.h"
#include "junit.h"
#include "measure.h"
#include "onnxparity/bisect.h"
#include "onnxparity/buf.h"
#include "onnxparity/causes.h"
#include "onnxparity/doc.h"
#include "onnxparity/env.h"
#include "onnxparity/gate.h"
#include "ortopts.h"
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
    onp_gate_drift_policy drift; /* --env-drift warn|fail */
    int env_given;               /* --env-drift seen */
    int no_bisect;               /* --no-bisect: no first divergent node on a failing gate */
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
            if (onp_gate_drift_policy_from_name(v, &o->drift))
                return cli_usage_error(argv[0], "--env-drift wants warn or fail, not '%s'", v), -1;
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

/* --- record -------------------------------------------------------------- */

/* Why the run is not recorded (gate.h's refusal), one line on stderr. */
static void print_refusal(const meas_result *r, const onp_gate_refusal_why *w)
{
    const char *again = "fix the export, or pass --allow-failing to record a failing baseline on "
                        "purpose";
    if (w->why == ONP_GATE_REFUSE_NOT_RUNNING) {
        fprintf(stderr,
                "onnxparity gate: %s: %s: not recording criteria for a bundle that does not run\n",
                w->fixture->dir, w->fixture->msg);
    } else if (w->why == ONP_GATE_REFUSE_FAILING) {
        const onp_output_verdict *fo = w->output;
        char ga[16], en[16];
        fprintf(stderr,
                "onnxparity gate: not recording criteria: %zu of %zu fixtures fail (first: %s, "
                "output %s: %s%s%s, max_abs %s, noise envelope %s); %s\n",
                w->failing, r->n_fix, onp_gate_fixture_name(w->fixture->dir), fo ? fo->name : "?",
                fo ? onp_verdict_name(fo->j.verdict) : "?", fo && fo->note[0] ? ", " : "",
                fo ? fo->note : "", report_fmt(fo ? fo->m.max_abs : NAN, ga, sizeof ga),
                report_fmt(fo ? fo->j.envelope_max : NAN, en, sizeof en), again);
    } else if (w->why == ONP_GATE_REFUSE_LINT) {
        const onp_lint_finding *f = w->finding;
        fprintf(stderr,
                "onnxparity gate: not recording criteria: %zu error-level lint finding(s) (first: "
                "%s %s at %s); %s\n",
                w->lint_errors, f->rule->id, f->rule->name,
                f->loc.name && f->loc.name[0] ? f->loc.name : "(model)", again);
    }
}

/* --record over an existing criteria file: one line per limit that
 * changes, "limit    OUTPUT.FIELD: OLD -> NEW", so that a re-record on
 * purpose shows what it loosens or tightens. */
static void limit_diff(FILE *to, const onp_criteria *old, const onp_criteria *now)
{
    static const char *const keys[] = {"rtol",    "atol",        "top1_min",    "mismatch_frac_max",
                                       "max_abs", "needed_rtol", "needed_atol", "envelope_max"};
    for (size_t i = 0; i < now->n_out; i++) {
        const onp_crit_out *cn = &now->outs[i], *co = onp_criteria_find(old, cn->name);
        if (!co) {
            fprintf(to, "limit    %s: new output (not in the old criteria)\n", cn->name);
            continue;
        }
        const double was[] = {co->rtol,    co->atol,        co->top1_min,    co->mismatch_frac_max,
                              co->max_abs, co->needed_rtol, co->needed_atol, co->envelope_max};
        const double is[] = {cn->rtol,    cn->atol,        cn->top1_min,    cn->mismatch_frac_max,
                             cn->max_abs, cn->needed_rtol, cn->needed_atol, cn->envelope_max};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            char a[32], b[32];
            if (is[k] == was[k]) continue;
            snprintf(a, sizeof a, "%.9g", was[k]);
            snprintf(b, sizeof b, "%.9g", is[k]);
            fprintf(to, "limit    %s.%s: %s -> %s\n", cn->name, keys[k], was[k] < 0 ? "null" : a,
                    is[k] < 0 ? "null" : b);
        }
    }
    for (size_t i = 0; i < old->n_out; i++)
        if (!onp_criteria_find(now, old->outs[i].name))
            fprintf(to, "limit    %s: no longer recorded (not in the bundle)\n", old->outs[i].name);
}

/* The criteria already at `path`, if any, for limit_diff.  Read with plain
 * stdio, not cli_read_file: that would note the file as an input, and the
 * output rule would then refuse to replace it.  Only a regular file of at
 * most ONP_CRITERIA_MAX_FILE bytes, opened without blocking: a FIFO, a
 * device or >(cmd) given as --criteria is an output, never read (a FIFO
 * blocked in open(), /dev/full was read for ever).  0 when *old holds them. */
static int read_old(const char *path, onp_criteria *old)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    struct stat st;
    FILE *f = NULL;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > (off_t)ONP_CRITERIA_MAX_FILE ||
        !(f = fdopen(fd, "rb"))) {
        close(fd);
        return -1;
    }
    onp_buf b;
    onp_buf_init(&b, ONP_CRITERIA_MAX_FILE);
    char chunk[65536];
    size_t n;
    while (!b.failed && (n = fread(chunk, 1, sizeof chunk, f)) > 0) onp_buf_append(&b, chunk, n);
    int bad = ferror(f) || b.failed;
    fclose(f);
    onp_error e;
    onp_error_clear(&e);
    int rc = bad ? -1 : onp_criteria_parse((const char *)b.p, b.n, path, old, &e);
    onp_buf_free(&b);
    return rc;
}

/* The criteria file at `path` (regular files only, at most
 * ONP_CRITERIA_MAX_FILE bytes), parsed by the library. */
static int read_criteria(const char *path, onp_criteria *c, onp_error *e)
{
    memset(c, 0, sizeof *c);
    onp_buf b;
    int rc = cli_read_file(path, ONP_CRITERIA_MAX_FILE, " the criteria file", &b, e);
    if (!rc) rc = onp_criteria_parse((const char *)b.p, b.n, path, c, e);
    onp_buf_free(&b);
    return rc;
}

/* --record: the criteria the library records from the run, written to
 * o->criteria (after the limits that move, when one is there). */
static int record(const opts *o, const meas_result *r)
{
    onp_gate_refusal_why why;
    onp_run_verdict v = onp_gate_recordable(&r->run, &r->lint, o->allow_failing, &why);
    if (v != ONP_RUN_PASS) {
        print_refusal(r, &why);
        return onp_run_exit_code(v);
    }
    onp_criteria rec, old;
    onp_error e;
    onp_error_clear(&e);
    if (onp_gate_record(&r->run, &r->lint, r->sha256, o->margin, &rec, &e)) return cli_report(&e);
    cJSON *root = onp_criteria_to_json(&rec);
    if (!root) {
        onp_criteria_free(&rec);
        return cli_usage_error("gate", "out of memory");
    }
    if (!read_old(o->criteria, &old)) { /* re-recording: say what moves */
        limit_diff(o->fmt == FMT_JSON ? stderr : stdout, &old, &rec);
        onp_criteria_free(&old);
    }
    onp_criteria_free(&rec);
    char *txt = onp_doc_print(root);
    onp_buf b;
    onp_buf_init(&b, 0);
    if (txt) onp_buf_append(&b, txt, strlen(txt)), onp_buf_append(&b, "\n", 1);
    int rc = 0;
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

/* --- writers ------------------------------------------------------------- */

/* The JUnit name of a bundle-wide regression: "CHECK[ OUTPUT][ ITEM]". */
static void bundle_case_name(const onp_gate_regression *x, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s%s%s", x->check, x->output ? " " : "", x->output ? x->output : "",
             x->item[0] ? " " : "", x->item);
}

/* The regressions of fixture `fx`, output `out`, joined by "; " into msg. */
static void output_regressions(const onp_gate_result *g, const char *fx, const char *out, char *msg,
                               size_t n)
{
    msg[0] = '\0';
    for (size_t q = 0; q < g->n_reg; q++) {
        const onp_gate_regression *x = &g->reg[q];
        if (!x->fixture || strcmp(x->fixture, fx) || (x->output && strcmp(x->output, out)))
            continue;
        snprintf(msg + strlen(msg), n - strlen(msg), "%s%s", msg[0] ? "; " : "", x->msg);
    }
}

/* One testcase per fixture x output (failing when a regression names it),
 * one per environment field recorded (failing, or passing with the drift in
 * system-out), one per other bundle-wide regression; the environment and
 * the policy as properties. */
static int write_junit(const opts *o, const onp_criteria *c, const meas_result *r,
                       const onp_gate_result *g)
{
    junit j;
    junit_init(&j);
    junit_env_properties(&j, &r->env);
    junit_property(&j, "env_drift_policy", onp_gate_drift_policy_name(g->policy));
    for (size_t i = 0; i < r->n_fix; i++) {
        const onp_fixture_verdict *f = &r->fix[i];
        const char *fx = onp_gate_fixture_name(f->dir);
        junit_set_time(&j, r->secs ? r->secs[i] / (double)(f->n_out ? f->n_out : 1) : 0);
        if (f->status == ONP_FIXTURE_ERROR && !f->n_out)
            junit_case(&j, fx, "(fixture)", JUNIT_ERROR, f->msg, NULL);
        for (size_t k = 0; k < f->n_out; k++) {
            const onp_output_verdict *x = &f->outs[k];
            char msg[2048], txt[4096] = "";
            output_regressions(g, fx, x->name, msg, sizeof msg);
            if (!msg[0]) {
                junit_case(&j, fx, x->name, JUNIT_PASS, NULL, NULL);
                continue;
            }
            if (x->compared) junit_metrics_text(&x->m, txt, sizeof txt);
            junit_case(&j, fx, x->name, f->status == ONP_FIXTURE_ERROR ? JUNIT_ERROR : JUNIT_FAIL,
                       msg, txt[0] ? txt : msg);
        }
    }
    junit_set_time(&j, 0);
    for (int fld = 0; c->has_env && fld < ONP_ENV_FIELD_COUNT; fld++) {
        if (!c->env.v[fld][0]) continue; /* not recorded: not compared */
        const onp_env_drift *d = NULL;
        for (size_t i = 0; i < g->n_drift; i++)
            if ((int)g->drift[i].field == fld) d = &g->drift[i];
        char t[900], m[1000];
        if (!d) {
            junit_case(&j, "environment", onp_env_field_name((onp_env_field)fld), JUNIT_PASS, NULL,
                       NULL);
            continue;
        }
        onp_drift_effect eff = onp_gate_drift_effect(d, g->policy);
        onp_gate_drift_text(d, t, sizeof t);
        snprintf(m, sizeof m, "%s: %s", onp_drift_effect_name(eff), t);
        junit_case(&j, "environment", onp_env_field_name(d->field),
                   eff == ONP_DRIFT_EFFECT_FAILURE ? JUNIT_FAIL : JUNIT_WARN, m, m);
    }
    for (size_t q = 0; q < g->n_reg; q++) {
        char name[400];
        if (g->reg[q].fixture || !strcmp(g->reg[q].check, "environment")) continue;
        bundle_case_name(&g->reg[q], name, sizeof name);
        junit_case(&j, "criteria", name, JUNIT_FAIL, g->reg[q].msg, NULL);
    }
    onp_error e;
    onp_error_clear(&e);
    int rc = junit_write(&j, "onnxparity gate", o->junit, &e) ? cli_report(&e) : 0;
    junit_free(&j);
    return rc;
}

static cJSON *drift_json(const onp_gate_result *g)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < g->n_drift; i++) {
        const onp_env_drift *d = &g->drift[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "field", onp_env_field_name(d->field));
        cJSON_AddStringToObject(x, "kind", onp_drift_kind_name(d->kind));
        cJSON_AddStringToObject(x, "recorded", d->recorded);
        if (d->current[0])
            cJSON_AddStringToObject(x, "current", d->current);
        else
            cJSON_AddNullToObject(x, "current");
        cJSON_AddStringToObject(x, "effect",
                                onp_drift_effect_name(onp_gate_drift_effect(d, g->policy)));
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

/* "checks": every criterion judged, the worst value against its limit. */
static cJSON *checks_json(const onp_gate_result *g)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < g->n_checks; i++) {
        const onp_gate_check *k = &g->checks[i];
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
        double mg = onp_gate_margin(k);
        if (isnan(mg))
            cJSON_AddNullToObject(x, "margin");
        else
            onp_doc_num(x, "margin", mg);
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

/* "regressions": each with its fixture, output, check, numbers, message. */
static cJSON *regressions_json(const onp_gate_result *g)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t q = 0; q < g->n_reg; q++) {
        cJSON *j = cJSON_CreateObject();
        const onp_gate_regression *x = &g->reg[q];
        if (x->fixture)
            cJSON_AddStringToObject(j, "fixture", x->fixture);
        else
            cJSON_AddNullToObject(j, "fixture");
        if (x->output)
            cJSON_AddStringToObject(j, "output", x->output);
        else
            cJSON_AddNullToObject(j, "output");
        cJSON_AddStringToObject(j, "check", x->check);
        if (isnan(x->value))
            cJSON_AddNullToObject(j, "value");
        else
            onp_doc_num(j, "value", x->value);
        if (isnan(x->limit))
            cJSON_AddNullToObject(j, "limit");
        else
            onp_doc_num(j, "limit", x->limit);
        cJSON_AddStringToObject(j, "message", x->msg);
        cJSON_AddItemToArray(arr, j);
    }
    return arr;
}

/* The result document (onnxparity.gate/1, docs/gate.md); takes
 * r->environment.  The caller owns it. */
static cJSON *gate_json(const opts *o, const onp_criteria *c, meas_result *r,
                        const onp_gate_result *g, const onp_causes *cs,
                        const onp_bisect_result *bis)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.gate/1");
    cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(g->verdict));
    cJSON_AddStringToObject(root, "model", r->model);
    cJSON_AddStringToObject(root, "criteria", o->criteria);
    cJSON_AddItemToObject(root, "environment", r->environment);
    r->environment = NULL;
    cJSON_AddBoolToObject(root, "environment_recorded", c->has_env);
    cJSON_AddStringToObject(root, "env_drift_policy", onp_gate_drift_policy_name(g->policy));
    cJSON_AddItemToObject(root, "environment_drift", drift_json(g));
    cJSON_AddItemToObject(root, "causes", onp_doc_causes(cs));
    if (bis)
        cJSON_AddItemToObject(root, "first_divergent", onp_doc_first_divergent(bis));
    else
        cJSON_AddNullToObject(root, "first_divergent");
    cJSON_AddItemToObject(root, "regressions", regressions_json(g));
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "fixtures", (double)r->n_fix);
    cJSON_AddNumberToObject(sum, "outputs", (double)c->n_out);
    cJSON_AddNumberToObject(sum, "regressions", (double)g->n_reg);
    cJSON_AddItemToObject(root, "checks", checks_json(g));
    /* the run's fixtures as check's document has them: the page draws the
     * same tables and plots */
    cJSON_AddItemToObject(root, "fixtures", onp_doc_fixtures(r->fix, r->n_fix));
    return root;
}

/* The text: the run, the environment against the recorded one, the causes
 * and the first divergent node (as check derives them), the regressions,
 * the verdict. */
static void print_text(const opts *o, const onp_criteria *c, const meas_result *r,
                       const onp_gate_result *g, const onp_causes *cs, const onp_bisect_result *bis)
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
    for (size_t i = 0; i < g->n_drift; i++) {
        onp_drift_effect eff = onp_gate_drift_effect(&g->drift[i], g->policy);
        onp_gate_drift_text(&g->drift[i], t, sizeof t);
        if (eff == ONP_DRIFT_EFFECT_NOTE) {
            printf("note     %s (a re-export changes it)\n", t);
        } else {
            drifted++;
            printf("drift    %s (%s%s)\n", t, onp_drift_effect_name(eff),
                   eff == ONP_DRIFT_EFFECT_WARNING ? "; --env-drift fail makes it a regression"
                                                   : "");
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
    for (size_t q = 0; q < g->n_reg; q++) printf("regressed: %s\n", g->reg[q].msg);
    if (g->verdict == ONP_RUN_ERROR)
        printf("verdict: ERROR — ONNX Runtime crashed or timed out on %zu fixture(s)\n", g->lost);
    else if (g->verdict == ONP_RUN_FAIL)
        printf("verdict: FAIL — %zu regression(s) against %s\n", g->n_reg, o->criteria);
    else
        printf("verdict: pass — %zu fixtures, %zu outputs within the criteria of %s%s\n", r->n_fix,
               c->n_out, o->criteria, drifted ? " (see the drift lines above)" : "");
}

/* --annotations: the causes, each drift that warns or fails, each
 * regression (at most 50) as workflow commands; then the verdict. */
static void print_annotations(const opts *o, const meas_result *r, const onp_gate_result *g,
                              const onp_causes *cs)
{
    char t[900], title[200];
    gh_causes_commands(stdout, cs, r->model);
    for (size_t i = 0; i < g->n_drift; i++) {
        onp_drift_effect eff = onp_gate_drift_effect(&g->drift[i], g->policy);
        if (eff == ONP_DRIFT_EFFECT_NOTE) continue;
        onp_gate_drift_text(&g->drift[i], t, sizeof t);
        gh_command(stdout, eff == ONP_DRIFT_EFFECT_FAILURE ? "error" : "warning", o->criteria,
                   "onnxparity gate: environment drift", t);
    }
    for (size_t q = 0; q < g->n_reg && q < 50; q++) {
        if (!strcmp(g->reg[q].check, "environment")) continue; /* said above */
        snprintf(title, sizeof title, "onnxparity gate: regressed (%s)", g->reg[q].check);
        gh_command(stdout, "error", r->model, title, g->reg[q].msg);
    }
    if (g->verdict != ONP_RUN_PASS)
        gh_command(stdout, "error", NULL, "onnxparity gate",
                   g->verdict == ONP_RUN_ERROR ? "ONNX Runtime crashed or timed out"
                                               : "parity regressed against the criteria");
}

/* --summary FILE: the verdict, the environment, the causes, the first
 * divergent node and the regressions as Markdown, appended. */
static int write_summary(const opts *o, const onp_criteria *c, const meas_result *r,
                         const onp_gate_result *g, const onp_causes *cs,
                         const onp_bisect_result *bis)
{
    FILE *f;
    int open_rc = gh_summary_open(o->summary, &f);
    if (open_rc) return open_rc;
    char a[200], b[200];
    fprintf(f, "### onnxparity gate: %s\n\n",
            g->verdict == ONP_RUN_ERROR ? "ERROR (ONNX Runtime crashed or timed out)"
                                        : report_verdict_word(g->verdict));
    fputs("`", f);
    gh_md_text(f, cli_target_name(&o->tg));
    fputs("` against `", f);
    gh_md_text(f, o->criteria);
    fprintf(f,
            "`: %zu fixtures, %zu outputs, %zu regression(s); ONNX Runtime %s (%s, opt-level %s)\n",
            r->n_fix, c->n_out, g->n_reg, r->env.v[ONP_ENV_ORT_VERSION], r->env.v[ONP_ENV_PROVIDER],
            r->env.v[ONP_ENV_OPT_LEVEL]);
    if (g->n_drift) {
        fprintf(f,
                "\n**Environment** (policy `--env-drift %s`):\n\n"
                "| field | at record time | now | effect |\n|---|---|---|---|\n",
                onp_gate_drift_policy_name(g->policy));
        for (size_t i = 0; i < g->n_drift; i++) {
            const onp_env_drift *d = &g->drift[i];
            fprintf(f, "| %s | ", onp_env_field_name(d->field));
            gh_md_text(f, onp_gate_env_shown(d->field, d->recorded, a, sizeof a));
            fputs(" | ", f);
            gh_md_text(f, onp_gate_env_shown(d->field, d->current, b, sizeof b));
            fprintf(f, " | %s |\n", onp_drift_effect_name(onp_gate_drift_effect(d, g->policy)));
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
    if (g->n_reg) {
        fputs("\n| fixture | output | check | regression |\n|---|---|---|---|\n", f);
        for (size_t q = 0; q < g->n_reg && q < 100; q++) {
            fputs("| ", f);
            gh_md_text(f, g->reg[q].fixture ? g->reg[q].fixture : "(bundle)");
            fputs(" | ", f);
            gh_md_text(f, g->reg[q].output ? g->reg[q].output : "");
            fprintf(f, " | %s | ", g->reg[q].check);
            gh_md_text(f, g->reg[q].msg);
            fputs(" |\n", f);
        }
        if (g->n_reg > 100)
            fprintf(f, "\n%zu more in the log and the JUnit file.\n", g->n_reg - 100);
    }
    fputc('\n', f);
    return fclose(f) ? EXIT_IO : 0;
}

/* --record --junit: the measured run, each output failing where it fails. */
static int record_junit(const opts *o, const meas_result *r)
{
    onp_gate_result g;
    onp_error e;
    onp_error_clear(&e);
    int rc = onp_gate_record_failures(&r->run, &g, &e) ? cli_report(&e) : 0;
    onp_criteria none;
    memset(&none, 0, sizeof none);
    g.policy = o->drift;
    if (!rc) rc = write_junit(o, &none, r, &g);
    onp_gate_result_release(&g);
    return rc;
}

/* Gating: judge the run against c (the library's rules), bisect where a
 * criterion regressed, and write every output asked for.  The exit code. */
static int gate(const opts *o, const onp_criteria *c, meas_result *r)
{
    onp_gate_result g;
    onp_error e;
    onp_error_clear(&e);
    if (onp_gate_judge(c, &r->run, &r->lint, o->drift, &g, &e)) {
        onp_gate_result_release(&g);
        return cli_report(&e);
    }
    /* the first divergent node where a criterion regressed (run.h's plan) */
    const onp_bisect_result *bis =
        g.n_reg && !o->no_bisect && measure_bisect(r) ? r->run.bisect : NULL;
    const onp_causes *cs = r->run.causes;
    int rc = onp_run_exit_code(g.verdict);
    if (o->fmt == FMT_JSON || o->html) { /* the document: printed, and/or the page */
        cJSON *doc = gate_json(o, c, r, &g, cs, bis);
        int html_rc = report_emit(doc, o->fmt == FMT_JSON, o->html, o->criteria);
        if (html_rc) rc = html_rc;
    }
    if (o->fmt != FMT_JSON) print_text(o, c, r, &g, cs, bis);
    if (o->annotations) print_annotations(o, r, &g, cs);
    int sum_rc = o->summary ? write_summary(o, c, r, &g, cs, bis) : 0;
    if (sum_rc) rc = sum_rc;
    int junit_rc = o->junit ? write_junit(o, c, r, &g) : 0;
    if (junit_rc) rc = junit_rc;
    onp_gate_result_release(&g);
    return rc;
}

int cmd_gate(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) return EXIT_USAGE;
    onp_criteria c;
    memset(&c, 0, sizeof c);
    onp_error e;
    onp_error_clear(&e);
    if (!o.record && read_criteria(o.criteria, &c, &e)) {
        char why[1400];
        if (o.junit)
            junit_write_error("onnxparity gate", "criteria", onp_error_format(&e, why, sizeof why),
                              o.junit);
        return cli_report(&e);
    }
    /* the tolerances: the criteria's when gating, --rtol/--atol when recording */
    onp_gate_tol_ctx tc = {o.record ? NULL : &c, o.rtol, o.atol};
    meas_result r;
    onp_run_opts ro;
    onp_run_opts_init(&ro);
    ro.ort_lib = o.ort.lib;
    ro.session = o.ort.so;
    ro.rtol = o.rtol;
    ro.atol = o.atol;
    ro.tol = onp_gate_tol_fn;
    ro.tol_ctx = &tc;
    ro.atol_given = o.atol >= 0;
    int rc = measure_run(&o.ort, &o.tg, &ro, &r);
    if (rc) { /* the run could not start: the upload step still gets a file saying why */
        if (o.junit)
            junit_write_error("onnxparity gate", "run",
                              r.why[0] ? r.why : "the run could not start", o.junit);
    } else if (o.sarif && (rc = lint_sarif_write(o.sarif, r.model, &r.lint))) {
        /* said */
    } else if (o.record) {
        rc = record(&o, &r);
        int junit_rc = o.junit ? record_junit(&o, &r) : 0;
        if (junit_rc) rc = junit_rc;
    } else {
        rc = gate(&o, &c, &r);
    }
    measure_free(&r);
    onp_criteria_free(&c);
    return rc;
}
