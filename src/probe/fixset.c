/*
 * fixset.c — the fixture set the probes and the sweep run (onp_fixset,
 * include/onnxparity/probe.h): every fixture's inputs, expected outputs,
 * float64 and tie-ordered references read once from the test-data folders, so that each
 * configuration tried runs from memory.  Needs no ONNX Runtime.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "onnxparity/tfile.h"
#include "probe/probe_int.h"

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
        for (size_t k = 0; fs->f[i].tie && k < fs->f[i].n_out; k++)
            onp_tensor_release(&fs->f[i].tie[k]);
        free(fs->f[i].ref64);
        free(fs->f[i].tie);
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

/* Fixture f's tie-ordered reference (docs/formats.md) into x->tie when
 * every output has one: tie_ordered/output_K.pb beside its outputs.  0
 * (x->tie NULL when there is none), or -1 with e set. */
static int read_tie(const onp_fixture *f, probe_fx *x, onp_error *e)
{
    char path[4200];
    for (size_t k = 0; k < f->n_outputs; k++)
        if (!onp_fixture_tie_path(f, k, path, sizeof path)) return 0;
    if (!f->n_outputs) return 0;
    x->tie = calloc(f->n_outputs, sizeof *x->tie);
    if (!x->tie) return onp_error_set(e, ONP_ERR_NOMEM, f->dir, NULL, -1, "out of memory");
    for (size_t k = 0; k < f->n_outputs; k++) {
        onp_fixture_tie_path(f, k, path, sizeof path); /* found above */
        if (onp_tfile_read(path, NULL, &x->tie[k], e)) return -1;
    }
    return 0;
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
        probe_fx *x = &fs->f[i];
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
        if (!rc && read_tie(f, x, e)) rc = -1;
    }
    onp_testdata_free(&td);
    if (rc) {
        onp_fixset_free(fs);
        return -1;
    }
    *out = fs;
    return 0;
}
