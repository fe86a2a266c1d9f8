/*
 * tdump.c — test tool: read tensor files and models with libonnxparity and
 * print what was read, one tab-separated line per tensor, so python tests
 * can check it against onnx.numpy_helper:
 *
 *   T <path> <name> <dtype> <dims,comma,separated> <sha256 of the values>
 *   M <path> <nodes> <inputs|joined> <outputs|joined> <initializers>
 *   E <path> <one-line error>
 *
 * Paths come one per line on stdin.  A model prints its M line and a T line
 * per main-graph initializer.  The hashed bytes are the values in C order,
 * little-endian; a string tensor hashes each string as an 8-byte
 * little-endian length followed by its bytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "onnxparity/model.h"
#include "onnxparity/tfile.h"
#include "util/sha256.h"

static void print_tensor(const char *path, const onp_tensor *t)
{
    onp_sha256 s;
    uint8_t d[32];
    char hex[65];
    onp_sha256_init(&s);
    if (t->dtype == ONP_STRING) {
        for (int64_t i = 0; i < t->count; i++) {
            uint64_t n = t->strings[i].n;
            uint8_t lb[8];
            for (int k = 0; k < 8; k++) lb[k] = (uint8_t)(n >> (8 * k));
            onp_sha256_update(&s, lb, 8);
            onp_sha256_update(&s, t->strings[i].p, t->strings[i].n);
        }
    } else {
        onp_sha256_update(&s, t->data, t->nbytes);
    }
    onp_sha256_final(&s, d);
    onp_sha256_tohex(d, hex);
    printf("T\t%s\t%s\t%s\t", path, t->name ? t->name : "", onp_dtype_name(t->dtype));
    for (int i = 0; i < t->rank; i++) printf("%s%" PRId64, i ? "," : "", t->dims[i]);
    printf("\t%s\n", hex);
}

static void error_line(const char *path, const onp_error *e)
{
    char buf[2048];
    printf("E\t%s\t%s\n", path, onp_error_format(e, buf, sizeof buf));
}

static void do_model(const char *path)
{
    onp_error e;
    onp_model *m;
    onp_error_clear(&e);
    if (onp_model_open(path, &m, &e)) {
        error_line(path, &e);
        return;
    }
    const onp_graph *g = onp_model_graph(m);
    printf("M\t%s\t%zu\t", path, g->n_nodes);
    for (size_t i = 0; i < g->n_inputs; i++) printf("%s%s", i ? "|" : "", g->inputs[i].name);
    printf("\t");
    for (size_t i = 0; i < g->n_outputs; i++) printf("%s%s", i ? "|" : "", g->outputs[i].name);
    printf("\t%zu\n", g->n_initializers);
    for (size_t i = 0; i < g->n_initializers; i++) {
        onp_tensor t;
        if (onp_model_tensor(m, &g->initializers[i], &t, &e)) {
            error_line(path, &e);
            continue;
        }
        print_tensor(path, &t);
        onp_tensor_release(&t);
    }
    onp_model_close(m);
}

int main(void)
{
    char line[8192];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0]) continue;
        size_t n = strlen(line);
        if (n > 5 && !strcmp(line + n - 5, ".onnx")) {
            do_model(line);
            continue;
        }
        onp_error e;
        onp_tensor t;
        onp_error_clear(&e);
        if (onp_tfile_read(line, NULL, &t, &e)) {
            error_line(line, &e);
            continue;
        }
        print_tensor(line, &t);
        onp_tensor_release(&t);
        fflush(stdout);
    }
    return 0;
}
