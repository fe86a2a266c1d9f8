/*
 * manifest.h — a bundle's parity.json, mapped and strictly parsed once.
 *
 * The capture (python/onnxparity) writes parity.json beside model.onnx:
 * what only the PyTorch side knows (docs/capture.md).  Several readers take
 * a part of it: the noise book ("noise", judge.h), the adequacy report
 * ("adequacy", adequacy.h), the export environment ("exporter",
 * "versions.torch", env.h), the lint's manifest findings (lint.h) and the
 * traced fixture ("export_args.traced_fixture").  Each has a path-based
 * reader that opens the file itself; a client that needs several parts
 * opens the manifest once and hands the same parsed document to the
 * `_from_manifest` variant of each, so the file is read and validated once
 * and every reader sees the same bytes.
 *
 * Worked example (error checks shortened):
 *     onp_manifest *mf = NULL;
 *     if (onp_manifest_open("bundle/parity.json", &mf, &e)) return -1;  // e names the file
 *     onp_noisebook *nb;   onp_noisebook_from_manifest(mf, &nb, &e);
 *     onp_adequacy *ad;    onp_adequacy_from_manifest(mf, &ad, &e);
 *     onp_env_from_manifest(&env, model, mf, &e);
 *     onp_lint_opts lo = {.manifest_doc = mf};
 *     onp_lint_run(model, &lo, &lint, &e);
 *     int traced = onp_manifest_traced_fixture(mf);   // -1: not recorded
 *     ...
 *     onp_noisebook_free(nb);  onp_adequacy_free(ad);
 *     onp_manifest_free(mf);   // after every reader is done with it
 *
 * A bundle without parity.json (a plain ONNX test-data folder) has no
 * manifest: pass NULL to the `_from_manifest` readers, which then give the
 * result their path readers give without the file (an empty noise book, no
 * adequacy report, no export fields, no manifest findings).
 *
 * Ownership: the manifest owns the document and a copy of the path until
 * onp_manifest_free; what the readers return is theirs (copied), so it
 * outlives the manifest.  A manifest is never modified after open: several
 * threads may read one.  No ONNX Runtime; reads one file.
 */
#ifndef ONNXPARITY_MANIFEST_H
#define ONNXPARITY_MANIFEST_H

#include "onnxparity/error.h"

struct cJSON;

typedef struct onp_manifest onp_manifest; /* parity.json, parsed once */

/* Map `path`, parse it strictly (onp_json_parse, json.h) and require a JSON
 * object.  0 with *out set (free with onp_manifest_free), or -1 with *out
 * NULL and `e` naming the file: ONP_ERR_IO when it cannot be read (missing,
 * a folder, no permission), ONP_ERR_FORMAT "not valid JSON (a parity.json
 * manifest was expected): ..." or "not a JSON object (a parity.json
 * manifest was expected)", ONP_ERR_NOMEM. */
int onp_manifest_open(const char *path, onp_manifest **out, onp_error *e);

/* The parsed object, owned by the manifest (valid until onp_manifest_free);
 * NULL for mf NULL. */
const struct cJSON *onp_manifest_doc(const onp_manifest *mf);

/* The path as given to onp_manifest_open (a copy owned by the manifest);
 * NULL for mf NULL.  The readers name this file in their errors. */
const char *onp_manifest_path(const onp_manifest *mf);

/* export_args.traced_fixture, the fixture the export was traced on, as an
 * int in [0, INT_MAX]; -1 when it is missing, not an integer (2.5, "3"),
 * out of that range, or mf is NULL. */
int onp_manifest_traced_fixture(const onp_manifest *mf);

/* The export as the capture recorded it: parity.json's "exporter"
 * ("legacy" or "dynamo"), "exporter_requested" ("auto", ...) and
 * "exporter_fallback" (why dynamo was left under exporter="auto": its
 * failure, or a TorchScript module).  NULL where the member is missing or
 * not a string (a fallback of null: none), or mf is NULL.  Views into the
 * manifest: valid while it is open. */
const char *onp_manifest_exporter(const onp_manifest *mf);
const char *onp_manifest_exporter_requested(const onp_manifest *mf);
const char *onp_manifest_exporter_fallback(const onp_manifest *mf);

/* Free the document and the path; accepts NULL. */
void onp_manifest_free(onp_manifest *mf);

#endif
