/*
 * evaluate.c — one configuration tried: the session options of a
 * configuration (provider, one more config entry), and the evaluation that
 * every experiment of the sweep, the optimizer search and the probes is
 * made of: open a session with these options, run every fixture (twice, to
 * see whether it is deterministic), judge each output as check does (the
 * tolerance, then the float noise: the float64 reference or the spread of
 * a perturbed run), and report per output, per fixture and overall.
 * Never prints.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "onnxparity/judge.h"
#include "onnxparity/noise.h"
#include "probe/probe_int.h"

onp_tol probe_tol_of(const onp_probe_opts *o, int32_t dtype)
{
    return onp_tol_with(dtype, o->rtol, o->atol);
}

void probe_release_all(onp_tensor *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) onp_tensor_release(&t[i]);
}

/* Largest |a - b| of two same-shape tensors (inf when shapes differ). */
static double diff_abs(const onp_tensor *a, const onp_tensor *b)
{
    onp_metrics m;
    onp_error e;
    onp_tol t = {0, 0};
    if (onp_compare(a, b, t, &m, &e) || !m.shape_ok) return INFINITY;
    return m.max_abs;
}

/* Fixture f run again with every floating input moved by one ulp, into
 * out[] (the ORT-side noise estimate, noise.h).  -1 when it cannot run. */
static int perturbed_run(onp_session *s, const probe_fx *f, onp_tensor *out)
{
    onp_tensor *in = calloc(f->n_in ? f->n_in : 1, sizeof *in);
    onp_error e;
    int rc = in ? 0 : -1;
    for (size_t k = 0; !rc && k < f->n_in; k++)
        if (onp_perturbed_input(&in[k], &f->in[k], k, &e)) rc = -1;
    if (!rc && onp_session_run(s, in, f->n_in, NULL, 0, out, &e)) rc = -1;
    for (size_t k = 0; in && k < f->n_in; k++) onp_tensor_release(&in[k]);
    free(in);
    return rc;
}

/* The float64 noise of output k relative to its scale, learned from the
 * fixtures of fs that have the capture's float64 reference (the largest
 * |eager - float64| / scale over them), applied to `want`'s scale: the
 * float64-scaled source of noise.h, as check takes it from parity.json.
 * 0 when no fixture has a reference for output k. */
static int scaled_noise(const onp_fixset *fs, size_t k, const onp_tensor *want, onp_noise *n)
{
    double rel_max = -1, rel_rms = 0;
    for (size_t i = 0; i < fs->n; i++) {
        const probe_fx *g = &fs->f[i];
        if (!g->ref64 || k >= g->n_out || !g->ref64[k].count) continue;
        onp_metrics m;
        onp_error e;
        onp_tol zero = {0, 0};
        onp_value_stats vs;
        if (onp_compare(&g->ref64[k], &g->out[k], zero, &m, &e) || !m.shape_ok || m.nan_mismatch ||
            m.inf_mismatch)
            continue;
        onp_value_stats_of(&g->out[k], &vs);
        double rm = vs.scale_max > 0 ? m.max_abs / vs.scale_max : 0;
        double rr = vs.scale_rms > 0 ? m.rms / vs.scale_rms : 0;
        if (rm > rel_max) rel_max = rm;
        if (rr > rel_rms) rel_rms = rr;
    }
    if (rel_max < 0) return 0;
    onp_value_stats vs;
    onp_value_stats_of(want, &vs);
    memset(n, 0, sizeof *n);
    n->src = ONP_NOISE_SCALED;
    n->scale_max = vs.scale_max;
    n->scale_rms = vs.scale_rms;
    n->max_abs = rel_max * vs.scale_max;
    n->rms = rel_rms * vs.scale_rms;
    return 1;
}

/* Output k of fixture f judged as check judges it (noise.h): the tolerance,
 * then the float64 reference, the float64 noise of the other fixtures
 * scaled (scaled_noise) or, lazily, the spread of a perturbed run (p,
 * filled on first need; *p_state 0 not run, 1 ran, -1 failed). */
static int judge_mj(onp_session *s, const onp_fixset *fs, const probe_fx *f, size_t k,
                   const onp_tensor *got, const onp_probe_opts *o, onp_tensor *p, int *p_state,
                   double *max_abs, onp_metrics *m, onp_judgment *j)
{
    onp_error ce;
    onp_judge_opts jo = {probe_tol_of(o, f->out[k].dtype), 0, o->atol >= 0, 0};
    const onp_tensor *r64 = f->ref64 && f->ref64[k].count ? &f->ref64[k] : NULL;
    if (onp_judge_value(&f->out[k], got, r64, NULL, &jo, m, j, &ce)) {
        *max_abs = INFINITY;
        return 0;
    }
    *max_abs = m->shape_ok ? m->max_abs : INFINITY;
    if (j->verdict != ONP_VERDICT_BEYOND_TOL) return j->pass;
    onp_noise n;
    if (!r64 && scaled_noise(fs, k, &f->out[k], &n)) { /* float64 beats a one-ulp estimate */
        if (onp_judge_value(&f->out[k], got, NULL, &n, &jo, m, j, &ce)) return 0;
        return j->pass;
    }
    if (!*p_state) *p_state = perturbed_run(s, f, p) ? -1 : 1;
    if (*p_state != 1 || onp_noise_spread(got, &p[k], &n, &ce) != 0) return 0;
    if (onp_judge_value(&f->out[k], got, NULL, &n, &jo, m, j, &ce)) return 0;
    return j->pass;
}

