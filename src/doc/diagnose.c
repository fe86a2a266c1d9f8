/*
 * diagnose.c — the diagnose document (doc.h; docs/schemas/diagnose-1.json):
 * the verdict, the causes, the first divergent node with the reproducer,
 * the sweep over levels, libraries and providers, the probes, the lint's
 * counts, the environment; and the sweep and probe members, which the
 * sweep document shares.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "onnxparity/diagnose.h"
#include "onnxparity/doc.h"

/* A graph diff: {from, to, nodes_from, nodes_to, removed[], added[], files}. */
static cJSON *graph_diff_json(const onp_graph_diff *d)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "from", d->from);
    cJSON_AddStringToObject(j, "to", d->to);
    cJSON_AddNumberToObject(j, "nodes_from", (double)d->nodes_from);
    cJSON_AddNumberToObject(j, "nodes_to", (double)d->nodes_to);
    cJSON_AddNumberToObject(j, "groups", (double)d->n_groups);
    cJSON *rm = cJSON_AddArrayToObject(j, "removed");
    for (size_t i = 0; i < d->n_removed; i++) {
        const onp_gdiff_node *n = &d->removed[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", n->name);
        cJSON_AddStringToObject(x, "op_type", n->op_type);
        cJSON_AddStringToObject(x, "domain", n->domain);
        if (n->replaced_by >= 0)
            cJSON_AddStringToObject(x, "replaced_by", d->added[n->replaced_by].name);
        else
            cJSON_AddNullToObject(x, "replaced_by");
        cJSON_AddBoolToObject(x, "folded", n->folded);
        cJSON_AddItemToArray(rm, x);
    }
    cJSON *ad = cJSON_AddArrayToObject(j, "added");
    for (size_t i = 0; i < d->n_added; i++) {
        const onp_gdiff_node *n = &d->added[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", n->name);
        cJSON_AddStringToObject(x, "op_type", n->op_type);
        cJSON_AddStringToObject(x, "domain", n->domain);
        cJSON_AddNumberToObject(x, "group", (double)n->group);
        cJSON *rp = cJSON_AddArrayToObject(x, "replaces");
        for (size_t k = 0; k < n->n_replaces; k++) {
            const onp_gdiff_node *o = &d->removed[n->replaces[k]];
            cJSON *y = cJSON_CreateObject();
            cJSON_AddStringToObject(y, "name", o->name);
            cJSON_AddStringToObject(y, "op_type", o->op_type);
            cJSON_AddItemToArray(rp, y);
        }
        cJSON_AddItemToArray(ad, x);
    }
    if (d->from_file) {
        cJSON *f = cJSON_AddObjectToObject(j, "files");
        cJSON_AddStringToObject(f, "from", d->from_file);
        cJSON_AddStringToObject(f, "to", d->to_file);
    }
    return j;
}

static cJSON *levels_json(const onp_sweep_result *r, const onp_sweep_level *levels)
{
    cJSON *lv = cJSON_CreateArray();
    for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
        const onp_sweep_level *L = &levels[l];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "level", onp_ort_opt_level_name(L->level));
        cJSON_AddBoolToObject(j, "ran", L->ran);
        if (L->error[0]) cJSON_AddStringToObject(j, "error", L->error);
        cJSON_AddBoolToObject(j, "pass", L->pass);
        if (L->deterministic < 0) /* --once: not checked */
            cJSON_AddNullToObject(j, "deterministic");
        else
            cJSON_AddBoolToObject(j, "deterministic", L->deterministic);
        if (!L->deterministic) {
            cJSON_AddNumberToObject(j, "nondeterministic_fixture", L->nondet_fixture);
            cJSON_AddStringToObject(j, "nondeterministic_output", L->nondet_output);
        }
        cJSON *outs = cJSON_AddArrayToObject(j, "outputs");
        for (size_t k = 0; k < r->n_outputs; k++) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "name", r->outputs[k]);
            onp_doc_num(c, "max_abs", L->cells[k].max_abs);
            cJSON_AddBoolToObject(c, "pass", L->cells[k].pass);
            cJSON_AddNumberToObject(c, "fail_fixture", L->cells[k].fail_fixture);
            cJSON_AddItemToArray(outs, c);
        }
        if (L->graph_diff)
            cJSON_AddItemToObject(j, "graph_diff", graph_diff_json(L->graph_diff));
        else
            cJSON_AddNullToObject(j, "graph_diff");
        cJSON_AddItemToArray(lv, j);
    }
    return lv;
}

static void add_level_name(cJSON *o, const char *key, const onp_sweep_level *levels, long l)
{
    if (l >= 0)
        cJSON_AddStringToObject(o, key, onp_ort_opt_level_name(levels[l].level));
    else
        cJSON_AddNullToObject(o, key);
}

