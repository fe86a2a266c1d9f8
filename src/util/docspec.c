/*
 * docspec.c — the member types of the result documents the tool reads back
 * (diff reads check documents; report reads check, bisect, diagnose, sweep
 * and gate documents), as onp_jspec tables (include/onnxparity/jspec.h).
 *
 * Each table follows its schema in docs/schemas/ (common-1.json for what
 * the documents share): the members a reader reads, with the types the
 * schema gives them.  Two additions where a reader judges by the number:
 * an error (max_abs, max_rel, the envelope) is never below 0, and
 * mismatch_frac lies in [0, 1] (diff compared -1 as an improvement).  A
 * member no reader reads may be left out; the schema still describes it.
 *
 * How to add a document: its tables below (leaves first, since a table
 * names the tables it holds), and a row in `docs[]` at the end.  Data
 * only: no code depends on anything but jspec.h.
 */
#include <stddef.h>
#include <string.h>

#include "onnxparity/jspec.h"

// --- leaves: one type, nothing inside ------------------------------------------------

#define LEAF(name, types) static const onp_jspec name = {(types), NULL, NULL, NULL}
LEAF(STR, ONP_J_STRING);
LEAF(STR_N, ONP_J_STRING | ONP_J_NULL);
LEAF(BOOL, ONP_J_BOOL);
LEAF(BOOL_N, ONP_J_BOOL | ONP_J_NULL);
LEAF(REAL_N, ONP_J_REAL | ONP_J_NULL);             /* common-1 real */
LEAF(ERR_N, ONP_J_REAL | ONP_J_MIN0 | ONP_J_NULL); /* an error: >= 0 */
LEAF(FRAC, ONP_J_REAL | ONP_J_MIN0 | ONP_J_MAX1);  /* a fraction */
LEAF(NONNEG, ONP_J_NUMBER | ONP_J_MIN0);           /* common-1 nonneg */
LEAF(COUNT, ONP_J_COUNT);                          /* common-1 count */
LEAF(COUNT_N, ONP_J_COUNT | ONP_J_NULL);
LEAF(INT, ONP_J_INT);
LEAF(INT_N, ONP_J_INT | ONP_J_NULL);
LEAF(OBJ, ONP_J_OBJECT);
LEAF(OBJ_N, ONP_J_OBJECT | ONP_J_NULL);
#undef LEAF

#define ARRAY_OF(name, item) static const onp_jspec name = {ONP_J_ARRAY, &(item), NULL, NULL}
#define OBJECT(name, types, fields) static const onp_jspec name = {(types), NULL, fields, NULL}
ARRAY_OF(STRS, STR);
ARRAY_OF(INTS, INT);
ARRAY_OF(COUNTS, COUNT);

// --- common-1.json ---------------------------------------------------------------------

static const onp_jfield environment_f[] = {
    {"onnxparity", &STR, 0},          {"ort_version", &STR, 0},     {"ort_library", &STR, 0},
    {"ort_library_sha256", &STR, 0},  {"provider", &STR, 0},        {"opt_level", &STR, 0},
    {"intra_threads", &COUNT, 0},     {"inter_threads", &COUNT, 0}, {"model_sha256", &STR, 0},
    {"session_config", &STRS, 0},     {"opset", &INT, 0},           {"exporter", &STR, 0},
    {"torch_version", &STR, 0},       {"denormals", &STR, 0},       {"cpu", &STR, 0},
    {"upgraded_to_opset7", &BOOL, 0}, {"external_data", &BOOL, 0},  {NULL, NULL, 0}};
OBJECT(ENVIRONMENT, ONP_J_OBJECT, environment_f);

static const onp_jfield cause_f[] = {
    {"id", &STR, 0},  {"confidence", &STR, 0},        {"node", &STR_N, 0}, {"evidence", &STRS, 0},
    {"fix", &STR, 0}, {"suggested_atol", &REAL_N, 0}, {NULL, NULL, 0}};
OBJECT(CAUSE, ONP_J_OBJECT, cause_f);
ARRAY_OF(CAUSES, CAUSE);

static const onp_jfield latent_f[] = {{"rule", &STR, 0}, {NULL, NULL, 0}};
OBJECT(LATENT1, ONP_J_OBJECT, latent_f);
ARRAY_OF(LATENT, LATENT1);

