/*
 * probe.c — the optimization-level sweep, the optimizer search and the
 * probes (include/onnxparity/probe.h).
 *
 * Every experiment is "open a session with these options, run the
 * fixtures, compare": eval_config() does that once for one configuration
 * and reports pass/fail per output, determinism (each fixture run twice,
 * compared bytewise) and per-fixture status.  The sweep calls it once per
 * level and then, when `all` breaks parity that `disable` keeps, bisects
 * the optimizer list through optimization.disable_specified_optimizers.
 * The probes reuse one session to split a batched fixture into samples and
 * group fixtures by input shape.  Never prints.
 */
#include "onnxparity/probe.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>

#include "onnxparity/noise.h"
#include "onnxparity/tfile.h"

// --- fixtures ----------------------------------------------------------------

typedef struct fx {
    int index;
    size_t n_in, n_out;
    onp_tensor *in;    /* [n_in], unnamed: fed by position */
    onp_tensor *out;   /* [n_out] expected */
    onp_tensor *ref64; /* [n_out] the capture's float64 reference (count 0 when absent) */
} fx;

struct onp_fixset {
    size_t n;
    fx *f; /* [n] */
};

void onp_fixset_free(onp_fixset *fs)
{
    if (!fs) return;
    for (size_t i = 0; i < fs->n; i++) {
        for (size_t k = 0; k < fs->f[i].n_in; k++) onp_tensor_release(&fs->f[i].in[k]);
        for (size_t k = 0; k < fs->f[i].n_out; k++) onp_tensor_release(&fs->f[i].out[k]);
        for (size_t k = 0; fs->f[i].ref64 && k < fs->f[i].n_out; k++)
            onp_tensor_release(&fs->f[i].ref64[k]);
        free(fs->f[i].in);
        free(fs->f[i].out);
        free(fs->f[i].ref64);
    }
    free(fs->f);
    free(fs);
}

size_t onp_fixset_count(const onp_fixset *fs)
{
    return fs ? fs->n : 0;
}

int onp_fixset_index(const onp_fixset *fs, size_t i)
{
    return fs && i < fs->n ? fs->f[i].index : -1;
}

int onp_fixset_load(const char *target, onp_fixset **out, onp_error *e)
{
    return onp_fixset_load_dirs(&target, 1, out, e);
}

int onp_fixset_load_dirs(const char *const *dirs, size_t n_dirs, onp_fixset **out, onp_error *e)
{
    *out = NULL;
    onp_testdata td;
    const char *target = n_dirs ? dirs[0] : NULL;
    if (onp_testdata_scan_dirs(dirs, n_dirs, &td, e)) return -1;
    if (onp_testdata_require(&td, target, e)) {
        onp_testdata_free(&td);
        return -1;
    }
    onp_fixset *fs = calloc(1, sizeof *fs);
    if (fs) fs->f = calloc(td.n, sizeof *fs->f);
    if (!fs || !fs->f) {
        free(fs);
        onp_testdata_free(&td);
        return onp_error_set(e, ONP_ERR_NOMEM, target, NULL, -1, "out of memory");
    }
    int rc = 0;
    for (size_t i = 0; i < td.n && !rc; i++, fs->n++) {
        const onp_fixture *f = &td.sets[i];
        fx *x = &fs->f[i];
        x->index = f->index;
        x->in = calloc(f->n_inputs ? f->n_inputs : 1, sizeof *x->in);
        x->out = calloc(f->n_outputs ? f->n_outputs : 1, sizeof *x->out);
        x->ref64 = calloc(f->n_outputs ? f->n_outputs : 1, sizeof *x->ref64);
        if (!x->in || !x->out || !x->ref64) {
            rc = onp_error_set(e, ONP_ERR_NOMEM, f->dir, NULL, -1, "out of memory");
            break;
        }
        for (; x->n_in < f->n_inputs && !rc; x->n_in++)
            if (onp_tfile_read(f->inputs[x->n_in], NULL, &x->in[x->n_in], e) ||
                onp_tensor_set_name(&x->in[x->n_in], NULL, e))
                rc = -1;
        for (; x->n_out < f->n_outputs && !rc; x->n_out++)
            if (onp_tfile_read(f->outputs[x->n_out], NULL, &x->out[x->n_out], e) ||
                onp_fixture_read_ref64(f, x->n_out, &x->ref64[x->n_out], e) < 0)
                rc = -1;
    }
    onp_testdata_free(&td);
    if (rc) {
        onp_fixset_free(fs);
        return -1;
    }
    *out = fs;
    return 0;
}

// --- options -----------------------------------------------------------------

void onp_probe_opts_init(onp_probe_opts *o)
{
    memset(o, 0, sizeof *o);
    o->rtol = o->atol = -1;
    o->export_fixture = -1;
    o->find_optimizer = 1;
}

/* ORT's names (onnxruntime/core/optimizer/: each transformer's or rewrite
 * rule's Name()).  How to add one: append the name ORT gives it; the search
 * bisects this list, so order does not matter. */
