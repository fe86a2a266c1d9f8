/*
 * doc.h — result documents: the JSON a command prints with --format json
 * and the Python API returns, built from the library's result structs.
 * One writer per schema (docs/schemas/), so the tool and every binding
 * give byte-identical documents for the same run.
 *
 * The members shared by several documents (a metrics record, a noise
 * judgment, the causes, the lint findings, the environment fingerprint)
 * have one writer each; onp_doc_check() assembles the check document
 * (schema onnxparity.check/1) from a run.  Numbers that are not finite are
 * written as the strings "nan", "inf", "-inf" so documents stay JSON, and
 * finite doubles with the fewest digits that read back exactly.
 *
 *     cJSON *doc = onp_doc_check(bundle, ort, session, &run_opts, &run, 0);
 *     char *text = onp_doc_print(doc);       // what `check --format json` prints
 *     cJSON_Delete(doc);  free(text);
 *
 * Ownership: every function returning a cJSON * gives the caller a new
 * tree (cJSON_Delete); the _add forms add members to `o` in place.
 */
#ifndef ONNXPARITY_DOC_H
#define ONNXPARITY_DOC_H

#include <stddef.h>

#include "onnxparity/adequacy.h"
#include "onnxparity/agreement.h"
#include "onnxparity/bisect.h"
#include "onnxparity/causes.h"
#include "onnxparity/compare.h"
#include "onnxparity/lint.h"
#include "onnxparity/noise.h"
#include "onnxparity/ort.h"
#include "onnxparity/probe.h"
#include "onnxparity/run.h"

struct cJSON;

// --- members shared by the documents -------------------------------------------

/* o[key] = v: a number, or "nan"/"inf"/"-inf". */
void onp_doc_num(struct cJSON *o, const char *key, double v);

/* v for people, into buf (n bytes): three significant digits ("1.23e-05"),
 * or "nan", "inf", "-inf"; the form of the numbers in messages (gate's
 * regressions) and in the tool's text.  Returns buf. */
const char *onp_doc_short_num(double v, char *buf, size_t n);

/* Every field of m as members of o (shape/dtype flags, counts, errors,
 * tolerance, worst element, histogram). */
void onp_doc_metrics(struct cJSON *o, const onp_metrics *m);

/* o["judgment"]: the noise rule's verdict, envelope and reference errors. */
void onp_doc_judgment(struct cJSON *o, const onp_judgment *j);

/* The causes, most likely first: [{id, confidence, node, evidence[], fix,
 * suggested_atol (float-noise, reduced-precision), explains}]. */
struct cJSON *onp_doc_causes(const onp_causes *cs);

/* The latent findings: [{rule, name, cause, node}]. */
struct cJSON *onp_doc_latent(const onp_causes *cs);

/* A bisect point's place in the graph, as members of o: node, op_type,
 * output (the value), module — the first members of every document's
 * first divergent node and of bisect's biggest jump. */
void onp_doc_point_names(struct cJSON *o, const onp_bisect_point *p);

/* The first divergent point of a bisect that found one (first >= 0):
 * {node, op_type, output, module, reference, max_abs, envelope_max, jump,
 * fixture}. */
struct cJSON *onp_doc_first_divergent(const onp_bisect_result *bis);

/* root["environment"]: onnxparity's and ORT's versions, the ORT library,
 * provider, optimization level, threads, model sha256, session config,
 * denormal handling, CPU.  Returns the new member. */
struct cJSON *onp_doc_environment(struct cJSON *root, onp_ort *ort, const char *provider,
                                  onp_ort_opt_level opt_level, int intra, int inter,
                                  const char *sha256, const char *const *config, size_t n_config);

/* root["environment"] of a run over session s (onp_doc_environment with
 * the session's description and the bundle's sha256), with the run's
 * export and runtime fields (r->env) and "upgraded_to_opset7".  check's
 * and gate's documents both.  Returns the new member. */
struct cJSON *onp_doc_run_environment(struct cJSON *root, onp_bundle *b, onp_ort *ort,
                                      onp_session *s, const onp_run_opts *o,
                                      const onp_run_result *r, int upgraded);

/* A lint location {kind, ...} (the fields its kind has), and the "lint"
 * member {errors, warnings, infos, findings[{id, name, severity, cause,
 * node, location, message}]}. */