static const onp_jfield metrics_f[] = {{"shape_ok", &BOOL, 0},      {"dtype_ok", &BOOL, 0},
                                       {"rtol", &NONNEG, 0},        {"atol", &NONNEG, 0},
                                       {"count", &COUNT, 0},        {"mismatches", &COUNT, 0},
                                       {"mismatch_frac", &FRAC, 0}, {"max_abs", &ERR_N, 0},
                                       {"max_rel", &ERR_N, 0},      {"mean_abs", &REAL_N, 0},
                                       {"rms", &REAL_N, 0},         {"cosine", &REAL_N, 0},
                                       {"needed_rtol", &REAL_N, 0}, {"needed_atol", &REAL_N, 0},
                                       {"nan_matched", &COUNT, 0},  {"nan_mismatch", &COUNT, 0},
                                       {"inf_mismatch", &COUNT, 0}, {"worst", &OBJ_N, 0},
                                       {"histogram", &COUNTS, 0},   {NULL, NULL, 0}};
OBJECT(METRICS, ONP_J_OBJECT, metrics_f);

static const onp_jfield location_f[] = {{"kind", &STR, 0}, {NULL, NULL, 0}};
OBJECT(LOCATION, ONP_J_OBJECT, location_f);
static const onp_jfield finding_f[] = {
    {"id", &STR, 0},     {"name", &STR, 0},          {"severity", &STR, 0}, {"cause", &STR, 0},
    {"node", &STR_N, 0}, {"location", &LOCATION, 0}, {"message", &STR, 0},  {NULL, NULL, 0}};
OBJECT(FINDING, ONP_J_OBJECT, finding_f);
ARRAY_OF(FINDINGS, FINDING);
static const onp_jfield lint_f[] = {{"errors", &COUNT, 0},
                                    {"warnings", &COUNT, 0},
                                    {"infos", &COUNT, 0},
                                    {"findings", &FINDINGS, 0},
                                    {NULL, NULL, 0}};
OBJECT(LINT, ONP_J_OBJECT, lint_f);

/* The first divergent node as check, gate, bisect and diagnose write it;
 * bisect's adds its inputs, the node run alone ("local": a word in
 * diagnose, an object in bisect) and the metrics of its value. */
static const onp_jfield input_f[] = {{"name", &STR, 0},      {"source", &STR, 0},
                                     {"max_abs", &ERR_N, 0}, {"max_rel", &ERR_N, 0},
                                     {"pass", &BOOL, 0},     {NULL, NULL, 0}};
OBJECT(INPUT, ONP_J_OBJECT, input_f);
ARRAY_OF(INPUTS, INPUT);
static const onp_jfield local_f[] = {{"verdict", &STR, 0},
                                     {"max_abs", &ERR_N, 0},
                                     {"max_rel", &ERR_N, 0},
                                     {"mismatches", &COUNT_N, 0},
                                     {NULL, NULL, 0}};
OBJECT(LOCAL, ONP_J_STRING | ONP_J_OBJECT | ONP_J_NULL, local_f);
static const onp_jfield first_divergent_f[] = {
    {"node", &STR, 0},      {"op_type", &STR, 0},         {"output", &STR, 0},
    {"module", &STR_N, 0},  {"reference", &STR_N, 0},     {"max_abs", &ERR_N, 0},
    {"max_rel", &ERR_N, 0}, {"envelope_max", &REAL_N, 0}, {"fixture", &INT_N, 0},
    {"index", &COUNT, 0},   {"inputs_agree", &BOOL_N, 0}, {"local", &LOCAL, 0},
    {"inputs", &INPUTS, 0}, {"metrics", &METRICS, 0},     {NULL, NULL, 0}};
OBJECT(FIRST_DIVERGENT, ONP_J_OBJECT | ONP_J_NULL, first_divergent_f);

// --- check-1.json ----------------------------------------------------------------------

static const onp_jfield envelope_f[] = {{"max_abs", &ERR_N, 0}, {NULL, NULL, 0}};
OBJECT(ENVELOPE, ONP_J_OBJECT | ONP_J_NULL, envelope_f);
static const onp_jfield judgment_f[] = {{"verdict", &STR, 0},
                                        {"pass", &BOOL, 0},
                                        {"vacuous", &STR, 0},
                                        {"noise_source", &STR, 0},
                                        {"reference_refused", &COUNT, 0},
                                        {"beyond_envelope", &BOOL, 0},
                                        {"envelope", &ENVELOPE, 0},
                                        {NULL, NULL, 0}};
