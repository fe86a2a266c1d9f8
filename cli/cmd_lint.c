/*
 * cmd_lint.c — `onnxparity lint MODEL|TARGET [--format text|json|sarif]
 * [--list-rules]`.
 *
 * Runs the rules of include/onnxparity/lint.h over a model, or over a
 * bundle folder's model.onnx together with its parity.json when there is
 * one, and prints the findings as text, as a JSON document (schema
 * "onnxparity.lint/1") or as SARIF 2.1.0 for code-scanning tools.
 * `--list-rules` prints the rule table instead (in the same formats).
 * Exit 0 when no finding is an error, 1 when one is, 2 on bad usage, 3 when
 * the model or the manifest cannot be read or decoded.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "lintdoc.h"
#include "onnxparity/doc.h"
#include "report.h"
#include "onnxparity/buf.h"
#include "onnxparity/lint.h"
#include "onnxparity/model.h"

typedef enum { LINT_TEXT = 0, LINT_JSON, LINT_SARIF } lint_format;

static const char *const sarif_levels[] = {"note", "warning", "error"};

// --- text ---------------------------------------------------------------------------

static void where_text(const onp_lint_location *l, char *buf, size_t n)
{
    switch (l->kind) {
    case ONP_LINT_LOC_NODE:
        snprintf(buf, n, "node %" PRId64 "%s%s%s (%s)%s%s", l->index, l->name[0] ? " '" : "",
                 l->name, l->name[0] ? "'" : "", l->op_type, l->graph[0] ? " in " : "", l->graph);
        break;
    case ONP_LINT_LOC_INPUT:
    case ONP_LINT_LOC_OUTPUT:
        snprintf(buf, n, "%s '%s'", onp_lint_loc_kind_name(l->kind), l->name);
        break;
    case ONP_LINT_LOC_MODULE: snprintf(buf, n, "module '%s'", l->name); break;
    case ONP_LINT_LOC_SOURCE:
        if (l->line >= 0)
            snprintf(buf, n, "%s:%" PRId64, l->file, l->line);
        else
            snprintf(buf, n, "%s", l->file);
        break;
    default: snprintf(buf, n, "model"); break;
    }
}

static void print_text(const char *model, const char *manifest, const onp_lint_result *r)
{
    char where[2048];
    printf("%s", model);
    if (r->opset >= 0) printf(" (opset %" PRId64 ")", r->opset);
    if (manifest) printf(" with %s", manifest);
    printf("\n");
    for (size_t i = 0; i < r->n; i++) {
        const onp_lint_finding *f = &r->findings[i];
        where_text(&f->loc, where, sizeof where);
        printf("%-7s %s %s [%s] %s\n", onp_lint_severity_name(f->rule->severity), f->rule->id,
               f->rule->name, onp_cause_name(f->rule->cause), where);
        printf("        %s\n        fix: %s\n", f->message, f->rule->fix);
    }
    if (!r->n)
        printf("no findings\n");
    else
        printf("%zu finding%s: %zu error%s, %zu warning%s, %zu info\n", r->n, r->n == 1 ? "" : "s",
               r->counts[ONP_LINT_ERROR], r->counts[ONP_LINT_ERROR] == 1 ? "" : "s",
               r->counts[ONP_LINT_WARNING], r->counts[ONP_LINT_WARNING] == 1 ? "" : "s",
               r->counts[ONP_LINT_INFO]);
}

static void print_rules_text(void)
{
    for (size_t i = 0; i < onp_lint_rule_count(); i++) {
        const onp_lint_rule *r = onp_lint_rule_at(i);
        printf("%s  %-7s  %-19s  %s\n        %s\n        fix: %s\n", r->id,
               onp_lint_severity_name(r->severity), onp_cause_name(r->cause), r->name, r->summary,
               r->fix);
    }
}

// --- JSON ---------------------------------------------------------------------------

static cJSON *rule_json(const onp_lint_rule *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", r->id);
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "severity", onp_lint_severity_name(r->severity));
    cJSON_AddStringToObject(o, "cause", onp_cause_name(r->cause));
    cJSON_AddStringToObject(o, "summary", r->summary);
    cJSON_AddStringToObject(o, "fix", r->fix);
    return o;
}

static cJSON *doc_json(const char *model, const char *manifest, const onp_lint_result *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.lint/1");
    cJSON_AddStringToObject(root, "model", model);
    if (manifest)
        cJSON_AddStringToObject(root, "manifest", manifest);
    else
        cJSON_AddNullToObject(root, "manifest");
    if (r->opset >= 0)
        cJSON_AddNumberToObject(root, "opset", (double)r->opset);
    else
        cJSON_AddNullToObject(root, "opset");
    cJSON *arr = cJSON_AddArrayToObject(root, "findings");
    for (size_t i = 0; i < r->n; i++) {
        const onp_lint_finding *f = &r->findings[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "rule", f->rule->id);
        cJSON_AddStringToObject(o, "name", f->rule->name);
        cJSON_AddStringToObject(o, "severity", onp_lint_severity_name(f->rule->severity));
        cJSON_AddStringToObject(o, "cause", onp_cause_name(f->rule->cause));
        cJSON_AddItemToObject(o, "location", onp_doc_lint_location(&f->loc));
        cJSON_AddStringToObject(o, "message", f->message);
        cJSON_AddStringToObject(o, "fix", f->rule->fix);
        cJSON_AddItemToArray(arr, o);
    }
    cJSON *s = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(s, "findings", (double)r->n);
    cJSON_AddNumberToObject(s, "error", (double)r->counts[ONP_LINT_ERROR]);
    cJSON_AddNumberToObject(s, "warning", (double)r->counts[ONP_LINT_WARNING]);
    cJSON_AddNumberToObject(s, "info", (double)r->counts[ONP_LINT_INFO]);
    cJSON_AddStringToObject(s, "verdict", onp_run_verdict_name(onp_run_verdict_of_lint(r)));
    return root;
}

static cJSON *rules_json(void)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.lint-rules/1");
    cJSON *arr = cJSON_AddArrayToObject(root, "rules");
    for (size_t i = 0; i < onp_lint_rule_count(); i++)
        cJSON_AddItemToArray(arr, rule_json(onp_lint_rule_at(i)));
    return root;
}

// --- SARIF 2.1.0 --------------------------------------------------------------------

/* A file path as a URI reference: unreserved bytes and '/' kept, the rest
 * percent-encoded; absolute paths become file:// URIs, relative ones stay
 * relative (to SRCROOT, the working folder: sarif_doc declares it).
 * malloc'ed. */
