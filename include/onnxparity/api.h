/*
 * api.h — one call per command, for bindings (the Python package calls it
 * through ctypes) and services: options given as the tool's own flags,
 * parsed by the library's table (run.h), results as the tool's own JSON
 * documents (doc.h), byte for byte what `onnxparity check --format json`
 * prints for the same run.  ONNX Runtime still runs in its worker process
 * (a crash or hang in a kernel fails the run, not the caller).
 *
 *     const char *args[] = {"--rtol", "1e-4", "--top-k=auto"};
 *     char *doc;  onp_error e;
 *     int rc = onp_api_check("bundle/", NULL, NULL, 0, args, 3, &doc, &e);
 *     if (rc < 0) fprintf(stderr, "%s\n", e.msg);     // exit code: onp_error_exit_code(&e)
 *     else { puts(doc); onp_api_free(doc); }          // rc: 0 pass, 1 fail, 4 ORT lost a fixture
 */
#ifndef ONNXPARITY_API_H
#define ONNXPARITY_API_H

#include <stddef.h>

#include "onnxparity/error.h"

/* The check of a bundle folder `bundle`, or of `model` with the fixture
 * folders data[n_data] (bundle NULL).  args[n_args]: the run's options as
 * on the command line ("--rtol", "1e-4", "--shard=0/2", "--no-lint", every
 * option of the ORT and judging groups; docs/cli.md).  Returns the run's
 * exit code (0 pass, 1 fail, 4 error) with *doc the check document (free
 * with onp_api_free), or -1 with e filled (*doc NULL): bad options or input
 * (exit 2), unreadable files (3), ONNX Runtime refusing the model (4). */
int onp_api_check(const char *bundle, const char *model, const char *const *data, size_t n_data,
                  const char *const *args, size_t n_args, char **doc, onp_error *e);

/* The bisect of a bundle (or a model and fixture folders), as
 * `onnxparity bisect --format json`: args are the ORT and tolerance options
 * and bisect's own (--fixture, --reference, --chunk, --max-exposed-bytes,
 * --save-repro).  Returns bisect's exit code (0 agrees, 1 diverges or
 * inconclusive) with *doc its document; -1 with e as onp_api_check, and
 * also when there is nothing to compare against (no eager intermediates
 * with --reference eager: ONP_ERR_USAGE, the tool's exit 2). */
int onp_api_bisect(const char *bundle, const char *model, const char *const *data, size_t n_data,
                   const char *const *args, size_t n_args, char **doc, onp_error *e);

/* The diagnosis of a bundle (or a model and fixture folders), as
 * `onnxparity diagnose --format json`: args are the ORT options and
 * diagnose's own (--rtol, --atol, --no-bisect, --save-repro, and
 * "--no-sweep").  Returns its exit code (0 healthy, 1 causes found or
 * parity fails) with *doc its document; -1 with e as onp_api_check. */
int onp_api_diagnose(const char *bundle, const char *model, const char *const *data, size_t n_data,
                     const char *const *args, size_t n_args, char **doc, onp_error *e);

/* The gate of a bundle (or a model and fixture folders) against release
 * criteria, as `onnxparity gate --format json`: args are the ORT options
 * and gate's own (--criteria FILE, required; --record, --margin,
 * --allow-failing, --rtol, --atol when recording; --env-drift, --no-bisect
 * when gating; docs/gate.md).  Gating returns its exit code (0 pass, 1
 * regressed, 4 ORT lost a fixture) with *doc the gate document.
 * Recording writes the criteria file and returns 0 with *doc the criteria
 * document; when the run may not be recorded (it fails, does not run, or
 * has lint errors) it writes nothing and returns the refusal's exit code
 * (1) with *doc NULL and e->msg saying why (e->code ONP_ERR_NONE).  -1
 * with e as onp_api_check (a malformed criteria file: exit 2). */
int onp_api_gate(const char *bundle, const char *model, const char *const *data, size_t n_data,
                 const char *const *args, size_t n_args, char **doc, onp_error *e);

/* The deployment chain of a bundle (or a model and fixture folders), as
 * `onnxparity chain --format json` (docs/chain.md): args are the ORT and
 * tolerance options and the chain's own (--stage NAME=MODEL, repeatable
 * and at least one; --precision NAME=P; --per-value).  Returns its exit
 * code (0 every stage within its precision's envelope, 1 one beyond, 4 ORT
 * refused or lost a stage) with *doc the chain document; -1 with e as
 * onp_api_check. */
int onp_api_chain(const char *bundle, const char *model, const char *const *data, size_t n_data,
                  const char *const *args, size_t n_args, char **doc, onp_error *e);

/* The decode loop of a decode bundle (docs/decode.md), as `onnxparity
 * generate --format json` (docs/generate.md): args are the ORT options and
 * generate's own (--steps, --strict, --max-differ-rate, --min-divergence-step,
 * --rtol, --atol; decode.h).  model and data must be NULL and 0 (a decode
 * bundle is one folder).  Returns its exit code (0 every prompt agrees or
 * is a near-tie, 1 a defect or a release criterion fails) with *doc the
 * onnxparity.generate/1 document; -1 with e as onp_api_check. */
int onp_api_generate(const char *bundle, const char *model, const char *const *data, size_t n_data,
                     const char *const *args, size_t n_args, char **doc, onp_error *e);

/* Free what the API returned; accepts NULL. */
void onp_api_free(void *p);

/* The library's version ("0.1.0"). */
const char *onp_api_version(void);

#endif
