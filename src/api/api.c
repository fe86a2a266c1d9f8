/*
 * api.c — the library as one call per command (api.h): the options through
 * the run's one table, the run through onp_check_run, the document through
 * onp_doc_check.  The tool's `check` makes the same three calls.
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>

#include "onnxparity/api.h"
#include "onnxparity/doc.h"
#include "onnxparity/run.h"
#include "onnxparity/version.h"

/* args[n] into a: every one must be a run option. */
static int parse_args(onp_run_args *a, const char *const *args, size_t n, onp_error *e)
{
    if (n > INT_MAX) return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "too many options");
    for (int i = 0; i < (int)n; i++) {
        if (!args[i]) return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "a NULL option");
        int r = onp_run_args_parse(a, ONP_RUN_ARGS_ORT | ONP_RUN_ARGS_JUDGE, (int)n, args, &i, e);
        if (r < 0) return -1;
        if (!r)
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "unknown option '%s'", args[i]);
    }
    return 0;
}

int onp_api_check(const char *bundle, const char *model, const char *const *data, size_t n_data,
                  const char *const *args, size_t n_args, char **doc, onp_error *e)
{
    *doc = NULL;
    onp_error_clear(e);
    onp_run_args *a = malloc(sizeof *a); /* ~50 kB: not on a binding's stack */
    if (!a) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    onp_run_args_init(a);
    onp_bundle_spec where = {bundle, model, data, n_data};
    onp_check c = {0};
    int rc = -1;
    if (!parse_args(a, args, n_args, e) && !onp_check_run(&c, &where, a, e)) {
        cJSON *d = onp_doc_check(c.bundle, c.ort, c.session, &a->run, &c.run, c.upgraded);
        *doc = d ? onp_doc_print(d) : NULL;
        cJSON_Delete(d);
        rc = *doc ? onp_run_exit_code(c.run.verdict)
                  : onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    }
    onp_check_release(&c);
    free(a);
    return rc;
}

void onp_api_free(void *p)
{
    free(p);
}

const char *onp_api_version(void)
{
    return ONP_VERSION;
}
