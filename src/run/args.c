/*
 * args.c — the options of a run by name (run.h, onp_run_args): one table
 * of every option the run takes, its group, whether it takes a value, and
 * how it is set.  The tool's commands and the bindings both parse through
 * it, so `--threads 4` and `threads=4` cannot mean two things.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "onnxparity/numparse.h"
#include "onnxparity/outpath.h"
#include "onnxparity/run.h"

typedef int (*arg_set_fn)(onp_run_args *a, const char *name, const char *v, onp_error *e);

static int usage(onp_error *e, const char *fmt, const char *name, const char *v)
{
    return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, fmt, name, v);
}

/* A number >= 0. */
static int get_real(const char *name, const char *v, double *out, onp_error *e)
{
    if (onp_parse_real(v, out) || *out < 0)
        return usage(e, "--%s wants a finite number >= 0, not '%s'", name, v);
    return 0;
}

static int get_int(const char *name, const char *v, long lo, long hi, long *out, onp_error *e)
{
    if (!onp_parse_long(v, lo, hi, out)) return 0;
    return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                         "--%s wants an integer from %ld to %ld, not '%s'", name, lo, hi, v);
}

/* KEY=VALUE appended to arr[*n] (at most ONP_RUN_MAX_KV). */
static int add_kv(const char *name, const char *v, const char **arr, size_t *n, onp_error *e)
{
    if (!strchr(v, '=') || v[0] == '=') return usage(e, "--%s wants KEY=VALUE, not '%s'", name, v);
    if (*n >= ONP_RUN_MAX_KV)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "at most %d --%s", ONP_RUN_MAX_KV,
                             name);
    arr[(*n)++] = v;
    return 0;
}

// --- setters, one per option --------------------------------------------------

static int set_rtol(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    return get_real(name, v, &a->run.rtol, e);
}

static int set_atol(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    if (get_real(name, v, &a->run.atol, e)) return -1;
    a->run.atol_given = 1;
    return 0;
}

/* NAME=RTOL,ATOL (the name may hold '='; the last one splits). */
static int set_tol(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    const char *eq = strrchr(v, '=');
    const char *comma = eq ? strchr(eq, ',') : NULL;
    char first[64];
    double r, at;
    if (!eq || eq == v || !comma || (size_t)(comma - eq - 1) >= sizeof first)
        return usage(e, "--%s wants NAME=RTOL,ATOL, not '%s'", name, v);
    memcpy(first, eq + 1, (size_t)(comma - eq - 1));
    first[comma - eq - 1] = '\0';
    if (onp_parse_real(first, &r) || onp_parse_real(comma + 1, &at) || r < 0 || at < 0)
        return usage(e, "--%s wants NAME=RTOL,ATOL, not '%s'", name, v);
    size_t n = (size_t)(eq - v);
    if (n >= sizeof a->tols[0].name || a->n_tols >= ONP_RUN_MAX_KV)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "--tol name too long or too many");
    onp_run_tol *t = &a->tols[a->n_tols++];
    memcpy(t->name, v, n);
    t->name[n] = '\0';
    t->tol.rtol = r;
    t->tol.atol = at;
    a->run.atol_given = 1;
    return 0;
}

static int set_topk(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    long k;
    if (!strcmp(v, "auto")) return a->run.topk = -1, 0;
    if (!strcmp(v, "off")) return a->run.topk = 0, 0;
    if (get_int(name, v, 1, INT_MAX, &k, e)) return -1;
    a->run.topk = (int)k;
    return 0;
}

/* I/N with 0 <= I < N. */
static int set_shard(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    const char *slash = strchr(v, '/');
    char first[32];
    long i, n;
    if (!slash || (size_t)(slash - v) >= sizeof first)
        return usage(e, "--%s wants I/N with 0 <= I < N, not '%s'", name, v);
    memcpy(first, v, (size_t)(slash - v));
    first[slash - v] = '\0';
    if (onp_parse_long(first, 0, LONG_MAX - 1, &i) || onp_parse_long(slash + 1, 1, LONG_MAX, &n) ||
        i >= n)
        return usage(e, "--%s wants I/N with 0 <= I < N, not '%s'", name, v);
    a->run.shard_i = i;
    a->run.shard_n = n;
    return 0;
}

static int set_ort_lib(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    (void)name, (void)e;
    a->run.ort_lib = v;
    onp_out_note_read(v); /* loaded code: no output may replace it */
    return 0;
}

static int set_opt_level(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    (void)name;
    return onp_ort_opt_level_parse(v, &a->run.session.opt_level, e) ? -1 : 0;
}

static int set_provider(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    (void)name, (void)e;
    a->run.session.provider = v;
    return 0;
}

static int set_provider_opt(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    return add_kv(name, v, a->provider_opts, &a->run.session.n_provider_opts, e);
}

static int set_config(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    return add_kv(name, v, a->config, &a->run.session.n_config, e);
}

/* More threads than this is a typo, not a machine: ORT would create them
 * all (--threads 100000 ran for minutes). */
