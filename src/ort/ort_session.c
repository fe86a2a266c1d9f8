/*
 * ort_session.c — making an OrtSession (include/onnxparity/ort.h): session
 * options from onp_session_opts, creation from a path or from bytes, and
 * the introspection of graph inputs and outputs, read once at creation into
 * the session's arena so that runs and callers never ask ORT again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "ort/ort_internal.h"

// --- optimization levels ------------------------------------------------------

static const char *const level_names[] = {"default",  "disable", "basic",
                                          "extended", "layout",  "all"};
_Static_assert(sizeof level_names / sizeof level_names[0] == ONP_ORT_OPT_COUNT,
               "level_names must list every onp_ort_opt_level");

const char *onp_ort_opt_level_name(onp_ort_opt_level level)
{
    return (unsigned)level < ONP_ORT_OPT_COUNT ? level_names[level] : "?";
}

int onp_ort_opt_level_parse(const char *name, onp_ort_opt_level *out, onp_error *e)
{
    static const struct {
        const char *alias;
        onp_ort_opt_level level;
    } aliases[] = {{"none", ONP_ORT_OPT_DISABLE}, {"0", ONP_ORT_OPT_DISABLE},
                   {"1", ONP_ORT_OPT_BASIC},      {"2", ONP_ORT_OPT_EXTENDED},
                   {"3", ONP_ORT_OPT_LAYOUT},     {"99", ONP_ORT_OPT_ALL}};
    if (name) {
        for (int i = 0; i < ONP_ORT_OPT_COUNT; i++)
            if (!strcasecmp(name, level_names[i])) {
                *out = (onp_ort_opt_level)i;
                return 0;
            }
        for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
            if (!strcasecmp(name, aliases[i].alias)) {
                *out = aliases[i].level;
                return 0;
            }
    }
    return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                         "unknown optimization level '%s' (choose disable, basic, extended, "
                         "layout, all or default)",
                         name ? name : "(null)");
}

// --- notes ------------------------------------------------------------------

/* Append a note ("; "-separated) to a fixed buffer. */
static void note(char *buf, size_t n, const char *fmt, ...)
{
    size_t k = strlen(buf);
    if (k && k + 2 < n) {
        memcpy(buf + k, "; ", 3);
        k += 2;
    }
    if (k >= n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + k, n - k, fmt, ap);
    va_end(ap);
}

// --- options --------------------------------------------------------------------

/* Check what can be checked without ORT. */
static int check_opts(const onp_session_opts *o, const char *file, onp_error *e)
{
    if ((unsigned)o->opt_level >= ONP_ORT_OPT_COUNT)
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                             "optimization level %d is out of range", (int)o->opt_level);
    if (o->intra_threads < 0 || o->inter_threads < 0)
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                             "thread counts must be >= 0 (0 = ORT's default), given intra %d, "
                             "inter %d",
                             o->intra_threads, o->inter_threads);
    if ((o->n_config && !o->config) || (o->n_provider_opts && !o->provider_opts) ||
        (o->n_custom_op_libs && !o->custom_op_libs))
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1, "a list of options is NULL");
    if (o->timeout_ms < 0 || (o->timeout_ms && !o->isolate))
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                             "a time limit (%d ms) needs an isolated session (a worker process "
                             "that can be killed)",
                             o->timeout_ms);
    return 0;
}

