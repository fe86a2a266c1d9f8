/*
 * bisect.c — the first node where ONNX Runtime leaves eager PyTorch
 * (include/onnxparity/bisect.h).
 *
 * Steps: scan the bundle's fixtures; read each fixture's
 * intermediates/index.json (value -> reference file, module); walk the main
 * graph's nodes in order and keep every output that has a reference (the
 * curve); add those as graph outputs with the splicing writer; open one ORT
 * session on the edited bytes (or on a hidden temp file beside the model
 * when it has external data); run each fixture once and compare each value
 * with its reference in curve order, releasing both tensors as soon as they
 * are compared; then name the first failing value and describe its node's
 * inputs.  Never prints; errors go to the caller's onp_error.
 */
#include "onnxparity/bisect.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnxparity/model.h"
#include "onnxparity/tfile.h"
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

void onp_bisect_opts_init(onp_bisect_opts *o)
{
    memset(o, 0, sizeof *o);
    o->rtol = o->atol = -1;
    o->fixture = -1;
}

// --- per-fixture references --------------------------------------------------

/* One fixture's intermediates: value -> index into files[]. */
typedef struct fixref {
    const onp_fixture *f;
    onp_strmap map;    /* value -> i */
    const char **file; /* [n] reference .pb paths */
    size_t n;
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
    cJSON *doc = cJSON_ParseWithLength((const char *)mp->p, mp->n);
    onp_map_unref(mp);
    const cJSON *entries = doc ? cJSON_GetObjectItemCaseSensitive(doc, "entries") : NULL;
    if (!cJSON_IsArray(entries)) {
        cJSON_Delete(doc);
        return onp_error_set(e, ONP_ERR_FORMAT, path, "entries", -1,
                             "not an onnxparity.intermediates/1 index (no 'entries' array)");
    }
    int n = cJSON_GetArraySize(entries), rc = 0;
    r->file = onp_arena_array(a, (size_t)n + 1, sizeof *r->file);
    if (!r->file) rc = onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    for (int i = 0; !rc && i < n; i++) {
        const cJSON *it = cJSON_GetArrayItem(entries, i);
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
            if (cJSON_IsNumber(call) && call->valuedouble > 0)
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

// --- comparing ----------------------------------------------------------------

static onp_tol tol_for(const onp_bisect_opts *o, int32_t dtype)
{
    onp_tol t = onp_tol_default(dtype);
    if (o->rtol >= 0) t.rtol = o->rtol;
    if (o->atol >= 0) t.atol = o->atol;
    return t;
}

/* Fold one fixture's comparison of point p into it. */
static void fold(onp_bisect_point *p, const onp_metrics *m, int fixture, const char *note)
{
    int pass = m->pass && !note[0];
    if (!p->compared || m->max_abs > p->max_abs) {
        p->m = *m;
        p->max_abs = m->max_abs;
    }
    if (!p->compared || m->max_rel > p->max_rel) p->max_rel = m->max_rel;
    p->pass = (p->compared ? p->pass : 1) && pass;
    if (!pass && p->fail_fixture < 0) p->fail_fixture = fixture;
    p->compared++;
}

/* Run fixture r and compare every point it has a reference for. */
static int run_fixture(onp_arena *a, onp_session *s, const onp_bisect_opts *o, const fixref *r,
                       onp_bisect_point *pts, size_t n_pts, onp_error *e)
{
    const onp_fixture *f = r->f;
    onp_tensor *in = calloc(f->n_inputs ? f->n_inputs : 1, sizeof *in);
    onp_tensor *got = calloc(n_pts ? n_pts : 1, sizeof *got);
    const char **names = calloc(n_pts ? n_pts : 1, sizeof *names);
    int rc = 0, ran = 0;
    if (!in || !got || !names) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, f->dir, NULL, -1, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < f->n_inputs; k++) {
        if (onp_tfile_read(f->inputs[k], NULL, &in[k], e)) {
            rc = -1;
            goto done;
        }
        onp_tensor_set_name(&in[k], NULL, e); /* fed by position, as check does */
    }
    for (size_t i = 0; i < n_pts; i++) names[i] = pts[i].value;
    if (onp_session_run(s, in, f->n_inputs, names, n_pts, got, e)) {
        onp_error_set_file(e, f->dir);
        rc = -1;
        goto done;
    }
    ran = 1;
    for (size_t i = 0; i < n_pts; i++) {
        size_t j;
        if (onp_strmap_get(&r->map, pts[i].value, &j)) {
            onp_tensor want;
            if (onp_tfile_read(r->file[j], NULL, &want, e)) {
                rc = -1;
                goto done;
            }
            onp_metrics m;
            onp_error ce;
            onp_error_clear(&ce);
            memset(&m, 0, sizeof m);
            const char *note = "";
            if (onp_compare(&want, &got[i], tol_for(o, want.dtype), &m, &ce))
                note = onp_arena_strndup(a, ce.msg, strlen(ce.msg));
            else if (!m.shape_ok)
                note = "shape differs";
            else if (!m.dtype_ok)
                note = "dtype differs";
            if (!note) note = "?";
            if (note[0] && !pts[i].note[0]) pts[i].note = note;
            fold(&pts[i], &m, f->index, note);
            onp_tensor_release(&want);
        }
        onp_tensor_release(&got[i]); /* compared or not, its memory goes now */
    }
done:
    for (size_t k = 0; in && k < f->n_inputs; k++) onp_tensor_release(&in[k]);
    for (size_t i = 0; ran && got && i < n_pts; i++) onp_tensor_release(&got[i]);
    free(in);
    free(got);
    free(names);
    return rc;
}

// --- the result ------------------------------------------------------------------

void onp_bisect_free(onp_bisect_result *r)
{
    if (!r) return;
    if (r->priv) {
        onp_arena_free(r->priv);
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
static int is_constant(const onp_graph *g, const char *name, int depth)
{
    if (!name[0] || onp_graph_initializer(g, name)) return 1;
    const onp_node *nd = onp_graph_producer(g, name, NULL);
    if (!nd || depth <= 0) return 0;
    if (!strcmp(nd->op_type, "Constant") && !nd->domain[0]) return 1;
    if (!nd->n_inputs || strncmp(nd->op_type, "Random", 6) == 0) return 0;
    for (size_t k = 0; k < nd->n_inputs; k++)
        if (!is_constant(g, nd->inputs[k], depth - 1)) return 0;
    return 1;
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

int onp_bisect_run(onp_ort *ort, const char *target, const onp_bisect_opts *o,
                   onp_bisect_result **out, onp_error *e)
{
    onp_testdata td;
    onp_model *m = NULL, *up_m = NULL;
    onp_buf up, edited;
    onp_session *s = NULL;
    refset u;
    onp_strmap point_of;
    fixref *refs = NULL;
    size_t n_refs = 0;
    int rc = -1;
    memset(&td, 0, sizeof td);
    memset(&u, 0, sizeof u);
    memset(&point_of, 0, sizeof point_of);
    onp_buf_init(&up, 0);
    onp_buf_init(&edited, 0);
    *out = NULL;

    onp_bisect_result *r = calloc(1, sizeof *r);
    onp_arena *a = calloc(1, sizeof *a);
    if (!r || !a) {
        free(r);
        free(a);
        return onp_error_set(e, ONP_ERR_NOMEM, target, NULL, -1, "out of memory");
    }
    r->priv = a;
    r->first = -1;
    snprintf(r->model, sizeof r->model, "%s/model.onnx", target);

    /* fixtures, and the references each has */
    if (onp_testdata_scan(target, &td, e)) goto fail;
    if (!td.n) {
        onp_error_set(e, ONP_ERR_USAGE, target, NULL, -1,
                      "no test_data_set_N folders: nothing to bisect");
        goto fail;
    }
    refs = calloc(td.n, sizeof *refs);
    r->fixtures = onp_arena_array(a, td.n, sizeof *r->fixtures);
    if (!refs || !r->fixtures) {
        onp_error_set(e, ONP_ERR_NOMEM, target, NULL, -1, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < td.n; i++) {
        if (o->fixture >= 0 && td.sets[i].index != o->fixture) continue;
        if (read_index(a, &td.sets[i], &refs[n_refs], &u, e)) goto fail;
        if (refs[n_refs].n) r->fixtures[r->n_fixtures++] = td.sets[i].index;
        n_refs++;
    }
    if (!n_refs) {
        onp_error_set(e, ONP_ERR_USAGE, target, NULL, -1, "no fixture test_data_set_%d",
                      o->fixture);
        goto fail;
    }

    /* the model, upgraded when legacy */
    if (onp_model_open(r->model, &m, e)) goto fail;
    onp_model_sha256(m, r->sha256);
    r->external = onp_model_has_external(m);
    if (!r->external) {
        if (onp_model_upgrade_opset7(m, &up, &r->upgraded, e)) goto fail;
        if (r->upgraded && onp_model_parse(up.p, up.n, r->model, &up_m, e)) goto fail;
    }
    const onp_model *mm = up_m ? up_m : m;
    const onp_graph *g = onp_model_graph(mm);

    /* the curve: node outputs in node order that have a reference (every node
     * output when there is none at all) */
    size_t n_vals;
    onp_model_node_values(mm, &n_vals);
    r->points = onp_arena_array(a, n_vals + 1, sizeof *r->points);
    if (!r->points) {
        onp_error_set(e, ONP_ERR_NOMEM, target, NULL, -1, "out of memory");
        goto fail;
    }
    size_t matched = 0;
    for (size_t ni = 0; ni < g->n_nodes; ni++) {
        const onp_node *nd = &g->nodes[ni];
        for (size_t k = 0; k < nd->n_outputs; k++) {
            size_t ui = 0;
            const char *v = nd->outputs[k];
            if (!v[0] || onp_strmap_get(&point_of, v, NULL)) continue;
            int has = onp_strmap_get(&u.map, v, &ui);
            if (u.n && !has) continue;
            onp_bisect_point *p = &r->points[r->n_points];
            p->value = sdup(a, v);
            p->node = sdup(a, nd->name);
            p->op_type = sdup(a, nd->op_type);
            p->module = has ? u.module[ui] : "";
            p->node_index = ni;
            p->fail_fixture = -1;
            p->note = "";
            if (!p->value || !p->node || !p->op_type ||
                onp_strmap_put(&point_of, p->value, r->n_points)) {
                onp_error_set(e, ONP_ERR_NOMEM, target, NULL, -1, "out of memory");
                goto fail;
            }
            r->n_points++;
            matched += has;
        }
    }
    r->n_unmatched = u.n - matched;

    /* expose them */
    const char **names = calloc(r->n_points + 1, sizeof *names);
    if (!names) {
        onp_error_set(e, ONP_ERR_NOMEM, target, NULL, -1, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < r->n_points; i++) names[i] = r->points[i].value;
    int arc = onp_model_add_outputs(mm, names, r->n_points, &edited, e);
    free(names);
    if (arc) goto fail;
    r->n_exposed = r->n_points;
    if (!u.n || !r->n_fixtures) { /* nothing to compare against */
        r->status = ONP_BISECT_NO_REFERENCE;
        rc = 0;
        goto fail;
    }

    /* one session, one run per fixture */
    if (open_session(ort, r->model, r->external, &edited, &o->session, &s, e)) goto fail;
    onp_buf_free(&edited);
    const onp_session_desc *d = onp_session_describe(s);
    snprintf(r->provider, sizeof r->provider, "%s", d->provider);
    snprintf(r->notes, sizeof r->notes, "%s", d->notes ? d->notes : "");
    r->opt_level = d->opt_level;
    r->intra_threads = d->intra_threads;
    r->inter_threads = d->inter_threads;
    for (size_t i = 0; i < n_refs; i++)
        if (refs[i].n && run_fixture(a, s, o, &refs[i], r->points, r->n_points, e)) goto fail;

    for (size_t i = 0; i < r->n_points && r->first < 0; i++)
        if (r->points[i].compared && !r->points[i].pass) r->first = (long)i;
    r->status = r->first >= 0 ? ONP_BISECT_DIVERGES : ONP_BISECT_AGREES;
    if (r->first >= 0 && describe_inputs(a, g, &point_of, r)) {
        onp_error_set(e, ONP_ERR_NOMEM, target, NULL, -1, "out of memory");
        goto fail;
    }
    rc = 0;

fail: /* also the way out on success: rc says which */
    onp_session_close(s);
    onp_model_close(up_m);
    onp_model_close(m);
    onp_buf_free(&up);
    onp_buf_free(&edited);
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
