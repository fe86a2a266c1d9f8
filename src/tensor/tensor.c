/*
 * tensor.c — allocation, copying and inspection of onp_tensor
 * (include/onnxparity/tensor.h).  Depends on dtype and util only.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/float8.h"
#include "onnxparity/half.h"
#include "onnxparity/tensor.h"
#include "tensor/adopt.h"

int onp_shape_count(int rank, const int64_t *dims, size_t elem_size, int64_t *count, size_t *nbytes,
                    onp_error *e)
{
    if (rank < 0 || rank > ONP_MAX_RANK)
        return onp_error_set(e, ONP_ERR_FORMAT, NULL, "dims", -1, "rank %d is outside 0..%d", rank,
                             ONP_MAX_RANK);
    uint64_t c = 1;
    int zero = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return onp_error_set(e, ONP_ERR_FORMAT, NULL, "dims", -1,
                                 "dimension %d is negative (%" PRId64 ")", i, dims[i]);
        if (dims[i] == 0) zero = 1;
    }
    if (!zero) {
        for (int i = 0; i < rank; i++) {
            uint64_t d = (uint64_t)dims[i];
            if (d && c > (uint64_t)INT64_MAX / d)
                return onp_error_set(e, ONP_ERR_FORMAT, NULL, "dims", -1,
                                     "the product of dims overflows 64 bits");
            c *= d;
        }
    } else {
        c = 0;
    }
    if (elem_size && c > SIZE_MAX / elem_size)
        return onp_error_set(e, ONP_ERR_FORMAT, NULL, "dims", -1,
                             "%" PRIu64 " elements of %zu bytes do not fit in memory", c,
                             elem_size);
    if (count) *count = (int64_t)c;
    if (nbytes) *nbytes = (size_t)c * elem_size;
    return 0;
}

static int set_shape(onp_tensor *t, int32_t dtype, int rank, const int64_t *dims, onp_error *e)
{
    memset(t, 0, sizeof *t);
    const onp_dtype_desc *d = onp_dtype_info(dtype);
    if (!d)
        return onp_error_set(e, ONP_ERR_FORMAT, NULL, "data_type", -1, "unsupported data type %d",
                             (int)dtype);
    if (onp_shape_count(rank, dims, d->size, &t->count, &t->nbytes, e)) return -1;
    t->dtype = dtype;
    t->rank = rank;
    if (rank) memcpy(t->dims, dims, (size_t)rank * sizeof dims[0]);
    return 0;
}

// --- the memory cap ---------------------------------------------------------------

/* Owned tensor storage is one block: a header holding its size, then the
 * bytes.  The header lets the release subtract what the allocation added,
 * so the cap counts live bytes, process-wide, across threads. */
#define CAP_HDR 64 /* keeps the bytes as aligned as malloc's own blocks */

static atomic_size_t mem_cap;    /* 0 = no cap */
static atomic_size_t mem_in_use; /* bytes of live owned tensor storage */

void onp_tensor_set_memory_cap(size_t bytes)
{
    atomic_store(&mem_cap, bytes);
}

size_t onp_tensor_memory_cap(void)
{
    return atomic_load(&mem_cap);
}

size_t onp_tensor_memory_in_use(void)
{
    return atomic_load(&mem_in_use);
}

void onp_tensor_memory_forget(void)
{
    atomic_store(&mem_in_use, 0);
}

static void block_free(void *block)
{
    size_t n;
    memcpy(&n, block, sizeof n);
    atomic_fetch_sub(&mem_in_use, n);
    free(block);
}

/* Count n more bytes in use: 0, or -1 with e set (ONP_ERR_INPUT) when that
 * would pass the cap, nothing counted. */
static int reserve(size_t n, onp_error *e)
{
    size_t cap = atomic_load(&mem_cap);
    size_t used = atomic_load(&mem_in_use);
    for (;;) { /* reserve n, or refuse without ever counting it */
        if (cap && (n > cap || used > cap - n)) {
            onp_error_set(e, ONP_ERR_INPUT, NULL, NULL, -1,
                          "a tensor of %zu bytes would exceed the memory cap of %zu bytes (%zu "
                          "in use; see --max-memory)",
                          n, cap, used);
            return -1;
        }
        if (atomic_compare_exchange_weak(&mem_in_use, &used, used + n)) return 0;
    }
}

