/*
 * api.c — the library as one call per command (api.h): the options through
 * the run's one table, the run through onp_check_run (check) or the run's
 * bisect plan (bisect), the document through doc.h.  The tool's `check`
 * and `bisect` make the same calls.
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/api.h"
#include "onnxparity/chain.h"
#include "onnxparity/decode.h"
#include "onnxparity/diagnose.h"
#include "onnxparity/doc.h"
#include "onnxparity/gate.h"
#include "onnxparity/run.h"
#include "onnxparity/version.h"

/* A command's own options beside the run's: 1 one taken at argv[*i]
 * (*i moved past its value), 0 not one of them, -1 refused (e set). */
typedef int (*own_parse_fn)(void *own, onp_run_args *a, int argc, const char *const *argv, int *i,
                            onp_error *e);

static int own_no_sweep(void *own, onp_run_args *a, int argc, const char *const *argv, int *i,
                        onp_error *e)
{
    (void)a, (void)argc, (void)e;
    if (strcmp(argv[*i], "--no-sweep")) return 0;
    *(int *)own = 1;
    return 1;
}

static int own_gate(void *own, onp_run_args *a, int argc, const char *const *argv, int *i,
                    onp_error *e)
{
    return onp_gate_args_parse(own, a, argc, argv, i, e);
}

static int own_chain(void *own, onp_run_args *a, int argc, const char *const *argv, int *i,
                     onp_error *e)
{
    (void)a;
    return onp_chain_args_parse(own, argc, argv, i, e);
}

static int own_decode(void *own, onp_run_args *a, int argc, const char *const *argv, int *i,
                      onp_error *e)
{
    (void)a;
    return onp_decode_args_parse(own, argc, argv, i, e);
}

/* args[n] into a: every one must be a run option of `groups` or, where
 * parse is not NULL, one of the command's own (parse(own, ...), tried
 * first). */
static int parse_args(onp_run_args *a, int groups, const char *const *args, size_t n,
                      own_parse_fn parse, void *own, onp_error *e)
{
    if (n > INT_MAX) return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "too many options");
    for (int i = 0; i < (int)n; i++) {
        if (!args[i]) return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "a NULL option");
        int r = parse ? parse(own, a, (int)n, args, &i, e) : 0;
        if (!r) r = onp_run_args_parse(a, groups, (int)n, args, &i, e);
        if (r < 0) return -1;
        if (!r)
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "unknown option '%s'", args[i]);
    }
    return 0;
}

/* What every call does first: no document yet, no error, the options at
 * their defaults (about 20 kB: on the heap, not on a binding's stack).
 * NULL when out of memory (e set); the caller frees the options. */
static onp_run_args *call_begin(char **doc, onp_error *e)
{
    *doc = NULL;
    onp_error_clear(e);
    onp_run_args *a = malloc(sizeof *a);
    if (!a) {
        onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        return NULL;
    }
    onp_run_args_init(a);
    return a;
}

/* The document printed into *doc; the exit code rc, or -1 out of memory. */
static int emit(cJSON *d, int rc, char **doc, onp_error *e)
{
    *doc = d ? onp_doc_print(d) : NULL;
    cJSON_Delete(d);
    return *doc ? rc : onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
}

int onp_api_check(const char *bundle, const char *model, const char *const *data, size_t n_data,
                  const char *const *args, size_t n_args, char **doc, onp_error *e)
{
    onp_run_args *a = call_begin(doc, e);
    if (!a) return -1;
    onp_bundle_spec where = {bundle, model, data, n_data};
    onp_check c = {0};
    int rc = -1;
    if (!parse_args(a, ONP_RUN_ARGS_CHECK, args, n_args, NULL, NULL, e) &&
        !onp_check_run(&c, &where, a, e)) {
        rc = emit(onp_doc_check(c.bundle, c.ort, c.session, &a->run, &c.run, c.upgraded),
                  onp_run_exit_code(c.run.verdict), doc, e);
    }
    onp_check_release(&c);
    free(a);
    return rc;
}

int onp_api_bisect(const char *bundle, const char *model, const char *const *data, size_t n_data,
                   const char *const *args, size_t n_args, char **doc, onp_error *e)
{
    onp_run_args *a = call_begin(doc, e);
    if (!a) return -1;
    onp_bundle_spec where = {bundle, model, data, n_data};
    onp_ort *ort = NULL;
    onp_bisect_result *r = NULL;
    int rc = -1;
    if (parse_args(a, ONP_RUN_ARGS_ORT | ONP_RUN_ARGS_TOL | ONP_RUN_ARGS_BISECT, args, n_args, NULL,
                   NULL, e) ||
        onp_ort_open(a->run.ort_lib, &ort, e))
        goto out;
    onp_bisect_opts bo;
    onp_run_args_bisect_plan(a, &where, &bo);
    if (onp_bisect_run(ort, bundle ? bundle : model, &bo, &r, e)) goto out;
    if (r->status == ONP_BISECT_NO_REFERENCE) {
        char why[512];
        onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "%s",
                      r->reference_note[0] ? r->reference_note
                                           : onp_doc_bisect_no_reference(r, why, sizeof why));
        goto out;
    }
    rc = emit(onp_doc_bisect(r, ort, &a->run.session, a->fixture),
              onp_run_exit_code(onp_run_bisect_verdict(r)), doc, e);
