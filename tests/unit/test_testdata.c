/*
 * test_testdata.c — the test-data layout scan (src/tfile/testdata.c):
 * fixtures as .pb, .npy or .npz files, one file per K; a fixture folder
 * passed itself; several folders in order; "nothing to compare".
 * Each case builds its folders under a fresh temporary directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnxparity/tfile.h"
#include "testhelp.h"

static char root[64];

/* root/REL as a path (a static buffer per call slot). */
static const char *at(const char *rel)
{
    static char bufs[4][512];
    static int k;
    char *b = bufs[k++ % 4];
    snprintf(b, sizeof bufs[0], "%s/%s", root, rel);
    return b;
}

static void mkdirs(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *s = p + strlen(root) + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}

/* A float tensor of n values (v, v+1, ...) written to root/REL by extension. */
static int put(const char *rel, int64_t n, float v)
{
    onp_tensor t;
    onp_error e;
    if (onp_tensor_alloc(&t, ONP_FLOAT, 1, &n, &e)) return -1;
    for (int64_t i = 0; i < n; i++) ((float *)t.data)[i] = v + (float)i;
    int rc = onp_tfile_write(at(rel), &t, NULL, &e);
    onp_tensor_release(&t);
    return rc;
}

static void test_mixed_extensions(void)
{
    mkdirs("mixed/test_data_set_0");
    CHECK(put("mixed/test_data_set_0/input_0.npy", 3, 1) == 0);
    CHECK(put("mixed/test_data_set_0/input_1.pb", 2, 5) == 0);
    CHECK(put("mixed/test_data_set_0/output_0.npz", 3, 2) == 0);
    onp_testdata td;
    onp_error e;
    CHECK(onp_testdata_scan(at("mixed"), &td, &e) == 0);
    CHECK(td.n == 1 && td.sets[0].n_inputs == 2 && td.sets[0].n_outputs == 1);
    if (td.n == 1 && td.sets[0].n_inputs == 2 && td.sets[0].n_outputs == 1) {
        CHECK(strstr(td.sets[0].inputs[0], "/input_0.npy") != NULL);
        CHECK(strstr(td.sets[0].inputs[1], "/input_1.pb") != NULL);
        CHECK(strstr(td.sets[0].outputs[0], "/output_0.npz") != NULL);
        onp_tensor t;
        CHECK(onp_tfile_read(td.sets[0].outputs[0], NULL, &t, &e) == 0);
        CHECK(t.count == 3 && ((float *)t.data)[2] == 4.0f);
        onp_tensor_release(&t);
    }
    CHECK(onp_testdata_require(&td, "mixed", &e) == 0);
    onp_testdata_free(&td);
}

static void test_two_files_for_one_k_refused(void)
{
    mkdirs("twice/test_data_set_0");
    CHECK(put("twice/test_data_set_0/input_0.pb", 1, 0) == 0);
    CHECK(put("twice/test_data_set_0/input_0.npy", 1, 0) == 0);
    onp_testdata td;
    onp_error e;
    CHECK(onp_testdata_scan(at("twice"), &td, &e) == -1);
    CHECK(e.code == ONP_ERR_INPUT);
    CHECKF(strstr(e.msg, "input_0.pb") && strstr(e.msg, "input_0.npy"), "%s", e.msg);
    CHECK(td.n == 0 && td.sets == NULL);
}

static void test_gap_named_with_every_extension(void)
{
    mkdirs("gap/test_data_set_0");
    CHECK(put("gap/test_data_set_0/input_0.npy", 1, 0) == 0);
    CHECK(put("gap/test_data_set_0/input_2.npy", 1, 0) == 0);
    onp_testdata td;
    onp_error e;
    CHECK(onp_testdata_scan(at("gap"), &td, &e) == -1);
    CHECKF(strstr(e.msg, "input_1 is missing") && strstr(e.msg, ".npy"), "%s", e.msg);
}

