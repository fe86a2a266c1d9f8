/*
 * test_manifest.c — parity.json read once (include/onnxparity/manifest.h):
 * every reader gives the same result through its path function and through
 * an open manifest (the noise book, adequacy, the export environment, the
 * lint's findings) on the example bundles' parity.json, as shipped and with
 * "noise" and "adequacy" sections added; errors name the file (not JSON,
 * not an object, missing) with each reader's wording kept; a NULL manifest
 * reads as a bundle without parity.json; export_args.traced_fixture's edge
 * cases.  Runs from the repository root (examples/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnxparity/adequacy.h"
#include "onnxparity/env.h"
#include "onnxparity/judge.h"
#include "onnxparity/lint.h"
#include "onnxparity/manifest.h"
#include "onnxparity/model.h"
#include "testhelp.h"

static const char *const bundles[] = {"examples/healthy", "examples/training"};

/* Write text to a fresh temporary file; its path goes to buf (PATH_MAX-ish). */
static void put(char *buf, size_t n, const char *text)
{
    snprintf(buf, n, "/tmp/onp_manifest_XXXXXX");
    int fd = mkstemp(buf);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

/* The whole file at path, NUL-terminated (malloc'ed), or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* A real parity.json with "noise" and "adequacy" sections added in front
 * (the shipped examples have neither): written to a temporary file. */
static int with_sections(const char *bundle, char *out, size_t n)
{
    char src[256];
    snprintf(src, sizeof src, "%s/parity.json", bundle);
    char *text = slurp(src);
    char *brace = text ? strchr(text, '{') : NULL;
    if (!brace) {
        free(text);
        return -1;
    }
    static const char extra[] =
        "{\"noise\": {\"reference\": \"float64\", \"fixtures\": ["
        "{\"fixture\": 0, \"outputs\": [{\"name\": \"logits\", \"max_abs\": 1e-6, \"rms\": 2e-7,"
        " \"scale_max\": 3.0, \"scale_rms\": 1.0, \"q999\": 9e-7}]},"
        "{\"fixture\": 2, \"outputs\": [{\"name\": \"logits\", \"max_abs\": 4e-6, \"rms\": 1e-7,"
        " \"scale_max\": 2.0, \"scale_rms\": 0.5}]}]},"
        " \"adequacy\": {\"schema\": \"onnxparity.adequacy/1\", \"samples\": 12, \"fixtures\": 3,"
        " \"shape_groups\": [{}, {}], \"near_boundary\": 1, \"flags\": [{\"id\": "
        "\"synthetic-normal\","
        " \"level\": \"warn\", \"message\": \"randn\", \"input\": \"x\"}],"
        " \"classifier_outputs\": [{\"name\": \"logits\", \"classes\": 4, \"classes_predicted\": 3,"
        " \"samples\": 12, \"near_boundary\": 1}]},";
    size_t len = strlen(extra) + strlen(brace + 1) + 1;
    char *doc = malloc(len);
    snprintf(doc, len, "%s%s", extra, brace + 1);
    put(out, n, doc);
    free(doc);
    free(text);
    return 0;
}

// --- the same results through both routes ------------------------------------------

static void same_noisebook(const char *path, const onp_manifest *mf)
{
    onp_error e;
    onp_noisebook *a = NULL, *b = NULL;
    CHECK(onp_noisebook_read(path, &a, &e) == 0 && a);
    CHECK(onp_noisebook_from_manifest(mf, &b, &e) == 0 && b);
    if (!a || !b) goto done;
    const char *ra = onp_noisebook_reference(a), *rb = onp_noisebook_reference(b);
    CHECKF(ra == rb || (ra && rb && !strcmp(ra, rb)), "%s: reference", path);
    CHECK(onp_noisebook_covered(a) == onp_noisebook_covered(b));
    onp_value_stats vs;
    memset(&vs, 0, sizeof vs);
    vs.scale_max = 6.0;
    vs.scale_rms = 2.0;
    for (int k = 0; k < 4; k++) {
        onp_noise na, nb;
        memset(&na, 0, sizeof na);
        memset(&nb, 0, sizeof nb);
        int fa = onp_noisebook_lookup(a, k, "logits", &vs, &na);
        int fb = onp_noisebook_lookup(b, k, "logits", &vs, &nb);
        CHECKF(fa == fb && !memcmp(&na, &nb, sizeof na), "%s: fixture %d", path, k);
    }
done:
    onp_noisebook_free(a);
    onp_noisebook_free(b);
}

static void same_adequacy(const char *path, const onp_manifest *mf)
{
    onp_error e;
    onp_adequacy *a = NULL, *b = NULL;
    CHECK(onp_adequacy_read(path, &a, &e) == 0 && a);
    CHECK(onp_adequacy_from_manifest(mf, &b, &e) == 0 && b);
    if (a && b) {
        CHECK(a->verdict == b->verdict);
        CHECK(a->samples == b->samples && a->fixtures == b->fixtures);
        CHECK(a->shape_groups == b->shape_groups && a->near_boundary == b->near_boundary);
        CHECK(a->n_flags == b->n_flags && a->n_outputs == b->n_outputs);
        for (size_t i = 0; i < a->n_flags && i < b->n_flags; i++)
            CHECK(!strcmp(a->flags[i].id, b->flags[i].id) &&
                  !strcmp(a->flags[i].message, b->flags[i].message) &&
                  !strcmp(a->flags[i].where, b->flags[i].where) &&
                  a->flags[i].level == b->flags[i].level);
        for (size_t i = 0; i < a->n_outputs && i < b->n_outputs; i++)
            CHECK(!strcmp(a->outputs[i].name, b->outputs[i].name) &&
                  a->outputs[i].classes == b->outputs[i].classes &&
                  a->outputs[i].classes_predicted == b->outputs[i].classes_predicted &&
                  a->outputs[i].samples == b->outputs[i].samples &&
                  a->outputs[i].near_boundary == b->outputs[i].near_boundary);
    }
    onp_adequacy_free(a);
    onp_adequacy_free(b);
}

static void same_env(const onp_model *m, const char *path, const onp_manifest *mf)
{
    onp_error e;
    onp_env *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    onp_env_init(a);
    onp_env_init(b);
    CHECK(onp_env_from_bundle(a, m, path, &e) == 0);
    CHECK(onp_env_from_manifest(b, m, mf, &e) == 0);
    CHECK(!memcmp(a, b, sizeof *a));
    CHECKF(!strcmp(b->v[ONP_ENV_EXPORTER], "legacy"), "exporter '%s'", b->v[ONP_ENV_EXPORTER]);
    CHECK(b->v[ONP_ENV_TORCH_VERSION][0] && b->v[ONP_ENV_OPSET][0]);
    free(a);
    free(b);
}

static void same_lint(const onp_model *m, const char *path, const onp_manifest *mf, int findings)
{
    onp_error e;
    onp_lint_result a, b;
    onp_lint_opts oa = {.manifest = path};
    /* the document wins over the path: this one does not exist */
    onp_lint_opts ob = {.manifest = "/nonexistent/parity.json", .manifest_doc = mf};
    CHECK(onp_lint_run(m, &oa, &a, &e) == 0);
    CHECK(onp_lint_run(m, &ob, &b, &e) == 0);
    CHECK(a.manifest_read == 1 && b.manifest_read == 1);
    CHECKF(a.n == b.n && a.tracer_warnings == b.tracer_warnings, "%zu %zu", a.n, b.n);
    CHECKF(!findings || a.n > 0, "%s: no findings", path);
    for (size_t i = 0; i < a.n && i < b.n; i++)
        CHECKF(a.findings[i].rule == b.findings[i].rule &&
                   !strcmp(a.findings[i].message, b.findings[i].message) &&
                   !strcmp(a.findings[i].loc.name, b.findings[i].loc.name) &&
                   a.findings[i].order == b.findings[i].order,
               "%s: finding %zu", path, i);
    for (int s = 0; s < ONP_LINT_SEVERITY_COUNT; s++) CHECK(a.counts[s] == b.counts[s]);
    onp_lint_result_free(&a);
    onp_lint_result_free(&b);
}

/* findings: the bundle lints with findings (examples/training) */
static void both_routes(const onp_model *m, const char *path, int sections, int findings)
{
    onp_error e;
    onp_manifest *mf = NULL;
    CHECKF(onp_manifest_open(path, &mf, &e) == 0 && mf, "%s: %s", path, e.msg);
    if (!mf) return;
    CHECK(!strcmp(onp_manifest_path(mf), path));
    CHECK(onp_manifest_doc(mf) != NULL);
    CHECK(onp_manifest_traced_fixture(mf) == 1); /* both examples were traced on fixture 1 */
    same_noisebook(path, mf);
    same_adequacy(path, mf);
    same_env(m, path, mf);
    same_lint(m, path, mf, findings);
    /* the sections are there (or not) through the document route */
    onp_noisebook *nb = NULL;
    onp_adequacy *ad = NULL;
    CHECK(onp_noisebook_from_manifest(mf, &nb, &e) == 0);
    CHECK(onp_adequacy_from_manifest(mf, &ad, &e) == 0);
    CHECK(onp_noisebook_covered(nb) == (sections ? 2u : 0u));
    CHECK(ad && ad->verdict == (sections ? ONP_ADEQUACY_INADEQUATE : ONP_ADEQUACY_ABSENT));
    onp_noisebook_free(nb);
    onp_adequacy_free(ad);
    onp_manifest_free(mf);
}

static void test_same_results(void)
{
    for (size_t i = 0; i < sizeof bundles / sizeof bundles[0]; i++) {
        char model[256], path[256], ext[64];
        snprintf(model, sizeof model, "%s/model.onnx", bundles[i]);
        snprintf(path, sizeof path, "%s/parity.json", bundles[i]);
        onp_model *m = NULL;
        onp_error e;
        if (onp_model_open(model, &m, &e)) SKIP("the example bundles are not there");
        both_routes(m, path, 0, i == 1);
        CHECK(with_sections(bundles[i], ext, sizeof ext) == 0);
        both_routes(m, ext, 1, i == 1);
        unlink(ext);
        onp_model_close(m);
    }
}

// --- no manifest --------------------------------------------------------------------

static void test_null_manifest(void)
{
    onp_error e;
    CHECK(onp_manifest_doc(NULL) == NULL && onp_manifest_path(NULL) == NULL);
    CHECK(onp_manifest_traced_fixture(NULL) == -1);
    onp_manifest_free(NULL);
    onp_noisebook *nb = NULL;
    CHECK(onp_noisebook_from_manifest(NULL, &nb, &e) == 0 && nb);
    CHECK(onp_noisebook_covered(nb) == 0 && !onp_noisebook_reference(nb));
    onp_noisebook_free(nb);
    onp_adequacy *ad = (onp_adequacy *)&ad;
    CHECK(onp_adequacy_from_manifest(NULL, &ad, &e) == 0 && ad == NULL);
    onp_model *m = NULL;
    if (onp_model_open("examples/healthy/model.onnx", &m, &e)) SKIP("no example bundle");
    onp_env *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    onp_env_init(a);
    onp_env_init(b);
    CHECK(onp_env_from_manifest(a, m, NULL, &e) == 0);
    CHECK(onp_env_from_bundle(b, m, NULL, &e) == 0);
    CHECK(!memcmp(a, b, sizeof *a) && a->v[ONP_ENV_OPSET][0] && !a->v[ONP_ENV_EXPORTER][0]);
    CHECK(onp_env_from_bundle(b, m, "/nonexistent/parity.json", &e) == 0);
    CHECK(!memcmp(a, b, sizeof *a));
    onp_lint_opts o = {.manifest_doc = NULL};
    onp_lint_result r;
    CHECK(onp_lint_run(m, &o, &r, &e) == 0 && r.manifest_read == 0);
    onp_lint_result_free(&r);
    free(a);
    free(b);
    onp_model_close(m);
}

// --- errors name the file -----------------------------------------------------------

typedef struct err_case {
    const char *what, *json; /* json NULL: a missing file */
    onp_errcode code;
    const char *msg; /* what onp_manifest_open, noisebook and lint say */
} err_case;

static int names(const onp_error *e, onp_errcode code, const char *path, const char *msg)
{
    return e->code == code && !strcmp(e->file, path) && (!msg || strstr(e->msg, msg));
}

static void test_errors(void)
{
    static const err_case cases[] = {
        {"not JSON", "{\"a\": ", ONP_ERR_FORMAT,
         "not valid JSON (a parity.json manifest was expected)"},
        {"duplicate key", "{\"a\": 1, \"a\": 2}", ONP_ERR_FORMAT,
         "not valid JSON (a parity.json manifest was expected)"},
        {"an array", "[1, 2]", ONP_ERR_FORMAT,
         "not a JSON object (a parity.json manifest was expected)"},
        {"a string", "\"parity\"", ONP_ERR_FORMAT,
         "not a JSON object (a parity.json manifest was expected)"},
        {"missing", NULL, ONP_ERR_IO, "cannot open"},
    };
    onp_model *m = NULL;
    onp_error e;
    onp_model_open("examples/healthy/model.onnx", &m, &e);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const err_case *c = &cases[i];
        char path[64] = "/tmp/onp_manifest_missing/parity.json";
        if (c->json) put(path, sizeof path, c->json);
        onp_manifest *mf = (onp_manifest *)&mf;
        onp_error_clear(&e);
        CHECK(onp_manifest_open(path, &mf, &e) == -1 && mf == NULL);
        CHECKF(names(&e, c->code, path, c->msg), "%s: %s: %s", c->what, e.file, e.msg);
        onp_noisebook *nb = (onp_noisebook *)&nb;
        onp_error_clear(&e);
        CHECK(onp_noisebook_read(path, &nb, &e) == -1 && nb == NULL);
        CHECKF(names(&e, c->code, path, c->msg), "noisebook %s: %s", c->what, e.msg);
        if (m) {
            onp_lint_opts o = {.manifest = path};
            onp_lint_result r;
            onp_error_clear(&e);
            CHECK(onp_lint_run(m, &o, &r, &e) == -1 && r.n == 0 && r.findings == NULL);
            CHECKF(names(&e, c->code, path, c->msg), "lint %s: %s", c->what, e.msg);
        }
        /* adequacy and env keep their wording: "not valid JSON"; a document
         * that is not an object holds no report and no export field */
        int object_error = c->json && strstr(c->msg, "not a JSON object");
        onp_adequacy *ad = NULL;
        onp_error_clear(&e);
        int rc = onp_adequacy_read(path, &ad, &e);
        if (object_error) {
            CHECKF(rc == 0 && ad && ad->verdict == ONP_ADEQUACY_ABSENT, "adequacy %s", c->what);
        } else {
            CHECK(rc == -1 && ad == NULL);
            CHECKF(names(&e, c->code, path, c->json ? "not valid JSON" : "cannot open"),
                   "adequacy %s: %s", c->what, e.msg);
            CHECK(!c->json || !strstr(e.msg, "parity.json manifest was expected"));
        }
        onp_adequacy_free(ad);
        if (m) {
            onp_env env;
            onp_env_init(&env);
            onp_error_clear(&e);
            rc = onp_env_from_bundle(&env, m, path, &e);
            if (object_error || !c->json) {
                CHECKF(rc == 0, "env %s", c->what);
            } else {
                CHECK(rc == -1);
                CHECKF(names(&e, ONP_ERR_FORMAT, path, "not valid JSON"), "env %s: %s", c->what,
                       e.msg);
            }
            CHECK(env.v[ONP_ENV_OPSET][0]); /* set before the manifest is read, as before */
        }
        if (c->json) unlink(path);
    }
    /* a malformed section through the document route names the file too */
    char path[64];
    put(path, sizeof path,
        "{\"noise\": {\"fixtures\": [{\"fixture\": -1, \"outputs\": []}]},"
        " \"adequacy\": {\"schema\": \"x/1\"}}");
    onp_manifest *mf = NULL;
    CHECK(onp_manifest_open(path, &mf, &e) == 0);
    onp_noisebook *nb = (onp_noisebook *)&nb;
    onp_error_clear(&e);
    CHECK(onp_noisebook_from_manifest(mf, &nb, &e) == -1 && nb == NULL);
    CHECKF(names(&e, ONP_ERR_FORMAT, path, NULL) && !strcmp(e.field, "noise.fixtures[0]"), "%s %s",
           e.field, e.msg);
    onp_adequacy *ad = (onp_adequacy *)&ad;
    onp_error_clear(&e);
    CHECK(onp_adequacy_from_manifest(mf, &ad, &e) == -1 && ad == NULL);
    CHECKF(names(&e, ONP_ERR_FORMAT, path, "adequacy.schema"), "%s", e.msg);
    onp_manifest_free(mf);
    unlink(path);
    onp_model_close(m);
}

