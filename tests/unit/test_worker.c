/*
 * test_worker.c — isolated sessions (onp_session_opts.isolate,
 * src/ort/ort_worker.c): the same introspection, results and errors as an
 * in-process session, across a worker process; concurrent runs; the memory
 * cap on outputs; no ORT thread in the parent.  Crashes and hangs need a
 * misbehaving kernel and are tested from the command line
 * (tests/py/test_isolation.py).
 *
 * Every isolated session here is opened before the one in-process session
 * (the last test): a process should not fork while ORT's threads run.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnxparity/ort.h"
#include "onnxparity/tensor.h"
#include "onnxparity/tfile.h"
#include "testhelp.h"

#define TESTDATA "/usr/share/libonnx-testdata/data/"
#define ADD TESTDATA "node/test_add/"
#define STR2F TESTDATA "node/test_cast_STRING_to_FLOAT/"
#define F2STR TESTDATA "node/test_cast_FLOAT_to_STRING/"

/* ONNX Runtime's own one-time allocations are not ours (see test_ort.c). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libonnxruntime.so\n";
}

static onp_ort *g_ort;
static int g_tried;

static onp_ort *ort_or_null(void)
{
    if (!g_tried) {
        onp_error e;
        g_tried = 1;
        if (onp_ort_open(NULL, &g_ort, &e)) g_ort = NULL;
    }
    return g_ort;
}

#define NEED(ort, path)                                                                            \
    onp_ort *ort = ort_or_null();                                                                  \
    if (!ort) SKIP("no ONNX Runtime library found");                                               \
    if (access(path, R_OK) != 0) SKIP(path " is absent (Debian package libonnx-testdata)")

static onp_session_opts isolated(void)
{
    onp_session_opts o;
    memset(&o, 0, sizeof o);
    o.isolate = 1;
    return o;
}

static int threads_now(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    for (struct dirent *x; (x = readdir(d));)
        if (x->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* Read input_K.pb / output_K.pb of a test-data set. */
/* The tensor in dir/name, in storage of its own: the reader may view an
 * aligned .pb's bytes in the file's map, which the memory cap does not
 * count, and the cap tests below count what is held. */
static int read_pb(const char *dir, const char *name, onp_tensor *t)
{
    char path[1024];
    onp_error e;
    onp_tensor m;
    snprintf(path, sizeof path, "%s%s", dir, name);
    if (onp_tfile_read(path, NULL, &m, &e)) return -1;
    int rc = onp_tensor_copy(t, &m, &e);
    onp_tensor_release(&m);
    return rc;
}

static void test_add_isolated(void)
{
    NEED(ort, ADD "model.onnx");
    onp_error e;
    onp_session *s;
    onp_session_opts o = isolated();
    o.opt_level = ONP_ORT_OPT_BASIC;
    CHECK(onp_session_open(ort, ADD "model.onnx", &o, &s, &e) == 0);
    if (!s) return;
    CHECK(threads_now() == 1); /* the ORT env and its threads live in the worker only */
    CHECK(onp_session_input_count(s) == 2 && onp_session_output_count(s) == 1);
    const onp_ort_io *x = onp_session_input(s, 0);
    CHECK(!strcmp(x->name, "x") && x->dtype == ONP_FLOAT && x->rank == 3 && x->dims[2] == 5);
    CHECK(!strcmp(onp_session_output(s, 0)->name, "sum"));
    const onp_session_desc *d = onp_session_describe(s);
    CHECK(!strcmp(d->provider, "CPUExecutionProvider") && d->opt_level == ONP_ORT_OPT_BASIC);
    CHECK(!strcmp(d->model, ADD "model.onnx"));

    onp_tensor in[2], want, got;
    CHECK(read_pb(ADD "test_data_set_0/", "input_0.pb", &in[0]) == 0);
    CHECK(read_pb(ADD "test_data_set_0/", "input_1.pb", &in[1]) == 0);
    CHECK(read_pb(ADD "test_data_set_0/", "output_0.pb", &want) == 0);
    for (int k = 0; k < 3; k++) { /* one worker, many runs */
        CHECK(onp_session_run(s, in, 2, NULL, 0, &got, &e) == 0);
        CHECK(onp_tensor_equal(&want, &got));
        CHECK(got.name && !strcmp(got.name, "sum"));
        onp_tensor_release(&got);
    }
    /* the worker's error comes back verbatim: a wrong dtype */
    onp_tensor bad;
    int64_t dims[3] = {3, 4, 5};
    CHECK(onp_tensor_alloc(&bad, ONP_DOUBLE, 3, dims, &e) == 0);
    onp_tensor_set_name(&bad, "x", &e);
    onp_tensor pair[2] = {bad, in[1]};
    CHECK(onp_session_run(s, pair, 2, NULL, 0, &got, &e) == -1);
    CHECK(e.code == ONP_ERR_USAGE && strstr(e.msg, "input 'x': expected float32 [3, 4, 5]"));
    CHECK(got.data == NULL);
    onp_tensor_release(&bad);
    /* an unknown output name */
    const char *nope[] = {"nope"};
    CHECK(onp_session_run(s, in, 2, nope, 1, &got, &e) == -1 && e.code == ONP_ERR_USAGE);
    CHECK(strstr(e.msg, "no output named 'nope'") != NULL);
    /* and the worker is still there */
    CHECK(onp_session_run(s, in, 2, NULL, 0, &got, &e) == 0 && onp_tensor_equal(&want, &got));
    onp_tensor_release(&got);
    onp_tensor_release(&want);
    onp_tensor_release(&in[0]);
    onp_tensor_release(&in[1]);
    onp_session_close(s);
}

