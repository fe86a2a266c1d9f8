/*
 * cmd_chain.c — `onnxparity chain BUNDLE --stage NAME=MODEL.onnx ...`:
 * the bundle's export and each model made from it (optimized, slimmed,
 * float16, quantized) run over the bundle's fixtures and judged against
 * eager at the stage's precision (docs/chain.md).
 *
 * The chain is the library's (chain.h, onp_chain_run: the run layer's
 * fixture loop per stage, the stage envelope, the first divergent value
 * matched across graphs); this file parses and formats (text, or the
 * library's onnxparity.chain/1 document).
 *
 * Exit: 0 every stage within its precision's envelope; 1 a stage beyond
 * it; 2 bad usage; 3 unreadable files; 4 ONNX Runtime refused or lost a
 * stage.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "onnxparity/chain.h"
#include "onnxparity/doc.h"
#include "report.h"

typedef struct opts {
    onp_run_args args;    /* the run's options, parsed by the library's table (run.h) */
    onp_chain_args chain; /* --stage, --precision, --per-value (chain.h) */
    const char *bundle;
    cli_format fmt;
} opts;

static int parse_args(int argc, char **argv, opts *o)
{
    const char *v;
    onp_run_args_init(&o->args);
    for (int i = 1; i < argc; i++) {
        int r = cli_run_opt(&o->args, ONP_RUN_ARGS_ORT | ONP_RUN_ARGS_TOL, argc, argv, &i);
        if (r < 0) return -1;
        if (r) continue;
        onp_error e;
        onp_error_clear(&e);
        r = onp_chain_args_parse(&o->chain, argc, (const char *const *)argv, &i, &e);
        if (r < 0) return cli_usage_error(argv[0], "%s", e.msg), -1;
        if (r) continue;
        if ((r = cli_opt(argc, argv, &i, "format", &v))) {
            if (r < 0 || cli_parse_format(argv[0], v, &o->fmt)) return -1;
        } else if (cli_target_arg(argv, i, "bundle", &o->bundle)) {
            return -1;
        }
    }
    onp_error e;
    onp_error_clear(&e);
    if (!o->bundle)
        return cli_usage_error(argv[0], "usage: onnxparity chain BUNDLE --stage NAME=MODEL.onnx "
                                        "[--stage ...] [--precision NAME=fp32|fp16|bf16|int8]"),
               -1;
    if (onp_chain_args_finish(&o->chain, &e)) return cli_usage_error(argv[0], "%s", e.msg), -1;
    return 0;
}

static void print_point(const char *label, const onp_chain_point *p)
{
    char a[16], b[16];
    printf("    %-8s %s  rel err %s  (|diff| %s)\n", label, p->value,
           onp_doc_short_num(p->rel_err, a, sizeof a), onp_doc_short_num(p->max_abs, b, sizeof b));
    printf("             stage:  %s (%s)\n", p->node[0] ? p->node : "<unnamed>", p->op_type);
    printf("             export: %s (%s)", p->orig_node[0] ? p->orig_node : "<unnamed>",
           p->orig_op_type);
    if (p->by_value) {
        char r[16];
        printf(", value %s, matched by value (correlation %s)", p->orig_value,
               onp_doc_short_num(p->corr, r, sizeof r));
    }
    printf("\n");
}

/* The export nodes the first divergent value's stage producer stands for. */
static void print_group(const onp_chain_divergence *dv)
{
    if (dv->n_group < 2) return;
    printf("             export group (%zu nodes; Constants not listed):", dv->n_group);
    size_t shown = 0, left = 0;
    for (size_t i = 0; i < dv->n_group; i++) {
        if (!strcmp(dv->group[i].op_type, "Constant")) continue;
        if (shown == 8) {
            left++;
            continue;
        }
        printf("%s %s (%s)", shown++ ? "," : "", dv->group[i].node, dv->group[i].op_type);
    }
    if (left) printf(", and %zu more", left);
    printf("\n");
}

