/*
 * sweep.c — the optimization-level sweep (onp_sweep_run,
 * onp_sweep_run_libs): every configuration (ONNX Runtime library x
 * execution provider) evaluated at every level, then, where `all` breaks
 * parity that `disable` keeps, the optimizer search (optsearch.c), the
 * optimized graphs diffed where parity breaks (optgraphs.c), and the
 * cross-check of providers and libraries against each other.  Never prints.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_int.h"

const onp_ort_opt_level probe_sweep_levels[ONP_SWEEP_LEVELS] = {
    ONP_ORT_OPT_DISABLE, ONP_ORT_OPT_BASIC, ONP_ORT_OPT_EXTENDED, ONP_ORT_OPT_LAYOUT,
    ONP_ORT_OPT_ALL};

static void free_levels(onp_sweep_level *L)
{
    for (int l = 0; L && l < ONP_SWEEP_LEVELS; l++) {
        free(L[l].cells);
        onp_graph_diff_free(L[l].graph_diff);
    }
}

void onp_sweep_free(onp_sweep_result *r)
{
    if (!r) return;
    for (size_t i = 0; r->outputs && i < r->n_outputs; i++) free(r->outputs[i]);
    free(r->outputs);
    free_levels(r->levels);
    for (size_t c = 1; r->configs && c < r->n_configs; c++) {
        free_levels(r->configs[c].levels);
        free(r->configs[c].levels);
    }
    free(r->configs);
    onp_graph_diff_free(r->culprit_diff);
    free(r);
}

/* Sweep one configuration over every level into L[ONP_SWEEP_LEVELS]
 * (cells allocated here).  0, or -1 on allocation failure. */
static int sweep_config(onp_ort *ort, const char *model, const onp_fixset *fs,
                        const onp_probe_opts *o, const onp_session_opts *base, size_t n_out,
                        onp_sweep_config *c, onp_error *e)
{
    onp_sweep_level *L = c->levels;
    int offered = probe_is_cpu(c->requested) || onp_ort_has_provider(ort, c->requested);
    if (!offered) {
        size_t at = (size_t)snprintf(c->unavailable, sizeof c->unavailable,
                                     "ONNX Runtime %s (%s) does not offer %s; it offers ",
                                     c->ort_version, c->ort_library, c->requested);
        for (size_t i = 0; i < onp_ort_provider_count(ort) && at < sizeof c->unavailable; i++)
            at += (size_t)snprintf(c->unavailable + at, sizeof c->unavailable - at, "%s%s",
                                   i ? ", " : "", onp_ort_provider(ort, i));
    }
    c->first_failing = -1;
    c->pass = 1;
    for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
        L[l].level = probe_sweep_levels[l];
        L[l].nondet_fixture = -1;
        L[l].deterministic = 1;
        L[l].cells = calloc(n_out ? n_out : 1, sizeof *L[l].cells);
        if (!L[l].cells) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        probe_evalres er;
        memset(&er, 0, sizeof er);
        if (offered) {
            onp_session_opts so = *base;
            so.opt_level = L[l].level;
            er.cells = L[l].cells;
            er.n_cells = n_out;
            if (probe_eval_config(ort, model, fs, o, &so, !o->once, &er, e)) return -1;
        } else {
            snprintf(er.error, sizeof er.error, "%s", c->unavailable);
        }
        L[l].ran = er.opened;
        snprintf(L[l].error, sizeof L[l].error, "%s", er.error);
        L[l].pass = er.opened && er.pass;
        L[l].deterministic = !er.opened ? 1 : o->once ? -1 : er.deterministic;
        L[l].nondet_fixture = er.opened ? er.nondet_fixture : -1;
        snprintf(L[l].nondet_output, sizeof L[l].nondet_output, "%s", er.nondet_output);
        if (!er.opened)
            for (size_t k = 0; k < n_out; k++) L[l].cells[k] = (onp_sweep_cell){0, INFINITY, -1};
        if (er.opened && !c->available) {
            c->available = 1;
            snprintf(c->provider, sizeof c->provider, "%s", er.provider);
        }
        if (l > 0 && c->first_failing < 0 && L[l - 1].pass && !L[l].pass) c->first_failing = l;
        if (!L[l].pass || !L[l].deterministic) c->pass = 0;
    }
    if (!c->available) {
        c->pass = 0;
        if (offered) snprintf(c->unavailable, sizeof c->unavailable, "%s", L[0].error);
    }
    return 0;
}

