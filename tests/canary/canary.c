/*
 * canary.c — two planted bugs that the sanitizer build must catch: proof
 * that `make asan` really runs instrumented code.  Never linked into
 * anything else; built with the flags of the build it checks (Makefile
 * rule $(BUILD)/tests/canary) and run by tests/canary/run.sh.
 *
 *   canary heap    reads one int past the end of a heap block
 *                  (AddressSanitizer: heap-buffer-overflow)
 *   canary signed  adds 1 to INT_MAX
 *                  (UBSan: runtime error: signed integer overflow)
 *
 * The index and the operands come through volatile objects so the compiler
 * can neither warn (the build uses -Werror) nor fold the bug away.  Without
 * sanitizers both modes print a value and exit 0: that is the failure
 * run.sh detects.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int heap_overflow(void)
{
    volatile size_t n = 8;
    int *p = malloc(n * sizeof *p); /* [n] */
    if (!p) return 2;
    for (size_t i = 0; i < n; i++) p[i] = (int)i;
    volatile size_t past = n; /* one past the end */
    int v = p[past];          /* the planted bug */
    printf("heap: read %d past the end, unnoticed\n", v);
    free(p);
    return 0;
}

static int signed_overflow(void)
{
    volatile int big = INT_MAX, one = 1;
    int v = big + one; /* the planted bug */
    printf("signed: INT_MAX + 1 = %d, unnoticed\n", v);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "heap")) return heap_overflow();
    if (argc == 2 && !strcmp(argv[1], "signed")) return signed_overflow();
    fprintf(stderr, "usage: canary heap|signed\n");
    return 2;
}
