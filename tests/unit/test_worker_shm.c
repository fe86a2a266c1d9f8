/*
 * test_worker_shm.c — big tensors across the worker process
 * (src/ort/ort_worker.c): inputs and outputs of 1 MiB and more cross as
 * sealed memfds, and ORT writes an output whose shape its declaration
 * predicts (fixed dims, or symbolic ones the inputs bind) straight into
 * one.  Each way an output can be declared — predictable from a symbolic
 * input dim, fixed, fixed but wrong (ORT refuses the buffer and the worker
 * runs again into its own memory), symbolic but unbound — gives the values
 * an in-process session gives and that Relu defines, on two runs of one
 * worker; and the memory cap still refuses an output too big to hold.
 * Big inputs go by address (the worker reads them with process_vm_readv),
 * or, where a seccomp filter or a ptrace policy refuses that call, as
 * memfds: the whole test runs again in a child whose filter refuses it.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnxparity/ort.h"
#include "onnxparity/tensor.h"
#include "onnxparity/tfile.h"
#include "tfile/npy_int.h"
#include "util/fsio.h"
#include "pbenc.h"
#include "testhelp.h"

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libonnxruntime.so\n";
}

/* ValueInfoProto of a float tensor: dims[d] >= 0 fixed, else params[d]. */
static void value_info(onp_buf *b, int field, const char *name, int rank, const int64_t *dims,
                       const char *const *params)
{
    onp_buf vi = {0}, type = {0}, tensor = {0}, shape = {0};
    put_str(&vi, 1, name);
    for (int d = 0; d < rank; d++) {
        onp_buf dim = {0};
        if (dims[d] >= 0)
            onp_pb_put_uint(&dim, 1, (uint64_t)dims[d]);
        else
            put_str(&dim, 2, params[d]);
        put_msg(&shape, 1, &dim);
    }
    onp_pb_put_uint(&tensor, 1, ONP_FLOAT);
    put_msg(&tensor, 2, &shape);
    put_msg(&type, 1, &tensor);
    put_msg(&vi, 2, &type);
    put_msg(b, field, &vi);
}

/* Graph gname: y = Relu(x), x declared xdims/xparams, y declared
 * ydims/yparams; with return_x, x is also a graph output (before y). */
static void relu_graph(onp_buf *out, const char *gname, const int64_t *xdims,
                       const char *const *xparams, int return_x, const int64_t *ydims,
                       const char *const *yparams)
{
    onp_buf graph = {0}, node = {0}, opset = {0};
    put_str(&node, 1, "x");
    put_str(&node, 2, "y");
    put_str(&node, 4, "Relu");
    put_msg(&graph, 1, &node);
    put_str(&graph, 2, gname);
    value_info(&graph, 11, "x", 3, xdims, xparams);
    if (return_x) value_info(&graph, 12, "x", 3, xdims, xparams);
    value_info(&graph, 12, "y", 3, ydims, yparams);
    memset(out, 0, sizeof *out);
    onp_pb_put_uint(out, 1, 8);
    put_msg(out, 7, &graph);
    put_str(&opset, 1, "");
    onp_pb_put_uint(&opset, 2, 13);
    put_msg(out, 8, &opset);
}

/* y = Relu(x), x declared [batch, 512, 256], y declared ydims/yparams. */
static void relu_model(onp_buf *out, const int64_t *ydims, const char *const *yparams)
{
    static const int64_t xdims[3] = {-1, 512, 256};
    static const char *const xparams[3] = {"batch", NULL, NULL};
    relu_graph(out, "relu", xdims, xparams, 0, ydims, yparams);
}

