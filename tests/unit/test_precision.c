/*
 * test_precision.c — the precision of a target (precision.h) from recorded
 * option sets: OpenVINO's precision hints and defaults, CUDA's TF32 on and
 * off, TensorRT and QNN switches, the refusals that name the option and what
 * it accepts; then the cause rule over hand-made results (causes.h): a
 * target in bf16 or TF32 whose failing outputs sit in the scaled envelope
 * and whose error starts at the first matmul-class value is
 * reduced-precision with the setting named; an error beyond that precision
 * is named at its own node; a float32 target gets no such cause.  No ONNX
 * Runtime and no GPU needed: these are the CPU-side pieces of the CUDA path.
 */
#include <math.h>
#include <string.h>

#include "onnxparity/causes.h"
#include "onnxparity/precision.h"
#include "testhelp.h"

static const onp_precision_host no_amx = {0}, amx = {1};

/* The precision of provider `prov` with options opts[n] (NULL-terminated
 * list), on host h; rc the return. */
static onp_precision of(const char *prov, const char *const *opts, const onp_precision_host *h,
                        int *rc, onp_error *e)
{
    size_t n = 0;
    while (opts && opts[n]) n++;
    onp_precision p;
    onp_error_clear(e);
    *rc = onp_precision_of(prov, opts, n, NULL, 0, h, &p, e);
    return p;
}

static void test_kinds(void)
{
    CHECK(onp_precision_eps(ONP_PREC_FP32) == 0x1p-23);
    CHECK(onp_precision_eps(ONP_PREC_BF16) == 0x1p-7);
    CHECK(onp_precision_eps(ONP_PREC_TF32) == 0x1p-10);
    CHECK(onp_precision_eps(ONP_PREC_FP16) == 0x1p-10);
    CHECK(!strcmp(onp_precision_kind_name(ONP_PREC_BF16), "bf16"));
    CHECK(!strcmp(onp_precision_kind_name(ONP_PREC_KIND_COUNT), "?"));
    CHECK(onp_precision_matmul_class("Conv") && onp_precision_matmul_class("MatMul") &&
          onp_precision_matmul_class("Gemm") && onp_precision_matmul_class("FusedMatMul"));
    CHECK(!onp_precision_matmul_class("Relu") && !onp_precision_matmul_class("Softmax") &&
          !onp_precision_matmul_class(NULL));
}

static void test_openvino(void)
{
    int rc;
    onp_error e;
    onp_precision p = of("openvino", NULL, &no_amx, &rc, &e);
    CHECK(rc == 0 && !p.lowered && p.kind == ONP_PREC_FP32 && !p.setting[0] && !p.fix[0]);
    CHECK(!strcmp(p.provider, "OpenVINOExecutionProvider"));
    /* the CPU plugin's default where the CPU has AMX */
    p = of("OpenVINOExecutionProvider", NULL, &amx, &rc, &e);
    CHECK(rc == 0 && p.lowered && p.kind == ONP_PREC_BF16 && p.from_default);
    CHECK(strstr(p.setting, "AMX") != NULL);
    const char *bf16[] = {"load_config={\"CPU\":{\"INFERENCE_PRECISION_HINT\":\"bf16\"}}", NULL};
    p = of("openvino", bf16, &no_amx, &rc, &e);
    CHECK(rc == 0 && p.kind == ONP_PREC_BF16 && !p.from_default && p.eps == 0x1p-7);
    CHECKF(!strcmp(p.setting, "load_config CPU.INFERENCE_PRECISION_HINT=bf16"), "%s", p.setting);
    CHECK(strstr(p.fix, "INFERENCE_PRECISION_HINT\\\":\\\"f32") == NULL &&
          strstr(p.fix, "\"INFERENCE_PRECISION_HINT\":\"f32\"") != NULL);
    /* ACCURACY mode and an f32 hint keep float32, AMX or not */
    const char *acc[] = {"load_config={\"CPU\":{\"EXECUTION_MODE_HINT\":\"ACCURACY\"}}", NULL};
    p = of("openvino", acc, &amx, &rc, &e);
    CHECK(rc == 0 && !p.lowered);
    const char *f32[] = {"precision=FP32", NULL};
    p = of("openvino", f32, &amx, &rc, &e);
    CHECK(rc == 0 && !p.lowered);
    /* the GPU plugin's default is f16; a hint for another device is not this one's */
    const char *gpu[] = {"device_type=GPU.0",
                         "load_config={\"CPU\":{\"INFERENCE_PRECISION_HINT\":\"f32\"}}", NULL};
    p = of("openvino", gpu, &no_amx, &rc, &e);
    CHECK(rc == 0 && p.kind == ONP_PREC_FP16 && p.from_default);
    CHECK(strstr(p.fix, "\"GPU\"") != NULL);
    const char *legacy[] = {"device_type=GPU_FP16", NULL};
    p = of("openvino", legacy, &no_amx, &rc, &e);
    CHECK(rc == 0 && p.kind == ONP_PREC_FP16);
    /* f16 asked of the CPU plugin: judged as the coarser bf16 */
    const char *f16cpu[] = {"load_config={\"CPU\":{\"INFERENCE_PRECISION_HINT\":\"f16\"}}", NULL};
    p = of("openvino", f16cpu, &no_amx, &rc, &e);
    CHECK(rc == 0 && p.kind == ONP_PREC_BF16 && strstr(p.setting, "f16") != NULL);
}

