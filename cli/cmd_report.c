/*
 * cmd_report.c — `onnxparity report DOC.json... --html FILE`: one
 * self-contained HTML page (no network, no external CSS/JS/fonts) from the
 * JSON documents of check, bisect, diagnose, sweep and gate (docs/report.md).
 * A document is read strictly (infile.h) and its members are checked
 * against its schema's types before anything renders (onp_jspec_of): a
 * member of the wrong type is exit 2 naming the file and its path, no page.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "html.h"
#include "infile.h"
#include "onnxparity/adequacy.h"
#include "onnxparity/buf.h"
#include "onnxparity/causes.h"
#include "onnxparity/gate.h"
#include "onnxparity/json.h"
#include "onnxparity/jspec.h"
#include "report.h"

#define MAX_DOCS 256
#define MAX_SERIES 64

/* The documents a page renders.  How to add one: an enum entry, its name and
 * schema id below, a section function, and its case in render(). */
typedef enum { DOC_CHECK, DOC_BISECT, DOC_DIAGNOSE, DOC_SWEEP, DOC_GATE, DOC_COUNT } doc_kind;

static const char *const kind_names[] = {"check", "bisect", "diagnose", "sweep", "gate"};
static const char *const schemas[] = {"onnxparity.check/1", "onnxparity.bisect/1",
                                      "onnxparity.diagnose/1", "onnxparity.sweep/1",
                                      "onnxparity.gate/1"};
_Static_assert(sizeof kind_names / sizeof kind_names[0] == DOC_COUNT, "a name per kind");
_Static_assert(sizeof schemas / sizeof schemas[0] == DOC_COUNT, "a schema per kind");

/* The kind of a document by its schema id; DOC_COUNT when none. */
static doc_kind kind_of(const char *schema)
{
    size_t k = 0;
    while (k < DOC_COUNT && !(schema && !strcmp(schema, schemas[k]))) k++;
    return (doc_kind)k;
}

typedef struct doc {
    const char *path;
    doc_kind kind;
    cJSON *root;
} doc;

/* ---- reading members (unknown members are ignored) --------------------- */

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A number, or the strings "nan", "inf", "-inf" (onp_json_real); 0 when
 * absent.  A document built in memory (check --html) holds its numbers as
 * raw text (report_num writes them exactly), read back here. */
static int numv(const cJSON *v, double *out)
{
    if (cJSON_IsRaw(v) && v->valuestring) { /* report_num's exact form, in a document built here */
        char *end;
        *out = strtod(v->valuestring, &end);
        return end != v->valuestring && !*end;
    }
    return !onp_json_real(v, out);
}

static void put_num_member(onp_buf *b, const cJSON *o, const char *k)
{
    double v;
    if (numv(get(o, k), &v))
        html_num(b, v);
    else
        html_put(b, "\xE2\x80\x94"); /* em dash */
}

/* Any scalar or array of scalars as escaped text. */
static void put_value(onp_buf *b, const cJSON *v)
{
    double d;
    if (cJSON_IsString(v))
        html_escape(b, v->valuestring);
    else if (numv(v, &d))
        html_num(b, d);
    else if (cJSON_IsBool(v))
        html_put(b, cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsArray(v)) {
        html_put(b, "[");
        const cJSON *c;
        int first = 1;
        cJSON_ArrayForEach(c, v)
        {
            if (!first) html_put(b, ", ");
            first = 0;
            put_value(b, c);
        }
        html_put(b, "]");
    } else if (cJSON_IsNull(v) || !v)
        html_put(b, "\xE2\x80\x94");
    else
        html_put(b, "{\xE2\x80\xA6}");
}

/* A document's verdict (or a fixture's status) as a CSS class: the name of
 * the run verdict it names (run.h, onp_run_verdict_of_doc), "unknown" when
 * it names none. */
static const char *verdict_class(const char *name)
{
    onp_run_verdict v;
    return onp_run_verdict_of_doc(name, &v) ? "unknown" : onp_run_verdict_name(v);
}

/* The class of a row whose member "pass" says whether it passed. */
static const char *pass_class(const cJSON *o)
{
    return cJSON_IsTrue(get(o, "pass")) ? "pass" : "fail";
}

static void badge(onp_buf *b, const char *verdict)
{
    html_printf(b, "<span class=\"badge %s\">", verdict_class(verdict));
    html_escape(b, verdict ? verdict : "unknown");
    html_put(b, "</span>");
}

