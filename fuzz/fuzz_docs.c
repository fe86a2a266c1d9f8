/*
 * fuzz_docs.c — libFuzzer target for the typed reading of the result
 * documents that diff and report read back (include/onnxparity/jspec.h:
 * onp_jspec_check over the tables onp_jspec_of gives; src/util/jspec.c,
 * src/util/docspec.c), after the strict parse (json.h onp_json_parse).
 *
 * The bytes are parsed strictly (no NUL terminator: the parser must respect
 * the length); a refusal must be ONP_ERR_FORMAT or ONP_ERR_NOMEM with a
 * message.  A parsed tree is checked against every document table (its own
 * and the four others: a check document read as a gate document is type
 * confusion too).  A refusal must be ONP_ERR_INPUT, name the file, say
 * "missing" or "not <words>", and its field must be a path that leads into
 * the tree: to the value refused, or for "missing" to the object that lacks
 * the member.  An acceptance must keep the promises the readers rely on,
 * checked here by a walk of its own over the members they read: every
 * output of a check document has a string name and a boolean pass, its
 * errors are numbers (or "nan"/"inf") never below 0, mismatch_frac lies in
 * [0, 1], its top-K counts are whole and >= 0; a bisect curve point's pass
 * is a boolean; a gate check's pass is a boolean and its measured value a
 * number or null; environment threads are whole and >= 0.  onp_jspec_words
 * must end its text within the buffer for any type set.
 * Seeds: fuzz/corpus/docs/ (fuzz/gen_corpus.py).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/json.h"
#include "onnxparity/jspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENSURE(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) __builtin_trap();                                                                \
    } while (0)

static const char *const schemas[] = {"onnxparity.check/1", "onnxparity.bisect/1",
                                      "onnxparity.diagnose/1", "onnxparity.sweep/1",
                                      "onnxparity.gate/1"};

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* Follow an error's field ("a.b[3].c") from the root: the value it names,
 * or NULL.  With `parent`, stop before the last member (for "missing"). */
static const cJSON *follow(const cJSON *root, const char *field, int parent)
{
    const cJSON *v = root;
    const char *p = field;
    while (*p && v) {
        if (*p == '[') {
            char *end;
            unsigned long i = strtoul(p + 1, &end, 10);
            ENSURE(*end == ']');
            ENSURE(cJSON_IsArray(v));
            v = i < (unsigned long)cJSON_GetArraySize(v) ? cJSON_GetArrayItem(v, (int)i) : NULL;
            p = end + 1;
            continue;
        }
        if (*p == '.') p++;
        size_t n = strcspn(p, ".[");
        char key[160];
        ENSURE(n > 0 && n < sizeof key);
        memcpy(key, p, n);
        key[n] = '\0';
        if (parent && !p[n]) return v;
        ENSURE(cJSON_IsObject(v));
        v = cJSON_GetObjectItemCaseSensitive(v, key);
        p += n;
    }
    return v;
}

/* A number (or "nan"/"inf"/"-inf") or absent/null; its value in *d (NaN
 * when absent). */
static int real_or_null(const cJSON *v, double *d)
{
    *d = NAN;
    return !v || cJSON_IsNull(v) || !onp_json_real(v, d);
}

static int count_ok(const cJSON *v)
{
    double d;
    return !v || (cJSON_IsNumber(v) && (d = v->valuedouble) >= 0 && d == floor(d));
}

static void error_ok(const cJSON *v)
{
    double d;
    ENSURE(real_or_null(v, &d) && !(d < 0));
}

/* The promises diff's and report's readers rely on, for an accepted
 * document of kind k. */
static void accepted(const cJSON *doc, size_t k)
{
    const cJSON *env = get(doc, "environment"), *f, *o, *c;
    ENSURE(count_ok(get(env, "intra_threads")) && count_ok(get(env, "inter_threads")));
    ENSURE(!get(doc, "verdict") || cJSON_IsString(get(doc, "verdict")));
    if (k == 0) {
        cJSON_ArrayForEach(f, get(doc, "fixtures"))
        {
            ENSURE(cJSON_IsObject(f));
            cJSON_ArrayForEach(o, get(f, "outputs"))
            {
                double d;
                ENSURE(cJSON_IsString(get(o, "name")) && cJSON_IsBool(get(o, "pass")));
                error_ok(get(o, "max_abs"));
                error_ok(get(o, "max_rel"));
                error_ok(get(get(get(o, "judgment"), "envelope"), "max_abs"));
                const cJSON *mf = get(o, "mismatch_frac");
                ENSURE(!mf || (!onp_json_real(mf, &d) && !(d < 0) && !(d > 1)));
                const cJSON *tk = get(o, "topk");
                ENSURE(count_ok(get(tk, "rows")) && count_ok(get(tk, "top1_agree")));
            }
        }
    } else if (k == 1) {
        cJSON_ArrayForEach(c, get(doc, "curve"))
        {
            ENSURE(cJSON_IsObject(c) && (!get(c, "pass") || cJSON_IsBool(get(c, "pass"))));
            error_ok(get(c, "max_abs"));
        }
    } else if (k == 4) {
        cJSON_ArrayForEach(c, get(doc, "checks"))
        {
            double d;
            ENSURE(!get(c, "pass") || cJSON_IsBool(get(c, "pass")));
            ENSURE(real_or_null(get(c, "measured"), &d));
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onp_error e;
    onp_error_clear(&e);
    char words[48];
    unsigned types = size >= 2 ? (unsigned)(data[0] | data[1] << 8) & 0x3ff : 0;
    ENSURE(strlen(onp_jspec_words(types, words, sizeof words)) < sizeof words);
    cJSON *doc = onp_json_parse(data, size, "fuzz.json", ONP_ERR_FORMAT, "not valid JSON", &e);
    if (!doc) {
        ENSURE(e.code == ONP_ERR_FORMAT || e.code == ONP_ERR_NOMEM);
        ENSURE(e.msg[0] && e.offset >= -1 && e.offset <= (int64_t)size);
        return 0;
    }
    for (size_t k = 0; k < sizeof schemas / sizeof schemas[0]; k++) {
        const onp_jspec *spec = onp_jspec_of(schemas[k]);
        ENSURE(spec != NULL);
        onp_error_clear(&e);
        if (!onp_jspec_check(doc, spec, "fuzz.json", &e)) {
            accepted(doc, k);
            continue;
        }
        ENSURE(e.code == ONP_ERR_INPUT && !strcmp(e.file, "fuzz.json"));
        int missing = !strcmp(e.msg, "missing");
        ENSURE(missing || !strncmp(e.msg, "not ", 4));
        if (strlen(e.field) + 1 < sizeof e.field) { /* not cut short: it leads into the tree */
            const cJSON *at = follow(doc, e.field, missing);
            ENSURE(at != NULL);
            if (missing) ENSURE(cJSON_IsObject(at));
        }
    }
    cJSON_Delete(doc);
    return 0;
}
