/*
 * target.h — what the commands that judge fixtures (check, gate, bisect,
 * diagnose) run on: a bundle folder TARGET (model.onnx, test_data_set_K/,
 * parity.json), or a model and data folders given apart (--model M --data
 * DIR...; each DIR a folder of test_data_set_K/ or one fixture folder).
 * Parsing only: the fixtures are scanned by the library
 * (onp_testdata_scan_dirs).
 */
#ifndef ONP_CLI_TARGET_H
#define ONP_CLI_TARGET_H

#include <stddef.h>

#define CLI_MAX_DATA 64

typedef struct cli_target {
    const char *bundle;             /* TARGET, or NULL with --model/--data */
    const char *model;              /* bundle/model.onnx, or --model */
    const char *data[CLI_MAX_DATA]; /* [n_data]: {bundle}, or the --data folders */
    size_t n_data;
    char model_buf[4200];
} cli_target;

/* --model M / --data DIR in a command's option loop (cli_opt's contract):
 * 1 matched, 0 not one of them, -1 a usage error was printed. */
int cli_target_opt(cli_target *t, int argc, char **argv, int *i);

/* After the loop, `positional` the TARGET argument or NULL: exactly one of
 * TARGET and --model with at least one --data; fills model and data.  0, or
 * -1 after one usage line for `cmd`. */
int cli_target_finish(cli_target *t, const char *cmd, const char *positional);

/* The bundle's TARGET/parity.json into buf when there is a bundle and the
 * file exists; else NULL (a model given with --model has no manifest). */
const char *cli_target_manifest(const cli_target *t, char *buf, size_t n);

/* parity.json's export_args.traced_fixture (the fixture the export was
 * traced on), or -1: no manifest, or it is missing, unreadable or holds no
 * such index (the lint reports a bad parity.json itself). */
int cli_target_traced_fixture(const char *manifest);

/* What names the run in messages: the bundle, else the model. */
const char *cli_target_name(const cli_target *t);

/* The arguments that name the same target to another command, shell-quoted
 * for a copy-paste: 'TARGET', or --model 'M' --data 'D'... (`bundle` NULL).
 * Into out[n]; returns out, or NULL when they do not fit. */
const char *cli_target_args(const char *bundle, const char *model, const char *const *data,
                            size_t n_data, char *out, size_t n);

#endif
