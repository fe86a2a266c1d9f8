/*
 * ort_ep.c — execution providers: the names a user may give ("cuda"), ORT's
 * names for them ("CUDAExecutionProvider"), and the ORT call that adds each
 * one to a session's options.  Whether a provider is present is decided by
 * the loaded library (GetAvailableProviders), never by this table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ort/ort_internal.h"

#define EP_SUFFIX "ExecutionProvider"

/* How a provider is appended to OrtSessionOptions. */
typedef enum ep_append {
    EP_NONE,     /* always present: nothing to append (CPU) */
    EP_CUDA,     /* SessionOptionsAppendExecutionProvider_CUDA_V2 */
    EP_TENSORRT, /* SessionOptionsAppendExecutionProvider_TensorRT_V2 */
    EP_DNNL,     /* SessionOptionsAppendExecutionProvider_Dnnl */
    EP_GENERIC   /* SessionOptionsAppendExecutionProvider(generic, ...) */
} ep_append;

typedef struct ep_row {
    const char *name;    /* what users type, lower case */
    const char *ort;     /* ORT's name, as GetAvailableProviders spells it */
    ep_append append;    /* which ORT call adds it */
    const char *generic; /* EP_GENERIC: the name that call accepts */
} ep_row;

/* How to add a provider: one row.  `append` is EP_GENERIC when ORT's
 * SessionOptionsAppendExecutionProvider accepts it (see the list above that
 * function in onnxruntime_c_api.h), otherwise a new ep_append value and a
 * case in onp_ort_ep_append that calls the dedicated function.  A provider
 * the library lists but this table lacks is tried through the generic call
 * under its own name. */
static const ep_row ep_table[] = {
    {"cpu", "CPUExecutionProvider", EP_NONE, NULL},
    {"cuda", "CUDAExecutionProvider", EP_CUDA, NULL},
    {"tensorrt", "TensorrtExecutionProvider", EP_TENSORRT, NULL},
    {"dnnl", "DnnlExecutionProvider", EP_DNNL, NULL},
    {"openvino", "OpenVINOExecutionProvider", EP_GENERIC, "OpenVINO"},
    {"xnnpack", "XnnpackExecutionProvider", EP_GENERIC, "XNNPACK"},
    {"qnn", "QNNExecutionProvider", EP_GENERIC, "QNN"},
    {"coreml", "CoreMLExecutionProvider", EP_GENERIC, "CoreML"},
    {"webgpu", "WebGpuExecutionProvider", EP_GENERIC, "WebGPU"},
    {"webnn", "WebNNExecutionProvider", EP_GENERIC, "WEBNN"},
    {"vitisai", "VitisAIExecutionProvider", EP_GENERIC, "VitisAI"},
    {"azure", "AzureExecutionProvider", EP_GENERIC, "AZURE"},
    {"js", "JsExecutionProvider", EP_GENERIC, "JS"},
};
#define EP_ROWS (sizeof ep_table / sizeof ep_table[0])

/* 1 when `name` equals `full` or `full` without its "ExecutionProvider"
 * suffix, ignoring case. */
static int ep_name_match(const char *name, const char *full)
{
    if (!strcasecmp(name, full)) return 1;
    size_t n = strlen(full), s = strlen(EP_SUFFIX);
    return n > s && !strcmp(full + n - s, EP_SUFFIX) && strlen(name) == n - s &&
           !strncasecmp(name, full, n - s);
}

static const ep_row *ep_find(const char *name)
{
    for (size_t i = 0; i < EP_ROWS; i++)
        if (!strcasecmp(name, ep_table[i].name) || ep_name_match(name, ep_table[i].ort))
            return &ep_table[i];
    return NULL;
}

const char *onp_ort_ep_canonical(const onp_ort *ort, const char *name)
{
    if (!name || !*name) return "CPUExecutionProvider";
    const ep_row *r = ep_find(name);
    if (r) return r->ort;
    for (size_t i = 0; i < ort->n_providers; i++)
        if (ep_name_match(name, ort->providers[i])) return ort->providers[i];
    return NULL;
}

/* Provider options as parallel key / value arrays. */
typedef struct kv_list {
    size_t n;
    char **keys;         /* [n] owned */
    const char **values; /* [n] views into the caller's strings */
} kv_list;

static void kv_free(kv_list *kv)
{
    for (size_t i = 0; i < kv->n; i++) free(kv->keys[i]);
    free(kv->keys);
    free(kv->values);
    memset(kv, 0, sizeof *kv);
}