int onp_sweep_run(onp_ort *ort, const char *model_path, const onp_fixset *fs,
                  const onp_probe_opts *o, onp_sweep_result **out, onp_error *e)
{
    return onp_sweep_run_libs(&ort, 1, model_path, fs, o, out, e);
}

/* The output names, from the first library's CPU session at the level
 * under test; "output_K" when it cannot open. */
static int output_names(onp_ort *ort, const char *model, const onp_fixset *fs,
                        const onp_probe_opts *o, onp_sweep_result *r)
{
    size_t n_out = 0;
    for (size_t i = 0; i < fs->n; i++)
        if (fs->f[i].n_out > n_out) n_out = fs->f[i].n_out;
    onp_session_opts so = probe_config_session(o, NULL);
    onp_session *s;
    onp_error se;
    int opened = !onp_session_open(ort, model, &so, &s, &se);
    if (opened && onp_session_output_count(s) < n_out) n_out = onp_session_output_count(s);
    r->outputs = calloc(n_out ? n_out : 1, sizeof *r->outputs);
    for (size_t k = 0; r->outputs && k < n_out; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "output_%zu", k);
        r->outputs[k] = probe_dup_str(opened ? onp_session_output(s, k)->name : nm);
    }
    if (opened) onp_session_close(s);
    r->n_outputs = n_out;
    if (!r->outputs) return -1;
    for (size_t k = 0; k < n_out; k++)
        if (!r->outputs[k]) return -1;
    return 0;
}

void onp_sweep_cross_check(onp_sweep_result *r, size_t n_prov)
{
    r->ep_disagree = r->lib_disagree = 0;
    r->ep_level = 0;
    r->ep_provider[0] = r->ep_note[0] = r->lib_note[0] = '\0';
    if (!n_prov || !r->configs || r->n_configs % n_prov) return;
    size_t n_orts = r->n_configs / n_prov;
    for (size_t lib = 0; lib < n_orts && !r->ep_disagree; lib++) {
        const onp_sweep_config *ref = NULL;
        for (size_t p = 0; p < n_prov && !ref; p++) {
            const onp_sweep_config *c = &r->configs[lib * n_prov + p];
            if (c->available && probe_is_cpu(c->provider)) ref = c;
        }
        for (size_t p = 0; p < n_prov && !ref; p++)
            if (r->configs[lib * n_prov + p].available) ref = &r->configs[lib * n_prov + p];
        for (size_t p = 0; ref && p < n_prov && !r->ep_disagree; p++) {
            const onp_sweep_config *c = &r->configs[lib * n_prov + p];
            if (c == ref || !c->available) continue;
            for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
                const onp_sweep_level *a = &ref->levels[l], *b = &c->levels[l];
                if (!a->ran || !b->ran || a->pass == b->pass) continue;
                r->ep_disagree = 1;
                r->ep_level = l;
                snprintf(r->ep_provider, sizeof r->ep_provider, "%s", c->provider);
                snprintf(
                    r->ep_note, sizeof r->ep_note, "at level %s %s %s and %s %s (ONNX Runtime %s)",
                    onp_ort_opt_level_name(a->level), ref->provider, a->pass ? "passes" : "fails",
                    c->provider, b->pass ? "passes" : "fails", ref->ort_version);
                break;
            }
        }
    }
    for (size_t p = 0; p < n_prov && !r->lib_disagree; p++)
        for (size_t lib = 1; lib < n_orts && !r->lib_disagree; lib++) {
            const onp_sweep_config *a0 = &r->configs[p], *b0 = &r->configs[lib * n_prov + p];
            if (!a0->available || !b0->available) continue;
            for (int l = 0; l < ONP_SWEEP_LEVELS; l++) {
                const onp_sweep_level *a = &a0->levels[l], *b = &b0->levels[l];
                if (!a->ran || !b->ran || a->pass == b->pass) continue;
                r->lib_disagree = 1;
                snprintf(r->lib_note, sizeof r->lib_note,
                         "%s at level %s: ONNX Runtime %s (%.150s) %s, ONNX Runtime %s (%.150s) %s",
                         a0->provider, onp_ort_opt_level_name(a->level), a0->ort_version,
                         a0->ort_library, a->pass ? "passes" : "fails", b0->ort_version,
                         b0->ort_library, b->pass ? "passes" : "fails");
                break;
            }
        }
}

