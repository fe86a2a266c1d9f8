/*
 * help.c — the help page of every command: `onnxparity COMMAND --help`
 * (or -h) and `onnxparity help COMMAND`.  All help text lives here, one
 * table per command, so that docs/cli.md and the tool can be held against
 * each other (tests/py/test_help.py: every flag of a command's section in
 * docs/cli.md is in its help page, and every flag of the page in the docs).
 *
 * How to add a flag: one row {"--name VALUE", "what it does"} in the
 * command's table below (before the {NULL} row), and one row in that
 * command's option table in docs/cli.md.  How to add a command: a table, a
 * row in `pages` (its name as in main.c's command table) with the groups of
 * shared options it takes, its synopsis and its exit codes.
 *
 * Shared options (the ONNX Runtime options, --quiet/--verbose, and what
 * every command takes) are tables of their own, printed after the
 * command's rows; a shared row whose flag the command's own table also
 * has (sweep's repeatable --ort-lib) is printed once, from the command's.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct help_row {
    const char *flag; /* "--rtol R": the flag and its value's name */
    const char *text; /* one line */
} help_row;

/* Groups of shared options a command takes. */
enum { HELP_ORT = 1, HELP_PROGRESS = 2 };

typedef struct help_page {
    const char *name;
    const char *synopsis; /* lines after "onnxparity ", '\n' between */
    const char *about;    /* one or two sentences */
    const help_row *rows; /* ends with {NULL, NULL} */
    unsigned groups;
    const char *exits; /* "CODE meaning" lines, '\n' between */
} help_page;

// --- shared options -----------------------------------------------------------

static const help_row ort_rows[] = {
    {"--ort-lib PATH", "the libonnxruntime.so to load (else $ONNXPARITY_ORT_LIB, then the search "
                       "in docs/cli.md)"},
    {"--opt-level L", "graph optimization: disable, basic, extended, layout, all (default all)"},
    {"--provider P", "execution provider: cpu (default), cuda, tensorrt, ... or ORT's full name"},
    {"--provider-opt K=V", "a provider option (repeatable), e.g. device_id=1"},
    {"--threads N", "intra-op threads (0 = ORT's default)"},
    {"--inter-threads N", "inter-op threads (0 = ORT's default)"},
    {"--session-config K=V", "a session config entry (repeatable)"},
    {"--save-optimized PATH", "write the model as ORT optimized it"},
    {"--deterministic", "ORT's deterministic compute (where kernels have it)"},
    {"--custom-op-lib PATH", "a custom-operator library ORT loads first (repeatable)"},
    {"--timeout SECONDS", "the most one session creation or one run may take"},
    {"--no-isolate", "run ONNX Runtime in the tool's own process (default: a worker process)"},
    {NULL, NULL},
};

static const help_row progress_rows[] = {
    {"--quiet", "no progress on stderr (default: progress only when stderr is a terminal)"},
    {"--verbose", "progress on stderr always, and what ONNX Runtime logged"},
    {NULL, NULL},
};

static const help_row every_rows[] = {
    {"--max-memory SIZE", "cap the tensor data held, e.g. 512M, 4G ($ONNXPARITY_MAX_MEMORY)"},
    {"-h, --help", "this page"},
    {NULL, NULL},
};

// --- the commands -------------------------------------------------------------

/* The target of the commands that judge fixtures (check, gate, bisect,
 * sweep, diagnose): a bundle folder, or a model and data folders. */
#define TARGET_ROWS                                                                                \
    {"--model MODEL", "the model, with --data instead of TARGET"},                                 \
    {                                                                                              \
        "--data DIR", "a folder of test_data_set_K/ fixtures, or one fixture folder itself "       \
                      "(repeatable; .pb, .npy or .npz files)"                                      \
    }

static const help_row check_rows[] = {
    TARGET_ROWS,
    {"--rtol R", "relative tolerance for every output (default: per dtype)"},
    {"--atol A", "absolute tolerance for every output (default: per dtype)"},
    {"--tol NAME=R,A", "tolerance for output NAME only (repeatable)"},
    {"--top-k K|auto|off", "classifier agreement on outputs shaped [N, C] (default auto)"},
    {"--strict-tol", "the tolerance binds, even inside an output's float noise"},
    {"--no-noise-estimate", "no rerun on perturbed inputs to estimate the noise"},
    {"--no-bisect", "do not bisect a failing bundle"},
    {"--no-lint", "do not lint the model"},
    {"--no-env-target", "judge only the library under test, not the capture environment's too"},
    {"--intermediates", "bisect a passing bundle too: name a divergence the outputs absorb"},
    {"--format text|json", "text table (default) or the JSON document"},
    {"--html FILE", "also write the result as a self-contained HTML page"},
    {"--junit FILE", "also write JUnit XML: one testcase per fixture x output"},
    {"--sarif FILE", "also write the lint findings as SARIF 2.1.0"},
    {"--shard I/N", "only the fixtures at positions k with k mod N = I"},
    {"--summary FILE", "append a Markdown job summary ($GITHUB_STEP_SUMMARY) to FILE"},
    {"--annotations", "print GitHub Actions ::error lines after the text"},
    {NULL, NULL},
};

