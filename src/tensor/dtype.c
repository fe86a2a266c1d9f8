/*
 * dtype.c — the table of element types (include/onnxparity/dtype.h).
 *
 * How to add a dtype: add its ONNX number to onp_dtype in dtype.h (keeping
 * ONP_DTYPE_COUNT last), then one row here; the static_assert keeps the two
 * in step.  Readers and writers take sizes and names from this table only.
 */
#include <string.h>
#include <strings.h>

#include "onnxparity/dtype.h"

static const onp_dtype_desc table[ONP_DTYPE_COUNT] = {
    [ONP_UNDEFINED] = {NULL, "UNDEFINED", NULL, 0, ONP_KIND_NONE},
    [ONP_FLOAT] = {"float32", "FLOAT", "<f4", 4, ONP_KIND_FLOAT},
    [ONP_UINT8] = {"uint8", "UINT8", "|u1", 1, ONP_KIND_UINT},
    [ONP_INT8] = {"int8", "INT8", "|i1", 1, ONP_KIND_SINT},
    [ONP_UINT16] = {"uint16", "UINT16", "<u2", 2, ONP_KIND_UINT},
    [ONP_INT16] = {"int16", "INT16", "<i2", 2, ONP_KIND_SINT},
    [ONP_INT32] = {"int32", "INT32", "<i4", 4, ONP_KIND_SINT},
    [ONP_INT64] = {"int64", "INT64", "<i8", 8, ONP_KIND_SINT},
    [ONP_STRING] = {"string", "STRING", NULL, 0, ONP_KIND_STRING},
    [ONP_BOOL] = {"bool", "BOOL", "|b1", 1, ONP_KIND_BOOL},
    [ONP_FLOAT16] = {"float16", "FLOAT16", "<f2", 2, ONP_KIND_FLOAT},
    [ONP_DOUBLE] = {"float64", "DOUBLE", "<f8", 8, ONP_KIND_FLOAT},
    [ONP_UINT32] = {"uint32", "UINT32", "<u4", 4, ONP_KIND_UINT},
    [ONP_UINT64] = {"uint64", "UINT64", "<u8", 8, ONP_KIND_UINT},
    [ONP_COMPLEX64] = {"complex64", "COMPLEX64", "<c8", 8, ONP_KIND_COMPLEX},
    [ONP_COMPLEX128] = {"complex128", "COMPLEX128", "<c16", 16, ONP_KIND_COMPLEX},
    /* numpy has no bfloat16; .npy files carry it as raw 2-byte words ("<V2"
     * is not portable), so npy refuses it unless stored as uint16 by the
     * caller.  See docs/formats.md. */
    [ONP_BFLOAT16] = {"bfloat16", "BFLOAT16", NULL, 2, ONP_KIND_FLOAT},
    /* numpy has none of the float8 types either (names as torch and
     * ml_dtypes spell them): .pb only */
    [ONP_FLOAT8E4M3FN] = {"float8_e4m3fn", "FLOAT8E4M3FN", NULL, 1, ONP_KIND_FLOAT},
    [ONP_FLOAT8E4M3FNUZ] = {"float8_e4m3fnuz", "FLOAT8E4M3FNUZ", NULL, 1, ONP_KIND_FLOAT},
    [ONP_FLOAT8E5M2] = {"float8_e5m2", "FLOAT8E5M2", NULL, 1, ONP_KIND_FLOAT},
    [ONP_FLOAT8E5M2FNUZ] = {"float8_e5m2fnuz", "FLOAT8E5M2FNUZ", NULL, 1, ONP_KIND_FLOAT},
};
_Static_assert(sizeof table / sizeof table[0] == ONP_DTYPE_COUNT,
               "dtype table must have one row per onp_dtype");

const onp_dtype_desc *onp_dtype_info(int32_t dt)
{
    if (dt <= ONP_UNDEFINED || dt >= ONP_DTYPE_COUNT) return NULL;
    return &table[dt];
}

size_t onp_dtype_size(int32_t dt)
{
    const onp_dtype_desc *d = onp_dtype_info(dt);
    return d ? d->size : 0;
}

const char *onp_dtype_name(int32_t dt)
{
    const onp_dtype_desc *d = onp_dtype_info(dt);
    return d ? d->name : "?";
}

int32_t onp_dtype_parse(const char *name)
{
    static const struct {
        const char *alias;
        int32_t dt;
    } aliases[] = {{"f4", ONP_FLOAT},      {"float", ONP_FLOAT}, {"f8", ONP_DOUBLE},
                   {"double", ONP_DOUBLE}, {"f2", ONP_FLOAT16},  {"half", ONP_FLOAT16},
                   {"bf16", ONP_BFLOAT16}, {"str", ONP_STRING}};
    if (!name) return ONP_UNDEFINED;
    for (int dt = 1; dt < ONP_DTYPE_COUNT; dt++) {
        if (table[dt].name && !strcmp(name, table[dt].name)) return dt;
        if (!strcasecmp(name, table[dt].onnx)) return dt;
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].alias)) return aliases[i].dt;
    return ONP_UNDEFINED;
}
