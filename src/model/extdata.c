/*
 * extdata.c — materialise tensors of a model, resolving external data.
 *
 * Safety contract for external data: the location is relative to the
 * model's folder and must stay inside it.  Refused: empty or absolute
 * locations, any ".." component, backslashes, ONNX Runtime's in-memory
 * address marker, and symbolic links anywhere on the path (each component is
 * opened with O_NOFOLLOW, relative to the folder, so nothing can be swapped
 * in between check and use).  Offset and length are checked against the
 * file's size with overflow-safe arithmetic.  Each file is mapped once per
 * model; files larger than 2 GiB are fine.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model_int.h"
#include "model/tensorproto.h"

static int loc_err(const onp_model *m, const onp_tensor_view *v, onp_errcode code, const char *why,
                   onp_error *e)
{
    return onp_error_set(e, code, m->path, "TensorProto.external_data.location",
                         (int64_t)v->msg.off, "tensor '%s': location '%s' %s", v->name,
                         v->external.location, why);
}

/* Check the location's text; 0 when it may be opened. */
static int check_location(const onp_model *m, const onp_tensor_view *v, onp_error *e)
{
    const char *loc = v->external.location;
    if (!loc || !*loc) return loc_err(m, v, ONP_ERR_INPUT, "is empty", e);
    if (strstr(loc, "_ORT_MEM_ADDR_"))
        return loc_err(m, v, ONP_ERR_INPUT,
                       "is ONNX Runtime's in-memory address marker, not a file", e);
    if (loc[0] == '/')
        return loc_err(m, v, ONP_ERR_INPUT,
                       "is absolute; it must be relative to the model's folder", e);
    if (strchr(loc, '\\')) return loc_err(m, v, ONP_ERR_INPUT, "holds a backslash", e);
    const char *p = loc;
    while (*p) {
        const char *q = strchr(p, '/');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return loc_err(m, v, ONP_ERR_INPUT, "leaves the model's folder ('..')", e);
        p += n;
        if (*p == '/') p++;
    }
    return 0;
}

/* Open `loc` under `dir` component by component without following links. */
static int open_nofollow(const char *dir, const char *loc, int *fd_out)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    char *copy = strdup(loc);
    if (!copy) {
        close(dfd);
        errno = ENOMEM;
        return -1;
    }
    char *save = NULL;
    char *part = strtok_r(copy, "/", &save);
    int fd = -1;
    while (part) {
        char *next = strtok_r(NULL, "/", &save);
        if (!strcmp(part, ".")) {
            part = next;
            continue;
        }
        /* O_NONBLOCK: a FIFO would block the open; it is refused when mapped */
        int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (next ? O_DIRECTORY : O_NONBLOCK);
        fd = openat(dfd, part, flags);
        int saved = errno;
        struct stat st;
        /* O_NOFOLLOW | O_DIRECTORY on a link to a folder says ENOTDIR */
        if (fd < 0 && saved == ENOTDIR && !fstatat(dfd, part, &st, AT_SYMLINK_NOFOLLOW) &&
            S_ISLNK(st.st_mode))
            saved = ELOOP;
        close(dfd);
        if (fd < 0) {
            free(copy);
            errno = saved;
            return -1;
        }
        if (!next) break;
        dfd = fd;
        fd = -1;
        part = next;
    }
    free(copy);
    if (fd < 0) {
        errno = EISDIR;
        return -1;
    }
    *fd_out = fd;
    return 0;
}

