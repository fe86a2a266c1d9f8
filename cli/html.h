/*
 * html.h — pieces of the self-contained HTML report (cmd_report.c): text
 * escaping, numbers, and the SVG plots the tool draws itself.  Everything
 * appends to an onp_buf; the output depends on the arguments only (no
 * clock, no locale-dependent formatting beyond "C" printf), so identical
 * inputs give identical bytes.
 */
#ifndef ONP_CLI_HTML_H
#define ONP_CLI_HTML_H

#include <stddef.h>

#include "onnxparity/buf.h"
#include "onnxparity/error.h"

/* Append s as it is (markup written by the tool). */
void html_put(onp_buf *b, const char *s);

/* Append printf output (markup written by the tool; never model names). */
void html_printf(onp_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Append text from a document (a model, node or tensor name, a message)
 * escaped for HTML text and attribute values: < > & " ' become entities,
 * control characters (C0, DEL, C1) are dropped, invalid UTF-8 bytes become
 * U+FFFD.  NULL appends nothing. */
void html_escape(onp_buf *b, const char *s);

/* A number for people: "%.3g", or "NaN", "Inf", "-Inf" spelled out. */
void html_num(onp_buf *b, double v);

/* One point of the per-node error curve. */
typedef struct html_point {
    const char *label; /* value name (escaped when written) */
    double y;          /* max_abs; 0, NaN and Inf are drawn at the edges */
    int pass;
} html_point;

/* The per-node error curve: max_abs per value in order on a log-scale y
 * axis with decade ticks; `mark` (-1: none) is the first divergent value. */
void html_svg_curve(onp_buf *b, const html_point *p, size_t n, long mark);

/* A histogram of |actual - expected| on the 12 fixed decades of
 * compare.md (bin 0 exactly 0, ..., bin 11 above 1). */
void html_svg_hist(onp_buf *b, const char *title, const double counts[12]);

/* A heat map: rows x cols cells, each with a value (log10 colour scale),
 * pass (1), fail (0) or absent (-1) mark. */
typedef struct html_cell {
    double v;
    int pass; /* 1 pass, 0 fail, -1 no data */
} html_cell;
void html_svg_heat(onp_buf *b, const char *const *rows, size_t nrows, const char *const *cols,
                   size_t ncols, const html_cell *cells);

/* The page `onnxparity report` writes, for one document a command built in
 * memory (the --html FILE of check, bisect, diagnose, sweep, gate and
 * merge); `label` is shown as its source.  Written atomically (no partial
 * file on error).  0, or -1 with e. */
struct cJSON;
int report_html_write(const struct cJSON *root, const char *label, const char *path, onp_error *e);

#endif
