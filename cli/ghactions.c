/*
 * ghactions.c — GitHub Actions workflow commands and Markdown summaries
 * (ghactions.h).  stdio only; no knowledge of ONNX Runtime.
 */
#include "ghactions.h"

#include <errno.h>
#include <string.h>

#include "cli.h"
#include "onnxparity/outpath.h"

static void escape(FILE *to, const char *s, int property)
{
    for (; s && *s; s++) {
        if (*s == '%')
            fputs("%25", to);
        else if (*s == '\r')
            fputs("%0D", to);
        else if (*s == '\n')
            fputs("%0A", to);
        else if (property && *s == ':')
            fputs("%3A", to);
        else if (property && *s == ',')
            fputs("%2C", to);
        else
            fputc(*s, to);
    }
}

void gh_command(FILE *to, const char *level, const char *file, const char *title,
                const char *message)
{
    fprintf(to, "::%s ", level);
    if (file) {
        fputs("file=", to);
        escape(to, file, 1);
        fputc(',', to);
    }
    fputs("title=", to);
    escape(to, title, 1);
    fputs("::", to);
    escape(to, message, 0);
    fputc('\n', to);
}

void gh_causes_commands(FILE *to, const onp_causes *cs, const char *model)
{
    for (size_t i = 0; cs && i < cs->n; i++) {
        const onp_cause_item *c = &cs->items[cs->order[i]];
        char title[400], msg[2000];
        snprintf(title, sizeof title, "onnxparity cause: %s (%s confidence)%s%s",
                 onp_cause_name(c->id), onp_confidence_name(c->confidence),
                 c->node[0] ? " at " : "", c->node);
        snprintf(msg, sizeof msg, "%s\nfix: %s", c->n_evidence ? c->evidence[0] : "", c->fix);
        gh_command(to, "error", model, title, msg);
    }
}

void gh_md_text(FILE *to, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", to);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', to);
        else if (*s == '<')
            fputs("&lt;", to);
        else
            fputc(*s, to);
    }
}

void gh_md_causes(FILE *to, const onp_causes *cs)
{
    if (!cs || !cs->n) return;
    fputs("\n**Causes**, most likely first:\n\n", to);
    for (size_t i = 0; i < cs->n; i++) {
        const onp_cause_item *c = &cs->items[cs->order[i]];
        fprintf(to, "- **%s** (%s confidence)", onp_cause_name(c->id),
                onp_confidence_name(c->confidence));
        if (c->node[0]) {
            fputs(" at `", to);
            gh_md_text(to, c->node);
            fputc('`', to);
        }
        fputs(": ", to);
        gh_md_text(to, c->n_evidence ? c->evidence[0] : "");
        fputs(" — fix: ", to);
        gh_md_text(to, c->fix);
        fputc('\n', to);
    }
}

int gh_summary_open(const char *path, FILE **out)
{
    onp_error e;
    onp_error_clear(&e);
    *out = NULL;
    if (onp_out_check(path, &e)) return cli_report(&e);
    *out = fopen(path, "a");
    if (*out) return 0;
    fprintf(stderr, "onnxparity: %s: cannot open for appending: %s\n", path, strerror(errno));
    return EXIT_IO;
}