/* A zeroed block with room for n bytes after the header, or NULL with e set
 * (ONP_ERR_INPUT over the cap, ONP_ERR_NOMEM when malloc fails).  *bytes
 * points past the header; release with block_free. */
static void *block_alloc(size_t n, uint8_t **bytes, onp_error *e)
{
    if (reserve(n, e)) return NULL;
    uint8_t *block = n <= SIZE_MAX - CAP_HDR ? calloc(1, CAP_HDR + n) : NULL;
    if (!block) {
        atomic_fetch_sub(&mem_in_use, n);
        onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory for %zu bytes", n);
        return NULL;
    }
    memcpy(block, &n, sizeof n);
    *bytes = block + CAP_HDR;
    return block;
}

/* Storage adopted by onp_tensor_adopt: its size (counted) and its release. */
typedef struct adopted {
    size_t n;
    void (*free_fn)(void *);
    void *owner;
} adopted;

static void adopted_free(void *p)
{
    adopted *a = p;
    atomic_fetch_sub(&mem_in_use, a->n);
    if (a->free_fn) a->free_fn(a->owner);
    free(a);
}

// --- allocation ---------------------------------------------------------------------

int onp_tensor_adopt(onp_tensor *t, int32_t dtype, int rank, const int64_t *dims, void *data,
                     size_t nbytes, void (*free_fn)(void *), void *owner, onp_error *e)
{
    if (dtype == ONP_STRING) {
        memset(t, 0, sizeof *t);
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "string tensors cannot be adopted");
    }
    if (set_shape(t, dtype, rank, dims, e)) return -1;
    if (t->nbytes != nbytes) {
        memset(t, 0, sizeof *t);
        return onp_error_set(e, ONP_ERR_FORMAT, NULL, NULL, -1,
                             "%zu bytes for a shape of %zu bytes", nbytes, t->nbytes);
    }
    adopted *a = malloc(sizeof *a);
    if (!a || reserve(nbytes, e)) {
        if (!a) onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        free(a);
        memset(t, 0, sizeof *t);
        return -1;
    }
    a->n = nbytes;
    a->free_fn = free_fn;
    a->owner = owner;
    t->data = data;
    t->owner = a;
    t->free_fn = adopted_free;
    return 0;
}

int onp_tensor_alloc(onp_tensor *t, int32_t dtype, int rank, const int64_t *dims, onp_error *e)
{
    if (dtype == ONP_STRING) {
        memset(t, 0, sizeof *t);
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "string tensors need onp_tensor_alloc_strings");
    }
    if (set_shape(t, dtype, rank, dims, e)) return -1;
    uint8_t *bytes;
    void *block = block_alloc(t->nbytes, &bytes, e);
    if (!block) {
        memset(t, 0, sizeof *t);
        return -1;
    }
    t->data = bytes;
    t->owner = block;
    t->free_fn = block_free;
    return 0;
}

int onp_tensor_alloc_strings(onp_tensor *t, int rank, const int64_t *dims, const size_t *lens,
                             onp_error *e)
{
    if (set_shape(t, ONP_STRING, rank, dims, e)) return -1;
    size_t n = (size_t)t->count, total = 0;
    if (n > SIZE_MAX / sizeof(onp_bytes)) goto nomem;
    total = n * sizeof(onp_bytes);
    for (size_t i = 0; i < n; i++) {
        if (lens[i] > SIZE_MAX - total) goto nomem;
        total += lens[i];
    }
    uint8_t *base;
    void *block = block_alloc(total, &base, e);
    if (!block) {
        memset(t, 0, sizeof *t);
        return -1;
    }
    onp_bytes *s = (onp_bytes *)(void *)base;
    uint8_t *bytes = base + n * sizeof(onp_bytes);
    for (size_t i = 0; i < n; i++) {
        s[i].p = bytes;
        s[i].n = lens[i];
        bytes += lens[i];
    }
    t->strings = s;
    t->owner = block;
    t->free_fn = block_free;
    return 0;
nomem:
    memset(t, 0, sizeof *t);
    return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory for a string tensor");
}

