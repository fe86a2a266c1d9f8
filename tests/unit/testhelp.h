/*
 * testhelp.h — the whole unit-test framework: CHECK records a failure with
 * file:line and goes on; TEST_MAIN runs the listed test functions and ends
 * with the line "N passed, N failed" (one check = one count).  Exit status 1
 * when anything failed.  A test that needs something absent calls SKIP().
 */
#ifndef ONP_TESTHELP_H
#define ONP_TESTHELP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int th_passed, th_failed, th_skipped;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            th_passed++;                                                                           \
        } else {                                                                                   \
            th_failed++;                                                                           \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
        }                                                                                          \
    } while (0)

/* CHECK with a printf-style explanation on failure. */
#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        if (cond) {                                                                                \
            th_passed++;                                                                           \
        } else {                                                                                   \
            th_failed++;                                                                           \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define SKIP(why)                                                                                  \
    do {                                                                                           \
        th_skipped++;                                                                              \
        fprintf(stderr, "SKIP %s: %s\n", __func__, why);                                           \
        return;                                                                                    \
    } while (0)

#define TEST_MAIN(...)                                                                             \
    int main(void)                                                                                 \
    {                                                                                              \
        void (*tests_[])(void) = {__VA_ARGS__};                                                    \
        for (size_t i_ = 0; i_ < sizeof tests_ / sizeof tests_[0]; i_++) tests_[i_]();             \
        if (th_skipped)                                                                            \
            printf("%d passed, %d failed, %d skipped\n", th_passed, th_failed, th_skipped);        \
        else                                                                                       \
            printf("%d passed, %d failed\n", th_passed, th_failed);                                \
        return th_failed ? 1 : 0;                                                                  \
    }

#endif
