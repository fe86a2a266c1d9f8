/*
 * report.c — printing comparison results (report.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "html.h"
#include "onnxparity/doc.h"
#include "report.h"
#include "onnxparity/utf8.h"

const char *report_verdict_word(onp_run_verdict v)
{
    static const char *const words[] = {
        [ONP_RUN_PASS] = "pass", [ONP_RUN_FAIL] = "FAIL", [ONP_RUN_ERROR] = "ERROR"};
    _Static_assert(sizeof words / sizeof words[0] == ONP_RUN_VERDICT_COUNT, "a word per verdict");
    return (unsigned)v < ONP_RUN_VERDICT_COUNT ? words[v] : "?";
}

void report_latent_text(const onp_causes *cs, const onp_lint_result *lint, const char *lint_arg)
{
    /* the TracerWarnings alone: worth a line while they are nowhere else; once
     * causes are listed, the ones that matter are among them (ONP301) */
    if (!cs->n_latent_total && (!lint->tracer_warnings || cs->n)) return;
    char q[4200];
    printf("latent   %zu warning(s) explain no failure (risks, not causes)", cs->n_latent_total);
    for (size_t i = 0; i < cs->n_latent && i < 3; i++) {
        const onp_lint_finding *f = cs->latent[i].finding;
        printf("%s %s%s%s", i ? "," : ":", f->rule->id, f->loc.name && f->loc.name[0] ? " at " : "",
               f->loc.name ? f->loc.name : "");
    }
    if (cs->n_latent_total > 3) printf(", ...");
    if (lint->tracer_warnings)
        printf("; %zu TracerWarning(s) recorded at export", lint->tracer_warnings);
    printf("; onnxparity lint %s lists them\n", onp_shell_quote(lint_arg, q, sizeof q));
}

const char *report_fmt(double v, char *buf, size_t n)
{
    return onp_doc_short_num(v, buf, n);
}

void report_json_puts(const char *txt, FILE *f)
{
    fputs(txt, f);
    fputc('\n', f);
}

void report_print_json(cJSON *root)
{
    char *txt = onp_doc_print(root);
    if (txt) report_json_puts(txt, stdout);
    free(txt);
    cJSON_Delete(root);
}

int report_emit(cJSON *root, int json, const char *html, const char *label)
{
    int rc = 0;
    if (html) {
        onp_error e;
        onp_error_clear(&e);
        if (report_html_write(root, label, html, &e)) rc = cli_report(&e);
    }
    if (json)
        report_print_json(root);
    else
        cJSON_Delete(root);
    return rc;
}

void report_causes_text(const onp_causes *cs, const char *target_args)
{
    for (size_t i = 0; cs && i < cs->n; i++) {
        const onp_cause_item *c = &cs->items[cs->order[i]];
        printf("cause    %s (%s confidence)%s%s: %s\n", onp_cause_name(c->id),
               onp_confidence_name(c->confidence), c->node[0] ? " at " : "", c->node,
               c->n_evidence ? c->evidence[0] : "");
        for (size_t k = 1; k < c->n_evidence && k < 4; k++)
            printf("         - %s\n", c->evidence[k]);
        printf("         fix: %s\n", c->fix);
        if (c->id == ONP_CAUSE_UNKNOWN && target_args) /* the fix, as a command to paste */
            printf("         run: onnxparity bisect %s\n", target_args);
    }
}
