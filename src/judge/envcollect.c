/*
 * envcollect.c — the fields of an environment (env.h) from a loaded ONNX
 * Runtime and an open session (the library file's sha256 included: the
 * handle's, onp_ort_lib_sha256, hashed once per load), and
 * from a bundle (the model's opset; exporter and torch version from the
 * capture's parity.json, read through a manifest, manifest.h).  The table
 * and the comparison are src/env/env.c.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <sys/stat.h>

#include "onnxparity/env.h"
#include "util/manifest_int.h"

static void set_int(onp_env *env, onp_env_field f, long long v)
{
    snprintf(env->v[f], sizeof env->v[f], "%lld", v);
}

int onp_env_from_session(onp_env *env, const onp_ort *ort, const onp_session *s, onp_error *e)
{
    char hex[65];
    onp_env_set(env, ONP_ENV_ORT_VERSION, onp_ort_version(ort));
    if (onp_ort_lib_sha256((onp_ort *)ort, hex, e)) return -1;
    onp_env_set(env, ONP_ENV_ORT_LIBRARY_SHA256, hex);
    const onp_session_desc *d = onp_session_describe(s);
    onp_env_set(env, ONP_ENV_PROVIDER, d->provider);
    onp_env_set(env, ONP_ENV_OPT_LEVEL, onp_ort_opt_level_name(d->opt_level));
    set_int(env, ONP_ENV_INTRA_THREADS, d->intra_threads);
    set_int(env, ONP_ENV_INTER_THREADS, d->inter_threads);
    return 0;
}

/* The opset field, set whether or not a manifest is read. */
static void set_opset(onp_env *env, const onp_model *m)
{
    int64_t opset = onp_model_opset(m, "");
    if (opset >= 0) set_int(env, ONP_ENV_OPSET, (long long)opset);
}

int onp_env_from_manifest(onp_env *env, const onp_model *m, const onp_manifest *mf, onp_error *e)
{
    (void)e; /* nothing left to fail once the manifest is parsed */
    set_opset(env, m);
    const cJSON *doc = onp_manifest_doc(mf);
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(doc, "exporter");
    const cJSON *tv = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "versions"), "torch");
    if (cJSON_IsString(ex)) onp_env_set(env, ONP_ENV_EXPORTER, ex->valuestring);
    if (cJSON_IsString(tv)) onp_env_set(env, ONP_ENV_TORCH_VERSION, tv->valuestring);
    return 0;
}

int onp_env_from_bundle(onp_env *env, const onp_model *m, const char *parity_json, onp_error *e)
{
    struct stat st;
    if (!parity_json || stat(parity_json, &st) != 0) return onp_env_from_manifest(env, m, NULL, e);
    onp_manifest *mf;
    /* this reader's wording; a document that is not an object holds no field */
    if (onp_manifest_open_as(parity_json, "not valid JSON", 0, &mf, e)) {
        set_opset(env, m);
        return -1;
    }
    int rc = onp_env_from_manifest(env, m, mf, e);
    onp_manifest_free(mf);
    return rc;
}