cJSON *onp_doc_sweep(const onp_sweep_result *r)
{
    cJSON *sw = cJSON_CreateObject();
    cJSON_AddItemToObject(sw, "levels", levels_json(r, r->levels));
    add_level_name(sw, "first_failing_level", r->levels, r->first_failing);
    cJSON *s = cJSON_AddObjectToObject(sw, "optimizer_search");
    cJSON_AddBoolToObject(s, "searched", r->searched);
    if (r->culprit[0])
        cJSON_AddStringToObject(s, "culprit", r->culprit);
    else
        cJSON_AddNullToObject(s, "culprit");
    cJSON_AddNumberToObject(s, "sessions", r->sessions_tried);
    cJSON_AddStringToObject(s, "note", r->search_note);
    cJSON_AddNumberToObject(s, "configuration", (double)r->search_config);
    if (r->culprit_diff)
        cJSON_AddItemToObject(s, "graph_diff", graph_diff_json(r->culprit_diff));
    else
        cJSON_AddNullToObject(s, "graph_diff");
    cJSON_AddStringToObject(sw, "providers", r->providers);
    size_t n_prov = 0, n_avail = 0;
    for (size_t c = 0; c < r->n_configs; c++) {
        if (r->configs[c].library == 0) n_prov++;
        n_avail += r->configs[c].available;
    }
    char axis[160];
    if (n_prov > 1)
        snprintf(axis, sizeof axis, "swept: %zu providers, %zu of %zu configurations available",
                 n_prov, n_avail, r->n_configs);
    else
        snprintf(axis, sizeof axis, "not swept: one provider (--providers LIST sweeps several)%s",
                 strchr(r->providers, ',') ? "" : "; the library offers one provider only");
    cJSON_AddStringToObject(sw, "provider_axis", axis);
    cJSON *cf = cJSON_AddArrayToObject(sw, "configurations");
    for (size_t c = 0; c < r->n_configs; c++) {
        const onp_sweep_config *C = &r->configs[c];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "index", (double)c);
        cJSON_AddStringToObject(j, "provider", C->provider);
        cJSON_AddStringToObject(j, "requested", C->requested);
        cJSON_AddNumberToObject(j, "library", (double)C->library);
        cJSON_AddStringToObject(j, "ort_version", C->ort_version);
        cJSON_AddStringToObject(j, "ort_library", C->ort_library);
        cJSON_AddBoolToObject(j, "available", C->available);
        if (C->available)
            cJSON_AddNullToObject(j, "unavailable");
        else
            cJSON_AddStringToObject(j, "unavailable", C->unavailable);
        cJSON_AddBoolToObject(j, "pass", C->pass);
        add_level_name(j, "first_failing_level", C->levels, C->first_failing);
        cJSON_AddItemToObject(j, "levels", levels_json(r, C->levels));
        cJSON_AddItemToArray(cf, j);
    }
    cJSON *ep = cJSON_AddObjectToObject(sw, "execution_provider");
    cJSON_AddBoolToObject(ep, "disagree", r->ep_disagree);
    if (r->ep_disagree) {
        cJSON_AddStringToObject(ep, "provider", r->ep_provider);
        cJSON_AddStringToObject(ep, "level", onp_ort_opt_level_name(r->levels[r->ep_level].level));
    } else {
        cJSON_AddNullToObject(ep, "provider");
        cJSON_AddNullToObject(ep, "level");
    }
    cJSON_AddStringToObject(ep, "note", r->ep_note);
    cJSON *lb = cJSON_AddObjectToObject(sw, "libraries");
    cJSON_AddBoolToObject(lb, "disagree", r->lib_disagree);
    cJSON_AddStringToObject(lb, "note", r->lib_note);
    cJSON_AddStringToObject(sw, "graph_note", r->graph_note);
    return sw;
}

