/*
 * fuzz_manifest.c — libFuzzer target for parity.json manifests
 * (src/lint/manifest.c) as the lint reads them.
 *
 * The input is written to DIR/parity.json in a per-process scratch folder,
 * then onp_lint_run applies every rule to a fixed model (the example
 * bundle examples/training/model.onnx, embedded as bytes by
 * fuzz/gen_corpus.py into fuzz/manifest_model.inc: Dropout and
 * BatchNormalization in training mode, dynamic inputs) with that manifest.
 * Checks: a manifest that is not a JSON object is refused with
 * ONP_ERR_FORMAT naming the file; one that is read sets manifest_read, the
 * result is sorted, its counts add up, and every string is non-NULL.
 * Seeds: fuzz/corpus/manifest/.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_tmp.h"
#include "onnxparity/lint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENSURE(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) __builtin_trap();                                                                \
    } while (0)

static const uint8_t model_bytes[] = {
#include "manifest_model.inc"
};

static onp_model *model;
static char manifest[4200];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onp_error e;
    onp_error_clear(&e);
    if (!model) {
        if (onp_model_parse(model_bytes, sizeof model_bytes, NULL, &model, &e)) __builtin_trap();
        fz_path("parity.json", manifest, sizeof manifest);
    }
    if (fz_write("parity.json", data, size)) __builtin_trap();
    onp_lint_opts o = {.manifest = manifest};
    onp_lint_result r;
    if (onp_lint_run(model, &o, &r, &e)) {
        ENSURE(e.code == ONP_ERR_FORMAT || e.code == ONP_ERR_NOMEM || e.code == ONP_ERR_IO);
        ENSURE(strstr(e.file, "parity.json") != NULL || e.code == ONP_ERR_NOMEM);
        ENSURE(r.n == 0 && r.findings == NULL);
        return 0;
    }
    ENSURE(r.manifest_read == 1);
    size_t per[ONP_LINT_SEVERITY_COUNT] = {0};
    for (size_t i = 0; i < r.n; i++) {
        const onp_lint_finding *f = &r.findings[i];
        ENSURE(f->rule && f->message && f->loc.graph && f->loc.name && f->loc.op_type &&
               f->loc.file);
        per[f->rule->severity]++;
        if (i) ENSURE(r.findings[i - 1].order <= f->order);
        volatile size_t n = strlen(f->message) + strlen(f->loc.name) + strlen(f->loc.file);
        (void)n;
    }
    for (int s = 0; s < ONP_LINT_SEVERITY_COUNT; s++) ENSURE(per[s] == r.counts[s]);
    onp_lint_result_free(&r);
    return 0;
}