static void one_declaration(onp_ort *ort, const char *what, const int64_t *ydims,
                            const char *const *yparams)
{
    onp_buf model;
    relu_model(&model, ydims, yparams);
    onp_error e;
    onp_session *iso = NULL, *loc = NULL;
    onp_session_opts o;
    memset(&o, 0, sizeof o);
    o.isolate = 1;
    CHECKF(onp_session_open_bytes(ort, model.p, model.n, what, &o, &iso, &e) == 0, "%s: %s", what,
           e.msg);
    CHECK(onp_session_open_bytes(ort, model.p, model.n, what, NULL, &loc, &e) == 0);
    onp_buf_free(&model);
    if (!iso || !loc) {
        onp_session_close(iso);
        onp_session_close(loc);
        return;
    }
    for (int batch = 2; batch <= 3; batch++) { /* 1 MiB a batch row: two runs, two sizes */
        onp_tensor x, ya, yb;
        int64_t dims[3] = {batch, 512, 256};
        CHECK(onp_tensor_alloc(&x, ONP_FLOAT, 3, dims, &e) == 0);
        onp_tensor_set_name(&x, "x", &e);
        float *px = x.data;
        for (int64_t i = 0; i < x.count; i++) px[i] = (float)((i * 7919) % 2001 - 1000) / 64.0f;
        CHECK(x.nbytes >= (1u << 20)); /* the worker's threshold for shared memory */
        int ra = onp_session_run(iso, &x, 1, NULL, 0, &ya, &e);
        CHECKF(ra == 0, "%s, batch %d: %s", what, batch, e.msg);
        CHECK(onp_session_run(loc, &x, 1, NULL, 0, &yb, &e) == 0);
        if (!ra) {
            CHECK(onp_tensor_equal(&ya, &yb));
            const float *py = ya.data;
            int64_t bad = 0;
            for (int64_t i = 0; i < x.count; i++) bad += py[i] != (px[i] > 0 ? px[i] : 0.0f);
            CHECKF(bad == 0 && ya.count == x.count && ya.rank == 3 && ya.dims[0] == batch,
                   "%s, batch %d: %lld wrong values", what, batch, (long long)bad);
            CHECK(ya.name && !strcmp(ya.name, "y"));
        }
        onp_tensor_release(&ya);
        onp_tensor_release(&yb);
        /* the input was not changed by crossing */
        int same = 1;
        for (int64_t i = 0; i < x.count && same; i++)
            same = px[i] == (float)((i * 7919) % 2001 - 1000) / 64.0f;
        CHECK(same);
        onp_tensor_release(&x);
    }
    /* an output this process may not hold: refused, the worker kept */
    onp_tensor x, y;
    int64_t dims[3] = {2, 512, 256};
    CHECK(onp_tensor_alloc(&x, ONP_FLOAT, 3, dims, &e) == 0);
    onp_tensor_set_name(&x, "x", &e);
    onp_tensor_set_memory_cap(onp_tensor_memory_in_use() + x.nbytes / 2);
    CHECK(onp_session_run(iso, &x, 1, NULL, 0, &y, &e) == -1 && e.code == ONP_ERR_INPUT);
    onp_tensor_set_memory_cap(0);
    CHECK(onp_session_run(iso, &x, 1, NULL, 0, &y, &e) == 0 && y.count == x.count);
    onp_tensor_release(&y);
    onp_tensor_release(&x);
    onp_session_close(iso);
    onp_session_close(loc);
}

static void every_declaration(void)
{
    onp_ort *ort;
    onp_error e;
    if (onp_ort_open(NULL, &ort, &e)) SKIP("no ONNX Runtime library found");
    static const int64_t sym[3] = {-1, 512, 256}, wrong[3] = {5, 512, 256};
    static const char *const batch[3] = {"batch", NULL, NULL};
    static const char *const other[3] = {"other", NULL, NULL};
    one_declaration(ort, "symbolic, bound by the input", sym, batch);
    one_declaration(ort, "symbolic, bound by nothing", sym, other);
    one_declaration(ort, "fixed and wrong", wrong, NULL);
    static const int64_t fixed2[3] = {2, 512, 256};
    one_declaration(ort, "fixed (right at batch 2 only)", fixed2, NULL);
    onp_ort_close(ort);
}

static void test_declarations(void)
{
    every_declaration();
}

/* Outputs ORT does not compute into a caller's buffer: a graph input
 * returned as it is, and one name fetched twice.  Each comes back with its
 * values (Relu's, the input's), not the zeros of a buffer nobody wrote. */
