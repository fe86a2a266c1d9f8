/*
 * cmd_run.c — `onnxparity run MODEL [--input NAME=FILE | FILE]... [--output
 * NAME]... [--save DIR] [--save-format npy|pb]`: run the model once under
 * ONNX Runtime and print (and optionally save) its outputs.
 *
 * Inputs are tensor specs (X.pb, X.npy, X.npz:NAME); NAME=FILE feeds the
 * graph input NAME, a bare FILE feeds the next input by position.  Saved
 * outputs are DIR/output_K.pb (the ONNX test-data naming, with the output's
 * name inside) or DIR/NAME.npy with unsafe characters of NAME replaced by
 * '_'.  Exit 0, 2 bad usage or inputs, 3 unreadable files, 4 ORT failure.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "onnxparity/tfile.h"
#include "ortopts.h"

#define MAX_IO 256

static void summary(const onp_tensor *t)
{
    char shape[256];
    onp_shape_str(t->rank, t->dims, shape, sizeof shape);
    printf("%-28s %-9s %-18s", t->name ? t->name : "?", onp_dtype_name(t->dtype), shape);
    if (t->dtype != ONP_STRING && t->count) {
        double lo = INFINITY, hi = -INFINITY, sum = 0;
        long nan = 0;
        for (int64_t i = 0; i < t->count; i++) {
            double v = onp_tensor_get_f64(t, i);
            if (isnan(v)) {
                nan++;
                continue;
            }
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            sum += v;
        }
        printf(" min %.6g max %.6g mean %.6g", lo, hi,
               t->count > nan ? sum / (double)(t->count - nan) : 0.0);
        if (nan) printf(" (%ld NaN)", nan);
    }
    putchar('\n');
}

int cmd_run(int argc, char **argv)
{
    cli_ort ort_o;
    cli_ort_init(&ort_o);
    const char *model = NULL, *save = NULL, *specs[MAX_IO], *names[MAX_IO], *outs[MAX_IO], *v;
    size_t n_in = 0, n_out = 0;
    int pb = 0;
    for (int i = 1; i < argc; i++) {
        int r = cli_ort_opt(&ort_o, argc, argv, &i);
        if (r < 0) return EXIT_USAGE;
        if (r) continue;
        if ((r = cli_opt(argc, argv, &i, "input", &v))) {
            if (r < 0) return EXIT_USAGE;
            if (n_in >= MAX_IO) return cli_usage_error(argv[0], "at most %d inputs", MAX_IO);
            const char *eq = strchr(v, '=');
            names[n_in] = NULL;
            specs[n_in] = v;
            if (eq && eq != v) {
                char *nm = strndup(v, (size_t)(eq - v));
                if (!nm) return cli_usage_error(argv[0], "out of memory");
                names[n_in] = nm;
                specs[n_in] = eq + 1;
            }
            n_in++;
        } else if ((r = cli_opt(argc, argv, &i, "output", &v))) {
            if (r < 0) return EXIT_USAGE;
            if (n_out >= MAX_IO) return cli_usage_error(argv[0], "at most %d outputs", MAX_IO);
            outs[n_out++] = v;
        } else if ((r = cli_opt(argc, argv, &i, "save", &v))) {
            if (r < 0) return EXIT_USAGE;
            save = v;
        } else if ((r = cli_opt(argc, argv, &i, "save-format", &v))) {
            if (r < 0) return EXIT_USAGE;
            if (!strcmp(v, "pb"))
                pb = 1;
            else if (strcmp(v, "npy"))
                return cli_usage_error(argv[0], "--save-format is npy or pb");
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error(argv[0], "unknown option '%s'", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            if (n_in >= MAX_IO) return cli_usage_error(argv[0], "at most %d inputs", MAX_IO);
            names[n_in] = NULL;
            specs[n_in++] = argv[i];
        }
    }
    if (!model)
        return cli_usage_error(argv[0],
                               "usage: onnxparity run MODEL --input NAME=FILE ... [--save DIR]");
    onp_error e;
    onp_error_clear(&e);
    onp_ort *ort;
    onp_session *s;
    int upgraded;
    int rc = cli_ort_session(&ort_o, model, NULL, &ort, &s, &upgraded);
    if (rc) goto free_names;
    if (upgraded)
        fprintf(stderr,
                "onnxparity run: note: legacy opset < 7 model upgraded to opset 7 in memory\n");
    {
        const onp_session_desc *d = onp_session_describe(s);
        printf("runtime  ONNX Runtime %s (%s), %s, opt-level %s\n", onp_ort_version(ort),
               onp_ort_lib_path(ort), d->provider, onp_ort_opt_level_name(d->opt_level));
    }
    onp_tensor in[MAX_IO];
    memset(in, 0, sizeof in);
    for (size_t i = 0; i < n_in && !rc; i++) {
        if (onp_tfile_read(specs[i], NULL, &in[i], &e))
            rc = cli_report(&e);
        else if (onp_tensor_set_name(&in[i], names[i], &e))
            rc = cli_report(&e);
    }
    size_t n_fetch = n_out ? n_out : onp_session_output_count(s);
    onp_tensor *got = calloc(n_fetch ? n_fetch : 1, sizeof *got);
    if (!rc && !got) rc = cli_usage_error(argv[0], "out of memory");
    if (!rc && onp_session_run(s, in, n_in, n_out ? outs : NULL, n_out, got, &e))
        rc = cli_report(&e);
    if (!rc && save && mkdir(save, 0755) && errno != EEXIST)
        rc = cli_report((onp_error[]){{ONP_ERR_IO, -1, "", "", "cannot create the --save folder"}});
    for (size_t k = 0; !rc && k < n_fetch; k++) {
        summary(&got[k]);
        if (!save) continue;
        char path[4096];
        if (pb) {
            snprintf(path, sizeof path, "%s/output_%zu.pb", save, k);
        } else {
            char safe[256];
            snprintf(safe, sizeof safe, "%s", got[k].name ? got[k].name : "output");
            for (char *p = safe; *p; p++)
                if (!(*p == '-' || *p == '_' || *p == '.' || (*p >= '0' && *p <= '9') ||
                      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
                    *p = '_';
            if (safe[0] == '.') safe[0] = '_';
            snprintf(path, sizeof path, "%s/%s.npy", save, safe);
        }
        if (onp_tfile_write(path, &got[k], NULL, &e)) rc = cli_report(&e);
    }
    for (size_t k = 0; got && k < n_fetch; k++) onp_tensor_release(&got[k]);
    free(got);
    for (size_t i = 0; i < n_in; i++) onp_tensor_release(&in[i]);
    onp_session_close(s);
    onp_ort_close(ort);
free_names:
    for (size_t i = 0; i < n_in; i++) free((char *)names[i]);
    return rc;
}
