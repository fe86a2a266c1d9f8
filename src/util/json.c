/*
 * json.c — strict JSON reading (include/onnxparity/json.h): libjansson
 * validates, cJSON builds the tree the readers walk.
 *
 * Why two parsers: cJSON (what every reader of the tool walks) takes the
 * first value and ignores what follows, keeps duplicate keys, and cuts
 * strings at "\u0000".  Writing those checks by hand on top of a lax parser
 * is the kind of code that drifts; jansson 2.14 (Debian 12) has them as load
 * flags and its decoder also refuses invalid UTF-8, NaN and numbers that
 * overflow a double.  So jansson decides whether a document is acceptable,
 * and only then is the same byte range handed to cJSON.  The cost is a
 * second pass over documents of at most a few megabytes.
 * Depends on util (error) only, and on libjansson and cJSON.
 */
#include <cjson/cJSON.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "onnxparity/json.h"

/* jansson's decoder says "out of memory" in its text; it has no code. */
static int is_oom(const json_error_t *je)
{
    return strstr(je->text, "out of memory") != NULL;
}

cJSON *onp_json_parse(const void *p, size_t n, const char *file, onp_errcode bad, const char *what,
                      onp_error *e)
{
    static const char nothing[1];
    const char *text = p && n ? (const char *)p : nothing;
    json_error_t je;
    memset(&je, 0, sizeof je);
    /* JSON_DECODE_ANY: a top-level scalar is the caller's to refuse (with
     * its own words); JSON_DECODE_INT_AS_REAL: integers become doubles as in
     * cJSON, so an integer too big for int64 is range-checked where it is
     * used (onp_json_int) rather than refused here with another message. */
    json_t *j = json_loadb(text, n,
                           JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &je);
    if (!j) {
        int64_t at = je.position >= 0 && (size_t)je.position <= n ? je.position : 0;
        /* jansson names its own flag here; say what is wrong instead */
        const char *why = je.text[0] ? je.text : "refused";
        if (strstr(je.text, "JSON_ALLOW_NUL") || strstr(je.text, "NUL byte"))
            why = "a string holds \\u0000 (NUL)";
        return onp_error_set(e, is_oom(&je) ? ONP_ERR_NOMEM : bad, file, NULL, at, "%s: %s", what,
                             why),
               NULL;
    }
    json_decref(j);
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(text, n, &end, 0);
    if (!doc) {
        /* jansson accepted it: cJSON's nesting limit (1000) or memory */
        int64_t at = end && end >= text && end <= text + n ? (int64_t)(end - text) : 0;
        onp_error_set(e, bad, file, NULL, at, "%s: nested deeper than %d levels, or out of memory",
                      what, CJSON_NESTING_LIMIT);
    }
    return doc;
}

int onp_json_int(const cJSON *v, int64_t lo, int64_t hi, int64_t *out)
{
    if (!cJSON_IsNumber(v)) return -1;
    double d = v->valuedouble;
    /* the comparisons are false for NaN; 2^63 is the first double past int64 */
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d)) return -1;
    int64_t x = (int64_t)d;
    if (x < lo || x > hi) return -1;
    *out = x;
    return 0;
}

int onp_json_real(const cJSON *v, double *out)
{
    if (cJSON_IsNumber(v)) return *out = v->valuedouble, 0;
    if (!cJSON_IsString(v) || !v->valuestring) return -1;
    const char *s = v->valuestring;
    if (!strcmp(s, "nan")) return *out = NAN, 0;
    if (!strcmp(s, "inf")) return *out = INFINITY, 0;
    if (!strcmp(s, "-inf")) return *out = -INFINITY, 0;
    return -1;
}