/* One column of a table of members: the member shown, and how: "num" (a
 * number for people, right-aligned), "name" (monospace), NULL (text). */
typedef struct column {
    const char *member;
    const char *cls;
} column;

/* The cells of one row: each column's member of `o` (a dash when absent). */
static void member_cells(onp_buf *b, const cJSON *o, const column *cols, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (cols[k].cls)
            html_printf(b, "<td class=\"%s\">", cols[k].cls);
        else
            html_put(b, "<td>");
        if (cols[k].cls && !strcmp(cols[k].cls, "num"))
            put_num_member(b, o, cols[k].member);
        else
            put_value(b, get(o, cols[k].member));
        html_put(b, "</td>");
    }
}

/* ---- sections ---------------------------------------------------------- */

static void environment(onp_buf *b, const cJSON *env)
{
    if (!cJSON_IsObject(env)) return;
    html_put(b, "<details><summary>environment</summary><table class=\"env\">\n");
    const cJSON *c;
    cJSON_ArrayForEach(c, env)
    {
        html_put(b, "<tr><th>");
        html_escape(b, c->string);
        html_put(b, "</th><td>");
        put_value(b, c);
        html_put(b, "</td></tr>\n");
    }
    html_put(b, "</table></details>\n");
}

static void causes(onp_buf *b, const cJSON *list)
{
    if (!cJSON_IsArray(list)) return;
    html_put(b, "<h3>Causes</h3>\n");
    if (!cJSON_GetArraySize(list)) {
        html_put(b, "<p>No cause found.</p>\n");
        return;
    }
    html_put(b, "<table class=\"causes\"><tr><th>cause</th><th>confidence</th><th>node</th>"
                "<th>evidence</th><th>fix</th></tr>\n");
    const cJSON *c;
    cJSON_ArrayForEach(c, list)
    {
        const char *conf = str(c, "confidence");
        onp_confidence cf; /* its class: an unknown confidence shows as low */
        html_put(b, "<tr><td class=\"id\">");
        html_escape(b, str(c, "id"));
        html_put(b, "</td><td class=\"cf\"><span class=\"conf ");
        html_put(b, onp_confidence_from_name(conf, &cf) ? "low" : onp_confidence_name(cf));
        html_put(b, "\">");
        html_escape(b, conf ? conf : "?");
        html_put(b, "</span></td><td class=\"name\">");
        put_value(b, get(c, "node"));
        html_put(b, "</td><td><ul>");
        const cJSON *ev;
        cJSON_ArrayForEach(ev, get(c, "evidence"))
        {
            html_put(b, "<li>");
            put_value(b, ev);
            html_put(b, "</li>");
        }
        html_put(b, "</ul></td><td>");
        html_escape(b, str(c, "fix"));
        html_put(b, "</td></tr>\n");
    }
    html_put(b, "</table>\n");
}

/* The first divergent node, whether it owns its error (bisect's rerun of
 * the node alone on the reference inputs), the reference bisect compared
 * against, and whether the instrumented model reproduced the mismatch.
 * `root` is the document (bisect keeps reference and reproduction there). */
static void first_divergent(onp_buf *b, const cJSON *root, const cJSON *fd)
{
    if (!cJSON_IsObject(fd)) return;
    html_put(b, "<h3>First divergent node</h3>\n<table class=\"kv\">\n");
    static const char *const keys[] = {"node",    "op_type", "output",  "module",
                                       "max_abs", "max_rel", "fixture", "inputs_agree"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const cJSON *v = get(fd, keys[k]);
        if (!v) continue;
        html_printf(b, "<tr><th>%s</th><td class=\"name\">", keys[k]);
        put_value(b, v);
        html_put(b, "</td></tr>\n");
    }
    const cJSON *ref = get(fd, "reference") ? get(fd, "reference") : get(root, "reference");
    if (cJSON_IsString(ref)) {
        html_put(b, "<tr><th>reference</th><td>");
        html_escape(b, ref->valuestring);
        html_put(b, "</td></tr>\n");
    }
    const cJSON *loc = get(fd, "local");
    const char *verdict = cJSON_IsString(loc) ? loc->valuestring : str(loc, "verdict");
    if (verdict) {
        html_put(b, "<tr><th>alone on its inputs</th><td>");
        html_escape(b, verdict);
        if (cJSON_IsObject(loc)) {
            html_put(b, !strcmp(verdict, "local") ? " (the node owns the error: max_abs "
                                                  : " (its inputs carry the error: max_abs ");
            put_value(b, get(loc, "max_abs"));
            double mm;
            if (numv(get(loc, "mismatches"), &mm) && mm >= 0 && mm < 9e15)
                html_printf(b, ", mismatches %.0f", mm);
            html_put(b, ")");
        }
        html_put(b, "</td></tr>\n");
    }
    html_put(b, "</table>\n");
    const cJSON *rep = get(root, "instrumented_reproduces");
    if (cJSON_IsFalse(rep)) {
        html_put(b, "<p class=\"err\">The instrumented model (every intermediate exposed) does "
                    "not reproduce the mismatch of the plain model; fallback: ");
        html_escape(b, str(root, "fallback") ? str(root, "fallback") : "none");
        html_put(b, "</p>\n");
    } else if (cJSON_IsTrue(rep)) {
        html_put(b, "<p>The instrumented model reproduces the mismatch of the plain model.</p>\n");
    }
}

