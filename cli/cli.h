/*
 * cli.h — what the commands of the onnxparity tool share: the command table
 * entry, argument helpers, and error reporting.  The tool uses the public
 * API of libonnxparity only (include/onnxparity/).
 */
#ifndef ONP_CLI_H
#define ONP_CLI_H

#include <limits.h>
#include <stdio.h>

#include "onnxparity/error.h"
#include "onnxparity/run.h"     /* onp_exit, onp_run_exit_code: the one verdict -> exit map */
#include "onnxparity/version.h" /* ONP_VERSION: the tool's version is the library's */

/* Exit codes (docs/cli.md): the library's (run.h), by their short names. */
enum {
    EXIT_PASS = ONP_EXIT_PASS,
    EXIT_FAIL = ONP_EXIT_FAIL,
    EXIT_USAGE = ONP_EXIT_USAGE,
    EXIT_IO = ONP_EXIT_IO,
    EXIT_RUNTIME = ONP_EXIT_RUNTIME
};

typedef struct cli_cmd {
    const char *name;
    const char *usage;                 /* one line: arguments */
    const char *summary;               /* one line: what it does */
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
} cli_cmd;

/* Print "onnxparity: <error>" on stderr and return its exit code. */
int cli_report(const onp_error *e);

/* argv[*i] as one of the run's options of `groups` (run.h's table:
 * ONP_RUN_ARGS_ORT, ONP_RUN_ARGS_JUDGE), set in a: 1 matched (its value
 * consumed), 0 not one of them, -1 bad value (usage line printed). */
int cli_run_opt(onp_run_args *a, int groups, int argc, char **argv, int *i);

/* Print "onnxparity CMD: <message>" on stderr and return EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Option parsing.  Matches argv[*i] against "--name" or "--name=VALUE"; for
 * options with a value, *val receives it (from the next argument when not
 * attached; *i is advanced).  Returns 1 when matched, 0 when not, -1 when the
 * value is missing (a usage error was printed). */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);
int cli_flag(char **argv, int i, const char *name);

/* The one parser of numeric option values (cli/main.c): the whole value
 * must be a decimal number (no leading space, no trailing text, no NaN,
 * no infinity, no overflow).  cli_double: finite and >= 0; cli_int_in: an
 * integer within [lo, hi]; cli_int: within [0, INT_MAX] (every count the
 * tool takes is an int).  0, or -1 after one usage line naming --`name`. */
int cli_double(const char *cmd, const char *name, const char *s, double *out);
int cli_int_in(const char *cmd, const char *name, const char *s, long lo, long hi, long *out);
int cli_int(const char *cmd, const char *name, const char *s, long *out);
/* "RTOL,ATOL" (--tol NAME=RTOL,ATOL) under the same rules, both >= 0; 0, or
 * -1 with no message (the caller names the option). */
int cli_tol_pair(const char *s, double *rtol, double *atol);

/* The end of a command's option loop: argv[i] is either an option nobody
 * matched (usage error) or the command's one positional argument, a `what`
 * ("target", "model"; a second one is a usage error).  0, or -1 after the
 * message. */
int cli_target_arg(char **argv, int i, const char *what, const char **target);

/* --quiet / --verbose: 1 when argv[i] is one of them (stored), else 0. */
int cli_progress_opt(char **argv, int i, int *quiet, int *verbose);
/* Progress goes to stderr only on a terminal or with --verbose, never with
 * --quiet (CI logs stay clean). */
int cli_progress_on(int quiet, int verbose);
/* One progress line for a stage of a long run, under that rule. */
void cli_stage(int quiet, int verbose, const char *what);

/* Output format from --format. */
typedef enum { FMT_TEXT = 0, FMT_JSON } cli_format;
int cli_parse_format(const char *cmd, const char *s, cli_format *out);

/* The options most commands share: --rtol R, --atol A, --format text|json.
 * Contract as cli_opt: 1 matched (value stored), 0 not one of them, -1 bad
 * value (message printed). */
int cli_tol_format_opt(int argc, char **argv, int *i, double *rtol, double *atol, cli_format *fmt);

/* A command's help page (cli/help.c): synopsis, every flag, exit codes.
 * cli_help_print: 0, or -1 when `name` has no page. */
int cli_help_print(FILE *f, const char *name);
int cli_help_has(const char *name);

/* Human-readable byte count ("46.8 MB"). */
const char *cli_bytes(double n, char *buf, size_t size);

/* The commands. */
int cmd_inspect(int argc, char **argv);
int cmd_lint(int argc, char **argv);

/* SARIF 2.1.0 document of lint findings (cli/cmd_lint.c); r NULL: rules only. */
struct onp_lint_result;
struct cJSON *lint_sarif_doc(const char *model, const struct onp_lint_result *r);
/* That document written to `path` atomically (no partial file on error):
 * the one writer of every --sarif FILE (check, gate, merge, diagnose).  0,
 * or the exit code after the one-line error. */
int lint_sarif_write(const char *path, const char *model, const struct onp_lint_result *r);
int cmd_compare(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_expose(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);

/* The sweep's text writer (cli/cmd_sweep.c), shared with diagnose. */
struct onp_sweep_result;
void sweep_print_text(const struct onp_sweep_result *r);

int cmd_gate(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_chain(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_generate(int argc, char **argv); /* cli/cmd_generate.c: the decode loop */

#endif
