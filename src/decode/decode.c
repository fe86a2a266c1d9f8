/*
 * decode.c — the decode loop in ONNX Runtime and its judgment, token by
 * token (decode.h; the rule in docs/generate.md).  One session, one batch's
 * arrays and one step's tensors in memory at a time; the result keeps a few
 * numbers per prompt and step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode/decode_int.h"
#include "onnxparity/agreement.h"
#include "onnxparity/numparse.h"
#include "onnxparity/run.h"
#include "onnxparity/tfile.h"

// --- names and the rule ----------------------------------------------------------

static const char *const class_names[] = {
    [ONP_DECODE_AGREE] = "agree",
    [ONP_DECODE_NEAR_TIE] = "near-tie",
    [ONP_DECODE_DEFECT] = "defect",
};
_Static_assert(sizeof class_names / sizeof class_names[0] == ONP_DECODE_CLASS_COUNT,
               "one name per decode class");

const char *onp_decode_class_name(onp_decode_class c)
{
    return (unsigned)c < ONP_DECODE_CLASS_COUNT ? class_names[c] : "?";
}

static const char *const where_names[] = {
    [ONP_DECODE_WHERE_NONE] = "none",
    [ONP_DECODE_WHERE_CACHE] = "cache-entry",
    [ONP_DECODE_WHERE_INPUT] = "graph-input",
    [ONP_DECODE_WHERE_SETTING] = "generation-setting",
};
_Static_assert(sizeof where_names / sizeof where_names[0] == ONP_DECODE_WHERE_COUNT,
               "one name per place");

const char *onp_decode_where_name(onp_decode_where w)
{
    return (unsigned)w < ONP_DECODE_WHERE_COUNT ? where_names[w] : "?";
}

double onp_decode_cdf_envelope(double envelope, double temperature)
{
    if (!(envelope > 0) || !(temperature > 0)) return 0;
    return expm1(2 * envelope / temperature);
}

int64_t onp_decode_sample(const float *l, int64_t V, double T, double u)
{
    double top = -INFINITY, z = 0, run = 0;
    for (int64_t v = 0; v < V; v++)
        if ((double)l[v] > top) top = l[v];
    for (int64_t v = 0; v < V; v++) z += exp(((double)l[v] - top) / T);
    int64_t last = 0;
    for (int64_t v = 0; v < V; v++) {
        double w = exp(((double)l[v] - top) / T);
        run += w;
        if (w > 0) last = v;
        if (u < run / z) return v;
    }
    return last;
}

onp_decode_class onp_decode_judge_step(onp_decode_class cls_so_far, int logits_pass, int flipped,
                                       double margin, double envelope)
{
    if (cls_so_far == ONP_DECODE_DEFECT || !logits_pass) return ONP_DECODE_DEFECT;
    if (!flipped) return cls_so_far;
    /* the rule of check's top-1 flips: eager's margin between the two
     * tokens inside the step's noise envelope; a margin not measured (NAN)
     * or no envelope is no evidence of noise */
    if (envelope > 0 && margin <= envelope) return ONP_DECODE_NEAR_TIE;
    return ONP_DECODE_DEFECT;
}

void onp_decode_opts_init(onp_decode_opts *o)
{
    memset(o, 0, sizeof *o);
    o->confidence = ONP_AGREEMENT_CONFIDENCE;
    o->tol.rtol = o->tol.atol = -1;
    o->max_differ_rate = -1;
}

/* The option name of argv[*i] ("--steps=3" -> "steps") and its value, if
 * given with "=" (else NULL); 0 when argv[*i] is not "--" something. */
static int split_opt(const char *arg, char *name, size_t n, const char **value)
{
    if (strncmp(arg, "--", 2)) return 0;
    const char *eq = strchr(arg + 2, '=');
    size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    if (len >= n) return 0;
    memcpy(name, arg + 2, len);
    name[len] = 0;
    *value = eq ? eq + 1 : NULL;
    return 1;
}

int onp_decode_args_parse(onp_decode_opts *o, int argc, const char *const *argv, int *i,
                          onp_error *e)
{
    char name[32];
    const char *v;
    if (!split_opt(argv[*i], name, sizeof name, &v)) return 0;
    static const char *const valued[] = {"steps", "max-differ-rate", "min-divergence-step", "rtol",
                                         "atol"};
    int takes = 0;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) takes |= !strcmp(name, valued[k]);
    if (!strcmp(name, "strict")) {
        if (v) return onp_error_set(e, ONP_ERR_USAGE, NULL, "--strict", -1, "takes no value");
        o->strict = 1;
        return 1;
    }
    if (!takes) return 0;
    char field[40];
    snprintf(field, sizeof field, "--%s", name);
    if (!v) {
        if (*i + 1 >= argc || !argv[*i + 1])
            return onp_error_set(e, ONP_ERR_USAGE, NULL, field, -1, "wants a value");
        v = argv[++*i];
    }
    long k;
    double r;
    if (!strcmp(name, "steps") || !strcmp(name, "min-divergence-step")) {
        int steps = !strcmp(name, "steps");
        if (onp_parse_long(v, steps ? 1 : 0, 1 << 20, &k))
            return onp_error_set(e, ONP_ERR_USAGE, NULL, field, -1,
                                 "wants an integer from %d to %d, not '%s'", steps ? 1 : 0, 1 << 20,
                                 v);
        *(steps ? &o->steps : &o->min_divergence_step) = (int)k;
        return 1;
    }
    int rate = !strcmp(name, "max-differ-rate");
    if (onp_parse_real(v, &r) || r < 0 || (rate && r > 1))
        return onp_error_set(e, ONP_ERR_USAGE, NULL, field, -1, "wants a number %s, not '%s'",
                             rate ? "in [0, 1]" : ">= 0", v);
    if (rate)
        o->max_differ_rate = r;
    else if (!strcmp(name, "rtol"))
        o->tol.rtol = r;
    else
        o->tol.atol = r;
    return 1;
}

