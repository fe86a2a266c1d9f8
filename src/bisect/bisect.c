/*
 * bisect.c — the first node where ONNX Runtime leaves its reference
 * (include/onnxparity/bisect.h).
 *
 * Steps: scan the bundle's fixtures; read each fixture's
 * intermediates/index.json (value -> reference file, module); choose the
 * reference (eager files, or ORT at ORT_DISABLE_ALL); walk the main graph's
 * nodes in order and keep every output to compare (the curve); split the
 * curve into chunks; per chunk, add its values as graph outputs with the
 * splicing writer, open the session(s) on the edited bytes (or on a hidden
 * temp file beside the model when it has external data), run each fixture
 * once and compare each value with its reference in curve order, releasing
 * both tensors as soon as they are compared; then name the first failing
 * value, describe its node's inputs, run the plain model (does the
 * instrumented one reproduce?), rerun the node alone (local or inherited),
 * and fall back when the instrumented model hides the mismatch.  Never
 * prints; errors go to the caller's onp_error.
 */
#include "onnxparity/bisect.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "onnxparity/json.h"
#include "onnxparity/judge.h"
#include "onnxparity/manifest.h"
#include "onnxparity/model.h"
#include "onnxparity/outpath.h"
#include "onnxparity/tfile.h"
#include "model/dataflow.h"
#include "util/arena.h"
#include "util/fsio.h"
#include "util/strmap.h"

#define PATH_MAX_ 4096

// --- names -----------------------------------------------------------------

static const char *const status_names[] = {"agrees", "diverges", "no-reference"};
_Static_assert(sizeof status_names / sizeof status_names[0] == ONP_BISECT_STATUS_COUNT,
               "status_names must match onp_bisect_status");

const char *onp_bisect_status_name(onp_bisect_status s)
{
    return (unsigned)s < ONP_BISECT_STATUS_COUNT ? status_names[s] : "?";
}

const char *onp_bisect_src_name(onp_bisect_src s)
{
    switch (s) {
    case ONP_BISECT_SRC_EAGER: return "eager";
    case ONP_BISECT_SRC_GRAPH_INPUT: return "graph-input";
    case ONP_BISECT_SRC_INITIALIZER: return "initializer";
    case ONP_BISECT_SRC_CONSTANT: return "constant";
    case ONP_BISECT_SRC_NONE: return "no-reference";
    case ONP_BISECT_SRC_OMITTED: return "omitted";
    }
    return "?";
}

static const char *const ref_names[] = {"eager", "disable", "auto"};
_Static_assert(sizeof ref_names / sizeof ref_names[0] == ONP_BISECT_REF_COUNT,
               "ref_names must match onp_bisect_ref");

const char *onp_bisect_ref_name(onp_bisect_ref r)
{
    return (unsigned)r < ONP_BISECT_REF_COUNT ? ref_names[r] : "?";
}

void onp_bisect_opts_init(onp_bisect_opts *o)
{
    memset(o, 0, sizeof *o);
    o->rtol = o->atol = -1;
    o->fixture = -1;
    o->reference = ONP_BISECT_REF_EAGER;
    o->eager_random = -1;
}

// --- per-fixture references --------------------------------------------------

/* One fixture's intermediates: value -> index into files[]. */
typedef struct fixref {
    const onp_fixture *f;
    onp_strmap map;    /* value -> i */
    const char **file; /* [n] reference .pb paths */
    onp_noise *noise;  /* [n] float64 statistics from index.json (src NONE: none) */
    size_t n, n_noise; /* n_noise: entries with statistics */
} fixref;

/* Every referenced value over the fixtures, with the module that produced it. */
typedef struct refset {
    onp_strmap map;      /* value -> i */
    const char **values; /* [n] */
    const char **module; /* [n] */
    size_t n, cap;
} refset;

static int refset_add(refset *u, const char *value, const char *module)
{
    if (onp_strmap_get(&u->map, value, NULL)) return 0;
    if (u->n == u->cap) {
        size_t cap = u->cap ? 2 * u->cap : 64;
        const char **v = realloc(u->values, cap * sizeof *v);
        if (!v) return -1;
        u->values = v;
        const char **m = realloc(u->module, cap * sizeof *m);
        if (!m) return -1;
        u->module = m;
        u->cap = cap;
    }
    u->values[u->n] = value;
    u->module[u->n] = module;
    return onp_strmap_put(&u->map, value, u->n++);
}

static void refset_free(refset *u)
{
    onp_strmap_free(&u->map);
    free(u->values);
    free(u->module);
}

/* A file name from index.json must stay inside the intermediates folder. */
static int safe_name(const char *s)
{
    return s[0] && s[0] != '.' && !strchr(s, '/') && !strchr(s, '\\');
}

/* An entry's "noise" statistics (float32 eager vs float64 eager, written by
 * the capture): absent -> src NONE; malformed -> -1. */
static int read_noise(const cJSON *o, onp_noise *n)
{
    memset(n, 0, sizeof *n);
    if (!o || cJSON_IsNull(o)) return 0;
    if (!cJSON_IsObject(o)) return -1;
    static const char *const keys[] = {"max_abs", "rms", "scale_max", "scale_rms"};
    double v[4];
    for (int k = 0; k < 4; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0) return -1;
        v[k] = x->valuedouble;
    }
    n->src = ONP_NOISE_FLOAT64;
    n->max_abs = v[0], n->rms = v[1], n->scale_max = v[2], n->scale_rms = v[3];
    return 0;
}

/* Read dir/intermediates/index.json into r (strings in the arena) and add
 * its values to u.  A fixture without the file gets r->n == 0. */
static int read_index(onp_arena *a, const onp_fixture *f, fixref *r, refset *u, onp_error *e)
{
    char path[PATH_MAX_];
    r->f = f;
    snprintf(path, sizeof path, "%s/intermediates/index.json", f->dir);
    if (access(path, F_OK) != 0) return 0;
    onp_map *mp;
    if (onp_map_open(path, &mp, e)) return -1;
    cJSON *doc = onp_json_parse(mp->p, mp->n, path, ONP_ERR_FORMAT, "not valid JSON", e);
    onp_map_unref(mp);
    if (!doc) return -1;
    const cJSON *entries = doc ? cJSON_GetObjectItemCaseSensitive(doc, "entries") : NULL;
    if (!cJSON_IsArray(entries)) {
        cJSON_Delete(doc);
        return onp_error_set(e, ONP_ERR_FORMAT, path, "entries", -1,
                             "not an onnxparity.intermediates/1 index (no 'entries' array)");
    }
    int n = cJSON_GetArraySize(entries), rc = 0;
    r->file = onp_arena_array(a, (size_t)n + 1, sizeof *r->file);
    r->noise = onp_arena_array(a, (size_t)n + 1, sizeof *r->noise);
    if (!r->file || !r->noise)
        rc = onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    const cJSON *it = entries->child; /* walked in order: GetArrayItem(i) is O(i) */
    for (int i = 0; !rc && i < n && it; i++, it = it->next) {
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "file"));
        const char *value = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "value"));
        const char *module = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "module"));
        const cJSON *call = cJSON_GetObjectItemCaseSensitive(it, "call");
        char field[64];
        snprintf(field, sizeof field, "entries[%d]", i);
        if (!file || !value) {
            rc = onp_error_set(e, ONP_ERR_FORMAT, path, field, -1, "entry without file or value");
            break;
        }
        if (!safe_name(file)) {
            rc = onp_error_set(e, ONP_ERR_INPUT, path, field, -1,
                               "file name '%s' leaves the intermediates folder", file);
            break;
        }
        char mod[1024] = "";
        if (module) {
            /* a call number is a small count; anything else is ignored
             * (never cast a double outside int's range) */
            if (cJSON_IsNumber(call) && call->valuedouble >= 1 && call->valuedouble <= 1e9)
                snprintf(mod, sizeof mod, "%s#%d", module, (int)call->valuedouble);
            else
                snprintf(mod, sizeof mod, "%s", module);
        }
        char fp[PATH_MAX_];
        snprintf(fp, sizeof fp, "%s/intermediates/%s", f->dir, file);
        const char *v = onp_arena_strndup(a, value, strlen(value));
        const char *ms = onp_arena_strndup(a, mod, strlen(mod));
        const char *fs = onp_arena_strndup(a, fp, strlen(fp));
        if (!v || !ms || !fs || onp_strmap_put(&r->map, v, r->n) || refset_add(u, v, ms)) {
            rc = onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
            break;
        }
        if (read_noise(cJSON_GetObjectItemCaseSensitive(it, "noise"), &r->noise[r->n])) {
            rc = onp_error_set(e, ONP_ERR_FORMAT, path, field, -1,
                               "'noise' needs finite numbers >= 0: max_abs, rms, scale_max, "
                               "scale_rms");
            break;
        }
        r->n_noise += r->noise[r->n].src != ONP_NOISE_NONE;
        r->file[r->n++] = fs;
    }
    cJSON_Delete(doc);
    return rc;
}

// --- the instrumented session --------------------------------------------------

/* Open the session on `bytes` (the model with extra outputs).  With external
 * data the bytes go to a hidden file beside the model, removed right after
 * ORT has loaded it. */
