/*
 * testops.c — a custom-operator library for the isolation tests: operators
 * that misbehave the way a broken ONNX Runtime kernel does.  Built as
 * build/tests/tools/libonp_testops.so (Makefile) and loaded by ORT through
 * `--custom-op-lib`.  Not part of onnxparity.
 *
 * Domain "onnxparity.test", each op float32 x -> float32 y = x (a copy):
 *   CrashIfNegative  raises SIGSEGV when any element of x is negative
 *   HangIfNegative   never returns when any element of x is negative
 *   CrashOnSecondRun raises SIGSEGV on every second call in a process: a
 *                    crash that comes and goes with the same inputs
 * so a test data set with one negative fixture shows that one fixture fails
 * while the others still run.
 */
#include <signal.h>
#include <string.h>
#include <time.h>

#include <onnxruntime_c_api.h>

static const OrtApi *api;

typedef struct kernel {
    int mode; /* 0: crash on negative, 1: hang on negative, 2: crash every second call */
} kernel;

static kernel crash_kernel = {0}, hang_kernel = {1}, flaky_kernel = {2};
static int calls;

static void *ORT_API_CALL create_kernel(const OrtCustomOp *op, const OrtApi *a,
                                        const OrtKernelInfo *info);
static const char *ORT_API_CALL crash_name(const OrtCustomOp *op)
{
    (void)op;
    return "CrashIfNegative";
}
static const char *ORT_API_CALL hang_name(const OrtCustomOp *op)
{
    (void)op;
    return "HangIfNegative";
}
static const char *ORT_API_CALL flaky_name(const OrtCustomOp *op)
{
    (void)op;
    return "CrashOnSecondRun";
}
static const char *ORT_API_CALL ep_type(const OrtCustomOp *op)
{
    (void)op;
    return "CPUExecutionProvider";
}
static ONNXTensorElementDataType ORT_API_CALL io_type(const OrtCustomOp *op, size_t i)
{
    (void)op;
    (void)i;
    return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
}
static size_t ORT_API_CALL one(const OrtCustomOp *op)
{
    (void)op;
    return 1;
}
static OrtCustomOpInputOutputCharacteristic ORT_API_CALL required(const OrtCustomOp *op, size_t i)
{
    (void)op;
    (void)i;
    return INPUT_OUTPUT_REQUIRED;
}
static OrtMemType ORT_API_CALL mem_type(const OrtCustomOp *op, size_t i)
{
    (void)op;
    (void)i;
    return OrtMemTypeDefault;
}
static int ORT_API_CALL arity(const OrtCustomOp *op)
{
    (void)op;
    return 1;
}
static int ORT_API_CALL homogeneous(const OrtCustomOp *op)
{
    (void)op;
    return 1;
}

/* 1 when an ORT call succeeded; a failure's status is released. */
static int ok(OrtStatus *st)
{
    if (!st) return 1;
    api->ReleaseStatus(st);
    return 0;
}

static void ORT_API_CALL compute(void *k, OrtKernelContext *ctx)
{
    const kernel *kn = k;
    const OrtValue *x;
    OrtValue *y;
    OrtTensorTypeAndShapeInfo *info;
    size_t rank = 0, count = 0;
    int64_t dims[8];
    void *src, *dst;
    if (!ok(api->KernelContext_GetInput(ctx, 0, &x)) || !ok(api->GetTensorTypeAndShape(x, &info)))
        return;
    int got = ok(api->GetDimensionsCount(info, &rank)) && rank <= 8 &&
              ok(api->GetDimensions(info, dims, rank)) &&
              ok(api->GetTensorShapeElementCount(info, &count));
    api->ReleaseTensorTypeAndShapeInfo(info);
    if (!got || !ok(api->GetTensorMutableData((OrtValue *)x, &src))) return;
    const float *xs = src;
    int negative = 0;
    for (size_t i = 0; i < count; i++)
        if (xs[i] < 0) negative = 1;
    if (kn->mode == 2 && ++calls % 2 == 0) raise(SIGSEGV);
    if (kn->mode == 2) negative = 0;
    if (negative && kn->mode == 1)
        for (;;) {
            struct timespec ts = {1, 0};
            nanosleep(&ts, NULL);
        }
    if (negative) raise(SIGSEGV);
    if (!ok(api->KernelContext_GetOutput(ctx, 0, dims, rank, &y)) ||
        !ok(api->GetTensorMutableData(y, &dst)))
        return;
    if (count) memcpy(dst, src, count * sizeof(float));
}

static void ORT_API_CALL destroy_kernel(void *k)
{
    (void)k;
}

static OrtCustomOp crash_op, hang_op, flaky_op;

static void *ORT_API_CALL create_kernel(const OrtCustomOp *op, const OrtApi *a,
                                        const OrtKernelInfo *info)
{
    (void)a;
    (void)info;
    return op == &hang_op    ? (void *)&hang_kernel
           : op == &flaky_op ? (void *)&flaky_kernel
                             : (void *)&crash_kernel;
}

static void fill(OrtCustomOp *op, const char *(ORT_API_CALL *name)(const OrtCustomOp *))
{
    memset(op, 0, sizeof *op);
    op->version = 14; /* the fields up to the variadic ones are filled */
    op->CreateKernel = create_kernel;
    op->GetName = name;
    op->GetExecutionProviderType = ep_type;
    op->GetInputType = io_type;
    op->GetInputTypeCount = one;
    op->GetOutputType = io_type;
    op->GetOutputTypeCount = one;
    op->KernelCompute = compute;
    op->KernelDestroy = destroy_kernel;
    op->GetInputCharacteristic = required;
    op->GetOutputCharacteristic = required;
    op->GetInputMemoryType = mem_type;
    op->GetVariadicInputMinArity = arity;
    op->GetVariadicInputHomogeneity = homogeneous;
    op->GetVariadicOutputMinArity = arity;
    op->GetVariadicOutputHomogeneity = homogeneous;
}

/* ORT calls this when the library is registered; the domain lives as long
 * as the process (never released: a test library). */
OrtStatus *ORT_API_CALL RegisterCustomOps(OrtSessionOptions *options, const OrtApiBase *base);
OrtStatus *ORT_API_CALL RegisterCustomOps(OrtSessionOptions *options, const OrtApiBase *base)
{
    api = base->GetApi(16);
    fill(&crash_op, crash_name);
    fill(&hang_op, hang_name);
    fill(&flaky_op, flaky_name);
    OrtCustomOpDomain *domain;
    OrtStatus *st = api->CreateCustomOpDomain("onnxparity.test", &domain);
    if (!st) st = api->CustomOpDomain_Add(domain, &crash_op);
    if (!st) st = api->CustomOpDomain_Add(domain, &hang_op);
    if (!st) st = api->CustomOpDomain_Add(domain, &flaky_op);
    if (!st) st = api->AddCustomOpDomain(options, domain);
    return st;
}
