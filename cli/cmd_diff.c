/*
 * cmd_diff.c — `onnxparity diff OLD.json NEW.json [--format text|json]`:
 * what got worse between two check documents of one model (main's run and
 * a pull request's, say), output by output and fixture by fixture
 * (docs/gate.md, "A baseline diff").
 *
 * This file reads the documents and reduces them to the library's
 * onp_baseline_values; the library (baseline.h) decides what is worse and
 * the verdict; env.h says what differs in the environment.  Pairs are
 * matched by output name, and by fixture folder name + output name.
 *
 * Exit: 0 unchanged or improved, 1 something got worse (regressed or
 * mixed), 2 bad usage or documents that are not check documents (a member
 * of the wrong type included: read_doc), 3 unreadable or non-JSON files.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "infile.h"
#include "onnxparity/baseline.h"
#include "onnxparity/env.h"
#include "onnxparity/doc.h"
#include "onnxparity/json.h"
#include "onnxparity/jspec.h"
#include "report.h"

/* One pair: an output over every fixture (fixture[0] == '\0'), or one
 * fixture's output. */
typedef struct pair {
    char fixture[256];
    char output[256];
    onp_baseline_values side[2]; /* [0] OLD, [1] NEW */
    double rows[2], agree[2];    /* top-1 rows and agreeing rows summed over fixtures */
    onp_change change;
    char why[300];
} pair;

typedef struct pairs {
    pair *p;
    size_t n, cap;
} pairs;

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A number member (or "nan", "inf", "-inf", as the documents write
 * non-finite values); dflt when absent or null.  The document's types were
 * checked when it was read (read_doc), so nothing else is left. */
static double num_of(const cJSON *o, const char *key, double dflt)
{
    double d;
    return onp_json_real(cJSON_GetObjectItemCaseSensitive(o, key), &d) ? dflt : d;
}

static void values_init(onp_baseline_values *v)
{
    *v = (onp_baseline_values){0, 1, NAN, NAN, NAN, -1, -1};
}

/* The index of the pair (fixture, output), added (both sides absent) when
 * new; (size_t)-1 when memory ran out.  An index, not a pointer: adding a
 * pair may move the array. */
static size_t find(pairs *ps, const char *fixture, const char *output)
{
    for (size_t i = 0; i < ps->n; i++)
        if (!strcmp(ps->p[i].fixture, fixture) && !strcmp(ps->p[i].output, output)) return i;
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 32;
        pair *p = realloc(ps->p, cap * sizeof *p);
        if (!p) return (size_t)-1;
        ps->p = p, ps->cap = cap;
    }
    pair *x = &ps->p[ps->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->fixture, sizeof x->fixture, "%s", fixture);
    snprintf(x->output, sizeof x->output, "%s", output);
    values_init(&x->side[0]);
    values_init(&x->side[1]);
    return ps->n - 1;
}

/* Fold one fixture's output `o` into the values v (the aggregate over
 * fixtures: worst max_abs, worst mismatch fraction, summed top-1 rows). */
static void fold(onp_baseline_values *v, const cJSON *o, double *rows, double *agree)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, "judgment");
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(o, "topk");
    double ma = num_of(o, "max_abs", NAN), mr = num_of(o, "max_rel", NAN);
    double mf = num_of(o, "mismatch_frac", NAN);
    double env = num_of(cJSON_GetObjectItemCaseSensitive(j, "envelope"), "max_abs", -1);
    v->pass &= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "pass"));
    if (!isnan(ma)) v->max_abs = isnan(v->max_abs) ? ma : fmax(v->max_abs, ma);
    if (!isnan(mr)) v->max_rel = isnan(v->max_rel) ? mr : fmax(v->max_rel, mr);
    if (!isnan(mf)) v->mismatch_frac = isnan(v->mismatch_frac) ? mf : fmax(v->mismatch_frac, mf);
    if (env > v->envelope) v->envelope = env;
    double r = num_of(tk, "rows", 0);
    if (r > 0) {
        *rows += r;
        *agree += num_of(tk, "top1_agree", 0);
        v->top1 = *agree / *rows;
    }
}

/* Every output of document `doc` as side `s` of the pairs.  0; -1 out of
 * memory. */
static int collect(pairs *ps, const cJSON *doc, int s)
{
    const cJSON *f, *o;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "fixtures"))
    {
        const char *dir = str_of(f, "dir");
        const char *fx = dir && strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir ? dir : "?";
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(f, "outputs"))
        {
            const char *name = str_of(o, "name");
            size_t i1 = find(ps, fx, name), i2 = find(ps, "", name);
            if (i1 == (size_t)-1 || i2 == (size_t)-1) return -1;
            pair *one = &ps->p[i1], *all = &ps->p[i2];
            one->side[s].present = all->side[s].present = 1;
            fold(&one->side[s], o, &one->rows[s], &one->agree[s]);
            fold(&all->side[s], o, &all->rows[s], &all->agree[s]);
        }
    }
    return 0;
}

