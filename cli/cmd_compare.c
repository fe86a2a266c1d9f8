/*
 * cmd_compare.c — `onnxparity compare EXPECTED ACTUAL`.
 *
 * EXPECTED and ACTUAL are tensor specs (X.pb, X.npy, X.npz:NAME), two .npz
 * archives (members paired by name), or two folders (every .pb / .npy below
 * EXPECTED paired with the file of the same relative path and stem below
 * ACTUAL, whatever its extension).  Exit 0 when every pair matches, 1 when
 * any differs or lacks its counterpart, 2 on bad input or when nothing was
 * compared, 3 on unreadable files.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "onnxparity/compare.h"
#include "onnxparity/tfile.h"
#include "report.h"

typedef struct pair {
    char *key;      /* name shown */
    char *expected; /* spec */
    char *actual;   /* spec, or NULL when missing */
    long ie, ia;    /* member indices in pairs.ze / pairs.za, or -1: read by spec */
} pair;

typedef struct pairs {
    pair *v;
    size_t n, cap;
    /* two archives compared member by member: opened (and indexed) once,
     * so the cost is linear in the number of members */
    onp_npz *ze, *za;
} pairs;

static int add_pair(pairs *p, const char *key, const char *e, const char *a)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        pair *v = realloc(p->v, cap * sizeof *v);
        if (!v) return -1;
        p->v = v;
        p->cap = cap;
    }
    pair *x = &p->v[p->n];
    x->key = strdup(key);
    x->expected = strdup(e);
    x->actual = a ? strdup(a) : NULL;
    x->ie = x->ia = -1;
    if (!x->key || !x->expected || (a && !x->actual)) return -1;
    p->n++;
    return 0;
}

static void free_pairs(pairs *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].key);
        free(p->v[i].expected);
        free(p->v[i].actual);
    }
    free(p->v);
    onp_npz_close(p->ze);
    onp_npz_close(p->za);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A folder that is not a symbolic link: the walk below descends only into
 * these, so links back up the tree (a -> ..) cannot multiply the work. */
static int is_real_dir(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collect relative paths of .pb/.npy files under root/rel (at most 16
 * folders deep; linked folders are not entered, linked files are read). */
static int walk_dir(const char *root, const char *rel, int depth, char ***list, size_t *n,
                    size_t *cap)
{
    if (depth > 16) return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
        char full[8192];
        snprintf(full, sizeof full, "%s/%s", root, sub);
        if (is_real_dir(full)) {
            if (walk_dir(root, sub, depth + 1, list, n, cap)) {
                closedir(d);
                return -1;
            }
            continue;
        }
        onp_tformat f = onp_tformat_from_path(sub);
        if (f != ONP_TF_PB && f != ONP_TF_NPY) continue;
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 64;
            char **v = realloc(*list, c * sizeof *v);
            if (!v) {
                closedir(d);
                return -1;
            }
            *list = v;
            *cap = c;
        }
        if (!((*list)[(*n)++] = strdup(sub))) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    return 0;
}

static int pair_dirs(const char *E, const char *A, pairs *p)
{
    char **list = NULL;
    size_t n = 0, cap = 0;
    int rc = walk_dir(E, "", 0, &list, &n, &cap);
    if (!rc && n) qsort(list, n, sizeof *list, cmp_str);
    for (size_t i = 0; !rc && i < n; i++) {
        char stem[4096], e[8192], a[8192];
        snprintf(stem, sizeof stem, "%s", list[i]);
        char *dot = strrchr(stem, '.');
        if (dot) *dot = '\0';
        snprintf(e, sizeof e, "%s/%s", E, list[i]);
        const char *found = NULL;
        static const char *exts[] = {".pb", ".npy"};
        for (int k = 0; k < 2 && !found; k++) {
            snprintf(a, sizeof a, "%s/%s%s", A, stem, exts[k]);
            if (exists(a)) found = a;
        }
        rc = add_pair(p, stem, e, found);
    }
    for (size_t i = 0; i < n; i++) free(list[i]);
    free(list);
    return rc;
}

