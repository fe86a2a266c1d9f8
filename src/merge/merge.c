/*
 * merge.c — the rules of `merge` (merge.h): the merged verdict, which
 * fixtures fail, which of two entries of one cause is kept.  Names are
 * read through the library's tables; nothing here parses a document.
 */
#include "onnxparity/merge.h"

#include "onnxparity/causes.h"
#include "onnxparity/judge.h"

onp_run_verdict onp_merge_verdict(const char *const *verdicts, size_t n, size_t fixtures_failed)
{
    int any_fail = fixtures_failed > 0, any_error = 0;
    for (size_t i = 0; i < n; i++) {
        onp_run_verdict v;
        if (!verdicts[i]) { /* a document without a verdict: that run did not finish */
            any_error = 1;
            continue;
        }
        if (onp_run_verdict_from_name(verdicts[i], &v)) continue; /* unknown: neither */
        any_error |= v == ONP_RUN_ERROR;
        any_fail |= v == ONP_RUN_FAIL;
    }
    return any_error ? ONP_RUN_ERROR : any_fail ? ONP_RUN_FAIL : ONP_RUN_PASS;
}

int onp_merge_fixture_failed(const char *status)
{
    onp_fixture_status s;
    return onp_fixture_status_from_name(status, &s) || s != ONP_FIXTURE_PASS;
}

/* A confidence's rank: its enum value (high 0 first), an unknown name as
 * low, an absent one after every name. */
static int confidence_rank(const char *name)
{
    onp_confidence c;
    if (!name) return ONP_CONFIDENCE_COUNT;
    return onp_confidence_from_name(name, &c) ? ONP_CONFIDENCE_LOW : (int)c;
}

int onp_merge_cause_outranks(const char *conf, const char *kept)
{
    return confidence_rank(conf) < confidence_rank(kept);
}
