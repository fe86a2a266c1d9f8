/*
 * tensorproto.c — ONNX TensorProto parse and materialise (tensorproto.h).
 *
 * Which typed field holds which dtype (onnx.proto):
 *   float_data   FLOAT, COMPLEX64 (two floats per element)
 *   int32_data   INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16
 *                (one int32 per element; 16-bit floats as their bit pattern)
 *   string_data  STRING
 *   int64_data   INT64
 *   double_data  DOUBLE, COMPLEX128 (two doubles per element)
 *   uint64_data  UINT32, UINT64
 * A repeated field may arrive packed, unpacked, or split over several
 * occurrences; all are accepted and concatenated.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/tensorproto.h"

static int field_err(const onp_pb_cursor *c, const uint8_t *at, const char *field, onp_errcode code,
                     const char *msg, onp_error *e)
{
    return onp_error_set(e, code, c->file, field, onp_pb_off(c, at), "%s", msg);
}

/* The typed field that carries dtype `dt`, and elements per tensor element. */
static int typed_field_for(int32_t dt, int *per)
{
    *per = 1;
    switch (dt) {
    case ONP_COMPLEX64: *per = 2; return ONP_TP_FLOAT_DATA;
    case ONP_FLOAT: return ONP_TP_FLOAT_DATA;
    case ONP_INT32:
    case ONP_INT16:
    case ONP_INT8:
    case ONP_UINT16:
    case ONP_UINT8:
    case ONP_BOOL:
    case ONP_FLOAT16:
    case ONP_BFLOAT16:
    case ONP_FLOAT8E4M3FN: /* float8: one code per int32 (onnx.proto) */
    case ONP_FLOAT8E4M3FNUZ:
    case ONP_FLOAT8E5M2:
    case ONP_FLOAT8E5M2FNUZ: return ONP_TP_INT32_DATA;
    case ONP_STRING: return ONP_TP_STRING_DATA;
    case ONP_INT64: return ONP_TP_INT64_DATA;
    case ONP_COMPLEX128: *per = 2; return ONP_TP_DOUBLE_DATA;
    case ONP_DOUBLE: return ONP_TP_DOUBLE_DATA;
    case ONP_UINT32:
    case ONP_UINT64: return ONP_TP_UINT64_DATA;
    default: return 0;
    }
}

static const char *typed_name(int num)
{
    switch (num) {
    case ONP_TP_FLOAT_DATA: return "TensorProto.float_data";
    case ONP_TP_INT32_DATA: return "TensorProto.int32_data";
    case ONP_TP_STRING_DATA: return "TensorProto.string_data";
    case ONP_TP_INT64_DATA: return "TensorProto.int64_data";
    case ONP_TP_DOUBLE_DATA: return "TensorProto.double_data";
    case ONP_TP_UINT64_DATA: return "TensorProto.uint64_data";
    default: return "TensorProto";
    }
}

static uint32_t typed_wire(int num)
{
    switch (num) {
    case ONP_TP_FLOAT_DATA: return ONP_WT_I32;
    case ONP_TP_DOUBLE_DATA: return ONP_WT_I64;
    default: return ONP_WT_VARINT;
    }
}

/* One external_data entry.  `seen` collects the keys met so far (bits
 * 1 location, 2 offset, 4 length): a key given twice is refused, since
 * readers that keep the first and the last would open different bytes. */
