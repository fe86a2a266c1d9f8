/*
 * ort_run.c — one model run (include/onnxparity/ort.h): inputs checked
 * against the session's declared inputs, wrapped as OrtValues without a
 * copy (strings are copied into ORT's string tensor), Run, and outputs
 * copied out of their OrtValues into owned onp_tensors.  Every OrtValue
 * made or received here is released before returning, on every path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ort/ort_internal.h"
#include "tensor/adopt.h"

#define SHAPE_STR 256

// --- checks before ORT ----------------------------------------------------------

static void given_str(const onp_tensor *t, char *buf, size_t n)
{
    char shape[SHAPE_STR];
    const char *dn = onp_dtype_name(t->dtype);
    if (strcmp(dn, "?"))
        snprintf(buf, n, "%s %s", dn, onp_shape_str(t->rank, t->dims, shape, sizeof shape));
    else
        snprintf(buf, n, "dtype(%d) %s", (int)t->dtype,
                 onp_shape_str(t->rank, t->dims, shape, sizeof shape));
}

/* Does tensor t fit declared input io?  0, or -1 + ONP_ERR_USAGE. */
static int check_input(const onp_session *s, const onp_ort_io *io, const onp_tensor *t,
                       onp_error *e)
{
    char want[SHAPE_STR * 2], got[SHAPE_STR * 2];
    if (io->kind != ONP_ORT_KIND_TENSOR && io->kind != ONP_ORT_KIND_OPTIONAL)
        return onp_error_set(e, ONP_ERR_USAGE, s->desc.model, NULL, -1,
                             "input '%s' is a %s; only tensors can be fed", io->name,
                             onp_ort_io_str(io, want, sizeof want));
    int ok = t->dtype == io->dtype && t->rank >= 0 && t->rank <= ONP_MAX_RANK;
    if (ok && io->rank > 0) {
        ok = t->rank == io->rank;
        for (int d = 0; ok && d < io->rank; d++)
            if (io->dims[d] >= 0 && t->dims[d] != io->dims[d]) ok = 0;
    }
    if (!ok) {
        onp_ort_io_str(io, want, sizeof want);
        if (t->rank < 0 || t->rank > ONP_MAX_RANK)
            snprintf(got, sizeof got, "a tensor of rank %d", t->rank);
        else
            given_str(t, got, sizeof got);
        return onp_error_set(e, ONP_ERR_USAGE, s->desc.model, NULL, -1,
                             "input '%s': expected %s, given %s", io->name, want, got);
    }
    int no_data = t->dtype == ONP_STRING ? t->count > 0 && !t->strings : t->nbytes > 0 && !t->data;
    if (no_data)
        return onp_error_set(e, ONP_ERR_USAGE, s->desc.model, NULL, -1,
                             "input '%s': the tensor given has no data", io->name);
    return 0;
}

/* Append the names of all inputs (or outputs) to buf: "a, b, c". */
static char *io_list(const onp_ort_io *io, size_t n, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && k < cap; i++) {
        int w = snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", io[i].name);
        if (w < 0) break;
        k += (size_t)w;
    }
    if (!n) snprintf(buf, cap, "none");
    return buf;
}

/* The declared value that feed slot j stands for: graph input j, or
 * overridable initializer j - n_in. */
static const onp_ort_io *slot_io(const onp_session *s, size_t j)
{
    return j < s->n_in ? &s->in[j] : &s->init[j - s->n_in];
}

/* Map inputs[] onto feed slots: slot[j] = the index in inputs[] that feeds
 * slot j (see slot_io), or SIZE_MAX for an initializer left as it is. */
