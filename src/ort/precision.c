/*
 * precision.c — the precision a target computes in (precision.h): one
 * reader per execution provider over its options by name, the provider's
 * documented defaults, and the host facts a default depends on.  Pure: no
 * ONNX Runtime call (it runs in unit tests without a library), so the CUDA
 * and TensorRT rules are tested where no GPU is.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "onnxparity/json.h"
#include "onnxparity/precision.h"

// --- kinds -----------------------------------------------------------------------

static const struct {
    const char *name;
    double eps;
} kinds[] = {
    {"fp32", 0x1p-23},
    {"tf32", 0x1p-10},
    {"fp16", 0x1p-10},
    {"bf16", 0x1p-7},
};
_Static_assert(sizeof kinds / sizeof *kinds == ONP_PREC_KIND_COUNT, "kinds");

const char *onp_precision_kind_name(onp_precision_kind k)
{
    return (unsigned)k < ONP_PREC_KIND_COUNT ? kinds[k].name : "?";
}

double onp_precision_eps(onp_precision_kind k)
{
    return (unsigned)k < ONP_PREC_KIND_COUNT ? kinds[k].eps : 0;
}

void onp_precision_host_probe(onp_precision_host *h)
{
    memset(h, 0, sizeof *h);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[8192];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            /* whole words only: " amx_bf16 " */
            for (char *p = strstr(line, "amx_bf16"); p; p = strstr(p + 1, "amx_bf16"))
                if (p[-1] == ' ' && (p[8] == ' ' || p[8] == '\n' || !p[8])) h->cpu_amx_bf16 = 1;
            break;
        }
    fclose(f);
}

static const char *const matmul_ops[] = {
    "Conv",
    "ConvTranspose",
    "ConvInteger",
    "MatMul",
    "MatMulInteger",
    "Gemm",
    "Einsum",
    "FusedConv",
    "FusedMatMul",
    "FusedGemm",
    "Attention",
    "MultiHeadAttention",
    "GroupQueryAttention",
    "QLinearConv",
    "QLinearMatMul",
    "NhwcConv",
    "RNN",
    "GRU",
    "LSTM",
};

int onp_precision_matmul_class(const char *op_type)
{
    if (!op_type) return 0;
    for (size_t i = 0; i < sizeof matmul_ops / sizeof *matmul_ops; i++)
        if (!strcmp(op_type, matmul_ops[i])) return 1;
    return 0;
}

// --- options by name -------------------------------------------------------------

/* The value of option `key` in a "KEY=VALUE" list, or NULL (the last one given
 * wins, as ORT's maps keep it). */
static const char *opt(const char *const *kv, size_t n, const char *key)
{
    const char *v = NULL;
    size_t k = strlen(key);
    for (size_t i = 0; i < n; i++)
        if (kv[i] && !strncmp(kv[i], key, k) && kv[i][k] == '=') v = kv[i] + k + 1;
    return v;
}

static int truthy(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true"));
}

static void lower_to(onp_precision *p, onp_precision_kind k, int from_default, const char *fix,
                     const char *setting_fmt, const char *a, const char *b)
{
    p->kind = k;
    p->from_default = from_default;
    snprintf(p->setting, sizeof p->setting, setting_fmt, a ? a : "", b ? b : "");
    snprintf(p->fix, sizeof p->fix, "%s", fix);
}

typedef struct reader_ctx {
    const char *const *po; /* provider options */
    size_t n_po;
    const char *const *cfg; /* session config */
    size_t n_cfg;
    const onp_precision_host *host;
} reader_ctx;

// --- OpenVINO --------------------------------------------------------------------

/* The device precision applies on: the first device of "AUTO:GPU,CPU",
 * "HETERO:..." or "MULTI:...", without ".N"; "CPU" by default. */
static void ov_device(const char *device_type, char *dev, size_t n)
{
    const char *d = device_type && *device_type ? device_type : "CPU";
    const char *colon = strchr(d, ':');
    if (colon) d = colon + 1;
    size_t k = strcspn(d, ",.:_ ");
    snprintf(dev, n, "%.*s", (int)k, d);
}

/* INFERENCE_PRECISION_HINT / EXECUTION_MODE_HINT of device `dev` in a
 * load_config JSON object ({"CPU": {"INFERENCE_PRECISION_HINT": "bf16"}}). */
