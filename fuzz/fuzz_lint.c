/*
 * fuzz_lint.c — libFuzzer target for the lint (include/onnxparity/lint.h)
 * over the model view: onp_model_parse on the bytes, then onp_lint_run with
 * every rule and no manifest.  A model that parsed must lint (only memory
 * may fail), and the result must keep its promises: every finding names a
 * rule of the table, every location string is non-NULL, the per-severity
 * counts add up to n, and onp_lint_cause_rank stays in [-1, 2].
 * Seeds: fuzz/corpus/lint/ (the model seeds plus lint-rule models).
 */
#include <stdint.h>
#include <string.h>

#include "onnxparity/lint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENSURE(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) __builtin_trap();                                                                \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onp_model *m = NULL;
    onp_error e;
    onp_error_clear(&e);
    if (onp_model_parse(data, size, NULL, &m, &e)) return 0;
    onp_lint_result r;
    memset(&r, 0xa5, sizeof r); /* the call must set every field */
    if (onp_lint_run(m, NULL, &r, &e)) {
        ENSURE(e.code == ONP_ERR_NOMEM);
        ENSURE(r.n == 0 && r.findings == NULL);
        onp_model_close(m);
        return 0;
    }
    size_t per[ONP_LINT_SEVERITY_COUNT] = {0}, total = 0;
    for (size_t i = 0; i < r.n; i++) {
        const onp_lint_finding *f = &r.findings[i];
        ENSURE(f->rule && onp_lint_rule_find(f->rule->id) == f->rule);
        ENSURE(f->rule->severity >= ONP_LINT_INFO && f->rule->severity < ONP_LINT_SEVERITY_COUNT);
        per[f->rule->severity]++;
        ENSURE(f->message && f->loc.graph && f->loc.name && f->loc.op_type && f->loc.file);
        total += strlen(f->message) + strlen(f->loc.graph) + strlen(f->loc.name) +
                 strlen(f->loc.op_type) + strlen(f->loc.file);
        ENSURE(strcmp(onp_lint_loc_kind_name(f->loc.kind), "?") != 0);
        int rank = onp_lint_cause_rank(f, (int)(i & 1), f->loc.name);
        ENSURE(rank >= -1 && rank <= 2);
        if (i) ENSURE(r.findings[i - 1].order <= f->order);
    }
    for (int s = 0; s < ONP_LINT_SEVERITY_COUNT; s++) ENSURE(per[s] == r.counts[s]);
    ENSURE(r.manifest_read == 0);
    (void)total;
    onp_lint_result_free(&r);
    ENSURE(r.n == 0 && r.findings == NULL);
    onp_model_close(m);
    return 0;
}