static const help_row gate_rows[] = {
    TARGET_ROWS,
    {"--criteria FILE", "the release criteria to judge against (or to write, with --record)"},
    {"--record", "measure the bundle and write the criteria file"},
    {"--margin M", "with --record: limits = measured x M (default 2, at least 1)"},
    {"--allow-failing", "with --record: record a bundle that fails, on purpose"},
    {"--target NAME=LIB[@LEVEL]", "with --record, twice or more: a deployment target (LIB bundled, "
                                  "env or a path), criteria per target; gating runs them all"},
    {"--target-provider NAME=P", "with --record: target NAME runs on provider P (its own options)"},
    {"--target-provider-opt NAME=K=V", "with --record: an option of target NAME's provider"},
    {"--rtol R", "relative tolerance (default: the criteria's, else per dtype)"},
    {"--atol A", "absolute tolerance (default: the criteria's, else per dtype)"},
    {"--format text|json", "text (default) or the JSON document (--record: the criteria)"},
    {"--junit FILE", "also write JUnit XML"},
    {"--env-drift warn|fail", "a difference from the recorded environment warns (default) or "
                              "regresses"},
    {"--no-bisect", "do not bisect a failing gate for the first divergent node"},
    {"--summary FILE", "append a Markdown job summary ($GITHUB_STEP_SUMMARY) to FILE"},
    {"--annotations", "print GitHub Actions ::error lines after the text"},
    {"--sarif FILE", "also write the lint findings as SARIF 2.1.0"},
    {"--html FILE", "also write the gate result as a self-contained HTML page (not with --record)"},
    {NULL, NULL},
};

static const help_row merge_rows[] = {
    {"--format text|json", "text (default) or the merged JSON document"},
    {"--junit FILE", "also write the merged result as one JUnit XML file"},
    {"--html FILE", "also write the merged result as a self-contained HTML page"},
    {"--sarif FILE", "also write the shards' lint findings, each once, as SARIF 2.1.0"},
    {NULL, NULL},
};

static const help_row diff_rows[] = {
    {"--format text|json", "text (default) or the JSON document (onnxparity.diff/1)"},
    {NULL, NULL},
};

static const help_row chain_rows[] = {
    {"--stage NAME=MODEL", "a model made from the bundle's export, in chain order (repeatable)"},
    {"--precision NAME=P", "the stage's precision: fp32, fp16, bf16, int8 (default: read from "
                           "the graph)"},
    {"--per-value", "compare every value named alike for every stage: SQNR along the graph"},
    {"--format text|json", "text (default) or the JSON document (onnxparity.chain/1)"},
    {NULL, NULL},
};

static const help_row bisect_rows[] = {
    TARGET_ROWS,
    {"--fixture K", "use test_data_set_K only (default: every fixture)"},
    {"--reference eager|disable", "compare with the eager intermediates or ORT at opt-level "
                                  "disable (default: eager when there are intermediates)"},
    {"--chunk N", "expose at most N values per instrumented session"},
    {"--max-exposed-bytes B", "the automatic chunk's budget per fixture run (default 1G)"},
    {"--rtol R", "relative tolerance for every value (default: per dtype)"},
    {"--atol A", "absolute tolerance for every value (default: per dtype)"},
    {"--strict-tol", "the tolerance binds, even inside a value's float noise"},
    {"--no-noise-estimate", "no rerun on perturbed inputs to estimate the noise"},
    {"--save-repro DIR", "write a local divergence as a small ONNX test-data folder"},
    {"--format text|json", "text (default) or the JSON document"},
    {"--html FILE", "also write the result as a self-contained HTML page"},
    {NULL, NULL},
};

static const help_row sweep_rows[] = {
    TARGET_ROWS,
    {"--providers LIST", "providers to sweep, comma-separated and/or repeated"},
    {"--ort-lib LIB", "a library to sweep (repeatable: versions side by side)"},
    {"--diff-graphs", "diff the optimized graph of every level against the level below"},
    {"--save-optimized DIR", "keep the optimized models in DIR (PROVIDER-LEVEL.onnx)"},
    {"--no-search", "do not search for the optimizer that breaks parity"},
    {"--once", "run each fixture once per level (no determinism check)"},
    {"--rtol R", "relative tolerance (default: per dtype)"},
    {"--atol A", "absolute tolerance (default: per dtype)"},
    {"--format text|json", "text (default) or the JSON document"},
    {"--html FILE", "also write the result as a self-contained HTML page"},
    {NULL, NULL},
};