OBJECT(JUDGMENT, ONP_J_OBJECT, judgment_f);
static const onp_jfield topk_f[] = {{"k", &COUNT, 0},           {"rows", &COUNT, 0},
                                    {"top1_agree", &COUNT, 0},  {"flipped", &COUNT, 0},
                                    {"topk_agree", &COUNT, 0},  {"noise_driven_flips", &COUNT, 0},
                                    {"min_margin", &REAL_N, 0}, {"flip_rate_upper", &REAL_N, 0},
                                    {"confidence", &REAL_N, 0}, {NULL, NULL, 0}};
OBJECT(TOPK, ONP_J_OBJECT, topk_f);
/* An output: its name and pass always, the metrics when compared. */
static const onp_jfield output_f[] = {
    {"name", &STR, 1},   {"pass", &BOOL, 1},         {"note", &STR, 0},  {"dtype", &STR, 0},
    {"shape", &INTS, 0}, {"judgment", &JUDGMENT, 0}, {"topk", &TOPK, 0}, {NULL, NULL, 0}};
static const onp_jspec OUTPUT = {ONP_J_OBJECT, NULL, output_f, &METRICS};
ARRAY_OF(OUTPUTS, OUTPUT);
static const onp_jfield fixture_f[] = {{"index", &COUNT, 0},     {"seconds", &NONNEG, 0},
                                       {"dir", &STR, 0},         {"status", &STR, 0},
                                       {"error", &STR, 0},       {"runtime_failure", &STR, 0},
                                       {"outputs", &OUTPUTS, 0}, {NULL, NULL, 0}};
OBJECT(FIXTURE, ONP_J_OBJECT, fixture_f);
ARRAY_OF(FIXTURES, FIXTURE);
static const onp_jfield summary_f[] = {{"fixtures", &COUNT, 0},
                                       {"fixtures_failed", &COUNT, 0},
                                       {"outputs_compared", &COUNT, 0},
                                       {"outputs_failed", &COUNT, 0},
                                       {"outputs_within_noise", &COUNT, 0},
                                       {"outputs_vacuous", &COUNT, 0},
                                       {"outputs_within_tolerance_beyond_noise", &COUNT, 0},
                                       {"topk", &TOPK, 0},
                                       {NULL, NULL, 0}};
OBJECT(CHECK_SUMMARY, ONP_J_OBJECT, summary_f);
static const onp_jfield flag_f[] = {
    {"level", &STR, 0}, {"id", &STR, 0}, {"message", &STR, 0}, {NULL, NULL, 0}};
OBJECT(FLAG, ONP_J_OBJECT, flag_f);
ARRAY_OF(FLAGS, FLAG);
static const onp_jfield adequacy_f[] = {{"verdict", &STR, 0},
                                        {"samples", &COUNT, 0},
                                        {"fixtures", &COUNT, 0},
                                        {"shape_groups", &COUNT, 0},
                                        {"near_boundary", &COUNT, 0},
                                        {"flags", &FLAGS, 0},
                                        {NULL, NULL, 0}};
OBJECT(ADEQUACY, ONP_J_OBJECT | ONP_J_NULL, adequacy_f);
static const onp_jfield shard_f[] = {
    {"index", &COUNT, 0}, {"count", &COUNT, 0}, {"fixtures_total", &COUNT, 0}, {NULL, NULL, 0}};
OBJECT(SHARD, ONP_J_OBJECT, shard_f);
static const onp_jfield check_f[] = {{"schema", &STR, 1},
                                     {"verdict", &STR, 0},
                                     {"model", &STR, 0},
                                     {"error", &STR, 0},
                                     {"environment", &ENVIRONMENT, 0},
                                     {"fixtures", &FIXTURES, 0},
                                     {"summary", &CHECK_SUMMARY, 0},
                                     {"causes", &CAUSES, 0},
                                     {"latent", &LATENT, 0},
                                     {"first_divergent", &FIRST_DIVERGENT, 0},
                                     {"lint", &LINT, 0},
                                     {"adequacy", &ADEQUACY, 0},
                                     {"shard", &SHARD, 0},
                                     {"merged_from", &STRS, 0},
                                     {"options", &OBJ, 0},
                                     {NULL, NULL, 0}};
