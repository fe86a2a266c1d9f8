/*
 * fixture.c — the one fixture loop (judge.h): run a test_data_set_K through
 * an ORT session, judge each output with the noise rule, find the noise
 * (float64 reference file, noise book, or a rerun on one-ulp perturbed
 * inputs), and class top-1 flips.  check and gate both call it.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnxparity/judge.h"
#include "tfile/npy_int.h"

static const char *const status_names[] = {"pass", "fail", "error"};
_Static_assert(sizeof status_names / sizeof *status_names == ONP_FIXTURE_STATUS_COUNT,
               "status_names");

static const char *const rerun_names[] = {"not-needed",        "ran",    "off",
                                          "no-floating-input", "failed", "fixture-not-run"};
_Static_assert(sizeof rerun_names / sizeof *rerun_names == ONP_RERUN_COUNT, "rerun_names");

const char *onp_rerun_name(onp_rerun r)
{
    return (unsigned)r < ONP_RERUN_COUNT ? rerun_names[r] : "?";
}

static const char *const tie_order_names[] = {"none", "matched", "differs"};
_Static_assert(sizeof tie_order_names / sizeof *tie_order_names == ONP_TIE_ORDER_COUNT,
               "tie_order_names");

const char *onp_tie_order_name(onp_tie_order t)
{
    return (unsigned)t < ONP_TIE_ORDER_COUNT ? tie_order_names[t] : "?";
}

void onp_tie_order_counts(const onp_fixture_verdict *fix, size_t n,
                          size_t count[ONP_TIE_ORDER_COUNT])
{
    memset(count, 0, ONP_TIE_ORDER_COUNT * sizeof *count);
    for (size_t i = 0; i < n; i++)
        if ((unsigned)fix[i].tie_order < ONP_TIE_ORDER_COUNT) count[fix[i].tie_order]++;
}

const char *onp_fixture_status_name(onp_fixture_status s)
{
    return (unsigned)s < ONP_FIXTURE_STATUS_COUNT ? status_names[s] : "?";
}

void onp_judge_fixture_opts_init(onp_judge_fixture_opts *o)
{
    memset(o, 0, sizeof *o);
    o->topk = -1;
}

void onp_fixture_verdict_release(onp_fixture_verdict *r)
{
    if (!r) return;
    free(r->outs);
    r->outs = NULL;
    r->n_out = 0;
}

static onp_tol tol_of(const onp_judge_fixture_opts *o, const char *name, int32_t dtype)
{
    return o->tol ? o->tol(o->tol_ctx, name, dtype) : onp_tol_default(dtype);
}

static int is_floating(int32_t dtype)
{
    return onp_dtype_eps(dtype) > 0;
}

/* Per row of an [N, C] (or [C]) float tensor pair: the smallest eager
 * top-1/top-2 margin, and how many flipped rows (argmax differs) have an
 * eager margin between the two labels at most `envelope`. */
static void flip_margins(const onp_tensor *want, const onp_tensor *got, double envelope,
                         onp_output_verdict *x)
{
    int64_t rows = want->rank == 2 ? want->dims[0] : 1;
    int64_t cls = want->rank == 2 ? want->dims[1] : want->dims[0];
    x->min_margin = INFINITY;
    x->noise_flips = 0;
    if (cls < 2 || !is_floating(want->dtype) || !is_floating(got->dtype)) return;
    for (int64_t r = 0; r < rows; r++) {
        int64_t ea = -1, aa = -1;
        double e1 = -INFINITY, e2 = -INFINITY, a1 = -INFINITY;
        for (int64_t c = 0; c < cls; c++) {
            double ev = onp_tensor_get_f64(want, r * cls + c);
            double av = onp_tensor_get_f64(got, r * cls + c);
            if (!isnan(ev)) {
                if (ea < 0 || ev > e1)
                    e2 = e1, e1 = ev, ea = c;
                else if (ev > e2)
                    e2 = ev;
            }
            if (!isnan(av) && (aa < 0 || av > a1)) a1 = av, aa = c;
        }
        if (ea >= 0 && isfinite(e1 - e2) && e1 - e2 < x->min_margin) x->min_margin = e1 - e2;
        if (ea >= 0 && aa >= 0 && ea != aa) {
            double m = e1 - onp_tensor_get_f64(want, r * cls + aa);
            if (envelope > 0 && m <= envelope) x->noise_flips++;
        }
    }
}

/* Words of an output's name that say it holds something other than class
 * scores; the same list as python/onnxparity/_roles.py NOT_WORDS (a test
 * holds them equal). */
static const char *const not_logits_words[] = {
    "anchor",      "anchors",   "bbox",     "bboxes", "box",    "boxes",      "coord",
    "coordinates", "coords",    "delta",    "deltas", "depth",  "embeddings", "embeds",
    "embedding",   "feature",   "features", "flow",   "hidden", "keypoint",   "keypoints",
    "landmark",    "landmarks", "mask",     "masks",  "offset", "offsets",    "pooler",
    "regression",  "state",     "states"};

