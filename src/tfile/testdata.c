/*
 * testdata.c — the ONNX test-data layout: DIR/test_data_set_N/input_K.pb
 * and output_K.pb, K numbered from 0 without gaps; each file may also be
 * input_K.npy or input_K.npz (an archive of one array), one file per K.
 * DIR may also be one fixture folder itself.  Folders are listed, never
 * read; the tensors are read later by whoever needs them.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnxparity/tfile.h"
#include "onnxparity/outpath.h"
#include "util/fsio.h"

/* Parse "PREFIX<digits>SUFFIX" exactly; returns the number or -1.  The
 * digits are canonical (no leading zero but "0" itself), so two names can
 * never give the same number ("input_01.pb" beside "input_1.pb" would make
 * the file read depend on the directory order). */
static long numbered(const char *name, const char *prefix, const char *suffix)
{
    size_t pl = strlen(prefix), sl = strlen(suffix), n = strlen(name);
    if (n <= pl + sl || strncmp(name, prefix, pl) || strcmp(name + n - sl, suffix)) return -1;
    if (name[pl] == '0' && n - sl - pl > 1) return -1;
    long v = 0;
    for (size_t i = pl; i < n - sl; i++) {
        if (name[i] < '0' || name[i] > '9' || v > 100000000) return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v;
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s) return NULL;
    memcpy(s, a, la);
    s[la] = '/';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

/* The tensor files a fixture may hold, by extension. */
static const char *const fixture_exts[] = {".pb", ".npy", ".npz"};
#define N_FIXTURE_EXTS (sizeof fixture_exts / sizeof fixture_exts[0])

/* K of "PREFIX<K>.pb" / ".npy" / ".npz", or -1. */
static long numbered_tensor(const char *name, const char *prefix)
{
    long k = -1;
    for (size_t i = 0; i < N_FIXTURE_EXTS && k < 0; i++)
        k = numbered(name, prefix, fixture_exts[i]);
    return k;
}

/* List prefix_K.{pb,npy,npz} in dir as a dense array [0..n); two files for
 * one K (input_0.pb beside input_0.npy) are refused. */
static int list_numbered(const char *dir, const char *prefix, char ***out, size_t *n_out,
                         onp_error *e)
{
    *out = NULL;
    *n_out = 0;
    DIR *d = opendir(dir);
    if (!d) return onp_error_set(e, ONP_ERR_IO, dir, NULL, -1, "cannot list: %s", strerror(errno));
    size_t max = 0, found = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        long k = numbered_tensor(de->d_name, prefix);
        if (k < 0) continue;
        found++;
        if ((size_t)k + 1 > max) max = (size_t)k + 1;
    }
    if (max > 100000) {
        closedir(d);
        return onp_error_set(e, ONP_ERR_INPUT, dir, NULL, -1, "%s numbers beyond 100000", prefix);
    }
    char **v = calloc(max ? max : 1, sizeof *v);
    if (!v) {
        closedir(d);
        return onp_error_set(e, ONP_ERR_NOMEM, dir, NULL, -1, "out of memory");
    }
    rewinddir(d);
    while ((de = readdir(d))) {
        long k = numbered_tensor(de->d_name, prefix);
        if (k < 0 || (size_t)k >= max) continue;
        if (v[k]) {
            const char *other = strrchr(v[k], '/') + 1;
            onp_error_set(e, ONP_ERR_INPUT, dir, NULL, -1,
                          "%s and %s are both here: one file per %s%ld", other, de->d_name, prefix,
                          k);
            closedir(d);
            free_list(v, max);
            return -1;
        }
        if (!(v[k] = join(dir, de->d_name))) {
            closedir(d);
            free_list(v, max);
            return onp_error_set(e, ONP_ERR_NOMEM, dir, NULL, -1, "out of memory");
        }
    }
    closedir(d);
    for (size_t k = 0; k < max; k++)
        if (!v[k]) {
            free_list(v, max);
            return onp_error_set(e, ONP_ERR_INPUT, dir, NULL, -1,
                                 "%s%zu is missing (.pb, .npy or .npz; found %zu, numbered up "
                                 "to %zu)",
                                 prefix, k, found, max - 1);
        }
    *out = v;
    *n_out = max;
    return 0;
}