static int hist_of(const cJSON *o, double h[12])
{
    const cJSON *arr = get(o, "histogram");
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != 12) return 0;
    for (int k = 0; k < 12; k++)
        if (!numv(cJSON_GetArrayItem(arr, k), &h[k])) h[k] = 0;
    return 1;
}

/* Issue 19: the flip rate's bound (summary.topk) and the fixture adequacy
 * report (adequacy), when the check document has them. */
static void agreement_adequacy(onp_buf *b, const cJSON *root)
{
    const cJSON *t = get(get(root, "summary"), "topk");
    double up, conf;
    if (t && numv(get(t, "flip_rate_upper"), &up) && numv(get(t, "confidence"), &conf)) {
        html_put(b, "<p class=\"summary\">top-1 agreement ");
        put_value(b, get(t, "top1_agree"));
        html_put(b, "/");
        put_value(b, get(t, "rows"));
        html_put(b, " samples; flip rate at most ");
        html_num(b, up);
        html_put(b, " at ");
        html_num(b, 100 * conf);
        html_put(b, "% confidence (Clopper-Pearson)</p>\n");
    }
    const cJSON *a = get(root, "adequacy");
    if (!cJSON_IsObject(a)) return;
    const char *v = str(a, "verdict");
    onp_adequacy_verdict av;
    html_printf(b, "<h3>Fixture adequacy: <span class=\"%s\">",
                !onp_adequacy_verdict_from_name(v, &av) && av == ONP_ADEQUACY_ADEQUATE ? "pass"
                                                                                       : "fail");
    html_escape(b, v);
    html_put(b, "</span></h3>\n<p>");
    put_value(b, get(a, "samples"));
    html_put(b, " samples in ");
    put_value(b, get(a, "fixtures"));
    html_put(b, " fixtures, ");
    put_value(b, get(a, "shape_groups"));
    html_put(b, " shape group(s), ");
    put_value(b, get(a, "near_boundary"));
    html_put(b, " near a decision boundary</p>\n<ul>\n");
    const cJSON *f;
    cJSON_ArrayForEach(f, get(a, "flags"))
    {
        html_put(b, "<li>");
        html_escape(b, str(f, "level"));
        html_put(b, " <b>");
        html_escape(b, str(f, "id"));
        html_put(b, "</b>: ");
        html_escape(b, str(f, "message"));
        html_put(b, "</li>\n");
    }
    html_put(b, "</ul>\n");
}

/* The fixtures x outputs table and the error histograms per output, from a
 * document's "fixtures" (check's; gate's carries the same). */
