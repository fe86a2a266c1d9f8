/*
 * cmd_gate.c — `onnxparity gate TARGET --criteria FILE [--record [--margin M]]`:
 * parity as a CI gate against recorded release criteria (docs/gate.md).
 *
 * --record measures the bundle (every fixture, as check does) and writes the
 * criteria file atomically; without --record the criteria are read
 * (strictly: a malformed file is exit 2 naming the file and the field or
 * byte) and every regression against them is printed.  What is recorded,
 * the limits, the regression rules, the drift policy and the verdict are
 * the library's (include/onnxparity/gate.h), and so is the run (onp_gate_run)
 * and the document (doc.h's onp_doc_gate); this file parses the command
 * line, calls them, and formats the result as text, JSON, JUnit, a Markdown
 * summary, workflow annotations and HTML.
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
#include "onnxparity/bisect.h"
#include "onnxparity/causes.h"
#include "onnxparity/doc.h"
#include "onnxparity/env.h"
#include "onnxparity/gate.h"
#include "ortopts.h"
#include "report.h"
#include "target.h"

/* --- options ------------------------------------------------------------- */

typedef struct opts {
    cli_ort ort;      /* the run's options (ORT, and --rtol/--atol when recording) */
    onp_gate_args ga; /* gate's own: --criteria, --record, --margin, --env-drift, ... */
    cli_target tg;    /* TARGET, or --model/--data */
    const char *target, *junit;
    const char *summary; /* --summary FILE: a Markdown summary appended */
    const char *sarif;   /* --sarif FILE: the lint findings, as check writes them */
    const char *html;    /* --html FILE: the gate result as a page (gating only) */
    int annotations;     /* --annotations: GitHub Actions workflow commands on stdout */
    cli_format fmt;
} opts;

/* argv[*i] as one of the library's gate options: 1, 0, or -1 (said). */
static int gate_opt(opts *o, int argc, char **argv, int *i)
{
    onp_error e;
    onp_error_clear(&e);
    int r = onp_gate_args_parse(&o->ga, &o->ort.a, argc, (const char *const *)argv, i, &e);
    if (r < 0) cli_usage_error(argv[0], "%s", e.msg);
    return r;
}

static int parse_args(int argc, char **argv, opts *o)
{
    const char *v;
    cli_ort_init(&o->ort);
    onp_gate_args_init(&o->ga);
    for (int i = 1; i < argc; i++) {
        int r = cli_ort_opt(&o->ort, argc, argv, &i);
        if (r < 0) return -1;
        if (r) continue;
        if ((r = cli_target_opt(&o->tg, argc, argv, &i)) || (r = gate_opt(o, argc, argv, &i))) {
            if (r < 0) return -1;
        } else if ((r = cli_opt(argc, argv, &i, "junit", &v))) {
            if (r < 0) return -1;
            o->junit = v;
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
        } else if ((r = cli_opt(argc, argv, &i, "format", &v))) {
            if (r < 0 || cli_parse_format(argv[0], v, &o->fmt)) return -1;
        } else if (cli_target_arg(argv, i, "target", &o->target)) {
            return -1;
        }
    }
    if (cli_target_finish(&o->tg, argv[0], o->target)) return -1;
    onp_error e;
    onp_error_clear(&e);
    if (onp_gate_args_finish(&o->ga, &o->ort.a, &e))
        return cli_usage_error(argv[0], "%s", e.msg), -1;
    /* the formats, as the options: none without effect */
    const char *gate_only = o->summary       ? "--summary"
                            : o->annotations ? "--annotations"
                            : o->html        ? "--html"
                                             : NULL;
    if (o->ga.record && gate_only)
        return cli_usage_error(argv[0], "%s applies to gating only, not to --record", gate_only),
               -1;
    if (o->annotations && o->fmt == FMT_JSON)
        return cli_usage_error(argv[0], "--annotations writes workflow commands on stdout, where "
                                        "--format json writes the document: use one"),
               -1;
    return 0;
}

/* --- record -------------------------------------------------------------- */