cJSON *onp_doc_probes(const onp_probe_result *pr)
{
    cJSON *p = cJSON_CreateObject();
    cJSON *n = cJSON_AddObjectToObject(p, "numbers");
    cJSON_AddNumberToObject(n, "fixtures", (double)pr->n_fixtures);
    cJSON_AddNumberToObject(n, "failed", pr->fixtures_failed);
    cJSON_AddNumberToObject(n, "refused", pr->fixtures_error);
    cJSON *d = cJSON_AddObjectToObject(p, "determinism");
    cJSON_AddBoolToObject(d, "deterministic", pr->deterministic);
    cJSON_AddNumberToObject(d, "fixture", pr->det_fixture);
    if (!pr->deterministic) {
        cJSON_AddStringToObject(d, "output", pr->det_output);
        onp_doc_num(d, "max_abs", pr->det_max_abs);
    }
    cJSON *b = cJSON_AddObjectToObject(p, "batch_invariance");
    cJSON_AddBoolToObject(b, "tested", pr->batch_tested);
    cJSON_AddBoolToObject(b, "pass", !pr->batch_tested || pr->batch_pass);
    cJSON_AddNumberToObject(b, "fixture", pr->batch_fixture);
    cJSON_AddBoolToObject(b, "shape_error", pr->batch_shape_error);
    cJSON_AddStringToObject(b, "note", pr->batch_note);
    cJSON *s = cJSON_AddObjectToObject(p, "shapes");
    cJSON_AddNumberToObject(s, "groups", pr->n_shape_groups);
    cJSON_AddBoolToObject(s, "shape_dependent", pr->shape_dependent);
    cJSON_AddNumberToObject(s, "fail_fixture", pr->shape_fail_fixture);
    cJSON_AddStringToObject(s, "note", pr->shape_note);
    cJSON *f = cJSON_AddObjectToObject(p, "fixture_dependence");
    cJSON_AddBoolToObject(f, "dependent", pr->fixture_dependent);
    cJSON_AddNumberToObject(f, "pass_fixture", pr->dep_pass_fixture);
    cJSON_AddNumberToObject(f, "fail_fixture", pr->dep_fail_fixture);
    cJSON_AddStringToObject(f, "note", pr->dep_note);
    return p;
}

/* The bisect's part of the document. */
static void bisect_json(cJSON *root, const onp_bisect_result *bis)
{
    const onp_bisect_point *p = bis && bis->status == ONP_BISECT_DIVERGES && bis->first >= 0
                                    ? &bis->points[bis->first]
                                    : NULL;
    if (p) {
        cJSON *fd = cJSON_AddObjectToObject(root, "first_divergent");
        onp_doc_point_names(fd, p);
        cJSON_AddStringToObject(fd, "reference", onp_bisect_ref_name(bis->reference));
        if (bis->local.ran)
            cJSON_AddStringToObject(fd, "local", bis->local.local ? "local" : "inherited");
        else
            cJSON_AddNullToObject(fd, "local");
    } else {
        cJSON_AddNullToObject(root, "first_divergent");
    }
    if (bis && bis->repro[0])
        cJSON_AddStringToObject(root, "repro", bis->repro);
    else
        cJSON_AddNullToObject(root, "repro");
    if (bis && bis->verify.ran)
        cJSON_AddBoolToObject(root, "instrumented_reproduces", bis->verify.reproduces);
    else
        cJSON_AddNullToObject(root, "instrumented_reproduces");
}

cJSON *onp_doc_diagnose(const onp_diagnosis *d, const onp_run_args *a)
{
    const onp_causes *cs = d->run.causes;
    const onp_session_opts *so = &a->run.session;
    const onp_lint_result *lint = &d->lint;
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "schema", "onnxparity.diagnose/1");
    cJSON_AddStringToObject(root, "verdict", onp_run_verdict_name(d->run.verdict));
    cJSON_AddStringToObject(root, "model", onp_bundle_model_path(d->bundle));
    cJSON_AddItemToObject(root, "causes", onp_doc_causes(cs));
    cJSON_AddBoolToObject(root, "nondeterministic", cs->nondeterministic);
    cJSON_AddItemToObject(root, "latent", onp_doc_latent(cs));
    bisect_json(root, d->run.bisect);
    if (d->sweep)
        cJSON_AddItemToObject(root, "sweep", onp_doc_sweep(d->sweep));
    else
        cJSON_AddNullToObject(root, "sweep");
    cJSON_AddItemToObject(root, "probes", onp_doc_probes(&d->probe));
    size_t tie[ONP_TIE_ORDER_COUNT];
    onp_tie_order_counts(d->run.fix, d->run.n_fix, tie);
    if (tie[ONP_TIE_ORDER_MATCHED] || tie[ONP_TIE_ORDER_DIFFERS]) { /* docs/compare.md */
        cJSON *tj = cJSON_AddObjectToObject(root, "tie_order");
        cJSON_AddNumberToObject(tj, "matched", (double)tie[ONP_TIE_ORDER_MATCHED]);
        cJSON_AddNumberToObject(tj, "differs", (double)tie[ONP_TIE_ORDER_DIFFERS]);
    }
    cJSON *lj = cJSON_AddObjectToObject(root, "lint");
    cJSON_AddNumberToObject(lj, "errors", (double)lint->counts[ONP_LINT_ERROR]);
    cJSON_AddNumberToObject(lj, "warnings", (double)lint->counts[ONP_LINT_WARNING]);
    cJSON_AddNumberToObject(lj, "infos", (double)lint->counts[ONP_LINT_INFO]);
    onp_doc_environment(root, d->ort,
                        so->provider && so->provider[0] ? so->provider : "CPUExecutionProvider",
                        so->opt_level, so->intra_threads, so->inter_threads,
                        onp_bundle_sha256(d->bundle), so->config, so->n_config);
    return root;
}
