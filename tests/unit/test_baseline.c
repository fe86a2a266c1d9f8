/*
 * test_baseline.c — the decisions of issue 17 that live in the library:
 * what a difference between two environments means (env.h) and what got
 * worse between two parity runs (baseline.h).  Table-driven: one row per
 * case, each with the expected class and why.
 */
#include <cjson/cJSON.h>
#include <math.h>

#include "onnxparity/baseline.h"
#include "onnxparity/env.h"
#include "testhelp.h"

// --- baseline: one row per pair ---------------------------------------------------

#define V(pass, ma, mf, t1, env) ((onp_baseline_values){1, pass, ma, NAN, mf, t1, env})
#define ABSENT ((onp_baseline_values){0, 1, NAN, NAN, NAN, -1, -1})

static const struct {
    const char *what;
    onp_baseline_values old, now;
    onp_change want;
    const char *why_has; /* a word the explanation must hold, or NULL */
} pairs[] = {
    {"identical", V(1, 1e-7, 0, 1, 1e-6), V(1, 1e-7, 0, 1, 1e-6), ONP_CHANGE_SAME, NULL},
    {"now fails", V(1, 1e-7, 0, 1, -1), V(0, 1e-1, 0.5, 1, -1), ONP_CHANGE_WORSE, "fails in NEW"},
    {"now passes", V(0, 1e-1, 0.5, 1, -1), V(1, 1e-7, 0, 1, -1), ONP_CHANGE_BETTER,
     "passes in NEW"},
    {"label flips", V(1, 1e-7, 0, 1, -1), V(1, 1e-7, 0, 0.75, -1), ONP_CHANGE_WORSE, "top-1"},
    {"more mismatches", V(0, 1e-2, 0.1, -1, -1), V(0, 1e-2, 0.2, -1, -1), ONP_CHANGE_WORSE,
     "mismatch_frac"},
    {"x25 without noise estimate", V(1, 1.2e-7, 0, -1, -1), V(1, 3e-6, 0, -1, -1), ONP_CHANGE_WORSE,
     "max_abs"},
    {"x1.5 is noise", V(1, 1e-7, 0, -1, -1), V(1, 1.5e-7, 0, -1, -1), ONP_CHANGE_SAME, NULL},
    {"x3 but inside the envelope", V(1, 1e-7, 0, -1, 8e-7), V(1, 3e-7, 0, -1, 8e-7),
     ONP_CHANGE_SAME, NULL},
    {"x30 beyond the envelope", V(1, 1e-7, 0, -1, 8e-7), V(1, 3e-6, 0, -1, 8e-7), ONP_CHANGE_WORSE,
     "envelope"},
    {"x10 smaller", V(1, 1e-6, 0, -1, -1), V(1, 1e-7, 0, -1, -1), ONP_CHANGE_BETTER, "max_abs"},
    {"unknown max_abs", V(1, NAN, 0, -1, -1), V(1, 1e-3, 0, -1, -1), ONP_CHANGE_SAME, NULL},
    {"lost", V(1, 1e-7, 0, -1, -1), ABSENT, ONP_CHANGE_ONLY_OLD, "missing"},
    {"added", ABSENT, V(1, 1e-7, 0, -1, -1), ONP_CHANGE_ONLY_NEW, "new"},
};

static void test_pairs(void)
{
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char why[300];
        onp_change c = onp_baseline_judge(&pairs[i].old, &pairs[i].now, why, sizeof why);
        CHECKF(c == pairs[i].want, "%s: %s, want %s", pairs[i].what, onp_change_name(c),
               onp_change_name(pairs[i].want));
        if (pairs[i].why_has)
            CHECKF(strstr(why, pairs[i].why_has) != NULL, "%s: why '%s'", pairs[i].what, why);
        else
            CHECKF(why[0] == '\0', "%s: why '%s' for SAME", pairs[i].what, why);
    }
    CHECK(onp_baseline_judge(&pairs[1].old, &pairs[1].now, NULL, 0) == ONP_CHANGE_WORSE);
}

