/*
 * gate.c — the gate document (onnxparity.gate/1, docs/gate.md; doc.h): a
 * gate run judged against its criteria.  The tool's `gate --format json`
 * and `--html`, and the Python API's gate(), all print this one tree.
 */
#include <cjson/cJSON.h>
#include <math.h>

#include "onnxparity/doc.h"
#include "onnxparity/gate.h"

/* o[key] = v, or null when v is NaN (none). */
static void num_or_null(cJSON *o, const char *key, double v)
{
    if (isnan(v))
        cJSON_AddNullToObject(o, key);
    else
        onp_doc_num(o, key, v);
}

/* o[key] = s, or null. */
static void str_or_null(cJSON *o, const char *key, const char *s)
{
    if (s)
        cJSON_AddStringToObject(o, key, s);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *drift_json(const onp_gate_result *g)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < g->n_drift; i++) {
        const onp_env_drift *d = &g->drift[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "field", onp_env_field_name(d->field));
        cJSON_AddStringToObject(x, "kind", onp_drift_kind_name(d->kind));
        cJSON_AddStringToObject(x, "recorded", d->recorded);
        str_or_null(x, "current", d->current[0] ? d->current : NULL);
        cJSON_AddStringToObject(x, "effect",
                                onp_drift_effect_name(onp_gate_drift_effect(d, g->policy)));
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

/* "checks": every criterion judged, the worst value against its limit. */
static cJSON *checks_json(const onp_gate_result *g)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < g->n_checks; i++) {
        const onp_gate_check *k = &g->checks[i];
        cJSON *x = cJSON_CreateObject();
        if (k->target) cJSON_AddStringToObject(x, "target", k->target);
        str_or_null(x, "output", k->output);
        cJSON_AddStringToObject(x, "check", k->check);
        onp_doc_num(x, "measured", k->measured);
        onp_doc_num(x, "limit", k->limit);
        cJSON_AddStringToObject(x, "bound", k->floor ? "min" : "max");
        cJSON_AddBoolToObject(x, "pass", !k->regressed);
        num_or_null(x, "margin", onp_gate_margin(k));
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

/* "regressions": each with its fixture, output, check, numbers, message. */
static cJSON *regressions_json(const onp_gate_result *g)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t q = 0; q < g->n_reg; q++) {
        cJSON *j = cJSON_CreateObject();
        const onp_gate_regression *x = &g->reg[q];
        if (x->target) cJSON_AddStringToObject(j, "target", x->target);
        str_or_null(j, "fixture", x->fixture);
        str_or_null(j, "output", x->output);
        cJSON_AddStringToObject(j, "check", x->check);
        num_or_null(j, "value", x->value);
        num_or_null(j, "limit", x->limit);
        cJSON_AddStringToObject(j, "message", x->msg);
        cJSON_AddItemToArray(arr, j);
    }
    return arr;
}

/* "targets": each target's gate in brief: its name, the ONNX Runtime it
 * ran, its verdict, its regressions counted, its environment drift, its
 * causes and first divergent node. */
static cJSON *targets_json(onp_gate *gt)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t k = 0; k < gt->n_targets; k++) {
        onp_gate *t = &gt->targets[k];
        const onp_run_result *r = &t->check.run;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", t->target);
        cJSON_AddStringToObject(x, "ort_library",
                                t->check.ort ? onp_ort_lib_path(t->check.ort) : t->library);
        cJSON_AddStringToObject(x, "ort_version", r->env.v[ONP_ENV_ORT_VERSION]);
        cJSON_AddStringToObject(x, "provider", r->env.v[ONP_ENV_PROVIDER]);
        cJSON_AddStringToObject(x, "opt_level", r->env.v[ONP_ENV_OPT_LEVEL]);
        cJSON_AddStringToObject(x, "verdict", onp_run_verdict_name(t->verdict));
        cJSON_AddNumberToObject(x, "fixtures", (double)r->n_fix);
        cJSON_AddNumberToObject(x, "regressions", (double)t->result.n_reg);
        cJSON_AddBoolToObject(x, "environment_recorded", t->criteria.has_env);
        cJSON_AddItemToObject(x, "environment_drift", drift_json(&t->result));
        cJSON_AddItemToObject(x, "causes", onp_doc_causes(r->causes));
        if (t->bisect)
            cJSON_AddItemToObject(x, "first_divergent", onp_doc_first_divergent(t->bisect));
        else
            cJSON_AddNullToObject(x, "first_divergent");
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

cJSON *onp_doc_gate(onp_gate *gt0, const onp_run_opts *o, const char *criteria)
{
    /* several targets: the first target's run stands for the bundle (model,
     * environment, causes, fixtures); "targets" has each */
    onp_gate *gt = gt0->n_targets ? &gt0->targets[0] : gt0;
    const onp_gate_result *g = &gt0->result;
    const onp_criteria *c = &gt->criteria;
    onp_check *ck = &gt->check;
    const onp_run_result *r = &ck->run;
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "schema", "onnxparity.gate/1");
    cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(g->verdict));
    cJSON_AddStringToObject(root, "model", onp_bundle_model_path(ck->bundle));
    cJSON_AddStringToObject(root, "criteria", criteria);
    onp_doc_run_environment(root, ck->bundle, ck->ort, ck->session, o, r, ck->upgraded);
    cJSON_AddBoolToObject(root, "environment_recorded", c->has_env);
    cJSON_AddStringToObject(root, "env_drift_policy", onp_gate_drift_policy_name(g->policy));
    cJSON_AddItemToObject(root, "environment_drift", drift_json(&gt->result));
    if (gt0->n_targets) cJSON_AddItemToObject(root, "targets", targets_json(gt0));
    cJSON_AddItemToObject(root, "causes", onp_doc_causes(r->causes));
    if (gt->bisect)
        cJSON_AddItemToObject(root, "first_divergent", onp_doc_first_divergent(gt->bisect));
    else
        cJSON_AddNullToObject(root, "first_divergent");
    cJSON_AddItemToObject(root, "regressions", regressions_json(g));
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "fixtures", (double)r->n_fix);
    cJSON_AddNumberToObject(sum, "outputs", (double)c->n_out);
    cJSON_AddNumberToObject(sum, "regressions", (double)g->n_reg);
    cJSON_AddItemToObject(root, "checks", checks_json(g));
    /* the run's fixtures as check's document has them: the page draws the
     * same tables and plots */
    cJSON_AddItemToObject(root, "fixtures", onp_doc_fixtures(r->fix, r->n_fix));
    return root;
}
