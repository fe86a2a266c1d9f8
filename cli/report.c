/*
 * report.c — printing comparison results (report.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "html.h"
#include "report.h"
#include "utf8.h"

/* The shortest "%.Ng" that reads back as exactly v (cJSON's own printing
 * keeps 15 digits, which loses the last bits of a double). */
static void exact(double v, char *buf, size_t n)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

void report_num(cJSON *o, const char *key, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        cJSON_AddStringToObject(o, key, isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
        return;
    }
    exact(v, buf, sizeof buf);
    cJSON_AddRawToObject(o, key, buf);
}

void report_metrics_json(cJSON *o, const onp_metrics *m)
{
    cJSON_AddBoolToObject(o, "shape_ok", m->shape_ok);
    cJSON_AddBoolToObject(o, "dtype_ok", m->dtype_ok);
    report_num(o, "rtol", m->tol.rtol);
    report_num(o, "atol", m->tol.atol);
    cJSON_AddNumberToObject(o, "count", (double)m->count);
    cJSON_AddNumberToObject(o, "mismatches", (double)m->mismatches);
    report_num(o, "mismatch_frac", m->mismatch_frac);
    report_num(o, "max_abs", m->max_abs);
    report_num(o, "max_rel", m->max_rel);
    report_num(o, "mean_abs", m->mean_abs);
    report_num(o, "rms", m->rms);
    report_num(o, "cosine", m->cosine);
    report_num(o, "needed_rtol", m->needed_rtol);
    report_num(o, "needed_atol", m->needed_atol);
    cJSON_AddNumberToObject(o, "nan_matched", (double)m->nan_matched);
    cJSON_AddNumberToObject(o, "nan_mismatch", (double)m->nan_mismatch);
    cJSON_AddNumberToObject(o, "inf_mismatch", (double)m->inf_mismatch);
    if (m->worst_index >= 0) {
        cJSON *w = cJSON_AddObjectToObject(o, "worst");
        cJSON_AddNumberToObject(w, "index", (double)m->worst_index);
        report_num(w, "expected", m->worst_expected);
        report_num(w, "actual", m->worst_actual);
    } else {
        cJSON_AddNullToObject(o, "worst");
    }
    cJSON *h = cJSON_AddArrayToObject(o, "histogram");
    for (int k = 0; k < ONP_HIST_BINS; k++)
        cJSON_AddItemToArray(h, cJSON_CreateNumber((double)m->hist[k]));
}

void report_judgment_json(cJSON *o, const onp_judgment *j)
{
    cJSON *g = cJSON_AddObjectToObject(o, "judgment");
    cJSON_AddStringToObject(g, "verdict", onp_verdict_name(j->verdict));
    cJSON_AddBoolToObject(g, "pass", j->pass);
    cJSON_AddStringToObject(g, "vacuous", onp_vacuity_name(j->vacuous));
    cJSON *t = cJSON_AddObjectToObject(g, "tolerance_applied");
    report_num(t, "rtol", j->tol_used.rtol);
    report_num(t, "atol", j->tol_used.atol);
    cJSON_AddStringToObject(g, "noise_source", onp_noise_src_name(j->noise.src));
    if (j->noise.src == ONP_NOISE_NONE) {
        cJSON_AddNullToObject(g, "envelope");
    } else {
        cJSON *n = cJSON_AddObjectToObject(g, "noise");
        report_num(n, "max_abs", j->noise.max_abs);
        report_num(n, "rms", j->noise.rms);
        report_num(n, "scale_max", j->noise.scale_max);
        report_num(n, "scale_rms", j->noise.scale_rms);
        cJSON *env = cJSON_AddObjectToObject(g, "envelope");
        report_num(env, "max_abs", j->envelope_max);
        report_num(env, "rms", j->envelope_rms);
        report_num(env, "floor", j->floor);
        report_num(g, "ratio", j->ratio);
        cJSON_AddBoolToObject(g, "beyond_envelope", j->beyond_envelope);
    }
    report_num(g, "gap_max", j->gap_max);
    report_num(g, "gap_rms", j->gap_rms);
    if (j->has_ref) {
        cJSON *r = cJSON_AddObjectToObject(g, "ort_vs_float64");
        report_num(r, "max_abs", j->ort_err_max);
        report_num(r, "rms", j->ort_err_rms);
        r = cJSON_AddObjectToObject(g, "eager_vs_float64");
        report_num(r, "max_abs", j->eager_err_max);
        report_num(r, "rms", j->eager_err_rms);
    }
    report_num(g, "needed_atol", j->needed_atol);
    report_num(g, "suggested_atol", j->suggest_atol);
}