static const char *const default_optimizers[] = {"ConstantFolding",
                                                 "ConstantSharing",
                                                 "CommonSubexpressionElimination",
                                                 "EliminateIdentity",
                                                 "EliminateSlice",
                                                 "UnsqueezeElimination",
                                                 "EliminateDropout",
                                                 "ExpandElimination",
                                                 "CastElimination",
                                                 "NoopElimination",
                                                 "DivMulFusion",
                                                 "FuseReluClip",
                                                 "GemmSumFusion",
                                                 "GemmTransposeFusion",
                                                 "NotWhereFusion",
                                                 "ConvAddFusion",
                                                 "ConvMulFusion",
                                                 "ConvBNFusion",
                                                 "PadFusion",
                                                 "MatMulAddFusion",
                                                 "ReshapeFusion",
                                                 "ConvActivationFusion",
                                                 "ConvAddActivationFusion",
                                                 "GemmActivationFusion",
                                                 "MatMulIntegerToFloatFusion",
                                                 "DynamicQuantizeMatMulFusion",
                                                 "MatMulScaleFusion",
                                                 "MatmulTransposeFusion",
                                                 "LayerNormFusion",
                                                 "SimplifiedLayerNormFusion",
                                                 "GeluFusion",
                                                 "BiasGeluFusion",
                                                 "FastGeluFusion",
                                                 "QuickGeluFusion",
                                                 "GeluApproximation",
                                                 "AttentionFusion",
                                                 "SkipLayerNormFusion",
                                                 "EmbedLayerNormFusion",
                                                 "BiasSoftmaxFusion",
                                                 "BiasDropoutFusion",
                                                 "QDQPropagationTransformer",
                                                 "QDQSelectorActionTransformer",
                                                 "QDQS8ToU8Transformer",
                                                 "QDQFinalCleanupTransformer",
                                                 "DoubleQDQPairsRemover",
                                                 "ClipQuantFusion",
                                                 "ReluQuantFusion",
                                                 "TransposeOptimizer",
                                                 "NchwcTransformer",
                                                 "NhwcTransformer",
                                                 NULL};

const char *const *onp_probe_default_optimizers(size_t *n)
{
    if (n) *n = sizeof default_optimizers / sizeof default_optimizers[0] - 1;
    return default_optimizers;
}

// --- one configuration -------------------------------------------------------

static onp_tol tol_of(const onp_probe_opts *o, int32_t dtype)
{
    onp_tol t = onp_tol_default(dtype);
    if (o->rtol >= 0) t.rtol = o->rtol;
    if (o->atol >= 0) t.atol = o->atol;
    return t;
}

static void release_all(onp_tensor *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) onp_tensor_release(&t[i]);
}

/* What eval_config() learns about one configuration. */
typedef struct evalres {
    int opened;
    char error[512];
    int pass;
    int deterministic;
    int nondet_fixture;
    char nondet_output[256];
    double nondet_max_abs;
    onp_sweep_cell *cells; /* [n_cells] filled when not NULL */
    size_t n_cells;
    int *fix_status;   /* [fs->n] 0 pass, 1 fail, 2 error; when not NULL */
    char provider[64]; /* ORT's name of the provider the session used */
} evalres;

/* Largest |a - b| of two same-shape tensors (inf when shapes differ). */
static double diff_abs(const onp_tensor *a, const onp_tensor *b)
{
    onp_metrics m;
    onp_error e;
    onp_tol t = {0, 0};
    if (onp_compare(a, b, t, &m, &e) || !m.shape_ok) return INFINITY;
    return m.max_abs;
}

/* Run every fixture on session s (twice when `twice`) and compare. */
/* Fixture f run again with every floating input moved by one ulp, into
 * out[] (the ORT-side noise estimate, noise.h).  -1 when it cannot run. */
static int perturbed_run(onp_session *s, const fx *f, onp_tensor *out)
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

/* Output k of fixture f judged as check judges it (noise.h): the tolerance,
 * then the float64 reference or, lazily, the spread of a perturbed run (p,
 * filled on first need; *p_state 0 not run, 1 ran, -1 failed). */
static int judge_out(onp_session *s, const fx *f, size_t k, const onp_tensor *got,
                     const onp_probe_opts *o, onp_tensor *p, int *p_state, double *max_abs)
{
    onp_metrics m;
    onp_judgment j;
    onp_error ce;
    onp_judge_opts jo = {tol_of(o, f->out[k].dtype), 0, o->atol >= 0};
    const onp_tensor *r64 = f->ref64 && f->ref64[k].count ? &f->ref64[k] : NULL;
    if (onp_judge_value(&f->out[k], got, r64, NULL, &jo, &m, &j, &ce)) {
        *max_abs = INFINITY;
        return 0;
    }
    *max_abs = m.shape_ok ? m.max_abs : INFINITY;
    if (j.verdict != ONP_VERDICT_BEYOND_TOL) return j.pass;
    if (!*p_state) *p_state = perturbed_run(s, f, p) ? -1 : 1;
    onp_noise n;
    if (*p_state != 1 || onp_noise_spread(got, &p[k], &n, &ce) != 0) return 0;
    if (onp_judge_value(&f->out[k], got, NULL, &n, &jo, &m, &j, &ce)) return 0;
    return j.pass;
}

