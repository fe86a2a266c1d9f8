/*
 * adopt.h — storage made elsewhere, held by a tensor and counted against
 * the memory cap as onp_tensor_alloc's own is.  Internal: for ONNX
 * Runtime's outputs (src/ort/ort_run.c), which a tensor views in ORT's own
 * buffer instead of copying them into a fresh allocation.
 */
#ifndef ONP_TENSOR_ADOPT_H
#define ONP_TENSOR_ADOPT_H

#include "onnxparity/tensor.h"

/* Make *t a tensor of the given shape over data[nbytes], which free_fn(owner)
 * releases when the tensor is released.  The bytes count against the cap
 * while the tensor lives.  0, or -1 with e set and the storage still the
 * caller's: ONP_ERR_INPUT over the cap, ONP_ERR_FORMAT when nbytes is not
 * the shape's size, ONP_ERR_NOMEM; *t is then released-state. */
int onp_tensor_adopt(onp_tensor *t, int32_t dtype, int rank, const int64_t *dims, void *data,
                     size_t nbytes, void (*free_fn)(void *), void *owner, onp_error *e);

#endif