static char *path_uri(const char *path)
{
    size_t n = strlen(path);
    char *u = malloc(3 * n + 8), *p = u;
    if (!u) return NULL;
    if (path[0] == '/') p += sprintf(p, "file://");
    for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
            strchr("-._~/", *s))
            *p++ = (char)*s;
        else
            p += sprintf(p, "%%%02X", *s);
    }
    *p = '\0';
    return u;
}

/* Where the documentation lives, as an absolute URI without the trailing
 * '/': $ONNXPARITY_DOCS_URL, else the build's ONP_DOCS_URL (the Makefile
 * sets file://<source tree>/docs; `make ONP_DOCS_URL=https://...` for a
 * published copy). */
static const char *docs_url(void)
{
#ifndef ONP_DOCS_URL
#define ONP_DOCS_URL "file:///usr/share/doc/onnxparity"
#endif
    const char *v = getenv("ONNXPARITY_DOCS_URL");
    return v && v[0] ? v : ONP_DOCS_URL;
}

static cJSON *sarif_rule(const onp_lint_rule *r)
{
    char help[2048];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", r->id);
    cJSON_AddStringToObject(o, "name", r->name);
    snprintf(help, sizeof help, "%s/lint.md#rules", docs_url());
    cJSON_AddStringToObject(o, "helpUri", help);
    cJSON_AddItemToObject(cJSON_AddObjectToObject(o, "shortDescription"), "text",
                          cJSON_CreateString(r->summary));
    cJSON_AddItemToObject(cJSON_AddObjectToObject(o, "help"), "text", cJSON_CreateString(r->fix));
    cJSON_AddItemToObject(cJSON_AddObjectToObject(o, "defaultConfiguration"), "level",
                          cJSON_CreateString(sarif_levels[r->severity]));
    cJSON *props = cJSON_AddObjectToObject(o, "properties");
    cJSON_AddStringToObject(props, "cause", onp_cause_name(r->cause));
    cJSON *tags = cJSON_AddArrayToObject(props, "tags");
    cJSON_AddItemToArray(tags, cJSON_CreateString(onp_cause_name(r->cause)));
    return o;
}