static void test_outputs_not_computed(void)
{
    onp_ort *ort;
    onp_error e;
    if (onp_ort_open(NULL, &ort, &e)) SKIP("no ONNX Runtime library found");
    static const int64_t dims[3] = {2, 512, 256};
    onp_buf model;
    relu_graph(&model, "passthrough", dims, NULL, 1, dims, NULL); /* the input, returned */
    onp_session *iso = NULL;
    onp_session_opts o;
    memset(&o, 0, sizeof o);
    o.isolate = 1;
    CHECKF(onp_session_open_bytes(ort, model.p, model.n, "passthrough", &o, &iso, &e) == 0, "%s",
           e.msg);
    onp_buf_free(&model);
    onp_tensor x;
    CHECK(onp_tensor_alloc(&x, ONP_FLOAT, 3, dims, &e) == 0);
    onp_tensor_set_name(&x, "x", &e);
    float *px = x.data;
    for (int64_t i = 0; i < x.count; i++) px[i] = (float)(i % 999 - 499) / 8.0f;
    static const char *const twice[2] = {"y", "y"}, *const both[2] = {"x", "y"};
    const char *const *asked[3] = {NULL, twice, both};
    for (int a = 0; iso && a < 3; a++) {
        onp_tensor out[2];
        int rc = onp_session_run(iso, &x, 1, asked[a], asked[a] ? 2 : 0, out, &e);
        CHECKF(rc == 0, "request %d: %s", a, e.msg);
        for (int k = 0; !rc && k < 2; k++) {
            const char *name = asked[a] ? asked[a][k] : k ? "y" : "x";
            const float *p = out[k].data;
            int64_t bad = out[k].count == x.count ? 0 : 1;
            for (int64_t i = 0; !bad && i < x.count; i++)
                bad += p[i] != (*name == 'x' ? px[i] : px[i] > 0 ? px[i] : 0.0f);
            CHECKF(bad == 0, "request %d, output %d (%s): wrong values", a, k, name);
            onp_tensor_release(&out[k]);
        }
    }
    onp_tensor_release(&x);
    onp_session_close(iso);
    onp_ort_close(ort);
}

/* process_vm_readv refused (EPERM), as a container's seccomp profile may:
 * in a child, whose worker inherits the filter; the child's checks are
 * counted here through its exit status. */
static void test_without_vm_read(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {sizeof f / sizeof *f, f};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
            _exit(3);
        th_passed = th_failed = 0;
        every_declaration();
        _exit(th_failed ? 1 : th_passed ? 0 : 2);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child without process_vm_readv: status %d",
           st);
}

/* Write x (renamed `name`: its length sets where raw_data starts) to
 * dir/file.pb and read it back. */
static int pb_roundtrip(const char *dir, const char *file, const char *name, onp_tensor *x,
                        onp_tensor *back, char *path, size_t np)
{
    onp_error e;
    snprintf(path, np, "%s/%s.pb", dir, file);
    if (onp_tensor_set_name(x, name, &e) || onp_tfile_write(path, x, NULL, &e)) return -1;
    return onp_tfile_read(path, NULL, back, &e);
}

/* Issue 34: an input the reader mapped from a .pb (raw_data aligned for
 * its floats, not for a page: offset 20) crosses to the worker as that
 * file, which the worker maps too; one whose raw_data is not aligned is
 * copied on reading and crosses as before, or, read as a view
 * (onp_tfile_read_view), crosses as the file and is copied into aligned
 * memory by the worker.  Either way the isolated run
 * gives what Relu defines.  A file replaced after it was read is not
 * mapped again (another inode): the worker runs on the values read. */
