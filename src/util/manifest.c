/*
 * manifest.c — parity.json mapped and strictly parsed once
 * (include/onnxparity/manifest.h), for every reader of one bundle: the
 * noise book, adequacy, the export environment, the lint, the traced
 * fixture.  Lives in util, below lint and the judge, because both read it.
 * Depends on util (fsio, error) and the strict JSON reader only; knows no
 * key but export_args.traced_fixture.
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/json.h"
#include "util/fsio.h"
#include "util/manifest_int.h"

struct onp_manifest {
    cJSON *doc; /* owned; an object unless opened through onp_manifest_open_as */
    char *path; /* owned copy of the path given to open */
};

int onp_manifest_open_as(const char *path, const char *bad_json, int require_object,
                         onp_manifest **out, onp_error *e)
{
    *out = NULL;
    onp_map *map;
    if (onp_map_open(path, &map, e)) return onp_error_set_file(e, path);
    cJSON *doc = onp_json_parse(map->p, map->n, path, ONP_ERR_FORMAT, bad_json, e);
    onp_map_unref(map);
    if (!doc) return -1;
    if (require_object && !cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        return onp_error_set(e, ONP_ERR_FORMAT, path, NULL, -1,
                             "not a JSON object (a parity.json manifest was expected)");
    }
    size_t n = strlen(path) + 1;
    onp_manifest *mf = calloc(1, sizeof *mf);
    char *copy = mf ? malloc(n) : NULL;
    if (!copy) {
        free(mf);
        cJSON_Delete(doc);
        return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    }
    memcpy(copy, path, n);
    mf->doc = doc;
    mf->path = copy;
    *out = mf;
    return 0;
}

int onp_manifest_open(const char *path, onp_manifest **out, onp_error *e)
{
    return onp_manifest_open_as(path, "not valid JSON (a parity.json manifest was expected)", 1,
                                out, e);
}

const cJSON *onp_manifest_doc(const onp_manifest *mf)
{
    return mf ? mf->doc : NULL;
}

const char *onp_manifest_path(const onp_manifest *mf)
{
    return mf ? mf->path : NULL;
}

int onp_manifest_traced_fixture(const onp_manifest *mf)
{
    const cJSON *args = mf && cJSON_IsObject(mf->doc)
                            ? cJSON_GetObjectItemCaseSensitive(mf->doc, "export_args")
                            : NULL;
    const cJSON *t =
        cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, "traced_fixture") : NULL;
    int64_t k;
    if (onp_json_int(t, 0, INT_MAX, &k)) return -1;
    return (int)k;
}

static const char *top_string(const onp_manifest *mf, const char *name)
{
    const cJSON *v =
        mf && cJSON_IsObject(mf->doc) ? cJSON_GetObjectItemCaseSensitive(mf->doc, name) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *onp_manifest_exporter(const onp_manifest *mf)
{
    return top_string(mf, "exporter");
}

const char *onp_manifest_exporter_requested(const onp_manifest *mf)
{
    return top_string(mf, "exporter_requested");
}

const char *onp_manifest_exporter_fallback(const onp_manifest *mf)
{
    return top_string(mf, "exporter_fallback");
}

void onp_manifest_free(onp_manifest *mf)
{
    if (!mf) return;
    cJSON_Delete(mf->doc);
    free(mf->path);
    free(mf);
}
