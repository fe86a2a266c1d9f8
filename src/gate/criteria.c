/*
 * criteria.c — the release criteria of `gate` (gate.h): read and check a
 * criteria document, find an output's criteria, the tolerance each output
 * is judged with.  Strict: every required key present with the right type,
 * every number finite and >= 0, fractions in [0, 1], lint rule ids that
 * exist, shapes of whole dims; the first problem found is the error,
 * naming the field.  Depends on cJSON, the lint rule table, the
 * environment fields and the comparator's defaults only: never on ONNX
 * Runtime or the run layer, so that fuzz/fuzz_criteria.c links it alone.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/gate.h"
#include "onnxparity/json.h"
#include "onnxparity/lint.h"

void onp_criteria_free(onp_criteria *c)
{
    if (!c) return;
    for (size_t k = 0; k < c->n_targets; k++) onp_criteria_free(&c->targets[k].crit);
    free(c->targets);
    free(c->lint);
    free(c->outs);
    memset(c, 0, sizeof *c);
}

const onp_crit_out *onp_criteria_find(const onp_criteria *c, const char *name)
{
    for (size_t i = 0; c && i < c->n_out; i++)
        if (!strcmp(c->outs[i].name, name)) return &c->outs[i];
    return NULL;
}

onp_tol onp_gate_tol(const onp_criteria *c, const char *name, int32_t dtype, double rtol,
                     double atol)
{
    const onp_crit_out *co = onp_criteria_find(c, name);
    if (co) return (onp_tol){co->rtol, co->atol};
    return onp_tol_with(dtype, rtol, atol);
}

onp_tol onp_gate_tol_fn(void *ctx, const char *name, int32_t dtype)
{
    const onp_gate_tol_ctx *t = ctx;
    return onp_gate_tol(t->criteria, name, dtype, t->rtol, t->atol);
}

const char *onp_gate_fixture_name(const char *dir)
{
    const char *s = strrchr(dir, '/');
    return s ? s + 1 : dir;
}

static int bad(onp_error *e, const char *file, const char *field, const char *msg)
{
    return onp_error_set(e, ONP_ERR_INPUT, file, field, -1, "%s", msg);
}

/* A finite number >= 0 (or, when allow_null, null -> -1). */
static int get_num(const cJSON *o, const char *key, int allow_null, double *out, const char *file,
                   const char *ctx, onp_error *e)
{
    char field[200];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    snprintf(field, sizeof field, "%s%s", ctx, key);
    if (!v) return bad(e, file, field, "missing");
    if (allow_null && cJSON_IsNull(v)) {
        *out = -1;
        return 0;
    }
    if (!cJSON_IsNumber(v)) return bad(e, file, field, "not a number");
    if (!isfinite(v->valuedouble) || v->valuedouble < 0)
        return bad(e, file, field, "not a finite number >= 0");
    *out = v->valuedouble;
    return 0;
}

/* A whole number >= 0 (at most 1e15). */
static int get_count(const cJSON *o, const char *key, long *out, const char *file, const char *ctx,
                     onp_error *e)
{
    double d;
    if (get_num(o, key, 0, &d, file, ctx, e)) return -1;
    if (d != floor(d) || d > 1e15) {
        char field[200];
        snprintf(field, sizeof field, "%s%s", ctx, key);
        return bad(e, file, field, "not a whole number");
    }
    *out = (long)d;
    return 0;
}

/* The shapes of one output: an array of at most ONP_CRITERIA_MAX_SHAPES arrays of
 * whole dims.  `ctx` is "outputs.NAME.". */
static int get_shapes(const cJSON *it, onp_crit_out *o, const char *file, const char *ctx,
                      onp_error *e)
{
    const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(it, "shapes"), *sh, *dim;
    char sctx[480];
    snprintf(sctx, sizeof sctx, "%sshapes", ctx);
    if (!cJSON_IsArray(shapes) || cJSON_GetArraySize(shapes) > ONP_CRITERIA_MAX_SHAPES)
        return bad(e, file, sctx, shapes ? "not an array of at most 64 shapes" : "missing");
    cJSON_ArrayForEach(sh, shapes)
    {
        snprintf(sctx, sizeof sctx, "%sshapes[%zu]", ctx, o->n_shapes);
        if (!cJSON_IsArray(sh) || cJSON_GetArraySize(sh) > ONP_MAX_RANK)
            return bad(e, file, sctx, "not an array of dims");
        int r = 0;
        cJSON_ArrayForEach(dim, sh)
        {
            if (!cJSON_IsNumber(dim) || !isfinite(dim->valuedouble) || dim->valuedouble < 0 ||
                dim->valuedouble != floor(dim->valuedouble) || dim->valuedouble > 9e15)
                return bad(e, file, sctx, "a dim is not a whole number >= 0");
            o->dims[o->n_shapes][r++] = (int64_t)dim->valuedouble;
        }
        o->rank[o->n_shapes++] = r;
    }
    return 0;
}