/* The artifact location of `path`: relative to SRCROOT (the working folder)
 * when the path is relative or lies below it, else an absolute file:// URI. */
static void sarif_artifact(cJSON *art, const char *path, const char *cwd)
{
    size_t n = cwd ? strlen(cwd) : 0;
    const char *rel = NULL;
    if (path[0] != '/')
        rel = path;
    else if (n > 1 && !strncmp(path, cwd, n) && path[n] == '/')
        rel = path + n + 1;
    char *u = path_uri(rel ? rel : path);
    cJSON_AddStringToObject(art, "uri", u ? u : "");
    if (rel) cJSON_AddStringToObject(art, "uriBaseId", "SRCROOT");
    free(u);
}

/* The bytes of model.onnx a finding is about: the NodeProto of a node of
 * the main graph, the ValueInfoProto of a graph input or output; the whole
 * file for anything else (a finding on the model, a subgraph node, a module
 * of the manifest).  Byte regions are SARIF's form for binary artifacts. */
static void sarif_region(cJSON *phys, const onp_lint_location *l, const onp_model *m)
{
    const onp_graph *g = m ? onp_model_graph(m) : NULL;
    uint64_t off = 0, len = 0;
    size_t file_n = 0;
    if (m) onp_model_bytes(m, &file_n);
    len = file_n;
    if (g && l->index >= 0 && (!l->graph || !l->graph[0])) {
        size_t i = (size_t)l->index;
        const onp_span *sp = l->kind == ONP_LINT_LOC_NODE && i < g->n_nodes     ? &g->nodes[i].raw
                             : l->kind == ONP_LINT_LOC_INPUT && i < g->n_inputs ? &g->inputs[i].raw
                             : l->kind == ONP_LINT_LOC_OUTPUT && i < g->n_outputs
                                 ? &g->outputs[i].raw
                                 : NULL;
        if (sp && sp->n) off = sp->off, len = sp->n;
    }
    cJSON *reg = cJSON_AddObjectToObject(phys, "region");
    cJSON_AddNumberToObject(reg, "byteOffset", (double)off);
    cJSON_AddNumberToObject(reg, "byteLength", (double)(len ? len : 1));
}

static cJSON *sarif_location(const onp_lint_location *l, const char *model, const onp_model *m,
                             const char *cwd)
{
    cJSON *loc = cJSON_CreateObject();
    cJSON *phys = cJSON_AddObjectToObject(loc, "physicalLocation");
    cJSON *art = cJSON_AddObjectToObject(phys, "artifactLocation");
    if (l->kind == ONP_LINT_LOC_SOURCE) {
        sarif_artifact(art, l->file, cwd);
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(phys, "region"), "startLine",
                                (double)(l->line >= 1 ? l->line : 1));
        return loc;
    }
    sarif_artifact(art, model, cwd);
    sarif_region(phys, l, m);
    const char *kind = NULL;
    switch (l->kind) {
    case ONP_LINT_LOC_NODE: kind = "function"; break;
    case ONP_LINT_LOC_INPUT: kind = "parameter"; break;
    case ONP_LINT_LOC_OUTPUT: kind = "returnType"; break;
    case ONP_LINT_LOC_MODULE: kind = "module"; break;
    default: return loc;
    }
    char name[1024], fq[2048];
    if (l->kind == ONP_LINT_LOC_NODE && !l->name[0])
        snprintf(name, sizeof name, "#%" PRId64 " (%s)", l->index, l->op_type);
    else
        snprintf(name, sizeof name, "%s", l->name);
    if (l->kind == ONP_LINT_LOC_NODE)
        snprintf(fq, sizeof fq, "%s%s%s", l->graph, l->graph[0] ? "/" : "", name);
    else
        snprintf(fq, sizeof fq, "%s:%s", onp_lint_loc_kind_name(l->kind), name);
    cJSON *ll = cJSON_CreateObject();
    cJSON_AddStringToObject(ll, "name", name);
    cJSON_AddStringToObject(ll, "fullyQualifiedName", fq);
    cJSON_AddStringToObject(ll, "kind", kind);
    if (l->index >= 0) /* SARIF's own "index" points into run.logicalLocations */
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(ll, "properties"), "graph_index",
                                (double)l->index);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(loc, "logicalLocations"), ll);
    return loc;
}