static void test_openvino_refusals(void)
{
    int rc;
    onp_error e;
    const char *bf16[] = {"precision=BF16", NULL};
    of("openvino", bf16, &no_amx, &rc, &e);
    CHECK(rc == -1 && e.code == ONP_ERR_USAGE);
    CHECKF(strstr(e.msg, "OpenVINOExecutionProvider") && strstr(e.msg, "precision=BF16") &&
               strstr(e.msg, "FP32 or ACCURACY") && strstr(e.msg, "INFERENCE_PRECISION_HINT"),
           "%s", e.msg);
    const char *fp16cpu[] = {"precision=FP16", NULL};
    of("openvino", fp16cpu, &no_amx, &rc, &e);
    CHECK(rc == -1 && strstr(e.msg, "the CPU device accepts FP32 or ACCURACY"));
    const char *fp16gpu[] = {"device_type=GPU", "precision=FP16", NULL};
    onp_precision p = of("openvino", fp16gpu, &no_amx, &rc, &e);
    CHECK(rc == 0 && p.kind == ONP_PREC_FP16 && !p.from_default);
    const char *hint[] = {"load_config={\"CPU\":{\"INFERENCE_PRECISION_HINT\":\"int8\"}}", NULL};
    of("openvino", hint, &no_amx, &rc, &e);
    CHECKF(rc == -1 && strstr(e.msg, "f32, f16 or bf16") && strstr(e.msg, "int8"), "%s", e.msg);
    const char *json[] = {"load_config={\"CPU\":", NULL};
    of("openvino", json, &no_amx, &rc, &e);
    CHECKF(rc == -1 && strstr(e.msg, "load_config") && strstr(e.msg, "JSON"), "%s", e.msg);
}

/* The CUDA path, as recorded option sets: TF32 is ORT's default, 0 keeps
 * float32, anything else is refused naming what is accepted. */
static void test_cuda(void)
{
    int rc;
    onp_error e;
    onp_precision p = of("cuda", NULL, &no_amx, &rc, &e);
    CHECK(rc == 0 && p.kind == ONP_PREC_TF32 && p.from_default && p.needs_hardware &&
          p.matmul_only && p.eps == 0x1p-10);
    CHECK(!strcmp(p.provider, "CUDAExecutionProvider") && strstr(p.setting, "Ampere") &&
          strstr(p.fix, "use_tf32=0"));
    const char *on[] = {"device_id=0", "use_tf32=1", NULL};
    p = of("CUDAExecutionProvider", on, &no_amx, &rc, &e);
    CHECK(rc == 0 && p.kind == ONP_PREC_TF32 && !p.from_default);
    const char *off[] = {"use_tf32=1", "use_tf32=0", NULL}; /* the last one given wins */
    p = of("cuda", off, &no_amx, &rc, &e);
    CHECK(rc == 0 && !p.lowered);
    const char *bad[] = {"use_tf32=yes", NULL};
    of("cuda", bad, &no_amx, &rc, &e);
    CHECKF(rc == -1 && strstr(e.msg, "CUDAExecutionProvider option use_tf32=yes") &&
               strstr(e.msg, "0 or 1"),
           "%s", e.msg);
    const char *trt[] = {"trt_fp16_enable=1", NULL};
    p = of("tensorrt", trt, &no_amx, &rc, &e);
    CHECK(rc == 0 && p.kind == ONP_PREC_FP16 && strstr(p.fix, "trt_fp16_enable=0"));
    const char *qnn[] = {"backend_type=htp", NULL};
    p = of("qnn", qnn, &no_amx, &rc, &e);
    CHECK(rc == 0 && p.kind == ONP_PREC_FP16 && p.from_default);
    p = of("cpu", NULL, &amx, &rc, &e);
    CHECK(rc == 0 && !p.lowered && !strcmp(p.provider, "CPUExecutionProvider"));
    p = of(NULL, NULL, &amx, &rc, &e);
    CHECK(rc == 0 && !p.lowered);
    p = of("xnnpack", NULL, &amx, &rc, &e); /* no reader: nothing claimed */
    CHECK(rc == 0 && !p.lowered);
}

