/*
 * cmd_merge.c — `onnxparity merge RESULT.json...`: combine the JSON
 * documents of `check --shard I/N --format json` runs (or any check
 * documents of one model) into one document and verdict (docs/gate.md).
 *
 * Every document must be a check document ("onnxparity.check/1") of the
 * same model (environment.model_sha256).  Shard documents (with a "shard"
 * member) must all have the same shard count N and together cover every
 * shard 0..N-1 exactly once; their fixtures are put back in the order an
 * unsharded run has (fixture j of shard i was at position i + j*N).
 * Documents without "shard" are concatenated in the order given.
 *
 * The merged "lint" holds each finding of the documents once (every shard
 * lints the same model); --sarif writes those findings as check --sarif
 * does, --junit and --html the merged document.
 *
 * The merged verdict, which fixtures fail and which entry of a cause is kept
 * are the library's rules (include/onnxparity/merge.h); this file reads,
 * vets, orders and writes.
 *
 * Exit: 0 merged verdict pass, 1 fail, 2 bad usage or documents that do not
 * belong together, 3 unreadable or malformed files, 4 a shard's verdict is
 * "error" (ONNX Runtime could not load the model there).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "onnxparity/agreement.h"
#include "onnxparity/buf.h"
#include "infile.h"
#include "junit.h"
#include "lintdoc.h"
#include "onnxparity/doc.h"
#include "onnxparity/env.h"
#include "onnxparity/merge.h"
#include "onnxparity/jspec.h"
#include "report.h"

#define MAX_DOCS 4096

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Text from a document quoted in a message: at most `max` bytes, control
 * characters as '?', so the message stays one line. */
static const char *shown(const char *s, size_t max, char *buf, size_t n)
{
    snprintf(buf, n, "%.*s", (int)max, s ? s : "(none)");
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
    return buf;
}

static long num_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) v = cJSON_GetObjectItemCaseSensitive(v, b);
    /* counts and indices: a whole number in [0, 1e12], else -1 (a cast of
     * 1e300 to long would be undefined; sums of 1e12s cannot overflow) */
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 1e12)) return -1;
    return v->valuedouble == (double)(long)v->valuedouble ? (long)v->valuedouble : -1;
}

/* cJSON prints numbers with 15 significant digits when they read back
 * "close enough"; the merged document must carry the shards' numbers
 * exactly, so every number becomes a raw item with the shortest exact form
 * (as report_num writes them). */
static void exact_numbers(cJSON *node)
{
    cJSON *c = node ? node->child : NULL;
    while (c) {
        cJSON *next = c->next;
        if (cJSON_IsNumber(c)) {
            char buf[40];
            for (int prec = 15; prec <= 17; prec++) {
                snprintf(buf, sizeof buf, "%.*g", prec, c->valuedouble);
                if (strtod(buf, NULL) == c->valuedouble) break;
            }
            cJSON *raw = cJSON_CreateRaw(buf);
            if (raw) {
                raw->string = c->string; /* the member name moves to the new item */
                c->string = NULL;
                cJSON_ReplaceItemViaPointer(node, c, raw);
            }
        } else {
            exact_numbers(c);
        }
        c = next;
    }
}

/* Shards measured in different environments do not merge: every field of
 * env.h (ORT version and library, provider, opt level, threads, session
 * config, opset, exporter, torch) must be equal in every document, both
 * ways (a field one document has and another lacks differs too).  0, or
 * exit 2 after naming the file and the field. */