cJSON *lint_sarif_doc(const char *model, const onp_lint_result *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
    cJSON_AddStringToObject(root, "version", "2.1.0");
    cJSON *run = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(root, "runs"), run);
    cJSON *driver = cJSON_AddObjectToObject(cJSON_AddObjectToObject(run, "tool"), "driver");
    cJSON_AddStringToObject(driver, "name", "onnxparity");
    cJSON_AddStringToObject(driver, "version", ONP_VERSION);
    char info[2048];
    snprintf(info, sizeof info, "%s/lint.md", docs_url());
    cJSON_AddStringToObject(driver, "informationUri", info);
    cJSON *rules = cJSON_AddArrayToObject(driver, "rules");
    for (size_t i = 0; i < onp_lint_rule_count(); i++)
        cJSON_AddItemToArray(rules, sarif_rule(onp_lint_rule_at(i)));
    cJSON *results = cJSON_AddArrayToObject(run, "results");
    if (!model || !r) return root;
    /* relative URIs are relative to the working folder, declared as SRCROOT */
    char cwd[4096] = "", *base = NULL;
    if (getcwd(cwd, sizeof cwd - 1)) {
        char *cu = path_uri(cwd);
        if (cu && (base = malloc(strlen(cu) + 2))) sprintf(base, "%s/", cu);
        free(cu);
    }
    if (base) {
        cJSON *ob = cJSON_AddObjectToObject(run, "originalUriBaseIds");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(ob, "SRCROOT"), "uri", base);
        free(base);
    }
    onp_model *m = NULL;
    onp_error me;
    onp_error_clear(&me);
    if (onp_model_open(model, &m, &me)) m = NULL; /* no regions then: whole-file ones */
    cJSON *art = cJSON_CreateObject();
    sarif_artifact(cJSON_AddObjectToObject(art, "location"), model, cwd);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(run, "artifacts"), art);
    for (size_t i = 0; i < r->n; i++) {
        const onp_lint_finding *f = &r->findings[i];
        size_t rule_index = 0;
        while (rule_index < onp_lint_rule_count() && onp_lint_rule_at(rule_index) != f->rule)
            rule_index++;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "ruleId", f->rule->id);
        cJSON_AddNumberToObject(o, "ruleIndex", (double)rule_index);
        cJSON_AddStringToObject(o, "level", sarif_levels[f->rule->severity]);
        cJSON_AddItemToObject(cJSON_AddObjectToObject(o, "message"), "text",
                              cJSON_CreateString(f->message));
        cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "locations"),
                             sarif_location(&f->loc, model, m, cwd));
        cJSON *props = cJSON_AddObjectToObject(o, "properties");
        cJSON_AddStringToObject(props, "cause", onp_cause_name(f->rule->cause));
        cJSON_AddStringToObject(props, "fix", f->rule->fix);
        if (f->loc.kind == ONP_LINT_LOC_NODE) {
            cJSON_AddStringToObject(props, "op_type", f->loc.op_type);
            cJSON_AddNumberToObject(props, "node_index", (double)f->loc.index);
        }
        cJSON_AddItemToArray(results, o);
    }
    onp_model_close(m);
    return root;
}