OBJECT(CHECK, ONP_J_OBJECT, check_f);

// --- bisect-1.json ---------------------------------------------------------------------

static const onp_jfield point_f[] = {
    {"value", &STR, 0},     {"node", &STR, 0},  {"op_type", &STR, 0}, {"module", &STR_N, 0},
    {"max_abs", &ERR_N, 0}, {"pass", &BOOL, 0}, {NULL, NULL, 0}};
OBJECT(POINT, ONP_J_OBJECT, point_f);
ARRAY_OF(CURVE, POINT);
static const onp_jfield bisect_summary_f[] = {{"values_exposed", &COUNT, 0},
                                              {"values_compared", &COUNT, 0},
                                              {"values_failed", &COUNT, 0},
                                              {NULL, NULL, 0}};
OBJECT(BISECT_SUMMARY, ONP_J_OBJECT, bisect_summary_f);
static const onp_jfield bisect_f[] = {{"schema", &STR, 1},
                                      {"verdict", &STR, 0},
                                      {"model", &STR, 0},
                                      {"error", &STR, 0},
                                      {"environment", &ENVIRONMENT, 0},
                                      {"fixture", &INT_N, 0},
                                      {"fixtures", &INTS, 0},
                                      {"reference", &STR_N, 0},
                                      {"summary", &BISECT_SUMMARY, 0},
                                      {"first_divergent", &FIRST_DIVERGENT, 0},
                                      {"curve", &CURVE, 0},
                                      {"instrumented_reproduces", &BOOL_N, 0},
                                      {"fallback", &STR_N, 0},
                                      {NULL, NULL, 0}};
OBJECT(BISECT, ONP_J_OBJECT, bisect_f);

// --- sweep-1.json ----------------------------------------------------------------------

static const onp_jfield level_output_f[] = {
    {"name", &STR, 0}, {"max_abs", &ERR_N, 0}, {"pass", &BOOL_N, 0}, {NULL, NULL, 0}};
OBJECT(LEVEL_OUTPUT, ONP_J_OBJECT, level_output_f);
ARRAY_OF(LEVEL_OUTPUTS, LEVEL_OUTPUT);
static const onp_jfield level_f[] = {{"level", &STR, 0},
                                     {"ran", &BOOL, 0},
                                     {"pass", &BOOL_N, 0},
                                     {"deterministic", &BOOL_N, 0},
                                     {"error", &STR_N, 0},
                                     {"nondeterministic_output", &STR_N, 0},
                                     {"outputs", &LEVEL_OUTPUTS, 0},
                                     {NULL, NULL, 0}};
OBJECT(LEVEL, ONP_J_OBJECT, level_f);
ARRAY_OF(LEVELS, LEVEL);
static const onp_jfield optimizer_search_f[] = {{"searched", &BOOL, 0},
                                                {"culprit", &STR_N, 0},
                                                {"sessions", &COUNT, 0},
                                                {"note", &STR_N, 0},
                                                {NULL, NULL, 0}};
OBJECT(OPTIMIZER_SEARCH, ONP_J_OBJECT, optimizer_search_f);
static const onp_jfield configuration_f[] = {{"index", &COUNT, 0},
                                             {"provider", &STR, 0},
                                             {"available", &BOOL, 0},
                                             {"levels", &LEVELS, 0},
                                             {NULL, NULL, 0}};
OBJECT(CONFIGURATION, ONP_J_OBJECT, configuration_f);
ARRAY_OF(CONFIGURATIONS, CONFIGURATION);
static const onp_jfield sweep_part_f[] = {{"levels", &LEVELS, 0},
                                          {"first_failing_level", &STR_N, 0},
                                          {"optimizer_search", &OPTIMIZER_SEARCH, 0},
                                          {"configurations", &CONFIGURATIONS, 0},
                                          {NULL, NULL, 0}};
OBJECT(SWEEP_PART, ONP_J_OBJECT | ONP_J_NULL, sweep_part_f);
static const onp_jfield sweep_f[] = {{"schema", &STR, 1},     {"verdict", &STR, 0},
                                     {"model", &STR, 0},      {"environment", &ENVIRONMENT, 0},
                                     {"fixtures", &COUNT, 0}, {"sweep", &SWEEP_PART, 0},
                                     {NULL, NULL, 0}};