static int parse_external_entry(const onp_pb_cursor *c, const onp_pb_field *f, onp_arena *a,
                                onp_tensor_view *v, unsigned *seen, onp_error *e)
{
    onp_pb_cursor sc;
    onp_pb_field g;
    onp_pb_sub(c, f, &sc);
    const uint8_t *key = NULL, *val = NULL;
    size_t klen = 0, vlen = 0;
    int r;
    while ((r = onp_pb_next(&sc, &g, e)) == 1) {
        if (g.num == 1 || g.num == 2) {
            if (onp_pb_expect(&sc, &g, ONP_WT_LEN, "TensorProto.external_data", e)) return -1;
            if (g.num == 1)
                key = g.data, klen = g.len;
            else
                val = g.data, vlen = g.len;
        }
    }
    if (r < 0) return -1;
    if (!key)
        return field_err(c, f->start, "TensorProto.external_data", ONP_ERR_FORMAT,
                         "entry without a key", e);
    char *vs = onp_arena_strndup(a, val ? val : (const uint8_t *)"", vlen);
    if (!vs) return onp_error_set(e, ONP_ERR_NOMEM, c->file, NULL, -1, "out of memory");
    if (memchr(vs, '\0', vlen))
        return field_err(c, f->start, "TensorProto.external_data", ONP_ERR_FORMAT,
                         "value holds a NUL byte", e);
#define KEY_IS(s) (klen == sizeof(s) - 1 && !memcmp(key, s, klen))
    unsigned bit = KEY_IS("location") ? 1u : KEY_IS("offset") ? 2u : KEY_IS("length") ? 4u : 0u;
    if (*seen & bit)
        return field_err(c, f->start, "TensorProto.external_data", ONP_ERR_INPUT,
                         bit == 1   ? "key 'location' given twice"
                         : bit == 2 ? "key 'offset' given twice"
                                    : "key 'length' given twice",
                         e);
    *seen |= bit;
    if (KEY_IS("location")) {
        v->external.location = vs;
    } else if (KEY_IS("offset") || KEY_IS("length")) {
        char *end = NULL;
        if (!vlen || vs[0] < '0' || vs[0] > '9') /* strtoull would skip spaces and signs */
            return field_err(c, f->start, "TensorProto.external_data", ONP_ERR_FORMAT,
                             "offset/length is not a non-negative integer", e);
        unsigned long long x = strtoull(vs, &end, 10);
        if (*end || x > (unsigned long long)INT64_MAX)
            return field_err(c, f->start, "TensorProto.external_data", ONP_ERR_FORMAT,
                             "offset/length is not a non-negative 63-bit integer", e);
        if (KEY_IS("offset"))
            v->external.offset = x;
        else
            v->external.length = (int64_t)x;
    } else if (KEY_IS("checksum")) {
        v->external.checksum = vs;
    } /* other keys: ignored, as ONNX allows */
#undef KEY_IS
    return 0;
}

/* Pass 1 over the message: the rank (every dims occurrence, packed or not),
 * refused above ONP_MAX_RANK; v->dims allocated for it, v->rank left 0. */
static int tp_alloc_dims(const onp_pb_cursor *c, onp_arena *a, onp_tensor_view *v, onp_error *e)
{
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    int r;
    size_t ndims = 0;
    while ((r = onp_pb_next(&cur, &f, e)) == 1)
        if (f.num == ONP_TP_DIMS) {
            size_t k;
            if (onp_pb_packed_count(&cur, &f, ONP_WT_VARINT, &k, e))
                return onp_error_field_prefix(e, "TensorProto.dims");
            ndims += k;
        }
    if (r < 0) return -1;
    if (ndims > ONP_MAX_RANK)
        return onp_error_set(e, ONP_ERR_FORMAT, c->file, "TensorProto.dims", (int64_t)v->msg.off,
                             "rank %zu exceeds the supported %d", ndims, ONP_MAX_RANK);
    v->dims = onp_arena_array(a, ndims ? ndims : 1, sizeof *v->dims);
    if (!v->dims) return onp_error_set(e, ONP_ERR_NOMEM, c->file, NULL, -1, "out of memory");
    v->rank = 0;
    return 0;
}

/* What the field pass records beside the view's own members. */
typedef struct tp_seen {
    const uint8_t *raw_at;       /* raw_data's field start, NULL when absent */
    unsigned ext_seen;           /* external_data keys met (parse_external_entry) */
    size_t typed_count[16];      /* [field number] values in that typed field */
    const uint8_t *typed_at[16]; /* [field number] its first occurrence */
} tp_seen;

/* Pass 2 over the message (after tp_alloc_dims): dims, data_type, name,
 * raw_data, external_data and data_location into *v; the typed fields only
 * counted into *s (their values are read by onp_tp_materialise).  Refuses a
 * segmented tensor, a wrong wire type, an unknown data location. */