static int match_inputs(const onp_session *s, const onp_tensor *inputs, size_t n_inputs,
                        size_t *slot, onp_error *e)
{
    char names[512];
    const char *file = s->desc.model;
    size_t n_slots = s->n_in + s->n_init;
    for (size_t j = 0; j < n_slots; j++) slot[j] = SIZE_MAX;
    for (size_t i = 0; i < n_inputs; i++) {
        const char *nm = inputs[i].name;
        long j;
        if (nm && *nm) {
            j = onp_session_find_input(s, nm);
            if (j < 0) {
                long k = onp_session_find_initializer(s, nm);
                if (k >= 0) j = (long)s->n_in + k;
            }
            if (j < 0)
                return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                                     "no input named '%s' in the model (its inputs: %s)", nm,
                                     io_list(s->in, s->n_in, names, sizeof names));
        } else {
            if (i >= s->n_in)
                return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                                     "unnamed tensor %zu given, but the model has %zu inputs (%s)",
                                     i, s->n_in, io_list(s->in, s->n_in, names, sizeof names));
            j = (long)i;
        }
        if (slot[j] != SIZE_MAX)
            return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1, "input '%s' is given twice",
                                 slot_io(s, (size_t)j)->name);
        slot[j] = i;
    }
    for (size_t j = 0; j < s->n_in; j++)
        if (slot[j] == SIZE_MAX)
            return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                                 "input '%s' is not given (the model's inputs: %s)", s->in[j].name,
                                 io_list(s->in, s->n_in, names, sizeof names));
    for (size_t j = 0; j < n_slots; j++)
        if (slot[j] != SIZE_MAX && check_input(s, slot_io(s, j), &inputs[slot[j]], e)) return -1;
    return 0;
}

// --- tensors into OrtValues ------------------------------------------------------

static int make_value(const onp_session *s, const onp_tensor *t, OrtValue **v, onp_error *e)
{
    const onp_ort *ort = s->ort;
    const OrtApi *api = ort->api;
    const char *file = s->desc.model;
    ONNXTensorElementDataType dt = (ONNXTensorElementDataType)t->dtype;
    *v = NULL;
    if (t->dtype != ONP_STRING) {
        static char empty[1];
        void *data = t->nbytes ? t->data : empty;
        return onp_ort_status(ort,
                              api->CreateTensorWithDataAsOrtValue(ort->cpu_mem, data, t->nbytes,
                                                                  t->dims, (size_t)t->rank, dt, v),
                              "CreateTensorWithDataAsOrtValue", file, e);
    }
    if (onp_ort_status(ort,
                       api->CreateTensorAsOrtValue(ort->alloc, t->dims, (size_t)t->rank, dt, v),
                       "CreateTensorAsOrtValue", file, e))
        return -1;
    /* One element at a time, by length: strings may hold NUL bytes. */
    for (int64_t i = 0; i < t->count; i++) {
        char *dst = NULL;
        if (onp_ort_status(
                ort, api->GetResizedStringTensorElementBuffer(*v, (size_t)i, t->strings[i].n, &dst),
                "GetResizedStringTensorElementBuffer", file, e)) {
            api->ReleaseValue(*v);
            *v = NULL;
            return -1;
        }
        if (t->strings[i].n) memcpy(dst, t->strings[i].p, t->strings[i].n);
    }
    return 0;
}

// --- OrtValues into tensors ------------------------------------------------------

static int copy_strings(const onp_session *s, OrtValue *v, const char *name, onp_tensor *t,
                        int rank, const int64_t *dims, onp_error *e)
{
    const onp_ort *ort = s->ort;
    const OrtApi *api = ort->api;
    const char *file = s->desc.model;
    int64_t count;
    if (onp_shape_count(rank, dims, 0, &count, NULL, e)) return onp_error_set_file(e, file);
    size_t n = (size_t)count, total = 0;
    if (onp_ort_status(ort, api->GetStringTensorDataLength(v, &total), "GetStringTensorDataLength",
                       file, e))
        return -1;
    char *bytes = malloc(total ? total : 1);
    size_t *offs = malloc((n ? n : 1) * sizeof *offs);
    size_t *lens = malloc((n ? n : 1) * sizeof *lens);
    int rc = 0;
    if (!bytes || !offs || !lens)
        rc = onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory for output '%s'", name);
    if (!rc && n)
        rc = onp_ort_status(ort, api->GetStringTensorContent(v, bytes, total, offs, n),
                            "GetStringTensorContent", file, e);
    for (size_t i = 0; !rc && i < n; i++) {
        size_t end = i + 1 < n ? offs[i + 1] : total;
        if (offs[i] > end || end > total)
            rc = onp_error_set(e, ONP_ERR_RUNTIME, file, NULL, -1,
                               "ORT gave inconsistent string offsets for output '%s'", name);
        else
            lens[i] = end - offs[i];
    }
    if (!rc) rc = onp_tensor_alloc_strings(t, rank, dims, lens, e);
    for (size_t i = 0; !rc && i < n; i++)
        if (lens[i]) memcpy(onp_tensor_string_at(t, (int64_t)i), bytes + offs[i], lens[i]);
    free(bytes);
    free(offs);
    free(lens);
    return rc;
}

