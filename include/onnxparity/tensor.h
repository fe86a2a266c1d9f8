/*
 * tensor.h — the one tensor type of onnxparity.
 *
 * A tensor is a dtype (ONNX numbering), a shape, and contiguous C-order data
 * in native (little-endian) byte order.  Its bytes are either owned (malloc)
 * or borrowed from a memory map that the tensor keeps alive; either way
 * onp_tensor_release() is the only call a holder needs.
 *
 * Strings: `strings` holds `count` views whose bytes live in the tensor's
 * own storage; `data` is unused for them.
 *
 * Worked example:
 *     onp_tensor t; onp_error e;
 *     int64_t dims[2] = {2, 3};
 *     if (onp_tensor_alloc(&t, ONP_FLOAT, 2, dims, &e) != 0) ...;
 *     ((float *)t.data)[0] = 1.0f;
 *     onp_tensor_release(&t);
 */
#ifndef ONNXPARITY_TENSOR_H
#define ONNXPARITY_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "onnxparity/dtype.h"
#include "onnxparity/error.h"

#define ONP_MAX_RANK 32

typedef struct onp_bytes {
    const uint8_t *p; /* [n] bytes; not NUL-terminated */
    size_t n;
} onp_bytes;

typedef struct onp_tensor {
    int32_t dtype;              /* onp_dtype */
    int rank;                   /* 0 = scalar */
    int64_t dims[ONP_MAX_RANK]; /* [rank], each >= 0 */
    int64_t count;              /* product of dims (1 for a scalar) */
    size_t nbytes;              /* count * element size; 0 for strings */
    void *data;              /* [count] elements, C order, native LE; may be NULL when count == 0 */
    onp_bytes *strings;      /* [count] views, ONP_STRING only */
    char *name;              /* owned NUL-terminated name, or NULL */
    void (*free_fn)(void *); /* releases `owner`; NULL when nothing to release */
    void *owner;             /* storage behind data/strings */
} onp_tensor;

/* The element count of a shape, refusing negative dims and products that
 * overflow (int64, and count * elem_size in size_t).  0 or -1 + error. */
int onp_shape_count(int rank, const int64_t *dims, size_t elem_size, int64_t *count, size_t *nbytes,
                    onp_error *e);

/* Allocate a zeroed tensor of the given shape (not for strings).  The tensor
 * owns its data.  0 or -1 + error; on failure *t is released-state. */
int onp_tensor_alloc(onp_tensor *t, int32_t dtype, int rank, const int64_t *dims, onp_error *e);

/* Allocate a string tensor whose `count` strings have the given lengths in
 * one block (the caller fills strings[i].p bytes via onp_tensor_string_at). */
int onp_tensor_alloc_strings(onp_tensor *t, int rank, const int64_t *dims, const size_t *lens,
                             onp_error *e);
/* The memory cap (the CLI's --max-memory): a process-wide limit on the
 * bytes of live tensor storage that onp_tensor_alloc* hands out, and so on
 * everything the readers and ONNX Runtime's outputs allocate through them.
 * Borrowed (memory-mapped) data does not count.  An allocation that would
 * exceed it fails with ONP_ERR_INPUT naming both sizes.  0 (the default)
 * means no cap.  Thread-safe. */
void onp_tensor_set_memory_cap(size_t bytes);
size_t onp_tensor_memory_cap(void);
size_t onp_tensor_memory_in_use(void); /* live bytes counted against the cap */
/* For a forked child that will never release its parent's tensors (ONNX
 * Runtime's worker process): count from zero.  Releasing a tensor made
 * before the call would then undercount. */
void onp_tensor_memory_forget(void);

/* Writable pointer to string i of a tensor made by onp_tensor_alloc_strings. */
uint8_t *onp_tensor_string_at(onp_tensor *t, int64_t i);

/* Set the tensor's name (copied).  0 or -1 on out of memory. */
int onp_tensor_set_name(onp_tensor *t, const char *name, onp_error *e);

/* Release storage and name; leaves a zeroed tensor.  Accepts a zeroed one. */
void onp_tensor_release(onp_tensor *t);

/* Deep copy (owned data). */
int onp_tensor_copy(onp_tensor *dst, const onp_tensor *src, onp_error *e);

/* 1 when dtype, shape and bytes (strings: every string) are identical. */
int onp_tensor_equal(const onp_tensor *a, const onp_tensor *b);

/* Element i as a double (float kinds, ints, bool; complex: real part). */
double onp_tensor_get_f64(const onp_tensor *t, int64_t i);

/* "[2, 3, 224]" into buf. */
char *onp_shape_str(int rank, const int64_t *dims, char *buf, size_t n);

#endif