int onp_output_name_not_logits(const char *name)
{
    char w[64];
    size_t n = 0;
    for (const char *p = name;; p++) {
        char ch = *p;
        int alnum =
            (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        if (alnum && n + 1 < sizeof w) {
            w[n++] = (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
            continue;
        }
        if (alnum) continue; /* a word too long for any of the list */
        w[n] = 0;
        for (size_t i = 0; n && i < sizeof not_logits_words / sizeof *not_logits_words; i++)
            if (!strcmp(w, not_logits_words[i])) return 1;
        n = 0;
        if (!ch) return 0;
    }
}

/* Whether --top-k auto takes output x for logits (docs/compare.md, "Which
 * outputs are logits"): shaped [N, C] with C >= 2, and the capture's
 * classing (parity.json) says so, or, where it classed nothing, no word of
 * the name says otherwise. */
static int auto_logits(const onp_judge_fixture_opts *o, const onp_tensor *want,
                       const onp_output_verdict *x)
{
    if (!(want->rank == 2 && want->dims[1] > 1 && x->m.shape_ok)) return 0;
    int role = onp_noisebook_logits(o->noise, x->name);
    return role >= 0 ? role : !onp_output_name_not_logits(x->name);
}

/* Top-K and the flip classes for output x (after its judgment). */
static void judge_topk(const onp_judge_fixture_opts *o, const onp_tensor *want,
                       const onp_tensor *got, onp_output_verdict *x)
{
    int is_cls = auto_logits(o, want, x);
    int k_top = o->topk == -1 ? (is_cls ? 1 : 0) : o->topk;
    onp_error ce;
    x->has_topk = 0;
    if (k_top > 0 && x->m.shape_ok && (want->rank == 1 || want->rank == 2) &&
        !onp_compare_topk(want, got, k_top, &x->tk, &ce)) {
        x->has_topk = 1;
        flip_margins(want, got, x->j.envelope_max, x);
    }
}

/* Append to x's note that the float64 reference was set aside (issue 36:
 * an all-NaN reference had passed a shifted output as noise), and what
 * gave the noise instead. */
static void note_ref_refused(onp_output_verdict *x)
{
    if (!x->j.ref_refused) return;
    size_t u = strlen(x->note);
    snprintf(x->note + u, sizeof x->note - u,
             "%sfloat64 reference refused as a noise source: %lld element(s) NaN or infinite in "
             "only one of float64 and float32 eager; %s%s",
             u ? "; " : "", (long long)x->j.ref_refused,
             x->j.noise.src != ONP_NOISE_NONE ? "noise from " : "no other noise estimate",
             x->j.noise.src != ONP_NOISE_NONE ? onp_noise_src_name(x->j.noise.src) : "");
}

/* Append to x's note that its float64 noise is wider than rounding (noise.h,
 * ill_conditioned): the comparison is held against it and proves little. */
static void note_ill_conditioned(onp_output_verdict *x)
{
    if (!x->j.ill_conditioned || x->j.verdict != ONP_VERDICT_WITHIN_NOISE) return;
    size_t u = strlen(x->note);
    double rel = x->j.noise.scale_max > 0 ? x->j.noise.max_abs / x->j.noise.scale_max : 0;
    snprintf(x->note + u, sizeof x->note - u,
             "%sill-conditioned: float32 eager is %.3g of the value's scale from float64 "
             "(%.3g at scale %.3g; a sort, top-k, NMS or argmax on near-ties took another path): "
             "judged against that %s noise, which says little about the export",
             u ? "; " : "", rel, x->j.noise.max_abs, x->j.noise.scale_max,
             onp_noise_src_name(x->j.noise.src));
}

/* Verdict, pass and note of x from its judgment and top-K. */
static void settle(onp_output_verdict *x)
{
    x->pass = x->j.pass && !(x->has_topk && x->tk.flipped);
    x->note[0] = 0;
    if (x->j.noise_refused && !x->j.pass)
        snprintf(x->note, sizeof x->note,
                 "no noise estimate: float32 eager is more than %g of the value's scale from the "
                 "float64 reference, and not reproducible run to run (the capture's determinism "
                 "rerun): not rounding noise",
                 ONP_NOISE_FLOAT64_MAX_REL);
    else if (!x->m.shape_ok)
        snprintf(x->note, sizeof x->note, "shape differs");
    else if (!x->m.dtype_ok)
        snprintf(x->note, sizeof x->note, "dtype differs: %s vs %s",
                 onp_dtype_name(x->m.expected_dtype), onp_dtype_name(x->m.actual_dtype));
    else if (x->has_topk && x->tk.flipped)
        snprintf(x->note, sizeof x->note, "%lld of %lld top-1 labels flipped%s",
                 (long long)x->tk.flipped, (long long)x->tk.rows,
                 x->noise_flips == x->tk.flipped ? " (noise-driven: the eager margin is inside "
                                                   "the noise envelope)"
                                                 : "");
    note_ref_refused(x);
    note_ill_conditioned(x);
}

/* Whether output x needs the ORT-side estimate: beyond the tolerance with no
 * noise known, and no float64 statistic given for it.  A float64 statistic
 * refused as a noise source (eager not reproducible) is not replaced by a
 * one-ulp rerun, which measures ORT's rounding only: the float64 source
 * beats it, whatever it said (noise.h). */
static int needs_estimate(const onp_output_verdict *x)
{
    return x->compared && x->j.verdict == ONP_VERDICT_BEYOND_TOL && !x->j.noise_refused;
}

/* Rerun f with every floating input moved by one ulp; for each output that
 * needs it (needs_estimate), take the spread as its noise and judge again.
 * No rerun at all when no output needs one. */
static int estimate(onp_session *s, const onp_fixture_verdict *r, const onp_tensor *in, size_t n_in,
                    onp_tensor *want, onp_tensor *got, size_t n_run,
                    const onp_judge_fixture_opts *o, onp_output_verdict *outs, int *did,
                    onp_rerun *why)
{
    *did = 0;
    int any_float = 0;
    for (size_t k = 0; k < n_in; k++) any_float |= is_floating(in[k].dtype);
    *why = ONP_RERUN_NO_FLOAT_INPUT;
    if (!any_float) return 0;
    *why = ONP_RERUN_FAILED; /* until the run below succeeds */
    onp_tensor *pin = calloc(n_in, sizeof *pin);
    onp_tensor *got2 = calloc(n_run ? n_run : 1, sizeof *got2);
    int rc = 0;
    onp_error ce;
    if (!pin || !got2) {
        rc = -1;
        goto done;
    }
    for (size_t k = 0; k < n_in; k++)
        if (onp_perturbed_input(&pin[k], &in[k], k, &ce)) {
            rc = -1;
            goto done;
        }
    onp_error re;
    onp_error_clear(&re);
    if (onp_session_run(s, pin, n_in, NULL, 0, got2, &re))
        goto done; /* no estimate: the outputs stay beyond the tolerance */
    *did = 1;
    *why = ONP_RERUN_RAN;
    for (size_t k = 0; k < r->n_out && k < n_run; k++) {
        onp_output_verdict *x = &outs[k];
        if (!needs_estimate(x)) continue;
        onp_noise n;
        int sp = onp_noise_spread(&got[k], &got2[k], &n, &ce);
        if (sp == 1) {
            char a[32], b[32];
            snprintf(a, sizeof a, "%.3g", n.max_abs);
            snprintf(b, sizeof b, "%.3g", n.scale_max);
            snprintf(x->note, sizeof x->note,
                     "no noise estimate: a one-ulp change of the inputs moved this output by %s "
                     "(its scale %s): not reproducible, or ill-conditioned",
                     a, b);
            x->unreproducible = 1;
            note_ref_refused(x);
        }
        if (sp) continue;
        onp_judge_opts jo = {tol_of(o, x->name, want[k].dtype), o->strict, o->atol_given,
                             onp_noisebook_eager_random(o->noise)};
        int64_t refused = x->j.ref_refused; /* the reference set aside before this estimate */
        if (onp_judge_value(&want[k], &got[k], NULL, &n, &jo, &x->m, &x->j, &ce)) continue;
        x->j.ref_refused = refused;
        judge_topk(o, &want[k], &got[k], x);
        settle(x);
    }
done:
    for (size_t k = 0; pin && k < n_in; k++) onp_tensor_release(&pin[k]);
    for (size_t k = 0; got2 && k < n_run; k++) onp_tensor_release(&got2[k]);
    free(pin);
    free(got2);
    return rc;
}

/* x judged again at the target's precision p (judge.h: prec_envelope,
 * prec_within): the float32 noise scaled by eps(p) / eps(dtype), the floor
 * at eps(p).  Nothing for a float32 target, an exact type, no noise. */
static void judge_precision(const onp_precision *p, int32_t dtype, onp_output_verdict *x)
{
    double eps = onp_dtype_eps(dtype);
    x->prec_envelope = 0;
    x->prec_within = 0;
    if (!p->lowered || eps <= 0 || p->eps <= eps || !x->compared ||
        x->j.noise.src == ONP_NOISE_NONE)
        return;
    double r = p->eps / eps;
    onp_noise n = x->j.noise;
    n.max_abs *= r;
    n.rms *= r;
    n.q999 *= r;
    onp_judgment j = x->j;
    j.eager_err_max *= r;
    j.eager_err_rms *= r;
    onp_noise_rule(&x->m, &n, p->eps, 0, &j);
    x->prec_envelope = j.envelope_max;
    x->prec_within = j.verdict != ONP_VERDICT_NOT_NUMERIC && !j.beyond_envelope;
}

/* 1 when some input of in[0..n) has another dtype than the graph input it
 * feeds (by position) declares: the pre-run check refuses it. */
static int dtype_differs(const onp_session *s, const onp_tensor *in, size_t n)
{
    size_t n_in = onp_session_input_count(s);
    for (size_t k = 0; k < n && k < n_in; k++) {
        const onp_ort_io *io = onp_session_input(s, k);
        if (io->kind == ONP_ORT_KIND_TENSOR && in[k].dtype != io->dtype) return 1;
    }
    return 0;
}

/* Row r of `got` against row q of `want` (dim 0 rows of equal shapes) for
 * output x: integers exactly, floating values within the tolerance used or
 * the noise envelope, whichever is wider. */
static int same_row(const onp_tensor *want, const onp_tensor *got, const onp_output_verdict *x,
                    int64_t r, int64_t q)
{
    int64_t w = want->dims[0] ? want->count / want->dims[0] : 0;
    int fl = is_floating(want->dtype);
    for (int64_t i = 0; i < w; i++) {
        double a = onp_tensor_get_f64(want, q * w + i), b = onp_tensor_get_f64(got, r * w + i);
        double t = x->j.tol_used.atol + x->j.tol_used.rtol * fabs(a);
        if (x->j.envelope_max > t) t = x->j.envelope_max;
        if (fl ? !(fabs(a - b) <= t) : a != b) return 0;
    }
    return 1;
}

/* The sort key of a set of row-aligned outputs (issue 35: detections): a
 * floating rank-1 output that passes, of N >= 2 values non-increasing in
 * eager (scores sorted best first) with at least one strict decrease (a
 * constant output orders nothing); -1 when none. */
static long sort_key(const onp_tensor *want, size_t n, const onp_output_verdict *outs)
{
    for (size_t k = 0; k < n; k++) {
        const onp_tensor *t = &want[k];
        const onp_dtype_desc *d = onp_dtype_info(t->dtype);
        if (!outs[k].compared || !outs[k].pass || !d || d->kind != ONP_KIND_FLOAT || t->rank != 1 ||
            t->dims[0] < 2)
            continue;
        int64_t i = 1, drops = 0;
        for (; i < t->count; i++) {
            double a = onp_tensor_get_f64(t, i - 1), b = onp_tensor_get_f64(t, i);
            if (!(b <= a)) break; /* NaN too */
            drops += b < a;
        }
        if (i == t->count && drops) return (long)k;
    }
    return -1;
}

/* Whether output k takes part in a reorder: compared, same shape, rows
 * along dim 0 as many as the key's, real numbers (float, integer, bool:
 * not strings, not complex). */
static int row_aligned(const onp_tensor *want, const onp_output_verdict *x, int64_t N)
{
    const onp_dtype_desc *d = onp_dtype_info(want->dtype);
    return x->compared && x->m.shape_ok && x->m.dtype_ok && want->rank >= 1 && want->dims[0] == N &&
           d &&
           (d->kind == ONP_KIND_FLOAT || d->kind == ONP_KIND_SINT || d->kind == ONP_KIND_UINT ||
            d->kind == ONP_KIND_BOOL);
}

/* How the rows a reorder pairs are sorted: by content (the rows of t[k]
 * for each k with take[k], values in order, NaN last), then by eager's key,
 * best first, then by row. */
typedef struct row_order {
    const onp_tensor *t;
    const int *take;
    size_t n;
    const onp_tensor *key;
} row_order;

static int cmp_f64(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

static int row_cmp(const row_order *o, int64_t r, int64_t q)
{
    for (size_t k = 0; k < o->n; k++) {
        if (!o->take[k]) continue;
        const onp_tensor *t = &o->t[k];
        int64_t w = t->count / t->dims[0];
        for (int64_t i = 0; i < w; i++) {
            int c = cmp_f64(onp_tensor_get_f64(t, r * w + i), onp_tensor_get_f64(t, q * w + i));
            if (c) return c;
        }
    }
    int c = cmp_f64(onp_tensor_get_f64(o->key, q), onp_tensor_get_f64(o->key, r));
    return c ? c : (r > q) - (r < q);
}

/* Sort a[0..n) by o (a merge sort, bottom up; tmp holds n). */
static void sort_rows(const row_order *o, int64_t *a, int64_t *tmp, int64_t n)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = row_cmp(o, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid) tmp[k++] = a[i++];
            while (j < hi) tmp[k++] = a[j++];
        }
        memcpy(a, tmp, (size_t)n * sizeof *a);
    }
}