static onp_map *ext_map(onp_model *m, const onp_tensor_view *v, onp_error *e)
{
    for (size_t i = 0; i < m->n_ext; i++)
        if (!strcmp(m->ext[i].location, v->external.location)) return m->ext[i].map;
    if (!m->dir) {
        onp_error_set(e, ONP_ERR_USAGE, m->path, "TensorProto.external_data", (int64_t)v->msg.off,
                      "tensor '%s' has external data but the model has no folder", v->name);
        return NULL;
    }
    if (check_location(m, v, e)) return NULL;
    int fd;
    if (open_nofollow(m->dir, v->external.location, &fd)) {
        int err = errno;
        onp_errcode code = err == ENOMEM                    ? ONP_ERR_NOMEM
                           : err == ELOOP || err == ENOTDIR ? ONP_ERR_INPUT
                                                            : ONP_ERR_IO;
        char why[160];
        if (err == ELOOP)
            snprintf(why, sizeof why, "is or passes through a symbolic link");
        else if (err == EISDIR)
            snprintf(why, sizeof why, "is a folder, not a file");
        else
            snprintf(why, sizeof why, "cannot be opened: %s", strerror(err));
        loc_err(m, v, code, why, e);
        return NULL;
    }
    onp_map *map;
    int rc = onp_map_fd(fd, v->external.location, &map, e);
    close(fd);
    if (rc) { /* name the model and the tensor, not only the data file */
        if (e) {
            char why[sizeof e->msg];
            snprintf(why, sizeof why, "%s", e->msg);
            loc_err(m, v, e->code, why, e);
        }
        return NULL;
    }
    if (m->n_ext == m->cap_ext) {
        size_t cap = m->cap_ext ? 2 * m->cap_ext : 4;
        onp_ext_file *p = realloc(m->ext, cap * sizeof *p);
        if (!p) {
            onp_map_unref(map);
            onp_error_set(e, ONP_ERR_NOMEM, m->path, NULL, -1, "out of memory");
            return NULL;
        }
        m->ext = p;
        m->cap_ext = cap;
    }
    char *loc = strdup(v->external.location);
    if (!loc) {
        onp_map_unref(map);
        onp_error_set(e, ONP_ERR_NOMEM, m->path, NULL, -1, "out of memory");
        return NULL;
    }
    m->ext[m->n_ext].location = loc;
    m->ext[m->n_ext].map = map;
    m->n_ext++;
    return map;
}

void onp_model_ext_release(onp_model *m)
{
    for (size_t i = 0; i < m->n_ext; i++) {
        free(m->ext[i].location);
        onp_map_unref(m->ext[i].map);
    }
    free(m->ext);
    m->ext = NULL;
    m->n_ext = m->cap_ext = 0;
}

int onp_model_external_span(const onp_model *cm, const onp_tensor_view *v, onp_span *out,
                            onp_error *e)
{
    onp_model *m = (onp_model *)cm;
    onp_map *map = ext_map(m, v, e);
    if (!map) return -1;
    uint64_t off = v->external.offset, need = v->bytes;
    if (off > map->n || need > map->n - off)
        return onp_error_set(e, ONP_ERR_FORMAT, m->path, "TensorProto.external_data",
                             (int64_t)v->msg.off,
                             "tensor '%s': offset %" PRIu64 " + length %" PRIu64
                             " runs past the end of '%s' (%zu bytes)",
                             v->name, off, need, v->external.location, map->n);
    out->p = map->p + off;
    out->n = (size_t)need;
    out->off = off;
    return 0;
}

int onp_model_tensor(const onp_model *m, const onp_tensor_view *v, onp_tensor *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    if (!v->is_external) return onp_tp_materialize(v, NULL, m->buf, m->path, out, e);
    onp_span s;
    if (onp_model_external_span(m, v, &s, e)) return -1;
    return onp_tp_materialize(v, &s, m->buf, m->path, out, e);
}

// --- checking every reference ----------------------------------------------------------

static int check_view(const onp_model *m, const onp_tensor_view *v, onp_error *e)
{
    onp_span s;
    return v && v->is_external ? onp_model_external_span(m, v, &s, e) : 0;
}

static int check_sparse(const onp_model *m, const onp_sparse_view *sp, onp_error *e)
{
    return sp && (check_view(m, &sp->values, e) || check_view(m, &sp->indices, e)) ? -1 : 0;
}

/* Depth is bounded by the model parser's own nesting limit. */
static int check_graph(const onp_model *m, const onp_graph *g, onp_error *e)
{
    if (!g) return 0;
    for (size_t i = 0; i < g->n_initializers; i++)
        if (check_view(m, &g->initializers[i], e)) return -1;
    for (size_t i = 0; i < g->n_sparse_initializers; i++)
        if (check_sparse(m, &g->sparse_initializers[i], e)) return -1;
    for (size_t n = 0; n < g->n_nodes; n++)
        for (size_t a = 0; a < g->nodes[n].n_attrs; a++) {
            const onp_attr *at = &g->nodes[n].attrs[a];
            if (check_view(m, at->t, e) || check_sparse(m, at->sparse, e) ||
                check_graph(m, at->g, e))
                return -1;
            for (size_t k = 0; k < at->n_tensors; k++)
                if (check_view(m, &at->tensors[k], e)) return -1;
            for (size_t k = 0; k < at->n_sparse; k++)
                if (check_sparse(m, &at->sparse_tensors[k], e)) return -1;
            for (size_t k = 0; k < at->n_graphs; k++)
                if (check_graph(m, at->graphs[k], e)) return -1;
        }
    return 0;
}

int onp_model_check_external(const onp_model *m, onp_error *e)
{
    return onp_model_has_external(m) ? check_graph(m, onp_model_graph(m), e) : 0;
}
