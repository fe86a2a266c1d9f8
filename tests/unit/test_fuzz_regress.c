/*
 * test_fuzz_regress.c — one named test per input a fuzzer crashed on
 * (docs/reliability.md, "Fuzzing").  Each input is also committed to the
 * corpus it came from, so make fuzz-replay runs it through its target; the
 * test here states the behaviour the fix settled, through the public API.
 *
 * How to add one: copy the reproducer to fuzz/corpus/TARGET/crash_WHAT.EXT,
 * add a test_WHAT function below that loads it and checks the expected
 * result, and list it in TEST_MAIN.
 */
#include <stdio.h>
#include <stdlib.h>

#include "onnxparity/model.h"
#include "testhelp.h"

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static unsigned char buf[1 << 16];
    *n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

/* fuzz_model, 2026-11-30: a model whose initializer repeats the
 * external_data key "length".  The parser refuses it by policy
 * (ONP_ERR_INPUT, "key 'length' given twice", at the entry's offset); the
 * target expected FORMAT or NOMEM only and trapped.  Fixed in the target's
 * contract; the refusal itself is right. */
static void test_model_external_key_twice(void)
{
    size_t n;
    const unsigned char *p = slurp("fuzz/corpus/model/crash_ext_key_twice_input_code.onnx", &n);
    if (!p) SKIP("fuzz/corpus/model not found (run from the repository root)");
    onp_model *m = (onp_model *)p; /* must be reset to NULL */
    onp_error e;
    onp_error_clear(&e);
    CHECK(onp_model_parse(p, n, NULL, &m, &e) == -1);
    CHECK(m == NULL);
    CHECK(e.code == ONP_ERR_INPUT);
    CHECKF(strstr(e.msg, "given twice") != NULL, "%s", e.msg);
    CHECK(e.offset >= 0 && e.offset <= (int64_t)n);
}

TEST_MAIN(test_model_external_key_twice)
