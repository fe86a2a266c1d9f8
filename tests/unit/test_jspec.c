/*
 * test_jspec.c — typed reading of JSON documents (include/onnxparity/jspec.h)
 * and the real-number accessor (json.h onp_json_real): what each type set
 * accepts, the words of the refusal, the path to the value refused, and the
 * tables of the result documents on valid and type-confused documents.
 */
#include <cjson/cJSON.h>
#include <math.h>

#include "onnxparity/json.h"
#include "onnxparity/jspec.h"
#include "testhelp.h"

// --- onp_json_real --------------------------------------------------------------------

static void test_json_real(void)
{
    cJSON *doc =
        cJSON_Parse("[1.5, \"nan\", \"inf\", \"-inf\", \"x\", \"NaN\", null, true, [], -0.0]");
    double d = 0;
    CHECK(!onp_json_real(cJSON_GetArrayItem(doc, 0), &d) && d == 1.5);
    CHECK(!onp_json_real(cJSON_GetArrayItem(doc, 1), &d) && isnan(d));
    CHECK(!onp_json_real(cJSON_GetArrayItem(doc, 2), &d) && isinf(d) && d > 0);
    CHECK(!onp_json_real(cJSON_GetArrayItem(doc, 3), &d) && isinf(d) && d < 0);
    for (int i = 4; i < 9; i++) CHECKF(onp_json_real(cJSON_GetArrayItem(doc, i), &d), "item %d", i);
    CHECK(!onp_json_real(cJSON_GetArrayItem(doc, 9), &d) && d == 0);
    CHECK(onp_json_real(NULL, &d));
    cJSON_Delete(doc);
}

// --- onp_jspec_words ------------------------------------------------------------------

static void test_words(void)
{
    char b[160];
    CHECK(!strcmp(onp_jspec_words(0, b, sizeof b), "any value"));
    CHECK(!strcmp(onp_jspec_words(ONP_J_REAL, b, sizeof b), "a number"));
    CHECK(!strcmp(onp_jspec_words(ONP_J_COUNT, b, sizeof b), "a whole number >= 0"));
    CHECK(!strcmp(onp_jspec_words(ONP_J_REAL | ONP_J_MIN0 | ONP_J_MAX1, b, sizeof b),
                  "a number from 0 to 1"));
    CHECK(!strcmp(onp_jspec_words(ONP_J_STRING | ONP_J_NULL, b, sizeof b), "a string or null"));
    CHECK(!strcmp(onp_jspec_words(ONP_J_BOOL, b, sizeof b), "true or false"));
    CHECK(!strcmp(onp_jspec_words(ONP_J_STRING | ONP_J_OBJECT | ONP_J_NULL, b, sizeof b),
                  "a string or an object or null"));
    char small[8];
    CHECK(strlen(onp_jspec_words(ONP_J_COUNT | ONP_J_NULL, small, sizeof small)) < sizeof small);
}

// --- one value against one type set ----------------------------------------------------

typedef struct type_case {
    const char *value; /* JSON text */
    unsigned types;
    int ok;
} type_case;

