/*
 * chain.c — the chain document (onnxparity.chain/1,
 * docs/schemas/chain-1.json; docs/chain.md): every stage of a deployment
 * chain judged at its precision, the first stage beyond it, and each such
 * stage's first divergent value named in both graphs.  The tool's
 * `chain --format json` prints this one tree.
 */
#include <cjson/cJSON.h>
#include <math.h>

#include "onnxparity/chain.h"
#include "onnxparity/doc.h"

static cJSON *point_json(const onp_chain_point *p)
{
    if (!p->value[0]) return cJSON_CreateNull();
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "value", p->value);
    cJSON_AddStringToObject(x, "export_value", p->orig_value);
    cJSON_AddStringToObject(x, "matched", p->by_value ? "value" : "name");
    if (p->by_value)
        onp_doc_num(x, "correlation", p->corr);
    else
        cJSON_AddNullToObject(x, "correlation");
    cJSON_AddStringToObject(x, "node", p->node);
    cJSON_AddStringToObject(x, "op_type", p->op_type);
    cJSON_AddStringToObject(x, "export_node", p->orig_node);
    cJSON_AddStringToObject(x, "export_op_type", p->orig_op_type);
    onp_doc_num(x, "max_abs", p->max_abs);
    onp_doc_num(x, "scale_max", p->scale_max);
    onp_doc_num(x, "rel_err", p->rel_err);
    cJSON_AddNumberToObject(x, "nonfinite", (double)p->nonfinite);
    onp_doc_num(x, "sqnr_db", p->sqnr_db);
    if (isnan(p->drop_db))
        cJSON_AddNullToObject(x, "drop_db");
    else
        onp_doc_num(x, "drop_db", p->drop_db);
    return x;
}

/* "values": every compared value in the stage's node order (per_value). */
static cJSON *values_json(const onp_chain_divergence *d)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < d->n_points; i++) cJSON_AddItemToArray(arr, point_json(&d->points[i]));
    return arr;
}

static cJSON *divergence_json(const onp_chain_divergence *d)
{
    if (!d->ran && !d->note[0]) return cJSON_CreateNull();
    cJSON *x = cJSON_CreateObject();
    cJSON_AddBoolToObject(x, "found", d->found);
    cJSON_AddNumberToObject(x, "fixture", d->fixture);
    onp_doc_num(x, "limit", d->limit);
    cJSON_AddNumberToObject(x, "values_common", (double)d->n_common);
    cJSON_AddNumberToObject(x, "values_by_value", (double)d->n_by_value);
    cJSON_AddNumberToObject(x, "values_compared", (double)d->n_compared);
    cJSON_AddItemToObject(x, "first", d->found ? point_json(&d->first) : cJSON_CreateNull());
    cJSON *g = cJSON_AddArrayToObject(x, "export_group");
    for (size_t i = 0; i < d->n_group; i++) {
        cJSON *n = cJSON_CreateObject();
        cJSON_AddStringToObject(n, "node", d->group[i].node);
        cJSON_AddStringToObject(n, "op_type", d->group[i].op_type);
        cJSON_AddStringToObject(n, "value", d->group[i].value);
        cJSON_AddItemToArray(g, n);
    }
    cJSON *mods = cJSON_AddArrayToObject(x, "modules");
    for (size_t i = 0; i < d->n_modules; i++)
        cJSON_AddItemToArray(mods, cJSON_CreateString(d->modules[i]));
    cJSON_AddItemToObject(x, "input", point_json(&d->input));
    cJSON_AddItemToObject(x, "worst", point_json(&d->worst));
    if (d->points) cJSON_AddItemToObject(x, "values", values_json(d));
    if (d->note[0])
        cJSON_AddStringToObject(x, "note", d->note);
    else
        cJSON_AddNullToObject(x, "note");
    return x;
}

