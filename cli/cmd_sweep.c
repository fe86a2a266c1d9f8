/*
 * cmd_sweep.c — `onnxparity sweep TARGET`: every fixture at every ONNX
 * Runtime optimization level (disable, basic, extended, layout, all), one
 * session per level, fixtures read once, each fixture run twice per level
 * (determinism), for every provider of --providers and every library of
 * --ort-lib (the matrix: libraries x providers x levels).  Prints a level x
 * output matrix of max_abs against the eager truth per configuration.  When
 * `all` breaks parity that `disable` keeps, names the optimizer whose
 * disabling (optimization.disable_specified_optimizers) restores it; where a
 * level breaks parity (or everywhere with --diff-graphs), diffs the graphs
 * ORT optimized (src/probe/: sweep.c, optgraphs.c, graphdiff.c).  A provider the
 * library lacks, or whose session cannot be created, is a configuration
 * marked unavailable, not a failure.
 *
 * Also home of the sweep's JSON and text writers, which diagnose reuses.
 *
 * Exit: 0 every available configuration passes at every level; 1 one fails;
 * 2 bad usage or no fixtures; 3 unreadable files; 4 an ORT library cannot
 * be loaded, or no configuration can open the model at any level.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "onnxparity/model.h"
#include "onnxparity/probe.h"
#include "ortopts.h"
#include "onnxparity/doc.h"
#include "report.h"
#include "target.h"

#define MAX_LIBS 8
#define MAX_PROVIDERS 16

typedef struct opts {
    cli_ort ort;
    cli_target tg; /* TARGET, or --model/--data */
    const char *target;
    double rtol, atol;
    int no_search;
    int once;                   /* --once: each fixture once per level, no determinism check */
    int diff_graphs;            /* --diff-graphs */
    const char *save_dir;       /* --save-optimized DIR */
    const char *libs[MAX_LIBS]; /* --ort-lib, repeatable */
    size_t n_libs;
    const char *providers[MAX_PROVIDERS]; /* --providers, repeatable, comma lists */
    size_t n_providers;
    cli_format fmt;
    const char *html;   /* --html FILE: the sweep as a page, or NULL */
    int quiet, verbose; /* stage lines on stderr: a terminal or --verbose, never --quiet */
} opts;

static int parse_args(int argc, char **argv, opts *o)
{
    cli_ort_init(&o->ort);
    o->rtol = o->atol = -1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        /* sweep's own meaning of these two, before the shared ORT options */
        if ((r = cli_opt(argc, argv, &i, "ort-lib", &v))) {
            if (r < 0) return -1;
            if (o->n_libs >= MAX_LIBS)
                return cli_usage_error(argv[0], "at most %d --ort-lib", MAX_LIBS), -1;
            o->libs[o->n_libs++] = v;
            continue;
        }
        if ((r = cli_opt(argc, argv, &i, "save-optimized", &v))) {
            if (r < 0) return -1;
            /* sweep saves one model per level into a folder: an existing
             * file here would make every save fail */
            struct stat st;
            if (stat(v, &st) == 0 && !S_ISDIR(st.st_mode))
                return cli_usage_error(argv[0], "--save-optimized wants a folder; '%s' is a file",
                                       v),
                       -1;
            o->save_dir = v;
            continue;
        }
        if ((r = cli_opt(argc, argv, &i, "providers", &v))) {
            if (r < 0) return -1;
            /* argv's strings are the program's to modify: split in place */
            char *list = (char *)v, *save = NULL;
            for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (o->n_providers >= MAX_PROVIDERS)
                    return cli_usage_error(argv[0], "at most %d providers", MAX_PROVIDERS), -1;
                o->providers[o->n_providers++] = tok;
            }
            continue;
        }
        r = cli_ort_opt(&o->ort, argc, argv, &i);
        if (r < 0) return -1;
        if (r) continue;
        if ((r = cli_tol_format_opt(argc, argv, &i, &o->rtol, &o->atol, &o->fmt))) {
            if (r < 0) return -1;
        } else if ((r = cli_opt(argc, argv, &i, "html", &v))) {
            if (r < 0) return -1;
            o->html = v;
        } else if (cli_flag(argv, i, "once")) {
            o->once = 1;
        } else if (cli_flag(argv, i, "no-search")) {
            o->no_search = 1;
        } else if (cli_flag(argv, i, "diff-graphs")) {
            o->diff_graphs = 1;
        } else if (cli_progress_opt(argv, i, &o->quiet, &o->verbose)) {
        } else if ((r = cli_target_opt(&o->tg, argc, argv, &i))) {
            if (r < 0) return -1;
        } else if (cli_target_arg(argv, i, "target", &o->target)) {
            return -1;
        }
    }
    if (cli_target_finish(&o->tg, argv[0], o->target)) return -1;
    if (o->n_providers && o->ort.so.provider)
        return cli_usage_error(argv[0], "--provider and --providers: give one of them"), -1;
    return 0;
}

