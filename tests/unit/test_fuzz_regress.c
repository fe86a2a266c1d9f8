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
#include <sys/stat.h>

#include "onnxparity/model.h"
#include "onnxparity/tfile.h"
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

static void touch(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (f) fclose(f);
}

/* fuzz_testdata, 2026-11-30 (found by reading what the target's layout
 * allowed): "test_data_set_01" and "test_data_set_1" both parsed as set 1,
 * and "input_00.pb" beside "input_0.pb" both as input 0, the one kept
 * depending on the directory order.  Numbers are now canonical: a name with
 * a leading zero is not a fixture (fuzz/corpus/testdata/sets_0_1_7_x_01.bin
 * covers it through the target). */
static void test_testdata_leading_zeros(void)
{
    char root[] = "/tmp/onp-regress-XXXXXX", d1[64], d01[64], cmd[128];
    if (!mkdtemp(root)) SKIP("cannot make a scratch folder");
    snprintf(d1, sizeof d1, "%s/test_data_set_1", root);
    snprintf(d01, sizeof d01, "%s/test_data_set_01", root);
    mkdir(d1, 0755);
    mkdir(d01, 0755);
    touch(d1, "input_0.pb");
    touch(d1, "input_00.pb");
    touch(d1, "output_0.pb");
    touch(d01, "input_0.pb");
    onp_testdata td;
    onp_error e;
    onp_error_clear(&e);
    CHECK(onp_testdata_scan(root, &td, &e) == 0);
    CHECK(td.n == 1);
    if (td.n == 1) {
        CHECK(td.sets[0].index == 1 && !strcmp(td.sets[0].dir, d1));
        CHECK(td.sets[0].n_inputs == 1 && td.sets[0].n_outputs == 1);
        CHECK(td.sets[0].n_inputs == 1 && strstr(td.sets[0].inputs[0], "/input_0.pb"));
    }
    onp_testdata_free(&td);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

TEST_MAIN(test_model_external_key_twice, test_testdata_leading_zeros)