static void test_fixture_folder_itself(void)
{
    mkdirs("b/test_data_set_3");
    CHECK(put("b/test_data_set_3/input_0.npy", 2, 0) == 0);
    CHECK(put("b/test_data_set_3/output_0.npy", 2, 0) == 0);
    onp_testdata td;
    onp_error e;
    CHECK(onp_testdata_scan(at("b/test_data_set_3"), &td, &e) == 0);
    CHECK(td.n == 1 && td.sets[0].index == 3 && td.sets[0].n_outputs == 1);
    if (td.n == 1) CHECK(!strcmp(td.sets[0].dir, at("b/test_data_set_3")));
    onp_testdata_free(&td);
    /* any other name: fixture 0 */
    mkdirs("loose");
    CHECK(put("loose/input_0.npz", 2, 0) == 0);
    CHECK(put("loose/output_0.npz", 2, 0) == 0);
    CHECK(onp_testdata_scan(at("loose"), &td, &e) == 0);
    CHECK(td.n == 1 && td.sets[0].index == 0 && td.sets[0].n_inputs == 1);
    onp_testdata_free(&td);
    /* the parent still sees its test_data_set_3 only, not itself */
    CHECK(onp_testdata_scan(at("b"), &td, &e) == 0);
    CHECK(td.n == 1 && td.sets[0].index == 3);
    onp_testdata_free(&td);
}

static void test_several_folders_numbered_in_order(void)
{
    mkdirs("d1/test_data_set_0");
    mkdirs("d1/test_data_set_1");
    mkdirs("d2/test_data_set_0");
    CHECK(put("d1/test_data_set_0/output_0.npy", 1, 0) == 0);
    CHECK(put("d1/test_data_set_1/output_0.npy", 1, 0) == 0);
    CHECK(put("d2/test_data_set_0/output_0.pb", 1, 0) == 0);
    const char *dirs[] = {at("d2"), at("d1")};
    onp_testdata td;
    onp_error e;
    CHECK(onp_testdata_scan_dirs(dirs, 2, &td, &e) == 0);
    CHECK(td.n == 3);
    if (td.n == 3) {
        CHECK(td.sets[0].index == 0 && strstr(td.sets[0].dir, "/d2/test_data_set_0"));
        CHECK(td.sets[1].index == 1 && strstr(td.sets[1].dir, "/d1/test_data_set_0"));
        CHECK(td.sets[2].index == 2 && strstr(td.sets[2].dir, "/d1/test_data_set_1"));
    }
    onp_testdata_free(&td);
    /* one folder: its own numbers */
    CHECK(onp_testdata_scan_dirs(dirs + 1, 1, &td, &e) == 0);
    CHECK(td.n == 2 && td.sets[1].index == 1);
    onp_testdata_free(&td);
    /* a folder that cannot be listed fails the whole scan, nothing kept */
    const char *bad[] = {at("d1"), at("absent")};
    CHECK(onp_testdata_scan_dirs(bad, 2, &td, &e) == -1 && e.code == ONP_ERR_IO);
    CHECK(td.n == 0 && td.sets == NULL);
}

static void test_nothing_to_compare(void)
{
    onp_testdata td;
    onp_error e;
    mkdirs("none");
    CHECK(put("none/x.npy", 1, 0) == 0); /* not a fixture file */
    CHECK(onp_testdata_scan(at("none"), &td, &e) == 0 && td.n == 0);
    CHECK(onp_testdata_require(&td, "none", &e) == -1);
    CHECK(e.code == ONP_ERR_USAGE && onp_error_exit_code(&e) == 2);
    CHECKF(strstr(e.msg, "nothing to compare") && strstr(e.msg, "no test_data_set_N"), "%s", e.msg);
    onp_testdata_free(&td);
    mkdirs("inputs/test_data_set_0");
    CHECK(put("inputs/test_data_set_0/input_0.npy", 1, 0) == 0);
    CHECK(onp_testdata_scan(at("inputs"), &td, &e) == 0 && td.n == 1);
    CHECK(onp_testdata_require(&td, "inputs", &e) == -1 && e.code == ONP_ERR_USAGE);
    CHECKF(strstr(e.msg, "holds no output_K"), "%s", e.msg);
    onp_testdata_free(&td);
}

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/onp_testdata_XXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        exit(1);
    }
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

TEST_MAIN(setup, test_mixed_extensions, test_two_files_for_one_k_refused,
          test_gap_named_with_every_extension, test_fixture_folder_itself,
          test_several_folders_numbered_in_order, test_nothing_to_compare, teardown)
