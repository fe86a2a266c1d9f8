/*
 * session.c — one ONNX Runtime session on a run's model (run.h): the
 * checks this tool makes before ORT opens a file (external data by our
 * rules, the output rule for ORT's --save-optimized file, a timeout that
 * needs the worker process) and the in-memory upgrade of a legacy model
 * (opset < 7, for which ORT has no kernels).
 */
#include "onnxparity/buf.h"
#include "onnxparity/outpath.h"
#include "onnxparity/run.h"

int onp_run_session_open_model(const char *ort_lib, const onp_session_opts *so,
                               const char *model_path, const onp_model *m, onp_ort **ort,
                               onp_session **s, int *upgraded, onp_error *e)
{
    int loaded = 0;
    *s = NULL;
    *upgraded = 0;
    onp_model *own = NULL;
    if (!m && onp_model_open(model_path, &own, e)) return -1;
    if (!m) m = own;
    onp_buf up;
    onp_buf_init(&up, 0);
    int rc = onp_model_check_external(m, e);
    if (!rc && !onp_model_has_external(m)) rc = onp_model_upgrade_opset7(m, &up, upgraded, e);
    onp_model_close(own);
    if (!rc && so->timeout_ms && !so->isolate)
        rc = onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                           "--timeout needs the worker process: drop --no-isolate");
    /* ONNX Runtime writes the optimized model itself: the output rule is
     * checked here, once the model and its data have been noted as read */
    if (!rc && so->optimized_model_path) rc = onp_out_check(so->optimized_model_path, e);
    if (!rc && !*ort) rc = onp_ort_open(ort_lib, ort, e), loaded = !rc;
    if (!rc)
        rc = *upgraded ? onp_session_open_bytes(*ort, up.p, up.n, model_path, so, s, e)
                       : onp_session_open(*ort, model_path, so, s, e);
    onp_buf_free(&up);
    if (rc && loaded) {
        onp_ort_close(*ort);
        *ort = NULL;
    }
    return rc;
}

int onp_run_session_open(onp_bundle *b, const onp_run_opts *o, onp_ort **ort, onp_session **s,
                         int *upgraded, onp_error *e)
{
    return onp_run_session_open_model(o->ort_lib, &o->session, onp_bundle_model_path(b),
                                      onp_bundle_model(b), ort, s, upgraded, e);
}