#define MAX_THREADS 1024

static int set_threads(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    long n;
    if (get_int(name, v, 0, MAX_THREADS, &n, e)) return -1;
    if (!strcmp(name, "threads"))
        a->run.session.intra_threads = (int)n;
    else
        a->run.session.inter_threads = (int)n;
    return 0;
}

static int set_save_optimized(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    (void)name, (void)e;
    a->run.session.optimized_model_path = v;
    return 0;
}

static int set_custom_op_lib(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    if (a->run.session.n_custom_op_libs >= ONP_RUN_MAX_KV)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "at most %d --%s", ONP_RUN_MAX_KV,
                             name);
    a->custom_op_libs[a->run.session.n_custom_op_libs++] = v;
    onp_out_note_read(v);
    return 0;
}

static int set_timeout(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    double sec;
    if (get_real(name, v, &sec, e)) return -1;
    if (!(sec > 0 && sec <= 86400))
        return usage(e, "--%s wants seconds in (0, 86400], not '%s'", name, v);
    a->run.session.timeout_ms = sec * 1000 < 1 ? 1 : (int)(sec * 1000);
    return 0;
}

static int set_fixture(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    long k;
    if (get_int(name, v, 0, INT_MAX, &k, e)) return -1;
    if (k > 1000000000L)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "--%s %s is out of range", name, v);
    a->fixture = (int)k;
    return 0;
}

static int set_reference(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    if (!strcmp(v, "eager"))
        a->run.reference = ONP_BISECT_REF_EAGER;
    else if (!strcmp(v, "disable"))
        a->run.reference = ONP_BISECT_REF_DISABLE;
    else
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "--%s %s: expected eager or disable",
                             name, v);
    return 0;
}

static int set_chunk(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    long k;
    if (get_int(name, v, 0, INT_MAX, &k, e)) return -1;
    if (k < 1 || k > 1000000000L)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "--%s %s: expected N >= 1", name, v);
    a->chunk = (size_t)k;
    return 0;
}

static int set_max_exposed(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    if (onp_parse_size(v, &a->max_exposed))
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "--%s %s: expected a positive size (e.g. 512M, 2G)", name, v);
    return 0;
}

static int set_save_repro(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    (void)name, (void)e;
    a->run.save_repro = v;
    return 0;
}

/* The switches: each sets one int to 1 (no-isolate clears isolate). */
static int set_switch(onp_run_args *a, const char *name, const char *v, onp_error *e)
{
    (void)v, (void)e;
    if (!strcmp(name, "no-isolate")) a->run.session.isolate = 0;
    if (!strcmp(name, "deterministic")) a->run.session.deterministic = 1;
    if (!strcmp(name, "strict-tol")) a->run.strict = 1;
    if (!strcmp(name, "no-noise-estimate")) a->run.no_estimate = 1;
    if (!strcmp(name, "no-lint")) a->run.no_lint = 1;
    if (!strcmp(name, "no-bisect")) a->run.no_bisect = 1;
    if (!strcmp(name, "no-env-target")) a->run.no_env_target = 1;
    if (!strcmp(name, "intermediates")) a->run.intermediates = 1;
    return 0;
}

/* How to add an option: one row (its name as on the command line, the
 * groups of the commands that take it, whether it takes a value, its setter), its documentation in
 * docs/cli.md, and a case in tests/unit/test_run.c. */
static const struct {
    const char *name;
    int group;
    int takes_value;
    arg_set_fn set;
} table[] = {
    {"ort-lib", ONP_RUN_ARGS_ORT, 1, set_ort_lib},
    {"opt-level", ONP_RUN_ARGS_ORT, 1, set_opt_level},
    {"provider", ONP_RUN_ARGS_ORT, 1, set_provider},
    {"provider-opt", ONP_RUN_ARGS_ORT, 1, set_provider_opt},
    {"session-config", ONP_RUN_ARGS_ORT, 1, set_config},
    {"threads", ONP_RUN_ARGS_ORT, 1, set_threads},
    {"inter-threads", ONP_RUN_ARGS_ORT, 1, set_threads},
    {"save-optimized", ONP_RUN_ARGS_ORT, 1, set_save_optimized},
    {"custom-op-lib", ONP_RUN_ARGS_ORT, 1, set_custom_op_lib},
    {"timeout", ONP_RUN_ARGS_ORT, 1, set_timeout},
    {"no-isolate", ONP_RUN_ARGS_ORT, 0, set_switch},
    {"deterministic", ONP_RUN_ARGS_ORT, 0, set_switch},
    {"rtol", ONP_RUN_ARGS_TOL | ONP_RUN_ARGS_DIAGNOSE, 1, set_rtol},
    {"atol", ONP_RUN_ARGS_TOL | ONP_RUN_ARGS_DIAGNOSE, 1, set_atol},
    {"strict-tol", ONP_RUN_ARGS_TOL, 0, set_switch},
    {"no-noise-estimate", ONP_RUN_ARGS_TOL, 0, set_switch},
    {"tol", ONP_RUN_ARGS_JUDGE, 1, set_tol},
    {"top-k", ONP_RUN_ARGS_JUDGE, 1, set_topk},
    {"shard", ONP_RUN_ARGS_JUDGE, 1, set_shard},
    {"no-lint", ONP_RUN_ARGS_JUDGE, 0, set_switch},
    {"no-bisect", ONP_RUN_ARGS_JUDGE | ONP_RUN_ARGS_DIAGNOSE, 0, set_switch},
    {"no-env-target", ONP_RUN_ARGS_TARGETS, 0, set_switch},
    {"intermediates", ONP_RUN_ARGS_INTERNAL, 0, set_switch},
    {"fixture", ONP_RUN_ARGS_BISECT, 1, set_fixture},
    {"reference", ONP_RUN_ARGS_BISECT, 1, set_reference},
    {"chunk", ONP_RUN_ARGS_BISECT, 1, set_chunk},
    {"max-exposed-bytes", ONP_RUN_ARGS_BISECT, 1, set_max_exposed},
    {"save-repro", ONP_RUN_ARGS_BISECT | ONP_RUN_ARGS_DIAGNOSE, 1, set_save_repro},
};

