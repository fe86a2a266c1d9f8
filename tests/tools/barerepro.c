/*
 * barerepro.c — test tool: run a reproducer folder written by `bisect
 * --save-repro` under a bare ONNX Runtime (the C API, dlopen'ed, CPU,
 * ORT_ENABLE_ALL; nothing of onnxparity's runner), and say whether ORT's
 * output differs from the expected one:
 *
 *   barerepro ORT_LIBRARY DIR
 *   -> "max_abs X expected_max Y" on stdout; exit 0
 *
 * The inputs DIR/test_data_set_0/input_K.pb feed the graph inputs by
 * position; output_0.pb is compared with the first graph output, as
 * float32.  libonnxparity only reads the .pb files.  Exit 1 on any failure.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/tfile.h"
#include "onnxruntime_c_api.h"

static const OrtApi *api;

static int ok(OrtStatus *st)
{
    if (!st) return 1;
    fprintf(stderr, "barerepro: %s\n", api->GetErrorMessage(st));
    api->ReleaseStatus(st);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) return fprintf(stderr, "usage: barerepro ORT_LIBRARY DIR\n"), 1;
    void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!dl) return fprintf(stderr, "barerepro: %s\n", dlerror()), 1;
    const OrtApiBase *(*get_base)(void) = (const OrtApiBase *(*)(void))dlsym(dl, "OrtGetApiBase");
    if (!get_base || !(api = get_base()->GetApi(ORT_API_VERSION))) return 1;
    OrtEnv *env;
    OrtSessionOptions *so;
    OrtSession *sess;
    char path[4200];
    snprintf(path, sizeof path, "%s/model.onnx", argv[2]);
    if (!ok(api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "repro", &env)) ||
        !ok(api->CreateSessionOptions(&so)) ||
        !ok(api->SetSessionGraphOptimizationLevel(so, ORT_ENABLE_ALL)) ||
        !ok(api->CreateSession(env, path, so, &sess)))
        return 1;
    OrtAllocator *alloc;
    size_t n_in, n_out;
    if (!ok(api->GetAllocatorWithDefaultOptions(&alloc)) ||
        !ok(api->SessionGetInputCount(sess, &n_in)) ||
        !ok(api->SessionGetOutputCount(sess, &n_out)) || n_out < 1)
        return 1;
    char **in_names = calloc(n_in + 1, sizeof *in_names), *out_name;
    for (size_t i = 0; i < n_in; i++)
        if (!ok(api->SessionGetInputName(sess, i, alloc, &in_names[i]))) return 1;
    if (!ok(api->SessionGetOutputName(sess, 0, alloc, &out_name))) return 1;
    OrtMemoryInfo *mem;
    if (!ok(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem))) return 1;
    onp_tensor *t = calloc(n_in + 1, sizeof *t), want;
    OrtValue **vin = calloc(n_in + 1, sizeof *vin), *vout = NULL;
    onp_error e;
    for (size_t i = 0; i < n_in; i++) {
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", argv[2], i);
        if (onp_tfile_read(path, NULL, &t[i], &e))
            return fprintf(stderr, "barerepro: %s\n", e.msg), 1;
        if (!ok(api->CreateTensorWithDataAsOrtValue(
                mem, t[i].data, t[i].nbytes, t[i].dims, (size_t)t[i].rank,
                (ONNXTensorElementDataType)t[i].dtype, &vin[i])))
            return 1;
    }
    const char *outs[1] = {out_name};
    if (!ok(api->Run(sess, NULL, (const char *const *)in_names, (const OrtValue *const *)vin, n_in,
                     outs, 1, &vout)))
        return 1;
    snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", argv[2]);
    if (onp_tfile_read(path, NULL, &want, &e)) return fprintf(stderr, "barerepro: %s\n", e.msg), 1;
    float *got;
    OrtTensorTypeAndShapeInfo *info;
    size_t count;
    if (!ok(api->GetTensorMutableData(vout, (void **)&got)) ||
        !ok(api->GetTensorTypeAndShape(vout, &info)) ||
        !ok(api->GetTensorShapeElementCount(info, &count)))
        return 1;
    api->ReleaseTensorTypeAndShapeInfo(info);
    if (want.dtype != ONP_FLOAT || (int64_t)count != want.count)
        return fprintf(stderr, "barerepro: output is not float32 of %lld elements\n",
                       (long long)want.count),
               1;
    const float *w = want.data;
    double max_abs = 0, scale = 0;
    for (size_t i = 0; i < count; i++) {
        double d = fabs((double)got[i] - (double)w[i]);
        if (d > max_abs || isnan(d)) max_abs = d;
        if (fabs((double)w[i]) > scale) scale = fabs((double)w[i]);
    }
    printf("max_abs %.9g expected_max %.9g\n", max_abs, scale);
    api->ReleaseValue(vout);
    for (size_t i = 0; i < n_in; i++) {
        api->ReleaseValue(vin[i]);
        onp_tensor_release(&t[i]);
        alloc->Free(alloc, in_names[i]);
    }
    alloc->Free(alloc, out_name);
    onp_tensor_release(&want);
    free(t), free(vin), free(in_names);
    api->ReleaseMemoryInfo(mem);
    api->ReleaseSession(sess);
    api->ReleaseSessionOptions(so);
    api->ReleaseEnv(env);
    return 0;
}
