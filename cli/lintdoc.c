/*
 * lintdoc.c — lint findings as a result document's "lint" member, and that
 * member read back as an onp_lint_result view (lintdoc.h).  Depends on the
 * lint registry only (rules by id, location kinds by name).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lintdoc.h"
#include "onnxparity/causes.h"

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *lintdoc_union(const cJSON *const *lints, size_t n)
{
    cJSON *out = cJSON_CreateObject();
    size_t counts[ONP_LINT_SEVERITY_COUNT] = {0};
    cJSON *arr = cJSON_CreateArray();
    for (size_t d = 0; d < n; d++) {
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(lints[d], "findings"))
        {
            const cJSON *have;
            int dup = 0;
            cJSON_ArrayForEach(have, arr) dup |= cJSON_Compare(have, f, 1);
            if (dup) continue;
            cJSON_AddItemToArray(arr, cJSON_Duplicate(f, 1));
            const char *sev = str_of(f, "severity");
            for (int s = 0; sev && s < ONP_LINT_SEVERITY_COUNT; s++)
                if (!strcmp(sev, onp_lint_severity_name((onp_lint_severity)s))) counts[s]++;
        }
    }
    cJSON_AddNumberToObject(out, "errors", (double)counts[ONP_LINT_ERROR]);
    cJSON_AddNumberToObject(out, "warnings", (double)counts[ONP_LINT_WARNING]);
    cJSON_AddNumberToObject(out, "infos", (double)counts[ONP_LINT_INFO]);
    cJSON_AddItemToObject(out, "findings", arr);
    return out;
}

/* A whole number member in [-1, 2^53], else -1 (absent, null, a fraction). */
static int64_t int_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= -1 && v->valuedouble <= 9007199254740992.0) ||
        v->valuedouble != floor(v->valuedouble))
        return -1;
    return (int64_t)v->valuedouble;
}

/* A finding's location from its "location" member (absent in documents
 * written before it was: the model as a whole then).  Strings are views;
 * a member the kind lacks is "" (or -1), as the lint library leaves it. */
static void read_location(const cJSON *j, onp_lint_location *l)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "location");
    const char *kind = str_of(o, "kind");
    memset(l, 0, sizeof *l);
    l->kind = ONP_LINT_LOC_MODEL;
    for (int k = 0; kind && k <= ONP_LINT_LOC_SOURCE; k++)
        if (!strcmp(kind, onp_lint_loc_kind_name((onp_lint_loc_kind)k)))
            l->kind = (onp_lint_loc_kind)k;
    l->graph = str_of(o, "graph") ? str_of(o, "graph") : "";
    l->name = str_of(o, "name") ? str_of(o, "name") : str_of(j, "node") ? str_of(j, "node") : "";
    l->op_type = str_of(o, "op_type") ? str_of(o, "op_type") : "";
    l->file = str_of(o, "file") ? str_of(o, "file") : "";
    l->index = int_of(o, "index");
    l->line = int_of(o, "line");
}

int lintdoc_read(const cJSON *lint, const char *what, onp_lint_result *out, onp_error *e)
{
    memset(out, 0, sizeof *out);
    out->opset = -1;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(lint, "findings");
    size_t n = (size_t)(cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0);
    if (!n) return 0;
    if (!(out->findings = calloc(n, sizeof *out->findings)))
        return onp_error_set(e, ONP_ERR_NOMEM, what, NULL, -1, "out of memory");
    out->cap = n;
    const cJSON *j;
    cJSON_ArrayForEach(j, arr)
    {
        const char *id = str_of(j, "id");
        const onp_lint_rule *rule = id ? onp_lint_rule_find(id) : NULL;
        if (!rule) {
            char shown[40]; /* one line: control characters as '?' */
            snprintf(shown, sizeof shown, "%.32s", id ? id : "(none)");
            for (char *c = shown; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
            size_t at = out->n;
            lintdoc_release(out);
            return onp_error_set(e, ONP_ERR_USAGE, what, "lint.findings", -1,
                                 "finding %zu: rule '%s' is not a rule of this onnxparity", at,
                                 shown);
        }
        onp_lint_finding *f = &out->findings[out->n++];
        f->rule = rule;
        read_location(j, &f->loc);
        f->message = (char *)(str_of(j, "message") ? str_of(j, "message") : "");
        f->order = out->n;
        out->counts[rule->severity]++;
    }
    return 0;
}

void lintdoc_release(onp_lint_result *r)
{
    if (!r) return;
    free(r->findings);
    memset(r, 0, sizeof *r);
}