/* got's rows reordered: row r of the result is row perm[r] of got.
 * 0, or -1 out of memory. */
static int permuted(const onp_tensor *got, const int64_t *perm, onp_tensor *out)
{
    onp_error e;
    if (onp_tensor_alloc(out, got->dtype, got->rank, got->dims, &e)) return -1;
    size_t row = got->dims[0] ? got->nbytes / (size_t)got->dims[0] : 0;
    for (int64_t r = 0; row && r < got->dims[0]; r++)
        memcpy((char *)out->data + (size_t)r * row, (const char *)got->data + (size_t)perm[r] * row,
               row);
    return 0;
}

/* A near-tie reorder (issue 35; docs/compare.md "Near-tie reorder"): the
 * outputs that fail are rows aligned with a sorted key output that passes
 * (a detector's boxes and labels beside its scores), and ORT's rows are
 * eager's rows in another order among near-ties (two detections whose
 * scores are 1e-6 apart, taken in the other order).
 *
 * The rows of the failing outputs that match eager's in place stay; the
 * others (D) must be a permutation of each other: D's rows of ORT and of
 * eager are each sorted by content and paired in that order, so each eager
 * row is used once.  Every pair must be near-tied (eager's key within
 * max(envelope, atol) of the key's at ORT's row) and match element-wise in
 * every row-aligned output.  Each failing output, its ORT rows put back in
 * eager's order, is then judged again by the same judgment (onp_judge_value
 * against the noise it was judged with, and top-K where it had one): it
 * passes, with a note, only when that passes.  O(n log n).  Not under
 * --strict-tol (the tolerance binds). */
