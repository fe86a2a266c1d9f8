/*
 * test_probe.c — the sweep's evidence across configurations
 * (onp_sweep_cross_check, include/onnxparity/probe.h) on results built by
 * hand: no ONNX Runtime needed, and the CPU-only ORT here cannot produce a
 * second provider that disagrees.
 *
 * Matrix layout: library-major, n_providers configurations per library.
 */
#include <string.h>

#include "onnxparity/probe.h"
#include "testhelp.h"

#define MAXC 6

typedef struct fake {
    onp_sweep_result r;
    onp_sweep_config c[MAXC];
    onp_sweep_level lv[MAXC][ONP_SWEEP_LEVELS];
} fake;

/* n_lib x n_prov configurations, every level ran and passes. */
static void fake_init(fake *f, size_t n_lib, size_t n_prov, const char *const *providers)
{
    memset(f, 0, sizeof *f);
    f->r.configs = f->c;
    f->r.n_configs = n_lib * n_prov;
    for (size_t i = 0; i < f->r.n_configs; i++) {
        onp_sweep_config *c = &f->c[i];
        c->library = i / n_prov;
        snprintf(c->provider, sizeof c->provider, "%s", providers[i % n_prov]);
        snprintf(c->ort_version, sizeof c->ort_version, "1.%zu.0", 29 + c->library);
        snprintf(c->ort_library, sizeof c->ort_library, "/lib%zu/libonnxruntime.so.1", c->library);
        c->available = 1;
        c->levels = f->lv[i];
        for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
            f->lv[i][l].level = (onp_ort_opt_level)(ONP_ORT_OPT_DISABLE + l);
            f->lv[i][l].ran = f->lv[i][l].pass = 1;
        }
    }
}

static void test_agreement(void)
{
    const char *p[] = {"CPUExecutionProvider", "CUDAExecutionProvider"};
    fake f;
    fake_init(&f, 2, 2, p);
    onp_sweep_cross_check(&f.r, 2);
    CHECK(!f.r.ep_disagree && !f.r.lib_disagree);
    CHECK(!f.r.ep_note[0] && !f.r.lib_note[0]);
}

static void test_provider_fails_where_cpu_passes(void)
{
    const char *p[] = {"CUDAExecutionProvider", "CPUExecutionProvider"};
    fake f;
    fake_init(&f, 1, 2, p);
    f.lv[0][4].pass = 0; /* CUDA fails at all; the CPU (second) is the reference */
    f.lv[0][3].pass = 0; /* ... and at layout: the first level is the one named */
    onp_sweep_cross_check(&f.r, 2);
    CHECK(f.r.ep_disagree);
    CHECK(!strcmp(f.r.ep_provider, "CUDAExecutionProvider"));
    CHECK(f.r.ep_level == 3);
    CHECKF(strstr(f.r.ep_note, "CPUExecutionProvider passes") &&
               strstr(f.r.ep_note, "CUDAExecutionProvider fails") && strstr(f.r.ep_note, "layout"),
           "%s", f.r.ep_note);
    /* a stale result is cleared when asked again after a fix */
    f.lv[0][4].pass = f.lv[0][3].pass = 1;
    onp_sweep_cross_check(&f.r, 2);
    CHECK(!f.r.ep_disagree && !f.r.ep_note[0]);
}

static void test_cpu_fails_where_provider_passes(void)
{
    const char *p[] = {"CPUExecutionProvider", "DnnlExecutionProvider"};
    fake f;
    fake_init(&f, 1, 2, p);
    f.lv[0][0].pass = 0;
    onp_sweep_cross_check(&f.r, 2);
    CHECK(f.r.ep_disagree && f.r.ep_level == 0);
    CHECK(!strcmp(f.r.ep_provider, "DnnlExecutionProvider"));
}

static void test_unavailable_or_not_run_is_no_evidence(void)
{
    const char *p[] = {"CPUExecutionProvider", "CUDAExecutionProvider"};
    fake f;
    fake_init(&f, 1, 2, p);
    f.c[1].available = 0; /* no CUDA here: its cells say nothing */
    for (int l = 0; l < ONP_SWEEP_LEVELS; l++) f.lv[1][l].ran = f.lv[1][l].pass = 0;
    onp_sweep_cross_check(&f.r, 2);
    CHECK(!f.r.ep_disagree);
    fake_init(&f, 1, 2, p);
    f.lv[1][2].ran = f.lv[1][2].pass = 0; /* one level refused: not a disagreement */
    onp_sweep_cross_check(&f.r, 2);
    CHECK(!f.r.ep_disagree);
}

static void test_no_cpu_uses_first_available(void)
{
    const char *p[] = {"CUDAExecutionProvider", "TensorrtExecutionProvider"};
    fake f;
    fake_init(&f, 1, 2, p);
    f.lv[1][4].pass = 0;
    onp_sweep_cross_check(&f.r, 2);
    CHECK(f.r.ep_disagree && !strcmp(f.r.ep_provider, "TensorrtExecutionProvider"));
}

static void test_libraries_disagree(void)
{
    const char *p[] = {"CPUExecutionProvider"};
    fake f;
    fake_init(&f, 3, 1, p);
    f.lv[2][1].pass = 0; /* the third library fails at basic */
    onp_sweep_cross_check(&f.r, 1);
    CHECK(f.r.lib_disagree && !f.r.ep_disagree);
    CHECKF(strstr(f.r.lib_note, "basic") && strstr(f.r.lib_note, "1.31.0") &&
               strstr(f.r.lib_note, "(/lib2/libonnxruntime.so.1) fails"),
           "%s", f.r.lib_note);
}

static void test_bad_shape_finds_nothing(void)
{
    const char *p[] = {"CPUExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"};
    fake f;
    fake_init(&f, 1, 3, p);
    f.lv[1][0].pass = 0;
    onp_sweep_cross_check(&f.r, 2); /* 3 configurations are not 2 per library */
    CHECK(!f.r.ep_disagree && !f.r.lib_disagree);
    onp_sweep_cross_check(&f.r, 0);
    CHECK(!f.r.ep_disagree);
}

TEST_MAIN(test_agreement, test_provider_fails_where_cpu_passes,
          test_cpu_fails_where_provider_passes, test_unavailable_or_not_run_is_no_evidence,
          test_no_cpu_uses_first_available, test_libraries_disagree, test_bad_shape_finds_nothing)
