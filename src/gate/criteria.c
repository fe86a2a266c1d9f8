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
    char sctx[400];
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

/* One entry of "outputs" into o. */
static int get_output(const cJSON *it, onp_crit_out *o, const char *file, onp_error *e)
{
    char ctx[320];
    snprintf(ctx, sizeof ctx, "outputs.%.200s.", it->string ? it->string : "");
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

/* The checks of criteria_parse on a parsed document. */
static int from_json(const cJSON *root, const char *path, onp_criteria *c, onp_error *e)
{
    const cJSON *v, *it;
    char ctx[64];
    if (!cJSON_IsObject(root)) return bad(e, path, NULL, "not a JSON object");
    v = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, ONP_CRITERIA_SCHEMA))
        return bad(e, path, "schema", "must be \"" ONP_CRITERIA_SCHEMA "\"");
    if (get_count(root, "fixtures", &c->fixtures, path, "", e)) return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "margin")) && !cJSON_IsNull(v) &&
        get_num(root, "margin", 0, &c->margin, path, "", e))
        return -1;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "environment"))) {
        if (!cJSON_IsObject(v)) return bad(e, path, "environment", "not an object");
        const char *field, *why;
        if (onp_env_check_json(v, &field, &why)) {
            snprintf(ctx, sizeof ctx, "environment.%s", field);
            return bad(e, path, ctx, why);
        }
        c->has_env = 1;
        onp_env_read_json(&c->env, v);
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "lint_clean");
    if (!cJSON_IsArray(v)) return bad(e, path, "lint_clean", v ? "not an array" : "missing");
    c->lint = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *c->lint);
    if (!c->lint) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    cJSON_ArrayForEach(it, v)
    {
        snprintf(ctx, sizeof ctx, "lint_clean[%zu]", c->n_lint);
        const onp_lint_rule *rule = cJSON_IsString(it) ? onp_lint_rule_find(it->valuestring) : NULL;
        if (!rule)
            return bad(e, path, ctx,
                       cJSON_IsString(it) ? "no lint rule with this id" : "not a string");
        snprintf(c->lint[c->n_lint++], sizeof c->lint[0], "%s", rule->id);
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "outputs");
    if (!cJSON_IsObject(v)) return bad(e, path, "outputs", v ? "not an object" : "missing");
    c->outs = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *c->outs);
    if (!c->outs) return onp_error_set(e, ONP_ERR_NOMEM, path, NULL, -1, "out of memory");
    cJSON_ArrayForEach(it, v)
    {
        if (get_output(it, &c->outs[c->n_out], path, e)) return -1;
        c->n_out++;
    }
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