static int eval_session(onp_session *s, const onp_fixset *fs, const onp_probe_opts *o, int twice,
                        evalres *r, onp_error *e)
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
    r->pass = 1;
    r->deterministic = 1;
    r->nondet_fixture = -1;
    for (size_t k = 0; r->cells && k < r->n_cells; k++) r->cells[k] = (onp_sweep_cell){1, 0, -1};
    for (size_t i = 0; i < fs->n; i++) {
        const fx *f = &fs->f[i];
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
            release_all(b, n_out);
        }
        int p_state = 0;
        for (size_t k = 0; k < f->n_out; k++) {
            int ok = 0;
            double ma = INFINITY;
            if (k < n_out) ok = judge_out(s, f, k, &a[k], o, pb, &p_state, &ma);
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
        if (st) r->pass = 0;
        if (r->fix_status) r->fix_status[i] = st;
        release_all(a, n_out);
        if (p_state == 1) release_all(pb, n_out);
    }
    free(a);
    free(pb);
    free(b);
    return 0;
}

/* Open a session with `so` and evaluate it.  A session that cannot open is
 * r->opened = 0 with the message, not an error. */
static int eval_config(onp_ort *ort, const char *model, const onp_fixset *fs,
                       const onp_probe_opts *o, const onp_session_opts *so, int twice, evalres *r,
                       onp_error *e)
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
    int rc = eval_session(s, fs, o, twice, r, e);
    onp_session_close(s);
    return rc;
}

// --- sweep -------------------------------------------------------------------

static const onp_ort_opt_level sweep_levels[ONP_SWEEP_LEVELS] = {
    ONP_ORT_OPT_DISABLE, ONP_ORT_OPT_BASIC, ONP_ORT_OPT_EXTENDED, ONP_ORT_OPT_LAYOUT,
    ONP_ORT_OPT_ALL};

static void free_levels(onp_sweep_level *L)
{
    for (int l = 0; L && l < ONP_SWEEP_LEVELS; l++) {
        free(L[l].cells);
        onp_graph_diff_free(L[l].graph_diff);
    }
}

void onp_sweep_free(onp_sweep_result *r)
{
    if (!r) return;
    for (size_t i = 0; r->outputs && i < r->n_outputs; i++) free(r->outputs[i]);
    free(r->outputs);
    free_levels(r->levels);
    for (size_t c = 1; r->configs && c < r->n_configs; c++) {
        free_levels(r->configs[c].levels);
        free(r->configs[c].levels);
    }
    free(r->configs);
    onp_graph_diff_free(r->culprit_diff);
    free(r);
}

/* 1 when `p` names ORT's CPU provider (NULL and "" do: the default). */
static int is_cpu(const char *p)
{
    return !p || !p[0] || !strcasecmp(p, "cpu") || !strcasecmp(p, "CPUExecutionProvider");
}

/* The session options of one configuration: the caller's, with `provider`
 * (provider options dropped for the CPU, which takes none) and no
 * optimized-model path (the sweep saves graphs itself). */
static onp_session_opts config_session(const onp_probe_opts *o, const char *provider)
{
    onp_session_opts so = o->session;
    so.provider = provider;
    if (is_cpu(provider)) {
        so.provider_opts = NULL;
        so.n_provider_opts = 0;
    }
    so.optimized_model_path = NULL;
    return so;
}

