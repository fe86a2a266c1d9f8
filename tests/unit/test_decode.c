/*
 * test_decode.c — the decode loop's rule (onp_decode_judge_step: near-tie
 * vs defect, every transition) and generate.json's strict reading (each
 * malformed member named by its path, before any ONNX Runtime is loaded).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnxparity/decode.h"
#include "testhelp.h"

static void test_class_names(void)
{
    CHECK(!strcmp(onp_decode_class_name(ONP_DECODE_AGREE), "agree"));
    CHECK(!strcmp(onp_decode_class_name(ONP_DECODE_NEAR_TIE), "near-tie"));
    CHECK(!strcmp(onp_decode_class_name(ONP_DECODE_DEFECT), "defect"));
    CHECK(!strcmp(onp_decode_class_name(ONP_DECODE_CLASS_COUNT), "?"));
}

static void test_judge_step(void)
{
    const onp_decode_class A = ONP_DECODE_AGREE, N = ONP_DECODE_NEAR_TIE, D = ONP_DECODE_DEFECT;
    /* no flip, logits pass: the class stays */
    CHECK(onp_decode_judge_step(A, 1, 0, NAN, 1e-6) == A);
    CHECK(onp_decode_judge_step(N, 1, 0, NAN, 1e-6) == N);
    /* logits failing are a defect, flip or not */
    CHECK(onp_decode_judge_step(A, 0, 0, NAN, 1e-6) == D);
    CHECK(onp_decode_judge_step(A, 0, 1, 0.0, 1e-6) == D);
    /* a flip: near-tie when the margin is inside the envelope (bounds included) */
    CHECK(onp_decode_judge_step(A, 1, 1, 0.0, 1e-6) == N);
    CHECK(onp_decode_judge_step(A, 1, 1, 1e-6, 1e-6) == N);
    CHECK(onp_decode_judge_step(A, 1, 1, 1.5e-6, 1e-6) == D);
    CHECK(onp_decode_judge_step(N, 1, 1, 1e-7, 1e-6) == N);
    /* no envelope, or no margin measured: no evidence of noise */
    CHECK(onp_decode_judge_step(A, 1, 1, 0.0, 0.0) == D);
    CHECK(onp_decode_judge_step(A, 1, 1, NAN, 1e-6) == D);
    /* a defect stays one */
    CHECK(onp_decode_judge_step(D, 1, 0, NAN, 1e-6) == D);
    CHECK(onp_decode_judge_step(D, 1, 1, 0.0, 1e-6) == D);
}

/* The sampling rule: inverse CDF in vocabulary order, float64. */
static void test_sample(void)
{
    /* logits 0, ln 2, ln 3 at T = 1: weights 1, 2, 3, CDF 1/6, 1/2, 1 */
    const float l[3] = {0.0f, (float)log(2.0), (float)log(3.0)};
    double c1 = 1.0 / 6;
    CHECK(onp_decode_sample(l, 3, 1.0, 0.0) == 0);
    CHECK(onp_decode_sample(l, 3, 1.0, c1 - 1e-6) == 0);
    CHECK(onp_decode_sample(l, 3, 1.0, c1 + 1e-6) == 1);
    CHECK(onp_decode_sample(l, 3, 1.0, 0.49) == 1);
    CHECK(onp_decode_sample(l, 3, 1.0, 0.51) == 2);
    CHECK(onp_decode_sample(l, 3, 1.0, 0.999999) == 2);
    /* a low temperature is the argmax; rounding past the last CDF point
     * keeps the last token with weight */
    CHECK(onp_decode_sample(l, 3, 1e-3, 0.5) == 2);
    const float z[3] = {5.0f, -INFINITY, -INFINITY};
    CHECK(onp_decode_sample(z, 3, 1.0, 0.999) == 0);
    CHECK(onp_decode_sample(z, 3, 1.0, 1.0) == 0);
    /* the CDF's envelope: exp(2 e / T) - 1; nothing without an envelope */
    CHECK(fabs(onp_decode_cdf_envelope(1e-6, 1.0) - 2e-6) < 1e-11);
    CHECK(fabs(onp_decode_cdf_envelope(1e-6, 0.5) - 4e-6) < 1e-11);
    CHECK(onp_decode_cdf_envelope(0.0, 1.0) == 0);
    CHECK(onp_decode_cdf_envelope(NAN, 1.0) == 0);
    /* a sampled flip is judged as a greedy one, on the CDF's margin */
    double env = onp_decode_cdf_envelope(1e-6, 1.0);
    CHECK(onp_decode_judge_step(ONP_DECODE_AGREE, 1, 1, 1e-6, env) == ONP_DECODE_NEAR_TIE);
    CHECK(onp_decode_judge_step(ONP_DECODE_AGREE, 1, 1, 3e-6, env) == ONP_DECODE_DEFECT);
    CHECK(!strcmp(onp_decode_where_name(ONP_DECODE_WHERE_SETTING), "generation-setting"));
    CHECK(!strcmp(onp_decode_where_name(ONP_DECODE_WHERE_COUNT), "?"));
}

// --- generate.json -------------------------------------------------------------------

static char g_dir[64];

/* A manifest whose members can be replaced: `over` is spliced in place of
 * the member `key` ("" keeps the valid one). */
