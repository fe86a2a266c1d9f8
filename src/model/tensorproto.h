/*
 * tensorproto.h — the ONNX TensorProto codec shared by the model view
 * (initializers, Constant attributes) and the .pb tensor files.  Internal.
 *
 * Parsing fills an onp_tensor_view without touching the tensor's bytes;
 * materialising decodes raw_data, every typed *_data field, or external
 * bytes supplied by the caller into an owned onp_tensor.
 */
#ifndef ONP_MODEL_TENSORPROTO_H
#define ONP_MODEL_TENSORPROTO_H

#include "onnxparity/model.h"
#include "pb/wire.h"
#include "util/arena.h"

/* TensorProto field numbers (onnx.proto). */
enum {
    ONP_TP_DIMS = 1,
    ONP_TP_DATA_TYPE = 2,
    ONP_TP_SEGMENT = 3,
    ONP_TP_FLOAT_DATA = 4,
    ONP_TP_INT32_DATA = 5,
    ONP_TP_STRING_DATA = 6,
    ONP_TP_INT64_DATA = 7,
    ONP_TP_NAME = 8,
    ONP_TP_RAW_DATA = 9,
    ONP_TP_DOUBLE_DATA = 10,
    ONP_TP_UINT64_DATA = 11,
    ONP_TP_DOC_STRING = 12,
    ONP_TP_EXTERNAL_DATA = 13,
    ONP_TP_DATA_LOCATION = 14,
};

/* Parse the TensorProto whose payload `c` covers.  Names and dims go to
 * `a`.  Checks: wire types, dims >= 0 and their product, data_type known,
 * raw_data size == count * element size, no segments, external_data keys. */
int onp_tp_parse(const onp_pb_cursor *c, onp_arena *a, onp_tensor_view *v, onp_error *e);

/* Decode the values of `v` into an owned tensor.  For external tensors,
 * `ext` must hold exactly the external bytes (the caller resolved and
 * checked them); otherwise pass NULL.  `base` is the start of the file
 * (offsets in errors); `file` names it. */
int onp_tp_materialize(const onp_tensor_view *v, const onp_span *ext, const uint8_t *base,
                       const char *file, onp_tensor *out, onp_error *e);

#endif
