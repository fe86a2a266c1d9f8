/*
 * tfile.c — tensor files by path: the "X.pb", "X.npy", "X.npz:NAME" specs,
 * reading through a memory map and writing atomically.  The formats
 * themselves live in pb.c, npy.c and npz.c.
 */
#include <stdlib.h>
#include <string.h>

#include "onnxparity/tfile.h"
#include "tfile/npy_int.h"
#include "util/fsio.h"

static void map_ref(void *m)
{
    onp_map_ref(m);
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && !strncmp(s + n - k, suffix, k);
}

onp_tformat onp_tformat_from_path(const char *path)
{
    size_t n = strlen(path);
    if (ends_with(path, n, ".pb")) return ONP_TF_PB;
    if (ends_with(path, n, ".npy")) return ONP_TF_NPY;
    if (ends_with(path, n, ".npz")) return ONP_TF_NPZ;
    return ONP_TF_UNKNOWN;
}

/* The file stem: "a/b/x.npy" -> "x". */
static char *stem(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    return strndup(b, dot ? (size_t)(dot - b) : strlen(b));
}

static int read_npz(const char *path, const char *member, const onp_tread_opts *ro, onp_tensor *out,
                    onp_error *e)
{
    onp_npz *z;
    if (onp_npz_open(path, ro, &z, e)) return -1;
    long idx;
    if (member) {
        idx = onp_npz_find(z, member);
        if (idx < 0) {
            onp_error_set(e, ONP_ERR_USAGE, path, NULL, -1, "no array named '%s' in the archive",
                          member);
            onp_npz_close(z);
            return -1;
        }
    } else if (onp_npz_count(z) == 1) {
        idx = 0;
    } else {
        onp_error_set(e, ONP_ERR_USAGE, path, NULL, -1,
                      "the archive holds %zu arrays: name one as %s:NAME", onp_npz_count(z), path);
        onp_npz_close(z);
        return -1;
    }
    int rc = onp_npz_read(z, (size_t)idx, out, e);
    onp_npz_close(z);
    return rc;
}

int onp_tfile_read(const char *spec, const onp_tread_opts *ro, onp_tensor *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    /* "X.npz:NAME": split at the last ".npz:" */
    const char *sep = NULL;
    for (const char *p = strstr(spec, ".npz:"); p; p = strstr(p + 1, ".npz:")) sep = p;
    if (sep) {
        char *path = strndup(spec, (size_t)(sep - spec) + 4);
        if (!path) return onp_error_set(e, ONP_ERR_NOMEM, spec, NULL, -1, "out of memory");
        int rc = read_npz(path, sep + 5, ro, out, e);
        free(path);
        return rc;
    }
    onp_tformat fmt = onp_tformat_from_path(spec);
    if (fmt == ONP_TF_NPZ) return read_npz(spec, NULL, ro, out, e);
    if (fmt == ONP_TF_UNKNOWN)
        return onp_error_set(e, ONP_ERR_USAGE, spec, NULL, -1,
                             "unknown tensor file type (expected .pb, .npy or .npz[:NAME])");
    onp_map *m;
    if (onp_map_open(spec, &m, e)) return -1;
    /* a little-endian array (.npy) or aligned raw_data (.pb) is viewed in
     * the map, not copied: its pages come from the page cache */
    int rc = fmt == ONP_TF_PB
                 ? onp_pb_tensor_decode_borrow(m->p, m->n, spec, 0, m->mapped ? m : NULL, map_ref,
                                               onp_map_unref_void, out, e)
                 : onp_npy_decode_borrow(m->p, m->n, spec, ro, m->mapped ? m : NULL, map_ref,
                                         onp_map_unref_void, out, e);
    onp_map_unref(m);
    if (rc) return onp_error_set_file(e, spec);
    if (!out->name) {
        char *s = stem(spec);
        if (!s || onp_tensor_set_name(out, s, e)) {
            free(s);
            onp_tensor_release(out);
            return onp_error_set(e, ONP_ERR_NOMEM, spec, NULL, -1, "out of memory");
        }
        free(s);
    }
    return 0;
}

int onp_tfile_read_view(const char *spec, onp_tensor *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    if (onp_tformat_from_path(spec) != ONP_TF_PB || strstr(spec, ".npz:"))
        return onp_tfile_read(spec, NULL, out, e);
    onp_map *m;
    if (onp_map_open(spec, &m, e)) return -1;
    int rc = onp_pb_tensor_decode_borrow(m->p, m->n, spec, 0, m->mapped ? m : NULL, map_ref,
                                         onp_map_unref_view, out, e);
    onp_map_unref(m);
    if (rc) return onp_error_set_file(e, spec);
    return 0;
}

int onp_tfile_write(const char *path, const onp_tensor *t, const onp_twrite_opts *o, onp_error *e)
{
    onp_buf b;
    onp_buf_init(&b, 0);
    int rc;
    switch (onp_tformat_from_path(path)) {
    case ONP_TF_PB: rc = onp_pb_tensor_encode(t, o, &b, e); break;
    case ONP_TF_NPY: rc = onp_npy_encode(t, o, &b, e); break;
    case ONP_TF_NPZ: {
        onp_tensor named = *t;
        char *s = NULL;
        if (!t->name) named.name = s = stem(path);
        const onp_tensor *one = &named;
        rc = onp_npz_encode(&one, 1, o, &b, e);
        free(s);
        break;
    }
    default:
        rc = onp_error_set(e, ONP_ERR_USAGE, path, NULL, -1,
                           "unknown tensor file type (expected .pb, .npy or .npz)");
    }
    if (!rc) {
        onp_piece piece = {b.p, b.n};
        rc = onp_write_atomic(path, &piece, 1, e);
    } else {
        onp_error_set_file(e, path);
    }
    onp_buf_free(&b);
    return rc;
}