int onp_sweep_run_libs(onp_ort *const *orts, size_t n_orts, const char *model_path,
                       const onp_fixset *fs, const onp_probe_opts *o, onp_sweep_result **out,
                       onp_error *e)
{
    *out = NULL;
    if (!n_orts) return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "no ONNX Runtime library");
    onp_sweep_result *r = calloc(1, sizeof *r);
    if (!r) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    r->n_fixtures = fs->n;
    r->first_failing = r->search_config = -1;
    onp_ort *ort0 = orts[0];
    for (size_t i = 0, at = 0; i < onp_ort_provider_count(ort0) && at < sizeof r->providers; i++)
        at += (size_t)snprintf(r->providers + at, sizeof r->providers - at, "%s%s", i ? ", " : "",
                               onp_ort_provider(ort0, i));
    /* a provider other than the CPU's is swept beside the CPU's: the
     * reference an execution-provider disagreement needs */
    int cpu_ref = !o->n_providers && !probe_is_cpu(o->session.provider);
    size_t n_prov = o->n_providers ? o->n_providers : cpu_ref ? 2 : 1;
    probe_gstore g = {.note = r->graph_note, .note_size = sizeof r->graph_note};
    int rc = output_names(ort0, model_path, fs, o, r);
    if (!rc) {
        r->n_configs = n_orts * n_prov;
        r->configs = calloc(r->n_configs, sizeof *r->configs);
        if (!r->configs) rc = -1;
    }
    for (size_t c = 0; !rc && c < r->n_configs; c++) {
        onp_sweep_config *C = &r->configs[c];
        C->library = c / n_prov;
        const char *prov = o->n_providers    ? o->providers[c % n_prov]
                           : c % n_prov == 0 ? o->session.provider
                                             : "cpu";
        snprintf(C->requested, sizeof C->requested, "%s", prov && prov[0] ? prov : "cpu");
        snprintf(C->provider, sizeof C->provider, "%s",
                 probe_is_cpu(prov) ? "CPUExecutionProvider" : C->requested);
        snprintf(C->ort_version, sizeof C->ort_version, "%s", onp_ort_version(orts[C->library]));
        snprintf(C->ort_library, sizeof C->ort_library, "%s", onp_ort_lib_path(orts[C->library]));
        C->levels = c ? calloc(ONP_SWEEP_LEVELS, sizeof *C->levels) : r->levels;
        if (!C->levels) rc = -1;
    }
    if (rc) {
        onp_sweep_free(r);
        return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    }
    for (size_t c = 0; !rc && c < r->n_configs; c++) {
        onp_sweep_config *C = &r->configs[c];
        onp_session_opts base =
            probe_config_session(o, probe_is_cpu(C->requested) ? NULL : C->requested);
        rc = sweep_config(orts[C->library], model_path, fs, o, &base, r->n_outputs, C, e);
    }
    r->first_failing = r->configs ? r->configs[0].first_failing : -1;
    /* the optimizer search, on the first configuration that needs it */
    for (size_t c = 0; !rc && o->find_optimizer && c < r->n_configs; c++) {
        onp_sweep_config *C = &r->configs[c];
        const onp_sweep_level *dis = &C->levels[0], *all = &C->levels[ONP_SWEEP_LEVELS - 1];
        if (!C->available || !dis->pass || !all->ran || all->pass) continue;
        onp_session_opts base =
            probe_config_session(o, probe_is_cpu(C->requested) ? NULL : C->requested);
        r->search_config = (long)c;
        rc = probe_run_search(orts[C->library], model_path, fs, o, &base, r, e);
        if (!rc && r->culprit[0] && o->diff_graphs >= 0)
            rc = probe_culprit_graphs(&g, orts[C->library], model_path, &base, o, C, n_orts, r, e);
        break;
    }
    /* optimized-graph diffs: where parity breaks, or everywhere on request */
    for (size_t c = 0; !rc && o->diff_graphs >= 0 && c < r->n_configs; c++) {
        onp_sweep_config *C = &r->configs[c];
        if (!C->available) continue;
        onp_session_opts base =
            probe_config_session(o, probe_is_cpu(C->requested) ? NULL : C->requested);
        onp_ort *ort = orts[C->library];
        if (o->diff_graphs > 0) {
            for (int l = 1; l < ONP_SWEEP_LEVELS; l++)
                probe_diff_levels(&g, ort, model_path, &base, o, C, n_orts, l - 1, l);
        } else if (C->first_failing > 0) {
            probe_diff_levels(&g, ort, model_path, &base, o, C, n_orts, (int)C->first_failing - 1,
                              (int)C->first_failing);
        }
    }
    probe_gstore_release(&g);
    if (!rc) onp_sweep_cross_check(r, n_prov);
    if (rc) {
        onp_sweep_free(r);
        return -1;
    }
    *out = r;
    return 0;
}
