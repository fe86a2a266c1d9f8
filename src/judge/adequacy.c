/*
 * adequacy.c — parity.json "adequacy" into onp_adequacy (adequacy.h), and the
 * verdict from the flags' levels.  Walks the strictly parsed document of a
 * manifest (manifest.h); every count is range-checked before it becomes an
 * integer.  No ONNX Runtime.
 */
#include "onnxparity/adequacy.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/json.h"
#include "util/manifest_int.h"

static const char *const verdict_names[] = {"absent", "adequate", "inadequate"};
_Static_assert(sizeof verdict_names / sizeof verdict_names[0] == ONP_ADEQUACY_VERDICT_COUNT,
               "one name per adequacy verdict");
static const char *const level_names[] = {"info", "warn"};
_Static_assert(sizeof level_names / sizeof level_names[0] == ONP_ADEQUACY_LEVEL_COUNT,
               "one name per adequacy level");

const char *onp_adequacy_verdict_name(onp_adequacy_verdict v)
{
    return (unsigned)v < ONP_ADEQUACY_VERDICT_COUNT ? verdict_names[v] : "?";
}

int onp_adequacy_verdict_from_name(const char *name, onp_adequacy_verdict *out)
{
    for (int v = 0; name && v < ONP_ADEQUACY_VERDICT_COUNT; v++)
        if (!strcmp(name, verdict_names[v])) {
            *out = (onp_adequacy_verdict)v;
            return 0;
        }
    return -1;
}

const char *onp_adequacy_level_name(onp_adequacy_level l)
{
    return (unsigned)l < ONP_ADEQUACY_LEVEL_COUNT ? level_names[l] : "?";
}

void onp_adequacy_free(onp_adequacy *a)
{
    if (!a) return;
    for (size_t i = 0; i < a->n_flags; i++) {
        free(a->flags[i].id);
        free(a->flags[i].message);
        free(a->flags[i].where);
    }
    for (size_t i = 0; i < a->n_outputs; i++) free(a->outputs[i].name);
    free(a->flags);
    free(a->outputs);
    free(a);
}

static int bad(onp_error *e, const char *path, const char *field, const char *what)
{
    return onp_error_set(e, ONP_ERR_FORMAT, path, NULL, -1, "adequacy.%s: %s", field, what);
}

/* A count field of obj (>= 0); absent reads as 0. */
static int count(const cJSON *obj, const char *key, int64_t *out, const char *path, onp_error *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = 0;
    if (!v) return 0;
    if (onp_json_int(v, 0, INT64_MAX / 2, out)) return bad(e, path, key, "not a count");
    return 0;
}

static char *dup_str(const cJSON *v)
{
    const char *s = cJSON_IsString(v) ? v->valuestring : "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int read_flags(const cJSON *arr, onp_adequacy *a, const char *path, onp_error *e)
{
    if (!arr) return 0;
    if (!cJSON_IsArray(arr)) return bad(e, path, "flags", "not an array");
    a->flags = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof *a->flags);
    if (!a->flags) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    const cJSON *f;
    cJSON_ArrayForEach(f, arr)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(f, "id");
        const cJSON *lv = cJSON_GetObjectItemCaseSensitive(f, "level");
        if (!cJSON_IsString(id) || !cJSON_IsString(lv))
            return bad(e, path, "flags", "an entry without a string id and level");
        onp_adequacy_flag *g = &a->flags[a->n_flags];
        if (!strcmp(lv->valuestring, "warn"))
            g->level = ONP_ADEQUACY_WARN;
        else if (!strcmp(lv->valuestring, "info"))
            g->level = ONP_ADEQUACY_INFO;
        else
            return bad(e, path, "flags", "a level other than \"info\" or \"warn\"");
        const cJSON *where = cJSON_GetObjectItemCaseSensitive(f, "input");
        if (!where) where = cJSON_GetObjectItemCaseSensitive(f, "output");
        g->id = dup_str(id);
        g->message = dup_str(cJSON_GetObjectItemCaseSensitive(f, "message"));
        g->where = dup_str(where);
        a->n_flags++;
        if (!g->id || !g->message || !g->where)
            return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    }
    return 0;
}

static int read_outputs(const cJSON *arr, onp_adequacy *a, const char *path, onp_error *e)
{
    if (!arr) return 0;
    if (!cJSON_IsArray(arr)) return bad(e, path, "classifier_outputs", "not an array");
    a->outputs = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof *a->outputs);
    if (!a->outputs) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    const cJSON *o;
    cJSON_ArrayForEach(o, arr)
    {
        onp_adequacy_output *x = &a->outputs[a->n_outputs];
        if (!cJSON_IsObject(o)) return bad(e, path, "classifier_outputs", "not an object");
        x->name = dup_str(cJSON_GetObjectItemCaseSensitive(o, "name"));
        a->n_outputs++;
        if (!x->name) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
        if (count(o, "classes", &x->classes, path, e) ||
            count(o, "classes_predicted", &x->classes_predicted, path, e) ||
            count(o, "samples", &x->samples, path, e) ||
            count(o, "near_boundary", &x->near_boundary, path, e))
            return -1;
    }
    return 0;
}

static int from_json(const cJSON *ad, onp_adequacy *a, const char *path, onp_error *e)
{
    if (!cJSON_IsObject(ad)) return bad(e, path, "", "not an object");
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(ad, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "onnxparity.adequacy/1"))
        return bad(e, path, "schema", "must be \"onnxparity.adequacy/1\"");
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(ad, "shape_groups");
    if (groups && !cJSON_IsArray(groups)) return bad(e, path, "shape_groups", "not an array");
    a->shape_groups = groups ? cJSON_GetArraySize(groups) : 0;
    if (count(ad, "samples", &a->samples, path, e) ||
        count(ad, "fixtures", &a->fixtures, path, e) ||
        count(ad, "near_boundary", &a->near_boundary, path, e) ||
        read_flags(cJSON_GetObjectItemCaseSensitive(ad, "flags"), a, path, e) ||
        read_outputs(cJSON_GetObjectItemCaseSensitive(ad, "classifier_outputs"), a, path, e))
        return -1;
    a->verdict = ONP_ADEQUACY_ADEQUATE;
    for (size_t i = 0; i < a->n_flags; i++)
        if (a->flags[i].level == ONP_ADEQUACY_WARN) a->verdict = ONP_ADEQUACY_INADEQUATE;
    return 0;
}

int onp_adequacy_from_manifest(const onp_manifest *mf, onp_adequacy **out, onp_error *e)
{
    *out = NULL;
    if (!mf) return 0;
    const char *path = onp_manifest_path(mf);
    const cJSON *doc = onp_manifest_doc(mf);
    onp_adequacy *a = calloc(1, sizeof *a);
    if (!a) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    const cJSON *ad =
        cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "adequacy") : NULL;
    if (ad && from_json(ad, a, path, e)) {
        onp_adequacy_free(a);
        return -1;
    }
    *out = a;
    return 0;
}

int onp_adequacy_read(const char *path, onp_adequacy **out, onp_error *e)
{
    *out = NULL;
    onp_manifest *mf;
    /* this reader's wording, and a document that is not an object holds no report */
    if (onp_manifest_open_as(path, "not valid JSON", 0, &mf, e)) return -1;
    int rc = onp_adequacy_from_manifest(mf, out, e);
    onp_manifest_free(mf);
    return rc;
}
