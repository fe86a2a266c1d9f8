/*
 * target.c — TARGET or --model/--data for the commands that judge
 * fixtures (target.h).
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "infile.h"
#include "onnxparity/buf.h"
#include "onnxparity/json.h"
#include "target.h"

int cli_target_opt(cli_target *t, int argc, char **argv, int *i)
{
    const char *v;
    int r;
    if ((r = cli_opt(argc, argv, i, "model", &v))) {
        if (r > 0) t->model = v;
        return r;
    }
    if ((r = cli_opt(argc, argv, i, "data", &v))) {
        if (r < 0) return r;
        if (t->n_data >= CLI_MAX_DATA)
            return cli_usage_error(argv[0], "at most %d --data", CLI_MAX_DATA), -1;
        t->data[t->n_data++] = v;
        return 1;
    }
    return 0;
}

int cli_target_finish(cli_target *t, const char *cmd, const char *positional)
{
    if (positional && (t->model || t->n_data))
        return cli_usage_error(cmd, "give TARGET or --model/--data, not both"), -1;
    if (!positional && !(t->model && t->n_data))
        return cli_usage_error(cmd,
                               "usage: onnxparity %s TARGET | --model M --data DIR... (see "
                               "onnxparity %s --help)",
                               cmd, cmd),
               -1;
    if (positional) {
        t->bundle = positional;
        snprintf(t->model_buf, sizeof t->model_buf, "%s/model.onnx", positional);
        t->model = t->model_buf;
        t->data[0] = positional;
        t->n_data = 1;
    }
    return 0;
}

const char *cli_target_manifest(const cli_target *t, char *buf, size_t n)
{
    struct stat st;
    if (!t->bundle) return NULL;
    snprintf(buf, n, "%s/parity.json", t->bundle);
    return stat(buf, &st) == 0 ? buf : NULL;
}

const char *cli_target_name(const cli_target *t)
{
    return t->bundle ? t->bundle : t->model;
}

const char *cli_target_args(const char *bundle, const char *model, const char *const *data,
                            size_t n_data, char *out, size_t n)
{
    char q[4200];
    size_t u = 0;
    int k;
    if (bundle) {
        k = snprintf(out, n, "%s", onp_shell_quote(bundle, q, sizeof q));
        return k >= 0 && (size_t)k < n ? out : NULL;
    }
    k = snprintf(out, n, "--model %s", onp_shell_quote(model, q, sizeof q));
    if (k < 0 || (size_t)k >= n) return NULL;
    u = (size_t)k;
    for (size_t i = 0; i < n_data; i++) {
        k = snprintf(out + u, n - u, " --data %s", onp_shell_quote(data[i], q, sizeof q));
        if (k < 0 || (size_t)k >= n - u) return NULL;
        u += (size_t)k;
    }
    return out;
}

int cli_target_traced_fixture(const char *manifest)
{
    if (!manifest) return -1;
    onp_buf b;
    onp_error e;
    onp_error_clear(&e);
    cJSON *root = NULL;
    if (!cli_read_file(manifest, 1u << 30, "", &b, &e))
        root = onp_json_parse(b.p, b.n, manifest, ONP_ERR_FORMAT, "not valid JSON", &e);
    onp_buf_free(&b);
    int64_t k = -1;
    cJSON *t = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "export_args"), "traced_fixture");
    if (onp_json_int(t, 0, INT_MAX, &k)) k = -1;
    cJSON_Delete(root);
    return (int)k;
}