/* One entry of "outputs" into o; `pre` "" or "targets[K]." */
static int get_output(const cJSON *it, onp_crit_out *o, const char *file, const char *pre,
                      onp_error *e)
{
    char ctx[400];
    snprintf(ctx, sizeof ctx, "%soutputs.%.200s.", pre, it->string ? it->string : "");
    if (!cJSON_IsObject(it)) {
        ctx[strlen(ctx) - 1] = '\0';
        return bad(e, file, ctx, "not an object");
    }
    if (!it->string || strlen(it->string) >= sizeof o->name)
        return bad(e, file, ctx, "output name too long");
    snprintf(o->name, sizeof o->name, "%s", it->string);
    /* what was measured is for people: never read back */
    o->noise_source = ONP_NOISE_NONE;
    o->measured_max_abs = o->measured_max_rel = -1;
    o->measured_needed_rtol = o->measured_needed_atol = -1;
    if (get_num(it, "rtol", 0, &o->rtol, file, ctx, e) ||
        get_num(it, "atol", 0, &o->atol, file, ctx, e) ||
        get_num(it, "top1_min", 1, &o->top1_min, file, ctx, e) ||
        get_num(it, "mismatch_frac_max", 0, &o->mismatch_frac_max, file, ctx, e) ||
        get_num(it, "max_abs", 1, &o->max_abs, file, ctx, e) ||
        get_num(it, "needed_rtol", 1, &o->needed_rtol, file, ctx, e) ||
        get_num(it, "needed_atol", 1, &o->needed_atol, file, ctx, e))
        return -1;
    o->envelope_max = -1; /* optional: criteria recorded before the noise model have none */
    if (cJSON_GetObjectItemCaseSensitive(it, "envelope_max") &&
        get_num(it, "envelope_max", 1, &o->envelope_max, file, ctx, e))
        return -1;
    /* optional: a change below the tolerance that float noise does not explain */
    o->quiet_change_max = -1;
    if (cJSON_GetObjectItemCaseSensitive(it, "quiet_change_max") &&
        get_count(it, "quiet_change_max", &o->quiet_change_max, file, ctx, e))
        return -1;
    /* optional (issue 19): the flip rate as a statistic, agreement.h */
    o->max_flip_rate = -1;
    o->flip_confidence = 0.95;
    if (cJSON_GetObjectItemCaseSensitive(it, "max_flip_rate") &&
        get_num(it, "max_flip_rate", 1, &o->max_flip_rate, file, ctx, e))
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(it, "flip_confidence") &&
        get_num(it, "flip_confidence", 0, &o->flip_confidence, file, ctx, e))
        return -1;
    if (o->max_flip_rate > 1) return bad(e, file, ctx, "max_flip_rate is a fraction in [0, 1]");
    if (!(o->flip_confidence > 0 && o->flip_confidence < 1))
        return bad(e, file, ctx, "flip_confidence is a probability in (0, 1)");
    if (o->top1_min > 1 || o->mismatch_frac_max > 1)
        return bad(e, file, ctx, "top1_min and mismatch_frac_max are fractions in [0, 1]");
    return get_shapes(it, o, file, ctx, e);
}

/* The criteria of one target (or of the whole file) in object root into
 * c; `pre` names where in field names: "" or "targets[K]." */