static const type_case type_cases[] = {
    {"1", ONP_J_NUMBER, 1},
    {"\"1\"", ONP_J_NUMBER, 0},
    {"\"nan\"", ONP_J_NUMBER, 0}, /* the strings only where ONP_J_NONFINITE says */
    {"\"nan\"", ONP_J_REAL, 1},
    {"\"inf\"", ONP_J_REAL, 1},
    {"\"-inf\"", ONP_J_REAL, 1},
    {"\"Infinity\"", ONP_J_REAL, 0},
    {"\"x\"", ONP_J_REAL, 0},
    {"[]", ONP_J_REAL, 0},
    {"{}", ONP_J_REAL, 0},
    {"true", ONP_J_REAL, 0},
    {"null", ONP_J_REAL, 0},
    {"null", ONP_J_REAL | ONP_J_NULL, 1},
    /* bounds: NaN passes (a value not measured), -inf does not */
    {"-1", ONP_J_REAL | ONP_J_MIN0, 0},
    {"-1e-320", ONP_J_REAL | ONP_J_MIN0, 0},
    {"-0.0", ONP_J_REAL | ONP_J_MIN0, 1},
    {"\"-inf\"", ONP_J_REAL | ONP_J_MIN0, 0},
    {"\"inf\"", ONP_J_REAL | ONP_J_MIN0, 1},
    {"\"nan\"", ONP_J_REAL | ONP_J_MIN0 | ONP_J_MAX1, 1},
    {"1.5", ONP_J_REAL | ONP_J_MIN0 | ONP_J_MAX1, 0},
    {"\"inf\"", ONP_J_REAL | ONP_J_MIN0 | ONP_J_MAX1, 0},
    {"1", ONP_J_REAL | ONP_J_MIN0 | ONP_J_MAX1, 1},
    /* whole numbers */
    {"3", ONP_J_COUNT, 1},
    {"1e300", ONP_J_COUNT, 1}, /* whole, however large: no cast happens here */
    {"2.5", ONP_J_COUNT, 0},
    {"-1", ONP_J_COUNT, 0},
    {"-1", ONP_J_INT, 1},
    {"\"nan\"", ONP_J_INT | ONP_J_NONFINITE, 0},
    /* the other types */
    {"true", ONP_J_BOOL, 1},
    {"\"yes\"", ONP_J_BOOL, 0},
    {"1", ONP_J_BOOL, 0},
    {"\"s\"", ONP_J_STRING, 1},
    {"5", ONP_J_STRING, 0},
    {"[1]", ONP_J_ARRAY, 1},
    {"{}", ONP_J_ARRAY, 0},
    {"{}", ONP_J_OBJECT, 1},
    {"[]", ONP_J_OBJECT, 0},
    {"[]", 0, 1},
    {"null", 0, 1},
};

static void test_types(void)
{
    for (size_t i = 0; i < sizeof type_cases / sizeof type_cases[0]; i++) {
        const type_case *c = &type_cases[i];
        cJSON *v = cJSON_Parse(c->value);
        onp_jspec spec = {c->types, NULL, NULL, NULL};
        onp_error e;
        onp_error_clear(&e);
        int rc = onp_jspec_check(v, &spec, "t.json", &e);
        CHECKF((rc == 0) == c->ok, "case %zu: %s as %#x: %s", i, c->value, c->types, e.msg);
        if (rc) {
            char words[160];
            onp_jspec_words(c->types, words, sizeof words);
            CHECK(e.code == ONP_ERR_INPUT && !strcmp(e.file, "t.json") && !e.field[0]);
            CHECKF(!strncmp(e.msg, "not ", 4) && !strcmp(e.msg + 4, words), "case %zu: %s", i,
                   e.msg);
        }
        cJSON_Delete(v);
    }
}

/* Arrays, objects, required members, a second spec, the path in the error. */
static void test_nesting(void)
{
    static const onp_jspec num = {ONP_J_REAL | ONP_J_MIN0, NULL, NULL, NULL};
    static const onp_jspec flag = {ONP_J_BOOL, NULL, NULL, NULL};
    static const onp_jfield extra_f[] = {{"max_abs", &num, 0}, {NULL, NULL, 0}};
    static const onp_jspec extra = {ONP_J_OBJECT, NULL, extra_f, NULL};
    static const onp_jfield out_f[] = {{"pass", &flag, 1}, {NULL, NULL, 0}};
    static const onp_jspec out = {ONP_J_OBJECT, NULL, out_f, &extra};
    static const onp_jspec outs = {ONP_J_ARRAY, &out, NULL, NULL};
    static const onp_jfield fx_f[] = {{"outputs", &outs, 0}, {NULL, NULL, 0}};
    static const onp_jspec fx = {ONP_J_OBJECT, NULL, fx_f, NULL};
    static const onp_jspec fxs = {ONP_J_ARRAY, &fx, NULL, NULL};
    static const onp_jfield root_f[] = {{"fixtures", &fxs, 1}, {NULL, NULL, 0}};
    static const onp_jspec root = {ONP_J_OBJECT, NULL, root_f, NULL};
    static const struct {
        const char *doc, *field, *msg; /* field NULL: accepted */
    } cases[] = {
        {"{\"fixtures\": []}", NULL, NULL},
        {"{\"fixtures\": [{}, {\"outputs\": [{\"pass\": true, \"max_abs\": \"inf\", \"x\": []}]}],"
         " \"other\": {\"anything\": [1, \"2\"]}}",
         NULL, NULL},
        {"{}", "fixtures", "missing"},
        {"[]", "", "not an object"},
        {"{\"fixtures\": {}}", "fixtures", "not an array"},
        {"{\"fixtures\": [1]}", "fixtures[0]", "not an object"},
        {"{\"fixtures\": [{}, {\"outputs\": [{\"pass\": true}, {\"pass\": \"yes\"}]}]}",
         "fixtures[1].outputs[1].pass", "not true or false"},
        {"{\"fixtures\": [{\"outputs\": [{\"pass\": false, \"max_abs\": -1}]}]}",
         "fixtures[0].outputs[0].max_abs", "not a number >= 0"},
        {"{\"fixtures\": [{\"outputs\": [{\"max_abs\": \"x\"}]}]}", "fixtures[0].outputs[0].pass",
         "missing"}, /* members in table order: pass before the second spec's max_abs */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *v = cJSON_Parse(cases[i].doc);
        onp_error e;
        onp_error_clear(&e);
        int rc = onp_jspec_check(v, &root, "a.json", &e);
        if (!cases[i].field) {
            CHECKF(rc == 0, "case %zu: %s: %s", i, e.field, e.msg);
        } else {
            CHECKF(rc == -1 && !strcmp(e.field, cases[i].field) && !strcmp(e.msg, cases[i].msg),
                   "case %zu: '%s: %s'", i, e.field, e.msg);
            char line[1200];
            onp_error_format(&e, line, sizeof line);
            CHECK(!strncmp(line, "a.json: ", 8));
        }
        cJSON_Delete(v);
    }
}