void onp_judge_near_tie_reorder(const onp_tensor *want, const onp_tensor *got, size_t n,
                                onp_output_verdict *outs, int strict)
{
    long key = strict ? -1 : sort_key(want, n, outs);
    if (key < 0) return;
    const onp_tensor *kw = &want[key];
    int64_t N = kw->dims[0], moved = 0, first = -1;
    double thr = outs[key].j.envelope_max, gap = 0;
    if (thr < outs[key].j.tol_used.atol) thr = outs[key].j.tol_used.atol;
    int failing = 0;
    for (size_t k = 0; k < n; k++) {
        if (outs[k].pass) continue;
        if (!row_aligned(&want[k], &outs[k], N)) return;
        failing = 1;
    }
    if (!failing) return;
    int *fail = calloc(n, sizeof *fail), *aligned = calloc(n, sizeof *aligned);
    int64_t *dw = malloc((size_t)N * sizeof *dw), *dg = malloc((size_t)N * sizeof *dg);
    int64_t *perm = malloc((size_t)N * sizeof *perm);
    int ok = fail && aligned && dw && dg && perm;
    for (size_t k = 0; ok && k < n; k++) {
        fail[k] = !outs[k].pass;
        aligned[k] = row_aligned(&want[k], &outs[k], N);
    }
    /* D: the rows some failing output does not match in place */
    int64_t nd = 0;
    for (int64_t r = 0; ok && r < N; r++) {
        int differs = 0;
        for (size_t k = 0; k < n && !differs; k++)
            differs = fail[k] && !same_row(&want[k], &got[k], &outs[k], r, r);
        if (differs) dw[nd] = dg[nd] = r, nd++;
    }
    ok = ok && nd > 0;
    if (ok) {
        row_order ow = {want, fail, n, kw}, og = {got, fail, n, kw};
        sort_rows(&ow, dw, perm, nd); /* perm as scratch: set again below */
        sort_rows(&og, dg, perm, nd);
        for (int64_t r = 0; r < N; r++) perm[r] = r;
    }
    for (int64_t i = 0; ok && i < nd; i++) {
        int64_t r = dg[i], q = dw[i]; /* ORT's row r is eager's row q */
        double d = fabs(onp_tensor_get_f64(kw, q) - onp_tensor_get_f64(kw, r));
        if (!(d <= thr) || r == q) {
            ok = 0; /* not near-tied, or a row that matches no other */
            break;
        }
        for (size_t k = 0; k < n && ok; k++)
            if (aligned[k] || k == (size_t)key) ok = same_row(&want[k], &got[k], &outs[k], r, q);
        perm[q] = r;
        if (d > gap) gap = d;
        if (first < 0 || q < first) first = q;
        moved++;
    }
    /* every failing output judged again with ORT's rows in eager's order */
    onp_judgment *rj = ok ? calloc(n, sizeof *rj) : NULL;
    ok = ok && rj;
    for (size_t k = 0; ok && k < n; k++) {
        if (!fail[k]) continue;
        onp_output_verdict *x = &outs[k];
        onp_tensor p;
        if (permuted(&got[k], perm, &p)) {
            ok = 0;
            break;
        }
        onp_judge_opts jo = {x->j.tol_used, 0, 1, 0};
        onp_metrics m;
        onp_error ce;
        const onp_noise *nz = x->j.noise.src != ONP_NOISE_NONE ? &x->j.noise : NULL;
        ok = !onp_judge_value(&want[k], &p, NULL, nz, &jo, &m, &rj[k], &ce) && rj[k].pass;
        if (ok && x->has_topk) {
            onp_topk tk;
            ok = !onp_compare_topk(&want[k], &p, x->tk.k, &tk, &ce) && !tk.flipped;
        }
        onp_tensor_release(&p);
    }
    for (size_t k = 0; ok && k < n; k++) {
        onp_output_verdict *x = &outs[k];
        if (!fail[k]) continue;
        x->pass = 1;
        snprintf(x->note, sizeof x->note,
                 "near-tie reorder: %lld row(s) from row %lld come in another order, each another "
                 "of eager's rows whose %s is within its noise of its own (at most %.3g apart, "
                 "envelope %.3g): with its rows put back in eager's order, %s (gap %.3g)",
                 (long long)moved, (long long)first, outs[key].name, gap, thr,
                 onp_verdict_name(rj[k].verdict), rj[k].gap_max);
    }
    free(rj);
    free(fail);
    free(aligned);
    free(dw);
    free(dg);
    free(perm);
}

