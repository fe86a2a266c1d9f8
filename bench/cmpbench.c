/*
 * cmpbench.c — the compare kernel against memcpy, in one process, on two
 * float32 arrays of BYTES each (default 1 GiB): GB/s of input read.
 *
 *   cmpbench [BYTES]          memcpy, then onp_compare on 1 and 2 threads
 *   cmpbench BYTES --once     one onp_compare on one thread, nothing else
 *                             (for `valgrind --tool=callgrind`: instructions
 *                             per element of the kernel)
 *
 * Prints one line per measurement: "name threads seconds GB/s".  The arrays
 * differ by small noise so every metric is computed; the best of 3 runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxparity/compare.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? (size_t)atoll(argv[1]) : (size_t)1 << 30;
    int once = argc > 2 && !strcmp(argv[2], "--once");
    size_t n = bytes / 4;
    int64_t dims[1] = {(int64_t)n};
    onp_tensor a, b;
    onp_error e;
    if (onp_tensor_alloc(&a, ONP_FLOAT, 1, dims, &e) ||
        onp_tensor_alloc(&b, ONP_FLOAT, 1, dims, &e)) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    float *x = a.data, *y = b.data; /* x, y: [n] */
    uint32_t s = 12345;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) * (1.0f / 16777216.0f);
        y[i] = x[i] + (float)((s >> 4) & 15) * 1e-7f;
    }
    onp_metrics m;
    if (once) {
        onp_compare_set_threads(1);
        onp_compare(&a, &b, onp_tol_default(ONP_FLOAT), &m, &e);
        printf("compare-once %zu elements, max_abs %.9g, mismatches %lld\n", n, m.max_abs,
               (long long)m.mismatches);
        onp_tensor_release(&a);
        onp_tensor_release(&b);
        return 0;
    }
    void *dst = malloc(bytes);
    if (!dst) return 1;
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        memcpy(dst, x, bytes);
        double t = now() - t0;
        if (t < best) best = t;
    }
    /* memcpy reads BYTES and writes BYTES: report bytes read, like compare */
    printf("memcpy 1 %.4f %.2f\n", best, (double)bytes / best / 1e9);
    free(dst);
    for (int th = 1; th <= 2; th++) {
        onp_compare_set_threads(th);
        best = 1e30;
        for (int r = 0; r < 3; r++) {
            double t0 = now();
            onp_compare(&a, &b, onp_tol_default(ONP_FLOAT), &m, &e);
            double t = now() - t0;
            if (t < best) best = t;
        }
        printf("compare %d %.4f %.2f\n", th, best, 2.0 * (double)bytes / best / 1e9);
        fprintf(stderr, "  (max_abs %.3g, mismatches %lld)\n", m.max_abs, (long long)m.mismatches);
    }
    onp_tensor_release(&a);
    onp_tensor_release(&b);
    return 0;
}