/* An output's OrtValue, held by the tensor that views its buffer. */
typedef struct held_value {
    const OrtApi *api; /* the library is never unloaded */
    OrtValue *v;
} held_value;

static void release_held(void *p)
{
    held_value *h = p;
    h->api->ReleaseValue(h->v);
    free(h);
}

/* Output *vp as a tensor in t.  A numeric one views ORT's own buffer (no
 * copy; the bytes count against the memory cap as an allocation would) and
 * takes the OrtValue: *vp is then NULL, released with the tensor. */
static int take_value(const onp_session *s, OrtValue **vp, const char *name, onp_tensor *t,
                      onp_error *e)
{
    OrtValue *v = *vp;
    const onp_ort *ort = s->ort;
    const OrtApi *api = ort->api;
    const char *file = s->desc.model;
    memset(t, 0, sizeof *t);
    if (!v)
        return onp_error_set(e, ONP_ERR_RUNTIME, file, NULL, -1, "ORT returned no value for '%s'",
                             name);
    int has = 1;
    enum ONNXType vt = ONNX_TYPE_UNKNOWN;
    if (onp_ort_status(ort, api->HasValue(v, &has), "HasValue", file, e)) return -1;
    if (!has)
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                             "output '%s' is None (an empty optional), not a tensor", name);
    if (onp_ort_status(ort, api->GetValueType(v, &vt), "GetValueType", file, e)) return -1;
    if (vt != ONNX_TYPE_TENSOR) {
        static const char *const kinds[] = {
            "value of unknown type", "tensor",        "sequence", "map",
            "opaque value",          "sparse tensor", "optional"};
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                             "output '%s' is a %s; onnxparity compares tensors only", name,
                             (unsigned)vt < 7 ? kinds[vt] : kinds[0]);
    }

    OrtTensorTypeAndShapeInfo *tsi = NULL;
    if (onp_ort_status(ort, api->GetTensorTypeAndShape(v, &tsi), "GetTensorTypeAndShape", file, e))
        return -1;
    ONNXTensorElementDataType dt = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    size_t rank = 0;
    int64_t dims[ONP_MAX_RANK];
    int rc =
        onp_ort_status(ort, api->GetTensorElementType(tsi, &dt), "GetTensorElementType", file, e);
    if (!rc)
        rc =
            onp_ort_status(ort, api->GetDimensionsCount(tsi, &rank), "GetDimensionsCount", file, e);
    if (!rc && rank > ONP_MAX_RANK)
        rc = onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                           "output '%s' has rank %zu; onnxparity handles up to %d", name, rank,
                           ONP_MAX_RANK);
    if (!rc && rank)
        rc = onp_ort_status(ort, api->GetDimensions(tsi, dims, rank), "GetDimensions", file, e);
    api->ReleaseTensorTypeAndShapeInfo(tsi);
    if (rc) return -1;

    if (dt == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) {
        rc = copy_strings(s, v, name, t, (int)rank, dims, e);
    } else if (!onp_dtype_info((int32_t)dt)) {
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                             "output '%s' has element type %d, which onnxparity does not handle",
                             name, (int)dt);
    } else {
        const onp_dtype_desc *d = onp_dtype_info((int32_t)dt);
        int64_t count;
        size_t nb = 0;
        void *src = NULL;
        held_value *h = NULL;
        rc = onp_shape_count((int)rank, dims, d->size, &count, &nb, e);
        if (!rc && nb)
            rc = onp_ort_status(ort, api->GetTensorMutableData(v, &src), "GetTensorMutableData",
                                file, e);
        if (!rc && !(h = malloc(sizeof *h)))
            rc = onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");
        if (!rc) {
            h->api = api;
            h->v = v;
            rc = onp_tensor_adopt(t, (int32_t)dt, (int)rank, dims, src, nb, release_held, h, e);
            if (rc) {
                free(h);
                onp_error_set_file(e, file);
            } else {
                *vp = NULL; /* the tensor holds it now */
            }
        }
    }
    if (!rc) rc = onp_tensor_set_name(t, name, e);
    if (rc) onp_tensor_release(t);
    return rc;
}