/* The expected outputs (and output 0's float64 reference) read while ONNX
 * Runtime runs (issue 34): the run happens in the worker process, or on
 * ORT's threads, and the reading (a copy where a .pb's raw_data is not
 * aligned, the page faults of the file's pages otherwise) would otherwise
 * wait for it.  What is read is what the loop below reads, in the same
 * tensors; each read keeps its own result, met where the loop would have
 * read that file, so a failing read is reported as before and only once
 * the run has succeeded (a run that fails compares nothing: what was read
 * is released unread).  Output 0's reference only: the loop holds one
 * reference at a time, so the peak memory is the loop's own. */
typedef struct prefetch {
    const onp_fixture *f;
    size_t n;         /* outputs to read: want[0..n) */
    onp_tensor *want; /* [n] */
    int *rc;          /* [n] onp_tfile_read's result per output */
    onp_error *err;   /* [n] */
    onp_value_stats *scale; /* [n] onp_value_scale of each output read; output 0's
                               scale_rms too when it has a float64 reference */
    onp_tensor ref0;  /* output 0's float64 reference when ref0_rc == 1 */
    int ref0_rc;      /* onp_fixture_read_ref64's result; 0: none */
    onp_error ref0_err;
    pthread_t th;
    pthread_t th_ref; /* reads ref0 beside the outputs when ref_thread */
    int ref_thread;
} prefetch;

static void prefetch_free(prefetch *p);

static void *prefetch_ref(void *arg)
{
    prefetch *p = arg;
    p->ref0_rc = onp_fixture_read_ref64(p->f, 0, &p->ref0, &p->ref0_err);
    return NULL;
}

/* The outputs and their scales; output 0's reference read by its own
 * thread meanwhile (a float64 reference is twice the output's bytes, and
 * read after the outputs it kept one core busy alone after ORT's run:
 * issue 34), kept only for a floating output 0, whose root mean square
 * the noise rule then needs: measured here too. */
static void *prefetch_main(void *arg)
{
    prefetch *p = arg;
    for (size_t k = 0; k < p->n; k++) {
        p->rc[k] = onp_tfile_read(p->f->outputs[k], NULL, &p->want[k], &p->err[k]);
        if (!p->rc[k]) onp_value_scale(&p->want[k], &p->scale[k]); /* a pass, beside the run */
    }
    int floating0 = !p->rc[0] && is_floating(p->want[0].dtype);
    if (p->ref_thread)
        pthread_join(p->th_ref, NULL);
    else if (floating0)
        prefetch_ref(p);
    if (!floating0) { /* not read for such an output by the loop either */
        onp_tensor_release(&p->ref0);
        p->ref0_rc = 0;
    }
    if (p->ref0_rc == 1) onp_value_scale_rms(&p->want[0], &p->scale[0]);
    return NULL;
}

