/*
 * test_faults.c — k-th allocation fault injection over every reader path.
 *
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,
 * --wrap=strdup,--wrap=strndup (Makefile), so every allocation the library
 * makes comes here; cJSON's are routed here too (cJSON_InitHooks).  For a
 * path (a function that opens, reads and releases), and k = 1, 2, ...:
 * the k-th allocation of the run returns NULL, and the run must
 *   - fail (rc != 0) with ONP_ERR_NOMEM, or succeed when it made fewer than
 *     k allocations (then the loop stops: every allocation point was hit);
 *   - never crash (the ASan build of this test catches bad reads too);
 *   - leave no allocation outstanding: the wrappers keep a table of live
 *     pointers, and the table must hold no pointer made during the run.
 * Pointers the table does not know (made by libc or libzip internally) pass
 * through free untouched.  Allocations inside libzip and libc (opendir,
 * fopen) are not counted: they are not ours to fail.
 *
 * Paths: model view open (file and memory; inline tensors, and external
 * data from a scratch folder), .pb, .npy and .npz reads (several dtypes,
 * archives of several members), a test-data folder, lint over a model, and
 * lint with a parity.json manifest.  Inputs come from the committed fuzz
 * corpora and examples/; each path prints how many allocation points it has.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnxparity/lint.h"
#include "onnxparity/model.h"
#include "onnxparity/tfile.h"
#include "testhelp.h"

// --- the wrapped allocators -------------------------------------------------------

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

#define LIVE_CAP (1u << 20) /* open addressing; far more than any path holds */

static void *live[LIVE_CAP]; /* tracked pointers; NULL empty, TOMB removed */
static char tomb;
#define TOMB ((void *)&tomb)
static size_t n_live;

static long fi_fail_at; /* the allocation to fail (1-based); 0: none */
static long fi_count;   /* allocations made since fi_arm() */
static int fi_injected; /* the failure was handed out */
static int fi_overflow; /* the table filled up: the test cannot judge */
static int fi_in_cjson; /* the failure was handed to cJSON */

static size_t slot_of(const void *p)
{
    uintptr_t h = (uintptr_t)p;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15u;
    return (size_t)(h >> 7) & (LIVE_CAP - 1);
}

static void track(void *p)
{
    if (!p) return;
    if (n_live >= LIVE_CAP / 2) {
        fi_overflow = 1;
        return;
    }
    size_t i = slot_of(p);
    while (live[i] && live[i] != TOMB) i = (i + 1) & (LIVE_CAP - 1);
    live[i] = p;
    n_live++;
}

/* 1 when p was tracked (and is now forgotten). */
static int untrack(void *p)
{
    if (!p) return 0;
    size_t i = slot_of(p);
    for (size_t probes = 0; live[i] && probes < LIVE_CAP; probes++) {
        if (live[i] == p) {
            live[i] = TOMB;
            n_live--;
            return 1;
        }
        i = (i + 1) & (LIVE_CAP - 1);
    }
    return 0;
}

/* 1 when this allocation is the one to fail. */
static int fail_now(void)
{
    if (!fi_fail_at) return 0;
    fi_count++;
    if (fi_count == fi_fail_at) {
        fi_injected = 1;
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n)
{
    if (fail_now()) return NULL;
    void *p = __real_malloc(n);
    track(p);
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (fail_now()) return NULL;
    void *p = __real_calloc(n, size);
    track(p);
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    if (fail_now()) return NULL; /* p stays valid, as realloc promises */
    int was = p == NULL || untrack(p);
    void *q = __real_realloc(p, n);
    if (!q && p && was) track(p); /* the real realloc failed: p lives on */
    if (q && was) track(q);
    return q;
}

void __wrap_free(void *p)
{
    untrack(p);
    __real_free(p);
}

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s);
    char *c = __wrap_malloc(n + 1);
    if (c) memcpy(c, s, n + 1);
    return c;
}

char *__wrap_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *c = __wrap_malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

/* cJSON's allocations, through the same counter.  cJSON reports a failed
 * allocation while parsing exactly as a syntax error (NULL, with an error
 * position), so a reader cannot tell the two apart: for these failures the
 * test asks for an error of any code (the readers say "not valid JSON"). */
static void *cjson_malloc(size_t n)
{
    void *p = __wrap_malloc(n);
    if (!p && fi_injected && !fi_in_cjson && fi_count == fi_fail_at) fi_in_cjson = 1;
    return p;
}

// --- the loop ------------------------------------------------------------------------

/* A reader path: opens, reads, releases everything, returns 0 or -1 + e. */
typedef int (*fi_path)(const void *arg, onp_error *e);