/* `base` plus one config entry; *cfg is the caller's to free. */
static int with_entry(const onp_session_opts *base, const char *entry, onp_session_opts *so,
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

/* "optimization.disable_specified_optimizers=A;B" for the names with
 * mask[i] set; malloc'd, NULL when out of memory. */
static char *disable_entry(const char *const *names, const unsigned char *mask, size_t n)
{
    size_t len = 64;
    for (size_t i = 0; i < n; i++)
        if (mask[i]) len += strlen(names[i]) + 1;
    char *entry = malloc(len);
    if (!entry) return NULL;
    size_t at = (size_t)snprintf(entry, len, "optimization.disable_specified_optimizers=");
    const char *sep = "";
    for (size_t i = 0; i < n; i++)
        if (mask[i]) {
            at += (size_t)snprintf(entry + at, len - at, "%s%s", sep, names[i]);
            sep = ";";
        }
    return entry;
}

/* The optimizer search.  ORT (1.29 at least) splits the config value on
 * ';' only, although its header says "comma separated": a comma-joined
 * list is one unknown name that disables nothing, silently
 * (microsoft/onnxruntime#32211).  So the list is joined with ';'. */
typedef struct search {
    onp_ort *ort;
    const char *model;
    const onp_fixset *fs;
    const onp_probe_opts *o;
    const onp_session_opts *base; /* the configuration searched */
    const char *const *names;     /* [n] */
    size_t n;
    int sessions;
} search;

/* Does disabling every name with mask[i] set, at level `all`, restore
 * parity?  1 yes, 0 no, -1 error (e set). */
static int restores(search *S, const unsigned char *mask, onp_error *e)
{
    char *entry = disable_entry(S->names, mask, S->n);
    const char **cfg = NULL;
    onp_session_opts so;
    if (!entry) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    if (with_entry(S->base, entry, &so, &cfg, e)) {
        free(entry);
        return -1;
    }
    so.opt_level = ONP_ORT_OPT_ALL;
    evalres r;
    memset(&r, 0, sizeof r);
    S->sessions++;
    int rc = eval_config(S->ort, S->model, S->fs, S->o, &so, 0, &r, e);
    free(entry);
    free(cfg);
    if (rc) return -1;
    return r.opened && r.pass;
}

/* Reduce the candidates cand[] (a mask) to a minimal set that, disabled
 * together with fixed[], restores parity (which cand | fixed does): try
 * each half alone; when neither does, minimise each half with the other
 * held fixed.  Writes the set into keep[]; 0, or -1 on error. */
static int minimise(search *S, const unsigned char *cand, const unsigned char *fixed,
                    unsigned char *keep, onp_error *e)
{
    size_t n = S->n, cnt = 0;
    for (size_t i = 0; i < n; i++) cnt += cand[i];
    if (cnt == 0) return 0;
    unsigned char *a = calloc(n, 1), *b = calloc(n, 1), *t = calloc(n, 1);
    int rc = 0;
    if (!a || !b || !t) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        goto done;
    }
    if (cnt == 1) {
        int r = restores(S, fixed, e); /* is the one needed at all? */
        if (r < 0) rc = -1;
        for (size_t i = 0; !rc && !r && i < n; i++)
            if (cand[i]) keep[i] = 1;
        goto done;
    }
    for (size_t i = 0, k = 0; i < n; i++)
        if (cand[i]) (k++ < cnt / 2 ? a : b)[i] = 1;
    for (int h = 0; h < 2; h++) {
        const unsigned char *half = h ? b : a;
        for (size_t i = 0; i < n; i++) t[i] = half[i] | fixed[i];
        int r = restores(S, t, e);
        if (r < 0) {
            rc = -1;
            goto done;
        }
        if (r) {
            rc = minimise(S, half, fixed, keep, e);
            goto done;
        }
    }
    for (size_t i = 0; i < n; i++) t[i] = fixed[i] | b[i];
    unsigned char *ka = calloc(n, 1);
    if (!ka) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        goto done;
    }
    rc = minimise(S, a, t, ka, e);
    for (size_t i = 0; !rc && i < n; i++) t[i] = fixed[i] | ka[i];
    if (!rc) rc = minimise(S, b, t, keep, e);
    for (size_t i = 0; i < n; i++) keep[i] |= ka[i];
    free(ka);
done:
    free(a);
    free(b);
    free(t);
    return rc;
}

/* Sweep one configuration over every level into L[ONP_SWEEP_LEVELS]
 * (cells allocated here).  0, or -1 on allocation failure. */
static int sweep_config(onp_ort *ort, const char *model, const onp_fixset *fs,
                        const onp_probe_opts *o, const onp_session_opts *base, size_t n_out,
                        onp_sweep_config *c, onp_error *e)
{
    onp_sweep_level *L = c->levels;
    int offered = is_cpu(c->requested) || onp_ort_has_provider(ort, c->requested);
    if (!offered) {
        size_t at = (size_t)snprintf(c->unavailable, sizeof c->unavailable,
                                     "ONNX Runtime %s (%s) does not offer %s; it offers ",
                                     c->ort_version, c->ort_library, c->requested);
        for (size_t i = 0; i < onp_ort_provider_count(ort) && at < sizeof c->unavailable; i++)
            at += (size_t)snprintf(c->unavailable + at, sizeof c->unavailable - at, "%s%s",
                                   i ? ", " : "", onp_ort_provider(ort, i));
    }
    c->first_failing = -1;
    c->pass = 1;
    for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
        L[l].level = sweep_levels[l];
        L[l].nondet_fixture = -1;
        L[l].deterministic = 1;
        L[l].cells = calloc(n_out ? n_out : 1, sizeof *L[l].cells);
        if (!L[l].cells) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        evalres er;
        memset(&er, 0, sizeof er);
        if (offered) {
            onp_session_opts so = *base;
            so.opt_level = L[l].level;
            er.cells = L[l].cells;
            er.n_cells = n_out;
            if (eval_config(ort, model, fs, o, &so, !o->once, &er, e)) return -1;
        } else {
            snprintf(er.error, sizeof er.error, "%s", c->unavailable);
        }
        L[l].ran = er.opened;
        snprintf(L[l].error, sizeof L[l].error, "%s", er.error);
        L[l].pass = er.opened && er.pass;
        L[l].deterministic = !er.opened ? 1 : o->once ? -1 : er.deterministic;
        L[l].nondet_fixture = er.opened ? er.nondet_fixture : -1;
        snprintf(L[l].nondet_output, sizeof L[l].nondet_output, "%s", er.nondet_output);
        if (!er.opened)
            for (size_t k = 0; k < n_out; k++) L[l].cells[k] = (onp_sweep_cell){0, INFINITY, -1};
        if (er.opened && !c->available) {
            c->available = 1;
            snprintf(c->provider, sizeof c->provider, "%s", er.provider);
        }
        if (l > 0 && c->first_failing < 0 && L[l - 1].pass && !L[l].pass) c->first_failing = l;
        if (!L[l].pass || !L[l].deterministic) c->pass = 0;
    }
    if (!c->available) {
        c->pass = 0;
        if (offered) snprintf(c->unavailable, sizeof c->unavailable, "%s", L[0].error);
    }
    return 0;
}

