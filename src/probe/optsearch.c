/*
 * optsearch.c — the optimizer search: when level `all` breaks parity that
 * `disable` keeps, find the smallest set of ONNX Runtime optimizers whose
 * disabling (session config entry optimization.disable_specified_optimizers)
 * restores it, by bisecting the candidate list (ORT's names, or the
 * caller's).  Each step is one configuration evaluated (evaluate.c).
 * Never prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_int.h"

/* ORT's names (onnxruntime/core/optimizer/: each transformer's or rewrite
 * rule's Name()).  How to add one: append the name ORT gives it; the search
 * bisects this list, so order does not matter. */
static const char *const default_optimizers[] = {"ConstantFolding",
                                                 "ConstantSharing",
                                                 "CommonSubexpressionElimination",
                                                 "EliminateIdentity",
                                                 "EliminateSlice",
                                                 "UnsqueezeElimination",
                                                 "EliminateDropout",
                                                 "ExpandElimination",
                                                 "CastElimination",
                                                 "NoopElimination",
                                                 "DivMulFusion",
                                                 "FuseReluClip",
                                                 "GemmSumFusion",
                                                 "GemmTransposeFusion",
                                                 "NotWhereFusion",
                                                 "ConvAddFusion",
                                                 "ConvMulFusion",
                                                 "ConvBNFusion",
                                                 "PadFusion",
                                                 "MatMulAddFusion",
                                                 "ReshapeFusion",
                                                 "ConvActivationFusion",
                                                 "ConvAddActivationFusion",
                                                 "GemmActivationFusion",
                                                 "MatMulIntegerToFloatFusion",
                                                 "DynamicQuantizeMatMulFusion",
                                                 "MatMulScaleFusion",
                                                 "MatmulTransposeFusion",
                                                 "LayerNormFusion",
                                                 "SimplifiedLayerNormFusion",
                                                 "GeluFusion",
                                                 "BiasGeluFusion",
                                                 "FastGeluFusion",
                                                 "QuickGeluFusion",
                                                 "GeluApproximation",
                                                 "AttentionFusion",
                                                 "SkipLayerNormFusion",
                                                 "EmbedLayerNormFusion",
                                                 "BiasSoftmaxFusion",
                                                 "BiasDropoutFusion",
                                                 "QDQPropagationTransformer",
                                                 "QDQSelectorActionTransformer",
                                                 "QDQS8ToU8Transformer",
                                                 "QDQFinalCleanupTransformer",
                                                 "DoubleQDQPairsRemover",
                                                 "ClipQuantFusion",
                                                 "ReluQuantFusion",
                                                 "TransposeOptimizer",
                                                 "NchwcTransformer",
                                                 "NhwcTransformer",
                                                 NULL};

const char *const *onp_probe_default_optimizers(size_t *n)
{
    if (n) *n = sizeof default_optimizers / sizeof default_optimizers[0] - 1;
    return default_optimizers;
}

/* "optimization.disable_specified_optimizers=A;B" for the names with
 * mask[i] set; malloc'd, NULL when out of memory. */
static char *disable_entry(const char *const *names, const unsigned char *mask, size_t n)
{
    size_t len = 64;
    for (size_t i = 0; i < n; i++)
        if (mask[i]) len += strlen(names[i]) + 1;
    char *entry = malloc(len);
    if (!entry) return NULL;
    size_t at = (size_t)snprintf(entry, len, "optimization.disable_specified_optimizers=");
    const char *sep = "";
    for (size_t i = 0; i < n; i++)
        if (mask[i]) {
            at += (size_t)snprintf(entry + at, len - at, "%s%s", sep, names[i]);
            sep = ";";
        }
    return entry;
}

/* The optimizer search.  ORT (1.29 at least) splits the config value on
 * ';' only, although its header says "comma separated": a comma-joined
 * list is one unknown name that disables nothing, silently
 * (microsoft/onnxruntime#32211).  So the list is joined with ';'. */
typedef struct search {
    onp_ort *ort;
    const char *model;
    const onp_fixset *fs;
    const onp_probe_opts *o;
    const onp_session_opts *base; /* the configuration searched */
    const char *const *names;     /* [n] */
    size_t n;
    int sessions;
} search;

/* Does disabling every name with mask[i] set, at level `all`, restore
 * parity?  1 yes, 0 no, -1 error (e set). */