static int tp_read_fields(const onp_pb_cursor *c, onp_arena *a, onp_tensor_view *v, tp_seen *s,
                          onp_error *e)
{
    onp_pb_cursor cur = *c;
    onp_pb_field f;
    int r;
    while ((r = onp_pb_next(&cur, &f, e)) == 1) {
        switch (f.num) {
        case ONP_TP_DIMS: {
            uint64_t tmp[ONP_MAX_RANK];
            size_t k;
            /* pass 1 checked every occurrence and the total rank <= ONP_MAX_RANK */
            onp_pb_packed_count(&cur, &f, ONP_WT_VARINT, &k, e);
            onp_pb_packed_read(&f, ONP_WT_VARINT, tmp);
            for (size_t i = 0; i < k; i++) v->dims[v->rank++] = (int64_t)tmp[i];
            break;
        }
        case ONP_TP_DATA_TYPE:
            if (onp_pb_expect(&cur, &f, ONP_WT_VARINT, "TensorProto.data_type", e)) return -1;
            v->data_type = (int32_t)f.v;
            if (f.v > INT32_MAX) v->data_type = -1;
            break;
        case ONP_TP_SEGMENT:
            return field_err(&cur, f.start, "TensorProto.segment", ONP_ERR_FORMAT,
                             "segmented tensors are not supported", e);
        case ONP_TP_NAME:
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "TensorProto.name", e)) return -1;
            if (!(v->name = onp_arena_strndup(a, f.data, f.len)))
                return onp_error_set(e, ONP_ERR_NOMEM, c->file, NULL, -1, "out of memory");
            break;
        case ONP_TP_RAW_DATA:
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "TensorProto.raw_data", e)) return -1;
            v->has_raw = 1;
            v->raw_data.p = f.data;
            v->raw_data.n = f.len;
            v->raw_data.off = (uint64_t)onp_pb_off(&cur, f.data);
            s->raw_at = f.start;
            break;
        case ONP_TP_EXTERNAL_DATA:
            if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "TensorProto.external_data", e)) return -1;
            if (parse_external_entry(&cur, &f, a, v, &s->ext_seen, e)) return -1;
            break;
        case ONP_TP_DATA_LOCATION:
            if (onp_pb_expect(&cur, &f, ONP_WT_VARINT, "TensorProto.data_location", e)) return -1;
            if (f.v > 1)
                return field_err(&cur, f.start, "TensorProto.data_location", ONP_ERR_FORMAT,
                                 "unknown data location", e);
            v->is_external = (int)f.v;
            break;
        case ONP_TP_FLOAT_DATA:
        case ONP_TP_INT32_DATA:
        case ONP_TP_STRING_DATA:
        case ONP_TP_INT64_DATA:
        case ONP_TP_DOUBLE_DATA:
        case ONP_TP_UINT64_DATA: {
            size_t k = 1;
            if (f.num == ONP_TP_STRING_DATA) {
                if (onp_pb_expect(&cur, &f, ONP_WT_LEN, "TensorProto.string_data", e)) return -1;
            } else if (onp_pb_packed_count(&cur, &f, typed_wire((int)f.num), &k, e)) {
                return onp_error_field_prefix(e, typed_name((int)f.num));
            }
            if (!s->typed_at[f.num]) s->typed_at[f.num] = f.start;
            s->typed_count[f.num] += k;
            break;
        }
        default: break; /* doc_string, metadata_props, unknown fields */
        }
    }
    return r < 0 ? -1 : 0;
}

/* Where the values live, checked against dtype `d` and the shape's `nbytes`:
 * only the typed field of that dtype may be used; then exactly one of
 * external data (a location, no inline data, a length that fits), raw_data
 * (of exactly nbytes) or that typed field (one value per element, two for
 * complex).  Sets v->bytes. */
