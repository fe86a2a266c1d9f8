/*
 * lintdoc.h — lint findings inside result documents, both ways.  Written:
 * the "lint" member of check's document ({errors, warnings, infos,
 * findings[{id, name, severity, cause, node, location, message}]}, the
 * location as `lint --format json` writes it).  Read back: that member as
 * an onp_lint_result, so that a command holding only documents (merge)
 * hands the findings to the one SARIF writer (lint_sarif_doc) and gets the
 * document check --sarif writes.  No ONNX Runtime, no model file needed.
 */
#ifndef ONP_CLI_LINTDOC_H
#define ONP_CLI_LINTDOC_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "onnxparity/error.h"
#include "onnxparity/lint.h"

/* {kind, ...}: the fields of `l` its kind has (lint.h), as lint's JSON
 * document writes them.  The caller owns the object. */
cJSON *lintdoc_location_json(const onp_lint_location *l);

/* The "lint" member for `r`: counts and every finding.  Caller owns it. */
cJSON *lintdoc_json(const onp_lint_result *r);

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