static const help_row diagnose_rows[] = {
    TARGET_ROWS,
    {"--no-sweep", "skip the sweep over optimization levels and providers"},
    {"--no-bisect", "skip the bisection"},
    {"--save-repro DIR", "write the named node's local divergence as an ONNX test-data folder"},
    {"--rtol R", "relative tolerance (default: per dtype)"},
    {"--atol A", "absolute tolerance (default: per dtype)"},
    {"--format text|json", "text (default) or the JSON document"},
    {"--html FILE", "also write the result as a self-contained HTML page"},
    {"--sarif FILE", "also write the lint findings as SARIF 2.1.0"},
    {NULL, NULL},
};

static const help_row report_rows[] = {
    {"--html FILE", "the page to write (required)"},
    {NULL, NULL},
};

static const help_row run_rows[] = {
    {"--input NAME=FILE", "feed graph input NAME (a bare FILE feeds the next input by position)"},
    {"--output NAME", "fetch only this output (repeatable)"},
    {"--save DIR", "write the outputs into DIR"},
    {"--save-format npy|pb", "DIR/NAME.npy (default) or DIR/output_K.pb"},
    {NULL, NULL},
};

static const help_row generate_rows[] = {
    {"--steps N", "steps to run (default: all the capture recorded)"},
    {"--strict", "a near-tie divergence fails too"},
    {"--max-differ-rate R", "fail when the bound on the share of prompts not agreeing passes R"},
    {"--min-divergence-step N", "fail when a prompt's first token divergence comes before step N"},
    {"--rtol R", "relative tolerance of the logits (float32 default 1e-4)"},
    {"--atol A", "absolute tolerance of the logits (float32 default 1e-5)"},
    {"--format text|json", "text (default) or the JSON document (onnxparity.generate/1)"},
    {NULL, NULL},
};

static const help_row inspect_rows[] = {
    {"--format text|json", "text (default) or the JSON document"},
    {NULL, NULL},
};

static const help_row lint_rows[] = {
    {"--format text|json|sarif", "text (default), JSON, or SARIF 2.1.0"},
    {"--list-rules", "print the rules instead of linting"},
    {NULL, NULL},
};

static const help_row compare_rows[] = {
    {"--rtol R", "relative tolerance (default: per dtype)"},
    {"--atol A", "absolute tolerance (default: per dtype)"},
    {"--format text|json", "text (default) or the JSON document"},
    {NULL, NULL},
};

static const help_row convert_rows[] = {
    {"--big-endian", ".npy: big-endian bytes"},
    {"--fortran", ".npy: Fortran (column-major) order"},
    {"--typed", ".pb: values in the typed *_data fields instead of raw_data"},
    {"--deflate", ".npz: compress the members"},
    {NULL, NULL},
};

static const help_row expose_rows[] = {
    {"--all", "every value a node of the main graph computes"},
    {"--values A,B", "these values"},
    {NULL, NULL},
};

static const help_row extract_rows[] = {
    {"--inputs A,B", "the values that become the graph inputs"},
    {"--outputs C,D", "the values that become the graph outputs"},
    {NULL, NULL},
};

#define EXITS_JUDGE                                                                                \
    "0 parity holds\n1 parity fails\n2 bad usage (a provider this ONNX Runtime lacks "             \
    "included), or nothing to compare\n"                                                           \
    "3 a file that cannot be read or decoded, or no ONNX Runtime to load\n"

