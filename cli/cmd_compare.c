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
#include "onnxparity/doc.h"
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

/* Parse compare's command line: the two paths, --rtol/--atol (-1 when not
 * given) and --format.  0, or the exit code of a usage error (printed). */
static int compare_parse_args(int argc, char **argv, const char *paths[2], double *rtol,
                              double *atol, cli_format *fmt)
{
    int np = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_tol_format_opt(argc, argv, &i, rtol, atol, fmt))) {
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
    return 0;
}

/* The pairs to compare, by what the two paths are: two folders, two .npz
 * archives, or two tensor specs.  0 with at least one pair in *p; else the
 * exit code after the error was reported, *p freed. */
static int collect_pairs(const char *cmd, const char *const paths[2], pairs *p, onp_error *e)
{
    int rc = 0;
    int de = is_dir(paths[0]), da = is_dir(paths[1]);
    if (de != da) {
        return cli_usage_error(cmd, "'%s' is a %s but '%s' is not", de ? paths[0] : paths[1],
                               "folder", de ? paths[1] : paths[0]);
    } else if (de) {
        if (pair_dirs(paths[0], paths[1], p))
            rc = onp_error_set(e, ONP_ERR_IO, paths[0], NULL, -1, "cannot list the folders");
    } else if (onp_tformat_from_path(paths[0]) == ONP_TF_NPZ &&
               onp_tformat_from_path(paths[1]) == ONP_TF_NPZ) {
        rc = pair_npz(paths[0], paths[1], p, e);
    } else {
        rc = add_pair(p, paths[0], paths[0], paths[1]);
    }
    if (rc) {
        free_pairs(p);
        return cli_report(e);
    }
    if (!p->n) {
        free_pairs(p);
        return cli_usage_error(cmd, "nothing to compare under '%s'", paths[0]);
    }
    return 0;
}

/* One pair compared: what the JSON and text writers show. */
typedef struct pair_result {
    onp_tensor te, ta;  /* both sides as read; empty when ACTUAL is missing */
    onp_metrics m;      /* set when both sides were read */
    const char *result; /* "ok", "DIFFERS", "shape differs", "dtype differs", "missing in ACTUAL" */
    int ok;
    char shape[300], dt[16]; /* EXPECTED's shape (" vs " ACTUAL's when they differ), dtype */
} pair_result;

/* Read both sides of pair x and compare them with the dtype's default
 * tolerance (rtol/atol replace its parts when >= 0).  0 with *r filled (the
 * caller releases r->te and r->ta); -1 with both released and *e set when a
 * side cannot be read or compared. */
static int compare_pair(const pairs *p, const pair *x, double rtol, double atol, pair_result *r,
                        onp_error *e)
{
    memset(r, 0, sizeof *r);
    if (!x->actual) {
        r->result = "missing in ACTUAL";
        return 0;
    }
    if (read_side(p->ze, x->ie, x->expected, &r->te, e) ||
        read_side(p->za, x->ia, x->actual, &r->ta, e)) {
        onp_tensor_release(&r->te);
        return -1;
    }
    onp_tol tol = onp_tol_with(r->te.dtype, rtol, atol);
    if (onp_compare(&r->te, &r->ta, tol, &r->m, e)) {
        onp_error_set_file(e, x->actual);
        onp_tensor_release(&r->te);
        onp_tensor_release(&r->ta);
        return -1;
    }
    r->ok = r->m.pass;
    onp_shape_str(r->te.rank, r->te.dims, r->shape, sizeof r->shape);
    snprintf(r->dt, sizeof r->dt, "%s", onp_dtype_name(r->te.dtype));
    if (!r->m.shape_ok) {
        char s2[128];
        onp_shape_str(r->ta.rank, r->ta.dims, s2, sizeof s2);
        snprintf(r->shape + strlen(r->shape), sizeof r->shape - strlen(r->shape), " vs %s", s2);
        r->result = "shape differs";
    } else if (!r->m.dtype_ok) {
        r->result = "dtype differs";
    } else {
        r->result = r->ok ? "ok" : "DIFFERS";
    }
    return 0;
}