static void fixtures_part(onp_buf *b, const cJSON *root)
{
    html_put(b, "<h3>Fixtures \xC3\x97 outputs</h3>\n<table class=\"metrics\"><tr><th>fixture</th>"
                "<th>status</th><th>output</th><th>pass</th><th>dtype</th><th>shape</th>"
                "<th>max_abs</th><th>max_rel</th><th>mismatches</th><th>count</th>"
                "<th>cosine</th><th>needed_rtol</th><th>needed_atol</th><th>note</th></tr>\n");
    const char *names[MAX_SERIES];
    double hists[MAX_SERIES][12];
    size_t nh = 0;
    const cJSON *fx;
    cJSON_ArrayForEach(fx, get(root, "fixtures"))
    {
        const cJSON *outs = get(fx, "outputs");
        const char *st = str(fx, "status");
        if (!cJSON_GetArraySize(outs)) {
            html_put(b, "<tr><td>");
            put_value(b, get(fx, "index"));
            html_printf(b, "</td><td class=\"%s\">", verdict_class(st));
            html_escape(b, st);
            html_put(b, "</td><td colspan=\"11\"></td><td>");
            html_escape(b, str(fx, "error"));
            html_put(b, "</td></tr>\n");
            continue;
        }
        const cJSON *o;
        cJSON_ArrayForEach(o, outs)
        {
            int pass = cJSON_IsTrue(get(o, "pass"));
            html_printf(b, "<tr class=\"%s\"><td>", pass_class(o));
            put_value(b, get(fx, "index"));
            html_printf(b, "</td><td class=\"%s\">", verdict_class(st));
            html_escape(b, st);
            html_put(b, "</td><td class=\"name\">");
            html_escape(b, str(o, "name"));
            html_put(b, pass ? "</td><td>\xE2\x9C\x93</td><td>" : "</td><td>\xE2\x9C\x97</td><td>");
            html_escape(b, str(o, "dtype"));
            html_put(b, "</td><td>");
            put_value(b, get(o, "shape"));
            static const char *const nums[] = {"max_abs", "max_rel",     "mismatches", "count",
                                               "cosine",  "needed_rtol", "needed_atol"};
            for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
                html_put(b, "</td><td class=\"num\">");
                put_num_member(b, o, nums[k]);
            }
            html_put(b, "</td><td>");
            html_escape(b, str(o, "note"));
            html_put(b, "</td></tr>\n");
            double h[12];
            const char *name = str(o, "name");
            if (!name || !hist_of(o, h)) continue;
            size_t s = 0;
            while (s < nh && strcmp(names[s], name)) s++;
            if (s == nh) {
                if (nh == MAX_SERIES) continue;
                names[nh] = name;
                memset(hists[nh], 0, sizeof hists[nh]);
                nh++;
            }
            for (int k = 0; k < 12; k++) hists[s][k] += h[k];
        }
    }
    html_put(b, "</table>\n");
    if (nh) {
        html_put(b, "<h3>Error histograms per output (all fixtures)</h3>\n<div class=\"row\">\n");
        for (size_t s = 0; s < nh; s++) html_svg_hist(b, names[s], hists[s]);
        html_put(b, "</div>\n");
    }
}

static void check_doc(onp_buf *b, const cJSON *root)
{
    agreement_adequacy(b, root);
    causes(b, get(root, "causes"));
    first_divergent(b, root, get(root, "first_divergent"));
    fixtures_part(b, root);
}

static void bisect_doc(onp_buf *b, const cJSON *root)
{
    const cJSON *sum = get(root, "summary");
    if (cJSON_IsObject(sum)) {
        html_put(b, "<p class=\"summary\">");
        const cJSON *c;
        int first = 1;
        cJSON_ArrayForEach(c, sum)
        {
            if (!first) html_put(b, " \xC2\xB7 ");
            first = 0;
            html_escape(b, c->string);
            html_put(b, " ");
            put_value(b, c);
        }
        html_put(b, "</p>\n");
    }
    if (str(root, "error")) {
        html_put(b, "<p class=\"err\">");
        html_escape(b, str(root, "error"));
        html_put(b, "</p>\n");
    }
    const cJSON *fd = get(root, "first_divergent");
    first_divergent(b, root, fd);
    const cJSON *curve = get(root, "curve");
    size_t n = cJSON_IsArray(curve) ? (size_t)cJSON_GetArraySize(curve) : 0;
    if (n) {
        html_point *p = calloc(n, sizeof *p);
        if (p) {
            size_t i = 0;
            const cJSON *c;
            cJSON_ArrayForEach(c, curve)
            {
                const char *lab = str(c, "value");
                p[i].label = lab ? lab : str(c, "node");
                if (!numv(get(c, "max_abs"), &p[i].y)) p[i].y = NAN;
                p[i].pass = cJSON_IsTrue(get(c, "pass"));
                i++;
            }
            double idx;
            long mark =
                numv(get(fd, "index"), &idx) && idx >= 0 && idx < (double)n ? (long)idx : -1;
            html_put(b, "<h3>Per-node error curve</h3>\n<div class=\"row\">\n");
            html_svg_curve(b, p, n, mark);
            html_put(b, "</div>\n");
            free(p);
        }
    }
    const cJSON *ins = get(fd, "inputs");
    if (cJSON_GetArraySize(ins)) {
        html_put(b, "<h3>Inputs of the first divergent node</h3>\n<table class=\"metrics\"><tr>"
                    "<th>input</th><th>source</th><th>max_abs</th><th>max_rel</th><th>pass</th>"
                    "</tr>\n");
        static const column cols[] = {{"name", "name"},
                                      {"source", NULL},
                                      {"max_abs", "num"},
                                      {"max_rel", "num"},
                                      {"pass", NULL}};
        const cJSON *c;
        cJSON_ArrayForEach(c, ins)
        {
            html_put(b, "<tr>");
            member_cells(b, c, cols, sizeof cols / sizeof cols[0]);
            html_put(b, "</tr>\n");
        }
        html_put(b, "</table>\n");
    }
    double h[12];
    if (hist_of(get(fd, "metrics"), h)) {
        html_put(b, "<h3>Error histogram of the first divergent value</h3>\n<div class=\"row\">\n");
        html_svg_hist(b, str(fd, "output") ? str(fd, "output") : "first divergent", h);
        html_put(b, "</div>\n");
    }
}

