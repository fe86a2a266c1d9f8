/*
 * cmd_generate.c — `onnxparity generate BUNDLE [--steps N] [--strict]
 * [--rtol R] [--atol A] [--format text|json] [--quiet|--verbose]
 * [ORT options]`: the decode
 * loop of a decode bundle (docs/decode.md) run in ONNX Runtime and judged
 * token by token against eager (decode.h decides; docs/generate.md).
 * Parses (its own options by onp_decode_args_parse, the binding's
 * parser), calls onp_decode_run, formats: text lines or the
 * onnxparity.generate/1 document.  Exit codes as check's.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "onnxparity/decode.h"
#include "ortopts.h"
#include "report.h"

/* One line per prompt that did not agree, then the summary. */
static void print_text(const onp_decode_result *r)
{
    char a[32], b[32], c[32];
    printf("generate %s (%s, %s, %s): %zu prompts x %d steps, ONNX Runtime %s on %s\n", r->bundle,
           r->model_type, r->exporter, r->strategy, r->n_prompts, r->n_steps, r->ort_version,
           r->provider);
    for (size_t i = 0; i < r->n_prompts; i++) {
        const onp_decode_prompt *p = &r->prompts[i];
        if (p->cls == ONP_DECODE_AGREE) continue;
        printf("  prompt %zu (batch %d row %d, %d tokens): %s at step %d", i, p->batch, p->row,
               p->prompt_len, onp_decode_class_name(p->cls), p->first_step);
        if (p->first_step >= 0 && p->first_step != p->first_token_step &&
            p->steps[p->first_step].ort_token >= 0)
            printf(" (eager's token %lld, ORT's %lld)",
                   (long long)p->steps[p->first_step].eager_token,
                   (long long)p->steps[p->first_step].ort_token);
        if (p->first_token_step >= 0) {
            const onp_decode_step *st = &p->steps[p->first_token_step];
            printf("; token %lld where eager has %lld at step %d (margin %s%s, envelope %s)",
                   (long long)st->ort_token, (long long)st->eager_token, p->first_token_step,
                   st->margin_bound ? ">= " : "", report_fmt(st->margin, a, sizeof a),
                   report_fmt(st->envelope_max, b, sizeof b));
        }
        if (p->why[0]) printf("; %s", p->why);
        if (p->stop_step >= 0)
            printf("; at step %d %s stops at the EOS token where %s goes on", p->stop_step,
                   p->stop_ort ? "ORT" : "eager", p->stop_ort ? "eager" : "ORT");
        if (p->where == ONP_DECODE_WHERE_CACHE)
            printf("; first cache entry beyond its noise: layer %d %s at step %d", p->cache_layer,
                   p->cache_value ? "value" : "key", p->cache_step);
        else if (p->where == ONP_DECODE_WHERE_SETTING)
            printf("; a generation setting, no layer");
        else if (p->cls == ONP_DECODE_DEFECT && p->cache_judged)
            printf("; no cache entry beyond its noise (after the cache: the final norm or the "
                   "head)");
        putchar('\n');
    }
    printf("  logit error / envelope by step:");
    for (int t = 0; t < r->n_steps; t++) printf(" %s", report_fmt(r->step_ratio[t], c, sizeof c));
    putchar('\n');
    printf("%s: %zu agree, %zu near-tie, %zu defect; tokens %lld/%lld; prompts whose generation "
           "differs <= %s at %g%% confidence (%.2fs)\n",
           report_verdict_word(r->verdict), r->counts[ONP_DECODE_AGREE],
           r->counts[ONP_DECODE_NEAR_TIE], r->counts[ONP_DECODE_DEFECT], (long long)r->tokens_agree,
           (long long)r->tokens, report_fmt(r->agreement.flip_upper, a, sizeof a),
           100 * r->agreement.confidence, r->seconds);
    for (size_t k = 0; k < r->n_causes; k++)
        printf("  cause %s (%zu prompts): %s; fix: %s\n", r->causes[k].id, r->causes[k].prompts,
               r->causes[k].evidence, r->causes[k].fix);
    if (r->rate_exceeded) printf("  criterion: the bound passes --max-differ-rate\n");
    if (r->early)
        printf("  criterion: %zu prompt(s) diverge before --min-divergence-step\n", r->early);
}

/* Progress on stderr: only on a terminal or with --verbose (cli.h). */
static void progress(void *ctx, size_t k, size_t n, const char *dir)
{
    const int *verbose = ctx;
    fprintf(stderr, *verbose ? "generate: batch %zu/%zu %s\n" : "\rgenerate: batch %zu/%zu %s ", k,
            n, dir);
}

int cmd_generate(int argc, char **argv)
{
    int quiet = 0, verbose = 0;
    cli_ort ort_o;
    cli_ort_init(&ort_o);
    onp_decode_opts o;
    onp_decode_opts_init(&o);
    cli_format fmt = FMT_TEXT;
    const char *bundle = NULL, *v;
    onp_error e;
    onp_error_clear(&e);
    for (int i = 1; i < argc; i++) {
        /* generate's own options: the library's parser, as the binding's
         * (one set of limits, one message) */
        int r = onp_decode_args_parse(&o, argc, (const char *const *)argv, &i, &e);
        if (r < 0) return cli_report(&e);
        if (r) continue;
        if ((r = cli_ort_opt(&ort_o, argc, argv, &i)) < 0) return EXIT_USAGE;
        if (r) continue;
        if ((r = cli_opt(argc, argv, &i, "format", &v))) {
            if (r < 0 || cli_parse_format(argv[0], v, &fmt)) return EXIT_USAGE;
        } else if (cli_progress_opt(argv, i, &quiet, &verbose)) {
            continue;
        } else if (cli_target_arg(argv, i, "bundle", &bundle)) {
            return EXIT_USAGE;
        }
    }
    if (!bundle) return cli_usage_error(argv[0], "usage: onnxparity generate BUNDLE [--steps N]");
    o.ort_lib = ort_o.lib;
    o.session = ort_o.so;
    if (cli_progress_on(quiet, verbose)) {
        o.progress = progress;
        o.progress_ctx = &verbose;
    }
    onp_decode_result *r;
    int failed = onp_decode_run(bundle, &o, &r, &e);
    if (o.progress && !verbose) fprintf(stderr, "\r\033[K");
    if (failed) return cli_report(&e);
    if (fmt == FMT_JSON)
        report_print_json(onp_doc_generate(r));
    else
        print_text(r);
    int code = onp_run_exit_code(r->verdict);
    onp_decode_result_free(r);
    return code;
}
