/*
 * notrun.c — the document of a run that could not start (doc.h): what
 * check and diagnose print with --format json when ONNX Runtime does not
 * load the model.  Its verdict is the run layer's ERROR.
 */
#include <cjson/cJSON.h>

#include "onnxparity/doc.h"

cJSON *onp_doc_not_run(const char *schema, const char *model, const char *why)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "schema", schema);
    cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(ONP_RUN_ERROR));
    cJSON_AddStringToObject(root, "model", model);
    cJSON_AddStringToObject(root, "error", why);
    return root;
}