// --- optimized graphs ----------------------------------------------------------

/* Where the sweep's optimized models go: a temporary folder removed at the
 * end, or the caller's folder, kept. */
typedef struct gstore {
    char dir[2048];
    int ready, keep;
    char **files; /* [n] every file written, removed at the end unless keep */
    size_t n;
    char *note; /* the result's graph_note */
    size_t note_size;
} gstore;

static void gnote(gstore *g, const char *what, const char *why)
{
    if (g->note[0]) return; /* the first problem says enough */
    snprintf(g->note, g->note_size, "%.150s: %.340s", what, why);
}

static int gstore_ready(gstore *g, const char *save_dir)
{
    if (g->ready) return 0;
    if (save_dir) {
        snprintf(g->dir, sizeof g->dir, "%s", save_dir);
        if (mkdir(g->dir, 0777) && errno != EEXIST) {
            gnote(g, g->dir, strerror(errno));
            return -1;
        }
        g->keep = 1;
    } else {
        const char *t = getenv("TMPDIR");
        snprintf(g->dir, sizeof g->dir, "%s/onnxparity-sweep-XXXXXX", t && t[0] ? t : "/tmp");
        if (!mkdtemp(g->dir)) {
            gnote(g, "a temporary folder for the optimized models", strerror(errno));
            return -1;
        }
    }
    g->ready = 1;
    return 0;
}

static void gstore_release(gstore *g)
{
    for (size_t i = 0; i < g->n; i++) {
        if (!g->keep) unlink(g->files[i]);
        free(g->files[i]);
    }
    free(g->files);
    if (g->ready && !g->keep) rmdir(g->dir);
}

/* Have ORT save the model optimized with `so` under `name` in the store;
 * reuses a file saved before.  Returns the path (owned by the store), or
 * NULL with the reason noted. */
static const char *save_graph(gstore *g, onp_ort *ort, const char *model,
                              const onp_session_opts *so, const char *save_dir, const char *name)
{
    if (gstore_ready(g, save_dir)) return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g->dir, name);
    for (size_t i = 0; i < g->n; i++)
        if (!strcmp(g->files[i], path)) return g->files[i];
    char **nf = realloc(g->files, (g->n + 1) * sizeof *nf);
    if (!nf) return NULL;
    g->files = nf;
    g->files[g->n] = malloc(strlen(path) + 1);
    if (!g->files[g->n]) return NULL;
    strcpy(g->files[g->n], path);
    onp_session_opts s2 = *so;
    s2.optimized_model_path = g->files[g->n];
    onp_session *s;
    onp_error se;
    if (onp_session_open(ort, model, &s2, &s, &se)) {
        gnote(g, name, se.msg);
        unlink(g->files[g->n]);
        free(g->files[g->n]);
        return NULL;
    }
    onp_session_close(s);
    return g->files[g->n++];
}

static char *dup_str(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d) strcpy(d, s);
    return d;
}

/* Diff two saved graphs; labels set; NULL (noted) when one is missing or
 * unreadable. */
static onp_graph_diff *diff_saved(gstore *g, const char *fa, const char *fb, const char *la,
                                  const char *lb)
{
    if (!fa || !fb) return NULL;
    onp_graph_diff *d;
    onp_error de;
    if (onp_graph_diff_files(fa, fb, &d, &de)) {
        gnote(g, fb, de.msg);
        return NULL;
    }
    snprintf(d->from, sizeof d->from, "%s", la);
    snprintf(d->to, sizeof d->to, "%s", lb);
    if (g->keep) {
        d->from_file = dup_str(fa);
        d->to_file = dup_str(fb);
    }
    return d;
}

/* The file name of configuration c's graph at one level: PROVIDER-LEVEL.onnx,
 * prefixed libK- when several libraries are swept. */
static void graph_name(const onp_sweep_config *c, size_t n_orts, const char *what, char *buf,
                       size_t n)
{
    char lib[32] = "";
    if (n_orts > 1) snprintf(lib, sizeof lib, "lib%zu-", c->library);
    snprintf(buf, n, "%s%s-%s.onnx", lib, c->provider, what);
    for (char *p = buf; *p; p++)
        if (*p == '/' || *p == ';' || *p == ' ') *p = '+';
}