static int find(const char *name)
{
    for (size_t i = 0; name && i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, name)) return (int)i;
    return -1;
}

/* --tol NAME, else --rtol/--atol over the dtype's default. */
static onp_tol args_tol(void *ctx, const char *name, int32_t dtype)
{
    const onp_run_args *a = ctx;
    for (size_t i = 0; i < a->n_tols; i++)
        if (!strcmp(a->tols[i].name, name)) return a->tols[i].tol;
    return onp_tol_with(dtype, a->run.rtol, a->run.atol);
}

void onp_run_args_init(onp_run_args *a)
{
    memset(a, 0, sizeof *a);
    onp_run_opts_init(&a->run);
    a->run.session.opt_level = ONP_ORT_OPT_ALL;
    a->run.session.isolate = 1;
    a->run.session.config = a->config;
    a->run.session.provider_opts = a->provider_opts;
    a->run.session.custom_op_libs = a->custom_op_libs;
    a->run.tol = args_tol;
    a->run.tol_ctx = a;
    a->fixture = -1;
}

void onp_run_args_bisect_plan(const onp_run_args *a, const onp_bundle_spec *where,
                              onp_bisect_opts *bo)
{
    onp_run_bisect_plan(where, &a->run, bo);
    bo->fixture = a->fixture;
    bo->chunk = a->chunk;
    bo->max_exposed_bytes = a->max_exposed;
}

int onp_run_args_lookup(const char *name, int *takes_value)
{
    int i = find(name);
    if (i < 0) return 0;
    if (takes_value) *takes_value = table[i].takes_value;
    return table[i].group;
}

int onp_run_args_set(onp_run_args *a, const char *name, const char *value, onp_error *e)
{
    int i = find(name);
    if (i < 0)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "unknown option '--%s'",
                             name ? name : "");
    if (!table[i].takes_value) {
        if (!value || !strcmp(value, "1") || !strcmp(value, "true"))
            return table[i].set(a, name, value, e);
        if (!strcmp(value, "0") || !strcmp(value, "false")) return 0;
        return usage(e, "--%s is a switch: give no value, or 1/0, not '%s'", name, value);
    }
    if (!value) return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "--%s needs a value", name);
    return table[i].set(a, name, value, e);
}

int onp_run_args_check_outputs(const onp_run_args *a, const onp_model *m, onp_error *e)
{
    const onp_graph *g = onp_model_graph(m);
    for (size_t t = 0; t < a->n_tols; t++) {
        size_t k = 0;
        while (k < g->n_outputs && strcmp(g->outputs[k].name, a->tols[t].name)) k++;
        if (k == g->n_outputs)
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                                 "--tol %s: the model has no output named '%s'", a->tols[t].name,
                                 a->tols[t].name);
    }
    return 0;
}

int onp_run_args_parse(onp_run_args *a, int groups, int argc, const char *const *argv, int *i,
                       onp_error *e)
{
    const char *arg = argv[*i], *v = NULL;
    char name[64];
    if (arg[0] != '-' || arg[1] != '-') return 0;
    size_t n = strcspn(arg + 2, "=");
    if (n >= sizeof name) return 0;
    memcpy(name, arg + 2, n);
    name[n] = '\0';
    int k = find(name);
    if (k < 0 || !(table[k].group & groups)) return 0;
    if (!table[k].takes_value && arg[2 + n]) return 0; /* "--switch=..." is no option */
    if (table[k].takes_value) {
        if (arg[2 + n] == '=')
            v = arg + 3 + n;
        else if (*i + 1 < argc)
            v = argv[++*i];
        else
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "--%s needs a value", name);
    }
    return onp_run_args_set(a, name, v, e) ? -1 : 1;
}