static void test_strings_from_bytes(void)
{
    NEED(ort, STR2F "model.onnx");
    FILE *f = fopen(STR2F "model.onnx", "rb");
    if (!f) SKIP("cannot open the model");
    static uint8_t bytes[1 << 16];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    onp_error e;
    onp_session *s;
    onp_session_opts o = isolated();
    o.timeout_ms = 60000;
    CHECK(onp_session_open_bytes(ort, bytes, n, "str2f", &o, &s, &e) == 0);
    memset(bytes, 0, sizeof bytes); /* only read during the call, even isolated */
    if (!s) return;
    onp_tensor in, want, got;
    CHECK(read_pb(STR2F "test_data_set_0/", "input_0.pb", &in) == 0);
    CHECK(read_pb(STR2F "test_data_set_0/", "output_0.pb", &want) == 0);
    const char *names[] = {onp_session_output(s, 0)->name};
    CHECK(onp_session_run(s, &in, 1, names, 1, &got, &e) == 0);
    CHECK(got.dtype == ONP_FLOAT && onp_tensor_equal(&want, &got));
    onp_tensor_release(&got);
    onp_tensor_release(&want);
    onp_tensor_release(&in);
    onp_session_close(s);
}

typedef struct job {
    onp_session *s;
    const onp_tensor *in, *want;
    int errors;
} job;

static void *run_many(void *p)
{
    job *j = p;
    for (int k = 0; k < 20; k++) {
        onp_tensor got;
        onp_error e;
        if (onp_session_run(j->s, j->in, 2, NULL, 0, &got, &e) || !onp_tensor_equal(j->want, &got))
            j->errors++;
        onp_tensor_release(&got);
    }
    return NULL;
}