/* levels[hi].graph_diff = the graph at hi against the graph at lo. */
static void diff_levels(gstore *g, onp_ort *ort, const char *model, const onp_session_opts *base,
                        const onp_probe_opts *o, onp_sweep_config *c, size_t n_orts, int lo, int hi)
{
    if (c->levels[hi].graph_diff || !c->levels[lo].ran || !c->levels[hi].ran) return;
    const char *f[2];
    int lv[2] = {lo, hi};
    for (int k = 0; k < 2; k++) {
        char name[256];
        onp_session_opts so = *base;
        so.opt_level = sweep_levels[lv[k]];
        graph_name(c, n_orts, onp_ort_opt_level_name(so.opt_level), name, sizeof name);
        f[k] = save_graph(g, ort, model, &so, o->save_optimized_dir, name);
    }
    c->levels[hi].graph_diff = diff_saved(g, f[0], f[1], onp_ort_opt_level_name(sweep_levels[lo]),
                                          onp_ort_opt_level_name(sweep_levels[hi]));
}

// --- the matrix ------------------------------------------------------------------

int onp_sweep_run(onp_ort *ort, const char *model_path, const onp_fixset *fs,
                  const onp_probe_opts *o, onp_sweep_result **out, onp_error *e)
{
    return onp_sweep_run_libs(&ort, 1, model_path, fs, o, out, e);
}

/* The output names, from the first library's CPU session at the level
 * under test; "output_K" when it cannot open. */
static int output_names(onp_ort *ort, const char *model, const onp_fixset *fs,
                        const onp_probe_opts *o, onp_sweep_result *r)
{
    size_t n_out = 0;
    for (size_t i = 0; i < fs->n; i++)
        if (fs->f[i].n_out > n_out) n_out = fs->f[i].n_out;
    onp_session_opts so = config_session(o, NULL);
    onp_session *s;
    onp_error se;
    int opened = !onp_session_open(ort, model, &so, &s, &se);
    if (opened && onp_session_output_count(s) < n_out) n_out = onp_session_output_count(s);
    r->outputs = calloc(n_out ? n_out : 1, sizeof *r->outputs);
    for (size_t k = 0; r->outputs && k < n_out; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "output_%zu", k);
        r->outputs[k] = dup_str(opened ? onp_session_output(s, k)->name : nm);
    }
    if (opened) onp_session_close(s);
    r->n_outputs = n_out;
    if (!r->outputs) return -1;
    for (size_t k = 0; k < n_out; k++)
        if (!r->outputs[k]) return -1;
    return 0;
}

/* The optimizer search on configuration c. */
static int run_search(onp_ort *ort, const char *model, const onp_fixset *fs,
                      const onp_probe_opts *o, const onp_session_opts *base, onp_sweep_result *r,
                      onp_error *e)
{
    size_t nc = o->n_candidates;
    const char *const *names = o->candidates;
    if (!names) names = onp_probe_default_optimizers(&nc);
    search S = {ort, model, fs, o, base, names, nc, 0};
    unsigned char *all_m = calloc(nc ? nc : 1, 1), *none = calloc(nc ? nc : 1, 1),
                  *keep = calloc(nc ? nc : 1, 1);
    int rc = 0, every = 0;
    r->searched = 1;
    if (!all_m || !none || !keep) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    } else {
        memset(all_m, 1, nc);
        every = nc ? restores(&S, all_m, e) : 0;
        if (every < 0) rc = -1;
        if (!rc && every) rc = minimise(&S, all_m, none, keep, e);
    }
    r->sessions_tried = S.sessions;
    if (!rc && every) {
        size_t at = 0, k = 0;
        for (size_t i = 0; i < nc; i++)
            if (keep[i] && at < sizeof r->culprit)
                at += (size_t)snprintf(r->culprit + at, sizeof r->culprit - at, "%s%s",
                                       k++ ? ";" : "", names[i]);
        snprintf(r->search_note, sizeof r->search_note,
                 "disabling %s at level all restores parity%s (%d sessions)", r->culprit,
                 k > 1 ? ": these optimizers change results together, each alone does not "
                         "restore it"
                       : "",
                 S.sessions);
    } else if (!rc) {
        snprintf(r->search_note, sizeof r->search_note,
                 "disabling all %zu candidate optimizers does not restore parity at "
                 "level all: the change comes from a level-specific kernel or an "
                 "optimizer not in the list",
                 nc);
    }
    free(all_m);
    free(none);
    free(keep);
    return rc;
}

/* The graph at `all` without the culprit against the graph at `all`: the
 * nodes the culprit fused. */