static void sweep_part(onp_buf *b, const cJSON *sw)
{
    if (!cJSON_IsObject(sw)) return;
    const cJSON *levels = get(sw, "levels");
    size_t nr = 0, nc = 0;
    const char *rows[32], *cols[MAX_SERIES];
    const cJSON *lv;
    cJSON_ArrayForEach(lv, levels)
    {
        if (nr == 32) break;
        const char *l = str(lv, "level");
        rows[nr++] = l ? l : "?";
        const cJSON *o;
        cJSON_ArrayForEach(o, get(lv, "outputs"))
        {
            const char *name = str(o, "name");
            if (!name) continue;
            size_t c = 0;
            while (c < nc && strcmp(cols[c], name)) c++;
            if (c == nc && nc < MAX_SERIES) cols[nc++] = name;
        }
    }
    html_put(b, "<h3>Sweep over optimization levels</h3>\n");
    if (nr && nc) {
        html_cell *cells = calloc(nr * nc, sizeof *cells);
        if (cells) {
            size_t r = 0;
            for (size_t k = 0; k < nr * nc; k++) cells[k].pass = -1;
            cJSON_ArrayForEach(lv, levels)
            {
                if (r == nr) break;
                const cJSON *o;
                cJSON_ArrayForEach(o, get(lv, "outputs"))
                {
                    const char *name = str(o, "name");
                    for (size_t c = 0; name && c < nc; c++)
                        if (!strcmp(cols[c], name)) {
                            html_cell *cell = &cells[r * nc + c];
                            if (!numv(get(o, "max_abs"), &cell->v)) cell->v = NAN;
                            cell->pass = cJSON_IsTrue(get(o, "pass"));
                        }
                }
                r++;
            }
            html_put(b, "<div class=\"row\">\n");
            html_svg_heat(b, rows, nr, cols, nc, cells);
            html_put(b, "</div>\n");
            free(cells);
        }
    }
    html_put(b, "<table class=\"metrics\"><tr><th>level</th><th>ran</th><th>pass</th>"
                "<th>deterministic</th><th>note</th></tr>\n");
    cJSON_ArrayForEach(lv, levels)
    {
        html_put(b, "<tr><td>");
        html_escape(b, str(lv, "level"));
        html_put(b, "</td><td>");
        put_value(b, get(lv, "ran"));
        html_put(b, "</td><td>");
        put_value(b, get(lv, "pass"));
        html_put(b, "</td><td>");
        put_value(b, get(lv, "deterministic"));
        html_put(b, "</td><td>");
        if (str(lv, "error")) html_escape(b, str(lv, "error"));
        if (str(lv, "nondeterministic_output")) {
            html_put(b, "not reproducible: output ");
            html_escape(b, str(lv, "nondeterministic_output"));
        }
        html_put(b, "</td></tr>\n");
    }
    html_put(b, "</table>\n");
    const cJSON *os = get(sw, "optimizer_search");
    if (cJSON_IsObject(os)) {
        html_put(b, "<p>optimizer search: culprit ");
        put_value(b, get(os, "culprit"));
        html_put(b, ", sessions ");
        put_value(b, get(os, "sessions"));
        if (str(os, "note") && *str(os, "note")) {
            html_put(b, " \xE2\x80\x94 ");
            html_escape(b, str(os, "note"));
        }
        html_put(b, "</p>\n");
    }
}

