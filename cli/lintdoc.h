/*
 * lintdoc.h — lint findings inside result documents, read back (the
 * library writes them: onp_doc_lint, include/onnxparity/doc.h): the "lint"
 * member as an onp_lint_result, so that a command holding only documents
 * (merge) hands the findings to the one SARIF writer (lint_sarif_doc) and
 * gets the document check --sarif writes.  No ONNX Runtime, no model file.
 */
#ifndef ONP_CLI_LINTDOC_H
#define ONP_CLI_LINTDOC_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "onnxparity/error.h"
#include "onnxparity/doc.h"
#include "onnxparity/lint.h"

/* The "lint" members of several documents of one model as one: each
 * finding once (equal findings, member for member, are one: every shard
 * lints the same model), in the order first seen, the counts recounted.
 * NULL entries (a document without "lint") are skipped.  Caller owns it. */
cJSON *lintdoc_union(const cJSON *const *lints, size_t n);

/* `lint` (a "lint" member) as *out: every finding with its rule (by id),
 * location and message.  A view: the strings stay the document's, so
 * `lint` must outlive *out, and *out is released with lintdoc_release,
 * never onp_lint_result_free.  0, or -1 with e (ONP_ERR_USAGE) naming
 * `what` and the finding when a rule id is not one of this build's rules;
 * *out is then empty. */
int lintdoc_read(const cJSON *lint, const char *what, onp_lint_result *out, onp_error *e);

/* Free what lintdoc_read allocated (the findings array); NULL-safe. */
void lintdoc_release(onp_lint_result *r);

#endif