static int culprit_graphs(gstore *g, onp_ort *ort, const char *model, const onp_session_opts *base,
                          const onp_probe_opts *o, onp_sweep_config *c, size_t n_orts,
                          onp_sweep_result *r, onp_error *e)
{
    char entry[400], name[320], what[300], label[96];
    snprintf(entry, sizeof entry, "optimization.disable_specified_optimizers=%s", r->culprit);
    const char **cfg;
    onp_session_opts without;
    if (with_entry(base, entry, &without, &cfg, e)) return -1;
    without.opt_level = ONP_ORT_OPT_ALL;
    onp_session_opts with = *base;
    with.opt_level = ONP_ORT_OPT_ALL;
    snprintf(what, sizeof what, "all-without-%.200s", r->culprit);
    graph_name(c, n_orts, what, name, sizeof name);
    const char *fa = save_graph(g, ort, model, &without, o->save_optimized_dir, name);
    graph_name(c, n_orts, "all", name, sizeof name);
    const char *fb = save_graph(g, ort, model, &with, o->save_optimized_dir, name);
    snprintf(label, sizeof label, "all without %.70s", r->culprit);
    r->culprit_diff = diff_saved(g, fa, fb, label, "all");
    free(cfg);
    return 0;
}

void onp_sweep_cross_check(onp_sweep_result *r, size_t n_prov)
{
    r->ep_disagree = r->lib_disagree = 0;
    r->ep_level = 0;
    r->ep_provider[0] = r->ep_note[0] = r->lib_note[0] = '\0';
    if (!n_prov || !r->configs || r->n_configs % n_prov) return;
    size_t n_orts = r->n_configs / n_prov;
    for (size_t lib = 0; lib < n_orts && !r->ep_disagree; lib++) {
        const onp_sweep_config *ref = NULL;
        for (size_t p = 0; p < n_prov && !ref; p++) {
            const onp_sweep_config *c = &r->configs[lib * n_prov + p];
            if (c->available && is_cpu(c->provider)) ref = c;
        }
        for (size_t p = 0; p < n_prov && !ref; p++)
            if (r->configs[lib * n_prov + p].available) ref = &r->configs[lib * n_prov + p];
        for (size_t p = 0; ref && p < n_prov && !r->ep_disagree; p++) {
            const onp_sweep_config *c = &r->configs[lib * n_prov + p];
            if (c == ref || !c->available) continue;
            for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
                const onp_sweep_level *a = &ref->levels[l], *b = &c->levels[l];
                if (!a->ran || !b->ran || a->pass == b->pass) continue;
                r->ep_disagree = 1;
                r->ep_level = l;
                snprintf(r->ep_provider, sizeof r->ep_provider, "%s", c->provider);
                snprintf(
                    r->ep_note, sizeof r->ep_note, "at level %s %s %s and %s %s (ONNX Runtime %s)",
                    onp_ort_opt_level_name(a->level), ref->provider, a->pass ? "passes" : "fails",
                    c->provider, b->pass ? "passes" : "fails", ref->ort_version);
                break;
            }
        }
    }
    for (size_t p = 0; p < n_prov && !r->lib_disagree; p++)
        for (size_t lib = 1; lib < n_orts && !r->lib_disagree; lib++) {
            const onp_sweep_config *a0 = &r->configs[p], *b0 = &r->configs[lib * n_prov + p];
            if (!a0->available || !b0->available) continue;
            for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
                const onp_sweep_level *a = &a0->levels[l], *b = &b0->levels[l];
                if (!a->ran || !b->ran || a->pass == b->pass) continue;
                r->lib_disagree = 1;
                snprintf(r->lib_note, sizeof r->lib_note,
                         "%s at level %s: ONNX Runtime %s (%.150s) %s, ONNX Runtime %s (%.150s) %s",
                         a0->provider, onp_ort_opt_level_name(a->level), a0->ort_version,
                         a0->ort_library, a->pass ? "passes" : "fails", b0->ort_version,
                         b0->ort_library, b->pass ? "passes" : "fails");
                break;
            }
        }
}