// --- the result documents --------------------------------------------------------------

/* A check document as the tool writes one (shortened), with "@" where a
 * case puts its value. */
static const char check_doc[] =
    "{\"schema\": \"onnxparity.check/1\", \"verdict\": \"fail\", \"model\": \"m.onnx\","
    " \"environment\": {\"onnxparity\": \"0.1.0\", \"ort_version\": \"1.29.0\", \"intra_threads\": "
    "0,"
    "  \"session_config\": [], \"opset\": 13, \"upgraded_to_opset7\": false},"
    " \"fixtures\": [{\"index\": 0, \"dir\": \"b/test_data_set_0\", \"status\": \"pass\", "
    "\"outputs\": ["
    "   {\"name\": \"a\", \"pass\": true, \"dtype\": \"float32\", \"shape\": [1, 10], \"count\": "
    "10,"
    "    \"mismatches\": 0, \"mismatch_frac\": 0, \"max_abs\": 1e-8, \"max_rel\": \"nan\","
    "    \"histogram\": [10, 0], \"judgment\": {\"verdict\": \"within-noise\", \"pass\": true,"
    "    \"envelope\": {\"max_abs\": 2e-7}}, \"topk\": {\"k\": 1, \"rows\": 1, \"top1_agree\": 1}},"
    "   {\"name\": \"b\", \"pass\": false, \"judgment\": {\"envelope\": null}, @}]}],"
    " \"summary\": {\"fixtures\": 1, \"topk\": {\"rows\": 1, \"flip_rate_upper\": 0.95}},"
    " \"causes\": [{\"id\": \"unknown\", \"node\": null, \"evidence\": [\"e\"], \"fix\": \"f\"}],"
    " \"first_divergent\": null, \"latent\": [], \"adequacy\": null, \"options\": {}}";

typedef struct doc_case {
    const char *member; /* put at "@" in check_doc */
    const char *field;  /* NULL: accepted */
    const char *msg;
} doc_case;