static int kv_parse(const onp_session_opts *o, kv_list *kv, onp_error *e)
{
    memset(kv, 0, sizeof *kv);
    size_t n = o->n_provider_opts;
    if (!n) return 0;
    kv->keys = calloc(n, sizeof *kv->keys);
    kv->values = calloc(n, sizeof *kv->values);
    if (!kv->keys || !kv->values) {
        kv_free(kv);
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (onp_ort_split_kv(o->provider_opts[i], "provider option", &kv->keys[i], &kv->values[i],
                             e)) {
            kv_free(kv);
            return -1;
        }
        kv->n++;
    }
    return 0;
}

static int append_cuda(onp_ort *ort, OrtSessionOptions *so, const kv_list *kv, const char *file,
                       onp_error *e)
{
    const OrtApi *api = ort->api;
    OrtCUDAProviderOptionsV2 *po = NULL;
    int rc = onp_ort_status(ort, api->CreateCUDAProviderOptions(&po), "CreateCUDAProviderOptions",
                            file, e);
    if (!rc && kv->n)
        rc = onp_ort_status(
            ort,
            api->UpdateCUDAProviderOptions(po, (const char *const *)kv->keys, kv->values, kv->n),
            "UpdateCUDAProviderOptions", file, e);
    if (!rc)
        rc = onp_ort_status(ort, api->SessionOptionsAppendExecutionProvider_CUDA_V2(so, po),
                            "SessionOptionsAppendExecutionProvider_CUDA_V2", file, e);
    if (po) api->ReleaseCUDAProviderOptions(po);
    return rc;
}

static int append_tensorrt(onp_ort *ort, OrtSessionOptions *so, const kv_list *kv, const char *file,
                           onp_error *e)
{
    const OrtApi *api = ort->api;
    OrtTensorRTProviderOptionsV2 *po = NULL;
    int rc = onp_ort_status(ort, api->CreateTensorRTProviderOptions(&po),
                            "CreateTensorRTProviderOptions", file, e);
    if (!rc && kv->n)
        rc = onp_ort_status(ort,
                            api->UpdateTensorRTProviderOptions(po, (const char *const *)kv->keys,
                                                               kv->values, kv->n),
                            "UpdateTensorRTProviderOptions", file, e);
    if (!rc)
        rc = onp_ort_status(ort, api->SessionOptionsAppendExecutionProvider_TensorRT_V2(so, po),
                            "SessionOptionsAppendExecutionProvider_TensorRT_V2", file, e);
    if (po) api->ReleaseTensorRTProviderOptions(po);
    return rc;
}

static int append_dnnl(onp_ort *ort, OrtSessionOptions *so, const kv_list *kv, const char *file,
                       onp_error *e)
{
    const OrtApi *api = ort->api;
    OrtDnnlProviderOptions *po = NULL;
    int rc = onp_ort_status(ort, api->CreateDnnlProviderOptions(&po), "CreateDnnlProviderOptions",
                            file, e);
    if (!rc && kv->n)
        rc = onp_ort_status(
            ort,
            api->UpdateDnnlProviderOptions(po, (const char *const *)kv->keys, kv->values, kv->n),
            "UpdateDnnlProviderOptions", file, e);
    if (!rc)
        rc = onp_ort_status(ort, api->SessionOptionsAppendExecutionProvider_Dnnl(so, po),
                            "SessionOptionsAppendExecutionProvider_Dnnl", file, e);
    if (po) api->ReleaseDnnlProviderOptions(po);
    return rc;
}

/* The option names a provider documents, for the message when ORT refuses
 * to add it ("Failed to load provider OpenVINO" says neither which option
 * nor what is accepted).  Only read after a refusal: a name missing here
 * never refuses anything.  How to add one: a row, the names as the
 * provider's documentation of the ORT version below gives them. */
static const struct {
    const char *ort;
    const char *const names[24];
} ep_known_opts[] = {
    {"OpenVINOExecutionProvider", /* ONNX Runtime 1.24's OpenVINO provider */
     {"device_type", "precision", "num_of_threads", "num_streams", "cache_dir", "load_config",
      "context", "enable_opencl_throttling", "enable_qdq_optimizer", "disable_dynamic_shapes",
      "model_priority", "enable_causallm", "reshape_input", "layout", "device_id",
      "enable_npu_fast_compile", "device_luid", NULL}},
};

/* e (ORT's refusal to add provider `full`) gains what the option table and
 * ORT's log say: an option the provider does not document, with the ones it
 * does; the log lines ORT wrote while refusing. */