cJSON *report_causes_json(const onp_causes *cs)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < cs->n; i++) {
        const onp_cause_item *c = &cs->items[cs->order[i]];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", onp_cause_name(c->id));
        cJSON_AddStringToObject(j, "confidence", onp_confidence_name(c->confidence));
        if (c->node[0])
            cJSON_AddStringToObject(j, "node", c->node);
        else
            cJSON_AddNullToObject(j, "node");
        cJSON *ev = cJSON_AddArrayToObject(j, "evidence");
        for (size_t k = 0; k < c->n_evidence; k++)
            cJSON_AddItemToArray(ev, cJSON_CreateString(c->evidence[k]));
        cJSON_AddStringToObject(j, "fix", c->fix);
        if (c->id == ONP_CAUSE_FLOAT_NOISE || c->id == ONP_CAUSE_REDUCED_PRECISION)
            report_num(j, "suggested_atol", c->suggested_atol);
        if (c->n_failing) {
            cJSON *x = cJSON_AddObjectToObject(j, "explains");
            cJSON_AddNumberToObject(x, "fixtures", (double)c->n_explained);
            cJSON_AddNumberToObject(x, "failing", (double)c->n_failing);
        } else {
            cJSON_AddNullToObject(j, "explains");
        }
        cJSON_AddItemToArray(arr, j);
    }
    return arr;
}

cJSON *report_latent_json(const onp_causes *cs)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < cs->n_latent; i++) {
        const onp_lint_finding *f = cs->latent[i].finding;
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "rule", f->rule->id);
        cJSON_AddStringToObject(j, "name", f->rule->name);
        cJSON_AddStringToObject(j, "cause", onp_cause_name(f->rule->cause));
        if (f->loc.name && f->loc.name[0])
            cJSON_AddStringToObject(j, "node", f->loc.name);
        else
            cJSON_AddNullToObject(j, "node");
        cJSON_AddItemToArray(arr, j);
    }
    return arr;
}

void report_latent_text(const onp_causes *cs, const onp_lint_result *lint, const char *lint_arg)
{
    /* the TracerWarnings alone: worth a line while they are nowhere else; once
     * causes are listed, the ones that matter are among them (ONP301) */
    if (!cs->n_latent_total && (!lint->tracer_warnings || cs->n)) return;
    char q[4200];
    printf("latent   %zu warning(s) explain no failure (risks, not causes)", cs->n_latent_total);
    for (size_t i = 0; i < cs->n_latent && i < 3; i++) {
        const onp_lint_finding *f = cs->latent[i].finding;
        printf("%s %s%s%s", i ? "," : ":", f->rule->id, f->loc.name && f->loc.name[0] ? " at " : "",
               f->loc.name ? f->loc.name : "");
    }
    if (cs->n_latent_total > 3) printf(", ...");
    if (lint->tracer_warnings)
        printf("; %zu TracerWarning(s) recorded at export", lint->tracer_warnings);
    printf("; onnxparity lint %s lists them\n", onp_shell_quote(lint_arg, q, sizeof q));
}

const char *report_fmt(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "nan");
    else if (isinf(v))
        snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else
        snprintf(buf, n, "%.3g", v);
    return buf;
}

char *report_json_print(const cJSON *root)
{
    /* cJSON escapes control characters but copies other bytes as they are,
     * so a name holding invalid UTF-8 would make the document invalid JSON.
     * Such bytes are all >= 0x80, never JSON syntax: each becomes U+FFFD
     * (3 bytes, so the text grows at most threefold). */
    char *txt = cJSON_Print(root);
    if (!txt) return NULL;
    size_t n = strlen(txt);
    char *out = n < SIZE_MAX / 3 ? malloc(3 * n + 1) : NULL;
    if (!out) {
        free(txt);
        return NULL;
    }
    const unsigned char *s = (const unsigned char *)txt;
    size_t k = 0;
    while (*s) {
        unsigned long cp;
        size_t len = utf8_decode(s, &cp);
        if (len) {
            memcpy(out + k, s, len);
            k += len, s += len;
        } else {
            memcpy(out + k, "\xEF\xBF\xBD", 3);
            k += 3, s++;
        }
    }
    out[k] = '\0';
    free(txt);
    return out;
}