static int same_environment(const char *cmd, const char *const *files, cJSON *const *docs, size_t n)
{
    onp_env first, other;
    onp_env_init(&first);
    onp_env_read_json(&first, cJSON_GetObjectItemCaseSensitive(docs[0], "environment"));
    for (size_t i = 1; i < n; i++) {
        onp_env_drift d[ONP_ENV_FIELD_COUNT];
        onp_env_init(&other);
        onp_env_read_json(&other, cJSON_GetObjectItemCaseSensitive(docs[i], "environment"));
        size_t k = onp_env_compare(&first, &other, d);
        if (!k) k = onp_env_compare(&other, &first, d);
        if (!k) continue;
        char a[80], b[80];
        const char *va = d[0].recorded, *vb = d[0].current;
        if (d[0].recorded != first.v[d[0].field]) va = d[0].current, vb = d[0].recorded;
        return cli_usage_error(cmd,
                               "%s: environment.%s '%s' differs from %s's '%s': results measured "
                               "in different environments do not merge",
                               files[i], onp_env_field_name(d[0].field),
                               shown(vb[0] ? vb : "(none)", 64, a, sizeof a), files[0],
                               shown(va[0] ? va : "(none)", 64, b, sizeof b));
    }
    return 0;
}

/* Shards judged with other options (check's "options": --top-k,
 * --strict-tol, --no-noise-estimate, --no-lint) do not merge: each member
 * must be equal in every document, both ways (one a document lacks, as one
 * written before "options" existed, differs from one it has).  0, or exit 2
 * naming the file and the option. */
static int same_options(const char *cmd, const char *const *files, cJSON *const *docs, size_t n)
{
    const cJSON *first = cJSON_GetObjectItemCaseSensitive(docs[0], "options");
    for (size_t i = 1; i < n; i++) {
        const cJSON *other = cJSON_GetObjectItemCaseSensitive(docs[i], "options");
        for (int pass = 0; pass < 2; pass++) {
            const cJSON *a = pass ? other : first, *b = pass ? first : other, *m;
            cJSON_ArrayForEach(m, a)
            {
                const cJSON *mb = cJSON_GetObjectItemCaseSensitive(b, m->string);
                if (mb && cJSON_Compare(m, mb, 1)) continue;
                char *va = cJSON_PrintUnformatted(pass ? mb : m);
                char *vb = cJSON_PrintUnformatted(pass ? m : mb);
                char sa[80], sb[80], key[80];
                int rc = cli_usage_error(cmd,
                                         "%s: options.%s %s differs from %s's %s: results judged "
                                         "with different options do not merge",
                                         files[i], shown(m->string, 64, key, sizeof key),
                                         shown(vb ? vb : "(none)", 64, sb, sizeof sb), files[0],
                                         shown(va ? va : "(none)", 64, sa, sizeof sa));
                free(va);
                free(vb);
                return rc;
            }
        }
    }
    return 0;
}

/* The tolerance each output was compared with must be the same in every
 * document (a shard run with --rtol 1 --atol 1 would pass anything).  0,
 * or exit 2 naming the file, the output and both tolerances. */
static int same_tolerances(const char *cmd, const char *const *files, cJSON *const *docs, size_t n)
{
    const cJSON *seen = NULL; /* an object: output name -> [rtol, atol, doc index] */
    cJSON *tab = cJSON_CreateObject();
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const cJSON *f, *o;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(docs[i], "fixtures"))
        {
            cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(f, "outputs"))
            {
                const char *name = str_at(o, "name", NULL);
                const cJSON *rt = cJSON_GetObjectItemCaseSensitive(o, "rtol");
                const cJSON *at = cJSON_GetObjectItemCaseSensitive(o, "atol");
                if (!name || !cJSON_IsNumber(rt) || !cJSON_IsNumber(at) || rc) continue;
                seen = cJSON_GetObjectItemCaseSensitive(tab, name);
                if (!seen) {
                    cJSON *t = cJSON_CreateArray();
                    cJSON_AddItemToArray(t, cJSON_CreateNumber(rt->valuedouble));
                    cJSON_AddItemToArray(t, cJSON_CreateNumber(at->valuedouble));
                    cJSON_AddItemToArray(t, cJSON_CreateNumber((double)i));
                    cJSON_AddItemToObject(tab, name, t);
                    continue;
                }
                double r0 = cJSON_GetArrayItem(seen, 0)->valuedouble;
                double a0 = cJSON_GetArrayItem(seen, 1)->valuedouble;
                size_t i0 = (size_t)cJSON_GetArrayItem(seen, 2)->valuedouble;
                if (r0 == rt->valuedouble && a0 == at->valuedouble) continue;
                char nm[80];
                rc = cli_usage_error(cmd,
                                     "%s: output '%s' was compared with rtol %.9g, atol %.9g; "
                                     "%s with rtol %.9g, atol %.9g: results under different "
                                     "tolerances do not merge",
                                     files[i], shown(name, 64, nm, sizeof nm), rt->valuedouble,
                                     at->valuedouble, files[i0], r0, a0);
            }
        }
    }
    cJSON_Delete(tab);
    return rc;
}