void onp_decode_result_free(onp_decode_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_prompts; i++) free(r->prompts[i].steps);
    free(r->prompts);
    free(r->step_ratio);
    free(r);
}

// --- one batch's arrays ----------------------------------------------------------

typedef struct batch_arrays {
    onp_tensor ids, mask, tokens, topk_ids, topk_logits, noise, logits, logits64;
    onp_tensor cache, cache64; /* [2 * layers, B, H, P_last, D], batches with a cache */
    onp_tensor uniform, cdf;   /* sample: [B, steps] draws, [B, steps, 2] eager's CDF interval */
} batch_arrays;

static void arrays_release(batch_arrays *a)
{
    onp_tensor *t[] = {&a->ids,         &a->mask,    &a->tokens,  &a->topk_ids,
                       &a->topk_logits, &a->noise,   &a->logits,  &a->logits64,
                       &a->cache,       &a->cache64, &a->uniform, &a->cdf};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) onp_tensor_release(t[i]);
}

/* dir/name.npy into t, checked: dtype and shape (dims[] of rank, -1 = any). */
static int read_array(const char *dir, const char *bdir, const char *name, int32_t dtype, int rank,
                      const int64_t *dims, onp_tensor *t, onp_error *e)
{
    char path[1600];
    snprintf(path, sizeof path, "%s/%s/%s.npy", dir, bdir, name);
    onp_tread_opts ro = {0};
    if (onp_tfile_read(path, &ro, t, e)) return -1;
    int ok = t->dtype == dtype && t->rank == rank;
    for (int d = 0; ok && d < rank; d++)
        if (dims[d] >= 0 && t->dims[d] != dims[d]) ok = 0;
    if (ok) return 0;
    char want[128], got[128];
    onp_shape_str(rank, dims, want, sizeof want);
    onp_shape_str(t->rank, t->dims, got, sizeof got);
    onp_error_set(e, ONP_ERR_FORMAT, path, NULL, -1, "expected %s %s (-1: any), found %s %s",
                  onp_dtype_name(dtype), want, onp_dtype_name(t->dtype), got);
    return -1;
}

/* A full batch's cache and its float64 twin: [2 * layers, B, ?, P_last, ?]. */
static int read_cache(const onp_dec_manifest *m, const onp_dec_batch *b, batch_arrays *a,
                      onp_error *e)
{
    const int64_t *last = b->cache + (size_t)(m->steps - 1) * 4;
    int64_t dims[5] = {2 * (int64_t)m->layers, b->rows, last[1], last[2], last[3]};
    return read_array(m->dir, b->dir, "cache", ONP_FLOAT, 5, dims, &a->cache, e) ||
                   read_array(m->dir, b->dir, "cache64", ONP_DOUBLE, 5, dims, &a->cache64, e)
               ? -1
               : 0;
}

static int read_batch_arrays(const onp_dec_manifest *m, const onp_dec_batch *b, batch_arrays *a,
                             onp_error *e)
{
    memset(a, 0, sizeof *a);
    int64_t prompt[2] = {b->rows, b->prompt_len};
    int64_t tok[2] = {b->rows, m->steps};
    int64_t top[3] = {b->rows, m->steps, m->topk};
    int64_t noise[3] = {b->rows, m->steps, 4};
    int64_t full[3] = {b->rows, m->steps, m->vocab};
    int64_t cdf[3] = {b->rows, m->steps, 2};
    if (read_array(m->dir, b->dir, "input_ids", ONP_INT64, 2, prompt, &a->ids, e) ||
        read_array(m->dir, b->dir, "attention_mask", ONP_INT64, 2, prompt, &a->mask, e) ||
        read_array(m->dir, b->dir, "tokens", ONP_INT64, 2, tok, &a->tokens, e) ||
        read_array(m->dir, b->dir, "topk_ids", ONP_INT64, 3, top, &a->topk_ids, e) ||
        read_array(m->dir, b->dir, "topk_logits", ONP_FLOAT, 3, top, &a->topk_logits, e) ||
        read_array(m->dir, b->dir, "noise", ONP_DOUBLE, 3, noise, &a->noise, e) ||
        (b->full &&
         (read_array(m->dir, b->dir, "logits", ONP_FLOAT, 3, full, &a->logits, e) ||
          read_array(m->dir, b->dir, "logits64", ONP_DOUBLE, 3, full, &a->logits64, e))) ||
        (b->has_cache && read_cache(m, b, a, e)) ||
        (m->sample && (read_array(m->dir, b->dir, "uniform", ONP_DOUBLE, 2, tok, &a->uniform, e) ||
                       read_array(m->dir, b->dir, "cdf", ONP_DOUBLE, 3, cdf, &a->cdf, e)))) {
        arrays_release(a);
        return -1;
    }
    return 0;
}