int onp_sweep_run_libs(onp_ort *const *orts, size_t n_orts, const char *model_path,
                       const onp_fixset *fs, const onp_probe_opts *o, onp_sweep_result **out,
                       onp_error *e)
{
    *out = NULL;
    if (!n_orts) return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "no ONNX Runtime library");
    onp_sweep_result *r = calloc(1, sizeof *r);
    if (!r) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    r->n_fixtures = fs->n;
    r->first_failing = r->search_config = -1;
    onp_ort *ort0 = orts[0];
    for (size_t i = 0, at = 0; i < onp_ort_provider_count(ort0) && at < sizeof r->providers; i++)
        at += (size_t)snprintf(r->providers + at, sizeof r->providers - at, "%s%s", i ? ", " : "",
                               onp_ort_provider(ort0, i));
    /* a provider other than the CPU's is swept beside the CPU's: the
     * reference an execution-provider disagreement needs */
    int cpu_ref = !o->n_providers && !is_cpu(o->session.provider);
    size_t n_prov = o->n_providers ? o->n_providers : cpu_ref ? 2 : 1;
    gstore g = {.note = r->graph_note, .note_size = sizeof r->graph_note};
    int rc = output_names(ort0, model_path, fs, o, r);
    if (!rc) {
        r->n_configs = n_orts * n_prov;
        r->configs = calloc(r->n_configs, sizeof *r->configs);
        if (!r->configs) rc = -1;
    }
    for (size_t c = 0; !rc && c < r->n_configs; c++) {
        onp_sweep_config *C = &r->configs[c];
        C->library = c / n_prov;
        const char *prov = o->n_providers    ? o->providers[c % n_prov]
                           : c % n_prov == 0 ? o->session.provider
                                             : "cpu";
        snprintf(C->requested, sizeof C->requested, "%s", prov && prov[0] ? prov : "cpu");
        snprintf(C->provider, sizeof C->provider, "%s",
                 is_cpu(prov) ? "CPUExecutionProvider" : C->requested);
        snprintf(C->ort_version, sizeof C->ort_version, "%s", onp_ort_version(orts[C->library]));
        snprintf(C->ort_library, sizeof C->ort_library, "%s", onp_ort_lib_path(orts[C->library]));
        C->levels = c ? calloc(ONP_SWEEP_LEVELS, sizeof *C->levels) : r->levels;
        if (!C->levels) rc = -1;
    }
    if (rc) {
        onp_sweep_free(r);
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    }
    for (size_t c = 0; !rc && c < r->n_configs; c++) {
        onp_sweep_config *C = &r->configs[c];
        onp_session_opts base = config_session(o, is_cpu(C->requested) ? NULL : C->requested);
        rc = sweep_config(orts[C->library], model_path, fs, o, &base, r->n_outputs, C, e);
    }
    r->first_failing = r->configs ? r->configs[0].first_failing : -1;
    /* the optimizer search, on the first configuration that needs it */
    for (size_t c = 0; !rc && o->find_optimizer && c < r->n_configs; c++) {
        onp_sweep_config *C = &r->configs[c];
        const onp_sweep_level *dis = &C->levels[0], *all = &C->levels[ONP_SWEEP_LEVELS - 1];
        if (!C->available || !dis->pass || !all->ran || all->pass) continue;
        onp_session_opts base = config_session(o, is_cpu(C->requested) ? NULL : C->requested);
        r->search_config = (long)c;
        rc = run_search(orts[C->library], model_path, fs, o, &base, r, e);
        if (!rc && r->culprit[0] && o->diff_graphs >= 0)
            rc = culprit_graphs(&g, orts[C->library], model_path, &base, o, C, n_orts, r, e);
        break;
    }
    /* optimized-graph diffs: where parity breaks, or everywhere on request */
    for (size_t c = 0; !rc && o->diff_graphs >= 0 && c < r->n_configs; c++) {
        onp_sweep_config *C = &r->configs[c];
        if (!C->available) continue;
        onp_session_opts base = config_session(o, is_cpu(C->requested) ? NULL : C->requested);
        onp_ort *ort = orts[C->library];
        if (o->diff_graphs > 0) {
            for (int l = 1; l < ONP_SWEEP_LEVELS; l++)
                diff_levels(&g, ort, model_path, &base, o, C, n_orts, l - 1, l);
        } else if (C->first_failing > 0) {
            diff_levels(&g, ort, model_path, &base, o, C, n_orts, (int)C->first_failing - 1,
                        (int)C->first_failing);
        }
    }
    gstore_release(&g);
    if (!rc) onp_sweep_cross_check(r, n_prov);
    if (rc) {
        onp_sweep_free(r);
        return -1;
    }
    *out = r;
    return 0;
}

// --- probes ------------------------------------------------------------------

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

static int splittable(const fx *f)
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
static int batch_probe(onp_session *s, const fx *f, const onp_probe_opts *o, onp_probe_result *r,
                       onp_error *e)
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
            } else if (!onp_compare(&want, &one[k], tol_of(o, want.dtype), &m, &ce) && !m.pass) {
                r->batch_pass = 0;
                r->batch_max_abs = m.max_abs;
                snprintf(r->batch_output, sizeof r->batch_output, "%s", nm);
                snprintf(r->batch_note, sizeof r->batch_note,
                         "output %s of sample %lld alone differs from its slice of the batched "
                         "run by %.3g (max_abs)",
                         nm, (long long)smp, m.max_abs);
            }
        }
        release_all(one, n_out);
    }
    if (r->batch_pass)
        snprintf(r->batch_note, sizeof r->batch_note,
                 "the %lld samples of fixture %d run one at a time agree with the batched run",
                 (long long)n, f->index);
done:
    release_all(full, n_out);
    release_all(one, n_out);
    free(full);
    free(one);
    free(in);
    return rc;
}

/* 1 when fixtures a and b feed inputs of identical shapes. */
static int same_shapes(const fx *a, const fx *b)
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
    evalres er;
    memset(&er, 0, sizeof er);
    er.fix_status = st;
    int rc = eval_session(s, fs, o, 1, &er, e);
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
