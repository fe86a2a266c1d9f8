/*
 * report.h — how the commands print results: the text lines several
 * commands share, short numbers for tables, and the output of a result
 * document (printed, or as an HTML page).  The documents themselves and
 * their members are the library's (include/onnxparity/doc.h).
 */
#ifndef ONP_CLI_REPORT_H
#define ONP_CLI_REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "onnxparity/bisect.h"
#include "onnxparity/causes.h"
#include "onnxparity/compare.h"
#include "onnxparity/doc.h"
#include "onnxparity/lint.h"
#include "onnxparity/noise.h"
#include "onnxparity/ort.h"
#include "onnxparity/run.h"

/* The verdict as a headline word: "pass", "FAIL", "ERROR". */
const char *report_verdict_word(onp_run_verdict v);

/* "1.23e-05", "nan", "inf". */
const char *report_fmt(double v, char *buf, size_t n);

/* The causes as text on stdout, one "cause    ID (C confidence) at NODE:
 * EVIDENCE" line each, most likely first, then up to three more evidence
 * lines and the fix (check and gate); where no rule explains a failure
 * (cause unknown), a "run:" line with the bisect command for
 * `target_args` (cli_target_args; NULL: none). */
void report_causes_text(const onp_causes *cs, const char *target_args);

/* One "latent" line on stdout: how many warnings explain no failure, the
 * first few, and how many TracerWarnings the export recorded (parity.json),
 * with the command that lists them (`lint_arg`: the bundle, which brings
 * its parity.json, else the model, shell-quoted).  Nothing when both
 * counts are 0, or when no warning is latent and causes were derived (the
 * TracerWarnings that matter are among them).  A passing run shows its risks this way (check, gate,
 * diagnose). */
void report_latent_text(const onp_causes *cs, const onp_lint_result *lint, const char *lint_arg);

/* Output of a result document: printed as JSON when `json`, written as an
 * HTML page to `html` when not NULL (several outputs at once), then freed.
 * Returns 0, or the exit code of a failed page write (after reporting it). */
int report_emit(cJSON *root, int json, const char *html, const char *label);

/* Write `txt` and a newline to f. */
void report_json_puts(const char *txt, FILE *f);

/* Print `root` (pretty, through onp_doc_print) to stdout and free it. */
void report_print_json(cJSON *root);

#endif