/* A rank-1 view of n elements at element offset `off` of t (no ownership). */
static onp_tensor view(const onp_tensor *t, int64_t off, int64_t n)
{
    onp_tensor v;
    memset(&v, 0, sizeof v);
    size_t es = onp_dtype_size(t->dtype);
    v.dtype = t->dtype;
    v.rank = 1;
    v.dims[0] = n;
    v.count = n;
    v.nbytes = (size_t)n * es;
    v.data = (uint8_t *)t->data + (size_t)off * es;
    return v;
}

// --- one step of one row -----------------------------------------------------------

typedef struct loop_ctx {
    const onp_dec_manifest *m;
    const onp_decode_opts *o;
    const onp_dec_batch *b;
    batch_arrays *a;
    int n_steps;
} loop_ctx;

/* Sampling: ORT's token drawn with eager's uniform draw; on a flip, the
 * margin is the draw's distance to eager's CDF boundary between the two
 * tokens (eager's token b holds [lo, hi) of the CDF: ORT's token after b
 * means ORT's CDF at b fell to the draw, hi - u; before b, u - lo). */
static int sample_row(const loop_ctx *c, int64_t cell, const onp_tensor *got, onp_decode_step *st)
{
    double u = onp_tensor_get_f64(&c->a->uniform, cell);
    st->uniform = u;
    st->cdf_envelope = onp_decode_cdf_envelope(st->envelope_max, c->m->temperature);
    st->eager_processed = 0;
    st->ort_token = onp_decode_sample(got->data, c->m->vocab, c->m->temperature, u);
    if (st->ort_token == st->eager_token) return 0;
    double lo = onp_tensor_get_f64(&c->a->cdf, cell * 2),
           hi = onp_tensor_get_f64(&c->a->cdf, cell * 2 + 1);
    st->margin = st->ort_token > st->eager_token ? hi - u : u - lo;
    return 0;
}

/* Judge row r at step t on ORT's logits row `got` [V] float32; fills st. */
static int judge_row(const loop_ctx *c, int r, int t, const onp_tensor *got, onp_decode_step *st,
                     onp_error *e)
{
    const onp_dec_manifest *m = c->m;
    int64_t V = m->vocab, K = m->topk, cell = (int64_t)r * m->steps + t;
    onp_judge_opts jo;
    onp_judge_opts_init(&jo);
    jo.tol = onp_tol_with(ONP_FLOAT, c->o->tol.rtol, c->o->tol.atol);
    jo.atol_given = c->o->tol.atol >= 0;
    onp_metrics mt;
    onp_judgment j;
    onp_tensor sub;
    memset(&sub, 0, sizeof sub);
    int rc;
    st->full = c->b->full;
    if (st->full) {
        onp_tensor want = view(&c->a->logits, cell * V, V),
                   ref = view(&c->a->logits64, cell * V, V);
        rc = onp_judge_value(&want, got, &ref, NULL, &jo, &mt, &j, e);
    } else {
        onp_tensor want = view(&c->a->topk_logits, cell * K, K);
        int64_t dims[1] = {K};
        if (onp_tensor_alloc(&sub, ONP_FLOAT, 1, dims, e)) return -1;
        for (int64_t k = 0; k < K; k++) {
            int64_t id = (int64_t)onp_tensor_get_f64(&c->a->topk_ids, cell * K + k);
            if (id < 0 || id >= V) {
                onp_tensor_release(&sub);
                return onp_error_set(e, ONP_ERR_FORMAT, m->dir, "topk_ids", -1,
                                     "batch %s row %d step %d: id %lld outside the vocabulary",
                                     c->b->dir, r, t, (long long)id);
            }
            ((float *)sub.data)[k] = ((const float *)got->data)[id];
        }
        onp_noise n = {.src = ONP_NOISE_FLOAT64};
        n.max_abs = n.q999 = onp_tensor_get_f64(&c->a->noise, cell * 4 + 0);
        n.rms = onp_tensor_get_f64(&c->a->noise, cell * 4 + 1);
        n.scale_max = onp_tensor_get_f64(&c->a->noise, cell * 4 + 2);
        n.scale_rms = onp_tensor_get_f64(&c->a->noise, cell * 4 + 3);
        rc = onp_judge_value(&want, &sub, NULL, &n, &jo, &mt, &j, e);
        onp_tensor_release(&sub);
    }
    if (rc) return -1;
    st->verdict = j.verdict;
    st->logits_pass = j.pass;
    st->gap_max = j.gap_max;
    st->envelope_max = j.envelope_max;
    st->eager_token = (int64_t)onp_tensor_get_f64(&c->a->tokens, cell);
    st->margin = NAN;
    st->margin_bound = 0;
    st->uniform = st->cdf_envelope = NAN;
    if (m->sample) return sample_row(c, cell, got, st);
    /* ORT's token: the first maximum, as torch.argmax picks */
    const float *g = got->data;
    int64_t best = 0;
    for (int64_t v = 1; v < V; v++)
        if (g[v] > g[best] || (isnan(g[v]) && !isnan(g[best]))) best = v;
    st->ort_token = best;
    st->eager_processed = (int64_t)onp_tensor_get_f64(&c->a->topk_ids, cell * K) != st->eager_token;
    if (st->ort_token == st->eager_token) return 0;
    /* eager's margin between its token and ORT's */
    if (st->full) {
        st->margin = onp_tensor_get_f64(&c->a->logits, cell * V + st->eager_token) -
                     onp_tensor_get_f64(&c->a->logits, cell * V + st->ort_token);
        return 0;
    }
    double top = onp_tensor_get_f64(&c->a->topk_logits, cell * K);
    for (int64_t k = 0; k < K; k++)
        if ((int64_t)onp_tensor_get_f64(&c->a->topk_ids, cell * K + k) == st->ort_token) {
            st->margin = top - onp_tensor_get_f64(&c->a->topk_logits, cell * K + k);
            return 0;
        }
    st->margin = top - onp_tensor_get_f64(&c->a->topk_logits, cell * K + K - 1);
    st->margin_bound = 1;
    return 0;
}