/* What the types alone do not say: top-1 agreement counts no more rows than
 * there are (an agreement above 1 would read as an improvement).  0, or -1
 * with e naming the member. */
static int check_counts(const cJSON *doc, const char *path, onp_error *e)
{
    const cJSON *f, *o;
    size_t i = 0;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "fixtures"))
    {
        size_t k = 0;
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(f, "outputs"))
        {
            const cJSON *tk = cJSON_GetObjectItemCaseSensitive(o, "topk");
            if (num_of(tk, "top1_agree", 0) > num_of(tk, "rows", 0)) {
                char field[96];
                snprintf(field, sizeof field, "fixtures[%zu].outputs[%zu].topk.top1_agree", i, k);
                return onp_error_set(e, ONP_ERR_INPUT, path, field, -1, "more than topk.rows");
            }
            k++;
        }
        i++;
    }
    return 0;
}

/* Read one check document: strict JSON, the schema id, every member diff
 * reads of the type check-1.json gives it (onp_jspec_of: a max_abs of "x",
 * [] or -1, a pass of "yes" are refused, naming the member), fixtures
 * present.  The exit code (2, 3) after the message, or 0. */
static int read_doc(const char *cmd, const char *path, cJSON **out)
{
    onp_error e;
    onp_error_clear(&e);
    if (!(*out = cli_read_json(path, ONP_ERR_FORMAT, "not valid JSON", &e))) return cli_report(&e);
    const char *schema = str_of(*out, "schema");
    if (!schema || strcmp(schema, "onnxparity.check/1"))
        return cli_usage_error(cmd, "%s: schema '%.64s', not onnxparity.check/1", path,
                               schema ? schema : "(none)");
    if (onp_jspec_check(*out, onp_jspec_of(schema), path, &e) || check_counts(*out, path, &e))
        return cli_report(&e);
    if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(*out, "fixtures")))
        return cli_usage_error(cmd, "%s: no fixtures (a run that could not start?)", path);
    return 0;
}

static cJSON *values_json(const onp_baseline_values *v)
{
    if (!v->present) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "pass", v->pass);
    const char *keys[] = {"max_abs", "max_rel", "mismatch_frac"};
    const double vals[] = {v->max_abs, v->max_rel, v->mismatch_frac};
    for (int k = 0; k < 3; k++)
        if (isnan(vals[k]))
            cJSON_AddNullToObject(o, keys[k]);
        else
            onp_doc_num(o, keys[k], vals[k]);
    if (v->top1 >= 0)
        onp_doc_num(o, "top1_agree", v->top1);
    else
        cJSON_AddNullToObject(o, "top1_agree");
    return o;
}

static cJSON *pair_json(const pair *x)
{
    cJSON *o = cJSON_CreateObject();
    if (x->fixture[0])
        cJSON_AddStringToObject(o, "fixture", x->fixture);
    else
        cJSON_AddNullToObject(o, "fixture");
    cJSON_AddStringToObject(o, "output", x->output);
    cJSON_AddStringToObject(o, "change", onp_change_name(x->change));
    cJSON_AddStringToObject(o, "why", x->why);
    cJSON_AddItemToObject(o, "old", values_json(&x->side[0]));
    cJSON_AddItemToObject(o, "new", values_json(&x->side[1]));
    return o;
}

static cJSON *side_json(const char *file, const cJSON *doc)
{
    cJSON *o = cJSON_CreateObject();
    const char *sha = str_of(cJSON_GetObjectItemCaseSensitive(doc, "environment"), "model_sha256");
    cJSON_AddStringToObject(o, "file", file);
    cJSON_AddStringToObject(o, "verdict",
                            str_of(doc, "verdict") ? str_of(doc, "verdict") : "error");
    if (sha)
        cJSON_AddStringToObject(o, "model_sha256", sha);
    else
        cJSON_AddNullToObject(o, "model_sha256");
    return o;
}