/* judge_mj into x (compared, pass, metrics, judgment), as the near-tie
 * reorder over the fixture's outputs reads them (judge.h). */
static int judge_out(onp_session *s, const onp_fixset *fs, const probe_fx *f, size_t k,
                     const onp_tensor *got, const onp_probe_opts *o, onp_tensor *p, int *p_state,
                     double *max_abs, onp_output_verdict *x)
{
    memset(x, 0, sizeof *x);
    x->pass = judge_mj(s, fs, f, k, got, o, p, p_state, max_abs, &x->m, &x->j);
    x->compared = x->pass || isfinite(*max_abs);
    return x->pass;
}

/* Where fixture f fails against eager (ov[0..f->n_out) judged, some not
 * passing) and has a tie-ordered reference, ORT's outputs a[] judged
 * against it as check judges them (onp_judge_fixture: the same rules, the
 * near-tie reorder, no float64 noise: the capture's describes eager's
 * selection); when every output passes, ov[] and mas[] become that
 * judgment.  -1 out of memory. */
static int judge_tie_ordered(onp_session *s, const probe_fx *f, const onp_tensor *a, size_t n_out,
                             const onp_probe_opts *o, onp_tensor *p, int *p_state,
                             onp_output_verdict *ov, double *mas)
{
    int failing = 0;
    for (size_t k = 0; k < f->n_out; k++) failing |= !ov[k].pass;
    if (!failing || !f->tie || f->n_out > n_out) return 0;
    probe_fx t = *f;
    t.out = f->tie;
    t.ref64 = NULL;
    onp_fixset none = {0, NULL}; /* no float64 noise scaled from the other fixtures */
    onp_output_verdict *tv = calloc(f->n_out, sizeof *tv);
    double *tm = calloc(f->n_out, sizeof *tm);
    if (!tv || !tm) {
        free(tv);
        free(tm);
        return -1;
    }
    for (size_t k = 0; k < f->n_out; k++)
        judge_out(s, &none, &t, k, &a[k], o, p, p_state, &tm[k], &tv[k]);
    onp_judge_near_tie_reorder(t.out, a, f->n_out, tv, 0);
    int all = 1;
    for (size_t k = 0; k < f->n_out; k++) all &= tv[k].pass;
    if (all) {
        memcpy(ov, tv, f->n_out * sizeof *ov);
        memcpy(mas, tm, f->n_out * sizeof *mas);
    }
    free(tv);
    free(tm);
    return 0;
}

