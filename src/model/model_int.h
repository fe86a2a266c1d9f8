/*
 * model_int.h — the onp_model handle, shared by the files of src/model/
 * (model.c decodes, extdata.c resolves external data, edit.c writes edited
 * models).  Internal.
 */
#ifndef ONP_MODEL_INT_H
#define ONP_MODEL_INT_H

#include "onnxparity/model.h"
#include "pb/wire.h"
#include "util/arena.h"
#include "util/fsio.h"

/* One external data file, mapped once and shared by its tensors. */
typedef struct onp_ext_file {
    char *location; /* as written in the model */
    onp_map *map;
} onp_ext_file;

struct onp_model {
    onp_arena arena;    /* every table of the view */
    onp_map *map;       /* the model file, or NULL when parsed from memory */
    const uint8_t *buf; /* [n] the serialized ModelProto */
    size_t n;
    char *path; /* or NULL */
    char *dir;  /* folder of path: the base of external data */
    onp_model_info info;
    onp_graph *graph;
    const uint8_t *graph_field_start; /* ModelProto.graph field: tag ... end */
    const uint8_t *graph_field_stop;
    int has_external;
    onp_ext_file *ext; /* [n_ext] mapped external files */
    size_t n_ext, cap_ext;
};

/* Unmap every external file (model close). */
void onp_model_ext_release(onp_model *m);

#endif