/* --- merge --junit: the merged document as JUnit --------------------------- */

static double num_or(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* One case per fixture x output (in the merged order), then one per
 * error-level lint finding, once (every shard linted the same model).  The
 * check documents hold no timings (they are byte-identical run to run), so
 * every time is 0: the shards' own --junit files have them. */
static int write_junit(const cJSON *root, const char *path)
{
    junit j;
    junit_init(&j);
    onp_env env;
    onp_env_init(&env);
    onp_env_read_json(&env, cJSON_GetObjectItemCaseSensitive(root, "environment"));
    junit_env_properties(&j, &env);
    const cJSON *f, *o;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(root, "fixtures"))
    {
        const char *dir = str_at(f, "dir", NULL);
        const char *fx = dir && strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir ? dir : "?";
        onp_fixture_status st;
        int st_error = !onp_fixture_status_from_name(str_at(f, "status", NULL), &st) &&
                       st == ONP_FIXTURE_ERROR;
        const cJSON *outs = cJSON_GetObjectItemCaseSensitive(f, "outputs");
        int n_out = cJSON_GetArraySize(outs);
        if (st_error && !n_out)
            junit_case(&j, fx, "(fixture)", JUNIT_ERROR, str_at(f, "error", NULL), NULL);
        cJSON_ArrayForEach(o, outs)
        {
            const char *name = str_at(o, "name", NULL);
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "pass"))) {
                junit_case(&j, fx, name, JUNIT_PASS, NULL, NULL);
                continue;
            }
            if (st_error) {
                junit_case(&j, fx, name, JUNIT_ERROR, str_at(f, "error", NULL), NULL);
                continue;
            }
            char msg[1024];
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "worst");
            snprintf(msg, sizeof msg,
                     "%s: max_abs %.17g, max_rel %.17g, mismatches %.0f/%.0f; worst: expected "
                     "%.17g, got %.17g; needed rtol %.17g or atol %.17g (tolerance rtol %.17g, "
                     "atol %.17g)",
                     str_at(o, "judgment", "verdict") ? str_at(o, "judgment", "verdict") : "fail",
                     num_or(o, "max_abs", NAN), num_or(o, "max_rel", NAN),
                     num_or(o, "mismatches", NAN), num_or(o, "count", NAN),
                     num_or(w, "expected", NAN), num_or(w, "actual", NAN),
                     num_or(o, "needed_rtol", NAN), num_or(o, "needed_atol", NAN),
                     num_or(o, "rtol", NAN), num_or(o, "atol", NAN));
            junit_case(&j, fx, name, JUNIT_FAIL, msg, msg);
        }
    }
    junit_set_time(&j, 0);
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(root, "lint"), "findings"))
    {
        const char *node = str_at(f, "node", NULL);
        onp_lint_severity sev;
        char name[512];
        if (onp_lint_severity_from_name(str_at(f, "severity", NULL), &sev) || sev != ONP_LINT_ERROR)
            continue;
        snprintf(name, sizeof name, "%s %s%s%s",
                 str_at(f, "id", NULL) ? str_at(f, "id", NULL) : "?",
                 str_at(f, "name", NULL) ? str_at(f, "name", NULL) : "",
                 node && node[0] ? " at " : "", node ? node : "");
        junit_case(&j, "lint", name, JUNIT_FAIL, str_at(f, "message", NULL), NULL);
    }
    /* the flip-rate case, as check writes it, over the merged rows */
    const cJSON *tk =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "summary"), "topk");
    if (tk && num_at(tk, "rows", NULL) > 0) {
        onp_agreement ag;
        onp_agreement_of(num_at(tk, "rows", NULL), num_at(tk, "top1_agree", NULL),
                         ONP_AGREEMENT_CONFIDENCE, &ag);
        junit_agreement_case(&j, &ag);
    }
    onp_error e;
    onp_error_clear(&e);
    int rc = junit_write(&j, "onnxparity merge", path, &e) ? cli_report(&e) : 0;
    junit_free(&j);
    return rc;
}