static void test_threads_share_one_worker(void)
{
    NEED(ort, ADD "model.onnx");
    onp_error e;
    onp_session *s;
    onp_session_opts o = isolated();
    CHECK(onp_session_open(ort, ADD "model.onnx", &o, &s, &e) == 0);
    if (!s) return;
    onp_tensor in[2], want;
    CHECK(read_pb(ADD "test_data_set_0/", "input_0.pb", &in[0]) == 0);
    CHECK(read_pb(ADD "test_data_set_0/", "input_1.pb", &in[1]) == 0);
    CHECK(read_pb(ADD "test_data_set_0/", "output_0.pb", &want) == 0);
    pthread_t th[4];
    job j[4];
    for (int i = 0; i < 4; i++) {
        j[i] = (job){s, in, &want, 0};
        CHECK(pthread_create(&th[i], NULL, run_many, &j[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(j[i].errors == 0);
    }
    /* the memory cap, on both sides of the socket (the worker counts its own
     * tensors only): here 720 bytes are held (two inputs and the expected
     * output, 240 each); the worker needs 720 (two inputs, one output) */
    onp_tensor got;
    size_t base = onp_tensor_memory_in_use();
    CHECK(base == 720);
    onp_tensor_set_memory_cap(base + 100); /* the worker fits; this side not */
    CHECK(onp_session_run(s, in, 2, NULL, 0, &got, &e) == -1);
    CHECK(e.code == ONP_ERR_INPUT && strstr(e.msg, "memory cap") != NULL);
    onp_tensor_set_memory_cap(100); /* the worker cannot hold an input */
    CHECK(onp_session_run(s, in, 2, NULL, 0, &got, &e) == -1);
    CHECK(e.code == ONP_ERR_INPUT && strstr(e.msg, "memory cap") != NULL);
    CHECK(strstr(e.field, "crashed") == NULL); /* refused, not lost */
    onp_tensor_set_memory_cap(0);
    CHECK(onp_session_run(s, in, 2, NULL, 0, &got, &e) == 0 && onp_tensor_equal(&want, &got));
    onp_tensor_release(&got);
    /* an input without data is refused here, as in-process, never sent */
    onp_tensor nodata = in[0];
    nodata.data = NULL;
    onp_tensor pair[2] = {nodata, in[1]};
    CHECK(onp_session_run(s, pair, 2, NULL, 0, &got, &e) == -1 && e.code == ONP_ERR_USAGE);
    CHECK(strstr(e.msg, "has no data") != NULL);
    for (int i = 0; i < 2; i++) onp_tensor_release(&in[i]);
    onp_tensor_release(&want);
    onp_session_close(s);
}

static void test_open_errors(void)
{
    NEED(ort, ADD "model.onnx");
    onp_error e;
    onp_session *s;
    onp_session_opts o = isolated();
    o.timeout_ms = -1;
    CHECK(onp_session_open(ort, ADD "model.onnx", &o, &s, &e) == -1 && e.code == ONP_ERR_USAGE);
    o = isolated();
    o.isolate = 0;
    o.timeout_ms = 1000; /* a limit needs a worker that can be killed */
    CHECK(onp_session_open(ort, ADD "model.onnx", &o, &s, &e) == -1 && e.code == ONP_ERR_USAGE);
    CHECK(s == NULL);
    /* ORT refusing the model in the worker: its message, verbatim */
    static const uint8_t junk[] = {0x08, 0x07, 0x3a, 0x02, 0x0a, 0xff};
    o = isolated();
    CHECK(onp_session_open_bytes(ort, junk, sizeof junk, "junk", &o, &s, &e) == -1);
    CHECK(e.code == ONP_ERR_RUNTIME && strstr(e.field, "CreateSessionFromArray") != NULL);
    CHECK(!strcmp(e.file, "junk") && s == NULL);
    /* a custom-op library that does not exist */
    const char *libs[] = {"/nonexistent/libops.so"};
    o.custom_op_libs = libs;
    o.n_custom_op_libs = 1;
    CHECK(onp_session_open(ort, ADD "model.onnx", &o, &s, &e) == -1);
    CHECK(e.code == ONP_ERR_RUNTIME && strstr(e.file, "libops.so") != NULL);
    CHECK(threads_now() == 1);
}

/* Last: in-process sessions give the very same bytes (numbers and strings).
 * Both isolated sessions are opened first, before ORT runs in this process. */
static void test_same_as_in_process(void)
{
    NEED(ort, ADD "model.onnx");
    NEED(ort2, F2STR "model.onnx");
    (void)ort2;
    const char *models[2] = {ADD "model.onnx", F2STR "model.onnx"};
    size_t n_in[2] = {2, 1};
    onp_error e;
    onp_session *iso[2] = {NULL, NULL}, *loc[2] = {NULL, NULL};
    onp_session_opts o = isolated();
    for (int m = 0; m < 2; m++) CHECK(onp_session_open(ort, models[m], &o, &iso[m], &e) == 0);
    for (int m = 0; m < 2; m++) CHECK(onp_session_open(ort, models[m], NULL, &loc[m], &e) == 0);
    for (int m = 0; m < 2 && iso[m] && loc[m]; m++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%.*s", (int)(strlen(models[m]) - strlen("model.onnx")),
                 models[m]);
        strcat(dir, "test_data_set_0/");
        onp_tensor in[2], ya, yb;
        CHECK(read_pb(dir, "input_0.pb", &in[0]) == 0);
        if (n_in[m] == 2) CHECK(read_pb(dir, "input_1.pb", &in[1]) == 0);
        CHECK(onp_session_run(iso[m], in, n_in[m], NULL, 0, &ya, &e) == 0);
        CHECK(onp_session_run(loc[m], in, n_in[m], NULL, 0, &yb, &e) == 0);
        CHECK(ya.dtype == (m ? ONP_STRING : ONP_FLOAT) && onp_tensor_equal(&ya, &yb));
        onp_tensor_release(&ya);
        onp_tensor_release(&yb);
        for (size_t k = 0; k < n_in[m]; k++) onp_tensor_release(&in[k]);
    }
    for (int m = 0; m < 2; m++) {
        onp_session_close(iso[m]);
        onp_session_close(loc[m]);
    }
    onp_ort_close(g_ort);
}

TEST_MAIN(test_add_isolated, test_strings_from_bytes, test_threads_share_one_worker,
          test_open_errors, test_same_as_in_process)