static int open_session(onp_ort *ort, const char *model, int external, const onp_buf *bytes,
                        const onp_session_opts *so, onp_session **s, onp_error *e)
{
    if (!external) return onp_session_open_bytes(ort, bytes->p, bytes->n, model, so, s, e);
    char tmp[PATH_MAX_];
    const char *slash = strrchr(model, '/');
    int dl = slash ? (int)(slash - model) : 1;
    snprintf(tmp, sizeof tmp, "%.*s/.onnxparity-bisect-XXXXXX.onnx", dl, slash ? model : ".");
    int fd = mkstemps(tmp, 5);
    if (fd < 0)
        return onp_error_set(e, ONP_ERR_IO, tmp, NULL, -1,
                             "cannot create the instrumented model beside the original");
    size_t off = 0;
    while (off < bytes->n) {
        ssize_t w = write(fd, bytes->p + off, bytes->n - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    int bad = off != bytes->n;
    if (close(fd)) bad = 1;
    int rc =
        bad ? onp_error_set(e, ONP_ERR_IO, tmp, NULL, -1, "cannot write the instrumented model")
            : onp_session_open(ort, tmp, so, s, e);
    unlink(tmp);
    return rc;
}

static int is_constant(const onp_graph *g, const char *name, int depth);

// --- comparing ----------------------------------------------------------------

static onp_tol tol_for(const onp_bisect_opts *o, int32_t dtype)
{
    return onp_tol_with(dtype, o->rtol, o->atol);
}

/* Judge `got` against `want` with the noise rule (noise.h) into *m and *j:
 * `noise` (float64 statistics or an ORT-side spread) or NULL, `ref64` (a
 * float64 reference tensor) or NULL; `eager_random`: the capture found
 * eager not reproducible (a wide float64 noise is then refused, not taken
 * for ill-conditioning).  Returns "" or why it failed when not
 * by numbers (in the arena when it is compare's own message). */
static const char *judge_one(onp_arena *a, const onp_bisect_opts *o, int eager_random,
                             const onp_tensor *want, const onp_tensor *got, const onp_noise *noise,
                             const onp_tensor *ref64, onp_metrics *m, onp_judgment *j)
{
    onp_error ce;
    onp_error_clear(&ce);
    memset(m, 0, sizeof *m);
    memset(j, 0, sizeof *j);
    const char *note = "";
    onp_judge_opts jo = {tol_for(o, want->dtype), o->strict, o->atol >= 0, eager_random};
    if (onp_judge_value(want, got, ref64, noise && noise->src != ONP_NOISE_NONE ? noise : NULL, &jo,
                        m, j, &ce))
        note = onp_arena_strndup(a, ce.msg, strlen(ce.msg));
    else if (!m->shape_ok)
        note = "shape differs";
    else if (!m->dtype_ok)
        note = "dtype differs";
    return note ? note : "?";
}

/* Fold one fixture's judgment of point p into it. */
static void fold(onp_bisect_point *p, const onp_metrics *m, const onp_judgment *j, int fixture,
                 const char *note)
{
    int pass = j->pass && !note[0];
    if (!p->compared || m->max_abs > p->max_abs) {
        p->m = *m;
        p->max_abs = m->max_abs;
    }
    if (!p->compared || j->ratio > p->ratio || (!pass && p->pass)) {
        p->verdict = j->verdict;
        p->noise = j->noise;
        p->envelope_max = j->envelope_max;
        p->ratio = j->ratio;
    }
    if (j->scale_max > p->scale_max) p->scale_max = j->scale_max;
    if (!p->compared || m->max_rel > p->max_rel) p->max_rel = m->max_rel;
    p->pass = (p->compared ? p->pass : 1) && pass;
    if (!pass && p->fail_fixture < 0) p->fail_fixture = fixture;
    if (note[0] && !p->note[0]) p->note = note;
    p->compared++;
}

/* Worst error and verdict of some final outputs over fixtures. */
typedef struct vacc {
    int compared, pass;
    double max_abs, max_rel;
} vacc;

static void vacc_add(vacc *v, const onp_metrics *m, const onp_judgment *j, const char *note)
{
    int pass = j->pass && !note[0];
    if (!v->compared) v->pass = 1;
    v->pass = v->pass && pass;
    if (m->max_abs > v->max_abs || note[0]) v->max_abs = note[0] ? 1.0 / 0.0 : m->max_abs;
    if (m->max_rel > v->max_rel) v->max_rel = m->max_rel;
    v->compared++;
}

// --- the run context -------------------------------------------------------------

/* What one bisection needs, shared by its steps. */
typedef struct ctx {
    onp_ort *ort;
    const onp_bisect_opts *o;
    onp_arena *a;
    onp_bisect_result *r;
    const onp_model *mm; /* the model bisected (upgraded when legacy) */
    const onp_graph *g;
    const char *target;
    fixref *runs; /* [n_runs] the fixtures run: with a reference (eager), or all selected */
    size_t n_runs;
    int disable;             /* the reference is ORT at ORT_DISABLE_ALL */
    onp_session_opts ref_so; /* o->session at ORT_DISABLE_ALL */
    const char **gin;        /* [n_gin] graph inputs that are not initializers, in order */
    size_t n_gin;
    int described;              /* r's session fingerprint filled */
    const onp_strmap *point_of; /* value -> index into r->points */
    vacc inst;                  /* final outputs of the instrumented sessions */
    int all_pass, all_fail;     /* over the instrumented sessions that compared any */
    size_t largest_input;       /* bytes of the largest fixture input (first adaptive chunk) */
    int eager_random;           /* parity.json determinism: eager not reproducible (noise.h) */
    int last_session_pass;      /* the last run_chunk's final outputs: 1 pass, 0 fail, -1 none */
    int reordered; /* run_plain: a fixture's outputs pass as a near-tie reorder (judge.h) */
    int tie_ordered; /* run_plain: a fixture's outputs pass only against its tie-ordered
                        reference (tie_plain) */
} ctx;

/* Whether the bundle `target`'s parity.json records float32 eager as not
 * reproducible (determinism.verdict nondeterministic or state-drift): the
 * judge then refuses a float64 estimate far from eager (noise.h,
 * eager_random) instead of taking it for an ill-conditioned value.  0 when
 * there is no parity.json or it cannot be read (check reports that). */
static int eager_random_of(const char *target)
{
    char path[4096];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/parity.json", target) >= sizeof path ||
        stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    onp_manifest *mf;
    onp_error e;
    if (onp_manifest_open(path, &mf, &e)) return 0;
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(onp_manifest_doc(mf), "determinism");
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(det, "verdict"));
    int random = v && (!strcmp(v, "nondeterministic") || !strcmp(v, "state-drift"));
    onp_manifest_free(mf);
    return random;
}

/* Read fixture f's inputs into in[] (f->n_inputs); named after the graph
 * inputs when `named`, else unnamed (fed by position, as check does). */
static int read_inputs(const ctx *c, const onp_fixture *f, onp_tensor *in, int named, onp_error *e)
{
    for (size_t k = 0; k < f->n_inputs; k++) {
        if (onp_tfile_read(f->inputs[k], NULL, &in[k], e)) {
            for (size_t j = 0; j < k; j++) onp_tensor_release(&in[j]);
            return -1;
        }
        const char *name = named && k < c->n_gin ? c->gin[k] : NULL;
        onp_tensor_set_name(&in[k], name, e);
    }
    return 0;
}

static void release_all(onp_tensor *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) onp_tensor_release(&t[i]);
}

/* Run fixture f on session s, fetching names[n] into out[n]; with
 * `perturb`, every floating input moved by one ulp first (the ORT-side
 * noise estimate, noise.h). */
static int run_on_as(const ctx *c, onp_session *s, const onp_fixture *f, const char *const *names,
                     size_t n, onp_tensor *out, int perturb, onp_error *e)
{
    onp_tensor *in = calloc(f->n_inputs ? f->n_inputs : 1, sizeof *in);
    if (!in) return onp_error_set(e, ONP_ERR_NOMEM, f->dir, NULL, -1, "out of memory");
    if (read_inputs(c, f, in, 0, e)) {
        free(in);
        return -1;
    }
    int rc = 0;
    for (size_t k = 0; perturb && k < f->n_inputs; k++) {
        onp_tensor t;
        if (onp_perturbed_input(&t, &in[k], k, e)) {
            release_all(in, f->n_inputs);
            free(in);
            return -1;
        }
        onp_tensor_release(&in[k]);
        in[k] = t;
    }
    if (onp_session_run(s, in, f->n_inputs, names, n, out, e)) {
        onp_error_set_file(e, f->dir);
        rc = -1;
    }
    release_all(in, f->n_inputs);
    free(in);
    return rc;
}

static int run_on(const ctx *c, onp_session *s, const onp_fixture *f, const char *const *names,
                  size_t n, onp_tensor *out, onp_error *e)
{
    return run_on_as(c, s, f, names, n, out, 0, e);
}

/* The noise of value `v` in fixture fr: its float64 statistics, else the
 * spread between `a` and `b` (the run and the perturbed run) when `b` ran;
 * src NONE otherwise.  The statistics measure how far a float32
 * computation of the value lands from the exact one, so they bound eager
 * against ONNX Runtime and two optimization levels of ONNX Runtime alike
 * (the DISABLE reference uses them too). */
static onp_noise noise_of(const fixref *fr, const char *v, const onp_tensor *a, const onp_tensor *b)
{
    onp_noise n;
    size_t j;
    memset(&n, 0, sizeof n);
    if (fr && onp_strmap_get(&fr->map, v, &j) && fr->noise[j].src != ONP_NOISE_NONE)
        return fr->noise[j];
    onp_error e;
    if (b && b->dtype == a->dtype && b->count == a->count && onp_noise_spread(a, b, &n, &e) != 0)
        memset(&n, 0, sizeof n); /* refused (not reproducible) or not comparable: no estimate */
    return n;
}

/* Does fixture fr need the ORT-side estimate?  With the eager reference,
 * when it has no float64 statistics (its points are the values it stores).
 * With the DISABLE reference always: every node output is a point, and
 * those without statistics have no other estimate. */
static int needs_spread(const ctx *c, const fixref *fr)
{
    return !c->o->no_noise && (c->disable || !fr || fr->n_noise == 0);
}

/* The float64 reference of final output j of fixture f, when the capture
 * wrote one: 1 read into *t, 0 none (or unreadable: then judged without). */
static int read_ref64(const onp_fixture *f, size_t j, onp_tensor *t)
{
    onp_error e;
    return onp_fixture_read_ref64(f, j, t, &e) == 1;
}

/* Fill r's fingerprint from the first session opened. */
static void describe(ctx *c, onp_session *s)
{
    if (c->described) return;
    const onp_session_desc *d = onp_session_describe(s);
    onp_bisect_result *r = c->r;
    snprintf(r->provider, sizeof r->provider, "%s", d->provider);
    snprintf(r->notes, sizeof r->notes, "%s", d->notes ? d->notes : "");
    r->opt_level = d->opt_level;
    r->intra_threads = d->intra_threads;
    r->inter_threads = d->inter_threads;
    c->described = 1;
}

// --- chunks ------------------------------------------------------------------------

/* Bytes of value `v` from its declared type; symbolic dims resolved through
 * `params` (dim_param -> largest size seen in the fixtures' inputs).  0 when
 * unknown. */
static unsigned long long value_bytes(const onp_graph *g, const onp_strmap *params, const char *v)
{
    onp_type t;
    if (onp_graph_value_type(g, v, &t) || t.kind != ONP_TYPE_TENSOR || !t.has_shape) return 0;
    unsigned long long b = onp_dtype_size(t.elem_type);
    for (size_t d = 0; b && d < t.rank; d++) {
        size_t x = 0;
        if (t.dims[d].value >= 0)
            x = (size_t)t.dims[d].value;
        else if (!t.dims[d].param || !onp_strmap_get(params, t.dims[d].param, &x))
            return 0;
        if (x && b > ~0ULL / x) return 0;
        b *= x;
    }
    return b;
}

/* Split the points into chunks: bounds[0..n_chunks] (bounds[k] is the
 * first point of chunk k).  A fixed size when o->chunk > 0; otherwise the
 * budget decides from the declared shapes.  When any size is unknown,
 * *n_out is 0: the caller sizes each chunk from the largest value the
 * previous one fetched (the first holds ONP_BISECT_FIRST_CHUNK values). */
static int plan_chunks(ctx *c, size_t **bounds_out, size_t *n_out, onp_error *e)
{
    onp_bisect_result *r = c->r;
    size_t n = r->n_points, *b = calloc(n + 2, sizeof *b), nc = 0;
    unsigned long long *est = calloc(n + 1, sizeof *est);
    onp_strmap params;
    memset(&params, 0, sizeof params);
    int rc = 0, unknown = 0;
    if (!b || !est) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, c->target, NULL, -1, "out of memory");
        goto done;
    }
    r->budget = c->o->max_exposed_bytes ? c->o->max_exposed_bytes : ONP_BISECT_DEFAULT_BUDGET;
    /* symbolic dims of the graph inputs, sized by the fixtures */
    for (size_t i = 0; i < c->n_runs; i++) {
        const onp_fixture *f = c->runs[i].f;
        for (size_t k = 0; k < f->n_inputs && k < c->n_gin; k++) {
            onp_type t;
            onp_tensor x;
            if (onp_tfile_read(f->inputs[k], NULL, &x, e)) {
                rc = -1;
                goto done;
            }
            if (x.nbytes > c->largest_input) c->largest_input = x.nbytes;
            if (onp_graph_value_type(c->g, c->gin[k], &t) || !t.has_shape) t.rank = 0;
            for (size_t d = 0; d < t.rank && (int)d < x.rank; d++) {
                size_t have = 0;
                if (!t.dims[d].param) continue;
                if (!onp_strmap_get(&params, t.dims[d].param, &have) || (size_t)x.dims[d] > have)
                    if (onp_strmap_put(&params, t.dims[d].param, (size_t)x.dims[d])) {
                        onp_tensor_release(&x);
                        rc = onp_error_set(e, ONP_ERR_NOMEM, c->target, NULL, -1, "out of memory");
                        goto done;
                    }
            }
            onp_tensor_release(&x);
        }
    }
    for (size_t i = 0; i < n; i++) {
        est[i] = value_bytes(c->g, &params, r->points[i].value) * (c->disable ? 2 : 1);
        if (!est[i]) unknown = 1;
    }
    if (unknown && !c->o->chunk) {
        r->estimated_bytes = 0;
        goto done; /* adaptive */
    }
    unsigned long long acc = 0, worst = 0;
    b[nc++] = 0;
    for (size_t i = 0; i < n; i++) {
        int cut_here;
        if (c->o->chunk)
            cut_here = i > b[nc - 1] && i - b[nc - 1] >= c->o->chunk;
        else
            cut_here = !unknown && i > b[nc - 1] && acc + est[i] > r->budget;
        if (cut_here) {
            b[nc++] = i;
            acc = 0;
        }
        acc += est[i];
        if (acc > worst) worst = acc;
    }
    b[nc] = n;
    r->estimated_bytes = unknown ? 0 : worst;
    r->planned = 1;
    r->chunk = 0;
    for (size_t k = 0; k < nc; k++)
        if (b[k + 1] - b[k] > r->chunk) r->chunk = b[k + 1] - b[k];
done:
    free(est);
    onp_strmap_free(&params);
    if (rc) {
        free(b);
        return -1;
    }
    *bounds_out = b;
    *n_out = nc;
    return 0;
}

// --- the instrumented sessions -----------------------------------------------------

/* Fixture fi of c->runs failed to run in the first instrumented session
 * with error *e: when it was refused (not a lost worker, not the last
 * fixture left) it is taken out of the runs, recorded in r->refused, and 1
 * is returned (e cleared); else 0 (the error stands).  Refused: ONNX Runtime
 * failed on it (RUNTIME: a Reshape of a baked size), or the session's
 * pre-run check did (USAGE: a shape or dtype the graph input does not take,
 * "expected [s18, 8], given [2, 12]": a sequence length the export baked),
 * which check reports as that fixture's error too. */