/* One latent entry (rule, name, node) is the same as another. */
static int same_latent(const cJSON *a, const cJSON *b)
{
    static const char *const keys[] = {"rule", "name", "node"};
    for (int k = 0; k < 3; k++) {
        const char *x = str_at(a, keys[k], NULL), *y = str_at(b, keys[k], NULL);
        if ((x == NULL) != (y == NULL) || (x && strcmp(x, y))) return 0;
    }
    return 1;
}

/* The merged "latent": the findings latent in every document (a finding
 * latent in one shard may explain a failure in another, and then it is not
 * latent in the whole run); NULL when a document has no "latent" (older
 * ones).  Each shard judged its own fixtures, so this is the unsharded
 * run's list whenever every shard passes or fails alike. */
static cJSON *latent_common(cJSON *const *docs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(docs[i], "latent"))) return NULL;
    cJSON *out = cJSON_CreateArray();
    if (!out) return NULL;
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(docs[0], "latent"))
    {
        int everywhere = 1;
        for (size_t i = 1; i < n && everywhere; i++) {
            int found = 0;
            const cJSON *y;
            cJSON_ArrayForEach(y, cJSON_GetObjectItemCaseSensitive(docs[i], "latent")) found |=
                same_latent(x, y);
            everywhere = found;
        }
        if (everywhere) cJSON_AddItemToArray(out, cJSON_Duplicate(x, 1));
    }
    return out;
}

/* --sarif FILE: the merged document's lint findings through the writer
 * check --sarif uses, with the model the shards name (its bytes give the
 * regions when the file is there; whole-file regions when not). */
static int write_sarif(const cJSON *root, const char *first_file, const char *path)
{
    const char *model = str_at(root, "model", NULL);
    if (!model || !model[0])
        return cli_usage_error("merge", "%s: no model named: --sarif has no artifact to point at",
                               first_file);
    onp_lint_result lint;
    onp_error e;
    onp_error_clear(&e);
    if (lintdoc_read(cJSON_GetObjectItemCaseSensitive(root, "lint"), first_file, &lint, &e))
        return cli_report(&e);
    int rc = lint_sarif_write(path, model, &lint);
    lintdoc_release(&lint);
    return rc;
}

/* --- the command: read, vet, merge, summarize, write ------------------------ */

/* What merge's command line asks for. */
typedef struct merge_args {
    const char *files[MAX_DOCS]; /* [n] the documents, in the order given */
    size_t n;
    cli_format fmt;
    const char *junit, *html, *sarif; /* output files, NULL when not asked for */
} merge_args;

/* The merged document's summary numbers, counted over the merged fixtures. */
typedef struct merge_counts {
    long fixtures, fx_failed, outs, out_failed;
    long in_noise, vacuous; /* judgments "within-noise"; vacuous ones */
    long quiet;             /* within tolerance but beyond the float noise */
    long rows, agree, tka;  /* top-k: rows, top-1 agreements, top-k agreements */
} merge_counts;

/* Parse the command line into *a.  0, or the exit code of a usage error
 * (printed). */
