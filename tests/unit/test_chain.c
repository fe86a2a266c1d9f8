/*
 * test_chain.c — the deployment chain's tables and its reading of a
 * stage's precision from the graph (chain.h): names round-trip, the
 * epsilons docs/chain.md states, and onp_chain_prec_of_model on graphs
 * built by hand (a quantization op, a float16 or bfloat16 initializer,
 * neither).  The chain's runs need ONNX Runtime and torch: tests/py/test_chain.py.
 */
#include <math.h>
#include <stdint.h>

#include "onnxparity/chain.h"
#include "onnxparity/dtype.h"
#include "pbenc.h"
#include "testhelp.h"

static void test_names(void)
{
    for (int k = 0; k < ONP_CHAIN_PREC_COUNT; k++) {
        onp_chain_prec p = ONP_CHAIN_PREC_COUNT;
        CHECK(onp_chain_prec_from_name(onp_chain_prec_name((onp_chain_prec)k), &p) == 0);
        CHECK(p == (onp_chain_prec)k);
    }
    onp_chain_prec p = ONP_CHAIN_FP32;
    CHECK(onp_chain_prec_from_name("fp8", &p) == -1 && p == ONP_CHAIN_FP32);
    CHECK(onp_chain_prec_from_name(NULL, &p) == -1);
    CHECK(!strcmp(onp_chain_prec_name(ONP_CHAIN_PREC_COUNT), "?"));
    CHECK(!strcmp(onp_chain_status_name(ONP_CHAIN_WITHIN), "within"));
    CHECK(!strcmp(onp_chain_status_name(ONP_CHAIN_BEYOND), "beyond"));
    CHECK(!strcmp(onp_chain_status_name(ONP_CHAIN_ERROR), "error"));
    CHECK(!strcmp(onp_chain_status_name(ONP_CHAIN_STATUS_COUNT), "?"));
}

/* docs/chain.md's table: fp32 2^-23, fp16 2^-10, bf16 2^-7, int8 2^-7 */
static void test_eps(void)
{
    CHECK(onp_chain_prec_eps(ONP_CHAIN_FP32) == ldexp(1, -23));
    CHECK(onp_chain_prec_eps(ONP_CHAIN_FP16) == ldexp(1, -10));
    CHECK(onp_chain_prec_eps(ONP_CHAIN_BF16) == ldexp(1, -7));
    CHECK(onp_chain_prec_eps(ONP_CHAIN_INT8) == ldexp(1, -7));
    CHECK(onp_chain_prec_eps(ONP_CHAIN_PREC_COUNT) == 0);
}

/* A model of one node `op` (X -> Y) and one initializer W of dtype `dt`,
 * parsed into *m. */
static int one_node_model(const char *op, int32_t dt, onp_model **m)
{
    onp_buf node, init, graph, model;
    onp_buf_init(&node, 0);
    put_str(&node, 1, "X");
    put_str(&node, 2, "Y");
    put_str(&node, 3, "n0");
    put_str(&node, 4, op);
    const int64_t dims[1] = {2};
    const uint8_t raw[8] = {0};
    tensor_raw(&init, "W", dt, 1, dims, raw, 2 * onp_dtype_size(dt));
    onp_buf_init(&graph, 0);
    put_msg(&graph, 1, &node);
    put_str(&graph, 2, "g");
    put_msg(&graph, 5, &init);
    onp_buf_init(&model, 0);
    onp_pb_put_uint(&model, 1, 8);
    put_msg(&model, 7, &graph);
    onp_error e;
    int rc = onp_model_parse(model.p, model.n, NULL, m, &e);
    onp_buf_free(&model);
    return rc;
}

static void test_prec_of_model(void)
{
    static const struct {
        const char *op;
        int32_t dt;
        onp_chain_prec want;
    } cases[] = {
        {"Relu", ONP_FLOAT, ONP_CHAIN_FP32},
        {"Relu", ONP_FLOAT16, ONP_CHAIN_FP16},
        {"Relu", ONP_BFLOAT16, ONP_CHAIN_BF16},
        {"QuantizeLinear", ONP_FLOAT, ONP_CHAIN_INT8},
        {"DynamicQuantizeLinear", ONP_FLOAT, ONP_CHAIN_INT8},
        {"MatMulInteger", ONP_FLOAT16, ONP_CHAIN_INT8}, /* the quantization op decides */
        {"QLinearConv", ONP_FLOAT, ONP_CHAIN_INT8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        onp_model *m = NULL;
        CHECK(one_node_model(cases[i].op, cases[i].dt, &m) == 0);
        if (!m) continue;
        CHECKF(onp_chain_prec_of_model(m) == cases[i].want, "%s with a %s initializer", cases[i].op,
               onp_dtype_name(cases[i].dt));
        onp_model_close(m);
    }
}

TEST_MAIN(test_names, test_eps, test_prec_of_model)
