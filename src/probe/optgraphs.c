/*
 * optgraphs.c — the optimized graphs: ONNX Runtime saves the model it
 * optimized at a level (session option optimized_model_path) into a store
 * (a temporary folder, or the caller's, kept), and two saved graphs are
 * diffed (graphdiff.c) to show what a level, or the culprit optimizer,
 * changed.  A graph that cannot be saved or read is a note, not an error.
 * Never prints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "probe/probe_int.h"

static void gnote(probe_gstore *g, const char *what, const char *why)
{
    if (g->note[0]) return; /* the first problem says enough */
    snprintf(g->note, g->note_size, "%.150s: %.340s", what, why);
}

static int gstore_ready(probe_gstore *g, const char *save_dir)
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

void probe_gstore_release(probe_gstore *g)
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
static const char *save_graph(probe_gstore *g, onp_ort *ort, const char *model,
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

/* Diff two saved graphs; labels set; NULL (noted) when one is missing or
 * unreadable. */
static onp_graph_diff *diff_saved(probe_gstore *g, const char *fa, const char *fb, const char *la,
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
        d->from_file = probe_dup_str(fa);
        d->to_file = probe_dup_str(fb);
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
void probe_diff_levels(probe_gstore *g, onp_ort *ort, const char *model,
                       const onp_session_opts *base, const onp_probe_opts *o, onp_sweep_config *c,
                       size_t n_orts, int lo, int hi)
{
    if (c->levels[hi].graph_diff || !c->levels[lo].ran || !c->levels[hi].ran) return;
    const char *f[2];
    int lv[2] = {lo, hi};
    for (int k = 0; k < 2; k++) {
        char name[256];
        onp_session_opts so = *base;
        so.opt_level = probe_sweep_levels[lv[k]];
        graph_name(c, n_orts, onp_ort_opt_level_name(so.opt_level), name, sizeof name);
        f[k] = save_graph(g, ort, model, &so, o->save_optimized_dir, name);
    }
    c->levels[hi].graph_diff =
        diff_saved(g, f[0], f[1], onp_ort_opt_level_name(probe_sweep_levels[lo]),
                   onp_ort_opt_level_name(probe_sweep_levels[hi]));
}

/* The graph at `all` without the culprit against the graph at `all`: the
 * nodes the culprit fused. */
int probe_culprit_graphs(probe_gstore *g, onp_ort *ort, const char *model,
                         const onp_session_opts *base, const onp_probe_opts *o, onp_sweep_config *c,
                         size_t n_orts, onp_sweep_result *r, onp_error *e)
{
    char entry[400], name[320], what[300], label[96];
    snprintf(entry, sizeof entry, "optimization.disable_specified_optimizers=%s", r->culprit);
    const char **cfg;
    onp_session_opts without;
    if (probe_with_entry(base, entry, &without, &cfg, e)) return -1;
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