static int pair_npz(const char *E, const char *A, pairs *p, onp_error *e)
{
    if (onp_npz_open(E, NULL, &p->ze, e) || onp_npz_open(A, NULL, &p->za, e)) return -1;
    onp_npz *ze = p->ze, *za = p->za;
    int rc = 0;
    for (size_t i = 0; !rc && i < onp_npz_count(ze); i++) {
        const char *name = onp_npz_name(ze, i);
        size_t ne = strlen(E) + strlen(name) + 2, na = strlen(A) + strlen(name) + 2;
        char *se = malloc(ne), *sa = malloc(na);
        if (!se || !sa)
            rc = -1;
        else {
            snprintf(se, ne, "%s:%s", E, name);
            snprintf(sa, na, "%s:%s", A, name);
            long ia = onp_npz_find(za, name);
            rc = add_pair(p, name, se, ia >= 0 ? sa : NULL);
            if (!rc) {
                p->v[p->n - 1].ie = (long)i;
                p->v[p->n - 1].ia = ia;
            }
        }
        free(se);
        free(sa);
    }
    if (rc) onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    return rc;
}

/* One side of a pair: member `i` of the archive held open, or the spec. */
static int read_side(onp_npz *z, long i, const char *spec, onp_tensor *t, onp_error *e)
{
    return z && i >= 0 ? onp_npz_read(z, (size_t)i, t, e) : onp_tfile_read(spec, NULL, t, e);
}