static int tp_check_payload(const onp_pb_cursor *c, onp_tensor_view *v, const onp_dtype_desc *d,
                            size_t nbytes, const tp_seen *s, onp_error *e)
{
    int per;
    int want = typed_field_for(v->data_type, &per);
    for (int num = ONP_TP_FLOAT_DATA; num <= ONP_TP_UINT64_DATA; num++) {
        if (!s->typed_count[num]) continue;
        if (num != want)
            return onp_error_set(e, ONP_ERR_FORMAT, c->file, typed_name(num),
                                 onp_pb_off(c, s->typed_at[num]),
                                 "field does not hold %s values (tensor '%s')", d->name, v->name);
    }
    if (v->is_external) {
        if (v->has_raw || s->typed_count[want])
            return field_err(c, c->p, "TensorProto.data_location", ONP_ERR_FORMAT,
                             "external tensor also holds inline data", e);
        if (!v->external.location)
            return field_err(c, c->p, "TensorProto.external_data", ONP_ERR_FORMAT,
                             "external tensor without a location", e);
        if (v->data_type == ONP_STRING)
            return field_err(c, c->p, "TensorProto.external_data", ONP_ERR_FORMAT,
                             "string tensors cannot be external", e);
        if (v->external.length >= 0 && (uint64_t)v->external.length != nbytes)
            return onp_error_set(
                e, ONP_ERR_FORMAT, c->file, "TensorProto.external_data", (int64_t)v->msg.off,
                "length %" PRId64 " does not match dims x element size = %zu (tensor '%s')",
                v->external.length, nbytes, v->name);
        v->bytes = nbytes;
        return 0;
    }
    if (v->has_raw) {
        if (v->data_type == ONP_STRING)
            return field_err(c, s->raw_at, "TensorProto.raw_data", ONP_ERR_FORMAT,
                             "string tensors cannot use raw_data", e);
        if (s->typed_count[want])
            return onp_error_set(e, ONP_ERR_FORMAT, c->file, typed_name(want),
                                 onp_pb_off(c, s->typed_at[want]),
                                 "tensor '%s' holds both raw_data and typed data", v->name);
        if (v->raw_data.n != nbytes)
            return onp_error_set(
                e, ONP_ERR_FORMAT, c->file, "TensorProto.raw_data", onp_pb_off(c, s->raw_at),
                "%zu bytes where dims x element size = %" PRId64 " x %zu = %zu (tensor '%s')",
                v->raw_data.n, v->count, d->size, nbytes, v->name);
        v->bytes = nbytes;
        return 0;
    }
    uint64_t expect = (uint64_t)v->count * (uint64_t)per;
    if (s->typed_count[want] != expect)
        return onp_error_set(e, ONP_ERR_FORMAT, c->file, typed_name(want),
                             s->typed_at[want] ? onp_pb_off(c, s->typed_at[want])
                                               : (int64_t)v->msg.off,
                             "%zu values where dims give %" PRIu64 " (tensor '%s')",
                             s->typed_count[want], expect, v->name);
    v->bytes = nbytes;
    return 0;
}

int onp_tp_parse(const onp_pb_cursor *c, onp_arena *a, onp_tensor_view *v, onp_error *e)
{
    memset(v, 0, sizeof *v);
    v->name = "";
    v->external.length = -1;
    v->msg.p = c->p;
    v->msg.n = (size_t)(c->end - c->p);
    v->msg.off = (uint64_t)onp_pb_off(c, c->p);
    tp_seen seen;
    memset(&seen, 0, sizeof seen);
    if (tp_alloc_dims(c, a, v, e) || tp_read_fields(c, a, v, &seen, e)) return -1;
    const onp_dtype_desc *d = onp_dtype_info(v->data_type);
    if (!d)
        return onp_error_set(e, ONP_ERR_FORMAT, c->file, "TensorProto.data_type",
                             (int64_t)v->msg.off, "unsupported data type %d in tensor '%s'",
                             (int)v->data_type, v->name);
    size_t nbytes;
    if (onp_shape_count((int)v->rank, v->dims, d->size, &v->count, &nbytes, e)) {
        e->offset = (int64_t)v->msg.off;
        onp_error_set_file(e, c->file);
        return onp_error_field_prefix(e, "TensorProto");
    }
    return tp_check_payload(c, v, d, nbytes, &seen, e);
}