/* A flip that ends one side's generation and not the other's: the clause
 * why names (eos < 0: none). */
static const char *eos_clause(const onp_decode_step *st, int64_t eos)
{
    if (eos < 0 || st->ort_token == st->eager_token) return "";
    if (st->ort_token == eos) return " (ORT stops here, at the EOS token; eager goes on)";
    if (st->eager_token == eos) return " (eager stops here, at the EOS token; ORT goes on)";
    return "";
}

/* The prompt's class and first steps after step t (st judged). */
static void settle_step(onp_decode_prompt *p, int t, const onp_decode_step *st, int64_t eos)
{
    int flipped = st->ort_token != st->eager_token;
    onp_decode_class before = p->cls;
    int sample = !isnan(st->cdf_envelope);
    p->cls = onp_decode_judge_step(p->cls, st->logits_pass && st->cache_ok, flipped, st->margin,
                                   sample ? st->cdf_envelope : st->envelope_max);
    if (flipped && st->eager_processed) p->cls = ONP_DECODE_DEFECT;
    if (!flipped) p->tokens_agree++;
    if (flipped && p->first_token_step < 0) p->first_token_step = t;
    if (eos >= 0 && flipped && p->stop_step < 0 &&
        (st->ort_token == eos || st->eager_token == eos)) {
        p->stop_step = t;
        p->stop_ort = st->ort_token == eos;
    }
    if (!st->logits_pass && p->first_logit_step < 0) p->first_logit_step = t;
    if (!st->cache_ok && p->first_cache_step < 0) p->first_cache_step = t;
    if ((flipped || !st->logits_pass || !st->cache_ok) && p->first_step < 0) p->first_step = t;
    if (before == ONP_DECODE_DEFECT || p->cls != ONP_DECODE_DEFECT) return;
    const char *stop = eos_clause(st, eos);
    if (!st->cache_ok) {
        snprintf(p->why, sizeof p->why, "step %d: the cache's shape is not the capture's", t);
    } else if (st->eager_processed) {
        p->where = ONP_DECODE_WHERE_SETTING;
        snprintf(p->why, sizeof p->why,
                 "step %d: token %lld where eager has %lld, which is not the argmax of eager's own "
                 "logits: a generation setting (repetition penalty, temperature, a logits "
                 "processor) applied on eager's side only; the loop here is greedy on raw "
                 "logits",
                 t, (long long)st->ort_token, (long long)st->eager_token);
    } else if (!st->logits_pass) {
        snprintf(p->why, sizeof p->why, "step %d: logits %s (gap %.3g, envelope %.3g)%s", t,
                 onp_verdict_name(st->verdict), st->gap_max, st->envelope_max, stop);
    } else if (sample) {
        snprintf(p->why, sizeof p->why,
                 "step %d: token %lld where eager sampled %lld with the same draw %.6g; the "
                 "draw is %.3g from eager's CDF boundary, beyond what the logits' noise moves it "
                 "(%.3g)%s",
                 t, (long long)st->ort_token, (long long)st->eager_token, st->uniform, st->margin,
                 st->cdf_envelope, stop);
    } else {
        snprintf(p->why, sizeof p->why,
                 "step %d: token %lld where eager has %lld, eager margin %s%.3g beyond the noise "
                 "envelope %.3g%s",
                 t, (long long)st->ort_token, (long long)st->eager_token,
                 st->margin_bound ? ">= " : "", st->margin, st->envelope_max, stop);
    }
}

/* ORT refused step t of a batch (e says why): each of its B rows a defect
 * there.  `baked` >= 0: the past input (key 0, value 0, key 1, ...) whose
 * sequence length the graph fixes at `len`, other than the one fed. */
static void refused(onp_decode_prompt *prompts, int64_t B, int t, const onp_error *e, int baked,
                    int64_t len)
{
    char msg[512];
    onp_error_format(e, msg, sizeof msg);
    for (int64_t r = 0; r < B; r++) {
        onp_decode_prompt *p = &prompts[r];
        p->refused_step = t;
        if (p->first_step < 0) p->first_step = t;
        if (p->cls != ONP_DECODE_DEFECT && baked >= 0)
            snprintf(p->why, sizeof p->why,
                     "step %d: ONNX Runtime refused the step: layer %d's %s past has its sequence "
                     "length fixed at %lld in the graph (baked at trace; export it dynamic): %s",
                     t, baked / 2, baked % 2 ? "value" : "key", (long long)len, msg);
        else if (p->cls != ONP_DECODE_DEFECT)
            snprintf(p->why, sizeof p->why, "step %d: ONNX Runtime refused the step: %s", t, msg);
        if (p->cls != ONP_DECODE_DEFECT && baked >= 0) {
            p->where = ONP_DECODE_WHERE_INPUT;
            p->cache_step = t;
            p->cache_layer = baked / 2;
            p->cache_value = baked % 2;
            p->baked_len = len;
        }
        p->cls = ONP_DECODE_DEFECT;
    }
}