static int merge_parse_args(int argc, char **argv, merge_args *a)
{
    const char *v;
    a->n = 0;
    a->fmt = FMT_TEXT;
    a->junit = a->html = a->sarif = NULL;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_opt(argc, argv, &i, "format", &v))) {
            if (r < 0 || cli_parse_format(argv[0], v, &a->fmt)) return EXIT_USAGE;
        } else if ((r = cli_opt(argc, argv, &i, "junit", &v))) {
            if (r < 0) return EXIT_USAGE;
            a->junit = v;
        } else if ((r = cli_opt(argc, argv, &i, "html", &v))) {
            if (r < 0) return EXIT_USAGE;
            a->html = v;
        } else if ((r = cli_opt(argc, argv, &i, "sarif", &v))) {
            if (r < 0) return EXIT_USAGE;
            a->sarif = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error(argv[0], "unknown option '%s'", argv[i]);
        } else if (a->n < MAX_DOCS) {
            a->files[a->n++] = argv[i];
        } else {
            return cli_usage_error(argv[0], "at most %d documents", MAX_DOCS);
        }
    }
    if (!a->n) return cli_usage_error(argv[0], "usage: onnxparity merge RESULT.json...");
    return 0;
}

/* Read the n documents into docs[] (the caller deletes every entry; those
 * not read stay NULL) and vet each: a check document with fixtures, of the
 * model docs[0] names, with the shard count the others have.  *shard_n: that
 * count, -1 when the documents are not shards.  0, or the exit code after
 * the first problem was reported. */
static int read_documents(const char *cmd, const char *const *files, size_t n, cJSON **docs,
                          long *shard_n)
{
    int rc = 0;
    onp_error e;
    onp_error_clear(&e);
    *shard_n = -2; /* -2 unknown yet, -1 unsharded */
    for (size_t i = 0; i < n && !rc; i++) {
        if (!(docs[i] = cli_read_json(files[i], ONP_ERR_FORMAT, "not valid JSON", &e)))
            return cli_report(&e);
        const char *schema = str_at(docs[i], "schema", NULL);
        const char *sha = str_at(docs[i], "environment", "model_sha256");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(docs[i], "shard");
        long cnt = sh ? num_at(sh, "count", NULL) : -1;
        char s1[80], s2[16], s3[16];
        if (!schema || strcmp(schema, "onnxparity.check/1"))
            rc = cli_usage_error(cmd, "%s: schema '%s', not onnxparity.check/1", files[i],
                                 shown(schema, 64, s1, sizeof s1));
        else if (onp_jspec_check(docs[i], onp_jspec_of(schema), files[i], &e))
            rc = cli_report(&e); /* typed as check-1.json says: a max_abs of "x", a pass of "yes" */
        else if (!sha || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(docs[i], "fixtures")))
            rc = cli_usage_error(cmd, "%s: no environment.model_sha256 or fixtures", files[i]);
        else if (i && strcmp(sha, str_at(docs[0], "environment", "model_sha256")))
            rc = cli_usage_error(
                cmd,
                "%s: model sha256 %s differs from %s's %s: "
                "results of different models do not merge",
                files[i], shown(sha, 12, s2, sizeof s2), files[0],
                shown(str_at(docs[0], "environment", "model_sha256"), 12, s3, sizeof s3));
        else if (sh && cnt < 1)
            rc = cli_usage_error(cmd, "%s: shard.count is not a whole number >= 1", files[i]);
        else if (*shard_n != -2 && cnt != *shard_n)
            rc = cli_usage_error(cmd, "%s: shard count %ld differs from %s's (%ld)", files[i], cnt,
                                 files[0], *shard_n);
        *shard_n = cnt;
    }
    return rc;
}

/* The fixtures of every document, copied into a new array *out (the caller
 * deletes it, whatever the result) in the order an unsharded run has them:
 * for shards, fixture j of shard i at position i + j*N; otherwise the
 * documents' fixtures one after another.  0, or exit 2 (reported) when the
 * shards do not cover 0..N-1 exactly once. */