// --- run -----------------------------------------------------------------------

/* The value of the symbolic dim `name` in the inputs given (slot as
 * match_inputs fills it), or -1 when no input declares it or two disagree. */
static int64_t dim_of(const onp_session *s, const onp_tensor *inputs, const size_t *slot,
                      const char *name)
{
    int64_t v = -1;
    for (size_t j = 0; j < s->n_in; j++) {
        const onp_ort_io *io = &s->in[j];
        const onp_tensor *t = &inputs[slot[j]];
        if (io->rank != t->rank) continue;
        for (int d = 0; d < io->rank; d++) {
            if (!io->dim_names[d] || strcmp(io->dim_names[d], name)) continue;
            if (v >= 0 && v != t->dims[d]) return -1;
            v = t->dims[d];
        }
    }
    return v;
}

/* The shape of output j predicted from its declaration: fixed dims as
 * declared, symbolic ones as the inputs bind them.  Its bytes (dims, rank
 * filled), or 0 when some dim stays unknown, the rank is 0 (a scalar or no
 * declared shape) or the output is not a numeric tensor. */
static size_t predict_output(const onp_session *s, size_t j, const onp_tensor *inputs,
                             const size_t *slot, int64_t *dims, int *rank)
{
    const onp_ort_io *io = &s->out[j];
    const onp_dtype_desc *d = io->kind == ONP_ORT_KIND_TENSOR && io->dtype != ONP_STRING
                                  ? onp_dtype_info(io->dtype)
                                  : NULL;
    if (!d || io->rank < 1 || io->rank > ONP_MAX_RANK) return 0;
    for (int k = 0; k < io->rank; k++) {
        dims[k] = io->dims[k] > 0    ? io->dims[k]
                  : io->dim_names[k] ? dim_of(s, inputs, slot, io->dim_names[k])
                                     : -1;
        if (dims[k] <= 0) return 0;
    }
    *rank = io->rank;
    size_t nb;
    int64_t count;
    onp_error e;
    return onp_shape_count(io->rank, dims, d->size, &count, &nb, &e) ? 0 : nb;
}

size_t onp_session_output_bytes(const onp_session *s, const char *name, const onp_tensor *inputs,
                                size_t n_inputs)
{
    long j = name ? onp_session_find_output(s, name) : -1;
    size_t n_slots = s->n_in + s->n_init, nb = 0;
    size_t *slot = j >= 0 ? calloc(n_slots ? n_slots : 1, sizeof *slot) : NULL;
    onp_error e;
    int64_t dims[ONP_MAX_RANK];
    int rank;
    if (slot && !match_inputs(s, inputs, n_inputs, slot, &e))
        nb = predict_output(s, (size_t)j, inputs, slot, dims, &rank);
    free(slot);
    return nb;
}

/* The caller's buffer for output j (bufs[i] of onp_session_run_into) as
 * the OrtValue ORT writes the output into; *v stays NULL when the shape
 * cannot be predicted. */
static int bind_output(const onp_session *s, size_t j, const onp_tensor *inputs, const size_t *slot,
                       void *buf, OrtValue **v, onp_error *e)
{
    *v = NULL;
    int64_t dims[ONP_MAX_RANK];
    int rank = 0;
    size_t nb = buf ? predict_output(s, j, inputs, slot, dims, &rank) : 0;
    if (!nb) return 0;
    const onp_ort *ort = s->ort;
    return onp_ort_status(
        ort,
        ort->api->CreateTensorWithDataAsOrtValue(ort->cpu_mem, buf, nb, dims, (size_t)rank,
                                                 (ONNXTensorElementDataType)s->out[j].dtype, v),
        "CreateTensorWithDataAsOrtValue", s->desc.model, e);
}

/* Whether output j, fetched as names[i] of the caller's names[n] (NULL:
 * every output once), may be written into a caller's buffer: ORT writes a
 * bound output only when a node computes it, so not one that is a graph
 * input or an initializer returned as it is (ORT hands back that value and
 * the buffer keeps its zeros), nor a name fetched twice (one copy is
 * written, the other keeps its zeros). */
