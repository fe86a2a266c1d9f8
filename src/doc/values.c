/*
 * values.c — the members every result document shares (doc.h): numbers
 * that stay JSON, metrics, judgments, causes, lint findings, adequacy, the
 * environment fingerprint; and the printer every document goes through.
 * Reads result structs only; prints nothing.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/doc.h"
#include "onnxparity/utf8.h"
#include "onnxparity/version.h"

/* The shortest "%.Ng" that reads back as exactly v (cJSON's own printing
 * keeps 15 digits, which loses the last bits of a double). */
static void exact(double v, char *buf, size_t n)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

const char *onp_doc_short_num(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "nan");
    else if (isinf(v))
        snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else
        snprintf(buf, n, "%.3g", v);
    return buf;
}

void onp_doc_num(cJSON *o, const char *key, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        cJSON_AddStringToObject(o, key, isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
        return;
    }
    exact(v, buf, sizeof buf);
    cJSON_AddRawToObject(o, key, buf);
}

void onp_doc_metrics(cJSON *o, const onp_metrics *m)
{
    cJSON_AddBoolToObject(o, "shape_ok", m->shape_ok);
    cJSON_AddBoolToObject(o, "dtype_ok", m->dtype_ok);
    onp_doc_num(o, "rtol", m->tol.rtol);
    onp_doc_num(o, "atol", m->tol.atol);
    cJSON_AddNumberToObject(o, "count", (double)m->count);
    cJSON_AddNumberToObject(o, "mismatches", (double)m->mismatches);
    onp_doc_num(o, "mismatch_frac", m->mismatch_frac);
    onp_doc_num(o, "max_abs", m->max_abs);
    onp_doc_num(o, "max_rel", m->max_rel);
    onp_doc_num(o, "mean_abs", m->mean_abs);
    onp_doc_num(o, "rms", m->rms);
    onp_doc_num(o, "cosine", m->cosine);
    onp_doc_num(o, "needed_rtol", m->needed_rtol);
    onp_doc_num(o, "needed_atol", m->needed_atol);
    cJSON_AddNumberToObject(o, "nan_matched", (double)m->nan_matched);
    cJSON_AddNumberToObject(o, "nan_mismatch", (double)m->nan_mismatch);
    cJSON_AddNumberToObject(o, "inf_mismatch", (double)m->inf_mismatch);
    if (m->worst_index >= 0) {
        cJSON *w = cJSON_AddObjectToObject(o, "worst");
        cJSON_AddNumberToObject(w, "index", (double)m->worst_index);
        onp_doc_num(w, "expected", m->worst_expected);
        onp_doc_num(w, "actual", m->worst_actual);
    } else {
        cJSON_AddNullToObject(o, "worst");
    }
    cJSON *h = cJSON_AddArrayToObject(o, "histogram");
    for (int k = 0; k < ONP_HIST_BINS; k++)
        cJSON_AddItemToArray(h, cJSON_CreateNumber((double)m->hist[k]));
}

void onp_doc_judgment(cJSON *o, const onp_judgment *j)
{
    cJSON *g = cJSON_AddObjectToObject(o, "judgment");
    cJSON_AddStringToObject(g, "verdict", onp_verdict_name(j->verdict));
    cJSON_AddBoolToObject(g, "pass", j->pass);
    cJSON_AddStringToObject(g, "vacuous", onp_vacuity_name(j->vacuous));
    cJSON *t = cJSON_AddObjectToObject(g, "tolerance_applied");
    onp_doc_num(t, "rtol", j->tol_used.rtol);
    onp_doc_num(t, "atol", j->tol_used.atol);
    cJSON_AddStringToObject(g, "noise_source", onp_noise_src_name(j->noise.src));
    if (j->ref_refused) /* the float64 reference set aside (NaN/Inf not where eager has them) */
        cJSON_AddNumberToObject(g, "reference_refused", (double)j->ref_refused);
    if (j->noise.src == ONP_NOISE_NONE) {
        cJSON_AddNullToObject(g, "envelope");
    } else {
        cJSON *n = cJSON_AddObjectToObject(g, "noise");
        onp_doc_num(n, "max_abs", j->noise.max_abs);
        onp_doc_num(n, "rms", j->noise.rms);
        onp_doc_num(n, "scale_max", j->noise.scale_max);
        onp_doc_num(n, "scale_rms", j->noise.scale_rms);
        cJSON *env = cJSON_AddObjectToObject(g, "envelope");
        onp_doc_num(env, "max_abs", j->envelope_max);
        onp_doc_num(env, "rms", j->envelope_rms);
        onp_doc_num(env, "floor", j->floor);
        onp_doc_num(g, "ratio", j->ratio);
        cJSON_AddBoolToObject(g, "beyond_envelope", j->beyond_envelope);
    }
    onp_doc_num(g, "gap_max", j->gap_max);
    onp_doc_num(g, "gap_rms", j->gap_rms);
    if (j->has_ref) {
        cJSON *r = cJSON_AddObjectToObject(g, "ort_vs_float64");
        onp_doc_num(r, "max_abs", j->ort_err_max);
        onp_doc_num(r, "rms", j->ort_err_rms);
        r = cJSON_AddObjectToObject(g, "eager_vs_float64");
        onp_doc_num(r, "max_abs", j->eager_err_max);
        onp_doc_num(r, "rms", j->eager_err_rms);
    }
    onp_doc_num(g, "needed_atol", j->needed_atol);
    onp_doc_num(g, "suggested_atol", j->suggest_atol);
}

