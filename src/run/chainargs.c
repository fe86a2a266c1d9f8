/*
 * chainargs.c — the chain's own options (chain.h, onp_chain_args): one
 * parser for `onnxparity chain` and onp_api_chain, so a stage given to
 * either means the same.  The run's options (ORT, tolerance) are parsed by
 * run.h's table, beside these.
 */
#include <stdio.h>
#include <string.h>

#include "onnxparity/chain.h"

/* "NAME=REST": NAME copied into name (n bytes), REST returned; NULL when
 * there is no '=', NAME is empty or too long. */
static const char *split_eq(const char *s, char *name, size_t n)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || (size_t)(eq - s) >= n) return NULL;
    memcpy(name, s, (size_t)(eq - s));
    name[eq - s] = 0;
    return eq + 1;
}

/* argv[*i] as --NAME with a value: 1 (*val set, *i moved past a separate
 * value), 0 another argument, -1 no value. */
static int opt_value(int argc, const char *const *argv, int *i, const char *name, const char **val,
                     onp_error *e)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, "--", 2) || strncmp(a + 2, name, n)) return 0;
    if (a[2 + n] == '=') {
        *val = a + 3 + n;
        return 1;
    }
    if (a[2 + n]) return 0;
    if (*i + 1 >= argc)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "--%s wants a value", name);
    *val = argv[++*i];
    return 1;
}

static int add_stage(onp_chain_args *ca, const char *v, onp_error *e)
{
    if (ca->n >= ONP_CHAIN_MAX_STAGES)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "at most %d --stage",
                             ONP_CHAIN_MAX_STAGES);
    const char *model = split_eq(v, ca->names[ca->n], sizeof ca->names[ca->n]);
    if (!model || !model[0])
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "--stage wants NAME=MODEL.onnx, not '%s'", v);
    ca->st[ca->n].name = ca->names[ca->n];
    ca->st[ca->n].model = model;
    ca->n++;
    return 0;
}

int onp_chain_args_parse(onp_chain_args *ca, int argc, const char *const *argv, int *i,
                         onp_error *e)
{
    const char *v = NULL;
    int r;
    if (!strcmp(argv[*i], "--per-value")) {
        ca->per_value = 1;
        return 1;
    }
    if ((r = opt_value(argc, argv, i, "stage", &v, e)))
        return r < 0 || add_stage(ca, v, e) ? -1 : 1;
    if ((r = opt_value(argc, argv, i, "precision", &v, e))) {
        if (r < 0) return -1;
        if (ca->n_prec >= ONP_CHAIN_MAX_STAGES)
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1, "at most %d --precision",
                                 ONP_CHAIN_MAX_STAGES);
        ca->prec[ca->n_prec++] = v;
        return 1;
    }
    return 0;
}

int onp_chain_args_finish(onp_chain_args *ca, onp_error *e)
{
    if (!ca->n)
        return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                             "usage: onnxparity chain BUNDLE --stage NAME=MODEL.onnx [--stage ...] "
                             "[--precision NAME=fp32|fp16|bf16|int8]");
    for (size_t i = 0; i < ca->n_prec; i++) {
        char name[128];
        const char *p = split_eq(ca->prec[i], name, sizeof name);
        size_t k = 0;
        while (p && k < ca->n && strcmp(ca->st[k].name, name)) k++;
        if (!p || k == ca->n)
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                                 "--precision wants NAME=fp32|fp16|bf16|int8 for a stage given "
                                 "with --stage, not '%s'",
                                 ca->prec[i]);
        if (onp_chain_prec_from_name(p, &ca->st[k].prec))
            return onp_error_set(e, ONP_ERR_USAGE, NULL, NULL, -1,
                                 "--precision %s: '%s' is not fp32, fp16, bf16 or int8", name, p);
        ca->st[k].prec_given = 1;
    }
    return 0;
}
