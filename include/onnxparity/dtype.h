/*
 * dtype.h — element types, numbered as ONNX TensorProto.DataType.
 *
 * The numbering is the ONNX one so a dtype read from a model needs no
 * translation.  onp_dtype_info() is the single table of sizes and names; every
 * other module asks it instead of switching on the enum.
 */
#ifndef ONNXPARITY_DTYPE_H
#define ONNXPARITY_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum onp_dtype {
    ONP_UNDEFINED = 0,
    ONP_FLOAT = 1,
    ONP_UINT8 = 2,
    ONP_INT8 = 3,
    ONP_UINT16 = 4,
    ONP_INT16 = 5,
    ONP_INT32 = 6,
    ONP_INT64 = 7,
    ONP_STRING = 8,
    ONP_BOOL = 9,
    ONP_FLOAT16 = 10,
    ONP_DOUBLE = 11,
    ONP_UINT32 = 12,
    ONP_UINT64 = 13,
    ONP_COMPLEX64 = 14,
    ONP_COMPLEX128 = 15,
    ONP_BFLOAT16 = 16,
    /* 8-bit floats (ONNX 1.14+, opset 19): sign, exponent, mantissa; "fn"
     * has no infinities, "uz" no negative zero (0x80 is the one NaN).
     * Decoded by include/onnxparity/float8.h. */
    ONP_FLOAT8E4M3FN = 17,
    ONP_FLOAT8E4M3FNUZ = 18,
    ONP_FLOAT8E5M2 = 19,
    ONP_FLOAT8E5M2FNUZ = 20,
    ONP_DTYPE_COUNT /* one past the last supported value */
} onp_dtype;

/* What kind of number an element is; decides how it is compared. */
typedef enum onp_dkind {
    ONP_KIND_NONE = 0, /* undefined / unsupported */
    ONP_KIND_FLOAT,    /* float8 (four), float16, bfloat16, float32, float64 */
    ONP_KIND_SINT,     /* int8..int64 */
    ONP_KIND_UINT,     /* uint8..uint64 */
    ONP_KIND_BOOL,
    ONP_KIND_COMPLEX, /* complex64/128: pairs of float32/float64 */
    ONP_KIND_STRING
} onp_dkind;

typedef struct onp_dtype_desc {
    const char *name; /* "float32", "int64", ... (numpy's spelling) */
    const char *onnx; /* "FLOAT", "INT64", ... (ONNX's spelling) */
    const char *npy;  /* little-endian numpy descr ("<f4", "|b1"); NULL for string */
    size_t size;      /* bytes per element; 0 for string */
    onp_dkind kind;
} onp_dtype_desc;

/* The description of `dt`, or NULL when dt is not a supported dtype. */
const onp_dtype_desc *onp_dtype_info(int32_t dt);

/* Bytes per element (0 for strings and unsupported types). */
size_t onp_dtype_size(int32_t dt);

/* "float32" etc.; "dtype(N)" style names are not produced: unknown -> "?". */
const char *onp_dtype_name(int32_t dt);

/* Parse a numpy-style or ONNX-style name ("float32", "FLOAT", "f4"); returns
 * ONP_UNDEFINED when unknown. */
int32_t onp_dtype_parse(const char *name);

#endif