static int body(const cJSON *root, const char *path, const char *pre, onp_criteria *c, onp_error *e)
{
    const cJSON *v, *it;
    char ctx[128];
    if (get_count(root, "fixtures", &c->fixtures, path, pre, e)) return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "margin")) && !cJSON_IsNull(v) &&
        get_num(root, "margin", 0, &c->margin, path, pre, e))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "environment"))) {
        snprintf(ctx, sizeof ctx, "%senvironment", pre);
        if (!cJSON_IsObject(v)) return bad(e, path, ctx, "not an object");
        const char *field, *why;
        if (onp_env_check_json(v, &field, &why)) {
            snprintf(ctx, sizeof ctx, "%senvironment.%s", pre, field);
            return bad(e, path, ctx, why);
        }
        c->has_env = 1;
        onp_env_read_json(&c->env, v);
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "lint_clean");
    snprintf(ctx, sizeof ctx, "%slint_clean", pre);
    if (!cJSON_IsArray(v)) return bad(e, path, ctx, v ? "not an array" : "missing");
    c->lint = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *c->lint);
    if (!c->lint) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    cJSON_ArrayForEach(it, v)
    {
        snprintf(ctx, sizeof ctx, "%slint_clean[%zu]", pre, c->n_lint);
        const onp_lint_rule *rule = cJSON_IsString(it) ? onp_lint_rule_find(it->valuestring) : NULL;
        if (!rule)
            return bad(e, path, ctx,
                       cJSON_IsString(it) ? "no lint rule with this id" : "not a string");
        snprintf(c->lint[c->n_lint++], sizeof c->lint[0], "%s", rule->id);
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "outputs");
    snprintf(ctx, sizeof ctx, "%soutputs", pre);
    if (!cJSON_IsObject(v)) return bad(e, path, ctx, v ? "not an object" : "missing");
    c->outs = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *c->outs);
    if (!c->outs) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    cJSON_ArrayForEach(it, v)
    {
        if (get_output(it, &c->outs[c->n_out], path, pre, e)) return -1;
        c->n_out++;
    }
    return 0;
}

/* A target's name: 1 to 63 of [A-Za-z0-9._-]. */
static int good_name(const char *s)
{
    size_t n = strlen(s);
    if (!n || n >= sizeof(((onp_crit_target *)0)->name)) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '.' || *s == '_' || *s == '-')) return 0;
    return 1;
}

/* An opt-level by its name (ort.h's names; the parser stays apart from
 * the ORT module, fuzz_criteria links it alone). */
static int good_level(const char *s)
{
    static const char *const names[] = {"disable", "basic", "extended", "layout", "all"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!strcmp(s, names[k])) return 1;
    return 0;
}

/* A target's "provider" (null or absent: the command line's) and
 * "provider_options" (null, absent or an array of "KEY=VALUE" strings; only
 * with a provider). */
static int get_provider(const cJSON *it, const char *pre, onp_crit_target *t, const char *path,
                        onp_error *e)
{
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(it, "provider");
    const cJSON *po = cJSON_GetObjectItemCaseSensitive(it, "provider_options"), *x;
    char ctx[128];
    snprintf(ctx, sizeof ctx, "%sprovider", pre);
    if (pv && !cJSON_IsNull(pv) &&
        (!cJSON_IsString(pv) || !pv->valuestring[0] ||
         strlen(pv->valuestring) >= sizeof t->provider))
        return bad(e, path, ctx, "not null or a provider name of at most 63 bytes");
    if (cJSON_IsString(pv)) snprintf(t->provider, sizeof t->provider, "%s", pv->valuestring);
    if (!po || cJSON_IsNull(po)) return 0;
    snprintf(ctx, sizeof ctx, "%sprovider_options", pre);
    if (!t->provider[0]) return bad(e, path, ctx, "options without a provider");
    if (!cJSON_IsArray(po) || cJSON_GetArraySize(po) > ONP_CRIT_TARGET_MAX_OPTS)
        return bad(e, path, ctx, "not an array of at most 16 \"KEY=VALUE\" strings");
    cJSON_ArrayForEach(x, po)
    {
        snprintf(ctx, sizeof ctx, "%sprovider_options[%zu]", pre, t->n_provider_opts);
        const char *eq = cJSON_IsString(x) ? strchr(x->valuestring, '=') : NULL;
        if (!eq || eq == x->valuestring || strlen(x->valuestring) >= sizeof t->provider_opts[0])
            return bad(e, path, ctx, "not a \"KEY=VALUE\" string of at most 511 bytes");
        snprintf(t->provider_opts[t->n_provider_opts++], sizeof t->provider_opts[0], "%s",
                 x->valuestring);
    }
    return 0;
}