static int bindable(const onp_session *s, size_t j, const char *const *names, size_t n, size_t i)
{
    size_t at;
    const char *name = s->out[j].name;
    if (onp_strmap_get(&s->in_at, name, &at) || onp_strmap_get(&s->init_at, name, &at)) return 0;
    for (size_t k = 0; names && k < n; k++)
        if (k != i && names[k] && !strcmp(names[k], name)) return 0;
    return 1;
}

int onp_session_run(onp_session *s, const onp_tensor *inputs, size_t n_inputs,
                    const char *const *output_names, size_t n_outputs, onp_tensor *outputs,
                    onp_error *e)
{
    return onp_session_run_into(s, inputs, n_inputs, output_names, n_outputs, outputs, NULL, e);
}

int onp_session_run_into(onp_session *s, const onp_tensor *inputs, size_t n_inputs,
                         const char *const *output_names, size_t n_outputs, onp_tensor *outputs,
                         void *const *bufs, onp_error *e)
{
    const char *file = s->desc.model;
    int fetch_all = !output_names;
    size_t n_out = fetch_all ? s->n_out : n_outputs;
    if (n_out && !outputs)
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1, "no room given for the outputs");
    for (size_t i = 0; i < n_out; i++) memset(&outputs[i], 0, sizeof outputs[i]);
    if (n_inputs && !inputs)
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1, "inputs are NULL");

    const onp_ort *ort = s->ort;
    const OrtApi *api = s->worker ? NULL : ort->api;
    char names[512];

    size_t n_slots = s->n_in + s->n_init, n_feed = 0;
    size_t *slot = calloc(n_slots ? n_slots : 1, sizeof *slot);
    const char **in_names = calloc(n_slots ? n_slots : 1, sizeof *in_names);
    OrtValue **in_vals = calloc(n_slots ? n_slots : 1, sizeof *in_vals);
    const char **out_names = calloc(n_out ? n_out : 1, sizeof *out_names);
    OrtValue **out_vals = calloc(n_out ? n_out : 1, sizeof *out_vals);
    int rc = 0;
    if (!slot || !in_names || !in_vals || !out_names || !out_vals)
        rc = onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");

    if (!rc) rc = match_inputs(s, inputs, n_inputs, slot, e);
    for (size_t i = 0; !rc && i < n_out; i++) {
        long j = fetch_all ? (long)i : onp_session_find_output(s, output_names[i]);
        if (j < 0)
            rc = onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                               "no output named '%s' in the model (its outputs: %s)",
                               output_names[i] ? output_names[i] : "(null)",
                               io_list(s->out, s->n_out, names, sizeof names));
        else
            out_names[i] = s->out[j].name;
        if (!rc && bufs && bufs[i] && !s->worker && bindable(s, (size_t)j, output_names, n_out, i))
            rc = bind_output(s, (size_t)j, inputs, slot, bufs[i], &out_vals[i], e);
    }
    if (s->worker) { /* checked here, exactly as in-process; ORT runs there */
        free(slot);
        free(in_names);
        free(in_vals);
        free(out_names);
        free(out_vals);
        return rc ? rc : onp_worker_run(s, inputs, n_inputs, output_names, n_out, outputs, e);
    }
    for (size_t j = 0; !rc && j < n_slots; j++) {
        if (slot[j] == SIZE_MAX) continue;
        in_names[n_feed] = slot_io(s, j)->name;
        rc = make_value(s, &inputs[slot[j]], &in_vals[n_feed], e);
        n_feed++;
    }
    if (!rc)
        rc = onp_ort_status(ort,
                            api->Run(s->sess, NULL, in_names, (const OrtValue *const *)in_vals,
                                     n_feed, out_names, n_out, out_vals),
                            "Run", file, e);
    for (size_t i = 0; !rc && i < n_out; i++)
        rc = take_value(s, &out_vals[i], out_names[i], &outputs[i], e);
    if (rc)
        for (size_t i = 0; i < n_out; i++) onp_tensor_release(&outputs[i]);

    for (size_t j = 0; in_vals && j < n_feed; j++)
        if (in_vals[j]) api->ReleaseValue(in_vals[j]);
    for (size_t i = 0; out_vals && i < n_out; i++)
        if (out_vals[i]) api->ReleaseValue(out_vals[i]);
    free(slot);
    free(in_names);
    free(in_vals);
    free(out_names);
    free(out_vals);
    return rc;
}