uint8_t *onp_tensor_string_at(onp_tensor *t, int64_t i)
{
    return (uint8_t *)t->strings[i].p;
}

int onp_tensor_set_name(onp_tensor *t, const char *name, onp_error *e)
{
    char *c = NULL;
    if (name) {
        c = strdup(name);
        if (!c) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    }
    free(t->name);
    t->name = c;
    return 0;
}

void onp_tensor_release(onp_tensor *t)
{
    if (!t) return;
    if (t->free_fn) t->free_fn(t->owner);
    free(t->name);
    memset(t, 0, sizeof *t);
}

int onp_tensor_copy(onp_tensor *dst, const onp_tensor *src, onp_error *e)
{
    if (src->dtype == ONP_STRING) {
        size_t n = (size_t)src->count;
        size_t *lens = calloc(n ? n : 1, sizeof *lens);
        if (!lens) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        for (size_t i = 0; i < n; i++) lens[i] = src->strings[i].n;
        int rc = onp_tensor_alloc_strings(dst, src->rank, src->dims, lens, e);
        free(lens);
        if (rc) return -1;
        for (size_t i = 0; i < n; i++)
            if (src->strings[i].n)
                memcpy(onp_tensor_string_at(dst, (int64_t)i), src->strings[i].p, src->strings[i].n);
    } else {
        if (onp_tensor_alloc(dst, src->dtype, src->rank, src->dims, e)) return -1;
        if (src->nbytes) memcpy(dst->data, src->data, src->nbytes);
    }
    if (src->name && onp_tensor_set_name(dst, src->name, e)) {
        onp_tensor_release(dst);
        return -1;
    }
    return 0;
}

int onp_tensor_equal(const onp_tensor *a, const onp_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->count != b->count) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    if (a->dtype == ONP_STRING) {
        for (int64_t i = 0; i < a->count; i++) {
            if (a->strings[i].n != b->strings[i].n) return 0;
            if (a->strings[i].n && memcmp(a->strings[i].p, b->strings[i].p, a->strings[i].n))
                return 0;
        }
        return 1;
    }
    return a->nbytes == b->nbytes && (!a->nbytes || !memcmp(a->data, b->data, a->nbytes));
}

double onp_tensor_get_f64(const onp_tensor *t, int64_t i)
{
    const uint8_t *p = (const uint8_t *)t->data + (size_t)i * onp_dtype_size(t->dtype);
    union {
        float f;
        double d;
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
    } v;
    memcpy(&v, p, onp_dtype_size(t->dtype) > 8 ? 8 : onp_dtype_size(t->dtype));
    switch (t->dtype) {
    case ONP_FLOAT: return v.f;
    case ONP_DOUBLE: return v.d;
    case ONP_FLOAT16: return onp_f16_to_f64(v.u16);
    case ONP_BFLOAT16: return onp_bf16_to_f64(v.u16);
    case ONP_INT8: return v.i8;
    case ONP_UINT8: return v.u8;
    case ONP_BOOL: return v.u8 != 0;
    case ONP_INT16: return v.i16;
    case ONP_UINT16: return v.u16;
    case ONP_INT32: return v.i32;
    case ONP_UINT32: return v.u32;
    case ONP_INT64: return (double)v.i64;
    case ONP_UINT64: return (double)v.u64;
    case ONP_COMPLEX64: return v.f;
    case ONP_COMPLEX128: return v.d;
    case ONP_FLOAT8E4M3FN:
    case ONP_FLOAT8E4M3FNUZ:
    case ONP_FLOAT8E5M2:
    case ONP_FLOAT8E5M2FNUZ: return onp_f8_to_f64(t->dtype, v.u8);
    default: return 0.0;
    }
}

char *onp_shape_str(int rank, const int64_t *dims, char *buf, size_t n)
{
    size_t k = 0;
    if (!n) return buf;
    buf[0] = '\0';
    k += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? ", " : "", dims[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}