cJSON *onp_doc_causes(const onp_causes *cs)
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
            onp_doc_num(j, "suggested_atol", c->suggested_atol);
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

cJSON *onp_doc_latent(const onp_causes *cs)
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

char *onp_doc_print(const cJSON *root)
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
        size_t len = onp_utf8_decode(s, &cp);
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

cJSON *onp_doc_environment(cJSON *root, onp_ort *ort, const char *provider,
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

void onp_doc_point_names(cJSON *o, const onp_bisect_point *p)
{
    cJSON_AddStringToObject(o, "node", p->node);
    cJSON_AddStringToObject(o, "op_type", p->op_type);
    cJSON_AddStringToObject(o, "output", p->value);
    cJSON_AddStringToObject(o, "module", p->module);
}

cJSON *onp_doc_first_divergent(const onp_bisect_result *bis)
{
    const onp_bisect_point *p = &bis->points[bis->first];
    cJSON *fd = cJSON_CreateObject();
    onp_doc_point_names(fd, p);
    cJSON_AddStringToObject(fd, "reference", onp_bisect_ref_name(bis->reference));
    onp_doc_num(fd, "max_abs", p->max_abs);
    if (p->noise.src != ONP_NOISE_NONE)
        onp_doc_num(fd, "envelope_max", p->envelope_max);
    else
        cJSON_AddNullToObject(fd, "envelope_max");
    onp_doc_num(fd, "jump", p->jump);
    cJSON_AddNumberToObject(fd, "fixture", p->fail_fixture);
    return fd;
}

cJSON *onp_doc_lint_location(const onp_lint_location *l)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", onp_lint_loc_kind_name(l->kind));
    switch (l->kind) {
    case ONP_LINT_LOC_NODE:
        cJSON_AddStringToObject(o, "name", l->name);
        cJSON_AddStringToObject(o, "op_type", l->op_type);
        cJSON_AddNumberToObject(o, "index", (double)l->index);
        cJSON_AddStringToObject(o, "graph", l->graph);
        break;
    case ONP_LINT_LOC_INPUT:
    case ONP_LINT_LOC_OUTPUT:
        cJSON_AddStringToObject(o, "name", l->name);
        cJSON_AddNumberToObject(o, "index", (double)l->index);
        break;
    case ONP_LINT_LOC_MODULE: cJSON_AddStringToObject(o, "name", l->name); break;
    case ONP_LINT_LOC_SOURCE:
        cJSON_AddStringToObject(o, "file", l->file);
        if (l->line >= 0)
            cJSON_AddNumberToObject(o, "line", (double)l->line);
        else
            cJSON_AddNullToObject(o, "line");
        break;
    default: break;
    }
    return o;
}

cJSON *onp_doc_lint(const onp_lint_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "errors", (double)r->counts[ONP_LINT_ERROR]);
    cJSON_AddNumberToObject(o, "warnings", (double)r->counts[ONP_LINT_WARNING]);
    cJSON_AddNumberToObject(o, "infos", (double)r->counts[ONP_LINT_INFO]);
    cJSON *arr = cJSON_AddArrayToObject(o, "findings");
    for (size_t i = 0; i < r->n; i++) {
        const onp_lint_finding *f = &r->findings[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", f->rule->id);
        cJSON_AddStringToObject(j, "name", f->rule->name);
        cJSON_AddStringToObject(j, "severity", onp_lint_severity_name(f->rule->severity));
        cJSON_AddStringToObject(j, "cause", onp_cause_name(f->rule->cause));
        if (f->loc.name) cJSON_AddStringToObject(j, "node", f->loc.name);
        cJSON_AddItemToObject(j, "location", onp_doc_lint_location(&f->loc));
        cJSON_AddStringToObject(j, "message", f->message);
        cJSON_AddItemToArray(arr, j);
    }
    return o;
}

void onp_doc_agreement(cJSON *t, const onp_agreement *a)
{
    onp_doc_num(t, "flip_rate", a->flip_rate);
    onp_doc_num(t, "flip_rate_upper", a->flip_upper);
    onp_doc_num(t, "confidence", a->confidence);
    cJSON_AddStringToObject(t, "bound", "clopper-pearson-one-sided");
}

cJSON *onp_doc_adequacy(const onp_adequacy *a)
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
