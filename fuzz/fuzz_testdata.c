/*
 * fuzz_testdata.c — libFuzzer target for ONNX test-data folders
 * (src/tfile/testdata.c, and the readers it hands paths to).
 *
 * Input layout: pieces separated by the 4 bytes "\xffONP" (at most 12).
 * The first byte of a piece picks its file (mod 12, table `slots`), the
 * rest is its content; a piece that repeats a slot replaces it.  The files
 * are written into a fresh folder DIR/t laid out as an ONNX model folder:
 *     model.onnx, test_data_set_0/input_0.pb, ..., test_data_set_x/...,
 *     and a plain file named like a fixture folder.
 * Then onp_testdata_scan(DIR/t) and onp_tfile_read on every input and
 * output it lists, and onp_model_open(DIR/t/model.onnx) when there is one
 * (the path reader, mmap included).  Checks: fixtures sorted by index
 * with distinct indices, every path under its fixture folder, and errors of the
 * documented kinds only.  Seeds: fuzz/corpus/testdata/ (fuzz/gen_corpus.py
 * packs real test_data_set folders into this layout).
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_tmp.h"
#include "onnxparity/model.h"
#include "onnxparity/tfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENSURE(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) __builtin_trap();                                                                \
    } while (0)

#define N_SLOTS 12
#define SEP "\xffONP"

/* Where each slot's piece goes (its folder, or NULL; then the file). */
static const struct {
    const char *dir, *file;
} slots[N_SLOTS] = {
    {NULL, "t/model.onnx"},
    {"t/test_data_set_0", "t/test_data_set_0/input_0.pb"},
    {"t/test_data_set_0", "t/test_data_set_0/input_1.pb"},
    {"t/test_data_set_0", "t/test_data_set_0/output_0.pb"},
    {"t/test_data_set_1", "t/test_data_set_1/input_0.pb"},
    {"t/test_data_set_1", "t/test_data_set_1/output_0.pb"},
    {"t/test_data_set_7", "t/test_data_set_7/input_0.pb"},
    {"t/test_data_set_0", "t/test_data_set_0/input_3.pb"}, /* a gap after input_1 */
    {"t/test_data_set_0", "t/test_data_set_0/output_1.pb"},
    {"t/test_data_set_x", "t/test_data_set_x/input_0.pb"}, /* not a number */
    {"t/test_data_set_01", "t/test_data_set_01/input_00.pb"},
    {NULL, "t/test_data_set_2"}, /* a file, not a folder */
};

static int known_code(onp_errcode c)
{
    return c == ONP_ERR_INPUT || c == ONP_ERR_IO || c == ONP_ERR_FORMAT || c == ONP_ERR_USAGE ||
           c == ONP_ERR_NOMEM;
}

static void read_all(char **paths, size_t n, const char *dir)
{
    for (size_t i = 0; i < n; i++) {
        ENSURE(paths[i] && !strncmp(paths[i], dir, strlen(dir)));
        onp_tensor t;
        onp_error e;
        onp_error_clear(&e);
        onp_tread_opts ro = {(size_t)16 << 20};
        if (onp_tfile_read(paths[i], &ro, &t, &e)) {
            ENSURE(known_code(e.code));
            continue;
        }
        ENSURE(t.count >= 0 && t.rank >= 0 && t.rank <= ONP_MAX_RANK);
        onp_tensor_release(&t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char top[4200], path[4200];
    fz_rm_tree(fz_path("t", top, sizeof top));
    fz_mkdir("t");
    int have_model = 0;
    size_t pieces = 0;
    const uint8_t *p = data, *end = data + size;
    while (p < end && pieces < N_SLOTS) {
        const uint8_t *q = memmem(p, (size_t)(end - p), SEP, 4);
        const uint8_t *stop = q ? q : end;
        if (stop > p) {
            unsigned s = p[0] % N_SLOTS;
            if (slots[s].dir) fz_mkdir(slots[s].dir);
            if (fz_write(slots[s].file, p + 1, (size_t)(stop - p - 1))) __builtin_trap();
            if (s == 0) have_model = 1;
            pieces++;
        }
        if (!q) break;
        p = q + 4;
    }
    onp_testdata td;
    onp_error e;
    onp_error_clear(&e);
    if (onp_testdata_scan(top, &td, &e) == 0) {
        for (size_t i = 0; i < td.n; i++) {
            const onp_fixture *f = &td.sets[i];
            ENSURE(f->index >= 0 && f->dir && !strncmp(f->dir, top, strlen(top)));
            if (i) ENSURE(td.sets[i - 1].index < f->index); /* "_01" is not a set */
            read_all(f->inputs, f->n_inputs, f->dir);
            read_all(f->outputs, f->n_outputs, f->dir);
        }
        onp_testdata_free(&td);
    } else {
        ENSURE(known_code(e.code));
    }
    if (have_model) {
        onp_model *m = NULL;
        onp_error_clear(&e);
        if (onp_model_open(fz_path("t/model.onnx", path, sizeof path), &m, &e) == 0) {
            ENSURE(!strcmp(onp_model_path(m), path));
            onp_model_close(m);
        } else {
            ENSURE(m == NULL && known_code(e.code));
        }
    }
    return 0;
}