/* Start reading; 0 when a thread runs it, -1 when there is nothing to
 * read or it could not start (then the loop reads as it always did). */
static int prefetch_start(prefetch *p, const onp_fixture *f, size_t n, onp_tensor *want)
{
    memset(p, 0, sizeof *p);
    if (!n) return -1;
    p->f = f;
    p->n = n;
    p->want = want;
    p->rc = calloc(n, sizeof *p->rc);
    p->err = calloc(n, sizeof *p->err);
    p->scale = calloc(n, sizeof *p->scale);
    if (p->rc && p->err && p->scale && onp_fixture_has_ref64(f, 0)) /* else no thread: a stat */
        p->ref_thread = pthread_create(&p->th_ref, NULL, prefetch_ref, p) == 0;
    if (!p->rc || !p->err || !p->scale || pthread_create(&p->th, NULL, prefetch_main, p) != 0) {
        if (p->ref_thread) pthread_join(p->th_ref, NULL);
        prefetch_free(p);
        p->rc = NULL;
        p->err = NULL;
        p->scale = NULL;
        return -1;
    }
    return 0;
}

/* What the reading did not hand over (output 0's reference when the loop
 * did not reach it), and the results; the outputs read are want[]'s, the
 * caller's to release. */
static void prefetch_free(prefetch *p)
{
    onp_tensor_release(&p->ref0);
    free(p->rc);
    free(p->err);
    free(p->scale);
}

/* Read fixture f's inputs into in[] and their shapes into r->in_shapes.
 * An isolated session's inputs are only passed on (their bytes to the
 * worker, which maps the file itself where it can) or copied (the
 * perturbation, onp_perturbed_input): viewed in the file's map even where
 * raw_data is not aligned, they cost no copy here (issue 34).  An
 * in-process session hands ORT their address: read aligned.  0, or -1
 * with e set; what was read stays in in[] for the caller to release. */
static int read_inputs(onp_session *s, const onp_fixture *f, onp_tensor *in, onp_fixture_verdict *r,
                       onp_error *e)
{
    int views = onp_session_isolated(s);
    for (size_t k = 0; k < f->n_inputs; k++) {
        if (views ? onp_tfile_read_view(f->inputs[k], &in[k], e)
                  : onp_tfile_read(f->inputs[k], NULL, &in[k], e))
            return -1;
        onp_tensor_set_name(&in[k], NULL, e); /* fed by position */
        char sh[96];
        size_t u = strlen(r->in_shapes);
        snprintf(r->in_shapes + u, sizeof r->in_shapes - u, "%s%s", k ? " " : "",
                 onp_shape_str(in[k].rank, in[k].dims, sh, sizeof sh));
    }
    return 0;
}

/* Judge output k of fixture f: want (read here, or taken from pf, the
 * reading beside the run, when pf is not NULL) against got, ORT's, with
 * its float64 reference or its noise-book entry, into x; *beyond set when
 * the value needs the one-ulp estimate.  A value that cannot be compared
 * gets a note and 0; -1 with e set when a file cannot be read. */
static int judge_output(const onp_fixture *f, size_t k, const onp_judge_fixture_opts *o,
                        prefetch *pf, int no_book, onp_tensor *want, onp_tensor *got,
                        onp_output_verdict *x, int *beyond, onp_error *e)
{
    if (pf && pf->rc[k]) {
        *e = pf->err[k];
        return -1;
    }
    if (!pf && onp_tfile_read(f->outputs[k], NULL, want, e)) return -1;
    x->rank = want->rank;
    memcpy(x->dims, want->dims, sizeof want->dims);
    onp_tensor ref;
    memset(&ref, 0, sizeof ref);
    int has_ref;
    if (pf && k == 0) { /* read beside the run, taken over here */
        has_ref = pf->ref0_rc;
        ref = pf->ref0;
        memset(&pf->ref0, 0, sizeof pf->ref0);
        if (has_ref < 0) *e = pf->ref0_err;
    } else {
        has_ref = is_floating(want->dtype) ? onp_fixture_read_ref64(f, k, &ref, e) : 0;
    }
    if (has_ref < 0) return -1;
    onp_noise book;
    onp_value_stats vs;
    int has_book = 0;
    if (!has_ref && o->noise && !no_book && is_floating(want->dtype)) {
        /* the value's statistics (a pass over it) only for a relative
         * entry, which scales with them: the lookup without them finds
         * the exact entries, with zeros whether a relative one exists;
         * the same entry as one lookup with them (issue 34) */
        onp_value_stats none;
        memset(&none, 0, sizeof none);
        has_book = onp_noisebook_lookup(o->noise, f->index, x->name, NULL, &book);
        if (!has_book && onp_noisebook_lookup(o->noise, f->index, x->name, &none, &book)) {
            onp_value_stats_of(want, &vs);
            has_book = onp_noisebook_lookup(o->noise, f->index, x->name, &vs, &book);
        }
    }
    onp_judge_opts jo = {tol_of(o, x->name, want->dtype), o->strict, o->atol_given,
                         onp_noisebook_eager_random(o->noise)};
    onp_error ce;
    const onp_value_stats *scale = pf ? &pf->scale[k] : NULL; /* measured beside the run */
    int bad = onp_judge_value_scaled(want, got, has_ref ? &ref : NULL, has_book ? &book : NULL,
                                     scale, &jo, &x->m, &x->j, &ce);
    /* a reference refused as noise (NaN/Inf where eager has numbers):
     * the noise book is the next source, then the ORT-side estimate */
    if (!bad && x->j.ref_refused && o->noise && !no_book) {
        onp_value_stats_of(want, &vs);
        if (onp_noisebook_lookup(o->noise, f->index, x->name, &vs, &book))
            bad = onp_judge_value_scaled(want, got, &ref, &book, scale, &jo, &x->m, &x->j, &ce);
    }
    onp_tensor_release(&ref);
    if (bad) {
        snprintf(x->note, sizeof x->note, "%s", ce.msg);
        return 0;
    }
    x->compared = 1;
    judge_topk(o, want, got, x);
    settle(x);
    *beyond |= needs_estimate(x);
    return 0;
}