/* Store one decoded typed value (as 64-bit pattern) into element slot i. */
static void store_typed(int32_t dt, uint8_t *dst, size_t i, uint64_t v)
{
    switch (dt) {
    case ONP_FLOAT:
    case ONP_COMPLEX64: {
        uint32_t u = (uint32_t)v;
        memcpy(dst + 4 * i, &u, 4);
        break;
    }
    case ONP_DOUBLE:
    case ONP_COMPLEX128:
    case ONP_INT64:
    case ONP_UINT64: memcpy(dst + 8 * i, &v, 8); break;
    case ONP_INT32:
    case ONP_UINT32: {
        uint32_t u = (uint32_t)v;
        memcpy(dst + 4 * i, &u, 4);
        break;
    }
    case ONP_INT16:
    case ONP_UINT16:
    case ONP_FLOAT16:
    case ONP_BFLOAT16: {
        uint16_t u = (uint16_t)v;
        memcpy(dst + 2 * i, &u, 2);
        break;
    }
    case ONP_BOOL: dst[i] = v != 0; break;
    default: dst[i] = (uint8_t)v; break; /* INT8, UINT8, the float8 types */
    }
}

int onp_tp_materialize(const onp_tensor_view *v, const onp_span *ext, const uint8_t *base,
                       const char *file, onp_tensor *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    int rank = (int)v->rank;
    if (v->data_type == ONP_STRING) {
        size_t n = (size_t)v->count;
        size_t *lens = calloc(n ? n : 1, sizeof *lens);
        if (!lens) return onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");
        onp_pb_cursor c;
        onp_pb_field f;
        onp_pb_cursor_init(&c, v->msg.p, v->msg.n, base, file);
        size_t i = 0;
        while (onp_pb_next(&c, &f, e) == 1)
            if (f.num == ONP_TP_STRING_DATA && i < n) lens[i++] = f.len;
        int rc = onp_tensor_alloc_strings(out, rank, v->dims, lens, e);
        free(lens);
        if (rc) return -1;
        onp_pb_cursor_init(&c, v->msg.p, v->msg.n, base, file);
        i = 0;
        while (onp_pb_next(&c, &f, e) == 1)
            if (f.num == ONP_TP_STRING_DATA && i < n) {
                if (f.len) memcpy(onp_tensor_string_at(out, (int64_t)i), f.data, f.len);
                i++;
            }
        goto named;
    }
    if (onp_tensor_alloc(out, v->data_type, rank, v->dims, e)) return onp_error_set_file(e, file);
    if (v->is_external) {
        if (!ext || ext->n != out->nbytes) {
            onp_tensor_release(out);
            return onp_error_set(
                e, ONP_ERR_FORMAT, file, "TensorProto.external_data", (int64_t)v->msg.off,
                "external bytes do not match the tensor size (tensor '%s')", v->name);
        }
        if (out->nbytes) memcpy(out->data, ext->p, out->nbytes);
    } else if (v->has_raw) {
        if (out->nbytes) memcpy(out->data, v->raw_data.p, out->nbytes);
        if (v->data_type == ONP_BOOL) /* normalise: any non-zero byte is true */
            for (size_t i = 0; i < out->nbytes; i++)
                ((uint8_t *)out->data)[i] = ((uint8_t *)out->data)[i] != 0;
    } else if (out->count) {
        int per;
        int want = typed_field_for(v->data_type, &per);
        uint32_t wt = typed_wire(want);
        onp_pb_cursor c;
        onp_pb_field f;
        onp_pb_cursor_init(&c, v->msg.p, v->msg.n, base, file);
        size_t i = 0, total = (size_t)out->count * (size_t)per;
        while (onp_pb_next(&c, &f, e) == 1) {
            if ((int)f.num != want) continue;
            if (f.wt == wt) {
                if (i < total) store_typed(v->data_type, out->data, i++, f.v);
                continue;
            }
            /* packed: decode in chunks without allocating */
            const uint8_t *p = f.data, *end = f.data + f.len;
            while (p < end && i < total) {
                uint64_t x;
                if (wt == ONP_WT_VARINT) {
                    size_t k = onp_pb_varint(p, (size_t)(end - p), &x);
                    if (!k) break;
                    p += k;
                } else {
                    size_t w = wt == ONP_WT_I32 ? 4 : 8;
                    x = 0;
                    for (size_t b = w; b-- > 0;) x = (x << 8) | p[b];
                    p += w;
                }
                store_typed(v->data_type, out->data, i++, x);
            }
        }
    }
named:
    if (v->name && v->name[0] && onp_tensor_set_name(out, v->name, e)) {
        onp_tensor_release(out);
        return -1;
    }
    return 0;
}
