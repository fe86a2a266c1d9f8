/*
 * report.h — how the commands print comparison results: JSON members for
 * one metrics record (NaN and infinities as the strings "nan", "inf",
 * "-inf" so documents stay valid JSON), and short numbers for tables.
 */
#ifndef ONP_CLI_REPORT_H
#define ONP_CLI_REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "onnxparity/bisect.h"
#include "onnxparity/causes.h"
#include "onnxparity/compare.h"
#include "onnxparity/lint.h"
#include "onnxparity/noise.h"
#include "onnxparity/ort.h"

/* A number member; non-finite values become strings. */
void report_num(cJSON *o, const char *key, double v);

/* Every field of `m` as members of `o` (shape/dtype flags, counts, errors,
 * tolerance, worst element, histogram). */
void report_metrics_json(cJSON *o, const onp_metrics *m);

/* "1.23e-05", "nan", "inf". */
const char *report_fmt(double v, char *buf, size_t n);

/* o["judgment"]: the noise rule's verdict, envelope and reference errors
 * (docs/cli.md, the check document). */
void report_judgment_json(cJSON *o, const onp_judgment *j);

/* The derivation's causes, most likely first: [{id, confidence, node,
 * evidence[], fix, suggested_atol (float-noise)}] (check and diagnose). */
cJSON *report_causes_json(const onp_causes *cs);

/* The causes as text on stdout, one "cause    ID (C confidence) at NODE:
 * EVIDENCE" line each, most likely first, then up to three more evidence
 * lines and the fix (check and gate); where no rule explains a failure
 * (cause unknown), a "run:" line with the bisect command for
 * `target_args` (cli_target_args; NULL: none). */
void report_causes_text(const onp_causes *cs, const char *target_args);

/* The first divergent node of a bisection that found one (r->first >= 0):
 * {node, op_type, output, module, reference, max_abs, envelope_max, jump,
 * fixture} (check and gate). */
cJSON *report_first_divergent_json(const onp_bisect_result *r);

/* The latent findings: [{rule, name, cause, node}]. */
cJSON *report_latent_json(const onp_causes *cs);

/* One "latent" line on stdout: how many warnings explain no failure, the
 * first few, and how many TracerWarnings the export recorded (parity.json),
 * with the command that lists them (`lint_arg`: the bundle, which brings
 * its parity.json, else the model, shell-quoted).  Nothing when both
 * counts are 0, or when no warning is latent and causes were derived (the
 * TracerWarnings that matter are among them).  A passing run shows its risks this way (check, gate,
 * diagnose). */
void report_latent_text(const onp_causes *cs, const onp_lint_result *lint, const char *lint_arg);

/* The environment fingerprint every result document carries: onnxparity
 * version, ORT version and library, provider, optimization level, threads,
 * model sha256, session config entries, denormal handling, CPU.  Returns the new "environment"
 * object (added to root) so callers can add their own members. */
cJSON *report_environment(cJSON *root, onp_ort *ort, const char *provider,
                          onp_ort_opt_level opt_level, int intra, int inter, const char *sha256,
                          const char *const *config, size_t n_config);

/* Output of a result document: printed as JSON when `json`, written as an
 * HTML page to `html` when not NULL (several outputs at once), then freed.
 * Returns 0, or the exit code of a failed page write (after reporting it). */
int report_emit(cJSON *root, int json, const char *html, const char *label);

/* `root` printed (pretty) as cJSON_Print does, each byte that is not valid
 * UTF-8 replaced by U+FFFD (names from files may hold any bytes; a JSON
 * document must be UTF-8).  The caller frees the text; NULL when out of
 * memory. */
char *report_json_print(const cJSON *root);

/* Write `txt` and a newline to f. */
void report_json_puts(const char *txt, FILE *f);

/* Print `root` (pretty, through report_json_print) to stdout and free it. */
void report_print_json(cJSON *root);

#endif
