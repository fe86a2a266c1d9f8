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
 * Exit: 0 merged verdict pass, 1 fail, 2 bad usage or documents that do not
 * belong together, 3 unreadable or malformed files, 4 a shard's verdict is
 * "error" (ONNX Runtime could not load the model there).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "onnxparity/agreement.h"
#include "onnxparity/buf.h"
#include "infile.h"
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

static int conf_rank(const char *c)
{
    return !c ? 3 : !strcmp(c, "high") ? 0 : !strcmp(c, "medium") ? 1 : 2;
}

int cmd_merge(int argc, char **argv)
{
    const char *files[MAX_DOCS];
    size_t n = 0;
    cli_format fmt = FMT_TEXT;
    const char *v;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_opt(argc, argv, &i, "format", &v))) {
            if (r < 0 || cli_parse_format(argv[0], v, &fmt)) return EXIT_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error(argv[0], "unknown option '%s'", argv[i]);
        } else if (n < MAX_DOCS) {
            files[n++] = argv[i];
        } else {
            return cli_usage_error(argv[0], "at most %d documents", MAX_DOCS);
        }
    }
    if (!n) return cli_usage_error(argv[0], "usage: onnxparity merge RESULT.json...");
    cJSON *docs[MAX_DOCS] = {NULL};
    int rc = EXIT_PASS;
    onp_error e;
    onp_error_clear(&e);
    long shard_n = -2; /* -2 unknown yet, -1 unsharded */
    for (size_t i = 0; i < n && !rc; i++) {
        if (!(docs[i] = cli_read_json(files[i], ONP_ERR_FORMAT, "not valid JSON", &e))) {
            rc = cli_report(&e);
            break;
        }
        const char *schema = str_at(docs[i], "schema", NULL);
        const char *sha = str_at(docs[i], "environment", "model_sha256");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(docs[i], "shard");
        long cnt = sh ? num_at(sh, "count", NULL) : -1;
        char s1[80], s2[16], s3[16];
        if (!schema || strcmp(schema, "onnxparity.check/1"))
            rc = cli_usage_error(argv[0], "%s: schema '%s', not onnxparity.check/1", files[i],
                                 shown(schema, 64, s1, sizeof s1));
        else if (!sha || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(docs[i], "fixtures")))
            rc = cli_usage_error(argv[0], "%s: no environment.model_sha256 or fixtures", files[i]);
        else if (i && strcmp(sha, str_at(docs[0], "environment", "model_sha256")))
            rc = cli_usage_error(
                argv[0],
                "%s: model sha256 %s differs from %s's %s: "
                "results of different models do not merge",
                files[i], shown(sha, 12, s2, sizeof s2), files[0],
                shown(str_at(docs[0], "environment", "model_sha256"), 12, s3, sizeof s3));
        else if (sh && cnt < 1)
            rc = cli_usage_error(argv[0], "%s: shard.count is not a whole number >= 1", files[i]);
        else if (shard_n != -2 && cnt != shard_n)
            rc = cli_usage_error(argv[0], "%s: shard count %ld differs from %s's (%ld)", files[i],
                                 cnt, files[0], shard_n);
        shard_n = cnt;
    }
    /* fixtures in unsharded order */
    cJSON *merged = NULL;
    if (!rc) {
        merged = cJSON_CreateArray();
        if (shard_n > 0) {
            cJSON *by_shard[MAX_DOCS] = {NULL};
            if (shard_n > MAX_DOCS || (size_t)shard_n != n)
                rc = cli_usage_error(argv[0], "%zu documents for %ld shards", n, shard_n);
            for (size_t i = 0; i < n && !rc; i++) {
                long idx = num_at(docs[i], "shard", "index");
                if (idx < 0 || idx >= shard_n || by_shard[idx])
                    rc = cli_usage_error(argv[0], "%s: shard %ld is bad or given twice", files[i],
                                         idx);
                else
                    by_shard[idx] = cJSON_GetObjectItemCaseSensitive(docs[i], "fixtures");
            }
            for (int j = 0; !rc; j++) {
                int any = 0;
                for (long s = 0; s < shard_n; s++) {
                    cJSON *f = cJSON_GetArrayItem(by_shard[s], j);
                    if (f) cJSON_AddItemToArray(merged, cJSON_Duplicate(f, 1)), any = 1;
                }
                if (!any) break;
            }
        } else {
            for (size_t i = 0; i < n; i++) {
                const cJSON *f;
                cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(docs[i], "fixtures"))
                    cJSON_AddItemToArray(merged, cJSON_Duplicate(f, 1));
            }
        }
    }
    if (!rc) {
        int any_fail = 0, any_error = 0;
        cJSON *causes = cJSON_CreateArray(), *fd = NULL;
        for (size_t i = 0; i < n; i++) {
            const char *vd = str_at(docs[i], "verdict", NULL);
            any_fail |= vd && !strcmp(vd, "fail");
            any_error |= !vd || !strcmp(vd, "error");
            const cJSON *c;
            cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(docs[i], "causes"))
            {
                const char *id = str_at(c, "id", NULL);
                cJSON *have = NULL, *x;
                cJSON_ArrayForEach(x, causes) if (id && !strcmp(id, str_at(x, "id", NULL))) have =
                    x;
                if (!id) continue;
                if (!have)
                    cJSON_AddItemToArray(causes, cJSON_Duplicate(c, 1));
                else if (conf_rank(str_at(c, "confidence", NULL)) <
                         conf_rank(str_at(have, "confidence", NULL)))
                    cJSON_ReplaceItemViaPointer(causes, have, cJSON_Duplicate(c, 1));
            }
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(docs[i], "first_divergent");
            if (!fd && cJSON_IsObject(f)) fd = cJSON_Duplicate(f, 1);
        }
        long fixtures = 0, fx_failed = 0, outs = 0, out_failed = 0, rows = 0, agree = 0, tka = 0;
        long in_noise = 0, vacuous = 0;
        const cJSON *f, *o;
        cJSON_ArrayForEach(f, merged)
        {
            const char *st = str_at(f, "status", NULL);
            fixtures++;
            fx_failed += !st || strcmp(st, "pass");
            cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(f, "outputs"))
            {
                outs++;
                out_failed += !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "pass"));
                const char *jv = str_at(o, "judgment", "verdict");
                const char *jq = str_at(o, "judgment", "vacuous");
                in_noise += jv && !strcmp(jv, "within-noise");
                vacuous += jq && strcmp(jq, "no");
                if (num_at(o, "topk", "rows") > 0) {
                    rows += num_at(o, "topk", "rows");
                    agree += num_at(o, "topk", "top1_agree");
                    tka += num_at(o, "topk", "topk_agree");
                }
            }
        }
        const char *verdict = any_error ? "error" : (any_fail || fx_failed) ? "fail" : "pass";
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "schema", "onnxparity.check/1");
        cJSON_AddStringToObject(root, "verdict", verdict);
        cJSON_AddStringToObject(
            root, "model", str_at(docs[0], "model", NULL) ? str_at(docs[0], "model", NULL) : "");
        cJSON_AddItemToObject(
            root, "environment",
            cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(docs[0], "environment"), 1));
        cJSON_AddItemToObject(root, "fixtures", merged);
        merged = NULL;
        cJSON *sum = cJSON_AddObjectToObject(root, "summary");
        cJSON_AddNumberToObject(sum, "fixtures", (double)fixtures);
        cJSON_AddNumberToObject(sum, "fixtures_failed", (double)fx_failed);
        cJSON_AddNumberToObject(sum, "outputs_compared", (double)outs);
        cJSON_AddNumberToObject(sum, "outputs_failed", (double)out_failed);
        cJSON_AddNumberToObject(sum, "outputs_within_noise", (double)in_noise);
        cJSON_AddNumberToObject(sum, "outputs_vacuous", (double)vacuous);
        if (rows) {
            cJSON *t = cJSON_AddObjectToObject(sum, "topk");
            cJSON_AddNumberToObject(t, "rows", (double)rows);
            cJSON_AddNumberToObject(t, "top1_agree", (double)agree);
            cJSON_AddNumberToObject(t, "flipped", (double)(rows - agree));
            cJSON_AddNumberToObject(t, "topk_agree", (double)tka);
            onp_agreement ag; /* issue 19: the flip rate's bound over the merged rows */
            onp_agreement_of((int64_t)rows, (int64_t)agree, ONP_AGREEMENT_CONFIDENCE, &ag);
            report_num(t, "flip_rate", ag.flip_rate);
            report_num(t, "flip_rate_upper", ag.flip_upper);
            report_num(t, "confidence", ag.confidence);
            cJSON_AddStringToObject(t, "bound", "clopper-pearson-one-sided");
        }
        cJSON_AddItemToObject(root, "causes", causes);
        cJSON_AddItemToObject(root, "first_divergent", fd ? fd : cJSON_CreateNull());
        const cJSON *lint = cJSON_GetObjectItemCaseSensitive(docs[0], "lint");
        if (lint) cJSON_AddItemToObject(root, "lint", cJSON_Duplicate(lint, 1));
        const cJSON *adequacy = cJSON_GetObjectItemCaseSensitive(docs[0], "adequacy");
        if (adequacy) /* the bundle's own report: the same in every shard */
            cJSON_AddItemToObject(root, "adequacy", cJSON_Duplicate(adequacy, 1));
        cJSON *from = cJSON_AddArrayToObject(root, "merged_from");
        for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(from, cJSON_CreateString(files[i]));
        if (fmt == FMT_JSON) {
            exact_numbers(root);
            report_print_json(root);
        } else {
            printf("merged   %zu document(s), model sha256 %.12s\n", n,
                   str_at(docs[0], "environment", "model_sha256"));
            printf("verdict: %s — %ld fixtures, %ld outputs compared, %ld fixtures failed\n",
                   !strcmp(verdict, "pass")   ? "pass"
                   : !strcmp(verdict, "fail") ? "FAIL"
                                              : "ERROR",
                   fixtures, outs, fx_failed);
            cJSON_Delete(root);
        }
        rc = any_error ? EXIT_RUNTIME : !strcmp(verdict, "fail") ? EXIT_FAIL : EXIT_PASS;
    }
    cJSON_Delete(merged);
    for (size_t i = 0; i < n; i++) cJSON_Delete(docs[i]);
    return rc;
}