static int ov_load_config(const char *json, const char *dev, char *hint, size_t nh, char *mode,
                          size_t nm, onp_error *e)
{
    hint[0] = mode[0] = 0;
    if (!json) return 0;
    cJSON *doc = onp_json_parse(json, strlen(json), NULL, ONP_ERR_USAGE,
                                "OpenVINOExecutionProvider option load_config: not valid JSON", e);
    if (!doc) return -1;
    const cJSON *d = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, dev) : NULL;
    const cJSON *h = d ? cJSON_GetObjectItemCaseSensitive(d, "INFERENCE_PRECISION_HINT") : NULL;
    const cJSON *m = d ? cJSON_GetObjectItemCaseSensitive(d, "EXECUTION_MODE_HINT") : NULL;
    if (cJSON_IsString(h)) snprintf(hint, nh, "%s", h->valuestring);
    if (cJSON_IsString(m)) snprintf(mode, nm, "%s", m->valuestring);
    cJSON_Delete(doc);
    return 0;
}

static int read_openvino(const reader_ctx *c, onp_precision *p, onp_error *e)
{
    char dev[32], hint[32], mode[32];
    const char *dt = opt(c->po, c->n_po, "device_type");
    ov_device(dt, dev, sizeof dev);
    int gpu_like = !strcasecmp(dev, "GPU") || !strcasecmp(dev, "NPU");
    int cpu = !strcasecmp(dev, "CPU");
    char fix[512];
    snprintf(fix, sizeof fix,
             "keep float32: --provider-opt 'load_config={\"%s\":{\"INFERENCE_PRECISION_HINT\":"
             "\"f32\"}}' (or precision=ACCURACY)",
             dev);
    /* the legacy device_type with a precision: "GPU_FP16", "CPU_FP32" */
    if (dt && strstr(dt, "_FP16")) {
        lower_to(p, ONP_PREC_FP16, 0, fix, "device_type=%s%s", dt, NULL);
        return 0;
    }
    const char *prec = opt(c->po, c->n_po, "precision");
    if (prec) {
        int ok = !strcasecmp(prec, "FP32") || !strcasecmp(prec, "ACCURACY") ||
                 (!cpu && !strcasecmp(prec, "FP16"));
        if (!ok)
            return onp_error_set(
                e, ONP_ERR_USAGE, NULL, "precision", -1,
                "OpenVINOExecutionProvider option precision=%s: the %s device accepts %s; a "
                "precision hint goes through load_config={\"%s\":{\"INFERENCE_PRECISION_HINT\":"
                "\"bf16\"}} (f32, f16 or bf16)",
                prec, dev, cpu ? "FP32 or ACCURACY" : "FP32, FP16 or ACCURACY", dev);
    }
    if (ov_load_config(opt(c->po, c->n_po, "load_config"), dev, hint, sizeof hint, mode,
                       sizeof mode, e))
        return -1;
    if (hint[0] && strcasecmp(hint, "f32") && strcasecmp(hint, "f16") && strcasecmp(hint, "bf16"))
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "load_config", -1,
                             "OpenVINOExecutionProvider option load_config: %s "
                             "INFERENCE_PRECISION_HINT \"%s\": OpenVINO accepts f32, f16 or bf16",
                             dev, hint);
    /* what keeps float32, strongest first: the ACCURACY execution mode, an f32
     * hint, precision=FP32/ACCURACY */
    if (!strcasecmp(mode, "ACCURACY") || !strcasecmp(hint, "f32")) return 0;
    if (hint[0]) {
        /* OpenVINO's CPU plugin runs an f16 hint as bf16 where the CPU has no
         * f16 arithmetic (measured: the same errors as bf16 on an avx512_bf16
         * CPU): judged as the coarser of the two */
        onp_precision_kind k = !strcasecmp(hint, "f16") && !cpu ? ONP_PREC_FP16 : ONP_PREC_BF16;
        lower_to(p, k, 0, fix, "load_config %s.INFERENCE_PRECISION_HINT=%s", dev, hint);
        if (cpu && !strcasecmp(hint, "f16"))
            snprintf(p->setting + strlen(p->setting), sizeof p->setting - strlen(p->setting),
                     " (the CPU plugin computes f16 or bf16, as the CPU allows)");
        return 0;
    }
    if (prec && (!strcasecmp(prec, "FP32") || !strcasecmp(prec, "ACCURACY"))) return 0;
    if (prec) {
        lower_to(p, ONP_PREC_FP16, 0, fix, "precision=%s%s", prec, NULL);
        return 0;
    }
    if (gpu_like)
        lower_to(p, ONP_PREC_FP16, 1, fix, "device_type=%s: f16, the %s plugin's default", dev,
                 dev);
    else if (cpu && c->host->cpu_amx_bf16)
        lower_to(p, ONP_PREC_BF16, 1, fix,
                 "bf16, OpenVINO's CPU plugin default on a CPU with AMX (this one: amx_bf16)%s%s",
                 NULL, NULL);
    return 0;
}

// --- CUDA, TensorRT, QNN, CPU ------------------------------------------------------