static int set_level(onp_session *s, OrtSessionOptions *so, onp_ort_opt_level level, char *notes,
                     size_t nn, onp_error *e)
{
    const onp_ort *ort = s->ort;
    const char *file = s->desc.model;
    GraphOptimizationLevel g = ORT_ENABLE_ALL;
    switch (level) {
    case ONP_ORT_OPT_DEFAULT: return 0;
    case ONP_ORT_OPT_DISABLE: g = ORT_DISABLE_ALL; break;
    case ONP_ORT_OPT_BASIC: g = ORT_ENABLE_BASIC; break;
    case ONP_ORT_OPT_EXTENDED: g = ORT_ENABLE_EXTENDED; break;
    case ONP_ORT_OPT_LAYOUT: g = ORT_ENABLE_LAYOUT; break;
    case ONP_ORT_OPT_ALL:
    case ONP_ORT_OPT_COUNT: g = ORT_ENABLE_ALL; break;
    }
    OrtStatus *st = ort->api->SetSessionGraphOptimizationLevel(so, g);
    if (st && level == ONP_ORT_OPT_LAYOUT) {
        /* Libraries older than ORT_ENABLE_LAYOUT refuse the value 3. */
        ort->api->ReleaseStatus(st);
        note(notes, nn, "optimization level 'layout' is not in ONNX Runtime %s: used 'all'",
             ort->version);
        s->desc.opt_level = ONP_ORT_OPT_ALL;
        st = ort->api->SetSessionGraphOptimizationLevel(so, ORT_ENABLE_ALL);
    }
    return onp_ort_status(ort, st, "SetSessionGraphOptimizationLevel", file, e);
}

/* ORT's intra-op threads spin for a while after Run() returns, waiting
 * for more work; this tool then compares on the same cores, and on a
 * 2-core machine the spinning thread took a core from the comparison of a
 * 100 MiB output (check 0.17-0.18 s, 0.16 s with the spin stopped; issue
 * 34).  So every session stops the spin when Run() returns (ORT restarts
 * it on the next Run()), unless the user sets the entry: it changes no
 * number, only where the idle time goes. */
#define SPIN_STOP "session.force_spinning_stop"

static int apply_opts(onp_session *s, OrtSessionOptions *so, const onp_session_opts *o, char *notes,
                      size_t nn, onp_error *e)
{
    onp_ort *ort = s->ort;
    const OrtApi *api = ort->api;
    const char *file = s->desc.model;

    s->desc.opt_level = o->opt_level;
    if (set_level(s, so, o->opt_level, notes, nn, e)) return -1;
    if (o->intra_threads && onp_ort_status(ort, api->SetIntraOpNumThreads(so, o->intra_threads),
                                           "SetIntraOpNumThreads", file, e))
        return -1;
    if (o->inter_threads && onp_ort_status(ort, api->SetInterOpNumThreads(so, o->inter_threads),
                                           "SetInterOpNumThreads", file, e))
        return -1;
    int spin_stop_set = 0;
    for (size_t i = 0; i < o->n_config; i++) {
        char *key;
        const char *value;
        if (onp_ort_split_kv(o->config[i], "session config entry", &key, &value, e))
            return onp_error_set_file(e, file);
        spin_stop_set |= !strcmp(key, SPIN_STOP);
        int rc = onp_ort_status(ort, api->AddSessionConfigEntry(so, key, value),
                                "AddSessionConfigEntry", file, e);
        free(key);
        if (rc) return -1;
    }
    if (!spin_stop_set && onp_ort_status(ort, api->AddSessionConfigEntry(so, SPIN_STOP, "1"),
                                         "AddSessionConfigEntry", file, e))
        return -1;
    for (size_t i = 0; i < o->n_custom_op_libs; i++)
        if (onp_ort_status(ort, api->RegisterCustomOpsLibrary_V2(so, o->custom_op_libs[i]),
                           "RegisterCustomOpsLibrary_V2", o->custom_op_libs[i], e))
            return -1;
    if (o->optimized_model_path &&
        onp_ort_status(ort, api->SetOptimizedModelFilePath(so, o->optimized_model_path),
                       "SetOptimizedModelFilePath", file, e))
        return -1;
    if (o->deterministic) {
        if (ort->api_version < 17)
            return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                                 "deterministic compute needs ONNX Runtime C API 17 (ORT 1.17); "
                                 "ONNX Runtime %s gives API %u",
                                 ort->version, (unsigned)ort->api_version);
        if (onp_ort_status(ort, api->SetDeterministicCompute(so, 1), "SetDeterministicCompute",
                           file, e))
            return -1;
        s->desc.deterministic = 1;
    }
    s->desc.intra_threads = o->intra_threads;
    s->desc.inter_threads = o->inter_threads;
    return onp_ort_ep_append(ort, so, o, file, &s->desc.provider, e);
}