/* Run every fixture on session s (twice when `twice`) and compare. */
int probe_eval_session(onp_session *s, const onp_fixset *fs, const onp_probe_opts *o, int twice,
                       probe_evalres *r, onp_error *e)
{
    size_t n_out = onp_session_output_count(s);
    onp_tensor *a = calloc(n_out ? n_out : 1, sizeof *a);
    onp_tensor *b = calloc(n_out ? n_out : 1, sizeof *b);
    onp_tensor *pb = calloc(n_out ? n_out : 1, sizeof *pb); /* the perturbed run */
    if (!a || !b || !pb) {
        free(a);
        free(b);
        free(pb);
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    }
    int p_state = 0; /* pb: 1 holds the perturbed run's outputs (judge_out) */
    r->pass = 1;
    r->deterministic = 1;
    r->nondet_fixture = -1;
    for (size_t k = 0; r->cells && k < r->n_cells; k++) r->cells[k] = (onp_sweep_cell){1, 0, -1};
    for (size_t i = 0; i < fs->n; i++) {
        const probe_fx *f = &fs->f[i];
        onp_error re;
        int st = 0;
        if (onp_session_run(s, f->in, f->n_in, NULL, 0, a, &re)) {
            r->pass = 0;
            if (r->fix_status) r->fix_status[i] = 2;
            if (!r->error[0])
                snprintf(r->error, sizeof r->error, "fixture %d: %.480s", f->index, re.msg);
            for (size_t k = 0; r->cells && k < r->n_cells; k++) {
                r->cells[k].pass = 0;
                r->cells[k].max_abs = INFINITY;
                if (r->cells[k].fail_fixture < 0) r->cells[k].fail_fixture = f->index;
            }
            continue;
        }
        if (twice && onp_session_run(s, f->in, f->n_in, NULL, 0, b, &re)) {
            /* the first run worked, the same inputs again did not (a crash
             * or a timeout that comes and goes): not reproducible */
            if (r->deterministic) {
                r->deterministic = 0;
                r->nondet_fixture = f->index;
                snprintf(r->nondet_output, sizeof r->nondet_output, "(second run failed: %.200s)",
                         re.msg);
                r->nondet_max_abs = INFINITY;
            }
        } else if (twice) {
            for (size_t k = 0; k < n_out && r->deterministic; k++)
                if (!onp_tensor_equal(&a[k], &b[k])) {
                    r->deterministic = 0;
                    r->nondet_fixture = f->index;
                    snprintf(r->nondet_output, sizeof r->nondet_output, "%s",
                             onp_session_output(s, k)->name);
                    r->nondet_max_abs = diff_abs(&a[k], &b[k]);
                }
            probe_release_all(b, n_out);
        }
        p_state = 0;
        onp_output_verdict *ov = calloc(f->n_out ? f->n_out : 1, sizeof *ov);
        double *mas = calloc(f->n_out ? f->n_out : 1, sizeof *mas);
        if (!ov || !mas) {
            free(ov);
            free(mas);
            goto nomem;
        }
        for (size_t k = 0; k < f->n_out; k++) {
            mas[k] = INFINITY;
            if (k < n_out) judge_out(s, fs, f, k, &a[k], o, pb, &p_state, &mas[k], &ov[k]);
        }
        /* the same detections in another order among near-tied scores, as
         * check judges them */
        if (f->n_out <= n_out) onp_judge_near_tie_reorder(f->out, a, f->n_out, ov, 0);
        /* or another choice among exact ties: eager's, rerun in ONNX's order */
        int nomem = judge_tie_ordered(s, f, a, n_out, o, pb, &p_state, ov, mas);
        for (size_t k = 0; k < f->n_out; k++) {
            int ok = ov[k].pass;
            double ma = mas[k];
            if (!ok) st = 1;
            if (r->cells && k < r->n_cells) {
                onp_sweep_cell *c = &r->cells[k];
                if (ma > c->max_abs || isnan(ma)) c->max_abs = ma;
                if (!ok) {
                    c->pass = 0;
                    if (c->fail_fixture < 0) c->fail_fixture = f->index;
                }
            }
        }
        free(ov);
        free(mas);
        if (nomem) goto nomem;
        if (st) r->pass = 0;
        if (r->fix_status) r->fix_status[i] = st;
        probe_release_all(a, n_out);
        if (p_state == 1) probe_release_all(pb, n_out);
    }
    free(a);
    free(pb);
    free(b);
    return 0;
nomem:
    probe_release_all(a, n_out);
    if (p_state == 1) probe_release_all(pb, n_out);
    free(a);
    free(pb);
    free(b);
    return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
}

/* Open a session with `so` and evaluate it.  A session that cannot open is
 * r->opened = 0 with the message, not an error. */
int probe_eval_config(onp_ort *ort, const char *model, const onp_fixset *fs,
                      const onp_probe_opts *o, const onp_session_opts *so, int twice,
                      probe_evalres *r, onp_error *e)
{
    onp_session *s;
    onp_error se;
    if (onp_session_open(ort, model, so, &s, &se)) {
        r->opened = 0;
        r->pass = 0;
        snprintf(r->error, sizeof r->error, "%.500s", se.msg);
        return 0;
    }
    r->opened = 1;
    snprintf(r->provider, sizeof r->provider, "%s", onp_session_describe(s)->provider);
    int rc = probe_eval_session(s, fs, o, twice, r, e);
    onp_session_close(s);
    return rc;
}

/* 1 when `p` names ORT's CPU provider (NULL and "" do: the default). */
int probe_is_cpu(const char *p)
{
    return !p || !p[0] || !strcasecmp(p, "cpu") || !strcasecmp(p, "CPUExecutionProvider");
}

/* The session options of one configuration: the caller's, with `provider`
 * (provider options dropped for the CPU, which takes none) and no
 * optimized-model path (the sweep saves graphs itself). */
onp_session_opts probe_config_session(const onp_probe_opts *o, const char *provider)
{
    onp_session_opts so = o->session;
    so.provider = provider;
    if (probe_is_cpu(provider)) {
        so.provider_opts = NULL;
        so.n_provider_opts = 0;
    }
    so.optimized_model_path = NULL;
    return so;
}

/* `base` plus one config entry; *cfg is the caller's to free. */
int probe_with_entry(const onp_session_opts *base, const char *entry, onp_session_opts *so,
                     const char ***cfg, onp_error *e)
{
    *cfg = calloc(base->n_config + 1, sizeof **cfg);
    if (!*cfg) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    for (size_t i = 0; i < base->n_config; i++) (*cfg)[i] = base->config[i];
    (*cfg)[base->n_config] = entry;
    *so = *base;
    so->config = *cfg;
    so->n_config = base->n_config + 1;
    return 0;
}
