/*
 * merge.h — the rules of `merge`: the check documents of several runs of
 * one model (the shards of `check --shard I/N`, docs/gate.md) combined
 * into one verdict.  The tool (cli/cmd_merge.c) reads and vets the
 * documents, puts the fixtures back in order and writes the merged
 * document; what the merged run concludes is decided here, from the names
 * the documents carry, read through the library's name tables
 * (onp_run_verdict_from_name, onp_fixture_status_from_name,
 * onp_confidence_from_name).
 *
 * Worked example (docs[] the parsed documents, merged[] their fixtures):
 *     const char *verdicts[2] = {"pass", "fail"};       // each document's "verdict"
 *     size_t failed = 0;
 *     for (size_t i = 0; i < n_fixtures; i++)
 *         failed += onp_merge_fixture_failed(status[i]); // each fixture's "status"
 *     onp_run_verdict v = onp_merge_verdict(verdicts, 2, failed);   // FAIL
 *     return onp_run_exit_code(v);                                 // 1
 *
 *     // one cause given by two documents: keep the stronger one
 *     if (onp_merge_cause_outranks("high", "medium")) ...          // 1: replace
 */
#ifndef ONNXPARITY_MERGE_H
#define ONNXPARITY_MERGE_H

#include <stddef.h>

#include "onnxparity/run.h"

/* The merged verdict of n documents whose "verdict" members are
 * verdicts[0..n-1] (NULL: the document has none), over a merged fixture
 * list with `fixtures_failed` fixtures that do not pass: ERROR when a
 * document's verdict is "error" or absent (that run did not finish: the
 * whole did not); else FAIL when one is "fail" or a merged fixture failed;
 * else PASS.  A name outside onp_run_verdict_name's table counts for
 * neither (its fixtures still count).  Its exit code is
 * onp_run_exit_code's. */
onp_run_verdict onp_merge_verdict(const char *const *verdicts, size_t n, size_t fixtures_failed);

/* 1 when a merged fixture whose document "status" is `status` fails the
 * merged run: every status but "pass", an absent or unknown one too. */
int onp_merge_fixture_failed(const char *status);

/* Two documents give the same cause: 1 when the entry with confidence
 * `conf` outranks the one kept (confidence `kept`), so the merged document
 * keeps the most confident entry (the first of equals).  Names as
 * onp_confidence_name writes them; an unknown name ranks as low, an absent
 * one (NULL) below every name. */
int onp_merge_cause_outranks(const char *conf, const char *kept);

#endif