static int drop_refused(ctx *c, size_t fi, onp_error *e)
{
    onp_bisect_result *r = c->r;
    int refused = e->code == ONP_ERR_RUNTIME || e->code == ONP_ERR_USAGE;
    if (r->n_chunks != 1 || !refused || onp_ort_lost_worker(e) || c->n_runs < 2) return 0;
    if (!r->refused) {
        r->refused = onp_arena_array(c->a, c->n_runs + 1, sizeof *r->refused);
        if (!r->refused) return 0;
        onp_error_format(e, r->refused_msg, sizeof r->refused_msg);
    }
    r->refused[r->n_refused++] = c->runs[fi].f->index;
    onp_strmap_free(&c->runs[fi].map);
    memmove(&c->runs[fi], &c->runs[fi + 1], (c->n_runs - fi - 1) * sizeof *c->runs);
    memmove(&r->fixtures[fi], &r->fixtures[fi + 1], (c->n_runs - fi - 1) * sizeof *r->fixtures);
    c->n_runs--;
    r->n_fixtures--;
    memset(&c->runs[c->n_runs], 0, sizeof *c->runs); /* the stale copy: nothing to free twice */
    onp_error_clear(e);
    return 1;
}

/* 1 when v is one of the graph's outputs. */
static int is_graph_output(const onp_graph *g, const char *v)
{
    for (size_t j = 0; j < g->n_outputs; j++)
        if (!strcmp(g->outputs[j].name, v)) return 1;
    return 0;
}

/* Expose points[lo, hi), run every fixture once (twice with the DISABLE
 * reference: one run per session) and fold each value's comparison into its
 * point, releasing each tensor once compared.  The graph's own outputs are
 * fetched too and compared with the reference outputs into `inst`; a graph
 * output that is a point of this chunk without an intermediate of its own
 * (eager reference) takes that comparison (check's: the float64 reference
 * included). */
/* One chunk of points exposed as extra outputs: its sessions, and the
 * buffers one fixture's run fills. */
typedef struct chunk {
    size_t lo, n;        /* the points lo .. lo+n-1 */
    size_t n_fetch;      /* n, then the graph outputs that are not points of the chunk */
    const char **names;  /* [n_fetch] the values fetched */
    size_t *out_at;      /* [g->n_outputs] where graph output j is in names */
    onp_session *s, *rs; /* instrumented; the reference at ORT_DISABLE_ALL or NULL */
    onp_tensor *got;     /* [n_fetch] this run */
    onp_tensor *got2;    /* [n_fetch] the perturbed run (noise spread) */
    onp_tensor *want;    /* [n_fetch] the reference session's run */
} chunk;

/* Points lo..hi-1 exposed as outputs of the model, and the sessions on
 * it opened: *ch filled (chunk_close frees it, also on failure). */
static int chunk_open(ctx *c, size_t lo, size_t hi, chunk *ch, onp_error *e)
{
    onp_bisect_result *r = c->r;
    const onp_graph *g = c->g;
    size_t n = hi - lo;
    onp_buf edited;
    onp_buf_init(&edited, 0);
    memset(ch, 0, sizeof *ch);
    ch->lo = lo;
    ch->n = ch->n_fetch = n;
    ch->names = calloc(n + g->n_outputs + 1, sizeof *ch->names);
    ch->out_at = calloc(g->n_outputs + 1, sizeof *ch->out_at);
    ch->got = calloc(n + g->n_outputs + 1, sizeof *ch->got);
    ch->got2 = calloc(n + g->n_outputs + 1, sizeof *ch->got2);
    ch->want = calloc(n + g->n_outputs + 1, sizeof *ch->want);
    if (!ch->names || !ch->out_at || !ch->got || !ch->got2 || !ch->want)
        return onp_error_set(e, ONP_ERR_NOMEM, c->target, NULL, -1, "out of memory");
    for (size_t i = 0; i < n; i++) ch->names[i] = r->points[lo + i].value;
    int rc = -1;
    if (onp_model_add_outputs(c->mm, ch->names, n, &edited, e)) goto done;
    /* the graph's outputs: reuse a chunk point of the same name */
    for (size_t j = 0; j < g->n_outputs; j++) {
        size_t pi;
        if (onp_strmap_get(c->point_of, g->outputs[j].name, &pi) && pi >= lo && pi < hi) {
            ch->out_at[j] = pi - lo;
        } else {
            ch->out_at[j] = ch->n_fetch;
            ch->names[ch->n_fetch++] = g->outputs[j].name;
        }
    }
    if (open_session(c->ort, r->model, r->external, &edited, &c->o->session, &ch->s, e)) goto done;
    if (c->disable && open_session(c->ort, r->model, r->external, &edited, &c->ref_so, &ch->rs, e))
        goto done;
    rc = 0;
done:
    onp_buf_free(&edited);
    return rc;
}

static void chunk_close(chunk *ch)
{
    onp_session_close(ch->s);
    onp_session_close(ch->rs);
    free(ch->names);
    free(ch->out_at);
    free(ch->got);
    free(ch->got2);
    free(ch->want);
}

/* The graph's final outputs of fixture fr's run, judged against output_J.pb
 * (or the reference session), into c->inst; a final output that is also a
 * point of the chunk without an intermediate of its own is folded into it.
 * *pass = 0 when one fails; *any = 1 when one was compared. */
static int chunk_judge_outputs(ctx *c, chunk *ch, const fixref *fr, int spread, int *pass, int *any,
                               onp_error *e)
{
    onp_bisect_result *r = c->r;
    const onp_graph *g = c->g;
    const onp_fixture *f = fr->f;
    for (size_t j = 0; j < g->n_outputs; j++) {
        onp_tensor ref, r64;
        const onp_tensor *w = NULL;
        memset(&ref, 0, sizeof ref);
        int has64 = 0;
        size_t at = ch->out_at[j];
        if (ch->rs) { /* the float64 reference bounds either level's float32 run */
            w = &ch->want[at];
            has64 = j < f->n_outputs && read_ref64(f, j, &r64);
        } else if (j < f->n_outputs) {
            if (onp_tfile_read(f->outputs[j], NULL, &ref, e)) return -1;
            w = &ref;
            has64 = read_ref64(f, j, &r64);
        }
        if (w) {
            onp_metrics m;
            onp_judgment jd;
            onp_noise nz =
                noise_of(fr, g->outputs[j].name, &ch->got[at], spread ? &ch->got2[at] : NULL);
            const char *note = judge_one(c->a, c->o, c->eager_random, w, &ch->got[at], &nz,
                                         has64 ? &r64 : NULL, &m, &jd);
            vacc_add(&c->inst, &m, &jd, note);
            *any = 1;
            if (!(jd.pass && !note[0])) *pass = 0;
            if (!ch->rs && at < ch->n && !onp_strmap_get(&fr->map, g->outputs[j].name, NULL))
                fold(&r->points[ch->lo + at], &m, &jd, f->index, note);
        }
        if (has64) onp_tensor_release(&r64);
        onp_tensor_release(&ref);
    }
    return 0;
}

/* The chunk's points of fixture fr's run judged against their references
 * (the stored intermediates, or the reference session) and folded into
 * r->points; each value's memory released as soon as it is judged.  Keeps
 * the largest value's bytes in *largest and the run's in r->measured_bytes. */
static int chunk_judge_points(ctx *c, chunk *ch, const fixref *fr, int spread,
                              unsigned long long *largest, onp_error *e)
{
    onp_bisect_result *r = c->r;
    unsigned long long run_bytes = 0;
    for (size_t i = 0; i < ch->n; i++) {
        onp_bisect_point *p = &r->points[ch->lo + i];
        size_t j;
        if (ch->got[i].nbytes > *largest) *largest = ch->got[i].nbytes;
        run_bytes += ch->got[i].nbytes + ch->want[i].nbytes;
        onp_noise nz = noise_of(fr, p->value, &ch->got[i], spread ? &ch->got2[i] : NULL);
        onp_metrics m;
        onp_judgment jd;
        if (ch->rs) {
            const char *note = judge_one(c->a, c->o, c->eager_random, &ch->want[i], &ch->got[i],
                                         &nz, NULL, &m, &jd);
            fold(p, &m, &jd, fr->f->index, note);
        } else if (onp_strmap_get(&fr->map, p->value, &j)) {
            onp_tensor w;
            if (onp_tfile_read(fr->file[j], NULL, &w, e)) return -1;
            const char *note =
                judge_one(c->a, c->o, c->eager_random, &w, &ch->got[i], &nz, NULL, &m, &jd);
            fold(p, &m, &jd, fr->f->index, note);
            onp_tensor_release(&w);
        }
        onp_tensor_release(&ch->got[i]); /* compared or not, its memory goes now */
        onp_tensor_release(&ch->got2[i]);
        onp_tensor_release(&ch->want[i]);
    }
    if (run_bytes > r->measured_bytes) r->measured_bytes = run_bytes;
    return 0;
}

static int run_chunk(ctx *c, size_t lo, size_t hi, unsigned long long *largest, onp_error *e)
{
    chunk ch;
    int rc = -1;
    if (chunk_open(c, lo, hi, &ch, e)) goto done;
    describe(c, ch.s);
    c->r->n_chunks++;
    int this_pass = 1, any = 0;
    size_t n_fetch = ch.n_fetch;
    for (size_t fi = 0; fi < c->n_runs; fi++) {
        const fixref *fr = &c->runs[fi];
        const onp_fixture *f = fr->f;
        int spread = needs_spread(c, fr);
        if (run_on(c, ch.s, f, ch.names, n_fetch, ch.got, e)) {
            if (!drop_refused(c, fi, e)) goto done;
            fi--; /* the next fixture moved into this slot */
            continue;
        }
        if (ch.rs && run_on(c, ch.rs, f, ch.names, n_fetch, ch.want, e)) {
            release_all(ch.got, n_fetch);
            goto done;
        }
        /* the final outputs first: they may also be chunk points */
        int failed = (spread && run_on_as(c, ch.s, f, ch.names, n_fetch, ch.got2, 1, e)) ||
                     chunk_judge_outputs(c, &ch, fr, spread, &this_pass, &any, e) ||
                     chunk_judge_points(c, &ch, fr, spread, largest, e);
        release_all(ch.got, n_fetch);
        release_all(ch.got2, n_fetch);
        release_all(ch.want, n_fetch);
        if (failed) goto done;
    }
    if (any && !this_pass) c->all_pass = 0;
    if (any && this_pass) c->all_fail = 0;
    c->last_session_pass = any ? this_pass : -1;
    rc = 0;
done:
    chunk_close(&ch);
    return rc;
}

// --- is the mismatch reproduced? ---------------------------------------------------

/* A tie-ordered reference file that exists and cannot be read is not used:
 * the first such file is named in r->reference_note (check and diagnose
 * stop on it with that error). */
static void tie_unread_note(onp_bisect_result *r, const char *path, const char *msg)
{
    if (strstr(r->reference_note, "not used (tie-order")) return;
    size_t u = strlen(r->reference_note);
    snprintf(r->reference_note + u, sizeof r->reference_note - u,
             "%s%.200s not used (tie-order reference unreadable): %.160s", u ? "; " : "", path,
             msg);
}

/* run_plain against eager: where fixture f's outputs fail against eager
 * (ov[0..n) judged, notes[j] non-NULL for those judged, the near-tie
 * reorder applied) and f has a tie-ordered reference
 * (tie_ordered/output_J.pb: eager rerun with its tie-sensitive ops
 * breaking exact ties as ONNX does; docs/formats.md), ORT's outputs got[]
 * are judged against that reference as check judges them
 * (onp_judge_fixture): no float64 noise (the capture's describes eager's
 * selection), the spread of got2 where the fixture ran one, the near-tie
 * reorder.  When every output passes, ov[] and notes[] become that
 * judgment and c->tie_ordered is set. */