static const help_page pages[] = {
    {"check", "check TARGET [options]\ncheck --model MODEL --data DIR [--data DIR]... [options]",
     "Run every fixture under ONNX Runtime and judge every output against the eager truth "
     "(tolerance, then float noise; top-1 on classifiers); lint the model; bisect a failing "
     "bundle.",
     check_rows, HELP_ORT | HELP_PROGRESS,
     EXITS_JUDGE "4 ONNX Runtime cannot load the model, crashed or timed out on a fixture"},
    {"gate",
     "gate TARGET --criteria FILE [--record [--margin M] [--allow-failing] [--target "
     "NAME=LIB[@LEVEL]]...] [options]\n"
     "gate --model MODEL --data DIR... --criteria FILE [options]",
     "Fail on any regression against recorded release criteria; --record writes them.", gate_rows,
     HELP_ORT,
     "0 nothing regressed (or criteria recorded)\n1 something regressed (--record: the bundle "
     "fails)\n2 bad usage, a malformed criteria file, or nothing to compare\n3 unreadable "
     "files\n4 ONNX Runtime failure"},
    {"diff", "diff OLD.json NEW.json [--format text|json]",
     "Compare two check documents of one model output by output and fixture by fixture, and say "
     "what got worse.",
     diff_rows, 0,
     "0 unchanged or improved\n1 something got worse (regressed or mixed)\n2 bad usage, or a "
     "document that is not a check document\n3 unreadable or non-JSON files"},
    {"merge",
     "merge RESULT.json... [--format text|json] [--junit FILE] [--html FILE] [--sarif FILE]",
     "Combine the JSON documents of check --shard I/N runs into one verdict.", merge_rows, 0,
     "0 merged verdict pass\n1 fail\n2 bad usage, or documents that do not belong together "
     "(a missing or repeated shard)\n3 unreadable or non-JSON files\n4 a shard's verdict was "
     "error"},
    {"chain", "chain BUNDLE --stage NAME=MODEL.onnx [--stage ...] [options]",
     "Run the bundle's export and each model made from it (optimized, slimmed, float16, "
     "quantized) over its fixtures; judge each against eager at its precision and name the first "
     "stage, and its first divergent value, beyond it.",
     chain_rows, HELP_ORT,
     "0 every stage as accurate as its precision allows\n1 a stage beyond its precision's "
     "envelope\n2 bad usage, or nothing to compare\n3 unreadable files\n4 ONNX Runtime refused "
     "or lost a stage"},
    {"bisect", "bisect TARGET [options]\nbisect --model MODEL --data DIR... [options]",
     "Name the first node whose output leaves its reference (the eager intermediates, or ORT at "
     "opt-level disable), and whether its error is local or inherited.",
     bisect_rows, HELP_ORT | HELP_PROGRESS,
     "0 every compared value agrees\n1 a first divergent node was found, or the plain model "
     "fails anyway (inconclusive)\n2 bad usage, nothing to compare, no test_data_set_K for "
     "--fixture K, --reference eager without intermediates\n3 unreadable files\n4 ONNX Runtime "
     "refuses the instrumented model or fails on a fixture"},
    {"sweep", "sweep TARGET [options]\nsweep --model MODEL --data DIR... [options]",
     "Every fixture at every optimization level, for every provider and library given; name the "
     "optimizer that breaks parity.",
     sweep_rows, HELP_ORT | HELP_PROGRESS,
     "0 every available configuration passes at every level\n1 one fails or is not "
     "reproducible\n2 bad usage, or nothing to compare\n3 unreadable files, or an --ort-lib that "
     "cannot be loaded\n4 no configuration can open the model"},
    {"diagnose", "diagnose TARGET [options]\ndiagnose --model MODEL --data DIR... [options]",
     "Lint, numbers, sweep, probes and bisect: the ranked causes, with evidence and fix.",
     diagnose_rows, HELP_ORT | HELP_PROGRESS,
     EXITS_JUDGE "4 ONNX Runtime cannot load the model at the configuration under test"},
    {"report", "report DOC.json... --html FILE",
     "Render check, bisect, diagnose, sweep and gate JSON documents as one self-contained HTML "
     "page.",
     report_rows, 0,
     "0 the page was written\n2 bad usage or an unknown schema\n3 a document that cannot be "
     "read or is not JSON, or a page that cannot be written"},
    {"run", "run MODEL [--input NAME=FILE | FILE]... [--output NAME]... [--save DIR] [options]",
     "Run a model once under ONNX Runtime and print (or save) its outputs.", run_rows, HELP_ORT,
     "0 the model ran\n2 bad usage or inputs that do not fit the model\n3 unreadable files\n4 "
     "ONNX Runtime failure"},
    {"generate", "generate BUNDLE [--steps N] [--strict] [options]",
     "Run a decode bundle's generation (greedy, or sampling with eager's draws) in ONNX "
     "Runtime, its own KV cache fed back, and judge every prompt token by token: agree, "
     "near-tie (a flip inside the noise) or defect, placed in its layer.",
     generate_rows, HELP_ORT | HELP_PROGRESS,
     "0 no prompt is a defect, the criteria hold\n1 a prompt is a defect (or, with --strict, "
     "diverges), or a criterion fails\n2 bad "
     "usage\n3 a bundle that cannot be read or decoded\n4 ONNX Runtime refused the model (a "
     "step it refuses is a defect)"},
    {"inspect", "inspect MODEL|TARGET [--format text|json]",
     "IR version, opsets, inputs and outputs, op histogram, initializer bytes.", inspect_rows, 0,
     "0 done\n2 bad usage\n3 a model that cannot be read or decoded"},
    {"lint", "lint MODEL|TARGET [--format text|json|sarif] [--list-rules]",
     "Static checks that name likely causes of disagreement, with the node and a fix.", lint_rows,
     0,
     "0 no finding is an error\n1 a finding is an error\n2 bad usage\n3 the model or parity.json "
     "cannot be read or decoded"},
    {"compare", "compare EXPECTED ACTUAL [--rtol R] [--atol A] [--format text|json]",
     "Compare tensor files, .npz archives, or folders of them paired by name.", compare_rows, 0,
     "0 every pair matches\n1 a pair differs\n2 bad input, or nothing was compared\n3 unreadable "
     "files"},
    {"convert", "convert IN OUT [--big-endian] [--fortran] [--typed] [--deflate]",
     "Convert one tensor between .pb, .npy and .npz (by OUT's extension).", convert_rows, 0,
     "0 written\n2 bad usage or input\n3 unreadable or unwritable files"},
    {"expose", "expose MODEL OUT (--all | --values A,B)",
     "Add values as graph outputs, to look inside a model with run.", expose_rows, 0,
     "0 written\n2 bad usage or unknown values\n3 unreadable or unwritable files"},
    {"extract", "extract MODEL OUT --inputs A,B --outputs C,D",
     "Cut the subgraph between the given values into its own model.", extract_rows, 0,
     "0 written\n2 bad usage, unknown values, or outputs that need an input not listed\n3 "
     "unreadable or unwritable files"},
};