static int merge_fixtures(const char *cmd, const char *const *files, cJSON *const *docs, size_t n,
                          long shard_n, cJSON **out)
{
    cJSON *merged = *out = cJSON_CreateArray();
    int rc = 0;
    if (shard_n <= 0) {
        for (size_t i = 0; i < n; i++) {
            const cJSON *f;
            cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(docs[i], "fixtures"))
                cJSON_AddItemToArray(merged, cJSON_Duplicate(f, 1));
        }
        return 0;
    }
    cJSON *by_shard[MAX_DOCS] = {NULL};
    if (shard_n > MAX_DOCS || (size_t)shard_n != n)
        rc = cli_usage_error(cmd, "%zu documents for %ld shards", n, shard_n);
    for (size_t i = 0; i < n && !rc; i++) {
        long idx = num_at(docs[i], "shard", "index");
        if (idx < 0 || idx >= shard_n || by_shard[idx])
            rc = cli_usage_error(cmd, "%s: shard %ld is bad or given twice", files[i], idx);
        else
            by_shard[idx] = cJSON_GetObjectItemCaseSensitive(docs[i], "fixtures");
    }
    /* round robin over the shards, each walked by its own cursor (not
     * cJSON_GetArrayItem, which is O(j)) */
    cJSON *at[MAX_DOCS] = {NULL};
    for (long s = 0; !rc && s < shard_n; s++) at[s] = by_shard[s] ? by_shard[s]->child : NULL;
    for (int any = !rc; any;) {
        any = 0;
        for (long s = 0; s < shard_n; s++) {
            if (!at[s]) continue;
            cJSON_AddItemToArray(merged, cJSON_Duplicate(at[s], 1)), any = 1;
            at[s] = at[s]->next;
        }
    }
    return rc;
}

/* The causes of every document, each id once, as the document that gives it
 * the highest confidence has it (the first of those on a tie): a new array.
 * *first_divergent: a copy of the first document's first_divergent object,
 * NULL when no document has one. */
static cJSON *merge_causes(cJSON *const *docs, size_t n, cJSON **first_divergent)
{
    cJSON *causes = cJSON_CreateArray(), *fd = NULL;
    for (size_t i = 0; i < n; i++) {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(docs[i], "causes"))
        {
            const char *id = str_at(c, "id", NULL);
            cJSON *have = NULL, *x;
            cJSON_ArrayForEach(x, causes) if (id && !strcmp(id, str_at(x, "id", NULL))) have = x;
            if (!id) continue;
            if (!have)
                cJSON_AddItemToArray(causes, cJSON_Duplicate(c, 1));
            else if (onp_merge_cause_outranks(str_at(c, "confidence", NULL),
                                              str_at(have, "confidence", NULL)))
                cJSON_ReplaceItemViaPointer(causes, have, cJSON_Duplicate(c, 1));
        }
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(docs[i], "first_divergent");
        if (!fd && cJSON_IsObject(f)) fd = cJSON_Duplicate(f, 1);
    }
    *first_divergent = fd;
    return causes;
}

/* The merged verdict (merge.h's rule) over the documents' verdicts and the
 * merged fixtures. */
static onp_run_verdict merged_verdict(cJSON *const *docs, size_t n, const merge_counts *c)
{
    const char *verdicts[MAX_DOCS];
    for (size_t i = 0; i < n; i++) verdicts[i] = str_at(docs[i], "verdict", NULL);
    return onp_merge_verdict(verdicts, n, (size_t)c->fx_failed);
}

/* 1 when a shard's judgment of output `o` is within tolerance but beyond the
 * float noise: the library's rule applied to what the judgment says. */
static int quiet_change(const cJSON *o)
{
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(o, "judgment");
    onp_judgment qj;
    memset(&qj, 0, sizeof qj);
    qj.beyond_envelope = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(jd, "beyond_envelope"));
    return !onp_verdict_from_name(str_at(o, "judgment", "verdict"), &qj.verdict) &&
           !onp_noise_src_from_name(str_at(jd, "noise_source", NULL), &qj.noise.src) &&
           onp_judgment_within_tol_beyond_noise(&qj);
}