static void test_input_from_file(void)
{
    onp_ort *ort;
    onp_error e;
    if (onp_ort_open(NULL, &ort, &e)) SKIP("no ONNX Runtime library found");
    char dir[64], path[128], moved[128];
    snprintf(dir, sizeof dir, "/tmp/onp_test_shmfile_XXXXXX");
    if (!mkdtemp(dir)) {
        onp_ort_close(ort);
        SKIP("no temporary folder");
    }
    onp_buf model;
    relu_model(&model, (const int64_t[]){-1, 512, 256}, (const char *const[]){"batch", NULL, NULL});
    onp_session *iso = NULL;
    onp_session_opts o;
    memset(&o, 0, sizeof o);
    o.isolate = 1;
    CHECK(onp_session_open_bytes(ort, model.p, model.n, "relu", &o, &iso, &e) == 0);
    onp_buf_free(&model);
    onp_tensor x;
    int64_t dims[3] = {2, 512, 256};
    CHECK(onp_tensor_alloc(&x, ONP_FLOAT, 3, dims, &e) == 0);
    float *px = x.data;
    for (int64_t i = 0; i < x.count; i++) px[i] = (float)((i * 7919) % 2001 - 1000) / 64.0f;
    /* dims 8 bytes, data_type 2, the name 2 + its length, raw_data's tag and
     * length 4 (1 MiB): "wxyz" puts the floats at 20, "xyz" at 19 */
    static const char *const names[3] = {"wxyz", "xyz", "xyz"};
    for (int k = 0; iso && k < 3; k++) {
        onp_tensor in, y;
        CHECK(pb_roundtrip(dir, names[k], names[k], &x, &in, path, sizeof path) == 0);
        int mapped = in.free_fn == onp_map_unref_void;
        CHECKF(mapped == (k == 0), "%s: mapped %d", names[k], mapped);
        if (k == 2) {
            /* read as a view (what check reads an isolated session's
             * inputs with): the unaligned file viewed in place, bytewise
             * only here; the worker copies it into aligned memory */
            onp_tensor_release(&in);
            CHECK(onp_tfile_read_view(path, &in, &e) == 0);
            CHECK(in.free_fn == onp_map_unref_view && (uintptr_t)in.data % 4 != 0);
            CHECK(in.nbytes == x.nbytes && !memcmp(in.data, x.data, x.nbytes));
        }
        onp_tensor_set_name(&in, "x", &e);
        CHECKF(onp_session_run(iso, &in, 1, NULL, 0, &y, &e) == 0, "%s: %s", names[k], e.msg);
        const float *py = y.data;
        int64_t bad = y.count == x.count ? 0 : 1;
        for (int64_t i = 0; !bad && i < x.count; i++) bad += py[i] != (px[i] > 0 ? px[i] : 0.0f);
        CHECKF(bad == 0, "%s: %lld wrong values", names[k], (long long)bad);
        onp_tensor_release(&y);
        if (k == 0) {
            /* another file renamed over the path: the map is not reopened,
             * and the worker still runs on the values read (all negative
             * in the new file, so Relu of them would be all zeros) */
            onp_tensor neg, back;
            CHECK(onp_tensor_alloc(&neg, ONP_FLOAT, 3, dims, &e) == 0);
            for (int64_t i = 0; i < neg.count; i++) ((float *)neg.data)[i] = -1.0f;
            CHECK(pb_roundtrip(dir, "other", "wxyz", &neg, &back, moved, sizeof moved) == 0);
            onp_tensor_release(&back);
            onp_tensor_release(&neg);
            CHECK(rename(moved, path) == 0);
            CHECK(onp_map_reopen(in.owner) == -1);
            CHECK(onp_session_run(iso, &in, 1, NULL, 0, &y, &e) == 0);
            py = y.data;
            bad = y.count == x.count ? 0 : 1;
            for (int64_t i = 0; !bad && i < x.count; i++)
                bad += py[i] != (px[i] > 0 ? px[i] : 0.0f);
            CHECKF(bad == 0, "replaced file: %lld wrong values", (long long)bad);
            onp_tensor_release(&y);
        }
        onp_tensor_release(&in);
        unlink(path);
    }
    onp_tensor_release(&x);
    onp_session_close(iso);
    onp_ort_close(ort);
    rmdir(dir);
}

TEST_MAIN(test_declarations, test_outputs_not_computed, test_without_vm_read, test_input_from_file)