static void diagnose_doc(onp_buf *b, const cJSON *root)
{
    causes(b, get(root, "causes"));
    first_divergent(b, root, get(root, "first_divergent"));
    const cJSON *probes = get(root, "probes");
    if (cJSON_IsObject(probes)) {
        html_put(b, "<h3>Probes</h3>\n<table class=\"kv\">\n");
        const cJSON *p;
        cJSON_ArrayForEach(p, probes)
        {
            html_put(b, "<tr><th>");
            html_escape(b, p->string);
            html_put(b, "</th><td>");
            const cJSON *c;
            int first = 1;
            cJSON_ArrayForEach(c, p)
            {
                if (!first) html_put(b, " \xC2\xB7 ");
                first = 0;
                html_escape(b, c->string);
                html_put(b, " ");
                put_value(b, c);
            }
            html_put(b, "</td></tr>\n");
        }
        html_put(b, "</table>\n");
    }
    sweep_part(b, get(root, "sweep"));
}

/* A gate result: every criterion judged (measured against its limit, pass
 * or regressed), the regressions, the environment against the recorded
 * one, then the causes and the first divergent node as check shows them. */
static void gate_doc(onp_buf *b, const cJSON *root)
{
    const cJSON *sum = get(root, "summary");
    html_put(b, "<p class=\"summary\">against ");
    html_escape(b, str(root, "criteria"));
    html_put(b, ": ");
    put_value(b, get(sum, "fixtures"));
    html_put(b, " fixtures, ");
    put_value(b, get(sum, "outputs"));
    html_put(b, " outputs, ");
    put_value(b, get(sum, "regressions"));
    html_put(b, " regression(s)</p>\n");
    const cJSON *c, *checks = get(root, "checks");
    if (cJSON_GetArraySize(checks)) {
        html_put(b, "<h3>Criteria</h3>\n<table class=\"metrics\" id=\"criteria\"><tr>"
                    "<th>output</th><th>check</th><th>measured (worst)</th><th>limit</th>"
                    "<th>margin</th><th>result</th></tr>\n");
        cJSON_ArrayForEach(c, checks)
        {
            const char *bound = str(c, "bound");
            static const column cols[] = {{"output", "name"}, {"check", NULL}, {"measured", "num"}};
            html_printf(b, "<tr class=\"%s\">", pass_class(c));
            member_cells(b, c, cols, sizeof cols / sizeof cols[0]);
            html_put(b, bound && !strcmp(bound, "min") ? "<td class=\"num\">\xE2\x89\xA5 "
                                                       : "<td class=\"num\">\xE2\x89\xA4 ");
            put_num_member(b, c, "limit");
            html_put(b, "</td><td class=\"num\">"); /* the ratio to the limit: "x2.4" */
            if (get(c, "margin") && !cJSON_IsNull(get(c, "margin"))) {
                html_put(b, "\xC3\x97");
                put_num_member(b, c, "margin");
            }
            html_printf(b, "</td><td class=\"%s\">%s</td></tr>\n", pass_class(c),
                        cJSON_IsTrue(get(c, "pass")) ? "pass" : "regressed");
        }
        html_put(b, "</table>\n");
    }
    const cJSON *regs = get(root, "regressions");
    if (cJSON_GetArraySize(regs)) {
        html_put(b, "<h3>Regressions</h3>\n<table class=\"metrics\" id=\"regressions\"><tr>"
                    "<th>fixture</th><th>output</th><th>check</th><th>value</th><th>limit</th>"
                    "<th>message</th></tr>\n");
        static const column cols[] = {{"fixture", NULL}, {"output", "name"}, {"check", NULL},
                                      {"value", "num"},  {"limit", "num"},   {"message", NULL}};
        cJSON_ArrayForEach(c, regs)
        {
            html_put(b, "<tr class=\"fail\">");
            member_cells(b, c, cols, sizeof cols / sizeof cols[0]);
            html_put(b, "</tr>\n");
        }
        html_put(b, "</table>\n");
    }
    html_put(b, "<h3>Environment against the criteria</h3>\n");
    if (cJSON_IsFalse(get(root, "environment_recorded")))
        html_put(b, "<p>The criteria record no environment: nothing compared.</p>\n");
    const cJSON *drift = get(root, "environment_drift");
    if (!cJSON_GetArraySize(drift)) {
        if (!cJSON_IsFalse(get(root, "environment_recorded")))
            html_put(b, "<p>Unchanged since the criteria were recorded.</p>\n");
    } else {
        html_put(b, "<p>policy <code>--env-drift ");
        html_escape(b, str(root, "env_drift_policy"));
        html_put(b, "</code></p>\n<table class=\"metrics\" id=\"drift\"><tr><th>field</th>"
                    "<th>at record time</th><th>now</th><th>effect</th></tr>\n");
        static const column cols[] = {
            {"field", NULL}, {"recorded", "name"}, {"current", "name"}, {"effect", NULL}};
        cJSON_ArrayForEach(c, drift)
        {
            const char *eff = str(c, "effect");
            onp_drift_effect f;
            html_printf(b, "<tr class=\"%s\">",
                        !onp_drift_effect_from_name(eff, &f) && f == ONP_DRIFT_EFFECT_FAILURE
                            ? "fail"
                            : "pass");
            member_cells(b, c, cols, sizeof cols / sizeof cols[0]);
            html_put(b, "</tr>\n");
        }
        html_put(b, "</table>\n");
    }
    causes(b, get(root, "causes"));
    first_divergent(b, root, get(root, "first_divergent"));
    if (get(root, "fixtures")) fixtures_part(b, root); /* the same plots as check's page */
}