static cJSON *outputs_json(const onp_chain_stage *s)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t k = 0; k < s->n_out; k++) {
        const onp_chain_output *o = &s->outs[k];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", o->name);
        cJSON_AddBoolToObject(x, "within", o->within);
        cJSON_AddNumberToObject(x, "fixtures_compared", (double)o->compared);
        cJSON_AddNumberToObject(x, "fixtures_beyond", (double)o->beyond);
        onp_doc_num(x, "max_abs", o->max_abs);
        onp_doc_num(x, "max_rel", o->max_rel);
        onp_doc_num(x, "rms", o->rms);
        onp_doc_num(x, "scale_max", o->scale_max);
        onp_doc_num(x, "envelope_max", o->envelope_max);
        onp_doc_num(x, "ratio", o->ratio);
        onp_doc_num(x, "sqnr_db", o->sqnr_db);
        cJSON_AddNumberToObject(x, "worst_fixture", o->worst_fixture);
        cJSON_AddNumberToObject(x, "top1_flips", (double)o->flips);
        if (o->why)
            cJSON_AddStringToObject(x, "why", o->why);
        else
            cJSON_AddNullToObject(x, "why");
        cJSON_AddItemToArray(arr, x);
    }
    return arr;
}

static cJSON *stage_json(const onp_chain_stage *s)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", s->name);
    cJSON_AddStringToObject(x, "model", s->model);
    cJSON_AddStringToObject(x, "precision", onp_chain_prec_name(s->prec));
    cJSON_AddStringToObject(x, "precision_from", s->prec_given ? "given" : "graph");
    onp_doc_num(x, "eps", onp_chain_prec_eps(s->prec));
    cJSON_AddStringToObject(x, "status", onp_chain_status_name(s->status));
    if (s->msg[0])
        cJSON_AddStringToObject(x, "message", s->msg);
    else
        cJSON_AddNullToObject(x, "message");
    cJSON_AddNumberToObject(x, "fixtures", (double)s->run.n_fix);
    cJSON_AddItemToObject(x, "outputs", outputs_json(s));
    cJSON_AddItemToObject(x, "first_divergent", divergence_json(&s->div));
    if (s->cause == ONP_CAUSE_COUNT) {
        cJSON_AddNullToObject(x, "cause");
    } else {
        cJSON *c = cJSON_AddObjectToObject(x, "cause");
        cJSON_AddStringToObject(c, "id", onp_cause_name(s->cause));
        if (s->div.found)
            cJSON_AddStringToObject(c, "node", s->div.first.orig_node);
        else
            cJSON_AddNullToObject(c, "node");
        cJSON_AddStringToObject(c, "fix", s->fix);
    }
    cJSON_AddItemToObject(x, "fixture_results", onp_doc_fixtures(s->run.fix, s->run.n_fix));
    return x;
}

cJSON *onp_doc_chain(const onp_chain *c, const onp_run_opts *o)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "schema", "onnxparity.chain/1");
    cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(c->verdict));
    cJSON_AddStringToObject(root, "bundle",
                            onp_bundle_dir(c->bundle) ? onp_bundle_dir(c->bundle)
                                                      : onp_bundle_model_path(c->bundle));
    if (c->first_beyond >= 0)
        cJSON_AddStringToObject(root, "first_beyond", c->stages[c->first_beyond].name);
    else
        cJSON_AddNullToObject(root, "first_beyond");
    const onp_noisebook *nb = onp_bundle_noise(c->bundle);
    const char *ref = onp_noisebook_reference(nb);
    if (ref)
        cJSON_AddStringToObject(root, "noise_reference", ref);
    else
        cJSON_AddNullToObject(root, "noise_reference");
    cJSON_AddStringToObject(root, "opt_level", onp_ort_opt_level_name(o->session.opt_level));
    cJSON_AddStringToObject(root, "provider", o->session.provider ? o->session.provider : "cpu");
    cJSON *arr = cJSON_AddArrayToObject(root, "stages");
    for (size_t i = 0; i < c->n; i++) cJSON_AddItemToArray(arr, stage_json(&c->stages[i]));
    return root;
}