/* Run `fn` with the 1st, 2nd, ... allocation failing until a run makes
 * fewer allocations than k; check each run.  Returns the number of
 * allocation points (0 when the path failed without injection). */
static long fault_loop(const char *name, fi_path fn, const void *arg)
{
    onp_error e;
    onp_error_clear(&e);
    size_t before = n_live;
    if (fn(arg, &e) != 0) { /* the path must work when memory does */
        CHECKF(0, "%s: fails without injection: %s", name, e.msg);
        return 0;
    }
    CHECKF(n_live == before, "%s: %zu allocations left after a clean run", name, n_live - before);
    long k;
    int bad = 0;
    for (k = 1; k < 1000000 && bad < 20; k++) {
        onp_error_clear(&e);
        before = n_live;
        fi_count = 0;
        fi_injected = 0;
        fi_in_cjson = 0;
        fi_fail_at = k;
        int rc = fn(arg, &e);
        fi_fail_at = 0;
        if (!fi_injected) {
            CHECKF(rc == 0, "%s: k=%ld: fails with no injected failure: %s", name, k, e.msg);
            break;
        }
        if (rc == 0 || (e.code != ONP_ERR_NOMEM && !fi_in_cjson)) {
            bad++;
            CHECKF(rc != 0 && (e.code == ONP_ERR_NOMEM || fi_in_cjson),
                   "%s: allocation %ld failed: rc %d, code %d (%s)", name, k, rc, (int)e.code,
                   e.msg);
        }
        if (n_live != before) {
            bad++;
            CHECKF(n_live == before, "%s: allocation %ld failed: %zu allocations leaked", name, k,
                   n_live - before);
        }
    }
    CHECK(!fi_overflow);
    printf("faults: %-44s %5ld allocation points%s\n", name, k - 1, bad ? ", FAILED" : "");
    return k - 1;
}

// --- inputs ---------------------------------------------------------------------

static char scratch[256]; /* a folder for the external-data models */

static void *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(sz > 0 ? (size_t)sz : 1);
    if (p && sz > 0 && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = sz > 0 ? (size_t)sz : 0;
    return p;
}

static int spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = n ? fwrite(p, 1, n, f) : 0;
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* The folder of fuzz_extdata: weights.bin, sub/w2.bin, empty.bin. */
static int make_scratch(void)
{
    if (scratch[0]) return 0;
    snprintf(scratch, sizeof scratch, "/tmp/onp-faults-XXXXXX");
    if (!mkdtemp(scratch)) return -1;
    uint8_t w[4096];
    for (size_t i = 0; i < sizeof w; i++) w[i] = (uint8_t)(i % 251);
    char p[512];
    snprintf(p, sizeof p, "%s/sub", scratch);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/weights.bin", scratch);
    if (spit(p, w, sizeof w)) return -1;
    snprintf(p, sizeof p, "%s/sub/w2.bin", scratch);
    if (spit(p, w, 64)) return -1;
    snprintf(p, sizeof p, "%s/empty.bin", scratch);
    return spit(p, "", 0);
}

static void remove_scratch(void)
{
    if (!scratch[0]) return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", scratch);
}

// --- the paths ------------------------------------------------------------------

/* Materialise every tensor a model view exposes at the top level. */
static int model_tensors(const onp_model *m, onp_error *e)
{
    const onp_graph *g = onp_model_graph(m);
    onp_tensor t;
    for (size_t i = 0; i < g->n_initializers; i++) {
        if (onp_model_tensor(m, &g->initializers[i], &t, e)) return -1;
        onp_tensor_release(&t);
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_attrs; k++) {
            const onp_attr *a = &g->nodes[i].attrs[k];
            if (a->t) {
                if (onp_model_tensor(m, a->t, &t, e)) return -1;
                onp_tensor_release(&t);
            }
        }
    return 0;
}

static int path_model_open(const void *arg, onp_error *e)
{
    onp_model *m = NULL;
    if (onp_model_open(arg, &m, e)) return -1;
    int rc = model_tensors(m, e);
    onp_model_close(m);
    return rc;
}

typedef struct mem_model {
    const uint8_t *p;
    size_t n;
} mem_model;

static int path_model_parse(const void *arg, onp_error *e)
{
    const mem_model *mm = arg;
    onp_model *m = NULL;
    if (onp_model_parse(mm->p, mm->n, NULL, &m, e)) return -1;
    size_t nv = 0;
    int rc = onp_model_node_values(m, &nv) || !onp_model_graph(m)->n_nodes
                 ? 0
                 : onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "node values: out of memory");
    onp_model_close(m);
    return rc;
}

