/*
 * registry.c — the lint rule table and the check tables: what each rule is
 * (id, name, severity, cause, summary, fix) and which functions look for
 * findings.  docs/lint.md explains every rule at length.
 *
 * How to add a rule:
 *   1. add its index to `lint_rule_ix` (src/lint/lint_int.h), in id order;
 *   2. add its row to `rules` below under that index (the static_assert
 *      keeps the enum and the table the same length; a unit test checks that
 *      ids ascend and ids and names are unique).  An id is never reused:
 *      retire a rule by keeping its row and never emitting it;
 *   3. emit it with lint_emit_node()/lint_emit() from a check in the file of
 *      its family (rules_training.c, rules_shape.c, rules_opsem.c,
 *      rules_model.c, manifest.c), or a new file with its check registered
 *      in `lint_node_checks` / `lint_model_checks` below;
 *   4. test it firing and not firing in tests/unit/test_lint.c, and document
 *      it in docs/lint.md.
 * Ids: ONP1xx training-mode, 2xx baked-shape, 3xx traced-control-flow,
 * 4xx op-semantics, 5xx model hygiene, 6xx nondeterminism / reference,
 * 7xx state-mutation.
 */
#include <string.h>

#include "lint/lint_int.h"

#define E ONP_LINT_ERROR
#define W ONP_LINT_WARNING
#define I ONP_LINT_INFO