// --- introspection ---------------------------------------------------------------

/* ORT's element-type enum follows ONNX's numbering up to FLOAT4E2M1 (23),
 * then lists UINT2, INT2, FLOAT8E8M0 as 24, 25, 26 where ONNX has
 * FLOAT8E8M0 = 24, UINT2 = 25, INT2 = 26. */
static int32_t onnx_dtype(ONNXTensorElementDataType dt)
{
    switch ((int)dt) {
    case 24: return 25; /* ORT UINT2 */
    case 25: return 26; /* ORT INT2 */
    case 26: return 24; /* ORT FLOAT8E8M0 */
    default: return (int32_t)dt;
    }
}

/* Fill dtype and shape from a tensor type (or an optional holding one). */
static int fill_type(onp_session *s, const OrtTypeInfo *ti, onp_ort_io *io, int depth, onp_error *e)
{
    const onp_ort *ort = s->ort;
    const OrtApi *api = ort->api;
    const char *file = s->desc.model;
    enum ONNXType t = ONNX_TYPE_UNKNOWN;
    if (onp_ort_status(ort, api->GetOnnxTypeFromTypeInfo(ti, &t), "GetOnnxTypeFromTypeInfo", file,
                       e))
        return -1;
    if (!depth) io->kind = (int)t;

    if (t == ONNX_TYPE_OPTIONAL && !depth) {
        const OrtOptionalTypeInfo *oti = NULL;
        OrtTypeInfo *inner = NULL;
        if (onp_ort_status(ort, api->CastTypeInfoToOptionalTypeInfo(ti, &oti),
                           "CastTypeInfoToOptionalTypeInfo", file, e))
            return -1;
        if (!oti) return 0;
        if (onp_ort_status(ort, api->GetOptionalContainedTypeInfo(oti, &inner),
                           "GetOptionalContainedTypeInfo", file, e))
            return -1;
        int rc = fill_type(s, inner, io, depth + 1, e);
        api->ReleaseTypeInfo(inner);
        return rc;
    }
    if (t != ONNX_TYPE_TENSOR && t != ONNX_TYPE_SPARSETENSOR) return 0;

    const OrtTensorTypeAndShapeInfo *tsi = NULL;
    if (onp_ort_status(ort, api->CastTypeInfoToTensorInfo(ti, &tsi), "CastTypeInfoToTensorInfo",
                       file, e))
        return -1;
    if (!tsi) return 0;
    ONNXTensorElementDataType dt = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    size_t rank = 0;
    if (onp_ort_status(ort, api->GetTensorElementType(tsi, &dt), "GetTensorElementType", file, e) ||
        onp_ort_status(ort, api->GetDimensionsCount(tsi, &rank), "GetDimensionsCount", file, e))
        return -1;
    if (rank > ONP_MAX_RANK)
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                             "'%s' has rank %zu; onnxparity handles up to %d", io->name, rank,
                             ONP_MAX_RANK);
    io->dtype = onnx_dtype(dt);
    io->rank = (int)rank;
    if (!rank) return 0;
    const char *sym[ONP_MAX_RANK] = {0};
    if (onp_ort_status(ort, api->GetDimensions(tsi, io->dims, rank), "GetDimensions", file, e) ||
        onp_ort_status(ort, api->GetSymbolicDimensions(tsi, sym, rank), "GetSymbolicDimensions",
                       file, e))
        return -1;
    for (size_t d = 0; d < rank; d++) {
        if (io->dims[d] < 0) io->dims[d] = -1;
        if (sym[d] && sym[d][0]) {
            io->dim_names[d] = onp_arena_strndup(&s->arena, sym[d], strlen(sym[d]));
            if (!io->dim_names[d])
                return onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");
        }
    }
    return 0;
}