/* The first past input whose declared sequence length is fixed and is not
 * the one fed (a past length baked at trace); -1 none. */
static int baked_past(const onp_session *s, const onp_dec_manifest *m, const onp_tensor *past,
                      int64_t *len)
{
    for (int i = 0; i < 2 * m->layers; i++) {
        long k = onp_session_find_input(s, m->past[i]);
        if (k < 0) continue;
        const onp_ort_io *d = onp_session_input(s, (size_t)k);
        if (d->rank == 4 && d->dims[2] >= 0 && past[i].rank == 4 && d->dims[2] != past[i].dims[2]) {
            *len = d->dims[2];
            return i;
        }
    }
    return -1;
}

// --- the cache's values ------------------------------------------------------------

/* Row r's entries at positions [x0, x1) of ORT's present `got` and of
 * eager's cache entry i, gathered into want/ref/out ([H * n * D] each). */
static int gather_entry(const batch_arrays *a, int i, int64_t r, const onp_tensor *got, int64_t x0,
                        int64_t x1, onp_tensor *want, onp_tensor *ref, onp_tensor *out,
                        onp_error *e)
{
    const int64_t *cd = a->cache.dims; /* [2L, B, H, P_last, D] */
    int64_t H = cd[2], PL = cd[3], D = cd[4], n = x1 - x0, P = got->dims[2];
    int64_t dims[1] = {H * n * D};
    if (onp_tensor_alloc(want, ONP_FLOAT, 1, dims, e) ||
        onp_tensor_alloc(ref, ONP_DOUBLE, 1, dims, e) ||
        onp_tensor_alloc(out, ONP_FLOAT, 1, dims, e))
        return -1;
    const float *c32 = a->cache.data, *g = got->data;
    const double *c64 = a->cache64.data;
    int64_t k = 0;
    for (int64_t h = 0; h < H; h++)
        for (int64_t x = x0; x < x1; x++, k += D) {
            int64_t src = (((int64_t)i * cd[1] + r) * H + h) * PL * D + x * D;
            memcpy((float *)want->data + k, c32 + src, (size_t)D * sizeof(float));
            memcpy((double *)ref->data + k, c64 + src, (size_t)D * sizeof(double));
            memcpy((float *)out->data + k, g + ((r * H + h) * P + x) * D,
                   (size_t)D * sizeof(float));
        }
    return 0;
}

/* Judge row r's new cache entries at step t (positions [x0, x1)), entry by
 * entry; the first to fail is recorded on p.  Entries whose shape is not
 * eager's (a cache defect the shapes already name) are skipped. */
static int judge_cache(const loop_ctx *c, const onp_tensor *outs, int64_t r, int t, int64_t x0,
                       int64_t x1, onp_decode_prompt *p, onp_error *e)
{
    const onp_tensor *ec = &c->a->cache;
    onp_judge_opts jo;
    onp_judge_opts_init(&jo);
    for (int i = 0; i < 2 * c->m->layers; i++) {
        const onp_tensor *got = &outs[1 + i];
        if (got->dtype != ONP_FLOAT || got->rank != 4 || got->dims[1] != ec->dims[2] ||
            got->dims[3] != ec->dims[4] || got->dims[2] < x1 || ec->dims[3] < x1)
            continue;
        onp_tensor want, ref, out;
        memset(&want, 0, sizeof want), memset(&ref, 0, sizeof ref), memset(&out, 0, sizeof out);
        onp_metrics mt;
        onp_judgment j;
        int rc = gather_entry(c->a, i, r, got, x0, x1, &want, &ref, &out, e);
        if (!rc) rc = onp_judge_value(&want, &out, &ref, NULL, &jo, &mt, &j, e);
        onp_tensor_release(&want), onp_tensor_release(&ref), onp_tensor_release(&out);
        if (rc) return -1;
        if (j.pass) continue;
        p->cache_step = t;
        p->cache_layer = i / 2;
        p->cache_value = i % 2;
        p->cache_gap = j.gap_max;
        p->cache_envelope = j.envelope_max;
        if (p->where == ONP_DECODE_WHERE_NONE) p->where = ONP_DECODE_WHERE_CACHE;
        return 0;
    }
    return 0;
}

// --- the loop over one batch ------------------------------------------------------

typedef struct step_io {
    onp_tensor in[3]; /* ids [B, new], mask [B, P + new], positions [B, new] */
    onp_tensor *past; /* [2 * layers] */
    onp_tensor *outs; /* [1 + 2 * layers]: logits, present */
    size_t n_past;
} step_io;

static void io_release(step_io *s)
{
    for (int i = 0; i < 3; i++) onp_tensor_release(&s->in[i]);
    for (size_t i = 0; s->past && i < s->n_past; i++) onp_tensor_release(&s->past[i]);
    for (size_t i = 0; s->outs && i < s->n_past + 1; i++) onp_tensor_release(&s->outs[i]);
    free(s->past);
    free(s->outs);
}

/* The inputs of the prefill: the prompt, its mask, positions cumsum - 1
 * (1 on padding), an empty past of the session's declared head geometry. */