static void tie_plain(ctx *c, const onp_fixture *f, const onp_tensor *got, const onp_tensor *got2,
                      size_t n, onp_output_verdict *ov, const char **notes)
{
    int failing = 0;
    for (size_t j = 0; j < n; j++) failing |= notes[j] && !ov[j].pass;
    char first[4200]; /* a fixture without one: a stat, nothing allocated */
    if (!failing || f->n_outputs != n || !onp_fixture_tie_path(f, 0, first, sizeof first)) return;
    onp_tensor *tw = calloc(n ? n : 1, sizeof *tw);
    onp_output_verdict *tv = calloc(n ? n : 1, sizeof *tv);
    const char **tn = calloc(n ? n : 1, sizeof *tn);
    int ok = tw && tv && tn;
    for (size_t j = 0; ok && j < n; j++) {
        char p[4200];
        onp_error e;
        ok = onp_fixture_tie_path(f, j, p, sizeof p);
        if (ok && onp_tfile_read(p, NULL, &tw[j], &e)) { /* refused, and said so */
            ok = 0;
            tie_unread_note(c->r, p, e.msg);
        }
    }
    for (size_t j = 0; ok && j < n; j++) {
        onp_noise nz = noise_of(NULL, "", &got[j], got2 ? &got2[j] : NULL);
        tn[j] = judge_one(c->a, c->o, c->eager_random, &tw[j], &got[j], &nz, NULL, &tv[j].m,
                          &tv[j].j);
        tv[j].compared = !tn[j][0];
        tv[j].pass = tv[j].j.pass && !tn[j][0];
    }
    if (ok) onp_judge_near_tie_reorder(tw, got, n, tv, c->o->strict);
    for (size_t j = 0; ok && j < n; j++) ok = tv[j].pass;
    if (ok) {
        memcpy(ov, tv, n * sizeof *ov);
        for (size_t j = 0; j < n; j++) notes[j] = "";
        c->tie_ordered = 1;
    }
    if (tw) release_all(tw, n);
    free(tw);
    free(tv);
    free(tn);
}

/* Run the plain model (no extra outputs) at the configuration under test on
 * every fixture and judge its final outputs against the reference outputs
 * into *plain; with DISABLE also against the fixtures' expected outputs
 * (output_J.pb, where present: what check judges) into *expect. */
static int run_plain(ctx *c, vacc *plain, vacc *expect, onp_error *e)
{
    onp_bisect_result *r = c->r;
    const onp_graph *g = c->g;
    onp_session *s = NULL, *rs = NULL;
    size_t nb, n = g->n_outputs;
    const uint8_t *bytes = onp_model_bytes(c->mm, &nb);
    const char **names = calloc(n + 1, sizeof *names);
    onp_tensor *got = calloc(n + 1, sizeof *got), *want = calloc(n + 1, sizeof *want);
    onp_tensor *got2 = calloc(n + 1, sizeof *got2), *wk = calloc(n + 1, sizeof *wk);
    onp_tensor *wx = calloc(n + 1, sizeof *wx);
    onp_output_verdict *ov = calloc(n + 1, sizeof *ov), *ox = calloc(n + 1, sizeof *ox);
    const char **notes = calloc(n + 1, sizeof *notes), **nx = calloc(n + 1, sizeof *nx);
    int rc = -1;
    if (!names || !got || !want || !got2 || !wk || !wx || !ov || !ox || !notes || !nx) {
        onp_error_set(e, ONP_ERR_NOMEM, c->target, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t j = 0; j < n; j++) names[j] = g->outputs[j].name;
    if (r->external ? onp_session_open(c->ort, r->model, &c->o->session, &s, e)
                    : onp_session_open_bytes(c->ort, bytes, nb, r->model, &c->o->session, &s, e))
        goto done;
    if (c->disable &&
        (r->external ? onp_session_open(c->ort, r->model, &c->ref_so, &rs, e)
                     : onp_session_open_bytes(c->ort, bytes, nb, r->model, &c->ref_so, &rs, e)))
        goto done;
    for (size_t fi = 0; fi < c->n_runs; fi++) {
        const fixref *fr = &c->runs[fi];
        const onp_fixture *f = fr->f;
        int spread = needs_spread(c, fr);
        if (run_on(c, s, f, names, n, got, e)) goto done;
        if (rs && run_on(c, rs, f, names, n, want, e)) goto fail;
        if (spread && run_on_as(c, s, f, names, n, got2, 1, e)) goto fail;
        for (size_t j = 0; j < n; j++) {
            onp_tensor r64;
            int has64 = 0;
            /* against the reference: the session at disable, or eager's
             * output_J.pb; with DISABLE also against output_J.pb (what
             * check judges).  The float64 reference is the noise source of
             * both: it measures how far a float32 run of the output lands
             * from the exact one, at either optimization level as in eager
             * (a one-ulp estimate sees no near-tie that reorders boxes) */
            onp_tensor *w = rs ? &want[j] : NULL;
            onp_tensor *x = rs ? &wx[j] : &wk[j];
            if (j < f->n_outputs) {
                if (onp_tfile_read(f->outputs[j], NULL, x, e)) goto fail;
                has64 = read_ref64(f, j, &r64);
                if (!rs) w = x;
            }
            onp_noise nz = noise_of(fr, names[j], &got[j], spread ? &got2[j] : NULL);
            memset(&ov[j], 0, sizeof ov[j]);
            memset(&ox[j], 0, sizeof ox[j]);
            notes[j] = nx[j] = NULL;
            if (w) { /* added to `plain` after the near-tie reorder, below */
                notes[j] = judge_one(c->a, c->o, c->eager_random, w, &got[j], &nz,
                                     has64 ? &r64 : NULL, &ov[j].m, &ov[j].j);
                ov[j].compared = !notes[j][0];
                ov[j].pass = ov[j].j.pass && !notes[j][0];
            }
            if (rs && j < f->n_outputs) {
                nx[j] = judge_one(c->a, c->o, c->eager_random, x, &got[j], &nz, has64 ? &r64 : NULL,
                                  &ox[j].m, &ox[j].j);
                ox[j].compared = !nx[j][0];
                ox[j].pass = ox[j].j.pass && !nx[j][0];
            }
            if (has64) onp_tensor_release(&r64);
        }
        /* detections swapped among near-tied scores pass, as check judges:
         * against eager, and between two optimization levels alike */
        onp_judge_near_tie_reorder(rs ? want : wk, got, n, ov, c->o->strict);
        if (rs) onp_judge_near_tie_reorder(wx, got, n, ox, c->o->strict);
        if (!rs) tie_plain(c, f, got, spread ? got2 : NULL, n, ov, notes); /* exact ties */
        for (size_t j = 0; j < n; j++) {
            if (notes[j]) {
                onp_judgment jd = ov[j].j;
                if (ov[j].pass && !jd.pass) {
                    jd.pass = 1;
                    c->reordered = 1;
                }
                vacc_add(plain, &ov[j].m, &jd, ov[j].pass ? "" : notes[j]);
            }
            if (nx[j]) {
                onp_judgment jd = ox[j].j;
                jd.pass = ox[j].pass;
                vacc_add(expect, &ox[j].m, &jd, ox[j].pass ? "" : nx[j]);
            }
        }
        release_all(wk, n);
        release_all(wx, n);
        release_all(got, n);
        release_all(got2, n);
        release_all(want, n);
    }
    rc = 0;
    goto done;
fail:
    release_all(got, n);
    release_all(got2, n);
    release_all(want, n);
done:
    onp_session_close(s);
    onp_session_close(rs);
    free(names);
    free(got);
    free(got2);
    free(want);
    if (wk) release_all(wk, n);
    if (wx) release_all(wx, n);
    free(wk);
    free(wx);
    free(ov);
    free(ox);
    free(notes);
    free(nx);
    return rc;
}

/* After some failing points were let pass: the first compared point that
 * still fails, again; where none does, the bisection agrees (the plain and
 * instrumented outputs pass: verify_plain said so).  1 when it agrees. */
static int refind_first(onp_bisect_result *r)
{
    r->first = -1;
    for (size_t i = 0; i < r->n_points && r->first < 0; i++)
        if (r->points[i].compared && !r->points[i].pass) r->first = (long)i;
    if (r->first >= 0) return 0;
    r->status = ONP_BISECT_AGREES;
    r->verify.instrumented_pass = r->verify.reproduces = 1;
    r->verify.note[0] = 0;
    return 1;
}

/* After verify_plain: where the plain model's outputs pass only as a
 * near-tie reorder (c->reordered), the graph outputs that failed value by
 * value are the same rows in another order: they pass, and the first
 * divergent value is looked for again among the others. */
static void settle_reorder(ctx *c)
{
    onp_bisect_result *r = c->r;
    if (!c->reordered || !r->verify.ran || !r->verify.plain_pass || r->first < 0) return;
    for (size_t i = 0; i < r->n_points; i++) {
        onp_bisect_point *p = &r->points[i];
        if (!p->compared || p->pass) continue;
        for (size_t j = 0; j < c->g->n_outputs; j++)
            if (!strcmp(p->value, c->g->outputs[j].name)) {
                p->pass = 1;
                p->note = "near-tie reorder: the same rows in another order among near-tied "
                          "scores (the fixture's outputs judged together)";
            }
    }
    refind_first(r);
}

/* Whether value v of g is computed from a node that chooses among ties
 * (TopK, NonMaxSuppression, ArgMax, ArgMin; onp_graph_upstream).  0 out of
 * memory. */
static int after_tie_choice(const onp_graph *g, const char *v)
{
    static const char *const ops[] = {"TopK", "NonMaxSuppression", "ArgMax", "ArgMin"};
    unsigned char *up = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    int after = 0;
    if (up && !onp_graph_upstream(g, &v, 1, up))
        for (size_t i = 0; i < g->n_nodes && !after; i++)
            for (size_t k = 0; up[i] && k < sizeof ops / sizeof *ops && !after; k++)
                after = !strcmp(g->nodes[i].op_type, ops[k]);
    free(up);
    return after;
}

/* After verify_plain: where the plain model's outputs pass only against
 * their tie-ordered reference (c->tie_ordered), the values that failed
 * against eager's intermediates and are computed after a choice among ties
 * (after_tie_choice) were recorded along eager's choice: they pass, with a
 * note, and the first divergent value is looked for among the others (a
 * value before any such choice that diverges is still named). */
static void settle_ties(ctx *c)
{
    onp_bisect_result *r = c->r;
    if (!c->tie_ordered || !r->verify.ran || !r->verify.plain_pass || r->first < 0) return;
    size_t n_tie = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        onp_bisect_point *p = &r->points[i];
        if (!p->compared || p->pass || !after_tie_choice(c->g, p->value)) continue;
        p->pass = 1;
        n_tie++;
        p->note = "tie-order: computed after a choice among exactly tied values, which eager "
                  "made in another order; the fixture's outputs match eager rerun with ONNX's "
                  "tie order (lower index first)";
    }
    size_t u = strlen(r->reference_note);
    snprintf(r->reference_note + u, sizeof r->reference_note - u,
             "%s%zu value(s) computed after a choice among exact ties pass as tie-order: the "
             "fixtures' outputs match eager rerun with ONNX's tie order",
             u ? "; " : "", n_tie);
    if (refind_first(r))
        snprintf(r->verify.note, sizeof r->verify.note,
                 "tie-order: the outputs match eager rerun with ONNX's tie order; the values "
                 "that differ from eager's lie after a choice among exact ties");
}

// --- local or inherited ------------------------------------------------------------

#define LOCAL_MAX_NODES 64 /* unmapped nodes a local rerun may take along */

/* Grow-able list of names. */
typedef struct names {
    const char **v;
    size_t n, cap;
} names;

static int names_push(names *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        const char **v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return 0;
}

/* Position of graph input `name` among the fixture's inputs, or -1. */
static long gin_pos(const ctx *c, const char *name)
{
    for (size_t k = 0; k < c->n_gin; k++)
        if (!strcmp(c->gin[k], name)) return (long)k;
    return -1;
}

/* Choose what the rerun is fed with: walking back from the node's inputs,
 * every value with a reference (any computed value with the DISABLE
 * reference) or graph input is cut there; initializers and constant
 * subgraphs come along inside the extracted model; a value without a
 * reference takes its producer along.  *n_nodes counts the nodes run. */
static int choose_cut(const ctx *c, const fixref *fr, const onp_node *nd, names *cut,
                      size_t *n_nodes, char *why, size_t nwhy)
{
    names stack = {0};
    onp_strmap seen;
    memset(&seen, 0, sizeof seen);
    int rc = 0;
    *n_nodes = 1;
    for (size_t k = 0; k < nd->n_inputs && !rc; k++) rc = names_push(&stack, nd->inputs[k]);
    while (!rc && stack.n) {
        const char *v = stack.v[--stack.n];
        if (!v[0] || onp_strmap_get(&seen, v, NULL)) continue;
        if (onp_strmap_put(&seen, v, 1)) {
            rc = -1;
            break;
        }
        if (onp_graph_initializer(c->g, v)) continue;
        const onp_node *pn = onp_graph_producer(c->g, v, NULL);
        if (!pn) {
            if (gin_pos(c, v) < 0) {
                snprintf(why, nwhy, "input '%s' is neither computed nor fed", v);
                rc = 1;
            } else {
                rc = names_push(cut, v);
            }
        } else if (is_constant(c->g, v, 32)) {
            continue;
        } else if (c->disable || onp_strmap_get(&fr->map, v, NULL)) {
            rc = names_push(cut, v);
        } else if (++*n_nodes > LOCAL_MAX_NODES) {
            snprintf(why, nwhy, "more than %d nodes without a reference lie before it",
                     LOCAL_MAX_NODES);
            rc = 1;
        } else {
            for (size_t k = 0; k < pn->n_inputs && !rc; k++) rc = names_push(&stack, pn->inputs[k]);
        }
    }
    if (rc < 0) snprintf(why, nwhy, "out of memory");
    free(stack.v);
    onp_strmap_free(&seen);
    return rc;
}

