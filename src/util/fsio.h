/*
 * fsio.h — files: read-only memory maps with a reference count, and atomic
 * writes (temporary file in the same folder + fsync + rename, removed on any
 * failure, so a failed write never leaves a partial file).  Internal.
 */
#ifndef ONP_UTIL_FSIO_H
#define ONP_UTIL_FSIO_H

#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#include "onnxparity/error.h"

typedef struct onp_map {
    const uint8_t *p; /* [n] mapped bytes (or a 1-byte dummy for empty files) */
    size_t n;
    int refs;   /* onp_map_unref frees at 0 */
    int mapped; /* 1 = mmap, 0 = malloc */
    dev_t dev;  /* the file mapped (fstat at mapping): onp_map_reopen checks it */
    ino_t ino;
    char path[]; /* as given to onp_map_open / onp_map_fd */
} onp_map;

/* Map `path` read-only.  Refuses folders and non-regular files.  The map
 * starts with one reference. */
int onp_map_open(const char *path, onp_map **out, onp_error *e);
/* Map an already-open descriptor (not closed by this call). */
int onp_map_fd(int fd, const char *path, onp_map **out, onp_error *e);
/* A new read-only descriptor of the file m maps, opened again by its path
 * and checked to be that same file (device, inode, at least m->n bytes):
 * for handing the mapped bytes to another process (ort_worker.c) without
 * copying them.  -1 when m is not a file mapping or the path now names
 * another file. */
int onp_map_reopen(const onp_map *m);
void onp_map_ref(onp_map *m);
void onp_map_unref(onp_map *m); /* accepts NULL */
/* free_fn-compatible wrapper for onp_tensor.owner. */
void onp_map_unref_void(void *m);
/* The same, for a tensor that views a map's bytes whatever their alignment
 * (onp_tfile_read_view): the free_fn marks a tensor whose data may not be
 * aligned for its element, to be read bytewise only. */
void onp_map_unref_view(void *m);

/* One piece of an atomic write. */
typedef struct onp_piece {
    const void *p;
    size_t n;
} onp_piece;

/* Write the pieces, in order, to `path` under the output-path rule
 * (include/onnxparity/outpath.h): refused when it would replace a file read,
 * in place for a character device or FIFO, else temporary + fsync + rename. */
int onp_write_atomic(const char *path, const onp_piece *pieces, size_t n, onp_error *e);

/* The whole of the regular file `path` into b (initialised here, with at
 * most `cap` bytes; the caller frees it, also on failure), noted as read
 * (outpath.h: no output of the process may replace it).  A FIFO never
 * blocks the open.  0, or -1 with e naming the file: ONP_ERR_IO "cannot
 * open: REASON", "is a folder, not a file", "is not a regular file", or
 * "cannot read`what`" (what: "" or " the criteria file") when reading
 * fails or the file passes cap. */
struct onp_buf;
int onp_read_regular(const char *path, size_t cap, const char *what, struct onp_buf *b,
                     onp_error *e);

/* 1 if path is a directory. */
int onp_is_dir(const char *path);

#endif