int cmd_diff(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL}, *v;
    cli_format fmt = FMT_TEXT;
    size_t nf = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_opt(argc, argv, &i, "format", &v))) {
            if (r < 0 || cli_parse_format(argv[0], v, &fmt)) return EXIT_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error(argv[0], "unknown option '%s'", argv[i]);
        } else if (nf < 2) {
            files[nf++] = argv[i];
        } else {
            return cli_usage_error(argv[0], "two documents: OLD.json NEW.json");
        }
    }
    if (nf != 2)
        return cli_usage_error(argv[0],
                               "usage: onnxparity diff OLD.json NEW.json [--format text|json]");
    cJSON *docs[2] = {NULL, NULL};
    pairs ps = {NULL, 0, 0};
    int rc = read_doc(argv[0], files[0], &docs[0]);
    if (!rc) rc = read_doc(argv[0], files[1], &docs[1]);
    if (!rc && (collect(&ps, docs[0], 0) || collect(&ps, docs[1], 1)))
        rc = cli_usage_error(argv[0], "out of memory");
    if (rc) goto out;
    size_t counts[ONP_CHANGE_COUNT] = {0}, worse_out = 0, worse_fx = 0;
    for (size_t i = 0; i < ps.n; i++) {
        pair *x = &ps.p[i];
        x->change = onp_baseline_judge(&x->side[0], &x->side[1], x->why, sizeof x->why);
        counts[x->change]++;
        int bad = x->change == ONP_CHANGE_WORSE || x->change == ONP_CHANGE_ONLY_OLD;
        if (bad) x->fixture[0] ? worse_fx++ : worse_out++;
    }
    onp_baseline_verdict verdict = onp_baseline_verdict_of(counts);
    onp_env envs[2];
    onp_env_drift drift[ONP_ENV_FIELD_COUNT];
    for (int s = 0; s < 2; s++) {
        onp_env_init(&envs[s]);
        onp_env_read_json(&envs[s], cJSON_GetObjectItemCaseSensitive(docs[s], "environment"));
    }
    size_t n_drift = onp_env_compare(&envs[0], &envs[1], drift);
    if (fmt == FMT_JSON) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "schema", "onnxparity.diff/1");
        cJSON_AddStringToObject(root, "verdict", onp_baseline_verdict_name(verdict));
        cJSON_AddItemToObject(root, "old", side_json(files[0], docs[0]));
        cJSON_AddItemToObject(root, "new", side_json(files[1], docs[1]));
        cJSON *dj = cJSON_AddArrayToObject(root, "environment_drift");
        for (size_t i = 0; i < n_drift; i++) {
            cJSON *d = cJSON_CreateObject();
            cJSON_AddStringToObject(d, "field", onp_env_field_name(drift[i].field));
            cJSON_AddStringToObject(d, "kind", onp_drift_kind_name(drift[i].kind));
            cJSON_AddStringToObject(d, "old", drift[i].recorded);
            cJSON_AddStringToObject(d, "new", drift[i].current);
            cJSON_AddItemToArray(dj, d);
        }
        cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
        cJSON *fxs = cJSON_AddArrayToObject(root, "fixtures");
        for (size_t i = 0; i < ps.n; i++)
            cJSON_AddItemToArray(ps.p[i].fixture[0] ? fxs : outs, pair_json(&ps.p[i]));
        cJSON *sum = cJSON_AddObjectToObject(root, "summary");
        cJSON_AddNumberToObject(sum, "worse", (double)counts[ONP_CHANGE_WORSE]);
        cJSON_AddNumberToObject(sum, "better", (double)counts[ONP_CHANGE_BETTER]);
        cJSON_AddNumberToObject(sum, "same", (double)counts[ONP_CHANGE_SAME]);
        cJSON_AddNumberToObject(sum, "only_old", (double)counts[ONP_CHANGE_ONLY_OLD]);
        cJSON_AddNumberToObject(sum, "only_new", (double)counts[ONP_CHANGE_ONLY_NEW]);
        report_print_json(root);
    } else {
        printf("diff     %s (%s) -> %s (%s)\n", files[0],
               str_of(docs[0], "verdict") ? str_of(docs[0], "verdict") : "?", files[1],
               str_of(docs[1], "verdict") ? str_of(docs[1], "verdict") : "?");
        for (size_t i = 0; i < n_drift; i++)
            printf("drift    %s: %.12s -> %.12s%s\n", onp_env_field_name(drift[i].field),
                   drift[i].recorded, drift[i].current[0] ? drift[i].current : "unknown",
                   drift[i].kind == ONP_DRIFT_NOTE ? " (expected after a re-export)" : "");
        for (int pass = 0; pass < 2; pass++) /* every output, then the fixtures that changed */
            for (size_t i = 0; i < ps.n; i++) {
                const pair *x = &ps.p[i];
                if (!x->fixture[0] != !pass || (pass && x->change == ONP_CHANGE_SAME)) continue;
                printf("%-8s %s%s%s: %s%s%s\n", pass ? "fixture" : "output", x->fixture,
                       pass ? " " : "", x->output, onp_change_name(x->change),
                       x->why[0] ? ": " : "", x->why);
            }
        printf("verdict: %s — %zu output(s) and %zu fixture output(s) worse or missing, %zu "
               "better\n",
               verdict == ONP_BASELINE_REGRESSED ? "REGRESSED"
               : verdict == ONP_BASELINE_MIXED   ? "MIXED"
                                                 : onp_baseline_verdict_name(verdict),
               worse_out, worse_fx, counts[ONP_CHANGE_BETTER]);
    }
    rc = onp_run_exit_code(onp_run_verdict_of_baseline(verdict));
out:
    free(ps.p);
    cJSON_Delete(docs[0]);
    cJSON_Delete(docs[1]);
    return rc;
}