/* Which list read_io reads. */
enum { IO_INPUT, IO_OUTPUT, IO_INIT };

static int read_io(onp_session *s, int which, size_t i, onp_ort_io *io, onp_error *e)
{
    const onp_ort *ort = s->ort;
    const OrtApi *api = ort->api;
    const char *file = s->desc.model;
    char *name = NULL;
    OrtStatus *st;
    const char *call;
    switch (which) {
    case IO_INPUT:
        st = api->SessionGetInputName(s->sess, i, ort->alloc, &name);
        call = "SessionGetInputName";
        break;
    case IO_OUTPUT:
        st = api->SessionGetOutputName(s->sess, i, ort->alloc, &name);
        call = "SessionGetOutputName";
        break;
    default:
        st = api->SessionGetOverridableInitializerName(s->sess, i, ort->alloc, &name);
        call = "SessionGetOverridableInitializerName";
        break;
    }
    if (onp_ort_status(ort, st, call, file, e)) return -1;
    io->name = onp_arena_strndup(&s->arena, name ? name : "", name ? strlen(name) : 0);
    if (name) {
        st = api->AllocatorFree(ort->alloc, name);
        if (st) api->ReleaseStatus(st);
    }
    if (!io->name) return onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");

    OrtTypeInfo *ti = NULL;
    switch (which) {
    case IO_INPUT:
        st = api->SessionGetInputTypeInfo(s->sess, i, &ti);
        call = "SessionGetInputTypeInfo";
        break;
    case IO_OUTPUT:
        st = api->SessionGetOutputTypeInfo(s->sess, i, &ti);
        call = "SessionGetOutputTypeInfo";
        break;
    default:
        st = api->SessionGetOverridableInitializerTypeInfo(s->sess, i, &ti);
        call = "SessionGetOverridableInitializerTypeInfo";
        break;
    }
    if (onp_ort_status(ort, st, call, file, e)) return -1;
    int rc = fill_type(s, ti, io, 0, e);
    api->ReleaseTypeInfo(ti);
    return rc;
}

static int introspect(onp_session *s, onp_error *e)
{
    const onp_ort *ort = s->ort;
    const char *file = s->desc.model;
    if (onp_ort_status(ort, ort->api->SessionGetInputCount(s->sess, &s->n_in),
                       "SessionGetInputCount", file, e) ||
        onp_ort_status(ort, ort->api->SessionGetOutputCount(s->sess, &s->n_out),
                       "SessionGetOutputCount", file, e) ||
        onp_ort_status(ort, ort->api->SessionGetOverridableInitializerCount(s->sess, &s->n_init),
                       "SessionGetOverridableInitializerCount", file, e))
        return -1;
    s->in = onp_arena_array(&s->arena, s->n_in, sizeof *s->in);
    s->out = onp_arena_array(&s->arena, s->n_out, sizeof *s->out);
    s->init = onp_arena_array(&s->arena, s->n_init, sizeof *s->init);
    if (!s->in || !s->out || !s->init)
        return onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");
    for (size_t i = 0; i < s->n_in; i++)
        if (read_io(s, IO_INPUT, i, &s->in[i], e)) return -1;
    for (size_t i = 0; i < s->n_out; i++)
        if (read_io(s, IO_OUTPUT, i, &s->out[i], e)) return -1;
    for (size_t i = 0; i < s->n_init; i++)
        if (read_io(s, IO_INIT, i, &s->init[i], e)) return -1;
    if (onp_session_index_names(s))
        return onp_error_set(e, ONP_ERR_NOMEM, file, NULL, -1, "out of memory");
    return 0;
}

// --- creation ------------------------------------------------------------------------

/* Checks common to both forms, then the session in this process or in a
 * worker. */