static const onp_lint_rule rules[] = {
    [R_DROPOUT_TRAINING] = {"ONP101", "dropout-training", E, ONP_CAUSE_TRAINING_MODE,
                            "Dropout that runs in training mode: it zeroes activations at random",
                            "call model.eval() before torch.onnx.export (or export with "
                            "training=torch.onnx.TrainingMode.EVAL)"},
    [R_DROPOUT_TRAINING_UNKNOWN] = {"ONP102", "dropout-training-unknown", W,
                                    ONP_CAUSE_TRAINING_MODE,
                                    "Dropout whose training_mode input is not provably false",
                                    "export in eval mode so the exporter drops the Dropout or "
                                    "leaves training_mode out; never feed training_mode=true"},
    [R_DROPOUT_TRAINING_NOOP] = {"ONP103", "dropout-training-noop", I, ONP_CAUSE_TRAINING_MODE,
                                 "Dropout in training mode with ratio 0 (no effect, but the model "
                                 "was exported in training mode)",
                                 "call model.eval() before export; check the other modules"},
    [R_BATCHNORM_TRAINING] = {"ONP104", "batchnorm-training", E, ONP_CAUSE_TRAINING_MODE,
                              "BatchNormalization in training mode: it normalises with the "
                              "statistics of the batch, not the running ones",
                              "call model.eval() before torch.onnx.export (or export with "
                              "training=torch.onnx.TrainingMode.EVAL)"},
    [R_RANDOM_DROPOUT_MASK] = {"ONP105", "random-dropout-mask", W, ONP_CAUSE_NONDETERMINISM,
                               "a random tensor turned into a mask that multiplies activations "
                               "(a dropout written by hand, live at inference)",
                               "guard the random mask with `if self.training:` and export in "
                               "eval mode"},
    [R_MODULES_IN_TRAINING] = {"ONP106", "modules-in-training", E, ONP_CAUSE_TRAINING_MODE,
                               "parity.json: modules were in training mode at export",
                               "call model.eval() before capture/export"},
    [R_EXPORTER_TRAINING] = {"ONP107", "exporter-training-warning", W, ONP_CAUSE_TRAINING_MODE,
                             "parity.json: the exporter warned about training mode",
                             "call model.eval() and export with "
                             "training=torch.onnx.TrainingMode.EVAL"},
    [R_MODULES_IN_TRAINING_INERT] = {"ONP108", "modules-in-training-inert", W,
                                     ONP_CAUSE_TRAINING_MODE,
                                     "parity.json: modules were in training mode at export, but "
                                     "no node of the graph computes in training form",
                                     "call model.eval() before capture/export all the same: "
                                     "another exporter or torch version may keep the mode"},
    [R_STATIC_BATCH_INPUT] = {"ONP201", "static-batch-input", W, ONP_CAUSE_BAKED_SHAPE,
                              "a graph input whose dim 0 (the batch) is static",
                              "declare it dynamic: torch.onnx.export(..., dynamic_axes={'x': {0: "
                              "'batch'}}), or dynamic_shapes={'x': {0: Dim('batch')}} with "
                              "dynamo=True"},
    [R_BATCH_CONSTANT] = {"ONP202", "batch-constant", W, ONP_CAUSE_BAKED_SHAPE,
                          "a shape constant (Reshape, Expand, Tile, ConstantOfShape, Slice, "
                          "Resize) holds an input's export-time batch size",
                          "compute the size from the tensor: x.flatten(1) or x.view(x.size(0), "
                          "-1) instead of x.view(8, -1), and declare dim 0 dynamic"},
    [R_CONSTANT_SHAPE_DYNAMIC] = {"ONP203", "constant-shape-dynamic-input", W,
                                  ONP_CAUSE_BAKED_SHAPE,
                                  "Reshape to a constant dim 0 of a value whose dim 0 is "
                                  "dynamic: shape arithmetic folded into a constant",
                                  "keep the size symbolic: x.view(x.size(0), -1) or "
                                  "x.flatten(1), never int(x.size(0)) or a literal"},
    [R_SHAPE_RISK] = {"ONP204", "shape-risk", W, ONP_CAUSE_BAKED_SHAPE,
                      "parity.json: a dim varies across fixtures but was exported static",
                      "declare the dim dynamic (dynamic_axes / dynamic_shapes)"},
    [R_EXPORTER_SHAPE] = {"ONP205", "exporter-shape-warning", W, ONP_CAUSE_BAKED_SHAPE,
                          "parity.json: the exporter warned about batch size or dynamic shapes",
                          "export at the batch size the warning asks for, or declare the dims "
                          "dynamic"},
    [R_CONSTANT_RESIZE_SIZE] = {"ONP206", "constant-resize-size", W, ONP_CAUSE_BAKED_SHAPE,
                                "Resize to constant output sizes in a model with a dynamic "
                                "spatial or sequence dim: the export-time size is kept",
                                "pass scale_factor to F.interpolate, or sizes computed from "
                                "the tensor (x.shape[-2:]) without int()"},
    [R_SIZE_ONE_TRACE] = {"ONP207", "size-one-trace", W, ONP_CAUSE_BAKED_SHAPE,
                          "parity.json: the traced fixture has size 1 in a dynamic dim; "
                          "torch.export specializes such a dim into a constant",
                          "trace a fixture with sizes >= 2 in every dynamic dim: "
                          "capture(..., trace_fixture=\"auto\"), or put such a fixture first; "
                          "declaring the dim dynamic is not enough"},
    [R_TRACER_WARNING] = {"ONP301", "tracer-warning", W, ONP_CAUSE_TRACED_CONTROL_FLOW,
                          "parity.json: a TracerWarning: a Python value was fixed at trace time",
                          "express the branch with torch.where (or torch.cond); keep sizes as "
                          "tensors: no .item(), int(), len() or `if tensor` in forward"},
    [R_TRACE_PATH_DIFFERS] = {"ONP302", "trace-path-differs", W, ONP_CAUSE_TRACED_CONTROL_FLOW,
                              "parity.json: eager called other modules than the trace did",
                              "the forward branches on data: express the branch with "
                              "torch.where or torch.cond"},
    [R_UNROLLED_LOOP] = {"ONP303", "unrolled-loop", W, ONP_CAUSE_TRACED_CONTROL_FLOW,
                         "a Python loop over a dynamic dim unrolled by the trace: one Gather "
                         "per index 0..k-1 of the same value",
                         "vectorise the loop (operate on the whole batch), or use torch.export "
                         "(dynamo=True), which refuses the loop rather than unrolling it"},
    [R_TOPK_TIES] = {"ONP401", "topk-ties", W, ONP_CAUSE_OP_SEMANTICS,
                     "TopK whose indices are used: the order of equal values differs",
                     "compare values rather than indices, or break ties explicitly (add a "
                     "tiny index-dependent term)"},
    [R_ARG_SELECT_LAST] = {"ONP402", "arg-select-last-index", W, ONP_CAUSE_OP_SEMANTICS,
                           "ArgMax/ArgMin with select_last_index=1: torch returns the first "
                           "extreme",
                           "export torch.argmax/argmin as they are (select_last_index=0)"},
    [R_RESIZE_SEMANTICS] = {"ONP403", "resize-semantics", W, ONP_CAUSE_OP_SEMANTICS,
                            "Resize whose mode, coordinate transformation or rounding is not "
                            "one torch's interpolate has",
                            "re-export the interpolate from torch at opset_version 11 or more "
                            "(there its nearest, nearest-exact, bilinear and bicubic modes, "
                            "align_corners False or True, map to Resize attributes that match); "
                            "a Resize edited by hand or written by another tool needs the "
                            "attributes torch's mode implies"},
    [R_UPSAMPLE] = {"ONP404", "upsample-deprecated", W, ONP_CAUSE_OP_SEMANTICS,
                    "Upsample: deprecated since opset 10; its linear mode uses asymmetric "
                    "coordinates",
                    "raise opset_version to 11 or more so interpolate exports as Resize"},
    [R_PAD_MODE] = {"ONP405", "pad-mode", I, ONP_CAUSE_OP_SEMANTICS,
                    "Pad in reflect/edge/wrap mode: pads as large as the dim, or negative, "
                    "differ between runtimes",
                    "keep reflect pads smaller than the dimension"},
    [R_INTEGER_DIV] = {"ONP406", "integer-div", W, ONP_CAUSE_OP_SEMANTICS,
                       "Div on signed integers truncates toward zero; torch's // floors",
                       "divide in floating point and floor (torch.div(a, b, "
                       "rounding_mode='floor') on floats), or keep operands non-negative"},
    [R_MOD_SIGN] = {"ONP407", "mod-sign", W, ONP_CAUSE_OP_SEMANTICS,
                    "Mod whose fmod attribute gives the result another sign than torch's %",
                    "torch.remainder / % is Mod fmod=0 on integers; torch.fmod is fmod=1"},
    [R_NAN_PROPAGATION] = {"ONP408", "nan-propagation", I, ONP_CAUSE_OP_SEMANTICS,
                           "Clip/Max/Min/ReduceMax/ReduceMin on floats: NaN handling differs "
                           "between torch and runtimes",
                           "keep NaN out of the inputs (torch.nan_to_num) where it matters"},
    [R_ROUND_HALF_EVEN] = {"ONP409", "round-half-even", I, ONP_CAUSE_OP_SEMANTICS,
                           "Round rounds half to even (torch.round does too; floor(x + 0.5) "
                           "does not)",
                           "use torch.round in eager if the graph must match it"},
    [R_CAST_FLOAT_INT] = {"ONP410", "cast-float-to-int", I, ONP_CAUSE_OP_SEMANTICS,
                          "Cast from float to an integer type: NaN, infinities and out-of-range "
                          "values are undefined",
                          "clamp before casting (x.clamp(lo, hi).long())"},
    [R_GRID_SAMPLE] = {"ONP411", "grid-sample", W, ONP_CAUSE_OP_SEMANTICS,
                       "GridSample: out-of-range coordinates, padding modes and nearest "
                       "rounding differ between implementations",
                       "compare on grids that reach the border; prefer mode='bilinear', "
                       "padding_mode='zeros'"},
    [R_NMS] = {"ONP412", "non-max-suppression", W, ONP_CAUSE_OP_SEMANTICS,
               "NonMaxSuppression: selection among equal scores and output layout differ "
               "from torchvision.ops.nms",
               "compare the kept boxes as sets; break score ties in the model"},
    [R_SCATTER_DUPLICATES] = {"ONP413", "scatter-duplicates", W, ONP_CAUSE_OP_SEMANTICS,
                              "ScatterND/ScatterElements without reduction whose indices may "
                              "repeat: which write wins is unspecified",
                              "make indices unique, or use index_add_/scatter_add_ (reduction "
                              "add)"},
    [R_EXPORTER_OP] = {"ONP414", "exporter-op-warning", W, ONP_CAUSE_OP_SEMANTICS,
                       "parity.json: the exporter warned that an operator is substituted, "
                       "unsupported or may be incorrect",
                       "raise opset_version, or rewrite the operation with ops the exporter "
                       "maps exactly"},
    [R_EXPORTER_NOTE] = {"ONP415", "exporter-note", I, ONP_CAUSE_UNKNOWN,
                         "parity.json: another warning from torch.onnx during export",
                         "read the warning; most are harmless"},
    [R_REDUCED_PRECISION] = {"ONP416", "reduced-precision-cast", I, ONP_CAUSE_REDUCED_PRECISION,
                             "a Cast to float16 or bfloat16 inside a graph whose inputs and "
                             "outputs are wider: values lose precision there",
                             "keep the layer in float32, or compare with the tolerance the "
                             "narrow type allows (float16 ~1e-3, bfloat16 ~8e-3 relative)"},
    [R_FLOAT8_SATURATE] = {"ONP417", "float8-saturate", W, ONP_CAUSE_OP_SEMANTICS,
                           "a Cast to a float8 type that saturates (saturate=1, ONNX's default): "
                           "a value beyond the type's largest finite one becomes that value, "
                           "where torch's cast gives inf or NaN",
                           "clamp the value to the type's range in forward before the cast "
                           "(x.clamp(-448, 448) for float8_e4m3fn), so both give the largest "
                           "finite value"},
    [R_LEGACY_OPSET] = {"ONP501", "legacy-opset", W, ONP_CAUSE_OP_SEMANTICS,
                        "default-domain opset below 7: ONNX Runtime has no kernels for it",
                        "re-export with opset_version >= 13; onnxparity upgrades to 7 in "
                        "memory meanwhile"},
    [R_OUTPUT_UNTYPED] = {"ONP502", "output-untyped", W, ONP_CAUSE_UNKNOWN,
                          "a graph output without an element type",
                          "export with output_names and let the exporter's shape inference "
                          "run; or run onnx.shape_inference"},
    [R_OUTPUT_SHAPELESS] = {"ONP503", "output-shapeless", I, ONP_CAUSE_UNKNOWN,
                            "a graph output without a shape: its rank cannot be checked",
                            "run onnx.shape_inference.infer_shapes on the model"},
    [R_RANDOM_OP] = {"ONP601", "random-op", W, ONP_CAUSE_NONDETERMINISM,
                     "a random operator: its values cannot match torch's generator",
                     "move sampling out of the exported graph (pass the noise as an input)"},
    [R_EAGER_NONDETERMINISTIC] = {"ONP602", "eager-nondeterministic", W, ONP_CAUSE_REFERENCE,
                                  "parity.json: two eager runs on the same input differed",
                                  "torch.use_deterministic_algorithms(True); remove randomness "
                                  "from forward"},
    [R_STATE_MUTATION] = {"ONP701", "state-mutation", E, ONP_CAUSE_STATE_MUTATION,
                          "parity.json: the forward changes the model's own state (a parameter, a "
                          "buffer, or an attribute its outputs depend on): the graph freezes it",
                          "make the state an explicit input and output of forward (take it, "
                          "return the new value), or keep it outside forward"},
    [R_INPUT_MUTATION] = {"ONP702", "input-mutation", W, ONP_CAUSE_STATE_MUTATION,
                          "parity.json: the forward writes to one of its inputs in place",
                          "compute on a new tensor (y = x * 2, not x.mul_(2)), or return the "
                          "updated value as an explicit output"},
    [R_ATTRIBUTE_MUTATION] = {"ONP703", "attribute-mutation", W, ONP_CAUSE_STATE_MUTATION,
                              "parity.json: the forward changes a Python attribute of a module "
                              "(a cache, a counter) that the graph cannot hold",
                              "keep the state outside forward, or make it an explicit input and "
                              "output"},
    [R_STATE_MUTATION_UNREAD] = {"ONP704", "state-mutation-unread", W, ONP_CAUSE_STATE_MUTATION,
                                 "parity.json: the forward changes a parameter or a buffer that no "
                                 "output reads: the numbers agree call after call, the state does "
                                 "not persist in the graph",
                                 "if code reads the state after forward (a counter, a saved "
                                 "state_dict), return it as an explicit output; otherwise move the "
                                 "update out of forward"},
};
_Static_assert(sizeof rules / sizeof rules[0] == R_COUNT, "one row per lint_rule_ix");