static const char css[] =
    "body{font-family:'DejaVu Sans',sans-serif;margin:24px;color:#212121;background:#fafafa}"
    "h1{font-size:20px}h2{margin-top:36px;border-bottom:2px solid #ccc}"
    ".verdict{font-size:56px;font-weight:bold;padding:16px 28px;border-radius:8px;color:#fff;"
    "display:inline-block}"
    ".verdict.pass{background:#2e7d32}.verdict.fail{background:#c62828}"
    ".verdict.error{background:#6a1b9a}.verdict.unknown{background:#616161}"
    ".badge{padding:2px 8px;border-radius:4px;color:#fff;font-weight:bold}"
    ".badge.pass{background:#2e7d32}.badge.fail{background:#c62828}"
    ".badge.error{background:#6a1b9a}.badge.unknown{background:#616161}"
    "table{border-collapse:collapse;margin:8px 0;background:#fff}"
    "td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;"
    "font-size:13px}"
    "td.num{text-align:right;font-family:'DejaVu Sans Mono',monospace}"
    "td.name{font-family:'DejaVu Sans Mono',monospace;word-break:break-all}"
    "table.causes{width:100%}table.causes td.name{min-width:14em}td.id{min-width:9em}"
    "td.cf{min-width:5em}table.causes td{overflow-wrap:anywhere}"
    "tr.fail td{background:#ffebee}td.fail{color:#c62828}td.pass{color:#2e7d32}"
    ".conf{padding:1px 6px;border-radius:3px;color:#fff}.conf.high{background:#c62828}"
    ".conf.medium{background:#ef6c00}.conf.low{background:#757575}"
    ".row{display:flex;flex-wrap:wrap;gap:12px}svg.plot{border:1px solid #ddd;background:#fff}"
    ".src{color:#555;font-size:13px}.err{color:#6a1b9a}";