static int open_common(onp_ort *ort, const char *path, const void *bytes, size_t n,
                       const char *label, const onp_session_opts *o, onp_session **out,
                       onp_error *e)
{
    static const onp_session_opts zero_opts;
    *out = NULL;
    if (!o) o = &zero_opts;
    if (check_opts(o, label, e)) return -1;
    if (path) {
        struct stat sb;
        if (stat(path, &sb) != 0)
            return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "cannot read the model: %s",
                                 strerror(errno));
        if (!S_ISREG(sb.st_mode))
            return onp_error_set(e, ONP_ERR_IO, path, NULL, -1, "the model is not a regular file");
    }
    /* the precision the target computes in (precision.h): a provider option
     * of a value the provider refuses is named here, before ORT's generic
     * "Failed to load provider" */
    onp_precision prec;
    if (onp_precision_of(o->provider, o->provider_opts, o->n_provider_opts, o->config, o->n_config,
                         NULL, &prec, e))
        return onp_error_set_file(e, label);
    int rc = o->isolate ? onp_worker_open(ort, path, bytes, n, label, o, out, e)
                        : onp_session_open_local(ort, path, bytes, n, label, o, out, e);
    if (!rc) {
        (*out)->precision = prec;
        (*out)->desc.precision = &(*out)->precision;
    }
    return rc;
}