int onp_crit_target_provider(onp_crit_target *t, size_t n, const char *spec, int is_opt,
                             onp_error *e)
{
    const char *flag = is_opt ? "--target-provider-opt" : "--target-provider";
    const char *eq = strchr(spec, '=');
    size_t k = 0, len = eq ? (size_t)(eq - spec) : 0;
    while (k < n && !(len && strlen(t[k].name) == len && !strncmp(t[k].name, spec, len))) k++;
    if (!eq || k == n)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "%s %s: wants NAME=%s, NAME a --target given before it", flag, spec,
                             is_opt ? "KEY=VALUE" : "PROVIDER");
    onp_crit_target *x = &t[k];
    const char *v = eq + 1;
    if (!is_opt) {
        if (x->provider[0] || !v[0] || strlen(v) >= sizeof x->provider)
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "%s %s: %s", flag, spec,
                                 x->provider[0] ? "the target has a provider already"
                                                : "a provider name of 1 to 63 bytes");
        snprintf(x->provider, sizeof x->provider, "%s", v);
        return 0;
    }
    if (!x->provider[0])
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "%s %s: give the target's --target-provider first", flag, spec);
    if (!strchr(v, '=') || v[0] == '=' || strlen(v) >= sizeof x->provider_opts[0] ||
        x->n_provider_opts >= ONP_CRIT_TARGET_MAX_OPTS)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "%s %s: wants NAME=KEY=VALUE (at most 16 per target, 511 bytes each)",
                             flag, spec);
    snprintf(x->provider_opts[x->n_provider_opts++], sizeof x->provider_opts[0], "%s", v);
    return 0;
}

/* "targets": an array of 1 to ONP_CRITERIA_MAX_TARGETS objects, each
 * {name, ort_library (null: the command line's), opt_level (null or
 * absent: the command line's), and the criteria of a file without
 * targets}; names unique. */
static int get_targets(const cJSON *v, const char *path, onp_criteria *c, onp_error *e)
{
    const cJSON *it;
    char ctx[128];
    int n = cJSON_GetArraySize(v);
    if (!cJSON_IsArray(v) || n < 1 || n > ONP_CRITERIA_MAX_TARGETS)
        return bad(e, path, "targets", "not an array of 1 to 8 targets");
    if (!(c->targets = calloc((size_t)n, sizeof *c->targets)))
        return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    cJSON_ArrayForEach(it, v)
    {
        onp_crit_target *t = &c->targets[c->n_targets];
        char pre[32];
        snprintf(pre, sizeof pre, "targets[%zu].", c->n_targets);
        c->n_targets++; /* counted before its fields: freed whatever fails */
        snprintf(ctx, sizeof ctx, "targets[%zu]", c->n_targets - 1);
        if (!cJSON_IsObject(it)) return bad(e, path, ctx, "not an object");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
        const cJSON *lib = cJSON_GetObjectItemCaseSensitive(it, "ort_library");
        const cJSON *lv = cJSON_GetObjectItemCaseSensitive(it, "opt_level");
        snprintf(ctx, sizeof ctx, "%sname", pre);
        if (!cJSON_IsString(nm) || !good_name(nm->valuestring))
            return bad(e, path, ctx,
                       nm ? "not a name of 1 to 63 letters, digits, '.', '_' or '-'" : "missing");
        for (size_t k = 0; k + 1 < c->n_targets; k++)
            if (!strcmp(c->targets[k].name, nm->valuestring))
                return bad(e, path, ctx, "a name another target has");
        snprintf(t->name, sizeof t->name, "%s", nm->valuestring);
        snprintf(ctx, sizeof ctx, "%sort_library", pre);
        if (!lib) return bad(e, path, ctx, "missing (null: the library the command line names)");
        if (!cJSON_IsNull(lib) && (!cJSON_IsString(lib) || !lib->valuestring[0] ||
                                   strlen(lib->valuestring) >= sizeof t->ort_library))
            return bad(e, path, ctx, "not null, \"env\" or a path of at most 1023 bytes");
        if (cJSON_IsString(lib))
            snprintf(t->ort_library, sizeof t->ort_library, "%s", lib->valuestring);
        snprintf(ctx, sizeof ctx, "%sopt_level", pre);
        if (lv && !cJSON_IsNull(lv) && (!cJSON_IsString(lv) || !good_level(lv->valuestring)))
            return bad(e, path, ctx,
                       "not null or an opt-level (disable, basic, extended, layout, all)");
        if (cJSON_IsString(lv)) snprintf(t->opt_level, sizeof t->opt_level, "%s", lv->valuestring);
        if (get_provider(it, pre, t, path, e)) return -1;
        if (cJSON_GetObjectItemCaseSensitive(it, "targets")) {
            snprintf(ctx, sizeof ctx, "%stargets", pre);
            return bad(e, path, ctx, "a target holds no targets");
        }
        if (body(it, path, pre, &t->crit, e)) return -1;
    }
    return 0;
}