static void ep_explain(const char *full, const kv_list *kv, onp_error *e)
{
    char more[768] = "";
    size_t u = 0;
    for (size_t t = 0; t < sizeof ep_known_opts / sizeof *ep_known_opts; t++) {
        if (strcmp(ep_known_opts[t].ort, full)) continue;
        for (size_t i = 0; i < kv->n; i++) {
            int known = 0;
            for (const char *const *n = ep_known_opts[t].names; *n && !known; n++)
                known = !strcmp(*n, kv->keys[i]);
            if (known) continue;
            u += (size_t)snprintf(more + u, sizeof more - u, "; %s has no option '%s' (it accepts",
                                  full, kv->keys[i]);
            for (const char *const *n = ep_known_opts[t].names; *n && u < sizeof more; n++)
                u += (size_t)snprintf(more + u, sizeof more - u, "%s%s",
                                      n == ep_known_opts[t].names ? " " : ", ", *n);
            if (u < sizeof more) u += (size_t)snprintf(more + u, sizeof more - u, ")");
            break;
        }
    }
    char log[512];
    if (onp_ort_log_take(log, sizeof log) && u < sizeof more) {
        for (char *c = log; *c; c++)
            if (*c == '\n') *c = ' ';
        u += (size_t)snprintf(more + u, sizeof more - u, "; ORT logged: %s", log);
    }
    if (!more[0] && u < sizeof more) {
        u += (size_t)snprintf(more + u, sizeof more - u, "; %s with options:", full);
        for (size_t i = 0; i < kv->n && u < sizeof more; i++)
            u += (size_t)snprintf(more + u, sizeof more - u, " %s=%s", kv->keys[i], kv->values[i]);
        if (!kv->n && u < sizeof more) snprintf(more + u, sizeof more - u, " none");
    }
    size_t m = strlen(e->msg);
    snprintf(e->msg + m, sizeof e->msg - m, "%s", more);
}

int onp_ort_ep_append(onp_ort *ort, OrtSessionOptions *so, const onp_session_opts *o,
                      const char *file, const char **ort_name, onp_error *e)
{
    const char *name = o->provider && *o->provider ? o->provider : "cpu";
    char list[512];
    *ort_name = NULL;

    const char *full = onp_ort_ep_canonical(ort, name);
    if (!full)
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                             "unknown execution provider '%s'; ONNX Runtime %s (%s) offers: %s",
                             name, ort->version, ort->path,
                             onp_ort_provider_list(ort, list, sizeof list));
    const char *offered = NULL;
    for (size_t i = 0; i < ort->n_providers && !offered; i++)
        if (!strcmp(ort->providers[i], full)) offered = ort->providers[i];
    if (!offered)
        return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                             "execution provider '%s' (%s) is not in ONNX Runtime %s (%s), "
                             "which offers: %s",
                             name, full, ort->version, ort->path,
                             onp_ort_provider_list(ort, list, sizeof list));

    const ep_row *r = ep_find(full);
    ep_append how = r ? r->append : EP_GENERIC;
    if (how == EP_NONE) {
        if (o->n_provider_opts)
            return onp_error_set(e, ONP_ERR_USAGE, file, NULL, -1,
                                 "the %s takes no provider options", full);
        *ort_name = full;
        return 0;
    }

    kv_list kv;
    if (kv_parse(o, &kv, e)) return onp_error_set_file(e, file);
    int rc;
    switch (how) {
    case EP_CUDA: rc = append_cuda(ort, so, &kv, file, e); break;
    case EP_TENSORRT: rc = append_tensorrt(ort, so, &kv, file, e); break;
    case EP_DNNL: rc = append_dnnl(ort, so, &kv, file, e); break;
    default: {
        /* Unlisted providers go by their name without the suffix. */
        char generic[128];
        const char *g = r ? r->generic : full;
        size_t n = strlen(g), s = strlen(EP_SUFFIX);
        if (!r && n > s && !strcmp(g + n - s, EP_SUFFIX) && n - s < sizeof generic) {
            memcpy(generic, g, n - s);
            generic[n - s] = '\0';
            g = generic;
        }
        rc = onp_ort_status(ort,
                            ort->api->SessionOptionsAppendExecutionProvider(
                                so, g, (const char *const *)kv.keys, kv.values, kv.n),
                            "SessionOptionsAppendExecutionProvider", file, e);
        if (rc) ep_explain(full, &kv, e);
        break;
    }
    }
    kv_free(&kv);
    if (!rc) *ort_name = full;
    return rc;
}
