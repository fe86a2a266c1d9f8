/*
 * fuzz_npz.c — libFuzzer target for the .npz reader (src/tfile/npz.c).
 *
 * Opens the input as an archive in memory under a 16 MiB cap, looks every
 * member up by name and reads it.  The members that decode are written out
 * again as an .npz (stored or deflate) which must read back identical.
 * Seeds: fuzz/corpus/npz/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/tfile.h"

#define MAX_MEMBERS 16

/* Write the tensors as an archive and check it reads back the same. */
static void roundtrip(onp_tensor *ts, size_t n, int deflate)
{
    const onp_tensor *p[MAX_MEMBERS];
    onp_twrite_opts o = {0, 0, 0, deflate, 0};
    onp_buf b;
    onp_npz *z;
    onp_error e;
    for (size_t i = 0; i < n; i++) p[i] = &ts[i];
    onp_buf_init(&b, 0);
    if (onp_npz_encode(p, n, &o, &b, &e) == 0) {
        if (onp_npz_open_mem(b.p, b.n, "re.npz", NULL, &z, &e) != 0) abort();
        if (onp_npz_count(z) != n) abort();
        for (size_t i = 0; i < n; i++) {
            onp_tensor t;
            if (onp_npz_read(z, i, &t, &e) != 0) abort();
            if (!onp_tensor_equal(&t, &ts[i]) || strcmp(t.name, ts[i].name)) abort();
            onp_tensor_release(&t);
        }
        onp_npz_close(z);
    }
    onp_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onp_tread_opts ro = {(size_t)16 << 20};
    onp_tensor ts[MAX_MEMBERS];
    onp_npz *z;
    onp_error e;
    size_t ok = 0;
    if (onp_npz_open_mem(data, size, "fuzz.npz", &ro, &z, &e) != 0) return 0;
    for (size_t i = 0; i < onp_npz_count(z); i++) {
        const char *name = onp_npz_name(z, i);
        if (!name || onp_npz_find(z, name) != (long)i) abort();
        onp_tensor t;
        if (onp_npz_read(z, i, &t, &e) != 0) continue;
        if (!t.name || strcmp(t.name, name)) abort();
        if (ok < MAX_MEMBERS)
            ts[ok++] = t;
        else
            onp_tensor_release(&t);
    }
    onp_npz_close(z);
    roundtrip(ts, ok, (int)(size & 1));
    for (size_t i = 0; i < ok; i++) onp_tensor_release(&ts[i]);
    return 0;
}
