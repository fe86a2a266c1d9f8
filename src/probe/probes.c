/*
 * probes.c — the probes (onp_probe_run): one session at the caller's
 * options, every fixture run twice (determinism), fixtures grouped by input
 * shape (does only the traced shape pass? do fixtures of one shape differ?),
 * and a batched fixture split into samples run one at a time (batch
 * invariance).  Evidence for diagnose's causes.  Never prints.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_int.h"

void onp_probe_opts_init(onp_probe_opts *o)
{
    memset(o, 0, sizeof *o);
    o->rtol = o->atol = -1;
    o->export_fixture = -1;
    o->find_optimizer = 1;
}

/* A tensor viewing sample `s` of t along dim 0 (no copy, no owner). */
static onp_tensor sample_view(const onp_tensor *t, int64_t s)
{
    onp_tensor v = *t;
    size_t per = t->dims[0] ? t->nbytes / (size_t)t->dims[0] : 0;
    v.dims[0] = 1;
    v.count = t->dims[0] ? t->count / t->dims[0] : 0;
    v.nbytes = per;
    v.data = (uint8_t *)t->data + per * (size_t)s;
    v.name = NULL;
    v.free_fn = NULL;
    v.owner = NULL;
    v.strings = NULL;
    return v;
}

static int splittable(const probe_fx *f)
{
    if (!f->n_in) return 0;
    int64_t n = -1;
    for (size_t k = 0; k < f->n_in; k++) {
        const onp_tensor *t = &f->in[k];
        if (t->rank < 1 || t->dtype == ONP_STRING || !onp_dtype_size(t->dtype)) return 0;
        if (n < 0) n = t->dims[0];
        if (t->dims[0] != n) return 0;
    }
    return n > 1;
}

/* Split fixture f into samples, run each alone, compare with the batched
 * run under the dtype tolerance. */
static int batch_probe(onp_session *s, const probe_fx *f, const onp_probe_opts *o,
                       onp_probe_result *r, onp_error *e)
{
    size_t n_out = onp_session_output_count(s);
    onp_tensor *full = calloc(n_out ? n_out : 1, sizeof *full);
    onp_tensor *one = calloc(n_out ? n_out : 1, sizeof *one);
    onp_tensor *in = calloc(f->n_in, sizeof *in);
    int rc = 0;
    if (!full || !one || !in) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        goto done;
    }
    /* an export static in dim 0 by design takes its one batch size: running
     * one sample alone tests the declaration, not the model */
    int any_dynamic = 0;
    for (size_t k = 0; k < onp_session_input_count(s); k++) {
        const onp_ort_io *io = onp_session_input(s, k);
        if (io->rank == 0 || io->dims[0] < 0) any_dynamic = 1;
    }
    if (!any_dynamic) {
        snprintf(r->batch_note, sizeof r->batch_note,
                 "every input declares a static dim 0 (the export takes one batch "
                 "size)");
        goto done;
    }
    r->batch_tested = 1;
    r->batch_fixture = f->index;
    r->batch_pass = 1;
    onp_error re;
    if (onp_session_run(s, f->in, f->n_in, NULL, 0, full, &re)) {
        r->batch_tested = 0;
        snprintf(r->batch_note, sizeof r->batch_note, "the batched fixture does not run: %.400s",
                 re.msg);
        goto done;
    }
    int64_t n = f->in[0].dims[0];
    for (int64_t smp = 0; smp < n && r->batch_pass; smp++) {
        for (size_t k = 0; k < f->n_in; k++) in[k] = sample_view(&f->in[k], smp);
        if (onp_session_run(s, in, f->n_in, NULL, 0, one, &re)) {
            r->batch_pass = 0;
            r->batch_shape_error = 1;
            snprintf(r->batch_note, sizeof r->batch_note,
                     "sample %lld of fixture %d alone (dim 0 = 1) is refused: %.400s",
                     (long long)smp, f->index, re.msg);
            break;
        }
        for (size_t k = 0; k < n_out && r->batch_pass; k++) {
            const char *nm = onp_session_output(s, k)->name;
            if (full[k].rank < 1 || full[k].dims[0] != n) continue; /* not per-sample */
            onp_tensor want = sample_view(&full[k], smp);
            onp_metrics m;
            onp_error ce;
            if (one[k].rank != want.rank ||
                memcmp(one[k].dims, want.dims, sizeof(int64_t) * (size_t)want.rank)) {
                char a[96], b[96];
                r->batch_pass = 0;
                r->batch_shape_error = 1;
                r->batch_max_abs = INFINITY;
                snprintf(r->batch_output, sizeof r->batch_output, "%s", nm);
                snprintf(r->batch_note, sizeof r->batch_note,
                         "output %s of sample %lld alone has shape %s, its slice of the batch "
                         "%s",
                         nm, (long long)smp, onp_shape_str(one[k].rank, one[k].dims, a, sizeof a),
                         onp_shape_str(want.rank, want.dims, b, sizeof b));
            } else if (!onp_compare(&want, &one[k], probe_tol_of(o, want.dtype), &m, &ce) &&
                       !m.pass) {
                r->batch_pass = 0;
                r->batch_max_abs = m.max_abs;
                snprintf(r->batch_output, sizeof r->batch_output, "%s", nm);
                snprintf(r->batch_note, sizeof r->batch_note,
                         "output %s of sample %lld alone differs from its slice of the batched "
                         "run by %.3g (max_abs)",
                         nm, (long long)smp, m.max_abs);
            }
        }
        probe_release_all(one, n_out);
    }
    if (r->batch_pass)
        snprintf(r->batch_note, sizeof r->batch_note,
                 "the %lld samples of fixture %d run one at a time agree with the batched run",
                 (long long)n, f->index);
