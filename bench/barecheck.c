/*
 * barecheck.c — the floor for `onnxparity check`: a bare C program that
 * loads the same ONNX Runtime library, creates the same session (CPU,
 * ORT_ENABLE_ALL) and runs the same fixtures, and does nothing else (no
 * fingerprint, no lint, no comparison, no report).  bench/run.sh times it
 * against `onnxparity check` on the same bundle.
 *
 *   barecheck ORT_LIBRARY BUNDLE_DIR [--read-expected]
 *
 * Fixture tensors are read with libonnxparity's reader (reading them is
 * work both programs must do).  With --read-expected the program also reads
 * each fixture's expected outputs and, where the capture wrote them, their
 * float64 references (reference64/output_K.pb), while ORT's outputs are
 * still held, as any comparison must: "the bare run plus reading the
 * files", the floor for check at size (bench/tensorsize.py).  The reader
 * maps a .pb whose raw_data is aligned (and copies one that is not): a
 * mapped tensor's every page is then read once, so that its bytes reach
 * this process from the page cache, the cheapest a read can be.  It compares
 * nothing.  Exit 0, or 1 on any failure.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/tfile.h"
#include "onnxruntime_c_api.h"

static const OrtApi *api;

/* Read every page of t's bytes (one load per 4 KiB, summed so it is not
 * optimised away): libonnxparity's reader maps a .pb whose raw_data is
 * aligned instead of copying it, and "reading the file" must still bring
 * its bytes into this process, from the page cache, at the cheapest. */
static volatile unsigned char sink;

static void touch(const onp_tensor *t)
{
    const unsigned char *p = t->data;
    unsigned char s = 0;
    for (size_t i = 0; i < t->nbytes; i += 4096) s = (unsigned char)(s + p[i]);
    sink = s;
}

static int ok(OrtStatus *st)
{
    if (!st) return 1;
    fprintf(stderr, "barecheck: %s\n", api->GetErrorMessage(st));
    api->ReleaseStatus(st);
    return 0;
}

int main(int argc, char **argv)
{
    int read_expected = argc == 4 && !strcmp(argv[3], "--read-expected");
    if (argc != 3 && !read_expected) {
        fprintf(stderr, "usage: barecheck ORT_LIBRARY BUNDLE_DIR [--read-expected]\n");
        return 1;
    }
    void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!dl) return fprintf(stderr, "barecheck: %s\n", dlerror()), 1;
    const OrtApiBase *(*get_base)(void) = (const OrtApiBase *(*)(void))dlsym(dl, "OrtGetApiBase");
    if (!get_base || !(api = get_base()->GetApi(ORT_API_VERSION))) return 1;
    OrtEnv *env;
    OrtSessionOptions *so;
    OrtSession *sess;
    char model[4096];
    snprintf(model, sizeof model, "%s/model.onnx", argv[2]);
    if (!ok(api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "bare", &env)) ||
        !ok(api->CreateSessionOptions(&so)) ||
        !ok(api->SetSessionGraphOptimizationLevel(so, ORT_ENABLE_ALL)) ||
        !ok(api->CreateSession(env, model, so, &sess)))
        return 1;
    OrtAllocator *alloc;
    size_t n_in, n_out;
    if (!ok(api->GetAllocatorWithDefaultOptions(&alloc)) ||
        !ok(api->SessionGetInputCount(sess, &n_in)) ||
        !ok(api->SessionGetOutputCount(sess, &n_out)))
        return 1;
    char **in_names = calloc(n_in, sizeof *in_names),
         **out_names = calloc(n_out, sizeof *out_names);
    for (size_t i = 0; i < n_in; i++)
        if (!ok(api->SessionGetInputName(sess, i, alloc, &in_names[i]))) return 1;
    for (size_t i = 0; i < n_out; i++)
        if (!ok(api->SessionGetOutputName(sess, i, alloc, &out_names[i]))) return 1;
    OrtMemoryInfo *mem;
    if (!ok(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem))) return 1;
    onp_testdata td;
    onp_error e;
    if (onp_testdata_scan(argv[2], &td, &e)) return 1;
    for (size_t f = 0; f < td.n; f++) {
        onp_tensor *t = calloc(n_in, sizeof *t);
        OrtValue **vin = calloc(n_in, sizeof *vin), **vout = calloc(n_out, sizeof *vout);
        for (size_t i = 0; i < n_in && i < td.sets[f].n_inputs; i++) {
            if (onp_tfile_read(td.sets[f].inputs[i], NULL, &t[i], &e)) return 1;
            if (!ok(api->CreateTensorWithDataAsOrtValue(
                    mem, t[i].data, t[i].nbytes, t[i].dims, (size_t)t[i].rank,
                    (ONNXTensorElementDataType)t[i].dtype, &vin[i])))
                return 1;
        }
        if (!ok(api->Run(sess, NULL, (const char *const *)in_names, (const OrtValue *const *)vin,
                         n_in, (const char *const *)out_names, n_out, vout)))
            return 1;
        for (size_t k = 0; read_expected && k < td.sets[f].n_outputs; k++) {
            onp_tensor want, ref64;
            if (onp_tfile_read(td.sets[f].outputs[k], NULL, &want, &e)) return 1;
            int has_ref = onp_fixture_read_ref64(&td.sets[f], k, &ref64, &e);
            if (has_ref < 0) return 1;
            touch(&want);
            if (has_ref) touch(&ref64);
            onp_tensor_release(&ref64);
            onp_tensor_release(&want);
        }
        for (size_t i = 0; i < n_out; i++) api->ReleaseValue(vout[i]);
        for (size_t i = 0; i < n_in; i++) {
            api->ReleaseValue(vin[i]);
            onp_tensor_release(&t[i]);
        }
        free(t), free(vin), free(vout);
    }
    onp_testdata_free(&td);
    api->ReleaseMemoryInfo(mem);
    for (size_t i = 0; i < n_in; i++) alloc->Free(alloc, in_names[i]);
    for (size_t i = 0; i < n_out; i++) alloc->Free(alloc, out_names[i]);
    free(in_names), free(out_names);
    api->ReleaseSession(sess);
    api->ReleaseSessionOptions(so);
    api->ReleaseEnv(env);
    return 0;
}
