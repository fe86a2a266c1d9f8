/*
 * cmd_sweep.c — `onnxparity sweep TARGET`: every fixture at every ONNX
 * Runtime optimization level (disable, basic, extended, layout, all), one
 * session per level, fixtures read once, each fixture run twice per level
 * (determinism).  Prints a level x output matrix of max_abs against the
 * eager truth.  When `all` breaks parity that `disable` keeps, names the
 * optimizer whose disabling (optimization.disable_specified_optimizers)
 * restores it (src/probe/probe.c).  Only the providers the library offers
 * can be swept; a CPU-only build says so.
 *
 * Also home of the sweep's JSON and text writers, which diagnose reuses.
 *
 * Exit: 0 every level passes; 1 a level fails (or cannot open the model);
 * 2 bad usage or no fixtures; 3 unreadable files; 4 ONNX Runtime cannot
 * load the model at any level.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "onnxparity/model.h"
#include "onnxparity/probe.h"
#include "ortopts.h"
#include "report.h"

typedef struct opts {
    cli_ort ort;
    const char *target;
    double rtol, atol;
    int no_search;
    cli_format fmt;
    int quiet, verbose; /* stage lines on stderr: a terminal or --verbose, never --quiet */
} opts;

static int parse_args(int argc, char **argv, opts *o)
{
    cli_ort_init(&o->ort);
    o->rtol = o->atol = -1;
    for (int i = 1; i < argc; i++) {
        int r = cli_ort_opt(&o->ort, argc, argv, &i);
        if (r < 0) return -1;
        if (r) continue;
        if ((r = cli_tol_format_opt(argc, argv, &i, &o->rtol, &o->atol, &o->fmt))) {
            if (r < 0) return -1;
        } else if (cli_flag(argv, i, "no-search")) {
            o->no_search = 1;
        } else if (cli_flag(argv, i, "quiet")) {
            o->quiet = 1;
        } else if (cli_flag(argv, i, "verbose")) {
            o->verbose = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error(argv[0], "unknown option '%s'", argv[i]), -1;
        } else if (!o->target) {
            o->target = argv[i];
        } else {
            return cli_usage_error(argv[0], "one target at a time ('%s' is extra)", argv[i]), -1;
        }
    }
    if (!o->target) return cli_usage_error(argv[0], "usage: onnxparity sweep TARGET"), -1;
    return 0;
}

// --- writers shared with diagnose ---------------------------------------------

struct cJSON *sweep_json(const onp_sweep_result *r)
{
    cJSON *sw = cJSON_CreateObject();
    cJSON *lv = cJSON_AddArrayToObject(sw, "levels");
    for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
        const onp_sweep_level *L = &r->levels[l];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "level", onp_ort_opt_level_name(L->level));
        cJSON_AddBoolToObject(j, "ran", L->ran);
        if (L->error[0]) cJSON_AddStringToObject(j, "error", L->error);
        cJSON_AddBoolToObject(j, "pass", L->pass);
        cJSON_AddBoolToObject(j, "deterministic", L->deterministic);
        if (!L->deterministic) {
            cJSON_AddNumberToObject(j, "nondeterministic_fixture", L->nondet_fixture);
            cJSON_AddStringToObject(j, "nondeterministic_output", L->nondet_output);
        }
        cJSON *outs = cJSON_AddArrayToObject(j, "outputs");
        for (size_t k = 0; k < r->n_outputs; k++) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "name", r->outputs[k]);
            report_num(c, "max_abs", L->cells[k].max_abs);
            cJSON_AddBoolToObject(c, "pass", L->cells[k].pass);
            cJSON_AddNumberToObject(c, "fail_fixture", L->cells[k].fail_fixture);
            cJSON_AddItemToArray(outs, c);
        }
        cJSON_AddItemToArray(lv, j);
    }
    if (r->first_failing >= 0)
        cJSON_AddStringToObject(sw, "first_failing_level",
                                onp_ort_opt_level_name(r->levels[r->first_failing].level));
    else
        cJSON_AddNullToObject(sw, "first_failing_level");
    cJSON *s = cJSON_AddObjectToObject(sw, "optimizer_search");
    cJSON_AddBoolToObject(s, "searched", r->searched);
    if (r->culprit[0])
        cJSON_AddStringToObject(s, "culprit", r->culprit);
    else
        cJSON_AddNullToObject(s, "culprit");
    cJSON_AddNumberToObject(s, "sessions", r->sessions_tried);
    cJSON_AddStringToObject(s, "note", r->search_note);
    cJSON_AddStringToObject(sw, "providers", r->providers);
    cJSON_AddStringToObject(sw, "provider_axis",
                            strchr(r->providers, ',')
                                ? "not swept: only the configured provider is run"
                                : "not swept: the library offers one provider only");
    return sw;
}

