/*
 * main.c — the onnxparity tool: dispatch to a command from the table.
 *
 * How to add a command: write cmd_NAME(argc, argv) in cli/cmd_NAME.c,
 * declare it in cli.h, add one row to `commands` below, its help page to
 * cli/help.c, and document its flags and exit codes in docs/cli.md
 * (tests/py/test_help.py holds the page and the docs against each other).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "onnxparity/numparse.h"
#include "onnxparity/outpath.h"
#include "onnxparity/tensor.h"

static const cli_cmd commands[] = {
    {"check",
     "TARGET | --model M --data DIR... [--rtol R] [--atol A] [--tol NAME=R,A] [--top-k K|auto]",
     "run every fixture under ONNX Runtime and compare with the eager truth", cmd_check},
    {"gate",
     "TARGET --criteria FILE [--record [--margin M]] [--env-drift warn|fail] [--format text|json] "
     "[--junit FILE]",
     "fail on any regression against recorded release criteria (record them with --record)",
     cmd_gate},
    {"merge", "RESULT.json... [--format text|json] [--junit FILE] [--html FILE] [--sarif FILE]",
     "combine the JSON documents of check --shard I/N runs into one verdict", cmd_merge},
    {"diff", "OLD.json NEW.json [--format text|json]",
     "what got worse between two check documents, output by output and fixture by fixture",
     cmd_diff},
    {"generate", "BUNDLE [--steps N] [--strict] [--format text|json] [--rtol R] [--atol A]",
     "run a decode bundle's greedy generation in ONNX Runtime, token by token with its cache",
     cmd_generate},
    {"chain",
     "BUNDLE --stage NAME=MODEL.onnx [--stage ...] [--precision NAME=P] [--format text|json]",
     "the export and the models made from it, each judged at its precision", cmd_chain},
    {"bisect",
     "TARGET [--fixture K] [--reference eager|disable] [--chunk N] [--max-exposed-bytes B] "
     "[--format text|json] [--html FILE] [--rtol R] [--atol A]",
     "name the first node whose output leaves the eager intermediates", cmd_bisect},
    {"sweep",
     "TARGET [--providers P,Q] [--ort-lib PATH]... [--diff-graphs] [--save-optimized DIR] "
     "[--no-search] [--once] [--format text|json] [--html FILE] [--rtol R] [--atol A]",
     "every fixture at every optimization level; name the optimizer that breaks it", cmd_sweep},
    {"diagnose", "TARGET [--no-sweep] [--no-bisect] [--format text|json] [--rtol R] [--atol A]",
     "lint + numbers + sweep + probes + bisect: the ranked causes, with evidence and fix",
     cmd_diagnose},
    {"report", "DOC.json... --html FILE",
     "render check/bisect/diagnose/sweep/gate JSON documents as one self-contained HTML page",
     cmd_report},
    {"run", "MODEL [--input NAME=FILE]... [--output NAME]... [--save DIR]",
     "run a model once under ONNX Runtime and print or save its outputs", cmd_run},
    {"inspect", "MODEL [--format text|json]",
     "IR version, opsets, inputs/outputs, op histogram, initializer bytes", cmd_inspect},
    {"lint", "MODEL|TARGET [--format text|json|sarif] [--list-rules]",
     "static checks that name likely causes of disagreement, with the node and a fix", cmd_lint},
    {"compare", "EXPECTED ACTUAL [--rtol R] [--atol A] [--format text|json]",
     "compare tensor files or folders of them, paired by name", cmd_compare},
    {"convert", "IN OUT [--big-endian] [--fortran] [--typed] [--deflate]",
     "convert a tensor between .pb, .npy and .npz", cmd_convert},
    {"expose", "MODEL OUT (--all | --values A,B)",
     "add values as graph outputs (every intermediate with --all)", cmd_expose},
    {"extract", "MODEL OUT --inputs A,B --outputs C,D",
     "cut the subgraph between the given values into its own model", cmd_extract},
};

static void usage(FILE *f)
{
    fprintf(f, "onnxparity %s — why does the ONNX export disagree with PyTorch?\n\n", ONP_VERSION);
    fprintf(f, "usage: onnxparity COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n           %s\n", commands[i].name, commands[i].usage,
                commands[i].summary);
    fprintf(f,
            "\nONNX Runtime options (run, check, gate, bisect, sweep, diagnose): --ort-lib PATH\n"
            "  --opt-level disable|basic|extended|layout|all --provider P --provider-opt K=V\n"
            "  --threads N --inter-threads N --session-config K=V --save-optimized PATH\n"
            "  --deterministic --custom-op-lib PATH --timeout SECONDS --no-isolate\n"
            "\nEvery command: --max-memory SIZE (e.g. 512M, 4G) caps the tensor data held.\n");
    fprintf(f, "\nonnxparity COMMAND --help (or -h, or onnxparity help COMMAND): that command's "
               "options and exit codes.\n");
    fprintf(f, "\nexit codes: 0 pass, 1 fail, 2 usage or bad input, 3 I/O or format error, 4 "
               "ONNX Runtime failure (incl. a crash or timeout)\n");
}

int cli_report(const onp_error *e)
{
    char buf[2048];
    fprintf(stderr, "onnxparity: %s\n", onp_error_format(e, buf, sizeof buf));
    return onp_error_exit_code(e);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "onnxparity %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_USAGE;
}

int cli_flag(char **argv, int i, const char *name)
{
    return argv[i][0] == '-' && argv[i][1] == '-' && !strcmp(argv[i] + 2, name);
}

int cli_target_arg(char **argv, int i, const char *what, const char **target)
{
    if (argv[i][0] == '-' && argv[i][1])
        return cli_usage_error(argv[0], "unknown option '%s'", argv[i]), -1;
    if (*target)
        return cli_usage_error(argv[0], "one %s at a time ('%s' is extra)", what, argv[i]), -1;
    *target = argv[i];
    return 0;
}

int cli_progress_opt(char **argv, int i, int *quiet, int *verbose)
{
    if (cli_flag(argv, i, "quiet")) return *quiet = 1;
    if (cli_flag(argv, i, "verbose")) return *verbose = 1;
    return 0;
}

int cli_progress_on(int quiet, int verbose)
{
    return !quiet && (verbose || isatty(STDERR_FILENO));
}

void cli_stage(int quiet, int verbose, const char *what)
{
    if (cli_progress_on(quiet, verbose)) fprintf(stderr, "%s\n", what);
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (a[0] != '-' || a[1] != '-' || strncmp(a + 2, name, n)) return 0;
    if (a[2 + n] == '=') {
        *val = a + 3 + n;
        return 1;
    }
    if (a[2 + n] != '\0') return 0;
    if (*i + 1 >= argc) {
        cli_usage_error(argv[0], "--%s needs a value", name);
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

// --- numeric option values: the one parser ---------------------------------------

int cli_run_opt(onp_run_args *a, int groups, int argc, char **argv, int *i)
{
    onp_error e;
    onp_error_clear(&e);
    int r = onp_run_args_parse(a, groups, argc, (const char *const *)argv, i, &e);
    if (r < 0) cli_usage_error(argv[0], "%s", e.msg);
    return r;
}

int cli_double(const char *cmd, const char *name, const char *s, double *out)
{
    double v;
    if (onp_parse_real(s, &v) || v < 0) {
        cli_usage_error(cmd, "--%s wants a finite number >= 0, not '%s'", name, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_int_in(const char *cmd, const char *name, const char *s, long lo, long hi, long *out)
{
    if (onp_parse_long(s, lo, hi, out)) {
        cli_usage_error(cmd, "--%s wants an integer from %ld to %ld, not '%s'", name, lo, hi, s);
        return -1;
    }
    return 0;
}

int cli_int(const char *cmd, const char *name, const char *s, long *out)
{
    return cli_int_in(cmd, name, s, 0, INT_MAX, out);
}

int cli_tol_pair(const char *s, double *rtol, double *atol)
{
    const char *comma = strchr(s, ',');
    char first[64];
    if (!comma || (size_t)(comma - s) >= sizeof first) return -1;
    memcpy(first, s, (size_t)(comma - s));
    first[comma - s] = '\0';
    double r, a;
    if (onp_parse_real(first, &r) || onp_parse_real(comma + 1, &a) || r < 0 || a < 0) return -1;
    *rtol = r;
    *atol = a;
    return 0;
}

int cli_parse_format(const char *cmd, const char *s, cli_format *out)
{
    if (!strcmp(s, "text"))
        *out = FMT_TEXT;
    else if (!strcmp(s, "json"))
        *out = FMT_JSON;
    else
        return cli_usage_error(cmd, "--format is text or json, not '%s'", s), -1;
    return 0;
}

int cli_tol_format_opt(int argc, char **argv, int *i, double *rtol, double *atol, cli_format *fmt)
{
    const char *v;
    int r;
    if (cli_flag(argv, *i, "rtol") || cli_flag(argv, *i, "atol") ||
        !strncmp(argv[*i], "--rtol=", 7) || !strncmp(argv[*i], "--atol=", 7)) {
        /* the run's option table parses them (run.h), as for check */
        onp_run_args a; /* about 20 kB */
        onp_run_args_init(&a);
        a.run.rtol = *rtol;
        a.run.atol = *atol;
        if ((r = cli_run_opt(&a, ONP_RUN_ARGS_TOL, argc, argv, i)) <= 0) return r;
        *rtol = a.run.rtol;
        *atol = a.run.atol;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "format", &v)))
        return r < 0 || cli_parse_format(argv[0], v, fmt) ? -1 : 1;
    return 0;
}

