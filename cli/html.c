/*
 * html.c — escaping, numbers and SVG plots for the HTML report (html.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnxparity/utf8.h"
#include "html.h"

void html_put(onp_buf *b, const char *s)
{
    onp_buf_append(b, s, strlen(s));
}

void html_printf(onp_buf *b, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    onp_buf_append(b, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

void html_escape(onp_buf *b, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    while (*s) {
        unsigned long cp;
        size_t n = onp_utf8_decode(s, &cp);
        if (!n) {
            html_put(b, "\xEF\xBF\xBD"); /* U+FFFD for one invalid byte */
            s++;
            continue;
        }
        switch (cp) {
        case '<': html_put(b, "&lt;"); break;
        case '>': html_put(b, "&gt;"); break;
        case '&': html_put(b, "&amp;"); break;
        case '"': html_put(b, "&quot;"); break;
        case '\'': html_put(b, "&#39;"); break;
        default:
            /* C0, DEL and C1 controls are dropped */
            if (!(cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))) onp_buf_append(b, s, n);
        }
        s += n;
    }
}

void html_num(onp_buf *b, double v)
{
    if (isnan(v))
        html_put(b, "NaN");
    else if (isinf(v))
        html_put(b, v > 0 ? "Inf" : "-Inf");
    else
        html_printf(b, "%.3g", v);
}

/* Colour ramp green - yellow - red for t in [0, 1], as "#rrggbb". */
static void ramp(double t, char out[8])
{
    static const int stops[3][3] = {{26, 152, 80}, {254, 224, 139}, {215, 48, 39}};
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    int k = t < 0.5 ? 0 : 1;
    double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    int c[3];
    for (int i = 0; i < 3; i++)
        c[i] = (int)lround(stops[k][i] + (stops[k + 1][i] - stops[k][i]) * u);
    snprintf(out, 8, "#%02x%02x%02x", c[0] & 255, c[1] & 255, c[2] & 255);
}

/* ---- per-node error curve ---------------------------------------------- */

enum { CW = 1000, CH = 360, CL = 80, CR = 30, CT = 40, CB = 60 };

static double curve_x(size_t i, size_t n)
{
    double pw = CW - CL - CR;
    return n <= 1 ? CL + pw / 2 : CL + pw * (double)i / (double)(n - 1);
}

/* The y of an error value on the curve's log axis [10^dlo, 10^dhi] (plot
 * height ph): non-finite at the top, zero (or below) at the bottom, the
 * rest clamped to the axis. */
static double curve_y(double v, double dlo, double dhi, double ph)
{
    if (!isfinite(v)) return CT;
    if (v <= 0) return CT + ph;
    double d = log10(v);
    if (d < dlo) d = dlo;
    if (d > dhi) d = dhi;
    return CT + (dhi - d) / (dhi - dlo) * ph;
}

