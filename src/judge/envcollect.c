/*
 * envcollect.c — the fields of an environment (env.h) from a loaded ONNX
 * Runtime and an open session (the library file's sha256 included), and
 * from a bundle (the model's opset; exporter and torch version from the
 * capture's parity.json).  The table and the comparison are src/env/env.c.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <sys/stat.h>

#include "onnxparity/env.h"
#include "onnxparity/json.h"
#include "util/fsio.h"
#include "util/sha256.h"

static void set_int(onp_env *env, onp_env_field f, long long v)
{
    snprintf(env->v[f], sizeof env->v[f], "%lld", v);
}

/* sha256 of a whole file, streamed through a map. */
static int file_sha256(const char *path, char hex[65], onp_error *e)
{
    onp_map *m;
    if (onp_map_open(path, &m, e)) return -1;
    onp_sha256 s;
    uint8_t d[32];
    onp_sha256_init(&s);
    onp_sha256_update(&s, m->p, m->n);
    int rc = onp_sha256_final(&s, d);
    onp_map_unref(m);
    if (rc) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory hashing");
    onp_sha256_tohex(d, hex);
    return 0;
}

int onp_env_from_session(onp_env *env, const onp_ort *ort, const onp_session *s, onp_error *e)
{
    char hex[65];
    onp_env_set(env, ONP_ENV_ORT_VERSION, onp_ort_version(ort));
    if (file_sha256(onp_ort_lib_path(ort), hex, e)) return -1;
    onp_env_set(env, ONP_ENV_ORT_LIBRARY_SHA256, hex);
    const onp_session_desc *d = onp_session_describe(s);
    onp_env_set(env, ONP_ENV_PROVIDER, d->provider);
    onp_env_set(env, ONP_ENV_OPT_LEVEL, onp_ort_opt_level_name(d->opt_level));
    set_int(env, ONP_ENV_INTRA_THREADS, d->intra_threads);
    set_int(env, ONP_ENV_INTER_THREADS, d->inter_threads);
    return 0;
}

int onp_env_from_bundle(onp_env *env, const onp_model *m, const char *parity_json, onp_error *e)
{
    int64_t opset = onp_model_opset(m, "");
    if (opset >= 0) set_int(env, ONP_ENV_OPSET, (long long)opset);
    struct stat st;
    if (!parity_json || stat(parity_json, &st) != 0) return 0;
    onp_map *map;
    if (onp_map_open(parity_json, &map, e)) return -1;
    cJSON *doc = onp_json_parse(map->p, map->n, parity_json, ONP_ERR_FORMAT, "not valid JSON", e);
    onp_map_unref(map);
    if (!doc) return -1;
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(doc, "exporter");
    const cJSON *tv = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "versions"), "torch");
    if (cJSON_IsString(ex)) onp_env_set(env, ONP_ENV_EXPORTER, ex->valuestring);
    if (cJSON_IsString(tv)) onp_env_set(env, ONP_ENV_TORCH_VERSION, tv->valuestring);
    cJSON_Delete(doc);
    return 0;
}