#undef E
#undef W
#undef I

/* Node checks: `ops` lists the default-domain operators each one looks at
 * (NULL: every node, the check filters itself).  To add one: write the
 * check in its family's file, declare it in lint_int.h, add a row. */
const lint_node_check lint_node_checks[] = {
    {"|Dropout|", lint_check_dropout},
    {"|BatchNormalization|", lint_check_batchnorm},
    {"|RandomNormal|RandomUniform|RandomNormalLike|RandomUniformLike|Bernoulli|Multinomial|",
     lint_check_random},
    {"|Reshape|Expand|Tile|ConstantOfShape|Slice|Resize|", lint_check_shape_constants},
    {"|Resize|", lint_check_resize_size},
    {"|Gather|", lint_check_unrolled},
    {"|TopK|", lint_check_topk},
    {"|ArgMax|ArgMin|", lint_check_argmax},
    {"|Resize|", lint_check_resize},
    {"|Upsample|", lint_check_upsample},
    {"|Pad|", lint_check_pad},
    {"|Div|Mod|", lint_check_div_mod},
    {"|Clip|Max|Min|ReduceMax|ReduceMin|", lint_check_nan},
    {"|Round|", lint_check_round},
    {"|Cast|", lint_check_cast},
    {"|Cast|", lint_check_lowp_cast},
    {"|Cast|", lint_check_float8_cast},
    {NULL, lint_check_gridsample}, /* also com.microsoft::GridSample */
    {"|NonMaxSuppression|", lint_check_nms},
    {"|ScatterND|ScatterElements|Scatter|", lint_check_scatter},
};
const size_t lint_n_node_checks = sizeof lint_node_checks / sizeof lint_node_checks[0];