void report_json_puts(const char *txt, FILE *f)
{
    fputs(txt, f);
    fputc('\n', f);
}

void report_print_json(cJSON *root)
{
    char *txt = report_json_print(root);
    if (txt) report_json_puts(txt, stdout);
    free(txt);
    cJSON_Delete(root);
}

/* The CPU's model name (Linux /proc/cpuinfo), or "unknown". */
static void cpu_name(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10)) continue;
        const char *v = strchr(line, ':');
        if (!v) break;
        v++;
        while (*v == ' ' || *v == '\t') v++;
        snprintf(buf, n, "%s", v);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

cJSON *report_environment(cJSON *root, onp_ort *ort, const char *provider,
                          onp_ort_opt_level opt_level, int intra, int inter, const char *sha256,
                          const char *const *config, size_t n_config)
{
    cJSON *env = cJSON_AddObjectToObject(root, "environment");
    cJSON_AddStringToObject(env, "onnxparity", ONP_VERSION);
    cJSON_AddStringToObject(env, "ort_version", onp_ort_version(ort));
    cJSON_AddStringToObject(env, "ort_library", onp_ort_lib_path(ort));
    cJSON_AddStringToObject(env, "provider", provider);
    cJSON_AddStringToObject(env, "opt_level", onp_ort_opt_level_name(opt_level));
    cJSON_AddNumberToObject(env, "intra_threads", intra);
    cJSON_AddNumberToObject(env, "inter_threads", inter);
    cJSON_AddStringToObject(env, "model_sha256", sha256);
    cJSON *cfg = cJSON_AddArrayToObject(env, "session_config");
    int daz = 0; /* ORT flushes denormals to zero only when asked */
    for (size_t i = 0; i < n_config; i++) {
        cJSON_AddItemToArray(cfg, cJSON_CreateString(config[i]));
        if (!strcmp(config[i], "session.set_denormal_as_zero=1")) daz = 1;
    }
    cJSON_AddStringToObject(env, "denormals",
                            daz ? "flushed to zero (session.set_denormal_as_zero=1)"
                                : "kept (IEEE subnormals)");
    char cpu[256];
    cpu_name(cpu, sizeof cpu);
    cJSON_AddStringToObject(env, "cpu", cpu);
    return env;
}

int report_emit(cJSON *root, int json, const char *html, const char *label)
{
    int rc = 0;
    if (html) {
        onp_error e;
        onp_error_clear(&e);
        if (report_html_write(root, label, html, &e)) rc = cli_report(&e);
    }
    if (json)
        report_print_json(root);
    else
        cJSON_Delete(root);
    return rc;
}

void report_causes_text(const onp_causes *cs, const char *target_args)
{
    for (size_t i = 0; cs && i < cs->n; i++) {
        const onp_cause_item *c = &cs->items[cs->order[i]];
        printf("cause    %s (%s confidence)%s%s: %s\n", onp_cause_name(c->id),
               onp_confidence_name(c->confidence), c->node[0] ? " at " : "", c->node,
               c->n_evidence ? c->evidence[0] : "");
        for (size_t k = 1; k < c->n_evidence && k < 4; k++)
            printf("         - %s\n", c->evidence[k]);
        printf("         fix: %s\n", c->fix);
        if (c->id == ONP_CAUSE_UNKNOWN && target_args) /* the fix, as a command to paste */
            printf("         run: onnxparity bisect %s\n", target_args);
    }
}

cJSON *report_first_divergent_json(const onp_bisect_result *bis)
{
    const onp_bisect_point *p = &bis->points[bis->first];
    cJSON *fd = cJSON_CreateObject();
    cJSON_AddStringToObject(fd, "node", p->node);
    cJSON_AddStringToObject(fd, "op_type", p->op_type);
    cJSON_AddStringToObject(fd, "output", p->value);
    cJSON_AddStringToObject(fd, "module", p->module);
    cJSON_AddStringToObject(fd, "reference", onp_bisect_ref_name(bis->reference));
    report_num(fd, "max_abs", p->max_abs);
    if (p->noise.src != ONP_NOISE_NONE)
        report_num(fd, "envelope_max", p->envelope_max);
    else
        cJSON_AddNullToObject(fd, "envelope_max");
    report_num(fd, "jump", p->jump);
    cJSON_AddNumberToObject(fd, "fixture", p->fail_fixture);
    return fd;
}