const char *cli_bytes(double n, char *buf, size_t size)
{
    static const char *units[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (n >= 1000 && u < 4) {
        n /= 1000;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%.0f B", n);
    else
        snprintf(buf, size, "%.1f %s", n, units[u]);
    return buf;
}

/* --max-memory SIZE is accepted by every command, anywhere after the
 * command name (or as $ONNXPARITY_MAX_MEMORY): it caps the bytes of tensor
 * data the tool holds (onp_tensor_set_memory_cap).  Taken out of argv here
 * so that the commands never see it.  0, or EXIT_USAGE after a message. */
static int take_max_memory(int *argc, char **argv)
{
    const char *v = getenv("ONNXPARITY_MAX_MEMORY");
    const char *from = "ONNXPARITY_MAX_MEMORY";
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            while (i < *argc) argv[out++] = argv[i++];
            break;
        }
        if (!strcmp(a, "--max-memory")) {
            if (i + 1 >= *argc) return cli_usage_error(argv[0], "--max-memory needs a size");
            v = argv[++i];
            from = "--max-memory";
            continue;
        }
        if (!strncmp(a, "--max-memory=", 13)) {
            v = a + 13;
            from = "--max-memory";
            continue;
        }
        argv[out++] = argv[i];
    }
    argv[out] = NULL;
    *argc = out;
    if (!v || !*v) return 0;
    unsigned long long cap;
    if (onp_parse_size(v, &cap) || cap > SIZE_MAX)
        return cli_usage_error(argv[0], "%s wants a size such as 512M or 4G, not '%s'", from, v);
    onp_tensor_set_memory_cap(cap);
    return 0;
}