int onp_session_open_local(onp_ort *ort, const char *path, const void *bytes, size_t n,
                           const char *label, const onp_session_opts *o, onp_session **out,
                           onp_error *e)
{
    *out = NULL;
    if (onp_ort_env_ready(ort, e)) return -1;

    onp_session *s = calloc(1, sizeof *s);
    if (!s) return onp_error_set(e, ONP_ERR_NOMEM, label, NULL, -1, "out of memory");
    onp_ort_ref(ort);
    s->ort = ort;
    s->desc.model = onp_arena_strndup(&s->arena, label, strlen(label));
    if (!s->desc.model) {
        onp_session_close(s);
        return onp_error_set(e, ONP_ERR_NOMEM, label, NULL, -1, "out of memory");
    }

    const OrtApi *api = ort->api;
    OrtSessionOptions *so = NULL;
    char notes[512] = "";
    int rc = onp_ort_status(ort, api->CreateSessionOptions(&so), "CreateSessionOptions", label, e);
    if (!rc) rc = apply_opts(s, so, o, notes, sizeof notes, e);
    if (!rc) {
        OrtStatus *st = path ? api->CreateSession(ort->env, path, so, &s->sess)
                             : api->CreateSessionFromArray(ort->env, bytes, n, so, &s->sess);
        rc = onp_ort_status(ort, st, path ? "CreateSession" : "CreateSessionFromArray", label, e);
    }
    if (so) api->ReleaseSessionOptions(so);
    if (!rc) rc = introspect(s, e);
    if (!rc) {
        s->desc.notes = onp_arena_strndup(&s->arena, notes, strlen(notes));
        if (!s->desc.notes) rc = onp_error_set(e, ONP_ERR_NOMEM, label, NULL, -1, "out of memory");
    }
    if (rc) {
        onp_session_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

int onp_session_open(onp_ort *ort, const char *model_path, const onp_session_opts *o,
                     onp_session **out, onp_error *e)
{
    if (!model_path || !*model_path) {
        *out = NULL;
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "no model path given");
    }
    return open_common(ort, model_path, NULL, 0, model_path, o, out, e);
}

int onp_session_open_bytes(onp_ort *ort, const void *bytes, size_t n, const char *label,
                           const onp_session_opts *o, onp_session **out, onp_error *e)
{
    if (!label || !*label) label = "<memory>";
    if (!bytes && n) {
        *out = NULL;
        return onp_error_set(e, ONP_ERR_USAGE, label, NULL, -1, "model bytes are NULL");
    }
    static const uint8_t none[1];
    return open_common(ort, NULL, bytes ? bytes : none, n, label, o, out, e);
}

void onp_session_close(onp_session *s)
{
    if (!s) return;
    onp_worker_free(s->worker);
    if (s->sess) s->ort->api->ReleaseSession(s->sess);
    onp_strmap_free(&s->in_at);
    onp_strmap_free(&s->out_at);
    onp_strmap_free(&s->init_at);
    onp_arena_free(&s->arena);
    onp_ort_unref(s->ort);
    free(s);
}

// --- accessors ----------------------------------------------------------------------

const onp_session_desc *onp_session_describe(const onp_session *s)
{
    return &s->desc;
}

int onp_session_isolated(const onp_session *s)
{
    return s->worker != NULL;
}

size_t onp_session_input_count(const onp_session *s)
{
    return s->n_in;
}

size_t onp_session_output_count(const onp_session *s)
{
    return s->n_out;
}

const onp_ort_io *onp_session_input(const onp_session *s, size_t i)
{
    return i < s->n_in ? &s->in[i] : NULL;
}

const onp_ort_io *onp_session_output(const onp_session *s, size_t i)
{
    return i < s->n_out ? &s->out[i] : NULL;
}

size_t onp_session_initializer_count(const onp_session *s)
{
    return s->n_init;
}

const onp_ort_io *onp_session_initializer(const onp_session *s, size_t i)
{
    return i < s->n_init ? &s->init[i] : NULL;
}

static int index_io(onp_strmap *m, const onp_ort_io *io, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (io[i].name && !onp_strmap_get(m, io[i].name, NULL) && onp_strmap_put(m, io[i].name, i))
            return -1;
    return 0;
}

int onp_session_index_names(onp_session *s)
{
    return index_io(&s->in_at, s->in, s->n_in) || index_io(&s->out_at, s->out, s->n_out) ||
                   index_io(&s->init_at, s->init, s->n_init)
               ? -1
               : 0;
}

static long find_io(const onp_strmap *m, const char *name)
{
    size_t i;
    return name && onp_strmap_get(m, name, &i) ? (long)i : -1;
}

long onp_session_find_input(const onp_session *s, const char *name)
{
    return find_io(&s->in_at, name);
}

long onp_session_find_output(const onp_session *s, const char *name)
{
    return find_io(&s->out_at, name);
}

long onp_session_find_initializer(const onp_session *s, const char *name)
{
    return find_io(&s->init_at, name);
}

char *onp_ort_io_str(const onp_ort_io *io, char *buf, size_t n)
{
    static const char *const kinds[] = {"unknown", "tensor",        "sequence", "map",
                                        "opaque",  "sparse tensor", "optional"};
    if (!n) return buf;
    buf[0] = '\0';
    if (io->kind != ONP_ORT_KIND_TENSOR && io->kind != ONP_ORT_KIND_OPTIONAL &&
        io->kind != ONP_ORT_KIND_SPARSE) {
        snprintf(buf, n, "%s", (unsigned)io->kind < 7 ? kinds[io->kind] : "unknown");
        return buf;
    }
    size_t k = 0;
    const char *dn = onp_dtype_name(io->dtype);
    int w;
    if (io->kind != ONP_ORT_KIND_TENSOR)
        w = snprintf(buf, n, "%s of ", kinds[io->kind]);
    else
        w = 0;
    k = w > 0 ? (size_t)w : 0;
    if (k < n) {
        if (strcmp(dn, "?"))
            w = snprintf(buf + k, n - k, "%s [", dn);
        else
            w = snprintf(buf + k, n - k, "dtype(%d) [", (int)io->dtype);
        k += w > 0 ? (size_t)w : 0;
    }
    for (int d = 0; d < io->rank && k < n; d++) {
        const char *sep = d ? ", " : "";
        if (io->dims[d] >= 0)
            w = snprintf(buf + k, n - k, "%s%" PRId64, sep, io->dims[d]);
        else
            w = snprintf(buf + k, n - k, "%s%s", sep, io->dim_names[d] ? io->dim_names[d] : "?");
        k += w > 0 ? (size_t)w : 0;
    }
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}