/* Judge every output of fixture f, ORT's got[0..n_out) from its run on
 * in[], against its expected file (read into want[], here or by pf beside
 * the run): the noise rule, the one-ulp estimate where some output needs
 * it, the target's precision, the near-tie reorder; r->status PASS or
 * FAIL.  no_book: the noise book is not a noise source (the tie-ordered
 * reference: its statistics were measured along eager's selection).  0, or
 * -1 with e set (a file unreadable, out of memory). */
static int judge_outputs(onp_session *s, const onp_fixture *f, const onp_judge_fixture_opts *o,
                         prefetch *pf, int no_book, const onp_tensor *in, onp_tensor *want,
                         onp_tensor *got, size_t n_out, onp_fixture_verdict *r, onp_error *e)
{
    int beyond = 0;
    for (size_t k = 0; k < f->n_outputs; k++) {
        onp_output_verdict *x = &r->outs[k];
        if (k >= n_out) {
            snprintf(x->note, sizeof x->note,
                     "output_%zu.pb has no graph output %zu (the graph has %zu)", k, k, n_out);
            continue;
        }
        if (judge_output(f, k, o, pf, no_book, &want[k], &got[k], x, &beyond, e)) return -1;
    }
    if (beyond && o->no_estimate) r->rerun = ONP_RERUN_OFF;
    if (beyond && !o->no_estimate &&
        estimate(s, r, in, f->n_inputs, want, got, n_out, o, r->outs, &r->estimated, &r->rerun))
        return onp_error_set(e, ONP_ERR_NOMEM, f->dir, NULL, -1, "out of memory");
    r->ort_runs = 1 + (r->rerun == ONP_RERUN_RAN || r->rerun == ONP_RERUN_FAILED);
    for (size_t k = 0; k < f->n_outputs && k < n_out; k++)
        judge_precision(&r->precision, want[k].dtype, &r->outs[k]);
    if (f->n_outputs <= n_out)
        onp_judge_near_tie_reorder(want, got, f->n_outputs, r->outs, o->strict);
    r->status = ONP_FIXTURE_PASS;
    for (size_t k = 0; k < f->n_outputs; k++)
        if (!r->outs[k].pass) r->status = ONP_FIXTURE_FAIL;
    return 0;
}

/* The tie-ordered reference of fixture f (docs/formats.md): the capture
 * writes f->dir/tie_ordered/output_K.pb when eager's forward, rerun with
 * its tie-sensitive ops breaking exact ties as ONNX does, gave other
 * outputs.  1: every output has one, *t is f with those files as its
 * outputs and that folder as its dir (so no float64 reference is found
 * for it: the capture's was computed along eager's selection); free with
 * tie_fixture_free.  0: none.  -1: out of memory. */
static int tie_fixture(const onp_fixture *f, onp_fixture *t)
{
    memset(t, 0, sizeof *t);
    char first[4200]; /* a fixture without one: a stat, nothing allocated */
    if (!f->n_outputs || !onp_fixture_tie_path(f, 0, first, sizeof first)) return 0;
    size_t dn = strlen(f->dir) + sizeof "/tie_ordered";
    t->dir = malloc(dn);
    t->outputs = calloc(f->n_outputs ? f->n_outputs : 1, sizeof *t->outputs);
    if (!t->dir || !t->outputs) return -1;
    snprintf(t->dir, dn, "%s/tie_ordered", f->dir);
    t->index = f->index;
    t->n_inputs = f->n_inputs;
    t->inputs = f->inputs;
    for (size_t k = 0; k < f->n_outputs; k++) {
        size_t n = dn + 32;
        t->outputs[k] = malloc(n);
        if (!t->outputs[k]) return -1;
        t->n_outputs = k + 1;
        snprintf(t->outputs[k], n, "%s/output_%zu.pb", t->dir, k);
        if (access(t->outputs[k], F_OK) != 0) return 0;
    }
    return f->n_outputs > 0;
}

static void tie_fixture_free(onp_fixture *t)
{
    for (size_t k = 0; t->outputs && k < t->n_outputs; k++) free(t->outputs[k]);
    free(t->outputs);
    free(t->dir);
}

/* A fixture that fails against eager and has a tie-ordered reference
 * (tie_fixture) is judged again, ORT's same outputs against that
 * reference, by the same rules (judge_outputs; no noise book, no float64
 * reference: both describe eager's selection).  When every output passes,
 * the fixture passes with r->tie_order ONP_TIE_ORDER_MATCHED and each
 * output's verdict and note from that judgment, the note saying why; else
 * it stays as it was, r->tie_order ONP_TIE_ORDER_DIFFERS.  0, or -1 with e
 * set. */