int lint_sarif_write(const char *path, const char *model, const onp_lint_result *r)
{
    cJSON *doc = lint_sarif_doc(model, r);
    char *txt = doc ? onp_doc_print(doc) : NULL;
    cJSON_Delete(doc);
    onp_buf b;
    onp_error e;
    onp_error_clear(&e);
    onp_buf_init(&b, 0);
    int rc = 0;
    if (!txt || onp_buf_append(&b, txt, strlen(txt)) || onp_buf_append(&b, "\n", 1))
        rc = cli_report((onp_error_set(&e, ONP_ERR_NOMEM, path, NULL, -1,
                                       "out of memory building the SARIF document"),
                         &e));
    else if (onp_buf_write_file(&b, path, &e))
        rc = cli_report(&e);
    onp_buf_free(&b);
    free(txt);
    return rc;
}

// --- the command --------------------------------------------------------------------

static int emit(cJSON *doc)
{
    char *txt = doc ? onp_doc_print(doc) : NULL;
    cJSON_Delete(doc);
    if (!txt) {
        fprintf(stderr, "onnxparity lint: out of memory writing the report\n");
        return EXIT_IO;
    }
    report_json_puts(txt, stdout);
    free(txt);
    return 0;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

int cmd_lint(int argc, char **argv)
{
    const char *path = NULL, *v;
    lint_format fmt = LINT_TEXT;
    int list = 0;
    for (int i = 1; i < argc; i++) {
        int r = cli_opt(argc, argv, &i, "format", &v);
        if (r < 0) return EXIT_USAGE;
        if (r) {
            if (!strcmp(v, "text"))
                fmt = LINT_TEXT;
            else if (!strcmp(v, "json"))
                fmt = LINT_JSON;
            else if (!strcmp(v, "sarif"))
                fmt = LINT_SARIF;
            else
                return cli_usage_error(argv[0], "--format is text, json or sarif, not '%s'", v);
        } else if (cli_flag(argv, i, "list-rules")) {
            list = 1;
        } else if (cli_target_arg(argv, i, "model", &path)) {
            return EXIT_USAGE;
        }
    }
    if (list) {
        if (fmt == LINT_TEXT) {
            print_rules_text();
            return EXIT_PASS;
        }
        return emit(fmt == LINT_JSON ? rules_json() : lint_sarif_doc(NULL, NULL)) ? EXIT_IO
                                                                                  : EXIT_PASS;
    }
    if (!path)
        return cli_usage_error(argv[0], "usage: onnxparity lint MODEL|TARGET [--format "
                                        "text|json|sarif] [--list-rules]");
    char model[4096], manifest_buf[4096];
    const char *manifest = NULL;
    if (is_dir(path)) { /* a bundle: model.onnx, and parity.json when there is one */
        snprintf(model, sizeof model, "%s/model.onnx", path);
        snprintf(manifest_buf, sizeof manifest_buf, "%s/parity.json", path);
        if (exists(manifest_buf)) manifest = manifest_buf;
    } else {
        snprintf(model, sizeof model, "%s", path);
    }
    onp_error e;
    onp_error_clear(&e);
    onp_model *m;
    if (onp_model_open(model, &m, &e)) return cli_report(&e);
    onp_lint_opts o = {.manifest = manifest};
    onp_lint_result r;
    if (onp_lint_run(m, &o, &r, &e)) {
        onp_model_close(m);
        return cli_report(&e);
    }
    onp_model_close(m); /* the findings own their strings */
    int rc = 0;
    if (fmt == LINT_JSON)
        rc = emit(doc_json(model, manifest, &r));
    else if (fmt == LINT_SARIF)
        rc = emit(lint_sarif_doc(model, &r));
    else
        print_text(model, manifest, &r);
    onp_run_verdict verdict = onp_run_verdict_of_lint(&r);
    onp_lint_result_free(&r);
    return rc ? rc : onp_run_exit_code(verdict);
}
