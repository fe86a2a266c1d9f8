/*
 * test_outdir.c — the output rule for folders (outpath.h,
 * onp_out_check_new_dir / onp_out_mkdir_new; issue 36): a new folder only,
 * never an existing one, a file or a link, never inside a folder the
 * command reads (given, or noted as a fixture folder), by inode.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnxparity/outpath.h"
#include "testhelp.h"

static char root[] = "/tmp/onp-test-outdir-XXXXXX";

/* root/rel, in a static buffer per slot. */
static const char *at(int slot, const char *rel)
{
    static char buf[8][512];
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", root, rel);
    return buf[slot];
}

static int refused(const char *dir, const char *const *reads, size_t n, onp_errcode code,
                   const char *word)
{
    onp_error e;
    onp_error_clear(&e);
    return onp_out_check_new_dir(dir, reads, n, &e) == -1 && e.code == code &&
           strstr(e.msg, word) != NULL;
}

static void test_new_dir_rule(void)
{
    if (!mkdtemp(root)) SKIP("no temporary folder");
    CHECK(mkdir(at(0, "bundle"), 0777) == 0);
    CHECK(mkdir(at(0, "bundle/test_data_set_0"), 0777) == 0);
    CHECK(mkdir(at(0, "full"), 0777) == 0);
    FILE *f = fopen(at(0, "full/model.onnx"), "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK(symlink("full", at(0, "link")) == 0);
    CHECK(symlink("nowhere", at(0, "dangling")) == 0);
    CHECK(symlink("bundle", at(0, "bundle-link")) == 0);
    onp_error e;
    onp_error_clear(&e);
    const char *reads[1] = {at(7, "bundle")};

    /* what exists, whatever it is */
    CHECK(refused(at(0, "full"), NULL, 0, ONP_ERR_USAGE, "exists (a folder)"));
    CHECK(refused(at(0, "full/"), NULL, 0, ONP_ERR_USAGE, "exists (a folder)"));
    CHECK(refused(at(0, "full/model.onnx"), NULL, 0, ONP_ERR_USAGE, "exists (a file)"));
    CHECK(refused(at(0, "link"), NULL, 0, ONP_ERR_USAGE, "exists (a symbolic link)"));
    CHECK(refused(at(0, "dangling"), NULL, 0, ONP_ERR_USAGE, "exists (a symbolic link)"));
    CHECK(refused("", NULL, 0, ONP_ERR_USAGE, "not a usable folder name"));
    CHECK(refused(NULL, NULL, 0, ONP_ERR_USAGE, "not a usable folder name"));
    CHECK(refused(at(0, "missing/new"), NULL, 0, ONP_ERR_IO, "does not exist"));
    CHECK(refused(at(0, "full/model.onnx/new"), NULL, 0, ONP_ERR_USAGE, "cannot be made"));

    /* inside a folder read: given, through a link, or noted as fixtures */
    CHECK(onp_out_check_new_dir(at(0, "bundle/new"), NULL, 0, &e) == 0);
    CHECK(refused(at(0, "bundle/new"), reads, 1, ONP_ERR_USAGE, "which this command reads"));
    CHECK(refused(at(0, "bundle/test_data_set_0/new"), reads, 1, ONP_ERR_USAGE, "bundle"));
    CHECK(refused(at(0, "bundle-link/new"), reads, 1, ONP_ERR_USAGE, "inside the folder"));
    CHECK(onp_out_check_new_dir(at(0, "new"), reads, 1, &e) == 0);
    const char *not_dirs[2] = {at(6, "full/model.onnx"), NULL};
    CHECK(onp_out_check_new_dir(at(0, "new"), not_dirs, 2, &e) == 0); /* skipped */
    onp_out_note_tree(at(1, "bundle/test_data_set_0"));
    CHECK(refused(at(0, "bundle/test_data_set_0/new"), NULL, 0, ONP_ERR_USAGE, "test_data_set_0"));
    CHECK(onp_out_check_new_dir(at(0, "bundle/new"), NULL, 0, &e) == 0);

    /* made once: the second time it exists */
    CHECK(onp_out_mkdir_new(at(0, "made"), reads, 1, &e) == 0);
    struct stat st;
    CHECK(lstat(at(0, "made"), &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(onp_out_mkdir_new(at(0, "made"), reads, 1, &e) == -1 && e.code == ONP_ERR_USAGE);
    CHECK(onp_out_mkdir_new(at(0, "bundle/made"), reads, 1, &e) == -1);
    CHECK(lstat(at(0, "bundle/made"), &st) == -1);

    rmdir(at(0, "made"));
    unlink(at(0, "link"));
    unlink(at(0, "dangling"));
    unlink(at(0, "bundle-link"));
    unlink(at(0, "full/model.onnx"));
    rmdir(at(0, "full"));
    rmdir(at(0, "bundle/test_data_set_0"));
    rmdir(at(0, "bundle"));
    rmdir(root);
}

TEST_MAIN(test_new_dir_rule)
