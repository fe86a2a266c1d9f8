/*
 * ortopts.c — ONNX Runtime options shared by `run` and `check`
 * (ortopts.h).
 */
#include <string.h>

#include "cli.h"
#include "onnxparity/model.h"
#include "onnxparity/outpath.h"
#include "ortopts.h"

void cli_ort_init(cli_ort *o)
{
    memset(o, 0, sizeof *o);
    o->so.opt_level = ONP_ORT_OPT_ALL;
    o->so.config = o->config;
    o->so.provider_opts = o->prov_opts;
    o->so.custom_op_libs = o->custom_libs;
    o->so.isolate = 1;
}

static int add_kv(const char *cmd, const char *name, const char *v, const char **arr, size_t *n)
{
    if (!strchr(v, '=') || v[0] == '=')
        return cli_usage_error(cmd, "--%s wants KEY=VALUE, not '%s'", name, v), -1;
    if (*n >= CLI_MAX_KV) return cli_usage_error(cmd, "at most %d --%s", CLI_MAX_KV, name), -1;
    arr[(*n)++] = v;
    return 1;
}

int cli_ort_opt(cli_ort *o, int argc, char **argv, int *i)
{
    const char *v;
    int r;
    long n;
    onp_error e;
    if ((r = cli_opt(argc, argv, i, "ort-lib", &v))) {
        if (r > 0) o->lib = v;
        onp_out_note_read(v); /* loaded code: no output may replace it */
        return r;
    }
    if ((r = cli_opt(argc, argv, i, "opt-level", &v))) {
        if (r < 0) return r;
        if (onp_ort_opt_level_parse(v, &o->so.opt_level, &e))
            return cli_usage_error(argv[0], "%s", e.msg), -1;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "provider", &v))) {
        if (r > 0) o->so.provider = v;
        return r;
    }
    if ((r = cli_opt(argc, argv, i, "provider-opt", &v)))
        return r < 0 ? r : add_kv(argv[0], "provider-opt", v, o->prov_opts, &o->so.n_provider_opts);
    if ((r = cli_opt(argc, argv, i, "session-config", &v)))
        return r < 0 ? r : add_kv(argv[0], "session-config", v, o->config, &o->so.n_config);
    if ((r = cli_opt(argc, argv, i, "threads", &v))) {
        if (r < 0 || cli_int(argv[0], "threads", v, &n)) return -1;
        o->so.intra_threads = (int)n;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "inter-threads", &v))) {
        if (r < 0 || cli_int(argv[0], "inter-threads", v, &n)) return -1;
        o->so.inter_threads = (int)n;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "save-optimized", &v))) {
        if (r > 0) o->so.optimized_model_path = v;
        return r;
    }
    if ((r = cli_opt(argc, argv, i, "custom-op-lib", &v))) {
        if (r < 0) return r;
        if (o->so.n_custom_op_libs >= CLI_MAX_KV)
            return cli_usage_error(argv[0], "at most %d --custom-op-lib", CLI_MAX_KV), -1;
        o->custom_libs[o->so.n_custom_op_libs++] = v;
        onp_out_note_read(v);
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "timeout", &v))) {
        double sec;
        if (r < 0 || cli_double(argv[0], "timeout", v, &sec)) return -1;
        if (!(sec > 0 && sec <= 86400))
            return cli_usage_error(argv[0], "--timeout wants seconds in (0, 86400], not '%s'", v),
                   -1;
        o->so.timeout_ms = sec * 1000 < 1 ? 1 : (int)(sec * 1000);
        return 1;
    }
    if (cli_flag(argv, *i, "no-isolate")) {
        o->so.isolate = 0;
        return 1;
    }
    if (cli_flag(argv, *i, "deterministic")) {
        o->so.deterministic = 1;
        return 1;
    }
    return 0;
}

int cli_ort_session(const cli_ort *o, const char *model, const onp_model *open_model, onp_ort **ort,
                    onp_session **s, int *upgraded)
{
    onp_error e;
    onp_error_clear(&e);
    *ort = NULL;
    *s = NULL;
    *upgraded = 0;
    /* legacy opset < 7: ORT has no kernels for the old broadcasting ops, so
     * the session gets the model upgraded in memory (src/model/upgrade.c) */
    onp_model *own = NULL;
    onp_buf up;
    onp_buf_init(&up, 0);
    if (!open_model && onp_model_open(model, &own, &e)) return cli_report(&e);
    const onp_model *m = open_model ? open_model : own;
    /* external data is checked here, with this tool's rules and exit codes,
     * before ONNX Runtime opens any of its files */
    if (onp_model_check_external(m, &e)) {
        onp_model_close(own);
        return cli_report(&e);
    }
    int urc = !onp_model_has_external(m) && onp_model_upgrade_opset7(m, &up, upgraded, &e);
    onp_model_close(own);
    if (urc) return cli_report(&e);
    if (o->so.timeout_ms && !o->so.isolate) {
        onp_buf_free(&up);
        return cli_usage_error("onnxparity",
                               "--timeout needs the worker process: drop --no-isolate");
    }
    /* ONNX Runtime writes --save-optimized itself: the output rule is
     * checked here, once the model and its data have been noted as read */
    if (o->so.optimized_model_path && onp_out_check(o->so.optimized_model_path, &e)) {
        onp_buf_free(&up);
        return cli_report(&e);
    }
    int rc = onp_ort_open(o->lib, ort, &e);
    if (!rc)
        rc = *upgraded ? onp_session_open_bytes(*ort, up.p, up.n, model, &o->so, s, &e)
                       : onp_session_open(*ort, model, &o->so, s, &e);
    onp_buf_free(&up);
    if (rc) {
        onp_ort_close(*ort);
        *ort = NULL;
        return cli_report(&e);
    }
    return 0;
}