// --- printing -----------------------------------------------------------------

static const help_page *find_page(const char *name)
{
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
        if (!strcmp(pages[i].name, name)) return &pages[i];
    return NULL;
}

/* The flag name of a row ("--rtol" of "--rtol R"), compared up to the space. */
static int same_flag(const char *a, const char *b)
{
    size_t na = strcspn(a, " "), nb = strcspn(b, " ");
    return na == nb && !strncmp(a, b, na);
}

static int has_flag(const help_row *rows, const char *flag)
{
    for (; rows && rows->flag; rows++)
        if (same_flag(rows->flag, flag)) return 1;
    return 0;
}

static void print_rows(FILE *f, const help_row *rows, const help_row *own)
{
    for (; rows->flag; rows++) {
        if (own && has_flag(own, rows->flag)) continue;
        if (strlen(rows->flag) < 26)
            fprintf(f, "  %-26s %s\n", rows->flag, rows->text);
        else
            fprintf(f, "  %s\n  %-26s %s\n", rows->flag, "", rows->text);
    }
}

/* Print lines of s, '\n' separated, each after `first` (the first line) or
 * `rest`. */
static void print_lines(FILE *f, const char *s, const char *first, const char *rest)
{
    for (int line = 0; *s; line++) {
        size_t n = strcspn(s, "\n");
        fprintf(f, "%s%.*s\n", line ? rest : first, (int)n, s);
        s += n + (s[n] == '\n');
    }
}

/* s as lines of at most `width` columns, broken at spaces. */
static void print_wrapped(FILE *f, const char *s, size_t width)
{
    while (*s) {
        size_t n = strlen(s);
        if (n > width) {
            n = width;
            while (n > 0 && s[n] != ' ') n--;
            if (!n) n = strcspn(s, " ");
        }
        fprintf(f, "%.*s\n", (int)n, s);
        s += n;
        while (*s == ' ') s++;
    }
}

int cli_help_has(const char *name)
{
    return find_page(name) != NULL;
}

int cli_help_print(FILE *f, const char *name)
{
    const help_page *p = find_page(name);
    if (!p) return -1;
    print_lines(f, p->synopsis, "usage: onnxparity ", "       onnxparity ");
    fputc('\n', f);
    print_wrapped(f, p->about, 78);
    fprintf(f, "\noptions:\n");
    print_rows(f, p->rows, NULL);
    if (p->groups & HELP_PROGRESS) print_rows(f, progress_rows, p->rows);
    if (p->groups & HELP_ORT) {
        fprintf(f, "\nONNX Runtime options:\n");
        print_rows(f, ort_rows, p->rows);
    }
    fprintf(f, "\nevery command:\n");
    print_rows(f, every_rows, p->rows);
    fprintf(f, "\nexit codes:\n");
    print_lines(f, p->exits, "  ", "  ");
    fprintf(f, "\nMore: docs/cli.md (onnxparity %s).\n", ONP_VERSION);
    return 0;
}
