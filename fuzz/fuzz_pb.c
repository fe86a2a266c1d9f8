/*
 * fuzz_pb.c — libFuzzer target for TensorProto files (.pb):
 * onp_pb_tensor_decode on the raw bytes.
 *
 * A refusal must carry a format or input error with an offset inside the
 * input.  A tensor that decodes is checked for a consistent shape, then
 * encoded with raw_data and with the typed fields and decoded again: both
 * must give back the same tensor (onp_tensor_equal) and the same name.  Any
 * disagreement traps.
 */
#include <stdint.h>
#include <string.h>

#include "onnxparity/tfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENSURE(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) __builtin_trap();                                                                \
    } while (0)

static void check_shape(const onp_tensor *t)
{
    ENSURE(t->rank >= 0 && t->rank <= ONP_MAX_RANK);
    uint64_t count = 1;
    int zero = 0;
    for (int i = 0; i < t->rank; i++) {
        ENSURE(t->dims[i] >= 0);
        zero |= t->dims[i] == 0;
    }
    /* a 0 anywhere makes the product 0, whatever the other dims; otherwise
     * the decoder checked that the product fits */
    for (int i = 0; i < t->rank && !zero; i++) count *= (uint64_t)t->dims[i];
    ENSURE(t->count == (zero ? 0 : (int64_t)count));
    if (t->dtype == ONP_STRING) {
        ENSURE(t->count == 0 || t->strings);
        for (int64_t i = 0; i < t->count; i++) ENSURE(t->strings[i].n == 0 || t->strings[i].p);
    } else {
        ENSURE(t->nbytes == (size_t)t->count * onp_dtype_size(t->dtype));
        ENSURE(t->nbytes == 0 || t->data);
        if (t->dtype == ONP_BOOL)
            for (size_t i = 0; i < t->nbytes; i++) ENSURE(((const uint8_t *)t->data)[i] <= 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onp_tensor t;
    onp_error e;
    onp_error_clear(&e);
    if (onp_pb_tensor_decode(data, size, "fuzz.pb", 0, &t, &e)) {
        ENSURE(e.code == ONP_ERR_FORMAT || e.code == ONP_ERR_INPUT || e.code == ONP_ERR_NOMEM);
        ENSURE(e.offset >= -1 && e.offset <= (int64_t)size);
        ENSURE(!strcmp(e.file, "fuzz.pb"));
        ENSURE(t.data == NULL && t.strings == NULL && t.name == NULL);
        return 0;
    }
    check_shape(&t);
    for (int typed = 0; typed < 2; typed++) {
        onp_twrite_opts o;
        memset(&o, 0, sizeof o);
        o.pb_typed = typed;
        onp_buf b;
        onp_buf_init(&b, 0);
        if (onp_pb_tensor_encode(&t, &o, &b, &e) == 0) {
            onp_tensor back;
            ENSURE(onp_pb_tensor_decode(b.p, b.n, "again.pb", 0, &back, &e) == 0);
            ENSURE(onp_tensor_equal(&t, &back));
            ENSURE((!t.name && !back.name) || (t.name && back.name && !strcmp(t.name, back.name)));
            onp_tensor_release(&back);
        } else {
            ENSURE(e.code == ONP_ERR_NOMEM);
        }
        onp_buf_free(&b);
    }
    onp_tensor_release(&t);
    return 0;
}