void html_svg_curve(onp_buf *b, const html_point *p, size_t n, long mark)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(p[i].y) && p[i].y > 0) {
            if (p[i].y < lo) lo = p[i].y;
            if (p[i].y > hi) hi = p[i].y;
        }
    int dlo = -9, dhi = 0;
    if (hi > 0 && isfinite(hi)) {
        dlo = (int)floor(log10(lo));
        dhi = (int)ceil(log10(hi));
    }
    if (dlo < -60) dlo = -60;
    if (dhi > 60) dhi = 60;
    if (dhi <= dlo) dhi = dlo + 1;
    double ph = CH - CT - CB;
    int step = (dhi - dlo + 11) / 12;
    html_printf(b,
                "<svg class=\"plot curve\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
                CW, CH, CW, CH);
    html_printf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", CW, CH);
    html_printf(b,
                "<text x=\"%d\" y=\"22\" font-size=\"14\" font-weight=\"bold\">max_abs per value, "
                "in graph order (log scale)</text>\n",
                CL);
    for (int d = dlo; d <= dhi; d += step) {
        double y = CT + (double)(dhi - d) / (dhi - dlo) * ph;
        html_printf(b,
                    "<line class=\"tick\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                    "stroke=\"#dddddd\"/>\n<text x=\"%d\" y=\"%.1f\" font-size=\"11\" "
                    "text-anchor=\"end\">1e%d</text>\n",
                    CL, y, CW - CR, y, CL - 6, y + 4, d);
    }
    html_printf(b,
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n"
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n",
                CL, CT, CL, CH - CB, CL, CH - CB, CW - CR, CH - CB);
    html_printf(b,
                "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">value index "
                "(%zu values; 0 at the bottom edge, NaN/Inf at the top edge)</text>\n",
                (CL + CW - CR) / 2, CH - 15, n);
    size_t xstep = n > 10 ? (n + 9) / 10 : 1;
    for (size_t i = 0; i < n; i += xstep)
        html_printf(
            b, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%zu</text>\n",
            curve_x(i, n), CH - CB + 16, i);
    if (n) {
        html_put(b, "<polyline fill=\"none\" stroke=\"#1565c0\" stroke-width=\"2\" points=\"");
        for (size_t i = 0; i < n; i++) {
            double y = curve_y(p[i].y, dlo, dhi, ph);
            html_printf(b, "%s%.1f,%.1f", i ? " " : "", curve_x(i, n), y);
        }
        html_put(b, "\"/>\n");
    }
    double r = n > 300 ? 1.5 : 4;
    for (size_t i = 0; i < n; i++) {
        double v = p[i].y, y = curve_y(v, dlo, dhi, ph);
        html_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"><title>",
                    curve_x(i, n), y, r, p[i].pass ? "#2e7d32" : "#c62828");
        html_printf(b, "%zu: ", i);
        html_escape(b, p[i].label);
        html_put(b, ": max_abs ");
        html_num(b, v);
        html_put(b, p[i].pass ? " (pass)" : " (fail)");
        html_put(b, "</title></circle>\n");
    }
    if (mark >= 0 && (size_t)mark < n) {
        double x = curve_x((size_t)mark, n);
        html_printf(b,
                    "<line class=\"mark\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                    "stroke=\"#d32f2f\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
                    x, CT, x, CH - CB);
        int right = x > CW / 2;
        html_printf(b,
                    "<text class=\"mark\" x=\"%.1f\" y=\"%d\" font-size=\"12\" fill=\"#d32f2f\" "
                    "text-anchor=\"%s\">first divergent: ",
                    right ? x - 6 : x + 6, CH - CB - 8, right ? "end" : "start");
        html_escape(b, p[mark].label);
        html_put(b, "</text>\n");
    }
    html_put(b, "</svg>\n");
}

/* ---- histograms -------------------------------------------------------- */

/* The last `max` bytes of s or so, cut on a UTF-8 boundary, with an
 * ellipsis in front when cut (the full text goes into a <title>). */
static const char *tail(const char *s, size_t max)
{
    static char out[4 + 64];
    size_t n = s ? strlen(s) : 0;
    if (n <= max || max > 64) return s;
    const char *p = s + n - max;
    while ((*p & 0xC0) == 0x80) p++;
    snprintf(out, sizeof out, "\xE2\x80\xA6%s", p);
    return out;
}

/* A count: whole numbers in full, NaN/Inf spelled out. */
static void count(onp_buf *b, double v)
{
    if (isfinite(v))
        html_printf(b, "%.0f", v);
    else
        html_num(b, v);
}

enum { HW = 380, HH = 240, HL = 40, HR = 10, HT = 50, HB = 40 };

void html_svg_hist(onp_buf *b, const char *title, const double counts[12])
{
    static const char *labels[12] = {"0",    "1e-9", "1e-8", "1e-7", "1e-6", "1e-5",
                                     "1e-4", "1e-3", "0.01", "0.1",  "1",    ">1"};
    double max = 0, total = 0;
    for (int k = 0; k < 12; k++) {
        if (counts[k] > max) max = counts[k];
        total += counts[k];
    }
    double pw = HW - HL - HR, ph = HH - HT - HB, bw = pw / 12;
    html_printf(b,
                "<svg class=\"plot hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
                HW, HH, HW, HH);
    html_printf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", HW, HH);
    html_printf(b, "<text x=\"%d\" y=\"16\" font-size=\"13\" font-weight=\"bold\"><title>", HL);
    html_escape(b, title);
    html_put(b, "</title>");
    html_escape(b, tail(title, 36));
    html_put(b, "</text>\n");
    html_printf(
        b, "<text x=\"%d\" y=\"29\" font-size=\"10\" fill=\"#555555\">|actual - expected|, ", HL);
    count(b, total);
    html_put(b, " elements; bins up to the decade shown</text>\n");
    html_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n", HL,
                HH - HB, HW - HR, HH - HB);
    for (int k = 0; k < 12; k++) {
        double h = max > 0 ? counts[k] / max * ph : 0;
        if (counts[k] > 0 && h < 1) h = 1;
        char col[8];
        ramp(k / 11.0, col);
        double x = HL + k * bw;
        html_printf(b,
                    "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"%s\"><title>%s: ",
                    x + 2, HH - HB - h, bw - 4, h, col, labels[k]);
        count(b, counts[k]);
        html_put(b, "</title></rect>\n");
        if (counts[k] > 0) {
            html_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">",
                        x + bw / 2, HH - HB - h - 3);
            count(b, counts[k]);
            html_put(b, "</text>\n");
        }
        html_printf(b,
                    "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\">%s</text>\n",
                    x + bw / 2, HH - HB + 13, labels[k]);
    }
    html_put(b, "</svg>\n");
}