/* Everything written to stdout must have reached it: a full disk, /dev/full
 * or a failed close makes the run exit 3 (a command that already failed
 * keeps its own code), never 0 with a truncated document. */
static int finish_stdout(int rc)
{
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int err = errno;
    /* EBADF: stdout was closed before the start and nothing was written */
    if (fclose(stdout) != 0 && !bad && errno != EBADF) bad = 1, err = errno;
    if (!bad) return rc;
    fprintf(stderr, "onnxparity: standard output: cannot write: %s\n", strerror(err));
    return rc == EXIT_PASS || rc == EXIT_FAIL ? EXIT_IO : rc;
}

/* -h or --help anywhere after the command name (before a "--"). */
static int wants_help(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--")) return 0;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* a temporary being written is removed if the run is interrupted */
    onp_out_cleanup_on_signals();
    /* past `ulimit -f`, write() fails with EFBIG (exit 3) instead of a kill */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "help") && argc > 2) {
        if (cli_help_print(stdout, argv[2]))
            return cli_usage_error("help", "no command '%s' (see onnxparity --help)", argv[2]);
        return finish_stdout(EXIT_PASS);
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return finish_stdout(EXIT_PASS);
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("onnxparity %s\n", ONP_VERSION);
        return finish_stdout(EXIT_PASS);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            if (wants_help(argc, argv)) {
                if (cli_help_print(stdout, argv[1])) /* no page yet: the table's line */
                    printf("usage: onnxparity %s %s\n\n%s\n\nMore: docs/cli.md.\n",
                           commands[i].name, commands[i].usage, commands[i].summary);
                return finish_stdout(EXIT_PASS);
            }
            int sub_argc = argc - 1;
            if (take_max_memory(&sub_argc, argv + 1)) return EXIT_USAGE;
            return finish_stdout(commands[i].run(sub_argc, argv + 1));
        }
    fprintf(stderr, "onnxparity: unknown command '%s' (see onnxparity --help)\n", argv[1]);
    return EXIT_USAGE;
}