/* Model checks: run once over the main graph. */
const lint_model_fn lint_model_checks[] = {
    lint_check_opset,
    lint_check_inputs,
    lint_check_outputs,
    lint_check_manifest,
};
const size_t lint_n_model_checks = sizeof lint_model_checks / sizeof lint_model_checks[0];

const onp_lint_rule *lint_rule(lint_rule_ix ix)
{
    return &rules[ix];
}

size_t onp_lint_rule_count(void)
{
    return R_COUNT;
}

const onp_lint_rule *onp_lint_rule_at(size_t i)
{
    return i < R_COUNT ? &rules[i] : NULL;
}

const onp_lint_rule *onp_lint_rule_find(const char *id_or_name)
{
    if (!id_or_name) return NULL;
    for (size_t i = 0; i < R_COUNT; i++)
        if (!strcmp(rules[i].id, id_or_name) || !strcmp(rules[i].name, id_or_name))
            return &rules[i];
    return NULL;
}

static const char *const severity_names[] = {"info", "warning", "error"};
_Static_assert(sizeof severity_names / sizeof severity_names[0] == ONP_LINT_SEVERITY_COUNT,
               "one name per severity");

const char *onp_lint_severity_name(onp_lint_severity s)
{
    return (unsigned)s < ONP_LINT_SEVERITY_COUNT ? severity_names[s] : "?";
}