/* --record over an existing criteria file: one line per limit that
 * changes, "limit    OUTPUT.FIELD: OLD -> NEW", so that a re-record on
 * purpose shows what it loosens or tightens. */
static void limit_diff(FILE *to, const onp_criteria *old, const onp_criteria *now, const char *pre)
{
    for (size_t k = 0; k < now->n_targets; k++) { /* each target against its namesake */
        const onp_crit_target *t = &now->targets[k];
        char p[80];
        snprintf(p, sizeof p, "%s/", t->name);
        size_t j = 0;
        while (j < old->n_targets && strcmp(old->targets[j].name, t->name)) j++;
        if (j < old->n_targets)
            limit_diff(to, &old->targets[j].crit, &t->crit, p);
        else
            fprintf(to, "limit    target %s: new target (not in the old criteria)\n", t->name);
    }
    static const char *const keys[] = {"rtol",    "atol",        "top1_min",    "mismatch_frac_max",
                                       "max_abs", "needed_rtol", "needed_atol", "envelope_max"};
    for (size_t i = 0; i < now->n_out; i++) {
        const onp_crit_out *cn = &now->outs[i], *co = onp_criteria_find(old, cn->name);
        if (!co) {
            fprintf(to, "limit    %s%s: new output (not in the old criteria)\n", pre, cn->name);
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
            fprintf(to, "limit    %s%s.%s: %s -> %s\n", pre, cn->name, keys[k],
                    was[k] < 0 ? "null" : a, is[k] < 0 ? "null" : b);
        }
    }
    for (size_t i = 0; i < old->n_out; i++)
        if (!onp_criteria_find(now, old->outs[i].name))
            fprintf(to, "limit    %s%s: no longer recorded (not in the bundle)\n", pre,
                    old->outs[i].name);
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

/* --record: the criteria the library measured from the run, written to
 * the criteria file (after the limits that move, when one is there); or
 * why the run is no baseline. */
static int record(const opts *o, const onp_gate *g)
{
    if (g->verdict != ONP_RUN_PASS) {
        char why[2400];
        onp_gate_refusal_text(g, why, sizeof why);
        fprintf(stderr, "onnxparity gate: %s\n", why);
        return onp_run_exit_code(g->verdict);
    }
    onp_criteria old;
    if (!read_old(o->ga.criteria, &old)) { /* re-recording: say what moves */
        limit_diff(o->fmt == FMT_JSON ? stderr : stdout, &old, &g->criteria, "");
        onp_criteria_free(&old);
    }
    onp_error e;
    onp_error_clear(&e);
    char *txt;
    if (onp_criteria_write(&g->criteria, o->ga.criteria, &txt, &e)) return cli_report(&e);
    if (o->fmt == FMT_JSON)
        fputs(txt, stdout), fputc('\n', stdout); /* the criteria document itself */
    else if (!g->n_targets)
        printf("recorded %s: %zu fixtures, margin %g, model sha256 %.12s\n", o->ga.criteria,
               g->check.run.n_fix, o->ga.margin, onp_bundle_sha256(g->check.bundle));
    else
        for (size_t k = 0; k < g->n_targets; k++) {
            const onp_gate *t = &g->targets[k];
            printf("recorded %s: target %s (ONNX Runtime %s, opt-level %s): %zu fixtures, margin "
                   "%g, model sha256 %.12s\n",
                   o->ga.criteria, t->target, t->check.run.env.v[ONP_ENV_ORT_VERSION],
                   t->check.run.env.v[ONP_ENV_OPT_LEVEL], t->check.run.n_fix, o->ga.margin,
                   onp_bundle_sha256(t->check.bundle));
        }
    free(txt);
    return 0;
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

/* The gate's runs: each target's gate, or the one gate without targets. */
static size_t n_runs(const onp_gate *gt)
{
    return gt->n_targets ? gt->n_targets : 1;
}
static const onp_gate *run_of(const onp_gate *gt, size_t k)
{
    return gt->n_targets ? &gt->targets[k] : gt;
}

/* One testcase per fixture x output (failing when a regression names it),
 * one per environment field recorded (failing, or passing with the drift in
 * system-out), one per other bundle-wide regression; the environment and
 * the policy as properties. */
/* The classname of a case of target `t` (NULL: the one target): "t/cls". */
static const char *cls(const char *t, const char *c, char *buf, size_t n)
{
    if (!t) return c;
    snprintf(buf, n, "%s/%s", t, c);
    return buf;
}

static void junit_cases(junit *jp, const char *tname, const onp_criteria *c,
                        const onp_run_result *r, const onp_gate_result *g)
{
#define j (*jp)
    char cb[400];
    for (size_t i = 0; i < r->n_fix; i++) {
        const onp_fixture_verdict *f = &r->fix[i];
        const char *fx0 = onp_gate_fixture_name(f->dir);
        char fxb[400];
        const char *fx = cls(tname, fx0, fxb, sizeof fxb);
        junit_set_time(&j, r->secs ? r->secs[i] / (double)(f->n_out ? f->n_out : 1) : 0);
        if (f->status == ONP_FIXTURE_ERROR && !f->n_out)
            junit_case(&j, fx, "(fixture)", JUNIT_ERROR, f->msg, NULL);
        for (size_t k = 0; k < f->n_out; k++) {
            const onp_output_verdict *x = &f->outs[k];
            char msg[2048], txt[4096] = "";
            output_regressions(g, fx0, x->name, msg, sizeof msg);
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
            junit_case(&j, cls(tname, "environment", cb, sizeof cb),
                       onp_env_field_name((onp_env_field)fld), JUNIT_PASS, NULL, NULL);
            continue;
        }
        onp_drift_effect eff = onp_gate_drift_effect(d, g->policy);
        onp_gate_drift_text(d, t, sizeof t);
        snprintf(m, sizeof m, "%s: %s", onp_drift_effect_name(eff), t);
        junit_case(&j, cls(tname, "environment", cb, sizeof cb), onp_env_field_name(d->field),
                   eff == ONP_DRIFT_EFFECT_FAILURE ? JUNIT_FAIL : JUNIT_WARN, m, m);
    }
    for (size_t q = 0; q < g->n_reg; q++) {
        char name[400];
        if (g->reg[q].fixture || !strcmp(g->reg[q].check, "environment")) continue;
        bundle_case_name(&g->reg[q], name, sizeof name);
        junit_case(&j, cls(tname, "criteria", cb, sizeof cb), name, JUNIT_FAIL, g->reg[q].msg,
                   NULL);
    }
#undef j
}

/* The target's row of the JUnit properties: "ONNX Runtime V (LIB), opt-level L". */
static void junit_target_property(junit *j, const onp_gate *t)
{
    char k[100], v[2200];
    const onp_env *env = &t->check.run.env;
    snprintf(k, sizeof k, "target.%s", t->target);
    snprintf(v, sizeof v, "ONNX Runtime %s (%.1000s), opt-level %s", env->v[ONP_ENV_ORT_VERSION],
             t->check.ort ? onp_ort_lib_path(t->check.ort) : "?", env->v[ONP_ENV_OPT_LEVEL]);
    junit_property(j, k, v);
}

/* The file: one target's cases, or each target's with its name before
 * every classname ("TARGET/test_data_set_0") and a target.NAME property. */
static int write_junit(const opts *o, const onp_gate *gt, int recording)
{
    junit j;
    junit_init(&j);
    const onp_gate *first = run_of(gt, 0);
    junit_env_properties(&j, &first->check.run.env);
    junit_property(&j, "env_drift_policy", onp_gate_drift_policy_name(o->ga.drift));
    onp_criteria none;
    memset(&none, 0, sizeof none);
    int rc = 0;
    for (size_t k = 0; k < n_runs(gt); k++) {
        const onp_gate *t = run_of(gt, k);
        if (gt->n_targets) junit_target_property(&j, t);
        if (!recording) {
            junit_cases(&j, gt->n_targets ? t->target : NULL, &t->criteria, &t->check.run,
                        &t->result);
            continue;
        }
        onp_gate_result g; /* --record --junit: the measured run, failing where it fails */
        onp_error e;
        onp_error_clear(&e);
        if (onp_gate_record_failures(&t->check.run, &g, &e)) {
            rc = cli_report(&e);
        } else {
            g.policy = o->ga.drift;
            junit_cases(&j, gt->n_targets ? t->target : NULL, &none, &t->check.run, &g);
        }
        onp_gate_result_release(&g);
    }
    onp_error e;
    onp_error_clear(&e);
    if (!rc && junit_write(&j, "onnxparity gate", o->junit, &e)) rc = cli_report(&e);
    junit_free(&j);
    return rc;
}

/* The text: the run, the environment against the recorded one, the causes
 * and the first divergent node (as check derives them), the regressions,
 * the verdict. */
static size_t print_run(const opts *o, const onp_gate *gt);

static void print_text(const opts *o, const onp_gate *gt)
{
    const onp_gate_result *g = &gt->result;
    const onp_gate *first = run_of(gt, 0);
    printf("gate     %s against %s (model sha256 %.12s)\n", cli_target_name(&o->tg), o->ga.criteria,
           onp_bundle_sha256(first->check.bundle));
    size_t drifted = 0;
    for (size_t k = 0; k < n_runs(gt); k++) {
        const onp_gate *t = run_of(gt, k);
        if (gt->n_targets)
            printf("target   %s: %s (%zu regression(s))\n", t->target,
                   report_verdict_word(t->verdict), t->result.n_reg);
        drifted += print_run(o, t);
    }
    char failing[600] = "";
    for (size_t k = 0; k < gt->n_targets; k++)
        if (gt->targets[k].verdict != ONP_RUN_PASS)
            snprintf(failing + strlen(failing), sizeof failing - strlen(failing), "%s%s",
                     failing[0] ? ", " : " in target ", gt->targets[k].target);
    for (size_t q = 0; q < g->n_reg; q++)
        if (g->reg[q].target)
            printf("regressed: [%s] %s\n", g->reg[q].target, g->reg[q].msg);
        else
            printf("regressed: %s\n", g->reg[q].msg);
    const onp_run_result *r = &first->check.run;
    if (g->verdict == ONP_RUN_ERROR)
        printf("verdict: ERROR — ONNX Runtime crashed or timed out on %zu fixture(s)%s\n", g->lost,
               failing);
    else if (g->verdict == ONP_RUN_FAIL)
        printf("verdict: FAIL — %zu regression(s) against %s%s\n", g->n_reg, o->ga.criteria,
               failing);
    else if (gt->n_targets)
        printf("verdict: pass — %zu targets, %zu fixtures each, within the criteria of %s%s\n",
               gt->n_targets, r->n_fix, o->ga.criteria,
               drifted ? " (see the drift lines above)" : "");
    else
        printf("verdict: pass — %zu fixtures, %zu outputs within the criteria of %s%s\n", r->n_fix,
               gt->criteria.n_out, o->ga.criteria, drifted ? " (see the drift lines above)" : "");
}

/* One target's run: the runtime, the environment against the recorded
 * one, the causes and the first divergent node.  The drift lines printed. */
static size_t print_run(const opts *o, const onp_gate *gt)
{
    const onp_criteria *c = &gt->criteria;
    const onp_run_result *r = &gt->check.run;
    const onp_gate_result *g = &gt->result;
    const onp_causes *cs = r->causes;
    const onp_bisect_result *bis = gt->bisect;
    char t[900];
    printf("runtime  ONNX Runtime %s, %s, opt-level %s\n", r->env.v[ONP_ENV_ORT_VERSION],
           r->env.v[ONP_ENV_PROVIDER], r->env.v[ONP_ENV_OPT_LEVEL]);
    if (!c->has_env)
        printf("note     %s records no environment (recorded before environments were): "
               "nothing to compare; --record again to add one\n",
               o->ga.criteria);
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
    report_latent_text(cs, &gt->check.lint, cli_target_name(&o->tg));
    if (bis) {
        const onp_bisect_point *p = &bis->points[bis->first];
        char q[4200];
        printf("first divergent node: %s (%s), output %s%s%s (onnxparity bisect %s)\n",
               p->node[0] ? p->node : "(unnamed)", p->op_type, p->value,
               p->module[0] ? ", module " : "", p->module,
               onp_shell_quote(cli_target_name(&o->tg), q, sizeof q));
    }
    return drifted;
}

/* --annotations: the causes, each drift that warns or fails, each
 * regression (at most 50) as workflow commands; then the verdict. */
static void print_annotations(const opts *o, const onp_gate *gt)
{
    const onp_gate_result *g = &gt->result;
    const onp_gate *first = run_of(gt, 0);
    const char *model = onp_bundle_model_path(first->check.bundle);
    char t[900], title[200];
    for (size_t k = 0; k < n_runs(gt); k++) {
        const onp_gate *tg = run_of(gt, k);
        const onp_gate_result *tr = &tg->result;
        gh_causes_commands(stdout, tg->check.run.causes, model);
        for (size_t i = 0; i < tr->n_drift; i++) {
            onp_drift_effect eff = onp_gate_drift_effect(&tr->drift[i], tr->policy);
            if (eff == ONP_DRIFT_EFFECT_NOTE) continue;
            onp_gate_drift_text(&tr->drift[i], t, sizeof t);
            snprintf(title, sizeof title, "onnxparity gate: environment drift%s%s",
                     gt->n_targets ? " in target " : "", gt->n_targets ? tg->target : "");
            gh_command(stdout, eff == ONP_DRIFT_EFFECT_FAILURE ? "error" : "warning",
                       o->ga.criteria, title, t);
        }
    }
    for (size_t q = 0; q < g->n_reg && q < 50; q++) {
        if (!strcmp(g->reg[q].check, "environment")) continue; /* said above */
        snprintf(title, sizeof title, "onnxparity gate: regressed (%s)%s%s", g->reg[q].check,
                 g->reg[q].target ? " in target " : "", g->reg[q].target ? g->reg[q].target : "");
        gh_command(stdout, "error", model, title, g->reg[q].msg);
    }
    if (g->verdict != ONP_RUN_PASS)
        gh_command(stdout, "error", NULL, "onnxparity gate",
                   g->verdict == ONP_RUN_ERROR ? "ONNX Runtime crashed or timed out"
                                               : "parity regressed against the criteria");
}

/* --sarif FILE: the lint findings as check writes them and, gating, one
 * result per regression (rule "gate-regression", level error, the model
 * as its location) whose properties name the target, fixture, output,
 * check, value and limit. */
static int write_sarif(const opts *o, const onp_gate *gt)
{
    const onp_gate *first = run_of(gt, 0);
    const char *model = onp_bundle_model_path(first->check.bundle);
    const onp_gate_result *g = &gt->result;
    if (o->ga.record || !g->n_reg) return lint_sarif_write(o->sarif, model, &first->check.lint);
    cJSON *doc = lint_sarif_doc(model, &first->check.lint);
    cJSON *run = doc ? cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "runs"), 0) : NULL;
    cJSON *driver =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(run, "tool"), "driver");
    cJSON *rules = cJSON_GetObjectItemCaseSensitive(driver, "rules");
    cJSON *results = cJSON_GetObjectItemCaseSensitive(run, "results");
    const cJSON *art = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(run, "artifacts"), 0), "location");
    onp_error e;
    onp_error_clear(&e);
    if (!rules || !results) {
        cJSON_Delete(doc);
        return cli_report((onp_error_set(&e, ONP_ERR_NOMEM, o->sarif, NULL, -1,
                                         "out of memory building the SARIF document"),
                           &e));
    }
    int rule_index = cJSON_GetArraySize(rules);
    struct stat st;
    off_t model_bytes = stat(model, &st) ? 0 : st.st_size;
    cJSON *rule = cJSON_CreateObject();
    cJSON_AddStringToObject(rule, "id", "gate-regression");
    cJSON_AddStringToObject(rule, "name", "GateRegression");
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(driver, "informationUri");
    if (cJSON_IsString(info) &&
        strrchr(info->valuestring, '/')) { /* DOCS/lint.md -> DOCS/gate.md */
        char help[2100];
        snprintf(help, sizeof help, "%.*s/gate.md",
                 (int)(strrchr(info->valuestring, '/') - info->valuestring), info->valuestring);
        cJSON_AddStringToObject(rule, "helpUri", help);
    }
    cJSON_AddStringToObject(cJSON_AddObjectToObject(rule, "shortDescription"), "text",
                            "a release criterion of onnxparity gate regressed");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(rule, "help"), "text",
                            "see the regression's target, fixture and check; re-record the "
                            "criteria only when the change is intended");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(rule, "defaultConfiguration"), "level",
                            "error");
    cJSON_AddItemToArray(rules, rule);
    for (size_t q = 0; q < g->n_reg; q++) {
        const onp_gate_regression *x = &g->reg[q];
        cJSON *r = cJSON_CreateObject();
        char text[1400], name[700];
        snprintf(text, sizeof text, "%s%s%s%s", x->target ? "target " : "",
                 x->target ? x->target : "", x->target ? ": " : "", x->msg);
        cJSON_AddStringToObject(r, "ruleId", "gate-regression");
        cJSON_AddNumberToObject(r, "ruleIndex", rule_index);
        cJSON_AddStringToObject(r, "level", "error");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "message"), "text", text);
        cJSON *loc = cJSON_CreateObject();
        if (art) { /* the whole model: a byte region, SARIF's form for a binary artifact */
            cJSON *phys = cJSON_AddObjectToObject(loc, "physicalLocation");
            cJSON_AddItemToObject(phys, "artifactLocation", cJSON_Duplicate(art, 1));
            cJSON *reg = cJSON_AddObjectToObject(phys, "region");
            cJSON_AddNumberToObject(reg, "byteOffset", 0);
            cJSON_AddNumberToObject(reg, "byteLength", model_bytes > 0 ? (double)model_bytes : 1);
        }
        snprintf(name, sizeof name, "%s%s%s%s%s", x->target ? x->target : "", x->target ? "/" : "",
                 x->fixture ? x->fixture : "(bundle)", x->output ? "/" : "",
                 x->output ? x->output : "");
        cJSON *ll = cJSON_CreateObject();
        cJSON_AddStringToObject(ll, "name", name);
        cJSON_AddStringToObject(ll, "kind", "object");
        cJSON_AddItemToArray(cJSON_AddArrayToObject(loc, "logicalLocations"), ll);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "locations"), loc);
        cJSON *props = cJSON_AddObjectToObject(r, "properties");
        if (x->target)
            cJSON_AddStringToObject(props, "target", x->target);
        else
            cJSON_AddNullToObject(props, "target");
        if (x->fixture)
            cJSON_AddStringToObject(props, "fixture", x->fixture);
        else
            cJSON_AddNullToObject(props, "fixture");
        if (x->output)
            cJSON_AddStringToObject(props, "output", x->output);
        else
            cJSON_AddNullToObject(props, "output");
        cJSON_AddStringToObject(props, "check", x->check);
        if (!isnan(x->value)) onp_doc_num(props, "value", x->value);
        if (!isnan(x->limit)) onp_doc_num(props, "limit", x->limit);
        cJSON_AddStringToObject(props, "criteria", o->ga.criteria);
        cJSON_AddItemToArray(results, r);
    }
    char *txt = onp_doc_print(doc);
    cJSON_Delete(doc);
    onp_buf b;
    onp_buf_init(&b, 0);
    int rc = 0;
    if (!txt || onp_buf_append(&b, txt, strlen(txt)) || onp_buf_append(&b, "\n", 1))
        rc = cli_report((onp_error_set(&e, ONP_ERR_NOMEM, o->sarif, NULL, -1,
                                       "out of memory building the SARIF document"),
                         &e));
    else if (onp_buf_write_file(&b, o->sarif, &e))
        rc = cli_report(&e);
    onp_buf_free(&b);
    free(txt);
    return rc;
}