/* Rerun the first divergent node alone on reference inputs (bisect.h,
 * onp_bisect_local).  Never fails the bisection: what goes wrong is noted. */
/* --save-repro: the first divergent node alone, as an ONNX test-data
 * folder a bare ONNX Runtime reproduces: model.onnx (the extracted piece),
 * test_data_set_0/input_K.pb (its reference inputs, named after the
 * piece's graph inputs), output_0.pb (the reference output), README.md.
 * Only when the node alone still fails (local): an inherited error has no
 * small failing piece.
 *
 * A run may bisect more than once (the fallbacks of onp_bisect_run), so the
 * files are staged here, in the result's arena, and written once, for the
 * result returned, by write_repro: one new folder (outpath.h,
 * onp_out_mkdir_new), never a mix of two results.  Problems go to
 * r->repro_note; nothing fails. */

/* The private part of a result: its arena (first, so that r->priv is the
 * arena too), and the reproducer's files staged for write_repro. */
#define REPRO_MAX_FILES 67 /* model.onnx, README.md, output_0.pb and up to 64 inputs */

typedef struct repro_file {
    const char *rel; /* path inside the folder */
    const void *p;   /* [n] bytes, in the arena */
    size_t n;
} repro_file;

typedef struct bisect_priv {
    onp_arena a;
    repro_file files[REPRO_MAX_FILES];
    size_t n_files;
} bisect_priv;

/* Stage one file (bytes copied into the arena); -1 when memory runs out. */
static int stage_file(bisect_priv *bp, const char *rel, const void *p, size_t n)
{
    if (bp->n_files >= REPRO_MAX_FILES) return -1;
    void *q = onp_arena_alloc(&bp->a, n ? n : 1);
    const char *r = onp_arena_strndup(&bp->a, rel, strlen(rel));
    if (!q || !r) return -1;
    if (n) memcpy(q, p, n);
    bp->files[bp->n_files++] = (repro_file){r, q, n};
    return 0;
}

/* Stage tensor t as the .pb file `rel`. */
static int stage_tensor(bisect_priv *bp, const char *rel, const onp_tensor *t, onp_error *e)
{
    onp_buf b;
    onp_buf_init(&b, 0);
    int rc = onp_pb_tensor_encode(t, NULL, &b, e);
    if (!rc && stage_file(bp, rel, b.p, b.n))
        rc = onp_error_set(e, ONP_ERR_NOMEM, rel, NULL, -1, "out of memory");
    onp_buf_free(&b);
    return rc;
}

static void save_repro(ctx *c, const onp_buf *sub, const onp_tensor *feed, size_t n_feed,
                       const onp_tensor *want)
{
    onp_bisect_result *r = c->r;
    bisect_priv *bp = r->priv;
    const onp_bisect_point *p = &r->points[r->first];
    const char *dir = c->o->save_repro;
    char rel[64];
    onp_error e;
    onp_error_clear(&e);
    bp->n_files = 0;
    if (!r->local.local) {
        snprintf(r->repro_note, sizeof r->repro_note,
                 "not written: the node alone agrees (inherited error): no small failing piece");
        return;
    }
    if (r->external) {
        snprintf(r->repro_note, sizeof r->repro_note,
                 "not written: the model keeps its weights as external data");
        return;
    }
    if (n_feed + 3 > REPRO_MAX_FILES) {
        snprintf(r->repro_note, sizeof r->repro_note,
                 "not written: the node has %zu inputs (at most %d)", n_feed, REPRO_MAX_FILES - 3);
        return;
    }
    int bad = stage_file(bp, "model.onnx", sub->p, sub->n)
                  ? onp_error_set(&e, ONP_ERR_NOMEM, "model.onnx", NULL, -1, "out of memory")
                  : 0;
    for (size_t k = 0; !bad && k < n_feed; k++) {
        snprintf(rel, sizeof rel, "test_data_set_0/input_%zu.pb", k);
        bad = stage_tensor(bp, rel, &feed[k], &e);
    }
    onp_tensor out;
    memset(&out, 0, sizeof out);
    if (!bad)
        bad = onp_tensor_copy(&out, want, &e) || onp_tensor_set_name(&out, p->value, &e) ||
              stage_tensor(bp, "test_data_set_0/output_0.pb", &out, &e);
    onp_tensor_release(&out);
    if (!bad) {
        /* the folder once, as one shell word: the commands copy-paste even
         * when the path has spaces or quotes (python reads it from argv) */
        char qdir[4200], readme[8192];
        onp_shell_quote(dir, qdir, sizeof qdir);
        int n = snprintf(
            readme, sizeof readme,
            "# ONNX Runtime reproducer: %s (%s)\n\n"
            "The node `%s` (op_type `%s`) of `%s`, cut out with the %zu value(s) that feed it\n"
            "as graph inputs. `test_data_set_0/` holds those inputs as the reference\n"
            "(%s) computed them and the output the reference expects; ONNX Runtime %s at\n"
            "opt-level %s returns a different one (max_abs %g, %lld of %lld elements beyond\n"
            "rtol %g, atol %g).\n\n"
            "The ONNX test-data layout: any ONNX test runner reads it. With onnxparity:\n\n"
            "    onnxparity check %s --strict-tol\n\n"
            "With the onnxruntime Python package:\n\n"
            "    python3 -c \"import sys, onnx, onnxruntime as ort, numpy as np, glob; "
            "from onnx import numpy_helper as h; d = sys.argv[1]; "
            "s = ort.InferenceSession(d + '/model.onnx'); "
            "x = [h.to_array(onnx.load_tensor(f)) for f in "
            "sorted(glob.glob(glob.escape(d) + '/test_data_set_0/input_*.pb'))]; "
            "y = s.run(None, dict(zip([i.name for i in s.get_inputs()], x)))[0]; "
            "e = h.to_array(onnx.load_tensor(d + '/test_data_set_0/output_0.pb')); "
            "print('max_abs', np.abs(y - e).max())\" %s\n",
            p->node[0] ? p->node : p->value, p->op_type, p->node, p->op_type, r->model, n_feed,
            r->reference == ONP_BISECT_REF_DISABLE ? "ONNX Runtime at opt-level disable"
                                                   : "eager PyTorch",
            onp_ort_version(c->ort), onp_ort_opt_level_name(r->opt_level), r->local.max_abs,
            r->local.mismatches, (long long)r->local.m.count, r->local.m.tol.rtol,
            r->local.m.tol.atol, qdir, qdir);
        size_t len = n > 0 && (size_t)n < sizeof readme ? (size_t)n : strlen(readme);
        if (stage_file(bp, "README.md", readme, len))
            bad = onp_error_set(&e, ONP_ERR_NOMEM, "README.md", NULL, -1, "out of memory");
    }
    if (bad) {
        bp->n_files = 0;
        snprintf(r->repro_note, sizeof r->repro_note, "not written: %.400s", e.msg);
    }
}

/* The folders the run reads as a whole, where no reproducer may go:
 * o->data, else the bundle `target` (through *one); *n of them. */
static const char *const *read_folders(const char *target, const onp_bisect_opts *o,
                                       const char **one, size_t *n)
{
    if (o->n_data) {
        *n = o->n_data;
        return o->data;
    }
    *one = target;
    *n = 1;
    return one;
}

/* Write the reproducer staged in r (save_repro) into the new folder
 * o->save_repro: made here under the output rule, the files written into
 * it, and on any failure every file removed and the folder with them
 * (repro_note says why).  r->repro names the folder once it is complete. */