/* Count the merged fixtures and their outputs into *c. */
static void count_merged(const cJSON *merged, merge_counts *c)
{
    memset(c, 0, sizeof *c);
    const cJSON *f, *o;
    cJSON_ArrayForEach(f, merged)
    {
        c->fixtures++;
        c->fx_failed += onp_merge_fixture_failed(str_at(f, "status", NULL));
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(f, "outputs"))
        {
            c->outs++;
            c->out_failed += !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "pass"));
            const char *jq = str_at(o, "judgment", "vacuous");
            onp_verdict jv;
            c->in_noise += !onp_verdict_from_name(str_at(o, "judgment", "verdict"), &jv) &&
                           jv == ONP_VERDICT_WITHIN_NOISE;
            c->vacuous += jq && strcmp(jq, "no");
            c->quiet += quiet_change(o);
            if (num_at(o, "topk", "rows") > 0) {
                c->rows += num_at(o, "topk", "rows");
                c->agree += num_at(o, "topk", "top1_agree");
                c->tka += num_at(o, "topk", "topk_agree");
            }
        }
    }
}

/* The "summary" member of the merged document, from the counts. */
static void add_summary(cJSON *root, const merge_counts *c)
{
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "fixtures", (double)c->fixtures);
    cJSON_AddNumberToObject(sum, "fixtures_failed", (double)c->fx_failed);
    cJSON_AddNumberToObject(sum, "outputs_compared", (double)c->outs);
    cJSON_AddNumberToObject(sum, "outputs_failed", (double)c->out_failed);
    cJSON_AddNumberToObject(sum, "outputs_within_noise", (double)c->in_noise);
    cJSON_AddNumberToObject(sum, "outputs_vacuous", (double)c->vacuous);
    cJSON_AddNumberToObject(sum, "outputs_within_tolerance_beyond_noise", (double)c->quiet);
    if (!c->rows) return;
    cJSON *t = cJSON_AddObjectToObject(sum, "topk");
    cJSON_AddNumberToObject(t, "rows", (double)c->rows);
    cJSON_AddNumberToObject(t, "top1_agree", (double)c->agree);
    cJSON_AddNumberToObject(t, "flipped", (double)(c->rows - c->agree));
    cJSON_AddNumberToObject(t, "topk_agree", (double)c->tka);
    onp_agreement ag; /* issue 19: the flip rate's bound over the merged rows */
    onp_agreement_of((int64_t)c->rows, (int64_t)c->agree, ONP_AGREEMENT_CONFIDENCE, &ag);
    onp_doc_num(t, "flip_rate", ag.flip_rate);
    onp_doc_num(t, "flip_rate_upper", ag.flip_upper);
    onp_doc_num(t, "confidence", ag.confidence);
    cJSON_AddStringToObject(t, "bound", "clopper-pearson-one-sided");
}

/* The merged check document.  Takes over `merged` (the fixtures), `causes`
 * and `fd` (first_divergent, NULL for null); copies the rest from the
 * documents: model, environment, options and adequacy from the first (the
 * same in every one), lint as the union of theirs, latent as what is latent
 * in all, merged_from the file names. */
static cJSON *merged_document(const merge_args *a, cJSON *const *docs, onp_run_verdict verdict,
                              cJSON *merged, const merge_counts *c, cJSON *causes, cJSON *fd)
{
    size_t n = a->n;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "onnxparity.check/1");
    cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(verdict));
    cJSON_AddStringToObject(root, "model",
                            str_at(docs[0], "model", NULL) ? str_at(docs[0], "model", NULL) : "");
    cJSON_AddItemToObject(
        root, "environment",
        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(docs[0], "environment"), 1));
    cJSON_AddItemToObject(root, "fixtures", merged);
    add_summary(root, c);
    cJSON_AddItemToObject(root, "causes", causes);
    cJSON_AddItemToObject(root, "first_divergent", fd ? fd : cJSON_CreateNull());
    const cJSON *lints[MAX_DOCS];
    int any_lint = 0;
    for (size_t i = 0; i < n; i++)
        any_lint |= (lints[i] = cJSON_GetObjectItemCaseSensitive(docs[i], "lint")) != NULL;
    if (any_lint) /* every shard lints the same model: each finding once */
        cJSON_AddItemToObject(root, "lint", lintdoc_union(lints, n));
    cJSON *latent = latent_common(docs, n);
    if (latent) cJSON_AddItemToObject(root, "latent", latent);
    const cJSON *options = cJSON_GetObjectItemCaseSensitive(docs[0], "options");
    if (options) /* the same in every shard (same_options) */
        cJSON_AddItemToObject(root, "options", cJSON_Duplicate(options, 1));
    const cJSON *adequacy = cJSON_GetObjectItemCaseSensitive(docs[0], "adequacy");
    if (adequacy) /* the bundle's own report: the same in every shard */
        cJSON_AddItemToObject(root, "adequacy", cJSON_Duplicate(adequacy, 1));
    cJSON *from = cJSON_AddArrayToObject(root, "merged_from");
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(from, cJSON_CreateString(a->files[i]));
    return root;
}