out:
    onp_bisect_free(r);
    onp_ort_close(ort);
    free(a);
    return rc;
}

int onp_api_diagnose(const char *bundle, const char *model, const char *const *data, size_t n_data,
                     const char *const *args, size_t n_args, char **doc, onp_error *e)
{
    onp_run_args *a = call_begin(doc, e);
    if (!a) return -1;
    onp_bundle_spec where = {bundle, model, data, n_data};
    onp_diagnosis d = {0};
    int no_sweep = 0, rc = -1;
    if (!parse_args(a, ONP_RUN_ARGS_ORT | ONP_RUN_ARGS_DIAGNOSE, args, n_args, own_no_sweep,
                    &no_sweep, e) &&
        !onp_diagnosis_open(&d, &where, a, e) && !onp_diagnosis_run(&d, a, no_sweep, NULL, NULL, e))
        rc = emit(onp_doc_diagnose(&d, a), onp_run_exit_code(d.run.verdict), doc, e);
    onp_diagnosis_release(&d);
    free(a);
    return rc;
}

/* gate --record: the criteria written, their document in *doc; or the
 * refusal (exit code, *doc NULL, e.msg the reason with code NONE). */
static int gate_record(onp_gate *g, const onp_gate_args *ga, char **doc, onp_error *e)
{
    if (g->verdict != ONP_RUN_PASS) {
        onp_gate_refusal_text(g, e->msg, sizeof e->msg);
        return onp_run_exit_code(g->verdict);
    }
    return onp_criteria_write(&g->criteria, ga->criteria, doc, e) ? -1 : 0;
}

int onp_api_gate(const char *bundle, const char *model, const char *const *data, size_t n_data,
                 const char *const *args, size_t n_args, char **doc, onp_error *e)
{
    onp_run_args *a = call_begin(doc, e);
    if (!a) return -1;
    onp_bundle_spec where = {bundle, model, data, n_data};
    onp_gate_args ga;
    onp_gate_args_init(&ga);
    onp_gate g = {0};
    int rc = -1;
    if (!parse_args(a, ONP_RUN_ARGS_ORT, args, n_args, own_gate, &ga, e) &&
        !onp_gate_args_finish(&ga, a, e) && !onp_gate_run(&g, &where, a, &ga, e)) {
        rc = ga.record ? gate_record(&g, &ga, doc, e)
                       : emit(onp_doc_gate(&g, &a->run, ga.criteria), onp_run_exit_code(g.verdict),
                              doc, e);
    }
    onp_gate_release(&g);
    onp_gate_args_release(&ga);
    free(a);
    return rc;
}

int onp_api_chain(const char *bundle, const char *model, const char *const *data, size_t n_data,
                  const char *const *args, size_t n_args, char **doc, onp_error *e)
{
    onp_run_args *a = call_begin(doc, e);
    if (!a) return -1;
    onp_chain_args *ca = calloc(1, sizeof *ca);
    onp_bundle_spec where = {bundle, model, data, n_data};
    onp_chain c;
    memset(&c, 0, sizeof c);
    int rc = -1;
    if (!ca)
        onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    else if (!parse_args(a, ONP_RUN_ARGS_ORT | ONP_RUN_ARGS_TOL, args, n_args, own_chain, ca, e) &&
             !onp_chain_args_finish(ca, e) &&
             !onp_chain_run(&c, &where, a, ca->st, ca->n, ca->per_value, e))
        rc = emit(onp_doc_chain(&c, &a->run), onp_run_exit_code(c.verdict), doc, e);
    onp_chain_release(&c);
    free(ca);
    free(a);
    return rc;
}

int onp_api_generate(const char *bundle, const char *model, const char *const *data, size_t n_data,
                     const char *const *args, size_t n_args, char **doc, onp_error *e)
{
    (void)data;
    onp_run_args *a = call_begin(doc, e);
    if (!a) return -1;
    onp_decode_opts o;
    onp_decode_opts_init(&o);
    onp_decode_result *r = NULL;
    int rc = -1;
    if (!bundle || model || n_data) {
        onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                      "generate takes one decode bundle (no model, no fixture folders)");
        goto out;
    }
    if (parse_args(a, ONP_RUN_ARGS_ORT, args, n_args, own_decode, &o, e)) goto out;
    o.ort_lib = a->run.ort_lib;
    o.session = a->run.session;
    if (!onp_decode_run(bundle, &o, &r, e))
        rc = emit(onp_doc_generate(r), onp_run_exit_code(r->verdict), doc, e);
out:
    onp_decode_result_free(r);
    free(a);
    return rc;
}

void onp_api_free(void *p)
{
    free(p);
}

const char *onp_api_version(void)
{
    return ONP_VERSION;
}