/* The five values whose node lost the most SQNR (--per-value). */
static void print_drops(const onp_chain_divergence *dv)
{
    int shown[5] = {-1, -1, -1, -1, -1};
    for (int k = 0; k < 5; k++)
        for (size_t i = 0; i < dv->n_points; i++) {
            const onp_chain_point *p = &dv->points[i];
            int taken = 0;
            for (int j = 0; j < k; j++) taken |= shown[j] == (int)i;
            if (taken || isnan(p->drop_db)) continue;
            if (shown[k] < 0 || p->drop_db > dv->points[shown[k]].drop_db) shown[k] = (int)i;
        }
    printf("  SQNR along the graph (fixture %d, %zu values): largest drops\n", dv->fixture,
           dv->n_points);
    for (int k = 0; k < 5 && shown[k] >= 0; k++) {
        const onp_chain_point *p = &dv->points[shown[k]];
        char a[16], b[16];
        printf("    %-32s %-12s sqnr %s dB, drop %s dB (export: %s)\n", p->value, p->op_type,
               onp_doc_short_num(p->sqnr_db, a, sizeof a),
               onp_doc_short_num(p->drop_db, b, sizeof b), p->orig_node);
    }
}

static void print_stage(const onp_chain_stage *s)
{
    printf("%-16s %-5s %-7s %s\n", s->name, onp_chain_prec_name(s->prec),
           onp_chain_status_name(s->status), s->model);
    if (s->msg[0]) printf("    %s\n", s->msg);
    for (size_t k = 0; k < s->n_out; k++) {
        const onp_chain_output *o = &s->outs[k];
        char a[16], b[16], c[16], d[16];
        printf("  %-24s %-7s max|diff| %-9s rel %-9s envelope %-9s sqnr %s dB%s%s\n", o->name,
               o->within ? "within" : "beyond", onp_doc_short_num(o->max_abs, a, sizeof a),
               onp_doc_short_num(o->max_rel, b, sizeof b),
               onp_doc_short_num(o->envelope_max, c, sizeof c),
               onp_doc_short_num(o->sqnr_db, d, sizeof d), o->why ? ": " : "",
               o->why ? o->why : "");
    }
    const onp_chain_divergence *dv = &s->div;
    if (dv->points) print_drops(dv);
    if (dv->found) {
        char l[16];
        printf(
            "  first divergent value (fixture %d, limit %s relative; %zu values compared, of %zu "
            "named alike and %zu matched by value):\n",
            dv->fixture, onp_doc_short_num(dv->limit, l, sizeof l), dv->n_compared, dv->n_common,
            dv->n_by_value);
        print_point("value", &dv->first);
        print_group(dv);
        for (size_t i = 0; i < dv->n_modules; i++)
            printf("%s%s", i ? ", " : "             module: ", dv->modules[i]);
        if (dv->n_modules) printf("\n");
        if (dv->input.value[0]) print_point("input", &dv->input);
    } else if (dv->note[0]) {
        printf("  first divergent value: none found: %s\n", dv->note);
    }
    if (s->fix[0]) printf("  cause: %s — fix: %s\n", onp_cause_name(s->cause), s->fix);
}

static void print_text(const onp_chain *c)
{
    const char *ref = onp_noisebook_reference(onp_bundle_noise(c->bundle));
    printf("chain: %s (%zu stages, noise reference: %s)\n",
           onp_bundle_dir(c->bundle) ? onp_bundle_dir(c->bundle) : onp_bundle_model_path(c->bundle),
           c->n, ref ? ref : "none");
    for (size_t i = 0; i < c->n; i++) print_stage(&c->stages[i]);
    if (c->first_beyond >= 0)
        printf("verdict: %s — first stage not as accurate as its precision allows: %s\n",
               onp_run_verdict_name(c->verdict), c->stages[c->first_beyond].name);
    else
        printf("verdict: %s — every stage as accurate as its precision allows\n",
               onp_run_verdict_name(c->verdict));
}

int cmd_chain(int argc, char **argv)
{
    opts *o = calloc(1, sizeof *o);
    if (!o) return cli_usage_error(argv[0], "out of memory");
    if (parse_args(argc, argv, o)) {
        free(o);
        return EXIT_USAGE;
    }
    onp_bundle_spec where = {.bundle = o->bundle};
    onp_chain c;
    onp_error e;
    onp_error_clear(&e);
    int rc;
    if (onp_chain_run(&c, &where, &o->args, o->chain.st, o->chain.n, o->chain.per_value, &e)) {
        rc = cli_report(&e);
    } else {
        if (o->fmt == FMT_JSON)
            report_print_json(onp_doc_chain(&c, &o->args.run));
        else
            print_text(&c);
        rc = onp_run_exit_code(c.verdict);
    }
    onp_chain_release(&c);
    free(o);
    return rc;
}