static int render(onp_buf *b, const doc *docs, size_t n)
{
    static const char *const headline[] = {
        [ONP_RUN_PASS] = "PASS", [ONP_RUN_FAIL] = "FAIL", [ONP_RUN_ERROR] = "ERROR"};
    _Static_assert(sizeof headline / sizeof headline[0] == ONP_RUN_VERDICT_COUNT, "a word each");
    const char *verdicts[MAX_DOCS] = {NULL};
    for (size_t i = 0; i < n && i < MAX_DOCS; i++) verdicts[i] = str(docs[i].root, "verdict");
    onp_run_verdict worst = onp_run_verdict_of_docs(verdicts, n < MAX_DOCS ? n : MAX_DOCS);
    html_put(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<title>onnxparity report</title>\n<style>");
    html_put(b, css);
    html_put(b, "</style>\n</head>\n<body>\n<h1>onnxparity report</h1>\n");
    html_printf(b, "<div class=\"verdict %s\" id=\"verdict\">%s</div>\n",
                onp_run_verdict_name(worst), headline[worst]);
    html_put(b, "<ul class=\"docs\">\n");
    for (size_t i = 0; i < n; i++) {
        html_printf(b, "<li><a href=\"#doc%zu\">%s</a> ", i, kind_names[docs[i].kind]);
        html_escape(b, str(docs[i].root, "model"));
        html_put(b, ": ");
        badge(b, str(docs[i].root, "verdict"));
        html_put(b, "</li>\n");
    }
    html_put(b, "</ul>\n");
    for (size_t i = 0; i < n; i++) {
        const cJSON *root = docs[i].root;
        html_printf(b, "<section id=\"doc%zu\">\n<h2>%s: ", i, kind_names[docs[i].kind]);
        html_escape(b, str(root, "model"));
        html_put(b, " ");
        badge(b, str(root, "verdict"));
        html_put(b, "</h2>\n<p class=\"src\">from ");
        html_escape(b, docs[i].path);
        html_put(b, "</p>\n");
        switch (docs[i].kind) {
        case DOC_CHECK: check_doc(b, root); break;
        case DOC_BISECT: bisect_doc(b, root); break;
        case DOC_DIAGNOSE: diagnose_doc(b, root); break;
        case DOC_SWEEP: sweep_part(b, get(root, "sweep")); break;
        case DOC_GATE: gate_doc(b, root); break;
        case DOC_COUNT: break;
        }
        environment(b, get(root, "environment"));
        html_put(b, "</section>\n");
    }
    html_printf(b, "<footer class=\"src\">onnxparity %s</footer>\n</body>\n</html>\n", ONP_VERSION);
    return b->failed ? -1 : 0;
}

int report_html_write(const cJSON *root, const char *label, const char *path, onp_error *e)
{
    doc_kind k = kind_of(str(root, "schema"));
    if (k == DOC_COUNT)
        return onp_error_set(e, ONP_ERR_USAGE, path, NULL, -1, "no HTML page for this document");
    doc d = {label, k, (cJSON *)root};
    onp_buf b;
    onp_buf_init(&b, 0);
    int rc = render(&b, &d, 1) < 0 ? onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1,
                                                   "out of memory building the HTML page")
                                   : onp_buf_write_file(&b, path, e);
    onp_buf_free(&b);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    const char *out = NULL;
    const char *paths[MAX_DOCS];
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int m = cli_opt(argc, argv, &i, "html", &v);
        if (m < 0) return EXIT_USAGE;
        if (m) {
            out = v;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error(argv[0], "unknown option '%s'", argv[i]);
        if (n == MAX_DOCS) return cli_usage_error(argv[0], "more than %d documents", MAX_DOCS);
        paths[n++] = argv[i];
    }
    if (!n || !out) return cli_usage_error(argv[0], "usage: report DOC.json... --html FILE");
    doc docs[MAX_DOCS];
    onp_error e;
    memset(&e, 0, sizeof e);
    int rc = EXIT_PASS;
    size_t nd = 0;
    for (; nd < n; nd++) {
        docs[nd].path = paths[nd];
        docs[nd].root = /* bytes that are not JSON: a format error (exit 3), as in merge */
            cli_read_json(paths[nd], ONP_ERR_FORMAT, "not a JSON document of onnxparity", &e);
        if (!docs[nd].root) {
            rc = cli_report(&e);
            break;
        }
        const char *schema = str(docs[nd].root, "schema");
        char shown[68];
        snprintf(shown, sizeof shown, "%s", schema ? schema : "(none)");
        for (char *c = shown; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
        doc_kind k = kind_of(schema);
        if (k == DOC_COUNT) {
            onp_error_set(&e, ONP_ERR_INPUT, paths[nd], "schema", -1,
                          "unknown schema '%s' (report reads onnxparity.check/1, bisect/1, "
                          "diagnose/1, sweep/1, gate/1)",
                          shown);
            rc = cli_report(&e);
            nd++;
            break;
        }
        /* every member a section reads, of its schema's type (jspec.h) */
        if (onp_jspec_check(docs[nd].root, onp_jspec_of(schema), paths[nd], &e)) {
            rc = cli_report(&e);
            nd++;
            break;
        }
        docs[nd].kind = k;
    }
    if (rc == EXIT_PASS) {
        onp_buf b;
        onp_buf_init(&b, 0);
        if (render(&b, docs, nd) < 0)
            rc = cli_report((onp_error_set(&e, ONP_ERR_NOMEM, out, NULL, -1,
                                           "out of memory building the HTML page"),
                             &e));
        else if (onp_buf_write_file(&b, out, &e) < 0)
            rc = cli_report(&e);
        onp_buf_free(&b);
    }
    for (size_t i = 0; i < nd; i++) cJSON_Delete(docs[i].root);
    return rc;
}
