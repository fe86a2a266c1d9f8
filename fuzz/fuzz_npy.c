/*
 * fuzz_npy.c — libFuzzer target for the .npy reader (src/tfile/npy.c).
 *
 * Decodes the input from memory under a 16 MiB cap.  Whatever decodes must
 * survive a round trip: encoded again (when the writer accepts it: strings
 * with NUL bytes are refused) it must decode to an identical tensor, in both
 * byte orders and both memory orders.  Seeds: fuzz/corpus/npy/.
 */
#include <stdint.h>
#include <stdlib.h>

#include "onnxparity/tfile.h"

static void roundtrip(const onp_tensor *t, int opt)
{
    onp_twrite_opts o = {opt & 1, opt >> 1 & 1, opt >> 2, 0, 0};
    onp_buf b;
    onp_tensor back;
    onp_error e;
    onp_buf_init(&b, 0);
    if (onp_npy_encode(t, &o, &b, &e) == 0) {
        if (onp_npy_decode(b.p, b.n, "re.npy", NULL, &back, &e) != 0) abort();
        if (!onp_tensor_equal(t, &back)) abort();
        onp_tensor_release(&back);
    }
    onp_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onp_tread_opts ro = {(size_t)16 << 20};
    onp_tensor t;
    onp_error e;
    if (onp_npy_decode(data, size, "fuzz.npy", &ro, &t, &e) == 0) {
        roundtrip(&t, (int)(size & 15));
        onp_tensor_release(&t);
    }
    return 0;
}