static int judge_tie_ordered(onp_session *s, const onp_fixture *f, const onp_judge_fixture_opts *o,
                             const onp_tensor *in, onp_tensor *got, size_t n_out,
                             onp_fixture_verdict *r, onp_error *e)
{
    if (r->status != ONP_FIXTURE_FAIL || f->n_outputs > n_out) return 0;
    onp_fixture t;
    int has = tie_fixture(f, &t), rc = 0;
    onp_fixture_verdict tv = *r;
    onp_tensor *want = has > 0 ? calloc(f->n_outputs, sizeof *want) : NULL;
    tv.outs = has > 0 ? calloc(f->n_outputs, sizeof *tv.outs) : NULL;
    if (has < 0 || (has > 0 && (!want || !tv.outs))) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, f->dir, NULL, -1, "out of memory");
        goto done;
    }
    if (!has) goto done;
    tv.estimated = 0;
    tv.rerun = ONP_RERUN_NOT_NEEDED;
    for (size_t k = 0; k < f->n_outputs; k++)
        snprintf(tv.outs[k].name, sizeof tv.outs[k].name, "%s", r->outs[k].name);
    if (judge_outputs(s, &t, o, NULL, 1, in, want, got, n_out, &tv, e)) {
        rc = -1;
        goto done;
    }
    r->tie_order = tv.status == ONP_FIXTURE_PASS ? ONP_TIE_ORDER_MATCHED : ONP_TIE_ORDER_DIFFERS;
    r->ort_runs += tv.ort_runs - 1;
    if (r->tie_order != ONP_TIE_ORDER_MATCHED) goto done;
    for (size_t k = 0; k < f->n_outputs; k++) {
        onp_output_verdict *x = &tv.outs[k];
        char was[sizeof x->note];
        snprintf(was, sizeof was, "%s", x->note);
        int u = snprintf(x->note, sizeof x->note,
                         "tie-order: eager chose among exactly tied values in another order; "
                         "ONNX Runtime's output matches eager rerun with ONNX's tie order (lower "
                         "index first): %s",
                         onp_verdict_name(x->j.verdict));
        if (was[0] && u > 0 && (size_t)u + 3 < sizeof x->note)
            snprintf(x->note + u, sizeof x->note - (size_t)u, "; %.*s",
                     (int)(sizeof x->note - (size_t)u - 3), was);
    }
    free(r->outs);
    r->outs = tv.outs;
    tv.outs = NULL;
    r->status = ONP_FIXTURE_PASS;
    r->estimated |= tv.estimated;
done:
    for (size_t k = 0; want && k < f->n_outputs; k++) onp_tensor_release(&want[k]);
    free(want);
    free(tv.outs);
    tie_fixture_free(&t);
    return rc;
}

int onp_judge_fixture(onp_session *s, const onp_fixture *f, const onp_judge_fixture_opts *o,
                      onp_fixture_verdict *r, onp_error *e)
{
    size_t n_out = onp_session_output_count(s);
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s", f->dir);
    r->index = f->index;
    r->n_out = f->n_outputs;
    r->precision.kind = ONP_PREC_FP32;
    r->precision.eps = onp_precision_eps(ONP_PREC_FP32);
    if (onp_session_describe(s)->precision) r->precision = *onp_session_describe(s)->precision;
    r->outs = calloc(f->n_outputs ? f->n_outputs : 1, sizeof *r->outs);
    onp_tensor *in = calloc(f->n_inputs ? f->n_inputs : 1, sizeof *in);
    onp_tensor *got = calloc(n_out ? n_out : 1, sizeof *got);
    onp_tensor *want = calloc(f->n_outputs ? f->n_outputs : 1, sizeof *want);
    int rc = 0, fetching = 0;
    prefetch pf;
    if (!r->outs || !in || !got || !want) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, f->dir, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < f->n_outputs; k++)
        snprintf(r->outs[k].name, sizeof r->outs[k].name, "%s",
                 k < n_out ? onp_session_output(s, k)->name : "?");
    if (!f->n_outputs) {
        r->status = ONP_FIXTURE_ERROR;
        snprintf(r->msg, sizeof r->msg, "no output_K.pb: nothing to compare");
        goto done;
    }
    if (read_inputs(s, f, in, r, e)) {
        rc = -1;
        goto done;
    }
    onp_error re;
    onp_error_clear(&re);
    fetching = !prefetch_start(&pf, f, f->n_outputs < n_out ? f->n_outputs : n_out, want);
    int ran = onp_session_run(s, in, f->n_inputs, NULL, 0, got, &re);
    if (fetching) pthread_join(pf.th, NULL);
    if (ran) {
        r->status = ONP_FIXTURE_ERROR;
        r->rerun = ONP_RERUN_FIXTURE_NOT_RUN;
        r->ort_runs = 1;
        onp_error_format(&re, r->msg, sizeof r->msg);
        r->runtime = onp_ort_lost_worker(&re);
        r->dtype_refused = !r->runtime && dtype_differs(s, in, f->n_inputs);
        for (size_t k = 0; k < f->n_outputs; k++)
            snprintf(r->outs[k].note, sizeof r->outs[k].note, "not run");
        goto done;
    }
    if (judge_outputs(s, f, o, fetching ? &pf : NULL, 0, in, want, got, n_out, r, e)) {
        rc = -1;
        goto done;
    }
    if (judge_tie_ordered(s, f, o, in, got, n_out, r, e)) rc = -1;
done:
    if (fetching) prefetch_free(&pf);
    for (size_t k = 0; in && k < f->n_inputs; k++) onp_tensor_release(&in[k]);
    for (size_t k = 0; got && k < n_out; k++) onp_tensor_release(&got[k]);
    for (size_t k = 0; want && k < f->n_outputs; k++) onp_tensor_release(&want[k]);
    free(in);
    free(got);
    free(want);
    return rc;
}