void sweep_print_text(const onp_sweep_result *r)
{
    char buf[32];
    printf("%-9s %-6s %-8s", "LEVEL", "RESULT", "DETERM");
    for (size_t k = 0; k < r->n_outputs; k++) printf(" %-20.20s", r->outputs[k]);
    printf("\n");
    for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
        const onp_sweep_level *L = &r->levels[l];
        printf("%-9s %-6s %-8s", onp_ort_opt_level_name(L->level),
               !L->ran   ? "ERROR"
               : L->pass ? "ok"
                         : "FAIL",
               !L->ran            ? "-"
               : L->deterministic ? "yes"
                                  : "NO");
        for (size_t k = 0; L->ran && k < r->n_outputs; k++) {
            char cell[40];
            snprintf(cell, sizeof cell, "%s %s", report_fmt(L->cells[k].max_abs, buf, sizeof buf),
                     L->cells[k].pass ? "ok" : "FAIL");
            printf(" %-20s", cell);
        }
        if (!L->ran) printf(" %s", L->error);
        printf("\n");
    }
    printf("providers: %s (provider axis not swept%s)\n", r->providers,
           strchr(r->providers, ',') ? "" : ": one provider only");
    if (r->first_failing >= 0)
        printf("parity first breaks at level %s\n",
               onp_ort_opt_level_name(r->levels[r->first_failing].level));
    if (r->searched)
        printf("optimizer search: %s%s%s\n", r->culprit[0] ? "culprit " : "", r->culprit,
               r->culprit[0] ? "" : r->search_note);
    if (r->searched && r->culprit[0]) printf("  %s\n", r->search_note);
}

// --- the command ----------------------------------------------------------------

int cmd_sweep(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) return EXIT_USAGE;
    char model[4096];
    snprintf(model, sizeof model, "%s/model.onnx", o.target);
    onp_error e;
    onp_error_clear(&e);
    onp_fixset *fs;
    if (onp_fixset_load(o.target, &fs, &e)) return cli_report(&e);
    onp_model *m;
    if (onp_model_open(model, &m, &e)) {
        onp_fixset_free(fs);
        return cli_report(&e);
    }
    char sha[65];
    onp_model_sha256(m, sha);
    onp_model_close(m);
    onp_ort *ort;
    if (onp_ort_open(o.ort.lib, &ort, &e)) {
        onp_fixset_free(fs);
        return cli_report(&e);
    }
    onp_probe_opts po;
    onp_probe_opts_init(&po);
    po.session = o.ort.so;
    po.rtol = o.rtol;
    po.atol = o.atol;
    po.find_optimizer = !o.no_search;
    onp_sweep_result *r;
    int rc;
    if (!o.quiet && (o.verbose || isatty(STDERR_FILENO)))
        fprintf(stderr, "sweep: every fixture at every optimization level%s\n",
                o.no_search ? "" : ", then the optimizer search when a level breaks parity");
    if (onp_sweep_run(ort, model, fs, &po, &r, &e)) {
        rc = cli_report(&e);
        goto out;
    }
    int ran = 0, pass = 1;
    for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
        ran += r->levels[l].ran;
        if (!r->levels[l].pass || !r->levels[l].deterministic) pass = 0;
    }
    if (!ran) {
        fprintf(stderr, "onnxparity: ONNX Runtime cannot load %s at any level: %s\n", model,
                r->levels[0].error);
        rc = EXIT_RUNTIME;
    } else {
        rc = pass ? EXIT_PASS : EXIT_FAIL;
        if (o.fmt == FMT_JSON) {
            cJSON *root = cJSON_CreateObject();
            cJSON_AddStringToObject(root, "schema", "onnxparity.sweep/1");
            cJSON_AddStringToObject(root, "verdict", pass ? "pass" : "fail");
            cJSON_AddStringToObject(root, "model", model);
            report_environment(root, ort,
                               o.ort.so.provider && o.ort.so.provider[0] ? o.ort.so.provider
                                                                         : "CPUExecutionProvider",
                               o.ort.so.opt_level, o.ort.so.intra_threads, o.ort.so.inter_threads,
                               sha, o.ort.so.config, o.ort.so.n_config);
            cJSON_AddNumberToObject(root, "fixtures", (double)r->n_fixtures);
            cJSON_AddItemToObject(root, "sweep", sweep_json(r));
            report_print_json(root);
        } else {
            printf("model    %s (sha256 %.12s), %zu fixtures\n", model, sha, r->n_fixtures);
            printf("runtime  ONNX Runtime %s\n", onp_ort_version(ort));
            sweep_print_text(r);
            printf("verdict: %s\n",
                   pass ? "pass — every level agrees with eager" : "FAIL — see the levels above");
        }
    }
    onp_sweep_free(r);
out:
    onp_ort_close(ort);
    onp_fixset_free(fs);
    return rc;
}