static const doc_case check_cases[] = {
    {"\"max_abs\": 0.5", NULL, NULL},
    {"\"max_abs\": \"inf\"", NULL, NULL},
    {"\"max_abs\": null", NULL, NULL},
    {"\"max_abs\": \"x\"", "fixtures[0].outputs[1].max_abs", "not a number >= 0 or null"},
    {"\"max_abs\": []", "fixtures[0].outputs[1].max_abs", "not a number >= 0 or null"},
    {"\"max_abs\": -1", "fixtures[0].outputs[1].max_abs", "not a number >= 0 or null"},
    {"\"max_abs\": \"-inf\"", "fixtures[0].outputs[1].max_abs", "not a number >= 0 or null"},
    {"\"max_rel\": {}", "fixtures[0].outputs[1].max_rel", "not a number >= 0 or null"},
    {"\"mismatch_frac\": 1.5", "fixtures[0].outputs[1].mismatch_frac", "not a number from 0 to 1"},
    {"\"count\": 2.5", "fixtures[0].outputs[1].count", "not a whole number >= 0"},
    {"\"histogram\": [1, \"2\"]", "fixtures[0].outputs[1].histogram[1]", "not a whole number >= 0"},
    {"\"shape\": [1, 2.5]", "fixtures[0].outputs[1].shape[1]", "not a whole number"},
    {"\"dtype\": 5", "fixtures[0].outputs[1].dtype", "not a string"},
    {"\"topk\": {\"rows\": -3}", "fixtures[0].outputs[1].topk.rows", "not a whole number >= 0"},
    {"\"topk\": []", "fixtures[0].outputs[1].topk", "not an object"},
};

/* check_doc with `member` at "@" and then `from` (when not NULL) replaced by
 * `to`, checked against the check table: the field refused, or "" when
 * accepted, into field (and the message into msg). */
static int check_variant(const char *member, const char *from, const char *to, char *field,
                         char *msg)
{
    char text[4096], out[4096];
    const char *at = strchr(check_doc, '@');
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - check_doc), check_doc, member, at + 1);
    const char *sw = from ? strstr(text, from) : NULL;
    if (from && !sw) return -1;
    if (sw)
        snprintf(out, sizeof out, "%.*s%s%s", (int)(sw - text), text, to, sw + strlen(from));
    else
        snprintf(out, sizeof out, "%s", text);
    onp_error e;
    onp_error_clear(&e);
    cJSON *doc = onp_json_parse(out, strlen(out), "a.json", ONP_ERR_FORMAT, "bad", &e);
    if (!doc) return -1;
    int rc = onp_jspec_check(doc, onp_jspec_of("onnxparity.check/1"), "a.json", &e);
    cJSON_Delete(doc);
    snprintf(field, 160, "%s", rc ? e.field : "");
    snprintf(msg, 768, "%s", rc ? e.msg : "");
    return rc && e.code != ONP_ERR_INPUT ? -1 : 0;
}

static void test_check_document(void)
{
    char field[160], msg[768];
    for (size_t i = 0; i < sizeof check_cases / sizeof check_cases[0]; i++) {
        const doc_case *c = &check_cases[i];
        CHECK(check_variant(c->member, NULL, NULL, field, msg) == 0);
        CHECKF(!strcmp(field, c->field ? c->field : "") && (!c->msg || !strcmp(msg, c->msg)),
               "%s: '%s: %s'", c->member, field, msg);
    }
    static const char *const swaps[][3] = {
        /* from, to, the field refused */
        {"\"pass\": true, \"dtype\"", "\"pass\": \"yes\", \"dtype\"",
         "fixtures[0].outputs[0].pass"},
        {"{\"name\": \"a\", \"pass\": true,", "{\"name\": \"a\",", "fixtures[0].outputs[0].pass"},
        {"\"envelope\": {\"max_abs\": 2e-7}", "\"envelope\": {\"max_abs\": -2e-7}",
         "fixtures[0].outputs[0].judgment.envelope.max_abs"},
        {"\"intra_threads\": 0", "\"intra_threads\": \"0\"", "environment.intra_threads"},
        {"\"session_config\": []", "\"session_config\": [1]", "environment.session_config[0]"},
        {"\"opset\": 13", "\"opset\": 13.5", "environment.opset"},
        {"\"fixtures\": [{", "\"fixtures\": [7, {", "fixtures[0]"},
        {"\"node\": null", "\"node\": 3", "causes[0].node"},
        {"\"evidence\": [\"e\"]", "\"evidence\": \"e\"", "causes[0].evidence"},
        {"\"first_divergent\": null", "\"first_divergent\": []", "first_divergent"},
        {"\"flip_rate_upper\": 0.95", "\"flip_rate_upper\": \"high\"",
         "summary.topk.flip_rate_upper"},
        {"\"adequacy\": null", "\"adequacy\": {\"flags\": [{\"id\": 1}]}", "adequacy.flags[0].id"},
        {"\"schema\": \"onnxparity.check/1\", ", "", "schema"},
        /* a member no reader reads is not checked */
        {"\"options\": {}", "\"options\": {\"top_k\": [\"any\"]}, \"extra\": [1, {}]", ""},
    };
    for (size_t i = 0; i < sizeof swaps / sizeof swaps[0]; i++) {
        CHECKF(check_variant("\"note\": \"n\"", swaps[i][0], swaps[i][1], field, msg) == 0,
               "swap %zu", i);
        CHECKF(!strcmp(field, swaps[i][2]), "swap %zu: '%s: %s'", i, field, msg);
    }
}