// --- the cause rule ------------------------------------------------------------------

/* A world: two fixtures failing at `gap` (scale 1) with the scaled envelope
 * `prec_env`, a bisect whose points are a Relu (exact), the first Conv at
 * rel_err `onset`, and a later Conv at rel_err `later` grown `jump` times. */
typedef struct pworld {
    onp_lint_result lint;
    onp_fixture_verdict fix[2];
    onp_output_verdict out[2];
    onp_bisect_result bis;
    onp_bisect_point pt[3];
} pworld;

static void pbuild(pworld *w, onp_evidence *ev, const onp_precision *p, double prec_env,
                   double onset, double later, double jump)
{
    memset(w, 0, sizeof *w);
    memset(ev, 0, sizeof *ev);
    ev->lint = &w->lint;
    for (int i = 0; i < 2; i++) {
        onp_output_verdict *x = &w->out[i];
        snprintf(x->name, sizeof x->name, "logits");
        x->compared = 1;
        x->m.shape_ok = x->m.dtype_ok = 1;
        x->j.verdict = ONP_VERDICT_BEYOND_NOISE;
        x->j.noise.src = ONP_NOISE_FLOAT64;
        x->j.gap_max = 0.01;
        x->j.scale_max = 1;
        x->j.envelope_max = 5e-6;
        x->j.needed_atol = 0.01;
        x->prec_envelope = prec_env;
        x->prec_within = x->j.gap_max <= prec_env;
        onp_fixture_verdict *f = &w->fix[i];
        snprintf(f->dir, sizeof f->dir, "b/test_data_set_%d", i);
        f->index = i;
        f->n_out = 1;
        f->outs = x;
        f->status = ONP_FIXTURE_FAIL;
        f->precision = *p;
    }
    ev->fixtures = w->fix;
    ev->n_fixtures = 2;
    const char *nodes[] = {"/relu/Relu", "/conv1/Conv", "/layer3/conv2/Conv"};
    const char *ops[] = {"Relu", "Conv", "Conv"};
    double rel[] = {0, onset, later};
    for (int i = 0; i < 3; i++) {
        w->pt[i].node = nodes[i];
        w->pt[i].op_type = ops[i];
        w->pt[i].value = nodes[i];
        w->pt[i].module = "";
        w->pt[i].compared = 2;
        w->pt[i].pass = i == 0;
        w->pt[i].rel_err = rel[i];
        w->pt[i].jump = i == 2 ? jump : 1e4;
    }
    w->bis.points = w->pt;
    w->bis.n_points = 3;
    w->bis.status = ONP_BISECT_DIVERGES;
    w->bis.first = 1;
    w->bis.jump_point = 1;
    ev->bisect = &w->bis;
}

static const onp_cause_item *top(const onp_causes *cs)
{
    return cs->n ? &cs->items[cs->order[0]] : NULL;
}

static int has_evidence(const onp_cause_item *c, const char *s)
{
    for (size_t i = 0; c && i < c->n_evidence; i++)
        if (strstr(c->evidence[i], s)) return 1;
    return 0;
}