done:
    probe_release_all(full, n_out);
    probe_release_all(one, n_out);
    free(full);
    free(one);
    free(in);
    return rc;
}

/* 1 when fixtures a and b feed inputs of identical shapes. */
static int same_shapes(const probe_fx *a, const probe_fx *b)
{
    if (a->n_in != b->n_in) return 0;
    for (size_t k = 0; k < a->n_in; k++)
        if (a->in[k].rank != b->in[k].rank ||
            memcmp(a->in[k].dims, b->in[k].dims, sizeof(int64_t) * (size_t)a->in[k].rank))
            return 0;
    return 1;
}

int onp_probe_run(onp_ort *ort, const char *model_path, const onp_fixset *fs,
                  const onp_probe_opts *o, onp_probe_result *r, onp_error *e)
{
    memset(r, 0, sizeof *r);
    r->n_fixtures = fs->n;
    r->det_fixture = r->batch_fixture = r->shape_fail_fixture = r->first_fail_fixture = -1;
    r->dep_pass_fixture = r->dep_fail_fixture = -1;
    r->deterministic = 1;
    onp_session *s;
    onp_error se;
    if (onp_session_open(ort, model_path, &o->session, &s, &se)) {
        snprintf(r->error, sizeof r->error, "%.500s", se.msg);
        r->error_code = se.code;
        return 0;
    }
    r->ran = 1;
    int *st = calloc(fs->n, sizeof *st);
    int *grp = calloc(fs->n, sizeof *grp);
    if (!st || !grp) {
        free(st);
        free(grp);
        onp_session_close(s);
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    }
    probe_evalres er;
    memset(&er, 0, sizeof er);
    er.fix_status = st;
    int rc = probe_eval_session(s, fs, o, 1, &er, e);
    if (!rc) {
        r->deterministic = er.deterministic;
        r->det_fixture = er.nondet_fixture;
        snprintf(r->det_output, sizeof r->det_output, "%s", er.nondet_output);
        r->det_max_abs = er.nondet_max_abs;
        for (size_t i = 0; i < fs->n; i++) {
            if (st[i] && r->first_fail_fixture < 0) r->first_fail_fixture = fs->f[i].index;
            if (st[i]) r->fixtures_failed++;
            if (st[i] == 2) r->fixtures_error++;
        }
    }
    /* shape groups: grp[i] = index of the first fixture with i's shapes */
    size_t ex = 0;
    for (size_t i = 0; i < fs->n; i++)
        if (fs->f[i].index == o->export_fixture) ex = i;
    for (size_t i = 0; !rc && i < fs->n; i++) {
        grp[i] = (int)i;
        for (size_t j = 0; j < i; j++)
            if (same_shapes(&fs->f[i], &fs->f[j])) {
                grp[i] = grp[j];
                break;
            }
        if (grp[i] == (int)i) r->n_shape_groups++;
    }
    if (!rc && r->n_shape_groups > 1 && r->fixtures_failed) {
        int ok = 1, other_fail = -1;
        for (size_t i = 0; i < fs->n; i++) {
            if (grp[i] == grp[ex] && st[i]) ok = 0;
            if (grp[i] != grp[ex] && st[i] && other_fail < 0) other_fail = (int)i;
        }
        if (ok && other_fail >= 0) {
            char a[96], b[96];
            r->shape_dependent = 1;
            r->shape_fail_fixture = fs->f[other_fail].index;
            snprintf(r->shape_note, sizeof r->shape_note,
                     "every fixture shaped like the traced fixture %d (%s) passes; fixture %d "
                     "(%s) %s",
                     fs->f[ex].index,
                     onp_shape_str(fs->f[ex].in[0].rank, fs->f[ex].in[0].dims, a, sizeof a),
                     fs->f[other_fail].index,
                     onp_shape_str(fs->f[other_fail].in[0].rank, fs->f[other_fail].in[0].dims, b,
                                   sizeof b),
                     st[other_fail] == 2 ? "is refused by ONNX Runtime" : "fails");
        }
    }
    /* fixture dependence: one shape group with a numeric pass and fail */
    for (size_t i = 0; !rc && i < fs->n && !r->fixture_dependent; i++)
        for (size_t j = 0; j < fs->n; j++)
            if (grp[i] == grp[j] && st[i] == 0 && st[j] == 1) {
                char a[96];
                r->fixture_dependent = 1;
                r->dep_pass_fixture = fs->f[i].index;
                r->dep_fail_fixture = fs->f[j].index;
                snprintf(r->dep_note, sizeof r->dep_note,
                         "fixtures %d and %d have the same input shapes (%s); %d passes, %d "
                         "fails",
                         fs->f[i].index, fs->f[j].index,
                         onp_shape_str(fs->f[i].in[0].rank, fs->f[i].in[0].dims, a, sizeof a),
                         fs->f[i].index, fs->f[j].index);
                break;
            }
    /* batch invariance: prefer the traced fixture, else any batched one */
    long pick = -1;
    if (splittable(&fs->f[ex])) pick = (long)ex;
    for (size_t i = 0; pick < 0 && i < fs->n; i++)
        if (splittable(&fs->f[i])) pick = (long)i;
    if (!rc && pick >= 0) rc = batch_probe(s, &fs->f[pick], o, r, e);
    if (!rc && pick < 0)
        snprintf(r->batch_note, sizeof r->batch_note,
                 "no fixture has dim 0 > 1 on every input: nothing to split");
    free(st);
    free(grp);
    onp_session_close(s);
    return rc;
}
