/*
 * rules_model.c — model hygiene (ONP501-503): a default-domain opset older
 * than ONNX Runtime runs, and graph outputs whose type or shape is not
 * declared (then `check` cannot hold ONNX Runtime's result against a
 * declared dtype or rank, and an exporter that could not type an output
 * often could not export the operation faithfully either).
 */
#include <stdio.h>
#include <string.h>

#include "lint/lint_int.h"

void lint_check_opset(lint_ctx *c, const lint_scope *main)
{
    (void)main;
    if (c->opset < 0 || c->opset >= 7) return;
    onp_lint_location loc = {ONP_LINT_LOC_MODEL, "", "", "", -1, "", -1};
    lint_emit(c, R_LEGACY_OPSET, &loc, LINT_ORDER(LINT_SEC_MODEL, 0),
              "default-domain opset %lld: ONNX Runtime has no kernels below opset 7; "
              "onnxparity upgrades the model to opset 7 in memory (Add/Sub/Mul/Div/Pow/Gemm/"
              "PRelu broadcasting and BatchNormalization's is_test rewritten), so what runs "
              "is not exactly what was exported",
              (long long)c->opset);
}

void lint_check_outputs(lint_ctx *c, const lint_scope *main)
{
    const onp_graph *g = main->g;
    for (size_t i = 0; i < g->n_outputs; i++) {
        const onp_value_info *vi = &g->outputs[i];
        const onp_type *t = &vi->type;
        onp_lint_location loc = {ONP_LINT_LOC_OUTPUT, "", vi->name, "", (int64_t)i, "", -1};
        uint64_t order = LINT_ORDER(LINT_SEC_OUTPUT, i);
        if (t->kind == ONP_TYPE_NONE || (t->kind == ONP_TYPE_TENSOR && !t->elem_type))
            lint_emit(c, R_OUTPUT_UNTYPED, &loc, order,
                      "output '%s' has %s: its dtype cannot be checked against the eager "
                      "output, and the exporter could not infer it",
                      vi->name, t->kind == ONP_TYPE_NONE ? "no type" : "no element type");
        else if (t->kind == ONP_TYPE_TENSOR && !t->has_shape)
            lint_emit(c, R_OUTPUT_SHAPELESS, &loc, order,
                      "output '%s' (%s) has no shape, not even a rank: a wrong rank or batch "
                      "dim shows only when the numbers are compared",
                      vi->name, onp_dtype_name(t->elem_type));
    }
}