static void write_repro(onp_bisect_result *r, const char *target, const onp_bisect_opts *o)
{
    bisect_priv *bp = r->priv;
    const char *dir = o->save_repro;
    if (!dir || !bp->n_files) return;
    const char *one;
    size_t n_reads;
    const char *const *reads = read_folders(target, o, &one, &n_reads);
    char path[4200];
    onp_error e;
    onp_error_clear(&e);
    size_t done = 0;
    int sub_made = 0;
    int bad = onp_out_mkdir_new(dir, reads, n_reads, &e);
    if (!bad) {
        snprintf(path, sizeof path, "%s/test_data_set_0", dir);
        bad = mkdir(path, 0777) ? onp_error_set(&e, ONP_ERR_IO, path, NULL, -1,
                                                "cannot be made: %s", strerror(errno))
                                : 0;
        sub_made = !bad;
    }
    for (; !bad && done < bp->n_files; done++) {
        onp_piece piece = {bp->files[done].p, bp->files[done].n};
        snprintf(path, sizeof path, "%s/%s", dir, bp->files[done].rel);
        bad = onp_write_atomic(path, &piece, 1, &e);
    }
    if (!bad) {
        snprintf(r->repro, sizeof r->repro, "%s", dir);
        return;
    }
    snprintf(r->repro_note, sizeof r->repro_note, "not written: %.400s", e.msg);
    if (e.code == ONP_ERR_USAGE && !done && !sub_made) return; /* refused: nothing made */
    for (size_t k = 0; k < done; k++) {                        /* ours: the folder is new */
        snprintf(path, sizeof path, "%s/%s", dir, bp->files[k].rel);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    if (sub_made) rmdir(path);
    rmdir(dir);
}

static void local_check(ctx *c)
{
    onp_bisect_result *r = c->r;
    onp_bisect_local *L = &r->local;
    const onp_bisect_point *p = &r->points[r->first];
    const onp_node *nd = &c->g->nodes[p->node_index];
    const fixref *fr = NULL;
    names cut = {0}, computed = {0};
    onp_buf sub, exposed;
    onp_session *s = NULL, *rs = NULL;
    onp_tensor *feed = NULL, *refs = NULL, out, file_ref;
    onp_error e;
    size_t n_feed = 0;
    onp_buf_init(&sub, 0);
    onp_buf_init(&exposed, 0);
    memset(&out, 0, sizeof out);
    memset(&file_ref, 0, sizeof file_ref);
    onp_error_clear(&e);
    L->fixture = p->fail_fixture;
    for (size_t k = 0; k < r->n_inputs; k++)
        if (r->inputs[k].src == ONP_BISECT_SRC_EAGER && r->inputs[k].max_abs > L->input_max_abs)
            L->input_max_abs = r->inputs[k].max_abs;
    for (size_t i = 0; i < c->n_runs && !fr; i++)
        if (c->runs[i].f->index == p->fail_fixture) fr = &c->runs[i];
    if (!fr) {
        snprintf(L->note, sizeof L->note, "fixture %d not found", p->fail_fixture);
        return;
    }
    if (choose_cut(c, fr, nd, &cut, &L->n_nodes, L->note, sizeof L->note)) goto done;
    L->n_fed = cut.n;
    feed = calloc(cut.n + 1, sizeof *feed);
    refs = calloc(cut.n + 2, sizeof *refs);
    if (!feed || !refs) goto nomem;
    for (size_t k = 0; k < cut.n; k++)
        if (gin_pos(c, cut.v[k]) < 0 && names_push(&computed, cut.v[k])) goto nomem;
    /* reference values of the computed cut and of the node's output */
    const onp_tensor *want = NULL;
    if (c->disable) {
        if (names_push(&computed, p->value)) goto nomem;
        if (onp_model_add_outputs(c->mm, computed.v, computed.n, &exposed, &e) ||
            open_session(c->ort, r->model, r->external, &exposed, &c->ref_so, &rs, &e) ||
            run_on(c, rs, fr->f, computed.v, computed.n, refs, &e))
            goto ort_failed;
        want = &refs[computed.n - 1];
    } else {
        for (size_t k = 0; k < computed.n; k++) {
            size_t j;
            if (!onp_strmap_get(&fr->map, computed.v[k], &j) ||
                onp_tfile_read(fr->file[j], NULL, &refs[k], &e))
                goto ort_failed;
        }
        size_t j;
        if (!onp_strmap_get(&fr->map, p->value, &j) ||
            onp_tfile_read(fr->file[j], NULL, &file_ref, &e))
            goto ort_failed;
        want = &file_ref;
    }
    /* the inputs, named: graph inputs from the fixture, the rest from refs */
    for (size_t k = 0, ci = 0; k < cut.n; k++, n_feed++) {
        long gp = gin_pos(c, cut.v[k]);
        if (gp >= 0 && (size_t)gp < fr->f->n_inputs) {
            if (onp_tfile_read(fr->f->inputs[gp], NULL, &feed[k], &e)) goto ort_failed;
        } else if (gp >= 0) {
            snprintf(L->note, sizeof L->note, "fixture has no input_%ld.pb", gp);
            goto done;
        } else if (onp_tensor_copy(&feed[k], &refs[ci++], &e)) {
            goto ort_failed;
        }
        if (onp_tensor_set_name(&feed[k], cut.v[k], &e)) goto ort_failed;
    }
    if (onp_model_extract(c->mm, cut.v, cut.n, &p->value, 1, &sub, &e) ||
        open_session(c->ort, r->model, r->external, &sub, &c->o->session, &s, &e) ||
        onp_session_run(s, feed, n_feed, &p->value, 1, &out, &e))
        goto ort_failed;
    /* the node alone is judged against the value's own envelope: its noise
     * in this fixture (float64 statistics), else the one the full run used */
    onp_noise nz = noise_of(fr, p->value, &out, NULL);
    if (nz.src == ONP_NOISE_NONE) nz = p->noise;
    onp_judgment jd;
    const char *note = judge_one(c->a, c->o, c->eager_random, want, &out, &nz, NULL, &L->m, &jd);
    L->ran = 1;
    L->local = !(jd.pass && !note[0]);
    L->max_abs = note[0] ? 1.0 / 0.0 : L->m.max_abs;
    L->max_rel = L->m.max_rel;
    L->mismatches = (long long)L->m.mismatches;
    if (note[0]) snprintf(L->note, sizeof L->note, "%s", note);
    if (c->o->save_repro) save_repro(c, &sub, feed, n_feed, want);
    goto done;
nomem:
    snprintf(L->note, sizeof L->note, "out of memory");
    goto done;
ort_failed:
    snprintf(L->note, sizeof L->note, "%.250s", e.msg[0] ? e.msg : "no reference for an input");
done: /* the arrays are zeroed beyond what was filled: release them whole */
    release_all(feed, cut.n + 1);
    release_all(refs, cut.n + 2);
    onp_tensor_release(&out);
    onp_tensor_release(&file_ref);
    free(feed);
    free(refs);
    free(cut.v);
    free(computed.v);
    onp_buf_free(&sub);
    onp_buf_free(&exposed);
    onp_session_close(s);
    onp_session_close(rs);
}

// --- the result ------------------------------------------------------------------

void onp_bisect_free(onp_bisect_result *r)
{
    if (!r) return;
    if (r->priv) {
        onp_arena_free(&((bisect_priv *)r->priv)->a);
        free(r->priv);
    }
    free(r);
}

static const char *sdup(onp_arena *a, const char *s)
{
    return onp_arena_strndup(a, s ? s : "", s ? strlen(s) : 0);
}

/* 1 when `name` is computed from initializers and Constant nodes only
 * (looked up to `depth` producers back). */
/* *budget bounds the nodes visited: a diamond-shaped chain (Add(c, c)
 * repeated) would otherwise cost 2^depth calls.  Out of budget means "not
 * known constant", the conservative answer. */
static int is_constant_b(const onp_graph *g, const char *name, int depth, long *budget)
{
    if (!name[0] || onp_graph_initializer(g, name)) return 1;
    if (--*budget < 0) return 0;
    const onp_node *nd = onp_graph_producer(g, name, NULL);
    if (!nd || depth <= 0) return 0;
    if (!strcmp(nd->op_type, "Constant") && !nd->domain[0]) return 1;
    if (!nd->n_inputs || strncmp(nd->op_type, "Random", 6) == 0) return 0;
    for (size_t k = 0; k < nd->n_inputs; k++)
        if (!is_constant_b(g, nd->inputs[k], depth - 1, budget)) return 0;
    return 1;
}

static int is_constant(const onp_graph *g, const char *name, int depth)
{
    long budget = 4096;
    return is_constant_b(g, name, depth, &budget);
}

/* Describe each input of the first divergent node. */
static int describe_inputs(onp_arena *a, const onp_graph *g, const onp_strmap *point_of,
                           onp_bisect_result *r)
{
    const onp_node *nd = &g->nodes[r->points[r->first].node_index];
    r->inputs = onp_arena_array(a, nd->n_inputs + 1, sizeof *r->inputs);
    if (!r->inputs) return -1;
    for (size_t k = 0; k < nd->n_inputs; k++) {
        onp_bisect_input *x = &r->inputs[r->n_inputs++];
        const char *name = nd->inputs[k];
        size_t pi;
        x->name = sdup(a, name);
        x->point = -1;
        if (!x->name) return -1;
        if (!name[0]) {
            x->src = ONP_BISECT_SRC_OMITTED;
        } else if (onp_strmap_get(point_of, name, &pi) && r->points[pi].compared) {
            x->src = ONP_BISECT_SRC_EAGER;
            x->point = (long)pi;
            x->pass = r->points[pi].pass;
            x->max_abs = r->points[pi].max_abs;
            x->max_rel = r->points[pi].max_rel;
        } else if (onp_graph_initializer(g, name)) {
            x->src = ONP_BISECT_SRC_INITIALIZER;
            x->pass = 1;
        } else if (!onp_graph_producer(g, name, NULL)) {
            x->src = ONP_BISECT_SRC_GRAPH_INPUT; /* not computed: fed from input_I.pb */
            x->pass = 1;
        } else if (is_constant(g, name, 32)) {
            x->src = ONP_BISECT_SRC_CONSTANT;
            x->pass = 1;
        } else {
            x->src = ONP_BISECT_SRC_NONE;
        }
    }
    return 0;
}

/* 1 when value v (an output of nd) is known not to be a tensor: declared
 * so, or made by an operator whose outputs are sequences or optionals. */
static int not_tensor(const onp_graph *g, const onp_node *nd, const char *v)
{
    static const char *const seq_ops[] = {"SequenceConstruct", "SequenceEmpty",   "SequenceInsert",
                                          "SequenceErase",     "SplitToSequence", "SequenceMap",
                                          "Optional"};
    onp_type t;
    if (!onp_graph_value_type(g, v, &t) && t.kind != ONP_TYPE_NONE && t.kind != ONP_TYPE_TENSOR)
        return 1;
    if (nd->domain[0]) return 0;
    for (size_t i = 0; i < sizeof seq_ops / sizeof seq_ops[0]; i++)
        if (!strcmp(nd->op_type, seq_ops[i])) return 1;
    return 0;
}

/* Each compared point's error relative to its scale, and how much its node
 * grew it over the node's compared inputs (graph inputs, weights and
 * constants count as exact); the largest growth names r->jump_point. */
static void error_jumps(const onp_graph *g, const onp_strmap *point_of, onp_bisect_result *r)
{
    const double floor_rel = 0x1p-23;
    r->jump_point = -1;
    for (size_t i = 0; i < r->n_points; i++) {
        onp_bisect_point *p = &r->points[i];
        if (!p->compared) continue;
        p->rel_err = p->scale_max > 0 ? p->max_abs / p->scale_max : (p->max_abs > 0 ? 1 : 0);
    }
    for (size_t i = 0; i < r->n_points; i++) {
        onp_bisect_point *p = &r->points[i];
        if (!p->compared || p->node_index >= g->n_nodes) continue;
        const onp_node *nd = &g->nodes[p->node_index];
        double in_rel = 0;
        for (size_t k = 0; k < nd->n_inputs; k++) {
            size_t q;
            if (nd->inputs[k][0] && onp_strmap_get(point_of, nd->inputs[k], &q) &&
                r->points[q].compared && r->points[q].rel_err > in_rel)
                in_rel = r->points[q].rel_err;
        }
        p->jump = p->rel_err / (in_rel > floor_rel ? in_rel : floor_rel);
        if (!isfinite(p->jump)) p->jump = INFINITY;
        if (r->jump_point < 0 || p->jump > r->points[r->jump_point].jump) r->jump_point = (long)i;
    }
}

/* The single-exposure search: one value per session, binary search for the
 * first that fails (assuming that once a value diverges, later ones do).
 * Exposing one value blocks at most the fusions at that value, so a
 * mismatch that the full exposure hides may show.  Points never probed
 * stay uncompared. */
static int search_single(ctx *c, onp_error *e)
{
    onp_bisect_result *r = c->r;
    size_t lo = 0, hi = r->n_points;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        unsigned long long largest = 0;
        if (run_chunk(c, mid, mid + 1, &largest, e)) return -1;
        const onp_bisect_point *p = &r->points[mid];
        if (p->compared && !p->pass)
            hi = mid;
        else
            lo = mid + 1;
    }
    r->chunk = r->n_points ? 1 : 0;
    return 0;
}

/* A bounded bundle (issue 19) stores intermediates for some fixtures only.
 * Say what that did to the reference: with --fixture K and none for K, the
 * reference is ORT at opt-level disable (AUTO) or there is none (EAGER); with
 * every fixture and the eager reference, the fixtures without them are not
 * compared.  Names a fixture that does store them; silent when none does. */
static void note_bounded(onp_bisect_result *r, const onp_testdata *td, size_t n_refs,
                         const onp_bisect_opts *o)
{
    if (!r->n_without_intermediates) return;
    int stored = -1;
    for (size_t i = 0; i < td->n && stored < 0; i++) {
        char p[4200];
        struct stat st;
        snprintf(p, sizeof p, "%s/intermediates/index.json", td->sets[i].dir);
        if (stat(p, &st) == 0) stored = td->sets[i].index;
    }
    if (stored < 0) return; /* no fixture has any: not a bounded bundle (NO_REFERENCE says so) */
    char other[128];
    snprintf(other, sizeof other, " or bisect --fixture %d, which stores them", stored);
    if (o->fixture >= 0 && r->reference == ONP_BISECT_REF_DISABLE)
        snprintf(r->reference_note, sizeof r->reference_note,
                 "fixture %d has no stored intermediates (the capture keeps them for a bounded "
                 "subset, parity.json intermediates.policy): the reference is ONNX Runtime at "
                 "opt-level disable, which finds where an optimization changes results, not where "
                 "ONNX leaves PyTorch; for an eager reference capture with intermediates=\"all\"%s",
                 o->fixture, other);
    else if (o->fixture >= 0)
        snprintf(r->reference_note, sizeof r->reference_note,
                 "fixture %d has no stored intermediates (parity.json intermediates.policy); "
                 "--reference disable compares with ONNX Runtime at opt-level disable instead; for "
                 "an eager reference capture with intermediates=\"all\"%s",
                 o->fixture, other);
    else
        snprintf(r->reference_note, sizeof r->reference_note,
                 "%zu of %zu fixtures have no stored intermediates (parity.json "
                 "intermediates.policy) and are not compared with the eager reference",
                 r->n_without_intermediates, n_refs);
}

/* The fixtures bisected, and the references each has: every fixture of the
 * target (or of o->data), or o->fixture alone, with its stored
 * intermediates (read_index; *u: every value some fixture has one for).
 * Chooses the reference (ORT at disable when asked, or when no fixture has
 * intermediates and the reference is AUTO) and keeps in c->runs the
 * fixtures that have it.  *refs / *n_refs: the caller frees their maps and
 * the array, also on failure. */
