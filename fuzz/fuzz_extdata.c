/*
 * fuzz_extdata.c — libFuzzer target for external-data resolution
 * (src/model/extdata.c): the input is a model, parsed as if it lay at
 * DIR/model.onnx, where DIR is a scratch folder made once per process
 * holding
 *     weights.bin      4096 bytes (byte i = i mod 251)
 *     sub/w2.bin       64 bytes
 *     empty.bin        0 bytes
 *     link.bin         a symbolic link to weights.bin (must be refused)
 *     adir/            a folder (must be refused as data)
 * and, one level up, outside.bin (reachable only through "..": refused).
 * Every initializer of the main graph and every tensor attribute of its
 * nodes goes through onp_model_external_span and onp_model_tensor.  Checks:
 * the two agree; a span lies inside one of the files above and holds
 * exactly v->bytes; a materialised tensor has v's dtype and count; a
 * refusal has an error code of the documented kinds (INPUT, IO, FORMAT,
 * USAGE, NOMEM) and a message.  Seeds: fuzz/corpus/extdata/.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_tmp.h"
#include "onnxparity/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENSURE(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) __builtin_trap();                                                                \
    } while (0)

static char model_path[4200];

static void setup(void)
{
    if (model_path[0]) return;
    uint8_t w[4096];
    for (size_t i = 0; i < sizeof w; i++) w[i] = (uint8_t)(i % 251);
    fz_mkdir("m");
    fz_mkdir("m/sub");
    fz_mkdir("m/adir");
    if (fz_write("m/weights.bin", w, sizeof w) || fz_write("m/sub/w2.bin", w, 64) ||
        fz_write("m/empty.bin", "", 0) || fz_write("outside.bin", w, 16))
        __builtin_trap();
    char link[4200];
    if (symlink("weights.bin", fz_path("m/link.bin", link, sizeof link))) __builtin_trap();
    fz_path("m/model.onnx", model_path, sizeof model_path);
}

static int known_code(onp_errcode c)
{
    return c == ONP_ERR_INPUT || c == ONP_ERR_IO || c == ONP_ERR_FORMAT || c == ONP_ERR_USAGE ||
           c == ONP_ERR_NOMEM;
}

static void one(const onp_model *m, const onp_tensor_view *v)
{
    if (!v || !v->msg.p) return;
    onp_error e;
    onp_error_clear(&e);
    onp_span s;
    memset(&s, 0, sizeof s);
    int srs = v->is_external ? onp_model_external_span(m, v, &s, &e) : -1;
    if (v->is_external && srs == 0) {
        ENSURE(s.n == v->bytes);
        ENSURE(s.n <= 4096);
        for (size_t i = 0; i < s.n; i++) {
            volatile uint8_t b = s.p[i]; /* readable */
            (void)b;
        }
    } else if (v->is_external) {
        ENSURE(known_code(e.code) && e.msg[0]);
    }
    onp_tensor t;
    onp_error_clear(&e);
    int rc = onp_model_tensor(m, v, &t, &e);
    if (rc) {
        ENSURE(known_code(e.code) && e.msg[0]);
        /* a span that mapped: the tensor fails only on memory */
        if (v->is_external && srs == 0) ENSURE(e.code == ONP_ERR_NOMEM);
        return;
    }
    ENSURE(t.dtype == v->data_type && t.count == v->count);
    if (v->is_external) {
        ENSURE(srs == 0);
        if (t.dtype != ONP_STRING)
            ENSURE(t.nbytes == v->bytes && (!s.n || !memcmp(t.data, s.p, s.n)));
    }
    onp_tensor_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    onp_model *m = NULL;
    onp_error e;
    onp_error_clear(&e);
    if (onp_model_parse(data, size, model_path, &m, &e)) {
        ENSURE(m == NULL);
        return 0;
    }
    const onp_graph *g = onp_model_graph(m);
    for (size_t i = 0; i < g->n_initializers; i++) one(m, &g->initializers[i]);
    for (size_t i = 0; i < g->n_sparse_initializers; i++) {
        one(m, &g->sparse_initializers[i].values);
        one(m, &g->sparse_initializers[i].indices);
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_attrs; k++) {
            const onp_attr *a = &g->nodes[i].attrs[k];
            one(m, a->t);
            for (size_t j = 0; j < a->n_tensors; j++) one(m, &a->tensors[j]);
        }
    (void)onp_model_has_external(m);
    onp_model_close(m);
    return 0;
}