static void test_verdict(void)
{
    size_t none[ONP_CHANGE_COUNT] = {5, 0, 0, 0, 2};
    size_t better[ONP_CHANGE_COUNT] = {5, 1, 0, 0, 0};
    size_t worse[ONP_CHANGE_COUNT] = {5, 0, 1, 0, 0};
    size_t lost[ONP_CHANGE_COUNT] = {5, 0, 0, 1, 0};
    size_t both[ONP_CHANGE_COUNT] = {5, 1, 0, 1, 0};
    CHECK(onp_baseline_verdict_of(none) == ONP_BASELINE_UNCHANGED);
    CHECK(onp_baseline_verdict_of(better) == ONP_BASELINE_IMPROVED);
    CHECK(onp_baseline_verdict_of(worse) == ONP_BASELINE_REGRESSED);
    CHECK(onp_baseline_verdict_of(lost) == ONP_BASELINE_REGRESSED);
    CHECK(onp_baseline_verdict_of(both) == ONP_BASELINE_MIXED);
    CHECK(!strcmp(onp_baseline_verdict_name(ONP_BASELINE_MIXED), "mixed"));
    CHECK(!strcmp(onp_change_name(ONP_CHANGE_ONLY_OLD), "only-old"));
}

// --- environment ----------------------------------------------------------------

static void test_env_compare(void)
{
    onp_env rec, now;
    onp_env_drift d[ONP_ENV_FIELD_COUNT];
    onp_env_init(&rec);
    onp_env_init(&now);
    CHECK(onp_env_compare(&rec, &now, d) == 0); /* nothing recorded: nothing compared */
    onp_env_set(&rec, ONP_ENV_ORT_VERSION, "1.29.0");
    onp_env_set(&rec, ONP_ENV_OPSET, "13");
    onp_env_set(&rec, ONP_ENV_MODEL_SHA256, "aa");
    onp_env_set(&now, ONP_ENV_ORT_VERSION, "1.30.0");
    onp_env_set(&now, ONP_ENV_OPSET, "13");
    onp_env_set(&now, ONP_ENV_MODEL_SHA256, "bb");
    onp_env_set(&now, ONP_ENV_EXPORTER, "dynamo"); /* not recorded: not compared */
    size_t n = onp_env_compare(&rec, &now, d);
    CHECK(n == 2);
    CHECK(d[0].field == ONP_ENV_ORT_VERSION && d[0].kind == ONP_DRIFT_RUNTIME);
    CHECK(!strcmp(d[0].recorded, "1.29.0") && !strcmp(d[0].current, "1.30.0"));
    CHECK(d[1].field == ONP_ENV_MODEL_SHA256 && d[1].kind == ONP_DRIFT_NOTE);
    onp_env_set(&now, ONP_ENV_OPSET, ""); /* unknown now: a drift */
    CHECK(onp_env_compare(&rec, &now, d) == 3 && d[1].field == ONP_ENV_OPSET && !d[1].current[0]);
    CHECK(onp_env_field_kind(ONP_ENV_TORCH_VERSION) == ONP_DRIFT_EXPORT);
    CHECK(onp_env_field_find("ort_library_sha256") == ONP_ENV_ORT_LIBRARY_SHA256);
    CHECK(onp_env_field_find("cpu") == ONP_ENV_FIELD_COUNT);
}

static void test_env_json_round_trip(void)
{
    onp_env a, b;
    const char *cfg[] = {"session.set_denormal_as_zero=1", "optimization.x=a;b"};
    onp_env_init(&a);
    onp_env_set(&a, ONP_ENV_INTRA_THREADS, "2");
    onp_env_set(&a, ONP_ENV_PROVIDER, "CPUExecutionProvider");
    onp_env_set_config(&a, cfg, 2);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "provider", "kept"); /* an existing member wins */
    CHECK(onp_env_write_json(&a, o) == 0);
    CHECK(cJSON_IsNumber(cJSON_GetObjectItem(o, "intra_threads")));
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "session_config")) == 2);
    CHECK(!strcmp(cJSON_GetObjectItem(o, "provider")->valuestring, "kept"));
    CHECK(!cJSON_GetObjectItem(o, "opset")); /* unknown: no member */
    onp_env_init(&b);
    onp_env_read_json(&b, o);
    CHECK(!strcmp(b.v[ONP_ENV_INTRA_THREADS], "2"));
    CHECK(!strcmp(b.v[ONP_ENV_SESSION_CONFIG], a.v[ONP_ENV_SESSION_CONFIG]));
    cJSON_Delete(o);
    /* no config entries is "(none)", written as [] and read back the same */
    onp_env_set_config(&a, NULL, 0);
    o = cJSON_CreateObject();
    onp_env_write_json(&a, o);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "session_config")) == 0);
    onp_env_init(&b);
    onp_env_read_json(&b, o);
    CHECK(!strcmp(b.v[ONP_ENV_SESSION_CONFIG], "(none)"));
    cJSON_Delete(o);
    onp_env_read_json(&b, NULL); /* accepted */
}

TEST_MAIN(test_pairs, test_verdict, test_env_compare, test_env_json_round_trip)