static int select_fixtures(ctx *c, onp_testdata *td, refset *u, fixref **refs, size_t *n_refs,
                           onp_error *e)
{
    const onp_bisect_opts *o = c->o;
    onp_bisect_result *r = c->r;
    const char *target = c->target;
    if (o->n_data ? onp_testdata_scan_dirs(o->data, o->n_data, td, e)
                  : onp_testdata_scan(target, td, e))
        return -1;
    if (onp_testdata_require(td, o->n_data ? o->data[0] : target, e)) return -1;
    *refs = calloc(td->n, sizeof **refs);
    r->fixtures = onp_arena_array(c->a, td->n, sizeof *r->fixtures);
    if (!*refs || !r->fixtures)
        return onp_error_set(e, ONP_ERR_NOMEM, target, NULL, -1, "out of memory");
    fixref *rf = *refs;
    for (size_t i = 0; i < td->n; i++) {
        if (o->fixture >= 0 && td->sets[i].index != o->fixture) continue;
        if (read_index(c->a, &td->sets[i], &rf[*n_refs], u, e)) {
            onp_strmap_free(&rf[*n_refs].map); /* partly filled */
            return -1;
        }
        (*n_refs)++;
    }
    if (!*n_refs)
        return onp_error_set(e, ONP_ERR_USAGE, target, NULL, -1, "no fixture test_data_set_%d",
                             o->fixture);
    int has_eager = 0;
    for (size_t i = 0; i < *n_refs; i++) has_eager |= rf[i].n > 0;
    c->disable = o->reference == ONP_BISECT_REF_DISABLE ||
                 (o->reference == ONP_BISECT_REF_AUTO && !has_eager);
    r->reference = c->disable ? ONP_BISECT_REF_DISABLE : ONP_BISECT_REF_EAGER;
    for (size_t i = 0; i < *n_refs; i++) r->n_without_intermediates += rf[i].n == 0;
    if (o->reference != ONP_BISECT_REF_DISABLE) note_bounded(r, td, *n_refs, o);
    /* the fixtures run: those with a reference */
    c->runs = rf;
    for (size_t i = 0; i < *n_refs; i++) {
        if (c->disable || rf[i].n) {
            r->fixtures[c->n_runs] = rf[i].f->index;
            rf[c->n_runs++] = rf[i]; /* i >= n_runs: a move down; slot i is stale now */
        } else {
            onp_strmap_free(&rf[i].map);
        }
    }
    *n_refs = c->n_runs;
    r->n_fixtures = c->n_runs;
    return 0;
}

/* The model bisected: r->model opened (*m), its external data checked by
 * this library's rules before ORT opens any file, its hash, and a legacy
 * (pre-opset-7) model upgraded (*up, *up_m; NULL when not).  The caller
 * closes both and frees *up, also on failure. */
static int open_model(onp_bisect_result *r, onp_model **m, onp_buf *up, onp_model **up_m,
                      onp_error *e)
{
    if (onp_model_open(r->model, m, e)) return -1;
    if (onp_model_check_external(*m, e)) return -1;
    onp_model_sha256(*m, r->sha256);
    r->external = onp_model_has_external(*m);
    if (!r->external) {
        if (onp_model_upgrade_opset7(*m, up, &r->upgraded, e)) return -1;
        if (r->upgraded && onp_model_parse(up->p, up->n, r->model, up_m, e)) return -1;
    }
    return 0;
}

/* The curve: node outputs in node order that have a reference (every node
 * output when the reference is ORT at disable, or when there is none), and
 * the graph outputs, into r->points; *point_of maps each value to its
 * point.  Also c->gin (the graph inputs that are not initializers). */
static int collect_points(ctx *c, const refset *u, onp_strmap *point_of, onp_error *e)
{
    onp_bisect_result *r = c->r;
    const onp_graph *g = c->g;
    onp_arena *a = c->a;
    size_t n_vals;
    onp_model_node_values(c->mm, &n_vals);
    r->points = onp_arena_array(a, n_vals + 1, sizeof *r->points);
    c->gin = onp_arena_array(a, g->n_inputs + 1, sizeof *c->gin);
    if (!r->points || !c->gin)
        return onp_error_set(e, ONP_ERR_NOMEM, c->target, NULL, -1, "out of memory");
    for (size_t i = 0; i < g->n_inputs; i++)
        if (!onp_graph_initializer(g, g->inputs[i].name)) c->gin[c->n_gin++] = g->inputs[i].name;
    size_t matched = 0;
    int every = c->disable || !u->n;
    for (size_t ni = 0; ni < g->n_nodes; ni++) {
        const onp_node *nd = &g->nodes[ni];
        for (size_t k = 0; k < nd->n_outputs; k++) {
            size_t ui = 0;
            const char *v = nd->outputs[k];
            if (!v[0] || onp_strmap_get(point_of, v, NULL)) continue;
            int has = onp_strmap_get(&u->map, v, &ui);
            /* a graph output is a point too: its reference is output_J.pb
             * (a root module's own computation has no intermediate) */
            if (!every && !has && !is_graph_output(g, v)) continue;
            if (!has && not_tensor(g, nd, v)) continue; /* ORT would refuse to fetch it */
            onp_bisect_point *p = &r->points[r->n_points];
            p->value = sdup(a, v);
            p->node = sdup(a, nd->name);
            p->op_type = sdup(a, nd->op_type);
            p->module = has ? u->module[ui] : "";
            p->node_index = ni;
            p->fail_fixture = -1;
            p->note = "";
            if (!p->value || !p->node || !p->op_type ||
                onp_strmap_put(point_of, p->value, r->n_points))
                return onp_error_set(e, ONP_ERR_NOMEM, c->target, NULL, -1, "out of memory");
            r->n_points++;
            matched += has;
        }
    }
    r->n_unmatched = u->n - matched;
    r->n_exposed = r->n_points;
    return 0;
}

/* The instrumented sessions, chunk by chunk, one run per fixture each: the
 * single-exposure search, or chunks planned ahead (plan_chunks), or chunks
 * sized adaptively to r->budget: the first takes each value to be as large
 * as the largest input (at most ONP_BISECT_FIRST_CHUNK values), each next
 * one the largest value the last one met. */
static int run_chunks(ctx *c, int single, onp_error *e)
{
    onp_bisect_result *r = c->r;
    size_t *bounds = NULL, n_chunks = 0;
    if (single) return search_single(c, e);
    if (plan_chunks(c, &bounds, &n_chunks, e)) return -1;
    unsigned long long in_b = (unsigned long long)c->largest_input * (c->disable ? 2 : 1);
    size_t next = in_b && r->budget / in_b < ONP_BISECT_FIRST_CHUNK
                      ? (size_t)(r->budget / in_b ? r->budget / in_b : 1)
                      : ONP_BISECT_FIRST_CHUNK;
    int rc = 0;
    for (size_t k = 0, lo = 0; lo < r->n_points; k++) {
        size_t hi = n_chunks ? bounds[k + 1] : (r->n_points - lo > next ? lo + next : r->n_points);
        unsigned long long largest = 0;
        if (run_chunk(c, lo, hi, &largest, e)) {
            rc = -1;
            break;
        }
        if (hi - lo > r->chunk) r->chunk = hi - lo;
        unsigned long long per = largest * (c->disable ? 2 : 1);
        next = per ? (size_t)(r->budget / per > 0 ? r->budget / per : 1) : r->n_points;
        lo = hi;
    }
    free(bounds);
    return rc;
}

/* What the chunks found: the first divergent point, each point's error
 * growth, how the noise was estimated (float64 statistics or ORT's
 * spread), the status, and the first divergent node's inputs described. */
static int conclude(ctx *c, onp_error *e)
{
    onp_bisect_result *r = c->r;
    for (size_t i = 0; i < r->n_points && r->first < 0; i++)
        if (r->points[i].compared && !r->points[i].pass) r->first = (long)i;
    error_jumps(c->g, c->point_of, r);
    for (size_t i = 0; i < c->n_runs; i++) {
        if (c->runs[i].n_noise)
            r->n_noise_float64++;
        else if (needs_spread(c, &c->runs[i]))
            r->n_noise_ort++;
    }
    r->status = r->first >= 0 ? ONP_BISECT_DIVERGES : ONP_BISECT_AGREES;
    if (r->first >= 0 && describe_inputs(c->a, c->g, c->point_of, r))
        return onp_error_set(e, ONP_ERR_NOMEM, c->target, NULL, -1, "out of memory");
    return 0;
}

/* Does the instrumented model reproduce what the plain one does?  The
 * plain model's run (run_plain) against the instrumented sessions' final
 * outputs, into r->verify; a plain model that cannot run is a note. */
static void verify_plain(ctx *c)
{
    vacc plain, expect;
    memset(&plain, 0, sizeof plain);
    memset(&expect, 0, sizeof expect);
    onp_error ve;
    onp_error_clear(&ve);
    onp_bisect_verify *v = &c->r->verify;
    if (run_plain(c, &plain, &expect, &ve)) {
        snprintf(v->note, sizeof v->note, "the plain model could not run: %.200s", ve.msg);
        return;
    }
    if (!plain.compared) return;
    v->ran = 1;
    v->plain_pass = plain.pass;
    v->plain_max_abs = plain.max_abs;
    v->plain_max_rel = plain.max_rel;
    v->instrumented_pass = c->all_pass;
    v->instrumented_max_abs = c->inst.max_abs;
    v->instrumented_max_rel = c->inst.max_rel;
    v->expected_ran = expect.compared > 0;
    v->expected_pass = expect.pass;
    v->expected_max_abs = expect.max_abs;
    v->expected_max_rel = expect.max_rel;
    v->reproduces = plain.pass ? c->all_pass : c->all_fail;
    if (!v->reproduces)
        snprintf(v->note, sizeof v->note,
                 plain.pass ? "the instrumented model fails where the plain model passes"
                            : "the plain model fails but the instrumented model passes: "
                              "the extra outputs change what ONNX Runtime runs (a fusion "
                              "they block)");
}

/* One bisection with the options given (onp_bisect_run adds the fallback):
 * fixtures and references, the model, the curve of points, the chunks run,
 * the conclusion, the verification and the local check.  *out: the
 * caller's (onp_bisect_free). */
static int bisect_once(onp_ort *ort, const char *target, const onp_bisect_opts *o, int single,
                       onp_bisect_result **out, onp_error *e)
{
    onp_testdata td;
    onp_model *m = NULL, *up_m = NULL;
    onp_buf up;
    refset u;
    onp_strmap point_of;
    fixref *refs = NULL;
    size_t n_refs = 0;
    int rc = -1;
    ctx c;
    memset(&c, 0, sizeof c);
    memset(&td, 0, sizeof td);
    memset(&u, 0, sizeof u);
    memset(&point_of, 0, sizeof point_of);
    onp_buf_init(&up, 0);
    *out = NULL;

    onp_bisect_result *r = calloc(1, sizeof *r);
    bisect_priv *bp = calloc(1, sizeof *bp);
    if (!r || !bp) {
        free(r);
        free(bp);
        return onp_error_set(e, ONP_ERR_NOMEM, target, NULL, -1, "out of memory");
    }
    onp_arena *a = &bp->a;
    r->priv = bp;
    r->first = -1;
    r->jump_point = -1;
    if (o->model)
        snprintf(r->model, sizeof r->model, "%s", o->model);
    else
        snprintf(r->model, sizeof r->model, "%s/model.onnx", target);
    c.ort = ort;
    c.o = o;
    c.a = a;
    c.r = r;
    c.target = target;
    c.eager_random = o->eager_random >= 0 ? o->eager_random : eager_random_of(target);

    if (select_fixtures(&c, &td, &u, &refs, &n_refs, e) || open_model(r, &m, &up, &up_m, e))
        goto fail;
    c.mm = up_m ? up_m : m;
    c.g = onp_model_graph(c.mm);
    if (collect_points(&c, &u, &point_of, e)) goto fail;
    if (!c.disable && (!u.n || !r->n_fixtures)) { /* nothing to compare against */
        r->status = ONP_BISECT_NO_REFERENCE;
        rc = 0;
        goto fail;
    }
    c.ref_so = o->session;
    c.ref_so.opt_level = ONP_ORT_OPT_DISABLE;
    c.point_of = &point_of;
    c.all_pass = c.all_fail = 1;

    if (run_chunks(&c, single, e) || conclude(&c, e)) goto fail;
    if (!o->no_verify && c.inst.compared) verify_plain(&c);
    settle_reorder(&c);
    settle_ties(&c);
    if (r->first >= 0 && !o->no_local) local_check(&c);
    rc = 0;

fail: /* also the way out on success: rc says which */
    onp_model_close(up_m);
    onp_model_close(m);
    onp_buf_free(&up);
    for (size_t i = 0; refs && i < n_refs; i++) onp_strmap_free(&refs[i].map);
    free(refs);
    refset_free(&u);
    onp_strmap_free(&point_of);
    onp_testdata_free(&td);
    if (rc) {
        onp_bisect_free(r);
        return -1;
    }
    *out = r;
    return 0;
}

int onp_bisect_inconclusive(const onp_bisect_result *r)
{
    if (r->first < 0 && r->n_refused) return 1;
    return r->first < 0 && r->verify.ran &&
           (!r->verify.plain_pass || onp_bisect_inconclusive_by_expected(r));
}

int onp_bisect_absorbed(const onp_bisect_result *r)
{
    const onp_bisect_verify *v = &r->verify;
    return r->first >= 0 && v->ran && v->plain_pass && (!v->expected_ran || v->expected_pass);
}

