/*
 * cmpsame.c — the compare kernels give the same bits: onp_compare() as
 * built (which picks a hand-written float32 kernel when the CPU has one)
 * against the portable loop alone, on random tensors of every float dtype.
 *
 *   cmpsame [TENSORS]       (default 200)
 *
 * bench/run.sh links this against the library and against a second copy
 * of src/compare/compare.c built with -DONP_NO_CLONES (no hand-written
 * kernels, no clones) whose public names are renamed portable_*.  Every
 * tensor is compared under four tolerances on one and two threads; the
 * whole onp_metrics struct must be bytewise equal.  The data mixes sizes
 * (a tail of under 8, one block, several blocks over threads), scales,
 * differences that land on the histogram edges, exact zeros, one ratio
 * repeated, a relative error that grows with the index (the ratio
 * trackers update at every element), and a few NaN and infinities.  Prints "cmpsame: N differences over T tensors";
 * exit 1 when N > 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/compare.h"
#include "onnxparity/half.h"

/* the portable copy (see above) */
int portable_compare(const onp_tensor *, const onp_tensor *, onp_tol, onp_metrics *, onp_error *);
void portable_set_threads(int n);

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double uniform(void) /* [0, 1) */
{
    return (double)(next() >> 11) * (1.0 / 9007199254740992.0);
}

static const double edges[] = {0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1};

static double value(int scale)
{
    switch (scale) {
    case 0: return uniform() * 2 - 1;
    case 1: return (uniform() * 2 - 1) * pow(10, (int)(next() % 60) - 30);
    case 2: return (double)(next() % 5) - 2;
    default: return (uniform() - 0.5) * 1e30;
    }
}

static double perturb(double x, int how, int scale)
{
    switch (how) {
    case 0: return x;
    case 1: return x + edges[next() % 11] * (next() & 1 ? 1 : -1);
    case 2: return x * (1 + 1e-5 * (uniform() - 0.5));
    case 3: return value(scale);
    case 4: return x + (uniform() - 0.5) * pow(10, -(int)(next() % 12));
    case 5: return x * (1 + 0x1p-20); /* one ratio, repeated: ties for the trackers */
    default: return next() % 7 == 0 ? 0 : x + edges[next() % 11];
    }
}

static void put(onp_tensor *t, int64_t i, double v)
{
    char *p = t->data;
    if (t->dtype == ONP_FLOAT) {
        float f = (float)v;
        memcpy(p + 4 * i, &f, 4);
    } else if (t->dtype == ONP_DOUBLE) {
        memcpy(p + 8 * i, &v, 8);
    } else {
        uint16_t h = t->dtype == ONP_FLOAT16 ? onp_f64_to_f16(v) : onp_f64_to_bf16(v);
        memcpy(p + 2 * i, &h, 2);
    }
}

int main(int argc, char **argv)
{
    int tensors = argc > 1 ? atoi(argv[1]) : 200;
    const int32_t dtypes[] = {ONP_FLOAT, ONP_FLOAT, ONP_DOUBLE, ONP_FLOAT16, ONP_BFLOAT16};
    long differences = 0;
    for (int it = 0; it < tensors; it++) {
        int32_t dt = dtypes[it % 5];
        int64_t n = next() % 3 == 0 ? (int64_t)(next() % 300000) : (int64_t)(next() % 100);
        if (it % 50 == 7) n = 5000000; /* over 4 Mi elements: two threads */
        int ratio_case = it % 50 == 11 || it % 50 == 21; /* float32 (it % 5 == 1) */
        if (ratio_case) n = 300000;
        int64_t dims[1] = {n};
        onp_tensor e, a;
        onp_error err;
        if (onp_tensor_alloc(&e, dt, 1, dims, &err) || onp_tensor_alloc(&a, dt, 1, dims, &err)) {
            fprintf(stderr, "cmpsame: out of memory\n");
            return 2;
        }
        int scale = (int)(next() % 4), how = (int)(next() % 8);
        if (ratio_case) how = it % 50 == 11 ? 7 : 5;
        for (int64_t i = 0; i < n; i++) {
            double x = value(scale), y = perturb(x, how, scale);
            if (how == 7) { /* a relative error that grows with i, exact in float32: a new
                               maximum every few elements, each under 0.1% above the last */
                x = (i % 2 ? 1 : -1) * ldexp(1, -(int)(i % 40));
                y = x * (1 + (double)(1024 + i * 1023 / (n + 1)) * 0x1p-23);
            }
            if (it % 3 == 0 && next() % 100000 == 0) {
                const double odd[] = {NAN, INFINITY, -INFINITY};
                y = odd[next() % 3];
            }
            if (it % 5 == 0 && next() % 100000 == 0) x = next() & 1 ? NAN : INFINITY;
            if (next() % 1000 == 0 && !ratio_case) x = 0; /* a zero: the needed rtol is +inf */
            put(&e, i, x);
            put(&a, i, y);
        }
        const onp_tol tols[] = {onp_tol_default(dt), {0, 0}, {1e-3, 1e-6}, {0.5, 1e-9}};
        for (int k = 0; k < 4; k++) {
            for (int th = 1; th <= 2; th++) {
                onp_metrics m1, m2;
                memset(&m1, 0, sizeof m1);
                memset(&m2, 0, sizeof m2);
                onp_compare_set_threads(th);
                portable_set_threads(th);
                onp_compare(&e, &a, tols[k], &m1, &err);
                portable_compare(&e, &a, tols[k], &m2, &err);
                if (memcmp(&m1, &m2, sizeof m1) && differences++ < 5)
                    fprintf(stderr,
                            "cmpsame: tensor %d (%s, %lld elements), tolerance %d, %d threads: "
                            "max_abs %a / %a, mean_abs %a / %a, mismatches %lld / %lld\n",
                            it, onp_dtype_name(dt), (long long)n, k, th, m1.max_abs, m2.max_abs,
                            m1.mean_abs, m2.mean_abs, (long long)m1.mismatches,
                            (long long)m2.mismatches);
            }
        }
        onp_tensor_release(&e);
        onp_tensor_release(&a);
    }
    printf("cmpsame: %ld differences over %d tensors\n", differences, tensors);
    return differences != 0;
}