struct cJSON *onp_doc_lint_location(const onp_lint_location *l);
struct cJSON *onp_doc_lint(const onp_lint_result *r);

/* The capture's fixture adequacy, or a JSON null when a is NULL or absent. */
struct cJSON *onp_doc_adequacy(const onp_adequacy *a);

/* The flip-rate statistic's members into t (flip_rate, flip_rate_upper,
 * confidence, bound). */
void onp_doc_agreement(struct cJSON *t, const onp_agreement *a);

// --- documents -----------------------------------------------------------------------

/* The "fixtures" member of check's document, every fixture x output with
 * its metrics and judgment (gate's document carries the same, so its page
 * draws the same plots). */
struct cJSON *onp_doc_fixtures(const onp_fixture_verdict *fix, size_t n);

/* The check document (docs/schemas/check-1.json) of run r, made over
 * session s of `ort` with options o; `upgraded` says the model was
 * upgraded to opset 7 in memory.  NULL only when memory runs out. */
struct cJSON *onp_doc_check(onp_bundle *b, onp_ort *ort, onp_session *s, const onp_run_opts *o,
                            const onp_run_result *r, int upgraded);

/* The gate document (docs/schemas/gate-1.json, docs/gate.md) of a gate
 * run g judged against its criteria file (g not recording; the run's
 * options o): verdict, model, criteria path, environment, the drift and
 * its policy, causes, first divergent node, regressions, summary, every
 * criterion checked with its margin, the fixtures.  NULL only when memory
 * runs out. */
struct onp_gate;
struct cJSON *onp_doc_gate(struct onp_gate *g, const onp_run_opts *o, const char *criteria);

/* The document of a command whose run could not start (ONNX Runtime did
 * not load the model): {schema, "verdict": "error", model, "error": why}
 * (`schema` "onnxparity.check/1", "onnxparity.diagnose/1", ...).  NULL only
 * when memory runs out. */
struct cJSON *onp_doc_not_run(const char *schema, const char *model, const char *why);

/* The bisect document (docs/schemas/bisect-1.json) of r, made by `ort`
 * with session options so; `fixture` the one bisected, or -1 (every one). */
struct cJSON *onp_doc_bisect(const onp_bisect_result *r, onp_ort *ort, const onp_session_opts *so,
                             int fixture);

/* A bisect document that says only why it could not run ("verdict":
 * "error", "error": msg). */
struct cJSON *onp_doc_bisect_error(const char *model, int fixture, const char *msg);

/* The words of a bisect result the text report and the document share:
 * "diverges" / "inconclusive" / "agrees"; the reference ("eager", "ORT at
 * opt-level disable"); an input's source ("eager", "disable", "none", ...);
 * the local rerun ("local", "inherited", or NULL: not run); and 1 when every
 * input of the first divergent node is known to agree. */
const char *onp_doc_bisect_verdict(const onp_bisect_result *r);
const char *onp_doc_bisect_ref_words(const onp_bisect_result *r);
const char *onp_doc_bisect_src_name(const onp_bisect_result *r, onp_bisect_src src);
const char *onp_doc_bisect_local_verdict(const onp_bisect_local *L);
int onp_doc_bisect_inputs_agree(const onp_bisect_result *r);

/* Why a bisect with status NO_REFERENCE compared nothing, into buf. */
const char *onp_doc_bisect_no_reference(const onp_bisect_result *r, char *buf, size_t n);

/* The sweep member (levels, the optimizer search, providers, libraries;
 * the sweep command's document embeds it) and the probes member. */
struct cJSON *onp_doc_sweep(const onp_sweep_result *r);
struct cJSON *onp_doc_probes(const onp_probe_result *pr);

/* The diagnose document (docs/schemas/diagnose-1.json) of a diagnosis that
 * ran (diagnose.h), made with the options a. */
struct onp_diagnosis;
struct cJSON *onp_doc_diagnose(const struct onp_diagnosis *d, const onp_run_args *a);

/* The document as the tool prints it: indented, every byte that is not
 * valid UTF-8 replaced by U+FFFD (cJSON copies such bytes as they are).
 * Caller frees; NULL when memory runs out. */
char *onp_doc_print(const struct cJSON *doc);

#endif