int onp_bisect_inconclusive_by_expected(const onp_bisect_result *r)
{
    const onp_bisect_verify *v = &r->verify;
    return r->first < 0 && v->ran && v->plain_pass && v->expected_ran && !v->expected_pass;
}

/* The tolerance bisect was asked for, as check's judgment takes it. */
static onp_tol opts_tol(void *opts, const char *name, int32_t dtype)
{
    (void)name;
    return tol_for(opts, dtype);
}

/* The verdict the caller's run gave fixture `index` (o->judged), or NULL. */
static const onp_fixture_verdict *judged_by_caller(const onp_bisect_opts *o, int index)
{
    for (size_t k = 0; o->judged && k < o->n_judged; k++)
        if (o->judged[k].index == index) return &o->judged[k];
    return NULL;
}

/* The session and judgment options for the fixtures unstored_failing
 * judges itself, made at the first one: the noise book as the caller
 * opened the bundle (o->manifest), else parity.json read here. */
typedef struct own_judge {
    onp_session *s;
    onp_noisebook *nb;
    onp_judge_fixture_opts jo;
} own_judge;

static int own_judge_open(onp_ort *ort, const char *target, const char *model,
                          const onp_bisect_opts *o, own_judge *j, onp_error *e)
{
    if (o->manifest) {
        onp_error ne;
        if (onp_noisebook_from_manifest(o->manifest, &j->nb, &ne)) j->nb = NULL; /* without */
    } else if (!o->n_data) {
        char path[4200];
        struct stat st;
        onp_error ne;
        snprintf(path, sizeof path, "%s/parity.json", target);
        if (stat(path, &st) == 0 && onp_noisebook_read(path, &j->nb, &ne)) j->nb = NULL;
    }
    onp_judge_fixture_opts_init(&j->jo);
    j->jo.tol = opts_tol;
    j->jo.tol_ctx = (void *)o;
    j->jo.strict = o->strict;
    j->jo.atol_given = o->atol >= 0;
    j->jo.no_estimate = o->no_noise;
    j->jo.noise = j->nb;
    return onp_session_open(ort, model, &o->session, &j->s, e);
}

/* A bounded bundle's fixtures without stored intermediates, judged at the
 * level of their outputs exactly as check judges them: the caller's run's
 * verdicts where it gave them (o->judged: no fixture runs twice), else
 * onp_judge_fixture here (the float64 references and the capture's scaled
 * statistics, the ORT-side estimate, the near-tie reorder), on the plain
 * model at the configuration under test.  Returns how many do not pass (0:
 * none; the fixtures with intermediates already passed against eager value
 * by value), or -1 with *e set when they cannot be judged.  *n_judged: how
 * many were. */
static long unstored_failing(onp_ort *ort, const char *target, const char *model,
                             const onp_bisect_opts *o, size_t *n_judged, onp_error *e)
{
    onp_testdata td;
    own_judge j;
    long failing = -1;
    memset(&td, 0, sizeof td);
    memset(&j, 0, sizeof j);
    *n_judged = 0;
    if (o->n_data ? onp_testdata_scan_dirs(o->data, o->n_data, &td, e)
                  : onp_testdata_scan(target, &td, e))
        goto done;
    failing = 0;
    for (size_t i = 0; i < td.n; i++) {
        char p[4200];
        struct stat st;
        snprintf(p, sizeof p, "%s/intermediates/index.json", td.sets[i].dir);
        if ((o->fixture >= 0 && td.sets[i].index != o->fixture) || stat(p, &st) == 0) continue;
        const onp_fixture_verdict *known = judged_by_caller(o, td.sets[i].index);
        if (known) {
            failing += known->status != ONP_FIXTURE_PASS;
            (*n_judged)++;
            continue;
        }
        if (!j.s && own_judge_open(ort, target, model, o, &j, e)) {
            failing = -1;
            break;
        }
        onp_fixture_verdict fv;
        memset(&fv, 0, sizeof fv);
        int bad = onp_judge_fixture(j.s, &td.sets[i], &j.jo, &fv, e);
        failing += !bad && fv.status != ONP_FIXTURE_PASS;
        onp_fixture_verdict_release(&fv);
        if (bad) {
            failing = -1;
            break;
        }
        (*n_judged)++;
    }
done:
    onp_session_close(j.s);
    onp_noisebook_free(j.nb);
    onp_testdata_free(&td);
    return failing;
}

/* onp_bisect_run without the reproducer: the result chosen among the
 * bisections and fallbacks. */
static int bisect_run(onp_ort *ort, const char *target, const onp_bisect_opts *o,
                      onp_bisect_result **out, onp_error *e)
{
    onp_bisect_result *r;
    *out = NULL;
    if (bisect_once(ort, target, o, 0, &r, e)) return -1;
    *out = r;
    const onp_bisect_verify *v = &r->verify;
    if (o->reference == ONP_BISECT_REF_AUTO && r->reference == ONP_BISECT_REF_EAGER && v->ran &&
        v->plain_pass && r->n_without_intermediates) {
        /* bounded bundle: the fixtures that store intermediates pass, so a
         * failure, if any, is in one that does not: bisect every fixture
         * at disable, and keep that result when a value diverges there */
        onp_bisect_opts d = *o;
        onp_bisect_result *r2 = NULL;
        onp_error e2;
        onp_error_clear(&e2);
        d.reference = ONP_BISECT_REF_DISABLE;
        size_t n_judged = 0;
        long failing = unstored_failing(ort, target, r->model, o, &n_judged, &e2);
        onp_error_clear(&e2); /* not judged: bisected at disable, as before */
        if (failing == 0 && n_judged) {
            /* their outputs pass as check judges them: nothing left to
             * bisect; against ORT at disable they would be bisected on
             * noise estimates that see one ulp of input, not the rounding
             * two optimization levels differ by (docs/cli.md, bisect) */
            size_t u = strlen(r->reference_note);
            snprintf(r->reference_note + u, sizeof r->reference_note - u,
                     "; those pass against eager, and the %zu without them pass as check judges "
                     "their outputs (float64 references, near-tie reorders): nothing left to "
                     "bisect (--reference disable compares every value with ONNX Runtime at "
                     "opt-level disable)",
                     n_judged);
        } else if (bisect_once(ort, target, &d, 0, &r2, &e2) == 0 &&
                   r2->status == ONP_BISECT_DIVERGES) {
            snprintf(r2->reference_note, sizeof r2->reference_note,
                     "the %zu fixture(s) with stored intermediates pass against eager; the other "
                     "%zu have none (parity.json intermediates.policy), so every fixture was "
                     "bisected against ONNX Runtime at opt-level disable",
                     r->n_fixtures, r->n_without_intermediates);
            r2->n_without_intermediates = r->n_without_intermediates;
            onp_bisect_free(r);
            *out = r = r2;
            v = &r->verify;
        } else {
            size_t u = strlen(r->reference_note);
            snprintf(r->reference_note + u, sizeof r->reference_note - u,
                     "; those pass against eager, and at opt-level disable no value diverges on "
                     "any fixture: to bisect the others against eager, capture with "
                     "intermediates=\"all\"");
            onp_bisect_free(r2);
        }
    }
    if (!v->ran || v->reproduces || v->plain_pass || o->no_fallback) return 0;
    /* the plain model fails, the instrumented one does not: at ORT_DISABLE_ALL
     * there are no fusions to block, so bisect there when the mismatch
     * survives at that level; otherwise expose one value per session */
    onp_bisect_result *r2 = NULL;
    onp_error e2;
    onp_error_clear(&e2);
    if (r->reference != ONP_BISECT_REF_DISABLE && o->session.opt_level != ONP_ORT_OPT_DISABLE) {
        onp_bisect_opts d = *o;
        d.session.opt_level = ONP_ORT_OPT_DISABLE;
        d.no_fallback = 1;
        if (bisect_once(ort, target, &d, 0, &r2, &e2) == 0 && r2->verify.ran &&
            !r2->verify.plain_pass) {
            r2->verify = r->verify; /* the check that sent us here */
            snprintf(r2->fallback, sizeof r2->fallback, "disable");
            snprintf(r2->fallback_note, sizeof r2->fallback_note,
                     "the instrumented model at %s does not reproduce the mismatch; the plain "
                     "model still fails at disable, so this result is bisected at disable",
                     onp_ort_opt_level_name(r->opt_level));
            onp_bisect_free(r);
            *out = r2;
            return 0;
        }
        onp_bisect_free(r2);
        r2 = NULL;
    }
    if (bisect_once(ort, target, o, 1, &r2, &e2) == 0 && r2->first >= 0) {
        r2->verify = r->verify;
        snprintf(r2->fallback, sizeof r2->fallback, "single");
        snprintf(r2->fallback_note, sizeof r2->fallback_note,
                 "the instrumented model does not reproduce the mismatch and it needs an "
                 "optimization above disable: bisected with one exposed value per session "
                 "(binary search, %zu sessions; values not probed are not compared)",
                 r2->n_chunks);
        onp_bisect_free(r);
        *out = r2;
        return 0;
    }
    onp_bisect_free(r2);
    snprintf(r->fallback, sizeof r->fallback, "none");
    if (e2.code) { /* a fallback could not run: say why rather than "found nothing" */
        char why[600];
        snprintf(r->fallback_note, sizeof r->fallback_note,
                 "the instrumented model does not reproduce the mismatch, and the fallback "
                 "bisection failed: %s",
                 onp_error_format(&e2, why, sizeof why));
        return 0;
    }
    snprintf(r->fallback_note, sizeof r->fallback_note,
             "the mismatch needs an optimization above disable that exposing the "
             "intermediates blocks, and no single exposed value shows it either; name the "
             "optimizer with `onnxparity sweep`");
    return 0;
}

/* r->branch from the bundle's parity.json: the first traced branch (a
 * TracerWarning of a tensor made a Python boolean, as the causes read it,
 * in a module's forward: parity.json warnings[].modules) when the first
 * divergence is in a fixture other than the traced one (on
 * the traced fixture the graph's path is eager's: the branch explains
 * nothing there). */
static void find_branch(onp_bisect_result *r, const char *target, const onp_bisect_opts *o)
{
    char path[4096];
    struct stat st;
    onp_manifest *opened = NULL;
    const onp_manifest *mf = o->manifest;
    if (r->first < 0) return;
    if (!mf) { /* no caller's copy: read it here, once */
        onp_error e;
        if ((size_t)snprintf(path, sizeof path, "%s/parity.json", target) >= sizeof path ||
            stat(path, &st) != 0 || !S_ISREG(st.st_mode) || onp_manifest_open(path, &opened, &e))
            return;
        mf = opened;
    }
    int traced = onp_manifest_traced_fixture(mf);
    const cJSON *w, *list = cJSON_GetObjectItemCaseSensitive(onp_manifest_doc(mf), "warnings");
    if (traced >= 0 && r->points[r->first].fail_fixture != traced)
        cJSON_ArrayForEach(w, list)
        {
            const char *cat = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "category"));
            const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "message"));
            const char *where = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "where"));
            const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(w, "code"));
            /* a branch the capture placed in a module's forward: one in a
             * library helper (torchvision's nms size switch) names no module
             * and is left to the lint's list */
            const cJSON *mods = cJSON_GetObjectItemCaseSensitive(w, "modules");
            if (!cat || strcmp(cat, "TracerWarning") || !msg || !strstr(msg, "Python boolean") ||
                !where || !cJSON_GetArraySize(mods))
                continue;
            r->branch.found = 1;
            r->branch.traced_fixture = traced;
            snprintf(r->branch.where, sizeof r->branch.where, "%s", where);
            snprintf(r->branch.code, sizeof r->branch.code, "%s", code ? code : "");
            const cJSON *m;
            cJSON_ArrayForEach(m, mods)
            {
                const char *p = cJSON_GetStringValue(m);
                if (!p) continue;
                if (r->branch.n_modules < 4)
                    snprintf(r->branch.modules[r->branch.n_modules],
                             sizeof r->branch.modules[0], "%s", p);
                r->branch.n_modules++;
            }
            break;
        }
    onp_manifest_free(opened);
}

int onp_bisect_run(onp_ort *ort, const char *target, const onp_bisect_opts *o,
                   onp_bisect_result **out, onp_error *e)
{
    *out = NULL;
    if (o->save_repro) { /* refused before anything runs: nothing is written */
        const char *one;
        size_t n;
        const char *const *reads = read_folders(target, o, &one, &n);
        if (onp_out_check_new_dir(o->save_repro, reads, n, e)) return -1;
    }
    if (bisect_run(ort, target, o, out, e)) return -1;
    find_branch(*out, target, o);
    write_repro(*out, target, o);
    return 0;
}
