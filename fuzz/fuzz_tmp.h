/*
 * fuzz_tmp.h — the scratch folder of the file-reading fuzz targets
 * (fuzz_extdata, fuzz_testdata, fuzz_manifest): one per process, made on
 * first use under $TMPDIR (or /tmp) and removed at exit, plus helpers to
 * write a file in it and empty a sub-folder between inputs.  Header-only:
 * each target is one translation unit.
 */
#ifndef ONP_FUZZ_TMP_H
#define ONP_FUZZ_TMP_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fz_root[4096]; /* the scratch folder, "" until made */

/* Remove `path` and, when it is a folder, everything under it (links are
 * removed, never followed). */
static void fz_rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st)) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *de;
            char sub[4096];
            while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
                snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
                fz_rm_tree(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void fz_cleanup(void)
{
    if (fz_root[0]) fz_rm_tree(fz_root);
}

/* The scratch folder; traps when it cannot be made (not the input's fault). */
static const char *fz_dir(void)
{
    if (fz_root[0]) return fz_root;
    const char *t = getenv("TMPDIR");
    snprintf(fz_root, sizeof fz_root, "%s/onp-fuzz-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(fz_root)) __builtin_trap();
    atexit(fz_cleanup);
    return fz_root;
}

/* Write n bytes to ROOT/rel (its folder must exist); 0 on success. */
static int fz_write(const char *rel, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", fz_dir(), rel);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return close(fd);
}

/* mkdir ROOT/rel (fine when it exists). */
static void fz_mkdir(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", fz_dir(), rel);
    mkdir(path, 0755);
}

/* ROOT/rel as a path, in `buf`. */
static const char *fz_path(const char *rel, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", fz_dir(), rel);
    return buf;
}

#endif
