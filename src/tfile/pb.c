/*
 * pb.c — ONNX TensorProto files (.pb): decode through the shared
 * TensorProto codec (src/model/tensorproto.c), encode with raw_data or the
 * typed fields.
 */
#include <stdint.h>
#include <string.h>

#include "model/tensorproto.h"
#include "onnxparity/tfile.h"
#include "tfile/npy_int.h"
#include "util/fsio.h"

/* Whether the parsed tensor v can be viewed in place (issue 34: read by
 * mapping, not copying): its values are raw_data (not typed fields, not
 * external), of a fixed-size numeric type other than bool (bool bytes are
 * normalised to 0/1 on reading, so they need a copy), of exactly the
 * shape's size, and starting at an address aligned for the element (the
 * map is page-aligned, so this is raw_data's offset in the file; a writer
 * that does not align it gets a copy, as before). */
static int borrowable(const onp_tensor_view *v, int any_align)
{
    if (v->is_external || !v->has_raw || v->data_type == ONP_STRING || v->data_type == ONP_BOOL)
        return 0;
    const onp_dtype_desc *d = onp_dtype_info(v->data_type);
    size_t es = onp_dtype_size(v->data_type);
    if (!d || !es ||
        (d->kind != ONP_KIND_FLOAT && d->kind != ONP_KIND_SINT && d->kind != ONP_KIND_UINT &&
         d->kind != ONP_KIND_COMPLEX))
        return 0;
    size_t align = es > 8 ? 8 : es;
    return v->rank <= ONP_MAX_RANK && (any_align || (uintptr_t)v->raw_data.p % align == 0);
}

int onp_pb_tensor_decode_borrow(const uint8_t *buf, size_t n, const char *file, int64_t base_off,
                                void *borrow_owner, void (*borrow_ref)(void *),
                                void (*borrow_unref)(void *), onp_tensor *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    onp_arena a = {0};
    onp_pb_cursor c;
    onp_tensor_view v;
    onp_pb_cursor_init(&c, buf, n, buf, file);
    int rc = onp_tp_parse(&c, &a, &v, e);
    if (!rc && v.is_external)
        rc = onp_error_set(
            e, ONP_ERR_INPUT, file, "TensorProto.data_location", 0,
            "tensor '%s' keeps its data in an external file; a .pb fixture must hold its values",
            v.name);
    if (!rc && borrow_owner && borrowable(&v, borrow_unref == onp_map_unref_view)) {
        out->dtype = v.data_type;
        out->rank = (int)v.rank;
        memcpy(out->dims, v.dims, v.rank * sizeof *v.dims);
        if (onp_shape_count(out->rank, out->dims, onp_dtype_size(v.data_type), &out->count,
                            &out->nbytes, NULL) ||
            out->nbytes != v.raw_data.n) {
            memset(out, 0, sizeof *out); /* not a plain array of elements: decoded */
        } else {
            out->data = out->nbytes ? (void *)v.raw_data.p : NULL;
            borrow_ref(borrow_owner);
            out->owner = borrow_owner;
            out->free_fn = borrow_unref;
            if (v.name && v.name[0] && onp_tensor_set_name(out, v.name, e)) {
                onp_tensor_release(out);
                rc = -1;
            }
        }
    }
    if (!rc && !out->owner) rc = onp_tp_materialize(&v, NULL, buf, file, out, e);
    onp_arena_free(&a);
    if (rc) {
        if (e && e->offset >= 0) e->offset += base_off;
        onp_error_set_file(e, file);
    }
    return rc;
}

int onp_pb_tensor_decode(const uint8_t *buf, size_t n, const char *file, int64_t base_off,
                         onp_tensor *out, onp_error *e)
{
    return onp_pb_tensor_decode_borrow(buf, n, file, base_off, NULL, NULL, NULL, out, e);
}

/* Typed encoding: the field and wire width each dtype uses. */
static int put_typed(const onp_tensor *t, onp_buf *b)
{
    size_t n = (size_t)t->count;
    const uint8_t *d = t->data;
    switch (t->dtype) {
    case ONP_FLOAT:
    case ONP_COMPLEX64:
        return onp_pb_put_len(b, ONP_TP_FLOAT_DATA, d, t->nbytes); /* fixed32 LE == host */
    case ONP_DOUBLE:
    case ONP_COMPLEX128: return onp_pb_put_len(b, ONP_TP_DOUBLE_DATA, d, t->nbytes);
    default: break;
    }
    /* varint fields: size first, then values */
    int field;
    switch (t->dtype) {
    case ONP_INT64: field = ONP_TP_INT64_DATA; break;
    case ONP_UINT32:
    case ONP_UINT64: field = ONP_TP_UINT64_DATA; break;
    default: field = ONP_TP_INT32_DATA; break;
    }
    size_t es = onp_dtype_size(t->dtype), len = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && onp_pb_put_header(b, (uint32_t)field, len)) return -1;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = 0;
            const uint8_t *p = d + i * es;
            switch (t->dtype) {
            case ONP_INT8: v = (uint64_t)(int64_t)(int8_t)p[0]; break;
            case ONP_UINT8:
            case ONP_BOOL:
            case ONP_FLOAT8E4M3FN:
            case ONP_FLOAT8E4M3FNUZ:
            case ONP_FLOAT8E5M2:
            case ONP_FLOAT8E5M2FNUZ: v = p[0]; break;
            case ONP_INT16: {
                int16_t x;
                memcpy(&x, p, 2);
                v = (uint64_t)(int64_t)x;
                break;
            }
            case ONP_UINT16:
            case ONP_FLOAT16:
            case ONP_BFLOAT16: {
                uint16_t x;
                memcpy(&x, p, 2);
                v = x;
                break;
            }
            case ONP_INT32: {
                int32_t x;
                memcpy(&x, p, 4);
                v = (uint64_t)(int64_t)x;
                break;
            }
            case ONP_UINT32: {
                uint32_t x;
                memcpy(&x, p, 4);
                v = x;
                break;
            }
            default: memcpy(&v, p, 8); break; /* INT64, UINT64 */
            }
            if (pass == 0)
                len += onp_pb_varint_size(v);
            else if (onp_pb_put_varint(b, v))
                return -1;
        }
    }
    return 0;
}

int onp_pb_tensor_encode(const onp_tensor *t, const onp_twrite_opts *o, onp_buf *out, onp_error *e)
{
    for (int i = 0; i < t->rank; i++) onp_pb_put_uint(out, ONP_TP_DIMS, (uint64_t)t->dims[i]);
    onp_pb_put_uint(out, ONP_TP_DATA_TYPE, (uint64_t)t->dtype);
    if (t->name) onp_pb_put_len(out, ONP_TP_NAME, t->name, strlen(t->name));
    if (t->dtype == ONP_STRING) {
        for (int64_t i = 0; i < t->count; i++)
            onp_pb_put_len(out, ONP_TP_STRING_DATA, t->strings[i].p, t->strings[i].n);
    } else if (o && o->pb_typed) {
        if (t->count) put_typed(t, out);
    } else {
        onp_pb_put_len(out, ONP_TP_RAW_DATA, t->data, t->nbytes);
    }
    if (out->failed)
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory encoding a tensor");
    return 0;
}