static int cmp_fixture(const void *a, const void *b)
{
    const onp_fixture *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* Append the fixture folder `sub` (owned by td from here, freed on
 * failure too) as fixture `k`, its files listed. */
static int add_fixture(onp_testdata *td, size_t *cap, char *sub, long k, onp_error *e)
{
    if (td->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        onp_fixture *p = realloc(td->sets, nc * sizeof *p);
        if (!p) {
            free(sub);
            return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        }
        td->sets = p;
        *cap = nc;
    }
    onp_fixture *f = &td->sets[td->n];
    memset(f, 0, sizeof *f);
    f->dir = sub;
    onp_out_note_tree(sub); /* no output may land among the fixtures */
    f->index = (int)k;
    td->n++;
    if (list_numbered(sub, "input_", &f->inputs, &f->n_inputs, e) ||
        list_numbered(sub, "output_", &f->outputs, &f->n_outputs, e))
        return -1;
    return 0;
}

/* Does dir hold input_K / output_K tensor files itself? 1 yes, 0 no. */
static int holds_tensors(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    int found = 0;
    while (!found && (de = readdir(d)))
        found = numbered_tensor(de->d_name, "input_") >= 0 ||
                numbered_tensor(de->d_name, "output_") >= 0;
    closedir(d);
    return found;
}

int onp_testdata_scan(const char *dir, onp_testdata *td, onp_error *e)
{
    memset(td, 0, sizeof *td);
    DIR *d = opendir(dir);
    if (!d) return onp_error_set(e, ONP_ERR_IO, dir, NULL, -1, "cannot list: %s", strerror(errno));
    size_t cap = 0;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        long k = numbered(de->d_name, "test_data_set_", "");
        if (k < 0) continue;
        char *sub = join(dir, de->d_name);
        if (!sub) {
            rc = onp_error_set(e, ONP_ERR_NOMEM, dir, NULL, -1, "out of memory");
            break;
        }
        if (!onp_is_dir(sub)) {
            free(sub);
            continue;
        }
        if ((rc = add_fixture(td, &cap, sub, k, e))) break;
    }
    closedir(d);
    /* no test_data_set_N below: dir is one fixture folder itself when it
     * holds the tensor files (its number from a test_data_set_N name) */
    if (!rc && !td->n && holds_tensors(dir)) {
        const char *base = strrchr(dir, '/');
        long k = numbered(base && base[1] ? base + 1 : dir, "test_data_set_", "");
        char *self = strdup(dir);
        if (!self)
            rc = onp_error_set(e, ONP_ERR_NOMEM, dir, NULL, -1, "out of memory");
        else
            rc = add_fixture(td, &cap, self, k < 0 ? 0 : k, e);
    }
    if (rc) {
        onp_testdata_free(td);
        return -1;
    }
    if (td->n) qsort(td->sets, td->n, sizeof td->sets[0], cmp_fixture);
    return 0;
}

int onp_testdata_scan_dirs(const char *const *dirs, size_t n, onp_testdata *td, onp_error *e)
{
    memset(td, 0, sizeof *td);
    for (size_t i = 0; i < n; i++) {
        onp_testdata one;
        if (onp_testdata_scan(dirs[i], &one, e)) {
            onp_testdata_free(td);
            return -1;
        }
        if (one.n) {
            onp_fixture *p = realloc(td->sets, (td->n + one.n) * sizeof *p);
            if (!p) {
                onp_testdata_free(&one);
                onp_testdata_free(td);
                return onp_error_set(e, ONP_ERR_NOMEM, dirs[i], NULL, -1, "out of memory");
            }
            td->sets = p;
            memcpy(td->sets + td->n, one.sets, one.n * sizeof *p);
            td->n += one.n;
        }
        free(one.sets); /* the fixtures moved */
    }
    if (n > 1) /* numbered by position across the folders */
        for (size_t k = 0; k < td->n; k++) td->sets[k].index = (int)k;
    return 0;
}

int onp_testdata_require(const onp_testdata *td, const char *where, onp_error *e)
{
    for (size_t i = 0; i < td->n; i++)
        if (td->sets[i].n_outputs) return 0;
    if (!td->n)
        return onp_error_set(e, ONP_ERR_USAGE, where, NULL, -1,
                             "nothing to compare: no test_data_set_N folder here, and no "
                             "input_K/output_K files (.pb, .npy or .npz)");
    return onp_error_set(e, ONP_ERR_USAGE, where, NULL, -1,
                         "nothing to compare: %s%s holds no output_K.pb, .npy or .npz (the "
                         "expected outputs)",
                         td->n > 1 ? "none of the fixtures, e.g. " : "", td->sets[0].dir);
}

void onp_testdata_free(onp_testdata *td)
{
    if (!td) return;
    for (size_t i = 0; i < td->n; i++) {
        free(td->sets[i].dir);
        free_list(td->sets[i].inputs, td->sets[i].n_inputs);
        free_list(td->sets[i].outputs, td->sets[i].n_outputs);
    }
    free(td->sets);
    memset(td, 0, sizeof *td);
}

/* The path of output k's file in the folder `sub` beside fixture f's
 * files into path[n]: 1 when that file exists, else 0. */
static int beside_path(const onp_fixture *f, const char *sub, size_t k, char *path, size_t n)
{
    int w = snprintf(path, n, "%s/%s/output_%zu.pb", f->dir, sub, k);
    return w > 0 && (size_t)w < n && access(path, F_OK) == 0;
}

static int ref64_path(const onp_fixture *f, size_t k, char *path, size_t n)
{
    return beside_path(f, "reference64", k, path, n);
}

int onp_fixture_tie_path(const onp_fixture *f, size_t k, char *path, size_t n)
{
    return beside_path(f, "tie_ordered", k, path, n);
}

int onp_fixture_has_ref64(const onp_fixture *f, size_t k)
{
    char path[4200];
    return ref64_path(f, k, path, sizeof path);
}

int onp_fixture_read_ref64(const onp_fixture *f, size_t k, onp_tensor *t, onp_error *e)
{
    char path[4200];
    memset(t, 0, sizeof *t);
    if (!ref64_path(f, k, path, sizeof path)) return 0;
    return onp_tfile_read(path, NULL, t, e) ? -1 : 1;
}