/* ---- heat map ---------------------------------------------------------- */

enum { MCW = 130, MCH = 36, ML = 110, MT = 70 };

void html_svg_heat(onp_buf *b, const char *const *rows, size_t nrows, const char *const *cols,
                   size_t ncols, const html_cell *cells)
{
    int w = ML + (int)ncols * MCW + 20 < 620 ? 620 : ML + (int)ncols * MCW + 20,
        h = MT + (int)nrows * MCH + 50;
    html_printf(b,
                "<svg class=\"plot heat\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
                w, h, w, h);
    html_printf(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h);
    html_printf(b, "<text x=\"10\" y=\"18\" font-size=\"13\" font-weight=\"bold\">max_abs per "
                   "optimization level and output (colour: log10, 1e-9 green to 1 red)</text>\n");
    for (size_t c = 0; c < ncols; c++) {
        html_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">",
                    ML + (int)c * MCW + MCW / 2, MT - 8);
        html_escape(b, cols[c]);
        html_put(b, "</text>\n");
    }
    for (size_t r = 0; r < nrows; r++) {
        int y = MT + (int)r * MCH;
        html_printf(b, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">", ML - 8,
                    y + MCH / 2 + 4);
        html_escape(b, rows[r]);
        html_put(b, "</text>\n");
        for (size_t c = 0; c < ncols; c++) {
            const html_cell *cell = &cells[r * ncols + c];
            int x = ML + (int)c * MCW;
            char col[8] = "#bdbdbd";
            if (cell->pass >= 0) {
                double v = cell->v, t;
                if (isnan(v) || isinf(v))
                    t = 1;
                else if (v <= 0)
                    t = 0;
                else
                    t = (log10(v) + 9) / 9;
                ramp(t, col);
            }
            html_printf(b,
                        "<rect class=\"cell\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                        "fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"2\"><title>",
                        x, y, MCW, MCH, col);
            html_escape(b, rows[r]);
            html_put(b, " / ");
            html_escape(b, cols[c]);
            html_put(b, ": ");
            if (cell->pass < 0)
                html_put(b, "no data");
            else
                html_num(b, cell->v);
            html_put(b, "</title></rect>\n");
            html_printf(b,
                        "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
                        "font-weight=\"bold\">",
                        x + MCW / 2, y + MCH / 2 + 4);
            if (cell->pass < 0) {
                html_put(b, "no data");
            } else {
                html_put(b, cell->pass ? "\xE2\x9C\x93 " : "\xE2\x9C\x97 "); /* check, cross */
                html_num(b, cell->v);
                html_put(b, cell->pass ? " pass" : " FAIL");
            }
            html_put(b, "</text>\n");
        }
    }
    /* legend: ten steps of the colour scale */
    int ly = MT + (int)nrows * MCH + 14;
    for (int k = 0; k <= 9; k++) {
        char col[8];
        ramp(k / 9.0, col);
        html_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"12\" fill=\"%s\"/>\n",
                    ML + k * 24, ly, col);
    }
    html_printf(b,
                "<text x=\"%d\" y=\"%d\" font-size=\"10\">1e-9</text><text x=\"%d\" y=\"%d\" "
                "font-size=\"10\" text-anchor=\"end\">1 or more, NaN, Inf</text>\n",
                ML, ly + 26, ML + 240, ly + 26);
    html_put(b, "</svg>\n");
}
