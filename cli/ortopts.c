/*
 * ortopts.c — ONNX Runtime options shared by the commands that open
 * sessions (ortopts.h), parsed by the library's table (run.h).
 */
#include <string.h>

#include "cli.h"
#include "onnxparity/model.h"
#include "onnxparity/outpath.h"
#include "onnxparity/run.h"
#include "ortopts.h"

void cli_ort_init(cli_ort *o)
{
    onp_run_args_init(&o->a);
    o->lib = o->a.run.ort_lib;
    o->so = o->a.run.session;
}

int cli_ort_opt_groups(cli_ort *o, int groups, int argc, char **argv, int *i)
{
    int r = cli_run_opt(&o->a, groups, argc, argv, i);
    o->lib = o->a.run.ort_lib;
    o->so = o->a.run.session;
    return r;
}

int cli_ort_opt(cli_ort *o, int argc, char **argv, int *i)
{
    return cli_ort_opt_groups(o, ONP_RUN_ARGS_ORT, argc, argv, i);
}

int cli_ort_session(const cli_ort *o, const char *model, const onp_model *open_model, onp_ort **ort,
                    onp_session **s, int *upgraded)
{
    onp_error e;
    onp_error_clear(&e);
    *ort = NULL;
    return onp_run_session_open_model(o->lib, &o->so, model, open_model, ort, s, upgraded, &e)
               ? cli_report(&e)
               : 0;
}