static int read_cuda(const reader_ctx *c, onp_precision *p, onp_error *e)
{
    const char *v = opt(c->po, c->n_po, "use_tf32");
    if (v && strcmp(v, "0") && strcmp(v, "1"))
        return onp_error_set(e, ONP_ERR_USAGE, NULL, "use_tf32", -1,
                             "CUDAExecutionProvider option use_tf32=%s: it accepts 0 or 1", v);
    if (v && !strcmp(v, "0")) return 0;
    lower_to(p, ONP_PREC_TF32, !v, "keep float32: --provider-opt use_tf32=0",
             "use_tf32=1%s (TF32 on NVIDIA Ampere and later GPUs)%s",
             v ? "" : ", the CUDA provider's default", NULL);
    p->needs_hardware = 1;
    p->matmul_only = 1;
    return 0;
}

static int read_tensorrt(const reader_ctx *c, onp_precision *p, onp_error *e)
{
    (void)e;
    const char *keep = "keep float32: --provider-opt trt_fp16_enable=0 and trt_bf16_enable=0";
    if (truthy(opt(c->po, c->n_po, "trt_bf16_enable")))
        lower_to(p, ONP_PREC_BF16, 0, keep, "trt_bf16_enable=1%s%s", NULL, NULL);
    else if (truthy(opt(c->po, c->n_po, "trt_fp16_enable")))
        lower_to(p, ONP_PREC_FP16, 0, keep, "trt_fp16_enable=1%s%s", NULL, NULL);
    return 0;
}

static int read_qnn(const reader_ctx *c, onp_precision *p, onp_error *e)
{
    (void)e;
    const char *bt = opt(c->po, c->n_po, "backend_type");
    const char *bp = opt(c->po, c->n_po, "backend_path");
    int htp = (bt && !strcasecmp(bt, "htp")) || (bp && strstr(bp, "Htp"));
    const char *v = opt(c->po, c->n_po, "enable_htp_fp16_precision");
    if (htp && (!v || truthy(v)))
        lower_to(p, ONP_PREC_FP16, !v, "keep float32: --provider-opt enable_htp_fp16_precision=0",
                 "enable_htp_fp16_precision=1%s%s", v ? "" : " (the HTP backend's default)", NULL);
    return 0;
}

static int read_cpu(const reader_ctx *c, onp_precision *p, onp_error *e)
{
    (void)e;
    if (truthy(opt(c->cfg, c->n_cfg, "mlas.enable_gemm_fastmath_arm64_bfloat16"))) {
        lower_to(p, ONP_PREC_BF16, 0,
                 "keep float32: drop --session-config "
                 "mlas.enable_gemm_fastmath_arm64_bfloat16=1",
                 "session config mlas.enable_gemm_fastmath_arm64_bfloat16=1 (arm64 GEMM in "
                 "bf16)%s%s",
                 NULL, NULL);
        p->matmul_only = 1;
        p->needs_hardware = 1;
    }
    return 0;
}

/* How to add a provider: a reader (options by name -> lower_to, or an
 * ONP_ERR_USAGE naming the option and what it accepts for a value the
 * provider refuses) and a row: the short name, ORT's name. */
static const struct {
    const char *name, *ort;
    int (*read)(const reader_ctx *, onp_precision *, onp_error *);
} readers[] = {
    {"cpu", "CPUExecutionProvider", read_cpu},
    {"openvino", "OpenVINOExecutionProvider", read_openvino},
    {"cuda", "CUDAExecutionProvider", read_cuda},
    {"tensorrt", "TensorrtExecutionProvider", read_tensorrt},
    {"qnn", "QNNExecutionProvider", read_qnn},
};

int onp_precision_of(const char *provider, const char *const *provider_opts, size_t n_provider_opts,
                     const char *const *config, size_t n_config, const onp_precision_host *host,
                     onp_precision *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    out->kind = ONP_PREC_FP32;
    onp_precision_host probed;
    if (!host) {
        onp_precision_host_probe(&probed);
        host = &probed;
    }
    const char *name = provider && *provider ? provider : "cpu";
    reader_ctx c = {provider_opts, n_provider_opts, config, n_config, host};
    int rc = 0;
    snprintf(out->provider, sizeof out->provider, "%s", name);
    for (size_t i = 0; i < sizeof readers / sizeof *readers; i++)
        if (!strcasecmp(name, readers[i].name) || !strcasecmp(name, readers[i].ort) ||
            (!strncasecmp(name, readers[i].ort, strlen(name)) &&
             !strcasecmp(readers[i].ort + strlen(name), "ExecutionProvider"))) {
            snprintf(out->provider, sizeof out->provider, "%s", readers[i].ort);
            rc = readers[i].read(&c, out, e);
            break;
        }
    out->eps = onp_precision_eps(out->kind);
    out->lowered = out->kind != ONP_PREC_FP32;
    if (!out->lowered) out->setting[0] = out->fix[0] = 0;
    return rc;
}