OBJECT(SWEEP, ONP_J_OBJECT, sweep_f);

// --- diagnose-1.json -------------------------------------------------------------------

static const onp_jfield diagnose_f[] = {{"schema", &STR, 1},
                                        {"verdict", &STR, 0},
                                        {"model", &STR, 0},
                                        {"error", &STR, 0},
                                        {"causes", &CAUSES, 0},
                                        {"latent", &LATENT, 0},
                                        {"nondeterministic", &BOOL_N, 0},
                                        {"first_divergent", &FIRST_DIVERGENT, 0},
                                        {"sweep", &SWEEP_PART, 0},
                                        {"probes", &OBJ_N, 0},
                                        {"lint", &LINT, 0},
                                        {"environment", &ENVIRONMENT, 0},
                                        {"instrumented_reproduces", &BOOL_N, 0},
                                        {NULL, NULL, 0}};
OBJECT(DIAGNOSE, ONP_J_OBJECT, diagnose_f);

// --- gate-1.json -----------------------------------------------------------------------

static const onp_jfield drift_f[] = {{"field", &STR, 0},    {"kind", &STR, 0},
                                     {"recorded", &STR, 0}, {"current", &STR_N, 0},
                                     {"effect", &STR, 0},   {NULL, NULL, 0}};
OBJECT(DRIFT, ONP_J_OBJECT, drift_f);
ARRAY_OF(DRIFTS, DRIFT);
static const onp_jfield regression_f[] = {
    {"fixture", &STR_N, 0}, {"output", &STR_N, 0}, {"check", &STR, 0}, {"value", &REAL_N, 0},
    {"limit", &REAL_N, 0},  {"message", &STR, 0},  {NULL, NULL, 0}};
OBJECT(REGRESSION, ONP_J_OBJECT, regression_f);
ARRAY_OF(REGRESSIONS, REGRESSION);
static const onp_jfield criterion_f[] = {
    {"output", &STR_N, 0}, {"check", &STR, 0}, {"measured", &REAL_N, 0}, {"limit", &REAL_N, 0},
    {"bound", &STR, 0},    {"pass", &BOOL, 0}, {"margin", &REAL_N, 0},   {NULL, NULL, 0}};
OBJECT(CRITERION, ONP_J_OBJECT, criterion_f);
ARRAY_OF(CRITERIA, CRITERION);
static const onp_jfield gate_summary_f[] = {
    {"fixtures", &COUNT, 0}, {"outputs", &COUNT, 0}, {"regressions", &COUNT, 0}, {NULL, NULL, 0}};
OBJECT(GATE_SUMMARY, ONP_J_OBJECT, gate_summary_f);
static const onp_jfield gate_f[] = {{"schema", &STR, 1},
                                    {"verdict", &STR, 0},
                                    {"model", &STR, 0},
                                    {"criteria", &STR, 0},
                                    {"environment", &ENVIRONMENT, 0},
                                    {"environment_recorded", &BOOL, 0},
                                    {"env_drift_policy", &STR, 0},
                                    {"environment_drift", &DRIFTS, 0},
                                    {"causes", &CAUSES, 0},
                                    {"first_divergent", &FIRST_DIVERGENT, 0},
                                    {"regressions", &REGRESSIONS, 0},
                                    {"checks", &CRITERIA, 0},
                                    {"summary", &GATE_SUMMARY, 0},
                                    {"fixtures", &FIXTURES, 0},
                                    {NULL, NULL, 0}};
OBJECT(GATE, ONP_J_OBJECT, gate_f);

// --- the documents by schema id --------------------------------------------------------

static const struct {
    const char *schema;
    const onp_jspec *spec;
} docs[] = {
    {"onnxparity.check/1", &CHECK},       {"onnxparity.bisect/1", &BISECT},
    {"onnxparity.diagnose/1", &DIAGNOSE}, {"onnxparity.sweep/1", &SWEEP},
    {"onnxparity.gate/1", &GATE},
};

const onp_jspec *onp_jspec_of(const char *schema)
{
    for (size_t i = 0; schema && i < sizeof docs / sizeof docs[0]; i++)
        if (!strcmp(schema, docs[i].schema)) return docs[i].spec;
    return NULL;
}