static int prefill_inputs(const loop_ctx *c, onp_session *s, step_io *io, onp_error *e)
{
    const onp_dec_batch *b = c->b;
    int64_t B = b->rows, L = b->prompt_len, dims[2] = {B, L};
    if (onp_tensor_alloc(&io->in[0], ONP_INT64, 2, dims, e) ||
        onp_tensor_alloc(&io->in[1], ONP_INT64, 2, dims, e) ||
        onp_tensor_alloc(&io->in[2], ONP_INT64, 2, dims, e))
        return -1;
    memcpy(io->in[0].data, c->a->ids.data, io->in[0].nbytes);
    memcpy(io->in[1].data, c->a->mask.data, io->in[1].nbytes);
    int64_t *mask = io->in[1].data, *pos = io->in[2].data;
    for (int64_t r = 0; r < B; r++) {
        int64_t run = 0;
        for (int64_t x = 0; x < L; x++) {
            run += mask[r * L + x] != 0;
            pos[r * L + x] = mask[r * L + x] ? run - 1 : 1;
        }
    }
    for (size_t i = 0; i < io->n_past; i++) {
        long k = onp_session_find_input(s, c->m->past[i]);
        if (k < 0)
            return onp_error_set(e, ONP_ERR_USAGE, c->m->dir, "inputs.past", -1,
                                 "the model has no input '%s'", c->m->past[i]);
        const onp_ort_io *d = onp_session_input(s, (size_t)k);
        if (d->rank != 4 || d->dims[1] < 0 || d->dims[3] < 0)
            return onp_error_set(e, ONP_ERR_USAGE, c->m->dir, c->m->past[i], -1,
                                 "the past input is not [batch, heads, past, head_dim] with "
                                 "heads and head_dim fixed");
        int64_t pd[4] = {B, d->dims[1], 0, d->dims[3]};
        if (onp_tensor_alloc(&io->past[i], ONP_FLOAT, 4, pd, e)) return -1;
    }
    return 0;
}

/* The inputs of the next step: `next` [B] tokens, the mask one column
 * longer, positions = the real tokens so far - 1; the present becomes the
 * past. */
static int advance(step_io *io, const int64_t *next, int64_t B, onp_error *e)
{
    int64_t P = io->in[1].dims[1];
    onp_tensor mask;
    int64_t md[2] = {B, P + 1}, nd[2] = {B, 1};
    if (onp_tensor_alloc(&mask, ONP_INT64, 2, md, e)) return -1;
    const int64_t *old = io->in[1].data;
    int64_t *nm = mask.data;
    for (int64_t r = 0; r < B; r++) {
        memcpy(nm + r * (P + 1), old + r * P, (size_t)P * sizeof *nm);
        nm[r * (P + 1) + P] = 1;
    }
    for (int i = 0; i < 3; i++) onp_tensor_release(&io->in[i]);
    io->in[1] = mask;
    if (onp_tensor_alloc(&io->in[0], ONP_INT64, 2, nd, e) ||
        onp_tensor_alloc(&io->in[2], ONP_INT64, 2, nd, e))
        return -1;
    for (int64_t r = 0; r < B; r++) {
        int64_t run = 0;
        for (int64_t x = 0; x <= P; x++) run += nm[r * (P + 1) + x] != 0;
        ((int64_t *)io->in[0].data)[r] = next[r];
        ((int64_t *)io->in[2].data)[r] = run - 1;
    }
    for (size_t i = 0; i < io->n_past; i++) {
        onp_tensor_release(&io->past[i]);
        io->past[i] = io->outs[1 + i];
        memset(&io->outs[1 + i], 0, sizeof io->outs[1 + i]);
    }
    onp_tensor_release(&io->outs[0]);
    return 0;
}

/* One session run of the loop: inputs by name, logits and present fetched. */
static int run_step(const loop_ctx *c, onp_session *s, step_io *io, onp_error *e)
{
    size_t n_in = 3 + io->n_past, n_out = 1 + io->n_past;
    onp_tensor *feed = calloc(n_in, sizeof *feed);
    const char **names = calloc(n_out, sizeof *names);
    int rc = -1;
    if (!feed || !names) {
        onp_error_set(e, ONP_ERR_NOMEM, c->m->dir, NULL, -1, "out of memory");
        goto done;
    }
    const char *in_names[3] = {c->m->in_ids, c->m->in_mask, c->m->in_pos};
    for (size_t i = 0; i < n_in; i++) {
        feed[i] = i < 3 ? io->in[i] : io->past[i - 3];
        feed[i].name = (char *)(i < 3 ? in_names[i] : c->m->past[i - 3]);
        feed[i].free_fn = NULL;
    }
    names[0] = c->m->out_logits;
    for (size_t i = 0; i < io->n_past; i++) names[1 + i] = c->m->present[i];
    rc = onp_session_run(s, feed, n_in, names, n_out, io->outs, e);
done:
    free(feed);
    free(names);
    return rc;
}

/* ORT's present shapes against the capture's after step t. */
static int cache_ok(const loop_ctx *c, const step_io *io, int t)
{
    const int64_t *want = c->b->cache + (size_t)t * 4;
    for (size_t i = 0; i < io->n_past; i++) {
        const onp_tensor *p = &io->outs[1 + i];
        if (p->rank != 4) return 0;
        for (int d = 0; d < 4; d++)
            if (p->dims[d] != want[d]) return 0;
    }
    return 1;
}

