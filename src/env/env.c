/*
 * env.c — the environment of a parity result and its drift (env.h): the
 * field table, JSON members, the comparison.  Pure: depends on cJSON only
 * (so the criteria fuzzer links it without ONNX Runtime); collecting the
 * fields from a session and a bundle is src/judge/envcollect.c.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/env.h"
#include "onnxparity/json.h"

/* One row per field.  How to add one: the enum in env.h, a row here in the
 * same position, then fill it where it is known. */
static const struct {
    const char *name;
    onp_drift_kind kind;
    int number; /* JSON holds it as a number */
} fields[] = {
    {"ort_version", ONP_DRIFT_RUNTIME, 0},    {"ort_library_sha256", ONP_DRIFT_RUNTIME, 0},
    {"provider", ONP_DRIFT_RUNTIME, 0},       {"opt_level", ONP_DRIFT_RUNTIME, 0},
    {"intra_threads", ONP_DRIFT_RUNTIME, 1},  {"inter_threads", ONP_DRIFT_RUNTIME, 1},
    {"session_config", ONP_DRIFT_RUNTIME, 0}, {"opset", ONP_DRIFT_EXPORT, 1},
    {"exporter", ONP_DRIFT_EXPORT, 0},        {"torch_version", ONP_DRIFT_EXPORT, 0},
    {"model_sha256", ONP_DRIFT_NOTE, 0},
};
_Static_assert(sizeof fields / sizeof fields[0] == ONP_ENV_FIELD_COUNT,
               "one row per onp_env_field");

static const char *const kind_names[] = {"runtime", "export", "note"};
_Static_assert(sizeof kind_names / sizeof kind_names[0] == ONP_DRIFT_KIND_COUNT,
               "one name per onp_drift_kind");

void onp_env_init(onp_env *env)
{
    memset(env, 0, sizeof *env);
}

const char *onp_env_field_name(onp_env_field f)
{
    return (unsigned)f < ONP_ENV_FIELD_COUNT ? fields[f].name : "?";
}

onp_env_field onp_env_field_find(const char *name)
{
    for (int f = 0; name && f < ONP_ENV_FIELD_COUNT; f++)
        if (!strcmp(fields[f].name, name)) return (onp_env_field)f;
    return ONP_ENV_FIELD_COUNT;
}

onp_drift_kind onp_env_field_kind(onp_env_field f)
{
    return (unsigned)f < ONP_ENV_FIELD_COUNT ? fields[f].kind : ONP_DRIFT_RUNTIME;
}

const char *onp_drift_kind_name(onp_drift_kind k)
{
    return (unsigned)k < ONP_DRIFT_KIND_COUNT ? kind_names[k] : "?";
}

void onp_env_set(onp_env *env, onp_env_field f, const char *value)
{
    if ((unsigned)f >= ONP_ENV_FIELD_COUNT) return;
    snprintf(env->v[f], sizeof env->v[f], "%s", value ? value : "");
}

void onp_env_set_config(onp_env *env, const char *const *entries, size_t n)
{
    char *dst = env->v[ONP_ENV_SESSION_CONFIG];
    size_t cap = sizeof env->v[0], k = 0;
    snprintf(dst, cap, "%s", n ? "" : "(none)");
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(dst + k, cap - k, "%s%s", k ? "\n" : "", entries[i]);
        if (w < 0 || (size_t)w >= cap - k) break;
        k += (size_t)w;
    }
}

int onp_env_check_json(const cJSON *obj, const char **field, const char **why)
{
    for (int f = 0; cJSON_IsObject(obj) && f < ONP_ENV_FIELD_COUNT; f++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, fields[f].name), *it;
        int64_t n;
        const char *bad = NULL;
        if (!v) continue;
        if (f == ONP_ENV_SESSION_CONFIG) {
            if (!cJSON_IsArray(v)) bad = "not an array of strings";
            cJSON_ArrayForEach(it, v) if (!cJSON_IsString(it)) bad = "not an array of strings";
        } else if (fields[f].number) {
            if (onp_json_int(v, 0, INT32_MAX, &n)) bad = "not a whole number >= 0";
        } else if (!cJSON_IsString(v)) {
            bad = "not a string";
        }
        if (bad) {
            *field = fields[f].name;
            *why = bad;
            return -1;
        }
    }
    return 0;
}

void onp_env_read_json(onp_env *env, const cJSON *obj)
{
    for (int f = 0; cJSON_IsObject(obj) && f < ONP_ENV_FIELD_COUNT; f++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, fields[f].name), *it;
        if (!v) continue;
        char *dst = env->v[f];
        size_t cap = sizeof env->v[f];
        dst[0] = '\0';
        if (cJSON_IsString(v)) {
            snprintf(dst, cap, "%s", v->valuestring);
        } else if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && fabs(v->valuedouble) < 1e15) {
            snprintf(dst, cap, "%lld", (long long)v->valuedouble);
        } else if (cJSON_IsArray(v)) {
            size_t k = 0;
            if (!cJSON_GetArraySize(v)) snprintf(dst, cap, "(none)");
            cJSON_ArrayForEach(it, v)
            {
                if (!cJSON_IsString(it)) continue;
                int w = snprintf(dst + k, cap - k, "%s%s", k ? "\n" : "", it->valuestring);
                if (w < 0 || (size_t)w >= cap - k) break;
                k += (size_t)w;
            }
        }
    }
}

int onp_env_write_json(const onp_env *env, cJSON *obj)
{
    for (int f = 0; f < ONP_ENV_FIELD_COUNT; f++) {
        const char *v = env->v[f];
        if (cJSON_GetObjectItemCaseSensitive(obj, fields[f].name)) continue;
        cJSON *item;
        if (f == ONP_ENV_SESSION_CONFIG && v[0]) {
            item = cJSON_CreateArray();
            for (const char *p = strcmp(v, "(none)") ? v : ""; item && *p;) {
                size_t n = strcspn(p, "\n");
                char entry[ONP_ENV_VALUE_MAX];
                snprintf(entry, sizeof entry, "%.*s", (int)n, p);
                cJSON_AddItemToArray(item, cJSON_CreateString(entry));
                p += n + (p[n] == '\n');
            }
        } else if (!v[0]) {
            continue; /* not known: no member */
        } else if (fields[f].number) {
            item = cJSON_CreateNumber(strtod(v, NULL));
        } else {
            item = cJSON_CreateString(v);
        }
        if (!item || !cJSON_AddItemToObject(obj, fields[f].name, item)) {
            cJSON_Delete(item);
            return -1;
        }
    }
    return 0;
}

size_t onp_env_compare(const onp_env *rec, const onp_env *now, onp_env_drift *out)
{
    size_t n = 0;
    for (int f = 0; f < ONP_ENV_FIELD_COUNT; f++) {
        if (!rec->v[f][0] || !strcmp(rec->v[f], now->v[f])) continue;
        out[n++] = (onp_env_drift){(onp_env_field)f, fields[f].kind, rec->v[f], now->v[f]};
    }
    return n;
}
