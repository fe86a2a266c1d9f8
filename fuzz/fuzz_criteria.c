/*
 * fuzz_criteria.c — libFuzzer target for the gate criteria parser
 * (src/gate/criteria.c, include/onnxparity/gate.h, schema
 * "onnxparity.criteria/1").
 *
 * onp_criteria_parse on the bytes (no NUL terminator: the parser must respect
 * the length).  A failure must leave the struct zeroed and carry
 * ONP_ERR_INPUT or ONP_ERR_NOMEM with a message; a success must obey the
 * schema: every number finite and >= 0 (or -1 where null is allowed),
 * fractions <= 1, lint ids that exist, at most 64 shapes of rank <= 32 with
 * dims >= 0, and onp_criteria_find must find every output by its name.
 * Seeds: fuzz/corpus/criteria/.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnxparity/gate.h"
#include "onnxparity/lint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENSURE(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) __builtin_trap();                                                                \
    } while (0)

static int limit_ok(double v)
{
    return v == -1 || (isfinite(v) && v >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onp_criteria c;
    onp_error e;
    onp_error_clear(&e);
    if (onp_criteria_parse((const char *)data, size, "fuzz.json", &c, &e)) {
        ENSURE(e.code == ONP_ERR_INPUT || e.code == ONP_ERR_NOMEM);
        ENSURE(e.msg[0] && e.offset >= -1 && e.offset <= (int64_t)size);
        ENSURE(c.n_out == 0 && c.outs == NULL && c.n_lint == 0 && c.lint == NULL);
        return 0;
    }
    ENSURE(c.fixtures >= 0 && isfinite(c.margin) && c.margin >= 0);
    for (size_t i = 0; i < c.n_lint; i++) ENSURE(onp_lint_rule_find(c.lint[i]) != NULL);
    for (size_t i = 0; i < c.n_out; i++) {
        const onp_crit_out *o = &c.outs[i];
        ENSURE(strlen(o->name) < sizeof o->name);
        ENSURE(isfinite(o->rtol) && o->rtol >= 0 && isfinite(o->atol) && o->atol >= 0);
        ENSURE(limit_ok(o->top1_min) && o->top1_min <= 1);
        ENSURE(isfinite(o->mismatch_frac_max) && o->mismatch_frac_max >= 0 &&
               o->mismatch_frac_max <= 1);
        ENSURE(limit_ok(o->max_abs) && limit_ok(o->needed_rtol) && limit_ok(o->needed_atol));
        ENSURE(o->n_shapes <= ONP_CRITERIA_MAX_SHAPES);
        for (size_t s = 0; s < o->n_shapes; s++) {
            ENSURE(o->rank[s] >= 0 && o->rank[s] <= ONP_MAX_RANK);
            for (int d = 0; d < o->rank[s]; d++) ENSURE(o->dims[s][d] >= 0);
        }
        /* names may repeat (JSON allows duplicate keys): the first wins */
        const onp_crit_out *f = onp_criteria_find(&c, o->name);
        ENSURE(f && f <= o && !strcmp(f->name, o->name));
    }
    onp_criteria_free(&c);
    ENSURE(c.outs == NULL && c.lint == NULL);
    return 0;
}