static int restores(search *S, const unsigned char *mask, onp_error *e)
{
    char *entry = disable_entry(S->names, mask, S->n);
    const char **cfg = NULL;
    onp_session_opts so;
    if (!entry) return onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    if (probe_with_entry(S->base, entry, &so, &cfg, e)) {
        free(entry);
        return -1;
    }
    so.opt_level = ONP_ORT_OPT_ALL;
    probe_evalres r;
    memset(&r, 0, sizeof r);
    S->sessions++;
    int rc = probe_eval_config(S->ort, S->model, S->fs, S->o, &so, 0, &r, e);
    free(entry);
    free(cfg);
    if (rc) return -1;
    return r.opened && r.pass;
}

/* Reduce the candidates cand[] (a mask) to a minimal set that, disabled
 * together with fixed[], restores parity (which cand | fixed does): try
 * each half alone; when neither does, minimise each half with the other
 * held fixed.  Writes the set into keep[]; 0, or -1 on error. */
static int minimise(search *S, const unsigned char *cand, const unsigned char *fixed,
                    unsigned char *keep, onp_error *e)
{
    size_t n = S->n, cnt = 0;
    for (size_t i = 0; i < n; i++) cnt += cand[i];
    if (cnt == 0) return 0;
    unsigned char *a = calloc(n, 1), *b = calloc(n, 1), *t = calloc(n, 1);
    int rc = 0;
    if (!a || !b || !t) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        goto done;
    }
    if (cnt == 1) {
        int r = restores(S, fixed, e); /* is the one needed at all? */
        if (r < 0) rc = -1;
        for (size_t i = 0; !rc && !r && i < n; i++)
            if (cand[i]) keep[i] = 1;
        goto done;
    }
    for (size_t i = 0, k = 0; i < n; i++)
        if (cand[i]) (k++ < cnt / 2 ? a : b)[i] = 1;
    for (int h = 0; h < 2; h++) {
        const unsigned char *half = h ? b : a;
        for (size_t i = 0; i < n; i++) t[i] = half[i] | fixed[i];
        int r = restores(S, t, e);
        if (r < 0) {
            rc = -1;
            goto done;
        }
        if (r) {
            rc = minimise(S, half, fixed, keep, e);
            goto done;
        }
    }
    for (size_t i = 0; i < n; i++) t[i] = fixed[i] | b[i];
    unsigned char *ka = calloc(n, 1);
    if (!ka) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
        goto done;
    }
    rc = minimise(S, a, t, ka, e);
    for (size_t i = 0; !rc && i < n; i++) t[i] = fixed[i] | ka[i];
    if (!rc) rc = minimise(S, b, t, keep, e);
    for (size_t i = 0; i < n; i++) keep[i] |= ka[i];
    free(ka);
done:
    free(a);
    free(b);
    free(t);
    return rc;
}

/* The optimizer search on configuration c. */
int probe_run_search(onp_ort *ort, const char *model, const onp_fixset *fs, const onp_probe_opts *o,
                     const onp_session_opts *base, onp_sweep_result *r, onp_error *e)
{
    size_t nc = o->n_candidates;
    const char *const *names = o->candidates;
    if (!names) names = onp_probe_default_optimizers(&nc);
    search S = {ort, model, fs, o, base, names, nc, 0};
    unsigned char *all_m = calloc(nc ? nc : 1, 1), *none = calloc(nc ? nc : 1, 1),
                  *keep = calloc(nc ? nc : 1, 1);
    int rc = 0, every = 0;
    r->searched = 1;
    if (!all_m || !none || !keep) {
        rc = onp_error_set(e, ONP_ERR_NOMEM, NULL, NULL, -1, "out of memory");
    } else {
        memset(all_m, 1, nc);
        every = nc ? restores(&S, all_m, e) : 0;
        if (every < 0) rc = -1;
        if (!rc && every) rc = minimise(&S, all_m, none, keep, e);
    }
    r->sessions_tried = S.sessions;
    if (!rc && every) {
        size_t at = 0, k = 0;
        for (size_t i = 0; i < nc; i++)
            if (keep[i] && at < sizeof r->culprit)
                at += (size_t)snprintf(r->culprit + at, sizeof r->culprit - at, "%s%s",
                                       k++ ? ";" : "", names[i]);
        snprintf(r->search_note, sizeof r->search_note,
                 "disabling %s at level all restores parity%s (%d sessions)", r->culprit,
                 k > 1 ? ": these optimizers change results together, each alone does not "
                         "restore it"
                       : "",
                 S.sessions);
    } else if (!rc) {
        snprintf(r->search_note, sizeof r->search_note,
                 "disabling all %zu candidate optimizers does not restore parity at "
                 "level all: the change comes from a level-specific kernel or an "
                 "optimizer not in the list",
                 nc);
    }
    free(all_m);
    free(none);
    free(keep);
    return rc;
}