int cmd_compare(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    double rtol = -1, atol = -1;
    cli_format fmt = FMT_TEXT;
    int np = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_tol_format_opt(argc, argv, &i, &rtol, &atol, &fmt))) {
            if (r < 0) return EXIT_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error(argv[0], "unknown option '%s'", argv[i]);
        } else if (np < 2) {
            paths[np++] = argv[i];
        } else {
            return cli_usage_error(argv[0], "two paths only ('%s' is extra)", argv[i]);
        }
    }
    if (np != 2)
        return cli_usage_error(argv[0],
                               "usage: onnxparity compare EXPECTED ACTUAL [--rtol R] [--atol A]");
    onp_error e;
    onp_error_clear(&e);
    pairs p = {0};
    int rc = 0;
    int de = is_dir(paths[0]), da = is_dir(paths[1]);
    if (de != da) {
        return cli_usage_error(argv[0], "'%s' is a %s but '%s' is not", de ? paths[0] : paths[1],
                               "folder", de ? paths[1] : paths[0]);
    } else if (de) {
        if (pair_dirs(paths[0], paths[1], &p))
            rc = onp_error_set(&e, ONP_ERR_IO, paths[0], NULL, -1, "cannot list the folders");
    } else if (onp_tformat_from_path(paths[0]) == ONP_TF_NPZ &&
               onp_tformat_from_path(paths[1]) == ONP_TF_NPZ) {
        rc = pair_npz(paths[0], paths[1], &p, &e);
    } else {
        rc = add_pair(&p, paths[0], paths[0], paths[1]);
    }
    if (rc) {
        free_pairs(&p);
        return cli_report(&e);
    }
    if (!p.n) {
        free_pairs(&p);
        return cli_usage_error(argv[0], "nothing to compare under '%s'", paths[0]);
    }
    cJSON *root = NULL, *arr = NULL;
    if (fmt == FMT_JSON) {
        root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "schema", "onnxparity.compare/1");
        arr = cJSON_AddArrayToObject(root, "pairs");
    } else {
        printf("%-28s %-9s %-16s %-9s %-9s %-14s %s\n", "PAIR", "DTYPE", "SHAPE", "MAX_ABS",
               "MAX_REL", "MISMATCH", "RESULT");
    }
    int failed = 0, exit_code = EXIT_PASS;
    for (size_t i = 0; i < p.n; i++) {
        pair *x = &p.v[i];
        onp_tensor te = {0}, ta = {0};
        onp_metrics m;
        const char *result;
        int ok = 0;
        char shape[300] = "", dt[16] = "";
        if (!x->actual) {
            result = "missing in ACTUAL";
        } else if (read_side(p.ze, x->ie, x->expected, &te, &e) ||
                   read_side(p.za, x->ia, x->actual, &ta, &e)) {
            onp_tensor_release(&te);
            free_pairs(&p);
            cJSON_Delete(root);
            return cli_report(&e);
        } else {
            onp_tol tol = onp_tol_default(te.dtype);
            if (rtol >= 0) tol.rtol = rtol;
            if (atol >= 0) tol.atol = atol;
            if (onp_compare(&te, &ta, tol, &m, &e)) {
                onp_error_set_file(&e, x->actual);
                onp_tensor_release(&te);
                onp_tensor_release(&ta);
                free_pairs(&p);
                cJSON_Delete(root);
                return cli_report(&e);
            }
            ok = m.pass;
            onp_shape_str(te.rank, te.dims, shape, sizeof shape);
            snprintf(dt, sizeof dt, "%s", onp_dtype_name(te.dtype));
            if (!m.shape_ok) {
                char s2[128];
                onp_shape_str(ta.rank, ta.dims, s2, sizeof s2);
                snprintf(shape + strlen(shape), sizeof shape - strlen(shape), " vs %s", s2);
                result = "shape differs";
            } else if (!m.dtype_ok) {
                result = "dtype differs";
            } else {
                result = ok ? "ok" : "DIFFERS";
            }
        }
        if (!ok) failed++;
        if (fmt == FMT_JSON) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", x->key);
            cJSON_AddStringToObject(o, "expected", x->expected);
            if (x->actual)
                cJSON_AddStringToObject(o, "actual", x->actual);
            else
                cJSON_AddNullToObject(o, "actual");
            cJSON_AddBoolToObject(o, "pass", ok);
            cJSON_AddStringToObject(o, "result", result);
            if (x->actual) {
                cJSON_AddStringToObject(o, "dtype", dt);
                cJSON_AddStringToObject(o, "actual_dtype", onp_dtype_name(ta.dtype));
                cJSON *sh = cJSON_AddArrayToObject(o, "shape");
                for (int k = 0; k < te.rank; k++)
                    cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)te.dims[k]));
                report_metrics_json(o, &m);
            }
            cJSON_AddItemToArray(arr, o);
        } else {
            char ma[32] = "-", mr[32] = "-", mm[40] = "-";
            if (x->actual && m.shape_ok) {
                report_fmt(m.max_abs, ma, sizeof ma);
                report_fmt(m.max_rel, mr, sizeof mr);
                snprintf(mm, sizeof mm, "%lld/%lld", (long long)m.mismatches, (long long)m.count);
            }
            printf("%-28s %-9s %-16s %-9s %-9s %-14s %s\n", x->key, dt, shape, ma, mr, mm, result);
            if (x->actual && m.shape_ok && !ok && m.worst_index >= 0) {
                char we[32], wa[32];
                report_fmt(m.worst_expected, we, sizeof we);
                report_fmt(m.worst_actual, wa, sizeof wa);
                printf("  worst at flat index %lld: expected %s, actual %s; would pass with rtol "
                       "%.3g (atol %.3g) or atol %.3g (rtol %.3g)\n",
                       (long long)m.worst_index, we, wa, m.needed_rtol, m.tol.atol, m.needed_atol,
                       m.tol.rtol);
            }
        }
        onp_tensor_release(&te);
        onp_tensor_release(&ta);
    }
    if (failed) exit_code = EXIT_FAIL;
    if (fmt == FMT_JSON) {
        cJSON_AddStringToObject(root, "verdict", failed ? "fail" : "pass");
        cJSON_AddNumberToObject(root, "compared", (double)p.n);
        cJSON_AddNumberToObject(root, "failed", (double)failed);
        report_print_json(root);
    } else {
        printf("verdict: %s (%zu pairs, %d differ)\n", failed ? "FAIL" : "pass", p.n, failed);
    }
    free_pairs(&p);
    return exit_code;
}