static int path_tfile(const void *arg, onp_error *e)
{
    onp_tensor t;
    if (onp_tfile_read(arg, NULL, &t, e)) return -1;
    onp_tensor_release(&t);
    return 0;
}

static int path_npz_all(const void *arg, onp_error *e)
{
    onp_npz *z = NULL;
    if (onp_npz_open(arg, NULL, &z, e)) return -1;
    int rc = 0;
    for (size_t i = 0; i < onp_npz_count(z) && !rc; i++) {
        onp_tensor t;
        rc = onp_npz_read(z, i, &t, e);
        if (!rc) onp_tensor_release(&t);
    }
    onp_npz_close(z);
    return rc;
}

static int path_testdata(const void *arg, onp_error *e)
{
    onp_testdata td;
    if (onp_testdata_scan(arg, &td, e)) return -1;
    int rc = 0;
    for (size_t i = 0; i < td.n && !rc; i++) {
        const onp_fixture *f = &td.sets[i];
        for (size_t k = 0; k < f->n_inputs + f->n_outputs && !rc; k++) {
            onp_tensor t;
            const char *p = k < f->n_inputs ? f->inputs[k] : f->outputs[k - f->n_inputs];
            rc = onp_tfile_read(p, NULL, &t, e);
            if (!rc) onp_tensor_release(&t);
        }
    }
    onp_testdata_free(&td);
    return rc;
}

/* Both examples' fixtures in one list (onp_testdata_scan_dirs). */
static int path_testdata_dirs(const void *arg, onp_error *e)
{
    (void)arg;
    static const char *const dirs[] = {"examples/training", "examples/healthy"};
    onp_testdata td;
    if (onp_testdata_scan_dirs(dirs, 2, &td, e)) return -1;
    int rc = td.n == 6 ? 0 : onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "%zu fixtures", td.n);
    onp_testdata_free(&td);
    return rc;
}

typedef struct lint_arg {
    const onp_model *m;
    const char *manifest; /* or NULL */
} lint_arg;

static int path_lint(const void *arg, onp_error *e)
{
    const lint_arg *la = arg;
    onp_lint_opts o = {.manifest = la->manifest};
    onp_lint_result r;
    if (onp_lint_run(la->m, &o, &r, e)) return -1;
    onp_lint_result_free(&r);
    return 0;
}

// --- tests ----------------------------------------------------------------------

static void test_model_inline(void)
{
    static const char *const models[] = {
        "fuzz/corpus/model/chain.onnx",       "fuzz/corpus/model/attributes.onnx",
        "fuzz/corpus/model/all_dtypes.onnx",  "fuzz/corpus/model/loop_nested_if.onnx",
        "fuzz/corpus/model/function.onnx",    "fuzz/corpus/model/sparse_init.onnx",
        "fuzz/corpus/model/value_types.onnx", "fuzz/corpus/model/metadata.onnx",
        "examples/training/model.onnx",
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        if (access(models[i], R_OK)) SKIP("fuzz corpus or examples not found");
        CHECK(fault_loop(models[i], path_model_open, models[i]) > 0);
        mem_model mm;
        void *buf = slurp(models[i], &mm.n);
        CHECK(buf != NULL);
        if (!buf) continue;
        mm.p = buf;
        char name[300];
        snprintf(name, sizeof name, "parse %s", strrchr(models[i], '/') + 1);
        CHECK(fault_loop(name, path_model_parse, &mm) > 0);
        free(buf);
    }
}

static void test_model_external(void)
{
    static const char *const models[] = {
        "ok_offset_length.onnx", "ok_sub_and_dot.onnx", "ok_same_file_twice.onnx",
        "ok_constant_attr.onnx", "ok_empty.onnx",       "ok_checksum_and_unknown_key.onnx",
    };
    if (make_scratch()) SKIP("cannot make a scratch folder");
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char src[300], dst[600];
        snprintf(src, sizeof src, "fuzz/corpus/extdata/%s", models[i]);
        size_t n;
        void *buf = slurp(src, &n);
        if (!buf) SKIP("fuzz/corpus/extdata not found");
        snprintf(dst, sizeof dst, "%s/%s", scratch, models[i]);
        CHECK(spit(dst, buf, n) == 0);
        free(buf);
        char name[300];
        snprintf(name, sizeof name, "external %s", models[i]);
        CHECK(fault_loop(name, path_model_open, dst) > 0);
    }
}