/* "OP (domain) NAME" of a diff node. */
static void print_node(const onp_gdiff_node *n)
{
    printf("%s%s%s%s %s", n->op_type, n->domain[0] ? " (" : "", n->domain, n->domain[0] ? ")" : "",
           n->name[0] ? n->name : "(unnamed)");
}

/* Up to 8 nodes by name, else the op types with their counts. */
static void print_nodes(const onp_gdiff_node *nodes, const size_t *idx, size_t n, size_t stride)
{
    if (n <= 8) {
        for (size_t k = 0; k < n; k++) {
            if (k) printf(", ");
            print_node(&nodes[idx ? idx[k] : k * stride]);
        }
        return;
    }
    const char *seen[64];
    size_t n_seen = 0;
    for (size_t k = 0; k < n; k++) {
        const onp_gdiff_node *x = &nodes[idx ? idx[k] : k * stride];
        size_t s = 0;
        while (s < n_seen && strcmp(seen[s], x->op_type)) s++;
        if (s < n_seen || n_seen == 64) continue;
        seen[n_seen++] = x->op_type;
        size_t cnt = 0;
        for (size_t q = k; q < n; q++)
            if (!strcmp(nodes[idx ? idx[q] : q * stride].op_type, x->op_type)) cnt++;
        printf("%s%s%s%s%s x%zu", n_seen > 1 ? ", " : "", x->op_type, x->domain[0] ? " (" : "",
               x->domain, x->domain[0] ? ")" : "", cnt);
    }
}

static void print_diff(const onp_graph_diff *d, const char *indent)
{
    printf("%sgraph diff %s -> %s: %zu -> %zu nodes, %zu removed, %zu added\n", indent, d->from,
           d->to, d->nodes_from, d->nodes_to, d->n_removed, d->n_added);
    size_t *members = calloc(d->n_added ? d->n_added : 1, sizeof *members);
    for (size_t g = 0; members && g < d->n_groups; g++) {
        size_t m = 0;
        const onp_gdiff_node *first = NULL;
        for (size_t i = 0; i < d->n_added; i++)
            if (d->added[i].group == g) {
                members[m++] = i;
                if (!first) first = &d->added[i];
            }
        if (!first) continue;
        printf("%s  + ", indent);
        if (m > 1) printf("%zu nodes: ", m);
        print_nodes(d->added, members, m, 1);
        if (first->n_replaces) {
            printf(" replace%s ", m > 1 ? "" : "s");
            if (first->n_replaces > 8) printf("%zu nodes: ", first->n_replaces);
            print_nodes(d->removed, first->replaces, first->n_replaces, 1);
        }
        printf("\n");
    }
    free(members);
    for (size_t i = 0; i < d->n_removed; i++) {
        const onp_gdiff_node *n = &d->removed[i];
        if (n->replaced_by >= 0) continue; /* shown with its replacement */
        printf("%s  - ", indent);
        print_node(n);
        printf("%s\n", n->folded ? " (folded into an initializer)" : " (eliminated)");
    }
    if (d->from_file) printf("%s  saved: %s, %s\n", indent, d->from_file, d->to_file);
}

