/*
 * precision.h — the arithmetic precision a target computes a float32 model
 * in, read from its execution provider, the provider's options, the session
 * configuration and the provider's documented defaults.  A provider may
 * lower precision without a cast in the graph: OpenVINO's inference
 * precision hint (bf16 by default on CPUs with AMX, f16 on its GPU and NPU
 * plugins), CUDA's TF32 (use_tf32, on by default, on Ampere and later),
 * TensorRT's fp16/bf16 switches, QNN's HTP fp16.  What it finds is evidence
 * for the cause `reduced-precision` (causes.h) and the factor the noise
 * envelope of such a target is scaled by (judge.h): "as accurate as bf16
 * allows" is told from "beyond bf16" (docs/diagnose.md, "Precision of a
 * target").
 *
 * The rules are a table of readers, one per provider (src/ort/precision.c,
 * "how to add a provider" above it); each reads options by name and never
 * loads ORT, so the CUDA rules are tested on a machine without a GPU
 * (tests/unit/test_precision.c).  An option the reader does not know is
 * left to the provider (ORT refuses what the EP refuses; ort_ep.c names
 * it); a value of a known option the provider does not accept is refused
 * here, naming the option and what it accepts.
 *
 * Worked example:
 *     const char *opts[] = {"load_config={\"CPU\":{\"INFERENCE_PRECISION_HINT\":\"bf16\"}}"};
 *     onp_precision p;
 *     if (onp_precision_of("openvino", opts, 1, NULL, 0, NULL, &p, &e) == 0 && p.lowered)
 *         printf("%s: %s (fix: %s)\n", onp_precision_kind_name(p.kind), p.setting, p.fix);
 *     // bf16: OpenVINOExecutionProvider load_config CPU.INFERENCE_PRECISION_HINT=bf16
 *
 * Depends on util only (the JSON reader for OpenVINO's load_config); never
 * prints.
 */
#ifndef ONNXPARITY_PRECISION_H
#define ONNXPARITY_PRECISION_H

#include <stddef.h>

#include "onnxparity/error.h"

/* The precision float32 arithmetic is done in.  How to add one: a value
 * here and a row in kinds[] (src/ort/precision.c: name, epsilon). */
typedef enum onp_precision_kind {
    ONP_PREC_FP32 = 0, /* float32: nothing lowered */
    ONP_PREC_TF32,     /* TensorFloat-32: matmul-class inputs rounded to 10 mantissa bits */
    ONP_PREC_FP16,     /* float16 arithmetic */
    ONP_PREC_BF16,     /* bfloat16 arithmetic */
    ONP_PREC_KIND_COUNT
} onp_precision_kind;

/* "fp32", "tf32", "fp16", "bf16"; "?" out of range. */
const char *onp_precision_kind_name(onp_precision_kind k);

/* The machine epsilon of kind k, as onp_dtype_eps gives a dtype's (fp32
 * 2^-23, tf32 2^-10, fp16 2^-10, bf16 2^-7); 0 out of range. */
double onp_precision_eps(onp_precision_kind k);

/* What the host offers that a provider's default depends on (OpenVINO's CPU
 * plugin computes bf16 by default where the CPU has AMX). */
typedef struct onp_precision_host {
    int cpu_amx_bf16; /* 1: the CPU has AMX-BF16 (x86 flag amx_bf16) */
} onp_precision_host;

/* The host this process runs on (/proc/cpuinfo's flags; all 0 where it
 * cannot be read). */
void onp_precision_host_probe(onp_precision_host *h);

typedef struct onp_precision {
    onp_precision_kind kind;
    double eps;         /* onp_precision_eps(kind) */
    int lowered;        /* kind != FP32 */
    int from_default;   /* no option asked for it: the provider's default (on this host) */
    int needs_hardware; /* lowered only where the device supports it (TF32: NVIDIA Ampere and
                           later); the setting says which */
    int matmul_only;    /* only matmul-class ops (Conv, MatMul, Gemm, ...) lose precision
                           (TF32); 0: every op may run at that precision (OpenVINO bf16) */
    char provider[64];  /* ORT's name: "OpenVINOExecutionProvider" */
    char setting[256];  /* what lowers it: "load_config CPU.INFERENCE_PRECISION_HINT=bf16",
                           "use_tf32=1 (the CUDA provider's default)"; "" when FP32 */
    char fix[512];      /* the provider option that keeps float32, "" when FP32 */
} onp_precision;

/* The precision of a target: `provider` as onp_session_opts gives it (NULL,
 * "" or "cpu": ORT's CPU provider; a short or full name, any case),
 * provider options and session configuration entries ("KEY=VALUE" each),
 * `host` (NULL: onp_precision_host_probe's).  Fills *out (FP32 when nothing
 * lowers it).  Returns 0, or -1 with e set (ONP_ERR_USAGE) when a known
 * option has a value the provider does not accept: the message names the
 * provider, the option and the values it accepts
 * ("OpenVINOExecutionProvider option precision=BF16: the CPU device accepts
 * FP32 or ACCURACY (...)"). */
int onp_precision_of(const char *provider, const char *const *provider_opts, size_t n_provider_opts,
                     const char *const *config, size_t n_config, const onp_precision_host *host,
                     onp_precision *out, onp_error *e);

/* Whether ONNX op_type (default domain or com.microsoft) is matmul-class:
 * an op whose float32 inputs a reduced-precision provider rounds first
 * (Conv, ConvTranspose, MatMul, Gemm, Einsum, Attention, ...). */
int onp_precision_matmul_class(const char *op_type);

#endif