/* Pair x's entry of the JSON document's "pairs". */
static cJSON *pair_json(const pair *x, const pair_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", x->key);
    cJSON_AddStringToObject(o, "expected", x->expected);
    if (x->actual)
        cJSON_AddStringToObject(o, "actual", x->actual);
    else
        cJSON_AddNullToObject(o, "actual");
    cJSON_AddBoolToObject(o, "pass", r->ok);
    cJSON_AddStringToObject(o, "result", r->result);
    if (x->actual) {
        cJSON_AddStringToObject(o, "dtype", r->dt);
        cJSON_AddStringToObject(o, "actual_dtype", onp_dtype_name(r->ta.dtype));
        cJSON *sh = cJSON_AddArrayToObject(o, "shape");
        for (int k = 0; k < r->te.rank; k++)
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)r->te.dims[k]));
        onp_doc_metrics(o, &r->m);
    }
    return o;
}

/* Pair x's row of the text table, and the worst element when it differs. */
static void print_pair_text(const pair *x, const pair_result *r)
{
    const onp_metrics *m = &r->m;
    char ma[32] = "-", mr[32] = "-", mm[40] = "-";
    if (x->actual && m->shape_ok) {
        report_fmt(m->max_abs, ma, sizeof ma);
        report_fmt(m->max_rel, mr, sizeof mr);
        snprintf(mm, sizeof mm, "%lld/%lld", (long long)m->mismatches, (long long)m->count);
    }
    printf("%-28s %-9s %-16s %-9s %-9s %-14s %s\n", x->key, r->dt, r->shape, ma, mr, mm, r->result);
    if (x->actual && m->shape_ok && !r->ok && m->worst_index >= 0) {
        char we[32], wa[32];
        report_fmt(m->worst_expected, we, sizeof we);
        report_fmt(m->worst_actual, wa, sizeof wa);
        printf("  worst at flat index %lld: expected %s, actual %s; would pass with rtol "
               "%.3g (atol %.3g) or atol %.3g (rtol %.3g)\n",
               (long long)m->worst_index, we, wa, m->needed_rtol, m->tol.atol, m->needed_atol,
               m->tol.rtol);
    }
}

int cmd_compare(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    double rtol = -1, atol = -1;
    cli_format fmt = FMT_TEXT;
    int rc = compare_parse_args(argc, argv, paths, &rtol, &atol, &fmt);
    if (rc) return rc;
    onp_error e;
    onp_error_clear(&e);
    pairs p = {0};
    if ((rc = collect_pairs(argv[0], paths, &p, &e))) return rc;
    cJSON *root = NULL, *arr = NULL;
    if (fmt == FMT_JSON) {
        root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "schema", "onnxparity.compare/1");
        arr = cJSON_AddArrayToObject(root, "pairs");
    } else {
        printf("%-28s %-9s %-16s %-9s %-9s %-14s %s\n", "PAIR", "DTYPE", "SHAPE", "MAX_ABS",
               "MAX_REL", "MISMATCH", "RESULT");
    }
    int failed = 0;
    for (size_t i = 0; i < p.n; i++) {
        pair *x = &p.v[i];
        pair_result r;
        if (compare_pair(&p, x, rtol, atol, &r, &e)) {
            free_pairs(&p);
            cJSON_Delete(root);
            return cli_report(&e);
        }
        if (!r.ok) failed++;
        if (fmt == FMT_JSON)
            cJSON_AddItemToArray(arr, pair_json(x, &r));
        else
            print_pair_text(x, &r);
        onp_tensor_release(&r.te);
        onp_tensor_release(&r.ta);
    }
    onp_run_verdict verdict = onp_run_verdict_of_compare((size_t)failed);
    if (fmt == FMT_JSON) {
        cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(verdict));
        cJSON_AddNumberToObject(root, "compared", (double)p.n);
        cJSON_AddNumberToObject(root, "failed", (double)failed);
        report_print_json(root);
    } else {
        printf("verdict: %s (%zu pairs, %d differ)\n", report_verdict_word(verdict), p.n, failed);
    }
    free_pairs(&p);
    return onp_run_exit_code(verdict);
}