static int run_batch(const loop_ctx *c, onp_session *s, onp_decode_prompt *prompts, double *ratio,
                     onp_error *e)
{
    const onp_dec_batch *b = c->b;
    int64_t B = b->rows, V = c->m->vocab;
    step_io io;
    memset(&io, 0, sizeof io);
    io.n_past = (size_t)c->m->layers * 2;
    io.past = calloc(io.n_past, sizeof *io.past);
    io.outs = calloc(io.n_past + 1, sizeof *io.outs);
    int64_t *next = calloc((size_t)B, sizeof *next);
    int rc = -1;
    if (!io.past || !io.outs || !next) {
        onp_error_set(e, ONP_ERR_NOMEM, c->m->dir, NULL, -1, "out of memory");
        goto done;
    }
    if (prefill_inputs(c, s, &io, e)) goto done;
    for (int t = 0; t < c->n_steps; t++) {
        if (run_step(c, s, &io, e)) {
            if (onp_ort_lost_worker(e) ||
                (e->code != ONP_ERR_USAGE && e->code != ONP_ERR_RUNTIME)) {
                onp_error_field_prefix(e, b->dir);
                goto done;
            }
            int64_t len = -1;
            int baked = baked_past(s, c->m, io.past, &len);
            refused(prompts, B, t, e, baked, len);
            for (int64_t r = 0; r < B; r++) { /* eager's token there; ORT has none */
                prompts[r].steps[t].eager_token =
                    (int64_t)onp_tensor_get_f64(&c->a->tokens, r * c->m->steps + t);
                prompts[r].steps[t].ort_token = -1;
            }
            break;
        }
        const onp_tensor *lg = &io.outs[0];
        int64_t nw = io.in[0].dims[1];
        if (lg->dtype != ONP_FLOAT || lg->rank != 3 || lg->dims[0] != B || lg->dims[1] != nw ||
            lg->dims[2] != V) {
            onp_error_set(e, ONP_ERR_USAGE, c->m->dir, c->m->out_logits, -1,
                          "step %d: logits are not float32 [%lld, %lld, %lld]", t, (long long)B,
                          (long long)nw, (long long)V);
            goto done;
        }
        int cache = cache_ok(c, &io, t), live = 0;
        for (int64_t r = 0; r < B; r++) {
            int64_t cell = r * c->m->steps + t;
            next[r] = (int64_t)onp_tensor_get_f64(&c->a->tokens, cell);
            if (prompts[r].eos_step >= 0) continue; /* eager stopped: not judged */
            onp_tensor got = view(lg, (r * nw + nw - 1) * V, V);
            onp_decode_step *st = &prompts[r].steps[t];
            st->cache_ok = cache;
            if (judge_row(c, (int)r, t, &got, st, e)) goto done;
            settle_step(&prompts[r], t, st, c->m->eos);
            prompts[r].steps_run = t + 1;
            if (c->m->eos >= 0 && st->eager_token == c->m->eos)
                prompts[r].eos_step = t;
            else
                live++;
            /* the new positions: the prompt's real tokens at the prefill,
             * one column after it */
            int64_t x1 = io.in[1].dims[1], x0 = t ? x1 - 1 : x1 - b->lens[r];
            prompts[r].cache_judged = b->has_cache;
            if (b->has_cache && prompts[r].cache_step < 0 &&
                judge_cache(c, io.outs, r, t, x0, x1, &prompts[r], e))
                goto done;
            double q = st->envelope_max > 0 ? st->gap_max / st->envelope_max : 0;
            if (q > ratio[t]) ratio[t] = q;
            /* next[r]: eager's token, teacher forcing after a divergence */
        }
        if (!live) break; /* every row stopped at its EOS */
        if (t + 1 < c->n_steps && advance(&io, next, B, e)) goto done;
    }
    rc = 0;
done:
    io_release(&io);
    free(next);
    return rc;
}

// --- the run -----------------------------------------------------------------------

/* Every name generate.json gives is one of the graph's inputs / outputs. */
static int check_names(const onp_dec_manifest *m, const onp_session *s, onp_error *e)
{
    const char *in[3] = {m->in_ids, m->in_mask, m->in_pos};
    const char *field[3] = {"inputs.input_ids", "inputs.attention_mask", "inputs.position_ids"};
    for (int i = 0; i < 3; i++)
        if (onp_session_find_input(s, in[i]) < 0)
            return onp_error_set(e, ONP_ERR_USAGE, m->dir, field[i], -1,
                                 "the model has no input '%s'", in[i]);
    if (onp_session_find_output(s, m->out_logits) < 0)
        return onp_error_set(e, ONP_ERR_USAGE, m->dir, "outputs.logits", -1,
                             "the model has no output '%s'", m->out_logits);
    for (int i = 0; i < 2 * m->layers; i++) {
        if (onp_session_find_input(s, m->past[i]) < 0)
            return onp_error_set(e, ONP_ERR_USAGE, m->dir, "inputs.past", -1,
                                 "the model has no input '%s'", m->past[i]);
        if (onp_session_find_output(s, m->present[i]) < 0)
            return onp_error_set(e, ONP_ERR_USAGE, m->dir, "outputs.present", -1,
                                 "the model has no output '%s'", m->present[i]);
    }
    return 0;
}