static void test_tensor_files(void)
{
    static const char *const files[] = {
        "fuzz/corpus/pb/float_raw.pb",
        "fuzz/corpus/pb/float_typed.pb",
        "fuzz/corpus/pb/int64_typed.pb",
        "fuzz/corpus/pb/float16_typed.pb",
        "fuzz/corpus/pb/string.pb",
        "fuzz/corpus/pb/complex128_typed.pb",
        "fuzz/corpus/pb/bfloat16_typed.pb",
        "fuzz/corpus/pb/empty_dims.pb",
        "fuzz/corpus/npy/f4_2x3.npy",
        "fuzz/corpus/npy/f8_be.npy",
        "fuzz/corpus/npy/i8_be_fortran.npy",
        "fuzz/corpus/npy/u_strings.npy",
        "fuzz/corpus/npy/s_bytes.npy",
        "fuzz/corpus/npy/c16_be.npy",
        "fuzz/corpus/npy/f2.npy",
        "fuzz/corpus/npy/empty_u2.npy",
        "fuzz/corpus/npy/py2_long.npy",
        "fuzz/corpus/npy/i1_v3.npy",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (access(files[i], R_OK)) SKIP("fuzz corpus not found");
        CHECK(fault_loop(files[i], path_tfile, files[i]) > 0);
    }
}

static void test_npz(void)
{
    static const char *const files[] = {
        "fuzz/corpus/npz/savez.npz",       "fuzz/corpus/npz/savez_compressed.npz",
        "fuzz/corpus/npz/ours_stored.npz", "fuzz/corpus/npz/ours_deflate_be_fortran.npz",
        "fuzz/corpus/npz/bool_c16.npz",    "fuzz/corpus/npz/zip64_eocd.npz",
        "fuzz/corpus/npz/positional.npz",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (access(files[i], R_OK)) SKIP("fuzz corpus not found");
        CHECK(fault_loop(files[i], path_npz_all, files[i]) > 0);
    }
    /* by spec, one member by name */
    onp_npz *z = NULL;
    onp_error e;
    if (onp_npz_open("fuzz/corpus/npz/savez.npz", NULL, &z, &e) == 0) {
        char spec[300];
        snprintf(spec, sizeof spec, "fuzz/corpus/npz/savez.npz:%s", onp_npz_name(z, 0));
        onp_npz_close(z);
        CHECK(fault_loop(spec, path_tfile, spec) > 0);
    }
}

static void test_testdata(void)
{
    static const char *const dirs[] = {"examples/training", "examples/healthy"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (access(dirs[i], R_OK)) SKIP("examples/ not found");
        char name[300];
        snprintf(name, sizeof name, "testdata %s", dirs[i]);
        CHECK(fault_loop(name, path_testdata, dirs[i]) > 0);
    }
    CHECK(fault_loop("testdata dirs", path_testdata_dirs, NULL) > 0);
}

static void test_lint(void)
{
    static const char *const models[] = {
        "examples/training/model.onnx",
        "examples/healthy/model.onnx",
        "fuzz/corpus/lint/rule_dropout_training.onnx",
        "fuzz/corpus/lint/rule_bn_training.onnx",
        "fuzz/corpus/lint/rule_random.onnx",
        "fuzz/corpus/lint/rule_shapes.onnx",
        "fuzz/corpus/lint/rule_opsem.onnx",
        "fuzz/corpus/lint/rule_opset7.onnx",
        "fuzz/corpus/lint/loop_nested_if.onnx",
        "fuzz/corpus/lint/type_rules.onnx",
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        onp_model *m = NULL;
        onp_error e;
        if (onp_model_open(models[i], &m, &e)) SKIP("lint models not found");
        lint_arg la = {m, NULL};
        char name[300];
        snprintf(name, sizeof name, "lint %s", strrchr(models[i], '/') + 1);
        CHECK(fault_loop(name, path_lint, &la) > 0);
        if (i < 2) { /* the example bundles have a manifest */
            char man[300];
            snprintf(man, sizeof man, "%.*sparity.json",
                     (int)(strrchr(models[i], '/') + 1 - models[i]), models[i]);
            la.manifest = man;
            snprintf(name, sizeof name, "lint+manifest %.200s", man);
            CHECK(fault_loop(name, path_lint, &la) > 0);
        }
        onp_model_close(m);
    }
}

static void test_setup(void)
{
    cJSON_Hooks h = {cjson_malloc, __wrap_free};
    cJSON_InitHooks(&h);
    CHECK(1);
}

static void test_teardown(void)
{
    remove_scratch();
    CHECK(1);
}

TEST_MAIN(test_setup, test_model_inline, test_model_external, test_tensor_files, test_npz,
          test_testdata, test_lint, test_teardown)
