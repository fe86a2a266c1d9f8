/*
 * args.c — gate's own options (gate.h, onp_gate_args): --criteria, --record,
 * --margin, --allow-failing, --rtol/--atol (recording: parsed by the run's
 * table into the run's options), --env-drift and --no-bisect (gating), and
 * the rule that no option goes without effect.  The tool and the Python
 * API parse through it; the ORT options are the run's table
 * (src/run/args.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/gate.h"
#include "onnxparity/numparse.h"

void onp_gate_args_init(onp_gate_args *g)
{
    memset(g, 0, sizeof *g);
    g->margin = 2;
    g->drift = ONP_GATE_DRIFT_WARN;
}

void onp_gate_args_release(onp_gate_args *g)
{
    if (!g) return;
    free(g->targets);
    g->targets = NULL;
    g->n_targets = 0;
}

/* --target SPEC: one more target, its name not taken. */
static int add_target(onp_gate_args *g, const char *spec, onp_error *e)
{
    onp_crit_target t;
    if (onp_crit_target_parse(spec, &t, e)) return -1;
    if (g->n_targets >= ONP_CRITERIA_MAX_TARGETS)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "at most %d --target",
                             ONP_CRITERIA_MAX_TARGETS);
    for (size_t k = 0; k < g->n_targets; k++)
        if (!strcmp(g->targets[k].name, t.name))
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                                 "--target %s: another target is named %s", spec, t.name);
    onp_crit_target *grown = realloc(g->targets, (g->n_targets + 1) * sizeof *grown);
    if (!grown) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    g->targets = grown;
    g->targets[g->n_targets++] = t;
    return 0;
}

/* argv[*i] is "--name" or "--name=VALUE": 1 with *v the value (the next
 * argument, *i moved past it, for the separate form; NULL for a switch),
 * 0 when it is another option (or a switch given "=..."), -1 with e when
 * a value is missing. */
static int match(int argc, const char *const *argv, int *i, const char *name, int takes_value,
                 const char **v, onp_error *e)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, "--", 2) || strncmp(a + 2, name, n)) return 0;
    const char *rest = a + 2 + n;
    *v = NULL;
    if (!*rest) {
        if (!takes_value) return 1;
        if (*i + 1 >= argc)
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "--%s needs a value", name);
        *v = argv[++*i];
        return 1;
    }
    if (*rest != '=' || !takes_value) return 0; /* "--switch=..." is no option */
    *v = rest + 1;
    return 1;
}

/* --margin: a finite number (the run's words for one), then >= 1. */
static int margin(const char *v, double *out, onp_error *e)
{
    if (onp_parse_real(v, out) || !isfinite(*out) || *out < 0)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "--margin wants a finite number >= 0, not '%s'", v);
    if (*out < 1)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "--margin wants a number >= 1, not '%s'", v);
    return 0;
}

int onp_gate_args_parse(onp_gate_args *g, onp_run_args *a, int argc, const char *const *argv,
                        int *i, onp_error *e)
{
    const char *v;
    int r;
    if ((r = match(argc, argv, i, "criteria", 1, &v, e))) {
        if (r > 0) g->criteria = v;
    } else if ((r = match(argc, argv, i, "record", 0, &v, e))) {
        g->record = 1;
    } else if ((r = match(argc, argv, i, "allow-failing", 0, &v, e))) {
        g->allow_failing = 1;
    } else if ((r = match(argc, argv, i, "no-bisect", 0, &v, e))) {
        g->no_bisect = 1;
    } else if ((r = match(argc, argv, i, "margin", 1, &v, e))) {
        if (r > 0 && margin(v, &g->margin, e)) return -1;
        g->margin_given = 1;
    } else if (!strncmp(argv[*i], "--rtol", 6) || !strncmp(argv[*i], "--atol", 6)) {
        /* the recording tolerance: the run's table parses it, as check's */
        r = onp_run_args_parse(a, ONP_RUN_ARGS_TOL, argc, argv, i, e);
    } else if ((r = match(argc, argv, i, "target", 1, &v, e))) {
        if (r > 0 && add_target(g, v, e)) return -1;
    } else if ((r = match(argc, argv, i, "target-provider", 1, &v, e))) {
        if (r > 0 && onp_crit_target_provider(g->targets, g->n_targets, v, 0, e)) return -1;
    } else if ((r = match(argc, argv, i, "target-provider-opt", 1, &v, e))) {
        if (r > 0 && onp_crit_target_provider(g->targets, g->n_targets, v, 1, e)) return -1;
    } else if ((r = match(argc, argv, i, "env-drift", 1, &v, e))) {
        if (r > 0 && onp_gate_drift_policy_from_name(v, &g->drift))
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                                 "--env-drift wants warn or fail, not '%s'", v);
        g->drift_given = 1;
    }
    return r;
}

int onp_gate_args_finish(const onp_gate_args *g, const onp_run_args *a, onp_error *e)
{
    if (!g->criteria)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "usage: onnxparity gate TARGET --criteria FILE [--record "
                             "[--margin M]]");
    if (g->n_targets && !g->record)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "--target applies to --record only (gating runs the targets the "
                             "criteria recorded)");
    if (g->n_targets == 1)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "one --target: name two or more (one target is the plain gate)");
    const char *rec_only = g->margin_given    ? "--margin"
                           : a->run.rtol >= 0 ? "--rtol"
                           : a->run.atol >= 0 ? "--atol"
                           : g->allow_failing ? "--allow-failing"
                                              : NULL;
    if (!g->record && rec_only)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "%s applies to --record only (gating uses the tolerances the "
                             "criteria recorded)",
                             rec_only);
    const char *gate_only = g->drift_given ? "--env-drift" : g->no_bisect ? "--no-bisect" : NULL;
    if (g->record && gate_only)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "%s applies to gating only, not to --record", gate_only);
    return 0;
}