/* The other documents: a small valid one each, and one refusal each. */
static void test_other_documents(void)
{
    static const char *const cases[][3] = {
        /* document, field refused ("" accepted) */
        {"{\"schema\": \"onnxparity.bisect/1\", \"verdict\": \"diverges\", \"fixture\": null,"
         " \"summary\": {\"values_exposed\": 11}, \"curve\": [{\"value\": \"v\", \"max_abs\": 0.1,"
         " \"pass\": false}], \"first_divergent\": {\"node\": \"n\", \"index\": 1, \"local\":"
         " {\"verdict\": \"local\", \"mismatches\": null}, \"inputs\": [{\"name\": \"i\", "
         "\"pass\": true}],"
         " \"metrics\": {\"histogram\": [1]}}}",
         ""},
        {"{\"schema\": \"onnxparity.bisect/1\", \"curve\": [{\"value\": \"v\", \"pass\": \"no\"}]}",
         "curve[0].pass"},
        {"{\"schema\": \"onnxparity.bisect/1\", \"first_divergent\": {\"local\": 3}}",
         "first_divergent.local"},
        {"{\"schema\": \"onnxparity.diagnose/1\", \"first_divergent\": {\"local\": \"local\"},"
         " \"probes\": {\"determinism\": {\"runs\": 2}}, \"sweep\": null}",
         ""},
        {"{\"schema\": \"onnxparity.diagnose/1\", \"probes\": [1]}", "probes"},
        {"{\"schema\": \"onnxparity.sweep/1\", \"sweep\": {\"levels\": [{\"level\": \"all\", "
         "\"ran\": true,"
         " \"pass\": null, \"outputs\": [{\"name\": \"y\", \"max_abs\": 0.5, \"pass\": false}]}],"
         " \"optimizer_search\": {\"culprit\": null, \"sessions\": 0}}}",
         ""},
        {"{\"schema\": \"onnxparity.sweep/1\", \"sweep\": {\"levels\": [{\"ran\": 1}]}}",
         "sweep.levels[0].ran"},
        {"{\"schema\": \"onnxparity.gate/1\", \"checks\": [{\"output\": null, \"measured\": "
         "\"inf\","
         " \"limit\": 0, \"pass\": false}], \"regressions\": [{\"fixture\": null, \"value\": 1}],"
         " \"summary\": {\"regressions\": 1}, \"environment_recorded\": true}",
         ""},
        {"{\"schema\": \"onnxparity.gate/1\", \"checks\": [{\"pass\": \"false\"}]}",
         "checks[0].pass"},
        {"{\"schema\": \"onnxparity.gate/1\", \"summary\": {\"regressions\": -1}}",
         "summary.regressions"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        onp_error e;
        onp_error_clear(&e);
        cJSON *doc =
            onp_json_parse(cases[i][0], strlen(cases[i][0]), "d.json", ONP_ERR_FORMAT, "bad", &e);
        CHECKF(doc != NULL, "case %zu: %s", i, e.msg);
        const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
        const onp_jspec *spec = onp_jspec_of(cJSON_GetStringValue(schema));
        CHECK(spec != NULL);
        int rc = onp_jspec_check(doc, spec, "d.json", &e);
        if (!cases[i][1][0])
            CHECKF(rc == 0, "case %zu: %s: %s", i, e.field, e.msg);
        else
            CHECKF(rc == -1 && !strcmp(e.field, cases[i][1]), "case %zu: '%s: %s'", i, e.field,
                   e.msg);
        cJSON_Delete(doc);
    }
    CHECK(onp_jspec_of("onnxparity.criteria/1") == NULL);
    CHECK(onp_jspec_of("onnxparity.check/2") == NULL);
    CHECK(onp_jspec_of(NULL) == NULL);
}

TEST_MAIN(test_json_real, test_words, test_types, test_nesting, test_check_document,
          test_other_documents)