static void test_rule(void)
{
    int rc;
    onp_error e;
    const char *bf16o[] = {"load_config={\"CPU\":{\"INFERENCE_PRECISION_HINT\":\"bf16\"}}", NULL};
    onp_precision bf16 = of("openvino", bf16o, &no_amx, &rc, &e);
    onp_precision tf32 = of("cuda", NULL, &no_amx, &rc, &e);
    onp_precision fp32 = of("cpu", NULL, &no_amx, &rc, &e);
    pworld w;
    onp_evidence ev;
    onp_causes *cs = NULL;

    /* bf16 as bf16 allows: reduced-precision, high, at the first Conv, the setting named */
    pbuild(&w, &ev, &bf16, 0.3, 0.003, 0.01, 2);
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    const onp_cause_item *t = top(cs);
    CHECK(t && t->id == ONP_CAUSE_REDUCED_PRECISION && t->confidence == ONP_CONFIDENCE_HIGH);
    CHECK(t && !strcmp(t->node, "/conv1/Conv"));
    CHECK(has_evidence(t, "INFERENCE_PRECISION_HINT=bf16") &&
          has_evidence(t, "first matmul-class"));
    CHECK(t && strstr(t->fix, "\"f32\"") && strstr(t->fix, "--atol"));
    CHECK(t && t->suggested_atol > 0.01);
    CHECK(!cs->items[ONP_CAUSE_UNKNOWN].present);
    onp_causes_free(cs);

    /* diagnose: the sweep's CPU column passes where the bf16 provider fails:
     * the precision's evidence, not execution-provider */
    onp_sweep_config cols[2];
    memset(cols, 0, sizeof cols);
    snprintf(cols[0].provider, sizeof cols[0].provider, "CPUExecutionProvider");
    cols[0].available = cols[0].pass = 1;
    snprintf(cols[1].provider, sizeof cols[1].provider, "OpenVINOExecutionProvider");
    cols[1].available = 1;
    onp_sweep_result sw;
    memset(&sw, 0, sizeof sw);
    sw.configs = cols;
    sw.n_configs = 2;
    sw.ep_disagree = 1;
    snprintf(sw.ep_note, sizeof sw.ep_note, "CPUExecutionProvider passes and OpenVINO fails");
    for (int lv = 0; lv < ONP_SWEEP_LEVELS; lv++) sw.levels[lv].pass = 1;
    ev.sweep = &sw;
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    t = top(cs);
    CHECK(t && t->id == ONP_CAUSE_REDUCED_PRECISION && t->confidence == ONP_CONFIDENCE_HIGH);
    CHECK(has_evidence(t, "the CPU provider passes") &&
          has_evidence(t, "what the precision explains"));
    CHECK(!cs->items[ONP_CAUSE_EXECUTION_PROVIDER].present);
    onp_causes_free(cs);
    /* beyond bf16 with the CPU passing: the provider, not the precision */
    pbuild(&w, &ev, &bf16, 0.001, 0.003, 0.01, 2);
    ev.sweep = &sw;
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    CHECK(cs->items[ONP_CAUSE_EXECUTION_PROVIDER].present &&
          cs->items[ONP_CAUSE_EXECUTION_PROVIDER].confidence == ONP_CONFIDENCE_HIGH);
    CHECK(!cs->items[ONP_CAUSE_REDUCED_PRECISION].present);
    onp_causes_free(cs);

    /* the same numbers on a float32 target: no precision claimed */
    pbuild(&w, &ev, &fp32, 0, 0.003, 0.01, 2);
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    CHECK(!cs->items[ONP_CAUSE_REDUCED_PRECISION].present);
    onp_causes_free(cs);

    /* a planted defect beyond bf16 at a later Conv: named there, not at the first */
    pbuild(&w, &ev, &bf16, 0.3, 0.003, 0.5, 60);
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    t = top(cs);
    CHECKF(t && t->id == ONP_CAUSE_UNKNOWN && !strcmp(t->node, "/layer3/conv2/Conv"), "%s at %s",
           t ? onp_cause_name(t->id) : "-", t ? t->node : "-");
    CHECK(cs->items[ONP_CAUSE_REDUCED_PRECISION].present &&
          cs->items[ONP_CAUSE_REDUCED_PRECISION].confidence == ONP_CONFIDENCE_LOW);
    onp_causes_free(cs);

    /* outputs beyond the bf16 envelope, no point to blame: not the precision alone */
    pbuild(&w, &ev, &bf16, 0.001, 0.003, 0.01, 2);
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    CHECK(!cs->items[ONP_CAUSE_REDUCED_PRECISION].present);
    t = top(cs);
    CHECK(t && t->id == ONP_CAUSE_UNKNOWN && has_evidence(t, "not the precision alone"));
    onp_causes_free(cs);

    /* the error starts at a Relu before any Conv: precision does not start there (medium) */
    pbuild(&w, &ev, &bf16, 0.3, 0.003, 0.01, 2);
    w.bis.first = 0;
    w.pt[0].pass = 0;
    w.pt[0].rel_err = 0.003;
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    CHECK(cs->items[ONP_CAUSE_REDUCED_PRECISION].present &&
          cs->items[ONP_CAUSE_REDUCED_PRECISION].confidence == ONP_CONFIDENCE_MEDIUM);
    onp_causes_free(cs);

    /* TF32 (CUDA's default): an onset far below TF32's epsilon is not TF32's */
    pbuild(&w, &ev, &tf32, 0.3, 1e-7, 1e-6, 2);
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    CHECK(cs->items[ONP_CAUSE_REDUCED_PRECISION].confidence != ONP_CONFIDENCE_HIGH);
    onp_causes_free(cs);
    pbuild(&w, &ev, &tf32, 0.3, 5e-4, 1e-3, 2);
    CHECK(onp_causes_derive(&ev, &cs, &e) == 0);
    t = top(cs);
    CHECK(t && t->id == ONP_CAUSE_REDUCED_PRECISION && t->confidence == ONP_CONFIDENCE_HIGH &&
          has_evidence(t, "use_tf32=1") && strstr(t->fix, "use_tf32=0"));
    onp_causes_free(cs);
}

TEST_MAIN(test_kinds, test_openvino, test_openvino_refusals, test_cuda, test_rule)