static int result_alloc(const onp_dec_manifest *m, int n_steps, onp_decode_result **out,
                        onp_error *e)
{
    onp_decode_result *r = calloc(1, sizeof *r);
    if (!r) return onp_error_set(e, ONP_ERR_NOMEM, m->dir, NULL, -1, "out of memory");
    *out = r;
    for (size_t k = 0; k < m->n_batches; k++) r->n_prompts += (size_t)m->batches[k].rows;
    r->prompts = calloc(r->n_prompts, sizeof *r->prompts);
    r->step_ratio = calloc((size_t)n_steps, sizeof *r->step_ratio);
    if (!r->prompts || !r->step_ratio)
        return onp_error_set(e, ONP_ERR_NOMEM, m->dir, NULL, -1, "out of memory");
    size_t i = 0;
    for (size_t k = 0; k < m->n_batches; k++)
        for (int row = 0; row < m->batches[k].rows; row++, i++) {
            onp_decode_prompt *p = &r->prompts[i];
            p->batch = (int)k;
            p->row = row;
            p->prompt_len = m->batches[k].lens[row];
            p->first_step = p->first_token_step = p->first_logit_step = p->first_cache_step = -1;
            p->refused_step = p->cache_step = p->cache_layer = p->cache_value = -1;
            p->eos_step = p->stop_step = p->cause = -1;
            p->padded = p->prompt_len < m->batches[k].prompt_len;
            p->baked_len = -1;
            p->steps = calloc((size_t)n_steps, sizeof *p->steps);
            if (!p->steps)
                return onp_error_set(e, ONP_ERR_NOMEM, m->dir, NULL, -1, "out of memory");
        }
    r->n_steps = n_steps;
    snprintf(r->bundle, sizeof r->bundle, "%s", m->dir);
    snprintf(r->model_type, sizeof r->model_type, "%s", m->model_type);
    snprintf(r->exporter, sizeof r->exporter, "%s", m->exporter);
    snprintf(r->strategy, sizeof r->strategy, "%s", m->sample ? "sample" : "greedy");
    r->temperature = m->sample ? m->temperature : NAN;
    r->eos_token_id = m->eos;
    return 0;
}

static void tally(onp_decode_result *r, const onp_decode_opts *o)
{
    for (size_t i = 0; i < r->n_prompts; i++) {
        const onp_decode_prompt *p = &r->prompts[i];
        r->counts[p->cls]++;
        r->tokens += p->steps_run;
        r->tokens_agree += p->tokens_agree;
    }
    onp_agreement_of((int64_t)r->n_prompts, (int64_t)r->counts[ONP_DECODE_AGREE], o->confidence,
                     &r->agreement);
    onp_dec_causes(r);
    for (size_t i = 0; i < r->n_prompts; i++) {
        int first = r->prompts[i].first_token_step;
        if (first >= 0 && first < o->min_divergence_step) r->early++;
    }
    r->rate_exceeded =
        o->max_differ_rate >= 0 && !onp_agreement_meets(&r->agreement, o->max_differ_rate);
    int fail = r->counts[ONP_DECODE_DEFECT] > 0 || (o->strict && r->counts[ONP_DECODE_NEAR_TIE]) ||
               r->rate_exceeded || r->early > 0;
    r->verdict = fail ? ONP_RUN_FAIL : ONP_RUN_PASS;
}

int onp_decode_run(const char *dir, const onp_decode_opts *o, onp_decode_result **out, onp_error *e)
{
    *out = NULL;
    if (o->min_divergence_step < 0 || o->max_differ_rate > 1)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "--max-differ-rate", -1,
                             "the rate must be in [0, 1] and the step >= 0");
    if (o->steps < 0 || !(o->confidence > 0 && o->confidence < 1))
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "--steps", -1,
                             "steps must be >= 0 and the confidence in (0, 1)");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    onp_dec_manifest m;
    if (onp_dec_manifest_read(dir, &m, e)) return -1;
    int n_steps = o->steps ? o->steps : m.steps, rc = -1;
    onp_ort *ort = NULL;
    onp_session *s = NULL;
    onp_decode_result *r = NULL;
    if (n_steps > m.steps) {
        onp_error_set(e, ONP_ERR_USAGE, NULL, "--steps", -1,
                      "%d steps asked, the capture recorded %d", n_steps, m.steps);
        goto done;
    }
    char model[1200];
    snprintf(model, sizeof model, "%s/model.onnx", dir);
    int upgraded;
    if (onp_run_session_open_model(o->ort_lib, &o->session, model, NULL, &ort, &s, &upgraded, e))
        goto done;
    if (check_names(&m, s, e) || result_alloc(&m, n_steps, &r, e)) goto done;
    size_t first = 0;
    for (size_t k = 0; k < m.n_batches; k++) {
        if (o->progress) o->progress(o->progress_ctx, k + 1, m.n_batches, m.batches[k].dir);
        batch_arrays a;
        if (read_batch_arrays(&m, &m.batches[k], &a, e)) goto done;
        loop_ctx c = {.m = &m, .o = o, .b = &m.batches[k], .a = &a, .n_steps = n_steps};
        int brc = run_batch(&c, s, r->prompts + first, r->step_ratio, e);
        arrays_release(&a);
        if (brc) goto done;
        first += (size_t)m.batches[k].rows;
    }
    tally(r, o);
    snprintf(r->ort_version, sizeof r->ort_version, "%s", onp_ort_version(ort));
    snprintf(r->provider, sizeof r->provider, "%s", onp_session_describe(s)->provider);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    rc = 0;
done:
    if (rc) onp_decode_result_free(r), r = NULL;
    onp_session_close(s);
    onp_ort_close(ort);
    onp_dec_manifest_release(&m);
    *out = r;
    return rc;
}