// --- export_args.traced_fixture ----------------------------------------------------

static void test_traced_fixture(void)
{
    static const struct {
        const char *json;
        int want;
    } cases[] = {
        {"{}", -1},
        {"{\"export_args\": null}", -1},
        {"{\"export_args\": [1]}", -1},
        {"{\"export_args\": {}}", -1},
        {"{\"export_args\": {\"traced_fixture\": null}}", -1},
        {"{\"export_args\": {\"traced_fixture\": 0}}", 0},
        {"{\"export_args\": {\"traced_fixture\": 7}}", 7},
        {"{\"export_args\": {\"traced_fixture\": 3.0}}", 3},
        {"{\"export_args\": {\"traced_fixture\": -1}}", -1},
        {"{\"export_args\": {\"traced_fixture\": -5}}", -1},
        {"{\"export_args\": {\"traced_fixture\": 2.5}}", -1},
        {"{\"export_args\": {\"traced_fixture\": 2147483647}}", 2147483647},
        {"{\"export_args\": {\"traced_fixture\": 2147483648}}", -1},
        {"{\"export_args\": {\"traced_fixture\": 1e300}}", -1},
        {"{\"export_args\": {\"traced_fixture\": \"3\"}}", -1},
        {"{\"export_args\": {\"traced_fixture\": true}}", -1},
        {"{\"traced_fixture\": 4}", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[64];
        put(path, sizeof path, cases[i].json);
        onp_manifest *mf = NULL;
        onp_error e;
        CHECKF(onp_manifest_open(path, &mf, &e) == 0, "%s: %s", cases[i].json, e.msg);
        int k = onp_manifest_traced_fixture(mf);
        CHECKF(k == cases[i].want, "%s: %d", cases[i].json, k);
        onp_manifest_free(mf);
        unlink(path);
    }
}

TEST_MAIN(test_same_results, test_null_manifest, test_errors, test_traced_fixture)