static void print_levels(const onp_sweep_result *r, const onp_sweep_level *levels)
{
    char buf[32];
    printf("%-9s %-6s %-8s", "LEVEL", "RESULT", "DETERM");
    for (size_t k = 0; k < r->n_outputs; k++) printf(" %-20.20s", r->outputs[k]);
    printf("\n");
    for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
        const onp_sweep_level *L = &levels[l];
        printf("%-9s %-6s %-8s", onp_ort_opt_level_name(L->level),
               !L->ran   ? "ERROR"
               : L->pass ? "ok"
                         : "FAIL",
               !L->ran || L->deterministic < 0 ? "-"
               : L->deterministic              ? "yes"
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
    for (int l = 0; l < ONP_SWEEP_LEVELS; l++)
        if (levels[l].graph_diff) print_diff(levels[l].graph_diff, "");
}

void sweep_print_text(const onp_sweep_result *r)
{
    if (r->n_configs <= 1) {
        print_levels(r, r->levels);
        printf("providers: %s (provider axis not swept%s)\n", r->providers,
               strchr(r->providers, ',') ? ": --providers LIST sweeps several"
                                         : ": one provider only");
    } else {
        for (size_t c = 0; c < r->n_configs; c++) {
            const onp_sweep_config *C = &r->configs[c];
            printf("configuration %zu: %s, ONNX Runtime %s (%s)%s\n", c, C->provider,
                   C->ort_version, C->ort_library, C->available ? "" : ": UNAVAILABLE");
            if (!C->available) {
                printf("  %s\n", C->unavailable);
                continue;
            }
            print_levels(r, C->levels);
        }
        printf("providers offered: %s\n", r->providers);
    }
    if (r->first_failing >= 0)
        printf("parity first breaks at level %s\n",
               onp_ort_opt_level_name(r->levels[r->first_failing].level));
    if (r->ep_disagree) printf("execution providers disagree: %s\n", r->ep_note);
    if (r->lib_disagree) printf("libraries disagree: %s\n", r->lib_note);
    if (r->searched)
        printf("optimizer search: %s%s%s\n", r->culprit[0] ? "culprit " : "", r->culprit,
               r->culprit[0] ? "" : r->search_note);
    if (r->searched && r->culprit[0]) printf("  %s\n", r->search_note);
    if (r->culprit_diff) print_diff(r->culprit_diff, "  ");
    if (r->graph_note[0]) printf("graphs: %s\n", r->graph_note);
}

// --- the command ----------------------------------------------------------------

int cmd_sweep(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o)) return EXIT_USAGE;
    const char *model = o.tg.model;
    onp_error e;
    onp_error_clear(&e);
    onp_fixset *fs;
    if (onp_fixset_load_dirs(o.tg.data, o.tg.n_data, &fs, &e)) return cli_report(&e);
    onp_model *m;
    if (onp_model_open(model, &m, &e)) {
        onp_fixset_free(fs);
        return cli_report(&e);
    }
    if (onp_model_check_external(m, &e)) { /* by our rules, before ORT opens a file */
        onp_model_close(m);
        onp_fixset_free(fs);
        return cli_report(&e);
    }
    char sha[65];
    onp_model_sha256(m, sha);
    onp_model_close(m);
    onp_ort *orts[MAX_LIBS];
    size_t n_orts = 0;
    int rc = 0;
    if (!o.n_libs) o.libs[o.n_libs++] = NULL; /* the usual search */
    for (; n_orts < o.n_libs; n_orts++)
        if (onp_ort_open(o.libs[n_orts], &orts[n_orts], &e)) {
            rc = cli_report(&e);
            goto out;
        }
    onp_probe_opts po;
    onp_probe_opts_init(&po);
    po.session = o.ort.so;
    po.rtol = o.rtol;
    po.atol = o.atol;
    po.find_optimizer = !o.no_search;
    po.once = o.once;
    po.providers = o.providers;
    po.n_providers = o.n_providers;
    po.diff_graphs = o.diff_graphs;
    po.save_optimized_dir = o.save_dir;
    onp_sweep_result *r;
    cli_stage(o.quiet, o.verbose,
              o.no_search ? "sweep: every fixture at every optimization level"
                          : "sweep: every fixture at every optimization level, then the "
                            "optimizer search when a level breaks parity");
    if (onp_sweep_run_libs(orts, n_orts, model, fs, &po, &r, &e)) {
        rc = cli_report(&e);
        goto out;
    }
    onp_run_verdict verdict = onp_run_verdict_of_sweep(r);
    rc = onp_run_exit_code(verdict);
    if (verdict == ONP_RUN_ERROR) /* no configuration could load the model */
        fprintf(stderr, "onnxparity: ONNX Runtime cannot load %s at any level%s: %s\n", model,
                r->n_configs > 1 ? " in any configuration" : "", r->configs[0].unavailable);
    if (o.fmt == FMT_JSON || o.html) { /* the document: printed, and/or the page */
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "schema", "onnxparity.sweep/1");
        cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(verdict));
        cJSON_AddStringToObject(root, "model", model);
        onp_doc_environment(root, orts[0], r->configs[0].provider, o.ort.so.opt_level,
                            o.ort.so.intra_threads, o.ort.so.inter_threads, sha, o.ort.so.config,
                            o.ort.so.n_config);
        cJSON_AddNumberToObject(root, "fixtures", (double)r->n_fixtures);
        cJSON_AddItemToObject(root, "sweep", onp_doc_sweep(r));
        int html_rc = report_emit(root, o.fmt == FMT_JSON, o.html, model);
        if (html_rc) rc = html_rc;
    }
    if (o.fmt != FMT_JSON && verdict != ONP_RUN_ERROR) {
        printf("model    %s (sha256 %.12s), %zu fixtures\n", model, sha, r->n_fixtures);
        printf("runtime  ONNX Runtime %s", onp_ort_version(orts[0]));
        for (size_t k = 1; k < n_orts; k++) printf(", %s", onp_ort_version(orts[k]));
        printf("\n");
        sweep_print_text(r);
        printf("verdict: %s\n", verdict == ONP_RUN_PASS ? "pass — every level agrees with eager"
                                                        : "FAIL — see the levels above");
    }
    if (o.save_dir && r->graph_note[0]) { /* asked to save, and a save failed */
        fprintf(stderr, "onnxparity: --save-optimized %s: cannot save: %s\n", o.save_dir,
                r->graph_note);
        if (rc == EXIT_PASS || rc == EXIT_FAIL) rc = EXIT_IO;
    }
    onp_sweep_free(r);
out:
    for (size_t k = 0; k < n_orts; k++) onp_ort_close(orts[k]);
    onp_fixset_free(fs);
    return rc;
}