int onp_lint_severity_from_name(const char *name, onp_lint_severity *out)
{
    for (int s = 0; name && s < ONP_LINT_SEVERITY_COUNT; s++)
        if (!strcmp(name, severity_names[s])) {
            *out = (onp_lint_severity)s;
            return 0;
        }
    return -1;
}

static const char *const cause_names[] = {"training-mode",       "baked-shape",
                                          "traced-control-flow", "op-semantics",
                                          "graph-optimization",  "execution-provider",
                                          "runtime-version",     "nondeterminism",
                                          "reference",           "state-mutation",
                                          "reduced-precision",   "input-dtype",
                                          "float-noise",         "unknown"};
_Static_assert(sizeof cause_names / sizeof cause_names[0] == ONP_CAUSE_COUNT, "one name per cause");

const char *onp_cause_name(onp_cause c)
{
    return (unsigned)c < ONP_CAUSE_COUNT ? cause_names[c] : "?";
}

static const char *const loc_names[] = {"model", "input", "output", "node", "module", "source"};
_Static_assert(sizeof loc_names / sizeof loc_names[0] == ONP_LINT_LOC_SOURCE + 1,
               "one name per location kind");

const char *onp_lint_loc_kind_name(onp_lint_loc_kind k)
{
    return (unsigned)k <= ONP_LINT_LOC_SOURCE ? loc_names[k] : "?";
}