/* The checks of criteria_parse on a parsed document: the schema, then the
 * criteria of the file or of each of its targets. */
static int from_json(const cJSON *root, const char *path, onp_criteria *c, onp_error *e)
{
    const cJSON *v;
    if (!cJSON_IsObject(root)) return bad(e, path, NULL, "not a JSON object");
    v = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, ONP_CRITERIA_SCHEMA))
        return bad(e, path, "schema", "must be \"" ONP_CRITERIA_SCHEMA "\"");
    if (!(v = cJSON_GetObjectItemCaseSensitive(root, "targets"))) return body(root, path, "", c, e);
    static const char *const only_in_targets[] = {"fixtures", "outputs", "lint_clean",
                                                  "environment", "margin"};
    for (size_t k = 0; k < sizeof only_in_targets / sizeof only_in_targets[0]; k++)
        if (cJSON_GetObjectItemCaseSensitive(root, only_in_targets[k]))
            return bad(e, path, only_in_targets[k],
                       "beside \"targets\": each target carries its own criteria");
    return get_targets(v, path, c, e);
}

int onp_crit_target_parse(const char *spec, onp_crit_target *t, onp_error *e)
{
    memset(t, 0, sizeof *t);
    const char *eq = strchr(spec, '=');
    size_t n = eq ? (size_t)(eq - spec) : 0;
    if (!eq || !n || n >= sizeof t->name)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "--target wants NAME=LIBRARY[@OPT_LEVEL] (LIBRARY bundled, env or a "
                             "path), not '%s'",
                             spec);
    memcpy(t->name, spec, n);
    if (!good_name(t->name))
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "--target %s: a name is 1 to 63 letters, digits, '.', '_' or '-'",
                             spec);
    /* The '@' after the last '/' splits off the opt-level when a level
     * follows it, or when the library is bundled or env (a typo there is
     * an error); any other '@' belongs to the path (/opt/ort@1.23/...). */
    const char *lib = eq + 1, *at = strrchr(lib, '@'), *slash = strrchr(lib, '/');
    if (at && slash && at < slash) at = NULL;
    if (at && !good_level(at + 1) && !(at - lib == 3 && !strncmp(lib, "env", 3)) &&
        !(at - lib == 7 && !strncmp(lib, "bundled", 7)))
        at = NULL;
    size_t ln = at ? (size_t)(at - lib) : strlen(lib);
    if (!ln || ln >= sizeof t->ort_library)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "--target %s: the library is bundled, env or a path of at most 1023 "
                             "bytes",
                             spec);
    if (at && (!good_level(at + 1) || strlen(at + 1) >= sizeof t->opt_level))
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "--target %s: '%s' is not an opt-level (disable, basic, extended, "
                             "layout, all)",
                             spec, at + 1);
    if (at) snprintf(t->opt_level, sizeof t->opt_level, "%s", at + 1);
    if (!(ln == 7 && !strncmp(lib, "bundled", 7))) memcpy(t->ort_library, lib, ln);
    return 0;
}

int onp_criteria_parse(const char *text, size_t n, const char *path, onp_criteria *c, onp_error *e)
{
    memset(c, 0, sizeof *c);
    cJSON *root = onp_json_parse(text, n, path, ONP_ERR_INPUT, "not valid JSON", e);
    if (!root) return -1;
    int rc = from_json(root, path, c, e);
    cJSON_Delete(root);
    if (rc) onp_criteria_free(c);
    return rc;
}