/* Write the merged document (freed here) where asked: --junit, --sarif, the
 * JSON document and/or --html page, else the text lines.  Returns `rc`, or
 * the exit code of the last output that failed. */
static int write_merged(const merge_args *a, cJSON *const *docs, cJSON *root,
                        onp_run_verdict verdict, const merge_counts *c, int rc)
{
    int junit_rc = a->junit ? write_junit(root, a->junit) : 0;
    if (junit_rc) rc = junit_rc;
    int sarif_rc = a->sarif ? write_sarif(root, a->files[0], a->sarif) : 0;
    if (sarif_rc) rc = sarif_rc;
    if (a->fmt == FMT_JSON || a->html) { /* the document: printed, and/or the page */
        exact_numbers(root);
        int html_rc =
            report_emit(root, a->fmt == FMT_JSON, a->html,
                        str_at(docs[0], "model", NULL) ? str_at(docs[0], "model", NULL) : "merged");
        if (html_rc) rc = html_rc;
        root = NULL;
    }
    if (a->fmt != FMT_JSON) {
        printf("merged   %zu document(s), model sha256 %.12s\n", a->n,
               str_at(docs[0], "environment", "model_sha256"));
        printf("verdict: %s — %ld fixtures, %ld outputs compared, %ld fixtures failed\n",
               report_verdict_word(verdict), c->fixtures, c->outs, c->fx_failed);
        if (c->quiet)
            printf("note     %ld output(s) within tolerance but beyond their float noise: the "
                   "tolerance passes a change that is not rounding (check --format json marks "
                   "them: judgment.beyond_envelope)\n",
                   c->quiet);
        cJSON_Delete(root);
    }
    return rc;
}

int cmd_merge(int argc, char **argv)
{
    merge_args a;
    int rc = merge_parse_args(argc, argv, &a);
    if (rc) return rc;
    size_t n = a.n;
    cJSON *docs[MAX_DOCS] = {NULL}, *merged = NULL;
    long shard_n;
    int done = 0; /* 1 once a merged document exists */
    rc = read_documents(argv[0], a.files, n, docs, &shard_n);
    if (!rc) rc = same_environment(argv[0], a.files, docs, n);
    if (!rc) rc = same_tolerances(argv[0], a.files, docs, n);
    if (!rc) rc = same_options(argv[0], a.files, docs, n);
    if (!rc) rc = merge_fixtures(argv[0], a.files, docs, n, shard_n, &merged);
    if (!rc) {
        merge_counts c;
        cJSON *fd;
        cJSON *causes = merge_causes(docs, n, &fd);
        count_merged(merged, &c);
        onp_run_verdict verdict = merged_verdict(docs, n, &c);
        cJSON *root = merged_document(&a, docs, verdict, merged, &c, causes, fd);
        merged = NULL;
        done = 1;
        rc = write_merged(&a, docs, root, verdict, &c, onp_run_exit_code(verdict));
    }
    if (!done && a.junit) /* nothing merged: say why in the file */
        junit_write_error("onnxparity merge", "merge",
                          "the documents could not be merged (exit 2 or 3: the log says why)",
                          a.junit);
    cJSON_Delete(merged);
    for (size_t i = 0; i < n; i++) cJSON_Delete(docs[i]);
    return rc;
}