/* --summary FILE: the verdict, the environment, the causes, the first
 * divergent node and the regressions as Markdown, appended. */
static int write_summary(const opts *o, const onp_gate *gt0)
{
    const onp_gate *gt = run_of(gt0, 0); /* the first target's run */
    const onp_criteria *c = &gt->criteria;
    const onp_run_result *r = &gt->check.run;
    const onp_gate_result *g = &gt0->result;
    const onp_bisect_result *bis = gt->bisect;
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
    gh_md_text(f, o->ga.criteria);
    fprintf(f,
            "`: %zu fixtures, %zu outputs, %zu regression(s); ONNX Runtime %s (%s, opt-level %s)\n",
            r->n_fix, c->n_out, g->n_reg, r->env.v[ONP_ENV_ORT_VERSION], r->env.v[ONP_ENV_PROVIDER],
            r->env.v[ONP_ENV_OPT_LEVEL]);
    if (gt->result.n_drift) {
        fprintf(f,
                "\n**Environment** (policy `--env-drift %s`):\n\n"
                "| field | at record time | now | effect |\n|---|---|---|---|\n",
                onp_gate_drift_policy_name(gt->result.policy));
        for (size_t i = 0; i < gt->result.n_drift; i++) {
            const onp_env_drift *d = &gt->result.drift[i];
            fprintf(f, "| %s | ", onp_env_field_name(d->field));
            gh_md_text(f, onp_gate_env_shown(d->field, d->recorded, a, sizeof a));
            fputs(" | ", f);
            gh_md_text(f, onp_gate_env_shown(d->field, d->current, b, sizeof b));
            fprintf(f, " | %s |\n",
                    onp_drift_effect_name(onp_gate_drift_effect(d, gt->result.policy)));
        }
    }
    gh_md_causes(f, r->causes);
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
            if (g->reg[q].target) gh_md_text(f, g->reg[q].target), fputs("/", f);
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

/* Gating: the run judged against its criteria (onp_gate_run did it), every
 * output asked for written.  The exit code. */
static int gate(const opts *o, onp_gate *gt)
{
    int rc = onp_run_exit_code(gt->verdict);
    if (o->fmt == FMT_JSON || o->html) { /* the document: printed, and/or the page */
        cJSON *doc = onp_doc_gate(gt, &o->ort.a.run, o->ga.criteria);
        int html_rc = report_emit(doc, o->fmt == FMT_JSON, o->html, o->ga.criteria);
        if (html_rc) rc = html_rc;
    }
    if (o->fmt != FMT_JSON) print_text(o, gt);
    if (o->annotations) print_annotations(o, gt);
    int sum_rc = o->summary ? write_summary(o, gt) : 0;
    if (sum_rc) rc = sum_rc;
    int junit_rc = o->junit ? write_junit(o, gt, 0) : 0;
    if (junit_rc) rc = junit_rc;
    return rc;
}

int cmd_gate(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) {
        onp_gate_args_release(&o.ga);
        return EXIT_USAGE;
    }
    onp_gate g;
    onp_error e;
    onp_error_clear(&e);
    onp_bundle_spec where = {o.tg.bundle, o.tg.model, (const char *const *)o.tg.data, o.tg.n_data};
    int rc;
    if (onp_gate_run(&g, &where, &o.ort.a, &o.ga, &e)) {
        /* the criteria unreadable, or the run could not start: the upload
         * step still gets a file saying why */
        char why[1400];
        if (o.junit)
            junit_write_error("onnxparity gate",
                              o.ga.record || g.have_criteria ? "run" : "criteria",
                              onp_error_format(&e, why, sizeof why), o.junit);
        rc = cli_report(&e);
    } else if (o.sarif && (rc = write_sarif(&o, &g))) {
        /* said */
    } else if (o.ga.record) {
        rc = record(&o, &g);
        int junit_rc = o.junit ? write_junit(&o, &g, 1) : 0;
        if (junit_rc) rc = junit_rc;
    } else {
        rc = gate(&o, &g);
    }
    onp_gate_release(&g);
    onp_gate_args_release(&o.ga);
    return rc;
}