static const char *const VALID =
    "{\"schema\": \"onnxparity.decode-bundle/1\", \"model\": {\"model_type\": \"gpt2\", "
    "\"vocab\": 10}, \"exporter\": \"dynamo\", \"inputs\": {\"input_ids\": \"input_ids\", "
    "\"attention_mask\": \"attention_mask\", \"position_ids\": \"position_ids\", \"past\": "
    "[\"k0\", \"v0\"]}, \"outputs\": {\"logits\": \"logits\", \"present\": [\"pk0\", \"pv0\"]}, "
    "\"cache\": {\"layers\": 1}, \"generation\": {\"strategy\": \"greedy\", \"steps\": 2, "
    "\"padding\": \"left\", \"position_ids\": \"cumsum-1\"}, \"topk\": 3, \"batches\": "
    "[{\"dir\": \"batch_0\", \"rows\": 1, \"prompt_len\": 2, \"logits\": false, "
    "\"prompt_lengths\": [2], \"cache_shapes\": [[1, 1, 2, 4], [1, 1, 3, 4]]}]}";

static void write_manifest(const char *from, const char *to)
{
    char path[128], *text = strdup(VALID);
    if (from) {
        char *at = strstr(text, from);
        CHECKF(at != NULL, "'%s' not in the valid manifest", from);
        if (!at) return free(text);
        size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
        char *t = malloc(n);
        snprintf(t, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
        free(text);
        text = t;
    }
    snprintf(path, sizeof path, "%s/generate.json", g_dir);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    free(text);
}

/* onp_decode_run on the manifest with `from` replaced by `to`: fails with
 * `code`, the error's field `field`. */
static void expect(const char *from, const char *to, onp_errcode code, const char *field, int steps)
{
    write_manifest(from, to);
    onp_decode_opts o;
    onp_decode_opts_init(&o);
    o.steps = steps;
    o.ort_lib = "/nonexistent/libonnxruntime.so.1"; /* never reached */
    onp_decode_result *r = NULL;
    onp_error e;
    onp_error_clear(&e);
    int rc = onp_decode_run(g_dir, &o, &r, &e);
    CHECKF(rc == -1 && r == NULL, "%s -> %s: rc %d", from ? from : "(valid)", to, rc);
    CHECKF(e.code == code, "%s -> %s: code %d, want %d (%s)", from ? from : "(valid)", to,
           (int)e.code, (int)code, e.msg);
    CHECKF(!strcmp(e.field, field), "%s -> %s: field '%s', want '%s' (%s)", from ? from : "(valid)",
           to, e.field, field, e.msg);
    onp_decode_result_free(r);
}

static void test_manifest_errors(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/onp_test_decode_XXXXXX");
    if (!mkdtemp(g_dir)) SKIP("no temporary folder");
    onp_decode_opts o;
    onp_decode_opts_init(&o);
    onp_decode_result *r = NULL;
    onp_error e;
    /* no generate.json: an I/O error naming the file */
    CHECK(onp_decode_run(g_dir, &o, &r, &e) == -1 && e.code == ONP_ERR_IO);
    CHECK(strstr(e.file, "generate.json") != NULL);
    expect("{\"schema\"", "[{\"schema\"", ONP_ERR_FORMAT, "", 0); /* not JSON */
    expect("decode-bundle/1", "check/1", ONP_ERR_FORMAT, "schema", 0);
    expect("\"steps\": 2", "\"steps\": \"2\"", ONP_ERR_FORMAT, "generation.steps", 0);
    expect("\"greedy\"", "\"beam\"", ONP_ERR_FORMAT, "generation.strategy", 0);
    /* sampling needs its temperature */
    expect("\"greedy\"", "\"sample\"", ONP_ERR_FORMAT, "generation.temperature", 0);
    expect("\"greedy\"", "\"sample\", \"temperature\": 0", ONP_ERR_FORMAT, "generation.temperature",
           0);
    expect("\"greedy\"", "\"greedy\", \"eos_token_id\": 10", ONP_ERR_FORMAT,
           "generation.eos_token_id", 0);
    expect("\"logits\": false", "\"logits\": false, \"cache\": 1", ONP_ERR_FORMAT,
           "batches[0].cache", 0);
    expect("\"cumsum-1\"", "\"arange\"", ONP_ERR_FORMAT, "generation.position_ids", 0);
    expect("[\"k0\", \"v0\"]", "[\"k0\"]", ONP_ERR_FORMAT, "inputs.past", 0);
    expect("\"topk\": 3", "\"topk\": 11", ONP_ERR_FORMAT, "topk", 0);
    expect("\"batch_0\"", "\"../x\"", ONP_ERR_FORMAT, "batches[0].dir", 0);
    expect("\"prompt_lengths\": [2]", "\"prompt_lengths\": [3]", ONP_ERR_FORMAT,
           "batches[0].prompt_lengths", 0);
    expect(", [1, 1, 3, 4]]", "]", ONP_ERR_FORMAT, "batches[0].cache_shapes", 0);
    expect("\"logits\": false", "\"logits\": 0", ONP_ERR_FORMAT, "batches[0].logits", 0);
    /* a valid manifest: more steps than recorded is usage, before ORT */
    expect(NULL, NULL, ONP_ERR_USAGE, "--steps", 3);
    char path[128];
    snprintf(path, sizeof path, "%s/generate.json", g_dir);
    unlink(path);
    rmdir(g_dir);
}

TEST_MAIN(test_class_names, test_judge_step, test_sample, test_manifest_errors)
