/*
 * ortopts.h — the ONNX Runtime options shared by `run` and `check`:
 *   --ort-lib PATH  --opt-level L  --provider P  --provider-opt K=V
 *   --threads N  --inter-threads N  --session-config K=V  --save-optimized PATH
 *   --deterministic  --custom-op-lib PATH  --timeout SECONDS  --no-isolate
 * The tool isolates every session by default: ORT runs in a worker process,
 * so a crash or a hang in a kernel fails that run, not the tool.
 */
#ifndef ONP_CLI_ORTOPTS_H
#define ONP_CLI_ORTOPTS_H

#include "onnxparity/model.h"
#include "onnxparity/ort.h"
#include "onnxparity/run.h"

/* The ORT group of the run's options (run.h's table parses them); `lib`
 * and `so` mirror a.run after each option, for the commands that open
 * sessions themselves.  Initialise in place; never copy. */
typedef struct cli_ort {
    onp_run_args a;
    const char *lib;     /* --ort-lib, or NULL to search */
    onp_session_opts so; /* what onp_session_open gets (its arrays live in a) */
} cli_ort;

/* Initialise with onnxparity's defaults (opt level all, CPU, isolated in a
 * worker process, no time limit). */
void cli_ort_init(cli_ort *o);

/* Try argv[*i] as one of the options above: 1 matched (consumed), 0 not an
 * ORT option, -1 bad value (message printed). */
int cli_ort_opt(cli_ort *o, int argc, char **argv, int *i);

/* cli_ort_opt for the options of `groups` (run.h: ONP_RUN_ARGS_*): a
 * command that takes the tolerance or bisect's options keeps them in o->a. */
int cli_ort_opt_groups(cli_ort *o, int groups, int argc, char **argv, int *i);

/* Load ORT and open a session on `model`; on failure print the error and
 * return the exit code (non-zero).  *ort is the caller's to close.  A
 * legacy model (opset < 7) is upgraded to opset 7 in memory first; then
 * *upgraded is 1 and the results should say so.  `open_model` is the
 * caller's view of the same file when it has one (not opened twice), or
 * NULL. */
int cli_ort_session(const cli_ort *o, const char *model, const onp_model *open_model, onp_ort **ort,
                    onp_session **s, int *upgraded);

#endif
